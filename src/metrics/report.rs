//! The measured results of one scenario: what the exporters and charts read.

use crate::engine::SimTime;
use crate::metrics::{Bucket, MetricsConfig, Summary};

/// One strategy's results.
#[derive(Clone, Debug)]
pub struct StrategyReport {
    /// Strategy name.
    pub name: String,
    /// Summary figures.
    pub summary: Summary,
    /// The time series.
    pub buckets: Vec<Bucket>,
    /// The twin's time series (the same run without the triggers), the normal
    /// that recovery is judged against; `None` without triggers.
    pub twin: Option<Vec<Bucket>>,
    /// Events the twin simulated.
    pub twin_events: u64,
    /// Why the run (or its twin) stopped early, if it did, in words.
    pub aborted: Option<String>,
    /// A fleet's per-replica series (`replicas x buckets`, replica by
    /// replica, buckets as `buckets`); `None` for one server.
    pub replicas: Option<Vec<crate::metrics::replicas::ReplicaBucket>>,
    /// In a call chain, each tier's name and figures, tier 0 (the server)
    /// first; `None` without a chain.
    pub tiers: Option<Vec<(String, super::tiers::TierRun)>>,
    /// Each proxy's counts, when the users are behind several; `None`
    /// otherwise.
    pub proxies: Option<Vec<super::proxies::ProxyTotals>>,
    /// What the server's own defences did, bucket by bucket; `None` when
    /// it has no concurrency limiter and no CoDel.
    pub defences: Option<Vec<super::defences::DefenceBucket>>,
    /// What the look-aside cache did, bucket by bucket; `None` without one.
    pub cache: Option<Vec<super::cache::CacheBucket>>,
}

/// A scenario's results, strategies in file order.
#[derive(Clone, Debug)]
pub struct Report {
    /// Scenario name.
    pub scenario: String,
    /// Seed used.
    pub seed: u64,
    /// Server capacity at full speed, completions per second (`None`: unlimited).
    pub capacity_per_s: Option<f64>,
    /// The server's crash limit: it crashes when an arrival would make the
    /// requests it holds (queued plus in service) exceed this; `None`: it
    /// does not crash.
    pub crash_limit: Option<u32>,
    /// Outage windows `[start, end)`.
    pub outages: Vec<(SimTime, SimTime)>,
    /// Measurement settings (bucket width, recovery rule).
    pub metrics: MetricsConfig,
    /// Simulated length of each run, seconds.
    pub duration_s: f64,
    /// One entry per strategy.
    pub runs: Vec<StrategyReport>,
}
