//! From the file as written to a [`Scenario`]: defaults, merging of `[retry]` into
//! each `[[strategy]]`, and every check that serde's types cannot express.

use std::path::Path;

use super::duration::DurationValue;
use super::error::ScenarioError;
use super::locate::KeyPath;
use super::schema::*;
use super::{Scenario, WorldOverride};
use crate::engine::{SimDuration, SimTime};
use crate::metrics::MetricsConfig;
use crate::model::balancer::Balancer;
use crate::model::fleet::{
    AutoscaleConfig, FailurePercentage, FleetOptions, HealthCheckConfig, OutlierConfig, SuccessRate,
};
use crate::model::{
    Discipline, Dist, Load, Outage, OutageKind, Overload, ServerConfig, ServerModel, Shedding,
    Targets, WorldConfig,
};

/// Builds errors that point into one file.
pub struct Checker<'a> {
    pub(super) file: &'a Path,
    pub(super) src: &'a str,
    /// Whether sample files beside the scenario may be read (not in the
    /// playground, whose scenarios come from a browser).
    pub(super) read_files: bool,
    /// The sample files read, with their checksums.
    pub(super) inputs: std::cell::RefCell<Vec<(String, String)>>,
}

type Checked<T> = Result<T, ScenarioError>;

mod chain;
mod defences;
mod empirical;
mod fleet;
mod load;
mod outages;
mod server;

/// Largest number of closed-loop clients (each costs ~50 bytes of state).
pub const MAX_CLIENTS: u32 = 50_000_000;
/// Largest number of workers (each costs ~40 bytes of state).
pub const MAX_WORKERS: u32 = 10_000_000;

/// The most replicas a server may have (an event names its replica in 16 bits;
/// `workers` times `replicas` is bounded by [`MAX_WORKERS`] too).
pub const MAX_REPLICAS: u32 = 10_000;
/// Largest number of time buckets in a run (each costs ~70 bytes per strategy).
pub const MAX_BUCKETS: u64 = 10_000_000;
/// Largest open-loop arrival rate, requests per second of simulated time.
pub const MAX_RATE: f64 = 1e8;
/// Most keys a look-aside cache may have (each costs 16 bytes a run).
pub const MAX_CACHE_KEYS: u32 = 10_000_000;

/// The fleet an outage's `zone` is looked up in: what to call it in an
/// error, the table its zones are listed in, and its zones.
pub(super) struct ZonesOf {
    whose: String,
    table: &'static str,
    zones: Vec<String>,
}

impl<'a> Checker<'a> {
    /// A checker for `src`, read from `file`.
    pub fn new(file: &'a Path, src: &'a str) -> Self {
        Checker {
            file,
            src,
            read_files: false,
            inputs: std::cell::RefCell::default(),
        }
    }

    /// A checker that reads the sample files a scenario names, beside it.
    pub fn reading_files(file: &'a Path, src: &'a str) -> Self {
        Checker {
            read_files: true,
            ..Checker::new(file, src)
        }
    }

    pub(super) fn err<T>(&self, key: &KeyPath, message: impl Into<String>) -> Checked<T> {
        Err(ScenarioError::at_key(self.file, self.src, key, message))
    }

    pub(super) fn ensure(
        &self,
        ok: bool,
        key: &KeyPath,
        message: impl FnOnce() -> String,
    ) -> Checked<()> {
        if ok { Ok(()) } else { self.err(key, message()) }
    }

    fn fraction(&self, v: f64, key: &KeyPath, what: &str, open_at_zero: bool) -> Checked<f64> {
        let ok = v.is_finite() && v <= 1.0 && if open_at_zero { v > 0.0 } else { v >= 0.0 };
        let range = if open_at_zero { "(0, 1]" } else { "[0, 1]" };
        self.ensure(ok, key, || format!("{what} must be in {range}, got {v}"))?;
        Ok(v)
    }

    /// Validates the whole file.
    pub fn scenario(&self, f: ScenarioFile) -> Checked<Scenario> {
        let name = self.name(f.name.clone())?;
        let duration = f.duration.0;
        self.ensure(duration.0 > 0, &KeyPath::key("duration"), || {
            "duration must be positive".into()
        })?;
        let metrics = self.metrics(&f.metrics, duration)?;
        let outages = self.outages(&f.outages, &Self::outage_zones(&f), duration)?;
        if let Some(first) = outages.first() {
            let key = KeyPath::key("metrics").join("baseline");
            let fits = metrics.baseline <= SimDuration(first.start.0);
            self.ensure(fits, &key, || {
                format!(
                    "the baseline window ({}) must fit before the first outage, which starts at {}; \
                     shorten the baseline or start the outage later",
                    metrics.baseline,
                    SimDuration(first.start.0)
                )
            })?;
        }
        let load = self.load(&f.clients, &KeyPath::key("clients"))?;
        let world = WorldConfig {
            duration,
            proxies: self.proxies(&f.clients, &load, &KeyPath::key("clients"))?,
            load,
            bad_fraction: self.bad_fraction(&f.clients, &KeyPath::key("clients"))?,
            network: self.dist(&f.network.latency, &KeyPath::key("network").join("latency"))?,
            server: self.server(&f.server, &KeyPath::key("server"))?,
            outages,
            chain: None,
            cache: self.world_cache(&f)?,
        };
        let chain = self.chain(&f, &world.server, world.network.mean_nanos(), duration)?;
        let world = WorldConfig {
            outages: self.outage_tiers(&f.outages, world.outages, chain.as_ref())?,
            ..world
        };
        self.occ_world(&world)?;
        let strategies = self.strategies(&f.retry, &f.strategies, chain.as_ref())?;
        if matches!(world.server, ServerModel::Occ) {
            if let Some(i) = strategies.iter().position(|s| s.hedging.is_some()) {
                return self.err(
                    &KeyPath::key("strategy").at(i).join("hedging"),
                    "the OCC record's attempts are a read then a write that must not be \
                     duplicated: hedging needs a capacity server",
                );
            }
        }
        let world = WorldConfig {
            chain: chain.map(Box::new),
            ..world
        };
        let overrides = self.strategy_overrides(&f, &world)?;
        self.outage_replicas(&world, &overrides)?;
        let mut scenario = Scenario {
            name,
            description: f.description.clone().unwrap_or_default(),
            seed: f.seed.unwrap_or(1),
            world,
            metrics,
            strategies,
            sweep: None,
            tip: None,
            risk: None,
            overrides,
            inputs: self.inputs.take(),
        };
        if let Some(s) = &f.sweep {
            scenario.sweep = Some(self.sweep(s, &scenario)?);
        }
        if let Some(t) = &f.tip {
            scenario.tip = Some(self.tip(t, &scenario)?);
        }
        if let Some(r) = &f.risk {
            scenario.risk = Some(self.risk(r, &scenario)?);
        }
        Ok(scenario)
    }

    /// What an OCC record's world cannot have: outages, bad requests, a
    /// cache.
    fn occ_world(&self, world: &WorldConfig) -> Checked<()> {
        if !matches!(world.server, ServerModel::Occ) {
            return Ok(());
        }
        if !world.outages.is_empty() {
            return self.err(
                &KeyPath::key("outage"),
                "the OCC record has no outages: remove the [[outage]] tables",
            );
        }
        if world.bad_fraction > 0.0 {
            return self.err(
                &KeyPath::key("clients").join("bad_fraction"),
                "the OCC record has no bad requests: set bad_fraction = 0",
            );
        }
        if world.cache.is_some() {
            return self.err(
                &KeyPath::key("cache"),
                "the OCC record's attempts read and write one record: remove the [cache] table",
            );
        }
        Ok(())
    }

    /// The scenario's `[cache]`, if any.
    fn world_cache(&self, f: &ScenarioFile) -> Checked<Option<crate::model::cache::CacheConfig>> {
        f.cache
            .as_ref()
            .map(|c| self.cache(c, &KeyPath::key("cache")))
            .transpose()
    }

    /// Retry-After values travel as whole seconds (RFC 9110 delay-seconds).
    fn whole_seconds(&self, d: SimDuration, key: &KeyPath) -> Checked<()> {
        self.ensure(d.0 % 1_000_000_000 == 0, key, || {
            format!("Retry-After carries whole seconds (RFC 9110 delay-seconds): got {d}")
        })
    }

    fn name(&self, name: Option<String>) -> Checked<String> {
        let name = match name {
            Some(n) => n,
            None => self
                .file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
        };
        let ok = !name.is_empty()
            && !name.starts_with('.')
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
        self.ensure(ok, &KeyPath::key("name"), || {
            format!("name \"{name}\" names the results folder: use letters, digits, '-', '_' and '.' only")
        })?;
        Ok(name)
    }

    fn dist(&self, d: &DistFile, key: &KeyPath) -> Checked<Dist> {
        let positive = |v: &DurationValue, field: &str| {
            self.ensure(v.0.0 > 0, &key.join(field), || {
                format!("{field} must be positive, got {}", v.0)
            })
        };
        match d {
            DistFile::Constant { value } => Ok(Dist::constant(value.0)),
            DistFile::Exponential { mean } => {
                positive(mean, "mean")?;
                Ok(Dist::exponential(mean.0).expect("a positive mean is valid"))
            }
            DistFile::Lognormal { mean, sigma } => {
                positive(mean, "mean")?;
                let ok = (0.0..=10.0).contains(sigma);
                self.ensure(ok, &key.join("sigma"), || {
                    format!("sigma must be in [0, 10], got {sigma}")
                })?;
                Ok(Dist::lognormal(mean.0, *sigma).expect("checked parameters"))
            }
            DistFile::Normal { mean, sd } => {
                Ok(Dist::abs_normal(mean.0, sd.0).expect("durations are finite"))
            }
            DistFile::Uniform { low, high } => {
                let ok = low.0 <= high.0;
                self.ensure(ok, &key.join("high"), || {
                    format!("high ({}) must be at least low ({})", high.0, low.0)
                })?;
                Ok(Dist::uniform(low.0, high.0).expect("checked bounds"))
            }
            DistFile::Mixture { parts } => self.mixture(parts, key),
            DistFile::Histogram { le, cumulative } => self.histogram(le, cumulative, key),
            DistFile::Empirical {
                samples,
                file,
                unit,
            } => self.empirical(samples.as_deref(), file.as_deref(), unit.as_deref(), key),
        }
    }

    /// A histogram's buckets: as many shares as bounds, bounds increasing,
    /// shares from 0 to 1 not decreasing, the last 1.
    fn histogram(&self, le: &[DurationValue], cumulative: &[f64], key: &KeyPath) -> Checked<Dist> {
        self.ensure(!le.is_empty() && le.len() == cumulative.len(), &key.join("cumulative"), || {
            format!("a histogram needs one cumulative share per bound in le ({} bounds, {} shares), e.g. le = [\"5ms\", \"10ms\", \"50ms\"], cumulative = [0.5, 0.9, 1.0]", le.len(), cumulative.len())
        })?;
        for i in 1..le.len() {
            self.ensure(le[i].0 > le[i - 1].0, &key.join("le").at(i), || {
                format!(
                    "the bounds must increase: {} after {}",
                    le[i].0,
                    le[i - 1].0
                )
            })?;
        }
        for (i, &c) in cumulative.iter().enumerate() {
            let previous = if i == 0 { 0.0 } else { cumulative[i - 1] };
            self.ensure(c.is_finite() && (previous..=1.0).contains(&c), &key.join("cumulative").at(i), || {
                format!("each share is of the values at or below its bound: from {previous} (the one before) to 1, got {c}")
            })?;
        }
        self.ensure(cumulative.last() == Some(&1.0), &key.join("cumulative"), || {
            "the last share must be 1: every value is at or below the last bound (Prometheus's +Inf bucket has no bound to draw below)".into()
        })?;
        let buckets = le
            .iter()
            .map(|d| d.0)
            .zip(cumulative.iter().copied())
            .collect();
        Ok(Dist::histogram(buckets).expect("checked buckets"))
    }

    /// A mixture's parts: each a distribution that is not a mixture, with a
    /// positive weight; the weights sum to 1.
    fn mixture(&self, parts: &[MixturePartFile], key: &KeyPath) -> Checked<Dist> {
        let key = key.join("parts");
        self.ensure(!parts.is_empty(), &key, || {
            "a mixture needs parts, e.g. [{ weight = 0.95, dist = \"exponential\", mean = \"10ms\" }, { weight = 0.05, dist = \"exponential\", mean = \"100ms\" }]".into()
        })?;
        let mut out = Vec::with_capacity(parts.len());
        for (i, p) in parts.iter().enumerate() {
            let at = key.at(i);
            self.ensure(
                p.weight.is_finite() && p.weight > 0.0 && p.weight <= 1.0,
                &at.join("weight"),
                || {
                    format!(
                        "a part's weight is its share of the draws, in (0, 1], got {}",
                        p.weight
                    )
                },
            )?;
            self.ensure(
                !matches!(p.dist, DistFile::Mixture { .. }),
                &at.join("dist"),
                || {
                    "a part of a mixture cannot be a mixture: list its parts in the outer one"
                        .into()
                },
            )?;
            out.push((p.weight, self.dist(&p.dist, &at)?));
        }
        let sum: f64 = out.iter().map(|p| p.0).sum();
        self.ensure((sum - 1.0).abs() < 1e-9, &key, || {
            format!("the parts' weights must sum to 1, got {sum}")
        })?;
        Ok(Dist::mixture(out).expect("checked parts"))
    }

    fn strategy_overrides(
        &self,
        f: &ScenarioFile,
        world: &WorldConfig,
    ) -> Checked<Vec<WorldOverride>> {
        for (field, set) in [
            ("clients", f.retry.clients.is_some()),
            ("server", f.retry.server.is_some()),
            ("cache", f.retry.cache.is_some()),
        ] {
            if set {
                return self.err(
                    &KeyPath::key("retry").join(field),
                    format!(
                        "a `{field}` table belongs to a [[strategy]] (its own), not to [retry]"
                    ),
                );
            }
        }
        let occ = matches!(world.server, ServerModel::Occ);
        let mut out = Vec::with_capacity(f.strategies.len());
        for (i, st) in f.strategies.iter().enumerate() {
            let key = KeyPath::key("strategy").at(i);
            if occ && (st.clients.is_some() || st.server.is_some()) {
                return self.err(&key, "the OCC experiment's clients and server are set in [clients] and [server] only");
            }
            let load = match &st.clients {
                Some(c) => {
                    let load = self.load(c, &key.join("clients"))?;
                    Some((
                        self.bad_fraction(c, &key.join("clients"))?,
                        self.proxies(c, &load, &key.join("clients"))?,
                        load,
                    ))
                }
                None => None,
            };
            let server = match &st.server {
                Some(s) => {
                    for (field, set) in [
                        ("name", s.name.is_some()),
                        ("calls", s.calls.is_some()),
                        ("calls_mode", s.calls_mode.is_some()),
                    ] {
                        if set {
                            return self.err(
                                &key.join("server").join(field),
                                format!("`{field}` belongs to [server]: a strategy's own server keeps the scenario's calls"),
                            );
                        }
                    }
                    let model = self.server(s, &key.join("server"))?;
                    if matches!(model, ServerModel::Occ) {
                        return self.err(
                            &key.join("server").join("kind"),
                            "a strategy's own server must be a capacity server",
                        );
                    }
                    Some(model)
                }
                None => None,
            };
            let cache = match &st.cache {
                Some(c) if world.cache.is_some() => Some(self.cache(c, &key.join("cache"))?),
                Some(_) => {
                    return self.err(
                        &key.join("cache"),
                        "a strategy's own cache replaces the scenario's [cache]: add a [cache] table first",
                    );
                }
                None => None,
            };
            out.push(WorldOverride {
                load,
                server,
                cache,
            });
        }
        Ok(out)
    }

    /// A percentage in [0, 100].
    fn percent(&self, v: f64, key: &KeyPath, what: &str) -> Checked<f64> {
        self.ensure(v.is_finite() && (0.0..=100.0).contains(&v), key, || {
            format!("{what} is a percentage from 0 to 100, got {v}")
        })?;
        Ok(v)
    }

    /// A positive duration, or `default` when not given.
    fn positive(
        &self,
        v: Option<DurationValue>,
        default: SimDuration,
        key: &KeyPath,
    ) -> Checked<SimDuration> {
        let d = v.map_or(default, |v| v.0);
        self.ensure(d.0 > 0, key, || {
            "must be a positive duration, e.g. \"10s\"".into()
        })?;
        Ok(d)
    }

    /// A count of at least 1, or `default` when not given.
    fn at_least_one(&self, v: Option<u32>, default: u32, key: &KeyPath) -> Checked<u32> {
        let n = v.unwrap_or(default);
        self.ensure(n >= 1, key, || format!("must be at least 1, got {n}"))?;
        Ok(n)
    }

    fn metrics(&self, m: &MetricsFile, duration: SimDuration) -> Checked<MetricsConfig> {
        let d = MetricsConfig::default();
        let key = KeyPath::key("metrics");
        let bucket = m.bucket.map_or(d.bucket, |v| v.0);
        self.ensure(bucket.0 > 0, &key.join("bucket"), || {
            "bucket must be positive".into()
        })?;
        let fits = duration.0 % bucket.0 == 0;
        self.ensure(fits, &key.join("bucket"), || {
            format!("the run's duration ({duration}) must be a whole number of buckets ({bucket})")
        })?;
        let count = duration.0 / bucket.0;
        // Blame the key the file sets: the bucket if it gives one, else the
        // duration (the bucket is then the default).
        let blamed = if m.bucket.is_some() {
            key.join("bucket")
        } else {
            KeyPath::key("duration")
        };
        self.ensure(count <= MAX_BUCKETS, &blamed, || {
            format!("{count} buckets of {bucket} in {duration} is more than {MAX_BUCKETS}: a shorter duration or wider buckets ([metrics] bucket)")
        })?;
        let window = |v: Option<DurationValue>, default: SimDuration, field: &str| {
            let w = v.map_or(default, |v| v.0);
            let ok = w >= bucket && w.0 % bucket.0 == 0;
            self.ensure(ok, &key.join(field), || {
                format!("{field} ({w}) must be a positive whole number of buckets ({bucket})")
            })?;
            Ok(w)
        };
        let baseline = window(m.baseline, d.baseline, "baseline")?;
        let smoothing = window(m.smoothing, d.smoothing, "smoothing")?;
        let recovery_fraction = match m.recovery_fraction {
            Some(v) => {
                self.fraction(v, &key.join("recovery_fraction"), "recovery_fraction", true)?
            }
            None => d.recovery_fraction,
        };
        let slow = match m.slow {
            Some(v) => {
                self.ensure(v.0.0 > 0, &key.join("slow"), || {
                    format!(
                        "slow is the latency a success should stay within: positive, got {}",
                        v.0
                    )
                })?;
                Some(v.0)
            }
            None => None,
        };
        Ok(MetricsConfig {
            bucket,
            baseline,
            smoothing,
            recovery_fraction,
            slow,
        })
    }
}

#[cfg(test)]
mod tests {
    const SMALL: &str = include_str!("../../../tests/fixtures/small.toml");

    /// The key `small.toml` with `from` replaced by `to` is refused at, and
    /// its message.
    fn refused(from: &str, to: &str) -> (Option<String>, String) {
        assert!(SMALL.contains(from), "{from}");
        let text = SMALL.replacen(from, to, 1);
        let e = crate::scenario::parse(&text, std::path::Path::new("small.toml"))
            .expect_err("an invalid scenario");
        (e.key.clone(), e.to_string())
    }

    /// One bad key of each subject is refused at its own key, with what
    /// would be valid.
    #[test]
    fn each_subject_refuses_at_its_key() {
        for (from, to, key, words) in [
            ("workers = 4", "workers = 0", "server.workers", "from 1 to"),
            ("count = 100", "count = -1", "clients.count", ""),
            ("end = \"5s\"", "end = \"3s\"", "outage[0].end", "after"),
            (
                "workers = 4",
                "workers = 4\nreplicas = 2\nbalancer = \"fastest\"",
                "server.balancer",
                "round-robin",
            ),
            (
                "queue = 50",
                "queue = 50\ncalls = [\"db\"]",
                "server.calls",
                "[[service]]",
            ),
        ] {
            let (at, message) = refused(from, to);
            assert_eq!(at.as_deref(), Some(key), "{message}");
            assert!(message.contains(words), "{key}: {message}");
        }
    }

    #[test]
    fn the_fixture_itself_is_valid() {
        let s = crate::scenario::parse(SMALL, std::path::Path::new("small.toml")).unwrap();
        assert_eq!(s.strategies.len(), 2);
        assert_eq!(s.world.outages.len(), 1);
    }
}
