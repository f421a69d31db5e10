//! The figures a sweep measures in every run, summarises over replications and
//! can chart: the numeric columns of a run's `summary.csv`, plus the time the
//! last request succeeded (the AWS experiment's completion time).
//!
//! Most figures are summarised by their mean and its 95% confidence interval.
//! The recovery time is not: a run that never recovers has no finite recovery
//! time, and a mean over the runs that did would show a cell where most runs
//! never recover as a quick recovery. It is summarised by its median and its
//! largest value over all runs, with "never" counted as infinite. The share of
//! runs that recovered is a proportion: its interval is Wilson's, which stays
//! within [0, 1], not the mean's.

use super::{Bucket, MetricsConfig, Summary};
use crate::retry::Outcome;

/// One figure.
#[derive(Clone, Copy, Debug)]
pub struct Figure {
    /// Column stem in the sweep's `summary.csv` (`<name>_mean`, `<name>_ci95`)
    /// and chart file name (`<name>.png`).
    pub name: &'static str,
    /// Axis label, with its unit.
    pub label: &'static str,
    /// Decimals shown on screen and in charts (CSV keeps every digit).
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
    /// A share of the runs (each run's value is 0 or 1): the share and the
    /// ends of its Wilson 95% interval (`_share`, `_ci95_low`, `_ci95_high`).
    Share,
}

/// A figure summarised over the runs of a point, as its [`Stat`] says; `None`
/// parts where no run has the figure (or one run has no interval).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Estimate {
    /// Mean and the half-width of its 95% interval.
    Mean {
        /// The mean.
        mean: Option<f64>,
        /// Half-width of its Student t 95% interval.
        ci95: Option<f64>,
    },
    /// Median and largest value (either may be infinite: "never").
    Median {
        /// The median.
        median: Option<f64>,
        /// The largest value.
        max: Option<f64>,
    },
    /// A share of runs and its Wilson 95% interval.
    Share {
        /// The share, in [0, 1].
        share: Option<f64>,
        /// Lower end of the interval.
        low: Option<f64>,
        /// Upper end of the interval.
        high: Option<f64>,
    },
}

impl Estimate {
    /// Summarises `xs` (the runs' values) as `stat` says.
    pub fn of(stat: Stat, xs: &[f64]) -> Estimate {
        use crate::metrics::stats::{mean_ci95, median_max, wilson95};
        match stat {
            Stat::Mean => {
                let (mean, ci95) = mean_ci95(xs);
                Estimate::Mean { mean, ci95 }
            }
            Stat::Median => {
                let (median, max) = median_max(xs);
                Estimate::Median { median, max }
            }
            Stat::Share => {
                let k = xs.iter().filter(|&&x| x > 0.5).count() as u64;
                let w = wilson95(k, xs.len() as u64);
                Estimate::Share {
                    share: w.map(|w| w.0),
                    low: w.map(|w| w.1),
                    high: w.map(|w| w.2),
                }
            }
        }
    }

    /// The mean, median or share.
    pub fn value(&self) -> Option<f64> {
        match *self {
            Estimate::Mean { mean, .. } => mean,
            Estimate::Median { median, .. } => median,
            Estimate::Share { share, .. } => share,
        }
    }

    /// The 95% interval `(low, high)`, where there is one (not for a median).
    pub fn interval(&self) -> Option<(f64, f64)> {
        match *self {
            Estimate::Mean {
                mean: Some(m),
                ci95: Some(h),
            } => Some((m - h, m + h)),
            Estimate::Share {
                low: Some(l),
                high: Some(h),
                ..
            } => Some((l, h)),
            _ => None,
        }
    }

    /// The values of the figure's CSV columns, in [`Figure::suffixes`] order.
    pub fn columns(&self) -> Vec<Option<f64>> {
        match *self {
            Estimate::Mean { mean, ci95 } => vec![mean, ci95],
            Estimate::Median { median, max } => vec![median, max],
            Estimate::Share { share, low, high } => vec![share, low, high],
        }
    }
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
    /// What each of the figure's CSV columns holds, in [`Figure::suffixes`]
    /// order: the words a table's heading or a terminal's column uses.
    pub fn column_meanings(&self) -> &'static [&'static str] {
        match self.stat {
            Stat::Mean => &[
                "mean over the runs",
                "half-width of the 95% confidence interval of the mean",
            ],
            Stat::Median => &[
                "median over the runs (never: not within the run)",
                "largest over the runs (never: some run did not recover)",
            ],
            Stat::Share => &[
                "share of the runs",
                "lower end of the 95% interval of the share (Wilson)",
                "upper end of the 95% interval of the share (Wilson)",
            ],
        }
    }

    /// The CSV column suffixes of the figure's summary.
    pub fn suffixes(&self) -> &'static [&'static str] {
        match self.stat {
            Stat::Mean => &["mean", "ci95"],
            Stat::Median => &["median", "max"],
            Stat::Share => &["share", "ci95_low", "ci95_high"],
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
    Figure {
        stat: Stat::Share,
        ..fig("recovered", "share of runs that recovered", 4)
    },
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
        "successes_lost",
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
    fig(
        "events",
        "events the run loop handled (twins not included)",
        1,
    ),
];

/// Charts drawn when `[sweep]` names none.
pub const DEFAULT_CHARTS: [&str; 4] = [
    "amplification",
    "peak_load_ratio",
    "recovery_time_s",
    "failed",
];

/// Index of the figure named `name` (`lost_requests`, its name before it was
/// `successes_lost`, still reads).
pub fn index(name: &str) -> Option<usize> {
    let name = if name == "lost_requests" {
        "successes_lost"
    } else {
        name
    };
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
pub fn breaker_open_s<'a>(cfg: &MetricsConfig, buckets: impl Iterator<Item = &'a Bucket>) -> f64 {
    buckets.map(|b| b.breaker_open).sum::<f64>() * cfg.bucket.as_secs_f64()
}

/// One run's figures, in [`FIGURES`] order; `None` where a run has no such
/// figure (no successes, no capacity limit, no trigger). A run with a trigger
/// that never recovered has an infinite recovery time.
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
        s.successes_lost.map(|v| v as f64),
        s.extra_attempts.map(|v| v as f64),
        Some(s.peak_backlog),
        n(t.crashes),
        // Not the twin's: a twin shared by strategies is made by one of
        // them, and its events depend on which (whether it handled answers
        // in place), where its figures do not.
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
        assert_eq!(FIGURES[RECOVERY].stat, Stat::Median);
        assert_eq!(FIGURES[EVENTS].name, "events");
        assert!(DEFAULT_CHARTS.iter().all(|c| index(c).is_some()));
    }

    /// A sweep's figures are a run's `summary.csv` columns (one list,
    /// `metrics::columns`), but for the few only a sweep has.
    #[test]
    fn every_figure_is_a_summary_column_or_says_why_not() {
        let sweep_only = ["recovered", "last_success_s"];
        for f in &FIGURES {
            let known = crate::metrics::columns::summary(f.name).is_some();
            assert!(
                known || sweep_only.contains(&f.name),
                "{} is neither a summary.csv column nor a sweep's own figure",
                f.name
            );
        }
    }
}
