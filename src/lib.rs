//! retry-storm: a deterministic discrete-event simulator of clients retrying
//! against a capacity-limited server. See README.md for the model and the outputs.

pub mod engine;
pub mod metrics;
pub mod model;
pub mod retry;
pub mod scenario;
