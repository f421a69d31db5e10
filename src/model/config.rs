//! The validated description of a world: what `scenario` produces and `sim` runs.

use crate::engine::{SimDuration, SimTime};
use crate::model::Dist;

/// How logical requests are generated.
#[derive(Clone, Debug)]
pub enum Load {
    /// A fixed population: each client issues a request, retries it until it
    /// succeeds or gives up, thinks, then issues the next.
    Closed {
        /// Number of clients (default 1000).
        clients: u32,
        /// Pause between the end of one request and the start of the next.
        think: Dist,
    },
    /// Poisson arrivals at a fixed total rate, whatever happened to earlier ones.
    Open {
        /// Logical requests per second.
        rate_per_s: f64,
    },
    /// Each client makes one logical request at t = 0 and stops when it ends (the
    /// AWS experiment's workload).
    OneShot {
        /// Number of clients.
        clients: u32,
    },
}

/// Which kind of server the clients talk to.
// A world holds one: the size of the capacity variant (a fleet's options
// included) costs nothing, and a box would only add a pointer to follow.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum ServerModel {
    /// Workers, a bounded queue and service times: the outage scenarios.
    Capacity(ServerConfig),
    /// One record under optimistic concurrency control, answering instantly and
    /// without a capacity limit: the AWS "Exponential Backoff and Jitter" model
    /// (REFERENCE.md section 3). An attempt is a read of the record's version and
    /// a conditional write carrying it; the write fails with 409 if another
    /// client's write came first.
    Occ,
}

impl ServerModel {
    /// Completions per second at full capacity; `None` for a server without a
    /// capacity limit.
    pub fn capacity_per_s(&self) -> Option<f64> {
        match self {
            ServerModel::Capacity(c) => Some(c.capacity_per_s()),
            ServerModel::Occ => None,
        }
    }

    /// The crash limit on requests held (queued plus in service), if the
    /// server can crash.
    pub fn crash_limit(&self) -> Option<u32> {
        match self {
            ServerModel::Capacity(c) => c.overload.crash_at,
            ServerModel::Occ => None,
        }
    }

    /// The mean service time, ns (0 for an instant server).
    pub fn mean_service_nanos(&self) -> f64 {
        match self {
            ServerModel::Capacity(c) => c.service.mean_nanos(),
            ServerModel::Occ => 0.0,
        }
    }
}

/// The capacity-limited server.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Requests in service at once.
    pub workers: u32,
    /// Places in the FIFO queue behind the workers; a request that finds it full is
    /// answered 503 at once.
    pub queue_capacity: u32,
    /// Service time of one request at full capacity.
    pub service: Dist,
    /// Which waiting request a free worker takes (default FIFO).
    pub discipline: Discipline,
    /// Drop, unserved, a queued request whose client has stopped waiting (its
    /// timeout or deadline has passed, as a propagated deadline tells the server).
    pub drop_expired: bool,
    /// Load shedding: answer 429 at once when this many requests already wait.
    pub shed: Option<Shedding>,
    /// CoDel on the queue (none by default).
    pub codel: Option<Codel>,
    /// An adaptive concurrency limit in front of the queue (none by default).
    pub limiter: Option<LimiterConfig>,
    /// How the server behaves under overload (all off by default).
    pub overload: Overload,
    /// Replicas of this server behind one balancer, each with the workers,
    /// queue and overload behaviour above and a state of its own (default 1:
    /// one server).
    pub replicas: u32,
    /// How an attempt picks a replica (default round robin).
    pub balancer: crate::model::balancer::Balancer,
    /// Zones, retries to another replica, ejection, health checks and
    /// autoscaling (all off by default).
    pub fleet: crate::model::fleet::FleetOptions,
    /// Replicas whose service time is their own, not `service`: (replica,
    /// its service time), each replica once.
    pub replica_service: Vec<(usize, Dist)>,
}

impl ServerConfig {
    /// Replica slots a run keeps: the autoscaler's maximum, else `replicas`.
    pub fn slots(&self) -> usize {
        let n = self.replicas.max(1);
        self.fleet.autoscale.map_or(n, |a| a.max.max(n)) as usize
    }

    /// The service time of replica `r`.
    pub fn service_of(&self, r: usize) -> &Dist {
        self.replica_service
            .iter()
            .find(|(k, _)| *k == r)
            .map_or(&self.service, |(_, d)| d)
    }
}

/// Server behaviours under overload, each off by default (the book's chapter
/// docs/src/overload.md says where each comes from).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Overload {
    /// Crash when an arrival would make the requests held (queued plus in
    /// service) exceed this: everything held fails with a reset, connections are
    /// refused for `restart`, and the server comes back empty.
    pub crash_at: Option<u32>,
    /// Down time after a crash (default 10 s).
    pub restart: SimDuration,
    /// Capacity right after a restart (a crash or a `reset` outage), as a
    /// fraction of full capacity; 1 for none.
    pub cold_capacity: f64,
    /// Time over which capacity returns linearly from `cold_capacity` to full.
    pub warmup: SimDuration,
    /// Worker time spent refusing one request (a 503 for a full queue, a 429 from
    /// shedding); `None`: refusing is free.
    pub reject_cost: Option<SimDuration>,
    /// Contention (alpha of the Universal Scalability Law): with `n` requests
    /// held, a service takes `1 + alpha (n - 1) + beta n (n - 1)` times longer.
    pub contention: f64,
    /// Coherency (beta of the Universal Scalability Law), see `contention`.
    pub coherency: f64,
}

impl Default for Overload {
    fn default() -> Self {
        Overload {
            crash_at: None,
            restart: SimDuration::from_secs(10),
            cold_capacity: 1.0,
            warmup: SimDuration::ZERO,
            reject_cost: None,
            contention: 0.0,
            coherency: 0.0,
        }
    }
}

impl Overload {
    /// How many times longer a service takes with `held` requests in the server
    /// (the one starting included): the Universal Scalability Law's
    /// `1 + alpha (n - 1) + beta n (n - 1)`.
    pub fn slowdown(&self, held: usize) -> f64 {
        let n = held.max(1) as f64;
        1.0 + self.contention * (n - 1.0) + self.coherency * n * (n - 1.0)
    }

    /// Share of full capacity at `now` after a restart at `since`.
    pub fn warmth(&self, since: Option<SimTime>, now: SimTime) -> f64 {
        match since {
            Some(t0) if self.cold_capacity < 1.0 => {
                let done = if self.warmup.0 == 0 {
                    1.0
                } else {
                    ((now.0.saturating_sub(t0.0)) as f64 / self.warmup.0 as f64).min(1.0)
                };
                self.cold_capacity + (1.0 - self.cold_capacity) * done
            }
            _ => 1.0,
        }
    }
}

/// Queue discipline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Discipline {
    /// Oldest first.
    Fifo,
    /// Newest first: under overload the requests served are the ones whose
    /// clients are still waiting (REFERENCE.md section 5).
    Lifo,
    /// Oldest first, but newest first once the queue has not been empty
    /// for `after` (Facebook's adaptive LIFO, "Fail at Scale", ACM Queue
    /// 2015), until it empties.
    AdaptiveLifo {
        /// How long the queue must have stayed non-empty.
        after: SimDuration,
    },
}

/// CoDel on the server's queue (RFC 8289): a request taken from the queue
/// after its sojourn has stayed at or above `target` for `interval` is
/// dropped (answered 503), and then one each `interval / sqrt(count)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Codel {
    /// The sojourn CoDel aims for (RFC 8289: 5 ms).
    pub target: SimDuration,
    /// How long the sojourn may stay above target (RFC 8289: 100 ms).
    pub interval: SimDuration,
}

/// An adaptive concurrency limit in front of the server's queue: a request
/// that finds the limit reached is answered 503 at once.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LimiterConfig {
    /// Envoy's adaptive concurrency filter (gradient controller).
    Gradient(EnvoyGradient),
    /// Netflix concurrency-limits' `VegasLimit`.
    Vegas(Vegas),
    /// Netflix concurrency-limits' `Gradient2Limit`.
    Gradient2(Gradient2),
    /// Netflix concurrency-limits' `AIMDLimit`.
    Aimd(Aimd),
}

/// Envoy's gradient controller; defaults as `gradient_controller.cc` sets
/// them, the two intervals (which Envoy requires) as its documentation's
/// example.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EnvoyGradient {
    /// `concurrency_update_interval` (the example's 100 ms).
    pub update_interval: SimDuration,
    /// `sample_aggregate_percentile`, as a fraction (0.5).
    pub percentile: f64,
    /// `min_rtt_calc_params.interval` (the example's 60 s).
    pub min_rtt_interval: SimDuration,
    /// `min_rtt_calc_params.request_count` (50).
    pub request_count: u32,
    /// `min_rtt_calc_params.jitter`, as a fraction (0.15).
    pub jitter: f64,
    /// `min_rtt_calc_params.min_concurrency` (3): the limit while the
    /// minimum RTT is measured, and its floor.
    pub min_concurrency: u32,
    /// `min_rtt_calc_params.buffer`, as a fraction (0.25).
    pub buffer: f64,
    /// `max_concurrency_limit` (1000).
    pub max_limit: u32,
}

impl Default for EnvoyGradient {
    fn default() -> Self {
        EnvoyGradient {
            update_interval: SimDuration::from_millis(100),
            percentile: 0.5,
            min_rtt_interval: SimDuration::from_secs(60),
            request_count: 50,
            jitter: 0.15,
            min_concurrency: 3,
            buffer: 0.25,
            max_limit: 1000,
        }
    }
}

/// Netflix's `VegasLimit` (defaults as its builder's).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Vegas {
    /// `initialLimit` (20).
    pub initial: u32,
    /// `maxConcurrency` (1000).
    pub max: u32,
    /// `smoothing` (1.0).
    pub smoothing: f64,
    /// `probeMultiplier` (30).
    pub probe_multiplier: u32,
}

impl Default for Vegas {
    fn default() -> Self {
        Vegas {
            initial: 20,
            max: 1000,
            smoothing: 1.0,
            probe_multiplier: 30,
        }
    }
}

/// Netflix's `Gradient2Limit` (defaults as its builder's).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gradient2 {
    /// `initialLimit` (20).
    pub initial: u32,
    /// `minLimit` (20).
    pub min: u32,
    /// `maxConcurrency` (200).
    pub max: u32,
    /// `smoothing` (0.2).
    pub smoothing: f64,
    /// `queueSize` (4).
    pub queue_size: u32,
    /// `longWindow`, samples (600).
    pub long_window: u32,
}

impl Default for Gradient2 {
    fn default() -> Self {
        Gradient2 {
            initial: 20,
            min: 20,
            max: 200,
            smoothing: 0.2,
            queue_size: 4,
            long_window: 600,
        }
    }
}

/// Netflix's `AIMDLimit` (defaults as its builder's).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aimd {
    /// `initialLimit` (10).
    pub initial: u32,
    /// `backoffRatio` (0.9), in [0.5, 1).
    pub backoff_ratio: f64,
    /// `timeout`: a slower sample counts as a drop (5 s).
    pub timeout: SimDuration,
}

impl Default for Aimd {
    fn default() -> Self {
        Aimd {
            initial: 10,
            backoff_ratio: 0.9,
            timeout: SimDuration::from_secs(5),
        }
    }
}

/// Load shedding settings (REFERENCE.md section 5).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shedding {
    /// Queue length at which arrivals are shed.
    pub at: u32,
    /// Retry-After of each 429.
    pub retry_after: Option<SimDuration>,
}

impl ServerConfig {
    /// Completions per second at full capacity, the whole fleet's: replicas
    /// times workers over the mean service time.
    pub fn capacity_per_s(&self) -> f64 {
        if self.replica_service.is_empty() {
            return f64::from(self.replicas.max(1)) * f64::from(self.workers) * 1e9
                / self.service.mean_nanos();
        }
        let per_replica = |d: &Dist| f64::from(self.workers) * 1e9 / d.mean_nanos();
        (0..self.replicas.max(1) as usize)
            .map(|r| per_replica(self.service_of(r)))
            .sum()
    }
}

/// What goes wrong during an outage.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OutageKind {
    /// The server crashes: every request in service or queued fails with a
    /// connection reset at the start; new connections are refused until the end.
    Reset,
    /// Every request is answered 503 at once, with this Retry-After if any.
    /// Requests queued or in service at the start are answered 503 too.
    Unavailable {
        /// The Retry-After header of each 503.
        retry_after: Option<SimDuration>,
    },
    /// Requests are accepted and never answered; those in the server at the start
    /// are lost too. Clients learn of it only by timing out.
    Blackhole,
    /// Service rate is multiplied by `factor` (service times divided by it) for
    /// services that start during the window. Nothing is flushed.
    Brownout {
        /// Remaining capacity, in (0, 1].
        factor: f64,
    },
    /// A load spike: extra logical requests arrive as a Poisson process at
    /// `rate` per second during the window, on top of the usual load; each is
    /// its own client (open loop) and retries like the others.
    Spike {
        /// Extra arrivals per second.
        rate: f64,
    },
    /// Transient failures: each attempt that reaches the server during the
    /// window is answered 503 at once with probability `p`, independently.
    Errors {
        /// Probability that an attempt fails.
        p: f64,
    },
    /// The look-aside cache is lost: emptied at the start, down (every
    /// lookup misses, nothing is filled) until the end, then back empty.
    CacheFlush,
}

impl OutageKind {
    /// The scenario-file name.
    pub fn name(&self) -> &'static str {
        match self {
            OutageKind::Reset => "reset",
            OutageKind::Unavailable { .. } => "503",
            OutageKind::Blackhole => "blackhole",
            OutageKind::Brownout { .. } => "brownout",
            OutageKind::Spike { .. } => "spike",
            OutageKind::Errors { .. } => "errors",
            OutageKind::CacheFlush => "cache-flush",
        }
    }
}

/// One outage window, `[start, end)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Outage {
    /// What happens.
    pub kind: OutageKind,
    /// First instant of the window.
    pub start: SimTime,
    /// First instant after it; the server is back, empty and at full capacity.
    pub end: SimTime,
    /// Which replicas of a fleet it hits (default: all, the whole service).
    pub targets: Targets,
    /// In a call chain, the tier it hits (0: the server).
    pub tier: usize,
}

/// Which replicas of a fleet an outage hits.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum Targets {
    /// Every replica: the whole service.
    #[default]
    All,
    /// These replicas (indices from 0).
    List(Vec<u32>),
    /// The first `ceil(share * replicas)` replicas, at least one.
    Share(f64),
    /// The replicas of zone `index` of `zones` (replica `i` is in zone
    /// `i % zones`).
    Zone {
        /// The zone, from 0.
        index: usize,
        /// Zones in all.
        zones: usize,
    },
}

impl Targets {
    /// The replica indices hit, of a fleet of `n`, in order.
    pub fn replicas(&self, n: usize) -> Vec<usize> {
        match self {
            Targets::All => (0..n).collect(),
            Targets::List(list) => list
                .iter()
                .map(|&r| r as usize)
                .filter(|&r| r < n)
                .collect(),
            Targets::Share(share) => {
                let k = ((share * n as f64).ceil() as usize).clamp(1, n);
                (0..k).collect()
            }
            Targets::Zone { index, zones } => {
                (0..n).filter(|r| r % (*zones).max(1) == *index).collect()
            }
        }
    }
}

/// Everything about the world that does not depend on the retry strategy.
#[derive(Clone, Debug)]
pub struct WorldConfig {
    /// Simulated length of a run.
    pub duration: SimDuration,
    /// The load model.
    pub load: Load,
    /// Fraction of logical requests that are permanently bad (always answered 400).
    pub bad_fraction: f64,
    /// One-way latency of each network hop.
    pub network: Dist,
    /// The server.
    pub server: ServerModel,
    /// Outage windows, sorted by start, not overlapping.
    pub outages: Vec<Outage>,
    /// The services below the server and who calls whom, if any.
    pub chain: Option<Box<crate::model::chain::ChainConfig>>,
    /// How the users are split behind proxies (one, shared by all, unless
    /// the scenario says otherwise).
    pub proxies: Proxies,
    /// A look-aside cache the users ask first, if any.
    pub cache: Option<crate::model::cache::CacheConfig>,
}

/// The users split into groups, each behind a proxy of its own (a sidecar,
/// a gRPC channel): each proxy keeps its own retry budget, breaker and
/// throttle (unless a strategy shares them) and, with `own_view`, its own
/// balancer and outlier detection in front of a fleet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proxies {
    /// How many: closed-loop and one-shot client `c` is behind proxy
    /// `c % count`, open-loop request `n` (and a spike's) behind `n % count`.
    pub count: u16,
    /// Each proxy balances and ejects by the answers it saw itself (as each
    /// Envoy sidecar does); otherwise one view is shared by all.
    pub own_view: bool,
}

impl Default for Proxies {
    fn default() -> Self {
        Proxies {
            count: 1,
            own_view: true,
        }
    }
}

impl Proxies {
    /// Whether there is more than one.
    pub fn many(&self) -> bool {
        self.count > 1
    }

    /// The proxy of client or request number `n`.
    #[inline(always)]
    pub fn of(&self, n: u64) -> u16 {
        // One proxy, as most worlds have, needs no division.
        if self.count <= 1 {
            return 0;
        }
        (n % u64::from(self.count)) as u16
    }
}

impl WorldConfig {
    /// Requests per second the world serves at most, when nothing fails:
    /// the server's capacity, or a call chain's at its tightest tier
    /// (`None`: no capacity limit).
    pub fn capacity_per_s(&self) -> Option<f64> {
        match (&self.chain, &self.server) {
            (Some(chain), ServerModel::Capacity(tier0)) => {
                Some(chain.capacity_per_s(tier0, self.network.mean_nanos()))
            }
            _ => self.server.capacity_per_s(),
        }
    }

    /// The `[start, end)` windows of the triggers (the outages), in order.
    pub fn trigger_windows(&self) -> Vec<(SimTime, SimTime)> {
        self.outages.iter().map(|o| (o.start, o.end)).collect()
    }

    /// Logical requests per second the load offers when every request is
    /// answered in the time of one round trip and one service: the rate a
    /// run's cost and its stall check scale with.
    pub fn nominal_requests_per_s(&self) -> f64 {
        match &self.load {
            Load::Open { rate_per_s } => *rate_per_s,
            Load::Closed { clients, think } => {
                let cycle = think.mean_nanos()
                    + 2.0 * self.network.mean_nanos()
                    + self.server.mean_service_nanos();
                f64::from(*clients) * 1e9 / cycle.max(1.0)
            }
            Load::OneShot { clients } => {
                f64::from(*clients) / self.duration.as_secs_f64().max(1e-9)
            }
        }
    }

    /// The most logical requests per second the load offers at any time: the
    /// nominal rate plus the largest load spike's extra rate. The rate the
    /// stall check allows for.
    pub fn peak_requests_per_s(&self) -> f64 {
        let spike = self
            .outages
            .iter()
            .filter_map(|o| match o.kind {
                OutageKind::Spike { rate } => Some(rate),
                _ => None,
            })
            .fold(0.0, f64::max);
        self.nominal_requests_per_s() + spike
    }

    /// Logical requests a run starts, as the load offers them: the nominal
    /// rate over the run plus every load spike's extra requests. What a run's
    /// cost scales with.
    pub fn expected_requests(&self) -> f64 {
        let end = SimTime::ZERO + self.duration;
        let spikes: f64 = self
            .outages
            .iter()
            .filter_map(|o| match o.kind {
                OutageKind::Spike { rate } => {
                    let (from, to) = (o.start.min(end), o.end.min(end));
                    Some(rate * (to - from).as_secs_f64())
                }
                _ => None,
            })
            .sum();
        self.nominal_requests_per_s() * self.duration.as_secs_f64() + spikes
    }

    /// The same world without its triggers: what "normal" is for recovery.
    pub fn without_triggers(&self) -> WorldConfig {
        WorldConfig {
            outages: Vec::new(),
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// An open load of 100/s for 10 s with a spike of `spike` extra requests a
    /// second from 4 s to 6 s.
    fn world(spike: &str) -> super::WorldConfig {
        let text = format!(
            "name = \"w\"\nduration = \"10s\"\n[clients]\nmodel = \"open\"\nrate = 100\n\
             [network]\nlatency = {{ dist = \"constant\", value = \"1ms\" }}\n[server]\nworkers = 1\nqueue = 10\nservice = {{ dist = \"constant\", value = \"1ms\" }}\n\
             [[outage]]\nkind = \"spike\"\nrate = {spike}\nstart = \"4s\"\nend = \"6s\"\n\
             [[outage]]\nkind = \"reset\"\nstart = \"8s\"\nend = \"9s\"\n\
             [metrics]\nbaseline = \"2s\"\n[[strategy]]\nname = \"none\"\nbackoff = \"none\"\n"
        );
        crate::scenario::parse(&text, Path::new("w.toml"))
            .unwrap()
            .world
    }

    #[test]
    fn an_outage_hits_all_replicas_a_list_or_a_share() {
        use super::Targets;
        assert_eq!(Targets::All.replicas(3), [0, 1, 2]);
        assert_eq!(Targets::List(vec![2, 0]).replicas(4), [2, 0]);
        // A quarter of 10 is 2.5: three replicas; any share hits at least one.
        assert_eq!(Targets::Share(0.25).replicas(10), [0, 1, 2]);
        assert_eq!(Targets::Share(0.01).replicas(10), [0]);
        assert_eq!(Targets::Share(1.0).replicas(2), [0, 1]);
    }

    #[test]
    fn a_load_spike_counts_in_the_peak_rate_and_the_expected_requests() {
        let w = world("1000000");
        assert_eq!(w.nominal_requests_per_s(), 100.0);
        assert_eq!(w.peak_requests_per_s(), 1_000_100.0);
        assert_eq!(w.expected_requests(), 100.0 * 10.0 + 1e6 * 2.0);
        // No spike: the nominal rate throughout.
        let mut calm = w.clone();
        calm.outages.remove(0);
        assert_eq!(calm.peak_requests_per_s(), 100.0);
        assert_eq!(calm.expected_requests(), 1000.0);
        // A spike past the end of the run counts only while the run lasts.
        let mut late = w.clone();
        late.duration = crate::engine::SimDuration::from_secs(5);
        assert_eq!(late.expected_requests(), 100.0 * 5.0 + 1e6);
    }
}
