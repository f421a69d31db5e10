//! One run measured: the run, its twin (the same world, strategy and seed without
//! the triggers) and the summary that compares them. `sim run` and sweeps both
//! measure runs this way, so their figures are the same figures.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use crate::engine::SimDuration;
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
    run_measured_with(world, strategy, seed, metrics, None)
}

/// A twin's run, as [`Twins`] keeps it.
#[derive(Clone, Debug)]
struct Twin {
    buckets: Vec<Bucket>,
    events: u64,
    aborted: Option<Abort>,
}

impl From<RunResult> for Twin {
    fn from(t: RunResult) -> Self {
        Twin {
            buckets: t.buckets,
            events: t.totals.events,
            aborted: t.aborted,
        }
    }
}

/// The twins a search has run, by what makes them (the world without its
/// triggers, the strategy but its name, the seed and the bucket width): a
/// search that runs one setting in worlds that differ only in their
/// triggers (`sim advise`'s outage lengths) runs each twin once. A twin is a
/// function of what makes it, so the figures are the same whether it is run
/// or found here (two runs that need the same twin at once may both make
/// it; the first is kept).
#[derive(Debug, Default)]
pub struct Twins {
    done: Mutex<HashMap<String, Arc<OnceLock<Twin>>>>,
}

impl Twins {
    /// The place of the twin of `world` for `strategy` and `seed`, filled
    /// once it has been run.
    fn place(
        &self,
        world: &WorldConfig,
        strategy: &Strategy,
        seed: u64,
        bucket: SimDuration,
    ) -> Arc<OnceLock<Twin>> {
        let unnamed = Strategy {
            name: String::new(),
            ..strategy.clone()
        };
        let key = format!(
            "{:?}\n{unnamed:?}\n{seed}\n{bucket:?}",
            world.without_triggers()
        );
        // A poisoned lock means a twin's run panicked: that panic is the one
        // to report, so the map is used as it is.
        let mut done = self.done.lock().unwrap_or_else(|e| e.into_inner());
        Arc::clone(done.entry(key).or_default())
    }

    /// Twins kept.
    pub fn len(&self) -> usize {
        self.done.lock().map_or(0, |d| d.len())
    }

    /// Whether none is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// [`run_measured`], the twin taken from `twins` when it is there (and kept
/// there when it is run).
pub fn run_measured_with(
    world: &WorldConfig,
    strategy: &Strategy,
    seed: u64,
    metrics: &MetricsConfig,
    twins: Option<&Twins>,
) -> Measured {
    let triggers = world.trigger_windows();
    // A run that had to stop is reported as such; its twin would not help.
    let (r, twin) = match (triggers.is_empty(), twins) {
        (true, _) => (run(world, strategy, seed, metrics.bucket), None),
        (false, Some(kept)) => {
            let place = kept.place(world, strategy, seed, metrics.bucket);
            match place.get() {
                Some(twin) => {
                    let r = run(world, strategy, seed, metrics.bucket);
                    let twin = r.aborted.is_none().then(|| twin.clone());
                    (r, twin)
                }
                None => {
                    let (r, twin) =
                        crate::model::run_with_twin(world, strategy, seed, metrics.bucket);
                    let twin = twin.map(Twin::from);
                    if let Some(t) = &twin {
                        let _ = place.set(t.clone());
                    }
                    (r, twin)
                }
            }
        }
        // The twin forked from the run where the first trigger begins.
        (false, None) => {
            let (r, twin) = crate::model::run_with_twin(world, strategy, seed, metrics.bucket);
            (r, twin.map(Twin::from))
        }
    };
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
    let twin_events = twin.as_ref().map_or(0, |t| t.events);
    let aborted = r.aborted.or(twin.as_ref().and_then(|t| t.aborted));
    Measured {
        run: r,
        twin: twin.map(|t| t.buckets),
        twin_events,
        summary,
        aborted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SimTime;

    /// Worlds that differ only in their outages' lengths share a twin: with
    /// [`Twins`] the twin is run once and every figure is what it is without.
    #[test]
    fn a_kept_twin_gives_the_same_figures() {
        let s = crate::scenario::load(std::path::Path::new("scenarios/outage.toml"))
            .expect("the shipped scenario is valid");
        let mut world = s.world_for(0).into_owned();
        world.duration = SimDuration::from_secs(40);
        let mut longer = world.clone();
        for o in &mut longer.outages {
            o.end = SimTime(o.end.0 + 2_000_000_000);
        }
        let mut strategy = s.strategies[1].clone();
        let twins = Twins::default();
        for w in [&world, &longer] {
            let plain = run_measured(w, &strategy, 3, &s.metrics);
            // The name is a label: a renamed strategy finds the same twin.
            strategy.name.push('x');
            let kept = run_measured_with(w, &strategy, 3, &s.metrics, Some(&twins));
            assert_eq!(plain.twin, kept.twin);
            assert_eq!(plain.twin_events, kept.twin_events);
            assert_eq!(plain.summary, kept.summary);
        }
        assert_eq!(twins.len(), 1);
        // Another seed is another twin.
        run_measured_with(&world, &strategy, 4, &s.metrics, Some(&twins));
        assert_eq!(twins.len(), 2);
    }
}
