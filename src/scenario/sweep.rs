//! `[sweep]`: which keys vary, over which values, and the scenario at every point.
//!
//! A sweep is applied to the file as written. At each point the swept keys are
//! set in the TOML document, which is then validated like any scenario file. So
//! any numeric key a scenario has can be swept, with no list of sweepable
//! parameters to keep in step with the schema, and a value that makes the
//! scenario invalid is reported with the check it fails.

use toml_edit::{DocumentMut, Value};

use super::Scenario;
use super::duration::parse_duration;
use super::locate::{KeyPath, Seg};
use super::schema::{AxisFile, ScenarioFile, SweepFile};
use super::validate::Checker;
use crate::engine::SimDuration;
use crate::metrics::figures::{self, FIGURES};
use crate::model::WorldConfig;
use crate::retry::Strategy;

/// Most values on one axis.
pub const MAX_VALUES: usize = 10_000;
/// Most points in one sweep (each is a whole validated scenario).
pub const MAX_POINTS: u64 = 100_000;
/// Most runs in one sweep (points x strategies x replications).
pub const MAX_RUNS: u64 = 10_000_000;

/// A validated `[sweep]`: one or two axes, and the scenario at every point.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// The swept parameters: one, or two for a grid.
    pub axes: Vec<Axis>,
    /// Runs per (point, strategy).
    pub replications: u32,
    /// Every point, the first axis outermost.
    pub points: Vec<Point>,
    /// Charts to draw: an index into [`FIGURES`] and whether its axis is log.
    pub charts: Vec<(usize, bool)>,
    /// Strategies shown in `timeline.png`.
    pub timeline: Vec<String>,
    /// The point whose replication 0 keeps its timeline (index into `points`).
    pub timeline_point: usize,
}

/// One swept parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    /// The key path, as written in `parameter`.
    pub parameter: String,
    /// Its column in sweep outputs: the path, with `_s` when it is a duration.
    pub column: String,
    /// The values, in increasing order.
    pub values: Vec<AxisValue>,
}

/// One value of an axis.
#[derive(Clone, Debug, PartialEq)]
pub struct AxisValue {
    /// Position on a chart (seconds for durations).
    pub x: f64,
    /// As written in CSV files (seconds for durations).
    pub label: String,
    /// As written in messages and chart titles ("2s", "0.25").
    pub display: String,
}

/// One point of a sweep: a value on each axis, and what runs there.
#[derive(Clone, Debug)]
pub struct Point {
    /// Index of the value on each axis.
    pub coords: Vec<usize>,
    /// The world of each strategy, in file order.
    pub worlds: Vec<WorldConfig>,
    /// The strategies, in file order.
    pub strategies: Vec<Strategy>,
}

impl Sweep {
    /// Runs in the whole sweep.
    pub fn runs(&self) -> usize {
        self.points.len()
            * self.points.first().map_or(0, |p| p.strategies.len())
            * self.replications as usize
    }

    /// "clients.count = 100, outage[0].length = 2s" for a point.
    pub fn describe(&self, point: &Point) -> String {
        self.axes
            .iter()
            .zip(&point.coords)
            .map(|(a, &i)| format!("{} = {}", a.parameter, a.values[i].display))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Top-level keys a sweep may not set, and why.
const FIXED: [(&str, &str); 5] = [
    ("name", "the results folder is one for the whole sweep"),
    ("description", "it is text"),
    ("seed", "replications give each run its own seed"),
    ("metrics", "every point is measured the same way"),
    ("sweep", "a sweep cannot sweep itself"),
];

/// A number or a duration, as the sweep reads it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Number {
    Int(i64),
    Float(f64),
    Duration(SimDuration),
}

impl Number {
    pub(super) fn read(v: &toml::Value) -> Result<Number, String> {
        match v {
            toml::Value::Integer(i) => Ok(Number::Int(*i)),
            toml::Value::Float(f) if f.is_finite() => Ok(Number::Float(*f)),
            toml::Value::String(s) => parse_duration(s).map(Number::Duration),
            other => Err(format!(
                "sweep values are numbers or durations such as \"2s\", got {other}"
            )),
        }
    }

    pub(super) fn x(self) -> f64 {
        match self {
            Number::Int(i) => i as f64,
            Number::Float(f) => f,
            Number::Duration(d) => d.as_secs_f64(),
        }
    }

    pub(super) fn axis_value(self) -> AxisValue {
        let (label, display) = match self {
            Number::Int(i) => (i.to_string(), i.to_string()),
            Number::Float(f) => (f.to_string(), f.to_string()),
            Number::Duration(d) => (d.as_secs_f64().to_string(), d.to_string()),
        };
        AxisValue {
            x: self.x(),
            label,
            display,
        }
    }

    pub(super) fn toml(self) -> Value {
        match self {
            Number::Int(i) => Value::from(i),
            Number::Float(f) => Value::from(f),
            // Nanoseconds keep the value exact through the duration parser.
            Number::Duration(d) => Value::from(format!("{}ns", d.0)),
        }
    }
}

impl Checker<'_> {
    /// Validates `[sweep]` and builds the scenario at every point.
    pub(super) fn sweep(
        &self,
        s: &SweepFile,
        base: &Scenario,
    ) -> Result<Sweep, super::ScenarioError> {
        let key = KeyPath::key("sweep");
        let checked = self.axes(s, &key)?;
        let replications = s.replications.unwrap_or(1);
        self.ensure(replications >= 1, &key.join("replications"), || {
            "replications must be at least 1".into()
        })?;
        let points_n: u64 = checked
            .iter()
            .map(|(a, _, _)| a.values.len() as u64)
            .product();
        // Each point is a validated scenario held in memory while the sweep runs.
        self.ensure(points_n <= MAX_POINTS, &key, || {
            format!("{points_n} points is more than {MAX_POINTS}; use fewer values or shard several sweeps")
        })?;
        let runs = points_n * base.strategies.len() as u64 * u64::from(replications);
        self.ensure(runs <= MAX_RUNS, &key, || {
            format!("{runs} runs (points x strategies x replications) is more than {MAX_RUNS}")
        })?;

        let mut doc: DocumentMut = self.src.parse().map_err(|e: toml_edit::TomlError| {
            super::ScenarioError::file(self.file, e.message().to_string())
        })?;
        // Every point is the file without its [sweep]: removed once here, not
        // per point, so a long `values` list is not copied at every point
        // (that made validation quadratic in the number of values).
        doc.as_table_mut().remove("sweep");
        let mut points = Vec::with_capacity(points_n as usize);
        let sizes: Vec<usize> = checked.iter().map(|(a, _, _)| a.values.len()).collect();
        for flat in 0..points_n as usize {
            // The first axis is outermost: (x0, y0), (x0, y1), ..., (x1, y0), ...
            let mut coords = vec![0; sizes.len()];
            let mut rest = flat;
            for (c, n) in coords.iter_mut().zip(&sizes).rev() {
                *c = rest % n;
                rest /= n;
            }
            let sets: Vec<(&KeyPath, &Value)> = checked
                .iter()
                .zip(&coords)
                .map(|((_, path, values), &i)| (path, &values[i]))
                .collect();
            let at = checked
                .iter()
                .zip(&coords)
                .map(|((a, _, _), &i)| format!("{} = {}", a.parameter, a.values[i].display))
                .collect::<Vec<_>>()
                .join(", ");
            let scenario = self.point(&doc, &sets).map_err(|message| {
                super::ScenarioError::at_key(
                    self.file,
                    self.src,
                    &key.join("parameter"),
                    format!("at {at}: {message}"),
                )
            })?;
            points.push(Point {
                coords,
                worlds: (0..scenario.strategies.len())
                    .map(|k| scenario.world_for(k).into_owned())
                    .collect(),
                strategies: scenario.strategies,
            });
        }
        let axes: Vec<Axis> = checked.into_iter().map(|(a, _, _)| a).collect();
        let timeline_point = self.timeline_point(s, &axes, &sizes, &key)?;
        Ok(Sweep {
            axes,
            replications,
            points,
            charts: self.charts(s, &key)?,
            timeline: self.timeline(s, base, &key)?,
            timeline_point,
        })
    }

    /// The sweep's axes (the first, and `by`), each checked, and no
    /// parameter swept twice: each with the path it sets and its values.
    fn axes(
        &self,
        s: &SweepFile,
        key: &KeyPath,
    ) -> Result<Vec<(Axis, KeyPath, Vec<Value>)>, super::ScenarioError> {
        let mut axes = vec![(key.clone(), s.first_axis())];
        if let Some(by) = &s.by {
            axes.push((key.join("by"), by.clone()));
        }
        let mut checked: Vec<(Axis, KeyPath, Vec<Value>)> = Vec::new();
        for (axis_key, a) in &axes {
            let (axis, path, values) = self.axis(a, axis_key)?;
            if let Some((other, _, _)) = checked
                .iter()
                .find(|(o, _, _)| o.parameter == axis.parameter)
            {
                return self.err(
                    &axis_key.join("parameter"),
                    format!("{} is swept twice", other.parameter),
                );
            }
            checked.push((axis, path, values));
        }
        Ok(checked)
    }

    /// The point `timeline_at` names (one value per axis, or a lone value
    /// for one axis), else the last one.
    fn timeline_point(
        &self,
        s: &SweepFile,
        axes: &[Axis],
        sizes: &[usize],
        key: &KeyPath,
    ) -> Result<usize, super::ScenarioError> {
        let Some(at) = &s.timeline_at else {
            return Ok(sizes.iter().product::<usize>() - 1);
        };
        let key = key.join("timeline_at");
        let given: Vec<&toml::Value> = match at {
            toml::Value::Array(list) => list.iter().collect(),
            one => vec![one],
        };
        if given.len() != axes.len() {
            return self.err(
                &key,
                format!(
                    "give one value for each swept parameter ({}), got {}",
                    axes.len(),
                    given.len()
                ),
            );
        }
        let mut flat = 0;
        for ((v, axis), n) in given.into_iter().zip(axes).zip(sizes) {
            let x = Number::read(v).map(Number::x);
            let Some(i) = x.ok().and_then(|x| {
                axis.values
                    .iter()
                    .position(|a| (a.x - x).abs() <= 1e-12 * x.abs().max(1e-9))
            }) else {
                let listed: Vec<&str> = axis.values.iter().map(|a| a.display.as_str()).collect();
                return self.err(
                    &key,
                    format!(
                        "{v} is not one of the values of {}: {}",
                        axis.parameter,
                        listed.join(", ")
                    ),
                );
            };
            flat = flat * n + i;
        }
        Ok(flat)
    }

    /// One axis: its key path, and its values in order.
    pub(super) fn axis(
        &self,
        a: &AxisFile,
        key: &KeyPath,
    ) -> Result<(Axis, KeyPath, Vec<Value>), super::ScenarioError> {
        let pkey = key.join("parameter");
        let Some(path) = KeyPath::parse(&a.parameter) else {
            return self.err(
                &pkey,
                format!(
                    "\"{}\" is not a key path; write one as errors name keys: \
                     \"server.workers\", \"outage[0].length\", \"retry.cap\"",
                    a.parameter
                ),
            );
        };
        if let Some(Seg::Key(head)) = path.0.first() {
            if let Some((_, why)) = FIXED.iter().find(|(k, _)| k == head) {
                return self.err(&pkey, format!("`{head}` cannot be swept: {why}"));
            }
        }
        let read = |v: &toml::Value, k: &KeyPath| Number::read(v).or_else(|m| self.err(k, m));
        let numbers: Vec<Number> = match (&a.values, &a.from, &a.to, &a.step) {
            (Some(list), None, None, None) => {
                let key = key.join("values");
                let mut out = Vec::with_capacity(list.len());
                for v in list {
                    out.push(read(v, &key)?);
                }
                out
            }
            (None, Some(from), Some(to), Some(step)) => {
                let from = read(from, &key.join("from"))?;
                let to = read(to, &key.join("to"))?;
                let step = read(step, &key.join("step"))?;
                self.range(from, to, step, key)?
            }
            _ => {
                return self.err(
                    key,
                    "give either `values = [...]` or all of `from`, `to` and `step`",
                );
            }
        };
        let numbers = unify(numbers).or_else(|m| self.err(&key.join("values"), m))?;
        self.ensure(
            !numbers.is_empty() && numbers.len() <= MAX_VALUES,
            &key.join("values"),
            || {
                format!(
                    "an axis has from 1 to {MAX_VALUES} values, got {}",
                    numbers.len()
                )
            },
        )?;
        let increasing = numbers.windows(2).all(|w| w[0].x() < w[1].x());
        self.ensure(increasing, &key.join("values"), || {
            "sweep values must increase, each larger than the one before".into()
        })?;
        let duration = matches!(numbers[0], Number::Duration(_));
        let axis = Axis {
            parameter: a.parameter.clone(),
            column: if duration {
                format!("{}_s", a.parameter)
            } else {
                a.parameter.clone()
            },
            values: numbers.iter().map(|n| n.axis_value()).collect(),
        };
        Ok((axis, path, numbers.iter().map(|n| n.toml()).collect()))
    }

    fn range(
        &self,
        from: Number,
        to: Number,
        step: Number,
        key: &KeyPath,
    ) -> Result<Vec<Number>, super::ScenarioError> {
        let bad = |m: String| self.err(key, m);
        let (lo, hi, d) = (from.x(), to.x(), step.x());
        if !(d > 0.0 && lo <= hi) {
            return bad(format!(
                "need from <= to and step > 0, got from = {}, to = {}, step = {}",
                from.axis_value().display,
                to.axis_value().display,
                step.axis_value().display
            ));
        }
        let values = ((hi - lo) / d).floor() + 1.0;
        if values.is_nan() || values > MAX_VALUES as f64 {
            return bad(format!(
                "the range has {values} values, more than {MAX_VALUES}"
            ));
        }
        let count = values as u64;
        match (from, to, step) {
            // Bounded by `count` and checked, so no range of extreme values can
            // overflow or run on.
            (Number::Int(a), Number::Int(b), Number::Int(s)) => Ok((0..=count as i64)
                .map_while(|i| a.checked_add(i.checked_mul(s)?))
                .take_while(|v| *v <= b)
                .map(Number::Int)
                .collect()),
            (Number::Duration(a), Number::Duration(b), Number::Duration(s)) => Ok((0..=count)
                .map_while(|i| a.0.checked_add(i.checked_mul(s.0)?))
                .take_while(|v| *v <= b.0)
                .map(|ns| Number::Duration(SimDuration(ns)))
                .collect()),
            (Number::Duration(_), _, _)
            | (_, Number::Duration(_), _)
            | (_, _, Number::Duration(_)) => {
                bad("from, to and step must all be durations or all be numbers".into())
            }
            _ => {
                // from + i * step, rounded to 12 significant digits so that
                // 0.1 + 2 * 0.1 is written 0.3; `to` is kept if within rounding.
                let round = |v: f64| format!("{v:.11e}").parse::<f64>().unwrap_or(v);
                Ok((0..count + 1)
                    .map(|i| round(lo + i as f64 * d))
                    .take_while(|v| *v <= hi + d * 1e-9)
                    .map(Number::Float)
                    .collect())
            }
        }
    }

    /// The scenario at one point: `doc` (the file without its `[sweep]`) with
    /// the swept keys set, validated. Errors are messages for the caller to
    /// place.
    fn point(&self, doc: &DocumentMut, sets: &[(&KeyPath, &Value)]) -> Result<Scenario, String> {
        let mut doc = doc.clone();
        for (path, value) in sets {
            super::keys::set(&mut doc, path, value)
                .map_err(|m| format!("cannot set {path}: {m}"))?;
        }
        validate_doc(self.file, self.read_files, &doc)
    }

    fn charts(
        &self,
        s: &SweepFile,
        key: &KeyPath,
    ) -> Result<Vec<(usize, bool)>, super::ScenarioError> {
        let names: Vec<String> = match &s.charts {
            // "all": a chart of every figure.
            Some(list) if list.len() == 1 && list[0] == "all" => {
                FIGURES.iter().map(|f| f.name.to_string()).collect()
            }
            Some(list) => list.clone(),
            None => figures::DEFAULT_CHARTS
                .iter()
                .map(|n| n.to_string())
                .collect(),
        };
        let log = s.log_y.clone().unwrap_or_default();
        let valid = || {
            FIGURES
                .iter()
                .map(|f| f.name)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut out = Vec::new();
        for name in &names {
            let Some(i) = figures::index(name) else {
                return self.err(
                    &key.join("charts"),
                    format!(
                        "unknown figure \"{name}\"; valid: \"all\" alone, or {}",
                        valid()
                    ),
                );
            };
            out.push((i, log.contains(name)));
        }
        if let Some(extra) = log.iter().find(|n| !names.contains(n)) {
            return self.err(
                &key.join("log_y"),
                format!(
                    "\"{extra}\" is not one of `charts`; log_y picks charts drawn on a log axis"
                ),
            );
        }
        Ok(out)
    }

    fn timeline(
        &self,
        s: &SweepFile,
        base: &Scenario,
        key: &KeyPath,
    ) -> Result<Vec<String>, super::ScenarioError> {
        let names: Vec<String> = base.strategies.iter().map(|x| x.name.clone()).collect();
        let Some(pick) = &s.timeline else {
            return Ok(names);
        };
        if let Some(bad) = pick.iter().find(|p| !names.contains(p)) {
            return self.err(
                &key.join("timeline"),
                format!(
                    "no strategy is named \"{bad}\"; the strategies are {}",
                    names.join(", ")
                ),
            );
        }
        Ok(pick.clone())
    }
}

/// The scenario `doc` holds, validated as a file at `file` (whose sample
/// files are read beside it if `read_files`). Errors are messages for the
/// caller to place.
pub(super) fn validate_doc(
    file: &std::path::Path,
    read_files: bool,
    doc: &DocumentMut,
) -> Result<Scenario, String> {
    let text = doc.to_string();
    let parsed: ScenarioFile =
        toml::from_str(&text).map_err(|e| e.message().trim_end().to_string())?;
    let checker = if read_files {
        Checker::reading_files(file, &text)
    } else {
        Checker::new(file, &text)
    };
    checker.scenario(parsed).map_err(|e| match e.key {
        Some(k) => format!("key `{k}`: {}", e.message),
        None => e.message,
    })
}

/// One kind for a whole axis: integers mixed with floats become floats;
/// durations do not mix with numbers.
pub(super) fn unify(numbers: Vec<Number>) -> Result<Vec<Number>, String> {
    let durations = numbers
        .iter()
        .filter(|n| matches!(n, Number::Duration(_)))
        .count();
    if durations != 0 && durations != numbers.len() {
        return Err("the values must all be durations or all be numbers".into());
    }
    if numbers.iter().any(|n| matches!(n, Number::Float(_))) {
        return Ok(numbers.into_iter().map(|n| Number::Float(n.x())).collect());
    }
    Ok(numbers)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = include_str!("../../tests/fixtures/small.toml");

    fn with_sweep(sweep: &str) -> Result<Scenario, super::super::ScenarioError> {
        super::super::parse(&format!("{SMALL}\n{sweep}"), std::path::Path::new("s.toml"))
    }

    #[test]
    fn every_point_runs_the_world_with_the_swept_value() {
        let s = with_sweep("[sweep]\nparameter = \"server.workers\"\nfrom = 2\nto = 8\nstep = 3\n")
            .unwrap();
        let sweep = s.sweep.unwrap();
        let workers: Vec<u32> = sweep
            .points
            .iter()
            .map(|p| match &p.worlds[0].server {
                crate::model::ServerModel::Capacity(c) => c.workers,
                crate::model::ServerModel::Occ => 0,
            })
            .collect();
        assert_eq!(workers, [2, 5, 8]);
        assert_eq!(sweep.axes[0].column, "server.workers");
    }

    #[test]
    fn a_swept_retry_key_reaches_strategies_that_set_it_themselves() {
        let src = SMALL.replace(
            "name = \"full-jitter\"\nbackoff = \"full-jitter\"",
            "name = \"full-jitter\"\nbackoff = \"full-jitter\"\ncap = \"9s\"",
        );
        assert_ne!(src, SMALL);
        let text =
            format!("{src}\n[sweep]\nparameter = \"retry.cap\"\nvalues = [\"1s\", \"3s\"]\n");
        let s = super::super::parse(&text, std::path::Path::new("s.toml")).unwrap();
        let sweep = s.sweep.unwrap();
        for (p, want) in sweep.points.iter().zip([1, 3]) {
            for strategy in &p.strategies {
                assert_eq!(
                    strategy.backoff.cap,
                    SimDuration::from_secs(want),
                    "{}",
                    strategy.name
                );
            }
        }
        assert_eq!(sweep.axes[0].column, "retry.cap_s");
        assert_eq!(sweep.axes[0].values[1].label, "3");
    }

    #[test]
    fn too_many_points_are_refused_before_they_are_built() {
        let e = with_sweep(
            "[sweep]\nparameter = \"clients.count\"\nfrom = 1\nto = 1000\nstep = 1\n\
             [sweep.by]\nparameter = \"server.queue\"\nfrom = 1\nto = 1000\nstep = 1\n",
        )
        .unwrap_err();
        assert!(e.message.contains("1000000 points"), "{e}");
    }

    #[test]
    fn charts_all_draws_every_figure() {
        let s = with_sweep(
            "[sweep]\nparameter = \"clients.count\"\nvalues = [10, 20]\ncharts = [\"all\"]\n",
        )
        .unwrap();
        let charts = s.sweep.unwrap().charts;
        assert_eq!(charts.len(), FIGURES.len());
        assert!(charts.iter().enumerate().all(|(i, c)| *c == (i, false)));
    }

    #[test]
    fn extreme_ranges_are_refused_not_overflowed() {
        let big = i64::MAX;
        let e = with_sweep(&format!(
            "[sweep]\nparameter = \"clients.count\"\nfrom = {}\nto = {big}\nstep = 1\n",
            big - 1
        ))
        .unwrap_err();
        // Both ends are one f64; whatever the check that catches it, it is caught.
        assert!(e.key.is_some(), "{e}");
        let e = with_sweep(
            "[sweep]\nparameter = \"clients.count\"\nfrom = 1\nto = 1e300\nstep = 1e-300\n",
        )
        .unwrap_err();
        assert!(e.message.contains("more than"), "{e}");
    }

    #[test]
    fn float_ranges_are_written_without_rounding_noise() {
        let numbers = [Number::Float(0.1), Number::Float(0.3), Number::Float(0.1)];
        let path = std::path::Path::new("x.toml");
        let c = Checker::new(path, "");
        let v = c
            .range(numbers[0], numbers[1], numbers[2], &KeyPath::key("sweep"))
            .unwrap();
        let labels: Vec<String> = v.iter().map(|n| n.axis_value().label).collect();
        assert_eq!(labels, ["0.1", "0.2", "0.3"]);
    }
}
