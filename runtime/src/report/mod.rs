//! Run reports: `target/proposal-eval/report.json` and a self-contained `report.html` beside it.
//!
//! Every test process appends one JSON line per case to its run's journal,
//! `runs/<run-id>.jsonl` (the `journal` module): one `write` per case under an OS lock on the file, no
//! temp files, no fsync (a report is derived data). A line cut off by a kill is skipped by the
//! reader, which names its file and line, and never glued to the next one.
//!
//! The fold ([`fold()`], in `fold`) takes the journals up into `results.jsonl`, the standing
//! result of every case, and writes `report.json` and `report.html` from it:
//!
//! - at the end of a [`Harness`](crate::Harness) run, and when a `#[proposal_eval]` test binary
//!   exits (an `atexit` hook registered by its first case), when the process ran its whole
//!   target ([`finish`]); a process that ran a part (a filter, each nextest process) only
//!   appends;
//! - always by `cargo proposal-eval report`.

mod aggregate;
pub mod compare;
pub mod confidence;
mod fold;
mod journal;
pub mod junit;
pub mod merge;
pub mod page;

use crate::layout::report_dir;
#[cfg(test)]
use crate::layout::safe;
pub use crate::recording::usage::CallEntry;
use crate::recording::usage::UsageTotals;
pub use crate::repeat::{RepeatSummary, Samples};
use crate::run::cap_text;
use crate::run::CaseResult;
pub use crate::run::{RecordingUse, VerdictEntry, TEXT_CAP};
use crate::suite::{LoadedCase, Suite};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The report format this version writes.
pub const FORMAT: u32 = 1;

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
    /// One line per mismatch or miss.
    #[serde(default)]
    pub misses: Vec<String>,
    /// Field-accuracy fields and whether each was a hit.
    #[serde(default)]
    pub fields: Vec<FieldEntry>,
    /// The failure body (mismatches and diff), uncoloured; empty when passed.
    #[serde(default)]
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
    /// The fixture's description.
    #[serde(default)]
    pub description: Option<String>,
    /// Whether the case passed.
    pub passed: bool,
    /// The mean of the evaluators' scores; `None` when no evaluator ran.
    pub score: Option<f64>,
    /// How the recording was used.
    pub recording: RecordingUse,
    /// Every evaluator that ran.
    pub evaluators: Vec<EvaluatorEntry>,
    /// The failure message, uncoloured.
    #[serde(default)]
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
    /// 64 KiB and `… N bytes left out`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<serde_json::Value>,
    /// What the code returned (the shown sample's, for a repeated case), capped as `input` is;
    /// absent when it failed before returning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<serde_json::Value>,
    /// Each model call of the case, in order, the judge's last.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<CallEntry>,
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
    /// In `report.html`'s embedded copy only: the case's `input`, `output` and `calls` are left
    /// out, the page having embedded as many stories as it holds (failing cases' first); they
    /// are in `report.json` and `results.jsonl`. Never written in journals or `report.json`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub story_left_out: bool,
}

impl Entry {
    /// The entry of a case that just ran. Its failure text (`failure`, then each evaluator's
    /// `rendered` and `misses`) is capped at [`TEXT_CAP`] bytes together, and its input and
    /// output at [`TEXT_CAP`] bytes of JSON each ([`capped_value`]).
    ///
    /// What the entry holds of the case's story (input, output, calls, trajectory, samples,
    /// verdicts, alignment) is moved out of `loaded` and `result`, not copied: the caller keeps
    /// only what it prints.
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
            input: loaded
                .file
                .as_mut()
                .ok()
                .map(|f| capped_value(std::mem::take(&mut f.input))),
            output: result.output.take().map(capped_value),
            calls: std::mem::take(&mut result.calls),
            recording_path: result.recording_path.clone(),
            finished_at: Utc::now(),
            older: false,
            story_left_out: false,
        }
    }
}

/// `text` within what is left of a case's failure-text `budget` (see [`cap_text`]), which it
/// then uses up.
fn spend(budget: &mut usize, text: &str) -> String {
    let kept = cap_text(text, *budget).into_owned();
    *budget = budget.saturating_sub(text.len());
    kept
}

/// Miss lines within what is left of the `budget`: whole lines while they fit, then the line
/// that does not, cut, and the bytes of the lines after it counted in its `… N bytes left out`.
fn spend_lines(budget: &mut usize, lines: &[String]) -> Vec<String> {
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
fn json_len_bound(value: &serde_json::Value, limit: usize) -> usize {
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
fn strip_ansi(text: &str) -> String {
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

/// The repeated cases this process ran, for the summary it prints at its end (none without
/// repeats), and whether it wrote an entry.
static RAN: Mutex<(bool, Vec<Entry>)> = Mutex::new((false, Vec::new()));

/// Appends one case's entry to the run's journal. Failing to write a report never fails a test.
pub(crate) fn record(suite: &Suite, loaded: &mut LoadedCase, result: &mut CaseResult) {
    let entry = Entry::new(suite, loaded, result);
    let Ok(mut line) = serde_json::to_string(&entry) else {
        return;
    };
    line.push('\n');
    let written = journal::append(&report_dir(), &line);
    let mut ran = RAN.lock().unwrap_or_else(|p| p.into_inner());
    ran.0 |= written.is_ok();
    if entry.samples.is_some() {
        ran.1.push(entry);
    }
}

/// What a finishing test process ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scope {
    /// Every test of its target (no filter): its results replace the target's.
    Whole,
    /// Some tests (a filter, `--exact`, `--skip`, `--ignored`, one nextest process).
    Part,
}

impl Scope {
    /// The scope of a libtest command line (`args` without the program name): a positional
    /// filter, `--skip` or `--ignored` selects a part; `--include-ignored` runs more, not less.
    pub(crate) fn of_args<I: IntoIterator<Item = String>>(args: I) -> Scope {
        // libtest's options that take a value as the next argument.
        const VALUED: [&str; 6] = [
            "--test-threads",
            "--format",
            "--color",
            "--logfile",
            "--shuffle-seed",
            "-Z",
        ];
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            if arg == "--skip" || arg == "--ignored" || arg.starts_with("--skip=") {
                return Scope::Part;
            }
            if VALUED.contains(&arg.as_str()) {
                args.next();
            } else if !arg.starts_with('-') {
                return Scope::Part;
            }
        }
        Scope::Whole
    }
}

/// Whether each test target seen in the entries still exists, asked once per target.
#[derive(Default)]
struct Targets {
    /// By crate root and binary.
    gone: std::collections::HashMap<(PathBuf, String), bool>,
    /// The last suite asked about (package, binary, suite folder, fixture folder) and its
    /// answer: cases come suite by suite, so most are answered without a path made.
    last: Option<(String, String, String, PathBuf, bool)>,
}

impl Targets {
    /// Whether `entry`'s test target is gone from its crate. A target whose crate cannot be
    /// read off the entry is taken to exist.
    fn gone(&mut self, entry: &aggregate::Counted) -> bool {
        let folder = Path::new(&*entry.fixture).parent().unwrap_or(Path::new(""));
        if let Some((package, binary, suite_dir, last_folder, gone)) = &self.last {
            if (
                package.as_str(),
                binary.as_str(),
                suite_dir.as_str(),
                last_folder.as_path(),
            ) == (&entry.package, &entry.binary, &entry.suite_dir, folder)
            {
                return *gone;
            }
        }
        let gone = match crate_root_of(&entry.fixture, &entry.suite_dir, &entry.case) {
            None => false,
            Some(root) => {
                let key = (root, entry.binary.to_string());
                match self.gone.get(&key) {
                    Some(gone) => *gone,
                    None => {
                        let gone = !target_exists(&key.0, &entry.package, &entry.binary);
                        self.gone.insert(key, gone);
                        gone
                    }
                }
            }
        };
        self.last = Some((
            entry.package.to_string(),
            entry.binary.to_string(),
            entry.suite_dir.to_string(),
            folder.to_path_buf(),
            gone,
        ));
        gone
    }
}

/// The crate root an entry's fixture path was made from (`<root>/<suite_dir>/<case>.json`).
fn crate_root_of(fixture: &str, suite_dir: &str, case: &str) -> Option<PathBuf> {
    let suite_dir = suite_dir.trim_start_matches("./");
    let tail = match suite_dir {
        "" | "." => PathBuf::from(format!("{case}.json")),
        dir => Path::new(dir).join(format!("{case}.json")),
    };
    let plain = tail
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)));
    let fixture = Path::new(fixture);
    if !plain || !fixture.ends_with(&tail) {
        return None;
    }
    let mut root = fixture.to_path_buf();
    for _ in tail.components() {
        root.pop();
    }
    Some(root)
}

/// Whether the crate at `root` still has a test target named `binary`: the lib or main binary
/// of `package`, `tests/<binary>.rs`, `tests/<binary>/main.rs`, another conventional target
/// file, or a target its manifest names.
fn target_exists(root: &Path, package: &str, binary: &str) -> bool {
    let Ok(manifest) = std::fs::read_to_string(root.join("Cargo.toml")) else {
        return false;
    };
    if binary == "unknown" || binary == package.replace('-', "_") || binary == package {
        return true;
    }
    let files = [
        format!("tests/{binary}.rs"),
        format!("tests/{binary}/main.rs"),
        format!("src/bin/{binary}.rs"),
        format!("src/bin/{binary}/main.rs"),
        format!("examples/{binary}.rs"),
        format!("benches/{binary}.rs"),
    ];
    files.iter().any(|f| root.join(f).is_file())
        || manifest.lines().any(|line| {
            let line: String = line.chars().filter(|c| !c.is_whitespace()).collect();
            line == format!("name=\"{binary}\"") || line == format!("name='{binary}'")
        })
}

/// What a test process does at its end: prints its repeated cases' summary and, when it ran
/// its whole target ([`Scope::of_args`] on its command line, the one rule for both front ends)
/// and wrote an entry, folds the journals into the report. A process that ran a part only
/// appended: the next fold (a whole run, `cargo proposal-eval report`) takes its lines up.
pub(crate) fn finish() {
    let (wrote, repeated) = {
        let mut ran = RAN.lock().unwrap_or_else(|p| p.into_inner());
        (ran.0, std::mem::take(&mut ran.1))
    };
    eprint!("{}", repeats_summary(repeated.iter()));
    if !wrote || Scope::of_args(std::env::args().skip(1)) == Scope::Part {
        return;
    }
    match fold::fold(&report_dir(), false) {
        Ok(report) => eprint!("{}", unreadable_summary(&report.unreadable_entries)),
        Err(e) => eprintln!("warning: the report was not written: {e}"),
    }
}

/// The entry lines a fold left out, as a run prints them at its end; empty when there is none.
pub fn unreadable_summary(unreadable: &[String]) -> String {
    if unreadable.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "warning: report entry lines that could not be read were left out of the report \
         (their cases show an earlier result or none; run them again to write their entries):\n",
    );
    for line in unreadable {
        let _ = writeln!(out, "  {line}");
    }
    out
}

/// Per suite of this run, its repeated cases summed up (pass@k, pass^k) and its flaky cases:
/// what a run prints at its end; empty when no case was repeated.
fn repeats_summary<'a>(entries: impl Iterator<Item = &'a Entry>) -> String {
    let mut suites: BTreeMap<&str, Vec<&Entry>> = BTreeMap::new();
    for entry in entries.filter(|e| e.samples.is_some()) {
        suites.entry(&entry.suite).or_default().push(entry);
    }
    let mut out = String::new();
    for (suite, entries) in suites {
        let Some(summary) = RepeatSummary::of(
            entries
                .iter()
                .filter_map(|e| Some((e.test.as_str(), e.samples.as_ref()?))),
        ) else {
            continue;
        };
        let _ = writeln!(out, "repeats in {suite}: {}", summary.describe());
        for entry in entries
            .iter()
            .filter(|e| e.samples.as_ref().is_some_and(Samples::flaky))
        {
            if let Some(samples) = &entry.samples {
                let verdict = if entry.passed { "passed" } else { "FAILED" };
                let _ = writeln!(
                    out,
                    "  flaky: {} ({verdict}, pass = {}): {}",
                    entry.test,
                    samples.pass,
                    samples.describe()
                );
            }
        }
    }
    out
}

/// Registers [`finish`] to run when the process exits: what a `#[proposal_eval]` test binary,
/// whose `main` belongs to libtest, does after its last case.
pub(crate) fn finish_at_exit() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        extern "C" fn at_exit() {
            let _ = std::panic::catch_unwind(finish);
        }
        crate::sys::at_exit(at_exit);
    });
}

/// The pass/fail counts and recording use of a group of cases.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    /// Cases with an entry.
    pub cases: usize,
    /// Cases that passed.
    pub passed: usize,
    /// Cases that failed.
    pub failed: usize,
    /// `passed / cases` (0 when there is no case).
    pub pass_rate: f64,
    /// The pass rate's 95 % Wilson interval; `None` when there is no case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_rate_interval: Option<proposal_eval_engine::stats::Interval>,
    /// Cases replayed from a fresh recording.
    pub replayed: usize,
    /// Cases replayed from a stale recording (`validation = "warn"`).
    pub replayed_stale: usize,
    /// Cases recorded in their run (into a pending recording or not).
    pub recorded: usize,
    /// Cases refused because their recording was stale.
    pub stale: usize,
    /// Cases that used no recording (none was there, or the one they recorded was not written).
    pub no_recording: usize,
    /// Cases whose result is from a run older than the report's latest run.
    #[serde(default)]
    pub older: usize,
    /// The model calls of these cases, summed; `None` when none made one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<UsageTotals>,
}

impl Totals {
    fn add(&mut self, passed: bool, recording: RecordingUse, older: bool) {
        self.cases += 1;
        if passed {
            self.passed += 1;
        } else {
            self.failed += 1;
        }
        match recording {
            RecordingUse::Replayed => self.replayed += 1,
            RecordingUse::ReplayedStale => self.replayed_stale += 1,
            RecordingUse::Recorded | RecordingUse::Pending => self.recorded += 1,
            RecordingUse::Stale => self.stale += 1,
            RecordingUse::None | RecordingUse::NotRecorded => self.no_recording += 1,
        }
        if older {
            self.older += 1;
        }
        // `usage` is summed by the caller (`aggregate`), exactly.
        self.set_pass_rate();
    }

    /// Sets `pass_rate` and its interval from the counts.
    fn set_pass_rate(&mut self) {
        self.pass_rate = if self.cases == 0 {
            0.0
        } else {
            self.passed as f64 / self.cases as f64
        };
        self.pass_rate_interval = proposal_eval_engine::stats::wilson(self.passed, self.cases);
    }

    /// `75.0% [68.6%, 80.5%]`: the pass rate and its 95 % Wilson interval.
    pub fn pass_rate_text(&self) -> String {
        match self.pass_rate_interval {
            Some(i) => format!(
                "{} [{}, {}]",
                percent(self.pass_rate),
                percent(i.low),
                percent(i.high)
            ),
            None => percent(self.pass_rate),
        }
    }
}

/// How many scores fell in `[from, to)` (the last bucket includes 1).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    /// Lower bound.
    pub from: f64,
    /// Upper bound.
    pub to: f64,
    /// Scores in the bucket.
    pub count: usize,
}

/// The bucket of a score: tenths, the last one including 1.
fn bucket(score: f64) -> usize {
    ((score.clamp(0.0, 1.0) * 10.0).floor() as usize).min(9)
}

fn buckets(counts: [usize; 10]) -> Vec<Bucket> {
    counts
        .iter()
        .enumerate()
        .map(|(i, &count)| Bucket {
            from: i as f64 / 10.0,
            to: (i + 1) as f64 / 10.0,
            count,
        })
        .collect()
}

#[cfg(test)]
fn distribution(scores: impl Iterator<Item = f64>) -> Vec<Bucket> {
    let mut counts = [0usize; 10];
    for score in scores {
        counts[bucket(score)] += 1;
    }
    buckets(counts)
}

/// One evaluator across a suite.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EvaluatorSummary {
    /// `strict`, `field_accuracy`, or `code_judge:<name>`.
    pub evaluator: String,
    /// Cases it scored.
    pub cases: usize,
    /// Cases it passed.
    pub passed: usize,
    /// `passed / cases`.
    pub pass_rate: f64,
    /// The mean score.
    pub mean_score: f64,
    /// Its scores in ten buckets.
    pub score_distribution: Vec<Bucket>,
}

/// One field across every case of a suite.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FieldAccuracy {
    /// The field's path.
    pub path: String,
    /// Cases where it matched.
    pub hits: usize,
    /// Cases where it was counted.
    pub total: usize,
    /// `hits / total`.
    pub accuracy: f64,
}

/// One suite, as run by one test binary.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SuiteReport {
    /// The suite's name.
    pub suite: String,
    /// The suite folder, crate-relative.
    pub suite_dir: String,
    /// The package of the test binary.
    pub package: String,
    /// The test binary.
    pub binary: String,
    /// Counts.
    #[serde(flatten)]
    pub totals: Totals,
    /// Case scores (the mean over evaluators) in ten buckets; cases without a score are left out.
    pub score_distribution: Vec<Bucket>,
    /// Each evaluator's pass rate and scores.
    pub evaluators: Vec<EvaluatorSummary>,
    /// Field-accuracy hits per field, across the suite's cases, sorted by path.
    pub field_accuracy: Vec<FieldAccuracy>,
    /// When its last case finished.
    pub last_finished_at: DateTime<Utc>,
    /// Its repeated cases: pass@1, pass@k, pass^k and the flaky cases; absent when no case has
    /// more than one sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<RepeatSummary>,
}

/// `report.json`.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// [`FORMAT`].
    pub format: u32,
    /// When the report was built.
    pub generated_at: DateTime<Utc>,
    /// The latest run whose results the report holds (the run of its most recent entry); a case
    /// from any other run is marked `older`.
    #[serde(default)]
    pub latest_run: Option<String>,
    /// Counts over every case.
    pub totals: Totals,
    /// Per suite and test binary.
    pub suites: Vec<SuiteReport>,
    /// Entry lines that could not be read (cut off by a kill, written by another version,
    /// edited by hand), left out: each as `FILE:LINE:COLUMN: why` (`FILE: why` for a whole file),
    /// at most 20 per file and then `FILE: N more unreadable line(s)`.
    #[serde(default)]
    pub unreadable_entries: Vec<String>,
    /// Every case's latest entry, sorted by package, binary, suite and case. Last in the file:
    /// [`fold()`] writes the cases' lines after the rest.
    pub cases: Vec<Entry>,
}

impl Report {
    /// Aggregates entries, marking those of runs older than the latest one.
    pub fn from_entries(mut cases: Vec<Entry>) -> Report {
        let latest_run = cases
            .iter()
            .max_by_key(|e| e.finished_at)
            .and_then(|e| e.run.clone());
        for case in &mut cases {
            case.older = case.run != latest_run;
        }
        Report::from_marked_entries(cases, latest_run)
    }

    /// Aggregates entries whose `older` marks are set (a merge marks each source's own),
    /// `latest_run` being the run of the most recent one.
    pub fn from_marked_entries(mut cases: Vec<Entry>, latest_run: Option<String>) -> Report {
        cases.sort_by(|a, b| {
            (&a.package, &a.binary, &a.suite_dir, &a.case).cmp(&(
                &b.package,
                &b.binary,
                &b.suite_dir,
                &b.case,
            ))
        });
        let mut aggregate = aggregate::Aggregate::default();
        for entry in &cases {
            aggregate.add(&aggregate::Counted::of(entry));
        }
        let (totals, suites) = aggregate.finish();
        Report {
            format: FORMAT,
            generated_at: Utc::now(),
            latest_run,
            totals,
            suites,
            unreadable_entries: Vec::new(),
            cases,
        }
    }

    /// The HTML page: one file, no network ([`page::render`] of this report's JSON, with the
    /// stories that fit the page, as the fold writes it).
    pub fn to_html(&self) -> String {
        page::render(&self.page_json(), None)
    }

    /// The HTML page with a comparison against a baseline below the summary
    /// (`cargo proposal-eval report --compare BASE`).
    pub fn to_html_compared(&self, comparison: &compare::Comparison) -> String {
        let comparison = serde_json::to_string(comparison).unwrap_or_default();
        page::render(&self.page_json(), Some(&comparison))
    }

    /// The report's JSON as the page embeds it: each case as `record` writes it, the stories
    /// that do not fit [`fold::PAGE_STORIES`] left out ([`aggregate::page_stories`]). Each case
    /// is written twice (its story's size, then the text), so that only the page is held.
    fn page_json(&self) -> String {
        let line = |case: &Entry| serde_json::to_vec(case).unwrap_or_default();
        let spans: Vec<(bool, Option<(usize, usize)>)> = self
            .cases
            .iter()
            .map(|case| (case.passed, aggregate::story_span(&line(case))))
            .collect();
        let cut = fold::page_cuts(&spans, fold::PAGE_STORIES);
        let header = Report {
            format: self.format,
            generated_at: self.generated_at,
            latest_run: self.latest_run.clone(),
            totals: self.totals.clone(),
            suites: self.suites.clone(),
            unreadable_entries: self.unreadable_entries.clone(),
            cases: Vec::new(),
        };
        let header = serde_json::to_string(&header).unwrap_or_default();
        let Some(open) = header.strip_suffix("[]}") else {
            return serde_json::to_string(self).unwrap_or_default();
        };
        let mut out = open.as_bytes().to_vec();
        out.push(b'[');
        let mut short = Vec::new();
        for (i, (case, cut)) in self.cases.iter().zip(&cut).enumerate() {
            if i > 0 {
                out.push(b',');
            }
            let whole = line(case);
            match cut {
                Some(span) => {
                    aggregate::without_story(&whole, *span, &mut short);
                    out.extend_from_slice(&short);
                }
                None => out.extend_from_slice(&whole),
            }
        }
        out.extend_from_slice(b"]}");
        String::from_utf8(out).unwrap_or_default()
    }
}

/// Folds the journals of `dir` (a `target/proposal-eval` folder) into its `results.jsonl`,
/// `report.json` and `report.html`, and returns the report with its cases: what
/// `cargo proposal-eval report` does. Waits for a fold another process is making.
pub fn fold(dir: &Path) -> Result<Report, ReportError> {
    fold::fold(dir, true)
}

/// Folds as the end of a whole run does ([`fold()`] without reading the cases into the
/// report): what `bench/suite-scale`'s `fold_time` measures.
pub fn fold_at_run_end(dir: &Path) -> Result<Report, ReportError> {
    fold::fold(dir, false)
}

/// A report that could not be made: the file (and the place in it), what is wrong and what to
/// do. One type for the fold, `report --merge` and every file they read or write.
#[derive(Debug)]
pub struct ReportError {
    /// The file or folder.
    pub path: PathBuf,
    /// `(line, column)` in it, from 1, when the problem is in one place.
    pub place: Option<(usize, usize)>,
    /// What is wrong, and what to do.
    pub why: String,
    /// The I/O error behind it, if any.
    io: Option<std::io::Error>,
}

impl ReportError {
    /// A maker of the error for `doing` (`read`, `write`, `lock`, …) to `path`, for `map_err`.
    fn io<'a>(
        doing: &'static str,
        path: &'a Path,
    ) -> impl FnOnce(std::io::Error) -> ReportError + 'a {
        move |source| ReportError {
            path: path.to_path_buf(),
            place: None,
            why: format!("cannot {doing} it: {source}"),
            io: Some(source),
        }
    }

    /// An error about `path` as a whole.
    fn new(path: &Path, why: impl Into<String>) -> ReportError {
        ReportError {
            path: path.to_path_buf(),
            place: None,
            why: why.into(),
            io: None,
        }
    }

    /// Line `number` of `path`, `line`, is not a report entry: where serde stops reading it, why,
    /// and `fix`.
    fn at(path: &Path, number: usize, line: &str, fix: &str) -> ReportError {
        let (column, why) = journal::what_is_wrong(line);
        ReportError {
            path: path.to_path_buf(),
            place: Some((number, column)),
            why: format!("not a report entry: {why}; {fix}"),
            io: None,
        }
    }

    /// A report that could not be serialized.
    fn json(error: impl fmt::Display) -> ReportError {
        ReportError::new(
            Path::new("report.json"),
            format!("cannot serialize it: {error}"),
        )
    }

    /// The kind of the I/O error behind it, if any.
    pub fn kind(&self) -> Option<std::io::ErrorKind> {
        self.io.as_ref().map(std::io::Error::kind)
    }
}

impl fmt::Display for ReportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some((line, column)) = self.place {
            write!(f, ":{line}:{column}")?;
        }
        write!(f, ": {}", self.why)
    }
}

impl std::error::Error for ReportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.io
            .as_ref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// What identifies a case across runs, and when its entry was written: read from a line without
/// building the rest of the entry, so a line that a newer entry replaces costs a scan only.
#[derive(Deserialize)]
struct EntryKey<'a> {
    #[serde(borrow)]
    package: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    binary: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    suite_dir: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    case: std::borrow::Cow<'a, str>,
    #[serde(borrow, default)]
    run: Option<std::borrow::Cow<'a, str>>,
    finished_at: DateTime<Utc>,
}

impl<'a> EntryKey<'a> {
    /// The key of an entry line. Lines are written by [`record`], with the key's fields first
    /// and `finished_at` last, so the usual line is read by position; anything else (an escape
    /// in a field, another layout) goes through serde.
    fn of_line(line: &'a [u8]) -> Option<EntryKey<'a>> {
        EntryKey::by_position(line).or_else(|| serde_json::from_slice(line).ok())
    }

    /// The key read by position, looking at the bytes of its fields only (the rest of the line
    /// is not even checked to be UTF-8: that is for whoever parses it).
    fn by_position(line: &'a [u8]) -> Option<EntryKey<'a>> {
        let text = |bytes: &'a [u8]| std::str::from_utf8(bytes).ok();
        let mut rest = line;
        let mut field = |name: &str| -> Option<&'a str> {
            rest = rest.strip_prefix(name.as_bytes())?;
            let end = rest.iter().position(|&b| b == b'"')?;
            let value = &rest[..end];
            rest = &rest[end + 1..];
            // An escape would need decoding (and `\"` ends no string): serde's job.
            if value.contains(&b'\\') {
                return None;
            }
            text(value)
        };
        let package = field("{\"package\":\"")?;
        let binary = field(",\"binary\":\"")?;
        field(",\"suite\":\"")?;
        let suite_dir = field(",\"suite_dir\":\"")?;
        let case = field(",\"case\":\"")?;
        // A quote inside a string is escaped, so this text can only be the last field itself.
        const FINISHED: &[u8] = b",\"finished_at\":\"";
        const RUN: &[u8] = b",\"run\":\"";
        let body = line.strip_suffix(b"\"}")?;
        let at = rfind(body, FINISHED)?;
        let (before, finished) = (&body[..at], &body[at + FINISHED.len()..]);
        let finished_at = DateTime::parse_from_rfc3339(text(finished)?).ok()?.to_utc();
        // `run`, when there is one, comes right before.
        let run = match before.strip_suffix(b"\"") {
            Some(rest) => {
                let run = &rest[rfind(rest, RUN)? + RUN.len()..];
                if run.contains(&b'\\') || run.contains(&b'"') {
                    return None;
                }
                Some(text(run)?.into())
            }
            // A line written before `run` came last (with `usage` or `samples` after it):
            // serde finds it.
            None if rfind(before, RUN).is_some() => return None,
            None => None,
        };
        Some(EntryKey {
            package: package.into(),
            binary: binary.into(),
            suite_dir: suite_dir.into(),
            case: case.into(),
            run,
            finished_at,
        })
    }
}

/// Where `needle` last starts in `haystack`.
fn rfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).rposition(|w| w == needle)
}

/// What identifies a case across runs: package, binary, suite folder and case, joined by NULs
/// (which sort before every other character, so the order is that of the four fields).
fn case_key(out: &mut String, package: &str, binary: &str, suite_dir: &str, case: &str) {
    out.clear();
    for (i, part) in [package, binary, suite_dir, case].into_iter().enumerate() {
        if i > 0 {
            out.push('\0');
        }
        out.push_str(part);
    }
}

/// A rate as a percentage with one decimal: `75.0%`.
fn percent(rate: f64) -> String {
    format!("{:.1}%", rate * 100.0)
}

/// How a case used its recording, in words.
fn recording_text(use_: RecordingUse) -> &'static str {
    match use_ {
        RecordingUse::Replayed => "replayed",
        RecordingUse::ReplayedStale => "replayed (stale)",
        RecordingUse::Recorded => "recorded",
        RecordingUse::Pending => "recorded (pending review)",
        RecordingUse::Stale => "stale",
        RecordingUse::None => "none",
        RecordingUse::NotRecorded => "not recorded",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry_line(fixture: &Path, case: &str, finished_at: &str, passed: bool) -> String {
        let entry = serde_json::json!({
            "package": "demo", "binary": "evals", "suite": "s", "suite_dir": "fixtures/s",
            "case": case, "test": format!("s::{case}"), "fixture": fixture,
            "passed": passed, "score": if passed { 1.0 } else { 0.0 }, "recording": "replayed",
            "evaluators": [], "finished_at": finished_at,
        });
        format!("{entry}\n")
    }

    #[test]
    fn journal_lines_fold_latest_first_and_a_cut_line_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let fixture = dir.path().join("a.json");
        std::fs::write(&fixture, "{}").unwrap();
        let gone = dir.path().join("gone.json");
        let runs = dir.path().join("runs");
        std::fs::create_dir_all(&runs).unwrap();
        let first = runs.join("parent-1-1.jsonl");
        std::fs::write(
            &first,
            entry_line(&fixture, "a", "2026-01-01T00:00:00Z", false)
                + &entry_line(&gone, "b", "2026-01-01T00:00:00Z", true)
                + "{\"cut off by a kill\n",
        )
        .unwrap();
        std::fs::write(
            runs.join("parent-2-2.jsonl"),
            entry_line(&fixture, "a", "2026-01-02T00:00:00Z", true),
        )
        .unwrap();

        let report = fold(dir.path()).unwrap();
        assert_eq!(
            report.cases.len(),
            1,
            "the case whose fixture is gone is dropped"
        );
        assert!(report.cases[0].passed, "the newer entry wins");
        assert_eq!(
            report.unreadable_entries,
            [format!(
                "{}:3:19: EOF while parsing a string",
                first.display()
            )]
        );
        let results = std::fs::read_to_string(dir.path().join("results.jsonl")).unwrap();
        assert_eq!(
            results,
            entry_line(&fixture, "a", "2026-01-02T00:00:00Z", true)
        );
        assert!(first.exists(), "the journals of the last 10 runs are kept");
        assert!(dir.path().join("report.html").exists());
    }

    /// Every file the fold writes, by name.
    fn folded_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
        ["results.jsonl", "report.json", "report.html"]
            .into_iter()
            .map(|name| (name.to_string(), std::fs::read(dir.join(name)).unwrap()))
            .collect()
    }

    /// A report folder with its `runs/` folder, and a fixture for entries to name.
    fn report_folder() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let fixture = dir.path().join("a.json");
        std::fs::write(&fixture, "{}").unwrap();
        let runs = dir.path().join("runs");
        std::fs::create_dir_all(&runs).unwrap();
        (dir, fixture, runs)
    }

    #[test]
    fn a_fold_run_twice_gives_the_same_files() {
        let (dir, fixture, runs) = report_folder();
        std::fs::write(
            runs.join("parent-1-1.jsonl"),
            entry_line(&fixture, "a", "2026-01-01T00:00:00Z", false)
                + &entry_line(&fixture, "b", "2026-01-01T00:00:00Z", true),
        )
        .unwrap();
        let once = fold(dir.path()).unwrap();
        let files = folded_files(dir.path());
        let twice = fold(dir.path()).unwrap();
        assert_eq!(folded_files(dir.path()), files);
        assert_eq!(twice.cases, once.cases);
        assert_eq!(
            twice.generated_at, once.generated_at,
            "report.json was left as it was"
        );
    }

    #[test]
    fn a_journal_taken_up_is_read_again_only_when_a_line_is_added() {
        let (dir, fixture, runs) = report_folder();
        let journal = runs.join("parent-1-1.jsonl");
        // An unreadable line shows whether a fold read the journal: it names it.
        std::fs::write(
            &journal,
            entry_line(&fixture, "a", "2026-01-01T00:00:00Z", true) + "{\"bad\n",
        )
        .unwrap();
        assert_eq!(fold(dir.path()).unwrap().unreadable_entries.len(), 1);
        // At once (within the slack for coarse file times): not read again.
        let again = fold(dir.path()).unwrap();
        assert_eq!(again.unreadable_entries, Vec::<String>::new());
        assert_eq!(again.totals.cases, 1);
        // A line added: read again, the new case taken up.
        let mut file = std::fs::File::options()
            .append(true)
            .open(&journal)
            .unwrap();
        std::io::Write::write_all(
            &mut file,
            entry_line(&fixture, "b", "2026-01-01T00:00:01Z", true).as_bytes(),
        )
        .unwrap();
        let third = fold(dir.path()).unwrap();
        assert_eq!(third.unreadable_entries.len(), 1);
        assert_eq!(third.totals.cases, 2);
    }

    #[test]
    fn a_folded_report_of_more_than_a_page_is_embedded_first_page_first() {
        let (dir, fixture, runs) = report_folder();
        let lines: String = (0..page::FIRST_PAGE + 20)
            .map(|i| {
                entry_line(
                    &fixture,
                    &format!("c{i:03}</script>"),
                    "2026-01-01T00:00:00Z",
                    i % 3 > 0,
                )
            })
            .collect();
        std::fs::write(runs.join("parent-1-1.jsonl"), lines).unwrap();
        fold(dir.path()).unwrap();
        let json = std::fs::read_to_string(dir.path().join("report.json")).unwrap();
        let report: serde_json::Value = serde_json::from_str(&json).unwrap();
        let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
        let embedded = |id: &str| -> serde_json::Value {
            let open = format!("<script type=\"application/json\" id=\"{id}\">");
            let start = html.find(&open).expect("the data element") + open.len();
            let end = html[start..].find("</script").expect("the element's end");
            serde_json::from_str(&html[start..start + end]).unwrap()
        };
        assert_eq!(
            embedded("report-data"),
            report,
            "the whole report after the script"
        );
        let mut first = report.clone();
        first["cases"] = serde_json::Value::Array(
            report["cases"].as_array().unwrap()[..page::FIRST_PAGE].to_vec(),
        );
        assert_eq!(embedded("report-summary"), first);
        assert_eq!(report["cases"][0]["case"], "c000</script>");
    }

    #[test]
    fn the_fold_keeps_the_last_ten_runs_journals() {
        let (dir, fixture, runs) = report_folder();
        let start = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        for run in 0..12u64 {
            let path = runs.join(format!("parent-{run}-1.jsonl"));
            let at = format!("2026-01-01T00:00:{run:02}Z");
            std::fs::write(&path, entry_line(&fixture, "a", &at, true)).unwrap();
            let file = std::fs::File::options().append(true).open(&path).unwrap();
            file.set_modified(start + std::time::Duration::from_secs(run))
                .unwrap();
        }
        let report = fold(dir.path()).unwrap();
        assert_eq!(
            report.cases[0].finished_at.to_rfc3339(),
            "2026-01-01T00:00:11+00:00"
        );
        let mut left: Vec<String> = std::fs::read_dir(&runs)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left.len(), 10, "{left:?}");
        assert!(!left.contains(&"parent-0-1.jsonl".to_string()));
        assert!(!left.contains(&"parent-1-1.jsonl".to_string()));
    }
    #[test]
    fn an_entry_lines_key_is_read_by_position_as_serde_reads_it() {
        let entry: Entry = serde_json::from_str(&entry_line(
            Path::new("/s/a.json"),
            "sub/a",
            "2026-01-02T03:04:05.123456789Z",
            true,
        ))
        .unwrap();
        let line = serde_json::to_string(&entry).unwrap();
        let quick = EntryKey::by_position(line.as_bytes()).expect("a line as record writes it");
        let slow: EntryKey = serde_json::from_str(&line).unwrap();
        assert_eq!(
            (&quick.package, &quick.binary, &quick.suite_dir, &quick.case),
            (&slow.package, &slow.binary, &slow.suite_dir, &slow.case)
        );
        assert_eq!(quick.finished_at, entry.finished_at);
        // An escape in a key field is left to serde, which decodes it.
        let escaped = line.replace("\"case\":\"sub/a\"", "\"case\":\"sub\\\"a\"");
        assert!(EntryKey::by_position(escaped.as_bytes()).is_none());
        assert_eq!(
            EntryKey::of_line(escaped.as_bytes()).unwrap().case,
            "sub\"a"
        );
        assert!(
            EntryKey::of_line(&line.as_bytes()[..line.len() - 5]).is_none(),
            "a cut line"
        );
    }

    /// An entry line of `binary` in run `run`, for a fixture under a crate at `root`.
    fn run_line(root: &Path, binary: &str, case: &str, run: &str, at: &str) -> String {
        let fixture = root.join("fixtures/s").join(format!("{case}.json"));
        std::fs::create_dir_all(fixture.parent().unwrap()).unwrap();
        std::fs::write(&fixture, "{}").unwrap();
        let entry = serde_json::json!({
            "package": "demo", "binary": binary, "suite": "s", "suite_dir": "fixtures/s",
            "case": case, "test": format!("s::{case}"), "fixture": fixture,
            "passed": true, "score": 1.0, "recording": "none",
            "evaluators": [], "run": run, "finished_at": at,
        });
        format!("{entry}\n")
    }

    #[test]
    fn results_of_older_runs_are_marked_and_gone_targets_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("crate");
        std::fs::create_dir_all(root.join("tests")).unwrap();
        std::fs::write(root.join("Cargo.toml"), "[package]\nname = \"demo\"\n").unwrap();
        std::fs::write(root.join("tests/evals.rs"), "").unwrap();
        std::fs::write(root.join("tests/other.rs"), "").unwrap();
        let out = dir.path().join("out");
        let runs = out.join("runs");
        std::fs::create_dir_all(&runs).unwrap();
        let journal = |run: &str| runs.join(format!("{run}.jsonl"));
        // `other` ran in run 1 only; `evals` in runs 1 and 2 (case b only in 2: a filtered run);
        // `removed` ran in run 2 but its test file is gone since.
        std::fs::write(
            journal("run-1"),
            run_line(&root, "other", "a", "run-1", "2026-01-01T00:00:00Z")
                + &run_line(&root, "evals", "a", "run-1", "2026-01-01T00:00:01Z")
                + &run_line(&root, "evals", "b", "run-1", "2026-01-01T00:00:01Z"),
        )
        .unwrap();
        std::fs::write(
            journal("run-2"),
            run_line(&root, "evals", "b", "run-2", "2026-01-02T00:00:00Z")
                + &run_line(&root, "removed", "a", "run-2", "2026-01-02T00:00:01Z"),
        )
        .unwrap();
        std::fs::write(root.join("tests/gone.rs"), "").unwrap();

        let report = fold(&out).unwrap();
        let rows: Vec<(&str, &str, bool)> = report
            .cases
            .iter()
            .map(|c| (c.binary.as_str(), c.case.as_str(), c.older))
            .collect();
        assert_eq!(
            rows,
            [
                ("evals", "a", true),
                ("evals", "b", false),
                ("other", "a", true)
            ],
            "the removed target's entry is dropped; the filtered run replaced b only"
        );
        assert_eq!(report.latest_run.as_deref(), Some("run-2"));
        assert_eq!(report.totals.older, 2);
        assert_eq!(report.suites[0].totals.older, 1);
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
        assert_eq!(json["cases"][0]["older"], true);
        assert_eq!(
            json["cases"][1].get("older"),
            None,
            "current rows carry no mark"
        );
        assert_eq!(json["cases"][1]["run"], "run-2");
        let html = std::fs::read_to_string(out.join("report.html")).unwrap();
        let text = std::fs::read_to_string(out.join("report.json")).unwrap();
        assert_eq!(html, page::render(&text, None), "the page of report.json");
    }

    #[test]
    fn a_target_is_found_by_file_or_by_manifest_name() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("tests/multi")).unwrap();
        std::fs::write(
            root.join("Cargo.toml"),
            "[package]\nname = \"my-crate\"\n[[test]]\nname = \"custom\"\npath = \"checks/c.rs\"\n",
        )
        .unwrap();
        std::fs::write(root.join("tests/multi/main.rs"), "").unwrap();
        for (binary, exists) in [
            ("my_crate", true),
            ("multi", true),
            ("custom", true),
            ("deleted", false),
        ] {
            assert_eq!(target_exists(root, "my-crate", binary), exists, "{binary}");
        }
        assert!(!target_exists(
            &root.join("nowhere"),
            "my-crate",
            "my_crate"
        ));
    }

    #[test]
    fn an_entry_lines_run_is_read_by_position_or_left_to_serde() {
        let root = tempfile::tempdir().unwrap();
        let line = run_line(
            root.path(),
            "evals",
            "a",
            "parent-7-99",
            "2026-01-02T00:00:00Z",
        );
        let entry: Entry = serde_json::from_str(&line).unwrap();
        let line = serde_json::to_string(&entry).unwrap();
        assert!(line.ends_with(r#","run":"parent-7-99","finished_at":"2026-01-02T00:00:00Z"}"#));
        let key = EntryKey::by_position(line.as_bytes()).unwrap();
        assert_eq!(key.run.as_deref(), Some("parent-7-99"));
        // Without a run, a failure message is the string before `finished_at`: serde decides.
        let mut failed = entry.clone();
        failed.run = None;
        failed.failure = Some("x".into());
        let line = serde_json::to_string(&failed).unwrap();
        assert!(EntryKey::by_position(line.as_bytes()).is_none());
        assert_eq!(EntryKey::of_line(line.as_bytes()).unwrap().run, None);

        // A case that called a model: its usage is written before its run, which stays last.
        let mut called = entry.clone();
        called.usage = Some(UsageTotals {
            calls: 2,
            ..UsageTotals::default()
        });
        let line = serde_json::to_string(&called).unwrap();
        assert!(line.ends_with(r#","run":"parent-7-99","finished_at":"2026-01-02T00:00:00Z"}"#));
        assert_eq!(
            EntryKey::by_position(line.as_bytes())
                .unwrap()
                .run
                .as_deref(),
            Some("parent-7-99")
        );
        // Such a line as the version before wrote it, usage last: serde reads its run.
        let old = line.replace(
            r#""usage":{"calls":2,"input_tokens":0,"output_tokens":0,"latency_ms":0.0},"run":"parent-7-99","#,
            r#""run":"parent-7-99","usage":{"calls":2,"input_tokens":0,"output_tokens":0,"latency_ms":0.0},"#,
        );
        assert_ne!(old, line);
        assert!(EntryKey::by_position(old.as_bytes()).is_none());
        assert_eq!(
            EntryKey::of_line(old.as_bytes()).unwrap().run.as_deref(),
            Some("parent-7-99")
        );
    }

    #[test]
    fn a_command_line_selects_the_whole_target_or_a_part() {
        let scope = |args: &[&str]| Scope::of_args(args.iter().map(|a| a.to_string()));
        assert_eq!(scope(&[]), Scope::Whole);
        assert_eq!(scope(&["-q", "--test-threads", "2"]), Scope::Whole);
        assert_eq!(
            scope(&["--include-ignored", "--format", "terse"]),
            Scope::Whole
        );
        assert_eq!(scope(&["s::a", "--exact"]), Scope::Part);
        assert_eq!(scope(&["--test-threads", "1", "refund"]), Scope::Part);
        assert_eq!(scope(&["--skip", "slow"]), Scope::Part);
        assert_eq!(scope(&["--ignored"]), Scope::Part);
    }

    #[test]
    fn failure_text_is_capped_together_and_says_how_much_was_left_out() {
        let mut budget = 10;
        assert_eq!(spend(&mut budget, "abcd"), "abcd");
        assert_eq!(spend(&mut budget, "éfghij"), "éfghi\n… 1 bytes left out");
        assert_eq!(spend(&mut budget, "more"), "\n… 4 bytes left out");
        let mut budget = 5;
        let lines = ["ab".to_string(), "cdef".into(), "gh".into()];
        assert_eq!(
            spend_lines(&mut budget, &lines),
            ["ab", "cde\n… 3 bytes left out"]
        );
        assert_eq!(budget, 0);
    }

    #[test]
    fn large_values_become_their_capped_json_text() {
        let small = serde_json::json!({ "a": [1, 2] });
        assert_eq!(capped_value(small.clone()), small);
        // The bound is never below the length serde_json writes.
        for value in [
            serde_json::json!([
                f64::MIN,
                -1.0e-300,
                i64::MIN,
                u64::MAX,
                0.1,
                null,
                true,
                false
            ]),
            serde_json::json!({"\u{0}\"\\é": "\u{1f}\n\t<>", "": [[], {}, ""]}),
            small.clone(),
        ] {
            let written = serde_json::to_string(&value).unwrap().len();
            assert!(json_len_bound(&value, usize::MAX) >= written, "{value}");
        }
        let large = serde_json::json!({ "a": "é".repeat(TEXT_CAP) });
        let capped = capped_value(large.clone());
        let text = capped.as_str().unwrap();
        let json_len = serde_json::to_string(&large).unwrap().len();
        let (kept, tail) = text.split_once("\n… ").unwrap();
        assert!(kept.starts_with("{\"a\":\"éé") && kept.len() <= TEXT_CAP);
        assert_eq!(tail, format!("{} bytes left out", json_len - kept.len()));
    }

    #[test]
    fn ansi_is_stripped() {
        assert_eq!(strip_ansi("\u{1b}[31m-a\u{1b}[0m b"), "-a b");
        assert_eq!(strip_ansi("plain"), "plain");
    }

    #[test]
    fn path_parts_stay_inside() {
        assert_eq!(safe(".."), "_");
        assert_eq!(safe(".hidden"), "_.hidden");
        assert_eq!(safe("a b/c"), "a_b_c");
    }

    #[test]
    fn buckets() {
        let d = distribution([0.0, 0.05, 0.5, 1.0, 0.99].into_iter());
        assert_eq!(d.len(), 10);
        assert_eq!(d[0].count, 2);
        assert_eq!(d[5].count, 1);
        assert_eq!(d[9].count, 2);
    }

    /// A line whose key reads but whose entry does not is left out and listed with its file,
    /// line and column, as is a line cut off by a kill; a file with many is listed up to 20
    /// lines, then counted.
    #[test]
    fn unreadable_entry_lines_are_named_by_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let writers = dir.path().join("runs");
        std::fs::create_dir_all(&writers).unwrap();
        let fixture = dir.path().join("a.json");
        std::fs::write(&fixture, "{}").unwrap();
        let wrong_type = |line: String| line.replace("\"passed\":true", "\"passed\":1");
        let small = writers.join("run-1.jsonl");
        std::fs::write(
            &small,
            entry_line(&fixture, "a", "2026-01-01T00:00:00Z", true)
                + &wrong_type(entry_line(&fixture, "b", "2026-01-01T00:00:00Z", true)),
        )
        .unwrap();
        let mut large = String::new();
        for i in 0..3000 {
            let line = entry_line(&fixture, &format!("c{i:04}"), "2026-01-01T00:00:00Z", true);
            large.push_str(&if i == 2500 { wrong_type(line) } else { line });
        }
        large.push_str("{\"package\":\"demo\",\"bin");
        let big = writers.join("run-2.jsonl");
        std::fs::write(&big, &large).unwrap();
        let many = writers.join("run-3.jsonl");
        std::fs::write(&many, "not json\n".repeat(25)).unwrap();

        let report = fold(dir.path()).unwrap();
        assert_eq!(
            report.cases.len(),
            1 + 2999,
            "the unreadable lines are left out"
        );
        assert!(report
            .cases
            .iter()
            .all(|c| c.case != "b" && c.case != "c2500"));
        // serde_json's column: the character where it stopped, from 1.
        let column = |case: &str| {
            entry_line(&fixture, case, "2026-01-01T00:00:00Z", true)
                .find("\"passed\":true")
                .unwrap()
                + "\"passed\":1".len()
        };
        // Files in name order, each file's lines in order; then the lines whose key was
        // readable, found while the cases are written; then the counts.
        let mut expected = vec![format!(
            "{}:3001:22: EOF while parsing a string",
            big.display()
        )];
        for line in 1..=20 {
            expected.push(format!("{}:{line}:2: expected ident", many.display()));
        }
        expected.push(format!(
            "{}:2:{}: invalid type: integer `1`, expected a boolean",
            small.display(),
            column("b")
        ));
        expected.push(format!(
            "{}:2501:{}: invalid type: integer `1`, expected a boolean",
            big.display(),
            column("c2500")
        ));
        expected.push(format!("{}: 5 more unreadable line(s)", many.display()));
        assert_eq!(report.unreadable_entries, expected);
        let json: Report =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap())
                .unwrap();
        assert_eq!(json.unreadable_entries, expected);
        let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
        assert!(html.contains(&expected[0].replace('"', "\\\"")));

        let summary = unreadable_summary(&report.unreadable_entries);
        assert!(summary.starts_with("warning: report entry lines that could not be read"));
        assert!(
            summary.contains(&format!("\n  {}\n", expected[21])),
            "{summary}"
        );
        assert_eq!(unreadable_summary(&[]), "");
    }
}
