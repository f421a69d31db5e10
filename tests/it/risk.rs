//! Rare events (`[risk]`): the same bytes on any thread count, splitting
//! against brute force level by level, and bad `[risk]` tables refused at
//! their key.

use std::fs;

use tempfile::TempDir;

use crate::common::{invalid, run_into};

const FIXTURE: &str = "tests/fixtures/risk.toml";
const FILES: [&str; 3] = ["risk.csv", "risk-levels.csv", "risk.png"];

#[test]
fn an_estimate_gives_the_same_bytes_on_one_thread_and_two() {
    let dir = TempDir::new().unwrap();
    let (one, two) = (dir.path().join("one"), dir.path().join("two"));
    run_into(FIXTURE, &one, "1", &["-q"]).success();
    run_into(FIXTURE, &two, "2", &["-q"]).success();
    for f in FILES {
        assert!(
            fs::read(one.join(f)).unwrap() == fs::read(two.join(f)).unwrap(),
            "{f} differs"
        );
    }
}

/// Every level brute force reached often enough to measure (20 walks or
/// more of its 100 000), for each strategy: splitting's estimate within
/// four standard errors of the difference. The standard errors are the
/// intervals' half-widths over t (splitting: t for 9 degrees of freedom,
/// 2.262) or z (brute force, 1.96); four rather than two because the t
/// interval of 10 skewed estimates understates their spread (a repeat
/// that pauses a few walks above a level runs high). The errors this
/// guards against were larger: handing walks out in turn was 8% low in
/// two stages (5 standard errors), and without big triggers drawn more
/// often the deep levels came out 2 to 5 times low.
#[test]
fn splitting_agrees_with_brute_force_where_brute_force_sees_enough() {
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("r");
    run_into(FIXTURE, &out, "2", &["-q"]).success();
    let text = fs::read_to_string(out.join("risk-levels.csv")).unwrap();
    let mut rows = text.lines();
    let header: Vec<&str> = rows.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let mut checked = 0;
    for line in rows {
        let v: Vec<&str> = line.split(',').collect();
        let num = |name: &str| v[col(name)].parse::<f64>().unwrap();
        if num("brute_reached") < 20.0 {
            continue;
        }
        let se_split = (num("p_reach_high") - num("p_reach_low")) / 2.0 / 2.262;
        let se_brute = (num("brute_high") - num("brute_low")) / 2.0 / 1.96;
        let diff = (num("p_reach") - num("brute_p_reach")).abs();
        assert!(
            diff <= 4.0 * (se_split.powi(2) + se_brute.powi(2)).sqrt(),
            "{line}"
        );
        checked += 1;
    }
    // The top level included: retrying at once tips about once in 800
    // bursts of this size, often enough for brute force to see it.
    assert!(checked >= 8, "only {checked} levels checked");
}

#[test]
fn bad_risk_tables_are_refused_at_their_key() {
    let dir = TempDir::new().unwrap();
    let base = fs::read_to_string(FIXTURE).unwrap();
    let with = |old: &str, new: &str| {
        assert!(base.contains(old), "{old}");
        base.replace(old, new)
    };
    let cases = [
        (
            with(
                "trigger = \"outage[0].rate\"",
                "trigger = \"outage[3].rate\"",
            ),
            "risk.trigger",
            "N from 0 to 0",
        ),
        (
            with(
                "trigger = \"outage[0].rate\"",
                "trigger = \"outage[0].factor\"",
            ),
            "risk.trigger",
            "is a spike with no random `factor`",
        ),
        (
            with(
                "size = { dist = \"exponential\"",
                "size = { dist = \"pareto\"",
            ),
            "risk.size.dist",
            "valid: \"exponential\"",
        ),
        (
            with("mean = 5000.0", "mean = \"5s\""),
            "risk.size",
            "a number, not a duration",
        ),
        (
            with("mean = 5000.0", "median = 5000.0"),
            "risk.size.mean",
            "needs `mean`",
        ),
        (
            with("tipped = 100", "tipped = 1"),
            "risk.tipped",
            "at least 2",
        ),
        (
            with("tipped = 100", "tipped = 100\ncalm = 100"),
            "risk.calm",
            "under tipped",
        ),
        (with("effort = 300", "effort = 5"), "risk.effort", "from 10"),
        (
            with("repeats = 10", "repeats = 1"),
            "risk.repeats",
            "an interval needs two",
        ),
        (
            with("per_day = 24.0", "per_day = 0.0"),
            "risk.per_day",
            "above zero",
        ),
        (
            with("tipped = 100", "tipped = 100\nwatch = \"queue\""),
            "risk.watch",
            "\"held\"",
        ),
        (
            format!(
                "{base}\n[tip]\nsearch = \"outage[0].rate\"\nfrom = 1000.0\nto = 9000.0\n\
                 resolution = 1000.0\n"
            ),
            "risk",
            "one of [sweep], [tip] and [risk]",
        ),
    ];
    for (i, (text, key, says)) in cases.iter().enumerate() {
        let err = invalid(dir.path(), i, text);
        assert!(err.contains(key) && err.contains(says), "case {i}: {err}");
    }
}

/// `--shard` splits sweeps and searches, not an estimate.
#[test]
fn an_estimate_is_not_sharded() {
    let dir = TempDir::new().unwrap();
    let err = crate::common::stderr(
        &run_into(FIXTURE, &dir.path().join("s"), "1", &["--shard", "1/2"]).code(2),
    );
    assert!(err.contains("--shard"), "{err}");
}
