//! The Markov twin of a one-server world: a continuous-time Markov chain on
//! (requests at the server, retries waiting), truncated and solved with a
//! sparse LU, giving the world's stationary modes, the expected time to
//! leave the bad one, and the probability that a burst tips the world into
//! it (Metafor, HotOS 2025, models retry storms this way; this chain is our
//! own, built from the simulator's semantics).
//!
//! The state is `(n, r)`: `n` requests at the server (queued and in
//! service, including those whose callers have given up: the server still
//! works on them), `r` retries waiting to be sent. Its moves:
//!
//! - an attempt (a new request at rate `lambda`, or a waiting retry, each at
//!   rate `nu`) joins the server; with probability `q(n)` it will not be
//!   answered within its timeout, having found `n` ahead, and its caller
//!   will retry it (if it has retries left: with probability `R / (R + 1)`,
//!   the share of a request's attempts that have a retry after them when
//!   every attempt times out), so a retry joins the waiting ones;
//! - at a full server an attempt is refused, and retried the same way;
//! - a worker finishes a request at rate `mu`: `n - 1`.
//!
//! What the chain assumes that the simulator does not: service times and
//! the wait before a retry are exponential (a waiting retry fires at rate
//! `nu = 1 / (timeout + mean backoff)`), whereas the simulator's timeouts
//! are fixed and its backoffs are what the strategy draws; the decision
//! that an attempt will time out is made when it arrives, from `n`, whereas
//! the simulator knows it only after the timeout; the retry pool is capped
//! at `r_max` (the mass the cap cuts off is reported).

mod solve;
#[cfg(test)]
mod tests;

use crate::model::{Dist, Load, ServerModel, WorldConfig};
use crate::retry::{BackoffKind, Strategy};

/// The numbers of a one-server world the chain is built from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// New requests per second (Poisson).
    pub lambda: f64,
    /// Workers.
    pub workers: u32,
    /// Services per second of one worker (exponential).
    pub mu: f64,
    /// Requests the server holds at most (workers plus queue).
    pub capacity: u32,
    /// An attempt's timeout less the network's round trip, seconds.
    pub timeout: f64,
    /// Retries after the first attempt.
    pub retries: u32,
    /// Mean wait before a retry, seconds.
    pub backoff: f64,
}

impl Params {
    /// The chain's numbers for `strategy` in `world`, or why the chain does
    /// not describe that world: it needs an open load, one server of
    /// exponential service without crashes or defences, timeouts and
    /// retries without budgets, breakers or hedging.
    pub fn from_world(world: &WorldConfig, strategy: &Strategy) -> Result<Params, String> {
        let Load::Open { rate_per_s } = world.load else {
            return Err("the load is not open (Poisson arrivals): the chain's new requests come at a fixed rate".into());
        };
        let ServerModel::Capacity(server) = &world.server else {
            return Err("the server is an OCC record, not a queue".into());
        };
        let refuse = |why: &str| Err(format!("{why}: the chain has no state for it"));
        if world.chain.is_some() {
            return refuse("the world is a call chain");
        }
        if server.replicas > 1 {
            return refuse("the server is a fleet");
        }
        if world.cache.is_some() {
            return refuse("the world has a cache");
        }
        if server.overload.crash_at.is_some() {
            return refuse("the server crashes (crash_at)");
        }
        if server.limiter.is_some() || server.codel.is_some() || server.shed.is_some() {
            return refuse("the server sheds load");
        }
        if server.drop_expired {
            return refuse("the server drops work whose caller gave up");
        }
        if strategy.budget.is_some()
            || strategy.breaker.is_some()
            || strategy.throttle.is_some()
            || strategy.hedging.is_some()
        {
            return refuse("the strategy has a budget, breaker, throttle or hedging");
        }
        let Dist::Exponential { mean, .. } = &server.service else {
            return Err("the service time is not exponential, as the chain's is".into());
        };
        let Some(timeout) = strategy.policy.timeout else {
            return refuse("attempts have no timeout");
        };
        let rtt = 2.0 * world.network.mean_nanos() / 1e9;
        Ok(Params {
            lambda: rate_per_s,
            workers: server.workers,
            mu: 1e9 / mean.as_nanos_f64(),
            capacity: server.workers.saturating_add(server.queue_capacity),
            timeout: (timeout.as_secs_f64() - rtt).max(0.0),
            retries: strategy.policy.max_retries,
            backoff: mean_backoff(strategy),
        })
    }

    /// Offered load over capacity without retries.
    pub fn utilisation(&self) -> f64 {
        self.lambda / (f64::from(self.workers) * self.mu)
    }
}

/// The mean wait before a retry, over a request's retries: drawn from the
/// strategy's own backoff, 4000 times per retry, on a fixed stream.
fn mean_backoff(strategy: &Strategy) -> f64 {
    let b = &strategy.backoff;
    if b.kind == BackoffKind::None || strategy.policy.max_retries == 0 {
        return 0.0;
    }
    let mut rng = crate::engine::rng::stream(1, crate::engine::rng::Stream::Jitter);
    let (mut sum, mut count) = (0.0, 0u32);
    for _ in 0..4000 {
        let mut memory = 0.0;
        for n in 1..=strategy.policy.max_retries.min(64) {
            let (d, m) = b.delay(n, memory, &mut rng);
            memory = m;
            sum += d.as_secs_f64();
            count += 1;
        }
    }
    sum / f64::from(count.max(1))
}

/// The chain, truncated.
#[derive(Clone, Debug)]
pub struct Chain {
    /// Its numbers.
    pub params: Params,
    /// The most retries waiting (the truncation).
    pub r_max: usize,
    /// `q[n]`: the probability that an attempt finding `n` at the server is
    /// not answered within its timeout.
    pub late: Vec<f64>,
}

impl Chain {
    /// The chain of `params`, with at most `r_max` retries waiting.
    pub fn new(params: Params, r_max: usize) -> Chain {
        let late = (0..=params.capacity as usize)
            .map(|n| late_probability(n, params.workers, params.mu, params.timeout))
            .collect();
        Chain {
            params,
            r_max,
            late,
        }
    }

    /// States in all.
    pub fn states(&self) -> usize {
        (self.params.capacity as usize + 1) * (self.r_max + 1)
    }

    /// The index of state `(n, r)`.
    pub fn index(&self, n: usize, r: usize) -> usize {
        r * (self.params.capacity as usize + 1) + n
    }

    /// The rate of retries one waiting retry fires at, per second.
    pub fn nu(&self) -> f64 {
        1.0 / (self.params.timeout + self.params.backoff).max(1e-6)
    }

    /// The moves out of `(n, r)`: `(n', r', rate)`, self-moves left out.
    pub fn moves(&self, n: usize, r: usize, out: &mut Vec<(usize, usize, f64)>) {
        out.clear();
        let p = &self.params;
        let k = p.capacity as usize;
        let retried = f64::from(p.retries) / f64::from(p.retries + 1);
        let grow = |r: usize| (r < self.r_max).then_some(r + 1);
        // New requests, and waiting retries sent.
        let sent = r as f64 * self.nu();
        if n < k {
            let q = self.late[n] * retried;
            // A new one: retried later with probability q.
            if let Some(r1) = grow(r) {
                out.push((n + 1, r1, p.lambda * q));
            }
            out.push((n + 1, r, p.lambda * (1.0 - q)));
            if r > 0 {
                // A retry sent: it leaves the pool, and comes back to it
                // with probability q.
                out.push((n + 1, r - 1, sent * (1.0 - q)));
                out.push((n + 1, r, sent * q));
            }
        } else {
            // Refused: retried later, or given up.
            if let Some(r1) = grow(r) {
                out.push((n, r1, p.lambda * retried));
            }
            if r > 0 {
                out.push((n, r - 1, sent * (1.0 - retried)));
            }
        }
        if n > 0 {
            let busy = n.min(p.workers as usize) as f64;
            out.push((n - 1, r, busy * p.mu));
        }
        out.retain(|m| m.2 > 0.0 && (m.0, m.1) != (n, r));
    }

    /// The stationary distribution, by state index.
    pub fn stationary(&self) -> Result<Vec<f64>, String> {
        solve::stationary(self)
    }
}

/// What the chain says about a world.
#[derive(Clone, Debug, PartialEq)]
pub struct Analysis {
    /// The stationary distribution of `n`, requests at the server (resolved
    /// to about 1e-16 of the largest state's mass: a mode the world seldom
    /// visits may not show here; the exit times say how seldom).
    pub marginal: Vec<f64>,
    /// The good mode's core: `n <= good` (the workers the load keeps busy).
    pub good: usize,
    /// Where the chain's drift turns: the least `n` at which attempts
    /// (new ones and the retries of late ones) come faster than the workers
    /// serve; `None` if they never do, and the world has one mode.
    pub split: Option<usize>,
    /// Retries waiting in the bad mode (the full server), by the drift, at
    /// most the chain's `r_max`.
    pub bad_retries: usize,
    /// Whether the drift's retries waiting in the bad mode are more than
    /// the chain holds: its bad mode is then cut short, and its figures
    /// are not the world's.
    pub cut_short: bool,
    /// Expected seconds from the full server, with `bad_retries` waiting,
    /// back to the good mode's core.
    pub bad_exit_s: Option<f64>,
    /// Expected seconds from the good mode's core, no retry waiting, to a
    /// full server.
    pub good_exit_s: Option<f64>,
    /// Long-run share of time in the bad mode: its exit time over both (1
    /// when only the bad mode's exit time is beyond 10^12 s; NaN when both
    /// are).
    pub bad_share: f64,
    /// `tip[n0]`: the probability that after a burst that leaves `n0`
    /// requests at the server (and the retries of those of them that will be
    /// late waiting: [`Chain::burst_retries`]) the world fills the server
    /// before it gets back to the good mode's core.
    pub tip: Vec<f64>,
    /// Stationary mass where the retry pool is full (the truncation's cost).
    pub truncated: f64,
}

impl Chain {
    /// The attempts per second a server holding `n` draws when every late
    /// attempt is retried as the chain says: `lambda / (1 - p q(n))`.
    pub fn attempts_at(&self, n: usize) -> f64 {
        let p = &self.params;
        let retried = f64::from(p.retries) / f64::from(p.retries + 1);
        p.lambda / (1.0 - retried * self.late[n]).max(1e-12)
    }

    /// The retries a burst that leaves `n0` at an empty server will make:
    /// each of its requests that will be late (the `j`-th found `j` ahead)
    /// is retried, as the chain decides it for any attempt on arrival.
    pub fn burst_retries(&self, n0: usize) -> usize {
        let p = &self.params;
        let retried = f64::from(p.retries) / f64::from(p.retries + 1);
        let late: f64 = self.late[..n0.min(self.late.len())].iter().sum();
        ((late * retried).round() as usize).min(self.r_max)
    }

    /// Solves the chain: its modes from its drift, the exit times between
    /// them, the tipping probability from each `n0`.
    pub fn analyse(&self) -> Result<Analysis, String> {
        let pi = self.stationary()?;
        let p = &self.params;
        let k = p.capacity as usize;
        let mut marginal = vec![0.0; k + 1];
        let mut truncated = 0.0;
        for r in 0..=self.r_max {
            for (n, m) in marginal.iter_mut().enumerate() {
                let x = pi[self.index(n, r)];
                *m += x;
                if r == self.r_max {
                    truncated += x;
                }
            }
        }
        let service = f64::from(p.workers) * p.mu;
        let split = (0..=k).find(|&n| n >= p.workers as usize && self.attempts_at(n) >= service);
        let good = ((p.lambda / p.mu).floor() as usize)
            .min(p.workers as usize)
            .min(split.map_or(k, |s| s.saturating_sub(1)));
        let retried = f64::from(p.retries) / f64::from(p.retries + 1);
        let drift_retries =
            (self.attempts_at(k) * retried * self.late[k] / self.nu()).round() as usize;
        let bad_retries = drift_retries.min(self.r_max);
        let cut_short = split.is_some() && drift_retries >= self.r_max;
        let (bad_exit_s, good_exit_s, tip) = match split {
            Some(_) if good < k => {
                let down = solve::time_to(self, &|n| n <= good)?;
                let up = solve::time_to(self, &|n| n >= k)?;
                let tip = solve::committor(self, good, k)?;
                (
                    Some(down[self.index(k, bad_retries)]),
                    Some(up[self.index(good, 0)]),
                    (0..=k)
                        .map(|n| tip[self.index(n, self.burst_retries(n))])
                        .collect(),
                )
            }
            _ => (None, None, vec![0.0; k + 1]),
        };
        // Beyond 10^12 s the solves lose their precision (the systems'
        // condition grows with the times): such a time is "longer than
        // that", infinite here.
        let resolved = |t: Option<f64>| {
            t.map(|t| {
                if t > 0.0 && t < 1e12 {
                    t
                } else {
                    f64::INFINITY
                }
            })
        };
        let (bad_exit_s, good_exit_s) = (resolved(bad_exit_s), resolved(good_exit_s));
        let bad_share = match (bad_exit_s, good_exit_s) {
            (Some(b), Some(g)) if b.is_infinite() && g.is_infinite() => f64::NAN,
            (Some(b), _) if b.is_infinite() => 1.0,
            (Some(b), Some(g)) if b + g > 0.0 => b / (b + g),
            _ => 0.0,
        };
        Ok(Analysis {
            marginal,
            good,
            split,
            bad_retries,
            cut_short,
            bad_exit_s,
            good_exit_s,
            bad_share,
            tip,
            truncated,
        })
    }
}

/// The probability that an attempt finding `n` at a server of `c` workers,
/// each serving at rate `mu`, in FIFO order, is not done within `t`
/// seconds: with `n < c` its own service, else `n - c + 1` departures at
/// rate `c mu` before it starts, then its service.
pub fn late_probability(n: usize, c: u32, mu: f64, t: f64) -> f64 {
    let c = c.max(1) as usize;
    if n < c {
        return (-mu * t).exp();
    }
    let k = n - c + 1;
    if c == 1 {
        // Erlang(k + 1, mu) > t.
        return poisson_cdf(k, mu * t);
    }
    let cf = c as f64;
    let waits_longer = poisson_cdf(k - 1, cf * mu * t);
    // The wait ends before t and the service runs past it:
    // e^{-mu t} (c / (c - 1))^k P(Poisson((c - 1) mu t) >= k).
    let tail = poisson_tail(k, (cf - 1.0) * mu * t);
    let log = -mu * t + k as f64 * (cf / (cf - 1.0)).ln() + tail.ln();
    (waits_longer + if tail > 0.0 { log.exp() } else { 0.0 }).min(1.0)
}

/// ln of the Poisson(a) probability of `j`.
fn ln_pmf(j: usize, a: f64) -> f64 {
    if a == 0.0 {
        return if j == 0 { 0.0 } else { f64::NEG_INFINITY };
    }
    let ln_fact: f64 = (2..=j).map(|i| (i as f64).ln()).sum();
    -a + j as f64 * a.ln() - ln_fact
}

/// P(Poisson(a) <= k).
pub fn poisson_cdf(k: usize, a: f64) -> f64 {
    if a <= 0.0 {
        return 1.0;
    }
    if (k as f64) > a {
        return (1.0 - poisson_tail(k + 1, a)).clamp(0.0, 1.0);
    }
    let mut term = ln_pmf(k, a);
    let mut sum = 0.0;
    // Downwards from k: each term is the one above times j / a.
    for j in (0..=k).rev() {
        let t = term.exp();
        sum += t;
        if t < sum * 1e-17 {
            break;
        }
        term += (j as f64).ln() - a.ln();
    }
    sum.min(1.0)
}

/// P(Poisson(a) >= k).
pub fn poisson_tail(k: usize, a: f64) -> f64 {
    if k == 0 {
        return 1.0;
    }
    if a <= 0.0 {
        return 0.0;
    }
    if (k as f64) <= a {
        return (1.0 - poisson_cdf(k - 1, a)).clamp(0.0, 1.0);
    }
    let mut term = ln_pmf(k, a);
    let mut sum = 0.0;
    let mut j = k;
    // Upwards from k: each term is the one below times a / (j + 1).
    loop {
        let t = term.exp();
        sum += t;
        if t < sum * 1e-17 || j > k + 100_000 {
            break;
        }
        j += 1;
        term += a.ln() - (j as f64).ln();
    }
    sum.min(1.0)
}
