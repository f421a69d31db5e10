//! Client-side state: one slot per logical request in progress (open loop) or per
//! client (closed loop), kept small so a million of them fit in memory.

use rand::Rng;

use crate::engine::{SimDuration, SimTime, addr};
use crate::retry::policy::Attempted;
use crate::retry::{Budget, Decision, GiveUp, Outcome, Strategy};

/// Where a slot's logical request is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// No request in progress (a closed-loop client thinking, or a free slot).
    Idle,
    /// An attempt is out; waiting for its answer or its timeout.
    Waiting,
    /// Waiting out a backoff delay before the next attempt.
    BackingOff,
    /// Its next attempt waits at its proxy for a connection
    /// ([`crate::retry::pool`]).
    Pending,
}

/// The state of one logical request.
#[derive(Clone, Copy, Debug)]
pub struct Request {
    /// When its first attempt was sent.
    pub started: SimTime,
    /// When its deadline passes (`SimTime::NEVER` if none).
    pub deadline_at: SimTime,
    /// When the current attempt times out.
    pub attempt_deadline: SimTime,
    /// What the backoff remembered at the last retry (see `retry::Backoff::delay`).
    pub backoff_memory: f64,
    /// Attempts this slot has ever sent: identifies the current attempt, so stale
    /// events (answers after a timeout, timeouts after an answer) are ignored.
    pub attempt: u32,
    /// Retries this request has made.
    pub retries: u32,
    /// What the retry budget charged for its latest retry (refunded on success).
    pub charged: u32,
    /// Where it is.
    pub phase: Phase,
    /// Permanently bad: the server answers 400.
    pub bad: bool,
    /// The current attempt is a half-open breaker's probe.
    pub probe: bool,
    /// The replica the current attempt went to.
    pub replica: u16,
    /// Its address: what names its draws ([`crate::engine::Draws`]).
    pub id: u64,
    /// `attempt` when it began: its attempts are `first + 1` on.
    pub first: u32,
    /// The proxy its attempts go through.
    pub proxy: u16,
}

impl Request {
    /// A new logical request, at address `id`, starts at `now`, to give up
    /// at `deadline_at`.
    #[inline]
    pub fn begin(&mut self, id: u64, now: SimTime, deadline_at: SimTime, bad: bool) {
        self.id = id;
        self.first = self.attempt;
        self.started = now;
        self.deadline_at = deadline_at;
        self.retries = 0;
        self.backoff_memory = 0.0;
        self.charged = 0;
        self.bad = bad;
    }

    /// The address of its attempt `attempt` (a number of the slot's, as
    /// events carry it): the attempt's index within the request, from 0.
    /// (An attempt of an earlier request of the slot, still out when this
    /// one began, gets an index no attempt of this one reaches.)
    #[inline(always)]
    pub fn address(&self, attempt: u32) -> u64 {
        addr::attempt(self.id, attempt.wrapping_sub(self.first).wrapping_sub(1))
    }

    /// The address of the attempt it sends next.
    #[inline(always)]
    pub fn next_address(&self) -> u64 {
        self.address(self.attempt.wrapping_add(1))
    }

    /// The address of its latest attempt.
    #[inline(always)]
    pub fn current_address(&self) -> u64 {
        self.address(self.attempt)
    }

    /// Its next attempt goes out at `now`, timing out at `timeout_at` (or at
    /// the request's deadline, if sooner): returns the attempt's number and
    /// when its client stops waiting for it.
    #[inline]
    pub fn next_attempt(&mut self, timeout_at: Option<SimTime>) -> (u32, SimTime) {
        self.attempt = self.attempt.wrapping_add(1);
        self.phase = Phase::Waiting;
        self.attempt_deadline = timeout_at.unwrap_or(SimTime::NEVER).min(self.deadline_at);
        (self.attempt, self.attempt_deadline)
    }

    /// Its latest attempt failed with `outcome` at `now`: `strategy`'s
    /// policy decides whether to retry, then `budget` (told of the failure
    /// first) whether the retry may go. On a retry the request counts it and
    /// keeps the backoff's memory and the budget's charge.
    #[inline]
    pub fn after_failure<R: Rng + ?Sized>(
        &mut self,
        strategy: &Strategy,
        mut budget: Option<&mut Budget>,
        outcome: Outcome,
        retry_after: Option<SimDuration>,
        now: SimTime,
        rng: &mut R,
    ) -> Decision {
        let mut state = Attempted {
            retries: self.retries,
            deadline_at: self.deadline_at,
            memory: self.backoff_memory,
        };
        if let Some(b) = budget.as_deref_mut() {
            b.on_failure(outcome, self.charged);
        }
        let mut decision = strategy.policy.decide(
            &strategy.backoff,
            outcome,
            retry_after,
            &mut state,
            now,
            rng,
        );
        let mut charged = 0;
        if let (Decision::Retry(_), Some(b)) = (decision, budget) {
            match b.try_retry(now, outcome) {
                Some(cost) => charged = cost,
                None => decision = Decision::GiveUp(GiveUp::BudgetDenied),
            }
        }
        if let Decision::Retry(_) = decision {
            self.charged = charged;
            self.retries += 1;
            self.backoff_memory = state.memory;
        }
        decision
    }
}

impl Default for Request {
    fn default() -> Self {
        Request {
            started: SimTime::ZERO,
            deadline_at: SimTime::NEVER,
            attempt_deadline: SimTime::NEVER,
            backoff_memory: 0.0,
            attempt: 0,
            retries: 0,
            charged: 0,
            phase: Phase::Idle,
            bad: false,
            probe: false,
            replica: 0,
            id: 0,
            first: 0,
            proxy: 0,
        }
    }
}

/// The slots, with a free list for the open loop.
#[derive(Clone)]
pub struct Slots {
    slots: Vec<Request>,
    free: Vec<u32>,
    active: u64,
}

impl Slots {
    /// `n` idle slots (closed loop: one per client; open loop: 0 to start).
    pub fn new(n: u32) -> Self {
        Slots {
            slots: vec![Request::default(); n as usize],
            free: Vec::new(),
            active: 0,
        }
    }

    /// A slot for a new open-loop request: a free one, or a new one.
    pub fn allocate(&mut self) -> u32 {
        if let Some(i) = self.free.pop() {
            return i;
        }
        self.slots.push(Request::default());
        (self.slots.len() - 1) as u32
    }

    /// Returns an open-loop slot to the free list.
    pub fn release(&mut self, slot: u32) {
        self.free.push(slot);
    }

    /// The request in `slot`, to read.
    #[inline]
    pub fn peek(&self, slot: u32) -> &Request {
        &self.slots[slot as usize]
    }

    /// The request in `slot`.
    #[inline]
    pub fn get(&mut self, slot: u32) -> &mut Request {
        &mut self.slots[slot as usize]
    }

    /// Asks the processor to bring `slot`'s request into its cache, where an
    /// event about it will soon look: with a million clients the requests no
    /// longer fit in cache, and the wait for one was most of an event's
    /// time. A hint only: it changes no state and nothing if `slot` is out of
    /// range.
    #[inline(always)]
    pub fn prefetch(&self, slot: u32) {
        #[cfg(target_arch = "x86_64")]
        if let Some(r) = self.slots.get(slot as usize) {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            let p = std::ptr::from_ref(r).cast::<i8>();
            // SAFETY: a prefetch has no effect on memory or on the program's
            // state, whatever the address; this one comes from a reference.
            #[allow(unsafe_code)]
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(p);
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = slot;
    }

    /// The number of slots.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// True without slots (open loop, before its first request).
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Requests in progress (the counter [`Slots::add_active`] keeps).
    #[inline(always)]
    pub fn active(&self) -> u64 {
        self.active
    }

    /// Marks one more (or one fewer) request in progress; returns the new count.
    pub fn add_active(&mut self, delta: i64) -> u64 {
        self.active = self.active.wrapping_add_signed(delta);
        self.active
    }

    /// Requests in progress, counted from the slots themselves (not the counter).
    pub fn count_in_progress(&self) -> u64 {
        self.slots.iter().filter(|r| r.phase != Phase::Idle).count() as u64
    }

    /// The proxy of each request in progress.
    pub fn in_progress_proxies(&self) -> impl Iterator<Item = u16> + '_ {
        self.slots
            .iter()
            .filter(|r| r.phase != Phase::Idle)
            .map(|r| r.proxy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A prefetch is a hint: a slot out of range (an event whose `slot` is
    /// a worker's index) is ignored rather than indexed.
    /// A request stays one cache line: a million clients' requests are
    /// read in the order events come, not in memory order.
    #[test]
    fn a_request_is_one_cache_line() {
        assert!(std::mem::size_of::<Request>() <= 64);
    }

    /// Attempts are numbered within their request whatever the slot sent
    /// before: a closed client's third request's first attempt has the
    /// address of attempt 0 of that request.
    #[test]
    fn attempts_are_addressed_within_their_request() {
        let mut r = Request::default();
        for _ in 0..5 {
            r.next_attempt(None);
        }
        r.begin(42, SimTime::ZERO, SimTime::NEVER, false);
        assert_eq!(r.next_address(), addr::attempt(42, 0));
        let (a, _) = r.next_attempt(None);
        assert_eq!(r.address(a), addr::attempt(42, 0));
        assert_eq!(r.current_address(), addr::attempt(42, 0));
        let (b, _) = r.next_attempt(None);
        assert_eq!(r.address(b), addr::attempt(42, 1));
    }

    #[test]
    fn a_prefetch_out_of_range_is_ignored() {
        let slots = Slots::new(3);
        for slot in [0, 2, 3, u32::MAX] {
            slots.prefetch(slot);
        }
    }
}
