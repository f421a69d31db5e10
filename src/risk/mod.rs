//! The chance that a trigger at random tips the world, by multilevel
//! splitting (Glasserman, Heidelberger, Shahabuddin and Zajic, "Multilevel
//! splitting for estimating rare event probabilities", Operations Research
//! 47(4), 1999), checked by brute force where that is affordable.
//!
//! A walk is a run of one strategy with one trigger, its size drawn from
//! `[risk]`'s distribution, watched from the trigger's start through a
//! count (attempts held at the server, or the users' requests in
//! progress): it **tips** when the count reaches `tipped`, and
//! **recovers** when, the trigger over, the count is back at `calm` or
//! under.
//!
//! Splitting places levels `calm < L1 < ... < Lm = tipped` and carries
//! walks up them ("fixed effort"): `effort` walks start from the trigger;
//! those that reach L1 are paused there, and `effort` new walks branch
//! from them (each a copy of one, going on on fresh random numbers,
//! [`crate::model::sim::Walker::branch`]), and so on. Each walk carries a
//! weight, its share of the chance of being where it is: the weights
//! paused at a level sum to the estimate of reaching it, and a stage hands
//! its walks out by weight (systematic resampling). The estimate is
//! unbiased whatever the levels; good levels make it precise. A pilot
//! places them where a fifth of the walks climb from one to the next
//! (adaptive splitting, Cérou and Guyader, Stochastic Analysis and
//! Applications 25(2), 2007); then `repeats` independent estimates on
//! those levels give the mean and its interval (Student's t).
//!
//! Splitting multiplies what happens after the trigger; what the first
//! stage draws (the trigger's size, the state it finds) it cannot. So half
//! the first stage's walks draw their size from a four times larger
//! distribution, weighted back ([`Setup::worlds`]); the state the trigger
//! finds is drawn as it comes.
//!
//! Brute force runs `brute` walks from the trigger and counts those that
//! reach each level: the curve splitting estimates, seen directly where it
//! is not too rare.

mod stats;

use std::sync::atomic::{AtomicU64, Ordering};

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::engine::SimTime;
use crate::engine::rng::derive_seed;
use crate::model::WorldConfig;
use crate::model::sim::{Walk, Walker};
use crate::retry::Strategy;
use crate::scenario::Scenario;
use crate::scenario::risk::Risk;

pub use stats::{Interval, mean_interval, wilson};

/// The share of walks the pilot lets climb from one level to the next.
const CLIMB: f64 = 0.2;

/// How much larger the sizes are that half the first stage's walks draw
/// from ([`Setup::worlds`]).
const STRETCH: f64 = 4.0;

/// Seed domains: the pilot's walks, each repeat's, brute force's.
const PILOT: usize = 0;
const REPEATS: usize = 1;
const BRUTE: usize = 2;

/// One strategy's estimate.
#[derive(Clone, Debug)]
pub struct Estimate {
    /// The strategy's name.
    pub strategy: String,
    /// Requests in progress counted as recovered (at or under).
    pub calm: u64,
    /// The levels, the last `tipped`.
    pub levels: Vec<u64>,
    /// For each level, the chance a trigger's walk reaches it before
    /// recovering: the mean over repeats, with its interval.
    pub reach: Vec<Interval>,
    /// The chance a trigger tips the world (the last level's).
    pub tip: Interval,
    /// The chance some trigger tips it within a day.
    pub day: Interval,
    /// Walks splitting simulated (pilot and repeats; brute force's not
    /// counted).
    pub walks: u64,
    /// Of them, those that reached the time limit neither tipped nor
    /// recovered.
    pub timed_out: u64,
    /// Walks from `tipped` that recovered within `after`, of those tried
    /// (the pilot's walks that tipped): near zero when `tipped` is a state
    /// the world does not leave.
    pub fell_back: (u64, u64),
    /// Brute force's counts, if asked for.
    pub brute: Option<Brute>,
}

impl Estimate {
    /// Whether more than a tenth of the walks tried from `tipped` got back
    /// to calm: then `tipped` is not a state the world stays in, and the
    /// estimate is the chance of reaching it, not of a lasting storm.
    pub fn leaves_the_top(&self) -> bool {
        self.fell_back.1 > 0 && self.fell_back.0 * 10 > self.fell_back.1
    }
}

/// Brute force's walks and how many reached each level.
#[derive(Clone, Debug)]
pub struct Brute {
    /// Walks.
    pub trials: u64,
    /// Walks that reached each level (the last: tipped).
    pub reached: Vec<u64>,
    /// Walks that reached the time limit neither tipped nor recovered.
    pub timed_out: u64,
}

impl Brute {
    /// The chance of reaching level `i`, with its Wilson interval.
    pub fn reach(&self, i: usize) -> Interval {
        wilson(self.reached[i], self.trials)
    }
}

/// A failed walk: which strategy and why.
#[derive(Debug)]
pub struct RiskError {
    /// The strategy's index.
    pub strategy: usize,
    /// What went wrong.
    pub message: String,
}

/// How one leg of a walk ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Leg {
    /// It reached the level aimed at.
    Up,
    /// The trigger over, it fell back to calm.
    Down,
    /// The world's end came first.
    Out,
}

/// A walk paused at a level, when its trigger starts and ends, and its
/// weight: its share of the chance of reaching the level.
struct Entry<'w> {
    walker: Walker<'w>,
    window: (SimTime, SimTime),
    weight: f64,
}

/// What a stage's walks start from: the trigger (fresh runs, one world
/// each) or the walks paused at the level below.
enum Start<'a, 'x> {
    /// Worlds and their importance weights.
    Fresh(&'x [(WorldConfig, f64)]),
    /// Walks paused at the level below, and which of them each walk of the
    /// stage branches from.
    Paused(&'a [Entry<'x>], &'a [usize]),
}

/// One strategy's world, its trigger and what counts as tipped.
struct Setup<'w> {
    risk: &'w Risk,
    base: &'w WorldConfig,
    strategy: &'w Strategy,
    seed: u64,
    calm: u64,
    walks: &'w AtomicU64,
}

/// Every strategy's estimate, in file order; `progress(done, total)` after
/// each strategy's repeat.
pub fn estimate(
    s: &Scenario,
    r: &Risk,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<Estimate>, RiskError> {
    let total = s.strategies.len() * (r.repeats as usize + 1 + usize::from(r.brute > 0));
    let done = std::sync::atomic::AtomicUsize::new(0);
    let tick = || progress(done.fetch_add(1, Ordering::Relaxed) + 1, total);
    (0..s.strategies.len())
        .map(|k| {
            estimate_one(s, r, k, &tick).map_err(|message| RiskError {
                strategy: k,
                message,
            })
        })
        .collect()
}

fn estimate_one(
    s: &Scenario,
    r: &Risk,
    k: usize,
    tick: &(dyn Fn() + Sync),
) -> Result<Estimate, String> {
    let base = s.world_for(k);
    let walks = AtomicU64::new(0);
    let mut setup = Setup {
        risk: r,
        base: &base,
        strategy: &s.strategies[k],
        seed: derive_seed(s.seed, k, 0),
        calm: 0,
        walks: &walks,
    };
    setup.calm = match r.calm {
        Some(c) => c,
        None => setup.calm_at_start()?,
    };
    let (levels, fell_back) = setup.pilot()?;
    tick();
    let mut timed_out = 0;
    let mut runs = Vec::with_capacity(r.repeats as usize);
    for rep in 0..r.repeats {
        let (reach, out) = setup.repeat(rep, &levels)?;
        timed_out += out;
        runs.push(reach);
        tick();
    }
    let reach: Vec<Interval> = (0..levels.len())
        .map(|i| {
            let at: Vec<f64> = runs.iter().map(|r| r[i]).collect();
            mean_interval(&at)
        })
        .collect();
    // Splitting's walks; brute force's are its trials.
    let split_walks = walks.load(Ordering::Relaxed);
    let brute = if r.brute > 0 {
        let b = setup.brute(&levels)?;
        tick();
        Some(b)
    } else {
        None
    };
    let tip = *reach.last().expect("at least one level");
    // 1 - e^(-rate p), without losing a tiny p to rounding.
    let per_day = |p: f64| -(-r.per_day * p).exp_m1();
    Ok(Estimate {
        strategy: s.strategies[k].name.clone(),
        calm: setup.calm,
        levels,
        day: Interval {
            mean: per_day(tip.mean),
            low: per_day(tip.low),
            high: per_day(tip.high),
        },
        tip,
        reach,
        walks: split_walks,
        timed_out,
        fell_back,
        brute,
    })
}

impl<'w> Setup<'w> {
    /// The seed of walk `j` of stage `stage` in domain `domain`, repeat
    /// `rep`.
    fn seed_of(&self, domain: usize, rep: u32, stage: usize, j: usize) -> u64 {
        derive_seed(
            derive_seed(self.seed, domain, rep),
            stage,
            u32::try_from(j).unwrap_or(u32::MAX),
        )
    }

    /// A world for each of `n` fresh walks, and its weight. Half the
    /// walks draw their trigger's size from the scenario's distribution f,
    /// half from the same shape [`STRETCH`] times as large h, so that big
    /// triggers, where tipping is likeliest, are drawn often enough to be
    /// split from; each walk is weighted f / (f/2 + h/2), at most 2
    /// ("defensive" importance sampling: Hesterberg, Technometrics 37(2),
    /// 1995). Within each half the sizes are stratified: the i-th of m at
    /// quantile (i + U) / m, U uniform, so the tail up to the last m-th is
    /// always drawn.
    fn worlds(&self, domain: usize, rep: u32, n: usize) -> Vec<(WorldConfig, f64)> {
        let size = self.risk.size;
        let big = size.stretched(STRETCH);
        let halves = [n.div_ceil(2), n / 2];
        (0..n)
            .into_par_iter()
            .map(|j| {
                let mut rng = ChaCha8Rng::seed_from_u64(self.seed_of(domain, rep, usize::MAX, j));
                let u: f64 = rng.random();
                let (from, i, m) = if j % 2 == 0 {
                    (size, j / 2, halves[0])
                } else {
                    (big, j / 2, halves[1])
                };
                let q = ((i as f64 + u) / m as f64).clamp(f64::MIN_POSITIVE, 1.0 - f64::EPSILON);
                let x = from.quantile(q);
                let (f, h) = (size.density(x), big.density(x));
                let weight = if f + h > 0.0 {
                    f / (0.5 * f + 0.5 * h)
                } else {
                    1.0
                };
                (self.risk.world(self.base, x), weight)
            })
            .collect()
    }

    fn world(&self, seed: u64) -> WorldConfig {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let x = self.risk.size.sample(&mut rng);
        self.risk.world(self.base, x)
    }

    /// Which paused walk each of the `n` walks of the next stage branches
    /// from: systematic resampling by weight (a random offset U, then
    /// walk b from the entry whose share of the total weight covers
    /// (b + U) / n). Each entry gets its weight's share of the walks on
    /// average, whatever order the entries are in (handing walks out in
    /// turn instead gave the extra walks of an uneven division to the
    /// first entries, the smallest triggers': a bias of 8% in two stages,
    /// measured against brute force).
    fn allot(&self, entries: &[Entry], domain: usize, rep: u32, stage: usize) -> Vec<usize> {
        let n = self.risk.effort as usize;
        let total: f64 = entries.iter().map(|e| e.weight).sum();
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed_of(domain, rep, stage, usize::MAX));
        let u: f64 = rng.random();
        let mut picks = Vec::with_capacity(n);
        let (mut i, mut covered) = (0, entries.first().map_or(0.0, |e| e.weight));
        for b in 0..n {
            let at = (b as f64 + u) / n as f64 * total;
            while covered < at && i + 1 < entries.len() {
                i += 1;
                covered += entries[i].weight;
            }
            picks.push(i);
        }
        picks
    }

    /// The median of the watched count when the trigger starts.
    fn calm_at_start(&self) -> Result<u64, String> {
        let n = self.risk.effort as usize;
        let worlds = self.worlds(PILOT, 0, n);
        let mut at_start: Vec<u64> = (0..n)
            .into_par_iter()
            .map(|j| {
                let world = &worlds[j].0;
                let (start, _) = self.risk.window(world);
                let mut w = Walker::new(world, self.strategy, self.seed_of(PILOT, 0, 0, j));
                match w.walk(|t, _| t >= start) {
                    Walk::Aborted(a) => Err(format!("{a:?}")),
                    _ => Ok(self.risk.watch.of(w.watched())),
                }
            })
            .collect::<Result<_, String>>()?;
        at_start.sort_unstable();
        Ok(at_start[n / 2])
    }

    /// One stage: `effort` walks from `start`, each until it reaches
    /// `target`, recovers or runs out of time; each walk's leg, the most
    /// the count watched reached, and (with `keep`) the walk paused where
    /// it reached the target, weighted: a fresh walk by its importance
    /// weight over the effort, a branch by an equal share of the weight
    /// paused at the level below.
    fn stage<'x>(
        &self,
        start: Start<'_, 'x>,
        seeds: impl Fn(usize) -> u64 + Sync,
        target: u64,
        keep: bool,
    ) -> Result<Vec<(Leg, u64, Option<Entry<'x>>)>, String>
    where
        'w: 'x,
    {
        let n = self.risk.effort as usize;
        let share = match &start {
            Start::Fresh(_) => 1.0 / n as f64,
            Start::Paused(entries, _) => entries.iter().map(|e| e.weight).sum::<f64>() / n as f64,
        };
        (0..n)
            .into_par_iter()
            .map(|j| {
                let (mut walker, window, weight) = match &start {
                    Start::Fresh(worlds) => {
                        let (world, w) = &worlds[j];
                        let walker = Walker::new(world, self.strategy, seeds(j));
                        (walker, self.risk.window(world), w * share)
                    }
                    Start::Paused(entries, picks) => {
                        let e = &entries[picks[j]];
                        (e.walker.branch(seeds(j)), e.window, share)
                    }
                };
                let (leg, most) = self.leg(&mut walker, window, target)?;
                let kept = (keep && leg == Leg::Up).then_some(Entry {
                    walker,
                    window,
                    weight,
                });
                Ok((leg, most, kept))
            })
            .collect()
    }

    /// Walks on until the count watched reaches `target`, or the trigger
    /// is over and it is back at calm, or the world's end; how it ended and
    /// the most it saw. Nothing before the trigger's start counts: the
    /// question is where the trigger takes the world from where it was.
    fn leg(
        &self,
        w: &mut Walker,
        (trigger_start, trigger_end): (SimTime, SimTime),
        target: u64,
    ) -> Result<(Leg, u64), String> {
        self.walks.fetch_add(1, Ordering::Relaxed);
        let (calm, watch) = (self.calm, self.risk.watch);
        // A walk paused at a level may stand at the next one already (it
        // passed several at once, or started above them): it is there now,
        // before the next event moves it.
        let mut most = 0;
        let here = (w.now(), watch.of(w.watched()));
        if here.0 >= trigger_start {
            most = here.1;
            if here.1 >= target {
                return Ok((Leg::Up, most));
            }
        }
        let ended = w.walk(|t, seen| {
            if t < trigger_start {
                return false;
            }
            let n = watch.of(seen);
            most = most.max(n);
            n >= target || (t >= trigger_end && n <= calm)
        });
        match ended {
            Walk::Aborted(a) => Err(format!("a walk had to stop: {a:?}")),
            Walk::Ended => Ok((Leg::Out, most)),
            Walk::Stopped if watch.of(w.watched()) >= target => Ok((Leg::Up, most)),
            Walk::Stopped => Ok((Leg::Down, most)),
        }
    }

    /// The pilot: levels placed so that about a fifth of the walks climb
    /// from each to the next, and how many walks from `tipped` recovered.
    fn pilot(&self) -> Result<(Vec<u64>, (u64, u64)), String> {
        let tipped = self.risk.tipped;
        let worlds = self.worlds(PILOT, 0, self.risk.effort as usize);
        let mut levels: Vec<u64> = Vec::new();
        let mut entries: Vec<Entry> = Vec::new();
        let mut picks: Vec<usize> = Vec::new();
        let mut lower = self.calm;
        for stage in 0.. {
            let start = || {
                if stage == 0 {
                    Start::Fresh(&worlds)
                } else {
                    Start::Paused(&entries, &picks)
                }
            };
            let seeds = |j| self.seed_of(PILOT, 0, stage, j);
            // First to the top, to see how high each walk gets ...
            let legs = self.stage(start(), seeds, tipped, false)?;
            let mut most: Vec<u64> = legs.iter().map(|l| l.1).collect();
            most.sort_unstable_by(|a, b| b.cmp(a));
            let climbers = ((CLIMB * most.len() as f64).ceil() as usize).max(1);
            let next = most[climbers - 1].clamp(lower + 1, tipped);
            levels.push(next);
            if legs.iter().all(|l| l.1 < next) {
                // None got there: place the rest evenly, in the steps so far.
                let step = (next - lower).max(1);
                let mut l = next;
                while l < tipped {
                    l = (l + step).min(tipped);
                    levels.push(l);
                }
                return Ok((levels, (0, 0)));
            }
            // ... then again, the same walks, paused where they reach it.
            let kept = self.stage(start(), seeds, next, true)?;
            entries = kept.into_iter().filter_map(|l| l.2).collect();
            picks = self.allot(&entries, PILOT, 0, stage);
            if next >= tipped {
                break;
            }
            lower = next;
        }
        let fell_back = self.fell_back(&entries)?;
        Ok((levels, fell_back))
    }

    /// Of the walks paused at `tipped`, how many recover within the time
    /// left, and of how many.
    fn fell_back(&self, entries: &[Entry]) -> Result<(u64, u64), String> {
        let down = entries
            .par_iter()
            .enumerate()
            .map(|(j, e)| {
                let mut w = e.walker.branch(self.seed_of(PILOT, 1, usize::MAX, j));
                Ok(u64::from(
                    self.leg(&mut w, e.window, u64::MAX)?.0 == Leg::Down,
                ))
            })
            .collect::<Result<Vec<u64>, String>>()?;
        Ok((down.iter().sum(), entries.len() as u64))
    }

    /// One estimate on fixed levels: the chance of reaching each (the
    /// weight paused there), and the walks that ran out of time.
    fn repeat(&self, rep: u32, levels: &[u64]) -> Result<(Vec<f64>, u64), String> {
        let worlds = self.worlds(REPEATS, rep, self.risk.effort as usize);
        let mut entries: Vec<Entry> = Vec::new();
        let mut picks: Vec<usize> = Vec::new();
        let mut reach = vec![0.0; levels.len()];
        let mut out = 0;
        for (stage, &level) in levels.iter().enumerate() {
            let start = if stage == 0 {
                Start::Fresh(&worlds)
            } else {
                Start::Paused(&entries, &picks)
            };
            let seeds = |j| self.seed_of(REPEATS, rep, stage, j);
            let legs = self.stage(start, seeds, level, true)?;
            out += legs.iter().filter(|l| l.0 == Leg::Out).count() as u64;
            let next: Vec<Entry> = legs.into_iter().filter_map(|l| l.2).collect();
            reach[stage] = next.iter().map(|e| e.weight).sum();

            if next.is_empty() {
                break;
            }
            picks = self.allot(&next, REPEATS, rep, stage);
            entries = next;
        }
        Ok((reach, out))
    }

    /// Brute force: walks from the trigger to the top or back.
    fn brute(&self, levels: &[u64]) -> Result<Brute, String> {
        let trials = self.risk.brute as usize;
        let tipped = self.risk.tipped;
        let legs = (0..trials)
            .into_par_iter()
            .map(|j| {
                let world = self.world(self.seed_of(BRUTE, 0, usize::MAX, j));
                let window = self.risk.window(&world);
                let mut w = Walker::new(&world, self.strategy, self.seed_of(BRUTE, 0, 0, j));
                self.leg(&mut w, window, tipped)
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Brute {
            trials: trials as u64,
            reached: levels
                .iter()
                .map(|&l| legs.iter().filter(|leg| leg.1 >= l).count() as u64)
                .collect(),
            timed_out: legs.iter().filter(|l| l.0 == Leg::Out).count() as u64,
        })
    }
}

#[cfg(test)]
mod tests;
