//! A gRPC service config (gRFC A6 for `retryPolicy`, `hedgingPolicy` and
//! `retryThrottling`; gRFC A2 for the config's shape): one strategy per
//! `methodConfig`.

use super::tree::{Node, Value};
use super::{Ctx, ImportError, Strategy, clean_name, entry, toml_duration, toml_list};

/// gRPC's status codes by number (the order of `grpc/status.h`).
const CODES: [&str; 17] = [
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
];

/// The service config's field names (gRFC A2, A6, and the fields of
/// `grpc.service_config.ServiceConfig` a config commonly carries), as the
/// proto's JSON mapping spells them.
const FIELDS: [&str; 23] = [
    "methodConfig",
    "name",
    "service",
    "method",
    "waitForReady",
    "timeout",
    "maxRequestMessageBytes",
    "maxResponseMessageBytes",
    "retryPolicy",
    "hedgingPolicy",
    "maxAttempts",
    "initialBackoff",
    "maxBackoff",
    "backoffMultiplier",
    "retryableStatusCodes",
    "perAttemptRecvTimeout",
    "hedgingDelay",
    "nonFatalStatusCodes",
    "retryThrottling",
    "maxTokens",
    "tokenRatio",
    "loadBalancingConfig",
    "healthCheckConfig",
];

/// `key` as [`FIELDS`] spells it, if it names one of them the way gRPC's
/// implementations accept: grpc-go reads the config with Go's
/// `encoding/json`, which matches field names in any case (`MaxAttempts`,
/// `maxattempts`); grpc-java and gRPC C++ read it through the proto's JSON
/// mapping, which also accepts the proto's own field name
/// (`max_attempts`).
fn field(key: &str) -> Option<&'static str> {
    let folded: String = key.chars().filter(|&c| c != '_').collect();
    FIELDS
        .iter()
        .copied()
        .find(|f| f.eq_ignore_ascii_case(&folded))
}

/// `node` with every map key that names a service config field spelled as
/// [`FIELDS`] spells it (see [`field`]), so the reader below looks for one
/// spelling. Other keys are kept as written.
pub(super) fn canonical(node: &Node) -> Node {
    let value = match &node.value {
        Value::Scalar(s) => Value::Scalar(s.clone()),
        Value::List(items) => Value::List(items.iter().map(canonical).collect()),
        Value::Map(entries) => Value::Map(
            entries
                .iter()
                .map(|(k, v)| {
                    (
                        field(k).map_or_else(|| k.clone(), str::to_owned),
                        canonical(v),
                    )
                })
                .collect(),
        ),
    };
    Node {
        line: node.line,
        file: node.file,
        value,
    }
}

/// The simulator's outcomes a gRPC status code stands for. UNAVAILABLE is
/// what gRPC makes of a reset or refused connection and of HTTP 429, 502,
/// 503 and 504 (gRPC's "HTTP to gRPC status code mapping"); the others are
/// a server's own answers. None: the simulated servers never answer it.
pub(super) fn outcomes(code: &str) -> Option<&'static [&'static str]> {
    Some(match code {
        "UNAVAILABLE" => &["reset", "refused", "429", "502", "503", "504"],
        "DEADLINE_EXCEEDED" => &["timeout"],
        "RESOURCE_EXHAUSTED" => &["429"],
        "INTERNAL" | "UNKNOWN" => &["500"],
        "ABORTED" => &["409"],
        "INVALID_ARGUMENT" => &["400"],
        "UNAUTHENTICATED" => &["401"],
        _ => return None,
    })
}

/// A list of status codes (names in any case, or numbers) as the
/// simulator's outcomes, noting the codes it never produces.
fn codes(ctx: &mut Ctx, list: &Node, field: &str) -> Result<Vec<&'static str>, ImportError> {
    if list.items().is_empty() {
        return Err(ctx.err(
            list,
            field,
            "expected a list of status codes, e.g. [\"UNAVAILABLE\"]",
        ));
    }
    let mut out: Vec<&'static str> = Vec::new();
    for (i, c) in list.items().iter().enumerate() {
        let f = format!("{field}[{i}]");
        let t = ctx
            .text(c, &f, "a status code")?
            .trim()
            .to_ascii_uppercase();
        let name = match t.parse::<usize>() {
            Ok(n) => CODES.get(n).copied(),
            Err(_) => CODES.iter().copied().find(|&n| n == t),
        };
        let Some(name) = name else {
            return Err(ctx.err(
                c,
                &f,
                format!(
                    "\"{t}\" is not a gRPC status code; they are {}",
                    CODES[1..].join(", ")
                ),
            ));
        };
        match outcomes(name) {
            Some(o) => {
                for x in o {
                    if !out.contains(x) {
                        out.push(x);
                    }
                }
            }
            None => ctx.not_modelled(c, &f, "the simulated servers never answer this code"),
        }
    }
    Ok(out)
}

/// The strategy's name: the methods its `name` list selects.
fn name(mc: &Node, i: usize) -> String {
    let names: Vec<String> = mc
        .get("name")
        .map(|list| {
            list.items()
                .iter()
                .map(|n| {
                    let service = n.get("service").and_then(Node::text).unwrap_or("");
                    let method = n.get("method").and_then(Node::text).unwrap_or("");
                    match (service, method) {
                        ("", _) => "all".to_owned(),
                        (s, "") => s.to_owned(),
                        (s, m) => format!("{s}.{m}"),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    let joined = if names.is_empty() {
        format!("method-config-{i}")
    } else {
        names.join("+")
    };
    // Strategy names appear in file names: keep letters, digits, - _ . +.
    clean_name(&joined, "-_.+")
}

/// Every `methodConfig` of the service config as a strategy.
#[expect(
    clippy::too_many_lines,
    reason = "reads a service config's documented fields in order"
)]
pub(super) fn read(ctx: &mut Ctx, root: &Node) -> Result<Vec<Strategy>, ImportError> {
    let budget = match root.get("retryThrottling") {
        None => entry(
            "budget",
            "{ kind = \"none\" }".into(),
            "no retryThrottling: gRPC does not throttle retries".into(),
        ),
        Some(t) => {
            let field = "retryThrottling.maxTokens";
            let mt = t
                .get("maxTokens")
                .ok_or_else(|| ctx.err(t, field, "retryThrottling needs maxTokens (1 to 1000)"))?;
            let max_tokens = ctx.whole(mt, field, 1)?;
            if max_tokens > 1000 {
                return Err(ctx.err(mt, field, "gRFC A6 allows 1 to 1000 tokens"));
            }
            let field = "retryThrottling.tokenRatio";
            let tr = t
                .get("tokenRatio")
                .ok_or_else(|| ctx.err(t, field, "retryThrottling needs tokenRatio, e.g. 0.1"))?;
            let ratio = ctx.number(tr, field)?;
            if ratio <= 0.0 {
                return Err(ctx.err(tr, field, "tokenRatio must be above 0"));
            }
            entry(
                "budget",
                format!(
                    "{{ kind = \"token-bucket\", max_tokens = {max_tokens}, token_ratio = {ratio} }}"
                ),
                format!(
                    "{} and {}",
                    ctx.from(mt, "retryThrottling.maxTokens"),
                    ctx.from(tr, "retryThrottling.tokenRatio")
                ),
            )
        }
    };
    for (k, v) in root.entries() {
        if !matches!(k.as_str(), "methodConfig" | "retryThrottling") {
            ctx.not_modelled(
                v,
                k,
                "not a retry setting: the simulator has no counterpart",
            );
        }
    }
    let mut out = Vec::new();
    let Some(list) = root.get("methodConfig") else {
        // Throttling alone: gRPC does not retry without a retry policy.
        out.push(Strategy {
            name: "grpc".into(),
            entries: vec![
                entry(
                    "max_retries",
                    "0".into(),
                    "no methodConfig: gRPC retries only with a retryPolicy".into(),
                ),
                budget,
            ],
            server: Vec::new(),
        });
        return Ok(out);
    };
    for (i, mc) in list.items().iter().enumerate() {
        let at = |f: &str| format!("methodConfig[{i}].{f}");
        let mut s = Strategy {
            name: name(mc, i),
            ..Strategy::default()
        };
        let timeout = match mc.get("timeout") {
            Some(t) => Some((
                ctx.duration(t, &at("timeout"))?,
                ctx.from(t, &at("timeout")),
            )),
            None => None,
        };
        for (k, v) in mc.entries() {
            if !matches!(
                k.as_str(),
                "name" | "timeout" | "retryPolicy" | "hedgingPolicy"
            ) {
                ctx.not_modelled(
                    v,
                    &at(k),
                    "not a retry setting: the simulator has no counterpart",
                );
            }
        }
        match (mc.get("retryPolicy"), mc.get("hedgingPolicy")) {
            (Some(_), Some(h)) => {
                return Err(ctx.err(
                    h,
                    &at("hedgingPolicy"),
                    "a method has a retryPolicy or a hedgingPolicy, not both (gRFC A6)",
                ));
            }
            (Some(rp), None) => retry_policy(ctx, rp, &at("retryPolicy"), &mut s)?,
            (None, Some(hp)) => hedging_policy(ctx, hp, &at("hedgingPolicy"), &mut s)?,
            (None, None) => s.entries.push(entry(
                "max_retries",
                "0".into(),
                format!("{}: no retryPolicy, so gRPC does not retry", at("")),
            )),
        }
        let hedged = mc.get("hedgingPolicy").is_some();
        match timeout {
            // With hedging the scenario's `timeout` is the whole request's.
            Some((ns, from)) if hedged => s.entries.push(entry("timeout", toml_duration(ns), from)),
            Some((ns, from)) => {
                s.entries.push(entry(
                    "deadline",
                    toml_duration(ns),
                    format!("{from} (the whole call, retries included)"),
                ));
            }
            None => s.entries.push(entry(
                if hedged { "timeout" } else { "deadline" },
                "\"none\"".into(),
                "no timeout: gRPC sets no deadline unless the caller does".into(),
            )),
        }
        s.entries.push(budget.clone());
        out.push(s);
    }
    Ok(out)
}

fn required<'n>(
    ctx: &Ctx,
    n: &'n Node,
    key: &str,
    field: &str,
    what: &str,
) -> Result<&'n Node, ImportError> {
    n.get(key).ok_or_else(|| {
        ctx.err(
            n,
            &format!("{field}.{key}"),
            format!("required by gRFC A6: {what}"),
        )
    })
}

/// A policy's `maxAttempts` (2 or more; gRPC lowers values above 5 to 5),
/// with where it came from.
fn max_attempts(
    ctx: &Ctx,
    policy: &Node,
    field: &str,
    what: &str,
) -> Result<(u64, String), ImportError> {
    let ma = required(ctx, policy, "maxAttempts", field, what)?;
    let f = format!("{field}.maxAttempts");
    let n = ctx.whole(ma, &f, 2)?;
    let mut from = ctx.from(ma, &f);
    if n > 5 {
        from.push_str(" (gRPC lowers values above 5 to 5)");
    }
    Ok((n.min(5), from))
}

#[expect(
    clippy::too_many_lines,
    reason = "reads a retry policy's documented fields in order"
)]
fn retry_policy(
    ctx: &mut Ctx,
    rp: &Node,
    field: &str,
    s: &mut Strategy,
) -> Result<(), ImportError> {
    let f = |k: &str| format!("{field}.{k}");
    let (attempts, from) = max_attempts(
        ctx,
        rp,
        field,
        "the attempts, the first included (2 or more)",
    )?;
    s.entries.push(entry(
        "max_retries",
        (attempts - 1).to_string(),
        format!("{from}: the attempts, the first included"),
    ));
    let ib = required(
        ctx,
        rp,
        "initialBackoff",
        field,
        "the first delay, e.g. \"0.1s\"",
    )?;
    let mb = required(
        ctx,
        rp,
        "maxBackoff",
        field,
        "the largest delay, e.g. \"1s\"",
    )?;
    let bm = required(
        ctx,
        rp,
        "backoffMultiplier",
        field,
        "the growth factor, e.g. 2",
    )?;
    let (base, cap) = (
        ctx.duration(ib, &f("initialBackoff"))?,
        ctx.duration(mb, &f("maxBackoff"))?,
    );
    if base == 0 {
        return Err(ctx.err(ib, &f("initialBackoff"), "must be above 0 (gRFC A6)"));
    }
    if cap == 0 {
        return Err(ctx.err(mb, &f("maxBackoff"), "must be above 0 (gRFC A6)"));
    }
    let mult = ctx.number(bm, &f("backoffMultiplier"))?;
    if mult <= 0.0 {
        return Err(ctx.err(bm, &f("backoffMultiplier"), "must be above 0 (gRFC A6)"));
    }
    s.entries.push(entry(
        "backoff",
        "\"exponential\"".into(),
        "gRFC A6: min(initialBackoff x backoffMultiplier^(n-1), maxBackoff)".into(),
    ));
    s.entries.push(entry(
        "base",
        toml_duration(base),
        ctx.from(ib, &f("initialBackoff")),
    ));
    s.entries.push(entry(
        "cap",
        toml_duration(cap.max(base)),
        ctx.from(mb, &f("maxBackoff")),
    ));
    s.entries.push(entry(
        "multiplier",
        format!("{mult}"),
        ctx.from(bm, &f("backoffMultiplier")),
    ));
    s.entries.push(entry(
        "jitter",
        "{ low = 0.8, high = 1.2 }".into(),
        "gRPC's jitter, not a field: each delay times U(0.8, 1.2) (gRFC A6 as amended; grpcio 1.85 measured)".into(),
    ));
    let rc = required(
        ctx,
        rp,
        "retryableStatusCodes",
        field,
        "the status codes to retry, e.g. [\"UNAVAILABLE\"]",
    )?;
    let on = codes(ctx, rc, &f("retryableStatusCodes"))?;
    s.entries.push(entry(
        "retry_on",
        toml_list(&on),
        format!(
            "{} {} (gRPC codes as the simulator's outcomes)",
            ctx.at(rc),
            f("retryableStatusCodes")
        ),
    ));
    s.entries.push(entry(
        "use_retry_after",
        "true".into(),
        "gRPC's server pushback (grpc-retry-pushback-ms), not a field: a server's Retry-After replaces the delay".into(),
    ));
    match rp.get("perAttemptRecvTimeout") {
        Some(t) => {
            let ns = ctx.duration(t, &f("perAttemptRecvTimeout"))?;
            s.entries.push(entry(
                "timeout",
                toml_duration(ns),
                ctx.from(t, &f("perAttemptRecvTimeout")),
            ));
        }
        None => s.entries.push(entry(
            "timeout",
            "\"none\"".into(),
            "no perAttemptRecvTimeout: an attempt waits until the call's deadline".into(),
        )),
    }
    for (k, v) in rp.entries() {
        if !matches!(
            k.as_str(),
            "maxAttempts"
                | "initialBackoff"
                | "maxBackoff"
                | "backoffMultiplier"
                | "retryableStatusCodes"
                | "perAttemptRecvTimeout"
        ) {
            return Err(ctx.err(v, &f(k), "not a field of gRFC A6's retryPolicy (maxAttempts, initialBackoff, maxBackoff, backoffMultiplier, retryableStatusCodes, perAttemptRecvTimeout)"));
        }
    }
    Ok(())
}

fn hedging_policy(
    ctx: &mut Ctx,
    hp: &Node,
    field: &str,
    s: &mut Strategy,
) -> Result<(), ImportError> {
    let f = |k: &str| format!("{field}.{k}");
    let (copies, from) =
        max_attempts(ctx, hp, field, "the copies, the first included (2 or more)")?;
    let (delay, delay_from) = match hp.get("hedgingDelay") {
        Some(d) => (
            ctx.duration(d, &f("hedgingDelay"))?,
            ctx.from(d, &f("hedgingDelay")),
        ),
        None => (0, "no hedgingDelay: gRFC A6's default 0s".into()),
    };
    if delay == 0 {
        return Err(ctx.err(
            hp.get("hedgingDelay").unwrap_or(hp),
            &f("hedgingDelay"),
            "a delay of 0 sends every copy at once; the simulator needs a delay above 0",
        ));
    }
    s.entries.push(entry(
        "max_retries",
        "0".into(),
        "hedging: a method retries or hedges".into(),
    ));
    s.entries.push(entry(
        "hedging",
        format!(
            "{{ max_attempts = {copies}, delay = {}, cancel = true }}",
            toml_duration(delay)
        ),
        format!("{from}; {delay_from}; cancel: gRPC cancels the losing copies"),
    ));
    let on = match hp.get("nonFatalStatusCodes") {
        Some(list) => codes(ctx, list, &f("nonFatalStatusCodes"))?,
        None => Vec::new(),
    };
    s.entries.push(entry(
        "retry_on",
        toml_list(&on),
        match hp.get("nonFatalStatusCodes") {
            Some(list) => format!(
                "{} {}: a copy failing so sends the next at once",
                ctx.at(list),
                f("nonFatalStatusCodes")
            ),
            None => "no nonFatalStatusCodes: any failure ends the call".into(),
        },
    ));
    for (k, v) in hp.entries() {
        if !matches!(
            k.as_str(),
            "maxAttempts" | "hedgingDelay" | "nonFatalStatusCodes"
        ) {
            return Err(ctx.err(v, &f(k), "not a field of gRFC A6's hedgingPolicy (maxAttempts, hedgingDelay, nonFatalStatusCodes)"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::import::tests::{keys, value};

    /// gRFC A6: maxAttempts counts the first attempt and is lowered to 5;
    /// the backoff's fields map one to one; the method's timeout is the
    /// whole call's; retryThrottling is a token bucket.
    #[test]
    fn a_retry_policy_maps_field_by_field() {
        let k = keys(
            r#"{"methodConfig":[{"name":[{"service":"a.B"}],"timeout":"2s",
            "retryPolicy":{"maxAttempts":7,"initialBackoff":"0.1s","maxBackoff":"1s",
            "backoffMultiplier":2,"retryableStatusCodes":["UNAVAILABLE"]}}],
            "retryThrottling":{"maxTokens":10,"tokenRatio":0.1}}"#,
        );
        assert_eq!(value(&k, "max_retries"), "4");
        assert_eq!(value(&k, "base"), "\"100ms\"");
        assert_eq!(value(&k, "cap"), "\"1s\"");
        assert_eq!(value(&k, "multiplier"), "2");
        assert_eq!(value(&k, "deadline"), "\"2s\"");
        assert_eq!(value(&k, "timeout"), "\"none\"");
        assert!(value(&k, "retry_on").contains("\"503\""));
        assert!(value(&k, "budget").contains("token-bucket"));
        assert!(value(&k, "budget").contains("max_tokens = 10"));
    }

    /// grpc-go's own retry example (`examples/features/retry/client`) spells
    /// the policy's fields in Go's case, which grpc-go's `encoding/json`
    /// accepts; grpc-java and C++ accept the proto's snake_case names. All
    /// three read the same policy.
    #[test]
    fn field_names_are_read_as_grpc_reads_them() {
        let go = r#"{
            "methodConfig": [{
              "name": [{"service": "grpc.examples.echo.Echo"}],
              "waitForReady": true,
              "retryPolicy": {
                  "MaxAttempts": 4,
                  "InitialBackoff": ".01s",
                  "MaxBackoff": ".01s",
                  "BackoffMultiplier": 1.0,
                  "RetryableStatusCodes": [ "UNAVAILABLE" ]
              }
            }]}"#;
        let snake = r#"{"method_config": [{"name": [{"service": "grpc.examples.echo.Echo"}],
            "wait_for_ready": true, "retry_policy": {"max_attempts": 4,
            "initial_backoff": ".01s", "max_backoff": ".01s", "backoff_multiplier": 1.0,
            "retryable_status_codes": ["UNAVAILABLE"]}}]}"#;
        let camel = go
            .replace("\"MaxAttempts", "\"maxAttempts")
            .replace("\"InitialBackoff", "\"initialBackoff")
            .replace("\"MaxBackoff", "\"maxBackoff")
            .replace("\"BackoffMultiplier", "\"backoffMultiplier")
            .replace("\"RetryableStatusCodes", "\"retryableStatusCodes");
        let k = keys(go);
        assert_eq!(value(&k, "max_retries"), "3");
        assert_eq!(value(&k, "base"), "\"10ms\"");
        assert_eq!(value(&k, "cap"), "\"10ms\"");
        assert_eq!(keys(snake), k);
        assert_eq!(keys(&camel), k);
        // A key that names no field of the config stays as written, and
        // is listed among what is not modelled.
        let imported =
            crate::import::import_text("t", r#"{"methodConfig": [], "Colour": 1}"#).unwrap();
        assert!(
            imported.not_modelled.iter().any(|n| n.contains("Colour")),
            "{:?}",
            imported.not_modelled
        );
    }

    /// What gRPC rejects is refused at its field: fewer than 2 attempts, a
    /// status code that is not one.
    #[test]
    fn invalid_policies_are_refused_at_the_field() {
        let policy = |attempts: u32, code: &str| {
            format!(
                r#"{{"methodConfig":[{{"name":[{{}}],"retryPolicy":{{"maxAttempts":{attempts},
                "initialBackoff":"0.1s","maxBackoff":"1s","backoffMultiplier":2,
                "retryableStatusCodes":["{code}"]}}}}]}}"#
            )
        };
        let e = crate::import::import_text("t", &policy(1, "UNAVAILABLE")).unwrap_err();
        assert!(
            e.0.contains("retryPolicy.maxAttempts") && e.0.contains("at least 2"),
            "{e}"
        );
        let e = crate::import::import_text("t", &policy(3, "NOPE")).unwrap_err();
        assert!(
            e.0.contains("retryableStatusCodes[0]") && e.0.contains("UNAVAILABLE"),
            "{e}"
        );
    }
}
