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

pub mod budget;
pub mod calls;
pub mod canonical;
pub mod credentials;
mod error;
mod glob;
#[cfg(feature = "http")]
pub mod http;
pub mod judgement;
pub mod llm;
#[cfg(feature = "http")]
pub mod loopback;
pub mod model;
pub mod pending;
pub mod progress;
pub mod rate_limit;
mod read;
pub mod sources;
pub mod upstream;
pub mod usage;

use crate::path::Pattern;
use chrono::{DateTime, Utc};
pub use error::{RecordingError, RecordingErrorKind};
pub use proposal_eval_engine::json::canonical_pretty;
use proposal_eval_engine::redact::{Redactor, ValuePattern};
pub use read::RequestDigests;
pub use read::Skipped;
#[cfg(test)]
use read::{ForReplay, LEAN_READ_OVER};
use serde::{Deserialize, Serialize};
use serde_json::Value;
pub use sources::{CaseSources, Source, SourceChange};
use std::fmt;
use std::path::{Path, PathBuf};

/// The recording format this version writes for a recording of one sample.
///
/// Format 1 depended on the whole fixture file; format 2 depends on what the model saw: the
/// case's `input` (its hash, `input_sha256`), the case's `sources` and the suite's `sources`.
pub const FORMAT: u32 = 2;

/// The format of a recording of several samples (`repeat` above 1): format 2 with `samples`,
/// each holding its `interactions`, in place of the one `interactions` list. A one-sample
/// recording stays format 2, so a version that knows no repeats still reads it; an older version
/// refuses a format-3 file as "made by a newer proposal-eval" instead of calling it damaged and
/// re-recording it away. The newest format this version reads.
pub const SAMPLES_FORMAT: u32 = 3;

/// The format of a recording that holds a rubric judge's part (`judge`): format 3 with `judge`.
/// Only a recording with a judge part is written in it, so every other recording stays as it
/// was, and a version that knows no judge refuses such a file as newer instead of dropping its
/// verdicts. Its judge calls keep their whole requests; [`JUDGE_CALLS_FORMAT`] is written now.
pub const JUDGE_FORMAT: u32 = 4;

/// The format this version writes for a recording with a judge part: format 4 whose judge calls
/// keep their request's SHA-256 (`request_sha256`) in place of the request, the whole prompt,
/// which every replay scanned to skip it ([`judgement`]). Format 4 is still read. The newest
/// format this version reads.
pub const JUDGE_CALLS_FORMAT: u32 = 5;

/// The largest input (canonical JSON, in bytes) a recording keeps a copy of, for the diff a
/// stale recording shows. A larger input is recorded by its hash only: the request that carries
/// it is in the file already, and a second copy doubled the size of large recordings.
pub const INPUT_COPY_LIMIT: u64 = 64 * 1024;

/// What to do with a stale recording.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(transform = recording_config_aliases))]
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

/// Why a recording or a pending file was not written; either way the file is as it was.
#[derive(Debug)]
pub enum WriteError {
    /// It would hold what looks like a credential (redaction has run): each one found.
    Credentials(Vec<credentials::Finding>),
    /// The file could not be written.
    Io(std::io::Error),
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteError::Credentials(found) => {
                let places: Vec<String> = found.iter().map(ToString::to_string).collect();
                write!(
                    f,
                    "it would hold what looks like a credential at {}",
                    places.join(", ")
                )
            }
            WriteError::Io(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for WriteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WriteError::Io(e) => Some(e),
            WriteError::Credentials(_) => None,
        }
    }
}

/// Writes a recording or pending file's document atomically, unless it holds what looks like
/// a credential.
pub fn write_checked(value: Value, file: &Path) -> Result<(), WriteError> {
    let found = credentials::scan_recording(&value);
    if !found.is_empty() {
        return Err(WriteError::Credentials(found));
    }
    write_document(&value, file).map_err(WriteError::Io)
}

/// Writes a recording or pending file's document atomically: pretty, keys sorted, final newline.
fn write_document(value: &Value, file: &Path) -> std::io::Result<()> {
    crate::files::replace_file_with(file, true, |out| canonical::write_pretty(value, out))
}

/// One model call.
// `Q`: how the request is held, whole (`Value`) or as a replay of a large file holds it.
#[cfg_attr(
    feature = "schema",
    derive(schemars::JsonSchema),
    schemars(rename = "Interaction")
)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Interaction<Q = Value> {
    /// What the code under test sent: the request given to `llm.complete`, or the JSON body of
    /// an HTTP request (`null` when it had none).
    pub request: Q,
    /// What the model answered: the response, the JSON body of an HTTP response, or the list of
    /// events of a streamed (`text/event-stream`) one.
    pub response: Value,
    /// When the answer came.
    pub recorded_at: DateTime<Utc>,
    /// The HTTP side of a call made through `llm.base_url()`: method, path, status and content
    /// type. `None` for an `llm.complete` call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<HttpExchange>,
    /// Milliseconds the live call took (to the last byte of a stream).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<f64>,
    /// The tokens the call used, when the response reports them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<usage::Usage>,
}

impl<Q> Interaction<Q> {
    /// The same call, its request held as `f` makes it of the request.
    fn map_request<P>(self, f: impl FnOnce(Q) -> P) -> Interaction<P> {
        let Interaction {
            request,
            response,
            recorded_at,
            http,
            latency_ms,
            usage,
        } = self;
        Interaction {
            request: f(request),
            response,
            recorded_at,
            http,
            latency_ms,
            usage,
        }
    }
}

impl Interaction {
    /// A call with no HTTP side, latency or usage.
    pub fn new(request: Value, response: Value, recorded_at: DateTime<Utc>) -> Interaction {
        Interaction {
            request,
            response,
            recorded_at,
            http: None,
            latency_ms: None,
            usage: None,
        }
    }
}

/// The HTTP side of a recorded call: what is matched besides the JSON body, and what is served
/// back besides it.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpExchange {
    /// The named upstream (`llm.base_url_for(name)`); `None` for the default one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream: Option<String>,
    /// `GET`, `POST`, ...
    pub method: String,
    /// The path below the upstream's base URL (`/chat/completions`).
    pub path: String,
    /// The query string, without `?`, when there was one (not matched on replay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// The response's status code.
    pub status: u16,
    /// The response's content type, when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
}

impl HttpExchange {
    /// Whether the response was a stream of server-sent events, recorded as a list of events.
    pub fn is_stream(&self) -> bool {
        self.content_type.as_deref().is_some_and(|t| {
            t.trim_start()
                .to_ascii_lowercase()
                .starts_with("text/event-stream")
        })
    }
}

/// One sample of a case: the model calls of one run of its code.
#[cfg_attr(
    feature = "schema",
    derive(schemars::JsonSchema),
    schemars(rename = "Sample")
)]
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Sample<Q = Value> {
    /// The model calls, in order.
    pub interactions: Vec<Interaction<Q>>,
    /// The rubric judge's part on this sample's output, in a recording of several samples
    /// (format 4). A recording of one sample keeps its judge part in its top-level `judge`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<judgement::Judgement>,
}

impl<Q> Sample<Q> {
    /// A sample of these model calls, not judged.
    pub fn new(interactions: Vec<Interaction<Q>>) -> Sample<Q> {
        Sample {
            interactions,
            judge: None,
        }
    }
}

/// A recording file. `Q` is how its requests are held: whole (`Value`, the default, as
/// [`Recording::read`] reads them), hashed (as a replay of a large file reads them), or skipped
/// with the rest of its calls (the status check's [`RecordingHead`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Recording<Q = Value> {
    /// The format it was written in: [`FORMAT`] (one sample) or [`SAMPLES_FORMAT`] (several)
    /// when written by this version, `1` when read from an older file.
    pub format: u32,
    /// The case path (fixture path relative to the suite, without `.json`).
    pub case: String,
    /// When the case was recorded; the frozen clock of its replays.
    pub recorded_at: DateTime<Utc>,
    /// The files the recording was made from. Format 1: the fixture file first, then the
    /// case's and the suite's sources; format 2: the case's and the suite's sources.
    pub sources: Vec<Source>,
    /// Format 2: lowercase hex SHA-256 of the case's `input` as canonical JSON (sorted keys, no
    /// white space). `None` in format 1.
    pub input_sha256: Option<String>,
    /// A copy of the case's `input`, to show what changed when the recording is stale. Always
    /// there in format 1; in format 2 only when the input is at most [`INPUT_COPY_LIMIT`] bytes.
    pub input: Option<Value>,
    /// The samples, at least one: each the model calls of one run of the case, in order. A file
    /// of formats 1 and 2 holds one, as `interactions`; format 3 lists them as `samples`.
    /// None in a [`RecordingHead`].
    pub samples: Vec<Sample<Q>>,
    /// The rubric judge's calls and verdicts on the case's output (format 4), if it has a rubric,
    /// in a recording of one sample; a recording of several keeps each sample's in
    /// [`Sample::judge`]. [`Recording::judgement`] reads either.
    pub judge: Option<judgement::Judgement>,
}

/// A recording as it is written: `interactions` for one sample (formats 1 and 2), `samples` for
/// several (format 3).
#[cfg_attr(
    feature = "schema",
    derive(schemars::JsonSchema),
    schemars(deny_unknown_fields, rename = "Recording")
)]
#[derive(Serialize)]
pub struct Written<'a> {
    format: u32,
    case: &'a str,
    recorded_at: DateTime<Utc>,
    sources: &'a [Source],
    #[serde(skip_serializing_if = "Option::is_none")]
    input_sha256: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    input: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    interactions: Option<&'a [Interaction]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    samples: Option<&'a [Sample]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    judge: Option<&'a judgement::Judgement>,
    /// Only in a pending recording ([`pending`]).
    #[cfg_attr(feature = "schema", schemars(skip))]
    #[serde(skip_serializing_if = "Option::is_none")]
    review: Option<&'a pending::Review>,
}

impl Serialize for Recording {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.written(None).serialize(serializer)
    }
}

impl Recording {
    /// The file's document: this recording's keys, and a pending file's `review`. The one
    /// shape both files are written in.
    fn written<'a>(&'a self, review: Option<&'a pending::Review>) -> Written<'a> {
        let format = if self.judged() {
            self.format.max(JUDGE_CALLS_FORMAT)
        } else if self.samples.len() > 1 {
            self.format.max(SAMPLES_FORMAT)
        } else {
            self.format
        };
        let listed = format >= SAMPLES_FORMAT;
        Written {
            format,
            case: &self.case,
            recorded_at: self.recorded_at,
            sources: &self.sources,
            input_sha256: self.input_sha256.as_deref(),
            input: self.input.as_ref(),
            interactions: (!listed).then(|| self.interactions()),
            samples: listed.then_some(self.samples.as_slice()),
            judge: self.judge.as_ref(),
            review,
        }
    }
}

/// What [`Recording::read_head`] reads of a recording: enough to tell whether it is stale (its
/// input and calls skipped).
pub type RecordingHead = Recording<Skipped>;

/// Lowercase hex SHA-256 of `input` as canonical JSON (sorted keys, no white space), and the
/// length of that JSON: what a format-2 recording depends on of the fixture.
///
/// The JSON is hashed as it is written, never built: for a large input it would be one more
/// copy of it in memory.
pub fn input_digest(input: &Value) -> (String, u64) {
    let mut hasher = sources::ContentHasher::default();
    // Writing to a hasher cannot fail.
    let _ = canonical::write_compact(input, &mut hasher);
    hasher.finish()
}

pub fn is_sha256(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

impl<Q> Recording<Q> {
    /// How the recording's sources differ from the case's `current` ones; empty when fresh.
    pub fn changes(&self, current: &CaseSources) -> Vec<SourceChange> {
        sources::staleness(
            self.format,
            &self.sources,
            self.input_sha256.as_deref(),
            current,
        )
    }

    /// The first sample's model calls: all of them in a recording of one sample.
    pub fn interactions(&self) -> &[Interaction<Q>] {
        self.samples.first().map_or(&[], |s| &s.interactions)
    }
}

impl Recording {
    /// A recording in this version's format of the case whose current sources are `current`
    /// and whose input is `input`.
    pub fn new(
        case: String,
        recorded_at: DateTime<Utc>,
        current: &CaseSources,
        input: &Value,
        interactions: Vec<Interaction>,
    ) -> Recording {
        Recording::of_samples(
            case,
            recorded_at,
            current,
            input,
            vec![Sample::new(interactions)],
        )
    }

    /// Like [`Recording::new`], with several samples (at least one): format 3 when there are
    /// several.
    pub fn of_samples(
        case: String,
        recorded_at: DateTime<Utc>,
        current: &CaseSources,
        input: &Value,
        samples: Vec<Sample>,
    ) -> Recording {
        Recording {
            format: if samples.len() > 1 {
                SAMPLES_FORMAT
            } else {
                FORMAT
            },
            case,
            recorded_at,
            sources: current.sources.clone(),
            input_sha256: Some(current.input_sha256.clone()),
            input: (current.input_bytes <= INPUT_COPY_LIMIT).then(|| input.clone()),
            samples,
            judge: None,
        }
    }

    /// The judge part on sample `k`'s output (from 0): [`Recording::judge`] in a recording of
    /// one sample, [`Sample::judge`] in one of several.
    pub fn judgement(&self, k: usize) -> Option<&judgement::Judgement> {
        match self.samples.len() {
            1 if k == 0 => self.judge.as_ref(),
            _ => self.samples.get(k)?.judge.as_ref(),
        }
    }

    /// Keeps `judgement` as the judge part on sample `k`'s output, where
    /// [`Recording::judgement`] reads it, which makes a recording of format 2, 3 or 4 one of
    /// format 5 ([`Recording::migrated`] brings a format-1 one there); `false` (and nothing
    /// kept) when there is no sample `k`.
    pub fn set_judgement(&mut self, k: usize, judgement: judgement::Judgement) -> bool {
        if !self.place_judgement(k, judgement) {
            return false;
        }
        if self.format >= FORMAT {
            self.format = self.format.max(JUDGE_CALLS_FORMAT);
        }
        true
    }

    /// Puts `judgement` on sample `k`, the format left as it is; `false` when there is no
    /// sample `k`.
    fn place_judgement(&mut self, k: usize, judgement: judgement::Judgement) -> bool {
        match self.samples.len() {
            1 if k == 0 => self.judge = Some(judgement),
            _ => match self.samples.get_mut(k) {
                Some(sample) => sample.judge = Some(judgement),
                None => return false,
            },
        }
        true
    }

    /// Takes the judge part on sample `k`'s output out of the recording.
    pub fn take_judgement(&mut self, k: usize) -> Option<judgement::Judgement> {
        match self.samples.len() {
            1 if k == 0 => self.judge.take(),
            _ => self.samples.get_mut(k)?.judge.take(),
        }
    }

    /// Leaves each judge call's request out (its hash stays), on every judge part: what a
    /// committed recording keeps ([`judgement::Judgement::without_requests`]).
    pub fn drop_judge_requests(&mut self) {
        let judges =
            std::iter::once(&mut self.judge).chain(self.samples.iter_mut().map(|s| &mut s.judge));
        for judge in judges {
            *judge = judge.take().map(judgement::Judgement::without_requests);
        }
    }

    /// Whether any sample has a judge part (which makes the recording format 4).
    fn judged(&self) -> bool {
        self.judge.is_some() || self.samples.iter().any(|s| s.judge.is_some())
    }

    /// Whether `migrate` rewrites this recording ([`Recording::migrated`]): format 1, or a judge
    /// part in format 4 (whose calls keep their whole requests).
    pub fn is_older_format(&self) -> bool {
        self.format < FORMAT || (self.judged() && self.format < JUDGE_CALLS_FORMAT)
    }

    /// This recording in this version's format, for a case whose current sources are `current`:
    /// what `migrate` writes. Only a fresh recording is migrated (its answers were given to the
    /// current sources), so the result is fresh too. The interactions are kept as they are. A
    /// format-4 judge part, read whole, already has what format 5 writes: each call's request's
    /// hash and the key made from its recorded parts, fresh exactly when the format-4 key was.
    pub fn migrated(mut self, current: &CaseSources) -> Recording {
        if self.format == 1 {
            self.sources.retain(|s| s.path != current.fixture.path);
        }
        if current.input_bytes > INPUT_COPY_LIMIT {
            self.input = None;
        }
        self.input_sha256 = Some(current.input_sha256.clone());
        self.format = if self.judged() {
            JUDGE_CALLS_FORMAT
        } else {
            FORMAT
        };
        self
    }

    /// Takes what `redactor` redacts out of every request, response and HTTP query string, as
    /// is done before a recording is written, so that no credential reaches the file.
    pub fn redact(&mut self, redactor: &Redactor) {
        for interaction in self.samples.iter_mut().flat_map(|s| &mut s.interactions) {
            redactor.redact(&mut interaction.request);
            redactor.redact(&mut interaction.response);
            redact_query(&mut interaction.http, redactor);
        }
        // The judge's calls: a recording of one sample's, then each sample's.
        let judges = self
            .judge
            .iter_mut()
            .chain(self.samples.iter_mut().flat_map(|s| &mut s.judge));
        for call in judges.flat_map(|j| &mut j.calls) {
            // The hash kept is of the request as it is recorded: redacted.
            if let Some(request) = &mut call.request {
                redactor.redact(request);
                call.request_sha256 = judgement::request_sha256(request);
            }
            redactor.redact(&mut call.response);
            redact_query(&mut call.http, redactor);
        }
    }

    /// The recording as it is written: pretty JSON, keys sorted, final newline.
    pub fn to_pretty(&self) -> String {
        canonical_pretty(&self.document(None))
    }

    /// The file's document as JSON: the recording's keys, and `review` for a pending file.
    pub fn document(&self, review: Option<&pending::Review>) -> Value {
        serde_json::to_value(self.written(review)).unwrap_or(Value::Null)
    }

    /// Writes the recording atomically: a temp file in the same folder, then a rename, so a
    /// crash or a kill leaves either the old file or the new one, never a half-written one.
    pub fn write(&self, file: &Path) -> std::io::Result<()> {
        write_document(&self.document(None), file)
    }

    /// Writes the recording as [`Recording::write`] does, consuming it: its requests and
    /// responses are moved into the document written, not copied, and the text is written to
    /// the temp file as it is made, never held whole. A recording of a large document is
    /// written with no copy of it.
    ///
    /// The document is scanned for credentials first ([`credentials::scan_recording`]): a
    /// recording that would hold one is not written, and the file is left as it was.
    pub fn write_moved(self, file: &Path) -> Result<(), WriteError> {
        write_checked(self.into_value(), file)
    }

    /// The recording as JSON (what `serde_json::to_value` gives), its requests and responses
    /// moved in rather than copied ([`Recording::into_document`]).
    pub fn into_value(self) -> Value {
        self.into_document(None)
    }

    /// [`Recording::document`], its requests and responses moved in rather than copied: they
    /// are taken out, the rest is serialized, and they are put back in their places.
    pub fn into_document(mut self, review: Option<&pending::Review>) -> Value {
        let mut taken = Vec::new();
        for interaction in self.samples.iter_mut().flat_map(|s| &mut s.interactions) {
            taken.push((
                std::mem::take(&mut interaction.request),
                std::mem::take(&mut interaction.response),
            ));
        }
        let mut value = self.document(review);
        let mut taken = taken.into_iter();
        let mut put_back = |interactions: Option<&mut Value>| {
            for interaction in interactions
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
            {
                if let Some((request, response)) = taken.next() {
                    interaction["request"] = request;
                    interaction["response"] = response;
                }
            }
        };
        match value.get_mut("samples").and_then(Value::as_array_mut) {
            Some(samples) => samples
                .iter_mut()
                .for_each(|s| put_back(s.get_mut("interactions"))),
            None => put_back(value.get_mut("interactions")),
        }
        value
    }
}

/// Takes what `redactor` redacts out of an HTTP call's query string.
fn redact_query(http: &mut Option<HttpExchange>, redactor: &Redactor) {
    if let Some(query) = http.as_mut().and_then(|h| h.query.as_mut()) {
        *query = redactor.redact_query(query);
    }
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
        let (case, temp) = match temp_target(&name) {
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
                (case_of(&relative.with_file_name(target)), true)
            }
            None if name.starts_with('.') => continue,
            None => match case_of(relative) {
                Some(case) if !cases.contains(case.as_str()) => (Some(case), false),
                _ => continue,
            },
        };
        let Some(case) = case else {
            continue;
        };
        let Ok(Some(head)) = Recording::read_head(path) else {
            continue;
        };
        // A pending recording (`a.pending.json`, case `a`) is an orphan when its case is gone,
        // never while the case is there to review it.
        let pending_of_gone_case = pending::case_of_pending(&case) == Some(head.case.as_str())
            && (temp || !cases.contains(head.case.as_str()));
        if head.case == case || pending_of_gone_case {
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

/// The camelCase keys `#[serde(alias)]` accepts, in the JSON Schema too.
#[cfg(feature = "schema")]
fn recording_config_aliases(schema: &mut schemars::Schema) {
    proposal_eval_engine::schema::aliases(
        schema,
        &[("ignore_request_paths", "ignoreRequestPaths")],
    );
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
            input_sha256: Some(input_digest(&json!({})).0),
            input: Some(json!({})),
            samples: vec![Sample {
                interactions: vec![],
                judge: None,
            }],
            judge: None,
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

    /// A pending recording of `case`, as `RECORD=review` writes it.
    fn pending_of(case: &str) -> String {
        let recording: Recording =
            Recording::parse(recording_of(case).as_bytes(), Path::new("r.json")).unwrap();
        pending::Pending {
            recording,
            review: pending::Review {
                committed: None,
                pending: pending::Outcome::Output(json!([])),
                committed_samples: Vec::new(),
                pending_samples: Vec::new(),
            },
        }
        .to_pretty()
    }

    #[test]
    fn a_pending_recording_is_an_orphan_only_when_its_case_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        write_aged(dir, "kept.json", &recording_of("kept"), 0);
        write_aged(dir, "kept.pending.json", &pending_of("kept"), 0);
        write_aged(dir, "sub/gone.pending.json", &pending_of("sub/gone"), 0);
        // An interrupted write of a pending recording of a live case.
        write_aged(dir, ".kept.pending.json.1-0.tmp", &pending_of("kept"), 3600);
        // The recording of a case named `odd.pending` (not a pending one of `odd`).
        write_aged(dir, "odd.pending.json", &recording_of("odd.pending"), 0);
        // A pending file whose `case` is another case's.
        write_aged(dir, "mislaid.pending.json", &pending_of("elsewhere"), 0);
        assert_eq!(
            orphan_names(dir, &["kept", "odd.pending", "odd"]),
            [".kept.pending.json.1-0.tmp", "sub/gone.pending.json"]
        );
        assert_eq!(
            orphan_names(dir, &["kept"]),
            [
                ".kept.pending.json.1-0.tmp",
                "odd.pending.json",
                "sub/gone.pending.json"
            ]
        );
    }

    /// A replay reads the judge part apart, its calls' requests and responses skipped: the key,
    /// the parts, the verdicts and each call's cost are what a whole read gives; a judge call
    /// that does not read is still named, as a whole read names it.
    #[test]
    fn a_replay_reads_the_judge_part_without_its_calls_and_loses_nothing() {
        let input = json!({"message": "hi"});
        let now = current(&input, &"a".repeat(64));
        let at: DateTime<Utc> = "2025-01-15T10:00:00Z".parse().unwrap();
        let mut call = Interaction::new(
            json!({"messages": [{"role": "user", "content": "Judge \"this\"\n{\"a\": 1}"}]}),
            json!({"choices": [{"message": {"content": "{\"verdicts\": []}"}}]}),
            at,
        );
        call.latency_ms = Some(12.5);
        call.usage = Some(usage::Usage {
            model: Some("judge-1".into()),
            input_tokens: 40,
            output_tokens: 7,
        });
        let mut recording = Recording::new(
            "a".into(),
            at,
            &now,
            &input,
            vec![Interaction::new(json!({"q": 1}), json!({"a": 1}), at)],
        );
        let verdicts = vec![judgement::RecordedVerdict {
            id: 0,
            statement: "Says hi".into(),
            holds: true,
            reason: "it does".into(),
        }];
        let parts = judgement::KeyParts::for_tests('2', "judge-1");
        recording.judge = Some(
            judgement::Judgement {
                key_sha256: "5".repeat(64),
                parts: parts.clone(),
                recorded_at: at,
                calls: vec![judgement::JudgeCall::of(call)],
                verdicts: verdicts.clone(),
            }
            .without_requests(),
        );
        recording.format = JUDGE_CALLS_FORMAT;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.json");
        recording.write(&file).unwrap();
        // Read small (whole text, then parsed) and large (parsed as it is read).
        for limit in [LEAN_READ_OVER, 0] {
            let read = Recording::read_for_replay_over(&file, limit)
                .unwrap()
                .unwrap();
            assert_eq!(read.recording.judge, None);
            // A large file's requests are hashed, not built (see `read_for_replay`).
            let responses = |r: &Recording| r.samples[0].interactions[0].response.clone();
            assert_eq!(responses(&read.recording), responses(&recording));
            assert_eq!(read.judges.len(), 1, "one sample, one judge part");
            let judge = read
                .judges
                .into_iter()
                .flatten()
                .next()
                .expect("the judge part");
            assert_eq!(judge.key_sha256, "5".repeat(64));
            assert_eq!(judge.format, JUDGE_CALLS_FORMAT);
            let graded: Vec<proposal_eval_engine::rubric::Verdict> =
                judge.verdicts.into_iter().map(Into::into).collect();
            let recorded: Vec<_> = verdicts
                .iter()
                .map(|v| (v.id, v.holds, v.reason.clone()))
                .collect();
            assert_eq!(
                graded
                    .into_iter()
                    .map(|v| (v.id, v.holds, v.reason))
                    .collect::<Vec<_>>(),
                recorded
            );
            let costs: Vec<_> = judge
                .calls
                .iter()
                .map(|c| (c.latency_ms, c.usage.as_ref().map(|u| u.input_tokens)))
                .collect();
            assert_eq!(costs, [(Some(12.5), Some(40))]);
        }
        // The file a whole read gives back (what a rewrite starts from) holds the calls.
        assert_eq!(Recording::read(&file).unwrap().unwrap(), recording);

        let text = std::fs::read_to_string(&file).unwrap();
        let damaged = text.replacen("\"latency_ms\": 12.5", "\"latency_ms\": \"slow\"", 1);
        assert_ne!(damaged, text);
        std::fs::write(&file, damaged).unwrap();
        let error = Recording::read_for_replay(&file).unwrap_err();
        assert_eq!(error.kind(), RecordingErrorKind::Damaged);
        assert_eq!(error, Recording::read(&file).unwrap_err());
    }

    /// A judgement whose key is `key` repeated, on one statement that `holds`.
    fn judged(key: char, holds: bool, at: DateTime<Utc>) -> judgement::Judgement {
        judgement::Judgement {
            key_sha256: key.to_string().repeat(64),
            parts: judgement::KeyParts::for_tests(key, "judge-1"),
            recorded_at: at,
            calls: vec![judgement::JudgeCall::of(Interaction::new(
                json!({"messages": [{"role": "user", "content": format!("judge {key}")}]}),
                json!({"verdicts": [{"id": 0, "holds": holds, "reason": "r"}]}),
                at,
            ))],
            verdicts: vec![judgement::RecordedVerdict {
                id: 0,
                statement: "Says hi".into(),
                holds,
                reason: format!("reason {key}"),
            }],
        }
    }

    /// A recording of several samples keeps each sample's judge part in `samples[k].judge`
    /// (format 4, no top-level `judge`); a whole read gives it back, and a replay (small and
    /// large file) reads each sample's apart, in order, a sample without one as `None`.
    #[test]
    fn each_sample_of_several_keeps_its_own_judge_part() {
        let input = json!({"message": "hi"});
        let now = current(&input, &"a".repeat(64));
        let at: DateTime<Utc> = "2025-01-15T10:00:00Z".parse().unwrap();
        let sample =
            |n: i64| Sample::new(vec![Interaction::new(json!({"q": n}), json!({"a": n}), at)]);
        let mut recording = Recording::of_samples(
            "a".into(),
            at,
            &now,
            &input,
            vec![sample(1), sample(2), sample(3)],
        );
        assert!(recording.set_judgement(0, judged('5', true, at)));
        assert!(recording.set_judgement(2, judged('6', false, at)));
        assert!(
            !recording.set_judgement(3, judged('7', true, at)),
            "there is no sample 4"
        );
        assert_eq!(recording.judge, None);
        let value: Value = serde_json::from_str(&recording.to_pretty()).unwrap();
        assert_eq!(value["format"], JUDGE_CALLS_FORMAT);
        assert_eq!(value.get("judge"), None);
        assert_eq!(value["samples"][0]["judge"]["key_sha256"], "5".repeat(64));
        assert_eq!(value["samples"][1].get("judge"), None);
        assert_eq!(value["samples"][2]["judge"]["verdicts"][0]["holds"], false);

        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.json");
        recording.write(&file).unwrap();
        let read = Recording::read(&file).unwrap().unwrap();
        assert_eq!(read, recording);
        assert_eq!(
            read.judgement(2).map(|j| j.key_sha256.clone()),
            Some("6".repeat(64))
        );
        assert_eq!(read.judgement(1), None);
        for limit in [LEAN_READ_OVER, 0] {
            let mut replay = Recording::read_for_replay_over(&file, limit)
                .unwrap()
                .unwrap();
            assert!(replay.recording.samples.iter().all(|s| s.judge.is_none()));
            let keys: Vec<Option<String>> = replay
                .judges
                .iter()
                .map(|j| j.as_ref().map(|j| j.key_sha256[..1].to_string()))
                .collect();
            assert_eq!(
                keys,
                [Some("5".into()), None, Some("6".into())],
                "limit {limit}"
            );
            let verdict = proposal_eval_engine::rubric::Verdict::from(
                replay.judges[2].take().unwrap().verdicts.remove(0),
            );
            assert_eq!(verdict.reason, "reason 6");
        }
        // A damaged judge call is named where the file keeps it.
        let hash = &recording.judgement(2).unwrap().calls[0].request_sha256;
        let damaged = recording.to_pretty().replace(hash.as_str(), "abc");
        let error = Recording::parse(damaged.as_bytes(), Path::new("r.json")).unwrap_err();
        assert!(
            error.to_string().contains(
                "`samples[2].judge.calls[0].request_sha256` is not 64 lowercase hex digits"
            ),
            "{error}"
        );
        // A committed recording keeps no judge request, on any sample.
        let mut committed = recording.clone();
        committed.drop_judge_requests();
        let text = committed.to_pretty();
        assert!(
            !text.contains("judge 5") && !text.contains("judge 6"),
            "{text}"
        );
        assert!(text.contains("\"request_sha256\""), "{text}");
        // Redaction reaches each sample's judge calls.
        let mut redacted = recording.clone();
        let config = RecordingConfig {
            redact_values: vec![ValuePattern::new("judge 6").unwrap()],
            ..RecordingConfig::default()
        };
        redacted.redact(&config.redactor());
        let text = redacted.to_pretty();
        assert!(
            !text.contains("judge 6") && text.contains("judge 5"),
            "{text}"
        );
    }

    /// A judge part in the other place than its recording's number of samples keeps it is
    /// refused, naming the key and where it belongs; a sample's judge part needs format 4.
    #[test]
    fn a_judge_part_in_the_wrong_place_is_refused() {
        let input = json!({"message": "hi"});
        let now = current(&input, &"a".repeat(64));
        let at: DateTime<Utc> = "2025-01-15T10:00:00Z".parse().unwrap();
        let err = |value: &Value| {
            Recording::parse(value.to_string().as_bytes(), Path::new("r.json"))
                .unwrap_err()
                .to_string()
        };
        let judge = serde_json::to_value(judged('5', true, at)).unwrap();
        let two = Recording::of_samples(
            "a".into(),
            at,
            &now,
            &input,
            vec![Sample::default(), Sample::default()],
        );
        let mut top = serde_json::to_value(&two).unwrap();
        top["format"] = json!(JUDGE_FORMAT);
        top["judge"] = judge.clone();
        assert!(
            err(&top).contains("`judge` is the judge part of a recording of one sample; this one has 2 samples, and each keeps its own in `samples[k].judge`"),
            "{}",
            err(&top)
        );
        let mut old = serde_json::to_value(&two).unwrap();
        old["samples"][1]["judge"] = judge.clone();
        assert!(
            err(&old).contains("`samples[1].judge` is a key of format 4, not of format 3"),
            "{}",
            err(&old)
        );
        let mut one = Recording::new("a".into(), at, &now, &input, Vec::new());
        one.judge = Some(judged('5', true, at));
        let mut inner = serde_json::to_value(&one).unwrap();
        inner["samples"][0]["judge"] = judge;
        inner.as_object_mut().unwrap().remove("judge");
        assert!(
            err(&inner).contains(
                "`samples[0].judge`: a recording of one sample keeps its judge part in `judge`"
            ),
            "{}",
            err(&inner)
        );
    }

    /// A committed recording of one sample with a judge part (format 4, written again as
    /// format 5) keeps its judge part the top-level `judge`, and a format-5 one reads and writes
    /// back byte for byte; its replay reads the key a whole read gives.
    #[test]
    fn a_judged_recording_of_one_sample_is_written_back_unchanged() {
        let file = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../examples/rubric-agent/fixtures/greetings/recordings/hello.json");
        let text = std::fs::read_to_string(&file).unwrap();
        let recording = Recording::parse(text.as_bytes(), &file).unwrap();
        assert!(recording.judgement(0).is_some());
        let rewritten = recording.to_pretty();
        let value: Value = serde_json::from_str(&rewritten).unwrap();
        assert_eq!(value["format"], JUDGE_CALLS_FORMAT);
        assert!(value["judge"].is_object() && value["samples"][0].get("judge").is_none());
        let again = Recording::parse(rewritten.as_bytes(), &file).unwrap();
        assert_eq!(again.to_pretty(), rewritten);
        let dir = tempfile::tempdir().unwrap();
        let copy = dir.path().join("hello.json");
        std::fs::write(&copy, &rewritten).unwrap();
        let replay = Recording::read_for_replay(&copy).unwrap().unwrap();
        assert_eq!(
            replay.judges[0].as_ref().map(|j| &j.key_sha256),
            again.judge.as_ref().map(|j| &j.key_sha256)
        );
    }

    /// A judge call keeps its request's hash (of the request redacted, as it would be
    /// recorded); the request itself only while it is there (a pending file). A format-4 file,
    /// whose calls hold their requests, still reads, and is rewritten as format 5 with the
    /// hashes alone; a call of the wrong shape for its format is damage, named.
    #[test]
    fn a_judge_call_keeps_its_requests_hash_and_format_4_still_reads() {
        let input = json!({"message": "hi"});
        let now = current(&input, &"a".repeat(64));
        let at: DateTime<Utc> = "2025-01-15T10:00:00Z".parse().unwrap();
        let request =
            json!({"model": "j", "api_key": "k", "messages": [{"content": "Judge \"this\""}]});
        let call = judgement::JudgeCall::of(Interaction::new(
            request.clone(),
            json!({"verdicts": []}),
            at,
        ));
        assert_eq!(call.request_sha256, judgement::request_sha256(&request));
        let mut recording = Recording::new("a".into(), at, &now, &input, vec![]);
        recording.judge = Some(judgement::Judgement {
            key_sha256: "5".repeat(64),
            parts: judgement::KeyParts::for_tests('2', "j"),
            recorded_at: at,
            calls: vec![call],
            verdicts: vec![],
        });
        recording.format = JUDGE_CALLS_FORMAT;
        recording.redact(&Redactor::default());
        let redacted = json!({"model": "j", "api_key": "<redacted>", "messages": [{"content": "Judge \"this\""}]});
        let judged = |r: &Recording| r.judge.clone().unwrap().calls.remove(0);
        assert_eq!(judged(&recording).request, Some(redacted.clone()));
        let hash = judgement::request_sha256(&redacted);
        assert_eq!(judged(&recording).request_sha256, hash);

        // As a pending file holds it (the request kept), and as a committed one (its hash).
        let with_request = recording.to_pretty();
        assert!(with_request.contains("\"format\": 5"), "{with_request}");
        let file = Path::new("r.json");
        assert_eq!(
            Recording::parse(with_request.as_bytes(), file).unwrap(),
            recording
        );
        let mut committed = recording.clone();
        committed.judge = committed.judge.map(judgement::Judgement::without_requests);
        let text = committed.to_pretty();
        assert!(!text.contains("Judge"), "{text}");
        assert!(
            text.contains(&format!("\"request_sha256\": \"{hash}\"")),
            "{text}"
        );
        assert_eq!(Recording::parse(text.as_bytes(), file).unwrap(), committed);

        // Format 4: the request, no hash; read with the hash made, rewritten as format 5.
        let hash_line = format!("        \"request_sha256\": \"{hash}\",\n");
        let format_4 = with_request
            .replace(&hash_line, "")
            .replace("\"format\": 5", "\"format\": 4");
        assert_ne!(format_4, with_request);
        let read = Recording::parse(format_4.as_bytes(), file).unwrap();
        assert_eq!((read.format, judged(&read).request), (4, None));
        assert_eq!(judged(&read).request_sha256, hash);
        // Its key made from its parts, as format 5 makes it: a rewrite stays fresh.
        let judge = read.judge.as_ref().unwrap();
        assert_eq!(judge.key_sha256, judge.parts.key_sha256());
        let key_line = |key: &str| format!("\"key_sha256\": \"{key}\"");
        let rewritten = text.replace(&key_line(&"5".repeat(64)), &key_line(&judge.key_sha256));
        assert_ne!(rewritten, text);
        assert_eq!(read.to_pretty(), rewritten);

        let damage = |text: &str| {
            Recording::parse(text.as_bytes(), file)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            damage(&text.replace(&hash_line, "")),
            "damaged recording: r.json: `judge.calls[0]` has no `request_sha256`; fix it, or delete the file and re-record the case"
        );
        assert_eq!(
            damage(&with_request.replace("\"format\": 5", "\"format\": 4")),
            "damaged recording: r.json: `judge.calls[0]` has `request_sha256`, a key of format 5, not of format 4; fix it, or delete the file and re-record the case"
        );
        assert!(damage(&text.replace(&hash, "abc"))
            .contains("`judge.calls[0].request_sha256` is not 64 lowercase hex digits"));
    }

    fn current(input: &Value, fixture_sha: &str) -> CaseSources {
        let (input_sha256, input_bytes) = input_digest(input);
        CaseSources {
            fixture: Source {
                path: "f.json".into(),
                sha256: fixture_sha.into(),
                bytes: 1,
            },
            input_sha256,
            input_bytes,
            sources: vec![Source {
                path: "p.md".into(),
                sha256: "b".repeat(64),
                bytes: 1,
            }],
        }
    }

    #[test]
    fn recording_round_trips_and_format_2_depends_on_the_input() {
        let input = json!({"x": 1, "a": [true]});
        let now = current(&input, &"a".repeat(64));
        let r = Recording::new(
            "a".into(),
            "2025-01-15T10:00:00Z".parse().unwrap(),
            &now,
            &input,
            vec![],
        );
        assert_eq!(r.format, 2);
        assert_eq!(r.sources, now.sources, "the fixture file is not a source");
        // Canonical JSON: sorted keys, no white space.
        let (sha, _) = sources::hash_content(br#"{"a":[true],"x":1}"#);
        assert_eq!(r.input_sha256.as_deref(), Some(sha.as_str()));
        let text = r.to_pretty();
        assert_eq!(
            Recording::parse(text.as_bytes(), Path::new("r.json")).unwrap(),
            r
        );
        let head = Recording::read_head(&write_tmp("head.json", &text))
            .unwrap()
            .unwrap();
        assert_eq!((head.case.as_str(), &head.sources), ("a", &r.sources));
        assert!(head.changes(&now).is_empty());
        // Another fixture file (an edited `expected`) with the same input: still fresh.
        assert!(r.changes(&current(&input, &"c".repeat(64))).is_empty());
        let other = current(&json!({"x": 2}), &"a".repeat(64));
        assert!(matches!(
            &r.changes(&other)[..],
            [SourceChange::Input { .. }]
        ));

        let cut = &text[..text.len() / 2];
        let err = Recording::read_head(&write_tmp("cut.json", cut)).unwrap_err();
        assert_eq!(err.kind(), RecordingErrorKind::Unreadable, "{err}");
        assert_eq!(
            Recording::read_head(Path::new("/nonexistent/r.json")),
            Ok(None)
        );
    }

    /// The input is hashed as it is written; the hash is the one recordings store: SHA-256 of
    /// the engine's canonical JSON, CRLF read as LF (a raw CR never appears in it).
    #[test]
    fn the_input_digest_is_the_hash_of_its_canonical_json() {
        let large = "Invoice \"0042\", M\u{fc}ller\r\n".repeat(50_000);
        for input in [
            json!({}),
            json!(null),
            json!({"b": "x\r\ny", "a": [1.5, null, -3, {"z": 1, "y": 2}]}),
            json!({"document": large}),
        ] {
            let text = proposal_eval_engine::json::canonical_json(&input);
            assert_eq!(input_digest(&input), sources::hash_content(text.as_bytes()));
        }
        // Pinned: the hash of `{"a":[true],"x":1}`, as existing recordings hold it.
        assert_eq!(
            input_digest(&json!({"x": 1, "a": [true]})).0,
            "dd515cb702590e695b91a7749978c9278a0b993d4a1732f9e87d0729f8897d3c"
        );
    }

    #[test]
    fn format_1_depends_on_the_whole_fixture_and_migrates() {
        let input = json!({"x": 1});
        let now = current(&input, &"a".repeat(64));
        let mut sources = vec![now.fixture.clone()];
        sources.extend(now.sources.clone());
        let old = Recording {
            format: 1,
            case: "a".into(),
            recorded_at: "2025-01-15T10:00:00Z".parse().unwrap(),
            sources,
            input_sha256: None,
            input: Some(input.clone()),
            samples: vec![Sample {
                interactions: vec![],
                judge: None,
            }],
            judge: None,
        };
        let text = old.to_pretty();
        assert!(!text.contains("input_sha256"), "{text}");
        let read = Recording::parse(text.as_bytes(), Path::new("r.json")).unwrap();
        assert_eq!(read, old);
        assert!(read.changes(&now).is_empty());
        let edited = current(&input, &"c".repeat(64));
        assert!(
            matches!(&read.changes(&edited)[..], [SourceChange::Changed { path, .. }] if path == "f.json")
        );
        let migrated = read.migrated(&now);
        assert_eq!(migrated.format, 2);
        assert_eq!(
            migrated,
            Recording::new("a".into(), old.recorded_at, &now, &input, vec![])
        );
        assert!(migrated.changes(&edited).is_empty());
    }

    #[test]
    fn a_large_input_is_recorded_by_its_hash_only() {
        let input = json!({"message": "x".repeat(INPUT_COPY_LIMIT as usize)});
        let now = current(&input, &"a".repeat(64));
        let r = Recording::new(
            "a".into(),
            "2025-01-15T10:00:00Z".parse().unwrap(),
            &now,
            &input,
            vec![],
        );
        assert_eq!(r.input, None);
        let read = Recording::parse(r.to_pretty().as_bytes(), Path::new("r.json")).unwrap();
        assert!(read.changes(&now).is_empty());
    }

    #[test]
    fn the_format_is_read_first_and_damage_is_named() {
        let input = json!({"x": 1});
        let now = current(&input, &"a".repeat(64));
        let text = Recording::new(
            "a".into(),
            "2025-01-15T10:00:00Z".parse().unwrap(),
            &now,
            &input,
            vec![],
        )
        .to_pretty();
        let err = |text: &str| Recording::parse(text.as_bytes(), Path::new("r.json")).unwrap_err();
        let upgrade = "r.json: made by a newer proposal-eval (format 6; this version reads up to 5): upgrade proposal-eval";
        let newer = text.replace("\"format\": 2", "\"format\": 6");
        assert_eq!(err(&newer).to_string(), upgrade);
        assert_eq!(err(&newer).kind(), RecordingErrorKind::Newer { format: 6 });
        // Keys and shapes this version does not know: still the upgrade.
        let newer = newer.replace(
            "\"case\": \"a\"",
            "\"case\": {\"path\": \"a\"}, \"model\": \"m\"",
        );
        assert_eq!(err(&newer).to_string(), upgrade);
        let head = Recording::read_head(&write_tmp("newer.json", &newer)).unwrap_err();
        assert!(head.to_string().contains("upgrade proposal-eval"), "{head}");

        for (edit, kind, says) in [
            (
                text.replace(&"b".repeat(64), "not-a-hash"),
                RecordingErrorKind::Damaged,
                "`sources[0].sha256` (p.md) is not 64 lowercase hex digits",
            ),
            (
                text.replace("\"input_sha256\"", "\"input_sha\""),
                RecordingErrorKind::Damaged,
                "unknown field `input_sha`",
            ),
            (
                text.replace("\"case\": \"a\",", ""),
                RecordingErrorKind::Damaged,
                "the key `case` is missing",
            ),
            (
                text.replace("\"format\": 2,", ""),
                RecordingErrorKind::Damaged,
                "the key `format` is missing",
            ),
            (
                text.replace("\"format\": 2", "\"format\": \"2\""),
                RecordingErrorKind::Damaged,
                "`format` is \"2\"",
            ),
            (
                text.replace(&input_digest(&input).0, "ABC"),
                RecordingErrorKind::Damaged,
                "`input_sha256` is not 64 lowercase hex digits",
            ),
            (
                text.replace("\"format\": 2", "\"format\": 1"),
                RecordingErrorKind::Damaged,
                "`input_sha256` is not a key of format 1",
            ),
            (
                "{\"format\": 2,".to_string(),
                RecordingErrorKind::Unreadable,
                "cut off",
            ),
        ] {
            let e = err(&edit);
            assert_eq!(e.kind(), kind, "{e}");
            let shown = e.to_string();
            assert!(shown.contains(says), "`{says}` not in {shown}");
            let word = if kind == RecordingErrorKind::Damaged {
                "damaged recording: r.json"
            } else {
                "unreadable recording: r.json"
            };
            assert!(shown.starts_with(word), "{shown}");
        }
    }

    #[test]
    fn several_samples_are_format_3_and_one_stays_format_2() {
        let input = json!({"x": 1});
        let now = current(&input, &"a".repeat(64));
        let at: DateTime<Utc> = "2025-01-15T10:00:00Z".parse().unwrap();
        let sample = |answer: i64| Sample {
            interactions: vec![Interaction::new(
                json!({ "prompt": "p" }),
                json!({ "answer": answer }),
                at,
            )],
            judge: None,
        };
        let two = Recording::of_samples("a".into(), at, &now, &input, vec![sample(1), sample(2)]);
        assert_eq!(two.format, SAMPLES_FORMAT);
        let text = two.to_pretty();
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["format"], 3);
        assert!(value.get("interactions").is_none(), "{text}");
        assert_eq!(
            value["samples"][1]["interactions"][0]["response"]["answer"],
            2
        );
        let read = Recording::parse(text.as_bytes(), Path::new("r.json")).unwrap();
        assert_eq!(read, two);
        assert_eq!(read.interactions(), &two.samples[0].interactions[..]);
        assert!(
            read.changes(&now).is_empty(),
            "format 3 depends on what format 2 does"
        );
        let head = Recording::read_head(&write_tmp("samples.json", &text))
            .unwrap()
            .unwrap();
        assert_eq!(head.format, 3);

        // One sample: the file is exactly format 2, which versions without repeats read.
        let one = Recording::of_samples("a".into(), at, &now, &input, vec![sample(1)]);
        let text = one.to_pretty();
        assert_eq!(
            text,
            Recording::new("a".into(), at, &now, &input, sample(1).interactions).to_pretty()
        );
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            (value["format"].as_u64(), value.get("samples")),
            (Some(2), None)
        );

        let err = |text: &str| {
            Recording::parse(text.as_bytes(), Path::new("r.json"))
                .unwrap_err()
                .to_string()
        };
        let listed = two.to_pretty();
        let empty = serde_json::to_string(&{
            let mut v: Value = serde_json::from_str(&listed).unwrap();
            v["samples"] = json!([]);
            v
        })
        .unwrap();
        assert!(
            err(&empty).contains("`samples` is empty"),
            "{}",
            err(&empty)
        );
        let mixed = listed.replace("\"format\": 3", "\"format\": 2");
        assert!(
            err(&mixed).contains("`samples` is a key of format 3, not of format 2"),
            "{}",
            err(&mixed)
        );
        let both = serde_json::to_string(&{
            let mut v: Value = serde_json::from_str(&listed).unwrap();
            v["interactions"] = json!([]);
            v
        })
        .unwrap();
        assert!(
            err(&both).contains("`interactions` is not a key of format 3"),
            "{}",
            err(&both)
        );
        let none = serde_json::to_string(&{
            let mut v: Value = serde_json::from_str(&listed).unwrap();
            v.as_object_mut().unwrap().remove("samples");
            v
        })
        .unwrap();
        assert!(
            err(&none).contains("the key `samples` is missing"),
            "{}",
            err(&none)
        );
    }

    /// A recording written with its requests and responses moved (what recording a case does)
    /// is the file `to_pretty` gives, for one sample and for several, with every interaction key.
    #[test]
    fn a_recording_written_moved_is_the_same_file() {
        let input = json!({"x": 1});
        let now = current(&input, &"a".repeat(64));
        let at: DateTime<Utc> = "2025-01-15T10:00:00Z".parse().unwrap();
        let call = |n: i64| {
            let mut interaction = Interaction::new(
                json!({ "prompt": format!("p{n}"), "z": [1, {"b": 2, "a": "\r\n\"q\""}] }),
                json!({ "answer": n }),
                at,
            );
            if n % 2 == 0 {
                interaction.http = Some(HttpExchange {
                    upstream: Some("ocr".into()),
                    method: "POST".into(),
                    path: "/v1/chat".into(),
                    query: None,
                    status: 200,
                    content_type: Some("application/json".into()),
                });
                interaction.latency_ms = Some(12.5);
            }
            interaction
        };
        let dir = tempfile::tempdir().unwrap();
        let one = Recording::new("a".into(), at, &now, &input, vec![call(1), call(2)]);
        let several = Recording::of_samples(
            "a".into(),
            at,
            &now,
            &input,
            vec![
                Sample {
                    interactions: vec![call(1)],
                    judge: None,
                },
                Sample {
                    interactions: vec![call(2), call(3)],
                    judge: None,
                },
            ],
        );
        for recording in [one, several] {
            let expected = recording.to_pretty();
            assert_eq!(
                recording.clone().into_value(),
                serde_json::to_value(&recording).unwrap()
            );
            let file = dir.path().join("sub/a.json");
            recording.write(&file).unwrap();
            assert_eq!(std::fs::read_to_string(&file).unwrap(), expected);
            recording.clone().write_moved(&file).unwrap();
            assert_eq!(std::fs::read_to_string(&file).unwrap(), expected);
            let read = Recording::read(&file).unwrap().unwrap();
            assert_eq!(read, recording);
        }
        // Only the recording is in the folder: no temp file is left behind.
        let names: Vec<_> = std::fs::read_dir(dir.path().join("sub"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["a.json"]);
    }

    /// A large recording is read for replay with its requests hashed (here over 64 KiB, not
    /// [`LEAN_READ_OVER`], to keep the test quick):
    /// the rest is what a whole read gives, a request equal to the recorded one replays, one
    /// that differs fails with the diff of the recorded request (read again), and one that
    /// differs only where the recording says `"<redacted>"` still replays.
    #[test]
    fn a_large_recording_replays_from_the_digests_of_its_requests() {
        use crate::recording::calls::SampleDigests;
        use crate::recording::llm::Llm;
        let document = "Invoice \"0042\", M\u{fc}ller\r\n".repeat(3_000);
        let limit = 64 * 1024;
        let request = |document: &str, key: &str| json!({"model": "m", "api_key": key, "messages": [{"role": "user", "content": document}]});
        let input = json!({"x": 1});
        let now = current(&input, &"a".repeat(64));
        let at: DateTime<Utc> = "2025-01-15T10:00:00Z".parse().unwrap();
        let mut recording = Recording::new(
            "a".into(),
            at,
            &now,
            &input,
            vec![
                Interaction::new(request(&document, "sk-one"), json!({"n": 1}), at),
                Interaction::new(json!({"small": true}), json!({"n": 2}), at),
            ],
        );
        recording.redact(&Redactor::default());
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.json");
        recording.clone().write_moved(&file).unwrap();
        assert!(std::fs::metadata(&file).unwrap().len() > limit);

        let ForReplay {
            recording: lean,
            digests,
            ..
        } = Recording::read_for_replay_over(&file, limit)
            .unwrap()
            .unwrap();
        let digests = digests.expect("a large file is read with its requests hashed");
        let whole = Recording::read(&file).unwrap().unwrap();
        assert_eq!(whole, recording);
        let mut without_requests = whole.clone();
        for interaction in &mut without_requests.samples[0].interactions {
            interaction.request = Value::Null;
        }
        assert_eq!(lean, without_requests);
        let expected: Vec<_> = whole.samples[0]
            .interactions
            .iter()
            .map(|i| canonical::request_digest(&i.request))
            .collect();
        assert_eq!(digests.samples, std::slice::from_ref(&expected));

        let replay = |first: &Value| {
            let mut llm = Llm::replay(
                lean.samples[0].interactions.clone(),
                vec![],
                Redactor::default(),
            )
            .with_digests(SampleDigests {
                file: file.clone(),
                sample: 0,
                digests: expected.clone(),
            });
            let first = llm.complete(first).map_err(|e| e.to_string());
            let second = llm
                .complete(&json!({"small": true}))
                .map_err(|e| e.to_string());
            (first, second, llm.finish_failure())
        };
        // The recorded request, its key redacted in the file: replays.
        let redacted = request(&document, "<redacted>");
        assert_eq!(
            replay(&redacted),
            (Ok(json!({"n": 1})), Ok(json!({"n": 2})), None)
        );
        // Another key: differs from the digest only where the recording is redacted.
        assert_eq!(
            replay(&request(&document, "sk-two")),
            (Ok(json!({"n": 1})), Ok(json!({"n": 2})), None)
        );
        // The calls in the other order (made at once, they arrive as they arrive): each is
        // served its recorded answer, by digest or by the requests read again.
        for first in [redacted.clone(), request(&document, "sk-two")] {
            let mut llm = Llm::replay(
                lean.samples[0].interactions.clone(),
                vec![],
                Redactor::default(),
            )
            .with_digests(SampleDigests {
                file: file.clone(),
                sample: 0,
                digests: expected.clone(),
            });
            assert_eq!(
                llm.complete(&json!({"small": true})).unwrap(),
                json!({"n": 2})
            );
            assert_eq!(llm.complete(&first).unwrap(), json!({"n": 1}));
            assert_eq!(llm.finish_failure(), None);
        }
        // Another document: the diff of the recorded request, read again.
        let changed = document.replacen("0042", "0043", 1);
        let (first, _, failure) = replay(&request(&changed, "sk-two"));
        let first = first.unwrap_err();
        assert!(
            first.starts_with("request [0] differs"),
            "{}",
            &first[..200]
        );
        assert!(
            first.contains("-      \"content\": \"Invoice \\\"0042\\\"")
                && first.contains("+      \"content\": \"Invoice \\\"0043\\\""),
            "{}",
            &first[..first.len().min(2000)]
        );
        assert!(!first.contains("sk-two"));
        assert!(failure.unwrap().contains("request [0] differs"));

        // A small file is read whole, requests and all.
        let small = dir.path().join("small.json");
        Recording::new("a".into(), at, &now, &input, vec![])
            .write(&small)
            .unwrap();
        let read = Recording::read_for_replay_over(&small, limit)
            .unwrap()
            .unwrap();
        assert!(read.digests.is_none());
        assert!(matches!(
            Recording::read_for_replay(&dir.path().join("none.json")),
            Ok(None)
        ));
    }

    /// Found by fuzzing (`fuzz/fuzz_targets/recording.rs`, which rewrites what it reads): with
    /// serde_json's default float parsing a number could read back one bit off, so a rewritten
    /// recording drifted, and a request holding 670/7 no longer equalled its own recording.
    #[test]
    fn numbers_read_back_to_the_bit() {
        let written = Recording {
            format: FORMAT,
            case: "c".into(),
            recorded_at: "2025-01-15T10:00:00Z".parse().unwrap(),
            sources: vec![],
            input_sha256: Some(input_digest(&json!({})).0),
            input: Some(json!({})),
            samples: vec![Sample {
                interactions: vec![Interaction::new(
                    // The fuzzer's number, and one a program computes.
                    json!({ "count": 8.88888888888889e77, "mean": 670.0 / 7.0 }),
                    json!({}),
                    "2025-01-15T10:00:01Z".parse().unwrap(),
                )],
                judge: None,
            }],
            judge: None,
        };
        let text = written.to_pretty();
        let read = Recording::parse(text.as_bytes(), Path::new("r.json")).unwrap();
        assert_eq!(read, written);
        assert_eq!(read.to_pretty(), text);
    }

    fn write_tmp(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("pe-recording-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(name);
        std::fs::write(&file, text).unwrap();
        file
    }
}
