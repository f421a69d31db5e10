//! Call chains through the real binary: `tiers.csv` against the closed forms
//! of retries at every layer, requests conserved at every tier, the same
//! bytes on any thread count, deadline propagation cutting wasted work, and
//! bad chains refused at their keys.

use std::fs;
use std::path::Path;

use retry_storm::retry::amplification::{CallMode, Tier, chain_load};

use crate::common::{invalid, sim};

/// Three tiers, `front -> back -> db`, roomy enough never to queue much;
/// `outage` and `strategies` are appended.
pub(crate) fn chain_world(outage: &str, strategies: &str) -> String {
    format!(
        r#"
name = "chain"
seed = 5
duration = "40s"
[clients]
model = "closed"
count = 100
think = {{ dist = "exponential", mean = "200ms" }}
[network]
latency = {{ dist = "constant", value = "1ms" }}
[server]
name = "front"
workers = 400
queue = 10000
service = {{ dist = "exponential", mean = "1ms" }}
calls = ["back"]
[[service]]
name = "back"
workers = 400
queue = 10000
service = {{ dist = "exponential", mean = "1ms" }}
calls = ["db"]
[[service]]
name = "db"
workers = 400
queue = 10000
service = {{ dist = "exponential", mean = "2ms" }}
{outage}
[metrics]
baseline = "5s"
bucket = "100ms"
[retry]
backoff = "none"
timeout = "10s"
retry_on = ["503", "reset", "timeout"]
{strategies}
"#
    )
}

pub(crate) fn csv(path: &Path) -> Vec<Vec<String>> {
    fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

pub(crate) fn run(dir: &Path, name: &str, text: &str, threads: &str) -> std::path::PathBuf {
    let file = dir.join(format!("{name}.toml"));
    fs::write(&file, text).unwrap();
    let out = dir.join(name);
    sim()
        .env("RAYON_NUM_THREADS", threads)
        .arg("run")
        .arg(&file)
        .args(["-q", "--no-plots", "--out"])
        .arg(&out)
        .assert()
        .success();
    out
}

/// Each row of tiers.csv as (strategy, tier, calls, calls_failed, attempts, ok).
fn tiers(out: &Path) -> Vec<(String, usize, u64, u64, u64, u64)> {
    let rows = csv(&out.join("tiers.csv"));
    let h = &rows[0];
    let col = |name: &str| h.iter().position(|c| c == name).unwrap();
    rows[1..]
        .iter()
        .map(|r| {
            let n = |name: &str| r[col(name)].parse::<u64>().unwrap();
            (
                r[col("strategy")].clone(),
                n("tier") as usize,
                n("calls"),
                n("calls_failed"),
                n("attempts"),
                n("ok"),
            )
        })
        .collect()
}

/// The database fails 40% of attempts by itself, independently (an
/// `errors` trigger), from 5 s to the end of the 40 s run; each layer
/// retries up to twice. While the failures last, the attempts per call at
/// each tier are the truncated geometric sums of `chain_load`, `A1` at back
/// and `A2` at the database; before, one. Over the run the attempts per call
/// mix the two periods, weighted by the calls in each: at back by time
/// (its calls are the users' attempts, whose rate barely moves), at the
/// database by time and by `A1` (back's retries are its calls).
#[test]
fn independent_failures_load_each_tier_as_the_geometric_sums_say() {
    let dir = tempfile::TempDir::new().unwrap();
    let text = chain_world(
        "[[outage]]\nkind = \"errors\"\np = 0.4\nservice = \"db\"\nstart = \"5s\"\nend = \"40s\"",
        "[[strategy]]\nname = \"everywhere\"\nmax_retries = 2",
    );
    let out = run(dir.path(), "geometric", &text, "1");
    let rows = tiers(&out);
    let closed = chain_load(&[
        Tier {
            retries: 2,
            fails: 0.0,
            calls: 1,
            probability: 1.0,
            mode: CallMode::Sequence,
        },
        Tier {
            retries: 2,
            fails: 0.0,
            calls: 1,
            probability: 1.0,
            mode: CallMode::Sequence,
        },
        Tier {
            retries: 2,
            fails: 0.4,
            calls: 1,
            probability: 1.0,
            mode: CallMode::Sequence,
        },
    ]);
    let (a1, a2) = (closed[1].attempts_per_call, closed[2].attempts_per_call);
    // 1 + 0.4 + 0.16 at the database; back retries when all three failed.
    assert!((a2 - 1.56).abs() < 1e-12 && (a1 - (1.0 + 0.064 + 0.064 * 0.064)).abs() < 1e-12);
    let expected = [
        (1, (5.0 + 35.0 * a1) / 40.0),
        (2, (5.0 + 35.0 * a1 * a2) / (5.0 + 35.0 * a1)),
    ];
    // About 20 000 calls reach each tier; attempts per call vary with a
    // standard deviation under 0.8, so the mean is within 0.6% of its
    // expectation at 3.5 standard errors; the users' rate moves by under 1%
    // between the periods (latency rises a few ms against 200 ms of think
    // time). A 1.5% tolerance holds that, and fails a tier that does not
    // retry (1.0 against 1.06 and 1.49) or retries once more (3.5% off).
    for (k, mixed) in expected {
        let (_, _, calls, _, attempts, _) = rows[k].clone();
        let per_call = attempts as f64 / calls as f64;
        assert!(
            (per_call - mixed).abs() < 0.015 * mixed,
            "tier {k}: {per_call} attempts per call, expected {mixed}"
        );
    }
}

/// Every call into a tier is answered OK, failed for good, or still under
/// way at the end; every OK at a tier is one successful call of its
/// callers; the calls into tier k+1 are at most the attempts at tier k
/// (one call each, made after the tier's own part). And the output is
/// the same bytes on one thread and on two.
#[test]
fn requests_are_conserved_tier_by_tier_on_any_thread_count() {
    let dir = tempfile::TempDir::new().unwrap();
    let text = chain_world(
        "[[outage]]\nkind = \"reset\"\nservice = \"db\"\nstart = \"10s\"\nend = \"14s\"",
        "[[strategy]]\nname = \"everywhere\"\nmax_retries = 2\n[[strategy]]\nname = \"top-only\"\nmax_retries = 2\n[strategy.tiers.back]\nmax_retries = 0\n[strategy.tiers.db]\nmax_retries = 0",
    );
    let one = run(dir.path(), "one", &text, "1");
    let two = run(dir.path(), "two", &text, "2");
    for f in ["tiers.csv", "summary.csv", "timeseries.csv"] {
        assert_eq!(
            fs::read(one.join(f)).unwrap(),
            fs::read(two.join(f)).unwrap(),
            "{f}"
        );
    }
    let rows = tiers(&one);
    for strategy in ["everywhere", "top-only"] {
        let t: Vec<_> = rows.iter().filter(|r| r.0 == strategy).collect();
        assert_eq!(t.len(), 3);
        for k in 1..3 {
            let (calls, failed, attempts, ok) = (t[k].2, t[k].3, t[k].4, t[k].5);
            // OKs are answers to attempts; each call has at most one OK.
            assert!(ok + failed <= calls, "{strategy} tier {k}: {:?}", t[k]);
            // What is neither is in progress at the end: a few at most.
            assert!(calls - ok - failed < 50, "{strategy} tier {k}: {:?}", t[k]);
            assert!(attempts >= calls, "{strategy} tier {k}: {:?}", t[k]);
            // One call per attempt above, at most.
            assert!(calls <= t[k - 1].4, "{strategy} tier {k}");
        }
        if strategy == "top-only" {
            for below in &t[1..] {
                assert_eq!(below.4, below.2, "no retries below the top: {below:?}");
            }
        }
    }
    let everywhere: u64 = rows
        .iter()
        .filter(|r| r.0 == "everywhere" && r.1 == 2)
        .map(|r| r.4)
        .sum();
    let top: u64 = rows
        .iter()
        .filter(|r| r.0 == "top-only" && r.1 == 2)
        .map(|r| r.4)
        .sum();
    assert!(
        everywhere > top,
        "retries at every layer hit the database more: {everywhere} against {top}"
    );
}

/// A brownout makes the database 20 times slower, and with 16 workers it
/// queues. With the callers' deadline carried down, no call outlives the
/// attempt it serves, and the database drops queued work whose deadline
/// has passed: less work is wasted below the server, and fewer users' requests fail.
/// (Work already running when its deadline passes is still wasted: nothing
/// stops a running handler here, so the cut is a quarter, not all.)
#[test]
fn deadline_propagation_cuts_the_work_done_for_callers_that_left() {
    let dir = tempfile::TempDir::new().unwrap();
    let text = chain_world(
        "[[outage]]\nkind = \"brownout\"\nfactor = 0.05\nservice = \"db\"\nstart = \"10s\"\nend = \"20s\"",
        "[[strategy]]\nname = \"plain\"\ntimeout = \"100ms\"\nmax_retries = 1\n[[strategy]]\nname = \"propagated\"\ntimeout = \"100ms\"\nmax_retries = 1\npropagate_deadline = true",
    );
    let db = text.rfind("workers = 400").unwrap();
    let text = format!("{}workers = 16{}", &text[..db], &text[db + 13..]);
    let out = run(dir.path(), "deadline", &text, "1");
    let rows = csv(&out.join("tiers.csv"));
    let h = &rows[0];
    let col = |name: &str| h.iter().position(|c| c == name).unwrap();
    let wasted = |strategy: &str| -> f64 {
        rows[1..]
            .iter()
            .filter(|r| r[col("strategy")] == strategy && r[col("tier")] != "0")
            .map(|r| r[col("wasted_s")].parse::<f64>().unwrap())
            .sum()
    };
    let (plain, propagated) = (wasted("plain"), wasted("propagated"));
    assert!(
        plain > 0.0,
        "a slow database wastes work without propagation"
    );
    assert!(
        propagated < 0.85 * plain,
        "propagation cuts the waste below: {propagated} s against {plain} s"
    );
    let failed = |strategy: &str| -> u64 {
        rows[1..]
            .iter()
            .find(|r| r[col("strategy")] == strategy && r[col("tier")] == "0")
            .map(|r| r[col("calls_failed")].parse().unwrap())
            .unwrap()
    };
    assert!(failed("propagated") < failed("plain"));
    // Exact: every tier's attempt timeout is the users' 100 ms, and the
    // deadline carried down clips a call's attempts to what is left of it,
    // so below the users an attempt can only be retried after an answer
    // that came back early (a 503 or a reset, which these roomy queues never
    // give): with propagation no tier below retries at all, without it they do.
    let retries = |strategy: &str, tier: &str| -> (u64, u64) {
        let r = rows[1..]
            .iter()
            .find(|r| r[col("strategy")] == strategy && r[col("tier")] == tier)
            .unwrap();
        (
            r[col("calls")].parse().unwrap(),
            r[col("attempts")].parse().unwrap(),
        )
    };
    for tier in ["1", "2"] {
        let (calls, attempts) = retries("propagated", tier);
        assert_eq!(attempts, calls, "tier {tier} retried past its deadline");
        let (calls, attempts) = retries("plain", tier);
        assert!(attempts > calls, "tier {tier} retries without a deadline");
    }
}

/// Bad chains are errors at their keys, exit 2, and write nothing.
#[test]
fn bad_chains_name_their_keys() {
    let dir = tempfile::TempDir::new().unwrap();
    let ok = chain_world("", "[[strategy]]\nname = \"a\"");
    let cases: Vec<(String, &str, &str)> = vec![
        (
            ok.replace("calls = [\"db\"]", "calls = [\"dbx\"]"),
            "service[0].calls[0]",
            "no service is named \"dbx\"",
        ),
        (
            ok.replace(
                "mean = \"2ms\" }\n",
                "mean = \"2ms\" }\ncalls = [\"back\"]\n",
            ),
            "service[1].calls[0]",
            "cycle (back -> db -> back)",
        ),
        (
            ok.replace("calls = [\"db\"]\n", ""),
            "service[1].name",
            "nothing the server calls calls \"db\"",
        ),
        (
            ok.replace(
                "name = \"a\"",
                "name = \"a\"\n[strategy.tiers.dbx]\nmax_retries = 0",
            ),
            "strategy[0].tiers.dbx",
            "no service is named \"dbx\"",
        ),
        (
            ok.replace("duration = \"40s\"", "duration = \"6ms\"")
                .replace("baseline = \"5s\"", "baseline = \"1ms\"")
                .replace("bucket = \"100ms\"", "bucket = \"1ms\""),
            "server.calls",
            "longer than the run",
        ),
        (
            ok.replace(
                "name = \"a\"",
                "name = \"a\"\n[strategy.tiers.db]\nbreaker = { failure_rate = 1.5 }",
            ),
            "strategy[0].tiers.db.breaker.failure_rate",
            "failure_rate",
        ),
        (
            ok.replace(
                "name = \"a\"",
                "name = \"a\"\n[strategy.tiers.db]\nhedging = { delay = \"5ms\" }",
            ),
            "strategy[0].tiers.db.max_retries",
            "hedges or retries, not both",
        ),
        (
            chain_world(
                "[[outage]]\nkind = \"reset\"\nservice = \"cache\"\nstart = \"10s\"\nend = \"14s\"",
                "[[strategy]]\nname = \"a\"",
            ),
            "outage[0].service",
            "no tier is named \"cache\"",
        ),
    ];
    for (i, (text, key, words)) in cases.iter().enumerate() {
        let err = invalid(dir.path(), i, text);
        assert!(
            err.contains(&format!("key `{key}`")) && err.contains(words),
            "case {i}: {err}"
        );
    }
}

/// Chain keys in a world without a chain are errors at their keys, exit 2.
#[test]
fn chain_keys_without_a_chain_name_their_keys() {
    let dir = tempfile::TempDir::new().unwrap();
    let ok = chain_world("", "[[strategy]]\nname = \"a\"");
    let single = ok
        .split("[[service]]")
        .next()
        .unwrap()
        .replace("calls = [\"back\"]\n", "")
        .replace("name = \"front\"\n", "")
        + "[metrics]\nbaseline = \"5s\"\n[[strategy]]\nname = \"a\"\n";
    let cases = [
        (
            single.replace("[server]\n", "[server]\ncalls = [\"back\"]\n"),
            "server.calls",
            "declare each in a [[service]] table",
        ),
        (
            single.replace("name = \"a\"", "name = \"a\"\npropagate_deadline = true"),
            "strategy[0].propagate_deadline",
            "calls between services",
        ),
    ];
    for (i, (text, key, words)) in cases.iter().enumerate() {
        let err = invalid(dir.path(), 100 + i, text);
        assert!(
            err.contains(&format!("key `{key}`")) && err.contains(words),
            "single case {i}: {err}"
        );
    }
}

/// A call made with probability 0.3: the calls into the database are 0.3 of
/// the backend's attempts that call, within 5 binomial standard errors (about
/// 20 000 attempts: 0.016), and the users' requests are unaffected by it.
#[test]
fn a_call_made_with_a_probability_is_made_that_often() {
    let dir = tempfile::TempDir::new().unwrap();
    let text = chain_world("", "[[strategy]]\nname = \"a\"").replace(
        "calls = [\"db\"]",
        "calls = [{ service = \"db\", probability = 0.3 }]",
    );
    let out = run(dir.path(), "probability", &text, "1");
    let rows = tiers(&out);
    let (back, db) = (rows[1].4 as f64, rows[2].2 as f64);
    let share = db / back;
    let se = (0.3 * 0.7 / back).sqrt();
    assert!(
        (share - 0.3).abs() < 5.0 * se,
        "{db} calls of {back} attempts: {share}"
    );
}

/// A chain's capacity is its tightest tier's: in the shipped scenario the
/// database (16 workers at 10 ms, one query per request: 1600/s), not the
/// frontend's own part (200 workers at 2 ms); halving the calls that reach
/// the database moves the bottleneck to what the frontend's held workers
/// can carry.
#[test]
fn a_chain_is_as_fast_as_its_tightest_tier() {
    use retry_storm::scenario;
    let s = scenario::load(Path::new("scenarios/call-chain.toml")).unwrap();
    let c = s.world.capacity_per_s().unwrap();
    assert!((c - 1600.0).abs() < 1e-6, "{c}");
    let dir = tempfile::TempDir::new().unwrap();
    let file = dir.path().join("half.toml");
    let text = fs::read_to_string("scenarios/call-chain.toml")
        .unwrap()
        .replace(
            "calls = [\"database\"]",
            "calls = [{ service = \"database\", probability = 0.1 }]",
        );
    fs::write(&file, text).unwrap();
    let s = scenario::load(&file).unwrap();
    let c = s.world.capacity_per_s().unwrap();
    // The database now takes 16 000/s of users' requests; the frontend's
    // 200 workers are each held for its 2 ms, two hops of 5 ms, the
    // backend's 5 ms, and a tenth of the time the database's 10 ms and two
    // more hops: 200 / 0.019 s, about 10 500/s.
    let frontend = 200.0 / (0.002 + 0.005 + 0.010 + 0.1 * (0.010 + 0.010));
    assert!(
        (c - frontend).abs() < 1e-6 * frontend,
        "{c} against {frontend}"
    );
}

/// A breaker on the calls to a service: while the database answers nothing
/// but 503 (from 5 s to the end), the backend's breaker on its database
/// calls opens after 20 of them, and from then on the backend fails those
/// calls itself, sending a probe now and then. The database sees a small
/// share of the attempts it sees without the breaker, every refused call is
/// counted as failed and refused locally, and the users' requests fail as
/// they do without it (the database fails them either way). The users'
/// own attempts have no breaker: the strategy sets none.
#[test]
fn a_breaker_on_calls_to_a_service_stops_them_while_it_fails() {
    let dir = tempfile::TempDir::new().unwrap();
    let text = chain_world(
        "[[outage]]\nkind = \"503\"\nservice = \"db\"\nstart = \"5s\"\nend = \"40s\"",
        "[[strategy]]\nname = \"plain\"\nmax_retries = 1\n\
         [[strategy]]\nname = \"breaker\"\nmax_retries = 1\n\
         [strategy.tiers.db]\nbreaker = { failure_rate = 0.5, window = 20, min_calls = 20, open_for = \"1s\", probes = 2 }",
    );
    let out = run(dir.path(), "breaker", &text, "1");
    let rows = csv(&out.join("tiers.csv"));
    let h = &rows[0];
    let col = |name: &str| h.iter().position(|c| c == name).unwrap();
    let get = |strategy: &str, tier: &str, name: &str| -> u64 {
        rows[1..]
            .iter()
            .find(|r| r[0] == strategy && r[1] == tier)
            .unwrap()[col(name)]
        .parse()
        .unwrap()
    };
    let (plain, breaker) = (
        get("plain", "2", "attempts"),
        get("breaker", "2", "attempts"),
    );
    assert!(
        breaker * 5 < plain,
        "database attempts: {breaker} with the breaker, {plain} without"
    );
    let refused = get("breaker", "2", "rejected_locally");
    assert!(refused > 0, "the breaker refused calls");
    assert_eq!(get("plain", "2", "rejected_locally"), 0);
    assert!(get("breaker", "2", "calls_failed") >= refused);
    // The users' attempts have no breaker of their own.
    assert_eq!(get("breaker", "0", "rejected_locally"), 0);
    let failed = |s: &str| get(s, "0", "calls_failed") as f64;
    let started = |s: &str| get(s, "0", "calls") as f64;
    assert!(
        (failed("breaker") / started("breaker") - failed("plain") / started("plain")).abs() < 0.02,
        "the users fail as much either way"
    );
}

/// Outages of different services may overlap; those of one may not. The
/// database answers 503 from 5 s to 10 s and the backend is down (reset)
/// from 8 s to 15 s: both take effect, so the backend answers fewer of its
/// callers' attempts OK than with the database's outage alone (it is down
/// from 10 s to 15 s, when the database is fine).
#[test]
fn outages_of_different_services_may_overlap() {
    let dir = tempfile::TempDir::new().unwrap();
    let db = "[[outage]]\nkind = \"503\"\nservice = \"db\"\nstart = \"5s\"\nend = \"10s\"";
    let back = "[[outage]]\nkind = \"reset\"\nservice = \"back\"\nstart = \"8s\"\nend = \"15s\"";
    let strategy = "[[strategy]]\nname = \"a\"\nmax_retries = 1";
    let ok_at = |out: &Path, tier: usize| {
        tiers(out)
            .into_iter()
            .find(|t| t.1 == tier)
            .map(|t| t.5)
            .unwrap()
    };
    let alone = run(dir.path(), "alone", &chain_world(db, strategy), "1");
    let both = run(
        dir.path(),
        "both",
        &chain_world(&format!("{db}\n{back}"), strategy),
        "1",
    );
    assert!(
        ok_at(&both, 1) < ok_at(&alone, 1),
        "the backend's outage took effect: {} OK against {}",
        ok_at(&both, 1),
        ok_at(&alone, 1)
    );
    // Two outages of the database that overlap are refused at the second.
    let db2 = "[[outage]]\nkind = \"reset\"\nservice = \"db\"\nstart = \"8s\"\nend = \"15s\"";
    let err = invalid(
        dir.path(),
        99,
        &chain_world(&format!("{db}\n{db2}"), strategy),
    );
    assert!(
        err.contains("key `outage[1].start`") && err.contains("must not overlap"),
        "{err}"
    );
}

/// A crash or an outage that throws out a worker holding calls counts only
/// the worker's own part as its tier's work, as a completion does: the
/// backend (1 ms of its own per attempt) is reset while its workers wait
/// 200 ms on the database, and its work stays that of its own parts. The
/// sum of exponential parts of mean 1 ms over its attempts has a relative
/// standard deviation below 1%; 5% is the bound.
#[test]
fn a_flushed_worker_counts_its_own_part_as_work_not_its_wait() {
    let dir = tempfile::TempDir::new().unwrap();
    let text = chain_world(
        "[[outage]]\nkind = \"reset\"\nservice = \"back\"\nstart = \"10s\"\nend = \"11s\"",
        "[[strategy]]\nname = \"a\"\nmax_retries = 0",
    )
    .replace("mean = \"2ms\"", "mean = \"200ms\"");
    let out = run(dir.path(), "flush", &text, "1");
    let rows = csv(&out.join("tiers.csv"));
    let h = &rows[0];
    let col = |name: &str| h.iter().position(|c| c == name).unwrap();
    let back = rows[1..].iter().find(|r| r[1] == "1").unwrap();
    let attempts: f64 = back[col("attempts")].parse().unwrap();
    let work: f64 = back[col("work_s")].parse().unwrap();
    let wasted: f64 = back[col("wasted_s")].parse().unwrap();
    assert!(
        work <= attempts * 0.001 * 1.05,
        "the backend's work {work} s for {attempts} attempts of 1 ms"
    );
    assert!(wasted > 0.0 && wasted < 1.0, "wasted {wasted} s");
}

/// Calls orphaned below a flushed worker are wasted work: the backend
/// resets for a millisecond at 5 s, dropping the attempts its workers hold,
/// each waiting on a database call of 200 ms (constant) that goes on
/// without a caller. Every request the reset failed had one such call, so
/// the database wastes exactly 200 ms per failed request, and its OKs
/// delivered are the frontend's.
#[test]
fn calls_orphaned_by_a_reset_are_wasted_work() {
    let dir = tempfile::TempDir::new().unwrap();
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/orphans.toml"),
    )
    .unwrap();
    let out = run(dir.path(), "orphans", &text, "2");
    let rows = csv(&out.join("tiers.csv"));
    let col = |name: &str| rows[0].iter().position(|c| c == name).unwrap();
    let at = |tier: usize, name: &str| -> f64 { rows[1 + tier][col(name)].parse().unwrap() };
    let summary = csv(&out.join("summary.csv"));
    let failed: f64 = summary[1][summary[0].iter().position(|c| c == "failed").unwrap()]
        .parse()
        .unwrap();
    assert!(failed >= 10.0, "the reset fails requests: {failed}");
    assert!(
        (at(2, "wasted_s") - 0.2 * failed).abs() < 1e-9,
        "{}",
        at(2, "wasted_s")
    );
    assert_eq!(at(2, "ok"), at(0, "ok"));
}
