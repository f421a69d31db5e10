//! The figures a sweep measures in every run, summarises over replications and
//! can chart: the numeric columns of a run's `summary.csv`, plus the time the
//! last request succeeded (the AWS experiment's completion time).
//!
//! Most figures are summarised by their mean and its 95% confidence interval.
//! The recovery time is not: a run that never recovers has no finite recovery
//! time, and a mean over the runs that did would show a cell where most runs
//! never recover as a quick recovery. It is summarised by its median and its
//! largest value over all runs, with "never" counted as infinite.

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
    /// How replications are summarised.
    pub stat: Stat,
}

/// How a figure is summarised over the replications of a point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stat {
    /// Mean and the half-width of its 95% confidence interval (`_mean`, `_ci95`),
    /// over the runs that have the figure.
    Mean,
    /// Median and largest value over every run (`_median`, `_max`), where a
    /// run's value may be infinite ("never").
    Median,
}

const fn fig(name: &'static str, label: &'static str, decimals: usize) -> Figure {
    Figure {
        name,
        label,
        decimals,
        stat: Stat::Mean,
    }
}

impl Figure {
    /// The two CSV column suffixes of the figure's summary.
    pub fn suffixes(&self) -> [&'static str; 2] {
        match self.stat {
            Stat::Mean => ["mean", "ci95"],
            Stat::Median => ["median", "max"],
        }
    }
}

/// Every figure, in column order. [`measure`] returns values in this order.
pub const FIGURES: [Figure; 24] = [
    fig("succeeded", "requests that succeeded", 2),
    fig("failed", "requests that failed", 2),
    fig("in_flight_at_end", "requests unfinished at the end", 2),
    fig("attempts", "attempts sent", 2),
    fig("retries", "retries sent", 2),
    fig("amplification", "attempts per request", 4),
    fig("peak_attempts_per_s", "peak attempts per second", 1),
    fig("peak_load_ratio", "peak load / capacity", 4),
    Figure {
        stat: Stat::Median,
        ..fig("recovery_time_s", "recovery time after the trigger (s)", 3)
    },
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
    fig(
        "lost_requests",
        "successes lost to the trigger (vs. no trigger)",
        2,
    ),
    fig("extra_attempts", "extra attempts caused by the trigger", 2),
    fig(
        "peak_backlog",
        "peak backlog (queued + waiting to retry)",
        2,
    ),
    fig("crashes", "server crashes", 2),
    fig("events", "events simulated (twins included)", 1),
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
/// Index of `recovery_time_s`: infinite in runs that never recovered.
pub const RECOVERY: usize = 8;
/// Index of `events`.
pub const EVENTS: usize = FIGURES.len() - 1;

/// Seconds the breaker was open over a run: the time-averaged open share of each
/// bucket times the bucket width.
pub fn breaker_open_s(cfg: &MetricsConfig, buckets: &[Bucket]) -> f64 {
    buckets.iter().map(|b| b.breaker_open).sum::<f64>() * cfg.bucket.as_secs_f64()
}

/// One run's figures, in [`FIGURES`] order; `None` where a run has no such
/// figure (no successes, no capacity limit, no trigger). A run with a trigger
/// that never recovered has an infinite recovery time. `twin_events` are added
/// to the events figure.
pub fn measure(
    s: &Summary,
    has_outage: bool,
    breaker_open_s: f64,
    twin_events: u64,
) -> [Option<f64>; FIGURES.len()] {
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
        has_outage.then_some(s.recovery_time_s.unwrap_or(f64::INFINITY)),
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
        s.lost_requests.map(|v| v as f64),
        s.extra_attempts.map(|v| v as f64),
        Some(s.peak_backlog),
        n(t.crashes),
        n(t.events + twin_events),
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
        assert_eq!(FIGURES[RECOVERY].stat, Stat::Median);
        assert_eq!(FIGURES[EVENTS].name, "events");
        assert!(DEFAULT_CHARTS.iter().all(|c| index(c).is_some()));
    }
}
