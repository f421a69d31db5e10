//! The figures a sweep measures in every run, averages over replications and
//! can chart: the numeric columns of a run's `summary.csv`, plus the time the
//! last request succeeded (the AWS experiment's completion time).

use crate::metrics::{Bucket, MetricsConfig, Summary};
use crate::retry::Outcome;

/// One figure.
#[derive(Clone, Copy, Debug)]
pub struct Figure {
    /// Column stem in the sweep's `summary.csv` (`<name>_mean`, `<name>_ci95`)
    /// and chart file name (`<name>.png`).
    pub name: &'static str,
    /// Axis label, with its unit.
    pub label: &'static str,
    /// Decimals written in CSV.
    pub decimals: usize,
}

const fn fig(name: &'static str, label: &'static str, decimals: usize) -> Figure {
    Figure {
        name,
        label,
        decimals,
    }
}

/// Every figure, in column order. [`measure`] returns values in this order.
pub const FIGURES: [Figure; 20] = [
    fig("succeeded", "requests that succeeded", 2),
    fig("failed", "requests that failed", 2),
    fig("in_flight_at_end", "requests unfinished at the end", 2),
    fig("attempts", "attempts sent", 2),
    fig("retries", "retries sent", 2),
    fig("amplification", "attempts per request", 4),
    fig("peak_attempts_per_s", "peak attempts per second", 1),
    fig("peak_load_ratio", "peak load / capacity", 4),
    fig("recovery_time_s", "recovery time after the outage (s)", 3),
    fig("recovered", "share of runs that recovered", 4),
    fig("latency_p50_s", "median latency (s)", 6),
    fig("latency_p99_s", "p99 latency (s)", 6),
    fig("latency_mean_s", "mean latency (s)", 6),
    fig("wasted_work_fraction", "share of server work wasted", 6),
    fig("last_success_s", "time of the last success (s)", 6),
    fig("timeouts", "attempts timed out", 2),
    fig(
        "retries_denied_by_budget",
        "retries denied by the budget",
        2,
    ),
    fig("shed", "requests shed by the server", 2),
    fig("breaker_open_s", "time the breaker was open (s)", 3),
    fig("events", "events simulated", 1),
];

/// Charts drawn when `[sweep]` names none.
pub const DEFAULT_CHARTS: [&str; 4] = [
    "amplification",
    "peak_load_ratio",
    "recovery_time_s",
    "failed",
];

/// Index of the figure named `name`.
pub fn index(name: &str) -> Option<usize> {
    FIGURES.iter().position(|f| f.name == name)
}

/// Index of `in_flight_at_end`: a run with any is incomplete.
pub const IN_FLIGHT: usize = 2;
/// Index of `recovery_time_s`: absent in runs that never recovered.
pub const RECOVERY: usize = 8;
/// Index of `events`.
pub const EVENTS: usize = FIGURES.len() - 1;

/// Seconds the breaker was open over a run: the time-averaged open share of each
/// bucket times the bucket width.
pub fn breaker_open_s(cfg: &MetricsConfig, buckets: &[Bucket]) -> f64 {
    buckets.iter().map(|b| b.breaker_open).sum::<f64>() * cfg.bucket.as_secs_f64()
}

/// One run's figures, in [`FIGURES`] order; `None` where a run has no such
/// figure (no recovery, no successes, no capacity limit, no outage).
pub fn measure(s: &Summary, has_outage: bool, breaker_open_s: f64) -> [Option<f64>; FIGURES.len()] {
    let t = &s.totals;
    let n = |v: u64| Some(v as f64);
    [
        n(s.succeeded),
        n(s.failed),
        n(s.in_flight_at_end),
        n(s.attempts),
        n(s.retries),
        Some(s.amplification),
        Some(s.peak_attempts_per_s),
        s.peak_load_ratio,
        s.recovery_time_s,
        // 1 or 0 per run, so its mean is the share of runs that recovered.
        has_outage.then_some(if s.recovery_time_s.is_some() {
            1.0
        } else {
            0.0
        }),
        s.latency_p50_s,
        s.latency_p99_s,
        s.latency_mean_s,
        Some(s.wasted_work_fraction),
        (s.succeeded > 0).then(|| t.last_success_ns as f64 / 1e9),
        n(t.outcomes[Outcome::Timeout as usize]),
        n(t.failed_budget),
        n(t.shed),
        Some(breaker_open_s),
        n(t.events),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_the_fixed_indices_point_at_their_figures() {
        for (i, f) in FIGURES.iter().enumerate() {
            assert_eq!(index(f.name), Some(i), "{} appears twice", f.name);
        }
        assert_eq!(FIGURES[IN_FLIGHT].name, "in_flight_at_end");
        assert_eq!(FIGURES[RECOVERY].name, "recovery_time_s");
        assert_eq!(FIGURES[EVENTS].name, "events");
        assert!(DEFAULT_CHARTS.iter().all(|c| index(c).is_some()));
    }
}
