//! `cargo proposal-eval migrate`: fresh format-1 recordings rewritten as format 2, stale ones
//! left and listed, a dry run, and a second run that changes nothing.

use crate::common::*;
use crate::recordings::*;
use serde_json::json;

#[test]
fn migrates_fresh_format_1_recordings_and_leaves_stale_ones() {
    let env = crate_with_suite("[recording]\nsources = [\"prompts/*.md\"]\n");
    env.write("prompts/system.md", "You propose data changes.\n");
    for case in ["fresh", "sub/fresh", "edited"] {
        simple(&env, case);
        record(&env, case, &["prompts/system.md"]);
    }
    fixture(
        &env,
        "edited",
        json!({ "input": { "message": "changed" }, "expected": [] }),
    );
    simple(&env, "never_calls");
    let before_fresh = env.json("suite/recordings/fresh.json");
    let before_edited = env.read("suite/recordings/edited.json");

    // A dry run writes nothing and fails, so CI can ask for migrated recordings.
    let out = env.run(&["migrate", "--check"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("would migrate suite/recordings/fresh.json (format 1 to 2)"),
        "{}",
        out.stdout
    );
    assert_eq!(env.json("suite/recordings/fresh.json"), before_fresh);

    let out = env.run(&["migrate"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    for file in [
        "suite/recordings/fresh.json",
        "suite/recordings/sub/fresh.json",
    ] {
        assert!(
            out.stdout
                .contains(&format!("migrated      {file} (format 1 to 2)")),
            "{}",
            out.stdout
        );
    }
    assert!(
        out.stdout.contains(
            "stale         suite/recordings/edited.json: suite/edited.json changed (recorded sha256"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("2 migrated, 0 already current, 1 stale (left as they are), 0 unreadable"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("RECORD=stale cargo test"),
        "{}",
        out.stdout
    );
    assert_eq!(env.read("suite/recordings/edited.json"), before_edited);

    let after = env.json("suite/recordings/fresh.json");
    assert_eq!(after["format"], 2);
    assert_eq!(after["interactions"], before_fresh["interactions"]);
    assert_eq!(after["recorded_at"], before_fresh["recorded_at"]);
    assert_eq!(after["input"], before_fresh["input"]);
    assert_eq!(
        after["sources"],
        json!([before_fresh["sources"][1]]),
        "the prompt stays a source, the fixture file does not"
    );
    assert!(after["input_sha256"]
        .as_str()
        .is_some_and(|h| h.len() == 64));

    // Fresh as format 2; editing everything but the input leaves it fresh.
    fixture(
        &env,
        "fresh",
        json!({ "input": { "message": "fresh" }, "description": "new words", "expected": [] }),
    );
    let out = env.run(&["status", "--check", "suite"]);
    assert_eq!(out.code, 1, "only `edited` is stale: {}", out.stdout);
    assert!(out.stdout.contains("1 stale"), "{}", out.stdout);
    assert!(out.stdout.contains("2 fresh"), "{}", out.stdout);

    // Idempotent.
    let text = env.read("suite/recordings/fresh.json");
    let out = env.run(&["migrate", "suite"]);
    assert_eq!(out.code, 0);
    assert!(
        out.stdout
            .contains("0 migrated, 2 already current, 1 stale (left as they are), 0 unreadable"),
        "{}",
        out.stdout
    );
    assert_eq!(env.read("suite/recordings/fresh.json"), text);
    let out = env.run(&["migrate", "--check", "suite"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
}

/// The committed format-4 recording of `examples/rubric-agent` (a judge part whose call keeps
/// its whole request), migrated: format 5, the request replaced by its hash, the key the one a
/// format-5 replay of the same output computes, the verdicts as they were.
#[test]
fn migrates_a_fresh_format_4_judged_recording_to_format_5() {
    use proposal_eval::__internal::case_run::Question;
    use proposal_eval::__internal::recording::input_digest;
    use proposal_eval::config::RubricJudgeConfig;
    use proposal_eval::rubric::{Rubric, BUILTIN_TEMPLATE};

    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/rubric-agent/fixtures/greetings");
    let env = crate_with_suite("evaluators = [\"rubric\"]\n");
    let read = |rel: &str| std::fs::read_to_string(example.join(rel)).unwrap();
    env.write("suite/hello.json", &read("hello.json"));
    env.write(
        "suite/recordings/hello.json",
        &read("recordings/hello.json"),
    );
    let before = env.json("suite/recordings/hello.json");
    assert_eq!(before["format"], 4);

    let out = env.run(&["migrate", "--check", "suite"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("would migrate suite/recordings/hello.json (format 4 to 5)"),
        "{}",
        out.stdout
    );
    let out = env.run(&["migrate", "suite"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("migrated      suite/recordings/hello.json (format 4 to 5)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("1 migrated, 0 already current, 0 stale (left as they are), 0 unreadable"),
        "{}",
        out.stdout
    );

    let after = env.json("suite/recordings/hello.json");
    assert_eq!(after["format"], 5);
    let (old, new) = (&before["judge"], &after["judge"]);
    let call = &new["calls"][0];
    assert!(call.get("request").is_none(), "{call:#}");
    assert_eq!(
        call["request_sha256"],
        // A judge call's request hash is the canonical JSON's SHA-256, as the input's is.
        input_digest(&old["calls"][0]["request"]).0
    );
    assert_eq!(call["response"], old["calls"][0]["response"]);
    for key in ["verdicts", "parts", "recorded_at"] {
        assert_eq!(new[key], old[key], "{key}");
    }
    assert_eq!(after["samples"], before["samples"]);

    // The case's output (the greetings function of `examples/rubric-agent/tests/macro_judged.rs`)
    // judged as a replay judges it: format 4 keyed it so, format 5 keys it so now.
    let rubric: Rubric =
        serde_json::from_value(env.json("suite/hello.json")["rubric"].clone()).unwrap();
    let (input, output) = (
        json!({ "name": "Ada" }),
        json!({ "reply": "Hello Ada, how can I help?" }),
    );
    let config = RubricJudgeConfig::default();
    let question = Question {
        rubric: &rubric,
        input: &input,
        input_sha256: None,
        output: &output,
        trajectory: None,
        template: BUILTIN_TEMPLATE,
        config: &config,
    };
    assert_eq!(old["key_sha256"], question.key_sha256_format_4());
    assert_eq!(new["key_sha256"], question.key_sha256());

    let text = env.read("suite/recordings/hello.json");
    let out = env.run(&["migrate", "suite"]);
    assert!(
        out.stdout
            .contains("0 migrated, 1 already current, 0 stale (left as they are), 0 unreadable"),
        "{}",
        out.stdout
    );
    assert_eq!(env.read("suite/recordings/hello.json"), text);
}

#[test]
fn migrate_help_says_what_it_does() {
    let env = Env::new();
    let out = env.run(&["migrate", "--help"]);
    assert_eq!(out.code, 0);
    assert!(
        out.stdout.contains("without calling the model"),
        "{}",
        out.stdout
    );
    let out = env.run(&["--help"]);
    assert!(out.stdout.contains("migrate"), "{}", out.stdout);
}
