//! Recordings: what the model answered, and the sources it answered from.
//!
//! One file per case, `<recordings>/<case path>.json`. It carries the SHA-256 of every source the
//! case depends on (the fixture, the case's `sources`, the suite's `sources` globs), so a
//! recording made from other sources is refused before replay rather than replayed against the
//! wrong prompt. Files are written atomically (temp file in the same folder, then rename), pretty,
//! with sorted keys and a final newline, so a re-record with identical answers changes nothing but
//! timestamps. Every request and response is redacted before it is written
//! ([`Recording::redact`], the rules of `proposal_eval_engine::redact`), and [`credentials`] is
//! the check on the files that `status --check` makes.

pub mod credentials;
pub mod llm;
pub mod sources;

use crate::files::Located;
use crate::path::Pattern;
use chrono::{DateTime, Utc};
pub use proposal_eval_engine::json::{canonical_pretty, sorted};
use proposal_eval_engine::redact::{Redactor, ValuePattern};
use serde::{Deserialize, Serialize};
use serde_json::Value;
pub use sources::Source;
use std::fmt;
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
    /// Paths, in each request and each response, whose values are written as `"<redacted>"`
    /// (on top of the credential keys, which always are).
    #[serde(default)]
    pub redact: Vec<Pattern>,
    /// Regexes: what they match in any string value of a request or a response is written as
    /// `<redacted>`.
    #[serde(default)]
    pub redact_values: Vec<ValuePattern>,
}

impl RecordingConfig {
    /// The redaction rules: the credential keys, `redact` and `redact_values`.
    ///
    /// ```
    /// use proposal_eval::config::RecordingConfig;
    /// use proposal_eval::redact::ValuePattern;
    /// use serde_json::json;
    ///
    /// let config = RecordingConfig {
    ///     redact: vec!["user.email".parse().unwrap()],
    ///     redact_values: vec![ValuePattern::new("ACCT-[0-9]{8}").unwrap()],
    ///     ..RecordingConfig::default()
    /// };
    /// let mut request = json!({
    ///     "api_key": "sk-live-0123456789abcdef0123",
    ///     "user": { "email": "ada@example.com" },
    ///     "note": "account ACCT-12345678",
    /// });
    /// config.redactor().redact(&mut request);
    /// assert_eq!(request, json!({
    ///     "api_key": "<redacted>",
    ///     "user": { "email": "<redacted>" },
    ///     "note": "account <redacted>",
    /// }));
    /// ```
    pub fn redactor(&self) -> Redactor {
        Redactor::new(self.redact.clone(), self.redact_values.clone())
    }
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

/// A recording file that cannot be used, with the place in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordingError(pub(crate) Located);

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

    /// Takes what `redactor` redacts out of every request and response, as is done before a
    /// recording is written, so that no credential reaches the file.
    pub fn redact(&mut self, redactor: &Redactor) {
        for interaction in &mut self.interactions {
            redactor.redact(&mut interaction.request);
            redactor.redact(&mut interaction.response);
        }
    }

    /// The recording as it is written: pretty JSON, keys sorted, final newline.
    pub fn to_pretty(&self) -> String {
        let value = serde_json::to_value(self).unwrap_or(Value::Null);
        canonical_pretty(&value)
    }

    /// Writes the recording atomically: a temp file in the same folder, then a rename, so a
    /// crash or a kill leaves either the old file or the new one, never a half-written one.
    pub fn write(&self, file: &Path) -> std::io::Result<()> {
        crate::files::write_atomic(file, self.to_pretty().as_bytes())
    }
}

fn located(file: &Path, message: String) -> RecordingError {
    RecordingError(Located::file(file, message))
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
        .map_err(|e| RecordingError(crate::files::json_error(file, bytes, &e, "recording")))
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

/// Recordings below `recordings` whose case path is not in `cases`, and temp files left by an
/// interrupted write of a recording (older than a minute): orphans, which `prune` deletes.
///
/// A file is one only when it parses as a recording and its `case` is its own path below
/// `recordings`, as every recording is written. So whatever folder is named as the recordings
/// folder, a fixture, a config file or any other file is never an orphan, and neither is
/// another suite's recording in a folder below (its `case` is relative to its own folder).
pub fn orphans(recordings: &Path, cases: &[&str]) -> Vec<PathBuf> {
    let cases: std::collections::HashSet<&str> = cases.iter().copied().collect();
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(recordings)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
    {
        let path = entry.path();
        let Ok(relative) = path.strip_prefix(recordings) else {
            continue;
        };
        let name = entry.file_name().to_string_lossy();
        let case = match temp_target(&name) {
            Some(target) => {
                // A write that a kill interrupted leaves its temp file (never the recording half
                // written); one older than a minute belongs to no running write.
                let old = entry
                    .metadata()
                    .ok()
                    .and_then(|m| m.modified().ok())
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age > std::time::Duration::from_secs(60));
                if !old {
                    continue;
                }
                case_of(&relative.with_file_name(target))
            }
            None if name.starts_with('.') => continue,
            None => match case_of(relative) {
                Some(case) if !cases.contains(case.as_str()) => Some(case),
                _ => continue,
            },
        };
        let Some(case) = case else {
            continue;
        };
        if matches!(Recording::read_head(path), Ok(Some(head)) if head.case == case) {
            out.push(path.to_path_buf());
        }
    }
    out.sort();
    out
}

/// The file that a temp file of an atomic write (`.<name>.<pid>-<n>.tmp`) was to become, when
/// that is a `.json` file.
fn temp_target(name: &str) -> Option<&str> {
    let inner = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (target, writer) = inner.rsplit_once('.')?;
    let (pid, n) = writer.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(pid) && digits(n) && target.ends_with(".json")).then_some(target)
}

/// The case path of a recording file's path below its recordings folder: `sub/a.json` is
/// `sub/a`; `None` for a file that is not `.json`.
fn case_of(relative: &Path) -> Option<String> {
    let text = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/");
    text.strip_suffix(".json").map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A recording of `case`, as the tests write it.
    fn recording_of(case: &str) -> String {
        Recording {
            format: FORMAT,
            case: case.into(),
            recorded_at: "2025-01-15T10:00:00Z".parse().unwrap(),
            sources: vec![],
            input: json!({}),
            interactions: vec![],
        }
        .to_pretty()
    }

    /// Writes `text` to `name` below `dir`, last modified `age_secs` ago.
    fn write_aged(dir: &Path, name: &str, text: &str, age_secs: u64) {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        let when = std::time::SystemTime::now() - std::time::Duration::from_secs(age_secs);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(when)
            .unwrap();
    }

    fn orphan_names(dir: &Path, cases: &[&str]) -> Vec<String> {
        orphans(dir, cases)
            .iter()
            .map(|p| {
                p.strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/")
            })
            .collect()
    }

    #[test]
    fn orphans_include_old_temp_files_only() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        write_aged(dir, "kept.json", &recording_of("kept"), 0);
        write_aged(dir, "gone.json", &recording_of("gone"), 0);
        write_aged(dir, ".kept.json.1-0.tmp", &recording_of("kept"), 3600);
        write_aged(dir, ".kept.json.2-0.tmp", &recording_of("kept"), 0);
        assert_eq!(
            orphan_names(dir, &["kept"]),
            [".kept.json.1-0.tmp", "gone.json"]
        );
    }

    #[test]
    fn only_recordings_in_their_own_place_are_orphans() {
        // The recordings folder named is a fixtures folder, as `--recordings fixtures` makes it.
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        let fixture = r#"{ "input": { "m": 1 }, "expected": [] }"#;
        write_aged(dir, "calendar/a.json", fixture, 0);
        write_aged(dir, "calendar/proposal-eval.toml", "", 0);
        write_aged(dir, "notes.json", "{}", 0);
        write_aged(dir, "conflicted.json", "<<<<<<< HEAD\n", 0);
        write_aged(dir, ".calendar.json.1-0.tmp", fixture, 3600);
        write_aged(dir, ".odd.tmp", &recording_of("odd"), 3600);
        // Another suite's recordings: their case is relative to their own folder.
        write_aged(dir, "payments/recordings/x.json", &recording_of("x"), 0);
        // Recordings whose case is where they lie.
        write_aged(dir, "gone.json", &recording_of("gone"), 0);
        write_aged(dir, "sub/gone.json", &recording_of("sub/gone"), 0);
        write_aged(
            dir,
            "sub/.gone.json.7-3.tmp",
            &recording_of("sub/gone"),
            3600,
        );
        assert_eq!(
            orphan_names(dir, &[]),
            ["gone.json", "sub/.gone.json.7-3.tmp", "sub/gone.json"]
        );
        assert_eq!(temp_target(".a.json.12-0.tmp"), Some("a.json"));
        assert_eq!(temp_target(".a.json.x-0.tmp"), None);
        assert_eq!(temp_target(".a.toml.1-0.tmp"), None);
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
