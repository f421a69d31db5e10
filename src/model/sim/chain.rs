//! A call chain at run time (`[[service]]` tables). Tier 0 is the run's own
//! server, reached by the users' attempts as in every world; the tiers below
//! it, their calls and their callers' retry state live here, so a world
//! without a chain pays one check per completion.
//!
//! An attempt served at a tier with calls does its own part (the service
//! time), then makes its calls while its worker stays held; when they end,
//! the worker is freed and the attempt answered: OK if every call succeeded,
//! else 503 (the handler fails with its dependency). A call is a logical
//! request of the callee tier, with the retry policy, timeout and budget its
//! caller tier has for that tier; it keeps going when its caller is gone
//! (nobody cancels it) unless it carries the caller's deadline.

mod hedge;

use super::hedge::CopyBook;
use super::{ServerState, Sim};
use crate::engine::{SimDuration, SimTime};
use crate::metrics::tiers::TierTotals;
use crate::model::Observer;
use crate::model::balancer::NO_UPSTREAM;
use crate::model::chain::{CallMode, Calls, ChainConfig};
use crate::model::client::{Phase, Slots};
use crate::model::event::{Event, Kind, NO_RETRY_AFTER};
use crate::model::server::{Admission, Finished, Job, Rejection, Server};
use crate::retry::TierPolicy;
use crate::retry::breaker::Verdict;
use crate::retry::budget::UNCOUNTED;
use crate::retry::{Breaker, Budget, Decision, HedgingConfig, Outcome, Throttle};
use rand::RngExt;

/// Which call a call slot is, and who waits for it.
#[derive(Clone, Copy, Debug)]
struct Link {
    /// The tier called.
    tier: u8,
    /// The caller: its tier, replica, worker, and the epoch of its server
    /// when the call was made (a crash since makes the call an orphan).
    parent_tier: u8,
    parent_replica: u16,
    parent_worker: u32,
    parent_epoch: u32,
}

/// A worker holding an attempt while its calls are under way.
#[derive(Clone, Copy, Debug, Default)]
struct Hold {
    /// Its server's epoch when the calls began; 0 with `active` false when
    /// the worker holds nothing.
    epoch: u32,
    active: bool,
    /// The next call to make (in sequence), calls not yet ended, and
    /// whether one failed.
    next: u32,
    pending: u32,
    failed: bool,
    /// When the worker's own part of the attempt ended.
    local_done: SimTime,
}

/// The retry state of one tier's callers towards it: their policy, and the
/// budget, breaker and throttle they share.
#[derive(Clone)]
struct Callers {
    policy: TierPolicy,
    budget: Option<Budget>,
    breaker: Option<Breaker>,
    throttle: Option<Throttle>,
}

/// The chain's run-time state.
#[derive(Clone)]
pub(crate) struct ChainRun {
    /// Tiers 1 and below (tier 0 is the run's server).
    servers: Vec<ServerState>,
    calls: Vec<Calls>,
    /// Workers per replica, per tier.
    workers: Vec<usize>,
    /// Per tier, per replica x worker.
    holds: Vec<Vec<Hold>>,
    /// The calls in progress, their links, and each tier's callers.
    slots: Slots,
    links: Vec<Link>,
    callers: Vec<Option<Callers>>,
    /// Whether each tier receives its callers' deadlines.
    knows_deadline: Vec<bool>,
    /// The copies out of each hedged call, by call slot.
    book: CopyBook,
    /// Each tier's figures.
    pub(super) totals: Vec<TierTotals>,
    /// Attempts sent to each tier below 0 in each bucket of `width`.
    pub(super) series: Vec<Vec<u32>>,
    /// The latency of each tier's successful calls, from the call's start
    /// to its OK at the caller.
    pub(super) latency: Vec<crate::metrics::Histogram>,
    width: u64,
}

impl ChainRun {
    pub(super) fn new(
        chain: &ChainConfig,
        tier0: &crate::model::ServerConfig,
        policies: &[TierPolicy],
        duration: SimDuration,
        bucket: SimDuration,
    ) -> ChainRun {
        let buckets = duration.0.div_ceil(bucket.0.max(1)).max(1) as usize;
        let n = chain.tiers();
        let servers = chain
            .services
            .iter()
            .zip(policies)
            .map(|(s, p)| {
                // A callee that receives its callers' deadline drops queued
                // work whose deadline has passed (gRPC fails it with
                // DEADLINE_EXCEEDED without running the handler).
                let mut cfg = s.server.clone();
                cfg.drop_expired |= p.propagate_deadline;
                if super::Fleet::needed(&cfg) {
                    ServerState::Fleet(super::Fleet::new(&cfg))
                } else {
                    ServerState::One(Server::new(&cfg))
                }
            })
            .collect();
        let workers: Vec<usize> = std::iter::once(tier0)
            .chain(chain.services.iter().map(|s| &s.server))
            .map(|c| c.workers as usize)
            .collect();
        let slots_per_tier: Vec<usize> = std::iter::once(tier0)
            .chain(chain.services.iter().map(|s| &s.server))
            .map(|c| c.slots() * c.workers as usize)
            .collect();
        ChainRun {
            servers,
            calls: chain.calls.clone(),
            workers,
            holds: slots_per_tier
                .iter()
                .map(|&m| vec![Hold::default(); m])
                .collect(),
            slots: Slots::new(0),
            links: Vec::new(),
            book: CopyBook::default(),
            knows_deadline: (0..n)
                .map(|k| k > 0 && policies.get(k - 1).is_some_and(|p| p.propagate_deadline))
                .collect(),
            callers: (0..n)
                .map(|k| {
                    let p = policies.get(k.checked_sub(1)?)?.clone();
                    Some(Callers {
                        budget: p.strategy.budget.as_ref().map(Budget::new),
                        breaker: p.strategy.breaker.as_ref().map(Breaker::new),
                        throttle: p.strategy.throttle.as_ref().map(Throttle::new),
                        policy: p,
                    })
                })
                .collect(),
            totals: vec![TierTotals::default(); n],
            series: vec![vec![0; buckets]; n],
            latency: (0..n).map(|_| crate::metrics::Histogram::new()).collect(),
            width: bucket.0.max(1),
        }
    }

    /// The hedging of the calls to `tier`, if its callers hedge.
    fn hedging(&self, tier: usize) -> Option<HedgingConfig> {
        self.callers.get(tier)?.as_ref()?.policy.strategy.hedging
    }

    /// Whether the attempt `job` at `tier` is still of use: false for a
    /// hedged call's copy its caller no longer waits for, when the
    /// cancellation reaches the callee.
    fn copy_wanted(&self, tier: usize, job: &Job) -> bool {
        match self.hedging(tier) {
            Some(h) if h.cancel => self.book.wanted(&self.slots, job),
            _ => true,
        }
    }

    /// Whether an attempt at `tier` makes calls.
    pub(super) fn calls_from(&self, tier: usize) -> bool {
        self.calls.get(tier).is_some_and(|c| !c.to.is_empty())
    }

    /// The services below the server.
    pub(super) fn services(&self) -> usize {
        self.servers.len()
    }
}

/// Tier `tier`'s server: the run's own for tier 0, else the chain's. (A
/// function of the two fields, so the rest of the run stays borrowable.)
pub(super) fn tier_server<'s>(
    server: &'s mut ServerState,
    chain: &'s mut Option<Box<ChainRun>>,
    tier: usize,
) -> Option<&'s mut ServerState> {
    if tier == 0 {
        return Some(server);
    }
    chain.as_mut()?.servers.get_mut(tier - 1)
}

impl<O: Observer, const WHEEL: bool> Sim<'_, O, WHEEL> {
    fn chain(&mut self) -> &mut ChainRun {
        // Only called from the chain's handlers, which exist only with one.
        self.chain
            .as_mut()
            .expect("a chain's handler runs with a chain")
    }

    /// Worker `worker` of `tier`'s replica `replica` ended its own part of
    /// an attempt: it starts the attempt's calls. Returns false (doing
    /// nothing) when the worker is refusing rather than serving, or the
    /// completion is stale, and the usual completion applies.
    pub(super) fn chain_local_done(
        &mut self,
        tier: usize,
        replica: usize,
        worker: u32,
        epoch: u32,
    ) -> bool {
        let now = self.now;
        let Some(server) =
            tier_server(&mut self.server, &mut self.chain, tier).and_then(|s| s.replica(replica))
        else {
            return false;
        };
        let Some((job, false)) = server.holding(worker, epoch) else {
            return false;
        };
        let cancelled = match (tier, &self.hedges) {
            (0, Some(h)) => h.cfg.cancel && !h.wanted(&self.slots, &job),
            (0, None) => false,
            _ => !self.chain().copy_wanted(tier, &job),
        };
        let c = self.chain();
        if c.knows_deadline[tier] && job.deadline <= now {
            // Its caller has given up and the handler knows it: no calls.
            return false;
        }
        let i = replica * c.workers[tier] + worker as usize;
        if cancelled {
            // A hedged copy whose caller has its answer from another copy,
            // and the handler knows it: it makes no calls and ends here.
            c.holds[tier][i] = Hold {
                epoch,
                local_done: now,
                ..Hold::default()
            };
            self.release_held(tier, replica, worker, epoch, true);
            return true;
        }
        let mode = c.calls[tier].mode.unwrap_or(CallMode::Sequence);
        let count = c.calls[tier].to.len() as u32;
        // The launch itself counts as pending until every first call is
        // made: a call refused at once (by its callers' breaker) ends
        // before the next is made, and must not free the worker early.
        c.holds[tier][i] = Hold {
            epoch,
            active: true,
            next: 0,
            pending: 1,
            failed: false,
            local_done: now,
        };
        let first = match mode {
            CallMode::Sequence => 1,
            CallMode::Parallel => count,
        };
        for _ in 0..first {
            self.make_call(tier, replica, worker, epoch, job.deadline);
        }
        let hold = &mut self.chain().holds[tier][i];
        hold.pending -= 1;
        if hold.pending == 0 && hold.active && hold.epoch == epoch {
            // Every call ended at once, or was left out this time: the
            // attempt is done.
            let ok = !hold.failed;
            hold.active = false;
            self.release_held(tier, replica, worker, epoch, ok);
        }
        true
    }

    /// Frees a worker that held an attempt for its calls, and answers it.
    fn release_held(&mut self, tier: usize, replica: usize, worker: u32, epoch: u32, ok: bool) {
        if tier == 0 {
            self.release_entry_worker(replica, worker, epoch, ok);
        } else {
            self.release_tier_worker(tier, replica, worker, epoch, Some(ok));
        }
    }

    /// The holding worker makes its next call, leaving out those whose
    /// probability says so this time; false when none is left to make.
    fn make_call(
        &mut self,
        tier: usize,
        replica: usize,
        worker: u32,
        epoch: u32,
        caller_deadline: SimTime,
    ) -> bool {
        let now = self.now;
        let c = self
            .chain
            .as_mut()
            .expect("a chain's handler runs with a chain");
        let i = replica * c.workers[tier] + worker as usize;
        let hold = &mut c.holds[tier][i];
        let calls = &c.calls[tier];
        let callee = loop {
            let Some(&callee) = calls.to.get(hold.next as usize) else {
                return false;
            };
            let p = calls
                .probability
                .get(hold.next as usize)
                .copied()
                .unwrap_or(1.0);
            hold.next += 1;
            if p >= 1.0 || self.rng.workload.random::<f64>() < p {
                break callee;
            }
        };
        let Some(callers) = c.callers[callee].as_mut() else {
            return false;
        };
        hold.pending += 1;
        let own = callers
            .policy
            .strategy
            .policy
            .deadline
            .map_or(SimTime::NEVER, |d| now + d);
        let deadline_at = if callers.policy.propagate_deadline {
            own.min(caller_deadline)
        } else {
            own
        };
        if let Some(b) = &mut callers.budget {
            b.on_request(now);
        }
        let slot = c.slots.allocate();
        let link = Link {
            tier: callee as u8,
            parent_tier: tier as u8,
            parent_replica: replica as u16,
            parent_worker: worker,
            parent_epoch: epoch,
        };
        if slot as usize >= c.links.len() {
            c.links.push(link);
        } else {
            c.links[slot as usize] = link;
        }
        c.slots.get(slot).begin(now, deadline_at, false);
        c.totals[callee].calls += 1;
        if c.hedging(callee).is_some() {
            self.hedged_call_start(slot);
        } else {
            self.send_call_attempt(slot);
        }
        true
    }

    /// Whether `tier`'s callers' throttle and breaker let an attempt go:
    /// None if refused, else whether it is the breaker's probe. As for the
    /// users' attempts: the throttle's probability from the counts so far,
    /// then the breaker.
    fn call_verdict(&mut self, tier: usize) -> Option<bool> {
        let now = self.now;
        let c = self
            .chain
            .as_mut()
            .expect("a chain's handler runs with a chain");
        let callers = c.callers[tier].as_mut()?;
        let mut refused = false;
        if let Some(t) = &mut callers.throttle {
            let p = t.reject_probability(now);
            t.on_request(now);
            refused = p > 0.0 && self.rng.jitter.random::<f64>() < p;
        }
        match (refused, callers.breaker.as_mut().map(|b| b.check(now))) {
            (true, _) | (_, Some(Verdict::Reject)) => None,
            (_, Some(Verdict::Probe)) => Some(true),
            (_, Some(Verdict::Allow) | None) => Some(false),
        }
    }

    /// Sends the next attempt of call `slot`, unless its callers' throttle
    /// or breaker refuses it, which fails the call at once.
    fn send_call_attempt(&mut self, slot: u32) {
        let now = self.now;
        let tier = usize::from(self.chain().links[slot as usize].tier);
        if self.chain().callers[tier].is_none() {
            return;
        }
        let Some(probe) = self.call_verdict(tier) else {
            let c = self.chain();
            let charged = c.slots.get(slot).charged;
            if let Some(b) = c.callers[tier].as_mut().and_then(|k| k.budget.as_mut()) {
                b.on_retry_abandoned(charged);
            }
            c.totals[tier].calls_failed += 1;
            c.totals[tier].rejected_locally += 1;
            self.end_call(slot, false);
            return;
        };
        let c = self.chain();
        let timeout = c.callers[tier]
            .as_ref()
            .and_then(|k| k.policy.strategy.policy.timeout);
        let r = c.slots.get(slot);
        r.probe = probe;
        let (attempt, deadline) = r.next_attempt(timeout.map(|t| now + t));
        let retries = r.retries;
        if deadline < SimTime::NEVER {
            self.queue
                .push(deadline, Event::new(Kind::CallTimeout, slot, attempt));
        }
        self.dispatch_call(slot, tier, attempt, retries);
    }

    /// Attempt `attempt` of call `slot` to `tier`, its `retries`-th retry
    /// (or hedge), is counted and goes to the replica the callers' balancer
    /// picks, which it returns.
    fn dispatch_call(&mut self, slot: u32, tier: usize, attempt: u32, retries: u32) -> u16 {
        let now = self.now;
        let c = self.chain();
        let previous = usize::from(c.slots.get(slot).replica);
        c.totals[tier].attempts += 1;
        c.totals[tier].retries += u64::from(retries > 0);
        let b = (now.0 / c.width) as usize;
        if let Some(count) = c.series[tier].get_mut(b) {
            *count += 1;
        }
        let replica = match tier_server(&mut self.server, &mut self.chain, tier) {
            Some(ServerState::Fleet(f)) => {
                let mut r = f.balance.pick(&mut self.rng.balance);
                if f.retry_other && retries > 0 && r == previous && r != NO_UPSTREAM {
                    r = f.balance.repick(r, &mut self.rng.balance);
                }
                r as u16
            }
            _ => 0,
        };
        self.chain().slots.get(slot).replica = replica;
        let hop = self.hop();
        let ev = Event {
            aux: tier as u32,
            replica,
            ..Event::new(Kind::TierAtServer, slot, attempt)
        };
        self.queue.push(now + hop, ev);
        replica
    }

    /// Call `slot`'s attempt is still awaited: its deadline.
    fn live_call(&mut self, slot: u32, attempt: u32) -> Option<SimTime> {
        let c = self.chain();
        let r = c.slots.peek(slot);
        // An earlier copy of a hedged call may still be out.
        let out = r.attempt == attempt || c.book.is_out(slot, r.attempt, attempt);
        (r.phase == Phase::Waiting && out).then_some(r.attempt_deadline)
    }

    /// An attempt of a call reaches its tier.
    #[cold]
    #[inline(never)]
    pub(super) fn on_tier_at_server(&mut self, ev: Event) {
        let tier = ev.aux as usize;
        let r = usize::from(ev.replica);
        let deadline = self.live_call(ev.slot, ev.attempt).unwrap_or(SimTime::ZERO);
        let job = Job {
            slot: ev.slot,
            attempt: ev.attempt,
            deadline,
            bad: false,
            arrived: self.now,
        };
        let now = self.now;
        let Some(server) =
            tier_server(&mut self.server, &mut self.chain, tier).and_then(|s| s.replica(r))
        else {
            // The callers' proxy found no healthy replica (`NO_UPSTREAM`):
            // it answers 503 itself.
            self.respond_call(job, Outcome::Status503, None);
            return;
        };
        // A transient-failure trigger answers 503 at once, drawn from the
        // trigger's own stream.
        let p = server.error_rate();
        if p > 0.0 && self.rng.trigger.random::<f64>() < p {
            self.respond_call(job, Outcome::Status503, None);
            return;
        }
        match server.admit(job, now, &mut self.rng.service) {
            Admission::Started { worker, done_at } => {
                self.schedule_tier_done(tier, r, worker, done_at)
            }
            Admission::Queued | Admission::Dropped | Admission::Deferred => {}
            Admission::Rejected(why) => self.refused_call(job, why),
            Admission::Crash => self.crash_tier(tier, r, job),
        }
        self.tier_gauges(tier, r);
    }

    /// `tier`'s replica `r` may have changed its busy workers: an
    /// autoscaler's measure learns it. (The server's own gauges do this
    /// for tier 0.)
    fn tier_gauges(&mut self, tier: usize, r: usize) {
        let now = self.now;
        if let Some(ServerState::Fleet(f)) = tier_server(&mut self.server, &mut self.chain, tier) {
            if f.health.is_some() && r < f.replicas.len() {
                f.recount(r, now);
            }
        }
    }

    fn schedule_tier_done(&mut self, tier: usize, r: usize, worker: u32, done_at: SimTime) {
        let Some(server) =
            tier_server(&mut self.server, &mut self.chain, tier).and_then(|s| s.replica(r))
        else {
            return;
        };
        let ev = Event {
            aux: tier as u32,
            replica: r as u16,
            ..Event::new(Kind::TierServiceDone, worker, server.epoch())
        };
        self.queue.push(done_at, ev);
    }

    fn refused_call(&mut self, job: Job, why: Rejection) {
        let (outcome, ra) = match why {
            Rejection::Refused => (Outcome::Refused, None),
            Rejection::Unavailable(ra) => (Outcome::Status503, ra),
            Rejection::Shed(ra) => (Outcome::Status429, ra),
        };
        self.respond_call(job, outcome, ra);
    }

    fn crash_tier(&mut self, tier: usize, r: usize, job: Job) {
        let now = self.now;
        let held = self.holding_ns(tier, r);
        let Some(server) =
            tier_server(&mut self.server, &mut self.chain, tier).and_then(|s| s.replica(r))
        else {
            return;
        };
        let mut flushed = std::mem::take(&mut self.flushed);
        let back = server.crash(now, &mut flushed);
        let restart = Event {
            aux: tier as u32,
            replica: r as u16,
            ..Event::new(Kind::TierRestart, 0, 0)
        };
        self.queue.push(back, restart);
        self.respond_call(job, Outcome::Reset, None);
        for f in flushed.drain(..) {
            self.chain().totals[tier].work_ns += f.service.0;
            self.chain().totals[tier].wasted_ns += f.service.0;
            self.respond_call(f.job, Outcome::Reset, None);
        }
        self.unhold(tier, held);
        self.flushed = flushed;
        self.tier_gauges(tier, r);
    }

    /// The time the workers of `tier`'s replica `r` have spent holding
    /// their attempts' calls, after their own parts, up to now. A crash or
    /// an outage that throws those attempts out counts only their own parts
    /// as the tier's work, as a completion does. Called before the flush,
    /// while the holds' epoch is the server's.
    #[cold]
    #[inline(never)]
    pub(super) fn holding_ns(&mut self, tier: usize, r: usize) -> u64 {
        let now = self.now;
        let Some(epoch) = tier_server(&mut self.server, &mut self.chain, tier)
            .and_then(|s| s.replica(r))
            .map(|s| s.epoch())
        else {
            return 0;
        };
        let Some(c) = self.chain.as_ref() else {
            return 0;
        };
        let w = c.workers[tier];
        c.holds[tier]
            .get(r * w..(r + 1) * w)
            .into_iter()
            .flatten()
            .filter(|h| h.active && h.epoch == epoch)
            .map(|h| (now - h.local_done).0)
            .sum()
    }

    /// The flushed jobs of `tier`, just counted as its work and waste,
    /// held calls for `held` ns of it: that was not its work.
    fn unhold(&mut self, tier: usize, held: u64) {
        let t = &mut self.chain().totals[tier];
        t.work_ns = t.work_ns.saturating_sub(held);
        t.wasted_ns = t.wasted_ns.saturating_sub(held);
    }

    /// Tier 0's jobs a crash or an outage threw out: their own parts are
    /// the tier's work, all of it wasted (`held` is the time spent holding
    /// calls, from [`Self::holding_ns`]).
    #[cold]
    #[inline(never)]
    pub(super) fn entry_flushed(&mut self, flushed: &[Finished], held: u64) {
        let served: u64 = flushed
            .iter()
            .filter(|f| f.refused.is_none())
            .map(|f| f.service.0)
            .sum();
        let own = served.saturating_sub(held);
        let t = &mut self.chain().totals[0];
        t.work_ns += own;
        t.wasted_ns += own;
    }

    /// Outage `index`, which hits a tier below the server, starts (`start`)
    /// or ends.
    #[cold]
    #[inline(never)]
    pub(super) fn chain_outage(&mut self, index: usize, start: bool) {
        let Some(outage) = self.world.outages.get(index) else {
            return;
        };
        let (tier, kind) = (outage.tier, outage.kind);
        let reply = match kind {
            crate::model::OutageKind::Reset => Some((Outcome::Reset, None)),
            crate::model::OutageKind::Unavailable { retry_after } => {
                Some((Outcome::Status503, retry_after))
            }
            _ => None,
        };
        let now = self.now;
        let hit = self.outage_targets.get(index).cloned().unwrap_or_default();
        for r in hit {
            let held = if start { self.holding_ns(tier, r) } else { 0 };
            let Some(server) =
                tier_server(&mut self.server, &mut self.chain, tier).and_then(|s| s.replica(r))
            else {
                return;
            };
            if !start {
                server.end_outage(now);
                self.tier_gauges(tier, r);
                continue;
            }
            let mut flushed = std::mem::take(&mut self.flushed);
            server.begin_outage(kind, now, &mut flushed);
            for f in flushed.drain(..) {
                let t = &mut self.chain().totals[tier];
                t.work_ns += f.service.0;
                t.wasted_ns += f.service.0;
                if let Some((outcome, ra)) = reply {
                    self.respond_call(f.job, outcome, ra);
                }
            }
            self.unhold(tier, held);
            self.flushed = flushed;
            self.tier_gauges(tier, r);
        }
    }

    #[cold]
    #[inline(never)]
    pub(super) fn on_tier_restart(&mut self, ev: Event) {
        let now = self.now;
        let (tier, r) = (ev.aux as usize, usize::from(ev.replica));
        if let Some(s) =
            tier_server(&mut self.server, &mut self.chain, tier).and_then(|s| s.replica(r))
        {
            s.restart(now);
        }
        self.tier_gauges(tier, r);
    }

    /// A worker of a tier below 0 ends its part of an attempt.
    #[cold]
    #[inline(never)]
    pub(super) fn on_tier_service_done(&mut self, ev: Event) {
        let tier = ev.aux as usize;
        let r = usize::from(ev.replica);
        if self.chain().calls_from(tier) && self.chain_local_done(tier, r, ev.slot, ev.attempt) {
            return;
        }
        self.release_tier_worker(tier, r, ev.slot, ev.attempt, None);
    }

    /// Frees a worker of `tier` (below 0) and answers what it held: as
    /// served (`calls_ok` None: no calls), or after its calls.
    fn release_tier_worker(
        &mut self,
        tier: usize,
        r: usize,
        worker: u32,
        epoch: u32,
        calls_ok: Option<bool>,
    ) {
        let now = self.now;
        let c = self
            .chain
            .as_mut()
            .expect("a chain's handler runs with a chain");
        let hedging = c.hedging(tier);
        let cancel = hedging.is_some_and(|h| h.cancel);
        let (slots, book) = (&c.slots, &c.book);
        let Some(server) = c.servers.get_mut(tier - 1).and_then(|s| s.replica(r)) else {
            return;
        };
        // A queued copy of a hedged call whose caller has its answer is
        // dropped unserved when the cancellation reaches the callee.
        let completed = server.complete_if(
            worker,
            epoch,
            now,
            &mut self.rng.service,
            &mut self.dropped,
            |job| !cancel || book.wanted(slots, job),
        );
        // Queued work dropped unanswered because its caller had gone.
        self.dropped.clear();
        self.tier_gauges(tier, r);
        let Some((done, next)) = completed else {
            return;
        };
        if let Some((w, at)) = next {
            self.schedule_tier_done(tier, r, w, at);
        }
        if let Some(why) = done.refused {
            self.refused_call(done.job, why);
            return;
        }
        let (outcome, local) = match calls_ok {
            None => (Outcome::Ok, done.service),
            Some(ok) => {
                let c = self.chain();
                let hold = c.holds[tier][r * c.workers[tier] + worker as usize];
                let local = SimDuration(done.service.0.saturating_sub((now - hold.local_done).0));
                (if ok { Outcome::Ok } else { Outcome::Status503 }, local)
            }
        };
        // The answer of a hedged call's copy whose caller has its answer
        // already is of no use; it is not sent if the caller cancelled it.
        let wanted = hedging.is_none() || {
            let c = self.chain();
            c.book.wanted(&c.slots, &done.job)
        };
        // One its caller no longer waits for is still answered (the hop
        // drawn, the answer thrown away there) unless the caller's
        // cancellation reached the callee.
        let answered = (wanted || !cancel) && self.respond_call(done.job, outcome, None);
        let delivered = answered && wanted;
        let t = &mut self.chain().totals[tier];
        t.work_ns += local.0;
        if !delivered {
            t.wasted_ns += local.0;
        } else if outcome == Outcome::Ok && hedging.is_none() {
            // (A hedged call's OK is counted when it ends the call: two
            // copies may both answer OK.)
            t.ok += 1;
        }
    }

    /// Tier 0's worker ends after its calls: it is freed and answers the user.
    fn release_entry_worker(&mut self, r: usize, worker: u32, epoch: u32, ok: bool) {
        let now = self.now;
        let Some(server) = self.server.replica(r) else {
            return;
        };
        // The users' queued copies they no longer wait for are dropped
        // unserved when the cancellation reaches the server.
        let (slots, hedges) = (&self.slots, self.hedges.as_deref());
        let completed = server.complete_if(
            worker,
            epoch,
            now,
            &mut self.rng.service,
            &mut self.dropped,
            |job| hedges.is_none_or(|h| !h.cfg.cancel || h.wanted(slots, job)),
        );
        if !self.dropped.is_empty() {
            self.depart_dropped(r);
        }
        let Some((done, next)) = completed else {
            return;
        };
        if let Some((w, at)) = next {
            self.schedule_done(r, w, at);
        }
        let c = self.chain();
        let hold = c.holds[0][r * c.workers[0] + worker as usize];
        let local = SimDuration(done.service.0.saturating_sub((now - hold.local_done).0));
        let outcome = if ok { Outcome::Ok } else { Outcome::Status503 };
        let delivered = if self.hedges.is_some() {
            self.answer_copy(done.job, outcome)
        } else {
            self.respond(done.job, outcome, None)
        };
        let t = &mut self.chain().totals[0];
        t.work_ns += local.0;
        if !delivered {
            t.wasted_ns += local.0;
        } else if ok {
            t.ok += 1;
        }
        self.rec.work(done.service, !delivered);
        self.depart(r, now - done.job.arrived);
        if delivered && ok {
            if let Some(rec) = &mut self.per_replica {
                rec.served(r, now);
            }
        }
        self.update_server_gauges(r);
    }

    /// Sends a call's attempt its answer; false when nobody waits for it.
    fn respond_call(&mut self, job: Job, outcome: Outcome, ra: Option<SimDuration>) -> bool {
        let hop = self.hop();
        let at = self.now + hop;
        if at >= job.deadline {
            return false;
        }
        let aux = ra.map_or(NO_RETRY_AFTER, |d| {
            u32::try_from(d.0 / 1_000_000).unwrap_or(u32::MAX - 1)
        });
        let ev = Event {
            outcome: outcome as u8,
            aux,
            ..Event::new(Kind::CallResponse, job.slot, job.attempt)
        };
        self.queue.push(at, ev);
        true
    }

    /// Call `slot`'s attempt is over at its caller with `outcome`: one
    /// fewer outstanding at the replica it went to, and the fleet's outlier
    /// detection learns the outcome.
    fn call_attempt_over(&mut self, slot: u32, outcome: Outcome) {
        let c = self.chain();
        let tier = usize::from(c.links[slot as usize].tier);
        let r = usize::from(c.slots.get(slot).replica);
        self.replica_attempt_over(tier, r, outcome);
    }

    /// An attempt to `tier`'s replica `r` is over at its caller with
    /// `outcome`.
    fn replica_attempt_over(&mut self, tier: usize, r: usize, outcome: Outcome) {
        if let Some(ServerState::Fleet(f)) = tier_server(&mut self.server, &mut self.chain, tier) {
            f.balance.done(r);
            if f.health.is_some() {
                self.fleet_observe(tier, r, outcome);
            }
        }
    }

    /// An attempt's outcome reaches the callers: their throttle and breaker
    /// learn it.
    fn observe_call(&mut self, slot: u32, outcome: Outcome) {
        let now = self.now;
        let c = self
            .chain
            .as_mut()
            .expect("a chain's handler runs with a chain");
        let tier = usize::from(c.links[slot as usize].tier);
        let probe = c.slots.get(slot).probe;
        let Some(callers) = c.callers[tier].as_mut() else {
            return;
        };
        if let Some(t) = &mut callers.throttle {
            t.on_answer(now, outcome);
        }
        let failed = callers.policy.strategy.policy.retry_on.contains(outcome);
        if let Some(b) = &mut callers.breaker {
            // It turns half-open when next asked (`check`): no timer needed.
            let _ = b.record(failed, probe, now, &mut self.rng.jitter);
        }
    }

    #[cold]
    #[inline(never)]
    pub(super) fn on_call_response(&mut self, ev: Event) {
        if self.call_hedged(ev.slot) {
            self.on_hedged_call_response(ev);
            return;
        }
        if self.live_call(ev.slot, ev.attempt).is_none() {
            return;
        }
        let outcome = Outcome::from_u8(ev.outcome);
        self.call_attempt_over(ev.slot, outcome);
        self.observe_call(ev.slot, outcome);
        if outcome == Outcome::Ok {
            let now = self.now;
            let c = self.chain();
            let charged = c.slots.get(ev.slot).charged;
            let tier = usize::from(c.links[ev.slot as usize].tier);
            let started = c.slots.get(ev.slot).started;
            c.latency[tier].record(now - started);
            if let Some(b) = c.callers[tier].as_mut().and_then(|k| k.budget.as_mut()) {
                b.on_success(charged);
            }
            self.end_call(ev.slot, true);
        } else {
            let ra =
                (ev.aux != NO_RETRY_AFTER).then(|| SimDuration::from_millis(u64::from(ev.aux)));
            self.call_failed(ev.slot, outcome, ra);
        }
    }

    #[cold]
    #[inline(never)]
    pub(super) fn on_call_timeout(&mut self, ev: Event) {
        if self.call_hedged(ev.slot) {
            self.on_hedged_call_timeout(ev);
            return;
        }
        if self.live_call(ev.slot, ev.attempt).is_none() {
            return;
        }
        self.call_attempt_over(ev.slot, Outcome::Timeout);
        self.observe_call(ev.slot, Outcome::Timeout);
        self.call_failed(ev.slot, Outcome::Timeout, None);
    }

    #[cold]
    #[inline(never)]
    pub(super) fn on_call_send(&mut self, ev: Event) {
        let r = self.chain().slots.get(ev.slot);
        if r.phase == Phase::BackingOff && r.attempt == ev.attempt {
            self.call_retry_sent(ev.slot);
            self.send_call_attempt(ev.slot);
        }
    }

    /// A call's retry goes out: its callers' budget counts it now if it
    /// counts retries only once sent.
    fn call_retry_sent(&mut self, slot: u32) {
        let c = self.chain();
        let tier = usize::from(c.links[slot as usize].tier);
        let r = c.slots.get(slot);
        if r.charged == UNCOUNTED {
            if let Some(b) = c.callers[tier].as_mut().and_then(|k| k.budget.as_mut()) {
                r.charged = b.on_retry_sent(r.charged);
            }
        }
    }

    fn call_failed(&mut self, slot: u32, outcome: Outcome, ra: Option<SimDuration>) {
        let now = self.now;
        let c = self
            .chain
            .as_mut()
            .expect("a chain's handler runs with a chain");
        let tier = usize::from(c.links[slot as usize].tier);
        let Some(callers) = c.callers[tier].as_mut() else {
            return;
        };
        let decision = c.slots.get(slot).after_failure(
            &callers.policy.strategy,
            callers.budget.as_mut(),
            outcome,
            ra,
            now,
            &mut self.rng.jitter,
        );
        match decision {
            Decision::Retry(delay) if delay == SimDuration::ZERO => {
                self.call_retry_sent(slot);
                self.send_call_attempt(slot);
            }
            Decision::Retry(delay) => {
                let r = c.slots.get(slot);
                r.phase = Phase::BackingOff;
                let attempt = r.attempt;
                self.queue
                    .push(now + delay, Event::new(Kind::CallSend, slot, attempt));
            }
            Decision::GiveUp(_) => {
                c.totals[tier].calls_failed += 1;
                self.end_call(slot, false);
            }
        }
    }

    /// Call `slot` ended (`ok` or failed for good): its caller learns it.
    fn end_call(&mut self, slot: u32, ok: bool) {
        let c = self.chain();
        c.slots.get(slot).phase = Phase::Idle;
        c.slots.release(slot);
        let link = c.links[slot as usize];
        let callee = usize::from(link.tier);
        if let Some(b) = c.callers[callee].as_mut().and_then(|k| k.budget.as_mut()) {
            b.on_request_end();
        }
        let (tier, replica, worker) = (
            usize::from(link.parent_tier),
            usize::from(link.parent_replica),
            link.parent_worker,
        );
        let i = replica * c.workers[tier] + worker as usize;
        let count = c.calls[tier].to.len() as u32;
        let mode = c.calls[tier].mode.unwrap_or(CallMode::Sequence);
        let hold = &mut c.holds[tier][i];
        if !hold.active || hold.epoch != link.parent_epoch {
            // An orphan: its caller crashed or was flushed meanwhile.
            return;
        }
        hold.pending -= 1;
        hold.failed |= !ok;
        let (next, pending, failed) = (hold.next, hold.pending, hold.failed);
        let epoch = hold.epoch;
        let more = match mode {
            CallMode::Sequence => ok && next < count,
            CallMode::Parallel => false,
        };
        if more {
            let deadline = tier_server(&mut self.server, &mut self.chain, tier)
                .and_then(|s| s.replica(replica))
                .and_then(|s| s.holding(worker, epoch))
                .map_or(SimTime::ZERO, |(job, _)| job.deadline);
            if self.make_call(tier, replica, worker, epoch, deadline) {
                return;
            }
        }
        if pending > 0 {
            return;
        }
        self.chain().holds[tier][i].active = false;
        self.release_held(tier, replica, worker, epoch, !failed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::chain::{Calls, ChainConfig, Service};
    use crate::model::{Dist, Load, ServerModel, WorldConfig};
    use crate::retry::TierPolicy;
    use crate::retry::amplification::{Tier, chain_load};
    use crate::retry::{BackoffKind, Strategy};

    /// A world of `tiers` tiers, each calling the next once, the bottom one
    /// so slow that every attempt at it times out; `users` one-shot users.
    fn hanging_chain(users: u32, retries: &[u32], timeouts_ms: &[u64]) -> (WorldConfig, Strategy) {
        let s = crate::scenario::load(std::path::Path::new("scenarios/outage.toml"))
            .expect("the shipped scenario is valid");
        let mut world = s.world_for(0).into_owned();
        world.outages.clear();
        world.load = Load::OneShot { clients: users };
        world.network = Dist::constant(SimDuration::from_millis(1));
        let ServerModel::Capacity(mut server) = world.server.clone() else {
            panic!("capacity server");
        };
        server.workers = 100_000;
        server.queue_capacity = 0;
        server.overload = Default::default();
        server.service = Dist::constant(SimDuration::from_millis(1));
        let n = retries.len();
        let mut bottom = server.clone();
        bottom.service = Dist::constant(SimDuration::from_secs(1000));
        world.server = ServerModel::Capacity(server.clone());
        world.chain = Some(Box::new(ChainConfig {
            entry: "t0".into(),
            services: (1..n)
                .map(|k| Service {
                    name: format!("t{k}"),
                    server: if k + 1 == n {
                        bottom.clone()
                    } else {
                        server.clone()
                    },
                })
                .collect(),
            calls: (0..n)
                .map(|k| Calls {
                    to: if k + 1 < n { vec![k + 1] } else { vec![] },
                    probability: if k + 1 < n { vec![1.0] } else { vec![] },
                    mode: None,
                })
                .collect(),
        }));
        let mut strategy = s.strategies[0].clone();
        let set = |st: &mut Strategy, r: u32, t: u64| {
            st.backoff.kind = BackoffKind::None;
            st.policy.max_retries = r;
            st.policy.timeout = Some(SimDuration::from_millis(t));
            st.policy.deadline = None;
            st.budget = None;
            st.breaker = None;
            st.throttle = None;
        };
        set(&mut strategy, retries[0], timeouts_ms[0]);
        strategy.tiers = (1..n)
            .map(|k| {
                let mut st = strategy.clone();
                st.tiers.clear();
                set(&mut st, retries[k], timeouts_ms[k]);
                TierPolicy {
                    strategy: st,
                    propagate_deadline: false,
                }
            })
            .collect();
        (world, strategy)
    }

    /// Three tiers of three attempts under total failure: 27 attempts at
    /// the bottom for each request, as the closed form says, when each
    /// timeout outlasts the attempts below it.
    #[test]
    fn total_failure_reaches_the_bottom_as_the_product_of_attempts() {
        let users = 50;
        let retries = [2, 2, 2];
        let (world, strategy) = hanging_chain(users, &retries, &[2_000, 200, 20]);
        let result = crate::model::run(&world, &strategy, 1, SimDuration::from_millis(100));
        let tiers: Vec<TierTotals> = result
            .tiers
            .expect("a chain's run has tier figures")
            .into_iter()
            .map(|t| t.totals)
            .collect();
        let closed = chain_load(
            &retries
                .iter()
                .enumerate()
                .map(|(k, &r)| Tier {
                    retries: r,
                    fails: if k + 1 == retries.len() { 1.0 } else { 0.0 },
                    calls: 1,
                    probability: 1.0,
                    mode: CallMode::Sequence,
                })
                .collect::<Vec<_>>(),
        );
        for (k, t) in tiers.iter().enumerate() {
            let expected = closed[k].worst_case * f64::from(users);
            assert_eq!(t.attempts as f64, expected, "tier {k}: {t:?}");
        }
        assert_eq!(result.totals.attempts, 3 * u64::from(users));
        assert_eq!(result.totals.succeeded, 0);
    }
}
