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
        /// Seed of every random stream, instead of the scenario's.
        #[arg(long)]
        seed: Option<u64>,
        /// Write the CSV files only.
        #[arg(long)]
        no_plots: bool,
        /// Print nothing but errors.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Check a scenario file without running it.
    Validate {
        /// The scenario file (TOML).
        scenario: PathBuf,
    },
}
