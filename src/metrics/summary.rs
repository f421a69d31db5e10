//! Summary figures of a run: amplification, peak load, latency quantiles, wasted
//! work, and what the trigger cost (recovery time, lost requests, extra attempts,
//! backlog) against the run's twin without the trigger.

use crate::engine::{SimDuration, SimTime};
use crate::metrics::recovery::{Recovery, judge};
use crate::metrics::{Bucket, Histogram, Series, Totals};

/// How a run is measured.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricsConfig {
    /// Width of a time bucket (default 100 ms).
    pub bucket: SimDuration,
    /// The pre-outage goodput level is the mean over this window just before the
    /// first outage starts (default 10 s).
    pub baseline: SimDuration,
    /// Recovery is judged on windows of this length, sliding by one bucket, from
    /// the candidate instant to the end of the run (default 2 s).
    pub smoothing: SimDuration,
    /// Back to normal means goodput at least this fraction of the twin's, and a
    /// backlog at most `1 - recovery_fraction` of a bucket's normal completions
    /// above the twin's, beyond noise (default 0.9; see [`crate::metrics::recovery`]).
    pub recovery_fraction: f64,
    /// A latency a success should not exceed: `slow.csv` counts those
    /// slower (none unless set).
    pub slow: Option<SimDuration>,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig {
            bucket: SimDuration::from_millis(100),
            baseline: SimDuration::from_secs(10),
            smoothing: SimDuration::from_secs(2),
            recovery_fraction: 0.9,
            slow: None,
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
    /// Seconds from the end of the last trigger until goodput and backlog are
    /// back to the twin's for good; `None` when they never are, or when there is
    /// no trigger.
    pub recovery_time_s: Option<f64>,
    /// The twin itself, the run without the trigger, crashed, or more than
    /// 1% of its attempts met overload (timed out, reset, refused, 429, 503): the world is overloaded without the trigger,
    /// and no recovery is measured against it (`recovery_time_s` is `None`).
    /// Not a column of `summary.csv`, whose recovery is then empty.
    pub twin_overloaded: bool,
    /// Successes the twin had and this run did not, from the trigger to the
    /// recovery (or the end), never negative; `None` without a trigger.
    pub successes_lost: Option<u64>,
    /// Attempts beyond the twin's over the same buckets, negative when the run
    /// sent fewer; `None` without a trigger.
    pub extra_attempts: Option<i64>,
    /// The largest backlog (queued plus waiting to retry, time-averaged over a
    /// bucket) in the run.
    pub peak_backlog: f64,
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
    /// Successes slower than `[metrics] slow`, if set (from the latency
    /// histogram: one within 0.8% above the threshold counts as within it).
    pub slower: Option<u64>,
    /// Run totals (failures by reason, outcomes, events).
    pub totals: Totals,
}

/// Computes the summary of a run.
///
/// `in_flight_at_end` is counted by the caller from the clients' state, so that
/// the invariant `succeeded + failed + in flight = started` is a real check.
/// `outages` are the `[start, end)` windows of the triggers; `twin` the buckets of
/// the same run without them (needed for the recovery figures); `capacity_per_s`
/// the server's completions per second at full speed.
#[allow(clippy::too_many_arguments)]
pub fn summarize(
    cfg: &MetricsConfig,
    buckets: &Series,
    twin: Option<&Series>,
    latency: &Histogram,
    totals: &Totals,
    in_flight_at_end: u64,
    outages: &[(SimTime, SimTime)],
    capacity_per_s: Option<f64>,
) -> Summary {
    let width_s = cfg.bucket.as_secs_f64();
    let peak = buckets.max(|b| b.attempts as f64) / width_s;
    // The trigger's figures read the buckets in full (a run with a
    // trigger seldom ends early).
    let full = (!outages.is_empty()).then(|| buckets.to_vec());
    let baseline = full
        .as_deref()
        .and_then(|b| baseline_goodput(cfg, b, outages));
    let span = outages
        .iter()
        .map(|o| o.0)
        .min()
        .zip(outages.iter().map(|o| o.1).max());
    let recovery: Option<Recovery> = span
        .zip(twin)
        .zip(full.as_deref())
        .map(|((span, twin), run)| judge(cfg, run, &twin.to_vec(), span, totals.spike_requests));
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
        recovery_time_s: recovery.and_then(|r| r.time_s),
        twin_overloaded: false,
        successes_lost: recovery.map(|r| r.successes_lost),
        extra_attempts: recovery.map(|r| r.extra_attempts),
        peak_backlog: buckets.max(Bucket::backlog),
        latency_p50_s: latency.quantile(0.5).map(SimDuration::as_secs_f64),
        latency_p99_s: latency.quantile(0.99).map(SimDuration::as_secs_f64),
        latency_mean_s: (totals.succeeded > 0)
            .then(|| totals.latency_sum_ns as f64 / totals.succeeded as f64 / 1e9),
        wasted_work_fraction: ratio(totals.wasted_ns, totals.busy_ns),
        baseline_goodput_per_s: baseline,
        slower: cfg.slow.map(|t| latency.count_above(t)),
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
            slow: None,
        }
    }

    fn at(s: u64) -> SimTime {
        SimTime(s * 1_000_000_000)
    }

    #[test]
    fn the_summary_carries_the_twin_comparison() {
        // Baseline 10/s over t = 2..5 s; outage 5..7 s; a dip at 8..9 s; back from 9 s.
        let b = buckets(&[10, 10, 10, 10, 10, 0, 0, 10, 5, 10, 10, 10]);
        let twin = buckets(&[10; 12]);
        let s = summarize(
            &cfg(),
            &Series::of(b),
            Some(&Series::of(twin)),
            &Histogram::new(),
            &Totals::default(),
            0,
            &[(at(5), at(7))],
            Some(20.0),
        );
        assert_eq!(s.baseline_goodput_per_s, Some(10.0));
        // The bucket 9..10 s starts the good run: 2 s after the outage ended at 7 s.
        assert_eq!(s.recovery_time_s, Some(2.0));
        assert_eq!((s.successes_lost, s.extra_attempts), (Some(25), Some(-25)));
        assert_eq!(s.peak_attempts_per_s, 10.0);
        assert_eq!(s.peak_load_ratio, Some(0.5));
    }

    #[test]
    fn no_outage_means_no_recovery_figures() {
        let b = buckets(&[5, 5]);
        let s = summarize(
            &cfg(),
            &Series::of(b.clone()),
            Some(&Series::of(b)),
            &Histogram::new(),
            &Totals::default(),
            0,
            &[],
            Some(10.0),
        );
        assert_eq!((s.baseline_goodput_per_s, s.recovery_time_s), (None, None));
        assert_eq!((s.successes_lost, s.extra_attempts), (None, None));
    }

    #[test]
    fn the_peak_backlog_adds_the_queue_and_the_requests_backing_off() {
        let mut b = buckets(&[5, 5, 5]);
        b[1].queue_len = 3.0;
        b[1].backing_off = 4.5;
        b[2].queue_len = 7.0;
        let s = summarize(
            &cfg(),
            &Series::of(b),
            None,
            &Histogram::new(),
            &Totals::default(),
            0,
            &[],
            None,
        );
        assert_eq!(s.peak_backlog, 7.5);
    }
}
