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
    /// Polly's `DecorrelatedJitterBackoffV2` (Polly.Contrib.WaitAndRetry, the
    /// jittered exponential of Polly v8, and cockatiel's default): with
    /// `t = (n - 1) + U(0, 1)` and `f(t) = m^t * tanh(sqrt(4 t))`, the delay is
    /// `min(cap, (f(t) - f(t_prev)) * base / 1.4)`, `f(t_prev)` = 0 at the first
    /// retry (REFERENCE.md section 8). Successive `t` never overlap, so delays
    /// grow like `m^n` on average without the clumps of AWS decorrelated jitter;
    /// `base` is close to the median first delay. Its state is `f(t_prev)`.
    DecorrelatedJitterV2,
}

impl BackoffKind {
    /// Every kind with its scenario-file name.
    pub const NAMES: [(&'static str, BackoffKind); 9] = [
        ("none", BackoffKind::None),
        ("constant", BackoffKind::Constant),
        ("linear", BackoffKind::Linear),
        ("exponential", BackoffKind::Exponential),
        ("full-jitter", BackoffKind::FullJitter),
        ("equal-jitter", BackoffKind::EqualJitter),
        ("decorrelated-jitter", BackoffKind::DecorrelatedJitter),
        ("envoy", BackoffKind::Envoy),
        ("decorrelated-jitter-v2", BackoffKind::DecorrelatedJitterV2),
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

/// What [`Backoff::range`] knows of one retry's delay, in ns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DelayRange {
    /// Shortest delay.
    pub lo: f64,
    /// Longest delay.
    pub hi: f64,
    /// A width such that, whatever came before, the delay's density is at
    /// most `1 / spread` (the delay holds a uniform of that width drawn
    /// afresh); 0: no such bound (a fixed delay, or one drawn from a window
    /// that depends on the delay before).
    pub spread: f64,
    /// Whether the delay is drawn independently of the delays before it, so
    /// that the sum of delays up to here is at least as spread as any of them.
    pub independent: bool,
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

    /// The delay before retry `n` (n >= 1) and what the schedule remembers for
    /// the next retry of the same request. `memory` is what this call returned
    /// at the previous retry (0 before the first): the delay taken, in ns, which
    /// decorrelated jitter grows from (treating the first retry's as `base`), or
    /// the previous `f(t)` of [`BackoffKind::DecorrelatedJitterV2`].
    pub fn delay<R: Rng + ?Sized>(&self, n: u32, memory: f64, rng: &mut R) -> (SimDuration, f64) {
        self.delay_at_least(n, memory, SimDuration::ZERO, rng)
    }

    /// [`Backoff::delay`] with the kind's value raised to at least `floor`
    /// before the jitter is applied, as axios-retry's `exponentialDelay` raises
    /// its `2^n * 100 ms` to a Retry-After before adding up to 20%.
    pub fn delay_at_least<R: Rng + ?Sized>(
        &self,
        n: u32,
        memory: f64,
        floor: SimDuration,
        rng: &mut R,
    ) -> (SimDuration, f64) {
        let floor = floor.as_nanos_f64();
        let cap = self.cap.as_nanos_f64();
        let ns = match self.kind {
            BackoffKind::None => 0.0,
            BackoffKind::Constant => self.base.as_nanos_f64(),
            BackoffKind::Linear => (self.base.as_nanos_f64() * f64::from(n)).min(cap),
            BackoffKind::Exponential => self.exponential_ceiling(n),
            BackoffKind::FullJitter => rng.random::<f64>() * self.exponential_ceiling(n),
            BackoffKind::EqualJitter => {
                let half = self.exponential_ceiling(n) / 2.0;
                half + rng.random::<f64>() * half
            }
            BackoffKind::DecorrelatedJitter => {
                let base = self.base.as_nanos_f64();
                let prev = if n <= 1 { base } else { memory.max(base) };
                let upper = 3.0 * prev;
                (base + rng.random::<f64>() * (upper - base)).min(cap)
            }
            BackoffKind::Envoy => {
                let exponent = i32::try_from(n).unwrap_or(i32::MAX);
                let window = (2f64.powi(exponent) - 1.0) * self.base.as_nanos_f64();
                rng.random::<f64>() * window.min(cap)
            }
            BackoffKind::DecorrelatedJitterV2 => {
                let t = f64::from(n - 1) + rng.random::<f64>();
                let (ns, next) = self.v2(t, memory);
                let ns = SimDuration::from_nanos_f64(self.jitter.apply(ns.max(floor), rng));
                return (ns, next);
            }
        };
        let d = SimDuration::from_nanos_f64(self.jitter.apply(ns.max(floor), rng));
        (d, d.as_nanos_f64())
    }

    /// [`BackoffKind::DecorrelatedJitterV2`] at `t`, after `f(t_prev)` = `prev`:
    /// the delay in ns and `f(t)`. Past about retry 1000, `m^t` overflows and the
    /// delay is the cap, as in cockatiel.
    fn v2(&self, t: f64, prev: f64) -> (f64, f64) {
        /// Polly's `RpScalingFactor` is 1 / 1.4 and its `pFactor` 4.
        const SCALE: f64 = 1.0 / 1.4;
        const P: f64 = 4.0;
        let next = self.multiplier.powf(t) * (P * t).sqrt().tanh();
        let cap = self.cap.as_nanos_f64();
        // Once m^t overflows, f(t) and f(t_prev) are both infinite and their
        // difference is NaN (which `max` would turn into a delay of 0): the
        // delay is the cap from then on.
        if !next.is_finite() {
            return (cap, next);
        }
        let raw = (next - prev).max(0.0) * SCALE * self.base.as_nanos_f64();
        (if raw.is_finite() { raw.min(cap) } else { cap }, next)
    }

    /// The range of the delay before retry `n` (n >= 1), in ns, and how
    /// spread it is, for bounds that need no simulation (`sim bound`).
    /// `prev_hi` is the range's top at retry `n - 1` (0 before the first),
    /// which decorrelated jitter grows from. Retry-After aside.
    pub fn range(&self, n: u32, prev_hi: f64) -> DelayRange {
        let cap = self.cap.as_nanos_f64();
        let base = self.base.as_nanos_f64();
        // The kind's value: lowest, highest, and the width of a uniform part
        // drawn afresh for this retry (0: none).
        let point = |v: f64| (v, v, 0.0);
        let (lo, hi, spread) = match self.kind {
            BackoffKind::None => point(0.0),
            BackoffKind::Constant => point(base),
            BackoffKind::Linear => point((base * f64::from(n)).min(cap)),
            BackoffKind::Exponential => point(self.exponential_ceiling(n)),
            BackoffKind::FullJitter => {
                let v = self.exponential_ceiling(n);
                (0.0, v, v)
            }
            BackoffKind::EqualJitter => {
                let v = self.exponential_ceiling(n);
                (v / 2.0, v, v / 2.0)
            }
            BackoffKind::Envoy => {
                let exponent = i32::try_from(n).unwrap_or(i32::MAX);
                let w = ((2f64.powi(exponent) - 1.0) * base).min(cap);
                (0.0, w, w)
            }
            // The draw's width depends on the delay before (and the cap
            // makes a point mass): no spread to bound a density by.
            BackoffKind::DecorrelatedJitter => {
                let prev = if n <= 1 { base } else { prev_hi.max(base) };
                (base.min(cap), (3.0 * prev).min(cap), 0.0)
            }
            BackoffKind::DecorrelatedJitterV2 => {
                // `f` grows with t; t of retry n is in [n - 1, n), of the one
                // before in [n - 2, n - 1): the widest difference is
                // f(n) - f(n - 2) (f(n) alone at the first retry).
                let before = if n <= 1 {
                    0.0
                } else {
                    self.v2(f64::from(n - 2), 0.0).1
                };
                (0.0, self.v2(f64::from(n), before).0, 0.0)
            }
        };
        let independent = !matches!(
            self.kind,
            BackoffKind::DecorrelatedJitter | BackoffKind::DecorrelatedJitterV2
        );
        match self.jitter {
            Jitter::None => DelayRange {
                lo,
                hi,
                spread,
                independent,
            },
            // A uniform added afresh: the sum's density is at most 1 / max.
            Jitter::Add(max) => {
                let m = max.as_nanos_f64();
                DelayRange {
                    lo,
                    hi: hi + m,
                    spread: spread.max(m),
                    independent,
                }
            }
            // x * U(low, high): given x, a uniform of width x (high - low),
            // so at least lo (high - low) wide; a spread s scaled by at least
            // `low` stays at least s low wide.
            Jitter::Scale { low, high } => DelayRange {
                lo: lo * low,
                hi: hi * high,
                spread: (spread * low).max(lo * (high - low)),
                independent,
            },
        }
    }

    /// What the schedule remembers when a Retry-After of `hint` replaced its delay
    /// before retry `n`: decorrelated jitter grows from the delay taken; the V2
    /// formula moves on to retry `n`'s `f(t)` as Polly's does (one draw).
    pub fn memory_after_hint<R: Rng + ?Sized>(
        &self,
        n: u32,
        hint: SimDuration,
        memory: f64,
        rng: &mut R,
    ) -> f64 {
        match self.kind {
            BackoffKind::DecorrelatedJitterV2 => self.delay(n, memory, rng).1,
            _ => hint.as_nanos_f64(),
        }
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
            .map(|_| b.delay(n, prev.as_nanos_f64(), &mut rng).0.as_nanos_f64())
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
        let _ = plain.delay(3, 0.0, &mut a).0;
        assert_eq!(a.random::<u64>(), b.random::<u64>());
    }

    #[test]
    fn exponential_follows_the_starting_article() {
        let b = with(BackoffKind::Exponential);
        let mut rng = stream(1, Stream::Jitter);
        let delays: Vec<_> = (1..=7).map(|n| b.delay(n, 0.0, &mut rng).0).collect();
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
        let delays: Vec<_> = (1..=3).map(|n| b.delay(n, 0.0, &mut rng).0).collect();
        assert_eq!(delays, [ms(10), ms(20), ms(40)]);
        assert_eq!(b.delay(40, 0.0, &mut rng).0, ms(2000));
    }

    #[test]
    fn none_constant_and_linear() {
        let mut rng = stream(1, Stream::Jitter);
        assert_eq!(
            with(BackoffKind::None)
                .delay(3, ms(5).as_nanos_f64(), &mut rng)
                .0,
            SimDuration::ZERO
        );
        assert_eq!(
            with(BackoffKind::Constant)
                .delay(3, ms(5).as_nanos_f64(), &mut rng)
                .0,
            ms(200)
        );
        assert_eq!(
            with(BackoffKind::Linear)
                .delay(3, ms(5).as_nanos_f64(), &mut rng)
                .0,
            ms(600)
        );
        assert_eq!(
            with(BackoffKind::Linear)
                .delay(99, ms(5).as_nanos_f64(), &mut rng)
                .0,
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
            let d = b.delay(5, ms(5000).as_nanos_f64(), &mut rng).0;
            assert!(d >= b.base && d <= b.cap);
        }
    }

    #[test]
    fn decorrelated_jitter_v2_follows_pollys_formula() {
        // Polly's defaults: median first delay 2 s, exponent 2, no cap in practice.
        let b = Backoff {
            base: ms(2000),
            cap: SimDuration::from_secs(24 * 3600),
            ..with(BackoffKind::DecorrelatedJitterV2)
        };
        let f = |t: f64| 2f64.powf(t) * (4.0 * t).sqrt().tanh();
        // One step by hand: t = 1, previous f = 0: delay = 2 tanh(2) / 1.4 * 2 s.
        let (ns, next) = b.v2(1.0, 0.0);
        assert!((next - 2.0 * 2f64.tanh()).abs() < 1e-12);
        assert!((ns - next / 1.4 * 2e9).abs() < 1.0);
        // The delays telescope: after n retries the total waited is
        // f(t_n) * base / 1.4 with t_n in [n - 1, n), whatever the draws.
        let mut rng = stream(5, Stream::Jitter);
        for _ in 0..2_000 {
            let (mut memory, mut total) = (0.0, 0.0);
            for n in 1..=6u32 {
                let (d, m) = b.delay(n, memory, &mut rng);
                memory = m;
                total += d.as_nanos_f64();
                let (lo, hi) = (f(f64::from(n - 1)), f(f64::from(n)));
                let scaled = total * 1.4 / 2e9;
                // 1 ns of rounding per delay.
                assert!(
                    scaled >= lo - 1e-8 && scaled < hi + 1e-8,
                    "retry {n}: {scaled}"
                );
            }
        }
        // f is increasing, so the median first delay is f(0.5) / 1.4 * base,
        // about 0.9 * base: 20 000 draws put the sample median within 1%.
        let mut firsts: Vec<f64> = (0..20_000)
            .map(|_| b.delay(1, 0.0, &mut rng).0.as_nanos_f64())
            .collect();
        firsts.sort_by(f64::total_cmp);
        let median = firsts[firsts.len() / 2];
        let expected = f(0.5) / 1.4 * 2e9;
        assert!(
            (median - expected).abs() < 0.01 * expected,
            "median {median}"
        );
        // The cap binds, and an overflowing exponent gives the cap.
        let capped = Backoff { cap: ms(3000), ..b };
        assert_eq!(capped.delay(4, f(2.5), &mut rng).0, ms(3000));
        assert_eq!(capped.delay(5000, f(2.5), &mut rng).0, ms(3000));
        // Every retry after the overflow waits the cap too, not zero: the state
        // is then infinite, and infinity minus infinity must not become 0.
        let (d, memory) = capped.delay(1100, f(2.5), &mut rng);
        assert_eq!((d, memory), (ms(3000), f64::INFINITY));
        for n in 1101..1110 {
            assert_eq!(capped.delay(n, memory, &mut rng).0, ms(3000), "retry {n}");
        }
    }

    #[test]
    fn a_retry_after_hint_advances_only_the_v2_state() {
        let mut a = stream(6, Stream::Jitter);
        let mut b = stream(6, Stream::Jitter);
        let hint = ms(700);
        let dj = with(BackoffKind::DecorrelatedJitter);
        assert_eq!(dj.memory_after_hint(2, hint, 1e8, &mut a), 7e8);
        let v2 = with(BackoffKind::DecorrelatedJitterV2);
        let after_hint = v2.memory_after_hint(2, hint, 1.0, &mut a);
        assert_eq!(after_hint, v2.delay(2, 1.0, &mut b).1);
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

    /// Every delay drawn lies in its `range`, and the range is reached: for
    /// each kind, with and without jitter on top, over 8 retries (some
    /// capped) and 20 000 sequences, drawn as the policy draws them.
    #[test]
    fn every_delay_lies_in_its_range() {
        let jitters = [
            Jitter::None,
            Jitter::Add(ms(100)),
            Jitter::Scale {
                low: 0.8,
                high: 1.2,
            },
        ];
        let mut rng = stream(5, Stream::Jitter);
        for (_, kind) in BackoffKind::NAMES {
            for jitter in jitters {
                let b = Backoff {
                    kind,
                    cap: ms(3000),
                    jitter,
                    ..Backoff::default()
                };
                let mut ranges = Vec::new();
                let mut prev_hi = 0.0;
                for n in 1..=8 {
                    let r = b.range(n, prev_hi);
                    prev_hi = r.hi;
                    ranges.push((r, f64::INFINITY, 0.0f64));
                }
                for _ in 0..20_000 {
                    let mut memory = 0.0;
                    for (n, (r, seen_lo, seen_hi)) in (1..).zip(ranges.iter_mut()) {
                        let (d, m) = b.delay(n, memory, &mut rng);
                        memory = m;
                        let d = d.as_nanos_f64();
                        // Delays are whole nanoseconds: a rounding's slack.
                        assert!(
                            d >= r.lo - 1.0 && d <= r.hi + 1.0,
                            "{kind:?} {jitter:?} retry {n}: {d} outside {r:?}"
                        );
                        *seen_lo = seen_lo.min(d);
                        *seen_hi = seen_hi.max(d);
                    }
                }
                // The range is no wider than needed: its ends are reached to
                // within 10% of its width (the decorrelated kinds' longest
                // delay needs the delay before at its longest too: 30%).
                let slack = if matches!(
                    kind,
                    BackoffKind::DecorrelatedJitter | BackoffKind::DecorrelatedJitterV2
                ) {
                    0.3
                } else {
                    0.1
                };
                for (n, (r, lo, hi)) in (1..).zip(&ranges) {
                    let w = (r.hi - r.lo).max(1.0);
                    assert!(
                        (lo - r.lo) <= slack * w + 1.0 && (r.hi - hi) <= slack * w + 1.0,
                        "{kind:?} {jitter:?} retry {n}: drew {lo}..{hi} of {r:?}"
                    );
                }
            }
        }
    }

    /// A range's spread is what the bounds take it for: the delay's density
    /// is at most 1 / spread, for every kind and jitter (the share of
    /// 100 000 delays in a tenth of the spread stays under 0.105: its
    /// expectation is at most 0.1, its standard error 0.001); and where the
    /// delay is one uniform draw (the jittered kinds alone; a fixed delay
    /// scaled by a uniform; full jitter scaled by a narrow one), the bound
    /// is the density itself, so a spread claimed too wide shows.
    #[test]
    fn a_spread_bounds_the_density_and_is_the_uniform_width() {
        let ms = SimDuration::from_millis;
        let mut rng = stream(9, Stream::Jitter);
        let jitters = [
            Jitter::None,
            Jitter::Add(ms(100)),
            Jitter::Scale {
                low: 0.8,
                high: 1.2,
            },
            Jitter::Scale {
                low: 0.5,
                high: 0.51,
            },
        ];
        for (_, kind) in BackoffKind::NAMES {
            for jitter in jitters {
                let b = Backoff {
                    kind,
                    cap: ms(3000),
                    jitter,
                    ..Backoff::default()
                };
                for n in 1..=4 {
                    let r = b.range(n, 0.0);
                    let uniform = matches!(
                        kind,
                        BackoffKind::FullJitter | BackoffKind::EqualJitter | BackoffKind::Envoy
                    );
                    if uniform && jitter == Jitter::None {
                        assert!(
                            (r.spread - (r.hi - r.lo)).abs() < 1.0,
                            "{kind:?} retry {n}: {r:?}"
                        );
                    }
                    if r.spread == 0.0 {
                        continue;
                    }
                    let bin = r.spread / 10.0;
                    let mut counts = std::collections::HashMap::new();
                    let draws = 100_000;
                    for _ in 0..draws {
                        let memory = if n == 1 { 0.0 } else { r.lo };
                        let d = b.delay(n, memory, &mut rng).0.as_nanos_f64();
                        *counts.entry((d / bin) as i64).or_insert(0u32) += 1;
                    }
                    let most = f64::from(*counts.values().max().unwrap()) / f64::from(draws);
                    assert!(
                        most < 0.105,
                        "{kind:?} {jitter:?} retry {n}: {most} of {r:?}"
                    );
                }
            }
        }
    }
}
