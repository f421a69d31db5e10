//! What a fleet does beyond balancing: zones, retries sent to another replica,
//! outlier ejection, active health checks and autoscaling. Each is off unless
//! the scenario asks for it, and a single server never has any.
//!
//! The rules are the documented ones, cited at each type. This module holds
//! the configurations and the decisions (pure functions of counts and times,
//! tested here against the documented rules worked by hand); the run loop
//! (`model::sim::fleet`) feeds them and acts on what they decide.

use crate::engine::{SimDuration, SimTime};
use crate::retry::Outcome;

/// A fleet's options beyond its size and balancer.
#[derive(Clone, Debug, PartialEq)]
pub struct FleetOptions {
    /// Zone names; replica `i` is in zone `i % zones.len()`. Empty: no zones.
    pub zones: Vec<String>,
    /// A retry avoids the replica its previous attempt went to (Envoy's
    /// `retry_host_predicate: previous_hosts` with the default
    /// `host_selection_retry_max_attempts` of 1: one more pick, kept even if
    /// it lands on the same replica again).
    pub retry_other_replica: bool,
    /// The share of replicas in service that must be healthy, below which the
    /// balancer ignores health and uses every replica in service (Envoy's
    /// `healthy_panic_threshold`, default 50%).
    pub panic_threshold: f64,
    /// Passive health checking: outlier ejection.
    pub outlier: Option<OutlierConfig>,
    /// Active health checking.
    pub health_check: Option<HealthCheckConfig>,
    /// Horizontal autoscaling.
    pub autoscale: Option<AutoscaleConfig>,
}

impl Default for FleetOptions {
    fn default() -> Self {
        FleetOptions {
            zones: Vec::new(),
            retry_other_replica: false,
            panic_threshold: FleetOptions::DEFAULT_PANIC,
            outlier: None,
            health_check: None,
            autoscale: None,
        }
    }
}

impl FleetOptions {
    /// Envoy's default panic threshold, 50%.
    pub const DEFAULT_PANIC: f64 = 0.5;

    /// Whether the fleet needs anything beyond balancing.
    pub fn any(&self) -> bool {
        self.retry_other_replica
            || self.outlier.is_some()
            || self.health_check.is_some()
            || self.autoscale.is_some()
    }

    /// The zone of replica `r`, if the fleet has zones.
    pub fn zone_of(&self, r: usize) -> Option<usize> {
        (!self.zones.is_empty()).then(|| r % self.zones.len())
    }
}

/// Outlier ejection as Envoy's `outlier_detection` documents it (field names
/// and defaults are Envoy's).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OutlierConfig {
    /// Consecutive 5xx (a 5xx answer, a reset, a refused connection, a
    /// timeout) that eject a replica at once (`consecutive_5xx`, default 5).
    /// `None`: this detector is off.
    pub consecutive_5xx: Option<u32>,
    /// Time between ejection sweeps (`interval`, default 10 s).
    pub interval: SimDuration,
    /// Ejection time per ejection in a row (`base_ejection_time`, 30 s).
    pub base_ejection_time: SimDuration,
    /// The longest ejection (`max_ejection_time`, 300 s).
    pub max_ejection_time: SimDuration,
    /// The largest share of replicas ejected at once, in [0, 1]
    /// (`max_ejection_percent`, 10%); one ejection is always allowed.
    pub max_ejection_share: f64,
    /// Failure-percentage ejection (`failure_percentage_threshold` and its
    /// companions); `None` off, as Envoy's `enforcing_failure_percentage`
    /// defaults to 0.
    pub failure_percentage: Option<FailurePercentage>,
    /// Success-rate ejection (`success_rate_stdev_factor` and its
    /// companions); on by default, as Envoy's `enforcing_success_rate`
    /// defaults to 100%; `None` off.
    pub success_rate: Option<SuccessRate>,
}

impl Default for OutlierConfig {
    fn default() -> Self {
        OutlierConfig {
            consecutive_5xx: Some(5),
            interval: SimDuration::from_secs(10),
            base_ejection_time: SimDuration::from_secs(30),
            max_ejection_time: SimDuration::from_secs(300),
            max_ejection_share: 0.10,
            failure_percentage: None,
            success_rate: Some(SuccessRate::default()),
        }
    }
}

/// Envoy's success-rate detector: at each sweep, among the replicas with at
/// least `request_volume` answers in the interval (if at least
/// `minimum_hosts` have that many), a replica whose success rate is below
/// `mean - stdev_factor x stdev` of theirs is ejected (the mean and the
/// standard deviation of the success rates, in percent, of those
/// replicas; Envoy's `success_rate_stdev_factor` is that factor times 1000).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SuccessRate {
    /// The factor (`success_rate_stdev_factor` / 1000: 1.9).
    pub stdev_factor: f64,
    /// Replicas with enough volume needed (`success_rate_minimum_hosts`, 5).
    pub minimum_hosts: u32,
    /// Answers in the interval needed (`success_rate_request_volume`, 100).
    pub request_volume: u32,
}

impl Default for SuccessRate {
    fn default() -> Self {
        SuccessRate {
            stdev_factor: 1.9,
            minimum_hosts: 5,
            request_volume: 100,
        }
    }
}

/// Envoy's failure-percentage detector: at each sweep, a replica with at
/// least `request_volume` answers in the interval whose share of failures is
/// at least `threshold` is ejected, if at least `minimum_hosts` replicas had
/// that volume.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FailurePercentage {
    /// Failure share that ejects, in [0, 1] (`failure_percentage_threshold`, 85%).
    pub threshold: f64,
    /// Replicas with enough volume needed (`failure_percentage_minimum_hosts`, 5).
    pub minimum_hosts: u32,
    /// Answers in the interval needed (`failure_percentage_request_volume`, 50).
    pub request_volume: u32,
}

/// Whether an outcome counts as a 5xx for outlier detection: an error answer
/// from the server, or one the proxy would turn into a 5xx on its behalf (a
/// reset, a refused connection, a timeout: Envoy answers 503 or 504). A 4xx,
/// 429 included, is the server working.
pub fn is_5xx(outcome: Outcome) -> bool {
    matches!(
        outcome,
        Outcome::Timeout
            | Outcome::Reset
            | Outcome::Refused
            | Outcome::Status500
            | Outcome::Status502
            | Outcome::Status503
            | Outcome::Status504
    )
}

/// One replica's outlier-detection state.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct OutlierState {
    /// 5xx in a row.
    pub consecutive: u32,
    /// When it was last ejected, while it is.
    pub ejected_at: Option<SimTime>,
    /// Ejections in a row: the multiplier of the ejection time.
    pub multiplier: u32,
    /// Answers and failures since the last sweep.
    pub answers: u32,
    /// See `answers`.
    pub failures: u32,
}

impl OutlierConfig {
    /// How long a replica ejected with `multiplier` stays out:
    /// `base * multiplier`, at most `max(base, max_ejection_time)`.
    pub fn ejection_time(&self, multiplier: u32) -> SimDuration {
        let base = self.base_ejection_time.0;
        let cap = base.max(self.max_ejection_time.0);
        SimDuration(base.saturating_mul(u64::from(multiplier.max(1))).min(cap))
    }

    /// Whether one more ejection is allowed with `ejected` of `total`
    /// replicas out: while the share already out is below the maximum, as
    /// Envoy checks it before it ejects (`ejectHost` in
    /// `outlier_detection_impl.cc`: `ejected_percent <
    /// max_ejection_percent`), so the last one allowed may take the share
    /// past it (50% of five replicas lets three go); and always when none is
    /// out (recent Envoy ejects at least one).
    pub fn may_eject(&self, ejected: usize, total: usize) -> bool {
        let out = if total == 0 {
            0.0
        } else {
            ejected as f64 / total as f64
        };
        ejected == 0 || out < self.max_ejection_share - 1e-9
    }

    /// An answer from a replica in state `s`: counts it, and says whether it
    /// makes the replica an outlier now (consecutive 5xx reached). The count
    /// starts again from zero then, whether or not the maximum share lets
    /// the ejection through, as Envoy resets it once it has tried to eject
    /// (`onConsecutiveErrorWorker` in `outlier_detection_impl.cc`): a
    /// replica refused for want of room needs a new run of errors.
    pub fn observe(&self, s: &mut OutlierState, failed: bool) -> bool {
        if s.ejected_at.is_some() {
            return false;
        }
        s.answers = s.answers.saturating_add(1);
        if failed {
            s.failures = s.failures.saturating_add(1);
            s.consecutive = s.consecutive.saturating_add(1);
        } else {
            s.consecutive = 0;
        }
        let outlier = self
            .consecutive_5xx
            .is_some_and(|k| failed && s.consecutive >= k);
        if outlier {
            s.consecutive = 0;
        }
        outlier
    }

    /// Ejects the replica at `now`: the multiplier grows while its ejection
    /// time is below the cap.
    pub fn eject(&self, s: &mut OutlierState, now: SimTime) {
        s.ejected_at = Some(now);
        if self.ejection_time(s.multiplier.saturating_add(1)) > self.ejection_time(s.multiplier)
            || s.multiplier == 0
        {
            s.multiplier = s.multiplier.saturating_add(1);
        }
        s.consecutive = 0;
    }

    /// The sweep's first part for one replica at `now`: an ejected replica
    /// whose time is served comes back (true); one in service and not
    /// ejected since the last sweep has its multiplier decremented.
    pub fn sweep_uneject(&self, s: &mut OutlierState, now: SimTime) -> bool {
        match s.ejected_at {
            Some(at) if now - at >= self.ejection_time(s.multiplier) => {
                s.ejected_at = None;
                s.consecutive = 0;
                true
            }
            Some(_) => false,
            None => {
                s.multiplier = s.multiplier.saturating_sub(1);
                false
            }
        }
    }

    /// The success-rate verdicts of a sweep, for replicas' `(answers,
    /// failures)` in the interval: which are outliers (before the maximum
    /// share is applied), as Envoy's `successRateEjectionThreshold` finds
    /// them: the mean and population standard deviation of the success
    /// rates (in percent) of the replicas with enough answers, and those
    /// below `mean - factor x stdev`.
    pub fn success_outliers(&self, windows: &[(u32, u32)]) -> Vec<bool> {
        let Some(sr) = self.success_rate else {
            return vec![false; windows.len()];
        };
        let enough = |&(a, _): &(u32, u32)| a >= sr.request_volume.max(1);
        let rates: Vec<f64> = windows
            .iter()
            .filter(|w| enough(w))
            .map(|&(a, f)| 100.0 * f64::from(a - f.min(a)) / f64::from(a))
            .collect();
        if (rates.len() as u32) < sr.minimum_hosts.max(1) {
            return vec![false; windows.len()];
        }
        let n = rates.len() as f64;
        let mean = rates.iter().sum::<f64>() / n;
        let variance = rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / n;
        let threshold = mean - sr.stdev_factor * variance.sqrt();
        windows
            .iter()
            .map(|&(a, f)| {
                enough(&(a, f)) && 100.0 * f64::from(a - f.min(a)) / f64::from(a) < threshold
            })
            .collect()
    }

    /// The failure-percentage verdicts of a sweep, for replicas' `(answers,
    /// failures)` in the interval: which are outliers (before the maximum
    /// share is applied).
    pub fn failure_outliers(&self, windows: &[(u32, u32)]) -> Vec<bool> {
        let Some(fp) = self.failure_percentage else {
            return vec![false; windows.len()];
        };
        let enough = |&(a, _): &(u32, u32)| a >= fp.request_volume.max(1);
        if (windows.iter().filter(|w| enough(w)).count() as u32) < fp.minimum_hosts {
            return vec![false; windows.len()];
        }
        windows
            .iter()
            .map(|w| enough(w) && f64::from(w.1) >= fp.threshold * f64::from(w.0) - 1e-9)
            .collect()
    }
}

/// Active health checking: every `interval` each replica in service is
/// checked; after `unhealthy_threshold` failed checks in a row it leaves the
/// rotation, after `healthy_threshold` passed checks in a row it returns.
/// The defaults are Kubernetes' readiness probe's (period 10 s, timeout 1 s,
/// failure threshold 3, success threshold 1); Envoy's `health_checks` has the
/// same four fields without defaults.
///
/// A check is not simulated as a request: it passes when the replica answers
/// at all (it is not crashed, in a reset, blackhole or 503 outage) and a
/// request arriving now would start service within `timeout` (the work
/// queued ahead of it over the replica's capacity), as a check queued behind
/// the work would.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HealthCheckConfig {
    /// Time between checks.
    pub interval: SimDuration,
    /// A check slower than this fails.
    pub timeout: SimDuration,
    /// Failed checks in a row that take a replica out.
    pub unhealthy_threshold: u32,
    /// Passed checks in a row that bring it back.
    pub healthy_threshold: u32,
}

impl Default for HealthCheckConfig {
    fn default() -> Self {
        HealthCheckConfig {
            interval: SimDuration::from_secs(10),
            timeout: SimDuration::from_secs(1),
            unhealthy_threshold: 3,
            healthy_threshold: 1,
        }
    }
}

/// One replica's active health-check state.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CheckState {
    /// Out of the rotation after failed checks.
    pub unhealthy: bool,
    /// Checks in a row with the same result, and that result.
    pub streak: u32,
    /// See `streak`.
    pub last_passed: bool,
}

impl HealthCheckConfig {
    /// A check's result: updates the streak; returns whether the replica's
    /// health changed.
    pub fn record(&self, s: &mut CheckState, passed: bool) -> bool {
        if passed == s.last_passed {
            s.streak = s.streak.saturating_add(1);
        } else {
            s.last_passed = passed;
            s.streak = 1;
        }
        let flip = if s.unhealthy {
            passed && s.streak >= self.healthy_threshold
        } else {
            !passed && s.streak >= self.unhealthy_threshold
        };
        if flip {
            s.unhealthy = !s.unhealthy;
        }
        flip
    }
}

/// Horizontal autoscaling as Kubernetes' HorizontalPodAutoscaler (autoscaling/v2)
/// documents it, on utilisation: the share of a replica's workers busy,
/// averaged over the sync period, standing in for CPU utilisation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AutoscaleConfig {
    /// Fewest replicas.
    pub min: u32,
    /// Most replicas.
    pub max: u32,
    /// The utilisation aimed at, in (0, 1].
    pub target: f64,
    /// Time between decisions (`--horizontal-pod-autoscaler-sync-period`, 15 s).
    pub sync: SimDuration,
    /// No change while the ratio to the target is within 1 +- this
    /// (`--horizontal-pod-autoscaler-tolerance`, 0.1).
    pub tolerance: f64,
    /// A scale-down takes the highest recommendation of this window
    /// (`behavior.scaleDown.stabilizationWindowSeconds`, 300 s).
    pub down_window: SimDuration,
    /// A scale-up takes the lowest recommendation of this window
    /// (`behavior.scaleUp.stabilizationWindowSeconds`, 0).
    pub up_window: SimDuration,
    /// From the decision to a replica in service: scheduling, image pull,
    /// start, readiness (no Kubernetes default: the scenario says).
    pub startup: SimDuration,
}

impl AutoscaleConfig {
    /// The replica count recommended at one sync: `ready_util` is the sum of
    /// the ready replicas' utilisations (each in [0, 1]), `ready` their
    /// number, `current` the replicas asked for (ready plus starting). As the
    /// HPA does: no change within the tolerance; a scale-up counts replicas
    /// not yet ready at 0% and is dropped if that reverses it; the
    /// recommendation is `ceil(current * ratio)`, which with the starting
    /// replicas at 0% is `ceil(sum / target)`.
    pub fn recommend(&self, ready_util: f64, ready: u32, current: u32) -> u32 {
        if ready == 0 {
            return current;
        }
        let ratio = ready_util / (f64::from(ready) * self.target);
        if (ratio - 1.0).abs() <= self.tolerance {
            return current;
        }
        if ratio > 1.0 && current > ready {
            let all = ready_util / (f64::from(current) * self.target);
            if all <= 1.0 + self.tolerance {
                return current;
            }
        }
        // A whisker below an integer is that integer (floating-point sums).
        ((ready_util / self.target) - 1e-9).ceil().max(0.0) as u32
    }

    /// The replicas to run after stabilisation and the default scaling
    /// limits: `history` holds the recommendations of this and earlier syncs
    /// (time, count), newest last. A window holds the recommendations made
    /// after its start, not at it: Kubernetes keeps those whose time is
    /// after `now - window` (`stabilizeRecommendationWithBehaviors` in the
    /// HPA controller), so one exactly a window old is dropped; this sync's
    /// own counts always.
    pub fn decide(&self, history: &[(SimTime, u32)], now: SimTime, current: u32) -> u32 {
        let Some(&(_, desired)) = history.last() else {
            return current;
        };
        let within = |w: SimDuration| {
            history
                .iter()
                .filter(move |(t, _)| *t == now || now - *t < w)
                .map(|&(_, n)| n)
        };
        let mut next = desired;
        if desired < current {
            // Scale down only to the highest recommendation of the window.
            next = within(self.down_window)
                .max()
                .unwrap_or(desired)
                .min(current);
        } else if desired > current {
            next = within(self.up_window).min().unwrap_or(desired).max(current);
            // Default scale-up policies: at most double, or four more, a period.
            next = next.min((current * 2).max(current + 4));
        }
        next.clamp(self.min, self.max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_secs(s)
    }

    /// The fifth 5xx in a row makes an outlier, and the count starts again:
    /// refused an ejection (the caller does not eject), the replica is an
    /// outlier again only at the tenth, not at the sixth.
    #[test]
    fn a_run_of_errors_is_counted_once() {
        let c = OutlierConfig::default();
        let mut s = OutlierState::default();
        let verdicts: Vec<bool> = (0..10).map(|_| c.observe(&mut s, true)).collect();
        let at: Vec<usize> = (0..10).filter(|&i| verdicts[i]).map(|i| i + 1).collect();
        assert_eq!(at, [5, 10]);
        // A success in between starts the count again too.
        let mut s = OutlierState::default();
        let run = [true, true, true, true, false, true, true, true, true, true];
        let at: Vec<usize> = (0..10)
            .filter(|&i| c.observe(&mut s, run[i]))
            .map(|i| i + 1)
            .collect();
        assert_eq!(at, [10]);
    }

    #[test]
    fn ejection_time_grows_with_each_ejection_up_to_the_cap() {
        let c = OutlierConfig::default();
        let secs = |m| c.ejection_time(m).as_secs_f64();
        assert_eq!(
            [secs(1), secs(2), secs(3), secs(10), secs(11)],
            [30.0, 60.0, 90.0, 300.0, 300.0]
        );
        // A cap below the base is the base (Envoy: max(base, max_ejection_time)).
        let low = OutlierConfig {
            max_ejection_time: SimDuration::from_secs(5),
            ..c
        };
        assert_eq!(low.ejection_time(4).as_secs_f64(), 30.0);
    }

    #[test]
    fn five_5xx_in_a_row_eject_and_a_success_resets_the_count() {
        let c = OutlierConfig::default();
        let mut s = OutlierState::default();
        for _ in 0..4 {
            assert!(!c.observe(&mut s, true));
        }
        assert!(!c.observe(&mut s, false), "a success in between");
        for _ in 0..4 {
            assert!(!c.observe(&mut s, true));
        }
        assert!(c.observe(&mut s, true), "the fifth in a row");
        c.eject(&mut s, t(7));
        // Answers while ejected are not counted.
        assert!(!c.observe(&mut s, true));
        assert_eq!((s.answers, s.failures), (10, 9));
    }

    /// Envoy's timing by hand: ejected at 7 s with the default 10 s interval
    /// and 30 s base, the replica is back at the first sweep at least 30 s
    /// later, 40 s; ejected again at 45 s it stays 60 s, to the sweep at 110 s;
    /// healthy sweeps then bring its multiplier down one at a time.
    #[test]
    fn ejection_ends_at_the_first_sweep_after_its_time() {
        let c = OutlierConfig::default();
        let mut s = OutlierState::default();
        c.eject(&mut s, t(7));
        assert_eq!(s.multiplier, 1);
        assert!(!c.sweep_uneject(&mut s, t(10)));
        assert!(!c.sweep_uneject(&mut s, t(30)));
        assert!(c.sweep_uneject(&mut s, t(40)), "37 s >= 30 s");
        c.eject(&mut s, t(45));
        assert_eq!(s.multiplier, 2);
        assert!(!c.sweep_uneject(&mut s, t(100)), "55 s < 60 s");
        assert!(c.sweep_uneject(&mut s, t(110)));
        assert_eq!(s.multiplier, 2, "not decremented at its un-ejection sweep");
        assert!(!c.sweep_uneject(&mut s, t(120)));
        assert_eq!(s.multiplier, 1);
        assert!(!c.sweep_uneject(&mut s, t(130)));
        assert!(!c.sweep_uneject(&mut s, t(140)));
        assert_eq!(s.multiplier, 0);
    }

    #[test]
    fn the_multiplier_stops_growing_at_the_cap() {
        let c = OutlierConfig {
            max_ejection_time: SimDuration::from_secs(60),
            ..OutlierConfig::default()
        };
        let mut s = OutlierState::default();
        for _ in 0..5 {
            c.eject(&mut s, t(0));
        }
        assert_eq!(s.multiplier, 2);
        assert_eq!(c.ejection_time(s.multiplier).as_secs_f64(), 60.0);
    }

    #[test]
    fn at_most_the_maximum_share_is_ejected_but_always_one() {
        let c = OutlierConfig::default();
        // 10% of 10: one, and a second would be 20%.
        assert!(c.may_eject(0, 10));
        assert!(!c.may_eject(1, 10));
        // 10% of 3 is less than one replica, yet one may go.
        assert!(c.may_eject(0, 3));
        assert!(!c.may_eject(1, 3));
        // 10% of 40: four.
        assert!(c.may_eject(3, 40));
        assert!(!c.may_eject(4, 40));
        let all = OutlierConfig {
            max_ejection_share: 1.0,
            ..c
        };
        assert!(all.may_eject(9, 10));
        // Envoy compares the share already out: at 50%, 40% of five is
        // below it, so a third replica may go, taking it to 60%.
        let half = OutlierConfig {
            max_ejection_share: 0.5,
            ..c
        };
        assert!(half.may_eject(2, 5));
        assert!(!half.may_eject(3, 5));
        assert!(!half.may_eject(5, 10));
    }

    /// Envoy's success-rate rule by hand (factor 1.9): rates of 100, 100,
    /// 100, 100 and 50% have a mean of 90 and a standard deviation of 20,
    /// so the threshold is 90 - 38 = 52 and the fifth is out; with two at
    /// 50% the mean is 80, the deviation sqrt(600) = 24.5 and the threshold
    /// 33.5, so neither is. Too few answers (99 of 100), or fewer than five
    /// replicas with enough, judge nobody.
    #[test]
    fn success_rate_ejects_below_the_mean_less_its_spread() {
        let c = OutlierConfig::default();
        let w = |f: [u32; 5]| f.map(|f| (200, f)).to_vec();
        assert_eq!(
            c.success_outliers(&w([0, 0, 0, 0, 100])),
            [false, false, false, false, true]
        );
        assert_eq!(c.success_outliers(&w([0, 0, 0, 100, 100])), [false; 5]);
        let mut thin = w([0, 0, 0, 0, 100]);
        thin[0].0 = 99;
        assert_eq!(c.success_outliers(&thin), [false; 5]);
        assert_eq!(c.success_outliers(&w([0, 0, 0, 0, 100])[1..]), [false; 4]);
        let off = OutlierConfig {
            success_rate: None,
            ..c
        };
        assert_eq!(off.success_outliers(&w([0, 0, 0, 0, 100])), [false; 5]);
    }

    #[test]
    fn failure_percentage_needs_volume_on_enough_replicas() {
        let c = OutlierConfig {
            failure_percentage: Some(FailurePercentage {
                threshold: 0.85,
                minimum_hosts: 3,
                request_volume: 50,
            }),
            ..OutlierConfig::default()
        };
        let w = [(100, 90), (100, 84), (60, 60), (49, 49)];
        assert_eq!(c.failure_outliers(&w), [true, false, true, false]);
        // Only two replicas with enough volume: no verdicts.
        let w = [(100, 90), (10, 10), (60, 60), (49, 49)];
        assert_eq!(c.failure_outliers(&w), [false; 4]);
        assert_eq!(OutlierConfig::default().failure_outliers(&w), [false; 4]);
    }

    #[test]
    fn health_checks_take_out_after_three_fails_and_return_after_one_pass() {
        let c = HealthCheckConfig::default();
        let mut s = CheckState {
            last_passed: true,
            ..CheckState::default()
        };
        assert!(!c.record(&mut s, false));
        assert!(!c.record(&mut s, true), "a pass resets the streak");
        assert!(!c.record(&mut s, false));
        assert!(!c.record(&mut s, false));
        assert!(c.record(&mut s, false));
        assert!(s.unhealthy);
        assert!(c.record(&mut s, true));
        assert!(!s.unhealthy);
    }

    fn hpa() -> AutoscaleConfig {
        AutoscaleConfig {
            min: 2,
            max: 20,
            target: 0.5,
            sync: SimDuration::from_secs(15),
            tolerance: 0.1,
            down_window: SimDuration::from_secs(300),
            up_window: SimDuration::ZERO,
            startup: SimDuration::from_secs(30),
        }
    }

    /// Kubernetes' documented rule, desired = ceil(current * metric / target):
    /// its example doubles the replicas at twice the target and halves them at
    /// half of it; 4 replicas at 100% against 50% want 8.
    #[test]
    fn recommendations_follow_the_hpa_formula() {
        let c = hpa();
        assert_eq!(c.recommend(4.0 * 1.0, 4, 4), 8);
        // 4 at 52%: ratio 1.04, within the tolerance.
        assert_eq!(c.recommend(4.0 * 0.52, 4, 4), 4);
        // 4 at 20%: 0.8 / 0.5 = 1.6, two.
        assert_eq!(c.recommend(4.0 * 0.2, 4, 4), 2);
        // 4 ready at 60% and 2 starting: counted at 0% they make 40%, a
        // reversal, so no scale-up.
        assert_eq!(c.recommend(4.0 * 0.6, 4, 6), 6);
        // 4 ready at 100% and 2 starting: 4 / 0.5 = 8.
        assert_eq!(c.recommend(4.0, 4, 6), 8);
    }

    #[test]
    fn scale_down_waits_for_the_window_and_scale_up_is_limited() {
        let c = hpa();
        // Recommendations 10 at 0 s, then 3 from 15 s: the 300 s window keeps 10.
        let mut h = vec![(t(0), 10)];
        h.push((t(15), 3));
        assert_eq!(c.decide(&h, t(15), 10), 10);
        let h = vec![(t(0), 10), (t(301), 3)];
        assert_eq!(c.decide(&h, t(301), 10), 3);
        // One exactly 300 s old is out of the window, as in Kubernetes; one
        // a sync younger is in.
        let h = vec![(t(0), 10), (t(300), 3)];
        assert_eq!(c.decide(&h, t(300), 10), 3);
        let h = vec![(t(15), 10), (t(300), 3)];
        assert_eq!(c.decide(&h, t(300), 10), 10);
        // Up: at most double or four more, whichever is more.
        assert_eq!(c.decide(&[(t(0), 19)], t(0), 3), 7);
        assert_eq!(c.decide(&[(t(0), 19)], t(0), 6), 12);
        // Within min and max.
        assert_eq!(c.decide(&[(t(0), 1)], t(0), 2), 2);
        assert_eq!(c.decide(&[(t(0), 40)], t(0), 16), 20);
    }
}
