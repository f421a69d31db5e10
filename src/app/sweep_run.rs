//! `sim run` of a sweep (all of it, or one shard), and the sweep's files and
//! table, which `sim merge` writes too.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use rayon::prelude::*;

use super::{InputError, print_speed, progress_bar};
use crate::export::sweep_csv;
use crate::metrics::figures::{Estimate, FIGURES, Stat};
use crate::output::shard;
use crate::output::write_atomic;
use crate::plot;
use crate::scenario::Sweep;
use crate::sweep::{self, SweepReport};

/// `sim run` of a scenario with a `[sweep]`: every cell, or with `--shard` the
/// shard's cells written as partial results for `sim merge`.
pub(super) fn run_sweep(job: &super::run::Job, sweep: &Sweep, out: &Path) -> Result<()> {
    let (opts, s, started) = (job.opts, job.scenario(), job.started);
    let total = sweep.runs();
    let cells: Vec<usize> = match opts.shard {
        Some(spec) => spec.cells(total),
        None => (0..total).collect(),
    };
    if !opts.quiet && opts.shard.is_none() {
        super::say_cost(&job.plan);
    }
    let simulated = Instant::now();
    let bar = progress_bar(opts.quiet);
    let on_cell = |done: usize, total: usize| {
        if let Some(bar) = &bar {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        }
    };
    let results = sweep::run_cells(s, sweep, &cells, &on_cell);
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    if let Some((cell, why)) = cells
        .iter()
        .zip(&results)
        .find_map(|(&cell, r)| r.aborted.map(|a| (cell, a)))
    {
        let (point, k, rep) = sweep::locate(sweep, cell);
        return Err(InputError(format!(
            "{}: at {}, strategy \"{}\", replication {rep}: {why}",
            opts.scenario.display(),
            sweep.describe(&sweep.points[point]),
            s.strategies[k].name
        ))
        .into());
    }
    let sim_wall = simulated.elapsed();
    let text = job.text;
    if let Some(spec) = opts.shard {
        return write_shard(job, spec, &cells, &results, out, sim_wall);
    }
    let report = sweep::aggregate(s, sweep, &results);
    let source = opts.scenario.display().to_string();
    let about = About {
        description: &s.description,
        scenario_file: &source,
        scenario_text: text,
    };
    write_sweep(&report, out, opts.plots, &about)?;
    if !opts.quiet {
        say!(
            "scenario {} ({}), seed {}",
            s.name,
            opts.scenario.display(),
            s.seed
        );
        print_sweep(&report, Some(sim_wall), started.elapsed());
    }
    Ok(())
}

/// Writes shard `spec`'s runs (`cells`, their `results`) into `out` as
/// partial results for `sim merge`.
fn write_shard(
    job: &super::run::Job,
    spec: shard::ShardSpec,
    cells: &[usize],
    results: &[sweep::CellResult],
    out: &Path,
    sim_wall: std::time::Duration,
) -> Result<()> {
    let (opts, s, text) = (job.opts, job.scenario(), job.text);
    let total = s.sweep.as_ref().map_or(0, Sweep::runs);
    let manifest = job.shard_manifest(spec, total);
    let files = shard::files(
        &manifest,
        text,
        &sweep::shard_columns(),
        &sweep::to_shard(cells, results),
    )
    .map_err(anyhow::Error::msg)?;
    for (name, bytes) in files {
        write_atomic(out, name, &bytes)?;
    }
    if !opts.quiet {
        say!(
            "scenario {} ({}), seed {}: shard {} of {}, {} of {total} runs",
            s.name,
            opts.scenario.display(),
            s.seed,
            spec.index,
            spec.count,
            cells.len()
        );
        print_speed(sweep::events(results), sim_wall, job.started.elapsed());
    }
    Ok(())
}

/// What a sweep's page says about where it came from.
pub(super) struct About<'a> {
    pub(super) description: &'a str,
    pub(super) scenario_file: &'a str,
    pub(super) scenario_text: &'a str,
}

/// Writes a sweep's CSV files, `report.html` and charts into `out`.
pub(super) fn write_sweep(
    report: &SweepReport,
    out: &Path,
    plots: bool,
    about: &About,
) -> Result<Vec<PathBuf>> {
    let summary = sweep_csv::summary(report)?;
    let timeline = sweep_csv::timeline(report)?;
    let page = crate::export::html::sweep_page(&crate::export::html::SweepPage {
        description: about.description,
        scenario_file: about.scenario_file,
        scenario_text: about.scenario_text,
        report,
        summary_csv: &summary,
        timeline_csv: &timeline,
    });
    let mut written = vec![
        write_atomic(out, "summary.csv", &summary)?,
        write_atomic(out, "timeline.csv", &timeline)?,
        write_atomic(out, crate::export::html::FILE_NAME, page.as_bytes())?,
    ];
    if !plots {
        return Ok(written);
    }
    let grid = report.sweep.axes.len() == 2;
    let mut charts: Vec<(String, Option<(usize, bool)>)> = report
        .sweep
        .charts
        .iter()
        .map(|&(f, log)| (format!("{}.png", FIGURES[f].name), Some((f, log))))
        .collect();
    charts.push(("timeline.png".to_string(), None));
    let images: Vec<_> = charts
        .par_iter()
        .map(|(_, chart)| match *chart {
            Some((f, log)) if grid => plot::sweep::render_heatmap(report, f, log),
            Some((f, log)) => plot::sweep::render_figure(report, f, log),
            None => plot::sweep::render_timeline(report),
        })
        .collect();
    for ((name, _), image) in charts.iter().zip(images) {
        let bytes = image.with_context(|| format!("cannot draw {name}"))?;
        written.push(write_atomic(out, name, &bytes)?);
    }
    Ok(written)
}

/// The sweep's table on stdout: the points, and per strategy the mean of the
/// first two charted figures with their 95% half-widths.
pub(super) fn print_sweep(
    report: &SweepReport,
    sim_wall: Option<std::time::Duration>,
    wall: std::time::Duration,
) {
    let sw = &report.sweep;
    let axes: Vec<&str> = sw.axes.iter().map(|a| a.parameter.as_str()).collect();
    let strategies = sw.points.first().map_or(0, |p| p.strategies.len());
    say!(
        "sweep of {} over {} points, {} runs each, {strategies} strategies: {} runs\n",
        axes.join(" and "),
        sw.points.len(),
        sw.replications,
        sw.runs()
    );
    let shown: Vec<usize> = sw.charts.iter().map(|c| c.0).take(2).collect();
    let width = report
        .rows
        .iter()
        .map(|r| r.strategy.len())
        .max()
        .unwrap_or(8)
        .max(8);
    let at_width = sw
        .points
        .iter()
        .map(|p| point_label(sw, p).len())
        .max()
        .unwrap_or(5)
        .max(5);
    let mut header = format!("{:>at_width$}  {:width$}", "point", "strategy");
    for &f in &shown {
        // What the second column is depends on the figure's statistic.
        let second = match FIGURES[f].stat {
            Stat::Mean => "+-95%",
            Stat::Median => "max",
            Stat::Share => "95% interval",
        };
        header.push_str(&format!(" {:>14} {:>13}", FIGURES[f].name, second));
    }
    say!("{header}");
    let show = |v: Option<f64>| match v {
        Some(v) if v.is_infinite() => "never".to_string(),
        Some(v) => format!("{v:.3}"),
        None => "-".to_string(),
    };
    for row in &report.rows {
        let mut line = format!(
            "{:>at_width$}  {:width$}",
            point_label(sw, &sw.points[row.point]),
            row.strategy
        );
        for &f in &shown {
            let second = match row.stats[f] {
                Estimate::Mean { ci95, .. } => show(ci95),
                Estimate::Median { max, .. } => show(max),
                Estimate::Share { low, high, .. } => match (low, high) {
                    (Some(l), Some(h)) => format!("{l:.2} to {h:.2}"),
                    _ => "-".to_string(),
                },
            };
            line.push_str(&format!(
                " {:>14} {:>13}",
                show(row.stats[f].value()),
                second
            ));
        }
        say!("{line}");
    }
    match sim_wall {
        Some(sim_wall) => print_speed(report.events, sim_wall, wall),
        None => say!(
            "\n{} events simulated by the shards; merged in {:.3} s",
            report.events,
            wall.as_secs_f64()
        ),
    }
}

/// A point's values, "100" or "100, 2s".
fn point_label(sw: &Sweep, p: &crate::scenario::Point) -> String {
    sw.axes
        .iter()
        .zip(&p.coords)
        .map(|(a, &i)| a.values[i].display.clone())
        .collect::<Vec<_>>()
        .join(", ")
}
