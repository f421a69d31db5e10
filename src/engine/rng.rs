//! Seeded random numbers, two kinds.
//!
//! - [`Draws`]: the simulation's, each draw addressed by what it is for: the
//!   purpose, and the request or attempt it belongs to ([`addr`]). A
//!   client's arrivals and think times, a request's badness and an
//!   attempt's network delays, service demand, balancer pick and backoff
//!   jitter are then functions of (seed, purpose, address) alone, the same
//!   whatever the strategy or the order of events: two strategies' runs of
//!   one seed share their luck wherever they share requests and attempts
//!   (common random numbers; see the book's chapter on determinism).
//! - [`stream`]: one ChaCha8 stream per purpose, for what draws in sequence
//!   outside a run (the `delays` command, tests).

use std::convert::Infallible;

use rand::{SeedableRng, TryRng};
use rand_chacha::ChaCha8Rng;

/// What a sequential stream is used for; each purpose has its own ChaCha
/// stream number.
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

/// One stream of `seed` for `purpose`.
pub fn stream(seed: u64, purpose: Stream) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(purpose as u64);
    rng
}

/// What an addressed draw is for. Each purpose is a generator of its own:
/// two purposes at one address draw independently.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Purpose {
    /// The gap before an open-loop arrival (address: the request it brings).
    Arrival = 1,
    /// A closed-loop client's think time before a request (its address).
    Think,
    /// Whether a request is permanently bad.
    Bad,
    /// An attempt's hop from its caller to the server.
    HopOut,
    /// An answer's hop from the server back to the caller.
    HopBack,
    /// OCC: the read's answer's hop back.
    ReadBack,
    /// OCC: the write's hop out.
    WriteOut,
    /// An attempt's service demand.
    Service,
    /// The backoff jitter after an attempt failed.
    Jitter,
    /// A client-side throttle's coin before an attempt goes.
    Throttle,
    /// A breaker's open-time jitter, when an attempt's failure opens it.
    Breaker,
    /// The balancer's pick of a replica for an attempt.
    Balance,
    /// A transient-failure trigger's coin for an attempt.
    Failure,
    /// The gap before a load spike's extra request.
    Spike,
    /// Whether a worker makes a call whose probability is under 1.
    Call,
    /// A server's concurrency limiter's jitter (address: the replica and
    /// the draw's number).
    Limiter,
    /// The key a request asks the look-aside cache for (address: the
    /// request's).
    Key,
    /// A key drawn to warm the cache up before the run (address: the
    /// draw's number).
    WarmUp,
}

/// The addressed draws of one run: a key derived from the seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Draws {
    key: u64,
}

impl Draws {
    /// The draws of `seed`.
    pub fn new(seed: u64) -> Self {
        Draws {
            key: mix(seed ^ 0x6a09_e667_f3bc_c908),
        }
    }

    /// The generator of `purpose` at `address`: the same numbers every
    /// time, whoever asks and whenever. An address is a hash already and
    /// the key is one, so the generator starts at their exclusive or with
    /// the purpose's tag, unmixed: a draw costs one mix, its first number's.
    /// (Starting it at a mix of that, as until 2026-12-07, cost a second
    /// mix a draw, 9% of the AWS sweep's time, for no better numbers: the
    /// output mix of SplitMix64 is what makes neighbouring states
    /// independent, and the tests below check purposes, seeds and
    /// neighbouring addresses for it.)
    #[inline(always)]
    pub fn at(self, purpose: Purpose, address: u64) -> Draw {
        let tag = (purpose as u64).wrapping_mul(0xd1b5_4a32_d192_ed03);
        Draw {
            state: self.key ^ address ^ tag,
        }
    }
}

/// Addresses: what a draw belongs to, as a 64-bit name built from where
/// it comes from. Distinct things get distinct names but by a chance of
/// about 2^-64 per pair.
pub mod addr {
    use super::{GAMMA, mix};

    /// A source of requests: closed-loop client `client`.
    pub fn client(client: u32) -> u64 {
        u64::from(client)
    }

    /// The open-loop load, as a source of requests.
    pub const OPEN: u64 = 1 << 40;

    /// Load spike `index`, as a source of requests.
    pub fn spike(index: u32) -> u64 {
        (2 << 40) + u64::from(index)
    }

    /// Request number `n` of `source` (numbered from 0).
    #[inline]
    pub fn request(source: u64, n: u64) -> u64 {
        join(source ^ 0x243f_6a88_85a3_08d3, n)
    }

    /// The request a closed-loop client makes after `request`.
    #[inline]
    pub fn next(request: u64) -> u64 {
        join(request ^ 0x1319_8a2e_0370_7344, 1)
    }

    /// Attempt `k` (0 the first; hedged copies count as attempts) of the
    /// request or call `request`: one mix, as it is computed for every
    /// attempt (the request's address is a hash already; distinct `k` give
    /// distinct inputs, so distinct addresses).
    #[inline(always)]
    pub fn attempt(request: u64, k: u32) -> u64 {
        let step = (u64::from(k) + 1).wrapping_mul(GAMMA);
        mix((request ^ 0xa409_3822_299f_31d0).wrapping_add(step))
    }

    /// Call `index` a worker makes while it serves attempt `attempt`: the
    /// call is a request of its own, to the tier it calls.
    #[inline]
    pub fn call(attempt: u64, index: u32) -> u64 {
        join(attempt ^ 0x082e_fa98_ec4e_6c89, u64::from(index))
    }

    #[inline(always)]
    fn join(a: u64, b: u64) -> u64 {
        mix(a.wrapping_add(mix(b.wrapping_add(GAMMA))))
    }
}

/// SplitMix64's increment, the golden ratio in 64 bits (Steele, Lea and
/// Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014).
const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64's output function (Stafford's "Mix13" variant of MurmurHash3's
/// finaliser): a bijection of 64 bits where every input bit flips each
/// output bit with probability close to one half.
#[inline(always)]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The numbers at one address: SplitMix64 (Steele, Lea and Flood 2014),
/// started where the address's hash puts it. SplitMix64 passes BigCrush
/// (TestU01) and costs one addition and two multiplications a number; a
/// draw's generator is built and used at once (most take one or two
/// numbers), which a block cipher such as ChaCha, 64 bytes a block, makes
/// several times dearer.
#[derive(Clone, Debug)]
pub struct Draw {
    state: u64,
}

impl TryRng for Draw {
    type Error = Infallible;

    #[inline(always)]
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok((self.next() >> 32) as u32)
    }

    #[inline(always)]
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        Ok(self.next())
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        rand::rand_core::utils::fill_bytes_via_next_word(dst, || Ok::<u64, Infallible>(self.next()))
    }
}

impl Draw {
    #[inline(always)]
    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GAMMA);
        mix(self.state)
    }
}

/// The seed of replication `rep` at point `point` of a sweep or a
/// tipping-point search.
pub fn derive_seed(seed: u64, point: usize, rep: u32) -> u64 {
    // SplitMix64's step and finaliser (Steele, Lea and Flood, 2014): a
    // bijection of u64 that scatters nearby inputs.
    let scatter = |z: u64| mix(z.wrapping_add(GAMMA));
    scatter(scatter(seed ^ scatter(point as u64)) ^ u64::from(rep))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, RngExt};

    /// What `rand_chacha` 0.10's ChaCha8, seeded with `seed_from_u64(42)`,
    /// first gives on streams 1 to 6.
    const PINNED: [u64; 6] = [
        13_222_472_167_927_179_408,
        3_387_013_202_841_124_863,
        6_672_028_999_979_260_041,
        16_805_319_813_727_100_726,
        6_506_774_120_333_837_283,
        6_634_014_504_447_066_308,
    ];

    /// The first draw of each stream of seed 42, pinned: a change of the
    /// generator, its seeding or a stream's number shows here first.
    #[test]
    fn each_stream_starts_where_it_always_did() {
        let first = [
            Stream::Workload,
            Stream::Service,
            Stream::Network,
            Stream::Jitter,
            Stream::Trigger,
            Stream::Balance,
        ]
        .map(|s| stream(42, s).random::<u64>());
        assert_eq!(first, PINNED, "{first:?}");
    }

    /// The generator is SplitMix64 number for number: its published first
    /// outputs from state 0 (Vigna's reference `splitmix64.c`).
    #[test]
    fn the_generator_is_splitmix64() {
        let mut d = Draw { state: 0 };
        assert_eq!(
            [d.next_u64(), d.next_u64(), d.next_u64()],
            [
                0xe220_a839_7b1d_cdaf,
                0x6e78_9e6a_a1b9_65f4,
                0x06c4_5d18_8009_454f
            ]
        );
    }

    /// An address gives the same numbers whenever it is asked; another
    /// address, purpose or seed gives others.
    #[test]
    fn an_address_is_its_numbers() {
        let d = Draws::new(7);
        let a = addr::attempt(addr::request(addr::client(3), 5), 1);
        let x: Vec<u64> = (0..3)
            .map(|_| 0)
            .scan(d.at(Purpose::Service, a), |r, _| Some(r.next_u64()))
            .collect();
        let y: Vec<u64> = (0..3)
            .map(|_| 0)
            .scan(d.at(Purpose::Service, a), |r, _| Some(r.next_u64()))
            .collect();
        assert_eq!(x, y);
        let first = |draws: Draws, p: Purpose, a: u64| draws.at(p, a).next_u64();
        let x0 = first(d, Purpose::Service, a);
        assert_ne!(x0, first(d, Purpose::HopOut, a));
        assert_ne!(x0, first(Draws::new(8), Purpose::Service, a));
        assert_ne!(
            x0,
            first(
                d,
                Purpose::Service,
                addr::attempt(addr::request(addr::client(3), 5), 2)
            )
        );
        assert_ne!(
            x0,
            first(
                d,
                Purpose::Service,
                addr::attempt(addr::request(addr::client(4), 5), 1)
            )
        );
    }

    /// Addresses built along different paths do not meet: over a few
    /// hundred thousand requests, attempts and calls, all distinct.
    #[test]
    fn addresses_are_distinct() {
        let mut seen = std::collections::HashSet::new();
        for source in [addr::client(0), addr::client(1), addr::OPEN, addr::spike(0)] {
            let mut request = addr::request(source, 0);
            for n in 0..2_000u64 {
                let r = if source == addr::client(0) {
                    request = addr::next(request);
                    request
                } else {
                    addr::request(source, n)
                };
                assert!(seen.insert(r));
                for k in 0..10 {
                    let a = addr::attempt(r, k);
                    assert!(seen.insert(a));
                    assert!(seen.insert(addr::call(a, 0)));
                    assert!(seen.insert(addr::call(a, 1)));
                }
            }
        }
    }

    /// Neighbouring addresses are as good as independent: the first
    /// uniform of 200 000 consecutive requests' service draws has the mean
    /// and variance of U(0, 1) (1/2 and 1/12, each within 4 standard
    /// errors), and the lag-1 correlation of the sequence is within 4 / sqrt(n)
    /// of 0; so does the first uniform of consecutive attempts.
    #[test]
    fn neighbouring_addresses_draw_independently() {
        let d = Draws::new(1);
        let n = 200_000;
        for which in 0..2 {
            let u: Vec<f64> = (0..n as u64)
                .map(|i| {
                    let a = if which == 0 {
                        addr::attempt(addr::request(addr::OPEN, i), 0)
                    } else {
                        addr::attempt(addr::request(addr::OPEN, 0), i as u32)
                    };
                    d.at(Purpose::Service, a).random::<f64>()
                })
                .collect();
            let nf = n as f64;
            let mean = u.iter().sum::<f64>() / nf;
            let var = u.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / nf;
            // sd of U(0,1) is 0.2887; of (U - 1/2)^2 it is 1/sqrt(180).
            assert!((mean - 0.5).abs() < 4.0 * 0.2887 / nf.sqrt(), "{mean}");
            assert!((var - 1.0 / 12.0).abs() < 4.0 * 0.0745 / nf.sqrt(), "{var}");
            let lag1 = u
                .windows(2)
                .map(|w| (w[0] - mean) * (w[1] - mean))
                .sum::<f64>()
                / (nf * var);
            assert!(lag1.abs() < 4.0 / nf.sqrt(), "{lag1}");
        }
    }

    /// Two purposes at one address, and one purpose at one address under
    /// neighbouring seeds, draw as if independently: over 200 000
    /// addresses the correlation of their first uniforms is within 4 /
    /// sqrt(n) of 0 (the generators start a tag's or a key's exclusive or
    /// apart, and only the output mix separates them).
    #[test]
    fn purposes_and_seeds_draw_independently() {
        let n = 200_000;
        let (d, e) = (Draws::new(1), Draws::new(2));
        let pairs: [(Draws, Purpose, Draws, Purpose); 4] = [
            (d, Purpose::Service, d, Purpose::HopOut),
            (d, Purpose::HopOut, d, Purpose::HopBack),
            (d, Purpose::Jitter, d, Purpose::Balance),
            (d, Purpose::Service, e, Purpose::Service),
        ];
        for (a, p, b, q) in pairs {
            let (x, y): (Vec<f64>, Vec<f64>) = (0..n as u64)
                .map(|i| {
                    let at = addr::attempt(addr::request(addr::OPEN, i), 0);
                    (a.at(p, at).random::<f64>(), b.at(q, at).random::<f64>())
                })
                .unzip();
            let nf = n as f64;
            let mean = |v: &[f64]| v.iter().sum::<f64>() / nf;
            let (mx, my) = (mean(&x), mean(&y));
            let cov = x
                .iter()
                .zip(&y)
                .map(|(u, v)| (u - mx) * (v - my))
                .sum::<f64>()
                / nf;
            let corr = cov * 12.0;
            assert!(corr.abs() < 4.0 / nf.sqrt(), "{p:?} against {q:?}: {corr}");
        }
    }
}
