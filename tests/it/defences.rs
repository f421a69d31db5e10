//! The server's own defences through the whole simulator, each case worked
//! by hand: a concurrency limit answers 503 at once and `defences.csv`
//! counts it with the limit; CoDel drops on RFC 8289's schedule; a fleet's
//! limits add up; the same bytes on one thread and two; bad settings are
//! refused at their key. (Each limiter's update rule and CoDel's control law
//! are checked alone in the unit tests beside them.)

use crate::chain::{csv, run};
use crate::common::invalid;
use std::path::Path;

/// `users` one-shot users (all sending at t = 0), 1 ms each way, one
/// worker taking a constant `service`, a queue of 1000, `server` the
/// server's further keys; no retries; 1 ms buckets.
fn world(users: u32, service: &str, server: &str) -> String {
    format!(
        r#"
name = "defences"
seed = 3
duration = "3s"
[clients]
model = "one-shot"
count = {users}
[network]
latency = {{ dist = "constant", value = "1ms" }}
[server]
workers = 1
queue = 1000
service = {{ dist = "constant", value = "{service}" }}
{server}
[metrics]
baseline = "1s"
bucket = "1ms"
[[strategy]]
name = "s"
max_retries = 0
timeout = "10s"
"#
    )
}

/// `defences.csv`'s `column` per bucket.
fn column(out: &Path, column: &str) -> Vec<String> {
    let rows = csv(&out.join("defences.csv"));
    let c = rows[0].iter().position(|h| h == column).unwrap();
    rows[1..].iter().map(|r| r[c].clone()).collect()
}

/// The buckets (ms) where `column` counted something, each as often as it
/// counted (a rate per second over 1 ms buckets: a thousand per event).
fn events_ms(out: &Path, name: &str) -> Vec<usize> {
    let mut at = Vec::new();
    for (ms, v) in column(out, name).iter().enumerate() {
        let n = (v.parse::<f64>().unwrap() / 1000.0).round() as usize;
        at.extend(std::iter::repeat_n(ms, n));
    }
    at
}

fn summary(out: &Path, name: &str) -> String {
    let rows = csv(&out.join("summary.csv"));
    let c = rows[0].iter().position(|h| h == name).unwrap();
    rows[1][c].clone()
}

/// Ten users reach a server with AIMD's limit at 2 at 1 ms: two go in
/// (with 1 and 2 in flight, each counting itself), eight are answered 503
/// at once (back at 2 ms). The first ends at 101 ms (1 x 2 >= 2): the
/// limit becomes 3; the second at 201 ms (2 x 2 >= 3): 4.
#[test]
fn a_limit_answers_503_at_once_and_moves_with_its_samples() {
    let dir = tempfile::tempdir().unwrap();
    let text = world(10, "100ms", r#"limiter = { kind = "aimd", initial = 2 }"#);
    let out = run(dir.path(), "aimd", &text, "1");
    assert_eq!(events_ms(&out, "limited_per_s"), [1; 8]);
    let limit = column(&out, "limit");
    assert_eq!(limit[0], "2");
    assert_eq!(limit[100], "2");
    assert_eq!(limit[101], "3");
    assert_eq!(limit[200], "3");
    assert_eq!(limit[201], "4");
    assert_eq!(limit[2999], "4");
    assert_eq!(summary(&out, "succeeded"), "2");
    assert_eq!(summary(&out, "failed"), "8");
    assert_eq!(summary(&out, "error_responses"), "8");
    // The users' failures arrive 1 ms after the 503s are sent.
    let rows = csv(&out.join("timeseries.csv"));
    let e = rows[0].iter().position(|h| h == "errors_per_s").unwrap();
    assert_eq!(rows[3][e], "8000.0", "eight errors in the bucket at 2 ms");
}

/// A hundred users queue at one 10 ms worker with CoDel (5 ms, 100 ms).
/// Every request arrived at 1 ms, so the worker's takes at 11, 21, ... ms
/// see sojourns of 10, 20, ... ms: above target from the first, so the
/// first drop is at the first take an interval later (111 ms), then at
/// the first take at or after 111 + 100 / sqrt(n) for n = 1, 2, ...:
/// 211, 281.7 -> 291, 339.4 -> 341, 389.4 -> 391, 434.2 -> 441,
/// 475.0 -> 481, 512.8 -> 521, 548.1 -> 551.
#[test]
fn codel_drops_on_rfc_8289s_schedule_in_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), "codel", &world(100, "10ms", "codel = {}"), "1");
    let drops = events_ms(&out, "dropped_per_s");
    assert_eq!(drops[..9], [111, 211, 291, 341, 391, 441, 481, 521, 551]);
    // Every request ends: served, or dropped and answered 503.
    let ok: u64 = summary(&out, "succeeded").parse().unwrap();
    let failed: u64 = summary(&out, "failed").parse().unwrap();
    assert_eq!((ok + failed, failed), (100, drops.len() as u64));
    assert_eq!(column(&out, "limit")[0], "", "no limiter, no limit");
}

/// A fleet's limit is the sum of its replicas': two replicas with AIMD at
/// 2 admit four; outputs are the same bytes on one thread and two.
#[test]
fn a_fleets_limits_add_up_and_runs_are_deterministic() {
    let dir = tempfile::tempdir().unwrap();
    let text = world(
        10,
        "100ms",
        "replicas = 2\nlimiter = { kind = \"aimd\", initial = 2 }",
    );
    let one = run(dir.path(), "one", &text, "1");
    assert_eq!(column(&one, "limit")[0], "4");
    assert_eq!(events_ms(&one, "limited_per_s").len(), 6);
    let busy = world(
        200,
        "5ms",
        "replicas = 3\ndiscipline = \"adaptive-lifo\"\ncodel = {}\n\
         limiter = { kind = \"gradient\", request_count = 5 }",
    );
    let a = run(dir.path(), "a", &busy, "1");
    let b = run(dir.path(), "b", &busy, "2");
    for f in [
        "summary.csv",
        "timeseries.csv",
        "defences.csv",
        "replicas.csv",
    ] {
        assert_eq!(
            std::fs::read(a.join(f)).unwrap(),
            std::fs::read(b.join(f)).unwrap(),
            "{f}"
        );
    }
    // Without a limiter or CoDel there is no defences.csv.
    let plain = run(dir.path(), "plain", &world(3, "1ms", ""), "1");
    assert!(!plain.join("defences.csv").exists());
}

#[test]
fn bad_defences_are_refused_at_their_key() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            r#"limiter = { kind = "aimd", percentile = 50 }"#,
            "server.limiter.percentile",
            "`percentile` is a key of kind = \"gradient\", not of kind = \"aimd\"",
        ),
        (
            r#"limiter = { kind = "gradient2", initial = 5 }"#,
            "server.limiter.initial",
            "initial (5) must be from 20 to 200",
        ),
        (
            r#"limiter = { kind = "aimd", backoff_ratio = 0.3 }"#,
            "server.limiter.backoff_ratio",
            "[0.5, 1)",
        ),
        (
            r#"limiter = { kind = "gradient", percentile = 150 }"#,
            "server.limiter.percentile",
            "percentage from 0 to 100",
        ),
        (
            r#"limiter = { kind = "tcp" }"#,
            "server.limiter.kind",
            "gradient",
        ),
        (
            r#"codel = { target = "200ms" }"#,
            "server.codel.target",
            "must be shorter than interval",
        ),
        (
            r#"lifo_after = "50ms""#,
            "server.lifo_after",
            "adaptive-lifo",
        ),
    ];
    for (i, (keys, key, says)) in cases.iter().enumerate() {
        let err = invalid(dir.path(), i, &world(3, "1ms", keys));
        assert!(err.contains(key), "{keys}: {err}");
        assert!(err.contains(says), "{keys}: {err}");
    }
    // Not in a call chain yet.
    let chain = world(3, "1ms", "codel = {}\ncalls = [\"db\"]")
        + "[[service]]\nname = \"db\"\nworkers = 1\nqueue = 1\nservice = { dist = \"constant\", value = \"1ms\" }\n";
    let err = invalid(dir.path(), 99, &chain);
    assert!(
        err.contains("server.codel") && err.contains("call chain"),
        "{err}"
    );
}
