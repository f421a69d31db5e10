//! What retries at every layer of a call chain do to the load, in closed form.
//!
//! A user's request enters tier 0; an attempt at tier `k` that does not fail
//! by itself makes its calls to tier `k + 1`, and succeeds only when they
//! all do. Each call is retried by its caller's policy. Under total failure
//! the attempts reaching tier `k` are the product of `1 + retries` over the
//! callers above it (the Google SRE book, "Addressing Cascading Failures":
//! three layers of three attempts put 27 at the bottom for each request).
//! With each attempt failing by itself independently, with probability
//! `fails`, the expected attempts follow from geometric sums, tier by tier
//! from the bottom up for the success probabilities and from the top down
//! for the load.
//!
//! These are the figures a simulation of the same chain must approach (no
//! timeouts, budgets or breakers, failures drawn independently per attempt),
//! and the worst-case bound of a configuration without simulating it.

/// How an attempt makes its calls to the next tier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallMode {
    /// One after another, stopping at the first that fails for good (a
    /// handler that awaits each call in turn).
    Sequence,
    /// All at once, waiting for every one (a handler that fans out and
    /// joins): all are made even when one fails.
    Parallel,
}

/// One tier of a chain, as its callers see it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tier {
    /// Retries its caller's policy allows per call (the users' policy for
    /// tier 0).
    pub retries: u32,
    /// Probability that an attempt at this tier fails by itself, before it
    /// calls the next tier, independently of every other attempt.
    pub fails: f64,
    /// Calls each attempt makes to the next tier (ignored for the last).
    pub calls: u32,
    /// The probability that each of those calls is made at all, drawn for
    /// each attempt and call (1: always).
    pub probability: f64,
    /// How it makes them.
    pub mode: CallMode,
}

/// The expected behaviour of one tier, per user request.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TierLoad {
    /// Probability that one call to this tier succeeds, retries included.
    pub call_success: f64,
    /// Expected attempts per call to this tier.
    pub attempts_per_call: f64,
    /// Expected attempts reaching this tier per user request.
    pub attempts: f64,
    /// Attempts reaching this tier per user request when every attempt
    /// everywhere fails (the worst case).
    pub worst_case: f64,
}

/// `1 + q + q^2 + ... + q^n`: the expected tries of something tried up to
/// `n + 1` times that fails each time with probability `q`.
fn tries(q: f64, n: u32) -> f64 {
    (0..=n)
        .fold((0.0, 1.0), |(sum, term), _| (sum + term, term * q))
        .0
}

/// The expected and worst-case load at each tier of `chain` (tier 0 first).
pub fn chain_load(chain: &[Tier]) -> Vec<TierLoad> {
    let n = chain.len();
    // Bottom up: the probability that an attempt at tier k succeeds needs
    // the success of its calls below.
    let mut attempt_success = vec![0.0f64; n];
    let mut call_success = vec![0.0f64; n];
    for k in (0..n).rev() {
        let t = chain[k];
        // A call passes when it is left out or succeeds.
        let below = if k + 1 < n {
            (1.0 - t.probability + t.probability * call_success[k + 1]).powi(t.calls as i32)
        } else {
            1.0
        };
        attempt_success[k] = (1.0 - t.fails) * below;
        call_success[k] = 1.0 - (1.0 - attempt_success[k]).powi(t.retries as i32 + 1);
    }
    // Top down: the attempts reaching each tier.
    let mut out: Vec<TierLoad> = Vec::with_capacity(n);
    for (k, t) in chain.iter().enumerate() {
        let attempts_per_call = tries(1.0 - attempt_success[k], t.retries);
        let worst_per_call = f64::from(t.retries) + 1.0;
        let (attempts, worst_case) = match k.checked_sub(1).map(|j| (j, chain[j])) {
            None => (attempts_per_call, worst_per_call),
            Some((j, up)) => {
                // Calls made by an attempt above that passed its own part:
                // in sequence, call i is reached when the ones before it
                // passed, and made with its probability.
                let p = up.probability;
                let made = |success: f64| match up.mode {
                    CallMode::Parallel => f64::from(up.calls) * p,
                    CallMode::Sequence => {
                        p * tries(1.0 - p + p * success, up.calls.saturating_sub(1))
                            * f64::from(up.calls.min(1))
                    }
                };
                let (calls, worst_calls) = (made(call_success[k]), made(0.0));
                let above = out[j];
                (
                    above.attempts * (1.0 - up.fails) * calls * attempts_per_call,
                    above.worst_case * worst_calls * worst_per_call,
                )
            }
        };
        out.push(TierLoad {
            call_success: call_success[k],
            attempts_per_call,
            attempts,
            worst_case,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{Stream, stream};
    use rand::RngExt;

    fn tier(retries: u32, fails: f64) -> Tier {
        Tier {
            retries,
            fails,
            calls: 1,
            probability: 1.0,
            mode: CallMode::Sequence,
        }
    }

    /// The SRE book's example: three layers of three attempts, 27 at the bottom.
    #[test]
    fn total_failure_multiplies_the_attempts_of_every_layer() {
        let load = chain_load(&[tier(2, 0.0), tier(2, 0.0), tier(2, 1.0)]);
        let attempts: Vec<f64> = load.iter().map(|l| l.attempts).collect();
        assert_eq!(attempts, vec![3.0, 9.0, 27.0]);
        let worst: Vec<f64> = load.iter().map(|l| l.worst_case).collect();
        assert_eq!(worst, vec![3.0, 9.0, 27.0]);
        assert!(load.iter().all(|l| l.call_success == 0.0));
    }

    /// Retrying at the top only: the bottom sees one attempt per try above.
    #[test]
    fn retrying_at_one_layer_adds_instead_of_multiplying() {
        let load = chain_load(&[tier(2, 0.0), tier(0, 0.0), tier(0, 1.0)]);
        let attempts: Vec<f64> = load.iter().map(|l| l.attempts).collect();
        assert_eq!(attempts, vec![3.0, 3.0, 3.0]);
    }

    /// No failure: one attempt per call, calls as the fan-out says.
    #[test]
    fn without_failures_each_tier_sees_its_fan_out() {
        let chain = [
            Tier {
                calls: 3,
                mode: CallMode::Parallel,
                ..tier(2, 0.0)
            },
            Tier {
                calls: 2,
                mode: CallMode::Sequence,
                ..tier(2, 0.0)
            },
            tier(2, 0.0),
        ];
        let load = chain_load(&chain);
        let attempts: Vec<f64> = load.iter().map(|l| l.attempts).collect();
        assert_eq!(attempts, vec![1.0, 3.0, 6.0]);
        let worst: Vec<f64> = load.iter().map(|l| l.worst_case).collect();
        // Under total failure a sequence stops at its first call.
        assert_eq!(worst, vec![3.0, 27.0, 81.0]);
    }

    /// A tier whose attempts make no calls sends nothing below, in either
    /// mode, and its callers' success is its own.
    #[test]
    fn a_tier_that_makes_no_calls_sends_nothing_below() {
        for mode in [CallMode::Sequence, CallMode::Parallel] {
            let top = Tier {
                calls: 0,
                mode,
                ..tier(1, 0.5)
            };
            let load = chain_load(&[top, tier(2, 1.0)]);
            assert_eq!(load[1].attempts, 0.0, "{mode:?}");
            assert_eq!(load[1].worst_case, 0.0, "{mode:?}");
            assert!((load[0].call_success - 0.75).abs() < 1e-12, "{mode:?}");
        }
    }

    /// One tier alone: the truncated geometric sum, by hand.
    #[test]
    fn one_tier_is_the_geometric_sum() {
        let load = chain_load(&[tier(3, 0.5)]);
        assert!((load[0].attempts - (1.0 + 0.5 + 0.25 + 0.125)).abs() < 1e-12);
        assert!((load[0].call_success - (1.0 - 0.5f64.powi(4))).abs() < 1e-12);
    }

    /// Plays the chain out attempt by attempt; returns the attempts at each
    /// tier and whether the call succeeded.
    fn play<R: rand::Rng>(chain: &[Tier], k: usize, rng: &mut R, seen: &mut [u64]) -> bool {
        let t = chain[k];
        for _ in 0..=t.retries {
            seen[k] += 1;
            if rng.random::<f64>() < t.fails {
                continue;
            }
            let ok = if k + 1 == chain.len() {
                true
            } else {
                // A call left out passes.
                let mut call = |rng: &mut R| {
                    let made = t.probability >= 1.0 || rng.random::<f64>() < t.probability;
                    !made || play(chain, k + 1, rng, seen)
                };
                match t.mode {
                    CallMode::Sequence => (0..t.calls).all(|_| call(rng)),
                    CallMode::Parallel => {
                        // Every call is made, whatever the others gave.
                        let results: Vec<bool> = (0..t.calls).map(|_| call(rng)).collect();
                        results.into_iter().all(|ok| ok)
                    }
                }
            };
            if ok {
                return true;
            }
        }
        false
    }

    /// The closed form against the chain played out 200 000 times with
    /// independent failures. Each tier's count is a sum of 200 000 i.i.d.
    /// per-request counts; 5 standard errors of the mean (estimated from
    /// the samples) bound it with a chance of a false alarm below 1e-6.
    #[test]
    fn the_closed_form_matches_the_chain_played_out() {
        let chain = [
            Tier {
                calls: 2,
                probability: 0.7,
                mode: CallMode::Parallel,
                ..tier(2, 0.1)
            },
            Tier {
                calls: 3,
                probability: 0.6,
                mode: CallMode::Sequence,
                ..tier(1, 0.2)
            },
            tier(3, 0.3),
        ];
        let load = chain_load(&chain);
        let mut rng = stream(7, Stream::Workload);
        let n = 200_000;
        let (mut sum, mut sq, mut ok): ([f64; 3], [f64; 3], u64) = ([0.0; 3], [0.0; 3], 0);
        for _ in 0..n {
            let mut seen = [0u64; 3];
            ok += u64::from(play(&chain, 0, &mut rng, &mut seen));
            for k in 0..3 {
                sum[k] += seen[k] as f64;
                sq[k] += (seen[k] as f64).powi(2);
            }
        }
        for k in 0..3 {
            let mean = sum[k] / n as f64;
            let sd = (sq[k] / n as f64 - mean * mean).sqrt();
            let se = sd / (n as f64).sqrt();
            assert!(
                (mean - load[k].attempts).abs() < 5.0 * se,
                "tier {k}: played {mean}, closed form {}, se {se}",
                load[k].attempts
            );
        }
        let p = load[0].call_success;
        let se = (p * (1.0 - p) / n as f64).sqrt();
        let played = ok as f64 / n as f64;
        assert!(
            (played - p).abs() < 5.0 * se,
            "success {played} against {p}"
        );
    }
}
