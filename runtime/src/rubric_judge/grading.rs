//! The rubric step of a case run, sample by sample: use a sample's recorded verdicts when their
//! key is the current one, else ask the judge (when recording) and keep its part in the case's
//! recording, on that sample (see `Recording::judgement`).

use super::RubricJudgeConfig;
use super::{model, Judged, Judgement, Question};
use crate::case_result::{
    format_score, EvaluatorResult, RecordingUse, StatementAnswer, VerdictEntry,
};
use crate::env::RecordMode;
use crate::recording::judgement::ReplayedJudgement;
use crate::recording::model::ModelFactory;
use crate::recording::pending::Pending;
use crate::recording::sources::CaseSources;
use crate::recording::usage::{CallEntry, Pricing, UsageTotals};
use crate::recording::{Recording, RecordingConfig, Sample};
use crate::rubric::Rubric;
use crate::stale::{stale_use, StaleUse};
use proposal_eval_engine::trajectory::ToolCall;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// What the rubric step needs of the case run: the suite's settings it reads, and the case.
pub(crate) struct RubricStep<'a> {
    /// `[judge]`.
    pub judge: &'a RubricJudgeConfig,
    /// The judge model `Harness::judge` gives, if any.
    pub judge_model: Option<&'a ModelFactory>,
    /// `[pricing]`.
    pub pricing: &'a BTreeMap<String, Pricing>,
    /// `[recording]`: how stale parts are used, what is redacted.
    pub recording: &'a RecordingConfig,
    /// The crate's root: what `[judge] prompt` and the files messages name are relative to.
    pub crate_root: &'a Path,
    /// Why a failing rubric is advisory for the suite (its calibration), asked only when a
    /// rubric fails; `None` when it fails the test.
    pub advisory: &'a dyn Fn() -> Option<String>,
    pub record: RecordMode,
    /// The test's name, for notes.
    pub name: &'a str,
    /// The case path (`drafts/eval_x`).
    pub case_path: &'a str,
    pub input: &'a Value,
    /// The SHA-256 of `input`'s canonical JSON when this run has made it already (the
    /// recording's staleness check did): the judge key's input part without hashing it again.
    pub input_sha256: Option<&'a str>,
    /// How the agent's part of the recording was used in this run.
    pub used: RecordingUse,
    pub recording_file: &'a Path,
    pub pending_file: &'a Path,
    /// The command that records this case (`RECORD=1 cargo test ...`).
    pub record_command: &'a str,
    /// The judge calls whose verdicts this run used (replayed or live), counted as the case
    /// goes: `Default::default()`.
    pub tally: std::cell::RefCell<Tally>,
}

/// The judge calls whose verdicts a case used (replayed or live): each as its report entry
/// lists it, and their usage, counted as the judge's.
#[derive(Default)]
pub(crate) struct Tally {
    pub calls: Vec<CallEntry>,
    pub usage: UsageTotals,
}

/// What the rubric step gives the case run: each sample's graded rubric, and the judge's
/// calls and usage.
pub(crate) struct Grades {
    /// One entry per sample: `None` when the case has no rubric, the `rubric` evaluator is off
    /// or the sample returned no output.
    pub judged: Vec<Option<Judged>>,
    pub calls: Vec<CallEntry>,
    pub usage: UsageTotals,
}

/// What one sample gives the judge: its output and its trajectory (which the judge sees with
/// `[judge] include_trajectory`); `None` for a sample that returned no output (nothing to
/// judge).
pub(crate) type Judgeable<'a> = Option<(&'a Value, &'a [ToolCall])>;

/// One sample as the judge is asked about it: its output and, with `[judge]
/// include_trajectory`, its trajectory as JSON.
type Asked<'a> = Option<(&'a Value, Option<Value>)>;

/// Why a sample's recorded verdicts cannot be used under replay.
enum Unusable {
    /// The sample has no recorded verdicts.
    Missing,
    /// What they judged changed (the parts, named).
    Stale(String),
}

impl RubricStep<'_> {
    /// The case's rubric graded on each sample's output, one entry per sample; every entry
    /// `None` when it has none (`rubric`: the case's, when the `rubric` evaluator grades it,
    /// `FixtureFile::graded_rubric`). `recorded`: each sample's
    /// judge part, as the replay read it. `Err` fails the case (stale or missing verdicts under
    /// replay, a judge part that cannot be written).
    pub(crate) fn grade<'s>(
        self,
        rubric: Option<&Rubric>,
        samples: &[Judgeable<'_>],
        recorded: Vec<Option<ReplayedJudgement>>,
        sources: &dyn Fn() -> &'s CaseSources,
    ) -> Result<Grades, String> {
        let Some(rubric) = rubric else {
            return Ok(Grades {
                judged: samples.iter().map(|_| None).collect(),
                calls: Vec::new(),
                usage: UsageTotals::default(),
            });
        };
        let include = self.judge.include_trajectory;
        let asked: Vec<Asked<'_>> = samples
            .iter()
            .map(|sample| {
                sample.map(|(output, calls)| {
                    // `{"tool", "args"}` only: the judge's question (and its recorded key)
                    // does not change with the responses' indexes.
                    let trajectory = include.then(|| {
                        calls
                            .iter()
                            .map(|c| serde_json::json!({ "tool": c.tool, "args": c.args }))
                            .collect()
                    });
                    (output, trajectory)
                })
            })
            .collect();
        let judged = self.judged(rubric, &asked, recorded, sources)?;
        let Tally { calls, usage } = self.tally.into_inner();
        Ok(Grades {
            judged,
            calls,
            usage,
        })
    }

    /// Each sample's rubric graded ([`RubricStep::graded`]), with a failing verdict made
    /// advisory (the test passes, and a note says why) while the judge is below the suite's
    /// calibration bar. One entry per sample of `samples`.
    pub(crate) fn judged<'s>(
        &self,
        rubric: &Rubric,
        samples: &[Asked<'_>],
        recorded: Vec<Option<ReplayedJudgement>>,
        sources: &dyn Fn() -> &'s CaseSources,
    ) -> Result<Vec<Option<Judged>>, String> {
        let graded = self.graded(rubric, samples, recorded, sources)?;
        let count = graded.len();
        Ok(graded
            .into_iter()
            .enumerate()
            .map(|(k, judged)| judged.map(|j| self.advisory(j, &which(k, count))))
            .collect())
    }

    /// `judged`, made advisory when it is a failing verdict and the judge is below the suite's
    /// calibration bar; `which` names the sample in the note (empty for a case of one).
    fn advisory(&self, judged: Judged, which: &str) -> Judged {
        let Judged::Verdict(verdict) = judged else {
            return judged;
        };
        if verdict.passed {
            return Judged::Verdict(verdict);
        }
        let Some(why) = (self.advisory)() else {
            return Judged::Verdict(verdict);
        };
        eprintln!(
            "note: {}: {which}rubric failed (score {}), advisory: the test passes because {why}\n{}",
            self.name,
            format_score(verdict.score),
            verdict.render().trim_end()
        );
        Judged::Advisory(verdict, why)
    }

    /// The rubric graded on each sample's output: from the sample's recorded judgement in
    /// `recorded` when its key is the current one, else from the judge, live, when this run
    /// records (only the samples whose verdicts are not used are judged again). `Err` fails the
    /// case before it is evaluated (stale or missing verdicts under replay, naming each sample;
    /// a judge part that cannot be written).
    fn graded<'s>(
        &self,
        rubric: &Rubric,
        samples: &[Asked<'_>],
        mut recorded: Vec<Option<ReplayedJudgement>>,
        sources: &dyn Fn() -> &'s CaseSources,
    ) -> Result<Vec<Option<Judged>>, String> {
        let template = self.template()?;
        let count = samples.len();
        recorded.resize_with(count, || None);
        let mut graded: Vec<Option<Judged>> = Vec::with_capacity(count);
        let (mut ask, mut unusable) = (Vec::new(), Vec::new());
        for (k, (sample, recorded)) in samples.iter().zip(recorded).enumerate() {
            graded.push(None);
            let Some((output, trajectory)) = sample else {
                continue;
            };
            let question = self.question(rubric, output, trajectory.as_ref(), &template);
            match self.replayed(rubric, recorded, &question, (k, count)) {
                Ok(Some(judged)) => graded[k] = Some(judged),
                Ok(None) => ask.push(k),
                Err(why) => unusable.push((k, why)),
            }
        }
        if !unusable.is_empty() {
            return Err(self.unusable_message(&unusable, count));
        }
        if ask.is_empty() {
            return Ok(graded);
        }
        let judge = model::judge_model(self.judge_model, self.judge)?;
        let mut judgements = Vec::with_capacity(ask.len());
        for k in ask {
            let Some((output, trajectory)) = &samples[k] else {
                continue;
            };
            let question = self.question(rubric, output, trajectory.as_ref(), &template);
            match model::judge_live(&judge, &question, self.pricing) {
                Ok(judgement) => {
                    graded[k] = Some(
                        Judged::of(rubric, &judgement.verdicts)
                            .with_votes(judgement.calls.iter().map(|c| &c.response)),
                    );
                    self.note_calls(
                        judgement
                            .calls
                            .iter()
                            .map(|c| (c.usage.as_ref(), c.latency_ms)),
                    );
                    judgements.push((k, judgement));
                }
                // Nothing is recorded: a judge error is not a verdict.
                Err(error) => graded[k] = Some(Judged::Error(error)),
            }
        }
        if !judgements.is_empty() {
            self.store(judgements, count, sources())?;
        }
        Ok(graded)
    }

    /// The judge's prompt template: `[judge] prompt`'s file, else the built-in one.
    fn template(&self) -> Result<std::borrow::Cow<'static, str>, String> {
        match &self.judge.prompt {
            None => Ok(crate::rubric::BUILTIN_TEMPLATE.into()),
            Some(file) => std::fs::read_to_string(self.crate_root.join(file))
                .map(Into::into)
                .map_err(|e| {
                    format!(
                        "[judge] prompt = {file:?}: cannot read the template ({e}); the path is relative to the crate root"
                    )
                }),
        }
    }

    /// What the judge is asked about one sample's output.
    fn question<'q>(
        &'q self,
        rubric: &'q Rubric,
        output: &'q Value,
        trajectory: Option<&'q Value>,
        template: &'q str,
    ) -> Question<'q> {
        let judge = self.judge;
        Question {
            rubric,
            input: self.input,
            input_sha256: self.input_sha256,
            output,
            trajectory: trajectory.filter(|_| judge.include_trajectory),
            template,
            config: judge,
        }
    }

    /// One sample's rubric graded from its recorded judgement when this run uses it (`Some`);
    /// `None` when the judge is to be asked live (the agent's part was recorded in this run, or
    /// the verdicts are stale or missing under `RECORD=stale` / `1`). `Err`: stale or missing
    /// verdicts under replay, which fail the case. `which` names the sample in a warning.
    fn replayed(
        &self,
        rubric: &Rubric,
        recorded: Option<ReplayedJudgement>,
        question: &Question<'_>,
        (k, count): (usize, usize),
    ) -> Result<Option<Judged>, Unusable> {
        let which = which(k, count);
        if matches!(self.used, RecordingUse::Recorded | RecordingUse::Pending) {
            return Ok(None);
        }
        let Some(j) = recorded else {
            // Missing verdicts are recorded whenever a stale part would be.
            if stale_use(self.record, self.recording.validation) == StaleUse::Record {
                return Ok(None);
            }
            return Err(Unusable::Missing);
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
        let what = self.what_changed(question, k);
        match stale_use(self.record, self.recording.validation) {
            StaleUse::Record => Ok(None),
            StaleUse::Refuse => Err(Unusable::Stale(what)),
            StaleUse::Warn => {
                eprintln!(
                    "warning: {}: {}",
                    self.name,
                    self.stale_message(&format!(": {which}what they judged changed: {what}"))
                );
                note(&j);
                Ok(Some(replayed_verdicts(rubric, j)))
            }
            StaleUse::Replay => {
                note(&j);
                Ok(Some(replayed_verdicts(rubric, j)))
            }
        }
    }

    /// The failure of a case whose samples' recorded verdicts cannot be used (`unusable`, by
    /// sample) under replay: what changed of each, or that there are none, and the command
    /// that re-judges it.
    fn unusable_message(&self, unusable: &[(usize, Unusable)], count: usize) -> String {
        let missing: Vec<usize> = unusable
            .iter()
            .filter(|(_, why)| matches!(why, Unusable::Missing))
            .map(|(k, _)| k + 1)
            .collect();
        if missing.len() == unusable.len() {
            let place = if self.recording_file.exists() {
                format!(" in {}", self.shown(self.recording_file))
            } else {
                String::new()
            };
            let of = match count {
                1 => String::new(),
                _ => format!(
                    " (sample{} {} of {count})",
                    if missing.len() > 1 { "s" } else { "" },
                    list(&missing)
                ),
            };
            return format!(
                "no recorded judge verdicts for this case's rubric{place}{of}; record them: {}",
                self.rejudge_command()
            );
        }
        let changed = |why: &Unusable| match why {
            Unusable::Missing => "no recorded verdicts".to_string(),
            Unusable::Stale(what) => format!("what they judged changed: {what}"),
        };
        let detail = match unusable {
            [(_, why)] if count == 1 => format!(": {}", changed(why)),
            _ => unusable
                .iter()
                .map(|(k, why)| format!("\n  {}{}", which(*k, count), changed(why)))
                .collect(),
        };
        self.stale_message(&detail)
    }

    /// "stale judge verdicts in <file>" with `detail`, and the command that re-judges the case.
    fn stale_message(&self, detail: &str) -> String {
        format!(
            "stale judge verdicts in {}{detail}\nre-judge just this case (the agent's recorded answers are kept): {}",
            self.shown(self.recording_file),
            self.rejudge_command()
        )
    }

    /// `path` as messages show it: relative to the crate root, `/`-separated.
    fn shown(&self, path: &Path) -> String {
        crate::files::relative_slash(self.crate_root, path)
    }

    /// The command that records the case's stale or missing parts only.
    fn rejudge_command(&self) -> String {
        self.record_command
            .replacen("RECORD=1 ", "RECORD=stale ", 1)
    }

    /// What changed since sample `k`'s recorded judgement, whose key is not `question`'s, in
    /// words: its parts, read from the recording whole (a replay skips them).
    fn what_changed(&self, question: &Question<'_>, k: usize) -> String {
        let recorded = match Recording::read(self.recording_file) {
            Ok(Some(recording)) => match recording.judgement(k) {
                Some(judge) => judge.parts.clone(),
                None => return "the judge part is gone from the recording".into(),
            },
            Ok(None) => return "the judge part is gone from the recording".into(),
            Err(e) => return format!("the judge part does not read whole ({e})"),
        };
        let changes = super::changes(&recorded, &question.parts());
        if changes.is_empty() {
            // Only a hand-edited key or parts gets here.
            return "nothing its parts name: `judge.key_sha256` does not agree with `judge.parts`"
                .into();
        }
        changes.join(", ")
    }

    /// Notes the judge's calls whose verdicts the case uses, by their usage and latency: in the
    /// case's call list and its usage, as the judge's.
    fn note_calls<'c>(
        &self,
        calls: impl Iterator<Item = (Option<&'c crate::recording::usage::Usage>, Option<f64>)>,
    ) {
        let pricing = self.pricing;
        let mut tally = self.tally.borrow_mut();
        for (usage, latency_ms) in calls {
            tally
                .calls
                .push(CallEntry::new("judge", usage, latency_ms, pricing));
            tally.usage.add_judge_call(usage, latency_ms, pricing);
        }
    }

    /// Writes each of `judgements` (by sample, of `count` samples) into the case's recording
    /// (its pending one under `RECORD=review`), keeping the agent's part and the other samples'
    /// verdicts as they are; a case that made no model call gets a recording of no call that
    /// holds the judge parts.
    fn store(
        &self,
        judgements: Vec<(usize, Judgement)>,
        count: usize,
        sources: &CaseSources,
    ) -> Result<(), String> {
        let redactor = self.recording.redactor();
        if self.used == RecordingUse::Pending || self.record == RecordMode::Review {
            let Ok(Some(mut pending)) = Pending::read(self.pending_file) else {
                eprintln!(
                    "note: {}: the judge's new verdicts are not kept: there is no pending recording to hold them",
                    self.name
                );
                return Ok(());
            };
            self.keep(&mut pending.recording, judgements);
            pending.redact(&redactor);
            return pending.write_moved(self.pending_file).map_err(|e| {
                format!(
                    "cannot write the pending recording {}: {e}",
                    self.shown(self.pending_file)
                )
            });
        }
        let recorded_at = judgements
            .first()
            .map_or_else(chrono::Utc::now, |(_, j)| j.recorded_at);
        let mut recording = match Recording::read(self.recording_file) {
            Ok(Some(recording)) => recording,
            _ => Recording::of_samples(
                self.case_path.to_string(),
                recorded_at,
                sources,
                self.input,
                vec![Sample::default(); count],
            ),
        };
        if recording.format == 1 {
            // A judge part makes it format 4, which depends on the input, not the fixture file:
            // the agent's part is fresh (else it was recorded again), so it is migrated as
            // `cargo proposal-eval migrate` would.
            recording = recording.migrated(sources);
        }
        self.keep(&mut recording, judgements);
        recording.redact(&redactor);
        // A committed recording keeps each judge request's hash, not the prompt (a pending one
        // keeps both, for the reviewer).
        recording.judge = recording.judge.map(Judgement::without_requests);
        recording.write_moved(self.recording_file).map_err(|e| {
            format!(
                "cannot write the recording {}: {e}",
                self.shown(self.recording_file)
            )
        })
    }

    /// Puts each judgement on its sample of `recording`; one whose sample the recording does
    /// not have (it changed since this run read it) is not kept, and a note says so.
    fn keep(&self, recording: &mut Recording, judgements: Vec<(usize, Judgement)>) {
        let samples = recording.samples.len();
        for (k, judgement) in judgements {
            if !recording.set_judgement(k, judgement) {
                eprintln!(
                    "note: {}: the judge's verdicts on sample {} are not kept: the recording has {samples} sample(s)",
                    self.name,
                    k + 1
                );
            }
        }
    }
}

/// "sample 2 of 3: " for sample `k` (from 0) of a case of `count` samples; empty for a case of
/// one.
fn which(k: usize, count: usize) -> String {
    match count {
        1 => String::new(),
        _ => format!("sample {} of {count}: ", k + 1),
    }
}

/// "1, 2 and 3".
fn list(numbers: &[usize]) -> String {
    let text: Vec<String> = numbers.iter().map(usize::to_string).collect();
    match text.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => text.join(""),
    }
}

/// `rubric` graded by the verdicts of the replayed judgement `j`, with its samples' votes.
fn replayed_verdicts(rubric: &Rubric, j: ReplayedJudgement) -> Judged {
    let answers: Vec<Value> = match j.calls.len() {
        0 | 1 => Vec::new(),
        _ => j
            .calls
            .iter()
            .map(|c| serde_json::from_str(c.response.get()).unwrap_or(Value::Null))
            .collect(),
    };
    Judged::of_verdicts(rubric, j.verdicts.into_iter().map(Into::into).collect())
        .with_votes(answers.iter())
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
fn statement_verdicts(verdict: &crate::rubric::RubricVerdict, advisory: bool) -> Vec<VerdictEntry> {
    verdict
        .statements
        .iter()
        .map(|g| VerdictEntry {
            statement: match g.statement.kind {
                crate::rubric::Kind::Required => g.statement.text.clone(),
                crate::rubric::Kind::Forbidden => format!("must not: {}", g.statement.text),
            },
            holds: Some(g.holds),
            passed: g.passed,
            votes: g.votes,
            samples: Vec::new(),
            reason: g.reason.clone(),
            advisory,
        })
        .collect()
}

/// Each sample's answer and outcome on each statement, from each sample's graded rubric (`None`
/// for a sample with no verdict), for [`show_samples`].
pub(crate) fn sample_answers(judged: &[Option<Judged>]) -> Vec<Option<Vec<StatementAnswer>>> {
    judged
        .iter()
        .map(|j| match j {
            Some(Judged::Verdict(v) | Judged::Advisory(v, _)) => Some(
                v.statements
                    .iter()
                    .map(|g| StatementAnswer {
                        holds: g.holds,
                        passed: g.passed,
                        votes: g.votes,
                    })
                    .collect(),
            ),
            _ => None,
        })
        .collect()
}

/// A repeated case's `rubric` evaluator (among `evaluators`, the shown sample's) lists each
/// sample's answer and outcome on each statement (`answers`, from [`sample_answers`]).
pub(crate) fn show_samples(
    evaluators: &mut [EvaluatorResult],
    answers: &[Option<Vec<StatementAnswer>>],
) {
    if answers.len() < 2 {
        return;
    }
    for evaluator in evaluators.iter_mut().filter(|e| e.evaluator == "rubric") {
        for (i, entry) in evaluator.verdicts.iter_mut().enumerate() {
            entry.samples = answers
                .iter()
                .map(|a| a.as_ref().and_then(|a| a.get(i).copied()))
                .collect();
        }
    }
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
