//! The integration tests, one binary with a module per subject (one binary
//! links once: `cargo test --release` builds this crate's tests in one go).
//! `tests/README.md` says what each module checks and how to run one.

mod advise;
mod article;
mod aws;
mod bound;
mod cache;
mod chain;
mod chain_fleets;
mod check;
mod cli;
mod common;
mod conformance;
mod conservation;
mod corpus;
mod defences;
mod docs;
mod fidelity;
mod fleet;
mod hedging;
mod import;
mod import_k8s;
mod import_libs;
mod invariants;
mod layers;
mod limits;
mod metastable;
mod overload;
mod presets;
mod proxies;
mod queueing;
mod recovery;
mod risk;
mod robustness;
mod safety;
mod serve;
mod tip;
