//! Each limiter's limit against its documented update rule on a step in
//! latency, worked by hand.

use super::*;

const MS: u64 = 1_000_000;

fn t(ms: u64) -> SimTime {
    SimTime(ms * MS)
}

/// A served request that took `rtt_ms`, ending at `end_ms`, with
/// `inflight` admitted when it was.
fn served(l: &mut Limiter, end_ms: u64, rtt_ms: u64, inflight: u32) {
    l.on_done(t(end_ms), t(end_ms - rtt_ms), inflight, Sample::Served);
}

/// AIMD: +1 per sample while at least half the limit is in flight; on a
/// drop or a sample slower than the timeout, `floor(limit * 0.9)` (at
/// least one less, at least 1).
#[test]
fn aimd_adds_one_and_cuts_by_its_ratio() {
    let mut l = Limiter::new(&LimiterConfig::Aimd(Aimd::default()), Draws::new(1), 0);
    assert_eq!(l.limit(t(0)), 10);
    for i in 1..=5 {
        served(&mut l, i, 1, 10);
    }
    assert_eq!(l.limit(t(5)), 15);
    // Fewer than half in flight: the limit is not the constraint, no growth.
    served(&mut l, 6, 1, 7);
    assert_eq!(l.limit(t(6)), 15);
    // The step: 6 s > the 5 s timeout, a drop: 15 * 0.9 = 13.5 -> 13.
    served(&mut l, 7000, 6000, 15);
    assert_eq!(l.limit(t(7000)), 13);
    l.on_done(t(7001), t(7000), 13, Sample::Expired);
    assert_eq!(l.limit(t(7001)), 11, "13 * 0.9 = 11.7 -> 11");
    // Near 1: at least one less, never below 1.
    let mut l = Limiter::new(
        &LimiterConfig::Aimd(Aimd {
            initial: 2,
            ..Aimd::default()
        }),
        Draws::new(1),
        0,
    );
    l.on_done(t(1), t(0), 2, Sample::Shed);
    assert_eq!(l.limit(t(1)), 1, "min(2 - 1, floor(1.8))");
    l.on_done(t(2), t(1), 1, Sample::Shed);
    assert_eq!(l.limit(t(2)), 1);
}

/// Vegas (smoothing 1): the first sample sets the no-load RTT. Then, with
/// queue = ceil(limit * (1 - noload / rtt)) and L = max(1, floor(log10
/// limit)): queue <= L grows by 6L, queue > 6L shrinks by L, a drop
/// shrinks by L; fewer than half the limit in flight changes nothing.
#[test]
fn vegas_grows_without_queueing_and_shrinks_on_a_latency_step() {
    let mut l = Limiter::new(&LimiterConfig::Vegas(Vegas::default()), Draws::new(1), 0);
    assert_eq!(l.limit(t(0)), 20);
    served(&mut l, 10, 10, 20); // no-load RTT = 10 ms
    served(&mut l, 20, 10, 20); // queue 0 <= 1: 20 + 6 = 26
    assert_eq!(l.limit(t(20)), 26);
    served(&mut l, 30, 10, 20); // 26 + 6
    assert_eq!(l.limit(t(30)), 32);
    // The step to 20 ms: queue = ceil(32 * 0.5) = 16 > 6: 32 - 1.
    served(&mut l, 50, 20, 32);
    assert_eq!(l.limit(t(50)), 31);
    served(&mut l, 70, 20, 31); // ceil(15.5) = 16 > 6
    assert_eq!(l.limit(t(70)), 30);
    // A queue between alpha (3) and beta (6) holds: 12 ms gives
    // ceil(30 * (1 - 10/12)) = ceil(5) = 5.
    served(&mut l, 82, 12, 30);
    assert_eq!(l.limit(t(82)), 30);
    // 11 ms: ceil(30 / 11) = 3, not below alpha: holds too; a drop: 29.
    l.on_done(t(100), t(90), 30, Sample::Shed);
    assert_eq!(l.limit(t(100)), 29);
    // App-limited: 10 in flight, 2 x 10 < 29.
    served(&mut l, 130, 20, 10);
    assert_eq!(l.limit(t(130)), 29);
}

/// Vegas's log10 steps: from 100 the step is 2 (and beta 12).
#[test]
fn vegas_steps_grow_with_log10_of_the_limit() {
    let mut l = Limiter::new(
        &LimiterConfig::Vegas(Vegas {
            initial: 98,
            ..Vegas::default()
        }),
        Draws::new(1),
        0,
    );
    served(&mut l, 10, 10, 98);
    served(&mut l, 20, 10, 98); // 98 + 6
    assert_eq!(l.limit(t(20)), 104);
    served(&mut l, 30, 10, 104); // log10(104) = 2: + 12
    assert_eq!(l.limit(t(30)), 116);
    served(&mut l, 40, 20, 116); // queue 58 > 12: - 2
    assert_eq!(l.limit(t(40)), 114);
}

/// Gradient2 (min 1 here, so the cut shows): long RTT a mean of the first
/// ten samples, gradient = clamp(long / short, 0.5, 1), new = limit *
/// gradient + 4, smoothed 0.2 toward it.
#[test]
fn gradient2_follows_long_over_short_rtt() {
    let mut l = Limiter::new(
        &LimiterConfig::Gradient2(Gradient2 {
            min: 1,
            ..Gradient2::default()
        }),
        Draws::new(1),
        0,
    );
    let est = |l: &Limiter| match l {
        Limiter::Gradient2(g) => g.estimate,
        _ => unreachable!(),
    };
    served(&mut l, 10, 10, 20);
    // 20 * 0.8 + (20 + 4) * 0.2 = 20.8
    assert!((est(&l) - 20.8).abs() < 1e-9);
    served(&mut l, 20, 10, 20);
    // 20.8 * 0.8 + 24.8 * 0.2 = 21.6
    assert!((est(&l) - 21.6).abs() < 1e-9);
    assert_eq!(l.limit(t(20)), 21);
    // The step to 40 ms: long = (10 + 10 + 40) / 3 = 20, gradient 0.5:
    // 21.6 * 0.8 + (10.8 + 4) * 0.2 = 20.24.
    served(&mut l, 60, 40, 21);
    assert!((est(&l) - 20.24).abs() < 1e-9);
    // long = 100 / 4 = 25, gradient 0.625: 20.24 * 0.8 + (12.65 + 4) * 0.2.
    served(&mut l, 100, 40, 21);
    assert!((est(&l) - 19.522).abs() < 1e-9);
    assert_eq!(l.limit(t(100)), 19);
    // Back to 5 ms: long = 105 / 5 = 21 is more than twice short, so the
    // long RTT decays by 0.9 after this sample; the gradient is 1:
    // 19.522 * 0.8 + 23.522 * 0.2 = 20.322.
    served(&mut l, 105, 5, 19);
    assert!((est(&l) - 20.322).abs() < 1e-9);
    match &l {
        Limiter::Gradient2(g) => assert!((g.long_rtt - 18.9 * MS as f64).abs() < 1e-3),
        _ => unreachable!(),
    }
    // App-limited: 9 in flight < 20.3 / 2: no change.
    served(&mut l, 110, 50, 9);
    assert!((est(&l) - 20.322).abs() < 1e-9);
}

/// Gradient2 with its defaults never goes below its minimum of 20.
#[test]
fn gradient2_defaults_hold_the_limit_at_its_minimum() {
    let mut l = Limiter::new(
        &LimiterConfig::Gradient2(Gradient2::default()),
        Draws::new(1),
        0,
    );
    for i in 1..=50 {
        served(&mut l, 10 * i, if i < 5 { 1 } else { 100 }, 20);
    }
    assert_eq!(l.limit(t(500)), 20);
}

fn envoy() -> EnvoyGradient {
    EnvoyGradient {
        request_count: 5,
        jitter: 0.0,
        ..EnvoyGradient::default()
    }
}

/// Envoy's gradient controller: the limit pinned at min_concurrency (3)
/// until request_count (5 here) samples give the minimum RTT (their
/// median); then each 100 ms window's median sets
/// limit = floor(g * limit + sqrt(g * limit)), g = clamp(1.25 minRTT /
/// sampleRTT, 0.5, 2), within [3, 1000].
#[test]
fn envoy_gradient_grows_then_halves_on_a_latency_step() {
    let mut l = Limiter::new(&LimiterConfig::Gradient(envoy()), Draws::new(1), 0);
    assert_eq!(l.limit(t(0)), 3);
    assert!(l.admits(t(0), 2) && !l.admits(t(0), 3));
    for end in [10, 20, 30, 40, 50] {
        served(&mut l, end, 10, 1);
    }
    // minRTT = 10 ms; the limit before the measurement (3) comes back; the
    // next window closes 100 ms after it ended, at 150 ms.
    assert_eq!(l.limit(t(149)), 3);
    for end in [60, 70, 80] {
        served(&mut l, end, 10, 1);
    }
    // g = 12.5 / 10 = 1.25: 3.75 + 1.94 = 5.69 -> 5.
    assert_eq!(l.limit(t(150)), 5);
    served(&mut l, 200, 10, 1);
    // 6.25 + 2.5 = 8.75 -> 8.
    assert_eq!(l.limit(t(250)), 8);
    // The step: 25 ms, g = 0.5: 4 + 2 = 6.
    served(&mut l, 300, 25, 1);
    assert_eq!(l.limit(t(350)), 6);
    // A window without samples changes nothing.
    assert_eq!(l.limit(t(450)), 6);
    // 50 ms: g = 0.25, clamped to 0.5: 3 + 1.73 = 4.73 -> 4.
    served(&mut l, 500, 50, 1);
    assert_eq!(l.limit(t(550)), 4);
    // The median of the window: 50, 50, 5 -> 50: 2 + 1.41 -> 3.
    for (end, rtt) in [(560, 50), (570, 50), (580, 5)] {
        served(&mut l, end, rtt, 1);
    }
    assert_eq!(l.limit(t(650)), 3);
}

/// Five windows in a row that leave the limit at its minimum start a new
/// minRTT measurement at once: samples of requests sent before it are
/// ignored, and the limit stays pinned until five new ones.
#[test]
fn envoy_gradient_remeasures_after_five_windows_at_the_minimum() {
    let mut l = Limiter::new(&LimiterConfig::Gradient(envoy()), Draws::new(1), 0);
    for end in [10, 20, 30, 40, 50] {
        served(&mut l, end, 10, 1);
    }
    // Windows closing at 150, 250, ..., 550 ms, each with a 100 ms sample:
    // g = 0.5 each time: 3 -> 3, five times.
    for w in 1..=5u64 {
        served(&mut l, 50 + 100 * w - 1, 100, 1);
        assert_eq!(l.limit(t(50 + 100 * w)), 3);
    }
    // The fifth window at the minimum: a measurement began at 550 ms. A
    // request sent before it does not count...
    match &l {
        Limiter::Gradient(g) => {
            assert!(g.measuring());
            assert_eq!(g.epoch, t(550));
        }
        _ => unreachable!(),
    }
    served(&mut l, 560, 100, 1);
    // ...five sent after it do: minRTT = 20 ms.
    for end in [571, 572, 573, 574, 575] {
        served(&mut l, end, 20, 1);
    }
    match &l {
        Limiter::Gradient(g) => {
            assert!(!g.measuring());
            assert_eq!(g.min_rtt, 20 * MS);
            assert_eq!(g.min_rtt_timer, Some(t(575) + SimDuration::from_secs(60)));
        }
        _ => unreachable!(),
    }
}

/// The minRTT measurement repeats every interval plus a jitter below
/// 15% of it, in whole milliseconds, the same for the same draws.
#[test]
fn envoy_gradient_jitters_its_next_measurement() {
    let cfg = EnvoyGradient {
        request_count: 1,
        ..EnvoyGradient::default()
    };
    let next = |seed: u64| {
        let mut l = Limiter::new(&LimiterConfig::Gradient(cfg), Draws::new(seed), 0);
        served(&mut l, 10, 10, 1);
        match &l {
            Limiter::Gradient(g) => g.min_rtt_timer.unwrap(),
            _ => unreachable!(),
        }
    };
    let a = next(1);
    let jitter = SimDuration((a - t(10)).0 - SimDuration::from_secs(60).0);
    assert!(jitter < SimDuration::from_millis(9000));
    assert_eq!(jitter.0 % MS, 0);
    assert_eq!(a, next(1));
    assert!((1..20).any(|s| next(s) != a));
}
