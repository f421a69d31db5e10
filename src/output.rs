//! Writing result files atomically: the bytes go to a hidden temporary file in
//! the same folder, which is then renamed over the target, so a reader never
//! sees a half-written file and a failed run leaves no partial one behind.

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
    fn failure_names_the_file() {
        let err = write_atomic(Path::new("/nonexistent/dir"), "a.csv", b"x").unwrap_err();
        assert!(format!("{err:#}").contains("/nonexistent/dir/a.csv"));
    }
}
