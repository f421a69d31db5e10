//! `tiers.csv`: a call chain's tiers, one row per (strategy, tier). Written
//! only when the scenario has services.

use super::{ExportError, Exporter, fixed, to_csv};
use crate::metrics::Report;

/// Writes `tiers.csv`.
pub struct TiersCsv;

impl Exporter for TiersCsv {
    fn file_name(&self) -> &'static str {
        "tiers.csv"
    }

    fn applies(&self, report: &Report) -> bool {
        report.runs.iter().any(|r| r.tiers.is_some())
    }

    fn serialize(&self, report: &Report) -> Result<Vec<u8>, ExportError> {
        let header = crate::metrics::columns::TIERS
            .iter()
            .map(|c| c.name.to_string())
            .collect();
        let rows = report.runs.iter().flat_map(|run| {
            let users = run
                .tiers
                .as_ref()
                .and_then(|t| t.first())
                .map_or(0, |t| t.1.totals.calls);
            run.tiers
                .iter()
                .flatten()
                .enumerate()
                .map(move |(k, (name, tier))| {
                    let t = &tier.totals;
                    let per = |v: u64| (users > 0).then(|| v as f64 / users as f64);
                    let secs = |ns: u64| Some(ns as f64 / 1e9);
                    vec![
                        run.name.clone(),
                        k.to_string(),
                        name.clone(),
                        t.calls.to_string(),
                        t.calls_failed.to_string(),
                        t.rejected_locally.to_string(),
                        t.attempts.to_string(),
                        t.retries.to_string(),
                        fixed(per(t.attempts), 3),
                        t.ok.to_string(),
                        fixed(secs(t.work_ns), 3),
                        fixed(secs(t.wasted_ns), 3),
                        fixed(
                            (t.work_ns > 0).then(|| t.wasted_ns as f64 / t.work_ns as f64),
                            3,
                        ),
                        fixed(tier.latency_p50.map(|d| d.as_secs_f64()), 4),
                        fixed(tier.latency_p99.map(|d| d.as_secs_f64()), 4),
                    ]
                })
        });
        to_csv(std::iter::once(header).chain(rows))
    }
}
