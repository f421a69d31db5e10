//! The calls a tier's worker makes, and the calls as requests of their
//! callers: [`ChainCalls`] takes them down the one attempt path.

use super::*;

/// A chain's calls, each tier's callers' requests: they live in the chain's
/// own slots, each linked to the tier it calls and the worker waiting for
/// it, and the chain's per-tier figures count them.
pub(in crate::model::sim) struct ChainCalls;

impl Side for ChainCalls {
    const RESPONSE: Kind = Kind::CallResponse;
    const TIMEOUT: Kind = Kind::CallTimeout;
    const SEND: Kind = Kind::CallSend;
    const HEDGE: Kind = Kind::CallHedge;

    fn parts<'s, O: Observer, const W: bool>(sim: &'s mut Sim<'_, O, W>, slot: u32) -> Parts<'s> {
        let c = sim
            .chain
            .as_mut()
            .expect("a chain's handler runs with a chain");
        let tier = c.links[slot as usize].tier as usize;
        let callers = c.callers[tier]
            .as_mut()
            .expect("a call is made only to a tier with callers");
        Parts {
            strategy: &callers.strategy,
            guards: callers.guards.view(),
            slots: &mut c.slots,
            book: &mut c.book,
            draws: sim.draws,
        }
    }

    fn tier<O: Observer, const W: bool>(sim: &mut Sim<'_, O, W>, slot: u32) -> usize {
        sim.chain().links[slot as usize].tier as usize
    }

    fn hedging<O: Observer, const W: bool>(
        sim: &mut Sim<'_, O, W>,
        slot: u32,
    ) -> Option<HedgingConfig> {
        let tier = Self::tier(sim, slot);
        sim.chain().hedging(tier)
    }

    /// The call goes to the replica its callers' balancer picks.
    fn dispatch<O: Observer, const W: bool>(
        sim: &mut Sim<'_, O, W>,
        slot: u32,
        attempt: u32,
        retries: u32,
        _timeout: Ticket,
    ) -> u16 {
        let tier = Self::tier(sim, slot);
        let request = sim.chain().slots.peek(slot);
        let (previous, address) = (request.replica, request.address(attempt));
        let replica = match tier_server(&mut sim.server, &mut sim.chain, tier) {
            Some(ServerState::Fleet(f)) => {
                let mut rng = sim.draws.at(Purpose::Balance, address);
                f.pick(retries > 0, previous, 0, &mut rng)
            }
            _ => 0,
        };
        sim.chain().slots.get(slot).replica = replica;
        let hop = sim.hop(Purpose::HopOut, address);
        let ev = Event {
            aux: tier as u32,
            replica,
            ..Event::new(Kind::TierAtServer, slot, attempt)
        };
        sim.queue.push(sim.now + hop, ev);
        replica
    }

    fn sent<O: Observer, const W: bool>(sim: &mut Sim<'_, O, W>, slot: u32, retries: u32) {
        let tier = Self::tier(sim, slot);
        let now = sim.now;
        let c = sim.chain();
        c.totals[tier].attempts += 1;
        c.totals[tier].retries += u64::from(retries > 0);
        if let Some(count) = c.series[tier].get_mut((now.0 / c.width) as usize) {
            *count += 1;
        }
    }

    fn attempt_ended<O: Observer, const W: bool>(_: &mut Sim<'_, O, W>, _: u32, _: Outcome) {}

    /// The call's caller is gone and the calls to its tier are cancelled
    /// with their caller.
    fn abandoned<O: Observer, const W: bool>(sim: &mut Sim<'_, O, W>, slot: u32) -> bool {
        let tier = Self::tier(sim, slot);
        sim.chain().cancelled_with_caller[tier] && sim.call_orphaned(slot)
    }

    /// The call's latency, from its start to the good answer at its
    /// caller. (A hedged call's OK is counted here: two copies may both
    /// answer OK. Another's is counted where its callee answers.)
    fn succeeded<O: Observer, const W: bool>(sim: &mut Sim<'_, O, W>, slot: u32) {
        let tier = Self::tier(sim, slot);
        let now = sim.now;
        let c = sim.chain();
        let started = c.slots.peek(slot).started;
        c.latency[tier].record(now - started);
        if c.hedging(tier).is_some() {
            c.totals[tier].ok += 1;
        }
    }

    fn refused_locally<O: Observer, const W: bool>(sim: &mut Sim<'_, O, W>, slot: u32, _: bool) {
        let tier = Self::tier(sim, slot);
        sim.chain().totals[tier].rejected_locally += 1;
    }

    fn failed<O: Observer, const W: bool>(sim: &mut Sim<'_, O, W>, slot: u32, _: GiveUp) {
        let tier = Self::tier(sim, slot);
        sim.chain().totals[tier].calls_failed += 1;
    }

    /// The worker that made the call learns its end: it makes its next
    /// call, or, its calls all over, is freed and answers.
    fn ended<O: Observer, const W: bool>(
        sim: &mut Sim<'_, O, W>,
        slot: u32,
        failure: Option<GiveUp>,
    ) {
        let ok = failure.is_none();
        // An orphan: its caller crashed or was flushed meanwhile; its end
        // is nobody's to learn.
        let orphan = sim.call_orphaned(slot);
        let c = sim.chain();
        c.slots.release(slot);
        if orphan {
            return;
        }
        let link = c.links[slot as usize];
        let (tier, replica, worker) = (
            link.parent_tier as usize,
            usize::from(link.parent_replica),
            link.parent_worker,
        );
        let i = replica * c.workers[tier] + worker as usize;
        let count = c.calls[tier].to.len() as u32;
        let mode = c.calls[tier].mode.unwrap_or(CallMode::Sequence);
        // (Not an orphan: `call_orphaned` found the hold active, this epoch's.)
        let hold = &mut c.holds[tier][i];
        hold.pending -= 1;
        hold.failed |= !ok;
        let (next, pending, failed) = (hold.next, hold.pending, hold.failed);
        let epoch = hold.epoch;
        let more = match mode {
            CallMode::Sequence => ok && next < count,
            CallMode::Parallel => false,
        };
        if more {
            let (deadline, caller) = tier_server(&mut sim.server, &mut sim.chain, tier)
                .and_then(|s| s.replica(replica))
                .and_then(|s| s.holding(worker, epoch))
                .map_or((SimTime::ZERO, 0), |(job, _)| (job.deadline, job.addr));
            if sim.make_call(tier, replica, worker, epoch, deadline, caller) {
                return;
            }
        }
        if pending > 0 {
            return;
        }
        sim.chain().holds[tier][i].active = false;
        sim.release_held(tier, replica, worker, epoch, !failed);
    }
}

impl<O: Observer, const WHEEL: bool> Sim<'_, O, WHEEL> {
    /// Whether call `slot`'s caller is gone: the worker that made it crashed
    /// or was flushed since (its server's epoch moved on, or its hold ended,
    /// or holds a later attempt). The call goes on, but nobody will use its
    /// answer.
    pub(in crate::model::sim) fn call_orphaned(&mut self, slot: u32) -> bool {
        let link = self.chain().links[slot as usize];
        let tier = link.parent_tier as usize;
        let epoch = tier_server(&mut self.server, &mut self.chain, tier)
            .and_then(|s| s.replica(usize::from(link.parent_replica)))
            .map(|s| s.epoch());
        let c = self.chain();
        let i = usize::from(link.parent_replica) * c.workers[tier] + link.parent_worker as usize;
        epoch != Some(link.parent_epoch)
            || c.holds[tier]
                .get(i)
                .is_none_or(|h| !h.active || h.epoch != link.parent_epoch)
    }

    /// A hedged copy (`slot`, `attempt`) sent to `tier`'s replica
    /// `replica` lost: if a worker there holds it for its calls, and the
    /// calls are cancelled with their caller, the worker is freed now (its
    /// work of no use) and its calls are orphans, which stop.
    pub(in crate::model::sim) fn cancel_held_copy(
        &mut self,
        tier: usize,
        replica: usize,
        slot: u32,
        attempt: u32,
    ) {
        let c = self.chain();
        let propagates = c
            .calls
            .get(tier)
            .is_some_and(|k| k.to.iter().any(|&t| c.cancelled_with_caller[t]));
        if !propagates {
            return;
        }
        let workers = c.workers[tier];
        for w in 0..workers {
            let i = replica * workers + w;
            let hold = self.chain().holds[tier][i];
            if !hold.active {
                continue;
            }
            let holds_it = tier_server(&mut self.server, &mut self.chain, tier)
                .and_then(|s| s.replica(replica))
                .and_then(|s| s.holding(w as u32, hold.epoch))
                .is_some_and(|(job, _)| job.slot == slot && job.attempt == attempt);
            if holds_it {
                self.chain().holds[tier][i].active = false;
                self.release_held(tier, replica, w as u32, hold.epoch, false);
                return;
            }
        }
    }

    /// Worker `worker` of `tier`'s replica `replica` ended its own part of
    /// an attempt: it starts the attempt's calls. Returns false (doing
    /// nothing) when the worker is refusing rather than serving, or the
    /// completion is stale, and the usual completion applies.
    pub(in crate::model::sim) fn chain_local_done(
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
        let cancelled = if tier == 0 {
            !self.still_wanted::<Users>(&job)
        } else {
            !self.still_wanted::<ChainCalls>(&job)
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
            self.make_call(tier, replica, worker, epoch, job.deadline, job.addr);
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

    /// The holding worker, serving the attempt at address `caller`, makes
    /// its next call, leaving out those whose probability says so this
    /// time; false when none is left to make. Call `i` of an attempt is
    /// at `addr::call(caller, i)`.
    fn make_call(
        &mut self,
        tier: usize,
        replica: usize,
        worker: u32,
        epoch: u32,
        caller_deadline: SimTime,
        caller: u64,
    ) -> bool {
        let now = self.now;
        let c = self
            .chain
            .as_mut()
            .expect("a chain's handler runs with a chain");
        let i = replica * c.workers[tier] + worker as usize;
        let hold = &mut c.holds[tier][i];
        let calls = &c.calls[tier];
        let (callee, id) = loop {
            let Some(&callee) = calls.to.get(hold.next as usize) else {
                return false;
            };
            let p = calls
                .probability
                .get(hold.next as usize)
                .copied()
                .unwrap_or(1.0);
            let id = addr::call(caller, hold.next);
            hold.next += 1;
            if p >= 1.0 || self.draws.at(Purpose::Call, id).random::<f64>() < p {
                break (callee, id);
            }
        };
        let Some(callers) = c.callers[callee].as_mut() else {
            return false;
        };
        hold.pending += 1;
        let own = callers
            .strategy
            .policy
            .deadline
            .map_or(SimTime::NEVER, |d| now + d);
        let deadline_at = if c.knows_deadline[callee] {
            own.min(caller_deadline)
        } else {
            own
        };
        if let Some(b) = &mut callers.guards.budget {
            b.on_request(now);
        }
        let slot = c.slots.allocate();
        let link = Link {
            tier: callee as u32,
            parent_tier: tier as u32,
            parent_replica: replica as u16,
            parent_worker: worker,
            parent_epoch: epoch,
        };
        if slot as usize >= c.links.len() {
            c.links.push(link);
        } else {
            c.links[slot as usize] = link;
        }
        c.slots.get(slot).begin(id, now, deadline_at, false);
        c.totals[callee].calls += 1;
        if c.hedging(callee).is_some() {
            self.hedged_start::<ChainCalls>(slot);
        } else {
            self.send_attempt::<ChainCalls>(slot);
        }
        true
    }
}
