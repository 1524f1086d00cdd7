//! The fold: the journals of the runs ([`journal`](super::journal)) and the standing results
//! folded into `results.jsonl` (the latest result of every case that still exists), and from it
//! `report.json` and `report.html`.
//!
//! A fold runs under an OS lock on `.fold.lock` (released by the kernel when its process ends).
//! It reads `results.jsonl` and every journal written to since the previous fold began (a
//! journal's modification time against that of `results.jsonl`, which the fold sets to the time
//! it began), keeps the latest line of each case, and writes the three files, each only when its
//! content changed: a fold run twice gives the same files. It then deletes the journals past the
//! last [`KEPT_RUNS`](super::journal::KEPT_RUNS) runs' that it has taken up.

use super::aggregate::Aggregate;
use super::journal::{self, Unreadable, KEPT_RUNS, RUNS};
use super::{case_key, Entry, EntryKey, Report, ReportError, Targets, FORMAT};
use chrono::{DateTime, Utc};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The standing result of every case, one entry line each, in case order.
pub(super) const RESULTS: &str = "results.jsonl";

/// The file whose OS lock keeps folds apart.
const LOCK: &str = ".fold.lock";

/// A journal modified up to this long before the previous fold began is read again: file times
/// are coarse on some file systems, and reading a journal twice changes nothing.
const SLACK: Duration = Duration::from_secs(2);

/// A case's latest line, and where it was read.
struct Latest {
    finished_at: DateTime<Utc>,
    line: String,
    file: usize,
    number: usize,
}

impl Latest {
    /// Whether this line stands over `other`: the later one, and of two at the same time the
    /// greater text, so the result does not depend on the order files are read in.
    fn over(&self, other: &Latest) -> bool {
        (self.finished_at, &self.line) > (other.finished_at, &other.line)
    }
}

/// The lines read so far: the latest per case, and those that could not be read.
#[derive(Default)]
struct Gathered {
    latest: BTreeMap<String, Latest>,
    files: Vec<PathBuf>,
    unreadable: Unreadable,
}

impl Gathered {
    /// Takes up the lines of `path`, whose text is `text`.
    fn add(&mut self, path: &Path, text: &str) {
        let file = self.files.len();
        self.files.push(path.to_path_buf());
        let mut key = String::new();
        for (i, line) in text.split('\n').enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let Some(k) = EntryKey::of_line(line) else {
                self.unreadable.line(path, i + 1, line);
                continue;
            };
            case_key(&mut key, &k.package, &k.binary, &k.suite_dir, &k.case);
            let new = Latest {
                finished_at: k.finished_at,
                line: line.to_string(),
                file,
                number: i + 1,
            };
            match self.latest.get_mut(&key) {
                Some(old) if !new.over(old) => {}
                Some(old) => *old = new,
                None => {
                    self.latest.insert(key.clone(), new);
                }
            }
        }
    }

    /// The run of the latest line: a case of any other run is older.
    fn latest_run(&self) -> Option<String> {
        let latest = self
            .latest
            .values()
            .reduce(|a, b| if b.over(a) { b } else { a })?;
        EntryKey::of_line(&latest.line)?.run.map(|r| r.into_owned())
    }
}

/// What a fold makes: the report and the texts of its files.
struct Folded {
    report: Report,
    results: String,
    json: String,
}

/// Folds the journals in `dir` (the report folder) into its `results.jsonl`, `report.json`
/// and `report.html`, and returns the report, with its cases when `keep_cases`.
pub(super) fn fold(dir: &Path, keep_cases: bool) -> Result<Report, ReportError> {
    std::fs::create_dir_all(dir).map_err(ReportError::io("create", dir))?;
    let lock_path = dir.join(LOCK);
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(ReportError::io("open", &lock_path))?;
    lock.lock().map_err(ReportError::io("lock", &lock_path))?;
    let began = SystemTime::now();
    let results_path = dir.join(RESULTS);
    let mut gathered = Gathered::default();
    let since = match journal::read(&results_path) {
        Ok(text) => {
            gathered.add(&results_path, &text);
            modified(&results_path).map(|t| t.checked_sub(SLACK).unwrap_or(t))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(ReportError::io("read", &results_path)(e)),
    };
    let journals = journals(dir);
    // In name order, so that unreadable lines are listed in the same order every time.
    let mut unread: Vec<&PathBuf> = journals
        .iter()
        .filter(|(_, time)| since.is_none_or(|since| *time >= since))
        .map(|(path, _)| path)
        .collect();
    unread.sort();
    for path in unread {
        match journal::read(path) {
            Ok(text) => gathered.add(path, &text),
            // Gone since it was listed (another fold's), or unreadable: named, not fatal.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => gathered.unreadable.file(path, &e),
        }
    }
    let mut folded = make(gathered, keep_cases)?;
    write(dir, &mut folded)?;
    // The next fold reads the journals written to since this one began.
    if let Ok(file) = std::fs::File::options().append(true).open(&results_path) {
        let _ = file.set_modified(began);
    }
    for (path, time) in journals.iter().skip(KEPT_RUNS) {
        if *time < began {
            let _ = std::fs::remove_file(path);
        }
    }
    drop(lock);
    Ok(folded.report)
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The journals in `dir/runs`, the most recently written first.
fn journals(dir: &Path) -> Vec<(PathBuf, SystemTime)> {
    let Ok(read) = std::fs::read_dir(dir.join(RUNS)) else {
        return Vec::new();
    };
    let mut journals: Vec<(PathBuf, SystemTime)> = read
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .filter_map(|p| Some((modified(&p)?, p)))
        .map(|(t, p)| (p, t))
        .collect();
    journals.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    journals
}

/// The report of the gathered lines, in case order: each latest line parsed once, dropped when
/// its fixture or test target is gone, marked older when of another run than the latest.
fn make(mut gathered: Gathered, keep_cases: bool) -> Result<Folded, ReportError> {
    let latest_run = gathered.latest_run();
    let mut aggregate = Aggregate::default();
    let mut targets = Targets::default();
    let mut results = String::new();
    let mut cases = Vec::new();
    for latest in std::mem::take(&mut gathered.latest).into_values() {
        let mut entry = match serde_json::from_str::<Entry>(&latest.line) {
            Ok(entry) => entry,
            Err(_) => {
                let file = &gathered.files[latest.file];
                gathered.unreadable.line(file, latest.number, &latest.line);
                continue;
            }
        };
        // A result whose fixture or test target is gone: the case no longer exists.
        if !entry.fixture.exists() || targets.gone(&entry) {
            continue;
        }
        entry.older = entry.run != latest_run;
        aggregate.add(&entry);
        results.push_str(&latest.line);
        results.push('\n');
        if keep_cases {
            cases.push(entry);
        }
    }
    let (totals, suites) = aggregate.finish();
    let mut report = Report {
        format: FORMAT,
        generated_at: Utc::now(),
        latest_run,
        totals,
        suites,
        unreadable_entries: gathered.unreadable.finish(),
        cases: Vec::new(),
    };
    let json = report_json(&report, &results)?;
    report.cases = cases;
    Ok(Folded {
        report,
        results,
        json,
    })
}

/// `report.json`: the header as serde writes it, and in place of its empty cases the lines of
/// `results` (`results.jsonl`'s text), each of another run than the latest marked older.
fn report_json(report: &Report, results: &str) -> Result<String, ReportError> {
    let header = serde_json::to_string_pretty(report).map_err(ReportError::json)?;
    let empty = "\"cases\": []";
    let Some(at) = header.rfind(empty) else {
        return Err(ReportError::json("the report header has no cases key"));
    };
    let mut json = String::with_capacity(header.len() + results.len() * 101 / 100 + 16);
    json.push_str(&header[..at]);
    if results.is_empty() {
        json.push_str(empty);
    } else {
        json.push_str("\"cases\": [\n    ");
        for (i, line) in results.lines().enumerate() {
            if i > 0 {
                json.push_str(",\n    ");
            }
            let run = EntryKey::of_line(line).and_then(|k| k.run);
            if run.as_deref() != report.latest_run.as_deref() {
                // The line as written, marked: `{"older":true,` and the rest of the object.
                json.push_str("{\"older\":true,");
                json.push_str(&line[1..]);
            } else {
                json.push_str(line);
            }
        }
        json.push_str("\n  ]");
    }
    json.push_str(&header[at + empty.len()..]);
    json.push('\n');
    Ok(json)
}

/// `text` around the value of its `generated_at`, which a fold that changed nothing leaves.
fn without_generated_at(text: &str) -> (&str, &str) {
    const KEY: &str = "\"generated_at\": \"";
    let Some(at) = text.find(KEY) else {
        return (text, "");
    };
    let value = at + KEY.len();
    let end = text[value..].find('"').map_or(text.len(), |e| value + e);
    (&text[..value], &text[end..])
}

/// Writes the fold's files, each only when its content changed (or it is missing): a
/// `report.json` that differs only in its `generated_at` is left as it was, and the report
/// takes its time.
fn write(dir: &Path, folded: &mut Folded) -> Result<(), ReportError> {
    let put = |name: &str, text: &str| -> Result<(), ReportError> {
        let path = dir.join(name);
        crate::files::replace_derived_with(&path, |out| {
            std::io::Write::write_all(out, text.as_bytes())
        })
        .map_err(ReportError::io("write", &path))
    };
    let len = |name: &str| std::fs::metadata(dir.join(name)).ok().map(|m| m.len());
    // A file of another length differs: not read back.
    let differs = |name: &str, text: &str| {
        len(name) != Some(text.len() as u64)
            || std::fs::read(dir.join(name)).ok().as_deref() != Some(text.as_bytes())
    };
    if differs(RESULTS, &folded.results) {
        put(RESULTS, &folded.results)?;
    }
    // Of about the same length (`generated_at` may write fewer digits), the old report is read
    // back to see whether only its time differs.
    let near = len("report.json").is_some_and(|l| l.abs_diff(folded.json.len() as u64) <= 16);
    let old = if near {
        std::fs::read_to_string(dir.join("report.json")).unwrap_or_default()
    } else {
        String::new()
    };
    let kept = (without_generated_at(&old) == without_generated_at(&folded.json))
        .then(|| {
            let (before, _) = without_generated_at(&old);
            let time = old[before.len()..].split('"').next()?;
            DateTime::parse_from_rfc3339(time).ok()
        })
        .flatten();
    match kept {
        Some(time) => {
            folded.report.generated_at = time.to_utc();
            folded.json = old;
        }
        None => put("report.json", &folded.json)?,
    }
    let html = super::page::render(&folded.json, None);
    if differs("report.html", &html) {
        put("report.html", &html)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_at_is_left_out_of_the_comparison() {
        let a = "{\n  \"format\": 1,\n  \"generated_at\": \"2026-01-01T00:00:00Z\",\n  \"x\": 1\n}";
        let b = a.replace("2026-01-01", "2027-02-02");
        assert_eq!(without_generated_at(a), without_generated_at(&b));
        assert_ne!(
            without_generated_at(a),
            without_generated_at(&b.replace("1\n}", "2\n}"))
        );
    }
}
