//! retry-storm: a deterministic discrete-event simulator of clients retrying
//! against a capacity-limited server. See README.md for the model and the outputs.
//!
//! Layers, from the inside out: `engine` (time, queue, RNG), `model` (the world
//! and the run loop), `retry` (backoff and policy), `metrics` (recording and
//! summaries), `scenario` (TOML in), `export` and `plot` (bytes out), `app` (the
//! command line's work), `serve` (the playground's web server). Only `app` and `output` touch the file system.

pub mod app;
pub mod cli;
pub mod engine;
pub mod export;
pub mod metrics;
pub mod model;
pub mod output;
pub mod plot;
pub mod retry;
pub mod scenario;
pub mod serve;
pub mod sweep;
