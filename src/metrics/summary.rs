//! Summary figures of a run: amplification, peak load, latency quantiles, wasted
//! work and recovery time.

use crate::engine::{SimDuration, SimTime};
use crate::metrics::{Bucket, Histogram, Totals};

/// How a run is measured.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricsConfig {
    /// Width of a time bucket (default 100 ms).
    pub bucket: SimDuration,
    /// The pre-outage goodput level is the mean over this window just before the
    /// first outage starts (default 10 s).
    pub baseline: SimDuration,
    /// Recovery is judged on mean goodput over windows of this length that start
    /// at or after the candidate instant (default 2 s).
    pub smoothing: SimDuration,
    /// Recovered means smoothed goodput at least this fraction of the baseline from
    /// then to the end of the run (default 0.9).
    pub recovery_fraction: f64,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig {
            bucket: SimDuration::from_millis(100),
            baseline: SimDuration::from_secs(10),
            smoothing: SimDuration::from_secs(2),
            recovery_fraction: 0.9,
        }
    }
}

/// The figures of one run, one row of `summary.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Logical requests started.
    pub logical_requests: u64,
    /// Logical requests that succeeded.
    pub succeeded: u64,
    /// Logical requests given up (any reason).
    pub failed: u64,
    /// Logical requests still in progress when the run ended.
    pub in_flight_at_end: u64,
    /// Attempts sent.
    pub attempts: u64,
    /// Of which retries.
    pub retries: u64,
    /// Attempts per logical request.
    pub amplification: f64,
    /// Largest attempts rate over one bucket, per second.
    pub peak_attempts_per_s: f64,
    /// `peak_attempts_per_s` over the server's capacity (`None`: no capacity limit).
    pub peak_load_ratio: Option<f64>,
    /// Seconds from the end of the last outage until goodput is back for good;
    /// `None` when it never is, or when there is no outage.
    pub recovery_time_s: Option<f64>,
    /// Median latency of successful logical requests (first attempt to success), s.
    pub latency_p50_s: Option<f64>,
    /// 99th percentile of the same, s.
    pub latency_p99_s: Option<f64>,
    /// Mean of the same, s (exact).
    pub latency_mean_s: Option<f64>,
    /// Share of the server's busy time spent on answers nobody waited for.
    pub wasted_work_fraction: f64,
    /// Pre-outage goodput level, successes per second.
    pub baseline_goodput_per_s: Option<f64>,
    /// Run totals (failures by reason, outcomes, events).
    pub totals: Totals,
}

/// Computes the summary of a run.
///
/// `in_flight_at_end` is counted by the caller from the clients' state, so that
/// the invariant `succeeded + failed + in flight = started` is a real check.
/// `outages` are the `[start, end)` windows; `capacity_per_s` the server's
/// completions per second at full speed.
pub fn summarize(
    cfg: &MetricsConfig,
    buckets: &[Bucket],
    latency: &Histogram,
    totals: &Totals,
    in_flight_at_end: u64,
    outages: &[(SimTime, SimTime)],
    capacity_per_s: Option<f64>,
) -> Summary {
    let width_s = cfg.bucket.as_secs_f64();
    let peak = buckets.iter().map(|b| b.attempts).max().unwrap_or(0) as f64 / width_s;
    let baseline = baseline_goodput(cfg, buckets, outages);
    let recovery = match (baseline, outages.iter().map(|o| o.1).max()) {
        (Some(level), Some(end)) => recovery_time(cfg, buckets, level, end),
        _ => None,
    };
    let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    Summary {
        logical_requests: totals.started,
        succeeded: totals.succeeded,
        failed: totals.failed(),
        in_flight_at_end,
        attempts: totals.attempts,
        retries: totals.retries,
        amplification: ratio(totals.attempts, totals.started),
        peak_attempts_per_s: peak,
        peak_load_ratio: capacity_per_s.filter(|c| *c > 0.0).map(|c| peak / c),
        recovery_time_s: recovery,
        latency_p50_s: latency.quantile(0.5).map(SimDuration::as_secs_f64),
        latency_p99_s: latency.quantile(0.99).map(SimDuration::as_secs_f64),
        latency_mean_s: (totals.succeeded > 0)
            .then(|| totals.latency_sum_ns as f64 / totals.succeeded as f64 / 1e9),
        wasted_work_fraction: ratio(totals.wasted_ns, totals.busy_ns),
        baseline_goodput_per_s: baseline,
        totals: *totals,
    }
}

/// Goodput of each bucket, successes per second.
pub fn goodput_per_s(cfg: &MetricsConfig, buckets: &[Bucket]) -> Vec<f64> {
    let width_s = cfg.bucket.as_secs_f64();
    buckets
        .iter()
        .map(|b| b.successes as f64 / width_s)
        .collect()
}

/// Mean goodput over the `baseline` window before the first outage.
fn baseline_goodput(
    cfg: &MetricsConfig,
    buckets: &[Bucket],
    outages: &[(SimTime, SimTime)],
) -> Option<f64> {
    let first = outages.iter().map(|o| o.0).min()?;
    let w = cfg.bucket.0;
    let last = (first.0 / w) as usize; // buckets [from, last) end by the outage start
    let from = last.saturating_sub((cfg.baseline.0 / w) as usize);
    let window = buckets.get(from..last).filter(|s| !s.is_empty())?;
    Some(
        window.iter().map(|b| b.successes).sum::<u64>() as f64
            / (window.len() as f64 * cfg.bucket.as_secs_f64()),
    )
}

/// Seconds from `end` (the end of the last outage) to the first bucket start `t`
/// such that every smoothing window starting at or after `t` has a mean goodput of
/// at least `fraction * level`. The window looks forward from `t`, so smoothing
/// adds no lag: a server back at full goodput the instant the outage ends has a
/// recovery time of zero.
fn recovery_time(cfg: &MetricsConfig, buckets: &[Bucket], level: f64, end: SimTime) -> Option<f64> {
    let w = cfg.bucket.0;
    let k = ((cfg.smoothing.0 / w) as usize).clamp(1, buckets.len().max(1));
    let goodput = goodput_per_s(cfg, buckets);
    let threshold = cfg.recovery_fraction * level;
    // windows[i] = mean goodput over buckets [i, i + k).
    let windows: Vec<f64> = goodput
        .windows(k)
        .map(|g| g.iter().sum::<f64>() / k as f64)
        .collect();
    // The first bucket that starts at or after the outage's end.
    let first = end.0.div_ceil(w) as usize;
    // Scan backwards: recovery starts just after the last window below threshold.
    let mut recovered_at = None;
    for i in (first..windows.len()).rev() {
        if windows[i] < threshold {
            break;
        }
        recovered_at = Some(i);
    }
    let i = recovered_at?;
    Some(SimDuration((i as u64 * w).saturating_sub(end.0)).as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buckets(successes: &[u64]) -> Vec<Bucket> {
        successes
            .iter()
            .map(|&s| Bucket {
                successes: s,
                attempts: s,
                ..Bucket::default()
            })
            .collect()
    }

    fn cfg() -> MetricsConfig {
        MetricsConfig {
            bucket: SimDuration::from_secs(1),
            baseline: SimDuration::from_secs(3),
            smoothing: SimDuration::from_secs(1),
            recovery_fraction: 0.9,
        }
    }

    fn at(s: u64) -> SimTime {
        SimTime(s * 1_000_000_000)
    }

    fn recovery(c: &MetricsConfig, successes: &[u64], outage: (u64, u64)) -> Option<f64> {
        let b = buckets(successes);
        let s = summarize(
            c,
            &b,
            &Histogram::new(),
            &Totals::default(),
            0,
            &[(at(outage.0), at(outage.1))],
            Some(20.0),
        );
        s.recovery_time_s
    }

    #[test]
    fn recovery_is_measured_from_the_outage_end_to_the_last_dip() {
        // Baseline 10/s over t = 2..5 s; outage 5..7 s; a dip at 8..9 s; back from 9 s.
        let b = buckets(&[0, 0, 10, 10, 10, 0, 0, 10, 5, 10, 9, 10]);
        let s = summarize(
            &cfg(),
            &b,
            &Histogram::new(),
            &Totals::default(),
            0,
            &[(at(5), at(7))],
            Some(20.0),
        );
        assert_eq!(s.baseline_goodput_per_s, Some(10.0));
        // The bucket 9..10 s starts the good run: 2 s after the outage ended at 7 s.
        assert_eq!(s.recovery_time_s, Some(2.0));
        assert_eq!(s.peak_attempts_per_s, 10.0);
        assert_eq!(s.peak_load_ratio, Some(0.5));
    }

    #[test]
    fn no_recovery_when_the_last_window_is_low() {
        assert_eq!(recovery(&cfg(), &[10, 10, 10, 0, 10, 10, 3], (3, 4)), None);
    }

    #[test]
    fn smoothing_averages_over_a_forward_window() {
        // 2 s windows starting at 4 s: (10+4)/2 = 7; at 5 s: (4+10)/2 = 7; from 6 s
        // on: 10. Below 9 until 6 s, so recovery is 6 - 4 = 2 s.
        let c = MetricsConfig {
            smoothing: SimDuration::from_secs(2),
            ..cfg()
        };
        assert_eq!(
            recovery(&c, &[10, 10, 10, 0, 10, 4, 10, 10, 10], (3, 4)),
            Some(2.0)
        );
    }

    #[test]
    fn immediate_recovery_is_zero() {
        assert_eq!(
            recovery(&cfg(), &[10, 10, 10, 0, 10, 10, 10], (3, 4)),
            Some(0.0)
        );
    }

    #[test]
    fn no_outage_means_no_recovery_figure() {
        let s = summarize(
            &cfg(),
            &buckets(&[5, 5]),
            &Histogram::new(),
            &Totals::default(),
            0,
            &[],
            Some(10.0),
        );
        assert_eq!((s.baseline_goodput_per_s, s.recovery_time_s), (None, None));
    }
}
