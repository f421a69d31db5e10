//! Adaptive concurrency limits in front of a server: a request that finds
//! `limit` requests already admitted (queued or in service) is answered
//! 503 at once; the limit moves with the latencies the server's answers
//! take. Four controllers, each as its authors state it:
//!
//! - Envoy's adaptive concurrency filter, gradient controller (Envoy
//!   documentation, "Adaptive Concurrency"; `gradient_controller.cc`): a
//!   minimum RTT measured with the limit pinned at `min_concurrency` every
//!   `min_rtt_interval` (plus jitter), and every `update_interval` the
//!   window's sample RTT (a percentile) sets
//!   `limit = gradient * limit + sqrt(gradient * limit)`, with
//!   `gradient = clamp(minRTT * (1 + buffer) / sampleRTT, 0.5, 2)`; five
//!   windows in a row at the minimum start a new minRTT measurement.
//! - Netflix concurrency-limits' `VegasLimit`, `Gradient2Limit` and
//!   `AIMDLimit` (github.com/Netflix/concurrency-limits), updated on every
//!   sample as their `Limit` is (no `WindowedLimit` around them), with the
//!   number of requests in flight when the request was admitted.
//!
//! What a sample is: a served request gives its time in the server (from
//! arrival to the end of its service). A request CoDel drops (answered
//! 503) is a sample for Envoy (the filter sees the answer) and a drop for
//! Netflix's limits; a request dropped silently because its caller gave up
//! is a drop for Netflix's limits and cancelled for Envoy's; requests lost
//! in an outage or a crash are ignored by all.

use crate::engine::{Draws, Purpose, SimDuration, SimTime};
use crate::model::{Aimd, EnvoyGradient, Gradient2, LimiterConfig, Vegas};
use rand::RngExt;

/// What became of an admitted request, as the limiter hears it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sample {
    /// Served: its latency is a sample.
    Served,
    /// Dropped by the queue's discipline and answered 503.
    Shed,
    /// Dropped unserved because its caller had given up.
    Expired,
}

/// The draws of one limiter: its own sequence at its replica's address.
#[derive(Clone, Debug)]
struct Dice {
    draws: Draws,
    address: u64,
    drawn: u64,
}

impl Dice {
    /// A uniform draw in `[lo, hi)`, the next.
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        let at = self.address ^ self.drawn;
        self.drawn += 1;
        lo + (hi - lo) * self.draws.at(Purpose::Limiter, at).random::<f64>()
    }
}

/// A limiter's state.
#[derive(Clone, Debug)]
pub enum Limiter {
    /// Envoy's gradient controller.
    Gradient(Box<GradientState>),
    /// Netflix's `VegasLimit`.
    Vegas(VegasState),
    /// Netflix's `Gradient2Limit`.
    Gradient2(Gradient2State),
    /// Netflix's `AIMDLimit`.
    Aimd(AimdState),
}

impl Limiter {
    /// A limiter for replica `replica` as `cfg` sets it, its first state at
    /// time zero.
    pub fn new(cfg: &LimiterConfig, draws: Draws, replica: u64) -> Self {
        let mut dice = Dice {
            draws,
            address: replica.wrapping_mul(0x9e37_79b9_7f4a_7c15) << 20,
            drawn: 0,
        };
        match cfg {
            LimiterConfig::Gradient(c) => {
                let mut g = GradientState::new(*c, dice);
                g.enter_min_rtt_window(SimTime::ZERO);
                Limiter::Gradient(Box::new(g))
            }
            LimiterConfig::Vegas(c) => Limiter::Vegas(VegasState {
                cfg: *c,
                estimate: f64::from(c.initial),
                rtt_noload: 0,
                probe_count: 0,
                probe_jitter: dice.uniform(0.5, 1.0),
                dice,
            }),
            LimiterConfig::Gradient2(c) => Limiter::Gradient2(Gradient2State {
                cfg: *c,
                estimate: f64::from(c.initial),
                long_rtt: 0.0,
                long_count: 0,
                long_sum: 0.0,
            }),
            LimiterConfig::Aimd(c) => Limiter::Aimd(AimdState {
                cfg: *c,
                limit: c.initial,
            }),
        }
    }

    /// The limit now (after any timer due by `now` has fired).
    pub fn limit(&mut self, now: SimTime) -> u32 {
        match self {
            Limiter::Gradient(g) => {
                g.advance(now);
                g.limit
            }
            Limiter::Vegas(v) => v.estimate as u32,
            Limiter::Gradient2(g) => g.estimate as u32,
            Limiter::Aimd(a) => a.limit,
        }
    }

    /// Whether a request arriving at `now`, with `inflight` admitted
    /// requests still in the server, may go in.
    #[inline]
    pub fn admits(&mut self, now: SimTime, inflight: usize) -> bool {
        (inflight as u64) < u64::from(self.limit(now))
    }

    /// A request admitted at `arrived`, with `inflight` requests admitted
    /// and not yet ended then (itself included), ended at `now` as `how`.
    pub fn on_done(&mut self, now: SimTime, arrived: SimTime, inflight: u32, how: Sample) {
        let rtt = (now - arrived).0.max(1);
        let dropped = how != Sample::Served;
        match self {
            Limiter::Gradient(g) => {
                g.advance(now);
                if how != Sample::Expired && arrived >= g.epoch {
                    g.record(now, rtt);
                }
            }
            Limiter::Vegas(v) => v.update(rtt, inflight, dropped),
            Limiter::Gradient2(g) => g.update(rtt, inflight),
            Limiter::Aimd(a) => a.update(rtt, inflight, dropped),
        }
    }
}

/// Envoy's gradient controller.
#[derive(Clone, Debug)]
pub struct GradientState {
    cfg: EnvoyGradient,
    dice: Dice,
    limit: u32,
    /// The limit to restore after a minRTT measurement (0: not measuring).
    deferred: u32,
    min_rtt: u64,
    /// Samples since the window began, ns.
    samples: Vec<u64>,
    /// When the current minRTT measurement began: older requests' samples
    /// are ignored.
    epoch: SimTime,
    /// Windows in a row that set the limit to the minimum.
    at_min: u32,
    sample_timer: Option<SimTime>,
    min_rtt_timer: Option<SimTime>,
}

impl GradientState {
    fn new(cfg: EnvoyGradient, dice: Dice) -> Self {
        GradientState {
            cfg,
            dice,
            limit: cfg.min_concurrency,
            deferred: 0,
            min_rtt: 0,
            samples: Vec::new(),
            epoch: SimTime::ZERO,
            at_min: 0,
            sample_timer: Some(SimTime::ZERO + cfg.update_interval),
            min_rtt_timer: None,
        }
    }

    /// Fires the timers due by `now`, in time order (the sample window's
    /// first at a tie).
    fn advance(&mut self, now: SimTime) {
        while let Some(t) = self.next_timer().filter(|t| *t <= now) {
            if self.sample_timer == Some(t) {
                self.on_sample_timer(t);
            } else {
                self.min_rtt_timer = None;
                self.enter_min_rtt_window(t);
            }
        }
    }

    /// Envoy's jitter on the next minRTT measurement: a whole number of
    /// milliseconds below `jitter * interval`.
    fn jitter(&mut self) -> SimDuration {
        let range = (self.cfg.min_rtt_interval.as_nanos_f64() / 1e6 * self.cfg.jitter).ceil();
        if range < 1.0 {
            return SimDuration::ZERO;
        }
        let ms = self.dice.uniform(0.0, range).floor();
        SimDuration::from_nanos_f64(ms * 1e6)
    }

    fn measuring(&self) -> bool {
        self.deferred > 0
    }

    fn next_timer(&self) -> Option<SimTime> {
        match (self.sample_timer, self.min_rtt_timer) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The limit becomes `new`; five windows in a row at the minimum
    /// (outside a measurement) start a minRTT measurement at once.
    fn set_limit(&mut self, new: u32, now: SimTime) {
        let old = self.limit;
        self.limit = new;
        let min = self.cfg.min_concurrency;
        if !self.measuring() && old == min && new == min {
            self.at_min += 1;
        } else {
            self.at_min = 0;
        }
        if self.at_min >= 5 {
            self.min_rtt_timer = Some(now);
        }
    }

    fn enter_min_rtt_window(&mut self, now: SimTime) {
        if self.measuring() {
            return;
        }
        self.deferred = self.limit.max(1);
        self.set_limit(self.cfg.min_concurrency, now);
        self.samples.clear();
        self.epoch = now;
    }

    /// The window's aggregate: the `percentile` sample by nearest rank.
    fn aggregate(&mut self) -> u64 {
        self.samples.sort_unstable();
        let n = self.samples.len();
        let rank = ((self.cfg.percentile * n as f64).ceil() as usize).clamp(1, n);
        let v = self.samples[rank - 1];
        self.samples.clear();
        v
    }

    fn record(&mut self, now: SimTime, rtt: u64) {
        self.samples.push(rtt);
        if self.measuring() && self.samples.len() >= self.cfg.request_count as usize {
            self.min_rtt = self.aggregate();
            let restore = self.deferred;
            self.set_limit(restore, now);
            self.deferred = 0;
            let jitter = self.jitter();
            self.min_rtt_timer = Some(now + self.cfg.min_rtt_interval + jitter);
            self.sample_timer = Some(now + self.cfg.update_interval);
        }
    }

    fn on_sample_timer(&mut self, t: SimTime) {
        if self.measuring() {
            // Re-armed when the measurement ends.
            self.sample_timer = None;
            return;
        }
        self.sample_timer = Some(t + self.cfg.update_interval);
        if self.samples.is_empty() {
            return;
        }
        let sample_rtt = self.aggregate() as f64;
        let buffered = self.min_rtt as f64 * (1.0 + self.cfg.buffer);
        let gradient = (buffered / sample_rtt).clamp(0.5, 2.0);
        let limit = f64::from(self.limit) * gradient;
        let new = (limit + limit.sqrt()) as u32;
        self.set_limit(new.clamp(self.cfg.min_concurrency, self.cfg.max_limit), t);
    }
}

/// Netflix's `Log10RootFunction`: `max(1, floor(log10 n))` below 1000,
/// `floor(sqrt n)` from there.
fn log10_root(n: i64) -> f64 {
    if n < 1000 {
        if n < 1 {
            1.0
        } else {
            (n as f64).log10().floor().max(1.0)
        }
    } else {
        (n as f64).sqrt().floor()
    }
}

#[derive(Clone, Debug)]
pub struct VegasState {
    cfg: Vegas,
    dice: Dice,
    estimate: f64,
    rtt_noload: u64,
    probe_count: u64,
    probe_jitter: f64,
}

impl VegasState {
    /// One sample: every `probe_jitter * probe_multiplier * limit` samples
    /// the no-load RTT is taken afresh from it.
    fn update(&mut self, rtt: u64, inflight: u32, dropped: bool) {
        self.probe_count += 1;
        if self.probe_jitter * f64::from(self.cfg.probe_multiplier) * self.estimate
            <= self.probe_count as f64
        {
            self.probe_jitter = self.dice.uniform(0.5, 1.0);
            self.probe_count = 0;
            self.rtt_noload = rtt;
            return;
        }
        if self.rtt_noload == 0 || rtt < self.rtt_noload {
            self.rtt_noload = rtt;
            return;
        }
        let est = self.estimate;
        let n = est as i64;
        let l = log10_root(n);
        let queue = (est * (1.0 - self.rtt_noload as f64 / rtt as f64)).ceil();
        let new = if dropped {
            est - l
        } else if f64::from(inflight) * 2.0 < est {
            return;
        } else {
            let (alpha, beta, threshold) = (3.0 * l, 6.0 * l, l);
            if queue <= threshold {
                est + beta
            } else if queue < alpha {
                est + l
            } else if queue > beta {
                est - l
            } else {
                return;
            }
        };
        let new = new.clamp(1.0, f64::from(self.cfg.max));
        self.estimate = (1.0 - self.cfg.smoothing) * est + self.cfg.smoothing * new;
    }
}

#[derive(Clone, Debug)]
pub struct Gradient2State {
    cfg: Gradient2,
    estimate: f64,
    /// The long-term RTT: a mean of the first 10 samples, then an
    /// exponential average over `long_window` samples.
    long_rtt: f64,
    long_count: u32,
    long_sum: f64,
}

impl Gradient2State {
    fn update(&mut self, rtt: u64, inflight: u32) {
        let short = rtt as f64;
        if self.long_count < 10 {
            self.long_count += 1;
            self.long_sum += short;
            self.long_rtt = self.long_sum / f64::from(self.long_count);
        } else {
            let factor = 2.0 / (f64::from(self.cfg.long_window) + 1.0);
            self.long_rtt = self.long_rtt * (1.0 - factor) + short * factor;
        }
        let long = self.long_rtt;
        if long / short > 2.0 {
            self.long_rtt *= 0.9;
        }
        if f64::from(inflight) < self.estimate / 2.0 {
            return;
        }
        let gradient = (long / short).clamp(0.5, 1.0);
        let est = self.estimate;
        let new = est * gradient + f64::from(self.cfg.queue_size);
        let new = est * (1.0 - self.cfg.smoothing) + new * self.cfg.smoothing;
        self.estimate = new.clamp(f64::from(self.cfg.min), f64::from(self.cfg.max));
    }
}

#[derive(Clone, Debug)]
pub struct AimdState {
    cfg: Aimd,
    limit: u32,
}

impl AimdState {
    fn update(&mut self, rtt: u64, inflight: u32, dropped: bool) {
        let limit = self.limit;
        if dropped || rtt > self.cfg.timeout.0 {
            let cut = (f64::from(limit) * self.cfg.backoff_ratio) as u32;
            self.limit = cut.min(limit.saturating_sub(1)).max(1);
        } else if u64::from(inflight) * 2 >= u64::from(limit) {
            self.limit = limit.saturating_add(1);
        }
    }
}

#[cfg(test)]
mod tests;
