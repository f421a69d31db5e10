//! Simulated events per second of the engine on the ideal-server scenario (the
//! 1000-client, 2 s crash world the engine has been measured on since the
//! start), one strategy per benchmark, metrics on (they always are), on one
//! thread.
//!
//! `cargo bench --bench engine`; the throughput line reads "Melem/s": million
//! events per second.

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use retry_storm::model;
use retry_storm::scenario;

fn outage(c: &mut Criterion) {
    let s = scenario::load(Path::new("scenarios/ideal-server.toml"))
        .expect("the shipped scenario is valid");
    let mut group = c.benchmark_group("outage");
    group.sample_size(20);
    for strategy in &s.strategies {
        let events = model::run(&s.world, strategy, s.seed, s.metrics.bucket)
            .totals
            .events;
        group.throughput(Throughput::Elements(events));
        group.bench_function(&strategy.name, |b| {
            b.iter(|| model::run(black_box(&s.world), strategy, s.seed, s.metrics.bucket))
        });
    }
    group.finish();
}

// Criterion's HTML charts would need a system font; the figures are what matter.
criterion_group! {
    name = benches;
    config = Criterion::default().without_plots();
    targets = outage
}
criterion_main!(benches);
