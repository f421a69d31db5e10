//! A call chain: services that call each other. Tier 0 is the world's
//! `[server]`, the one users call; each further tier is a `[[service]]`.
//! While an attempt is served at a tier, its worker does its own part (a
//! service time) and then makes its calls to the tiers below, in sequence or
//! in parallel, holding the worker until they end; the attempt succeeds only
//! when every call does. Each call is a logical request of the callee, retried
//! by the caller tier's policy.

use crate::model::ServerConfig;
pub use crate::retry::amplification::CallMode;

/// The name of the `[server]` tier when it has none.
pub const ENTRY: &str = "server";

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
    /// The mean time an attempt at each tier holds a worker when nothing
    /// fails or waits, ns: its own service time and, for its calls, two
    /// network hops and the callee's hold each (summed in sequence, the
    /// longest in parallel), weighted by the probability each is made.
    pub fn hold_ns(&self, tier0: &ServerConfig, network_mean_ns: f64) -> Vec<f64> {
        let mut time = vec![0.0f64; self.tiers()];
        for &k in topological(&self.calls).iter().rev() {
            let calls = &self.calls[k];
            let each = calls
                .to
                .iter()
                .zip(&calls.probability)
                .map(|(&c, &p)| p * (time[c] + 2.0 * network_mean_ns));
            let below = match calls.mode.unwrap_or(CallMode::Sequence) {
                CallMode::Sequence => each.sum::<f64>(),
                CallMode::Parallel => each.fold(0.0, f64::max),
            };
            time[k] = self.server(k, tier0).service.mean_nanos() + below;
        }
        time
    }

    /// Tier `k`'s server: `tier0` for the entry.
    fn server<'c>(&'c self, k: usize, tier0: &'c ServerConfig) -> &'c ServerConfig {
        if k == 0 {
            tier0
        } else {
            &self.services[k - 1].server
        }
    }

    /// Users' requests per second the chain serves at most, at its tightest
    /// tier when nothing fails or waits: each tier's workers (of its first
    /// replicas, as for one server, before any autoscaling) over the time an
    /// attempt holds one ([`Self::hold_ns`]), over the attempts reaching it
    /// per user request (fan-out and call probabilities included).
    pub fn capacity_per_s(&self, tier0: &ServerConfig, network_mean_ns: f64) -> f64 {
        let hold = self.hold_ns(tier0, network_mean_ns);
        let mut visits = vec![0.0f64; self.tiers()];
        visits[0] = 1.0;
        for k in topological(&self.calls) {
            for (&c, &p) in self.calls[k].to.iter().zip(&self.calls[k].probability) {
                visits[c] += visits[k] * p;
            }
        }
        (0..self.tiers())
            .filter(|&k| visits[k] > 0.0 && hold[k] > 0.0)
            .map(|k| {
                let cfg = self.server(k, tier0);
                (f64::from(cfg.replicas.max(1)) * f64::from(cfg.workers)) * 1e9
                    / hold[k]
                    / visits[k]
            })
            .fold(f64::INFINITY, f64::min)
    }

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

/// The tiers in an order where every caller comes before its callees.
pub fn topological(calls: &[Calls]) -> Vec<usize> {
    fn visit(k: usize, calls: &[Calls], seen: &mut [bool], out: &mut Vec<usize>) {
        if seen[k] {
            return;
        }
        seen[k] = true;
        for &c in &calls[k].to {
            visit(c, calls, seen, out);
        }
        out.push(k);
    }
    let mut seen = vec![false; calls.len()];
    let mut out = Vec::with_capacity(calls.len());
    for k in 0..calls.len() {
        visit(k, calls, &mut seen, &mut out);
    }
    out.reverse();
    out
}
