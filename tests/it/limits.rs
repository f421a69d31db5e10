//! A proxy's connection-pool limits (a strategy's `limits`, Envoy's
//! circuit-breaker thresholds), each case worked by hand: attempts wait for
//! a connection, overflow at `max_pending_requests` or `max_requests`, are
//! never retried after an overflow, start their per-try timeout when they
//! leave the queue, and fail at their request's deadline while waiting;
//! limits are per proxy; bad limits are refused at their key. And
//! `slow.csv`, whose threshold this world makes easy to check by hand.

use crate::chain::{csv, run};
use crate::common::invalid;
use std::collections::HashMap;
use std::path::Path;

/// `clients` one-shot users (all sending at t = 0) behind `proxies`
/// proxies, 1 ms each way, an ideal server (no queue: 1000 workers) taking
/// `service` per attempt; attempts time out at 1 s and 503s and timeouts
/// are retried up to 3 times; `strategy` is the one strategy's own keys.
fn world(clients: u32, proxies: u32, service: &str, strategy: &str) -> String {
    format!(
        r#"
name = "pool"
seed = 5
duration = "10s"
[clients]
model = "one-shot"
count = {clients}
proxies = {proxies}
[network]
latency = {{ dist = "constant", value = "1ms" }}
[server]
workers = 1000
queue = 1000
service = {{ dist = "constant", value = "{service}" }}
[metrics]
baseline = "1s"
bucket = "1ms"
[retry]
backoff = "constant"
base = "10ms"
max_retries = 3
timeout = "1s"
retry_on = ["timeout", "503"]
[[strategy]]
name = "s"
{strategy}
"#
    )
}

/// The summary's row, by column name.
fn summary(out: &Path) -> HashMap<String, String> {
    let rows = csv(&out.join("summary.csv"));
    rows[0]
        .iter()
        .cloned()
        .zip(rows[1].iter().cloned())
        .collect()
}

/// `column` summed over the proxies' rows.
fn proxies(out: &Path, column: &str) -> u64 {
    let rows = csv(&out.join("proxies.csv"));
    let c = rows[0].iter().position(|h| h == column).unwrap();
    rows[1..].iter().map(|r| r[c].parse::<u64>().unwrap()).sum()
}

/// When the users' requests ended well, in ms: the 1 ms buckets of the
/// time series in which requests succeeded, each as often as it counts.
fn successes_ms(out: &Path) -> Vec<u64> {
    let rows = csv(&out.join("timeseries.csv"));
    let t = rows[0].iter().position(|h| h == "t_s").unwrap();
    let ok = rows[0].iter().position(|h| h == "goodput_per_s").unwrap();
    let mut at = Vec::new();
    for r in &rows[1..] {
        // A rate per second over 1 ms buckets: a thousand per request.
        let n = (r[ok].parse::<f64>().unwrap() / 1000.0).round() as usize;
        let ms = (r[t].parse::<f64>().unwrap() * 1000.0).round() as u64;
        at.extend(std::iter::repeat_n(ms, n));
    }
    at
}

/// Ten users at once through 2 connections and room for 3 to wait: 2 go,
/// 3 wait, 5 overflow and fail at once, not retried (an overflow is never
/// retried, 503 or not). Each answer (1 + 100 + 1 ms) frees a connection
/// for the next in line: successes at 102, 102, 204, 204 and 306 ms.
#[test]
fn attempts_wait_for_a_connection_then_overflow() {
    let dir = tempfile::TempDir::new().unwrap();
    let limits = "limits = { max_connections = 2, max_pending_requests = 3 }";
    let out = run(dir.path(), "h1", &world(10, 1, "100ms", limits), "1");
    let s = summary(&out);
    for (column, want) in [
        ("succeeded", "5"),
        ("failed", "5"),
        ("attempts", "5"),
        ("retries", "0"),
        ("rejected_locally", "5"),
    ] {
        assert_eq!(s[column], want, "{column}");
    }
    assert_eq!(proxies(&out, "overflow"), 5);
    assert_eq!(proxies(&out, "waited"), 3);
    assert_eq!(successes_ms(&out), [102, 102, 204, 204, 306]);
}

/// `[metrics] slow` counts the successes slower than it: of those five
/// (102, 102, 204, 204 and 306 ms), one is slower than 250 ms; of the ten
/// requests that ended, four were answered well within it.
#[test]
fn slow_csv_counts_the_successes_over_the_threshold() {
    let dir = tempfile::TempDir::new().unwrap();
    let limits = "limits = { max_connections = 2, max_pending_requests = 3 }";
    let text = world(10, 1, "100ms", limits)
        .replace("bucket = \"1ms\"", "bucket = \"1ms\"\nslow = \"250ms\"");
    let out = run(dir.path(), "slow", &text, "1");
    let rows = csv(&out.join("slow.csv"));
    assert_eq!(
        rows[0],
        [
            "strategy",
            "slow_s",
            "succeeded",
            "slower",
            "slower_share",
            "failed",
            "within_share"
        ]
    );
    assert_eq!(
        rows[1],
        ["s", "0.250", "5", "1", "0.200000", "5", "0.400000"]
    );
    // Without the key, no file.
    let plain = run(dir.path(), "plain", &world(2, 1, "1ms", ""), "1");
    assert!(!plain.join("slow.csv").exists());
}

/// HTTP/2 never waits: `max_requests` 4 lets 4 of ten go, the rest
/// overflow at once. The same limit under HTTP/1.1's 1024 connections
/// does the same (a free connection, refused by the request limit).
#[test]
fn the_request_limit_overflows_at_once() {
    let dir = tempfile::TempDir::new().unwrap();
    for (name, limits) in [
        ("h2", "limits = { max_requests = 4, http2 = true }"),
        ("h1", "limits = { max_requests = 4 }"),
    ] {
        let out = run(dir.path(), name, &world(10, 1, "100ms", limits), "1");
        assert_eq!(summary(&out)["succeeded"], "4", "{name}");
        assert_eq!(proxies(&out, "overflow"), 6, "{name}");
        assert_eq!(proxies(&out, "waited"), 0, "{name}");
    }
}

/// A per-try timeout starts when the attempt leaves the queue (Envoy sets
/// it in onPoolReady): through one connection, the second user's attempt
/// waits 602 ms, then takes 602 ms more, inside its 1 s timeout: both
/// succeed, at 602 and 1204 ms, nothing retried.
#[test]
fn the_per_try_timeout_starts_at_the_connection() {
    let dir = tempfile::TempDir::new().unwrap();
    let limits = "limits = { max_connections = 1 }";
    let out = run(dir.path(), "late", &world(2, 1, "600ms", limits), "1");
    assert_eq!(successes_ms(&out), [602, 1204]);
    assert_eq!(summary(&out)["retries"], "0");
    assert_eq!(proxies(&out, "waited"), 1);
}

/// The request's deadline runs from its start, waiting included: with a
/// 1 s deadline, no per-try timeout and 1.5 s of service, the first user's
/// attempt times out on the wire and the second's request fails while it
/// still waits (the connection its neighbour frees at that instant is no
/// use to it: it does not go); only one attempt left.
#[test]
fn a_deadline_passes_while_waiting() {
    let dir = tempfile::TempDir::new().unwrap();
    let strategy = "limits = { max_connections = 1 }\ntimeout = \"none\"\ndeadline = \"1s\"";
    let out = run(
        dir.path(),
        "deadline",
        &world(2, 1, "1500ms", strategy),
        "1",
    );
    let s = summary(&out);
    assert_eq!((s["failed"].as_str(), s["attempts"].as_str()), ("2", "1"));
    assert_eq!(s["failed_deadline"], "2");
    assert_eq!(proxies(&out, "waited"), 1);
}

/// Limits are each proxy's own: ten users behind two proxies of 2
/// connections and 1 waiting place each: 6 get through where one proxy
/// lets 3; the rows add up on 1 and 2 threads alike.
#[test]
fn limits_add_up_over_proxies() {
    let dir = tempfile::TempDir::new().unwrap();
    let limits = "limits = { max_connections = 2, max_pending_requests = 1 }";
    let one = run(dir.path(), "one", &world(10, 1, "100ms", limits), "1");
    let two = run(dir.path(), "two", &world(10, 2, "100ms", limits), "1");
    assert_eq!(summary(&one)["succeeded"], "3");
    assert_eq!(summary(&two)["succeeded"], "6");
    assert_eq!(proxies(&two, "overflow"), 4);
    let again = run(dir.path(), "two2", &world(10, 2, "100ms", limits), "2");
    for f in ["summary.csv", "proxies.csv", "timeseries.csv"] {
        assert_eq!(
            std::fs::read(two.join(f)).unwrap(),
            std::fs::read(again.join(f)).unwrap(),
            "{f}"
        );
    }
}

/// No waiting place: with every connection busy an attempt fails at once.
#[test]
fn no_waiting_place_fails_at_once() {
    let dir = tempfile::TempDir::new().unwrap();
    let limits = "limits = { max_connections = 2, max_pending_requests = 0 }";
    let out = run(dir.path(), "none", &world(10, 1, "100ms", limits), "1");
    assert_eq!(summary(&out)["succeeded"], "2");
    assert_eq!(proxies(&out, "overflow"), 8);
    assert_eq!(proxies(&out, "waited"), 0);
}

/// A limit of zero, limits beside hedging and limits on a chain's calls
/// are refused at their key.
#[test]
fn bad_limits_are_named_at_their_key() {
    let dir = tempfile::TempDir::new().unwrap();
    let zero = world(2, 1, "1ms", "limits = { max_requests = 0 }");
    let e = invalid(dir.path(), 0, &zero);
    assert!(
        e.contains("strategy[0].limits.max_requests") && e.contains("at least 1"),
        "{e}"
    );
    let hedged = world(
        2,
        1,
        "1ms",
        "limits = {}\nmax_retries = 0\nhedging = { max_attempts = 2, delay = \"5ms\" }",
    );
    let e = invalid(dir.path(), 1, &hedged);
    assert!(
        e.contains("strategy[0].limits") && e.contains("hedging"),
        "{e}"
    );
}
