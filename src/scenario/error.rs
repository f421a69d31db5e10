//! Input errors: each names the file, the key, the line and what would be valid.

use std::fmt;
use std::path::{Path, PathBuf};

use super::locate::{KeyPath, line_col, path_at, span_of};

/// A scenario file that cannot be used. Exit code 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file.
    pub file: PathBuf,
    /// The key at fault, when known.
    pub key: Option<String>,
    /// 1-based line and column, when known.
    pub position: Option<(usize, usize)>,
    /// What is wrong and what would be valid.
    pub message: String,
    /// The offending source line, for display.
    pub excerpt: Option<String>,
}

impl std::error::Error for ScenarioError {}

impl ScenarioError {
    /// An error about the file as a whole (missing, unreadable, empty).
    pub fn file(file: &Path, message: impl Into<String>) -> Self {
        ScenarioError {
            file: file.to_path_buf(),
            key: None,
            position: None,
            message: message.into(),
            excerpt: None,
        }
    }

    /// An error at `key` of `src`.
    pub fn at_key(file: &Path, src: &str, key: &KeyPath, message: impl Into<String>) -> Self {
        let span = span_of(src, key);
        let mut e = Self::at_offset(file, src, span.map(|s| s.start), message);
        e.key = Some(key.to_string());
        e
    }

    /// An error at byte `offset` of `src` (the key is found from the offset).
    pub fn at_offset(
        file: &Path,
        src: &str,
        offset: Option<usize>,
        message: impl Into<String>,
    ) -> Self {
        let position = offset.map(|o| line_col(src, o));
        let excerpt = position
            .and_then(|(line, _)| src.lines().nth(line - 1))
            .map(str::to_string);
        ScenarioError {
            file: file.to_path_buf(),
            key: offset.and_then(|o| path_at(src, o)).map(|p| p.to_string()),
            position,
            message: message.into(),
            excerpt,
        }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some((line, col)) = self.position {
            write!(f, ":{line}:{col}")?;
        }
        if let Some(key) = &self.key {
            write!(f, ": key `{key}`")?;
        }
        write!(f, ": {}", self.message)?;
        if let (Some((line, col)), Some(text)) = (self.position, &self.excerpt) {
            let gutter = line.to_string().len();
            write!(
                f,
                "\n{:gutter$} |\n{line} | {text}\n{:gutter$} | {:>col$}",
                "", "", "^"
            )?;
        }
        Ok(())
    }
}
