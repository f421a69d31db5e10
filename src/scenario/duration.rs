//! Durations in scenario files: strings with a unit, such as "200ms", "2s", "1m 30s".

use std::fmt;

use serde::de::{self, Deserializer, Visitor};

use crate::engine::SimDuration;

/// A duration read from a scenario file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DurationValue(pub SimDuration);

/// What the error messages say a duration looks like.
pub const DURATION_HELP: &str =
    "a duration is a string with a unit: \"250us\", \"200ms\", \"2s\", \"1m 30s\"";

/// Parses "200ms", "2s", "1m 30s" (humantime syntax: ns, us, ms, s, m, h, ...).
pub fn parse_duration(text: &str) -> Result<SimDuration, String> {
    let d = humantime::parse_duration(text.trim())
        .map_err(|e| format!("invalid duration \"{text}\" ({e}); {DURATION_HELP}"))?;
    let ns = u64::try_from(d.as_nanos()).map_err(|_| format!("duration \"{text}\" is too long"))?;
    Ok(SimDuration(ns))
}

struct DurationVisitor;

impl Visitor<'_> for DurationVisitor {
    type Value = DurationValue;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(DURATION_HELP)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<DurationValue, E> {
        parse_duration(v).map(DurationValue).map_err(E::custom)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<DurationValue, E> {
        Err(E::custom(format!(
            "a duration needs a unit: write \"{v}ms\" or \"{v}s\", not {v}"
        )))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<DurationValue, E> {
        Err(E::custom(format!(
            "a duration needs a unit: write \"{v}s\" as milliseconds, e.g. \"{}ms\"",
            v * 1000.0
        )))
    }
}

impl<'de> serde::Deserialize<'de> for DurationValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(DurationVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_usual_units() {
        assert_eq!(parse_duration("200ms"), Ok(SimDuration::from_millis(200)));
        assert_eq!(parse_duration("2s"), Ok(SimDuration::from_secs(2)));
        assert_eq!(parse_duration("1m 30s"), Ok(SimDuration::from_secs(90)));
        assert_eq!(parse_duration("250us"), Ok(SimDuration(250_000)));
    }

    #[test]
    fn rejects_missing_units_and_garbage() {
        assert!(
            parse_duration("200")
                .unwrap_err()
                .contains("invalid duration \"200\"")
        );
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("fast").is_err());
    }
}
