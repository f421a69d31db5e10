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

/// The blog's own simulator (aws-samples/aws-arch-backoff-simulator), run
/// 1 000 times per strategy and client count by `conformance/aws_blog.py`
/// (2026-12-06, Python 3.11, seed 20151): clients, strategy here, its name
/// there, and the mean and standard deviation of its write calls and of
/// the time its last client got its successful answer (ms).
const BLOG_SIMULATOR: [(u64, &str, f64, f64, f64, f64); 10] = [
    (10, "exponential", 50.67, 4.08, 3395.3, 1289.8),
    (10, "decorrelated-jitter", 37.67, 2.33, 439.9, 88.0),
    (10, "equal-jitter", 42.61, 2.47, 737.3, 193.5),
    (10, "full-jitter", 39.06, 2.26, 464.1, 104.6),
    (10, "none", 50.88, 4.00, 379.5, 34.1),
    (100, "exponential", 1858.39, 57.73, 63517.7, 3742.1),
    (100, "decorrelated-jitter", 1002.61, 28.39, 4554.3, 694.7),
    (100, "equal-jitter", 812.18, 7.48, 6610.1, 638.8),
    (100, "full-jitter", 795.85, 7.23, 4909.8, 549.2),
    (100, "none", 2420.88, 31.96, 2025.8, 45.1),
];

/// Every strategy's mean work and time at N = 10 and 100 agree with the
/// blog's own simulator's: the two models draw differently (ChaCha8 here,
/// Python's Mersenne Twister there), so they agree in distribution, and the
/// gap between two means of 30 and 1 000 runs must be within four standard
/// errors of the difference (a chance of 1 in 16 000 each to fail if the
/// models are the same). Four standard errors are 2.3% of the mean for
/// plain exponential's work at N = 100 and 0.7% for full jitter's; a
/// convention off by one (counting the first retry as n = 0, not 1) moves
/// plain exponential's work by far more.
#[test]
fn work_and_time_agree_with_the_blogs_own_simulator() {
    let s = aws(&[10, 100], 30);
    let r = rows(&s);
    for &(n, strategy, calls, calls_sd, time_ms, time_sd) in &BLOG_SIMULATOR {
        let here = row(&s, &r, n, strategy);
        for (name, scale, theirs, sd) in [
            ("attempts", 1.0, calls, calls_sd),
            ("last_success_s", 1000.0, time_ms, time_sd),
        ] {
            let ours = here.mean(name).unwrap() * scale;
            // ci95 is 2.045 standard errors of our mean at 30 runs.
            let se_ours = here.ci95(name).unwrap() * scale / 2.045;
            let se = (se_ours.powi(2) + sd * sd / 1000.0).sqrt();
            assert!(
                (ours - theirs).abs() < 4.0 * se,
                "{strategy} at N = {n}, {name}: {ours:.1} here, {theirs} in the blog's simulator (4 se = {:.1})",
                4.0 * se
            );
        }
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
