//! Conservation over small random worlds (property tests): whatever the load,
//! the server, the trigger and the strategy, every request begun ends once or
//! is still in flight, every attempt is a first attempt or a retry, no more
//! outcomes come back than attempts went out, and no more work is wasted
//! than was done. The worlds are drawn from a fixed seed, so a run of the
//! suite is the same run every time; a failure prints the smallest world
//! proptest shrank it to.

use std::path::Path;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

use retry_storm::model;
use retry_storm::scenario;

/// A world and a strategy as scenario text, from the drawn values.
#[expect(
    clippy::too_many_arguments,
    reason = "one argument per drawn value, as proptest draws them"
)]
fn world(
    closed: bool,
    load: u32,
    workers: u32,
    queue: u32,
    service_ms: u32,
    outage: (u32, u32, usize),
    strategy: (usize, u32, u32, bool),
    defence: usize,
) -> String {
    let clients = if closed {
        format!(
            "model = \"closed\"\ncount = {load}\nthink = {{ dist = \"exponential\", mean = \"50ms\" }}"
        )
    } else {
        format!("model = \"open\"\nrate = {}.0", load * 10)
    };
    let (start, length, kind) = outage;
    let kind = ["reset", "blackhole", "503", "brownout"][kind];
    let factor = if kind == "brownout" {
        "factor = 0.2\n"
    } else {
        ""
    };
    let (backoff, retries, timeout_ms, budget) = strategy;
    let backoff = [
        "none",
        "exponential",
        "full-jitter",
        "equal-jitter",
        "decorrelated-jitter",
    ][backoff];
    let budget = if budget {
        "budget = { kind = \"token-bucket\", max_tokens = 10, token_ratio = 0.1 }\n"
    } else {
        ""
    };
    // The server's own defences: none, CoDel, adaptive LIFO with CoDel, or
    // one of the four concurrency limiters.
    let defence = [
        "",
        "codel = {}\n",
        "discipline = \"adaptive-lifo\"\ncodel = { target = \"2ms\", interval = \"20ms\" }\n",
        "limiter = { kind = \"gradient\", update_interval = \"50ms\", request_count = 10 }\n",
        "limiter = { kind = \"vegas\", initial = 4 }\n",
        "limiter = { kind = \"gradient2\", initial = 2, min = 1 }\n",
        "limiter = { kind = \"aimd\", initial = 3, timeout = \"20ms\" }\n",
        "[cache]\nkeys = 50\ncapacity = 40\nmiss_limit = 100.0\n",
        "[cache]\nkeys = 500\nzipf = 0.8\nhit_rate = 0.5\nttl = \"100ms\"\nwarm = false\n",
    ][defence];
    format!(
        "name = \"p\"\nseed = 1\nduration = \"4s\"\n\
         [clients]\n{clients}\n\
         [network]\nlatency = {{ dist = \"exponential\", mean = \"1ms\" }}\n\
         [server]\nworkers = {workers}\nqueue = {queue}\n\
         service = {{ dist = \"exponential\", mean = \"{service_ms}ms\" }}\n{defence}\
         [[outage]]\nkind = \"{kind}\"\n{factor}start = \"{start}ms\"\nend = \"{}ms\"\n\
         [metrics]\nbaseline = \"500ms\"\nbucket = \"100ms\"\n\
         [[strategy]]\nname = \"s\"\nbackoff = \"{backoff}\"\nbase = \"10ms\"\ncap = \"200ms\"\n\
         max_retries = {retries}\ntimeout = \"{timeout_ms}ms\"\n{budget}",
        start + length
    )
}

proptest! {
    #![proptest_config(Config {
        cases: 256,
        rng_seed: RngSeed::Fixed(2026),
        failure_persistence: None,
        ..Config::default()
    })]

    #[test]
    fn every_request_and_attempt_is_accounted_for(
        closed in any::<bool>(),
        load in 1u32..200,
        workers in 1u32..8,
        queue in 0u32..40,
        service_ms in 1u32..30,
        outage in (600u32..2500, 1u32..1500, 0usize..4),
        strategy in (0usize..5, 0u32..6, 5u32..500, any::<bool>()),
        defence in 0usize..9,
    ) {
        let text = world(closed, load, workers, queue, service_ms, outage, strategy, defence);
        let s = scenario::parse(&text, Path::new("p.toml"))
            .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let st = &s.strategies[0];
        let r = model::run(&s.world_for(0), st, s.seed, s.metrics.bucket);
        let t = &r.totals;
        prop_assert!(r.aborted.is_none(), "{:?}\n{text}", r.aborted);
        prop_assert_eq!(t.succeeded + t.failed() + r.in_flight_at_end, t.started, "{}", text);
        // A request the cache answered made no attempt.
        prop_assert_eq!(
            t.attempts,
            t.started - t.rejected_first - t.cache_hits + t.retries,
            "{}",
            text
        );
        prop_assert!(t.outcomes.iter().sum::<u64>() <= t.attempts, "{}", text);
        prop_assert!(t.retries <= t.started * u64::from(st.policy.max_retries), "{}", text);
        prop_assert!(t.wasted_ns <= t.busy_ns, "{}", text);
        // The limiter's 503s are counted again in its record, with CoDel's
        // drops, bucket by bucket.
        if let Some(d) = &r.defences {
            let limited: u64 = d.iter().map(|b| b.limited).sum();
            prop_assert_eq!(limited, t.limited, "{}", text);
            let dropped: u64 = d.iter().map(|b| b.dropped).sum();
            prop_assert!(limited + dropped <= t.attempts, "{}", text);
        } else {
            prop_assert!(defence == 0 || defence >= 7, "{}", text);
        }
        prop_assert_eq!(r.cache.is_some(), defence >= 7, "{}", text);
    }
}
