//! The simulated world: clients and their load, the network, the server and its
//! outages, and the run loop that ties them to the event queue.

pub mod balancer;
pub mod cache;
pub mod chain;
pub mod client;
pub mod config;
pub mod dist;
pub mod event;
pub mod fleet;
pub mod measure;
pub mod observer;
pub mod occ;
pub mod server;
pub mod sim;

pub use config::{
    Aimd, Codel, Discipline, EnvoyGradient, Gradient2, LimiterConfig, Load, Outage, OutageKind,
    Overload, Proxies, ServerConfig, ServerModel, Shedding, Targets, Vegas, WorldConfig,
};
pub use dist::Dist;
pub use measure::{Measured, Twins, run_measured, run_measured_all, run_measured_with};
pub use observer::{NoObserver, Observer};
pub use sim::{
    Abort, MAX_PENDING, RunResult, SIMULATED_NS, run, run_observed, run_sharing_start,
    run_with_twin, run_with_twin_then,
};
