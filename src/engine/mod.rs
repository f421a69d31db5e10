//! The simulation kernel: integer time, the event queue and seeded random numbers. No I/O.

pub mod queue;
pub mod rng;
pub mod time;

pub use queue::EventQueue;
pub use rng::{Draw, Draws, Purpose, Stream, addr};
pub use time::{SimDuration, SimTime};
