//! The distribution of each retry's delay under a backoff schedule, from many
//! simulated retry sequences (decorrelated jitter depends on the previous
//! delay, so whole sequences are drawn, not single delays).

use rand_chacha::ChaCha8Rng;

use crate::engine::rng::{Stream, stream};
use crate::engine::{SimDuration, SimTime};
use crate::retry::policy::{Attempted, Decision};
use crate::retry::{Backoff, Outcome, Strategy};

/// The quantiles reported for each retry.
pub const QUANTILES: [f64; 7] = [0.0, 0.05, 0.25, 0.5, 0.75, 0.95, 1.0];

/// Delay quantiles of one retry, in seconds (same order as [`QUANTILES`]).
#[derive(Clone, Debug, PartialEq)]
pub struct RetryDelays {
    /// Retry number, from 1.
    pub retry: u32,
    /// Quantiles of the delay before it, seconds.
    pub quantiles: [f64; 7],
    /// Mean delay, seconds.
    pub mean: f64,
}

/// Draws `samples` sequences of `retries` delays under `backoff` with `seed`.
pub fn delay_distribution(
    backoff: &Backoff,
    retries: u32,
    samples: usize,
    seed: u64,
) -> Vec<RetryDelays> {
    summarize(draw_sequences(retries, samples, seed, |n, memory, rng| {
        Some(backoff.delay(n, memory, rng))
    }))
}

/// Draws `samples` sequences of delays as `strategy`'s policy decides them
/// after `outcome`, with the server's `retry_after` hint if any: the classes of
/// a throttling base and the Retry-After modes included. `None` if the policy
/// does not retry `outcome` at all.
pub fn policy_delays(
    strategy: &Strategy,
    outcome: Outcome,
    retry_after: Option<SimDuration>,
    retries: u32,
    samples: usize,
    seed: u64,
) -> Option<Vec<Vec<f64>>> {
    let sequences = draw_sequences(retries, samples, seed, |n, memory, rng| {
        let mut state = Attempted {
            retries: n - 1,
            deadline_at: SimTime::NEVER,
            memory,
        };
        match strategy.policy.decide(
            &strategy.backoff,
            outcome,
            retry_after,
            &mut state,
            SimTime::ZERO,
            rng,
        ) {
            Decision::Retry(d) => Some((d, state.memory)),
            Decision::GiveUp(_) => None,
        }
    });
    (!sequences[0].is_empty()).then_some(sequences)
}

/// `samples` sequences of up to `retries` delays (seconds), one list per retry
/// number; `next(n, memory, rng)` is the delay before retry `n` and the
/// memory for the next, or `None` where the sequence stops.
pub fn draw_sequences(
    retries: u32,
    samples: usize,
    seed: u64,
    mut next: impl FnMut(u32, f64, &mut ChaCha8Rng) -> Option<(SimDuration, f64)>,
) -> Vec<Vec<f64>> {
    let mut rng = stream(seed, Stream::Jitter);
    let mut by_retry: Vec<Vec<f64>> = vec![Vec::with_capacity(samples); retries as usize];
    for _ in 0..samples {
        let mut memory = 0.0;
        for n in 1..=retries {
            let Some((d, m)) = next(n, memory, &mut rng) else {
                break;
            };
            memory = m;
            by_retry[n as usize - 1].push(d.as_secs_f64());
        }
    }
    by_retry
}

/// The quantiles and mean of each retry's delays; retries never reached are
/// left out.
pub fn summarize(by_retry: Vec<Vec<f64>>) -> Vec<RetryDelays> {
    by_retry
        .into_iter()
        .enumerate()
        .filter(|(_, xs)| !xs.is_empty())
        .map(|(i, mut xs)| {
            xs.sort_by(f64::total_cmp);
            let at = |q: f64| {
                xs.get(((q * (xs.len() - 1) as f64).round()) as usize)
                    .copied()
                    .unwrap_or(0.0)
            };
            RetryDelays {
                retry: i as u32 + 1,
                quantiles: QUANTILES.map(at),
                mean: xs.iter().sum::<f64>() / xs.len() as f64,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retry::BackoffKind;

    #[test]
    fn exponential_has_one_value_per_retry() {
        let b = Backoff {
            kind: BackoffKind::Exponential,
            ..Backoff::default()
        };
        let d = delay_distribution(&b, 3, 100, 1);
        let medians: Vec<f64> = d.iter().map(|r| r.quantiles[3]).collect();
        assert_eq!(medians, [0.2, 0.4, 0.8]);
        assert!(d.iter().all(|r| r.quantiles[0] == r.quantiles[6]));
        let means: Vec<f64> = d.iter().map(|r| r.mean).collect();
        assert!(
            means
                .iter()
                .zip(&medians)
                .all(|(m, x)| (m - x).abs() < 1e-12)
        );
        assert_eq!(d.iter().map(|r| r.retry).collect::<Vec<_>>(), [1, 2, 3]);
    }

    fn strategy(kind: BackoffKind) -> Strategy {
        Strategy {
            name: "s".into(),
            backoff: Backoff {
                kind,
                ..Backoff::default()
            },
            policy: crate::retry::RetryPolicy::default(),
            budget: None,
            breaker: None,
            throttle: None,
            shared: Default::default(),
            tiers: Vec::new(),
            hedging: None,
            limits: None,
        }
    }

    /// The policy's own delays: the backoff's for a retried outcome, the
    /// hint's where Retry-After replaces it, none for an outcome it never
    /// retries; and a sequence stops at the policy's last retry.
    #[test]
    fn policy_delays_are_the_policys_decisions() {
        let s = strategy(BackoffKind::Exponential);
        let max = s.policy.max_retries;
        let by_retry = policy_delays(&s, Outcome::Status503, None, max + 2, 10, 1).unwrap();
        let firsts: Vec<f64> = by_retry
            .iter()
            .map(|xs| xs.first().copied().unwrap_or(-1.0))
            .collect();
        let lens: Vec<usize> = by_retry.iter().map(Vec::len).collect();
        let expected: Vec<f64> = (0..max + 2)
            .map(|n| {
                if n < max {
                    0.2 * 2f64.powi(n as i32)
                } else {
                    -1.0
                }
            })
            .map(|d: f64| if d > 10.0 { 10.0 } else { d })
            .collect();
        assert_eq!(firsts, expected);
        assert!(lens[..max as usize].iter().all(|&l| l == 10));
        let hint = Some(SimDuration::from_secs(3));
        let hinted = policy_delays(&s, Outcome::Status503, hint, 2, 10, 1).unwrap();
        assert!(hinted.iter().flatten().all(|&d| d == 3.0), "{hinted:?}");
        assert_eq!(policy_delays(&s, Outcome::Status400, None, 2, 10, 1), None);
    }

    #[test]
    fn full_jitter_spans_zero_to_the_ceiling() {
        let b = Backoff {
            kind: BackoffKind::FullJitter,
            ..Backoff::default()
        };
        let d = delay_distribution(&b, 2, 20_000, 1);
        // Retry 2: U(0, 400 ms); median 200 ms within 2% (sd of the median
        // estimate ~ 0.4 s / sqrt(20 000) ~ 0.7%).
        assert!((d[1].quantiles[3] - 0.2).abs() < 0.004, "{:?}", d[1]);
        assert!(d[1].quantiles[0] < 0.001 && d[1].quantiles[6] <= 0.4);
    }
}
