//! `timeseries.csv`: long format, one row per (strategy, time bucket).

use super::{ExportError, Exporter, fixed, to_csv};
use crate::metrics::Report;

/// Writes `timeseries.csv`.
pub struct TimeseriesCsv;

impl Exporter for TimeseriesCsv {
    fn file_name(&self) -> &'static str {
        "timeseries.csv"
    }

    fn serialize(&self, report: &Report) -> Result<Vec<u8>, ExportError> {
        let width = report.metrics.bucket.as_secs_f64();
        let rate = |n: u64| fixed(Some(n as f64 / width), 1);
        let header = crate::metrics::columns::TIMESERIES
            .iter()
            .map(|c| c.name.to_string())
            .collect();
        let rows = report.runs.iter().flat_map(|r| {
            r.buckets.iter().enumerate().map(move |(i, b)| {
                let twin = r.twin.as_ref().and_then(|t| t.get(i));
                vec![
                    r.name.clone(),
                    fixed(Some(i as f64 * width), 3),
                    rate(b.attempts),
                    rate(b.retries),
                    rate(b.successes),
                    rate(b.errors),
                    rate(b.timeouts),
                    fixed(Some(b.queue_len), 3),
                    fixed(Some(b.in_flight), 3),
                    fixed(Some(b.busy), 3),
                    fixed(Some(b.breaker_open), 3),
                    fixed(Some(b.backing_off), 3),
                    twin.map_or(String::new(), |t| rate(t.successes)),
                    fixed(twin.map(|t| t.backlog()), 3),
                ]
            })
        });
        to_csv(std::iter::once(header).chain(rows))
    }
}
