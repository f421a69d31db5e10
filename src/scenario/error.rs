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
            let (shown, caret) = excerpt_window(text, col);
            let pad = " ".repeat(gutter);
            write!(
                f,
                "\n{pad} |\n{line} | {shown}\n{pad} | {}^",
                " ".repeat(caret)
            )?;
        }
        Ok(())
    }
}

/// At most this many characters of the offending line are shown.
const EXCERPT_CHARS: usize = 100;

/// The part of `text` to show around column `col` (1-based, in characters),
/// and how many characters precede the caret in it: the whole line when it is
/// short, else a window around the column marked with "..." at the cut ends,
/// so a very long line cannot make the message (or its caret) huge.
fn excerpt_window(text: &str, col: usize) -> (String, usize) {
    let chars: Vec<char> = text.chars().collect();
    let at = col.saturating_sub(1).min(chars.len());
    if chars.len() <= EXCERPT_CHARS {
        return (text.to_string(), at);
    }
    let from = at.saturating_sub(EXCERPT_CHARS / 2);
    let to = (from + EXCERPT_CHARS).min(chars.len());
    let mut shown = String::new();
    if from > 0 {
        shown.push_str("...");
    }
    shown.extend(&chars[from..to]);
    if to < chars.len() {
        shown.push_str("...");
    }
    (shown, at - from + if from > 0 { 3 } else { 0 })
}

#[cfg(test)]
mod excerpt_tests {
    use super::*;

    #[test]
    fn a_short_line_is_shown_whole() {
        assert_eq!(
            excerpt_window("cap = \"1s\"", 7),
            ("cap = \"1s\"".to_string(), 6)
        );
    }

    #[test]
    fn a_column_far_along_a_long_line_is_shown_in_a_window() {
        // The fuzzer's case: a value, 65 535 spaces, then the offending `x`.
        let text = format!("duration = \"1s\"{}x", " ".repeat(65_535));
        let col = text.chars().count();
        let (shown, caret) = excerpt_window(&text, col);
        assert!(shown.starts_with("...") && shown.ends_with('x'), "{shown}");
        assert!(shown.chars().count() <= EXCERPT_CHARS + 6);
        assert_eq!(shown.chars().nth(caret), Some('x'));
    }
}
