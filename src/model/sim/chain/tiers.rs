//! The tiers below the server at run time: attempts arriving, served,
//! refused, crashed or thrown out by an outage, and the workers that held
//! an attempt for its calls freed and answering.

use super::*;

impl<O: Observer, const WHEEL: bool> Sim<'_, O, WHEEL> {
    /// An attempt of a call reaches its tier.
    #[cold]
    #[inline(never)]
    pub(in crate::model::sim) fn on_tier_at_server(&mut self, ev: Event) {
        let tier = ev.aux as usize;
        let r = usize::from(ev.replica);
        let deadline = self
            .live::<ChainCalls>(ev.slot, ev.attempt)
            .unwrap_or(SimTime::ZERO);
        let job = Job {
            slot: ev.slot,
            attempt: ev.attempt,
            addr: self.chain().slots.peek(ev.slot).address(ev.attempt),
            deadline,
            bad: false,
            arrived: self.now,
            timeout: Ticket::NONE,
            inflight: 0,
        };
        let now = self.now;
        let Some(server) =
            tier_server(&mut self.server, &mut self.chain, tier).and_then(|s| s.replica(r))
        else {
            // The callers' proxy found no healthy replica (`NO_UPSTREAM`):
            // it answers 503 itself.
            self.respond::<ChainCalls>(job, Outcome::Status503, None);
            return;
        };
        // A transient-failure trigger answers 503 at once: a coin of the
        // attempt's own.
        let p = server.error_rate();
        if p > 0.0 && self.draws.at(Purpose::Failure, job.addr).random::<f64>() < p {
            self.respond::<ChainCalls>(job, Outcome::Status503, None);
            return;
        }
        match server.admit(job, now, self.draws) {
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
            Rejection::Limited => (Outcome::Status503, None),
            Rejection::Shed(ra) => (Outcome::Status429, ra),
        };
        self.respond::<ChainCalls>(job, outcome, ra);
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
        self.respond::<ChainCalls>(job, Outcome::Reset, None);
        for f in flushed.drain(..) {
            self.chain().totals[tier].work_ns += f.service.0;
            self.chain().totals[tier].wasted_ns += f.service.0;
            self.respond::<ChainCalls>(f.job, Outcome::Reset, None);
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
    pub(in crate::model::sim) fn holding_ns(&mut self, tier: usize, r: usize) -> u64 {
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
    pub(in crate::model::sim) fn entry_flushed(&mut self, flushed: &[Finished], held: u64) {
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
    pub(in crate::model::sim) fn chain_outage(&mut self, index: usize, start: bool) {
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
                    self.respond::<ChainCalls>(f.job, outcome, ra);
                }
            }
            self.unhold(tier, held);
            self.flushed = flushed;
            self.tier_gauges(tier, r);
        }
    }

    #[cold]
    #[inline(never)]
    pub(in crate::model::sim) fn on_tier_restart(&mut self, ev: Event) {
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
    pub(in crate::model::sim) fn on_tier_service_done(&mut self, ev: Event) {
        let tier = ev.aux as usize;
        let r = usize::from(ev.replica);
        if self.chain().calls_from(tier) && self.chain_local_done(tier, r, ev.slot, ev.attempt) {
            return;
        }
        self.release_tier_worker(tier, r, ev.slot, ev.attempt, None);
    }

    /// Frees a worker of `tier` (below 0) and answers what it held: as
    /// served (`calls_ok` None: no calls), or after its calls.
    pub(super) fn release_tier_worker(
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
        let completed =
            server.complete_if(worker, epoch, now, self.draws, &mut self.dropped, |job| {
                !cancel || book.wanted(slots, job)
            });
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
            Some(ok) => (
                if ok { Outcome::Ok } else { Outcome::Status503 },
                self.own_part(tier, r, worker, done.service),
            ),
        };
        // Work for a call whose caller is gone is of no use, answered or not.
        let orphan = self.call_orphaned(done.job.slot);
        let delivered = self.answer::<ChainCalls>(done.job, outcome) && !orphan;
        // (A hedged call's OK is counted when it ends the call: two copies
        // may both answer OK.)
        self.count_work(
            tier,
            local,
            delivered,
            outcome == Outcome::Ok && hedging.is_none(),
        );
    }

    /// The part of a held attempt's `service` its worker spent on its own
    /// work, before its calls began.
    fn own_part(
        &mut self,
        tier: usize,
        r: usize,
        worker: u32,
        service: SimDuration,
    ) -> SimDuration {
        let now = self.now;
        let c = self.chain();
        let hold = c.holds[tier][r * c.workers[tier] + worker as usize];
        SimDuration(service.0.saturating_sub((now - hold.local_done).0))
    }

    /// `tier` did `local` of work on an attempt: wasted unless its answer was
    /// `delivered`, and one more OK counted if `ok`.
    fn count_work(&mut self, tier: usize, local: SimDuration, delivered: bool, ok: bool) {
        let t = &mut self.chain().totals[tier];
        t.work_ns += local.0;
        if !delivered {
            t.wasted_ns += local.0;
        } else if ok {
            t.ok += 1;
        }
    }

    /// Tier 0's worker ends after its calls: it is freed and answers the user.
    pub(super) fn release_entry_worker(&mut self, r: usize, worker: u32, epoch: u32, ok: bool) {
        let now = self.now;
        let Some(server) = self.server.replica(r) else {
            return;
        };
        // The users' queued copies they no longer wait for are dropped
        // unserved when the cancellation reaches the server.
        let cancel = self.strategy.hedging.is_some_and(|h| h.cancel);
        let (slots, copies) = (&self.slots, &self.copies);
        let completed =
            server.complete_if(worker, epoch, now, self.draws, &mut self.dropped, |job| {
                !cancel || copies.wanted(slots, job)
            });
        if !self.dropped.is_empty() {
            self.depart_dropped(r);
        }
        let Some((done, next)) = completed else {
            return;
        };
        if let Some((w, at)) = next {
            self.schedule_done(r, w, at);
        }
        let local = self.own_part(0, r, worker, done.service);
        let outcome = if ok { Outcome::Ok } else { Outcome::Status503 };
        let delivered = self.answer::<Users>(done.job, outcome);
        self.count_work(0, local, delivered, ok);
        self.rec.work(done.service, !delivered);
        self.depart(r, now - done.job.arrived);
        if delivered && ok {
            if let Some(rec) = &mut self.per_replica {
                rec.served(r, now);
            }
        }
        self.update_server_gauges(r);
    }
}
