//! Server-side handlers: admission, service completions, answers sent back over
//! the network, and outages.

use super::clients::Users;
use super::{ServerState, Sim};
use crate::engine::{Purpose, SimDuration, SimTime, Ticket};
use crate::metrics::recorder::Gauge;
use crate::model::event::{BAD_REQUEST, Event, Kind, READ_IN_PLACE};
use rand::RngExt;

use crate::model::server::{Admission, Finished, Job, Rejection};
use crate::model::{Observer, OutageKind};
use crate::retry::Outcome;

impl<O: Observer, const WHEEL: bool> Sim<'_, O, WHEEL> {
    #[inline(always)]
    pub(super) fn on_at_server(&mut self, ev: Event) {
        // A client that gave up on this attempt in transit: the server cannot tell,
        // so it still does the work, which is then wasted.
        let deadline = self
            .live::<Users>(ev.slot, ev.attempt)
            .unwrap_or(SimTime::ZERO);
        let job = Job {
            slot: ev.slot,
            attempt: ev.attempt,
            addr: self.slots.peek(ev.slot).address(ev.attempt),
            deadline,
            bad: ev.outcome == BAD_REQUEST,
            arrived: self.now,
            timeout: Ticket::from_bits(ev.aux),
            inflight: 0,
        };
        let r = usize::from(ev.replica);
        let server = match &mut self.server {
            ServerState::One(server) => server,
            ServerState::Fleet(fleet) => {
                let Some(server) = fleet.replicas.get_mut(r) else {
                    // The proxy found no healthy replica (`NO_UPSTREAM`): it
                    // answers 503 itself.
                    self.respond::<Users>(job, Outcome::Status503, None);
                    return;
                };
                if let Some(rec) = &mut self.per_replica {
                    rec.arrival(r, self.now);
                }
                server
            }
            ServerState::Occ(record) => {
                // The write of an OCC attempt; `aux` is the version it read,
                // or how long ago its read reached the record.
                let accepted = if ev.outcome == READ_IN_PLACE {
                    let read = SimTime(self.now.0 - u64::from(ev.aux));
                    record.write_read_at(read, self.now)
                } else {
                    record.write(ev.aux, self.now)
                };
                let outcome = if accepted {
                    Outcome::Ok
                } else {
                    Outcome::Status409
                };
                // (Its `aux` is no ticket: an OCC attempt's timeout stays.)
                let job = Job {
                    bad: false,
                    timeout: Ticket::NONE,
                    ..job
                };
                self.answer_user(job, outcome);
                return;
            }
        };
        // A transient-failure trigger answers 503 at once: a coin of the
        // attempt's own.
        let p = server.error_rate();
        if p > 0.0 && self.draws.at(Purpose::Failure, job.addr).random::<f64>() < p {
            self.respond::<Users>(job, Outcome::Status503, None);
            return;
        }
        match server.admit(job, self.now, self.draws) {
            Admission::Started { worker, done_at } => self.schedule_done(r, worker, done_at),
            Admission::Queued | Admission::Dropped | Admission::Deferred => {}
            Admission::Rejected(why) => self.refused(job, why),
            Admission::Crash => self.crash(r, job),
        }
        if self.defences.is_some() {
            self.note_limit(r);
        }
        self.update_server_gauges(r);
    }

    /// Records replica `r`'s concurrency limit now, if it has one.
    #[cold]
    #[inline(never)]
    fn note_limit(&mut self, r: usize) {
        let Some(limit) = self.server.replica(r).and_then(|s| s.limit(self.now)) else {
            return;
        };
        if let Some(d) = &mut self.defences {
            d.limit(r, self.now, limit);
        }
    }

    /// Answers 503 the requests replica `r`'s queue discipline (CoDel)
    /// dropped; they leave the server unserved.
    #[cold]
    #[inline(never)]
    fn answer_discarded(&mut self, r: usize) {
        let Some(server) = self.server.replica(r) else {
            return;
        };
        let discarded = std::mem::take(&mut server.discarded);
        for &job in &discarded {
            if let Some(d) = &mut self.defences {
                d.dropped(self.now);
            }
            self.depart(r, self.now - job.arrived);
            self.respond::<Users>(job, Outcome::Status503, None);
        }
        if let Some(server) = self.server.replica(r) {
            server.discarded = discarded;
            server.discarded.clear();
        }
    }

    /// A request left replica `r` after `sojourn` in it: Little's law's books,
    /// the fleet's and the replica's.
    #[inline]
    pub(super) fn depart(&mut self, r: usize, sojourn: SimDuration) {
        self.rec.departure(sojourn);
        if let Some(rec) = &mut self.per_replica {
            rec.departure(r, self.now, sojourn);
        }
    }

    /// In a call chain: the server's worker ended its own part of an
    /// attempt that makes calls, which it starts (true), or the usual
    /// completion applies (false).
    #[cold]
    #[inline(never)]
    fn entry_calls(&mut self, r: usize, ev: Event) -> bool {
        self.chain.as_ref().is_some_and(|c| c.calls_from(0))
            && self.chain_local_done(0, r, ev.slot, ev.attempt)
    }

    /// Accounts for the queued jobs replica `r` dropped unserved because
    /// their clients had given up (in the order it dropped them).
    #[inline(never)]
    pub(super) fn depart_dropped(&mut self, r: usize) {
        let mut dropped = std::mem::take(&mut self.dropped);
        for job in dropped.drain(..) {
            // Dropped because its deadline passed; a hedged copy may also be
            // dropped because it was cancelled, which is not an expiry.
            if job.deadline <= self.now {
                self.rec.expired_dropped();
            }
            self.depart(r, self.now - job.arrived);
        }
        self.dropped = dropped;
    }

    /// Sends the answer of a refusal.
    fn refused(&mut self, job: Job, why: Rejection) {
        match why {
            Rejection::Refused => self.respond::<Users>(job, Outcome::Refused, None),
            Rejection::Unavailable(ra) => self.respond::<Users>(job, Outcome::Status503, ra),
            Rejection::Limited => {
                self.rec.limited();
                if let Some(d) = &mut self.defences {
                    d.limited(self.now);
                }
                self.respond::<Users>(job, Outcome::Status503, None)
            }
            Rejection::Shed(ra) => {
                self.rec.shed();
                self.respond::<Users>(job, Outcome::Status429, ra)
            }
        };
    }

    /// Replica `r` crashes as `job` arrives: it and everything held fail with a
    /// reset, and the replica is back, cold, after its restart time.
    fn crash(&mut self, r: usize, job: Job) {
        let held = if self.chain.is_some() {
            self.holding_ns(0, r)
        } else {
            0
        };
        let Some(server) = self.server.replica(r) else {
            return;
        };
        let mut flushed = std::mem::take(&mut self.flushed);
        let back = server.crash(self.now, &mut flushed);
        if self.chain.is_some() {
            self.entry_flushed(&flushed, held);
        }
        self.rec.crash();
        if let Some(rec) = &mut self.per_replica {
            rec.crash(r, self.now);
        }
        let restart = Event {
            replica: r as u16,
            ..Event::new(Kind::Restart, 0, 0)
        };
        self.queue.push(back, restart);
        self.respond::<Users>(job, Outcome::Reset, None);
        self.flush_with(r, &mut flushed, Some((Outcome::Reset, None)));
        self.flushed = flushed;
    }

    /// Accounts for jobs a crash or an outage threw out, answering each with
    /// `reply` if any.
    fn flush_with(
        &mut self,
        r: usize,
        flushed: &mut Vec<Finished>,
        reply: Option<(Outcome, Option<SimDuration>)>,
    ) {
        for f in flushed.drain(..) {
            if f.refused.is_some() {
                // A refusal under way leaves the server; one still waiting was
                // never in it (the queue gauge does not count it).
                self.rec.reject_work(f.service);
                if f.service > SimDuration::ZERO {
                    self.depart(r, f.service);
                }
            } else {
                // Service cut short is work nobody can use.
                self.rec.work(f.service, true);
                self.depart(r, self.now - f.job.arrived);
            }
            if let Some((outcome, ra)) = reply {
                self.respond::<Users>(f.job, outcome, ra);
            }
        }
    }

    /// OCC: the read of an attempt reaches the record. The version goes back to
    /// the client, which at once sends its conditional write carrying it; as the
    /// client does nothing else in between, both hops are scheduled here and the
    /// write is the next event. A client that stopped waiting before the version
    /// arrived sends no write.
    pub(super) fn on_read_at_server(&mut self, ev: Event) {
        let ServerState::Occ(record) = &self.server else {
            return;
        };
        let version = record.read();
        let address = self.slots.peek(ev.slot).address(ev.attempt);
        let back = self.hop(Purpose::ReadBack, address);
        let out = self.hop(Purpose::WriteOut, address);
        let Some(deadline) = self.live::<Users>(ev.slot, ev.attempt) else {
            return;
        };
        if self.now + back >= deadline {
            return;
        }
        let write = Event {
            aux: version,
            ..Event::new(Kind::AtServer, ev.slot, ev.attempt)
        };
        self.queue.push(self.now + back + out, write);
    }

    pub(super) fn schedule_done(&mut self, r: usize, worker: u32, done_at: SimTime) {
        let Some(server) = self.server.replica(r) else {
            return;
        };
        // `aux` names the client, so the run loop can fetch its request
        // ahead (`Event::client`).
        let ev = Event {
            replica: r as u16,
            aux: server.slot_of(worker),
            ..Event::new(Kind::ServiceDone, worker, server.epoch())
        };
        self.queue.push(done_at, ev);
    }

    /// Replica `r` changed: the fleet's gauges, and the most any replica held.
    #[inline]
    pub(super) fn update_server_gauges(&mut self, r: usize) {
        match &self.server {
            ServerState::One(one) => {
                // One server, the common case: its own counts, nothing to sum
                // (kept small enough to inline into the run loop).
                let (queued, busy) = (one.queue_len() as u64, one.busy() as u64);
                self.rec.totals.peak_held = self.rec.totals.peak_held.max(queued + busy);
                self.rec.set(Gauge::Queue, self.now, queued);
                self.rec.set(Gauge::Busy, self.now, busy);
            }
            ServerState::Fleet(_) => self.update_fleet_gauges(r),
            ServerState::Occ(_) => {}
        }
    }

    /// [`Self::update_server_gauges`] for a fleet of more than one replica.
    #[inline(never)]
    fn update_fleet_gauges(&mut self, r: usize) {
        let ServerState::Fleet(fleet) = &mut self.server else {
            return;
        };
        let (queued, busy, held) = fleet.recount(r, self.now);
        self.rec.totals.peak_held = self.rec.totals.peak_held.max(held);
        if let Some(rec) = &mut self.per_replica {
            rec.held(r, self.now, held);
        }
        self.rec.set(Gauge::Queue, self.now, queued);
        self.rec.set(Gauge::Busy, self.now, busy);
    }

    pub(super) fn on_service_done(&mut self, ev: Event) {
        let r = usize::from(ev.replica);
        if self.chain.is_some() && self.entry_calls(r, ev) {
            return;
        }
        let Some(server) = self.server.replica(r) else {
            return;
        };
        let completed = if self.strategy.hedging.is_some_and(|h| h.cancel) {
            // A queued copy its user no longer waits for is dropped unserved
            // when the cancellation reaches the server.
            let (slots, copies) = (&self.slots, &self.copies);
            server.complete_if(
                ev.slot,
                ev.attempt,
                self.now,
                self.draws,
                &mut self.dropped,
                |job| copies.wanted(slots, job),
            )
        } else {
            server.complete_if(
                ev.slot,
                ev.attempt,
                self.now,
                self.draws,
                &mut self.dropped,
                |_| true,
            )
        };
        if !self.dropped.is_empty() {
            self.depart_dropped(r);
        }
        if self.defences.is_some() {
            self.answer_discarded(r);
            self.note_limit(r);
        }
        let Some((done, next)) = completed else {
            return;
        };
        if let Some((worker, done_at)) = next {
            self.schedule_done(r, worker, done_at);
        }
        if let Some(why) = done.refused {
            // In Little's law's books a refusal is in the server while a worker
            // refuses it (the busy gauge counts that worker), not while it waits.
            self.rec.reject_work(done.service);
            self.depart(r, done.service);
            self.refused(done.job, why);
            self.update_server_gauges(r);
            return;
        }
        let outcome = if done.job.bad {
            Outcome::Status400
        } else {
            Outcome::Ok
        };
        let delivered = if self.in_place {
            self.answer_user(done.job, outcome)
        } else {
            self.answer::<Users>(done.job, outcome)
        };
        if delivered && outcome == Outcome::Ok {
            if let Some(rec) = &mut self.per_replica {
                rec.served(r, self.now);
            }
        }
        self.rec.work(done.service, !delivered);
        self.depart(r, self.now - done.job.arrived);
        self.update_server_gauges(r);
    }

    pub(super) fn on_outage_start(&mut self, index: usize) {
        let Some(outage) = self.world.outages.get(index) else {
            return;
        };
        if matches!(self.server, ServerState::Occ(_)) {
            return;
        }
        if outage.tier > 0 {
            self.chain_outage(index, true);
            return;
        }
        if outage.kind == OutageKind::CacheFlush {
            self.cache_flush(true, self.now);
            return;
        }
        let reply = match outage.kind {
            OutageKind::Reset => Some((Outcome::Reset, None)),
            OutageKind::Unavailable { retry_after } => Some((Outcome::Status503, retry_after)),
            _ => None,
        };
        // The replicas it hits (by default every one: the whole service), in order.
        let hit = self.outage_targets.get(index).cloned().unwrap_or_default();
        for r in hit {
            let held = if self.chain.is_some() {
                self.holding_ns(0, r)
            } else {
                0
            };
            let Some(server) = self.server.replica(r) else {
                return;
            };
            let mut flushed = std::mem::take(&mut self.flushed);
            server.begin_outage(outage.kind, self.now, &mut flushed);
            if self.chain.is_some() {
                self.entry_flushed(&flushed, held);
            }
            self.flush_with(r, &mut flushed, reply);
            self.flushed = flushed;
            self.update_server_gauges(r);
        }
        if let OutageKind::Spike { .. } = outage.kind {
            let end = outage.end;
            self.schedule_spike_arrival(index, end, 0);
        }
    }

    pub(super) fn on_outage_end(&mut self, index: usize) {
        if self.world.outages.get(index).is_some_and(|o| o.tier > 0) {
            self.chain_outage(index, false);
            return;
        }
        if self.world.outages.get(index).map(|o| o.kind) == Some(OutageKind::CacheFlush) {
            self.cache_flush(false, self.now);
            return;
        }
        let hit = self.outage_targets.get(index);
        for &r in hit.into_iter().flatten() {
            if let Some(s) = self.server.replica(r) {
                s.end_outage(self.now);
            }
        }
    }
}
