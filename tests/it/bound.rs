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

/// A world of `clients` clients that each send one request at t = 0 into a
/// blackhole from 10 ms (when it arrives) to `end` (attempts sent 10 ms
/// before it arrive after it), then an ideal server; attempts time out at 1 s,
/// the article's 5 retries at 200 ms doubling (no jitter, and full jitter);
/// counts in 10 ms buckets.
fn lockstep_world(clients: u32, end: &str) -> String {
    format!(
        r#"
name = "wave"
seed = 11
duration = "20s"
[clients]
model = "one-shot"
count = {clients}
[network]
latency = {{ dist = "constant", value = "10ms" }}
[server]
workers = 100000
queue = 100000
service = {{ dist = "constant", value = "1us" }}
[[outage]]
kind = "blackhole"
start = "10ms"
end = "{end}"
[metrics]
baseline = "10ms"
bucket = "10ms"
[retry]
max_retries = 5
base = "200ms"
cap = "10s"
timeout = "1s"
[[strategy]]
name = "exponential"
backoff = "exponential"
[[strategy]]
name = "full-jitter"
backoff = "full-jitter"
"#
    )
}

/// (t_s, column) of timeseries.csv for `strategy`.
fn series(out: &Path, strategy: &str, column: &str) -> Vec<(f64, f64)> {
    let rows = csv(&out.join("timeseries.csv"));
    let col = |name: &str| rows[0].iter().position(|c| c == name).unwrap();
    let (t, c) = (col("t_s"), col(column));
    rows[1..]
        .iter()
        .filter(|r| r[0] == strategy)
        .map(|r| (r[t].parse().unwrap(), r[c].parse().unwrap()))
        .collect()
}

/// The wave after a blackhole that all clients' first attempts fall into at
/// t = 0: they fail together at their 1 s timeout, and the server is back 2 s
/// later. `sim bound` says exponential sends all of them at one instant 3.4 s
/// after they failed, and full jitter at most N / 0.8 s a second (only retry 3,
/// uniform over 800 ms, can be the first after the outage; on its plateau the
/// density is exactly that). 100 000 clients put 1 250 in a 10 ms bucket at
/// the plateau, with a noise of 3% a bucket.
#[test]
fn the_retry_wave_after_an_outage_is_what_the_bound_says() {
    let dir = tempfile::tempdir().unwrap();
    let n = 100_000;
    let (_, out) = both(dir.path(), "wave", &lockstep_world(n, "3.01s"));
    // The clients fail at 1 s: the outage lasts 2 s after that.
    let printed = stdout(
        &sim()
            .arg("bound")
            .arg(dir.path().join("wave.toml"))
            .args(["--outage", "2s"])
            .assert()
            .success(),
    );
    let what = "retry wave after a 2 s outage that fails 100000 at once";
    assert!(
        printed.contains(&format!("{what}: all 100000 at one instant, 3.4 s after")),
        "{printed}"
    );
    let jitter_bound = bound_of(&printed, "full-jitter", what);
    assert_eq!(jitter_bound, 125_000.0, "{printed}");
    let bucket = 0.01;
    // Retries sent once the server is back (t >= 3 s): one per client.
    let after = |s: &str| -> Vec<(f64, f64)> {
        series(&out, s, "retries_per_s")
            .into_iter()
            .filter(|(t, _)| *t >= 3.0 - 1e-9)
            .collect()
    };
    for s in ["exponential", "full-jitter"] {
        let total: f64 = after(s).iter().map(|(_, r)| r * bucket).sum();
        assert!(
            (total - f64::from(n)).abs() < 0.5,
            "{s}: {total} retries after the outage"
        );
    }
    // Exponential: every one of them in the bucket of t = 1 s + 3.4 s.
    let lock = after("exponential");
    let (t, peak) = lock
        .iter()
        .copied()
        .fold((0.0, 0.0), |m, x| if x.1 > m.1 { x } else { m });
    assert!(
        (t - 4.4).abs() < 1e-6 && (peak * bucket - f64::from(n)).abs() < 0.5,
        "{t} {peak}"
    );
    // Full jitter: the sum d1 + d2 + d3 of U(0, 0.2), U(0, 0.4) and
    // U(0, 0.8) s has density exactly 1 / 0.8 s from 0.6 to 0.8 s, sent at
    // t = 3 s + the sum: there the bound is reached, 25 000 retries in 20
    // buckets (a noise of 0.6%); no bucket anywhere is more than 12% above it
    // (3.5 times the noise of one bucket).
    let jitter = after("full-jitter");
    let plateau: Vec<f64> = jitter
        .iter()
        .filter(|(t, _)| (3.6 - 1e-9..3.8 - 1e-9).contains(t))
        .map(|(_, r)| *r)
        .collect();
    assert_eq!(plateau.len(), 20);
    let mean = plateau.iter().sum::<f64>() / 20.0;
    assert!(
        (mean / jitter_bound - 1.0).abs() < 0.02,
        "plateau {mean} a second against {jitter_bound}"
    );
    let peak = jitter.iter().map(|(_, r)| *r).fold(0.0, f64::max);
    assert!(
        peak <= 1.12 * jitter_bound,
        "peak {peak} a second against the bound {jitter_bound}"
    );
}

/// Under a blackhole that never ends every request gives up after its last
/// timeout: at exactly (1 + 5) x 1 s + 6.2 s without jitter, the bound; with
/// full jitter never later, and, over 20 000 requests, the latest within
/// 0.5 s of it (a sum of 5 uniforms within 0.5 s of its top has probability
/// 0.5^5 / (5! x 0.2 x 0.4 x 0.8 x 1.6 x 3.2) = 8e-4).
#[test]
fn requests_give_up_by_the_bound_on_their_time() {
    let dir = tempfile::tempdir().unwrap();
    let (printed, out) = both(dir.path(), "giveup", &lockstep_world(20_000, "20s"));
    let what = "time until a request gives up, total failure";
    for s in ["exponential", "full-jitter"] {
        let line = printed
            .split(&format!("strategy \"{s}\""))
            .nth(1)
            .unwrap()
            .lines()
            .find(|l| l.contains(what))
            .unwrap()
            .to_owned();
        assert!(line.ends_with("to 12.2 s"), "{line}");
        assert_eq!(summary(&out, s, "failed"), 20_000.0);
        let last = series(&out, s, "timeouts_per_s")
            .into_iter()
            .filter(|(_, r)| *r > 0.0)
            .map(|(t, _)| t)
            .fold(0.0, f64::max);
        // The bucket that holds the last timeout starts at or before it.
        assert!(
            last <= 12.2 + 1e-9,
            "{s}: last timeout in the bucket at {last}"
        );
        let low = if s == "exponential" {
            12.2 - 1e-6
        } else {
            11.7
        };
        assert!(
            last >= low - 0.01,
            "{s}: last timeout in the bucket at {last}"
        );
    }
}

/// The wave's options are checked like a scenario's values: exit 2, the
/// option named and what would be valid.
#[test]
fn bad_wave_options_name_the_option() {
    for (args, says) in [
        (
            ["--clients", "0"],
            "--clients 0: give a number of clients from 1",
        ),
        (["--clients", "NaN"], "--clients NaN"),
        (["--outage", "0s"], "--outage \"0s\": give a length above 0"),
        (["--outage", "2"], "with its unit"),
    ] {
        let a = sim()
            .args(["bound", "scenarios/outage.toml"])
            .args(args)
            .assert()
            .code(2);
        assert!(
            crate::common::stderr(&a).contains(says),
            "{args:?}: {}",
            crate::common::stderr(&a)
        );
    }
}
