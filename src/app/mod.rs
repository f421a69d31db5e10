//! The application: load -> validate -> run strategies in parallel -> export -> plot.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use rayon::prelude::*;

use crate::cli::{Cli, Command};
use crate::export::csv_exporters;
use crate::metrics::{Report, StrategyReport};
use crate::model;
use crate::output::{Staging, write_atomic};
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
mod memory;
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
    /// Replace an output folder that is not a results folder of this
    /// scenario file.
    pub force: bool,
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
    /// Replace an output folder that is not a results folder of this
    /// scenario.
    pub force: bool,
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
            force,
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
            force,
        }),
        Command::Merge {
            dirs,
            out,
            no_plots,
            quiet,
            force,
        } => merge(&MergeOptions {
            dirs,
            out,
            plots: !no_plots,
            quiet,
            force,
        }),
        Command::Validate { scenario } => validate(&scenario),
        Command::Serve { port } => crate::serve::serve(port),
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
            after,
            retry_after,
            samples_csv,
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
            after,
            retry_after,
            samples_csv,
        }),
        Command::Presets { toml } => {
            if toml {
                delays::presets_toml()
            } else {
                delays::presets()
            }
        }
        Command::Completions { shell } => {
            use clap::CommandFactory;
            let mut cmd = Cli::command();
            clap_complete::generate(shell, &mut cmd, "sim", &mut std::io::stdout());
            Ok(())
        }
        Command::Man => {
            use clap::CommandFactory;
            let mut page = Vec::new();
            clap_mangen::Man::new(Cli::command()).render(&mut page)?;
            use std::io::Write as _;
            std::io::stdout()
                .write_all(&page)
                .context("cannot write the manual page")?;
            Ok(())
        }
    }
}

/// Bad command-line input that clap cannot check (a duration, a kind). Exit 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InputError(pub String);

/// A latency in three significant digits: "17.2ms", "1.45s".
fn latency(seconds: f64) -> String {
    let (v, unit) = if seconds < 1.0 {
        (seconds * 1e3, "ms")
    } else {
        (seconds, "s")
    };
    let decimals = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.decimals$}{unit}")
}

/// `text` in lines of at most `width` characters, broken at spaces.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// "1 outage", "2 outages".
pub(super) fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `sim validate`.
fn validate(path: &Path) -> Result<()> {
    let s = scenario::load(path)?;
    say!(
        "{}: ok: scenario \"{}\", {}, {}, {} simulated",
        path.display(),
        s.name,
        plural(s.strategies.len(), "strategy", "strategies"),
        plural(s.world.outages.len(), "outage", "outages"),
        s.world.duration
    );
    for note in scenario::retry_after_notes(&s) {
        say!("  note: {note}");
    }
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
                aborted: m.aborted.map(|a| a.to_string()),
            }
        })
        .collect();
    Report {
        scenario: s.name.clone(),
        seed: s.seed,
        capacity_per_s: capacity,
        crash_limit: s.world.server.crash_limit(),
        outages,
        metrics: s.metrics.clone(),
        duration_s: s.world.duration.as_secs_f64(),
        runs,
    }
}

/// Where `sim run` writes: `--out`, or `results/<name>`, and for a shard its
/// `shard-I-of-N` folder inside `--out` or `results/<name>-shards` (apart from
/// `results/<name>`, which the merge writes).
pub(super) fn output_folder(opts: &RunOptions, s: &Scenario) -> PathBuf {
    match (opts.shard, &opts.out) {
        (Some(spec), Some(out)) => out.join(spec.folder()),
        (Some(spec), None) => Path::new("results")
            .join(format!("{}-shards", s.name))
            .join(spec.folder()),
        (None, Some(out)) => out.clone(),
        (None, None) => Path::new("results").join(&s.name),
    }
}

/// Refuses to replace `out` when that would lose something: see
/// [`crate::output::check_target`], and a results folder made from another
/// scenario file than `scenario` (unless `force`), which is how an edited copy
/// named like a shipped scenario would silently replace its committed results.
pub(super) fn check_output(
    out: &Path,
    inputs: &[&Path],
    scenario: &Path,
    fingerprint: &str,
    force: bool,
) -> Result<()> {
    crate::output::check_target(out, inputs, force).map_err(InputError)?;
    if force {
        return Ok(());
    }
    let Ok(text) = std::fs::read_to_string(out.join("manifest.toml")) else {
        return Ok(());
    };
    let Ok(manifest) = text.parse::<toml::Table>() else {
        return Ok(());
    };
    let field = |k: &str| manifest.get(k).and_then(|v| v.as_str()).map(str::to_string);
    let (Some(file), Some(print)) = (field("scenario_file"), field("scenario_fingerprint")) else {
        return Ok(());
    };
    if print == fingerprint || same_file(Path::new(&file), scenario) {
        return Ok(());
    }
    Err(InputError(format!(
        "{} holds the results of {file}, another scenario file of the same name: this run \
         of {} would replace them. Give this scenario its own name = \"...\" or --out \
         FOLDER, or add --force to replace them",
        out.display(),
        scenario.display()
    ))
    .into())
}

/// Whether two paths name the same file: the same file on disk, or, when the
/// first cannot be found from here (it was recorded on another machine or
/// from another directory), the same file name.
fn same_file(recorded: &Path, current: &Path) -> bool {
    match (recorded.canonicalize(), current.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => recorded.file_name() == current.file_name(),
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
    check_memory(opts, &s)?;
    let out = output_folder(opts, &s);
    let text = std::fs::read_to_string(&opts.scenario)
        .with_context(|| format!("cannot read {}", opts.scenario.display()))?;
    check_output(
        &out,
        &[&opts.scenario],
        &opts.scenario,
        &crate::sweep::shard::fingerprint(&text),
        opts.force,
    )?;
    // Built in a staging folder beside the target (which also fails fast on an
    // unusable output folder) and moved into place whole when complete.
    let staging = Staging::new(&out)?;
    run_into(opts, &s, staging.dir(), started)?;
    let files = staging.commit(&run_manifest(opts, &s)?)?;
    if !opts.quiet {
        say_written(&out, &files);
    }
    Ok(())
}

/// The manifest of a run's folder: what made it, so a folder can be told from
/// another run's and checked against its scenario.
fn run_manifest(opts: &RunOptions, s: &Scenario) -> Result<String> {
    let text = std::fs::read_to_string(&opts.scenario)
        .with_context(|| format!("cannot read {}", opts.scenario.display()))?;
    let quoted = |v: &str| toml::Value::String(v.to_string()).to_string();
    let mut m = format!(
        "# What made this folder; written last, so a folder without it is incomplete.\n\
         sim_version = {}\nscenario = {}\nscenario_file = {}\nscenario_fingerprint = {}\n\
         seed = {}\ncharts = {}\n",
        quoted(env!("CARGO_PKG_VERSION")),
        quoted(&s.name),
        quoted(&opts.scenario.display().to_string()),
        quoted(&crate::sweep::shard::fingerprint(&text)),
        s.seed,
        opts.plots,
    );
    if let Some(spec) = opts.shard {
        m.push_str(&format!(
            "shard = {}\n",
            quoted(&format!("{}/{}", spec.index, spec.count))
        ));
    }
    Ok(m)
}

/// Warns on stderr when two strategies came out identical, figure for figure
/// and bucket for bucket, and says why when a Retry-After is the likely cause.
fn warn_identical(s: &Scenario, report: &Report) {
    let notes = scenario::retry_after_notes(s);
    for (i, a) in report.runs.iter().enumerate() {
        for b in &report.runs[i + 1..] {
            if a.summary == b.summary && a.buckets == b.buckets {
                eprintln!(
                    "warning: strategies \"{}\" and \"{}\" gave identical results{}",
                    a.name,
                    b.name,
                    if notes.is_empty() {
                        String::new()
                    } else {
                        format!("; {}", notes.join("; "))
                    }
                );
            }
        }
    }
}

/// "wrote DIR/FILE" for each file of a committed folder.
pub(super) fn say_written(out: &Path, files: &[String]) {
    for f in files {
        say!("wrote {}", out.join(f).display());
    }
}

/// Events a logical request costs, roughly: a start, two hops, a service, an
/// answer and a stale timeout, plus think times and retries.
const EVENTS_PER_REQUEST: f64 = 7.0;
/// Above this many estimated events, `sim run` says what it is about to do.
const BIG_RUN_EVENTS: f64 = 5e8;

/// Events a run of every strategy of `s` will simulate, roughly, twins
/// included (a twin has no load spike, but is counted at the same cost: an
/// estimate that errs high): what `sim run` warns about and `sim serve` bounds.
pub fn estimated_events(s: &Scenario) -> f64 {
    let twins = if s.world.outages.is_empty() { 1.0 } else { 2.0 };
    (0..s.strategies.len())
        .map(|i| {
            let w = s.world_for(i);
            w.expected_requests() * EVENTS_PER_REQUEST * twins
        })
        .sum()
}

/// Prints, on stderr, an estimate of a large single run's cost before it starts.
fn say_cost(s: &Scenario) {
    let twins = if s.world.outages.is_empty() { 1.0 } else { 2.0 };
    let events = estimated_events(s);
    if events > BIG_RUN_EVENTS {
        let threads = rayon::current_num_threads().min(s.strategies.len()).max(1) as f64;
        eprintln!(
            "about {:.1} billion events ({}{}): at 10 to 18 million events/s on each of \
             {}, {:.0} s to {:.0} s",
            events / 1e9,
            plural(s.strategies.len(), "strategy", "strategies"),
            if twins > 1.0 {
                ", each with its twin"
            } else {
                ""
            },
            plural(threads as usize, "thread", "threads"),
            events / 18e6 / threads,
            events / 10e6 / threads,
        );
    }
}

/// Runs `work` with a progress bar of simulated time on stderr (when it is a
/// terminal and not `quiet`), fed by the runs' own count of simulated time.
fn with_time_progress<T>(quiet: bool, s: &Scenario, work: impl FnOnce() -> T) -> T {
    use std::io::IsTerminal;
    use std::sync::atomic::{AtomicBool, Ordering};
    if quiet || !std::io::stderr().is_terminal() {
        return work();
    }
    let twins: u64 = if s.world.outages.is_empty() { 1 } else { 2 };
    let total = (0..s.strategies.len())
        .map(|i| s.world_for(i).duration.0 * twins)
        .sum::<u64>();
    let start = model::SIMULATED_NS.load(Ordering::Relaxed);
    let bar = indicatif::ProgressBar::new(total.max(1));
    let style = indicatif::ProgressStyle::with_template(
        "{bar:25} {percent}% of the simulated time, {elapsed} elapsed, about {eta} left",
    )
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    bar.set_style(style);
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                let now = model::SIMULATED_NS.load(Ordering::Relaxed);
                bar.set_position(now.saturating_sub(start).min(total));
                std::thread::sleep(std::time::Duration::from_millis(200));
            }
            bar.finish_and_clear();
        });
        let out = work();
        done.store(true, Ordering::Relaxed);
        out
    })
}

/// Bytes a run holds per closed-loop or one-shot client: its request slot and
/// its pending events (measured: 50 million clients took 4.47 GB, 89 bytes each).
const BYTES_PER_CLIENT: u64 = 96;
/// Bytes a run holds per time bucket, its own and its twin's.
const BYTES_PER_BUCKET: u64 = 2 * std::mem::size_of::<crate::metrics::Bucket>() as u64;

/// Bytes one run of world `w` holds, roughly, with buckets of width `bucket`:
/// a slot and its pending events per client (a load spike's extra requests
/// are clients of their own while they last: at most all of them at once),
/// and its own and its twin's time buckets.
pub fn run_bytes(w: &model::WorldConfig, bucket: crate::engine::SimDuration) -> u64 {
    let clients = match &w.load {
        model::Load::Closed { clients, .. } | model::Load::OneShot { clients } => {
            u64::from(*clients)
        }
        model::Load::Open { .. } => 0,
    };
    let spiked =
        (w.expected_requests() - w.nominal_requests_per_s() * w.duration.as_secs_f64()).max(0.0);
    let buckets = w.duration.0 / bucket.0.max(1) + 1;
    (clients + spiked as u64) * BYTES_PER_CLIENT + buckets * BYTES_PER_BUCKET
}

/// Refuses, before anything runs, a scenario whose runs in parallel would need
/// more memory than the process can have ([`memory::available`]: the
/// machine's available memory, the control group's limit, `ulimit -v`; no
/// check where none can be read): an allocation failure mid-run would abort.
fn check_memory(opts: &RunOptions, s: &Scenario) -> Result<()> {
    let worlds: Vec<&model::WorldConfig> = match &s.sweep {
        Some(sw) => sw.points.iter().flat_map(|p| &p.worlds).collect(),
        None => (0..s.strategies.len()).map(|_| &s.world).collect(),
    };
    let per_run = worlds
        .iter()
        .map(|w| run_bytes(w, s.metrics.bucket))
        .max()
        .unwrap_or(0);
    let runs = match &s.sweep {
        Some(sw) => sw.runs(),
        None => s.strategies.len(),
    };
    let parallel = rayon::current_num_threads().min(runs).max(1) as u64;
    let need = per_run * parallel;
    let Some(available) = memory::available(parallel) else {
        return Ok(());
    };
    if need > available / 10 * 9 {
        let gib = |b: u64| b as f64 / f64::from(1u32 << 30);
        return Err(InputError(format!(
            "{}: {parallel} runs at once would need about {:.1} GiB ({:.1} GiB each), and \
             this process can have {:.1} GiB (the least of the machine's available \
             memory, its control group's limit and ulimit -v): use fewer clients or a \
             shorter load spike, or fewer runs at once with RAYON_NUM_THREADS=1",
            opts.scenario.display(),
            gib(need),
            gib(per_run),
            gib(available)
        ))
        .into());
    }
    Ok(())
}

/// The rest of `sim run`, writing into the folder `out`.
fn run_into(opts: &RunOptions, s: &Scenario, out: &Path, started: Instant) -> Result<()> {
    if let Some(sweep) = s.sweep.clone() {
        return run_sweep(opts, s, &sweep, out, started);
    }
    if !opts.quiet {
        say_cost(s);
    }
    let simulated = Instant::now();
    let report = with_time_progress(opts.quiet, s, || simulate(s));
    let sim_wall = simulated.elapsed();
    if !opts.quiet {
        warn_identical(s, &report);
    }
    if let Some(r) = report.runs.iter().find(|r| r.aborted.is_some()) {
        return Err(InputError(format!(
            "{}: strategy \"{}\": {}",
            opts.scenario.display(),
            r.name,
            r.aborted.as_deref().unwrap_or_default()
        ))
        .into());
    }

    let mut files = Vec::new();
    for exporter in csv_exporters() {
        let bytes = exporter.serialize(&report)?;
        write_atomic(out, exporter.file_name(), &bytes)?;
        files.push(bytes);
    }
    let scenario_text = std::fs::read_to_string(&opts.scenario)
        .with_context(|| format!("cannot read {}", opts.scenario.display()))?;
    let page = crate::export::html::run_page(&crate::export::html::RunPage {
        description: &s.description,
        scenario_file: &opts.scenario.display().to_string(),
        scenario_text: &scenario_text,
        report: &report,
        summary_csv: &files[0],
        timeseries_csv: &files[1],
    });
    write_atomic(out, crate::export::html::FILE_NAME, page.as_bytes())?;
    if opts.plots {
        let charts = plot::charts(&report);
        let images: Vec<_> = charts.par_iter().map(|c| (c.render)(&report)).collect();
        for (chart, image) in charts.iter().zip(images) {
            let bytes = image.with_context(|| format!("cannot draw {}", chart.file_name))?;
            write_atomic(out, chart.file_name, &bytes)?;
        }
    }
    if !opts.quiet {
        print_summary(opts, s, &report, sim_wall, started.elapsed());
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
        "{bar:25} {pos}/{len} runs, {elapsed} elapsed, about {eta} left",
    )
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    bar.set_style(style);
    Some(bar)
}

pub(super) fn print_speed(events: u64, sim_wall: std::time::Duration, wall: std::time::Duration) {
    let threads = rayon::current_num_threads();
    say!(
        "\n{events} events simulated in {:.3} s ({:.1} million events/s over {}); total wall time {:.3} s",
        sim_wall.as_secs_f64(),
        events as f64 / sim_wall.as_secs_f64().max(1e-9) / 1e6,
        plural(threads, "thread", "threads"),
        wall.as_secs_f64()
    );
}

fn print_summary(
    opts: &RunOptions,
    s: &Scenario,
    report: &Report,
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
    let shows = crate::metrics::takeaway::takeaway(report).join(" ");
    if !shows.is_empty() {
        say!("What this run shows:");
        for line in wrap(&shows, 78) {
            say!("  {line}");
        }
        say!();
    }
    let width = report
        .runs
        .iter()
        .map(|r| r.name.len())
        .max()
        .unwrap_or(8)
        .max(8);
    let trigger = !report.outages.is_empty();
    say!(
        "{:width$}  {:>9} {:>8} {:>9} {:>8} {:>7} {:>6} {:>8} {:>8} {:>8} {:>8}",
        "strategy",
        "requests",
        "failed",
        "recovery",
        "lost",
        "crashes",
        "ampl",
        "peak/cap",
        "extra",
        "p50",
        "p99"
    );
    let secs = |v: Option<f64>| v.map_or("-".to_string(), latency);
    for r in &report.runs {
        let m = &r.summary;
        say!(
            "{:width$}  {:>9} {:>8} {:>9} {:>8} {:>7} {:>6.3} {:>8} {:>8} {:>8} {:>8}",
            r.name,
            m.logical_requests,
            m.failed,
            match (m.recovery_time_s, trigger) {
                (_, false) => "-".to_string(),
                (None, true) => "never".to_string(),
                (Some(v), true) => format!("{v:.1}s"),
            },
            m.successes_lost.map_or("-".to_string(), |v| v.to_string()),
            m.totals.crashes,
            m.amplification,
            m.peak_load_ratio
                .map_or("-".to_string(), |r| format!("{r:.2}")),
            m.extra_attempts
                .map_or("-".to_string(), |v| format!("{v:+}")),
            secs(m.latency_p50_s),
            secs(m.latency_p99_s),
        );
    }
    if trigger {
        say!(
            "\nrecovery: after the trigger's end, until goodput and backlog are back to the same \
             run without\nthe trigger for good; lost: successes that run had and this one did \
             not, until then; extra:\nattempts beyond it (negative: fewer). Every figure is in \
             summary.csv."
        );
    }
    let events: u64 = report
        .runs
        .iter()
        .map(|r| r.summary.totals.events + r.twin_events)
        .sum();
    print_speed(events, sim_wall, wall);
}
