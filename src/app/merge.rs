//! `sim merge`: shard folders combined into the output of the unsharded run,
//! byte for byte; the shards are checked whole first and never deleted.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Result;

use super::sweep_run::{About, print_sweep, write_sweep};
use super::{InputError, MergeOptions};
use crate::output::Staging;
use crate::scenario;
use crate::sweep::{self, shard};

/// `sim merge`: combines shard folders into the output of the unsharded run.
pub(super) fn merge(opts: &MergeOptions) -> Result<()> {
    let started = Instant::now();
    let mut shards = Vec::with_capacity(opts.dirs.len());
    for dir in &opts.dirs {
        shards.push(shard::read(dir).map_err(|e| InputError(e.to_string()))?);
    }
    let Some(first) = shards.first() else {
        return Err(InputError("no shard folders given".into()).into());
    };
    let source = PathBuf::from(&first.manifest.source);
    let mut s = scenario::parse_file(&first.scenario_text, &source)?;
    s.seed = first.manifest.seed;
    let Some(sweep) = s.sweep.clone() else {
        return Err(
            InputError(format!("{}: the scenario has no [sweep]", source.display())).into(),
        );
    };
    let (manifest, text, results) =
        shard::combine(shards, sweep.runs()).map_err(|e| InputError(e.to_string()))?;
    let out = opts
        .out
        .clone()
        .unwrap_or_else(|| Path::new("results").join(&s.name));
    let inputs: Vec<&Path> = opts.dirs.iter().map(PathBuf::as_path).collect();
    super::run::check_output(&out, &inputs, &source, &manifest.fingerprint, opts.force)?;
    let staging = Staging::new(&out)?;
    let report = sweep::aggregate(&s, &sweep, &results);
    let source_text = source.display().to_string();
    let about = About {
        description: &s.description,
        scenario_file: &source_text,
        scenario_text: &text,
    };
    write_sweep(&report, staging.dir(), opts.plots, &about)?;
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
        print_sweep(&report, None, started.elapsed());
        super::say_written(&out, &files);
    }
    Ok(())
}
