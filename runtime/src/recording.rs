//! Recordings: what the model answered, and the sources it answered from.
//!
//! One file per case, `<recordings>/<case path>.json`. It carries the SHA-256 of every source the
//! case depends on (the fixture, the case's `sources`, the suite's `sources` globs), so a
//! recording made from other sources is refused before replay rather than replayed against the
//! wrong prompt. Files are written atomically (temp file in the same folder, then rename), pretty,
//! with sorted keys and a final newline, so a re-record with identical answers changes nothing but
//! timestamps.

use crate::path::Pattern;
use chrono::{DateTime, Utc};
pub use proposal_eval_engine::json::{canonical_pretty, sorted};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The recording format this version writes and reads.
pub const FORMAT: u32 = 1;

/// What to do with a stale recording.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Validation {
    /// A stale recording fails the case (the default).
    #[default]
    Strict,
    /// A stale recording is reported on stderr and replayed.
    Warn,
    /// Sources are not checked.
    Skip,
}

/// `[recording]` in `proposal-eval.toml`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordingConfig {
    /// What a stale recording does: `strict` (fail), `warn`, `skip`.
    #[serde(default)]
    pub validation: Validation,
    /// Suite-wide sources: crate-relative globs (`prompts/*.md`, `prompts/**/*.md`).
    #[serde(default)]
    pub sources: Vec<String>,
    /// Request paths left out when a replayed request is compared with the recorded one.
    #[serde(default, alias = "ignoreRequestPaths")]
    pub ignore_request_paths: Vec<Pattern>,
}

/// One source file of a recording.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    /// Crate-relative, `/`-separated.
    pub path: String,
    /// Lowercase hex SHA-256 of the content, with CRLF read as LF.
    pub sha256: String,
    /// Length of the content in bytes, with CRLF read as LF.
    pub bytes: u64,
}

/// One model call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Interaction {
    /// What the code under test sent.
    pub request: Value,
    /// What the model answered.
    pub response: Value,
    /// When the answer came.
    pub recorded_at: DateTime<Utc>,
}

/// A recording file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recording {
    /// [`FORMAT`].
    pub format: u32,
    /// The case path (fixture path relative to the suite, without `.json`).
    pub case: String,
    /// When the case was recorded; the frozen clock of its replays.
    pub recorded_at: DateTime<Utc>,
    /// The sources the recording was made from.
    pub sources: Vec<Source>,
    /// A copy of the case's `input`, to show what changed when the recording is stale.
    pub input: Value,
    /// The model calls, in order.
    pub interactions: Vec<Interaction>,
}

/// What [`Recording::read_head`] reads of a recording: enough to tell whether it is stale.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordingHead {
    /// [`FORMAT`].
    pub format: u32,
    /// The case path.
    pub case: String,
    /// When the case was recorded.
    pub recorded_at: DateTime<Utc>,
    /// The sources the recording was made from.
    pub sources: Vec<Source>,
    #[serde(rename = "input")]
    _input: serde::de::IgnoredAny,
    #[serde(rename = "interactions")]
    _interactions: serde::de::IgnoredAny,
}

/// A recording file that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordingError(pub crate::fixture::FixtureError);

impl fmt::Display for RecordingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unreadable recording: {}", self.0)
    }
}

impl std::error::Error for RecordingError {}

impl Recording {
    /// Parses a recording; `file` is used in error messages.
    pub fn parse(bytes: &[u8], file: &Path) -> Result<Recording, RecordingError> {
        let recording: Recording = parse_json(bytes, file)?;
        check_format(recording.format, file)?;
        Ok(recording)
    }

    /// Reads a recording; `Ok(None)` when there is none.
    pub fn read(file: &Path) -> Result<Option<Recording>, RecordingError> {
        read_bytes(file)?
            .map(|bytes| Recording::parse(&bytes, file))
            .transpose()
    }

    /// Reads only what the staleness check needs (format, case, time, sources); `Ok(None)` when
    /// there is none. The input and the interactions must be there but are skipped, not built,
    /// which makes checking a recording several times cheaper than [`Recording::read`]. A
    /// recording whose interactions are malformed passes here and fails when it is replayed.
    pub fn read_head(file: &Path) -> Result<Option<RecordingHead>, RecordingError> {
        let Some(bytes) = read_bytes(file)? else {
            return Ok(None);
        };
        let head: RecordingHead = parse_json(&bytes, file)?;
        check_format(head.format, file)?;
        Ok(Some(head))
    }

    /// The recording as it is written: pretty JSON, keys sorted, final newline.
    pub fn to_pretty(&self) -> String {
        let value = serde_json::to_value(self).unwrap_or(Value::Null);
        canonical_pretty(&value)
    }

    /// Writes the recording atomically: a temp file in the same folder, then a rename, so a
    /// crash or a kill leaves either the old file or the new one, never a half-written one.
    pub fn write(&self, file: &Path) -> std::io::Result<()> {
        write_atomic(file, self.to_pretty().as_bytes())
    }
}

fn located(file: &Path, message: String) -> RecordingError {
    RecordingError(crate::fixture::FileError {
        file: file.to_path_buf(),
        line: 0,
        column: 0,
        message,
    })
}

/// The bytes of a recording file; `None` when there is none.
fn read_bytes(file: &Path) -> Result<Option<Vec<u8>>, RecordingError> {
    match std::fs::read(file) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(located(file, format!("cannot read: {e}"))),
    }
}

fn parse_json<T: serde::de::DeserializeOwned>(
    bytes: &[u8],
    file: &Path,
) -> Result<T, RecordingError> {
    serde_json::from_slice(bytes)
        .map_err(|e| RecordingError(crate::fixture::json_error(file, bytes, &e, "recording")))
}

fn check_format(format: u32, file: &Path) -> Result<(), RecordingError> {
    if format == FORMAT {
        return Ok(());
    }
    Err(located(
        file,
        format!(
            "recording format {format} is not the format {FORMAT} this version reads: re-record it"
        ),
    ))
}

/// Writes `bytes` to `file` through a temp file in the same folder and a rename.
pub fn write_atomic(file: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace_file(file, bytes, true)
}

/// Replaces `file` through a temp file and a rename; `durable` also syncs the data to disk
/// before the rename (recordings are; derived files such as reports need not be).
pub(crate) fn replace_file(file: &Path, bytes: &[u8], durable: bool) -> std::io::Result<()> {
    let dir = file.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "recording".into());
    // The pid and a counter make the name unique among writers; the leading dot and the suffix
    // keep it out of fixture discovery and orphan checks.
    static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".{name}.{}-{n}.tmp", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        if durable {
            f.sync_all()?;
        }
        std::fs::rename(&tmp, file)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// SHA-256 (lowercase hex) and length of `content`, with CRLF read as LF, so a checkout with
/// Windows line endings does not make every recording stale.
pub fn hash_content(content: &[u8]) -> (String, u64) {
    let mut hasher = Sha256::new();
    let mut length = 0u64;
    let mut start = 0;
    // Most files have no CR at all: `contains` on bytes is a memchr, far cheaper than a pair test
    // per byte.
    if content.contains(&b'\r') {
        for (i, pair) in content.windows(2).enumerate() {
            if pair == b"\r\n" {
                hasher.update(&content[start..i]);
                length += (i - start) as u64;
                start = i + 1;
            }
        }
    }
    hasher.update(&content[start..]);
    length += (content.len() - start) as u64;
    (lower_hex(&hasher.finalize()), length)
}

/// Lowercase hex of some bytes (a digest), without a formatting call per byte.
pub(crate) fn lower_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 0xf)] as char);
    }
    out
}

/// A source that cannot be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceError {
    /// Crate-relative path or glob.
    pub path: String,
    /// Why.
    pub message: String,
}

impl fmt::Display for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "source `{}`: {}", self.path, self.message)
    }
}

/// Hashes one crate-relative file.
pub fn hash_source(crate_root: &Path, relative: &str) -> Result<Source, SourceError> {
    let bytes = std::fs::read(crate_root.join(relative)).map_err(|e| SourceError {
        path: relative.to_string(),
        message: format!(
            "cannot read it ({e}); paths in `sources` are relative to the crate root {}",
            crate_root.display()
        ),
    })?;
    let (sha256, bytes) = hash_content(&bytes);
    Ok(Source {
        path: relative.to_string(),
        sha256,
        bytes,
    })
}

/// Every crate-relative file matching `pattern` (`*` and `?` within a segment, `**` for any
/// number of folders), sorted. A pattern without wildcards names one file, which must exist.
pub fn glob(crate_root: &Path, pattern: &str) -> Result<Vec<String>, SourceError> {
    let pattern = pattern.trim_start_matches("./");
    let segments: Vec<&str> = pattern.split('/').collect();
    let literal = segments
        .iter()
        .take_while(|s| !s.contains(['*', '?']))
        .count();
    if literal == segments.len() {
        return if crate_root.join(pattern).is_file() {
            Ok(vec![pattern.to_string()])
        } else {
            Err(SourceError {
                path: pattern.to_string(),
                message: format!("no such file below the crate root {}", crate_root.display()),
            })
        };
    }
    let base: PathBuf = segments[..literal].iter().collect();
    let mut found = Vec::new();
    for entry in walkdir::WalkDir::new(crate_root.join(&base))
        .follow_links(true)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
    {
        let Ok(relative) = entry.path().strip_prefix(crate_root) else {
            continue;
        };
        let parts: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
        if glob_match(&segments, &refs) {
            found.push(parts.join("/"));
        }
    }
    if found.is_empty() {
        // A typo in a suite source must not silently turn staleness checking off.
        return Err(SourceError {
            path: pattern.to_string(),
            message: format!(
                "the pattern matches no file below the crate root {}; fix it or remove it from [recording] sources",
                crate_root.display()
            ),
        });
    }
    found.sort();
    Ok(found)
}

fn glob_match(pattern: &[&str], path: &[&str]) -> bool {
    match pattern.split_first() {
        None => path.is_empty(),
        Some((&"**", rest)) => (0..=path.len()).any(|n| glob_match(rest, &path[n..])),
        Some((first, rest)) => match path.split_first() {
            Some((seg, path_rest)) => {
                segment_match(first.as_bytes(), seg.as_bytes()) && glob_match(rest, path_rest)
            }
            None => false,
        },
    }
}

fn segment_match(pattern: &[u8], text: &[u8]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some((b'*', rest)) => (0..=text.len()).any(|n| segment_match(rest, &text[n..])),
        Some((b'?', rest)) => !text.is_empty() && segment_match(rest, &text[1..]),
        Some((c, rest)) => text.first() == Some(c) && segment_match(rest, &text[1..]),
    }
}

/// How a recorded source differs from the current one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SourceChange {
    /// The content changed.
    Changed {
        /// Crate-relative path.
        path: String,
        /// Hash in the recording.
        recorded: String,
        /// Hash now.
        current: String,
    },
    /// A source the case now has that the recording was not made from.
    Added {
        /// Crate-relative path.
        path: String,
    },
    /// A source the recording was made from that the case no longer has.
    Removed {
        /// Crate-relative path.
        path: String,
    },
}

impl fmt::Display for SourceChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SourceChange::Changed {
                path,
                recorded,
                current,
            } => {
                write!(
                    f,
                    "{path} changed (recorded sha256 {recorded}, current {current})"
                )
            }
            SourceChange::Added { path } => {
                write!(f, "{path} is a new source, not in the recording")
            }
            SourceChange::Removed { path } => {
                write!(f, "{path} was a source of the recording and no longer is")
            }
        }
    }
}

/// The differences between the sources a recording was made from and the current ones; empty
/// when the recording is fresh.
pub fn compare_sources(recorded: &[Source], current: &[Source]) -> Vec<SourceChange> {
    let mut changes = Vec::new();
    for now in current {
        match recorded.iter().find(|r| r.path == now.path) {
            Some(r) if r.sha256 != now.sha256 => changes.push(SourceChange::Changed {
                path: now.path.clone(),
                recorded: r.sha256.clone(),
                current: now.sha256.clone(),
            }),
            Some(_) => {}
            None => changes.push(SourceChange::Added {
                path: now.path.clone(),
            }),
        }
    }
    for r in recorded {
        if !current.iter().any(|c| c.path == r.path) {
            changes.push(SourceChange::Removed {
                path: r.path.clone(),
            });
        }
    }
    changes
}

/// Recordings below `recordings` whose case path is not in `cases`, and temp files left by an
/// interrupted write (older than a minute): orphans.
pub fn orphans(recordings: &Path, cases: &[&str]) -> Vec<PathBuf> {
    let cases: std::collections::HashSet<&str> = cases.iter().copied().collect();
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(recordings)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
    {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy();
        if name.starts_with('.') && name.ends_with(".tmp") {
            // A write that a kill interrupted leaves its temp file (never the recording half
            // written); one older than a minute belongs to no running write.
            let old = entry
                .metadata()
                .ok()
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > std::time::Duration::from_secs(60));
            if old {
                out.push(path.to_path_buf());
            }
            continue;
        }
        if path.extension().and_then(|e| e.to_str()) != Some("json") || name.starts_with('.') {
            continue;
        }
        let Ok(relative) = path.strip_prefix(recordings) else {
            continue;
        };
        let case = relative
            .with_extension("")
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/");
        if !cases.contains(&case.as_str()) {
            out.push(path.to_path_buf());
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn orphans_include_old_temp_files_only() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, age_secs: u64| {
            let path = dir.path().join(name);
            std::fs::write(&path, "{}").unwrap();
            let when = std::time::SystemTime::now() - std::time::Duration::from_secs(age_secs);
            std::fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(when)
                .unwrap();
        };
        write("kept.json", 0);
        write("gone.json", 0);
        write(".kept.json.1-0.tmp", 3600);
        write(".kept.json.2-0.tmp", 0);
        let found: Vec<String> = orphans(dir.path(), &["kept"])
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(found, [".kept.json.1-0.tmp", "gone.json"]);
    }

    #[test]
    fn crlf_hashes_like_lf() {
        assert_eq!(hash_content(b"a\r\nb\r\n"), hash_content(b"a\nb\n"));
        assert_eq!(hash_content(b"a\nb\n").1, 4);
        assert_ne!(hash_content(b"a\rb"), hash_content(b"ab"));
        // The well-known digest of the empty string.
        assert_eq!(
            hash_content(b"").0,
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn globs() {
        let p = |s: &'static str| s.split('/').collect::<Vec<_>>();
        assert!(glob_match(&p("prompts/*.md"), &p("prompts/a.md")));
        assert!(!glob_match(&p("prompts/*.md"), &p("prompts/x/a.md")));
        assert!(glob_match(&p("prompts/**/*.md"), &p("prompts/a.md")));
        assert!(glob_match(&p("prompts/**/*.md"), &p("prompts/x/y/a.md")));
        assert!(glob_match(&p("p/a?.md"), &p("p/ab.md")));
        assert!(!glob_match(&p("p/a?.md"), &p("p/a.md")));
    }

    #[test]
    fn canonical_output_sorts_keys_and_ends_with_newline() {
        let text = canonical_pretty(&json!({"b": 1, "a": {"d": 2, "c": 3}}));
        assert_eq!(
            text,
            "{\n  \"a\": {\n    \"c\": 3,\n    \"d\": 2\n  },\n  \"b\": 1\n}\n"
        );
    }

    #[test]
    fn source_changes() {
        let s = |p: &str, h: &str| Source {
            path: p.into(),
            sha256: h.into(),
            bytes: 1,
        };
        let changes = compare_sources(&[s("a", "1"), s("b", "2")], &[s("a", "9"), s("c", "3")]);
        assert_eq!(changes.len(), 3);
        assert!(matches!(&changes[0], SourceChange::Changed { path, .. } if path == "a"));
        assert!(matches!(&changes[1], SourceChange::Added { path } if path == "c"));
        assert!(matches!(&changes[2], SourceChange::Removed { path } if path == "b"));
        assert!(compare_sources(&[s("a", "1")], &[s("a", "1")]).is_empty());
    }

    #[test]
    fn recording_round_trips_and_rejects_other_formats() {
        let r = Recording {
            format: FORMAT,
            case: "a".into(),
            recorded_at: "2025-01-15T10:00:00Z".parse().unwrap(),
            sources: vec![],
            input: json!({"x": 1}),
            interactions: vec![],
        };
        let text = r.to_pretty();
        assert_eq!(
            Recording::parse(text.as_bytes(), Path::new("r.json")).unwrap(),
            r
        );
        let head = Recording::read_head(&write_tmp("head.json", &text))
            .unwrap()
            .unwrap();
        assert_eq!((head.case.as_str(), &head.sources), ("a", &r.sources));
        let other = text.replace("\"format\": 1", "\"format\": 7");
        let err = Recording::parse(other.as_bytes(), Path::new("r.json")).unwrap_err();
        assert!(err.to_string().contains("re-record"), "{err}");
        let err = Recording::read_head(&write_tmp("other.json", &other)).unwrap_err();
        assert!(err.to_string().contains("re-record"), "{err}");
        let cut = &text[..text.len() / 2];
        assert!(Recording::read_head(&write_tmp("cut.json", cut)).is_err());
        assert_eq!(
            Recording::read_head(Path::new("/nonexistent/r.json")),
            Ok(None)
        );
    }

    fn write_tmp(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("pe-recording-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(name);
        std::fs::write(&file, text).unwrap();
        file
    }
}
