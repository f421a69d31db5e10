//! The files of a sweep: `summary.csv`, one row per (value, strategy), and
//! `timeline.csv`, attempts per bucket of replication 0 at the largest value.

use super::{ExportError, fixed, to_csv};
use crate::sweep::SweepReport;

/// Columns of a sweep's `summary.csv` after the parameter's own column.
pub const COLUMNS: [&str; 7] = [
    "strategy",
    "runs",
    "calls_mean",
    "calls_ci95",
    "time_ms_mean",
    "time_ms_ci95",
    "incomplete_runs",
];

/// `summary.csv` of a sweep.
pub fn summary(r: &SweepReport) -> Result<Vec<u8>, ExportError> {
    let mut header = vec![r.sweep.parameter.column().to_string()];
    header.extend(COLUMNS.iter().map(|c| c.to_string()));
    let rows = r.rows.iter().map(|row| {
        vec![
            row.value.to_string(),
            row.strategy.clone(),
            row.runs.to_string(),
            fixed(row.calls_mean, 2),
            fixed(row.calls_ci95, 2),
            fixed(row.time_ms_mean, 2),
            fixed(row.time_ms_ci95, 2),
            row.incomplete_runs.to_string(),
        ]
    });
    to_csv(std::iter::once(header).chain(rows))
}

/// `timeline.csv`: for each strategy, attempts started in each bucket.
pub fn timeline(r: &SweepReport) -> Result<Vec<u8>, ExportError> {
    let width = r.metrics.bucket.as_secs_f64();
    let header = ["strategy", "t_s", "attempts", "successes"]
        .iter()
        .map(|c| c.to_string())
        .collect();
    let rows = r.timelines.iter().flat_map(|(name, buckets)| {
        buckets.iter().enumerate().map(move |(i, b)| {
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
