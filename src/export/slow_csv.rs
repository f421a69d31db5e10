//! `slow.csv`: how many of each strategy's successes took longer than
//! `[metrics] slow`, and the share of its requests answered well within it
//! (the ratio a latency SLO counts). Written only when `slow` is set.

use super::{ExportError, Exporter, fixed, to_csv};
use crate::metrics::Report;

/// Writes `slow.csv`.
pub struct SlowCsv;

impl Exporter for SlowCsv {
    fn file_name(&self) -> &'static str {
        "slow.csv"
    }

    fn applies(&self, report: &Report) -> bool {
        report.metrics.slow.is_some()
    }

    fn serialize(&self, report: &Report) -> Result<Vec<u8>, ExportError> {
        let header = crate::metrics::columns::SLOW
            .iter()
            .map(|c| c.name.to_string())
            .collect();
        let threshold = report.metrics.slow.map_or(0.0, |d| d.as_secs_f64());
        let rows = report.runs.iter().map(|run| {
            let s = &run.summary;
            let slower = s.slower.unwrap_or(0);
            let ended = s.succeeded + s.failed;
            let share = |n: u64, of: u64| (of > 0).then(|| n as f64 / of as f64);
            vec![
                run.name.clone(),
                fixed(Some(threshold), 3),
                s.succeeded.to_string(),
                slower.to_string(),
                fixed(share(slower, s.succeeded), 6),
                s.failed.to_string(),
                fixed(share(s.succeeded - slower, ended), 6),
            ]
        });
        to_csv(std::iter::once(header).chain(rows))
    }
}
