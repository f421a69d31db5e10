//! A call chain at run time (`[[service]]` tables). Tier 0 is the run's own
//! server, reached by the users' attempts as in every world; the tiers below
//! it, their calls and their callers' retry state live here, so a world
//! without a chain pays one check per completion.
//!
//! An attempt served at a tier with calls does its own part (the service
//! time), then makes its calls while its worker stays held; when they end,
//! the worker is freed and the attempt answered: OK if every call succeeded,
//! else 503 (the handler fails with its dependency). A call is a logical
//! request of the callee tier, with the retry policy, timeout and budget its
//! caller tier has for that tier; it keeps going when its caller is gone
//! (nobody cancels it) unless it carries the caller's deadline.
//!
//! A call's attempts, retries, hedges and budget take the users' path
//! ([`super::attempts`], [`super::hedge`]) as [`ChainCalls`]; what is the
//! chain's own is here: its state, the calls a held worker makes and learns
//! the end of (`calls`), and the tiers' servers (`tiers`).

mod calls;
mod tiers;

pub(super) use calls::ChainCalls;

use super::callers::{Guards, Parts, Side};
use super::clients::Users;
use super::hedge::CopyBook;
use super::{ServerState, Sim};
use crate::engine::{Purpose, SimDuration, SimTime, Ticket, addr};
use crate::metrics::tiers::TierTotals;
use crate::model::Observer;
use crate::model::chain::{CallMode, Calls, ChainConfig};
use crate::model::client::Slots;
use crate::model::event::{Event, Kind};
use crate::model::server::{Admission, Finished, Job, Rejection, Server};
use crate::retry::{GiveUp, HedgingConfig, Outcome, Strategy, TierPolicy};
use rand::RngExt;

/// Which call a call slot is, and who waits for it.
#[derive(Clone, Copy, Debug)]
struct Link {
    /// The tier called.
    tier: u32,
    /// The caller: its tier, replica, worker, and the epoch of its server
    /// when the call was made (a crash since makes the call an orphan).
    parent_tier: u32,
    parent_replica: u16,
    parent_worker: u32,
    parent_epoch: u32,
}

/// A worker holding an attempt while its calls are under way.
#[derive(Clone, Copy, Debug, Default)]
struct Hold {
    /// Its server's epoch when the calls began; 0 with `active` false when
    /// the worker holds nothing.
    epoch: u32,
    active: bool,
    /// The next call to make (in sequence), calls not yet ended, and
    /// whether one failed.
    next: u32,
    pending: u32,
    failed: bool,
    /// When the worker's own part of the attempt ended.
    local_done: SimTime,
}

/// One tier's callers: the strategy of their calls to it, and the guards
/// (budget, breaker, throttle) they share.
#[derive(Clone)]
struct Callers {
    strategy: Strategy,
    guards: Guards,
}

/// The chain's run-time state.
#[derive(Clone)]
pub(crate) struct ChainRun {
    /// Tiers 1 and below (tier 0 is the run's server).
    servers: Vec<ServerState>,
    calls: Vec<Calls>,
    /// Workers per replica, per tier.
    workers: Vec<usize>,
    /// Per tier, per replica x worker.
    holds: Vec<Vec<Hold>>,
    /// The calls in progress, their links, and each tier's callers.
    slots: Slots,
    links: Vec<Link>,
    callers: Vec<Option<Callers>>,
    /// Whether each tier receives its callers' deadlines.
    knows_deadline: Vec<bool>,
    /// Whether the calls to each tier are cancelled when their caller stops
    /// waiting.
    cancelled_with_caller: Vec<bool>,
    /// The copies out of each hedged call, by call slot.
    book: CopyBook,
    /// Each tier's figures.
    pub(super) totals: Vec<TierTotals>,
    /// Attempts sent to each tier below 0 in each bucket of `width`.
    pub(super) series: Vec<Vec<u32>>,
    /// The latency of each tier's successful calls, from the call's start
    /// to its OK at the caller.
    pub(super) latency: Vec<crate::metrics::Histogram>,
    width: u64,
}

impl ChainRun {
    pub(super) fn new(
        chain: &ChainConfig,
        tier0: &crate::model::ServerConfig,
        policies: &[TierPolicy],
        duration: SimDuration,
        bucket: SimDuration,
    ) -> ChainRun {
        let buckets = duration.0.div_ceil(bucket.0.max(1)).max(1) as usize;
        let n = chain.tiers();
        let servers = chain
            .services
            .iter()
            .zip(policies)
            .map(|(s, p)| {
                // A callee that receives its callers' deadline drops queued
                // work whose deadline has passed (gRPC fails it with
                // DEADLINE_EXCEEDED without running the handler).
                let mut cfg = s.server.clone();
                cfg.drop_expired |= p.propagate_deadline;
                if super::Fleet::needed(&cfg) {
                    // (A service in a chain has no limiter: its draws go unused.)
                    ServerState::Fleet(super::Fleet::new(&cfg, 1, crate::engine::Draws::new(0)))
                } else {
                    ServerState::One(Server::new(&cfg))
                }
            })
            .collect();
        let workers: Vec<usize> = std::iter::once(tier0)
            .chain(chain.services.iter().map(|s| &s.server))
            .map(|c| c.workers as usize)
            .collect();
        let slots_per_tier: Vec<usize> = std::iter::once(tier0)
            .chain(chain.services.iter().map(|s| &s.server))
            .map(|c| c.slots() * c.workers as usize)
            .collect();
        ChainRun {
            servers,
            calls: chain.calls.clone(),
            workers,
            holds: slots_per_tier
                .iter()
                .map(|&m| vec![Hold::default(); m])
                .collect(),
            slots: Slots::new(0),
            links: Vec::new(),
            book: CopyBook::default(),
            knows_deadline: (0..n)
                .map(|k| k > 0 && policies.get(k - 1).is_some_and(|p| p.propagate_deadline))
                .collect(),
            cancelled_with_caller: (0..n)
                .map(|k| k > 0 && policies.get(k - 1).is_some_and(|p| p.propagate_cancel))
                .collect(),
            callers: (0..n)
                .map(|k| {
                    let p = policies.get(k.checked_sub(1)?)?;
                    Some(Callers {
                        guards: Guards::new(&p.strategy),
                        strategy: p.strategy.clone(),
                    })
                })
                .collect(),
            totals: vec![TierTotals::default(); n],
            series: vec![vec![0; buckets]; n],
            latency: (0..n).map(|_| crate::metrics::Histogram::new()).collect(),
            width: bucket.0.max(1),
        }
    }

    /// The hedging of the calls to `tier`, if its callers hedge.
    fn hedging(&self, tier: usize) -> Option<HedgingConfig> {
        self.callers.get(tier)?.as_ref()?.strategy.hedging
    }

    /// Whether an attempt at `tier` makes calls.
    pub(super) fn calls_from(&self, tier: usize) -> bool {
        self.calls.get(tier).is_some_and(|c| !c.to.is_empty())
    }

    /// The services below the server.
    pub(super) fn services(&self) -> usize {
        self.servers.len()
    }
}

/// Tier `tier`'s server: the run's own for tier 0, else the chain's. (A
/// function of the two fields, so the rest of the run stays borrowable.)
pub(super) fn tier_server<'s>(
    server: &'s mut ServerState,
    chain: &'s mut Option<Box<ChainRun>>,
    tier: usize,
) -> Option<&'s mut ServerState> {
    if tier == 0 {
        return Some(server);
    }
    chain.as_mut()?.servers.get_mut(tier - 1)
}

impl<O: Observer, const WHEEL: bool> Sim<'_, O, WHEEL> {
    /// The chain, for its handlers, which run only in a world with one.
    pub(super) fn chain(&mut self) -> &mut ChainRun {
        // Only called from the chain's handlers, which exist only with one.
        self.chain
            .as_mut()
            .expect("a chain's handler runs with a chain")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::chain::{Calls, ChainConfig, Service};
    use crate::model::{Dist, Load, ServerModel, WorldConfig};
    use crate::retry::TierPolicy;
    use crate::retry::amplification::{Tier, chain_load};
    use crate::retry::{BackoffKind, Strategy};

    /// A world of `tiers` tiers, each calling the next once, the bottom one
    /// so slow that every attempt at it times out; `users` one-shot users.
    fn hanging_chain(users: u32, retries: &[u32], timeouts_ms: &[u64]) -> (WorldConfig, Strategy) {
        let s = crate::scenario::load(std::path::Path::new("scenarios/outage.toml"))
            .expect("the shipped scenario is valid");
        let mut world = s.world_for(0).into_owned();
        world.outages.clear();
        world.load = Load::OneShot { clients: users };
        world.network = Dist::constant(SimDuration::from_millis(1));
        let ServerModel::Capacity(mut server) = world.server.clone() else {
            panic!("capacity server");
        };
        server.workers = 100_000;
        server.queue_capacity = 0;
        server.overload = Default::default();
        server.service = Dist::constant(SimDuration::from_millis(1));
        let n = retries.len();
        let mut bottom = server.clone();
        bottom.service = Dist::constant(SimDuration::from_secs(1000));
        world.server = ServerModel::Capacity(server.clone());
        world.chain = Some(Box::new(ChainConfig {
            entry: "t0".into(),
            services: (1..n)
                .map(|k| Service {
                    name: format!("t{k}"),
                    server: if k + 1 == n {
                        bottom.clone()
                    } else {
                        server.clone()
                    },
                })
                .collect(),
            calls: (0..n)
                .map(|k| Calls {
                    to: if k + 1 < n { vec![k + 1] } else { vec![] },
                    probability: if k + 1 < n { vec![1.0] } else { vec![] },
                    mode: None,
                })
                .collect(),
        }));
        let mut strategy = s.strategies[0].clone();
        let set = |st: &mut Strategy, r: u32, t: u64| {
            st.backoff.kind = BackoffKind::None;
            st.policy.max_retries = r;
            st.policy.timeout = Some(SimDuration::from_millis(t));
            st.policy.deadline = None;
            st.budget = None;
            st.breaker = None;
            st.throttle = None;
        };
        set(&mut strategy, retries[0], timeouts_ms[0]);
        strategy.tiers = (1..n)
            .map(|k| {
                let mut st = strategy.clone();
                st.tiers.clear();
                set(&mut st, retries[k], timeouts_ms[k]);
                TierPolicy {
                    strategy: st,
                    propagate_deadline: false,
                    propagate_cancel: false,
                }
            })
            .collect();
        (world, strategy)
    }

    /// Three tiers of three attempts under total failure: 27 attempts at
    /// the bottom for each request, as the closed form says, when each
    /// timeout outlasts the attempts below it.
    #[test]
    fn total_failure_reaches_the_bottom_as_the_product_of_attempts() {
        let users = 50;
        let retries = [2, 2, 2];
        let (world, strategy) = hanging_chain(users, &retries, &[2_000, 200, 20]);
        let result = crate::model::run(&world, &strategy, 1, SimDuration::from_millis(100));
        let tiers: Vec<TierTotals> = result
            .tiers
            .expect("a chain's run has tier figures")
            .into_iter()
            .map(|t| t.totals)
            .collect();
        let closed = chain_load(
            &retries
                .iter()
                .enumerate()
                .map(|(k, &r)| Tier {
                    retries: r,
                    fails: if k + 1 == retries.len() { 1.0 } else { 0.0 },
                    calls: 1,
                    probability: 1.0,
                    mode: CallMode::Sequence,
                })
                .collect::<Vec<_>>(),
        );
        for (k, t) in tiers.iter().enumerate() {
            let expected = closed[k].worst_case * f64::from(users);
            assert_eq!(t.attempts as f64, expected, "tier {k}: {t:?}");
        }
        assert_eq!(result.totals.attempts, 3 * u64::from(users));
        assert_eq!(result.totals.succeeded, 0);
    }

    /// A chain deeper than a byte counts: 300 tiers, no retries, the bottom
    /// one hanging; each user's request reaches every tier once. (A call's
    /// tier was kept in a byte, so the 257th tier's calls went to tier 0's
    /// callers, which do not exist.)
    #[test]
    fn a_chain_of_300_tiers_reaches_its_bottom() {
        let n = 300;
        let users = 3;
        let timeouts: Vec<u64> = (0..n).map(|k| 1_000_000 - 1_000 * k as u64).collect();
        let (world, strategy) = hanging_chain(users, &vec![0; n], &timeouts);
        let result = crate::model::run(&world, &strategy, 1, SimDuration::from_millis(100));
        let tiers = result.tiers.expect("a chain's run has tier figures");
        assert_eq!(tiers.len(), n);
        for (k, t) in tiers.iter().enumerate() {
            assert_eq!(t.totals.attempts, u64::from(users), "tier {k}");
        }
    }
}
