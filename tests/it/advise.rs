//! `sim advise`: the search and its chart are reproducible on any thread
//! count, its front is what no finalist beats, its pick is the objective's
//! among the front, and bad requests are refused.

use std::path::Path;

use retry_storm::advise::{self, Metric, Objective};
use retry_storm::{model, scenario};

use crate::common::sim;

/// The printed advice (its timing goes to stderr) and the drawn front.
fn advice(threads: &str, runs: &str) -> (String, Vec<u8>) {
    let dir = tempfile::TempDir::new().unwrap();
    let png = dir.path().join("front.png");
    let out = sim()
        .env("RAYON_NUM_THREADS", threads)
        .args(["advise", "scenarios/outage.toml", "-q", "--runs", runs])
        .args(["--objective", "failed; peak_load_ratio <= 1.5", "--plot"])
        .arg(&png)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The file's name differs between the two runs.
    let text = String::from_utf8(out.stdout)
        .unwrap()
        .replace(&png.display().to_string(), "front.png");
    (text, std::fs::read(&png).unwrap())
}

#[test]
fn the_advice_is_the_same_on_one_thread_and_two() {
    let (one, two) = (advice("1", "40"), advice("2", "40"));
    assert_eq!(one.0, two.0);
    assert!(one.1 == two.1, "the same PNG bytes");
    assert!(
        one.0.contains("[[strategy]]\nname = \"advised\""),
        "{}",
        one.0
    );
    // Why the pick beat the others on the front, in one line.
    assert!(one.0.contains("\nWhy #"), "{}", one.0);
}

/// Every front member is beaten by no finalist, every finalist off the
/// front is beaten by one, the pick keeps the limit and has the fewest
/// failed requests of the front's settings that do (then the fewest
/// successes lost). Checked here from the scores, apart from how the
/// search computed them.
#[test]
fn the_front_and_the_pick_are_what_the_scores_say() {
    let s = scenario::load(Path::new("scenarios/outage.toml")).unwrap();
    let objective = Objective::parse("failed; peak_load_ratio <= 1.5").unwrap();
    let a = advise::advise(&s, 60, 7, &objective, &|| {});
    assert!(a.runs <= 60 + 6, "{} runs for a budget of 60", a.runs);
    let beats = |x: usize, y: usize| {
        let (p, q) = (&a.finalists[x].1, &a.finalists[y].1);
        Metric::ALL.iter().all(|&m| p.get(m) <= q.get(m))
            && Metric::ALL.iter().any(|&m| p.get(m) < q.get(m))
    };
    let n = a.finalists.len();
    for i in 0..n {
        let beaten = (0..n).any(|j| beats(j, i));
        assert_eq!(a.front.contains(&i), !beaten, "finalist {i}");
        assert_eq!(a.finalists[i].1.worlds, 6, "finalists ran in every world");
    }
    let feasible: Vec<usize> = a
        .front
        .iter()
        .copied()
        .filter(|&i| a.finalists[i].1.get(Metric::PeakLoad) <= 1.5)
        .collect();
    match a.pick {
        Some(p) => {
            assert!(feasible.contains(&p));
            let best = feasible
                .iter()
                .map(|&i| a.finalists[i].1.get(Metric::Failed))
                .fold(f64::INFINITY, f64::min);
            assert_eq!(a.finalists[p].1.get(Metric::Failed), best);
            // Among those as good, the fewest successes lost.
            let lost = feasible
                .iter()
                .filter(|&&i| a.finalists[i].1.get(Metric::Failed) == best)
                .map(|&i| a.finalists[i].1.get(Metric::SuccessesLost))
                .fold(f64::INFINITY, f64::min);
            assert_eq!(a.finalists[p].1.get(Metric::SuccessesLost), lost);
        }
        None => assert!(feasible.is_empty()),
    }
}

/// An oracle for the search: every setting it draws (4 here, a tiny grid),
/// run in each of its six worlds apart from the search. The finalists are
/// drawn settings, their scores are those runs' means (taken here from the
/// runs' summaries: failed, successes lost, peak load, p99 with no success
/// counted as hopeless), and the front and the pick are those a brute force
/// over the finalists' scores finds.
#[test]
fn the_search_agrees_with_a_brute_force_of_its_draws() {
    let s = scenario::load(Path::new("scenarios/outage.toml")).unwrap();
    let objective = Objective::parse("failed; peak_load_ratio <= 1.5").unwrap();
    // 10 runs draw 4 settings (a setting costs 2.125 runs), halved to 2.
    let a = advise::advise(&s, 10, 3, &objective, &|| {});
    assert_eq!(a.drawn, 4);
    assert_eq!(a.finalists.len(), 2);
    let template = &s.strategies[0];
    let drawn = advise::draw(template, 4, 3);
    let base = s.world_for(0);
    let means: Vec<[f64; 4]> = drawn
        .iter()
        .map(|c| {
            let strategy = c.strategy(template, "oracle".into());
            let mut sums = [0.0; 4];
            let worlds = advise::worlds(s.seed);
            for w in &worlds {
                let world = advise::scaled(&base, w.length);
                let m = model::run_measured_with(&world, &strategy, w.seed, &s.metrics, None);
                let v = &m.summary;
                let values = [
                    v.failed as f64,
                    v.successes_lost.unwrap_or(0) as f64,
                    v.peak_load_ratio.unwrap_or(0.0),
                    v.latency_p99_s.unwrap_or(f64::MAX / 4.0),
                ];
                for (sum, x) in sums.iter_mut().zip(values) {
                    *sum += x;
                }
            }
            sums.map(|x| x / worlds.len() as f64)
        })
        .collect();
    let close = |x: f64, y: f64| (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0);
    let mut brute = Vec::new();
    for (candidate, scores) in &a.finalists {
        let k = drawn
            .iter()
            .position(|d| d == candidate)
            .expect("a finalist is a drawn setting");
        for (j, m) in Metric::ALL.into_iter().enumerate() {
            assert!(
                close(scores.get(m), means[k][j]),
                "setting {k}, {}: the search says {}, its runs {}",
                m.name(),
                scores.get(m),
                means[k][j]
            );
        }
        brute.push(means[k]);
    }
    // The brute force: the front is every finalist no other beats; the pick
    // is the front's best on failed among those within the peak limit, then
    // on the other metrics in order, then the first.
    let beats = |x: &[f64; 4], y: &[f64; 4]| {
        x.iter().zip(y).all(|(p, q)| p <= q) && x.iter().zip(y).any(|(p, q)| p < q)
    };
    let front: Vec<usize> = (0..brute.len())
        .filter(|&i| !brute.iter().any(|o| beats(o, &brute[i])))
        .collect();
    assert_eq!(a.front, front);
    let pick = front
        .iter()
        .copied()
        .filter(|&i| brute[i][2] <= 1.5)
        .min_by(|&x, &y| {
            brute[x]
                .iter()
                .zip(&brute[y])
                .map(|(p, q)| p.total_cmp(q))
                .find(|o| o.is_ne())
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(x.cmp(&y))
        });
    assert_eq!(a.pick, pick);
}

#[test]
fn bad_requests_are_refused() {
    for (args, words) in [
        (
            vec!["advise", "scenarios/outage.toml", "--objective", "fast"],
            "\"fast\" is not a metric",
        ),
        (
            vec!["advise", "scenarios/outage-map.toml"],
            "cannot advise on a sweep",
        ),
        (
            vec!["advise", "scenarios/outage.toml", "--runs", "3"],
            "10 runs or more",
        ),
    ] {
        let out = sim().args(&args).assert().code(2);
        let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        assert!(err.contains(words), "{args:?}: {err}");
    }
}

/// In a call chain each setting carries one for the calls to each service:
/// the printed advice has a `[strategy.tiers.NAME]` table per service, it is
/// the same on one thread and two, and the advised strategy, put in the
/// scenario in place of its own, runs. A first strategy that hedges its
/// calls to a service is refused (advise searches retry settings).
#[test]
fn a_chain_is_advised_per_tier() {
    let dir = tempfile::TempDir::new().unwrap();
    let run = |threads: &str| {
        let out = sim()
            .env("RAYON_NUM_THREADS", threads)
            .args(["advise", "scenarios/call-chain.toml", "-q", "--runs", "20"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let (one, two) = (run("1"), run("2"));
    assert_eq!(one, two);
    let advised = &one[one.find("[[strategy]]").expect("a pick")..];
    for service in ["backend", "database"] {
        assert!(
            advised.contains(&format!("[strategy.tiers.{service}]\nbackoff = ")),
            "{advised}"
        );
        assert!(one.contains(&format!("calls to {service}")), "{one}");
    }
    let text = std::fs::read_to_string("scenarios/call-chain.toml").unwrap();
    let world = &text[..text.find("[[strategy]]").unwrap()];
    let file = dir.path().join("advised.toml");
    std::fs::write(&file, format!("{world}{advised}")).unwrap();
    sim()
        .args(["run", "-q", "--no-plots"])
        .arg(&file)
        .arg("--out")
        .arg(dir.path().join("out"))
        .assert()
        .success();

    let hedged = text.replacen(
        "[strategy.tiers.database]\ntimeout = \"300ms\"",
        "[strategy.tiers.database]\ntimeout = \"300ms\"\nmax_retries = 0\nhedging = { delay = \"50ms\" }",
        1,
    );
    let file = dir.path().join("hedged.toml");
    std::fs::write(&file, hedged).unwrap();
    let out = sim().arg("advise").arg(&file).assert().code(2);
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(err.contains("hedges its calls to database"), "{err}");
}

/// A chain of `tiers` services, each calling the next, every one with the
/// users' policy, a brownout halfway down (reproducer 04's world).
fn long_chain(tiers: usize) -> String {
    let mut text = String::from(
        "name = \"long\"\nduration = \"60s\"\n\
         [network]\nlatency = { dist = \"constant\", value = \"1ms\" }\n\
         [clients]\nmodel = \"open\"\nrate = 100.0\n\
         [metrics]\nbaseline = \"5s\"\n\
         [server]\nworkers = 4\nqueue = 100\nservice = { dist = \"exponential\", mean = \"10ms\" }\ncalls = [\"t0\"]\n\
         [retry]\nmax_retries = 1\n",
    );
    text.push_str(&format!(
        "[[outage]]\nkind = \"brownout\"\nfactor = 0.5\nservice = \"t{}\"\nstart = \"10s\"\nend = \"20s\"\n\
         [[strategy]]\nname = \"a\"\n",
        tiers / 2
    ));
    for k in 0..tiers {
        text.push_str(&format!(
            "[[service]]\nname = \"t{k}\"\nworkers = 4\nqueue = 100\nservice = {{ dist = \"exponential\", mean = \"1ms\" }}\n"
        ));
        if k + 1 < tiers {
            text.push_str(&format!("calls = [\"t{}\"]\n", k + 1));
        }
    }
    text
}

/// Advice on a chain of 1 000 services fits in 1 GB of address space: each
/// tier's setting is drawn from one grid per timeout, not a grid of 7 560
/// settings made for each tier (1.5 GB, reproducer 04).
#[test]
fn advice_on_a_long_chain_fits_in_a_gigabyte() {
    let dir = tempfile::TempDir::new().unwrap();
    let file = dir.path().join("long.toml");
    std::fs::write(&file, long_chain(1000)).unwrap();
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 1000000 && exec \"$0\" advise \"$1\" --runs 10 -q")
        .arg(assert_cmd::cargo::cargo_bin("sim"))
        .arg(&file)
        .env("RAYON_NUM_THREADS", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
