//! A case's entry: one line of its run's journal, what a test process writes when the case ends,
//! and what identifies the case across runs, machines and reports ([`CaseId`]).
//!
//! An entry's failure text is capped at [`TEXT_CAP`] bytes together and its input and output at
//! [`TEXT_CAP`] bytes of JSON each, so a 30 MB response never makes a 60 MB report.

pub use crate::recording::usage::CallEntry;
use crate::recording::usage::UsageTotals;
use crate::repeat::Samples;
use crate::run::{cap_text, CaseResult, RecordingUse, VerdictEntry, TEXT_CAP};
use crate::suite::{LoadedCase, Suite};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::path::PathBuf;

/// What identifies a case across runs, machines and reports: the package and test binary that
/// ran it, its suite folder (crate-relative) and its case path (the fixture's path in the suite,
/// without `.json`). The fold keeps one result per id, `compare` pairs cases by it, and the page
/// links to a case by its [`text`](CaseId::text): two suites whose folders share a last name
/// (`fixtures/eu/payments`, `fixtures/us/payments`) make two cases, whatever their test names.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CaseId<'a> {
    /// The package of the test binary.
    pub package: Cow<'a, str>,
    /// The test binary.
    pub binary: Cow<'a, str>,
    /// The suite folder, crate-relative.
    pub suite_dir: Cow<'a, str>,
    /// The case path.
    pub case: Cow<'a, str>,
}

impl<'a> CaseId<'a> {
    /// The id of these parts, borrowed.
    pub fn new(package: &'a str, binary: &'a str, suite_dir: &'a str, case: &'a str) -> Self {
        CaseId {
            package: package.into(),
            binary: binary.into(),
            suite_dir: suite_dir.into(),
            case: case.into(),
        }
    }

    /// `package/binary/suite_dir//case`: the id as the page's links (`#case=`) and `compare`'s
    /// JSON write it. Neither a package nor a binary name holds a `/`, and a folder path holds
    /// no `//`, so [`CaseId::parse`] reads it back.
    pub fn text(&self) -> String {
        format!(
            "{}/{}/{}//{}",
            self.package, self.binary, self.suite_dir, self.case
        )
    }

    /// The id a [`text`](CaseId::text) was made from; `None` for other text.
    pub fn parse(text: &'a str) -> Option<CaseId<'a>> {
        let (package, rest) = text.split_once('/')?;
        let (binary, rest) = rest.split_once('/')?;
        let split = 1 + rest.get(1..)?.find("//")?;
        Some(CaseId::new(
            package,
            binary,
            &rest[..split],
            &rest[split + 2..],
        ))
    }

    /// The fold's key: the four parts joined by NULs, which sort before every other character,
    /// so keys sort as ids do.
    pub(super) fn key_into(&self, out: &mut String) {
        out.clear();
        for (i, part) in [&self.package, &self.binary, &self.suite_dir, &self.case]
            .into_iter()
            .enumerate()
        {
            if i > 0 {
                out.push('\0');
            }
            out.push_str(part);
        }
    }
}

/// One evaluator's result in an entry.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EvaluatorEntry {
    /// `strict`, `field_accuracy`, or `code_judge:<name>`.
    pub evaluator: String,
    /// 0 to 1.
    pub score: f64,
    /// Whether it passed.
    pub passed: bool,
    /// One line: why this score.
    pub summary: String,
    /// One line per mismatch or miss; absent when there is none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub misses: Vec<String>,
    /// Field-accuracy fields and whether each was a hit; absent for the other evaluators.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<FieldEntry>,
    /// The failure body (mismatches and diff), uncoloured; absent when passed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub rendered: String,
    /// The rubric judge's statements with their verdicts (the `rubric` evaluator); absent for
    /// the others.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verdicts: Vec<VerdictEntry>,
    /// The trajectory evaluator's alignment: `[{"step", "call", "status", "mismatches"}]`, one
    /// row per expected step (`step` as the fixture has it; `call` an index into the entry's
    /// `trajectory` or `null`; `status` `matched`, `mismatched` or `missing`), then one per call
    /// the mode does not allow (`unexpected`) or of a forbidden tool (`forbidden`), with a
    /// `null` step. Absent for the other evaluators.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<Vec<AlignmentRow>>"))]
    pub alignment: Option<serde_json::Value>,
}

/// One row of a trajectory alignment, for the report's schema (entries hold it as JSON).
#[cfg(feature = "schema")]
#[derive(schemars::JsonSchema)]
#[allow(dead_code)]
struct AlignmentRow {
    /// The expected step (`{"tool", "args"}`), `null` for an unexpected or forbidden call.
    step: Option<serde_json::Value>,
    /// The call's index in the entry's `trajectory`, `null` for a missing step.
    call: Option<usize>,
    /// `matched`, `mismatched`, `missing`, `unexpected` or `forbidden`.
    status: String,
    /// Why the step's closest call does not match it.
    mismatches: Vec<String>,
}

/// One field of a field-accuracy verdict.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FieldEntry {
    /// The field's path.
    pub path: String,
    /// Whether it matched.
    pub hit: bool,
}

/// One case's result, as a line of its run's journal holds it.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// The package of the test binary (`CARGO_PKG_NAME`).
    pub package: String,
    /// The test binary (`evals` for `tests/evals.rs`).
    pub binary: String,
    /// The suite's name.
    pub suite: String,
    /// The suite folder, crate-relative.
    pub suite_dir: String,
    /// The case path (fixture path relative to the suite, without `.json`).
    pub case: String,
    /// The test name.
    pub test: String,
    /// The fixture file, absolute: an entry whose fixture is gone is dropped.
    pub fixture: PathBuf,
    /// The fixture's description; absent when it has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether the case passed.
    pub passed: bool,
    /// The mean of the evaluators' scores; `None` when no evaluator ran.
    pub score: Option<f64>,
    /// How the recording was used.
    pub recording: RecordingUse,
    /// Every evaluator that ran.
    pub evaluators: Vec<EvaluatorEntry>,
    /// The failure message, uncoloured; absent when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// The case's model calls: tokens, recorded latency, estimated cost; `None` when it made
    /// none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<UsageTotals>,
    /// The tool calls the model asked for (and the code noted), in order; absent when there
    /// were none and the case expects no trajectory. A failing trajectory's alignment is its
    /// evaluator's `rendered` text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trajectory: Option<Vec<crate::trajectory::ToolCall>>,
    /// A repeated case's samples (`score` is then their mean); absent for one sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<Samples>,
    /// The fixture's input as the code received it; over 64 KiB of JSON, a string of its first
    /// 64 KiB and `… N bytes left out`. A journal refers to it by `input_sha256` instead, and
    /// the page holds it here, read from the fixture.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<serde_json::Value>,
    /// In a journal, in place of `input`: the lowercase hex SHA-256 of the fixture file's bytes
    /// as the run read them (CRLF read as LF, as recordings hash their sources). The code under
    /// test received the fixture's `input` unchanged, so a reader shows that input from the file
    /// while the file still has this hash, and `input_missing` when it does not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_sha256: Option<String>,
    /// Where a reader could not show the input an entry referred to by `input_sha256`: why, in
    /// words (`fixtures/x.json changed since this run; …`). Never written in journals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_missing: Option<String>,
    /// What the code returned (the shown sample's, for a repeated case), capped as `input` is;
    /// absent when it failed before returning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<serde_json::Value>,
    /// In a journal, in place of `output`: the output was the fixture's `expected`, to the
    /// last number (the fixture's hash, `input_sha256`, stands for both). A reader shows it
    /// from the fixture as it shows the input. Never written with `output`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub output_is_expected: bool,
    /// Where a reader could not show the output an entry referred to by `output_is_expected`:
    /// why, in words, as `input_missing`. Never written in journals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_missing: Option<String>,
    /// Each model call of the case, in order, the judge's last.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<CallEntry>,
    /// In `results.jsonl`, `report.json` and a page that left it out: where the case's story
    /// (`input`, `output`, `calls`) is, in place of it. Never written in journals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub story: Option<StoryRef>,
    /// The case's recording file (its pending one under `RECORD=review`), relative to the
    /// workspace root, `/`-separated; absent when it has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recording_path: Option<String>,
    /// The run the case ran in: one `cargo test` (its test binaries share the cargo process) or
    /// one `cargo nextest run`. `None` in entries written before runs were recorded. Written
    /// right before `finished_at`, where the end-of-run index reads it without parsing the line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// When the case finished.
    pub finished_at: DateTime<Utc>,
    /// In a report: the result is from a run older than the report's latest run (its target or
    /// case did not run in the latest one). Never written in journals.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub older: bool,
}

/// Where a case's story (`input`, `output`, `calls`) is: the bytes of its run's journal that
/// hold it, written once, when the case ended.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoryRef {
    /// The journal: relative to the report folder (`runs/<run>/journal.jsonl`), or absolute
    /// (another machine's, in a merged report).
    pub journal: String,
    /// Where the story's bytes begin in it.
    pub offset: u64,
    /// How many bytes it is.
    pub length: u64,
}

impl Entry {
    /// The case's id.
    pub fn id(&self) -> CaseId<'_> {
        CaseId::new(&self.package, &self.binary, &self.suite_dir, &self.case)
    }

    /// The entry of a case that just ran. Its failure text (`failure`, then each evaluator's
    /// `rendered` and `misses`) is capped at [`TEXT_CAP`] bytes together, and its output at
    /// [`TEXT_CAP`] bytes of JSON ([`capped_value`]). Its input is referred to by the hash of
    /// the fixture's bytes (`input_sha256`), not copied.
    ///
    /// What the entry holds of the case's story (output, calls, trajectory, samples, verdicts,
    /// alignment) is moved out of `result`, not copied: the caller keeps only what it prints.
    pub(crate) fn new(suite: &Suite, loaded: &mut LoadedCase, result: &mut CaseResult) -> Entry {
        let mut budget = TEXT_CAP;
        let failure = result
            .failure
            .as_deref()
            .map(|f| spend(&mut budget, &strip_ansi(f)));
        let evaluators: Vec<EvaluatorEntry> = result
            .evaluators
            .iter_mut()
            .map(|e| EvaluatorEntry {
                evaluator: e.evaluator.clone(),
                score: e.score,
                passed: e.passed,
                summary: strip_ansi(&e.summary),
                rendered: spend(&mut budget, &strip_ansi(&e.rendered)),
                misses: spend_lines(&mut budget, &e.misses),
                fields: e
                    .fields
                    .iter()
                    .map(|(path, hit)| FieldEntry {
                        path: path.clone(),
                        hit: *hit,
                    })
                    .collect(),
                verdicts: std::mem::take(&mut e.verdicts),
                alignment: e.alignment.take(),
            })
            .collect();
        let score = match &result.samples {
            Some(samples) => samples.mean_score,
            None if evaluators.is_empty() => None,
            None => Some(evaluators.iter().map(|e| e.score).sum::<f64>() / evaluators.len() as f64),
        };
        // The code under test got the fixture's `input` as it was parsed (`run_case` moves it
        // into the `Case` and back), so the hash of the fixture's bytes names it: the journal
        // does not copy it. A fixture that did not parse leaves no input.
        let input_sha256 = loaded
            .file
            .is_ok()
            .then(|| loaded.source().sha256.clone())
            .filter(|hash| !hash.is_empty());
        // An output that is the fixture's `expected` (a passing strict case, most of a suite)
        // is referred to by the same hash: the journal does not copy it either.
        let mut output = result.output.take();
        let output_is_expected = input_sha256.is_some()
            && output.is_some()
            && output.as_ref() == loaded.file.as_ref().ok().and_then(|f| f.expected.as_ref());
        if output_is_expected {
            output = None;
        }
        let input = match input_sha256 {
            Some(_) => None,
            None => loaded
                .file
                .as_mut()
                .ok()
                .map(|f| capped_value(std::mem::take(&mut f.input))),
        };
        Entry {
            package: crate::env::package_name().unwrap_or("unknown").to_string(),
            binary: crate::env::test_binary().unwrap_or("unknown").to_string(),
            suite: suite.name.clone(),
            suite_dir: suite.relative(&suite.dir),
            case: loaded.path.case_path().to_string(),
            test: result.name.clone(),
            fixture: loaded.path.absolute.clone(),
            description: loaded
                .file
                .as_ref()
                .ok()
                .and_then(|f| f.description.clone()),
            passed: result.passed,
            score,
            recording: result.recording,
            evaluators,
            failure,
            run: crate::env::run_id().map(str::to_string),
            usage: result.usage.clone(),
            trajectory: result.trajectory.take(),
            samples: result.samples.take(),
            input,
            input_sha256,
            input_missing: None,
            output: output.map(capped_value),
            output_is_expected,
            output_missing: None,
            calls: std::mem::take(&mut result.calls),
            recording_path: result.recording_path.clone(),
            finished_at: Utc::now(),
            older: false,
            story: None,
        }
    }
}

/// `text` within what is left of a case's failure-text `budget` (see [`cap_text`]), which it
/// then uses up.
pub(super) fn spend(budget: &mut usize, text: &str) -> String {
    let kept = cap_text(text, *budget).into_owned();
    *budget = budget.saturating_sub(text.len());
    kept
}

/// Miss lines within what is left of the `budget`: whole lines while they fit, then the line
/// that does not, cut, and the bytes of the lines after it counted in its `… N bytes left out`.
pub(super) fn spend_lines(budget: &mut usize, lines: &[String]) -> Vec<String> {
    let mut kept = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let line = strip_ansi(line);
        if line.len() <= *budget {
            *budget -= line.len();
            kept.push(line);
            continue;
        }
        let rest: usize = lines[i + 1..].iter().map(String::len).sum();
        let mut end = *budget;
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        kept.push(format!(
            "{}\n… {} bytes left out",
            &line[..end],
            line.len() - end + rest
        ));
        *budget = 0;
        break;
    }
    kept
}

/// `value` as an entry holds a case's input or output: itself when its JSON text is at most
/// [`TEXT_CAP`] bytes, else a string of that text's first [`TEXT_CAP`] bytes and
/// `\n… N bytes left out`.
pub(crate) fn capped_value(value: serde_json::Value) -> serde_json::Value {
    /// Keeps the first `TEXT_CAP + 1` bytes written and counts them all.
    struct Head {
        kept: Vec<u8>,
        total: usize,
    }
    impl std::io::Write for Head {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let room = (TEXT_CAP + 1).saturating_sub(self.kept.len());
            self.kept.extend_from_slice(&buf[..buf.len().min(room)]);
            self.total += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    // Most values are far below the cap: a bound of their length says so without writing them.
    if json_len_bound(&value, TEXT_CAP) <= TEXT_CAP {
        return value;
    }
    let mut head = Head {
        kept: Vec::new(),
        total: 0,
    };
    if serde_json::to_writer(&mut head, &value).is_err() || head.total <= TEXT_CAP {
        return value;
    }
    let mut end = TEXT_CAP;
    while end > 0 && (head.kept[end] & 0xC0) == 0x80 {
        end -= 1;
    }
    let text = String::from_utf8_lossy(&head.kept[..end]);
    serde_json::Value::String(format!("{text}\n… {} bytes left out", head.total - end))
}

/// A bound of the length of `value`'s JSON text as serde_json writes it, found without writing
/// it: every byte of a string as if escaped (`\u00XX`), every number as 24 bytes (the longest
/// f64 or i64 serde_json writes is shorter). Past `limit` it stops counting: the answer is then
/// only known to be over `limit`.
pub(super) fn json_len_bound(value: &serde_json::Value, limit: usize) -> usize {
    use serde_json::Value;
    match value {
        Value::Null | Value::Bool(_) => 5,
        Value::Number(_) => 24,
        Value::String(s) => 2 + 6 * s.len(),
        Value::Array(items) => {
            let mut len = 2;
            for item in items {
                len += 1 + json_len_bound(item, limit);
                if len > limit {
                    break;
                }
            }
            len
        }
        Value::Object(map) => {
            let mut len = 2;
            for (key, item) in map {
                len += 4 + 6 * key.len() + json_len_bound(item, limit);
                if len > limit {
                    break;
                }
            }
            len
        }
    }
}

/// Removes ANSI colour sequences (`ESC [ … letter`).
pub(super) fn strip_ansi(text: &str) -> String {
    if !text.contains('\u{1b}') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            chars.next();
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}
