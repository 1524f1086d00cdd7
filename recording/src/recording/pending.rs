//! Pending recordings: what `RECORD=review` recorded, kept beside the committed recording as
//! `<case>.pending.json` until `cargo proposal-eval accept` replaces the committed one with it or
//! `reject` deletes it.
//!
//! A pending file is a recording of this version's format (same keys, same redaction, same
//! atomic writes) plus one key, `review`: what the case's code produced from the committed
//! responses and from the pending ones when it was recorded. The code under test cannot run
//! outside `cargo test`, so keeping both outputs is what lets `review` show each side's verdict,
//! evaluated again with the case's `expected` and config as they are when it is reviewed.

use super::error::{damaged, RecordingError};
use super::Recording;
use crate::redact::Redactor;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The file name ending of a pending recording: `<case>.pending.json`.
pub const SUFFIX: &str = ".pending.json";

/// The pending file of a recording file: `recordings/a.json` is `recordings/a.pending.json`.
pub fn pending_file(recording_file: &Path) -> PathBuf {
    let stem = recording_file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = stem.strip_suffix(".json").unwrap_or(&stem);
    recording_file.with_file_name(format!("{stem}{SUFFIX}"))
}

/// The recording file a pending file belongs to (`a.pending.json` to `a.json`); `None` when the
/// name does not end in [`SUFFIX`].
pub fn committed_file(pending_file: &Path) -> Option<PathBuf> {
    let name = pending_file.file_name()?.to_string_lossy().into_owned();
    let stem = name.strip_suffix(SUFFIX)?;
    (!stem.is_empty()).then(|| pending_file.with_file_name(format!("{stem}.json")))
}

/// The case a pending file's path below its recordings folder names, from that path's case
/// (`sub/a.pending` is `sub/a`); `None` when it is not a pending file's.
pub fn case_of_pending(case_path: &str) -> Option<&str> {
    case_path
        .strip_suffix(SUFFIX.trim_end_matches(".json"))
        .filter(|c| !c.is_empty() && !c.ends_with('/'))
}

/// What the case's code produced from one set of responses: its output, or why it produced none
/// (it returned an error or panicked, or its calls no longer match that recording).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Outcome {
    /// The output, as JSON.
    Output(Value),
    /// Why there is no output.
    Error(String),
}

/// The `review` key of a pending recording.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Review {
    /// What the code produced replaying the committed recording when the pending one was made;
    /// `None` when there was no committed recording.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub committed: Option<Outcome>,
    /// What it produced from the pending responses.
    pub pending: Outcome,
    /// With a committed recording of several samples (`repeat`): what the code produced
    /// replaying each sample after the first, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub committed_samples: Vec<Outcome>,
    /// With several samples recorded: what the code produced on each sample after the first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending_samples: Vec<Outcome>,
}

/// A pending recording: the recording that `accept` commits, and the review data.
#[derive(Clone, Debug, PartialEq)]
pub struct Pending {
    /// The recording, as `accept` writes it in place of the committed one (its judge calls'
    /// requests left out: they are kept here only, for the reviewer).
    pub recording: Recording,
    /// Both sides' outputs.
    pub review: Review,
}

impl Pending {
    /// Takes what `redactor` redacts out of the recording and the outputs, as is done before the
    /// file is written: a pending file may be committed by mistake, so it holds no credential.
    pub fn redact(&mut self, redactor: &Redactor) {
        self.recording.redact(redactor);
        let review = &mut self.review;
        let outcomes = std::iter::once(&mut review.pending)
            .chain(review.committed.as_mut())
            .chain(&mut review.committed_samples)
            .chain(&mut review.pending_samples);
        for outcome in outcomes {
            if let Outcome::Output(value) = outcome {
                redactor.redact(value);
            }
        }
    }

    /// The file's text: the recording's keys and `review`, pretty, keys sorted, final newline.
    pub fn to_pretty(&self) -> String {
        super::canonical_pretty(&self.recording.document(Some(&self.review)))
    }

    /// Writes the pending file atomically, as the recording's writer writes a recording.
    pub fn write(&self, file: &Path) -> std::io::Result<()> {
        super::write_document(&self.recording.document(Some(&self.review)), file)
    }

    /// Writes the pending file as [`Pending::write`] does, consuming it: the recording's
    /// requests and responses are moved into what is written, not copied (see
    /// [`Recording::write_moved`]).
    /// Like a recording, a pending file that would hold what looks like a credential is not
    /// written.
    pub fn write_moved(self, file: &Path) -> Result<(), super::WriteError> {
        super::write_checked(self.recording.into_document(Some(&self.review)), file)
    }

    /// Accepts the pending file `file`: its recording replaces the committed one atomically (a
    /// crash leaves either the old recording or the new one), then the pending file is deleted.
    /// Returns the committed recording's path.
    pub fn accept(file: &Path) -> Result<PathBuf, AcceptError> {
        let committed = committed_file(file).ok_or_else(|| {
            AcceptError::Recording(damaged(
                file,
                format!("a pending recording's name ends in `{SUFFIX}`"),
            ))
        })?;
        let pending = Pending::read(file)
            .map_err(AcceptError::Recording)?
            .ok_or_else(|| {
                AcceptError::Io(
                    file.to_path_buf(),
                    std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
                )
            })?;
        let mut recording = pending.recording;
        // The judge's requests stay in the pending file, for the reviewer; the committed
        // recording keeps their hashes.
        recording.drop_judge_requests();
        recording
            .write(&committed)
            .map_err(|e| AcceptError::Io(committed.clone(), e))?;
        std::fs::remove_file(file).map_err(|e| AcceptError::Io(file.to_path_buf(), e))?;
        Ok(committed)
    }
}

/// Why [`Pending::accept`] could not accept a pending file.
#[derive(Debug)]
pub enum AcceptError {
    /// The pending file cannot be used.
    Recording(RecordingError),
    /// A file could not be written or removed.
    Io(PathBuf, std::io::Error),
}

impl std::fmt::Display for AcceptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AcceptError::Recording(e) => e.fmt(f),
            AcceptError::Io(file, e) => write!(f, "{}: {e}", file.display()),
        }
    }
}

impl std::error::Error for AcceptError {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recording::{input_digest, Interaction, Sample, FORMAT};
    use serde_json::json;

    fn pending() -> Pending {
        Pending {
            recording: Recording {
                format: FORMAT,
                case: "sub/a".into(),
                recorded_at: "2025-01-15T10:00:00Z".parse().unwrap(),
                sources: vec![],
                input_sha256: Some(input_digest(&json!({})).0),
                input: Some(json!({})),
                samples: vec![Sample {
                    interactions: vec![Interaction::new(
                        json!({ "api_key": "sk-live-0123456789abcdef0123", "m": 1 }),
                        json!({ "answer": 2 }),
                        "2025-01-15T10:00:01Z".parse().unwrap(),
                    )],
                    judge: None,
                }],
                judge: None,
            },
            review: Review {
                committed: Some(Outcome::Error("request [0] differs".into())),
                pending: Outcome::Output(json!([{ "password": "hunter2", "x": 2 }])),
                committed_samples: Vec::new(),
                pending_samples: Vec::new(),
            },
        }
    }

    #[test]
    fn a_pending_recording_carries_samples_as_a_recording_does() {
        let mut sampled = pending();
        let second = sampled.recording.samples[0].clone();
        sampled.recording.samples.push(second);
        let text = sampled.to_pretty();
        let read = Pending::parse(text.as_bytes(), Path::new("a.pending.json")).unwrap();
        assert_eq!(read.recording.samples.len(), 2);
        let accepted = read.recording.to_pretty();
        assert!(accepted.contains("\"samples\""), "{accepted}");
        assert_eq!(
            Recording::parse(accepted.as_bytes(), Path::new("a.json"))
                .unwrap()
                .samples,
            sampled.recording.samples
        );
    }

    /// A pending file, or a recording, that would hold a credential redaction missed (here in
    /// an output, under a name no rule redacts) is not written, and the file there is kept.
    #[test]
    fn a_file_that_would_hold_a_credential_is_not_written() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.pending.json");
        let mut leaky = pending();
        leaky.review.pending =
            Outcome::Output(serde_json::json!({ "note": "AKIAIOSFODNN7EXAMPLE" }));
        leaky.redact(&Redactor::default());
        let Err(super::super::WriteError::Credentials(found)) = leaky.clone().write_moved(&file)
        else {
            panic!("written")
        };
        assert_eq!(
            found[0].to_string(),
            "review.pending.output.note (an AKIA AWS access key id)"
        );
        assert!(!file.exists());
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "no temp file either"
        );

        let committed = dir.path().join("a.json");
        std::fs::write(&committed, "before").unwrap();
        let mut recording = leaky.recording;
        recording.samples[0].interactions[0].response =
            serde_json::json!({ "session_token": "0123456789abcdefXYZ" });
        let error = recording.write_moved(&committed).unwrap_err();
        assert_eq!(
            error.to_string(),
            "it would hold what looks like a credential at interactions[0].response.session_token (a key-like value of 19 characters under a name holding `token`)"
        );
        assert_eq!(std::fs::read_to_string(&committed).unwrap(), "before");
    }

    #[test]
    fn names_of_pending_files() {
        let file = Path::new("r/sub/a.json");
        assert_eq!(pending_file(file), Path::new("r/sub/a.pending.json"));
        assert_eq!(committed_file(&pending_file(file)).unwrap(), file);
        assert_eq!(committed_file(Path::new("r/a.json")), None);
        assert_eq!(committed_file(Path::new("r/.pending.json")), None);
    }

    #[test]
    fn a_pending_file_round_trips_redacted_and_accepts_as_a_plain_recording() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("sub/a.pending.json");
        let mut written = pending();
        written.redact(&Redactor::default());
        written.write(&file).unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            !text.contains("sk-live") && !text.contains("hunter2"),
            "{text}"
        );
        assert_eq!(Pending::read(&file).unwrap().unwrap(), written);
        // Written moved (as RECORD=review does), the file is the same.
        written.clone().write_moved(&file).unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
        // A committed recording is not a pending one, and a pending one is not committed.
        let plain = written.recording.to_pretty();
        let err = Pending::parse(plain.as_bytes(), Path::new("p.json")).unwrap_err();
        assert!(err.to_string().contains("`review` is missing"), "{err}");
        let err = Recording::parse(text.as_bytes(), Path::new("r.json")).unwrap_err();
        assert!(err.to_string().contains("`review`"), "{err}");
        // The head (what status and orphans read) is read from either.
        let head = Recording::read_head(&file).unwrap().unwrap();
        assert_eq!(head.case, "sub/a");

        let committed = Pending::accept(&file).unwrap();
        assert_eq!(committed, dir.path().join("sub/a.json"));
        assert!(!file.exists());
        assert_eq!(std::fs::read_to_string(&committed).unwrap(), plain);
        assert!(matches!(
            Pending::accept(&file),
            Err(AcceptError::Io(_, e)) if e.kind() == std::io::ErrorKind::NotFound
        ));
    }

    /// A pending file keeps the judge's whole request (the prompt, for the reviewer); the
    /// recording `accept` commits keeps its hash alone.
    #[test]
    fn a_pending_judge_call_keeps_its_request_and_accept_keeps_its_hash() {
        use crate::recording::judgement::{JudgeCall, Judgement, KeyParts};
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.pending.json");
        let at = "2025-01-15T10:00:02Z".parse().unwrap();
        let request = json!({ "messages": [{ "content": "Statements:\n0. Says hi" }] });
        let mut written = pending();
        let h = "0".repeat(64);
        written.recording.judge = Some(Judgement {
            key_sha256: h.clone(),
            parts: KeyParts {
                rubric_sha256: h.clone(),
                output_sha256: h.clone(),
                input_sha256: h.clone(),
                trajectory_sha256: None,
                prompt_sha256: h,
                model: "j".into(),
                temperature: 0.0,
                samples: 1,
            },
            recorded_at: at,
            calls: vec![JudgeCall::of(Interaction::new(
                request.clone(),
                json!({}),
                at,
            ))],
            verdicts: vec![],
        });
        written.recording.format = crate::recording::JUDGE_CALLS_FORMAT;
        written.redact(&Redactor::default());
        written.clone().write_moved(&file).unwrap();
        assert!(std::fs::read_to_string(&file)
            .unwrap()
            .contains("0. Says hi"));
        assert_eq!(Pending::read(&file).unwrap().unwrap(), written);

        let committed = Pending::accept(&file).unwrap();
        let text = std::fs::read_to_string(&committed).unwrap();
        assert!(!text.contains("Says hi"), "{text}");
        let judge = Recording::read(&committed).unwrap().unwrap().judge.unwrap();
        assert_eq!(judge.calls[0].request, None);
        assert_eq!(
            judge.calls[0].request_sha256,
            crate::recording::judgement::request_sha256(&request)
        );
    }
}
