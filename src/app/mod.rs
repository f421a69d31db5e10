//! The command line's work, a file per subcommand: `run` (and `sweep_run` for
//! a sweep or a shard), `merge`, `validate`, `delays` (`sim delays` and `sim
//! presets`); `sim serve` is `crate::serve`. Here: the options free of clap,
//! the dispatch, and what the subcommands print alike.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::cli::{Cli, Command};
use crate::output::shard::ShardSpec;

/// `println!` that does not panic when stdout is closed early (`sim run ... |
/// head`): the report on stdout is a courtesy, the results are the files.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

mod advise;
mod bound;
pub mod check;
mod delays;
mod import;
#[cfg(feature = "markov")]
mod markov;
mod merge;
mod risk_run;
mod run;
mod sweep_run;
mod tip_run;
mod validate;

pub use run::run;

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
#[expect(
    clippy::too_many_lines,
    reason = "the dispatch of every subcommand, one arm each"
)]
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
        } => merge::merge(&MergeOptions {
            dirs,
            out,
            plots: !no_plots,
            quiet,
            force,
        }),
        Command::Validate { scenario } => validate::validate(&scenario),
        Command::Bound {
            scenario,
            clients,
            outage,
        } => bound::bound(&scenario, clients, outage.as_deref()),
        Command::Markov {
            scenario,
            retries_held,
        } => {
            #[cfg(feature = "markov")]
            return markov::markov(&scenario, retries_held);
            #[cfg(not(feature = "markov"))]
            {
                let _ = (scenario, retries_held);
                Err(InputError(
                    "this sim was built without the markov feature (cargo build --features markov)"
                        .into(),
                )
                .into())
            }
        }
        Command::Advise {
            scenario,
            objective,
            runs,
            seed,
            quiet,
            plot,
        } => advise::advise(&scenario, &objective, runs, seed, quiet, plot.as_deref()),
        Command::Import {
            files,
            into,
            out,
            force,
            chain,
            graph,
        } => import::import(&import::ImportOptions {
            files,
            into,
            out,
            force,
            chain,
            graph,
        }),
        Command::Check(args) => check::check(&args),
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

/// Writes `bytes` to the file `path` atomically (`output::write_atomic`);
/// `flag` names the option that gave it, for an error.
pub(super) fn write_file(path: &Path, bytes: &[u8], flag: &str) -> Result<PathBuf> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let file = path
        .file_name()
        .and_then(|f| f.to_str())
        .ok_or_else(|| InputError(format!("{flag} {}: not a file name", path.display())))?;
    crate::output::write_atomic(dir, file, bytes)
}

/// "1 outage", "2 outages".
pub(super) fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// "wrote DIR/FILE" for each file of a committed folder.
pub(super) fn say_written(out: &Path, files: &[String]) {
    for f in files {
        say!("wrote {}", out.join(f).display());
    }
}

/// A progress bar on stderr (runs done, elapsed, estimate), only when stderr is
/// a terminal and output is not `--quiet`: pipes and CI logs stay clean.
pub(super) fn progress_bar(quiet: bool) -> Option<indicatif::ProgressBar> {
    progress_bar_of(quiet, "runs")
}

/// A progress bar counting `what` (runs, searches) on stderr, when it is a
/// terminal and not `quiet`.
pub(super) fn progress_bar_of(quiet: bool, what: &str) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if quiet || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(0);
    let style = indicatif::ProgressStyle::with_template(&format!(
        "{{bar:25}} {{pos}}/{{len}} {what}, {{elapsed}} elapsed, about {{eta}} left"
    ))
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

/// Events a second one thread simulates, at least: the slowest of the
/// shipped scenarios on this project's two-core machine (the hedging sweep's
/// runs, 31.6 s for 2 threads; most worlds run at 13 to 18 million a
/// second a thread). `sim run` says what a run will take from it.
const EVENTS_PER_S_PER_THREAD: f64 = 10e6;

/// Above this many seconds of estimated work, `sim run` says so before it
/// starts.
const BIG_RUN_SECONDS: f64 = 10.0;

/// Prints, on stderr, what a run or sweep that will take more than
/// [`BIG_RUN_SECONDS`] is about to do, and for about how long.
pub(super) fn say_cost(plan: &crate::runner::Plan) {
    let (events, runs, threads) = (plan.events, plan.runs, plan.parallel);
    let seconds = events / EVENTS_PER_S_PER_THREAD / threads as f64;
    if seconds > BIG_RUN_SECONDS {
        let twins = if plan.scenario.world.outages.is_empty() {
            ""
        } else {
            ", each with its twin"
        };
        eprintln!(
            "note: about {:.0} million events in {}{twins}: up to about {:.0} s on {} \
             (estimated before it starts; a progress bar follows on a terminal)",
            events / 1e6,
            plural(runs, "run", "runs"),
            seconds,
            plural(threads, "thread", "threads"),
        );
    }
}
