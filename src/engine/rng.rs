//! Seeded random-number streams: one independent ChaCha8 stream per purpose.
//!
//! Every run of a scenario derives its streams from the scenario seed alone, so all
//! strategies see the same arrival process and draw from the same sequences; what a
//! strategy changes (its retries) cannot shift the randomness of another purpose.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// What a stream is used for; each purpose has its own ChaCha stream number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// Open-loop arrivals, think times, which requests are bad.
    Workload = 1,
    /// Server service times.
    Service = 2,
    /// Network hop latencies.
    Network = 3,
    /// Backoff jitter.
    Jitter = 4,
    /// Triggers: a spike's extra arrivals, a transient failure's draws. Apart
    /// from the workload, so a trigger leaves the usual arrivals as they are
    /// and the run stays comparable with its twin without the trigger.
    Trigger = 5,
    /// A balancer's picks among the replicas of a fleet (none with one).
    Balance = 6,
}

/// The streams of one run.
#[derive(Clone)]
pub struct RngStreams {
    /// See [`Stream::Workload`].
    pub workload: ChaCha8Rng,
    /// See [`Stream::Service`].
    pub service: ChaCha8Rng,
    /// See [`Stream::Network`].
    pub network: ChaCha8Rng,
    /// See [`Stream::Jitter`].
    pub jitter: ChaCha8Rng,
    /// See [`Stream::Trigger`].
    pub trigger: ChaCha8Rng,
    /// See [`Stream::Balance`].
    pub balance: ChaCha8Rng,
}

/// One stream of `seed` for `purpose`.
pub fn stream(seed: u64, purpose: Stream) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(purpose as u64);
    rng
}

impl RngStreams {
    /// All streams for `seed`.
    pub fn new(seed: u64) -> Self {
        RngStreams {
            workload: stream(seed, Stream::Workload),
            service: stream(seed, Stream::Service),
            network: stream(seed, Stream::Network),
            jitter: stream(seed, Stream::Jitter),
            trigger: stream(seed, Stream::Trigger),
            balance: stream(seed, Stream::Balance),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;

    #[test]
    fn same_seed_same_numbers_and_streams_differ() {
        let mut a = RngStreams::new(7);
        let mut b = RngStreams::new(7);
        let xs: Vec<u64> = (0..4).map(|_| a.workload.random()).collect();
        let ys: Vec<u64> = (0..4).map(|_| b.workload.random()).collect();
        assert_eq!(xs, ys);
        let zs: Vec<u64> = (0..4).map(|_| a.service.random()).collect();
        assert_ne!(xs, zs);
    }
}
