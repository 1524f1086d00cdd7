//! `cargo proposal-eval report --merge PATH...`: one report from the runs of several machines
//! (CI runners that each ran a `--partition` of the suite and kept their `target/proposal-eval`).
//!
//! Each source is read into entries ([`read_sources`]); the report is then built from them as one
//! machine builds its own ([`merge`]). A source is:
//!
//! - a `target/proposal-eval` folder (or the `target` folder holding one, or the folder holding
//!   that): its run journals,
//!   `runs/*.jsonl` (the entry files below `entries/` where there are no journals), else its
//!   `report.json`;
//! - a `runs/` folder, or one journal (`*.jsonl`): one entry per line;
//! - a `report.json`: its cases.
//!
//! Of the entries of one case (package, test binary, suite folder and case) the latest wins, as
//! within one machine. A case is from an older run when it is not from its own source's latest
//! run: the partitions of one CI run, each with its own run id, are all current. Unlike one
//! machine's report, a merged one keeps the cases whose fixture or test target is not on this
//! machine (the fixture paths are the runners').
//!
//! Bad input is an error naming the file, the line and column, and what to do; only a journal's
//! last line cut off without its newline (a runner killed mid-write) is left out, with a note.

use super::{Entry, Report};
use serde::Deserialize;
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// A source that cannot be read.
#[derive(Debug)]
pub struct MergeError {
    /// The file or folder.
    pub path: PathBuf,
    /// `(line, column)` in it, from 1, when the problem is in one place.
    pub place: Option<(usize, usize)>,
    /// What is wrong, and what to do.
    pub why: String,
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some((line, column)) = self.place {
            write!(f, ":{line}:{column}")?;
        }
        write!(f, ": {}", self.why)
    }
}

impl std::error::Error for MergeError {}

impl MergeError {
    fn new(path: &Path, place: Option<(usize, usize)>, why: impl Into<String>) -> MergeError {
        MergeError {
            path: path.to_path_buf(),
            place,
            why: why.into(),
        }
    }
}

/// The entries of every source, each case's latest, with `older` set against its own source's
/// latest run; and notes on what was left out (a cut last line).
#[derive(Debug, Default)]
pub struct Sources {
    /// The entries, one per case.
    pub entries: Vec<Entry>,
    /// One line per line left out.
    pub notes: Vec<String>,
}

/// Reads `paths` (see the [module docs](self)) into one entry per case.
pub fn read_sources(paths: &[PathBuf]) -> Result<Sources, MergeError> {
    let mut sources = Sources::default();
    let mut latest: HashMap<(String, String, String, String), Entry> = HashMap::new();
    for path in paths {
        let mut entries = Vec::new();
        for file in source_files(path)? {
            read_file(&file, &mut entries, &mut sources.notes)?;
        }
        mark_current(&mut entries);
        for entry in entries {
            let key = (
                entry.package.clone(),
                entry.binary.clone(),
                entry.suite_dir.clone(),
                entry.case.clone(),
            );
            match latest.get(&key) {
                Some(kept) if kept.finished_at >= entry.finished_at => {}
                _ => {
                    latest.insert(key, entry);
                }
            }
        }
    }
    sources.entries = latest.into_values().collect();
    Ok(sources)
}

/// The report one machine would have made from the cases of every source.
pub fn merge(paths: &[PathBuf]) -> Result<(Report, Vec<String>), MergeError> {
    let sources = read_sources(paths)?;
    let latest_run = sources
        .entries
        .iter()
        .max_by_key(|e| e.finished_at)
        .and_then(|e| e.run.clone());
    Ok((
        Report::from_marked_entries(sources.entries, latest_run),
        sources.notes,
    ))
}

/// Writes `report` as `dir/report.json` and `dir/report.html`.
pub fn write(dir: &Path, report: &Report) -> std::io::Result<()> {
    use std::io::Write as _;
    std::fs::create_dir_all(dir)?;
    crate::files::replace_derived_with(&dir.join("report.json"), |out| {
        serde_json::to_writer_pretty(&mut *out, report).map_err(std::io::Error::other)?;
        out.write_all(b"\n")
    })?;
    crate::files::replace_derived_with(&dir.join("report.html"), |out| {
        out.write_all(report.to_html().as_bytes())
    })
}

/// Marks the entries of one source that are not from its latest run (the run of its most
/// recent entry) as older.
fn mark_current(entries: &mut [Entry]) {
    let latest = entries
        .iter()
        .max_by_key(|e| e.finished_at)
        .map(|e| e.run.clone());
    for entry in entries {
        entry.older = Some(&entry.run) != latest.as_ref();
    }
}

/// The files a source stands for, in name order.
fn source_files(path: &Path) -> Result<Vec<PathBuf>, MergeError> {
    let meta = std::fs::metadata(path).map_err(|e| {
        MergeError::new(
            path,
            None,
            format!("cannot read it ({e}): give another machine's target/proposal-eval folder, its runs/ folder, or a report.json"),
        )
    })?;
    if meta.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    // A `target` folder, or the folder holding it (a runner's checkout or its artifact).
    let dir = [
        path.join("proposal-eval"),
        path.join("target/proposal-eval"),
    ]
    .into_iter()
    .find(|d| d.is_dir() && !path.join("runs").is_dir())
    .unwrap_or_else(|| path.to_path_buf());
    for journals in [dir.join("runs"), dir.clone(), dir.join("entries")] {
        let mut files = Vec::new();
        jsonl_below(&journals, journals != dir, &mut files)
            .map_err(|e| MergeError::new(&journals, None, format!("cannot list it: {e}")))?;
        if !files.is_empty() {
            files.sort();
            return Ok(files);
        }
    }
    let report = dir.join("report.json");
    if report.is_file() {
        return Ok(vec![report]);
    }
    Err(MergeError::new(
        path,
        None,
        "holds no run journal (runs/*.jsonl) and no report.json: give another machine's target/proposal-eval folder after its tests ran, its runs/ folder, or a report.json",
    ))
}

/// The `.jsonl` files in `dir` (below it too when `deep`); none when `dir` is not a folder.
fn jsonl_below(dir: &Path, deep: bool, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for item in read {
        let path = item?.path();
        if path.is_dir() {
            if deep {
                jsonl_below(&path, true, out)?;
            }
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            out.push(path);
        }
    }
    Ok(())
}

/// What a `report.json` source is read for: its format and its cases.
#[derive(Deserialize)]
struct ReportCases {
    format: u32,
    cases: Vec<Entry>,
}

/// Reads one file: a journal (`.jsonl`, an entry per line) or a `report.json`.
fn read_file(
    file: &Path,
    entries: &mut Vec<Entry>,
    notes: &mut Vec<String>,
) -> Result<(), MergeError> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| MergeError::new(file, None, format!("cannot read it: {e}")))?;
    if file.extension().is_some_and(|e| e == "jsonl") {
        return read_journal(file, &text, entries, notes);
    }
    let report: ReportCases = serde_json::from_str(&text).map_err(|e| {
        MergeError::new(
            file,
            Some((e.line(), e.column())),
            format!("not a proposal-eval report.json: {}; give the report.json a `cargo test` or `cargo proposal-eval report` wrote", why(&e)),
        )
    })?;
    if report.format > super::FORMAT {
        return Err(MergeError::new(
            file,
            None,
            format!(
                "a report of format {} (this proposal-eval reads format {} and older): merge with the newer cargo-proposal-eval that wrote it",
                report.format,
                super::FORMAT
            ),
        ));
    }
    entries.extend(report.cases);
    Ok(())
}

/// serde's message without the place it adds (the error names the place itself).
fn why(error: &serde_json::Error) -> String {
    let text = error.to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// Reads a journal's lines; a last line without its newline that does not read (cut off by a
/// kill) is left out with a note.
fn read_journal(
    file: &Path,
    text: &str,
    entries: &mut Vec<Entry>,
    notes: &mut Vec<String>,
) -> Result<(), MergeError> {
    let mut lines = text.split_inclusive('\n').enumerate().peekable();
    while let Some((index, line)) = lines.next() {
        let body = line.trim_end_matches(['\n', '\r']);
        if body.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Entry>(body) {
            Ok(entry) => entries.push(entry),
            Err(_) if lines.peek().is_none() && !line.ends_with('\n') => notes.push(format!(
                "{}:{}: left out: the last line is cut off (its writer was killed mid-line)",
                file.display(),
                index + 1
            )),
            Err(e) => {
                return Err(MergeError::new(
                    file,
                    Some((index + 1, e.column())),
                    format!("not a report entry: {}; each line of a run journal is one entry as a test run writes it (remove the line, or run that machine's tests again)", why(&e)),
                ))
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(case: &str, run: &str, at: &str, passed: bool) -> Entry {
        serde_json::from_value(serde_json::json!({
            "package": "demo", "binary": "evals", "suite": "s", "suite_dir": "fixtures/s",
            "case": case, "test": format!("s::{case}"), "fixture": format!("/m/fixtures/s/{case}.json"),
            "passed": passed, "score": if passed { 1.0 } else { 0.0 }, "recording": "replayed",
            "evaluators": [], "run": run, "finished_at": at,
        }))
        .unwrap()
    }

    fn lines(entries: &[Entry]) -> String {
        entries
            .iter()
            .map(|e| serde_json::to_string(e).unwrap() + "\n")
            .collect()
    }

    #[test]
    fn each_sources_latest_run_is_current_and_a_cases_latest_entry_wins() {
        let dir = tempfile::tempdir().unwrap();
        // Machine 1: a proposal-eval folder whose journal holds an older run of `a` too.
        let one = dir.path().join("one/target/proposal-eval");
        std::fs::create_dir_all(one.join("runs")).unwrap();
        std::fs::write(
            one.join("runs/r0.jsonl"),
            lines(&[entry("a", "r0", "2026-01-01T00:00:00Z", false)]),
        )
        .unwrap();
        std::fs::write(
            one.join("runs/r1.jsonl"),
            lines(&[
                entry("a", "r1", "2026-01-02T00:00:00Z", true),
                entry("b", "r1", "2026-01-02T00:00:01Z", true),
            ]),
        )
        .unwrap();
        // Machine 2: a report.json of run r2; machine 3: a journal whose last line is cut.
        let two = dir.path().join("two.json");
        let report = Report::from_entries(vec![entry("c", "r2", "2026-01-02T00:00:02Z", false)]);
        std::fs::write(&two, serde_json::to_string(&report).unwrap()).unwrap();
        let three = dir.path().join("three/runs");
        std::fs::create_dir_all(&three).unwrap();
        let cut = lines(&[entry("d", "r3", "2026-01-02T00:00:03Z", true)]);
        std::fs::write(three.join("r3.jsonl"), cut.clone() + &cut[..cut.len() / 2]).unwrap();

        let (report, notes) = merge(&[
            dir.path().join("one/target"),
            two,
            dir.path().join("three/runs"),
        ])
        .unwrap();
        let rows: Vec<(&str, bool, bool)> = report
            .cases
            .iter()
            .map(|c| (c.case.as_str(), c.passed, c.older))
            .collect();
        assert_eq!(
            rows,
            [
                ("a", true, false),
                ("b", true, false),
                ("c", false, false),
                ("d", true, false)
            ]
        );
        assert_eq!(
            (
                report.totals.cases,
                report.totals.failed,
                report.totals.older
            ),
            (4, 1, 0)
        );
        assert_eq!(report.latest_run.as_deref(), Some("r3"));
        assert_eq!(
            notes,
            [format!(
                "{}:2: left out: the last line is cut off (its writer was killed mid-line)",
                three.join("r3.jsonl").display()
            )]
        );
    }

    #[test]
    fn bad_sources_are_named_with_their_line_and_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let journal = dir.path().join("runs/r.jsonl");
        std::fs::create_dir_all(journal.parent().unwrap()).unwrap();
        let good = lines(&[entry("a", "r", "2026-01-01T00:00:00Z", true)]);
        std::fs::write(&journal, good + "{\"package\": 1}\n").unwrap();
        let error = read_sources(&[dir.path().join("runs")]).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "{}:2:13: not a report entry: invalid type: integer `1`, expected a string; each line of a run journal is one entry as a test run writes it (remove the line, or run that machine's tests again)",
                journal.display()
            )
        );

        let report = dir.path().join("report.json");
        std::fs::write(&report, "{\n  \"format\": 1,\n  \"cases\": 3\n}").unwrap();
        let error = read_sources(std::slice::from_ref(&report)).unwrap_err();
        assert!(
            error.to_string().starts_with(&format!(
                "{}:3:12: not a proposal-eval report.json: invalid type: integer `3`",
                report.display()
            )),
            "{error}"
        );

        let empty = dir.path().join("empty");
        std::fs::create_dir_all(&empty).unwrap();
        let error = read_sources(std::slice::from_ref(&empty)).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("{}: holds no run journal (runs/*.jsonl) and no report.json: give another machine's target/proposal-eval folder after its tests ran, its runs/ folder, or a report.json", empty.display())
        );
        let missing = dir.path().join("missing");
        let error = read_sources(std::slice::from_ref(&missing)).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with(&format!("{}: cannot read it (", missing.display())),
            "{error}"
        );
    }
}
