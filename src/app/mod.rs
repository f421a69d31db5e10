//! The application: load -> validate -> run strategies in parallel -> export -> plot.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use rayon::prelude::*;

use crate::cli::{Cli, Command};
use crate::export::csv_exporters;
use crate::metrics::{Report, StrategyReport};
use crate::model;
use crate::output::write_atomic;
use crate::plot;
use crate::scenario::{self, Scenario};
use crate::sweep::shard::ShardSpec;

/// `println!` that does not panic when stdout is closed early (`sim run ... |
/// head`): the report on stdout is a courtesy, the results are the files.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

mod delays;
mod sweep_run;

use sweep_run::{merge, run_sweep};

/// What `sim run` is asked to do, free of clap.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The scenario file.
    pub scenario: PathBuf,
    /// Output folder; default `results/<name>`.
    pub out: Option<PathBuf>,
    /// Seed override.
    pub seed: Option<u64>,
    /// Skip the charts.
    pub plots: bool,
    /// Print nothing on success.
    pub quiet: bool,
    /// Run only this shard of a sweep's cells.
    pub shard: Option<ShardSpec>,
}

/// What `sim merge` is asked to do.
#[derive(Debug, Clone)]
pub struct MergeOptions {
    /// The shard folders.
    pub dirs: Vec<PathBuf>,
    /// Output folder; default `results/<name>`.
    pub out: Option<PathBuf>,
    /// Draw the charts.
    pub plots: bool,
    /// Print nothing on success.
    pub quiet: bool,
}

/// Runs the command line.
pub fn main(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Run {
            scenario,
            out,
            seed,
            no_plots,
            quiet,
            shard,
        } => run(&RunOptions {
            scenario,
            out,
            seed,
            plots: !no_plots,
            quiet,
            shard: shard
                .map(|t| ShardSpec::parse(&t))
                .transpose()
                .map_err(InputError)?,
        }),
        Command::Merge {
            dirs,
            out,
            no_plots,
            quiet,
        } => merge(&MergeOptions {
            dirs,
            out,
            plots: !no_plots,
            quiet,
        }),
        Command::Validate { scenario } => validate(&scenario),
        Command::Delays {
            what,
            scenario,
            base,
            cap,
            multiplier,
            first_exponent,
            retries,
            samples,
            seed,
            plot,
        } => delays::delays(&delays::DelaysOptions {
            what,
            scenario,
            base,
            cap,
            multiplier,
            first_exponent,
            retries,
            samples,
            seed,
            plot,
        }),
        Command::Presets => delays::presets(),
    }
}

/// Bad command-line input that clap cannot check (a duration, a kind). Exit 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InputError(pub String);

/// `sim validate`.
fn validate(path: &Path) -> Result<()> {
    let s = scenario::load(path)?;
    say!(
        "{}: ok: scenario \"{}\", {} strategies, {} outages, {} simulated",
        path.display(),
        s.name,
        s.strategies.len(),
        s.world.outages.len(),
        s.world.duration
    );
    if let Some(sw) = &s.sweep {
        let axes: Vec<String> = sw
            .axes
            .iter()
            .map(|a| format!("{} ({} values)", a.parameter, a.values.len()))
            .collect();
        say!(
            "  sweep of {}: {} points, {} replications, {} runs",
            axes.join(" by "),
            sw.points.len(),
            sw.replications,
            sw.runs()
        );
    }
    Ok(())
}

/// Simulates every strategy of `s`, in parallel, results in file order.
pub fn simulate(s: &Scenario) -> Report {
    let capacity = s.world.server.capacity_per_s();
    let outages: Vec<_> = s.world.outages.iter().map(|o| (o.start, o.end)).collect();
    let runs = s
        .strategies
        .par_iter()
        .enumerate()
        .map(|(i, strategy)| {
            let m = model::run_measured(&s.world_for(i), strategy, s.seed, &s.metrics);
            StrategyReport {
                name: strategy.name.clone(),
                summary: m.summary,
                buckets: m.run.buckets,
                twin: m.twin,
                twin_events: m.twin_events,
            }
        })
        .collect();
    Report {
        scenario: s.name.clone(),
        seed: s.seed,
        capacity_per_s: capacity,
        outages,
        metrics: s.metrics.clone(),
        duration_s: s.world.duration.as_secs_f64(),
        runs,
    }
}

/// Where `sim run` writes: `--out`, or `results/<name>`, and for a shard its
/// `shard-I-of-N` folder inside.
pub(super) fn output_folder(opts: &RunOptions, s: &Scenario) -> PathBuf {
    let base = opts
        .out
        .clone()
        .unwrap_or_else(|| Path::new("results").join(&s.name));
    match opts.shard {
        Some(spec) => base.join(spec.folder()),
        None => base,
    }
}

/// `sim run`.
pub fn run(opts: &RunOptions) -> Result<()> {
    let started = Instant::now();
    let mut s = scenario::load(&opts.scenario)?;
    if let Some(seed) = opts.seed {
        s.seed = seed;
    }
    if opts.shard.is_some() && s.sweep.is_none() {
        return Err(InputError(format!(
            "{}: --shard splits the runs of a [sweep], and this scenario has none",
            opts.scenario.display()
        ))
        .into());
    }
    if let (Some(spec), Some(sweep)) = (opts.shard, &s.sweep) {
        let runs = sweep.runs();
        if spec.count as usize > runs {
            return Err(InputError(format!(
                "{}: --shard {}/{} asks for {} shards, but the sweep has {runs} runs: \
                 at most {runs} shards, each with at least one run",
                opts.scenario.display(),
                spec.index,
                spec.count,
                spec.count
            ))
            .into());
        }
    }
    let out = output_folder(opts, &s);
    // Fail on an unusable output folder before the long work.
    std::fs::create_dir_all(&out)
        .with_context(|| format!("cannot create the output folder {}", out.display()))?;

    if let Some(sweep) = s.sweep.clone() {
        return run_sweep(opts, &s, &sweep, started);
    }
    let simulated = Instant::now();
    let report = simulate(&s);
    let sim_wall = simulated.elapsed();

    let mut written = Vec::new();
    for exporter in csv_exporters() {
        let bytes = exporter.serialize(&report)?;
        written.push(write_atomic(&out, exporter.file_name(), &bytes)?);
    }
    if opts.plots {
        let charts = plot::charts(&report);
        let images: Vec<_> = charts.par_iter().map(|c| (c.render)(&report)).collect();
        for (chart, image) in charts.iter().zip(images) {
            let bytes = image.with_context(|| format!("cannot draw {}", chart.file_name))?;
            written.push(write_atomic(&out, chart.file_name, &bytes)?);
        }
    }
    if !opts.quiet {
        print_summary(opts, &s, &report, &written, sim_wall, started.elapsed());
    }
    Ok(())
}

/// A progress bar on stderr (runs done, elapsed, estimate), only when stderr is
/// a terminal and output is not `--quiet`: pipes and CI logs stay clean.
pub(super) fn progress_bar(quiet: bool) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if quiet || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(0);
    let style = indicatif::ProgressStyle::with_template(
        "{bar:40} {pos}/{len} runs, {elapsed} elapsed, about {eta} left",
    )
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    bar.set_style(style);
    Some(bar)
}

pub(super) fn print_speed(events: u64, sim_wall: std::time::Duration, wall: std::time::Duration) {
    say!(
        "\n{events} events simulated in {:.3} s ({:.1} million events/s over {} threads); total wall time {:.3} s",
        sim_wall.as_secs_f64(),
        events as f64 / sim_wall.as_secs_f64().max(1e-9) / 1e6,
        rayon::current_num_threads(),
        wall.as_secs_f64()
    );
}

fn print_summary(
    opts: &RunOptions,
    s: &Scenario,
    report: &Report,
    written: &[PathBuf],
    sim_wall: std::time::Duration,
    wall: std::time::Duration,
) {
    say!(
        "scenario {} ({}), seed {}",
        s.name,
        opts.scenario.display(),
        s.seed
    );
    if !s.description.is_empty() {
        say!("  {}", s.description);
    }
    let capacity = report
        .capacity_per_s
        .map_or("unlimited".to_string(), |c| format!("{c:.0} req/s"));
    say!(
        "capacity {capacity}, {} simulated per strategy\n",
        s.world.duration
    );
    let width = report
        .runs
        .iter()
        .map(|r| r.name.len())
        .max()
        .unwrap_or(8)
        .max(8);
    say!(
        "{:width$}  {:>9} {:>8} {:>6} {:>10} {:>8} {:>9} {:>7} {:>7} {:>8} {:>8}",
        "strategy",
        "requests",
        "failed",
        "ampl",
        "peak/s",
        "peak/cap",
        "recovery",
        "lost",
        "extra",
        "p50",
        "p99"
    );
    let secs = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}s"));
    for r in &report.runs {
        let m = &r.summary;
        say!(
            "{:width$}  {:>9} {:>8} {:>6.3} {:>10.0} {:>8} {:>9} {:>7} {:>7} {:>8} {:>8}",
            r.name,
            m.logical_requests,
            m.failed,
            m.amplification,
            m.peak_attempts_per_s,
            m.peak_load_ratio
                .map_or("-".to_string(), |r| format!("{r:.2}")),
            match (m.recovery_time_s, report.outages.is_empty()) {
                (_, true) => "-".to_string(),
                (None, false) => "never".to_string(),
                (Some(v), false) => format!("{v:.1}s"),
            },
            m.lost_requests.map_or("-".to_string(), |v| v.to_string()),
            m.extra_attempts.map_or("-".to_string(), |v| v.to_string()),
            secs(m.latency_p50_s),
            secs(m.latency_p99_s),
        );
    }
    let events: u64 = report
        .runs
        .iter()
        .map(|r| r.summary.totals.events + r.twin_events)
        .sum();
    print_speed(events, sim_wall, wall);
    for path in written {
        say!("wrote {}", path.display());
    }
}
