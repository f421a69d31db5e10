//! The mesh as deployed. Users behind several proxies (`[clients]
//! proxies`): each proxy's own budget, breaker and throttle unless the
//! strategy shares them, its own view of a fleet, its own counts in
//! `proxies.csv`, its guards counted by `sim bound` and `sim check`, and the
//! errors a bad proxy setting gets; Brooker's retry-only breaker; service
//! times as mixtures, histograms and measured values.

use crate::chain::{csv, run};
use crate::common::invalid;
use std::path::Path;

/// A world where every request fails (all are bad, and 400 is retried), at
/// 200 requests a second for 60 s, behind `proxies` proxies; `strategies`
/// follow a `[retry]` of up to 3 retries 10 ms apart with a Finagle budget
/// whose only allowance is its floor: 2 retries a second.
fn failing(proxies: u32, strategies: &str) -> String {
    format!(
        r#"
name = "failing"
seed = 3
duration = "60s"
[clients]
model = "open"
rate = 200.0
bad_fraction = 1.0
proxies = {proxies}
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
max_retries = 3
budget = {{ kind = "finagle", ttl = "10s", min_per_s = 2, percent = 0.0 }}
{strategies}
"#
    )
}

/// `column` of `strategy`'s row in `summary.csv`.
fn summary(out: &Path, strategy: &str, column: &str) -> u64 {
    let rows = csv(&out.join("summary.csv"));
    let c = rows[0].iter().position(|h| h == column).unwrap();
    rows[1..].iter().find(|r| r[0] == strategy).unwrap()[c]
        .parse()
        .unwrap()
}

/// Each of `strategy`'s rows in `proxies.csv`, as its named columns.
fn proxy_rows(out: &Path, strategy: &str) -> Vec<std::collections::HashMap<String, u64>> {
    let rows = csv(&out.join("proxies.csv"));
    rows[1..]
        .iter()
        .filter(|r| r[0] == strategy)
        .map(|r| {
            rows[0]
                .iter()
                .zip(r)
                .filter_map(|(h, v)| Some((h.clone(), v.parse().ok()?)))
                .collect()
        })
        .collect()
}

/// A budget's floor is per proxy: under total failure, one proxy with a
/// floor of 2 retries a second retries 2 x 60 = 120 times in 60 s (its
/// whole reserve, renewed each second), ten proxies ten times that, and
/// ten proxies that share one budget as one proxy does. Each proxy's row
/// adds up and its retries are its own floor's.
#[test]
fn budget_floors_add_up_over_proxies_unless_shared() {
    let dir = tempfile::TempDir::new().unwrap();
    let one = run(
        dir.path(),
        "one",
        &failing(1, "[[strategy]]\nname = \"a\""),
        "2",
    );
    let ten = run(
        dir.path(),
        "ten",
        &failing(
            10,
            "[[strategy]]\nname = \"own\"\n[[strategy]]\nname = \"shared\"\nshared = [\"budget\"]",
        ),
        "2",
    );
    let floor = 2 * 60;
    assert_eq!(summary(&one, "a", "retries"), floor);
    assert!(
        !one.join("proxies.csv").exists(),
        "one proxy, no proxies.csv"
    );
    assert_eq!(summary(&ten, "own", "retries"), 10 * floor);
    assert_eq!(summary(&ten, "shared", "retries"), floor);
    for strategy in ["own", "shared"] {
        let rows = proxy_rows(&ten, strategy);
        assert_eq!(rows.len(), 10);
        let mut retries = 0;
        for r in &rows {
            assert_eq!(
                r["logical_requests"],
                r["succeeded"] + r["failed"] + r["in_flight_at_end"],
                "{strategy}: {r:?}"
            );
            assert_eq!(r["attempts"], r["logical_requests"] + r["retries"]);
            if strategy == "own" {
                assert_eq!(r["retries"], floor, "{r:?}");
            }
            retries += r["retries"];
        }
        assert_eq!(retries, summary(&ten, strategy, "retries"));
        let requests: u64 = rows.iter().map(|r| r["logical_requests"]).sum();
        assert_eq!(requests, summary(&ten, strategy, "logical_requests"));
    }
}

/// Bad proxy settings are refused at their key, with what would do.
#[test]
fn bad_proxy_settings_name_their_key() {
    let dir = tempfile::TempDir::new().unwrap();
    let cases: [(String, &[&str]); 5] = [
        (
            failing(0, "[[strategy]]\nname = \"a\""),
            &["clients.proxies", "from 1"],
        ),
        (
            failing(70_000, "[[strategy]]\nname = \"a\""),
            &["clients.proxies", "65535"],
        ),
        (
            failing(2, "[[strategy]]\nname = \"a\"\nshared = [\"budgets\"]"),
            &["strategy[0].shared[0]", "budget, breaker, throttle"],
        ),
        (
            failing(
                2,
                "[[strategy]]\nname = \"a\"\nshared = [\"budget\", \"budget\"]",
            ),
            &["strategy[0].shared[1]", "twice"],
        ),
        (
            failing(1, "[[strategy]]\nname = \"a\"")
                .replace(
                    "model = \"open\"\nrate = 200.0",
                    "model = \"closed\"\ncount = 5\nthink = { dist = \"constant\", value = \"1s\" }",
                )
                .replace("proxies = 1", "proxies = 6"),
            &["clients.proxies", "at most the clients (5)"],
        ),
    ];
    for (i, (text, wanted)) in cases.iter().enumerate() {
        let err = invalid(dir.path(), i, text);
        for w in *wanted {
            assert!(err.contains(w), "case {i}: {w:?} not in {err}");
        }
    }
}

/// `scenarios/fleet.toml` (five replicas, one slowed to a quarter from 20 s
/// to 50 s) with its users behind `proxies` proxies seeing the fleet
/// `view`: the file, with `[clients]` told so.
fn fleet_behind(proxies: u32, view: &str) -> String {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/fleet.toml"))
            .unwrap();
    text.replacen(
        "[clients]\n",
        &format!("[clients]\nproxies = {proxies}\nproxy_view = \"{view}\"\n"),
        1,
    )
}

/// Behind 20 proxies that each keep their own view of the fleet, each
/// proxy ejects by what it saw: the ejections of the proxies add up to the
/// replicas', every proxy's row adds up, a replica's share in the rotation
/// stays a share, and the files are the same bytes on one thread and two.
/// Behind proxies that share one view, a strategy with no guard runs as
/// with one proxy, figure for figure.
#[test]
fn proxies_with_their_own_view_eject_on_their_own() {
    let dir = tempfile::TempDir::new().unwrap();
    let own = fleet_behind(20, "own");
    let one = run(dir.path(), "own1", &own, "1");
    let two = run(dir.path(), "own2", &own, "2");
    for f in [
        "summary.csv",
        "proxies.csv",
        "replicas.csv",
        "timeseries.csv",
    ] {
        assert!(
            std::fs::read(one.join(f)).unwrap() == std::fs::read(two.join(f)).unwrap(),
            "{f} differs between 1 and 2 threads"
        );
    }
    let replicas = csv(&one.join("replicas.csv"));
    let col = |name: &str| replicas[0].iter().position(|c| c == name).unwrap();
    for strategy in ["envoy-defaults", "eject-all", "eject-all-budget"] {
        let rows = proxy_rows(&one, strategy);
        assert_eq!(rows.len(), 20);
        assert!(
            rows.iter()
                .all(|r| r["logical_requests"]
                    == r["succeeded"] + r["failed"] + r["in_flight_at_end"])
        );
        let by_proxies: u64 = rows.iter().map(|r| r["ejections"]).sum();
        let mine = replicas[1..].iter().filter(|r| r[0] == strategy);
        let by_replicas: u64 = mine
            .clone()
            .map(|r| r[col("ejections")].parse::<u64>().unwrap())
            .sum();
        assert_eq!(by_proxies, by_replicas, "{strategy}");
        assert!(
            by_proxies > 0,
            "{strategy}: no proxy ejected the slow replica"
        );
        assert!(mine.clone().all(|r| {
            let share: f64 = r[col("in_rotation")].parse().unwrap();
            (0.0..=1.0).contains(&share)
        }));
    }
    let shared = run(dir.path(), "shared", &fleet_behind(20, "shared"), "2");
    let plain = run(dir.path(), "plain", &fleet_behind(1, "own"), "2");
    let rows = |out: &Path| csv(&out.join("summary.csv"));
    let (s, p) = (rows(&shared), rows(&plain));
    for strategy in ["no-ejection", "envoy-defaults", "eject-all"] {
        let find = |t: &[Vec<String>]| t.iter().find(|r| r[0] == strategy).unwrap().clone();
        assert_eq!(find(&s), find(&p), "{strategy}");
    }
}

/// `sim bound` counts a guard per proxy: five gRPC token buckets of 10
/// allow 5 x 4 = 20 retries under total failure (the run makes exactly
/// those: nothing ever succeeds to refill them), and ten Finagle budgets of
/// 2 a second allow 1 + 10 x 2 / 200 = 1.1 attempts per request, which the
/// run fills from below (its first window has less; within 2%).
#[test]
fn bounds_count_each_proxys_guards() {
    let dir = tempfile::TempDir::new().unwrap();
    let text = failing(
        5,
        "[[strategy]]\nname = \"bucket\"\nbudget = { kind = \"token-bucket\", max_tokens = 10, token_ratio = 0.1 }\n\
         [[strategy]]\nname = \"bucket-shared\"\nshared = [\"budget\"]\nbudget = { kind = \"token-bucket\", max_tokens = 10, token_ratio = 0.1 }",
    );
    let file = dir.path().join("b.toml");
    std::fs::write(&file, &text).unwrap();
    let printed = crate::common::stdout(
        &crate::common::sim()
            .arg("bound")
            .arg(&file)
            .assert()
            .success(),
    );
    let out = run(dir.path(), "b", &text, "2");
    for (strategy, retries) in [("bucket", 20), ("bucket-shared", 4)] {
        let block = printed
            .split(&format!("strategy \"{strategy}\""))
            .nth(1)
            .unwrap();
        let line = block
            .lines()
            .find(|l| l.trim_start().starts_with("retries in all, total failure:"))
            .unwrap();
        assert!(line.contains(&format!(": {retries} retries")), "{line}");
        assert_eq!(summary(&out, strategy, "retries"), retries);
    }
    let finagle = failing(10, "[[strategy]]\nname = \"f\"");
    std::fs::write(&file, &finagle).unwrap();
    let printed = crate::common::stdout(
        &crate::common::sim()
            .arg("bound")
            .arg(&file)
            .assert()
            .success(),
    );
    assert!(
        printed.contains("1 + percent + 10 x min_per_s / rate = 1 + 0 + 10 x 2 / 200"),
        "{printed}"
    );
    let out = run(dir.path(), "f", &finagle, "2");
    let a = summary(&out, "f", "attempts") as f64 / summary(&out, "f", "logical_requests") as f64;
    assert!(a <= 1.1 + 1e-3 && a > 0.98 * 1.1, "{a}");
}

/// `sim check --proxies N` counts a Linkerd budget's floor of 10 retries a
/// second once per proxy: 100 proxies, 1000 a second.
#[test]
fn check_counts_the_floors_of_its_proxies() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/import/linkerd.yaml");
    let floor = |proxies: &str| {
        let a = crate::common::sim()
            .arg("check")
            .arg(&file)
            .args([
                "--proxies",
                proxies,
                "--trial",
                "unavailable:2s",
                "--format",
                "json",
            ])
            .assert()
            .code(1);
        let out = crate::common::stdout(&a);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v["strategies"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|s| s["figures"].as_array().unwrap().clone())
            .find(|f| f["id"] == "budget_floor_per_s")
            .unwrap()["after"]
            .as_f64()
            .unwrap()
    };
    assert_eq!(floor("1"), 10.0);
    assert_eq!(floor("100"), 1000.0);
}

/// Brooker's retry simulator (retry_sim, 2022): 100 clients of 10 requests
/// a second, each attempt failing on its own with probability p, each
/// client with its own breaker that stops retries once failed attempts pass
/// 10% of its calls. Three retries cost 1 + p + p^2 + p^3 attempts per
/// request; the breaker costs the same below 10% failure and stops
/// retrying above it. Here each client is behind a proxy of its own; the
/// failures start at 1 s, so 1% of requests see none. Over 100 000
/// requests the standard error of attempts per request is under 0.2%:
/// the tolerance is 1%.
#[test]
fn brookers_breaker_retries_below_its_rate_and_stops_above() {
    let dir = tempfile::TempDir::new().unwrap();
    for p in [0.05_f64, 0.2] {
        let text = format!(
            r#"
name = "brooker"
seed = 5
duration = "100s"
[clients]
model = "open"
count = 100
every = "100ms"
proxies = 100
[network]
latency = {{ dist = "exponential", mean = "10ms" }}
[server]
workers = 10000
queue = 0
service = {{ dist = "constant", value = "1ms" }}
[[outage]]
kind = "errors"
p = {p}
start = "1s"
end = "100s"
[metrics]
baseline = "1s"
bucket = "1s"
[retry]
backoff = "none"
max_retries = 3
timeout = "10s"
[[strategy]]
name = "three-retries"
[[strategy]]
name = "breaker"
budget = {{ kind = "failure-ratio", max_rate = 0.1 }}
"#
        );
        let out = run(dir.path(), &format!("b{p}"), &text, "2");
        let per_request = |s: &str| {
            summary(&out, s, "attempts") as f64 / summary(&out, s, "logical_requests") as f64
        };
        let three = 0.99 * (1.0 + p + p * p + p * p * p) + 0.01;
        let close = |a: f64, b: f64| (a - b).abs() < 0.01 * b;
        assert!(close(per_request("three-retries"), three), "p {p}");
        if p < 0.1 {
            assert!(close(per_request("breaker"), three), "p {p}");
        } else {
            assert!(
                per_request("breaker") < 1.01,
                "p {p}: {}",
                per_request("breaker")
            );
        }
    }
}

/// A mixture's weights must sum to one, and a part may not be a mixture; a
/// histogram's bounds must increase and its shares end at one; a sample
/// file must be there, hold numbers and say their unit: refused at the key
/// (a bad line named by its number).
#[test]
fn bad_distributions_name_their_key() {
    let dir = tempfile::TempDir::new().unwrap();
    let with = |service: &str| {
        failing(1, "[[strategy]]\nname = \"a\"").replace(
            "service = { dist = \"constant\", value = \"1ms\" }",
            &format!("service = {service}"),
        )
    };
    std::fs::write(dir.path().join("bad.txt"), "4\n5\nfive\n").unwrap();
    let cases: [(String, &[&str]); 10] = [
        (
            with(r#"{ dist = "empirical", file = "absent.txt", unit = "ms" }"#),
            &["server.service.file", "cannot read", "absent.txt"],
        ),
        (
            with(r#"{ dist = "empirical", file = "bad.txt", unit = "ms" }"#),
            &[
                "server.service.file",
                "bad.txt line 3",
                "\"five\" is not a number of ms",
            ],
        ),
        (
            with(r#"{ dist = "empirical", file = "bad.txt" }"#),
            &["server.service.unit", "\"ns\", \"us\", \"ms\" or \"s\""],
        ),
        (
            with(r#"{ dist = "empirical", samples = ["4ms"], file = "bad.txt" }"#),
            &["server.service", "not both"],
        ),
        (
            with(r#"{ dist = "histogram", le = ["5ms", "4ms"], cumulative = [0.5, 1.0] }"#),
            &["server.service.le[1]", "must increase"],
        ),
        (
            with(r#"{ dist = "histogram", le = ["5ms", "9ms"], cumulative = [0.5, 0.9] }"#),
            &["server.service.cumulative", "last share must be 1"],
        ),
        (
            with(r#"{ dist = "histogram", le = ["5ms"], cumulative = [0.5, 1.0] }"#),
            &[
                "server.service.cumulative",
                "one cumulative share per bound",
            ],
        ),
        (
            with(
                r#"{ dist = "mixture", parts = [{ weight = 0.9, dist = "constant", value = "1ms" }, { weight = 0.2, dist = "constant", value = "9ms" }] }"#,
            ),
            &["server.service.parts", "sum to 1, got 1.1"],
        ),
        (
            with(
                r#"{ dist = "mixture", parts = [{ weight = 0, dist = "constant", value = "1ms" }, { weight = 1, dist = "constant", value = "9ms" }] }"#,
            ),
            &["server.service.parts[0].weight", "(0, 1]"],
        ),
        (
            with(r#"{ dist = "mixture", parts = [] }"#),
            &["server.service.parts", "needs parts"],
        ),
    ];
    for (i, (text, wanted)) in cases.iter().enumerate() {
        let err = invalid(dir.path(), i, text);
        for w in *wanted {
            assert!(err.contains(w), "case {i}: {w:?} not in {err}");
        }
    }
}

/// Service times from a file of measured values beside the scenario (one
/// number of ms per line, comments and blank lines skipped) are the same
/// draws as the same values inline: byte-identical results; a request
/// takes its hops (1 ms each way) and one of the values.
#[test]
fn a_sample_file_is_its_values_inline() {
    let dir = tempfile::TempDir::new().unwrap();
    std::fs::write(
        dir.path().join("service.txt"),
        "# service times of one replica, ms\n4\n\n5\n5\n30\n",
    )
    .unwrap();
    let with = |service: &str| {
        failing(1, "[[strategy]]\nname = \"a\"")
            .replace("bad_fraction = 1.0", "bad_fraction = 0.0")
            .replace(
                "service = { dist = \"constant\", value = \"1ms\" }",
                &format!("service = {service}"),
            )
    };
    let file = run(
        dir.path(),
        "file",
        &with(r#"{ dist = "empirical", file = "service.txt", unit = "ms" }"#),
        "1",
    );
    let inline = run(
        dir.path(),
        "inline",
        &with(r#"{ dist = "empirical", samples = ["4ms", "5ms", "5ms", "30ms"] }"#),
        "2",
    );
    for f in ["summary.csv", "timeseries.csv"] {
        assert_eq!(
            std::fs::read(file.join(f)).unwrap(),
            std::fs::read(inline.join(f)).unwrap(),
            "{f}"
        );
    }
    // The median request: 1 + 5 + 1 ms.
    let rows = csv(&file.join("summary.csv"));
    let c = rows[0].iter().position(|h| h == "latency_p50_s").unwrap();
    let p50: f64 = rows[1][c].parse().unwrap();
    assert!((p50 - 0.007).abs() < 1e-4, "{p50}");
}

/// 65 535 proxies, each with its own view of 10 000 replicas, would hold
/// billions of replica views: refused before any run, with what to change.
#[test]
fn too_many_proxy_views_are_refused_before_running() {
    let dir = tempfile::TempDir::new().unwrap();
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/mesh-1000.toml"),
    )
    .unwrap()
    .replace("proxies = 1000", "proxies = 65535")
    .replace("replicas = 100\n", "replicas = 10000\n");
    let err = invalid(dir.path(), 0, &text);
    assert!(err.contains("fewer proxies"), "{err}");
}
