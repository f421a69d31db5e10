//! Imported strategies as scenario text: a fragment of `[[strategy]]`
//! tables to merge by hand, or a whole scenario (one given, with the
//! imported strategies added), every value commented with its source.

use std::fmt::Write as _;

use super::{Entry, ImportError, Imported};

/// `text` safe in a `#` comment: a comment ends at a line break, so a
/// control character echoed from the source (a newline in a string field)
/// would end it and write what follows as TOML. Each is written as its
/// escape (`\n`, `\u{0}`) instead.
fn comment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        // U+2028 and U+2029 are line breaks to some readers.
        if c.is_control() || c == '\u{2028}' || c == '\u{2029}' {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` as a TOML string, quoted and escaped.
fn quoted(text: &str) -> String {
    toml_edit::Value::from(text).to_string().trim().to_owned()
}

/// The header: what was read, and what was left out.
fn header(imports: &[Imported]) -> String {
    let mut out = String::new();
    let mut seen: Vec<&str> = Vec::new();
    for i in imports {
        // A folder's import gives several tiers of a graph: said once.
        if seen.contains(&i.file.as_str()) {
            continue;
        }
        seen.push(&i.file);
        let _ = writeln!(
            out,
            "# Imported by `sim import` from {} ({}).",
            comment(&i.file),
            i.format
        );
        if i.not_modelled.is_empty() {
            let _ = writeln!(out, "# Every field it holds is modelled.");
        } else {
            let _ = writeln!(
                out,
                "# Read but not modelled as written (left out, unless the line says how it is read):"
            );
            for n in &i.not_modelled {
                let _ = writeln!(out, "#   {}", comment(n));
            }
        }
    }
    out
}

/// An entry's value as TOML (the importers write only valid values).
fn value(e: &Entry) -> Result<toml_edit::Value, ImportError> {
    e.value.parse().map_err(|err| {
        ImportError(format!(
            "internal: imported value {} = {} is not TOML: {err}",
            e.key, e.value
        ))
    })
}

/// `key = value  # from`, the value checked as TOML (an importer that wrote
/// a string unescaped is caught here, not by the scenario's reader).
fn key_line(out: &mut String, e: &Entry) -> Result<(), ImportError> {
    let v = value(e)?;
    let _ = writeln!(
        out,
        "{} = {}  # {}",
        e.key,
        v.to_string().trim(),
        comment(&e.from)
    );
    Ok(())
}

/// The `[[strategy]]` tables alone, each server key commented out with
/// the instruction to merge it into `[server]`.
pub fn fragment(imports: &[Imported]) -> Result<String, ImportError> {
    let mut out = header(imports);
    out.push_str(
        "# Add these tables to a scenario (its [clients], [server], [[outage]] and\n\
         # [metrics] say the world), or let `sim import FILE --into SCENARIO` do it.\n",
    );
    for i in imports {
        for s in &i.strategies {
            let _ = writeln!(out, "\n[[strategy]]\nname = {}", quoted(&s.name));
            for e in &s.entries {
                key_line(&mut out, e)?;
            }
            if !s.server.is_empty() {
                out.push_str(
                    "# Keys of the server this strategy's settings act on; set them in [server]:\n",
                );
                for e in &s.server {
                    let _ = writeln!(
                        out,
                        "# {} = {}  # {}",
                        e.key,
                        comment(&e.value),
                        comment(&e.from)
                    );
                }
            }
        }
    }
    Ok(out)
}

/// Strategy `s`'s server keys laid over the scenario's `[server]` (in
/// `doc`, read from `file`) as a server of its own, written to `out`; the
/// keys of a fleet are said and left out when the server is one replica.
fn own_server(
    out: &mut String,
    doc: &toml_edit::DocumentMut,
    file: &str,
    s: &super::Strategy,
) -> Result<(), ImportError> {
    let fleet = doc
        .get("server")
        .and_then(|s| s.as_table_like())
        .is_some_and(|t| {
            t.get("replicas")
                .and_then(toml_edit::Item::as_integer)
                .is_some_and(|r| r >= 2)
                || t.contains_key("autoscale")
        });
    // Settings of a fleet (ejection, retries to another replica, the
    // balancer) mean nothing to one replica: said, not applied.
    let (applied, left): (Vec<&Entry>, Vec<&Entry>) = s.server.iter().partition(|e| {
        fleet
            || !matches!(
                e.key.as_str(),
                "retry_other_replica" | "outlier" | "healthy_panic_threshold" | "balancer"
            )
    });
    for e in &left {
        let _ = writeln!(
            out,
            "# Left out: {} = {} (from {}): it acts on a fleet, and this scenario's [server] is one replica",
            e.key,
            comment(&e.value),
            comment(&e.from)
        );
    }
    if applied.is_empty() {
        return Ok(());
    }
    let Some(server) = doc.get("server").and_then(|s| s.as_table_like()) else {
        return Err(ImportError(format!(
            "{file}: has no [server] table for the imported server keys ({}) to join",
            s.server
                .iter()
                .map(|e| e.key.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    };
    let mut table = toml_edit::InlineTable::new();
    for (k, v) in server.iter() {
        if let Some(v) = v.as_value() {
            table.insert(k, v.clone());
        } else if let Some(t) = v.as_table() {
            table.insert(
                k,
                toml_edit::Value::InlineTable(t.clone().into_inline_table()),
            );
        }
    }
    for e in &applied {
        let v = value(e)?;
        table.insert(&e.key, v);
    }
    table.fmt();
    out.push_str("# Its own server: the scenario's [server], with\n");
    for e in &applied {
        let _ = writeln!(
            out,
            "#   {} = {}  (from {})",
            e.key,
            comment(&e.value),
            comment(&e.from)
        );
    }
    let _ = writeln!(*out, "server = {table}");
    Ok(())
}

/// `scenario` (its text) with the imported strategies added after its own,
/// renamed `imported-NAME` when a name is taken. A strategy with server keys
/// gets a server of its own: the scenario's `[server]` with those keys set.
pub fn into_scenario(
    scenario: &str,
    file: &str,
    imports: &[Imported],
) -> Result<String, ImportError> {
    let doc: toml_edit::DocumentMut = scenario
        .parse()
        .map_err(|e| ImportError(format!("{file}: cannot be read as TOML: {e}")))?;
    let taken: Vec<String> = doc
        .get("strategy")
        .and_then(|s| s.as_array_of_tables())
        .map(|a| {
            a.iter()
                .filter_map(|t| t.get("name").and_then(|n| n.as_str()).map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let mut out = scenario.trim_end().to_owned();
    out.push_str("\n\n");
    out.push_str(&header(imports));
    for i in imports {
        for s in &i.strategies {
            let name = if taken.contains(&s.name) {
                format!("imported-{}", s.name)
            } else {
                s.name.clone()
            };
            let _ = writeln!(out, "\n[[strategy]]\nname = {}", quoted(&name));
            for e in &s.entries {
                key_line(&mut out, e)?;
            }
            own_server(&mut out, &doc, file, s)?;
        }
    }
    Ok(out)
}

/// The name of a tier imported from `file`: its stem, as a service name.
fn tier_name(file: &str) -> String {
    let stem = std::path::Path::new(file)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("tier");
    super::clean_name(stem, "-_")
}

/// The tiers' names (after their files), once each file is checked to hold
/// one policy and the scenario to be a single server's.
fn tier_names(
    file: &str,
    doc: &toml_edit::DocumentMut,
    imports: &[Imported],
    graph: Option<&[String]>,
) -> Result<Vec<String>, ImportError> {
    for i in imports {
        if i.strategies.is_empty() {
            return Err(ImportError(format!(
                "{}: holds no retry policy; a tier's file holds exactly one (a gRPC method \
                 config, an Envoy retry_policy or an Istio route with retries)",
                i.file
            )));
        }
        if i.strategies.len() != 1 {
            return Err(ImportError(format!(
                "{}: a tier's file holds one retry policy, this one {} ({}); import it alone to see them",
                i.file,
                i.strategies.len(),
                i.strategies
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    if doc.get("service").is_some() || doc.get("server").and_then(|s| s.get("calls")).is_some() {
        return Err(ImportError(format!(
            "{file}: is a call chain already; import a chain into a scenario of one server"
        )));
    }
    let names: Vec<String> = match graph {
        Some(g) => g[1..].iter().map(|n| super::clean_name(n, "-_")).collect(),
        None => imports[1..].iter().map(|i| tier_name(&i.file)).collect(),
    };
    for (k, n) in names.iter().enumerate() {
        if names[..k].contains(n) || n == "server" {
            return Err(ImportError(format!(
                "{}: its tier would be named \"{n}\", as another: rename the file",
                imports[k + 1].file
            )));
        }
    }
    Ok(names)
}

/// `scenario` made a call chain, one tier per file: the first file's policy
/// is the users' (towards the `[server]`), and file `k + 1`'s is tier `k`'s
/// calls to a new service named after the file (or after the `graph`'s
/// name `k + 1`, when the tiers were picked by a graph), which copies the
/// `[server]`'s capacity. One strategy, `imported-chain`, holds them all.
pub fn chain_into_scenario(
    scenario: &str,
    file: &str,
    imports: &[Imported],
    graph: Option<&[String]>,
) -> Result<String, ImportError> {
    let mut doc: toml_edit::DocumentMut = scenario
        .parse()
        .map_err(|e| ImportError(format!("{file}: cannot be read as TOML: {e}")))?;
    let names = tier_names(file, &doc, imports, graph)?;
    let server = doc
        .get("server")
        .and_then(|s| s.as_table())
        .cloned()
        .ok_or_else(|| {
            ImportError(format!(
                "{file}: has no [server] table to copy the services from"
            ))
        })?;
    let set = |t: &mut toml_edit::Table, entries: &[Entry]| -> Result<(), ImportError> {
        for e in entries {
            let v = value(e)?;
            t.insert(&e.key, toml_edit::value(v));
            if let Some(mut k) = t.key_mut(&e.key) {
                k.leaf_decor_mut()
                    .set_prefix(format!("# {}\n", comment(&e.from)));
            }
        }
        Ok(())
    };
    // The users' tier: the [server] calls the first service, with the first
    // file's server keys.
    if let Some(s) = doc.get_mut("server").and_then(|s| s.as_table_mut()) {
        if let Some(first) = names.first() {
            s.insert(
                "calls",
                toml_edit::value(toml_edit::Array::from_iter([first.as_str()])),
            );
        }
        set(s, &imports[0].strategies[0].server)?;
    }
    let mut services = toml_edit::ArrayOfTables::new();
    for (k, name) in names.iter().enumerate() {
        let mut t = server.clone();
        t.decor_mut().set_prefix(format!(
            "\n# Tier {} (from {}): its capacity is the [server]'s, copied; set its own.\n",
            k + 1,
            comment(&imports[k + 1].file)
        ));
        t.remove("calls");
        t.remove("name");
        t.insert("name", toml_edit::value(name.as_str()));
        if let Some(next) = names.get(k + 1) {
            t.insert(
                "calls",
                toml_edit::value(toml_edit::Array::from_iter([next.as_str()])),
            );
        }
        set(&mut t, &imports[k + 1].strategies[0].server)?;
        services.push(t);
    }
    doc.insert("service", toml_edit::Item::ArrayOfTables(services));
    let mut out = doc.to_string().trim_end().to_owned();
    out.push_str("\n\n");
    out.push_str(&header(imports));
    out.push_str(
        "# A call chain now: the scenario's own strategies apply their policy at every\n\
         # tier; `imported-chain` has the imported policy of each.\n",
    );
    out.push_str("\n[[strategy]]\nname = \"imported-chain\"\n");
    for e in &imports[0].strategies[0].entries {
        key_line(&mut out, e)?;
    }
    for (k, name) in names.iter().enumerate() {
        let _ = writeln!(out, "\n[strategy.tiers.{name}]");
        tier_lines(&mut out, &imports[k + 1].strategies[0].entries)?;
    }
    Ok(out)
}

/// A tier's keys: all of `entries` but connection limits, which the
/// simulator gives the users' proxies only (said in a comment).
fn tier_lines(out: &mut String, entries: &[Entry]) -> Result<(), ImportError> {
    for e in entries {
        if e.key == "limits" {
            let _ = writeln!(
                out,
                "# not set: limits = {} (a proxy's connection limits apply to the users' \
                 attempts only, not to a service's calls)",
                e.value
            );
            continue;
        }
        key_line(out, e)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::Strategy;

    fn imported(name: &str, from: &str) -> Imported {
        Imported {
            file: "f.yaml".into(),
            format: "Envoy configuration",
            strategies: vec![Strategy {
                name: name.into(),
                entries: vec![Entry {
                    key: "max_retries".into(),
                    value: "3".into(),
                    from: from.into(),
                }],
                server: Vec::new(),
            }],
            not_modelled: vec!["f.yaml:2 x = a\nname = \"b\"".into()],
        }
    }

    /// Whatever the source's strings hold, the fragment reads back as the
    /// one strategy it names: names are quoted, comments escaped.
    #[test]
    fn echoed_strings_cannot_write_toml() {
        let text = fragment(&[imported(
            "a\"\n[[strategy]]\nname = \"b",
            "f.yaml:1 x = 1\r\n[[strategy]]\u{2028}",
        )])
        .unwrap();
        let doc: toml::Table = text.parse().unwrap_or_else(|e| panic!("{e}\n{text}"));
        let strategies = doc["strategy"].as_array().unwrap();
        assert_eq!(strategies.len(), 1, "{text}");
        assert_eq!(
            strategies[0]["name"].as_str(),
            Some("a\"\n[[strategy]]\nname = \"b")
        );
        assert!(text.contains(r"\r\n[[strategy]]\u{2028}"), "{text}");
    }

    /// A tier's file without a policy is named as such.
    #[test]
    fn a_tier_without_a_policy_says_so() {
        let mut none = imported("x", "f.yaml:1");
        none.strategies.clear();
        let err = chain_into_scenario(
            "[server]\nworkers = 1\n",
            "s.toml",
            &[imported("a", "f.yaml:1"), none],
            None,
        )
        .unwrap_err();
        assert!(err.0.contains("holds no retry policy"), "{}", err.0);
    }
}
