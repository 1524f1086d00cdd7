//! The judge part of a recording (`judge`): what was judged (its key and the key's parts), the
//! judge's calls and the verdicts they decided. The judge that makes it is
//! `crate::rubric_judge`; this is only the recorded format, so a recording reads it without the
//! judge.
//!
//! A judge call keeps the SHA-256 of its request (`request_sha256`), not the request: the
//! request is the prompt (the template with the input, the output and the statements put in),
//! which each replay would otherwise scan to skip, and which can be made again from what the key
//! names. Only a pending recording (`RECORD=review`) keeps the whole request, for the reviewer.
//! Format 4 kept the request in every call; it is still read, its calls' requests hashed.

use crate::recording::usage::Usage;
use crate::recording::{HttpExchange, Interaction};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The judge part of a recording: what was judged (its key), the judge's calls and the
/// verdicts they decided (the majority, one per statement).
#[cfg_attr(
    feature = "schema",
    derive(schemars::JsonSchema),
    schemars(deny_unknown_fields)
)]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Judgement {
    /// SHA-256 of the canonical JSON of the statements, the output, the input, the trajectory
    /// (when included), the prompt template, the model, the temperature and the samples.
    pub key_sha256: String,
    /// The key's parts, to name what changed when the key differs.
    pub parts: KeyParts,
    /// When the judge was called.
    pub recorded_at: DateTime<Utc>,
    /// The judge's calls, one per sample.
    pub calls: Vec<JudgeCall>,
    /// The verdict on each statement, in order (the majority over the samples).
    pub verdicts: Vec<RecordedVerdict>,
}

/// One call of the judge, as recorded: its request by its SHA-256, its whole response.
#[cfg_attr(
    feature = "schema",
    derive(schemars::JsonSchema),
    schemars(deny_unknown_fields, transform = format_4_calls)
)]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JudgeCall {
    /// Lowercase hex SHA-256 of the request's canonical JSON (sorted keys, no white space), as
    /// it was sent, redacted as a recorded request is. Always there from format 5 on; a
    /// format-4 call has `request` instead.
    pub request_sha256: String,
    /// The whole request (the prompt): kept only in a pending recording (`RECORD=review`), for
    /// the reviewer, and in every call of a format-4 recording; a committed recording of format
    /// 5 keeps its hash alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<Value>,
    /// What the judge answered.
    pub response: Value,
    /// When the answer came.
    pub recorded_at: DateTime<Utc>,
    /// The HTTP side of the call, when it went through `llm.base_url()`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<HttpExchange>,
    /// Milliseconds the live call took.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<f64>,
    /// The tokens the call used, when the response reports them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

/// The schema of a judge call admits format 4's too, whose calls hold `request` and no
/// `request_sha256` (the reader checks which a file's format requires).
#[cfg(feature = "schema")]
fn format_4_calls(schema: &mut schemars::Schema) {
    if let Some(required) = schema.get_mut("required").and_then(Value::as_array_mut) {
        required.retain(|key| key != "request_sha256");
    }
}

impl JudgeCall {
    /// The call `interaction` made, its request kept and hashed.
    pub fn of(interaction: Interaction) -> JudgeCall {
        JudgeCall {
            request_sha256: request_sha256(&interaction.request),
            request: Some(interaction.request),
            response: interaction.response,
            recorded_at: interaction.recorded_at,
            http: interaction.http,
            latency_ms: interaction.latency_ms,
            usage: interaction.usage,
        }
    }
}

/// The SHA-256 a judge call keeps of its request.
pub fn request_sha256(request: &Value) -> String {
    crate::recording::input_digest(request).0
}

impl Judgement {
    /// The judge part as a committed recording keeps it: each call's request by its hash alone.
    pub fn without_requests(mut self) -> Judgement {
        for call in &mut self.calls {
            call.request = None;
        }
        self
    }
}

/// The judge's verdict on one statement, as recorded: with the statement's text, so that a
/// reader (and `cargo proposal-eval judge`, matching human labels) knows what it is about.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedVerdict {
    /// The statement's number.
    pub id: usize,
    /// The statement's whole text.
    pub statement: String,
    /// Whether it holds of the output.
    pub holds: bool,
    /// The judge's reason.
    #[serde(default)]
    pub reason: String,
}

/// What a judgement depends on, part by part: hashes of the large parts, values of the small.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyParts {
    /// SHA-256 of the rubric (`{"required": [...], "forbidden": [...]}`).
    pub rubric_sha256: String,
    /// SHA-256 of the output judged.
    pub output_sha256: String,
    /// SHA-256 of the case's input.
    pub input_sha256: String,
    /// SHA-256 of the trajectory, when `[judge] include_trajectory` is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trajectory_sha256: Option<String>,
    /// SHA-256 of the prompt template.
    pub prompt_sha256: String,
    /// The judge model's name.
    pub model: String,
    /// `[judge] temperature`.
    pub temperature: f64,
    /// `[judge] samples`.
    pub samples: u32,
}

#[cfg(test)]
impl KeyParts {
    /// Parts for tests: each hash one digit repeated (the output's `output`), one sample at
    /// temperature 0 with `model`.
    pub fn for_tests(output: char, model: &str) -> KeyParts {
        KeyParts {
            rubric_sha256: "1".repeat(64),
            output_sha256: output.to_string().repeat(64),
            input_sha256: "3".repeat(64),
            trajectory_sha256: None,
            prompt_sha256: "4".repeat(64),
            model: model.into(),
            temperature: 0.0,
            samples: 1,
        }
    }
}

impl KeyParts {
    /// The key of these parts, as format 5 records it: the SHA-256 of their canonical JSON. It
    /// changes exactly when one of them does.
    pub fn key_sha256(&self) -> String {
        KeyText {
            input_sha256: &self.input_sha256,
            model: &self.model,
            output_sha256: &self.output_sha256,
            prompt_sha256: &self.prompt_sha256,
            rubric_sha256: &self.rubric_sha256,
            samples: self.samples,
            temperature: self.temperature,
            trajectory_sha256: self.trajectory_sha256.as_deref(),
        }
        .sha256()
    }
}

/// A key's parts as texts, borrowed: what [`KeyParts::key_sha256`] hashes, also made by a replay
/// from the parts' digests without a `KeyParts` of its own.
pub struct KeyText<'a> {
    pub input_sha256: &'a str,
    pub model: &'a str,
    pub output_sha256: &'a str,
    pub prompt_sha256: &'a str,
    pub rubric_sha256: &'a str,
    pub samples: u32,
    pub temperature: f64,
    pub trajectory_sha256: Option<&'a str>,
}

impl KeyText<'_> {
    /// The parts, owned.
    pub fn to_parts(&self) -> KeyParts {
        KeyParts {
            rubric_sha256: self.rubric_sha256.to_string(),
            output_sha256: self.output_sha256.to_string(),
            input_sha256: self.input_sha256.to_string(),
            trajectory_sha256: self.trajectory_sha256.map(str::to_string),
            prompt_sha256: self.prompt_sha256.to_string(),
            model: self.model.to_string(),
            temperature: self.temperature,
            samples: self.samples,
        }
    }

    /// The SHA-256 (hex) of the parts' canonical JSON, written by hand from the fields in the
    /// sorted order of their names: `{"input_sha256":"…","model":"…",…,"temperature":0.0}`.
    pub fn sha256(&self) -> String {
        use proposal_eval_engine::json::write_json_str;
        let mut text = Vec::with_capacity(512);
        fn field(text: &mut Vec<u8>, name: &str, first: bool) {
            text.extend_from_slice(if first { b"{\"" } else { b",\"" });
            text.extend_from_slice(name.as_bytes());
            text.extend_from_slice(b"\":");
        }
        field(&mut text, "input_sha256", true);
        write_json_str(self.input_sha256, &mut text);
        field(&mut text, "model", false);
        write_json_str(self.model, &mut text);
        field(&mut text, "output_sha256", false);
        write_json_str(self.output_sha256, &mut text);
        field(&mut text, "prompt_sha256", false);
        write_json_str(self.prompt_sha256, &mut text);
        field(&mut text, "rubric_sha256", false);
        write_json_str(self.rubric_sha256, &mut text);
        field(&mut text, "samples", false);
        // Writing a number to a `Vec` cannot fail.
        let _ = serde_json::to_writer(&mut text, &self.samples);
        field(&mut text, "temperature", false);
        let _ = serde_json::to_writer(&mut text, &self.temperature);
        if let Some(trajectory) = self.trajectory_sha256 {
            field(&mut text, "trajectory_sha256", false);
            write_json_str(trajectory, &mut text);
        }
        text.push(b'}');
        hex(Sha256::digest(&text))
    }
}

/// A SHA-256 digest's lowercase hex, kept on the stack.
#[derive(Clone)]
pub struct HexDigest([u8; 64]);

impl HexDigest {
    /// The hex of a 32-byte digest.
    pub fn of(digest: impl AsRef<[u8]>) -> HexDigest {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut out = [b'0'; 64];
        for (pair, &b) in out.chunks_exact_mut(2).zip(digest.as_ref()) {
            pair[0] = DIGITS[usize::from(b >> 4)];
            pair[1] = DIGITS[usize::from(b & 15)];
        }
        HexDigest(out)
    }

    pub fn as_str(&self) -> &str {
        // Hex digits only: ASCII.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

/// Lowercase hex of a SHA-256 digest, without a `format!` per byte.
pub fn hex(digest: impl AsRef<[u8]>) -> String {
    HexDigest::of(digest).as_str().to_string()
}

/// The judge part as a file holds it, in either format: checked and made a [`Judgement`] by
/// [`ReadJudgement::checked`] once the recording's format is known.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadJudgement {
    key_sha256: String,
    parts: KeyParts,
    recorded_at: DateTime<Utc>,
    calls: Vec<ReadCall>,
    verdicts: Vec<RecordedVerdict>,
}

/// A judge call as a file holds it: format 4 with `request`, format 5 with `request_sha256`
/// (and `request` in a pending recording).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadCall {
    request_sha256: Option<String>,
    request: Option<Value>,
    response: Value,
    recorded_at: DateTime<Utc>,
    #[serde(default)]
    http: Option<HttpExchange>,
    #[serde(default)]
    latency_ms: Option<f64>,
    #[serde(default)]
    usage: Option<Usage>,
}

impl ReadJudgement {
    /// The judgement of a recording of format `format`; `Err` names what is malformed, for a
    /// "damaged recording" error. A format-4 judgement is made format 5's: each call's request
    /// hashed and not kept, and its key made from its parts. Format 4 hashed the texts the parts
    /// are the hashes of, so the two keys name the same judgement, and a replay compares it as
    /// format 5's (a format-4 key that does not agree with its own parts, which only a hand edit
    /// makes, is not compared).
    /// `place` is where the file keeps it (`judge`, `samples[k].judge`), for the message.
    pub fn checked(self, format: u32, place: &str) -> Result<Judgement, String> {
        let calls = self
            .calls
            .into_iter()
            .enumerate()
            .map(|(i, call)| call.checked(format, &format!("{place}.calls[{i}]")))
            .collect::<Result<_, _>>()?;
        let key_sha256 = if format == crate::recording::JUDGE_FORMAT {
            self.parts.key_sha256()
        } else {
            self.key_sha256
        };
        Ok(Judgement {
            key_sha256,
            parts: self.parts,
            recorded_at: self.recorded_at,
            calls,
            verdicts: self.verdicts,
        })
    }
}

impl ReadCall {
    fn checked(self, format: u32, place: &str) -> Result<JudgeCall, String> {
        let at = format!("`{place}`");
        let (request_sha256, request) = match (format, self.request_sha256, self.request) {
            (4, Some(_), _) => {
                return Err(format!(
                    "{at} has `request_sha256`, a key of format 5, not of format 4"
                ))
            }
            (4, None, Some(request)) => (request_sha256(&request), None),
            (4, None, None) => return Err(format!("{at} has no `request`")),
            (_, None, _) => return Err(format!("{at} has no `request_sha256`")),
            (_, Some(hash), _) if !crate::recording::is_sha256(&hash) => {
                return Err(format!(
                    "`{place}.request_sha256` is not 64 lowercase hex digits"
                ))
            }
            (_, Some(hash), request) => (hash, request),
        };
        Ok(JudgeCall {
            request_sha256,
            request,
            response: self.response,
            recorded_at: self.recorded_at,
            http: self.http,
            latency_ms: self.latency_ms,
            usage: self.usage,
        })
    }
}

/// The judge part as a replay uses it: the key, the verdicts, each call's response (each
/// sample's answer, when there are several), latency and usage. Made from the judge part a
/// read leaves in place ([`crate::recording::Recording::judgement`]), whose key is the one this
/// version makes, whatever the format it was read from.
#[derive(Debug)]
pub struct ReplayedJudgement {
    /// Says how its key was made: [`crate::recording::JUDGE_CALLS_FORMAT`], as a read leaves it.
    pub format: u32,
    pub key_sha256: String,
    pub calls: Vec<ReplayedCall>,
    pub verdicts: Vec<ReplayedVerdict>,
}

/// A verdict as a replay uses it.
#[derive(Debug)]
pub struct ReplayedVerdict {
    id: usize,
    holds: bool,
    reason: String,
}

impl From<ReplayedVerdict> for proposal_eval_engine::rubric::Verdict {
    fn from(v: ReplayedVerdict) -> Self {
        proposal_eval_engine::rubric::Verdict {
            id: v.id,
            holds: v.holds,
            reason: v.reason,
        }
    }
}

/// A judge call as a replay uses it.
#[derive(Debug)]
pub struct ReplayedCall {
    pub response: Box<serde_json::value::RawValue>,
    pub latency_ms: Option<f64>,
    pub usage: Option<Usage>,
}

impl From<Judgement> for ReplayedJudgement {
    fn from(judgement: Judgement) -> ReplayedJudgement {
        ReplayedJudgement {
            format: crate::recording::JUDGE_CALLS_FORMAT,
            key_sha256: judgement.key_sha256,
            calls: judgement
                .calls
                .into_iter()
                .map(|call| ReplayedCall {
                    response: serde_json::value::to_raw_value(&call.response).unwrap_or_default(),
                    latency_ms: call.latency_ms,
                    usage: call.usage,
                })
                .collect(),
            verdicts: judgement
                .verdicts
                .into_iter()
                .map(|v| ReplayedVerdict {
                    id: v.id,
                    holds: v.holds,
                    reason: v.reason,
                })
                .collect(),
        }
    }
}
