//! The simulation kernel: integer time, the event queue and seeded RNG streams. No I/O.

pub mod queue;
pub mod rng;
pub mod time;

pub use queue::EventQueue;
pub use rng::{RngStreams, Stream};
pub use time::{SimDuration, SimTime};
