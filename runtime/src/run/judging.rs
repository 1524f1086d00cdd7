//! The rubric step of a case run: use the recorded verdicts when their key is the current one,
//! else ask the judge (when recording) and keep its part in the case's recording.

use super::{EvaluatorResult, RecordingUse};
use crate::env::RecordMode;
use crate::llm_judge::{self, Judged, Question};
use crate::recording::judgement::ReplayedJudgement;
use crate::recording::pending::Pending;
use crate::recording::sources::CaseSources;
use crate::recording::{Recording, Validation};
use crate::rubric::Rubric;
use crate::suite::config::{Evaluator, SuiteConfig};
use crate::suite::fixture::FixtureFile;
use crate::suite::Suite;
use serde_json::Value;
use std::path::Path;

/// What the rubric step needs of the case run.
pub(crate) struct RubricStep<'a> {
    pub suite: &'a Suite,
    pub config: &'a SuiteConfig,
    pub record: RecordMode,
    /// The test's name, for notes.
    pub name: &'a str,
    /// The case path (`drafts/eval_x`).
    pub case_path: &'a str,
    pub input: &'a Value,
    /// How the agent's part of the recording was used in this run.
    pub used: RecordingUse,
    pub recording_file: &'a Path,
    pub pending_file: &'a Path,
    /// The command that records this case (`RECORD=1 cargo test ...`).
    pub record_command: &'a str,
    /// The judge calls whose verdicts this run used (replayed or live), for the case's entry.
    pub judge_calls: std::cell::RefCell<Vec<crate::recording::usage::CallEntry>>,
}

/// The case's rubric when the `rubric` evaluator runs on it.
pub(crate) fn case_rubric(config: &SuiteConfig, fixture: &FixtureFile) -> Option<Rubric> {
    if !config.evaluators.contains(&Evaluator::Rubric) {
        return None;
    }
    fixture.rubric()
}

impl RubricStep<'_> {
    /// [`RubricStep::graded`], with a failing verdict made advisory (the test passes, and a
    /// note says why) while the judge is below the suite's calibration bar.
    pub(crate) fn judge<'s>(
        &self,
        rubric: &Rubric,
        output: &Value,
        trajectory: Option<&Value>,
        recorded: Option<ReplayedJudgement>,
        sources: &dyn Fn() -> &'s CaseSources,
    ) -> Result<Judged, String> {
        let judged = self.graded(rubric, output, trajectory, recorded, sources)?;
        let Judged::Verdict(verdict) = judged else {
            return Ok(judged);
        };
        if verdict.passed {
            return Ok(Judged::Verdict(verdict));
        }
        let Some(why) = self.suite.judge_advisory().clone() else {
            return Ok(Judged::Verdict(verdict));
        };
        eprintln!(
            "note: {}: rubric failed (score {}), advisory: the test passes because {why}\n{}",
            self.name,
            super::format_score(verdict.score),
            verdict.render().trim_end()
        );
        Ok(Judged::Advisory(verdict, why))
    }

    /// The rubric graded on `output`: from the recorded judgement `recorded` when its key is the
    /// current one, else from the judge, live, when this run records. `Err` fails the case
    /// before it is evaluated (stale or missing verdicts under replay; a judge part that cannot
    /// be written).
    fn graded<'s>(
        &self,
        rubric: &Rubric,
        output: &Value,
        trajectory: Option<&Value>,
        recorded: Option<ReplayedJudgement>,
        sources: &dyn Fn() -> &'s CaseSources,
    ) -> Result<Judged, String> {
        let judge = &self.config.judge;
        let template: std::borrow::Cow<'static, str> = match &judge.prompt {
            None => crate::rubric::BUILTIN_TEMPLATE.into(),
            Some(file) => std::fs::read_to_string(self.suite.crate_root.join(file))
                .map_err(|e| {
                    format!(
                        "[judge] prompt = {file:?}: cannot read the template ({e}); the path is relative to the crate root"
                    )
                })?
                .into(),
        };
        let question = Question {
            rubric,
            input: self.input,
            output,
            trajectory: trajectory.filter(|_| judge.include_trajectory),
            template: &template,
            config: judge,
        };
        if let Some(replayed) = self.replayed(rubric, recorded, &question)? {
            return Ok(replayed);
        }
        let factory = llm_judge::model_factory(self.suite.judge.as_ref(), judge)?;
        let judgement = match llm_judge::judge_live(factory, &question) {
            Ok(judgement) => judgement,
            // Nothing is recorded: a judge error is not a verdict.
            Err(error) => return Ok(Judged::Error(error)),
        };
        let judged = Judged::of(rubric, &judgement.verdicts);
        self.note_calls(
            judgement
                .calls
                .iter()
                .map(|c| (c.usage.as_ref(), c.latency_ms)),
        );
        self.store(judgement, sources())?;
        Ok(judged)
    }

    /// The rubric graded from the recorded judgement when this run uses it (`Some`); `None` when
    /// the judge is to be asked live (the agent's part was recorded in this run, or the verdicts
    /// are stale or missing under `RECORD=stale` / `1`). Stale or missing verdicts under replay
    /// fail the case, naming what changed and the command that re-judges it.
    fn replayed(
        &self,
        rubric: &Rubric,
        recorded: Option<ReplayedJudgement>,
        question: &Question<'_>,
    ) -> Result<Option<Judged>, String> {
        if matches!(self.used, RecordingUse::Recorded | RecordingUse::Pending) {
            return Ok(None);
        }
        // Made only on the way to a failure: a replay that uses its verdicts needs neither.
        let rejudge = || {
            self.record_command
                .replacen("RECORD=1 ", "RECORD=stale ", 1)
        };
        let shown = || self.suite.relative(self.recording_file);
        let Some(j) = recorded else {
            if matches!(self.record, RecordMode::Stale | RecordMode::All) {
                return Ok(None);
            }
            let place = if self.recording_file.exists() {
                format!(" in {}", shown())
            } else {
                String::new()
            };
            return Err(format!(
                "no recorded judge verdicts for this case's rubric{place}; record them: {}",
                rejudge()
            ));
        };
        let note = |j: &ReplayedJudgement| {
            self.note_calls(j.calls.iter().map(|c| (c.usage.as_ref(), c.latency_ms)));
        };
        let current = if j.format == crate::recording::JUDGE_FORMAT {
            question.key_sha256_format_4()
        } else {
            question.key_sha256()
        };
        if j.key_sha256 == current {
            note(&j);
            return Ok(Some(replayed_verdicts(rubric, j)));
        }
        let message = format!(
            "stale judge verdicts in {}: what they judged changed: {}\nre-judge just this case (the agent's recorded answers are kept): {}",
            shown(),
            self.what_changed(question),
            rejudge()
        );
        match (self.record, self.config.recording.validation) {
            (RecordMode::Stale | RecordMode::All, _) => Ok(None),
            (_, Validation::Strict) => Err(message),
            (_, Validation::Warn) => {
                eprintln!("warning: {}: {message}", self.name);
                note(&j);
                Ok(Some(replayed_verdicts(rubric, j)))
            }
            (_, Validation::Skip) => {
                note(&j);
                Ok(Some(replayed_verdicts(rubric, j)))
            }
        }
    }

    /// What changed since the recorded judgement, whose key is not `question`'s, in words: its
    /// parts, read from the recording whole (a replay skips them).
    fn what_changed(&self, question: &Question<'_>) -> String {
        let recorded = match Recording::read(self.recording_file) {
            Ok(Some(Recording {
                judge: Some(judge), ..
            })) => judge.parts,
            Ok(_) => return "the judge part is gone from the recording".into(),
            Err(e) => return format!("the judge part does not read whole ({e})"),
        };
        let changes = llm_judge::changes(&recorded, &question.parts());
        if changes.is_empty() {
            // Only a hand-edited key or parts gets here.
            return "nothing its parts name: `judge.key_sha256` does not agree with `judge.parts`"
                .into();
        }
        changes.join(", ")
    }

    /// Notes the judge's calls whose verdicts the case uses, by their usage and latency.
    fn note_calls<'c>(
        &self,
        calls: impl Iterator<Item = (Option<&'c crate::recording::usage::Usage>, Option<f64>)>,
    ) {
        self.judge_calls
            .borrow_mut()
            .extend(calls.map(|(usage, latency_ms)| {
                crate::recording::usage::CallEntry::new(
                    "judge",
                    usage,
                    latency_ms,
                    &self.config.pricing,
                )
            }));
    }

    /// Writes `judgement` into the case's recording (its pending one under `RECORD=review`),
    /// keeping the agent's part as it is; a case that made no model call gets a recording of
    /// no call that holds the judge part.
    fn store(&self, judgement: llm_judge::Judgement, sources: &CaseSources) -> Result<(), String> {
        let redactor = self.config.recording.redactor();
        if self.used == RecordingUse::Pending || self.record == RecordMode::Review {
            let Ok(Some(mut pending)) = Pending::read(self.pending_file) else {
                eprintln!(
                    "note: {}: the judge's new verdicts are not kept: there is no pending recording to hold them",
                    self.name
                );
                return Ok(());
            };
            pending.recording.judge = Some(judgement);
            pending.redact(&redactor);
            return pending.write_moved(self.pending_file).map_err(|e| {
                format!(
                    "cannot write the pending recording {}: {e}",
                    self.suite.relative(self.pending_file)
                )
            });
        }
        let mut recording = match Recording::read(self.recording_file) {
            Ok(Some(recording)) => recording,
            _ => Recording::new(
                self.case_path.to_string(),
                judgement.recorded_at,
                sources,
                self.input,
                Vec::new(),
            ),
        };
        if recording.format == 1 {
            // A judge part makes it format 4, which depends on the input, not the fixture file:
            // the agent's part is fresh (else it was recorded again), so it is migrated as
            // `cargo proposal-eval migrate` would.
            recording = recording.migrated(sources);
        }
        recording.judge = Some(judgement);
        recording.redact(&redactor);
        // A committed recording keeps each judge request's hash, not the prompt (a pending one
        // keeps both, for the reviewer).
        recording.judge = recording.judge.map(llm_judge::Judgement::without_requests);
        recording.write_moved(self.recording_file).map_err(|e| {
            format!(
                "cannot write the recording {}: {e}",
                self.suite.relative(self.recording_file)
            )
        })
    }
}

/// `rubric` graded by the verdicts of the replayed judgement `j`.
fn replayed_verdicts(rubric: &Rubric, j: ReplayedJudgement) -> Judged {
    Judged::of_verdicts(rubric, j.verdicts.into_iter().map(Into::into).collect())
}

/// How many of a verdict's statements pass, and the line of each that does not.
fn tally(verdict: &crate::rubric::RubricVerdict) -> (usize, Vec<String>) {
    let failing: Vec<String> = verdict
        .statements
        .iter()
        .filter(|g| !g.passed)
        .map(|g| g.line())
        .collect();
    (verdict.statements.len() - failing.len(), failing)
}

/// Each statement of `verdict` as a report entry lists it; `advisory`: the verdict does not fail
/// the test (`[judge] min_agreement`). A forbidden statement reads `must not: …`.
fn statement_verdicts(
    verdict: &crate::rubric::RubricVerdict,
    advisory: bool,
) -> Vec<super::VerdictEntry> {
    verdict
        .statements
        .iter()
        .map(|g| super::VerdictEntry {
            statement: match g.statement.kind {
                crate::rubric::Kind::Required => g.statement.text.clone(),
                crate::rubric::Kind::Forbidden => format!("must not: {}", g.statement.text),
            },
            passed: g.passed,
            reason: g.reason.clone(),
            advisory,
        })
        .collect()
}

/// The `rubric` evaluator's result.
pub(crate) fn rubric_result(judged: Option<&Judged>) -> EvaluatorResult {
    let (score, passed, summary, misses, rendered) = match judged {
        None => {
            let why = "no judge verdicts for the rubric".to_string();
            (
                0.0,
                false,
                why.clone(),
                vec![why.clone()],
                format!("  {why}\n"),
            )
        }
        Some(Judged::Error(error)) => {
            let rendered = error.lines().map(|l| format!("  {l}\n")).collect();
            (0.0, false, error.clone(), vec![error.clone()], rendered)
        }
        Some(Judged::Advisory(verdict, why)) => {
            let (passing, failing) = tally(verdict);
            (
                verdict.score,
                true,
                format!(
                    "advisory: {passing} of {} statement(s) pass; the test passes because {why}",
                    verdict.statements.len()
                ),
                failing,
                String::new(),
            )
        }
        Some(Judged::Verdict(verdict)) => {
            let (passing, failing) = tally(verdict);
            (
                verdict.score,
                verdict.passed,
                format!(
                    "{passing} of {} statement(s) pass",
                    verdict.statements.len()
                ),
                failing,
                if verdict.passed {
                    String::new()
                } else {
                    verdict.render()
                },
            )
        }
    };
    let verdicts = match judged {
        Some(Judged::Advisory(verdict, _)) => statement_verdicts(verdict, true),
        Some(Judged::Verdict(verdict)) => statement_verdicts(verdict, false),
        None | Some(Judged::Error(_)) => Vec::new(),
    };
    EvaluatorResult {
        evaluator: "rubric".into(),
        score,
        passed,
        summary,
        fields: Vec::new(),
        misses,
        rendered,
        verdicts,
        alignment: None,
    }
}
