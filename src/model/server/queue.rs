//! The server's waiting room: which waiting request a free worker takes
//! (the oldest, the newest, or the newest only while the queue is congested,
//! Facebook's adaptive LIFO), and CoDel's drops as it takes them.
//!
//! CoDel follows the dequeue pseudo-code of RFC 8289 (Nichols, Jacobson,
//! McGregor and Iyengar, 2018), section 5, with a request for a packet: a
//! request whose sojourn in the queue has stayed at or above `target` for
//! `interval` is dropped, then one more each `interval / sqrt(count)`
//! while the sojourn stays above target. The RFC keeps a queue of at most
//! one maximum-size packet from dropping; here, a queue of at most one
//! request (after the one taken). A dropped request is answered 503 at once.

use std::collections::VecDeque;

use super::Job;
use crate::engine::{SimDuration, SimTime};
use crate::model::{Codel, Discipline};

/// Requests waiting for a worker, and the state of their discipline.
#[derive(Clone, Debug)]
pub(super) struct JobQueue {
    waiting: Waiting,
    codel: Option<Box<CodelState>>,
}

#[derive(Clone, Debug)]
struct Waiting {
    jobs: VecDeque<Job>,
    order: Discipline,
    /// When the queue was last empty (it is now, or it became non-empty then).
    last_empty: SimTime,
}

impl Waiting {
    /// Takes the next job in the discipline's order.
    #[inline]
    fn take(&mut self, now: SimTime) -> Option<Job> {
        let job = match self.order {
            Discipline::Fifo => self.jobs.pop_front(),
            Discipline::Lifo => self.jobs.pop_back(),
            Discipline::AdaptiveLifo { after } => {
                if now.0.saturating_sub(self.last_empty.0) >= after.0 {
                    self.jobs.pop_back()
                } else {
                    self.jobs.pop_front()
                }
            }
        };
        if self.jobs.is_empty() {
            self.last_empty = now;
        }
        job
    }
}

/// CoDel's control state (RFC 8289 section 5.3's variables).
#[derive(Clone, Debug)]
struct CodelState {
    target: SimDuration,
    interval: SimDuration,
    /// When the sojourn will have stayed above target for an interval
    /// (`first_above_time`; none while below).
    first_above: Option<SimTime>,
    /// In the dropping state.
    dropping: bool,
    /// Drops since entering the dropping state (the control law's count).
    count: u32,
    /// `count` when the last dropping state began.
    last_count: u32,
    /// When the next drop is due in the dropping state.
    drop_next: SimTime,
}

impl CodelState {
    /// The control law: the next drop `interval / sqrt(count)` after `t`.
    fn control_law(&self, t: SimTime, count: u32) -> SimTime {
        t + SimDuration::from_nanos_f64(self.interval.as_nanos_f64() / f64::from(count).sqrt())
    }

    /// RFC 8289's `dodequeue`: the next job, and whether CoDel may drop it
    /// (its sojourn has been at or above target for an interval).
    fn next(&mut self, w: &mut Waiting, now: SimTime) -> (Option<Job>, bool) {
        let Some(job) = w.take(now) else {
            self.first_above = None;
            return (None, false);
        };
        let sojourn = now - job.arrived;
        if sojourn < self.target || w.jobs.len() <= 1 {
            self.first_above = None;
            return (Some(job), false);
        }
        match self.first_above {
            None => {
                self.first_above = Some(now + self.interval);
                (Some(job), false)
            }
            Some(t) => (Some(job), now >= t),
        }
    }

    /// RFC 8289's `dequeue`: the job a free worker takes at `now`; the jobs
    /// dropped on the way are appended to `drops`.
    fn dequeue(&mut self, w: &mut Waiting, now: SimTime, drops: &mut Vec<Job>) -> Option<Job> {
        let (mut job, mut ok) = self.next(w, now);
        let Some(first) = job else {
            self.dropping = false;
            return None;
        };
        if self.dropping {
            if !ok {
                self.dropping = false;
            }
            // A long backlog may owe several drops at once.
            while self.dropping && now >= self.drop_next {
                if let Some(j) = job {
                    drops.push(j);
                }
                self.count += 1;
                (job, ok) = self.next(w, now);
                if ok {
                    self.drop_next = self.control_law(self.drop_next, self.count);
                } else {
                    self.dropping = false;
                }
            }
        } else if ok {
            drops.push(first);
            (job, _) = self.next(w, now);
            self.dropping = true;
            // Back above target soon after leaving the dropping state: start
            // from the drop rate that controlled the queue last time (the
            // Linux variant, which RFC 8289 gives).
            let delta = self.count.wrapping_sub(self.last_count);
            let recent = now.0.saturating_sub(self.drop_next.0) < 16 * self.interval.0;
            self.count = if delta > 1 && recent { delta } else { 1 };
            self.drop_next = self.control_law(now, self.count);
            self.last_count = self.count;
        }
        job
    }
}

impl JobQueue {
    /// An empty queue with `order`, and CoDel if set.
    pub(super) fn new(order: Discipline, codel: Option<Codel>) -> Self {
        JobQueue {
            waiting: Waiting {
                jobs: VecDeque::new(),
                order,
                last_empty: SimTime::ZERO,
            },
            codel: codel.map(|c| {
                Box::new(CodelState {
                    target: c.target,
                    interval: c.interval,
                    first_above: None,
                    dropping: false,
                    count: 0,
                    last_count: 0,
                    drop_next: SimTime::ZERO,
                })
            }),
        }
    }

    /// Jobs waiting.
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.waiting.jobs.len()
    }

    /// `job` joins the queue at `now`.
    #[inline]
    pub(super) fn push(&mut self, job: Job, now: SimTime) {
        if self.waiting.jobs.is_empty() {
            self.waiting.last_empty = now;
        }
        self.waiting.jobs.push_back(job);
    }

    /// The job a worker freed at `now` takes, if any; jobs CoDel drops on
    /// the way are appended to `drops`.
    #[inline]
    pub(super) fn pop(&mut self, now: SimTime, drops: &mut Vec<Job>) -> Option<Job> {
        match &mut self.codel {
            None => self.waiting.take(now),
            Some(c) => c.dequeue(&mut self.waiting, now, drops),
        }
    }

    /// Empties the queue at `now` (an outage or a crash), oldest first.
    pub(super) fn drain(&mut self, now: SimTime) -> std::collections::vec_deque::Drain<'_, Job> {
        self.waiting.last_empty = now;
        self.waiting.jobs.drain(..)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Ticket;

    fn job(slot: u32, arrived: u64) -> Job {
        Job {
            slot,
            attempt: 1,
            addr: u64::from(slot),
            deadline: SimTime::NEVER,
            bad: false,
            arrived: SimTime(arrived),
            timeout: Ticket::NONE,
            inflight: 0,
        }
    }

    const MS: u64 = 1_000_000;

    fn codel() -> Option<Codel> {
        Some(Codel {
            target: SimDuration(5 * MS),
            interval: SimDuration(100 * MS),
        })
    }

    /// A worker takes a job every 10 ms from a queue of 1000 that all
    /// arrived at 0: the sojourn is above the 5 ms target from the first
    /// take, so CoDel drops at the first take at or after 110 ms (an
    /// interval after it first saw it above), then at the first take at or
    /// after each `drop_next`: 110 + 100 = 210, + 100/sqrt 2 = 280.71,
    /// + 100/sqrt 3 = 338.45, + 100/sqrt 4 = 388.45, + 100/sqrt 5 = 433.17,
    /// + 100/sqrt 6 = 473.99, + 100/sqrt 7 = 511.79, + 100/sqrt 8 = 547.15.
    #[test]
    fn codel_drops_on_rfc_8289s_schedule() {
        let mut q = JobQueue::new(Discipline::Fifo, codel());
        for i in 0..1000 {
            q.push(job(i, 0), SimTime(0));
        }
        let mut drop_times = Vec::new();
        for k in 1..=100 {
            let now = SimTime(10 * MS * k);
            let mut drops = Vec::new();
            assert!(q.pop(now, &mut drops).is_some());
            drop_times.extend(drops.iter().map(|_| now.0 / MS));
        }
        assert_eq!(
            drop_times[..9],
            [110, 210, 290, 340, 390, 440, 480, 520, 550]
        );
        // Still at 1/sqrt(count): the gaps keep shrinking, never below 10 ms
        // here (one take per 10 ms).
        assert!(drop_times.len() > 12);
        assert_eq!(q.len(), 1000 - 100 - drop_times.len());
    }

    /// In the dropping state, a take whose sojourn is below target leaves
    /// it; back above target soon after, CoDel resumes at the rate it had
    /// reached (count = drops of the last cycle), not at 1.
    #[test]
    fn codel_leaves_the_dropping_state_and_resumes_at_its_last_rate() {
        let mut q = JobQueue::new(Discipline::Fifo, codel());
        for i in 0..100 {
            q.push(job(i, 0), SimTime(0));
        }
        let mut drops = Vec::new();
        for k in 1..=30 {
            q.pop(SimTime(10 * MS * k), &mut drops);
        }
        // Takes at 110, 210, 290: three drops by 300 ms.
        assert_eq!(drops.len(), 3);
        // The rest is fresh: jobs that arrived 1 ms before each take.
        let left = q.len();
        let _ = q.drain(SimTime(300 * MS)).count();
        assert_eq!(left, 100 - 30 - 3);
        for i in 0..50 {
            q.push(job(1000 + i, 300 * MS), SimTime(300 * MS));
        }
        // At 301 ms the sojourn is 1 ms: below target, dropping ends.
        drops.clear();
        q.pop(SimTime(301 * MS), &mut drops);
        assert!(drops.is_empty());
        // Above target again from 310 ms; an interval later, at 410 ms,
        // the first drop: delta = count 3 - last count 1 = 2 > 1 and the
        // last drop_next (338.45 ms) is within 16 intervals, so count
        // starts at 2: the next drop is 100/sqrt 2 = 70.71 ms later.
        let mut times = Vec::new();
        for k in 31..=48 {
            let now = SimTime(10 * MS * k);
            drops.clear();
            q.pop(now, &mut drops);
            times.extend(drops.iter().map(|_| now.0 / MS));
        }
        assert_eq!(times, [410]);
        for k in 49..=49 {
            let now = SimTime(10 * MS * k);
            drops.clear();
            q.pop(now, &mut drops);
            times.extend(drops.iter().map(|_| now.0 / MS));
        }
        assert_eq!(times, [410, 490], "410 + 70.71 = 480.71: the take at 490");
    }

    #[test]
    fn codel_never_drops_the_last_waiting_request() {
        let mut q = JobQueue::new(Discipline::Fifo, codel());
        q.push(job(0, 0), SimTime(0));
        q.push(job(1, 0), SimTime(0));
        let mut drops = Vec::new();
        assert_eq!(
            q.pop(SimTime(500 * MS), &mut drops).map(|j| j.slot),
            Some(0)
        );
        assert_eq!(
            q.pop(SimTime(900 * MS), &mut drops).map(|j| j.slot),
            Some(1)
        );
        assert!(drops.is_empty());
    }

    /// Adaptive LIFO: oldest first until the queue has not been empty for
    /// `after`, newest first from then until it empties.
    #[test]
    fn adaptive_lifo_turns_to_newest_first_while_congested() {
        let after = SimDuration(100 * MS);
        let mut q = JobQueue::new(Discipline::AdaptiveLifo { after }, None);
        let mut drops = Vec::new();
        for i in 0..4 {
            q.push(job(i, 0), SimTime(i as u64 * MS));
        }
        // 50 ms after the queue formed: FIFO.
        assert_eq!(q.pop(SimTime(50 * MS), &mut drops).unwrap().slot, 0);
        // 100 ms: congested, LIFO.
        assert_eq!(q.pop(SimTime(100 * MS), &mut drops).unwrap().slot, 3);
        assert_eq!(q.pop(SimTime(101 * MS), &mut drops).unwrap().slot, 2);
        assert_eq!(q.pop(SimTime(102 * MS), &mut drops).unwrap().slot, 1);
        // Empty at 102 ms: the next queue starts in FIFO again.
        q.push(job(4, 0), SimTime(150 * MS));
        q.push(job(5, 0), SimTime(151 * MS));
        assert_eq!(q.pop(SimTime(160 * MS), &mut drops).unwrap().slot, 4);
        assert!(drops.is_empty());
    }
}
