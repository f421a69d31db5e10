//! The recovery measure against noise and against known answers (release build:
//! `cargo test --release --test it recovery`).
//!
//! - False alarms: a one-bucket blackhole (100 ms) in the metastable world at
//!   50%, 70% and 90% utilisation, open and closed load, 100 seeds each. The
//!   trigger's real effect is short: the requests it swallowed time out after
//!   1 s and are retried (at once, or after at most 100 ms of jitter) into a
//!   server with headroom; the queue they add, about 0.1 s of arrivals, drains in
//!   well under a second even at 90% (at 10% spare capacity, 90 requests take
//!   0.9 s). So a recovery reported more than 3 s after the trigger, or never,
//!   is a false alarm. The issue's bound is 1 in 100 runs per setting; the rule
//!   is built for well under that (see `metrics::recovery::NOISE_Z`), so the
//!   test allows 1 per 100 and reports the counts.
//!   The same blip in 600 s runs at 90%: none (13 seeds here; 1200 runs of
//!   100 seeds were measured once, see the test).
//! - A real non-recovery: the metastable scenario's naive strategies are still
//!   reported as never recovering (its own test, `tests/it/metastable.rs`, checks
//!   over several seeds that their goodput stays near zero).
//! - A known recovery: a 2 s reset on a server with headroom, clients that retry
//!   every 1 s without limit. The last request refused during the outage learns
//!   of it when the outage ends (one 1 ms hop later at most) and waits 1 s, so
//!   the backlog of requests waiting to retry drains 1 s after the outage's end;
//!   the measure must say so within one bucket.

use std::path::Path;

use rayon::prelude::*;
use retry_storm::runner::simulate;
use retry_storm::scenario::{self, Scenario};

/// The metastable world (10 workers, 10 ms exponential service: 1000/s; 1 s
/// timeouts; 3 retries) at `utilisation`, open or closed load, with a 100 ms
/// blackhole at t = 20 s, run for `secs` seconds.
fn one_bucket_blip(utilisation: f64, open: bool, secs: u32) -> Scenario {
    let rate = 1000.0 * utilisation;
    let clients = if open {
        format!("model = \"open\"\nrate = {rate}")
    } else {
        // A closed loop whose clients think 1 s on average offers about one
        // request per client per second (plus the ~20 ms a request takes).
        format!(
            "model = \"closed\"\ncount = {}\nthink = {{ dist = \"exponential\", mean = \"1s\" }}",
            (rate * 1.02).round()
        )
    };
    let src = format!(
        r#"
name = "blip"
duration = "{secs}s"

[clients]
{clients}

[network]
latency = {{ dist = "lognormal", mean = "5ms", sigma = 0.3 }}

[server]
workers = 10
queue = 20000
service = {{ dist = "exponential", mean = "10ms" }}

[[outage]]
kind = "blackhole"
start = "20s"
end = "20.1s"

[retry]
timeout = "1s"
max_retries = 3
base = "100ms"
cap = "2s"

[[strategy]]
name = "none"
backoff = "none"

[[strategy]]
name = "full-jitter+token-bucket"
backoff = "full-jitter"
budget = {{ kind = "token-bucket" }}
"#
    );
    scenario::parse(&src, Path::new("blip.toml")).unwrap_or_else(|e| panic!("{e}"))
}

/// The runs among `seeds` of `base` that report a recovery more than 3 s
/// after the blip, or none: (seed, strategy, recovery time).
fn false_alarms(base: &Scenario, seeds: &[u64]) -> Vec<(u64, String, Option<f64>)> {
    seeds
        .par_iter()
        .flat_map_iter(|&seed| {
            let mut s = base.clone();
            s.seed = seed;
            simulate(&s).runs.into_iter().filter_map(move |r| {
                let t = r.summary.recovery_time_s;
                (t.is_none_or(|t| t > 3.0)).then_some((seed, r.name, t))
            })
        })
        .collect()
}

#[test]
fn a_one_bucket_blip_is_not_reported_as_a_long_outage() {
    let mut failures = Vec::new();
    let seeds: Vec<u64> = (1..=100).collect();
    for open in [true, false] {
        for utilisation in [0.5, 0.7, 0.9] {
            let alarms = false_alarms(&one_bucket_blip(utilisation, open, 50), &seeds);
            let load = if open { "open" } else { "closed" };
            eprintln!(
                "{load} load at {:.0}%: {} false alarms in 200 runs {alarms:?}",
                utilisation * 100.0,
                alarms.len()
            );
            // Two strategies, 100 runs each: at most one alarm per 100 runs.
            if alarms.len() > 2 {
                failures.push(format!("{load} {utilisation}: {alarms:?}"));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The same blip in runs of 600 s: eleven times as many windows after the
/// trigger in which noise could pass for a shortfall. At 90% load, where
/// the queue's excursions are longest, seeds 1 to 12 and seed 97: under the
/// Gaussian band this measure used, seed 97's closed-loop run without
/// backoff was reported recovered 451.4 s after the blip (one false alarm
/// in the 1200 runs of 100 seeds, and one more at 3.2 s); the band fitted to
/// the twin's own distribution raised none in those 1200 runs.
#[test]
fn a_blip_in_a_long_run_is_not_reported_as_a_long_outage() {
    let mut seeds: Vec<u64> = (1..=12).collect();
    seeds.push(97);
    for open in [true, false] {
        let alarms = false_alarms(&one_bucket_blip(0.9, open, 600), &seeds);
        assert!(alarms.is_empty(), "open {open}: {alarms:?}");
    }
}

#[test]
fn the_metastable_collapse_is_still_never() {
    let s =
        scenario::load(Path::new("scenarios/metastable.toml")).unwrap_or_else(|e| panic!("{e}"));
    let report = simulate(&s);
    for r in &report.runs {
        let naive = !r.name.contains('+');
        assert_eq!(
            r.summary.recovery_time_s.is_none(),
            naive,
            "{}: {:?}",
            r.name,
            r.summary.recovery_time_s
        );
        if naive {
            // Lost: every success the twin had from the trigger on, nearly.
            let lost = r.summary.successes_lost.unwrap();
            assert!(lost > 50_000, "{}: lost {lost}", r.name);
        }
    }
}

#[test]
fn a_known_recovery_is_measured_within_a_bucket_of_the_drain() {
    let src = r#"
name = "drain"
seed = 5
duration = "30s"

[clients]
model = "open"
rate = 500.0

[network]
latency = { dist = "constant", value = "1ms" }

[server]
workers = 10
queue = 1000
service = { dist = "exponential", mean = "5ms" }

[[outage]]
kind = "reset"
start = "10s"
end = "12s"

[retry]
backoff = "constant"
base = "1s"
max_retries = "unlimited"
timeout = "1s"

[[strategy]]
name = "constant-1s"
"#;
    for seed in 1..=5 {
        let mut s = scenario::parse(src, Path::new("drain.toml")).unwrap_or_else(|e| panic!("{e}"));
        s.seed = seed;
        let r = &simulate(&s).runs[0];
        let t = r.summary.recovery_time_s.expect("it recovers");
        // The drain: 1 s backoff after the last refusal, which arrives at most one
        // 1 ms hop after the outage's end. One bucket is 100 ms.
        assert!((t - 1.0).abs() <= 0.1 + 1e-9, "seed {seed}: recovery {t} s");
        // Nothing is lost for good: every refused request is served within 1 s of
        // the end, and the twin served the same arrivals. Lost requests are
        // counted up to the recovery bucket, so the retries that succeed in its
        // first milliseconds (the last refusals come back up to a hop and a
        // service late) fall outside: allow 2.5% of the ~1000 refused requests.
        let lost = r.summary.successes_lost.unwrap();
        assert!(lost <= 25, "seed {seed}: lost {lost}");
        // Every request that arrived during the 2 s was refused and retried 1 s
        // later: those of the first second twice (their first retry is refused
        // too), those of the second once. 500 * 2 + 500 * 1 = 1500 extra attempts
        // expected; the Poisson count of arrivals in 2 s has a standard deviation
        // of 32 (about 50 in retries), so 1300 to 1700 is 4 of them.
        let extra = r.summary.extra_attempts.unwrap();
        assert!((1300..=1700).contains(&extra), "seed {seed}: extra {extra}");
        assert!(r.summary.peak_backlog > 400.0, "{}", r.summary.peak_backlog);
    }
}

/// A world overloaded without its trigger (the main scenario with three
/// times the clients: its run without the trigger crashes the server) has no
/// normal to recover to: no recovery time is given, and "what this run
/// shows" says why instead of "recovered 0.0 s after the trigger".
#[test]
fn a_world_overloaded_without_its_trigger_reports_no_recovery() {
    let text = std::fs::read_to_string("scenarios/outage.toml")
        .unwrap()
        .replace("count = 1000", "count = 3000")
        .replace("duration = \"90s\"", "duration = \"40s\"");
    let s = retry_storm::scenario::parse(&text, std::path::Path::new("o3k.toml")).unwrap();
    let report = retry_storm::runner::simulate(&s);
    for run in &report.runs {
        assert!(run.summary.twin_overloaded, "{}", run.name);
        assert_eq!(run.summary.recovery_time_s, None, "{}", run.name);
    }
    let said = retry_storm::metrics::takeaway::takeaway(&report).join(" ");
    assert!(
        said.contains("itself overloaded under every strategy"),
        "{said}"
    );
    assert!(!said.contains("Back to normal"), "{said}");
    // The shipped world is not.
    let shipped = retry_storm::runner::simulate(
        &retry_storm::scenario::load(std::path::Path::new("scenarios/outage.toml")).unwrap(),
    );
    assert!(shipped.runs.iter().all(|r| !r.summary.twin_overloaded));
}
