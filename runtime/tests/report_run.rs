//! The report runs leave, driven as a user drives them: `cargo test` and `cargo nextest run` in a
//! standing-alone copy of `examples/payments-agent` (see `support`), and its test binaries
//! started side by side.
//!
//! - Goldens: `report.json` of a whole run, of a part run (a filter) after it, and of a nextest
//!   run, each compared with the one the report code before the journal (issue 25) gave for the
//!   same cases, with times, run ids and the copy's folder masked. `UPDATE_GOLDEN=1` writes them.
//! - Two test binaries and a nextest run appending at once; a process killed mid-line.
//!
//! The nextest cases print `skipped: …` and pass when cargo-nextest is not installed.

mod support;

use proposal_eval::__internal::report::Entry;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use support::{lock, shared_target, Example, SUITE};

/// The goldens' folder.
fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/report")
}

/// `report.json` with what differs from run to run masked: times, run ids and the temporary
/// folder the example was copied into.
fn masked_report(dir: &Path, root: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("report.json")).unwrap();
    let root = root.to_string_lossy().into_owned();
    let mut json: Value = serde_json::from_str(&text.replace(&root, "<root>")).unwrap();
    json["generated_at"] = "<time>".into();
    json["latest_run"] = "<run>".into();
    for suite in json["suites"].as_array_mut().unwrap() {
        suite["last_finished_at"] = "<time>".into();
    }
    for case in json["cases"].as_array_mut().unwrap() {
        case["finished_at"] = "<time>".into();
        case["run"] = "<run>".into();
        // The fields reports v2 added (a case's story for the page) were not in the old
        // report: the goldens compare what both give.
        let case = case.as_object_mut().unwrap();
        for v2 in ["input", "output", "calls", "story", "recording_path"] {
            case.remove(v2);
        }
        // The old report wrote empty fields out; this one leaves them out.
        for key in ["description", "failure"] {
            case.entry(key).or_insert(Value::Null);
        }
        for evaluator in case["evaluators"].as_array_mut().unwrap() {
            let evaluator = evaluator.as_object_mut().unwrap();
            evaluator.remove("verdicts");
            evaluator.remove("alignment");
            for (key, empty) in [
                ("misses", json!([])),
                ("fields", json!([])),
                ("rendered", json!("")),
            ] {
                evaluator.entry(key).or_insert(empty);
            }
        }
    }
    json
}

/// Compares `json` with the golden `name`, or writes it under `UPDATE_GOLDEN=1`.
fn assert_golden(name: &str, json: &Value) {
    let path = golden_dir().join(format!("{name}.json"));
    let text = serde_json::to_string_pretty(json).unwrap() + "\n";
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(golden_dir()).unwrap();
        std::fs::write(&path, text).unwrap();
        return;
    }
    let golden = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    assert_eq!(text, golden, "report.json differs from {}", path.display());
}

/// The example with two failing cases (a strict mismatch each).
fn example_with_two_failures() -> Example {
    let example = Example::new();
    for case in ["changes/raise_amount", "changes/new_iban"] {
        let path = format!("{SUITE}/{case}.json");
        let text = example.read(&path);
        let edited = text.replacen("\"changeType\": \"change\"", "\"changeType\": \"other\"", 1);
        assert_ne!(edited, text, "{case} is edited");
        example.write(&path, edited);
    }
    example
}

/// The report folder every copy of the example writes to, emptied.
fn empty_report_dir() -> PathBuf {
    let dir = shared_target().join("proposal-eval");
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// What `cargo proposal-eval report` does: the journals folded into the report.
fn fold(dir: &Path) -> proposal_eval::__internal::report::Report {
    proposal_eval::__internal::report::fold(dir).unwrap()
}

/// Whether `cargo nextest` runs here; prints why a test is skipped when not.
fn nextest_installed(test: &str) -> bool {
    let cargo = std::env::var_os("CARGO").unwrap_or("cargo".into());
    let found = Command::new(cargo)
        .args(["nextest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        println!("skipped: {test}: cargo-nextest is not installed (cargo install cargo-nextest --locked)");
    }
    found
}

/// The journals in `dir/runs`: run folder name and lines.
fn journals(dir: &Path) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = std::fs::read_dir(dir.join("runs"))
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let text = std::fs::read_to_string(path.join("journal.jsonl")).unwrap();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, text.lines().map(str::to_string).collect())
        })
        .collect();
    out.sort();
    out
}

#[test]
fn a_whole_run_and_a_part_run_leave_the_golden_reports() {
    let _guard = lock();
    let example = example_with_two_failures();
    let dir = empty_report_dir();

    // A whole run folds at its end.
    let run = example.evals(&[], &[]);
    run.assert_summary(20, 2, 2);
    assert_golden("whole", &masked_report(&dir, &example.root));
    let files = ["results.jsonl", "report.json", "report.html"].map(|f| dir.join(f));
    let written = files.clone().map(|f| std::fs::read(f).unwrap());

    // A part only appends to its run's journal; the fold takes it up. The other cases stand
    // from the whole run, marked older.
    let run = example.evals(&[], &["payments::changes::"]);
    assert!(!run.success, "{}", run.text());
    assert_eq!(
        files.clone().map(|f| std::fs::read(f).unwrap()),
        written,
        "a part run leaves the report as it was"
    );
    assert_eq!(journals(&dir).len(), 2, "a journal per run");
    fold(&dir);
    let json = masked_report(&dir, &example.root);
    assert!(json["totals"]["older"].as_u64().unwrap() > 0, "{json}");
    assert_golden("part", &json);
}

#[test]
fn a_nextest_run_leaves_the_golden_report() {
    let _guard = lock();
    if !nextest_installed("a_nextest_run_leaves_the_golden_report") {
        return;
    }
    let example = example_with_two_failures();
    let dir = empty_report_dir();
    let run = example.run(
        &["nextest", "run", "--no-fail-fast", "--test", "evals"],
        &[],
    );
    assert!(!run.success, "{}", run.text());
    assert!(
        !dir.join("report.json").exists(),
        "each nextest process only appends"
    );
    fold(&dir);
    assert_golden("nextest", &masked_report(&dir, &example.root));
}

/// The example's test binaries, built: `evals` (the harness) and `macro_evals`.
fn test_binaries(example: &Example) -> Vec<(String, PathBuf)> {
    let out = example
        .cargo(&["test", "--no-run", "--message-format=json"])
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    assert!(out.status.success());
    let mut binaries = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let message: Value = serde_json::from_str(line).unwrap_or(Value::Null);
        if let (Some(name), Some(exe)) = (
            message["target"]["name"].as_str(),
            message["executable"].as_str(),
        ) {
            if message["target"]["kind"][0] == "test" {
                binaries.push((name.to_string(), PathBuf::from(exe)));
            }
        }
    }
    binaries.sort();
    binaries
}

/// A test binary of the example started as cargo starts it, in `run` (its journal's name).
fn start(example: &Example, exe: &Path, run: Option<&str>) -> Command {
    let mut cmd = Command::new(exe);
    // Nothing of this test run's own settings leaks in.
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        if key.starts_with("PROPOSAL_EVAL_") || key.starts_with("NEXTEST") || key == "RECORD" {
            cmd.env_remove(&*key);
        }
    }
    cmd.current_dir(&example.root)
        .env("CARGO_MANIFEST_DIR", &example.root)
        .env("CARGO_PKG_NAME", "payments-agent")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(run) = run {
        cmd.env("NEXTEST_RUN_ID", run);
    }
    cmd
}

#[test]
fn two_test_binaries_and_a_nextest_run_append_at_once() {
    let _guard = lock();
    let example = example_with_two_failures();
    let binaries = test_binaries(&example);
    let names: Vec<&str> = binaries.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["evals", "macro_evals"]);
    let dir = empty_report_dir();
    let nextest =
        nextest_installed("the nextest part of two_test_binaries_and_a_nextest_run_append_at_once");

    // Both binaries are children of this process: one run, one journal. Each runs its whole
    // target, so each folds at its end while the others still append.
    let children: Vec<_> = binaries
        .iter()
        .map(|(_, exe)| start(&example, exe, None).spawn().unwrap())
        .collect();
    let nextest_run = nextest.then(|| {
        example.run(
            &["nextest", "run", "--no-fail-fast", "--test", "evals"],
            &[],
        )
    });
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(101),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    if let Some(run) = &nextest_run {
        assert!(!run.success, "{}", run.text());
    }

    let journals = journals(&dir);
    assert_eq!(journals.len(), if nextest { 2 } else { 1 }, "{journals:?}");
    let report = fold(&dir);
    let macro_cases = report
        .cases
        .iter()
        .filter(|c| c.binary == "macro_evals")
        .count();
    let evals_cases = report.cases.iter().filter(|c| c.binary == "evals").count();
    assert_eq!(evals_cases, 22);
    assert!(macro_cases > 0);
    for (name, lines) in &journals {
        // Every line whole: none cut, none glued to another.
        for line in lines {
            serde_json::from_str::<Entry>(line).unwrap_or_else(|e| panic!("{name}: {e}: {line}"));
        }
        let expected = if name.starts_with("nextest-") {
            22
        } else {
            22 + macro_cases
        };
        assert_eq!(lines.len(), expected, "{name}");
    }
    assert_eq!(report.unreadable_entries, Vec::<String>::new());

    // A fold again changes no file.
    let files = ["results.jsonl", "report.json", "report.html"].map(|f| dir.join(f));
    let before = files.clone().map(|f| std::fs::read(f).unwrap());
    fold(&dir);
    assert_eq!(files.map(|f| std::fs::read(f).unwrap()), before);
}

/// Takes the journal's lock (`flock`), writes the start of a line, says `locked`, and sleeps
/// until it is killed (60 s at most).
const KILLED_WRITER: &str = "import fcntl, sys, time
f = open(sys.argv[1], 'a')
fcntl.flock(f, fcntl.LOCK_EX)
f.write(sys.argv[2])
f.flush()
print('locked', flush=True)
time.sleep(60)
";

/// The output of `child`, killed and failed past `limit` (its pipes read meanwhile).
fn wait_bounded(
    mut child: std::process::Child,
    limit: std::time::Duration,
) -> std::process::Output {
    let read = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                std::io::Read::read_to_end(&mut pipe, &mut bytes).unwrap();
            }
            bytes
        })
    };
    let stdout = read(child.stdout.take().map(|p| Box::new(p) as _));
    let stderr = read(child.stderr.take().map(|p| Box::new(p) as _));
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            child.kill().unwrap();
            panic!("the process did not end within {limit:?}: a lock was left behind");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    std::process::Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

#[test]
fn a_line_cut_by_a_killed_process_is_skipped_and_named() {
    let _guard = lock();
    let example = example_with_two_failures();
    let binaries = test_binaries(&example);
    let dir = empty_report_dir();
    // A process of run `cut` takes the journal's lock as a test process does (`flock`, what
    // `File::lock` is on Linux), writes half its line, and is killed (SIGKILL) while another
    // process of the run waits for the lock.
    let journal = dir.join("runs/nextest-cut/journal.jsonl");
    std::fs::create_dir_all(journal.parent().unwrap()).unwrap();
    let cut = "{\"package\":\"payments-agent\",\"binary\":\"evals\",\"suite\":\"pay";
    let mut writer = Command::new("python3")
        .args(["-c", KILLED_WRITER])
        .arg(&journal)
        .arg(cut)
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs the killed writer");
    let mut ready = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(writer.stdout.take().unwrap()),
        &mut ready,
    )
    .unwrap();
    assert_eq!(ready, "locked\n", "the writer holds the lock mid-line");

    // Another process of the run appends: the kernel lets go of the killed writer's lock, the
    // new lines start on a line of their own, and as it runs its whole target, it folds and
    // names the cut line at its end.
    let (_, evals) = &binaries[0];
    let appender = start(&example, evals, Some("cut")).spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    writer.kill().unwrap();
    writer.wait().unwrap();
    let out = wait_bounded(appender, std::time::Duration::from_secs(120));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let text = std::fs::read_to_string(&journal).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], cut);
    assert_eq!(lines.len(), 23, "the cut line and 22 cases");
    for line in &lines[1..] {
        serde_json::from_str::<Entry>(line).unwrap();
    }
    let named = format!(
        "{}:1:{}: EOF while parsing a string",
        journal.display(),
        cut.len()
    );
    assert!(
        stderr.contains(&format!(
            "warning: report entry lines that could not be read were left out of the report \
             (their cases show an earlier result or none; run them again to write their entries):\n  {named}\n"
        )),
        "{stderr}"
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["unreadable_entries"], serde_json::json!([named]));
    assert_eq!(report["totals"]["cases"], 22);
}
