//! The events of the world, kept to 16 bytes so the queue stays cache-friendly.

/// What an event does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// Closed loop: client `slot` starts its next logical request.
    Begin,
    /// Open loop: a new logical request arrives.
    Arrival,
    /// Backoff of `slot` is over: send attempt `attempt + 1`.
    Send,
    /// Attempt (`slot`, `attempt`) reaches the server; `aux` = 1 for a bad request
    /// (capacity server) or the version read (OCC write).
    AtServer,
    /// Worker `slot` finishes the job it started in server epoch `attempt`.
    ServiceDone,
    /// The answer to (`slot`, `attempt`) reaches the client: `outcome`, and a
    /// Retry-After of `aux` ms (`u32::MAX`: none).
    Response,
    /// Attempt (`slot`, `attempt`) times out, unless answered already.
    Timeout,
    /// Outage `aux` begins.
    OutageStart,
    /// Outage `aux` ends.
    OutageEnd,
    /// OCC: the read of attempt (`slot`, `attempt`) reaches the record.
    ReadAtServer,
    /// The circuit breaker's open time may be over.
    BreakerTimer,
    /// The server is back from a crash.
    Restart,
    /// A load spike's extra request arrives; `aux` is the spike's outage index.
    SpikeArrival,
    /// The periodic work of tier `slot`'s fleet: `aux` 0 an ejection sweep,
    /// 1 health checks, 2 an autoscaler sync.
    FleetTimer,
    /// Tier `slot`'s replica `replica`, started by the autoscaler, is ready;
    /// `attempt` is the start's generation (a start cancelled since is
    /// ignored).
    ReplicaReady,
    /// An attempt of a call reaches tier `aux`'s replica `replica`; `slot`
    /// is the call's slot (call slots are numbered apart from clients').
    TierAtServer,
    /// Worker `slot` of tier `aux`'s replica `replica` finishes its part of
    /// the attempt it started in epoch `attempt`.
    TierServiceDone,
    /// Tier `aux`'s replica `replica` is back from a crash.
    TierRestart,
    /// The answer to an attempt of call `slot` arrives at its caller.
    CallResponse,
    /// An attempt of call `slot` times out at its caller.
    CallTimeout,
    /// Call `slot`'s backoff is over: its next attempt goes out.
    CallSend,
    /// The hedging delay after copy (`slot`, `attempt`) is over.
    Hedge,
    /// The hedging delay after copy `attempt` of call `slot` is over.
    CallHedge,
    /// The cache's answer to the request in `slot` (a hit) reaches it.
    CacheHit,
    /// Where a run stops to fork its twin (see `run_with_twin`): never
    /// handled, as the pause pops it. The last kind (see `KINDS`).
    Fork,
}

/// Every kind, at the index of its `u8` (a new kind goes before `Fork`,
/// which stays last, and here: the assertion below fails to compile
/// otherwise).
const KINDS: [Kind; 25] = [
    Kind::Begin,
    Kind::Arrival,
    Kind::Send,
    Kind::AtServer,
    Kind::ServiceDone,
    Kind::Response,
    Kind::Timeout,
    Kind::OutageStart,
    Kind::OutageEnd,
    Kind::ReadAtServer,
    Kind::BreakerTimer,
    Kind::Restart,
    Kind::SpikeArrival,
    Kind::FleetTimer,
    Kind::ReplicaReady,
    Kind::TierAtServer,
    Kind::TierServiceDone,
    Kind::TierRestart,
    Kind::CallResponse,
    Kind::CallTimeout,
    Kind::CallSend,
    Kind::Hedge,
    Kind::CallHedge,
    Kind::CacheHit,
    Kind::Fork,
];
const _: () = assert!(KINDS.len() == Kind::Fork as usize + 1);

/// One scheduled event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// What it does: a [`Kind`] as `u8` (see [`Event::kind`]).
    pub(crate) kind: u8,
    /// An [`crate::retry::Outcome`] as `u8`, for responses.
    pub outcome: u8,
    /// The replica of the server an attempt goes to or a worker belongs to
    /// (in what would otherwise be padding).
    pub replica: u16,
    /// A client slot or a worker index.
    pub slot: u32,
    /// An attempt number within the slot, or a server epoch.
    pub attempt: u32,
    /// Kind-specific payload.
    pub aux: u32,
}

/// `aux` of a response without Retry-After.
pub const NO_RETRY_AFTER: u32 = u32::MAX;

/// `outcome` of an attempt reaching a server (`Kind::AtServer`) that is
/// permanently bad: the server answers 400. (Its `aux` is then the ticket
/// of the attempt's timeout, [`crate::engine::Ticket`].)
pub const BAD_REQUEST: u8 = 1;

/// `outcome` of an OCC write whose read was handled where the attempt was
/// sent, with no event of its own: its `aux` is then the nanoseconds from
/// the read reaching the record to the write reaching it (otherwise the
/// version the read returned).
pub const READ_IN_PLACE: u8 = u8::MAX;

impl Event {
    /// What it does.
    #[inline(always)]
    pub fn kind(&self) -> Kind {
        KINDS
            .get(usize::from(self.kind))
            .copied()
            .unwrap_or(Kind::Fork)
    }

    /// The client slot whose request handling this event will look at
    /// first, for a fetch ahead (a hint: it may name a slot of another
    /// side, or none).
    #[inline(always)]
    pub fn client(&self) -> u32 {
        if self.kind == Kind::ServiceDone as u8 {
            self.aux
        } else {
            self.slot
        }
    }

    /// An event with only a kind and a slot.
    pub fn new(kind: Kind, slot: u32, attempt: u32) -> Event {
        Event {
            kind: kind as u8,
            outcome: 0,
            replica: 0,
            slot,
            attempt,
            aux: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_kind_is_read_back_as_itself() {
        for (i, &k) in super::KINDS.iter().enumerate() {
            assert_eq!(k as usize, i);
            assert_eq!(super::Event::new(k, 0, 0).kind(), k);
        }
    }

    #[test]
    fn events_stay_small() {
        assert_eq!(std::mem::size_of::<super::Event>(), 16);
    }
}
