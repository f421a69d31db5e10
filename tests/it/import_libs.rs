//! `sim import` of client libraries' configurations (resilience4j under
//! Spring Boot, .NET's resilience handlers) through the real binary: each
//! shipped example, written from its library's documentation, imports to
//! the behaviour that documentation states, and the imported scenario runs.

use retry_storm::retry::{BackoffKind, Outcome};

use crate::import::{imported, imported_runs, index_of, ms};

/// resilience4j's Spring Boot example: `maxAttempts` 3 is 2 retries;
/// backendA waits 10 s doubling, retries what an HttpServerErrorException
/// and an IOException stand for (5xx, timeouts, resets, refusals, not a
/// 4xx), each attempt limited to 2 s by its time limiter, with a breaker
/// over the last 100 calls; backendB waits 500 ms (a bare number is
/// milliseconds to Spring Boot) and its TIME_BASED window is read as its
/// 20-call minimum, open 50 s, 3 probes.
#[test]
fn resilience4j_imports_as_resilience4j_documents_it() {
    let dir = tempfile::TempDir::new().unwrap();
    let (s, text) = imported(
        dir.path(),
        "examples/import/resilience4j.yml",
        "scenarios/outage.toml",
    );
    let a = &s.strategies[index_of(&s, "backendA")];
    assert_eq!(a.policy.max_retries, 2);
    assert_eq!(a.backoff.kind, BackoffKind::Exponential);
    assert_eq!((a.backoff.base, a.backoff.multiplier), (ms(10_000), 2.0));
    for o in [
        Outcome::Status503,
        Outcome::Timeout,
        Outcome::Reset,
        Outcome::Refused,
    ] {
        assert!(a.policy.retry_on.contains(o), "{o:?}");
    }
    assert!(!a.policy.retry_on.contains(Outcome::Status429));
    assert_eq!(a.policy.timeout, Some(ms(2000)));
    let breaker = a.breaker.as_ref().unwrap();
    assert_eq!((breaker.window, breaker.min_calls), (100, 100));
    let b = &s.strategies[index_of(&s, "backendB")];
    assert_eq!(b.backoff.kind, BackoffKind::Constant);
    assert_eq!(b.backoff.base, ms(500));
    assert!(!b.policy.retry_on.contains(Outcome::Reset));
    let breaker = b.breaker.as_ref().unwrap();
    assert_eq!(
        (
            breaker.window,
            breaker.min_calls,
            breaker.probes,
            breaker.open_for
        ),
        (20, 20, 3, ms(50_000))
    );
    assert!(text.contains("cancelRunningFuture"), "{text}");
    assert!(text.contains("resilience4j.bulkhead"), "{text}");
    imported_runs(dir.path());
}

/// .NET's standard resilience handler bound from appsettings.json: 5
/// retries with Polly's decorrelated jitter from 500 ms, at most 10 s; 2 s
/// an attempt inside 20 s in all; a breaker at 20% of 50 calls, open 15 s.
/// The standard hedging handler: 2 hedged copies 100 ms apart, 3 in all,
/// within 5 s.
#[test]
fn dotnet_resilience_options_import_as_dotnet_documents_them() {
    let dir = tempfile::TempDir::new().unwrap();
    let (s, _) = imported(
        dir.path(),
        "examples/import/dotnet-appsettings.json",
        "scenarios/outage.toml",
    );
    let c = &s.strategies[index_of(&s, "CatalogResilience")];
    assert_eq!(c.policy.max_retries, 5);
    assert_eq!(c.backoff.kind, BackoffKind::DecorrelatedJitterV2);
    assert_eq!((c.backoff.base, c.backoff.cap), (ms(500), ms(10_000)));
    assert_eq!(
        (c.policy.timeout, c.policy.deadline),
        (Some(ms(2000)), Some(ms(20_000)))
    );
    assert!(c.policy.use_retry_after);
    let b = c.breaker.as_ref().unwrap();
    assert_eq!(
        (b.failure_rate, b.window, b.min_calls, b.open_for, b.probes),
        (0.2, 50, 50, ms(15_000), 1)
    );
    let h = &s.strategies[index_of(&s, "SearchHedging")];
    let hedging = h.hedging.as_ref().unwrap();
    assert_eq!((hedging.max_attempts, hedging.delay), (3, ms(100)));
    assert_eq!(h.policy.timeout, Some(ms(5000)));
    imported_runs(dir.path());
}
