//! The judge part of a recording (`judge`): what was judged (its key and the key's parts), the
//! judge's calls and the verdicts they decided. The judge that makes it is
//! `crate::llm_judge`; this is only the recorded format, so a recording reads it without the
//! judge.

use crate::recording::usage::Usage;
use crate::recording::Interaction;
use chrono::{DateTime, Utc};
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};

/// The judge part of a recording: what was judged (its key), the judge's calls and the
/// verdicts they decided (the majority, one per statement).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Judgement {
    /// SHA-256 of the canonical JSON of the statements, the output, the input, the trajectory
    /// (when included), the prompt template, the model, the temperature and the samples.
    pub key_sha256: String,
    /// The key's parts, to name what changed when the key differs.
    pub parts: KeyParts,
    /// When the judge was called.
    pub recorded_at: DateTime<Utc>,
    /// The judge's calls, one per sample.
    pub calls: Vec<Interaction>,
    /// The verdict on each statement, in order (the majority over the samples).
    pub verdicts: Vec<RecordedVerdict>,
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

/// The judge part as a replay reads it: what the replay uses (the key, its parts, the verdicts,
/// each call's latency and usage). The calls' requests and responses (the whole prompt, each
/// time) are checked to be JSON and skipped, not built. A recording is only rewritten from a
/// whole read ([`crate::recording::Recording::read`]), so skipping them here loses nothing.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReplayedJudgement {
    pub key_sha256: String,
    pub parts: KeyParts,
    #[serde(rename = "recorded_at")]
    _recorded_at: DateTime<Utc>,
    pub calls: Vec<ReplayedCall>,
    pub verdicts: Vec<RecordedVerdict>,
}

/// A judge call as a replay reads it: its cost; the rest is skipped.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReplayedCall {
    #[serde(rename = "request")]
    _request: IgnoredAny,
    #[serde(rename = "response")]
    _response: IgnoredAny,
    #[serde(rename = "recorded_at")]
    _recorded_at: DateTime<Utc>,
    #[serde(default, rename = "http")]
    _http: Option<IgnoredAny>,
    /// See [`Interaction::latency_ms`].
    #[serde(default)]
    pub latency_ms: Option<f64>,
    /// See [`Interaction::usage`].
    #[serde(default)]
    pub usage: Option<Usage>,
}

impl From<Judgement> for ReplayedJudgement {
    fn from(judgement: Judgement) -> ReplayedJudgement {
        ReplayedJudgement {
            key_sha256: judgement.key_sha256,
            parts: judgement.parts,
            _recorded_at: judgement.recorded_at,
            calls: judgement
                .calls
                .into_iter()
                .map(|call| ReplayedCall {
                    _request: IgnoredAny,
                    _response: IgnoredAny,
                    _recorded_at: call.recorded_at,
                    _http: call.http.map(|_| IgnoredAny),
                    latency_ms: call.latency_ms,
                    usage: call.usage,
                })
                .collect(),
            verdicts: judgement.verdicts,
        }
    }
}
