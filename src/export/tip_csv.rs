//! The files of a tipping-point search: `tip.csv`, one row per (level,
//! strategy) with the boundary (the median search's) and its interval, and
//! `searches.csv`, one row per search with the bracket it ended with. Every
//! value with all its digits (the shortest decimal that reads back as the
//! same number); durations in seconds.

use super::{ExportError, to_csv};
use crate::scenario::tip::Tip;
use crate::tip::{Outcome, TipReport};

/// The level's columns: the `[tip.over]` value, and the offered load over
/// capacity.
fn level_cells(tip: &Tip, level: usize) -> Vec<String> {
    let mut cells = Vec::new();
    if let Some(axis) = &tip.over {
        cells.push(axis.values[level].label.clone());
    }
    cells.push(
        tip.levels[level]
            .load_ratio
            .map_or(String::new(), |v| v.to_string()),
    );
    cells
}

/// The level's header.
fn level_header(tip: &Tip) -> Vec<String> {
    let mut header: Vec<String> = tip.over.iter().map(|a| a.column.clone()).collect();
    header.push("load_ratio".into());
    header
}

/// The suffix of the searched key's values: `_s` for durations.
fn unit(tip: &Tip) -> &'static str {
    if tip.duration { "_s" } else { "" }
}

/// `tip.csv`.
pub fn boundaries(r: &TipReport) -> Result<Vec<u8>, ExportError> {
    let tip = &r.tip;
    let u = unit(tip);
    let mut header = level_header(tip);
    header.extend([
        "strategy".to_string(),
        "status".into(),
        format!("boundary{u}"),
        format!("low{u}"),
        format!("high{u}"),
        "confidence".into(),
        "searches".into(),
        "found".into(),
        "below".into(),
        "beyond".into(),
        "overloaded".into(),
        "runs".into(),
    ]);
    let num = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    let rows = r.rows.iter().map(|b| {
        let mut cells = level_cells(tip, b.level);
        cells.extend([
            b.strategy.clone(),
            b.status.name().to_string(),
            num(b.median),
            num(b.low),
            num(b.high),
            b.confidence.to_string(),
            tip.replications.to_string(),
        ]);
        cells.extend(b.counts.iter().map(u32::to_string));
        cells.push(b.probes.to_string());
        cells
    });
    to_csv(std::iter::once(header).chain(rows))
}

/// `searches.csv`.
pub fn searches(r: &TipReport) -> Result<Vec<u8>, ExportError> {
    let tip = &r.tip;
    let u = unit(tip);
    let mut header = level_header(tip);
    header.extend([
        "strategy".to_string(),
        "replication".into(),
        "outcome".into(),
        format!("recovered{u}"),
        format!("not_recovered{u}"),
        "runs".into(),
    ]);
    let rows = r.searches.iter().enumerate().map(|(i, x)| {
        let (level, k, rep) = crate::tip::locate(tip, i);
        let mut cells = level_cells(tip, level);
        let (good, bad) = match x.outcome {
            Outcome::Found { good, bad } => (good.to_string(), bad.to_string()),
            _ => (String::new(), String::new()),
        };
        cells.extend([
            tip.strategies[k].clone(),
            rep.to_string(),
            x.outcome.name().to_string(),
            good,
            bad,
            x.probes.to_string(),
        ]);
        cells
    });
    to_csv(std::iter::once(header).chain(rows))
}
