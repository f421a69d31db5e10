//! The TOML schema of the questions asked of a world's triggers, as serde
//! reads it: a tipping-point search (`[tip]`) and a rare-event estimate
//! (`[risk]`); kept beside [`super::schema`], which re-exports it.

use serde::Deserialize;

use super::duration::DurationValue;
use super::schema::AxisFile;

/// `[tip]`: the trigger key searched, its range and resolution, and the
/// levels (`[tip.over]`) the search is made at.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TipFile {
    /// The trigger's key searched, as a key path: `outage[0].length`.
    pub search: String,
    /// The mildest value searched.
    pub from: toml::Value,
    /// The worst value searched.
    pub to: toml::Value,
    /// How narrowly each search brackets its boundary (the search's unit).
    pub resolution: toml::Value,
    /// Which way the trigger gets worse: `"larger"` (default) or `"smaller"`
    /// (a brownout's `factor`, the capacity left).
    pub worse: Option<String>,
    /// Searches per (level, strategy), each with its own seed (default 5).
    pub replications: Option<u32>,
    /// Time given to recover after the trigger's end (default: as much as
    /// the file gives after its own trigger).
    pub after: Option<DurationValue>,
    /// `"common"` (default): every probe of a replication, at every level,
    /// draws the same random numbers; `"independent"`: each its own.
    pub seeds: Option<String>,
    /// The levels: one key and its values, as a sweep's axis.
    pub over: Option<AxisFile>,
}

/// `[risk]`: triggers of one kind at random (how often, how big), and how
/// the chance that one tips the world is estimated.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RiskFile {
    /// The trigger's key whose value each trigger draws: `outage[0].rate`.
    pub trigger: String,
    /// The distribution of that value.
    pub size: SizeFile,
    /// Triggers a day, on average (a Poisson process).
    pub per_day: f64,
    /// What is watched: `"held"` (default: attempts held at the server,
    /// queued or in service) or `"in_progress"` (the users' requests).
    pub watch: Option<String>,
    /// The watched count at which the world counts as tipped.
    pub tipped: u64,
    /// The watched count at or under which, once the trigger is over, the
    /// world counts as recovered (default: the median at the trigger's
    /// start).
    pub calm: Option<u64>,
    /// Time given after the trigger's end (default: as much as the file
    /// gives after its own trigger).
    pub after: Option<DurationValue>,
    /// Walks per level (default 1000).
    pub effort: Option<u32>,
    /// Independent estimates, for the interval (default 10).
    pub repeats: Option<u32>,
    /// Brute-force trials to check the estimate against (default 0).
    pub brute: Option<u32>,
}

/// A trigger size's distribution: `{ dist = "exponential", mean = 5000 }`,
/// `{ dist = "lognormal", median = "2s", sigma = 1.0 }` or
/// `{ dist = "uniform", low = 0.2, high = 0.6 }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SizeFile {
    /// `"exponential"`, `"lognormal"` or `"uniform"`.
    pub dist: String,
    /// Exponential: the mean.
    pub mean: Option<toml::Value>,
    /// Lognormal: the median.
    pub median: Option<toml::Value>,
    /// Lognormal: the standard deviation of the logarithm.
    pub sigma: Option<f64>,
    /// Uniform: the least value.
    pub low: Option<toml::Value>,
    /// Uniform: the greatest value.
    pub high: Option<toml::Value>,
}
