//! retry-storm: a deterministic discrete-event simulator of clients retrying
//! against a capacity-limited server. The book in `docs/` describes the model
//! and the outputs.
//!
//! Layers, from the inside out: `engine` (time, queue, RNG), `model` (the world
//! and the run loop), `retry` (backoff and policy), `metrics` (recording,
//! summaries and the one list of output columns), `scenario` (TOML in),
//! `export` and `plot` (bytes out), `import` (real retry configurations in), `runner` (a scenario's runs in parallel,
//! and their cost before they start), then the two front ends over it: `app`
//! (the command line, a file per subcommand) and `serve` (the playground's web
//! server). Only `app`, `output`, `import` (its files) and `runner::memory`
//! (which reads the machine's limits) touch the file system.

pub mod advise;
pub mod app;
pub mod cli;
pub mod engine;
pub mod export;
pub mod import;
pub mod metrics;
pub mod model;
pub mod output;
pub mod plot;
pub mod retry;
pub mod runner;
pub mod scenario;
pub mod serve;
pub mod sweep;
