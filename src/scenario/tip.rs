//! `[tip]`: a tipping-point search. Which trigger key is searched, over what
//! range and to what resolution, at which levels (`[tip.over]`, a sweep's
//! axis: a load, a trigger's size), and the scenario at any probe.
//!
//! As in a sweep, the scenario at a probe is the file as written with the
//! keys set and validated again: any numeric key of a trigger can be
//! searched, and a value that makes the scenario invalid is reported with
//! the check it fails.

use std::path::{Path, PathBuf};

use toml_edit::{DocumentMut, Value};

use super::Scenario;
use super::locate::{KeyPath, Seg};
use super::schema::TipFile;
use super::sweep::{Axis, Number, unify, validate_doc};
use super::validate::Checker;
use crate::engine::SimDuration;

/// Most replications of one search.
pub const MAX_REPLICATIONS: u32 = 1000;
/// Most searches in all (levels x strategies x replications).
pub const MAX_SEARCHES: u64 = 1_000_000;

/// A validated `[tip]`.
#[derive(Clone, Debug)]
pub struct Tip {
    /// The key searched, as written (`outage[0].length`).
    pub parameter: String,
    /// Whether its values are durations (seconds in every output).
    pub duration: bool,
    /// Whether its values are whole numbers.
    pub integer: bool,
    /// The mildest value searched (seconds for a duration).
    pub from: f64,
    /// The worst value searched.
    pub to: f64,
    /// Each search stops once its bracket is this narrow.
    pub resolution: f64,
    /// Larger values are the worse triggers (else smaller ones are).
    pub larger_is_worse: bool,
    /// Searches per (level, strategy).
    pub replications: u32,
    /// Every probe of a replication, at every level, draws the same random
    /// numbers (common random numbers); else each probe its own.
    pub common_seeds: bool,
    /// Time given to recover after the trigger's end.
    pub after: SimDuration,
    /// The levels' key and values, if any.
    pub over: Option<Axis>,
    /// One per value of `over` (one if there is none).
    pub levels: Vec<Level>,
    /// The strategies' names, in file order.
    pub strategies: Vec<String>,
    path: KeyPath,
    file: PathBuf,
    read_files: bool,
}

/// One level of a search: the file with `over`'s key set.
#[derive(Clone, Debug)]
pub struct Level {
    /// Offered load over capacity at this level (first strategy's world),
    /// where the server has a capacity.
    pub load_ratio: Option<f64>,
    /// Simulated length of every probe at this level: the worst trigger's
    /// end plus `after`, at least the file's own.
    pub duration: SimDuration,
    doc: DocumentMut,
}

impl Tip {
    /// Searches in all: levels x strategies x replications.
    pub fn searches(&self) -> usize {
        self.levels.len() * self.strategies.len() * self.replications as usize
    }

    /// The worst and the mildest value searched.
    pub fn worst(&self) -> f64 {
        if self.larger_is_worse {
            self.to
        } else {
            self.from
        }
    }

    /// The mildest value searched.
    pub fn mildest(&self) -> f64 {
        if self.larger_is_worse {
            self.from
        } else {
            self.to
        }
    }

    /// A value of the searched key as messages write it: "2.5s", "0.2".
    pub fn display(&self, x: f64) -> String {
        if self.duration {
            SimDuration::from_nanos_f64(x * 1e9).to_string()
        } else {
            format!("{x}")
        }
    }

    /// The column of the searched key in outputs: `outage[0].length_s`.
    pub fn column(&self) -> String {
        if self.duration {
            format!("{}_s", self.parameter)
        } else {
            self.parameter.clone()
        }
    }

    /// The probe midway between `a` and `b` (whole for an integer key,
    /// whole nanoseconds for a duration).
    pub fn midpoint(&self, a: f64, b: f64) -> f64 {
        let mid = a + (b - a) / 2.0;
        if self.integer {
            mid.floor()
        } else if self.duration {
            (mid * 1e9).round() / 1e9
        } else {
            mid
        }
    }

    /// Whether a bracket `[a, b]` is as narrow as the search goes.
    pub fn narrow(&self, a: f64, b: f64) -> bool {
        let width = (b - a).abs();
        width <= self.resolution || (self.integer && width <= 1.0) || self.midpoint(a, b) == a
    }

    /// The scenario at `level` with the searched key at `x`: validated, its
    /// duration the level's.
    pub fn at(&self, level: usize, x: f64) -> Result<Scenario, String> {
        let mut doc = self.levels[level].doc.clone();
        super::keys::set(&mut doc, &self.path, &self.value(x))
            .map_err(|m| format!("cannot set {}: {m}", self.parameter))?;
        validate_doc(&self.file, self.read_files, &doc)
            .map_err(|m| format!("at {} = {}: {m}", self.parameter, self.display(x)))
    }

    /// `x` as a TOML value of the searched key.
    fn value(&self, x: f64) -> Value {
        if self.duration {
            Value::from(format!("{}ns", (x * 1e9).round() as u64))
        } else if self.integer {
            Value::from(x.round() as i64)
        } else {
            Value::from(x)
        }
    }
}

/// The outage fields a search may vary.
const SEARCHABLE: [&str; 6] = ["length", "end", "start", "factor", "rate", "p"];

impl Checker<'_> {
    /// Validates `[tip]` and builds its levels.
    pub(super) fn tip(&self, t: &TipFile, base: &Scenario) -> Result<Tip, super::ScenarioError> {
        let key = KeyPath::key("tip");
        if base.sweep.is_some() {
            return self.err(
                &key,
                "a scenario has a [sweep] or a [tip], not both: a tipping-point search \
                 already runs every strategy at every level of [tip.over]",
            );
        }
        let (path, field) = self.searched(&t.search, base, &key)?;
        let (numbers, from, to, resolution) = self.tip_range(t, &key)?;
        let (larger_is_worse, common_seeds, replications) = self.tip_choices(t, &key)?;
        let after = self.tip_after(t, base, &key)?;
        let over = match &t.over {
            Some(a) => {
                let axis_key = key.join("over");
                let (axis, over_path, values) = self.axis(a, &axis_key)?;
                if over_path == path {
                    return self.err(
                        &axis_key.join("parameter"),
                        format!("{} is the key searched; [tip.over] sets another", t.search),
                    );
                }
                Some((axis, over_path, values))
            }
            None => None,
        };
        let levels_n = over.as_ref().map_or(1, |(a, _, _)| a.values.len());
        let searches = levels_n as u64 * base.strategies.len() as u64 * u64::from(replications);
        self.ensure(searches <= MAX_SEARCHES, &key, || {
            format!("{searches} searches (levels x strategies x replications) is more than {MAX_SEARCHES}")
        })?;
        let integer = matches!(numbers[0], Number::Int(_));
        let mut tip = Tip {
            parameter: t.search.clone(),
            duration: matches!(numbers[0], Number::Duration(_)),
            integer,
            from,
            to,
            resolution,
            larger_is_worse,
            replications,
            common_seeds,
            after,
            over: None,
            levels: Vec::with_capacity(levels_n),
            strategies: base.strategies.iter().map(|s| s.name.clone()).collect(),
            path,
            file: self.file.to_path_buf(),
            read_files: self.read_files,
        };
        let doc = self.tip_doc(&tip.path, field)?;
        for i in 0..levels_n {
            let mut doc = doc.clone();
            let mut at = String::new();
            if let Some((axis, over_path, values)) = &over {
                super::keys::set(&mut doc, over_path, &values[i]).or_else(|m| {
                    self.err(
                        &key.join("over").join("parameter"),
                        format!("cannot set it: {m}"),
                    )
                })?;
                at = format!("at {} = {}, ", axis.parameter, axis.values[i].display);
            }
            let level = self
                .level(&tip, doc)
                .or_else(|m| self.err(&key, format!("{at}{m}")))?;
            tip.levels.push(level);
        }
        tip.over = over.map(|(a, _, _)| a);
        Ok(tip)
    }

    /// `from`, `to` and `resolution`, of one kind, checked: the numbers as
    /// read, and their values.
    fn tip_range(
        &self,
        t: &TipFile,
        key: &KeyPath,
    ) -> Result<(Vec<Number>, f64, f64, f64), super::ScenarioError> {
        let read =
            |v: &toml::Value, name: &str| Number::read(v).or_else(|m| self.err(&key.join(name), m));
        let numbers = vec![
            read(&t.from, "from")?,
            read(&t.to, "to")?,
            read(&t.resolution, "resolution")?,
        ];
        let numbers =
            unify(numbers).or_else(|m| self.err(key, format!("from, to and resolution: {m}")))?;
        let (from, to, resolution) = (numbers[0].x(), numbers[1].x(), numbers[2].x());
        self.ensure(from < to, &key.join("to"), || {
        format!("`to` must be above `from` (the search runs from the one to the other); got from = {}, to = {}",
            numbers[0].axis_value().display, numbers[1].axis_value().display)
    })?;
        self.ensure(resolution > 0.0, &key.join("resolution"), || {
            "resolution must be above zero".into()
        })?;
        Ok((numbers, from, to, resolution))
    }

    /// `worse`, `seeds` and `replications`, checked.
    fn tip_choices(
        &self,
        t: &TipFile,
        key: &KeyPath,
    ) -> Result<(bool, bool, u32), super::ScenarioError> {
        let larger_is_worse = match t.worse.as_deref() {
            None | Some("larger") => true,
            Some("smaller") => false,
            Some(other) => {
                return self.err(
                    &key.join("worse"),
                    format!(
                        "\"{other}\" is not a direction; valid: \"larger\" (a longer or \
                     bigger trigger is worse) or \"smaller\" (a brownout's factor)"
                    ),
                );
            }
        };
        let common_seeds = match t.seeds.as_deref() {
            None | Some("common") => true,
            Some("independent") => false,
            Some(other) => {
                return self.err(
                    &key.join("seeds"),
                    format!("\"{other}\" is not a choice; valid: \"common\" or \"independent\""),
                );
            }
        };
        let replications = t.replications.unwrap_or(5);
        self.ensure(
            (1..=MAX_REPLICATIONS).contains(&replications),
            &key.join("replications"),
            || format!("replications must be from 1 to {MAX_REPLICATIONS}"),
        )?;
        Ok((larger_is_worse, common_seeds, replications))
    }

    /// `after`, or the file's own time after its trigger.
    fn tip_after(
        &self,
        t: &TipFile,
        base: &Scenario,
        key: &KeyPath,
    ) -> Result<SimDuration, super::ScenarioError> {
        let after = match &t.after {
            Some(a) => a.0,
            None => {
                let end = base.world.trigger_windows().iter().map(|w| w.1).max();
                let left = end.map_or(0, |e| base.world.duration.0.saturating_sub(e.0));
                if left == 0 {
                    return self.err(
                        key,
                        "the file's run ends with its trigger, leaving no time to recover: \
                     set `after`, the time each probe runs after the trigger's end",
                    );
                }
                SimDuration(left)
            }
        };
        self.ensure(after.0 > 0, &key.join("after"), || {
            "after must be above zero: a world needs time to recover".into()
        })?;
        Ok(after)
    }

    /// The searched key's path, checked: a numeric field of one of the
    /// file's triggers. Also the field's name.
    fn searched(
        &self,
        search: &str,
        base: &Scenario,
        key: &KeyPath,
    ) -> Result<(KeyPath, String), super::ScenarioError> {
        let skey = key.join("search");
        let outages = base.world.outages.len();
        let help = || {
            if outages == 0 {
                "the scenario has no trigger to search: add an [[outage]] (a tipping point is \
                 the largest trigger the world recovers from)"
                    .to_string()
            } else {
                format!(
                    "search a field of a trigger: outage[N].{} with N from 0 to {}",
                    SEARCHABLE.join(", outage[N]."),
                    outages - 1
                )
            }
        };
        let Some(path) = KeyPath::parse(search) else {
            return self.err(&skey, format!("\"{search}\" is not a key path; {}", help()));
        };
        match path.0.as_slice() {
            [Seg::Key(o), Seg::Index(i), Seg::Key(f)]
                if o == "outage" && *i < outages && SEARCHABLE.contains(&f.as_str()) =>
            {
                Ok((path.clone(), f.clone()))
            }
            _ => self.err(
                &skey,
                format!("\"{search}\" cannot be searched; {}", help()),
            ),
        }
    }

    /// The file without its `[tip]`, with the searched trigger written so
    /// that its key can be set: a searched `length` replaces the trigger's
    /// `end`, and a searched `end` its `length`.
    fn tip_doc(&self, path: &KeyPath, field: String) -> Result<DocumentMut, super::ScenarioError> {
        let mut doc: DocumentMut = self.src.parse().map_err(|e: toml_edit::TomlError| {
            super::ScenarioError::file(self.file, e.message().to_string())
        })?;
        doc.as_table_mut().remove("tip");
        let other = match field.as_str() {
            "length" => Some("end"),
            "end" => Some("length"),
            _ => None,
        };
        if let (Some(other), [_, Seg::Index(i), _]) = (other, path.0.as_slice()) {
            if let Some(t) = doc
                .get_mut("outage")
                .and_then(|o| o.as_array_of_tables_mut())
                .and_then(|a| a.get_mut(*i))
            {
                t.remove(other);
            }
        }
        Ok(doc)
    }

    /// A level: its duration (the worst trigger's end plus `after`), its
    /// load, and the scenario valid at both ends of the range.
    fn level(&self, tip: &Tip, mut doc: DocumentMut) -> Result<Level, String> {
        let worst = {
            let probe = Level {
                load_ratio: None,
                duration: SimDuration(0),
                doc: doc.clone(),
            };
            let view = Tip {
                levels: vec![probe],
                ..tip.clone()
            };
            view.at(0, tip.worst())?
        };
        let end = worst
            .world
            .trigger_windows()
            .iter()
            .map(|w| w.1.0)
            .max()
            .unwrap_or(0);
        let duration = SimDuration(worst.world.duration.0.max(end.saturating_add(tip.after.0)));
        doc["duration"] = toml_edit::value(format!("{}ns", duration.0));
        let level = Level {
            load_ratio: None,
            duration,
            doc,
        };
        let view = Tip {
            levels: vec![level.clone()],
            ..tip.clone()
        };
        let mildest = view.at(0, tip.mildest())?;
        view.at(0, tip.worst())?;
        let w = mildest.world_for(0);
        let load_ratio = w
            .capacity_per_s()
            .filter(|c| *c > 0.0)
            .map(|c| w.nominal_requests_per_s() / c);
        Ok(Level {
            load_ratio,
            ..level
        })
    }
}

impl Tip {
    /// The file the scenario was read from (for messages).
    pub fn file(&self) -> &Path {
        &self.file
    }
}
