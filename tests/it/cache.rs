//! The look-aside cache through the whole simulator: its steady state
//! against closed forms, Bronson et al.'s collapse after the cache is lost
//! and the recovery once the load is under the backend's capacity, the
//! example as the paper writes it, and bad settings refused at their key.

use crate::chain::{csv, run};
use crate::common::invalid;
use std::path::Path;

/// Open load at `rate`, constant 0.1 ms hops, a backend of `workers`
/// workers taking a constant `service`, `cache` the `[cache]` table's
/// keys, `more` any further tables; one strategy without retries.
fn world(rate: f64, workers: u32, service: &str, cache: &str, more: &str) -> String {
    format!(
        r#"
name = "cache"
seed = 11
duration = "60s"
[clients]
model = "open"
rate = {rate:.1}
[network]
latency = {{ dist = "constant", value = "100us" }}
[server]
workers = {workers}
queue = 1000
service = {{ dist = "constant", value = "{service}" }}
[cache]
{cache}
{more}
[metrics]
baseline = "5s"
[[strategy]]
name = "s"
max_retries = 0
timeout = "1s"
"#
    )
}

fn summary_text(out: &Path, name: &str) -> String {
    let rows = csv(&out.join("summary.csv"));
    let c = rows[0].iter().position(|h| h == name).unwrap();
    rows[1][c].clone()
}

fn summary(out: &Path, name: &str) -> f64 {
    summary_text(out, name).parse().unwrap()
}

/// `cache.csv`'s `column` for the one strategy, per bucket.
fn series(out: &Path, column: &str) -> Vec<f64> {
    let rows = csv(&out.join("cache.csv"));
    let c = rows[0].iter().position(|h| h == column).unwrap();
    rows[1..]
        .iter()
        .map(|r| r[c].parse().unwrap_or(f64::NAN))
        .collect()
}

/// Uniform keys, a warm cache of C of the N keys, nothing expiring: each
/// request hits with probability C/N whatever else happened (the cache
/// always holds C keys, and the key is drawn independently), so the
/// backend's load is the arrival rate times the miss rate, 1 - C/N. The
/// misses of n requests are binomial: the tolerance is 4 standard
/// deviations.
#[test]
fn steady_backend_load_is_the_rate_times_the_miss_rate() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        dir.path(),
        "lru",
        &world(2000.0, 10, "1ms", "keys = 1000\ncapacity = 900", ""),
        "1",
    );
    let (requests, attempts) = (summary(&out, "logical_requests"), summary(&out, "attempts"));
    let miss = attempts / requests;
    let sd = (0.1 * 0.9 / requests).sqrt();
    assert!((miss - 0.1).abs() < 4.0 * sd, "miss rate {miss} (sd {sd})");
    // Per second, over the run: 2000 x 0.1 = 200 a second.
    let per_s = attempts / 60.0;
    assert!((per_s - 200.0).abs() < 200.0 * 0.03, "{per_s}");
}

/// Every key fits, entries live `ttl` = 1 s after their fill: a key asked
/// for at rate r (Poisson) misses once per cycle, then hits the r T
/// requests of the next T, so the miss ratio is 1 / (1 + r T) (Jung,
/// Berger and Balakrishnan, "Modeling TTL-based Internet caches", INFOCOM
/// 2003), here r = 10 a second: 1/11. The fill comes a round trip after
/// the miss (0.3 ms), which adds r x 0.3 ms = 0.003 misses a cycle. A
/// cold start, and the first seconds left out of nothing: the tolerance
/// covers both, and the counting noise of about 5500 cycles.
#[test]
fn ttl_miss_ratio_matches_the_renewal_formula() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        dir.path(),
        "ttl",
        &world(
            1000.0,
            10,
            "100us",
            "keys = 100\ncapacity = 100\nttl = \"1s\"\nwarm = false",
            "",
        ),
        "1",
    );
    let miss = summary(&out, "attempts") / summary(&out, "logical_requests");
    let expected = (1.0 + 0.003) / (1.0 + 0.003 + 10.0);
    assert!((miss - expected).abs() < 0.004, "{miss} vs {expected}");
}

/// Bronson et al.'s world: a database that serves 300 requests a second
/// (10 workers of 33.3 ms) behind a cache that answers 90% of 2000 a
/// second (200 reach it, two thirds of its capacity). The cache is lost
/// for one second at 20 s: 2000 a second reach the database, its queue
/// fills, every answer comes after the users' 1 s timeout, nothing is
/// filled again, and the world never comes back though no user retries.
/// At 250 a second (25 at the database) the same loss is survived: the
/// cold cache's misses, 250 a second, are under the database's capacity,
/// its answers come in time and refill the cache.
#[test]
fn losing_the_cache_keeps_an_overloaded_backend_down_but_not_an_underloaded_one() {
    let dir = tempfile::tempdir().unwrap();
    let flush = "[[outage]]\nkind = \"cache-flush\"\nstart = \"20s\"\nend = \"21s\"";
    let cache = "keys = 10000\nhit_rate = 0.9";
    let hot = run(
        dir.path(),
        "hot",
        &world(2000.0, 10, "33.333ms", cache, flush),
        "2",
    );
    let ratio = series(&hot, "hit_ratio");
    assert!(ratio[150] > 0.85, "warm before: {}", ratio[150]);
    let tail = &ratio[500..600];
    assert!(tail.iter().all(|&r| r < 0.05), "stays down: {tail:?}");
    assert_eq!(summary_text(&hot, "recovery_time_s"), "", "never recovered");
    let cool = run(
        dir.path(),
        "cool",
        &world(250.0, 10, "33.333ms", cache, flush),
        "2",
    );
    let ratio = series(&cool, "hit_ratio");
    let entries = series(&cool, "entries");
    assert!(entries[209] < 1.0, "emptied: {}", entries[209]);
    assert!(entries[599] > entries[300], "refilling");
    let failed = summary(&cool, "failed");
    assert!(failed < 10.0, "{failed} failed");
    assert!(ratio[599] > 0.5, "{}", ratio[599]);
}

/// The paper's example as written: 3000 a second, a 90% hit rate, a
/// database of 300 a second: the capacity the hit rate sets is 90% of the
/// keys, and the database's share is exactly its capacity.
#[test]
fn bronsons_example_is_expressible_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let text = world(3000.0, 10, "33.333ms", "keys = 100000\nhit_rate = 0.9", "");
    let out = run(dir.path(), "bronson", &text, "1");
    let entries = series(&out, "entries");
    assert_eq!(entries[0], 90000.0);
    let misses = series(&out, "misses_per_s");
    // The first 5 s, before a queue at the database's capacity changes
    // anything: 3000 x 0.1 = 300 a second.
    let early = misses[..50].iter().sum::<f64>() / 50.0;
    assert!((early - 300.0).abs() < 30.0, "{early}");
}

/// The same bytes on one thread and two: a Zipf cache with a TTL, a gate
/// and a flush, under three strategies.
#[test]
fn cache_runs_are_deterministic_across_threads() {
    let dir = tempfile::tempdir().unwrap();
    let text = world(
        800.0,
        4,
        "5ms",
        "keys = 2000\nzipf = 0.9\nhit_rate = 0.7\nttl = \"2s\"\nmiss_limit = 300.0",
        "[[outage]]\nkind = \"cache-flush\"\nstart = \"20s\"\nend = \"22s\"",
    )
    .replace("duration = \"60s\"", "duration = \"30s\"")
        + "[[strategy]]\nname = \"retry\"\nmax_retries = 3\ntimeout = \"200ms\"\n\
           [[strategy]]\nname = \"budget\"\nmax_retries = 3\ntimeout = \"200ms\"\n\
           budget = { kind = \"token-bucket\" }\n";
    let a = run(dir.path(), "a", &text, "1");
    let b = run(dir.path(), "b", &text, "2");
    for f in ["summary.csv", "timeseries.csv", "cache.csv"] {
        assert_eq!(
            std::fs::read(a.join(f)).unwrap(),
            std::fs::read(b.join(f)).unwrap(),
            "{f}"
        );
    }
    assert_eq!(csv(&a.join("cache.csv")).len(), 1 + 3 * 300);
}

#[test]
fn bad_caches_are_refused_at_their_key() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "keys = 10\ncapacity = 5\nhit_rate = 0.5",
            "cache.hit_rate",
            "not both",
        ),
        ("keys = 10", "cache", "needs `capacity`"),
        ("keys = 10\ncapacity = 11", "cache.capacity", "at most keys"),
        ("keys = 0\ncapacity = 0", "cache.keys", "from 1"),
        (
            "keys = 10\ncapacity = 5\nzipf = -1.0",
            "cache.zipf",
            "above 0",
        ),
        (
            "keys = 10\ncapacity = 5\nmiss_limit = 0.0",
            "cache.miss_limit",
            "above 0",
        ),
        ("keys = 10\nhit_rate = 1.5", "cache.hit_rate", "[0, 1]"),
    ];
    for (i, (cache, key, says)) in cases.iter().enumerate() {
        let err = invalid(dir.path(), i, &world(10.0, 1, "1ms", cache, ""));
        assert!(err.contains(key) && err.contains(says), "{cache}: {err}");
    }
    // A strategy's own cache needs the scenario's.
    let text = world(10.0, 1, "1ms", "keys = 10\ncapacity = 5", "")
        .replace("[cache]\nkeys = 10\ncapacity = 5\n", "")
        + "cache = { keys = 10, capacity = 5 }\n";
    let err = invalid(dir.path(), 50, &text);
    assert!(err.contains("strategy[0].cache"), "{err}");
}
