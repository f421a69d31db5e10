//! Backoff: how long a client waits before retry n (n = 1 for the first retry).
//!
//! Formulas from REFERENCE.md section 1 (the starting article and the AWS
//! architecture blog "Exponential Backoff and Jitter", 2015). With `first_exponent`
//! = 0 (the default, the starting article's convention) the un-jittered delay before
//! retry n is `v(n) = min(cap, base * m^(n-1))`: 200, 400, 800 ms ... for base 200 ms.
//! The AWS simulator's convention, `min(cap, base * 2^n)`, is `first_exponent = 1`.

use rand::{Rng, RngExt};

use crate::engine::SimDuration;

/// The family of backoff delays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackoffKind {
    /// Retry at once: the retry-storm baseline.
    None,
    /// Always `base`.
    Constant,
    /// `min(cap, base * n)`.
    Linear,
    /// `v(n)`, capped, no jitter: every client waits the same.
    Exponential,
    /// `U(0, v(n))`: AWS "full jitter".
    FullJitter,
    /// `v(n)/2 + U(0, v(n)/2)`: AWS "equal jitter".
    EqualJitter,
    /// `min(cap, U(base, 3 * previous))`, previous starting at `base`: AWS
    /// "decorrelated jitter"; its state is the previous delay of the same request.
    DecorrelatedJitter,
    /// `U(0, min(cap, (2^n - 1) * base))`: Envoy's router retry back-off (full
    /// jitter over a window that grows as 2^n - 1 times the base interval).
    Envoy,
}

impl BackoffKind {
    /// Every kind with its scenario-file name.
    pub const NAMES: [(&'static str, BackoffKind); 8] = [
        ("none", BackoffKind::None),
        ("constant", BackoffKind::Constant),
        ("linear", BackoffKind::Linear),
        ("exponential", BackoffKind::Exponential),
        ("full-jitter", BackoffKind::FullJitter),
        ("equal-jitter", BackoffKind::EqualJitter),
        ("decorrelated-jitter", BackoffKind::DecorrelatedJitter),
        ("envoy", BackoffKind::Envoy),
    ];

    /// The scenario-file name of this kind.
    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, k)| *k == self)
            .map_or("?", |(n, _)| n)
    }

    /// Parses a scenario-file name.
    pub fn from_name(name: &str) -> Option<BackoffKind> {
        Self::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, k)| *k)
    }
}

/// Randomness added on top of a kind's delay, after the cap, as libraries do:
/// got adds up to 100 ms, gRPC multiplies by U(0.8, 1.2), the backoff crate by
/// U(0.5, 1.5), axios-retry by U(1, 1.2) (REFERENCE.md section 8).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Jitter {
    /// The kind's delay as it is.
    None,
    /// `delay + U(0, max)`.
    Add(SimDuration),
    /// `delay * U(low, high)`.
    Scale {
        /// Smallest factor.
        low: f64,
        /// Largest factor.
        high: f64,
    },
}

impl Jitter {
    /// `ns` with the jitter applied; draws from `rng` only when there is jitter,
    /// so schedules without it consume no random numbers.
    fn apply<R: Rng + ?Sized>(self, ns: f64, rng: &mut R) -> f64 {
        match self {
            Jitter::None => ns,
            Jitter::Add(max) => ns + rng.random::<f64>() * max.as_nanos_f64(),
            Jitter::Scale { low, high } => ns * (low + rng.random::<f64>() * (high - low)),
        }
    }
}

/// A backoff schedule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Backoff {
    /// The formula.
    pub kind: BackoffKind,
    /// First delay (default 200 ms, the starting article).
    pub base: SimDuration,
    /// Largest un-jittered delay (default 10 s).
    pub cap: SimDuration,
    /// Growth factor of the exponential kinds (default 2).
    pub multiplier: f64,
    /// Exponent of the multiplier at the first retry: 0 (default) or 1 (AWS simulator).
    pub first_exponent: u32,
    /// Randomness on top of the kind's delay (default none).
    pub jitter: Jitter,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            kind: BackoffKind::Exponential,
            base: SimDuration::from_millis(200),
            cap: SimDuration::from_secs(10),
            multiplier: 2.0,
            first_exponent: 0,
            jitter: Jitter::None,
        }
    }
}

impl Backoff {
    /// The capped, un-jittered exponential delay before retry `n` (n >= 1), in ns.
    pub fn exponential_ceiling(&self, n: u32) -> f64 {
        let exponent = (n + self.first_exponent).saturating_sub(1);
        let exponent = i32::try_from(exponent).unwrap_or(i32::MAX);
        let v = self.base.as_nanos_f64() * self.multiplier.powi(exponent);
        v.min(self.cap.as_nanos_f64())
    }

    /// The delay before retry `n` (n >= 1). `previous` is the delay this request
    /// waited before its last retry (ignored except by decorrelated jitter, which
    /// treats the first retry's previous delay as `base`).
    pub fn delay<R: Rng + ?Sized>(
        &self,
        n: u32,
        previous: SimDuration,
        rng: &mut R,
    ) -> SimDuration {
        let ns = match self.kind {
            BackoffKind::None => 0.0,
            BackoffKind::Constant => self.base.as_nanos_f64(),
            BackoffKind::Linear => {
                (self.base.as_nanos_f64() * f64::from(n)).min(self.cap.as_nanos_f64())
            }
            BackoffKind::Exponential => self.exponential_ceiling(n),
            BackoffKind::FullJitter => rng.random::<f64>() * self.exponential_ceiling(n),
            BackoffKind::EqualJitter => {
                let half = self.exponential_ceiling(n) / 2.0;
                half + rng.random::<f64>() * half
            }
            BackoffKind::DecorrelatedJitter => {
                let base = self.base.as_nanos_f64();
                let prev = if n <= 1 {
                    base
                } else {
                    previous.as_nanos_f64().max(base)
                };
                let upper = 3.0 * prev;
                (base + rng.random::<f64>() * (upper - base)).min(self.cap.as_nanos_f64())
            }
            BackoffKind::Envoy => {
                let exponent = i32::try_from(n).unwrap_or(i32::MAX);
                let window = (2f64.powi(exponent) - 1.0) * self.base.as_nanos_f64();
                rng.random::<f64>() * window.min(self.cap.as_nanos_f64())
            }
        };
        SimDuration::from_nanos_f64(self.jitter.apply(ns, rng))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{Stream, stream};

    fn ms(v: u64) -> SimDuration {
        SimDuration::from_millis(v)
    }

    fn with(kind: BackoffKind) -> Backoff {
        Backoff {
            kind,
            ..Backoff::default()
        }
    }

    /// Mean and range of `samples` delays before retry `n` (previous = ceiling(n-1)).
    fn stats(b: &Backoff, n: u32, samples: usize) -> (f64, f64, f64) {
        let mut rng = stream(3, Stream::Jitter);
        let prev = SimDuration::from_nanos_f64(b.exponential_ceiling(n.saturating_sub(1).max(1)));
        let xs: Vec<f64> = (0..samples)
            .map(|_| b.delay(n, prev, &mut rng).as_nanos_f64())
            .collect();
        let mean = xs.iter().sum::<f64>() / samples as f64;
        let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = xs.iter().copied().fold(0.0, f64::max);
        (mean, lo, hi)
    }

    #[test]
    fn envoy_draws_over_a_window_of_2_to_the_n_minus_1_base_intervals() {
        // Envoy's defaults: base interval 25 ms, maximum 250 ms.
        let b = Backoff {
            base: ms(25),
            cap: ms(250),
            ..with(BackoffKind::Envoy)
        };
        for (n, window) in [(1, 25.0), (2, 75.0), (3, 175.0), (4, 250.0), (9, 250.0)] {
            let (mean, lo, hi) = stats(&b, n, 20_000);
            let window = window * 1e6;
            assert!(
                lo >= 0.0 && hi < window,
                "retry {n}: [{lo}, {hi}] outside [0, {window})"
            );
            // U(0, w) has mean w/2 and sd w/sqrt(12); 20 000 draws put the
            // sample mean within 0.6% of w of it at 3 standard errors.
            assert!(
                (mean - window / 2.0).abs() < 0.006 * window,
                "retry {n}: mean {mean}"
            );
        }
    }

    #[test]
    fn added_jitter_stays_within_its_window_and_scaled_within_its_factors() {
        // got: 1000 * 2^(n-1) ms plus U(0, 100 ms).
        let got = Backoff {
            base: ms(1000),
            cap: SimDuration::from_secs(3600),
            jitter: Jitter::Add(ms(100)),
            ..with(BackoffKind::Exponential)
        };
        for (n, v) in [(1, 1000.0), (2, 2000.0), (3, 4000.0)] {
            let (mean, lo, hi) = stats(&got, n, 20_000);
            let v = v * 1e6;
            assert!(lo >= v && hi < v + 100e6, "retry {n}: [{lo}, {hi}]");
            assert!((mean - (v + 50e6)).abs() < 0.6e6, "retry {n}: mean {mean}");
        }
        // gRPC A6: min(max, initial * mult^(n-1)) * U(0.8, 1.2), jittered after the cap.
        let grpc = Backoff {
            base: ms(100),
            cap: ms(1000),
            multiplier: 1.6,
            jitter: Jitter::Scale {
                low: 0.8,
                high: 1.2,
            },
            ..with(BackoffKind::Exponential)
        };
        for (n, v) in [(1, 100.0), (2, 160.0), (3, 256.0), (9, 1000.0)] {
            let (mean, lo, hi) = stats(&grpc, n, 20_000);
            let v = v * 1e6;
            assert!(
                lo >= 0.8 * v && hi <= 1.2 * v,
                "retry {n}: [{lo}, {hi}] around {v}"
            );
            assert!((mean - v).abs() < 0.003 * v, "retry {n}: mean {mean}");
        }
    }

    #[test]
    fn no_jitter_draws_no_random_numbers() {
        let mut a = stream(4, Stream::Jitter);
        let mut b = stream(4, Stream::Jitter);
        let plain = with(BackoffKind::Exponential);
        let _ = plain.delay(3, SimDuration::ZERO, &mut a);
        assert_eq!(a.random::<u64>(), b.random::<u64>());
    }

    #[test]
    fn exponential_follows_the_starting_article() {
        let b = with(BackoffKind::Exponential);
        let mut rng = stream(1, Stream::Jitter);
        let delays: Vec<_> = (1..=7)
            .map(|n| b.delay(n, SimDuration::ZERO, &mut rng))
            .collect();
        assert_eq!(
            delays,
            [
                ms(200),
                ms(400),
                ms(800),
                ms(1600),
                ms(3200),
                ms(6400),
                ms(10_000)
            ]
        );
    }

    #[test]
    fn aws_convention_doubles_the_first_delay() {
        let b = Backoff {
            first_exponent: 1,
            base: ms(5),
            cap: ms(2000),
            ..with(BackoffKind::Exponential)
        };
        let mut rng = stream(1, Stream::Jitter);
        let delays: Vec<_> = (1..=3)
            .map(|n| b.delay(n, SimDuration::ZERO, &mut rng))
            .collect();
        assert_eq!(delays, [ms(10), ms(20), ms(40)]);
        assert_eq!(b.delay(40, SimDuration::ZERO, &mut rng), ms(2000));
    }

    #[test]
    fn none_constant_and_linear() {
        let mut rng = stream(1, Stream::Jitter);
        assert_eq!(
            with(BackoffKind::None).delay(3, ms(5), &mut rng),
            SimDuration::ZERO
        );
        assert_eq!(
            with(BackoffKind::Constant).delay(3, ms(5), &mut rng),
            ms(200)
        );
        assert_eq!(with(BackoffKind::Linear).delay(3, ms(5), &mut rng), ms(600));
        assert_eq!(
            with(BackoffKind::Linear).delay(99, ms(5), &mut rng),
            ms(10_000)
        );
    }

    // The jittered kinds are checked on 100k draws: U(0, v) has sd v/sqrt(12), so the
    // standard error of the mean is under 0.1% of v; 1% of v is over ten of them.
    const N: usize = 100_000;

    #[test]
    fn full_jitter_is_uniform_below_the_ceiling() {
        let b = with(BackoffKind::FullJitter);
        for n in [1, 3, 8] {
            let v = b.exponential_ceiling(n);
            let (mean, lo, hi) = stats(&b, n, N);
            assert!(
                lo >= 0.0 && hi <= v,
                "retry {n}: range [{lo}, {hi}] outside [0, {v}]"
            );
            assert!(
                (mean - v / 2.0).abs() < 0.01 * v,
                "retry {n}: mean {mean}, expected {}",
                v / 2.0
            );
            assert!(
                lo < 0.01 * v && hi > 0.99 * v,
                "retry {n}: does not fill [0, v]"
            );
        }
    }

    #[test]
    fn equal_jitter_is_uniform_in_the_upper_half() {
        let b = with(BackoffKind::EqualJitter);
        for n in [1, 4] {
            let v = b.exponential_ceiling(n);
            let (mean, lo, hi) = stats(&b, n, N);
            assert!(lo >= v / 2.0 && hi <= v, "retry {n}: range [{lo}, {hi}]");
            assert!((mean - 0.75 * v).abs() < 0.01 * v, "retry {n}: mean {mean}");
        }
    }

    #[test]
    fn decorrelated_jitter_draws_between_base_and_three_times_previous() {
        let b = with(BackoffKind::DecorrelatedJitter);
        let base = b.base.as_nanos_f64();
        // First retry: U(base, 3*base).
        let (mean, lo, hi) = stats(&b, 1, N);
        assert!(lo >= base && hi <= 3.0 * base);
        assert!((mean - 2.0 * base).abs() < 0.01 * 2.0 * base, "mean {mean}");
        // Later: U(base, 3*prev) capped; with prev = 5 s the cap of 10 s binds often.
        let mut rng = stream(9, Stream::Jitter);
        for _ in 0..N / 10 {
            let d = b.delay(5, ms(5000), &mut rng);
            assert!(d >= b.base && d <= b.cap);
        }
    }

    #[test]
    fn huge_retry_numbers_stay_at_the_cap() {
        let b = with(BackoffKind::Exponential);
        assert_eq!(b.exponential_ceiling(u32::MAX), b.cap.as_nanos_f64());
    }

    #[test]
    fn names_round_trip() {
        for (name, kind) in BackoffKind::NAMES {
            assert_eq!(BackoffKind::from_name(name), Some(kind));
            assert_eq!(kind.name(), name);
        }
    }
}
