//! A run's plan: the worlds a scenario's runs simulate, each derived once
//! from the scenario, and what they will cost (events, memory, threads),
//! worked out before anything runs. The estimate `sim run` prints, the
//! memory check that may refuse it, the progress bar and the runs
//! themselves all read this one plan.

use std::borrow::Cow;

use super::{memory, run_bytes, world_events};
use crate::metrics::{Report, StrategyReport};
use crate::model::{self, WorldConfig};
use crate::scenario::Scenario;

/// What running a scenario will do and cost.
pub struct Plan<'s> {
    /// The scenario planned.
    pub scenario: &'s Scenario,
    /// Each strategy's world, in file order: the scenario's own, or with the
    /// strategy's own `clients` or `server` in place. (A sweep's worlds are
    /// its points', built when it was loaded.)
    pub worlds: Vec<Cow<'s, WorldConfig>>,
    /// Runs in all: the strategies, or every run of the sweep.
    pub runs: usize,
    /// Events every run will simulate, roughly, twins included.
    pub events: f64,
    /// Bytes the largest run will hold, roughly (see [`run_bytes`]).
    pub bytes_per_run: u64,
    /// Runs at once: the worker threads, at most one per run.
    pub parallel: usize,
}

impl<'s> Plan<'s> {
    /// The plan of every run of `s`.
    pub fn new(s: &'s Scenario) -> Plan<'s> {
        let worlds: Vec<_> = (0..s.strategies.len()).map(|i| s.world_for(i)).collect();
        let bucket = s.metrics.bucket;
        let (runs, events, bytes_per_run) = match &s.sweep {
            Some(sw) => {
                let points = || sw.points.iter().flat_map(|p| &p.worlds);
                (
                    sw.runs(),
                    points().map(world_events).sum::<f64>() * f64::from(sw.replications),
                    points().map(|w| run_bytes(w, bucket)).max(),
                )
            }
            None => (
                worlds.len(),
                worlds.iter().map(|w| world_events(w)).sum(),
                worlds.iter().map(|w| run_bytes(w, bucket)).max(),
            ),
        };
        Plan {
            scenario: s,
            worlds,
            runs,
            events,
            bytes_per_run: bytes_per_run.unwrap_or(0),
            parallel: rayon::current_num_threads().min(runs).max(1),
        }
    }

    /// Simulated nanoseconds the strategies' runs will cover, twins included:
    /// what a progress bar counts towards.
    pub fn simulated_ns(&self) -> u64 {
        self.worlds
            .iter()
            .map(|w| w.duration.0 * if w.outages.is_empty() { 1 } else { 2 })
            .sum()
    }

    /// Refuses, before anything runs, a plan whose runs in parallel would
    /// need more memory than the process can have ([`memory::available`]:
    /// the machine's available memory, the control group's limit, `ulimit
    /// -v`; no check where none can be read): an allocation failure mid-run
    /// would abort. The refusal says what to change.
    pub fn check_memory(&self) -> Result<(), String> {
        let parallel = self.parallel as u64;
        let need = self.bytes_per_run * parallel;
        let Some(available) = memory::available(parallel) else {
            return Ok(());
        };
        if need <= available / 10 * 9 {
            return Ok(());
        }
        let gib = |b: u64| b as f64 / f64::from(1u32 << 30);
        let runs = if parallel == 1 {
            "1 run".to_owned()
        } else {
            format!("{parallel} runs")
        };
        Err(format!(
            "{runs} at once would need about {:.1} GiB ({:.1} GiB each), and \
             this process can have {:.1} GiB (the least of the machine's available \
             memory, its control group's limit and ulimit -v): use fewer clients, \
             replicas or workers, fewer proxies (or proxy_view = \"shared\": each \
             proxy's own view of the fleet holds every replica), a shorter run or \
             load spike, or fewer runs at once with RAYON_NUM_THREADS=1",
            gib(need),
            gib(self.bytes_per_run),
            gib(available)
        ))
    }

    /// Simulates every strategy in its planned world, in parallel, results
    /// in file order.
    pub fn simulate(&self) -> Report {
        let s = self.scenario;
        let capacity = s.world.capacity_per_s();
        let outages: Vec<_> = s.world.outages.iter().map(|o| (o.start, o.end)).collect();
        // Strategies whose twins are the same share one (see `model::Twins`),
        // and those whose runs are the same until the trigger share that
        // part (`model::run_measured_all`).
        let twins = model::Twins::default();
        let pairs: Vec<_> = self
            .worlds
            .iter()
            .map(|w| &**w)
            .zip(&s.strategies)
            .collect();
        let measured = model::run_measured_all(&pairs, s.seed, &s.metrics, &twins);
        let runs = s
            .strategies
            .iter()
            .zip(&self.worlds)
            .zip(measured)
            .map(|((strategy, world), m)| {
                let names = world
                    .chain
                    .as_ref()
                    .map(|c| (0..c.tiers()).map(|k| c.name(k).to_owned()));
                StrategyReport {
                    tiers: names.zip(m.run.tiers).map(|(n, t)| n.zip(t).collect()),
                    name: strategy.name.clone(),
                    summary: m.summary,
                    buckets: m.run.buckets.to_vec(),
                    replicas: m.run.replicas,
                    proxies: m.run.proxies,
                    defences: m.run.defences,
                    cache: m.run.cache,
                    twin: m.twin.map(|t| t.to_vec()),
                    twin_events: m.twin_events,
                    aborted: m.aborted.map(|a| a.to_string()),
                }
            })
            .collect();
        Report {
            scenario: s.name.clone(),
            seed: s.seed,
            capacity_per_s: capacity,
            crash_limit: s.world.server.crash_limit(),
            outages,
            metrics: s.metrics.clone(),
            duration_s: s.world.duration.as_secs_f64(),
            runs,
        }
    }
}
