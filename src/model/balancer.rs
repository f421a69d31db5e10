//! How an attempt picks a replica of a fleet. One balancer sees every
//! attempt, as a proxy in front of the fleet does (Envoy), or as one client
//! library shared by all the clients would: its count of outstanding attempts
//! per replica is exact. The kinds are the documented ones:
//!
//! - **round robin**: replicas in turn (Envoy's `ROUND_ROBIN` and gRPC's
//!   `round_robin` with equal weights);
//! - **random**: uniformly at random (Envoy's `RANDOM`);
//! - **least outstanding**: the replica with the fewest attempts outstanding,
//!   ties broken in turn from the last pick (NGINX's `least_conn`);
//! - **power of two choices**: two replicas drawn uniformly at random (with
//!   replacement), the one with fewer outstanding, the first on a tie (Envoy's
//!   `LEAST_REQUEST` with its default `choice_count` of 2; Mitzenmacher 2001);
//! - **pick first**: every attempt to the first replica in the rotation,
//!   moving on only when it leaves (gRPC's `pick_first`, the default policy
//!   of gRPC clients, where round robin is opt-in: one connection, to the
//!   first address that works).
//!
//! One replica is no choice: nothing is drawn, so a single server's runs are
//! exactly what they were before fleets existed.

use rand::{Rng, RngExt};

/// A balancer's kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Balancer {
    /// In turn.
    #[default]
    RoundRobin,
    /// Uniformly at random.
    Random,
    /// Fewest outstanding, ties in turn.
    LeastOutstanding,
    /// The fewer outstanding of two drawn at random.
    PowerOfTwo,
    /// The first replica in the rotation.
    PickFirst,
}

impl Balancer {
    /// The scenario-file name.
    pub fn name(self) -> &'static str {
        match self {
            Balancer::RoundRobin => "round-robin",
            Balancer::Random => "random",
            Balancer::LeastOutstanding => "least-outstanding",
            Balancer::PowerOfTwo => "power-of-two",
            Balancer::PickFirst => "pick-first",
        }
    }
}

/// A balancer at work over `n` replicas.
#[derive(Clone, Debug)]
pub struct Balance {
    kind: Balancer,
    /// Attempts sent to each replica and not yet answered or timed out.
    outstanding: Vec<u32>,
    /// The last replica picked (round robin and tie-breaking start after it).
    last: usize,
    /// The replicas that may take new attempts, in index order (all unless
    /// ejection, health checks or scaling took some out).
    open: Vec<u32>,
    /// Whether each replica is open.
    is_open: Vec<bool>,
    /// No replica is open and the balancer may not fall back to all of them:
    /// every pick finds no healthy upstream.
    none: bool,
}

/// The replica a pick names when there is no healthy replica to send to: the
/// proxy answers 503 itself (Envoy's "no healthy upstream").
pub const NO_UPSTREAM: usize = u16::MAX as usize;

impl Balance {
    /// A balancer of `kind` over `replicas` (at least 1).
    pub fn new(kind: Balancer, replicas: usize) -> Balance {
        let n = replicas.max(1);
        Balance {
            kind,
            outstanding: vec![0; n],
            // Round robin's first pick is replica 0.
            last: n - 1,
            open: (0..n as u32).collect(),
            is_open: vec![true; n],
            none: false,
        }
    }

    /// Which replicas may take new attempts from now on. If none may, every
    /// pick is [`NO_UPSTREAM`] when `none_fails`, else every replica is open.
    pub fn set_open(&mut self, open: &[bool], none_fails: bool) {
        let any = open.iter().any(|&o| o);
        self.none = !any && none_fails;
        self.is_open.clear();
        self.is_open.extend(
            (0..self.outstanding.len()).map(|i| !any || open.get(i).copied() == Some(true)),
        );
        self.open.clear();
        self.open.extend(
            self.is_open
                .iter()
                .enumerate()
                .filter(|(_, o)| **o)
                .map(|(i, _)| i as u32),
        );
    }

    /// Whether `replica` may take new attempts.
    pub fn is_open(&self, replica: usize) -> bool {
        self.is_open.get(replica).copied().unwrap_or(false)
    }

    /// The replica for the next attempt, counted as outstanding there.
    #[inline]
    pub fn pick<R: Rng + ?Sized>(&mut self, rng: &mut R) -> usize {
        if self.outstanding.len() == 1 {
            // No choice, and nothing to count: a single server's hot path.
            return 0;
        }
        self.choose(rng)
    }

    /// [`Self::pick`] among more than one replica.
    #[inline(never)]
    fn choose<R: Rng + ?Sized>(&mut self, rng: &mut R) -> usize {
        let n = self.outstanding.len();
        if self.none {
            return NO_UPSTREAM;
        }
        // With every replica open, `open[i]` is `i`: the picks are those of
        // a fleet without health.
        let m = self.open.len();
        let r = match self.kind {
            Balancer::RoundRobin if m == n => (self.last + 1) % n,
            Balancer::RoundRobin => {
                // The first open replica after the last pick, in turn.
                let after = self.open.partition_point(|&x| x as usize <= self.last);
                self.open[after % m] as usize
            }
            Balancer::Random => self.open[rng.random_range(0..m)] as usize,
            Balancer::LeastOutstanding => {
                let mut best = usize::MAX;
                for k in 1..=n {
                    let i = (self.last + k) % n;
                    if self.is_open[i]
                        && (best == usize::MAX || self.outstanding[i] < self.outstanding[best])
                    {
                        best = i;
                    }
                }
                best
            }
            Balancer::PickFirst => self.open[0] as usize,
            Balancer::PowerOfTwo => {
                let a = self.open[rng.random_range(0..m)] as usize;
                let b = self.open[rng.random_range(0..m)] as usize;
                if self.outstanding[b] < self.outstanding[a] {
                    b
                } else {
                    a
                }
            }
        };
        self.last = r;
        self.outstanding[r] += 1;
        r
    }

    /// An attempt sent to `replica` is over (answered, or timed out).
    #[inline]
    pub fn done(&mut self, replica: usize) {
        if self.outstanding.len() == 1 {
            return;
        }
        if let Some(o) = self.outstanding.get_mut(replica) {
            *o = o.saturating_sub(1);
        }
    }

    /// The replica picked for an attempt was `avoid`, which it should not
    /// be: that pick is undone and one more is made, kept whatever it is
    /// (Envoy's previous-hosts predicate with one host-selection retry).
    pub fn repick<R: Rng + ?Sized>(&mut self, avoid: usize, rng: &mut R) -> usize {
        self.done(avoid);
        self.pick(rng)
    }

    /// Whether there is a choice to make (more than one replica).
    #[inline]
    pub fn chooses(&self) -> bool {
        self.outstanding.len() > 1
    }

    /// Attempts outstanding at `replica` (not counted with one replica).
    pub fn outstanding(&self, replica: usize) -> u32 {
        self.outstanding.get(replica).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn round_robin_takes_turns_and_one_replica_draws_nothing() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let mut b = Balance::new(Balancer::RoundRobin, 3);
        let picks: Vec<usize> = (0..7).map(|_| b.pick(&mut rng)).collect();
        assert_eq!(picks, [0, 1, 2, 0, 1, 2, 0]);
        // A single replica leaves the random stream untouched.
        let before = rng.clone();
        let mut one = Balance::new(Balancer::PowerOfTwo, 1);
        assert_eq!(one.pick(&mut rng), 0);
        assert_eq!(rng, before);
    }

    #[test]
    fn least_outstanding_fills_the_emptiest_and_breaks_ties_in_turn() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let mut b = Balance::new(Balancer::LeastOutstanding, 3);
        // All idle: in turn, as round robin.
        let first: Vec<usize> = (0..3).map(|_| b.pick(&mut rng)).collect();
        assert_eq!(first, [0, 1, 2]);
        // Replica 1 finishes: it is the emptiest.
        b.done(1);
        assert_eq!(b.pick(&mut rng), 1);
        assert_eq!(
            (b.outstanding(0), b.outstanding(1), b.outstanding(2)),
            (1, 1, 1)
        );
    }

    #[test]
    fn two_choices_prefer_the_emptier_and_random_spreads_evenly() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        // Replica 0 is loaded: two choices avoid it unless both draws hit it
        // (probability 1/n^2 = 1/16 with 4 replicas).
        let mut b = Balance::new(Balancer::PowerOfTwo, 4);
        for _ in 0..100 {
            b.outstanding[0] += 1;
        }
        let mut hits = 0;
        for _ in 0..16_000 {
            let r = b.pick(&mut rng);
            b.done(r);
            hits += usize::from(r == 0);
        }
        // Binomial(16 000, 1/16): mean 1000, sd 31; 4 sd.
        assert!((hits as i64 - 1000).abs() < 124, "{hits}");
        let mut counts = [0u32; 4];
        let mut b = Balance::new(Balancer::Random, 4);
        for _ in 0..40_000 {
            let r = b.pick(&mut rng);
            b.done(r);
            counts[r] += 1;
        }
        // Binomial(40 000, 1/4): sd 87; 4 sd.
        assert!(
            counts.iter().all(|&c| (c as i64 - 10_000).abs() < 348),
            "{counts:?}"
        );
    }

    #[test]
    fn closed_replicas_get_nothing_and_all_open_is_the_plain_balancer() {
        for kind in [
            Balancer::RoundRobin,
            Balancer::Random,
            Balancer::LeastOutstanding,
            Balancer::PowerOfTwo,
        ] {
            // (Pick first is checked on its own below.)
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
            let mut b = Balance::new(kind, 5);
            b.set_open(&[true, false, true, false, true], true);
            for _ in 0..200 {
                let r = b.pick(&mut rng);
                assert!(r % 2 == 0, "{kind:?} picked closed replica {r}");
                b.done(r);
            }
            // Reopened: the same picks as a balancer that never closed any.
            let (mut a, mut plain) = (b.clone(), Balance::new(kind, 5));
            a.set_open(&[true; 5], true);
            a.last = plain.last;
            let (mut r1, mut r2) = (rng.clone(), rng.clone());
            let x: Vec<usize> = (0..50).map(|_| a.pick(&mut r1)).collect();
            let y: Vec<usize> = (0..50).map(|_| plain.pick(&mut r2)).collect();
            assert_eq!(x, y, "{kind:?}");
        }
        // Pick first sticks to the first open replica.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut b = Balance::new(Balancer::PickFirst, 4);
        assert_eq!(
            (0..3).map(|_| b.pick(&mut rng)).collect::<Vec<_>>(),
            [0, 0, 0]
        );
        b.set_open(&[false, false, true, true], true);
        assert_eq!(b.pick(&mut rng), 2);
        // Round robin skips the closed ones in turn.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut b = Balance::new(Balancer::RoundRobin, 4);
        b.set_open(&[true, false, true, true], true);
        let picks: Vec<usize> = (0..6).map(|_| b.pick(&mut rng)).collect();
        assert_eq!(picks, [0, 2, 3, 0, 2, 3]);
        // None open is every replica open, or no upstream at all.
        b.set_open(&[false; 4], false);
        assert!((0..4).all(|r| b.is_open(r)));
        b.set_open(&[false; 4], true);
        assert_eq!(b.pick(&mut rng), NO_UPSTREAM);
    }
}
