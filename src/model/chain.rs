//! A call chain: services that call each other. Tier 0 is the world's
//! `[server]`, the one users call; each further tier is a `[[service]]`.
//! While an attempt is served at a tier, its worker does its own part (a
//! service time) and then makes its calls to the tiers below, in sequence or
//! in parallel, holding the worker until they end; the attempt succeeds only
//! when every call does. Each call is a logical request of the callee, retried
//! by the caller tier's policy.

use crate::model::ServerConfig;
use crate::retry::Strategy;
pub use crate::retry::amplification::CallMode;

/// One service below tier 0.
#[derive(Clone, Debug)]
pub struct Service {
    /// Its name in the scenario.
    pub name: String,
    /// Its workers, queue and overload behaviour, once per replica.
    pub server: ServerConfig,
}

/// The calls an attempt at one tier makes.
#[derive(Clone, Debug, Default)]
pub struct Calls {
    /// The callee tier of each call, in the order they are made.
    pub to: Vec<usize>,
    /// The probability that each call is made at all (1 unless the file
    /// says otherwise), drawn for each attempt.
    pub probability: Vec<f64>,
    /// Whether they go one after another or all at once.
    pub mode: Option<CallMode>,
}

/// The services and who calls whom.
#[derive(Clone, Debug)]
pub struct ChainConfig {
    /// The name of tier 0 (the `[server]`).
    pub entry: String,
    /// Tiers 1 and below, in declaration order.
    pub services: Vec<Service>,
    /// The calls of each tier, tier 0 first.
    pub calls: Vec<Calls>,
}

impl ChainConfig {
    /// Tiers, tier 0 included.
    pub fn tiers(&self) -> usize {
        self.services.len() + 1
    }

    /// Tier `k`'s name.
    pub fn name(&self, k: usize) -> &str {
        if k == 0 {
            &self.entry
        } else {
            &self.services[k - 1].name
        }
    }
}

/// What the callers of one tier do: the policy of their calls to it.
#[derive(Clone, Debug, PartialEq)]
pub struct TierPolicy {
    /// Backoff, retries, timeout, budget, breaker of the calls.
    pub strategy: Strategy,
    /// The call carries its caller's deadline: it gives up when the caller's
    /// attempt would, and the callee can drop the work of a caller that is gone
    /// (gRPC's deadline propagation).
    pub propagate_deadline: bool,
}
