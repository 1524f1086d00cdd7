//! The rubric judge: a case's rubric (`rubric`, or a draft's `draft.assertions`) graded by a
//! judge model, its verdicts recorded and replayed. Everything of it is here: `[judge]`
//! ([`config`]), what the judge is asked and the key of its answer ([`key`]), the judge model
//! and its key ([`model`]), the step of a case run that uses or records the verdicts and grades
//! the case ([`grading`]), and the agreement with human labels ([`calibration`]). It reaches out
//! only to the engine (the prompt, the answer's shape, grading: [`proposal_eval_engine::rubric`]),
//! the recording (the judge part's format, `crate::recording::judgement`; the model handle), the
//! suite it grades (its config, fixtures, files and the judge model `Harness::judge` gave), the
//! decision on a stale part it shares with the agent's (`crate::stale`) and the case result
//! types it shares with the run (`crate::case_result`); the run calls it once per case
//! (`grading::RubricStep::grade`) and for the `rubric` evaluator's result, and nothing of it
//! calls back into the run.
//!
//! One call per sample (`[judge] samples`) covers all of a case's statements. The calls and the
//! verdicts are kept in the case's recording under `judge` with `key_sha256`, the SHA-256 of
//! everything the verdicts depend on; a replay with the same key uses them with no call, and a
//! different key names what changed.

pub mod calibration;
pub mod config;
pub(crate) mod grading;
pub mod key;
pub(crate) mod model;

use proposal_eval_engine::rubric::{self, Rubric, RubricVerdict, Verdict};
use serde_json::Value;

pub use crate::recording::judgement::{JudgeCall, Judgement, KeyParts, RecordedVerdict};
#[allow(deprecated)]
pub use config::LlmJudgeConfig;
pub use config::RubricJudgeConfig;
pub use key::{changes, JudgeKey, Question};

/// A rubric graded from the verdicts of a judgement (or why it could not be).
#[derive(Clone, Debug)]
pub(crate) enum Judged {
    /// The verdict.
    Verdict(RubricVerdict),
    /// A failing verdict that does not fail the test: the judge is not calibrated enough
    /// (`[judge] min_agreement`); the reason says why.
    Advisory(RubricVerdict, String),
    /// A judge error: the case fails as such, never as a verdict.
    Error(String),
}

impl Judged {
    /// Grades `rubric` by `verdicts`.
    pub(crate) fn of(rubric: &Rubric, verdicts: &[RecordedVerdict]) -> Judged {
        let verdicts = verdicts
            .iter()
            .map(|v| Verdict {
                id: v.id,
                holds: v.holds,
                reason: v.reason.clone(),
            })
            .collect();
        Judged::of_verdicts(rubric, verdicts)
    }

    /// The same, with each statement's votes when `answers` (the judge calls' answers, one per
    /// sample) are more than one and each reads as the verdict shape.
    pub(crate) fn with_votes<'a>(
        self,
        answers: impl ExactSizeIterator<Item = &'a Value>,
    ) -> Judged {
        let Judged::Verdict(verdict) = self else {
            return self;
        };
        if answers.len() < 2 {
            return Judged::Verdict(verdict);
        }
        let statements = verdict.statements.len();
        let samples: Option<Vec<Vec<Verdict>>> = answers
            .map(|answer| rubric::parse_answer(answer, statements).ok())
            .collect();
        match samples {
            Some(samples) => Judged::Verdict(verdict.with_votes(&rubric::votes(&samples))),
            None => Judged::Verdict(verdict),
        }
    }

    /// Grades `rubric` by `verdicts`, in the statements' order.
    pub(crate) fn of_verdicts(rubric: &Rubric, verdicts: Vec<Verdict>) -> Judged {
        let statements = rubric.statements();
        if verdicts.len() != statements.len() {
            return Judged::Error(format!(
                "judge error: the recorded judge part has {} verdict(s) for {} statement(s)",
                verdicts.len(),
                statements.len()
            ));
        }
        Judged::Verdict(rubric::grade_owned(statements, verdicts))
    }
}
