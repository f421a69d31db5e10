//! retry-storm: a deterministic discrete-event simulator of clients retrying
//! against a capacity-limited server. The book in `docs/` describes the model
//! and the outputs.
//!
//! Layers, each importing only those before it: `engine` (time, queue,
//! RNG) -> `retry` (backoff, policy, budgets) -> `metrics` (recording,
//! summaries, the output columns and sweep figures, per-replica and per-tier
//! figures) -> `model` (the world and the run loop) -> `scenario` (TOML in)
//! and `bound` (worst cases from settings alone) -> `sweep`, `tip`
//! (tipping points), `runner` and `advise` (many runs) -> `plot` and `check` (a verdict on configurations,
//! from their trials), then `export` (bytes out) -> `serve` (the
//! playground's web server) -> `app` (the command line, a file per
//! subcommand); `import` (real retry configurations to scenario text),
//! `output` (atomic writes, shard folders) and `cli` (clap's types) stand apart on the
//! ground floor. The file system is touched by `app`, `output`, `import` and
//! `runner::memory` (the machine's limits), and read by `scenario::load` and
//! `output::shard::read` (a scenario file, a shard's files).

pub mod advise;
pub mod app;
pub mod bound;
pub mod check;
pub mod cli;
pub mod engine;
pub mod export;
pub mod import;
#[cfg(feature = "markov")]
pub mod markov;
pub mod metrics;
pub mod model;
pub mod output;
pub mod plot;
pub mod retry;
pub mod risk;
pub mod runner;
pub mod scenario;
pub mod serve;
pub mod sweep;
pub mod tip;
