//! Run reports: `target/proposal-eval/report.json` and a self-contained `report.html` beside it.
//!
//! Every test process appends one JSON line per case to its own entry file,
//! `entries/<package>/<test binary>/<pid>-<start>.jsonl`: one `write` per case, no temp files,
//! no fsync (a report is derived data; a line cut off by a kill is skipped). Separate files per
//! process mean parallel test threads and nextest's one process per test never interleave or lose
//! an entry.
//!
//! [`rebuild`] aggregates the entries into `report.json` and `report.html`, keeping the latest
//! entry of each case, and compacts the files of finished processes into one `merged.jsonl` per
//! package and binary folder.
//! It runs under a lock file:
//!
//! - at the end of a [`Harness`](crate::Harness) run, and when a `#[proposal_eval]` test binary
//!   exits (an `atexit` hook registered by its first case);
//! - always by `cargo proposal-eval report`.
//!
//! A finishing process marks the report dirty (after its last entry) and rebuilds only if the
//! mark is set and it wins the lock; it clears the mark before reading and re-checks it after
//! unlocking, so the last entry of a run is never left out. Under nextest, where every test is a
//! process, a rebuild is skipped when the report is less than two seconds old (the mark stays
//! set): rebuilds are then bounded by the run's length, not its number of tests, and
//! `cargo proposal-eval report` after the run brings the report up to date.

pub mod junit;
pub mod review;
pub mod status;

use crate::layout::{report_dir, safe};
use crate::run::CaseResult;
pub use crate::run::RecordingUse;
use crate::suite::{LoadedCase, Suite};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The report format this version writes.
pub const FORMAT: u32 = 1;

/// One evaluator's result in an entry.
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
}

/// One field of a field-accuracy verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FieldEntry {
    /// The field's path.
    pub path: String,
    /// Whether it matched.
    pub hit: bool,
}

/// One case's result, as its entry file holds it.
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
    /// When the case finished.
    pub finished_at: DateTime<Utc>,
}

impl Entry {
    /// The entry of a case that just ran.
    pub(crate) fn new(suite: &Suite, loaded: &LoadedCase, result: &CaseResult) -> Entry {
        let evaluators: Vec<EvaluatorEntry> = result
            .evaluators
            .iter()
            .map(|e| EvaluatorEntry {
                evaluator: e.evaluator.clone(),
                score: e.score,
                passed: e.passed,
                summary: strip_ansi(&e.summary),
                misses: e.misses.iter().map(|m| strip_ansi(m)).collect(),
                fields: e
                    .fields
                    .iter()
                    .map(|(path, hit)| FieldEntry {
                        path: path.clone(),
                        hit: *hit,
                    })
                    .collect(),
                rendered: strip_ansi(&e.rendered),
            })
            .collect();
        let score = if evaluators.is_empty() {
            None
        } else {
            Some(evaluators.iter().map(|e| e.score).sum::<f64>() / evaluators.len() as f64)
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
            failure: result.failure.as_deref().map(strip_ansi),
            finished_at: Utc::now(),
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

/// This process's entries: its entry file, opened by the first entry, and the entries written
/// to it, which the end-of-run rebuild takes from memory instead of reading them back.
struct Sink {
    file: Option<std::fs::File>,
    path: PathBuf,
    /// Every entry with its line, in the order written.
    entries: Vec<(Entry, String)>,
    /// Whether every line reached the file (then the file can become the merged file as is).
    whole: bool,
}

static SINK: Mutex<Option<Sink>> = Mutex::new(None);

/// Appends one case's entry to this process's entry file. Failing to write a report never fails
/// a test.
pub(crate) fn record(suite: &Suite, loaded: &LoadedCase, result: &CaseResult) {
    let entry = Entry::new(suite, loaded, result);
    let Ok(mut line) = serde_json::to_string(&entry) else {
        return;
    };
    line.push('\n');
    let mut sink = SINK.lock().unwrap_or_else(|p| p.into_inner());
    let sink = sink.get_or_insert_with(|| {
        let folder = report_dir()
            .join("entries")
            .join(safe(&entry.package))
            .join(safe(&entry.binary));
        let started = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let path = folder.join(format!("{}-{started}.jsonl", std::process::id()));
        let file = std::fs::create_dir_all(&folder)
            .and_then(|()| {
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&path)
            })
            .ok();
        Sink {
            whole: file.is_some(),
            file,
            path,
            entries: Vec::new(),
        }
    });
    let written = match sink.file.as_mut() {
        Some(file) => file.write_all(line.as_bytes()).is_ok(),
        None => false,
    };
    sink.whole &= written;
    line.pop();
    sink.entries.push((entry, line));
}

const DIRTY: &str = ".dirty";
const LOCK: &str = ".rebuild.lock";
const MERGED: &str = "merged.jsonl";
/// A lock older than this is left over from a killed process.
const STALE_LOCK: std::time::Duration = std::time::Duration::from_secs(120);
/// Under nextest, a report younger than this is not rebuilt by a finishing test process.
const NEXTEST_REBUILD_INTERVAL: std::time::Duration = std::time::Duration::from_secs(2);

/// The cases a harness found in its suite when it started: an entry of one of them needs no
/// look at the file system to know its fixture exists. Any other entry is checked on disk (a
/// fixture may have been added while the run went on).
pub(crate) struct KnownCases {
    /// The suite folder, absolute, as entries' fixture paths start.
    pub dir: PathBuf,
    /// Case paths, as entries hold them.
    pub cases: std::collections::HashSet<String>,
}

impl KnownCases {
    /// Whether `entry` is of a case that no longer exists.
    fn gone(known: Option<&KnownCases>, entry: &Entry) -> bool {
        let known = known.is_some_and(|known| {
            known.cases.contains(&entry.case) && entry.fixture.starts_with(&known.dir)
        });
        !known && !entry.fixture.exists()
    }
}

/// Rebuilds the report if an entry was written since the last rebuild and no other process is
/// rebuilding it. Called at the end of a harness run (with the cases it found) and at exit of a
/// macro test binary.
pub(crate) fn finish(known: Option<&KnownCases>) {
    let mut sink = SINK.lock().unwrap_or_else(|p| p.into_inner());
    let wrote = sink.is_some();
    let dir = report_dir();
    let (dirty, lock) = (dir.join(DIRTY), dir.join(LOCK));
    if wrote {
        let _ = std::fs::write(&dirty, b"");
    }
    if std::env::var_os("NEXTEST_RUN_ID").is_some() {
        let young = std::fs::metadata(dir.join("report.json"))
            .and_then(|m| m.modified())
            .ok()
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
            return;
        }
        let _ = std::fs::remove_file(&dirty);
        // This process's entries are handed over from memory, once: its file may become the
        // merged file, and a later round (or a later run in this process, with a file of its
        // own) reads whatever is left on disk like any other writer's.
        let own = sink.take().map(|sink| Own {
            path: sink.path,
            entries: sink.entries,
            whole: sink.whole,
        });
        // The process ends next: freeing thousands of entries one by one would only delay it.
        if let Ok(report) = rebuild_locked(&dir, own, known) {
            std::mem::forget(report);
        }
        let _ = std::fs::remove_file(&lock);
    }
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
            let _ = std::panic::catch_unwind(|| finish(None));
        }
        crate::sys::at_exit(at_exit);
    });
}

/// The pass/fail counts and recording use of a group of cases.
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
        self.pass_rate = self.passed as f64 / self.cases as f64;
    }
}

/// How many scores fell in `[from, to)` (the last bucket includes 1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    /// Lower bound.
    pub from: f64,
    /// Upper bound.
    pub to: f64,
    /// Scores in the bucket.
    pub count: usize,
}

fn distribution(scores: impl Iterator<Item = f64>) -> Vec<Bucket> {
    let mut counts = [0usize; 10];
    for score in scores {
        let i = ((score.clamp(0.0, 1.0) * 10.0).floor() as usize).min(9);
        counts[i] += 1;
    }
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

/// One evaluator across a suite.
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
}

/// `report.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// [`FORMAT`].
    pub format: u32,
    /// When the report was built.
    pub generated_at: DateTime<Utc>,
    /// Counts over every case.
    pub totals: Totals,
    /// Per suite and test binary.
    pub suites: Vec<SuiteReport>,
    /// Every case's latest entry, sorted by package, binary, suite and case.
    pub cases: Vec<Entry>,
    /// Entry files that could not be read (left over from another version), skipped.
    #[serde(default)]
    pub unreadable_entries: Vec<String>,
}

impl Report {
    /// Aggregates entries.
    pub fn from_entries(mut cases: Vec<Entry>) -> Report {
        cases.sort_by(|a, b| {
            (&a.package, &a.binary, &a.suite_dir, &a.case).cmp(&(
                &b.package,
                &b.binary,
                &b.suite_dir,
                &b.case,
            ))
        });
        let mut totals = Totals::default();
        let mut groups: BTreeMap<(&str, &str, &str), Vec<&Entry>> = BTreeMap::new();
        for entry in &cases {
            totals.add(entry);
            groups
                .entry((&entry.package, &entry.binary, &entry.suite_dir))
                .or_default()
                .push(entry);
        }
        let suites = groups.into_values().map(suite_report).collect();
        Report {
            format: FORMAT,
            generated_at: Utc::now(),
            totals,
            suites,
            cases,
            unreadable_entries: Vec::new(),
        }
    }

    /// The HTML page: one file, no network.
    pub fn to_html(&self) -> String {
        html(self)
    }
}

fn suite_report(entries: Vec<&Entry>) -> SuiteReport {
    let first = entries[0];
    let mut totals = Totals::default();
    let mut evaluators: BTreeMap<&str, Vec<&EvaluatorEntry>> = BTreeMap::new();
    let mut fields: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for entry in &entries {
        totals.add(entry);
        for e in &entry.evaluators {
            evaluators.entry(&e.evaluator).or_default().push(e);
            for field in &e.fields {
                let counts = fields.entry(&field.path).or_default();
                counts.1 += 1;
                if field.hit {
                    counts.0 += 1;
                }
            }
        }
    }
    SuiteReport {
        suite: first.suite.clone(),
        suite_dir: first.suite_dir.clone(),
        package: first.package.clone(),
        binary: first.binary.clone(),
        totals,
        score_distribution: distribution(entries.iter().filter_map(|e| e.score)),
        evaluators: evaluators
            .into_iter()
            .map(|(name, results)| {
                let passed = results.iter().filter(|r| r.passed).count();
                EvaluatorSummary {
                    evaluator: name.to_string(),
                    cases: results.len(),
                    passed,
                    pass_rate: passed as f64 / results.len() as f64,
                    mean_score: results.iter().map(|r| r.score).sum::<f64>() / results.len() as f64,
                    score_distribution: distribution(results.iter().map(|r| r.score)),
                }
            })
            .collect(),
        field_accuracy: fields
            .into_iter()
            .map(|(path, (hits, total))| FieldAccuracy {
                path: path.to_string(),
                hits,
                total,
                accuracy: hits as f64 / total as f64,
            })
            .collect(),
        last_finished_at: entries
            .iter()
            .map(|e| e.finished_at)
            .max()
            .unwrap_or_else(Utc::now),
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
    let result = rebuild_locked(dir, None, None);
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

/// The entries of the finishing process, handed to the rebuild from memory.
struct Own {
    /// Its entry file.
    path: PathBuf,
    entries: Vec<(Entry, String)>,
    /// Whether the file holds exactly these lines.
    whole: bool,
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
        let (_, finished) = line
            .strip_suffix("\"}")?
            .rsplit_once(",\"finished_at\":\"")?;
        let finished_at = DateTime::parse_from_rfc3339(finished).ok()?.to_utc();
        Some(EntryKey {
            package: package.into(),
            binary: binary.into(),
            suite_dir: suite_dir.into(),
            case: case.into(),
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

fn key_of(entry: &Entry) -> String {
    let mut key = String::new();
    case_key(
        &mut key,
        &entry.package,
        &entry.binary,
        &entry.suite_dir,
        &entry.case,
    );
    key
}

/// The latest entry of one case, and the file its line came from (`None`: this process).
struct Latest {
    entry: Entry,
    line: String,
    file: Option<PathBuf>,
}

/// Reads one entry file (`.jsonl`: one entry per line; `.json`: one entry) into `latest`; lines
/// older than the case's entry already there are skipped after reading their key only. Returns
/// how many lines could not be read.
fn read_entries(
    path: &Path,
    latest: &mut BTreeMap<String, Latest>,
    known: Option<&KnownCases>,
) -> usize {
    let Ok(text) = std::fs::read_to_string(path) else {
        return 1;
    };
    let single = path.extension().and_then(|e| e.to_str()) == Some("json");
    let lines: Vec<&str> = if single {
        vec![text.as_str()]
    } else {
        text.lines().filter(|l| !l.trim().is_empty()).collect()
    };
    let mut bad = 0;
    let mut lookup = String::new();
    for line in lines {
        let Some(key) = EntryKey::of_line(line) else {
            bad += 1;
            continue;
        };
        case_key(
            &mut lookup,
            &key.package,
            &key.binary,
            &key.suite_dir,
            &key.case,
        );
        if latest
            .get(lookup.as_str())
            .is_some_and(|l| l.entry.finished_at >= key.finished_at)
        {
            continue;
        }
        let Ok(entry) = serde_json::from_str::<Entry>(line) else {
            bad += 1;
            continue;
        };
        // An entry whose fixture is gone is dropped: the case no longer exists.
        if KnownCases::gone(known, &entry) {
            continue;
        }
        let line = if single {
            match serde_json::to_string(&entry) {
                Ok(line) => line,
                Err(_) => continue,
            }
        } else {
            line.to_string()
        };
        latest.insert(
            lookup.clone(),
            Latest {
                entry,
                line,
                file: Some(path.to_path_buf()),
            },
        );
    }
    bad
}

fn rebuild_locked(
    dir: &Path,
    own: Option<Own>,
    known: Option<&KnownCases>,
) -> std::io::Result<Report> {
    let entries_dir = dir.join("entries");
    let mut latest: BTreeMap<String, Latest> = BTreeMap::new();
    // This process's entries are the newest of their cases: taken first, they let every older
    // line of the same cases be skipped unparsed.
    let (own_path, own_count, own_whole) = match own {
        Some(own) => {
            let count = own.entries.len();
            for (entry, line) in own.entries {
                latest.insert(
                    key_of(&entry),
                    Latest {
                        entry,
                        line,
                        file: None,
                    },
                );
            }
            (Some(own.path), count, own.whole)
        }
        None => (None, 0, false),
    };
    let own_path = own_path.as_deref();
    let mut unreadable = Vec::new();
    // Per folder (one per package and test binary): the files to fold into its merged file.
    let mut compact: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
    if entries_dir.is_dir() {
        for item in walkdir::WalkDir::new(&entries_dir)
            .sort_by_file_name()
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file())
        {
            let path = item.path();
            let ext = path.extension().and_then(|e| e.to_str());
            if !matches!(ext, Some("json") | Some("jsonl"))
                || item.file_name().to_string_lossy().starts_with('.')
            {
                continue;
            }
            let folder = path.parent().unwrap_or(&entries_dir).to_path_buf();
            if Some(path) == own_path {
                compact.entry(folder).or_default().push(path.to_path_buf());
                continue;
            }
            // Asked before reading: a writer found finished has written its last line.
            let finished_writer =
                ext == Some("jsonl") && item.file_name() != MERGED && !writer_alive(path);
            let bad = read_entries(path, &mut latest, known);
            if bad > 0 {
                unreadable.push(format!(
                    "{} ({bad} unreadable)",
                    path.strip_prefix(dir).unwrap_or(path).to_string_lossy()
                ));
            }
            // A single-entry `.json` file (written by hand, or by an older version) is folded
            // into the merged file like a finished writer's; one that does not parse is kept.
            if finished_writer || (ext == Some("json") && bad == 0) {
                compact.entry(folder).or_default().push(path.to_path_buf());
            }
        }
    }
    for (folder, files) in &compact {
        let merged = folder.join(MERGED);
        // Each folder's merged file holds the latest lines that came from that folder.
        let from_here = |l: &&Latest| match &l.file {
            Some(file) => file.parent() == Some(folder.as_path()),
            None => own_path.and_then(Path::parent) == Some(folder.as_path()),
        };
        let lines: Vec<&Latest> = latest.values().filter(from_here).collect();
        // A full run replaces every older line: its own file, written line by line, already is
        // the merged file.
        let own_only =
            own_whole && lines.len() == own_count && lines.iter().all(|l| l.file.is_none());
        match own_path {
            Some(own_file) if own_only && files.iter().any(|f| f == own_file) => {
                std::fs::rename(own_file, &merged)?;
            }
            _ => {
                let mut text = String::new();
                for l in &lines {
                    text.push_str(&l.line);
                    text.push('\n');
                }
                crate::files::replace_file(&merged, text.as_bytes(), false)?;
            }
        }
        for file in files {
            let _ = std::fs::remove_file(file);
        }
    }
    let line_bytes: usize = latest.values().map(|l| l.line.len()).sum();
    let entries: Vec<Entry> = latest.into_values().map(|l| l.entry).collect();
    let mut report = Report::from_entries(entries);
    unreadable.sort();
    report.unreadable_entries = unreadable;
    // The two renderings are independent: on two cores they take the time of the longer one.
    std::thread::scope(|scope| {
        let html = scope.spawn(|| {
            crate::files::replace_file(&dir.join("report.html"), report.to_html().as_bytes(), false)
        });
        // Sized from the entries' lines up front: growing a buffer of megabytes step by step
        // costs page faults and copies.
        let mut json = Vec::with_capacity(line_bytes * 3 / 2 + 4096);
        serde_json::to_writer_pretty(&mut json, &report).map_err(std::io::Error::other)?;
        json.push(b'\n');
        crate::files::replace_file(&dir.join("report.json"), &json, false)?;
        html.join()
            .map_err(|_| std::io::Error::other("rendering report.html panicked"))?
    })?;
    Ok(report)
}

/// Escapes text for HTML content and attribute values.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn percent(rate: f64) -> String {
    format!("{:.1}%", rate * 100.0)
}

fn score_text(score: Option<f64>) -> String {
    match score {
        Some(s) if s.fract() == 0.0 => format!("{s}"),
        Some(s) => format!("{s:.2}"),
        None => "–".into(),
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

fn html(report: &Report) -> String {
    let t = &report.totals;
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>proposal-eval report</title><style>{STYLE}</style></head><body>\n\
         <h1>proposal-eval report</h1>\n<p class=\"muted\">generated {}</p>\n",
        esc(&report.generated_at.to_rfc3339())
    );
    let _ = writeln!(
        out,
        "<section class=\"cards\" id=\"summary\">\
         <div class=\"card\">cases<b id=\"total-cases\">{}</b></div>\
         <div class=\"card\">passed<b id=\"total-passed\" class=\"pass\">{}</b></div>\
         <div class=\"card\">failed<b id=\"total-failed\" class=\"fail\">{}</b></div>\
         <div class=\"card\">pass rate<b id=\"pass-rate\">{}</b></div>\
         <div class=\"card\">replayed<b>{}</b></div>\
         <div class=\"card\">recorded<b>{}</b></div>\
         <div class=\"card\">stale<b>{}</b></div></section>",
        t.cases,
        t.passed,
        t.failed,
        percent(t.pass_rate),
        t.replayed + t.replayed_stale,
        t.recorded,
        t.stale + t.replayed_stale
    );
    if !report.unreadable_entries.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"muted\">{} entry file(s) could not be read and were skipped.</p>",
            report.unreadable_entries.len()
        );
    }

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
            percent(suite.totals.pass_rate)
        );
        for e in &suite.evaluators {
            let _ = write!(
                out,
                "; {}: {} of {} ({}), mean score {:.2}",
                esc(&e.evaluator),
                e.passed,
                e.cases,
                percent(e.pass_rate),
                e.mean_score
            );
        }
        out.push_str("</p>\n");
        if !suite.field_accuracy.is_empty() {
            out.push_str("<h3>Accuracy per field</h3>\n<div class=\"bars field-accuracy\">\n");
            for f in &suite.field_accuracy {
                let _ = writeln!(
                    out,
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
         <th data-key=\"recording\">recording</th><th>evaluators</th></tr></thead><tbody>\n",
    );
    for (i, c) in report.cases.iter().enumerate() {
        let verdict = if c.passed { "pass" } else { "fail" };
        let evaluators: Vec<String> = c
            .evaluators
            .iter()
            .map(|e| format!("{} {}", esc(&e.evaluator), score_text(Some(e.score))))
            .collect();
        let name = if c.passed {
            esc(&c.case)
        } else {
            format!("<a href=\"#failure-{i}\">{}</a>", esc(&c.case))
        };
        let _ = writeln!(
            out,
            "<tr data-test=\"{}\"><td data-v=\"{}\">{} <span class=\"muted\">{}</span></td>\
             <td data-v=\"{}\" title=\"{}\">{}</td><td data-v=\"{verdict}\" class=\"{verdict}\">{verdict}</td>\
             <td data-v=\"{}\">{}</td><td data-v=\"{}\">{}</td><td>{}</td></tr>",
            esc(&c.test),
            esc(&c.suite),
            esc(&c.suite),
            esc(&c.binary),
            esc(&c.case),
            esc(c.description.as_deref().unwrap_or("")),
            name,
            c.score.map(|s| s.to_string()).unwrap_or_default(),
            score_text(c.score),
            recording_text(c.recording),
            recording_text(c.recording),
            evaluators.join(", ")
        );
    }
    out.push_str("</tbody></table>\n");

    let failing: Vec<(usize, &Entry)> = report
        .cases
        .iter()
        .enumerate()
        .filter(|(_, c)| !c.passed)
        .collect();
    if !failing.is_empty() {
        out.push_str("<h2>Failures</h2>\n");
    }
    for (i, c) in failing {
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
    let _ = write!(out, "<script>{SCRIPT}</script>\n</body></html>\n");
    out
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

    /// A finishing process's own entries, as `finish` hands them over, with its file written.
    fn own(folder: &Path, lines: &[String]) -> Own {
        let path = folder.join(format!("{}-7.jsonl", std::process::id()));
        std::fs::write(&path, lines.concat()).unwrap();
        let entries = lines
            .iter()
            .map(|l| {
                (
                    serde_json::from_str::<Entry>(l).unwrap(),
                    l.trim_end().to_string(),
                )
            })
            .collect();
        Own {
            path,
            entries,
            whole: true,
        }
    }

    #[test]
    fn a_finishing_process_merges_its_own_entries_from_memory() {
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
        let report = rebuild_locked(dir.path(), Some(mine), None).unwrap();
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
        let report = rebuild_locked(dir.path(), Some(mine), None).unwrap();
        assert!(report.cases.iter().all(|c| c.passed), "{report:?}");
        assert_eq!(
            std::fs::read_to_string(evals.join(MERGED)).unwrap(),
            newer_b + &newer_a
        );
        assert_eq!(
            std::fs::read_to_string(other.join(MERGED)).unwrap(),
            other_binary
        );
        assert_eq!(
            std::fs::read_dir(&evals).unwrap().count(),
            1,
            "only the merged file is left"
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
    fn known_cases_spare_the_stat_but_a_case_added_during_the_run_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let (a, added, gone) = (
            dir.path().join("a.json"),
            dir.path().join("added.json"),
            dir.path().join("gone.json"),
        );
        std::fs::write(&a, "{}").unwrap();
        std::fs::write(&added, "{}").unwrap();
        let evals = dir.path().join("entries/demo/evals");
        std::fs::create_dir_all(&evals).unwrap();
        std::fs::write(
            evals.join("999999999-1.jsonl"),
            entry_line(&added, "added", "2026-01-01T00:00:00Z", true)
                + &entry_line(&gone, "gone", "2026-01-01T00:00:00Z", true),
        )
        .unwrap();
        // The run started before `added.json` existed: only `a` is known.
        let known = KnownCases {
            dir: dir.path().to_path_buf(),
            cases: ["a".to_string()].into_iter().collect(),
        };
        let mine = own(&evals, &[entry_line(&a, "a", "2026-01-02T00:00:00Z", true)]);
        let report = rebuild_locked(dir.path(), Some(mine), Some(&known)).unwrap();
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
    fn html_is_escaped() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
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
}
