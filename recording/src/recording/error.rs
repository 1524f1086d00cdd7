//! Why a recording file cannot be used: [`RecordingError`], named by every reader.

use crate::files::Located;
use std::fmt;
use std::path::{Path, PathBuf};

/// Why a recording file cannot be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecordingErrorKind {
    /// The file cannot be read, or is not JSON.
    Unreadable,
    /// The file is JSON, but the recording's own fields are malformed: a key is missing or
    /// unknown, a value has the wrong type, a hash is not 64 hex digits.
    Damaged,
    /// A newer proposal-eval wrote it, in a format this version does not read.
    Newer {
        /// The file's format.
        format: u64,
    },
}

/// A recording file that cannot be used, with the place in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordingError {
    pub at: Located,
    pub(super) kind: RecordingErrorKind,
}

impl RecordingError {
    /// Unreadable, damaged, or newer.
    pub fn kind(&self) -> RecordingErrorKind {
        self.kind
    }

    /// The file, as given to the reader.
    pub fn file(&self) -> &Path {
        &self.at.file
    }

    /// The same error, naming the file as `file` (a shorter, crate-relative form).
    pub fn with_file(mut self, file: impl Into<PathBuf>) -> RecordingError {
        self.at.file = file.into();
        self
    }
}

impl fmt::Display for RecordingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            RecordingErrorKind::Unreadable => write!(f, "unreadable recording: {}", self.at),
            RecordingErrorKind::Damaged => write!(f, "damaged recording: {}", self.at),
            RecordingErrorKind::Newer { .. } => write!(f, "{}", self.at),
        }
    }
}

impl std::error::Error for RecordingError {}

pub(super) fn unreadable(file: &Path, message: String) -> RecordingError {
    RecordingError {
        at: Located::file(file, message),
        kind: RecordingErrorKind::Unreadable,
    }
}

pub(super) fn damaged(file: &Path, message: String) -> RecordingError {
    RecordingError {
        at: Located::file(
            file,
            format!("{message}; fix it, or delete the file and re-record the case"),
        ),
        kind: RecordingErrorKind::Damaged,
    }
}
