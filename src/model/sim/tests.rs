use super::*;

/// Reads and answers handled in place (recorded ahead, no events of
/// their own) give the run that handling each at its own event gives:
/// the AWS world with every strategy, one-shot, closed and open load,
/// with and without a retry limit, and hops long enough that some reads
/// are events after all; and the worlds of workers and a queue of the
/// ideal-server and main scenarios (timeouts, crashes and resets, open
/// and closed load; their strategies with a budget are not handled in
/// place). An observer that listens turns handling in place off (it
/// would hear the answers out of time order).
#[test]
fn reads_and_answers_handled_in_place_give_the_same_run() {
    struct Listening;
    impl Observer for Listening {}
    let load = |f: &str| {
        crate::scenario::load(std::path::Path::new(f)).expect("the shipped scenario is valid")
    };
    let s = load("scenarios/aws-jitter.toml");
    let mut closed = s.world.clone();
    closed.load = Load::Closed {
        clients: 40,
        think: crate::model::Dist::exponential(SimDuration::from_millis(50)).unwrap(),
    };
    // Not a whole number of buckets: answers due after the end, in
    // the last bucket, are not handled.
    closed.duration = SimDuration::from_millis(20_050);
    let mut open = closed.clone();
    open.load = Load::Open { rate_per_s: 150.0 };
    // Hops of seconds: a read more than 2^32 ns before its write is
    // an event after all (its gap does not fit the write's event).
    let mut slow = s.world.clone();
    slow.network = crate::model::Dist::lognormal(SimDuration::from_secs(1), 1.0).unwrap();
    slow.load = Load::OneShot { clients: 40 };
    let mut cases: Vec<(WorldConfig, Strategy)> = Vec::new();
    for world in [s.world.clone(), closed, open, slow] {
        for base in &s.strategies {
            for limit in [None, Some(4)] {
                let mut strategy = base.clone();
                if let Some(n) = limit {
                    strategy.policy.max_retries = n;
                }
                cases.push((world.clone(), strategy));
            }
        }
    }
    for f in ["scenarios/ideal-server.toml", "scenarios/outage.toml"] {
        let s = load(f);
        for (i, strategy) in s.strategies.iter().enumerate() {
            cases.push((s.world_for(i).into_owned(), strategy.clone()));
        }
    }
    let shown = |mut r: RunResult| {
        r.totals.events = 0;
        format!("{:?} {:?} {:?}", r.buckets, r.totals, r.latency)
    };
    let (mut handled, mut fewer) = (0, 0);
    for (world, strategy) in &cases {
        if !in_place(world, strategy) {
            assert!(strategy.budget.is_some(), "{}", strategy.name);
            continue;
        }
        handled += 1;
        let bucket = s.metrics.bucket;
        let quiet = run(world, strategy, 7, bucket);
        let heard = run_observed(world, strategy, 7, bucket, &mut Listening);
        assert!(heard.totals.attempts > 100, "a real run: {}", strategy.name);
        fewer += usize::from(quiet.totals.events < heard.totals.events);
        assert_eq!(quiet.in_flight_at_end, heard.in_flight_at_end);
        assert!(
            shown(quiet) == shown(heard),
            "{:?}, {}",
            world.load,
            strategy.name
        );
    }
    assert_eq!(fewer, handled);
    assert_eq!(handled, 4 * s.strategies.len() * 2 + 4 + 4);
}

/// The far lane only decides where events wait, never their order: a run with
/// the wheel is the run with the heap, event for event.
#[test]
fn the_wheel_and_the_heap_give_the_same_run() {
    let s = crate::scenario::load(std::path::Path::new("scenarios/outage.toml"))
        .expect("the shipped scenario is valid");
    for (i, strategy) in s.strategies.iter().enumerate() {
        let world = s.world_for(i);
        let bucket = s.metrics.bucket;
        let heap = Sim::<NoObserver, false>::new(&world, strategy, s.seed, bucket, &mut NoObserver)
            .run(bucket);
        let wheel = Sim::<NoObserver, true>::new(&world, strategy, s.seed, bucket, &mut NoObserver)
            .run(bucket);
        assert_eq!(heap.totals, wheel.totals, "{}", strategy.name);
        assert_eq!(heap.buckets, wheel.buckets, "{}", strategy.name);
        assert_eq!(
            format!("{:?}", heap.latency),
            format!("{:?}", wheel.latency),
            "{}",
            strategy.name
        );
        assert!(
            heap.totals.events > 200_000,
            "{}: a real run",
            strategy.name
        );
    }
}
