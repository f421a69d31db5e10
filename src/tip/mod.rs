//! Tipping points: for every strategy, at every level of `[tip.over]`, the
//! largest trigger after which the world recovers, searched by bisection
//! and replicated, so each boundary has an interval.
//!
//! A search probes one trigger at a time: the scenario with the searched key
//! set, run with its twin (the same run without the trigger); the world
//! recovers when goodput and backlog are back to the twin's for good before
//! the run ends (the recovery every run reports). It probes the worst
//! trigger first (a world that recovers even from it is "beyond" the
//! range), then the mildest ("below" if it does not recover from that),
//! then halves the bracket between a trigger it recovers from and one it
//! does not until it is narrower than the resolution.
//!
//! With common random numbers (the default) every probe of replication `r`,
//! at every level and for every strategy, runs with one seed: the probes of
//! a search differ only in the trigger, so whether the world recovers moves
//! with the trigger and not with the luck of each probe, and all probes
//! share one twin.
//!
//! The boundary of a (level, strategy) is the median over replications of
//! each search's boundary: the trigger half the worlds recover from. Its
//! interval is the distribution-free confidence interval of a median, from
//! the order statistics (the binomial with p = 1/2).

mod stats;

use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use crate::engine::rng::derive_seed;
use crate::model;
use crate::scenario::Scenario;
use crate::scenario::tip::Tip;

pub use stats::median_interval;

/// How one search ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Outcome {
    /// Without any trigger the world is overloaded (its twin crashed or
    /// more than 1% of its attempts met overload): there is no normal to
    /// get back to.
    Overloaded,
    /// Not even the mildest trigger is recovered from.
    Below,
    /// Even the worst trigger is recovered from.
    Beyond,
    /// The world recovers from `good` and not from `bad`, as close as the
    /// resolution.
    Found {
        /// The worst trigger recovered from.
        good: f64,
        /// The mildest trigger not recovered from.
        bad: f64,
    },
}

impl Outcome {
    /// Its code in a shard's cells: 0 overloaded, 1 below, 2 beyond, 3 found.
    pub fn code(self) -> f64 {
        match self {
            Outcome::Overloaded => 0.0,
            Outcome::Below => 1.0,
            Outcome::Beyond => 2.0,
            Outcome::Found { .. } => 3.0,
        }
    }

    /// Its name in `searches.csv`.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Overloaded => "overloaded",
            Outcome::Below => "below",
            Outcome::Beyond => "beyond",
            Outcome::Found { .. } => "found",
        }
    }
}

/// One search: a (level, strategy, replication).
#[derive(Clone, Debug, PartialEq)]
pub struct Search {
    /// How it ended.
    pub outcome: Outcome,
    /// Runs it took (each with its twin, which a replication's probes share).
    pub probes: u32,
    /// Events simulated, twins included.
    pub events: u64,
}

/// Columns of a search in a shard's `cells.csv`.
pub const SHARD_COLUMNS: [&str; 5] = ["outcome", "good", "bad", "probes", "events"];

impl Search {
    /// Its values in [`SHARD_COLUMNS`].
    pub fn to_values(&self) -> Vec<Option<f64>> {
        let (good, bad) = match self.outcome {
            Outcome::Found { good, bad } => (Some(good), Some(bad)),
            _ => (None, None),
        };
        vec![
            Some(self.outcome.code()),
            good,
            bad,
            Some(f64::from(self.probes)),
            Some(self.events as f64),
        ]
    }

    /// Read back from [`Search::to_values`]; `None` if they are not a search's.
    pub fn from_values(v: &[Option<f64>]) -> Option<Search> {
        let [Some(code), good, bad, Some(probes), Some(events)] = v else {
            return None;
        };
        let outcome = match (*code as u8, good, bad) {
            (0, None, None) => Outcome::Overloaded,
            (1, None, None) => Outcome::Below,
            (2, None, None) => Outcome::Beyond,
            (3, Some(good), Some(bad)) => Outcome::Found {
                good: *good,
                bad: *bad,
            },
            _ => return None,
        };
        let whole = |x: f64| (x >= 0.0 && x.fract() == 0.0).then_some(x);
        Some(Search {
            outcome,
            probes: whole(*probes)? as u32,
            events: whole(*events)? as u64,
        })
    }
}

/// Where search `index` is: (level, strategy, replication). Levels are
/// outermost, then strategies in file order, then replications.
pub fn locate(tip: &Tip, index: usize) -> (usize, usize, u32) {
    let reps = tip.replications as usize;
    let strategies = tip.strategies.len().max(1);
    let rep = index % reps;
    let rest = index / reps;
    (rest / strategies, rest % strategies, rep as u32)
}

/// Why a search could not go on: a probe's scenario was invalid or its run
/// had to stop.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchError {
    /// The search.
    pub index: usize,
    /// What happened, with the probe's trigger.
    pub message: String,
}

/// Runs the searches numbered `searches` in parallel, results in the same
/// order; `progress(done, total)` is called as searches finish.
pub fn run_searches(
    s: &Scenario,
    tip: &Tip,
    searches: &[usize],
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<Search>, SearchError> {
    let done = AtomicUsize::new(0);
    searches
        .par_iter()
        .map(|&index| {
            let r = search(s, tip, index).map_err(|message| SearchError { index, message });
            progress(done.fetch_add(1, Ordering::Relaxed) + 1, searches.len());
            r
        })
        .collect()
}

/// What one probe found.
struct Probe {
    recovered: bool,
    overloaded: bool,
}

/// One search, by bisection.
fn search(s: &Scenario, tip: &Tip, index: usize) -> Result<Search, String> {
    let (level, k, rep) = locate(tip, index);
    // One twin for every probe of this search (with common seeds they are
    // all the same run without the trigger).
    let twins = model::Twins::default();
    let mut probes = 0u32;
    let mut events = 0u64;
    let mut probe = |x: f64| -> Result<Probe, String> {
        let seed = if tip.common_seeds {
            derive_seed(s.seed, 0, rep)
        } else {
            // Every probe its own numbers: levels apart, probes within one.
            derive_seed(s.seed, level * 1024 + probes as usize + 1, rep)
        };
        let at = tip.at(level, x)?;
        let world = at.world_for(k);
        let m =
            model::run_measured_with(&world, &at.strategies[k], seed, &at.metrics, Some(&twins));
        if let Some(why) = m.aborted {
            return Err(format!("at {} = {}: {why}", tip.parameter, tip.display(x)));
        }
        probes += 1;
        events += m.summary.totals.events + m.twin_events;
        Ok(Probe {
            recovered: m.summary.recovery_time_s.is_some(),
            overloaded: m.summary.twin_overloaded,
        })
    };
    let outcome = 'search: {
        let worst = probe(tip.worst())?;
        if worst.overloaded {
            break 'search Outcome::Overloaded;
        }
        if worst.recovered {
            break 'search Outcome::Beyond;
        }
        let mild = probe(tip.mildest())?;
        if mild.overloaded {
            break 'search Outcome::Overloaded;
        }
        if !mild.recovered {
            break 'search Outcome::Below;
        }
        let (mut good, mut bad) = (tip.mildest(), tip.worst());
        while !tip.narrow(good, bad) {
            let mid = tip.midpoint(good, bad);
            let p = probe(mid)?;
            if p.overloaded {
                break 'search Outcome::Overloaded;
            }
            if p.recovered {
                good = mid;
            } else {
                bad = mid;
            }
        }
        Outcome::Found { good, bad }
    };
    Ok(Search {
        outcome,
        probes,
        events,
    })
}

/// Where the boundary of a (level, strategy) is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Found within the range: the median search found it.
    Found,
    /// Below the mildest trigger: half the worlds or more do not recover
    /// even from it.
    Below,
    /// Beyond the worst: half the worlds or more recover even from it.
    Beyond,
    /// More than half the replications are overloaded without any trigger.
    Overloaded,
}

impl Status {
    /// As `tip.csv` writes it.
    pub fn name(self) -> &'static str {
        match self {
            Status::Found => "found",
            Status::Below => "below",
            Status::Beyond => "beyond",
            Status::Overloaded => "overloaded",
        }
    }
}

/// The boundary of one (level, strategy).
#[derive(Clone, Debug, PartialEq)]
pub struct Boundary {
    /// Index of the level.
    pub level: usize,
    /// Strategy name.
    pub strategy: String,
    /// Where it is.
    pub status: Status,
    /// The median search's boundary (the middle of its bracket); `None`
    /// unless found.
    pub median: Option<f64>,
    /// The confidence interval of the median: its lower end (`None`: below
    /// the range), in the searched key's values.
    pub low: Option<f64>,
    /// Its upper end (`None`: beyond the range).
    pub high: Option<f64>,
    /// The interval's confidence (0.9375 for 5 replications).
    pub confidence: f64,
    /// Searches by outcome: found, below, beyond, overloaded.
    pub counts: [u32; 4],
    /// Runs in all.
    pub probes: u64,
}

/// A search's results.
#[derive(Clone, Debug)]
pub struct TipReport {
    /// Scenario name.
    pub scenario: String,
    /// Base seed.
    pub seed: u64,
    /// The search.
    pub tip: Tip,
    /// Every search, in order (see [`locate`]).
    pub searches: Vec<Search>,
    /// Boundaries by level, then strategy in file order.
    pub rows: Vec<Boundary>,
    /// Events simulated over all runs.
    pub events: u64,
}

/// Runs every search of `s`'s `[tip]`; `None` if it has none.
pub fn run(s: &Scenario) -> Option<Result<TipReport, SearchError>> {
    let tip = s.tip.as_ref()?;
    let all: Vec<usize> = (0..tip.searches()).collect();
    Some(run_searches(s, tip, &all, &|_, _| {}).map(|r| aggregate(s, tip, r)))
}

/// The report from every search's result, in search order.
pub fn aggregate(s: &Scenario, tip: &Tip, searches: Vec<Search>) -> TipReport {
    let reps = tip.replications as usize;
    let rows = searches
        .chunks(reps)
        .enumerate()
        .map(|(i, chunk)| boundary(tip, i, chunk))
        .collect();
    TipReport {
        scenario: s.name.clone(),
        seed: s.seed,
        tip: tip.clone(),
        events: searches.iter().map(|x| x.events).sum(),
        searches,
        rows,
    }
}

/// The boundary from one (level, strategy)'s searches.
fn boundary(tip: &Tip, i: usize, chunk: &[Search]) -> Boundary {
    let strategies = tip.strategies.len().max(1);
    let mut counts = [0u32; 4];
    // Each search's boundary as an interval of the key's values; a world
    // overloaded without the trigger recovers from none.
    let (below, beyond) = if tip.larger_is_worse {
        ((f64::NEG_INFINITY, tip.from), (tip.to, f64::INFINITY))
    } else {
        ((tip.to, f64::INFINITY), (f64::NEG_INFINITY, tip.from))
    };
    let intervals: Vec<(f64, f64)> = chunk
        .iter()
        .map(|x| match x.outcome {
            Outcome::Found { good, bad } => {
                counts[0] += 1;
                (good.min(bad), good.max(bad))
            }
            Outcome::Below => {
                counts[1] += 1;
                below
            }
            Outcome::Beyond => {
                counts[2] += 1;
                beyond
            }
            Outcome::Overloaded => {
                counts[3] += 1;
                below
            }
        })
        .collect();
    let m = median_interval(&intervals);
    let status = if counts[3] as usize * 2 > chunk.len() {
        Status::Overloaded
    } else if m.median.is_some() {
        Status::Found
    } else if m.side == Some(below) {
        Status::Below
    } else {
        Status::Beyond
    };
    Boundary {
        level: i / strategies,
        strategy: tip.strategies[i % strategies].clone(),
        status,
        median: m.median.filter(|_| status == Status::Found),
        low: Some(m.low).filter(|v| v.is_finite() && status != Status::Overloaded),
        high: Some(m.high).filter(|v| v.is_finite() && status != Status::Overloaded),
        confidence: m.confidence,
        counts,
        probes: chunk.iter().map(|x| u64::from(x.probes)).sum(),
    }
}
