//! Two counts over a sliding window of simulated time, kept in 20 sub-windows
//! (what the ratio and Finagle budgets and adaptive throttling count).

use std::collections::VecDeque;

use crate::engine::{SimDuration, SimTime};

const SLOTS: u64 = 20;

/// Counts `a` and `b` of events within the last `window`, to 1/20 of it.
#[derive(Clone, Debug)]
pub struct SlidingCounts {
    slot: u64,
    /// (sub-window index, a, b), oldest first.
    slots: VecDeque<(u64, u64, u64)>,
    a: u64,
    b: u64,
}

impl SlidingCounts {
    /// Empty counts over `window`.
    pub fn new(window: SimDuration) -> Self {
        SlidingCounts {
            slot: (window.0 / SLOTS).max(1),
            slots: VecDeque::new(),
            a: 0,
            b: 0,
        }
    }

    /// Forgets sub-windows that have left the window at `now`.
    pub fn expire(&mut self, now: SimTime) {
        let current = now.0 / self.slot;
        while let Some(&(i, a, b)) = self.slots.front() {
            if i + SLOTS > current {
                break;
            }
            self.a -= a;
            self.b -= b;
            self.slots.pop_front();
        }
    }

    /// Adds `a` and `b` at `now`.
    pub fn add(&mut self, now: SimTime, a: u64, b: u64) {
        self.expire(now);
        let current = now.0 / self.slot;
        match self.slots.back_mut() {
            Some(last) if last.0 == current => {
                last.1 += a;
                last.2 += b;
            }
            _ => self.slots.push_back((current, a, b)),
        }
        self.a += a;
        self.b += b;
    }

    /// The counts within the window (call [`SlidingCounts::expire`] first).
    pub fn counts(&self) -> (u64, u64) {
        (self.a, self.b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_leave_the_window_after_it_has_passed() {
        let mut w = SlidingCounts::new(SimDuration(100)); // sub-windows of 5
        w.add(SimTime(0), 1, 0);
        w.add(SimTime(50), 0, 2);
        assert_eq!(w.counts(), (1, 2));
        w.expire(SimTime(99));
        assert_eq!(w.counts(), (1, 2));
        w.expire(SimTime(100));
        assert_eq!(w.counts(), (0, 2), "the first sub-window [0, 5) has left");
        w.expire(SimTime(150));
        assert_eq!(w.counts(), (0, 0));
    }

    /// Events in one sub-window share its entry: the memory is bounded by
    /// the sub-windows, not by the rate.
    #[test]
    fn a_busy_sub_window_is_one_entry() {
        let mut w = SlidingCounts::new(SimDuration(100));
        for t in 0..1000 {
            w.add(SimTime(t / 10), 1, 1);
        }
        assert_eq!(w.counts(), (1000, 1000));
        assert_eq!(w.slots.len(), 20);
    }
}
