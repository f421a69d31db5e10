//! `sim`: parse the command line, run, print the error chain, exit 2 for bad
//! input and 1 for any other failure.

use std::process::ExitCode;

use clap::Parser;
use retry_storm::{app, app::InputError, cli::Cli, scenario::ScenarioError};

fn main() -> ExitCode {
    match app::main(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e)
            if e.downcast_ref::<ScenarioError>().is_some()
                || e.downcast_ref::<InputError>().is_some() =>
        {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}
