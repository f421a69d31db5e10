//! One run measured: the run, its twin (the same world, strategy and seed without
//! the triggers) and the summary that compares them. `sim run` and sweeps both
//! measure runs this way, so their figures are the same figures.

use crate::metrics::{Bucket, MetricsConfig, Summary, summarize};
use crate::model::{Abort, RunResult, WorldConfig, run};
use crate::retry::Strategy;

/// A run, its twin's buckets and its summary.
#[derive(Clone, Debug)]
pub struct Measured {
    /// The run.
    pub run: RunResult,
    /// The twin's buckets; `None` when the world has no trigger.
    pub twin: Option<Vec<Bucket>>,
    /// Events the twin simulated (0 without one).
    pub twin_events: u64,
    /// The summary figures.
    pub summary: Summary,
    /// Why the run or its twin stopped early, if one did: its figures are not
    /// to be reported.
    pub aborted: Option<Abort>,
}

/// Runs `strategy` on `world` with `seed`, and, when the world has triggers, its
/// twin without them, then summarises the run against the twin.
pub fn run_measured(
    world: &WorldConfig,
    strategy: &Strategy,
    seed: u64,
    metrics: &MetricsConfig,
) -> Measured {
    let r = run(world, strategy, seed, metrics.bucket);
    let triggers = world.trigger_windows();
    // A run that had to stop is reported as such; its twin would not help.
    let twin = (!triggers.is_empty() && r.aborted.is_none())
        .then(|| run(&world.without_triggers(), strategy, seed, metrics.bucket));
    let summary = summarize(
        metrics,
        &r.buckets,
        twin.as_ref().map(|t| t.buckets.as_slice()),
        &r.latency,
        &r.totals,
        r.in_flight_at_end,
        &triggers,
        world.capacity_per_s(),
    );
    let twin_events = twin.as_ref().map_or(0, |t| t.totals.events);
    let aborted = r.aborted.or(twin.as_ref().and_then(|t| t.aborted));
    Measured {
        run: r,
        twin: twin.map(|t| t.buckets),
        twin_events,
        summary,
        aborted,
    }
}
