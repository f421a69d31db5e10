//! Bounds in time of a strategy's retries, from its settings alone (`sim
//! bound`): how long a request can take to give up under total failure, and
//! the peak of the retry wave that reaches a service when it comes back from
//! an outage that failed many clients at once.
//!
//! Notation, for a policy of `R` retries whose attempts each take `a` to
//! fail (0 when they fail at once, the attempt timeout `T` in a blackhole)
//! and whose delay before retry `k` lies in `[lo_k, hi_k]`: retry `k` of a
//! request whose first attempt failed at 0 is sent at
//! `S_k = d_1 + ... + d_k + (k - 1) a`.
//!
//! - **Giving up.** Under total failure a request ends after its last attempt
//!   fails: at `S_R + a`, between `sum lo_k + R a` and `(R + 1) T + sum hi_k`
//!   from its first attempt when each attempt waits out its timeout, never
//!   after its deadline (which also cuts an attempt short).
//! - **The wave.** `N` clients fail at once at the start of an outage that
//!   lasts `D`. An attempt sent before `D` fails; one sent after succeeds. So
//!   each client sends exactly one attempt after the outage, its first retry
//!   with `S_k >= D`, if it has one left: the wave holds at most `N`
//!   attempts. Without jitter every `S_k` is the same for all clients, and
//!   all `N` arrive at one instant (the AWS article's lockstep). With jitter
//!   whose delay `k` holds a uniform of width `w_k` drawn afresh, the density
//!   of `S_k` is at most `1 / w_k` (a sum with an independent term of density
//!   at most `1 / w` has density at most `1 / w`), and of `S_k` at most
//!   `1 / max(w_1..w_k)` when the delays are independent of each other. The
//!   wave's arrivals a second are then at most `N x sum 1 / w_k` over the
//!   retries that can be the first after the outage: `hi_k >= D` and
//!   `lo_(k-1) < D`. Network delays only add independent spread.

use super::value::{Bound, seconds, short};
use crate::retry::Strategy;

/// Seconds in a nanosecond.
const S_PER_NS: f64 = 1e-9;

/// Retries a bound follows at most: past this, "unlimited" retries are
/// reported as such instead of summed.
const MAX_RETRIES_FOLLOWED: u32 = 100_000;

/// The outage a wave bound assumes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outage {
    /// Clients (or requests) that fail at once at its start.
    pub clients: f64,
    /// How long it lasts after they fail, in seconds.
    pub length_s: f64,
    /// How long each attempt sent during it takes to fail, in seconds (0: at
    /// once; the attempt timeout in a blackhole); `None`: never (a blackhole
    /// with no attempt timeout).
    pub attempt_s: Option<f64>,
}

/// Each retry's delay range, in seconds, for retries 1 to `retries`.
struct Schedule {
    lo: Vec<f64>,
    hi: Vec<f64>,
    /// The width bounding the density of `S_k` (0: none).
    width: Vec<f64>,
}

fn schedule(s: &Strategy, retries: u32) -> Schedule {
    let (mut lo, mut hi, mut width) = (Vec::new(), Vec::new(), Vec::new());
    let (mut prev_hi, mut widest) = (0.0f64, 0.0f64);
    for n in 1..=retries {
        let r = s.backoff.range(n, prev_hi);
        prev_hi = r.hi;
        lo.push(r.lo * S_PER_NS);
        hi.push(r.hi * S_PER_NS);
        widest = if r.independent {
            widest.max(r.spread)
        } else {
            r.spread
        };
        width.push(widest * S_PER_NS);
    }
    Schedule { lo, hi, width }
}

/// A sum of delays in seconds, in words: "(0.2 + 0.4 + 0.8) s", the first
/// and last terms of a long one, "no delays" when all are 0.
fn terms(xs: &[f64]) -> String {
    if xs.iter().all(|x| *x == 0.0) {
        return "no delays".into();
    }
    let shown: Vec<String> = xs.iter().map(|x| short(*x)).collect();
    let sum = if shown.len() <= 6 {
        shown.join(" + ")
    } else {
        format!(
            "{} + ... + {}",
            shown[..3].join(" + "),
            shown[shown.len() - 1]
        )
    };
    if shown.len() == 1 {
        format!("{sum} s")
    } else {
        format!("({sum}) s")
    }
}

/// Seconds, with 0 as "0 s".
fn secs(x: f64) -> String {
    if x == 0.0 { "0 s".into() } else { seconds(x) }
}

const GIVE_UP: &str = "time until a request gives up, total failure";

/// ", at most the deadline 5 s", or nothing.
fn deadline_words(deadline: Option<f64>) -> String {
    deadline.map_or(String::new(), |d| {
        format!("; at most the deadline, {}", seconds(d))
    })
}

/// How long a request can take to give up under total failure: from its
/// first attempt to the failure of its last, fastest when attempts fail at
/// once and the delays are their shortest, slowest when every attempt waits
/// out its timeout and every delay is its longest; never past the deadline.
pub fn give_up(s: &Strategy) -> Bound {
    let p = &s.policy;
    let deadline = p.deadline.map(|d| d.as_secs_f64());
    let timeout = p.timeout.map(|t| t.as_secs_f64());
    match (&s.hedging, timeout) {
        (Some(_), None) => never(GIVE_UP, deadline),
        (Some(h), Some(t)) => hedged_give_up(h, t, deadline),
        (None, _) if p.max_retries == u32::MAX => unlimited_give_up(deadline),
        (None, _) => policy_give_up(s, timeout, deadline),
    }
}

/// Hedged copies: the last goes at `(max_attempts - 1) x delay` and waits
/// its timeout.
fn hedged_give_up(h: &crate::retry::HedgingConfig, t: f64, deadline: Option<f64>) -> Bound {
    let copies = f64::from(h.max_attempts);
    let delay = h.delay.as_secs_f64();
    let slow = deadline.map_or((copies - 1.0) * delay + t, |d| {
        ((copies - 1.0) * delay + t).min(d)
    });
    Bound {
        what: GIVE_UP.into(),
        value: slow,
        shown: format!("at once to {}", seconds(slow)),
        formula: format!(
            "failing at once, each copy sends the next at once; timing out, the last copy goes at (max_attempts - 1) x hedging delay and waits its timeout: {} x {} + {}{}",
            short(copies - 1.0),
            seconds(delay),
            seconds(t),
            deadline_words(deadline)
        ),
    }
}

/// Unlimited retries: only a deadline ends a request.
fn unlimited_give_up(deadline: Option<f64>) -> Bound {
    match deadline {
        Some(d) => Bound {
            what: GIVE_UP.into(),
            value: d,
            shown: format!("at most {}", seconds(d)),
            formula: "unlimited retries: only the deadline ends a request".into(),
        },
        None => Bound {
            what: GIVE_UP.into(),
            value: f64::INFINITY,
            shown: "never".into(),
            formula: "unlimited retries and no deadline: a request that keeps failing keeps retrying (a budget, breaker or throttle may end it)".into(),
        },
    }
}

/// A policy of `max_retries` retries: its delays' shortest and longest
/// sums, with its attempts' timeouts.
fn policy_give_up(s: &Strategy, timeout: Option<f64>, deadline: Option<f64>) -> Bound {
    let capped = |x: f64| deadline.map_or(x, |d| x.min(d));
    let r = s.policy.max_retries;
    let sched = schedule(s, r);
    let (lo_sum, hi_sum) = (sched.lo.iter().sum::<f64>(), sched.hi.iter().sum::<f64>());
    let fast = capped(lo_sum);
    let fast_terms = match (r, lo_sum == 0.0) {
        (0, _) => "no retries".to_owned(),
        (_, true) => "no delays".to_owned(),
        _ => format!("{}, its shortest delays", terms(&sched.lo)),
    };
    let Some(t) = timeout else {
        let mut b = never(GIVE_UP, deadline);
        b.formula = format!(
            "from {} when attempts fail at once ({fast_terms}); {}",
            secs(fast),
            b.formula
        );
        return b;
    };
    let slow = capped((f64::from(r) + 1.0) * t + hi_sum);
    let slow_terms = if r == 0 || hi_sum == 0.0 {
        String::new()
    } else {
        format!(" + {}, its longest delays", terms(&sched.hi))
    };
    Bound {
        what: GIVE_UP.into(),
        value: slow,
        shown: format!("{} to {}", secs(fast), seconds(slow)),
        formula: format!(
            "failing at once: {fast_terms}; each attempt waiting its timeout: (1 + {r}) x {}{slow_terms}{}",
            seconds(t),
            deadline_words(deadline)
        ),
    }
}

/// A request that can wait for ever: only its deadline ends it.
fn never(what: &str, deadline: Option<f64>) -> Bound {
    match deadline {
        Some(d) => Bound {
            what: what.into(),
            value: d,
            shown: format!("at most {}", seconds(d)),
            formula: "no attempt timeout: an attempt nobody answers ends at the deadline".into(),
        },
        None => Bound {
            what: what.into(),
            value: f64::INFINITY,
            shown: "never".into(),
            formula: "no attempt timeout and no deadline: an attempt nobody answers waits for ever"
                .into(),
        },
    }
}

/// The peak of the retry wave after `o`, as arrivals a second (infinite: all
/// at one instant), with the instant when there is one.
pub fn wave(s: &Strategy, o: &Outage) -> Bound {
    let (value, shown, formula) = wave_parts(s, o);
    Bound {
        what: format!(
            "retry wave after a {} outage that fails {} at once",
            seconds(o.length_s),
            short(o.clients)
        ),
        value,
        shown,
        formula,
    }
}

/// The earliest and latest sending times of the first attempt (0, at 0)
/// and of each retry after it, when each attempt takes `a` to fail.
fn send_times(sched: &Schedule, a: f64) -> (Vec<f64>, Vec<f64>) {
    let (mut lo, mut hi) = (vec![0.0f64], vec![0.0f64]);
    for k in 0..sched.lo.len() {
        let between = if k == 0 { 0.0 } else { a };
        lo.push(lo[k] + between + sched.lo[k]);
        hi.push(hi[k] + between + sched.hi[k]);
    }
    (lo, hi)
}

/// [`wave`]'s value, in words, and its formula.
fn wave_parts(s: &Strategy, o: &Outage) -> (f64, String, String) {
    if s.hedging.is_some() {
        return (
            f64::NAN,
            "not bounded here".into(),
            "hedged copies go out on a fixed delay or at once after a failure: no jitter spreads them".into(),
        );
    }
    let Some(a) = o.attempt_s else {
        return (
            0.0,
            "none".into(),
            "no attempt timeout: an attempt sent into the blackhole is never answered, so none is retried".into(),
        );
    };
    let (n, d) = (o.clients, o.length_s);
    let r = s.policy.max_retries.min(MAX_RETRIES_FOLLOWED);
    let sched = schedule(s, r);
    let (lo, hi) = send_times(&sched, a);
    // Retries k not yet past their deadline at their earliest (the first
    // attempt went out a before the failure), that can be the first after
    // the outage.
    let deadline = s.policy.deadline.map(|x| x.as_secs_f64() - a);
    let candidates: Vec<usize> = (1..lo.len())
        .filter(|&k| hi[k] >= d && lo[k - 1] < d && deadline.is_none_or(|x| lo[k] < x))
        .collect();
    let note = if s.budget.is_some() || s.breaker.is_some() || s.throttle.is_some() {
        " (its budget, breaker or throttle can only lower it)"
    } else {
        ""
    };
    let Some(&k0) = candidates.first() else {
        let last = hi.last().copied().unwrap_or(0.0);
        let why = match (r, last < d) {
            (0, _) => "no retries".to_owned(),
            (_, true) => format!(
                "its last retry goes out by {} after the failure, before the outage ends",
                seconds(last)
            ),
            (_, false) => "its deadline passes before the outage ends".to_owned(),
        };
        return (
            0.0,
            format!("none: all {} give up", short(n)),
            format!("{why}: every request the outage fails is lost"),
        );
    };
    if s.policy.max_retries > MAX_RETRIES_FOLLOWED
        && sched.lo.iter().all(|x| *x == 0.0)
        && candidates.last() == Some(&(lo.len() - 1))
    {
        return (
            f64::INFINITY,
            "no bound".into(),
            "unlimited retries whose delays can be 0: any number can come after the outage".into(),
        );
    }
    if candidates.len() == 1 && lo[k0] == hi[k0] {
        return lockstep(&sched, k0, lo[k0], a, o, note);
    }
    spread(&sched, &candidates, n, note)
}

/// Every client sends retry `k` at `at`, the first instant after the outage.
fn lockstep(
    sched: &Schedule,
    k: usize,
    at: f64,
    a: f64,
    o: &Outage,
    note: &str,
) -> (f64, String, String) {
    let sum = match (k > 1 && a > 0.0, at - a * (k as f64 - 1.0) > 0.0) {
        (true, true) => format!("({k} - 1) x {} + {}", seconds(a), terms(&sched.lo[..k])),
        (true, false) => format!("({k} - 1) x {}", seconds(a)),
        (false, _) => terms(&sched.lo[..k]),
    };
    (
        f64::INFINITY,
        format!(
            "all {} at one instant, {} after they fail{note}",
            short(o.clients),
            secs(at)
        ),
        format!(
            "no jitter: every client waits the same; retry {k} is the first sent at or after {}: {sum} = {}",
            seconds(o.length_s),
            secs(at)
        ),
    )
}

/// The retries in `candidates` spread by their jitter: at most `n / w_k` a
/// second each.
fn spread(sched: &Schedule, candidates: &[usize], n: f64, note: &str) -> (f64, String, String) {
    if let Some(&k) = candidates.iter().find(|&&k| sched.width[k - 1] == 0.0) {
        return (
            f64::INFINITY,
            format!("no bound: retry {k} can come in lockstep"),
            "its delays are fixed, or drawn from windows that depend on the delays before (decorrelated jitter): `sim delays` shows their spread".into(),
        );
    }
    let per_s: f64 = candidates.iter().map(|&k| n / sched.width[k - 1]).sum();
    let ks: Vec<String> = candidates.iter().map(|k| k.to_string()).collect();
    let widths: Vec<String> = candidates
        .iter()
        .map(|&k| format!("{} / {}", short(n), seconds(sched.width[k - 1])))
        .collect();
    (
        per_s,
        format!(
            "at most {} a second, at most {} in all{note}",
            short(per_s),
            short(n)
        ),
        format!(
            "N / the widest jitter so far, summed over the retries that can be the first after the outage ({}): {}",
            ks.join(", "),
            widths.join(" + ")
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SimDuration;
    use crate::retry::{Backoff, BackoffKind, RetryPolicy};

    fn strategy(kind: BackoffKind) -> Strategy {
        Strategy {
            name: "s".into(),
            backoff: Backoff {
                kind,
                ..Backoff::default()
            },
            policy: RetryPolicy::default(),
            budget: None,
            breaker: None,
            throttle: None,
            shared: Default::default(),
            tiers: Vec::new(),
            hedging: None,
            limits: None,
        }
    }

    const BLACKHOLE: Outage = Outage {
        clients: 1000.0,
        length_s: 2.0,
        attempt_s: Some(1.0),
    };

    #[test]
    fn the_article_settings_give_up_within_twelve_seconds() {
        // 5 retries, 1 s timeouts, 200 ms doubling: 6 x 1 + 6.2 s.
        let b = give_up(&strategy(BackoffKind::Exponential));
        assert!((b.value - 12.2).abs() < 1e-9, "{b:?}");
        assert!(b.shown.starts_with("6.2 s to"), "{}", b.shown);
        let b = give_up(&strategy(BackoffKind::FullJitter));
        assert!((b.value - 12.2).abs() < 1e-9);
        assert!(b.shown.starts_with("0 "), "{}", b.shown);
        let mut s = strategy(BackoffKind::FullJitter);
        s.policy.deadline = Some(SimDuration::from_secs(5));
        assert_eq!(give_up(&s).value, 5.0);
        s.policy.max_retries = u32::MAX;
        s.policy.deadline = None;
        assert!(give_up(&s).value.is_infinite());
    }

    #[test]
    fn no_jitter_sends_the_whole_wave_at_one_instant() {
        // Sent at 0.2, 0.2 + 1 + 0.4 = 1.6, 1.6 + 1 + 0.8 = 3.4: retry 3.
        let b = wave(&strategy(BackoffKind::Exponential), &BLACKHOLE);
        assert!(b.value.is_infinite());
        assert!(b.shown.contains("3.4 s after"), "{}", b.shown);
        assert!(b.formula.contains("retry 3"), "{}", b.formula);
    }

    #[test]
    fn full_jitter_spreads_the_wave_over_its_window() {
        // Only retry 3 can be first after the outage: 1000 / 0.8 s.
        let b = wave(&strategy(BackoffKind::FullJitter), &BLACKHOLE);
        assert!((b.value - 1250.0).abs() < 1e-9, "{b:?}");
        // Failing at once, retries 4 (up to 3.0 s) and 5 can be first.
        let fast = Outage {
            attempt_s: Some(0.0),
            ..BLACKHOLE
        };
        let b = wave(&strategy(BackoffKind::FullJitter), &fast);
        assert!(
            (b.value - (1000.0 / 1.6 + 1000.0 / 3.2)).abs() < 1e-9,
            "{b:?}"
        );
        // Equal jitter's window is half as wide.
        let b = wave(&strategy(BackoffKind::EqualJitter), &BLACKHOLE);
        assert!((b.value - 2500.0).abs() < 1e-9, "{b:?}");
    }

    #[test]
    fn a_wave_nobody_is_left_for_is_empty() {
        let long = Outage {
            length_s: 60.0,
            ..BLACKHOLE
        };
        let b = wave(&strategy(BackoffKind::Exponential), &long);
        assert_eq!(b.value, 0.0);
        assert!(b.shown.contains("give up"), "{}", b.shown);
        let b = wave(&strategy(BackoffKind::DecorrelatedJitter), &BLACKHOLE);
        assert!(b.shown.contains("no bound"), "{}", b.shown);
    }
}
