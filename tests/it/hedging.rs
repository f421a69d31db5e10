//! Hedged requests: the latency of independent copies is that of their
//! minimum (the closed form of `retry::hedging`), Dean and Barroso's claim
//! on the shipped scenario, the busy fleet where hedging makes the tail
//! worse, cancellation, budgets, determinism, and bad hedging tables.

use std::fs;
use std::path::Path;

use retry_storm::engine::SimDuration;
use retry_storm::model::{self, Dist, RunResult};
use retry_storm::retry::hedging::{expected_copies, survival};
use retry_storm::scenario::{self, Scenario};

use crate::common::sim;

fn parse(text: &str) -> Scenario {
    scenario::parse(text, Path::new("hedging-test.toml")).unwrap_or_else(|e| panic!("{e}"))
}

fn run(s: &Scenario, i: usize) -> RunResult {
    model::run(&s.world_for(i), &s.strategies[i], s.seed, s.metrics.bucket)
}

/// A server with far more workers than requests in service (nothing ever
/// queues), a constant 100 us each way, and the log-normal service time of
/// the hedging scenario; `strategies` appended.
fn roomy_world(strategies: &str) -> String {
    format!(
        r#"
name = "roomy"
seed = 11
duration = "60s"
[clients]
model = "open"
rate = 2000.0
[network]
latency = {{ dist = "constant", value = "100us" }}
[server]
workers = 1000
queue = 10
service = {{ dist = "lognormal", mean = "1.63ms", sigma = 0.99 }}
[metrics]
baseline = "5s"
[retry]
max_retries = 0
timeout = "10s"
{strategies}
"#
    )
}

/// With copies that do not slow each other down, a hedged request's latency
/// is the minimum of its copies' answers, copy k answering at k * delay plus
/// its own time: every quantile of the run lands where that closed form
/// puts it, and the copies sent per request are its expected count.
///
/// Tolerances: at the empirical q-quantile the closed form's CDF must be
/// within four binomial standard errors, sqrt(q (1 - q) / n), of q, once the
/// histogram's 0.4% relative error on the quantile is allowed for; the
/// copies per request within four standard errors of a mean of counts
/// between 1 and the limit (sd at most (limit - 1) / 2).
#[test]
fn hedged_latency_is_the_minimum_of_the_copies() {
    let s = parse(&roomy_world(
        r#"
[[strategy]]
name = "two-at-5ms"
hedging = { max_attempts = 2, delay = "5ms" }
[[strategy]]
name = "three-at-2ms"
hedging = { max_attempts = 3, delay = "2ms" }
[[strategy]]
name = "one"
hedging = { max_attempts = 1 }
"#,
    ));
    let service = Dist::lognormal(SimDuration(1_630_000), 0.99).unwrap();
    // A copy's own time: two hops of 100 us and its service.
    let copy = |u: f64| service.survival(u - 200_000.0);
    for (i, (copies, delay_ms)) in [(2u8, 5.0), (3, 2.0), (1, 5.0)].into_iter().enumerate() {
        let r = run(&s, i);
        let who = &s.strategies[i].name;
        let delay = delay_ms * 1e6;
        let n = r.latency.count() as f64;
        assert!(n > 100_000.0, "{who}: {n} requests");
        for q in [0.5, 0.9, 0.95, 0.99, 0.999] {
            let x = r.latency.quantile(q).unwrap().as_nanos_f64();
            let cdf = |t: f64| 1.0 - survival(copies, delay, copy, t);
            let se = (q * (1.0 - q) / n).sqrt();
            let (lo, hi) = (cdf(x * 0.996) - 4.0 * se, cdf(x * 1.004) + 4.0 * se);
            assert!(
                (lo..=hi).contains(&q),
                "{who}: the {q}-quantile {x} ns has closed-form CDF in [{lo}, {hi}]"
            );
        }
        let t = &r.totals;
        let per_request = t.attempts as f64 / t.started as f64;
        let want = expected_copies(copies, delay, copy);
        let se = (f64::from(copies) - 1.0) / 2.0 / (t.started as f64).sqrt();
        assert!(
            (per_request - want).abs() <= 4.0 * se + 1e-9,
            "{who}: {per_request} copies per request, closed form {want}"
        );
    }
}

/// Dean and Barroso: hedging at the 95th percentile of the latency cuts the
/// tail for about 5% more requests. On the shipped scenario at half load
/// (queues short enough that copies barely slow each other), the delay of
/// 5 ms (the service time's 95th percentile) sends 6.4% more copies and
/// takes the p99 from 10.5 ms to 7.0 ms in the closed form of independent
/// copies; the run must agree within one percentage point of copies and 5%
/// of each p99 (the p99 of 490 000 requests has a sampling error near 1%).
#[test]
fn hedging_at_the_95th_percentile_cuts_the_tail_for_about_five_percent() {
    let s = scenario::load(Path::new("scenarios/hedging.toml")).unwrap();
    let service = Dist::lognormal(SimDuration(1_630_000), 0.99).unwrap();
    let copy = |u: f64| service.survival(u - 500_000.0);
    let p99 = |copies: u8| {
        // The closed form's 99th percentile, by bisection (ns).
        let (mut lo, mut hi) = (0.0, 1e9);
        for _ in 0..100 {
            let mid = (lo + hi) / 2.0;
            if survival(copies, 5e6, copy, mid) > 0.01 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    };
    let (plain, hedged) = (run(&s, 0), run(&s, 1));
    let extra = hedged.totals.attempts as f64 / hedged.totals.started as f64 - 1.0;
    let want = expected_copies(2, 5e6, copy) - 1.0;
    assert!(
        (extra - want).abs() < 0.01,
        "extra copies {extra}, closed form {want}"
    );
    for (r, copies) in [(&plain, 1), (&hedged, 2)] {
        let got = r.latency.quantile(0.99).unwrap().as_nanos_f64();
        let want = p99(copies);
        assert!(
            (got / want - 1.0).abs() < 0.05,
            "{copies} copies: p99 {got} ns, closed form {want} ns"
        );
    }
}

/// The same delay on the fleet at 90% of its capacity: the copies' load
/// lengthens the queues, so more requests pass the delay and are copied,
/// until nearly every request sends two. The tail is worse than without
/// hedging. Limiting hedges to 10% of the requests (a ratio budget) keeps
/// the load and cuts the tail instead.
#[test]
fn hedging_into_a_busy_fleet_makes_the_tail_worse_unless_budgeted() {
    let s = scenario::load(Path::new("scenarios/hedging.toml")).unwrap();
    let find = |name: &str| s.strategies.iter().position(|st| st.name == name).unwrap();
    let p99 = |r: &RunResult| r.latency.quantile(0.99).unwrap();
    let amplification = |r: &RunResult| r.totals.attempts as f64 / r.totals.started as f64;
    let plain = run(&s, find("no-hedging-90"));
    let hedged = run(&s, find("hedging-90"));
    let budgeted = run(&s, find("hedging-90-budget"));
    assert!(
        p99(&hedged) > p99(&plain),
        "p99 hedged {} against {}",
        p99(&hedged),
        p99(&plain)
    );
    assert!(
        amplification(&hedged) > 1.5,
        "{} copies per request",
        amplification(&hedged)
    );
    // The budget allows retries (here copies) up to 10% of the requests in
    // its window, so the whole run stays within 10% and a few windows' edge.
    assert!(
        amplification(&budgeted) < 1.105,
        "{}",
        amplification(&budgeted)
    );
    assert!(
        p99(&budgeted) < p99(&plain),
        "p99 budgeted {} against {}",
        p99(&budgeted),
        p99(&plain)
    );
}

/// At a delay of 1 ms (the median) half the requests are copied. When the
/// cancellation reaches the servers, a losing copy still queued is dropped:
/// the servers work less, and the queues and the tail stay shorter, than
/// when every copy is served.
#[test]
fn cancelled_copies_are_dropped_from_the_queues() {
    let text = fs::read_to_string("scenarios/hedging.toml")
        .unwrap()
        .replace("delay = \"5ms\"", "delay = \"1ms\"")
        .replace("duration = \"20s\"", "duration = \"10s\"");
    let s = parse(&text);
    let find = |name: &str| s.strategies.iter().position(|st| st.name == name).unwrap();
    let cancel = run(&s, find("hedging"));
    let keep = run(&s, find("hedging-no-cancel"));
    assert!(
        cancel.totals.busy_ns < keep.totals.busy_ns,
        "work {} with cancellation, {} without",
        cancel.totals.busy_ns,
        keep.totals.busy_ns
    );
    assert!(cancel.latency.quantile(0.99) < keep.latency.quantile(0.99));
}

/// Hedged runs are the same bytes on one thread and on two.
#[test]
fn hedged_runs_are_identical_on_any_thread_count() {
    let dir = tempfile::TempDir::new().unwrap();
    let text = roomy_world(
        r#"
[[outage]]
kind = "reset"
start = "6s"
end = "7s"
[[strategy]]
name = "hedge"
hedging = { max_attempts = 3, delay = "2ms" }
retry_on = ["reset", "503"]
[[strategy]]
name = "hedge-budget"
hedging = { max_attempts = 2, delay = "2ms" }
budget = { kind = "token-bucket" }
"#,
    )
    .replace("duration = \"60s\"", "duration = \"10s\"");
    let file = dir.path().join("h.toml");
    fs::write(&file, text).unwrap();
    let mut outs = Vec::new();
    for threads in ["1", "2"] {
        let out = dir.path().join(format!("out{threads}"));
        sim()
            .env("RAYON_NUM_THREADS", threads)
            .arg("run")
            .arg(&file)
            .args(["-q", "--out"])
            .arg(&out)
            .assert()
            .success();
        outs.push(out);
    }
    let mut names: Vec<_> = fs::read_dir(&outs[0])
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    assert!(names.len() > 4, "{names:?}");
    for name in names {
        let (a, b) = (
            fs::read(outs[0].join(&name)).unwrap(),
            fs::read(outs[1].join(&name)).unwrap(),
        );
        assert!(a == b, "{name:?} differs between 1 and 2 threads");
    }
}

/// Bad hedging tables are errors at their keys, exit 2, and write nothing.
#[test]
fn bad_hedging_names_its_keys() {
    let dir = tempfile::TempDir::new().unwrap();
    let with = |strategy: &str| roomy_world(&format!("[[strategy]]\nname = \"h\"\n{strategy}"));
    let cases = [
        (
            with("hedging = { delay = \"5ms\" }").replace("max_retries = 0", "max_retries = 3"),
            "retry.max_retries",
            "hedges or retries, not both",
        ),
        (
            with("hedging = { max_attempts = 6, delay = \"5ms\" }"),
            "strategy[0].hedging.max_attempts",
            "1 (no hedging) to 5",
        ),
        (
            with("hedging = { max_attempts = 2 }"),
            "strategy[0].hedging.delay",
            "needs a `delay`",
        ),
        (
            with("hedging = { delay = \"0ms\" }"),
            "strategy[0].hedging.delay",
            "must be positive",
        ),
        (
            with("hedging = { delay = \"5ms\", copies = 2 }"),
            "strategy[0].hedging.copies",
            "unknown field `copies`",
        ),
    ];
    for (i, (text, key, words)) in cases.iter().enumerate() {
        let err = crate::common::invalid(dir.path(), i, text);
        assert!(
            err.contains(&format!("key `{key}`")) && err.contains(words),
            "case {i}: {err}"
        );
    }
}

/// gRPC's answers to a failed copy: a non-fatal status (in `retry_on`)
/// sends the next copy at once, until `max_attempts`, and the request fails
/// when all have; a fatal one ends the request at its first copy. The
/// server answers 503 for the whole run; the delay (10 s) is longer than
/// the run, so every copy after the first is sent because one failed.
#[test]
fn a_non_fatal_failure_sends_the_next_copy_and_a_fatal_one_ends_the_request() {
    let s = parse(
        &roomy_world(
            r#"
[[outage]]
kind = "503"
start = "1s"
end = "60s"
[[strategy]]
name = "non-fatal"
hedging = { max_attempts = 3, delay = "10s" }
retry_on = ["503"]
[[strategy]]
name = "fatal"
hedging = { max_attempts = 3, delay = "10s" }
retry_on = ["timeout"]
"#,
        )
        .replace("baseline = \"5s\"", "baseline = \"1s\""),
    );
    for (i, copies, fatal) in [(0, 3, false), (1, 1, true)] {
        let r = run(&s, i);
        let t = &r.totals;
        // Requests started in the outage, and answered: every one failed.
        let during = t.failed();
        assert!(during > 50_000, "{during}");
        let attempts = t.attempts as f64;
        let before = t.started - during - r.in_flight_at_end;
        let per = (attempts - before as f64) / (during + r.in_flight_at_end) as f64;
        assert!(
            (per - f64::from(copies)).abs() < 0.01,
            "{}: {per} copies per failed request",
            s.strategies[i].name
        );
        if fatal {
            assert_eq!(t.failed_not_retryable, during);
        } else {
            assert_eq!(t.failed_exhausted, during);
        }
    }
}

/// A two-tier chain for hedged calls: the front (roomy, 10 us of its own
/// work) calls the database of `roomy_world` (1000 workers, the same
/// log-normal service, nothing ever queues), 100 us each way; the users
/// never retry, and the front's calls to the database follow `db`.
fn roomy_chain(db: &str) -> String {
    format!(
        r#"
name = "roomy-chain"
seed = 13
duration = "60s"
[clients]
model = "open"
rate = 2000.0
[network]
latency = {{ dist = "constant", value = "100us" }}
[server]
name = "front"
workers = 1000
queue = 10
service = {{ dist = "constant", value = "10us" }}
calls = ["db"]
[[service]]
name = "db"
workers = 1000
queue = 10
service = {{ dist = "lognormal", mean = "1.63ms", sigma = 0.99 }}
[metrics]
baseline = "5s"
[retry]
max_retries = 0
timeout = "10s"
{db}
"#
    )
}

/// A service's callers that hedge (`hedging` in a tier's table) send
/// copies of each call as the users' hedged requests do: with a database
/// where copies do not slow each other, a call's latency at its caller is
/// the minimum of its copies' answers (the same closed form as for the
/// users), and the copies per call their expected count. Tolerances as in
/// `hedged_latency_is_the_minimum_of_the_copies`, on the median and the
/// 99th percentile the tier's figures report.
#[test]
fn hedged_calls_take_the_minimum_of_their_copies() {
    let s = parse(&roomy_chain(
        r#"
[[strategy]]
name = "two-at-5ms"
[strategy.tiers.db]
hedging = { max_attempts = 2, delay = "5ms" }
[[strategy]]
name = "three-at-2ms"
[strategy.tiers.db]
hedging = { max_attempts = 3, delay = "2ms" }
[[strategy]]
name = "one"
"#,
    ));
    let service = Dist::lognormal(SimDuration(1_630_000), 0.99).unwrap();
    let copy = |u: f64| service.survival(u - 200_000.0);
    for (i, (copies, delay_ms)) in [(2u8, 5.0), (3, 2.0), (1, 5.0)].into_iter().enumerate() {
        let r = run(&s, i);
        let who = &s.strategies[i].name;
        let db = &r.tiers.as_ref().expect("a chain's run has tiers")[1];
        let delay = delay_ms * 1e6;
        let n = db.totals.ok as f64;
        assert!(n > 100_000.0, "{who}: {n} calls answered");
        assert_eq!(db.totals.calls_failed, 0, "{who}");
        let cdf = |t: f64| 1.0 - survival(copies, delay, copy, t);
        for (q, x) in [(0.5, db.latency_p50), (0.99, db.latency_p99)] {
            let x = x.unwrap().as_nanos_f64();
            let se = (q * (1.0 - q) / n).sqrt();
            let (lo, hi) = (cdf(x * 0.996) - 4.0 * se, cdf(x * 1.004) + 4.0 * se);
            assert!(
                (lo..=hi).contains(&q),
                "{who}: the calls' {q}-quantile {x} ns has closed-form CDF in [{lo}, {hi}]"
            );
        }
        let calls = db.totals.calls as f64;
        let per_call = db.totals.attempts as f64 / calls;
        let want = expected_copies(copies, delay, copy);
        let se = (f64::from(copies) - 1.0) / 2.0 / calls.sqrt();
        assert!(
            (per_call - want).abs() <= 4.0 * se + 1e-9,
            "{who}: {per_call} copies per call, closed form {want}"
        );
        assert_eq!(
            db.totals.retries,
            db.totals.attempts - db.totals.calls,
            "{who}"
        );
    }
}

/// Hedged calls into a busy database: when the cancellation of the losing
/// copies reaches it, a copy still queued there is dropped unserved, so the
/// database works less, and wastes less, than when every copy is served.
#[test]
fn a_cancelled_call_copy_is_dropped_from_the_callees_queue() {
    let busy = roomy_chain(
        r#"
[[strategy]]
name = "cancel"
[strategy.tiers.db]
hedging = { max_attempts = 2, delay = "2ms" }
[[strategy]]
name = "keep"
[strategy.tiers.db]
hedging = { max_attempts = 2, delay = "2ms", cancel = false }
"#,
    )
    .replace(
        "workers = 1000\nqueue = 10\nservice = { dist = \"lognormal\"",
        "workers = 5\nqueue = 1000\nservice = { dist = \"lognormal\"",
    )
    .replace("duration = \"60s\"", "duration = \"10s\"");
    let s = parse(&busy);
    let db = |i: usize| run(&s, i).tiers.unwrap()[1].totals;
    let (cancel, keep) = (db(0), db(1));
    assert!(
        cancel.work_ns < keep.work_ns && cancel.wasted_ns < keep.wasted_ns,
        "database's work {} ns ({} wasted) with cancellation, {} ({}) without",
        cancel.work_ns,
        cancel.wasted_ns,
        keep.work_ns,
        keep.wasted_ns
    );
}

/// Cancellation that propagates (`propagate_cancel`): the users hedge
/// their requests to a front whose 30 workers each hold an attempt while
/// its call to the database is out. When a copy wins, a losing copy's
/// worker still waiting on its call is freed at once and the call
/// abandoned; without the key it waits for the call's answer. The front's
/// busy workers, time-averaged, fall (9.6 to 5.6 in this world: asked
/// below 80%), its median latency with them, and the database's work for
/// the abandoned calls is counted as wasted.
#[test]
fn a_losing_copys_calls_are_cancelled_with_it() {
    let text = roomy_chain(
        r#"
hedging = { max_attempts = 2, delay = "2ms" }
[[strategy]]
name = "keep-calls"
[[strategy]]
name = "cancel-calls"
propagate_cancel = true
"#,
    )
    .replace("rate = 2000.0", "rate = 4000.0")
    .replace(
        "workers = 1000\nqueue = 10\nservice = { dist = \"constant\"",
        "workers = 30\nqueue = 1000\nservice = { dist = \"constant\"",
    )
    .replace("duration = \"60s\"", "duration = \"20s\"");
    let s = parse(&text);
    let busy =
        |r: &RunResult| r.buckets.iter().map(|b| b.busy).sum::<f64>() / r.buckets.len() as f64;
    let (keep, cancel) = (run(&s, 0), run(&s, 1));
    let (b_keep, b_cancel) = (busy(&keep), busy(&cancel));
    assert!(
        b_cancel < 0.8 * b_keep,
        "busy front workers {b_cancel} against {b_keep}"
    );
    let p50 = |r: &RunResult| r.tiers.as_ref().unwrap()[0].latency_p50.unwrap();
    assert!(p50(&cancel) < p50(&keep));
    let db = |r: &RunResult| r.tiers.as_ref().unwrap()[1].totals;
    assert_eq!(
        db(&keep).wasted_ns,
        0,
        "every call's answer reached a waiting worker"
    );
    assert!(
        db(&cancel).wasted_ns > 0,
        "abandoned calls' work is of no use"
    );
    assert_eq!(cancel.totals.failed(), 0);
}
