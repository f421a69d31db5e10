//! A strategy's figures before and after a change, each held to its limit.

use super::trial::{Runs, Side};
use super::{Figure, Found, Limits, Location, Settings, Status, Unit, Value, files_of, location};
use crate::metrics::Summary;
use crate::retry::{BudgetConfig, Strategy};

/// The entry of `f`'s strategy (or its server) for `key`: its words and the
/// file and line they name.
pub(super) fn source(f: Option<&Found<'_>>, key: &str) -> (Option<Location>, Option<String>) {
    let Some(f) = f else {
        return (None, None);
    };
    let files = files_of(f.import);
    f.strategy
        .entries
        .iter()
        .chain(&f.strategy.server)
        .find(|e| e.key == key)
        .map_or((None, None), |e| {
            (location(&e.from, &files), Some(e.from.clone()))
        })
}

/// A figure with no limit yet: `value` read from each side's strategy.
fn figure(
    id: &str,
    what: &str,
    unit: Unit,
    sides: [Value; 2],
    source: (Option<Location>, Option<String>),
) -> Figure {
    Figure {
        id: id.to_owned(),
        what: what.to_owned(),
        unit,
        before: sides[0],
        after: sides[1],
        limit: None,
        crossed: false,
        source: source.0,
        source_words: source.1,
    }
}

/// `f` held to `at most limit` when `status` is judged.
fn at_most(mut f: Figure, limit: Option<f64>, status: Status) -> Figure {
    if let Some(l) = limit {
        f.limit = Some(format!("at most {}", shown_limit(f.unit, l)));
        f.crossed = status.judged() && matches!(f.after, Value::Number(v) if v > l + 1e-12);
    }
    f
}

/// A limit in its figure's unit.
fn shown_limit(unit: Unit, l: f64) -> String {
    super::render::value(unit, Value::Number(l))
}

/// A figure of the settings alone: `read` of each side's strategy.
fn settings_figure(runs: &Runs, k: usize, read: impl Fn(&Strategy) -> Value) -> [Value; 2] {
    [Side::Before, Side::After].map(|side| runs.strategy(k, side).map_or(Value::Absent, &read))
}

/// The share of replicas that outlier detection may eject at once, from
/// the imported `outlier` server key (Envoy's `max_ejection_percent`; when
/// the key is absent, the simulator's default, which is Envoy's 10%);
/// `Absent` without outlier detection.
fn ejection_share(f: Option<&Found<'_>>) -> Value {
    let Some(e) = f.and_then(|f| f.strategy.server.iter().find(|e| e.key == "outlier")) else {
        return Value::Absent;
    };
    let table: Option<toml_edit::Value> = e.value.parse().ok();
    let share = table
        .as_ref()
        .and_then(toml_edit::Value::as_inline_table)
        .and_then(|t| t.get("max_ejection_percent"))
        .and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)))
        .map_or(
            crate::model::fleet::OutlierConfig::default().max_ejection_share,
            |p| p / 100.0,
        );
    Value::Number(share)
}

/// The figures of pair `k`.
pub(super) fn of(
    k: usize,
    status: Status,
    now: Option<&Found<'_>>,
    then: Option<&Found<'_>>,
    runs: &Runs,
    settings: &Settings,
) -> Vec<Figure> {
    let l = &settings.limits;
    let mut out = Vec::new();
    let mut attempts = settings_figure(runs, k, |s| {
        Value::Number(crate::bound::attempts_per_request(s).value)
    });
    for (v, f) in attempts.iter_mut().zip([then, now]) {
        if !f.is_some_and(Found::sets_policy) {
            *v = Value::Absent;
        }
    }
    let key = if now.is_some_and(|f| f.strategy.entries.iter().any(|e| e.key == "hedging")) {
        "hedging"
    } else {
        "max_retries"
    };
    let mut from = source(now, key);
    if now.is_some_and(|f| !f.sets_policy()) {
        from.1 = Some(
            "these files set no retry count for it (its retry policy is set elsewhere), so its attempts and trials are not judged".to_owned(),
        );
    }
    out.push(at_most(
        figure(
            "attempts",
            "attempts per request, worst case",
            Unit::Count,
            attempts,
            from,
        ),
        l.max_attempts,
        status,
    ));
    budget_floors(k, status, now, runs, settings, &mut out);
    let ejection = [ejection_share(then), ejection_share(now)];
    if ejection.iter().any(|v| *v != Value::Absent) {
        out.push(at_most(
            figure(
                "ejection_share",
                "replicas ejection may take at once",
                Unit::Share,
                ejection,
                source(now, "outlier"),
            ),
            l.max_ejection_share,
            status,
        ));
    }
    for t in 0..settings.trials.len() {
        trial_figures(k, t, status, runs, settings, &mut out);
    }
    out
}

/// The floors of pair `k`'s budget: the retries a second (Finagle's,
/// Linkerd's) or in progress (Envoy's) it allows at any traffic, one floor
/// per proxy that keeps its own.
fn budget_floors(
    k: usize,
    status: Status,
    now: Option<&Found<'_>>,
    runs: &Runs,
    settings: &Settings,
    out: &mut Vec<Figure>,
) {
    let l = &settings.limits;
    // A budget each proxy keeps has a floor each: they add up.
    let proxies = |s: &Strategy| {
        if s.shared.budget {
            1.0
        } else {
            f64::from(runs.proxies)
        }
    };
    let floor = settings_figure(runs, k, |s| match &s.budget {
        Some(BudgetConfig::Finagle { min_per_s, .. }) => Value::Number(proxies(s) * min_per_s),
        _ => Value::Absent,
    });
    let behind = if runs.proxies > 1 {
        format!(", {} proxies' floors together", runs.proxies)
    } else {
        String::new()
    };
    if floor.iter().any(|v| *v != Value::Absent) {
        out.push(at_most(
            figure(
                "budget_floor_per_s",
                &format!("retries/s the budget allows at any traffic{behind}"),
                Unit::PerSecond,
                floor,
                source(now, "budget"),
            ),
            l.max_budget_floor_per_s,
            status,
        ));
    }
    let in_flight = settings_figure(runs, k, |s| match &s.budget {
        Some(BudgetConfig::Concurrency(c)) => {
            Value::Number(proxies(s) * f64::from(c.min_concurrency))
        }
        _ => Value::Absent,
    });
    if in_flight.iter().any(|v| *v != Value::Absent) {
        out.push(figure(
            "retry_concurrency_floor",
            &format!("retries in progress allowed at any traffic{behind}"),
            Unit::Count,
            in_flight,
            source(now, "budget"),
        ));
    }
}

/// The figures of trial `t` for pair `k`, when it was run.
fn trial_figures(
    k: usize,
    t: usize,
    status: Status,
    runs: &Runs,
    settings: &Settings,
    out: &mut Vec<Figure>,
) {
    let sides = [Side::Before, Side::After].map(|side| runs.trial(k, side, t));
    if sides[1].is_none() {
        return;
    }
    let l: &Limits = &settings.limits;
    let trial = &settings.trials[t];
    let id = |name: &str| format!("trial.{}.{name}", trial.id());
    let read = |f: fn(&Summary) -> Value| sides.map(|s| s.map_or(Value::Absent, f));
    let failed = read(|s| Value::Number(s.failed as f64 / (s.logical_requests.max(1)) as f64));
    let mut f = at_most(
        figure(
            &id("failed_share"),
            "requests failed",
            Unit::Share,
            failed,
            (None, None),
        ),
        l.max_failed_share,
        status,
    );
    if let (Some(rise), Value::Number(b), Value::Number(a)) = (l.max_failed_rise, f.before, f.after)
    {
        let words = format!("at most {} over the base", shown_limit(Unit::Share, rise));
        f.limit = Some(match f.limit {
            Some(w) => format!("{w}, {words}"),
            None => words,
        });
        f.crossed |= status.judged() && a - b > rise + 1e-12;
    }
    out.push(f);
    let amplification = read(|s| Value::Number(s.amplification));
    out.push(figure(
        &id("attempts_per_request"),
        "attempts per request",
        Unit::Ratio,
        amplification,
        (None, None),
    ));
    let peak = read(|s| s.peak_load_ratio.map_or(Value::Absent, Value::Number));
    out.push(at_most(
        figure(
            &id("peak_load"),
            "peak attempts / capacity",
            Unit::Ratio,
            peak,
            (None, None),
        ),
        l.max_peak_load,
        status,
    ));
    let recovery = read(|s| {
        if s.twin_overloaded {
            Value::Absent
        } else {
            s.recovery_time_s.map_or(Value::Never, Value::Number)
        }
    });
    let mut f = figure(
        &id("recovery_s"),
        "recovery after it",
        Unit::Seconds,
        recovery,
        (None, None),
    );
    if l.must_recover {
        f.limit = Some("must recover".to_owned());
        f.crossed = status.judged() && f.after == Value::Never;
    }
    out.push(f);
}
