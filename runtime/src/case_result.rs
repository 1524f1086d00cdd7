//! What a case run decides, as the run and the rubric judge's grading step both write it: the
//! case's result, each evaluator's, each rubric statement's. It sits below both, so that
//! neither imports the other for it.

use crate::repeat::Samples;
use proposal_eval_engine::rubric::Votes;
use proposal_eval_engine::trajectory::ToolCall;
use serde_json::Value;

/// How a case's recording was used.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordingUse {
    /// Replayed from a fresh recording (or a stale one under `validation = "warn"`/`"skip"`).
    Replayed,
    /// Replayed although stale (`validation = "warn"`).
    ReplayedStale,
    /// Recorded from the live model in this run.
    Recorded,
    /// Recorded from the live model in this run into a pending recording (`RECORD=review`),
    /// leaving the committed one as it was.
    Pending,
    /// Refused: the recording was stale (`validation = "strict"`), so the case failed.
    Stale,
    /// No recording was used (none exists; the case never called the model, or failed).
    None,
    /// The case ran to record, and failed before its recording was written: nothing was
    /// written (a live call failed, the code returned an error or panicked).
    NotRecorded,
}

impl RecordingUse {
    /// How the case used its recording, in words: what JUnit's `recording` property and the
    /// page say (`RECORDING_TEXT` in `report/page/page.js`).
    pub fn describe(self) -> &'static str {
        match self {
            RecordingUse::Replayed => "replayed",
            RecordingUse::ReplayedStale => "replayed (stale)",
            RecordingUse::Recorded => "recorded",
            RecordingUse::Pending => "recorded (pending review)",
            RecordingUse::Stale => "stale",
            RecordingUse::None => "none",
            RecordingUse::NotRecorded => "not recorded",
        }
    }
}

/// One evaluator's result on one case.
#[derive(Clone, Debug, serde::Serialize)]
pub struct EvaluatorResult {
    /// `strict`, `field_accuracy`, or `code_judge:<name>`.
    pub evaluator: String,
    /// 0 to 1.
    pub score: f64,
    /// Whether it passed.
    pub passed: bool,
    /// One line: why this score.
    pub summary: String,
    /// Field-accuracy fields: (path, hit).
    pub fields: Vec<(String, bool)>,
    /// One line per mismatch or miss (`path: why`), uncoloured.
    pub misses: Vec<String>,
    /// The rendered failure body (mismatches and diff), empty when passed.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub rendered: String,
    /// The rubric judge's statements, each with its verdict (the `rubric` evaluator only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub verdicts: Vec<VerdictEntry>,
    /// The trajectory evaluator's alignment of expected steps and calls (see
    /// [`crate::report::EvaluatorEntry::alignment`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alignment: Option<Value>,
}

impl EvaluatorResult {
    /// A result with no field, verdict or alignment.
    pub(crate) fn plain(
        evaluator: String,
        score: f64,
        passed: bool,
        summary: String,
    ) -> EvaluatorResult {
        EvaluatorResult {
            evaluator,
            score,
            passed,
            summary,
            fields: Vec::new(),
            misses: Vec::new(),
            rendered: String::new(),
            verdicts: Vec::new(),
            alignment: None,
        }
    }
}

/// One statement of a rubric, as the judge graded it: the judge's answer (`holds`) and the
/// statement's outcome (`passed`) apart, since a `must not` statement passes when it does not
/// hold.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct VerdictEntry {
    /// The statement's text; a forbidden one reads `must not: …`.
    pub statement: String,
    /// The judge's answer: whether the statement holds of the output (the majority with several
    /// judge samples). Absent from entries written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holds: Option<bool>,
    /// The outcome: whether it passed (a required statement holds, a forbidden one does not).
    pub passed: bool,
    /// How the judge's samples answered, with `[judge] samples` > 1: `{"holds": 2,
    /// "does_not_hold": 1}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub votes: Option<Votes>,
    /// A repeated case's samples (`[run] repeat`), each one's answer and outcome on this
    /// statement, in order (`null` for a sample with no verdict); empty for a case of one
    /// sample.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<Option<StatementAnswer>>,
    /// The judge's reason.
    pub reason: String,
    /// The verdict does not fail the test: the judge is below the suite's calibration bar
    /// (`[judge] min_agreement`).
    pub advisory: bool,
}

/// One sample's answer and outcome on a statement.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StatementAnswer {
    /// The judge's answer: whether the statement holds.
    pub holds: bool,
    /// The statement's outcome on this sample.
    pub passed: bool,
    /// How the judge's samples answered, with `[judge] samples` > 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub votes: Option<Votes>,
}

/// What happened to one case.
#[derive(Clone, Debug, serde::Serialize)]
pub struct CaseResult {
    /// A repeated case's samples; `None` for a case of one sample.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub samples: Option<Samples>,
    /// Test name.
    pub name: String,
    /// Whether the case passed.
    pub passed: bool,
    /// How its recording was used.
    pub recording: RecordingUse,
    /// Every evaluator that ran.
    pub evaluators: Vec<EvaluatorResult>,
    /// The failure message, as the test prints it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// The model calls the case made (replayed or live): tokens, recorded latency, cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<crate::recording::usage::UsageTotals>,
    /// The tool calls the model asked for (and the code noted), in order; `None` when there
    /// were none and the case expects no trajectory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trajectory: Option<Vec<ToolCall>>,
    /// What the code returned (the shown sample's, for a repeated case); `None` when it failed
    /// before returning.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    /// Each model call of the case, in order (the judge's last).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<crate::recording::usage::CallEntry>,
    /// The case's recording file (its pending one under `RECORD=review`), relative to the
    /// workspace root, `/`-separated; `None` when it has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recording_path: Option<String>,
}

impl CaseResult {
    /// The result of the case `name` before it ran.
    pub(crate) fn new(name: String) -> CaseResult {
        CaseResult {
            name,
            passed: false,
            recording: RecordingUse::None,
            evaluators: Vec::new(),
            failure: None,
            usage: None,
            samples: None,
            trajectory: None,
            output: None,
            calls: Vec::new(),
            recording_path: None,
        }
    }
}

/// A score as the test output prints it: whole numbers bare, others with two decimals.
pub fn format_score(score: f64) -> String {
    if score.fract() == 0.0 {
        format!("{score}")
    } else {
        format!("{score:.2}")
    }
}
