//! The trial of `sim check`: the strategies read from the files, run in a
//! world through outages of a few kinds and lengths, seeded.

use std::collections::HashMap;
use std::path::Path;

use super::{Found, Settings, Status};
use crate::engine::SimDuration;
use crate::import::{Imported, into_scenario, toml_duration};
use crate::metrics::Summary;
use crate::retry::Strategy;
use crate::scenario;

/// When each trial's outage starts: after the ten seconds the trial
/// world's baseline is measured over, and ten more to settle.
const START_S: u64 = 20;
/// How long each trial runs after its outage ends: the main scenario's 68
/// s after its stall (long enough for restarts of 10 s and warm-ups of
/// 30 s to play out), rounded up.
const AFTER_S: u64 = 70;

/// What a trial's outage does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TrialKind {
    /// Every request answered 503 at once: a failure every retry policy
    /// sees at once.
    Unavailable,
    /// No request answered: a failure a client sees only at its timeout.
    Blackhole,
    /// Each attempt answered 503 with probability `p`, independently: the
    /// transient failures retries are meant for.
    Errors {
        /// The probability, in (0, 1].
        p: f64,
    },
}

/// One trial: an outage of the whole service, of a kind and a length.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Trial {
    /// What it does.
    pub kind: TrialKind,
    /// How long it lasts.
    pub length: SimDuration,
}

impl Trial {
    /// The trials `sim check` runs by default: the service answering 503
    /// or not answering at all, for 2 s (the article's wobble) and for 10
    /// s (a restart's length in the trial world).
    pub fn defaults() -> Vec<Trial> {
        let mut out = Vec::new();
        for kind in [TrialKind::Unavailable, TrialKind::Blackhole] {
            for s in [2, 10] {
                out.push(Trial {
                    kind,
                    length: SimDuration::from_secs(s),
                });
            }
        }
        out
    }

    /// `kind:length`, as flags and the configuration file give it:
    /// `unavailable:2s`, `blackhole:500ms`, `errors:0.5:60s`.
    pub fn parse(text: &str) -> Result<Trial, String> {
        let valid = "give KIND:LENGTH, KIND unavailable (503 at once), blackhole (no answer) or errors:P (each attempt 503 with probability P, above 0 and at most 1), LENGTH above 0 with its unit and at most 1h, e.g. \"unavailable:2s\" or \"errors:0.5:60s\"";
        let (kind, length) = text
            .rsplit_once(':')
            .ok_or_else(|| format!("\"{text}\": {valid}"))?;
        let kind = match kind.trim().split_once(':') {
            None if kind.trim() == "unavailable" => TrialKind::Unavailable,
            None if kind.trim() == "blackhole" => TrialKind::Blackhole,
            Some(("errors", p)) => match p.trim().parse::<f64>() {
                Ok(p) if p > 0.0 && p <= 1.0 => TrialKind::Errors { p },
                _ => return Err(format!("\"{text}\": the probability \"{p}\": {valid}")),
            },
            _ => return Err(format!("\"{text}\": no trial kind \"{kind}\": {valid}")),
        };
        let length = scenario::duration::parse_duration(length.trim())
            .ok()
            .filter(|d| d.0 > 0 && *d <= SimDuration::from_secs(3600))
            .ok_or_else(|| format!("\"{text}\": {valid}"))?;
        Ok(Trial { kind, length })
    }

    /// A short identifier: `unavailable-2s`, `errors-0.5-60s`.
    pub fn id(&self) -> String {
        let kind = match self.kind {
            TrialKind::Unavailable => "unavailable".to_owned(),
            TrialKind::Blackhole => "blackhole".to_owned(),
            TrialKind::Errors { p } => format!("errors-{p}"),
        };
        format!("{kind}-{}", toml_duration(self.length.0).trim_matches('"'))
    }

    /// In words: "503 at once for 2 s".
    pub fn words(&self) -> String {
        let kind = match self.kind {
            TrialKind::Unavailable => "every request answered 503 at once".to_owned(),
            TrialKind::Blackhole => "no request answered".to_owned(),
            TrialKind::Errors { p } => {
                format!("each attempt answered 503 with probability {p}, independently,")
            }
        };
        format!(
            "{kind} for {}",
            crate::bound::seconds(self.length.as_secs_f64())
        )
    }
}

/// The world the trials run in: a scenario's text, whose strategies,
/// sweep and triggers are set aside.
#[derive(Clone, Debug)]
pub struct World {
    /// The scenario's text.
    pub text: String,
    /// Its file, for messages; `None` for the built-in world.
    pub file: Option<String>,
    /// The proxies its users are behind, over its own `[clients] proxies`
    /// (`sim check --proxies`).
    pub proxies: Option<u32>,
}

impl World {
    /// The main scenario's world (`trial.toml` beside this file).
    pub fn builtin() -> World {
        World {
            text: include_str!("trial.toml").to_owned(),
            file: None,
            proxies: None,
        }
    }

    /// Its name in messages.
    fn name(&self) -> String {
        self.file
            .clone()
            .unwrap_or_else(|| "(the built-in trial world)".to_owned())
    }

    /// In words, for the report.
    pub fn words(&self) -> String {
        match &self.file {
            Some(f) => format!("{f}, its strategies, sweep and triggers set aside"),
            None => "the main scenario's world (1000 clients sending 1000 requests/s in all, a server of 16 workers at 10 ms that crashes past 500 requests held and restarts cold)".to_owned(),
        }
    }

    /// Its text as TOML, without strategies, sweep or triggers.
    fn document(&self) -> Result<toml_edit::DocumentMut, String> {
        let mut doc: toml_edit::DocumentMut = self
            .text
            .parse()
            .map_err(|e| format!("{}: cannot be read as TOML: {e}", self.name()))?;
        for key in ["strategy", "sweep", "outage"] {
            doc.remove(key);
        }
        if let (Some(n), Some(clients)) = (self.proxies, doc.get_mut("clients")) {
            clients["proxies"] = toml_edit::value(i64::from(n));
        }
        Ok(doc)
    }

    /// Its seed (1 when it says none).
    pub fn seed(&self) -> Result<u64, String> {
        let doc = self.document()?;
        Ok(doc
            .get("seed")
            .and_then(toml_edit::Item::as_integer)
            .and_then(|s| u64::try_from(s).ok())
            .unwrap_or(1))
    }

    /// Its text with `trial`'s outage (or none), `seed`, and a duration
    /// that covers the outage and what follows.
    fn text_for(&self, trial: Option<&Trial>, seed: u64) -> Result<String, String> {
        let mut doc = self.document()?;
        doc["seed"] = toml_edit::value(i64::try_from(seed).unwrap_or(i64::MAX));
        let length = trial.map_or(0, |t| t.length.0);
        let duration = SimDuration::from_secs(START_S + AFTER_S).0 + length;
        doc["duration"] = toml_edit::value(toml_duration(duration).trim_matches('"'));
        let mut text = doc.to_string();
        if let Some(t) = trial {
            let kind = match t.kind {
                TrialKind::Unavailable => "kind = \"503\"".to_owned(),
                TrialKind::Blackhole => "kind = \"blackhole\"".to_owned(),
                TrialKind::Errors { p } => format!("kind = \"errors\"\np = {p:?}"),
            };
            let start = SimDuration::from_secs(START_S).0;
            text.push_str(&format!(
                "\n[[outage]]\n{kind}\nstart = {}\nend = {}\n",
                toml_duration(start),
                toml_duration(start + length)
            ));
        }
        Ok(text)
    }
}

/// Which side of a change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Side {
    Before,
    After,
}

/// The strategies as the simulator reads them, and the trials' results,
/// by pair and side.
pub(super) struct Runs {
    /// Each side's strategy, as the simulator reads it.
    strategies: HashMap<(usize, Side), Strategy>,
    /// Each trial's summary, by pair, side and trial.
    trials: HashMap<(usize, Side, usize), Summary>,
    /// The proxies the world's users are behind: each keeps its own copy
    /// of a strategy's guards.
    pub(super) proxies: u16,
}

type Pair<'a> = (Status, Option<Found<'a>>, Option<Found<'a>>);

impl Runs {
    /// Reads every strategy of `pairs` in `world`, and runs the trials of
    /// those judged (and of their base's, when changed).
    pub(super) fn new(
        world: &World,
        pairs: &[Pair<'_>],
        settings: &Settings,
        seed: u64,
    ) -> Result<Runs, String> {
        let all: Vec<(usize, Side, &Found<'_>)> = pairs
            .iter()
            .enumerate()
            .flat_map(|(k, (_, now, then))| {
                [(Side::After, now), (Side::Before, then)]
                    .into_iter()
                    .filter_map(move |(side, f)| f.as_ref().map(|f| (k, side, f)))
            })
            .collect();
        let read = load(world, None, seed, &all)?;
        let proxies = read.world.proxies.count;
        let strategies: HashMap<(usize, Side), Strategy> = all
            .iter()
            .zip(read.strategies)
            .map(|((k, side, _), s)| ((*k, *side), s))
            .collect();
        let tried: Vec<(usize, Side, &Found<'_>)> = all
            .into_iter()
            .filter(|(k, side, f)| {
                let status = pairs[*k].0;
                f.sets_policy()
                    && status.judged()
                    && (*side == Side::After || status == Status::Changed)
            })
            .collect();
        let mut trials = HashMap::new();
        if !tried.is_empty() {
            for (t, trial) in settings.trials.iter().enumerate() {
                let s = load(world, Some(trial), seed, &tried)?;
                let plan = crate::runner::Plan::new(&s);
                plan.check_memory()
                    .map_err(|e| format!("{}: {e}", world.name()))?;
                let report = plan.simulate();
                for ((k, side, _), run) in tried.iter().zip(report.runs) {
                    trials.insert((*k, *side, t), run.summary);
                }
            }
        }
        Ok(Runs {
            strategies,
            trials,
            proxies,
        })
    }

    /// The strategy of pair `k` on `side`, as the simulator reads it.
    pub(super) fn strategy(&self, k: usize, side: Side) -> Option<&Strategy> {
        self.strategies.get(&(k, side))
    }

    /// Trial `t`'s summary for pair `k` on `side`, when it was run.
    pub(super) fn trial(&self, k: usize, side: Side, t: usize) -> Option<&Summary> {
        self.trials.get(&(k, side, t))
    }
}

/// `world` with `strategies` (each name numbered, `0-ratings`, so that a
/// name taken twice cannot clash), `trial`'s outage and `seed`, read as a scenario.
fn load(
    world: &World,
    trial: Option<&Trial>,
    seed: u64,
    strategies: &[(usize, Side, &Found<'_>)],
) -> Result<scenario::Scenario, String> {
    let imports: Vec<Imported> = strategies
        .iter()
        .enumerate()
        .map(|(n, (_, _, f))| {
            let mut s = f.strategy.clone();
            s.name = format!("{n}-{}", s.name);
            Imported {
                file: f.import.file.clone(),
                format: f.import.format,
                strategies: vec![s],
                not_modelled: Vec::new(),
            }
        })
        .collect();
    let text = world.text_for(trial, seed)?;
    let text = into_scenario(&text, &world.name(), &imports).map_err(|e| e.0)?;
    scenario::parse(&text, Path::new(&world.name())).map_err(|e| {
        format!(
            "the imported strategies in {} are not valid there:\n{e}",
            world.name()
        )
    })
}
