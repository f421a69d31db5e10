//! The playground's controls: which keys of a scenario the page offers, with
//! their current values, and how an edit of one becomes the scenario's text
//! (with `toml_edit`, so the file keeps its comments and layout for export).

use std::path::Path;

use serde::Serialize;
use toml_edit::{DocumentMut, Item, TableLike, Value};

use crate::model::Load;
use crate::retry::{BackoffKind, BudgetConfig};
use crate::scenario::locate::{KeyPath, Seg};
use crate::scenario::{Scenario, ScenarioError};

/// One control of the page.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Field {
    /// Key path, as error messages name keys: `clients.count`, `strategy[1].base`.
    pub key: String,
    /// Group heading: "Run", "Load", "Server", "Trigger 1", a strategy's name.
    pub group: String,
    /// Label beside the control.
    pub label: String,
    /// "number", "duration", "retries" or "select".
    pub kind: &'static str,
    /// The current value as the control shows it (the file's, or the effective
    /// default where the file does not say).
    pub value: String,
    /// Choices, for a select.
    pub options: Vec<String>,
    /// What it means.
    pub help: &'static str,
}

const BALANCERS: [&str; 5] = [
    "round-robin",
    "random",
    "least-outstanding",
    "power-of-two",
    "pick-first",
];
const OUTAGE_KINDS: [&str; 6] = ["reset", "503", "blackhole", "brownout", "spike", "errors"];
const DISCIPLINES: [&str; 3] = ["fifo", "lifo", "adaptive-lifo"];
const LIMITER_KINDS: [&str; 5] = ["none", "gradient", "gradient2", "vegas", "aimd"];
const BUDGET_KINDS: [&str; 7] = [
    "none",
    "token-bucket",
    "aws-quota",
    "ratio",
    "finagle",
    "concurrency",
    "failure-ratio",
];

/// `key` read as a key path, or what is wrong with it (its start only: a
/// request may send a key of any length).
fn key_path(key: &str) -> Result<KeyPath, String> {
    KeyPath::parse(key).ok_or_else(|| {
        let shown: String = key.chars().take(80).collect();
        format!(
            "not a key path of a scenario: {shown}{} (keys, dots and [index], at most {} keys)",
            if shown.len() < key.len() { "..." } else { "" },
            crate::scenario::locate::MAX_SEGMENTS
        )
    })
}

/// Sets (or, with an empty value, removes) `key` in `doc`. The value is a
/// TOML value (`500`, `"200ms"`, `{ kind = "none" }`); text that is not one is
/// taken as a string, so that the scenario's own validation names the key and
/// says what would be valid. Setting is the sweeps' own (`scenario::keys::set`:
/// nested, inline and array tables, and the strategies that override the key).
fn set(doc: &mut DocumentMut, key: &str, literal: &str) -> Result<(), String> {
    let path = key_path(key)?;
    let literal = literal.trim();
    if literal.is_empty() {
        return remove(doc, key);
    }
    let value = literal
        .parse::<Value>()
        .unwrap_or_else(|_| Value::from(literal));
    crate::scenario::keys::set(doc, &path, &value)
}

/// Removes `key` (a key of a table, or of a table of an array of tables), so
/// the default or the preset's value applies again; a path that is not in the
/// file is already removed.
fn remove(doc: &mut DocumentMut, key: &str) -> Result<(), String> {
    let path = key_path(key)?;
    let Some((Seg::Key(last), parents)) = path.0.split_last() else {
        return Err(format!("{key}: cannot remove a list entry"));
    };
    let mut t: &mut dyn TableLike = doc.as_table_mut();
    let mut segs = parents.iter().peekable();
    while let Some(seg) = segs.next() {
        let Seg::Key(k) = seg else { return Ok(()) };
        let Some(item) = t.get_mut(k) else {
            return Ok(());
        };
        let next = match segs.peek() {
            Some(Seg::Index(i)) => {
                let i = *i;
                segs.next();
                item.as_array_of_tables_mut()
                    .and_then(|a| a.get_mut(i))
                    .map(|t| t as &mut dyn TableLike)
            }
            _ => item.as_table_like_mut(),
        };
        let Some(next) = next else { return Ok(()) };
        t = next;
    }
    t.remove(last);
    Ok(())
}

/// `text` with each (key, value) edit applied; an edit that cannot be made is
/// an error at its key.
pub fn apply_edits(
    text: &str,
    edits: &[(String, String)],
    file: &Path,
) -> Result<String, ScenarioError> {
    if edits.is_empty() {
        return Ok(text.to_string());
    }
    // A file that does not parse is reported by the scenario parser, with its
    // line and column.
    let Ok(mut doc) = text.parse::<DocumentMut>() else {
        return Ok(text.to_string());
    };
    for (key, value) in edits {
        set(&mut doc, key, value).map_err(|message| ScenarioError {
            file: file.to_path_buf(),
            key: Some(key.clone()),
            position: None,
            message,
            excerpt: None,
        })?;
    }
    rename_edited(&mut doc, edits);
    Ok(doc.to_string())
}

/// A strategy whose own keys were edited (not its name) is renamed
/// `NAME (edited)`: a row named "none" that has become full jitter would
/// say what it no longer is.
fn rename_edited(doc: &mut DocumentMut, edits: &[(String, String)]) {
    let mut edited: Vec<usize> = edits
        .iter()
        .filter_map(|(key, _)| {
            let path = KeyPath::parse(key)?;
            match path.0.as_slice() {
                [Seg::Key(k), Seg::Index(i), Seg::Key(field), ..]
                    if k == "strategy" && field != "name" =>
                {
                    Some(*i)
                }
                _ => None,
            }
        })
        .collect();
    edited.sort_unstable();
    edited.dedup();
    let renamed: Vec<usize> = edits
        .iter()
        .filter_map(|(key, _)| match KeyPath::parse(key)?.0.as_slice() {
            [Seg::Key(k), Seg::Index(i), Seg::Key(field)] if k == "strategy" && field == "name" => {
                Some(*i)
            }
            _ => None,
        })
        .collect();
    let Some(strategies) = doc
        .get_mut("strategy")
        .and_then(Item::as_array_of_tables_mut)
    else {
        return;
    };
    for i in edited.into_iter().filter(|i| !renamed.contains(i)) {
        let Some(t) = strategies.get_mut(i) else {
            continue;
        };
        if let Some(name) = t.get("name").and_then(|n| n.as_str()).map(str::to_owned) {
            if !name.ends_with(" (edited)") {
                t.insert("name", toml_edit::value(format!("{name} (edited)")));
            }
        }
    }
}

/// `text` renamed for export: `name = "NAME-edited"` (kept when the name
/// already ends so), so that `sim run` on an exported file writes
/// `results/NAME-edited` and never replaces the results of the file it came
/// from. Comments and layout are kept; a file that does not parse is returned
/// as it is (the parser reports it where it is run).
pub fn export_text(text: &str, name: &str) -> String {
    let Ok(mut doc) = text.parse::<DocumentMut>() else {
        return text.to_string();
    };
    let new = if name.ends_with("-edited") {
        name.to_string()
    } else {
        format!("{name}-edited")
    };
    match doc.get_mut("name").and_then(Item::as_value_mut) {
        Some(v) => {
            let decor = v.decor().clone();
            *v = Value::from(new);
            *v.decor_mut() = decor;
        }
        None => {
            doc.insert("name", toml_edit::value(new));
        }
    }
    doc.to_string()
}

/// The text of the value at `key` in `doc`, as a control shows it (strings
/// without quotes), if the file sets it.
fn shown(doc: &DocumentMut, key: &str) -> Option<String> {
    let path = KeyPath::parse(key)?;
    let (Seg::Key(last), parents) = path.0.split_last()? else {
        return None;
    };
    let mut t: &dyn TableLike = doc.as_table();
    let mut segs = parents.iter().peekable();
    while let Some(seg) = segs.next() {
        let Seg::Key(k) = seg else { return None };
        let item = t.get(k)?;
        t = match segs.peek() {
            Some(Seg::Index(i)) => {
                let i = *i;
                segs.next();
                item.as_array_of_tables()?.get(i)?
            }
            _ => item.as_table_like()?,
        };
    }
    value_text(t.get(last)?)
}

fn value_text(item: &Item) -> Option<String> {
    let v = item.as_value()?;
    Some(match v {
        Value::String(s) => s.value().clone(),
        // A budget shows its kind; any other table (a breaker) is "on".
        Value::InlineTable(t) => t
            .get("kind")
            .and_then(|k| k.as_str())
            .map_or_else(|| "on".to_string(), str::to_string),
        other => other.to_string().trim().to_string(),
    })
}

fn duration_text(d: crate::engine::SimDuration) -> String {
    if d == crate::engine::SimDuration::MAX {
        "none".into()
    } else {
        d.to_string()
    }
}

/// The controls for scenario `s` (parsed from `text`): what matters most to a
/// retry storm, with the values in force.
#[expect(
    clippy::too_many_lines,
    reason = "the playground's form: one call per field"
)]
pub fn fields(text: &str, s: &Scenario) -> Vec<Field> {
    let Ok(doc) = text.parse::<DocumentMut>() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    // When every strategy brings its own server (scenarios/fleet.toml), the
    // scenario's [server] runs nothing: its groups say so.
    let unused = !s.strategies.is_empty()
        && s.overrides.len() == s.strategies.len()
        && s.overrides.iter().all(|o| o.server.is_some());
    let (server_group, fleet_group) = if unused {
        (
            "Server (unused: every strategy brings its own)",
            "Fleet (unused: every strategy brings its own server)",
        )
    } else {
        ("Server", "Fleet")
    };
    let mut add = |key: String,
                   group: &str,
                   label: &str,
                   kind: &'static str,
                   value: String,
                   options: &[&str],
                   help: &'static str| {
        let value = shown(&doc, &key).unwrap_or(value);
        out.push(Field {
            key,
            group: group.to_string(),
            label: label.to_string(),
            kind,
            value,
            options: options.iter().map(|o| (*o).to_string()).collect(),
            help,
        });
    };
    add(
        "duration".into(),
        "Run",
        "duration",
        "duration",
        s.world.duration.to_string(),
        &[],
        "simulated time of each run",
    );
    add(
        "seed".into(),
        "Run",
        "seed",
        "number",
        s.seed.to_string(),
        &[],
        "the seed of every random draw: the same seed gives the same run",
    );
    match &s.world.load {
        Load::Closed { clients, .. } => add(
            "clients.count".into(),
            "Load",
            "clients",
            "number",
            clients.to_string(),
            &[],
            "a fixed population: each client sends a request, waits for it, thinks, sends the next",
        ),
        Load::OneShot { clients } => add(
            "clients.count".into(),
            "Load",
            "clients",
            "number",
            clients.to_string(),
            &[],
            "each client sends one request",
        ),
        Load::Open { .. } if shown(&doc, "clients.every").is_some() => {
            add(
                "clients.count".into(),
                "Load",
                "clients",
                "number",
                String::new(),
                &[],
                "each client sends a new request every so often, whatever happens to its earlier ones",
            );
            add(
                "clients.every".into(),
                "Load",
                "each client sends every",
                "duration",
                String::new(),
                &[],
                "each client's mean time between new requests (a Poisson stream)",
            );
        }
        Load::Open { rate_per_s } => add(
            "clients.rate".into(),
            "Load",
            "requests per second",
            "number",
            rate_per_s.to_string(),
            &[],
            "new requests arrive at this rate whatever happens to earlier ones",
        ),
    }
    add(
        "clients.proxies".into(),
        "Load",
        "proxies",
        "number",
        s.world.proxies.count.to_string(),
        &[],
        "the sidecar proxies the clients are behind (client c behind proxy c % proxies): each keeps its own retry budget, breaker and view of the fleet",
    );
    if shown(&doc, "server.workers").is_some() {
        add(
            "server.workers".into(),
            server_group,
            "workers",
            "number",
            String::new(),
            &[],
            "requests served at once; capacity is workers / mean service time",
        );
        add(
            "server.replicas".into(),
            server_group,
            "replicas",
            "number",
            "1".into(),
            &[],
            "copies of this server behind one balancer: a fleet (each with the workers, queue and crash limit here)",
        );
        add(
            "server.balancer".into(),
            server_group,
            "balancer",
            "select",
            "round-robin".into(),
            &BALANCERS,
            "how an attempt picks a replica: in turn, at random, the fewest outstanding, the fewer of two drawn at random, or always the first that is in (gRPC's default)",
        );
        add(
            "server.outlier".into(),
            fleet_group,
            "outlier ejection",
            "switch",
            "off".into(),
            &["off", "on"],
            "Envoy's outlier detection with its defaults: eject a replica after 5 5xx in a row, for 30 s times its ejections",
        );
        add(
            "server.outlier.max_ejection_percent".into(),
            fleet_group,
            "most ejected, %",
            "number",
            "10".into(),
            &[],
            "the largest share of replicas ejected at once (Envoy: 10; 100 lets a cascade take them all); setting it turns ejection on",
        );
        add(
            "server.healthy_panic_threshold".into(),
            fleet_group,
            "panic below, %",
            "number",
            "50".into(),
            &[],
            "below this share of healthy replicas the balancer ignores health (Envoy: 50; 0: never, and with none healthy every request fails)",
        );
        add(
            "server.health_check".into(),
            fleet_group,
            "health checks",
            "switch",
            "off".into(),
            &["off", "on"],
            "Kubernetes readiness probes: a check every 10 s, out after 3 failures, back after 1 success",
        );
        add(
            "server.retry_other_replica".into(),
            fleet_group,
            "retry elsewhere",
            "bool",
            "false".into(),
            &["false", "true"],
            "a retry avoids the replica its previous attempt went to (Envoy's previous_hosts predicate)",
        );
    }
    for (key, label, help) in [
        (
            "server.queue",
            "queue limit",
            "requests waiting beyond the workers before the server refuses more",
        ),
        (
            "server.crash_at",
            "crashes above",
            "requests held at which the server falls over",
        ),
        (
            "server.restart",
            "restart time",
            "how long a crashed server stays down",
        ),
    ] {
        if shown(&doc, key).is_some() {
            add(
                key.into(),
                server_group,
                label,
                if key == "server.restart" {
                    "duration"
                } else {
                    "number"
                },
                String::new(),
                &[],
                help,
            );
        }
    }
    if shown(&doc, "server.workers").is_some() {
        add(
            "server.discipline".into(),
            server_group,
            "queue order",
            "select",
            shown(&doc, "server.discipline").unwrap_or_else(|| "fifo".into()),
            &DISCIPLINES,
            "which waiting request a free worker takes: the oldest, the newest, or the newest once the queue has not emptied for 100 ms",
        );
        add(
            "server.codel".into(),
            server_group,
            "CoDel",
            "switch",
            shown(&doc, "server.codel").map_or_else(|| "off".into(), |_| "on".into()),
            &["off", "on"],
            "RFC 8289: once queued requests have waited 5 ms or more for 100 ms, drop one (503), then more and more often",
        );
        add(
            "server.limiter".into(),
            server_group,
            "concurrency limit",
            "limiter",
            shown(&doc, "server.limiter").unwrap_or_else(|| "none".into()),
            &LIMITER_KINDS,
            "a limit on requests in the server that moves with latency, 503 past it: Envoy's gradient controller, or Netflix's Gradient2, Vegas or AIMD, with their defaults",
        );
    }
    if s.world.cache.is_some() {
        let (key, label, help) = if shown(&doc, "cache.hit_rate").is_some() {
            (
                "cache.hit_rate",
                "hit rate",
                "the share of requests the cache answers in its steady state (it sets the cache's size)",
            )
        } else {
            ("cache.capacity", "entries", "keys the cache holds")
        };
        add(
            key.into(),
            "Cache",
            label,
            "number",
            String::new(),
            &[],
            help,
        );
        add(
            "cache.miss_limit".into(),
            "Cache",
            "warm-up gate, misses/s",
            "number",
            String::new(),
            &[],
            "at most this many misses a second go to the server, the rest fail at once (empty: no gate)",
        );
    }
    for (i, o) in s.world.outages.iter().enumerate() {
        let group = format!("Trigger {}", i + 1);
        add(
            format!("outage[{i}].kind"),
            &group,
            "kind",
            "select",
            String::new(),
            &OUTAGE_KINDS,
            "reset: a crash; 503: fast errors; blackhole: no answers; brownout: slower; spike: extra load; errors: random 503s",
        );
        add(
            format!("outage[{i}].start"),
            &group,
            "start",
            "duration",
            o.start.as_secs_f64().to_string() + "s",
            &[],
            "when it begins",
        );
        if shown(&doc, &format!("outage[{i}].length")).is_some() {
            add(
                format!("outage[{i}].length"),
                &group,
                "length",
                "duration",
                String::new(),
                &[],
                "how long it lasts",
            );
        } else {
            add(
                format!("outage[{i}].end"),
                &group,
                "end",
                "duration",
                o.end.as_secs_f64().to_string() + "s",
                &[],
                "when it ends",
            );
        }
    }
    let kinds: Vec<&str> = BackoffKind::NAMES.iter().map(|(n, _)| *n).collect();
    for (i, st) in s.strategies.iter().enumerate() {
        let group = format!("Strategy: {}", st.name);
        add(
            format!("strategy[{i}].backoff"),
            &group,
            "backoff",
            "select",
            st.backoff.kind.name().to_string(),
            &kinds,
            "how the delay before each retry grows; full-jitter draws it at random below the exponential",
        );
        add(
            format!("strategy[{i}].base"),
            &group,
            "base",
            "duration",
            duration_text(st.backoff.base),
            &[],
            "the first delay",
        );
        add(
            format!("strategy[{i}].cap"),
            &group,
            "cap",
            "duration",
            duration_text(st.backoff.cap),
            &[],
            "the largest delay before jitter",
        );
        add(
            format!("strategy[{i}].max_retries"),
            &group,
            "retries",
            "retries",
            if st.policy.max_retries == u32::MAX {
                "unlimited".into()
            } else {
                st.policy.max_retries.to_string()
            },
            &[],
            "retries after the first attempt, or unlimited",
        );
        let budget = match &st.budget {
            None => "none",
            Some(BudgetConfig::TokenBucket { .. }) => "token-bucket",
            Some(BudgetConfig::AwsQuota { .. }) => "aws-quota",
            Some(BudgetConfig::Ratio { .. }) => "ratio",
            Some(BudgetConfig::Finagle { .. }) => "finagle",
            Some(BudgetConfig::Concurrency(_)) => "concurrency",
            Some(BudgetConfig::FailureRatio { .. }) => "failure-ratio",
        };
        add(
            format!("strategy[{i}].budget"),
            &group,
            "retry budget",
            "budget",
            budget.into(),
            &BUDGET_KINDS,
            "caps retries across all clients: gRPC's token bucket, the AWS quota, a 10% ratio, Finagle's, Envoy's concurrency, Brooker's failure ratio",
        );
        if let Some(h) = &st.hedging {
            add(
                format!("strategy[{i}].hedging.delay"),
                &group,
                "hedging delay",
                "duration",
                duration_text(h.delay),
                &[],
                "how long a request waits for an answer before another copy is sent (gRPC's hedgingDelay)",
            );
        }
        add(
            format!("strategy[{i}].breaker"),
            &group,
            "circuit breaker",
            "breaker",
            if st.breaker.is_some() { "on" } else { "off" }.into(),
            &["off", "on"],
            "on: resilience4j's defaults (opens at 50% failures of the last 100 calls, for 60 s); while open every attempt fails at once",
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::export_text;

    #[test]
    fn an_export_gets_a_name_of_its_own_and_keeps_its_comments() {
        let text = "# the storm\nname = \"outage\" # shipped\nseed = 1\n";
        let out = export_text(text, "outage");
        assert_eq!(
            out,
            "# the storm\nname = \"outage-edited\" # shipped\nseed = 1\n"
        );
        assert_eq!(export_text(&out, "outage-edited"), out);
        let bare = export_text("seed = 1\n", "x");
        assert!(bare.contains("name = \"x-edited\""), "{bare}");
    }

    use super::*;

    const TEXT: &str = "# a comment\nname = \"t\"\n[clients]\ncount = 10\n\n[[strategy]]\nname = \"a\"\n\n[[strategy]]\nname = \"b\"\nbase = \"1s\"\n";

    #[test]
    fn edits_keep_the_file_and_change_the_key() {
        let out = apply_edits(
            TEXT,
            &[
                ("clients.count".into(), "500".into()),
                ("strategy[1].base".into(), "\"2s\"".into()),
                (
                    "strategy[0].budget".into(),
                    "{ kind = \"token-bucket\" }".into(),
                ),
            ],
            Path::new("t.toml"),
        )
        .unwrap();
        assert!(out.starts_with("# a comment\n"), "{out}");
        assert!(out.contains("count = 500"), "{out}");
        assert!(out.contains("base = \"2s\""), "{out}");
        assert!(
            out.contains("budget = { kind = \"token-bucket\" }"),
            "{out}"
        );
    }

    #[test]
    fn an_edit_that_cannot_be_made_names_its_key() {
        let e = apply_edits(
            TEXT,
            &[("strategy[5].base".into(), "1".into())],
            Path::new("t.toml"),
        )
        .unwrap_err();
        assert_eq!(e.key.as_deref(), Some("strategy[5].base"));
        assert!(e.message.contains("has no entry [5]"), "{}", e.message);
    }

    #[test]
    fn inline_tables_are_edited_in_place() {
        let text = "server = { workers = 4, queue = 10 }\n";
        let out = apply_edits(
            text,
            &[("server.workers".into(), "8".into())],
            Path::new("t.toml"),
        )
        .unwrap();
        assert_eq!(out, "server = { workers = 8, queue = 10 }\n");
        let doc: DocumentMut = out.parse().unwrap();
        assert_eq!(shown(&doc, "server.queue").as_deref(), Some("10"));
    }

    #[test]
    fn text_that_is_not_a_toml_value_becomes_a_string() {
        let out = apply_edits(
            TEXT,
            &[("clients.count".into(), "lots".into())],
            Path::new("t.toml"),
        )
        .unwrap();
        assert!(out.contains("count = \"lots\""), "{out}");
        let out = apply_edits(
            TEXT,
            &[("strategy[1].base".into(), "".into())],
            Path::new("t.toml"),
        )
        .unwrap();
        assert!(
            !out.contains("base"),
            "an empty value removes the key: {out}"
        );
    }

    #[test]
    fn shown_values_come_from_the_file() {
        let doc: DocumentMut = TEXT.parse().unwrap();
        assert_eq!(shown(&doc, "clients.count").as_deref(), Some("10"));
        assert_eq!(shown(&doc, "strategy[1].base").as_deref(), Some("1s"));
        assert_eq!(shown(&doc, "strategy[0].base"), None);
    }

    /// A scenario whose every strategy brings its own server says its
    /// [server] controls change nothing; one that uses [server] does not.
    #[test]
    fn server_controls_say_when_no_strategy_uses_them() {
        let group = |file: &str| {
            let text = std::fs::read_to_string(file).unwrap();
            let s = crate::scenario::parse(&text, Path::new(file)).unwrap();
            fields(&text, &s)
                .into_iter()
                .find(|f| f.key == "server.workers")
                .map(|f| f.group)
                .unwrap()
        };
        assert_eq!(group("scenarios/outage.toml"), "Server");
        assert!(group("scenarios/fleet.toml").contains("unused"));
    }
}
