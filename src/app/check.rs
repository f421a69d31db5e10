//! `sim check`: the files, their base revision (read from git, offline),
//! the limits from flags and a configuration file, and the verdict
//! (`crate::check` judges).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, Result};
use serde::Deserialize;

use super::InputError;
use crate::check::{self, Limits, PathImports, Settings, Trial, World};
use crate::cli::CheckArgs;
use crate::import;

/// Limits crossed: `sim check`'s verdict, exit 1 (not an error of the
/// tool: `main` prints its words and nothing else).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct LimitsCrossed(pub String);

/// The limits as flags or the configuration file give them: each may be
/// absent, to be taken from the next source.
#[derive(Debug, Default, Clone)]
struct GivenLimits {
    max_attempts: Option<f64>,
    must_recover: Option<bool>,
    max_failed_share: Option<f64>,
    max_failed_rise: Option<f64>,
    max_peak_load: Option<f64>,
    max_ejection_share: Option<f64>,
    max_budget_floor_per_s: Option<f64>,
    max_chain_attempts: Option<f64>,
}

/// The limits the flags give.
fn flag_limits(a: &CheckArgs) -> GivenLimits {
    GivenLimits {
        max_attempts: a.max_attempts,
        must_recover: a.must_recover,
        max_failed_share: a.max_failed_share,
        max_failed_rise: a.max_failed_rise,
        max_peak_load: a.max_peak_load,
        max_ejection_share: a.max_ejection_share,
        max_budget_floor_per_s: a.max_budget_floor_per_s,
        max_chain_attempts: a.max_chain_attempts,
    }
}

/// The configuration file: the limits, the trials, the seed and the world
/// (its keys spelled out, not flattened, so that serde can say the line of
/// a key it does not know).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    max_attempts: Option<f64>,
    must_recover: Option<bool>,
    max_failed_share: Option<f64>,
    max_failed_rise: Option<f64>,
    max_peak_load: Option<f64>,
    max_ejection_share: Option<f64>,
    max_budget_floor_per_s: Option<f64>,
    max_chain_attempts: Option<f64>,
    trials: Option<Vec<String>>,
    seed: Option<u64>,
    scenario: Option<PathBuf>,
    proxies: Option<u32>,
}

impl ConfigFile {
    /// Its limits.
    fn limits(&self) -> GivenLimits {
        GivenLimits {
            max_attempts: self.max_attempts,
            must_recover: self.must_recover,
            max_failed_share: self.max_failed_share,
            max_failed_rise: self.max_failed_rise,
            max_peak_load: self.max_peak_load,
            max_ejection_share: self.max_ejection_share,
            max_budget_floor_per_s: self.max_budget_floor_per_s,
            max_chain_attempts: self.max_chain_attempts,
        }
    }
}

/// The configuration file at `path`, or a message naming it, the line and
/// the key.
fn config_file(path: &Path) -> Result<ConfigFile> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError(format!("{}: cannot read it: {e}", path.display())))?;
    toml::from_str(&text).map_err(|e| {
        let line = e
            .span()
            .map(|s| format!(":{}", text[..s.start].matches('\n').count() + 1))
            .unwrap_or_default();
        InputError(format!(
            "{}{line}: {}; the keys are max_attempts, must_recover, max_failed_share, \
             max_failed_rise, max_peak_load, max_ejection_share, max_budget_floor_per_s, \
             max_chain_attempts, trials (a list of \"KIND:LENGTH\"), seed, scenario and proxies",
            path.display(),
            e.message()
        ))
        .into()
    })
}

/// The flags' limits over the file's over the defaults, checked.
fn limits(flags: &GivenLimits, file: &GivenLimits, source: &str) -> Result<Limits> {
    let d = Limits::default();
    let pick = |a: Option<f64>, b: Option<f64>| a.or(b);
    let l = Limits {
        max_attempts: pick(flags.max_attempts, file.max_attempts).or(d.max_attempts),
        must_recover: flags
            .must_recover
            .or(file.must_recover)
            .unwrap_or(d.must_recover),
        max_failed_share: pick(flags.max_failed_share, file.max_failed_share),
        max_failed_rise: pick(flags.max_failed_rise, file.max_failed_rise),
        max_peak_load: pick(flags.max_peak_load, file.max_peak_load),
        max_ejection_share: pick(flags.max_ejection_share, file.max_ejection_share),
        max_budget_floor_per_s: pick(flags.max_budget_floor_per_s, file.max_budget_floor_per_s),
        max_chain_attempts: pick(flags.max_chain_attempts, file.max_chain_attempts),
    };
    let checks: [(&str, Option<f64>, f64, f64); 7] = [
        ("max_attempts", l.max_attempts, 1.0, f64::MAX),
        ("max_failed_share", l.max_failed_share, 0.0, 1.0),
        ("max_failed_rise", l.max_failed_rise, 0.0, 1.0),
        ("max_peak_load", l.max_peak_load, 0.0, f64::MAX),
        ("max_ejection_share", l.max_ejection_share, 0.0, 1.0),
        (
            "max_budget_floor_per_s",
            l.max_budget_floor_per_s,
            0.0,
            f64::MAX,
        ),
        ("max_chain_attempts", l.max_chain_attempts, 1.0, f64::MAX),
    ];
    for (key, v, lo, hi) in checks {
        if let Some(v) = v
            && !(v.is_finite() && (lo..=hi).contains(&v))
        {
            let range = if hi == f64::MAX {
                format!("a number of at least {lo}")
            } else {
                format!("a number from {lo} to {hi}")
            };
            return Err(InputError(format!("{source}: {key} = {v}: give {range}")).into());
        }
    }
    Ok(l)
}

/// `sim check`.
pub(super) fn check(o: &CheckArgs) -> Result<()> {
    let format = match o.format.as_str() {
        f @ ("table" | "json" | "sarif") => f,
        f => {
            return Err(InputError(format!("--format {f}: give table, json or sarif")).into());
        }
    };
    let file = match &o.config {
        Some(p) => config_file(p)?,
        None => ConfigFile::default(),
    };
    let source = o.config.as_ref().map_or("the flags".to_owned(), |p| {
        format!("{} or the flags", p.display())
    });
    let limits = limits(&flag_limits(o), &file.limits(), &source)?;
    let trials = trials(o, &file)?;
    let world = world(o, &file)?;
    let head = o
        .paths
        .iter()
        .map(|p| {
            Ok(PathImports {
                path: p.display().to_string(),
                imports: import::import(p).map_err(|e| InputError(e.0))?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let mut notes = Vec::new();
    let base = match &o.base {
        Some(rev) => Some(
            o.paths
                .iter()
                .map(|p| base_imports(rev, p, &mut notes))
                .collect::<Result<Vec<_>>>()?,
        ),
        None => None,
    };
    let settings = Settings {
        limits,
        trials,
        seed: o.seed.or(file.seed),
        base: o.base.clone(),
        graph: o
            .graph
            .as_deref()
            .map(super::import::graph_names)
            .transpose()?,
    };
    let mut report = check::check(&head, base.as_deref(), &world, &settings).map_err(InputError)?;
    report.notes = notes;
    write_report(o, format, &report)
}

/// The trials from the flags, else the file, else the defaults.
fn trials(o: &CheckArgs, file: &ConfigFile) -> Result<Vec<Trial>> {
    let (given, source) = if o.trials.is_empty() {
        (file.trials.clone().unwrap_or_default(), o.config.as_ref())
    } else {
        (o.trials.clone(), None)
    };
    if given.is_empty() {
        return Ok(Trial::defaults());
    }
    given
        .iter()
        .map(|t| {
            Trial::parse(t).map_err(|e| {
                let from =
                    source.map_or("--trial".to_owned(), |p| format!("{}: trials", p.display()));
                InputError(format!("{from}: {e}")).into()
            })
        })
        .collect()
}

/// The trials' world: --scenario, else the file's `scenario` (relative to
/// the file), else the built-in one.
fn world(o: &CheckArgs, file: &ConfigFile) -> Result<World> {
    let path = match (&o.scenario, &file.scenario, &o.config) {
        (Some(p), _, _) => Some(p.clone()),
        (None, Some(p), Some(c)) => Some(c.parent().unwrap_or(Path::new(".")).join(p)),
        _ => None,
    };
    let proxies = o.proxies.or(file.proxies);
    let Some(path) = path else {
        return Ok(World {
            proxies,
            ..World::builtin()
        });
    };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| InputError(format!("{}: cannot read the scenario: {e}", path.display())))?;
    // Refused here, with its own messages, if it is not a valid scenario.
    crate::scenario::parse_file(&text, &path)?;
    Ok(World {
        text,
        file: Some(path.display().to_string()),
        proxies,
    })
}

/// Writes the report: `format` to --out (and the table to standard
/// output), or `format` to standard output; the verdict as the result.
fn write_report(o: &CheckArgs, format: &str, report: &check::CheckReport) -> Result<()> {
    let text = match format {
        "json" => check::render::json(report),
        "sarif" => {
            // Paths from the repository's top, as code hosts read them.
            let prefix = match git(Path::new("."), &["rev-parse", "--show-prefix"]) {
                Ok(Ok(bytes)) => String::from_utf8_lossy(&bytes).trim().to_owned(),
                _ => String::new(),
            };
            check::render::sarif(report, &prefix)
        }
        _ => check::render::table(report),
    };
    match &o.out {
        Some(out) => {
            super::write_file(out, text.as_bytes(), "--out")?;
            say!("{}", check::render::table(report).trim_end());
        }
        None => say!("{}", text.trim_end()),
    }
    if report.crossed().next().is_some() {
        return Err(LimitsCrossed(format!("sim check: {}", check::render::verdict(report))).into());
    }
    Ok(())
}

/// Runs git with `args` in `dir`: its standard output, or its error
/// message (the command could not run: an error of the tool).
fn git(dir: &Path, args: &[&str]) -> Result<std::result::Result<Vec<u8>, String>> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .context("cannot run git to read the base revision")?;
    if out.status.success() {
        Ok(Ok(out.stdout))
    } else {
        Ok(Err(String::from_utf8_lossy(&out.stderr).trim().to_owned()))
    }
}

/// Whether git's message says the path is not in the revision (rather
/// than that the revision or the repository is wrong).
fn not_in_revision(message: &str) -> bool {
    message.contains("does not exist in") || message.contains("exists on disk, but not in")
}

/// The imports of `path` in revision `rev`; empty when it is not there
/// (the change adds it), with a note when its files cannot be imported.
fn base_imports(rev: &str, path: &Path, notes: &mut Vec<String>) -> Result<PathImports> {
    let shown = path.display().to_string();
    let files = if path.is_dir() {
        base_folder(rev, path)?
    } else {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match git(dir, &["show", &format!("{rev}:./{name}")])? {
            Ok(bytes) => vec![(shown.clone(), String::from_utf8_lossy(&bytes).into_owned())],
            Err(e) if not_in_revision(&e) => Vec::new(),
            Err(e) => {
                return Err(InputError(format!("--base {rev}: {shown}: git says: {e}")).into());
            }
        }
    };
    let imported = match files.as_slice() {
        [] => Ok(Vec::new()),
        [(name, text)] if !path.is_dir() => import::import_text(name, text).map(|i| vec![i]),
        _ => import::import_folder(&shown, &files),
    };
    let imports = imported.unwrap_or_else(|e| {
        notes.push(format!(
            "the base revision's {shown} cannot be imported, so its strategies count as new: {e}"
        ));
        Vec::new()
    });
    Ok(PathImports {
        path: shown,
        imports,
    })
}

/// The configuration files of folder `dir` in revision `rev`, as
/// [`import::import`] would find them there, with their texts.
fn base_folder(rev: &str, dir: &Path) -> Result<Vec<(String, String)>> {
    let listed = match git(dir, &["ls-tree", "-r", "--name-only", rev, "--", "."])? {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) => {
            return Err(
                InputError(format!("--base {rev}: {}: git says: {e}", dir.display())).into(),
            );
        }
    };
    let mut names: Vec<PathBuf> = listed
        .lines()
        .map(PathBuf::from)
        .filter(|p| {
            // As on the disk: hidden folders are not entered.
            import::is_config_name(&p.display().to_string())
                && !p.parent().is_some_and(|d| {
                    d.components()
                        .any(|c| c.as_os_str().to_string_lossy().starts_with('.'))
                })
        })
        .collect();
    names.sort();
    let mut out = Vec::with_capacity(names.len());
    for rel in names {
        let spec = format!("{rev}:./{}", rel.display());
        let text = match git(dir, &["show", &spec])? {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) => {
                return Err(InputError(format!("--base {rev}: git says: {e}")).into());
            }
        };
        out.push((dir.join(&rel).display().to_string(), text));
    }
    Ok(out)
}
