//! The simulation kernel: integer time, the event queue and seeded random numbers. No I/O.

mod heap;
pub mod queue;
pub mod rng;
pub mod time;
pub mod timers;

pub use queue::EventQueue;
pub use rng::{Draw, Draws, Purpose, Stream, addr};
pub use time::{SimDuration, SimTime};
pub use timers::Ticket;
