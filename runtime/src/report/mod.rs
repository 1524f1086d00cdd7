//! Run reports: `target/proposal-eval/report.json` and a self-contained `report.html` beside it.
//!
//! Every test process appends one JSON line per case to its own entry file,
//! `entries/<package>/<test binary>/<pid>-<start>.jsonl`: one `write` per case, no temp files,
//! no fsync (a report is derived data; a line cut off by a kill is left out, and the rebuild that
//! finds it names its file and line in the report and on stderr). Separate files per
//! process mean parallel test threads and nextest's one process per test never interleave or lose
//! an entry. A process keeps only counts in memory, not its entries; one that runs its whole
//! target also makes its part of the report as its cases finish ([`prepared`]: each case's row
//! and failure section rendered on its test thread, its key and places kept), so the rebuild at
//! its end copies pieces instead of reading, parsing and rendering every line again.
//!
//! [`rebuild`] (in `build`) reads the entries case by case into `report.json` and `report.html`,
//! keeping the latest entry of each case that still stands, and compacts the files of finished
//! processes into one `merged.jsonl` per package and binary folder. It runs under a lock file:
//!
//! - at the end of a [`Harness`](crate::Harness) run, and when a `#[proposal_eval]` test binary
//!   exits (an `atexit` hook registered by its first case), when the process ran its whole
//!   target, or only part of it while the report is small ([`finish`]);
//! - always by `cargo proposal-eval report`.
//!
//! A finishing process marks the report dirty (after its last entry) and rebuilds only if the
//! mark is set and it wins the lock; it clears the mark before reading and re-checks it after
//! unlocking, so the last entry of a run is never left out.

mod aggregate;
mod build;
pub mod compare;
pub mod confidence;
pub mod junit;
pub mod merge;
mod prepared;
pub mod review;
mod section;
pub mod status;

use crate::layout::{report_dir, safe};
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
use std::io::Write as _;
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

/// One case's result, as its entry file holds it.
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
    /// case did not run in the latest one). Never written in entry files.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub older: bool,
}

impl Entry {
    /// The entry of a case that just ran. Its failure text (`failure`, then each evaluator's
    /// `rendered` and `misses`) is capped at [`TEXT_CAP`] bytes together, and its input and
    /// output at [`TEXT_CAP`] bytes of JSON each ([`capped_value`]).
    pub(crate) fn new(suite: &Suite, loaded: &LoadedCase, result: &CaseResult) -> Entry {
        let mut budget = TEXT_CAP;
        let failure = result
            .failure
            .as_deref()
            .map(|f| spend(&mut budget, &strip_ansi(f)));
        let evaluators: Vec<EvaluatorEntry> = result
            .evaluators
            .iter()
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
                verdicts: e.verdicts.clone(),
                alignment: e.alignment.clone(),
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
            trajectory: result.trajectory.clone(),
            samples: result.samples.clone(),
            input: loaded.file.as_ref().ok().map(|f| capped_value(&f.input)),
            output: result.output.as_ref().map(capped_value),
            calls: result.calls.clone(),
            recording_path: result.recording_path.clone(),
            finished_at: Utc::now(),
            older: false,
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
pub(crate) fn capped_value(value: &serde_json::Value) -> serde_json::Value {
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
    let mut head = Head {
        kept: Vec::new(),
        total: 0,
    };
    if serde_json::to_writer(&mut head, value).is_err() || head.total <= TEXT_CAP {
        return value.clone();
    }
    let mut end = TEXT_CAP;
    while end > 0 && (head.kept[end] & 0xC0) == 0x80 {
        end -= 1;
    }
    let text = String::from_utf8_lossy(&head.kept[..end]);
    serde_json::Value::String(format!("{text}\n… {} bytes left out", head.total - end))
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

/// This process's entry file, opened by the first entry. Only counts stay in memory: the
/// end-of-run rebuild reads the file back, one case at a time; a process that runs its whole
/// target also makes its part of the report as it goes ([`prepared`]).
struct Sink {
    file: Option<std::fs::File>,
    path: PathBuf,
    /// Lines written.
    count: usize,
    /// Whether every line reached the file (then the file can become the merged file as is).
    whole: bool,
    /// The repeated cases' entries, for the summary a run prints at its end (none without
    /// repeats).
    repeated: Vec<Entry>,
    /// The run's own part of the report, when it runs its whole target.
    prepared: Option<prepared::Prepared>,
}

static SINK: Mutex<Option<Sink>> = Mutex::new(None);

/// Whether the sink's part of the report still takes rows: rendering a row is skipped once the
/// part is given up (its side files could not be written).
static PREPARING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// This process's entry folder, `entries/<package>/<binary>`, and, when the process runs its
/// whole target (its part of the report is then made as it goes), the folder's anchor tag.
fn entry_folder() -> &'static (PathBuf, Option<String>) {
    static FOLDER: std::sync::OnceLock<(PathBuf, Option<String>)> = std::sync::OnceLock::new();
    FOLDER.get_or_init(|| {
        let dir = report_dir();
        let folder = dir
            .join("entries")
            .join(safe(crate::env::package_name().unwrap_or("unknown")))
            .join(safe(crate::env::test_binary().unwrap_or("unknown")));
        let whole = Scope::of_args(std::env::args().skip(1)) == Scope::Whole;
        let tag = whole.then(|| section::tag(&folder, &dir));
        (folder, tag)
    })
}

thread_local! {
    /// A test thread's row and failure section, rendered before the sink is locked.
    static RENDERED: std::cell::RefCell<(String, String)> = const {
        std::cell::RefCell::new((String::new(), String::new()))
    };
}

/// Appends one case's entry to this process's entry file. Failing to write a report never fails
/// a test.
pub(crate) fn record(suite: &Suite, loaded: &LoadedCase, result: &CaseResult) {
    let entry = Entry::new(suite, loaded, result);
    let Ok(mut line) = serde_json::to_string(&entry) else {
        return;
    };
    line.push('\n');
    let (folder, tag) = entry_folder();
    RENDERED.with_borrow_mut(|(row, failure)| {
        use std::sync::atomic::Ordering::Relaxed;
        let rendered = match tag {
            Some(tag) if PREPARING.load(Relaxed) => {
                prepared::Prepared::render(tag, &entry, row, failure);
                true
            }
            _ => false,
        };
        let mut sink = SINK.lock().unwrap_or_else(|p| p.into_inner());
        let sink = sink.get_or_insert_with(|| {
            let started = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0);
            let path = folder.join(format!("{}-{started}.jsonl", std::process::id()));
            let file = std::fs::create_dir_all(folder)
                .and_then(|()| {
                    std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(&path)
                })
                .ok();
            let prepared = tag
                .as_ref()
                .filter(|_| file.is_some())
                .and_then(|_| prepared::Prepared::create(&path));
            PREPARING.store(prepared.is_some(), Relaxed);
            Sink {
                whole: file.is_some(),
                file,
                path,
                count: 0,
                repeated: Vec::new(),
                prepared,
            }
        });
        let written = match sink.file.as_mut() {
            Some(file) => file.write_all(line.as_bytes()).is_ok(),
            None => false,
        };
        sink.whole &= written;
        sink.count += 1;
        if let Some(prepared) = sink.prepared.as_mut() {
            if rendered {
                prepared.add(&entry, line.len(), written, row, failure);
            } else {
                prepared.give_up(line.len());
            }
            if !prepared.whole() {
                PREPARING.store(false, Relaxed);
            }
        }
        if entry.samples.is_some() {
            sink.repeated.push(entry);
        }
    });
}

const DIRTY: &str = ".dirty";
const LOCK: &str = ".rebuild.lock";
const MERGED: &str = "merged.jsonl";
/// A lock older than this is left over from a killed process.
const STALE_LOCK: std::time::Duration = std::time::Duration::from_secs(120);
/// Under nextest, a report younger than this is not rebuilt by a finishing test process.
const NEXTEST_REBUILD_INTERVAL: std::time::Duration = std::time::Duration::from_secs(2);
/// A run of part of a target rebuilds the report only while `report.json` is at most this
/// large (about 2,000 passing cases): a rebuild costs what the whole report costs, and a run of
/// one case in a large suite would spend far longer on it than on its case.
const SMALL_REPORT: u64 = 1024 * 1024;

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
struct Targets(std::collections::HashMap<(PathBuf, String), bool>);

impl Targets {
    /// Whether `entry`'s test target is gone from its crate. A target whose crate cannot be
    /// read off the entry is taken to exist.
    fn gone(&mut self, entry: &Entry) -> bool {
        let Some(root) = crate_root_of(entry) else {
            return false;
        };
        let key = (root, entry.binary.clone());
        if let Some(gone) = self.0.get(&key) {
            return *gone;
        }
        let gone = !target_exists(&key.0, &entry.package, &entry.binary);
        self.0.insert(key, gone);
        gone
    }
}

/// The crate root an entry's fixture path was made from (`<root>/<suite_dir>/<case>.json`).
fn crate_root_of(entry: &Entry) -> Option<PathBuf> {
    let suite_dir = entry.suite_dir.trim_start_matches("./");
    let tail = match suite_dir {
        "" | "." => PathBuf::from(format!("{}.json", entry.case)),
        dir => Path::new(dir).join(format!("{}.json", entry.case)),
    };
    let plain = tail
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)));
    if !plain || !entry.fixture.ends_with(&tail) {
        return None;
    }
    let mut root = entry.fixture.clone();
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

/// Rebuilds the report at the end of a test process if an entry was written since the last
/// rebuild and no other process is rebuilding it.
///
/// A process that ran its whole target rebuilds. One that ran a part (a filtered `cargo test`,
/// each nextest process) leaves the report marked out of date unless `report.json` is small
/// ([`SMALL_REPORT`]): its end then costs what it changed, not what the suite holds, and the
/// next whole run or `cargo proposal-eval report` brings the report up to date. Under nextest a
/// small report is also rebuilt at most every two seconds.
pub(crate) fn finish(scope: Scope) {
    let mut sink = SINK.lock().unwrap_or_else(|p| p.into_inner());
    let wrote = sink.is_some();
    if let Some(sink) = sink.as_ref() {
        eprint!("{}", repeats_summary(sink.repeated.iter()));
    }
    rebuild_if_due(scope, &mut sink, wrote);
    // A part no rebuild took (part of a large report, a young one under nextest, another process
    // rebuilding) is of no use to a later rebuild: its side files go.
    drop(sink.as_mut().and_then(|s| s.prepared.take()));
}

/// [`finish`]'s rebuild, when one is due; `wrote`: this process wrote an entry.
fn rebuild_if_due(scope: Scope, sink: &mut Option<Sink>, wrote: bool) {
    let dir = report_dir();
    let (dirty, lock) = (dir.join(DIRTY), dir.join(LOCK));
    if wrote {
        let _ = std::fs::write(&dirty, b"");
    }
    let report = std::fs::metadata(dir.join("report.json")).ok();
    if scope == Scope::Part && report.as_ref().is_some_and(|m| m.len() > SMALL_REPORT) {
        return;
    }
    if std::env::var_os("NEXTEST_RUN_ID").is_some() {
        let young = report
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age < NEXTEST_REBUILD_INTERVAL);
        if young {
            return;
        }
    }
    // Clearing the mark before reading the entries and checking it again after unlocking means
    // an entry written during a rebuild is either in it or sets the mark again for a next round.
    while dirty.exists() {
        if !try_lock(&lock) {
            break;
        }
        let _ = std::fs::remove_file(&dirty);
        // This process's file is known finished (it may become the merged file), once: a later
        // round (or a later run in this process, with a file of its own) reads whatever is left
        // on disk like any other writer's.
        let own = sink.take().map(|sink| build::Own {
            path: sink.path,
            count: sink.count,
            whole: sink.whole,
            prepared: sink.prepared,
        });
        if let Ok(report) = build::build(&dir, own, false) {
            eprint!("{}", unreadable_summary(&report.unreadable_entries));
        }
        let _ = std::fs::remove_file(&lock);
    }
}

/// The entry lines a rebuild left out, as a run prints them at its end; empty when there is none.
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

fn try_lock(lock: &Path) -> bool {
    for _ in 0..2 {
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(lock)
        {
            Ok(_) => return true,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let old = std::fs::metadata(lock)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age > STALE_LOCK);
                if !old {
                    return false;
                }
                let _ = std::fs::remove_file(lock);
            }
            Err(_) => return false,
        }
    }
    false
}

/// Registers [`finish`] to run when the process exits: what a `#[proposal_eval]` test binary,
/// whose `main` belongs to libtest, does after its last case.
pub(crate) fn finish_at_exit() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        extern "C" fn at_exit() {
            let _ = std::panic::catch_unwind(|| finish(Scope::of_args(std::env::args().skip(1))));
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
    /// Cases that used no recording.
    pub no_recording: usize,
    /// Cases whose result is from a run older than the report's latest run.
    #[serde(default)]
    pub older: usize,
    /// The model calls of these cases, summed; `None` when none made one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<UsageTotals>,
}

impl Totals {
    fn add(&mut self, entry: &Entry) {
        self.cases += 1;
        if entry.passed {
            self.passed += 1;
        } else {
            self.failed += 1;
        }
        match entry.recording {
            RecordingUse::Replayed => self.replayed += 1,
            RecordingUse::ReplayedStale => self.replayed_stale += 1,
            RecordingUse::Recorded | RecordingUse::Pending => self.recorded += 1,
            RecordingUse::Stale => self.stale += 1,
            RecordingUse::None => self.no_recording += 1,
        }
        if entry.older {
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
    /// [`rebuild`] writes the cases one by one after the rest.
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
            aggregate.add(entry);
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

    /// The HTML page: one file, no network.
    pub fn to_html(&self) -> String {
        html(self, "")
    }

    /// The HTML page with a comparison against a baseline below the summary
    /// (`cargo proposal-eval report --compare BASE`).
    pub fn to_html_compared(&self, comparison: &compare::Comparison) -> String {
        html(self, &comparison.to_html())
    }
}

/// Reads every entry below `dir/entries`, writes `dir/report.json` and `dir/report.html`, and
/// returns the report. Takes the rebuild lock (waiting up to ten seconds for a test process that
/// holds it).
pub fn rebuild(dir: &Path) -> std::io::Result<Report> {
    let lock = dir.join(LOCK);
    let _ = std::fs::create_dir_all(dir);
    let mut locked = try_lock(&lock);
    for _ in 0..100 {
        if locked {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        locked = try_lock(&lock);
    }
    if !locked {
        return Err(std::io::Error::other(format!(
            "another process holds {} (delete it if no test is running)",
            lock.display()
        )));
    }
    let result = build::build(dir, None, true);
    let _ = std::fs::remove_file(&lock);
    result
}

/// Whether the process that wrote `file` (`<pid>-<start>.jsonl`) may still append to it. The
/// rebuilding process's own file is handled by the caller.
fn writer_alive(file: &Path) -> bool {
    let Some(pid) = file
        .file_stem()
        .and_then(|s| s.to_str())
        .and_then(|s| s.split('-').next())
        .and_then(|p| p.parse::<u32>().ok())
    else {
        return false;
    };
    if pid == std::process::id() {
        // An older file of this pid (a pid reused) or this process's own when it still writes.
        return true;
    }
    crate::sys::process_alive(pid).unwrap_or_else(|| {
        // Without a way to ask, a writer is presumed alive until its file goes quiet.
        std::fs::metadata(file)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_none_or(|age| age < STALE_LOCK)
    })
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
    fn of_line(line: &'a str) -> Option<EntryKey<'a>> {
        EntryKey::by_position(line).or_else(|| serde_json::from_str(line).ok())
    }

    fn by_position(line: &'a str) -> Option<EntryKey<'a>> {
        let mut rest = line;
        let mut field = |name: &str| -> Option<&'a str> {
            rest = rest.strip_prefix(name)?;
            let (value, after) = rest.split_once('"')?;
            rest = after;
            // An escape would need decoding (and `\"` ends no string): serde's job.
            (!value.contains('\\')).then_some(value)
        };
        let package = field("{\"package\":\"")?;
        let binary = field(",\"binary\":\"")?;
        field(",\"suite\":\"")?;
        let suite_dir = field(",\"suite_dir\":\"")?;
        let case = field(",\"case\":\"")?;
        // A quote inside a string is escaped, so this text can only be the last field itself.
        let (before, finished) = line
            .strip_suffix("\"}")?
            .rsplit_once(",\"finished_at\":\"")?;
        let finished_at = DateTime::parse_from_rfc3339(finished).ok()?.to_utc();
        // `run`, when there is one, comes right before.
        let run = match before.strip_suffix('"') {
            Some(rest) => {
                let (_, run) = rest.rsplit_once(",\"run\":\"")?;
                if run.contains(['\\', '"']) {
                    return None;
                }
                Some(run.into())
            }
            // A line written before `run` came last (with `usage` or `samples` after it):
            // serde finds it.
            None if before.contains(",\"run\":\"") => return None,
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

/// Escapes text for HTML content and attribute values.
/// `text` escaped for HTML text and attribute values, written where it is displayed (no copy).
fn esc(text: &str) -> Esc<'_> {
    Esc(text)
}

/// See [`esc`].
struct Esc<'a>(&'a str);

impl fmt::Display for Esc<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
        while let Some(at) = rest.find(['&', '<', '>', '"', '\'']) {
            f.write_str(&rest[..at])?;
            f.write_str(match rest.as_bytes()[at] {
                b'&' => "&amp;",
                b'<' => "&lt;",
                b'>' => "&gt;",
                b'"' => "&quot;",
                _ => "&#39;",
            })?;
            rest = &rest[at + 1..];
        }
        f.write_str(rest)
    }
}

/// A time as `2025-01-31 09:05:00 UTC`, written without parsing a format string for each row.
struct Minute(DateTime<Utc>);

impl fmt::Display for Minute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use chrono::{Datelike, Timelike};
        let t = &self.0;
        write!(
            f,
            "{:04}-{:02}-{:02} {:02}:{:02}:{:02} UTC",
            t.year(),
            t.month(),
            t.day(),
            t.hour(),
            t.minute(),
            t.second()
        )
    }
}

fn percent(rate: f64) -> String {
    format!("{:.1}%", rate * 100.0)
}

fn score_text(score: Option<f64>) -> String {
    Score(score).to_string()
}

/// A score as the report shows it: whole numbers as they are, others to two decimals, none as a
/// dash.
struct Score(Option<f64>);

impl fmt::Display for Score {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(s) if s.fract() == 0.0 => write!(f, "{s}"),
            Some(s) => write!(f, "{s:.2}"),
            None => f.write_str("–"),
        }
    }
}

fn recording_text(use_: RecordingUse) -> &'static str {
    match use_ {
        RecordingUse::Replayed => "replayed",
        RecordingUse::ReplayedStale => "replayed (stale)",
        RecordingUse::Recorded => "recorded",
        RecordingUse::Pending => "recorded (pending review)",
        RecordingUse::Stale => "stale",
        RecordingUse::None => "none",
    }
}

const STYLE: &str = "
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;color:#1d232a}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem}h3{font-size:1rem;margin:1.2rem 0 .4rem}
.cards{display:flex;gap:1rem;flex-wrap:wrap}.card{border:1px solid #d5dbe1;border-radius:6px;padding:.6rem 1rem;min-width:7rem}
.card b{display:block;font-size:1.4rem}.muted{color:#65707c}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.3rem .6rem;border-bottom:1px solid #e4e8ec;vertical-align:top}
th[data-key]{cursor:pointer;user-select:none}th[data-key]:hover{background:#f1f4f7}
th.asc::after{content:' \\25B2'}th.desc::after{content:' \\25BC'}
.pass{color:#1a7f37}.fail{color:#cf222e}
.bars{display:grid;grid-template-columns:minmax(10rem,24rem) 1fr 6rem;gap:.25rem .8rem;align-items:center}
.bar{background:#eef1f4;height:.9rem;border-radius:3px;overflow:hidden}.bar span{display:block;height:100%;background:#2f81f7}
pre{background:#f6f8fa;border:1px solid #e4e8ec;border-radius:6px;padding:.6rem;overflow:auto;font-size:12.5px}
.del{color:#cf222e}.add{color:#1a7f37}.hunk{color:#8250df}
.failure{border-left:3px solid #cf222e;padding-left:1rem;margin:1rem 0}
tr.older td{color:#65707c;background:#fafbfc}.older-mark{font-size:11px;border:1px solid #d5dbe1;border-radius:3px;padding:0 .3rem;margin-left:.3rem}
td.ran{white-space:nowrap}
";

const SCRIPT: &str = "
(function(){
  var table=document.getElementById('cases');if(!table)return;
  var body=table.tBodies[0];
  function sort(key,order){
    var heads=table.tHead.rows[0].cells,col=-1;
    for(var i=0;i<heads.length;i++){heads[i].classList.remove('asc','desc');if(heads[i].dataset.key===key)col=i;}
    if(col<0)return;
    heads[col].classList.add(order);
    var numeric=heads[col].dataset.type==='number';
    var rows=Array.prototype.slice.call(body.rows);
    rows.sort(function(a,b){
      var x=a.cells[col].dataset.v,y=b.cells[col].dataset.v,c;
      if(numeric){c=(x===''?-1:parseFloat(x))-(y===''?-1:parseFloat(y));}else{c=x<y?-1:x>y?1:0;}
      return order==='asc'?c:-c;
    });
    rows.forEach(function(r){body.appendChild(r);});
    table.dataset.sorted=key+' '+order;
  }
  var heads=table.tHead.rows[0].cells;
  for(var i=0;i<heads.length;i++){(function(th){
    if(!th.dataset.key)return;
    th.addEventListener('click',function(){sort(th.dataset.key,th.classList.contains('asc')?'desc':'asc');});
  })(heads[i]);}
  var q=new URLSearchParams(location.search);
  if(q.get('sort'))sort(q.get('sort'),q.get('order')==='desc'?'desc':'asc');
})();
";

/// `3 calls, 1200 in / 300 out tokens, 812.5 ms, $0.0012`: the cost only when priced, the
/// tokens only when reported.
/// The pass rate's interval under its card: `<span class="muted">95% CI 30.1–95.4%</span>`.
fn interval_note(t: &Totals) -> String {
    t.pass_rate_interval.map_or(String::new(), |i| {
        format!(
            "<span class=\"muted\" id=\"pass-rate-interval\">95% CI {:.1}–{}</span>",
            i.low * 100.0,
            percent(i.high)
        )
    })
}

fn usage_text(u: &UsageTotals) -> String {
    let mut text = format!("{} call{}", u.calls, if u.calls == 1 { "" } else { "s" });
    if u.input_tokens + u.output_tokens > 0 {
        let _ = write!(
            text,
            ", {} in / {} out tokens",
            u.input_tokens, u.output_tokens
        );
    }
    if u.latency_ms > 0.0 {
        let _ = write!(text, ", {:.1} ms", u.latency_ms);
    }
    if let Some(cost) = u.cost_usd {
        let _ = write!(text, ", ${cost:.4}");
    }
    if u.unpriced_calls > 0 {
        let _ = write!(text, " ({} unpriced)", u.unpriced_calls);
    }
    text
}

/// The page up to the first row of the cases table: summary, suites, the table head.
/// `section` (HTML, a comparison) goes below the summary.
fn html_head(out: &mut String, report: &Report, section: &str) {
    let t = &report.totals;
    let _ = write!(
        *out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>proposal-eval report</title><style>{STYLE}</style></head><body>\n\
         <h1>proposal-eval report</h1>\n<p class=\"muted\">generated {}</p>\n",
        esc(&report.generated_at.to_rfc3339())
    );
    let _ = writeln!(
        *out,
        "<section class=\"cards\" id=\"summary\">\
         <div class=\"card\">cases<b id=\"total-cases\">{}</b></div>\
         <div class=\"card\">passed<b id=\"total-passed\" class=\"pass\">{}</b></div>\
         <div class=\"card\">failed<b id=\"total-failed\" class=\"fail\">{}</b></div>\
         <div class=\"card\">pass rate<b id=\"pass-rate\">{}</b>{}</div>\
         <div class=\"card\">replayed<b>{}</b></div>\
         <div class=\"card\">recorded<b>{}</b></div>\
         <div class=\"card\">stale<b>{}</b></div>{}</section>",
        t.cases,
        t.passed,
        t.failed,
        percent(t.pass_rate),
        interval_note(t),
        t.replayed + t.replayed_stale,
        t.recorded,
        t.stale + t.replayed_stale,
        t.usage.as_ref().map_or(String::new(), |u| format!(
            "<div class=\"card\">model calls<b id=\"total-usage\">{}</b></div>",
            esc(&usage_text(u))
        ))
    );
    if t.older > 0 {
        let _ = writeln!(
            *out,
            "<p class=\"muted\" id=\"older-note\">{} of {} result(s) are from an older run than the latest \
             (their test target or case did not run in it); they are marked <span class=\"older-mark\">older run</span>.</p>",
            t.older, t.cases
        );
    }
    if !report.unreadable_entries.is_empty() {
        out.push_str(
            "<div id=\"unreadable\"><p>Entry lines that could not be read were left out of the report \
             (their cases show an earlier result or none; run them again to write their entries):</p>\n<ul>\n",
        );
        for line in &report.unreadable_entries {
            let _ = writeln!(*out, "<li><code>{}</code></li>", esc(line));
        }
        out.push_str("</ul></div>\n");
    }

    out.push_str(section);
    for suite in &report.suites {
        let _ = write!(
            out,
            "<h2>{} <span class=\"muted\">({} · {} / {})</span></h2>\n<p>{} of {} passed ({})",
            esc(&suite.suite),
            esc(&suite.suite_dir),
            esc(&suite.package),
            esc(&suite.binary),
            suite.totals.passed,
            suite.totals.cases,
            suite.totals.pass_rate_text()
        );
        for e in &suite.evaluators {
            let _ = write!(
                *out,
                "; {}: {} of {} ({}), mean score {:.2}",
                esc(&e.evaluator),
                e.passed,
                e.cases,
                percent(e.pass_rate),
                e.mean_score
            );
        }
        if let Some(usage) = &suite.totals.usage {
            let _ = write!(*out, "; model calls: {}", esc(&usage_text(usage)));
        }
        out.push_str("</p>\n");
        if let Some(repeats) = &suite.repeats {
            let _ = write!(out, "<p class=\"repeats\">{}", esc(&repeats.describe()));
            if !repeats.flaky.is_empty() {
                let names: Vec<String> = repeats.flaky.iter().map(|t| esc(t).to_string()).collect();
                let _ = write!(out, ": <span class=\"flaky\">{}</span>", names.join(", "));
            }
            out.push_str("</p>\n");
        }
        if !suite.field_accuracy.is_empty() {
            out.push_str("<h3>Accuracy per field</h3>\n<div class=\"bars field-accuracy\">\n");
            for f in &suite.field_accuracy {
                let _ = writeln!(
                    *out,
                    "<span>{}</span><div class=\"bar\" title=\"{}\"><span style=\"width:{:.1}%\"></span></div><span>{} ({}/{})</span>",
                    esc(&f.path),
                    esc(&f.path),
                    f.accuracy * 100.0,
                    percent(f.accuracy),
                    f.hits,
                    f.total
                );
            }
            out.push_str("</div>\n");
        }
    }

    out.push_str(
        "<h2>Cases</h2>\n<table id=\"cases\"><thead><tr>\
         <th data-key=\"suite\">suite</th><th data-key=\"case\">case</th>\
         <th data-key=\"verdict\">verdict</th><th data-key=\"score\" data-type=\"number\">score</th>\
         <th data-key=\"recording\">recording</th><th data-key=\"ran\">ran</th>\
         <th data-key=\"usage\" data-type=\"number\">model calls</th>\
         <th>evaluators</th></tr></thead><tbody>\n",
    );
}

/// One row of the cases table; `i` numbers the row (a failing row links to `#failure-{i}`).
/// Written straight into `out` (rows are made on the test threads as cases finish).
fn html_row(out: &mut String, i: impl fmt::Display, c: &Entry) {
    let verdict = if c.passed { "pass" } else { "fail" };
    let (row_class, older_mark) = if c.older {
        (
            " class=\"older\"",
            " <span class=\"older-mark\">older run</span>",
        )
    } else {
        ("", "")
    };
    let _ = write!(
        out,
        "<tr data-test=\"{}\"{row_class}><td data-v=\"{}\">{} <span class=\"muted\">{}</span></td>\
         <td data-v=\"{}\" title=\"{}\">",
        esc(&c.test),
        esc(&c.suite),
        esc(&c.suite),
        esc(&c.binary),
        esc(&c.case),
        esc(c.description.as_deref().unwrap_or("")),
    );
    let _ = if c.passed {
        write!(out, "{}", esc(&c.case))
    } else {
        write!(out, "<a href=\"#failure-{i}\">{}</a>", esc(&c.case))
    };
    let _ = write!(
        out,
        "</td><td data-v=\"{verdict}\" class=\"{verdict}\">{verdict}</td><td data-v=\""
    );
    if let Some(score) = c.score {
        let _ = write!(out, "{score}");
    }
    out.push_str("\">");
    let _ = match &c.samples {
        Some(samples) => write!(
            out,
            "{} ± {} <span class=\"muted\">({}/{} samples)</span>",
            Score(samples.mean_score),
            Score(samples.std_error),
            samples.passed,
            samples.count()
        ),
        None => write!(out, "{}", Score(c.score)),
    };
    let recording = recording_text(c.recording);
    let _ = write!(
        out,
        "</td><td data-v=\"{recording}\">{recording}</td><td data-v=\"{}\" class=\"ran\">{}{older_mark}</td>\
         <td data-v=\"{}\">",
        c.finished_at.to_rfc3339(),
        Minute(c.finished_at),
        c.usage.as_ref().and_then(|u| u.cost_usd).unwrap_or(0.0),
    );
    if let Some(usage) = &c.usage {
        let _ = write!(out, "{}", esc(&usage_text(usage)));
    }
    out.push_str("</td><td>");
    for (n, e) in c.evaluators.iter().enumerate() {
        let comma = if n == 0 { "" } else { ", " };
        let _ = write!(out, "{comma}{} {}", esc(&e.evaluator), Score(Some(e.score)));
    }
    out.push_str("</td></tr>\n");
}

/// The failure section of the failing row `i`.
fn html_failure(out: &mut String, i: impl fmt::Display, c: &Entry) {
    let _ = writeln!(
        out,
        "<section class=\"failure\" id=\"failure-{i}\"><h3>{} <span class=\"muted\">({} / {})</span></h3>",
        esc(&c.test),
        esc(&c.package),
        esc(&c.binary)
    );
    let failed: Vec<&EvaluatorEntry> = c.evaluators.iter().filter(|e| !e.passed).collect();
    if failed.is_empty() {
        if let Some(failure) = &c.failure {
            let _ = writeln!(out, "<pre class=\"message\">{}</pre>", esc(failure));
        }
    }
    for e in failed {
        let _ = writeln!(
            out,
            "<p><b>{}</b> FAILED (score {}): {}</p>",
            esc(&e.evaluator),
            score_text(Some(e.score)),
            esc(&e.summary)
        );
        if !e.misses.is_empty() {
            out.push_str("<ul class=\"misses\">");
            for miss in &e.misses {
                let _ = write!(out, "<li><code>{}</code></li>", esc(miss));
            }
            out.push_str("</ul>\n");
        }
        out.push_str("<pre class=\"diff\">");
        for line in e.rendered.lines() {
            let class = if line.starts_with("---") || line.starts_with("+++") {
                ""
            } else if line.starts_with('-') {
                "del"
            } else if line.starts_with('+') {
                "add"
            } else if line.starts_with("@@") {
                "hunk"
            } else {
                ""
            };
            if class.is_empty() {
                let _ = writeln!(out, "{}", esc(line));
            } else {
                let _ = writeln!(out, "<span class=\"{class}\">{}</span>", esc(line));
            }
        }
        out.push_str("</pre>\n");
    }
    out.push_str("</section>\n");
}

/// The end of the cases table, the failure sections (`failures`, written by [`html_failure`]) and
/// the script.
fn html_tail(out: &mut String, any_failure: bool) {
    out.push_str("</tbody></table>\n");
    if any_failure {
        out.push_str("<h2>Failures</h2>\n");
    }
}

fn html_script(out: &mut String) {
    let _ = write!(out, "<script>{SCRIPT}</script>\n</body></html>\n");
}

fn html(report: &Report, section: &str) -> String {
    let mut out = String::new();
    html_head(&mut out, report, section);
    for (i, c) in report.cases.iter().enumerate() {
        html_row(&mut out, i, c);
    }
    html_tail(&mut out, report.cases.iter().any(|c| !c.passed));
    for (i, c) in report.cases.iter().enumerate() {
        if !c.passed {
            html_failure(&mut out, i, c);
        }
    }
    html_script(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_text_is_escaped_and_times_read_to_the_second() {
        assert_eq!(
            esc(r#"a<b> & "c" 'd' é"#).to_string(),
            "a&lt;b&gt; &amp; &quot;c&quot; &#39;d&#39; é"
        );
        assert_eq!(esc("").to_string(), "");
        assert_eq!(esc("&&").to_string(), "&amp;&amp;");
        let t: DateTime<Utc> = "2025-01-31T09:05:07.250Z".parse().unwrap();
        assert_eq!(Minute(t).to_string(), "2025-01-31 09:05:07 UTC");
        assert_eq!(
            Minute(t).to_string(),
            t.format("%Y-%m-%d %H:%M:%S UTC").to_string()
        );
    }

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
    fn entries_from_finished_processes_are_merged_latest_first() {
        let dir = tempfile::tempdir().unwrap();
        let fixture = dir.path().join("a.json");
        std::fs::write(&fixture, "{}").unwrap();
        let gone = dir.path().join("gone.json");
        let writers = dir.path().join("entries/demo/evals");
        std::fs::create_dir_all(&writers).unwrap();
        // A pid above any pid_max: its writer is surely finished.
        let first = writers.join("999999999-1.jsonl");
        let second = writers.join("999999999-2.jsonl");
        std::fs::write(
            &first,
            entry_line(&fixture, "a", "2026-01-01T00:00:00Z", false)
                + &entry_line(&gone, "b", "2026-01-01T00:00:00Z", true)
                + "{\"cut off by a kill",
        )
        .unwrap();
        std::fs::write(
            &second,
            entry_line(&fixture, "a", "2026-01-02T00:00:00Z", true),
        )
        .unwrap();

        let report = rebuild(dir.path()).unwrap();
        assert_eq!(
            report.cases.len(),
            1,
            "the case whose fixture is gone is dropped"
        );
        assert!(report.cases[0].passed, "the newer entry wins");
        assert_eq!(
            report.unreadable_entries.len(),
            1,
            "{:?}",
            report.unreadable_entries
        );
        assert!(
            !first.exists() && !second.exists(),
            "finished writers are compacted"
        );
        let merged = std::fs::read_to_string(writers.join(MERGED)).unwrap();
        assert_eq!(merged.lines().count(), 1);

        // Rebuilding again reads the merged file and gives the same cases.
        let again = rebuild(dir.path()).unwrap();
        assert_eq!(again.cases, report.cases);
        assert!(dir.path().join("report.html").exists());
    }

    /// An entry line of `binary` in `run`.
    pub(super) fn line_of_run(
        fixture: &Path,
        binary: &str,
        case: &str,
        at: &str,
        passed: bool,
        run: &str,
    ) -> String {
        let line =
            entry_line(fixture, case, at, passed).replace("\"evals\"", &format!("\"{binary}\""));
        line.replace(
            ",\"finished_at\"",
            &format!(",\"run\":\"{run}\",\"finished_at\""),
        )
    }

    /// `report.json` as written, without the time it was written.
    fn written_report(dir: &Path) -> serde_json::Value {
        let text = std::fs::read_to_string(dir.join("report.json")).unwrap();
        let mut report: serde_json::Value = serde_json::from_str(&text).unwrap();
        report["generated_at"] = serde_json::Value::Null;
        report
    }

    #[cfg(unix)]
    fn inode(path: &Path) -> u64 {
        std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(path).unwrap())
    }

    #[cfg(unix)]
    #[test]
    fn a_folder_no_run_touched_is_taken_from_its_section_as_a_full_rebuild_would_render_it() {
        let dir = tempfile::tempdir().unwrap();
        let fixtures = dir.path().join("fixtures");
        std::fs::create_dir_all(&fixtures).unwrap();
        let (a, b, c) = (
            fixtures.join("a.json"),
            fixtures.join("b.json"),
            fixtures.join("c.json"),
        );
        for f in [&a, &b, &c] {
            std::fs::write(f, "{}").unwrap();
        }
        let evals = dir.path().join("entries/demo/evals");
        let other = dir.path().join("entries/demo/other");
        std::fs::create_dir_all(&evals).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        // The other binary's results, from an earlier run: one failing.
        std::fs::write(
            other.join(MERGED),
            line_of_run(&b, "other", "b", "2026-01-01T00:00:00Z", true, "r1")
                + &line_of_run(&c, "other", "c", "2026-01-01T00:00:01Z", false, "r1"),
        )
        .unwrap();

        let meta = other.join(".section.meta");
        let line = |at: &str, run: &str| line_of_run(&a, "evals", "a", at, true, run);
        build::build(
            dir.path(),
            Some(own(&evals, &[line("2026-01-02T00:00:00Z", "r2")])),
            false,
        )
        .unwrap();
        assert!(meta.exists(), "the other binary's section is kept");
        let made = inode(&meta);

        // The next run of `evals`: the other folder is taken as it is, all of it older.
        let report = build::build(
            dir.path(),
            Some(own(&evals, &[line("2026-01-03T00:00:00Z", "r3")])),
            false,
        )
        .unwrap();
        assert_eq!(inode(&meta), made, "the section was used, not made again");
        assert_eq!(
            (
                report.totals.cases,
                report.totals.older,
                report.totals.failed
            ),
            (3, 2, 1)
        );
        assert_eq!(report.latest_run.as_deref(), Some("r3"));
        let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
        let link = html.split("href=\"#failure-").nth(1).unwrap();
        let anchor = &link[..link.find('"').unwrap()];
        assert!(
            html.contains(&format!("id=\"failure-{anchor}\"")),
            "{anchor}"
        );
        assert_eq!(html.matches("class=\"older\"").count(), 2);

        // The same report as every line read again.
        let taken = written_report(dir.path());
        rebuild(dir.path()).unwrap();
        assert_eq!(taken, written_report(dir.path()));
    }

    #[cfg(unix)]
    #[test]
    fn a_section_is_made_again_when_its_older_marks_change_or_a_fixture_goes() {
        let dir = tempfile::tempdir().unwrap();
        let fixtures = dir.path().join("fixtures");
        std::fs::create_dir_all(&fixtures).unwrap();
        let (a, c) = (fixtures.join("a.json"), fixtures.join("c.json"));
        std::fs::write(&a, "{}").unwrap();
        std::fs::write(&c, "{}").unwrap();
        let evals = dir.path().join("entries/demo/evals");
        let other = dir.path().join("entries/demo/other");
        std::fs::create_dir_all(&evals).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        let meta = other.join(".section.meta");

        // `other` runs in run r1: its section is made while its line is the latest.
        let c_line = line_of_run(&c, "other", "c", "2026-01-01T00:00:00Z", true, "r1");
        let report = build::build(
            dir.path(),
            Some(own(&other, std::slice::from_ref(&c_line))),
            false,
        )
        .unwrap();
        assert_eq!(report.totals.older, 0);
        let made = inode(&meta);

        // `evals` runs in r2: the other line is older now, so its section is rendered again.
        let a_line = |at: &str, run: &str| line_of_run(&a, "evals", "a", at, true, run);
        let report = build::build(
            dir.path(),
            Some(own(&evals, &[a_line("2026-01-02T00:00:00Z", "r2")])),
            false,
        )
        .unwrap();
        assert_eq!((report.totals.cases, report.totals.older), (2, 1));
        assert_ne!(inode(&meta), made, "made again");
        let taken = written_report(dir.path());
        assert_eq!(taken["cases"][1]["older"], true, "{taken}");

        // Its fixture is deleted: the next rebuild leaves its result out.
        std::fs::remove_file(&c).unwrap();
        let report = build::build(
            dir.path(),
            Some(own(&evals, &[a_line("2026-01-03T00:00:00Z", "r3")])),
            false,
        )
        .unwrap();
        assert_eq!(
            (report.totals.cases, report.totals.older),
            (1, 0),
            "{report:?}"
        );
        assert!(!other.join(MERGED).exists() && !meta.exists());
    }

    #[cfg(unix)]
    #[test]
    fn lines_without_a_run_in_a_kept_section_become_older_when_a_run_comes() {
        // The fixtures outside the report folder, whose time the rebuilds do not change.
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("fx")).unwrap();
        let (a, b) = (dir.path().join("fx/a.json"), dir.path().join("fx/b.json"));
        std::fs::write(&a, "{}").unwrap();
        std::fs::write(&b, "{}").unwrap();
        let evals = dir.path().join("entries/demo/evals");
        let other = dir.path().join("entries/demo/other");
        std::fs::create_dir_all(&evals).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(
            other.join(MERGED),
            entry_line(&b, "b", "2026-01-01T00:00:00Z", true).replace("\"evals\"", "\"other\""),
        )
        .unwrap();
        // Results written before runs were recorded: none is older.
        let a_line = entry_line(&a, "a", "2026-01-02T00:00:00Z", true);
        build::build(dir.path(), Some(own(&evals, &[a_line])), false).unwrap();
        assert!(other.join(".section.meta").exists());
        // A run with an id: the other binary's line is older now.
        let a_line = line_of_run(&a, "evals", "a", "2026-01-03T00:00:00Z", true, "r2");
        let report = build::build(dir.path(), Some(own(&evals, &[a_line])), false).unwrap();
        assert_eq!(report.totals.older, 1, "{report:?}");
        let taken = written_report(dir.path());
        rebuild(dir.path()).unwrap();
        assert_eq!(taken, written_report(dir.path()));
    }

    #[cfg(unix)]
    #[test]
    fn a_merged_file_with_newer_lines_of_a_run_that_ended_meanwhile_is_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("fx")).unwrap();
        let a = dir.path().join("fx/a.json");
        std::fs::write(&a, "{}").unwrap();
        let evals = dir.path().join("entries/demo/evals");
        std::fs::create_dir_all(&evals).unwrap();
        // Two whole runs of the target side by side: the one that started later ends first.
        let later = line_of_run(&a, "evals", "a", "2026-01-03T00:00:00Z", false, "r2");
        let first = build::Own {
            path: evals.join("111-1.jsonl"),
            count: 1,
            whole: true,
            prepared: None,
        };
        std::fs::write(&first.path, &later).unwrap();
        build::build(dir.path(), Some(first), false).unwrap();
        let earlier = line_of_run(&a, "evals", "a", "2026-01-02T00:00:00Z", true, "r1");
        let report = build::build(dir.path(), Some(own(&evals, &[earlier])), true).unwrap();
        assert_eq!(
            report.cases[0].run.as_deref(),
            Some("r2"),
            "the newer line wins"
        );
    }

    /// A finishing process's own entry file, as `finish` hands it over.
    pub(super) fn own(folder: &Path, lines: &[String]) -> build::Own {
        let path = folder.join(format!("{}-7.jsonl", std::process::id()));
        std::fs::write(&path, lines.concat()).unwrap();
        build::Own {
            path,
            count: lines.len(),
            whole: true,
            prepared: None,
        }
    }

    #[test]
    fn a_finishing_process_folds_its_own_entries_into_the_merged_file() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
        std::fs::write(&a, "{}").unwrap();
        std::fs::write(&b, "{}").unwrap();
        let evals = dir.path().join("entries/demo/evals");
        let other = dir.path().join("entries/demo/other");
        std::fs::create_dir_all(&evals).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        let old_a = entry_line(&a, "a", "2026-01-01T00:00:00Z", false);
        let old_b = entry_line(&b, "b", "2026-01-01T00:00:00Z", false);
        std::fs::write(evals.join(MERGED), old_a.clone() + &old_b).unwrap();
        let other_binary =
            entry_line(&a, "a", "2026-01-01T00:00:00Z", true).replace("\"evals\"", "\"other\"");
        std::fs::write(other.join(MERGED), &other_binary).unwrap();

        // A run of one case: the other case's older line stays in the merged file.
        let new_a = entry_line(&a, "a", "2026-01-02T00:00:00Z", true);
        let mine = own(&evals, std::slice::from_ref(&new_a));
        let own_file = mine.path.clone();
        let report = build::build(dir.path(), Some(mine), true).unwrap();
        assert_eq!(report.cases.len(), 3);
        assert_eq!(
            report.cases.iter().filter(|c| c.passed).count(),
            2,
            "the new `a` and the other binary's"
        );
        assert!(!own_file.exists());
        assert_eq!(
            std::fs::read_to_string(evals.join(MERGED)).unwrap(),
            new_a.clone() + &old_b
        );

        // A run of every case: its own file becomes the merged file, line for line.
        let (newer_a, newer_b) = (
            entry_line(&a, "a", "2026-01-03T00:00:00Z", true),
            entry_line(&b, "b", "2026-01-03T00:00:00Z", true),
        );
        let mine = own(&evals, &[newer_b.clone(), newer_a.clone()]);
        let report = build::build(dir.path(), Some(mine), true).unwrap();
        assert!(report.cases.iter().all(|c| c.passed), "{report:?}");
        assert_eq!(
            std::fs::read_to_string(evals.join(MERGED)).unwrap(),
            newer_b + &newer_a
        );
        assert_eq!(
            std::fs::read_to_string(other.join(MERGED)).unwrap(),
            other_binary
        );
        let left: Vec<String> = std::fs::read_dir(&evals)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| !name.starts_with(".section."))
            .collect();
        assert_eq!(
            left,
            [MERGED],
            "only the merged file is left, beside its section"
        );
        // Rebuilt from the files alone, the report is the same.
        assert_eq!(rebuild(dir.path()).unwrap().cases, report.cases);
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
        let quick = EntryKey::by_position(&line).expect("a line as record writes it");
        let slow: EntryKey = serde_json::from_str(&line).unwrap();
        assert_eq!(
            (&quick.package, &quick.binary, &quick.suite_dir, &quick.case),
            (&slow.package, &slow.binary, &slow.suite_dir, &slow.case)
        );
        assert_eq!(quick.finished_at, entry.finished_at);
        // An escape in a key field is left to serde, which decodes it.
        let escaped = line.replace("\"case\":\"sub/a\"", "\"case\":\"sub\\\"a\"");
        assert!(EntryKey::by_position(&escaped).is_none());
        assert_eq!(EntryKey::of_line(&escaped).unwrap().case, "sub\"a");
        assert!(
            EntryKey::of_line(&line[..line.len() - 5]).is_none(),
            "a cut line"
        );
    }

    #[test]
    fn own_results_stand_and_others_whose_fixture_is_gone_are_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let (a, added, gone) = (
            dir.path().join("a.json"),
            dir.path().join("added.json"),
            dir.path().join("gone.json"),
        );
        std::fs::write(&added, "{}").unwrap();
        let evals = dir.path().join("entries/demo/evals");
        std::fs::create_dir_all(&evals).unwrap();
        std::fs::write(
            evals.join("999999999-1.jsonl"),
            entry_line(&added, "added", "2026-01-01T00:00:00Z", true)
                + &entry_line(&gone, "gone", "2026-01-01T00:00:00Z", true),
        )
        .unwrap();
        // This process ran `a` just now: its result is not looked up on disk (no stat per case
        // of a whole run), even though its file is gone by the time the report is built.
        let mine = own(&evals, &[entry_line(&a, "a", "2026-01-02T00:00:00Z", true)]);
        let report = build::build(dir.path(), Some(mine), true).unwrap();
        let cases: Vec<&str> = report.cases.iter().map(|c| c.case.as_str()).collect();
        assert_eq!(cases, ["a", "added"]);
    }

    #[test]
    fn a_live_writers_file_is_read_but_kept() {
        let dir = tempfile::tempdir().unwrap();
        let fixture = dir.path().join("a.json");
        std::fs::write(&fixture, "{}").unwrap();
        let writers = dir.path().join("entries/demo/evals");
        std::fs::create_dir_all(&writers).unwrap();
        let mine = writers.join(format!("{}-1.jsonl", std::process::id()));
        std::fs::write(
            &mine,
            entry_line(&fixture, "a", "2026-01-01T00:00:00Z", true),
        )
        .unwrap();
        let report = rebuild(dir.path()).unwrap();
        assert_eq!(report.cases.len(), 1);
        assert!(mine.exists(), "this process may still append to it");
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
        let folder = |binary: &str| {
            let folder = out.join("entries/demo").join(binary);
            std::fs::create_dir_all(&folder).unwrap();
            folder
        };
        // `other` ran in run 1 only; `evals` in runs 1 and 2 (case b only in 2: a filtered run);
        // `removed` ran in run 2 but its test file is gone since.
        std::fs::write(
            folder("other").join(MERGED),
            run_line(&root, "other", "a", "run-1", "2026-01-01T00:00:00Z"),
        )
        .unwrap();
        std::fs::write(
            folder("evals").join(MERGED),
            run_line(&root, "evals", "a", "run-1", "2026-01-01T00:00:01Z")
                + &run_line(&root, "evals", "b", "run-1", "2026-01-01T00:00:01Z"),
        )
        .unwrap();
        std::fs::write(
            folder("evals").join("999999999-1.jsonl"),
            run_line(&root, "evals", "b", "run-2", "2026-01-02T00:00:00Z"),
        )
        .unwrap();
        std::fs::write(
            folder("removed").join(MERGED),
            run_line(&root, "removed", "a", "run-2", "2026-01-02T00:00:01Z"),
        )
        .unwrap();
        std::fs::write(root.join("tests/gone.rs"), "").unwrap();

        let report = rebuild(&out).unwrap();
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
        assert_eq!(
            html.matches("<tr data-test=\"s::a\" class=\"older\">")
                .count(),
            2
        );
        assert!(
            html.contains("2 of 3 result(s) are from an older run"),
            "{html}"
        );
        assert!(
            html.contains(">2026-01-02 00:00:00 UTC</td>"),
            "every row shows when it ran"
        );
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
        let key = EntryKey::by_position(&line).unwrap();
        assert_eq!(key.run.as_deref(), Some("parent-7-99"));
        // Without a run, a failure message is the string before `finished_at`: serde decides.
        let mut failed = entry.clone();
        failed.run = None;
        failed.failure = Some("x".into());
        let line = serde_json::to_string(&failed).unwrap();
        assert!(EntryKey::by_position(&line).is_none());
        assert_eq!(EntryKey::of_line(&line).unwrap().run, None);

        // A case that called a model: its usage is written before its run, which stays last.
        let mut called = entry.clone();
        called.usage = Some(UsageTotals {
            calls: 2,
            ..UsageTotals::default()
        });
        let line = serde_json::to_string(&called).unwrap();
        assert!(line.ends_with(r#","run":"parent-7-99","finished_at":"2026-01-02T00:00:00Z"}"#));
        assert_eq!(
            EntryKey::by_position(&line).unwrap().run.as_deref(),
            Some("parent-7-99")
        );
        // Such a line as the version before wrote it, usage last: serde reads its run.
        let old = line.replace(
            r#""usage":{"calls":2,"input_tokens":0,"output_tokens":0,"latency_ms":0.0},"run":"parent-7-99","#,
            r#""run":"parent-7-99","usage":{"calls":2,"input_tokens":0,"output_tokens":0,"latency_ms":0.0},"#,
        );
        assert_ne!(old, line);
        assert!(EntryKey::by_position(&old).is_none());
        assert_eq!(
            EntryKey::of_line(&old).unwrap().run.as_deref(),
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
        assert_eq!(capped_value(&small), small);
        let large = serde_json::json!({ "a": "é".repeat(TEXT_CAP) });
        let capped = capped_value(&large);
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

    /// Two rows as the table has them, to the byte: a passing case, and a failing repeated one
    /// of an older run with usage, a description to escape and two evaluators.
    #[test]
    fn rows_are_written_to_the_byte() {
        let line = entry_line(
            Path::new("/f/a.json"),
            "sub/a",
            "2026-01-02T03:04:05.678Z",
            true,
        );
        let passing: Entry = serde_json::from_str(line.trim_end()).unwrap();
        let mut failing = passing.clone();
        failing.passed = false;
        failing.older = true;
        failing.score = Some(0.375);
        failing.description = Some("a <b> & \"c\"".into());
        failing.usage = Some(UsageTotals {
            calls: 2,
            input_tokens: 10,
            output_tokens: 5,
            latency_ms: 12.5,
            cost_usd: Some(0.25),
            unpriced_calls: 0,
        });
        failing.samples = Some(Samples::new(
            &[(true, Some(0.5)), (false, Some(0.25))],
            crate::repeat::PassRule::All,
        ));
        for (name, score) in [("strict", 0.5), ("field_accuracy", 0.25)] {
            failing.evaluators.push(EvaluatorEntry {
                evaluator: name.into(),
                score,
                passed: false,
                summary: String::new(),
                misses: Vec::new(),
                fields: Vec::new(),
                rendered: String::new(),
                verdicts: Vec::new(),
                alignment: None,
            });
        }
        let mut out = String::new();
        html_row(&mut out, 7, &passing);
        html_row(&mut out, format_args!("t-{}", 8), &failing);
        let want = concat!(
            "<tr data-test=\"s::sub/a\"><td data-v=\"s\">s <span class=\"muted\">evals</span></td>",
            "<td data-v=\"sub/a\" title=\"\">sub/a</td><td data-v=\"pass\" class=\"pass\">pass</td>",
            "<td data-v=\"1\">1</td><td data-v=\"replayed\">replayed</td>",
            "<td data-v=\"2026-01-02T03:04:05.678+00:00\" class=\"ran\">2026-01-02 03:04:05 UTC</td>",
            "<td data-v=\"0\"></td><td></td></tr>\n",
            "<tr data-test=\"s::sub/a\" class=\"older\"><td data-v=\"s\">s <span class=\"muted\">evals</span></td>",
            "<td data-v=\"sub/a\" title=\"a &lt;b&gt; &amp; &quot;c&quot;\"><a href=\"#failure-t-8\">sub/a</a></td>",
            "<td data-v=\"fail\" class=\"fail\">fail</td>",
            "<td data-v=\"0.375\">0.38 ± 0.12 <span class=\"muted\">(1/2 samples)</span></td>",
            "<td data-v=\"replayed\">replayed</td>",
            "<td data-v=\"2026-01-02T03:04:05.678+00:00\" class=\"ran\">2026-01-02 03:04:05 UTC <span class=\"older-mark\">older run</span></td>",
            "<td data-v=\"0.25\">2 calls, 10 in / 5 out tokens, 12.5 ms, $0.2500</td>",
            "<td>strict 0.50, field_accuracy 0.25</td></tr>\n",
        );
        assert_eq!(out, want);
    }

    #[test]
    fn html_is_escaped() {
        assert_eq!(
            esc("<a href=\"x\">&'").to_string(),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }

    #[test]
    fn buckets() {
        let d = distribution([0.0, 0.05, 0.5, 1.0, 0.99].into_iter());
        assert_eq!(d.len(), 10);
        assert_eq!(d[0].count, 2);
        assert_eq!(d[5].count, 1);
        assert_eq!(d[9].count, 2);
    }

    /// A line whose key reads but whose entry does not, in a file read whole and in one read
    /// at offsets (over 256 KiB), is left out and listed with its file, line and column, as is
    /// a line cut off by a kill; a file with many is listed up to 20 lines, then counted.
    #[test]
    fn unreadable_entry_lines_are_named_by_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let writers = dir.path().join("entries/demo/evals");
        std::fs::create_dir_all(&writers).unwrap();
        let fixture = dir.path().join("a.json");
        std::fs::write(&fixture, "{}").unwrap();
        let wrong_type = |line: String| line.replace("\"passed\":true", "\"passed\":1");
        let small = writers.join("999999999-1.jsonl");
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
        assert!(large.len() > 256 * 1024);
        let big = writers.join("999999999-2.jsonl");
        std::fs::write(&big, &large).unwrap();
        let many = writers.join("999999999-3.jsonl");
        std::fs::write(&many, "not json\n".repeat(25)).unwrap();

        let report = rebuild(dir.path()).unwrap();
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
        assert!(html.contains(&format!("<li><code>{}</code></li>", esc(&expected[0]))));

        let summary = unreadable_summary(&report.unreadable_entries);
        assert!(summary.starts_with("warning: report entry lines that could not be read"));
        assert!(
            summary.contains(&format!("\n  {}\n", expected[21])),
            "{summary}"
        );
        assert_eq!(unreadable_summary(&[]), "");
    }
}
