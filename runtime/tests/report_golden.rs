//! The report a run leaves, compared with goldens captured from the report code before the
//! journal (issue 25): a whole run, a part run (a filter) after it, and a nextest run of
//! `examples/payments-agent`, each folded into `report.json`, with times, run ids and the copy's
//! folder masked. `UPDATE_GOLDEN=1` writes the goldens.

mod support;

use serde_json::Value;
use std::path::{Path, PathBuf};
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

fn fold(dir: &Path) {
    proposal_eval::__internal::report::rebuild(dir).unwrap();
}

#[test]
fn a_whole_run_and_a_part_run_leave_the_golden_reports() {
    let _guard = lock();
    let example = example_with_two_failures();
    let dir = shared_target().join("proposal-eval");
    let _ = std::fs::remove_dir_all(&dir);

    let run = example.evals(&[], &[]);
    run.assert_summary(20, 2, 2);
    assert_golden("whole", &masked_report(&dir, &example.root));

    // A part: the `changes` cases again; the others stand from the whole run, marked older.
    let run = example.evals(&[], &["payments::changes::"]);
    assert!(!run.success, "{}", run.text());
    fold(&dir);
    let json = masked_report(&dir, &example.root);
    assert!(json["totals"]["older"].as_u64().unwrap() > 0, "{json}");
    assert_golden("part", &json);
}

#[test]
fn a_nextest_run_leaves_the_golden_report() {
    let _guard = lock();
    let nextest = std::process::Command::new(std::env::var_os("CARGO").unwrap_or("cargo".into()))
        .args(["nextest", "--version"])
        .output();
    if !nextest.is_ok_and(|o| o.status.success()) {
        println!(
            "skipped: cargo-nextest is not installed (`cargo install cargo-nextest --locked`)"
        );
        return;
    }
    let example = example_with_two_failures();
    let dir = shared_target().join("proposal-eval");
    let _ = std::fs::remove_dir_all(&dir);
    let run = example.run(
        &["nextest", "run", "--no-fail-fast", "--test", "evals"],
        &[],
    );
    assert!(!run.success, "{}", run.text());
    fold(&dir);
    assert_golden("nextest", &masked_report(&dir, &example.root));
}
