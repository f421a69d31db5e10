//! The capacity-limited server: `workers` in parallel, a bounded FIFO queue, and
//! the state of the current outage. It decides; the run loop schedules.

use std::collections::VecDeque;

use rand::Rng;

use crate::engine::{SimDuration, SimTime};
use crate::model::{Discipline, Dist, OutageKind, ServerConfig, Shedding};

/// One attempt inside the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Job {
    /// Client slot.
    pub slot: u32,
    /// Attempt number within the slot.
    pub attempt: u32,
    /// When the client stops waiting for the answer.
    pub deadline: SimTime,
    /// A permanently bad request: answered 400.
    pub bad: bool,
    /// When it reached the server.
    pub arrived: SimTime,
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
}

#[derive(Clone, Copy, Debug)]
struct Running {
    job: Job,
    started: SimTime,
}

/// The server's state during a run.
pub struct Server {
    service: Dist,
    discipline: Discipline,
    drop_expired: bool,
    shed: Option<Shedding>,
    queue_capacity: usize,
    running: Vec<Option<Running>>,
    free: Vec<u32>,
    queue: VecDeque<Job>,
    /// Bumped whenever in-service jobs are discarded, so their completions are stale.
    epoch: u32,
    outage: Option<OutageKind>,
    speed: f64,
}

/// A job the server finished or dropped, with the service time it consumed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Finished {
    /// The job.
    pub job: Job,
    /// Service time spent on it.
    pub service: SimDuration,
}

impl Server {
    /// An idle server.
    pub fn new(cfg: &ServerConfig) -> Self {
        Server {
            service: cfg.service.clone(),
            discipline: cfg.discipline,
            drop_expired: cfg.drop_expired,
            shed: cfg.shed,
            queue_capacity: cfg.queue_capacity as usize,
            running: vec![None; cfg.workers as usize],
            free: (0..cfg.workers).rev().collect(),
            // Grown on demand: a huge configured limit must not allocate up front.
            queue: VecDeque::new(),
            epoch: 0,
            outage: None,
            speed: 1.0,
        }
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

    fn start<R: Rng + ?Sized>(
        &mut self,
        job: Job,
        now: SimTime,
        rng: &mut R,
    ) -> Option<(u32, SimTime)> {
        let worker = self.free.pop()?;
        let mut service = self.service.sample(rng);
        if self.speed != 1.0 {
            service = SimDuration::from_nanos_f64(service.as_nanos_f64() / self.speed);
        }
        self.running[worker as usize] = Some(Running { job, started: now });
        Some((worker, now + service))
    }

    /// An attempt arrives at `now`.
    pub fn admit<R: Rng + ?Sized>(&mut self, job: Job, now: SimTime, rng: &mut R) -> Admission {
        match self.outage {
            Some(OutageKind::Reset) => return Admission::Rejected(Rejection::Refused),
            Some(OutageKind::Unavailable { retry_after }) => {
                return Admission::Rejected(Rejection::Unavailable(retry_after));
            }
            Some(OutageKind::Blackhole) => return Admission::Dropped,
            Some(OutageKind::Brownout { .. }) | None => {}
        }
        if self.drop_expired && job.deadline <= now {
            return Admission::Dropped;
        }
        if let Some((worker, done_at)) = self.start(job, now, rng) {
            return Admission::Started { worker, done_at };
        }
        if let Some(shed) = self.shed.filter(|s| self.queue.len() >= s.at as usize) {
            return Admission::Rejected(Rejection::Shed(shed.retry_after));
        }
        if self.queue.len() < self.queue_capacity {
            self.queue.push_back(job);
            return Admission::Queued;
        }
        Admission::Rejected(Rejection::Unavailable(None))
    }

    /// Worker `worker` finishes at `now` the job it started in `epoch`. Returns the
    /// finished job (None if the completion is stale) and the next job started on
    /// the freed worker, with its completion time. Queued jobs dropped unserved
    /// because their clients stopped waiting are appended to `dropped`.
    pub fn complete<R: Rng + ?Sized>(
        &mut self,
        worker: u32,
        epoch: u32,
        now: SimTime,
        rng: &mut R,
        dropped: &mut Vec<Job>,
    ) -> Option<(Finished, Option<(u32, SimTime)>)> {
        if epoch != self.epoch {
            return None;
        }
        let running = self.running.get_mut(worker as usize)?.take()?;
        self.free.push(worker);
        let finished = Finished {
            job: running.job,
            service: now - running.started,
        };
        let next = loop {
            let job = match self.discipline {
                Discipline::Fifo => self.queue.pop_front(),
                Discipline::Lifo => self.queue.pop_back(),
            };
            match job {
                Some(job) if self.drop_expired && job.deadline <= now => dropped.push(job),
                Some(job) => break self.start(job, now, rng),
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
        self.epoch = self.epoch.wrapping_add(1);
        for (worker, slot) in self.running.iter_mut().enumerate() {
            if let Some(r) = slot.take() {
                flushed.push(Finished {
                    job: r.job,
                    service: now - r.started,
                });
                self.free.push(worker as u32);
            }
        }
        // Keep the free list in a fixed order so runs do not depend on flush order.
        self.free.sort_unstable_by(|a, b| b.cmp(a));
        flushed.extend(self.queue.drain(..).map(|job| Finished {
            job,
            service: SimDuration::ZERO,
        }));
    }

    /// The outage ends: full capacity again.
    pub fn end_outage(&mut self) {
        self.outage = None;
        self.speed = 1.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{Stream, stream};

    fn cfg(workers: u32, queue: u32) -> ServerConfig {
        ServerConfig {
            workers,
            queue_capacity: queue,
            service: Dist::constant(SimDuration(10)),
            discipline: Discipline::Fifo,
            drop_expired: false,
            shed: None,
        }
    }

    fn job(slot: u32) -> Job {
        Job {
            slot,
            attempt: 1,
            deadline: SimTime::NEVER,
            bad: false,
            arrived: SimTime::ZERO,
        }
    }

    #[test]
    fn fills_workers_then_queue_then_rejects() {
        let mut rng = stream(1, Stream::Service);
        let mut s = Server::new(&cfg(2, 1));
        let t = SimTime(0);
        assert!(matches!(
            s.admit(job(0), t, &mut rng),
            Admission::Started {
                done_at: SimTime(10),
                ..
            }
        ));
        assert!(matches!(
            s.admit(job(1), t, &mut rng),
            Admission::Started { .. }
        ));
        assert_eq!(s.admit(job(2), t, &mut rng), Admission::Queued);
        assert_eq!(
            s.admit(job(3), t, &mut rng),
            Admission::Rejected(Rejection::Unavailable(None))
        );
        assert_eq!((s.busy(), s.queue_len()), (2, 1));
    }

    #[test]
    fn completion_serves_the_queue_in_fifo_order() {
        let mut rng = stream(1, Stream::Service);
        let mut s = Server::new(&cfg(1, 5));
        let Admission::Started { worker, .. } = s.admit(job(0), SimTime(0), &mut rng) else {
            panic!()
        };
        s.admit(job(1), SimTime(1), &mut rng);
        s.admit(job(2), SimTime(2), &mut rng);
        let (done, next) = s
            .complete(worker, s.epoch(), SimTime(10), &mut rng, &mut Vec::new())
            .unwrap();
        assert_eq!((done.job.slot, done.service), (0, SimDuration(10)));
        assert_eq!(next, Some((worker, SimTime(20))));
        let (done, _) = s
            .complete(worker, s.epoch(), SimTime(20), &mut rng, &mut Vec::new())
            .unwrap();
        assert_eq!(done.job.slot, 1);
    }

    #[test]
    fn reset_flushes_everything_and_makes_completions_stale() {
        let mut rng = stream(1, Stream::Service);
        let mut s = Server::new(&cfg(1, 5));
        let epoch = s.epoch();
        s.admit(job(0), SimTime(0), &mut rng);
        s.admit(job(1), SimTime(0), &mut rng);
        let mut flushed = Vec::new();
        s.begin_outage(OutageKind::Reset, SimTime(4), &mut flushed);
        let slots: Vec<_> = flushed.iter().map(|f| (f.job.slot, f.service.0)).collect();
        assert_eq!(slots, [(0, 4), (1, 0)]);
        assert_eq!(
            s.complete(0, epoch, SimTime(10), &mut rng, &mut Vec::new()),
            None
        );
        assert_eq!(
            s.admit(job(2), SimTime(5), &mut rng),
            Admission::Rejected(Rejection::Refused)
        );
        s.end_outage();
        assert!(matches!(
            s.admit(job(3), SimTime(6), &mut rng),
            Admission::Started { .. }
        ));
    }

    #[test]
    fn brownout_slows_new_services_and_blackhole_drops() {
        let mut rng = stream(1, Stream::Service);
        let mut s = Server::new(&cfg(2, 5));
        let mut flushed = Vec::new();
        s.begin_outage(
            OutageKind::Brownout { factor: 0.5 },
            SimTime(0),
            &mut flushed,
        );
        assert!(matches!(
            s.admit(job(0), SimTime(0), &mut rng),
            Admission::Started {
                done_at: SimTime(20),
                ..
            }
        ));
        s.end_outage();
        s.begin_outage(OutageKind::Blackhole, SimTime(1), &mut flushed);
        assert_eq!(flushed.len(), 1, "the job in service is lost");
        assert_eq!(s.admit(job(1), SimTime(2), &mut rng), Admission::Dropped);
    }

    fn job_due(slot: u32, deadline: u64) -> Job {
        Job {
            deadline: SimTime(deadline),
            ..job(slot)
        }
    }

    #[test]
    fn lifo_serves_the_newest_waiting_job() {
        let mut rng = stream(1, Stream::Service);
        let mut s = Server::new(&ServerConfig {
            discipline: Discipline::Lifo,
            ..cfg(1, 5)
        });
        s.admit(job(0), SimTime(0), &mut rng);
        s.admit(job(1), SimTime(1), &mut rng);
        s.admit(job(2), SimTime(2), &mut rng);
        let (done, _) = s
            .complete(0, s.epoch(), SimTime(10), &mut rng, &mut Vec::new())
            .unwrap();
        assert_eq!(done.job.slot, 0);
        let (done, _) = s
            .complete(0, s.epoch(), SimTime(20), &mut rng, &mut Vec::new())
            .unwrap();
        assert_eq!(done.job.slot, 2, "the newest waiting job went first");
    }

    #[test]
    fn expired_jobs_are_dropped_unserved() {
        let mut rng = stream(1, Stream::Service);
        let mut s = Server::new(&ServerConfig {
            drop_expired: true,
            ..cfg(1, 5)
        });
        s.admit(job(0), SimTime(0), &mut rng);
        s.admit(job_due(1, 5), SimTime(1), &mut rng); // its client stops waiting at t = 5
        s.admit(job_due(2, 50), SimTime(2), &mut rng);
        let mut dropped = Vec::new();
        let (_, next) = s
            .complete(0, s.epoch(), SimTime(10), &mut rng, &mut dropped)
            .unwrap();
        assert_eq!(dropped.iter().map(|j| j.slot).collect::<Vec<_>>(), [1]);
        assert_eq!(next, Some((0, SimTime(20))), "slot 2 is served at once");
        assert_eq!(
            s.admit(job_due(3, 11), SimTime(11), &mut rng),
            Admission::Dropped
        );
    }

    #[test]
    fn shedding_answers_429_past_the_threshold() {
        let mut rng = stream(1, Stream::Service);
        let ra = Some(SimDuration::from_secs(1));
        let mut s = Server::new(&ServerConfig {
            shed: Some(Shedding {
                at: 2,
                retry_after: ra,
            }),
            ..cfg(1, 10)
        });
        s.admit(job(0), SimTime(0), &mut rng);
        assert_eq!(s.admit(job(1), SimTime(0), &mut rng), Admission::Queued);
        assert_eq!(s.admit(job(2), SimTime(0), &mut rng), Admission::Queued);
        assert_eq!(
            s.admit(job(3), SimTime(0), &mut rng),
            Admission::Rejected(Rejection::Shed(ra))
        );
    }
}
