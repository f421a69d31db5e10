//! The server's unit tests: admission, the queue's order, outages and overload.

use super::*;
use crate::model::Discipline;

fn cfg(workers: u32, queue: u32) -> ServerConfig {
    ServerConfig {
        replicas: 1,
        balancer: Default::default(),
        fleet: Default::default(),
        workers,
        queue_capacity: queue,
        service: Dist::constant(SimDuration(10)),
        discipline: Discipline::Fifo,
        drop_expired: false,
        shed: None,
        codel: None,
        limiter: None,
        overload: Overload::default(),
        replica_service: Vec::new(),
    }
}

fn job(slot: u32) -> Job {
    Job {
        slot,
        attempt: 1,
        addr: u64::from(slot),
        deadline: SimTime::NEVER,
        bad: false,
        arrived: SimTime::ZERO,
        timeout: Ticket::NONE,
        inflight: 0,
    }
}

#[test]
fn fills_workers_then_queue_then_rejects() {
    let rng = Draws::new(1);
    let mut s = Server::new(&cfg(2, 1));
    let t = SimTime(0);
    assert!(matches!(
        s.admit(job(0), t, rng),
        Admission::Started {
            done_at: SimTime(10),
            ..
        }
    ));
    assert!(matches!(s.admit(job(1), t, rng), Admission::Started { .. }));
    assert_eq!(s.admit(job(2), t, rng), Admission::Queued);
    assert_eq!(
        s.admit(job(3), t, rng),
        Admission::Rejected(Rejection::Unavailable(None))
    );
    assert_eq!((s.busy(), s.queue_len()), (2, 1));
}

#[test]
fn completion_serves_the_queue_in_fifo_order() {
    let rng = Draws::new(1);
    let mut s = Server::new(&cfg(1, 5));
    let Admission::Started { worker, .. } = s.admit(job(0), SimTime(0), rng) else {
        panic!()
    };
    s.admit(job(1), SimTime(1), rng);
    s.admit(job(2), SimTime(2), rng);
    let (done, next) = s
        .complete(worker, s.epoch(), SimTime(10), rng, &mut Vec::new())
        .unwrap();
    assert_eq!((done.job.slot, done.service), (0, SimDuration(10)));
    assert_eq!(next, Some((worker, SimTime(20))));
    let (done, _) = s
        .complete(worker, s.epoch(), SimTime(20), rng, &mut Vec::new())
        .unwrap();
    assert_eq!(done.job.slot, 1);
}

#[test]
fn reset_flushes_everything_and_makes_completions_stale() {
    let rng = Draws::new(1);
    let mut s = Server::new(&cfg(1, 5));
    let epoch = s.epoch();
    s.admit(job(0), SimTime(0), rng);
    s.admit(job(1), SimTime(0), rng);
    let mut flushed = Vec::new();
    s.begin_outage(OutageKind::Reset, SimTime(4), &mut flushed);
    let slots: Vec<_> = flushed.iter().map(|f| (f.job.slot, f.service.0)).collect();
    assert_eq!(slots, [(0, 4), (1, 0)]);
    assert_eq!(
        s.complete(0, epoch, SimTime(10), rng, &mut Vec::new()),
        None
    );
    assert_eq!(
        s.admit(job(2), SimTime(5), rng),
        Admission::Rejected(Rejection::Refused)
    );
    s.end_outage(SimTime(6));
    assert!(matches!(
        s.admit(job(3), SimTime(6), rng),
        Admission::Started { .. }
    ));
}

#[test]
fn brownout_slows_new_services_and_blackhole_drops() {
    let rng = Draws::new(1);
    let mut s = Server::new(&cfg(2, 5));
    let mut flushed = Vec::new();
    s.begin_outage(
        OutageKind::Brownout { factor: 0.5 },
        SimTime(0),
        &mut flushed,
    );
    assert!(matches!(
        s.admit(job(0), SimTime(0), rng),
        Admission::Started {
            done_at: SimTime(20),
            ..
        }
    ));
    s.end_outage(SimTime(6));
    s.begin_outage(OutageKind::Blackhole, SimTime(1), &mut flushed);
    assert_eq!(flushed.len(), 1, "the job in service is lost");
    assert_eq!(s.admit(job(1), SimTime(2), rng), Admission::Dropped);
}

fn job_due(slot: u32, deadline: u64) -> Job {
    Job {
        deadline: SimTime(deadline),
        ..job(slot)
    }
}

#[test]
fn lifo_serves_the_newest_waiting_job() {
    let rng = Draws::new(1);
    let mut s = Server::new(&ServerConfig {
        replicas: 1,
        balancer: Default::default(),
        fleet: Default::default(),
        discipline: Discipline::Lifo,
        ..cfg(1, 5)
    });
    s.admit(job(0), SimTime(0), rng);
    s.admit(job(1), SimTime(1), rng);
    s.admit(job(2), SimTime(2), rng);
    let (done, _) = s
        .complete(0, s.epoch(), SimTime(10), rng, &mut Vec::new())
        .unwrap();
    assert_eq!(done.job.slot, 0);
    let (done, _) = s
        .complete(0, s.epoch(), SimTime(20), rng, &mut Vec::new())
        .unwrap();
    assert_eq!(done.job.slot, 2, "the newest waiting job went first");
}

#[test]
fn expired_jobs_are_dropped_unserved() {
    let rng = Draws::new(1);
    let mut s = Server::new(&ServerConfig {
        replicas: 1,
        balancer: Default::default(),
        fleet: Default::default(),
        drop_expired: true,
        ..cfg(1, 5)
    });
    s.admit(job(0), SimTime(0), rng);
    s.admit(job_due(1, 5), SimTime(1), rng); // its client stops waiting at t = 5
    s.admit(job_due(2, 50), SimTime(2), rng);
    let mut dropped = Vec::new();
    let (_, next) = s
        .complete(0, s.epoch(), SimTime(10), rng, &mut dropped)
        .unwrap();
    assert_eq!(dropped.iter().map(|j| j.slot).collect::<Vec<_>>(), [1]);
    assert_eq!(next, Some((0, SimTime(20))), "slot 2 is served at once");
    assert_eq!(
        s.admit(job_due(3, 11), SimTime(11), rng),
        Admission::Dropped
    );
}

#[test]
fn shedding_answers_429_past_the_threshold() {
    let rng = Draws::new(1);
    let ra = Some(SimDuration::from_secs(1));
    let mut s = Server::new(&ServerConfig {
        replicas: 1,
        balancer: Default::default(),
        fleet: Default::default(),
        shed: Some(Shedding {
            at: 2,
            retry_after: ra,
        }),
        ..cfg(1, 10)
    });
    s.admit(job(0), SimTime(0), rng);
    assert_eq!(s.admit(job(1), SimTime(0), rng), Admission::Queued);
    assert_eq!(s.admit(job(2), SimTime(0), rng), Admission::Queued);
    assert_eq!(
        s.admit(job(3), SimTime(0), rng),
        Admission::Rejected(Rejection::Shed(ra))
    );
}

fn with(overload: Overload, workers: u32, queue: u32) -> Server {
    Server::new(&ServerConfig {
        replicas: 1,
        balancer: Default::default(),
        fleet: Default::default(),
        overload,
        ..cfg(workers, queue)
    })
}

#[test]
fn crashes_when_held_would_pass_the_limit_and_restarts_empty() {
    let rng = Draws::new(1);
    let mut s = with(
        Overload {
            crash_at: Some(3),
            restart: SimDuration(100),
            ..Overload::default()
        },
        1,
        10,
    );
    for i in 0..3 {
        assert_ne!(s.admit(job(i), SimTime(0), rng), Admission::Crash);
    }
    assert_eq!(s.held(), 3);
    // The fourth would make four held: the server crashes.
    assert_eq!(s.admit(job(3), SimTime(1), rng), Admission::Crash);
    let mut flushed = Vec::new();
    assert_eq!(s.crash(SimTime(1), &mut flushed), SimTime(101));
    let slots: Vec<u32> = flushed.iter().map(|f| f.job.slot).collect();
    assert_eq!(slots, [0, 1, 2]);
    assert_eq!(s.held(), 0);
    assert_eq!(
        s.admit(job(4), SimTime(50), rng),
        Admission::Rejected(Rejection::Refused)
    );
    s.restart(SimTime(101));
    assert!(matches!(
        s.admit(job(5), SimTime(101), rng),
        Admission::Started { .. }
    ));
}

#[test]
fn a_cold_server_is_slower_until_it_has_warmed_up() {
    let rng = Draws::new(1);
    let mut s = with(
        Overload {
            cold_capacity: 0.5,
            warmup: SimDuration(100),
            ..Overload::default()
        },
        1,
        10,
    );
    let done = |s: &mut Server, t: u64, rng: Draws| match s.admit(job(0), SimTime(t), rng) {
        Admission::Started { done_at, worker } => {
            s.complete(worker, s.epoch(), done_at, rng, &mut Vec::new());
            done_at.0 - t
        }
        other => panic!("{other:?}"),
    };
    // Never restarted: warm. Constant 10 ns services.
    assert_eq!(done(&mut s, 0, rng), 10);
    let mut flushed = Vec::new();
    s.begin_outage(OutageKind::Reset, SimTime(100), &mut flushed);
    s.end_outage(SimTime(200));
    // At the restart, half capacity: twice as long; half-way, 75%; then full.
    assert_eq!(done(&mut s, 200, rng), 20);
    assert_eq!(done(&mut s, 250, rng), 13);
    assert_eq!(done(&mut s, 300, rng), 10);
    // A 503 outage is not a restart.
    s.begin_outage(
        OutageKind::Unavailable { retry_after: None },
        SimTime(400),
        &mut flushed,
    );
    s.end_outage(SimTime(500));
    assert_eq!(done(&mut s, 500, rng), 10);
}

#[test]
fn refusing_costs_a_worker_and_comes_before_queued_work() {
    let rng = Draws::new(1);
    let mut s = with(
        Overload {
            reject_cost: Some(SimDuration(5)),
            ..Overload::default()
        },
        1,
        1,
    );
    let Admission::Started { worker, .. } = s.admit(job(0), SimTime(0), rng) else {
        panic!()
    };
    assert_eq!(s.admit(job(1), SimTime(1), rng), Admission::Queued);
    // The queue is full: job 2 waits for a worker to refuse it.
    assert_eq!(s.admit(job(2), SimTime(2), rng), Admission::Deferred);
    let (done, next) = s
        .complete(worker, s.epoch(), SimTime(10), rng, &mut Vec::new())
        .unwrap();
    assert_eq!((done.job.slot, done.refused), (0, None));
    // The refusal goes first and takes 5 ns; the queued job after it.
    assert_eq!(next, Some((worker, SimTime(15))));
    let (done, next) = s
        .complete(worker, s.epoch(), SimTime(15), rng, &mut Vec::new())
        .unwrap();
    assert_eq!(
        (done.job.slot, done.refused, done.service),
        (2, Some(Rejection::Unavailable(None)), SimDuration(5))
    );
    assert_eq!(next, Some((worker, SimTime(25))));
}

#[test]
fn contention_slows_each_service_by_the_requests_held() {
    let rng = Draws::new(1);
    let mut s = with(
        Overload {
            contention: 0.5,
            coherency: 0.25,
            ..Overload::default()
        },
        3,
        10,
    );
    // n held (this one included): 1 + 0.5 (n - 1) + 0.25 n (n - 1).
    let starts: Vec<SimTime> = (0..3)
        .map(|i| match s.admit(job(i), SimTime(0), rng) {
            Admission::Started { done_at, .. } => done_at,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(starts, [SimTime(10), SimTime(20), SimTime(35)]);
}
