//! The book (`docs/src/`) and the README: their tables of figures are the
//! committed `results/` (generated, never copied), their lists of output
//! columns are `metrics::columns`, every chapter is in `SUMMARY.md`, and every
//! relative link and anchor leads somewhere.
//!
//! A generated table sits between `<!-- table FILE: COLUMN ... -->` (optionally
//! `| rows: NAME ...`, or for a `timeseries.csv` `| from: SECONDS`, the means
//! per strategy from then on) and `<!-- end table -->`; a list of columns between
//! `<!-- columns summary -->` (or `timeseries`) and `<!-- end columns -->`;
//! what a command prints between `<!-- output sim ARGS -->` and
//! `<!-- end output -->`.
//! `UPDATE_DOCS=1 cargo test --release --test it docs` rewrites them from
//! `results/`; without it, a table that differs fails the test.

use std::fs;
use std::path::{Path, PathBuf};

use retry_storm::metrics::columns;

/// The Markdown files of the book and the README.
fn pages() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir("docs/src")
        .expect("docs/src")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    v.sort();
    v.push(PathBuf::from("README.md"));
    v
}

/// `text` with every generated block rewritten; errors name the page.
fn regenerate(page: &Path, text: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("<!-- ") {
        let (before, from) = rest.split_at(start);
        out.push_str(before);
        let close = from
            .find("-->")
            .ok_or_else(|| format!("{}: an unclosed comment", page.display()))?;
        let marker = &from[..close + 3];
        let spec = marker[5..close].trim();
        let (end, body) = if let Some(spec) = spec.strip_prefix("table ") {
            ("<!-- end table -->", table(spec)?)
        } else if let Some(which) = spec.strip_prefix("columns ") {
            let list = match which.trim() {
                "summary" => columns::markdown_meanings(&columns::SUMMARY),
                "timeseries" => columns::markdown_meanings(&columns::TIMESERIES),
                "replicas" => columns::markdown_meanings(&columns::REPLICAS),
                "tiers" => columns::markdown_meanings(&columns::TIERS),
                "proxies" => columns::markdown_meanings(&columns::PROXIES),
                "slow" => columns::markdown_meanings(&columns::SLOW),
                "defences" => columns::markdown_meanings(&columns::DEFENCES),
                "cache" => columns::markdown_meanings(&columns::CACHE),
                "tip" => columns::markdown_meanings(&columns::TIP),
                "risk" => columns::markdown_meanings(&columns::RISK),
                other => return Err(format!("{}: no column list {other}", page.display())),
            };
            ("<!-- end columns -->", list)
        } else if let Some(command) = spec.strip_prefix("output sim ") {
            ("<!-- end output -->", output(page, command)?)
        } else {
            out.push_str(marker);
            rest = &from[close + 3..];
            continue;
        };
        let after = &from[close + 3..];
        let stop = after
            .find(end)
            .ok_or_else(|| format!("{}: {marker} has no {end}", page.display()))?;
        out.push_str(marker);
        out.push('\n');
        out.push_str(&body);
        out.push_str(end);
        rest = &after[stop + end.len()..];
    }
    out.push_str(rest);
    Ok(out)
}

/// What `sim COMMAND` prints, as a text block: the book shows a command's
/// output as it is, never copied by hand. It must succeed, or be `sim
/// check` giving its verdict.
fn output(page: &Path, command: &str) -> Result<String, String> {
    let out = crate::common::sim()
        .args(command.split_whitespace())
        .output()
        .map_err(|e| format!("{}: sim {command}: {e}", page.display()))?;
    // `sim check`'s verdict "a limit crossed" is exit 1, an output to show.
    let verdict = command.starts_with("check ") && out.status.code() == Some(1);
    if !out.status.success() && !verdict {
        return Err(format!(
            "{}: sim {command} failed: {}",
            page.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(format!(
        "```text\n$ sim {command}\n{}```\n",
        String::from_utf8_lossy(&out.stdout)
    ))
}

/// The table a marker's spec asks for: `FILE: COLUMN ... [| rows: NAME ...]`.
fn table(spec: &str) -> Result<String, String> {
    let (file, rest) = spec
        .split_once(':')
        .ok_or_else(|| format!("table marker \"{spec}\": FILE: COLUMNS"))?;
    let text = fs::read_to_string(file.trim()).map_err(|e| format!("{file}: {e}"))?;
    if let Some((cols, from)) = rest.split_once("| from:") {
        // Means per strategy over the buckets from a time on (timeseries.csv).
        let cols: Vec<&str> = cols.split_whitespace().collect();
        let from: f64 = from
            .trim()
            .parse()
            .map_err(|_| format!("table marker \"{spec}\": from: SECONDS"))?;
        return columns::markdown_means(&text, &cols, from).map_err(|e| format!("{file}: {e}"));
    }
    let (cols, rows) = rest.split_once("| rows:").unwrap_or((rest, ""));
    let cols: Vec<&str> = cols.split_whitespace().collect();
    let rows: Vec<&str> = rows.split_whitespace().collect();
    columns::markdown_table(&text, &cols, &rows).map_err(|e| format!("{file}: {e}"))
}

#[test]
fn generated_tables_are_the_committed_results() {
    let update = std::env::var_os("UPDATE_DOCS").is_some();
    let mut stale = Vec::new();
    for page in pages() {
        let text = fs::read_to_string(&page).unwrap();
        let fresh = regenerate(&page, &text).unwrap_or_else(|e| panic!("{e}"));
        if fresh != text {
            if update {
                fs::write(&page, fresh).unwrap();
            } else {
                stale.push(page.display().to_string());
            }
        }
    }
    assert!(
        stale.is_empty(),
        "generated tables differ from results/ in {stale:?}: run \
         UPDATE_DOCS=1 cargo test --release --test it docs"
    );
}

/// GitHub's and mdBook's anchor of a heading: lower case, punctuation but
/// `-` and `_` dropped, spaces as `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_' || *c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown file's headings (outside code blocks), with the
/// files it includes (`{{#include FILE}}`) read in their place.
fn anchors(path: &Path) -> Vec<String> {
    let text = fs::read_to_string(path).unwrap_or_default();
    let mut v = Vec::new();
    let mut code = false;
    for line in text.lines() {
        if line.starts_with("```") {
            code = !code;
        }
        if let Some(inc) = line
            .strip_prefix("{{#include ")
            .and_then(|r| r.strip_suffix("}}"))
        {
            v.extend(anchors(&path.parent().unwrap().join(inc)));
        }
        if !code && line.starts_with('#') {
            v.push(slug(line.trim_start_matches('#')));
        }
    }
    v
}

#[test]
fn every_relative_link_and_anchor_leads_somewhere() {
    let mut broken = Vec::new();
    for page in pages() {
        let text = fs::read_to_string(&page).unwrap();
        let mut code = false;
        for (n, line) in text.lines().enumerate() {
            if line.starts_with("```") {
                code = !code;
            }
            if code {
                continue;
            }
            for (i, _) in line.match_indices("](") {
                let target: String = line[i + 2..].chars().take_while(|&c| c != ')').collect();
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                let (file, anchor) = target.split_once('#').unwrap_or((&target, ""));
                let resolved = if file.is_empty() {
                    page.clone()
                } else {
                    page.parent().unwrap().join(file)
                };
                let at = format!("{}:{}: {target}", page.display(), n + 1);
                if !resolved.exists() {
                    broken.push(format!("{at}: no such file"));
                } else if !anchor.is_empty()
                    && resolved.extension().is_some_and(|x| x == "md")
                    && !anchors(&resolved).iter().any(|a| a == anchor)
                {
                    broken.push(format!("{at}: no such heading"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_chapter_is_in_the_summary() {
    let summary = fs::read_to_string("docs/src/SUMMARY.md").unwrap();
    for page in pages().iter().filter(|p| p.starts_with("docs/src")) {
        let name = page.file_name().unwrap().to_string_lossy();
        if name == "SUMMARY.md" {
            continue;
        }
        assert!(
            summary.contains(&format!("]({name})")),
            "docs/src/{name} is not in SUMMARY.md"
        );
    }
}
