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
    AutoscaleConfig, FailurePercentage, FleetOptions, HealthCheckConfig, OutlierConfig,
};
use crate::model::{
    Discipline, Dist, Load, Outage, OutageKind, Overload, ServerConfig, ServerModel, Shedding,
    Targets, WorldConfig,
};

/// Builds errors that point into one file.
pub struct Checker<'a> {
    pub(super) file: &'a Path,
    pub(super) src: &'a str,
}

type Checked<T> = Result<T, ScenarioError>;

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

/// The fleet an outage's `zone` is looked up in: what to call it in an
/// error, the table its zones are listed in, and its zones.
struct ZonesOf {
    whose: String,
    table: &'static str,
    zones: Vec<String>,
}

impl<'a> Checker<'a> {
    /// A checker for `src`, read from `file`.
    pub fn new(file: &'a Path, src: &'a str) -> Self {
        Checker { file, src }
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
        let world = WorldConfig {
            duration,
            load: self.load(&f.clients, &KeyPath::key("clients"))?,
            bad_fraction: self.bad_fraction(&f.clients, &KeyPath::key("clients"))?,
            network: self.dist(&f.network.latency, &KeyPath::key("network").join("latency"))?,
            server: self.server(&f.server, &KeyPath::key("server"))?,
            outages,
            chain: None,
        };
        let chain = self.chain(&f, &world.server, world.network.mean_nanos(), duration)?;
        let world = WorldConfig {
            outages: self.outage_tiers(&f.outages, world.outages, chain.as_ref())?,
            ..world
        };
        if matches!(world.server, ServerModel::Occ) {
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
        }
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
            overrides,
        };
        if let Some(s) = &f.sweep {
            scenario.sweep = Some(self.sweep(s, &scenario)?);
        }
        Ok(scenario)
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
        }
    }

    fn bad_fraction(&self, c: &ClientsFile, key: &KeyPath) -> Checked<f64> {
        match c.bad_fraction {
            Some(v) => self.fraction(v, &key.join("bad_fraction"), "bad_fraction", false),
            None => Ok(0.0),
        }
    }

    /// Each strategy's own client population and server, where it has them.
    /// Every replica an outage names exists in the server it hits: the
    /// scenario's, and each strategy's own.
    fn outage_replicas(&self, world: &WorldConfig, overrides: &[WorldOverride]) -> Checked<()> {
        let replicas = |m: &ServerModel| match m {
            ServerModel::Capacity(c) => c.slots() as u32,
            ServerModel::Occ => 1,
        };
        let zones = |m: &ServerModel| match m {
            ServerModel::Capacity(c) => c.fleet.zones.clone(),
            ServerModel::Occ => Vec::new(),
        };
        // Outages of a chain's services are checked against the services
        // (`Checker::outage_tiers`); a strategy's own server is tier 0.
        let aims_at_zone = world
            .outages
            .iter()
            .any(|o| o.tier == 0 && matches!(o.targets, Targets::Zone { .. }));
        for (i, o) in overrides.iter().enumerate() {
            if let Some(server) = &o.server {
                if aims_at_zone && zones(server) != zones(&world.server) {
                    return self.err(
                        &KeyPath::key("strategy").at(i).join("server").join("zones"),
                        "an outage aims at a zone, so a strategy's own server must have the \
                         scenario's zones, in the same order",
                    );
                }
            }
        }
        let servers = std::iter::once((None, replicas(&world.server))).chain(
            overrides
                .iter()
                .enumerate()
                .filter_map(|(i, o)| o.server.as_ref().map(|s| (Some(i), replicas(s)))),
        );
        for (strategy, n) in servers {
            for (i, o) in world.outages.iter().enumerate() {
                let Targets::List(list) = &o.targets else {
                    continue;
                };
                if o.tier > 0 {
                    continue;
                }
                if let Some(&bad) = list.iter().find(|&&r| r >= n) {
                    let whose = strategy.map_or("the server".to_string(), |k| {
                        format!("strategy[{k}]'s own server")
                    });
                    return self.err(
                        &KeyPath::key("outage").at(i).join("replicas"),
                        format!(
                            "replica {bad} is out of range: {whose} has {n} replica{}, {}",
                            if n == 1 { "" } else { "s" },
                            if n == 1 {
                                "index 0".to_string()
                            } else {
                                format!("indices 0 to {}", n - 1)
                            }
                        ),
                    );
                }
            }
        }
        Ok(())
    }

    fn strategy_overrides(
        &self,
        f: &ScenarioFile,
        world: &WorldConfig,
    ) -> Checked<Vec<WorldOverride>> {
        for (field, set) in [
            ("clients", f.retry.clients.is_some()),
            ("server", f.retry.server.is_some()),
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
                Some(c) => Some((
                    self.load(c, &key.join("clients"))?,
                    self.bad_fraction(c, &key.join("clients"))?,
                )),
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
            out.push(WorldOverride { load, server });
        }
        Ok(out)
    }

    #[expect(
        clippy::too_many_lines,
        reason = "checks each key of [clients] in order, each with its message"
    )]
    fn load(&self, c: &ClientsFile, key: &KeyPath) -> Checked<Load> {
        let key = key.clone();
        let misplaced = |field: &str, model: &str| {
            self.err(
                &key.join(field),
                format!(
                    "`{field}` applies to {model}-loop load only (clients.model = \"{model}\")"
                ),
            )
        };
        match c.model {
            LoadModel::Closed => {
                if c.rate.is_some() {
                    return misplaced("rate", "open");
                }
                if c.every.is_some() {
                    return misplaced("every", "open");
                }
                let clients = c.count.unwrap_or(1000);
                let ok = (1..=MAX_CLIENTS).contains(&clients);
                self.ensure(ok, &key.join("count"), || {
                    format!("count must be from 1 to {MAX_CLIENTS}, got {clients}")
                })?;
                let Some(think) = &c.think else {
                    return self.err(&key, "closed-loop load needs `think`, e.g. think = { dist = \"exponential\", mean = \"1s\" }");
                };
                Ok(Load::Closed {
                    clients,
                    think: self.dist(think, &key.join("think"))?,
                })
            }
            LoadModel::OneShot => {
                for (field, set) in [
                    ("rate", c.rate.is_some()),
                    ("think", c.think.is_some()),
                    ("every", c.every.is_some()),
                ] {
                    if set {
                        return self.err(&key.join(field), format!("`{field}` does not apply to one-shot load: each client sends one request at t = 0"));
                    }
                }
                let clients = c.count.unwrap_or(1000);
                let ok = (1..=MAX_CLIENTS).contains(&clients);
                self.ensure(ok, &key.join("count"), || {
                    format!("count must be from 1 to {MAX_CLIENTS}, got {clients}")
                })?;
                Ok(Load::OneShot { clients })
            }
            LoadModel::Open => {
                if c.think.is_some() {
                    return misplaced("think", "closed");
                }
                let rate = match (c.rate, c.count, c.every) {
                    (Some(_), Some(_), _) => {
                        return self.err(
                            &key.join("count"),
                            "open-loop load takes either `rate` (requests per second from all \
                             sources) or `count` and `every` (a population of clients, each \
                             sending a new request every so often), not both",
                        );
                    }
                    (Some(_), None, Some(_)) => {
                        return self.err(
                            &key.join("every"),
                            "`every` goes with `count` (each of `count` clients sends a new \
                             request every so often); with `rate` leave it out",
                        );
                    }
                    (Some(rate), None, None) => rate,
                    (None, Some(count), Some(every)) => {
                        let ok = (1..=MAX_CLIENTS).contains(&count);
                        self.ensure(ok, &key.join("count"), || {
                            format!("count must be from 1 to {MAX_CLIENTS}, got {count}")
                        })?;
                        self.ensure(every.0.0 > 0, &key.join("every"), || {
                            "every must be positive, e.g. every = \"1s\"".into()
                        })?;
                        f64::from(count) / every.0.as_secs_f64()
                    }
                    (None, Some(_), None) => {
                        return self.err(
                            &key.join("every"),
                            "open-loop load from a population needs `every`, each client's mean \
                             time between new requests, e.g. count = 1000 and every = \"1s\"",
                        );
                    }
                    (None, None, Some(_)) => {
                        return self.err(
                            &key.join("count"),
                            "`every` needs `count`, the number of clients, e.g. count = 1000",
                        );
                    }
                    (None, None, None) => {
                        return self.err(
                            &key,
                            "open-loop load needs `rate`, logical requests per second (rate = \
                             500.0), or a population: `count` clients each sending a new request \
                             `every` so often (count = 1000, every = \"1s\")",
                        );
                    }
                };
                let ok = rate.is_finite() && rate > 0.0 && rate <= MAX_RATE;
                let field = if c.rate.is_some() { "rate" } else { "every" };
                self.ensure(ok, &key.join(field), || {
                    format!(
                        "the open-loop rate must be a positive number of requests per second, \
                         at most {MAX_RATE:e}, got {rate}"
                    )
                })?;
                Ok(Load::Open { rate_per_s: rate })
            }
        }
    }

    #[expect(
        clippy::too_many_lines,
        reason = "checks each key of [server] in order, each with its message"
    )]
    pub(super) fn server(&self, s: &ServerFile, key: &KeyPath) -> Checked<ServerModel> {
        let key = key.clone();
        if s.kind == Some(ServerKindFile::Occ) {
            for (field, set) in [
                ("workers", s.workers.is_some()),
                ("queue", s.queue.is_some()),
                ("service", s.service.is_some()),
                ("discipline", s.discipline.is_some()),
                ("drop_expired", s.drop_expired.is_some()),
                ("shed_at", s.shed_at.is_some()),
                ("shed_retry_after", s.shed_retry_after.is_some()),
                ("crash_at", s.crash_at.is_some()),
                ("restart", s.restart.is_some()),
                ("cold_start", s.cold_start.is_some()),
                ("warmup", s.warmup.is_some()),
                ("reject_cost", s.reject_cost.is_some()),
                ("contention", s.contention.is_some()),
                ("coherency", s.coherency.is_some()),
                ("replicas", s.replicas.is_some()),
                ("balancer", s.balancer.is_some()),
                ("zones", s.zones.is_some()),
                ("retry_other_replica", s.retry_other_replica.is_some()),
                (
                    "healthy_panic_threshold",
                    s.healthy_panic_threshold.is_some(),
                ),
                ("outlier", s.outlier.is_some()),
                ("health_check", s.health_check.is_some()),
                ("autoscale", s.autoscale.is_some()),
            ] {
                if set {
                    return self.err(&key.join(field), format!("`{field}` applies to kind = \"capacity\" only: the OCC record answers instantly"));
                }
            }
            return Ok(ServerModel::Occ);
        }
        let need =
            |field: &str| format!("a capacity server needs `{field}` (or set kind = \"occ\")");
        let Some(workers) = s.workers else {
            return self.err(&key, need("workers"));
        };
        let Some(queue) = s.queue else {
            return self.err(&key, need("queue"));
        };
        let Some(service) = &s.service else {
            return self.err(&key, need("service"));
        };
        let ok = (1..=MAX_WORKERS).contains(&workers);
        self.ensure(ok, &key.join("workers"), || {
            format!("workers must be from 1 to {MAX_WORKERS}, got {workers}")
        })?;
        let service = self.dist(service, &key.join("service"))?;
        self.ensure(service.mean_nanos() > 0.0, &key.join("service"), || {
            "the mean service time must be positive".into()
        })?;
        let shed = match (s.shed_at, s.shed_retry_after) {
            (Some(at), ra) => {
                if let Some(ra) = ra {
                    self.whole_seconds(ra.0, &key.join("shed_retry_after"))?;
                }
                Some(Shedding {
                    at,
                    retry_after: ra.map(|d| d.0),
                })
            }
            (None, Some(_)) => {
                return self.err(
                    &key.join("shed_retry_after"),
                    "shed_retry_after needs shed_at, the queue length at which to shed",
                );
            }
            (None, None) => None,
        };
        let overload = self.overload(s, &key)?;
        let replicas = s.replicas.unwrap_or(1);
        self.ensure(
            (1..=MAX_REPLICAS).contains(&replicas),
            &key.join("replicas"),
            || format!("replicas must be from 1 to {MAX_REPLICAS}, got {replicas}"),
        )?;
        self.ensure(
            u64::from(replicas) * u64::from(workers) <= u64::from(MAX_WORKERS),
            &key.join("replicas"),
            || {
                format!(
                    "{replicas} replicas of {workers} workers are {} workers in all, over the \
                     {MAX_WORKERS} a run may hold: fewer replicas or workers",
                    u64::from(replicas) * u64::from(workers)
                )
            },
        )?;
        let fleet = self.fleet(s, replicas, workers, &key)?;
        Ok(ServerModel::Capacity(ServerConfig {
            fleet,
            replicas,
            balancer: match s.balancer {
                None | Some(BalancerFile::RoundRobin) => Balancer::RoundRobin,
                Some(BalancerFile::Random) => Balancer::Random,
                Some(BalancerFile::LeastOutstanding) => Balancer::LeastOutstanding,
                Some(BalancerFile::PowerOfTwo) => Balancer::PowerOfTwo,
                Some(BalancerFile::PickFirst) => Balancer::PickFirst,
            },
            overload,
            workers,
            queue_capacity: queue,
            service,
            discipline: match s.discipline {
                Some(DisciplineFile::Lifo) => Discipline::Lifo,
                Some(DisciplineFile::Fifo) | None => Discipline::Fifo,
            },
            drop_expired: s.drop_expired.unwrap_or(false),
            shed,
        }))
    }

    /// A fleet's zones, retries to another replica, ejection, health checks
    /// and autoscaling.
    fn fleet(
        &self,
        s: &ServerFile,
        replicas: u32,
        workers: u32,
        key: &KeyPath,
    ) -> Checked<FleetOptions> {
        let mut f = FleetOptions::default();
        if let Some(a) = &s.autoscale {
            f.autoscale = Some(self.autoscale(a, replicas, workers, &key.join("autoscale"))?);
        }
        let slots = f.autoscale.map_or(replicas, |a| a.max);
        let needs_fleet = |field: &str| {
            format!(
                "`{field}` acts on a fleet: give the server replicas = 2 or more (or an autoscale \
                 table)"
            )
        };
        if let Some(zones) = &s.zones {
            let k = key.join("zones");
            self.ensure(!zones.is_empty(), &k, || {
                "zones lists zone names, e.g. [\"a\", \"b\", \"c\"]; leave it out for none".into()
            })?;
            self.ensure(zones.len() as u32 <= slots, &k, || {
                format!(
                    "{} zones for {slots} replica{}: replica i is in zone i mod {}, so a zone \
                     would have no replica; list at most {slots}",
                    zones.len(),
                    if slots == 1 { "" } else { "s" },
                    zones.len()
                )
            })?;
            for (i, z) in zones.iter().enumerate() {
                self.ensure(!z.trim().is_empty(), &k.at(i), || {
                    "a zone needs a name".into()
                })?;
                self.ensure(!zones[..i].contains(z), &k.at(i), || {
                    format!("zone {z:?} is listed twice")
                })?;
            }
            f.zones = zones.clone();
        }
        if let Some(other) = s.retry_other_replica {
            self.ensure(
                !other || slots > 1,
                &key.join("retry_other_replica"),
                || needs_fleet("retry_other_replica"),
            )?;
            f.retry_other_replica = other;
        }
        if let Some(p) = s.healthy_panic_threshold {
            let k = key.join("healthy_panic_threshold");
            self.percent(p, &k, "healthy_panic_threshold")?;
            f.panic_threshold = p / 100.0;
        }
        if let Some(o) = &s.outlier {
            let k = key.join("outlier");
            self.ensure(slots > 1, &k, || needs_fleet("outlier"))?;
            f.outlier = Some(self.outlier(o, &k)?);
        }
        if let Some(h) = &s.health_check {
            let k = key.join("health_check");
            self.ensure(slots > 1, &k, || needs_fleet("health_check"))?;
            let d = HealthCheckConfig::default();
            let c = HealthCheckConfig {
                interval: self.positive(h.interval, d.interval, &k.join("interval"))?,
                timeout: self.positive(h.timeout, d.timeout, &k.join("timeout"))?,
                unhealthy_threshold: self.at_least_one(
                    h.unhealthy_threshold,
                    d.unhealthy_threshold,
                    &k.join("unhealthy_threshold"),
                )?,
                healthy_threshold: self.at_least_one(
                    h.healthy_threshold,
                    d.healthy_threshold,
                    &k.join("healthy_threshold"),
                )?,
            };
            f.health_check = Some(c);
        }
        Ok(f)
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

    fn outlier(&self, o: &OutlierFile, key: &KeyPath) -> Checked<OutlierConfig> {
        let d = OutlierConfig::default();
        let consecutive = match o.consecutive_5xx {
            Some(0) => None,
            Some(n) => Some(n),
            None => d.consecutive_5xx,
        };
        let failure_percentage = match o.failure_percentage_threshold {
            Some(t) => Some(FailurePercentage {
                threshold: self.percent(
                    t,
                    &key.join("failure_percentage_threshold"),
                    "failure_percentage_threshold",
                )? / 100.0,
                minimum_hosts: o.failure_percentage_minimum_hosts.unwrap_or(5),
                request_volume: o.failure_percentage_request_volume.unwrap_or(50),
            }),
            None => {
                for (field, set) in [
                    (
                        "failure_percentage_minimum_hosts",
                        o.failure_percentage_minimum_hosts.is_some(),
                    ),
                    (
                        "failure_percentage_request_volume",
                        o.failure_percentage_request_volume.is_some(),
                    ),
                ] {
                    if set {
                        return self.err(&key.join(field), format!("`{field}` needs failure_percentage_threshold, the failure percentage that ejects (Envoy's default is 85)"));
                    }
                }
                None
            }
        };
        self.ensure(consecutive.is_some() || failure_percentage.is_some(), &key.join("consecutive_5xx"), || {
            "with consecutive_5xx = 0 and no failure_percentage_threshold nothing can eject: remove the outlier table or turn one detector on".into()
        })?;
        let c = OutlierConfig {
            consecutive_5xx: consecutive,
            interval: self.positive(o.interval, d.interval, &key.join("interval"))?,
            base_ejection_time: self.positive(
                o.base_ejection_time,
                d.base_ejection_time,
                &key.join("base_ejection_time"),
            )?,
            max_ejection_time: self.positive(
                o.max_ejection_time,
                d.max_ejection_time,
                &key.join("max_ejection_time"),
            )?,
            max_ejection_share: match o.max_ejection_percent {
                Some(p) => {
                    self.percent(p, &key.join("max_ejection_percent"), "max_ejection_percent")?
                        / 100.0
                }
                None => d.max_ejection_share,
            },
            failure_percentage,
        };
        Ok(c)
    }

    fn autoscale(
        &self,
        a: &AutoscaleFile,
        replicas: u32,
        workers: u32,
        key: &KeyPath,
    ) -> Checked<AutoscaleConfig> {
        let Some(max) = a.max_replicas else {
            return self.err(
                key,
                "an autoscaler needs max_replicas, the most replicas it may run",
            );
        };
        let Some(target) = a.average_utilization else {
            return self.err(key, "an autoscaler needs average_utilization, the percentage of busy workers it aims at, e.g. 60");
        };
        let Some(startup) = a.startup else {
            return self.err(key, "an autoscaler needs startup, the time from its decision to a replica in service (scheduling, image pull, start, readiness), e.g. \"45s\"");
        };
        let min = a.min_replicas.unwrap_or(1);
        self.ensure(min >= 1, &key.join("min_replicas"), || {
            "min_replicas must be at least 1".into()
        })?;
        self.ensure(
            (1..=MAX_REPLICAS).contains(&max),
            &key.join("max_replicas"),
            || format!("max_replicas must be from 1 to {MAX_REPLICAS}, got {max}"),
        )?;
        self.ensure(min <= replicas && replicas <= max, &key.join("max_replicas"), || {
            format!("the server starts with replicas = {replicas}, which must be from min_replicas ({min}) to max_replicas ({max})")
        })?;
        self.ensure(
            u64::from(max) * u64::from(workers) <= u64::from(MAX_WORKERS),
            &key.join("max_replicas"),
            || format!("{max} replicas of {workers} workers are over the {MAX_WORKERS} workers a run may hold"),
        )?;
        let target = self.percent(
            target,
            &key.join("average_utilization"),
            "average_utilization",
        )?;
        self.ensure(target > 0.0, &key.join("average_utilization"), || {
            "average_utilization must be above 0".into()
        })?;
        let tolerance = a.tolerance.unwrap_or(0.1);
        self.ensure(
            tolerance.is_finite() && (0.0..1.0).contains(&tolerance),
            &key.join("tolerance"),
            || format!("tolerance must be in [0, 1), got {tolerance}"),
        )?;
        Ok(AutoscaleConfig {
            min,
            max,
            target: target / 100.0,
            sync: self.positive(
                a.sync_period,
                SimDuration::from_secs(15),
                &key.join("sync_period"),
            )?,
            tolerance,
            down_window: a
                .scale_down_stabilization
                .map_or(SimDuration::from_secs(300), |d| d.0),
            up_window: a.scale_up_stabilization.map_or(SimDuration::ZERO, |d| d.0),
            startup: startup.0,
        })
    }

    /// The overload behaviours of a capacity server's table.
    fn overload(&self, s: &ServerFile, key: &KeyPath) -> Checked<Overload> {
        let mut o = Overload::default();
        if let Some(at) = s.crash_at {
            self.ensure(at >= 1, &key.join("crash_at"), || {
                "crash_at must be at least 1: the number of requests held (queued plus in service) past which the server crashes".into()
            })?;
            o.crash_at = Some(at);
        }
        if let Some(r) = s.restart {
            self.ensure(s.crash_at.is_some(), &key.join("restart"), || {
                "restart is the down time after a crash: it needs crash_at".into()
            })?;
            self.ensure(r.0.0 > 0, &key.join("restart"), || {
                "restart must be positive, e.g. \"10s\"".into()
            })?;
            o.restart = r.0;
        }
        match (s.cold_start, s.warmup) {
            (Some(c), Some(w)) => {
                o.cold_capacity = self.fraction(c, &key.join("cold_start"), "cold_start", true)?;
                self.ensure(w.0.0 > 0, &key.join("warmup"), || {
                    "warmup must be positive, e.g. \"30s\"".into()
                })?;
                o.warmup = w.0;
            }
            (None, None) => {}
            (Some(_), None) => {
                return self.err(
                    &key.join("cold_start"),
                    "cold_start needs warmup, the time to get back to full capacity",
                );
            }
            (None, Some(_)) => {
                return self.err(
                    &key.join("warmup"),
                    "warmup needs cold_start, the share of capacity right after a restart",
                );
            }
        }
        if let Some(c) = s.reject_cost {
            self.ensure(c.0.0 > 0, &key.join("reject_cost"), || {
                "reject_cost must be positive, e.g. \"1ms\" (leave it out for free refusals)".into()
            })?;
            o.reject_cost = Some(c.0);
        }
        for (field, v, slot) in [
            ("contention", s.contention, &mut o.contention),
            ("coherency", s.coherency, &mut o.coherency),
        ] {
            if let Some(v) = v {
                self.ensure(
                    v.is_finite() && (0.0..=1.0).contains(&v),
                    &key.join(field),
                    || format!("{field} must be from 0 to 1, got {v}"),
                )?;
                *slot = v;
            }
        }
        Ok(o)
    }

    /// For each outage, the fleet its `zone` is looked up in. An outage of a
    /// service uses the service's zones (a service that does not exist is
    /// reported by `Checker::outage_tiers`; its zones here are none).
    fn outage_zones(f: &ScenarioFile) -> Vec<ZonesOf> {
        let entry = f
            .server
            .name
            .as_deref()
            .unwrap_or(crate::model::chain::ENTRY);
        f.outages
            .iter()
            .map(|o| match o.service.as_deref() {
                Some(name) if name != entry => ZonesOf {
                    whose: format!("service \"{name}\""),
                    table: "its [[service]] table",
                    zones: f
                        .services
                        .iter()
                        .find(|s| s.name.as_deref() == Some(name))
                        .and_then(|s| s.zones.clone())
                        .unwrap_or_default(),
                },
                _ => ZonesOf {
                    whose: "the server".into(),
                    table: "[server]",
                    zones: f.server.zones.clone().unwrap_or_default(),
                },
            })
            .collect()
    }

    #[expect(
        clippy::too_many_lines,
        reason = "checks each key of an [[outage]] in order, each with its message"
    )]
    fn outages(
        &self,
        list: &[OutageFile],
        zones: &[ZonesOf],
        duration: SimDuration,
    ) -> Checked<Vec<Outage>> {
        let mut out: Vec<Outage> = Vec::with_capacity(list.len());
        for (i, o) in list.iter().enumerate() {
            let key = KeyPath::key("outage").at(i);
            let start = o.start.0;
            let end = match (o.end, o.length) {
                (Some(end), None) => end.0,
                (None, Some(length)) => SimDuration(start.0.saturating_add(length.0.0)),
                _ => {
                    return self.err(
                        &key,
                        "give the outage's `end` or its `length`, not both and not neither",
                    );
                }
            };
            let end_key = key.join(if o.end.is_some() { "end" } else { "length" });
            self.ensure(end > start, &end_key, || {
                format!("end ({end}) must be after start ({start})")
            })?;
            self.ensure(end <= duration, &end_key, || {
                format!("end ({end}) is after the end of the run ({duration})")
            })?;
            // Overlaps are checked once the tiers are known (outages of
            // different services may overlap: Checker::outage_tiers).
            if let Some(prev) = out.last() {
                let ok = SimTime(start.0) >= prev.start;
                self.ensure(ok, &key.join("start"), || {
                    format!("outages must be listed in order of their start: this one starts at {start}, before the previous one ({})", SimDuration(prev.start.0))
                })?;
            }
            if o.retry_after.is_some() && o.kind != OutageKindFile::Unavailable {
                return self.err(
                    &key.join("retry_after"),
                    "retry_after applies to kind = \"503\" only",
                );
            }
            if o.factor.is_some() && o.kind != OutageKindFile::Brownout {
                return self.err(
                    &key.join("factor"),
                    "factor applies to kind = \"brownout\" only",
                );
            }
            if o.rate.is_some() && o.kind != OutageKindFile::Spike {
                return self.err(&key.join("rate"), "rate applies to kind = \"spike\" only");
            }
            if o.p.is_some() && o.kind != OutageKindFile::Errors {
                return self.err(&key.join("p"), "p applies to kind = \"errors\" only");
            }
            let kind = match o.kind {
                OutageKindFile::Spike => {
                    let Some(rate) = o.rate else {
                        return self.err(&key, "a spike needs `rate`, the extra requests per second, e.g. rate = 2000.0");
                    };
                    let ok = rate.is_finite() && rate > 0.0 && rate <= MAX_RATE;
                    self.ensure(ok, &key.join("rate"), || {
                        format!("rate must be positive and at most {MAX_RATE}, got {rate}")
                    })?;
                    OutageKind::Spike { rate }
                }
                OutageKindFile::Errors => {
                    let Some(p) = o.p else {
                        return self.err(&key, "an errors trigger needs `p`, the probability that an attempt fails, e.g. p = 0.1");
                    };
                    OutageKind::Errors {
                        p: self.fraction(p, &key.join("p"), "p", false)?,
                    }
                }
                OutageKindFile::Reset => OutageKind::Reset,
                OutageKindFile::Blackhole => OutageKind::Blackhole,
                OutageKindFile::Unavailable => {
                    if let Some(ra) = o.retry_after {
                        self.whole_seconds(ra.0, &key.join("retry_after"))?;
                    }
                    OutageKind::Unavailable {
                        retry_after: o.retry_after.map(|d| d.0),
                    }
                }
                OutageKindFile::Brownout => {
                    let Some(f) = o.factor else {
                        return self.err(&key, "a brownout needs `factor`, the remaining capacity in (0, 1], e.g. factor = 0.3");
                    };
                    OutageKind::Brownout {
                        factor: self.fraction(f, &key.join("factor"), "factor", true)?,
                    }
                }
            };
            let given = [o.replicas.is_some(), o.share.is_some(), o.zone.is_some()];
            if given.iter().filter(|&&g| g).count() > 1 {
                return self.err(
                    &key.join(if o.zone.is_some() { "zone" } else { "share" }),
                    "give the replicas an outage hits by `replicas`, by `share` or by `zone`, \
                     only one",
                );
            }
            let targets = match (&o.replicas, o.share) {
                (None, None) if o.zone.is_some() => {
                    let z = o.zone.as_deref().unwrap_or_default();
                    let ZonesOf {
                        whose,
                        table,
                        zones,
                    } = &zones[i];
                    let Some(index) = zones.iter().position(|n| n == z) else {
                        return self.err(
                            &key.join("zone"),
                            if zones.is_empty() {
                                format!("zone {z:?}: {whose} has no zones; list them in {table} zones = [...]")
                            } else {
                                format!("no replica is in zone {z:?}: {whose}'s zones are {}", zones.iter().map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", "))
                            },
                        );
                    };
                    Targets::Zone {
                        index,
                        zones: zones.len(),
                    }
                }
                (None, None) => Targets::All,
                (Some(_), Some(_)) => unreachable!("refused above"),
                (Some(list), None) => {
                    self.ensure(!list.is_empty(), &key.join("replicas"), || {
                        "replicas lists the replicas the outage hits, at least one, e.g. [0]".into()
                    })?;
                    Targets::List(list.clone())
                }
                (None, Some(share)) => {
                    Targets::Share(self.fraction(share, &key.join("share"), "share", true)?)
                }
            };
            if targets != Targets::All && matches!(kind, OutageKind::Spike { .. }) {
                return self.err(
                    &key.join(if o.share.is_some() {
                        "share"
                    } else if o.zone.is_some() {
                        "zone"
                    } else {
                        "replicas"
                    }),
                    "a load spike adds load to the whole service: it cannot aim at replicas",
                );
            }
            out.push(Outage {
                kind,
                start: SimTime(start.0),
                end: SimTime(end.0),
                targets,
                tier: 0,
            });
        }
        Ok(out)
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
        Ok(MetricsConfig {
            bucket,
            baseline,
            smoothing,
            recovery_fraction,
        })
    }
}
