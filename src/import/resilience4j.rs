//! resilience4j as Spring Boot configures it (`application.yml`): each
//! `resilience4j.retry` instance is a strategy, with the circuit breaker
//! and the time limiter of the same name; `configs` (a `default` one, and
//! `baseConfig`) lay under the instances as Spring Boot lays them. Keys are
//! matched as Spring Boot's relaxed binding matches them (`maxAttempts`,
//! `max-attempts`, `max_attempts`), and dotted keys (`resilience4j.retry:`)
//! as nested ones. The aspects wrap a call as
//! `Retry(CircuitBreaker(RateLimiter(TimeLimiter(Bulkhead(call)))))`
//! unless the aspect orders are changed: each attempt passes the breaker
//! and has the time limiter's timeout.

use super::tree::Node;
use super::{
    Ctx, Entry, ImportError, Strategy, clean_name, entry, go_duration, toml_duration, toml_list,
};

/// A key as Spring Boot's relaxed binding compares it.
fn canon(k: &str) -> String {
    k.chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// The node at `path` below `node`, each step a key in any relaxed
/// spelling, and a dotted key standing for several steps.
fn lookup<'n>(node: &'n Node, path: &[&str]) -> Option<&'n Node> {
    if path.is_empty() {
        return Some(node);
    }
    for (k, v) in node.entries() {
        let parts: Vec<&str> = k.split('.').collect();
        if parts.len() <= path.len()
            && parts.iter().zip(path).all(|(a, b)| canon(a) == canon(b))
            && let Some(found) = lookup(v, &path[parts.len()..])
        {
            return Some(found);
        }
    }
    None
}

/// Whether a document holds resilience4j's configuration.
pub(super) fn is_resilience4j(doc: &Node) -> bool {
    ["retry", "circuitbreaker", "timelimiter"]
        .iter()
        .any(|m| lookup(doc, &["resilience4j", m, "instances"]).is_some())
}

/// The `backends` table of resilience4j before 1.0, if the document has
/// one and no `instances`: its keys are the old ones (`maxRetryAttempts`,
/// `ringBufferSizeInClosedState`), which resilience4j 2 does not read.
pub(super) fn old_backends(doc: &Node) -> Option<(&Node, String)> {
    if is_resilience4j(doc) {
        return None;
    }
    ["retry", "circuitbreaker", "timelimiter", "bulkhead"]
        .iter()
        .find_map(|m| {
            lookup(doc, &["resilience4j", m, "backends"])
                .map(|n| (n, format!("resilience4j.{m}.backends")))
        })
}

/// A Spring Boot duration: a number of milliseconds, a number with a unit
/// (`ns`, `us`, `ms`, `s`, `m`, `h`, `d`), or ISO-8601 (`PT10S`).
fn spring_duration(ctx: &Ctx, node: &Node, field: &str) -> Result<u64, ImportError> {
    let t = ctx.text(
        node,
        field,
        "a duration such as \"500ms\", \"10s\" or 500 (milliseconds)",
    )?;
    let t = t.trim();
    let bad = || {
        ctx.err(
            node,
            field,
            format!("expected a duration such as \"500ms\", \"10s\", \"PT10S\" or a number of milliseconds, got \"{t}\""),
        )
    };
    if let Ok(ms) = t.parse::<u64>() {
        return Ok(ms * 1_000_000);
    }
    if let Some(iso) = t.strip_prefix("PT").or_else(|| t.strip_prefix("pt")) {
        return go_duration(&iso.to_ascii_lowercase()).ok_or_else(bad);
    }
    if let Some(days) = t.strip_suffix('d') {
        return days
            .parse::<u64>()
            .ok()
            .map(|d| d * 86_400_000_000_000)
            .ok_or_else(bad);
    }
    go_duration(t).ok_or_else(bad)
}

/// One instance's settings, looked up through its config layers: the
/// instance, its `baseConfig` (or the `default` config), nothing else.
struct Layers<'n> {
    layers: Vec<(&'n Node, String)>,
}

impl<'n> Layers<'n> {
    /// The layers of instance `name` of module `module` (`retry`, ...).
    fn of(doc: &'n Node, module: &str, name: &str) -> Option<Self> {
        let root = lookup(doc, &["resilience4j", module])?;
        let instance = lookup(root, &["instances", name])?;
        let mut layers = vec![(instance, format!("resilience4j.{module}.instances.{name}"))];
        let base = lookup(instance, &["baseConfig"])
            .and_then(Node::text)
            .unwrap_or("default");
        if let Some(c) = lookup(root, &["configs", base]) {
            layers.push((c, format!("resilience4j.{module}.configs.{base}")));
        }
        Some(Layers { layers })
    }

    /// Lists the keys of every layer but `known` (and `baseConfig`) as not
    /// modelled, for `why`.
    fn unread(&self, ctx: &mut Ctx, known: &[&str], why: &str) {
        for (n, path) in &self.layers {
            for (k, v) in n.entries() {
                let read = known
                    .iter()
                    .chain(&["baseConfig"])
                    .any(|n| canon(n) == canon(k));
                if !read {
                    ctx.not_modelled(v, &format!("{path}.{k}"), why);
                }
            }
        }
    }

    /// The value of `key` in the nearest layer that has it, and its path.
    fn get(&self, key: &str) -> Option<(&'n Node, String)> {
        self.layers
            .iter()
            .find_map(|(n, path)| lookup(n, &[key]).map(|v| (v, format!("{path}.{key}"))))
    }
}

/// The outcomes a Java exception class stands for, as Spring's HTTP
/// clients and Java's networking throw them.
fn exception_outcomes(class: &str) -> Option<&'static [&'static str]> {
    let simple = class.rsplit(['.', '$']).next().unwrap_or(class);
    Some(match simple {
        "HttpServerErrorException" => &["500", "502", "503", "504"],
        "InternalServerError" => &["500"],
        "BadGateway" => &["502"],
        "ServiceUnavailable" => &["503"],
        "GatewayTimeout" => &["504"],
        "HttpClientErrorException" => &["400", "401", "409", "429"],
        "TooManyRequests" => &["429"],
        "BadRequest" => &["400"],
        "Unauthorized" => &["401"],
        "Conflict" => &["409"],
        "HttpStatusCodeException"
        | "RestClientResponseException"
        | "WebClientResponseException" => &["400", "401", "409", "429", "500", "502", "503", "504"],
        "TimeoutException" | "SocketTimeoutException" | "HttpTimeoutException" => &["timeout"],
        "ConnectException" | "NoRouteToHostException" | "UnknownHostException" => &["refused"],
        "IOException" | "ResourceAccessException" | "WebClientRequestException" => {
            &["timeout", "reset", "refused"]
        }
        "SocketException" => &["reset", "refused"],
        "Exception" | "Throwable" | "RuntimeException" => EVERY,
        _ => return None,
    })
}

/// Every failure the simulator has: what resilience4j retries by default
/// (every exception).
const EVERY: &[&str] = &[
    "timeout", "reset", "refused", "400", "401", "409", "429", "500", "502", "503", "504",
];

/// The outcomes a list of exception classes names (`node` a list).
fn classes(ctx: &mut Ctx, node: &Node, field: &str) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for (j, c) in node.items().iter().enumerate() {
        let Some(class) = c.text() else { continue };
        match exception_outcomes(class) {
            Some(list) => {
                for o in list {
                    if !out.contains(o) {
                        out.push(o);
                    }
                }
            }
            None => ctx.not_modelled(
                c,
                &format!("{field}[{j}]"),
                "the simulated failures are HTTP statuses, timeouts, resets and refusals; this exception stands for none of them",
            ),
        }
    }
    out
}

/// `enableExponentialBackoff` (with its multiplier and maximum) and
/// `enableRandomizedWait` (with its factor) over a first wait of `wait`.
fn growth(ctx: &mut Ctx, l: &Layers, wait: u64, out: &mut Vec<Entry>) -> Result<(), ImportError> {
    let flag = |ctx: &Ctx, key: &str| -> Result<Option<(bool, String)>, ImportError> {
        match l.get(key) {
            Some((v, f)) => match ctx.text(v, &f, "true or false")? {
                "true" => Ok(Some((true, ctx.from(v, &f)))),
                "false" => Ok(Some((false, ctx.from(v, &f)))),
                other => Err(ctx.err(v, &f, format!("expected true or false, got \"{other}\""))),
            },
            None => Ok(None),
        }
    };
    let exponential = flag(ctx, "enableExponentialBackoff")?;
    let randomized = flag(ctx, "enableRandomizedWait")?;
    if let Some((true, from)) = &exponential {
        out.push(entry("backoff", "\"exponential\"".into(), from.clone()));
        let (m, mf) = match l.get("exponentialBackoffMultiplier") {
            Some((v, f)) => (ctx.number(v, &f)?, ctx.from(v, &f)),
            None => (
                1.5,
                "exponentialBackoffMultiplier absent: resilience4j's default 1.5".into(),
            ),
        };
        if m < 1.0 {
            let (v, f) = l.get("exponentialBackoffMultiplier").expect("read above");
            return Err(ctx.err(v, &f, "a multiplier of at least 1"));
        }
        out.push(entry("multiplier", format!("{m:?}"), mf));
        match l.get("exponentialMaxWaitDuration") {
            Some((v, f)) => {
                let cap = spring_duration(ctx, v, &f)?;
                if cap < wait {
                    return Err(ctx.err(v, &f, "must be at least waitDuration"));
                }
                out.push(entry("cap", toml_duration(cap), ctx.from(v, &f)));
            }
            None => out.push(entry(
                "cap",
                "\"1h\"".into(),
                "exponentialMaxWaitDuration absent: resilience4j sets no limit; an hour stands for none".into(),
            )),
        }
    } else {
        out.push(entry(
            "backoff",
            "\"constant\"".into(),
            "enableExponentialBackoff absent or false: the same wait before every retry".into(),
        ));
    }
    if let Some((true, from)) = randomized {
        let (f, ff) = match l.get("randomizedWaitFactor") {
            Some((v, f)) => (ctx.number(v, &f)?, ctx.from(v, &f)),
            None => (
                0.5,
                "randomizedWaitFactor absent: resilience4j's default 0.5".into(),
            ),
        };
        if !(0.0..1.0).contains(&f) {
            let (v, fld) = l.get("randomizedWaitFactor").expect("read above");
            return Err(ctx.err(v, &fld, "a factor from 0 to below 1"));
        }
        out.push(entry(
            "jitter",
            format!("{{ low = {:?}, high = {:?} }}", 1.0 - f, 1.0 + f),
            format!("{from}; {ff} (each wait times U(1 - factor, 1 + factor))"),
        ));
    }
    Ok(())
}

/// `retryExceptions` less `ignoreExceptions`, as the failures retried.
fn retried(ctx: &mut Ctx, l: &Layers, out: &mut Vec<Entry>) {
    let mut on: Vec<&'static str> = match l.get("retryExceptions") {
        Some((v, f)) => {
            let list = classes(ctx, v, &f);
            out.push(entry("retry_on", String::new(), ctx.from(v, &f)));
            list
        }
        None => {
            out.push(entry(
                "retry_on",
                String::new(),
                "retryExceptions absent: resilience4j retries every exception".into(),
            ));
            EVERY.to_vec()
        }
    };
    if let Some((v, f)) = l.get("ignoreExceptions") {
        let ignored = classes(ctx, v, &f);
        on.retain(|o| !ignored.contains(o));
        if let Some(e) = out.iter_mut().find(|e| e.key == "retry_on") {
            e.from = format!("{}; {} (not retried)", e.from, ctx.from(v, &f));
        }
    }
    if let Some(e) = out.iter_mut().find(|e| e.key == "retry_on") {
        e.value = toml_list(&on);
    }
}

/// The retry instance's keys: `maxAttempts` (the first call included),
/// the wait and its growth and randomness, the exceptions retried.
fn retry(ctx: &mut Ctx, l: &Layers, out: &mut Vec<Entry>) -> Result<(), ImportError> {
    let (n, from) = match l.get("maxAttempts") {
        Some((v, f)) => (ctx.whole(v, &f, 1)?, ctx.from(v, &f)),
        None => (3, "maxAttempts absent: resilience4j's default 3".into()),
    };
    out.push(entry(
        "max_retries",
        (n - 1).to_string(),
        format!("{from} (attempts, the first call included)"),
    ));
    let wait = match l.get("waitDuration") {
        Some((v, f)) => {
            let ns = spring_duration(ctx, v, &f)?;
            out.push(entry("base", toml_duration(ns), ctx.from(v, &f)));
            ns
        }
        None => {
            out.push(entry(
                "base",
                toml_duration(500_000_000),
                "waitDuration absent: resilience4j's default 500ms".into(),
            ));
            500_000_000
        }
    };
    growth(ctx, l, wait, out)?;
    retried(ctx, l, out);
    l.unread(
        ctx,
        &[
            "maxAttempts",
            "waitDuration",
            "enableExponentialBackoff",
            "exponentialBackoffMultiplier",
            "exponentialMaxWaitDuration",
            "enableRandomizedWait",
            "randomizedWaitFactor",
            "retryExceptions",
            "ignoreExceptions",
        ],
        "the simulator's retry has attempts, a wait with growth and randomness, and the failures retried",
    );
    Ok(())
}

/// The circuit breaker instance as the simulator's breaker (its defaults
/// are resilience4j's).
fn breaker(ctx: &mut Ctx, l: &Layers) -> Result<Entry, ImportError> {
    let mut keys = Vec::new();
    let mut from = Vec::new();
    let mut whole = |ctx: &Ctx, field: &str, default: u64| -> Result<u64, ImportError> {
        match l.get(field) {
            Some((v, f)) => {
                from.push(ctx.from(v, &f));
                ctx.whole(v, &f, 1)
            }
            None => Ok(default),
        }
    };
    let window = whole(ctx, "slidingWindowSize", 100)?;
    let min_calls = whole(ctx, "minimumNumberOfCalls", 100)?;
    let probes = whole(ctx, "permittedNumberOfCallsInHalfOpenState", 10)?;
    let time_based = match l.get("slidingWindowType") {
        Some((v, f)) => match ctx.text(v, &f, "COUNT_BASED or TIME_BASED")? {
            "COUNT_BASED" => false,
            "TIME_BASED" => true,
            other => {
                return Err(ctx.err(
                    v,
                    &f,
                    format!("expected COUNT_BASED or TIME_BASED, got \"{other}\""),
                ));
            }
        },
        None => false,
    };
    if time_based {
        // The simulator's breaker counts calls: a window of seconds is
        // read as the fewest calls it decides on.
        let (v, f) = l.get("slidingWindowType").expect("read above");
        ctx.not_modelled(v, &f, "the simulator's breaker counts the last calls: a window in time is read as the last minimumNumberOfCalls calls");
        keys.push(format!("window = {min_calls}, min_calls = {min_calls}"));
    } else {
        // resilience4j lowers the minimum to the window's size.
        keys.push(format!(
            "window = {window}, min_calls = {}",
            min_calls.min(window)
        ));
    }
    keys.push(format!("probes = {probes}"));
    if let Some((v, f)) = l.get("failureRateThreshold") {
        let p = ctx.number(v, &f)?;
        if !(p > 0.0 && p <= 100.0) {
            return Err(ctx.err(v, &f, "a percentage above 0 and at most 100"));
        }
        keys.push(format!("failure_rate = {:?}", p / 100.0));
        from.push(ctx.from(v, &f));
    }
    if let Some((v, f)) = l.get("waitDurationInOpenState") {
        keys.push(format!(
            "open_for = {}",
            toml_duration(spring_duration(ctx, v, &f)?)
        ));
        from.push(ctx.from(v, &f));
    }
    l.unread(
        ctx,
        &[
            "slidingWindowType",
            "slidingWindowSize",
            "minimumNumberOfCalls",
            "permittedNumberOfCallsInHalfOpenState",
            "failureRateThreshold",
            "waitDurationInOpenState",
        ],
        "the simulator's breaker has a failure rate, a window, a minimum of calls, an open time and probes",
    );
    Ok(entry(
        "breaker",
        format!("{{ {} }}", keys.join(", ")),
        if from.is_empty() {
            "no settings: resilience4j's defaults".into()
        } else {
            from.join("; ")
        },
    ))
}

/// Each retry instance (and each circuit breaker or time limiter with no
/// retry of its name) as a strategy.
pub(super) fn read(ctx: &mut Ctx, doc: &Node) -> Result<Vec<Strategy>, ImportError> {
    let mut names: Vec<String> = Vec::new();
    for m in ["retry", "circuitbreaker", "timelimiter"] {
        if let Some(i) = lookup(doc, &["resilience4j", m, "instances"]) {
            for (k, _) in i.entries() {
                if !names.contains(k) {
                    names.push(k.clone());
                }
            }
        }
    }
    let mut out = Vec::new();
    for name in &names {
        let mut s = Strategy {
            name: clean_name(name, "-_."),
            ..Strategy::default()
        };
        match Layers::of(doc, "retry", name) {
            Some(l) => retry(ctx, &l, &mut s.entries)?,
            None => s.entries.push(entry(
                "max_retries",
                "0".into(),
                format!("no resilience4j.retry instance {name}: the call is not retried"),
            )),
        }
        if let Some(l) = Layers::of(doc, "circuitbreaker", name) {
            s.entries.push(breaker(ctx, &l)?);
        }
        if let Some(l) = Layers::of(doc, "timelimiter", name) {
            l.unread(
                ctx,
                &["timeoutDuration"],
                "a timed-out attempt's work runs on at the server in the simulator either way",
            );
        }
        match Layers::of(doc, "timelimiter", name).and_then(|l| l.get("timeoutDuration")) {
            Some((v, f)) => s.entries.push(entry(
                "timeout",
                toml_duration(spring_duration(ctx, v, &f)?),
                format!(
                    "{} (each attempt's: the time limiter is inside the retry)",
                    ctx.from(v, &f)
                ),
            )),
            None if Layers::of(doc, "timelimiter", name).is_some() => s.entries.push(entry(
                "timeout",
                "\"1s\"".into(),
                "timeoutDuration absent: resilience4j's default 1s".into(),
            )),
            None => s.entries.push(entry(
                "timeout",
                "\"none\"".into(),
                format!(
                    "no resilience4j.timelimiter instance {name}: an attempt waits for its answer"
                ),
            )),
        }
        s.entries.push(entry(
            "budget",
            "{ kind = \"none\" }".into(),
            "resilience4j's retry has no budget".into(),
        ));
        out.push(s);
    }
    for m in ["bulkhead", "thread-pool-bulkhead", "ratelimiter"] {
        if let Some(i) = lookup(doc, &["resilience4j", m]) {
            ctx.not_modelled(i, &format!("resilience4j.{m}"), "a client-side limit of calls in flight or per second: the simulator's clients have none");
        }
    }
    for key in [
        "retryAspectOrder",
        "circuitBreakerAspectOrder",
        "timeLimiterAspectOrder",
    ] {
        for m in ["retry", "circuitbreaker", "timelimiter"] {
            if let Some(v) = lookup(doc, &["resilience4j", m, key]) {
                ctx.not_modelled(v, &format!("resilience4j.{m}.{key}"), "the simulator keeps resilience4j's default order: the retry outermost, each attempt through the breaker and the time limiter");
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::import_text;
    use crate::import::tests::{keys, value};

    /// Spring Boot's durations: milliseconds, units, ISO-8601.
    #[test]
    fn spring_durations() {
        let files = ["t".to_owned()];
        let ctx = Ctx {
            files: &files,
            numbers: Vec::new(),
            not_modelled: Vec::new(),
        };
        let d = |t: &str| {
            spring_duration(
                &ctx,
                &Node {
                    line: 1,
                    file: 0,
                    value: crate::import::tree::Value::Scalar(t.into()),
                },
                "f",
            )
        };
        assert_eq!(d("500").unwrap(), 500_000_000);
        assert_eq!(d("10s").unwrap(), 10_000_000_000);
        assert_eq!(d("PT1M30S").unwrap(), 90_000_000_000);
        assert_eq!(d("1d").unwrap(), 86_400_000_000_000);
        assert!(d("soon").unwrap_err().0.contains("\"soon\""));
    }

    /// An instance that says nothing takes resilience4j's defaults: 3
    /// attempts, 500 ms between them, every exception retried.
    #[test]
    fn an_empty_instance_takes_resilience4js_defaults() {
        let k = keys("resilience4j:\n  retry:\n    instances:\n      a: {}\n");
        assert_eq!(value(&k, "max_retries"), "2");
        assert_eq!(value(&k, "base"), "\"500ms\"");
        assert_eq!(value(&k, "backoff"), "\"constant\"");
        assert!(value(&k, "retry_on").contains("\"400\""));
        assert_eq!(value(&k, "timeout"), "\"none\"");
    }

    /// Keys in any of Spring Boot's spellings, dotted or nested; the
    /// `default` config under every instance, a `baseConfig` instead of it;
    /// randomized wait as the jitter it is.
    #[test]
    fn relaxed_keys_and_config_layers() {
        let text = "resilience4j.retry:\n  configs:\n    default:\n      max-attempts: 5\n    \
                    slow:\n      wait_duration: 2s\n  instances:\n    a:\n      \
                    enable-randomized-wait: true\n    b:\n      baseConfig: slow\n";
        let imported = import_text("t", text).unwrap();
        let get = |s: usize, key: &str| {
            imported.strategies[s]
                .entries
                .iter()
                .find(|e| e.key == key)
                .map(|e| e.value.clone())
                .unwrap()
        };
        assert_eq!(get(0, "max_retries"), "4");
        assert_eq!(get(0, "jitter"), "{ low = 0.5, high = 1.5 }");
        assert_eq!(get(1, "max_retries"), "2");
        assert_eq!(get(1, "base"), "\"2s\"");
    }

    /// A TIME_BASED window is read as the last minimumNumberOfCalls calls
    /// and listed; a COUNT_BASED minimum is lowered to the window, as
    /// resilience4j lowers it; a bad threshold is refused at its line.
    #[test]
    fn breaker_windows_and_bounds() {
        let cb = |extra: &str| {
            format!(
                "resilience4j:\n  circuitbreaker:\n    instances:\n      a:\n        \
                 slidingWindowSize: 10\n        minimumNumberOfCalls: 20\n{extra}"
            )
        };
        let k = keys(&cb(""));
        assert!(value(&k, "breaker").contains("window = 10, min_calls = 10"));
        assert_eq!(value(&k, "max_retries"), "0");
        let k = keys(&cb("        slidingWindowType: TIME_BASED\n"));
        assert!(value(&k, "breaker").contains("window = 20, min_calls = 20"));
        let err = import_text("t", &cb("        failureRateThreshold: 0\n"))
            .unwrap_err()
            .0;
        assert!(err.starts_with("t:7: field"), "{err}");
    }
}
