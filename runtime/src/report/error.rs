//! The one error type of reports: the fold, `report --merge` and every file they read or write.

use std::fmt;
use std::path::{Path, PathBuf};

/// A report that could not be made: the file (and the place in it), what is wrong and what to
/// do. One type for the fold, `report --merge` and every file they read or write.
#[derive(Debug)]
pub struct ReportError {
    /// The file or folder.
    pub path: PathBuf,
    /// `(line, column)` in it, from 1, when the problem is in one place.
    pub place: Option<(usize, usize)>,
    /// What is wrong, and what to do.
    pub why: String,
    /// The I/O error behind it, if any.
    pub(super) io: Option<std::io::Error>,
}

impl ReportError {
    /// A maker of the error for `doing` (`read`, `write`, `lock`, …) to `path`, for `map_err`.
    pub(super) fn io<'a>(
        doing: &'static str,
        path: &'a Path,
    ) -> impl FnOnce(std::io::Error) -> ReportError + 'a {
        move |source| ReportError {
            path: path.to_path_buf(),
            place: None,
            why: format!("cannot {doing} it: {source}"),
            io: Some(source),
        }
    }

    /// An error about `path` as a whole.
    pub(super) fn new(path: &Path, why: impl Into<String>) -> ReportError {
        ReportError {
            path: path.to_path_buf(),
            place: None,
            why: why.into(),
            io: None,
        }
    }

    /// Line `number` of `path`, `line`, is not a report entry: where serde stops reading it, why,
    /// and `fix`.
    pub(super) fn at(path: &Path, number: usize, line: &str, fix: &str) -> ReportError {
        let (column, why) = what_is_wrong(line);
        ReportError {
            path: path.to_path_buf(),
            place: Some((number, column)),
            why: format!("not a report entry: {why}; {fix}"),
            io: None,
        }
    }

    /// A report that could not be serialized.
    pub(super) fn json(error: impl fmt::Display) -> ReportError {
        ReportError::new(
            Path::new("report.json"),
            format!("cannot serialize it: {error}"),
        )
    }

    /// The kind of the I/O error behind it, if any.
    pub fn kind(&self) -> Option<std::io::ErrorKind> {
        self.io.as_ref().map(std::io::Error::kind)
    }
}

impl fmt::Display for ReportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some((line, column)) = self.place {
            write!(f, ":{line}:{column}")?;
        }
        write!(f, ": {}", self.why)
    }
}

impl std::error::Error for ReportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.io
            .as_ref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// Where and why `line` is not an entry: its column, from 1, and serde's reason.
pub(super) fn what_is_wrong(line: &str) -> (usize, String) {
    match serde_json::from_slice::<super::entry::Entry>(line.as_bytes()) {
        Err(e) => (e.column(), why(&e)),
        // An entry whose case could not be told apart: written in another layout.
        Ok(_) => (1, "no case identity".to_string()),
    }
}

/// A JSON error without serde's own "at line 1 column N" (the caller names the place).
pub(super) fn why(error: &serde_json::Error) -> String {
    let text = error.to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}
