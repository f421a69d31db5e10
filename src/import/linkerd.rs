//! Linkerd's retries, both ways Linkerd reads them: a `ServiceProfile`'s
//! routes (`isRetryable`, `timeout`) under its `retryBudget`, and the
//! `retry.linkerd.io/*` and `timeout.linkerd.io/*` annotations on an
//! `HTTPRoute`, a `GRPCRoute` or a `Service` (Linkerd 2.16 and later), with
//! Linkerd's precedence: a ServiceProfile for a Service makes the proxies
//! ignore that Service's annotations and its routes'; a route's retry
//! annotations replace all its parent Service's, and its timeout
//! annotations likewise.

use super::envoy::{condition_list, http_outcome};
use super::gateway::group;
use super::tree::Node;
use super::{Ctx, Entry, ImportError, Strategy, clean_name, entry, toml_duration, toml_list};

/// Whether the documents are Linkerd's: a ServiceProfile, or a resource
/// carrying Linkerd's retry or timeout annotations.
pub(super) fn is_linkerd(docs: &[Node]) -> bool {
    docs.iter().any(|d| {
        group(d).ends_with("linkerd.io")
            || annotations(d).iter().any(|(k, _)| {
                k.starts_with("retry.linkerd.io/") || k.starts_with("timeout.linkerd.io/")
            })
    })
}

/// `metadata.annotations` of a document.
fn annotations(doc: &Node) -> &[(String, Node)] {
    doc.get("metadata")
        .and_then(|m| m.get("annotations"))
        .map(Node::entries)
        .unwrap_or_default()
}

/// A strategy name from a route's (`GET /books/{id}` is `GET-books-id`):
/// what a name may not hold made `-`, one at a time, none at the ends.
fn tidy(name: &str) -> String {
    let clean = clean_name(name, "-_.");
    let mut out = String::with_capacity(clean.len());
    for c in clean.chars() {
        if !(c == '-' && (out.is_empty() || out.ends_with('-'))) {
            out.push(c);
        }
    }
    out.trim_end_matches('-').to_owned()
}

/// `metadata.name`.
fn name_of(doc: &Node) -> Option<&str> {
    doc.get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Node::text)
}

/// The retries and the back-off Linkerd has: none documented, so a retry
/// goes at once.
fn no_back_off(out: &mut Vec<Entry>) {
    out.push(entry(
        "backoff",
        "\"none\"".into(),
        "Linkerd documents no back-off between retries: a retry goes at once".into(),
    ));
    out.push(entry(
        "use_retry_after",
        "false".into(),
        "Linkerd does not read Retry-After".into(),
    ));
}

/// `retry.linkerd.io/http`: statuses, ranges, `gateway-error` (502 to 504)
/// and `5xx`, as responses only (a reset or a refusal is not a status).
fn http_statuses(ctx: &mut Ctx, v: &Node, field: &str) -> Result<Vec<&'static str>, ImportError> {
    let text = ctx.text(
        v,
        field,
        "a comma-separated list such as \"5xx\" or \"500-504\"",
    )?;
    let mut out: Vec<&'static str> = Vec::new();
    for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (lo, hi) = match item {
            "5xx" => (500, 599),
            "gateway-error" => (502, 504),
            range => {
                let (a, b) = range.split_once('-').unwrap_or((range, range));
                match (a.trim().parse::<u64>(), b.trim().parse::<u64>()) {
                    (Ok(a), Ok(b)) if (100..=599).contains(&a) && a <= b && b <= 599 => (a, b),
                    _ => {
                        return Err(ctx.err(
                            v,
                            field,
                            format!("\"{item}\" is not a status (\"504\"), a range (\"500-504\"), gateway-error or 5xx"),
                        ));
                    }
                }
            }
        };
        let mut any = false;
        for code in lo..=hi {
            if let Some(o) = http_outcome(code) {
                any = true;
                if !out.contains(&o) {
                    out.push(o);
                }
            }
        }
        if !any {
            ctx.not_modelled(
                v,
                &format!("{field} ({item})"),
                "the simulated servers never answer these statuses",
            );
        }
    }
    Ok(out)
}

/// The annotations of one resource that Linkerd reads.
#[derive(Default)]
struct Notes<'a> {
    retry: Vec<(&'a str, &'a Node)>,
    timeout: Vec<(&'a str, &'a Node)>,
}

fn notes(doc: &Node) -> Notes<'_> {
    let mut n = Notes::default();
    for (k, v) in annotations(doc) {
        if let Some(r) = k.strip_prefix("retry.linkerd.io/") {
            n.retry.push((r, v));
        } else if let Some(t) = k.strip_prefix("timeout.linkerd.io/") {
            n.timeout.push((t, v));
        }
    }
    n
}

/// The retry annotations as the strategy's retries (into `out`), and the
/// retry timeout, if one is given.
type PerTry = Option<(u64, String)>;

fn retry_notes(
    ctx: &mut Ctx,
    retry: &[(&str, &Node)],
    at: &str,
    out: &mut Vec<Entry>,
) -> Result<PerTry, ImportError> {
    let f = |k: &str| format!("{at}.metadata.annotations.\"{k}\"");
    let mut on: Vec<&'static str> = Vec::new();
    let mut on_from = Vec::new();
    let mut limit = None;
    let mut per_try = None;
    for &(k, v) in retry {
        let field = f(&format!("retry.linkerd.io/{k}"));
        match k {
            "http" => {
                on.extend(http_statuses(ctx, v, &field)?);
                on_from.push(ctx.from(v, &field));
            }
            "grpc" => {
                on_from.push(ctx.from(v, &field));
                let text = ctx.text(v, &field, "a comma-separated list of gRPC codes")?;
                let list = condition_list(ctx, v, &field, text.split(','), &[])?;
                on.extend(list);
            }
            "limit" => limit = Some((ctx.whole(v, &field, 0)?, ctx.from(v, &field))),
            "timeout" => per_try = Some((ctx.duration(v, &field)?, ctx.from(v, &field))),
            other => ctx.not_modelled(
                v,
                &field,
                &format!("retry.linkerd.io/{other} is not one of Linkerd's retry annotations"),
            ),
        }
    }
    let retrying = !on.is_empty() || per_try.is_some();
    out.push(match (limit, retrying) {
        (Some((n, from)), true) => entry("max_retries", n.to_string(), from),
        (None, true) => entry(
            "max_retries",
            "1".into(),
            "retry.linkerd.io/limit absent: Linkerd's default 1".into(),
        ),
        (_, false) => entry(
            "max_retries",
            "0".into(),
            "no retry.linkerd.io/http, grpc or timeout: Linkerd does not retry".into(),
        ),
    });
    if let Some((_, from)) = &per_try {
        on.push("timeout");
        on_from.push(format!("{from} (its expiry is retried)"));
    }
    on.dedup();
    out.push(entry(
        "retry_on",
        toml_list(&on),
        if on_from.is_empty() {
            "no retry.linkerd.io/http or grpc: nothing is retried".into()
        } else {
            on_from.join("; ")
        },
    ));
    no_back_off(out);
    Ok(per_try)
}

/// The timeout annotations (and the rule's request timeout, which an
/// annotation overrides) as the attempt's and the request's limits.
fn timeout_notes(
    ctx: &mut Ctx,
    per_try: PerTry,
    timeout: &[(&str, &Node)],
    rule_request: Option<(&Node, String)>,
    at: &str,
    out: &mut Vec<Entry>,
) -> Result<(), ImportError> {
    let f = |k: &str| format!("{at}.metadata.annotations.\"{k}\"");
    let mut response = None;
    let mut request = None;
    for &(k, v) in timeout {
        let field = f(&format!("timeout.linkerd.io/{k}"));
        match k {
            "request" => request = Some((ctx.duration(v, &field)?, ctx.from(v, &field))),
            "response" => response = Some((ctx.duration(v, &field)?, ctx.from(v, &field), v)),
            _ => ctx.not_modelled(
                v,
                &field,
                "only the request and response timeouts are modelled",
            ),
        }
    }
    match (per_try, response) {
        (Some((ns, from)), r) => {
            if let Some((_, _, v)) = r {
                ctx.not_modelled(
                    v,
                    &f("timeout.linkerd.io/response"),
                    "an attempt has one limit in the simulator: the retry timeout's",
                );
            }
            out.push(entry(
                "timeout",
                toml_duration(ns),
                format!("{from} (each attempt's; its expiry is retried)"),
            ));
        }
        (None, Some((ns, from, _))) => out.push(entry(
            "timeout",
            toml_duration(ns),
            format!("{from} (each response's; its expiry is not retried)"),
        )),
        (None, None) => out.push(entry(
            "timeout",
            "\"none\"".into(),
            "no retry or response timeout: an attempt waits until the request's timeout".into(),
        )),
    }
    let request = match (request, rule_request) {
        (Some(r), _) => Some(r),
        (None, Some((node, field))) => Some((ctx.duration(node, &field)?, ctx.from(node, &field))),
        (None, None) => None,
    };
    out.push(match request {
        Some((ns, from)) => entry(
            "deadline",
            if ns == 0 {
                "\"none\"".into()
            } else {
                toml_duration(ns)
            },
            format!("{from} (the whole request, retries included; not retried)"),
        ),
        None => entry(
            "deadline",
            "\"none\"".into(),
            "no request timeout: Linkerd sets none".into(),
        ),
    });
    Ok(())
}

/// A strategy from retry and timeout annotations (those of the route, or
/// its Service's where the route has none), and the route rule's own
/// `timeouts.request`, which an annotation overrides.
fn from_annotations(
    ctx: &mut Ctx,
    name: &str,
    retry: &[(&str, &Node)],
    timeout: &[(&str, &Node)],
    rule_request: Option<(&Node, String)>,
    at: &str,
) -> Result<Strategy, ImportError> {
    let mut s = Strategy {
        name: tidy(name),
        ..Strategy::default()
    };
    let per_try = retry_notes(ctx, retry, at, &mut s.entries)?;
    timeout_notes(ctx, per_try, timeout, rule_request, at, &mut s.entries)?;
    s.entries.push(entry(
        "budget",
        "{ kind = \"none\" }".into(),
        "retries set by annotations carry no budget (Linkerd)".into(),
    ));
    Ok(s)
}

/// Route `i` of a ServiceProfile (`at` its spec, `short` the Service's
/// name) as a strategy under the profile's `budget`.
fn profile_route(
    ctx: &mut Ctx,
    r: &Node,
    at: &str,
    i: usize,
    short: &str,
    budget: &Entry,
) -> Result<Strategy, ImportError> {
    let f = |k: &str| format!("{at}.routes[{i}].{k}");
    let name = r
        .get("name")
        .and_then(Node::text)
        .map_or_else(|| i.to_string(), str::to_owned);
    let mut s = Strategy {
        name: tidy(&format!("{short}-{name}")),
        ..Strategy::default()
    };
    let retryable = match r.get("isRetryable") {
        Some(v) => match ctx.text(v, &f("isRetryable"), "true or false")? {
            "true" => true,
            "false" => false,
            other => {
                return Err(ctx.err(
                    v,
                    &f("isRetryable"),
                    format!("expected true or false, got \"{other}\""),
                ));
            }
        },
        None => false,
    };
    if retryable {
        // Linkerd counts no retries per request: the budget and the
        // route's timeout are the only limits.
        s.entries.push(entry(
            "max_retries",
            "1000".into(),
            format!(
                "{} (Linkerd counts no retries per request: only the budget and the timeout limit them; 1000 stands for no limit)",
                ctx.from(r.get("isRetryable").unwrap_or(r), &f("isRetryable"))
            ),
        ));
    } else {
        s.entries.push(entry(
            "max_retries",
            "0".into(),
            "isRetryable absent or false: Linkerd does not retry the route".into(),
        ));
    }
    s.entries.push(entry(
        "retry_on",
        toml_list(&["500", "502", "503", "504"]),
        "a failure is a 5xx response unless responseClasses say otherwise (Linkerd's default)"
            .into(),
    ));
    no_back_off(&mut s.entries);
    s.entries.push(entry(
        "timeout",
        "\"none\"".into(),
        "a ServiceProfile has no per-attempt timeout".into(),
    ));
    s.entries.push(match r.get("timeout") {
        Some(t) => {
            let ns = ctx.duration(t, &f("timeout"))?;
            entry(
                "deadline",
                toml_duration(ns),
                format!(
                    "{} (the whole request, retries included)",
                    ctx.from(t, &f("timeout"))
                ),
            )
        }
        None => entry(
            "deadline",
            toml_duration(10_000_000_000),
            "timeout absent: Linkerd's default 10s, retries included".into(),
        ),
    });
    s.entries.push(budget.clone());
    for (k, v) in r.entries() {
        match k.as_str() {
            "name" | "condition" | "isRetryable" | "timeout" => {}
            "responseClasses" => {
                ctx.not_modelled(v, &f(k), "a failure is a 5xx response in the simulator")
            }
            _ => ctx.not_modelled(v, &f(k), "not a retry setting"),
        }
    }
    Ok(s)
}

/// A ServiceProfile's routes, each a strategy under the profile's budget.
fn profile(ctx: &mut Ctx, doc: &Node, d: usize) -> Result<Vec<Strategy>, ImportError> {
    let at = format!("[document {d}].spec");
    let spec = doc
        .get("spec")
        .ok_or_else(|| ctx.err(doc, &at, "a ServiceProfile needs a spec"))?;
    let budget = budget(ctx, spec.get("retryBudget"), &at)?;
    let short = name_of(doc).unwrap_or("service-profile");
    let short = short.split('.').next().unwrap_or(short);
    let mut out = Vec::new();
    for (i, r) in spec
        .get("routes")
        .map(Node::items)
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        out.push(profile_route(ctx, r, &at, i, short, &budget)?);
    }
    if out.is_empty() {
        return Err(ctx.err(
            spec,
            &format!("{at}.routes"),
            "a ServiceProfile retries only on its routes, and this one has none",
        ));
    }
    Ok(out)
}

/// `retryBudget` as the Finagle-style budget it is (Linkerd's defaults:
/// 20%, at least 10 a second, over 10 s).
fn budget(ctx: &mut Ctx, b: Option<&Node>, at: &str) -> Result<Entry, ImportError> {
    let f = |k: &str| format!("{at}.retryBudget.{k}");
    let Some(b) = b else {
        return Ok(entry(
            "budget",
            "{ kind = \"finagle\", ttl = \"10s\", min_per_s = 10.0, percent = 0.2 }".into(),
            "retryBudget absent: Linkerd's default, retryRatio 0.2, minRetriesPerSecond 10, ttl 10s".into(),
        ));
    };
    let mut from = Vec::new();
    let ratio = match b.get("retryRatio") {
        Some(v) => {
            from.push(ctx.from(v, &f("retryRatio")));
            ctx.number(v, &f("retryRatio"))?
        }
        None => {
            return Err(ctx.err(
                b,
                &f("retryRatio"),
                "required by Linkerd: retries per original request, e.g. 0.2",
            ));
        }
    };
    if !(0.0..=1000.0).contains(&ratio) {
        return Err(ctx.err(
            b.get("retryRatio").unwrap_or(b),
            &f("retryRatio"),
            "a ratio from 0 to 1000",
        ));
    }
    let min = match b.get("minRetriesPerSecond") {
        Some(v) => {
            from.push(ctx.from(v, &f("minRetriesPerSecond")));
            ctx.whole(v, &f("minRetriesPerSecond"), 0)?
        }
        None => {
            return Err(ctx.err(
                b,
                &f("minRetriesPerSecond"),
                "required by Linkerd: retries a second always allowed, e.g. 10",
            ));
        }
    };
    let ttl = match b.get("ttl") {
        Some(v) => {
            from.push(ctx.from(v, &f("ttl")));
            ctx.duration(v, &f("ttl"))?
        }
        None => {
            return Err(ctx.err(
                b,
                &f("ttl"),
                "required by Linkerd: how long a request counts, e.g. \"10s\"",
            ));
        }
    };
    if !(1_000_000_000..=60_000_000_000).contains(&ttl) {
        return Err(ctx.err(
            b.get("ttl").unwrap_or(b),
            &f("ttl"),
            "from 1s to 60s, as Linkerd's budget takes it",
        ));
    }
    ctx.not_modelled(b, &format!("{at}.retryBudget"), super::PER_PROXY);
    Ok(entry(
        "budget",
        format!(
            "{{ kind = \"finagle\", ttl = {}, min_per_s = {:?}, percent = {ratio:?} }}",
            toml_duration(ttl),
            min as f64
        ),
        from.join("; "),
    ))
}

/// The Service a route is for: its first `parentRefs` of kind Service.
fn parent_service(spec: &Node) -> Option<&str> {
    spec.get("parentRefs")
        .map(Node::items)
        .unwrap_or_default()
        .iter()
        .find(|p| p.get("kind").and_then(Node::text) == Some("Service"))
        .and_then(|p| p.get("name").and_then(Node::text))
}

/// The Services of the files and the ServiceProfiles' names.
struct Mesh<'a> {
    profiled: Vec<&'a str>,
    services: Vec<(&'a str, &'a Node)>,
}

impl<'a> Mesh<'a> {
    fn new(docs: &'a [Node]) -> Self {
        let kind = |d: &Node, k: &str| d.get("kind").and_then(Node::text) == Some(k);
        Mesh {
            profiled: docs
                .iter()
                .filter(|d| kind(d, "ServiceProfile"))
                .filter_map(name_of)
                .collect(),
            services: docs
                .iter()
                .filter(|d| kind(d, "Service") && group(d).is_empty())
                .filter_map(|d| name_of(d).map(|n| (n, d)))
                .collect(),
        }
    }

    /// Whether a ServiceProfile in the files is for Service `svc` (its
    /// name is the Service's fully qualified name).
    fn has_profile(&self, svc: &str) -> bool {
        self.profiled
            .iter()
            .any(|p| *p == svc || p.starts_with(&format!("{svc}.")))
    }

    /// Lists `doc`'s annotations as ignored, if a ServiceProfile is for
    /// `svc`; says whether it was.
    fn silenced(&self, ctx: &mut Ctx, doc: &Node, at: &str, svc: &str) -> bool {
        let silenced = self.has_profile(svc);
        if silenced {
            ctx.not_modelled(
                doc,
                &format!("{at}.metadata.annotations"),
                &format!("a ServiceProfile for {svc} is in the file: Linkerd's proxies use it and ignore the annotations"),
            );
        }
        silenced
    }

    /// The rules of an annotated route (document `at`) as strategies.
    fn route(
        &self,
        ctx: &mut Ctx,
        doc: &'a Node,
        at: &str,
        routed: &mut Vec<&'a str>,
    ) -> Result<Vec<Strategy>, ImportError> {
        let spec = doc
            .get("spec")
            .ok_or_else(|| ctx.err(doc, &format!("{at}.spec"), "a route needs a spec"))?;
        let route = name_of(doc).unwrap_or("route");
        let svc = parent_service(spec);
        if let Some(s) = svc {
            routed.push(s);
            if self.silenced(ctx, doc, at, s) {
                return Ok(Vec::new());
            }
        }
        let own = notes(doc);
        let parent = svc
            .and_then(|s| self.services.iter().find(|(n, _)| *n == s))
            .map(|(_, d)| notes(d))
            .unwrap_or_default();
        let retry = if own.retry.is_empty() {
            &parent.retry
        } else {
            &own.retry
        };
        let timeout = if own.timeout.is_empty() {
            &parent.timeout
        } else {
            &own.timeout
        };
        let mut out = Vec::new();
        for (i, r) in spec
            .get("rules")
            .map(Node::items)
            .unwrap_or_default()
            .iter()
            .enumerate()
        {
            let fr = format!("{at}.spec.rules[{i}]");
            if let Some(x) = r.get("retry") {
                ctx.not_modelled(
                    x,
                    &format!("{fr}.retry"),
                    "Linkerd reads retries from annotations, not from the rule's retry",
                );
            }
            let req = r
                .get("timeouts")
                .and_then(|t| t.get("request"))
                .map(|n| (n, format!("{fr}.timeouts.request")));
            let name = r
                .get("name")
                .and_then(Node::text)
                .map_or_else(|| format!("{route}-{i}"), |n| format!("{route}-{n}"));
            out.push(from_annotations(ctx, &name, retry, timeout, req, at)?);
        }
        Ok(out)
    }

    /// The annotated Services no route in the files is for, as strategies.
    fn lone_services(
        &self,
        ctx: &mut Ctx,
        docs: &[Node],
        routed: &[&str],
    ) -> Result<Vec<Strategy>, ImportError> {
        let mut out = Vec::new();
        for (name, doc) in &self.services {
            let n = notes(doc);
            if routed.contains(name) || (n.retry.is_empty() && n.timeout.is_empty()) {
                continue;
            }
            let d = ctx.doc(docs.iter().position(|x| std::ptr::eq(x, *doc)).unwrap_or(0));
            let at = format!("[document {d}]");
            if !self.silenced(ctx, doc, &at, name) {
                out.push(from_annotations(
                    ctx, name, &n.retry, &n.timeout, None, &at,
                )?);
            }
        }
        Ok(out)
    }
}

/// Every ServiceProfile route, annotated route rule and annotated Service
/// as a strategy, with Linkerd's precedence.
pub(super) fn read(ctx: &mut Ctx, docs: &[Node]) -> Result<Vec<Strategy>, ImportError> {
    let mesh = Mesh::new(docs);
    let mut routed: Vec<&str> = Vec::new();
    let mut out = Vec::new();
    for (d, doc) in docs.iter().enumerate() {
        let at = format!("[document {}]", ctx.doc(d));
        match doc.get("kind").and_then(Node::text).unwrap_or("") {
            "ServiceProfile" => out.extend(profile(ctx, doc, ctx.doc(d))?),
            "HTTPRoute" | "GRPCRoute" => out.extend(mesh.route(ctx, doc, &at, &mut routed)?),
            "Service" if group(doc).is_empty() => {}
            other => ctx.not_modelled(
                doc,
                &format!("{at}.kind"),
                &format!("{other}: only ServiceProfile, HTTPRoute, GRPCRoute and Service are read"),
            ),
        }
    }
    out.extend(mesh.lone_services(ctx, docs, &routed)?);
    if out.is_empty() {
        return Err(ctx.err(
            &docs[0],
            "kind",
            "no ServiceProfile route and no annotated route or Service: nothing to import as a strategy",
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::import::import_text;
    use crate::import::tests::{keys, value};

    const SERVICE: &str = "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  annotations:\n    \
                           retry.linkerd.io/http: gateway-error\n    retry.linkerd.io/limit: \"4\"\n";
    const ROUTE: &str = "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  \
                         name: r\nspec:\n  parentRefs:\n  - name: s\n    kind: Service\n  rules:\n  \
                         - timeouts:\n      request: 3s\n";

    /// A Service's annotations alone: the statuses listed, the limit given,
    /// no back-off, no budget.
    #[test]
    fn a_services_annotations_are_its_strategy() {
        let k = keys(SERVICE);
        assert_eq!(value(&k, "max_retries"), "4");
        assert_eq!(value(&k, "retry_on"), "[\"502\", \"503\", \"504\"]");
        assert_eq!(value(&k, "backoff"), "\"none\"");
        assert_eq!(value(&k, "budget"), "{ kind = \"none\" }");
    }

    /// A route without annotations of its own takes its Service's, and its
    /// rule's request timeout; a retry annotation on the route replaces all
    /// the Service's (the limit falls back to Linkerd's default 1).
    #[test]
    fn a_route_takes_its_services_annotations_unless_it_has_its_own() {
        let k = keys(&format!("{SERVICE}{ROUTE}"));
        assert_eq!(value(&k, "max_retries"), "4");
        assert_eq!(value(&k, "deadline"), "\"3s\"");
        let own = ROUTE.replace(
            "  name: r\n",
            "  name: r\n  annotations:\n    retry.linkerd.io/http: \"500\"\n",
        );
        let k = keys(&format!("{SERVICE}{own}"));
        assert_eq!(value(&k, "max_retries"), "1");
        assert_eq!(value(&k, "retry_on"), "[\"500\"]");
    }

    /// A ServiceProfile for the Service makes the proxies ignore the
    /// annotations: only the profile's routes are strategies, and the
    /// ignored annotations are listed.
    #[test]
    fn a_service_profile_silences_the_annotations() {
        let profile = "---\napiVersion: linkerd.io/v1alpha2\nkind: ServiceProfile\nmetadata:\n  \
                       name: s.default.svc.cluster.local\nspec:\n  routes:\n  - name: all\n    \
                       isRetryable: true\n";
        let imported = import_text("t", &format!("{SERVICE}{ROUTE}{profile}")).unwrap();
        let names: Vec<&str> = imported
            .strategies
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(names, ["s-all"]);
        assert!(
            imported
                .not_modelled
                .iter()
                .any(|n| n.contains("ignore the annotations")),
            "{:?}",
            imported.not_modelled
        );
        let k = keys(&format!("{SERVICE}{ROUTE}{profile}"));
        assert_eq!(value(&k, "deadline"), "\"10s\"");
        assert!(value(&k, "budget").contains("min_per_s = 10.0"));
    }

    /// Values Linkerd would refuse are refused at their line.
    #[test]
    fn bad_values_are_refused_at_their_line() {
        let bad = SERVICE.replace("gateway-error", "5xy");
        let err = import_text("t", &bad).unwrap_err().0;
        assert!(err.starts_with("t:6: field"), "{err}");
        assert!(err.contains("\"5xy\""), "{err}");
        let budget = "apiVersion: linkerd.io/v1alpha2\nkind: ServiceProfile\nmetadata:\n  name: s\n\
                      spec:\n  routes:\n  - name: a\n  retryBudget:\n    retryRatio: 0.2\n    \
                      minRetriesPerSecond: 10\n    ttl: 90s\n";
        let err = import_text("t", budget).unwrap_err().0;
        assert!(
            err.starts_with("t:11: field `[document 1].spec.retryBudget.ttl`"),
            "{err}"
        );
    }
}
