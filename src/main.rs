//! `sim`: parse the command line, run, print the error chain, exit 2 for bad
//! input and 1 for any other failure; `sim check` exits 1 for its verdict
//! (limits crossed) and 3 for any other failure, so that CI can tell a
//! verdict from a crash.

use std::process::ExitCode;

use clap::Parser;
use retry_storm::app::{self, InputError, check::LimitsCrossed};
use retry_storm::cli::{Cli, Command};
use retry_storm::scenario::ScenarioError;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let checking = matches!(cli.command, Command::Check { .. });
    match app::main(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.downcast_ref::<LimitsCrossed>().is_some() => {
            eprintln!("{e}");
            ExitCode::from(1)
        }
        Err(e)
            if e.downcast_ref::<ScenarioError>().is_some()
                || e.downcast_ref::<InputError>().is_some() =>
        {
            eprintln!("{}: {e:#}", error_label());
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("{}: {e:#}", error_label());
            ExitCode::from(if checking { 3 } else { 1 })
        }
    }
}

/// "error", in bold red as clap writes its own, when stderr is a terminal and
/// NO_COLOR (no-color.org) is unset or empty.
fn error_label() -> &'static str {
    use std::io::IsTerminal;
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    if !no_color && std::io::stderr().is_terminal() {
        "\x1b[1;31merror\x1b[0m"
    } else {
        "error"
    }
}
