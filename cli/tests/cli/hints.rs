//! The commands that `status`, `status --check` and `prune` print are run here as printed.

use crate::common::*;
use crate::recordings::*;
use proposal_eval::__internal::recording::{hash_content, Recording, Sample, Source};
use serde_json::json;
use std::path::Path;

/// The command between backticks on the line of `text` that contains `marker`, as words.
fn printed_command(text: &str, marker: &str) -> Vec<String> {
    let line = text
        .lines()
        .find(|l| l.contains(marker))
        .unwrap_or_else(|| panic!("no line with {marker:?} in\n{text}"));
    let command = line
        .split('`')
        .nth(1)
        .unwrap_or_else(|| panic!("no command in {line:?}"));
    shell_words::split(command).unwrap()
}

/// Runs a printed `cargo proposal-eval ...` command with the binary under test, in `cwd`.
fn run_printed(cwd: &Path, words: &[String]) -> Output {
    assert_eq!(words[..2], ["cargo", "proposal-eval"], "{words:?}");
    let args: Vec<&str> = words[2..].iter().map(String::as_str).collect();
    run_in(cwd, &args)
}

/// A crate whose suite `evals/my suite` keeps its recordings in `rec dir/` (as a test's
/// `Harness::recordings("rec dir")` would), with fixture `a` and an orphaned recording.
fn spaced_layout() -> Env {
    let env = Env::new();
    env.write(
        "Cargo.toml",
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    env.write("evals/my suite/proposal-eval.toml", "");
    env.write(
        "evals/my suite/a.json",
        "{ \"input\": 1, \"expected\": [] }\n",
    );
    recording_at(&env, "rec dir/gone.json", "gone");
    env
}

#[test]
fn status_check_and_prune_print_commands_that_work_when_pasted() {
    let env = spaced_layout();
    let selection = ["evals/my suite", "--recordings", "rec dir"];

    // status --check: the prune command carries the path and the flag, quoted.
    let mut args = vec!["status", "--check"];
    args.extend(selection);
    let out = env.run(&args);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let words = printed_command(&out.stderr, "orphaned");
    assert_eq!(
        words,
        [
            "cargo",
            "proposal-eval",
            "prune",
            "evals/my suite",
            "--recordings",
            "rec dir",
            "--yes"
        ]
    );
    assert!(
        out.stderr.contains("'evals/my suite'"),
        "quoted: {}",
        out.stderr
    );
    let pasted = run_printed(env.dir.path(), &words);
    assert_eq!(pasted.code, 0, "{}{}", pasted.stdout, pasted.stderr);
    assert!(!env.path("rec dir/gone.json").exists());
    assert!(env.path("evals/my suite/a.json").exists());
    assert_eq!(env.run(&args).code, 0, "nothing left to fail the check");

    // Plain status prints the same hint; prune's own listing ends with it too.
    recording_at(&env, "rec dir/gone.json", "gone");
    let mut args = vec!["status"];
    args.extend(selection);
    let out = env.run(&args);
    assert_eq!(printed_command(&out.stdout, "orphaned recordings:"), words);
    let mut args = vec!["prune"];
    args.extend(selection);
    let out = env.run(&args);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let words = printed_command(&out.stdout, "to delete them");
    let pasted = run_printed(env.dir.path(), &words);
    assert_eq!(pasted.code, 0, "{}{}", pasted.stdout, pasted.stderr);
    assert!(!env.path("rec dir/gone.json").exists());

    // With no PATH, the hint has none either (and works in the same folder).
    let env = crate_with_suite("");
    orphan(&env, "gone");
    let out = env.run(&["prune"]);
    let words = printed_command(&out.stdout, "to delete them");
    assert_eq!(words, ["cargo", "proposal-eval", "prune", "--yes"]);
    assert_eq!(run_printed(env.dir.path(), &words).code, 0);
    assert!(!env.path("suite/recordings/gone.json").exists());
}

#[test]
fn a_path_that_looks_like_a_flag_is_pasted_after_double_dash() {
    let env = crate_with_suite("");
    std::fs::rename(env.path("suite"), env.path("-suite")).unwrap();
    recording_at(&env, "-suite/recordings/gone.json", "gone");
    let out = env.run(&["prune", "--", "-suite"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let words = printed_command(&out.stdout, "to delete them");
    assert_eq!(
        words,
        ["cargo", "proposal-eval", "prune", "--yes", "--", "-suite"]
    );
    assert_eq!(run_printed(env.dir.path(), &words).code, 0);
    assert!(!env.path("-suite/recordings/gone.json").exists());
}

#[test]
fn the_re_record_command_names_a_crate_that_is_not_the_current_one() {
    // A crate in `sub crate/` whose recording is stale; status runs in the folder above.
    let env = Env::new();
    env.write(
        "sub crate/Cargo.toml",
        "[package]\nname = \"sub\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    env.write("sub crate/suite/proposal-eval.toml", "");
    env.write(
        "sub crate/suite/a.json",
        "{ \"input\": 2, \"expected\": [] }\n",
    );
    let (sha256, bytes) = hash_content(b"{ \"input\": 1, \"expected\": [] }\n");
    Recording {
        format: 1,
        input_sha256: None,
        case: "a".into(),
        recorded_at: "2025-01-15T10:00:00Z".parse().unwrap(),
        sources: vec![Source {
            path: "suite/a.json".into(),
            sha256,
            bytes,
        }],
        input: Some(json!(1)),
        samples: vec![Sample {
            interactions: vec![],
            judge: None,
        }],
        judge: None,
    }
    .write(&env.path("sub crate/suite/recordings/a.json"))
    .unwrap();

    let out = env.run(&["status", "--check"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let words = printed_command(&out.stderr, "re-record");
    assert_eq!(
        words,
        [
            "RECORD=stale",
            "cargo",
            "test",
            "--manifest-path",
            "sub crate/Cargo.toml",
            "--",
            "suite::a",
            "--exact"
        ]
    );
    // cargo finds the crate by that path (locate-project, rather than a whole test build).
    let located = std::process::Command::new(std::env::var("CARGO").unwrap_or("cargo".into()))
        .args(["locate-project", "--message-format", "plain"])
        .args(&words[3..5])
        .current_dir(env.dir.path())
        .output()
        .unwrap();
    assert!(located.status.success(), "{located:?}");
    assert_eq!(
        Path::new(String::from_utf8_lossy(&located.stdout).trim()),
        env.path("sub crate/Cargo.toml").canonicalize().unwrap()
    );

    // From inside the crate, plain `cargo test` is the crate's.
    let out = run_in(&env.path("sub crate/suite"), &["status"]);
    let words = printed_command(&out.stdout, "re-record");
    assert_eq!(
        words,
        ["RECORD=stale", "cargo", "test", "--", "suite::a", "--exact"]
    );
}

/// A crate whose test target `evals` runs the suite `suite/` (fixtures `a` and `b`, recorded),
/// and whose target `other` runs another suite: a stale case of `suite` is re-recorded through
/// `evals` alone, so that `other`'s unrecorded cases are not recorded on the way.
fn crate_with_targets() -> Env {
    let env = crate_with_suite("");
    env.write(
        "tests/evals.rs",
        "fn main() { proposal_eval::Harness::new(\"suite\").run(f); }\n",
    );
    env.write(
        "tests/other.rs",
        "fn main() { proposal_eval::Harness::new(\"elsewhere\").run(f); }\n",
    );
    env.write("elsewhere/x.json", "{ \"input\": 1, \"expected\": [] }\n");
    for case in ["a", "b"] {
        simple(&env, case);
        record(&env, case, &[]);
    }
    env
}

fn edit(env: &Env, case: &str) {
    fixture(
        env,
        case,
        json!({ "input": { "message": "edited" }, "expected": [] }),
    );
}

#[test]
fn the_re_record_command_names_the_test_target_of_the_stale_cases() {
    let env = crate_with_targets();
    edit(&env, "a");
    let out = env.run(&["status"]);
    assert_eq!(
        printed_command(&out.stdout, "re-record"),
        [
            "RECORD=stale",
            "cargo",
            "test",
            "--test",
            "evals",
            "--",
            "suite::a",
            "--exact"
        ]
    );
    edit(&env, "b");
    let out = env.run(&["status", "--check"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert_eq!(
        printed_command(&out.stderr, "re-record"),
        ["RECORD=stale", "cargo", "test", "--test", "evals"]
    );

    // A target whose module names the suite runs it too; a `[[test]]` names its own file.
    env.write("tests/e2e.rs", "mod shared;\nfn main() {}\n");
    env.write(
        "tests/shared/mod.rs",
        "pub fn go() { Harness::new(\"suite\").run(f); }\n",
    );
    env.write(
        "Cargo.toml",
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [[test]]\nname = \"macro-evals\"\npath = \"checks/macros.rs\"\n",
    );
    env.write(
        "checks/macros.rs",
        "#[proposal_eval(fixtures = \"suite\")]\nfn f() {}\n",
    );
    let out = env.run(&["status"]);
    assert_eq!(
        printed_command(&out.stdout, "re-record"),
        [
            "RECORD=stale",
            "cargo",
            "test",
            "--test",
            "e2e",
            "--test",
            "evals",
            "--test",
            "macro-evals"
        ]
    );
}
