//! Helpers shared by the integration tests.

use retry_storm::engine::SimDuration;
use retry_storm::model::{self, WorldConfig};
use retry_storm::retry::Strategy;

/// Little's law at the server over one run: the time-average number in it
/// (queued plus busy workers) and its departure rate times the mean time in
/// it, `(L, lambda W)`; also the run, for further checks.
pub fn littles_law(
    world: &WorldConfig,
    strategy: &Strategy,
    seed: u64,
    bucket: SimDuration,
) -> (f64, f64, model::RunResult) {
    let r = model::run(world, strategy, seed, bucket);
    let l = r.buckets.iter().map(|b| b.queue_len + b.busy).sum::<f64>() / r.buckets.len() as f64;
    let t = &r.totals;
    let lambda = t.server_departures as f64 / world.duration.as_secs_f64();
    let w = t.server_sojourn_ns as f64 / t.server_departures as f64 / 1e9;
    (l, lambda * w, r)
}
