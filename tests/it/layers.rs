//! The source tree's layers, as `src/lib.rs` states them: every `crate::`
//! path in the code of a file of `src/` (its unit tests and comments left
//! out) names a module of its own layer or of one below it, never one above. A wrong-way import compiles in one crate; this test
//! is what refuses it.

use std::fs;
use std::path::Path;

/// The top-level modules, from the ground floor up: a module may name those
/// of a lower rank, and its own.
const LAYERS: [(&str, u32); 22] = [
    ("engine", 0),
    ("import", 0),
    ("output", 0),
    ("cli", 0),
    ("retry", 1),
    ("metrics", 2),
    ("model", 3),
    ("scenario", 4),
    ("bound", 4),
    ("markov", 4),
    ("runner", 5),
    ("sweep", 5),
    ("tip", 5),
    ("risk", 5),
    ("advise", 5),
    ("check", 6),
    ("plot", 6),
    ("export", 7),
    ("serve", 8),
    ("app", 9),
    ("main", 10),
    ("lib", 10),
];

fn rank(module: &str) -> Option<u32> {
    LAYERS.iter().find(|(m, _)| *m == module).map(|(_, r)| *r)
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level modules a file's text names through `crate::`, including
/// those of a `use crate::{a, b::c}` group.
fn named(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // A group: each item's first segment, up to the closing brace
            // at depth 0.
            let mut depth = 0;
            let mut item = String::new();
            let mut first = true;
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        first = true;
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                if depth == 0 && first {
                    if c.is_alphanumeric() || c == '_' {
                        item.push(c);
                    } else if !item.is_empty() {
                        out.push(item.clone());
                        first = false;
                    }
                }
            }
            if first && !item.is_empty() {
                out.push(item);
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.push(name);
        }
    }
    out
}

#[test]
fn every_import_points_down_a_layer_or_within_one() {
    let mut files = Vec::new();
    sources(Path::new("src"), &mut files);
    files.sort();
    assert!(files.len() > 50, "{} files", files.len());
    let mut wrong = Vec::new();
    for file in &files {
        // A module's unit tests in a file of their own, as in the module.
        if file.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let rel = file.strip_prefix("src").unwrap();
        let top = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_owned();
        let own = rank(&top)
            .unwrap_or_else(|| panic!("{}: no layer for `{top}` in LAYERS", file.display()));
        let text = fs::read_to_string(file).unwrap();
        // The code: unit tests (which may load a scenario) and comments
        // (which may point a reader anywhere) left out.
        let code: String = text
            .split("#[cfg(test)]\nmod tests")
            .next()
            .unwrap()
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        for module in named(&code) {
            if module == top {
                continue;
            }
            match rank(&module) {
                Some(r) if r < own => {}
                _ => wrong.push(format!("{} names crate::{module}", file.display())),
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    assert!(
        wrong.is_empty(),
        "imports that do not point down:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_scanner_reads_groups_and_paths() {
    let text = "use crate::{engine::SimTime, retry::{Backoff, Jitter}, metrics};\nlet x = crate::model::run(1);";
    assert_eq!(named(text), ["engine", "retry", "metrics", "model"]);
}

/// No file of `src/` is over 800 lines, but the data tables (a list that
/// reads best whole): a longer one is split by subject, its unit tests
/// moved beside it.
#[test]
fn no_source_file_is_over_800_lines() {
    const TABLES: [&str; 1] = ["src/metrics/columns.rs"];
    let mut files = Vec::new();
    sources(Path::new("src"), &mut files);
    let long: Vec<_> = files
        .iter()
        .filter(|f| !TABLES.iter().any(|t| Path::new(t) == f.as_path()))
        .map(|f| {
            (
                f.display().to_string(),
                fs::read_to_string(f).unwrap().lines().count(),
            )
        })
        .filter(|(_, n)| *n > 800)
        .collect();
    assert!(long.is_empty(), "over 800 lines: {long:?}");
}
