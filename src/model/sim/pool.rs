//! The users' proxies' connection-pool limits ([`crate::retry::pool`]): an
//! attempt the breaker and throttle let through goes at once, waits in its
//! proxy's pending queue for a connection, or fails at the proxy
//! (overflow). A connection freed by an attempt's answer or timeout takes
//! the oldest attempt still waiting, whose per-try timeout starts then.

use super::Sim;
use super::callers::Side;
use super::clients::Users;
use crate::engine::{SimTime, Ticket};
use crate::model::Observer;
use crate::model::client::Phase;
use crate::model::event::{Event, Kind};
use crate::retry::{Admit, GiveUp, Pool};

/// Each proxy's pool, when the strategy limits them.
pub(super) fn pools(
    world: &crate::model::WorldConfig,
    strategy: &crate::retry::Strategy,
) -> Vec<Pool> {
    match strategy.limits {
        Some(_) => vec![Pool::default(); usize::from(world.proxies.count)],
        None => Vec::new(),
    }
}

impl<O: Observer, const WHEEL: bool> Sim<'_, O, WHEEL> {
    /// The pool of `slot`'s proxy.
    fn pool_of(&mut self, slot: u32) -> &mut Pool {
        let p = usize::from(self.slots.peek(slot).proxy);
        &mut self.pools[p]
    }

    /// What `slot`'s proxy's pool does with the attempt asked for now (the
    /// breaker and throttle having let it through as a probe or not): it
    /// goes (`Admit::Go`, counted on the wire: the caller sends it), or is
    /// handled here, waiting or overflowing.
    #[cold]
    #[inline(never)]
    pub(super) fn pool_admit(&mut self, slot: u32, probe: bool) -> Admit {
        let limits = self
            .strategy
            .limits
            .unwrap_or(crate::retry::PoolLimits::ENVOY);
        let verdict = self.pool_of(slot).admit(&limits);
        match verdict {
            Admit::Go => self.pool_of(slot).sent(),
            Admit::Wait => self.wait_for_connection(slot, probe),
            Admit::Overflow => {
                self.count_proxy(slot, |t| t.overflow += 1);
                self.refuse::<Users>(slot);
            }
        }
        verdict
    }

    /// `slot`'s next attempt waits for a connection: numbered now, its
    /// request's deadline (if any) already running.
    fn wait_for_connection(&mut self, slot: u32, probe: bool) {
        let r = self.slots.get(slot);
        r.probe = probe;
        let (attempt, deadline) = r.next_attempt(None);
        r.phase = Phase::Pending;
        if deadline < SimTime::NEVER {
            self.queue
                .push(deadline, Event::new(Kind::Timeout, slot, attempt));
        }
        self.pool_of(slot).wait(slot, attempt);
        self.count_proxy(slot, |t| t.waited += 1);
    }

    /// A timeout `ev` of the users' finds its attempt still waiting for a
    /// connection: the request's deadline passed there, and it fails (a
    /// retry it was would not go: the budget gets it back). Returns
    /// whether it did.
    #[cold]
    #[inline(never)]
    pub(super) fn deadline_while_waiting(&mut self, ev: Event) -> bool {
        let r = self.slots.peek(ev.slot);
        if r.phase != Phase::Pending || r.attempt != ev.attempt {
            return false;
        }
        let charged = r.charged;
        self.pool_of(ev.slot).gave_up_waiting();
        if let Some(b) = Users::parts(self, ev.slot).guards.budget() {
            b.on_retry_abandoned(charged);
        }
        self.give_up::<Users>(ev.slot, GiveUp::DeadlineExceeded);
        true
    }

    /// An attempt of `slot` on the wire is over: its proxy's connection
    /// takes the oldest attempt still waiting there, if any, which goes now
    /// with its per-try timeout from now (its request's deadline is
    /// already in the queue).
    #[cold]
    #[inline(never)]
    pub(super) fn connection_freed(&mut self, slot: u32) {
        let p = usize::from(self.slots.peek(slot).proxy);
        let (slots, now) = (&self.slots, self.now);
        // One whose deadline is now fails where it waits (its timeout
        // event is due): it does not go for nothing.
        let next = self.pools[p].freed(|s, attempt| {
            let r = slots.peek(s);
            r.phase == Phase::Pending && r.attempt == attempt && r.deadline_at > now
        });
        let Some((slot, attempt)) = next else {
            return;
        };
        let timeout_at = self.strategy.policy.timeout.map(|t| now + t);
        let r = self.slots.get(slot);
        r.phase = Phase::Waiting;
        r.attempt_deadline = timeout_at.unwrap_or(SimTime::NEVER).min(r.deadline_at);
        let (retries, deadline_at) = (r.retries, r.deadline_at);
        let mut ticket = Ticket::NONE;
        if let Some(t) = timeout_at.filter(|&t| t < deadline_at) {
            ticket = self
                .queue
                .push_in_order(t, Event::new(Kind::Timeout, slot, attempt));
        }
        Users::dispatch(self, slot, attempt, retries, ticket);
        Users::sent(self, slot, retries);
    }
}
