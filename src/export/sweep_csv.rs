//! The files of a sweep: `summary.csv`, one row per (point, strategy) with the
//! summary of every figure (mean and 95% confidence half-width; for the recovery
//! time, median and largest value, `never` for a run that never recovered; for
//! the share of runs that recovered, the share and its Wilson interval), every
//! value with all its digits (the shortest decimal that reads back as the same
//! number), and `timeline.csv`, attempts per bucket of replication 0 at the
//! timeline's point (the last unless `timeline_at` names another).

use super::{ExportError, fixed, to_csv};
use crate::metrics::figures::FIGURES;
use crate::sweep::SweepReport;

/// Columns of a sweep's `summary.csv` after the swept parameters' own columns
/// and before the figures' `_mean` and `_ci95` pairs.
pub const COLUMNS: [&str; 4] = ["strategy", "runs", "incomplete_runs", "recovered_runs"];

/// `summary.csv` of a sweep.
pub fn summary(r: &SweepReport) -> Result<Vec<u8>, ExportError> {
    let mut header: Vec<String> = r.sweep.axes.iter().map(|a| a.column.clone()).collect();
    header.extend(COLUMNS.iter().map(|c| c.to_string()));
    for f in &FIGURES {
        for suffix in f.suffixes() {
            header.push(format!("{}_{suffix}", f.name));
        }
    }
    let rows = r.rows.iter().map(|row| {
        let point = &r.sweep.points[row.point];
        let mut cells: Vec<String> = r
            .sweep
            .axes
            .iter()
            .zip(&point.coords)
            .map(|(a, &i)| a.values[i].label.clone())
            .collect();
        cells.extend([
            row.strategy.clone(),
            row.runs.to_string(),
            row.incomplete_runs.to_string(),
            row.recovered_runs.map_or(String::new(), |n| n.to_string()),
        ]);
        for estimate in &row.stats {
            cells.extend(estimate.columns().into_iter().map(exact_or_never));
        }
        cells
    });
    to_csv(std::iter::once(header).chain(rows))
}

/// `v` in full (the shortest decimal that reads back as the same `f64`: a
/// mean of about one request a run is not rounded away), empty for none, or
/// `never` for an infinite recovery time.
fn exact_or_never(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_infinite() => "never".to_string(),
        Some(v) => v.to_string(),
        None => String::new(),
    }
}

/// `timeline.csv`: for each strategy, attempts started and requests succeeded
/// in each bucket.
pub fn timeline(r: &SweepReport) -> Result<Vec<u8>, ExportError> {
    let width = r.metrics.bucket.as_secs_f64();
    let header = ["strategy", "t_s", "attempts", "successes"]
        .iter()
        .map(|c| c.to_string())
        .collect();
    let rows = r.timelines.iter().flat_map(|(name, bins)| {
        bins.iter().enumerate().map(move |(i, b)| {
            vec![
                name.clone(),
                fixed(Some(i as f64 * width), 3),
                b.attempts.to_string(),
                b.successes.to_string(),
            ]
        })
    });
    to_csv(std::iter::once(header).chain(rows))
}
