//! `sim advise`: a seeded search of retry settings for a scenario's world and
//! triggers, judged over several trigger lengths and seeds so the advice is
//! not tuned to one run. What it returns is the Pareto front on failed
//! requests, successes lost, peak load and p99 latency, and the setting the
//! user's objective picks from it.
//!
//! The search is successive halving (Jamieson and Talwalkar, "Non-stochastic
//! Best Arm Identification and Hyperparameter Optimization", 2016): settings
//! drawn at random from a grid are run in one world, the better half (by
//! Pareto layer, then the objective) in a second, and so on until the last
//! round runs every world. Every world is the scenario's with its outages
//! lengthened or shortened (0.5, 1 and 2 times) and with two seeds.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::engine::{SimDuration, SimTime};
use crate::model::{self, WorldConfig};
use crate::retry::{Backoff, BackoffKind, BudgetConfig, Strategy};
use crate::scenario::Scenario;

/// What is compared, each to be made small.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// Requests that failed.
    Failed,
    /// Successes the twin had that the run did not.
    SuccessesLost,
    /// The highest attempts a second over the capacity.
    PeakLoad,
    /// The 99th percentile of successful requests' latency, s.
    P99,
}

impl Metric {
    /// Every metric, in the order of the columns.
    pub const ALL: [Metric; 4] = [
        Metric::Failed,
        Metric::SuccessesLost,
        Metric::PeakLoad,
        Metric::P99,
    ];

    /// Its name, as summary.csv's column.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Failed => "failed",
            Metric::SuccessesLost => "successes_lost",
            Metric::PeakLoad => "peak_load_ratio",
            Metric::P99 => "latency_p99_s",
        }
    }

    fn parse(s: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.name() == s.trim())
    }
}

/// What the user wants: the smallest `minimize` among the settings that
/// keep every limit.
#[derive(Clone, Debug, PartialEq)]
pub struct Objective {
    /// The metric to make smallest.
    pub minimize: Metric,
    /// Upper limits on others.
    pub limits: Vec<(Metric, f64)>,
}

impl Objective {
    /// Parses `"failed; peak_load_ratio <= 1.5"`: a metric, then limits.
    pub fn parse(text: &str) -> Result<Objective, String> {
        let names = Metric::ALL.map(Metric::name).join(", ");
        let mut parts = text.split(';');
        let first = parts.next().unwrap_or("").trim();
        let minimize = Metric::parse(first).ok_or_else(|| {
            format!("objective \"{text}\": \"{first}\" is not a metric; the metrics are {names}, e.g. \"failed; peak_load_ratio <= 1.5\"")
        })?;
        let mut limits = Vec::new();
        for p in parts.map(str::trim).filter(|p| !p.is_empty()) {
            let Some((m, v)) = p.split_once("<=") else {
                return Err(format!(
                    "objective \"{text}\": \"{p}\" is not a limit; write METRIC <= NUMBER, e.g. peak_load_ratio <= 1.5"
                ));
            };
            let metric = Metric::parse(m).ok_or_else(|| {
                format!(
                    "objective \"{text}\": \"{}\" is not a metric; the metrics are {names}",
                    m.trim()
                )
            })?;
            let value: f64 = v
                .trim()
                .parse()
                .ok()
                .filter(|x: &f64| x.is_finite())
                .ok_or_else(|| format!("objective \"{text}\": \"{}\" is not a number", v.trim()))?;
            limits.push((metric, value));
        }
        Ok(Objective { minimize, limits })
    }

    pub fn feasible(&self, s: &Scores) -> bool {
        self.limits.iter().all(|&(m, v)| s.get(m) <= v)
    }
}

/// One setting searched.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// Backoff kind.
    pub kind: BackoffKind,
    /// First delay.
    pub base: SimDuration,
    /// Largest delay.
    pub cap: SimDuration,
    /// Retries after the first attempt.
    pub retries: u32,
    /// Attempt timeout.
    pub timeout: Option<SimDuration>,
    /// Retry budget.
    pub budget: Option<BudgetConfig>,
    /// In a call chain, the setting of the calls to each service (in the
    /// order of `[[service]]`), each drawn on its own; empty otherwise.
    pub calls: Vec<Candidate>,
}

impl Candidate {
    /// `template` with this setting's backoff, retries, timeout and budget
    /// (and its calls' at each tier).
    pub fn strategy(&self, template: &Strategy, name: String) -> Strategy {
        let mut s = template.clone();
        s.name = name;
        self.apply(&mut s);
        for (tier, calls) in s.tiers.iter_mut().zip(&self.calls) {
            calls.apply(&mut tier.strategy);
        }
        s
    }

    fn apply(&self, s: &mut Strategy) {
        s.backoff = Backoff {
            kind: self.kind,
            base: self.base,
            cap: self.cap,
            ..Backoff::default()
        };
        s.policy.max_retries = self.retries;
        s.policy.timeout = self.timeout;
        s.budget = self.budget.clone();
    }

    /// The budget in the scenario's words.
    pub fn budget_toml(&self) -> String {
        match &self.budget {
            None => "{ kind = \"none\" }".into(),
            Some(BudgetConfig::TokenBucket {
                max_tokens,
                token_ratio,
            }) => format!(
                "{{ kind = \"token-bucket\", max_tokens = {max_tokens}, token_ratio = {token_ratio} }}"
            ),
            Some(BudgetConfig::Ratio { ratio, window }) => {
                format!("{{ kind = \"ratio\", ratio = {ratio}, window = \"{window}\" }}")
            }
            Some(other) => format!("{other:?}"),
        }
    }

    /// The setting as a `[[strategy]]` table, with a `[strategy.tiers.NAME]`
    /// table for the calls to each of `services`.
    pub fn toml(&self, name: &str, services: &[&str]) -> String {
        let mut out = format!("[[strategy]]\nname = \"{name}\"\n{}", self.keys());
        for (service, calls) in services.iter().zip(&self.calls) {
            out.push_str(&format!("[strategy.tiers.{service}]\n{}", calls.keys()));
        }
        out
    }

    /// The setting as edits of strategy `i`'s keys (key path, TOML value),
    /// as the playground applies them; the calls' under
    /// `strategy[i].tiers.NAME` for each of `services`.
    pub fn edits(&self, i: usize, services: &[&str]) -> Vec<(String, String)> {
        let mut out = self.key_values(&format!("strategy[{i}]"));
        for (service, calls) in services.iter().zip(&self.calls) {
            out.extend(calls.key_values(&format!("strategy[{i}].tiers.{service}")));
        }
        out
    }

    fn key_values(&self, at: &str) -> Vec<(String, String)> {
        let timeout = self
            .timeout
            .map_or("\"none\"".to_string(), |t| format!("\"{t}\""));
        [
            ("backoff", format!("\"{}\"", self.kind.name())),
            ("base", format!("\"{}\"", self.base)),
            ("cap", format!("\"{}\"", self.cap)),
            ("max_retries", self.retries.to_string()),
            ("timeout", timeout),
            ("budget", self.budget_toml()),
        ]
        .into_iter()
        .map(|(k, v)| (format!("{at}.{k}"), v))
        .collect()
    }

    fn keys(&self) -> String {
        format!(
            "backoff = \"{}\"\nbase = \"{}\"\ncap = \"{}\"\nmax_retries = {}\ntimeout = {}\nbudget = {}\n",
            self.kind.name(),
            self.base,
            self.cap,
            self.retries,
            self.timeout
                .map_or("\"none\"".to_string(), |t| format!("\"{t}\"")),
            self.budget_toml()
        )
    }

    /// One line: kind, base, cap, retries, timeout, budget.
    pub fn short(&self) -> String {
        let budget = match &self.budget {
            None => "none".to_string(),
            Some(BudgetConfig::TokenBucket {
                max_tokens,
                token_ratio,
            }) => format!("tokens {max_tokens}/{token_ratio}"),
            Some(BudgetConfig::Ratio { ratio, .. }) => format!("ratio {ratio}"),
            Some(_) => "other".into(),
        };
        format!(
            "{:<19} {:>6} {:>4} {:>2} {:>7} {:<16}",
            self.kind.name(),
            self.base.to_string(),
            self.cap.to_string(),
            self.retries,
            self.timeout.map_or("none".into(), |t| t.to_string()),
            budget
        )
    }
}

/// The grid settings are drawn from: the backoff kinds of the AWS article,
/// bases and caps from 10 ms to 60 s, 0 to 8 retries, the scenario's
/// timeout halved, kept and doubled, and no budget, gRPC's token bucket at
/// two sizes and ratios, or the SRE book's ratio budget at 10% and 20%.
fn grid(timeout: Option<SimDuration>) -> Vec<Candidate> {
    let kinds = [
        BackoffKind::Exponential,
        BackoffKind::FullJitter,
        BackoffKind::EqualJitter,
        BackoffKind::DecorrelatedJitter,
    ];
    let ms = SimDuration::from_millis;
    let bases = [ms(10), ms(50), ms(100), ms(200), ms(500), ms(1000)];
    let caps = [ms(1000), ms(5000), ms(20_000), ms(60_000)];
    let retries = [0, 1, 2, 3, 5, 8];
    let timeouts: Vec<Option<SimDuration>> = match timeout {
        Some(t) => vec![
            Some(SimDuration(t.0 / 2)),
            Some(t),
            Some(SimDuration(t.0 * 2)),
        ],
        None => vec![None],
    };
    let budgets = [
        None,
        Some(BudgetConfig::TokenBucket {
            max_tokens: 10.0,
            token_ratio: 0.1,
        }),
        Some(BudgetConfig::TokenBucket {
            max_tokens: 100.0,
            token_ratio: 0.2,
        }),
        Some(BudgetConfig::Ratio {
            ratio: 0.1,
            window: SimDuration::from_secs(10),
        }),
        Some(BudgetConfig::Ratio {
            ratio: 0.2,
            window: SimDuration::from_secs(10),
        }),
    ];
    let mut out = Vec::new();
    for &kind in &kinds {
        for &base in &bases {
            for &cap in caps.iter().filter(|&&c| c >= base) {
                for &r in &retries {
                    for &t in &timeouts {
                        for b in &budgets {
                            out.push(Candidate {
                                kind,
                                base,
                                cap,
                                retries: r,
                                timeout: t,
                                budget: b.clone(),
                                calls: Vec::new(),
                            });
                        }
                    }
                }
            }
        }
    }
    out
}

/// A setting's metrics, means over the worlds it ran in.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Scores {
    sums: [f64; 4],
    /// Worlds it ran in.
    pub worlds: usize,
}

impl Scores {
    /// The mean of `m`.
    pub fn get(&self, m: Metric) -> f64 {
        let i = Metric::ALL.iter().position(|&x| x == m).unwrap_or(0);
        self.sums[i] / self.worlds.max(1) as f64
    }

    fn add(&mut self, s: &crate::metrics::Summary) {
        let values = [
            s.failed as f64,
            s.successes_lost.unwrap_or(0) as f64,
            s.peak_load_ratio.unwrap_or(0.0),
            // A run with no success has no latency: as bad as its timeout
            // could make it, the run's length.
            s.latency_p99_s.unwrap_or(f64::MAX / 4.0),
        ];
        for (sum, v) in self.sums.iter_mut().zip(values) {
            *sum += v;
        }
        self.worlds += 1;
    }

    /// Whether `self` is at least as good on every metric and better on one.
    pub fn dominates(&self, other: &Scores) -> bool {
        let (mut better, mut worse) = (false, false);
        for m in Metric::ALL {
            let (a, b) = (self.get(m), other.get(m));
            better |= a < b;
            worse |= a > b;
        }
        better && !worse
    }
}

/// A world of the search: the scenario's with its outages scaled by
/// `length`, run with `seed`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct World {
    /// Outage lengths over the scenario's.
    pub length: f64,
    /// The seed.
    pub seed: u64,
}

/// The worlds every setting that reaches the last round runs in.
pub fn worlds(seed: u64) -> Vec<World> {
    let mut out = Vec::new();
    for s in [seed, seed.wrapping_add(1)] {
        for length in [1.0, 0.5, 2.0] {
            out.push(World { length, seed: s });
        }
    }
    out
}

/// `world` with each outage's length times `length`, kept within the run.
pub fn scaled(world: &WorldConfig, length: f64) -> WorldConfig {
    let mut w = world.clone();
    for o in &mut w.outages {
        let span = (o.end.0 - o.start.0) as f64 * length;
        o.end = SimTime(
            (o.start.0 + span.round() as u64)
                .min(w.duration.0)
                .max(o.start.0 + 1),
        );
    }
    // Outages of one tier that now overlap are cut at the next one's start.
    let n = w.outages.len();
    for i in 0..n {
        if let Some(next) = (i + 1..n).find(|&j| w.outages[j].tier == w.outages[i].tier) {
            let limit = w.outages[next].start;
            if w.outages[i].end > limit {
                w.outages[i].end = limit;
            }
        }
    }
    w
}

/// The search's outcome.
#[derive(Clone, Debug)]
pub struct Advice {
    /// Every setting that reached the last round, with its scores.
    pub finalists: Vec<(Candidate, Scores)>,
    /// Of those, the ones no other beats on every metric.
    pub front: Vec<usize>,
    /// The objective's pick among the front, if one keeps every limit.
    pub pick: Option<usize>,
    /// Settings drawn at the start.
    pub drawn: usize,
    /// Runs made (each with its twin).
    pub runs: usize,
}

/// The services of `s`'s call chain, in the order of a setting's
/// [`Candidate::calls`] (none without a chain).
pub fn services(s: &Scenario) -> Vec<&str> {
    s.world
        .chain
        .as_ref()
        .map(|c| (1..c.tiers()).map(|k| c.name(k)).collect())
        .unwrap_or_default()
}

/// Why a scenario cannot be advised on.
pub fn refusal(s: &Scenario) -> Option<String> {
    if s.sweep.is_some() {
        return Some("a sweep: advise searches the settings itself; remove [sweep]".into());
    }
    let first = s.strategies.first()?;
    if first.hedging.is_some() {
        return Some(format!(
            "its first strategy, \"{}\", hedges: advise searches retry settings",
            first.name
        ));
    }
    if let Some(t) = first
        .tiers
        .iter()
        .position(|t| t.strategy.hedging.is_some())
    {
        let name = s.world.chain.as_ref().map_or("?", |c| c.name(t + 1));
        return Some(format!(
            "its first strategy, \"{}\", hedges its calls to {name}: advise searches retry settings",
            first.name
        ));
    }
    if s.world.outages.is_empty() {
        return Some(
            "no [[outage]]: the settings would be judged on a world where nothing fails".into(),
        );
    }
    None
}

/// The most memory the twins a search keeps may take.
const TWINS_BYTES: usize = 256 << 20;

/// The settings a search tries: `drawn` of the grid around the template's
/// timeout, a seeded partial shuffle, each with a setting of its own for the
/// calls to each service of a chain.
pub fn draw(template: &Strategy, drawn: usize, seed: u64) -> Vec<Candidate> {
    let mut all = grid(template.policy.timeout);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // A seeded partial shuffle: the first `drawn` of the grid.
    let drawn = drawn.min(all.len());
    for i in 0..drawn {
        let j = rng.random_range(i..all.len());
        all.swap(i, j);
    }
    all.truncate(drawn);
    // In a call chain each setting also draws, on its own, the setting of the
    // calls to each service, from the grid around that tier's timeout: one
    // grid per timeout, not per tier (7 560 settings, 1.5 MB, made for each
    // of 1 000 tiers held 1.5 GB).
    let mut grids: std::collections::BTreeMap<Option<SimDuration>, Vec<Candidate>> =
        std::collections::BTreeMap::new();
    for t in &template.tiers {
        let timeout = t.strategy.policy.timeout;
        grids.entry(timeout).or_insert_with(|| grid(timeout));
    }
    let tier_grids: Vec<&[Candidate]> = template
        .tiers
        .iter()
        .map(|t| grids[&t.strategy.policy.timeout].as_slice())
        .collect();
    for c in &mut all {
        c.calls = tier_grids
            .iter()
            .map(|g| g[rng.random_range(0..g.len())].clone())
            .collect();
    }
    all
}

/// The Pareto front of the finalists (none better on every metric), and the
/// pick: of the front's settings that keep every limit, the best on the
/// objective's metric, then on the others in column order, then the first.
pub fn judge(alive: &[(Candidate, Scores)], objective: &Objective) -> (Vec<usize>, Option<usize>) {
    let front: Vec<usize> = (0..alive.len())
        .filter(|&i| !alive.iter().any(|(_, o)| o.dominates(&alive[i].1)))
        .collect();
    let pick = front
        .iter()
        .copied()
        .filter(|&i| objective.feasible(&alive[i].1))
        .min_by(|&a, &b| {
            // The objective's metric, then the others in column order.
            let alive = &alive;
            let key = |i: usize| {
                std::iter::once(objective.minimize)
                    .chain(Metric::ALL.into_iter().filter(|&m| m != objective.minimize))
                    .map(move |m| alive[i].1.get(m))
            };
            key(a)
                .zip(key(b))
                .map(|(x, y)| x.total_cmp(&y))
                .find(|o| o.is_ne())
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(a.cmp(&b))
        });
    (front, pick)
}

/// Searches settings for `s` within `budget` runs, the first strategy's
/// other settings kept; `done` is told of each run as it ends.
pub fn advise(
    s: &Scenario,
    budget: usize,
    seed: u64,
    objective: &Objective,
    done: &(dyn Fn() + Sync),
) -> Advice {
    let template = &s.strategies[0];
    let worlds = worlds(s.seed);
    // Rounds run 1, 1, 1 and then the other 3 worlds: with halving, a
    // setting drawn costs 1 + 1/2 + 1/4 + 3/8 = 2.125 runs.
    let schedule: [&[usize]; 4] = [&[0], &[3], &[1], &[2, 4, 5]];
    let all = draw(
        template,
        ((budget as f64 / 2.125).floor() as usize).max(2),
        seed,
    );
    let drawn = all.len();
    let mut alive: Vec<(Candidate, Scores)> =
        all.into_iter().map(|c| (c, Scores::default())).collect();
    let mut runs = 0;
    let base_world = s.world_for(0).into_owned();
    // Worlds 0 to 2 and 3 to 5 differ only in their outages' lengths: each
    // setting's twin is the same in the three, and is run once when the
    // twins of every setting drawn fit in memory.
    let twin_bytes = (base_world.duration.0 / s.metrics.bucket.0.max(1) + 1) as usize
        * std::mem::size_of::<crate::metrics::Bucket>();
    let twins = crate::model::Twins::default();
    let twins = (twin_bytes.saturating_mul(2 * drawn) <= TWINS_BYTES).then_some(&twins);
    for (round, worlds_now) in schedule.iter().enumerate() {
        let jobs: Vec<(usize, usize)> = (0..alive.len())
            .flat_map(|c| worlds_now.iter().map(move |&w| (c, w)))
            .collect();
        let results: Vec<(usize, crate::metrics::Summary)> = jobs
            .par_iter()
            .map(|&(c, w)| {
                let world = scaled(&base_world, worlds[w].length);
                let strategy = alive[c].0.strategy(template, format!("candidate-{c}"));
                let m =
                    model::run_measured_with(&world, &strategy, worlds[w].seed, &s.metrics, twins);
                done();
                (c, m.summary)
            })
            .collect();
        runs += results.len();
        for (c, summary) in &results {
            alive[*c].1.add(summary);
        }
        if round + 1 == schedule.len() {
            break;
        }
        let keep = alive.len().div_ceil(2).max(2).min(alive.len());
        let order = ranked(&alive, objective);
        let mut next: Vec<(Candidate, Scores)> = order
            .into_iter()
            .take(keep)
            .map(|i| alive[i].clone())
            .collect();
        std::mem::swap(&mut alive, &mut next);
    }
    let (front, pick) = judge(&alive, objective);
    Advice {
        finalists: alive,
        front,
        pick,
        drawn,
        runs,
    }
}

/// Why the pick beat the other settings on the front that keep every limit,
/// in one line: the metric that told it from the next best of them (the
/// objective's, or on a tie the first of the others in column order), with
/// both values; `None` without a pick. Labels are the front's numbers.
pub fn why_the_pick(a: &Advice, objective: &Objective) -> Option<String> {
    let pick = a.pick?;
    let label = |i: usize| a.front.iter().position(|&f| f == i).map_or(0, |n| n + 1);
    let order: Vec<Metric> = std::iter::once(objective.minimize)
        .chain(Metric::ALL.into_iter().filter(|&m| m != objective.minimize))
        .collect();
    let score = |i: usize, m: Metric| a.finalists[i].1.get(m);
    let key_cmp = |x: usize, y: usize| {
        order
            .iter()
            .map(|&m| score(x, m).total_cmp(&score(y, m)))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(x.cmp(&y))
    };
    let next = a
        .front
        .iter()
        .copied()
        .filter(|&i| i != pick && objective.feasible(&a.finalists[i].1))
        .min_by(|&x, &y| key_cmp(x, y));
    // Two values compared are shown alike: one decimal when both are whole
    // or large, three otherwise ("1.500 against 3.000", not "against 3.0").
    let shown = |a: f64, b: f64| {
        let whole = |v: f64| v.fract() == 0.0 || v.abs() >= 100.0;
        if whole(a) && whole(b) {
            (format!("{a:.1}"), format!("{b:.1}"))
        } else {
            (format!("{a:.3}"), format!("{b:.3}"))
        }
    };
    let within = if objective.limits.is_empty() {
        "on the front"
    } else {
        "on the front within the limits"
    };
    let Some(next) = next else {
        return Some(format!(
            "Why #{}: it is the only setting {within}.",
            label(pick)
        ));
    };
    let first = objective.minimize;
    let Some(decided) = order
        .iter()
        .copied()
        .find(|&m| score(pick, m) != score(next, m))
    else {
        // The same means on every metric: the ranking's last key, the
        // order the settings were drawn in, decides.
        return Some(format!(
            "Why #{}: it ties with #{} on every metric ({} {}); of settings that tie, the one \
             drawn first is shown first.",
            label(pick),
            label(next),
            first.name(),
            shown(score(pick, first), score(pick, first)).0,
        ));
    };
    let (at_first, next_first) = shown(score(pick, first), score(next, first));
    Some(if decided == first {
        format!(
            "Why #{}: of the settings {within} it has the fewest {} ({at_first} on average, \
             against {next_first} for #{}, the next).",
            label(pick),
            first.name(),
            label(next)
        )
    } else {
        let (at, against) = shown(score(pick, decided), score(next, decided));
        format!(
            "Why #{}: it ties with #{} on {} ({at_first}) and has the lower {} ({at} against \
             {against}).",
            label(pick),
            label(next),
            first.name(),
            decided.name(),
        )
    })
}

/// The settings best first: by Pareto layer (non-dominated sorting), then
/// feasible before not, then the objective's metric, then drawing order.
fn ranked(alive: &[(Candidate, Scores)], objective: &Objective) -> Vec<usize> {
    let n = alive.len();
    let mut layer = vec![usize::MAX; n];
    let mut left: Vec<usize> = (0..n).collect();
    let mut depth = 0;
    while !left.is_empty() {
        let now: Vec<usize> = left
            .iter()
            .copied()
            .filter(|&i| !left.iter().any(|&j| alive[j].1.dominates(&alive[i].1)))
            .collect();
        for &i in &now {
            layer[i] = depth;
        }
        left.retain(|i| !now.contains(i));
        depth += 1;
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| {
        let (sa, sb) = (&alive[a].1, &alive[b].1);
        layer[a]
            .cmp(&layer[b])
            .then(objective.feasible(sb).cmp(&objective.feasible(sa)))
            .then(
                sa.get(objective.minimize)
                    .total_cmp(&sb.get(objective.minimize)),
            )
            .then(a.cmp(&b))
    });
    order
}

#[cfg(test)]
mod tests;
