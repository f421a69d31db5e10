//! Envoy configuration, in whatever file shape holds it (a route
//! configuration, a cluster, a whole bootstrap): every `retry_policy`
//! becomes a strategy, with its route's `timeout`, the retry circuit
//! breaker or retry budget of the cluster it routes to, and that cluster's
//! `outlier_detection` as the server's. The circuit breaker and the budget
//! count a retry only while its attempt is out (`count_backoff = false`):
//! Envoy does not count a retry waiting out its back-off
//! (envoyproxy/envoy#30205).

use super::tree::{Node, Value};
use super::{Ctx, Entry, ImportError, Strategy, clean_name, entry, toml_duration, toml_list};
use limits::{default_limits, pool_limits, speaks_http2};

mod limits;

/// Whether a document holds anything Envoy's importer reads.
pub(super) fn has_envoy_fields(doc: &Node) -> bool {
    let mut found = false;
    walk(doc, "", &mut |n, _, _| {
        found |= n.get("retry_policy").is_some()
            || n.get("circuit_breakers").is_some()
            || n.get("outlier_detection").is_some();
    });
    found
}

/// The fields of Envoy's `RetryPolicy` (`config.route.v3.RetryPolicy`).
const RETRY_POLICY_FIELDS: [&str; 13] = [
    "retry_on",
    "num_retries",
    "per_try_timeout",
    "per_try_idle_timeout",
    "retry_priority",
    "retry_host_predicate",
    "retry_options_predicates",
    "host_selection_retry_max_attempts",
    "retriable_status_codes",
    "retry_back_off",
    "rate_limited_retry_back_off",
    "retriable_headers",
    "retriable_request_headers",
];

/// `doc` as the `retry_policy` of a route, if it is a bare `RetryPolicy`
/// (as Envoy's documentation shows one): a map of that message's fields
/// only, `retry_on` or `num_retries` among them.
pub(super) fn bare_retry_policy(doc: &Node) -> Option<Node> {
    let keys = doc.entries();
    let only_policy = !keys.is_empty()
        && keys
            .iter()
            .all(|(k, _)| RETRY_POLICY_FIELDS.contains(&k.as_str()));
    (only_policy && (doc.get("retry_on").is_some() || doc.get("num_retries").is_some())).then(
        || Node {
            line: doc.line,
            file: doc.file,
            value: Value::Map(vec![("retry_policy".to_owned(), doc.clone())]),
        },
    )
}

/// Calls `f` on every map of the tree with its path and the `name` of the
/// nearest map that has one (itself included).
fn walk(node: &Node, path: &str, f: &mut dyn FnMut(&Node, &str, Option<&str>)) {
    walk_named(node, path, None, f);
}

fn walk_named(
    node: &Node,
    path: &str,
    name: Option<&str>,
    f: &mut dyn FnMut(&Node, &str, Option<&str>),
) {
    match &node.value {
        Value::Map(m) => {
            let name = node.get("name").and_then(Node::text).or(name);
            f(node, path, name);
            for (k, v) in m {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                walk_named(v, &p, name, f);
            }
        }
        Value::List(l) => {
            for (i, v) in l.iter().enumerate() {
                walk_named(v, &format!("{path}[{i}]"), name, f);
            }
        }
        Value::Scalar(_) => {}
    }
}

/// The outcomes an Envoy `retry_on` condition retries. A per-try timeout
/// is a 504 to Envoy, so `5xx` and `gateway-error` retry it.
pub(super) fn conditions(
    ctx: &mut Ctx,
    node: &Node,
    field: &str,
    codes: &[u64],
) -> Result<Vec<&'static str>, ImportError> {
    let text = ctx.text(node, field, "a comma-separated list such as \"5xx,reset\"")?;
    condition_list(ctx, node, field, text.split(','), codes)
}

/// The outcomes the conditions `list` retry (`node` and `field` say where
/// they were written, for messages).
pub(super) fn condition_list<'t>(
    ctx: &mut Ctx,
    node: &Node,
    field: &str,
    list: impl Iterator<Item = &'t str>,
    codes: &[u64],
) -> Result<Vec<&'static str>, ImportError> {
    let mut out: Vec<&'static str> = Vec::new();
    let mut add = |list: &[&'static str]| {
        for x in list {
            if !out.contains(x) {
                out.push(x);
            }
        }
    };
    for c in list.map(str::trim).filter(|c| !c.is_empty()) {
        match c {
            "5xx" => add(&["500", "502", "503", "504", "reset", "refused", "timeout"]),
            "gateway-error" => add(&["502", "503", "504", "timeout"]),
            "reset" | "reset-before-request" => add(&["reset"]),
            "connect-failure" | "refused-stream" => add(&["refused"]),
            "retriable-4xx" => add(&["409"]),
            "retriable-status-codes" => {
                for &code in codes {
                    match http_outcome(code) {
                        Some(o) => add(&[o]),
                        None => ctx.not_modelled(
                            node,
                            &format!("{field} (retriable_status_codes {code})"),
                            "the simulated servers never answer this status",
                        ),
                    }
                }
            }
            // Istio's retryOn also takes HTTP statuses as they are.
            number if number.parse::<u64>().is_ok() => {
                let code = number.parse::<u64>().unwrap_or(0);
                match http_outcome(code) {
                    Some(o) => add(&[o]),
                    None => ctx.not_modelled(
                        node,
                        &format!("{field} ({code})"),
                        "the simulated servers never answer this status",
                    ),
                }
            }
            "unavailable" => add(&["reset", "refused", "429", "502", "503", "504"]),
            "deadline-exceeded" => add(&["timeout"]),
            "internal" => add(&["500"]),
            "resource-exhausted" => add(&["429"]),
            "cancelled"
            | "envoy-ratelimited"
            | "retriable-headers"
            | "http3-post-connect-failure" => ctx.not_modelled(
                node,
                &format!("{field} ({c})"),
                "the simulated servers never give this condition",
            ),
            other => {
                return Err(ctx.err(
                    node,
                    field,
                    format!("\"{other}\" is not an Envoy retry condition; they are 5xx, gateway-error, reset, reset-before-request, connect-failure, refused-stream, retriable-4xx, retriable-status-codes, retriable-headers, envoy-ratelimited, http3-post-connect-failure, and for gRPC cancelled, deadline-exceeded, internal, resource-exhausted, unavailable"),
                ));
            }
        }
    }
    Ok(out)
}

/// The simulator's outcome for an HTTP status, if it has one.
pub(super) fn http_outcome(code: u64) -> Option<&'static str> {
    Some(match code {
        400 => "400",
        401 => "401",
        409 => "409",
        429 => "429",
        500 => "500",
        502 => "502",
        503 => "503",
        504 => "504",
        _ => return None,
    })
}

/// A wrapped number (`{ value: 25.0 }`) or a plain one.
fn wrapped(ctx: &Ctx, node: &Node, field: &str) -> Result<f64, ImportError> {
    match node.get("value") {
        Some(v) => ctx.number(v, &format!("{field}.value")),
        None => ctx.number(node, field),
    }
}

/// A cluster's retry limit (circuit breaker or budget) and its outlier
/// detection, as entries.
struct Cluster {
    name: Option<String>,
    budget: Entry,
    /// Its connection-pool limits (the circuit breakers' thresholds).
    limits: Entry,
    /// The server's keys: outlier detection and the balancer.
    server: Vec<Entry>,
}

#[expect(
    clippy::too_many_lines,
    reason = "reads a cluster's documented fields in order, each with its note"
)]
fn cluster(ctx: &mut Ctx, c: &Node, path: &str) -> Result<Cluster, ImportError> {
    let mut budget = entry(
        "budget",
        "{ kind = \"concurrency\", percent = 0.0, min_concurrency = 3, count_backoff = false }"
            .into(),
        format!(
            "{} {path}: no circuit_breakers: Envoy's default max_retries 3 (retries in progress)",
            ctx.at(c)
        ),
    );
    let http2 = speaks_http2(c);
    let mut limits = entry(
        "limits",
        default_limits(http2),
        format!(
            "{} {path}: no circuit_breakers thresholds: Envoy's defaults, 1024 connections, pending and requests",
            ctx.at(c)
        ),
    );
    for field in ["circuit_breakers", "outlier_detection"] {
        if let Some(n) = c.get(field) {
            ctx.not_modelled(n, &format!("{path}.{field}"), super::PER_PROXY);
        }
    }
    if let Some(cb) = c.get("circuit_breakers") {
        let f = format!("{path}.circuit_breakers.thresholds");
        for (i, t) in cb
            .get("thresholds")
            .map(Node::items)
            .unwrap_or_default()
            .iter()
            .enumerate()
        {
            let f = format!("{f}[{i}]");
            let priority = t.get("priority").and_then(Node::text).unwrap_or("DEFAULT");
            if priority != "DEFAULT" {
                ctx.not_modelled(
                    t,
                    &format!("{f}.priority"),
                    "the simulator's requests have one priority, DEFAULT",
                );
                continue;
            }
            limits = pool_limits(ctx, t, &f, http2)?;
            for (k, v) in t.entries() {
                if matches!(k.as_str(), "max_connection_pools" | "track_remaining") {
                    ctx.not_modelled(
                        v,
                        &format!("{f}.{k}"),
                        "the simulator keeps one pool per proxy and reports no remaining capacity",
                    );
                }
            }
            if let Some(rb) = t.get("retry_budget") {
                let fb = format!("{f}.retry_budget");
                let (percent, pf) = match rb.get("budget_percent") {
                    Some(p) => (
                        wrapped(ctx, p, &format!("{fb}.budget_percent"))?,
                        ctx.from(p.get("value").unwrap_or(p), &format!("{fb}.budget_percent")),
                    ),
                    None => (20.0, "budget_percent absent: Envoy's default 20%".into()),
                };
                if !(0.0..=100.0).contains(&percent) {
                    return Err(ctx.err(
                        rb,
                        &format!("{fb}.budget_percent"),
                        "a percentage, 0 to 100",
                    ));
                }
                let (min, mf) = match rb.get("min_retry_concurrency") {
                    Some(m) => (
                        ctx.whole(m, &format!("{fb}.min_retry_concurrency"), 0)?,
                        ctx.from(m, &format!("{fb}.min_retry_concurrency")),
                    ),
                    None => (3, "min_retry_concurrency absent: Envoy's default 3".into()),
                };
                budget = entry(
                    "budget",
                    format!(
                        "{{ kind = \"concurrency\", percent = {}, min_concurrency = {min}, count_backoff = false }}",
                        percent / 100.0
                    ),
                    format!("{pf}; {mf} (the retry budget overrides max_retries)"),
                );
            } else if let Some(m) = t.get("max_retries") {
                let n = ctx.whole(m, &format!("{f}.max_retries"), 0)?;
                budget = entry(
                    "budget",
                    format!(
                        "{{ kind = \"concurrency\", percent = 0.0, min_concurrency = {n}, count_backoff = false }}"
                    ),
                    format!(
                        "{}: retries in progress at once",
                        ctx.from(m, &format!("{f}.max_retries"))
                    ),
                );
            } else {
                budget = entry(
                    "budget",
                    "{ kind = \"concurrency\", percent = 0.0, min_concurrency = 3, count_backoff = false }".into(),
                    format!(
                        "{} {f}: no max_retries: Envoy's default 3 retries in progress", ctx.at(t)
                    ),
                );
            }
        }
    }
    let outlier = match c.get("outlier_detection") {
        None => None,
        Some(od) => {
            let f = format!("{path}.outlier_detection");
            let mut keys = Vec::new();
            let mut from = Vec::new();
            for (k, v) in od.entries() {
                let fk = format!("{f}.{k}");
                match k.as_str() {
                    "consecutive_5xx" | "failure_percentage_minimum_hosts" | "failure_percentage_request_volume"
                    | "success_rate_minimum_hosts" | "success_rate_request_volume" | "success_rate_stdev_factor" => {
                        let n = wrapped(ctx, v, &fk)?;
                        keys.push(format!("{k} = {}", n as u64));
                        from.push(ctx.from(v.get("value").unwrap_or(v), &fk));
                    }
                    "enforcing_success_rate" => {
                        let n = wrapped(ctx, v, &fk)?;
                        // Any share above 0 is read as all: ejecting a share
                        // of the outliers found is not modelled.
                        let on = n > 0.0;
                        keys.push(format!("{k} = {}", if on { "100.0" } else { "0.0" }));
                        let mut line = ctx.from(v.get("value").unwrap_or(v), &fk);
                        if on && n < 100.0 {
                            line.push_str(" (read as 100: a share is not modelled)");
                        }
                        from.push(line);
                    }
                    "max_ejection_percent" | "failure_percentage_threshold" => {
                        let n = wrapped(ctx, v, &fk)?;
                        keys.push(format!("{k} = {n:?}"));
                        from.push(ctx.from(v.get("value").unwrap_or(v), &fk));
                    }
                    "interval" | "base_ejection_time" | "max_ejection_time" => {
                        let ns = ctx.duration(v, &fk)?;
                        keys.push(format!("{k} = {}", toml_duration(ns)));
                        from.push(ctx.from(v, &fk));
                    }
                    _ => ctx.not_modelled(v, &fk, "the simulator's outlier detection has consecutive 5xx, success rate and failure percentage only"),
                }
            }
            Some(entry(
                "outlier",
                format!("{{ {} }}", keys.join(", ")),
                if from.is_empty() {
                    format!("{} {f}: Envoy's defaults", ctx.at(od))
                } else {
                    from.join("; ")
                },
            ))
        }
    };
    let mut server: Vec<Entry> = outlier.into_iter().collect();
    for (k, v) in c.entries() {
        let fk = format!("{path}.{k}");
        match k.as_str() {
            // `@type` names the message of a config_dump's Any wrapper.
            "name" | "circuit_breakers" | "outlier_detection" | "@type" => {}
            // Read above: whether connections carry many requests at once.
            "http2_protocol_options" | "typed_extension_protocol_options" if http2 => {}
            "lb_policy" => {
                let p = ctx.text(v, &fk, "a load-balancing policy")?;
                let balancer = match p {
                    "ROUND_ROBIN" => Some("round-robin"),
                    // LEAST_REQUEST picks the less loaded of two at random
                    // (choice_count 2) when the weights are equal.
                    "LEAST_REQUEST" => Some("power-of-two"),
                    "RANDOM" => Some("random"),
                    _ => None,
                };
                match balancer {
                    Some(b) => server.push(entry("balancer", format!("\"{b}\""), ctx.from(v, &fk))),
                    None => ctx.not_modelled(v, &fk, "the simulator's balancers are round robin, random, least outstanding, power of two and pick first"),
                }
            }
            _ => ctx.not_modelled(
                v,
                &fk,
                "not a retry or ejection setting: the simulator has no counterpart",
            ),
        }
    }
    Ok(Cluster {
        name: c.get("name").and_then(Node::text).map(str::to_owned),
        budget,
        limits,
        server,
    })
}

/// Envoy's back-off when nothing sets it: full jitter over `(2^n - 1) x
/// 25ms`, at most 250 ms (`why` says why the defaults apply).
pub(super) fn default_back_off(entries: &mut Vec<Entry>, why: &str) {
    entries.push(entry(
        "base",
        toml_duration(25_000_000),
        format!("{why}: Envoy's default base_interval 25ms"),
    ));
    entries.push(entry(
        "cap",
        toml_duration(250_000_000),
        format!("{why}: Envoy's default max_interval 250ms"),
    ));
}

/// Every retry policy of the documents as a strategy.
#[expect(
    clippy::too_many_lines,
    reason = "reads each Envoy document kind in turn, each with its notes"
)]
pub(super) fn read(ctx: &mut Ctx, docs: &[Node]) -> Result<Vec<Strategy>, ImportError> {
    // The clusters first: routes name the cluster they go to.
    let mut found: Vec<(Node, String)> = Vec::new();
    let mut policies: Vec<(Node, String, Option<String>)> = Vec::new();
    for (d, doc) in docs.iter().enumerate() {
        let base = if docs.len() > 1 {
            format!("[document {}]", ctx.doc(d))
        } else {
            String::new()
        };
        walk(doc, &base, &mut |n, path, name| {
            if n.get("circuit_breakers").is_some() || n.get("outlier_detection").is_some() {
                found.push((n.clone(), path.to_owned()));
            }
            if n.get("retry_policy").is_some() {
                policies.push((n.clone(), path.to_owned(), name.map(str::to_owned)));
            }
        });
    }
    let mut clusters = Vec::new();
    for (c, path) in &found {
        clusters.push(cluster(
            ctx,
            c,
            if path.is_empty() { "(top)" } else { path },
        )?);
    }
    let mut out = Vec::new();
    for (i, (holder, path, named)) in policies.iter().enumerate() {
        let rp = holder.get("retry_policy").expect("found with one");
        let f = |k: &str| {
            if path.is_empty() {
                format!("retry_policy.{k}")
            } else {
                format!("{path}.retry_policy.{k}")
            }
        };
        let mut s = Strategy {
            name: named.clone().map_or_else(
                || format!("envoy-retry-{}", i + 1),
                |n| clean_name(&n, "-_."),
            ),
            ..Strategy::default()
        };
        let (retries, from) = match rp.get("num_retries") {
            Some(n) => (
                wrapped(ctx, n, &f("num_retries"))? as u64,
                ctx.from(n.get("value").unwrap_or(n), &f("num_retries")),
            ),
            None => (1, "num_retries absent: Envoy's default 1".into()),
        };
        s.entries
            .push(entry("max_retries", retries.to_string(), from));
        let codes: Vec<u64> = match rp.get("retriable_status_codes") {
            Some(list) => list
                .items()
                .iter()
                .enumerate()
                .map(|(j, c)| ctx.whole(c, &format!("{}[{j}]", f("retriable_status_codes")), 100))
                .collect::<Result<_, _>>()?,
            None => Vec::new(),
        };
        match rp.get("retry_on") {
            Some(r) => {
                let on = conditions(ctx, r, &f("retry_on"), &codes)?;
                s.entries.push(entry(
                    "retry_on",
                    toml_list(&on),
                    ctx.from(r, &f("retry_on")),
                ));
            }
            None => s.entries.push(entry(
                "retry_on",
                "[]".into(),
                "retry_on absent: Envoy retries on no condition".into(),
            )),
        }
        s.entries.push(entry("backoff", "\"envoy\"".into(), "Envoy's back-off, not a field: full jitter over (2^n - 1) x base_interval, at most max_interval".into()));
        match rp.get("retry_back_off") {
            Some(b) => {
                let bi = b.get("base_interval").ok_or_else(|| {
                    ctx.err(
                        b,
                        &f("retry_back_off.base_interval"),
                        "required by Envoy: the first interval, e.g. \"0.025s\"",
                    )
                })?;
                let base = ctx.duration(bi, &f("retry_back_off.base_interval"))?;
                if base == 0 {
                    return Err(ctx.err(bi, &f("retry_back_off.base_interval"), "must be above 0"));
                }
                s.entries.push(entry(
                    "base",
                    toml_duration(base),
                    ctx.from(bi, &f("retry_back_off.base_interval")),
                ));
                match b.get("max_interval") {
                    Some(mi) => {
                        let cap = ctx.duration(mi, &f("retry_back_off.max_interval"))?;
                        if cap < base {
                            return Err(ctx.err(
                                mi,
                                &f("retry_back_off.max_interval"),
                                "must be at least base_interval (Envoy)",
                            ));
                        }
                        s.entries.push(entry(
                            "cap",
                            toml_duration(cap),
                            ctx.from(mi, &f("retry_back_off.max_interval")),
                        ));
                    }
                    None => s.entries.push(entry(
                        "cap",
                        toml_duration(base * 10),
                        "max_interval absent: Envoy's default, 10 x base_interval".into(),
                    )),
                }
            }
            None => default_back_off(&mut s.entries, "retry_back_off absent"),
        }
        match rp.get("per_try_timeout") {
            Some(t) => {
                let ns = ctx.duration(t, &f("per_try_timeout"))?;
                s.entries.push(entry(
                    "timeout",
                    if ns == 0 {
                        "\"none\"".into()
                    } else {
                        toml_duration(ns)
                    },
                    ctx.from(t, &f("per_try_timeout")),
                ));
            }
            None => s.entries.push(entry(
                "timeout",
                "\"none\"".into(),
                "per_try_timeout absent: an attempt waits until the route's timeout".into(),
            )),
        }
        // The route's timeout is the whole request's (retries included).
        let route_timeout = holder.get("timeout");
        match route_timeout {
            Some(t) => {
                let ns = ctx.duration(t, &path_of(path, "timeout"))?;
                s.entries.push(entry(
                    "deadline",
                    if ns == 0 {
                        "\"none\"".into()
                    } else {
                        toml_duration(ns)
                    },
                    format!(
                        "{} (the route's timeout: the whole request, retries included)",
                        ctx.from(t, &path_of(path, "timeout"))
                    ),
                ));
            }
            None => s.entries.push(entry(
                "deadline",
                toml_duration(15_000_000_000),
                "the route's timeout absent: Envoy's default 15s for the whole request".into(),
            )),
        }
        match rp.get("rate_limited_retry_back_off") {
            Some(rl) => {
                let mi = rl.get("max_interval").ok_or_else(|| {
                    ctx.err(
                        rl,
                        &f("rate_limited_retry_back_off.max_interval"),
                        "required by Envoy: the longest wait a header may ask for",
                    )
                })?;
                let ns = ctx.duration(mi, &f("rate_limited_retry_back_off.max_interval"))?;
                s.entries.push(entry(
                    "use_retry_after",
                    "true".into(),
                    format!(
                        "{} {}: a reset header replaces the back-off",
                        ctx.at(rl),
                        f("rate_limited_retry_back_off")
                    ),
                ));
                s.entries.push(entry(
                    "retry_after_max",
                    toml_duration(ns),
                    ctx.from(mi, &f("rate_limited_retry_back_off.max_interval")),
                ));
                for (j, h) in rl
                    .get("reset_headers")
                    .map(Node::items)
                    .unwrap_or_default()
                    .iter()
                    .enumerate()
                {
                    let name = h.get("name").and_then(Node::text).unwrap_or("");
                    if !name.eq_ignore_ascii_case("retry-after") {
                        ctx.not_modelled(
                            h.get("name").unwrap_or(h),
                            &format!(
                                "{}[{j}].name",
                                f("rate_limited_retry_back_off.reset_headers")
                            ),
                            "the simulated servers send Retry-After only",
                        );
                    }
                }
            }
            None => s.entries.push(entry(
                "use_retry_after",
                "false".into(),
                "no rate_limited_retry_back_off: Envoy's back-off ignores Retry-After".into(),
            )),
        }
        for (k, v) in rp.entries() {
            match k.as_str() {
                "num_retries"
                | "retry_on"
                | "retriable_status_codes"
                | "retry_back_off"
                | "per_try_timeout"
                | "rate_limited_retry_back_off" => {}
                "retry_host_predicate" => {
                    for (j, p) in v.items().iter().enumerate() {
                        let name = p.get("name").and_then(Node::text).unwrap_or("");
                        let fj = format!("{}[{j}].name", f("retry_host_predicate"));
                        if name == "envoy.retry_host_predicates.previous_hosts" {
                            s.server.push(entry(
                                "retry_other_replica",
                                "true".into(),
                                ctx.from(p.get("name").unwrap_or(p), &fj),
                            ));
                        } else {
                            ctx.not_modelled(
                                p,
                                &fj,
                                "only previous_hosts has a counterpart (retry_other_replica)",
                            );
                        }
                    }
                }
                _ => ctx.not_modelled(v, &f(k), "the simulator has no counterpart"),
            }
        }
        for (k, v) in holder.entries() {
            if !matches!(
                k.as_str(),
                "name"
                    | "match"
                    | "cluster"
                    | "timeout"
                    | "retry_policy"
                    | "domains"
                    | "routes"
                    | "@type"
            ) {
                ctx.not_modelled(
                    v,
                    &path_of(path, k),
                    "not a retry setting: the simulator has no counterpart",
                );
            }
        }
        // The cluster this route goes to, if the file has it.
        let target = holder.get("cluster").and_then(Node::text);
        let chosen = match target {
            Some(t) => clusters.iter().find(|c| c.name.as_deref() == Some(t)),
            None => None,
        }
        .or(if clusters.len() == 1 {
            clusters.first()
        } else {
            None
        });
        match chosen {
            Some(c) => {
                s.entries.push(c.budget.clone());
                s.entries.push(c.limits.clone());
                s.server.extend(c.server.iter().cloned());
            }
            None => {
                s.entries.push(entry(
                    "budget",
                    "{ kind = \"concurrency\", percent = 0.0, min_concurrency = 3, count_backoff = false }".into(),
                    "its cluster is not in the file: Envoy's default circuit breaker, max_retries 3 (retries in progress)".into(),
                ));
                s.entries.push(entry(
                    "limits",
                    default_limits(false),
                    "its cluster is not in the file: Envoy's default thresholds, 1024 connections, pending and requests".into(),
                ));
            }
        }
        out.push(s);
    }
    if policies.is_empty() {
        for (c, (node, path)) in clusters.iter().zip(&found) {
            let mut s = Strategy {
                name: c.name.clone().unwrap_or_else(|| "envoy-cluster".into()),
                ..Strategy::default()
            };
            s.entries.push(entry(
                "max_retries",
                "0".into(),
                format!(
                    "{} {}: no retry_policy in the file: Envoy retries only with one",
                    ctx.at(node),
                    if path.is_empty() { "(top)" } else { path }
                ),
            ));
            s.entries.push(c.budget.clone());
            s.entries.push(c.limits.clone());
            s.server.extend(c.server.iter().cloned());
            out.push(s);
        }
    }
    Ok(out)
}

fn path_of(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

#[cfg(test)]
mod tests;
