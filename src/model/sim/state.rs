//! The server a run simulates, whichever its kind: one capacity server, a
//! fleet of replicas, or the OCC record.

use super::Fleet;
use crate::engine::{Draws, SimDuration, SimTime};
use crate::model::ServerModel;
use crate::model::occ::Occ;
use crate::model::server::Server;

/// The state of the server kind the world has.
// One per run: the size difference between the variants costs nothing, and a
// box would put a pointer chase on every event's path.
// An explicit tag: telling the variants apart is one byte compared, where
// a niche in `Server` took four instructions on every handler's path.
#[allow(clippy::large_enum_variant)]
#[repr(u8)]
#[derive(Clone)]
pub(crate) enum ServerState {
    /// Workers and a queue: one server, as every world without a fleet has.
    /// It is kept apart from [`Fleet`] so that its path has no balancer to
    /// tell and no replica to look up.
    One(Server),
    /// Workers and a queue per replica, behind a balancer.
    Fleet(Fleet),
    /// One record under optimistic concurrency control.
    Occ(Occ),
}

impl ServerState {
    /// The server of `model`, seen by `views` balancers and outlier
    /// detectors of their own.
    pub(super) fn new(model: &ServerModel, views: usize, draws: Draws) -> ServerState {
        match model {
            ServerModel::Capacity(cfg) if Fleet::needed(cfg) => {
                ServerState::Fleet(Fleet::new(cfg, views, draws))
            }
            ServerModel::Capacity(cfg) => ServerState::One(Server::replica(cfg, 0, draws)),
            ServerModel::Occ => ServerState::Occ(Occ::default()),
        }
    }

    /// The record of the server's own defences, when `model` has a
    /// concurrency limiter or CoDel.
    pub(super) fn defences(
        &mut self,
        model: &ServerModel,
        duration: SimDuration,
        bucket: SimDuration,
    ) -> Option<Box<crate::metrics::defences::DefenceRecorder>> {
        let ServerModel::Capacity(cfg) = model else {
            return None;
        };
        if cfg.limiter.is_none() && cfg.codel.is_none() {
            return None;
        }
        let first = self.replica(0).and_then(|s| s.limit(SimTime::ZERO));
        Some(Box::new(crate::metrics::defences::DefenceRecorder::new(
            duration,
            bucket,
            cfg.slots(),
            first,
        )))
    }

    /// Replica `r` of a capacity server (the server itself when it is one).
    #[inline(always)]
    pub(super) fn replica(&mut self, r: usize) -> Option<&mut Server> {
        match self {
            ServerState::One(s) => Some(s),
            ServerState::Fleet(f) => f.replicas.get_mut(r),
            ServerState::Occ(_) => None,
        }
    }
}
