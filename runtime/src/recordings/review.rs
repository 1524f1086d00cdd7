//! What `cargo proposal-eval review` shows of a pending recording: the case, its verdict and
//! score with the committed responses and with the pending ones, and the responses themselves.
//!
//! Both sides are evaluated here, now, with the case's `expected` and the suite's config as they
//! are (the same evaluators, through the same function, as a test run), from the outputs that
//! the case's code produced when the pending recording was made (see
//! [`pending`](crate::recording::pending)): an `expected` fixed after the recording counts.

use crate::recording::pending::{self, Outcome, Pending};
use crate::recording::{Recording, SourceChange};
use crate::run::case::Case;
use crate::run::{CaseResult, RecordingUse};
use crate::suite::fixture::FixturePath;
use crate::suite::{LoadedCase, Suite};
use chrono::{DateTime, Utc};
use proposal_eval_engine::rubric;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// One side of a review: the case evaluated on one set of responses.
#[derive(Clone, Debug)]
pub struct Side {
    /// Whether the case passes on these responses.
    pub passed: bool,
    /// The mean of the evaluators' scores; `None` when none ran (there was no output).
    pub score: Option<f64>,
    /// Why it fails, as the test prints it (without the `re-run:` line); `None` when it passes.
    pub failure: Option<String>,
    /// The model's responses, in order (every sample's, one sample after the other).
    pub responses: Vec<Value>,
    /// When the responses were recorded.
    pub recorded_at: Option<DateTime<Utc>>,
    /// The rubric judge's verdicts this side's recording holds, one list per sample (each
    /// empty when the sample has no judge part; no list when the recording cannot be read).
    pub verdicts: Vec<Vec<crate::rubric_judge::RecordedVerdict>>,
    /// The case's `must not` statements (its rubric's `forbidden`), whose outcome is passed
    /// when the judge answers that they do not hold.
    pub forbidden: Vec<String>,
    /// With several samples evaluated (`repeat`): how many passed and the pass rule that
    /// decided `passed`, as a test run says it (`2 of 3 samples passed, mean score 0.67 ± 0.33;
    /// pass = majority needs 2 of 3`).
    pub samples: Option<String>,
}

/// A case with a pending recording.
#[derive(Clone, Debug)]
pub struct PendingCase {
    /// The case path.
    pub case: String,
    /// The test name (`suite::sub::case`), which `accept` and `reject` take.
    pub test: String,
    /// The committed recording's file (it may not exist yet).
    pub recording: PathBuf,
    /// The pending recording's file.
    pub pending: PathBuf,
    fixture: FixturePath,
}

/// Both sides of a pending recording, evaluated.
#[derive(Clone, Debug)]
pub struct Evaluated {
    /// The case on the committed responses; `None` when there is no committed recording.
    pub committed: Option<Side>,
    /// The case on the pending responses; `Err` when the pending file cannot be used.
    pub new: Result<Side, String>,
}

impl Evaluated {
    /// Each rubric statement's verdict with the committed recording and with the pending one,
    /// with the judge's reasons; empty when neither side holds verdicts. Statements are matched
    /// by their text, in the pending side's order, then those only the committed side judged.
    /// A case recorded with several samples (`repeat`) shows each sample's, under
    /// `sample 2 of 3:`, sample by sample.
    ///
    /// Each line shows the judge's answer and the statement's outcome apart (a `must not`
    /// statement passes when it does not hold):
    ///
    /// ```text
    /// [1] must not: "Recommends a discontinued SKU": answer does not hold -> holds (changed), outcome passed -> failed
    ///     committed: SKU-456 is not discontinued
    ///     pending:   SKU-123 is discontinued
    /// ```
    pub fn verdicts(&self) -> String {
        let none = Vec::new();
        let old = self.committed.as_ref().map_or(&none, |s| &s.verdicts);
        let new = self.new.as_ref().map_or(&none, |s| &s.verdicts);
        let count = old.len().max(new.len());
        let forbidden = match (&self.new, &self.committed) {
            (Ok(side), _) if !side.forbidden.is_empty() => &side.forbidden,
            (_, Some(side)) => &side.forbidden,
            (Ok(side), None) => &side.forbidden,
            (Err(_), None) => &Vec::new(),
        };
        let mut out = String::new();
        for k in 0..count {
            let lines = statement_verdicts(
                old.get(k).map_or(&[], Vec::as_slice),
                new.get(k).map_or(&[], Vec::as_slice),
                forbidden,
            );
            if count == 1 || lines.is_empty() {
                out.push_str(&lines);
                continue;
            }
            out.push_str(&format!(
                "sample {} of {count}:
",
                k + 1
            ));
            for line in lines.lines() {
                out.push_str(&format!(
                    "  {line}
"
                ));
            }
        }
        out
    }

    /// A line diff of the committed responses (`-`) and the pending ones (`+`).
    pub fn diff(&self, color: bool) -> String {
        let responses = |side: Option<&Side>| {
            Value::Array(side.map(|s| s.responses.clone()).unwrap_or_default())
        };
        proposal_eval_engine::render::line_diff(
            &responses(self.committed.as_ref()),
            &responses(self.new.as_ref().ok()),
            "committed responses",
            "pending responses",
            color,
        )
    }
}

/// The lines of [`Evaluated::verdicts`] for one sample: each statement's verdict in `old` (the
/// committed side) and in `new` (the pending side), answer and outcome apart, with the reasons;
/// `forbidden`: the `must not` statements.
fn statement_verdicts(
    old: &[crate::rubric_judge::RecordedVerdict],
    new: &[crate::rubric_judge::RecordedVerdict],
    forbidden: &[String],
) -> String {
    let mut statements: Vec<(usize, &str)> =
        new.iter().map(|v| (v.id, v.statement.as_str())).collect();
    for v in old {
        if !new.iter().any(|n| n.statement == v.statement) {
            statements.push((v.id, v.statement.as_str()));
        }
    }
    let find = |side: &[crate::rubric_judge::RecordedVerdict], text: &str| {
        side.iter().find(|v| v.statement == text).cloned()
    };
    let says = |v: &Option<crate::rubric_judge::RecordedVerdict>| match v {
        Some(v) if v.holds => "holds",
        Some(_) => "does not hold",
        None => "not judged",
    };
    let mut out = String::new();
    for (id, text) in statements {
        let must_not = forbidden.iter().any(|f| f == text);
        let outcome = |v: &Option<crate::rubric_judge::RecordedVerdict>| match v {
            Some(v) => rubric::outcome_text(v.holds != must_not),
            None => "none",
        };
        let (before, after) = (find(old, text), find(new, text));
        let changed = says(&before) != says(&after);
        out.push_str(&format!(
            "[{id}] {}{text:?}: answer {} -> {}{}, outcome {} -> {}\n",
            if must_not { "must not: " } else { "" },
            says(&before),
            says(&after),
            if changed { " (changed)" } else { "" },
            outcome(&before),
            outcome(&after),
        ));
        for (label, verdict) in [("committed:", &before), ("pending:", &after)] {
            if let Some(v) = verdict {
                out.push_str(&format!("    {label:<10} {}\n", v.reason));
            }
        }
    }
    out
}

/// A suite's pending recordings.
pub struct SuiteReview {
    suite: Suite,
    /// The suite's name.
    pub name: String,
    /// Every test name of the suite, in case order (for a name given that has no pending
    /// recording, and close matches of one that is no test at all).
    pub tests: Vec<String>,
    /// The cases with a pending recording, in case order.
    pub pending: Vec<PendingCase>,
}

impl SuiteReview {
    /// The suite `dir` of the crate at `crate_root`, with its config and recordings folder as
    /// for [`SuiteStatus::check_with`](crate::recordings::status::SuiteStatus::check_with).
    pub fn open(
        crate_root: &Path,
        dir: &Path,
        config: Option<&Path>,
        recordings: Option<&Path>,
    ) -> std::io::Result<SuiteReview> {
        let suite = Suite::new(crate_root.to_path_buf(), dir, config, recordings, None);
        let fixtures = suite.discover()?;
        let known: std::collections::HashSet<&str> =
            fixtures.iter().map(|f| f.case_path()).collect();
        let mut pending = Vec::new();
        for path in &fixtures {
            let recording = suite.recording_file(path);
            let file = pending::pending_file(&recording);
            // `a.pending.json` is the recording of a case named `a.pending` when there is one.
            if known.contains(format!("{}.pending", path.case_path()).as_str()) || !file.is_file() {
                continue;
            }
            pending.push(PendingCase {
                case: path.case_path().to_string(),
                test: suite.test_name(path),
                recording,
                pending: file,
                fixture: path.clone(),
            });
        }
        Ok(SuiteReview {
            name: suite.name.clone(),
            tests: fixtures.iter().map(|f| suite.test_name(f)).collect(),
            pending,
            suite,
        })
    }

    /// A crate-relative, `/`-separated form of `path`.
    pub fn relative(&self, path: &Path) -> String {
        self.suite.relative(path)
    }

    /// How the pending recording's sources differ from the case's current ones: the input or a
    /// source changed since it was recorded, so accepting it gives a stale recording. Empty when
    /// it is fresh, or when the fixture, a source or the file cannot be read (which evaluating
    /// or accepting it reports).
    pub fn pending_changes(&self, case: &PendingCase) -> Vec<SourceChange> {
        let loaded = LoadedCase::load(&self.suite, case.fixture.clone());
        let Ok(fixture) = &loaded.file else {
            return Vec::new();
        };
        let Ok(current) = crate::suite::current_sources(&self.suite, &loaded, fixture) else {
            return Vec::new();
        };
        match Recording::read_head(&case.pending) {
            Ok(Some(head)) => head.changes(&current),
            _ => Vec::new(),
        }
    }

    /// Evaluates both sides of one of [`SuiteReview::pending`] with the case's `expected` and
    /// the suite's config as they are now (code judges run).
    pub fn evaluate(&self, case: &PendingCase, color: bool) -> Evaluated {
        let suite = &self.suite;
        let loaded = LoadedCase::load(suite, case.fixture.clone());
        let shown = |e: crate::recording::RecordingError| {
            let file = suite.relative(e.file());
            e.with_file(file).to_string()
        };
        let pending = match Pending::read(&case.pending) {
            Err(e) => {
                return Evaluated {
                    committed: None,
                    new: Err(shown(e)),
                }
            }
            Ok(None) => {
                return Evaluated {
                    committed: None,
                    new: Err(format!("{}: no such file", suite.relative(&case.pending))),
                }
            }
            Ok(Some(pending)) => pending,
        };
        let committed = match Recording::read(&case.recording) {
            Ok(None) => None,
            Err(e) => Some(Side {
                passed: false,
                score: None,
                failure: Some(shown(e)),
                responses: Vec::new(),
                recorded_at: None,
                verdicts: Vec::new(),
                forbidden: Vec::new(),
                samples: None,
            }),
            Ok(Some(committed)) => {
                let review = &pending.review;
                let outcomes: Vec<Outcome> = match &review.committed {
                    Some(first) => std::iter::once(first)
                        .chain(&review.committed_samples)
                        .cloned()
                        .collect(),
                    None => vec![Outcome::Error(
                        "the committed recording was made after the pending one; record the pending one again to compare them".into(),
                    )],
                };
                Some(side(
                    suite,
                    &loaded,
                    &outcomes,
                    &committed,
                    committed.recorded_at,
                    color,
                ))
            }
        };
        let outcomes: Vec<Outcome> = std::iter::once(&pending.review.pending)
            .chain(&pending.review.pending_samples)
            .cloned()
            .collect();
        let new = side(
            suite,
            &loaded,
            &outcomes,
            &pending.recording,
            pending.recording.recorded_at,
            color,
        );
        Evaluated {
            committed,
            new: Ok(new),
        }
    }
}

/// The case evaluated on one side's outputs (one per sample, in order), as a test run
/// evaluates it: each sample on its own, with its own judge verdicts and tool calls, and the
/// suite's pass rule deciding over several.
fn side(
    suite: &Suite,
    loaded: &LoadedCase,
    outcomes: &[Outcome],
    recording: &Recording,
    now: DateTime<Utc>,
    color: bool,
) -> Side {
    // Every sample's responses, in order (one sample unless the case was recorded repeatedly).
    let responses = recording
        .samples
        .iter()
        .flat_map(|s| s.interactions.iter().map(|i| i.response.clone()))
        .collect();
    let verdicts: Vec<_> = (0..recording.samples.len())
        .map(|k| {
            recording
                .judgement(k)
                .map(|j| j.verdicts.clone())
                .unwrap_or_default()
        })
        .collect();
    let failed = |failure: String| Side {
        passed: false,
        score: None,
        failure: Some(failure),
        responses: Vec::new(),
        recorded_at: Some(now),
        verdicts: verdicts.clone(),
        forbidden: Vec::new(),
        samples: None,
    };
    let layer = suite.layer(&loaded.path.relative);
    let (config, fixture) = match (&layer.config, &loaded.file) {
        (Err(e), _) => return failed(format!("bad suite config: {e}")),
        (_, Err(e)) => return failed(format!("bad fixture: {e}")),
        (Ok(config), Ok(fixture)) => (config, fixture),
    };
    let name = suite.test_name(&loaded.path);
    let case = Case {
        name: name.clone(),
        path: loaded.path.case_path().to_string(),
        description: fixture.description.clone(),
        input: fixture.input.clone(),
        now,
    };
    let rubric = fixture.graded_rubric(config);
    let sample = |k: usize, outcome: &Outcome| -> (Result<(), String>, Option<f64>) {
        let actual = match outcome {
            Outcome::Error(e) => return (Err(e.clone()), None),
            Outcome::Output(actual) => actual,
        };
        let mut result = CaseResult::new(name.clone());
        result.recording = RecordingUse::Replayed;
        // The verdicts this side's recording holds on this sample, whose output this is.
        let judged = rubric.as_ref().and_then(|rubric| {
            let judgement = recording.judgement(k)?;
            Some(crate::rubric_judge::Judged::of(rubric, &judgement.verdicts))
        });
        // The tool calls of this sample's responses, as a replay of it reads them (steps the
        // code notes itself are not in a recording).
        let calls: Vec<crate::trajectory::ToolCall> = recording
            .samples
            .get(k)
            .into_iter()
            .flat_map(|s| s.interactions.iter().enumerate())
            .flat_map(|(k, i)| {
                crate::trajectory::tool_calls(&i.response)
                    .into_iter()
                    .map(move |c| c.in_response(k))
            })
            .collect();
        // What this sample's agent calls used, as its recording holds it (the budget's measure).
        let mut spent = crate::recording::usage::UsageTotals::default();
        for call in recording
            .samples
            .get(k)
            .into_iter()
            .flat_map(|s| &s.interactions)
        {
            spent.add_call(call.usage.as_ref(), call.latency_ms, &config.pricing);
        }
        let verdict = crate::run::evaluate(
            suite,
            config,
            color,
            fixture,
            &case,
            actual,
            (&calls, &spent),
            &name,
            judged.as_ref(),
            &mut result,
        );
        let scores: Vec<f64> = result.evaluators.iter().map(|e| e.score).collect();
        let score = crate::repeat::mean(&scores);
        // The `re-run:` line names `cargo test`, which is not what a reviewer runs next.
        let verdict = verdict.map_err(|message| {
            message
                .lines()
                .filter(|l| !l.starts_with("re-run: "))
                .collect::<Vec<_>>()
                .join("\n")
        });
        (verdict, score)
    };
    let runs: Vec<_> = outcomes
        .iter()
        .enumerate()
        .map(|(k, outcome)| sample(k, outcome))
        .collect();
    let side = |passed: bool, score: Option<f64>, failure: Option<String>| Side {
        passed,
        score,
        failure,
        responses,
        recorded_at: Some(now),
        verdicts,
        forbidden: rubric
            .as_ref()
            .map(|r| r.forbidden.clone())
            .unwrap_or_default(),
        samples: None,
    };
    if let [(verdict, score)] = runs.as_slice() {
        return side(verdict.is_ok(), *score, verdict.clone().err());
    }
    let decided = crate::run::Decided::of(
        config.run.pass,
        runs.iter().map(|(verdict, score)| (verdict, *score)),
    );
    let scores: Vec<f64> = runs.iter().filter_map(|(_, score)| *score).collect();
    let failure = (!decided.passed)
        .then(|| format!("{}\n{}", decided.rule, decided.failures.unwrap_or_default()));
    Side {
        samples: Some(decided.rule),
        ..side(decided.passed, crate::repeat::mean(&scores), failure)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rubric_judge::RecordedVerdict;

    fn side(samples: &[&[(&str, bool)]]) -> Side {
        Side {
            passed: true,
            score: None,
            failure: None,
            responses: Vec::new(),
            recorded_at: None,
            samples: None,
            forbidden: vec!["Swears".into()],
            verdicts: samples
                .iter()
                .map(|verdicts| {
                    verdicts
                        .iter()
                        .enumerate()
                        .map(|(id, (statement, holds))| RecordedVerdict {
                            id,
                            statement: statement.to_string(),
                            holds: *holds,
                            reason: format!("{statement}: {holds}"),
                        })
                        .collect()
                })
                .collect(),
        }
    }

    /// A case of one sample shows its statements as before; a case of several shows each
    /// sample's under its own heading, committed -> pending.
    #[test]
    fn each_samples_statements_are_shown_before_and_after() {
        let one = Evaluated {
            committed: Some(side(&[&[("Greets", true)]])),
            new: Ok(side(&[&[("Greets", false)]])),
        };
        assert_eq!(
            one.verdicts(),
            "[0] \"Greets\": answer holds -> does not hold (changed), outcome passed -> failed\n    committed: Greets: true\n    pending:   Greets: false\n"
        );
        let three = Evaluated {
            committed: Some(side(&[&[("Greets", true)], &[("Greets", true)], &[]])),
            new: Ok(side(&[
                &[("Greets", true)],
                &[("Greets", false)],
                &[("Greets", true)],
            ])),
        };
        assert_eq!(
            three.verdicts(),
            "sample 1 of 3:\n  [0] \"Greets\": answer holds -> holds, outcome passed -> passed\n      committed: Greets: true\n      pending:   Greets: true\n\
             sample 2 of 3:\n  [0] \"Greets\": answer holds -> does not hold (changed), outcome passed -> failed\n      committed: Greets: true\n      pending:   Greets: false\n\
             sample 3 of 3:\n  [0] \"Greets\": answer not judged -> holds (changed), outcome none -> passed\n      pending:   Greets: true\n"
        );
        let none = Evaluated {
            committed: None,
            new: Ok(side(&[&[], &[]])),
        };
        assert_eq!(none.verdicts(), "");
        // A `must not` statement that does not hold passes.
        let forbidden = Evaluated {
            committed: Some(side(&[&[("Swears", true)]])),
            new: Ok(side(&[&[("Swears", false)]])),
        };
        assert_eq!(
            forbidden.verdicts(),
            "[0] must not: \"Swears\": answer holds -> does not hold (changed), outcome failed -> passed\n    committed: Swears: true\n    pending:   Swears: false\n"
        );
    }
}
