//! `cargo proposal-eval report --merge PATH...`: one report from the runs of several machines
//! (CI runners that each ran a `--partition` of the suite and kept their `target/proposal-eval`).
//!
//! The sources' lines are folded as one machine folds its own journals
//! ([`fold`](super::fold)), and the report written where `report` writes it. A source is:
//!
//! - a `target/proposal-eval` folder (or the `target` folder holding one, or the folder holding
//!   that): its run journals, `runs/*/journal.jsonl` (older layouts' `runs/*.jsonl` and entry
//!   files below `entries/` too), else its `report.json`;
//! - a `runs/` folder, or one journal (`*.jsonl`): one entry per line;
//! - a `report.json`: its cases, whose stories are read from the journals beside it.
//!
//! The merged report refers to each story in its source's journal, by the journal's absolute
//! path; the page embeds those that fit, as one machine's does.
//!
//! Of the entries of one case (package, test binary, suite folder and case) the latest wins, as
//! within one machine. A case is from an older run when it is not from its own source's latest
//! run: the partitions of one CI run, each with its own run id, are all current. Unlike one
//! machine's report, a merged one keeps the cases whose fixture or test target is not on this
//! machine (the fixture paths are the runners').
//!
//! Bad input is an error naming the file, the line and column, and what to do; only a journal's
//! last line cut off without its newline (a runner killed mid-write) is left out, and named in
//! the report's `unreadable_entries`.

use super::entry::Entry;
use super::error::ReportError;
use super::fold::{self, Gathered, Lines, Out};
use super::schema::{Report, FORMAT};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The report one machine would have made from the cases of every source, written as
/// `dir/report.json` and `dir/report.html`. A last line cut off is left out and named in the
/// report's `unreadable_entries`.
pub fn merge(paths: &[PathBuf], dir: &Path) -> Result<Report, ReportError> {
    let mut gathered = Gathered::new(Lines::Strict);
    let mut copies = Vec::new();
    let merged = (|| {
        for (source, path) in paths.iter().enumerate() {
            for file in source_files(path)? {
                if file.extension().is_some_and(|e| e == "jsonl") {
                    let journal = std::path::absolute(&file).unwrap_or_else(|_| file.clone());
                    gathered.add(&file, source, (0, 0), Some(&journal.to_string_lossy()))?;
                } else {
                    let lines = dir.join(format!(
                        ".merge-{}-{}.jsonl",
                        std::process::id(),
                        copies.len()
                    ));
                    copies.push(lines.clone());
                    report_lines(&file, &lines)?;
                    gathered.add(&lines, source, (0, 0), None)?;
                }
            }
        }
        fold::write(gathered, &Out::Merge(dir), true).map(|(report, _)| report)
    })();
    for copy in copies {
        let _ = std::fs::remove_file(copy);
    }
    merged
}

/// The files a source stands for, in name order.
fn source_files(path: &Path) -> Result<Vec<PathBuf>, ReportError> {
    let meta = std::fs::metadata(path).map_err(|e| {
        ReportError::new(
            path,
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
            .map_err(|e| ReportError::new(&journals, format!("cannot list it: {e}")))?;
        if journals == dir {
            // A `runs/` folder given itself: its runs' journals, `<run>/journal.jsonl`.
            let runs = std::fs::read_dir(&dir).into_iter().flatten().flatten();
            files.extend(
                runs.map(|run| run.path().join("journal.jsonl"))
                    .filter(|journal| journal.is_file()),
            );
        }
        if !files.is_empty() {
            files.sort();
            return Ok(files);
        }
    }
    let report = dir.join("report.json");
    if report.is_file() {
        return Ok(vec![report]);
    }
    Err(ReportError::new(
        path,
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

/// Writes the cases of the `report.json` at `file` to `lines`, one entry per line, as a journal
/// holds them.
fn report_lines(file: &Path, lines: &Path) -> Result<(), ReportError> {
    let text = std::fs::read_to_string(file).map_err(ReportError::io("read", file))?;
    let mut report: ReportCases = serde_json::from_slice(text.as_bytes()).map_err(|e| ReportError {
        path: file.to_path_buf(),
        place: Some((e.line(), e.column())),
        why: format!("not a proposal-eval report.json: {}; give the report.json a `cargo test` or `cargo proposal-eval report` wrote", super::error::why(&e)),
        io: None,
    })?;
    if report.format > FORMAT {
        return Err(ReportError::new(
            file,
            format!(
                "a report of format {} (this proposal-eval reads format {} and older): merge with the newer cargo-proposal-eval that wrote it",
                report.format, FORMAT
            ),
        ));
    }
    let beside = std::path::absolute(file.parent().unwrap_or(Path::new("."))).unwrap_or_default();
    crate::files::replace_derived_with(lines, |out| {
        for entry in &mut report.cases {
            // As a journal holds it: the merge marks older runs itself.
            entry.older = false;
            if let Some(story) = &mut entry.story {
                story.journal = beside.join(&story.journal).to_string_lossy().into_owned();
            }
            serde_json::to_writer(&mut *out, entry).map_err(std::io::Error::other)?;
            std::io::Write::write_all(out, b"\n")?;
        }
        Ok(())
    })
    .map_err(ReportError::io("write", lines))
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
        // Machine 2: the report.json of run r2 (a merge of its journal); machine 3: a journal
        // whose last line is cut.
        let two = dir.path().join("two/runs/r2.jsonl");
        std::fs::create_dir_all(two.parent().unwrap()).unwrap();
        std::fs::write(
            &two,
            lines(&[entry("c", "r2", "2026-01-02T00:00:02Z", false)]),
        )
        .unwrap();
        merge(&[two], &dir.path().join("two")).unwrap();
        let two = dir.path().join("two/report.json");
        let three = dir.path().join("three/runs");
        std::fs::create_dir_all(&three).unwrap();
        let cut = lines(&[entry("d", "r3", "2026-01-02T00:00:03Z", true)]);
        std::fs::write(three.join("r3.jsonl"), cut.clone() + &cut[..cut.len() / 2]).unwrap();

        let out = dir.path().join("out");
        let report = merge(
            &[
                dir.path().join("one/target"),
                two,
                dir.path().join("three/runs"),
            ],
            &out,
        )
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
            report.unreadable_entries,
            [format!(
                "{}:2:{}: EOF while parsing a string",
                three.join("r3.jsonl").display(),
                cut.len() / 2
            )]
        );
        // Written where `report` writes, with nothing else left beside them.
        let mut written: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        written.sort();
        assert_eq!(written, ["report.html", "report.json"]);
        let json: Report =
            serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap())
                .unwrap();
        assert_eq!(json.cases, report.cases);
    }

    #[test]
    fn bad_sources_are_named_with_their_line_and_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let journal = dir.path().join("runs/r.jsonl");
        std::fs::create_dir_all(journal.parent().unwrap()).unwrap();
        let good = lines(&[entry("a", "r", "2026-01-01T00:00:00Z", true)]);
        std::fs::write(&journal, good + "{\"package\": 1}\n").unwrap();
        let out = dir.path().join("out");
        let error = merge(&[dir.path().join("runs")], &out).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "{}:2:13: not a report entry: invalid type: integer `1`, expected a string; each line of a run journal is one entry as a test run writes it (remove the line, or run that machine's tests again)",
                journal.display()
            )
        );

        let report = dir.path().join("report.json");
        std::fs::write(&report, "{\n  \"format\": 1,\n  \"cases\": 3\n}").unwrap();
        let error = merge(std::slice::from_ref(&report), &out).unwrap_err();
        assert!(
            error.to_string().starts_with(&format!(
                "{}:3:12: not a proposal-eval report.json: invalid type: integer `3`",
                report.display()
            )),
            "{error}"
        );

        let empty = dir.path().join("empty");
        std::fs::create_dir_all(&empty).unwrap();
        let error = merge(std::slice::from_ref(&empty), &out).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("{}: holds no run journal (runs/*.jsonl) and no report.json: give another machine's target/proposal-eval folder after its tests ran, its runs/ folder, or a report.json", empty.display())
        );
        let missing = dir.path().join("missing");
        let error = merge(std::slice::from_ref(&missing), &out).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with(&format!("{}: cannot read it (", missing.display())),
            "{error}"
        );
    }
}
