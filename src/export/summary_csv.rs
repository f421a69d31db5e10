//! `summary.csv`: one row per strategy.

use super::{ExportError, Exporter, fixed, to_csv};
use crate::metrics::Report;
use crate::retry::Outcome;

/// Writes `summary.csv`.
pub struct SummaryCsv;

impl Exporter for SummaryCsv {
    fn file_name(&self) -> &'static str {
        "summary.csv"
    }

    fn serialize(&self, report: &Report) -> Result<Vec<u8>, ExportError> {
        let header = crate::metrics::columns::SUMMARY
            .iter()
            .map(|c| c.name.to_string())
            .collect();
        let rows = report.runs.iter().map(|r| {
            let s = &r.summary;
            let t = &s.totals;
            let timeouts = t.outcomes[Outcome::Timeout as usize];
            let errors: u64 = Outcome::ALL
                .iter()
                .filter(|o| o.is_error_response())
                .map(|&o| t.outcomes[o as usize])
                .sum();
            vec![
                r.name.clone(),
                s.logical_requests.to_string(),
                s.succeeded.to_string(),
                s.failed.to_string(),
                s.attempts.to_string(),
                s.retries.to_string(),
                fixed(Some(s.amplification), 4),
                fixed(Some(s.peak_attempts_per_s), 1),
                fixed(s.peak_load_ratio, 3),
                fixed(s.recovery_time_s, 1),
                fixed(s.latency_p50_s, 6),
                fixed(s.latency_p99_s, 6),
                fixed(Some(s.wasted_work_fraction), 6),
                s.in_flight_at_end.to_string(),
                t.failed_not_retryable.to_string(),
                t.failed_exhausted.to_string(),
                t.failed_deadline.to_string(),
                timeouts.to_string(),
                errors.to_string(),
                fixed(s.baseline_goodput_per_s, 1),
                fixed(report.capacity_per_s, 1),
                t.events.to_string(),
                report.seed.to_string(),
                fixed(s.latency_mean_s, 6),
                t.failed_budget.to_string(),
                t.shed.to_string(),
                t.expired_dropped.to_string(),
                t.rejected_locally.to_string(),
                fixed(
                    Some(
                        r.buckets.iter().map(|b| b.breaker_open).sum::<f64>()
                            * report.metrics.bucket.as_secs_f64(),
                    ),
                    1,
                ),
                s.successes_lost.map_or(String::new(), |v| v.to_string()),
                s.extra_attempts.map_or(String::new(), |v| v.to_string()),
                fixed(Some(s.peak_backlog), 1),
                t.crashes.to_string(),
                fixed(
                    Some(if t.busy_ns == 0 {
                        0.0
                    } else {
                        t.reject_ns as f64 / t.busy_ns as f64
                    }),
                    6,
                ),
                t.rejected_first.to_string(),
                t.peak_held.to_string(),
            ]
        });
        to_csv(std::iter::once(header).chain(rows))
    }
}
