//! Client-side adaptive throttling (Google SRE book, "Handling Overload"): over a
//! sliding window the client counts the attempts it made (`requests`) and those
//! the server accepted (`accepts`), and refuses a new attempt locally with
//! probability max(0, (requests - K * accepts) / (requests + 1)). K = 2 and a
//! 2-minute window are the book's values.

use std::collections::VecDeque;

use crate::engine::{SimDuration, SimTime};

/// The throttle's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct ThrottleConfig {
    /// K: how many requests per accept are tolerated (default 2).
    pub k: f64,
    /// The window (default 2 min).
    pub window: SimDuration,
}

/// The throttle during a run: counts in 20 sub-windows.
#[derive(Clone, Debug)]
pub struct Throttle {
    k: f64,
    slot: u64,
    slots: VecDeque<(u64, u64, u64)>,
    requests: u64,
    accepts: u64,
}

const SLOTS: u64 = 20;

impl Throttle {
    /// A throttle with empty counts.
    pub fn new(c: &ThrottleConfig) -> Self {
        Throttle {
            k: c.k,
            slot: (c.window.0 / SLOTS).max(1),
            slots: VecDeque::new(),
            requests: 0,
            accepts: 0,
        }
    }

    fn expire(&mut self, now: SimTime) {
        let current = now.0 / self.slot;
        while let Some(&(i, req, acc)) = self.slots.front() {
            if i + SLOTS > current {
                break;
            }
            self.requests -= req;
            self.accepts -= acc;
            self.slots.pop_front();
        }
    }

    fn add(&mut self, now: SimTime, requests: u64, accepts: u64) {
        self.expire(now);
        let current = now.0 / self.slot;
        match self.slots.back_mut() {
            Some(last) if last.0 == current => {
                last.1 += requests;
                last.2 += accepts;
            }
            _ => self.slots.push_back((current, requests, accepts)),
        }
        self.requests += requests;
        self.accepts += accepts;
    }

    /// The probability that an attempt at `now` is refused locally.
    pub fn reject_probability(&mut self, now: SimTime) -> f64 {
        self.expire(now);
        let (r, a) = (self.requests as f64, self.accepts as f64);
        ((r - self.k * a) / (r + 1.0)).max(0.0)
    }

    /// An attempt is made (sent, or refused locally: both count as requests).
    pub fn on_request(&mut self, now: SimTime) {
        self.add(now, 1, 0);
    }

    /// The server accepted an attempt (answered it other than with overload).
    pub fn on_accept(&mut self, now: SimTime) {
        self.add(now, 0, 1);
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
        assert_eq!((t.requests, t.accepts), (0, 0));
    }
}
