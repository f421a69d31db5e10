//! `{ dist = "empirical", ... }`: measured values, inline (`samples`) or
//! from a file beside the scenario (`file`, one number per line in
//! `unit`), each draw one of them.

use std::path::Path;

use super::{Checked, Checker};
use crate::engine::SimDuration;
use crate::model::Dist;
use crate::scenario::duration::DurationValue;
use crate::scenario::locate::KeyPath;

/// Most values a sample file may hold (8 bytes each in memory).
pub const MAX_SAMPLES: usize = 10_000_000;

impl Checker<'_> {
    pub(super) fn empirical(
        &self,
        samples: Option<&[DurationValue]>,
        file: Option<&str>,
        unit: Option<&str>,
        key: &KeyPath,
    ) -> Checked<Dist> {
        let values = match (samples, file) {
            (Some(s), None) => {
                self.ensure(unit.is_none(), &key.join("unit"), || {
                    "unit is the unit of a file's numbers; samples carry their own".into()
                })?;
                s.iter().map(|v| v.0).collect()
            }
            (None, Some(f)) => self.sample_file(f, unit, key)?,
            _ => {
                return self.err(
                    key,
                    "an empirical distribution needs its values: samples = [\"4ms\", \"5ms\", \
                     \"31ms\"], or file = \"latencies.txt\" with unit = \"ms\" (one number per \
                     line), not both",
                );
            }
        };
        match Dist::empirical(values) {
            Some(d) => Ok(d),
            None => self.err(key, "an empirical distribution needs at least one value"),
        }
    }

    /// The values of sample file `name` (relative to the scenario's
    /// folder), each line a number in `unit`; blank lines and lines that
    /// start with `#` are skipped. Its checksum joins the scenario's inputs.
    fn sample_file(
        &self,
        name: &str,
        unit: Option<&str>,
        key: &KeyPath,
    ) -> Checked<Vec<SimDuration>> {
        let fkey = key.join("file");
        if !self.read_files {
            return self.err(
                &fkey,
                "sample files are read only from a scenario file on disk (sim run FILE); \
                 here, give the values inline: samples = [\"4ms\", \"5ms\"]",
            );
        }
        let scale = match unit {
            Some("ns") => 1.0,
            Some("us") => 1e3,
            Some("ms") => 1e6,
            Some("s") => 1e9,
            other => {
                return self.err(
                    &key.join("unit"),
                    format!(
                        "the unit of the file's numbers: \"ns\", \"us\", \"ms\" or \"s\", got {}",
                        other.map_or("none".into(), |u| format!("\"{u}\""))
                    ),
                );
            }
        };
        let dir = self.file.parent().unwrap_or(Path::new(""));
        let path = dir.join(name);
        let bytes = std::fs::read(&path).map_err(|e| {
            let why = format!("cannot read {}: {e}", path.display());
            crate::scenario::ScenarioError::at_key(self.file, self.src, &fkey, why)
        })?;
        let Ok(text) = std::str::from_utf8(&bytes) else {
            return self.err(&fkey, format!("{} is not UTF-8 text", path.display()));
        };
        let mut values = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let v = line
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0);
            let Some(v) = v else {
                return self.err(
                    &fkey,
                    format!(
                        "{} line {}: \"{line}\" is not a number of {} at least 0 (one value \
                         per line; # starts a comment)",
                        path.display(),
                        i + 1,
                        unit.unwrap_or("s")
                    ),
                );
            };
            values.push(SimDuration::from_nanos_f64(v * scale));
            if values.len() > MAX_SAMPLES {
                return self.err(
                    &fkey,
                    format!(
                        "{} holds more than {MAX_SAMPLES} values: summarise it as a histogram \
                         (dist = \"histogram\")",
                        path.display()
                    ),
                );
            }
        }
        self.inputs
            .borrow_mut()
            .push((name.to_owned(), crate::output::checksum(&bytes)));
        Ok(values)
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::{parse, parse_file};

    const SMALL: &str = include_str!("../../../tests/fixtures/small.toml");

    /// The playground's text (`parse`) may not read files; a scenario file
    /// (`parse_file`) reads its sample file from beside it, and the file's
    /// bytes are in the scenario's fingerprint.
    #[test]
    fn sample_files_are_read_beside_a_scenario_file_only() {
        let dir = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("s.toml");
        let text = SMALL.replacen(
            "service = ",
            "service = { dist = \"empirical\", file = \"v.txt\", unit = \"ms\" }\n# was: service = ",
            1,
        );
        assert!(text.contains("v.txt"), "the fixture has a service time");
        std::fs::write(dir.path().join("v.txt"), "3\n4\n").unwrap();
        let e = parse(&text, &path).unwrap_err();
        assert!(e.message.contains("scenario file on disk"), "{e}");
        let a = parse_file(&text, &path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(a.inputs.len(), 1);
        std::fs::write(dir.path().join("v.txt"), "3\n5\n").unwrap();
        let b = parse_file(&text, &path).unwrap();
        assert_ne!(a.fingerprint(&text), b.fingerprint(&text));
        let plain = parse(SMALL, &path).unwrap();
        assert_eq!(
            plain.fingerprint(SMALL),
            crate::output::checksum(SMALL.as_bytes())
        );
    }
}
