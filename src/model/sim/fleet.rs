//! A fleet at run time: its replicas, the balancer in front of them, the
//! fleet's gauges, and what takes replicas in and out of the rotation:
//! outlier ejection, active health checks and the autoscaler
//! (`model::fleet` holds their rules). A fleet without any of these keeps
//! no health state and schedules no timers, so its runs are those of a plain
//! balanced fleet. The server (tier 0) and every service of a call chain
//! may be such a fleet: each handler takes the tier it acts on.

use super::{ServerState, Sim};
use crate::engine::{Draw, SimDuration, SimTime};
use crate::model::Observer;
use crate::model::balancer::{Balance, NO_UPSTREAM};
use crate::model::event::{Event, Kind};
use crate::model::fleet::{CheckState, FleetOptions, OutlierState, is_5xx};
use crate::model::server::Server;
use crate::retry::Outcome;

/// The capacity server's replicas (one unless the scenario asks for a fleet)
/// and the balancer in front of them. The gauges count the whole fleet: each
/// replica's last recorded queue and busy workers are kept, with their sums.
#[derive(Clone)]
pub(crate) struct Fleet {
    /// The replicas: every slot the fleet may use (an autoscaler's maximum).
    pub(super) replicas: Vec<Server>,
    /// Who picks a replica for each attempt: one balancer for all the
    /// callers, or one per proxy when each keeps its own view (each with
    /// its own count of what it has outstanding where, and its own turn).
    pub(super) balance: Vec<Balance>,
    /// A retry avoids its previous attempt's replica.
    pub(super) retry_other: bool,
    /// Each replica's (queued, busy) as the gauges last counted them.
    seen: Vec<(u64, u64)>,
    /// Their sums.
    queued: u64,
    busy: u64,
    /// Ejection, health checks, autoscaling: `None` when the fleet has none.
    pub(super) health: Option<Box<Health>>,
}

/// What decides which replicas are in the rotation.
#[derive(Clone)]
pub(crate) struct Health {
    opts: FleetOptions,
    /// Each slot is a replica in service (started and not scaled away).
    in_service: Vec<bool>,
    /// The views of the fleet (one, or one per proxy): each ejects by the
    /// answers it saw, so `outlier` and `open` are `views x slots`, view
    /// by view.
    views: usize,
    /// In how many views each replica is open.
    open_in: Vec<u64>,
    /// Each slot is starting up (asked for by the autoscaler, not yet ready),
    /// and the generation its ready event must carry.
    starting: Vec<bool>,
    generation: Vec<u32>,
    outlier: Vec<OutlierState>,
    checks: Vec<CheckState>,
    /// Whether each replica is open to new attempts, as last set.
    open: Vec<bool>,
    /// Autoscaling: each replica's busy workers and since when, the busy
    /// area (workers x ns) since the last sync, and when it became ready.
    busy: Vec<(u64, SimTime)>,
    busy_area: Vec<u128>,
    ready_at: Vec<SimTime>,
    last_sync: SimTime,
    /// The autoscaler's recommendations, (time, replicas), newest last.
    history: Vec<(SimTime, u32)>,
}

/// The parts of a fleet its health acts on.
struct Parts<'a> {
    balance: &'a mut [Balance],
    replicas: &'a mut [Server],
}

/// The fleet's timers, as the `aux` of a [`Kind::FleetTimer`].
const SWEEP: u32 = 0;
const CHECK: u32 = 1;
const SYNC: u32 = 2;

/// Whether a server config needs anything that takes replicas in and out.
fn needs_health(cfg: &crate::model::ServerConfig) -> bool {
    cfg.fleet.outlier.is_some() || cfg.fleet.health_check.is_some() || cfg.fleet.autoscale.is_some()
}

impl Fleet {
    /// Whether `cfg` is a fleet: more than one replica, or anything that
    /// takes replicas in and out of service. Otherwise it is one server.
    pub(super) fn needed(cfg: &crate::model::ServerConfig) -> bool {
        cfg.slots() > 1 || needs_health(cfg)
    }

    /// The fleet of `cfg`, seen by `views` balancers and outlier detectors
    /// of their own (one per proxy; 1: shared by all callers).
    pub(super) fn new(
        cfg: &crate::model::ServerConfig,
        views: usize,
        draws: crate::engine::Draws,
    ) -> Fleet {
        let n = cfg.slots();
        let views = views.max(1);
        let start = cfg.replicas.max(1) as usize;
        let mut balance = vec![Balance::new(cfg.balancer, n); views];
        let health = needs_health(cfg).then(|| {
            let in_service: Vec<bool> = (0..n).map(|r| r < start).collect();
            for b in &mut balance {
                b.set_open(&in_service, false);
            }
            Box::new(Health {
                opts: cfg.fleet.clone(),
                open: in_service.repeat(views),
                open_in: in_service
                    .iter()
                    .map(|&s| u64::from(s) * views as u64)
                    .collect(),
                in_service,
                views,
                starting: vec![false; n],
                generation: vec![0; n],
                outlier: vec![OutlierState::default(); n * views],
                checks: vec![
                    CheckState {
                        last_passed: true,
                        ..CheckState::default()
                    };
                    n
                ],
                busy: vec![(0, SimTime::ZERO); n],
                busy_area: vec![0; n],
                ready_at: vec![SimTime::ZERO; n],
                last_sync: SimTime::ZERO,
                history: Vec::new(),
            })
        });
        Fleet {
            replicas: (0..n).map(|r| Server::replica(cfg, r, draws)).collect(),
            balance,
            retry_other: cfg.fleet.retry_other_replica,
            seen: vec![(0, 0); n],
            queued: 0,
            busy: 0,
            health,
        }
    }

    /// The balancer of view `view` (a proxy's, when each keeps its own;
    /// the one all share otherwise).
    #[inline(always)]
    pub(super) fn balance(&mut self, view: u16) -> &mut Balance {
        let v = if self.balance.len() > 1 {
            usize::from(view)
        } else {
            0
        };
        &mut self.balance[v]
    }

    /// The replica an attempt through view `view` goes to: the balancer's
    /// pick, and for a retry that would go back to `previous`, the replica
    /// its last attempt went to, one pick more when the fleet retries on
    /// another replica (Envoy's previous-hosts predicate).
    #[inline(always)]
    pub(super) fn pick(&mut self, retry: bool, previous: u16, view: u16, rng: &mut Draw) -> u16 {
        let retry_other = self.retry_other;
        let balance = self.balance(view);
        let mut r = balance.pick(rng);
        if retry_other && retry && r == usize::from(previous) && r != NO_UPSTREAM {
            r = balance.repick(r, rng);
        }
        r as u16
    }

    /// Replica `r`'s queue and busy workers now, folded into the fleet's sums;
    /// returns (fleet queued, fleet busy, replica `r` held). For a fleet of
    /// more than one (one server keeps its own counts).
    pub(super) fn recount(&mut self, r: usize, now: SimTime) -> (u64, u64, u64) {
        let s = &self.replicas[r];
        let current = (s.queue_len() as u64, s.busy() as u64);
        if let Some(h) = &mut self.health {
            if h.opts.autoscale.is_some() {
                h.track_busy(r, now, current.1);
            }
        }
        let was = std::mem::replace(&mut self.seen[r], current);
        self.queued = self.queued + current.0 - was.0;
        self.busy = self.busy + current.1 - was.1;
        (self.queued, self.busy, current.0 + current.1)
    }
}

impl Health {
    fn track_busy(&mut self, r: usize, now: SimTime, busy: u64) {
        let (was, since) = self.busy[r];
        self.busy_area[r] += u128::from(was) * u128::from((now - since).0);
        self.busy[r] = (busy, now);
    }

    /// Replica `r`'s outlier state as view `v` sees it.
    fn outlier(&mut self, v: usize, r: usize) -> &mut OutlierState {
        let n = self.in_service.len();
        &mut self.outlier[v * n + r]
    }

    /// Replicas in service, and of those the ones view `v` ejected.
    fn counts(&self, v: usize) -> (usize, usize) {
        let n = self.in_service.len();
        let in_service = self.in_service.iter().filter(|&&s| s).count();
        let ejected = (0..n)
            .filter(|&r| self.in_service[r] && self.outlier[v * n + r].ejected_at.is_some())
            .count();
        (in_service, ejected)
    }

    /// Which replicas view `v` should send new attempts to: the healthy
    /// ones in service (not ejected, passing their checks), or every one
    /// in service when fewer than the panic threshold are healthy.
    fn wanted_open(&self, v: usize) -> Vec<bool> {
        let n = self.in_service.len();
        let healthy: Vec<bool> = (0..n)
            .map(|r| {
                self.in_service[r]
                    && self.outlier[v * n + r].ejected_at.is_none()
                    && !self.checks[r].unhealthy
            })
            .collect();
        let (in_service, _) = self.counts(v);
        let n_healthy = healthy.iter().filter(|&&h| h).count();
        if (n_healthy as f64) < self.opts.panic_threshold * in_service as f64 - 1e-9 {
            self.in_service.clone()
        } else {
            healthy
        }
    }
}

impl<O: Observer, const WHEEL: bool> Sim<'_, O, WHEEL> {
    /// The health state of `tier`'s fleet with its balancer and replicas, if
    /// it has one.
    fn health(&mut self, tier: usize) -> Option<(&mut Health, Parts<'_>)> {
        match super::chain::tier_server(&mut self.server, &mut self.chain, tier)? {
            ServerState::Fleet(Fleet {
                health,
                balance,
                replicas,
                ..
            }) => Some((health.as_deref_mut()?, Parts { balance, replicas })),
            ServerState::One(_) | ServerState::Occ(_) => None,
        }
    }

    /// The fleet's first timers: ejection sweeps, health checks, scaling.
    // The fleet's handlers are kept out of the run loop (cold, never
    // inlined): a plain server never calls them, and the loop stays as the
    // compiler laid it out before fleets had health.
    #[cold]
    #[inline(never)]
    pub(super) fn schedule_fleet(&mut self) {
        // The server first, then the chain's services in their order.
        let tiers = 1 + self.chain.as_ref().map_or(0, |c| c.services());
        for tier in 0..tiers {
            let Some((h, _)) = self.health(tier) else {
                continue;
            };
            let timers = [
                (SWEEP, h.opts.outlier.as_ref().map(|o| o.interval)),
                (CHECK, h.opts.health_check.map(|c| c.interval)),
                (SYNC, h.opts.autoscale.map(|a| a.sync)),
            ];
            for (which, every) in timers {
                if let Some(every) = every {
                    self.push_timer(tier, which, every);
                }
            }
        }
    }

    /// A timer of `tier`'s fleet: the tier is the event's `slot`.
    fn push_timer(&mut self, tier: usize, which: u32, after: SimDuration) {
        let ev = Event {
            aux: which,
            ..Event::new(Kind::FleetTimer, tier as u32, 0)
        };
        self.queue.push(self.now + after, ev);
    }

    /// An attempt sent through view `view` to `tier`'s replica `r` ended
    /// at its sender (a user, or a caller tier) with `outcome`: that view's
    /// outlier detection learns it. (Out of line: only a fleet with health
    /// calls it.)
    #[inline(never)]
    pub(super) fn fleet_observe(&mut self, tier: usize, r: usize, view: u16, outcome: Outcome) {
        let Some((h, _)) = self.health(tier) else {
            return;
        };
        let Some(cfg) = h.opts.outlier else {
            return;
        };
        if !h.in_service.get(r).copied().unwrap_or(false) {
            return;
        }
        let v = if h.views > 1 { usize::from(view) } else { 0 };
        if cfg.observe(h.outlier(v, r), is_5xx(outcome)) {
            self.try_eject(tier, r, v);
        }
    }

    /// View `v` ejects `tier`'s replica `r` if the maximum share allows it.
    fn try_eject(&mut self, tier: usize, r: usize, v: usize) -> bool {
        let now = self.now;
        let Some((h, _)) = self.health(tier) else {
            return false;
        };
        let Some(cfg) = h.opts.outlier else {
            return false;
        };
        if h.outlier(v, r).ejected_at.is_some() {
            return false;
        }
        let (in_service, ejected) = h.counts(v);
        if !cfg.may_eject(ejected, in_service) {
            return false;
        }
        cfg.eject(h.outlier(v, r), now);
        let views = h.views;
        if tier == 0 {
            if let Some(rec) = &mut self.per_replica {
                rec.ejection(r, now);
            }
            if views > 1 {
                if let Some(t) = self.per_proxy.get_mut(v) {
                    t.ejections += 1;
                }
            }
        }
        self.refresh_open(tier, Some(v));
        true
    }

    /// Sets the balancers' open replicas from the fleet's health (view
    /// `only`'s, or every view's), and records the replicas whose place in
    /// the rotation changed (the server's only: `replicas.csv` is the
    /// server's).
    fn refresh_open(&mut self, tier: usize, only: Option<usize>) {
        let now = self.now;
        let Some((h, fleet)) = self.health(tier) else {
            return;
        };
        let n = h.in_service.len();
        let views = match only {
            Some(v) => v..v + 1,
            None => 0..h.views,
        };
        let mut changed = Vec::new();
        for v in views {
            let open = h.wanted_open(v);
            let was = &mut h.open[v * n..(v + 1) * n];
            if open[..] == *was {
                continue;
            }
            for (r, (was, &is)) in was.iter_mut().zip(&open).enumerate() {
                if *was != is {
                    h.open_in[r] = if is {
                        h.open_in[r] + 1
                    } else {
                        h.open_in[r] - 1
                    };
                    changed.push(r);
                    *was = is;
                }
            }
            // With the panic threshold at 0 nothing overrides health: with
            // every replica out the proxy has no healthy upstream.
            let none_fails = h.opts.panic_threshold <= 0.0;
            fleet.balance[v].set_open(&open, none_fails);
        }
        if tier > 0 || changed.is_empty() {
            return;
        }
        let open_in: Vec<u64> = changed.iter().map(|&r| h.open_in[r]).collect();
        if let Some(rec) = &mut self.per_replica {
            for (r, count) in changed.into_iter().zip(open_in) {
                rec.rotation(r, now, count);
            }
        }
    }

    /// A fleet timer: an ejection sweep, health checks or an autoscaler sync.
    #[cold]
    #[inline(never)]
    pub(super) fn on_fleet_timer(&mut self, tier: usize, which: u32) {
        let now = self.now;
        let Some((h, fleet)) = self.health(tier) else {
            return;
        };
        match which {
            SWEEP => {
                let Some(cfg) = h.opts.outlier else {
                    return;
                };
                let (n, views) = (h.in_service.len(), h.views);
                for (i, s) in h.outlier.iter_mut().enumerate() {
                    if h.in_service[i % n] {
                        cfg.sweep_uneject(s, now);
                    }
                }
                // Each view's window of answers, then ready for the next.
                let windows: Vec<(u32, u32)> = (0..n * views)
                    .map(|i| {
                        let s = &mut h.outlier[i];
                        let w = if h.in_service[i % n] && s.ejected_at.is_none() {
                            (s.answers, s.failures)
                        } else {
                            (0, 0)
                        };
                        (s.answers, s.failures) = (0, 0);
                        w
                    })
                    .collect();
                self.refresh_open(tier, None);
                // Success rate first, then failure percentage, as Envoy
                // processes them at the end of its interval.
                for (v, windows) in windows.chunks(n).enumerate() {
                    let rate = cfg.success_outliers(windows);
                    let share = cfg.failure_outliers(windows);
                    for (r, out) in rate.into_iter().chain(share).enumerate() {
                        if out {
                            self.try_eject(tier, r % n, v);
                        }
                    }
                }
                self.push_timer(tier, SWEEP, cfg.interval);
            }
            CHECK => {
                let Some(cfg) = h.opts.health_check else {
                    return;
                };
                for r in 0..h.in_service.len() {
                    if h.in_service[r] {
                        let s = &fleet.replicas[r];
                        let passed = s.answers() && s.expected_wait(now) <= cfg.timeout;
                        cfg.record(&mut h.checks[r], passed);
                    }
                }
                self.refresh_open(tier, None);
                self.push_timer(tier, CHECK, cfg.interval);
            }
            _ => self.autoscale(tier),
        }
    }

    /// One autoscaler sync: measure, recommend, stabilise, then start or
    /// stop replicas.
    fn autoscale(&mut self, tier: usize) {
        let now = self.now;
        let Some((h, fleet)) = self.health(tier) else {
            return;
        };
        let Some(cfg) = h.opts.autoscale else {
            return;
        };
        let (mut sum, mut ready) = (0.0, 0u32);
        for r in 0..h.in_service.len() {
            if !h.in_service[r] {
                continue;
            }
            let busy = h.busy[r].0;
            h.track_busy(r, now, busy);
            let from = h.last_sync.max(h.ready_at[r]);
            let span = (now - from).0;
            let area = std::mem::take(&mut h.busy_area[r]);
            if span > 0 {
                let workers = fleet.replicas[r].workers() as f64;
                sum += (area as f64 / (span as f64 * workers)).min(1.0);
                ready += 1;
            }
        }
        let starting = h.starting.iter().filter(|&&s| s).count() as u32;
        let current = h.in_service.iter().filter(|&&s| s).count() as u32 + starting;
        let recommendation = cfg.recommend(sum, ready, current);
        h.history.push((now, recommendation));
        let keep = cfg.down_window.max(cfg.up_window);
        h.history.retain(|&(t, _)| now - t <= keep);
        let next = cfg.decide(&h.history, now, current);
        h.last_sync = now;
        let mut ready_events = Vec::new();
        if next > current {
            let mut more = next - current;
            for r in 0..h.in_service.len() {
                if more == 0 {
                    break;
                }
                if !h.in_service[r] && !h.starting[r] {
                    h.starting[r] = true;
                    h.generation[r] = h.generation[r].wrapping_add(1);
                    ready_events.push(Event {
                        replica: r as u16,
                        ..Event::new(Kind::ReplicaReady, tier as u32, h.generation[r])
                    });
                    more -= 1;
                }
            }
        } else if next < current {
            // Replicas not yet ready go first, then the newest in service
            // (Kubernetes prefers deleting pods not ready, then younger ones).
            let mut fewer = current - next;
            for r in (0..h.starting.len()).rev() {
                if fewer > 0 && h.starting[r] {
                    h.starting[r] = false;
                    fewer -= 1;
                }
            }
            for r in (0..h.in_service.len()).rev() {
                if fewer > 0 && h.in_service[r] {
                    // Out of the rotation; the work it holds still finishes.
                    h.in_service[r] = false;
                    for v in 0..h.views {
                        *h.outlier(v, r) = OutlierState::default();
                    }
                    h.checks[r] = CheckState {
                        last_passed: true,
                        ..CheckState::default()
                    };
                    fewer -= 1;
                }
            }
            self.refresh_open(tier, None);
        }
        for ev in ready_events {
            self.queue.push(now + cfg.startup, ev);
        }
        self.push_timer(tier, SYNC, cfg.sync);
    }

    /// `tier`'s replica `r`, which the autoscaler started, is ready (unless
    /// it was cancelled since: `generation` tells).
    #[cold]
    #[inline(never)]
    pub(super) fn on_replica_ready(&mut self, tier: usize, r: usize, generation: u32) {
        let now = self.now;
        let Some((h, fleet)) = self.health(tier) else {
            return;
        };
        if !h.starting.get(r).copied().unwrap_or(false) || h.generation[r] != generation {
            return;
        }
        h.starting[r] = false;
        h.in_service[r] = true;
        h.ready_at[r] = now;
        h.busy_area[r] = 0;
        h.busy[r].1 = now;
        fleet.replicas[r].start_cold(now);
        self.refresh_open(tier, None);
    }
}
