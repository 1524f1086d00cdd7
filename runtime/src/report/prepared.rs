//! A whole run's own part of the report, made case by case while its tests run.
//!
//! At the end of a run the report needs every case's `report.json` line, table row and failure
//! section, in key order, and their sums. Made from the entry file, that is one more parse and
//! render of every case on one thread after the last test; made here, each case's row and
//! failure section are rendered on its own test thread (from the entry it has just built) into
//! two files beside the entry file, and its sums and its place in the three files are kept.
//! The rebuild then only sorts the places and copies the pieces in key order
//! (`build::write_prepared`).
//!
//! It is made only by a process that runs its whole target ([`Scope::Whole`](super::Scope)),
//! and used only when the process's entries are all its folder's standing lines (its rows are
//! rendered as results of the latest run, its lines are not checked for a gone fixture); any
//! other rebuild reads the entry file as before, and the side files go.

use super::aggregate::Aggregate;
use super::section::{self, Gathered};
use super::{case_key, esc, html_failure, html_row, Entry, SuiteReport, Totals};
use chrono::{DateTime, Utc};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Buffer of each side file: rows are written a few hundred bytes at a time.
const SIDE_BUFFER: usize = 64 * 1024;

/// One recorded case: its key and where its three pieces are.
pub(super) struct Case {
    /// Index of its suite in [`Prepared::suites`] (whose keys sort as the cases' keys do).
    suite: u32,
    case: Box<str>,
    /// Its line in the entry file (offset and length, without the newline).
    pub json: (u64, u32),
    /// Its row in the rows file.
    pub row: (u64, u32),
    /// Its failure section in the failures file, when it failed.
    pub failure: Option<(u64, u32)>,
}

/// The run's part so far (see the module docs).
pub(super) struct Prepared {
    files: SideFiles,
    rows: Option<BufWriter<std::fs::File>>,
    failures: Option<BufWriter<std::fs::File>>,
    /// Bytes written so far to the entry file, the rows file and the failures file.
    at: [u64; 3],
    cases: Vec<Case>,
    /// The suites' keys (`package\0binary\0suite_dir`), which the cases' keys begin with.
    suites: Vec<String>,
    aggregate: Aggregate,
    gathered: Gathered,
    keys: u64,
    earliest: Option<DateTime<Utc>>,
    latest: Option<DateTime<Utc>>,
    run: Option<String>,
    any_failure: bool,
    /// Every piece reached its file and every line had the same run.
    whole: bool,
    key: String,
}

/// The two side files of an entry file, removed when this goes (used or not).
struct SideFiles {
    rows: PathBuf,
    failures: PathBuf,
}

impl Drop for SideFiles {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.rows);
        let _ = std::fs::remove_file(&self.failures);
    }
}

/// The side files of the entry file `entry` (`<folder>/<pid>-<start>.jsonl`): hidden, so a
/// rebuild never takes them for entry files.
fn side_paths(entry: &Path) -> Option<SideFiles> {
    let stem = entry.file_stem()?.to_string_lossy();
    let folder = entry.parent()?;
    Some(SideFiles {
        rows: folder.join(format!(".{stem}.rows")),
        failures: folder.join(format!(".{stem}.failures")),
    })
}

/// Removes the side files a process left beside its entry file `entry` (killed before its end):
/// what the rebuild that folds that file away calls.
pub(super) fn remove_side_files(entry: &Path) {
    drop(side_paths(entry));
}

/// The failure anchor of a case in a prepared part: the folder's tag and the test name, unique
/// in the folder.
fn anchor<'a>(tag: &'a str, entry: &'a Entry) -> impl std::fmt::Display + 'a {
    struct Anchor<'a>(&'a str, &'a str);
    impl std::fmt::Display for Anchor<'_> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "{}-{}", self.0, esc(self.1))
        }
    }
    Anchor(tag, &entry.test)
}

impl Prepared {
    /// A part for the entry file `entry`; `None` when its side files cannot be created.
    pub fn create(entry: &Path) -> Option<Prepared> {
        let files = side_paths(entry)?;
        let open = |path: &Path| {
            std::fs::File::create(path)
                .ok()
                .map(|f| BufWriter::with_capacity(SIDE_BUFFER, f))
        };
        let rows = open(&files.rows)?;
        let failures = open(&files.failures)?;
        Some(Prepared {
            files,
            rows: Some(rows),
            failures: Some(failures),
            at: [0; 3],
            cases: Vec::new(),
            suites: Vec::new(),
            aggregate: Aggregate::default(),
            gathered: Gathered::default(),
            keys: 0,
            earliest: None,
            latest: None,
            run: None,
            any_failure: false,
            whole: true,
            key: String::new(),
        })
    }

    /// Renders `entry`'s row, and its failure section when it failed, into `row` and `failure`
    /// (cleared first): done on the case's test thread, before the entry is added.
    pub fn render(tag: &str, entry: &Entry, row: &mut String, failure: &mut String) {
        row.clear();
        failure.clear();
        html_row(row, anchor(tag, entry), entry);
        if !entry.passed {
            html_failure(failure, anchor(tag, entry), entry);
        }
    }

    /// Adds a case whose entry line (`line_len` bytes with its newline) was just appended to
    /// the entry file (`written`: whole), with its row and failure section from
    /// [`render`](Prepared::render).
    pub fn add(&mut self, entry: &Entry, line_len: usize, written: bool, row: &str, failure: &str) {
        let json = (self.at[0], line_len.saturating_sub(1) as u32);
        self.at[0] += line_len as u64;
        if !self.whole {
            return;
        }
        let same_run = match (&self.run, &entry.run) {
            (_, None) => false,
            (None, Some(run)) => {
                self.run = Some(run.clone());
                true
            }
            (Some(mine), Some(run)) => mine == run,
        };
        let row_at = put(&mut self.rows, &mut self.at[1], row);
        let failure_at = if failure.is_empty() {
            Some(None)
        } else {
            put(&mut self.failures, &mut self.at[2], failure).map(Some)
        };
        let (Some(row), Some(failure)) = (row_at, failure_at) else {
            self.whole = false;
            return;
        };
        if !written || !same_run {
            self.whole = false;
            return;
        }
        case_key(
            &mut self.key,
            &entry.package,
            &entry.binary,
            &entry.suite_dir,
            &entry.case,
        );
        self.keys = self.keys.wrapping_add(section::key_hash(&self.key));
        self.gathered.watch(entry);
        self.gathered.add(entry, &self.key);
        self.earliest = Some(
            self.earliest
                .map_or(entry.finished_at, |t| t.min(entry.finished_at)),
        );
        self.latest = Some(
            self.latest
                .map_or(entry.finished_at, |t| t.max(entry.finished_at)),
        );
        self.any_failure |= !entry.passed;
        let suite_len = self.key.len() - entry.case.len() - 1;
        let suite_key = &self.key[..suite_len];
        let suite = match self.suites.iter().rposition(|k| k == suite_key) {
            Some(i) => i,
            None => {
                self.suites.push(suite_key.to_string());
                self.suites.len() - 1
            }
        };
        self.aggregate.add(entry);
        self.cases.push(Case {
            suite: suite as u32,
            case: entry.case.as_str().into(),
            json,
            row,
            failure,
        });
    }

    /// Gives the part up: a case's line (`line_len` bytes) was written without its row.
    pub fn give_up(&mut self, line_len: usize) {
        self.at[0] += line_len as u64;
        self.whole = false;
    }

    /// How many cases, the sum of their keys' hashes and the earliest line's time: what decides
    /// whether the folder's merged file holds only cases this run replaced.
    pub fn summary(&self) -> (usize, u64, Option<DateTime<Utc>>) {
        (self.cases.len(), self.keys, self.earliest)
    }

    /// Whether every case's pieces are in place.
    pub fn whole(&self) -> bool {
        self.whole
    }

    /// The part, ready to be copied: the cases in key order, their side files flushed. `None`
    /// when a piece is missing or a case ran twice (then its lines are read as any others).
    pub fn finish(mut self) -> Option<Ready> {
        if !self.whole {
            return None;
        }
        for out in [self.rows.take(), self.failures.take()] {
            out?.into_inner().ok()?;
        }
        let suites = &self.suites;
        self.cases.sort_unstable_by(|a, b| {
            (&suites[a.suite as usize], &a.case).cmp(&(&suites[b.suite as usize], &b.case))
        });
        let twice = self
            .cases
            .windows(2)
            .any(|pair| (pair[0].suite, &pair[0].case) == (pair[1].suite, &pair[1].case));
        if twice {
            return None;
        }
        let first = self.cases.first()?;
        let first_key = &mut self.gathered.first_key;
        first_key.clear();
        first_key.push_str(&self.suites[first.suite as usize]);
        first_key.push('\0');
        first_key.push_str(&first.case);
        let (totals, reports) = self.aggregate.finish();
        Some(Ready {
            files: self.files,
            cases: self.cases,
            gathered: self.gathered,
            latest: self.latest,
            run: self.run,
            any_failure: self.any_failure,
            totals,
            suites: reports,
        })
    }
}

/// Appends `text` to a side file; where it went (offset and length).
fn put(out: &mut Option<BufWriter<std::fs::File>>, at: &mut u64, text: &str) -> Option<(u64, u32)> {
    let place = (*at, u32::try_from(text.len()).ok()?);
    out.as_mut()?.write_all(text.as_bytes()).ok()?;
    *at += text.len() as u64;
    Some(place)
}

/// A finished part (see [`Prepared::finish`]).
pub(super) struct Ready {
    files: SideFiles,
    /// In key order, each case once.
    pub cases: Vec<Case>,
    pub gathered: Gathered,
    pub latest: Option<DateTime<Utc>>,
    pub run: Option<String>,
    pub any_failure: bool,
    pub totals: Totals,
    pub suites: Vec<SuiteReport>,
}

impl Ready {
    /// The rows file and the failures file.
    pub fn side_files(&self) -> [&Path; 2] {
        [&self.files.rows, &self.files.failures]
    }
}
