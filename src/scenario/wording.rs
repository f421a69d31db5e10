//! Error messages in the reader's words: serde's Rust type names replaced by
//! what a scenario file holds, and a "did you mean" when a name is one slip
//! away from a valid one.

/// `message` (from the TOML deserialiser) in words a scenario's reader knows,
/// with a suggestion for a near-miss name; `key` is the key it is about.
pub fn humanize(message: &str, key: Option<&str>) -> String {
    if key.is_some_and(|k| k.ends_with("retry_after"))
        && message.starts_with("a duration needs a unit")
    {
        return "a Retry-After is a whole number of seconds with its unit, e.g. \"5s\"".into();
    }
    let mut m = message.to_string();
    for (rust, words) in [
        (
            "expected u32",
            "expected a whole number from 0 to 4294967295",
        ),
        ("expected u64", "expected a whole number"),
        ("expected f64", "expected a number"),
        ("expected a boolean", "expected true or false"),
        (
            "wanted exactly 1 element, more than 1 element",
            "expected a single value",
        ),
        ("wanted exactly 1 element", "expected a single value"),
        ("floating point", "number"),
        ("invalid type: ", ""),
    ] {
        m = m.replace(rust, words);
    }
    if let Some(i) = m.find("expected struct ") {
        let rest = &m[i + "expected struct ".len()..];
        let end = rest
            .find(|c: char| !c.is_alphanumeric())
            .unwrap_or(rest.len());
        m = format!("{}expected a table{}", &m[..i], &rest[end..]);
    }
    if let Some(s) = suggestion(&m) {
        m.push_str(&format!("; did you mean `{s}`?"));
    }
    m
}

/// For "unknown variant `x`, expected one of `a`, `b`" (or field): the valid
/// name nearest to `x`, if it is close (an edit distance of at most a third of
/// its length, or the same name with `_` for `-`).
fn suggestion(message: &str) -> Option<String> {
    let (head, valid) = message.split_once("expected one of ")?;
    let given = head.split('`').nth(1)?;
    let names: Vec<&str> = valid.split('`').skip(1).step_by(2).collect();
    let normal = |s: &str| s.to_ascii_lowercase().replace('_', "-");
    if let Some(n) = names.iter().find(|n| normal(n) == normal(given)) {
        return Some((*n).to_string());
    }
    let (best, distance) = names
        .iter()
        .map(|n| (n, edit_distance(&normal(given), &normal(n))))
        .min_by_key(|(_, d)| *d)?;
    (distance <= best.len().max(3) / 3).then(|| (*best).to_string())
}

/// Edit distance in characters, a swap of two neighbours counting as one edit
/// (the optimal string alignment distance): "grcp" is one slip from "grpc".
pub fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_type_names_become_words() {
        assert_eq!(
            humanize(
                "invalid type: floating point `1.5`, expected u32",
                Some("server.workers")
            ),
            "number `1.5`, expected a whole number from 0 to 4294967295"
        );
        assert_eq!(
            humanize("invalid type: integer `3`, expected struct RetryFile", None),
            "integer `3`, expected a table"
        );
    }

    #[test]
    fn near_misses_get_a_suggestion() {
        let m =
            "unknown variant `full_jitter`, expected one of `none`, `full-jitter`, `equal-jitter`";
        assert!(humanize(m, None).ends_with("did you mean `full-jitter`?"));
        let m = "unknown variant `exponental`, expected one of `none`, `exponential`, `linear`";
        assert!(humanize(m, None).ends_with("did you mean `exponential`?"));
        let m = "unknown variant `banana`, expected one of `none`, `exponential`";
        assert!(!humanize(m, None).contains("did you mean"));
    }

    #[test]
    fn a_bare_retry_after_is_told_whole_seconds() {
        let m = humanize(
            "a duration needs a unit: write \"1.5s\" as milliseconds, e.g. \"1500ms\"",
            Some("outage[0].retry_after"),
        );
        assert!(
            m.contains("whole number of seconds") && m.contains("\"5s\""),
            "{m}"
        );
    }

    #[test]
    fn edit_distance_counts_edits() {
        assert_eq!(edit_distance("grcp", "grpc"), 1);
        assert_eq!(edit_distance("exponental", "exponential"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
