//! A check's report for people (a table naming the file and line behind
//! each figure), and for machines: JSON, and SARIF 2.1.0, which code
//! hosting platforms read to annotate the lines of a pull request.

use std::fmt::Write as _;

use serde_json::{Value as Json, json};

use super::{CheckReport, Figure, StrategyCheck, Unit, Value};
use crate::bound::short;

/// `v` in `unit`, as a table shows it.
pub fn value(unit: Unit, v: Value) -> String {
    match (unit, v) {
        (_, Value::Absent) => "-".to_owned(),
        (_, Value::Never) => "never".to_owned(),
        (Unit::Count, Value::Number(x)) if x.is_infinite() => "unlimited".to_owned(),
        (Unit::Count, Value::Number(x)) => short(x),
        (Unit::Share, Value::Number(x)) => format!("{}%", short(x * 100.0)),
        (Unit::Ratio, Value::Number(x)) => format!("{:.2}x", x),
        (Unit::Seconds, Value::Number(x)) => format!("{x:.1} s"),
        (Unit::PerSecond, Value::Number(x)) => format!("{}/s", short(x)),
    }
}

/// `file:line`, or the path alone.
fn place(s: &StrategyCheck, f: Option<&Figure>) -> String {
    match f.and_then(|f| f.source.as_ref()).or(s.at.as_ref()) {
        Some(l) => format!("{}:{}", l.file, l.line),
        None => s.path.clone(),
    }
}

/// The verdict in one line.
pub fn verdict(r: &CheckReport) -> String {
    let n = r.crossed().count();
    match n {
        0 => "Within every limit.".to_owned(),
        1 => "1 limit crossed.".to_owned(),
        n => format!("{n} limits crossed."),
    }
}

/// What was compared, in a line.
fn counts(r: &CheckReport) -> String {
    let n = r.strategies.len();
    let mut out = format!(
        "{n} {} read",
        if n == 1 { "strategy" } else { "strategies" }
    );
    if let Some(base) = &r.base {
        let mut by: Vec<(String, usize)> = Vec::new();
        for s in &r.strategies {
            let w = s.status.word().to_owned();
            match by.iter_mut().find(|(k, _)| *k == w) {
                Some((_, c)) => *c += 1,
                None => by.push((w, 1)),
            }
        }
        let parts: Vec<String> = by.iter().map(|(w, c)| format!("{c} {w}")).collect();
        let _ = write!(out, "; against {base}: {}", parts.join(", "));
    }
    out
}

/// The table for people.
pub fn table(r: &CheckReport) -> String {
    let mut out = format!("sim check: {}\n", counts(r));
    let _ = writeln!(out, "Trials (seed {}) in {}:", r.seed, r.world);
    for t in &r.trials {
        let _ = writeln!(out, "  - {t}");
    }
    for n in &r.notes {
        let _ = writeln!(out, "Note: {n}");
    }
    for s in &r.strategies {
        let _ = writeln!(
            out,
            "\n{}  {}  ({}, {})",
            place(s, None),
            s.name,
            s.format,
            s.status.word()
        );
        // Without a base there is no "before" column.
        let keep = |cells: [String; 5]| -> Vec<String> {
            cells
                .into_iter()
                .enumerate()
                .filter(|(i, _)| r.base.is_some() || *i != 1)
                .map(|(_, c)| c)
                .collect()
        };
        let rows: Vec<Vec<String>> = s.figures.iter().map(|f| keep(row(f))).collect();
        let head = keep(["figure", "before", "after", "limit", ""].map(str::to_owned));
        let mut widths = vec![0; head.len()];
        for cells in std::iter::once(&head).chain(&rows) {
            for (w, c) in widths.iter_mut().zip(cells) {
                *w = (*w).max(c.chars().count());
            }
        }
        for cells in std::iter::once(&head).chain(&rows) {
            let mut line = String::new();
            let last = cells.len() - 1;
            for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
                // Names and limits to the left, values to the right.
                if i == 0 || i + 1 >= last {
                    let _ = write!(line, "  {c:<w$}");
                } else {
                    let _ = write!(line, "  {c:>w$}");
                }
            }
            let _ = writeln!(out, "{}", line.trim_end());
        }
        for f in &s.figures {
            match &f.source_words {
                Some(w) if f.crossed => {
                    let _ = writeln!(out, "  {} crossed; it comes from {w}", f.id);
                }
                Some(w) if f.after == Value::Absent => {
                    let _ = writeln!(out, "  {}: {w}", f.id);
                }
                _ => {}
            }
        }
    }
    let _ = writeln!(out, "\n{}", verdict(r));
    out
}

/// A figure's table row: what, before, after, limit, verdict.
fn row(f: &Figure) -> [String; 5] {
    let what = match f.id.strip_prefix("trial.") {
        Some(rest) => {
            // `trial.ID.FIGURE`, where an ID may hold a dot (`errors-0.5-60s`).
            let trial = rest.rsplit_once('.').map_or(rest, |(t, _)| t);
            format!("{trial}: {}", f.what)
        }
        None => f.what.clone(),
    };
    [
        what,
        value(f.unit, f.before),
        value(f.unit, f.after),
        f.limit.clone().unwrap_or_default(),
        if f.crossed { "CROSSED" } else { "" }.to_owned(),
    ]
}

/// A value for JSON: a number, `"never"`, or null.
fn json_value(v: Value) -> Json {
    match v {
        Value::Absent => Json::Null,
        Value::Never => json!("never"),
        Value::Number(x) if x.is_infinite() => json!("unlimited"),
        Value::Number(x) => json!(x),
    }
}

/// The report as JSON.
pub fn json(r: &CheckReport) -> String {
    let strategies: Vec<Json> = r
        .strategies
        .iter()
        .map(|s| {
            let figures: Vec<Json> = s
                .figures
                .iter()
                .map(|f| {
                    json!({
                        "id": f.id,
                        "what": f.what,
                        "before": json_value(f.before),
                        "after": json_value(f.after),
                        "limit": f.limit,
                        "crossed": f.crossed,
                        "file": f.source.as_ref().map(|l| &l.file),
                        "line": f.source.as_ref().map(|l| l.line),
                        "from": f.source_words,
                    })
                })
                .collect();
            json!({
                "path": s.path,
                "name": s.name,
                "format": s.format,
                "file": s.at.as_ref().map(|l| &l.file),
                "line": s.at.as_ref().map(|l| l.line),
                "status": s.status.word(),
                "figures": figures,
            })
        })
        .collect();
    let doc = json!({
        "base": r.base,
        "world": r.world,
        "trials": r.trials,
        "seed": r.seed,
        "notes": r.notes,
        "crossed": r.crossed().count(),
        "strategies": strategies,
    });
    let mut text = serde_json::to_string_pretty(&doc).expect("a JSON value prints");
    text.push('\n');
    text
}

/// A SARIF rule's identifier for figure `id`: the trial's own part left
/// out (`trial.recovery_s`), so each kind of limit is one rule.
fn rule_id(id: &str) -> String {
    match id.strip_prefix("trial.") {
        Some(rest) => format!("trial.{}", rest.rsplit('.').next().unwrap_or(rest)),
        None => id.to_owned(),
    }
}

/// A path as a SARIF URI reference: a relative path made relative to the
/// repository's top (`prefix` is where the paths were given from, as `git
/// rev-parse --show-prefix` says it), which is what code hosts resolve it
/// against; an absolute path as a `file://` URI. Separators are `/`.
fn uri(path: &str, prefix: &str) -> String {
    let path = path.replace('\\', "/");
    if path.starts_with('/') {
        return format!("file://{path}");
    }
    let mut rest = path.as_str();
    while let Some(r) = rest.strip_prefix("./") {
        rest = r;
    }
    format!("{prefix}{rest}")
}

/// The report as SARIF 2.1.0: one result per limit crossed, located at
/// the line that set the figure (or where the strategy starts); relative
/// paths are given from `prefix` in the repository (see [`uri`]).
pub fn sarif(r: &CheckReport, prefix: &str) -> String {
    let mut rules: Vec<Json> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    let mut results: Vec<Json> = Vec::new();
    for (s, f) in r.crossed() {
        let id = rule_id(&f.id);
        if !seen.contains(&id) {
            rules.push(json!({
                "id": id,
                "shortDescription": { "text": f.what },
            }));
            seen.push(id.clone());
        }
        let at = f.source.as_ref().or(s.at.as_ref());
        let location = match at {
            Some(l) => json!({ "physicalLocation": {
                "artifactLocation": { "uri": uri(&l.file, prefix) },
                "region": { "startLine": l.line },
            }}),
            None => json!({ "physicalLocation": {
                "artifactLocation": { "uri": uri(&s.path, prefix) },
            }}),
        };
        let limit = f.limit.clone().unwrap_or_default();
        results.push(json!({
            "ruleId": id,
            "level": "error",
            "message": { "text": format!(
                "{} ({}): {} is {} ({}), was {}",
                s.name,
                s.status.word(),
                f.what,
                value(f.unit, f.after),
                limit,
                value(f.unit, f.before),
            )},
            "locations": [location],
        }));
    }
    let doc = json!({
        "version": "2.1.0",
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "runs": [{
            "tool": { "driver": {
                "name": "sim check",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "results": results,
        }],
    });
    let mut text = serde_json::to_string_pretty(&doc).expect("a JSON value prints");
    text.push('\n');
    text
}
