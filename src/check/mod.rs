//! `sim check`: what a change to a repository's retry configurations does,
//! judged against limits, for continuous integration.
//!
//! Each imported strategy (a route, a service, a client instance) gets its
//! figures from its settings alone (worst-case attempts per request, its
//! budget's floor, the share of replicas its outlier detection may eject)
//! and from a seeded trial: the strategy run in a world (the main
//! scenario's, or one given) through outages of a few kinds and lengths.
//! Given the base revision's files too, each strategy is matched with its
//! earlier self by file and name, figures are shown before and after, and
//! only strategies the change adds or alters are judged.
//!
//! It sits above `import` (the files), `bound` (the formulas) and `runner`
//! (the trial); `app::check` reads the files and writes the verdict.

mod chain;
mod figures;
pub mod render;
mod trial;

use crate::import::{Entry, Imported};

pub use trial::{Trial, TrialKind, World};

/// The limits a change is judged against; `None` is no limit.
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    /// Worst-case attempts per user request (first included).
    pub max_attempts: Option<f64>,
    /// Every trial must end in recovery within its run.
    pub must_recover: bool,
    /// Share of the trial's requests that failed, at most.
    pub max_failed_share: Option<f64>,
    /// Rise of that share over the base revision's, at most (0.05 is five
    /// points).
    pub max_failed_rise: Option<f64>,
    /// Peak attempts over the server's capacity, at most.
    pub max_peak_load: Option<f64>,
    /// Share of replicas outlier detection may eject at once, at most.
    pub max_ejection_share: Option<f64>,
    /// Retries a second a budget allows whatever the traffic, at most.
    pub max_budget_floor_per_s: Option<f64>,
    /// Attempts at the last tier of the `--graph` chain per user request,
    /// at most.
    pub max_chain_attempts: Option<f64>,
}

impl Default for Limits {
    /// Three attempts per request (the Google SRE book, "Handling
    /// Overload": "a per-request retry budget of up to three attempts"),
    /// and recovery after every trial outage; no other limit.
    fn default() -> Self {
        Limits {
            max_attempts: Some(3.0),
            must_recover: true,
            max_failed_share: None,
            max_failed_rise: None,
            max_peak_load: None,
            max_ejection_share: None,
            max_budget_floor_per_s: None,
            max_chain_attempts: None,
        }
    }
}

/// Where a figure's value came from: a file and line, and the words of
/// the import that read it.
#[derive(Clone, Debug, PartialEq)]
pub struct Location {
    /// The file, as given.
    pub file: String,
    /// Its line, from 1.
    pub line: u32,
}

/// A figure's value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// The strategy has no such thing (no budget, no outlier detection), or
    /// the base revision had no such strategy.
    Absent,
    /// A number, in the figure's unit.
    Number(f64),
    /// A recovery that did not come within the run.
    Never,
}

/// How a figure's value is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// A count: "3", "unlimited" for infinity.
    Count,
    /// A share: "12.5%".
    Share,
    /// A ratio: "2.31x".
    Ratio,
    /// Seconds: "4.2 s", "never".
    Seconds,
    /// A rate: "10/s".
    PerSecond,
}

/// One figure of a strategy, before and after, and the limit it is held to.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    /// A short identifier, stable for machines: `attempts`,
    /// `trial.unavailable-2s.failed_share`.
    pub id: String,
    /// What it is, in words.
    pub what: String,
    /// How it is shown.
    pub unit: Unit,
    /// The base revision's value (`Absent` without a base).
    pub before: Value,
    /// This revision's.
    pub after: Value,
    /// The limit, in words ("at most 3"); `None` when there is none.
    pub limit: Option<String>,
    /// Whether `after` crosses the limit.
    pub crossed: bool,
    /// Where `after` came from, when a line of a file set it.
    pub source: Option<Location>,
    /// The words of that source (`istio.yaml:18 ...attempts = 5`), or
    /// the default or rule it follows.
    pub source_words: Option<String>,
}

/// What the change did to a strategy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// No base revision was given: judged as it is.
    Judged,
    /// Not in the base revision.
    New,
    /// In both, with different settings.
    Changed,
    /// In both, the same: shown, not judged.
    Unchanged,
    /// In the base revision only.
    Removed,
}

impl Status {
    /// The word a table shows.
    pub fn word(self) -> &'static str {
        match self {
            Status::Judged => "judged",
            Status::New => "new",
            Status::Changed => "changed",
            Status::Unchanged => "unchanged",
            Status::Removed => "removed",
        }
    }

    /// Whether its figures are held to the limits.
    pub fn judged(self) -> bool {
        matches!(self, Status::Judged | Status::New | Status::Changed)
    }
}

/// One strategy's check.
#[derive(Clone, Debug, PartialEq)]
pub struct StrategyCheck {
    /// The path given (a file or a folder) it was read from.
    pub path: String,
    /// Its name, as `sim import` names it.
    pub name: String,
    /// Its format, in words.
    pub format: &'static str,
    /// Where it starts: the first line a value of it came from.
    pub at: Option<Location>,
    /// What the change did to it.
    pub status: Status,
    /// Its figures.
    pub figures: Vec<Figure>,
}

/// A whole check.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckReport {
    /// The base revision, if one was given.
    pub base: Option<String>,
    /// The trial world, in words.
    pub world: String,
    /// The trials, in words.
    pub trials: Vec<String>,
    /// The seed of the trials.
    pub seed: u64,
    /// Each strategy, in the order of the paths and their files.
    pub strategies: Vec<StrategyCheck>,
    /// What the reader should know (a base file that could not be read).
    pub notes: Vec<String>,
}

impl CheckReport {
    /// The figures over their limits, with their strategies.
    pub fn crossed(&self) -> impl Iterator<Item = (&StrategyCheck, &Figure)> {
        self.strategies
            .iter()
            .flat_map(|s| s.figures.iter().filter(|f| f.crossed).map(move |f| (s, f)))
    }
}

/// The imports of one path, in this revision or the base one.
#[derive(Clone, Debug, Default)]
pub struct PathImports {
    /// The path as given.
    pub path: String,
    /// What its files gave (empty when the path does not exist there).
    pub imports: Vec<Imported>,
}

/// One strategy of one revision, with what it came from.
#[derive(Clone, Debug)]
struct Found<'a> {
    path: &'a str,
    import: &'a Imported,
    strategy: &'a crate::import::Strategy,
}

impl Found<'_> {
    /// Whether the files set its retry policy: a count of retries or of
    /// hedged copies. A DestinationRule alone or an Envoy cluster sets a
    /// budget and the server's ejection, not the policy, which then comes
    /// from the world: its attempts and trials would judge the world.
    fn sets_policy(&self) -> bool {
        self.strategy
            .entries
            .iter()
            .any(|e| matches!(e.key.as_str(), "max_retries" | "hedging"))
    }
}

/// Every strategy of `paths`, in order.
fn found(paths: &[PathImports]) -> Vec<Found<'_>> {
    paths
        .iter()
        .flat_map(|p| {
            p.imports.iter().flat_map(move |i| {
                i.strategies.iter().map(move |s| Found {
                    path: &p.path,
                    import: i,
                    strategy: s,
                })
            })
        })
        .collect()
}

/// Whether two strategies say the same, wherever their values were read
/// from (a line moved is no change).
fn same(a: &crate::import::Strategy, b: &crate::import::Strategy) -> bool {
    let values = |e: &[Entry]| -> Vec<(String, String)> {
        e.iter().map(|e| (e.key.clone(), e.value.clone())).collect()
    };
    values(&a.entries) == values(&b.entries) && values(&a.server) == values(&b.server)
}

/// The location `from` names, if it starts with `file:line`.
pub(crate) fn location(from: &str, files: &[&str]) -> Option<Location> {
    for file in files {
        let Some(rest) = from.strip_prefix(file).and_then(|r| r.strip_prefix(':')) else {
            continue;
        };
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if let Ok(line) = digits.parse::<u32>() {
            return Some(Location {
                file: (*file).to_owned(),
                line,
            });
        }
    }
    None
}

/// The files an import read: one, or a folder's (`dir (a, b)`).
fn files_of(import: &Imported) -> Vec<&str> {
    match import.file.split_once(" (") {
        Some((_, list)) if import.file.ends_with(')') => {
            list[..list.len() - 1].split(", ").collect()
        }
        _ => vec![import.file.as_str()],
    }
}

/// Pairs each strategy of this revision with the base's of the same path
/// and name; the base's alone are `Removed`.
fn pair<'a>(
    head: &'a [PathImports],
    base: Option<&'a [PathImports]>,
) -> Vec<(Status, Option<Found<'a>>, Option<Found<'a>>)> {
    let now = found(head);
    let Some(base) = base else {
        return now
            .into_iter()
            .map(|f| (Status::Judged, Some(f), None))
            .collect();
    };
    let then = found(base);
    let key = |f: &Found<'_>| (f.path.to_owned(), f.strategy.name.clone());
    let mut out = Vec::with_capacity(now.len());
    for f in &now {
        let earlier = then.iter().find(|b| key(b) == key(f)).cloned();
        let status = match &earlier {
            None => Status::New,
            Some(b) if same(b.strategy, f.strategy) => Status::Unchanged,
            Some(_) => Status::Changed,
        };
        out.push((status, Some(f.clone()), earlier));
    }
    for b in &then {
        if !now.iter().any(|f| key(f) == key(b)) {
            out.push((Status::Removed, None, Some(b.clone())));
        }
    }
    out
}

/// What `check` is given besides the files.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The limits.
    pub limits: Limits,
    /// The trials, in order.
    pub trials: Vec<Trial>,
    /// The trials' seed; the world's without it.
    pub seed: Option<u64>,
    /// The base revision's name, for the report.
    pub base: Option<String>,
    /// A call chain of the services read, the users' first.
    pub graph: Option<Vec<String>>,
}

/// Checks the strategies of `head` (and against `base`'s when given) in
/// `world`. Errors are bad input: a world that does not load, or the
/// imported strategies not valid in it.
pub fn check(
    head: &[PathImports],
    base: Option<&[PathImports]>,
    world: &World,
    settings: &Settings,
) -> Result<CheckReport, String> {
    let pairs = pair(head, base);
    if let Some(names) = &settings.graph {
        chain::tiers(&pairs, names)?;
    }
    let seed = settings.seed.unwrap_or(world.seed()?);
    // Each side's strategies as the simulator reads them, and their trials.
    let sims = trial::Runs::new(world, &pairs, settings, seed)?;
    let mut strategies = Vec::with_capacity(pairs.len());
    for (k, (status, now, then)) in pairs.iter().enumerate() {
        let shown = now.as_ref().or(then.as_ref()).expect("a pair has a side");
        let files = files_of(shown.import);
        let at = shown
            .strategy
            .entries
            .iter()
            .chain(&shown.strategy.server)
            .find_map(|e| location(&e.from, &files));
        let figures = figures::of(k, *status, now.as_ref(), then.as_ref(), &sims, settings);
        strategies.push(StrategyCheck {
            path: shown.path.to_owned(),
            name: shown.strategy.name.clone(),
            format: shown.import.format,
            at,
            status: *status,
            figures,
        });
    }
    if let Some(names) = &settings.graph {
        strategies.push(chain::check(&pairs, names, &sims, settings)?);
    }
    Ok(CheckReport {
        base: settings.base.clone(),
        world: world.words(),
        trials: settings.trials.iter().map(Trial::words).collect(),
        seed,
        strategies,
        notes: Vec::new(),
    })
}

#[cfg(test)]
mod tests;
