//! A circuit breaker (closed, open, half-open), resilience4j style with a
//! count-based window (REFERENCE.md section 4): it opens when, over the last
//! `window` attempts (and at least `min_calls`), the share that failed reaches
//! `failure_rate`; stays open for `open_for`, stretched or shrunk by up to
//! `jitter` of itself; then lets `probes` attempts through, and closes if fewer
//! than `failure_rate` of them fail, else opens again. Defaults are
//! resilience4j's: 50%, 100 calls, 100 minimum, 60 s, 10 probes, no jitter.

use std::collections::VecDeque;

use rand::{Rng, RngExt};

use crate::engine::{SimDuration, SimTime};

/// The breaker's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct BreakerConfig {
    /// Failure share at which it opens, in (0, 1].
    pub failure_rate: f64,
    /// Attempts the failure share is measured over.
    pub window: u32,
    /// Attempts needed in the window before it may open.
    pub min_calls: u32,
    /// How long it stays open.
    pub open_for: SimDuration,
    /// Random stretch of `open_for`: uniform in +-`jitter` of it, in [0, 1).
    pub jitter: f64,
    /// Attempts let through when half-open.
    pub probes: u32,
}

/// The breaker's state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum State {
    /// Attempts go through; outcomes are counted.
    Closed,
    /// Attempts are refused until the given time.
    Open {
        /// When it turns half-open.
        until: SimTime,
    },
    /// Up to `probes` attempts go through to test the server.
    HalfOpen {
        /// Probes not yet sent.
        to_send: u32,
        /// Probes answered, and of those failed.
        answered: u32,
        /// Failed probes.
        failed: u32,
    },
}

/// A breaker during a run.
#[derive(Clone, Debug)]
pub struct Breaker {
    config: BreakerConfig,
    state: State,
    /// Closed: the latest outcomes, true for a failure.
    recent: VecDeque<bool>,
    failures: u32,
}

/// What the breaker says to an attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Go ahead.
    Allow,
    /// Go ahead: this attempt is a half-open probe.
    Probe,
    /// Refused locally.
    Reject,
}

impl Breaker {
    /// A closed breaker.
    pub fn new(config: &BreakerConfig) -> Self {
        Breaker {
            config: config.clone(),
            state: State::Closed,
            recent: VecDeque::new(),
            failures: 0,
        }
    }

    /// The current state.
    pub fn state(&self) -> State {
        self.state
    }

    /// May an attempt go out at `now`? An open breaker whose time is up turns
    /// half-open here (and via [`Breaker::on_timer`]).
    pub fn check(&mut self, now: SimTime) -> Verdict {
        self.on_timer(now);
        match &mut self.state {
            State::Closed => Verdict::Allow,
            State::Open { .. } => Verdict::Reject,
            State::HalfOpen { to_send, .. } if *to_send > 0 => {
                *to_send -= 1;
                Verdict::Probe
            }
            State::HalfOpen { .. } => Verdict::Reject,
        }
    }

    /// Turns an expired open state half-open; returns true if it did.
    pub fn on_timer(&mut self, now: SimTime) -> bool {
        match self.state {
            State::Open { until } if now >= until => {
                self.state = State::HalfOpen {
                    to_send: self.config.probes,
                    answered: 0,
                    failed: 0,
                };
                true
            }
            _ => false,
        }
    }

    /// The outcome of an attempt it let through (`probe` if it was a probe). Returns
    /// `Some(until)` when the breaker opens.
    pub fn record<R: Rng + ?Sized>(
        &mut self,
        failed: bool,
        probe: bool,
        now: SimTime,
        rng: &mut R,
    ) -> Option<SimTime> {
        match &mut self.state {
            State::Closed => {
                self.recent.push_back(failed);
                self.failures += u32::from(failed);
                if self.recent.len() > self.config.window as usize {
                    let old = self.recent.pop_front().unwrap_or(false);
                    self.failures -= u32::from(old);
                }
                let n = self.recent.len() as u32;
                let tripped = n >= self.config.min_calls
                    && f64::from(self.failures) >= self.config.failure_rate * f64::from(n);
                tripped.then(|| self.open(now, rng))
            }
            State::HalfOpen {
                answered,
                failed: bad,
                ..
            } if probe => {
                *answered += 1;
                *bad += u32::from(failed);
                if *answered < self.config.probes {
                    return None;
                }
                if f64::from(*bad) >= self.config.failure_rate * f64::from(*answered) {
                    Some(self.open(now, rng))
                } else {
                    self.state = State::Closed;
                    self.recent.clear();
                    self.failures = 0;
                    None
                }
            }
            // Answers to attempts sent before it opened change nothing.
            State::HalfOpen { .. } | State::Open { .. } => None,
        }
    }

    fn open<R: Rng + ?Sized>(&mut self, now: SimTime, rng: &mut R) -> SimTime {
        let j = self.config.jitter;
        let stretch = if j > 0.0 {
            1.0 + j * (2.0 * rng.random::<f64>() - 1.0)
        } else {
            1.0
        };
        let until =
            now + SimDuration::from_nanos_f64(self.config.open_for.as_nanos_f64() * stretch);
        self.state = State::Open { until };
        self.recent.clear();
        self.failures = 0;
        until
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{Stream, stream};

    fn config() -> BreakerConfig {
        BreakerConfig {
            failure_rate: 0.5,
            window: 4,
            min_calls: 4,
            open_for: SimDuration(100),
            jitter: 0.0,
            probes: 2,
        }
    }

    #[test]
    fn opens_at_the_failure_rate_and_probes_after_the_open_time() {
        let mut rng = stream(1, Stream::Jitter);
        let mut b = Breaker::new(&config());
        // Three calls are below min_calls: no opening even if all fail.
        for _ in 0..3 {
            assert_eq!(b.check(SimTime(0)), Verdict::Allow);
            assert_eq!(b.record(true, false, SimTime(0), &mut rng), None);
        }
        // The fourth: 3 failures of 4 >= 50%: open until t = 10 + 100.
        assert_eq!(
            b.record(false, false, SimTime(10), &mut rng),
            Some(SimTime(110))
        );
        assert_eq!(b.check(SimTime(50)), Verdict::Reject);
        assert_eq!(b.check(SimTime(109)), Verdict::Reject);
        // Half-open at 110: two probes, then rejections.
        assert_eq!(b.check(SimTime(110)), Verdict::Probe);
        assert_eq!(b.check(SimTime(111)), Verdict::Probe);
        assert_eq!(b.check(SimTime(112)), Verdict::Reject);
        // One probe fails of two: 50% >= 50%: open again.
        assert_eq!(b.record(false, true, SimTime(120), &mut rng), None);
        assert_eq!(
            b.record(true, true, SimTime(130), &mut rng),
            Some(SimTime(230))
        );
        // Next time both probes succeed: closed.
        assert_eq!(b.check(SimTime(230)), Verdict::Probe);
        assert_eq!(b.check(SimTime(231)), Verdict::Probe);
        b.record(false, true, SimTime(240), &mut rng);
        b.record(false, true, SimTime(241), &mut rng);
        assert_eq!(b.state(), State::Closed);
        assert_eq!(b.check(SimTime(242)), Verdict::Allow);
    }

    #[test]
    fn the_window_forgets_old_failures() {
        let mut rng = stream(1, Stream::Jitter);
        let mut b = Breaker::new(&config());
        // Alternating with failures at 1 in 4 never reaches 50%.
        for i in 0..40 {
            assert_eq!(b.record(i % 4 == 0, false, SimTime(i), &mut rng), None);
        }
        assert_eq!(b.state(), State::Closed);
    }

    #[test]
    fn jitter_stretches_the_open_time_within_bounds() {
        let mut rng = stream(2, Stream::Jitter);
        let c = BreakerConfig {
            jitter: 0.5,
            window: 1,
            min_calls: 1,
            ..config()
        };
        let (mut shortest, mut longest) = (u64::MAX, 0);
        for _ in 0..1000 {
            let mut b = Breaker::new(&c);
            let until = b.record(true, false, SimTime(0), &mut rng).unwrap();
            assert!((50..=150).contains(&until.0), "{until:?}");
            (shortest, longest) = (shortest.min(until.0), longest.max(until.0));
        }
        // And it does stretch: a uniform over [50, 150] comes within 5 of
        // each end in 1000 draws but with probability 2 * 0.95^1000.
        assert!(shortest <= 55 && longest >= 145, "{shortest} to {longest}");
    }

    /// Half-open, the probes' failure share is held to the rate: one of
    /// four failing is under 50%, and the breaker closes.
    #[test]
    fn half_open_closes_when_the_probes_fail_under_the_rate() {
        let mut rng = stream(1, Stream::Jitter);
        let mut b = Breaker::new(&BreakerConfig {
            probes: 4,
            ..config()
        });
        for t in 0..4 {
            b.record(true, false, SimTime(t), &mut rng);
        }
        for t in 103..107 {
            assert_eq!(b.check(SimTime(t)), Verdict::Probe);
        }
        for (t, failed) in [(110, true), (111, false), (112, false), (113, false)] {
            assert_eq!(b.record(failed, true, SimTime(t), &mut rng), None);
        }
        assert_eq!(b.state(), State::Closed);
    }

    /// Half-open, only the probes' answers count: an answer to an attempt
    /// let through before the breaker opened (not a probe) changes nothing,
    /// however it went.
    #[test]
    fn half_open_counts_only_the_probes() {
        let mut rng = stream(1, Stream::Jitter);
        let mut b = Breaker::new(&config());
        for t in 0..4 {
            b.record(true, false, SimTime(t), &mut rng);
        }
        assert_eq!(b.check(SimTime(103)), Verdict::Probe);
        assert_eq!(b.check(SimTime(104)), Verdict::Probe);
        // Two late successes of attempts sent while it was closed.
        assert_eq!(b.record(false, false, SimTime(105), &mut rng), None);
        assert_eq!(b.record(false, false, SimTime(106), &mut rng), None);
        assert!(matches!(b.state(), State::HalfOpen { answered: 0, .. }));
        // The probes both fail: open again.
        assert_eq!(b.record(true, true, SimTime(107), &mut rng), None);
        assert_eq!(
            b.record(true, true, SimTime(108), &mut rng),
            Some(SimTime(208))
        );
    }
}
