//! Hedged requests, as gRPC's `hedgingPolicy` defines them (gRFC A6, "gRPC
//! Retry Design"): the client sends the first copy of a request, then another
//! copy every `delay` while no answer has come, up to `max_attempts` copies in
//! all. The first good answer wins and the copies still out are cancelled. A
//! copy that fails with a non-fatal status (for this simulator, an outcome in
//! the strategy's `retry_on`) sends the next copy at once, without waiting
//! out the delay; any other failure ends the request. Retry throttling (a
//! strategy's budget) applies to every copy after the first.
//!
//! Dean and Barroso ("The Tail at Scale", CACM 2013) propose the delay to be
//! the 95th percentile of the expected latency: the tail is cut for about 5%
//! more requests.

use crate::engine::SimDuration;

/// Most copies a hedged request may send: gRPC treats larger values of
/// `maxAttempts` as 5 (gRFC A6).
pub const MAX_COPIES: u8 = 5;

/// A strategy's hedging policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HedgingConfig {
    /// Copies in all, the first included (gRPC's `maxAttempts`), 2 to
    /// [`MAX_COPIES`].
    pub max_attempts: u8,
    /// Wait after a copy before the next is sent (gRPC's `hedgingDelay`).
    pub delay: SimDuration,
    /// Whether the cancellation of the losing copies reaches the server, so
    /// that a copy still queued there is dropped unserved (true: a server that
    /// checks its call's cancellation before starting work, as a gRPC server's
    /// handler can). A copy already in service always runs to its end.
    pub cancel: bool,
}

/// P(latency > `t`) of a request that sends up to `copies` copies `delay`
/// apart, when every copy answers (none fails) after an independent time of
/// survival function `s` (P(one copy takes longer than u)), and copies do not
/// slow each other down: the request ends with the first answer, copy `k`
/// answering at `k * delay` plus its own time, so the request's latency is
/// the minimum of those (a copy that is never sent changes nothing: the
/// request had its answer before `k * delay`). Times in any one unit.
pub fn survival(copies: u8, delay: f64, s: impl Fn(f64) -> f64, t: f64) -> f64 {
    (0..copies)
        .map(|k| t - f64::from(k) * delay)
        .filter(|u| *u > 0.0)
        .map(&s)
        .product()
}

/// Copies a request sends on average under the assumptions of
/// [`survival`]: the first, and copy `k` whenever no answer has come by
/// `k * delay`.
pub fn expected_copies(copies: u8, delay: f64, s: impl Fn(f64) -> f64) -> f64 {
    1.0 + (1..copies)
        .map(|k| survival(copies, delay, &s, f64::from(k) * delay))
        .sum::<f64>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_exponential_copies_have_the_closed_form_of_their_minimum() {
        // Exponential copies of mean 1, the second sent at d: beyond d the
        // latency is past t only if both are, e^-t * e^-(t-d).
        let s = |u: f64| (-u).exp();
        let d: f64 = 0.5;
        for t in [0.2f64, 0.5, 1.0, 3.0] {
            let want = if t <= d {
                (-t).exp()
            } else {
                (-t).exp() * (-(t - d)).exp()
            };
            assert!((survival(2, d, s, t) - want).abs() < 1e-12, "t = {t}");
        }
        assert!((expected_copies(2, d, s) - (1.0 + (-d).exp())).abs() < 1e-12);
        // One copy: no hedging at all.
        assert_eq!(expected_copies(1, d, s), 1.0);
        assert!((survival(1, d, s, 2.0) - (-2.0f64).exp()).abs() < 1e-12);
    }
}
