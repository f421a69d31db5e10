//! The run's guards: a world whose every key validates may still make a run
//! that never ends (simulated time stands still or crawls) or that holds
//! more events than memory allows. The run loop looks once every
//! [`CHECK_EVERY`] events and stops such a run with an [`Abort`] that says
//! what to change.

use super::Sim;
use crate::engine::SimTime;
use crate::model::{Load, Observer};

/// Why a run was stopped early. Worlds like these validate (each key is
/// fine), but the run would never end or would exhaust memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Abort {
    /// Simulated time stood still, or crawled (over a hundred times the events
    /// the load offers), for this many events: a zero-time loop (zero latency,
    /// zero think time, answers at once, retries without delay), or nearly one
    /// (nanosecond delays).
    NoProgress {
        /// When the crawl began, ns.
        from_ns: u64,
        /// When the run was stopped, ns.
        at_ns: u64,
        /// Events processed in between.
        events: u64,
    },
    /// More events pending at once than a run may hold ([`MAX_PENDING`]).
    TooManyPending {
        /// The instant, ns.
        at_ns: u64,
        /// Events pending.
        pending: usize,
        /// The limit.
        limit: usize,
    },
}

/// Most events a run may hold pending at once, at the least: 64 million,
/// about 2 GiB of queue. A world holds a few per client (a million clients:
/// about 3 million), so the limit grows to 4 per closed-loop or one-shot
/// client ([`Limits`]); memory for those clients is checked before
/// a run starts.
pub const MAX_PENDING: usize = 64 << 20;

/// Events between two checks for a stalled clock or an overfull queue (a
/// power of two, so the check is a mask).
pub(super) const CHECK_EVERY: u64 = 1 << 20;

/// Checks in a row in which simulated time crawled that stop a run, at the
/// least: 16 million events. A world may schedule a few events per client at
/// one instant (clients with a constant think time all start together), so
/// the limit grows with the clients: see [`Limits`].
const STALLED_CHECKS: u64 = 16;

/// A run crawls when it makes more events per simulated second than this
/// many per request per second its load offers at its peak, load spikes
/// included ([`crate::model::WorldConfig::peak_requests_per_s`]): a request costs
/// about 7 events, and retry storms multiply that by 4 to 8 in the shipped
/// scenarios, so 700 (100 times the usual) is far above any real one.
const CRAWL_FACTOR: f64 = 700.0;
/// ... and more than this many events per simulated second in any case.
const CRAWL_FLOOR: f64 = 1e7;

impl std::fmt::Display for Abort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Abort::NoProgress {
                from_ns,
                at_ns,
                events,
            } if from_ns == at_ns => write!(
                f,
                "simulated time stopped at {}: {events} events without time passing. \
                 A request can fail and be retried, or end and start again, in zero time \
                 (zero network latency and think time, an answer that comes back at once, \
                 retries without delay, a breaker or throttle that refuses at once); give \
                 the network latency, the think time or the backoff a positive duration",
                SimTime(at_ns)
            ),
            Abort::NoProgress {
                from_ns,
                at_ns,
                events,
            } => write!(
                f,
                "simulated time crawls: {events} events from {} to {}, over a hundred \
                 times what the load offers. Requests are retried or restarted within \
                 nanoseconds (nanosecond latencies, think times, timeouts or backoffs); \
                 give them realistic durations",
                SimTime(from_ns),
                SimTime(at_ns)
            ),
            Abort::TooManyPending {
                at_ns,
                pending,
                limit,
            } => write!(
                f,
                "at {} the run held {pending} pending events, more than the {limit} this \
                 run may hold (32 bytes each): a lower rate, fewer clients, or longer \
                 timeouts and backoffs would keep it within bounds",
                SimTime(at_ns)
            ),
        }
    }
}

/// A run's bounds, worked out when its loop starts.
pub(super) struct Limits {
    /// Checks in a row in which time crawls that stop the run.
    stalled: u64,
    /// Events the run may hold pending.
    pending: usize,
    /// The simulated time a check window must cover for the run to move, ns.
    crawl_ns: u64,
}

/// What the checks have seen so far: when the last one looked, since when
/// the run crawls, and for how many checks.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Watch {
    checked_at: SimTime,
    crawl_from: SimTime,
    stalled: u64,
}

impl Watch {
    /// The check at `t`, `pending` events in the queue: why the run must
    /// stop, if it must.
    #[cold]
    #[inline(never)]
    pub(super) fn look(&mut self, t: SimTime, pending: usize, limits: &Limits) -> Option<Abort> {
        if (t - self.checked_at).0 < limits.crawl_ns {
            if self.stalled == 0 {
                self.crawl_from = t;
            }
            self.stalled += 1;
        } else {
            self.stalled = 0;
        }
        self.checked_at = t;
        if self.stalled >= limits.stalled {
            return Some(Abort::NoProgress {
                from_ns: self.crawl_from.0,
                at_ns: t.0,
                events: self.stalled * CHECK_EVERY,
            });
        }
        (pending > limits.pending).then_some(Abort::TooManyPending {
            at_ns: t.0,
            pending,
            limit: limits.pending,
        })
    }
}

impl<O: Observer, const WHEEL: bool> Sim<'_, O, WHEEL> {
    /// This run's bounds. A run stalls after 16 checks in a row at one
    /// instant, or enough for 8 events per closed-loop or one-shot client
    /// (clients with a constant think time all start together); it may hold
    /// [`MAX_PENDING`] events pending, or 4 per client; it crawls when a
    /// check window covers less time than its load's peak needs at
    /// [`CRAWL_FACTOR`] events a request.
    pub(super) fn limits(&self) -> Limits {
        let clients = match &self.world.load {
            Load::Closed { clients, .. } | Load::OneShot { clients } => u64::from(*clients),
            Load::Open { .. } => 0,
        };
        let fastest = (self.world.peak_requests_per_s() * CRAWL_FACTOR).max(CRAWL_FLOOR);
        Limits {
            stalled: STALLED_CHECKS.max(8 * clients / CHECK_EVERY + 1),
            pending: MAX_PENDING.max(4 * clients as usize),
            crawl_ns: (CHECK_EVERY as f64 / fastest * 1e9) as u64,
        }
    }
}
