//! One run measured: the run, its twin (the same world, strategy and seed without
//! the triggers) and the summary that compares them. `sim run` and sweeps both
//! measure runs this way, so their figures are the same figures.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use rayon::prelude::*;

use crate::engine::SimDuration;
use crate::metrics::{MetricsConfig, Series, Summary, summarize};
use crate::model::{
    Abort, RunResult, WorldConfig, run, run_sharing_start, run_with_twin, run_with_twin_then,
};
use crate::retry::{Backoff, BreakerConfig, Outcome, RetryPolicy, Strategy};

/// A run, its twin's buckets and its summary.
#[derive(Clone, Debug)]
pub struct Measured {
    /// The run.
    pub run: RunResult,
    /// The twin's buckets; `None` when the world has no trigger.
    pub twin: Option<Series>,
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
    buckets: Series,
    events: u64,
    aborted: Option<Abort>,
    /// Whether every attempt of the users (and, in a chain, of the calls
    /// between services) was answered OK and none was refused at the
    /// client: no retry setting was ever asked for anything (see
    /// [`calm_part`]).
    calm: bool,
    /// It crashed, or more than 1% of its attempts met overload (timed out,
    /// reset, refused, 429 or 503): the world is overloaded without the
    /// trigger, and recovery towards it means nothing.
    overloaded: bool,
}

impl From<RunResult> for Twin {
    fn from(t: RunResult) -> Self {
        let totals = &t.totals;
        let answered_ok = totals.outcomes[Outcome::Ok as usize];
        // The calls below the users', in a chain: none retried, failed or
        // refused (a failed attempt is retried or fails its call).
        let calls_calm = t.tiers.iter().flatten().skip(1).all(|tier| {
            let c = &tier.totals;
            c.retries == 0 && c.calls_failed == 0 && c.rejected_locally == 0
        });
        let calm = t.aborted.is_none()
            && totals.outcomes.iter().sum::<u64>() == answered_ok
            && totals.retries == 0
            && totals.failed() == 0
            && totals.rejected_locally == 0
            && calls_calm;
        // Overload shows as attempts timed out, reset, refused or answered
        // 429 or 503; a 400 or a 409 is the request's own doing, not the
        // server's load.
        let overload = [
            Outcome::Timeout,
            Outcome::Reset,
            Outcome::Refused,
            Outcome::Status429,
            Outcome::Status503,
        ]
        .iter()
        .map(|&o| totals.outcomes[o as usize])
        .sum::<u64>()
        // A concurrency limiter's 503s are the defence at work, holding
        // the server in a steady state, not a server past its capacity
        // (Envoy's limiter pins its limit at 3 while it measures its
        // minimum RTT, at the start and every minute).
        .saturating_sub(totals.limited);
        let overloaded = totals.crashes > 0 || overload.saturating_mul(100) > totals.attempts;
        Twin {
            buckets: t.buckets,
            events: t.totals.events,
            aborted: t.aborted,
            calm,
            overloaded,
        }
    }
}

/// What of `strategy` a run can act on while every attempt is answered OK
/// (a calm twin's run): the strategy without the settings that are read only
/// once an attempt has failed or been refused at the client. Two strategies
/// with the same calm part have the same calm twin, event for event:
///
/// - the backoff, the retry count, which outcomes are retried and how a
///   Retry-After is used are read only to decide on a retry;
/// - a retry budget is told of each request and success but only decides on
///   retries, and draws nothing;
/// - a breaker whose failure rate is above zero, told only of successes,
///   never opens (and draws only when it opens), as long as an OK answer is
///   not one of the outcomes it counts as a failure.
///
/// Kept, because they act on answered attempts too: the timeout and the
/// deadline (their timers are events), the throttle (it may draw before an
/// attempt while answers are outstanding), and hedging (whole: its copies go
/// out on a timer). The settings of a chain's calls are taken the same way.
fn calm_part(strategy: &Strategy) -> Strategy {
    let mut calm = Strategy {
        name: String::new(),
        ..strategy.clone()
    };
    if calm.hedging.is_some() {
        return calm;
    }
    let policy = &strategy.policy;
    calm.backoff = Backoff::default();
    calm.policy = RetryPolicy {
        timeout: policy.timeout,
        deadline: policy.deadline,
        ..RetryPolicy::default()
    };
    calm.budget = None;
    let inert = |b: &BreakerConfig| b.failure_rate > 0.0 && !policy.retry_on.contains(Outcome::Ok);
    if calm.breaker.as_ref().is_some_and(inert) {
        calm.breaker = None;
    }
    for tier in &mut calm.tiers {
        tier.strategy = calm_part(&tier.strategy);
    }
    calm
}

/// What of `strategy` its run acts on before any of its attempts has
/// failed or been refused: all but the settings read only to decide on a
/// retry (the backoff, the retry count, Retry-After and what a 429's
/// backoff starts from). Unlike the calm part it keeps the budget and the
/// breaker, whose state every request and answer changes, and the retried
/// outcomes (a breaker counts an answer as a failure by them). Two
/// strategies with the same start part in one world are the same run until
/// a strategy decides something ([`run_sharing_start`]).
fn start_part(strategy: &Strategy) -> Strategy {
    let policy = &strategy.policy;
    Strategy {
        name: String::new(),
        backoff: Backoff::default(),
        policy: RetryPolicy {
            timeout: policy.timeout,
            deadline: policy.deadline,
            retry_on: policy.retry_on,
            ..RetryPolicy::default()
        },
        ..strategy.clone()
    }
}

/// [`run_measured_with`] for several strategies, each in its world (a
/// scenario's), in parallel, results in their order, with the same
/// figures. Strategies with the same start part ([`start_part`]) in equal
/// worlds whose first trigger comes before any failure share the run up to
/// that trigger, simulated once, and the twin forked there
/// ([`run_sharing_start`]); the others are measured one by one, their
/// twins kept in `twins`.
pub fn run_measured_all(
    runs: &[(&WorldConfig, &Strategy)],
    seed: u64,
    metrics: &MetricsConfig,
    twins: &Twins,
) -> Vec<Measured> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut by_key: HashMap<String, usize> = HashMap::new();
    for (i, (world, strategy)) in runs.iter().enumerate() {
        // A bad request fails before any trigger: its start is not shared.
        let shares = !world.trigger_windows().is_empty()
            && world.chain.is_none()
            && world.bad_fraction == 0.0;
        let key = shares.then(|| {
            let start = start_part(strategy);
            format!("{world:?}\n{start:?}\n{seed}\n{:?}", metrics.bucket)
        });
        match key {
            Some(key) => {
                let g = *by_key.entry(key).or_insert_with(|| {
                    groups.push(Vec::new());
                    groups.len() - 1
                });
                groups[g].push(i);
            }
            None => groups.push(vec![i]),
        }
    }
    let one = |i: usize| {
        (
            i,
            run_measured_with(runs[i].0, runs[i].1, seed, metrics, Some(twins)),
        )
    };
    let mut done: Vec<(usize, Measured)> = groups
        .par_iter()
        .flat_map(|g| {
            if g.len() < 2 {
                return g.iter().map(|&i| one(i)).collect::<Vec<_>>();
            }
            let world = runs[g[0]].0;
            let strategies: Vec<&Strategy> = g.iter().map(|&i| runs[i].1).collect();
            let (exact, calm) = twins.places(world, strategies[0], seed, metrics.bucket);
            let twin = |simulate: &mut dyn FnMut() -> RunResult| {
                twins.take_or_make(&exact, &calm, simulate)
            };
            match run_sharing_start(world, &strategies, seed, metrics.bucket, twin) {
                Some((results, twin)) => {
                    shared_measured(world, &strategies, seed, metrics, g, results, twin)
                }
                None => g.par_iter().map(|&i| one(i)).collect(),
            }
        })
        .collect();
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, m)| m).collect()
}

/// The runs of a group that shared its start, measured against the twin
/// forked there (the first strategy's): every strategy's when it is calm,
/// else the others' own, simulated.
fn shared_measured(
    world: &WorldConfig,
    strategies: &[&Strategy],
    seed: u64,
    metrics: &MetricsConfig,
    group: &[usize],
    results: Vec<RunResult>,
    twin: Twin,
) -> Vec<(usize, Measured)> {
    let calm = world.without_triggers();
    group
        .iter()
        .zip(results)
        .zip(strategies)
        .enumerate()
        .map(|(j, ((&i, r), strategy))| {
            let own = if j == 0 || twin.calm {
                twin.clone()
            } else {
                Twin::from(run(&calm, strategy, seed, metrics.bucket))
            };
            // A run that had to stop is reported as such; its twin would not help.
            let own = r.aborted.is_none().then_some(own);
            (i, measured(world, metrics, r, own))
        })
        .collect()
}

/// The twins runs have simulated, kept for other runs that need the same
/// twin: a twin is a function of the world without its triggers, the
/// strategy, the seed and the bucket width, so the figures are the same
/// whether it is run or found here.
///
/// - By the whole strategy (but its name): a search that runs one setting in
///   worlds that differ only in their triggers (`sim advise`'s outage
///   lengths) runs each twin once.
/// - By the strategy's calm part ([`calm_part`]), for a calm twin: the
///   strategies of a scenario that differ in how they retry, in a world
///   whose twin never fails an attempt, share one twin (the main scenario's
///   four strategies do).
///
/// Two runs that need the same twin at once may both make it (the first is
/// kept), except that a run about to simulate a twin waits for one another
/// run is simulating under the same calm part, and takes it if it is calm.
#[derive(Debug)]
pub struct Twins {
    done: Mutex<HashMap<String, Arc<OnceLock<Twin>>>>,
    /// Calm twins by calm part; `None` where the first twin made was not
    /// calm (then each run makes its own).
    calm: Mutex<HashMap<String, Arc<OnceLock<Option<Twin>>>>>,
    /// Runs still to come before the twins can be let go.
    runs_left: AtomicUsize,
    /// Twins simulated.
    simulated: AtomicUsize,
}

impl Default for Twins {
    fn default() -> Self {
        Twins::for_runs(usize::MAX)
    }
}

/// Where one twin is kept.
type Place<T> = Arc<OnceLock<T>>;

impl Twins {
    /// Twins kept for `runs` runs: once that many have been measured with
    /// them, the twins are let go (a sweep's runs of one point and seed).
    pub fn for_runs(runs: usize) -> Self {
        Twins {
            done: Mutex::default(),
            calm: Mutex::default(),
            runs_left: AtomicUsize::new(runs),
            simulated: AtomicUsize::new(0),
        }
    }

    fn key(world: &WorldConfig, strategy: &Strategy, seed: u64, bucket: SimDuration) -> String {
        format!(
            "{:?}\n{strategy:?}\n{seed}\n{bucket:?}",
            world.without_triggers()
        )
    }

    /// The places of the twin of `world` for `strategy` and `seed`: by the
    /// whole strategy, and by its calm part.
    fn places(
        &self,
        world: &WorldConfig,
        strategy: &Strategy,
        seed: u64,
        bucket: SimDuration,
    ) -> (Place<Twin>, Place<Option<Twin>>) {
        let unnamed = Strategy {
            name: String::new(),
            ..strategy.clone()
        };
        let exact = Self::key(world, &unnamed, seed, bucket);
        let calm = Self::key(world, &calm_part(strategy), seed, bucket);
        // A poisoned lock means a twin's run panicked: that panic is the one
        // to report, so the maps are used as they are.
        let exact = {
            let mut done = self.done.lock().unwrap_or_else(|e| e.into_inner());
            Arc::clone(done.entry(exact).or_default())
        };
        let mut kept = self.calm.lock().unwrap_or_else(|e| e.into_inner());
        (exact, Arc::clone(kept.entry(calm).or_default()))
    }

    /// The twin of a run that `simulate` can make (forked from the run):
    /// one kept already, else a calm one another run is making (waited
    /// for), else the one `simulate` makes; kept by the whole strategy, and
    /// by the calm part if it is calm and the first made.
    fn take_or_make(
        &self,
        exact: &OnceLock<Twin>,
        calm: &OnceLock<Option<Twin>>,
        simulate: &mut dyn FnMut() -> RunResult,
    ) -> Twin {
        let mut simulate = || {
            self.simulated.fetch_add(1, Ordering::Relaxed);
            Twin::from(simulate())
        };
        let twin = found(exact, calm).unwrap_or_else(|| {
            let mut made = None;
            let shared = calm.get_or_init(|| {
                let twin = simulate();
                made = Some(twin.clone());
                twin.calm.then_some(twin)
            });
            made.or_else(|| shared.clone()).unwrap_or_else(simulate)
        });
        let _ = exact.set(twin.clone());
        twin
    }

    /// A run has been measured: the last lets the twins go.
    fn run_done(&self) {
        if self.runs_left.fetch_sub(1, Ordering::Relaxed) == 1 {
            self.done.lock().unwrap_or_else(|e| e.into_inner()).clear();
            self.calm.lock().unwrap_or_else(|e| e.into_inner()).clear();
        }
    }

    /// Twins simulated so far (the others were found).
    pub fn simulated(&self) -> usize {
        self.simulated.load(Ordering::Relaxed)
    }

    /// Twins kept (by the whole strategy).
    pub fn len(&self) -> usize {
        self.done.lock().map_or(0, |d| d.len())
    }

    /// Whether none is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A twin kept in `exact`, or a calm one in `calm`.
fn found(exact: &OnceLock<Twin>, calm: &OnceLock<Option<Twin>>) -> Option<Twin> {
    exact.get().or_else(|| calm.get()?.as_ref()).cloned()
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
    let bucket = metrics.bucket;
    // A run that had to stop is reported as such; its twin would not help.
    let (r, twin) = match (triggers.is_empty(), twins) {
        (true, _) => (run(world, strategy, seed, bucket), None),
        (false, Some(kept)) => {
            let (exact, calm) = kept.places(world, strategy, seed, bucket);
            let measured = match found(&exact, &calm) {
                Some(twin) => {
                    let r = run(world, strategy, seed, bucket);
                    let twin = r.aborted.is_none().then_some(twin);
                    (r, twin)
                }
                // The twin forked from the run, simulated only if no other
                // run has kept it by the time this one ends.
                None => run_with_twin_then(world, strategy, seed, bucket, |simulate| {
                    kept.take_or_make(&exact, &calm, simulate)
                }),
            };
            kept.run_done();
            measured
        }
        // The twin forked from the run where the first trigger begins.
        (false, None) => {
            let (r, twin) = run_with_twin(world, strategy, seed, bucket);
            (r, twin.map(Twin::from))
        }
    };
    measured(world, metrics, r, twin)
}

/// A run and its twin, summarised.
fn measured(
    world: &WorldConfig,
    metrics: &MetricsConfig,
    r: RunResult,
    twin: Option<Twin>,
) -> Measured {
    let triggers = world.trigger_windows();
    let mut summary = summarize(
        metrics,
        &r.buckets,
        twin.as_ref().map(|t| &t.buckets),
        &r.latency,
        &r.totals,
        r.in_flight_at_end,
        &triggers,
        world.capacity_per_s(),
    );
    if twin.as_ref().is_some_and(|t| t.overloaded) {
        summary.twin_overloaded = true;
        summary.recovery_time_s = None;
    }
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

    /// Measured together, strategies that share their start (the main
    /// scenario's four without a budget) and one that does not (its budget)
    /// give the figures and the twin each gives measured alone. (Not the
    /// twin's count of events: a calm twin shared with the budget's run was
    /// made by a run that handles answers where they are sent, with fewer
    /// events; no output reports it.)
    #[test]
    fn runs_measured_together_are_runs_measured_alone() {
        let s = crate::scenario::load(std::path::Path::new("scenarios/outage.toml"))
            .expect("the shipped scenario is valid");
        let mut world = s.world_for(0).into_owned();
        world.duration = SimDuration::from_secs(40);
        let runs: Vec<_> = s.strategies.iter().map(|x| (&world, x)).collect();
        let together = run_measured_all(&runs, s.seed, &s.metrics, &Twins::default());
        assert_eq!(together.len(), s.strategies.len());
        for (m, strategy) in together.iter().zip(&s.strategies) {
            let alone = run_measured(&world, strategy, s.seed, &s.metrics);
            assert_eq!(m.summary, alone.summary, "{}", strategy.name);
            assert_eq!(m.twin, alone.twin, "{}", strategy.name);
        }
    }

    /// The start part drops only what is read to decide on a retry.
    #[test]
    fn the_start_part_keeps_budgets_breakers_and_timeouts() {
        let s = crate::scenario::load(std::path::Path::new("scenarios/outage.toml"))
            .expect("the shipped scenario is valid");
        let (none, jitter, budget) = (&s.strategies[0], &s.strategies[2], &s.strategies[4]);
        assert_eq!(start_part(none), start_part(jitter));
        assert_ne!(start_part(jitter), start_part(budget));
        let mut slower = jitter.clone();
        slower.policy.timeout = Some(SimDuration::from_secs(2));
        assert_ne!(start_part(jitter), start_part(&slower));
    }

    /// Settings read only after a failure are not in the calm part; those
    /// that act on answered attempts are.
    #[test]
    fn the_calm_part_keeps_what_acts_on_answered_attempts() {
        use crate::retry::{BackoffKind, HedgingConfig};
        let s = crate::scenario::load(std::path::Path::new("scenarios/outage.toml"))
            .expect("the shipped scenario is valid");
        let base = s.strategies[0].clone();
        let mut other = s.strategies[2].clone();
        other.backoff.kind = BackoffKind::DecorrelatedJitter;
        other.policy.max_retries = 1;
        other.policy.retry_on = [Outcome::Reset].into_iter().collect();
        let budgets = crate::scenario::load(std::path::Path::new("scenarios/budgets.toml"))
            .expect("the shipped scenario is valid");
        other.budget = budgets.strategies.iter().find_map(|x| x.budget.clone());
        assert!(other.budget.is_some());
        let breaker = BreakerConfig {
            failure_rate: 0.5,
            window: 10,
            min_calls: 5,
            open_for: SimDuration::from_secs(1),
            jitter: 0.0,
            probes: 1,
        };
        other.breaker = Some(breaker.clone());
        assert_eq!(calm_part(&base), calm_part(&other));
        // A breaker that opens on no failure at all, or counts an OK as one,
        // acts on a calm run.
        for (rate, ok_fails) in [(0.0, false), (0.5, true)] {
            let mut b = other.clone();
            b.breaker = Some(BreakerConfig {
                failure_rate: rate,
                ..breaker.clone()
            });
            if ok_fails {
                b.policy.retry_on.insert(Outcome::Ok);
            }
            assert_ne!(calm_part(&base), calm_part(&b), "{rate} {ok_fails}");
        }
        let mut t = other.clone();
        t.policy.timeout = Some(SimDuration::from_millis(900));
        assert_ne!(calm_part(&base), calm_part(&t));
        let mut d = other.clone();
        d.policy.deadline = Some(SimDuration::from_secs(5));
        assert_ne!(calm_part(&base), calm_part(&d));
        // Hedging keeps the whole strategy: its copies go out on a timer.
        let hedged = |max_retries| {
            let mut h = base.clone();
            h.policy.max_retries = max_retries;
            h.hedging = Some(HedgingConfig {
                max_attempts: 2,
                delay: SimDuration::from_millis(50),
                cancel: true,
            });
            calm_part(&h)
        };
        assert_ne!(hedged(1), hedged(2));
    }

    /// A sweep's twins are let go once the runs that may use them are done.
    #[test]
    fn twins_kept_for_some_runs_are_let_go_after_them() {
        let s = crate::scenario::load(std::path::Path::new("scenarios/outage.toml"))
            .expect("the shipped scenario is valid");
        let mut world = s.world_for(0).into_owned();
        world.duration = SimDuration::from_secs(25);
        let twins = Twins::for_runs(2);
        let first = run_measured_with(&world, &s.strategies[0], 1, &s.metrics, Some(&twins));
        assert_eq!(twins.len(), 1);
        let second = run_measured_with(&world, &s.strategies[1], 1, &s.metrics, Some(&twins));
        assert_eq!(twins.simulated(), 1, "the calm twin is shared");
        assert_eq!(first.twin, second.twin);
        assert!(twins.is_empty());
    }
}
