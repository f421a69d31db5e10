//! Writing results atomically. A file's bytes go to a hidden temporary file in
//! the same folder, then are renamed over the target, so a reader never sees a
//! half-written file. A whole results folder is built in a hidden staging
//! folder beside it and moved into place when complete ([`Staging`]), so an
//! output folder holds the files of exactly one run: a run that fails, is
//! killed or runs out of disk leaves the previous folder as it was.
//!
//! Before a folder is replaced, [`check_target`] makes sure it is one this tool
//! wrote (it has a `manifest.toml`) and holds nothing the run reads: an
//! output folder is never the current directory, the folder of the scenario,
//! or a folder holding a merge's shards.

pub mod shard;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Writes `bytes` to `dir/name` atomically.
pub fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> Result<PathBuf> {
    let target = dir.join(name);
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = (|| -> std::io::Result<()> {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, &target)
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("cannot write {}", target.display()));
    }
    Ok(target)
}

/// A results folder under construction: `dir()` is a hidden sibling of the
/// target, and [`Staging::commit`] replaces the target with it whole. Dropped
/// without a commit, it removes itself.
pub struct Staging {
    target: PathBuf,
    dir: PathBuf,
    committed: bool,
}

impl Staging {
    /// Creates the staging folder beside `target` (creating `target`'s parents),
    /// after removing stale staging folders that runs killed earlier left there.
    pub fn new(target: &Path) -> Result<Staging> {
        let (parent, name) = parent_and_name(target);
        fs::create_dir_all(parent)
            .with_context(|| format!("cannot create the output folder {}", parent.display()))?;
        recover(parent, &name, target);
        let dir = parent.join(format!(".{name}.{}.staging", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir(&dir)
            .with_context(|| format!("cannot create the output folder {}", target.display()))?;
        Ok(Staging {
            target: target.to_path_buf(),
            dir,
            committed: false,
        })
    }

    /// Where to write the run's files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes `manifest.toml` (`manifest`, then the list of files) last, then
    /// replaces the target folder with the staging folder. Returns the files,
    /// manifest included, sorted.
    pub fn commit(mut self, manifest: &str) -> Result<Vec<String>> {
        let mut files: Vec<String> = fs::read_dir(&self.dir)
            .with_context(|| format!("cannot read {}", self.dir.display()))?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        let list: Vec<String> = files.iter().map(|f| format!("\"{f}\"")).collect();
        let text = format!("{manifest}files = [{}]\n", list.join(", "));
        write_atomic(&self.dir, "manifest.toml", text.as_bytes())?;
        // The previous folder is kept as `.name.PID.old` until the new one is in
        // place; a kill between the two renames leaves it there, and the next
        // writer of this folder puts it back ([`recover`]).
        let old = self.dir.with_extension("old");
        if self.target.exists() {
            fs::rename(&self.target, &old).with_context(|| {
                format!("cannot replace the output folder {}", self.target.display())
            })?;
        }
        fs::rename(&self.dir, &self.target)
            .with_context(|| format!("cannot move the results into {}", self.target.display()))?;
        self.committed = true;
        let _ = fs::remove_dir_all(&old);
        files.push("manifest.toml".to_string());
        files.sort();
        Ok(files)
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

/// The folder `target` is in (`.` for a bare name) and its own name.
fn parent_and_name(target: &Path) -> (&Path, String) {
    let parent = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "results".to_string());
    (parent, name)
}

/// Puts back the previous results of `target` if a run killed while
/// replacing them left them aside, so that they are checked
/// ([`check_target`]) before anything replaces them.
pub fn restore(target: &Path) {
    let (parent, name) = parent_and_name(target);
    recover(parent, &name, target);
}

/// Tidies what writers of `target` that were killed left in `parent`: their
/// `.name.PID.staging` folders are removed, and a `.name.PID.old` folder (the
/// previous results, moved aside just before the new ones were moved in) is put
/// back as `target` when the kill came between the two renames, or removed
/// when the new folder made it into place. Only folders whose process is gone
/// are touched (Linux: no `/proc/PID`; elsewhere none is).
fn recover(parent: &Path, name: &str, target: &Path) {
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    let prefix = format!(".{name}.");
    let mut found: Vec<(String, PathBuf)> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let file = e.file_name().to_string_lossy().into_owned();
            let rest = file.strip_prefix(&prefix)?;
            let (pid, kind) = rest.split_once('.')?;
            pid.parse::<u32>().ok()?;
            let gone = Path::new("/proc").exists() && !Path::new("/proc").join(pid).exists();
            (gone && (kind == "staging" || kind == "old")).then(|| (kind.to_string(), e.path()))
        })
        .collect();
    // Sorted for a deterministic choice when several `.old` folders remain.
    found.sort();
    for (kind, path) in found {
        if kind == "old" && !target.exists() && fs::rename(&path, target).is_ok() {
            eprintln!(
                "note: restored {} from the previous run, which was stopped while replacing it",
                target.display()
            );
            continue;
        }
        let _ = fs::remove_dir_all(path);
    }
}

/// Why an output folder may not be replaced: a message for the user.
pub type TargetRefusal = String;

/// Checks that replacing the folder `target` loses nothing: it is not the
/// current directory or one of its parents, holds none of `inputs` (the
/// scenario file, a merge's shard folders), and, unless `force`, is new,
/// empty, or a results folder this tool wrote (it has a `manifest.toml`).
pub fn check_target(target: &Path, inputs: &[&Path], force: bool) -> Result<(), TargetRefusal> {
    if !target.exists() {
        return Ok(());
    }
    let shown = target.display();
    if !target.is_dir() {
        return Err(format!(
            "the output folder {shown} is a file, not a folder: give --out a folder"
        ));
    }
    let Ok(canonical) = target.canonicalize() else {
        return Ok(());
    };
    if let Ok(cwd) = std::env::current_dir().and_then(|d| d.canonicalize()) {
        if cwd.starts_with(&canonical) {
            return Err(format!(
                "the output folder {shown} is the current directory or holds it, and \
                 writing results there would delete everything in it: give --out a \
                 folder of its own, such as results/NAME"
            ));
        }
    }
    for input in inputs {
        if let Ok(input) = input.canonicalize() {
            if input.starts_with(&canonical) {
                return Err(format!(
                    "the output folder {shown} holds {}, which this command reads, and \
                     writing results there would delete it: give --out another folder",
                    input.display()
                ));
            }
        }
    }
    if force {
        return Ok(());
    }
    let empty = fs::read_dir(target).is_ok_and(|mut d| d.next().is_none());
    if empty {
        return Ok(());
    }
    match written_by_sim(target) {
        Ok(()) => Ok(()),
        Err(why) => Err(format!(
            "the output folder {shown} holds files and is not a results folder of sim \
             ({why}): writing there would delete them. Give --out a new folder, or add \
             --force to replace it"
        )),
    }
}

/// Whether `folder` is one this tool wrote and nothing else: its
/// `manifest.toml` reads as sim's (a `sim_version` and the list of its
/// `files`), and every entry of the folder is in that list. A file of that
/// name that is not sim's, or a file added beside the results, keeps the
/// folder from being replaced; the reason says which.
fn written_by_sim(folder: &Path) -> Result<(), String> {
    let text = fs::read_to_string(folder.join("manifest.toml"))
        .map_err(|_| "it has no manifest.toml".to_string())?;
    let manifest: toml::Table = text
        .parse()
        .map_err(|_| "its manifest.toml is not one sim wrote".to_string())?;
    let files: Option<Vec<&str>> = manifest
        .get("files")
        .and_then(|f| f.as_array())
        .and_then(|a| a.iter().map(|v| v.as_str()).collect());
    let (Some(_), Some(files)) = (manifest.get("sim_version").and_then(|v| v.as_str()), files)
    else {
        return Err("its manifest.toml is not one sim wrote".to_string());
    };
    let entries = fs::read_dir(folder).map_err(|e| format!("it cannot be read: {e}"))?;
    let mut extra: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        // A killed writer's temporary files (`.NAME.PID.tmp`) go with the
        // folder: they are sim's own.
        .filter(|name| !(name.starts_with('.') && name.ends_with(".tmp")))
        .filter(|name| name != "manifest.toml" && !files.contains(&name.as_str()))
        .collect();
    extra.sort();
    match extra.first() {
        None => Ok(()),
        Some(first) => Err(format!(
            "it holds {first}{}, which its manifest.toml does not list",
            match extra.len() {
                1 => String::new(),
                n => format!(" and {} more", n - 1),
            }
        )),
    }
}

/// 64-bit FNV-1a (Fowler, Noll and Vo): a stable hash, the same on every
/// machine and version.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// [`fnv1a`] of `bytes`, in hex: catches damage (a truncated copy, an
/// edit, a flipped byte), not forgery.
pub fn checksum(bytes: &[u8]) -> String {
    format!("{:016x}", fnv1a(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_replaces_without_leftovers() {
        let dir = tempfile::tempdir().unwrap();
        write_atomic(dir.path(), "a.csv", b"one").unwrap();
        write_atomic(dir.path(), "a.csv", b"two").unwrap();
        assert_eq!(fs::read(dir.path().join("a.csv")).unwrap(), b"two");
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["a.csv"]);
    }

    #[test]
    fn a_staged_folder_replaces_the_old_one_whole() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("out");
        fs::create_dir(&target).unwrap();
        fs::write(target.join("stale.png"), b"old run").unwrap();
        let staging = Staging::new(&target).unwrap();
        write_atomic(staging.dir(), "summary.csv", b"new").unwrap();
        staging.commit("seed = 1\n").unwrap();
        let mut names: Vec<_> = fs::read_dir(&target)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["manifest.toml", "summary.csv"]);
        let manifest = fs::read_to_string(target.join("manifest.toml")).unwrap();
        assert_eq!(manifest, "seed = 1\nfiles = [\"summary.csv\"]\n");
        // Nothing else is left beside it.
        assert_eq!(fs::read_dir(root.path()).unwrap().count(), 1);
    }

    #[test]
    fn an_uncommitted_staging_folder_leaves_the_old_one_alone() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("out");
        fs::create_dir(&target).unwrap();
        fs::write(target.join("summary.csv"), b"old").unwrap();
        {
            let staging = Staging::new(&target).unwrap();
            write_atomic(staging.dir(), "summary.csv", b"half").unwrap();
        }
        assert_eq!(fs::read(target.join("summary.csv")).unwrap(), b"old");
        assert_eq!(fs::read_dir(root.path()).unwrap().count(), 1);
        // A staging folder left by a process that is gone is cleared.
        let dead = root.path().join(".out.4000000000.staging");
        fs::create_dir(&dead).unwrap();
        drop(Staging::new(&target).unwrap());
        assert!(!dead.exists());
    }

    #[test]
    fn a_kill_between_the_renames_is_undone_by_the_next_writer() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("out");
        // What a kill after the first rename leaves: no folder, the previous
        // results aside under a dead process's number.
        let aside = root.path().join(".out.4000000000.old");
        fs::create_dir(&aside).unwrap();
        fs::write(aside.join("summary.csv"), b"previous").unwrap();
        let staging = Staging::new(&target).unwrap();
        assert_eq!(fs::read(target.join("summary.csv")).unwrap(), b"previous");
        assert!(!aside.exists());
        drop(staging);
        // A kill after the second rename: the new folder is in place and the
        // old one is only removed.
        fs::create_dir(&aside).unwrap();
        drop(Staging::new(&target).unwrap());
        assert!(!aside.exists());
        assert_eq!(fs::read(target.join("summary.csv")).unwrap(), b"previous");
    }

    #[test]
    fn only_results_folders_may_be_replaced() {
        let root = tempfile::tempdir().unwrap();
        let new = root.path().join("new");
        assert_eq!(check_target(&new, &[], false), Ok(()));
        fs::create_dir(&new).unwrap();
        assert_eq!(check_target(&new, &[], false), Ok(()), "an empty folder");
        fs::write(new.join("notes.txt"), b"mine").unwrap();
        let refused = check_target(&new, &[], false).unwrap_err();
        assert!(refused.contains("no manifest.toml"), "{refused}");
        assert!(refused.contains("--force"), "{refused}");
        assert_eq!(check_target(&new, &[], true), Ok(()));
        // A manifest.toml that is not sim's does not make a results folder
        // (the reproducer: a junk file of that name let a run delete
        // notes.txt).
        fs::write(new.join("manifest.toml"), b"x").unwrap();
        let refused = check_target(&new, &[], false).unwrap_err();
        assert!(refused.contains("not one sim wrote"), "{refused}");
        // Nor does sim's manifest beside a file it does not list.
        fs::write(
            new.join("manifest.toml"),
            "sim_version = \"0.1.0\"\nfiles = [\"summary.csv\"]\n",
        )
        .unwrap();
        fs::write(new.join("summary.csv"), b"a").unwrap();
        let refused = check_target(&new, &[], false).unwrap_err();
        assert!(refused.contains("holds notes.txt"), "{refused}");
        fs::remove_file(new.join("notes.txt")).unwrap();
        assert_eq!(check_target(&new, &[], false), Ok(()));
        // Never the folder of an input, even with --force.
        let scenario = new.join("s.toml");
        fs::write(&scenario, b"").unwrap();
        let refused = check_target(&new, &[&scenario], true).unwrap_err();
        assert!(refused.contains("s.toml"), "{refused}");
        // Never a file.
        assert!(check_target(&scenario, &[], true).is_err());
    }

    #[test]
    fn failure_names_the_file() {
        let err = write_atomic(Path::new("/nonexistent/dir"), "a.csv", b"x").unwrap_err();
        assert!(format!("{err:#}").contains("/nonexistent/dir/a.csv"));
    }
}
