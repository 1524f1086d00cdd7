//! Fixture files: one JSON file, one case.
//!
//! A suite is a folder; every `*.json` file below it is a case, except those under the
//! recordings folder and under `.proposal-eval/`. Parsing is strict: an unknown key is an error
//! that names the key, the file, the line and column, and the known keys, so a typo never turns a
//! check off silently.

use crate::path::Pattern;
use serde::Deserialize;
use serde_json::Value;
use std::fmt;
use std::path::{Path, PathBuf};

/// Whether a case runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The case runs (the default).
    #[default]
    Active,
    /// A drafted case, not yet reviewed: an ignored test.
    Draft,
    /// A case waiting for a person to complete it: an ignored test.
    NeedsHumanInput,
}

/// The content of a fixture file, as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixtureFile {
    /// What the case is about; shown in reports.
    #[serde(default)]
    pub description: Option<String>,
    /// Handed to the code under test as `case.input`.
    #[serde(default)]
    pub input: Value,
    /// The expected output: an array of proposals (strict) or an object (field accuracy).
    #[serde(default, alias = "expectedDataProposal")]
    pub expected: Option<Value>,
    /// Replaces the suite's ignore paths for this case; `[]` ignores nothing.
    #[serde(default, alias = "ignorePaths")]
    pub ignore_paths: Option<Vec<Pattern>>,
    /// Extra files (crate-relative) whose content belongs to this case's recording.
    #[serde(default)]
    pub sources: Vec<String>,
    /// `active` (default), `draft` or `needs_human_input`.
    #[serde(default)]
    pub status: Status,
    /// Lineage and rubric of a case drafted from a production failure.
    #[serde(default)]
    pub draft: Option<crate::draft::Draft>,
}

/// A file of the user's (fixture, config, recording) that could not be read or understood, with
/// the place in it: printed as `file:line:column: message`, as compilers do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileError {
    /// The file (crate-relative when found by discovery).
    pub file: PathBuf,
    /// 1-based line (0 when unknown or when the file could not be read at all).
    pub line: usize,
    /// 1-based column (0 when unknown).
    pub column: usize,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// A fixture that could not be read or understood.
pub type FixtureError = FileError;

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(
                f,
                "{}:{}:{}: {}",
                self.file.display(),
                self.line,
                self.column,
                self.message
            )
        } else {
            write!(f, "{}: {}", self.file.display(), self.message)
        }
    }
}

impl std::error::Error for FileError {}

impl FixtureFile {
    /// Parses a fixture; `file` is used in error messages.
    ///
    /// ```
    /// use proposal_eval::fixture::FixtureFile;
    /// let ok = FixtureFile::parse(br#"{"input": {"m": 1}, "expected": []}"#, "a.json").unwrap();
    /// assert_eq!(ok.input["m"], 1);
    ///
    /// let err = FixtureFile::parse(b"{\n  \"expcted\": []\n}", "suite/a.json").unwrap_err();
    /// assert_eq!((err.line, err.column), (2, 3));
    /// assert!(err.to_string().contains("unknown field `expcted`"));
    /// assert!(err.to_string().contains("`expected`"));
    /// ```
    pub fn parse(bytes: &[u8], file: impl AsRef<Path>) -> Result<FixtureFile, FixtureError> {
        let file = file.as_ref();
        serde_json::from_slice(bytes).map_err(|e| json_error(file, bytes, &e, "fixture"))
    }
}

/// Turns a serde_json error into one that names the file, line and column and says what to do.
pub(crate) fn json_error(
    file: &Path,
    bytes: &[u8],
    error: &serde_json::Error,
    what: &str,
) -> FixtureError {
    let text = String::from_utf8_lossy(bytes);
    let mut message = error.to_string();
    // serde_json appends " at line L column C"; we print those in front, as compilers do.
    if let Some(at) = message.rfind(" at line ") {
        message.truncate(at);
    }
    if let Some(line) = conflict_marker_line(&text) {
        return FixtureError {
            file: file.to_path_buf(),
            line,
            column: 1,
            message: format!(
                "this {what} holds merge-conflict markers (<<<<<<<): resolve the conflict, or delete the file and re-record it"
            ),
        };
    }
    if error.is_eof() {
        message.push_str(&format!(" (the {what} is cut off or empty)"));
    }
    let column = if message.starts_with("unknown field") {
        key_start_column(&text, error.line(), error.column())
    } else {
        error.column()
    };
    FixtureError {
        file: file.to_path_buf(),
        line: error.line(),
        column,
        message,
    }
}

/// serde_json places an unknown key's error on its closing quote; editors and people look for
/// the key's start, so point at the opening quote.
fn key_start_column(text: &str, line: usize, column: usize) -> usize {
    let Some(line_text) = text.lines().nth(line.saturating_sub(1)) else {
        return column;
    };
    let chars: Vec<char> = line_text.chars().collect();
    let end = column.min(chars.len());
    // The closing quote is at `end - 1` (0-based); find the opening one before it.
    match chars[..end.saturating_sub(1)]
        .iter()
        .rposition(|&c| c == '"')
    {
        Some(open) => open + 1,
        None => column,
    }
}

/// The 1-based line of the first merge-conflict marker, if any.
pub(crate) fn conflict_marker_line(text: &str) -> Option<usize> {
    text.lines()
        .position(|l| l.starts_with("<<<<<<< ") || l == "<<<<<<<")
        .map(|n| n + 1)
}

/// `path` relative to `root`, `/`-separated whatever the platform: the form of every path the
/// product prints or stores. A path outside `root` is given whole.
pub(crate) fn relative_slash(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// A fixture file found in a suite, before it is parsed.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct FixturePath {
    /// Path relative to the suite folder, `/`-separated: `sub/raise_amount.json`.
    pub relative: String,
    /// Path on disk.
    pub absolute: PathBuf,
}

impl FixturePath {
    /// The relative path without `.json`: the case's identity (`sub/raise_amount`), also the
    /// recording's path below the recordings folder.
    pub fn case_path(&self) -> &str {
        self.relative
            .strip_suffix(".json")
            .unwrap_or(&self.relative)
    }
}

/// Every fixture of a suite, sorted by path. `recordings` (absolute) is excluded, as are
/// `.proposal-eval/` folders, hidden files, and the config file.
pub fn discover(suite: &Path, recordings: &Path) -> std::io::Result<Vec<FixturePath>> {
    let mut found = Vec::new();
    let walker = walkdir::WalkDir::new(suite)
        .follow_links(true)
        .into_iter()
        .filter_entry(|e| {
            let hidden = e.depth() > 0 && e.file_name().to_string_lossy().starts_with('.');
            // A folder with its own config below the suite is a suite of its own.
            let nested_suite = e.depth() > 0
                && e.file_type().is_dir()
                && e.path().join(crate::config::FILE_NAME).is_file();
            !hidden && !nested_suite && e.path() != recordings
        });
    for entry in walker {
        let entry = entry.map_err(std::io::Error::other)?;
        if !entry.file_type().is_file() {
            continue;
        }
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let relative = relative_slash(suite, path);
        found.push(FixturePath {
            relative,
            absolute: path.to_path_buf(),
        });
    }
    found.sort();
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_macros_key_list_is_the_parsers() {
        let err = FixtureFile::parse(b"{\"zzz\": 1}", "a.json").unwrap_err();
        let mut listed: Vec<&str> = err.message.split('`').skip(3).step_by(2).collect();
        let mut known = crate::naming::FIXTURE_KEYS.to_vec();
        listed.sort();
        known.sort();
        assert_eq!(listed, known, "{err}");
    }

    #[test]
    fn camel_case_aliases_are_accepted() {
        let f = FixtureFile::parse(
            br#"{"input": 1, "expectedDataProposal": [{"a": 1}], "ignorePaths": ["x.*"]}"#,
            "a.json",
        )
        .unwrap();
        assert_eq!(f.expected.unwrap()[0]["a"], 1);
        assert_eq!(f.ignore_paths.unwrap()[0].as_str(), "x.*");
    }

    #[test]
    fn bad_ignore_path_is_located() {
        let err = FixtureFile::parse(b"{\"ignore_paths\": [\"a..b\"]}", "a.json").unwrap_err();
        assert_eq!(err.line, 1);
        assert!(err.message.contains("invalid path `a..b`"), "{err}");
    }

    #[test]
    fn unknown_status_lists_the_allowed_ones() {
        let err = FixtureFile::parse(b"{\"status\": \"paused\"}", "a.json").unwrap_err();
        assert!(err.message.contains("needs_human_input"), "{err}");
    }

    #[test]
    fn conflict_markers_are_named() {
        let err = FixtureFile::parse(b"{\n<<<<<<< HEAD\n}", "a.json").unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.message.contains("merge-conflict"), "{err}");
    }

    #[test]
    fn truncated_file_says_so() {
        let err = FixtureFile::parse(b"{\"input\": {", "a.json").unwrap_err();
        assert!(err.message.contains("cut off"), "{err}");
    }

    #[test]
    fn discovery_skips_recordings_hidden_and_nested_suites() {
        let dir = std::env::temp_dir().join(format!("pe-discover-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for f in [
            "a.json",
            "sub/b.json",
            "recordings/a.json",
            ".proposal-eval/x.json",
            "c.txt",
            "inner/proposal-eval.toml",
            "inner/x.json",
        ] {
            let p = dir.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "{}").unwrap();
        }
        let found = discover(&dir, &dir.join("recordings")).unwrap();
        let names: Vec<_> = found.iter().map(|f| f.relative.as_str()).collect();
        assert_eq!(names, ["a.json", "sub/b.json"]);
        assert_eq!(found[1].case_path(), "sub/b");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
