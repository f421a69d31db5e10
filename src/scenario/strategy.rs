//! Strategies: each `[[strategy]]` table laid over the `[retry]` defaults, over
//! the built-in defaults, and checked; errors point at whichever table set the
//! offending value. A table that names a `preset` sits on that preset's table:
//! strategy keys, then the strategy's preset, then `[retry]`'s keys, then its
//! preset, then the built-in defaults.

use super::duration::DurationValue;
use super::error::ScenarioError;
use super::locate::KeyPath;
use super::presets;
use super::schema::{
    BackoffFile, BreakerFile, BudgetFile, DurationOrNone, HedgingFile, JITTER_HELP, JitterFile,
    JitterValue, RetryAfterModeFile, RetryFile,
};
use super::validate::Checker;
use crate::engine::SimDuration;
use crate::retry::hedging::MAX_COPIES;
use crate::retry::{
    Backoff, BackoffKind, BreakerConfig, BudgetConfig, ConcurrencyLimit, HedgingConfig, Jitter,
    Outcome, OutcomeSet, RetryAfterMode, RetryPolicy, Shared, Strategy, ThrottleConfig,
};

type Checked<T> = Result<T, ScenarioError>;

impl Checker<'_> {
    pub(super) fn strategies(
        &self,
        defaults: &RetryFile,
        list: &[RetryFile],
        chain: Option<&crate::model::chain::ChainConfig>,
    ) -> Checked<Vec<Strategy>> {
        let tiers = self.tier_tables(chain, defaults, list)?;
        self.ensure(
            defaults.name.is_none(),
            &KeyPath::key("retry").join("name"),
            || "[retry] holds the defaults; names belong to each [[strategy]]".into(),
        )?;
        if list.is_empty() {
            return Err(ScenarioError::file(
                self.file,
                "no strategy to run: add at least one [[strategy]] table with a `name`, e.g.\n[[strategy]]\nname = \"full-jitter\"\nbackoff = \"full-jitter\"",
            ));
        }
        let defaults_preset = self.preset(defaults, &KeyPath::key("retry").join("preset"))?;
        let mut out: Vec<Strategy> = Vec::with_capacity(list.len());
        for (i, s) in list.iter().enumerate() {
            let key = KeyPath::key("strategy").at(i);
            let Some(name) = s.name.clone() else {
                return self.err(&key, "every [[strategy]] needs a `name`");
            };
            let ok = !name.is_empty() && !name.contains(['"', ',', '\n']);
            self.ensure(ok, &key.join("name"), || {
                "a strategy name must be non-empty, without quotes, commas or newlines".into()
            })?;
            if out.iter().any(|o| o.name == name) {
                return self.err(
                    &key.join("name"),
                    format!("two strategies are named \"{name}\"; names must be unique"),
                );
            }
            let top_preset = self.preset(s, &key.join("preset"))?;
            let layers = Layers {
                tier: None,
                top: s,
                top_preset: top_preset.as_ref(),
                defaults,
                defaults_preset: defaults_preset.as_ref(),
                index: i,
            };
            let mut strategy = self.strategy(name.clone(), &layers)?;
            let services = chain.map_or(&[][..], |c| &c.services[..]);
            for (svc, table) in services.iter().zip(tiers.get(i).into_iter().flatten()) {
                let empty = RetryFile::default();
                let t = table.unwrap_or(&empty);
                let preset = self.preset(t, &key.join("tiers").join(&svc.name).join("preset"))?;
                let l = Layers {
                    tier: Some((t, preset.as_ref(), &svc.name)),
                    ..layers
                };
                let mut st = self.strategy(name.clone(), &l)?;
                st.tiers.clear();
                // A breaker or a throttle is one client's: the users' acts on
                // their calls, and the calls to a service have one only if
                // its own table sets it.
                if t.breaker.is_none() {
                    st.breaker = None;
                }
                if t.throttle.is_none() {
                    st.throttle = None;
                }
                strategy.tiers.push(crate::retry::TierPolicy {
                    strategy: st,
                    propagate_deadline: l
                        .get("propagate_deadline", |r| r.propagate_deadline)
                        .is_some_and(|(v, _)| v),
                    propagate_cancel: l
                        .get("propagate_cancel", |r| r.propagate_cancel)
                        .is_some_and(|(v, _)| v),
                });
            }
            out.push(strategy);
        }
        Ok(out)
    }

    /// The table of the preset `t` names, if any.
    fn preset(&self, t: &RetryFile, key: &KeyPath) -> Checked<Option<RetryFile>> {
        let Some(name) = &t.preset else {
            return Ok(None);
        };
        match presets::find(name) {
            Some(p) => Ok(Some(p.table())),
            None => {
                let valid: Vec<&str> = presets::PRESETS.iter().map(|p| p.name).collect();
                self.err(
                    key,
                    format!(
                        "unknown preset \"{name}\"; valid: {} (`sim presets` lists them){}",
                        valid.join(", "),
                        valid
                            .iter()
                            .map(|v| (v, super::wording::edit_distance(name, v)))
                            .min_by_key(|(_, d)| *d)
                            .filter(|(v, d)| *d <= v.len().max(3) / 3)
                            .map_or(String::new(), |(v, _)| format!("; did you mean `{v}`?"))
                    ),
                )
            }
        }
    }

    /// The strategy preset `p` makes on its own, over the built-in defaults.
    pub(super) fn preset_strategy(&self, p: &presets::Preset) -> Checked<Strategy> {
        let table = p.table();
        let none = RetryFile::default();
        self.strategy(
            p.name.to_owned(),
            &Layers {
                tier: None,
                top: &none,
                top_preset: Some(&table),
                defaults: &none,
                defaults_preset: None,
                index: 0,
            },
        )
    }

    #[expect(
        clippy::too_many_lines,
        reason = "checks each key of a strategy's layers in order, each with its message"
    )]
    fn strategy(&self, name: String, l: &Layers) -> Checked<Strategy> {
        let d = Backoff::default();
        let p = RetryPolicy::default();
        let dur =
            |field: &str, get: fn(&RetryFile) -> Option<DurationValue>, default: SimDuration| {
                l.get(field, get)
                    .map_or((default, l.path(field)), |(v, k)| (v.0, k))
            };
        let kind = l
            .get("backoff", |r| r.backoff)
            .map_or(d.kind, |(b, _)| backoff_kind(b));
        let (base, _) = dur("base", |r| r.base, d.base);
        let (cap, cap_key) = dur("cap", |r| r.cap, d.cap);
        self.ensure(cap >= base, &cap_key, || {
            format!("cap ({cap}) must be at least base ({base})")
        })?;
        let (multiplier, mkey) = l
            .get("multiplier", |r| r.multiplier)
            .unwrap_or((d.multiplier, l.path("multiplier")));
        let ok = multiplier.is_finite() && multiplier >= 1.0;
        self.ensure(ok, &mkey, || {
            format!("multiplier must be a number >= 1, got {multiplier}")
        })?;
        let (first_exponent, fkey) = l
            .get("first_exponent", |r| r.first_exponent)
            .unwrap_or((0, l.path("first_exponent")));
        self.ensure(first_exponent <= 1, &fkey, || format!("first_exponent must be 0 (first retry waits base) or 1 (waits base * multiplier, the AWS convention), got {first_exponent}"))?;
        let jitter = match l.get("jitter", |r| r.jitter) {
            Some((JitterValue::Table(j), key)) => self.jitter(j, &key)?,
            Some((JitterValue::None, _)) | None => Jitter::None,
        };
        let timeout = self.limit(l.get("timeout", |r| r.timeout), p.timeout, "timeout")?;
        let deadline = self.limit(l.get("deadline", |r| r.deadline), p.deadline, "deadline")?;
        let retry_on = match l.get("retry_on", |r| r.retry_on.clone()) {
            Some((names, k)) => self.outcome_set(&names, &k)?,
            None => p.retry_on,
        };
        let retry_on_hinted = match l.get("retry_on_hinted", |r| r.retry_on_hinted.clone()) {
            Some((names, k)) => self.outcome_set(&names, &k)?,
            None => p.retry_on_hinted,
        };
        let budget = match l.get("budget", |r| r.budget.clone()) {
            Some((b, key)) => self.budget(&b, &key)?,
            None => None,
        };
        let breaker = match l.get("breaker", |r| r.breaker.clone()) {
            Some((b, key)) => Some(self.breaker(&b, &key)?),
            None => None,
        };
        let throttle = match l.get("throttle", |r| r.throttle.clone()) {
            Some((t, key)) => {
                let k = t.k.unwrap_or(2.0);
                self.ensure(k.is_finite() && k >= 1.0, &key.join("k"), || {
                    format!("k must be a number >= 1, got {k}")
                })?;
                let window = t.window.map_or(SimDuration::from_secs(120), |d| d.0);
                self.ensure(window.0 > 0, &key.join("window"), || {
                    "window must be positive".into()
                })?;
                Some(ThrottleConfig { k, window })
            }
            None => None,
        };
        let slack = self.limit(
            l.get("retry_after_slack", |r| r.retry_after_slack),
            None,
            "retry_after_slack",
        )?;
        let retry_after_mode = match l.get("retry_after_mode", |r| r.retry_after_mode) {
            None | Some((RetryAfterModeFile::Replace, _)) => RetryAfterMode::Replace,
            Some((RetryAfterModeFile::AtLeast, _)) => RetryAfterMode::AtLeast {
                slack: slack.unwrap_or(SimDuration::MAX),
            },
            Some((RetryAfterModeFile::BeforeJitter, _)) => RetryAfterMode::BeforeJitter,
        };
        if let (Some(_), false) = (
            slack,
            matches!(retry_after_mode, RetryAfterMode::AtLeast { .. }),
        ) {
            let key = l.path("retry_after_slack");
            return self.err(
                &key,
                "retry_after_slack applies only with retry_after_mode = \"at-least\"".to_string(),
            );
        }
        let max_retries = l
            .get("max_retries", |r| r.max_retries)
            .map_or(p.max_retries, |(v, _)| v.0);
        let hedging = match l.get("hedging", |r| r.hedging.as_ref().map(|_| ())) {
            Some(((), key)) => self.hedging(&key, l, max_retries)?,
            None => None,
        };
        let throttling_base = match l.get("throttling_base", |r| r.throttling_base) {
            Some((DurationOrNone::After(v), key)) => {
                self.ensure(v.0 <= cap, &key, || {
                    format!("throttling_base ({}) must be at most cap ({cap})", v.0)
                })?;
                Some(v.0)
            }
            Some((DurationOrNone::None, _)) | None => None,
        };
        let limits = self.limits(l, hedging.is_some())?;
        let shared = match l.get("shared", |r| r.shared.clone()) {
            Some((names, k)) => self.shared(&names, &k)?,
            None => Shared::default(),
        };
        Ok(Strategy {
            budget,
            breaker,
            throttle,
            shared,
            tiers: Vec::new(),
            name,
            backoff: Backoff {
                kind,
                base,
                cap,
                multiplier,
                first_exponent,
                jitter,
            },
            hedging,
            limits,
            policy: RetryPolicy {
                max_retries,
                timeout,
                deadline,
                retry_on,
                retry_on_hinted,
                use_retry_after: l
                    .get("use_retry_after", |r| r.use_retry_after)
                    .map_or(p.use_retry_after, |(v, _)| v),
                retry_after_max: dur("retry_after_max", |r| r.retry_after_max, p.retry_after_max).0,
                retry_after_mode,
                throttling_base,
            },
        })
    }

    /// A hedging policy (`None` for one copy), checked against the strategy's
    /// retries: gRPC allows a method a retry policy or a hedging policy, not
    /// both.
    fn hedging(
        &self,
        key: &KeyPath,
        l: &Layers,
        max_retries: u32,
    ) -> Checked<Option<HedgingConfig>> {
        // Inherited from the strategy's table, hedging is the users': a
        // tier's callers hedge only when the tier's own table says so.
        if l.tier.is_some() && *key != l.path("hedging") {
            return Ok(None);
        }
        let (n, n_key) = hedging_key(l, "max_attempts", |h| h.max_attempts)
            .unwrap_or((2, key.join("max_attempts")));
        let ok = (1..=u32::from(MAX_COPIES)).contains(&n);
        self.ensure(ok, &n_key, || {
            format!(
                "max_attempts counts every copy, the first included: 1 (no hedging) to \
                 {MAX_COPIES} (gRPC treats larger values as {MAX_COPIES}), got {n}"
            )
        })?;
        let delay = hedging_key(l, "delay", |h| h.delay.map(|d| d.0));
        let cancel = hedging_key(l, "cancel", |h| h.cancel).is_none_or(|(c, _)| c);
        if n == 1 {
            return Ok(None);
        }
        let Some((delay, delay_key)) = delay else {
            return self.err(
                &key.join("delay"),
                "hedging needs a `delay` before each further copy (gRPC's hedgingDelay), \
                 e.g. delay = \"20ms\"; Dean and Barroso suggest the 95th percentile of the \
                 latency"
                    .to_string(),
            );
        };
        self.ensure(delay.0 > 0, &delay_key, || {
            "delay must be positive: copies sent together are not hedging".into()
        })?;
        if max_retries > 0 {
            let at = l
                .get("max_retries", |r| r.max_retries)
                .map_or(l.path("max_retries"), |(_, k)| k);
            return self.err(
                &at,
                format!(
                    "a strategy hedges or retries, not both (gRPC's service config allows a \
                     method one of retryPolicy and hedgingPolicy): set max_retries = 0 beside \
                     hedging (max_attempts counts every copy), got max_retries = {max_retries}"
                ),
            );
        }
        Ok(Some(HedgingConfig {
            max_attempts: n as u8,
            delay,
            cancel,
        }))
    }

    /// A time limit: the value given (positive), `None` for "none", else `default`.
    /// `{ add = "100ms" }` or `{ low = 0.8, high = 1.2 }`.
    fn jitter(&self, j: JitterFile, key: &KeyPath) -> Checked<Jitter> {
        match (j.add, j.low, j.high) {
            (Some(add), None, None) => Ok(Jitter::Add(add.0)),
            (None, Some(low), Some(high)) => {
                let ok = low.is_finite()
                    && high.is_finite()
                    && 0.0 <= low
                    && low <= high
                    && high <= 100.0;
                self.ensure(ok, key, || {
                    format!("jitter factors need 0 <= low <= high <= 100, got low = {low}, high = {high}")
                })?;
                Ok(Jitter::Scale { low, high })
            }
            _ => self.err(key, format!("jitter is {JITTER_HELP}")),
        }
    }

    fn limit(
        &self,
        given: Option<(DurationOrNone, KeyPath)>,
        default: Option<SimDuration>,
        field: &str,
    ) -> Checked<Option<SimDuration>> {
        match given {
            Some((DurationOrNone::After(v), key)) => {
                self.ensure(v.0.0 > 0, &key, || {
                    format!("{field} must be positive, or \"none\"")
                })?;
                Ok(Some(v.0))
            }
            Some((DurationOrNone::None, _)) => Ok(None),
            None => Ok(default),
        }
    }

    fn budget(&self, b: &BudgetFile, key: &KeyPath) -> Checked<Option<BudgetConfig>> {
        let positive = |v: f64, field: &str| {
            self.ensure(v.is_finite() && v > 0.0, &key.join(field), || {
                format!("{field} must be a positive number, got {v}")
            })?;
            Ok(v)
        };
        let fraction = |v: f64, field: &str| {
            self.ensure(
                v.is_finite() && (0.0..=1.0).contains(&v),
                &key.join(field),
                || format!("{field} must be in [0, 1], got {v}"),
            )?;
            Ok(v)
        };
        let span = |v: Option<DurationValue>, default: u64, field: &str| {
            let d = v.map_or(SimDuration::from_secs(default), |d| d.0);
            self.ensure(d.0 > 0, &key.join(field), || {
                format!("{field} must be positive")
            })?;
            Ok(d)
        };
        Ok(Some(match b {
            BudgetFile::None => return Ok(None),
            BudgetFile::TokenBucket {
                max_tokens,
                token_ratio,
            } => BudgetConfig::TokenBucket {
                max_tokens: positive(max_tokens.unwrap_or(10.0), "max_tokens")?,
                // gRPC takes any ratio above 0 (gRFC A6; its own throttling
                // test uses 1.6): a success adds it, up to max_tokens.
                token_ratio: positive(token_ratio.unwrap_or(0.1), "token_ratio")?,
            },
            BudgetFile::AwsQuota {
                capacity,
                retry_cost,
                timeout_cost,
                throttling_cost,
                success_bonus,
            } => BudgetConfig::AwsQuota {
                capacity: capacity.unwrap_or(500),
                retry_cost: retry_cost.unwrap_or(5),
                timeout_cost: timeout_cost.unwrap_or(10),
                throttling_cost: throttling_cost.unwrap_or(retry_cost.unwrap_or(5)),
                success_bonus: success_bonus.unwrap_or(1),
            },
            BudgetFile::Ratio { ratio, window } => BudgetConfig::Ratio {
                ratio: fraction(ratio.unwrap_or(0.1), "ratio")?,
                window: span(*window, 10, "window")?,
            },
            BudgetFile::Finagle {
                ttl,
                min_per_s,
                percent,
            } => BudgetConfig::Finagle {
                ttl: span(*ttl, 10, "ttl")?,
                min_per_s: {
                    let v = min_per_s.unwrap_or(10.0);
                    self.ensure(v.is_finite() && v >= 0.0, &key.join("min_per_s"), || {
                        format!("min_per_s must be >= 0, got {v}")
                    })?;
                    v
                },
                percent: fraction(percent.unwrap_or(0.2), "percent")?,
            },
            BudgetFile::FailureRatio { max_rate } => BudgetConfig::FailureRatio {
                max_rate: self.max_rate(*max_rate, key)?,
            },
            BudgetFile::Concurrency {
                percent,
                min_concurrency,
                count_backoff,
            } => BudgetConfig::Concurrency(ConcurrencyLimit {
                percent: fraction(percent.unwrap_or(0.2), "percent")?,
                min_concurrency: min_concurrency.unwrap_or(3),
                count_backoff: count_backoff.unwrap_or(true),
            }),
        }))
    }

    /// A failure-ratio budget's `max_rate` (Brooker's 0.1 unless given).
    fn max_rate(&self, max_rate: Option<f64>, key: &KeyPath) -> Checked<f64> {
        let v = max_rate.unwrap_or(0.1);
        self.ensure(v.is_finite() && v >= 0.0, &key.join("max_rate"), || {
            format!("max_rate is failed attempts per request, a number >= 0, got {v}")
        })?;
        Ok(v)
    }

    fn breaker(&self, b: &BreakerFile, key: &KeyPath) -> Checked<BreakerConfig> {
        let failure_rate = b.failure_rate.unwrap_or(0.5);
        let ok = failure_rate.is_finite() && failure_rate > 0.0 && failure_rate <= 1.0;
        self.ensure(ok, &key.join("failure_rate"), || {
            format!("failure_rate must be in (0, 1], got {failure_rate}")
        })?;
        let window = b.window.unwrap_or(100);
        self.ensure(window >= 1, &key.join("window"), || {
            "window must be at least 1 attempt".into()
        })?;
        let min_calls = b.min_calls.unwrap_or(window.min(100));
        self.ensure(
            min_calls >= 1 && min_calls <= window,
            &key.join("min_calls"),
            || format!("min_calls must be from 1 to the window ({window}), got {min_calls}"),
        )?;
        let open_for = b.open_for.map_or(SimDuration::from_secs(60), |d| d.0);
        self.ensure(open_for.0 > 0, &key.join("open_for"), || {
            "open_for must be positive".into()
        })?;
        let jitter = b.jitter.unwrap_or(0.0);
        self.ensure(
            jitter.is_finite() && (0.0..1.0).contains(&jitter),
            &key.join("jitter"),
            || format!("jitter must be in [0, 1), got {jitter}"),
        )?;
        let probes = b.probes.unwrap_or(10);
        self.ensure(probes >= 1, &key.join("probes"), || {
            "probes must be at least 1".into()
        })?;
        Ok(BreakerConfig {
            failure_rate,
            window,
            min_calls,
            open_for,
            jitter,
            probes,
        })
    }

    /// The guards a strategy's proxies share, by name, each at most once.
    fn shared(&self, names: &[String], key: &KeyPath) -> Checked<Shared> {
        let mut shared = Shared::default();
        for (i, n) in names.iter().enumerate() {
            let flag = match n.as_str() {
                "budget" => &mut shared.budget,
                "breaker" => &mut shared.breaker,
                "throttle" => &mut shared.throttle,
                _ => {
                    return self.err(
                        &key.at(i),
                        format!(
                            "unknown guard \"{n}\"; valid: {} (the budget, breaker and \
                             throttle every proxy shares instead of keeping its own)",
                            Shared::NAMES.join(", ")
                        ),
                    );
                }
            };
            self.ensure(!*flag, &key.at(i), || format!("\"{n}\" is listed twice"))?;
            *flag = true;
        }
        Ok(shared)
    }

    fn outcome_set(&self, names: &[String], key: &KeyPath) -> Checked<OutcomeSet> {
        let mut set = OutcomeSet::default();
        for (i, n) in names.iter().enumerate() {
            match Outcome::from_name(n).filter(|o| *o != Outcome::Ok) {
                Some(o) => set.insert(o),
                None => {
                    let valid: Vec<&str> = Outcome::ALL[1..].iter().map(|o| o.name()).collect();
                    return self.err(
                        &key.at(i),
                        format!("unknown outcome \"{n}\"; valid: {}", valid.join(", ")),
                    );
                }
            }
        }
        Ok(set)
    }
}

fn backoff_kind(b: BackoffFile) -> BackoffKind {
    match b {
        BackoffFile::None => BackoffKind::None,
        BackoffFile::Constant => BackoffKind::Constant,
        BackoffFile::Linear => BackoffKind::Linear,
        BackoffFile::Exponential => BackoffKind::Exponential,
        BackoffFile::FullJitter => BackoffKind::FullJitter,
        BackoffFile::EqualJitter => BackoffKind::EqualJitter,
        BackoffFile::DecorrelatedJitter => BackoffKind::DecorrelatedJitter,
        BackoffFile::Envoy => BackoffKind::Envoy,
        BackoffFile::DecorrelatedJitterV2 => BackoffKind::DecorrelatedJitterV2,
    }
}

/// One key of the hedging tables, and where it is set: each key is laid
/// over the layers below on its own, so that a strategy may change one (a
/// sweep sets `[retry]`'s delay for every strategy that hedges).
fn hedging_key<T>(
    l: &Layers,
    name: &str,
    get: impl Fn(&HedgingFile) -> Option<T>,
) -> Option<(T, KeyPath)> {
    l.get("hedging", |r| r.hedging.as_ref().and_then(&get))
        .map(|(v, k)| (v, k.join(name)))
}

/// A strategy's table over its preset, over the `[retry]` defaults, over theirs.
pub(super) struct Layers<'a> {
    /// In a call chain, the table of one service's calls and its preset,
    /// with the service's name.
    tier: Option<(&'a RetryFile, Option<&'a RetryFile>, &'a str)>,
    top: &'a RetryFile,
    top_preset: Option<&'a RetryFile>,
    defaults: &'a RetryFile,
    defaults_preset: Option<&'a RetryFile>,
    index: usize,
}

impl Layers<'_> {
    /// The value of `field` and the path it came from: the strategy's own, its
    /// preset's, `[retry]`'s, or `[retry]`'s preset's. A value from a preset is
    /// blamed on the `preset` key that brought it.
    pub(super) fn get<T>(
        &self,
        field: &str,
        get: impl Fn(&RetryFile) -> Option<T>,
    ) -> Option<(T, KeyPath)> {
        let strategy = KeyPath::key("strategy").at(self.index);
        let retry = KeyPath::key("retry");
        let tier = self.tier.map(|(t, p, name)| {
            let key = strategy.join("tiers").join(name);
            [(Some(t), key.join(field)), (p, key.join("preset"))]
        });
        tier.into_iter()
            .flatten()
            .chain([
                (Some(self.top), strategy.join(field)),
                (self.top_preset, strategy.join("preset")),
                (Some(self.defaults), retry.join(field)),
                (self.defaults_preset, retry.join("preset")),
            ])
            .find_map(|(table, key)| table.and_then(&get).map(|v| (v, key)))
    }

    /// Where an error about a defaulted `field` should point: the strategy
    /// table (or its table for one service's calls).
    pub(super) fn path(&self, field: &str) -> KeyPath {
        let strategy = KeyPath::key("strategy").at(self.index);
        match self.tier {
            Some((_, _, name)) => strategy.join("tiers").join(name).join(field),
            None => strategy.join(field),
        }
    }

    /// Whether these are the tables of one service's calls in a chain.
    pub(super) fn in_tier(&self) -> bool {
        self.tier.is_some()
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::SimDuration;
    use crate::retry::Jitter;
    use crate::scenario::parse;

    const SMALL: &str = include_str!("../../tests/fixtures/small.toml");

    #[test]
    fn jitter_is_read_from_retry_and_overridden_per_strategy() {
        let src = SMALL
            .replace("cap = \"2s\"", "cap = \"2s\"\njitter = { add = \"100ms\" }")
            .replace(
                "name = \"none\"\nbackoff = \"none\"",
                "name = \"none\"\nbackoff = \"none\"\njitter = { low = 0.8, high = 1.2 }",
            );
        let s = parse(&src, std::path::Path::new("j.toml")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            s.strategies[0].backoff.jitter,
            Jitter::Scale {
                low: 0.8,
                high: 1.2
            }
        );
        assert_eq!(
            s.strategies[1].backoff.jitter,
            Jitter::Add(crate::engine::SimDuration::from_millis(100))
        );
    }

    #[test]
    fn bad_jitter_names_its_key_and_both_forms() {
        for bad in [
            "{ add = \"1s\", low = 1.0 }",
            "{ low = 1.5, high = 1.0 }",
            "{}",
        ] {
            let src = SMALL.replace("cap = \"2s\"", &format!("cap = \"2s\"\njitter = {bad}"));
            let e = parse(&src, std::path::Path::new("j.toml")).unwrap_err();
            assert_eq!(e.key.as_deref(), Some("retry.jitter"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_preset_sits_between_its_table_and_the_retry_defaults() {
        let src = SMALL
            .replace(
                "cap = \"2s\"",
                "cap = \"2s\"\ntimeout = \"300ms\"\njitter = { add = \"5ms\" }",
            )
            .replace(
                "name = \"none\"\nbackoff = \"none\"",
                "name = \"none\"\npreset = \"grpc\"\nmax_retries = 7",
            );
        let s = parse(&src, std::path::Path::new("p.toml")).unwrap_or_else(|e| panic!("{e}"));
        let (grpc, plain) = (&s.strategies[0], &s.strategies[1]);
        // The strategy's own key beats the preset's 3 retries; the preset's
        // backoff beats [retry]'s base, cap and jitter; what the preset leaves to
        // the scenario (the timeout) comes from [retry].
        assert_eq!(grpc.policy.max_retries, 7);
        assert_eq!(grpc.backoff.base, SimDuration::from_millis(100));
        assert_eq!(grpc.backoff.cap, SimDuration::from_secs(1));
        assert_eq!(
            grpc.backoff.jitter,
            Jitter::Scale {
                low: 0.8,
                high: 1.2
            }
        );
        assert_eq!(grpc.policy.timeout, Some(SimDuration::from_millis(300)));
        assert_eq!(
            plain.backoff.jitter,
            Jitter::Add(SimDuration::from_millis(5))
        );
    }

    #[test]
    fn a_retry_preset_applies_to_every_strategy_under_their_keys() {
        let src = SMALL.replace("cap = \"2s\"", "cap = \"2s\"\npreset = \"polly\"");
        let s = parse(&src, std::path::Path::new("p.toml")).unwrap_or_else(|e| panic!("{e}"));
        // [retry]'s own base and cap beat its preset's 2 s constant delay.
        for st in &s.strategies {
            assert_eq!(st.policy.max_retries, 3, "{}", st.name);
            assert_eq!(
                st.backoff.base,
                SimDuration::from_millis(100),
                "{}",
                st.name
            );
        }
        assert_eq!(
            s.strategies[1].backoff.kind,
            crate::retry::BackoffKind::FullJitter
        );
    }

    #[test]
    fn an_unknown_preset_names_its_key_and_the_valid_ones() {
        let src = SMALL.replace("backoff = \"none\"", "preset = \"grcp\"");
        let e = parse(&src, std::path::Path::new("p.toml")).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("strategy[0].preset"));
        assert!(e.to_string().contains("valid: got, axios-retry"), "{e}");
    }

    #[test]
    fn jitter_none_switches_off_a_lower_layers_jitter() {
        let src = SMALL
            .replace("cap = \"2s\"", "cap = \"2s\"\njitter = { add = \"100ms\" }")
            .replace(
                "backoff = \"none\"",
                "backoff = \"none\"\njitter = \"none\"",
            );
        let s = parse(&src, std::path::Path::new("j.toml")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.strategies[0].backoff.jitter, Jitter::None);
        let bad = SMALL.replace("cap = \"2s\"", "cap = \"2s\"\njitter = \"off\"");
        let e = parse(&bad, std::path::Path::new("j.toml")).unwrap_err();
        assert!(e.to_string().contains("\"none\""), "{e}");
    }
}
