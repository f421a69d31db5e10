//! Each tier of a call chain over a run: its figures (attempts, calls,
//! failures, work) and its series, as the run loop counts them and
//! `tiers.csv`, the tiers chart and the report read them, beside
//! [`super::replicas`] for a fleet's replicas.

use crate::engine::SimDuration;

/// Each tier's figures over a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TierTotals {
    /// Attempts sent to the tier (users' attempts for tier 0).
    pub attempts: u64,
    /// Of those, retries.
    pub retries: u64,
    /// Calls to the tier (logical requests of its callers; 0 for tier 0).
    pub calls: u64,
    /// Calls that failed for good (given up by their caller).
    pub calls_failed: u64,
    /// Of those, calls whose attempt their callers' breaker or throttle
    /// refused before it went out (tier 0: the users').
    pub rejected_locally: u64,
    /// Attempts the tier answered OK (when its callers hedge, calls its
    /// OK ended: of a call's copies, only the winner's answer counts).
    pub ok: u64,
    /// Workers' time on the tier's own part of attempts, ns.
    pub work_ns: u64,
    /// Of it, for attempts whose caller had stopped waiting when the
    /// answer went out.
    pub wasted_ns: u64,
}

/// One tier of a call chain over a run.
#[derive(Clone, Debug, PartialEq)]
pub struct TierRun {
    /// Its figures.
    pub totals: TierTotals,
    /// Attempts sent to it in each bucket (for tier 0, the users').
    pub attempts: Vec<u32>,
    /// The median latency of its successful calls (for tier 0, the users'
    /// requests), from the call's start to its OK.
    pub latency_p50: Option<SimDuration>,
    /// Their 99th percentile.
    pub latency_p99: Option<SimDuration>,
}
