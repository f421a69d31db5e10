//! Measurements of a run: time-bucketed counters and gauges, a latency histogram
//! of bounded size, and the summary figures (peak load, recovery time, ...).
//!
//! Memory does not grow with the number of events: a run keeps one [`Bucket`] per
//! time bucket and one fixed-size [`Histogram`].

pub mod cache;
pub mod columns;
pub mod defences;
pub mod figures;
pub mod histogram;
pub mod proxies;
pub mod recorder;
pub mod recovery;
pub mod replicas;
pub mod report;
pub mod stats;
pub mod summary;
pub mod takeaway;
pub mod tiers;

pub use histogram::Histogram;
pub use recorder::{Bucket, Recorder, Series, Totals};
pub use report::{Report, StrategyReport};
pub use summary::{MetricsConfig, Summary, summarize};
