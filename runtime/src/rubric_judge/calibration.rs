//! Calibration: how the recorded verdicts agree with human labels (`<suite>/judge-labels.jsonl`),
//! and whether that is enough for rubric failures to fail tests (`[judge] min_agreement`,
//! `min_labels`).
//!
//! A label is one line: `{"case": "drafts/eval_sugg_abc123", "statement": "...", "holds": true}`
//! (`case`: the fixture's path in the suite without `.json`; `statement`: its whole text). It is
//! matched with the verdict on the same statement text in that case's recording, whatever the
//! verdict's number; a label whose case has no recorded verdict on it is counted, not matched.
//! A case recorded with several samples (`repeat`) has one verdict per sample on each
//! statement: the label is matched with their majority, and a tie is no verdict.

use super::RubricJudgeConfig;
use crate::recording::Recording;
use proposal_eval_engine::rubric::{agreement, Agreement};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The labels file of a suite, in the suite folder.
pub const LABELS_FILE: &str = "judge-labels.jsonl";

/// One human label.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Label {
    /// Its line in the labels file, from 1.
    #[serde(skip)]
    pub line: usize,
    /// The case path (`drafts/eval_sugg_abc123`).
    pub case: String,
    /// The statement's whole text.
    pub statement: String,
    /// Whether the statement holds of the case's output, as the person judged.
    pub holds: bool,
}

crate::files::located_error! {
    /// A labels file that could not be read or understood, with the line.
    LabelsError
}

/// A label and the recorded verdict that disagrees with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Disagreement {
    /// The label.
    pub label: Label,
    /// The judge's reason for its verdict.
    pub reason: String,
}

/// The recorded verdicts against a suite's labels.
#[derive(Clone, Debug, PartialEq)]
pub struct Calibration {
    /// Labels in the file.
    pub labels: usize,
    /// Agreement over the labels that have a recorded verdict.
    pub agreement: Agreement,
    /// Every matched label the judge disagrees with, in the file's order.
    pub disagreements: Vec<Disagreement>,
    /// The labels with no recorded verdict on their statement, in the file's order (their case
    /// or statement may match nothing: [`unmatched`] tells).
    pub without_verdict: Vec<Label>,
}

/// A label whose case, or whose statement in its case, matches nothing in the suite.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unmatched {
    /// The label (with its line).
    pub label: Label,
    /// Whether its case exists (then its statement is none of the case's).
    pub case_exists: bool,
    /// The closest: the case's statement nearest to the label's (a case that exists), or the
    /// case path nearest to the label's (one that does not); `None` when there is none.
    pub closest: Option<String>,
}

/// Reads a labels file; `Ok(None)` when there is none. Blank lines are skipped.
pub fn read_labels(file: &Path) -> Result<Option<Vec<Label>>, LabelsError> {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(LabelsError {
                file: file.to_path_buf(),
                line: 0,
                column: 0,
                message: format!("cannot read: {e}"),
            })
        }
    };
    let mut labels = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let mut label = serde_json::from_slice::<Label>(line.as_bytes()).map_err(|e| {
            // The place is the file's line and the column; serde's own "at line 1 column C"
            // would be a second, different one.
            let said = e.to_string();
            let said = said.rfind(" at line ").map_or(&*said, |at| &said[..at]);
            let key = crate::messages::json_path_at(line, 1, e.column());
            LabelsError {
                file: file.to_path_buf(),
                line: n + 1,
                column: e.column(),
                message: format!(
                    "{}; a label is {{\"case\": \"<fixture path without .json>\", \"statement\": \"<its whole text>\", \"holds\": true}}",
                    crate::messages::in_words(said, &key, crate::messages::Syntax::Json)
                ),
            }
        })?;
        label.line = n + 1;
        labels.push(label);
    }
    Ok(Some(labels))
}

/// The recorded verdicts of the suite in `dir` (recordings in `recordings`) against its labels;
/// `Ok(None)` when it has no labels file.
pub fn calibrate(dir: &Path, recordings: &Path) -> Result<Option<Calibration>, LabelsError> {
    let Some(labels) = read_labels(&dir.join(LABELS_FILE))? else {
        return Ok(None);
    };
    // Each labelled case's verdicts by statement text, read once.
    let mut verdicts: BTreeMap<&str, BTreeMap<String, (bool, String)>> = BTreeMap::new();
    let mut pairs = Vec::new();
    let mut disagreements = Vec::new();
    let mut without_verdict = Vec::new();
    for label in &labels {
        let of_case = verdicts.entry(label.case.as_str()).or_insert_with(|| {
            let file = recordings.join(format!("{}.json", label.case));
            Recording::read(&file)
                .ok()
                .flatten()
                .map(|r| recorded_verdicts(&r))
                .unwrap_or_default()
        });
        match of_case.get(&label.statement) {
            Some((holds, reason)) => {
                pairs.push((*holds, label.holds));
                if *holds != label.holds {
                    disagreements.push(Disagreement {
                        label: label.clone(),
                        reason: reason.clone(),
                    });
                }
            }
            None => without_verdict.push(label.clone()),
        }
    }
    Ok(Some(Calibration {
        labels: labels.len(),
        agreement: agreement(&pairs),
        disagreements,
        without_verdict,
    }))
}

/// The rubric statements of each case of the suite in `dir` (recordings in `recordings`) that
/// has a rubric, by case path; a fixture that does not read is left out.
pub fn rubric_statements(dir: &Path, recordings: &Path) -> BTreeMap<String, Vec<String>> {
    let Ok(fixtures) = crate::suite::fixture::discover(dir, recordings) else {
        return BTreeMap::new();
    };
    fixtures
        .iter()
        .filter_map(|path| {
            let bytes = std::fs::read(&path.absolute).ok()?;
            let fixture = crate::suite::fixture::FixtureFile::parse(&bytes, &path.absolute).ok()?;
            let rubric = fixture.rubric().filter(|r| !r.is_empty())?;
            let statements = rubric.required.iter().chain(&rubric.forbidden).cloned();
            Some((path.case_path().to_string(), statements.collect()))
        })
        .collect()
}

/// The labels of `labels` whose case is not one of `statements`' (a case with a rubric), or
/// whose statement is none of its case's, each with the closest statement of its case (or the
/// closest case), in the file's order.
pub fn unmatched(labels: &[Label], statements: &BTreeMap<String, Vec<String>>) -> Vec<Unmatched> {
    labels
        .iter()
        .filter_map(|label| match statements.get(&label.case) {
            Some(of_case) if of_case.contains(&label.statement) => None,
            Some(of_case) => Some(Unmatched {
                label: label.clone(),
                case_exists: true,
                closest: closest(&label.statement, of_case.iter()),
            }),
            None => Some(Unmatched {
                label: label.clone(),
                case_exists: false,
                closest: closest(&label.case, statements.keys()),
            }),
        })
        .collect()
}

/// The text of `candidates` nearest to `text` (Levenshtein distance over characters; the first
/// of equals).
fn closest<'a>(text: &str, candidates: impl Iterator<Item = &'a String>) -> Option<String> {
    candidates
        .min_by_key(|c| proposal_eval_engine::fuzzy::levenshtein(text, c))
        .cloned()
}

/// Each statement's recorded verdict in `recording`, by its text, with the judge's reason. In a
/// recording of several samples (`repeat`), the majority over the samples that judged the
/// statement, with the reason of the first sample of that verdict (named); a tie is no verdict.
fn recorded_verdicts(recording: &Recording) -> BTreeMap<String, (bool, String)> {
    let count = recording.samples.len();
    let mut votes: BTreeMap<&str, Vec<(usize, bool, &str)>> = BTreeMap::new();
    for k in 0..count {
        for v in recording.judgement(k).into_iter().flat_map(|j| &j.verdicts) {
            votes
                .entry(&v.statement)
                .or_default()
                .push((k, v.holds, &v.reason));
        }
    }
    votes
        .into_iter()
        .filter_map(|(statement, votes)| {
            let holding = votes.iter().filter(|(_, holds, _)| *holds).count();
            let holds = match (2 * holding).cmp(&votes.len()) {
                std::cmp::Ordering::Greater => true,
                std::cmp::Ordering::Less => false,
                std::cmp::Ordering::Equal => return None,
            };
            let (k, _, reason) = votes.iter().find(|(_, h, _)| *h == holds)?;
            let reason = match count {
                1 => reason.to_string(),
                _ => format!("sample {} of {count}: {reason}", k + 1),
            };
            Some((statement.to_string(), (holds, reason)))
        })
        .collect()
}

/// Why a failing rubric of `suite` does not fail its test (the judge is below `[judge]
/// min_agreement` on the suite's labels); `None` when it fails it. Read once per process, and
/// only when a rubric fails.
pub(crate) fn suite_advisory(suite: &crate::suite::Suite) -> &Option<String> {
    suite.judge_advisory.get_or_init(|| {
        let Ok(config) = suite.config() else {
            return None;
        };
        config.judge.min_agreement?;
        let calibration = calibrate(&suite.dir, &suite.recordings).map_err(|mut e| {
            e.file = suite.relative(&e.file).into();
            e
        });
        advisory(&config.judge, &calibration)
            .map(|why| why.replace("<suite>/", &format!("{}/", suite.relative(&suite.dir))))
    })
}

/// Whether rubric failures fail tests: `None` when they do, else why they are advisory.
pub fn advisory(
    config: &RubricJudgeConfig,
    calibration: &Result<Option<Calibration>, LabelsError>,
) -> Option<String> {
    let min = config.min_agreement?;
    let labels = format!("label the judge's verdicts in <suite>/{LABELS_FILE}; `cargo proposal-eval judge` shows the agreement");
    let calibration = match calibration {
        Err(e) => return Some(format!("the judge's labels cannot be read: {e}")),
        Ok(None) => {
            return Some(format!(
                "the judge is not calibrated: there is no {LABELS_FILE} and [judge] min_agreement = {min}; {labels}"
            ))
        }
        Ok(Some(c)) => c,
    };
    let a = &calibration.agreement;
    if a.matched < config.min_labels {
        return Some(format!(
            "the judge is calibrated on {} label(s) with a recorded verdict, fewer than [judge] min_labels = {}; {labels}",
            a.matched, config.min_labels
        ));
    }
    if a.kappa < min {
        return Some(format!(
            "the judge agrees with the human labels at Cohen's kappa {:.2} on {} label(s), below [judge] min_agreement = {min}; {labels}",
            a.kappa, a.matched
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_label_names_its_line_and_the_shape() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(LABELS_FILE);
        std::fs::write(&file, "{\"case\": \"a\", \"statement\": \"s\", \"holds\": true}\n\n{\"case\": \"a\", \"holds\": \"yes\"}\n").unwrap();
        let err = read_labels(&file).unwrap_err();
        assert_eq!(err.line, 3, "{err}");
        assert!(err.message.contains("a label is {\"case\""), "{err}");
        assert_eq!(read_labels(&dir.path().join("none.jsonl")).unwrap(), None);
    }

    /// A recording of several samples: each statement's verdict is the samples' majority, with
    /// the reason of the first sample of that verdict, named; a tie is no verdict. A recording
    /// of one sample gives its verdicts as they are.
    #[test]
    fn a_repeated_case_is_matched_by_the_majority_of_its_samples() {
        use crate::recording::judgement::{Judgement, KeyParts, RecordedVerdict};
        use crate::recording::{Recording, Sample};
        let at = "2025-01-15T10:00:00Z".parse().unwrap();
        let judgement = |verdicts: &[(&str, bool)]| Judgement {
            key_sha256: "1".repeat(64),
            // What `KeyParts::for_tests('2', "judge-1")` gives in the recording crate's tests.
            parts: KeyParts {
                rubric_sha256: "1".repeat(64),
                output_sha256: "2".repeat(64),
                input_sha256: "3".repeat(64),
                trajectory_sha256: None,
                prompt_sha256: "4".repeat(64),
                model: "judge-1".into(),
                temperature: 0.0,
                samples: 1,
            },
            recorded_at: at,
            calls: Vec::new(),
            verdicts: verdicts
                .iter()
                .enumerate()
                .map(|(id, (statement, holds))| RecordedVerdict {
                    id,
                    statement: statement.to_string(),
                    holds: *holds,
                    reason: format!("says {holds}"),
                })
                .collect(),
        };
        let recording = |samples: usize| Recording {
            format: 4,
            case: "a".into(),
            recorded_at: at,
            sources: Vec::new(),
            input_sha256: Some("5".repeat(64)),
            input: None,
            samples: vec![Sample::default(); samples],
            judge: None,
        };
        let mut three = recording(3);
        three.set_judgement(0, judgement(&[("A", false), ("B", true)]));
        three.set_judgement(1, judgement(&[("A", true), ("B", true)]));
        three.set_judgement(2, judgement(&[("A", true), ("B", false)]));
        let verdicts = recorded_verdicts(&three);
        assert_eq!(
            verdicts["A"],
            (true, "sample 2 of 3: says true".to_string())
        );
        assert_eq!(
            verdicts["B"],
            (true, "sample 1 of 3: says true".to_string())
        );
        let mut two = recording(2);
        two.set_judgement(0, judgement(&[("A", false)]));
        two.set_judgement(1, judgement(&[("A", true)]));
        assert_eq!(
            recorded_verdicts(&two).get("A"),
            None,
            "a tie is no verdict"
        );
        let mut one = recording(1);
        one.set_judgement(0, judgement(&[("A", false)]));
        assert_eq!(
            recorded_verdicts(&one)["A"],
            (false, "says false".to_string())
        );
    }

    /// A mistyped case and a mistyped statement are named by their lines, each with the closest
    /// case or statement; a label that matches is not.
    #[test]
    fn labels_that_match_nothing_are_named_with_the_closest() {
        let statements: BTreeMap<String, Vec<String>> = [(
            "drafts/eval_a".to_string(),
            vec![
                "Recommends one laptop".to_string(),
                "Recommends a discontinued SKU".to_string(),
            ],
        )]
        .into_iter()
        .collect();
        let label = |line, case: &str, statement: &str| Label {
            line,
            case: case.into(),
            statement: statement.into(),
            holds: true,
        };
        let labels = [
            label(1, "drafts/eval_a", "Recommends one laptop"),
            label(2, "drafts/eval_b", "Recommends one laptop"),
            label(3, "drafts/eval_a", "Recommends a discontinued SKUs"),
        ];
        let found = unmatched(&labels, &statements);
        assert_eq!(
            found,
            vec![
                Unmatched {
                    label: labels[1].clone(),
                    case_exists: false,
                    closest: Some("drafts/eval_a".into()),
                },
                Unmatched {
                    label: labels[2].clone(),
                    case_exists: true,
                    closest: Some("Recommends a discontinued SKU".into()),
                },
            ]
        );
    }

    #[test]
    fn the_bar_is_min_labels_then_min_agreement() {
        let calibrated = |matched, kappa| {
            Ok(Some(Calibration {
                labels: matched,
                agreement: Agreement {
                    matched,
                    percent: 1.0,
                    kappa,
                },
                disagreements: Vec::new(),
                without_verdict: Vec::new(),
            }))
        };
        let mut config = RubricJudgeConfig::default();
        assert_eq!(advisory(&config, &calibrated(0, 0.0)), None);
        config.min_agreement = Some(0.8);
        config.min_labels = 4;
        let few = advisory(&config, &calibrated(3, 1.0)).unwrap();
        assert!(
            few.contains("3 label(s) with a recorded verdict, fewer than [judge] min_labels = 4"),
            "{few}"
        );
        let low = advisory(&config, &calibrated(4, 0.5)).unwrap();
        assert!(
            low.contains("Cohen's kappa 0.50 on 4 label(s), below [judge] min_agreement = 0.8"),
            "{low}"
        );
        assert_eq!(advisory(&config, &calibrated(4, 0.8)), None);
        assert!(advisory(&config, &Ok(None))
            .unwrap()
            .contains("not calibrated"));
    }
}
