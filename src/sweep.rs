//! Sweeps: every strategy at every value of one parameter, replicated with
//! derived seeds, all cells in parallel, results in a fixed order.
//!
//! Within one (value, replication) every strategy gets the same seed, so they are
//! compared on the same workload; replication `r` of value index `v` runs with
//! `derive_seed(seed, v, r)`.

use rayon::prelude::*;

use crate::metrics::stats::mean_ci95;
use crate::metrics::{Bucket, MetricsConfig};
use crate::model;
use crate::scenario::{Scenario, Sweep};

/// SplitMix64's finaliser (Steele, Lea and Flood, 2014): a bijection of u64 that
/// scatters nearby inputs.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed of replication `rep` at value index `value`.
pub fn derive_seed(seed: u64, value: usize, rep: u32) -> u64 {
    mix(mix(seed ^ mix(value as u64)) ^ u64::from(rep))
}

/// One run's figures.
#[derive(Clone, Copy, Debug)]
struct Cell {
    attempts: u64,
    last_success_ms: f64,
    complete: bool,
}

/// One (value, strategy) row of a sweep.
#[derive(Clone, Debug)]
pub struct SweepRow {
    /// The parameter's value.
    pub value: u64,
    /// Strategy name.
    pub strategy: String,
    /// Runs.
    pub runs: u32,
    /// Mean attempts per run (the AWS experiment's "calls": write calls).
    pub calls_mean: Option<f64>,
    /// Half-width of its 95% confidence interval.
    pub calls_ci95: Option<f64>,
    /// Mean time at which the last logical request succeeded, ms.
    pub time_ms_mean: Option<f64>,
    /// Half-width of its 95% confidence interval.
    pub time_ms_ci95: Option<f64>,
    /// Runs in which some request had not ended when the run did.
    pub incomplete_runs: u32,
}

/// A sweep's results.
#[derive(Clone, Debug)]
pub struct SweepReport {
    /// Scenario name.
    pub scenario: String,
    /// Base seed.
    pub seed: u64,
    /// The sweep.
    pub sweep: Sweep,
    /// Measurement settings (bucket width of the timelines).
    pub metrics: MetricsConfig,
    /// Rows by value, then strategy in file order.
    pub rows: Vec<SweepRow>,
    /// The time series of replication 0 at the largest value, per strategy.
    pub timelines: Vec<(String, Vec<Bucket>)>,
    /// Events simulated over all cells.
    pub events: u64,
}

/// Runs every cell of `s`'s sweep; `None` if the scenario has no sweep.
pub fn run(s: &Scenario) -> Option<SweepReport> {
    run_with_progress(s, &|_, _| {})
}

/// [`run`], calling `progress(done, total)` as cells finish (from any thread,
/// in no particular order; it must not affect results).
pub fn run_with_progress(
    s: &Scenario,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Option<SweepReport> {
    let sweep = s.sweep.clone()?;
    // One world per (value, strategy): a strategy may bring its own clients.
    let worlds: Vec<Vec<_>> = sweep
        .values
        .iter()
        .map(|&v| {
            (0..s.strategies.len())
                .map(|k| sweep.parameter.apply(&s.world_for(k), v))
                .collect()
        })
        .collect();
    let last = sweep.values.len() - 1;
    let cells: Vec<(usize, usize, u32)> = (0..sweep.values.len())
        .flat_map(|v| {
            (0..s.strategies.len())
                .flat_map(move |k| (0..sweep.replications).map(move |r| (v, k, r)))
        })
        .collect();
    let total = cells.len();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<(Cell, u64, Option<Vec<Bucket>>)> = cells
        .par_iter()
        .map(|&(v, k, r)| {
            let out = model::run(
                &worlds[v][k],
                &s.strategies[k],
                derive_seed(s.seed, v, r),
                s.metrics.bucket,
            );
            let t = &out.totals;
            let cell = Cell {
                attempts: t.attempts,
                last_success_ms: t.last_success_ns as f64 / 1e6,
                complete: out.in_flight_at_end == 0,
            };
            let timeline = (v == last && r == 0).then_some(out.buckets);
            progress(
                done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1,
                total,
            );
            (cell, t.events, timeline)
        })
        .collect();
    let events = results.iter().map(|(_, e, _)| e).sum();
    let per_row = sweep.replications as usize;
    let mut rows = Vec::new();
    let mut timelines = Vec::new();
    for (i, chunk) in results.chunks(per_row).enumerate() {
        let (v, k) = (i / s.strategies.len(), i % s.strategies.len());
        let calls: Vec<f64> = chunk.iter().map(|(c, _, _)| c.attempts as f64).collect();
        let times: Vec<f64> = chunk.iter().map(|(c, _, _)| c.last_success_ms).collect();
        let (calls_mean, calls_ci95) = mean_ci95(&calls);
        let (time_ms_mean, time_ms_ci95) = mean_ci95(&times);
        rows.push(SweepRow {
            value: sweep.values[v],
            strategy: s.strategies[k].name.clone(),
            runs: sweep.replications,
            calls_mean,
            calls_ci95,
            time_ms_mean,
            time_ms_ci95,
            incomplete_runs: chunk.iter().filter(|(c, _, _)| !c.complete).count() as u32,
        });
        if let Some(buckets) = chunk.first().and_then(|(_, _, b)| b.clone()) {
            timelines.push((s.strategies[k].name.clone(), buckets));
        }
    }
    Some(SweepReport {
        scenario: s.name.clone(),
        seed: s.seed,
        sweep,
        metrics: s.metrics.clone(),
        rows,
        timelines,
        events,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_seeds_differ_by_value_and_replication() {
        let mut seen = std::collections::BTreeSet::new();
        for v in 0..20 {
            for r in 0..100 {
                assert!(seen.insert(derive_seed(42, v, r)));
            }
        }
        assert_eq!(derive_seed(42, 3, 7), derive_seed(42, 3, 7));
    }
}
