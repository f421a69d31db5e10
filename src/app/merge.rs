//! `sim merge`: shard folders combined into the output of the unsharded run,
//! byte for byte; the shards are checked whole first and never deleted.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Result;

use super::sweep_run::{About, print_sweep, write_sweep};
use super::tip_run::{print_tip, write_tip};
use super::{InputError, MergeOptions};
use crate::output::Staging;
use crate::output::shard;
use crate::scenario;
use crate::sweep;

/// `sim merge`: combines shard folders into the output of the unsharded run.
pub(super) fn merge(opts: &MergeOptions) -> Result<()> {
    let started = Instant::now();
    let Some(first_dir) = opts.dirs.first() else {
        return Err(InputError("no shard folders given".into()).into());
    };
    let columns = shard_columns(first_dir);
    let mut shards = Vec::with_capacity(opts.dirs.len());
    for dir in &opts.dirs {
        shards.push(shard::read(dir, &columns).map_err(|e| InputError(e.to_string()))?);
    }
    let first = &shards[0];
    let source = PathBuf::from(&first.manifest.source);
    let mut s = scenario::parse_file(&first.scenario_text, &source)?;
    s.seed = first.manifest.seed;
    let total = match (&s.sweep, &s.tip) {
        (Some(sweep), _) => sweep.runs(),
        (None, Some(t)) => t.searches(),
        (None, None) => {
            return Err(InputError(format!(
                "{}: the scenario has no [sweep] or [tip]",
                source.display()
            ))
            .into());
        }
    };
    let (manifest, text, cells) =
        shard::combine(shards, total).map_err(|e| InputError(e.to_string()))?;
    let out = opts
        .out
        .clone()
        .unwrap_or_else(|| Path::new("results").join(&s.name));
    let inputs: Vec<&Path> = opts.dirs.iter().map(PathBuf::as_path).collect();
    super::run::check_output(&out, &inputs, &source, &manifest.fingerprint, opts.force)?;
    let staging = Staging::new(&out)?;
    let shown = write_merged(&s, cells, &text, &source, staging.dir(), opts.plots)?;
    let quoted = |v: &str| toml::Value::String(v.to_string()).to_string();
    let files = staging.commit(&format!(
        "# What made this folder; written last, so a folder without it is incomplete.\n\
         sim_version = {}\nscenario = {}\nscenario_file = {}\nscenario_fingerprint = {}\n\
         merged_shards = {}\nseed = {}\ncharts = {}\n",
        quoted(env!("CARGO_PKG_VERSION")),
        quoted(&s.name),
        quoted(&manifest.source),
        quoted(&manifest.fingerprint),
        manifest.shards,
        s.seed,
        opts.plots
    ))?;
    if !opts.quiet {
        say!(
            "scenario {} ({}), seed {}: merged {} shards",
            s.name,
            source.display(),
            s.seed,
            manifest.shards
        );
        // Nothing was simulated here: the shards did it, at their own speed.
        match &shown {
            Shown::Sweep(report) => print_sweep(report, None, started.elapsed()),
            Shown::Tip(report) => print_tip(report, None, started.elapsed()),
        }
        super::say_written(&out, &files);
    }
    Ok(())
}

/// Writes the merged results of `s` from its shards' `cells` into `dir`.
fn write_merged(
    s: &scenario::Scenario,
    cells: Vec<shard::Cell>,
    text: &str,
    source: &Path,
    dir: &Path,
    plots: bool,
) -> Result<Shown> {
    Ok(match (&s.tip, &s.sweep) {
        (Some(t), _) => {
            let searches = searches(cells)?;
            let report = crate::tip::aggregate(s, t, searches);
            write_tip(&report, dir, plots)?;
            Shown::Tip(Box::new(report))
        }
        (None, Some(sweep)) => {
            let results: Vec<_> = cells.into_iter().map(sweep::from_shard).collect();
            let report = sweep::aggregate(s, sweep, &results);
            let source_text = source.display().to_string();
            let about = About {
                description: &s.description,
                scenario_file: &source_text,
                scenario_text: text,
            };
            write_sweep(&report, dir, plots, &about)?;
            Shown::Sweep(Box::new(report))
        }
        (None, None) => {
            return Err(InputError(format!(
                "{}: the scenario has no [sweep] or [tip]",
                source.display()
            ))
            .into());
        }
    })
}

/// The columns of the shards' cells: a sweep's figures or a search's
/// outcomes, by the first shard's scenario. (A shard that cannot be read
/// this way is refused by `shard::read`.)
fn shard_columns(first_dir: &Path) -> Vec<&'static str> {
    let file = first_dir.join("scenario.toml");
    let tip = std::fs::read_to_string(&file)
        .ok()
        .and_then(|text| scenario::parse_file(&text, &file).ok())
        .is_some_and(|s| s.tip.is_some());
    if tip {
        crate::tip::SHARD_COLUMNS.to_vec()
    } else {
        sweep::shard_columns()
    }
}

/// The searches in a tipping search's shards' cells.
fn searches(cells: Vec<shard::Cell>) -> Result<Vec<crate::tip::Search>> {
    let mut out = Vec::with_capacity(cells.len());
    for c in cells {
        let search = crate::tip::Search::from_values(&c.values).ok_or_else(|| {
            InputError(format!(
                "search {} in the shards is not a search's outcome: a shard was edited",
                c.index
            ))
        })?;
        out.push(search);
    }
    Ok(out)
}

/// What a merge made, for its table.
enum Shown {
    Sweep(Box<sweep::SweepReport>),
    Tip(Box<crate::tip::TipReport>),
}
