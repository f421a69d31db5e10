//! The capacity-limited server: `workers` in parallel, a bounded FIFO queue, the
//! state of the current outage, and how it behaves under overload (crashes, cold
//! starts, the cost of refusing, contention). It decides; the run loop schedules.

pub mod limiter;
mod queue;

use std::collections::VecDeque;

use crate::engine::{Draws, Purpose, SimDuration, SimTime, Ticket};
use crate::model::{Dist, OutageKind, Overload, ServerConfig, Shedding};
use limiter::{Limiter, Sample};
use queue::JobQueue;

/// Refusals waiting for a worker when refusing costs work, at most: Linux's
/// default listen backlog (`net.core.somaxconn`, 4096 since kernel 5.4). An
/// arrival beyond it is never answered, as a connection the kernel drops.
pub const ACCEPT_BACKLOG: usize = 4096;

/// One attempt inside the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Job {
    /// Client slot.
    pub slot: u32,
    /// Attempt number within the slot.
    pub attempt: u32,
    /// The attempt's address: its service demand is drawn there.
    pub addr: u64,
    /// When the client stops waiting for the answer.
    pub deadline: SimTime,
    /// A permanently bad request: answered 400.
    pub bad: bool,
    /// When it reached the server.
    pub arrived: SimTime,
    /// Its caller's timeout, which an answer handled in place cancels.
    pub timeout: Ticket,
    /// With a concurrency limiter: the requests admitted and not yet ended
    /// when it was admitted, itself included (at most 65 535; 0 without a
    /// limiter). Two bytes of the struct's padding: a job is 40 bytes with
    /// or without it.
    pub inflight: u16,
}

/// What became of an arriving attempt.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Admission {
    /// A worker took it; it finishes at `done_at`.
    Started {
        /// Worker index.
        worker: u32,
        /// Completion time.
        done_at: SimTime,
    },
    /// It waits in the queue.
    Queued,
    /// Answered at once: refused (outage), 503 (outage or queue full).
    Rejected(Rejection),
    /// Swallowed by a blackhole: never answered.
    Dropped,
    /// Refused, but refusing costs work: the answer goes out when a worker has
    /// done it.
    Deferred,
    /// The server crashed: the caller calls [`Server::crash`].
    Crash,
}

/// An immediate error answer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rejection {
    /// 429: shed because the queue is past its threshold, with a Retry-After.
    Shed(Option<SimDuration>),
    /// Connection refused: the server is down.
    Refused,
    /// 503, with a Retry-After if any.
    Unavailable(Option<SimDuration>),
    /// 503 from the concurrency limiter: the limit was reached.
    Limited,
}

#[derive(Clone, Copy, Debug)]
struct Running {
    job: Job,
    started: SimTime,
    /// Set when the worker is refusing this job rather than serving it.
    refusing: Option<Rejection>,
}

/// The server's state during a run.
/// Bytes one worker of one replica holds: its place for a request in
/// service and its entry in the free list ([`crate::runner::run_bytes`]
/// counts them, with [`BYTES_PER_REPLICA`], before a run is allowed).
pub const BYTES_PER_WORKER: u64 =
    (std::mem::size_of::<Option<Running>>() + std::mem::size_of::<u32>()) as u64;

/// Bytes one replica holds besides its workers: its state and its empty
/// queues' headers.
pub const BYTES_PER_REPLICA: u64 = std::mem::size_of::<Server>() as u64;

#[derive(Clone)]
pub struct Server {
    service: Dist,
    drop_expired: bool,
    shed: Option<Shedding>,
    queue_capacity: usize,
    running: Vec<Option<Running>>,
    free: Vec<u32>,
    queue: JobQueue,
    /// The adaptive concurrency limit in front of the queue, if any.
    limiter: Option<Box<Limiter>>,
    /// Jobs the queue's discipline (CoDel) dropped, to be answered 503.
    pub discarded: Vec<Job>,
    /// Bumped whenever in-service jobs are discarded, so their completions are stale.
    epoch: u32,
    outage: Option<OutageKind>,
    speed: f64,
    overload: Overload,
    /// Refusals waiting for a worker (only when refusing costs work).
    refusals: VecDeque<(Job, Rejection)>,
    /// Down after a crash, until [`Server::restart`].
    crashed: bool,
    /// When the server last came back from a crash or a `reset` outage.
    restarted_at: Option<SimTime>,
    /// Whether a cold start or contention can change service times: when not,
    /// starting a service skips their arithmetic.
    shapes_service: bool,
}

/// A job the server finished or dropped, with the service time it consumed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Finished {
    /// The job.
    pub job: Job,
    /// Service time spent on it.
    pub service: SimDuration,
    /// Set when the work was refusing it: the answer to send.
    pub refused: Option<Rejection>,
}

impl Server {
    /// Its service times from now on are `service`'s (a replica of a fleet
    /// with a service time of its own).
    pub fn set_service(&mut self, service: Dist) {
        self.service = service;
    }

    /// An idle server, as `cfg` sets it.
    pub fn new(cfg: &ServerConfig) -> Self {
        Server {
            service: cfg.service.clone(),
            drop_expired: cfg.drop_expired,
            shed: cfg.shed,
            queue_capacity: cfg.queue_capacity as usize,
            running: vec![None; cfg.workers as usize],
            free: (0..cfg.workers).rev().collect(),
            // Grown on demand: a huge configured limit must not allocate up front.
            queue: JobQueue::new(cfg.discipline, cfg.codel),
            limiter: None,
            discarded: Vec::new(),
            epoch: 0,
            outage: None,
            speed: 1.0,
            overload: cfg.overload,
            refusals: VecDeque::new(),
            crashed: false,
            restarted_at: None,
            shapes_service: cfg.overload.cold_capacity < 1.0
                || cfg.overload.contention > 0.0
                || cfg.overload.coherency > 0.0,
        }
    }

    /// Replica `r` of the server `cfg` sets: its own service time if it
    /// has one, its own concurrency limiter (jitter drawn from `draws`).
    pub fn replica(cfg: &ServerConfig, r: usize, draws: Draws) -> Self {
        let mut s = Server::new(cfg);
        if cfg.replica_service.iter().any(|(k, _)| *k == r) {
            s.set_service(cfg.service_of(r).clone());
        }
        if let Some(l) = &cfg.limiter {
            s.limiter = Some(Box::new(Limiter::new(l, draws, r as u64)));
        }
        s
    }

    /// The concurrency limit at `now`, if the server has a limiter.
    pub fn limit(&mut self, now: SimTime) -> Option<u32> {
        self.limiter.as_mut().map(|l| l.limit(now))
    }

    /// Tells the limiter, if any, how `job` ended at `now`.
    #[inline]
    fn sample(&mut self, job: &Job, now: SimTime, how: Sample) {
        if let Some(l) = &mut self.limiter {
            l.on_done(now, job.arrived, u32::from(job.inflight), how);
        }
    }

    /// Requests the server holds: queued, in service or being refused.
    pub fn held(&self) -> usize {
        self.queue.len() + self.busy() + self.refusals.len()
    }

    /// The probability that an arriving attempt fails at once (an `errors`
    /// trigger in force), else 0.
    pub fn error_rate(&self) -> f64 {
        match self.outage {
            Some(OutageKind::Errors { p }) if !self.crashed => p,
            _ => 0.0,
        }
    }

    /// Whether the server answers at all now: not down after a crash, nor in
    /// a reset, blackhole or 503 outage.
    pub fn answers(&self) -> bool {
        !self.crashed
            && !matches!(
                self.outage,
                Some(OutageKind::Reset | OutageKind::Blackhole | OutageKind::Unavailable { .. })
            )
    }

    /// How long a request arriving at `now` would wait before its service
    /// starts, from the work ahead of it at the mean service time and the
    /// current speed: none with a worker free, else the queue (and the
    /// refusals) plus one service shared by the workers.
    pub fn expected_wait(&self, now: SimTime) -> SimDuration {
        if !self.free.is_empty() {
            return SimDuration::ZERO;
        }
        let speed = self.speed * self.overload.warmth(self.restarted_at, now);
        let ahead = (self.queue.len() + self.refusals.len() + 1) as f64;
        SimDuration::from_nanos_f64(
            ahead * self.service.mean_nanos() / (self.running.len() as f64 * speed.max(1e-9)),
        )
    }

    /// Workers.
    pub fn workers(&self) -> usize {
        self.running.len()
    }

    /// A replica put into service by an autoscaler at `now`: it starts cold
    /// (as after a restart) if the server has a cold start.
    pub fn start_cold(&mut self, now: SimTime) {
        self.restarted_at = Some(now);
    }

    /// The service time of the job in service, if its time left can be
    /// drawn again as a whole service time: exponential (memoryless), at
    /// full speed (no brownout, cold start or contention shaping it).
    pub fn memoryless_service(&self) -> Option<&Dist> {
        let plain = !self.shapes_service && self.speed == 1.0;
        (plain && matches!(self.service, Dist::Exponential { .. })).then_some(&self.service)
    }

    /// The job worker `worker` holds in `epoch`, if any, and whether it is
    /// refusing it rather than serving it.
    pub fn holding(&self, worker: u32, epoch: u32) -> Option<(Job, bool)> {
        if epoch != self.epoch {
            return None;
        }
        let r = self.running.get(worker as usize)?.as_ref()?;
        Some((r.job, r.refusing.is_some()))
    }

    /// Jobs waiting in the queue.
    pub fn queue_len(&self) -> usize {
        self.queue.len()
    }

    /// Busy workers.
    pub fn busy(&self) -> usize {
        self.running.len() - self.free.len()
    }

    /// The epoch that completions scheduled now carry.
    pub fn epoch(&self) -> u32 {
        self.epoch
    }

    /// The client slot of the job `worker` holds (0 if none).
    pub fn slot_of(&self, worker: u32) -> u32 {
        self.running
            .get(worker as usize)
            .and_then(|r| r.as_ref())
            .map_or(0, |r| r.job.slot)
    }

    fn start(&mut self, job: Job, now: SimTime, draws: Draws) -> Option<(u32, SimTime)> {
        let worker = self.free.pop()?;
        let mut service = self
            .service
            .sample(&mut draws.at(Purpose::Service, job.addr));
        // The brownout's factor, the warm-up after a restart, and contention among
        // the requests held (this one included, as it is now in service).
        let mut speed = self.speed;
        if self.shapes_service {
            speed *=
                self.overload.warmth(self.restarted_at, now) / self.overload.slowdown(self.held());
        }
        if speed != 1.0 {
            service = SimDuration::from_nanos_f64(service.as_nanos_f64() / speed);
        }
        self.running[worker as usize] = Some(Running {
            job,
            started: now,
            refusing: None,
        });
        Some((worker, now + service))
    }

    /// Starts refusing `job` on a free worker, if any: it takes `cost`.
    fn start_refusal(
        &mut self,
        job: Job,
        why: Rejection,
        now: SimTime,
        cost: SimDuration,
    ) -> Option<(u32, SimTime)> {
        let worker = self.free.pop()?;
        self.running[worker as usize] = Some(Running {
            job,
            started: now,
            refusing: Some(why),
        });
        Some((worker, now + cost))
    }

    /// Refuses `job`: at once when refusing is free, else after a worker has
    /// spent `reject_cost` on it (queued behind other refusals, ahead of work).
    fn refuse(&mut self, job: Job, why: Rejection, now: SimTime) -> Admission {
        if self.overload.reject_cost.is_none() {
            self.sample(&job, now, Sample::Shed);
            return Admission::Rejected(why);
        }
        // Every worker is busy (it is why this job is refused): wait for one.
        if self.refusals.len() >= ACCEPT_BACKLOG {
            return Admission::Dropped;
        }
        self.refusals.push_back((job, why));
        Admission::Deferred
    }

    /// An attempt arrives at `now`.
    pub fn admit(&mut self, mut job: Job, now: SimTime, draws: Draws) -> Admission {
        if self.crashed {
            return Admission::Rejected(Rejection::Refused);
        }
        match self.outage {
            Some(OutageKind::Reset) => return Admission::Rejected(Rejection::Refused),
            Some(OutageKind::Unavailable { retry_after }) => {
                return Admission::Rejected(Rejection::Unavailable(retry_after));
            }
            Some(OutageKind::Blackhole) => return Admission::Dropped,
            _ => {}
        }
        if let Some(l) = &mut self.limiter {
            let inflight = self.queue.len() + self.running.len() - self.free.len();
            if !l.admits(now, inflight) {
                return Admission::Rejected(Rejection::Limited);
            }
            job.inflight = u16::try_from(inflight + 1).unwrap_or(u16::MAX);
        }
        if self.drop_expired && job.deadline <= now {
            self.sample(&job, now, Sample::Expired);
            return Admission::Dropped;
        }
        if self
            .overload
            .crash_at
            .is_some_and(|limit| self.held() >= limit as usize)
        {
            return Admission::Crash;
        }
        if let Some((worker, done_at)) = self.start(job, now, draws) {
            return Admission::Started { worker, done_at };
        }
        if let Some(shed) = self.shed.filter(|s| self.queue.len() >= s.at as usize) {
            return self.refuse(job, Rejection::Shed(shed.retry_after), now);
        }
        if self.queue.len() < self.queue_capacity {
            self.queue.push(job, now);
            return Admission::Queued;
        }
        self.refuse(job, Rejection::Unavailable(None), now)
    }

    /// Worker `worker` finishes at `now` the job it started in `epoch`. Returns the
    /// finished job (None if the completion is stale) and the next job started on
    /// the freed worker, with its completion time. Queued jobs dropped unserved
    /// because their clients stopped waiting are appended to `dropped`.
    #[inline]
    pub fn complete(
        &mut self,
        worker: u32,
        epoch: u32,
        now: SimTime,
        draws: Draws,
        dropped: &mut Vec<Job>,
    ) -> Option<(Finished, Option<(u32, SimTime)>)> {
        self.complete_if(worker, epoch, now, draws, dropped, |_| true)
    }

    /// [`Server::complete`], where a queued job that is not `wanted` (its
    /// client cancelled it, and the server was told) is dropped unserved too.
    #[inline]
    pub fn complete_if(
        &mut self,
        worker: u32,
        epoch: u32,
        now: SimTime,
        draws: Draws,
        dropped: &mut Vec<Job>,
        wanted: impl Fn(&Job) -> bool,
    ) -> Option<(Finished, Option<(u32, SimTime)>)> {
        if epoch != self.epoch {
            return None;
        }
        let running = self.running.get_mut(worker as usize)?.take()?;
        self.free.push(worker);
        let finished = Finished {
            job: running.job,
            service: now - running.started,
            refused: running.refusing,
        };
        if self.limiter.is_some() {
            let how = if running.refusing.is_some() {
                Sample::Shed
            } else {
                Sample::Served
            };
            self.sample(&running.job, now, how);
        }
        // Refusals first: the server answers what it cannot take before it
        // takes more work, as an accept loop does.
        if let (Some((job, why)), Some(cost)) =
            (self.refusals.front().copied(), self.overload.reject_cost)
        {
            self.refusals.pop_front();
            return Some((finished, self.start_refusal(job, why, now, cost)));
        }
        let next = loop {
            let discarded = self.discarded.len();
            let job = self.queue.pop(now, &mut self.discarded);
            if self.limiter.is_some() {
                for i in discarded..self.discarded.len() {
                    let d = self.discarded[i];
                    self.sample(&d, now, Sample::Shed);
                }
            }
            match job {
                Some(job) if self.drop_expired && job.deadline <= now || !wanted(&job) => {
                    self.sample(&job, now, Sample::Expired);
                    dropped.push(job);
                }
                Some(job) => break self.start(job, now, draws),
                None => break None,
            }
        };
        Some((finished, next))
    }

    /// An outage begins at `now`. Jobs in the server that it discards are appended
    /// to `flushed`, with the service time they had received.
    pub fn begin_outage(&mut self, kind: OutageKind, now: SimTime, flushed: &mut Vec<Finished>) {
        self.outage = Some(kind);
        if let OutageKind::Brownout { factor } = kind {
            self.speed = factor;
            return;
        }
        if matches!(
            kind,
            OutageKind::Spike { .. } | OutageKind::Errors { .. } | OutageKind::CacheFlush
        ) {
            return;
        }
        self.flush(now, flushed);
    }

    /// Empties the server: every job in service (or being refused), queued or
    /// waiting to be refused is appended to `flushed`.
    fn flush(&mut self, now: SimTime, flushed: &mut Vec<Finished>) {
        self.epoch = self.epoch.wrapping_add(1);
        for (worker, slot) in self.running.iter_mut().enumerate() {
            if let Some(r) = slot.take() {
                flushed.push(Finished {
                    job: r.job,
                    service: now - r.started,
                    refused: r.refusing,
                });
                self.free.push(worker as u32);
            }
        }
        // Keep the free list in a fixed order so runs do not depend on flush order.
        self.free.sort_unstable_by(|a, b| b.cmp(a));
        flushed.extend(self.queue.drain(now).map(|job| Finished {
            job,
            service: SimDuration::ZERO,
            refused: None,
        }));
        flushed.extend(self.refusals.drain(..).map(|(job, why)| Finished {
            job,
            service: SimDuration::ZERO,
            refused: Some(why),
        }));
    }

    /// The server crashes at `now`: everything it holds is appended to
    /// `flushed` (to be answered with a reset) and it refuses connections until
    /// [`Server::restart`]. Returns when it will be back.
    pub fn crash(&mut self, now: SimTime, flushed: &mut Vec<Finished>) -> SimTime {
        self.flush(now, flushed);
        self.crashed = true;
        now + self.overload.restart
    }

    /// The server is back from a crash at `now`, empty and cold.
    pub fn restart(&mut self, now: SimTime) {
        self.crashed = false;
        self.restarted_at = Some(now);
    }

    /// The outage ends at `now`: full capacity again, after a warm-up if the
    /// outage was a `reset` (a restart).
    pub fn end_outage(&mut self, now: SimTime) {
        if self.outage == Some(OutageKind::Reset) {
            self.restarted_at = Some(now);
        }
        self.outage = None;
        self.speed = 1.0;
    }
}

#[cfg(test)]
mod tests;
