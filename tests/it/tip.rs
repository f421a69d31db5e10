//! Tipping-point searches (`[tip]`): the same boundaries on any thread count
//! and in shards, searches that bracket what a run of each end shows, a
//! world overloaded without its trigger said so, and bad searches refused at
//! their key.

use std::fs;
use std::path::Path;

use retry_storm::engine::rng::derive_seed;
use retry_storm::model;
use tempfile::TempDir;

use crate::common::{invalid, run_into, sim, stdout};

const FIXTURE: &str = "tests/fixtures/tip.toml";
const FILES: [&str; 3] = ["tip.csv", "searches.csv", "tip.png"];

fn same(a: &Path, b: &Path) {
    for f in FILES {
        assert!(
            fs::read(a.join(f)).unwrap() == fs::read(b.join(f)).unwrap(),
            "{f} differs"
        );
    }
}

#[test]
fn a_search_gives_the_same_bytes_on_one_thread_two_and_in_shards() {
    let dir = TempDir::new().unwrap();
    let (one, two) = (dir.path().join("one"), dir.path().join("two"));
    run_into(FIXTURE, &one, "1", &["-q"]).success();
    run_into(FIXTURE, &two, "2", &["-q"]).success();
    same(&one, &two);
    // 5 shards of 12 searches, merged in another order.
    let parts = dir.path().join("parts");
    let mut shards: Vec<_> = (1..=5)
        .map(|i| {
            run_into(FIXTURE, &parts, "1", &["-q", "--shard", &format!("{i}/5")]).success();
            parts.join(format!("shard-{i}-of-5"))
        })
        .collect();
    shards.reverse();
    let merged = dir.path().join("merged");
    let a = sim()
        .arg("merge")
        .args(&shards)
        .arg("--out")
        .arg(&merged)
        .assert()
        .success();
    assert!(stdout(&a).contains("merged 5 shards"), "{}", stdout(&a));
    same(&one, &merged);
    // A tipping search's shard is not a sweep's: too many shards are refused.
    let err = crate::common::stderr(
        &run_into(FIXTURE, &dir.path().join("x"), "1", &["--shard", "13/13"]).code(2),
    );
    assert!(err.contains("the search has 12 searches"), "{err}");
}

/// Every search's bracket is what runs of its two ends show, each run alone
/// with the search's seed: the world recovers from the one and not from the
/// other; and a search ended "beyond" recovers from the worst trigger.
#[test]
fn each_search_brackets_what_single_runs_show() {
    let dir = TempDir::new().unwrap();
    run_into(FIXTURE, dir.path(), "2", &["-q"]).success();
    let s = retry_storm::scenario::load(Path::new(FIXTURE)).unwrap();
    let tip = s.tip.as_ref().unwrap();
    let text = fs::read_to_string(dir.path().join("searches.csv")).unwrap();
    let mut found = 0;
    for (i, line) in text.lines().skip(1).enumerate() {
        let f: Vec<&str> = line.split(',').collect();
        let (level, k, rep) = retry_storm::tip::locate(tip, i);
        assert_eq!(f[2], tip.strategies[k]);
        let recovers = |x: f64| {
            let at = tip.at(level, x).unwrap();
            let m = model::run_measured(
                &at.world_for(k),
                &at.strategies[k],
                derive_seed(s.seed, 0, rep),
                &at.metrics,
            );
            m.summary.recovery_time_s.is_some()
        };
        match f[4] {
            "found" => {
                let (good, bad): (f64, f64) = (f[5].parse().unwrap(), f[6].parse().unwrap());
                assert!(bad - good <= tip.resolution + 1e-9, "{line}");
                assert!(recovers(good), "{line}: not recovered at {good}");
                assert!(!recovers(bad), "{line}: recovered at {bad}");
                found += 1;
            }
            "beyond" => assert!(recovers(tip.to), "{line}"),
            other => panic!("unexpected outcome {other} in {line}"),
        }
    }
    // The exponential strategy tips inside the range at both loads.
    assert!(found >= 6, "{text}");
}

#[test]
fn a_world_overloaded_without_its_trigger_is_said_so() {
    let dir = TempDir::new().unwrap();
    let text = fs::read_to_string(FIXTURE)
        .unwrap()
        .replace("values = [60, 100]", "values = [100, 200]");
    let file = dir.path().join("over.toml");
    fs::write(&file, text).unwrap();
    let out = dir.path().join("out");
    let a = run_into(file.to_str().unwrap(), &out, "2", &[]).success();
    let table = stdout(&a);
    // 200 clients a second against 160 requests/s.
    assert!(table.contains("overloaded  without any trigger"), "{table}");
    let csv = fs::read_to_string(out.join("tip.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().filter(|l| l.starts_with("200,")).collect();
    assert_eq!(rows.len(), 2, "{csv}");
    for row in rows {
        assert!(row.contains(",overloaded,,,,"), "{row}");
    }
}

#[test]
fn bad_searches_are_refused_at_their_key() {
    let dir = TempDir::new().unwrap();
    let base = fs::read_to_string(FIXTURE).unwrap();
    let cases: [(&str, &str, &str); 7] = [
        (
            "search = \"outage[0].length\"",
            "search = \"server.workers\"",
            "`tip.search`",
        ),
        (
            "search = \"outage[0].length\"",
            "search = \"outage[3].length\"",
            "N from 0 to 0",
        ),
        ("to = \"10s\"", "to = \"50ms\"", "`to` must be above `from`"),
        (
            "resolution = \"200ms\"",
            "resolution = 0.2",
            "all be durations",
        ),
        (
            "replications = 3",
            "replications = 3\nworse = \"up\"",
            "\"larger\"",
        ),
        (
            "replications = 3",
            "replications = 3\nseeds = \"shared\"",
            "\"independent\"",
        ),
        (
            "[tip.over]\nparameter = \"clients.count\"",
            "[tip.over]\nparameter = \"outage[0].length\"",
            "is the key searched",
        ),
    ];
    for (i, (from, to, want)) in cases.iter().enumerate() {
        assert!(base.contains(from), "{from}");
        let err = invalid(dir.path(), i, &base.replacen(from, to, 1));
        assert!(err.contains(want), "case {i}: {err}");
    }
    // No trigger at all.
    let start = base.find("[[outage]]").unwrap();
    let end = base.find("[metrics]").unwrap();
    let none = format!("{}{}", &base[..start], &base[end..]);
    let err = invalid(dir.path(), 10, &none);
    assert!(err.contains("no trigger to search"), "{err}");
    // A sweep and a search at once.
    let both = format!("{base}\n[sweep]\nparameter = \"server.workers\"\nvalues = [2, 3]\n");
    let err = invalid(dir.path(), 11, &both);
    assert!(err.contains("a [sweep] or a [tip], not both"), "{err}");
}

/// The Markov twin against the simulation, on Metafor's world at three
/// loads: the burst the simulated world survives half the time (the median
/// of 21 searches, plus the requests the server holds on average before
/// it, rho / (1 - rho) for one worker) and the burst the chain says tips it
/// with probability 1/2 agree within 20%. They differ because the chain's
/// retries wait an exponential time (mean: the timeout) where the
/// simulator's wait exactly the timeout, and because the chain decides
/// whether an attempt will be late when it arrives. Measured on 2026-12-07:
/// the chain 38.4, 31.8, 25.9 requests at 50%, 70%, 85% load; the
/// simulation 34.9, 30.8, 30.3.
#[cfg(feature = "markov")]
#[test]
fn the_markov_twin_agrees_with_the_simulated_boundary() {
    let file = "scenarios/metafor.toml";
    let dir = TempDir::new().unwrap();
    run_into(file, dir.path(), "2", &["-q"]).success();
    let s = retry_storm::scenario::load(Path::new(file)).unwrap();
    let tip = s.tip.as_ref().unwrap();
    let csv = fs::read_to_string(dir.path().join("tip.csv")).unwrap();
    for (level, line) in csv.lines().skip(1).enumerate() {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f[3], "found", "{line}");
        // The spike lasts 1 ms: its rate over 1000 is its size.
        let burst: f64 = f[4].parse::<f64>().unwrap() / 1000.0;
        let at = tip.at(level, tip.from).unwrap();
        let params =
            retry_storm::markov::Params::from_world(&at.world_for(0), &at.strategies[0]).unwrap();
        let rho = params.utilisation();
        let simulated = burst + rho / (1.0 - rho);
        let a = retry_storm::markov::Chain::new(params, 300)
            .analyse()
            .unwrap();
        let i = a.tip.iter().position(|&t| t >= 0.5).unwrap();
        let n50 = (i - 1) as f64 + (0.5 - a.tip[i - 1]) / (a.tip[i] - a.tip[i - 1]);
        assert!(
            (n50 - simulated).abs() <= 0.2 * simulated,
            "load {rho}: the chain says {n50:.1}, the simulation {simulated:.1}"
        );
    }
}
