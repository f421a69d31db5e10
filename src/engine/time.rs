//! Simulated time: integer nanoseconds in newtypes, never floating point.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// Nanoseconds in one second.
pub const NANOS_PER_SEC: u64 = 1_000_000_000;

/// An instant of simulated time, in nanoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

/// A span of simulated time, in nanoseconds.
///
/// ```
/// use retry_storm::engine::{SimDuration, SimTime};
/// let t = SimTime::ZERO + SimDuration::from_millis(1500);
/// assert_eq!(t.as_secs_f64(), 1.5);
/// assert_eq!(SimDuration::from_millis(1500).to_string(), "1.5s");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimDuration(pub u64);

impl SimTime {
    /// The start of every run.
    pub const ZERO: SimTime = SimTime(0);
    /// Later than any event: "never".
    pub const NEVER: SimTime = SimTime(u64::MAX);

    /// Seconds since the start, for output.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }

    /// The time elapsed since `earlier`, zero if `earlier` is later.
    pub fn since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
}

impl SimDuration {
    /// No time at all.
    pub const ZERO: SimDuration = SimDuration(0);
    /// Longer than any run: what "no limit" is, where a limit is a duration.
    pub const MAX: SimDuration = SimDuration(u64::MAX);

    /// A duration of `ms` milliseconds.
    pub const fn from_millis(ms: u64) -> SimDuration {
        SimDuration(ms * 1_000_000)
    }

    /// A duration of `s` seconds.
    pub const fn from_secs(s: u64) -> SimDuration {
        SimDuration(s * NANOS_PER_SEC)
    }

    /// A duration from floating-point nanoseconds, rounded to the nearest
    /// nanosecond; negative and NaN inputs give zero, huge ones saturate.
    pub fn from_nanos_f64(ns: f64) -> SimDuration {
        // `as` saturates and maps NaN to 0, which is the behaviour we want. Adding
        // 0.5 and truncating rounds non-negative values without a libm call.
        SimDuration((ns + 0.5) as u64)
    }

    /// The duration in seconds, for output.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }

    /// The duration in nanoseconds as a float, for arithmetic on delays.
    pub fn as_nanos_f64(self) -> f64 {
        self.0 as f64
    }
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    fn add(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}

impl AddAssign<SimDuration> for SimTime {
    fn add_assign(&mut self, d: SimDuration) {
        *self = *self + d;
    }
}

impl Sub<SimTime> for SimTime {
    type Output = SimDuration;
    fn sub(self, earlier: SimTime) -> SimDuration {
        self.since(earlier)
    }
}

impl Add for SimDuration {
    type Output = SimDuration;
    fn add(self, d: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_add(d.0))
    }
}

impl fmt::Display for SimDuration {
    /// Human units: `250ms`, `1.5s`, `40us`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        if *self == SimDuration::MAX {
            write!(f, "none")
        } else if ns == 0 {
            write!(f, "0s")
        } else if ns % NANOS_PER_SEC == 0 {
            write!(f, "{}s", ns / NANOS_PER_SEC)
        } else if ns >= NANOS_PER_SEC {
            write!(f, "{}s", ns as f64 / NANOS_PER_SEC as f64)
        } else if ns % 1_000_000 == 0 {
            write!(f, "{}ms", ns / 1_000_000)
        } else if ns >= 1_000_000 {
            write!(f, "{}ms", ns as f64 / 1e6)
        } else if ns % 1_000 == 0 {
            write!(f, "{}us", ns / 1_000)
        } else {
            write!(f, "{ns}ns")
        }
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t={}", SimDuration(self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates_instead_of_wrapping() {
        assert_eq!(SimTime::NEVER + SimDuration(5), SimTime::NEVER);
        assert_eq!(SimTime(3) - SimTime(5), SimDuration::ZERO);
        assert_eq!(SimTime(5) - SimTime(3), SimDuration(2));
    }

    #[test]
    fn float_conversion_rounds_and_clamps() {
        assert_eq!(SimDuration::from_nanos_f64(1.5), SimDuration(2));
        assert_eq!(SimDuration::from_nanos_f64(-3.0), SimDuration(0));
        assert_eq!(SimDuration::from_nanos_f64(f64::NAN), SimDuration(0));
        assert_eq!(
            SimDuration::from_nanos_f64(f64::INFINITY),
            SimDuration(u64::MAX)
        );
    }

    #[test]
    fn display_uses_the_natural_unit() {
        assert_eq!(SimDuration::from_millis(200).to_string(), "200ms");
        assert_eq!(SimDuration::from_secs(10).to_string(), "10s");
        assert_eq!(SimDuration::from_millis(1500).to_string(), "1.5s");
        assert_eq!(SimDuration(40_000).to_string(), "40us");
        assert_eq!(SimDuration(7).to_string(), "7ns");
    }
}
