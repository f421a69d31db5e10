//! A proxy's connection-pool limits, as Envoy's cluster circuit breakers
//! set them (`max_connections`, `max_pending_requests`, `max_requests`,
//! `circuit_breaker.proto`; each 1024 by default), and the state one proxy
//! keeps to apply them.
//!
//! The model follows Envoy's connection pool (`conn_pool_base.cc`,
//! `newStreamImpl` and `attachStreamToClient`), with connections that open
//! at once and, once open, stay open:
//! - HTTP/1.1: a connection carries one attempt at a time. An attempt that
//!   finds every connection busy and no room to open another waits in the
//!   proxy's pending queue (Envoy counts `upstream_cx_overflow`), first in
//!   first out; with `max_pending_requests` already waiting it fails at
//!   once (`upstream_rq_pending_overflow`).
//! - HTTP/2: one connection carries every attempt, so nothing waits.
//! - Either way an attempt that would take the attempts on the wire past
//!   `max_requests` fails at once (also counted in
//!   `upstream_rq_pending_overflow`).
//!
//! Envoy never retries an overflow (`wouldRetryFromReset` returns no retry
//! for `Overflow`) and, since envoyproxy/envoy#25487, does not count it
//! against the host in outlier detection: an overflowed request fails for
//! good at the proxy. A per-try timeout starts when the attempt leaves the
//! pending queue (`setupPerTryTimeout` in `onPoolReady`); the request's own
//! deadline runs from its start, time in the queue included.
//!
//! Envoy keeps a pool per upstream host under limits counted for the whole
//! cluster; the model keeps one pool per proxy, as if a free connection
//! could carry an attempt to any replica. With one server that is Envoy's
//! pool; in front of a fleet it is the best case (Envoy can leave an
//! attempt waiting for its own host while another host's connection idles).

use std::collections::VecDeque;

/// A proxy's limits on what it has out to the upstream service.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolLimits {
    /// Connections open at once (HTTP/1.1: attempts on the wire at once).
    pub max_connections: u32,
    /// Attempts waiting for a connection at once.
    pub max_pending_requests: u32,
    /// Attempts on the wire at once.
    pub max_requests: u32,
    /// Whether connections carry many attempts at once (HTTP/2), so no
    /// attempt waits for one.
    pub http2: bool,
}

impl PoolLimits {
    /// Envoy's defaults: 1024 of each, HTTP/1.1 (`circuit_breaker.proto`).
    pub const ENVOY: PoolLimits = PoolLimits {
        max_connections: 1024,
        max_pending_requests: 1024,
        max_requests: 1024,
        http2: false,
    };
}

/// What a proxy does with an attempt its pool is asked to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    /// It goes now.
    Go,
    /// It waits for a connection.
    Wait,
    /// It fails at once: a limit overflowed.
    Overflow,
}

/// One proxy's pool: attempts on the wire, and those waiting for a
/// connection (slot and attempt number, oldest first; entries whose
/// attempt ended while waiting stay until they reach the front).
#[derive(Clone, Debug, Default)]
pub struct Pool {
    on_wire: u32,
    queue: VecDeque<(u32, u32)>,
    waiting: u32,
}

impl Pool {
    /// What becomes of an attempt asked for now.
    pub fn admit(&self, limits: &PoolLimits) -> Admit {
        if !limits.http2 && self.on_wire >= limits.max_connections {
            if self.waiting < limits.max_pending_requests {
                Admit::Wait
            } else {
                Admit::Overflow
            }
        } else if self.on_wire >= limits.max_requests {
            Admit::Overflow
        } else {
            Admit::Go
        }
    }

    /// An attempt goes on the wire.
    pub fn sent(&mut self) {
        self.on_wire += 1;
    }

    /// Attempt `attempt` of `slot` waits for a connection.
    pub fn wait(&mut self, slot: u32, attempt: u32) {
        self.queue.push_back((slot, attempt));
        self.waiting += 1;
    }

    /// A waiting attempt ended where it waited (its request's deadline
    /// passed): it no longer counts, and is skipped when it comes up.
    pub fn gave_up_waiting(&mut self) {
        self.waiting -= 1;
    }

    /// An attempt on the wire is over: its connection is free. Returns the
    /// oldest waiting attempt that `still_waits`, to go on it now (taken
    /// off the queue and counted on the wire).
    pub fn freed(&mut self, mut still_waits: impl FnMut(u32, u32) -> bool) -> Option<(u32, u32)> {
        self.on_wire -= 1;
        while let Some((slot, attempt)) = self.queue.pop_front() {
            if still_waits(slot, attempt) {
                self.waiting -= 1;
                self.on_wire += 1;
                return Some((slot, attempt));
            }
        }
        None
    }

    /// Attempts on the wire.
    pub fn on_wire(&self) -> u32 {
        self.on_wire
    }

    /// Attempts waiting for a connection.
    pub fn waiting(&self) -> u32 {
        self.waiting
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(cx: u32, pending: u32, rq: u32, http2: bool) -> PoolLimits {
        PoolLimits {
            max_connections: cx,
            max_pending_requests: pending,
            max_requests: rq,
            http2,
        }
    }

    /// HTTP/1.1 with 2 connections and 1 pending: two go, the third waits,
    /// the fourth overflows; a freed connection takes the waiting one.
    #[test]
    fn http1_waits_for_a_connection_then_overflows() {
        let l = limits(2, 1, 1024, false);
        let mut p = Pool::default();
        let mut verdicts = Vec::new();
        for slot in 0..4 {
            let v = p.admit(&l);
            verdicts.push(v);
            match v {
                Admit::Go => p.sent(),
                Admit::Wait => p.wait(slot, 1),
                Admit::Overflow => {}
            }
        }
        assert_eq!(
            verdicts,
            [Admit::Go, Admit::Go, Admit::Wait, Admit::Overflow]
        );
        assert_eq!(p.freed(|_, _| true), Some((2, 1)));
        assert_eq!((p.on_wire(), p.waiting()), (2, 0));
        assert_eq!(p.freed(|_, _| true), None);
        assert_eq!(p.on_wire(), 1);
    }

    /// First in, first out; an attempt that gave up waiting is skipped.
    #[test]
    fn the_oldest_still_waiting_goes_first() {
        let l = limits(1, 10, 1024, false);
        let mut p = Pool::default();
        p.sent();
        for slot in [7, 8, 9] {
            assert_eq!(p.admit(&l), Admit::Wait);
            p.wait(slot, 3);
        }
        p.gave_up_waiting();
        assert_eq!(p.freed(|slot, _| slot != 7), Some((8, 3)));
        assert_eq!(p.freed(|_, _| true), Some((9, 3)));
        assert_eq!((p.on_wire(), p.waiting()), (1, 0));
    }

    /// `max_requests` under `max_connections` overflows at once, with
    /// room in the queue (a free connection is there, the request limit
    /// refuses it); HTTP/2 never waits.
    #[test]
    fn the_request_limit_overflows_without_waiting() {
        let mut p = Pool::default();
        p.sent();
        p.sent();
        assert_eq!(p.admit(&limits(4, 10, 2, false)), Admit::Overflow);
        assert_eq!(p.admit(&limits(1, 10, 3, true)), Admit::Go);
        assert_eq!(p.admit(&limits(1, 10, 2, true)), Admit::Overflow);
        assert_eq!(p.admit(&limits(2, 10, 3, false)), Admit::Wait);
    }
}
