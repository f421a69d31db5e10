//! Finding where a key is in a TOML source, and which key a byte offset is in, so
//! every error can name both the key and the line.

use std::fmt;
use std::ops::Range;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// One step of a key path: a table key or an array index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    /// A key in a table.
    Key(String),
    /// An index in an array (arrays of tables included), from 0.
    Index(usize),
}

/// A key path such as `strategy[2].cap`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyPath(pub Vec<Seg>);

/// The most keys a parsed path may hold: a scenario's deepest key has five
/// (`strategy[0].budget.kind`), and the setters that follow a path recurse once
/// a key, so a longer one (from a sweep, or a playground request) is refused.
pub const MAX_SEGMENTS: usize = 16;

impl KeyPath {
    /// The path of a top-level key.
    pub fn key(name: &str) -> KeyPath {
        KeyPath(vec![Seg::Key(name.to_string())])
    }

    /// This path with `name` appended.
    pub fn join(&self, name: &str) -> KeyPath {
        let mut segs = self.0.clone();
        segs.push(Seg::Key(name.to_string()));
        KeyPath(segs)
    }

    /// This path with array index `i` appended.
    pub fn at(&self, i: usize) -> KeyPath {
        let mut segs = self.0.clone();
        segs.push(Seg::Index(i));
        KeyPath(segs)
    }
}

impl KeyPath {
    /// Reads a path as [`fmt::Display`] writes it (`strategy[2].cap`); `None` if
    /// it is not one.
    pub fn parse(text: &str) -> Option<KeyPath> {
        let mut segs = Vec::new();
        for part in text.split('.') {
            if segs.len() >= MAX_SEGMENTS {
                return None;
            }
            let (name, mut rest) = part.split_at(part.find('[').unwrap_or(part.len()));
            let bare = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
            if name.is_empty() || !name.chars().all(bare) {
                return None;
            }
            segs.push(Seg::Key(name.to_string()));
            while let Some(open) = rest.strip_prefix('[') {
                let (index, after) = open.split_once(']')?;
                segs.push(Seg::Index(index.parse().ok()?));
                rest = after;
            }
            if !rest.is_empty() {
                return None;
            }
        }
        Some(KeyPath(segs))
    }
}

impl fmt::Display for KeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, seg) in self.0.iter().enumerate() {
            match seg {
                Seg::Key(k) if i == 0 => write!(f, "{k}")?,
                Seg::Key(k) => write!(f, ".{k}")?,
                Seg::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

/// 1-based line and column of byte `offset` in `src`.
pub fn line_col(src: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(src.len());
    let before = &src[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rfind('\n').map_or(offset, |nl| offset - nl - 1) + 1;
    (line, col)
}

/// The byte range of the value at `path` in `src` (or of the closest enclosing
/// item that exists, so a missing key still points at its table).
pub fn span_of(src: &str, path: &KeyPath) -> Option<Range<usize>> {
    let root = DeTable::parse(src).ok()?;
    let mut span = None;
    let mut table = root.get_ref();
    let mut value: Option<&Spanned<DeValue>> = None;
    for seg in &path.0 {
        let next = match (seg, value.map(|v| v.get_ref())) {
            (Seg::Key(k), None) => table.get(k.as_str()),
            (Seg::Key(k), Some(DeValue::Table(t))) => t.get(k.as_str()),
            (Seg::Index(i), Some(DeValue::Array(a))) => a.get(*i),
            _ => None,
        };
        let Some(next) = next else { break };
        span = Some(next.span());
        value = Some(next);
        if let DeValue::Table(t) = next.get_ref() {
            table = t;
        }
    }
    span
}

/// The key path of the innermost key or value that contains byte `offset`.
pub fn path_at(src: &str, offset: usize) -> Option<KeyPath> {
    let (root, _) = DeTable::parse_recoverable(src);
    let mut path = KeyPath::default();
    let found = descend_table(root.get_ref(), offset, &mut path);
    let named = path
        .0
        .iter()
        .all(|s| !matches!(s, Seg::Key(k) if k.is_empty()));
    (found && named && !path.0.is_empty()).then_some(path)
}

fn contains(span: Range<usize>, offset: usize) -> bool {
    span.start <= offset && offset < span.end.max(span.start + 1)
}

/// Table spans cover only their `[header]`, so every child is searched, not just
/// those whose span holds the offset.
fn descend_table(table: &DeTable, offset: usize, path: &mut KeyPath) -> bool {
    for (key, value) in table.iter() {
        path.0.push(Seg::Key(key.get_ref().to_string()));
        if contains(key.span(), offset) || descend_value(value, offset, path) {
            return true;
        }
        path.0.pop();
    }
    false
}

fn descend_value(value: &Spanned<DeValue>, offset: usize, path: &mut KeyPath) -> bool {
    match value.get_ref() {
        DeValue::Table(t) => descend_table(t, offset, path) || contains(value.span(), offset),
        DeValue::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                path.0.push(Seg::Index(i));
                if descend_value(item, offset, path) {
                    return true;
                }
                path.0.pop();
            }
            contains(value.span(), offset)
        }
        _ => contains(value.span(), offset),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "seed = 1\n[server]\nworkers = 4\n\n[[strategy]]\nname = \"a\"\n\n[[strategy]]\nname = \"b\"\ncap = \"1s\"\n";

    #[test]
    fn finds_nested_keys_and_array_tables() {
        let span = span_of(SRC, &KeyPath::key("server").join("workers")).unwrap();
        assert_eq!(&SRC[span.clone()], "4");
        assert_eq!(line_col(SRC, span.start), (3, 11));
        let cap = span_of(SRC, &KeyPath::key("strategy").at(1).join("cap")).unwrap();
        assert_eq!(&SRC[cap.clone()], "\"1s\"");
        assert_eq!(line_col(SRC, cap.start).0, 10);
    }

    #[test]
    fn offset_maps_back_to_its_key() {
        let offset = SRC.find("\"1s\"").unwrap() + 1;
        assert_eq!(path_at(SRC, offset).unwrap().to_string(), "strategy[1].cap");
        let offset = SRC.find("workers").unwrap();
        assert_eq!(path_at(SRC, offset).unwrap().to_string(), "server.workers");
    }

    #[test]
    fn paths_parse_as_they_are_written() {
        for text in [
            "server.workers",
            "outage[0].length",
            "strategy[2].budget.max_tokens",
        ] {
            assert_eq!(KeyPath::parse(text).unwrap().to_string(), text);
        }
        for bad in ["", "a..b", "a[", "a[x]", "a]0[", "a b", "[0]"] {
            assert_eq!(KeyPath::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn missing_key_points_at_its_table() {
        let span = span_of(SRC, &KeyPath::key("server").join("queue")).unwrap();
        assert_eq!(&SRC[span], "[server]");
    }
}
