//! The TOML schema, as serde reads it. Every field is as written in the file; the
//! checks and defaults that make a [`super::Scenario`] live in `validate`.

use serde::Deserialize;

use super::duration::DurationValue;

/// A whole scenario file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// Results go to `results/<name>/`; default: the file name without `.toml`.
    pub name: Option<String>,
    /// One line on what the scenario shows.
    pub description: Option<String>,
    /// Seed of every random stream (default 1).
    pub seed: Option<u64>,
    /// Simulated length of each run.
    pub duration: DurationValue,
    /// The load.
    pub clients: ClientsFile,
    /// The network.
    pub network: NetworkFile,
    /// The server.
    pub server: ServerFile,
    /// Outage windows (`[[outage]]`).
    #[serde(default, rename = "outage")]
    pub outages: Vec<OutageFile>,
    /// Measurement settings.
    #[serde(default)]
    pub metrics: MetricsFile,
    /// Defaults shared by every strategy.
    #[serde(default)]
    pub retry: RetryFile,
    /// The strategies to compare (`[[strategy]]`).
    #[serde(default, rename = "strategy")]
    pub strategies: Vec<RetryFile>,
}

/// Load model names.
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum LoadModel {
    /// A fixed population of clients.
    Closed,
    /// Poisson arrivals.
    Open,
}

/// `[clients]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientsFile {
    /// `closed` or `open`.
    pub model: LoadModel,
    /// Closed loop: number of clients (default 1000).
    pub count: Option<u32>,
    /// Closed loop: think time between requests.
    pub think: Option<DistFile>,
    /// Open loop: logical requests per second.
    pub rate: Option<f64>,
    /// Fraction of requests that are permanently bad (default 0).
    pub bad_fraction: Option<f64>,
}

/// `[network]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkFile {
    /// One-way latency of each hop.
    pub latency: DistFile,
}

/// `[server]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerFile {
    /// Requests in service at once.
    pub workers: u32,
    /// Queue places behind the workers.
    pub queue: u32,
    /// Service time.
    pub service: DistFile,
}

/// A distribution, e.g. `{ dist = "exponential", mean = "10ms" }`.
#[derive(Debug, Deserialize)]
#[serde(tag = "dist", rename_all = "kebab-case", deny_unknown_fields)]
pub enum DistFile {
    /// `{ dist = "constant", value = "5ms" }`
    Constant {
        /// The value.
        value: DurationValue,
    },
    /// `{ dist = "exponential", mean = "10ms" }`
    Exponential {
        /// The mean.
        mean: DurationValue,
    },
    /// `{ dist = "lognormal", mean = "10ms", sigma = 0.5 }`
    Lognormal {
        /// The mean.
        mean: DurationValue,
        /// Standard deviation of ln(X).
        sigma: f64,
    },
    /// `{ dist = "normal", mean = "10ms", sd = "2ms" }`: |N(mean, sd)|.
    Normal {
        /// Mean before folding.
        mean: DurationValue,
        /// Standard deviation.
        sd: DurationValue,
    },
    /// `{ dist = "uniform", low = "1ms", high = "3ms" }`
    Uniform {
        /// Smallest value.
        low: DurationValue,
        /// Largest value.
        high: DurationValue,
    },
}

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
}

/// `[[outage]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutageFile {
    /// What goes wrong.
    pub kind: OutageKindFile,
    /// Start of the window.
    pub start: DurationValue,
    /// End of the window (exclusive).
    pub end: DurationValue,
    /// `503` only: the Retry-After of each answer (whole seconds).
    pub retry_after: Option<DurationValue>,
    /// `brownout` only: remaining capacity in (0, 1].
    pub factor: Option<f64>,
}

/// `[metrics]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricsFile {
    /// Time bucket width (default 100 ms).
    pub bucket: Option<DurationValue>,
    /// Window before the first outage that defines normal goodput (default 10 s).
    pub baseline: Option<DurationValue>,
    /// Trailing window that smooths goodput for recovery (default 1 s).
    pub smoothing: Option<DurationValue>,
    /// Recovered at this fraction of normal goodput (default 0.9).
    pub recovery_fraction: Option<f64>,
}

/// Backoff kind names.
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum BackoffFile {
    /// Retry at once.
    None,
    /// Always `base`.
    Constant,
    /// `base * n`.
    Linear,
    /// Capped exponential.
    Exponential,
    /// AWS full jitter.
    FullJitter,
    /// AWS equal jitter.
    EqualJitter,
    /// AWS decorrelated jitter.
    DecorrelatedJitter,
}

/// A deadline: a duration, or "none".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeadlineValue {
    /// No deadline.
    None,
    /// This long from the first attempt.
    After(DurationValue),
}

impl<'de> Deserialize<'de> for DeadlineValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        if text == "none" {
            return Ok(DeadlineValue::None);
        }
        super::duration::parse_duration(&text)
            .map(|v| DeadlineValue::After(DurationValue(v)))
            .map_err(|e| serde::de::Error::custom(format!("{e}, or \"none\"")))
    }
}

/// `[retry]` and each `[[strategy]]`: every field optional; a strategy's fields
/// override `[retry]`'s, which override the built-in defaults.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryFile {
    /// Strategy name (strategies only).
    pub name: Option<String>,
    /// Backoff formula.
    pub backoff: Option<BackoffFile>,
    /// First delay.
    pub base: Option<DurationValue>,
    /// Largest delay.
    pub cap: Option<DurationValue>,
    /// Growth factor of the exponential kinds.
    pub multiplier: Option<f64>,
    /// Exponent at the first retry: 0 (starting article) or 1 (AWS simulator).
    pub first_exponent: Option<u32>,
    /// Retries after the first attempt.
    pub max_retries: Option<u32>,
    /// Time limit of each attempt.
    pub timeout: Option<DurationValue>,
    /// Time limit of the whole logical request, or "none".
    pub deadline: Option<DeadlineValue>,
    /// Outcomes worth retrying.
    pub retry_on: Option<Vec<String>>,
    /// Whether Retry-After replaces the computed delay.
    pub use_retry_after: Option<bool>,
    /// Larger Retry-After values are ignored.
    pub retry_after_max: Option<DurationValue>,
}
