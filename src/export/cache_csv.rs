//! `cache.csv`: what the look-aside cache did, one row per (strategy, time
//! bucket). Written only when the world has a cache.

use super::{ExportError, Exporter, fixed, to_csv};
use crate::metrics::Report;

/// Writes `cache.csv`.
pub struct CacheCsv;

impl Exporter for CacheCsv {
    fn file_name(&self) -> &'static str {
        "cache.csv"
    }

    fn applies(&self, report: &Report) -> bool {
        report.runs.iter().any(|r| r.cache.is_some())
    }

    fn serialize(&self, report: &Report) -> Result<Vec<u8>, ExportError> {
        let width = report.metrics.bucket.as_secs_f64();
        let rate = |n: u64| fixed(Some(n as f64 / width), 1);
        let header = crate::metrics::columns::CACHE
            .iter()
            .map(|c| c.name.to_string())
            .collect();
        let rows = report.runs.iter().flat_map(|run| {
            run.cache.iter().flatten().enumerate().map(move |(i, b)| {
                let lookups = b.hits + b.misses + b.gated;
                let ratio = (lookups > 0).then(|| b.hits as f64 / lookups as f64);
                vec![
                    run.name.clone(),
                    fixed(Some(i as f64 * width), 3),
                    rate(b.hits),
                    rate(b.misses),
                    rate(b.gated),
                    fixed(ratio, 4),
                    b.entries.to_string(),
                ]
            })
        });
        to_csv(std::iter::once(header).chain(rows))
    }
}
