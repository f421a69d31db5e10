//! The TOML schema, as serde reads it. Every field is as written in the file; the
//! checks and defaults that make a [`super::Scenario`] live in `validate`.

use serde::Deserialize;

use super::duration::DurationValue;

pub use super::schema_defences::{
    CacheFile, CodelFile, DisciplineFile, LimiterFile, LimiterKindFile,
};
pub use super::schema_fleet::{AutoscaleFile, HealthCheckFile, OutlierFile, ReplicaServiceFile};
pub use super::schema_outages::{OutageFile, OutageKindFile};
pub use super::schema_search::{RiskFile, SizeFile, TipFile};

/// A whole scenario file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// Results go to `results/<name>/`; default: the file name without `.toml`.
    pub name: Option<String>,
    /// One line on what the scenario shows.
    pub description: Option<String>,
    /// Seed of every random draw (default 1).
    pub seed: Option<u64>,
    /// Simulated length of each run.
    pub duration: DurationValue,
    /// The load.
    pub clients: ClientsFile,
    /// The network.
    pub network: NetworkFile,
    /// The server.
    pub server: ServerFile,
    /// Services the server calls, and that call each other (`[[service]]`):
    /// a call chain.
    #[serde(default, rename = "service")]
    pub services: Vec<ServerFile>,
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
    /// Run every strategy over a range of one parameter, replicated.
    pub sweep: Option<SweepFile>,
    /// Search, for every strategy, the largest trigger the world recovers from.
    pub tip: Option<TipFile>,
    /// The chance that triggers at random tip the world.
    pub risk: Option<RiskFile>,
    /// A look-aside cache the users ask first.
    pub cache: Option<CacheFile>,
}

/// `[sweep]`: the first (or only) parameter with `values = [...]`, or `from`, `to`
/// and `step`; `[sweep.by]` adds a second.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepFile {
    /// The key swept, as a key path: `clients.count`, `outage[0].length`.
    pub parameter: String,
    /// The values, listed: numbers, or durations such as "2s".
    pub values: Option<Vec<toml::Value>>,
    /// First value of a range.
    pub from: Option<toml::Value>,
    /// Last value of a range (included when reached by steps).
    pub to: Option<toml::Value>,
    /// Step of a range.
    pub step: Option<toml::Value>,
    /// Runs per (point, strategy), each with its own derived seed (default 1).
    pub replications: Option<u32>,
    /// A second parameter: the sweep runs every pair of values.
    pub by: Option<AxisFile>,
    /// Summary figures to chart against the parameter.
    pub charts: Option<Vec<String>>,
    /// Of `charts`, those drawn on a logarithmic axis.
    pub log_y: Option<Vec<String>>,
    /// Strategies shown in `timeline.png` (default: all).
    pub timeline: Option<Vec<String>>,
    /// The point whose first run `timeline.png` shows: a value of the
    /// parameter, or one per parameter (default: the last point).
    pub timeline_at: Option<toml::Value>,
}

/// `[sweep.by]`: the second parameter.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AxisFile {
    /// The key swept.
    pub parameter: String,
    /// The values, listed.
    pub values: Option<Vec<toml::Value>>,
    /// First value of a range.
    pub from: Option<toml::Value>,
    /// Last value of a range.
    pub to: Option<toml::Value>,
    /// Step of a range.
    pub step: Option<toml::Value>,
}

impl SweepFile {
    /// The first parameter, in the shape of `[sweep.by]`.
    pub fn first_axis(&self) -> AxisFile {
        AxisFile {
            parameter: self.parameter.clone(),
            values: self.values.clone(),
            from: self.from.clone(),
            to: self.to.clone(),
            step: self.step.clone(),
        }
    }
}

/// Load model names.
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum LoadModel {
    /// A fixed population of clients.
    Closed,
    /// Poisson arrivals.
    Open,
    /// One request per client, all at t = 0.
    OneShot,
}

/// `[clients]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientsFile {
    /// `closed`, `open` or `one-shot`.
    pub model: LoadModel,
    /// Closed loop and one-shot: number of clients (default 1000). Open loop
    /// with `every`: the population whose new requests keep coming.
    pub count: Option<u32>,
    /// Closed loop: think time between requests.
    pub think: Option<DistFile>,
    /// Open loop: logical requests per second, all sources together.
    pub rate: Option<f64>,
    /// Open loop from a population of `count` clients: each client's mean
    /// time between new requests, whatever its earlier requests are doing.
    pub every: Option<DurationValue>,
    /// Fraction of requests that are permanently bad (default 0).
    pub bad_fraction: Option<f64>,
    /// How many proxies the users are split behind (1: one for all).
    pub proxies: Option<u32>,
    /// Whether each proxy balances and ejects by what it saw (`own`, the
    /// default) or all share one view of the fleet (`shared`).
    pub proxy_view: Option<ProxyViewFile>,
}

/// `[clients] proxy_view` names.
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ProxyViewFile {
    /// Each proxy its own balancer and outlier detection.
    Own,
    /// One balancer and outlier detection for all.
    Shared,
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
    /// `capacity` (default) or `occ`.
    pub kind: Option<ServerKindFile>,
    /// Capacity: requests in service at once.
    pub workers: Option<u32>,
    /// Capacity: queue places behind the workers.
    pub queue: Option<u32>,
    /// Capacity: service time.
    pub service: Option<DistFile>,
    /// A fleet: replicas with a service time of their own.
    pub replica_service: Option<Vec<ReplicaServiceFile>>,
    /// Capacity: `fifo` (default), `lifo` or `adaptive-lifo`.
    pub discipline: Option<DisciplineFile>,
    /// Capacity, `adaptive-lifo`: how long the queue must stay non-empty
    /// before newest-first (100 ms).
    pub lifo_after: Option<DurationValue>,
    /// Capacity: CoDel on the queue.
    pub codel: Option<CodelFile>,
    /// Capacity: an adaptive concurrency limit in front of the queue.
    pub limiter: Option<LimiterFile>,
    /// Capacity: drop queued requests whose clients stopped waiting (default false).
    pub drop_expired: Option<bool>,
    /// Capacity: shed (429) arrivals when this many requests wait.
    pub shed_at: Option<u32>,
    /// Capacity: Retry-After of each 429 from shedding (whole seconds).
    pub shed_retry_after: Option<DurationValue>,
    /// Capacity: crash when an arrival would make the requests held exceed this.
    pub crash_at: Option<u32>,
    /// Capacity: down time after a crash (default 10 s).
    pub restart: Option<DurationValue>,
    /// Capacity: share of capacity right after a restart, in (0, 1].
    pub cold_start: Option<f64>,
    /// Capacity: time to return linearly to full capacity after a restart.
    pub warmup: Option<DurationValue>,
    /// Capacity: worker time spent refusing one request.
    pub reject_cost: Option<DurationValue>,
    /// Capacity: Universal Scalability Law contention (alpha) on requests held.
    pub contention: Option<f64>,
    /// Capacity: Universal Scalability Law coherency (beta) on requests held.
    pub coherency: Option<f64>,
    /// Capacity: replicas of the server behind one balancer (default 1).
    pub replicas: Option<u32>,
    /// Capacity: how an attempt picks a replica.
    pub balancer: Option<BalancerFile>,
    /// A fleet: zone names; replica `i` is in zone `i % zones.len()`.
    pub zones: Option<Vec<String>>,
    /// A fleet: a retry avoids its previous attempt's replica (Envoy's
    /// previous-hosts predicate).
    pub retry_other_replica: Option<bool>,
    /// A fleet: the healthy share below which health is ignored (Envoy's
    /// `healthy_panic_threshold`, in percent, default 50).
    pub healthy_panic_threshold: Option<f64>,
    /// A fleet: outlier ejection (Envoy's `outlier_detection`).
    pub outlier: Option<OutlierFile>,
    /// A fleet: active health checks.
    pub health_check: Option<HealthCheckFile>,
    /// A fleet: horizontal autoscaling (Kubernetes' HPA).
    pub autoscale: Option<AutoscaleFile>,
    /// A call chain: the service's name (`[[service]]` needs one; the
    /// `[server]`'s is "server" unless given).
    pub name: Option<String>,
    /// A call chain: the services each attempt calls, in order: a name, or
    /// `{ service = "cache", probability = 0.3 }` for a call made only
    /// sometimes.
    pub calls: Option<Vec<CallFile>>,
    /// A call chain: `sequence` (default) or `parallel`.
    pub calls_mode: Option<CallModeFile>,
}

/// One call of a tier: a service's name, or a table with how often.
#[derive(Debug, Clone)]
pub enum CallFile {
    /// Always made.
    Name(String),
    /// Made with a probability.
    Table {
        /// The service called.
        service: String,
        /// The probability the call is made, in (0, 1] (default 1).
        probability: Option<f64>,
    },
}

impl<'de> Deserialize<'de> for CallFile {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct CallVisitor;
        impl<'de> serde::de::Visitor<'de> for CallVisitor {
            type Value = CallFile;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a service's name, or a table such as { service = \"cache\", probability = 0.3 }",
                )
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<CallFile, E> {
                Ok(CallFile::Name(v.to_owned()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<CallFile, A::Error> {
                use serde::de::Error;
                let (mut service, mut probability) = (None, None);
                while let Some(key) = m.next_key::<String>()? {
                    match key.as_str() {
                        "service" => service = Some(m.next_value::<String>()?),
                        "probability" => probability = Some(m.next_value::<f64>()?),
                        other => {
                            return Err(A::Error::unknown_field(
                                other,
                                &["service", "probability"],
                            ));
                        }
                    }
                }
                let service = service.ok_or_else(|| A::Error::missing_field("service"))?;
                Ok(CallFile::Table {
                    service,
                    probability,
                })
            }
        }
        d.deserialize_any(CallVisitor)
    }
}

/// How an attempt makes its calls.
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum CallModeFile {
    /// One after another, stopping at the first that fails.
    Sequence,
    /// All at once, waiting for all.
    Parallel,
}

/// Balancer names.
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum BalancerFile {
    /// In turn.
    RoundRobin,
    /// Uniformly at random.
    Random,
    /// Fewest outstanding attempts, ties in turn.
    LeastOutstanding,
    /// The fewer outstanding of two replicas drawn at random.
    PowerOfTwo,
    /// The first replica in the rotation (gRPC's pick_first).
    PickFirst,
}

/// Server kind names.
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ServerKindFile {
    /// Workers, a queue, service times.
    Capacity,
    /// The AWS experiment's optimistic-concurrency record.
    Occ,
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
    /// `{ dist = "histogram", le = ["5ms", "10ms", "50ms"], cumulative =
    /// [0.5, 0.9, 1.0] }`: as a Prometheus histogram's buckets, the share
    /// of values at most each bound; uniform within a bucket.
    Histogram {
        /// The buckets' upper bounds, increasing.
        le: Vec<DurationValue>,
        /// The share of values at or below each bound, increasing to 1.
        cumulative: Vec<f64>,
    },
    /// `{ dist = "mixture", parts = [{ weight = 0.95, dist = "exponential",
    /// mean = "10ms" }, { weight = 0.05, dist = "exponential", mean =
    /// "100ms" }] }`: each draw from one part, chosen by weight.
    Mixture {
        /// The parts, each a distribution with its weight.
        parts: Vec<MixturePartFile>,
    },
    /// `{ dist = "empirical", samples = ["4ms", "5ms", "31ms"] }` or
    /// `{ dist = "empirical", file = "latencies.txt", unit = "ms" }`: each
    /// draw one of the measured values, all equally likely.
    Empirical {
        /// The values, inline.
        samples: Option<Vec<DurationValue>>,
        /// A file of values, one number per line, beside the scenario.
        file: Option<String>,
        /// The unit of the file's numbers: "ns", "us", "ms" or "s".
        unit: Option<String>,
    },
}

/// One part of a mixture: a weight, and a distribution's keys beside it.
#[derive(Debug, Deserialize)]
pub struct MixturePartFile {
    /// Its share of the draws, in (0, 1]; the weights sum to 1.
    pub weight: f64,
    /// The distribution.
    #[serde(flatten)]
    pub dist: DistFile,
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
    /// The latency a success should stay within: `slow.csv` counts those
    /// slower (none unless set).
    pub slow: Option<DurationValue>,
}

/// `retry_after_mode` names.
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum RetryAfterModeFile {
    /// The Retry-After is the delay.
    Replace,
    /// The delay is the backoff's, raised to the Retry-After (by at most the slack).
    AtLeast,
    /// The Retry-After raises the backoff's value before its jitter.
    BeforeJitter,
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
    /// Envoy's router back-off.
    Envoy,
    /// Polly's DecorrelatedJitterBackoffV2.
    DecorrelatedJitterV2,
}

/// `jitter`: `{ add = "100ms" }` or `{ low = 0.8, high = 1.2 }`.
#[derive(Debug, Deserialize, Clone, Copy)]
#[serde(deny_unknown_fields)]
pub struct JitterFile {
    /// Adds U(0, add) to each delay.
    pub add: Option<DurationValue>,
    /// Multiplies each delay by U(low, high).
    pub low: Option<f64>,
    /// See `low`.
    pub high: Option<f64>,
}

/// `jitter`: "none" (to switch off jitter a lower layer set), or a [`JitterFile`].
#[derive(Debug, Clone, Copy)]
pub enum JitterValue {
    /// No jitter.
    None,
    /// Additive or multiplicative jitter.
    Table(JitterFile),
}

impl<'de> Deserialize<'de> for JitterValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = JitterValue;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(JITTER_HELP)
            }

            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<JitterValue, E> {
                if v == "none" {
                    Ok(JitterValue::None)
                } else {
                    Err(E::custom(format!("jitter is {JITTER_HELP}; got \"{v}\"")))
                }
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<JitterValue, A::Error> {
                JitterFile::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(JitterValue::Table)
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// What the error messages say a jitter looks like.
pub const JITTER_HELP: &str = "\"none\", { add = \"100ms\" } (adds U(0, add)) or { low = 0.8, high = 1.2 } (multiplies by U(low, high))";

/// A limit in time: a duration, or "none" (no limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DurationOrNone {
    /// No limit.
    None,
    /// This long.
    After(DurationValue),
}

impl<'de> Deserialize<'de> for DurationOrNone {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        if text == "none" {
            return Ok(DurationOrNone::None);
        }
        super::duration::parse_duration(&text)
            .map(|v| DurationOrNone::After(DurationValue(v)))
            .map_err(|e| serde::de::Error::custom(format!("{e}, or \"none\"")))
    }
}

/// A retry limit: a count, or "unlimited".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryLimit(pub u32);

struct RetryLimitVisitor;

impl serde::de::Visitor<'_> for RetryLimitVisitor {
    type Value = RetryLimit;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a number of retries from 0 to 4294967294, or \"unlimited\"")
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<RetryLimit, E> {
        match u32::try_from(v) {
            Ok(n) if n < u32::MAX => Ok(RetryLimit(n)),
            _ => Err(E::custom(format!(
                "max_retries must be from 0 to 4294967294, or \"unlimited\"; got {v}"
            ))),
        }
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RetryLimit, E> {
        if v == "unlimited" {
            Ok(RetryLimit(u32::MAX))
        } else {
            Err(E::custom(format!(
                "max_retries must be a number or \"unlimited\", got \"{v}\""
            )))
        }
    }
}

impl<'de> Deserialize<'de> for RetryLimit {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RetryLimitVisitor)
    }
}

/// `[retry]` and each `[[strategy]]`: every field optional; a strategy's fields
/// override `[retry]`'s, which override the built-in defaults.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryFile {
    /// Strategy name (strategies only).
    pub name: Option<String>,
    /// A library's defaults to start from (see `super::presets`); this table's
    /// own keys override them.
    pub preset: Option<String>,
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
    /// Randomness on top of the backoff's delay.
    pub jitter: Option<JitterValue>,
    /// Retries after the first attempt, or "unlimited".
    pub max_retries: Option<RetryLimit>,
    /// Time limit of each attempt, or "none".
    pub timeout: Option<DurationOrNone>,
    /// Time limit of the whole logical request, or "none".
    pub deadline: Option<DurationOrNone>,
    /// Outcomes worth retrying.
    pub retry_on: Option<Vec<String>>,
    /// Outcomes retried only when they carry a Retry-After.
    pub retry_on_hinted: Option<Vec<String>>,
    /// Whether Retry-After replaces the computed delay.
    pub use_retry_after: Option<bool>,
    /// Larger Retry-After values are ignored.
    pub retry_after_max: Option<DurationValue>,
    /// How an honoured Retry-After sets the delay.
    pub retry_after_mode: Option<RetryAfterModeFile>,
    /// With `retry_after_mode = "at-least"`: the most a Retry-After may add to
    /// the backoff's delay, or "none".
    pub retry_after_slack: Option<DurationOrNone>,
    /// The backoff's base after a 429 instead of `base`, or "none" (`base`).
    pub throttling_base: Option<DurationOrNone>,
    /// The guards every proxy shares instead of keeping its own: any of
    /// "budget", "breaker", "throttle".
    pub shared: Option<Vec<String>>,
    /// A retry budget, e.g. `{ kind = "token-bucket" }`.
    pub budget: Option<BudgetFile>,
    /// Strategies only: a client population of its own, replacing `[clients]`.
    pub clients: Option<ClientsFile>,
    /// Strategies only: a server of its own, replacing `[server]`.
    pub server: Option<ServerFile>,
    /// Strategies only: a look-aside cache of its own, replacing `[cache]`.
    pub cache: Option<CacheFile>,
    /// A circuit breaker, e.g. `{ failure_rate = 0.5, open_for = "5s" }`.
    pub breaker: Option<BreakerFile>,
    /// Client-side adaptive throttling, e.g. `{ k = 2.0 }`.
    pub throttle: Option<ThrottleFile>,
    /// Hedged requests (gRPC's `hedgingPolicy`), e.g.
    /// `{ max_attempts = 2, delay = "20ms" }`.
    pub hedging: Option<HedgingFile>,
    /// The users' proxies' connection-pool limits (Envoy's circuit-breaker
    /// thresholds), e.g. `{ max_connections = 100 }`.
    pub limits: Option<super::limits::LimitsFile>,
    /// A call chain: calls carry their caller's deadline (gRPC's deadline
    /// propagation), default false.
    pub propagate_deadline: Option<bool>,
    /// A call chain: a caller that stops waiting cancels the calls it made
    /// (gRPC's cancellation propagation), default false.
    pub propagate_cancel: Option<bool>,
    /// Strategies only, in a call chain: the policy of the calls to each
    /// service, by name (`[strategy.tiers.database]`), over the strategy's.
    pub tiers: Option<std::collections::BTreeMap<String, RetryFile>>,
}

/// A circuit breaker; defaults are resilience4j's.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct BreakerFile {
    /// Failure share that opens it (0.5).
    pub failure_rate: Option<f64>,
    /// Attempts in the window (100).
    pub window: Option<u32>,
    /// Attempts needed before it may open (100).
    pub min_calls: Option<u32>,
    /// Open time ("60s").
    pub open_for: Option<DurationValue>,
    /// Random stretch of the open time, a share of it in [0, 1) (0).
    pub jitter: Option<f64>,
    /// Probes when half-open (10).
    pub probes: Option<u32>,
}

/// Hedged requests, as gRPC's `hedgingPolicy`.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct HedgingFile {
    /// Copies in all, the first included: 1 (no hedging) to 5.
    pub max_attempts: Option<u32>,
    /// Wait before each further copy (required with more than one copy).
    pub delay: Option<DurationValue>,
    /// Whether cancelling the losers drops their queued copies (true).
    pub cancel: Option<bool>,
}

/// Adaptive throttling; defaults are the SRE book's.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct ThrottleFile {
    /// K (2).
    pub k: Option<f64>,
    /// Sliding window ("2m").
    pub window: Option<DurationValue>,
}

/// A retry budget; every parameter has the default of its source.
#[derive(Debug, Deserialize, Clone)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum BudgetFile {
    /// No budget (to switch off one set in `[retry]`).
    None,
    /// gRPC retry throttling: `max_tokens` (10), `token_ratio` (0.1).
    TokenBucket {
        /// Bucket size.
        max_tokens: Option<f64>,
        /// Tokens back per success.
        token_ratio: Option<f64>,
    },
    /// AWS SDK standard retry quota: `capacity` (500), `retry_cost` (5),
    /// `timeout_cost` (10), `throttling_cost` (`retry_cost`), `success_bonus` (1).
    AwsQuota {
        /// Initial and largest quota.
        capacity: Option<u32>,
        /// Cost of a retry.
        retry_cost: Option<u32>,
        /// Cost of a retry after a timeout.
        timeout_cost: Option<u32>,
        /// Cost of a retry after a 429.
        throttling_cost: Option<u32>,
        /// Added by a first-try success.
        success_bonus: Option<u32>,
    },
    /// SRE per-client budget: `ratio` (0.1) of requests over `window` ("10s").
    Ratio {
        /// Largest share of retries.
        ratio: Option<f64>,
        /// Sliding window.
        window: Option<DurationValue>,
    },
    /// Finagle RetryBudget: `ttl` ("10s"), `min_per_s` (10), `percent` (0.2).
    Finagle {
        /// Lifetime of a deposit.
        ttl: Option<DurationValue>,
        /// Reserve of retries per second.
        min_per_s: Option<f64>,
        /// Share of requests that may retry.
        percent: Option<f64>,
    },
    /// Brooker's retry-simulator breaker: retries stop while failed attempts
    /// exceed `max_rate` (0.1) of the requests so far.
    FailureRatio {
        /// Failed attempts per request above which retries stop.
        max_rate: Option<f64>,
    },
    /// Envoy's retry budget: `percent` (0.2) of the requests in progress may
    /// be retries in progress, and at least `min_concurrency` (3).
    Concurrency {
        /// Share of the requests in progress.
        percent: Option<f64>,
        /// Floor of retries in progress.
        min_concurrency: Option<u32>,
        /// Whether a retry waiting out its backoff counts (true), or only a
        /// retry sent, as Envoy counts (false).
        count_backoff: Option<bool>,
    },
}
