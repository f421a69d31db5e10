//! `sim bound` against a simulation of the same worst case: every bound it
//! prints for a strategy is checked against `sim run` of a world where every
//! attempt fails (every request is a bad one, answered 400, and the policy
//! retries 400), through the real binary.

use std::fs;
use std::path::Path;

use crate::chain::csv;
use crate::common::{sim, stdout};

/// A world where every attempt fails at once: 200 requests a second for
/// 60 s, each a bad request that the strategies retry; `strategies` appended.
fn failing(strategies: &str) -> String {
    format!(
        r#"
name = "failing"
seed = 3
duration = "60s"
[clients]
model = "open"
rate = 200.0
bad_fraction = 1.0
[network]
latency = {{ dist = "constant", value = "1ms" }}
[server]
workers = 1000
queue = 1000
service = {{ dist = "constant", value = "1ms" }}
[metrics]
baseline = "5s"
bucket = "1s"
[retry]
backoff = "constant"
base = "10ms"
retry_on = ["400"]
{strategies}
"#
    )
}

/// `sim bound`'s value of `what` for `strategy`: the number before the
/// unit on the line "what: ...".
fn bound_of(text: &str, strategy: &str, what: &str) -> f64 {
    let block = text
        .split(&format!("strategy \"{strategy}\""))
        .nth(1)
        .unwrap_or_else(|| panic!("no strategy {strategy} in {text}"));
    let line = block
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{what}:")))
        .unwrap_or_else(|| panic!("no {what} for {strategy} in {block}"));
    let after = line.split_once(": ").unwrap().1;
    let number: String = after
        .split_whitespace()
        .find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .unwrap()
        .chars()
        .filter(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    number.parse().unwrap()
}

/// Runs `sim bound` and `sim run` on `text`; returns the bound's output and
/// the run's folder.
fn both(dir: &Path, name: &str, text: &str) -> (String, std::path::PathBuf) {
    let file = dir.join(format!("{name}.toml"));
    fs::write(&file, text).unwrap();
    let out = sim().arg("bound").arg(&file).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8(out.stdout).unwrap();
    let folder = dir.join(name);
    sim()
        .arg("run")
        .arg(&file)
        .args(["-q", "--no-plots", "--out"])
        .arg(&folder)
        .assert()
        .success();
    (printed, folder)
}

/// `column` of summary.csv for `strategy`.
fn summary(out: &Path, strategy: &str, column: &str) -> f64 {
    let rows = csv(&out.join("summary.csv"));
    let col = rows[0].iter().position(|c| c == column).unwrap();
    rows[1..].iter().find(|r| r[0] == strategy).unwrap()[col]
        .parse()
        .unwrap()
}

const ATTEMPTS: &str = "attempts per request, total failure, nothing else capping";

/// With nothing capping, every request makes its policy's attempts: those
/// that ended made exactly 4, and the few still under way at the end fewer.
/// A token bucket of 10 allows exactly 4 retries in all, and the AWS quota
/// of 500 at 5 a retry exactly 100: no success ever refills them.
#[test]
fn policy_token_bucket_and_quota_bounds_are_what_total_failure_does() {
    let dir = tempfile::TempDir::new().unwrap();
    let (printed, out) = both(
        dir.path(),
        "limits",
        &failing(
            "[[strategy]]\nname = \"plain\"\nmax_retries = 3\n\
             [[strategy]]\nname = \"bucket\"\nmax_retries = 10\nbudget = { kind = \"token-bucket\", max_tokens = 10, token_ratio = 0.1 }\n\
             [[strategy]]\nname = \"quota\"\nmax_retries = 10\nbudget = { kind = \"aws-quota\" }",
        ),
    );
    let plain = bound_of(&printed, "plain", ATTEMPTS);
    assert_eq!(plain, 4.0);
    let (requests, attempts, in_flight) = (
        summary(&out, "plain", "logical_requests"),
        summary(&out, "plain", "attempts"),
        summary(&out, "plain", "in_flight_at_end"),
    );
    assert!(
        attempts <= plain * requests,
        "{attempts} attempts for {requests}"
    );
    assert!(
        attempts >= plain * (requests - in_flight),
        "{attempts} attempts for {requests}"
    );
    let bucket = bound_of(&printed, "bucket", "retries in all, total failure");
    assert_eq!(bucket, 4.0);
    assert_eq!(summary(&out, "bucket", "retries"), bucket);
    let quota = bound_of(&printed, "quota", "retries in all, total failure");
    assert_eq!(quota, 100.0);
    assert_eq!(summary(&out, "quota", "retries"), quota);
}

/// The SRE book's 10% ratio and Finagle's 20% plus 10 a second cap the
/// attempts per request at 1.1 and 1 + 0.2 + 10/200 = 1.25. The run fills
/// them (the requests of its first window have a smaller allowance, and the
/// reserve is spent at once): within 2% below, never above.
#[test]
fn window_budgets_cap_attempts_per_request_at_their_bound() {
    let dir = tempfile::TempDir::new().unwrap();
    let (printed, out) = both(
        dir.path(),
        "windows",
        &failing(
            "[[strategy]]\nname = \"ratio\"\nmax_retries = 3\nbudget = { kind = \"ratio\", ratio = 0.1, window = \"10s\" }\n\
             [[strategy]]\nname = \"finagle\"\nmax_retries = 3\nbudget = { kind = \"finagle\", ttl = \"10s\", min_per_s = 10, percent = 0.2 }",
        ),
    );
    for (s, expected) in [("ratio", 1.1), ("finagle", 1.25)] {
        let b = bound_of(&printed, s, "attempts per request, total failure, long run");
        assert!((b - expected).abs() < 1e-9, "{s}: {b}");
        let a = summary(&out, s, "attempts") / summary(&out, s, "logical_requests");
        // Finagle's reserve per request uses the nominal rate; the run's
        // Poisson arrivals differ from it by about 1%, which moves the
        // bound by 0.01%: 0.1% above is allowed.
        assert!(
            a <= b + 1e-3 && a > 0.98 * b,
            "{s}: {a} against the bound {b}"
        );
    }
}

/// A breaker open for 1 s that sends one probe each time lets about one
/// attempt a second through while they all fail; the adaptive throttle
/// with a 5 s window, about one every 5 s. The throttle counts any answer
/// of the backend as accepted, a 400 too: its world fails with 503s, from
/// 5 s to the end of a 300 s run. Both are counted from the time series of
/// attempts sent, from 10 s on.
#[test]
fn breaker_and_throttle_let_through_what_their_bounds_say() {
    let dir = tempfile::TempDir::new().unwrap();
    let text = failing(
        "[[strategy]]\nname = \"breaker\"\nmax_retries = 3\nbreaker = { failure_rate = 0.5, window = 20, min_calls = 10, open_for = \"1s\", jitter = 0, probes = 1 }\n\
         [[strategy]]\nname = \"throttle\"\nmax_retries = 3\nthrottle = { k = 2, window = \"5s\" }",
    )
    .replace("duration = \"60s\"", "duration = \"300s\"")
    .replace("bad_fraction = 1.0", "bad_fraction = 0.0")
    .replace("retry_on = [\"400\"]", "retry_on = [\"503\"]")
    .replace(
        "[metrics]",
        "[[outage]]\nkind = \"503\"\nstart = \"5s\"\nend = \"300s\"\n[metrics]",
    );
    let (printed, out) = both(dir.path(), "gates", &text);
    let per_s = bound_of(
        &printed,
        "breaker",
        "attempts a second while open, total failure",
    );
    assert_eq!(per_s, 1.0);
    let per_window = bound_of(
        &printed,
        "throttle",
        "attempts sent per window, total failure, long run",
    );
    assert!((per_window - 1000.0 / 1001.0).abs() < 1e-3, "{per_window}");
    let rows = csv(&out.join("timeseries.csv"));
    let h = &rows[0];
    let (t, a) = (
        h.iter().position(|c| c == "t_s").unwrap(),
        h.iter().position(|c| c == "attempts_per_s").unwrap(),
    );
    let sent = |s: &str| -> f64 {
        rows[1..]
            .iter()
            .filter(|r| r[0] == s && r[t].parse::<f64>().unwrap() >= 10.0)
            .map(|r| r[a].parse::<f64>().unwrap())
            .sum::<f64>()
    };
    // The breaker: a probe each second, its answer 2 ms later: 290 in
    // 290 s, give or take the one in progress at each end.
    let b = sent("breaker");
    assert!((b - 290.0 * per_s).abs() <= 2.0, "breaker: {b} in 290 s");
    // The throttle: 58 windows of about one each. The count is a sum of
    // Bernoulli draws of mean 58 (standard deviation under 8): within 4
    // of those.
    let th = sent("throttle");
    assert!(
        (th - 58.0 * per_window).abs() <= 30.0,
        "throttle: {th} in 290 s"
    );
}

/// In a call chain the tiers' attempts multiply: the users try 3 times,
/// the frontend's calls to the backend twice, the backend's to the
/// database 4 times (retried, or hedged with 4 copies): 3, 6 and 24
/// attempts per user request when the database fails everything. The run's database fails every attempt from
/// 1 s on (its first second is 1/61 of the requests): its attempts per
/// request are within 2% below 24.
#[test]
fn a_chains_bound_is_the_product_the_run_reaches() {
    let dir = tempfile::TempDir::new().unwrap();
    let text = r#"
name = "chain-bound"
seed = 3
duration = "61s"
[clients]
model = "open"
rate = 100.0
[network]
latency = { dist = "constant", value = "1ms" }
[server]
name = "front"
workers = 1000
queue = 1000
service = { dist = "constant", value = "1ms" }
calls = ["back"]
[[service]]
name = "back"
workers = 1000
queue = 1000
service = { dist = "constant", value = "1ms" }
calls = ["db"]
[[service]]
name = "db"
workers = 1000
queue = 1000
service = { dist = "constant", value = "1ms" }
[[outage]]
kind = "503"
service = "db"
start = "1s"
end = "61s"
[metrics]
baseline = "1s"
bucket = "1s"
[retry]
backoff = "none"
retry_on = ["503"]
[[strategy]]
name = "layers"
max_retries = 2
[strategy.tiers.back]
max_retries = 1
[strategy.tiers.db]
max_retries = 3
[[strategy]]
name = "hedged-db"
max_retries = 2
[strategy.tiers.back]
max_retries = 1
[strategy.tiers.db]
max_retries = 0
hedging = { max_attempts = 4, delay = "1s" }
"#;
    let (printed, out) = both(dir.path(), "chain", text);
    assert_eq!(bound_of(&printed, "layers", "front"), 3.0);
    assert_eq!(bound_of(&printed, "layers", "back"), 6.0);
    assert_eq!(bound_of(&printed, "layers", "db"), 24.0);
    assert!(printed.contains("4 x 2 x 3"), "{printed}");
    let rows = csv(&out.join("tiers.csv"));
    let h = &rows[0];
    let col = |n: &str| h.iter().position(|c| c == n).unwrap();
    // Hedged copies multiply as retries do: a 503 is non-fatal, so each
    // sends the next copy at once, and every call sends its 4.
    assert_eq!(bound_of(&printed, "hedged-db", "db"), 24.0);
    for strategy in ["layers", "hedged-db"] {
        let users = summary(&out, strategy, "logical_requests");
        let db: f64 = rows[1..]
            .iter()
            .find(|r| r[col("strategy")] == strategy && r[col("tier")] == "2")
            .unwrap()[col("attempts")]
        .parse()
        .unwrap();
        let per_request = db / users;
        assert!(
            per_request <= 24.0 && per_request > 24.0 * 0.98 * 60.0 / 61.0,
            "{strategy}: {per_request}"
        );
    }
}

/// Envoy's retry budget, counted as Envoy counts it (envoyproxy/envoy#30205:
/// retries waiting out their backoff slip past it). Every attempt fails at
/// once, requests come at 200 a second, and each retry waits 1 s. Counting
/// a retry from its decision, at most 3 (the floor; 20% of the requests in
/// progress is less, since a request in progress is mostly a retry in
/// backoff) are in progress, each for about 1 s: about 3 retries a second,
/// 1 + 3/200 = 1.015 attempts per request. Counting only retries sent, as
/// Envoy does, those in progress are the ones whose 2 ms attempt is out,
/// about 1.2 at a time: the floor of 3 never binds, and every request makes
/// its 4 attempts.
#[test]
fn envoys_count_lets_retries_in_backoff_slip_past_its_budget() {
    let dir = tempfile::TempDir::new().unwrap();
    let text = failing(
        "[[strategy]]\nname = \"from-decision\"\nmax_retries = 3\nbudget = { kind = \"concurrency\", percent = 0.2, min_concurrency = 3 }\n\
         [[strategy]]\nname = \"envoy-count\"\nmax_retries = 3\nbudget = { kind = \"concurrency\", percent = 0.2, min_concurrency = 3, count_backoff = false }",
    )
    .replace("base = \"10ms\"", "base = \"1s\"");
    let (printed, out) = both(dir.path(), "envoy", &text);
    assert!(printed.contains("counted once sent"), "{printed}");
    let per_request = |s: &str| summary(&out, s, "attempts") / summary(&out, s, "logical_requests");
    let strict = per_request("from-decision");
    assert!(strict < 1.05, "counted from the decision: {strict}");
    // Every request that ended made its 4 attempts (those still under way
    // at the end, the last 3 s of requests, fewer).
    let (attempts, requests, in_flight) = (
        summary(&out, "envoy-count", "attempts"),
        summary(&out, "envoy-count", "logical_requests"),
        summary(&out, "envoy-count", "in_flight_at_end"),
    );
    assert!(
        attempts >= 4.0 * (requests - in_flight),
        "counted once sent: {} attempts per request",
        per_request("envoy-count")
    );
}

/// Counts past a float's exact integers are printed to three significant
/// digits, not as integers with wrong low digits, and a product past a float's
/// range as "over 1.8e308", never "inf"; unlimited retries say so (they read
/// "0 attempts = 1 + 4294967295", a wrap-around).
#[test]
fn huge_and_unlimited_counts_are_printed_as_such() {
    let a = sim()
        .args(["bound", "tests/fixtures/repro/chain40.toml"])
        .assert()
        .success();
    let out = stdout(&a);
    assert!(out.contains("t36: 1.35e18 attempts"), "{out}");
    assert!(!out.contains("1350851717672992000"), "{out}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("unlimited.toml");
    let text = std::fs::read_to_string("scenarios/outage.toml")
        .unwrap()
        .replace("max_retries = 5", "max_retries = \"unlimited\"");
    std::fs::write(&file, text).unwrap();
    let a = sim().arg("bound").arg(&file).assert().success();
    let out = stdout(&a);
    assert!(out.contains("unlimited attempts"), "{out}");
    assert!(!out.contains("4294967295"), "{out}");
    assert!(!out.contains("inf attempts"), "{out}");
}
