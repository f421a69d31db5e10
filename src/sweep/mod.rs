//! Sweeps: every strategy at every point of one or two swept parameters,
//! replicated with derived seeds, all runs ("cells") in parallel, results in a
//! fixed order.
//!
//! Within one (point, replication) every strategy gets the same seed, so they are
//! compared on the same workload; replication `r` of point `p` runs with
//! `derive_seed(seed, p, r)`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use crate::metrics::MetricsConfig;
use crate::metrics::figures::{self, Estimate, FIGURES};
use crate::model;
use crate::output::shard;
use crate::scenario::{Scenario, Sweep};

pub use crate::engine::rng::derive_seed;

/// One run's measurements.
#[derive(Clone, Debug, PartialEq)]
pub struct CellResult {
    /// The figures, in [`FIGURES`] order.
    pub figures: [Option<f64>; FIGURES.len()],
    /// Attempts and successes per bucket, for the runs `timeline.png` shows.
    pub timeline: Option<Vec<Bin>>,
    /// Why the run stopped early, if it did: the sweep must not be reported.
    pub aborted: Option<model::Abort>,
}

/// One time bucket of a timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bin {
    /// Attempts started.
    pub attempts: u64,
    /// Logical requests that succeeded.
    pub successes: u64,
}

/// Where cell `index` is: (point, strategy, replication). Cells are numbered
/// point by point, strategies in file order within a point, replications
/// within a strategy.
pub fn locate(sweep: &Sweep, index: usize) -> (usize, usize, u32) {
    let reps = sweep.replications as usize;
    let strategies = sweep.points.first().map_or(1, |p| p.strategies.len());
    let rep = index % reps;
    let rest = index / reps;
    (rest / strategies, rest % strategies, rep as u32)
}

/// Whether the cell at (point, replication) keeps its timeline: replication 0 of
/// the timeline's point (the last unless `timeline_at` names another).
fn keeps_timeline(sweep: &Sweep, point: usize, rep: u32) -> bool {
    point == sweep.timeline_point && rep == 0
}

/// One (point, strategy) row of a sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepRow {
    /// Index into the sweep's points.
    pub point: usize,
    /// Strategy name.
    pub strategy: String,
    /// Runs.
    pub runs: u32,
    /// Runs in which some request had not ended when the run did.
    pub incomplete_runs: u32,
    /// Runs that recovered after the trigger (those with a finite recovery
    /// time); `None` in a scenario without a trigger, where nothing is to
    /// recover from.
    pub recovered_runs: Option<u32>,
    /// The summary of each figure over the runs that have it, in [`FIGURES`]
    /// order, as its [`figures::Stat`] says.
    pub stats: Vec<Estimate>,
}

impl SweepRow {
    /// Mean (median, share) of the figure named `name`.
    pub fn mean(&self, name: &str) -> Option<f64> {
        figures::index(name).and_then(|i| self.stats[i].value())
    }

    /// Half-width of the 95% confidence interval of the mean of the figure
    /// named `name` (a figure summarised by its mean).
    pub fn ci95(&self, name: &str) -> Option<f64> {
        match figures::index(name).map(|i| self.stats[i]) {
            Some(Estimate::Mean { ci95, .. }) => ci95,
            _ => None,
        }
    }
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
    /// Rows by point, then strategy in file order.
    pub rows: Vec<SweepRow>,
    /// Replication 0 at the timeline's point: attempts per bucket, per strategy.
    pub timelines: Vec<(String, Vec<Bin>)>,
    /// Events simulated over all runs.
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
    let sweep = s.sweep.as_ref()?;
    let cells: Vec<usize> = (0..sweep.runs()).collect();
    let results = run_cells(s, sweep, &cells, progress);
    Some(aggregate(s, sweep, &results))
}

/// Runs the cells numbered `cells` (see [`locate`]) in parallel; results in the
/// same order.
pub fn run_cells(
    s: &Scenario,
    sweep: &Sweep,
    cells: &[usize],
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Vec<CellResult> {
    let done = AtomicUsize::new(0);
    // The strategies of one point and replication run with the same seed: those
    // whose twins are the same share one (see `model::Twins`), let go once the
    // last of them has run.
    let reps = sweep.replications as usize;
    let group = |cell: usize| {
        let (p, _, r) = locate(sweep, cell);
        p * reps + r as usize
    };
    let mut runs: HashMap<usize, usize> = HashMap::new();
    for &cell in cells {
        *runs.entry(group(cell)).or_default() += 1;
    }
    let twins: HashMap<usize, model::Twins> = runs
        .into_iter()
        .map(|(g, n)| (g, model::Twins::for_runs(n)))
        .collect();
    cells
        .par_iter()
        .map(|&cell| {
            let (p, k, r) = locate(sweep, cell);
            let point = &sweep.points[p];
            let world = &point.worlds[k];
            let m = model::run_measured_with(
                world,
                &point.strategies[k],
                derive_seed(s.seed, p, r),
                &s.metrics,
                twins.get(&group(cell)),
            );
            let out = &m.run;
            let figures = figures::measure(
                &m.summary,
                !world.outages.is_empty(),
                figures::breaker_open_s(&s.metrics, out.buckets.iter()),
            );
            let timeline = keeps_timeline(sweep, p, r).then(|| {
                out.buckets
                    .iter()
                    .map(|b| Bin {
                        attempts: b.attempts,
                        successes: b.successes,
                    })
                    .collect()
            });
            progress(done.fetch_add(1, Ordering::Relaxed) + 1, cells.len());
            CellResult {
                figures,
                timeline,
                aborted: m.aborted,
            }
        })
        .collect()
}

/// The report from every cell's result, in cell order.
pub fn aggregate(s: &Scenario, sweep: &Sweep, results: &[CellResult]) -> SweepReport {
    let reps = sweep.replications as usize;
    let names: Vec<&str> = s.strategies.iter().map(|x| x.name.as_str()).collect();
    let mut rows = Vec::new();
    let mut timelines = Vec::new();
    for (i, chunk) in results.chunks(reps).enumerate() {
        let (point, k) = (i / names.len(), i % names.len());
        let stats = FIGURES
            .iter()
            .enumerate()
            .map(|(f, figure)| {
                let xs: Vec<f64> = chunk.iter().filter_map(|c| c.figures[f]).collect();
                Estimate::of(figure.stat, &xs)
            })
            .collect();
        let count =
            |keep: &dyn Fn(&CellResult) -> bool| chunk.iter().filter(|c| keep(c)).count() as u32;
        rows.push(SweepRow {
            point,
            strategy: names[k].to_string(),
            runs: chunk.len() as u32,
            incomplete_runs: count(&|c| c.figures[figures::IN_FLIGHT].is_some_and(|n| n > 0.0)),
            // A run has a recovery time (finite or not) only with a trigger.
            recovered_runs: chunk
                .iter()
                .any(|c| c.figures[figures::RECOVERY].is_some())
                .then(|| count(&|c| c.figures[figures::RECOVERY].is_some_and(f64::is_finite))),
            stats,
        });
        if let Some(bins) = chunk.first().and_then(|c| c.timeline.clone()) {
            timelines.push((names[k].to_string(), bins));
        }
    }
    SweepReport {
        scenario: s.name.clone(),
        seed: s.seed,
        sweep: sweep.clone(),
        metrics: s.metrics.clone(),
        rows,
        timelines,
        events: events(results),
    }
}

/// The columns of a sweep's cells in a shard: the figures.
pub fn shard_columns() -> Vec<&'static str> {
    FIGURES.iter().map(|f| f.name).collect()
}

/// The cells numbered `cells`, with their `results`, as a shard holds them.
pub fn to_shard(cells: &[usize], results: &[CellResult]) -> Vec<shard::Cell> {
    cells
        .iter()
        .zip(results)
        .map(|(&index, r)| shard::Cell {
            index,
            values: r.figures.to_vec(),
            timeline: r
                .timeline
                .as_ref()
                .map(|bins| bins.iter().map(|b| (b.attempts, b.successes)).collect()),
        })
        .collect()
}

/// A shard's cell as a run's result.
pub fn from_shard(cell: shard::Cell) -> CellResult {
    let mut figures = [None; FIGURES.len()];
    for (slot, v) in figures.iter_mut().zip(cell.values) {
        *slot = v;
    }
    CellResult {
        figures,
        timeline: cell.timeline.map(|bins| {
            bins.into_iter()
                .map(|(attempts, successes)| Bin {
                    attempts,
                    successes,
                })
                .collect()
        }),
        aborted: None,
    }
}

/// Events simulated over `results`.
pub fn events(results: &[CellResult]) -> u64 {
    results
        .iter()
        .map(|c| c.figures[figures::EVENTS].map_or(0, |e| e as u64))
        .sum()
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
