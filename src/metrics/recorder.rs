//! The recorder: per-bucket counters, time-weighted gauges and run totals.
//!
//! Counters are added to the bucket holding the current time. Gauges (queue length,
//! requests in flight, busy workers) are integrated over time, so each bucket holds
//! their time average, the quantity Little's law speaks of.
//!
//! A run may also record ahead ([`Recorder::ahead`]): what happens at a later
//! time it already knows, such as an answer's arrival at a client that will do
//! nothing else before then. Counters go to that time's bucket, and a gauge
//! changed then is changed now with the difference taken back, bucket by
//! bucket, up to that time: every bucket's average is what recording in time
//! order gives.

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

/// A run's buckets, in order: those it recorded, then as many copies of
/// `tail` as make up the run's length. A run whose events end early (every
/// client done, the AWS world's) would otherwise fill thousands of
/// identical buckets that nothing happens in, and every reader scan them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Series {
    /// The buckets recorded.
    pub head: Vec<Bucket>,
    /// Every bucket after them: no counts, the gauges at their last values.
    pub tail: Bucket,
    /// Buckets in the run.
    len: usize,
}

impl Series {
    /// A series of exactly `buckets`.
    pub fn of(buckets: Vec<Bucket>) -> Series {
        Series {
            len: buckets.len(),
            head: buckets,
            tail: Bucket::default(),
        }
    }

    /// Buckets in the run.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the run has no bucket.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every bucket, in order.
    pub fn iter(&self) -> impl Iterator<Item = &Bucket> + Clone {
        self.head
            .iter()
            .chain(std::iter::repeat_n(&self.tail, self.len - self.head.len()))
    }

    /// Bucket `i`.
    pub fn get(&self, i: usize) -> Option<&Bucket> {
        match self.head.get(i) {
            Some(b) => Some(b),
            None => (i < self.len).then_some(&self.tail),
        }
    }

    /// Every bucket, written out.
    pub fn to_vec(&self) -> Vec<Bucket> {
        self.iter().copied().collect()
    }

    /// The largest of `f` over the buckets (0 for none).
    pub fn max(&self, f: impl Fn(&Bucket) -> f64) -> f64 {
        let tail = if self.len > self.head.len() {
            f(&self.tail)
        } else {
            0.0
        };
        self.head.iter().map(f).fold(tail.max(0.0), f64::max)
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
    /// Attempts the server's concurrency limiter answered 503 (among the
    /// 503 outcomes).
    pub limited: u64,
    /// Logical requests the look-aside cache answered (they made no
    /// attempt).
    pub cache_hits: u64,
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
    /// Integral over the current bucket, count * ns (negative only for a
    /// moment, while a change recorded ahead is taken back).
    area: i128,
}

impl GaugeState {
    fn accumulate(&mut self, to: SimTime) {
        self.area += i128::from(self.value) * i128::from((to - self.since).0);
        self.since = to;
    }
}

/// How many buckets past the current one a run may record ahead.
pub const AHEAD: usize = 64;

/// Buckets the recorder adds at a time: more than [`AHEAD`], so that the
/// bucket recorded ahead is always there.
const GROW: usize = 4 * AHEAD;

/// What a later bucket's gauge areas take from changes recorded ahead.
#[derive(Clone, Copy, Debug, Default)]
struct Later {
    /// Added to the area of this bucket.
    area: [i128; 5],
    /// Added to the correction every bucket from this one on takes.
    slope: [i128; 5],
}

/// Recording ahead: the clock's own time and the bucket counters go to.
#[derive(Clone, Copy, Debug)]
struct Ahead {
    now: SimTime,
    at: SimTime,
}

/// Records one run.
#[derive(Clone)]
pub struct Recorder {
    width: SimDuration,
    /// The buckets so far: at least up to the furthest a run may record
    /// ahead, grown as the clock moves on (never past `len`).
    buckets: Vec<Bucket>,
    /// Buckets in the run.
    len: usize,
    /// The run's end: nothing at or after it is recorded.
    end: SimTime,
    current: usize,
    current_end: SimTime,
    /// The bucket counters go to: the current one, or a later one while
    /// recording ahead.
    cursor: usize,
    /// Set while recording ahead.
    ahead: Option<Ahead>,
    /// The gauges' areas recorded ahead for the buckets after the current
    /// one, bucket `i` at `i % AHEAD` (empty until a run records ahead).
    later: Vec<Later>,
    /// The correction each whole bucket's area takes now, per gauge
    /// (the running sum of `Later::slope`).
    slope: [i128; 5],
    /// The last bucket with an area in `later`.
    later_until: usize,
    /// The last bucket recorded ahead to.
    ahead_until: usize,
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
            buckets: vec![Bucket::default(); n.min(GROW)],
            len: n,
            end: SimTime::ZERO + duration,
            current: 0,
            current_end: SimTime(width.0),
            cursor: 0,
            ahead: None,
            later: Vec::new(),
            slope: [0; 5],
            later_until: 0,
            ahead_until: 0,
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
        while now >= self.current_end && self.current < self.len {
            self.close_bucket();
        }
    }

    fn close_bucket(&mut self) {
        let end = self.current_end;
        let width = self.width.0 as f64;
        if !self.later.is_empty() {
            let later = std::mem::take(&mut self.later[self.current % AHEAD]);
            for (i, g) in self.gauges.iter_mut().enumerate() {
                self.slope[i] += later.slope[i];
                g.area += self.slope[i] + later.area[i];
            }
        }
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
        self.cursor = self.current;
        self.current_end = end + self.width;
        if self.current + AHEAD >= self.buckets.len() && self.buckets.len() < self.len {
            let n = (self.buckets.len() + GROW).min(self.len);
            self.buckets.resize(n, Bucket::default());
        }
    }

    fn bucket(&mut self) -> &mut Bucket {
        let last = self.buckets.len() - 1;
        &mut self.buckets[self.cursor.min(last)]
    }

    /// Records what happens at `at` from here on, the clock being at `now`
    /// (and the recorder advanced to it), until [`Recorder::back`]; false,
    /// and nothing changed, when `at` is at or past the run's end (which
    /// the last bucket may outlast: no event at or after it is handled) or
    /// more than [`AHEAD`] buckets on.
    #[inline]
    pub fn ahead(&mut self, now: SimTime, at: SimTime) -> bool {
        let i = (at.0 / self.width.0.max(1)) as usize;
        if at >= self.end || i >= self.current + AHEAD {
            return false;
        }
        self.ahead_until = self.ahead_until.max(i);
        if self.later.is_empty() {
            self.later = vec![Later::default(); AHEAD];
        }
        self.cursor = i;
        self.ahead = Some(Ahead { now, at });
        true
    }

    /// While recording ahead, records from `at` on instead (a later time,
    /// with the same limits as [`Recorder::ahead`]); false, and nothing
    /// changed, when not recording ahead or `at` is out of reach.
    #[inline]
    pub fn further(&mut self, at: SimTime) -> bool {
        match self.ahead {
            Some(a) => self.ahead(a.now, at),
            None => false,
        }
    }

    /// Back to recording at the clock's own time.
    #[inline]
    pub fn back(&mut self) {
        self.cursor = self.current;
        self.ahead = None;
    }

    /// Sets gauge `g` to `value` at the current time `now` (recording
    /// ahead: at the time recorded at, which is `now`).
    #[inline]
    pub fn set(&mut self, g: Gauge, now: SimTime, value: u64) {
        if let Some(a) = self.ahead {
            self.set_ahead(g, a, value);
            return;
        }
        let state = &mut self.gauges[g as usize];
        state.accumulate(now);
        state.value = value;
    }

    /// [`Recorder::set`] at `a.at`, later than the clock's `a.now`: the
    /// gauge changes now, and the change's area from `a.now` to `a.at` is
    /// taken back: from the current bucket at once, from each whole bucket
    /// after it by a running correction (a difference array, so that a long
    /// backoff costs no more than a short one), and from the bucket of
    /// `a.at` up to that time.
    #[inline]
    fn set_ahead(&mut self, g: Gauge, a: Ahead, value: u64) {
        let g = g as usize;
        let state = &mut self.gauges[g];
        state.accumulate(a.now);
        let delta = i128::from(value) - i128::from(state.value);
        state.value = value;
        let w = self.width.0.max(1);
        let b = (a.at.0 / w) as usize;
        if b == self.current {
            state.area -= delta * i128::from((a.at - a.now).0);
            return;
        }
        state.area -= delta * i128::from((self.current_end - a.now).0);
        let whole = -delta * i128::from(w);
        let next = self.current + 1;
        if next < b {
            self.later[next % AHEAD].slope[g] += whole;
            self.later[b % AHEAD].slope[g] -= whole;
        }
        self.later[b % AHEAD].area[g] -= delta * i128::from(a.at.0 - b as u64 * w);
        self.later_until = self.later_until.max(b);
    }

    /// Gauge `g`'s value now.
    #[inline(always)]
    pub fn gauge(&self, g: Gauge) -> u64 {
        self.gauges[g as usize].value
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

    /// A logical request succeeded at `now` after `latency`. (Successes
    /// recorded ahead come out of time order: the last is the latest.)
    #[inline]
    pub fn success(&mut self, now: SimTime, latency: SimDuration) {
        self.totals.last_success_ns = self.totals.last_success_ns.max(now.0);
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

    /// A logical request was answered by the look-aside cache.
    pub fn cache_hit(&mut self) {
        self.totals.cache_hits += 1;
    }

    /// An attempt was answered 503 by the server's concurrency limiter.
    pub fn limited(&mut self) {
        self.totals.limited += 1;
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

    /// Closes the buckets anything was recorded in (the run ends at the end
    /// of the last one) and returns the series, the latency histogram and
    /// the totals.
    pub fn finish(mut self) -> (Series, Histogram, Totals) {
        if self.current < self.len {
            self.close_bucket();
        }
        // What was recorded ahead past the last event.
        let until = self.later_until.max(self.ahead_until);
        while self.current <= until && self.current < self.len {
            self.close_bucket();
        }
        // No event changes a gauge after the last one: every later bucket holds
        // no counts and the gauges' final values.
        let [q, f, b, o, r] = self.gauges.map(|g| g.value as f64);
        let tail = Bucket {
            queue_len: q,
            in_flight: f,
            busy: b,
            breaker_open: o,
            backing_off: r,
            ..Bucket::default()
        };
        let mut head = self.buckets;
        head.truncate(self.current.min(self.len));
        let series = Series {
            head,
            tail,
            len: self.len,
        };
        (series, self.latency, self.totals)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The recorder's buckets written out in full.
    fn full(r: Recorder) -> (Vec<Bucket>, Histogram, Totals) {
        let (series, h, t) = r.finish();
        (series.to_vec(), h, t)
    }

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
        let (b, _, totals) = full(r);
        assert_eq!(
            b.iter().map(|b| b.queue_len).collect::<Vec<_>>(),
            [1.0, 1.0, 0.0]
        );
        assert_eq!(b[2].in_flight, 1.5);
        assert_eq!(totals.events, 3);
    }

    /// A gauge changed ahead (at 250, known at 60) and a counter recorded
    /// ahead give the buckets that recording at 250 gives; a change past
    /// the last event is closed in by `finish`. Out of reach: refused.
    #[test]
    fn recording_ahead_is_recording_in_time_order() {
        let in_order = {
            let mut r = Recorder::new(SimDuration(400), SimDuration(100));
            r.advance(SimTime(50));
            r.set(Gauge::InFlight, SimTime(50), 2);
            r.advance(SimTime(250));
            r.set(Gauge::InFlight, SimTime(250), 1);
            r.attempt(true);
            r.advance(SimTime(270));
            r.set(Gauge::BackingOff, SimTime(270), 1);
            full(r)
        };
        let mut r = Recorder::new(SimDuration(400), SimDuration(100));
        r.advance(SimTime(50));
        r.set(Gauge::InFlight, SimTime(50), 2);
        r.advance(SimTime(60));
        assert!(r.ahead(SimTime(60), SimTime(250)));
        r.set(Gauge::InFlight, SimTime(250), 1);
        r.attempt(true);
        assert!(r.further(SimTime(270)));
        r.set(Gauge::BackingOff, SimTime(270), 1);
        r.back();
        assert!(!r.further(SimTime(300)), "only while ahead");
        assert!(!r.ahead(SimTime(60), SimTime(400)), "past the end");
        // A run of 350 in buckets of 100: its last bucket outlasts it.
        let mut short = Recorder::new(SimDuration(350), SimDuration(100));
        assert!(short.ahead(SimTime(0), SimTime(349)));
        assert!(!short.ahead(SimTime(0), SimTime(350)), "at the end");
        let ahead = full(r);
        assert_eq!(ahead.0, in_order.0);
        assert_eq!(ahead.0[1].in_flight, 2.0);
        assert_eq!(ahead.0[2].in_flight, 1.5);
        assert_eq!(ahead.0[2].backing_off, 0.3);
        assert_eq!(ahead.0[2].attempts, 1);
        assert_eq!(ahead.2.attempts, in_order.2.attempts);
        let mut far = Recorder::new(SimDuration(100_000), SimDuration(100));
        assert!(!far.ahead(SimTime(0), SimTime(100 * AHEAD as u64)));
        assert!(far.ahead(SimTime(0), SimTime(100 * AHEAD as u64 - 1)));
    }

    /// A run whose events end early keeps the buckets it recorded; the
    /// rest are its tail, read as copies: no counts, the gauges' last values.
    #[test]
    fn the_buckets_after_the_last_event_are_the_tail() {
        let mut r = Recorder::new(SimDuration(100_000), SimDuration(100));
        r.advance(SimTime(150));
        r.attempt(false);
        r.set(Gauge::Queue, SimTime(150), 4);
        let (series, _, _) = r.finish();
        assert_eq!((series.head.len(), series.len()), (2, 1000));
        assert_eq!(series.tail.queue_len, 4.0);
        assert_eq!(series.tail.attempts, 0);
        let all = series.to_vec();
        assert_eq!(all.len(), 1000);
        assert_eq!(all[1].queue_len, 2.0);
        assert_eq!(all[1].attempts, 1);
        assert_eq!(all[999], series.tail);
        assert_eq!(series.get(999), Some(&series.tail));
        assert_eq!(series.get(1000), None);
        assert_eq!(series.max(|b| b.queue_len), 4.0);
        assert_eq!(series.max(|b| b.attempts as f64), 1.0);
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
        let (b, _, t) = full(r);
        assert_eq!((b[0].attempts, b[0].retries), (1, 0));
        assert_eq!(
            (b[1].attempts, b[1].retries, b[1].timeouts, b[1].errors),
            (1, 1, 1, 1)
        );
        assert_eq!((t.attempts, t.retries), (2, 1));
    }
}
