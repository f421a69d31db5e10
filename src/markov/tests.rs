use super::*;

/// Metafor's example (HotOS 2025): mu = 10, lambda = 9.5, a queue of 100,
/// one thread, timeout 3 s, 4 retries.
fn metafor() -> Params {
    Params {
        lambda: 9.5,
        workers: 1,
        mu: 10.0,
        capacity: 100,
        timeout: 3.0,
        retries: 4,
        backoff: 0.0,
    }
}

/// Without retries the chain is the M/M/c/K queue, whose stationary
/// distribution is known in closed form: pi_n proportional to a^n / n! up
/// to c, then to a^n / (c! c^(n - c)), a = lambda / mu.
#[test]
fn without_retries_the_chain_is_the_mmck_queue() {
    let p = Params {
        lambda: 30.0,
        workers: 3,
        mu: 12.0,
        capacity: 20,
        retries: 0,
        ..metafor()
    };
    let c = Chain::new(p, 2);
    let a = c.analyse().unwrap();
    let load = p.lambda / p.mu;
    let mut w = Vec::new();
    let mut x = 1.0;
    for n in 0..=20usize {
        if n > 0 {
            x *= load / n.min(3) as f64;
        }
        w.push(x);
    }
    let total: f64 = w.iter().sum();
    for (n, (&got, &want)) in a.marginal.iter().zip(&w).enumerate() {
        assert!(
            (got - want / total).abs() < 1e-12,
            "n = {n}: {got} against {}",
            want / total
        );
    }
    assert_eq!(a.split, None, "without retries nothing feeds a storm");
}

/// The late probability against its definition: for one worker, an
/// Erlang(n + 1, mu) sojourn exceeds t with the Poisson probability; for
/// several, against a numerical integral of the wait's density times the
/// service's tail.
#[test]
fn the_late_probability_is_the_sojourns_tail() {
    // One worker, 4 ahead, mu t = 3: P(Poisson(3) <= 4) = 0.815263...
    assert!((late_probability(4, 1, 10.0, 0.3) - 0.815_263_244_523_089).abs() < 1e-12);
    // Fewer than c ahead: its own service only.
    assert!((late_probability(1, 4, 2.0, 0.5) - (-1.0f64).exp()).abs() < 1e-15);
    // c = 3, 6 ahead (4 departures to wait for), mu = 2, t = 1.5.
    let (c, mu, t, k): (f64, f64, f64, i32) = (3.0, 2.0, 1.5, 4);
    let mut integral = 0.0;
    let steps = 200_000;
    let h = t / steps as f64;
    for i in 0..steps {
        let w = (i as f64 + 0.5) * h;
        let density = (c * mu).powi(k) * w.powi(k - 1) * (-(c * mu) * w).exp() / 6.0;
        integral += density * (-mu * (t - w)).exp() * h;
    }
    let wait_longer = poisson_cdf(3, c * mu * t);
    let want = wait_longer + integral;
    let got = late_probability(6, 3, mu, t);
    assert!((got - want).abs() < 1e-9, "{got} against {want}");
}

#[test]
fn poisson_tails_add_up() {
    for &a in &[0.5, 3.0, 30.0, 250.0] {
        for k in [0usize, 1, 5, 29, 30, 31, 200, 400] {
            let sum = poisson_cdf(k, a) + poisson_tail(k + 1, a);
            assert!((sum - 1.0).abs() < 1e-12, "a = {a}, k = {k}: {sum}");
        }
    }
    assert_eq!(poisson_tail(3, 0.0), 0.0);
    assert_eq!(poisson_cdf(0, 0.0), 1.0);
}

/// Metafor's example is metastable: from an empty server the chain fills
/// it within minutes at 95% load, and once full it does not come back
/// within 10^12 s; at 50% load filling it takes longer than a century, and
/// a burst of about 40 requests is as likely to tip it as not.
#[test]
fn metafors_example_is_metastable() {
    let a = Chain::new(metafor(), 300).analyse().unwrap();
    let split = a.split.expect("a storm can feed itself");
    assert!((15..40).contains(&split), "{split}");
    assert!(a.good_exit_s.unwrap() < 1000.0, "{:?}", a.good_exit_s);
    assert_eq!(a.bad_exit_s, Some(f64::INFINITY));
    assert!(a.truncated < 1e-12, "{}", a.truncated);
    let half = Chain::new(
        Params {
            lambda: 5.0,
            ..metafor()
        },
        300,
    )
    .analyse()
    .unwrap();
    assert!(half.good_exit_s.unwrap() > 3.2e9, "{:?}", half.good_exit_s);
    let n50 = half.tip.iter().position(|&t| t >= 0.5).unwrap();
    assert!((30..50).contains(&n50), "{n50}");
    // More load, a smaller burst tips it.
    let n50_busy = a.tip.iter().position(|&t| t >= 0.5).unwrap();
    assert!(n50_busy < n50, "{n50_busy} against {n50}");
}
