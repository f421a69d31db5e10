//! The event queue alone, fed the outage scenario's pattern of pushes and pops,
//! to tell its cost apart from the model's (`benches/engine.rs` times both).
//!
//! Each client cycles through what a successful request is in
//! `scenarios/ideal-server.toml`: a think time (exponential, mean 1 s), a hop out
//! (log-normal, mean 5 ms, sigma 0.3), a service (exponential, mean 10 ms) and a
//! hop back, plus a 1 s timeout pushed in time order when the attempt goes out and
//! popped, stale, after the answer. That is five pops and five pushes a request, as
//! in the engine. The delays are drawn beforehand, so only the queue is timed.
//! Both far lanes are timed, at 1000 clients (the scenario's; the engine uses the
//! heap) and at 100 000 (the heap outgrows the cache; the engine uses the wheel).
//!
//! `cargo bench --bench queue`; "Melem/s" reads million events (pop + push) per
//! second.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rand::SeedableRng;
use rand_distr::{Distribution, Exp, LogNormal};
use retry_storm::engine::{EventQueue, SimDuration, SimTime};

/// Where a client is; the payload of its next event.
#[derive(Clone, Copy)]
enum Stage {
    Think,
    HopOut,
    Service,
    HopBack,
    Timeout,
}

const EVENTS: u64 = 2_000_000;
/// Delays drawn per kind; indexed cyclically.
const TABLE: usize = 1 << 12;

struct Delays {
    think: Vec<u64>,
    hop: Vec<u64>,
    service: Vec<u64>,
}

impl Delays {
    fn new() -> Self {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut draw = |d: &dyn Fn(&mut rand_chacha::ChaCha8Rng) -> f64| -> Vec<u64> {
            (0..TABLE).map(|_| d(&mut rng) as u64).collect()
        };
        let think = Exp::new(1e-9).expect("positive rate");
        let sigma: f64 = 0.3;
        let hop = LogNormal::new(5e6_f64.ln() - sigma * sigma / 2.0, sigma).expect("valid");
        let service = Exp::new(1e-7).expect("positive rate");
        Delays {
            think: draw(&|r| think.sample(r)),
            hop: draw(&|r| hop.sample(r)),
            service: draw(&|r| service.sample(r)),
        }
    }
}

/// Runs `EVENTS` pops for `clients` clients, each pop followed by the pushes its
/// stage makes.
fn hold<const WHEEL: bool>(delays: &Delays, clients: u32) -> u64 {
    let mut q = EventQueue::<_, WHEEL>::with_horizon(SimDuration::from_millis(40));
    for c in 0..clients {
        let at = SimTime(delays.think[c as usize % TABLE]);
        q.push(at, (c, Stage::Think));
    }
    let timeout = SimDuration::from_secs(1);
    let mut checksum = 0u64;
    for i in 0..EVENTS as usize {
        let Some((now, (client, stage))) = q.pop() else {
            break;
        };
        checksum = checksum.wrapping_add(now.0 ^ u64::from(client));
        let k = i % TABLE;
        match stage {
            Stage::Think => {
                q.push_in_order(now + timeout, (client, Stage::Timeout));
                q.push(now + SimDuration(delays.hop[k]), (client, Stage::HopOut));
            }
            Stage::HopOut => q.push(
                now + SimDuration(delays.service[k]),
                (client, Stage::Service),
            ),
            Stage::Service => q.push(now + SimDuration(delays.hop[k]), (client, Stage::HopBack)),
            Stage::HopBack => q.push(now + SimDuration(delays.think[k]), (client, Stage::Think)),
            Stage::Timeout => {}
        }
    }
    checksum
}

fn queue(c: &mut Criterion) {
    let delays = Delays::new();
    let mut group = c.benchmark_group("queue");
    group.sample_size(10);
    group.throughput(Throughput::Elements(EVENTS));
    for clients in [1_000, 100_000] {
        group.bench_function(format!("{clients}-clients/heap"), |b| {
            b.iter(|| hold::<false>(black_box(&delays), clients))
        });
        group.bench_function(format!("{clients}-clients/wheel"), |b| {
            b.iter(|| hold::<true>(black_box(&delays), clients))
        });
    }
    group.finish();
}

// Criterion's HTML charts would need a system font; the figures are what matter.
criterion_group! {
    name = benches;
    config = Criterion::default().without_plots();
    targets = queue
}
criterion_main!(benches);
