//! Hedged requests (gRPC's `hedgingPolicy`, see [`crate::retry::hedging`]):
//! the requests of callers whose strategy hedges (the users', or a tier's
//! callers in a chain, [`Side`]) send copies instead of retries: a copy
//! every `delay` while no answer has come, up to `max_attempts`, the first
//! good answer winning; a non-fatal failure sends the next copy at once, a
//! fatal one fails the request. The callers' throttle and breaker judge
//! every copy, their budget each copy after the first. Everything here runs
//! only for such requests; the others pay a check where an answer or a
//! timeout arrives.
//!
//! A request's copies are its attempts (`slot`, `attempt`) numbered in
//! order, so which of them are still out fits in a byte beside the slot:
//! bit `i` stands for the copy `attempt - i`, where `attempt` is the newest.
//! All copies share the request's time limit: gRPC has no per-attempt
//! timeout, and the strategy's `timeout` is the whole request's, from its
//! first copy (the service config's `timeout`).

use super::Sim;
use super::callers::Side;
use crate::engine::{SimTime, Ticket};
use crate::model::Observer;
use crate::model::client::{Phase, Slots};
use crate::model::event::Event;
use crate::model::server::Job;
use crate::retry::{GiveUp, Outcome};

/// Copies a request can have out at once, at most: [`crate::retry::hedging::MAX_COPIES`]
/// rounded up to the bits of the byte that tracks them.
const RING: usize = 8;

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
        (i < RING as u32 && self.live & (1 << i) != 0).then(|| 1 << i)
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

    /// The replica copy `attempt` went to.
    pub(super) fn replica_of(&self, attempt: u32) -> u16 {
        self.replica[attempt as usize % RING]
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
pub(crate) struct CopyBook {
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

impl<O: Observer, const WHEEL: bool> Sim<'_, O, WHEEL> {
    /// The first copy of the request just begun in `slot`, and its one
    /// timer: the request's time limit.
    #[cold]
    #[inline(never)]
    pub(super) fn hedged_start<S: Side>(&mut self, slot: u32) {
        *S::parts(self, slot).book.get(slot) = Copies::default();
        if self.send_copy::<S>(slot, None).is_ok() {
            let r = S::parts(self, slot).slots.get(slot);
            let (attempt, at) = (r.attempt, r.attempt_deadline);
            if at < SimTime::NEVER {
                self.queue.push(at, Event::new(S::TIMEOUT, slot, attempt));
            }
        }
    }

    /// Sends the next copy of `slot`'s request: the first when `after` is
    /// None, else a hedge after a delay (`Outcome::Timeout`: none came back
    /// in time) or after a non-fatal failure. It may not go: the throttle or
    /// the breaker may refuse it (`RejectedLocally`), the budget deny a hedge
    /// (`BudgetDenied`). A refused first copy ends the request.
    fn send_copy<S: Side>(&mut self, slot: u32, after: Option<Outcome>) -> Result<(), GiveUp> {
        let now = self.now;
        let Some(h) = S::hedging(self, slot) else {
            return Err(GiveUp::NotRetryable);
        };
        let Some(probe) = self.verdict::<S>(slot) else {
            S::refused_locally(self, slot, after.is_none());
            if after.is_none() {
                self.give_up::<S>(slot, GiveUp::RejectedLocally);
            }
            return Err(GiveUp::RejectedLocally);
        };
        let mut p = S::parts(self, slot);
        let mut charged = 0;
        if let (Some(outcome), Some(b)) = (after, p.guards.budget()) {
            match b.try_retry(now, outcome) {
                // A copy goes out at once.
                Some(cost) => charged = b.on_retry_sent(cost),
                None => return Err(GiveUp::BudgetDenied),
            }
        }
        let timeout_at = p.strategy.policy.timeout.map(|t| now + t);
        let r = p.slots.get(slot);
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
        let (attempt, retries, limit) = (r.attempt, r.retries, r.attempt_deadline);
        let replica = S::dispatch(self, slot, attempt, retries, Ticket::NONE);
        let c = S::parts(self, slot).book.get(slot);
        c.sent(attempt, replica, charged);
        if c.sent < h.max_attempts && now + h.delay < limit {
            self.queue
                .push(now + h.delay, Event::new(S::HEDGE, slot, attempt));
        }
        S::sent(self, slot, retries);
        Ok(())
    }

    /// The hedging delay after copy (`slot`, `attempt`) is over: if no copy
    /// has been sent since and no answer has ended the request, the next one
    /// goes.
    pub(super) fn on_hedge_timer<S: Side>(&mut self, ev: Event) {
        let r = S::parts(self, ev.slot).slots.get(ev.slot);
        if r.phase == Phase::Waiting && r.attempt == ev.attempt {
            // Denied or refused, the copies out still run: no more hedges
            // unless one of them fails.
            let _ = self.send_copy::<S>(ev.slot, Some(Outcome::Timeout));
        }
    }

    /// Copy `attempt` of `slot` is over at its caller: it is no longer out,
    /// and the balancer (and the fleet's outlier detection, given `outcome`)
    /// learn it. Returns the budget's charge for it, or None if it was not out.
    fn copy_over<S: Side>(
        &mut self,
        slot: u32,
        attempt: u32,
        outcome: Option<Outcome>,
    ) -> Option<u32> {
        let p = S::parts(self, slot);
        let r = p.slots.get(slot);
        let (latest, view) = (r.attempt, r.proxy);
        let (replica, charged) = p.book.get(slot).over(latest, attempt)?;
        let tier = S::tier(self, slot);
        self.replica_attempt_over(tier, usize::from(replica), view, outcome);
        Some(charged)
    }

    /// The copies of `slot`'s request still out now, oldest first (a
    /// snapshot: it borrows nothing, so the caller may end them as it goes,
    /// and allocates nothing).
    fn copies_out<S: Side>(&mut self, slot: u32) -> impl Iterator<Item = u32> + use<O, WHEEL, S> {
        let p = S::parts(self, slot);
        let latest = p.slots.get(slot).attempt;
        p.book.get(slot).out(latest)
    }

    /// The request has its answer (or has failed): the copies still out are
    /// cancelled. Their budget charges are released, unspent.
    fn cancel_copies<S: Side>(&mut self, slot: u32) {
        let cancel = S::hedging(self, slot).is_some_and(|h| h.cancel);
        for attempt in self.copies_out::<S>(slot) {
            let replica = S::parts(self, slot).book.get(slot).replica_of(attempt);
            if let Some(charged) = self.copy_over::<S>(slot, attempt, None) {
                if let Some(b) = S::parts(self, slot).guards.budget() {
                    b.on_retry_abandoned(charged);
                }
                if cancel && self.chain.is_some() {
                    let tier = S::tier(self, slot);
                    self.cancel_held_copy(tier, usize::from(replica), slot, attempt);
                }
            }
        }
    }

    /// An answer to one of `slot`'s copies.
    #[cold]
    #[inline(never)]
    pub(super) fn on_hedged_response<S: Side>(&mut self, ev: Event) {
        if S::parts(self, ev.slot).slots.get(ev.slot).phase != Phase::Waiting {
            return;
        }
        let outcome = Outcome::from_u8(ev.outcome);
        let Some(charged) = self.copy_over::<S>(ev.slot, ev.attempt, Some(outcome)) else {
            return;
        };
        S::attempt_ended(self, ev.slot, outcome);
        self.observe::<S>(ev.slot, outcome);
        if outcome == Outcome::Ok {
            S::succeeded(self, ev.slot);
            if let Some(b) = S::parts(self, ev.slot).guards.budget() {
                b.on_success(charged);
            }
            self.cancel_copies::<S>(ev.slot);
            self.end::<S>(ev.slot, None);
            return;
        }
        let mut p = S::parts(self, ev.slot);
        if let Some(b) = p.guards.budget() {
            b.on_failure(outcome, charged);
        }
        if !p.strategy.policy.retry_on.contains(outcome) {
            // A fatal answer ends the request, as gRPC commits to it.
            self.hedged_failure::<S>(ev.slot, GiveUp::NotRetryable);
            return;
        }
        // A non-fatal one sends the next copy at once, if one is left.
        let max = p.strategy.hedging.map_or(0, |h| h.max_attempts);
        let sent = p.book.get(ev.slot).sent;
        let limit = p.slots.get(ev.slot).attempt_deadline;
        let why = if sent >= max {
            GiveUp::RetriesExhausted
        } else if self.now >= limit {
            GiveUp::DeadlineExceeded
        } else {
            match self.send_copy::<S>(ev.slot, Some(outcome)) {
                Ok(()) => return,
                Err(why) => why,
            }
        };
        // Nothing more goes out: the request waits for the copies still out,
        // or fails now if there are none.
        if S::parts(self, ev.slot).book.get(ev.slot).live == 0 {
            self.hedged_failure::<S>(ev.slot, why);
        }
    }

    /// The request's time limit: every copy still out times out, and the
    /// request fails.
    #[cold]
    #[inline(never)]
    pub(super) fn on_hedged_timeout<S: Side>(&mut self, ev: Event) {
        let p = S::parts(self, ev.slot);
        let r = p.slots.get(ev.slot);
        let sent = p.book.get(ev.slot).sent;
        if r.phase != Phase::Waiting || r.attempt.wrapping_sub(ev.attempt) >= u32::from(sent) {
            return;
        }
        for attempt in self.copies_out::<S>(ev.slot) {
            if let Some(charged) = self.copy_over::<S>(ev.slot, attempt, Some(Outcome::Timeout)) {
                S::attempt_ended(self, ev.slot, Outcome::Timeout);
                self.observe::<S>(ev.slot, Outcome::Timeout);
                if let Some(b) = S::parts(self, ev.slot).guards.budget() {
                    b.on_failure(Outcome::Timeout, charged);
                }
            }
        }
        self.hedged_failure::<S>(ev.slot, GiveUp::DeadlineExceeded);
    }

    fn hedged_failure<S: Side>(&mut self, slot: u32, why: GiveUp) {
        self.cancel_copies::<S>(slot);
        self.give_up::<S>(slot, why);
    }
}
