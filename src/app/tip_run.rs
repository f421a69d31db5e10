//! `sim run` of a tipping-point search (all of it, or one shard), and its
//! files and table, which `sim merge` writes too.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};

use super::{InputError, print_speed, progress_bar_of};
use crate::export::tip_csv;
use crate::output::shard;
use crate::output::write_atomic;
use crate::plot;
use crate::scenario::tip::Tip;
use crate::tip::{self, Status, TipReport};

/// `sim run` of a scenario with a `[tip]`: every search, or with `--shard`
/// the shard's searches written as partial results for `sim merge`.
pub(super) fn run_tip(job: &super::run::Job, t: &Tip, out: &Path) -> Result<()> {
    let (opts, s) = (job.opts, job.scenario());
    let total = t.searches();
    let searches: Vec<usize> = match opts.shard {
        Some(spec) => spec.cells(total),
        None => (0..total).collect(),
    };
    if !opts.quiet && opts.shard.is_none() {
        say!("{}", describe(t));
    }
    let simulated = Instant::now();
    let bar = progress_bar_of(opts.quiet, "searches");
    let on_search = |done: usize, total: usize| {
        if let Some(bar) = &bar {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        }
    };
    let results = tip::run_searches(s, t, &searches, &on_search);
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let results = results.map_err(|e| {
        let (level, k, rep) = tip::locate(t, e.index);
        let at = t
            .over
            .as_ref()
            .map(|a| format!("{} = {}, ", a.parameter, a.values[level].display))
            .unwrap_or_default();
        InputError(format!(
            "{}: {at}strategy \"{}\", replication {rep}: {}",
            opts.scenario.display(),
            t.strategies[k],
            e.message
        ))
    })?;
    let sim_wall = simulated.elapsed();
    if let Some(spec) = opts.shard {
        return write_shard(job, spec, &searches, &results, out, sim_wall);
    }
    let report = tip::aggregate(s, t, results);
    write_tip(&report, out, opts.plots)?;
    if !opts.quiet {
        say!(
            "\nscenario {} ({}), seed {}",
            s.name,
            opts.scenario.display(),
            s.seed
        );
        print_tip(&report, Some(sim_wall), job.started.elapsed());
    }
    Ok(())
}

/// Writes shard `spec`'s searches (`searches`, their `results`) into `out` as
/// partial results for `sim merge`.
fn write_shard(
    job: &super::run::Job,
    spec: shard::ShardSpec,
    searches: &[usize],
    results: &[tip::Search],
    out: &Path,
    sim_wall: std::time::Duration,
) -> Result<()> {
    let (opts, s) = (job.opts, job.scenario());
    let total = s.tip.as_ref().map_or(0, Tip::searches);
    let manifest = job.shard_manifest(spec, total);
    let cells: Vec<shard::Cell> = searches
        .iter()
        .zip(results)
        .map(|(&index, r)| shard::Cell {
            index,
            values: r.to_values(),
            timeline: None,
        })
        .collect();
    let files = shard::files(&manifest, job.text, &tip::SHARD_COLUMNS, &cells)
        .map_err(anyhow::Error::msg)?;
    for (name, bytes) in files {
        write_atomic(out, name, &bytes)?;
    }
    if !opts.quiet {
        say!(
            "scenario {} ({}), seed {}: shard {} of {}, {} of {total} searches",
            s.name,
            opts.scenario.display(),
            s.seed,
            spec.index,
            spec.count,
            searches.len()
        );
        print_speed(events(results), sim_wall, job.started.elapsed());
    }
    Ok(())
}

fn events(results: &[tip::Search]) -> u64 {
    results.iter().map(|r| r.events).sum()
}

/// What the search will do, before it starts.
fn describe(t: &Tip) -> String {
    let levels = t.levels.len();
    let steps = ((t.to - t.from) / t.resolution).log2().ceil().max(0.0) as usize;
    format!(
        "tipping-point search of {} from {} to {} (to within {}): {} level{} x {} \
         strategies x {} replications = {} searches, each at most {} runs",
        t.parameter,
        t.display(t.from),
        t.display(t.to),
        t.display(t.resolution),
        levels,
        if levels == 1 { "" } else { "s" },
        t.strategies.len(),
        t.replications,
        t.searches(),
        steps + 2
    )
}

/// Writes a search's CSV files and chart into `out`.
pub(super) fn write_tip(report: &TipReport, out: &Path, plots: bool) -> Result<Vec<PathBuf>> {
    let mut written = vec![
        write_atomic(out, "tip.csv", &tip_csv::boundaries(report)?)?,
        write_atomic(out, "searches.csv", &tip_csv::searches(report)?)?,
    ];
    if plots {
        let bytes = plot::tip::render(report).context("cannot draw tip.png")?;
        written.push(write_atomic(out, "tip.png", &bytes)?);
    }
    Ok(written)
}

/// The boundaries on stdout.
pub(super) fn print_tip(
    report: &TipReport,
    sim_wall: Option<std::time::Duration>,
    wall: std::time::Duration,
) {
    let t = &report.tip;
    let confidence = report.rows.first().map_or(0.0, |b| b.confidence);
    say!(
        "the largest {} each strategy recovers from: the median of {} searches, and its \
         {:.0}% interval\n",
        t.parameter,
        t.replications,
        confidence * 100.0
    );
    let over = t.over.as_ref().map_or("", |a| a.parameter.as_str());
    let at_width = t
        .over
        .as_ref()
        .map_or(0, |a| {
            a.values.iter().map(|v| v.display.len()).max().unwrap_or(0)
        })
        .max(over.len());
    let width = t
        .strategies
        .iter()
        .map(String::len)
        .max()
        .unwrap_or(8)
        .max(8);
    say!(
        "{over:>at_width$}  {:>10}  {:width$}  {:>12}  interval",
        "load/cap",
        "strategy",
        "boundary"
    );
    for b in &report.rows {
        let at = t
            .over
            .as_ref()
            .map_or(String::new(), |a| a.values[b.level].display.clone());
        let load = t.levels[b.level]
            .load_ratio
            .map_or("-".to_string(), |v| format!("{v:.3}"));
        let shown = match (b.status, b.median) {
            (Status::Found, Some(v)) => t.display(round3(v)),
            (Status::Below, _) => format!("< {}", t.display(t.mildest().min(t.worst()))),
            (Status::Beyond, _) => format!("> {}", t.display(t.mildest().max(t.worst()))),
            _ => "overloaded".to_string(),
        };
        let end = |v: Option<f64>, none: &str| v.map_or(none.to_string(), |v| t.display(round3(v)));
        let interval = if b.status == Status::Overloaded {
            "without any trigger".to_string()
        } else {
            format!("{} to {}", end(b.low, "-inf"), end(b.high, "inf"))
        };
        say!(
            "{at:>at_width$}  {load:>10}  {:width$}  {shown:>12}  {interval}",
            b.strategy
        );
    }
    let runs: u64 = report.rows.iter().map(|b| b.probes).sum();
    say!("\n{runs} runs");
    match sim_wall {
        Some(sim_wall) => print_speed(report.events, sim_wall, wall),
        None => say!(
            "\n{} events simulated by the shards; merged in {:.3} s",
            report.events,
            wall.as_secs_f64()
        ),
    }
}

/// `v` to three significant digits, for the table.
fn round3(v: f64) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let scale = 10f64.powi(2 - v.abs().log10().floor() as i32);
    (v * scale).round() / scale
}
