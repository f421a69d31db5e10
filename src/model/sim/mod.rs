//! The run loop: pops events in time order and hands each to its handler. One run
//! is one strategy on one world; it is single-threaded and deterministic.
//!
//! `Sim` holds the world's state; its handlers are split by side: `attempts`
//! and `hedge` (the one path of every attempt, whoever sends it: `callers`),
//! `clients` (the users' requests), `server` (admission, service, outages),
//! `fleet` (replicas, health, autoscaling) and `chain` (the tiers below the
//! server and their calls).

mod attempts;
mod cache;
mod callers;
mod chain;
mod clients;
mod fleet;
mod guard;
mod hedge;
mod pool;
mod prefix;
mod server;
mod state;
mod walk;

use crate::metrics::tiers::TierRun;
use chain::ChainCalls;
use clients::Users;
pub(super) use fleet::Fleet;
use guard::CHECK_EVERY;
pub use guard::{Abort, MAX_PENDING};
pub use prefix::run_sharing_start;
use state::ServerState;
pub use walk::{Walk, Walker, Watched};

use rand_distr::{Distribution, Exp};

use crate::engine::queue::WHEEL_ABOVE;
use crate::engine::{Draws, EventQueue, Purpose, SimDuration, SimTime, addr};
use crate::metrics::proxies::ProxyTotals;
use crate::metrics::replicas::{ReplicaBucket, ReplicaRecorder};
use crate::metrics::{Histogram, Recorder, Series, Totals};
use crate::model::client::Slots;
use crate::model::event::{Event, Kind};
use crate::model::server::{Finished, Job};
use crate::model::{Load, NoObserver, Observer, ServerModel, WorldConfig};
use crate::retry::Strategy;

/// Simulated nanoseconds advanced by every run in this process, summed: read by
/// a progress display, never by a run (it cannot change results).
pub static SIMULATED_NS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Everything a run measured.
#[derive(Clone, Debug)]
pub struct RunResult {
    /// Time buckets, in order.
    pub buckets: Series,
    /// Latency of successful logical requests.
    pub latency: Histogram,
    /// Totals.
    pub totals: Totals,
    /// Logical requests still in progress at the end, counted from client state.
    pub in_flight_at_end: u64,
    /// The most events pending in the queue at any bucket boundary: what the
    /// queue's memory follows. It depends on the clients, not on the run's length.
    pub peak_pending: usize,
    /// Why the run was stopped before its end, if it was: a world that makes no
    /// progress, or holds more than a run may.
    pub aborted: Option<Abort>,
    /// A fleet's per-replica series (`replicas x buckets`, replica by
    /// replica); `None` for one server.
    pub replicas: Option<Vec<ReplicaBucket>>,
    /// A fleet's departures from each replica over the run; `None` for one
    /// server.
    pub replica_departures: Option<Vec<crate::metrics::replicas::Departures>>,
    /// Each tier's figures in a call chain, tier 0 first; `None` without one.
    pub tiers: Option<Vec<TierRun>>,
    /// Each proxy's counts, when the users are behind several; `None`
    /// otherwise.
    pub proxies: Option<Vec<ProxyTotals>>,
    /// What the server's own defences did (its concurrency limit, CoDel),
    /// bucket by bucket; `None` when it has neither.
    pub defences: Option<Vec<crate::metrics::defences::DefenceBucket>>,
    /// What the look-aside cache did, bucket by bucket; `None` without one.
    pub cache: Option<Vec<crate::metrics::cache::CacheBucket>>,
}

/// Request slots above which the run loop prefetches the next event's
/// request: 4096 requests of about 100 bytes, a core's L2 cache.
const PREFETCH_ABOVE: usize = 4096;

/// How many events ahead the run loop asks for an event's request.
const PREFETCH_DEPTH: usize = 8;

/// Runs `strategy` on `world` with `seed`, recording in buckets of `bucket`.
pub fn run(world: &WorldConfig, strategy: &Strategy, seed: u64, bucket: SimDuration) -> RunResult {
    run_observed(world, strategy, seed, bucket, &mut NoObserver)
}

/// [`run`], and the run's twin (the same world without its triggers, the
/// same strategy and seed), or None when the world has no trigger or the run
/// stopped early. Until the first trigger the two are the same run, event for
/// event: the twin is forked from the run there instead of simulated from the
/// start. The result is what [`run`] on `world.without_triggers()` gives:
/// the fork keeps the events' order (a marker pushed before every other event
/// stops the run before anything at the trigger's time), and the trigger's
/// events are taken out of the twin's queue.
pub fn run_with_twin(
    world: &WorldConfig,
    strategy: &Strategy,
    seed: u64,
    bucket: SimDuration,
) -> (RunResult, Option<RunResult>) {
    run_with_twin_then(world, strategy, seed, bucket, |simulate| simulate())
}

/// [`run_with_twin`], where the twin, forked where the first trigger
/// begins, is simulated only if `twin` asks for it once the run has ended:
/// `twin` is given the means to simulate it (called again, it returns the
/// same twin) and returns what stands for the twin, perhaps a twin found
/// elsewhere in the meantime. It is not called when the world has no
/// trigger or the run stopped early.
pub fn run_with_twin_then<T>(
    world: &WorldConfig,
    strategy: &Strategy,
    seed: u64,
    bucket: SimDuration,
    twin: impl FnOnce(&mut dyn FnMut() -> RunResult) -> T,
) -> (RunResult, Option<T>) {
    if wheel_pays(world) {
        with_twin::<true, T>(world, strategy, seed, bucket, twin)
    } else {
        with_twin::<false, T>(world, strategy, seed, bucket, twin)
    }
}

fn with_twin<const WHEEL: bool, T>(
    world: &WorldConfig,
    strategy: &Strategy,
    seed: u64,
    bucket: SimDuration,
    then: impl FnOnce(&mut dyn FnMut() -> RunResult) -> T,
) -> (RunResult, Option<T>) {
    let end = SimTime::ZERO + world.duration;
    let Some(fork_at) = world
        .outages
        .iter()
        .map(|o| o.start)
        .min()
        .filter(|&t| t < end)
    else {
        let r = run(world, strategy, seed, bucket);
        return (r, None);
    };
    let calm = world.without_triggers();
    let (mut obs, mut twin_obs) = (NoObserver, NoObserver);
    let mut sim = Sim::<NoObserver, WHEEL>::new(world, strategy, seed, bucket, &mut obs);
    // The marker first, so that it precedes every event due at `fork_at`.
    sim.queue.push(fork_at, Event::new(Kind::Fork, 0, 0));
    sim.schedule_start();
    let mut state = LoopState::new(sim.queue.len(), bucket);
    if let Some(aborted) = sim.run_until(bucket, fork_at, &mut state) {
        return (sim.finish(state.peak_pending, Some(aborted)), None);
    }
    let mut twin = sim.fork(&calm, &mut twin_obs);
    twin.queue
        .retain(|e| !matches!(e.kind(), Kind::OutageStart | Kind::OutageEnd));
    twin.outage_targets.clear();
    let mut twin_state = state;
    let aborted = sim.run_to_end(bucket, &mut state);
    let main = sim.finish(state.peak_pending, aborted);
    // A run that had to stop is reported as such; its twin would not help.
    if main.aborted.is_some() {
        return (main, None);
    }
    let mut twin = Some(twin);
    let mut done: Option<RunResult> = None;
    let mut simulate = || {
        if let Some(mut twin) = twin.take() {
            let aborted = twin.run_to_end(bucket, &mut twin_state);
            done = Some(twin.finish(twin_state.peak_pending, aborted));
        }
        done.clone().expect("the twin has been simulated")
    };
    let t = then(&mut simulate);
    (main, Some(t))
}

/// Whether a run of `world` is faster with the wheel as the event queue's
/// far lane: a client keeps at most one far event in the queue (its next
/// request or its next retry), so it pays with enough clients.
fn wheel_pays(world: &WorldConfig) -> bool {
    let far_events = match &world.load {
        Load::Closed { clients, .. } | Load::OneShot { clients } => *clients as usize,
        Load::Open { .. } => 0,
    };
    far_events > WHEEL_ABOVE
}

/// [`run`], reporting client-side events to `observer`.
pub fn run_observed<O: Observer>(
    world: &WorldConfig,
    strategy: &Strategy,
    seed: u64,
    bucket: SimDuration,
    observer: &mut O,
) -> RunResult {
    if wheel_pays(world) {
        Sim::<O, true>::new(world, strategy, seed, bucket, observer).run(bucket)
    } else {
        Sim::<O, false>::new(world, strategy, seed, bucket, observer).run(bucket)
    }
}

/// The run loop's own state: kept across the pause where a run's twin is
/// forked from it.
#[derive(Clone, Copy, Debug)]
struct LoopState {
    /// The most events pending at a bucket's boundary so far.
    peak_pending: usize,
    /// When to look at the pending events next, and when it was last done.
    next_look: SimTime,
    last_look: SimTime,
    /// The stall and memory check's own state.
    watch: guard::Watch,
}

impl LoopState {
    fn new(pending: usize, bucket: SimDuration) -> Self {
        LoopState {
            peak_pending: pending,
            next_look: SimTime::ZERO + bucket,
            last_look: SimTime::ZERO,
            watch: guard::Watch::default(),
        }
    }
}

/// `WHEEL`: the event queue's far lane is a wheel (see [`EventQueue`]).
pub(super) struct Sim<'a, O: Observer, const WHEEL: bool> {
    pub(super) world: &'a WorldConfig,
    pub(super) strategy: &'a Strategy,
    pub(super) queue: EventQueue<Event, WHEEL>,
    /// The run's random numbers, each drawn at the address of what it is for.
    pub(super) draws: Draws,
    pub(super) slots: Slots,
    pub(super) server: ServerState,
    pub(super) rec: Recorder,
    pub(super) obs: &'a mut O,
    pub(super) now: SimTime,
    /// Open loop: inter-arrival sampler.
    pub(super) arrivals: Option<Exp<f64>>,
    /// Reused buffer for jobs flushed by an outage.
    pub(super) flushed: Vec<Finished>,
    /// The strategy's retry budget, breaker and throttle that all users
    /// share (every one, with one proxy).
    pub(super) guards: callers::Guards,
    /// Reused buffer for queued jobs dropped because their clients gave up.
    pub(super) dropped: Vec<Job>,
    /// Logical requests waiting out a backoff (the backlog's client side).
    pub(super) backing_off: u64,
    /// Each replica's series, for a fleet of more than one.
    pub(super) per_replica: Option<ReplicaRecorder>,
    /// The server's defences' record, when it has a limiter or CoDel.
    pub(super) defences: Option<Box<crate::metrics::defences::DefenceRecorder>>,
    /// The users' look-aside cache and its record, if any.
    cache: Option<Box<cache::CacheRun>>,
    /// The replicas each outage hits, in outage order.
    pub(super) outage_targets: Vec<Vec<usize>>,
    /// The tiers below the server and their calls, if the world has any.
    pub(super) chain: Option<Box<chain::ChainRun>>,
    /// The copies out of each user's request, if the strategy hedges.
    pub(super) copies: hedge::CopyBook,
    /// Whether an answer is handled where it is sent ([`Sim::in_place`]).
    pub(super) in_place: bool,
    /// Each proxy's own, when there are several and not all are shared.
    pub(super) proxy_guards: Vec<callers::Guards>,
    /// How many of the users' breakers are open.
    pub(super) breakers_open: u64,
    /// Each proxy's counts, when there are several or they have pool
    /// limits.
    pub(super) per_proxy: Vec<ProxyTotals>,
    /// Each proxy's connection pool, when the strategy limits them.
    pub(super) pools: Vec<crate::retry::Pool>,
}

impl<'a, O: Observer, const WHEEL: bool> Sim<'a, O, WHEEL> {
    fn new(
        world: &'a WorldConfig,
        strategy: &'a Strategy,
        seed: u64,
        bucket: SimDuration,
        obs: &'a mut O,
    ) -> Self {
        let (clients, arrivals) = match &world.load {
            Load::Closed { clients, .. } | Load::OneShot { clients } => (*clients, None),
            Load::Open { rate_per_s } => (0, Exp::new(rate_per_s / 1e9).ok()),
        };
        let views = if world.proxies.own_view {
            usize::from(world.proxies.count)
        } else {
            1
        };
        let mut server = ServerState::new(&world.server, views, Draws::new(seed));
        let defences = server.defences(&world.server, world.duration, bucket);
        let (guards, proxy_guards) = callers::Guards::split(strategy, world.proxies);
        Sim {
            world,
            strategy,
            // Hops and services are the frequent short events; a few of their
            // means is a horizon that keeps think times and backoffs out of
            // the busy lane (see engine::queue).
            queue: EventQueue::with_horizon(SimDuration::from_nanos_f64(
                4.0 * world
                    .network
                    .mean_nanos()
                    .max(world.server.mean_service_nanos()),
            )),
            draws: Draws::new(seed),
            slots: Slots::new(clients),
            server,
            rec: Recorder::new(world.duration, bucket),
            obs,
            now: SimTime::ZERO,
            arrivals,
            flushed: Vec::new(),
            dropped: Vec::new(),
            backing_off: 0,
            outage_targets: {
                let n = match &world.server {
                    ServerModel::Capacity(cfg) => cfg.slots(),
                    ServerModel::Occ => 1,
                };
                world
                    .outages
                    .iter()
                    .map(|o| match (o.tier, &world.chain) {
                        (0, _) | (_, None) => o.targets.replicas(n),
                        (k, Some(c)) => o.targets.replicas(c.services[k - 1].server.slots()),
                    })
                    .collect()
            },
            defences,
            cache: cache::CacheRun::new(world, bucket, Draws::new(seed)),
            per_replica: match &world.server {
                ServerModel::Capacity(cfg) if cfg.slots() > 1 => Some(
                    ReplicaRecorder::new(
                        cfg.slots(),
                        cfg.replicas as usize,
                        world.duration,
                        bucket,
                    )
                    .with_views(views as u64),
                ),
                _ => None,
            },
            chain: match (&world.chain, &world.server) {
                (Some(c), ServerModel::Capacity(tier0)) => Some(Box::new(chain::ChainRun::new(
                    c,
                    tier0,
                    &strategy.tiers,
                    world.duration,
                    bucket,
                ))),
                _ => None,
            },
            copies: hedge::CopyBook::default(),
            guards,
            proxy_guards,
            breakers_open: 0,
            per_proxy: clients::per_proxy(world, strategy),
            pools: pool::pools(world, strategy),
            in_place: O::SILENT && in_place(world, strategy),
        }
    }

    fn run(mut self, bucket: SimDuration) -> RunResult {
        self.schedule_start();
        let (peak_pending, aborted) = self.run_loop(bucket);
        self.finish(peak_pending, aborted)
    }

    /// A copy of this run's state, to go on in `world` (the same world
    /// without its triggers) as the twin, reporting to `obs`.
    fn fork<'b>(&self, world: &'b WorldConfig, obs: &'b mut O) -> Sim<'b, O, WHEEL>
    where
        'a: 'b,
    {
        self.fork_to(world, self.strategy, obs)
    }

    /// [`Sim::fork`] to go on under `strategy`, which must build the same
    /// guards, hedging and chain as this run's (see [`prefix`]).
    fn fork_to<'b>(
        &self,
        world: &'b WorldConfig,
        strategy: &'b Strategy,
        obs: &'b mut O,
    ) -> Sim<'b, O, WHEEL>
    where
        'a: 'b,
    {
        Sim {
            world,
            strategy,
            queue: self.queue.clone(),
            draws: self.draws,
            slots: self.slots.clone(),
            server: self.server.clone(),
            rec: self.rec.clone(),
            obs,
            now: self.now,
            arrivals: self.arrivals,
            flushed: self.flushed.clone(),
            guards: self.guards.clone(),
            proxy_guards: self.proxy_guards.clone(),
            breakers_open: self.breakers_open,
            per_proxy: self.per_proxy.clone(),
            pools: self.pools.clone(),
            dropped: self.dropped.clone(),
            backing_off: self.backing_off,
            per_replica: self.per_replica.clone(),
            defences: self.defences.clone(),
            cache: self.cache.clone(),
            outage_targets: self.outage_targets.clone(),
            chain: self.chain.clone(),
            copies: self.copies.clone(),
            in_place: self.in_place,
        }
    }

    /// A network hop's delay: the `purpose` draw (which hop) of the
    /// attempt at `address`.
    #[inline(always)]
    pub(super) fn hop(&self, purpose: Purpose, address: u64) -> SimDuration {
        self.world
            .network
            .sample(&mut self.draws.at(purpose, address))
    }

    /// The run's result, once its loop has ended.
    fn finish(mut self, peak_pending: usize, aborted: Option<Abort>) -> RunResult {
        let in_flight_at_end = self.slots.count_in_progress();
        let proxies = (!self.per_proxy.is_empty()).then(|| {
            for p in self.slots.in_progress_proxies() {
                self.per_proxy[usize::from(p)].in_flight_at_end += 1;
            }
            self.per_proxy
        });
        let (buckets, latency, totals) = self.rec.finish();
        let end = SimTime::ZERO + self.world.duration;
        let (replicas, replica_departures) = match self.per_replica.map(|r| r.finish(end)) {
            Some((series, departures)) => (Some(series), Some(departures)),
            None => (None, None),
        };
        RunResult {
            tiers: self.chain.map(|c| {
                // Tier 0's attempts and calls are the users' (the recorder's).
                let chain::ChainRun {
                    totals: mut t,
                    series,
                    latency: mut tier_latency,
                    ..
                } = *c;
                tier_latency[0] = latency.clone();
                t[0].attempts = totals.attempts;
                t[0].retries = totals.retries;
                t[0].calls = totals.started;
                t[0].calls_failed = totals.failed();
                t[0].rejected_locally = totals.failed_local;
                if self.strategy.hedging.is_some() {
                    // Of the users' copies, only the winner's answer counts.
                    t[0].ok = totals.succeeded;
                }
                let mut series = series;
                series[0] = buckets.iter().map(|b| b.attempts as u32).collect();
                t.into_iter()
                    .zip(series)
                    .zip(tier_latency)
                    .map(|((totals, attempts), h)| TierRun {
                        totals,
                        attempts,
                        latency_p50: h.quantile(0.5),
                        latency_p99: h.quantile(0.99),
                    })
                    .collect()
            }),
            replicas,
            replica_departures,
            proxies,
            defences: self.defences.map(|d| d.finish()),
            cache: self.cache.map(|c| c.rec.finish()),
            buckets,
            latency,
            totals,
            in_flight_at_end,
            peak_pending,
            aborted,
        }
    }

    /// First events: outages, and the load. Each closed-loop client starts after
    /// one think time, as if it had just finished a request: for exponential think
    /// times (memoryless) that is already the steady state, with no start-up burst.
    fn schedule_start(&mut self) {
        self.schedule_fleet();
        for (i, o) in self.world.outages.iter().enumerate() {
            let aux = i as u32;
            self.queue.push(
                o.start,
                Event {
                    aux,
                    ..Event::new(Kind::OutageStart, 0, 0)
                },
            );
            self.queue.push(
                o.end,
                Event {
                    aux,
                    ..Event::new(Kind::OutageEnd, 0, 0)
                },
            );
        }
        match &self.world.load {
            Load::Closed { clients, think } => {
                for c in 0..*clients {
                    let id = addr::request(addr::client(c), 0);
                    self.slots.get(c).id = id;
                    let at = think.sample(&mut self.draws.at(Purpose::Think, id));
                    self.queue
                        .push(SimTime::ZERO + at, Event::new(Kind::Begin, c, 0));
                }
            }
            Load::Open { .. } => self.schedule_arrival(0),
            Load::OneShot { clients } => {
                for c in 0..*clients {
                    self.slots.get(c).id = addr::request(addr::client(c), 0);
                    self.queue
                        .push(SimTime::ZERO, Event::new(Kind::Begin, c, 0));
                }
            }
        }
    }

    /// Runs to the end, or until it must stop ([`Abort`]); returns the most
    /// events pending at a boundary of the buckets of width `bucket` (looked at
    /// once a bucket, so it costs nothing) and why it stopped early, if it did.
    fn run_loop(&mut self, bucket: SimDuration) -> (usize, Option<Abort>) {
        let mut state = LoopState::new(self.queue.len(), bucket);
        let aborted = self.run_to_end(bucket, &mut state);
        (state.peak_pending, aborted)
    }

    /// [`Sim::run_until`] the run's end, where the clock then stands unless
    /// the run stopped early.
    fn run_to_end(&mut self, bucket: SimDuration, state: &mut LoopState) -> Option<Abort> {
        let end = SimTime::ZERO + self.world.duration;
        let aborted = self.run_until(bucket, end, state);
        if aborted.is_none() {
            self.now = end;
        }
        aborted
    }

    /// Runs the events due before `end` (the one popped at or after it is
    /// dropped: the run's end, or the fork's marker), carrying the loop's
    /// own state in `state`; why it stopped early, if it did.
    fn run_until(
        &mut self,
        bucket: SimDuration,
        end: SimTime,
        state: &mut LoopState,
    ) -> Option<Abort> {
        self.run_watched::<false>(bucket, end, state, |_, _| false)
    }

    /// [`Sim::run_until`], stopping too after the first event once which
    /// `stop` (given the clock and what it watches) says so, when `WATCH`:
    /// a run that watches nothing compiles without the check.
    fn run_watched<const WATCH: bool>(
        &mut self,
        bucket: SimDuration,
        end: SimTime,
        state: &mut LoopState,
        mut stop: impl FnMut(SimTime, Watched) -> bool,
    ) -> Option<Abort> {
        let LoopState {
            mut peak_pending,
            mut next_look,
            mut last_look,
            ..
        } = *state;
        let limits = self.limits();
        // Fetching the next event's request ahead pays once the requests no
        // longer fit in the core's own caches.
        let prefetch = self.slots.len() > PREFETCH_ABOVE;
        while let Some((t, ev)) = self.queue.pop() {
            if t >= end {
                break;
            }
            if self.rec.totals.events & (CHECK_EVERY - 1) == CHECK_EVERY - 1 {
                // Once a million events: is time moving, is memory bounded?
                if let Some(abort) = state.watch.look(t, self.queue.len(), &limits) {
                    state.peak_pending = peak_pending;
                    return Some(abort);
                }
            }
            if t >= next_look {
                peak_pending = peak_pending.max(self.queue.len() + 1);
                SIMULATED_NS.fetch_add((t - last_look).0, std::sync::atomic::Ordering::Relaxed);
                last_look = t;
                next_look = t + bucket;
            }
            self.now = t;
            self.rec.advance(t);
            if prefetch {
                let slots = &self.slots;
                self.queue
                    .upcoming(PREFETCH_DEPTH, |e| slots.prefetch(e.client()));
            }
            match ev.kind() {
                Kind::Begin => {
                    // The client's next request: its address is set already.
                    let id = self.slots.peek(ev.slot).id;
                    self.start_request(ev.slot, id, u64::from(ev.slot));
                }
                Kind::Arrival => {
                    let n = count(ev);
                    self.schedule_arrival(n + 1);
                    let slot = self.slots.allocate();
                    self.start_request(slot, addr::request(addr::OPEN, n), n);
                }
                Kind::Send => self.on_backoff_over::<Users>(ev),
                Kind::AtServer => self.on_at_server(ev),
                Kind::ServiceDone => self.on_service_done(ev),
                Kind::Response => self.on_response::<Users>(ev),
                Kind::Timeout => self.on_timeout::<Users>(ev),
                Kind::ReadAtServer => self.on_read_at_server(ev),
                _ => self.on_rare(ev),
            }
            if WATCH && stop(t, self.watched()) {
                break;
            }
        }
        *state = LoopState {
            peak_pending,
            next_look,
            last_look,
            watch: state.watch,
        };
        None
    }

    /// The events that come a few times a run (outages, restarts, timers)
    /// or only in worlds with a call chain: kept out of the run loop, whose
    /// size and layout every run pays for.
    #[cold]
    #[inline(never)]
    fn on_rare(&mut self, ev: Event) {
        match ev.kind() {
            Kind::OutageStart => self.on_outage_start(ev.aux as usize),
            Kind::OutageEnd => self.on_outage_end(ev.aux as usize),
            Kind::Restart => {
                let now = self.now;
                if let Some(s) = self.server.replica(usize::from(ev.replica)) {
                    s.restart(now);
                }
            }
            Kind::SpikeArrival => self.on_spike_arrival(ev.aux as usize, count(ev)),
            Kind::BreakerTimer => self.on_breaker_timer(ev.slot),
            Kind::FleetTimer => self.on_fleet_timer(ev.slot as usize, ev.aux),
            Kind::ReplicaReady => {
                self.on_replica_ready(ev.slot as usize, usize::from(ev.replica), ev.attempt)
            }
            Kind::TierAtServer => self.on_tier_at_server(ev),
            Kind::TierServiceDone => self.on_tier_service_done(ev),
            Kind::TierRestart => self.on_tier_restart(ev),
            Kind::CallResponse => self.on_response::<ChainCalls>(ev),
            Kind::CallTimeout => self.on_timeout::<ChainCalls>(ev),
            Kind::CallSend => self.on_backoff_over::<ChainCalls>(ev),
            Kind::Hedge => self.on_hedge_timer::<Users>(ev),
            Kind::CallHedge => self.on_hedge_timer::<ChainCalls>(ev),
            Kind::CacheHit => self.on_cache_hit(ev),
            Kind::Fork => {}
            Kind::Begin
            | Kind::Arrival
            | Kind::Send
            | Kind::AtServer
            | Kind::ServiceDone
            | Kind::Response
            | Kind::Timeout
            | Kind::ReadAtServer => {}
        }
    }

    /// A load spike's extra request `n` arrives: it starts, and the next
    /// one is scheduled while the spike lasts. Its draws are its own (its
    /// address is the spike's), so the usual arrivals stay those of the
    /// twin without the spike.
    fn on_spike_arrival(&mut self, index: usize, n: u64) {
        let Some(o) = self.world.outages.get(index) else {
            return;
        };
        let slot = self.slots.allocate();
        self.rec.spike_request();
        self.start_request(slot, addr::request(addr::spike(index as u32), n), n);
        self.schedule_spike_arrival(index, o.end, n + 1);
    }

    /// Schedules extra arrival `n` of spike `index` if it comes before `end`.
    pub(super) fn schedule_spike_arrival(&mut self, index: usize, end: SimTime, n: u64) {
        let Some(crate::model::OutageKind::Spike { rate }) =
            self.world.outages.get(index).map(|o| o.kind)
        else {
            return;
        };
        let Ok(exp) = Exp::new(rate / 1e9) else {
            return;
        };
        let id = addr::request(addr::spike(index as u32), n);
        let gap = SimDuration::from_nanos_f64(exp.sample(&mut self.draws.at(Purpose::Spike, id)));
        if self.now + gap < end {
            let ev = Event {
                aux: index as u32,
                ..counted(Kind::SpikeArrival, n)
            };
            self.queue.push(self.now + gap, ev);
        }
    }

    /// Whether the request at `id` is permanently bad.
    pub(super) fn draw_bad(&self, id: u64) -> bool {
        use rand::RngExt;
        let p = self.world.bad_fraction;
        p > 0.0 && self.draws.at(Purpose::Bad, id).random::<f64>() < p
    }

    /// Schedules open-loop arrival `n`.
    fn schedule_arrival(&mut self, n: u64) {
        if let Some(exp) = &self.arrivals {
            let id = addr::request(addr::OPEN, n);
            let gap =
                SimDuration::from_nanos_f64(exp.sample(&mut self.draws.at(Purpose::Arrival, id)));
            self.queue.push(self.now + gap, counted(Kind::Arrival, n));
        }
    }
}

/// Whether, in `world` under `strategy`, nothing but their own answer and
/// their own timer can act on a user between an attempt's answer leaving
/// the server and their next attempt leaving them, so that the answer's
/// arrival, the user's decision and the next attempt's departure are
/// handled when the answer is sent, recorded ahead at their own times, with
/// no event of their own (when the answer comes before the attempt's time
/// limit; a timeout still comes as an event, and finds the attempt over):
/// one server (the OCC record, or workers and a queue with no fleet to
/// learn from the answer), no budget, breaker or throttle (shared state
/// that other users' answers change in between), no hedging and no call
/// chain. Every draw has its own address, so handling them early changes
/// no draw; only events due at the same nanosecond can come in another
/// order.
fn in_place(world: &WorldConfig, strategy: &Strategy) -> bool {
    let one_server = match &world.server {
        ServerModel::Occ => true,
        ServerModel::Capacity(cfg) => !Fleet::needed(cfg),
    };
    one_server
        && world.chain.is_none()
        && strategy.budget.is_none()
        && strategy.breaker.is_none()
        && strategy.throttle.is_none()
        && strategy.hedging.is_none()
        && strategy.limits.is_none()
        && world.cache.is_none()
}

/// An arrival event carrying its number `n` in its slot and attempt.
fn counted(kind: Kind, n: u64) -> Event {
    Event::new(kind, (n >> 32) as u32, n as u32)
}

/// The number an arrival event carries ([`counted`]).
fn count(ev: Event) -> u64 {
    (u64::from(ev.slot) << 32) | u64::from(ev.attempt)
}

#[cfg(test)]
mod tests;
