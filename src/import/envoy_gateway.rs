//! Envoy Gateway's `BackendTrafficPolicy` (API group
//! `gateway.envoyproxy.io`): its `retry` (Envoy's retry policy under other
//! names), `circuitBreaker` (Envoy's thresholds, its retry budget among
//! them), `healthCheck.passive` (Envoy's outlier detection),
//! `timeout.http.requestTimeout` and `loadBalancer`, each with Envoy
//! Gateway's own defaults where they differ from Envoy's.

use super::envoy::{condition_list, default_back_off};
use super::tree::Node;
use super::{Ctx, Entry, ImportError, entry, toml_duration, toml_list};

/// Envoy Gateway's retry triggers when a policy names none.
const DEFAULT_TRIGGERS: [&str; 5] = [
    "connect-failure",
    "refused-stream",
    "unavailable",
    "cancelled",
    "retriable-status-codes",
];

/// What one policy sets, and what it is attached to.
pub(super) struct Policy {
    /// `metadata.name`.
    pub name: String,
    /// `targetRefs` (and the older `targetRef`): kind and name.
    pub targets: Vec<(String, String)>,
    /// The strategy's keys from `retry`, if the policy has one.
    pub retry: Option<Vec<Entry>>,
    /// The whole request's limit, `timeout.http.requestTimeout`.
    pub deadline: Option<Entry>,
    /// The retry limit from `circuitBreaker`, if it has one.
    pub budget: Option<Entry>,
    /// The connection limits from `circuitBreaker`, if it sets any.
    pub limits: Option<Entry>,
    /// The server's keys: ejection and the balancer.
    pub server: Vec<Entry>,
}

/// `targetRefs` (or `targetRef`) of a policy's spec: (kind, name) pairs.
pub(super) fn targets(spec: &Node) -> Vec<(String, String)> {
    let one = spec.get("targetRef").into_iter();
    let many = spec.get("targetRefs").map(Node::items).unwrap_or_default();
    one.chain(many)
        .filter_map(|t| {
            let name = t.get("name").and_then(Node::text)?;
            let kind = t.get("kind").and_then(Node::text).unwrap_or("");
            Some((kind.to_owned(), name.to_owned()))
        })
        .collect()
}

/// `retry.retryOn` as the outcomes retried, as Envoy Gateway builds Envoy's
/// retry policy from it.
fn retry_on(ctx: &mut Ctx, r: &Node, at: &str) -> Result<Entry, ImportError> {
    let f = |k: &str| format!("{at}.retry.{k}");
    // As Envoy Gateway builds Envoy's retry policy: its default triggers
    // and status 503 when `retryOn` is absent; given triggers replace the
    // default ones, given status codes replace 503 (and an empty list of
    // triggers keeps the default ones).
    let on = r.get("retryOn");
    let codes: Vec<u64> = match on {
        None => vec![503],
        Some(on) => on
            .get("httpStatusCodes")
            .map(Node::items)
            .unwrap_or_default()
            .iter()
            .enumerate()
            .map(|(j, c)| ctx.whole(c, &format!("{}[{j}]", f("retryOn.httpStatusCodes")), 100))
            .collect::<Result<_, _>>()?,
    };
    let given: Vec<&str> = on
        .and_then(|o| o.get("triggers"))
        .map(Node::items)
        .unwrap_or_default()
        .iter()
        .filter_map(Node::text)
        .collect();
    let triggers = if given.is_empty() {
        DEFAULT_TRIGGERS.to_vec()
    } else {
        given
    };
    let list = condition_list(
        ctx,
        on.unwrap_or(r),
        &f("retryOn.triggers"),
        triggers.iter().copied(),
        &codes,
    )?;
    Ok(entry(
        "retry_on",
        toml_list(&list),
        match on {
            Some(on) => ctx.from(on, &f("retryOn")),
            None => "retry.retryOn absent: Envoy Gateway's default connect-failure, \
                     refused-stream, unavailable, cancelled, retriable-status-codes (503)"
                .into(),
        },
    ))
}

/// `retry.perRetry.backOff`: Envoy's base interval (default 25 ms) and its
/// maximum (default 10 times the base).
fn back_off(
    ctx: &mut Ctx,
    per: Option<&Node>,
    at: &str,
    out: &mut Vec<Entry>,
) -> Result<(), ImportError> {
    let f = |k: &str| format!("{at}.retry.{k}");
    match per.and_then(|p| p.get("backOff")) {
        Some(b) => {
            let base = match b.get("baseInterval") {
                Some(bi) => {
                    let ns = ctx.duration(bi, &f("perRetry.backOff.baseInterval"))?;
                    if ns == 0 {
                        return Err(ctx.err(
                            bi,
                            &f("perRetry.backOff.baseInterval"),
                            "must be above 0",
                        ));
                    }
                    out.push(entry(
                        "base",
                        toml_duration(ns),
                        ctx.from(bi, &f("perRetry.backOff.baseInterval")),
                    ));
                    ns
                }
                None => {
                    out.push(entry(
                        "base",
                        toml_duration(25_000_000),
                        "perRetry.backOff.baseInterval absent: Envoy's default 25ms".into(),
                    ));
                    25_000_000
                }
            };
            match b.get("maxInterval") {
                Some(mi) => {
                    let cap = ctx.duration(mi, &f("perRetry.backOff.maxInterval"))?;
                    if cap < base {
                        return Err(ctx.err(
                            mi,
                            &f("perRetry.backOff.maxInterval"),
                            "must be at least baseInterval (Envoy Gateway)",
                        ));
                    }
                    out.push(entry(
                        "cap",
                        toml_duration(cap),
                        ctx.from(mi, &f("perRetry.backOff.maxInterval")),
                    ));
                }
                None => out.push(entry(
                    "cap",
                    toml_duration(base * 10),
                    "perRetry.backOff.maxInterval absent: 10 x baseInterval (Envoy Gateway's \
                     default)"
                        .into(),
                )),
            }
        }
        None => default_back_off(out, "retry.perRetry.backOff absent"),
    }
    Ok(())
}

/// Envoy Gateway's `retry`: the retries (default 2), the conditions
/// (default Envoy Gateway's list), the per-try timeout and Envoy's
/// back-off.
fn retry(ctx: &mut Ctx, r: &Node, at: &str) -> Result<Vec<Entry>, ImportError> {
    let f = |k: &str| format!("{at}.retry.{k}");
    let mut out = Vec::new();
    match r.get("numRetries") {
        Some(n) => out.push(entry(
            "max_retries",
            ctx.whole(n, &f("numRetries"), 0)?.to_string(),
            ctx.from(n, &f("numRetries")),
        )),
        None => out.push(entry(
            "max_retries",
            "2".into(),
            "retry.numRetries absent: Envoy Gateway's default 2".into(),
        )),
    }
    out.push(retry_on(ctx, r, at)?);
    out.push(entry(
        "backoff",
        "\"envoy\"".into(),
        "Envoy's back-off, which Envoy Gateway programs: full jitter over (2^n - 1) x \
         baseInterval, at most maxInterval"
            .into(),
    ));
    let per = r.get("perRetry");
    back_off(ctx, per, at, &mut out)?;
    match per.and_then(|p| p.get("timeout")) {
        Some(t) => out.push(entry(
            "timeout",
            toml_duration(ctx.duration(t, &f("perRetry.timeout"))?),
            ctx.from(t, &f("perRetry.timeout")),
        )),
        None => out.push(entry(
            "timeout",
            "\"none\"".into(),
            "retry.perRetry.timeout absent: an attempt waits until the request's timeout".into(),
        )),
    }
    out.push(entry(
        "use_retry_after",
        "false".into(),
        "Envoy's back-off ignores Retry-After unless told, and Envoy Gateway does not tell it"
            .into(),
    ));
    for (k, v) in r.entries() {
        if !matches!(k.as_str(), "numRetries" | "retryOn" | "perRetry") {
            ctx.not_modelled(v, &f(k), "the simulator has no counterpart");
        }
    }
    Ok(out)
}

/// `circuitBreaker`: its retry budget, or its limit on retries in
/// progress (Envoy Gateway's default 1024 once the table is there).
fn circuit_breaker(ctx: &mut Ctx, cb: &Node, at: &str) -> Result<Entry, ImportError> {
    let f = |k: &str| format!("{at}.circuitBreaker.{k}");
    for (k, v) in cb.entries() {
        let read = matches!(
            k.as_str(),
            "retryBudget"
                | "maxParallelRetries"
                | "maxConnections"
                | "maxPendingRequests"
                | "maxParallelRequests"
        );
        if !read {
            ctx.not_modelled(
                v,
                &f(k),
                "the simulator's proxy limits are connections, waiting requests and requests",
            );
        }
    }
    let per_proxy = super::PER_PROXY;
    if let Some(rb) = cb.get("retryBudget") {
        let pf = f("retryBudget.percent");
        let p = rb
            .get("percent")
            .ok_or_else(|| ctx.err(rb, &pf, "required: a fraction such as { numerator: 20 }"))?;
        let num = p
            .get("numerator")
            .ok_or_else(|| ctx.err(p, &format!("{pf}.numerator"), "required: a whole number"))?;
        let num = ctx.whole(num, &format!("{pf}.numerator"), 0)?;
        let den = match p.get("denominator") {
            Some(d) => ctx.whole(d, &format!("{pf}.denominator"), 1)?,
            None => 100,
        };
        let share = num as f64 / den as f64;
        if share > 1.0 {
            return Err(ctx.err(p, &pf, "a share of at most 100%: numerator over denominator (100 unless given) must be at most 1"));
        }
        let (min, mf) = match rb.get("minRetryConcurrency") {
            Some(m) => (
                ctx.whole(m, &f("retryBudget.minRetryConcurrency"), 0)?,
                ctx.from(m, &f("retryBudget.minRetryConcurrency")),
            ),
            None => (3, "minRetryConcurrency absent: the default 3".into()),
        };
        ctx.not_modelled(rb, &f("retryBudget"), per_proxy);
        return Ok(entry(
            "budget",
            format!(
                "{{ kind = \"concurrency\", percent = {share:?}, min_concurrency = {min}, count_backoff = false }}"
            ),
            format!(
                "{}; {mf} (Envoy's retry budget, which overrides maxParallelRetries)",
                ctx.from(p, &pf)
            ),
        ));
    }
    let (n, from) = match cb.get("maxParallelRetries") {
        Some(m) => (
            ctx.whole(m, &f("maxParallelRetries"), 0)?,
            ctx.from(m, &f("maxParallelRetries")),
        ),
        None => (
            1024,
            format!(
                "{} {at}.circuitBreaker without maxParallelRetries: Envoy Gateway's default 1024",
                ctx.at(cb)
            ),
        ),
    };
    ctx.not_modelled(cb, &f("maxParallelRetries"), per_proxy);
    Ok(entry(
        "budget",
        format!(
            "{{ kind = \"concurrency\", percent = 0.0, min_concurrency = {n}, count_backoff = false }}"
        ),
        format!("{from}: retries in progress at once (Envoy's max_retries)"),
    ))
}

/// `healthCheck.passive` as the server's outlier detection, with Envoy
/// Gateway's defaults written out (its interval, 3 s, is not Envoy's).
fn passive(ctx: &mut Ctx, p: &Node, at: &str) -> Result<Entry, ImportError> {
    let f = |k: &str| format!("{at}.healthCheck.passive.{k}");
    let mut keys = Vec::new();
    let mut from = Vec::new();
    let mut given = |key: &str, v: String, src: String| {
        keys.push(format!("{key} = {v}"));
        from.push(src);
    };
    let defaults: [(&str, &str, &str, &str); 4] = [
        ("consecutive5XxErrors", "consecutive_5xx", "5", "5"),
        ("interval", "interval", "\"3s\"", "3s"),
        ("baseEjectionTime", "base_ejection_time", "\"30s\"", "30s"),
        ("maxEjectionPercent", "max_ejection_percent", "10.0", "10%"),
    ];
    // Envoy Gateway's API names it `consecutive5XxErrors`; its own examples
    // write `consecutive5xxErrors`: both are read.
    let get = |field: &str| {
        p.get(field).map(|v| (v, field.to_owned())).or_else(|| {
            (field == "consecutive5XxErrors")
                .then(|| p.get("consecutive5xxErrors"))
                .flatten()
                .map(|v| (v, "consecutive5xxErrors".to_owned()))
        })
    };
    for (field, key, default, said) in defaults {
        match get(field) {
            Some((v, field)) => {
                let field = field.as_str();
                let value = match key {
                    "consecutive_5xx" => ctx.whole(v, &f(field), 0)?.to_string(),
                    "max_ejection_percent" => format!("{:?}", ctx.number(v, &f(field))?),
                    _ => toml_duration(ctx.duration(v, &f(field))?),
                };
                given(key, value, ctx.from(v, &f(field)));
            }
            None => given(
                key,
                default.to_owned(),
                format!("{field} absent: Envoy Gateway's default {said}"),
            ),
        }
    }
    if let Some(v) = p.get("failurePercentageThreshold") {
        let t = ctx.number(v, &f("failurePercentageThreshold"))?;
        if !(0.0..=100.0).contains(&t) {
            return Err(ctx.err(
                v,
                &f("failurePercentageThreshold"),
                "a percentage, 0 to 100",
            ));
        }
        given(
            "failure_percentage_threshold",
            format!("{t:?}"),
            format!(
                "{} (Envoy's failure-percentage ejection, its other settings Envoy's defaults)",
                ctx.from(v, &f("failurePercentageThreshold"))
            ),
        );
    }
    for (k, v) in p.entries() {
        let read = defaults.iter().any(|(field, ..)| field == k)
            || matches!(
                k.as_str(),
                "consecutive5xxErrors" | "failurePercentageThreshold"
            );
        if !read {
            ctx.not_modelled(
                v,
                &f(k),
                "the simulator's outlier detection counts 5xx answers in a row and a failure percentage only",
            );
        }
    }
    Ok(entry(
        "outlier",
        format!("{{ {} }}", keys.join(", ")),
        from.join("; "),
    ))
}

/// `timeout.http.requestTimeout` as the deadline; the other timeouts are
/// listed.
fn timeout(ctx: &mut Ctx, v: &Node, fk: &str) -> Result<Option<Entry>, ImportError> {
    let mut deadline = None;
    let http = v.get("http");
    if let Some(t) = http.and_then(|h| h.get("requestTimeout")) {
        let f = format!("{fk}.http.requestTimeout");
        let ns = ctx.duration(t, &f)?;
        deadline = Some(entry(
            "deadline",
            if ns == 0 {
                "\"none\"".into()
            } else {
                toml_duration(ns)
            },
            format!("{} (the whole request, retries included)", ctx.from(t, &f)),
        ));
    }
    for (k2, v2) in v.entries() {
        for (k3, v3) in v2.entries() {
            if (k2.as_str(), k3.as_str()) != ("http", "requestTimeout") {
                ctx.not_modelled(
                    v3,
                    &format!("{fk}.{k2}.{k3}"),
                    "connection timeouts are not modelled",
                );
            }
        }
    }
    Ok(deadline)
}

/// `loadBalancer.type` as the simulator's balancer, if it has one.
fn balancer(ctx: &mut Ctx, v: &Node, fk: &str) -> Option<Entry> {
    let kind = v.get("type").and_then(Node::text).unwrap_or("");
    let balancer = match kind {
        "RoundRobin" => Some("round-robin"),
        // Two replicas drawn at random, the less loaded taken, as Envoy's
        // least request does with equal weights.
        "LeastRequest" => Some("power-of-two"),
        "Random" => Some("random"),
        _ => None,
    };
    match balancer {
        Some(b) => Some(entry(
            "balancer",
            format!("\"{b}\""),
            ctx.from(v.get("type").unwrap_or(v), &format!("{fk}.type")),
        )),
        None => {
            ctx.not_modelled(v, fk, "the simulator's balancers are round robin, random, least outstanding, power of two and pick first");
            None
        }
    }
}

/// One `BackendTrafficPolicy` (document `d`).
pub(super) fn read(ctx: &mut Ctx, doc: &Node, d: usize) -> Result<Policy, ImportError> {
    let at = format!("[document {d}].spec");
    let spec = doc
        .get("spec")
        .ok_or_else(|| ctx.err(doc, &at, "a BackendTrafficPolicy needs a spec"))?;
    let mut policy = Policy {
        name: doc
            .get("metadata")
            .and_then(|m| m.get("name"))
            .and_then(Node::text)
            .unwrap_or("backend-traffic-policy")
            .to_owned(),
        targets: targets(spec),
        retry: None,
        deadline: None,
        budget: None,
        limits: None,
        server: Vec::new(),
    };
    for (k, v) in spec.entries() {
        let fk = format!("{at}.{k}");
        match k.as_str() {
            "targetRef" | "targetRefs" | "targetSelectors" => {}
            "retry" => policy.retry = Some(retry(ctx, v, &at)?),
            "circuitBreaker" => {
                policy.budget = Some(circuit_breaker(ctx, v, &at)?);
                let f = |k: &str| (v.get(k), format!("{at}.circuitBreaker.{k}"));
                policy.limits = super::limits_entry(
                    ctx,
                    [
                        f("maxConnections"),
                        f("maxPendingRequests"),
                        f("maxParallelRequests"),
                    ],
                    1024,
                    "Envoy Gateway's default",
                )?;
            }
            "healthCheck" => {
                for (k2, v2) in v.entries() {
                    if k2 == "passive" {
                        policy.server.push(passive(ctx, v2, &at)?);
                    } else {
                        ctx.not_modelled(
                            v2,
                            &format!("{fk}.{k2}"),
                            "active health checks are not modelled: ejection is passive only",
                        );
                    }
                }
            }
            "timeout" => policy.deadline = timeout(ctx, v, &fk)?,
            "loadBalancer" => policy.server.extend(balancer(ctx, v, &fk)),
            _ => ctx.not_modelled(
                v,
                &fk,
                "not a retry, timeout or ejection setting: the simulator has no counterpart",
            ),
        }
    }
    Ok(policy)
}
