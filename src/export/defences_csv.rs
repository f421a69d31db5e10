//! `defences.csv`: what the server's own defences did, one row per
//! (strategy, time bucket): its adaptive concurrency limit, the attempts
//! the limiter answered 503, those CoDel dropped. Written only when some
//! strategy's server has a limiter or CoDel.

use super::{ExportError, Exporter, fixed, to_csv};
use crate::metrics::Report;

/// Writes `defences.csv`.
pub struct DefencesCsv;

impl Exporter for DefencesCsv {
    fn file_name(&self) -> &'static str {
        "defences.csv"
    }

    fn applies(&self, report: &Report) -> bool {
        report.runs.iter().any(|r| r.defences.is_some())
    }

    fn serialize(&self, report: &Report) -> Result<Vec<u8>, ExportError> {
        let width = report.metrics.bucket.as_secs_f64();
        let rate = |n: u64| fixed(Some(n as f64 / width), 1);
        let header = crate::metrics::columns::DEFENCES
            .iter()
            .map(|c| c.name.to_string())
            .collect();
        let rows = report.runs.iter().flat_map(|run| {
            run.defences
                .iter()
                .flatten()
                .enumerate()
                .map(move |(i, b)| {
                    vec![
                        run.name.clone(),
                        fixed(Some(i as f64 * width), 3),
                        b.limit.map_or(String::new(), |l| l.to_string()),
                        rate(b.limited),
                        rate(b.dropped),
                    ]
                })
        });
        to_csv(std::iter::once(header).chain(rows))
    }
}
