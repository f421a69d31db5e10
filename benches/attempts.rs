//! Attempts per second, as a user of the simulator feels them: the time of
//! what they run (each run with its twin, a whole sweep) per attempt it
//! simulates, on one thread.
//!
//! - `main/<strategy>`: the main scenario (`scenarios/outage.toml`), each
//!   strategy with its own twin; `main/all-with-twins`: its four strategies
//!   as `sim run` measures them, sharing the twin they have in common;
//!   `main/all-runs-only`: the four runs without twins (the twins' share of
//!   the cost is one minus the ratio of the last two).
//! - `aws-sweep/one-thread`: the whole AWS sweep (`scenarios/aws-jitter.toml`,
//!   9500 runs of the OCC world), on a pool of one thread.
//! - `aws-sweep/floor`: the same runs' events and nothing else: the event
//!   queue and the random draws of every event the engine handles, in the
//!   engine's order, with no metrics, no checks and no model beyond the
//!   record's version. It handles as many events as the engine (checked
//!   before it is timed): what any run loop with these events and draws
//!   costs at the least, with this queue. `aws-sweep/two-event-floor`: the
//!   same with each read an event of its own, two events an attempt (the
//!   yardstick of the speed goal set before reads needed none).
//! - `million`: the ideal-server world with a million closed-loop clients
//!   and a server a thousand times larger, 4 s simulated with a 1 s crash at
//!   2 s: its first strategy with its twin, and `all-sharing-their-start`
//!   its four strategies as `sim run` measures them, the 2 s before the
//!   crash simulated once (the full 60 s on two threads is a whole-process
//!   timing in the book's speed chapter: about a minute, too long to sample
//!   here).
//!
//! - `mesh`: 100 000 clients behind 1000 proxies, each with its own budget,
//!   balancer and outlier detection, in front of 100 replicas
//!   (`benches/mesh-1000.toml`), 14 s simulated with its run's twin.
//!
//! `cargo bench --bench attempts`; the throughput line reads "Melem/s":
//! million attempts per second. `benches/paired.py` times two builds of the
//! whole program against each other.

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use retry_storm::engine::{Draws, EventQueue, Purpose, SimDuration, SimTime, addr};
use retry_storm::metrics::figures::FIGURES;
use retry_storm::model::{self, Load, ServerModel};
use retry_storm::scenario;
use retry_storm::sweep;

fn load(file: &str) -> scenario::Scenario {
    scenario::load(Path::new(file)).expect("the shipped scenario is valid")
}

fn main_scenario(c: &mut Criterion) {
    let s = load("scenarios/outage.toml");
    let mut group = c.benchmark_group("main");
    group.sample_size(20);
    for strategy in &s.strategies {
        let measure = || model::run_measured(&s.world, strategy, s.seed, &s.metrics);
        group.throughput(Throughput::Elements(measure().run.totals.attempts));
        group.bench_function(&strategy.name, |b| b.iter(|| black_box(measure())));
    }
    // The whole scenario as `sim run` simulates it (strategies whose twins
    // are the same share one), against its runs alone: the twins' share of
    // the cost is one minus the ratio of their times.
    let attempts: u64 = s
        .strategies
        .iter()
        .map(|x| {
            model::run_measured(&s.world, x, s.seed, &s.metrics)
                .run
                .totals
                .attempts
        })
        .sum();
    group.throughput(Throughput::Elements(attempts));
    group.bench_function("all-with-twins", |b| {
        b.iter(|| {
            let twins = model::Twins::default();
            for strategy in &s.strategies {
                let m =
                    model::run_measured_with(&s.world, strategy, s.seed, &s.metrics, Some(&twins));
                black_box(m);
            }
        })
    });
    group.bench_function("all-runs-only", |b| {
        b.iter(|| {
            for strategy in &s.strategies {
                black_box(model::run(&s.world, strategy, s.seed, s.metrics.bucket));
            }
        })
    });
    group.finish();
}

fn aws_sweep(c: &mut Criterion) {
    let s = load("scenarios/aws-jitter.toml");
    let sweep = s.sweep.as_ref().expect("the AWS scenario is a sweep");
    let cells: Vec<usize> = (0..sweep.runs()).collect();
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a pool of one thread");
    let run = || one.install(|| sweep::run_cells(&s, sweep, &cells, &|_, _| {}));
    let at = FIGURES
        .iter()
        .position(|f| f.name == "attempts")
        .expect("attempts is a figure");
    let attempts: f64 = run().iter().filter_map(|r| r.figures[at]).sum();
    let mut group = c.benchmark_group("aws-sweep");
    group.sample_size(10);
    group.throughput(Throughput::Elements(attempts as u64));
    group.bench_function("one-thread", |b| b.iter(|| black_box(run())));
    let engine_events = sweep::events(&run());
    let floor = |read_events| {
        (0..sweep.runs())
            .map(|cell| {
                let (p, k, r) = sweep::locate(sweep, cell);
                let point = &sweep.points[p];
                aws_floor(
                    &point.worlds[k],
                    &point.strategies[k],
                    sweep::derive_seed(s.seed, p, r),
                    read_events,
                )
            })
            .sum::<u64>()
    };
    assert_eq!(
        floor(false),
        engine_events,
        "the floor handles the engine's events"
    );
    assert_eq!(
        floor(true),
        engine_events + attempts as u64,
        "the two-event floor handles the engine's events and a read an attempt"
    );
    group.bench_function("floor", |b| b.iter(|| black_box(floor(false))));
    group.bench_function("two-event-floor", |b| b.iter(|| black_box(floor(true))));
    group.finish();
}

/// The events of one run of the OCC world, as the engine draws and orders
/// them, and nothing else. With `read_events` each client starts, reads (a
/// hop out; at the record, two hops, back and out again) and writes: two
/// events an attempt, one a client to start (the floor the engine was held
/// to before its reads needed no event). Without, the read is drawn where
/// the attempt leaves and the write alone is an event, carrying its read's
/// time, as the engine does now. After a conflict the answer's hop back,
/// the backoff and the next attempt are drawn at once, as the engine
/// handles an answer in place. Returns the events handled.
fn aws_floor(
    world: &model::WorldConfig,
    strategy: &retry_storm::retry::Strategy,
    seed: u64,
    read_events: bool,
) -> u64 {
    const START: u8 = 0;
    const READ: u8 = 1;
    const WRITE: u8 = 2;
    let Load::OneShot { clients } = world.load else {
        panic!("the AWS world is one-shot");
    };
    let draws = Draws::new(seed);
    let mut queue = EventQueue::<(u8, u32, u64)>::with_horizon(SimDuration::from_nanos_f64(
        4.0 * world.network.mean_nanos(),
    ));
    let (mut record, mut last_accepted, mut events) = (0u64, None::<u64>, 0u64);
    let mut retries = vec![(0u32, 0.0f64); clients as usize];
    // Each draw at its attempt's address, as the engine draws it.
    let attempt = |c: u32, n: u32| addr::attempt(addr::request(addr::client(c), 0), n);
    let hop = |purpose, c: u32, n: u32| world.network.sample(&mut draws.at(purpose, attempt(c, n)));
    // An attempt leaving at `at`: its read as an event, or its write
    // carrying the read's time.
    let send = |queue: &mut EventQueue<_>, at: SimTime, c: u32, n: u32| {
        let read = at + hop(Purpose::HopOut, c, n);
        if read_events {
            queue.push(read, (READ, c, 0));
        } else {
            let write = read + hop(Purpose::ReadBack, c, n) + hop(Purpose::WriteOut, c, n);
            queue.push(write, (WRITE, c, read.0));
        }
    };
    // Every client starts at once.
    for c in 0..clients {
        queue.push(SimTime::ZERO, (START, c, 0));
    }
    while let Some((now, (kind, c, aux))) = queue.pop() {
        events += 1;
        let n = retries[c as usize].0;
        let accepted = match kind {
            START => {
                send(&mut queue, now, c, n);
                continue;
            }
            READ => {
                let back = hop(Purpose::ReadBack, c, n);
                let out = hop(Purpose::WriteOut, c, n);
                queue.push(now + back + out, (WRITE, c, record));
                continue;
            }
            _ if read_events => aux == record,
            _ => last_accepted.is_none_or(|t| t < aux),
        };
        if accepted {
            record += 1;
            last_accepted = Some(now.0);
            continue;
        }
        let back = hop(Purpose::HopBack, c, n);
        let mut jitter = draws.at(Purpose::Jitter, attempt(c, n));
        let (n, memory) = &mut retries[c as usize];
        *n += 1;
        let (delay, next) = strategy.backoff.delay(*n, *memory, &mut jitter);
        *memory = next;
        let n = *n;
        send(&mut queue, now + back + delay, c, n);
    }
    events
}

fn million(c: &mut Criterion) {
    let s = load("scenarios/ideal-server.toml");
    let mut world = s.world.clone();
    world.duration = SimDuration::from_secs(4);
    if let Load::Closed { clients, .. } = &mut world.load {
        *clients = 1_000_000;
    }
    if let ServerModel::Capacity(server) = &mut world.server {
        server.workers *= 1000;
        server.queue_capacity *= 1000;
    }
    // The crash at 20 s is past the end: keep a trigger inside the run, so
    // that the twin is run as it is in the full world.
    for o in &mut world.outages {
        o.start = SimTime::ZERO + SimDuration::from_secs(2);
        o.end = SimTime::ZERO + SimDuration::from_secs(3);
    }
    let strategy = &s.strategies[0];
    let measure = || model::run_measured(&world, strategy, s.seed, &s.metrics);
    let mut group = c.benchmark_group("million");
    group.sample_size(10);
    group.throughput(Throughput::Elements(measure().run.totals.attempts));
    group.bench_function(&strategy.name, |b| b.iter(|| black_box(measure())));
    // Its four strategies as `sim run` measures them: one start up to the
    // crash, shared, then four runs and a twin (on one thread here).
    let runs: Vec<_> = s.strategies.iter().map(|x| (&world, x)).collect();
    let all = || model::run_measured_all(&runs, s.seed, &s.metrics, &model::Twins::default());
    let attempts: u64 = all().iter().map(|m| m.run.totals.attempts).sum();
    group.throughput(Throughput::Elements(attempts));
    group.bench_function("all-sharing-their-start", |b| b.iter(|| black_box(all())));
    group.finish();
}

fn mesh(c: &mut Criterion) {
    let s = load("benches/mesh-1000.toml");
    let mut world = s.world.clone();
    // 14 s simulated: the 2 s stall at 10 s and its aftermath.
    world.duration = SimDuration::from_secs(14);
    let strategy = &s.strategies[0];
    let measure = || model::run_measured(&world, strategy, s.seed, &s.metrics);
    let mut group = c.benchmark_group("mesh");
    group.sample_size(10);
    group.throughput(Throughput::Elements(measure().run.totals.attempts));
    group.bench_function("1000-proxies-100-replicas", |b| {
        b.iter(|| black_box(measure()))
    });
    group.finish();
}

// Criterion's HTML charts would need a system font; the figures are what matter.
criterion_group! {
    name = benches;
    config = Criterion::default().without_plots();
    targets = main_scenario, aws_sweep, million, mesh
}
criterion_main!(benches);
