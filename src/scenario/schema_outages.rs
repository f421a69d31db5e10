//! The TOML schema of the triggers (`[[outage]]`), as serde reads it;
//! kept beside [`super::schema`], which re-exports it.

use serde::Deserialize;

use super::duration::DurationValue;

/// Outage kind names.
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
pub enum OutageKindFile {
    /// Crash: resets, then refused connections.
    #[serde(rename = "reset")]
    Reset,
    /// Fast 503s.
    #[serde(rename = "503")]
    Unavailable,
    /// No answers at all.
    #[serde(rename = "blackhole")]
    Blackhole,
    /// Reduced capacity.
    #[serde(rename = "brownout")]
    Brownout,
    /// Extra arrivals.
    #[serde(rename = "spike")]
    Spike,
    /// Independent transient failures.
    #[serde(rename = "errors")]
    Errors,
    /// The look-aside cache is lost.
    #[serde(rename = "cache-flush")]
    CacheFlush,
}

/// `[[outage]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutageFile {
    /// What goes wrong.
    pub kind: OutageKindFile,
    /// Start of the window.
    pub start: DurationValue,
    /// End of the window (exclusive); or give `length`.
    pub end: Option<DurationValue>,
    /// Length of the window, instead of `end`.
    pub length: Option<DurationValue>,
    /// `503` only: the Retry-After of each answer (whole seconds).
    pub retry_after: Option<DurationValue>,
    /// `brownout` only: remaining capacity in (0, 1].
    pub factor: Option<f64>,
    /// `spike` only: extra logical requests per second.
    pub rate: Option<f64>,
    /// `errors` only: probability that an attempt fails.
    pub p: Option<f64>,
    /// A fleet: the replicas it hits (indices from 0); default all.
    pub replicas: Option<Vec<u32>>,
    /// A fleet: the share of the replicas it hits (the first ones), in (0, 1].
    pub share: Option<f64>,
    /// A fleet with zones: the zone it hits.
    pub zone: Option<String>,
    /// A call chain: the service it hits, by name (default the server).
    pub service: Option<String>,
}
