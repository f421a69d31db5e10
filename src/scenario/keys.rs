//! Setting a key by its path (`retry.cap`, `outage[0].end`) in a scenario's
//! TOML document, keeping the rest of the file as written: how a sweep
//! makes each point's scenario and how the playground applies its edits.

use toml_edit::{DocumentMut, InlineTable, Item, Table, TableLike, Value};

use super::locate::{KeyPath, Seg};

/// Sets `path` to `value` in the document, and in every `[[strategy]]` that
/// overrides the part of the file the path is in, so the swept value is in force
/// for every strategy: `retry.cap` also sets `cap` in each strategy that has its
/// own `cap` or a `preset`; `server.workers` sets it in each strategy with its
/// own `server`. Sweeps and the playground's edits both set keys this way.
pub fn set(doc: &mut DocumentMut, path: &KeyPath, value: &Value) -> Result<(), String> {
    set_key(doc.as_table_mut(), false, &path.0, value)?;
    let retry = matches!(path.0.first(), Some(Seg::Key(k)) if k == "retry");
    let within: &[Seg] = match path.0.first() {
        Some(Seg::Key(k)) if k == "retry" => &path.0[1..],
        Some(Seg::Key(k)) if k == "clients" || k == "server" => &path.0,
        _ => return Ok(()),
    };
    let Some(Seg::Key(first)) = within.first() else {
        return Ok(());
    };
    let Some(strategies) = doc.as_table_mut().get_mut("strategy") else {
        return Ok(());
    };
    // A strategy's preset overrides `[retry]`, so it gets the value too.
    let applies = |t: &dyn TableLike| t.contains_key(first) || (retry && t.contains_key("preset"));
    if let Some(tables) = strategies.as_array_of_tables_mut() {
        for t in tables.iter_mut().filter(|t| applies(*t)) {
            set_key(t, false, within, value)?;
        }
    } else if let Some(list) = strategies.as_array_mut() {
        for t in list.iter_mut().filter_map(Value::as_inline_table_mut) {
            if applies(t) {
                set_key(t, true, within, value)?;
            }
        }
    }
    Ok(())
}

/// Sets `segs` (starting with a key) under table `t`, creating tables on the way.
fn set_key(t: &mut dyn TableLike, inline: bool, segs: &[Seg], value: &Value) -> Result<(), String> {
    let Some((Seg::Key(k), rest)) = segs.split_first() else {
        return Err("a key path starts with a key".into());
    };
    if rest.is_empty() {
        t.insert(k, Item::Value(value.clone()));
        return Ok(());
    }
    if t.get(k).is_none() {
        if let Some(Seg::Index(i)) = rest.first() {
            return Err(format!("the file has no `{k}`, so no `{k}[{i}]`"));
        }
        let table = if inline {
            Item::Value(Value::InlineTable(InlineTable::new()))
        } else {
            let mut table = Table::new();
            table.set_implicit(true);
            Item::Table(table)
        };
        t.insert(k, table);
    }
    let Some(item) = t.get_mut(k) else {
        return Err(format!("`{k}` cannot be set"));
    };
    descend(item, k, rest, value)
}

fn descend(item: &mut Item, name: &str, segs: &[Seg], value: &Value) -> Result<(), String> {
    if let Some((Seg::Index(i), rest)) = segs.split_first() {
        let missing = || format!("`{name}` has no entry [{i}] (entries count from 0)");
        if let Some(tables) = item.as_array_of_tables_mut() {
            let t = tables.get_mut(*i).ok_or_else(missing)?;
            return set_key(t, false, rest, value);
        }
        if let Some(list) = item.as_array_mut() {
            let entry = list.get_mut(*i).ok_or_else(missing)?;
            if rest.is_empty() {
                *entry = value.clone();
                return Ok(());
            }
            let t = entry
                .as_inline_table_mut()
                .ok_or_else(|| format!("`{name}[{i}]` is not a table"))?;
            return set_key(t, true, rest, value);
        }
        return Err(format!("`{name}` is not a list"));
    }
    let inline = item.is_inline_table();
    if item.is_array_of_tables() {
        return Err(format!(
            "`{name}` is a list of tables: name one by its index, e.g. `{name}[0]`"
        ));
    }
    let t = item
        .as_table_like_mut()
        .ok_or_else(|| format!("`{name}` is a value, not a table"))?;
    set_key(t, inline, segs, value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set_text(src: &str, path: &str, v: Value) -> Result<String, String> {
        let mut doc: DocumentMut = src
            .parse()
            .map_err(|e: toml_edit::TomlError| e.to_string())?;
        set(&mut doc, &KeyPath::parse(path).unwrap(), &v)?;
        Ok(doc.to_string())
    }

    #[test]
    fn sets_nested_keys_array_entries_and_inline_tables() {
        let src = "[server]\nworkers = 4\n[network]\nlatency = { dist = \"constant\", value = \"1ms\" }\n\
                   [[outage]]\nstart = \"1s\"\nend = \"2s\"\n";
        let out = set_text(src, "server.workers", Value::from(8)).unwrap();
        assert!(out.contains("workers = 8"), "{out}");
        let out = set_text(src, "outage[0].end", Value::from("3s")).unwrap();
        assert!(out.contains("end = \"3s\""), "{out}");
        let out = set_text(src, "network.latency.value", Value::from("5ms")).unwrap();
        let t: toml::Table = toml::from_str(&out).unwrap();
        assert_eq!(t["network"]["latency"]["value"].as_str(), Some("5ms"));
        let out = set_text(src, "retry.cap", Value::from("9s")).unwrap();
        let t: toml::Table = toml::from_str(&out).unwrap();
        assert_eq!(t["retry"]["cap"].as_str(), Some("9s"));
    }

    #[test]
    fn strategies_with_a_preset_get_a_swept_retry_value() {
        let src = "[retry]\ncap = \"1s\"\n[[strategy]]\nname = \"a\"\n[[strategy]]\nname = \"g\"\npreset = \"grpc\"\n";
        let out = set_text(src, "retry.cap", Value::from("7s")).unwrap();
        let t: toml::Table = toml::from_str(&out).unwrap();
        let s = t["strategy"].as_array().unwrap();
        assert!(s[0].get("cap").is_none(), "a inherits [retry]");
        // The preset's own cap would beat [retry]'s: the swept value goes on top.
        assert_eq!(s[1]["cap"].as_str(), Some("7s"));
    }

    #[test]
    fn strategies_that_override_the_key_get_the_swept_value_too() {
        let src = "[retry]\ncap = \"1s\"\n[[strategy]]\nname = \"a\"\n[[strategy]]\nname = \"b\"\ncap = \"2s\"\n\
                   [[strategy]]\nname = \"c\"\nserver = { workers = 2 }\n";
        let out = set_text(src, "retry.cap", Value::from("7s")).unwrap();
        let t: toml::Table = toml::from_str(&out).unwrap();
        let s = t["strategy"].as_array().unwrap();
        assert_eq!(t["retry"]["cap"].as_str(), Some("7s"));
        assert!(s[0].get("cap").is_none(), "a inherits [retry]");
        assert_eq!(s[1]["cap"].as_str(), Some("7s"));
        let out = set_text(src, "server.workers", Value::from(5)).unwrap();
        let t: toml::Table = toml::from_str(&out).unwrap();
        assert_eq!(t["server"]["workers"].as_integer(), Some(5));
        assert_eq!(t["strategy"][2]["server"]["workers"].as_integer(), Some(5));
    }

    #[test]
    fn impossible_paths_say_why() {
        let src = "[server]\nworkers = 4\n[[outage]]\nstart = \"1s\"\n";
        let e = set_text(src, "outage.start", Value::from("2s")).unwrap_err();
        assert!(e.contains("outage[0]"), "{e}");
        let e = set_text(src, "outage[3].start", Value::from("2s")).unwrap_err();
        assert!(e.contains("no entry [3]"), "{e}");
        let e = set_text(src, "server.workers.x", Value::from(1)).unwrap_err();
        assert!(e.contains("not a table"), "{e}");
    }
}
