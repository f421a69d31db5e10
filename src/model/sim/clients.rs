//! The users: their requests start, go to tier 0 and end here; the attempts
//! between take the one attempt path ([`super::attempts`]) as [`Users`].

use super::cache;
use super::callers::{Guards, Parts, Side};
use super::{ServerState, Sim};
use crate::engine::{Purpose, SimTime, Ticket, addr};
use crate::metrics::proxies::ProxyTotals;
use crate::metrics::recorder::Gauge;
use crate::model::event::{BAD_REQUEST, Event, Kind, READ_IN_PLACE};
use crate::model::{Load, Observer};
use crate::retry::{GiveUp, HedgingConfig, Outcome};

/// The users, tier 0's callers: their requests live in the run's own slots,
/// and the recorder and the observer count them.
pub(super) struct Users;

impl Side for Users {
    const RESPONSE: Kind = Kind::Response;
    const TIMEOUT: Kind = Kind::Timeout;
    const SEND: Kind = Kind::Send;
    const HEDGE: Kind = Kind::Hedge;
    const POOLED: bool = true;

    #[inline(always)]
    fn parts<'s, O: Observer, const W: bool>(sim: &'s mut Sim<'_, O, W>, slot: u32) -> Parts<'s> {
        if !sim.proxy_guards.is_empty() {
            return proxy_parts(sim, slot);
        }
        Parts {
            strategy: sim.strategy,
            guards: sim.guards.view(),
            slots: &mut sim.slots,
            book: &mut sim.copies,
            draws: sim.draws,
        }
    }

    #[inline(always)]
    fn tier<O: Observer, const W: bool>(_sim: &mut Sim<'_, O, W>, _slot: u32) -> usize {
        0
    }

    #[inline(always)]
    fn hedging<O: Observer, const W: bool>(
        sim: &mut Sim<'_, O, W>,
        _slot: u32,
    ) -> Option<HedgingConfig> {
        sim.strategy.hedging
    }

    #[inline(always)]
    fn dispatch<O: Observer, const W: bool>(
        sim: &mut Sim<'_, O, W>,
        slot: u32,
        attempt: u32,
        retries: u32,
        timeout: Ticket,
    ) -> u16 {
        let bad = sim.slots.peek(slot).bad;
        sim.dispatch(slot, attempt, retries, bad, timeout)
    }

    #[inline(always)]
    fn sent<O: Observer, const W: bool>(sim: &mut Sim<'_, O, W>, slot: u32, retries: u32) {
        sim.rec.attempt(retries > 0);
        if !sim.per_proxy.is_empty() {
            sim.count_proxy(slot, |t| {
                t.attempts += 1;
                t.retries += u64::from(retries > 0);
            });
        }
        let deadline_at = sim.slots.peek(slot).deadline_at;
        sim.obs.attempt_sent(sim.now, slot, retries, deadline_at);
    }

    #[inline(always)]
    fn attempt_ended<O: Observer, const W: bool>(
        sim: &mut Sim<'_, O, W>,
        slot: u32,
        outcome: Outcome,
    ) {
        sim.rec.outcome(outcome);
        sim.obs.attempt_ended(sim.now, slot, outcome);
    }

    #[inline(always)]
    fn succeeded<O: Observer, const W: bool>(sim: &mut Sim<'_, O, W>, slot: u32) {
        if sim.cache.is_some() {
            sim.cache_fill(slot);
        }
        let latency = sim.now - sim.slots.peek(slot).started;
        sim.rec.success(sim.now, latency);
        if !sim.per_proxy.is_empty() {
            sim.count_proxy(slot, |t| t.succeeded += 1);
        }
    }

    fn refused_locally<O: Observer, const W: bool>(
        sim: &mut Sim<'_, O, W>,
        _slot: u32,
        first: bool,
    ) {
        sim.rec.rejected_locally(first);
    }

    #[inline(always)]
    fn failed<O: Observer, const W: bool>(sim: &mut Sim<'_, O, W>, slot: u32, why: GiveUp) {
        sim.rec.failure(why);
        if !sim.per_proxy.is_empty() {
            sim.count_proxy(slot, |t| t.failure(why));
        }
    }

    #[inline(always)]
    fn ended<O: Observer, const W: bool>(
        sim: &mut Sim<'_, O, W>,
        slot: u32,
        failure: Option<GiveUp>,
    ) {
        sim.set_in_flight(-1);
        sim.obs.request_ended(sim.now, slot, failure);
        match &sim.world.load {
            Load::Closed { think, clients } if slot < *clients => {
                // The client's next request, and the pause before it.
                let next = addr::next(sim.slots.peek(slot).id);
                sim.slots.get(slot).id = next;
                let pause = think.sample(&mut sim.draws.at(Purpose::Think, next));
                sim.queue
                    .push(sim.now + pause, Event::new(Kind::Begin, slot, 0));
            }
            Load::OneShot { clients } if slot < *clients => {}
            // An open-loop request, or a load spike's extra one: its own client.
            _ => sim.slots.release(slot),
        }
    }

    #[inline(always)]
    fn breaker_due<O: Observer, const W: bool>(sim: &mut Sim<'_, O, W>, slot: u32) {
        let which = sim.breaker_of(slot);
        sim.on_breaker_timer(which);
    }

    fn breaker_opened<O: Observer, const W: bool>(
        sim: &mut Sim<'_, O, W>,
        slot: u32,
        until: SimTime,
    ) {
        let which = sim.breaker_of(slot);
        sim.breakers_open += 1;
        sim.rec.set(Gauge::BreakerOpen, sim.now, sim.breakers_open);
        sim.obs.breaker_open(sim.now, which, true);
        sim.queue
            .push(until, Event::new(Kind::BreakerTimer, which, 0));
    }

    #[inline(always)]
    fn backing_off<O: Observer, const W: bool>(sim: &mut Sim<'_, O, W>, delta: i64) {
        sim.backing_off = sim.backing_off.wrapping_add_signed(delta);
        sim.rec.set(Gauge::BackingOff, sim.now, sim.backing_off);
    }
}

/// [`Users::parts`] when the users are behind proxies with guards of their
/// own: those of `slot`'s proxy and those all share.
#[cold]
#[inline(never)]
fn proxy_parts<'s, O: Observer, const W: bool>(sim: &'s mut Sim<'_, O, W>, slot: u32) -> Parts<'s> {
    let p = usize::from(sim.slots.peek(slot).proxy);
    Parts {
        strategy: sim.strategy,
        guards: Guards::view_with(&mut sim.guards, &mut sim.proxy_guards[p]),
        slots: &mut sim.slots,
        book: &mut sim.copies,
        draws: sim.draws,
    }
}

impl<O: Observer, const WHEEL: bool> Sim<'_, O, WHEEL> {
    pub(super) fn set_in_flight(&mut self, delta: i64) {
        let n = self.slots.add_active(delta);
        self.rec.set(Gauge::InFlight, self.now, n);
    }

    /// Starts the logical request at address `id` in `slot`, behind the
    /// proxy of client or request number `n`.
    #[inline]
    pub(super) fn start_request(&mut self, slot: u32, id: u64, n: u64) {
        let now = self.now;
        let bad = self.draw_bad(id);
        let deadline_at = self
            .strategy
            .policy
            .deadline
            .map_or(SimTime::NEVER, |d| now + d);
        let proxy = self.world.proxies.of(n);
        let r = self.slots.get(slot);
        r.begin(id, now, deadline_at, bad);
        r.proxy = proxy;
        if let Some(b) = Users::parts(self, slot).guards.budget() {
            b.on_request(now);
        }
        self.rec.request_started();
        if !self.per_proxy.is_empty() {
            self.count_proxy(slot, |t| t.requests += 1);
        }
        self.obs.request_started(now, slot);
        self.set_in_flight(1);
        if self.cache.is_some() && self.look_up(slot) != cache::Lookup::Miss {
            return;
        }
        if self.strategy.hedging.is_some() {
            self.hedged_start::<Users>(slot);
        } else {
            self.send_attempt::<Users>(slot);
        }
    }

    /// Attempt `attempt` of `slot` leaves the client for the server, or for
    /// the replica the balancer picks, which it returns.
    #[inline(always)]
    pub(super) fn dispatch(
        &mut self,
        slot: u32,
        attempt: u32,
        retries: u32,
        bad: bool,
        timeout: Ticket,
    ) -> u16 {
        // Against the OCC record an attempt starts with a read; otherwise the
        // request itself goes out.
        let address = self.slots.peek(slot).address(attempt);
        let (kind, replica) = match &mut self.server {
            ServerState::One(_) => (Kind::AtServer, 0),
            ServerState::Fleet(fleet) => {
                let request = self.slots.get(slot);
                let mut rng = self.draws.at(Purpose::Balance, address);
                let r = fleet.pick(retries > 0, request.replica, request.proxy, &mut rng);
                request.replica = r;
                (Kind::AtServer, r)
            }
            ServerState::Occ(_) => (Kind::ReadAtServer, 0),
        };
        let hop = self.hop(Purpose::HopOut, address);
        if kind == Kind::ReadAtServer && self.in_place {
            // Nothing but their own time limit can stop the user between the
            // read and the write ([`super::in_place`]), so the read needs no
            // event: the write goes out now, carrying how long before it the
            // read reached the record (the time the record's check needs),
            // unless the version would come back too late, when no write
            // goes at all.
            let back = self.hop(Purpose::ReadBack, address);
            let read = self.now + hop;
            if read + back >= self.slots.peek(slot).attempt_deadline {
                return replica;
            }
            let gap = back + self.hop(Purpose::WriteOut, address);
            if let Ok(aux) = u32::try_from(gap.0) {
                let write = Event {
                    outcome: READ_IN_PLACE,
                    aux,
                    ..Event::new(Kind::AtServer, slot, attempt)
                };
                self.queue.push(self.now + hop + gap, write);
                return replica;
            }
        }
        let ev = Event {
            outcome: if bad { BAD_REQUEST } else { 0 },
            aux: timeout.to_bits(),
            replica,
            ..Event::new(kind, slot, attempt)
        };
        self.queue.push(self.now + hop, ev);
        replica
    }

    /// `count` in the counts of `slot`'s proxy, when the users are behind
    /// several (the caller asks first, so that one server's path only
    /// tests a length).
    #[cold]
    #[inline(never)]
    pub(super) fn count_proxy(&mut self, slot: u32, count: impl FnOnce(&mut ProxyTotals)) {
        let p = usize::from(self.slots.peek(slot).proxy);
        if let Some(t) = self.per_proxy.get_mut(p) {
            count(t);
        }
    }

    /// Which of the users' breakers `slot`'s request answers to: 0 the
    /// one all share, `p + 1` proxy `p`'s own.
    pub(super) fn breaker_of(&self, slot: u32) -> u32 {
        match self.proxy_guards.first() {
            Some(own) if own.breaker.is_some() => u32::from(self.slots.peek(slot).proxy) + 1,
            _ => 0,
        }
    }

    /// A breaker of the users ([`Sim::breaker_of`]) comes to the end of its
    /// open time (its timer, or an attempt judged then): the gauge of open
    /// breakers and the observer learn it.
    pub(super) fn on_breaker_timer(&mut self, which: u32) {
        let breaker = match which {
            0 => self.guards.breaker.as_mut(),
            p => self
                .proxy_guards
                .get_mut(p as usize - 1)
                .and_then(|g| g.breaker.as_mut()),
        };
        if breaker.is_some_and(|b| b.on_timer(self.now)) {
            self.breakers_open -= 1;
            self.rec
                .set(Gauge::BreakerOpen, self.now, self.breakers_open);
            self.obs.breaker_open(self.now, which, false);
        }
    }
}

/// Each proxy's counts, kept when there are several or they have pool
/// limits (whose overflow only they count).
pub(super) fn per_proxy(
    world: &crate::model::WorldConfig,
    strategy: &crate::retry::Strategy,
) -> Vec<ProxyTotals> {
    if world.proxies.many() || strategy.limits.is_some() {
        vec![ProxyTotals::default(); usize::from(world.proxies.count)]
    } else {
        Vec::new()
    }
}
