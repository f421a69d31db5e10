//! The AWS "Exponential Backoff and Jitter" model (scenarios/aws-jitter.toml):
//! properties that must hold whatever the seed, and the ranking the blog
//! published, on fixed seeds.

use std::path::Path;

use retry_storm::scenario::{self, Scenario};
use retry_storm::sweep::{self, SweepRow};

/// The shipped scenario with its `[sweep]` replaced by N = `values`, run
/// `replications` times each.
fn aws(values: &[u64], replications: u32) -> Scenario {
    let path = Path::new("scenarios/aws-jitter.toml");
    let src = std::fs::read_to_string(path).unwrap();
    let (head, rest) = src.split_at(src.find("[sweep]").unwrap());
    let tail = &rest[rest.find("[[strategy]]").unwrap()..];
    let values: Vec<String> = values.iter().map(u64::to_string).collect();
    let sweep = format!(
        "[sweep]\nparameter = \"clients.count\"\nvalues = [{}]\nreplications = {replications}\n\n",
        values.join(", ")
    );
    scenario::parse(&format!("{head}{sweep}{tail}"), path).unwrap_or_else(|e| panic!("{e}"))
}

fn rows(s: &Scenario) -> Vec<SweepRow> {
    sweep::run(s).expect("the scenario has a sweep").rows
}

/// The row of `strategy` at N = `n`.
fn row<'a>(s: &Scenario, rows: &'a [SweepRow], n: u64, strategy: &str) -> &'a SweepRow {
    let sw = s.sweep.as_ref().unwrap();
    rows.iter()
        .find(|r| {
            sw.axes[0].values[sw.points[r.point].coords[0]].x == n as f64 && r.strategy == strategy
        })
        .unwrap()
}

/// N at a row.
fn clients(s: &Scenario, r: &SweepRow) -> f64 {
    let sw = s.sweep.as_ref().unwrap();
    sw.axes[0].values[sw.points[r.point].coords[0]].x
}

#[test]
fn one_client_makes_exactly_one_call_in_four_hops() {
    let s = aws(&[1], 20);
    for r in rows(&s) {
        assert_eq!(
            (r.mean("attempts"), r.ci95("attempts")),
            (Some(1.0), Some(0.0)),
            "{}",
            r.strategy
        );
        // Four hops of |N(10 ms, 2 ms)|: 40 ms on average; 20 runs put the mean
        // within 4 ms / sqrt(20) * 2.1 = 1.9 ms of it, 3 ms leaves room.
        let t = r.mean("last_success_s").unwrap() * 1000.0;
        assert!((t - 40.0).abs() < 3.0, "{}: {t} ms", r.strategy);
    }
}

#[test]
fn every_client_finishes_and_calls_are_at_least_n() {
    let s = aws(&[10, 40], 10);
    for r in rows(&s) {
        assert_eq!(
            r.incomplete_runs,
            0,
            "{} at {}",
            r.strategy,
            clients(&s, &r)
        );
        // Each of the N clients writes successfully once; losers write again.
        assert!(
            r.mean("attempts").unwrap() >= clients(&s, &r),
            "{} at {}",
            r.strategy,
            clients(&s, &r)
        );
    }
}

#[test]
fn the_published_ranking_of_work_holds_at_100_clients() {
    // 30 runs: at N = 100 the 95% intervals are under 3% of each mean, and the
    // gaps below are 20% and more, so the ranking cannot flip by chance.
    let s = aws(&[100], 30);
    let r = rows(&s);
    let calls = |name| row(&s, &r, 100, name).mean("attempts").unwrap();
    let (none, expo, full, equal, decorr) = (
        calls("none"),
        calls("exponential"),
        calls("full-jitter"),
        calls("equal-jitter"),
        calls("decorrelated-jitter"),
    );
    assert!(
        full < 0.5 * expo,
        "full jitter cuts calls by more than half: {full} vs {expo}"
    );
    assert!(
        (full - equal).abs() < 0.1 * full,
        "full and equal jitter do about the same work: {full} vs {equal}"
    );
    assert!(
        full.max(equal) < decorr,
        "decorrelated does more work than full and equal: {decorr}"
    );
    assert!(
        decorr < expo && expo < none,
        "exponential {expo}, none {none}"
    );
    let time = |name| row(&s, &r, 100, name).mean("last_success_s").unwrap();
    assert!(
        time("exponential") > 5.0 * time("full-jitter"),
        "plain exponential is by far the slowest"
    );
    assert!(
        time("equal-jitter") > time("full-jitter"),
        "equal jitter takes longer than full jitter"
    );
    assert!(
        time("none") < time("full-jitter"),
        "with no capacity limit, retrying at once is fastest"
    );
}

#[test]
fn sweeps_are_deterministic_and_independent_of_thread_count() {
    let s = aws(&[20, 30], 4);
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let a = one.install(|| sweep::run(&s)).unwrap();
    let b = sweep::run(&s).unwrap();
    let key = |r: &sweep::SweepReport| format!("{:?}", r.rows);
    assert_eq!(key(&a), key(&b));
    assert_eq!(a.events, b.events);
}
