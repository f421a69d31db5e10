//! Runs that share their start. Strategies that differ only in what they
//! read once an attempt has failed (their backoff, retry count and use of
//! Retry-After) are the same run, event for event, until an attempt fails; in a world whose first trigger comes before any failure,
//! that is the whole run up to the trigger. The part before the trigger is
//! then simulated once and each strategy's run, and the twin, go on from a
//! copy of it: the figures are those of running each from the start (the
//! tests below compare them, and every shipped scenario's output stayed
//! byte for byte the same), for the cost of one start instead of one a
//! strategy.

use rayon::prelude::*;

use super::{LoopState, RunResult, Sim, wheel_pays};
use crate::engine::{SimDuration, SimTime};
use crate::metrics::Totals;
use crate::model::event::{Event, Kind};
use crate::model::{NoObserver, WorldConfig};
use crate::retry::{Outcome, Strategy};

/// The runs of `strategies` on `world` with `seed`, their common start
/// simulated once with the first strategy, and what `twin` makes of the
/// first's twin (the world without its triggers), given the means to
/// simulate it from that start (called again, it returns the same twin),
/// as [`super::run_with_twin_then`] does: None, having simulated only that start,
/// when a strategy decision was taken in it (an attempt failed, was retried
/// or was refused at the client) or the run stopped early there, or when
/// the world has no trigger or has a call chain (whose callers' own
/// strategies the start would carry). The caller vouches that the
/// strategies differ only in what they read after a failure.
pub fn run_sharing_start<T: Send>(
    world: &WorldConfig,
    strategies: &[&Strategy],
    seed: u64,
    bucket: SimDuration,
    twin: impl FnOnce(&mut dyn FnMut() -> RunResult) -> T + Send,
) -> Option<(Vec<RunResult>, T)> {
    if wheel_pays(world) {
        shared::<true, T>(world, strategies, seed, bucket, twin)
    } else {
        shared::<false, T>(world, strategies, seed, bucket, twin)
    }
}

fn shared<const WHEEL: bool, T: Send>(
    world: &WorldConfig,
    strategies: &[&Strategy],
    seed: u64,
    bucket: SimDuration,
    twin: impl FnOnce(&mut dyn FnMut() -> RunResult) -> T + Send,
) -> Option<(Vec<RunResult>, T)> {
    let end = SimTime::ZERO + world.duration;
    let fork_at = world
        .outages
        .iter()
        .map(|o| o.start)
        .min()
        .filter(|&t| t < end)?;
    let first = *strategies.first()?;
    if world.chain.is_some() {
        return None;
    }
    let mut obs = NoObserver;
    let mut start = Sim::<NoObserver, WHEEL>::new(world, first, seed, bucket, &mut obs);
    // As in `with_twin`: the marker first, so that it precedes every event
    // due at `fork_at`, in every run that goes on from here.
    start.queue.push(fork_at, Event::new(Kind::Fork, 0, 0));
    start.schedule_start();
    let mut state = LoopState::new(start.queue.len(), bucket);
    if start.run_until(bucket, fork_at, &mut state).is_some() || !undecided(&start.rec.totals) {
        return None;
    }
    // The progress display counts the start once for every run and the
    // twin that go on from it, as if each had simulated it.
    let again = fork_at.0.saturating_mul(strategies.len() as u64);
    super::SIMULATED_NS.fetch_add(again, std::sync::atomic::Ordering::Relaxed);
    let calm = world.without_triggers();
    let start = &start;
    let go_on = |world: &WorldConfig, strategy: &Strategy, twin: bool| {
        let mut obs = NoObserver;
        let mut run = start.fork_to(world, strategy, &mut obs);
        if twin {
            run.queue
                .retain(|e| !matches!(e.kind(), Kind::OutageStart | Kind::OutageEnd));
            run.outage_targets.clear();
        }
        let mut state = state;
        let aborted = run.run_to_end(bucket, &mut state);
        run.finish(state.peak_pending, aborted)
    };
    // The twin first: runs measured apart whose twin it also is (the same
    // calm part) wait for it, and the runs here can go to another thread.
    let (twin, runs) = rayon::join(
        || {
            let mut done: Option<RunResult> = None;
            let mut simulate = || {
                done.get_or_insert_with(|| go_on(&calm, first, true))
                    .clone()
            };
            twin(&mut simulate)
        },
        || {
            strategies
                .par_iter()
                .map(|s| go_on(world, s, false))
                .collect::<Vec<_>>()
        },
    );
    Some((runs, twin))
}

/// Whether no strategy has decided anything yet: every answer so far OK,
/// no retry, no request failed, nothing refused at the client.
fn undecided(t: &Totals) -> bool {
    t.outcomes.iter().sum::<u64>() == t.outcomes[Outcome::Ok as usize]
        && t.retries == 0
        && t.failed() == 0
        && t.rejected_locally == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The main scenario's four strategies without a budget differ only in
    /// their backoff: their start is shared, and each run and the twin are
    /// those of running each from the start.
    #[test]
    fn a_shared_start_gives_each_run_its_own_figures() {
        let s = crate::scenario::load(std::path::Path::new("scenarios/outage.toml"))
            .expect("the shipped scenario is valid");
        let world = s.world_for(0).into_owned();
        let strategies: Vec<&Strategy> =
            s.strategies.iter().filter(|x| x.budget.is_none()).collect();
        assert_eq!(strategies.len(), 4);
        let bucket = s.metrics.bucket;
        let (runs, twin) =
            run_sharing_start(&world, &strategies, s.seed, bucket, |simulate| simulate())
                .expect("the main scenario's start decides nothing");
        for (strategy, shared) in strategies.iter().zip(&runs) {
            let (alone, alone_twin) = super::super::run_with_twin(&world, strategy, s.seed, bucket);
            assert_eq!(
                format!("{:?}", shared.totals),
                format!("{:?}", alone.totals)
            );
            assert_eq!(shared.buckets.to_vec(), alone.buckets.to_vec());
            if std::ptr::eq(*strategy, strategies[0]) {
                assert_eq!(
                    twin.buckets.to_vec(),
                    alone_twin.expect("a trigger").buckets.to_vec()
                );
            }
        }
    }

    /// Hedged copies go out before anything fails: a strategy decided
    /// something, and the start is not shared.
    #[test]
    fn a_start_with_hedged_copies_is_not_shared() {
        let s = crate::scenario::load(std::path::Path::new("scenarios/outage.toml"))
            .expect("the shipped scenario is valid");
        let world = s.world_for(0).into_owned();
        let hedged = |delay_ms: u64| Strategy {
            hedging: Some(crate::retry::HedgingConfig {
                max_attempts: 2,
                delay: SimDuration::from_millis(delay_ms),
                cancel: true,
            }),
            ..s.strategies[2].clone()
        };
        let (a, b) = (hedged(20), hedged(20));
        let shared = run_sharing_start(&world, &[&a, &b], s.seed, s.metrics.bucket, |simulate| {
            simulate()
        });
        assert!(shared.is_none());
    }
}
