//! Who sends attempts. Two kinds of callers retry in a run: the users, whose
//! requests go to tier 0 (the run's server), and, in a call chain, each
//! tier's callers, whose calls go to that tier. Both take the one attempt
//! path of [`super::attempts`] and [`super::hedge`]; a [`Side`] says where
//! each kind keeps its requests and how it counts and ends them, and nothing
//! else differs.

use super::Sim;
use super::hedge::CopyBook;
use crate::engine::{Draw, Draws, SimDuration, SimTime, Ticket};
use crate::model::client::Slots;
use crate::model::event::Kind;
use crate::model::{Observer, Proxies};
use crate::retry::breaker::Verdict;
use crate::retry::{Breaker, Budget, GiveUp, HedgingConfig, Outcome, Strategy, Throttle};
use rand::RngExt;

/// What stands between one group of callers and their next attempt: the
/// retry budget, circuit breaker and adaptive throttle its strategy gives
/// them, shared by every caller of the group.
#[derive(Clone, Default)]
pub(crate) struct Guards {
    pub(super) budget: Option<Budget>,
    pub(super) breaker: Option<Breaker>,
    pub(super) throttle: Option<Throttle>,
}

impl Guards {
    pub(super) fn new(strategy: &Strategy) -> Guards {
        Guards {
            budget: strategy.budget.as_ref().map(Budget::new),
            breaker: strategy.breaker.as_ref().map(Breaker::new),
            throttle: strategy.throttle.as_ref().map(Throttle::new),
        }
    }

    /// The users' guards behind `proxies`: those all share, and each
    /// proxy's own (none with one proxy, where all are shared).
    pub(super) fn split(strategy: &Strategy, proxies: Proxies) -> (Guards, Vec<Guards>) {
        let all = Guards::new(strategy);
        if !proxies.many() {
            return (all, Vec::new());
        }
        let s = strategy.shared;
        let (mut shared, mut own) = (Guards::default(), Guards::default());
        (if s.budget { &mut shared } else { &mut own }).budget = all.budget;
        (if s.breaker { &mut shared } else { &mut own }).breaker = all.breaker;
        (if s.throttle { &mut shared } else { &mut own }).throttle = all.throttle;
        if own.budget.is_none() && own.breaker.is_none() && own.throttle.is_none() {
            return (shared, Vec::new());
        }
        (shared, vec![own; usize::from(proxies.count)])
    }

    /// All of them, as the attempt path reads them.
    #[inline(always)]
    pub(super) fn view(&mut self) -> GuardsMut<'_> {
        GuardsMut {
            shared: self,
            own: None,
        }
    }

    /// Those of `shared` and a proxy's `own`, as the attempt path reads
    /// them: each guard is in one or the other.
    #[inline(always)]
    pub(super) fn view_with<'g>(shared: &'g mut Guards, own: &'g mut Guards) -> GuardsMut<'g> {
        GuardsMut {
            shared,
            own: Some(own),
        }
    }
}

/// The guards one caller answers to: those its group shares, and its
/// proxy's own, if it has any (each guard is in one or the other).
pub(super) struct GuardsMut<'g> {
    shared: &'g mut Guards,
    own: Option<&'g mut Guards>,
}

impl GuardsMut<'_> {
    /// The retry budget, if any.
    #[inline(always)]
    pub(super) fn budget(&mut self) -> Option<&mut Budget> {
        match &mut self.own {
            Some(own) if self.shared.budget.is_none() => own.budget.as_mut(),
            _ => self.shared.budget.as_mut(),
        }
    }

    /// The circuit breaker, if any.
    #[inline(always)]
    pub(super) fn breaker(&mut self) -> Option<&mut Breaker> {
        match &mut self.own {
            Some(own) if self.shared.breaker.is_none() => own.breaker.as_mut(),
            _ => self.shared.breaker.as_mut(),
        }
    }

    /// The adaptive throttle, if any.
    #[inline(always)]
    pub(super) fn throttle(&mut self) -> Option<&mut Throttle> {
        match &mut self.own {
            Some(own) if self.shared.throttle.is_none() => own.throttle.as_mut(),
            _ => self.shared.throttle.as_mut(),
        }
    }
    /// Whether the throttle lets an attempt go now. As the SRE book has it:
    /// the probability from the counts so far, then this attempt counts as
    /// a request whether it goes or not.
    #[inline(always)]
    pub(super) fn throttle_lets(&mut self, now: SimTime, mut coin: impl FnMut() -> Draw) -> bool {
        let Some(t) = self.throttle() else {
            return true;
        };
        let p = t.reject_probability(now);
        t.on_request(now);
        !(p > 0.0 && coin().random::<f64>() < p)
    }

    /// What the breaker says to an attempt now: `None` refused, `Some(true)`
    /// let through as a half-open probe, `Some(false)` let through.
    #[inline(always)]
    pub(super) fn breaker_verdict(&mut self, now: SimTime) -> Option<bool> {
        match self.breaker().map(|b| b.check(now)) {
            Some(Verdict::Reject) => None,
            Some(Verdict::Probe) => Some(true),
            Some(Verdict::Allow) | None => Some(false),
        }
    }
}

/// The state the attempt path reads and changes for one request: its
/// callers' strategy and guards, the slots of its kind, the copies of
/// hedged ones, and the run's draws.
pub(super) struct Parts<'s> {
    pub(super) strategy: &'s Strategy,
    pub(super) guards: GuardsMut<'s>,
    pub(super) slots: &'s mut Slots,
    pub(super) book: &'s mut CopyBook,
    pub(super) draws: Draws,
}

/// One kind of caller: where its requests live and how it counts and ends
/// them. The attempt path is generic over it, so the users' path compiles
/// to its own code with nothing to look up.
pub(super) trait Side {
    /// The events of its attempts: an answer back, a timeout, the end of a
    /// backoff, a hedging delay.
    const RESPONSE: Kind;
    const TIMEOUT: Kind;
    const SEND: Kind;
    const HEDGE: Kind;
    /// Whether its attempts go through its proxies' pools, when the
    /// strategy limits them (the users' only).
    const POOLED: bool = false;

    /// The state of `slot`'s request.
    fn parts<'s, O: Observer, const W: bool>(sim: &'s mut Sim<'_, O, W>, slot: u32) -> Parts<'s>;

    /// The tier `slot`'s attempts go to.
    fn tier<O: Observer, const W: bool>(sim: &mut Sim<'_, O, W>, slot: u32) -> usize;

    /// The hedging of `slot`'s request, if its callers hedge.
    fn hedging<O: Observer, const W: bool>(
        sim: &mut Sim<'_, O, W>,
        slot: u32,
    ) -> Option<HedgingConfig>;

    /// Attempt `attempt` of `slot`, its `retries`-th retry, leaves for its
    /// tier, its timeout pushed with `timeout`; returns the replica it goes
    /// to.
    fn dispatch<O: Observer, const W: bool>(
        sim: &mut Sim<'_, O, W>,
        slot: u32,
        attempt: u32,
        retries: u32,
        timeout: Ticket,
    ) -> u16;

    /// An attempt went (`retries` > 0: a retry or a hedge): counted.
    fn sent<O: Observer, const W: bool>(sim: &mut Sim<'_, O, W>, slot: u32, retries: u32);

    /// An attempt's outcome reached its caller: counted.
    fn attempt_ended<O: Observer, const W: bool>(
        sim: &mut Sim<'_, O, W>,
        slot: u32,
        outcome: Outcome,
    );

    /// The request has its good answer: counted, before it ends.
    fn succeeded<O: Observer, const W: bool>(sim: &mut Sim<'_, O, W>, slot: u32);

    /// The throttle or the breaker refused an attempt of `slot` (`first`:
    /// its first): counted.
    fn refused_locally<O: Observer, const W: bool>(sim: &mut Sim<'_, O, W>, slot: u32, first: bool);

    /// The request fails for good: counted, before it ends.
    fn failed<O: Observer, const W: bool>(sim: &mut Sim<'_, O, W>, slot: u32, why: GiveUp);

    /// The request is over (`failure` None: it succeeded): what its caller
    /// does next.
    fn ended<O: Observer, const W: bool>(
        sim: &mut Sim<'_, O, W>,
        slot: u32,
        failure: Option<GiveUp>,
    );

    /// The breaker `slot`'s callers answer to may have come to the end of
    /// its open time: said where it is watched (the breaker itself turns
    /// half-open when next asked).
    fn breaker_due<O: Observer, const W: bool>(_sim: &mut Sim<'_, O, W>, _slot: u32) {}

    /// The breaker `slot`'s callers answer to opened, until `until`.
    fn breaker_opened<O: Observer, const W: bool>(
        _sim: &mut Sim<'_, O, W>,
        _slot: u32,
        _until: SimTime,
    ) {
    }

    /// Whether `slot`'s request was cancelled because its caller stopped
    /// waiting for it (a call whose caller is gone, where cancellation
    /// propagates): it makes no more attempts.
    fn abandoned<O: Observer, const W: bool>(_sim: &mut Sim<'_, O, W>, _slot: u32) -> bool {
        false
    }

    /// One more (+1) or one fewer (-1) request waiting out a backoff.
    fn backing_off<O: Observer, const W: bool>(_sim: &mut Sim<'_, O, W>, _delta: i64) {}
}

/// A Retry-After carried in an answer event's `aux`, if any.
pub(super) fn retry_after(aux: u32) -> Option<SimDuration> {
    (aux != crate::model::event::NO_RETRY_AFTER).then(|| SimDuration::from_millis(u64::from(aux)))
}
