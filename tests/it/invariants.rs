//! Invariants that must hold for every strategy of every shipped scenario and of
//! a fixture that switches on every mechanism. They are checked by an observer
//! that keeps its own books, independent of the engine's counters.

use rayon::prelude::*;
use std::path::Path;

use retry_storm::engine::{SimDuration, SimTime};
use retry_storm::model::{Observer, run_observed};
use retry_storm::retry::{GiveUp, Outcome};
use retry_storm::scenario;

#[derive(Default)]
struct Books {
    /// Per slot: whether a logical request is in progress, and the last outcome.
    active: Vec<bool>,
    last_outcome: Vec<Option<Outcome>>,
    first_attempts: u64,
    retries: u64,
    succeeded: u64,
    failed: u64,
    violations: Vec<String>,
    retry_on_400: bool,
    breaker_open: bool,
}

impl Books {
    fn grow(&mut self, slot: u32) -> usize {
        let i = slot as usize;
        if self.active.len() <= i {
            self.active.resize(i + 1, false);
            self.last_outcome.resize(i + 1, None);
        }
        i
    }

    fn violation(&mut self, what: String) {
        if self.violations.len() < 10 {
            self.violations.push(what);
        }
    }
}

impl Observer for Books {
    fn request_started(&mut self, now: SimTime, slot: u32) {
        let i = self.grow(slot);
        if self.active[i] {
            self.violation(format!(
                "slot {slot} started a request at {now} before the last one ended"
            ));
        }
        self.active[i] = true;
    }

    fn breaker_open(&mut self, _now: SimTime, breaker: u32, open: bool) {
        // The breaker all users share (a proxy's own stops only its users).
        if breaker == 0 {
            self.breaker_open = open;
        }
    }

    fn attempt_sent(&mut self, now: SimTime, slot: u32, retry: u32, deadline_at: SimTime) {
        let i = self.grow(slot);
        if !self.active[i] {
            self.violation(format!(
                "slot {slot} sent an attempt at {now} with no request in progress"
            ));
        }
        if self.breaker_open {
            self.violation(format!(
                "slot {slot} sent an attempt at {now} while the breaker was open"
            ));
        }
        if retry == 0 {
            self.first_attempts += 1;
        } else {
            if self.last_outcome[i] == Some(Outcome::Status400) && !self.retry_on_400 {
                self.violation(format!("slot {slot} retried a 400 at {now}"));
            }
            self.retries += 1;
        }
        if now >= deadline_at {
            self.violation(format!(
                "slot {slot} sent an attempt at {now}, at or after its deadline {deadline_at}"
            ));
        }
        self.last_outcome[i] = None;
    }

    fn attempt_ended(&mut self, _now: SimTime, slot: u32, outcome: Outcome) {
        let i = self.grow(slot);
        self.last_outcome[i] = Some(outcome);
    }

    fn request_ended(&mut self, now: SimTime, slot: u32, failure: Option<GiveUp>) {
        let i = self.grow(slot);
        if !self.active[i] {
            self.violation(format!("slot {slot} ended a request twice (at {now})"));
        }
        self.active[i] = false;
        match failure {
            None => self.succeeded += 1,
            Some(_) => self.failed += 1,
        }
    }
}

fn check(path: &str) {
    let s = scenario::load(Path::new(path)).unwrap_or_else(|e| panic!("{e}"));
    for (i, strategy) in s.strategies.iter().enumerate() {
        let mut books = Books {
            retry_on_400: strategy.policy.retry_on.contains(Outcome::Status400),
            ..Books::default()
        };
        let r = run_observed(
            &s.world_for(i),
            strategy,
            s.seed,
            s.metrics.bucket,
            &mut books,
        );
        let t = &r.totals;
        let who = format!("{path} / {}", strategy.name);
        assert!(
            books.violations.is_empty(),
            "{who}: {:#?}",
            books.violations
        );
        assert!(t.started > 0, "{who}: nothing ran");
        // Each logical request ends exactly once or is still in flight.
        assert_eq!(
            t.succeeded + t.failed() + r.in_flight_at_end,
            t.started,
            "{who}: requests unaccounted for"
        );
        assert_eq!(
            books.active.iter().filter(|a| **a).count() as u64,
            r.in_flight_at_end,
            "{who}: in flight"
        );
        // The engine's counters agree with the observer's books.
        assert_eq!(
            (books.succeeded, books.failed),
            (t.succeeded, t.failed()),
            "{who}"
        );
        let first = t.started - t.rejected_first;
        assert_eq!(
            books.first_attempts, first,
            "{who}: one first attempt per request not refused locally"
        );
        assert_eq!(books.retries, t.retries, "{who}: retries");
        assert_eq!(
            t.attempts,
            first + t.retries,
            "{who}: attempts = first attempts + retries"
        );
        // Every attempt that was answered or timed out was counted once.
        let ended: u64 = t.outcomes.iter().sum();
        assert!(ended <= t.attempts, "{who}: more outcomes than attempts");
        assert!(t.wasted_ns <= t.busy_ns, "{who}: wasted more than worked");
        // A hedged request's copies after the first count as its retries.
        let max_retries = u64::from(strategy.hedging.map_or(strategy.policy.max_retries, |h| {
            u32::from(h.max_attempts) - 1
        }));
        assert!(
            t.retries <= t.started * max_retries,
            "{who}: more retries than allowed"
        );
    }
}

#[test]
fn outage_scenario() {
    check("scenarios/outage.toml");
}

#[test]
fn unavailable_scenario() {
    check("scenarios/unavailable.toml");
}

#[test]
fn blackhole_scenario() {
    check("scenarios/blackhole.toml");
}

#[test]
fn every_mechanism_at_once() {
    check("tests/fixtures/everything.toml");
}

#[test]
fn every_overload_behaviour_and_trigger() {
    check("tests/fixtures/overload.toml");
}

#[test]
fn aws_occ_scenario() {
    check("scenarios/aws-jitter.toml");
}

#[test]
fn hedging_scenario() {
    check("scenarios/hedging.toml");
}

#[test]
fn hedged_calls_scenario() {
    check("scenarios/hedged-calls.toml");
}

#[test]
fn budgets_breaker_and_throttle_scenario() {
    check("scenarios/budgets.toml");
}

#[test]
fn open_vs_closed_scenario() {
    check("scenarios/open-vs-closed.toml");
}

#[test]
fn call_chain_scenario() {
    check("scenarios/call-chain.toml");
}

#[test]
fn server_side_scenario() {
    check("scenarios/server-side.toml");
}

/// A fleet behind a balancer, with outlier ejection and health checks.
#[test]
fn fleet_scenario() {
    check("scenarios/fleet.toml");
}

/// A zone's replicas lost at once.
#[test]
fn zone_scenario() {
    check("scenarios/zone.toml");
}

/// An autoscaled fleet: replicas come and go during the run.
#[test]
fn autoscale_scenario() {
    check("scenarios/autoscale.toml");
}

/// Memory must follow the clients, not the events: a run ten times as long
/// leaves no more events pending. The first 60 s of the long run are the short
/// run itself (same seed, same streams), so its peak can only be equal or
/// higher; equal means nothing piled up over the other 540 s, where the outage's
/// storm no longer is.
#[test]
fn pending_events_do_not_grow_with_the_length_of_a_run() {
    let s = scenario::load(Path::new("scenarios/outage.toml")).unwrap_or_else(|e| panic!("{e}"));
    for (i, strategy) in s.strategies.iter().enumerate() {
        let peak = |seconds: u64| {
            let mut world = s.world_for(i).into_owned();
            world.duration = SimDuration::from_secs(seconds);
            retry_storm::model::run(&world, strategy, s.seed, s.metrics.bucket).peak_pending
        };
        let (short, long) = (peak(60), peak(600));
        // The load is open (1000 new requests a second), so what is pending
        // is what the requests still retrying hold: a timer and a hop, a
        // service or a backoff each, for the requests of the last several
        // seconds while the server crash-loops (13 749 for `none`, seed 42),
        // and the next arrival.
        assert!(short <= 16 * 1000, "{}: {short} pending", strategy.name);
        assert_eq!(long, short, "{}: pending events grew", strategy.name);
    }
}

/// Every shipped world with a trigger that is not a sweep, and the fixtures
/// that switch on every mechanism (fleets, chains, hedging, crash loops,
/// spikes): the worlds the twin tests below run every strategy of.
const WORLDS_WITH_A_TRIGGER: [&str; 15] = [
    "scenarios/outage.toml",
    "scenarios/ideal-server.toml",
    "scenarios/blackhole.toml",
    "scenarios/budgets.toml",
    "scenarios/open-vs-closed.toml",
    "scenarios/libraries.toml",
    "scenarios/call-chain.toml",
    "scenarios/fleet.toml",
    "scenarios/zone.toml",
    "scenarios/autoscale.toml",
    "scenarios/metastable.toml",
    "scenarios/server-side.toml",
    "scenarios/unavailable.toml",
    "tests/fixtures/everything.toml",
    "tests/fixtures/overload.toml",
];

/// Strategies share a twin only where each would have made that very twin:
/// for every strategy of [`WORLDS_WITH_A_TRIGGER`], the twin and the figures of a
/// run measured with the twins other strategies left are what they are with
/// the run's own twin. Worlds whose twins fail attempts (the blackhole, the
/// budgets, the open loop) must not share; the main scenario's four
/// strategies share one twin.
#[test]
fn a_shared_twin_is_each_strategys_own_twin() {
    use retry_storm::model::{Twins, run_measured, run_measured_with};
    let mut simulated = Vec::new();
    for file in WORLDS_WITH_A_TRIGGER {
        let s = scenario::load(Path::new(file)).unwrap();
        let twins = Twins::default();
        for (i, strategy) in s.strategies.iter().enumerate() {
            let world = s.world_for(i);
            let own = run_measured(&world, strategy, s.seed, &s.metrics);
            let shared = run_measured_with(&world, strategy, s.seed, &s.metrics, Some(&twins));
            let who = format!("{file}, strategy {}", strategy.name);
            assert!(own.twin.is_some(), "{who}: a twin");
            assert!(own.twin == shared.twin, "{who}: the twin");
            // Its events are not compared: a shared twin made by a
            // strategy that handles answers in place has fewer.
            assert_eq!(own.summary, shared.summary, "{who}: the figures");
        }
        simulated.push((file, twins.simulated(), s.strategies.len()));
    }
    let of = |file: &str| simulated.iter().find(|s| s.0 == file).unwrap();
    assert_eq!(of("scenarios/outage.toml").1, 1, "{simulated:?}");
    assert_eq!(of("scenarios/libraries.toml").1, 2, "{simulated:?}");
    // Five strategies, two deadline propagations: the calls' retry settings
    // are shared like the users'.
    assert_eq!(of("scenarios/call-chain.toml").1, 2, "{simulated:?}");
    for file in ["scenarios/blackhole.toml", "scenarios/budgets.toml"] {
        assert!(
            of(file).1 > 1,
            "{file} fails attempts in its twin: {simulated:?}"
        );
    }
}

/// A run's twin is forked from the run where its first trigger begins
/// (`model::run_with_twin`): it must be, byte for byte, the run of the world
/// without its triggers from the start, and the run itself what `run` gives,
/// for every strategy of [`WORLDS_WITH_A_TRIGGER`]. The most events pending, the one figure the fork's marker
/// and the trigger's own events change, is not an output.
#[test]
fn a_forked_twin_is_the_twin_run_from_the_start() {
    use retry_storm::model::{RunResult, run};
    let shown = |mut r: RunResult| {
        r.peak_pending = 0;
        format!("{r:?}")
    };
    // Each world and strategy on its own thread: the test's wall time.
    let scenarios: Vec<_> = WORLDS_WITH_A_TRIGGER
        .iter()
        .map(|file| (file, scenario::load(Path::new(file)).unwrap()))
        .collect();
    let cases: Vec<_> = scenarios
        .iter()
        .flat_map(|(file, s)| (0..s.strategies.len()).map(move |i| (file, s, i)))
        .collect();
    cases.par_iter().for_each(|&(file, s, i)| {
        let strategy = &s.strategies[i];
        let world = s.world_for(i);
        assert!(!world.outages.is_empty(), "{file} has a trigger");
        let who = format!("{file}, strategy {}", strategy.name);
        let r = forked_twin_is_alone(&world, strategy, s.seed, s.metrics.bucket, &who);
        assert!(
            shown(r) == shown(run(&world, strategy, s.seed, s.metrics.bucket)),
            "{who}: the run"
        );
    });
    // Enough clients for the queue's far lane to be a wheel, whose buckets
    // the fork strips of the trigger's events too: the ideal-server world
    // (closed load) with 20 000 clients and a server 20 times as large.
    // (This used the main scenario, whose load became open: it ran without
    // the wheel and checked nothing more than the loop above.)
    let s = scenario::load(Path::new("scenarios/ideal-server.toml")).unwrap();
    let mut world = s.world.clone();
    world.duration = SimDuration::from_secs(30);
    let retry_storm::model::Load::Closed { clients, .. } = &mut world.load else {
        panic!("the ideal-server world is closed");
    };
    *clients = 20_000;
    assert!(*clients as usize > retry_storm::engine::queue::WHEEL_ABOVE);
    if let retry_storm::model::ServerModel::Capacity(server) = &mut world.server {
        server.workers *= 20;
        server.queue_capacity *= 20;
    }
    let strategy = &s.strategies[1];
    forked_twin_is_alone(&world, strategy, s.seed, s.metrics.bucket, "20 000 clients");
}

/// Runs `world` under `strategy` with its twin forked, checks the twin
/// against the world without its triggers run from the start (the most
/// events pending aside), and returns the run.
fn forked_twin_is_alone(
    world: &retry_storm::model::WorldConfig,
    strategy: &retry_storm::retry::Strategy,
    seed: u64,
    bucket: SimDuration,
    who: &str,
) -> retry_storm::model::RunResult {
    use retry_storm::model::{run, run_with_twin};
    let shown = |mut r: retry_storm::model::RunResult| {
        r.peak_pending = 0;
        format!("{r:?}")
    };
    let (r, twin) = run_with_twin(world, strategy, seed, bucket);
    let alone = run(&world.without_triggers(), strategy, seed, bucket);
    assert!(
        shown(twin.expect("a twin")) == shown(alone),
        "{who}: the twin"
    );
    r
}
