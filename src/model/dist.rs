//! Duration distributions for think times, service times and network hops.

use rand::{Rng, RngExt};
use rand_distr::{Distribution, Exp, LogNormal, Normal};

use crate::engine::SimDuration;

/// A distribution of non-negative durations, ready to sample.
#[derive(Clone, Debug)]
pub enum Dist {
    /// Always the same value.
    Constant(SimDuration),
    /// Exponential with the given mean (memoryless: the M in M/M/1).
    Exponential {
        /// Mean, nanoseconds.
        mean: SimDuration,
        /// Sampler with rate 1/mean per nanosecond.
        sampler: Exp<f64>,
    },
    /// Log-normal with the given mean; `sigma` is the standard deviation of ln(X).
    LogNormal {
        /// Mean, nanoseconds.
        mean: SimDuration,
        /// Shape: standard deviation of the underlying normal.
        sigma: f64,
        /// Sampler in nanoseconds.
        sampler: LogNormal<f64>,
    },
    /// |Normal(mean, sd)|: the folded normal the AWS experiment uses for each hop.
    AbsNormal {
        /// Mean of the normal before folding, nanoseconds.
        mean: SimDuration,
        /// Standard deviation, nanoseconds.
        sd: SimDuration,
        /// Sampler in nanoseconds.
        sampler: Normal<f64>,
    },
    /// Uniform on [low, high].
    Uniform {
        /// Smallest value.
        low: SimDuration,
        /// Largest value.
        high: SimDuration,
    },
    /// Buckets as a histogram measured them: `(upper bound, share of values
    /// at or below it)`, both increasing, the last share 1; a value is
    /// uniform within its bucket (the first bucket starts at 0).
    Histogram(Vec<(SimDuration, f64)>),
    /// A mixture: each draw comes from one part, part `i` with probability
    /// `weight_i` (5% of requests ten times slower: a mixture of two).
    Mixture(Vec<(f64, Dist)>),
    /// Measured values, sorted: each draw is one of them, all equally
    /// likely (the empirical distribution; shared, not copied, by clones).
    Empirical(std::sync::Arc<[SimDuration]>),
}

impl Dist {
    /// A constant distribution.
    pub fn constant(value: SimDuration) -> Dist {
        Dist::Constant(value)
    }

    /// An exponential distribution; `mean` must be positive.
    pub fn exponential(mean: SimDuration) -> Option<Dist> {
        let sampler = Exp::new(1.0 / mean.as_nanos_f64()).ok()?;
        (mean.0 > 0).then_some(Dist::Exponential { mean, sampler })
    }

    /// A log-normal distribution with this mean and shape `sigma` (>= 0):
    /// mu = ln(mean) - sigma^2 / 2, so that E[X] = mean.
    pub fn lognormal(mean: SimDuration, sigma: f64) -> Option<Dist> {
        if mean.0 == 0 || !(0.0..=10.0).contains(&sigma) {
            return None;
        }
        let mu = mean.as_nanos_f64().ln() - sigma * sigma / 2.0;
        let sampler = LogNormal::new(mu, sigma).ok()?;
        Some(Dist::LogNormal {
            mean,
            sigma,
            sampler,
        })
    }

    /// A folded normal |N(mean, sd)|.
    pub fn abs_normal(mean: SimDuration, sd: SimDuration) -> Option<Dist> {
        let sampler = Normal::new(mean.as_nanos_f64(), sd.as_nanos_f64()).ok()?;
        Some(Dist::AbsNormal { mean, sd, sampler })
    }

    /// A uniform distribution; `low` must not exceed `high`.
    pub fn uniform(low: SimDuration, high: SimDuration) -> Option<Dist> {
        (low <= high).then_some(Dist::Uniform { low, high })
    }

    /// A mixture of `parts`, (weight, distribution), weights positive and
    /// summing to 1 (within 1e-9), no part itself a mixture.
    pub fn mixture(parts: Vec<(f64, Dist)>) -> Option<Dist> {
        let sum: f64 = parts.iter().map(|p| p.0).sum();
        let ok = !parts.is_empty()
            && (sum - 1.0).abs() < 1e-9
            && parts
                .iter()
                .all(|(w, d)| *w > 0.0 && !matches!(d, Dist::Mixture(_)));
        ok.then_some(Dist::Mixture(parts))
    }

    /// A histogram's distribution from its buckets, `(upper bound,
    /// cumulative share)`: bounds increasing, shares not decreasing, from
    /// above 0 to exactly 1.
    pub fn histogram(buckets: Vec<(SimDuration, f64)>) -> Option<Dist> {
        let increasing = buckets
            .windows(2)
            .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1);
        let ok = increasing
            && buckets.last().is_some_and(|b| b.1 == 1.0)
            && buckets.first().is_some_and(|b| b.1 >= 0.0);
        ok.then_some(Dist::Histogram(buckets))
    }

    /// The empirical distribution of `values` (at least one).
    pub fn empirical(mut values: Vec<SimDuration>) -> Option<Dist> {
        values.sort_unstable();
        (!values.is_empty()).then(|| Dist::Empirical(values.into()))
    }

    /// Draws one duration.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> SimDuration {
        match self {
            Dist::Empirical(values) => values[rng.random_range(0..values.len())],
            Dist::Histogram(buckets) => {
                let u: f64 = rng.random();
                let mut low = (0.0, 0.0);
                for &(le, share) in buckets {
                    let high = le.as_nanos_f64();
                    if u < share {
                        let within = (u - low.1) / (share - low.1);
                        return SimDuration::from_nanos_f64(low.0 + within * (high - low.0));
                    }
                    low = (high, share);
                }
                buckets.last().map_or(SimDuration::ZERO, |b| b.0)
            }
            Dist::Mixture(parts) => {
                // One draw picks the part, the next ones are the part's.
                let u: f64 = rng.random();
                let mut below = 0.0;
                for (w, d) in parts {
                    below += w;
                    if u < below {
                        return d.sample(rng);
                    }
                }
                parts
                    .last()
                    .map_or(SimDuration::ZERO, |(_, d)| d.sample(rng))
            }
            Dist::Constant(v) => *v,
            Dist::Exponential { sampler, .. } => SimDuration::from_nanos_f64(sampler.sample(rng)),
            Dist::LogNormal { sampler, .. } => SimDuration::from_nanos_f64(sampler.sample(rng)),
            Dist::AbsNormal { sampler, .. } => {
                SimDuration::from_nanos_f64(sampler.sample(rng).abs())
            }
            Dist::Uniform { low, high } => SimDuration(rng.random_range(low.0..=high.0)),
        }
    }

    /// P(X > `t`), `t` in nanoseconds: the closed form of each kind (the
    /// normal's through an error function good to 1.5e-7).
    pub fn survival(&self, t: f64) -> f64 {
        let normal_above = |z: f64| 0.5 * (1.0 - erf(z / std::f64::consts::SQRT_2));
        match self {
            Dist::Empirical(values) => {
                let at_most = values.partition_point(|v| v.as_nanos_f64() <= t);
                (values.len() - at_most) as f64 / values.len() as f64
            }
            Dist::Mixture(parts) => parts.iter().map(|(w, d)| w * d.survival(t)).sum(),
            Dist::Histogram(buckets) => {
                // The distribution function is linear within each bucket.
                let mut low = (0.0, 0.0);
                for &(le, share) in buckets {
                    let high = le.as_nanos_f64();
                    if t < high {
                        let within = ((t - low.0) / (high - low.0)).max(0.0);
                        return 1.0 - (low.1 + within * (share - low.1));
                    }
                    low = (high, share);
                }
                0.0
            }
            Dist::Constant(v) => f64::from(u8::from(t < v.as_nanos_f64())),
            Dist::Exponential { mean, .. } => (-t.max(0.0) / mean.as_nanos_f64()).exp(),
            Dist::LogNormal { mean, sigma, .. } => {
                if t <= 0.0 {
                    return 1.0;
                }
                let mu = mean.as_nanos_f64().ln() - sigma * sigma / 2.0;
                if *sigma == 0.0 {
                    return f64::from(u8::from(t.ln() < mu));
                }
                normal_above((t.ln() - mu) / sigma)
            }
            Dist::AbsNormal { mean, sd, .. } => {
                if t <= 0.0 {
                    return 1.0;
                }
                let (m, s) = (mean.as_nanos_f64(), sd.as_nanos_f64());
                if s == 0.0 {
                    return f64::from(u8::from(t < m.abs()));
                }
                normal_above((t - m) / s) + 1.0 - normal_above((-t - m) / s)
            }
            Dist::Uniform { low, high } => {
                let (a, b) = (low.as_nanos_f64(), high.as_nanos_f64());
                if t < a {
                    1.0
                } else if t >= b {
                    0.0
                } else {
                    (b - t) / (b - a)
                }
            }
        }
    }

    /// The mean, in nanoseconds (exact, not estimated).
    pub fn mean_nanos(&self) -> f64 {
        match self {
            Dist::Constant(v) => v.as_nanos_f64(),
            Dist::Exponential { mean, .. } | Dist::LogNormal { mean, .. } => mean.as_nanos_f64(),
            Dist::AbsNormal { mean, sd, .. } => {
                folded_normal_mean(mean.as_nanos_f64(), sd.as_nanos_f64())
            }
            Dist::Uniform { low, high } => (low.as_nanos_f64() + high.as_nanos_f64()) / 2.0,
            Dist::Mixture(parts) => parts.iter().map(|(w, d)| w * d.mean_nanos()).sum(),
            Dist::Empirical(values) => {
                values.iter().map(|v| v.as_nanos_f64()).sum::<f64>() / values.len() as f64
            }
            Dist::Histogram(buckets) => {
                let mut low = (0.0, 0.0);
                let mut mean = 0.0;
                for &(le, share) in buckets {
                    let high = le.as_nanos_f64();
                    mean += (share - low.1) * (low.0 + high) / 2.0;
                    low = (high, share);
                }
                mean
            }
        }
    }

    /// The `q`-quantile in nanoseconds, from the survival function by
    /// bisection (to a nanosecond): the least `t` with P(X > t) <= 1 - q.
    pub fn quantile(&self, q: f64) -> f64 {
        let (mut lo, mut hi) = (0.0_f64, self.mean_nanos().max(1.0));
        while self.survival(hi) > 1.0 - q && hi < 1e18 {
            hi *= 2.0;
        }
        while hi - lo > 1.0 {
            let mid = (lo + hi) / 2.0;
            if self.survival(mid) > 1.0 - q {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        hi
    }
}

/// E|X| for X ~ N(m, s): s*sqrt(2/pi)*exp(-m^2/(2 s^2)) + m*(1 - 2*Phi(-m/s)).
fn folded_normal_mean(m: f64, s: f64) -> f64 {
    if s == 0.0 {
        return m.abs();
    }
    let z = m / s;
    s * (2.0 / std::f64::consts::PI).sqrt() * (-z * z / 2.0).exp()
        + m * erf(z / std::f64::consts::SQRT_2)
}

/// The error function (Abramowitz and Stegun 7.1.26, absolute error < 1.5e-7),
/// enough for a mean that is only reported, never simulated.
fn erf(x: f64) -> f64 {
    let sign = x.signum();
    let x = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    sign * (1.0 - poly * (-x * x).exp())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{Stream, stream};

    fn sample_mean(d: &Dist, n: usize) -> f64 {
        let mut rng = stream(11, Stream::Service);
        (0..n)
            .map(|_| d.sample(&mut rng).as_nanos_f64())
            .sum::<f64>()
            / n as f64
    }

    #[test]
    fn survival_matches_the_share_of_samples_above() {
        // 100k samples: a share's standard error is at most 0.0016, and the
        // bound is over four of them.
        let ms = SimDuration::from_millis(10);
        for d in [
            Dist::exponential(ms).unwrap(),
            Dist::lognormal(ms, 0.99).unwrap(),
            Dist::abs_normal(ms, SimDuration::from_millis(8)).unwrap(),
            Dist::uniform(SimDuration::ZERO, SimDuration::from_millis(20)).unwrap(),
        ] {
            let mut rng = stream(5, Stream::Service);
            let xs: Vec<f64> = (0..100_000)
                .map(|_| d.sample(&mut rng).as_nanos_f64())
                .collect();
            for t in [1e6, 5e6, 1e7, 2e7, 4e7] {
                let share = xs.iter().filter(|&&x| x > t).count() as f64 / xs.len() as f64;
                let s = d.survival(t);
                assert!((share - s).abs() < 0.007, "{d:?} at {t}: {share} vs {s}");
            }
        }
        let c = Dist::constant(ms);
        assert_eq!((c.survival(9e6), c.survival(1e7)), (1.0, 0.0));
    }

    /// Drawing in bulk is drawing one at a time.

    #[test]
    fn sample_means_match_the_stated_means() {
        // 200k samples: the standard error of the mean is sd/sqrt(n) ~ 0.22% of the
        // mean for the exponential (sd = mean), so 1% is over four standard errors.
        let ms = SimDuration::from_millis(10);
        for d in [
            Dist::exponential(ms).unwrap(),
            Dist::lognormal(ms, 0.5).unwrap(),
            Dist::abs_normal(ms, SimDuration::from_millis(2)).unwrap(),
            Dist::uniform(SimDuration::ZERO, SimDuration::from_millis(20)).unwrap(),
        ] {
            let m = sample_mean(&d, 200_000);
            let rel = (m - d.mean_nanos()).abs() / d.mean_nanos();
            assert!(
                rel < 0.01,
                "{d:?}: sample mean {m}, stated {}",
                d.mean_nanos()
            );
        }
    }

    #[test]
    fn folded_normal_mean_is_the_mean_when_far_from_zero() {
        let d =
            Dist::abs_normal(SimDuration::from_millis(10), SimDuration::from_millis(2)).unwrap();
        assert!((d.mean_nanos() - 10e6).abs() < 1.0);
        // Centred at zero the folded normal has mean s*sqrt(2/pi).
        let z = Dist::abs_normal(SimDuration::ZERO, SimDuration(1_000_000)).unwrap();
        assert!((z.mean_nanos() - 1e6 * (2.0 / std::f64::consts::PI).sqrt()).abs() < 1.0);
    }

    /// Five requests in a hundred ten times slower: exponential parts of
    /// 10 ms and 100 ms, weights 0.95 and 0.05. The mean is 14.5 ms; the
    /// median, 7.4 ms, sits in the fast part; the 99th percentile needs the
    /// slow tail: the t with 0.95 e^(-t/10) + 0.05 e^(-t/100) = 0.01,
    /// 161 ms by hand. 200 000 draws put each
    /// percentile within 3% of the closed form (the p99's standard error is
    /// about 1.1%).
    #[test]
    fn a_mixtures_percentiles_are_its_closed_form() {
        let ms = SimDuration::from_millis;
        let d = Dist::mixture(vec![
            (0.95, Dist::exponential(ms(10)).unwrap()),
            (0.05, Dist::exponential(ms(100)).unwrap()),
        ])
        .unwrap();
        assert!((d.mean_nanos() - 14.5e6).abs() < 1.0);
        let p99 = d.quantile(0.99);
        assert!((p99 - 161.0e6).abs() < 1.0e6, "{p99}");
        assert!((d.quantile(0.5) - 7.4e6).abs() < 0.05e6);
        let mut rng = stream(3, Stream::Service);
        let mut xs: Vec<f64> = (0..200_000)
            .map(|_| d.sample(&mut rng).as_nanos_f64())
            .collect();
        xs.sort_by(f64::total_cmp);
        for q in [0.5, 0.9, 0.99] {
            let sample = xs[(q * xs.len() as f64) as usize];
            let exact = d.quantile(q);
            assert!(
                (sample - exact).abs() < 0.03 * exact,
                "q {q}: {sample} vs {exact}"
            );
        }
        assert!(Dist::mixture(vec![(0.5, Dist::constant(ms(1)))]).is_none());
        assert!(
            Dist::mixture(vec![(1.0, d)]).is_none(),
            "no mixture of mixtures"
        );
    }

    /// Prometheus-style buckets: half the values at most 5 ms, 90% at most
    /// 10 ms, all at most 50 ms. The mean is 0.5 x 2.5 + 0.4 x 7.5 + 0.1 x
    /// 30 = 7.25 ms; the 95th percentile is halfway through the last
    /// bucket, 30 ms. Draws fall in each bucket at its share (200 000
    /// draws: within 0.5 points, over four standard errors).
    #[test]
    fn a_histograms_buckets_are_its_draws() {
        let ms = SimDuration::from_millis;
        let d = Dist::histogram(vec![(ms(5), 0.5), (ms(10), 0.9), (ms(50), 1.0)]).unwrap();
        assert!((d.mean_nanos() - 7.25e6).abs() < 1.0);
        assert!((d.quantile(0.95) - 30e6).abs() < 2.0);
        assert!((d.survival(7.5e6) - 0.3).abs() < 1e-12);
        let mut rng = stream(9, Stream::Service);
        let xs: Vec<f64> = (0..200_000)
            .map(|_| d.sample(&mut rng).as_nanos_f64())
            .collect();
        for (le, share) in [(5e6, 0.5), (10e6, 0.9), (50e6, 1.0)] {
            let below = xs.iter().filter(|&&x| x <= le).count() as f64 / xs.len() as f64;
            assert!((below - share).abs() < 0.005, "{le}: {below}");
        }
        assert!(Dist::histogram(vec![(ms(5), 0.5), (ms(4), 1.0)]).is_none());
        assert!(Dist::histogram(vec![(ms(5), 0.5), (ms(10), 0.9)]).is_none());
    }

    /// Measured values 4, 5, 5 and 30 ms: the mean is 11 ms, the median
    /// 5 ms, P(X > 5 ms) = 1/4; each value comes up at its share (200 000
    /// draws: 5 ms at half, within 0.5 points, over four standard errors).
    #[test]
    fn an_empirical_distributions_draws_are_its_values() {
        let ms = SimDuration::from_millis;
        let d = Dist::empirical(vec![ms(30), ms(5), ms(4), ms(5)]).unwrap();
        assert!((d.mean_nanos() - 11e6).abs() < 1e-6);
        assert!((d.survival(5e6) - 0.25).abs() < 1e-12);
        assert!((d.survival(3e6) - 1.0).abs() < 1e-12);
        assert!((d.quantile(0.5) - 5e6).abs() <= 1.0);
        let mut rng = stream(9, Stream::Service);
        let xs: Vec<SimDuration> = (0..200_000).map(|_| d.sample(&mut rng)).collect();
        assert!(xs.iter().all(|x| [ms(4), ms(5), ms(30)].contains(x)));
        let fives = xs.iter().filter(|&&x| x == ms(5)).count() as f64 / xs.len() as f64;
        assert!((fives - 0.5).abs() < 0.005, "{fives}");
        assert!(Dist::empirical(Vec::new()).is_none());
    }

    #[test]
    fn constructors_reject_impossible_parameters() {
        assert!(Dist::exponential(SimDuration::ZERO).is_none());
        assert!(Dist::lognormal(SimDuration(5), -1.0).is_none());
        assert!(Dist::uniform(SimDuration(5), SimDuration(4)).is_none());
    }
}
