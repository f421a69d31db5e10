//! `proxies.csv`: what each proxy saw, one row per (strategy, proxy).
//! Written only when some strategy's users are behind several proxies, or
//! their proxies have pool limits.

use super::{ExportError, Exporter, fixed, to_csv};
use crate::metrics::Report;

/// Writes `proxies.csv`.
pub struct ProxiesCsv;

impl Exporter for ProxiesCsv {
    fn file_name(&self) -> &'static str {
        "proxies.csv"
    }

    fn applies(&self, report: &Report) -> bool {
        report.runs.iter().any(|r| r.proxies.is_some())
    }

    fn serialize(&self, report: &Report) -> Result<Vec<u8>, ExportError> {
        let header = crate::metrics::columns::PROXIES
            .iter()
            .map(|c| c.name.to_string())
            .collect();
        let rows = report.runs.iter().flat_map(|run| {
            run.proxies.iter().flatten().enumerate().map(|(p, t)| {
                let amplification = (t.requests > 0).then(|| t.attempts as f64 / t.requests as f64);
                vec![
                    run.name.clone(),
                    p.to_string(),
                    t.requests.to_string(),
                    t.succeeded.to_string(),
                    t.failed.to_string(),
                    t.in_flight_at_end.to_string(),
                    t.attempts.to_string(),
                    t.retries.to_string(),
                    fixed(amplification, 3),
                    t.budget_denied.to_string(),
                    t.rejected_locally.to_string(),
                    t.overflow.to_string(),
                    t.waited.to_string(),
                    t.ejections.to_string(),
                ]
            })
        });
        to_csv(std::iter::once(header).chain(rows))
    }
}
