//! Attempts per second, as a user of the simulator feels them: the time of
//! what they run (each run with its twin, a whole sweep) per attempt it
//! simulates, on one thread.
//!
//! - `main/<strategy>`: the main scenario (`scenarios/outage.toml`), each
//!   strategy with its own twin; `main/all-with-twins`: its four strategies
//!   as `sim run` measures them, sharing the twin they have in common;
//!   `main/all-runs-only`: the four runs without twins (the twins' share of
//!   the cost is one minus the ratio of the last two).
//! - `aws-sweep`: the whole AWS sweep (`scenarios/aws-jitter.toml`, 9500
//!   runs of the OCC world), on a pool of one thread.
//! - `million`: the ideal-server world with a million closed-loop clients
//!   and a server a thousand times larger, its first strategy with its twin,
//!   4 s simulated with a 1 s crash (the full 60 s, four strategies, is a
//!   whole-process timing in the book's speed chapter: minutes, too long to
//!   sample here).
//!
//! `cargo bench --bench attempts`; the throughput line reads "Melem/s":
//! million attempts per second. `benches/paired.py` times two builds of the
//! whole program against each other.

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use retry_storm::engine::{SimDuration, SimTime};
use retry_storm::model::{self, Load, ServerModel};
use retry_storm::scenario;
use retry_storm::sweep::{self, figures::FIGURES};

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
    group.finish();
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
    group.finish();
}

// Criterion's HTML charts would need a system font; the figures are what matter.
criterion_group! {
    name = benches;
    config = Criterion::default().without_plots();
    targets = main_scenario, aws_sweep, million
}
criterion_main!(benches);
