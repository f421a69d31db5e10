//! The recorder: per-bucket counters, time-weighted gauges and run totals.
//!
//! Counters are added to the bucket holding the current time. Gauges (queue length,
//! requests in flight, busy workers) are integrated over time, so each bucket holds
//! their time average, the quantity Little's law speaks of.

use crate::engine::{SimDuration, SimTime};
use crate::metrics::Histogram;
use crate::retry::{GiveUp, Outcome};

/// What happened in one time bucket.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Bucket {
    /// Attempts sent (first attempts and retries).
    pub attempts: u64,
    /// Of which retries.
    pub retries: u64,
    /// Logical requests that succeeded.
    pub successes: u64,
    /// Error responses received (anything but 200 and timeouts).
    pub errors: u64,
    /// Attempts that timed out at the client.
    pub timeouts: u64,
    /// Time-average of the server's queue length.
    pub queue_len: f64,
    /// Time-average of logical requests in progress (including those backing off).
    pub in_flight: f64,
    /// Time-average of busy workers.
    pub busy: f64,
    /// Share of the bucket the circuit breaker spent open.
    pub breaker_open: f64,
    /// Time-average of logical requests waiting out a backoff before a retry.
    pub backing_off: f64,
}

impl Bucket {
    /// The backlog: requests queued at the server plus requests waiting to
    /// retry (time averages over the bucket). Requests on the wire or in service
    /// are not backlog: a healthy system has them too.
    pub fn backlog(&self) -> f64 {
        self.queue_len + self.backing_off
    }
}

/// Totals over the whole run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Logical requests started.
    pub started: u64,
    /// Logical requests that succeeded.
    pub succeeded: u64,
    /// Given up because the outcome was not retryable.
    pub failed_not_retryable: u64,
    /// Given up after `max_retries` retries.
    pub failed_exhausted: u64,
    /// Given up at the request's deadline.
    pub failed_deadline: u64,
    /// Given up because the retry budget refused a retry.
    pub failed_budget: u64,
    /// Given up because the breaker or the throttle refused an attempt locally.
    pub failed_local: u64,
    /// Attempts sent.
    pub attempts: u64,
    /// Of which retries.
    pub retries: u64,
    /// Responses per outcome (indexed by `Outcome as usize`; timeouts included).
    pub outcomes: [u64; Outcome::ALL.len()],
    /// Nanoseconds of service the server performed (completed or cut short).
    pub busy_ns: u64,
    /// Of which spent on attempts whose client no longer waited for them.
    pub wasted_ns: u64,
    /// Events processed.
    pub events: u64,
    /// Sum of the end-to-end latencies of successful logical requests, ns (exact,
    /// for the mean; the histogram gives quantiles).
    pub latency_sum_ns: u128,
    /// When the last logical request succeeded, ns (0 if none did).
    pub last_success_ns: u64,
    /// Attempts that left the capacity server (served, or flushed by an outage).
    pub server_departures: u64,
    /// Their total time in the server (queue and service), ns.
    pub server_sojourn_ns: u128,
    /// Arrivals answered 429 by load shedding.
    pub shed: u64,
    /// Attempts refused locally by the breaker or the throttle.
    pub rejected_locally: u64,
    /// Of which first attempts (their logical requests sent nothing at all).
    pub rejected_first: u64,
    /// Queued attempts dropped unserved because their clients had stopped waiting.
    pub expired_dropped: u64,
    /// Times the server crashed under overload.
    pub crashes: u64,
    /// Nanoseconds of worker time spent refusing requests (part of `busy_ns`).
    pub reject_ns: u64,
    /// Logical requests a load spike added (included in `started`).
    pub spike_requests: u64,
    /// The most requests the capacity server held at once, queued plus in
    /// service: what its crash limit (`crash_at`) counts.
    pub peak_held: u64,
}

impl Totals {
    /// Logical requests that failed, for any reason.
    pub fn failed(&self) -> u64 {
        self.failed_not_retryable
            + self.failed_exhausted
            + self.failed_deadline
            + self.failed_budget
            + self.failed_local
    }
}

/// Which gauge.
#[derive(Clone, Copy, Debug)]
pub enum Gauge {
    /// Server queue length.
    Queue = 0,
    /// Logical requests in progress.
    InFlight = 1,
    /// Busy workers.
    Busy = 2,
    /// 1 while the circuit breaker is open.
    BreakerOpen = 3,
    /// Logical requests waiting out a backoff.
    BackingOff = 4,
}

#[derive(Clone, Copy, Debug, Default)]
struct GaugeState {
    value: u64,
    since: SimTime,
    /// Integral over the current bucket, count * ns.
    area: u128,
}

impl GaugeState {
    fn accumulate(&mut self, to: SimTime) {
        self.area += u128::from(self.value) * u128::from((to - self.since).0);
        self.since = to;
    }
}

/// Records one run.
#[derive(Clone)]
pub struct Recorder {
    width: SimDuration,
    buckets: Vec<Bucket>,
    current: usize,
    current_end: SimTime,
    gauges: [GaugeState; 5],
    /// End-to-end latency of successful logical requests.
    pub latency: Histogram,
    /// Run totals.
    pub totals: Totals,
}

impl Recorder {
    /// A recorder for a run of `duration` in buckets of `width` (> 0).
    pub fn new(duration: SimDuration, width: SimDuration) -> Self {
        let n = duration.0.div_ceil(width.0.max(1)).max(1) as usize;
        Recorder {
            width,
            buckets: vec![Bucket::default(); n],
            current: 0,
            current_end: SimTime(width.0),
            gauges: [GaugeState::default(); 5],
            latency: Histogram::new(),
            totals: Totals::default(),
        }
    }

    /// Moves the clock to `now` (never backwards), closing finished buckets.
    #[inline]
    pub fn advance(&mut self, now: SimTime) {
        self.totals.events += 1;
        if now >= self.current_end {
            self.roll_to(now);
        }
    }

    #[cold]
    fn roll_to(&mut self, now: SimTime) {
        while now >= self.current_end && self.current < self.buckets.len() {
            self.close_bucket();
        }
    }

    fn close_bucket(&mut self) {
        let end = self.current_end;
        let width = self.width.0 as f64;
        let [q, f, b, o, r] = &mut self.gauges;
        let bucket = &mut self.buckets[self.current];
        for (g, slot) in [
            (q, &mut bucket.queue_len),
            (f, &mut bucket.in_flight),
            (b, &mut bucket.busy),
            (o, &mut bucket.breaker_open),
            (r, &mut bucket.backing_off),
        ] {
            g.accumulate(end);
            *slot = g.area as f64 / width;
            g.area = 0;
        }
        self.current += 1;
        self.current_end = end + self.width;
    }

    fn bucket(&mut self) -> &mut Bucket {
        let last = self.buckets.len() - 1;
        &mut self.buckets[self.current.min(last)]
    }

    /// Sets gauge `g` to `value` at the current time `now`.
    #[inline]
    pub fn set(&mut self, g: Gauge, now: SimTime, value: u64) {
        let state = &mut self.gauges[g as usize];
        state.accumulate(now);
        state.value = value;
    }

    /// An attempt was sent.
    #[inline]
    pub fn attempt(&mut self, is_retry: bool) {
        self.totals.attempts += 1;
        self.totals.retries += u64::from(is_retry);
        let b = self.bucket();
        b.attempts += 1;
        b.retries += u64::from(is_retry);
    }

    /// A logical request started.
    pub fn request_started(&mut self) {
        self.totals.started += 1;
    }

    /// An attempt ended with `outcome` at the client.
    #[inline]
    pub fn outcome(&mut self, outcome: Outcome) {
        self.totals.outcomes[outcome as usize] += 1;
        let b = self.bucket();
        match outcome {
            Outcome::Ok => {}
            Outcome::Timeout => b.timeouts += 1,
            _ => b.errors += 1,
        }
    }

    /// A logical request succeeded at `now` after `latency`.
    #[inline]
    pub fn success(&mut self, now: SimTime, latency: SimDuration) {
        self.totals.last_success_ns = now.0;
        self.totals.succeeded += 1;
        self.totals.latency_sum_ns += u128::from(latency.0);
        self.bucket().successes += 1;
        self.latency.record(latency);
    }

    /// A logical request was given up.
    pub fn failure(&mut self, why: GiveUp) {
        let t = &mut self.totals;
        match why {
            GiveUp::NotRetryable => t.failed_not_retryable += 1,
            GiveUp::RetriesExhausted => t.failed_exhausted += 1,
            GiveUp::DeadlineExceeded => t.failed_deadline += 1,
            GiveUp::BudgetDenied => t.failed_budget += 1,
            GiveUp::RejectedLocally => t.failed_local += 1,
        }
    }

    /// The server spent `service` on an attempt; `wasted` when nobody used the result.
    #[inline]
    pub fn work(&mut self, service: SimDuration, wasted: bool) {
        self.totals.busy_ns += service.0;
        if wasted {
            self.totals.wasted_ns += service.0;
        }
    }

    /// An attempt was refused locally; `first` if it was its request's first.
    pub fn rejected_locally(&mut self, first: bool) {
        self.totals.rejected_locally += 1;
        self.totals.rejected_first += u64::from(first);
    }

    /// A load spike added a logical request.
    pub fn spike_request(&mut self) {
        self.totals.spike_requests += 1;
    }

    /// The server crashed.
    pub fn crash(&mut self) {
        self.totals.crashes += 1;
    }

    /// A worker spent `work` refusing a request.
    pub fn reject_work(&mut self, work: SimDuration) {
        self.totals.busy_ns += work.0;
        self.totals.reject_ns += work.0;
    }

    /// An arrival was shed (answered 429).
    pub fn shed(&mut self) {
        self.totals.shed += 1;
    }

    /// A queued attempt was dropped unserved: its client had stopped waiting.
    pub fn expired_dropped(&mut self) {
        self.totals.expired_dropped += 1;
    }

    /// An attempt left the server after `sojourn` in it (queue and service).
    #[inline]
    pub fn departure(&mut self, sojourn: SimDuration) {
        self.totals.server_departures += 1;
        self.totals.server_sojourn_ns += u128::from(sojourn.0);
    }

    /// Closes the remaining buckets (the run ends at the end of the last one) and
    /// returns the buckets, the latency histogram and the totals.
    pub fn finish(mut self) -> (Vec<Bucket>, Histogram, Totals) {
        if self.current < self.buckets.len() {
            self.close_bucket();
        }
        // No event changes a gauge after the last one: every later bucket holds
        // the gauges' final values (often a run ends early, so there are many).
        let [q, f, b, o, r] = self.gauges.map(|g| g.value as f64);
        let from = self.current.min(self.buckets.len());
        for bucket in &mut self.buckets[from..] {
            (
                bucket.queue_len,
                bucket.in_flight,
                bucket.busy,
                bucket.breaker_open,
                bucket.backing_off,
            ) = (q, f, b, o, r);
        }
        (self.buckets, self.latency, self.totals)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gauges_are_time_averaged_per_bucket() {
        let mut r = Recorder::new(SimDuration(300), SimDuration(100));
        // Queue at 2 from t=50 to t=150, then 0: bucket 0 averages 1, bucket 1 averages 1.
        r.advance(SimTime(50));
        r.set(Gauge::Queue, SimTime(50), 2);
        r.advance(SimTime(150));
        r.set(Gauge::Queue, SimTime(150), 0);
        // In flight at 3 from t=250 to the end: bucket 2 averages 1.5.
        r.advance(SimTime(250));
        r.set(Gauge::InFlight, SimTime(250), 3);
        let (b, _, totals) = r.finish();
        assert_eq!(
            b.iter().map(|b| b.queue_len).collect::<Vec<_>>(),
            [1.0, 1.0, 0.0]
        );
        assert_eq!(b[2].in_flight, 1.5);
        assert_eq!(totals.events, 3);
    }

    #[test]
    fn counters_land_in_the_bucket_of_the_current_time() {
        let mut r = Recorder::new(SimDuration(200), SimDuration(100));
        r.advance(SimTime(10));
        r.attempt(false);
        r.advance(SimTime(120));
        r.attempt(true);
        r.outcome(Outcome::Timeout);
        r.outcome(Outcome::Status503);
        let (b, _, t) = r.finish();
        assert_eq!((b[0].attempts, b[0].retries), (1, 0));
        assert_eq!(
            (b[1].attempts, b[1].retries, b[1].timeouts, b[1].errors),
            (1, 1, 1, 1)
        );
        assert_eq!((t.attempts, t.retries), (2, 1));
    }
}
