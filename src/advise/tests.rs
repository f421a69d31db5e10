//! The advice's parts checked on their own: objectives, candidates, scores.

use super::*;

#[test]
fn objectives_parse_and_refuse_at_the_word() {
    let o = Objective::parse("failed; peak_load_ratio <= 1.5").unwrap();
    assert_eq!(o.minimize, Metric::Failed);
    assert_eq!(o.limits, vec![(Metric::PeakLoad, 1.5)]);
    assert!(
        Objective::parse("fast")
            .unwrap_err()
            .contains("\"fast\" is not a metric")
    );
    assert!(
        Objective::parse("failed; p99 < 2")
            .unwrap_err()
            .contains("is not a limit")
    );
}

#[test]
fn the_grid_keeps_caps_at_least_the_base() {
    let g = grid(Some(SimDuration::from_secs(1)));
    assert!(g.iter().all(|c| c.cap >= c.base));
    assert!(g.len() > 1000);
}

#[test]
fn scaled_outages_stay_in_the_run_and_apart() {
    let s = crate::scenario::load(std::path::Path::new("scenarios/outage.toml")).unwrap();
    let w = scaled(&s.world, 2.0);
    for (a, b) in s.world.outages.iter().zip(&w.outages) {
        assert_eq!(a.start, b.start);
        assert!(b.end <= SimTime(w.duration.0));
        assert!(b.end.0 - b.start.0 >= a.end.0 - a.start.0);
    }
}

/// The candidate of one setting, for the tests below.
fn candidate(calls: Vec<Candidate>) -> Candidate {
    Candidate {
        kind: BackoffKind::EqualJitter,
        base: SimDuration::from_millis(150),
        cap: SimDuration::from_secs(3),
        retries: 4,
        timeout: Some(SimDuration::from_millis(700)),
        budget: Some(BudgetConfig::Ratio {
            ratio: 0.1,
            window: SimDuration::from_secs(10),
        }),
        calls,
    }
}

/// The strategy a candidate gives is the setting it describes, at the
/// users' tier and, in a call chain, at each tier of calls; the rest is
/// the template's.
#[test]
fn a_candidate_is_the_strategy_it_describes() {
    let chain = crate::scenario::load(std::path::Path::new("scenarios/call-chain.toml")).unwrap();
    let template = &chain.strategies[0];
    assert!(!template.tiers.is_empty(), "the chain scenario has tiers");
    let mut calls = candidate(Vec::new());
    calls.kind = BackoffKind::Constant;
    calls.retries = 1;
    let c = candidate(vec![calls; template.tiers.len()]);
    let s = c.strategy(template, "picked".into());
    assert_eq!(s.name, "picked");
    assert_eq!(
        (s.backoff.kind, s.backoff.base, s.backoff.cap),
        (c.kind, c.base, c.cap)
    );
    assert_eq!(
        (s.policy.max_retries, s.policy.timeout),
        (4, Some(SimDuration::from_millis(700)))
    );
    assert_eq!(s.budget, c.budget);
    for tier in &s.tiers {
        assert_eq!(tier.strategy.backoff.kind, BackoffKind::Constant);
        assert_eq!(tier.strategy.policy.max_retries, 1);
    }
    assert_eq!(s.tiers.len(), template.tiers.len());
}

/// A setting is feasible when every limit holds, and only then.
#[test]
fn feasible_means_every_limit_holds() {
    let o = Objective::parse("failed; peak_load_ratio <= 1.5").unwrap();
    let at = |load: f64| {
        let mut sums = [0.0; 4];
        let i = Metric::ALL
            .iter()
            .position(|&m| m == Metric::PeakLoad)
            .unwrap();
        sums[i] = load;
        Scores { sums, worlds: 1 }
    };
    assert!(o.feasible(&at(1.5)));
    assert!(!o.feasible(&at(1.6)));
}

/// The edits of a setting name every key of the users' strategy and of
/// each tier of calls.
#[test]
fn edits_name_every_key_at_every_tier() {
    let c = candidate(vec![candidate(Vec::new())]);
    let e = c.edits(2, &["db"]);
    let keys: Vec<&str> = e.iter().map(|(k, _)| k.as_str()).collect();
    for k in ["backoff", "base", "cap", "max_retries", "timeout", "budget"] {
        assert!(
            keys.contains(&format!("strategy[2].{k}").as_str()),
            "{keys:?}"
        );
        assert!(
            keys.contains(&format!("strategy[2].tiers.db.{k}").as_str()),
            "{keys:?}"
        );
    }
    let value = |k: &str| e.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
    assert_eq!(value("strategy[2].backoff"), Some("\"equal-jitter\""));
    assert_eq!(value("strategy[2].max_retries"), Some("4"));
}

/// Scores of one world with these four metrics' values.
fn scores(values: [f64; 4]) -> Scores {
    Scores {
        sums: values,
        worlds: 1,
    }
}

/// Domination is Pareto's: at least as good on every metric and better
/// on one; equal scores dominate neither way; a mean is over worlds.
#[test]
fn domination_is_paretos() {
    let a = scores([1.0, 2.0, 3.0, 4.0]);
    assert!(a.dominates(&scores([1.0, 2.0, 3.0, 5.0])));
    assert!(!scores([1.0, 2.0, 3.0, 5.0]).dominates(&a));
    assert!(!a.dominates(&scores([1.0, 2.0, 3.0, 4.0])));
    assert!(!a.dominates(&scores([0.0, 2.0, 3.0, 5.0])));
    assert!(!scores([0.0, 2.0, 3.0, 5.0]).dominates(&a));
    let two = Scores {
        sums: [2.0, 4.0, 6.0, 8.0],
        worlds: 2,
    };
    assert_eq!(two.get(Metric::P99), 4.0);
    assert!(!two.dominates(&a) && !a.dominates(&two));
}

/// A scenario of the repository, loaded.
fn scenario(name: &str) -> Scenario {
    crate::scenario::load(std::path::Path::new(&format!("scenarios/{name}.toml"))).unwrap()
}

/// Scaling stretches each outage from its start, and one that would reach
/// the next outage of its tier stops where that one starts.
#[test]
fn scaled_outages_stretch_and_stop_at_the_next() {
    let mut w = scenario("outage").world;
    let mut second = w.outages[0].clone();
    second.start = SimTime(w.outages[0].start.0 + 10_000_000_000);
    second.end = SimTime(second.start.0 + 2_000_000_000);
    w.outages.truncate(1);
    w.outages.push(second);
    let (s0, s1) = (w.outages[0].start, w.outages[1].start);
    let x3 = scaled(&w, 3.0);
    assert_eq!(x3.outages[0].end, SimTime(s0.0 + 6_000_000_000));
    assert_eq!(x3.outages[1].end, SimTime(s1.0 + 6_000_000_000));
    let x10 = scaled(&w, 10.0);
    assert_eq!(x10.outages[0].end, s1, "cut at the next outage's start");
    assert_eq!(x10.outages[1].end, SimTime(s1.0 + 20_000_000_000));
}

/// The front is the settings no other dominates; the pick is the front's
/// feasible one lowest on the objective's metric; the ranking puts the
/// front first, the feasible before the others in a layer.
#[test]
fn the_front_the_pick_and_the_ranking() {
    let o = Objective::parse("failed; peak_load_ratio <= 1.5").unwrap();
    let c = candidate(Vec::new());
    let alive = vec![
        (c.clone(), scores([10.0, 0.0, 2.0, 1.0])),
        (c.clone(), scores([20.0, 0.0, 1.0, 1.0])),
        (c.clone(), scores([30.0, 0.0, 3.0, 1.0])),
        (c, scores([5.0, 0.0, 4.0, 1.0])),
    ];
    let (front, pick) = judge(&alive, &o);
    assert_eq!(front, vec![0, 1, 3]);
    assert_eq!(pick, Some(1), "the only feasible member of the front");
    assert_eq!(ranked(&alive, &o), vec![1, 3, 0, 2]);
    let none = Objective::parse("failed; peak_load_ratio <= 0.5").unwrap();
    assert_eq!(judge(&alive, &none).1, None);
}

/// What advise refuses, and why: a world where nothing fails, a first
/// strategy that hedges, or hedges its calls to a service (named).
#[test]
fn refusals_name_their_reason() {
    assert_eq!(refusal(&scenario("outage")), None);
    let mut calm = scenario("outage");
    calm.world.outages.clear();
    assert!(refusal(&calm).unwrap().contains("no [[outage]]"));
    let hedge = scenario("hedging")
        .strategies
        .iter()
        .find(|s| s.name == "hedging")
        .and_then(|s| s.hedging)
        .unwrap();
    let mut hedged = scenario("outage");
    hedged.strategies[0].hedging = Some(hedge);
    assert!(refusal(&hedged).unwrap().contains("hedges: advise"));
    let mut chain = scenario("call-chain");
    chain.strategies[0].tiers[1].strategy.hedging = Some(hedge);
    let why = refusal(&chain).unwrap();
    assert!(why.contains("hedges its calls to database"), "{why}");
}

/// A run's summary with only the four figures the search scores.
fn summary(
    failed: u64,
    lost: Option<u64>,
    peak: Option<f64>,
    p99: Option<f64>,
) -> crate::metrics::Summary {
    crate::metrics::Summary {
        logical_requests: 1000,
        succeeded: 1000 - failed,
        failed,
        in_flight_at_end: 0,
        attempts: 0,
        retries: 0,
        amplification: 1.0,
        peak_attempts_per_s: 0.0,
        peak_load_ratio: peak,
        recovery_time_s: None,
        twin_overloaded: false,
        successes_lost: lost,
        extra_attempts: None,
        peak_backlog: 0.0,
        latency_p50_s: None,
        latency_p99_s: p99,
        latency_mean_s: None,
        wasted_work_fraction: 0.0,
        baseline_goodput_per_s: None,
        slower: None,
        totals: crate::metrics::Totals::default(),
    }
}

/// Scores are the means over the worlds added, each metric from its own
/// figure; a figure a run lacks counts as nothing lost, no peak, and a p99
/// as bad as can be (a run with no success).
#[test]
fn scores_are_means_of_the_worlds_figures() {
    let mut s = Scores::default();
    s.add(&summary(10, Some(4), Some(1.5), Some(0.2)));
    s.add(&summary(30, Some(8), Some(2.5), Some(0.4)));
    assert_eq!(s.get(Metric::Failed), 20.0);
    assert_eq!(s.get(Metric::SuccessesLost), 6.0);
    assert_eq!(s.get(Metric::PeakLoad), 2.0);
    assert!((s.get(Metric::P99) - 0.3).abs() < 1e-12);
    let mut none = Scores::default();
    none.add(&summary(0, None, None, None));
    assert_eq!(none.get(Metric::SuccessesLost), 0.0);
    assert_eq!(none.get(Metric::PeakLoad), 0.0);
    assert!(none.get(Metric::P99) > 1e300);
}

/// Why the pick: the only one within the limits; fewer of the objective's
/// metric than the next setting of the front (named by its number there);
/// or a tie on it broken by the next metric in column order.
#[test]
fn the_pick_is_explained_against_the_next() {
    let o = Objective::parse("failed").unwrap();
    let c = candidate(Vec::new());
    let advice = |finalists: Vec<Scores>, front: Vec<usize>, pick: usize| Advice {
        finalists: finalists.into_iter().map(|s| (c.clone(), s)).collect(),
        front,
        pick: Some(pick),
        drawn: 0,
        runs: 0,
    };
    let alone = advice(vec![scores([10.0, 0.0, 1.0, 1.0])], vec![0], 0);
    assert_eq!(
        why_the_pick(&alone, &o).unwrap(),
        "Why #1: it is the only setting on the front."
    );
    let limited = Objective::parse("failed; peak_load_ratio <= 1.5").unwrap();
    assert!(
        why_the_pick(&alone, &limited)
            .unwrap()
            .contains("within the limits")
    );
    let fewer = advice(
        vec![
            scores([30.0, 0.0, 1.0, 1.0]),
            scores([10.0, 0.0, 2.0, 1.0]),
            scores([20.0, 0.0, 0.5, 1.0]),
        ],
        vec![0, 1, 2],
        1,
    );
    assert_eq!(
        why_the_pick(&fewer, &o).unwrap(),
        "Why #2: of the settings on the front it has the fewest failed (10.0 on average, \
         against 20.0 for #3, the next)."
    );
    let tie = advice(
        vec![scores([10.0, 3.0, 2.0, 1.0]), scores([10.0, 1.5, 2.0, 1.0])],
        vec![0, 1],
        1,
    );
    assert_eq!(
        why_the_pick(&tie, &o).unwrap(),
        "Why #2: it ties with #1 on failed (10.0) and has the lower successes_lost \
         (1.500 against 3.000)."
    );
    let same = advice(vec![scores([10.0, 3.0, 2.0, 1.0]); 2], vec![0, 1], 0);
    assert_eq!(
        why_the_pick(&same, &o).unwrap(),
        "Why #1: it ties with #2 on every metric (failed 10.0); of settings that tie, the one \
         drawn first is shown first."
    );
    let none = Advice {
        pick: None,
        ..advice(vec![scores([1.0; 4])], vec![0], 0)
    };
    assert_eq!(why_the_pick(&none, &o), None);
}
