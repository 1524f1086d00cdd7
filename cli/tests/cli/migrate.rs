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
            .contains("2 migrated, 0 already format 2, 1 stale (left as they are), 0 unreadable"),
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
            .contains("0 migrated, 2 already format 2, 1 stale (left as they are), 0 unreadable"),
        "{}",
        out.stdout
    );
    assert_eq!(env.read("suite/recordings/fresh.json"), text);
    let out = env.run(&["migrate", "--check", "suite"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
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
