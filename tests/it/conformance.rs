//! The committed conformance results (conformance/results.toml, written by
//! `python3 conformance/run.py` against the real libraries) must describe the
//! presets as they are now: a preset changed without a fresh measurement fails
//! here.

use std::collections::BTreeMap;

fn table(text: &str) -> BTreeMap<String, toml::Table> {
    let doc: toml::Table = text.parse().expect("valid TOML");
    doc["preset"]
        .as_array()
        .expect("[[preset]] tables")
        .iter()
        .map(|p| {
            let t = p.as_table().expect("a table").clone();
            (t["name"].as_str().expect("a name").to_owned(), t)
        })
        .collect()
}

#[test]
fn every_preset_was_measured_as_it_is_now_or_says_why_not() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sim"))
        .args(["presets", "--toml"])
        .output()
        .expect("sim runs");
    assert!(out.status.success());
    let now = table(&String::from_utf8(out.stdout).expect("UTF-8"));
    let text = std::fs::read_to_string("conformance/results.toml").expect("results committed");
    let measured = table(&text);
    for (name, preset) in &now {
        let row = measured.get(name).unwrap_or_else(|| {
            panic!("{name}: not in conformance/results.toml; run conformance/run.py --only {name}")
        });
        assert_eq!(
            row["fingerprint"].as_str(),
            preset["fingerprint"].as_str(),
            "{name} changed since it was measured: run python3 conformance/run.py --only {name}"
        );
        let measured_on = row.get("measured_on").and_then(|v| v.as_str());
        let why_not = row.get("not_measured").and_then(|v| v.as_str());
        assert!(
            measured_on.is_some() != why_not.is_some(),
            "{name}: a row is either measured on a version or says why it cannot be"
        );
        if measured_on.is_some() {
            let verdict = row["verdict"].as_str().expect("a verdict");
            assert!(
                verdict == "matches" || verdict == "differs",
                "{name}: {verdict}"
            );
        }
    }
    for name in measured.keys() {
        assert!(
            now.contains_key(name),
            "{name}: measured but no longer a preset"
        );
    }
}

#[test]
fn the_book_shows_the_committed_table() {
    let readme = std::fs::read_to_string("docs/src/libraries.md").expect("the book's chapter");
    let results = std::fs::read_to_string("conformance/RESULTS.md").expect("RESULTS.md");
    let table = results.split_once("\n\n").expect("a heading").1;
    assert!(
        readme.contains(table),
        "docs/src/libraries.md's conformance table differs from conformance/RESULTS.md: run python3 conformance/run.py"
    );
}
