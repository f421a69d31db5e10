//! .NET's HTTP resilience handlers (Microsoft.Extensions.Http.Resilience,
//! built on Polly 8) as their options bind from `appsettings.json`: each
//! section holding `HttpStandardResilienceOptions` (`Retry`,
//! `CircuitBreaker`, `AttemptTimeout`, `TotalRequestTimeout`) or
//! `HttpStandardHedgingResilienceOptions` (`Hedging`, `Endpoint`) is a
//! strategy, every absent value the standard handler's default. Keys are
//! matched without regard to case, as .NET's configuration binder matches
//! them; durations are `TimeSpan`s (`"00:00:02"`).

use super::tree::Node;
use super::{Ctx, Entry, ImportError, Strategy, entry, toml_duration};

/// The value at `key` of a map, the key matched without regard to case,
/// and the key as written.
fn get<'n>(node: &'n Node, key: &str) -> Option<(&'n Node, &'n str)> {
    node.entries()
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(key))
        .map(|(k, v)| (v, k.as_str()))
}

/// The option sections the standard handlers have.
const SECTIONS: [&str; 7] = [
    "Retry",
    "CircuitBreaker",
    "AttemptTimeout",
    "TotalRequestTimeout",
    "RateLimiter",
    "Hedging",
    "Endpoint",
];

/// The fields that say a section is Polly's and not another library's.
const FIELDS: [&str; 9] = [
    "MaxRetryAttempts",
    "BackoffType",
    "UseJitter",
    "Delay",
    "FailureRatio",
    "BreakDuration",
    "Timeout",
    "MaxHedgedAttempts",
    "SamplingDuration",
];

/// Whether `node` is a resilience options section.
fn is_options(node: &Node) -> bool {
    node.entries().iter().any(|(k, v)| {
        SECTIONS.iter().any(|s| s.eq_ignore_ascii_case(k))
            && v.entries()
                .iter()
                .any(|(f, _)| FIELDS.iter().any(|x| x.eq_ignore_ascii_case(f)))
    })
}

/// Every options section of the file and its configuration path
/// (`Section:Sub`, as .NET writes one).
fn sections<'n>(node: &'n Node, path: &str, out: &mut Vec<(&'n Node, String)>) {
    if is_options(node) {
        out.push((node, path.to_owned()));
        return;
    }
    for (k, v) in node.entries() {
        let p = if path.is_empty() {
            k.clone()
        } else {
            format!("{path}:{k}")
        };
        sections(v, &p, out);
    }
}

/// Whether a document holds .NET resilience options.
pub(super) fn is_dotnet(doc: &Node) -> bool {
    let mut found = Vec::new();
    sections(doc, "", &mut found);
    !found.is_empty()
}

/// A `TimeSpan` as .NET parses one: `[d.]hh:mm[:ss[.fffffff]]`, or a
/// whole number of days.
fn timespan(ctx: &Ctx, node: &Node, field: &str) -> Result<u64, ImportError> {
    let t = ctx
        .text(node, field, "a TimeSpan such as \"00:00:02\"")?
        .trim();
    let bad = || {
        ctx.err(
            node,
            field,
            format!("expected a TimeSpan such as \"00:00:02\" (hh:mm:ss) or \"1.00:00:00\" (a day), got \"{t}\""),
        )
    };
    let (days, rest) = match t.split_once('.') {
        Some((d, r)) if r.contains(':') && !d.contains(':') => {
            (d.parse::<u64>().map_err(|_| bad())?, r)
        }
        _ if !t.contains(':') => {
            return t
                .parse::<u64>()
                .map(|d| d * 86_400_000_000_000)
                .map_err(|_| bad());
        }
        _ => (0, t),
    };
    let parts: Vec<&str> = rest.split(':').collect();
    if parts.len() < 2 || parts.len() > 3 {
        return Err(bad());
    }
    let h: u64 = parts[0].parse().map_err(|_| bad())?;
    let m: u64 = parts[1].parse().map_err(|_| bad())?;
    let s: f64 = match parts.get(2) {
        Some(s) => s.parse().map_err(|_| bad())?,
        None => 0.0,
    };
    if h > 23 || m > 59 || !(0.0..60.0).contains(&s) {
        return Err(bad());
    }
    let secs = days * 86_400 + h * 3600 + m * 60;
    Ok(secs * 1_000_000_000 + (s * 1e9).round() as u64)
}

/// A duration field of `section` (a path for messages), or `default`.
fn span(
    ctx: &Ctx,
    section: Option<(&Node, String)>,
    key: &str,
    default: u64,
    what: &str,
) -> Result<(u64, String), ImportError> {
    match section
        .as_ref()
        .and_then(|(s, p)| get(s, key).map(|(v, k)| (v, format!("{p}:{k}"))))
    {
        Some((v, f)) => Ok((timespan(ctx, v, &f)?, ctx.from(v, &f))),
        None => Ok((default, format!("{key} absent: {what}"))),
    }
}

/// A sub-section of `opts` and its path.
fn sub<'n>(opts: &'n Node, path: &str, name: &str) -> Option<(&'n Node, String)> {
    get(opts, name).map(|(v, k)| (v, format!("{path}:{k}")))
}

/// A boolean field, `default` when absent.
fn flag(ctx: &Ctx, found: Option<(&Node, String)>, default: bool) -> Result<bool, ImportError> {
    match found {
        Some((v, f)) => match ctx
            .text(v, &f, "true or false")?
            .to_ascii_lowercase()
            .as_str()
        {
            "true" => Ok(true),
            "false" => Ok(false),
            other => Err(ctx.err(v, &f, format!("expected true or false, got \"{other}\""))),
        },
        None => Ok(default),
    }
}

/// The retry's delays: `BackoffType`, `UseJitter`, `Delay`, `MaxDelay`
/// (`r` the Retry section and its path).
fn delays(
    ctx: &mut Ctx,
    r: Option<&(&Node, String)>,
    out: &mut Vec<Entry>,
) -> Result<(), ImportError> {
    let field = |key: &str| r.and_then(|(n, p)| get(n, key).map(|(v, k)| (v, format!("{p}:{k}"))));
    let kind = match field("BackoffType") {
        Some((v, f)) => {
            let t = ctx.text(v, &f, "Constant, Linear or Exponential")?;
            match t.to_ascii_lowercase().as_str() {
                "constant" => "constant",
                "linear" => "linear",
                "exponential" => "exponential",
                _ => {
                    return Err(ctx.err(
                        v,
                        &f,
                        format!("expected Constant, Linear or Exponential, got \"{t}\""),
                    ));
                }
            }
        }
        None => "exponential",
    };
    let jitter = flag(ctx, field("UseJitter"), true)?;
    let (base, bf) = span(
        ctx,
        r.cloned(),
        "Delay",
        2_000_000_000,
        "the standard handler's 2 s",
    )?;
    if let (0, Some((v, f))) = (base, field("Delay")) {
        return Err(ctx.err(v, &f, "must be above 0"));
    }
    let (backoff, why) = match (kind, jitter) {
        ("exponential", true) => (
            "decorrelated-jitter-v2",
            "Exponential with jitter: Polly's decorrelated jitter (V2)",
        ),
        ("exponential", false) => ("exponential", "Exponential: the delay doubles"),
        ("linear", _) => ("linear", "Linear: the delay times the retry's number"),
        _ => ("constant", "Constant: the same delay each time"),
    };
    out.push(entry(
        "backoff",
        format!("\"{backoff}\""),
        format!("BackoffType {why}"),
    ));
    if backoff == "exponential" {
        out.push(entry(
            "multiplier",
            "2.0".into(),
            "Polly's exponential factor, 2".into(),
        ));
    }
    out.push(entry("base", toml_duration(base), bf));
    match field("MaxDelay") {
        Some((v, f)) if v.text() != Some("null") => {
            let cap = timespan(ctx, v, &f)?;
            if cap < base {
                return Err(ctx.err(v, &f, "must be at least Delay"));
            }
            out.push(entry("cap", toml_duration(cap), ctx.from(v, &f)));
        }
        _ => out.push(entry(
            "cap",
            "\"1h\"".into(),
            "MaxDelay absent: Polly sets no limit; an hour stands for none".into(),
        )),
    }
    if jitter && kind != "exponential" {
        out.push(entry(
            "jitter",
            "{ low = 0.75, high = 1.25 }".into(),
            "UseJitter on a constant or linear delay: Polly adds up to 25% either way".into(),
        ));
    }
    Ok(())
}

/// The `Retry` options (the standard handler's defaults: 3 retries,
/// exponential from 2 s with jitter, Retry-After honoured).
fn retry(
    ctx: &mut Ctx,
    r: Option<(&Node, String)>,
    out: &mut Vec<Entry>,
) -> Result<(), ImportError> {
    let field = |key: &str| {
        r.as_ref()
            .and_then(|(n, p)| get(n, key).map(|(v, k)| (v, format!("{p}:{k}"))))
    };
    let (n, from) = match field("MaxRetryAttempts") {
        Some((v, f)) => (ctx.whole(v, &f, 1)?, ctx.from(v, &f)),
        None => (
            3,
            "MaxRetryAttempts absent: the standard handler's 3".into(),
        ),
    };
    out.push(entry("max_retries", n.to_string(), from));
    delays(ctx, r.as_ref(), out)?;
    out.push(entry(
        "retry_on",
        super::toml_list(&["timeout", "reset", "refused", "429", "500", "502", "503", "504"]),
        "the HTTP retry's ShouldHandle, which configuration cannot set: a failed connection, an attempt's timeout, 408, 429 and every 5xx".into(),
    ));
    let honour = flag(ctx, field("ShouldRetryAfterHeader"), true)?;
    let hf = field("ShouldRetryAfterHeader").map_or_else(
        || "ShouldRetryAfterHeader absent: true, the delay is the Retry-After".into(),
        |(v, f)| ctx.from(v, &f),
    );
    out.push(entry("use_retry_after", honour.to_string(), hf));
    match field("RetryBudget") {
        Some((b, p)) => out.push(budget(ctx, b, &p)?),
        None => out.push(entry(
            "budget",
            "{ kind = \"none\" }".into(),
            "no RetryBudget: the retry is not limited by one".into(),
        )),
    }
    if let Some((n, p)) = &r {
        for (k, v) in n.entries() {
            let read = [
                "MaxRetryAttempts",
                "BackoffType",
                "UseJitter",
                "Delay",
                "MaxDelay",
                "ShouldRetryAfterHeader",
                "RetryBudget",
            ];
            if !read.iter().any(|x| x.eq_ignore_ascii_case(k)) {
                ctx.not_modelled(
                    v,
                    &format!("{p}:{k}"),
                    "the simulator's retry has no counterpart",
                );
            }
        }
    }
    Ok(())
}

/// The experimental retry budget (`HttpRetryBudgetOptions`,
/// EXTEXP0001, Microsoft.Extensions.Http.Resilience 11): retries at most
/// `RetryRatio` of the requests of the last `SamplingDuration`.
fn budget(ctx: &mut Ctx, b: &Node, p: &str) -> Result<Entry, ImportError> {
    let (ratio, rf) = match get(b, "RetryRatio") {
        Some((v, k)) => {
            let f = format!("{p}:{k}");
            let r = ctx.number(v, &f)?;
            if !(0.0..=1.0).contains(&r) {
                return Err(ctx.err(v, &f, "a ratio from 0 to 1"));
            }
            (r, ctx.from(v, &f))
        }
        None => (0.1, "RetryRatio absent: the default 0.1".into()),
    };
    let (window, wf) = span(
        ctx,
        Some((b, p.to_owned())),
        "SamplingDuration",
        10_000_000_000,
        "the default 10 s",
    )?;
    ctx.not_modelled(
        b,
        p,
        "the experimental retry budget (EXTEXP0001, Microsoft.Extensions.Http.Resilience 11): below MinimumThroughput requests in the window (default 10) and for one retry a window it lets retries through, which the simulator's ratio budget does not",
    );
    Ok(entry(
        "budget",
        format!(
            "{{ kind = \"ratio\", ratio = {ratio:?}, window = {} }}",
            toml_duration(window)
        ),
        format!("{rf}; {wf}"),
    ))
}

/// The `CircuitBreaker` options: a failure ratio over a time window with a
/// minimum of calls (read as that many calls), the break, one trial call.
fn breaker(ctx: &mut Ctx, c: Option<(&Node, String)>) -> Result<Entry, ImportError> {
    let field = |key: &str| {
        c.as_ref()
            .and_then(|(n, p)| get(n, key).map(|(v, k)| (v, format!("{p}:{k}"))))
    };
    let mut from = Vec::new();
    let ratio = match field("FailureRatio") {
        Some((v, f)) => {
            let r = ctx.number(v, &f)?;
            if !(r > 0.0 && r <= 1.0) {
                return Err(ctx.err(v, &f, "a ratio above 0 and at most 1"));
            }
            from.push(ctx.from(v, &f));
            r
        }
        None => {
            from.push("FailureRatio absent: the standard handler's 0.1".into());
            0.1
        }
    };
    let min = match field("MinimumThroughput") {
        Some((v, f)) => {
            from.push(ctx.from(v, &f));
            ctx.whole(v, &f, 2)?
        }
        None => {
            from.push("MinimumThroughput absent: the standard handler's 100".into());
            100
        }
    };
    let (open, of) = span(
        ctx,
        c.clone(),
        "BreakDuration",
        5_000_000_000,
        "the standard handler's 5 s",
    )?;
    from.push(of);
    if let Some((v, f)) = field("SamplingDuration") {
        timespan(ctx, v, &f)?;
        ctx.not_modelled(
            v,
            &f,
            "the simulator's breaker counts calls, so the window in time is read as the last MinimumThroughput calls",
        );
    }
    Ok(entry(
        "breaker",
        format!(
            "{{ failure_rate = {ratio:?}, window = {min}, min_calls = {min}, open_for = {}, probes = 1 }}",
            toml_duration(open)
        ),
        format!(
            "{} (one trial call when half-open, as Polly sends)",
            from.join("; ")
        ),
    ))
}

/// A hedging section (`HttpStandardHedgingResilienceOptions`): copies,
/// their delay, and the whole request's limit `total` (from `tf`).
fn hedging(
    ctx: &mut Ctx,
    opts: &Node,
    path: &str,
    (total, tf): (u64, String),
    out: &mut Vec<Entry>,
) -> Result<(), ImportError> {
    let h = sub(opts, path, "Hedging");
    let field = |key: &str| {
        h.as_ref()
            .and_then(|(n, p)| get(n, key).map(|(v, k)| (v, format!("{p}:{k}"))))
    };
    let (n, nf) = match field("MaxHedgedAttempts") {
        Some((v, f)) => (ctx.whole(v, &f, 1)?, ctx.from(v, &f)),
        None => (
            1,
            "MaxHedgedAttempts absent: the standard hedging handler's 1".into(),
        ),
    };
    if n + 1 > 5 {
        let (v, f) = field("MaxHedgedAttempts").expect("above 1 only when given");
        return Err(ctx.err(
            v,
            &f,
            "the simulator hedges up to 5 copies in all: at most 4 hedged attempts",
        ));
    }
    let (delay, df) = span(
        ctx,
        h.clone(),
        "Delay",
        2_000_000_000,
        "the standard hedging handler's 2 s",
    )?;
    out.push(entry(
        "max_retries",
        "0".into(),
        "a hedged client sends copies, it does not retry".into(),
    ));
    out.push(entry(
        "hedging",
        format!(
            "{{ max_attempts = {}, delay = {} }}",
            n + 1,
            toml_duration(delay)
        ),
        format!("{nf} (hedged attempts after the first); {df}"),
    ));
    out.push(entry(
        "retry_on",
        super::toml_list(&[
            "timeout", "reset", "refused", "429", "500", "502", "503", "504",
        ]),
        "the HTTP hedging's ShouldHandle: a failed connection, a timeout, 408, 429 and every 5xx"
            .into(),
    ));
    out.push(entry(
        "timeout",
        toml_duration(total),
        format!("{tf} (the whole request's limit, from its first copy)"),
    ));
    if let Some((e, p)) = sub(opts, path, "Endpoint") {
        ctx.not_modelled(e, &p, "each endpoint's own breaker, rate limiter and timeout: the simulator's breaker is shared");
    }
    Ok(())
}

/// One options section as a strategy.
fn options(ctx: &mut Ctx, opts: &Node, path: &str) -> Result<Strategy, ImportError> {
    let mut s = Strategy {
        name: super::clean_name(if path.is_empty() { "resilience" } else { path }, "-_."),
        ..Strategy::default()
    };
    let hedged = get(opts, "Hedging").is_some() || get(opts, "Endpoint").is_some();
    let (total, tf) = span(
        ctx,
        sub(opts, path, "TotalRequestTimeout"),
        "Timeout",
        30_000_000_000,
        "the standard handler's 30 s",
    )?;
    if hedged {
        hedging(ctx, opts, path, (total, tf), &mut s.entries)?;
    } else {
        retry(ctx, sub(opts, path, "Retry"), &mut s.entries)?;
        let (attempt, af) = span(
            ctx,
            sub(opts, path, "AttemptTimeout"),
            "Timeout",
            10_000_000_000,
            "the standard handler's 10 s",
        )?;
        s.entries.push(entry(
            "timeout",
            toml_duration(attempt),
            format!("{af} (each attempt's)"),
        ));
        s.entries.push(entry(
            "deadline",
            toml_duration(total),
            format!("{tf} (the whole request, retries included)"),
        ));
        s.entries
            .push(breaker(ctx, sub(opts, path, "CircuitBreaker"))?);
    }
    if let Some((r, p)) = sub(opts, path, "RateLimiter") {
        ctx.not_modelled(
            r,
            &p,
            "a client-side limit on calls in flight: the simulator's clients have none",
        );
    }
    Ok(s)
}

/// Every options section of the document as a strategy.
pub(super) fn read(ctx: &mut Ctx, doc: &Node) -> Result<Vec<Strategy>, ImportError> {
    let mut found = Vec::new();
    sections(doc, "", &mut found);
    found
        .into_iter()
        .map(|(n, p)| options(ctx, n, &p))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::import_text;
    use crate::import::tests::{keys, value};

    /// `TimeSpan`s as .NET parses them.
    #[test]
    fn timespans() {
        let files = ["t".to_owned()];
        let ctx = Ctx {
            files: &files,
            numbers: Vec::new(),
            not_modelled: Vec::new(),
        };
        let t = |s: &str| {
            timespan(
                &ctx,
                &Node {
                    line: 1,
                    file: 0,
                    value: crate::import::tree::Value::Scalar(s.into()),
                },
                "f",
            )
        };
        assert_eq!(t("00:00:02").unwrap(), 2_000_000_000);
        assert_eq!(t("00:00:00.250").unwrap(), 250_000_000);
        assert_eq!(t("01:30").unwrap(), 5_400_000_000_000);
        assert_eq!(t("1.00:00:01").unwrap(), 86_401_000_000_000);
        assert_eq!(t("2").unwrap(), 2 * 86_400_000_000_000);
        assert!(t("00:61:00").unwrap_err().0.contains("\"00:61:00\""));
    }

    /// A section that sets one field takes the standard handler's other
    /// defaults: 3 retries, Polly's decorrelated jitter from 2 s,
    /// Retry-After honoured, 10 s an attempt, 30 s in all, a breaker at 10%
    /// of 100 calls open 5 s. Keys match in any case.
    #[test]
    fn the_standard_handlers_defaults() {
        let k = keys("{\"Http\": {\"retry\": {\"maxretryattempts\": 4}}}");
        assert_eq!(value(&k, "max_retries"), "4");
        assert_eq!(value(&k, "backoff"), "\"decorrelated-jitter-v2\"");
        assert_eq!(value(&k, "base"), "\"2s\"");
        assert_eq!(value(&k, "use_retry_after"), "true");
        assert_eq!(value(&k, "timeout"), "\"10s\"");
        assert_eq!(value(&k, "deadline"), "\"30s\"");
        assert_eq!(
            value(&k, "breaker"),
            "{ failure_rate = 0.1, window = 100, min_calls = 100, open_for = \"5s\", probes = 1 }"
        );
    }

    /// Constant and linear delays with jitter are Polly's ±25%; the
    /// experimental budget is a ratio over its window, its differences
    /// listed.
    #[test]
    fn jitter_and_the_experimental_budget() {
        let text = "{\"A\": {\"Retry\": {\"BackoffType\": \"Linear\", \"Delay\": \"00:00:01\", \
                    \"RetryBudget\": {\"RetryRatio\": 0.2}}}}";
        let k = keys(text);
        assert_eq!(value(&k, "backoff"), "\"linear\"");
        assert_eq!(value(&k, "jitter"), "{ low = 0.75, high = 1.25 }");
        assert_eq!(
            value(&k, "budget"),
            "{ kind = \"ratio\", ratio = 0.2, window = \"10s\" }"
        );
        let imported = import_text("t", text).unwrap();
        assert!(
            imported
                .not_modelled
                .iter()
                .any(|n| n.contains("MinimumThroughput")),
            "{:?}",
            imported.not_modelled
        );
        let bad = text.replace("\"Linear\"", "\"Fibonacci\"");
        let err = import_text("t", &bad).unwrap_err().0;
        assert!(
            err.contains("Fibonacci") && err.contains("A:Retry:BackoffType"),
            "{err}"
        );
    }
}
