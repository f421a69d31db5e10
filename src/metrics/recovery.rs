//! Recovery after a trigger, judged against a twin: the same world, strategy and
//! seed run without the trigger.
//!
//! "Normal" is what the twin does in the same bucket, not a level fixed before the
//! outage: the twin has the same arrivals (open load) or the same population
//! (closed load), so it shows what the system would have done at every instant.
//! The run is back to normal at a bucket when both hold there:
//!
//! - **goodput**: the run's successes fall short of the twin's by no more than
//!   the tolerance, and
//! - **backlog** (requests queued at the server plus requests waiting out a
//!   backoff): the run's exceeds the twin's by no more than the tolerance.
//!
//! The tolerance of each comparison is the larger of a practical one (a shortfall
//! of `1 - recovery_fraction` of the twin's goodput; a backlog excess of that share
//! of one bucket's normal completions) and a noise band: [`NOISE_Z`] times the
//! standard deviation of the difference of two independent copies, `sqrt(2)`
//! times the twin's own standard deviation of that figure over the run.
//!
//! Recovery is at the first bucket from which every `smoothing` window (sliding by
//! one bucket, to the end of the run) is normal, moved on to the first bucket that
//! is normal on its own, so the window does not report a recovery before the
//! backlog has drained. The recovery time runs from the end of the last trigger to
//! that bucket's start; a run whose last window is not normal never recovered.

use crate::engine::{SimDuration, SimTime};
use crate::metrics::{Bucket, MetricsConfig};

/// How many standard deviations of noise a difference must exceed to count. With
/// about 20 independent 2 s windows after a trigger in a 60 s run, a normal
/// (Gaussian) difference passes 4 sigma one-sided with probability 3e-5 per
/// window, under 1e-3 per run; `tests/it/recovery.rs` measures the rate.
pub const NOISE_Z: f64 = 4.0;

/// What a trigger did to a run, compared with its twin.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Recovery {
    /// Seconds from the end of the last trigger until the run is back to normal
    /// for good; `None` when it never is within the run.
    pub time_s: Option<f64>,
    /// Successes the twin had and the run did not, from the bucket where the
    /// first trigger starts to the recovery (the run's end if it never
    /// recovered), plus the requests a load spike added (demand the twin did
    /// not have): requests failed or never served because of the trigger.
    /// Never negative: a run that served more than its twin over the window
    /// (which only noise does, as the run and its twin drift apart after the
    /// trigger) lost none.
    pub successes_lost: u64,
    /// Attempts the run sent beyond the twin's over the same buckets. Negative
    /// when it sent fewer: clients waiting out timeouts or backoffs, breakers
    /// and budgets holding retries back, requests given up at once.
    pub extra_attempts: i64,
}

/// The noise scales of one figure, from the twin's series.
struct Band {
    /// Standard deviation of the figure per bucket.
    bucket_sd: f64,
    /// Standard deviation of its sum over a window.
    window_sd: f64,
}

impl Band {
    fn of(series: &[f64], k: usize) -> Band {
        let sums: Vec<f64> = series.windows(k).map(|w| w.iter().sum()).collect();
        Band {
            bucket_sd: sd(series),
            window_sd: sd(&sums),
        }
    }
}

/// Population standard deviation (0 for fewer than two values).
fn sd(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt()
}

/// The comparison of a run with its twin, bucket by bucket.
struct Judge {
    /// Successes per bucket: run, twin.
    good: (Vec<f64>, Vec<f64>),
    /// Backlog per bucket: run, twin.
    backlog: (Vec<f64>, Vec<f64>),
    good_band: Band,
    backlog_band: Band,
    /// Practical tolerance: a share of the twin's goodput.
    tol: f64,
    /// Backlog tolerance per bucket: `tol` times the twin's mean successes per bucket.
    backlog_tol: f64,
}

impl Judge {
    fn new(cfg: &MetricsConfig, run: &[Bucket], twin: &[Bucket], k: usize) -> Judge {
        let good = |b: &[Bucket]| b.iter().map(|b| b.successes as f64).collect::<Vec<_>>();
        let backlog = |b: &[Bucket]| b.iter().map(Bucket::backlog).collect::<Vec<_>>();
        let (g0, b0) = (good(twin), backlog(twin));
        let tol = (1.0 - cfg.recovery_fraction).max(0.0);
        let mean_good = g0.iter().sum::<f64>() / g0.len().max(1) as f64;
        Judge {
            good_band: Band::of(&g0, k),
            backlog_band: Band::of(&b0, k),
            good: (good(run), g0),
            backlog: (backlog(run), b0),
            tol,
            backlog_tol: tol * mean_good,
        }
    }

    /// Whether buckets `[i, i + k)` together are normal; `sd` picks the band.
    fn normal(&self, i: usize, k: usize, sd: impl Fn(&Band) -> f64) -> bool {
        let sum = |v: &[f64]| v[i..i + k].iter().sum::<f64>();
        let noise = |band: &Band| NOISE_Z * std::f64::consts::SQRT_2 * sd(band);
        let (g, g0) = (sum(&self.good.0), sum(&self.good.1));
        let (b, b0) = (sum(&self.backlog.0), sum(&self.backlog.1));
        let short = g0 - g <= (self.tol * g0).max(noise(&self.good_band));
        // Backlogs are compared as means over the buckets.
        let excess =
            (b - b0) / k as f64 <= self.backlog_tol.max(noise(&self.backlog_band) / k as f64);
        short && excess
    }
}

/// Compares `run` with `twin` (the same world without its triggers) after
/// triggers that span `[start, end)`; windows of `cfg.smoothing`. `added` is
/// the logical requests the triggers added (a load spike's), demand that the
/// twin did not have to serve.
pub fn judge(
    cfg: &MetricsConfig,
    run: &[Bucket],
    twin: &[Bucket],
    (start, end): (SimTime, SimTime),
    added: u64,
) -> Recovery {
    let n = run.len().min(twin.len());
    let (run, twin) = (&run[..n], &twin[..n]);
    let w = cfg.bucket.0.max(1);
    let k = ((cfg.smoothing.0 / w) as usize).clamp(1, n.max(1));
    let judge = Judge::new(cfg, run, twin, k);
    let first = end.0.div_ceil(w) as usize;
    // Scan the windows backwards: recovery is after the last abnormal one.
    let mut settled = None;
    for j in (first..(n + 1).saturating_sub(k)).rev() {
        if !judge.normal(j, k, |b| b.window_sd) {
            break;
        }
        settled = Some(j);
    }
    let at = settled.map(|j| {
        (j..n)
            .find(|&i| judge.normal(i, 1, |b| b.bucket_sd))
            .unwrap_or(j)
    });
    let from = ((start.0 / w) as usize).min(n);
    let until = at.unwrap_or(n).max(from);
    let diff = |f: fn(&Bucket) -> u64| {
        run[from..until]
            .iter()
            .zip(&twin[from..until])
            .map(|(r, t)| f(t) as i64 - f(r) as i64)
            .sum::<i64>()
    };
    Recovery {
        time_s: at.map(|i| SimDuration((i as u64 * w).saturating_sub(end.0)).as_secs_f64()),
        successes_lost: (diff(|b| b.successes) + added as i64).max(0) as u64,
        extra_attempts: -diff(|b| b.attempts),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(smoothing_buckets: u64) -> MetricsConfig {
        MetricsConfig {
            bucket: SimDuration::from_secs(1),
            baseline: SimDuration::from_secs(3),
            smoothing: SimDuration::from_secs(smoothing_buckets),
            recovery_fraction: 0.9,
        }
    }

    fn at(s: u64) -> SimTime {
        SimTime(s * 1_000_000_000)
    }

    /// Buckets with these successes (and as many attempts) and backlogs.
    fn buckets(successes: &[u64], backlog: &[f64]) -> Vec<Bucket> {
        successes
            .iter()
            .zip(backlog)
            .map(|(&s, &q)| Bucket {
                successes: s,
                attempts: s,
                queue_len: q,
                ..Bucket::default()
            })
            .collect()
    }

    fn flat(n: usize, s: u64) -> Vec<Bucket> {
        buckets(&vec![s; n], &vec![0.0; n])
    }

    #[test]
    fn recovery_is_the_first_bucket_after_the_last_shortfall() {
        // Twin: 100 per bucket, no noise. Trigger [3, 4); a dip at 6.
        let run = buckets(&[100, 100, 100, 0, 100, 100, 50, 100, 100, 100], &[0.0; 10]);
        let r = judge(&cfg(1), &run, &flat(10, 100), (at(3), at(4)), 0);
        assert_eq!(r.time_s, Some(3.0));
        // Lost: 100 in the trigger, 50 in the dip.
        assert_eq!(r.successes_lost, 150);
        assert_eq!(r.extra_attempts, -150);
    }

    #[test]
    fn goodput_above_normal_is_normal() {
        let run = buckets(&[100, 100, 0, 180, 120, 100, 100], &[0.0; 7]);
        let r = judge(&cfg(2), &run, &flat(7, 100), (at(2), at(3)), 0);
        assert_eq!(r.time_s, Some(0.0));
        // Counted to the recovery only: with no backlog left, the surplus after
        // it is not the trigger's to make up.
        assert_eq!(r.successes_lost, 100);
    }

    #[test]
    fn a_backlog_keeps_the_run_unrecovered_until_it_drains() {
        // Goodput is normal from the end of the trigger, but requests wait to
        // retry until bucket 6: recovered at 6, 2 s after the trigger ended at 4.
        let run = buckets(
            &[100, 100, 100, 0, 100, 100, 100, 100, 100, 100],
            &[0.0, 0.0, 0.0, 0.0, 80.0, 40.0, 0.0, 0.0, 0.0, 0.0],
        );
        let r = judge(&cfg(1), &run, &flat(10, 100), (at(3), at(4)), 0);
        assert_eq!(r.time_s, Some(2.0));
    }

    #[test]
    fn the_window_does_not_report_recovery_before_the_backlog_drains() {
        // The tolerance is 10% of a bucket's 100 completions: 10 waiting. The
        // 3-bucket window starting at 4 averages a backlog of 24 in bucket 4 to
        // 8, a pass; the bucket check moves the recovery on to bucket 5, where
        // the backlog is gone.
        let run = buckets(
            &[100, 100, 100, 0, 100, 100, 100, 100, 100, 100],
            &[0.0, 0.0, 0.0, 0.0, 24.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        );
        let r = judge(&cfg(3), &run, &flat(10, 100), (at(3), at(4)), 0);
        assert_eq!(r.time_s, Some(1.0));
        let loose = MetricsConfig {
            recovery_fraction: 0.7, // tolerance: 30 waiting
            ..cfg(3)
        };
        let r = judge(&loose, &run, &flat(10, 100), (at(3), at(4)), 0);
        assert_eq!(r.time_s, Some(0.0));
    }

    #[test]
    fn a_run_that_ends_below_normal_never_recovered() {
        let run = buckets(&[100, 100, 0, 0, 0, 0], &[0.0; 6]);
        let r = judge(&cfg(2), &run, &flat(6, 100), (at(2), at(3)), 0);
        assert_eq!(r.time_s, None);
        assert_eq!(r.successes_lost, 400);
    }

    #[test]
    fn noise_in_the_twin_widens_the_band() {
        // The twin alternates 60 and 140 (sd 40): a bucket of 60 against a twin's
        // 100 is a shortfall of 40, well inside 4 * sqrt(2) * 40.
        let twin: Vec<u64> = (0..10).map(|i| if i % 2 == 0 { 60 } else { 140 }).collect();
        let mut run = twin.clone();
        run[6] = twin[6] - 40;
        let r = judge(
            &cfg(1),
            &buckets(&run, &[0.0; 10]),
            &buckets(&twin, &[0.0; 10]),
            (at(2), at(3)),
            0,
        );
        assert_eq!(r.time_s, Some(0.0));
        // The dip is after the recovery, so it is not counted as lost.
        assert_eq!(r.successes_lost, 0);
    }

    /// Random series: the same buckets as their own twin have recovered at the
    /// trigger's end and lost nothing; taking successes away from the run never
    /// makes it lose less or recover sooner.
    #[test]
    fn properties_over_random_series() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for case in 0..500 {
            let n = rng.random_range(6..60usize);
            let twin: Vec<Bucket> = (0..n)
                .map(|_| Bucket {
                    successes: rng.random_range(0..200),
                    attempts: rng.random_range(0..300),
                    queue_len: rng.random_range(0.0..20.0),
                    backing_off: rng.random_range(0.0..5.0),
                    ..Bucket::default()
                })
                .collect();
            let end = rng.random_range(1..n as u64 - 2);
            let span = (at(end - 1), at(end));
            let c = cfg(rng.random_range(1..4));
            let same = judge(&c, &twin, &twin, span, 0);
            let first_window = (end as usize) + c.smoothing.0 as usize / 1_000_000_000;
            if first_window <= n {
                assert_eq!(same.time_s, Some(0.0), "case {case}");
            }
            assert_eq!((same.successes_lost, same.extra_attempts), (0, 0));
            let mut worse = twin.clone();
            let mut removed = 0;
            for b in worse.iter_mut().skip(end as usize - 1) {
                let cut = rng.random_range(0..=b.successes);
                b.successes -= cut;
                removed += cut;
            }
            let r = judge(&c, &worse, &twin, span, 0);
            assert!(
                r.successes_lost <= removed,
                "case {case}: lost more than removed"
            );
            if let (Some(a), Some(b)) = (same.time_s, r.time_s) {
                assert!(b >= a, "case {case}");
            }
        }
    }

    #[test]
    fn a_trigger_that_ends_after_the_last_window_is_never_judged_recovered() {
        let r = judge(&cfg(3), &flat(5, 10), &flat(5, 10), (at(3), at(4)), 0);
        assert_eq!(r.time_s, None);
    }
}
