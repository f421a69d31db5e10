//! The TOML schema of the server's own defences (`discipline`,
//! `[server.codel]`, `[server.limiter]`) and of the look-aside cache in
//! front of it (`[cache]`), as serde reads it; kept beside [`super::schema`],
//! which re-exports it.

use serde::Deserialize;

use super::duration::DurationValue;

/// Queue discipline names.
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum DisciplineFile {
    /// Oldest first.
    Fifo,
    /// Newest first.
    Lifo,
    /// Oldest first, newest first while congested.
    AdaptiveLifo,
}

/// `[server.codel]`: CoDel on the queue (RFC 8289's defaults).
#[derive(Debug, Default, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct CodelFile {
    /// The sojourn aimed for (5 ms).
    pub target: Option<DurationValue>,
    /// How long the sojourn may stay above target (100 ms).
    pub interval: Option<DurationValue>,
}

/// Concurrency limiter names.
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum LimiterKindFile {
    /// Envoy's adaptive concurrency filter, gradient controller.
    Gradient,
    /// Netflix's `VegasLimit`.
    Vegas,
    /// Netflix's `Gradient2Limit`.
    Gradient2,
    /// Netflix's `AIMDLimit`.
    Aimd,
}

/// `[server.limiter]`: an adaptive concurrency limit; each key belongs to
/// the kinds its comment names.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct LimiterFile {
    /// Which controller.
    pub kind: LimiterKindFile,
    /// gradient: `concurrency_update_interval` (100 ms).
    pub update_interval: Option<DurationValue>,
    /// gradient: `sample_aggregate_percentile`, percent (50).
    pub percentile: Option<f64>,
    /// gradient: `min_rtt_calc_params.interval` (60 s).
    pub min_rtt_interval: Option<DurationValue>,
    /// gradient: `min_rtt_calc_params.request_count` (50).
    pub request_count: Option<u32>,
    /// gradient: `min_rtt_calc_params.jitter`, percent (15).
    pub jitter: Option<f64>,
    /// gradient: `min_rtt_calc_params.min_concurrency` (3).
    pub min_concurrency: Option<u32>,
    /// gradient: `min_rtt_calc_params.buffer`, percent (25).
    pub buffer: Option<f64>,
    /// vegas, gradient2, aimd: `initialLimit` (20, 20, 10).
    pub initial: Option<u32>,
    /// gradient2: `minLimit` (20).
    pub min: Option<u32>,
    /// gradient: `max_concurrency_limit` (1000); vegas, gradient2:
    /// `maxConcurrency` (1000, 200).
    pub max: Option<u32>,
    /// vegas, gradient2: `smoothing` (1.0, 0.2).
    pub smoothing: Option<f64>,
    /// vegas: `probeMultiplier` (30).
    pub probe_multiplier: Option<u32>,
    /// gradient2: `queueSize` (4).
    pub queue_size: Option<u32>,
    /// gradient2: `longWindow`, samples (600).
    pub long_window: Option<u32>,
    /// aimd: `backoffRatio` (0.9).
    pub backoff_ratio: Option<f64>,
    /// aimd: `timeout` (5 s).
    pub timeout: Option<DurationValue>,
}

/// `[cache]`: a look-aside cache the users ask before the server.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct CacheFile {
    /// Distinct keys the requests ask for (100 000).
    pub keys: Option<u32>,
    /// Popularity: key k (from 1) asked in proportion to 1 / k^zipf
    /// (uniform when absent).
    pub zipf: Option<f64>,
    /// Entries the cache holds; or give `hit_rate`.
    pub capacity: Option<u32>,
    /// The cache's steady hit rate, which sets `capacity` (Che's
    /// approximation of an LRU cache under Zipf keys; C / N for uniform).
    pub hit_rate: Option<f64>,
    /// How long an entry lives after it was filled (until evicted).
    pub ttl: Option<DurationValue>,
    /// The cache starts full, in its steady state (true).
    pub warm: Option<bool>,
    /// A warm-up gate: at most this many misses a second go to the server.
    pub miss_limit: Option<f64>,
}
