//! Hedged calls: a tier's callers that hedge (`hedging` in the strategy's
//! `[strategy.tiers.NAME]` table) send copies of each call to NAME as the
//! users' hedged requests do ([`super::super::hedge`]): a copy every
//! `delay` while no answer has come, up to `max_attempts`, the first good
//! answer winning; a non-fatal failure sends the next copy at once, a fatal
//! one fails the call. Every copy shares the call's time limit (its
//! `timeout`, or the deadline it carries), and the callers' throttle,
//! breaker and budget apply to each copy after the first. Everything here
//! runs only for such calls.

use super::super::Sim;
use crate::engine::SimTime;
use crate::model::Observer;
use crate::model::client::Phase;
use crate::model::event::{Event, Kind};
use crate::retry::Outcome;

impl<O: Observer, const WHEEL: bool> Sim<'_, O, WHEEL> {
    /// Whether call `slot` is to a tier whose callers hedge.
    pub(in crate::model::sim) fn call_hedged(&mut self, slot: u32) -> bool {
        let c = self.chain();
        let tier = usize::from(c.links[slot as usize].tier);
        c.hedging(tier).is_some()
    }

    /// The first copy of the call just begun in `slot`, and its one timer:
    /// the call's time limit.
    pub(super) fn hedged_call_start(&mut self, slot: u32) {
        *self.chain().book.get(slot) = Default::default();
        if self.send_call_copy(slot, None) {
            let r = self.chain().slots.get(slot);
            let (attempt, at) = (r.attempt, r.attempt_deadline);
            if at < SimTime::NEVER {
                self.queue
                    .push(at, Event::new(Kind::CallTimeout, slot, attempt));
            }
        }
    }

    /// Sends the next copy of call `slot`: the first when `after` is None,
    /// else a hedge after the delay (`Outcome::Timeout`) or a non-fatal
    /// failure. The callers' throttle or breaker may refuse it, their budget
    /// deny a hedge; a refused first copy fails the call. Returns whether
    /// the copy went.
    fn send_call_copy(&mut self, slot: u32, after: Option<Outcome>) -> bool {
        let now = self.now;
        let tier = usize::from(self.chain().links[slot as usize].tier);
        let Some(h) = self.chain().hedging(tier) else {
            return false;
        };
        let Some(probe) = self.call_verdict(tier) else {
            let t = &mut self.chain().totals[tier];
            t.rejected_locally += 1;
            if after.is_none() {
                t.calls_failed += 1;
                self.end_call(slot, false);
            }
            return false;
        };
        let c = self.chain();
        let callers = c.callers[tier].as_mut().expect("a hedged call has callers");
        let mut charged = 0;
        if let (Some(outcome), Some(b)) = (after, &mut callers.budget) {
            match b.try_retry(now, outcome) {
                // A copy goes out at once.
                Some(cost) => charged = b.on_retry_sent(cost),
                None => return false,
            }
        }
        let timeout_at = callers.policy.strategy.policy.timeout.map(|t| now + t);
        let r = c.slots.get(slot);
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
        let replica = self.dispatch_call(slot, tier, attempt, retries);
        let copies = self.chain().book.get(slot);
        copies.sent(attempt, replica, charged);
        if copies.sent < h.max_attempts && now + h.delay < limit {
            self.queue
                .push(now + h.delay, Event::new(Kind::CallHedge, slot, attempt));
        }
        true
    }

    /// The hedging delay after copy (`slot`, `attempt`) is over: if no copy
    /// has been sent since and no answer has ended the call, the next one
    /// goes.
    pub(in crate::model::sim) fn on_call_hedge_timer(&mut self, ev: Event) {
        let r = self.chain().slots.get(ev.slot);
        if r.phase == Phase::Waiting && r.attempt == ev.attempt {
            // Denied or refused, the copies out still run: no more hedges
            // unless one of them fails.
            let _ = self.send_call_copy(ev.slot, Some(Outcome::Timeout));
        }
    }

    /// Copy `attempt` of call `slot` is over at its caller: it is no longer
    /// out, and the callee's balancer and outlier detection learn it.
    /// Returns the budget's charge for it, or None if it was not out.
    fn call_copy_over(&mut self, slot: u32, attempt: u32, outcome: Option<Outcome>) -> Option<u32> {
        let c = self.chain();
        let tier = usize::from(c.links[slot as usize].tier);
        let latest = c.slots.get(slot).attempt;
        let (replica, charged) = c.book.get(slot).over(latest, attempt)?;
        match outcome {
            Some(outcome) => self.replica_attempt_over(tier, usize::from(replica), outcome),
            // A cancelled copy: one fewer outstanding, nothing learnt.
            None => {
                if let Some(super::ServerState::Fleet(f)) =
                    super::tier_server(&mut self.server, &mut self.chain, tier)
                {
                    f.balance.done(usize::from(replica));
                }
            }
        }
        Some(charged)
    }

    /// The call has its answer (or has failed): the copies still out are
    /// cancelled, their budget charges released unspent.
    fn cancel_call_copies(&mut self, slot: u32) {
        let c = self.chain();
        let latest = c.slots.get(slot).attempt;
        let tier = usize::from(c.links[slot as usize].tier);
        for attempt in c.book.get(slot).out(latest) {
            if let Some(charged) = self.call_copy_over(slot, attempt, None) {
                let c = self.chain();
                if let Some(b) = c.callers[tier].as_mut().and_then(|k| k.budget.as_mut()) {
                    b.on_retry_abandoned(charged);
                }
            }
        }
    }

    /// The hedged call `slot` fails for good.
    fn hedged_call_failed(&mut self, slot: u32) {
        self.cancel_call_copies(slot);
        let c = self.chain();
        let tier = usize::from(c.links[slot as usize].tier);
        c.totals[tier].calls_failed += 1;
        self.end_call(slot, false);
    }

    pub(in crate::model::sim) fn on_hedged_call_response(&mut self, ev: Event) {
        if self.chain().slots.get(ev.slot).phase != Phase::Waiting {
            return;
        }
        let outcome = Outcome::from_u8(ev.outcome);
        let Some(charged) = self.call_copy_over(ev.slot, ev.attempt, Some(outcome)) else {
            return;
        };
        self.observe_call(ev.slot, outcome);
        let now = self.now;
        let c = self.chain();
        let tier = usize::from(c.links[ev.slot as usize].tier);
        let callers = c.callers[tier].as_mut().expect("a hedged call has callers");
        if outcome == Outcome::Ok {
            let started = c.slots.get(ev.slot).started;
            c.latency[tier].record(now - started);
            c.totals[tier].ok += 1;
            if let Some(b) = &mut callers.budget {
                b.on_success(charged);
            }
            self.cancel_call_copies(ev.slot);
            self.end_call(ev.slot, true);
            return;
        }
        if let Some(b) = &mut callers.budget {
            b.on_failure(outcome, charged);
        }
        if !callers.policy.strategy.policy.retry_on.contains(outcome) {
            // A fatal answer ends the call, as gRPC commits to it.
            self.hedged_call_failed(ev.slot);
            return;
        }
        // A non-fatal one sends the next copy at once, if one is left.
        let max = callers
            .policy
            .strategy
            .hedging
            .map_or(0, |h| h.max_attempts);
        let limit = c.slots.get(ev.slot).attempt_deadline;
        if c.book.get(ev.slot).sent < max
            && now < limit
            && self.send_call_copy(ev.slot, Some(outcome))
        {
            return;
        }
        // Nothing more goes out: the call waits for the copies still out,
        // or fails now if there are none.
        if self.chain().book.get(ev.slot).live == 0 {
            self.hedged_call_failed(ev.slot);
        }
    }

    /// The call's time limit: every copy still out times out, and the call
    /// fails.
    pub(in crate::model::sim) fn on_hedged_call_timeout(&mut self, ev: Event) {
        let c = self.chain();
        let r = c.slots.get(ev.slot);
        let latest = r.attempt;
        let sent = c.book.get(ev.slot).sent;
        if r.phase != Phase::Waiting || latest.wrapping_sub(ev.attempt) >= u32::from(sent) {
            return;
        }
        let tier = usize::from(c.links[ev.slot as usize].tier);
        for attempt in c.book.get(ev.slot).out(latest) {
            if let Some(charged) = self.call_copy_over(ev.slot, attempt, Some(Outcome::Timeout)) {
                self.observe_call(ev.slot, Outcome::Timeout);
                let c = self.chain();
                if let Some(b) = c.callers[tier].as_mut().and_then(|k| k.budget.as_mut()) {
                    b.on_failure(Outcome::Timeout, charged);
                }
            }
        }
        self.hedged_call_failed(ev.slot);
    }
}
