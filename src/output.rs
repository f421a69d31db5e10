//! Writing results atomically. A file's bytes go to a hidden temporary file in
//! the same folder, then are renamed over the target, so a reader never sees a
//! half-written file. A whole results folder is built in a hidden staging
//! folder beside it and moved into place when complete ([`Staging`]), so an
//! output folder holds the files of exactly one run: a run that fails, is
//! killed or runs out of disk leaves the previous folder as it was.

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
        let parent = target
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "results".to_string());
        fs::create_dir_all(parent)
            .with_context(|| format!("cannot create the output folder {}", parent.display()))?;
        remove_stale(parent, &name);
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

/// Removes `.name.PID.staging` and `.name.PID.old` folders in `parent` whose
/// process is gone (Linux: no `/proc/PID`; elsewhere none is removed).
fn remove_stale(parent: &Path, name: &str) {
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    let prefix = format!(".{name}.");
    for e in entries.filter_map(|e| e.ok()) {
        let file = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = file.strip_prefix(&prefix) else {
            continue;
        };
        let Some((pid, kind)) = rest.split_once('.') else {
            continue;
        };
        let gone = Path::new("/proc").exists() && !Path::new("/proc").join(pid).exists();
        if gone && pid.parse::<u32>().is_ok() && (kind == "staging" || kind == "old") {
            let _ = fs::remove_dir_all(e.path());
        }
    }
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
    fn failure_names_the_file() {
        let err = write_atomic(Path::new("/nonexistent/dir"), "a.csv", b"x").unwrap_err();
        assert!(format!("{err:#}").contains("/nonexistent/dir/a.csv"));
    }
}
