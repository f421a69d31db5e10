//! No input panics: every line of the shipped scenarios deleted, or its value
//! replaced by junk of every type, parses to a scenario or to an error, and a
//! scenario that parses runs (shortened) without panicking.

use std::path::Path;

use retry_storm::runner::simulate;
use retry_storm::scenario;

const JUNK: [&str; 14] = [
    "\"\"",
    "\"-1s\"",
    "\"0s\"",
    "0",
    "-1",
    "1e308",
    "nan",
    "inf",
    "true",
    "[]",
    "{}",
    "\"x\"",
    "18446744073709551615",
    "\"1000000000h\"",
];

fn variants(src: &str) -> Vec<String> {
    let lines: Vec<&str> = src.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.trim_start().starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let mut deleted = lines.clone();
        deleted.remove(i);
        out.push(deleted.join("\n"));
        if let Some((key, _)) = line.split_once('=') {
            for junk in JUNK {
                let mut changed = lines.clone();
                let replaced = format!("{key}= {junk}");
                changed[i] = &replaced;
                out.push(changed.join("\n"));
            }
        }
    }
    out
}

/// Parses every variant of `file`, passing those that parse to `then`; asserts
/// that errors name the file and that both outcomes occur often.
fn check_variants(file: &str, then: impl Fn(scenario::Scenario)) {
    let src = std::fs::read_to_string(file).unwrap();
    let (mut ok, mut err) = (0, 0);
    for v in variants(&src) {
        match scenario::parse(&v, Path::new("mutated.toml")) {
            Ok(s) => {
                ok += 1;
                then(s);
            }
            Err(e) => {
                err += 1;
                assert!(e.to_string().starts_with("mutated.toml"), "{e}");
            }
        }
    }
    assert!(ok > 10 && err > 100, "{file}: {ok} parsed, {err} rejected");
}

#[test]
fn mutated_scenarios_never_panic() {
    check_variants("tests/fixtures/small.toml", |mut s| {
        // Keep runs short: the point is that they do not panic.
        s.world.duration = s
            .world
            .duration
            .min(retry_storm::engine::SimDuration::from_secs(10));
        if s.world
            .outages
            .iter()
            .all(|o| o.end.0 <= s.world.duration.0)
        {
            simulate(&s);
        }
    });
}

#[test]
fn mutated_sweeps_never_panic() {
    // Only parsing: a sweep builds and validates every point while it parses.
    check_variants("tests/fixtures/grid.toml", |_| {});
}
