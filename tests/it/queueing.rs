//! The capacity server against queueing theory (REFERENCE.md section 6): with
//! open-loop Poisson arrivals, no outages and no retries it is a textbook queue.
//!
//! Each check runs R independent replications (seeds 1..=R) in parallel and
//! compares the grand mean with the closed form. Successive sojourn times are
//! strongly correlated, so the spread is measured, not assumed: every test also
//! asserts that the standard error across replications is below a third of its
//! tolerance, so that a pass means the engine agrees within the tolerance (at
//! three standard errors), not that the run was too short to tell.

use std::path::Path;

use rayon::prelude::*;
use retry_storm::model;
use retry_storm::scenario;

/// A single-queue world: Poisson arrivals at `rate`, `workers` servers with
/// service `service` (a TOML distribution), zero network latency, no retries.
fn queue_scenario(rate: f64, workers: u32, service: &str, duration_s: u64) -> scenario::Scenario {
    let src = format!(
        r#"
duration = "{duration_s}s"
[clients]
model = "open"
rate = {rate:.1}
[network]
latency = {{ dist = "constant", value = "0s" }}
[server]
workers = {workers}
queue = 4000000000
service = {service}
[metrics]
bucket = "1s"
[[strategy]]
name = "no-retries"
max_retries = 0
timeout = "none"
"#
    );
    scenario::parse(&src, Path::new("queue.toml")).unwrap_or_else(|e| panic!("{e}"))
}

/// Mean time in system (first attempt to answer, = sojourn with no network) of
/// each replication, seconds.
fn sojourns(s: &scenario::Scenario, replications: u64) -> Vec<f64> {
    (1..=replications)
        .into_par_iter()
        .map(|seed| {
            let r = model::run(&s.world, &s.strategies[0], seed, s.metrics.bucket);
            assert_eq!(
                r.totals.failed(),
                0,
                "an unbounded queue never fails a request"
            );
            r.totals.latency_sum_ns as f64 / r.totals.succeeded as f64 / 1e9
        })
        .collect()
}

/// Grand mean and its standard error.
fn mean_se(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0);
    (m, (var / n).sqrt())
}

fn check(name: &str, measured: &[f64], expected: f64, tolerance: f64) {
    let (m, se) = mean_se(measured);
    let rel = (m - expected).abs() / expected;
    eprintln!(
        "{name}: measured {m:.6} s, theory {expected:.6} s, {:+.2}%, SE {:.2}%",
        100.0 * (m / expected - 1.0),
        100.0 * se / expected
    );
    assert!(
        se / expected < tolerance / 3.0,
        "{name}: standard error {:.3}% too large to test {tolerance}",
        100.0 * se / expected
    );
    assert!(
        rel < tolerance,
        "{name}: measured {m:.6} s, theory {expected:.6} s ({:.2}% off, SE {:.2}%)",
        100.0 * rel,
        100.0 * se / expected
    );
}

/// Erlang C: the probability that an arrival waits in M/M/c with offered load a.
fn erlang_c(c: u32, a: f64) -> f64 {
    let rho = a / f64::from(c);
    let mut term = 1.0; // a^k / k!
    let mut sum = 0.0;
    for k in 0..c {
        sum += term;
        term *= a / f64::from(k + 1);
    }
    // term is now a^c / c!
    let top = term / (1.0 - rho);
    top / (sum + top)
}

#[test]
fn mm1_at_utilisation_one_half() {
    // lambda = 500/s, mu = 1000/s: W = 1 / (mu - lambda) = 2 ms.
    let s = queue_scenario(500.0, 1, r#"{ dist = "exponential", mean = "1ms" }"#, 400);
    check("M/M/1 rho 0.5", &sojourns(&s, 8), 1.0 / 500.0, 0.03);
}

#[test]
fn mm1_at_utilisation_nine_tenths() {
    // lambda = 900/s, mu = 1000/s: W = 10 ms. At rho = 0.9 the queue relaxes in
    // about 1 / (mu (1 - sqrt(rho))^2) = 0.4 s and sojourns are highly
    // correlated; 16 runs of 1000 s bring the standard error under 1%.
    let s = queue_scenario(900.0, 1, r#"{ dist = "exponential", mean = "1ms" }"#, 1000);
    check("M/M/1 rho 0.9", &sojourns(&s, 16), 1.0 / 100.0, 0.03);
}

#[test]
fn mmc_with_eight_servers_at_utilisation_eight_tenths() {
    // c = 8, mu = 1000/s each, lambda = 6400/s: W = C(8, 6.4) / (c mu - lambda) + 1/mu.
    let s = queue_scenario(6400.0, 8, r#"{ dist = "exponential", mean = "1ms" }"#, 100);
    let w = erlang_c(8, 6.4) / (8000.0 - 6400.0) + 1.0 / 1000.0;
    check("M/M/8 rho 0.8", &sojourns(&s, 8), w, 0.03);
}

#[test]
fn md1_at_utilisation_eight_tenths() {
    // Constant 1 ms service, lambda = 800/s: Pollaczek-Khinchine gives the mean
    // wait Wq = rho / (2 mu (1 - rho)) = 2 ms; the test compares the wait alone
    // (sojourn minus the 1 ms service).
    let s = queue_scenario(800.0, 1, r#"{ dist = "constant", value = "1ms" }"#, 400);
    let waits: Vec<f64> = sojourns(&s, 8).iter().map(|w| w - 0.001).collect();
    check("M/D/1 rho 0.8", &waits, 0.8 / (2.0 * 1000.0 * 0.2), 0.03);
}

#[test]
fn erlang_c_matches_known_values() {
    // One server: C(1, a) = a (the probability that the server is busy).
    assert!((erlang_c(1, 0.7) - 0.7).abs() < 1e-12);
    // Two servers, a = 1: C = (1/2 / (1 - 1/2)) / (1 + 1 + 1) = 1/3.
    assert!((erlang_c(2, 1.0) - 1.0 / 3.0).abs() < 1e-12);
}

#[test]
fn littles_law_holds_through_retries_and_an_outage() {
    // The outage scenario (closed loop, a crash, retries, queue flushes): over
    // the run, the time-average number in the server L equals its throughput
    // lambda (departures per second, flushed jobs included) times the mean time
    // in it W. Only jobs still inside at the end (a few dozen against ~60 000
    // departures) separate the two sides; 1% is generous.
    let s = scenario::load(Path::new("scenarios/outage.toml")).unwrap();
    for strategy in &s.strategies {
        let (l, lw, _) = crate::common::littles_law(&s.world, strategy, s.seed, s.metrics.bucket);
        eprintln!(
            "Little, {}: L = {l:.4}, lambda W = {lw:.4} ({:+.3}%)",
            strategy.name,
            100.0 * (lw / l - 1.0)
        );
        assert!(
            (l - lw).abs() / l < 0.01,
            "{}: L = {l}, lambda W = {lw}",
            strategy.name
        );
    }
}

/// A fleet: `replicas` single-worker replicas of exponential 1 ms service
/// behind `balancer`, Poisson arrivals at `per_replica` requests a second per
/// replica, zero network latency, no retries.
fn fleet_scenario(
    replicas: u32,
    balancer: &str,
    per_replica: f64,
    duration_s: u64,
) -> scenario::Scenario {
    let src = format!(
        r#"
duration = "{duration_s}s"
[clients]
model = "open"
rate = {rate:.1}
[network]
latency = {{ dist = "constant", value = "0s" }}
[server]
workers = 1
queue = 4000000000
service = {{ dist = "exponential", mean = "1ms" }}
replicas = {replicas}
balancer = "{balancer}"
[metrics]
bucket = "1s"
[[strategy]]
name = "no-retries"
max_retries = 0
timeout = "none"
"#,
        rate = per_replica * f64::from(replicas)
    );
    scenario::parse(&src, Path::new("fleet.toml")).unwrap_or_else(|e| panic!("{e}"))
}

/// The supermarket model (Mitzenmacher 2001; REFERENCE.md section 11): n
/// replicas of rate 1, Poisson arrivals at lambda n. A random pick makes each
/// replica an M/M/1 queue, where the share of queues holding at least i jobs
/// is lambda^i; joining the shorter of two random queues makes it tend to
/// lambda^(2^i - 1) as n grows. By Little's law the mean time in the system is
/// the mean number per queue over lambda: sum over i >= 1 of those shares.
#[test]
fn two_choices_against_random_on_a_hundred_replicas() {
    let lambda: f64 = 0.9;
    let random_w = 1.0 / (1000.0 * (1.0 - lambda)); // M/M/1: 10 ms
    let two_l: f64 = (1..20).map(|i| lambda.powi((1 << i) - 1)).sum();
    let two_w = two_l / (lambda * 1000.0); // 2.616 ms in the limit
    // 100 queues average each other out: 4 runs of 40 s (3.6 million requests
    // each) bring the standard error well under 1%; the queues relax in about
    // 0.4 s, so starting empty costs under 1%.
    let random = fleet_scenario(100, "random", 900.0, 40);
    check(
        "100 replicas, random",
        &sojourns(&random, 4),
        random_w,
        0.03,
    );
    // At n = 100 the finite fleet sits a little above the limit (its queues
    // are not independent); 5% covers that.
    let two = fleet_scenario(100, "power-of-two", 900.0, 40);
    let measured = sojourns(&two, 4);
    check("100 replicas, power of two choices", &measured, two_w, 0.05);
    assert!(
        mean_se(&measured).0 < random_w / 3.0,
        "two choices cut the mean time in system to under a third of random's"
    );
}

/// Round robin deals every n-th arrival of a Poisson stream to each replica,
/// so each sees Erlang-n interarrival times: an E_n/M/1 queue, where the mean
/// time in system is 1 / (mu (1 - sigma)), sigma the root in (0, 1) of
/// sigma = (n lambda / (n lambda + mu (1 - sigma)))^n (the GI/M/1 queue; Kleinrock,
/// Queueing Systems I, section 6.4). Least outstanding (join the shortest
/// queue, which Winston (1977) showed optimal among ways to dispatch to equal
/// exponential servers) must do at least as well, and no better than one
/// queue in front of all the workers (M/M/n).
#[test]
fn round_robin_is_erlang_and_least_outstanding_lies_between() {
    let (n, lambda, mu) = (10u32, 900.0, 1000.0);
    let k = f64::from(n);
    let mut sigma: f64 = 0.5;
    for _ in 0..10_000 {
        sigma = (k * lambda / (k * lambda + mu * (1.0 - sigma))).powf(k);
    }
    let erlang_w = 1.0 / (mu * (1.0 - sigma)); // 5.66 ms
    // 8 runs of 100 s: the standard error is about 1%.
    let rr = fleet_scenario(n, "round-robin", lambda, 100);
    let rr_runs = sojourns(&rr, 8);
    check(
        "10 replicas, round robin (E10/M/1)",
        &rr_runs,
        erlang_w,
        0.04,
    );
    let central_w = erlang_c(n, k * lambda / mu) / (k * mu - k * lambda) + 1.0 / mu;
    let lo = fleet_scenario(n, "least-outstanding", lambda, 40);
    let (w, se) = mean_se(&sojourns(&lo, 4));
    eprintln!(
        "10 replicas, least outstanding: {:.3} ms (SE {:.3}); M/M/10 {:.3} ms",
        w * 1e3,
        se * 1e3,
        central_w * 1e3
    );
    assert!(w > central_w, "no dispatching beats one central queue");
    assert!(
        w < mean_se(&rr_runs).0,
        "joining the shortest queue beats taking turns"
    );
}
