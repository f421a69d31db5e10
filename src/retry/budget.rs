//! Retry budgets: whether a retry may happen at all, whatever its delay
//! (REFERENCE.md section 4). One budget serves every client of a run, as one
//! client process (an SDK or a proxy) would for its callers.
//!
//! A retry is charged when it is decided, not when it is sent, so retries that
//! are waiting out their backoff already count against the budget (a known bug of
//! real proxies is that they do not).

use crate::engine::{SimDuration, SimTime};
use crate::retry::Outcome;
use crate::retry::window::SlidingCounts;

/// Which budget, with its parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum BudgetConfig {
    /// gRPC retry throttling (gRFC A6): a bucket that starts full at `max_tokens`;
    /// each failed attempt takes 1 (floor 0), each success adds `token_ratio`
    /// (cap `max_tokens`); retries only while tokens > `max_tokens / 2`.
    /// Example values in A6: 10 and 0.1.
    TokenBucket {
        /// Bucket size.
        max_tokens: f64,
        /// Tokens returned per success.
        token_ratio: f64,
    },
    /// The AWS SDK standard retry quota (botocore): starts at `capacity`; a retry
    /// costs `retry_cost` (`timeout_cost` after a timeout, `throttling_cost`
    /// after a 429) and is refused when the quota cannot pay; a success refunds
    /// its retry's cost, a first-try success adds `success_bonus`. Defaults 500,
    /// 5, 10, 5, 1 (botocore up to 1.43); botocore 1.44 charges 14, 14, 5.
    AwsQuota {
        /// Initial and largest quota.
        capacity: u32,
        /// Cost of a retry.
        retry_cost: u32,
        /// Cost of a retry after a timeout.
        timeout_cost: u32,
        /// Cost of a retry after a throttling response (429).
        throttling_cost: u32,
        /// Added by a success on the first attempt.
        success_bonus: u32,
    },
    /// Google SRE, "Handling Overload": retry only while retries / requests over
    /// the last `window` is below `ratio` (10% in the book).
    Ratio {
        /// Largest share of retries.
        ratio: f64,
        /// Sliding window.
        window: SimDuration,
    },
    /// Finagle's RetryBudget: over the last `ttl`, retries may be `percent` of
    /// requests plus a reserve of `min_per_s * ttl`. Defaults 10 s, 10/s, 20%.
    Finagle {
        /// How long a deposit lasts.
        ttl: SimDuration,
        /// Retries per second always allowed.
        min_per_s: f64,
        /// Share of requests that may be retried.
        percent: f64,
    },
    /// Envoy's retry budget or its retry circuit breaker.
    Concurrency(ConcurrencyLimit),
    /// The circuit breaker of Brooker's retry simulator (retry_sim, 2022):
    /// first attempts always go; a retry goes only while the failed
    /// attempts so far, this one included, are at most `max_rate` of the
    /// logical requests so far (over the client's whole life: no window,
    /// no open time). It stops retries, never first attempts.
    FailureRatio {
        /// Failed attempts per request above which retries stop (0.1).
        max_rate: f64,
    },
}

/// Envoy's retry budget: retries in progress may be at most `percent` of the
/// logical requests in progress, and never fewer than `min_concurrency`.
/// With `percent` 0 it is Envoy's default cluster circuit breaker,
/// `max_retries` 3 retries in progress.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConcurrencyLimit {
    /// Share of the requests in progress that may be retries (Envoy: 0.2).
    pub percent: f64,
    /// Retries in progress always allowed (Envoy: 3).
    pub min_concurrency: u32,
    /// Whether a retry is in progress from its decision, its backoff
    /// included (true), or only once it is sent, as Envoy counts it (false:
    /// retries waiting out their backoff are not counted, so many can be
    /// decided at once; envoyproxy/envoy#30205).
    pub count_backoff: bool,
}

/// The cost a concurrency budget returns for a retry it counts among those
/// in progress.
const COUNTED: u32 = 1;

/// The cost a concurrency budget returns for a retry it allowed but has not
/// counted yet (`count_backoff` false): [`Budget::on_retry_sent`] counts it.
pub const UNCOUNTED: u32 = 2;

/// A budget's state during a run.
#[derive(Clone, Debug)]
pub struct Budget {
    config: BudgetConfig,
    /// Token bucket tokens or AWS quota.
    level: f64,
    /// Requests and retries in the window (ratio and Finagle budgets).
    window: Option<SlidingCounts>,
    /// Logical requests and retries in progress (concurrency budget).
    active_requests: u64,
    active_retries: u64,
    /// Logical requests and failed attempts so far (failure ratio).
    calls: u64,
    failures: u64,
}

impl Budget {
    /// A budget in its initial state.
    pub fn new(config: &BudgetConfig) -> Budget {
        let (level, window) = match config {
            BudgetConfig::TokenBucket { max_tokens, .. } => (*max_tokens, None),
            BudgetConfig::AwsQuota { capacity, .. } => (f64::from(*capacity), None),
            BudgetConfig::Ratio { window, .. } => (0.0, Some(SlidingCounts::new(*window))),
            BudgetConfig::Finagle { ttl, .. } => (0.0, Some(SlidingCounts::new(*ttl))),
            BudgetConfig::Concurrency(_) | BudgetConfig::FailureRatio { .. } => (0.0, None),
        };
        Budget {
            config: config.clone(),
            level,
            window,
            active_requests: 0,
            active_retries: 0,
            calls: 0,
            failures: 0,
        }
    }

    /// Tokens (token bucket) or quota (AWS) now; 0 for the window budgets.
    pub fn level(&self) -> f64 {
        self.level
    }

    /// A logical request sends its first attempt.
    pub fn on_request(&mut self, now: SimTime) {
        if let Some(w) = &mut self.window {
            w.add(now, 1, 0);
        }
        self.active_requests += 1;
        self.calls += 1;
    }

    /// A logical request ended, whatever its fate.
    pub fn on_request_end(&mut self) {
        self.active_requests = self.active_requests.saturating_sub(1);
    }

    /// A retry that was charged `retry_cost` ended without an answer: the
    /// breaker or the throttle refused to send it.
    pub fn on_retry_abandoned(&mut self, retry_cost: u32) {
        self.release(retry_cost);
    }

    /// An attempt failed with `outcome`; `retry_cost` is what its retry was
    /// charged (0 for a first attempt).
    pub fn on_failure(&mut self, _outcome: Outcome, retry_cost: u32) {
        if let BudgetConfig::TokenBucket { .. } = self.config {
            self.level = (self.level - 1.0).max(0.0);
        }
        self.failures += 1;
        self.release(retry_cost);
    }

    /// A concurrency budget's retry is no longer in progress (one that was
    /// never counted, [`UNCOUNTED`], was not).
    fn release(&mut self, retry_cost: u32) {
        if let BudgetConfig::Concurrency(_) = self.config {
            if retry_cost == COUNTED {
                self.active_retries = self.active_retries.saturating_sub(1);
            }
        }
    }

    /// A retry that was charged `retry_cost` is sent: a concurrency budget
    /// that counts retries only once sent counts it now. Returns the cost
    /// to keep for its release or refund (another budget's cost, an AWS
    /// quota's 2 included, is kept as it is).
    pub fn on_retry_sent(&mut self, retry_cost: u32) -> u32 {
        if matches!(self.config, BudgetConfig::Concurrency(_)) && retry_cost == UNCOUNTED {
            self.active_retries += 1;
            return COUNTED;
        }
        retry_cost
    }

    /// An attempt succeeded; `retry_cost` is what its retry was charged (0 for a
    /// first attempt).
    pub fn on_success(&mut self, retry_cost: u32) {
        self.release(retry_cost);
        match &self.config {
            BudgetConfig::TokenBucket {
                max_tokens,
                token_ratio,
            } => {
                self.level = (self.level + token_ratio).min(*max_tokens);
            }
            BudgetConfig::AwsQuota {
                capacity,
                success_bonus,
                ..
            } => {
                let refund = if retry_cost > 0 {
                    retry_cost
                } else {
                    *success_bonus
                };
                self.level = (self.level + f64::from(refund)).min(f64::from(*capacity));
            }
            BudgetConfig::Ratio { .. }
            | BudgetConfig::Finagle { .. }
            | BudgetConfig::Concurrency(_)
            | BudgetConfig::FailureRatio { .. } => {}
        }
    }

    /// May a retry follow `outcome` at `now`? If so it is charged at once, and
    /// the cost to refund on success is returned.
    pub fn try_retry(&mut self, now: SimTime, outcome: Outcome) -> Option<u32> {
        match &self.config {
            BudgetConfig::TokenBucket { max_tokens, .. } => {
                (self.level > max_tokens / 2.0).then_some(0)
            }
            BudgetConfig::AwsQuota {
                retry_cost,
                timeout_cost,
                throttling_cost,
                ..
            } => {
                let cost = match outcome {
                    Outcome::Timeout => *timeout_cost,
                    Outcome::Status429 => *throttling_cost,
                    _ => *retry_cost,
                };
                if self.level < f64::from(cost) {
                    return None;
                }
                self.level -= f64::from(cost);
                Some(cost)
            }
            BudgetConfig::Ratio { ratio, .. } => {
                let ratio = *ratio;
                let w = self.window.as_mut()?;
                w.expire(now);
                let (requests, retries) = w.counts();
                // Would this retry keep retries / requests below the ratio?
                let allowed = (retries + 1) as f64 <= ratio * requests as f64;
                if allowed {
                    w.add(now, 0, 1);
                }
                allowed.then_some(0)
            }
            BudgetConfig::Finagle {
                ttl,
                min_per_s,
                percent,
            } => {
                let reserve = min_per_s * ttl.as_secs_f64();
                let percent = *percent;
                let w = self.window.as_mut()?;
                w.expire(now);
                let (requests, retries) = w.counts();
                let allowed = ((retries + 1) as f64) <= reserve + percent * requests as f64;
                if allowed {
                    w.add(now, 0, 1);
                }
                allowed.then_some(0)
            }
            BudgetConfig::FailureRatio { max_rate } => {
                (self.failures as f64 <= max_rate * self.calls as f64).then_some(0)
            }
            BudgetConfig::Concurrency(limit) => {
                let cap = (limit.percent * self.active_requests as f64)
                    .max(f64::from(limit.min_concurrency));
                if (self.active_retries + 1) as f64 > cap {
                    return None;
                }
                if !limit.count_backoff {
                    // Counted when sent (`on_retry_sent`), as Envoy does.
                    return Some(UNCOUNTED);
                }
                self.active_retries += 1;
                // The attempt holds a retry in progress.
                Some(COUNTED)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> SimTime {
        SimTime(ms * 1_000_000)
    }

    #[test]
    fn token_bucket_follows_grpc_a6() {
        // max 10, ratio 0.1: start at 10; retries allowed while tokens > 5.
        let mut b = Budget::new(&BudgetConfig::TokenBucket {
            max_tokens: 10.0,
            token_ratio: 0.1,
        });
        for expected in [9.0, 8.0, 7.0, 6.0] {
            b.on_failure(Outcome::Status503, 0);
            assert_eq!(b.level(), expected);
            assert!(
                b.try_retry(at(0), Outcome::Status503).is_some(),
                "{expected} > 5"
            );
        }
        b.on_failure(Outcome::Status503, 0); // 5: not above half
        assert_eq!(b.try_retry(at(0), Outcome::Status503), None);
        b.on_success(0); // 5.1
        assert!(b.try_retry(at(0), Outcome::Status503).is_some());
        for _ in 0..20 {
            b.on_failure(Outcome::Timeout, 0);
        }
        assert_eq!(b.level(), 0.0, "never below zero");
        for _ in 0..200 {
            b.on_success(0);
        }
        assert!((b.level() - 10.0).abs() < 1e-9, "never over the maximum");
    }

    /// A retry counted only once sent (Envoy's count) is not among those
    /// in progress while it waits, is once sent, and is released at its
    /// answer; an AWS quota's cost that happens to be 2 is no such retry.
    #[test]
    fn a_retry_counted_once_sent_is_counted_then() {
        let mut b = Budget::new(&BudgetConfig::Concurrency(ConcurrencyLimit {
            count_backoff: false,
            percent: 0.0,
            min_concurrency: 1,
        }));
        b.on_request(at(0));
        b.on_request(at(0));
        let first = b.try_retry(at(1), Outcome::Status503).unwrap();
        assert_eq!(first, UNCOUNTED);
        // Waiting out its backoff, it does not count: a second is allowed.
        let second = b.try_retry(at(1), Outcome::Status503).unwrap();
        let sent = b.on_retry_sent(second);
        assert_eq!(sent, COUNTED);
        // One in flight fills the floor of 1.
        assert_eq!(b.try_retry(at(2), Outcome::Status503), None);
        b.on_failure(Outcome::Status503, sent);
        assert!(b.try_retry(at(3), Outcome::Status503).is_some());
        let mut quota = Budget::new(&BudgetConfig::AwsQuota {
            capacity: 10,
            retry_cost: 2,
            timeout_cost: 2,
            throttling_cost: 2,
            success_bonus: 1,
        });
        let cost = quota.try_retry(at(0), Outcome::Status503).unwrap();
        assert_eq!(quota.on_retry_sent(cost), 2, "the quota's refund stands");
        quota.on_success(2);
        assert_eq!(quota.level(), 10.0);
    }

    /// Brooker's breaker: 10 requests, then failures. The first failure
    /// makes 1 of 10 (at most 0.1: retry), the second 2 of 10 (stop); a
    /// request more does not help while failures keep coming.
    #[test]
    fn failure_ratio_stops_retries_past_its_rate() {
        let mut b = Budget::new(&BudgetConfig::FailureRatio { max_rate: 0.1 });
        for _ in 0..10 {
            b.on_request(at(0));
        }
        b.on_failure(Outcome::Status503, 0);
        assert_eq!(b.try_retry(at(0), Outcome::Status503), Some(0));
        b.on_failure(Outcome::Status503, 0);
        assert_eq!(b.try_retry(at(0), Outcome::Status503), None);
        for _ in 0..10 {
            b.on_request(at(0));
        }
        assert_eq!(b.try_retry(at(0), Outcome::Status503), Some(0));
        b.on_failure(Outcome::Status503, 0);
        assert_eq!(b.try_retry(at(0), Outcome::Status503), None);
    }

    /// Envoy's own example of its retry budget (circuit_breaker.proto's
    /// `retry_budget`): with budget_percent 20% and min_retry_concurrency 3,
    /// 25 active requests allow 5 retries at once, and 2 allow 3 (the floor).
    #[test]
    fn envoys_documented_budget_example() {
        for (active, allowed) in [(25, 5), (2, 3)] {
            let mut b = Budget::new(&BudgetConfig::Concurrency(ConcurrencyLimit {
                count_backoff: true,
                percent: 0.2,
                min_concurrency: 3,
            }));
            for _ in 0..active {
                b.on_request(at(0));
            }
            let granted = (0..10)
                .filter(|_| b.try_retry(at(0), Outcome::Status503).is_some())
                .count();
            assert_eq!(granted, allowed, "{active} active requests");
        }
    }

    #[test]
    fn concurrency_limits_retries_in_progress() {
        let mut b = Budget::new(&BudgetConfig::Concurrency(ConcurrencyLimit {
            count_backoff: true,
            percent: 0.2,
            min_concurrency: 3,
        }));
        for _ in 0..10 {
            b.on_request(at(0));
        }
        // 20% of 10 is 2, below the floor of 3: three retries at once.
        let granted: Vec<_> = (0..5)
            .map(|_| b.try_retry(at(0), Outcome::Status503))
            .collect();
        assert_eq!(granted, [Some(1), Some(1), Some(1), None, None]);
        // One ends: room for one more.
        b.on_failure(Outcome::Status503, 1);
        assert_eq!(b.try_retry(at(0), Outcome::Status503), Some(1));
        assert_eq!(b.try_retry(at(0), Outcome::Status503), None);
        // 30 requests in progress: 20% is 6.
        for _ in 0..20 {
            b.on_request(at(0));
        }
        let more = (0..5)
            .filter(|_| b.try_retry(at(0), Outcome::Status503).is_some())
            .count();
        assert_eq!(more, 3);
        b.on_success(1);
        b.on_retry_abandoned(1);
        for _ in 0..30 {
            b.on_request_end();
        }
        let floor = (0..5)
            .filter(|_| b.try_retry(at(0), Outcome::Status503).is_some())
            .count();
        assert_eq!(floor, 0, "4 in progress, above the floor of 3");
    }

    #[test]
    fn aws_quota_charges_throttling_retries_their_own_cost() {
        // botocore 1.44: 500 tokens buy 35 retries at 14, 100 at 5.
        let quota = |retry, throttling| {
            Budget::new(&BudgetConfig::AwsQuota {
                capacity: 500,
                retry_cost: retry,
                timeout_cost: retry,
                throttling_cost: throttling,
                success_bonus: 1,
            })
        };
        let granted = |b: &mut Budget, o| {
            (0..1000)
                .filter(|_| b.try_retry(at(0), o).is_some())
                .count()
        };
        assert_eq!(granted(&mut quota(14, 5), Outcome::Status503), 35);
        assert_eq!(granted(&mut quota(14, 5), Outcome::Timeout), 35);
        assert_eq!(granted(&mut quota(14, 5), Outcome::Status429), 100);
    }

    #[test]
    fn aws_quota_charges_and_refunds() {
        let mut b = Budget::new(&BudgetConfig::AwsQuota {
            capacity: 20,
            retry_cost: 5,
            timeout_cost: 10,
            throttling_cost: 5,
            success_bonus: 1,
        });
        assert_eq!(b.try_retry(at(0), Outcome::Status503), Some(5)); // 15
        assert_eq!(b.try_retry(at(0), Outcome::Timeout), Some(10)); // 5
        assert_eq!(
            b.try_retry(at(0), Outcome::Timeout),
            None,
            "5 cannot pay 10"
        );
        assert_eq!(b.try_retry(at(0), Outcome::Status503), Some(5)); // 0
        assert_eq!(b.try_retry(at(0), Outcome::Status503), None);
        b.on_success(10); // the timeout retry succeeded: 10
        assert_eq!(b.level(), 10.0);
        b.on_success(0); // a first-try success: +1
        assert_eq!(b.level(), 11.0);
        for _ in 0..50 {
            b.on_success(5);
        }
        assert_eq!(b.level(), 20.0, "capped at capacity");
    }

    #[test]
    fn ratio_budget_keeps_retries_under_ten_percent() {
        let mut b = Budget::new(&BudgetConfig::Ratio {
            ratio: 0.1,
            window: SimDuration::from_secs(1),
        });
        for _ in 0..25 {
            b.on_request(at(0));
        }
        // 25 requests: retries allowed while (retries + 1) <= 2.5, so two.
        assert!(b.try_retry(at(1), Outcome::Timeout).is_some());
        assert!(b.try_retry(at(2), Outcome::Timeout).is_some());
        assert!(b.try_retry(at(3), Outcome::Timeout).is_none());
        // A second later the window has forgotten them all.
        assert!(
            b.try_retry(at(1100), Outcome::Timeout).is_none(),
            "no requests, no retries"
        );
        b.on_request(at(1100));
        assert!(
            b.try_retry(at(1100), Outcome::Timeout).is_none(),
            "1 request: 0.1 retries"
        );
    }

    #[test]
    fn finagle_budget_has_a_reserve_and_a_percentage() {
        // ttl 2 s, a reserve of 2 retries/s, 20%: with no requests, the
        // reserve's 2 x 2 = 4 retries; with 10 requests, 4 + 2 = 6.
        let mut b = Budget::new(&BudgetConfig::Finagle {
            ttl: SimDuration::from_secs(2),
            min_per_s: 2.0,
            percent: 0.2,
        });
        let granted = |b: &mut Budget, t: u64| {
            (0..10)
                .filter(|_| b.try_retry(at(t), Outcome::Status503).is_some())
                .count()
        };
        assert_eq!(granted(&mut b, 0), 4);
        for _ in 0..10 {
            b.on_request(at(10));
        }
        assert_eq!(granted(&mut b, 20), 2);
    }

    /// A retry the breaker or the throttle refused to send leaves the
    /// retries in progress: room for one more.
    #[test]
    fn an_abandoned_retry_frees_its_place() {
        let mut b = Budget::new(&BudgetConfig::Concurrency(ConcurrencyLimit {
            count_backoff: true,
            percent: 0.0,
            min_concurrency: 1,
        }));
        b.on_request(at(0));
        let cost = b.try_retry(at(0), Outcome::Status503).unwrap();
        assert_eq!(b.try_retry(at(0), Outcome::Status503), None);
        b.on_retry_abandoned(cost);
        assert!(b.try_retry(at(0), Outcome::Status503).is_some());
    }

    #[test]
    fn random_sequences_keep_levels_within_bounds() {
        use crate::engine::rng::{Stream, stream};
        use rand::RngExt;
        let mut rng = stream(5, Stream::Jitter);
        for config in [
            BudgetConfig::TokenBucket {
                max_tokens: 10.0,
                token_ratio: 0.1,
            },
            BudgetConfig::AwsQuota {
                capacity: 500,
                retry_cost: 5,
                timeout_cost: 10,
                throttling_cost: 5,
                success_bonus: 1,
            },
        ] {
            let cap = match config {
                BudgetConfig::TokenBucket { max_tokens, .. } => max_tokens,
                _ => 500.0,
            };
            let mut b = Budget::new(&config);
            let mut charged = Vec::new();
            for i in 0..100_000u64 {
                let now = at(i);
                match rng.random_range(0..4) {
                    0 => b.on_request(now),
                    1 => b.on_failure(Outcome::Timeout, 0),
                    2 => charged.extend(b.try_retry(now, Outcome::Timeout)),
                    _ => b.on_success(charged.pop().unwrap_or(0)),
                }
                assert!(
                    (0.0..=cap).contains(&b.level()),
                    "{config:?}: level {} at step {i}",
                    b.level()
                );
            }
        }
    }
}
