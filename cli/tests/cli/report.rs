use crate::common::*;
use proposal_eval::__internal::report::RecordingUse;
use proposal_eval::__internal::report::{Entry, EvaluatorEntry, FieldEntry};
use serde_json::Value;

/// An entry as a test run leaves it; its fixture is created so the entry counts.
fn entry(env: &Env, binary: &str, case: &str, passed: bool) -> Entry {
    let fixture = env.path(&format!("suite/{case}.json"));
    std::fs::create_dir_all(fixture.parent().unwrap()).unwrap();
    std::fs::write(&fixture, "{}").unwrap();
    let score = if passed { 1.0 } else { 0.5 };
    Entry {
        package: "demo".into(),
        binary: binary.into(),
        suite: "suite".into(),
        suite_dir: "suite".into(),
        case: case.into(),
        test: format!("suite::{case}"),
        fixture,
        description: None,
        passed,
        score: Some(score),
        recording: if passed {
            RecordingUse::Replayed
        } else {
            RecordingUse::Recorded
        },
        evaluators: vec![EvaluatorEntry {
            evaluator: "field_accuracy".into(),
            score,
            passed,
            summary: "1 of 2 fields".into(),
            misses: if passed {
                vec![]
            } else {
                vec!["invoice.total: outside tolerance".into()]
            },
            fields: vec![
                FieldEntry {
                    path: "invoice.number".into(),
                    hit: true,
                },
                FieldEntry {
                    path: "invoice.total".into(),
                    hit: passed,
                },
            ],
            rendered: if passed {
                String::new()
            } else {
                "  invoice.total: outside tolerance\n-1\n+2\n".into()
            },
        }],
        failure: (!passed).then(|| "suite/b: field_accuracy FAILED".to_string()),
        finished_at: "2025-01-15T10:00:00Z".parse().unwrap(),
    }
}

/// Runs the binary in `cwd` without the CARGO_TARGET_DIR this test may have been given.
fn report_in(cwd: &std::path::Path, args: &[&str]) -> Output {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cargo-proposal-eval"))
        .arg("proposal-eval")
        .args(args)
        .current_dir(cwd)
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .unwrap();
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn write_entry(env: &Env, target: &str, entry: &Entry) {
    env.write(
        &format!(
            "{target}/proposal-eval/entries/demo/{}/suite/{}.json",
            entry.binary, entry.case
        ),
        &serde_json::to_string_pretty(entry).unwrap(),
    );
}

#[test]
fn rebuilds_the_report_from_entries_and_prints_a_table() {
    let env = Env::new();
    env.write("Cargo.toml", "[package]\nname = \"demo\"\n");
    // Two binaries with the same test names: both kept.
    for binary in ["evals", "macro_evals"] {
        write_entry(&env, "target", &entry(&env, binary, "a", true));
        write_entry(&env, "target", &entry(&env, binary, "b", false));
    }
    // An entry whose fixture is gone is dropped; an unreadable one is skipped and counted.
    let mut gone = entry(&env, "evals", "gone", true);
    gone.fixture = env.path("suite/deleted.json");
    write_entry(&env, "target", &gone);
    env.write("target/proposal-eval/entries/old.json", "{\"name\": \"x\"}");

    let out = report_in(env.dir.path(), &["report"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let rows: Vec<&str> = out.stdout.lines().collect();
    assert!(rows[0].starts_with("suite"), "{}", out.stdout);
    assert!(rows[0].contains("pass rate"), "{}", out.stdout);
    assert!(
        rows[1].contains("demo/evals") && rows[1].contains("50.0%"),
        "{}",
        out.stdout
    );
    assert!(rows[2].contains("demo/macro_evals"), "{}", out.stdout);
    assert!(
        rows[3].starts_with("total") && rows[3].contains("4"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("50.0%  invoice.total (1/2)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("suite::b (demo/evals): field_accuracy 0.50"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("1 entry file(s) could not be read"),
        "{}",
        out.stdout
    );
    let html = env
        .path("target/proposal-eval/report.html")
        .canonicalize()
        .unwrap();
    assert!(
        out.stdout
            .trim_end()
            .ends_with(&format!("report: {}", html.display())),
        "{}",
        out.stdout
    );
    assert!(!env
        .path("target/proposal-eval/entries/demo/evals/suite/gone.json")
        .exists());

    let report: Value =
        serde_json::from_str(&env.read("target/proposal-eval/report.json")).unwrap();
    assert_eq!(report["totals"]["cases"], 4);
    assert_eq!(report["totals"]["passed"], 2);
    assert_eq!(report["totals"]["replayed"], 2);
    assert_eq!(report["totals"]["recorded"], 2);
    assert_eq!(report["suites"].as_array().unwrap().len(), 2);
    let suite = &report["suites"][0];
    assert_eq!(suite["binary"], "evals");
    assert_eq!(suite["pass_rate"], 0.5);
    assert_eq!(suite["field_accuracy"][1]["path"], "invoice.total");
    assert_eq!(suite["field_accuracy"][1]["accuracy"], 0.5);
    assert_eq!(suite["score_distribution"][5]["count"], 1);
    assert_eq!(suite["score_distribution"][9]["count"], 1);
    assert_eq!(suite["evaluators"][0]["evaluator"], "field_accuracy");
    assert_eq!(
        report["cases"][1]["evaluators"][0]["misses"][0],
        "invoice.total: outside tolerance"
    );
    let page = env.read("target/proposal-eval/report.html");
    assert!(page.contains("invoice.total: outside tolerance"));
}

#[test]
fn finds_the_target_folder() {
    let env = Env::new();
    // A workspace with a member: the workspace's target/ is the one.
    env.write("Cargo.toml", "[workspace]\nmembers = [\"member\"]\n");
    env.write("member/Cargo.toml", "[package]\nname = \"member\"\n");
    write_entry(&env, "target", &entry(&env, "evals", "a", true));
    let out = report_in(&env.path("member"), &["report"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(env.path("target/proposal-eval/report.json").exists());

    // CARGO_TARGET_DIR wins, and --target-dir over both.
    write_entry(&env, "elsewhere", &entry(&env, "evals", "a", false));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cargo-proposal-eval"))
        .args(["proposal-eval", "report"])
        .current_dir(env.path("member"))
        .env("CARGO_TARGET_DIR", env.path("elsewhere"))
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("0.0%"));
    let out = report_in(env.dir.path(), &["report", "--target-dir", "elsewhere"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(env.path("elsewhere/proposal-eval/report.html").exists());
}

#[test]
fn error_paths() {
    let env = Env::new();
    env.write("Cargo.toml", "[package]\nname = \"demo\"\n");
    let out = report_in(env.dir.path(), &["report"]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("no run report in"), "{}", out.stderr);
    assert!(out.stderr.contains("cargo test"), "{}", out.stderr);
    assert_eq!(report_in(env.dir.path(), &["report", "somewhere"]).code, 2);
    assert_eq!(
        report_in(env.dir.path(), &["report", "--target-dir"]).code,
        2
    );
    assert_eq!(report_in(env.dir.path(), &["report", "--open"]).code, 2);
}

#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    // `cargo proposal-eval report | true`: the reader is gone before anything is written.
    let env = Env::new();
    env.write("Cargo.toml", "[package]\nname = \"demo\"\n");
    write_entry(&env, "target", &entry(&env, "evals", "a", true));
    write_entry(&env, "target", &entry(&env, "evals", "b", false));
    let out = run_into_closed_pipe(env.dir.path(), &["report"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stderr, "", "no panic, no message");
    assert!(
        env.path("target/proposal-eval/report.html").is_file(),
        "the report is still built"
    );
    // Help and version print too.
    for args in [&["--help"][..], &["--version"], &["report", "--help"]] {
        let out = run_into_closed_pipe(env.dir.path(), args);
        assert_eq!((out.code, out.stderr.as_str()), (0, ""), "{args:?}");
    }
}
