//! Hooks into a run, for tests that check invariants from outside the engine.
//! The default [`NoObserver`] compiles to nothing.

use crate::engine::SimTime;
use crate::retry::{GiveUp, Outcome};

/// Receives the client-side events of a run.
pub trait Observer {
    /// Whether the observer hears nothing: a run may then record client-side
    /// events ahead of the clock (see `model::sim::attempts`), which an
    /// observer would hear out of time order.
    const SILENT: bool = false;
    /// Slot `slot` started a logical request at `now`.
    fn request_started(&mut self, _now: SimTime, _slot: u32) {}
    /// A circuit breaker opened (`true`) or stopped being open (`false`):
    /// `breaker` 0 is the one all users share, `p + 1` proxy `p`'s own.
    fn breaker_open(&mut self, _now: SimTime, _breaker: u32, _open: bool) {}
    /// Slot `slot` sent an attempt (`retry` = 0 for the first) at `now`; its
    /// logical request's deadline is `deadline_at` (`SimTime::NEVER` if none).
    fn attempt_sent(&mut self, _now: SimTime, _slot: u32, _retry: u32, _deadline_at: SimTime) {}
    /// An attempt of `slot` ended at the client with `outcome`.
    fn attempt_ended(&mut self, _now: SimTime, _slot: u32, _outcome: Outcome) {}
    /// The logical request of `slot` ended: `None` for success.
    fn request_ended(&mut self, _now: SimTime, _slot: u32, _failure: Option<GiveUp>) {}
}

/// Observes nothing.
pub struct NoObserver;

impl Observer for NoObserver {
    const SILENT: bool = true;
}
