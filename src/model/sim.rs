//! The run loop: pops events in time order and hands each to its handler. One run
//! is one strategy on one world; it is single-threaded and deterministic.

use rand::RngExt;
use rand_distr::{Distribution, Exp};

use crate::engine::{EventQueue, RngStreams, SimDuration, SimTime};
use crate::metrics::recorder::Gauge;
use crate::metrics::{Bucket, Histogram, Recorder, Totals};
use crate::model::client::{Phase, Slots};
use crate::model::event::{Event, Kind, NO_RETRY_AFTER};
use crate::model::server::{Admission, Finished, Job, Rejection, Server};
use crate::model::{Load, NoObserver, Observer, WorldConfig};
use crate::retry::policy::Attempted;
use crate::retry::{Decision, GiveUp, Outcome, Strategy};

/// Everything a run measured.
#[derive(Clone, Debug)]
pub struct RunResult {
    /// Time buckets, in order.
    pub buckets: Vec<Bucket>,
    /// Latency of successful logical requests.
    pub latency: Histogram,
    /// Totals.
    pub totals: Totals,
    /// Logical requests still in progress at the end, counted from client state.
    pub in_flight_at_end: u64,
}

/// Runs `strategy` on `world` with `seed`, recording in buckets of `bucket`.
pub fn run(world: &WorldConfig, strategy: &Strategy, seed: u64, bucket: SimDuration) -> RunResult {
    run_observed(world, strategy, seed, bucket, &mut NoObserver)
}

/// [`run`], reporting client-side events to `observer`.
pub fn run_observed<O: Observer>(
    world: &WorldConfig,
    strategy: &Strategy,
    seed: u64,
    bucket: SimDuration,
    observer: &mut O,
) -> RunResult {
    let mut sim = Sim::new(world, strategy, seed, bucket, observer);
    sim.schedule_start();
    sim.run_loop();
    let in_flight_at_end = sim.slots.count_in_progress();
    let (buckets, latency, totals) = sim.rec.finish();
    RunResult {
        buckets,
        latency,
        totals,
        in_flight_at_end,
    }
}

struct Sim<'a, O: Observer> {
    world: &'a WorldConfig,
    strategy: &'a Strategy,
    queue: EventQueue<Event>,
    rng: RngStreams,
    slots: Slots,
    server: Server,
    rec: Recorder,
    obs: &'a mut O,
    now: SimTime,
    /// Open loop: inter-arrival sampler.
    arrivals: Option<Exp<f64>>,
    /// Reused buffer for jobs flushed by an outage.
    flushed: Vec<Finished>,
}

impl<'a, O: Observer> Sim<'a, O> {
    fn new(
        world: &'a WorldConfig,
        strategy: &'a Strategy,
        seed: u64,
        bucket: SimDuration,
        obs: &'a mut O,
    ) -> Self {
        let (clients, arrivals) = match &world.load {
            Load::Closed { clients, .. } => (*clients, None),
            Load::Open { rate_per_s } => (0, Exp::new(rate_per_s / 1e9).ok()),
        };
        Sim {
            world,
            strategy,
            // Hops and services are the frequent short events; a few of their
            // means is a horizon that keeps think times and backoffs out of
            // the busy lane (see engine::queue).
            queue: EventQueue::with_horizon(SimDuration::from_nanos_f64(
                4.0 * world
                    .network
                    .mean_nanos()
                    .max(world.server.service.mean_nanos()),
            )),
            rng: RngStreams::new(seed),
            slots: Slots::new(clients),
            server: Server::new(&world.server),
            rec: Recorder::new(world.duration, bucket),
            obs,
            now: SimTime::ZERO,
            arrivals,
            flushed: Vec::new(),
        }
    }

    /// First events: outages, and the load. Each closed-loop client starts after
    /// one think time, as if it had just finished a request: for exponential think
    /// times (memoryless) that is already the steady state, with no start-up burst.
    fn schedule_start(&mut self) {
        for (i, o) in self.world.outages.iter().enumerate() {
            let aux = i as u32;
            self.queue.push(
                o.start,
                Event {
                    aux,
                    ..Event::new(Kind::OutageStart, 0, 0)
                },
            );
            self.queue.push(
                o.end,
                Event {
                    aux,
                    ..Event::new(Kind::OutageEnd, 0, 0)
                },
            );
        }
        match &self.world.load {
            Load::Closed { clients, think } => {
                for c in 0..*clients {
                    let at = think.sample(&mut self.rng.workload);
                    self.queue
                        .push(SimTime::ZERO + at, Event::new(Kind::Begin, c, 0));
                }
            }
            Load::Open { .. } => self.schedule_arrival(),
        }
    }

    fn run_loop(&mut self) {
        let end = SimTime::ZERO + self.world.duration;
        while let Some((t, ev)) = self.queue.pop() {
            if t >= end {
                break;
            }
            self.now = t;
            self.rec.advance(t);
            match ev.kind {
                Kind::Begin => self.start_request(ev.slot),
                Kind::Arrival => {
                    self.schedule_arrival();
                    let slot = self.slots.allocate();
                    self.start_request(slot);
                }
                Kind::Send => self.on_backoff_over(ev),
                Kind::AtServer => self.on_at_server(ev),
                Kind::ServiceDone => self.on_service_done(ev),
                Kind::Response => self.on_response(ev),
                Kind::Timeout => self.on_timeout(ev),
                Kind::OutageStart => self.on_outage_start(ev.aux as usize),
                Kind::OutageEnd => self.server.end_outage(),
            }
        }
        self.now = end;
    }

    fn schedule_arrival(&mut self) {
        if let Some(exp) = &self.arrivals {
            let gap = SimDuration::from_nanos_f64(exp.sample(&mut self.rng.workload));
            self.queue
                .push(self.now + gap, Event::new(Kind::Arrival, 0, 0));
        }
    }

    fn set_in_flight(&mut self, delta: i64) {
        let n = self.slots.add_active(delta);
        self.rec.set(Gauge::InFlight, self.now, n);
    }

    fn start_request(&mut self, slot: u32) {
        let now = self.now;
        let bad = self.world.bad_fraction > 0.0
            && self.rng.workload.random::<f64>() < self.world.bad_fraction;
        let deadline_at = self
            .strategy
            .policy
            .deadline
            .map_or(SimTime::NEVER, |d| now + d);
        let r = self.slots.get(slot);
        r.started = now;
        r.deadline_at = deadline_at;
        r.retries = 0;
        r.previous_delay = SimDuration::ZERO;
        r.bad = bad;
        self.rec.request_started();
        self.set_in_flight(1);
        self.send_attempt(slot);
    }

    fn send_attempt(&mut self, slot: u32) {
        let now = self.now;
        let timeout_at = now + self.strategy.policy.timeout;
        let r = self.slots.get(slot);
        r.attempt = r.attempt.wrapping_add(1);
        r.phase = Phase::Waiting;
        r.attempt_deadline = timeout_at.min(r.deadline_at);
        let (attempt, deadline, retries, deadline_at, bad) = (
            r.attempt,
            r.attempt_deadline,
            r.retries,
            r.deadline_at,
            r.bad,
        );
        // Timeouts all have the same length, so they come in time order unless the
        // request's deadline cuts one short.
        let timeout = Event::new(Kind::Timeout, slot, attempt);
        if deadline == timeout_at {
            self.queue.push_in_order(deadline, timeout);
        } else {
            self.queue.push(deadline, timeout);
        }
        let hop = self.world.network.sample(&mut self.rng.network);
        self.queue.push(
            now + hop,
            Event {
                aux: u32::from(bad),
                ..Event::new(Kind::AtServer, slot, attempt)
            },
        );
        self.rec.attempt(retries > 0);
        self.obs.attempt_sent(now, slot, retries, deadline_at);
    }

    fn on_backoff_over(&mut self, ev: Event) {
        let r = self.slots.get(ev.slot);
        if r.phase == Phase::BackingOff && r.attempt == ev.attempt {
            self.send_attempt(ev.slot);
        }
    }

    /// The client of (`slot`, `attempt`) still waits for it: its deadline, else None.
    fn live_deadline(&mut self, slot: u32, attempt: u32) -> Option<SimTime> {
        let r = self.slots.get(slot);
        (r.phase == Phase::Waiting && r.attempt == attempt).then_some(r.attempt_deadline)
    }

    fn on_at_server(&mut self, ev: Event) {
        // A client that gave up on this attempt in transit: the server cannot tell,
        // so it still does the work, which is then wasted.
        let deadline = self
            .live_deadline(ev.slot, ev.attempt)
            .unwrap_or(SimTime::ZERO);
        let job = Job {
            slot: ev.slot,
            attempt: ev.attempt,
            deadline,
            bad: ev.aux != 0,
        };
        match self.server.admit(job, self.now, &mut self.rng.service) {
            Admission::Started { worker, done_at } => self.schedule_done(worker, done_at),
            Admission::Queued => {}
            Admission::Rejected(Rejection::Refused) => {
                self.respond(job, Outcome::Refused, None);
            }
            Admission::Rejected(Rejection::Unavailable(ra)) => {
                self.respond(job, Outcome::Status503, ra);
            }
            Admission::Dropped => {}
        }
        self.update_server_gauges();
    }

    fn schedule_done(&mut self, worker: u32, done_at: SimTime) {
        self.queue.push(
            done_at,
            Event::new(Kind::ServiceDone, worker, self.server.epoch()),
        );
    }

    fn update_server_gauges(&mut self) {
        self.rec
            .set(Gauge::Queue, self.now, self.server.queue_len() as u64);
        self.rec
            .set(Gauge::Busy, self.now, self.server.busy() as u64);
    }

    fn on_service_done(&mut self, ev: Event) {
        let Some((done, next)) =
            self.server
                .complete(ev.slot, ev.attempt, self.now, &mut self.rng.service)
        else {
            return;
        };
        if let Some((worker, done_at)) = next {
            self.schedule_done(worker, done_at);
        }
        let outcome = if done.job.bad {
            Outcome::Status400
        } else {
            Outcome::Ok
        };
        let delivered = self.respond(done.job, outcome, None);
        self.rec.work(done.service, !delivered);
        self.update_server_gauges();
    }

    /// Sends `outcome` back over the network. Returns false (and schedules nothing)
    /// when it would arrive at or after the client stopped waiting.
    fn respond(&mut self, job: Job, outcome: Outcome, retry_after: Option<SimDuration>) -> bool {
        let hop = self.world.network.sample(&mut self.rng.network);
        let at = self.now + hop;
        if at >= job.deadline {
            return false;
        }
        let aux = retry_after.map_or(NO_RETRY_AFTER, |d| {
            u32::try_from(d.0 / 1_000_000).unwrap_or(u32::MAX - 1)
        });
        let ev = Event {
            outcome: outcome as u8,
            aux,
            ..Event::new(Kind::Response, job.slot, job.attempt)
        };
        self.queue.push(at, ev);
        true
    }

    fn on_response(&mut self, ev: Event) {
        if self.live_deadline(ev.slot, ev.attempt).is_none() {
            return;
        }
        let outcome = Outcome::from_u8(ev.outcome);
        self.rec.outcome(outcome);
        self.obs.attempt_ended(self.now, ev.slot, outcome);
        if outcome == Outcome::Ok {
            let latency = self.now - self.slots.get(ev.slot).started;
            self.rec.success(latency);
            self.end_request(ev.slot, None);
        } else {
            let ra =
                (ev.aux != NO_RETRY_AFTER).then(|| SimDuration::from_millis(u64::from(ev.aux)));
            self.after_failure(ev.slot, outcome, ra);
        }
    }

    fn on_timeout(&mut self, ev: Event) {
        if self.live_deadline(ev.slot, ev.attempt).is_none() {
            return;
        }
        self.rec.outcome(Outcome::Timeout);
        self.obs.attempt_ended(self.now, ev.slot, Outcome::Timeout);
        self.after_failure(ev.slot, Outcome::Timeout, None);
    }

    fn after_failure(&mut self, slot: u32, outcome: Outcome, retry_after: Option<SimDuration>) {
        let r = *self.slots.get(slot);
        let state = Attempted {
            retries: r.retries,
            deadline_at: r.deadline_at,
            previous_delay: r.previous_delay,
        };
        let s = self.strategy;
        match s.policy.decide(
            &s.backoff,
            outcome,
            retry_after,
            state,
            self.now,
            &mut self.rng.jitter,
        ) {
            Decision::Retry(delay) => {
                let r = self.slots.get(slot);
                r.retries += 1;
                r.previous_delay = delay;
                if delay == SimDuration::ZERO {
                    self.send_attempt(slot);
                } else {
                    r.phase = Phase::BackingOff;
                    let attempt = r.attempt;
                    self.queue
                        .push(self.now + delay, Event::new(Kind::Send, slot, attempt));
                }
            }
            Decision::GiveUp(why) => {
                self.rec.failure(why);
                self.end_request(slot, Some(why));
            }
        }
    }

    fn end_request(&mut self, slot: u32, failure: Option<GiveUp>) {
        self.slots.get(slot).phase = Phase::Idle;
        self.set_in_flight(-1);
        self.obs.request_ended(self.now, slot, failure);
        match &self.world.load {
            Load::Closed { think, .. } => {
                let pause = think.sample(&mut self.rng.workload);
                self.queue
                    .push(self.now + pause, Event::new(Kind::Begin, slot, 0));
            }
            Load::Open { .. } => self.slots.release(slot),
        }
    }

    fn on_outage_start(&mut self, index: usize) {
        let Some(outage) = self.world.outages.get(index) else {
            return;
        };
        let mut flushed = std::mem::take(&mut self.flushed);
        self.server
            .begin_outage(outage.kind, self.now, &mut flushed);
        let reply = match outage.kind {
            crate::model::OutageKind::Reset => Some((Outcome::Reset, None)),
            crate::model::OutageKind::Unavailable { retry_after } => {
                Some((Outcome::Status503, retry_after))
            }
            _ => None,
        };
        for f in flushed.drain(..) {
            // Service cut short is work nobody can use.
            self.rec.work(f.service, true);
            if let Some((outcome, ra)) = reply {
                self.respond(f.job, outcome, ra);
            }
        }
        self.flushed = flushed;
        self.update_server_gauges();
    }
}
