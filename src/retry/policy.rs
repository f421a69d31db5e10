//! The retry policy: classify an outcome, pick the delay (Retry-After or backoff),
//! and stop at the retry limit or the logical request's deadline.

use rand::Rng;

use super::backoff::Backoff;
use super::breaker::BreakerConfig;
use super::budget::BudgetConfig;
use super::outcome::{Outcome, OutcomeSet};
use super::throttle::ThrottleConfig;
use crate::engine::{SimDuration, SimTime};

/// Why a logical request was given up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GiveUp {
    /// The outcome is not retryable (400, 401, or not in `retry_on`).
    NotRetryable,
    /// `max_retries` retries were already made.
    RetriesExhausted,
    /// The next attempt would start at or after the request's deadline.
    DeadlineExceeded,
    /// The retry budget refused the retry.
    BudgetDenied,
    /// The circuit breaker or the adaptive throttle refused an attempt locally.
    RejectedLocally,
}

/// What to do after a failed attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Wait this long, then send the next attempt.
    Retry(SimDuration),
    /// Stop: the logical request fails.
    GiveUp(GiveUp),
}

/// When to retry (the delay itself comes from a [`Backoff`]).
#[derive(Clone, Debug, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (default 5, the starting article).
    pub max_retries: u32,
    /// Time limit of each attempt, from sending to the reply (default 1 s);
    /// `None`: wait for ever (the AWS model).
    pub timeout: Option<SimDuration>,
    /// Time limit of the whole logical request, from its first attempt; `None`: no limit.
    pub deadline: Option<SimDuration>,
    /// Outcomes worth retrying (default [`OutcomeSet::default_retryable`]).
    pub retry_on: OutcomeSet,
    /// Outcomes retried only when they carry a Retry-After the policy honours,
    /// as urllib3 retries a 429 or 503 with one (default none).
    pub retry_on_hinted: OutcomeSet,
    /// Whether a Retry-After value replaces the computed delay (default true).
    pub use_retry_after: bool,
    /// Retry-After values above this are ignored and the backoff delay is used
    /// instead, as Envoy does (REFERENCE.md section 4); default 60 s.
    pub retry_after_max: SimDuration,
    /// How an honoured Retry-After combines with the backoff (default: it
    /// replaces it).
    pub retry_after_mode: RetryAfterMode,
    /// The backoff's base after a 429 instead of `base`, as botocore 1.44 uses
    /// 1 s for throttling errors and 50 ms for the others; `None`: `base`.
    pub throttling_base: Option<SimDuration>,
}

/// How a Retry-After the policy honours sets the delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryAfterMode {
    /// The delay is the Retry-After (got, axios-retry's default delay, gRPC's
    /// pushback).
    Replace,
    /// The delay is the backoff's, raised towards the Retry-After by at most
    /// `slack`: `max(b, min(hint, b + slack))` (botocore 1.44's
    /// `x-amz-retry-after`, slack 5 s).
    AtLeast {
        /// Largest raise above the backoff's delay; `SimDuration::MAX`: none.
        slack: SimDuration,
    },
    /// The Retry-After raises the backoff's value before its jitter:
    /// `max(hint, v)` then the jitter (axios-retry's `exponentialDelay`).
    BeforeJitter,
}

/// What a policy does with a Retry-After of a given length: the one answer
/// that both the retry decision and every note about it (`sim validate`, `sim
/// run`'s warnings, `sim delays`, `sim presets`) read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryAfterUse {
    /// Not honoured: the policy ignores Retry-After, or this one is longer
    /// than `retry_after_max`; the backoff's delay stands.
    Ignored,
    /// The delay is the Retry-After.
    Replaces,
    /// The delay is the backoff's, raised towards the Retry-After by at most
    /// `slack` ([`RetryAfterMode::AtLeast`]).
    RaisesBy {
        /// Largest raise; `SimDuration::MAX`: none.
        slack: SimDuration,
    },
    /// The Retry-After raises the backoff's value before its jitter.
    RaisesBeforeJitter,
}

impl RetryAfterUse {
    /// Whether the Retry-After takes the backoff's place, so that strategies
    /// differing only in backoff act alike after it.
    pub fn replaces_backoff(self) -> bool {
        self == RetryAfterUse::Replaces
    }

    /// In words, as the notes say it: "replaces the backoff", ...
    pub fn words(self) -> String {
        match self {
            RetryAfterUse::Ignored => "is ignored (the backoff's delay stands)".into(),
            RetryAfterUse::Replaces => "replaces the backoff".into(),
            RetryAfterUse::RaisesBy { slack } if slack == SimDuration::MAX => {
                "raises the backoff's delay to at least the Retry-After".into()
            }
            RetryAfterUse::RaisesBy { slack } => {
                format!("raises the backoff's delay towards the Retry-After by at most {slack}")
            }
            RetryAfterUse::RaisesBeforeJitter => {
                "raises the backoff's value to the Retry-After before its jitter".into()
            }
        }
    }
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 5,
            timeout: Some(SimDuration::from_secs(1)),
            deadline: None,
            retry_on: OutcomeSet::default_retryable(),
            retry_on_hinted: OutcomeSet::default(),
            use_retry_after: true,
            retry_after_max: SimDuration::from_secs(60),
            retry_after_mode: RetryAfterMode::Replace,
            throttling_base: None,
        }
    }
}

/// The state of one logical request that the policy needs.
#[derive(Clone, Copy, Debug)]
pub struct Attempted {
    /// Retries made so far (0 after the first attempt).
    pub retries: u32,
    /// When the logical request's deadline passes (`SimTime::NEVER` if none).
    pub deadline_at: SimTime,
    /// What the backoff remembered at the previous retry (see [`Backoff::delay`];
    /// 0 before the first retry). [`RetryPolicy::decide`] updates it.
    pub memory: f64,
}

impl RetryPolicy {
    /// What this policy does with a Retry-After of `hint`.
    pub fn retry_after_use(&self, hint: SimDuration) -> RetryAfterUse {
        if !self.use_retry_after || hint > self.retry_after_max {
            return RetryAfterUse::Ignored;
        }
        match self.retry_after_mode {
            RetryAfterMode::Replace => RetryAfterUse::Replaces,
            RetryAfterMode::AtLeast { slack } => RetryAfterUse::RaisesBy { slack },
            RetryAfterMode::BeforeJitter => RetryAfterUse::RaisesBeforeJitter,
        }
    }

    /// Decides what follows `outcome` at `now`. `retry_after` is the server's hint.
    /// On a retry, `state.memory` is what the backoff remembers for the next one.
    pub fn decide<R: Rng + ?Sized>(
        &self,
        backoff: &Backoff,
        outcome: Outcome,
        retry_after: Option<SimDuration>,
        state: &mut Attempted,
        now: SimTime,
        rng: &mut R,
    ) -> Decision {
        let hinted = retry_after.is_some() && self.use_retry_after;
        let retried =
            self.retry_on.contains(outcome) || (hinted && self.retry_on_hinted.contains(outcome));
        if !retried {
            return Decision::GiveUp(GiveUp::NotRetryable);
        }
        if state.retries >= self.max_retries {
            return Decision::GiveUp(GiveUp::RetriesExhausted);
        }
        let throttled;
        let backoff = match (outcome, self.throttling_base) {
            (Outcome::Status429, Some(base)) => {
                throttled = Backoff { base, ..*backoff };
                &throttled
            }
            _ => backoff,
        };
        let n = state.retries + 1;
        let used = retry_after.map(|ra| (ra, self.retry_after_use(ra)));
        let delay = match used {
            Some((ra, RetryAfterUse::Replaces)) => {
                state.memory = backoff.memory_after_hint(n, ra, state.memory, rng);
                ra
            }
            Some((ra, RetryAfterUse::RaisesBy { slack })) => {
                let (delay, memory) = backoff.delay(n, state.memory, rng);
                state.memory = memory;
                delay.max(ra.min(delay + slack))
            }
            Some((ra, RetryAfterUse::RaisesBeforeJitter)) => {
                let (delay, memory) = backoff.delay_at_least(n, state.memory, ra, rng);
                state.memory = memory;
                delay
            }
            None | Some((_, RetryAfterUse::Ignored)) => {
                let (delay, memory) = backoff.delay(n, state.memory, rng);
                state.memory = memory;
                delay
            }
        };
        if now + delay >= state.deadline_at {
            return Decision::GiveUp(GiveUp::DeadlineExceeded);
        }
        Decision::Retry(delay)
    }
}

/// A named strategy a scenario compares: a backoff schedule and a policy.
#[derive(Clone, Debug, PartialEq)]
pub struct Strategy {
    /// Name used in output files and charts.
    pub name: String,
    /// How long to wait before each retry.
    pub backoff: Backoff,
    /// Whether to retry at all.
    pub policy: RetryPolicy,
    /// A retry budget, if any: each proxy's own, or one for all (`shared`).
    pub budget: Option<BudgetConfig>,
    /// A circuit breaker, if any: each proxy's own, or one for all.
    pub breaker: Option<BreakerConfig>,
    /// Client-side adaptive throttling, if any: each proxy's own, or one
    /// for all.
    pub throttle: Option<ThrottleConfig>,
    /// Which of the budget, breaker and throttle every proxy shares (one
    /// for all the users) instead of keeping its own. With one proxy, as a
    /// world has unless it says otherwise, it makes no difference.
    pub shared: Shared,
    /// In a call chain, the policy of the calls to each tier below the
    /// server (tier 1 first); empty without a chain.
    pub tiers: Vec<TierPolicy>,
    /// Hedged requests instead of retries, if any (the users' requests only).
    pub hedging: Option<super::HedgingConfig>,
    /// Each proxy's connection-pool limits (Envoy's circuit-breaker
    /// thresholds), if any: the users' attempts only.
    pub limits: Option<super::PoolLimits>,
}

/// Which guards a strategy's proxies share ([`Strategy::shared`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shared {
    /// One retry budget for all.
    pub budget: bool,
    /// One circuit breaker for all.
    pub breaker: bool,
    /// One adaptive throttle for all.
    pub throttle: bool,
}

impl Shared {
    /// The names a scenario lists in `shared`, in order.
    pub const NAMES: [&'static str; 3] = ["budget", "breaker", "throttle"];
}

/// What the callers of one tier do: the policy of their calls to it.
#[derive(Clone, Debug, PartialEq)]
pub struct TierPolicy {
    /// Backoff, retries, timeout, budget, breaker of the calls.
    pub strategy: Strategy,
    /// The call carries its caller's deadline: it gives up when the caller's
    /// attempt would, and the callee can drop the work of a caller that is gone
    /// (gRPC's deadline propagation).
    pub propagate_deadline: bool,
    /// A caller that stops waiting cancels the call (gRPC propagates a
    /// cancelled RPC's context to the calls made under it; Envoy resets the
    /// upstream stream of a reset downstream one): the call makes no more
    /// retries, and a hedged copy that lost frees its worker at once.
    pub propagate_cancel: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{Stream, stream};
    use crate::retry::BackoffKind;

    fn state(retries: u32) -> Attempted {
        Attempted {
            retries,
            deadline_at: SimTime::NEVER,
            memory: 0.0,
        }
    }

    fn decide(
        p: &RetryPolicy,
        o: Outcome,
        ra: Option<SimDuration>,
        s: Attempted,
        now: SimTime,
    ) -> Decision {
        let b = Backoff {
            kind: BackoffKind::Exponential,
            ..Backoff::default()
        };
        let mut s = s;
        p.decide(&b, o, ra, &mut s, now, &mut stream(1, Stream::Jitter))
    }

    #[test]
    fn classification_follows_retry_on() {
        let p = RetryPolicy::default();
        for o in [Outcome::Status400, Outcome::Status401, Outcome::Status500] {
            assert_eq!(
                decide(&p, o, None, state(0), SimTime::ZERO),
                Decision::GiveUp(GiveUp::NotRetryable)
            );
        }
        assert_eq!(
            decide(&p, Outcome::Reset, None, state(0), SimTime::ZERO),
            Decision::Retry(SimDuration::from_millis(200))
        );
        let only_timeouts = RetryPolicy {
            retry_on: [Outcome::Timeout].into_iter().collect(),
            ..p
        };
        assert_eq!(
            decide(
                &only_timeouts,
                Outcome::Status503,
                None,
                state(0),
                SimTime::ZERO
            ),
            Decision::GiveUp(GiveUp::NotRetryable)
        );
    }

    #[test]
    fn hinted_outcomes_are_retried_only_with_a_retry_after() {
        let p = RetryPolicy {
            retry_on: [Outcome::Reset].into_iter().collect(),
            retry_on_hinted: [Outcome::Status503].into_iter().collect(),
            ..RetryPolicy::default()
        };
        let ra = Some(SimDuration::from_secs(3));
        assert_eq!(
            decide(&p, Outcome::Status503, None, state(0), SimTime::ZERO),
            Decision::GiveUp(GiveUp::NotRetryable)
        );
        assert_eq!(
            decide(&p, Outcome::Status503, ra, state(0), SimTime::ZERO),
            Decision::Retry(SimDuration::from_secs(3))
        );
        let deaf = RetryPolicy {
            use_retry_after: false,
            ..p
        };
        assert_eq!(
            decide(&deaf, Outcome::Status503, ra, state(0), SimTime::ZERO),
            Decision::GiveUp(GiveUp::NotRetryable)
        );
    }

    #[test]
    fn stops_after_max_retries() {
        let p = RetryPolicy {
            max_retries: 2,
            ..RetryPolicy::default()
        };
        assert!(matches!(
            decide(&p, Outcome::Timeout, None, state(1), SimTime::ZERO),
            Decision::Retry(_)
        ));
        assert_eq!(
            decide(&p, Outcome::Timeout, None, state(2), SimTime::ZERO),
            Decision::GiveUp(GiveUp::RetriesExhausted)
        );
    }

    #[test]
    fn retry_after_replaces_the_backoff_up_to_its_maximum() {
        let p = RetryPolicy::default();
        let ra = Some(SimDuration::from_secs(3));
        assert_eq!(
            decide(&p, Outcome::Status503, ra, state(0), SimTime::ZERO),
            Decision::Retry(SimDuration::from_secs(3))
        );
        // Over the maximum: ignored, the backoff (200 ms for the first retry) is used.
        let strict = RetryPolicy {
            retry_after_max: SimDuration::from_secs(2),
            ..p.clone()
        };
        assert_eq!(
            decide(&strict, Outcome::Status503, ra, state(0), SimTime::ZERO),
            Decision::Retry(SimDuration::from_millis(200))
        );
        // Turned off: ignored.
        let deaf = RetryPolicy {
            use_retry_after: false,
            ..p
        };
        assert_eq!(
            decide(&deaf, Outcome::Status503, ra, state(1), SimTime::ZERO),
            Decision::Retry(SimDuration::from_millis(400))
        );
    }

    /// A raise with no limit says "at least"; one with a limit names it
    /// (the words the notes of `sim delays` and `sim run` print).
    #[test]
    fn a_raise_is_said_with_its_limit() {
        let unlimited = RetryAfterUse::RaisesBy {
            slack: SimDuration::MAX,
        }
        .words();
        assert!(
            unlimited.contains("to at least the Retry-After"),
            "{unlimited}"
        );
        let limited = RetryAfterUse::RaisesBy {
            slack: SimDuration::from_secs(2),
        }
        .words();
        assert!(limited.contains("by at most 2s"), "{limited}");
        assert!(!limited.contains("at least"), "{limited}");
    }

    /// A Retry-After of exactly `retry_after_max` is honoured; only one
    /// above it is ignored (Envoy ignores values above its maximum).
    #[test]
    fn a_retry_after_at_the_maximum_is_honoured() {
        let p = RetryPolicy::default();
        let max = p.retry_after_max;
        assert_eq!(p.retry_after_use(max), RetryAfterUse::Replaces);
        assert_eq!(
            p.retry_after_use(max + SimDuration(1)),
            RetryAfterUse::Ignored
        );
    }

    #[test]
    fn what_a_retry_after_does_is_said_as_the_decision_takes_it() {
        let p = |mode| RetryPolicy {
            retry_after_mode: mode,
            ..RetryPolicy::default()
        };
        let hint = SimDuration::from_secs(3);
        let replace = p(RetryAfterMode::Replace).retry_after_use(hint);
        assert!(replace.replaces_backoff() && replace.words().contains("replaces"));
        for mode in [
            RetryAfterMode::AtLeast {
                slack: SimDuration::from_secs(5),
            },
            RetryAfterMode::BeforeJitter,
        ] {
            let used = p(mode).retry_after_use(hint);
            assert!(!used.replaces_backoff(), "{mode:?}");
            assert!(
                !used.words().contains("replaces"),
                "{mode:?}: {}",
                used.words()
            );
        }
        // Over retry_after_max, or with use_retry_after = false: ignored.
        let long = SimDuration::from_secs(61);
        assert_eq!(
            p(RetryAfterMode::Replace).retry_after_use(long),
            RetryAfterUse::Ignored
        );
        let off = RetryPolicy {
            use_retry_after: false,
            ..RetryPolicy::default()
        };
        assert_eq!(off.retry_after_use(hint), RetryAfterUse::Ignored);
    }

    #[test]
    fn retry_after_modes_combine_the_hint_with_the_backoff() {
        let ra = |s: u64| Some(SimDuration::from_secs(s));
        // botocore: max(t, min(hint, t + slack)) with t the backoff's delay
        // (200 ms here, exponential without jitter).
        let at_least = RetryPolicy {
            retry_after_mode: RetryAfterMode::AtLeast {
                slack: SimDuration::from_secs(5),
            },
            ..RetryPolicy::default()
        };
        let d =
            |p: &RetryPolicy, hint| decide(p, Outcome::Status503, hint, state(0), SimTime::ZERO);
        assert_eq!(
            d(&at_least, ra(3)),
            Decision::Retry(SimDuration::from_secs(3))
        );
        assert_eq!(
            d(&at_least, ra(9)),
            Decision::Retry(SimDuration::from_millis(5200)),
            "raised by at most the slack"
        );
        assert_eq!(
            d(&at_least, Some(SimDuration::from_millis(50))),
            Decision::Retry(SimDuration::from_millis(200)),
            "never below the backoff"
        );
        // axios-retry's exponentialDelay: the hint raises the value before the
        // jitter, so the delay is hint * U(1, 1.2).
        let b = Backoff {
            kind: crate::retry::BackoffKind::Exponential,
            jitter: crate::retry::Jitter::Scale {
                low: 1.0,
                high: 1.2,
            },
            ..Backoff::default()
        };
        let before = RetryPolicy {
            retry_after_mode: RetryAfterMode::BeforeJitter,
            ..RetryPolicy::default()
        };
        let mut rng = stream(1, Stream::Jitter);
        for _ in 0..200 {
            let mut s = state(0);
            let Decision::Retry(x) = before.decide(
                &b,
                Outcome::Status503,
                ra(3),
                &mut s,
                SimTime::ZERO,
                &mut rng,
            ) else {
                panic!("retried");
            };
            assert!((3.0..=3.6).contains(&x.as_secs_f64()), "{x}");
        }
    }

    #[test]
    fn a_throttling_base_applies_after_a_429_only() {
        let p = RetryPolicy {
            throttling_base: Some(SimDuration::from_secs(1)),
            ..RetryPolicy::default()
        };
        assert_eq!(
            decide(&p, Outcome::Status429, None, state(1), SimTime::ZERO),
            Decision::Retry(SimDuration::from_secs(2))
        );
        assert_eq!(
            decide(&p, Outcome::Status503, None, state(1), SimTime::ZERO),
            Decision::Retry(SimDuration::from_millis(400))
        );
    }

    #[test]
    fn no_retry_would_start_at_or_after_the_deadline() {
        let p = RetryPolicy::default();
        let s = Attempted {
            deadline_at: SimTime(1_000_000_000),
            ..state(0)
        };
        // 200 ms backoff from t = 0.7 s lands at 0.9 s: allowed.
        assert!(matches!(
            decide(&p, Outcome::Timeout, None, s, SimTime(700_000_000)),
            Decision::Retry(_)
        ));
        // From t = 0.8 s it would land exactly on the deadline: refused.
        assert_eq!(
            decide(&p, Outcome::Timeout, None, s, SimTime(800_000_000)),
            Decision::GiveUp(GiveUp::DeadlineExceeded)
        );
    }
}
