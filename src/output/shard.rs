//! Shards: the runs of a sweep, or the searches of a tipping-point search
//! (its "cells"), split into N disjoint sets, run anywhere, and merged back
//! into the output an unsharded run writes, byte for byte.
//!
//! Shard `i` of `n` (1-based) holds the cells whose number is `i - 1` modulo `n`,
//! so cheap and expensive points spread evenly over the shards. A shard folder
//! holds:
//!
//! - `shard.toml`: which shard it is, of which scenario, seed and sim version,
//!   and a checksum of each of the other files, so a damaged or truncated shard
//!   is refused rather than merged;
//! - `scenario.toml`: the scenario text, so a merge needs nothing else;
//! - `cells.csv`: every cell's numbers (a sweep's figures, a search's
//!   outcome), in columns the caller names, written as the shortest decimal
//!   that reads back as the same `f64`, so merging loses nothing;
//! - `timeline.csv`: attempts and successes per bucket of the cells a sweep's
//!   `timeline.png` shows, if the shard has any.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Version of the shard folder layout (2: checksums of the files; 3: a
/// checksum of `shard.toml`'s own fields).
pub const FORMAT: u32 = 3;

/// One cell of a shard: its number, its values in the caller's columns, and
/// (a sweep's) attempts and successes per bucket.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    /// Its number in the whole run.
    pub index: usize,
    /// Its values, one per column.
    pub values: Vec<Option<f64>>,
    /// Attempts and successes per bucket, if kept.
    pub timeline: Option<Vec<(u64, u64)>>,
}

/// The files of a shard folder besides `shard.toml`, each with a checksum there.
const DATA_FILES: [&str; 3] = ["scenario.toml", "cells.csv", "timeline.csv"];

/// `I/N` from the command line: shard `index` (1-based) of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShardSpec {
    /// This shard, from 1.
    pub index: u32,
    /// How many shards.
    pub count: u32,
}

impl ShardSpec {
    /// Reads "2/8".
    pub fn parse(text: &str) -> Result<ShardSpec, String> {
        let bad = || format!("--shard takes I/N with 1 <= I <= N, e.g. 2/8; got \"{text}\"");
        let (i, n) = text.split_once('/').ok_or_else(bad)?;
        let (index, count) = (
            i.trim().parse::<u32>().map_err(|_| bad())?,
            n.trim().parse::<u32>().map_err(|_| bad())?,
        );
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(ShardSpec { index, count })
    }

    /// The cells of this shard, among `total`.
    pub fn cells(self, total: usize) -> Vec<usize> {
        (self.index as usize - 1..total)
            .step_by(self.count as usize)
            .collect()
    }

    /// The shard's folder name: `shard-2-of-8`.
    pub fn folder(self) -> String {
        format!("shard-{}-of-{}", self.index, self.count)
    }
}

/// `shard.toml`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// [`FORMAT`] of the writer.
    pub format: u32,
    /// The sim version that ran the shard; merges need one version throughout.
    pub sim_version: String,
    /// Scenario name.
    pub scenario: String,
    /// The scenario file the shard was run from (for messages).
    pub source: String,
    /// FNV-1a of the scenario text, in hex.
    pub fingerprint: String,
    /// The seed the shard ran with (the file's, or --seed).
    pub seed: u64,
    /// This shard, from 1.
    pub shard: u32,
    /// How many shards.
    pub shards: u32,
    /// Cells in the whole sweep.
    pub cells: usize,
    /// FNV-1a of each other file's bytes, in hex, by file name.
    pub checksums: std::collections::BTreeMap<String, String>,
    /// FNV-1a of this file as written with this field empty: an edited
    /// seed, shard count or checksum is refused, not merged.
    pub own_checksum: String,
}

impl Manifest {
    /// The checksum of the other fields ([`Manifest::own_checksum`]).
    fn own(&self) -> Result<String, String> {
        let mut bare = self.clone();
        bare.own_checksum = String::new();
        toml::to_string(&bare)
            .map(|t| checksum(t.as_bytes()))
            .map_err(|e| e.to_string())
    }
}

/// 64-bit FNV-1a (Fowler, Noll and Vo): enough to tell scenario texts apart.
pub fn fingerprint(text: &str) -> String {
    checksum(text.as_bytes())
}

/// 64-bit FNV-1a of `bytes`, in hex ([`crate::output::checksum`]).
pub use crate::output::checksum;

/// A shard folder that cannot be read or does not fit with the others.
#[derive(Debug, thiserror::Error)]
#[error("{}: {message}", dir.display())]
pub struct ShardError {
    /// The shard folder.
    pub dir: PathBuf,
    /// What is wrong.
    pub message: String,
}

/// The files of one shard, as (name, bytes): its `cells` with their values
/// in `columns`.
pub fn files(
    manifest: &Manifest,
    scenario_text: &str,
    columns: &[&str],
    cells: &[Cell],
) -> Result<Vec<(&'static str, Vec<u8>)>, String> {
    let mut table = csv::Writer::from_writer(Vec::new());
    let mut header = vec!["cell".to_string()];
    header.extend(columns.iter().map(|c| c.to_string()));
    table.write_record(&header).map_err(|e| e.to_string())?;
    let mut timeline = csv::Writer::from_writer(Vec::new());
    timeline
        .write_record(["cell", "bucket", "attempts", "successes"])
        .map_err(|e| e.to_string())?;
    for c in cells {
        let mut row = vec![c.index.to_string()];
        // Display of an f64 is the shortest text that parses back to it.
        row.extend(
            c.values
                .iter()
                .map(|v| v.map_or(String::new(), |v| v.to_string())),
        );
        table.write_record(&row).map_err(|e| e.to_string())?;
        for (i, (attempts, successes)) in c.timeline.iter().flatten().enumerate() {
            timeline
                .write_record([
                    c.index.to_string(),
                    i.to_string(),
                    attempts.to_string(),
                    successes.to_string(),
                ])
                .map_err(|e| e.to_string())?;
        }
    }
    let bytes = |w: csv::Writer<Vec<u8>>| w.into_inner().map_err(|e| e.to_string());
    let data: [(&'static str, Vec<u8>); 3] = [
        ("scenario.toml", scenario_text.as_bytes().to_vec()),
        ("cells.csv", bytes(table)?),
        ("timeline.csv", bytes(timeline)?),
    ];
    let mut manifest = manifest.clone();
    manifest.checksums = data
        .iter()
        .map(|(name, b)| (name.to_string(), checksum(b)))
        .collect();
    manifest.own_checksum = manifest.own()?;
    let manifest_text = toml::to_string(&manifest).map_err(|e| e.to_string())?;
    let mut out = vec![("shard.toml", manifest_text.into_bytes())];
    out.extend(data);
    Ok(out)
}

/// One shard, read back.
#[derive(Debug)]
pub struct Shard {
    /// Its folder.
    pub dir: PathBuf,
    /// `shard.toml`.
    pub manifest: Manifest,
    /// `scenario.toml`.
    pub scenario_text: String,
    /// Its cells, in the order written.
    pub cells: Vec<Cell>,
}

/// Reads the shard folder `dir`, whose cells have values in `columns`.
#[expect(
    clippy::too_many_lines,
    reason = "reads and checks a shard's files one by one"
)]
pub fn read(dir: &Path, columns: &[&str]) -> Result<Shard, ShardError> {
    let fail = |message: String| ShardError {
        dir: dir.to_path_buf(),
        message,
    };
    let read_bytes = |name: &str| {
        std::fs::read(dir.join(name)).map_err(|e| {
            fail(format!(
                "cannot read {name} ({e}); a shard folder is what `sim run --shard I/N` writes"
            ))
        })
    };
    let as_text = |name: &str, bytes: Vec<u8>| {
        String::from_utf8(bytes).map_err(|_| fail(format!("{name} is not UTF-8 text")))
    };
    let manifest_text = as_text("shard.toml", read_bytes("shard.toml")?)?;
    let format = manifest_text
        .parse::<toml::Table>()
        .ok()
        .and_then(|t| t.get("format").and_then(toml::Value::as_integer));
    if format.is_some_and(|f| f != i64::from(FORMAT)) {
        return Err(fail(format!(
            "shard format {} is not {FORMAT}, the one this sim reads: run the shard again \
             with this sim",
            format.unwrap_or_default()
        )));
    }
    let manifest: Manifest = toml::from_str(&manifest_text)
        .map_err(|e| fail(format!("shard.toml: {}", e.message().trim_end())))?;
    if manifest.own().ok().as_ref() != Some(&manifest.own_checksum) {
        return Err(fail(
            "shard.toml does not match its own checksum: it was edited or damaged (its seed, \
             shard count or checksums can no longer be trusted); run this shard again"
                .into(),
        ));
    }
    // The folder's manifest.toml is written last: without it the shard run
    // did not finish.
    if !dir.join("manifest.toml").is_file() {
        return Err(fail(
            "has no manifest.toml, which a shard run writes last: the run did not finish \
             or the folder was changed; run this shard again"
                .into(),
        ));
    }
    if manifest.shards == 0 || manifest.shard == 0 || manifest.shard > manifest.shards {
        return Err(fail(format!(
            "shard.toml: shard {} of {} is not a shard (1 <= shard <= shards)",
            manifest.shard, manifest.shards
        )));
    }
    let mut data = std::collections::BTreeMap::new();
    for name in DATA_FILES {
        let bytes = read_bytes(name)?;
        let expected = manifest.checksums.get(name).ok_or_else(|| {
            fail(format!(
                "shard.toml has no checksum of {name}: it was edited"
            ))
        })?;
        if &checksum(&bytes) != expected {
            return Err(fail(format!(
                "{name} does not match its checksum in shard.toml: it is damaged, truncated \
                 or was edited; run this shard again"
            )));
        }
        data.insert(name, as_text(name, bytes)?);
    }
    let take = |data: &mut std::collections::BTreeMap<&str, String>, name| {
        data.remove(name).unwrap_or_default()
    };
    let scenario_text = take(&mut data, "scenario.toml");
    if fingerprint(&scenario_text) != manifest.fingerprint {
        return Err(fail(
            "scenario.toml does not match the fingerprint in shard.toml: it was edited".into(),
        ));
    }
    let mut cells = Vec::new();
    let mut index = std::collections::BTreeMap::new();
    let cells_text = take(&mut data, "cells.csv");
    let mut table = csv::Reader::from_reader(cells_text.as_bytes());
    let expected: Vec<&str> = std::iter::once("cell")
        .chain(columns.iter().copied())
        .collect();
    let header = table
        .headers()
        .map_err(|e| fail(format!("cells.csv: {e}")))?
        .clone();
    if header.iter().collect::<Vec<_>>() != expected {
        return Err(fail(format!(
            "cells.csv has columns {:?}, expected {expected:?}",
            header.iter().collect::<Vec<_>>()
        )));
    }
    for (line, record) in table.records().enumerate() {
        let at = |m: String| fail(format!("cells.csv row {}: {m}", line + 2));
        let record = record.map_err(|e| at(e.to_string()))?;
        let cell: usize = record[0]
            .parse()
            .map_err(|_| at(format!("cell \"{}\" is not a number", &record[0])))?;
        let mut values = vec![None; columns.len()];
        for (slot, text) in values.iter_mut().zip(record.iter().skip(1)) {
            if !text.is_empty() {
                let v = text
                    .parse::<f64>()
                    .ok()
                    .filter(|v| !v.is_nan())
                    .ok_or_else(|| at(format!("\"{text}\" is not a number")))?;
                *slot = Some(v);
            }
        }
        if index.insert(cell, cells.len()).is_some() {
            return Err(at(format!("cell {cell} appears twice")));
        }
        cells.push(Cell {
            index: cell,
            values,
            timeline: None,
        });
    }
    let timeline_text = take(&mut data, "timeline.csv");
    let mut timeline = csv::Reader::from_reader(timeline_text.as_bytes());
    for (line, record) in timeline.records().enumerate() {
        let at = |m: String| fail(format!("timeline.csv row {}: {m}", line + 2));
        let record = record.map_err(|e| at(e.to_string()))?;
        let num = |i: usize| -> Result<u64, ShardError> {
            record
                .get(i)
                .and_then(|t| t.parse().ok())
                .ok_or_else(|| at(format!("column {} is not a whole number", i + 1)))
        };
        let (cell, bucket) = (num(0)? as usize, num(1)? as usize);
        let Some(&k) = index.get(&cell) else {
            return Err(at(format!("cell {cell} is not in cells.csv")));
        };
        let bins = cells[k].timeline.get_or_insert_with(Vec::new);
        if bins.len() != bucket {
            return Err(at(format!("bucket {bucket} is out of order")));
        }
        bins.push((num(2)?, num(3)?));
    }
    Ok(Shard {
        dir: dir.to_path_buf(),
        manifest,
        scenario_text,
        cells,
    })
}

/// The shards are every shard of one run, each once; the first's manifest
/// says which run.
fn check_complete(shards: &[Shard]) -> Result<(), ShardError> {
    let Some(first) = shards.first() else {
        return Ok(());
    };
    let m0 = &first.manifest;
    let mut seen = vec![None::<PathBuf>; m0.shards as usize];
    for s in shards {
        let m = &s.manifest;
        let fail = |message: String| ShardError {
            dir: s.dir.clone(),
            message,
        };
        let same = m.fingerprint == m0.fingerprint
            && m.seed == m0.seed
            && m.shards == m0.shards
            && m.cells == m0.cells
            && m.sim_version == m0.sim_version;
        if !same {
            return Err(fail(format!(
                "is not from the same run as {}: scenario, seed, shard count or sim version differ",
                first.dir.display()
            )));
        }
        let slot = seen
            .get_mut(m.shard as usize - 1)
            .ok_or_else(|| fail(format!("shard {} of {} is out of range", m.shard, m.shards)))?;
        if let Some(other) = slot.replace(s.dir.clone()) {
            return Err(fail(format!(
                "shard {} is given twice (also {})",
                m.shard,
                other.display()
            )));
        }
    }
    let missing: Vec<String> = seen
        .iter()
        .enumerate()
        .filter(|(_, d)| d.is_none())
        .map(|(i, _)| (i + 1).to_string())
        .collect();
    if !missing.is_empty() {
        return Err(ShardError {
            dir: first.dir.clone(),
            message: format!(
                "shards {} of {} are missing; a merge needs every shard",
                missing.join(", "),
                m0.shards
            ),
        });
    }
    Ok(())
}

/// Every cell in cell order, from a complete set of shards of one run of
/// `total` cells (what the scenario in the shards says).
pub fn combine(
    shards: Vec<Shard>,
    total: usize,
) -> Result<(Manifest, String, Vec<Cell>), ShardError> {
    let Some(first) = shards.first() else {
        return Err(ShardError {
            dir: PathBuf::from("."),
            message: "no shard folders given".into(),
        });
    };
    let (m0, text) = (first.manifest.clone(), first.scenario_text.clone());
    if m0.cells != total {
        return Err(ShardError {
            dir: first.dir.clone(),
            message: format!(
                "shard.toml says the sweep has {} runs, and its scenario has {total}: it was \
                 edited",
                m0.cells
            ),
        });
    }
    // Every shard must be given, so a count far above the folders given is
    // an error here, before anything the size of the count is allocated (a
    // few missing are listed below).
    if m0.shards as usize > shards.len().max(10_000) {
        return Err(ShardError {
            dir: first.dir.clone(),
            message: format!(
                "is shard {} of {}, and {} shard folders were given; a merge needs every shard",
                m0.shard,
                m0.shards,
                shards.len()
            ),
        });
    }
    check_complete(&shards)?;
    let mut results: Vec<Option<Cell>> = vec![None; m0.cells];
    for s in shards {
        let spec = ShardSpec {
            index: s.manifest.shard,
            count: s.manifest.shards,
        };
        let expected = spec.cells(m0.cells);
        let got: Vec<usize> = s.cells.iter().map(|c| c.index).collect();
        if got != expected {
            return Err(ShardError {
                dir: s.dir,
                message: format!(
                    "holds {} cells, not the {} of shard {}: it is incomplete or was edited",
                    got.len(),
                    expected.len(),
                    spec.index
                ),
            });
        }
        for c in s.cells {
            let at = c.index;
            results[at] = Some(c);
        }
    }
    Ok((m0, text, results.into_iter().flatten().collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_specs_parse_and_partition_the_cells() {
        assert_eq!(
            ShardSpec::parse("2/3"),
            Ok(ShardSpec { index: 2, count: 3 })
        );
        for bad in ["0/3", "4/3", "3", "a/b", "1/0", ""] {
            assert!(ShardSpec::parse(bad).is_err(), "{bad}");
        }
        let mut all: Vec<usize> = (1..=3)
            .flat_map(|i| ShardSpec { index: i, count: 3 }.cells(10))
            .collect();
        all.sort();
        assert_eq!(all, (0..10).collect::<Vec<_>>());
        // More shards than cells: the extra shards are empty, not an error.
        assert!(ShardSpec { index: 5, count: 5 }.cells(3).is_empty());
    }

    #[test]
    fn figures_survive_the_text_round_trip_exactly() {
        let columns = ["a", "b", "c", "d"];
        let r = Cell {
            index: 0,
            values: vec![
                Some(0.1 + 0.2),
                Some(1e-300),
                None,
                Some(123_456_789.012_345_68),
            ],
            timeline: Some(vec![(3, 1)]),
        };
        let m = Manifest {
            format: FORMAT,
            sim_version: "x".into(),
            scenario: "s".into(),
            source: "s.toml".into(),
            fingerprint: fingerprint("text"),
            seed: 1,
            shard: 1,
            shards: 1,
            cells: 1,
            checksums: Default::default(),
            own_checksum: String::new(),
        };
        let dir = tempfile::tempdir().unwrap();
        for (name, bytes) in files(&m, "text", &columns, std::slice::from_ref(&r)).unwrap() {
            std::fs::write(dir.path().join(name), bytes).unwrap();
        }
        // What the shard run's folder gets last.
        std::fs::write(dir.path().join("manifest.toml"), b"").unwrap();
        let back = read(dir.path(), &columns).unwrap();
        assert_eq!(back.manifest.checksums.len(), DATA_FILES.len());
        assert_eq!(back.cells, vec![r]);
        // Read as another kind of run's shard, its columns are refused.
        let err = read(dir.path(), &columns[1..]).unwrap_err().to_string();
        assert!(err.contains("cells.csv has columns"), "{err}");
        // A truncated file is refused by its checksum.
        let cells = dir.path().join("cells.csv");
        let mut bytes = std::fs::read(&cells).unwrap();
        bytes.pop();
        std::fs::write(&cells, bytes).unwrap();
        let err = read(dir.path(), &columns).unwrap_err().to_string();
        assert!(
            err.contains("cells.csv does not match its checksum"),
            "{err}"
        );
    }
}
