//! Worst-case bounds of a strategy's retries, from its settings alone,
//! without simulating (`sim bound`). Each bound comes with the formula it
//! was computed by, so a reader can check it by hand.
//!
//! "Total failure" is the worst case: every attempt fails with an outcome
//! the policy retries. Without a budget each request then makes
//! `1 + max_retries` attempts (or `max_attempts` hedged copies); in a call
//! chain the tiers' attempts multiply. A budget, an adaptive throttle or a
//! breaker caps what follows, each in its own way:
//!
//! - gRPC's token bucket (gRFC A6) loses a token per failed attempt and
//!   allows a retry only while more than half are left: under total failure
//!   it allows `ceil(max_tokens / 2) - 1` retries in all, then none. While
//!   requests also succeed, each success returns `token_ratio`, so in the
//!   long run failed attempts, and hence retries, are at most `token_ratio`
//!   per success: the bucket stays above half only while the failure share
//!   is at most `token_ratio / (1 + token_ratio)`.
//! - The AWS SDK's quota pays each retry's cost and refunds it when the
//!   retry succeeds; a first-try success adds `success_bonus`. Under total
//!   failure it allows `floor(capacity / retry_cost)` retries, then none; in
//!   the long run, failed retries are at most `success_bonus / retry_cost`
//!   per first-try success.
//! - The SRE book's ratio budget and Finagle's budget cap retries over a
//!   window: at most `ratio` (or `percent`, plus `min_per_s` a second) of the
//!   requests in it.
//! - Envoy's retry budget caps the retries in progress at `percent` of the
//!   requests in progress, and never below `min_concurrency`.
//! - The SRE adaptive throttle refuses an attempt with probability
//!   `(requests - K accepts) / (requests + 1)` over its window: with no
//!   accepts, the `n` requests of a full window let through
//!   `sum 1/(i + 1)` over the window's counts, about one attempt a window.
//! - A breaker, once open, lets `probes` attempts through each `open_for`
//!   while they fail.

use super::{BudgetConfig, Strategy};
use crate::model::chain::ChainConfig;

/// One bound: what it bounds, its value, in words, and the formula.
#[derive(Clone, Debug, PartialEq)]
pub struct Bound {
    /// What is bounded, e.g. "attempts per request, no budget".
    pub what: String,
    /// The value (for tests and tables).
    pub value: f64,
    /// The value in words, with its unit.
    pub shown: String,
    /// How it was computed, with the strategy's numbers in it.
    pub formula: String,
}

/// The users' request rate a bound may use, from the scenario's load.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rate {
    /// Open-loop arrivals at this rate a second: failures come at least
    /// this fast under total failure (every first attempt fails).
    AtLeast(f64),
    /// Closed-loop clients: about `clients / mean think` a second when
    /// failures are fast, less when they are slow.
    About(f64),
    /// One request per client, all at the start.
    Unknown,
}

fn bound(what: &str, value: f64, shown: String, formula: String) -> Bound {
    Bound {
        what: what.to_owned(),
        value,
        shown,
        formula,
    }
}

/// `x` with up to 3 significant digits and no trailing zeros.
pub fn short(x: f64) -> String {
    if x.is_infinite() && x > 0.0 {
        // A product of attempts past what a float holds: still a bound.
        return "over 1.8e308".to_owned();
    }
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    if x.abs() >= 1e9 {
        // Past a billion the low digits a float prints are not the count's
        // (3^38 is ...089, its f64 ...000): three significant digits only.
        return format!("{x:.2e}");
    }
    let digits = (2 - x.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{x:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

pub(crate) fn seconds(s: f64) -> String {
    if s < 1.0 {
        format!("{} ms", short(s * 1e3))
    } else {
        format!("{} s", short(s))
    }
}

/// Attempts a request makes under total failure with no budget, breaker or
/// throttle: its policy's limit.
pub fn attempts_per_request(s: &Strategy) -> Bound {
    match &s.hedging {
        Some(h) if h.max_attempts > 1 => bound(
            "attempts per request, total failure, nothing else capping",
            f64::from(h.max_attempts),
            format!("{} copies", h.max_attempts),
            format!("hedging max_attempts = {}", h.max_attempts),
        ),
        _ if s.policy.max_retries == u32::MAX => bound(
            "attempts per request, total failure, nothing else capping",
            f64::INFINITY,
            "unlimited attempts".to_owned(),
            "max_retries = \"unlimited\": only a deadline, a budget, a breaker or a throttle \
             ends a request that keeps failing"
                .to_owned(),
        ),
        _ => {
            let n = 1 + s.policy.max_retries;
            let unit = if n == 1 { "attempt" } else { "attempts" };
            let deadline = if s.policy.deadline.is_some() {
                "; a deadline can only lower it"
            } else {
                ""
            };
            bound(
                "attempts per request, total failure, nothing else capping",
                f64::from(n),
                format!("{n} {unit}"),
                format!("1 + max_retries = 1 + {}{deadline}", s.policy.max_retries),
            )
        }
    }
}

/// What `budget` allows: retries in all under total failure, how soon it
/// runs dry, and its long-run share.
pub fn budget(b: &BudgetConfig, rate: Rate) -> Vec<Bound> {
    let mut out = Vec::new();
    // `events` (failed attempts, or retries) come at least once per request
    // under total failure: they are spent within `events / rate`.
    let dry = |events: f64, what: &str, out: &mut Vec<Bound>| {
        let (value, shown, formula) = match rate {
            Rate::AtLeast(r) => (
                events / r,
                format!("within {}", seconds(events / r)),
                format!(
                    "{} {what}, at least one per request: {} / {} requests a second",
                    short(events),
                    short(events),
                    short(r)
                ),
            ),
            Rate::About(r) => (
                events / r,
                format!("about {}", seconds(events / r)),
                format!(
                    "{} {what}, one per request when failures are fast: {} / (clients / mean think = {} a second)",
                    short(events),
                    short(events),
                    short(r)
                ),
            ),
            Rate::Unknown => (
                f64::NAN,
                format!("after {} {what}", short(events)),
                "(no rate of requests to turn this into a time)".into(),
            ),
        };
        out.push(bound(
            "time to run dry, total failure",
            value,
            shown,
            formula,
        ));
    };
    match *b {
        BudgetConfig::TokenBucket {
            max_tokens,
            token_ratio,
        } => {
            let half = max_tokens / 2.0;
            let retries = (half.ceil() - 1.0).max(0.0);
            out.push(bound(
                "retries in all, total failure",
                retries,
                format!("{} retries, then none", short(retries)),
                format!(
                    "failures k with {m} - k > {m} / 2: ceil({m} / 2) - 1",
                    m = short(max_tokens)
                ),
            ));
            dry(half.ceil(), "failed attempts", &mut out);
            out.push(bound(
                "retries per success, long run",
                token_ratio,
                format!("{} per success", short(token_ratio)),
                format!("token_ratio = {}", short(token_ratio)),
            ));
            let p = token_ratio / (1.0 + token_ratio);
            out.push(bound(
                "failure share above which retries stop",
                p,
                format!("{}%", short(100.0 * p)),
                format!(
                    "token_ratio / (1 + token_ratio) = {} / {}",
                    short(token_ratio),
                    short(1.0 + token_ratio)
                ),
            ));
        }
        BudgetConfig::AwsQuota {
            capacity,
            retry_cost,
            timeout_cost,
            success_bonus,
            ..
        } => {
            let retries = f64::from(capacity / retry_cost.max(1));
            let after_timeouts = f64::from(capacity / timeout_cost.max(1));
            out.push(bound(
                "retries in all, total failure",
                retries,
                format!(
                    "{} retries ({} after timeouts), then none",
                    short(retries),
                    short(after_timeouts)
                ),
                format!(
                    "floor(capacity / retry_cost) = floor({capacity} / {retry_cost}); floor({capacity} / timeout_cost = {timeout_cost})"
                ),
            ));
            dry(retries, "retries", &mut out);
            let share = f64::from(success_bonus) / f64::from(retry_cost.max(1));
            out.push(bound(
                "failed retries per first-try success, long run",
                share,
                format!("{} per first-try success", short(share)),
                format!("success_bonus / retry_cost = {success_bonus} / {retry_cost}"),
            ));
        }
        BudgetConfig::Ratio { ratio, window } => {
            out.push(bound(
                "retries per request, any window",
                ratio,
                format!("{} per request", short(ratio)),
                format!(
                    "ratio = {} of the requests in the last {window}",
                    short(ratio)
                ),
            ));
            out.push(bound(
                "attempts per request, total failure, long run",
                1.0 + ratio,
                format!("{} attempts", short(1.0 + ratio)),
                format!("1 + ratio = 1 + {}", short(ratio)),
            ));
        }
        BudgetConfig::Finagle {
            ttl,
            min_per_s,
            percent,
        } => {
            let reserve = min_per_s * ttl.as_secs_f64();
            out.push(bound(
                "retries in any window",
                percent,
                format!(
                    "{} per request, plus {} in all",
                    short(percent),
                    short(reserve)
                ),
                format!(
                    "percent x requests in the last {ttl} + min_per_s x ttl = {} x requests + {} x {}",
                    short(percent),
                    short(min_per_s),
                    short(ttl.as_secs_f64())
                ),
            ));
            if let Rate::AtLeast(r) | Rate::About(r) = rate {
                let a = 1.0 + percent + min_per_s / r;
                out.push(bound(
                    "attempts per request, total failure, long run",
                    a,
                    format!("{} attempts", short(a)),
                    format!(
                        "1 + percent + min_per_s / rate = 1 + {} + {} / {}",
                        short(percent),
                        short(min_per_s),
                        short(r)
                    ),
                ));
            }
        }
        BudgetConfig::Concurrency(l) => {
            let counted = if l.count_backoff {
                "from its decision, backoff included"
            } else {
                "counted once sent: those waiting out a backoff are not, so any number may wait"
            };
            out.push(bound(
                "retries in progress",
                l.percent,
                format!(
                    "{}% of the requests in progress, at least {} ({counted})",
                    short(100.0 * l.percent),
                    l.min_concurrency
                ),
                format!(
                    "max(percent x requests in progress, min_concurrency) = max({} x n, {})",
                    short(l.percent),
                    l.min_concurrency
                ),
            ));
        }
    }
    out
}

/// What an adaptive throttle lets through under total failure.
pub fn throttle(t: &super::ThrottleConfig, rate: Rate) -> Vec<Bound> {
    let w = t.window.as_secs_f64();
    let per_window = match rate {
        Rate::AtLeast(r) | Rate::About(r) => {
            // With n requests a window and no accepts, each is let through
            // with probability 1 / (n_before + 1), n_before from 0 to n - 1
            // at the start, then about n: about one a window in the long run.
            let n = r * w;
            n / (n + 1.0)
        }
        Rate::Unknown => 1.0,
    };
    vec![bound(
        "attempts sent per window, total failure, long run",
        per_window,
        format!("about {} every {}", short(per_window), seconds(w)),
        format!(
            "n / (n + 1) with n = rate x window requests counted and none accepted (K = {})",
            short(t.k)
        ),
    )]
}

/// What an open breaker lets through while attempts keep failing.
pub fn breaker(b: &super::BreakerConfig) -> Vec<Bound> {
    let open = b.open_for.as_secs_f64() * (1.0 - b.jitter);
    let per_s = f64::from(b.probes) / open;
    vec![bound(
        "attempts a second while open, total failure",
        per_s,
        format!("{} a second", short(per_s)),
        format!(
            "probes / shortest open_for = {} / {}",
            b.probes,
            seconds(open)
        ),
    )]
}

/// Every bound of a strategy's own settings.
pub fn strategy(s: &Strategy, rate: Rate) -> Vec<Bound> {
    let mut out = vec![attempts_per_request(s), super::wave::give_up(s)];
    if let Some(b) = &s.budget {
        out.extend(budget(b, rate));
    }
    if let Some(t) = &s.throttle {
        out.extend(throttle(t, rate));
    }
    if let Some(b) = &s.breaker {
        out.extend(breaker(b));
    }
    out
}

/// Attempts reaching each tier of `chain` per user request when that tier
/// fails every attempt (and so every tier above it), with no budget capping:
/// `W(k) = (1 + r_k) x sum over callers b of (calls b makes to k) x
/// (their probability) x W(b)`, `W(0) = 1 + r_0`, with each tier's formula.
/// (With calls made only sometimes, a caller's attempt that leaves out its
/// failing call succeeds: the bound is then above what happens.)
pub fn chain(chain: &ChainConfig, users: &Strategy) -> Vec<Bound> {
    let n = chain.tiers();
    let retries: Vec<f64> = (0..n)
        .map(|k| {
            let s = if k == 0 {
                users
            } else {
                &users.tiers[k - 1].strategy
            };
            attempts_per_request(s).value
        })
        .collect();
    // Attempts at each tier, and the calls into it, with their formulas.
    let (mut a, mut calls_in) = (vec![0.0f64; n], vec![0.0f64; n]);
    let (mut fa, mut fin) = (vec![String::new(); n], vec![String::new(); n]);
    // Tiers whose attempts are unbounded because a tier on the way retries
    // without limit (not because the product outgrew a float).
    let (mut unlimited, mut unlimited_in) = (vec![false; n], vec![false; n]);
    let factor = |r: f64| {
        if r.is_infinite() {
            "unlimited".to_owned()
        } else {
            short(r)
        }
    };
    for k in crate::model::chain::topological(&chain.calls) {
        unlimited[k] = retries[k].is_infinite() || unlimited_in[k];
        if k == 0 {
            a[0] = retries[0];
            fa[0] = factor(retries[0]);
            // Shown alone, tier 0's formula says where its number comes from.
            fin[0] = "the users' attempts per request".into();
        } else {
            a[k] = retries[k] * calls_in[k];
            fa[k] = if fin[k].contains('+') {
                format!("{} x ({})", factor(retries[k]), fin[k])
            } else {
                format!("{} x {}", factor(retries[k]), fin[k])
            };
        }
        for (j, &c) in chain.calls[k].to.iter().enumerate() {
            unlimited_in[c] |= unlimited[k];
            let p = chain.calls[k].probability.get(j).copied().unwrap_or(1.0);
            calls_in[c] += p * a[k];
            let term = if p < 1.0 {
                format!("{} x {}", short(p), fa[k])
            } else {
                fa[k].clone()
            };
            if !fin[c].is_empty() {
                fin[c].push_str(" + ");
            }
            fin[c].push_str(&term);
        }
    }
    (0..n)
        .map(|k| {
            let formula = if k == 0 {
                format!("{} ({})", fa[0], fin[0])
            } else {
                fa[k].clone()
            };
            let shown = if unlimited[k] {
                "unlimited attempts".to_owned()
            } else {
                format!("{} attempts", short(a[k]))
            };
            bound(chain.name(k), a[k], shown, formula)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SimDuration;

    #[test]
    fn token_bucket_allows_half_its_tokens_less_one() {
        let b = |m: f64| {
            budget(
                &BudgetConfig::TokenBucket {
                    max_tokens: m,
                    token_ratio: 0.1,
                },
                Rate::AtLeast(100.0),
            )
        };
        assert_eq!(b(10.0)[0].value, 4.0);
        assert_eq!(b(3.0)[0].value, 1.0);
        assert_eq!(b(1.0)[0].value, 0.0);
        // Dry after ceil(m/2) failures: 5 at 100 a second is 50 ms.
        assert!((b(10.0)[1].value - 0.05).abs() < 1e-12);
        assert!((b(10.0)[3].value - 0.1 / 1.1).abs() < 1e-12);
    }

    #[test]
    fn aws_quota_pays_for_a_hundred_retries() {
        let b = budget(
            &BudgetConfig::AwsQuota {
                capacity: 500,
                retry_cost: 5,
                timeout_cost: 10,
                throttling_cost: 5,
                success_bonus: 1,
            },
            Rate::Unknown,
        );
        assert_eq!(b[0].value, 100.0);
        assert!(b[0].shown.contains("50 after timeouts"));
        assert_eq!(b[2].value, 0.2);
    }

    #[test]
    fn short_numbers_keep_three_digits() {
        assert_eq!(short(0.090909), "0.0909");
        assert_eq!(short(4.0), "4");
        assert_eq!(short(1234.4), "1234");
        assert_eq!(short(0.1), "0.1");
        assert_eq!(seconds(0.05), "50 ms");
        assert_eq!(seconds(SimDuration::from_secs(120).as_secs_f64()), "120 s");
    }
}
