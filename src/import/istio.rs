//! Istio's `VirtualService` (each HTTP route's `retries` and `timeout`) and
//! `DestinationRule` (`connectionPool.http.maxRetries` and
//! `outlierDetection`), as Istio turns them into Envoy's settings.

use super::envoy::{conditions, default_back_off};
use super::tree::Node;
use super::{Ctx, Entry, ImportError, Strategy, clean_name, entry, toml_duration};

/// A DestinationRule's retry limit and its server keys.
struct Rule {
    host: Option<String>,
    budget: Entry,
    /// Its connection limits, if its connectionPool sets any.
    limits: Option<Entry>,
    server: Vec<Entry>,
}

/// `trafficPolicy.retryBudget` (Istio 1.27 and later, istio/api#3512):
/// Envoy's retry budget, retries in progress at most `percent` of the
/// requests in progress and at least `minRetryConcurrency`; it overrides
/// `maxRetries`, as Envoy's budget overrides its circuit breaker.
fn retry_budget(ctx: &mut Ctx, rb: &Node, f: &str) -> Result<Entry, ImportError> {
    let (percent, pf) = match rb.get("percent") {
        Some(p) => {
            let v = ctx.number(p, &format!("{f}.percent"))?;
            if !(0.0..=100.0).contains(&v) {
                return Err(ctx.err(p, &format!("{f}.percent"), "a percentage, 0 to 100"));
            }
            (v, ctx.from(p, &format!("{f}.percent")))
        }
        None => (
            20.0,
            "percent absent: Istio's documented default 20% (some releases programmed 0.2%, istio#59504)".into(),
        ),
    };
    let (min, mf) = match rb.get("minRetryConcurrency") {
        Some(m) => (
            ctx.whole(m, &format!("{f}.minRetryConcurrency"), 0)?,
            ctx.from(m, &format!("{f}.minRetryConcurrency")),
        ),
        None => (3, "minRetryConcurrency absent: the default 3".into()),
    };
    if let Some(i) = rb.get("budgetInterval") {
        ctx.not_modelled(
            i,
            &format!("{f}.budgetInterval"),
            "a budget over an interval of requests (istio/api#3716): the simulator's Envoy budget counts the requests in progress",
        );
    }
    ctx.not_modelled(rb, f, super::PER_PROXY);
    Ok(entry(
        "budget",
        format!(
            "{{ kind = \"concurrency\", percent = {:?}, min_concurrency = {min}, count_backoff = false }}",
            percent / 100.0
        ),
        format!("{pf}; {mf} (Envoy's retry budget, over maxRetries)"),
    ))
}

#[expect(
    clippy::too_many_lines,
    reason = "reads a route rule's documented fields in order"
)]
fn rule(ctx: &mut Ctx, doc: &Node, d: usize) -> Result<Rule, ImportError> {
    let at = |f: &str| format!("[document {d}].spec.{f}");
    let spec = doc.get("spec").ok_or_else(|| {
        ctx.err(
            doc,
            &format!("[document {d}].spec"),
            "a DestinationRule needs a spec",
        )
    })?;
    let mut budget = entry(
        "budget",
        "{ kind = \"none\" }".into(),
        "no connectionPool.http.maxRetries: Istio's default 2^32 - 1 retries in progress, no limit"
            .into(),
    );
    let mut server = Vec::new();
    let tp = spec.get("trafficPolicy");
    if let Some(m) = tp
        .and_then(|t| t.get("connectionPool"))
        .and_then(|c| c.get("http"))
        .and_then(|h| h.get("maxRetries"))
    {
        let n = ctx.whole(m, &at("trafficPolicy.connectionPool.http.maxRetries"), 0)?;
        budget = entry(
            "budget",
            format!(
                "{{ kind = \"concurrency\", percent = 0.0, min_concurrency = {n}, count_backoff = false }}"
            ),
            format!(
                "{}: retries in progress at once (Envoy's max_retries)",
                ctx.from(m, &at("trafficPolicy.connectionPool.http.maxRetries"))
            ),
        );
    }
    if let Some(rb) = tp.and_then(|t| t.get("retryBudget")) {
        budget = retry_budget(ctx, rb, &at("trafficPolicy.retryBudget"))?;
    }
    for (node, field) in [
        (tp.and_then(|t| t.get("retryBudget")), "retryBudget"),
        (
            tp.and_then(|t| t.get("connectionPool"))
                .and_then(|c| c.get("http"))
                .and_then(|h| h.get("maxRetries")),
            "connectionPool.http.maxRetries",
        ),
        (
            tp.and_then(|t| t.get("outlierDetection")),
            "outlierDetection",
        ),
    ] {
        if let Some(n) = node {
            ctx.not_modelled(n, &at(&format!("trafficPolicy.{field}")), super::PER_PROXY);
        }
    }
    let pool = tp.and_then(|t| t.get("connectionPool"));
    let field = |k: &str, k2: &str| {
        (
            pool.and_then(|c| c.get(k)).and_then(|h| h.get(k2)),
            at(&format!("trafficPolicy.connectionPool.{k}.{k2}")),
        )
    };
    // Istio sets every threshold it is not given to 2^32 - 1
    // (getDefaultCircuitBreakerThresholds): no limit.
    let limits = super::limits_entry(
        ctx,
        [
            field("tcp", "maxConnections"),
            field("http", "http1MaxPendingRequests"),
            field("http", "http2MaxRequests"),
        ],
        u64::from(u32::MAX),
        "Istio's default",
    )?;
    if let Some(cp) = pool {
        for (k, v) in cp.entries() {
            for (k2, v2) in v.entries() {
                let read = matches!(
                    (k.as_str(), k2.as_str()),
                    ("tcp", "maxConnections")
                        | (
                            "http",
                            "http1MaxPendingRequests" | "http2MaxRequests" | "maxRetries"
                        )
                );
                if !read {
                    ctx.not_modelled(
                        v2,
                        &at(&format!("trafficPolicy.connectionPool.{k}.{k2}")),
                        "the simulator's proxy limits are connections, waiting requests and requests",
                    );
                }
            }
        }
    }
    if let Some(od) = tp.and_then(|t| t.get("outlierDetection")) {
        let f = |k: &str| at(&format!("trafficPolicy.outlierDetection.{k}"));
        let mut keys = Vec::new();
        let mut from = Vec::new();
        let mut panic = None;
        for (k, v) in od.entries() {
            match k.as_str() {
                "consecutive5xxErrors" => {
                    keys.push(format!("consecutive_5xx = {}", ctx.whole(v, &f(k), 0)?));
                    from.push(ctx.from(v, &f(k)));
                }
                "interval" | "baseEjectionTime" => {
                    let ns = ctx.duration(v, &f(k))?;
                    let key = if k == "interval" {
                        "interval"
                    } else {
                        "base_ejection_time"
                    };
                    keys.push(format!("{key} = {}", toml_duration(ns)));
                    from.push(ctx.from(v, &f(k)));
                }
                "maxEjectionPercent" => {
                    keys.push(format!(
                        "max_ejection_percent = {:?}",
                        ctx.number(v, &f(k))?
                    ));
                    from.push(ctx.from(v, &f(k)));
                }
                "minHealthPercent" => {
                    panic = Some(entry(
                        "healthy_panic_threshold",
                        format!("{:?}", ctx.number(v, &f(k))?),
                        format!("{} (Envoy's healthy_panic_threshold)", ctx.from(v, &f(k))),
                    ));
                }
                _ => ctx.not_modelled(
                    v,
                    &f(k),
                    "the simulator's outlier detection has consecutive 5xx only here",
                ),
            }
        }
        // Istio's pilot turns Envoy's success-rate ejection off in every
        // outlier detection it writes (applyOutlierDetection).
        keys.push("enforcing_success_rate = 0.0".to_owned());
        from.push(format!(
            "{} outlierDetection: Istio sets Envoy's enforcing_success_rate to 0",
            ctx.at(od)
        ));
        server.push(entry(
            "outlier",
            format!("{{ {} }}", keys.join(", ")),
            from.join("; "),
        ));
        server.push(panic.unwrap_or_else(|| {
            entry(
                "healthy_panic_threshold",
                "0.0".into(),
                "minHealthPercent absent: Istio's default 0%, the panic threshold off".into(),
            )
        }));
    }
    if let Some(s) = spec.get("subsets") {
        ctx.not_modelled(
            s,
            &at("subsets"),
            "the scenario's server is one fleet: subsets are not modelled",
        );
    }
    Ok(Rule {
        host: spec.get("host").and_then(Node::text).map(str::to_owned),
        budget,
        limits,
        server,
    })
}

/// Every HTTP route of every VirtualService as a strategy, with the
/// DestinationRule of its destination.
#[expect(
    clippy::too_many_lines,
    reason = "reads each Istio document kind in turn, each with its notes"
)]
pub(super) fn read(ctx: &mut Ctx, docs: &[Node]) -> Result<Vec<Strategy>, ImportError> {
    let mut rules = Vec::new();
    for (d, doc) in docs.iter().enumerate() {
        if doc.get("kind").and_then(Node::text) == Some("DestinationRule") {
            rules.push(rule(ctx, doc, ctx.doc(d))?);
        }
    }
    let mut out = Vec::new();
    for (d, doc) in docs.iter().enumerate() {
        let kind = doc.get("kind").and_then(Node::text).unwrap_or("");
        match kind {
            "VirtualService" => {}
            "DestinationRule" => continue,
            other => {
                ctx.not_modelled(
                    doc,
                    &format!("[document {}].kind", ctx.doc(d)),
                    &format!("{other}: only VirtualService and DestinationRule are read"),
                );
                continue;
            }
        }
        let d = ctx.doc(d);
        let spec = doc.get("spec").ok_or_else(|| {
            ctx.err(
                doc,
                &format!("[document {d}].spec"),
                "a VirtualService needs a spec",
            )
        })?;
        let vs_name = doc
            .get("metadata")
            .and_then(|m| m.get("name"))
            .and_then(Node::text)
            .unwrap_or("virtual-service");
        for key in ["tcp", "tls"] {
            if let Some(v) = spec.get(key) {
                ctx.not_modelled(
                    v,
                    &format!("[document {d}].spec.{key}"),
                    "only HTTP routes retry",
                );
            }
        }
        for (i, route) in spec
            .get("http")
            .map(Node::items)
            .unwrap_or_default()
            .iter()
            .enumerate()
        {
            let at = |f: &str| format!("[document {d}].spec.http[{i}].{f}");
            let name = route
                .get("name")
                .and_then(Node::text)
                .map_or_else(|| format!("{vs_name}-{i}"), |n| format!("{vs_name}-{n}"));
            let mut s = Strategy {
                name: clean_name(&name, "-_."),
                ..Strategy::default()
            };
            match route.get("retries") {
                Some(r) => {
                    let (n, from) = match r.get("attempts") {
                        Some(a) => (
                            ctx.whole(a, &at("retries.attempts"), 0)?,
                            format!(
                                "{} (Istio's attempts are retries)",
                                ctx.from(a, &at("retries.attempts"))
                            ),
                        ),
                        None => (2, "retries.attempts absent: Istio's default 2".into()),
                    };
                    s.entries.push(entry("max_retries", n.to_string(), from));
                    match r.get("retryOn") {
                        Some(on) => {
                            let list = conditions(ctx, on, &at("retries.retryOn"), &[])?;
                            s.entries.push(entry("retry_on", super::toml_list(&list), ctx.from(on, &at("retries.retryOn"))));
                        }
                        None => s.entries.push(entry(
                            "retry_on",
                            "[\"refused\", \"reset\", \"429\", \"502\", \"503\", \"504\"]".into(),
                            "retries.retryOn absent: Istio's default connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes (503)".into(),
                        )),
                    }
                    match r.get("perTryTimeout") {
                        Some(t) => {
                            let ns = ctx.duration(t, &at("retries.perTryTimeout"))?;
                            s.entries.push(entry("timeout", toml_duration(ns), ctx.from(t, &at("retries.perTryTimeout"))));
                        }
                        None => s.entries.push(entry("timeout", "\"none\"".into(), "retries.perTryTimeout absent: an attempt waits until the route's timeout".into())),
                    }
                    for (k, v) in r.entries() {
                        if !matches!(k.as_str(), "attempts" | "retryOn" | "perTryTimeout") {
                            ctx.not_modelled(
                                v,
                                &at(&format!("retries.{k}")),
                                "the simulator has no counterpart",
                            );
                        }
                    }
                }
                None => {
                    s.entries.push(entry(
                        "max_retries",
                        "2".into(),
                        "no retries: Istio's default policy, 2 retries".into(),
                    ));
                    s.entries.push(entry(
                        "retry_on",
                        "[\"refused\", \"reset\", \"429\", \"502\", \"503\", \"504\"]".into(),
                        "no retries: Istio's default retryOn connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes (503)".into(),
                    ));
                    s.entries.push(entry(
                        "timeout",
                        "\"none\"".into(),
                        "no retries: no per-try timeout".into(),
                    ));
                }
            }
            s.entries.push(entry(
                "backoff",
                "\"envoy\"".into(),
                "Envoy's back-off, as Istio configures it: full jitter over (2^n - 1) x 25ms"
                    .into(),
            ));
            default_back_off(&mut s.entries, "Istio sets no back-off");
            s.entries.push(entry(
                "use_retry_after",
                "false".into(),
                "Envoy's back-off ignores Retry-After unless told".into(),
            ));
            match route.get("timeout") {
                Some(t) => {
                    let ns = ctx.duration(t, &at("timeout"))?;
                    s.entries.push(entry(
                        "deadline",
                        if ns == 0 {
                            "\"none\"".into()
                        } else {
                            toml_duration(ns)
                        },
                        format!(
                            "{} (the whole request, retries included)",
                            ctx.from(t, &at("timeout"))
                        ),
                    ));
                }
                None => s.entries.push(entry(
                    "deadline",
                    "\"none\"".into(),
                    "timeout absent: Istio's default, none".into(),
                )),
            }
            for (k, v) in route.entries() {
                match k.as_str() {
                    "name" | "match" | "route" | "retries" | "timeout" => {}
                    "fault" => ctx.not_modelled(
                        v,
                        &at(k),
                        "injected faults: the scenario's outages and failing replicas make the failures",
                    ),
                    _ => ctx.not_modelled(v, &at(k), "not a retry setting: the simulator has no counterpart"),
                }
            }
            let host = route
                .get("route")
                .and_then(|r| r.items().first())
                .and_then(|r| r.get("destination"))
                .and_then(|d| d.get("host"))
                .and_then(Node::text);
            let chosen = host
                .and_then(|h| {
                    rules.iter().find(|r| {
                        r.host.as_deref().is_some_and(|rh| {
                            rh == h
                                || rh.starts_with(&format!("{h}."))
                                || h.starts_with(&format!("{rh}."))
                        })
                    })
                })
                .or(if rules.len() == 1 {
                    rules.first()
                } else {
                    None
                });
            match chosen {
                Some(r) => {
                    s.entries.push(r.budget.clone());
                    s.entries.extend(r.limits.clone());
                    s.server.extend(r.server.iter().cloned());
                }
                None => s.entries.push(entry(
                    "budget",
                    "{ kind = \"none\" }".into(),
                    "no DestinationRule for its host in the file: Istio's default maxRetries 2^32 - 1, no limit".into(),
                )),
            }
            out.push(s);
        }
    }
    if out.is_empty() {
        // DestinationRules alone: their limits and ejection, to lay over a
        // scenario's own retries.
        for r in &rules {
            out.push(Strategy {
                name: clean_name(r.host.as_deref().unwrap_or("destination-rule"), "-_."),
                entries: std::iter::once(r.budget.clone())
                    .chain(r.limits.clone())
                    .collect(),
                server: r.server.clone(),
            });
        }
        if out.is_empty() {
            return Err(ctx.err(
                &docs[0],
                "kind",
                "no VirtualService with an http route and no DestinationRule: nothing to import as a strategy",
            ));
        }
        ctx.not_modelled(
            &docs[0],
            "(no VirtualService)",
            "a DestinationRule alone sets no retries: its limits and ejection are laid over the scenario's retries (in a mesh, traffic with no VirtualService retries as Istio's default, 2 retries)",
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::import::tests::{keys, value};

    const ROUTE: &str = "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata:\n  \
                         name: r\nspec:\n  hosts: [r]\n  http:\n  - route:\n    - destination:\n        \
                         host: r\n";

    /// Istio's attempts are retries; perTryTimeout and the route's timeout
    /// map to the attempt's and the request's; the back-off is Envoy's
    /// default, which Istio does not set.
    #[test]
    fn a_route_with_retries_maps_field_by_field() {
        let k = keys(&format!(
            "{ROUTE}    timeout: 4s\n    retries:\n      attempts: 3\n      perTryTimeout: 1s\n      \
             retryOn: \"connect-failure,503\"\n"
        ));
        assert_eq!(value(&k, "max_retries"), "3");
        assert_eq!(value(&k, "timeout"), "\"1s\"");
        assert_eq!(value(&k, "deadline"), "\"4s\"");
        assert_eq!(value(&k, "retry_on"), "[\"refused\", \"503\"]");
        assert_eq!(value(&k, "base"), "\"25ms\"");
    }

    /// A route that says nothing of retries gets Istio's mesh default, 2
    /// retries, the retries users do not see; a DestinationRule's
    /// maxRetries is Envoy's limit on retries in progress at once.
    #[test]
    fn the_mesh_default_and_a_destination_rules_limit() {
        let k = keys(&format!(
            "{ROUTE}---\napiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata:\n  \
             name: d\nspec:\n  host: r\n  trafficPolicy:\n    connectionPool:\n      http:\n        \
             maxRetries: 5\n"
        ));
        assert_eq!(value(&k, "max_retries"), "2");
        assert!(value(&k, "retry_on").contains("\"503\""));
        let budget = value(&k, "budget");
        assert!(
            budget.contains("concurrency") && budget.contains("min_concurrency = 5"),
            "{budget}"
        );
    }

    const RULE: &str = "apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata:\n  \
                        name: d\nspec:\n  host: r\n  trafficPolicy:\n";

    /// A DestinationRule alone is a strategy of its limits and ejection,
    /// to lay over a scenario's retries; its retry budget (Istio 1.27)
    /// overrides maxRetries, 20% and 3 by default.
    #[test]
    fn a_destination_rule_alone_and_its_retry_budget() {
        let text = format!(
            "{RULE}    connectionPool:\n      http:\n        maxRetries: 5\n    retryBudget:\n      \
             minRetryConcurrency: 4\n    outlierDetection:\n      consecutive5xxErrors: 3\n"
        );
        let imported = crate::import::import_text("t", &text).unwrap();
        let s = &imported.strategies[0];
        assert_eq!(s.name, "r");
        assert_eq!(s.entries.len(), 1);
        assert_eq!(
            s.entries[0].value,
            "{ kind = \"concurrency\", percent = 0.2, min_concurrency = 4, count_backoff = false }"
        );
        assert!(s.server.iter().any(|e| e.key == "outlier"));
        assert!(
            imported
                .not_modelled
                .iter()
                .any(|n| n.contains("sets no retries")),
            "{:?}",
            imported.not_modelled
        );
        let bad = format!("{RULE}    retryBudget:\n      percent: 120\n");
        let err = crate::import::import_text("t", &bad).unwrap_err().0;
        assert!(err.starts_with("t:9: field"), "{err}");
    }
}
