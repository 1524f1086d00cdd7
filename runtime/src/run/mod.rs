//! Running one case: the shell around the engine that both front ends (macro and harness) call.
//!
//! Load the fixture, decide replay or record, check the recording's sources, call the code under
//! test with a [`Case`] and an [`Llm`], write the recording when it returned, then run the
//! selected evaluators and render the failure.

pub mod case;
pub(crate) mod checks;
pub(crate) mod executor;

pub use crate::case_result::{
    format_score, CaseResult, EvaluatorResult, RecordingUse, VerdictEntry,
};
use crate::env::RecordMode;
use crate::recording::llm::Llm;
use crate::recording::pending::{self, Outcome, Pending, Review};
use crate::recording::sources::{self};
use crate::recording::{self, Recording, RecordingErrorKind, Validation};
use crate::repeat::{PassRule, Samples};
use crate::rubric_judge::grading::{
    rubric_result, sample_answers, show_samples, Judgeable, RubricStep,
};
use crate::stale::{stale_use, StaleUse};
use crate::suite::config::{Evaluator, SuiteConfig};
use crate::suite::fixture::{FixtureFile, Status};
use crate::suite::{LoadedCase, Suite};
use case::Case;
use chrono::Utc;
use proposal_eval_engine::trajectory::ToolCall;
use serde_json::Value;
use std::path::Path;

/// The commands printed to the user for one test; `ignored` (a draft's test) adds
/// `--include-ignored`, without which `--exact` would skip it.
pub(crate) fn command(test: &str, record: bool, ignored: bool) -> String {
    let mut cmd = String::new();
    if record {
        cmd.push_str("RECORD=1 ");
    }
    cmd.push_str("cargo test");
    if let Some(package) = crate::env::package_name() {
        cmd.push_str(&format!(" -p {package}"));
    }
    if let Some(target) = test_target() {
        cmd.push(' ');
        cmd.push_str(&target);
    }
    cmd.push_str(&format!(" -- {test} --exact"));
    if ignored {
        cmd.push_str(" --include-ignored");
    }
    cmd
}

/// `--test NAME` or `--lib`, from the running test binary's name.
fn test_target() -> Option<String> {
    let name = crate::env::test_binary()?;
    let package = crate::env::package_name().map(|p| p.replace('-', "_"));
    if package.as_deref() == Some(name) {
        Some("--lib".into())
    } else {
        Some(format!("--test {name}"))
    }
}

/// How much of a case's failure text (and of its input's or output's JSON) a report or the
/// terminal shows: 64 KiB, so that a huge answer cannot make a report or a terminal unreadable
/// (docs/reference/reports.md says where the text is cut).
pub const TEXT_CAP: usize = 64 * 1024;

/// `text` whole when it is at most `limit` bytes; else its first `limit` bytes (cut back to a
/// character boundary) and `\n… N bytes left out`.
pub fn cap_text(text: &str, limit: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= limit {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    std::borrow::Cow::Owned(format!(
        "{}\n… {} bytes left out",
        &text[..end],
        text.len() - end
    ))
}

/// The code under test with its output made JSON: one type for every case function, so the run
/// path is compiled once, in this crate, not once per suite in each test crate.
pub(crate) type CaseFn<'a> = dyn Fn(&Case, &mut Llm) -> Result<Value, case::OutputError> + 'a;

/// Runs one case. `f` is the code under test.
///
/// The fixture's input is moved into the [`Case`] the code under test gets, not copied (a large
/// document would be held twice), and put back into `loaded` when the case is done.
pub(crate) fn run_case(suite: &Suite, loaded: &mut LoadedCase, f: &CaseFn<'_>) -> CaseResult {
    let name = suite.test_name(&loaded.path);
    let mut result = CaseResult::new(name.clone());
    let (description, input) = match &mut loaded.file {
        Ok(fixture) => (
            fixture.description.clone(),
            std::mem::take(&mut fixture.input),
        ),
        Err(_) => (None, Value::Null),
    };
    let mut case = Case {
        name: name.clone(),
        path: loaded.path.case_path().to_string(),
        description,
        input,
        now: Utc::now(),
    };
    match execute(suite, loaded, &name, &mut case, f, &mut result) {
        Ok(()) => result.passed = true,
        Err(message) => {
            // A 30 MB response against a different expected prints 64 KiB, not 30 MB.
            let capped = match cap_text(&message, TEXT_CAP) {
                std::borrow::Cow::Borrowed(_) => message,
                std::borrow::Cow::Owned(capped) => capped,
            };
            result.failure = Some(capped);
        }
    }
    if let Ok(fixture) = &mut loaded.file {
        fixture.input = case.input;
    }
    result.recording_path = recording_path(suite, loaded, result.recording);
    result
}

/// The case's recording file for its report entry: its pending recording when the run wrote
/// one, else its recording when there is one on disk.
fn recording_path(suite: &Suite, loaded: &LoadedCase, used: RecordingUse) -> Option<String> {
    if !suite.may_hold_recordings() && used == RecordingUse::None {
        return None;
    }
    let file = suite.recording_file(&loaded.path);
    let file = match used {
        RecordingUse::Pending => pending::pending_file(&file),
        _ => file,
    };
    file.is_file().then(|| suite.workspace_relative(&file))
}

/// The checks that fail a case before its model is called: a recording made for a case that
/// can never be compared is wasted, and a case nothing would check fails at once.
fn check_before_calls(
    suite: &Suite,
    config: &SuiteConfig,
    loaded: &LoadedCase,
    fixture: &FixtureFile,
    case_path: &str,
) -> Result<(), String> {
    let structured = config
        .evaluators
        .iter()
        .any(|e| matches!(e, Evaluator::Strict | Evaluator::FieldAccuracy));
    if let Some(message) =
        crate::suite::fixture::uncomparable_expected(fixture.expected.as_ref(), structured)
    {
        return Err(format!(
            "bad fixture: {}: {message}",
            suite.relative(&loaded.path.absolute)
        ));
    }
    expectations_read(suite, config, fixture, case_path)?;
    checks::check_schemas(suite, config, fixture, &loaded.path.absolute)
}

/// Runs the case; `case` holds the fixture's input (the fixture's own is taken out) and gets
/// its clock set for each run.
fn execute(
    suite: &Suite,
    loaded: &LoadedCase,
    name: &str,
    case: &mut Case,
    f: &CaseFn<'_>,
    result: &mut CaseResult,
) -> Result<(), String> {
    let settings = suite.settings.as_ref().map_err(|e| e.to_string())?;
    let layer = suite.layer(&loaded.path.relative);
    let config = layer
        .config
        .as_ref()
        .map_err(|e| format!("bad suite config: {e}"))?;
    let fixture = loaded
        .file
        .as_ref()
        .map_err(|e| format!("bad fixture: {e}"))?;
    check_before_calls(suite, config, loaded, fixture, &case.path)?;
    let record_command = command(name, true, fixture.status != Status::Active);
    // The source files are checked for every case (a bad `sources` entry fails it even without
    // a recording); the fixture and its input are hashed only when a recording is checked or
    // written, so a case that uses none never pays for it.
    let files = crate::suite::source_files(suite, loaded, fixture).map_err(|e| e.to_string())?;
    let current = std::cell::OnceCell::new();
    let input = &case.input;
    let sources =
        || current.get_or_init(|| crate::suite::with_digests(loaded, input, files.clone()));
    let recording_file = suite.recording_file(&loaded.path);
    let pending_file = pending::pending_file(&recording_file);
    let step = Step {
        suite,
        settings,
        config,
        loaded,
        name,
        record_command: &record_command,
        recording_file: &recording_file,
        pending_file: &pending_file,
        repeat: settings
            .repeat
            .or(config.run.repeat)
            .unwrap_or(crate::repeat::RunConfig::DEFAULT_REPEAT)
            .max(1),
        sources: &sources,
    };
    let (mut existing, digests, recorded_judge) = step.read_existing();

    // What the code produces from the committed responses, for `cargo proposal-eval review`.
    let mut committed = if settings.record == RecordMode::Review {
        step.check_pending_case()?;
        let existing = std::mem::replace(&mut existing, Ok(None));
        if let Ok(Some(recorded)) = &existing {
            case.now = recorded.recorded_at;
        }
        committed_outcome(config, case, existing, f)
    } else {
        None
    };
    let record = step.records(&existing);

    // The model calls of every sample (the last attempt's, when `RECORD=stale` records again).
    let mut usage = crate::recording::usage::UsageTotals::default();
    // The clock the case sees: now while recording, the recording's time while replaying.
    let runs = if record {
        case.now = Utc::now();
        step.record(case, f, result, &mut usage, committed.take())?
    } else {
        match existing {
            Err(e) if matches!(e.kind(), RecordingErrorKind::Newer { .. }) => {
                return Err(e.to_string())
            }
            Err(e) => {
                return Err(format!(
                    "{e}\nfix the file, or delete it and re-record: {record_command}"
                ))
            }
            Ok(None) => {
                case.now = Utc::now();
                step.unrecorded(case, f, result, &mut usage)?
            }
            Ok(Some(recorded)) => {
                case.now = recorded.recorded_at;
                match step.replay(recorded, digests, case, f, result, &mut usage)? {
                    Some(runs) => runs,
                    // Under `RECORD=stale`, a replay whose calls no longer match the recording
                    // (the code or its prompt changed) is stale too: the case runs again,
                    // recording.
                    None => {
                        usage = crate::recording::usage::UsageTotals::default();
                        case.now = Utc::now();
                        step.record(case, f, result, &mut usage, committed.take())?
                    }
                }
            }
        }
    };

    // The rubric judge grades each sample's output (its verdicts recorded or replayed); its
    // calls count in the case's usage, as the judge's.
    let advisory = || crate::rubric_judge::calibration::suite_advisory(suite).clone();
    let step_of_judge = RubricStep {
        judge: &config.judge,
        judge_model: suite.judge.as_ref(),
        pricing: &config.pricing,
        recording: &config.recording,
        crate_root: &suite.crate_root,
        advisory: &advisory,
        record: settings.record,
        name,
        case_path: &case.path,
        input: &case.input,
        input_sha256: current.get().map(|c| c.input_sha256.as_str()),
        used: result.recording,
        recording_file: &recording_file,
        pending_file: &pending_file,
        record_command: &record_command,
        tally: Default::default(),
    };
    let samples: Vec<Judgeable<'_>> = runs
        .iter()
        .map(|(output, calls, _)| {
            output
                .as_ref()
                .ok()
                .map(|output| (output, calls.as_slice()))
        })
        .collect();
    let rubric = fixture.graded_rubric(config);
    let graded = step_of_judge.grade(rubric.as_deref(), &samples, recorded_judge, &sources)?;
    result.calls.extend(graded.calls);
    usage.add(&graded.usage);
    if usage.calls > 0 {
        result.usage = Some(usage);
    }
    step.evaluate(runs, graded.judged, case, result)
}

/// What the steps of one case's run share: the suite, its settings and config, the case and its
/// recording's files.
struct Step<'a, 's> {
    suite: &'a Suite,
    settings: &'a crate::env::Settings,
    config: &'a SuiteConfig,
    loaded: &'a LoadedCase,
    /// The test's name.
    name: &'a str,
    /// The command that records this case.
    record_command: &'a str,
    recording_file: &'a Path,
    pending_file: &'a Path,
    /// How many samples a recording holds.
    repeat: usize,
    /// The case's current sources, hashed the first time they are asked for.
    sources: &'a dyn Fn() -> &'s sources::CaseSources,
}

impl Step<'_, '_> {
    /// The case's recording as this run uses it, with its requests' digests and each sample's
    /// judge part when it was read for replay. `RECORD=1` replaces the recording whatever it
    /// holds: it is not read (a large one would be held while the case records its own). A
    /// replay reads a large recording with its requests hashed, not built (`digests`); the
    /// committed replay of a review compares whole requests.
    #[allow(clippy::type_complexity)]
    fn read_existing(
        &self,
    ) -> (
        Result<Option<Recording>, recording::RecordingError>,
        Option<recording::RequestDigests>,
        Vec<Option<crate::recording::judgement::ReplayedJudgement>>,
    ) {
        let (suite, record, file) = (self.suite, self.settings.record, self.recording_file);
        let mut digests = None;
        let mut judges = Vec::new();
        let existing = if !suite.may_hold_recordings() || record == RecordMode::All {
            Ok(None)
        } else if record == RecordMode::Review {
            Recording::read(file)
        } else {
            Recording::read_for_replay(file).map(|read| {
                read.map(|read| {
                    digests = read.digests;
                    judges = read.judges;
                    read.recording
                })
            })
        }
        .map_err(|e| e.with_file(suite.relative(file)));
        (existing, digests, judges)
    }

    /// Under `RECORD=review`: the pending file, when there is one, is this case's.
    fn check_pending_case(&self) -> Result<(), String> {
        let case_path = self.loaded.path.case_path();
        match Recording::read_head(self.pending_file) {
            Ok(Some(head)) if head.case != case_path => Err(format!(
                "{} is the recording of the case `{}`, so it cannot hold this case's pending recording; rename one of the two fixtures to review `{case_path}`",
                self.suite.relative(self.pending_file),
                head.case
            )),
            _ => Ok(()),
        }
    }

    /// Whether this run records the case, given its recording as read (`existing`).
    fn records(&self, existing: &Result<Option<Recording>, recording::RecordingError>) -> bool {
        match self.settings.record {
            RecordMode::All | RecordMode::Review => true,
            RecordMode::Replay => false,
            RecordMode::Stale => match existing {
                Ok(Some(r)) => {
                    !r.changes((self.sources)()).is_empty() || r.samples.len() < self.repeat
                }
                // What a newer proposal-eval wrote is not replaced by an older format.
                Err(e) if matches!(e.kind(), RecordingErrorKind::Newer { .. }) => false,
                Err(e) => {
                    // Never silently: the old file may have been edited by hand.
                    eprintln!(
                        "note: {}: replacing {} by a new recording; it could not be used: {e}",
                        self.name,
                        self.suite.relative(self.recording_file)
                    );
                    true
                }
                Ok(None) => true,
            },
        }
    }

    /// Runs the case `repeat` times against the live model and writes what it answered: the
    /// recording, or under `RECORD=review` a pending recording (with `committed`, what the code
    /// made of the committed responses). A case that no longer calls the model loses its
    /// recording.
    fn record(
        &self,
        case: &Case,
        f: &CaseFn<'_>,
        result: &mut CaseResult,
        usage: &mut crate::recording::usage::UsageTotals,
        committed: Option<Vec<Outcome>>,
    ) -> Result<Vec<SampleRun>, String> {
        let Step {
            suite,
            config,
            loaded,
            name,
            recording_file,
            pending_file,
            repeat,
            sources,
            ..
        } = *self;
        let review = self.settings.record == RecordMode::Review;
        let input = &case.input;
        result.calls.clear();
        let mut runs: Vec<SampleRun> = Vec::with_capacity(repeat);
        // `recorded` only once the file is written: every failure before says `not recorded`.
        result.recording = RecordingUse::NotRecorded;
        let now = case.now;
        let mut samples = Vec::with_capacity(repeat);
        for _ in 0..repeat {
            let mut llm = Llm::record(suite.model.clone())
                .with_suite(config.http.clone(), config.pricing.clone())
                .redacting(config.recording.redactor());
            let output =
                call(f, case, &mut llm, true).map_err(|e| format!("{e}{}", live_failure(&llm)))?;
            usage.add(&llm.usage());
            result.calls.extend(llm.call_log());
            if let Some(failure) = llm.finish_failure() {
                return Err(failure);
            }
            if let Err(e) = &output {
                // Nothing is recorded: an error is not what the model would answer. A client
                // may report a failed call by its status alone (`http status: 502`): the
                // proxy's reason is told here.
                return Err(format!("{e}{}\n(nothing was recorded)", live_failure(&llm)));
            }
            let Some(interactions) = llm.take_recorded() else {
                // The code under test swallowed a failed live call: its output is not what
                // the model would answer, so nothing is recorded and the case does not pass.
                return Err(format!(
                    "a live model call failed while recording: {}\nnothing was recorded; {}",
                    llm.model_failure().as_deref().unwrap_or("(no message)"),
                    if review {
                        "the committed recording and any pending one are unchanged"
                    } else if recording_file.exists() {
                        "the previous recording is unchanged"
                    } else {
                        "there is no recording yet"
                    }
                ));
            };
            samples.push(recording::Sample::new(interactions));
            runs.push((output, llm.trajectory(), llm.usage()));
        }
        let calls = samples.iter().any(|s| !s.interactions.is_empty());
        if calls && review {
            let mut pending = Pending {
                recording: Recording::of_samples(
                    loaded.path.case_path().to_string(),
                    now,
                    sources(),
                    input,
                    samples,
                ),
                review: review_outcomes(committed, &runs),
            };
            pending.redact(&config.recording.redactor());
            pending
                .write_moved(pending_file)
                .map_err(|e| write_failure(suite, pending_file, "pending recording", e))?;
            result.recording = RecordingUse::Pending;
        } else if review {
            // Nothing to review; the committed recording is never touched under review.
            result.recording = RecordingUse::None;
            eprintln!(
                "note: {name}: the case made no model call, so nothing is pending review{}",
                if recording_file.exists() {
                    format!(
                        " ({} is unchanged; `RECORD=1` removes it)",
                        suite.relative(recording_file)
                    )
                } else {
                    String::new()
                }
            );
        } else if calls {
            let mut recording = Recording::of_samples(
                loaded.path.case_path().to_string(),
                now,
                sources(),
                input,
                samples,
            );
            // Credentials never reach the file; the code under test got the answers unredacted.
            recording.redact(&config.recording.redactor());
            recording
                .write_moved(recording_file)
                .map_err(|e| write_failure(suite, recording_file, "recording", e))?;
            result.recording = RecordingUse::Recorded;
        } else {
            // The case no longer calls the model: an old recording would make replays fail
            // ("0 calls but the recording has 1") with no way to re-record it away.
            result.recording = RecordingUse::None;
            if std::fs::remove_file(recording_file).is_ok() {
                eprintln!(
                    "note: {name}: removed {}: the case no longer calls the model",
                    suite.relative(recording_file)
                );
            }
        }
        Ok(runs)
    }

    /// Runs the case `repeat` times with no recording: a model call fails saying how to record
    /// it.
    fn unrecorded(
        &self,
        case: &Case,
        f: &CaseFn<'_>,
        result: &mut CaseResult,
        usage: &mut crate::recording::usage::UsageTotals,
    ) -> Result<Vec<SampleRun>, String> {
        let config = self.config;
        result.calls.clear();
        let mut runs: Vec<SampleRun> = Vec::with_capacity(self.repeat);
        for _ in 0..self.repeat {
            let mut llm = Llm::missing(self.record_command.to_string())
                .with_suite(config.http.clone(), config.pricing.clone());
            let output = call(f, case, &mut llm, false)?;
            usage.add(&llm.usage());
            result.calls.extend(llm.call_log());
            if let Some(failure) = llm.finish_failure() {
                return Err(failure);
            }
            runs.push((output, llm.trajectory(), llm.usage()));
        }
        Ok(runs)
    }

    /// Replays each sample of `recorded` (its requests' `digests` when it was read for replay),
    /// after checking it is fresh. `None`: under `RECORD=stale`, the code's calls no longer
    /// match the recording, so the case is to be recorded again.
    fn replay(
        &self,
        recorded: Recording,
        digests: Option<crate::recording::RequestDigests>,
        case: &Case,
        f: &CaseFn<'_>,
        result: &mut CaseResult,
        usage: &mut crate::recording::usage::UsageTotals,
    ) -> Result<Option<Vec<SampleRun>>, String> {
        let Step {
            suite,
            settings,
            config,
            name,
            record_command,
            recording_file,
            repeat,
            sources,
            ..
        } = *self;
        let input = &case.input;
        result.calls.clear();
        let mut runs: Vec<SampleRun> = Vec::with_capacity(repeat);
        let validation = config.recording.validation;
        let changes = if validation == Validation::Skip {
            Vec::new()
        } else {
            recorded.changes(sources())
        };
        result.recording = RecordingUse::Replayed;
        let mut stale = Vec::new();
        if !changes.is_empty() {
            stale.push(stale_message(
                suite,
                recording_file,
                &changes,
                recorded.input.as_ref(),
                input,
                record_command,
                settings.color,
            ));
        }
        if recorded.samples.len() < repeat && validation != Validation::Skip {
            let env = if settings.repeat.is_some() {
                format!("PROPOSAL_EVAL_REPEAT={repeat} ")
            } else {
                String::new()
            };
            stale.push(format!(
                "the recording {} has {} sample(s) and {repeat} are asked for (repeat = {repeat}); record them: {env}{record_command}",
                suite.relative(recording_file),
                recorded.samples.len()
            ));
        }
        if !stale.is_empty() {
            let message = stale.join("\n");
            match stale_use(settings.record, validation) {
                // A run that records made a stale recording again before it came to replay:
                // one stale here was not seen as such then, and is refused.
                StaleUse::Refuse | StaleUse::Record => {
                    result.recording = RecordingUse::Stale;
                    return Err(message);
                }
                StaleUse::Warn => {
                    eprintln!("warning: {name}: {message}");
                    result.recording = RecordingUse::ReplayedStale;
                }
                StaleUse::Replay => result.recording = RecordingUse::ReplayedStale,
            }
        }
        let ignore = &config.recording.ignore_request_paths;
        let sample_count = recorded.samples.len();
        let mut digests = digests;
        for (k, sample) in recorded.samples.into_iter().enumerate() {
            let mut llm = Llm::replay(
                sample.interactions,
                ignore.clone(),
                config.recording.redactor(),
            )
            .with_suite(config.http.clone(), config.pricing.clone());
            if let Some(d) = &mut digests {
                llm = llm.with_digests(crate::recording::calls::SampleDigests {
                    file: d.file.clone(),
                    sample: k,
                    digests: d.samples.get_mut(k).map(std::mem::take).unwrap_or_default(),
                });
            }
            let output = call(f, case, &mut llm, false)?;
            usage.add(&llm.usage());
            result.calls.extend(llm.call_log());
            if settings.record == RecordMode::Stale && llm.replay_mismatched() {
                eprintln!(
                    "note: {name}: the code's model calls differ from the recording (the code or its prompt changed); recording it again"
                );
                return Ok(None);
            }
            if let Some(failure) = llm.finish_failure() {
                let which = if sample_count > 1 {
                    format!("sample {} of {sample_count}: ", k + 1)
                } else {
                    String::new()
                };
                return Err(if llm.replay_mismatched() {
                    format!("{which}{failure}\nre-record just this case: {record_command}")
                } else {
                    format!("{which}{failure}")
                });
            }
            runs.push((output, llm.trajectory(), llm.usage()));
        }
        Ok(Some(runs))
    }

    /// Each sample evaluated on its own (with its rubric's verdicts, `judged`); the pass rule
    /// decides the case. A recording written by this run whose case then fails is said so.
    fn evaluate(
        &self,
        runs: Vec<SampleRun>,
        judged: Vec<Option<crate::rubric_judge::Judged>>,
        case: &Case,
        result: &mut CaseResult,
    ) -> Result<(), String> {
        let Step {
            suite,
            settings,
            config,
            loaded,
            name,
            recording_file,
            pending_file,
            ..
        } = *self;
        let fixture = loaded
            .file
            .as_ref()
            .map_err(|e| format!("bad fixture: {e}"))?;
        let pass = config.run.pass;
        // Each sample evaluated on its own; the pass rule decides the case.
        let count = runs.len();
        let answers = sample_answers(&judged);
        let mut verdicts = Vec::with_capacity(count);
        for ((output, calls, spent), judged) in runs.into_iter().zip(judged) {
            let mut sample = CaseResult::new(result.name.clone());
            sample.recording = result.recording;
            let (verdict, output) = match output {
                Err(e) => (Err(e.to_string()), None),
                Ok(actual) => (
                    evaluate(
                        suite,
                        config,
                        settings.color,
                        fixture,
                        case,
                        &actual,
                        (&calls, &spent),
                        name,
                        judged.as_ref(),
                        &mut sample,
                    ),
                    Some(actual),
                ),
            };
            let trajectory =
                (!calls.is_empty() || fixture.expected_trajectory.is_some()).then_some(calls);
            let score = crate::repeat::mean(
                &sample
                    .evaluators
                    .iter()
                    .map(|e| e.score)
                    .collect::<Vec<_>>(),
            );
            verdicts.push((verdict, sample.evaluators, score, trajectory, output));
        }
        let verdict = if count == 1 {
            let (verdict, evaluators, _, trajectory, output) = verdicts.pop().expect("one sample");
            result.evaluators = evaluators;
            result.trajectory = trajectory;
            result.output = output;
            verdict
        } else {
            decide(name, pass, verdicts, result)
        };
        show_samples(&mut result.evaluators, &answers);
        // A recording written by a run whose case then fails is said so, never silently kept.
        verdict.map_err(|message| {
            if result.recording == RecordingUse::Pending {
                format!(
                    "{message}
(the model's new responses are pending review in {} and this case fails on them; the committed recording is unchanged; `cargo proposal-eval review` shows both)",
                    suite.relative(pending_file)
                )
            } else if result.recording == RecordingUse::Recorded {
                format!(
                    "{message}
(the model's new responses were recorded in {} and this case fails on them; restore the file from version control to undo)",
                    suite.relative(recording_file)
                )
            } else {
                message
            }
        })
    }
}

/// Calls the code under test once; a panic fails the case.
/// While recording, the reason a live call failed (the upstream refused, timed out, cut a
/// stream), as a line to add to the case's own error; empty when none failed.
/// What the live calls of a failed case said: a call that failed, the upstream's error answers
/// (a client may report a failed call by its status alone: `http status: 500`).
fn live_failure(llm: &Llm) -> String {
    let mut text = llm
        .model_failure()
        .map(|reason| format!("\na live model call failed while recording: {reason}"))
        .unwrap_or_default();
    if let Some(said) = llm.upstream_errors() {
        text.push_str(&format!("\nthe upstream answered with an error:\n{said}"));
    }
    text
}

fn call(
    f: &CaseFn<'_>,
    case: &Case,
    llm: &mut Llm,
    recording: bool,
) -> Result<Result<Value, case::OutputError>, String> {
    let returned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(case, &mut *llm)));
    // The loopback servers of `llm.base_url()` stop with the case; the calls they were answering
    // finish first.
    llm.close();
    returned.map_err(|panic| {
        let message = crate::panics::message(&*panic);
        format!(
            "the case panicked: {message}{}{}",
            executor::panic_hint(&message)
                .map(|hint| format!("\n{hint}"))
                .unwrap_or_default(),
            if recording {
                "\n(nothing was recorded)"
            } else {
                ""
            }
        )
    })
}

/// One sample's verdict (the failure message when it failed), its evaluators, its score, its
/// trajectory and its output.
type SampleVerdict = (
    Result<(), String>,
    Vec<EvaluatorResult>,
    Option<f64>,
    Option<Vec<ToolCall>>,
    Option<Value>,
);

/// One run of the code under test: its output, its trajectory and what its model calls used
/// (the budget's measure; the judge's calls are not in it).
type SampleRun = (
    Result<Value, case::OutputError>,
    Vec<ToolCall>,
    crate::recording::usage::UsageTotals,
);

/// The verdict of a repeated case: its samples' verdicts under the pass rule. The case's
/// evaluators are those of its first failing sample when it fails, else of its first sample;
/// the failure message lists every failing sample's.
fn decide(
    name: &str,
    pass: PassRule,
    verdicts: Vec<SampleVerdict>,
    result: &mut CaseResult,
) -> Result<(), String> {
    let decided = Decided::of(
        pass,
        verdicts
            .iter()
            .map(|(verdict, _, score, _, _)| (verdict, *score)),
    );
    result.samples = Some(decided.samples.clone());
    let first_failing = verdicts.iter().position(|(v, _, _, _, _)| v.is_err());
    let shown = match (decided.passed, first_failing) {
        (false, Some(i)) => i,
        _ => 0,
    };
    if let Some((_, evaluators, _, trajectory, output)) = verdicts.into_iter().nth(shown) {
        result.evaluators = evaluators;
        result.trajectory = trajectory;
        result.output = output;
    }
    if decided.passed {
        if decided.failures.is_some() {
            // A case that passes although some samples failed is flaky: said, not hidden.
            eprintln!("note: {name}: flaky: {}", decided.rule);
        }
        Ok(())
    } else {
        Err(format!(
            "{name}: {}\n{}",
            decided.rule,
            decided.failures.unwrap_or_default()
        ))
    }
}

/// The pass rule over a repeated case's samples, as a test run and `review` both decide it.
pub(crate) struct Decided {
    /// The samples' verdicts and scores.
    pub samples: Samples,
    /// Whether the rule passes the case.
    pub passed: bool,
    /// `2 of 3 samples passed, mean score 0.67 ± 0.33; pass = majority needs 2 of 3`.
    pub rule: String,
    /// Each failing sample's message under `--- sample K of N:`; `None` when none failed.
    pub failures: Option<String>,
}

impl Decided {
    /// `pass` over each sample's verdict and score, in order.
    pub(crate) fn of<'v>(
        pass: PassRule,
        runs: impl Iterator<Item = (&'v Result<(), String>, Option<f64>)>,
    ) -> Decided {
        let runs: Vec<_> = runs.collect();
        let count = runs.len();
        let samples = Samples::new(
            &runs
                .iter()
                .map(|(v, score)| (v.is_ok(), *score))
                .collect::<Vec<_>>(),
            pass,
        );
        let passed = pass.decides(samples.passed, count);
        let rule = format!(
            "{}; pass = {pass} needs {} of {count}",
            samples.describe(),
            pass.needs(count)
        );
        let failures: Vec<String> = runs
            .iter()
            .enumerate()
            .filter_map(|(k, (v, _))| {
                v.as_ref()
                    .err()
                    .map(|m| format!("--- sample {} of {count}:\n{m}", k + 1))
            })
            .collect();
        Decided {
            samples,
            passed,
            rule,
            failures: (!failures.is_empty()).then(|| failures.join("\n")),
        }
    }
}

/// Under `RECORD=review`: what the code under test produces replaying each sample of the
/// committed recording `existing` (checked for nothing but its calls: it is the "before" of a
/// review), or why it produces nothing; `None` when there is no committed recording. `case`'s
/// clock is the recording's.
fn committed_outcome(
    config: &SuiteConfig,
    case: &Case,
    existing: Result<Option<Recording>, recording::RecordingError>,
    f: &CaseFn<'_>,
) -> Option<Vec<Outcome>> {
    let recorded = match existing {
        Ok(None) => return None,
        Err(e) => return Some(vec![Outcome::Error(e.to_string())]),
        Ok(Some(recorded)) => recorded,
    };
    let mut samples = recorded.samples;
    if samples.is_empty() {
        samples.push(recording::Sample::default());
    }
    // Each sample as a replay uses it (moved out: nothing else reads the recording).
    let outcomes = samples.into_iter().map(|sample| {
        let mut llm = Llm::replay(
            sample.interactions,
            config.recording.ignore_request_paths.clone(),
            config.recording.redactor(),
        );
        let returned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(case, &mut llm)));
        match returned {
            Err(panic) => Outcome::Error(format!(
                "the case panicked: {}",
                crate::panics::message(&*panic)
            )),
            Ok(output) => match (llm.finish_failure(), output) {
                (Some(failure), _) => Outcome::Error(format!(
                    "the committed recording no longer replays: {failure}"
                )),
                (None, Err(e)) => Outcome::Error(e.to_string()),
                (None, Ok(value)) => Outcome::Output(value),
            },
        }
    });
    Some(outcomes.collect())
}

/// The `review` key of a pending recording: each sample's outcome on the committed responses
/// (`committed`, when there is a committed recording) and on the pending ones (`runs`).
fn review_outcomes(committed: Option<Vec<Outcome>>, runs: &[SampleRun]) -> Review {
    let mut pending_samples: Vec<Outcome> = runs
        .iter()
        .map(|(output, ..)| match output {
            Ok(value) => Outcome::Output(value.clone()),
            Err(e) => Outcome::Error(e.to_string()),
        })
        .collect();
    let pending = if pending_samples.is_empty() {
        Outcome::Error("the case ran no sample".into())
    } else {
        pending_samples.remove(0)
    };
    let (committed, committed_samples) = match committed {
        Some(mut outcomes) if !outcomes.is_empty() => {
            let first = outcomes.remove(0);
            (Some(first), outcomes)
        }
        _ => (None, Vec::new()),
    };
    Review {
        committed,
        pending,
        committed_samples,
        pending_samples,
    }
}

/// A case's failure when its recording or pending file was not written.
fn write_failure(suite: &Suite, file: &Path, what: &str, error: recording::WriteError) -> String {
    let name = suite.relative(file);
    match error {
        recording::WriteError::Credentials(found) => {
            recording::credentials::refusal(&name, &found, &suite.config_file_name())
        }
        recording::WriteError::Io(e) => format!("cannot write the {what} {name}: {e}"),
    }
}

fn stale_message(
    suite: &Suite,
    recording_file: &Path,
    changes: &[sources::SourceChange],
    recorded_input: Option<&Value>,
    input: &Value,
    record_command: &str,
    color: bool,
) -> String {
    let mut message = format!(
        "stale recording {}: it was made from other sources\n",
        suite.relative(recording_file)
    );
    // The recording's copy of the input is the current input: a different `input_sha256` is a
    // hash that was edited, not an input that changed, and is said so (never "changed" and
    // "unchanged" together).
    let same_input = recorded_input.is_some_and(|recorded| recorded == input);
    for change in changes {
        match change {
            sources::SourceChange::Input { recorded, current } if same_input => {
                message.push_str(&format!(
                    "  the recording's input_sha256 ({recorded}) is not the hash of its input, which is the case's input now (sha256 {current}): the hash was edited; re-recording writes it right\n"
                ));
            }
            change => message.push_str(&format!("  {change}\n")),
        }
    }
    let input_hash_listed = changes
        .iter()
        .any(|c| matches!(c, sources::SourceChange::Input { .. }));
    match recorded_input {
        Some(_) if same_input && input_hash_listed => {}
        Some(recorded) if recorded != input => {
            message.push_str("input, recorded vs current:\n");
            message.push_str(&proposal_eval_engine::render::line_diff(
                recorded,
                input,
                "recorded input",
                "current input",
                color,
            ));
        }
        Some(_) => message.push_str("the case's input is unchanged\n"),
        None if input_hash_listed => {
            message.push_str(&format!(
                "(the recording keeps no copy of an input over {} KiB, so there is no diff to show)\n",
                recording::INPUT_COPY_LIMIT / 1024
            ));
        }
        None => message.push_str("the case's input is unchanged\n"),
    }
    message.push_str(&format!("re-record just this case: {record_command}"));
    message
}

/// Checks that every expectation the case carries is read by an enabled evaluator, and that
/// something checks the case at all; the failure names the keys and the fix.
fn expectations_read(
    suite: &Suite,
    config: &SuiteConfig,
    fixture: &FixtureFile,
    case_path: &str,
) -> Result<(), String> {
    let file = suite.relative(&suite.dir.join(case_path)) + ".json";
    // `code_judge` scripts get `expected` as their `reference_answer`.
    let read = |key: &str| {
        config.evaluators.iter().any(|e| {
            e.expectation() == Some(key) || (key == "expected" && *e == Evaluator::CodeJudge)
        })
    };
    let carried = [
        (
            "expected",
            fixture.expected.is_some(),
            "\"strict\" or \"field_accuracy\"",
        ),
        (
            "expected_trajectory",
            fixture.expected_trajectory.is_some(),
            "\"trajectory\"",
        ),
        // A draft's assertions are its rubric only while `rubric` runs: a draft of a suite
        // without a judge still stands for what a person will write.
        (
            "rubric",
            fixture.rubric.is_some()
                || (config.evaluators.contains(&Evaluator::Rubric) && fixture.rubric().is_some()),
            "\"rubric\"",
        ),
        ("checks", fixture.checks.is_some(), "\"checks\""),
        ("budget", fixture.budget.is_some(), "\"budget\""),
    ];
    for (key, present, evaluator) in carried {
        if present && !read(key) {
            let names: Vec<String> = config
                .evaluators
                .iter()
                .map(|e| format!("\"{}\"", e.name()))
                .collect();
            return Err(format!(
                "{file}: the case has `{key}` but no enabled evaluator reads it (evaluators = [{}]); add {evaluator} to `evaluators` in the suite's proposal-eval.toml, or remove `{key}`",
                names.join(", ")
            ));
        }
    }
    // A suite's `[[checks]]` and `[budget]` check each of its cases (the config refuses them
    // when their evaluator is off).
    if carried.iter().any(|(_, present, _)| *present)
        || config.evaluators.contains(&Evaluator::CodeJudge)
        || !config.checks.is_empty()
        || !config.budget.is_empty()
    {
        return Ok(());
    }
    let mut keys: Vec<(&str, Vec<&str>)> = Vec::new();
    for e in &config.evaluators {
        if let Some(key) = e.expectation() {
            match keys.iter_mut().find(|(k, _)| *k == key) {
                Some((_, names)) => names.push(e.name()),
                None => keys.push((key, vec![e.name()])),
            }
        }
    }
    let keys: Vec<String> = keys
        .iter()
        .map(|(key, names)| format!("`{key}` ({})", names.join(", ")))
        .collect();
    Err(format!(
        "{file}: nothing checks this case: it has none of {}; add the one that says what a correct run produces",
        keys.join(", ")
    ))
}

/// Runs the suite's evaluators on what the case's code produced (`actual`), the tool calls
/// it made (`calls`) and what its model calls used (`spent`, the judge's apart), pushing each one's result onto `result`; the failure message when one
/// fails. Each evaluator runs on the cases that carry its expectation, `code_judge` on every
/// case. Also what `cargo proposal-eval review` evaluates both sides of a pending recording
/// with.
#[allow(clippy::too_many_arguments)]
pub(crate) fn evaluate(
    suite: &Suite,
    config: &SuiteConfig,
    color: bool,
    fixture: &FixtureFile,
    case: &Case,
    actual: &Value,
    (calls, spent): (&[ToolCall], &crate::recording::usage::UsageTotals),
    name: &str,
    judged: Option<&crate::rubric_judge::Judged>,
    result: &mut CaseResult,
) -> Result<(), String> {
    expectations_read(suite, config, fixture, &case.path)?;
    let rubric = fixture.graded_rubric(config);
    for evaluator in &config.evaluators {
        match evaluator {
            Evaluator::Rubric => {
                if rubric.is_some() {
                    result.evaluators.push(rubric_result(judged));
                }
            }
            Evaluator::Strict => {
                if let Some(expected) = &fixture.expected {
                    let ctx = crate::transform::Context { now: case.now };
                    let ignore = fixture.ignore_paths.as_deref();
                    result
                        .evaluators
                        .push(strict(config, expected, actual, ignore, &ctx, color));
                }
            }
            Evaluator::FieldAccuracy => {
                if let Some(expected) = &fixture.expected {
                    result
                        .evaluators
                        .push(field_accuracy(config, expected, actual, color));
                }
            }
            Evaluator::Trajectory => {
                if let Some(expected) = &fixture.expected_trajectory {
                    result.evaluators.push(trajectory(config, expected, calls));
                }
            }
            Evaluator::Checks => {
                if let Some(list) = checks::case_checks(config, fixture) {
                    result
                        .evaluators
                        .push(checks::checks_result(suite, list, actual));
                }
            }
            Evaluator::Budget => {
                if let Some(budget) = checks::case_budget(config, fixture) {
                    result
                        .evaluators
                        .push(checks::budget_result(&budget, spent));
                }
            }
            Evaluator::CodeJudge => {
                let expected = fixture.expected.as_ref().unwrap_or(&Value::Null);
                for judge in &config.code_judge {
                    let input = crate::code_judge::CodeJudgeInput {
                        input: case.input.clone(),
                        candidate_answer: actual.clone(),
                        reference_answer: expected.clone(),
                        trajectory: calls.to_vec(),
                        case: serde_json::json!({ "name": name, "path": case.path, "description": case.description }),
                        rubric: fixture.rubric().map(std::borrow::Cow::into_owned),
                    };
                    let verdict = crate::code_judge::run(judge, &suite.crate_root, &input);
                    result.evaluators.push(EvaluatorResult {
                        misses: verdict.misses.clone(),
                        rendered: if verdict.passed {
                            String::new()
                        } else {
                            verdict.render(color)
                        },
                        ..EvaluatorResult::plain(
                            format!("code_judge:{}", verdict.name),
                            verdict.score,
                            verdict.passed,
                            verdict.reasoning.clone(),
                        )
                    });
                }
            }
        }
    }
    let failed: Vec<&EvaluatorResult> = result.evaluators.iter().filter(|e| !e.passed).collect();
    if failed.is_empty() {
        return Ok(());
    }
    let mut message = String::new();
    for e in failed {
        message.push_str(&format!(
            "{}/{}: {} FAILED (score {})\n",
            suite.name,
            case.path,
            e.evaluator,
            format_score(e.score)
        ));
        message.push_str(&e.rendered);
        if !e.rendered.ends_with('\n') {
            message.push('\n');
        }
    }
    message.push_str(&format!(
        "re-run: {}",
        command(name, false, fixture.status != Status::Active)
    ));
    Err(message)
}

fn strict(
    config: &SuiteConfig,
    expected: &Value,
    actual: &Value,
    ignore_paths: Option<&[crate::path::Pattern]>,
    ctx: &crate::transform::Context,
    color: bool,
) -> EvaluatorResult {
    let verdict = crate::compare::evaluate(expected, actual, &config.strict, ignore_paths, ctx);
    let passed = verdict.passed();
    EvaluatorResult {
        evaluator: "strict".into(),
        score: verdict.score,
        passed,
        summary: format!("{} mismatch(es)", verdict.mismatches.len()),
        fields: Vec::new(),
        verdicts: Vec::new(),
        alignment: None,
        misses: verdict.mismatches.iter().map(|m| m.to_string()).collect(),
        rendered: if passed {
            String::new()
        } else {
            verdict.render(color)
        },
    }
}

fn field_accuracy(
    config: &SuiteConfig,
    expected: &Value,
    actual: &Value,
    color: bool,
) -> EvaluatorResult {
    let verdict = crate::accuracy::evaluate(expected, actual, &config.field_accuracy);
    let mut fields: Vec<(String, bool)> = verdict
        .hits
        .iter()
        .map(|h| (h.path.to_string(), true))
        .collect();
    fields.extend(verdict.misses.iter().map(|m| (m.path.to_string(), false)));
    EvaluatorResult {
        evaluator: "field_accuracy".into(),
        score: verdict.score,
        passed: verdict.passed,
        summary: verdict.reasoning.clone(),
        fields,
        verdicts: Vec::new(),
        alignment: None,
        misses: verdict
            .misses
            .iter()
            .map(|m| format!("{}: {}", m.path, m.why))
            .collect(),
        rendered: if verdict.passed {
            String::new()
        } else {
            verdict.render(color)
        },
    }
}

fn trajectory(
    config: &SuiteConfig,
    expected: &crate::trajectory::ExpectedTrajectory,
    calls: &[ToolCall],
) -> EvaluatorResult {
    let verdict = crate::trajectory::evaluate(expected, calls, &config.trajectory);
    EvaluatorResult {
        evaluator: "trajectory".into(),
        score: verdict.score,
        passed: verdict.passed,
        summary: verdict.summary.clone(),
        fields: Vec::new(),
        verdicts: Vec::new(),
        alignment: Some(alignment(expected, &verdict, calls)),
        misses: verdict.misses(calls),
        rendered: if verdict.passed {
            String::new()
        } else {
            verdict.render(calls)
        },
    }
}

/// The alignment a report entry shows for a trajectory verdict: each expected step with the
/// call it matched (`matched`), the closest call of its tool and why it differs (`mismatched`),
/// or none (`missing`); then each call the mode does not allow (`unexpected`) and each call of
/// a forbidden tool (`forbidden`). `call` indexes the case's trajectory.
fn alignment(
    expected: &crate::trajectory::ExpectedTrajectory,
    verdict: &crate::trajectory::TrajectoryVerdict,
    calls: &[ToolCall],
) -> Value {
    let mut rows = Vec::with_capacity(verdict.steps.len());
    for (step, outcome) in expected.steps.iter().zip(&verdict.steps) {
        let (call, status, mismatches) = match (outcome.matched, &outcome.closest) {
            (Some(call), _) => (Some(call), "matched", Vec::new()),
            (None, Some(closest)) => (
                Some(closest.call),
                "mismatched",
                closest.mismatches.iter().map(|m| m.to_string()).collect(),
            ),
            (None, None) => (
                None,
                "missing",
                outcome
                    .in_its_place
                    .iter()
                    .map(|&p| format!("a call of `{}` is in its place", calls[p].tool))
                    .collect(),
            ),
        };
        rows.push(serde_json::json!({
            "step": step, "call": call, "status": status, "mismatches": mismatches,
        }));
    }
    let row = |call: usize, status: &str, why: Vec<String>| serde_json::json!({ "step": null, "call": call, "status": status, "mismatches": why });
    for &j in &verdict.unexpected {
        let taken = verdict.taken.iter().find(|t| t.call == j);
        let why = taken
            .map(|t| format!("step {} is taken by call #{}", t.step + 1, t.by + 1))
            .into_iter()
            .collect();
        rows.push(row(j, "unexpected", why));
    }
    for f in &verdict.forbidden {
        rows.push(row(
            f.call,
            "forbidden",
            vec![format!("forbidden: {}", f.rule)],
        ));
    }
    Value::Array(rows)
}

#[cfg(test)]
mod tests {
    use super::command;

    #[test]
    fn a_drafts_commands_include_ignored_tests() {
        let draft = command("s::drafts::a", true, true);
        assert!(draft.starts_with("RECORD=1 cargo test"), "{draft}");
        assert!(
            draft.ends_with(" -- s::drafts::a --exact --include-ignored"),
            "{draft}"
        );
        assert!(command("s::a", false, false).ends_with(" -- s::a --exact"));
    }
    /// Every status of an alignment row: a matched step, one whose closest call differs, one
    /// with no call of its tool, a call the mode does not allow and one of a forbidden tool.
    #[test]
    fn an_alignment_names_each_step_and_each_call_it_does_not_allow() {
        use crate::trajectory::{evaluate, ExpectedTrajectory, Mode, Step, ToolCall};
        use serde_json::json;
        let expected = ExpectedTrajectory {
            mode: Some(Mode::Exact),
            steps: vec![
                Step::with_args("lookup", json!({"sku": "A"})),
                Step::with_args("price", json!({"sku": "A"})),
                Step::tool("recommend"),
            ],
            forbidden: vec!["delete".into()],
            ..Default::default()
        };
        let calls = vec![
            ToolCall::new("lookup", json!({"sku": "A"})),
            ToolCall::new("price", json!({"sku": "B"})),
            ToolCall::new("audit", json!({})),
            ToolCall::new("delete", json!({})),
        ];
        let verdict = evaluate(&expected, &calls, &Default::default());
        let rows = super::alignment(&expected, &verdict, &calls);
        let statuses: Vec<(&str, &serde_json::Value)> = rows
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["status"].as_str().unwrap(), &r["call"]))
            .collect();
        assert_eq!(
            statuses,
            [
                ("matched", &json!(0)),
                ("mismatched", &json!(1)),
                ("missing", &json!(null)),
                ("unexpected", &json!(3)),
                ("forbidden", &json!(3)),
            ],
            "{rows:#}"
        );
        assert_eq!(
            rows[1]["step"],
            json!({"tool": "price", "args": {"sku": "A"}})
        );
        assert_eq!(
            rows[1]["mismatches"],
            json!(["price.sku: values differ: expected \"A\", actual \"B\""])
        );
        assert_eq!(
            rows[2]["mismatches"],
            json!(["a call of `audit` is in its place"])
        );
        assert_eq!(rows[3]["step"], json!(null));
    }
}
