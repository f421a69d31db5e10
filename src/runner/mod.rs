//! Running a scenario's strategies, below the commands that ask for it (`sim
//! run`, `sim serve`): the runs in parallel with their twins, and what a run
//! will cost before it starts (events, memory), so that a caller can refuse
//! one that would not finish or would not fit.

pub mod memory;
mod plan;

pub use plan::Plan;

use crate::metrics::Report;
use crate::model;
use crate::scenario::Scenario;

/// Simulates every strategy of `s`, in parallel, results in file order (see
/// [`Plan::simulate`]).
pub fn simulate(s: &Scenario) -> Report {
    Plan::new(s).simulate()
}

/// Events a logical request costs, roughly: a start, two hops, a service, an
/// answer and a stale timeout, plus think times and retries.
const EVENTS_PER_REQUEST: f64 = 7.0;

/// Events one run of `w` will simulate, roughly, its twin included.
fn world_events(w: &model::WorldConfig) -> f64 {
    let twins = if w.outages.is_empty() { 1.0 } else { 2.0 };
    w.expected_requests() * EVENTS_PER_REQUEST * twins
}

/// Bytes a run's state holds per closed-loop or one-shot client: its request
/// slot and its pending events (its next request or retry, an attempt's
/// timeout), with their containers' room to grow. Measured on 2026-12-05 with
/// a million clients (the ideal-server world, 12 s): 164 MB for a run without
/// a trigger; 502 MiB for a run with its crash and its forked twin, which
/// holds a second state (hence the doubling in [`run_bytes`]). Earlier, with
/// no timeouts and no twin, 50 million clients took 89 bytes each.
const BYTES_PER_CLIENT: u64 = 256;
/// Bytes of a row of `replicas.csv`, held in memory before it is written.
const REPLICA_ROW_BYTES: u64 = 40;
/// Bytes a proxy's own view of one replica slot holds: its balancer's
/// count and openness, and its outlier state. With a proxy's own guards and
/// counts (`BYTES_PER_PROXY`), measured on 2026-12-07: 1000 proxies with
/// their own views of 100 replicas (`benches/mesh-1000.toml`) took 22 MB
/// more than one proxy, run and twin; these say 28.
const BYTES_PER_VIEW_SLOT: u64 = 128;
/// Bytes a proxy's own guards and counts hold.
const BYTES_PER_PROXY: u64 = 1024;
/// Bytes a run holds per time bucket, its own and its twin's.
pub const BYTES_PER_BUCKET: u64 = 2 * std::mem::size_of::<crate::metrics::Bucket>() as u64;

/// Bytes one run of world `w` holds, roughly, with buckets of width `bucket`:
/// a slot and its pending events per client, twice with a trigger (a load spike's extra requests
/// are clients of their own while they last: at most all of them at once),
/// its own and its twin's time buckets, and a fleet's per-replica buckets.
pub fn run_bytes(w: &model::WorldConfig, bucket: crate::engine::SimDuration) -> u64 {
    let clients = match &w.load {
        model::Load::Closed { clients, .. } | model::Load::OneShot { clients } => {
            u64::from(*clients)
        }
        model::Load::Open { .. } => 0,
    };
    let spiked =
        (w.expected_requests() - w.nominal_requests_per_s() * w.duration.as_secs_f64()).max(0.0);
    let buckets = w.duration.0 / bucket.0.max(1) + 1;
    // A fleet keeps each replica's series as well.
    let replicas = match &w.server {
        model::ServerModel::Capacity(c) if c.replicas > 1 => u64::from(c.replicas),
        _ => 0,
    };
    // Each replica's bucket, and its row of replicas.csv, whose text is made
    // whole before it is written: 456 MB for 10 000 replicas over 1201
    // buckets, about 38 bytes a row (tests/fixtures/big/bigfleet.toml, whose
    // run peaked at 2.09 GB where this estimate says 2.23).
    let per_replica =
        std::mem::size_of::<crate::metrics::replicas::ReplicaBucket>() as u64 + REPLICA_ROW_BYTES;
    // Every replica of the server and of each tier of a chain holds its
    // workers (the autoscaler's maximum of them: slots are made up front).
    let servers = std::iter::once(&w.server)
        .filter_map(|s| match s {
            model::ServerModel::Capacity(c) => Some(c),
            model::ServerModel::Occ => None,
        })
        .chain(
            w.chain
                .iter()
                .flat_map(|c| c.services.iter().map(|s| &s.server)),
        );
    let fleet: u64 = servers
        .map(|c| {
            let slots = c.slots() as u64;
            slots
                * (u64::from(c.workers) * model::server::BYTES_PER_WORKER
                    + model::server::BYTES_PER_REPLICA)
        })
        .sum();
    // Each proxy's guards and counts, and, with its own view of a fleet,
    // its view of every replica slot of the server.
    let proxies = if w.proxies.many() {
        u64::from(w.proxies.count)
    } else {
        0
    };
    let views = match &w.server {
        model::ServerModel::Capacity(c) if w.proxies.own_view && w.proxies.many() => {
            proxies * c.slots() as u64
        }
        _ => 0,
    };
    let proxied = proxies * BYTES_PER_PROXY + views * BYTES_PER_VIEW_SLOT;
    // A look-aside cache keeps, per key, its fill time and its place in
    // the recency list.
    let cached = w
        .cache
        .map_or(0, |c| u64::from(c.keys) * model::cache::BYTES_PER_KEY);
    // A run with a trigger holds its twin's state as well, from the fork on.
    let states = if w.outages.is_empty() { 1 } else { 2 };
    ((clients + spiked as u64) * BYTES_PER_CLIENT + fleet + proxied + cached) * states
        + buckets * BYTES_PER_BUCKET
        + replicas * buckets * per_replica
}

#[cfg(test)]
mod tests {
    /// The estimate counts a fleet's workers and its per-replica series: the
    /// reproducer's 10 000 replicas of 1000 workers (one strategy, 120 s, a
    /// trigger) peaked at 2.09 GB of resident memory on 2026-12-06, and the
    /// pre-check, which counted neither, let it abort under a 1 GB limit.
    #[test]
    fn a_big_fleets_estimate_is_at_least_what_it_took() {
        let s = crate::scenario::load(std::path::Path::new("tests/fixtures/big/bigfleet.toml"))
            .unwrap();
        let bytes = super::run_bytes(&s.world_for(0), s.metrics.bucket) as f64;
        assert!((2.09e9..2.09e9 * 1.25).contains(&bytes), "{bytes}");
    }
}
