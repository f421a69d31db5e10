//! A look-aside cache in front of the server (Bronson et al., "Metastable
//! Failures in Distributed Systems", HotOS 2021): each logical request is
//! for a key; the user looks it up in the cache first and, on a hit, has
//! its answer after one network round trip, the server never asked. On a
//! miss the request goes to the server (the backend) and retries there as
//! its strategy says; only a request that succeeds fills its key, so a
//! backend too slow to answer within the users' timeouts never refills the
//! cache. Entries are evicted least recently used first, and expire `ttl`
//! after they were filled.

use rand::{Rng, RngExt};
use rand_distr::{Distribution, Zipf};

use crate::engine::{Draws, Purpose, SimDuration, SimTime};

/// How often each key is asked for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Popularity {
    /// Every key as often.
    Uniform,
    /// Key `k` (from 1) in proportion to `1 / k^s`.
    Zipf {
        /// The exponent.
        s: f64,
    },
}

/// The cache, as a scenario's `[cache]` sets it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CacheConfig {
    /// Distinct keys requests ask for.
    pub keys: u32,
    /// How often each is asked for.
    pub popularity: Popularity,
    /// Entries the cache holds at most.
    pub capacity: u32,
    /// How long an entry lives after it was filled (`None`: until evicted).
    pub ttl: Option<SimDuration>,
    /// The cache starts full, as the requests before the run left it (its
    /// steady state); otherwise empty.
    pub warm: bool,
    /// A warm-up gate: at most this many misses a second go to the backend
    /// (a token bucket holding a tenth of a second's worth); a miss beyond
    /// fails at once, never asking the server.
    pub miss_limit: Option<f64>,
}

impl CacheConfig {
    /// The share of requests the cache answers in its steady state, when
    /// entries do not expire: for keys drawn independently (the
    /// independent reference model), an LRU cache of C entries holds the C
    /// keys most recently asked for, and Che's approximation (Che, Tung
    /// and Wang, IEEE JSAC 2002; shown accurate by Fricker, Robert and
    /// Roberts, ITC 2012) gives its hit rate: the characteristic time t
    /// solves sum_k (1 - e^(-p_k t)) = C, and the hit rate is
    /// sum_k p_k (1 - e^(-p_k t)). For uniform keys it is exactly C / N.
    pub fn hit_rate(&self) -> f64 {
        let (n, c) = (self.keys, self.capacity.min(self.keys));
        if c == n {
            return 1.0;
        }
        let p: Vec<f64> = match self.popularity {
            Popularity::Uniform => return f64::from(c) / f64::from(n),
            Popularity::Zipf { s } => {
                let w: Vec<f64> = (1..=n).map(|k| f64::from(k).powf(-s)).collect();
                let total: f64 = w.iter().sum();
                w.into_iter().map(|x| x / total).collect()
            }
        };
        let held = |t: f64| p.iter().map(|&q| 1.0 - (-q * t).exp()).sum::<f64>();
        let (mut lo, mut hi) = (0.0, 1.0);
        while held(hi) < f64::from(c) {
            hi *= 2.0;
        }
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if held(mid) < f64::from(c) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let t = 0.5 * (lo + hi);
        p.iter().map(|&q| q * (1.0 - (-q * t).exp())).sum()
    }
}

const NONE: u32 = u32::MAX;

/// Bytes the cache holds per key ([`crate::runner::run_bytes`] counts them
/// before a run is allowed): its fill time and its two neighbours.
pub const BYTES_PER_KEY: u64 =
    (std::mem::size_of::<SimTime>() + 2 * std::mem::size_of::<u32>()) as u64;

/// The cache's state during a run.
#[derive(Clone, Debug)]
pub struct Cache {
    cfg: CacheConfig,
    zipf: Option<Zipf<f64>>,
    /// Per key: when it was filled, or `SimTime::NEVER` when not cached.
    filled: Vec<SimTime>,
    /// The recency list, most recent at `head`: per key its neighbours.
    prev: Vec<u32>,
    next: Vec<u32>,
    head: u32,
    tail: u32,
    len: u32,
    /// Down (a `cache-flush` trigger in force): every lookup misses and
    /// nothing is filled.
    down: bool,
    /// The warm-up gate's tokens and when they were last topped up.
    tokens: f64,
    topped: SimTime,
}

impl Cache {
    /// The cache `cfg` sets, at time zero; a warm one is filled as by the
    /// requests before the run, drawn from `draws` ([`Cache::warm_up`]).
    pub fn new(cfg: &CacheConfig, draws: Draws) -> Self {
        let n = cfg.keys as usize;
        let mut c = Cache {
            cfg: *cfg,
            zipf: match cfg.popularity {
                Popularity::Zipf { s } => Zipf::new(f64::from(cfg.keys), s).ok(),
                Popularity::Uniform => None,
            },
            filled: vec![SimTime::NEVER; n],
            prev: vec![NONE; n],
            next: vec![NONE; n],
            head: NONE,
            tail: NONE,
            len: 0,
            down: false,
            tokens: cfg.miss_limit.map_or(0.0, burst),
            topped: SimTime::ZERO,
        };
        if cfg.warm {
            c.warm_up(draws);
        }
        c
    }

    /// Fills the cache as the requests before the run left it. An LRU
    /// cache holds the C keys most recently asked for, most recent first.
    /// With keys drawn independently (key k with probability p_k), the
    /// requests for each key are, in continuous time, Poisson at rate p_k
    /// and independent of the others', so the time back to each key's last
    /// request is exponential with rate p_k: the C keys with the shortest
    /// such times, in their order, are an exact draw of the cache's steady
    /// state (one draw per key, from `draws`).
    fn warm_up(&mut self, draws: Draws) {
        let n = self.cfg.keys;
        let c = self.cfg.capacity.min(n) as usize;
        if c == 0 {
            return;
        }
        let weight = |k: u32| match self.cfg.popularity {
            Popularity::Uniform => 1.0,
            Popularity::Zipf { s } => f64::from(k + 1).powf(-s),
        };
        let mut ages: Vec<(f64, u32)> = (0..n)
            .map(|k| {
                let u: f64 = draws.at(Purpose::WarmUp, u64::from(k)).random();
                (-(1.0 - u).ln() / weight(k), k)
            })
            .collect();
        let by_age = |a: &(f64, u32), b: &(f64, u32)| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1));
        if c < ages.len() {
            ages.select_nth_unstable_by(c - 1, by_age);
            ages.truncate(c);
        }
        ages.sort_unstable_by(by_age);
        // The oldest first, so the most recent ends at the head.
        for &(_, k) in ages.iter().rev() {
            self.fill(k, SimTime::ZERO);
        }
    }

    /// The key a request asks for, drawn from `rng` (key 0 the most
    /// popular).
    pub fn key<R: Rng + ?Sized>(&self, rng: &mut R) -> u32 {
        match &self.zipf {
            // Zipf's keys are 1 (the most popular) to n.
            Some(z) => (z.sample(rng) as u32).clamp(1, self.cfg.keys) - 1,
            None => rng.random_range(0..self.cfg.keys),
        }
    }

    /// Entries held now.
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Whether the cache holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn unlink(&mut self, k: u32) {
        let (p, n) = (self.prev[k as usize], self.next[k as usize]);
        if p == NONE {
            self.head = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NONE {
            self.tail = p;
        } else {
            self.prev[n as usize] = p;
        }
        self.prev[k as usize] = NONE;
        self.next[k as usize] = NONE;
    }

    fn push_front(&mut self, k: u32) {
        self.prev[k as usize] = NONE;
        self.next[k as usize] = self.head;
        if self.head != NONE {
            self.prev[self.head as usize] = k;
        }
        self.head = k;
        if self.tail == NONE {
            self.tail = k;
        }
    }

    fn evict(&mut self, k: u32) {
        self.unlink(k);
        self.filled[k as usize] = SimTime::NEVER;
        self.len -= 1;
    }

    /// Looks `key` up at `now`: a hit makes it the most recently used; an
    /// expired entry is dropped and misses.
    pub fn get(&mut self, key: u32, now: SimTime) -> bool {
        if self.down {
            return false;
        }
        let at = self.filled[key as usize];
        if at == SimTime::NEVER {
            return false;
        }
        if self.cfg.ttl.is_some_and(|ttl| now >= at + ttl) {
            self.evict(key);
            return false;
        }
        self.unlink(key);
        self.push_front(key);
        true
    }

    /// A request for `key` succeeded at `now`: the answer is cached (the
    /// least recently used entry makes room), unless the cache is down.
    pub fn fill(&mut self, key: u32, now: SimTime) {
        if self.down || self.cfg.capacity == 0 {
            return;
        }
        if self.filled[key as usize] != SimTime::NEVER {
            self.unlink(key);
            self.len -= 1;
        } else if self.len >= self.cfg.capacity {
            let lru = self.tail;
            self.evict(lru);
        }
        self.filled[key as usize] = now;
        self.push_front(key);
        self.len += 1;
    }

    /// The warm-up gate lets a miss through to the backend at `now`.
    pub fn gate(&mut self, now: SimTime) -> bool {
        let Some(rate) = self.cfg.miss_limit else {
            return true;
        };
        let elapsed = (now - self.topped).as_secs_f64();
        self.tokens = (self.tokens + elapsed * rate).min(burst(rate));
        self.topped = now;
        // (A tolerance for the sums of fractions of a token.)
        if self.tokens >= 1.0 - 1e-9 {
            self.tokens = (self.tokens - 1.0).max(0.0);
            true
        } else {
            false
        }
    }

    /// The cache is lost (a `cache-flush` trigger begins): empty, and down
    /// until [`Cache::restore`].
    pub fn flush(&mut self) {
        while self.tail != NONE {
            let k = self.tail;
            self.evict(k);
        }
        self.down = true;
    }

    /// The cache is back, empty.
    pub fn restore(&mut self) {
        self.down = false;
    }
}

/// The gate's bucket: a tenth of a second's misses, at least one.
fn burst(rate: f64) -> f64 {
    (rate / 10.0).max(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(keys: u32, capacity: u32) -> CacheConfig {
        CacheConfig {
            keys,
            popularity: Popularity::Uniform,
            capacity,
            ttl: None,
            warm: false,
            miss_limit: None,
        }
    }

    #[test]
    fn evicts_the_least_recently_used() {
        let mut c = Cache::new(&cfg(10, 2), Draws::new(1));
        c.fill(1, SimTime(0));
        c.fill(2, SimTime(1));
        assert!(c.get(1, SimTime(2)), "1 is now the most recent");
        c.fill(3, SimTime(3));
        assert!(!c.get(2, SimTime(4)), "2 was the least recently used");
        assert!(c.get(1, SimTime(4)) && c.get(3, SimTime(4)));
        assert_eq!(c.len(), 2);
    }

    #[test]
    fn entries_expire_their_ttl_after_the_fill() {
        let mut c = Cache::new(
            &CacheConfig {
                ttl: Some(SimDuration(10)),
                ..cfg(10, 5)
            },
            Draws::new(1),
        );
        c.fill(4, SimTime(100));
        assert!(c.get(4, SimTime(109)));
        assert!(!c.get(4, SimTime(110)));
        assert_eq!(c.len(), 0);
    }

    #[test]
    fn a_warm_cache_is_full_and_a_flush_empties_it() {
        let mut c = Cache::new(
            &CacheConfig {
                warm: true,
                ..cfg(10, 3)
            },
            Draws::new(1),
        );
        assert_eq!(c.len(), 3);
        let held: Vec<u32> = (0..10)
            .filter(|&k| c.filled[k as usize] == SimTime::ZERO)
            .collect();
        assert_eq!(held.len(), 3);
        assert!(held.iter().all(|&k| c.get(k, SimTime(1))));
        c.flush();
        assert!(c.is_empty());
        c.fill(5, SimTime(2));
        assert!(
            !c.get(5, SimTime(3)),
            "down: nothing is filled, nothing hits"
        );
        c.restore();
        c.fill(5, SimTime(4));
        assert!(c.get(5, SimTime(5)));
    }

    #[test]
    fn the_gate_lets_its_rate_of_misses_through() {
        let mut c = Cache::new(
            &CacheConfig {
                miss_limit: Some(100.0),
                ..cfg(10, 3)
            },
            Draws::new(1),
        );
        // A tenth of a second's worth at once, then 100 a second.
        let at_once = (0..50).filter(|_| c.gate(SimTime(0))).count();
        assert_eq!(at_once, 10);
        let ms = 1_000_000;
        let later = (1..=1000u64).filter(|i| c.gate(SimTime(i * ms))).count();
        assert_eq!(later, 100, "one every 10 ms for a second");
    }

    #[test]
    fn che_hit_rates() {
        assert!((cfg(1000, 900).hit_rate() - 0.9).abs() < 1e-12);
        assert_eq!(cfg(10, 10).hit_rate(), 1.0);
        // Two keys asked for 2/3 and 1/3 of the time, one place: t solves
        // 2 - e^(-2t/3) - e^(-t/3) = 1, i.e. x^2 + x - 1 = 0 with
        // x = e^(-t/3): x = 0.618..., and the hit rate is
        // 2/3 (1 - x^2) + 1/3 (1 - x) = 0.4907...
        let z = CacheConfig {
            popularity: Popularity::Zipf { s: 1.0 },
            ..cfg(2, 1)
        };
        let x = (5f64.sqrt() - 1.0) / 2.0;
        let expected = 2.0 / 3.0 * (1.0 - x * x) + (1.0 - x) / 3.0;
        assert!((z.hit_rate() - expected).abs() < 1e-9, "{}", z.hit_rate());
    }

    /// A warm Zipf cache is LRU's steady state: its hit rate from the
    /// first request is Che's (within sampling noise), not the top keys'.
    #[test]
    fn a_warm_lru_cache_starts_in_its_steady_state() {
        let c = CacheConfig {
            popularity: Popularity::Zipf { s: 0.8 },
            warm: true,
            ..cfg(2000, 500)
        };
        let mut cache = Cache::new(&c, Draws::new(7));
        let n = 20_000u64;
        let draws = Draws::new(8);
        let hits = (0..n)
            .filter(|&i| {
                let key = cache.key(&mut draws.at(Purpose::Key, i));
                let hit = cache.get(key, SimTime(1));
                if !hit {
                    cache.fill(key, SimTime(1));
                }
                hit
            })
            .count();
        let (h, rate) = (c.hit_rate(), hits as f64 / n as f64);
        // Binomial noise, 4 sd, plus Che's own error (under 1% here).
        let tol = 4.0 * (h * (1.0 - h) / n as f64).sqrt() + 0.01;
        assert!((rate - h).abs() < tol, "{rate} vs Che's {h}");
    }
}
