use crate::common::*;
use crate::recordings::*;
use serde_json::{json, Value};

/// A suite with one case in every state.
fn every_state() -> Env {
    let env = crate_with_suite("[recording]\nsources = [\"prompts/*.md\"]\n");
    env.write("prompts/system.md", "You propose data changes.\n");
    simple(&env, "fresh");
    record(&env, "fresh", &["prompts/system.md"]);
    simple(&env, "sub/edited");
    record(&env, "sub/edited", &["prompts/system.md"]);
    fixture(
        &env,
        "sub/edited",
        json!({ "input": { "message": "changed" }, "expected": [] }),
    );
    simple(&env, "never_calls");
    orphan(&env, "gone");
    simple(&env, "conflicted");
    record(&env, "conflicted", &["prompts/system.md"]);
    let text = env.read("suite/recordings/conflicted.json");
    raw_recording(
        &env,
        "conflicted",
        &format!("<<<<<<< HEAD\n{text}=======\n{text}>>>>>>> other\n"),
    );
    env
}

#[test]
fn lists_every_state_with_a_summary() {
    let env = every_state();
    let out = env.run(&["status"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let line = |needle: &str| {
        out.stdout
            .lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no line with {needle:?} in\n{}", out.stdout))
            .to_string()
    };
    assert!(line(" fresh")
        .trim_start()
        .starts_with("fresh         fresh"));
    let stale = line("sub/edited");
    assert!(stale.trim_start().starts_with("stale"), "{stale}");
    assert!(stale.contains("suite/sub/edited.json changed"), "{stale}");
    assert!(line("never_calls").trim_start().starts_with("no recording"));
    let orphan = line("orphaned");
    assert!(orphan.contains("suite/recordings/gone.json"), "{orphan}");
    let unreadable = line("conflicted");
    assert!(
        unreadable.trim_start().starts_with("unreadable"),
        "{unreadable}"
    );
    assert!(unreadable.contains("merge-conflict"), "{unreadable}");
    assert!(
        out.stdout
            .contains("4 case(s): 1 fresh, 1 stale, 1 no recording, 1 orphaned, 1 unreadable"),
        "{}",
        out.stdout
    );
}

#[test]
fn check_fails_on_stale_orphaned_or_unreadable_only() {
    let env = crate_with_suite("");
    simple(&env, "fresh");
    record(&env, "fresh", &[]);
    simple(&env, "never_calls");
    let out = env.run(&["status", "--check"]);
    assert_eq!(
        out.code, 0,
        "a missing recording is fine: {}{}",
        out.stdout, out.stderr
    );

    // Stale.
    fixture(
        &env,
        "fresh",
        json!({ "input": { "message": "edited" }, "expected": [] }),
    );
    let out = env.run(&["status", "--check"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stderr.contains("status --check: 1 problem(s)"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("RECORD=stale"), "{}", out.stderr);
    record(&env, "fresh", &[]);
    assert_eq!(env.run(&["status", "--check"]).code, 0);

    // Orphaned.
    orphan(&env, "old");
    assert_eq!(env.run(&["status", "--check"]).code, 1);
    std::fs::remove_file(env.path("suite/recordings/old.json")).unwrap();

    // Unreadable: bad JSON, and a format this version does not read.
    raw_recording(&env, "never_calls", "{\"format\": 1,");
    let out = env.run(&["status", "--check"]);
    assert_eq!(out.code, 1);
    assert!(out.stdout.contains("cut off"), "{}", out.stdout);
    let good = env.read("suite/recordings/fresh.json");
    raw_recording(
        &env,
        "never_calls",
        &good.replace("\"format\": 1", "\"format\": 9"),
    );
    let out = env.run(&["status", "--check"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stdout.contains(
            "suite/recordings/never_calls.json: made by a newer proposal-eval (format 9; this version reads up to 5): upgrade proposal-eval"
        ),
        "{}",
        out.stdout
    );
}

#[test]
fn a_changed_suite_source_is_named() {
    let env = crate_with_suite("[recording]\nsources = [\"prompts/*.md\"]\n");
    env.write("prompts/a.md", "v1\n");
    simple(&env, "case");
    record(&env, "case", &["prompts/a.md"]);
    // CRLF reads as LF: not a change.
    env.write("prompts/a.md", "v1\r\n");
    assert_eq!(env.run(&["status", "--check"]).code, 0);
    env.write("prompts/a.md", "v2\n");
    let out = env.run(&["status", "--check"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stdout.contains("prompts/a.md changed (recorded "),
        "{}",
        out.stdout
    );
    // A new source file is a change too.
    env.write("prompts/b.md", "more\n");
    let out = env.run(&["status"]);
    assert!(
        out.stdout.contains("prompts/b.md is a new source"),
        "{}",
        out.stdout
    );
}

#[test]
fn drafts_are_shown_but_never_fail_the_check() {
    let env = crate_with_suite("");
    fixture(
        &env,
        "drafts/d",
        json!({ "input": { "m": 1 }, "status": "draft" }),
    );
    record(&env, "drafts/d", &[]);
    fixture(
        &env,
        "drafts/d",
        json!({ "input": { "m": 2 }, "status": "draft" }),
    );
    let out = env.run(&["status", "--check"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("drafts/d (draft)"), "{}", out.stdout);
    assert!(out.stdout.contains("stale"), "{}", out.stdout);
}

#[test]
fn validation_skip_does_not_fail_the_check_on_stale() {
    let env = crate_with_suite("[recording]\nvalidation = \"skip\"\n");
    simple(&env, "case");
    record(&env, "case", &[]);
    fixture(&env, "case", json!({ "input": 2, "expected": [] }));
    let out = env.run(&["status", "--check"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(out.stdout.contains("stale"), "{}", out.stdout);
}

#[test]
fn bad_fixture_missing_source_and_bad_config_are_unreadable() {
    let env = crate_with_suite("");
    env.write("suite/typo.json", "{\n  \"expcted\": []\n}\n");
    fixture(
        &env,
        "needs",
        json!({ "input": 1, "expected": [], "sources": ["prompts/missing.md"] }),
    );
    let out = env.run(&["status", "--check"]);
    assert_eq!(out.code, 1);
    assert!(out.stdout.contains("suite/typo.json:2:"), "{}", out.stdout);
    assert!(out.stdout.contains("prompts/missing.md"), "{}", out.stdout);

    let env = crate_with_suite("evaluators = [\"strikt\"]\n");
    simple(&env, "case");
    let out = env.run(&["status", "--check"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(out.stdout.contains("strikt"), "{}", out.stdout);
}

#[test]
fn json_format() {
    let env = every_state();
    let out = env.run(&["status", "--format", "json", "--check"]);
    assert_eq!(out.code, 1);
    let value: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        value["summary"],
        json!({ "cases": 4, "fresh": 1, "stale": 1, "no_recording": 1, "orphaned": 1,
                "unreadable": 1, "pending": 0, "failing_check": 3 })
    );
    let suite = &value["suites"][0];
    assert_eq!(suite["suite"], "suite");
    assert_eq!(suite["dir"], "suite");
    assert_eq!(suite["recordings"], "suite/recordings");
    let case = |name: &str| {
        suite["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["case"] == name)
            .unwrap()
            .clone()
    };
    let stale = case("sub/edited");
    assert_eq!(stale["state"], "stale");
    assert_eq!(stale["test"], "suite::sub::edited");
    assert_eq!(stale["status"], "active");
    assert_eq!(stale["fails_check"], true);
    assert_eq!(stale["changes"][0]["path"], "suite/sub/edited.json");
    assert_eq!(stale["changes"][0]["kind"], "changed");
    assert_eq!(stale["changes"][0]["recorded"].as_str().unwrap().len(), 64);
    let orphan = case("gone");
    assert_eq!(orphan["state"], "orphaned");
    assert_eq!(orphan["test"], Value::Null);
    assert_eq!(orphan["recording"], "suite/recordings/gone.json");
    assert!(case("conflicted")["reason"]
        .as_str()
        .unwrap()
        .contains("merge-conflict"));
    assert_eq!(case("never_calls")["state"], "no_recording");
    assert_eq!(case("fresh")["state"], "fresh");
    // --format text is the default.
    assert!(!env
        .run(&["status", "--format", "text"])
        .stdout
        .starts_with('{'));
}

#[test]
fn json_names_a_source_added_to_and_one_gone_from_the_suite() {
    let env = crate_with_suite("[recording]\nsources = [\"prompts/*.md\"]\n");
    env.write("prompts/system.md", "You propose data changes.\n");
    env.write("prompts/old.md", "Answer in French.\n");
    simple(&env, "grown");
    record(&env, "grown", &["prompts/old.md", "prompts/system.md"]);
    std::fs::remove_file(env.path("prompts/old.md")).unwrap();
    env.write("prompts/tone.md", "Be brief.\n");
    let out = env.run(&["status", "--format", "json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let value: Value = serde_json::from_str(&out.stdout).unwrap();
    let case = &value["suites"][0]["cases"][0];
    assert_eq!(case["state"], "stale", "{case}");
    // Only a changed file has hashes on both sides.
    assert_eq!(
        case["changes"],
        json!([
            { "path": "prompts/tone.md", "kind": "added" },
            { "path": "prompts/old.md", "kind": "removed" },
        ]),
        "{case}"
    );
}

#[test]
fn finds_suites_below_a_folder_and_takes_suite_folders() {
    let env = crate_with_suite("");
    simple(&env, "a");
    // A second crate with a suite, and configs that must not be found.
    env.write("other/Cargo.toml", "[package]\nname = \"other\"\n");
    env.write("other/evals/proposal-eval.toml", "");
    env.write("other/evals/b.json", "{\"input\": 1, \"expected\": []}");
    env.write("target/x/proposal-eval.toml", "");
    env.write(".hidden/proposal-eval.toml", "");
    let out = env.run(&["status"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("suite (suite, crate .)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("evals (other/evals, crate other)"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("2 case(s)"), "{}", out.stdout);
    assert!(!out.stdout.contains("target"), "{}", out.stdout);

    // A folder given by name is a suite even without a config file.
    env.write("plain/c.json", "{\"input\": 1, \"expected\": []}");
    let out = env.run(&["status", "plain"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("1 case(s)"), "{}", out.stdout);
    let out = env.run(&["status", "other/evals", "suite"]);
    assert!(out.stdout.contains("2 case(s)"), "{}", out.stdout);
}

#[test]
fn error_paths() {
    let env = Env::new();
    let out = env.run(&["status", "nope"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("nope: no such folder"),
        "{}",
        out.stderr
    );
    let out = env.run(&["status", "--format", "yaml"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("expected `text` or `json`"),
        "{}",
        out.stderr
    );
    let out = env.run(&["status", "--check=yes"]);
    assert_eq!(out.code, 2);
    let out = env.run(&["status", "--frobnicate"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("cargo proposal-eval status --help"),
        "{}",
        out.stderr
    );

    // No suite below the current folder.
    let out = env.run(&["status"]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("no suite found"), "{}", out.stderr);

    // No Cargo.toml above the suite.
    env.write("suite/proposal-eval.toml", "");
    let out = env.run(&["status"]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("no Cargo.toml"), "{}", out.stderr);
}

#[test]
fn config_and_recordings_outside_the_suite_are_honoured() {
    // A suite whose test says `Harness::new("suite").config("evals.toml")`, with its prompt as a
    // suite-wide source, and its recordings moved to `recorded/`.
    let env = crate_with_suite("");
    env.write("evals.toml", "[recording]\nsources = [\"prompts/*.md\"]\n");
    env.write("prompts/system.md", "You propose data changes.\n");
    simple(&env, "a");
    record(&env, "a", &["prompts/system.md"]);
    std::fs::create_dir_all(env.path("recorded")).unwrap();
    std::fs::rename(
        env.path("suite/recordings/a.json"),
        env.path("recorded/a.json"),
    )
    .unwrap();

    // With the defaults, the case has no recording (and the moved file is not seen).
    let out = env.run(&["status", "suite"]);
    assert!(out.stdout.contains("1 no recording"), "{}", out.stdout);

    let out = env.run(&[
        "status",
        "suite",
        "--config",
        "evals.toml",
        "--recordings",
        "recorded",
        "--check",
    ]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("1 fresh"), "{}", out.stdout);

    // The config's suite-wide source is a source: editing it makes the case stale.
    env.write("prompts/system.md", "You propose other changes.\n");
    let out = env.run(&[
        "status",
        "suite",
        "--config=evals.toml",
        "--recordings=recorded",
        "--check",
    ]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stdout.contains("prompts/system.md changed"),
        "{}",
        out.stdout
    );

    let out = env.run(&["prune", "suite", "--recordings", "recorded"]);
    assert!(
        out.stdout.contains("no orphaned recordings"),
        "{}",
        out.stdout
    );

    // With two suites found, --recordings would make the other's recordings look orphaned.
    env.write("other/proposal-eval.toml", "");
    let out = env.run(&["prune", ".", "--recordings", "recorded", "--yes"]);
    assert_ne!(out.code, 0, "{}", out.stdout);
    assert!(out.stderr.contains("describe one suite"), "{}", out.stderr);
}

#[test]
fn a_closed_pipe_ends_the_output_quietly_and_keeps_the_exit_status() {
    let env = crate_with_suite("");
    simple(&env, "fresh");
    record(&env, "fresh", &[]);
    for case in 0..200 {
        simple(&env, &format!("many/case_{case}"));
    }
    let out = run_into_closed_pipe(env.dir.path(), &["status"]);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    let out = run_into_closed_pipe(env.dir.path(), &["status", "--format", "json"]);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));

    // --check still fails, and says why on stderr.
    orphan(&env, "gone");
    let out = run_into_closed_pipe(env.dir.path(), &["status", "--check"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("status --check: 1 problem(s)"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);

    // prune --yes deletes every orphan even when nobody reads what it prints.
    orphan(&env, "gone_too");
    let out = run_into_closed_pipe(env.dir.path(), &["prune", "--yes"]);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    assert!(!env.path("suite/recordings/gone.json").exists());
    assert!(!env.path("suite/recordings/gone_too.json").exists());
}

#[test]
fn output_lost_to_anything_but_a_closed_pipe_is_an_error() {
    let Ok(full) = std::fs::File::options().write(true).open("/dev/full") else {
        eprintln!("no /dev/full here: skipped");
        return;
    };
    let env = crate_with_suite("");
    simple(&env, "case");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cargo-proposal-eval"))
        .args(["proposal-eval", "status"])
        .current_dir(env.dir.path())
        .stdout(full)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with("error: cannot write the output: "),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// The README's quickstart: a crate with `tests/evals.rs` and `fixtures/payments/*.json`, and
/// no `proposal-eval.toml`.
fn quickstart(test: &str) -> Env {
    let env = Env::new();
    env.write(
        "Cargo.toml",
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    env.write("tests/evals.rs", test);
    for case in ["raise_amount", "lower_amount"] {
        env.write(
            &format!("fixtures/payments/{case}.json"),
            &format!("{{ \"input\": {{ \"message\": \"{case}\" }}, \"expected\": [] }}\n"),
        );
    }
    env
}

#[test]
fn finds_a_suite_without_a_config_file_as_the_tests_name_it() {
    let macro_form = "use proposal_eval::{proposal_eval, Case, Llm};\n\n\
        #[proposal_eval(fixtures = \"fixtures/payments\", model = crate::live_model)]\n\
        fn payments(case: &Case, llm: &mut Llm) -> proposal_eval::Result<Vec<serde_json::Value>> {\n\
            todo!()\n}\n";
    let harness_form = "fn main() -> std::process::ExitCode {\n    \
        proposal_eval::Harness::new(\"fixtures/payments\").model(live_model).run(payments)\n}\n";
    for test in [macro_form, harness_form] {
        let env = quickstart(test);
        let out = env.run(&["status"]);
        assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
        assert!(
            out.stdout
                .starts_with("payments (fixtures/payments, crate .)\n"),
            "{}",
            out.stdout
        );
        assert!(out.stdout.contains("2 case(s)"), "{}", out.stdout);
        // From a folder inside the crate, and from the folder above it.
        let out = run_in(&env.path("fixtures"), &["status", "--check"]);
        assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
        assert!(out.stdout.contains("2 case(s)"), "{}", out.stdout);
        let out = run_in(&env.path("tests"), &["status"]);
        assert_eq!(out.code, 1, "fixtures/ is not below tests/: {}", out.stdout);
    }
}

#[test]
fn finds_a_recorded_suite_without_a_config_file_or_test_code() {
    // Recorded, then its test file and one fixture went: the orphan is still found and pruned.
    let env = quickstart("");
    let (sha256, bytes) = proposal_eval::__internal::recording::hash_content(
        env.read("fixtures/payments/raise_amount.json").as_bytes(),
    );
    proposal_eval::__internal::recording::Recording {
        format: 1,
        input_sha256: None,
        case: "raise_amount".into(),
        recorded_at: "2025-01-15T10:00:00Z".parse().unwrap(),
        sources: vec![proposal_eval::__internal::recording::Source {
            path: "fixtures/payments/raise_amount.json".into(),
            sha256,
            bytes,
        }],
        input: Some(json!({ "message": "raise_amount" })),
        samples: vec![proposal_eval::__internal::recording::Sample {
            interactions: vec![],
            judge: None,
        }],
        judge: None,
    }
    .write(&env.path("fixtures/payments/recordings/raise_amount.json"))
    .unwrap();
    recording_at(&env, "fixtures/payments/recordings/gone.json", "gone");
    std::fs::remove_file(env.path("tests/evals.rs")).unwrap();

    let out = env.run(&["status"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("2 case(s): 1 fresh, 0 stale, 1 no recording, 1 orphaned"),
        "{}",
        out.stdout
    );
    let out = env.run(&["prune", "--yes"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(!env.path("fixtures/payments/recordings/gone.json").exists());
    assert!(env
        .path("fixtures/payments/recordings/raise_amount.json")
        .exists());

    // A recordings/ folder with no recording in it makes no suite.
    let env = quickstart("");
    env.write("fixtures/payments/recordings/notes.json", "{}\n");
    let out = env.run(&["status"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(out.stderr.contains("no suite found"), "{}", out.stderr);
    assert!(out.stderr.contains("Harness::new"), "{}", out.stderr);
}
