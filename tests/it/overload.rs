//! Servers that fall over and triggers beyond outages, against closed forms and
//! queueing identities (release build: `cargo test --release --test it overload`).

use std::path::Path;

use retry_storm::runner::simulate;
use retry_storm::scenario::{self, Scenario};

fn parse(src: &str) -> Scenario {
    scenario::parse(src, Path::new("overload-test.toml")).unwrap_or_else(|e| panic!("{e}"))
}

/// Open load at 500/s on a server with ten times that capacity, no timeouts in
/// practice, and an `errors` trigger with probability `p` over the whole run;
/// up to `n` retries at once.
fn independent_failures(p: f64, n: u32) -> Scenario {
    parse(&format!(
        r#"
name = "errors"
seed = 21
duration = "100s"

[clients]
model = "open"
rate = 500.0

[network]
latency = {{ dist = "constant", value = "1ms" }}

[server]
workers = 10
queue = 1000
service = {{ dist = "exponential", mean = "2ms" }}

[[outage]]
kind = "errors"
start = "1s"
end = "100s"
p = {p}

[metrics]
baseline = "1s"

[retry]
backoff = "none"
max_retries = {n}
timeout = "1s"

[[strategy]]
name = "retry-at-once"
"#
    ))
}

#[test]
fn independent_failures_match_the_closed_forms() {
    // Brooker, "Fixing retries with token buckets and circuit breakers" (2022):
    // with attempts failing independently with probability p and N retries, a
    // request makes 1 + p + ... + p^N attempts on average and succeeds with
    // probability 1 - p^(N+1). About 50 000 requests per case; the tolerances
    // are 4 standard errors of each estimate, computed from the same model.
    for (p, n) in [(0.3, 3), (0.5, 5), (0.1, 1)] {
        let s = independent_failures(p, n);
        let r = &simulate(&s).runs[0].summary;
        let done = (r.succeeded + r.failed) as f64;
        let attempts = (0..=n).map(|k| p.powi(k as i32)).sum::<f64>();
        let success = 1.0 - p.powi(n as i32 + 1);
        // Var of min(Geometric, N + 1) attempts, from its distribution.
        let probs: Vec<f64> = (1..=n + 1)
            .map(|k| {
                if k <= n {
                    p.powi(k as i32 - 1) * (1.0 - p)
                } else {
                    p.powi(n as i32)
                }
            })
            .collect();
        let second: f64 = probs
            .iter()
            .enumerate()
            .map(|(i, q)| ((i + 1) as f64).powi(2) * q)
            .sum();
        let se_attempts = ((second - attempts * attempts) / done).sqrt();
        let se_success = (success * (1.0 - success) / done).sqrt();
        // Requests still in flight at the end have made some attempts; they are
        // a handful against 50 000, well inside the tolerance.
        let measured_attempts = r.attempts as f64 / r.logical_requests as f64;
        let measured_success = r.succeeded as f64 / done;
        eprintln!(
            "p = {p}, N = {n}: attempts {measured_attempts:.4} (theory {attempts:.4}, se {se_attempts:.4}), \
             success {measured_success:.5} (theory {success:.5}, se {se_success:.5})"
        );
        assert!(done > 45_000.0, "{done}");
        assert!(
            (measured_attempts - attempts).abs() < 4.0 * se_attempts + 1e-4,
            "p = {p}, N = {n}: attempts {measured_attempts} against {attempts}"
        );
        assert!(
            (measured_success - success).abs() < 4.0 * se_success + 1e-6,
            "p = {p}, N = {n}: success {measured_success} against {success}"
        );
    }
}

fn with_spike(spike: bool) -> Scenario {
    let trigger = if spike {
        "[[outage]]\nkind = \"spike\"\nstart = \"10s\"\nlength = \"2s\"\nrate = 2000.0\n"
    } else {
        ""
    };
    parse(&format!(
        r#"
name = "spike"
seed = 4
duration = "30s"

[clients]
model = "open"
rate = 500.0

[network]
latency = {{ dist = "constant", value = "1ms" }}

[server]
workers = 20
queue = 1000
service = {{ dist = "exponential", mean = "2ms" }}

{trigger}
[metrics]
baseline = "5s"

[[strategy]]
name = "exponential"
"#
    ))
}

#[test]
fn a_spike_adds_its_arrivals_and_leaves_the_others_alone() {
    let base = simulate(&with_spike(false)).runs[0].summary.clone();
    let spiked = simulate(&with_spike(true)).runs[0].summary.clone();
    // The spike draws from its own stream, so the usual arrivals are the same
    // and the difference is the spike's: Poisson with mean 2000/s * 2 s = 4000,
    // standard deviation 63; 4 of them is 253.
    let extra = spiked.logical_requests as i64 - base.logical_requests as i64;
    eprintln!("extra requests from the spike: {extra}");
    assert!((extra - 4000).abs() < 253, "{extra}");
    // The server has room for it: nothing is lost (the extra successes match
    // the extra demand) and the run is normal again when the spike ends.
    assert_eq!(spiked.recovery_time_s, Some(0.0));
    assert!(
        spiked.successes_lost.unwrap() < 20,
        "{:?}",
        spiked.successes_lost
    );
}

#[test]
fn littles_law_holds_with_every_overload_behaviour_on() {
    // As tests/queueing.rs checks it for the outage scenario: the time-average
    // number in the server (queued plus workers busy, refusing included) equals
    // its departure rate times the mean time in it, through crashes, cold
    // starts, refusals that cost work and contention.
    let s = scenario::load(Path::new("tests/fixtures/overload.toml")).unwrap();
    for (i, strategy) in s.strategies.iter().enumerate() {
        let (l, lw, r) =
            crate::common::littles_law(&s.world_for(i), strategy, s.seed, s.metrics.bucket);
        let t = &r.totals;
        let rel = (l - lw).abs() / l;
        eprintln!(
            "{}: L = {l:.4}, lambda W = {lw:.4}, {} crashes",
            strategy.name, t.crashes
        );
        assert!(
            t.crashes > 0,
            "{}: the fixture crashes the server",
            strategy.name
        );
        assert!(t.reject_ns > 0, "{}: and refuses at a cost", strategy.name);
        assert!(rel < 0.01, "{}: L = {l}, lambda W = {lw}", strategy.name);
    }
}
