//! `sim run`: a scenario's strategies (or its sweep, in `sweep_run`) into a
//! results folder that is replaced whole, and what the run shows on stdout.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use rayon::prelude::*;

use super::{InputError, RunOptions, latency, print_speed, say_cost, say_written, wrap};
use crate::export::csv_exporters;
use crate::metrics::Report;
use crate::model;
use crate::output::{Staging, write_atomic};
use crate::plot;
use crate::runner;
use crate::scenario::{self, Scenario};

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
    crate::output::restore(out);
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

/// One `sim run`, worked out once before anything runs and handed down:
/// its options, the scenario's text as read, its plan (each run's world,
/// the cost) and the folder it writes.
pub(super) struct Job<'a> {
    pub(super) opts: &'a RunOptions,
    pub(super) text: &'a str,
    pub(super) plan: runner::Plan<'a>,
    pub(super) out: PathBuf,
    pub(super) started: Instant,
}

impl Job<'_> {
    pub(super) fn scenario(&self) -> &Scenario {
        self.plan.scenario
    }

    /// The `shard.toml` of shard `spec` of this run's `cells` (a sweep's
    /// runs or a search's searches), its checksums still to fill.
    pub(super) fn shard_manifest(
        &self,
        spec: crate::output::shard::ShardSpec,
        cells: usize,
    ) -> crate::output::shard::Manifest {
        let s = self.scenario();
        crate::output::shard::Manifest {
            format: crate::output::shard::FORMAT,
            sim_version: env!("CARGO_PKG_VERSION").to_string(),
            scenario: s.name.clone(),
            source: self.opts.scenario.display().to_string(),
            fingerprint: s.fingerprint(self.text),
            seed: s.seed,
            shard: spec.index,
            shards: spec.count,
            cells,
            checksums: Default::default(),
            own_checksum: String::new(),
        }
    }
}

/// `sim run`.
pub fn run(opts: &RunOptions) -> Result<()> {
    let started = Instant::now();
    let s = load(opts)?;
    let text = std::fs::read_to_string(&opts.scenario)
        .with_context(|| format!("cannot read {}", opts.scenario.display()))?;
    let plan = runner::Plan::new(&s);
    plan.check_memory()
        .map_err(|why| InputError(format!("{}: {why}", opts.scenario.display())))?;
    let job = Job {
        opts,
        text: &text,
        out: output_folder(opts, &s),
        plan,
        started,
    };
    check_output(
        &job.out,
        &[&opts.scenario],
        &opts.scenario,
        &s.fingerprint(&text),
        opts.force,
    )?;
    // Built in a staging folder beside the target (which also fails fast on an
    // unusable output folder) and moved into place whole when complete.
    let staging = Staging::new(&job.out)?;
    run_into(&job, staging.dir())?;
    let files = staging.commit(&run_manifest(&job))?;
    if !opts.quiet {
        say_written(&job.out, &files);
    }
    Ok(())
}

/// The scenario of `sim run`, with `--seed` in place, checked against
/// `--shard`.
fn load(opts: &RunOptions) -> Result<Scenario> {
    let mut s = scenario::load(&opts.scenario)?;
    if let Some(seed) = opts.seed {
        s.seed = seed;
    }
    let fail = |why: String| Err(InputError(format!("{}: {why}", opts.scenario.display())).into());
    let cells = match (&s.sweep, &s.tip) {
        (Some(sweep), _) => Some((sweep.runs(), "the sweep has", "runs", "run")),
        (None, Some(tip)) => Some((tip.searches(), "the search has", "searches", "search")),
        (None, None) => None,
    };
    match (opts.shard, cells) {
        (Some(_), None) => fail(
            "--shard splits the runs of a [sweep] or the searches of a [tip], and this \
             scenario has neither"
                .into(),
        ),
        (Some(spec), Some((n, has, many, one))) if spec.count as usize > n => fail(format!(
            "--shard {}/{} asks for {} shards, but {has} {n} {many}: \
             at most {n} shards, each with at least one {one}",
            spec.index, spec.count, spec.count
        )),
        _ => Ok(s),
    }
}

/// The manifest of a run's folder: what made it, so a folder can be told from
/// another run's and checked against its scenario.
fn run_manifest(job: &Job) -> String {
    let (opts, s) = (job.opts, job.scenario());
    let quoted = |v: &str| toml::Value::String(v.to_string()).to_string();
    let mut m = format!(
        "# What made this folder; written last, so a folder without it is incomplete.\n\
         sim_version = {}\nscenario = {}\nscenario_file = {}\nscenario_fingerprint = {}\n\
         seed = {}\ncharts = {}\n",
        quoted(env!("CARGO_PKG_VERSION")),
        quoted(&s.name),
        quoted(&opts.scenario.display().to_string()),
        quoted(&s.fingerprint(job.text)),
        s.seed,
        opts.plots,
    );
    if let Some(spec) = opts.shard {
        m.push_str(&format!(
            "shard = {}\n",
            quoted(&format!("{}/{}", spec.index, spec.count))
        ));
    }
    m
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
/// Runs `work` with a progress bar of simulated time on stderr (when it is a
/// terminal and not `quiet`), fed by the runs' own count of simulated time.
fn with_time_progress<T>(quiet: bool, plan: &runner::Plan, work: impl FnOnce() -> T) -> T {
    use std::io::IsTerminal;
    use std::sync::atomic::{AtomicBool, Ordering};
    if quiet || !std::io::stderr().is_terminal() {
        return work();
    }
    let total = plan.simulated_ns();
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

/// The rest of `sim run`, writing into the folder `out`.
fn run_into(job: &Job, out: &Path) -> Result<()> {
    let (opts, s) = (job.opts, job.scenario());
    if let Some(sweep) = &s.sweep {
        return super::sweep_run::run_sweep(job, sweep, out);
    }
    if let Some(tip) = &s.tip {
        return super::tip_run::run_tip(job, tip, out);
    }
    if let Some(risk) = &s.risk {
        return super::risk_run::run_risk(job, risk, out);
    }
    if !opts.quiet {
        say_cost(&job.plan);
    }
    let simulated = Instant::now();
    let report = with_time_progress(opts.quiet, &job.plan, || job.plan.simulate());
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
    for exporter in csv_exporters().iter().filter(|e| e.applies(&report)) {
        let bytes = exporter.serialize(&report)?;
        write_atomic(out, exporter.file_name(), &bytes)?;
        files.push(bytes);
    }
    let page = crate::export::html::run_page(&crate::export::html::RunPage {
        description: &s.description,
        scenario_file: &opts.scenario.display().to_string(),
        scenario_text: job.text,
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
        print_summary(opts, s, &report, sim_wall, job.started.elapsed());
    }
    Ok(())
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
    let trigger = !report.outages.is_empty();
    print_table(report, trigger);
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

/// The run's table on stdout: a row per strategy, the figures a reader
/// compares first (`recovery` only with a trigger).
fn print_table(report: &Report, trigger: bool) {
    let width = report
        .runs
        .iter()
        .map(|r| r.name.len())
        .max()
        .unwrap_or(8)
        .max(8);
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
                (None, true) if m.twin_overloaded => "overloaded".to_string(),
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
}
