//! The one attempt path, for every kind of caller ([`Side`]): an attempt
//! goes out unless the throttle or the breaker refuses it, its answer or
//! its timeout comes back, the breaker and the throttle learn the outcome,
//! and the request ends or, as its strategy decides, waits out a backoff
//! and tries again. Hedged requests take [`super::hedge`] from the answer on.

use super::callers::{Side, retry_after};
use super::clients::Users;
use super::{ServerState, Sim};
use crate::engine::{Purpose, SimDuration, SimTime, Ticket};
use crate::model::Observer;
use crate::model::client::Phase;
use crate::model::event::{Event, Kind, NO_RETRY_AFTER};
use crate::model::server::Job;
use crate::retry::budget::UNCOUNTED;
use crate::retry::{Admit, Decision, GiveUp, Outcome};

impl<O: Observer, const WHEEL: bool> Sim<'_, O, WHEEL> {
    /// What the throttle and the breaker of `slot`'s callers say to an
    /// attempt now: `None` refused, `Some(true)` let through as a half-open
    /// probe, `Some(false)` let through.
    #[inline(always)]
    pub(super) fn verdict<S: Side>(&mut self, slot: u32) -> Option<bool> {
        let now = self.now;
        let mut p = S::parts(self, slot);
        // The coin's address is hashed only when a throttle asks for it.
        let (draws, slots) = (p.draws, &*p.slots);
        let coin = || draws.at(Purpose::Throttle, slots.peek(slot).next_address());
        if !p.guards.throttle_lets(now, coin) {
            return None;
        }
        // An open time that ends now ends before this attempt is judged.
        S::breaker_due(self, slot);
        S::parts(self, slot).guards.breaker_verdict(now)
    }

    /// An attempt's outcome reaches `slot`'s callers: their throttle and
    /// breaker learn it.
    pub(super) fn observe<S: Side>(&mut self, slot: u32, outcome: Outcome) {
        let now = self.now;
        let mut p = S::parts(self, slot);
        if let Some(t) = p.guards.throttle() {
            t.on_answer(now, outcome);
        }
        let failed = p.strategy.policy.retry_on.contains(outcome);
        let r = p.slots.peek(slot);
        let opened = match p.guards.breaker() {
            Some(b) => {
                let mut rng = p.draws.at(Purpose::Breaker, r.current_address());
                b.record(failed, r.probe, now, &mut rng)
            }
            None => None,
        };
        if let Some(until) = opened {
            S::breaker_opened(self, slot, until);
        }
    }

    /// `slot`'s caller still waits for its attempt `attempt`: the attempt's
    /// time limit, else None.
    #[inline(always)]
    pub(super) fn live<S: Side>(&mut self, slot: u32, attempt: u32) -> Option<SimTime> {
        let p = S::parts(self, slot);
        let r = p.slots.peek(slot);
        if r.phase != Phase::Waiting {
            return None;
        }
        // An earlier copy of a hedged request may still be out.
        (r.attempt == attempt || p.book.is_out(slot, r.attempt, attempt))
            .then_some(r.attempt_deadline)
    }

    /// An attempt through view `view` (its proxy's, or the one all share)
    /// to `tier`'s replica `r` is over at its caller: one fewer outstanding
    /// there, and the view's outlier detection learns its `outcome` (None: a
    /// cancelled copy, which teaches nothing).
    pub(super) fn replica_attempt_over(
        &mut self,
        tier: usize,
        r: usize,
        view: u16,
        outcome: Option<Outcome>,
    ) {
        if let Some(ServerState::Fleet(f)) =
            super::chain::tier_server(&mut self.server, &mut self.chain, tier)
        {
            f.balance(view).done(r);
            if let (Some(outcome), true) = (outcome, f.health.is_some()) {
                self.fleet_observe(tier, r, view, outcome);
            }
        }
    }

    /// The current attempt of `slot` is over at its caller with `outcome`.
    #[inline(always)]
    fn attempt_over<S: Side>(&mut self, slot: u32, outcome: Outcome) {
        if matches!(self.server, ServerState::Fleet(_)) || self.chain.is_some() {
            let r = S::parts(self, slot).slots.peek(slot);
            let (replica, view) = (usize::from(r.replica), r.proxy);
            let tier = S::tier(self, slot);
            self.replica_attempt_over(tier, replica, view, Some(outcome));
        }
        if S::POOLED && !self.pools.is_empty() {
            self.connection_freed(slot);
        }
    }

    /// Sends the next attempt of `slot`, unless its callers' throttle or
    /// breaker refuses it, which ends the request.
    pub(super) fn send_attempt<S: Side>(&mut self, slot: u32) {
        let now = self.now;
        let Some(probe) = self.verdict::<S>(slot) else {
            self.refuse::<S>(slot);
            return;
        };
        if S::POOLED && !self.pools.is_empty() && self.pool_admit(slot, probe) != Admit::Go {
            return;
        }
        let p = S::parts(self, slot);
        let timeout_at = p.strategy.policy.timeout.map(|t| now + t);
        let r = p.slots.get(slot);
        r.probe = probe;
        let (attempt, deadline) = r.next_attempt(timeout_at);
        let retries = r.retries;
        let timeout = Event::new(S::TIMEOUT, slot, attempt);
        let mut ticket = Ticket::NONE;
        if Some(deadline) == timeout_at {
            // Most timeouts have one length, so they come in time order.
            ticket = self.queue.push_in_order(deadline, timeout);
        } else if deadline < SimTime::NEVER {
            // The request's deadline cuts this attempt short.
            self.queue.push(deadline, timeout);
        }
        S::dispatch(self, slot, attempt, retries, ticket);
        S::sent(self, slot, retries);
    }

    /// The next attempt of `slot` is refused at its caller (by the throttle,
    /// the breaker or its proxy's pool), which ends the request: a retry
    /// that does not go gives the budget its charge back.
    pub(super) fn refuse<S: Side>(&mut self, slot: u32) {
        let mut p = S::parts(self, slot);
        let r = p.slots.get(slot);
        let (first, charged) = (r.retries == 0, r.charged);
        if let Some(b) = p.guards.budget() {
            b.on_retry_abandoned(charged);
        }
        S::refused_locally(self, slot, first);
        self.give_up::<S>(slot, GiveUp::RejectedLocally);
    }

    /// An answer reaches `slot`'s caller.
    pub(super) fn on_response<S: Side>(&mut self, ev: Event) {
        if S::hedging(self, ev.slot).is_some() {
            self.on_hedged_response::<S>(ev);
            return;
        }
        if self.live::<S>(ev.slot, ev.attempt).is_none() {
            return;
        }
        let outcome = Outcome::from_u8(ev.outcome);
        self.attempt_over::<S>(ev.slot, outcome);
        S::attempt_ended(self, ev.slot, outcome);
        self.observe::<S>(ev.slot, outcome);
        if outcome == Outcome::Ok {
            S::succeeded(self, ev.slot);
            let mut p = S::parts(self, ev.slot);
            let charged = p.slots.get(ev.slot).charged;
            if let Some(b) = p.guards.budget() {
                b.on_success(charged);
            }
            self.end::<S>(ev.slot, None);
        } else {
            self.after_failure::<S>(ev.slot, outcome, retry_after(ev.aux));
        }
    }

    /// An attempt of `slot` times out at its caller.
    pub(super) fn on_timeout<S: Side>(&mut self, ev: Event) {
        if S::hedging(self, ev.slot).is_some() {
            self.on_hedged_timeout::<S>(ev);
            return;
        }
        if S::POOLED && !self.pools.is_empty() && self.deadline_while_waiting(ev) {
            return;
        }
        if self.live::<S>(ev.slot, ev.attempt).is_none() {
            return;
        }
        self.attempt_over::<S>(ev.slot, Outcome::Timeout);
        S::attempt_ended(self, ev.slot, Outcome::Timeout);
        self.observe::<S>(ev.slot, Outcome::Timeout);
        self.after_failure::<S>(ev.slot, Outcome::Timeout, None);
    }

    /// A backoff is over: the retry goes, unless the request has moved on
    /// or was cancelled with its caller.
    pub(super) fn on_backoff_over<S: Side>(&mut self, ev: Event) {
        let r = S::parts(self, ev.slot).slots.get(ev.slot);
        if r.phase == Phase::BackingOff && r.attempt == ev.attempt {
            S::backing_off(self, -1);
            if S::abandoned(self, ev.slot) {
                self.give_up::<S>(ev.slot, GiveUp::NotRetryable);
                return;
            }
            self.retry_sent::<S>(ev.slot);
            self.send_attempt::<S>(ev.slot);
        }
    }

    /// A retry goes out: a budget that counts retries only once sent (as
    /// Envoy's) counts it now.
    fn retry_sent<S: Side>(&mut self, slot: u32) {
        let mut p = S::parts(self, slot);
        let r = p.slots.get(slot);
        if r.charged == UNCOUNTED {
            if let Some(b) = p.guards.budget() {
                r.charged = b.on_retry_sent(r.charged);
            }
        }
    }

    /// An attempt of `slot` failed with `outcome`: its strategy decides
    /// whether and when it tries again.
    pub(super) fn after_failure<S: Side>(
        &mut self,
        slot: u32,
        outcome: Outcome,
        retry_after: Option<SimDuration>,
    ) {
        if S::abandoned(self, slot) {
            // Cancelled with its caller: no retry.
            self.give_up::<S>(slot, GiveUp::NotRetryable);
            return;
        }
        let now = self.now;
        let mut p = S::parts(self, slot);
        let r = p.slots.get(slot);
        let mut rng = p.draws.at(Purpose::Jitter, r.current_address());
        let decision = r.after_failure(
            p.strategy,
            p.guards.budget(),
            outcome,
            retry_after,
            now,
            &mut rng,
        );
        match decision {
            Decision::Retry(delay) if delay == SimDuration::ZERO => {
                self.retry_sent::<S>(slot);
                self.send_attempt::<S>(slot);
            }
            Decision::Retry(delay) => {
                let r = p.slots.get(slot);
                r.phase = Phase::BackingOff;
                let attempt = r.attempt;
                S::backing_off(self, 1);
                let send = Event::new(S::SEND, slot, attempt);
                if self.rec.further(now + delay) {
                    // An answer handled in place: the retry too.
                    self.now = now + delay;
                    self.on_backoff_over::<S>(send);
                    self.now = now;
                } else {
                    self.queue.push(now + delay, send);
                }
            }
            Decision::GiveUp(why) => self.give_up::<S>(slot, why),
        }
    }

    /// `slot`'s request fails for good.
    pub(super) fn give_up<S: Side>(&mut self, slot: u32, why: GiveUp) {
        S::failed(self, slot, why);
        self.end::<S>(slot, Some(why));
    }

    /// `slot`'s request is over (`failure` None: it succeeded).
    pub(super) fn end<S: Side>(&mut self, slot: u32, failure: Option<GiveUp>) {
        let mut p = S::parts(self, slot);
        p.slots.get(slot).phase = Phase::Idle;
        if let Some(b) = p.guards.budget() {
            b.on_request_end();
        }
        S::ended(self, slot, failure);
    }

    /// Sends `outcome` back to `job`'s user. Where nothing but the answer can
    /// act on the user before it arrives and until their next attempt
    /// leaves ([`Sim::in_place`](super::in_place)), its arrival, the user's
    /// decision and the retry's departure are handled now, recorded ahead
    /// at their own times: no event for the answer and none for the end of
    /// the backoff. Returns false (and handles nothing) when the answer
    /// would arrive at or after the user stopped waiting.
    pub(super) fn answer_user(&mut self, job: Job, outcome: Outcome) -> bool {
        if self.in_place {
            let now = self.now;
            let at = now + self.hop(Purpose::HopBack, job.addr);
            if at >= job.deadline {
                return false;
            }
            if self.rec.ahead(now, at) {
                self.now = at;
                let ev = Event {
                    outcome: outcome as u8,
                    aux: NO_RETRY_AFTER,
                    ..Event::new(Kind::Response, job.slot, job.attempt)
                };
                self.on_response::<Users>(ev);
                // The attempt is over now: its timeout can only find it so.
                self.queue.cancel(job.timeout);
                self.rec.back();
                self.now = now;
                return true;
            }
        }
        self.respond::<Users>(job, outcome, None)
    }

    /// Sends `outcome` back over the network to `job`'s caller. Returns
    /// false (and schedules nothing) when it would arrive at or after the
    /// caller stopped waiting.
    pub(super) fn respond<S: Side>(
        &mut self,
        job: Job,
        outcome: Outcome,
        retry_after: Option<SimDuration>,
    ) -> bool {
        let hop = self.hop(Purpose::HopBack, job.addr);
        let at = self.now + hop;
        if at >= job.deadline {
            return false;
        }
        let aux = retry_after.map_or(NO_RETRY_AFTER, |d| {
            u32::try_from(d.0 / 1_000_000).unwrap_or(u32::MAX - 1)
        });
        let ev = Event {
            outcome: outcome as u8,
            aux,
            ..Event::new(S::RESPONSE, job.slot, job.attempt)
        };
        self.queue.push(at, ev);
        true
    }

    /// Whether `job`'s caller still waits for it, or the server cannot know
    /// it does not: false only for a hedged copy whose caller has its answer
    /// and cancelled the rest, once the cancellation reaches the server, and
    /// for an attempt of a call cancelled with its caller.
    pub(super) fn still_wanted<S: Side>(&mut self, job: &Job) -> bool {
        let r = S::parts(self, job.slot).slots.peek(job.slot);
        // Only an attempt of the slot's current request (a slot is reused).
        let current = r.phase != Phase::Idle
            && job.attempt.wrapping_sub(r.first).wrapping_sub(1) < r.attempt.wrapping_sub(r.first);
        if current && S::abandoned(self, job.slot) {
            return false;
        }
        match S::hedging(self, job.slot) {
            Some(h) if h.cancel => {
                let p = S::parts(self, job.slot);
                p.book.wanted(p.slots, job)
            }
            _ => true,
        }
    }

    /// A server has served `job` with `outcome`: the answer goes back.
    /// Returns whether the work was of use: false when nobody waits for the
    /// answer. A hedged copy whose caller has its answer from another copy
    /// is still answered (the hop drawn, the answer thrown away there)
    /// unless the caller's cancellation reached the server; either way its
    /// work was of no use. (A copy served while another's answer is on its
    /// way back is of use.)
    pub(super) fn answer<S: Side>(&mut self, job: Job, outcome: Outcome) -> bool {
        let Some(h) = S::hedging(self, job.slot) else {
            return self.respond::<S>(job, outcome, None);
        };
        let p = S::parts(self, job.slot);
        let wanted = p.book.wanted(p.slots, &job);
        if !wanted && h.cancel {
            return false;
        }
        self.respond::<S>(job, outcome, None) && wanted
    }
}
