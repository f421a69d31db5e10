//! Client-side state: one slot per logical request in progress (open loop) or per
//! client (closed loop), kept small so a million of them fit in memory.

use crate::engine::SimTime;

/// Where a slot's logical request is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// No request in progress (a closed-loop client thinking, or a free slot).
    Idle,
    /// An attempt is out; waiting for its answer or its timeout.
    Waiting,
    /// Waiting out a backoff delay before the next attempt.
    BackingOff,
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
        }
    }
}

/// The slots, with a free list for the open loop.
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

    /// The request in `slot`.
    #[inline]
    pub fn get(&mut self, slot: u32) -> &mut Request {
        &mut self.slots[slot as usize]
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
}
