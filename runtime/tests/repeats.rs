//! Repeats, through a harness run as a user's test binary: a live model whose answers to one
//! case alternate (right, wrong, right, …) and to another are always right.
//!
//! The binary is its own child: the parent writes a suite in a temporary crate, copies this
//! binary into that crate's `target/debug/deps/` (so the run's report lands in the crate's own
//! `target/proposal-eval/`) and runs it there with `REPEATS_CHILD=1` and the environment of each
//! step; the child is an ordinary `Harness` over `suite/`.

use proposal_eval::{Case, Harness, Llm, ModelError};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// The live model: per case, the n-th call answers right when n is even, unless the case is
/// `steady`, which is always answered right.
fn model() -> impl Fn(&Value) -> Result<Value, ModelError> {
    static CALLS: Mutex<Option<HashMap<String, usize>>> = Mutex::new(None);
    |request: &Value| {
        let case = request["case"].as_str().unwrap_or_default().to_string();
        let mut calls = CALLS.lock().unwrap();
        let n = calls
            .get_or_insert_with(HashMap::new)
            .entry(case.clone())
            .or_insert(0);
        let right = case == "steady" || n.is_multiple_of(2);
        *n += 1;
        Ok(json!({ "proposals": [{ "value": if right { 1 } else { 2 } }] }))
    }
}

fn agent(case: &Case, llm: &mut Llm) -> proposal_eval::Result<Value> {
    let reply = llm.complete(&json!({ "case": case.input["case"] }))?;
    Ok(reply["proposals"].clone())
}

fn child() -> std::process::ExitCode {
    Harness::new("suite").model(model).run(agent)
}

struct Crate {
    _dir: tempfile::TempDir,
    root: PathBuf,
    exe: PathBuf,
}

struct Run {
    success: bool,
    stdout: String,
    stderr: String,
}

impl Run {
    fn text(&self) -> String {
        format!("--- stdout\n{}\n--- stderr\n{}", self.stdout, self.stderr)
    }
}

impl Crate {
    fn new() -> Crate {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        for case in ["flaky", "steady"] {
            write(
                &root.join(format!("suite/{case}.json")),
                &json!({ "input": { "case": case }, "expected": [{ "value": 1 }] }).to_string(),
            );
        }
        // A crate whose test target `repeats` exists: the report keeps only entries of targets
        // that do.
        write(
            &root.join("Cargo.toml"),
            "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        );
        write(&root.join("tests/repeats.rs"), "");
        let deps = root.join("target/debug/deps");
        std::fs::create_dir_all(&deps).unwrap();
        let exe = deps.join(format!(
            "repeats-0123456789abcdef{}",
            std::env::consts::EXE_SUFFIX
        ));
        std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
        Crate {
            _dir: dir,
            root,
            exe,
        }
    }

    fn config(&self, toml: &str) {
        write(&self.root.join("suite/proposal-eval.toml"), toml);
    }

    fn run(&self, envs: &[(&str, &str)]) -> Run {
        let mut command = Command::new(&self.exe);
        command
            .args(["--test-threads", "1"])
            .current_dir(&self.root)
            .env("REPEATS_CHILD", "1")
            .env("CARGO_MANIFEST_DIR", &self.root)
            .env("CARGO_PKG_NAME", "demo")
            .env("NO_COLOR", "1");
        for variable in [
            "RECORD",
            "PROPOSAL_EVAL_RECORD",
            "PROPOSAL_EVAL_REPEAT",
            "CARGO_TARGET_DIR",
            "NEXTEST_RUN_ID",
        ] {
            command.env_remove(variable);
        }
        command.envs(envs.iter().copied());
        let out = command.output().unwrap();
        Run {
            success: out.status.success(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    fn json(&self, relative: &str) -> Value {
        serde_json::from_str(&std::fs::read_to_string(self.root.join(relative)).unwrap()).unwrap()
    }

    fn case_in_report(&self, case: &str) -> Value {
        let report = self.json("target/proposal-eval/report.json");
        report["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["case"] == case)
            .cloned()
            .unwrap_or_else(|| panic!("{case} in {report}"))
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn verdict(run: &Run, test: &str) -> String {
    run.stdout
        .lines()
        .filter_map(|l| l.strip_prefix("test ")?.split_once(" ... "))
        .find(|(name, _)| name.trim() == test)
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_else(|| panic!("no verdict for {test}:\n{}", run.text()))
}

fn assert_has(run: &Run, text: &str) {
    assert!(
        run.text().contains(text),
        "`{text}` missing from:\n{}",
        run.text()
    );
}

fn parent() {
    let krate = Crate::new();

    // Recording three samples: the flaky case's answers are right, wrong, right.
    let run = krate.run(&[("PROPOSAL_EVAL_RECORD", "1"), ("PROPOSAL_EVAL_REPEAT", "3")]);
    assert!(
        !run.success,
        "the flaky case fails under pass = all:\n{}",
        run.text()
    );
    assert_eq!(verdict(&run, "suite::steady"), "ok");
    assert_eq!(verdict(&run, "suite::flaky"), "FAILED");
    assert_has(
        &run,
        "suite::flaky: 2 of 3 samples passed, mean score 0.67 ± 0.33; pass = all needs 3 of 3",
    );
    assert_has(&run, "--- sample 2 of 3:\nsuite/flaky: strict FAILED");
    assert_has(&run, "repeats in suite: 2 case(s) of 3+ samples: pass@1 83.3%, pass@3 100.0%, pass^3 50.0%; 1 flaky");
    assert_has(
        &run,
        "  flaky: suite::flaky (FAILED, pass = all): 2 of 3 samples passed",
    );
    let recording = krate.json("suite/recordings/flaky.json");
    assert_eq!(recording["format"], 3);
    let answers: Vec<&Value> = recording["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["interactions"][0]["response"]["proposals"][0]["value"])
        .collect();
    assert_eq!(answers, [&json!(1), &json!(2), &json!(1)]);

    let case = krate.case_in_report("flaky");
    assert_eq!(case["passed"], false);
    assert_eq!(case["samples"]["verdicts"], json!([true, false, true]));
    assert_eq!(case["samples"]["passed"], 2);
    assert_eq!(case["samples"]["pass"], "all");
    let report = krate.json("target/proposal-eval/report.json");
    // The cases that just ran (with model calls and samples in their entries) are the latest.
    assert!(report["latest_run"].is_string(), "{report:#}");
    assert_eq!(report["totals"]["older"], 0, "{report:#}");
    assert_eq!(
        report["suites"][0]["repeats"]["flaky"],
        json!(["suite::flaky"])
    );
    assert_eq!(report["suites"][0]["repeats"]["k"], 3);
    assert_eq!(report["suites"][0]["repeats"]["pass_hat_k"], 0.5);

    // Replay, with the repeat and the rule in the config: every recorded sample is replayed.
    for (rule, passes) in [
        ("\"all\"", false),
        ("\"majority\"", true),
        ("{ at_least = 2 }", true),
        ("{ at_least = 3 }", false),
    ] {
        krate.config(&format!("[run]\nrepeat = 3\npass = {rule}\n"));
        let run = krate.run(&[]);
        assert_eq!(run.success, passes, "pass = {rule}:\n{}", run.text());
        assert_eq!(
            verdict(&run, "suite::flaky"),
            if passes { "ok" } else { "FAILED" },
            "{rule}"
        );
        assert_eq!(verdict(&run, "suite::steady"), "ok");
        assert_has(&run, "  flaky: suite::flaky");
        if passes {
            assert_has(&run, "note: suite::flaky: flaky: 2 of 3 samples passed");
        }
        assert_eq!(krate.case_in_report("flaky")["passed"], passes, "{rule}");
    }

    // Asking for more samples than recorded: the recording is stale, and RECORD=stale records
    // the samples asked for.
    krate.config("[run]\npass = \"majority\"\n");
    let run = krate.run(&[("PROPOSAL_EVAL_REPEAT", "5")]);
    assert_eq!(verdict(&run, "suite::flaky"), "FAILED");
    assert_has(
        &run,
        "the recording suite/recordings/flaky.json has 3 sample(s) and 5 are asked for (repeat = 5); record them: PROPOSAL_EVAL_REPEAT=5 RECORD=1 cargo test",
    );
    assert_eq!(krate.case_in_report("flaky")["recording"], "stale");
    let run = krate.run(&[("PROPOSAL_EVAL_REPEAT", "5"), ("RECORD", "stale")]);
    assert!(run.success, "{}", run.text());
    assert_eq!(
        krate.json("suite/recordings/flaky.json")["samples"]
            .as_array()
            .unwrap()
            .len(),
        5
    );
    assert_eq!(
        krate.json("suite/recordings/steady.json")["samples"]
            .as_array()
            .unwrap()
            .len(),
        5
    );
    // Without a repeat asked for, all five recorded samples are replayed.
    let run = krate.run(&[]);
    assert!(run.success, "{}", run.text());
    assert_eq!(
        krate.case_in_report("flaky")["samples"]["verdicts"]
            .as_array()
            .unwrap()
            .len(),
        5
    );

    // An entry line that cannot be read (here one cut off by a kill) is left out of the report,
    // which names it, and the run that folds the report names it at its end.
    let killed = "target/proposal-eval/runs/killed-run/journal.jsonl";
    write(
        &krate.root.join(killed),
        "{\"package\":\"demo\",\"binary\":\"repeats\",\"suite\":\"su",
    );
    let run = krate.run(&[]);
    assert!(run.success, "{}", run.text());
    let named = format!(
        "{}:1:48: EOF while parsing a string",
        krate.root.join(killed).display()
    );
    assert_has(
        &run,
        "warning: report entry lines that could not be read were left out",
    );
    assert_has(&run, &format!("\n  {named}\n"));
    let report = krate.json("target/proposal-eval/report.json");
    assert_eq!(report["unreadable_entries"], json!([named]));
    assert_eq!(report["totals"]["cases"], 2);

    // A bad value is named.
    let run = krate.run(&[("PROPOSAL_EVAL_REPEAT", "0")]);
    assert!(!run.success);
    assert_has(&run, "PROPOSAL_EVAL_REPEAT=\"0\" is not understood");
    krate.config("[run]\npass = \"most\"\n");
    let run = krate.run(&[]);
    assert!(!run.success);
    assert_has(&run, "unknown pass rule \"most\"");
}

fn main() -> std::process::ExitCode {
    if std::env::var_os("REPEATS_CHILD").is_some() {
        return child();
    }
    // `cargo test` passes libtest's arguments; a filter that is not ours skips the test.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    if args
        .iter()
        .any(|a| !"repeats_alternating_model".contains(a.as_str()))
    {
        return std::process::ExitCode::SUCCESS;
    }
    parent();
    println!("test repeats_alternating_model ... ok");
    std::process::ExitCode::SUCCESS
}
