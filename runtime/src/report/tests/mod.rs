//! The report folder as folds leave it: journals, results, report.json and the page.

use super::entry::{capped_value, json_len_bound, spend, spend_lines, strip_ansi, Entry};
use super::fold::{self, target_exists, JOURNAL_BYTES_READ};
use super::journal::EntryKey;
use super::page;
use super::run_end::{unreadable_summary, Scope};
use super::runs::TEST_KEPT_BYTES;
use super::schema::{distribution, Report};
use crate::layout::safe;
use crate::recording::usage::UsageTotals;
use crate::run::TEXT_CAP;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod input;

pub(super) fn fold(dir: &Path) -> Result<Report, super::ReportError> {
    fold::fold(dir, true)
}

/// The journal of run `run` in the runs folder `runs`, its folder made.
pub(super) fn journal(runs: &Path, run: &str) -> PathBuf {
    let dir = runs.join(run);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("journal.jsonl")
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
fn journal_lines_fold_latest_first_and_a_cut_line_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = dir.path().join("a.json");
    std::fs::write(&fixture, "{}").unwrap();
    let gone = dir.path().join("gone.json");
    let runs = dir.path().join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    let first = journal(&runs, "parent-1-1");
    std::fs::write(
        &first,
        entry_line(&fixture, "a", "2026-01-01T00:00:00Z", false)
            + &entry_line(&gone, "b", "2026-01-01T00:00:00Z", true)
            + "{\"cut off by a kill\n",
    )
    .unwrap();
    std::fs::write(
        journal(&runs, "parent-2-2"),
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
        journal(&runs, "parent-1-1"),
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

/// The bookmark: a fold reads each journal from where the last one stopped, so a fold after
/// one more line reads that line's bytes and no others.
#[test]
fn a_fold_after_one_more_line_reads_only_that_line() {
    let (dir, fixture, runs) = report_folder();
    let path = journal(&runs, "parent-1-1");
    let first = entry_line(&fixture, "a", "2026-01-01T00:00:00Z", true) + "{\"bad\n";
    std::fs::write(&path, &first).unwrap();
    JOURNAL_BYTES_READ.with(|n| n.set(0));
    let report = fold(dir.path()).unwrap();
    assert_eq!(report.unreadable_entries.len(), 1, "the bad line is named");
    assert_eq!(JOURNAL_BYTES_READ.with(|n| n.get()), first.len() as u64);
    // Nothing added: the journal is not read again (only `results.jsonl`, one line).
    let results = std::fs::metadata(dir.path().join("results.jsonl"))
        .unwrap()
        .len();
    JOURNAL_BYTES_READ.with(|n| n.set(0));
    let again = fold(dir.path()).unwrap();
    assert_eq!(again.unreadable_entries, Vec::<String>::new());
    assert_eq!(again.totals.cases, 1);
    assert_eq!(JOURNAL_BYTES_READ.with(|n| n.get()), results);
    // One line added: that line is read, and its case taken up.
    let line = entry_line(&fixture, "b", "2026-01-01T00:00:01Z", true);
    let mut file = std::fs::File::options().append(true).open(&path).unwrap();
    std::io::Write::write_all(&mut file, line.as_bytes()).unwrap();
    JOURNAL_BYTES_READ.with(|n| n.set(0));
    let third = fold(dir.path()).unwrap();
    assert_eq!(
        JOURNAL_BYTES_READ.with(|n| n.get()),
        results + line.len() as u64
    );
    assert_eq!(third.unreadable_entries, Vec::<String>::new());
    assert_eq!(third.totals.cases, 2);
    let bookmark = std::fs::read_to_string(dir.path().join("runs.json")).unwrap();
    assert!(
        bookmark.contains(&format!("\"bytes\": {}", first.len() + line.len())),
        "{bookmark}"
    );
}

/// The fold renders the page's cases as it writes them: the page holds the report the fold
/// wrote, its first page first, and nothing is left beside it.
#[test]
fn a_folded_report_of_more_than_a_page_is_embedded_first_page_first() {
    let (dir, fixture, runs) = report_folder();
    // As a run writes them (`run` before `finished_at`): the cases of the first run are older
    // than the second's, which ran one case again.
    let line = |run: &str, i: usize, at: &str| {
        let mut value: serde_json::Value = serde_json::from_str(&entry_line(
            &fixture,
            &format!("c{i:03}</script>"),
            at,
            !i.is_multiple_of(3),
        ))
        .unwrap();
        value["run"] = run.into();
        let entry: crate::report::Entry = serde_json::from_value(value).unwrap();
        serde_json::to_string(&entry).unwrap() + "\n"
    };
    let lines: String = (0..page::FIRST_PAGE + 20)
        .map(|i| line("parent-1-1", i, "2026-01-01T00:00:00Z"))
        .collect();
    std::fs::write(journal(&runs, "parent-1-1"), lines).unwrap();
    let again = line("parent-2-2", 7, "2026-01-02T00:00:00Z");
    std::fs::write(journal(&runs, "parent-2-2"), again).unwrap();
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
    first["cases"] =
        serde_json::Value::Array(report["cases"].as_array().unwrap()[..page::FIRST_PAGE].to_vec());
    assert_eq!(embedded("report-summary"), first);
    assert_eq!(report["cases"][0]["case"], "c000</script>");
    assert_eq!(report["cases"][0]["older"], true);
    assert_eq!(report["cases"][7]["older"], serde_json::Value::Null);
    // The cases past the first page, rendered into a file beside the page, are in it: the
    // file is gone.
    let left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".cases"))
        .collect();
    assert_eq!(left, Vec::<String>::new());
}

/// Runs are ordered as folds first took them up (not by file times): after twelve runs,
/// each folded, the ten last are kept.
#[test]
fn the_fold_keeps_the_last_ten_runs() {
    let (dir, fixture, runs) = report_folder();
    for run in 0..12u64 {
        // Names that sort otherwise than the runs came.
        let path = journal(&runs, &format!("parent-{}-1", 99 - run));
        let at = format!("2026-01-01T00:00:{run:02}Z");
        std::fs::write(&path, entry_line(&fixture, "a", &at, true)).unwrap();
        fold(dir.path()).unwrap();
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
    assert!(!left.contains(&"parent-99-1".to_string()));
    assert!(!left.contains(&"parent-98-1".to_string()));
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
    let journal_of = |run: &str| journal(&runs, run);
    // `other` ran in run 1 only; `evals` in runs 1 and 2 (case b only in 2: a filtered run);
    // `removed` ran in run 2 but its test file is gone since.
    std::fs::write(
        journal_of("run-1"),
        run_line(&root, "other", "a", "run-1", "2026-01-01T00:00:00Z")
            + &run_line(&root, "evals", "a", "run-1", "2026-01-01T00:00:01Z")
            + &run_line(&root, "evals", "b", "run-1", "2026-01-01T00:00:01Z"),
    )
    .unwrap();
    std::fs::write(
        journal_of("run-2"),
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
    let small = journal(&writers, "run-1");
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
    let big = journal(&writers, "run-2");
    std::fs::write(&big, &large).unwrap();
    let many = journal(&writers, "run-3");
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

/// An entry line as `record` writes it, with a story of about `size` bytes.
fn story_line(
    fixture: &Path,
    case: &str,
    run: &str,
    at: &str,
    passed: bool,
    size: usize,
) -> String {
    let entry = serde_json::json!({
        "package": "demo", "binary": "evals", "suite": "s", "suite_dir": "fixtures/s",
        "case": case, "test": format!("s::{case}"), "fixture": fixture,
        "passed": passed, "score": 1.0, "recording": "none", "evaluators": [],
        "input": {"message": format!("input of {case} in {run}")},
        "output": {"reply": "x".repeat(size)},
        "run": run, "finished_at": at,
    });
    let entry: Entry = serde_json::from_value(entry).unwrap();
    serde_json::to_string(&entry).unwrap() + "\n"
}

/// Each story is written once, in its journal: `results.jsonl` and `report.json` refer to it,
/// and the page embeds it from there.
#[test]
fn results_and_the_report_refer_to_each_story_in_its_journal() {
    let (dir, fixture, runs) = report_folder();
    let line = story_line(&fixture, "a", "r1", "2026-01-01T00:00:00Z", true, 100);
    let path = journal(&runs, "r1");
    std::fs::write(&path, &line).unwrap();
    let report = fold(dir.path()).unwrap();
    let story = report.cases[0].story.clone().expect("a reference");
    assert_eq!(story.journal, "runs/r1/journal.jsonl");
    let bytes = &line.as_bytes()[story.offset as usize..][..story.length as usize];
    assert!(bytes.starts_with(b",\"input\":{\"message\":\"input of a in r1\"}"));
    assert!(report.cases[0].input.is_none() && report.cases[0].output.is_none());
    let results = std::fs::read_to_string(dir.path().join("results.jsonl")).unwrap();
    assert!(
        !results.contains("input of a") && results.contains("\"story\":{"),
        "{results}"
    );
    let json = std::fs::read_to_string(dir.path().join("report.json")).unwrap();
    assert!(!json.contains("input of a"));
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert_eq!(html.matches("input of a in r1").count(), 1, "embedded once");
}

/// Ten whole runs of a suite: the runs past the size budget are removed (here a test budget of
/// 2 MB; 640 MiB in use), the one `results.jsonl` refers to never, and the page and `report
/// --merge` of the folder show every story of the runs kept.
#[test]
fn ten_runs_stay_within_the_budget_and_every_kept_story_shows() {
    let (dir, _, runs) = report_folder();
    let fixtures: Vec<PathBuf> = (0..200)
        .map(|i| {
            let path = dir.path().join(format!("fixtures/c{i:03}.json"));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "{}").unwrap();
            path
        })
        .collect();
    TEST_KEPT_BYTES.with(|b| b.set(Some(2_000_000)));
    for run in 0..10 {
        let name = format!("parent-{run}-1");
        let lines: String = fixtures
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let at = format!("2026-01-01T00:{run:02}:{:02}Z", i % 60);
                story_line(f, &format!("c{i:03}"), &name, &at, i % 7 != 0, 4000)
            })
            .collect();
        std::fs::write(journal(&runs, &name), lines).unwrap();
        fold(dir.path()).unwrap();
    }
    TEST_KEPT_BYTES.with(|b| b.set(None));
    let kept: Vec<String> = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let size = |path: &Path| -> u64 {
        std::fs::read_dir(path)
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .sum()
    };
    let run_bytes: u64 = kept.iter().map(|r| size(&runs.join(r))).sum();
    assert!(run_bytes <= 2_000_000, "{run_bytes} bytes in {kept:?}");
    assert!(kept.contains(&"parent-9-1".to_string()), "{kept:?}");
    assert!(kept.len() < 10 && !kept.contains(&"parent-0-1".to_string()));
    // The page: every case's story, as the latest run wrote it.
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    for i in 0..200 {
        assert!(
            html.contains(&format!("input of c{i:03} in parent-9-1")),
            "c{i:03}"
        );
    }
    // `report --merge` of this folder: the kept runs' journals, every story on its page.
    let out = dir.path().join("merged");
    let merged = super::merge::merge(&[dir.path().to_path_buf()], &out).unwrap();
    assert_eq!(merged.cases.len(), 200);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    for i in 0..200 {
        assert!(
            html.contains(&format!("input of c{i:03} in parent-9-1")),
            "c{i:03}"
        );
    }
    // Its `runs/` folder given itself: the same cases, from its runs' journals.
    let merged =
        super::merge::merge(std::slice::from_ref(&runs), &dir.path().join("merged-runs")).unwrap();
    assert_eq!(merged.cases.len(), 200);
}

/// A case's id as text (the page's links) and back: two suites whose folders share a last name
/// are two ids.
#[test]
fn a_case_id_reads_back_from_its_text() {
    use super::entry::CaseId;
    let eu = CaseId::new("demo", "evals", "fixtures/eu/payments", "sub/refund");
    let us = CaseId::new("demo", "evals", "fixtures/us/payments", "sub/refund");
    assert_eq!(eu.text(), "demo/evals/fixtures/eu/payments//sub/refund");
    assert_ne!(eu.text(), us.text());
    for id in [eu, us, CaseId::new("p", "b", "/abs/suite", "a")] {
        assert_eq!(CaseId::parse(&id.text()), Some(id.clone()));
    }
    assert_eq!(CaseId::parse("demo/evals/no-separator"), None);
}

/// The fold refuses a journal line without `suite`, `recording` or `evaluators` (which the
/// reading of a case it shares with a comparison lets a report made by hand leave out), and
/// names it.
#[test]
fn a_line_without_an_entrys_fields_is_named_not_folded() {
    let (dir, fixture, runs) = report_folder();
    let mut lines = entry_line(&fixture, "a", "2026-01-01T00:00:00Z", true);
    for (case, key) in [
        ("b", "\"suite\":\"s\","),
        ("c", "\"recording\":\"replayed\","),
        ("d", "\"evaluators\":[],"),
    ] {
        let line = entry_line(&fixture, case, "2026-01-01T00:00:01Z", true);
        assert!(line.contains(key), "{line}");
        lines.push_str(&line.replace(key, ""));
    }
    let path = journal(&runs, "parent-1-1");
    std::fs::write(&path, &lines).unwrap();
    let report = fold(dir.path()).unwrap();
    let cases: Vec<&str> = report.cases.iter().map(|c| c.case.as_str()).collect();
    assert_eq!(cases, ["a"]);
    let missing: Vec<&str> = report
        .unreadable_entries
        .iter()
        .map(|u| &u[u.find(": ").unwrap() + 2..])
        .collect();
    assert_eq!(
        missing,
        [
            "missing field `suite`",
            "missing field `recording`",
            "missing field `evaluators`"
        ],
        "{:?}",
        report.unreadable_entries
    );
}
