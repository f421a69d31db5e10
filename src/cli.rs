//! Command-line arguments (clap derive types only; `app` turns them into work).

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// Simulate clients retrying against a failing server, and chart the storm.
#[derive(Debug, Parser)]
#[command(name = "sim", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run every strategy of a scenario and write CSV and PNG results.
    Run {
        /// The scenario file (TOML), e.g. scenarios/outage.toml.
        scenario: PathBuf,
        /// Output folder [default: results/<scenario name>].
        #[arg(long)]
        out: Option<PathBuf>,
        /// Seed of every random draw, instead of the scenario's.
        #[arg(long)]
        seed: Option<u64>,
        /// Write the CSV files only.
        #[arg(long)]
        no_plots: bool,
        /// Print nothing but errors.
        #[arg(long, short)]
        quiet: bool,
        /// Run only shard I of N of a sweep's runs (1 <= I <= N), into
        /// <out>/shard-I-of-N [default out: results/<scenario name>-shards];
        /// combine the shards with `sim merge`.
        #[arg(long, value_name = "I/N")]
        shard: Option<String>,
        /// Replace the output folder even when it is not a results folder of
        /// sim, or holds the results of another scenario file.
        #[arg(long)]
        force: bool,
    },
    /// Combine the shard folders of a sweep into the output of an unsharded run.
    Merge {
        /// Every shard folder (what `sim run --shard I/N` wrote).
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Output folder [default: results/<scenario name>].
        #[arg(long)]
        out: Option<PathBuf>,
        /// Write the CSV files only.
        #[arg(long)]
        no_plots: bool,
        /// Print nothing but errors.
        #[arg(long, short)]
        quiet: bool,
        /// Replace the output folder even when it is not a results folder of
        /// sim, or holds the results of another scenario file.
        #[arg(long)]
        force: bool,
    },
    /// Print the distribution of each retry's delay under a backoff, a preset or
    /// a scenario's strategy, and plot it.
    Delays {
        /// A preset (see `sim presets`), a backoff kind (none, constant, linear,
        /// exponential, full-jitter, equal-jitter, decorrelated-jitter, envoy,
        /// decorrelated-jitter-v2), or with --scenario a strategy of that file.
        what: String,
        /// Read the strategy named WHAT from this scenario file.
        #[arg(long)]
        scenario: Option<PathBuf>,
        /// First delay, for a backoff kind [default: 200ms].
        #[arg(long)]
        base: Option<String>,
        /// Largest un-jittered delay, for a backoff kind [default: 10s].
        #[arg(long)]
        cap: Option<String>,
        /// Growth factor, for a backoff kind [default: 2].
        #[arg(long)]
        multiplier: Option<f64>,
        /// Exponent at the first retry, for a backoff kind: 0 (waits base, the
        /// default) or 1 (the AWS convention).
        #[arg(long)]
        first_exponent: Option<u32>,
        /// Retries to show [default: the strategy's limit up to 8; 5 for a kind].
        #[arg(long)]
        retries: Option<u32>,
        /// Retry sequences drawn.
        #[arg(long, default_value_t = 10_000)]
        samples: usize,
        /// Seed of the jitter.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Also draw the distribution to this PNG file.
        #[arg(long)]
        plot: Option<PathBuf>,
        /// For a preset or strategy: the delays its policy picks after this
        /// outcome (e.g. 429, whose backoff base may differ, or 503) [default:
        /// the backoff's own schedule].
        #[arg(long)]
        after: Option<String>,
        /// For a preset or strategy: the server's Retry-After on each failure
        /// (e.g. 3s), combined as the policy does; implies --after 503 unless
        /// --after is given.
        #[arg(long)]
        retry_after: Option<String>,
        /// Also write every drawn delay to this CSV file (sequence, retry,
        /// delay_s), for comparison with measured libraries.
        #[arg(long)]
        samples_csv: Option<PathBuf>,
    },
    /// List the library presets: limits, retried outcomes, delays and sources.
    Presets {
        /// Print them as TOML, one [[preset]] table each, for scripts (the
        /// conformance harness reads this).
        #[arg(long)]
        toml: bool,
    },
    /// Start the playground: a web page on 127.0.0.1 to change a scenario's
    /// parameters and see a fresh run's charts, two configurations side by side.
    Serve {
        /// Port on 127.0.0.1 (0: any free port; the address is printed).
        #[arg(long, default_value_t = 8080)]
        port: u16,
    },
    /// Print the worst case of each strategy's retries without simulating:
    /// attempts per request under total failure (per tier in a call chain),
    /// how long a request can take to give up, the peak of the retry wave
    /// after an outage that fails many clients at once, and what its budget,
    /// throttle and breaker allow, each with its formula.
    Bound {
        /// The scenario file (TOML).
        scenario: PathBuf,
        /// Clients the wave's outage fails at once (default: the scenario's
        /// clients; for an open load, the requests that arrive during the
        /// outage).
        #[arg(long)]
        clients: Option<f64>,
        /// The wave's outage length, e.g. "2s" (default: the scenario's first
        /// trigger's, or 2 s without one).
        #[arg(long)]
        outage: Option<String>,
    },
    /// The Markov twin of each strategy's one-server world: a Markov chain on
    /// (requests at the server, retries waiting), solved: where the retry
    /// storm can feed itself, how long the world takes to fall into it and
    /// to leave it, and how large a burst tips it.
    Markov {
        /// The scenario file (TOML).
        scenario: PathBuf,
        /// The most retries waiting the chain holds (its truncation).
        #[arg(long, default_value_t = 300)]
        retries_held: usize,
    },
    /// Search retry settings for a scenario's world and outages, over several
    /// outage lengths and seeds: print those no other beats on failed
    /// requests, successes lost, peak load and p99 latency, and the one an
    /// objective picks. In a call chain a setting is the users' and one for
    /// the calls to each service.
    Advise {
        /// The scenario file (TOML); its first strategy gives the settings
        /// not searched.
        scenario: PathBuf,
        /// What to make smallest, then limits: "failed; peak_load_ratio <=
        /// 1.5". Metrics: failed, successes_lost, peak_load_ratio,
        /// latency_p99_s.
        #[arg(long, default_value = "failed")]
        objective: String,
        /// Runs the search may make (each with its twin).
        #[arg(long, default_value_t = 600)]
        runs: usize,
        /// Seed of the search's draws.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
        /// Also draw the finalists and the front to this PNG file.
        #[arg(long)]
        plot: Option<PathBuf>,
    },
    /// Read real retry configurations (gRPC service configs; Envoy, Istio,
    /// Gateway API, Envoy Gateway and Linkerd resources; resilience4j's and
    /// .NET's settings) into scenario strategies, each value commented with
    /// the file, line and field it came from, and the fields not modelled
    /// listed.
    Import {
        /// The configuration files (JSON or YAML), or folders of them (the
        /// Kubernetes resources of a folder's files are read together).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Add the imported strategies to this scenario and write the whole
        /// scenario (checked before it is written).
        #[arg(long)]
        into: Option<PathBuf>,
        /// Write to this file instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Replace --out if it exists.
        #[arg(long)]
        force: bool,
        /// The files are the tiers of a call chain, one retry policy each:
        /// the first is the users' towards the [server], each next one the
        /// calls of the tier before to a new service named after the file.
        #[arg(long)]
        chain: bool,
        /// A call chain of the services the files configure, such as
        /// "frontend -> ratings -> db" (or a file holding it): the users
        /// call the first (the scenario's [server]), each the next; each
        /// service's policy is the imported one named after it.
        #[arg(long, value_name = "CHAIN")]
        graph: Option<String>,
    },
    /// Judge a repository's retry configurations for continuous
    /// integration: worst-case attempts per request, budget floors, the
    /// share of replicas ejection may take, and a seeded trial of outages,
    /// before and after a change, held to limits. Exit 0 within the
    /// limits, 1 when one is crossed, 2 for bad input, 3 for any other
    /// failure.
    Check(CheckArgs),
    /// Check a scenario file without running it.
    Validate {
        /// The scenario file (TOML).
        scenario: PathBuf,
    },
    /// Print a shell completion script, e.g. `sim completions bash >
    /// ~/.local/share/bash-completion/completions/sim`.
    Completions {
        /// The shell: bash, elvish, fish, powershell or zsh.
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), e.g. `sim man > sim.1; man ./sim.1`.
    Man,
}

/// `sim check`'s arguments (a struct of their own: `app::check` reads them
/// whole).
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The configuration files or folders (as `sim import` reads them).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// The base revision to compare with (read with `git show`, offline):
    /// only strategies the change adds or alters are judged.
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// Limits and trials from this TOML file (keys as the flags, with _
    /// for -); flags given win over it.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// The world of the trials: a scenario file, its own strategies,
    /// sweep and triggers set aside [default: the main scenario's].
    #[arg(long)]
    pub scenario: Option<PathBuf>,
    /// A trial, KIND:LENGTH (unavailable or blackhole, or errors:P for each
    /// attempt failing with probability P), given once per trial [default:
    /// unavailable:2s, unavailable:10s, blackhole:2s, blackhole:10s].
    #[arg(long = "trial", value_name = "KIND:LENGTH")]
    pub trials: Vec<String>,
    /// Attempts per request at most, every attempt failing [default: 3].
    #[arg(long)]
    pub max_attempts: Option<f64>,
    /// Whether every trial must end in recovery [default: true].
    #[arg(long, value_name = "BOOL")]
    pub must_recover: Option<bool>,
    /// Share of a trial's requests that may fail (0 to 1).
    #[arg(long)]
    pub max_failed_share: Option<f64>,
    /// Rise of that share over the base revision's (0.05: five points).
    #[arg(long)]
    pub max_failed_rise: Option<f64>,
    /// Peak attempts over the server's capacity, at most.
    #[arg(long)]
    pub max_peak_load: Option<f64>,
    /// Share of replicas outlier detection may eject at once (0 to 1).
    #[arg(long)]
    pub max_ejection_share: Option<f64>,
    /// Retries a second a budget may allow whatever the traffic.
    #[arg(long)]
    pub max_budget_floor_per_s: Option<f64>,
    /// Attempts at the last service of --graph per user request.
    #[arg(long)]
    pub max_chain_attempts: Option<f64>,
    /// A call chain of the services the files configure, such as
    /// "frontend -> ratings -> db" (or a file holding it): the worst-case
    /// attempts at each per user request.
    #[arg(long, value_name = "CHAIN")]
    pub graph: Option<String>,
    /// The proxies the users are behind (one per client pod in a mesh),
    /// each with its own budget, breaker and throttle: floors add up
    /// [default: the world's, one].
    #[arg(long)]
    pub proxies: Option<u32>,
    /// Seed of the trials [default: the world's].
    #[arg(long)]
    pub seed: Option<u64>,
    /// table (for people), json or sarif (SARIF 2.1.0, for code hosts'
    /// annotations).
    #[arg(long, default_value = "table")]
    pub format: String,
    /// Write the report to this file as well as the table to standard
    /// output.
    #[arg(long)]
    pub out: Option<PathBuf>,
}
