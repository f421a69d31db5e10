//! The Gateway API: each rule of an `HTTPRoute` (its `retry`, GEP-1731, and
//! `timeouts`) and of a `GRPCRoute` becomes a strategy, with the retry
//! budget of an `XBackendTrafficPolicy` (GEP-3388, API group
//! `gateway.networking.x-k8s.io`) on its backend Service and the Envoy
//! Gateway `BackendTrafficPolicy` (group `gateway.envoyproxy.io`) attached
//! to the route or its Gateway. Where the Gateway API leaves a value to the
//! implementation, the value is Envoy Gateway's (an Envoy-based
//! implementation of the API), and the comment says so.

use super::envoy::{default_back_off, http_outcome};
use super::envoy_gateway::{self, Policy, targets};
use super::tree::Node;
use super::{Ctx, Entry, ImportError, Strategy, clean_name, entry, toml_duration, toml_list};

/// The Gateway API's group.
const GATEWAY: &str = "gateway.networking.k8s.io";
/// The Gateway API's experimental group (GEP-3388's policy).
const GATEWAY_X: &str = "gateway.networking.x-k8s.io";
/// Envoy Gateway's group.
const ENVOY_GATEWAY: &str = "gateway.envoyproxy.io";

/// The API group of a Kubernetes document (`apiVersion` before its `/`;
/// empty for the core group).
pub(super) fn group(doc: &Node) -> &str {
    let v = doc.get("apiVersion").and_then(Node::text).unwrap_or("");
    v.rsplit_once('/').map_or("", |(g, _)| g)
}

/// The document's kind.
fn kind(doc: &Node) -> &str {
    doc.get("kind").and_then(Node::text).unwrap_or("")
}

/// Whether a document is one this reader takes.
pub(super) fn is_gateway(doc: &Node) -> bool {
    matches!(group(doc), GATEWAY | GATEWAY_X | ENVOY_GATEWAY)
}

/// `metadata.name`, or `fallback`.
fn name_of<'a>(doc: &'a Node, fallback: &'a str) -> &'a str {
    doc.get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Node::text)
        .unwrap_or(fallback)
}

/// A GEP-3388 retry budget and the Services it is on.
struct Budget {
    name: String,
    services: Vec<String>,
    entry: Entry,
}

/// A policy's interval (nanoseconds) and where it came from, or `default`.
fn window(
    ctx: &Ctx,
    node: Option<&Node>,
    field: &str,
    default: u64,
) -> Result<(u64, String), ImportError> {
    match node {
        Some(i) => {
            let ns = ctx.duration(i, field)?;
            if ns == 0 {
                return Err(ctx.err(i, field, "must be above 0"));
            }
            Ok((ns, ctx.from(i, field)))
        }
        None => Ok((
            default,
            format!(
                "{field} absent: the API's default {}",
                toml_duration(default).trim_matches('"')
            ),
        )),
    }
}

/// `minRetryRate` as retries a second, and where it came from.
fn min_rate(ctx: &Ctx, rc: Option<&Node>, at: &str) -> Result<(f64, Vec<String>), ImportError> {
    let f = |k: &str| format!("{at}.retryConstraint.minRetryRate.{k}");
    let rate = rc.and_then(|r| r.get("minRetryRate"));
    let mut from = Vec::new();
    let count = match rate.and_then(|r| r.get("count")) {
        Some(c) => {
            from.push(ctx.from(c, &f("count")));
            ctx.whole(c, &f("count"), 0)?
        }
        None => {
            from.push("minRetryRate.count absent: the API's default 10".into());
            10
        }
    };
    let (per, pf) = window(
        ctx,
        rate.and_then(|r| r.get("interval")),
        &f("interval"),
        1_000_000_000,
    )?;
    from.push(pf);
    Ok((count as f64 / (per as f64 / 1e9), from))
}

/// An `XBackendTrafficPolicy`'s `retryConstraint`, as the simulator's
/// Finagle-style budget: retries may be `percent` of the requests of the
/// last `interval`, and at least `count` per `interval` whatever the
/// traffic.
fn x_budget(ctx: &mut Ctx, doc: &Node, d: usize) -> Result<Budget, ImportError> {
    let at = format!("[document {d}].spec");
    let spec = doc
        .get("spec")
        .ok_or_else(|| ctx.err(doc, &at, "an XBackendTrafficPolicy needs a spec"))?;
    let f = |k: &str| format!("{at}.retryConstraint.{k}");
    let rc = spec.get("retryConstraint");
    let budget = rc.and_then(|r| r.get("budget"));
    let mut from = Vec::new();
    let percent = match budget.and_then(|b| b.get("percent")) {
        Some(p) => {
            let v = ctx.whole(p, &f("budget.percent"), 0)?;
            if v > 100 {
                return Err(ctx.err(p, &f("budget.percent"), "a percentage, 0 to 100"));
            }
            from.push(ctx.from(p, &f("budget.percent")));
            v
        }
        None => {
            from.push("budget.percent absent: the API's default 20".into());
            20
        }
    };
    let (ttl, tf) = window(
        ctx,
        budget.and_then(|b| b.get("interval")),
        &f("budget.interval"),
        10_000_000_000,
    )?;
    from.push(tf);
    let (min_per_s, rate_from) = min_rate(ctx, rc, &at)?;
    from.extend(rate_from);
    if let Some(r) = rc {
        ctx.not_modelled(r, &format!("{at}.retryConstraint"), super::PER_PROXY);
    }
    for (k, v) in spec.entries() {
        if !matches!(k.as_str(), "targetRefs" | "retryConstraint") {
            ctx.not_modelled(v, &format!("{at}.{k}"), "not a retry setting");
        }
    }
    Ok(Budget {
        name: name_of(doc, "retry-budget").to_owned(),
        services: targets(spec)
            .into_iter()
            .filter(|(k, _)| k == "Service" || k.is_empty())
            .map(|(_, n)| n)
            .collect(),
        entry: entry(
            "budget",
            format!(
                "{{ kind = \"finagle\", ttl = {}, min_per_s = {min_per_s:?}, percent = {:?} }}",
                toml_duration(ttl),
                percent as f64 / 100.0
            ),
            format!(
                "{} (GEP-3388: retries at most percent of the interval's requests, and at least count per interval)",
                from.join("; ")
            ),
        ),
    })
}

/// A route rule's `retry` (GEP-1731): `attempts` retries, on `codes` and on
/// connection errors (which the API asks implementations to retry), the
/// first after `backoff`, as Envoy Gateway programs Envoy's back-off.
fn rule_retry(ctx: &mut Ctx, r: &Node, at: &str) -> Result<Vec<Entry>, ImportError> {
    let f = |k: &str| format!("{at}.retry.{k}");
    let mut out = Vec::new();
    out.push(match r.get("attempts") {
        Some(a) => entry(
            "max_retries",
            ctx.whole(a, &f("attempts"), 0)?.to_string(),
            format!(
                "{} (retries after the first attempt)",
                ctx.from(a, &f("attempts"))
            ),
        ),
        None => entry(
            "max_retries",
            "2".into(),
            "retry.attempts absent: implementation-specific; Envoy Gateway's default 2".into(),
        ),
    });
    let mut on: Vec<&'static str> = vec!["reset", "refused", "timeout"];
    for (j, c) in r
        .get("codes")
        .map(Node::items)
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        let fj = format!("{}[{j}]", f("codes"));
        let code = ctx.whole(c, &fj, 400)?;
        if code > 599 {
            return Err(ctx.err(c, &fj, "a status from 400 to 599 (the API's range)"));
        }
        match http_outcome(code) {
            Some(o) if !on.contains(&o) => on.push(o),
            Some(_) => {}
            None => ctx.not_modelled(c, &fj, "the simulated servers never answer this status"),
        }
    }
    out.push(entry(
        "retry_on",
        toml_list(&on),
        match r.get("codes") {
            Some(c) => format!(
                "{}, and connection errors (disconnect, reset, timeout), which the API asks to retry",
                ctx.from(c, &f("codes"))
            ),
            None => "retry.codes absent: connection errors only (disconnect, reset, timeout)".into(),
        },
    ));
    out.push(entry(
        "backoff",
        "\"envoy\"".into(),
        "implementation-specific; Envoy Gateway programs Envoy's: full jitter over (2^n - 1) x backoff, at most 10 x backoff".into(),
    ));
    match r.get("backoff") {
        Some(b) => {
            let ns = ctx.duration(b, &f("backoff"))?;
            if ns == 0 {
                return Err(ctx.err(b, &f("backoff"), "must be above 0"));
            }
            out.push(entry("base", toml_duration(ns), ctx.from(b, &f("backoff"))));
            out.push(entry(
                "cap",
                toml_duration(ns * 10),
                "Envoy's default max_interval, 10 x the base".into(),
            ));
        }
        None => default_back_off(&mut out, "retry.backoff absent"),
    }
    out.push(entry(
        "use_retry_after",
        "false".into(),
        "the API has no Retry-After; Envoy's back-off ignores it".into(),
    ));
    for (k, v) in r.entries() {
        if !matches!(k.as_str(), "attempts" | "codes" | "backoff") {
            ctx.not_modelled(v, &f(k), "not a field of the API's retry");
        }
    }
    Ok(out)
}

/// A duration entry, `"none"` for zero (the API's "no timeout").
fn limit(ctx: &Ctx, key: &str, node: &Node, field: &str, why: &str) -> Result<Entry, ImportError> {
    let ns = ctx.duration(node, field)?;
    Ok(entry(
        key,
        if ns == 0 {
            "\"none\"".into()
        } else {
            toml_duration(ns)
        },
        format!("{} ({why})", ctx.from(node, field)),
    ))
}

/// The policy attached to a route: one naming the route itself wins over
/// one naming its Gateway (Envoy Gateway's precedence).
fn attached<'p>(policies: &'p [Policy], route: &str, gateways: &[String]) -> Option<&'p Policy> {
    policies
        .iter()
        .find(|p| {
            p.targets
                .iter()
                .any(|(k, n)| (k == "HTTPRoute" || k == "GRPCRoute") && n == route)
        })
        .or_else(|| {
            policies.iter().find(|p| {
                p.targets
                    .iter()
                    .any(|(k, n)| k == "Gateway" && gateways.contains(n))
            })
        })
}

/// One rule of a route as a strategy.
#[expect(
    clippy::too_many_lines,
    reason = "a rule's retry, timeouts and each policy that may reach it, in order"
)]
fn rule(
    ctx: &mut Ctx,
    rule: &Node,
    at: &str,
    name: String,
    policy: Option<&Policy>,
    budgets: &[Budget],
    used: &mut [bool],
) -> Result<Strategy, ImportError> {
    let mut s = Strategy {
        name: clean_name(&name, "-_."),
        ..Strategy::default()
    };
    let retries = match (rule.get("retry"), policy.and_then(|p| p.retry.as_ref())) {
        (Some(r), given) => {
            if let (Some(p), Some(_)) = (policy, given) {
                ctx.not_modelled(
                    rule,
                    &format!("{at}.retry (over BackendTrafficPolicy {}'s retry)", p.name),
                    "the route's own retry takes precedence (Envoy Gateway)",
                );
            }
            rule_retry(ctx, r, at)?
        }
        (None, Some(p)) => p.clone(),
        (None, None) => vec![entry(
            "max_retries",
            "0".into(),
            "no retry on the rule and no BackendTrafficPolicy retry for it in the file: a gateway retries only when told".into(),
        )],
    };
    let retrying = retries
        .iter()
        .any(|e| e.key == "max_retries" && e.value != "0");
    s.entries.extend(retries);
    let timeouts = rule.get("timeouts");
    if let Some(t) = timeouts.and_then(|t| t.get("backendRequest")) {
        s.entries.retain(|e| e.key != "timeout");
        s.entries.push(limit(
            ctx,
            "timeout",
            t,
            &format!("{at}.timeouts.backendRequest"),
            "each attempt's",
        )?);
    } else if !s.entries.iter().any(|e| e.key == "timeout") {
        s.entries.push(entry(
            "timeout",
            "\"none\"".into(),
            "timeouts.backendRequest absent: an attempt waits until the request's timeout".into(),
        ));
    }
    match (timeouts.and_then(|t| t.get("request")), policy.and_then(|p| p.deadline.as_ref())) {
        (Some(t), _) => s.entries.push(limit(
            ctx,
            "deadline",
            t,
            &format!("{at}.timeouts.request"),
            "the whole request, retries included",
        )?),
        (None, Some(d)) => s.entries.push(d.clone()),
        (None, None) => s.entries.push(entry(
            "deadline",
            "\"none\"".into(),
            "timeouts.request absent: implementation-specific; no limit on the whole request assumed".into(),
        )),
    }
    if let Some(t) = timeouts {
        for (k, v) in t.entries() {
            if k != "request" && k != "backendRequest" {
                ctx.not_modelled(
                    v,
                    &format!("{at}.timeouts.{k}"),
                    "not a field of the API's timeouts",
                );
            }
        }
    }
    let services: Vec<&str> = rule
        .get("backendRefs")
        .map(Node::items)
        .unwrap_or_default()
        .iter()
        .filter_map(|b| b.get("name").and_then(Node::text))
        .collect();
    let gep = budgets
        .iter()
        .position(|b| b.services.iter().any(|n| services.contains(&n.as_str())));
    match (gep, policy.and_then(|p| p.budget.as_ref())) {
        (Some(i), p) => {
            used[i] = true;
            s.entries.push(budgets[i].entry.clone());
            if p.is_some() {
                ctx.not_modelled(
                    rule,
                    &format!("{at} (BackendTrafficPolicy circuitBreaker)"),
                    "the simulator takes one budget: the XBackendTrafficPolicy's",
                );
            }
        }
        (None, Some(b)) => s.entries.push(b.clone()),
        (None, None) => s.entries.push(entry(
            "budget",
            "{ kind = \"concurrency\", percent = 0.0, min_concurrency = 3, count_backoff = false }".into(),
            "no retry limit in the file for this backend: Envoy's default circuit breaker, 3 retries in progress".into(),
        )),
    }
    if let Some(p) = policy {
        s.entries.extend(p.limits.iter().cloned());
        s.server.extend(p.server.iter().cloned());
    }
    if retrying {
        s.server.push(entry(
            "retry_other_replica",
            "true".into(),
            "Envoy Gateway's retry policy always avoids the hosts already tried (previous_hosts)"
                .into(),
        ));
    }
    for (k, v) in rule.entries() {
        if !matches!(
            k.as_str(),
            "retry" | "timeouts" | "backendRefs" | "name" | "matches"
        ) {
            ctx.not_modelled(v, &format!("{at}.{k}"), "not a retry or timeout setting");
        }
    }
    Ok(s)
}

/// The retry policies of the files, and whether each reached a route.
struct Policies {
    /// Envoy Gateway's `BackendTrafficPolicy`s.
    eg: Vec<Policy>,
    eg_used: Vec<bool>,
    /// GEP-3388's budgets.
    budgets: Vec<Budget>,
    budgets_used: Vec<bool>,
}

impl Policies {
    /// The policies among `docs`.
    fn read(ctx: &mut Ctx, docs: &[Node]) -> Result<Self, ImportError> {
        let mut eg = Vec::new();
        let mut budgets = Vec::new();
        for (d, doc) in docs.iter().enumerate() {
            match (group(doc), kind(doc)) {
                (ENVOY_GATEWAY, "BackendTrafficPolicy") => {
                    eg.push(envoy_gateway::read(ctx, doc, ctx.doc(d))?);
                }
                (GATEWAY_X, "XBackendTrafficPolicy" | "BackendTrafficPolicy") => {
                    budgets.push(x_budget(ctx, doc, ctx.doc(d))?);
                }
                _ => {}
            }
        }
        Ok(Self {
            eg_used: vec![false; eg.len()],
            eg,
            budgets_used: vec![false; budgets.len()],
            budgets,
        })
    }

    /// The policies that reached no route, each a strategy of its own.
    fn unattached(self) -> impl Iterator<Item = Strategy> {
        let eg = self.eg.into_iter().zip(self.eg_used).filter(|(_, u)| !u);
        let eg = eg.map(|(p, _)| {
            let mut entries: Vec<Entry> = p.retry.into_iter().flatten().collect();
            entries.extend(p.deadline);
            entries.extend(p.budget);
            entries.extend(p.limits);
            Strategy {
                name: clean_name(&p.name, "-_."),
                entries,
                server: p.server,
            }
        });
        let budgets = self.budgets.into_iter().zip(self.budgets_used);
        eg.chain(budgets.filter(|(_, u)| !u).map(|(b, _)| Strategy {
            name: clean_name(&b.name, "-_."),
            entries: vec![b.entry],
            server: Vec::new(),
        }))
    }
}

/// The rules of one route (document `d`, of kind `k`) as strategies.
fn route(
    ctx: &mut Ctx,
    doc: &Node,
    d: usize,
    k: &str,
    pols: &mut Policies,
) -> Result<Vec<Strategy>, ImportError> {
    let spec = doc
        .get("spec")
        .ok_or_else(|| ctx.err(doc, &format!("[document {d}].spec"), "a route needs a spec"))?;
    let route = name_of(doc, "route");
    let gateways: Vec<String> = spec
        .get("parentRefs")
        .map(Node::items)
        .unwrap_or_default()
        .iter()
        .filter_map(|p| p.get("name").and_then(Node::text).map(str::to_owned))
        .collect();
    let policy = attached(&pols.eg, route, &gateways);
    if let Some(i) = policy.and_then(|p| pols.eg.iter().position(|q| std::ptr::eq(q, p))) {
        pols.eg_used[i] = true;
    }
    let mut out = Vec::new();
    for (i, r) in spec
        .get("rules")
        .map(Node::items)
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        let at = format!("[document {d}].spec.rules[{i}]");
        if k == "GRPCRoute" && (r.get("retry").is_some() || r.get("timeouts").is_some()) {
            ctx.not_modelled(
                r,
                &format!("{at} (retry, timeouts)"),
                "read as an HTTPRoute's: the API's GRPCRoute (v1) has neither field, so only implementations that add them honour them",
            );
        }
        let name = match r.get("name").and_then(Node::text) {
            Some(n) => format!("{route}-{n}"),
            None => format!("{route}-{i}"),
        };
        out.push(rule(
            ctx,
            r,
            &at,
            name,
            policy,
            &pols.budgets,
            &mut pols.budgets_used,
        )?);
    }
    Ok(out)
}

/// Every rule of every route as a strategy; policies that reach no route in
/// the file become strategies of their own, to lay over a scenario's
/// retries.
pub(super) fn read(ctx: &mut Ctx, docs: &[Node]) -> Result<Vec<Strategy>, ImportError> {
    let mut pols = Policies::read(ctx, docs)?;
    let mut out = Vec::new();
    for (d, doc) in docs.iter().enumerate() {
        let k = kind(doc);
        match (group(doc), k) {
            (GATEWAY, "HTTPRoute" | "GRPCRoute") => {
                out.extend(route(ctx, doc, ctx.doc(d), k, &mut pols)?);
            }
            (ENVOY_GATEWAY, "BackendTrafficPolicy")
            | (GATEWAY_X, "XBackendTrafficPolicy" | "BackendTrafficPolicy") => {}
            (g, _) => ctx.not_modelled(
                doc,
                &format!("[document {}].kind", ctx.doc(d)),
                &format!("{k} ({g}): only HTTPRoute, GRPCRoute and the retry policies are read"),
            ),
        }
    }
    out.extend(pols.unattached());
    if out.is_empty() {
        return Err(ctx.err(
            &docs[0],
            "kind",
            "no HTTPRoute or GRPCRoute rule and no retry policy: nothing to import as a strategy",
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::import::import_text;
    use crate::import::tests::{keys, value};

    const ROUTE: &str = "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  \
                         name: r\nspec:\n  parentRefs:\n  - name: gw\n  rules:\n  - backendRefs:\n    \
                         - name: svc\n";

    const POLICY: &str = "---\napiVersion: gateway.envoyproxy.io/v1alpha1\nkind: BackendTrafficPolicy\n\
                          metadata:\n  name: p\nspec:\n  targetRefs:\n  - kind: Gateway\n    name: gw\n  \
                          retry:\n    numRetries: 7\n";

    /// What the API leaves to the implementation is Envoy Gateway's: 2
    /// retries; no codes is connection errors only; no timeouts, no limits.
    #[test]
    fn a_bare_retry_stanza_takes_the_implementations_defaults() {
        let k = keys(&format!("{ROUTE}    retry: {{}}\n"));
        assert_eq!(value(&k, "max_retries"), "2");
        assert_eq!(
            value(&k, "retry_on"),
            "[\"reset\", \"refused\", \"timeout\"]"
        );
        assert_eq!(value(&k, "base"), "\"25ms\"");
        assert_eq!(value(&k, "timeout"), "\"none\"");
        assert_eq!(value(&k, "deadline"), "\"none\"");
        assert!(value(&k, "budget").contains("min_concurrency = 3"));
    }

    /// A rule with no retry and no policy for it does not retry.
    #[test]
    fn a_rule_without_retry_does_not_retry() {
        assert_eq!(value(&keys(ROUTE), "max_retries"), "0");
    }

    /// A policy on the route's Gateway reaches the route; the route's own
    /// retry takes precedence over it, and the override is listed.
    #[test]
    fn a_gateways_policy_reaches_its_routes_and_the_routes_retry_wins() {
        let k = keys(&format!("{ROUTE}{POLICY}"));
        assert_eq!(value(&k, "max_retries"), "7");
        let text = format!("{ROUTE}    retry:\n      attempts: 1\n{POLICY}");
        let imported = import_text("t", &text).unwrap();
        let entries = &imported.strategies[0].entries;
        let n = entries.iter().find(|e| e.key == "max_retries").unwrap();
        assert_eq!(n.value, "1");
        assert!(
            imported
                .not_modelled
                .iter()
                .any(|n| n.contains("takes precedence")),
            "{:?}",
            imported.not_modelled
        );
    }

    /// A policy that reaches no route in the file is a strategy of its own,
    /// named after it, and nothing it says is dropped.
    #[test]
    fn a_policy_alone_is_a_strategy_of_its_own() {
        let imported = import_text("t", POLICY.trim_start_matches("---\n")).unwrap();
        assert_eq!(imported.strategies.len(), 1);
        assert_eq!(imported.strategies[0].name, "p");
        let k = keys(POLICY.trim_start_matches("---\n"));
        assert_eq!(value(&k, "max_retries"), "7");
    }

    /// GEP-3388's defaults (20% over 10 s, 10 retries a second at least) as
    /// the Finagle-style budget; a budget alone lays over a scenario's
    /// retries; a percentage over 100 is refused at its line.
    #[test]
    fn the_retry_budgets_defaults_and_bounds() {
        let budget = "apiVersion: gateway.networking.x-k8s.io/v1alpha1\nkind: XBackendTrafficPolicy\n\
                      metadata:\n  name: b\nspec:\n  targetRefs:\n  - kind: Service\n    name: svc\n  \
                      retryConstraint: {}\n";
        let k = keys(budget);
        assert_eq!(
            value(&k, "budget"),
            "{ kind = \"finagle\", ttl = \"10s\", min_per_s = 10.0, percent = 0.2 }"
        );
        assert_eq!(k.len(), 1);
        let k = keys(&format!("{ROUTE}---\n{budget}"));
        assert!(value(&k, "budget").contains("finagle"));
        let bad = budget.replace("{}", "\n    budget:\n      percent: 150");
        let err = import_text("t", &bad).unwrap_err().0;
        assert!(
            err.starts_with("t:11: field `[document 1].spec.retryConstraint.budget.percent`"),
            "{err}"
        );
    }

    /// `kubectl get -o yaml` lists resources as the items of a `List`.
    #[test]
    fn a_kubectl_list_is_read_item_by_item() {
        let indented: String = ROUTE.lines().map(|l| format!("  {l}\n")).collect();
        let list = format!(
            "apiVersion: v1\nkind: List\nitems:\n- {}",
            indented.trim_start()
        );
        let imported = import_text("t", &list).unwrap();
        assert_eq!(imported.strategies[0].name, "r-0");
    }
}
