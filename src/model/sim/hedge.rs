//! Hedged requests (gRPC's `hedgingPolicy`, see [`crate::retry::hedging`]):
//! the users' requests of a strategy that hedges send copies instead of
//! retries. Everything here runs only in such worlds; the others pay a check
//! of [`Sim::hedges`] where an answer or a timeout arrives.
//!
//! A request's copies are its attempts (`slot`, `attempt`) numbered in
//! order, so which of them are still out fits in a byte beside the slot:
//! bit `i` stands for the copy `attempt - i`, where `attempt` is the newest.
//! All copies share the request's time limit: gRPC has no per-attempt
//! timeout, and the strategy's `timeout` is the whole request's, from its
//! first copy (the service config's `timeout`).

use super::{ServerState, Sim};
use crate::engine::SimTime;
use crate::model::Observer;
use crate::model::client::{Phase, Slots};
use crate::model::event::{Event, Kind};
use crate::model::server::Job;
use crate::retry::{GiveUp, HedgingConfig, Outcome};

/// Copies a request can have out at once, at most: [`crate::retry::hedging::MAX_COPIES`]
/// rounded up to the bits of the byte that tracks them.
const RING: usize = 8;

/// The hedging policy of a run and the copies of each slot's request.
#[derive(Clone)]
pub(crate) struct Hedges {
    pub(super) cfg: HedgingConfig,
    pub(super) book: CopyBook,
}

/// The copies of one slot's request.
#[derive(Clone, Copy, Default)]
pub(super) struct Copies {
    /// Bit `i`: copy `attempt - i` is still out (answered neither way).
    pub(super) live: u8,
    /// Copies sent so far.
    pub(super) sent: u8,
    /// Each copy's replica and what the budget charged for it, by its
    /// attempt number modulo [`RING`].
    replica: [u16; RING],
    charged: [u32; RING],
}

impl Copies {
    /// The bit of copy `attempt` when the newest is `latest`, if it is out.
    fn bit(&self, latest: u32, attempt: u32) -> Option<u8> {
        let i = latest.wrapping_sub(attempt);
        (i < RING as u32 && self.live & (1 << i) != 0).then_some(1 << i)
    }

    /// Copy `attempt`, the newest, went out to `replica`, the budget
    /// charging `charged` for it.
    pub(super) fn sent(&mut self, attempt: u32, replica: u16, charged: u32) {
        self.live = self.live << 1 | 1;
        self.sent += 1;
        self.replica[attempt as usize % RING] = replica;
        self.charged[attempt as usize % RING] = charged;
    }

    /// Copy `attempt` is over (the newest being `latest`): its replica and
    /// charge, or None if it was not out.
    pub(super) fn over(&mut self, latest: u32, attempt: u32) -> Option<(u16, u32)> {
        let bit = self.bit(latest, attempt)?;
        self.live &= !bit;
        let i = attempt as usize % RING;
        Some((self.replica[i], self.charged[i]))
    }

    /// The copies out, oldest first, the newest being `latest` (a
    /// snapshot that borrows nothing).
    pub(super) fn out(&self, latest: u32) -> impl Iterator<Item = u32> + use<> {
        let live = self.live;
        (0..RING as u32)
            .rev()
            .filter(move |i| live & (1 << i) != 0)
            .map(move |i| latest.wrapping_sub(i))
    }
}

/// The copies of each slot's request (users' requests, or a chain's calls).
#[derive(Clone, Default)]
pub(super) struct CopyBook {
    copies: Vec<Copies>,
}

impl CopyBook {
    pub(super) fn get(&mut self, slot: u32) -> &mut Copies {
        let i = slot as usize;
        if self.copies.len() <= i {
            self.copies.resize(i + 1, Copies::default());
        }
        &mut self.copies[i]
    }

    /// Whether the copy (`slot`, `attempt`) is still out, its newest copy
    /// being `latest`.
    pub(super) fn is_out(&self, slot: u32, latest: u32, attempt: u32) -> bool {
        self.copies
            .get(slot as usize)
            .is_some_and(|c| c.bit(latest, attempt).is_some())
    }

    /// Whether `job`'s caller still waits for it, its slots being `slots`.
    pub(super) fn wanted(&self, slots: &Slots, job: &Job) -> bool {
        let r = slots.peek(job.slot);
        r.phase == Phase::Waiting && self.is_out(job.slot, r.attempt, job.attempt)
    }
}

impl Hedges {
    pub(super) fn new(cfg: HedgingConfig) -> Self {
        Hedges {
            cfg,
            book: CopyBook::default(),
        }
    }

    fn get(&mut self, slot: u32) -> &mut Copies {
        self.book.get(slot)
    }

    /// Whether the copy (`slot`, `attempt`) is still out, its newest copy
    /// being `latest`.
    pub(super) fn is_out(&self, slot: u32, latest: u32, attempt: u32) -> bool {
        self.book.is_out(slot, latest, attempt)
    }

    /// Whether `job`'s client still waits for it: a queued copy that is not
    /// is dropped unserved when its cancellation reaches the server.
    pub(super) fn wanted(&self, slots: &Slots, job: &Job) -> bool {
        self.book.wanted(slots, job)
    }
}

impl<O: Observer, const WHEEL: bool> Sim<'_, O, WHEEL> {
    /// The first copy of the request just begun in `slot`, and its one timer:
    /// the request's time limit.
    #[cold]
    #[inline(never)]
    pub(super) fn hedged_start(&mut self, slot: u32) {
        let Some(h) = &mut self.hedges else {
            return;
        };
        *h.get(slot) = Copies::default();
        if self.send_copy(slot, None).is_ok() {
            let r = self.slots.get(slot);
            let (attempt, at) = (r.attempt, r.attempt_deadline);
            if at < SimTime::NEVER {
                self.queue
                    .push(at, Event::new(Kind::Timeout, slot, attempt));
            }
        }
    }

    /// Sends the next copy of `slot`'s request: the first when `after` is
    /// None, else a hedge after a delay (`Outcome::Timeout`: none came back
    /// in time) or after a non-fatal failure. It may not go: the throttle or
    /// the breaker may refuse it (`RejectedLocally`), the budget deny a hedge
    /// (`BudgetDenied`). A refused first copy ends the request.
    fn send_copy(&mut self, slot: u32, after: Option<Outcome>) -> Result<(), GiveUp> {
        let now = self.now;
        let Some(probe) = self.local_verdict() else {
            self.rec.rejected_locally(after.is_none());
            if after.is_none() {
                self.rec.failure(GiveUp::RejectedLocally);
                self.end_request(slot, Some(GiveUp::RejectedLocally));
            }
            return Err(GiveUp::RejectedLocally);
        };
        let mut charged = 0;
        if let (Some(outcome), Some(b)) = (after, &mut self.budget) {
            match b.try_retry(now, outcome) {
                // A copy goes out at once.
                Some(cost) => charged = b.on_retry_sent(cost),
                None => return Err(GiveUp::BudgetDenied),
            }
        }
        let timeout_at = self.strategy.policy.timeout.map(|t| now + t);
        let r = self.slots.get(slot);
        r.probe = probe;
        if after.is_some() {
            // Every copy shares the first one's time limit.
            let limit = r.attempt_deadline;
            r.next_attempt(None);
            r.attempt_deadline = limit;
            r.retries += 1;
        } else {
            r.next_attempt(timeout_at);
        }
        let (attempt, retries, deadline_at, limit, bad) = (
            r.attempt,
            r.retries,
            r.deadline_at,
            r.attempt_deadline,
            r.bad,
        );
        let replica = self.dispatch(slot, attempt, retries, bad);
        let Some(h) = &mut self.hedges else {
            return Ok(());
        };
        let (max, delay) = (h.cfg.max_attempts, h.cfg.delay);
        let c = h.get(slot);
        c.sent(attempt, replica, charged);
        if c.sent < max && now + delay < limit {
            self.queue
                .push(now + delay, Event::new(Kind::Hedge, slot, attempt));
        }
        self.rec.attempt(after.is_some());
        self.obs.attempt_sent(now, slot, retries, deadline_at);
        Ok(())
    }

    /// The hedging delay after copy (`slot`, `attempt`) is over: if no copy
    /// has been sent since and no answer has ended the request, the next one
    /// goes.
    pub(super) fn on_hedge_timer(&mut self, ev: Event) {
        let r = self.slots.get(ev.slot);
        if r.phase == Phase::Waiting && r.attempt == ev.attempt {
            // Denied or refused, the copies out still run: no more hedges
            // unless one of them fails.
            let _ = self.send_copy(ev.slot, Some(Outcome::Timeout));
        }
    }

    /// Copy `attempt` of `slot` is over at the client: it is no longer out,
    /// and the balancer (and the fleet's health checks, given `outcome`)
    /// learn it. Returns the budget's charge for it, or None if it was not out.
    fn copy_over(&mut self, slot: u32, attempt: u32, outcome: Option<Outcome>) -> Option<u32> {
        let latest = self.slots.get(slot).attempt;
        let (replica, charged) = self.hedges.as_mut()?.get(slot).over(latest, attempt)?;
        if let ServerState::Fleet(fleet) = &mut self.server {
            let r = usize::from(replica);
            if fleet.balance.chooses() {
                fleet.balance.done(r);
            }
            if let (Some(outcome), true) = (outcome, fleet.health.is_some()) {
                self.fleet_observe(0, r, outcome);
            }
        }
        Some(charged)
    }

    /// The copies of `slot`'s request still out now, oldest first (a
    /// snapshot: it borrows nothing, so the caller may end them as it goes,
    /// and allocates nothing).
    fn copies_out(&mut self, slot: u32) -> impl Iterator<Item = u32> + use<O, WHEEL> {
        let latest = self.slots.get(slot).attempt;
        let copies = self
            .hedges
            .as_mut()
            .map(|h| *h.get(slot))
            .unwrap_or_default();
        copies.out(latest)
    }

    /// The request has its answer (or has failed): the copies still out are
    /// cancelled. Their budget charges are released, unspent.
    fn cancel_copies(&mut self, slot: u32) {
        for attempt in self.copies_out(slot) {
            if let Some(charged) = self.copy_over(slot, attempt, None) {
                if let Some(b) = &mut self.budget {
                    b.on_retry_abandoned(charged);
                }
            }
        }
    }

    #[cold]
    #[inline(never)]
    pub(super) fn on_hedged_response(&mut self, ev: Event) {
        let r = self.slots.get(ev.slot);
        if r.phase != Phase::Waiting {
            return;
        }
        let outcome = Outcome::from_u8(ev.outcome);
        let Some(charged) = self.copy_over(ev.slot, ev.attempt, Some(outcome)) else {
            return;
        };
        self.rec.outcome(outcome);
        self.obs.attempt_ended(self.now, ev.slot, outcome);
        self.observe_outcome(ev.slot, outcome);
        if outcome == Outcome::Ok {
            let latency = self.now - self.slots.get(ev.slot).started;
            self.rec.success(self.now, latency);
            if let Some(b) = &mut self.budget {
                b.on_success(charged);
            }
            self.cancel_copies(ev.slot);
            self.end_request(ev.slot, None);
            return;
        }
        if let Some(b) = &mut self.budget {
            b.on_failure(outcome, charged);
        }
        if !self.strategy.policy.retry_on.contains(outcome) {
            // A fatal answer ends the request, as gRPC commits to it.
            self.hedged_failure(ev.slot, GiveUp::NotRetryable);
            return;
        }
        // A non-fatal one sends the next copy at once, if one is left.
        let (sent, max) = match &mut self.hedges {
            Some(h) => (h.get(ev.slot).sent, h.cfg.max_attempts),
            None => return,
        };
        let limit = self.slots.get(ev.slot).attempt_deadline;
        let why = if sent >= max {
            GiveUp::RetriesExhausted
        } else if self.now >= limit {
            GiveUp::DeadlineExceeded
        } else {
            match self.send_copy(ev.slot, Some(outcome)) {
                Ok(()) => return,
                Err(why) => why,
            }
        };
        // Nothing more goes out: the request waits for the copies still out,
        // or fails now if there are none.
        let out = self
            .hedges
            .as_mut()
            .is_some_and(|h| h.get(ev.slot).live != 0);
        if !out {
            self.hedged_failure(ev.slot, why);
        }
    }

    /// The request's time limit: every copy still out times out, and the
    /// request fails.
    #[cold]
    #[inline(never)]
    pub(super) fn on_hedged_timeout(&mut self, ev: Event) {
        let r = self.slots.get(ev.slot);
        let sent = self.hedges.as_mut().map_or(0, |h| h.get(ev.slot).sent);
        if r.phase != Phase::Waiting || r.attempt.wrapping_sub(ev.attempt) >= u32::from(sent) {
            return;
        }
        for attempt in self.copies_out(ev.slot) {
            if let Some(charged) = self.copy_over(ev.slot, attempt, Some(Outcome::Timeout)) {
                self.rec.outcome(Outcome::Timeout);
                self.obs.attempt_ended(self.now, ev.slot, Outcome::Timeout);
                self.observe_outcome(ev.slot, Outcome::Timeout);
                if let Some(b) = &mut self.budget {
                    b.on_failure(Outcome::Timeout, charged);
                }
            }
        }
        self.hedged_failure(ev.slot, GiveUp::DeadlineExceeded);
    }

    fn hedged_failure(&mut self, slot: u32, why: GiveUp) {
        self.cancel_copies(slot);
        self.rec.failure(why);
        self.end_request(slot, Some(why));
    }

    /// The server has served the copy `job`: the answer goes back unless its
    /// client no longer waits for it and the server was told so. Returns
    /// whether the work was of use: false for a copy the client no longer
    /// waits for when it is served (the answer of a copy served while
    /// another's is on its way back is counted of use).
    #[cold]
    #[inline(never)]
    pub(super) fn answer_copy(&mut self, job: Job, outcome: Outcome) -> bool {
        let (wanted, cancel) = self.hedges.as_ref().map_or((true, false), |h| {
            (h.wanted(&self.slots, &job), h.cfg.cancel)
        });
        if !wanted && cancel {
            return false;
        }
        self.respond(job, outcome, None) && wanted
    }
}
