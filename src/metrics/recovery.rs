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
//! of one bucket's normal completions) and a noise band: how far two independent
//! copies of the figure differ, fitted to the twin's own series, exceeded by
//! noise alone in one run in a thousand ([`FALSE_ALARMS_PER_RUN`]). Goodput's is
//! Gaussian; the backlog's has an exponential tail, as queues do.
//!
//! Recovery is at the first bucket from which every `smoothing` window (sliding by
//! one bucket, to the end of the run) is normal, moved on to the first bucket that
//! is normal on its own, so the window does not report a recovery before the
//! backlog has drained. The recovery time runs from the end of the last trigger to
//! that bucket's start; a run whose last window is not normal never recovered.

use crate::engine::{SimDuration, SimTime};
use crate::metrics::{Bucket, MetricsConfig};

/// The chance, per run, that noise alone keeps a recovered run from being
/// judged recovered (or delays it): one run in a thousand. It is shared out
/// among the run's independent windows after the trigger (a Bonferroni
/// bound), so a run ten times as long gets a wider band, not ten times the
/// false alarms; `tests/it/recovery.rs` measures the rate on 50 s and 600 s
/// runs.
pub const FALSE_ALARMS_PER_RUN: f64 = 1e-3;

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

/// The noise bands of one figure, from the twin's series: how far the run
/// may differ from the twin, one bucket or one window at a time, before the
/// difference counts.
struct Band {
    bucket: f64,
    window: f64,
}

impl Band {
    /// Goodput: a count of many nearly independent completions, Gaussian by
    /// the central limit theorem. The difference of two independent copies
    /// has `sqrt(2)` times the twin's standard deviation; the band is its
    /// one-sided `1 - alpha` quantile.
    fn gaussian(series: &[f64], k: usize, alpha: f64) -> Band {
        let z = normal_quantile(1.0 - alpha) * std::f64::consts::SQRT_2;
        Band {
            bucket: z * sd(series),
            window: z * sd(&window_sums(series, k)),
        }
    }

    /// Backlog: queue lengths have exponential tails (an M/M/1 queue's is
    /// geometric), which a Gaussian band of a few standard deviations
    /// underestimates (two independent exponential copies differ by more
    /// than 4 sqrt(2) of their standard deviations with probability 1.7e-3,
    /// not 3e-5). The band is fitted to the twin's own distribution instead:
    /// [`exponential_tail`] of the differences between the twin's figure at
    /// distant times, which are as two independent copies.
    fn fitted(series: &[f64], k: usize, alpha: f64) -> Band {
        Band {
            bucket: exponential_tail(&distant_differences(series, 1), alpha),
            window: exponential_tail(&distant_differences(&window_sums(series, k), k), alpha),
        }
    }
}

/// The sums of `k` consecutive values, sliding by one.
fn window_sums(series: &[f64], k: usize) -> Vec<f64> {
    series.windows(k).map(|w| w.iter().sum()).collect()
}

/// Differences `x[i] - x[i + lag]` (indices taken around the end) at the
/// lags of a quarter, a half and three quarters of the series, none under
/// `apart` (so that two windows compared do not overlap): `3 n` draws of
/// the difference of two copies of the figure far apart in time, in both
/// signs.
fn distant_differences(xs: &[f64], apart: usize) -> Vec<f64> {
    let n = xs.len();
    if n < 2 {
        return Vec::new();
    }
    let mut out = Vec::with_capacity(3 * n);
    for q in 1..=3 {
        let lag = (q * n / 4).clamp(apart.min(n - 1), n - 1).max(1);
        out.extend((0..n).map(|i| xs[i] - xs[(i + lag) % n]));
    }
    out
}

/// The value exceeded with probability `alpha` by a draw from the
/// distribution of `xs`, its upper tail taken as exponential past the 90th
/// percentile (a peaks-over-threshold fit, Pickands 1975, with the
/// generalised Pareto's shape at 0): `u + beta * ln(p_u / alpha)`, where `u`
/// is the threshold, `p_u` the share of draws above it and `beta` their mean
/// excess over it. 0 when no draw is above the threshold.
fn exponential_tail(xs: &[f64], alpha: f64) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    let mut sorted = xs.to_vec();
    sorted.sort_by(f64::total_cmp);
    let u = sorted[(sorted.len() * 9 / 10).min(sorted.len() - 1)];
    let above: Vec<f64> = sorted.iter().filter(|&&x| x > u).map(|x| x - u).collect();
    if above.is_empty() {
        return u.max(0.0);
    }
    let p_u = above.len() as f64 / sorted.len() as f64;
    let beta = above.iter().sum::<f64>() / above.len() as f64;
    (u + beta * (p_u / alpha).max(1.0).ln()).max(0.0)
}

/// The standard normal quantile: Acklam's rational approximation (2003),
/// relative error under 1.2e-9 over (0, 1).
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969683028665376e1,
        2.209460984245205e2,
        -2.759285104469687e2,
        1.383_577_518_672_69e2,
        -3.066479806614716e1,
        2.506628277459239,
    ];
    const B: [f64; 5] = [
        -5.447609879822406e1,
        1.615858368580409e2,
        -1.556989798598866e2,
        6.680131188771972e1,
        -1.328068155288572e1,
    ];
    const C: [f64; 6] = [
        -7.784894002430293e-3,
        -3.223964580411365e-1,
        -2.400758277161838,
        -2.549732539343734,
        4.374664141464968,
        2.938163982698783,
    ];
    const D: [f64; 4] = [
        7.784695709041462e-3,
        3.224671290700398e-1,
        2.445134137142996,
        3.754408661907416,
    ];
    let p = p.clamp(1e-300, 1.0 - 1e-16);
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < 0.02425 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.02425 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
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
    /// `alpha`: the chance per window that noise alone fails it. The bands
    /// are fitted to the twin from bucket `from` on (where the first trigger
    /// starts): the stretch the run is compared over, past the start-up of a
    /// world that begins empty, whose climb to its usual backlog is no
    /// noise (with it, a few seconds of the twin's first minute widened the
    /// backlog band past a real backlog three times the normal one). With
    /// fewer than four windows there, the whole series.
    fn new(
        cfg: &MetricsConfig,
        (run, twin): (&[Bucket], &[Bucket]),
        k: usize,
        from: usize,
        alpha: f64,
    ) -> Judge {
        let good = |b: &[Bucket]| b.iter().map(|b| b.successes as f64).collect::<Vec<_>>();
        let backlog = |b: &[Bucket]| b.iter().map(Bucket::backlog).collect::<Vec<_>>();
        let (g0, b0) = (good(twin), backlog(twin));
        let tol = (1.0 - cfg.recovery_fraction).max(0.0);
        let mean_good = g0.iter().sum::<f64>() / g0.len().max(1) as f64;
        let from = if g0.len().saturating_sub(from) >= 4 * k {
            from
        } else {
            0
        };
        Judge {
            good_band: Band::gaussian(&g0[from..], k, alpha),
            backlog_band: Band::fitted(&b0[from..], k, alpha),
            good: (good(run), g0),
            backlog: (backlog(run), b0),
            tol,
            backlog_tol: tol * mean_good,
        }
    }

    /// Whether buckets `[i, i + k)` together are normal; `noise` picks the
    /// band (a bucket's or a window's).
    fn normal(&self, i: usize, k: usize, noise: impl Fn(&Band) -> f64) -> bool {
        let sum = |v: &[f64]| v[i..i + k].iter().sum::<f64>();
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
    let first = end.0.div_ceil(w) as usize;
    // The independent windows judged after the trigger share the run's
    // false-alarm chance.
    let windows = (n.saturating_sub(first) / k).max(1);
    let from = ((start.0 / w) as usize).min(n);
    let alpha = FALSE_ALARMS_PER_RUN / windows as f64;
    let judge = Judge::new(cfg, (run, twin), k, from, alpha);
    // Scan the windows backwards: recovery is after the last abnormal one.
    let mut settled = None;
    for j in (first..(n + 1).saturating_sub(k)).rev() {
        if !judge.normal(j, k, |b| b.window) {
            break;
        }
        settled = Some(j);
    }
    let at = settled.map(|j| {
        (j..n)
            .find(|&i| judge.normal(i, 1, |b| b.bucket))
            .unwrap_or(j)
    });
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
            slow: None,
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
    fn the_normal_quantile_matches_the_tables() {
        // Abramowitz and Stegun, table 26.1; 0.5 is exact.
        for (p, z) in [
            (0.5, 0.0),
            (0.975, 1.959_963_985),
            (0.99, 2.326_347_874),
            (1.0 - 3.167_124e-5, 4.0),
            (0.025, -1.959_963_985),
        ] {
            assert!(
                (normal_quantile(p) - z).abs() < 1e-6,
                "{p}: {}",
                normal_quantile(p)
            );
        }
    }

    /// The tail fit on exponential draws finds their quantiles: for a mean of
    /// 1, the `1 - alpha` quantile is `ln(1 / alpha)`. 200 000 draws put about
    /// 20 000 over the threshold, whose mean excess has a standard error of
    /// 0.7%: 2% is about three of them, at the farthest quantile.
    #[test]
    fn the_tail_fit_finds_an_exponential_quantile() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let xs: Vec<f64> = (0..200_000)
            .map(|_| -(1.0 - rng.random::<f64>()).ln())
            .collect();
        for alpha in [1e-3f64, 1e-5, 1e-7] {
            let want = (1.0 / alpha).ln();
            let got = exponential_tail(&xs, alpha);
            assert!((got / want - 1.0).abs() < 0.02, "{alpha}: {got} vs {want}");
        }
        assert_eq!(exponential_tail(&[0.0; 100], 1e-5), 0.0);
        assert_eq!(exponential_tail(&[], 1e-5), 0.0);
    }

    /// A backlog with an exponential tail: queue excursions that last 4 s
    /// (blocks of 40 buckets of 100 ms at one level, the levels exponential
    /// with a mean of 5), a run that is an independent copy of its twin,
    /// 6000 buckets, 2 s windows. The Gaussian band this measure used (4
    /// sqrt(2) standard deviations of the twin's window sums) is crossed by
    /// a difference of two such levels with probability 0.5 exp(-4 sqrt(2)) =
    /// 1.7e-3 a pair of blocks, so in about one run in four (150 blocks)
    /// or more (windows that straddle two blocks add some): 19 of these 50
    /// runs; the test asks for 3. The fitted band, shared out
    /// over the run's 300 windows, is crossed by none: each run counts as
    /// recovered at once.
    #[test]
    fn an_exponential_backlog_raises_no_false_alarm() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut excursions = || -> Vec<Bucket> {
            (0..150)
                .flat_map(|_| {
                    let level = -5.0 * (1.0 - rng.random::<f64>()).ln();
                    std::iter::repeat_n(
                        Bucket {
                            successes: 100,
                            backing_off: level,
                            ..Bucket::default()
                        },
                        40,
                    )
                })
                .collect()
        };
        let c = MetricsConfig {
            bucket: SimDuration::from_millis(100),
            smoothing: SimDuration::from_secs(2),
            recovery_fraction: 0.99, // practical tolerance: 1 waiting
            ..cfg(1)
        };
        let span = (SimTime(1_000_000_000), SimTime(1_100_000_000));
        let mut gaussian_alarms = 0;
        for _ in 0..50 {
            let (run, twin) = (excursions(), excursions());
            let sums = |b: &[Bucket]| {
                let backlog: Vec<f64> = b.iter().map(Bucket::backlog).collect();
                window_sums(&backlog, 20)
            };
            let (r, t) = (sums(&run), sums(&twin));
            let limit = 4.0 * std::f64::consts::SQRT_2 * sd(&t);
            gaussian_alarms += usize::from(r.iter().zip(&t).skip(11).any(|(r, t)| r - t > limit));
            let judged = judge(&c, &run, &twin, span, 0);
            assert_eq!(judged.time_s, Some(0.0), "{judged:?}");
        }
        assert!(gaussian_alarms >= 3, "{gaussian_alarms}");
        eprintln!("the Gaussian band raised alarms in {gaussian_alarms} of 50 runs");
    }

    #[test]
    fn a_trigger_that_ends_after_the_last_window_is_never_judged_recovered() {
        let r = judge(&cfg(3), &flat(5, 10), &flat(5, 10), (at(3), at(4)), 0);
        assert_eq!(r.time_s, None);
    }
}
