//! Client-side handlers: starting logical requests, sending attempts, and what
//! follows an answer or a timeout.

use rand::RngExt;

use super::{ServerState, Sim};
use crate::engine::{SimDuration, SimTime};
use crate::metrics::recorder::Gauge;
use crate::model::balancer::NO_UPSTREAM;
use crate::model::client::Phase;
use crate::model::event::{Event, Kind, NO_RETRY_AFTER};
use crate::model::{Load, Observer};
use crate::retry::breaker::Verdict;
use crate::retry::budget::UNCOUNTED;
use crate::retry::{Decision, GiveUp, Outcome};

impl<O: Observer, const WHEEL: bool> Sim<'_, O, WHEEL> {
    pub(super) fn set_in_flight(&mut self, delta: i64) {
        let n = self.slots.add_active(delta);
        self.rec.set(Gauge::InFlight, self.now, n);
    }

    /// Starts a logical request in `slot`; `bad` if it is permanently bad.
    #[inline]
    pub(super) fn start_request(&mut self, slot: u32, bad: bool) {
        let now = self.now;
        let deadline_at = self
            .strategy
            .policy
            .deadline
            .map_or(SimTime::NEVER, |d| now + d);
        self.slots.get(slot).begin(now, deadline_at, bad);
        if let Some(b) = &mut self.budget {
            b.on_request(now);
        }
        self.rec.request_started();
        self.obs.request_started(now, slot);
        self.set_in_flight(1);
        if self.hedges.is_some() {
            self.hedged_start(slot);
        } else {
            self.send_attempt(slot);
        }
    }

    /// Sends the next attempt of `slot`, unless the throttle or the breaker
    /// refuses it locally, which ends the logical request.
    pub(super) fn send_attempt(&mut self, slot: u32) {
        let now = self.now;
        let probe = match self.local_verdict() {
            Some(probe) => probe,
            None => {
                let r = self.slots.get(slot);
                let (first, charged) = (r.retries == 0, r.charged);
                if let Some(b) = &mut self.budget {
                    b.on_retry_abandoned(charged);
                }
                self.rec.rejected_locally(first);
                self.rec.failure(GiveUp::RejectedLocally);
                self.end_request(slot, Some(GiveUp::RejectedLocally));
                return;
            }
        };
        self.slots.get(slot).probe = probe;
        let timeout_at = self.strategy.policy.timeout.map(|t| now + t);
        let r = self.slots.get(slot);
        let (attempt, deadline) = r.next_attempt(timeout_at);
        let (retries, deadline_at, bad) = (r.retries, r.deadline_at, r.bad);
        let timeout = Event::new(Kind::Timeout, slot, attempt);
        if Some(deadline) == timeout_at {
            // Timeouts all have the same length, so they come in time order.
            self.queue.push_in_order(deadline, timeout);
        } else if deadline < SimTime::NEVER {
            // The request's deadline cuts this attempt short.
            self.queue.push(deadline, timeout);
        }
        self.dispatch(slot, attempt, retries, bad);
        self.rec.attempt(retries > 0);
        self.obs.attempt_sent(now, slot, retries, deadline_at);
    }

    /// Attempt `attempt` of `slot` leaves the client for the server, or for
    /// the replica the balancer picks, which it returns.
    #[inline(always)]
    pub(super) fn dispatch(&mut self, slot: u32, attempt: u32, retries: u32, bad: bool) -> u16 {
        // Against the OCC record an attempt starts with a read; otherwise the
        // request itself goes out.
        let (kind, replica) = match &mut self.server {
            ServerState::One(_) => (Kind::AtServer, 0),
            ServerState::Fleet(fleet) => {
                let mut r = fleet.balance.pick(&mut self.rng.balance);
                if fleet.retry_other
                    && retries > 0
                    && r == usize::from(self.slots.get(slot).replica)
                    && r != NO_UPSTREAM
                {
                    r = fleet.balance.repick(r, &mut self.rng.balance);
                }
                let r = r as u16;
                self.slots.get(slot).replica = r;
                (Kind::AtServer, r)
            }
            ServerState::Occ(_) => (Kind::ReadAtServer, 0),
        };
        let hop = self.hop();
        let ev = Event {
            aux: u32::from(bad),
            replica,
            ..Event::new(kind, slot, attempt)
        };
        self.queue.push(self.now + hop, ev);
        replica
    }

    /// What the throttle and the breaker say to an attempt now: `None` refused,
    /// `Some(true)` allowed as a half-open probe, `Some(false)` allowed.
    #[inline(always)]
    pub(super) fn local_verdict(&mut self) -> Option<bool> {
        let now = self.now;
        if let Some(t) = &mut self.throttle {
            // The book's order: the probability from the counts so far, then this
            // attempt counts as a request whether it goes out or not.
            let p = t.reject_probability(now);
            t.on_request(now);
            if p > 0.0 && self.rng.jitter.random::<f64>() < p {
                return None;
            }
        }
        // An open time that ends now ends before this attempt is judged.
        self.on_breaker_timer();
        match self.breaker.as_mut().map(|b| b.check(now)) {
            Some(Verdict::Reject) => None,
            Some(Verdict::Probe) => Some(true),
            Some(Verdict::Allow) | None => Some(false),
        }
    }

    /// An attempt's outcome reaches the client: the breaker and the throttle learn it.
    pub(super) fn observe_outcome(&mut self, slot: u32, outcome: Outcome) {
        let now = self.now;
        if let Some(t) = &mut self.throttle {
            t.on_answer(now, outcome);
        }
        let failed = self.strategy.policy.retry_on.contains(outcome);
        let probe = self.slots.get(slot).probe;
        if let Some(b) = &mut self.breaker {
            if let Some(until) = b.record(failed, probe, now, &mut self.rng.jitter) {
                self.rec.set(Gauge::BreakerOpen, now, 1);
                self.obs.breaker_open(now, true);
                self.queue.push(until, Event::new(Kind::BreakerTimer, 0, 0));
            }
        }
    }

    pub(super) fn on_breaker_timer(&mut self) {
        if let Some(b) = &mut self.breaker {
            if b.on_timer(self.now) {
                self.rec.set(Gauge::BreakerOpen, self.now, 0);
                self.obs.breaker_open(self.now, false);
            }
        }
    }

    pub(super) fn on_backoff_over(&mut self, ev: Event) {
        let r = self.slots.get(ev.slot);
        if r.phase == Phase::BackingOff && r.attempt == ev.attempt {
            self.set_backing_off(-1);
            self.retry_sent(ev.slot);
            self.send_attempt(ev.slot);
        }
    }

    /// A retry goes out: a budget that counts retries only once sent (as
    /// Envoy's) counts it now.
    fn retry_sent(&mut self, slot: u32) {
        let r = self.slots.get(slot);
        if r.charged == UNCOUNTED {
            if let Some(b) = &mut self.budget {
                r.charged = b.on_retry_sent(r.charged);
            }
        }
    }

    /// One more (+1) or one fewer (-1) request waiting out a backoff.
    fn set_backing_off(&mut self, delta: i64) {
        self.backing_off = self.backing_off.wrapping_add_signed(delta);
        self.rec.set(Gauge::BackingOff, self.now, self.backing_off);
    }

    /// The client of (`slot`, `attempt`) still waits for it: its deadline, else None.
    pub(super) fn live_deadline(&mut self, slot: u32, attempt: u32) -> Option<SimTime> {
        let r = self.slots.get(slot);
        if r.phase != Phase::Waiting {
            return None;
        }
        if r.attempt == attempt {
            return Some(r.attempt_deadline);
        }
        // An earlier copy of a hedged request may still be out.
        let (latest, deadline) = (r.attempt, r.attempt_deadline);
        self.hedges
            .as_ref()
            .filter(|h| h.is_out(slot, latest, attempt))
            .map(|_| deadline)
    }

    /// The current attempt of `slot` is over at the client (answered or timed
    /// out): one fewer outstanding at its replica.
    fn attempt_over(&mut self, slot: u32, outcome: Outcome) {
        if let ServerState::Fleet(fleet) = &mut self.server {
            if fleet.balance.chooses() {
                let r = usize::from(self.slots.get(slot).replica);
                fleet.balance.done(r);
                if fleet.health.is_some() {
                    self.fleet_observe(0, r, outcome);
                }
            }
        }
    }

    pub(super) fn on_response(&mut self, ev: Event) {
        if self.hedges.is_some() {
            self.on_hedged_response(ev);
            return;
        }
        if self.live_deadline(ev.slot, ev.attempt).is_none() {
            return;
        }
        let outcome = Outcome::from_u8(ev.outcome);
        self.attempt_over(ev.slot, outcome);
        self.rec.outcome(outcome);
        self.obs.attempt_ended(self.now, ev.slot, outcome);
        self.observe_outcome(ev.slot, outcome);
        if outcome == Outcome::Ok {
            let latency = self.now - self.slots.get(ev.slot).started;
            self.rec.success(self.now, latency);
            let charged = self.slots.get(ev.slot).charged;
            if let Some(b) = &mut self.budget {
                b.on_success(charged);
            }
            self.end_request(ev.slot, None);
        } else {
            let ra =
                (ev.aux != NO_RETRY_AFTER).then(|| SimDuration::from_millis(u64::from(ev.aux)));
            self.after_failure(ev.slot, outcome, ra);
        }
    }

    pub(super) fn on_timeout(&mut self, ev: Event) {
        if self.hedges.is_some() {
            self.on_hedged_timeout(ev);
            return;
        }
        if self.live_deadline(ev.slot, ev.attempt).is_none() {
            return;
        }
        self.attempt_over(ev.slot, Outcome::Timeout);
        self.rec.outcome(Outcome::Timeout);
        self.obs.attempt_ended(self.now, ev.slot, Outcome::Timeout);
        self.observe_outcome(ev.slot, Outcome::Timeout);
        self.after_failure(ev.slot, Outcome::Timeout, None);
    }

    pub(super) fn after_failure(
        &mut self,
        slot: u32,
        outcome: Outcome,
        retry_after: Option<SimDuration>,
    ) {
        let decision = self.slots.get(slot).after_failure(
            self.strategy,
            self.budget.as_mut(),
            outcome,
            retry_after,
            self.now,
            &mut self.rng.jitter,
        );
        match decision {
            Decision::Retry(delay) => {
                let r = self.slots.get(slot);
                if delay == SimDuration::ZERO {
                    self.retry_sent(slot);
                    self.send_attempt(slot);
                } else {
                    r.phase = Phase::BackingOff;
                    let attempt = r.attempt;
                    self.queue
                        .push(self.now + delay, Event::new(Kind::Send, slot, attempt));
                    self.set_backing_off(1);
                }
            }
            Decision::GiveUp(why) => {
                self.rec.failure(why);
                self.end_request(slot, Some(why));
            }
        }
    }

    pub(super) fn end_request(&mut self, slot: u32, failure: Option<GiveUp>) {
        self.slots.get(slot).phase = Phase::Idle;
        if let Some(b) = &mut self.budget {
            b.on_request_end();
        }
        self.set_in_flight(-1);
        self.obs.request_ended(self.now, slot, failure);
        match &self.world.load {
            Load::Closed { think, clients } if slot < *clients => {
                let pause = think.sample(&mut self.rng.workload);
                self.queue
                    .push(self.now + pause, Event::new(Kind::Begin, slot, 0));
            }
            Load::OneShot { clients } if slot < *clients => {}
            // An open-loop request, or a load spike's extra one: its own client.
            _ => self.slots.release(slot),
        }
    }
}
