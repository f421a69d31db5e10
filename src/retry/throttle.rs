//! Client-side adaptive throttling (Google SRE book, "Handling Overload"): over a
//! sliding window the client counts the attempts it made (`requests`) and those
//! the server accepted (`accepts`), and refuses a new attempt locally with
//! probability max(0, (requests - K * accepts) / (requests + 1)). K = 2 and a
//! 2-minute window are the book's values.

use crate::engine::{SimDuration, SimTime};
use crate::retry::Outcome;
use crate::retry::window::SlidingCounts;

/// The throttle's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct ThrottleConfig {
    /// K: how many requests per accept are tolerated (default 2).
    pub k: f64,
    /// The window (default 2 min).
    pub window: SimDuration,
}

/// The throttle during a run.
#[derive(Clone, Debug)]
pub struct Throttle {
    k: f64,
    /// Requests and accepts in the window.
    counts: SlidingCounts,
}

impl Throttle {
    /// A throttle with empty counts.
    pub fn new(c: &ThrottleConfig) -> Self {
        Throttle {
            k: c.k,
            counts: SlidingCounts::new(c.window),
        }
    }

    /// The probability that an attempt at `now` is refused locally.
    pub fn reject_probability(&mut self, now: SimTime) -> f64 {
        self.counts.expire(now);
        let (r, a) = self.counts.counts();
        let (r, a) = (r as f64, a as f64);
        ((r - self.k * a) / (r + 1.0)).max(0.0)
    }

    /// An attempt is made (sent, or refused locally: both count as requests).
    pub fn on_request(&mut self, now: SimTime) {
        self.counts.add(now, 1, 0);
    }

    /// The server accepted an attempt (answered it other than with overload).
    pub fn on_accept(&mut self, now: SimTime) {
        self.counts.add(now, 0, 1);
    }

    /// An attempt's answer (or its timeout) reaches the client: accepted if
    /// it is an OK or one of the client's own errors (400, 401, 409), which
    /// the backend answered rather than refused.
    #[inline]
    pub fn on_answer(&mut self, now: SimTime, outcome: Outcome) {
        if matches!(
            outcome,
            Outcome::Ok | Outcome::Status400 | Outcome::Status401 | Outcome::Status409
        ) {
            self.on_accept(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejection_probability_follows_the_sre_formula() {
        let mut t = Throttle::new(&ThrottleConfig {
            k: 2.0,
            window: SimDuration::from_secs(120),
        });
        let now = SimTime(1);
        assert_eq!(t.reject_probability(now), 0.0);
        for _ in 0..100 {
            t.on_request(now);
        }
        for _ in 0..30 {
            t.on_accept(now);
        }
        // (100 - 2 * 30) / 101
        assert!((t.reject_probability(now) - 40.0 / 101.0).abs() < 1e-12);
        for _ in 0..20 {
            t.on_accept(now);
        }
        assert_eq!(
            t.reject_probability(now),
            0.0,
            "100 requests, 50 accepts: K = 2 tolerates it"
        );
        // Two minutes later everything has left the window.
        assert_eq!(t.reject_probability(SimTime(121_000_000_000)), 0.0);
        assert_eq!(t.counts.counts(), (0, 0));
    }

    /// An answer counts as an accept when the backend answered rather than
    /// refused it (OK and the client's own errors), not when it shed,
    /// failed or timed out.
    #[test]
    fn answers_the_backend_gave_count_as_accepts() {
        let mut t = Throttle::new(&ThrottleConfig {
            k: 2.0,
            window: SimDuration::from_secs(120),
        });
        let now = SimTime(1);
        for _ in 0..10 {
            t.on_request(now);
        }
        for o in [
            Outcome::Status503,
            Outcome::Status429,
            Outcome::Timeout,
            Outcome::Reset,
        ] {
            t.on_answer(now, o);
        }
        assert_eq!(
            t.counts.counts(),
            (10, 0),
            "refusals and timeouts are not accepts"
        );
        for o in [
            Outcome::Ok,
            Outcome::Status400,
            Outcome::Status401,
            Outcome::Status409,
        ] {
            t.on_answer(now, o);
        }
        assert_eq!(t.counts.counts(), (10, 4));
        // (10 - 2 * 4) / 11
        assert!((t.reject_probability(now) - 2.0 / 11.0).abs() < 1e-12);
    }
}
