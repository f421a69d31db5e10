//! A strategy's own limits under total failure: its policy's attempts, and
//! what its budget, throttle and breaker let through.
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

use super::Copies;
use super::value::{Bound, Rate, bound, seconds, short};
use crate::retry::{BreakerConfig, BudgetConfig, Strategy, ThrottleConfig};

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

/// What `budget` allows, in `copies` (one per proxy, or one for all):
/// retries in all under total failure, how soon it runs dry, and its
/// long-run share. Each copy counts its own proxy's requests, a share of
/// `rate`; what the copies let through adds up.
pub fn budget(b: &BudgetConfig, rate: Rate, copies: Copies) -> Vec<Bound> {
    let mut out = Vec::new();
    match *b {
        BudgetConfig::TokenBucket {
            max_tokens,
            token_ratio,
        } => token_bucket(max_tokens, token_ratio, rate, copies, &mut out),
        BudgetConfig::AwsQuota {
            capacity,
            retry_cost,
            timeout_cost,
            success_bonus,
            ..
        } => aws_quota(
            capacity,
            retry_cost,
            timeout_cost,
            success_bonus,
            rate,
            copies,
            &mut out,
        ),
        BudgetConfig::Ratio { ratio, window } => ratio_budget(ratio, window, &mut out),
        BudgetConfig::Finagle {
            ttl,
            min_per_s,
            percent,
        } => finagle(ttl, min_per_s, percent, rate, copies, &mut out),
        BudgetConfig::Concurrency(l) => concurrency(l, copies, &mut out),
        BudgetConfig::FailureRatio { max_rate } => {
            out.push(bound(
                "retries in all, total failure",
                0.0,
                "0 retries".to_owned(),
                format!(
                    "a retry needs failed attempts <= {} x requests, and every request's first attempt fails",
                    short(max_rate)
                ),
            ));
            out.push(bound(
                "failed attempts per request, long run",
                max_rate,
                format!("{} per request, then no retries", short(max_rate)),
                format!("max_rate = {}", short(max_rate)),
            ));
        }
    }
    out
}

/// How soon `events` (failed attempts, or retries) are spent: they come at
/// least once per request under total failure, so within `events / rate`.
fn dry(events: f64, what: &str, rate: Rate, out: &mut Vec<Bound>) {
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
}

/// gRPC's token bucket (gRFC A6).
fn token_bucket(
    max_tokens: f64,
    token_ratio: f64,
    rate: Rate,
    copies: Copies,
    out: &mut Vec<Bound>,
) {
    let half = max_tokens / 2.0;
    let retries = copies.n() * (half.ceil() - 1.0).max(0.0);
    out.push(bound(
        "retries in all, total failure",
        retries,
        format!("{} retries, then none", short(retries)),
        copies.times(format!(
            "failures k with {m} - k > {m} / 2: ceil({m} / 2) - 1",
            m = short(max_tokens)
        )),
    ));
    dry(copies.n() * half.ceil(), "failed attempts", rate, out);
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

/// The AWS SDK's retry quota.
fn aws_quota(
    capacity: u32,
    retry_cost: u32,
    timeout_cost: u32,
    success_bonus: u32,
    rate: Rate,
    copies: Copies,
    out: &mut Vec<Bound>,
) {
    let retries = copies.n() * f64::from(capacity / retry_cost.max(1));
    let after_timeouts = copies.n() * f64::from(capacity / timeout_cost.max(1));
    out.push(bound(
        "retries in all, total failure",
        retries,
        format!(
            "{} retries ({} after timeouts), then none",
            short(retries),
            short(after_timeouts)
        ),
        copies.times(format!(
            "floor(capacity / retry_cost) = floor({capacity} / {retry_cost}); floor({capacity} / timeout_cost = {timeout_cost})"
        )),
    ));
    dry(retries, "retries", rate, out);
    let share = f64::from(success_bonus) / f64::from(retry_cost.max(1));
    out.push(bound(
        "failed retries per first-try success, long run",
        share,
        format!("{} per first-try success", short(share)),
        format!("success_bonus / retry_cost = {success_bonus} / {retry_cost}"),
    ));
}

/// The SRE book's ratio budget.
fn ratio_budget(ratio: f64, window: crate::engine::SimDuration, out: &mut Vec<Bound>) {
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

/// Finagle's retry budget.
fn finagle(
    ttl: crate::engine::SimDuration,
    min_per_s: f64,
    percent: f64,
    rate: Rate,
    copies: Copies,
    out: &mut Vec<Bound>,
) {
    let reserve = copies.n() * min_per_s * ttl.as_secs_f64();
    let (floor, n) = if copies.0 > 1 {
        (
            format!("{} x min_per_s", copies.0),
            format!("{} x ", copies.0),
        )
    } else {
        ("min_per_s".to_owned(), String::new())
    };
    out.push(bound(
        "retries in any window",
        percent,
        format!(
            "{} per request, plus {} in all",
            short(percent),
            short(reserve)
        ),
        format!(
            "percent x requests in the last {ttl} + {floor} x ttl = {} x requests + {n}{} x {}",
            short(percent),
            short(min_per_s),
            short(ttl.as_secs_f64())
        ),
    ));
    if let Rate::AtLeast(r) | Rate::About(r) = rate {
        let a = 1.0 + percent + copies.n() * min_per_s / r;
        out.push(bound(
            "attempts per request, total failure, long run",
            a,
            format!("{} attempts", short(a)),
            format!(
                "1 + percent + {floor} / rate = 1 + {} + {n}{} / {}",
                short(percent),
                short(min_per_s),
                short(r)
            ),
        ));
    }
}

/// Envoy's retry budget: retries in progress.
fn concurrency(l: crate::retry::ConcurrencyLimit, copies: Copies, out: &mut Vec<Bound>) {
    let counted = if l.count_backoff {
        "from its decision, backoff included"
    } else {
        "counted once sent: those waiting out a backoff are not, so any number may wait"
    };
    let floor = copies.n() * f64::from(l.min_concurrency);
    out.push(bound(
        "retries in progress",
        l.percent,
        format!(
            "{}% of the requests in progress, at least {} ({counted})",
            short(100.0 * l.percent),
            short(floor)
        ),
        copies.times(format!(
            "max(percent x requests in progress, min_concurrency) = max({} x n, {})",
            short(l.percent),
            l.min_concurrency
        )),
    ));
}

/// What an adaptive throttle (`copies` of it, each counting its proxy's
/// share of `rate`) lets through under total failure.
pub fn throttle(t: &ThrottleConfig, rate: Rate, copies: Copies) -> Vec<Bound> {
    let w = t.window.as_secs_f64();
    let per_window = match rate {
        Rate::AtLeast(r) | Rate::About(r) => {
            // With n requests a window and no accepts, each is let through
            // with probability 1 / (n_before + 1), n_before from 0 to n - 1
            // at the start, then about n: about one a window in the long run.
            let n = r / copies.n() * w;
            n / (n + 1.0)
        }
        Rate::Unknown => 1.0,
    };
    let per_window = copies.n() * per_window;
    let rate_words = if copies.0 > 1 {
        "rate / proxies x window"
    } else {
        "rate x window"
    };
    vec![bound(
        "attempts sent per window, total failure, long run",
        per_window,
        format!("about {} every {}", short(per_window), seconds(w)),
        copies.times(format!(
            "n / (n + 1) with n = {rate_words} requests counted and none accepted (K = {})",
            short(t.k)
        )),
    )]
}

/// What an open breaker (`copies` of it) lets through while attempts keep
/// failing.
pub fn breaker(b: &BreakerConfig, copies: Copies) -> Vec<Bound> {
    let open = b.open_for.as_secs_f64() * (1.0 - b.jitter);
    let per_s = copies.n() * f64::from(b.probes) / open;
    vec![bound(
        "attempts a second while open, total failure",
        per_s,
        format!("{} a second", short(per_s)),
        copies.times(format!(
            "probes / shortest open_for = {} / {}",
            b.probes,
            seconds(open)
        )),
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_bucket_allows_half_its_tokens_less_one() {
        let b = |m: f64| {
            budget(
                &BudgetConfig::TokenBucket {
                    max_tokens: m,
                    token_ratio: 0.1,
                },
                Rate::AtLeast(100.0),
                Copies::ONE,
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
            Copies::ONE,
        );
        assert_eq!(b[0].value, 100.0);
        assert!(b[0].shown.contains("50 after timeouts"));
        assert_eq!(b[2].value, 0.2);
    }
}
