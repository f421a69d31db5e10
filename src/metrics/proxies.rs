//! What each proxy saw over a run, when the users are split behind several
//! (`[clients] proxies`): its requests and how they ended, its attempts, and
//! what its own guards refused.

use crate::retry::GiveUp;

/// One proxy's counts over a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProxyTotals {
    /// Logical requests its users started.
    pub requests: u64,
    /// Of those, answered well.
    pub succeeded: u64,
    /// Of those, failed for good.
    pub failed: u64,
    /// Attempts it sent, first ones and retries (hedges included).
    pub attempts: u64,
    /// Of those, retries and hedges.
    pub retries: u64,
    /// Requests that failed because the retry budget refused a retry.
    pub budget_denied: u64,
    /// Requests that failed because the breaker, the throttle or the
    /// pool's limits refused an attempt.
    pub rejected_locally: u64,
    /// Of those, refused by the pool's limits (overflow: Envoy's
    /// `upstream_rq_pending_overflow`).
    pub overflow: u64,
    /// Attempts that waited for a connection, every one busy.
    pub waited: u64,
    /// Requests still under way at the end.
    pub in_flight_at_end: u64,
    /// Replicas its outlier detection ejected (when each proxy keeps its
    /// own view of the fleet).
    pub ejections: u64,
}

impl ProxyTotals {
    /// A request failed for good, for `why`.
    #[inline]
    pub fn failure(&mut self, why: GiveUp) {
        self.failed += 1;
        match why {
            GiveUp::BudgetDenied => self.budget_denied += 1,
            GiveUp::RejectedLocally => self.rejected_locally += 1,
            GiveUp::NotRetryable | GiveUp::RetriesExhausted | GiveUp::DeadlineExceeded => {}
        }
    }

    /// Every request is accounted for: it succeeded, failed or is still
    /// under way.
    pub fn conserved(&self) -> bool {
        self.requests == self.succeeded + self.failed + self.in_flight_at_end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_counted_with_their_cause() {
        let mut t = ProxyTotals {
            requests: 4,
            ..ProxyTotals::default()
        };
        t.failure(GiveUp::BudgetDenied);
        t.failure(GiveUp::RejectedLocally);
        t.failure(GiveUp::RetriesExhausted);
        assert_eq!((t.failed, t.budget_denied, t.rejected_locally), (3, 1, 1));
        assert!(!t.conserved());
        t.in_flight_at_end = 1;
        assert!(t.conserved());
    }
}
