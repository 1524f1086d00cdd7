use crate::common::*;
use serde_json::json;

fn drafted(env: &Env) {
    env.lines("in.jsonl", &[suggestion("s1")]);
    assert_eq!(env.draft("in.jsonl", &[]).code, 0);
}

#[test]
fn promote_refuses_a_draft_without_expected_or_rubric() {
    let env = Env::new();
    drafted(&env);
    let mut fixture = env.json("suite/drafts/eval_s1.json");
    fixture["draft"]["assertions"] = json!({ "required": [], "forbidden": [] });
    let before = serde_json::to_string(&fixture).unwrap();
    env.write("suite/drafts/eval_s1.json", &before);
    let out = env.run(&["promote", "eval_s1", "--suite", "suite"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("is not complete: it has no `expected` and no rubric. Add the proposals"),
        "{}",
        out.stderr
    );
    assert_eq!(env.read("suite/drafts/eval_s1.json"), before);
}

/// A drafted case's assertions are its rubric: with them, it needs no `expected`.
#[test]
fn promote_accepts_a_draft_with_a_rubric_and_no_expected() {
    let env = Env::new();
    drafted(&env);
    let drafted = env.json("suite/drafts/eval_s1.json");
    assert!(drafted.get("expected").is_none(), "{drafted}");
    assert!(
        !drafted["draft"]["assertions"]["forbidden"]
            .as_array()
            .unwrap()
            .is_empty(),
        "{drafted}"
    );
    let out = env.run(&["promote", "eval_s1", "--suite", "suite"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let promoted = env.json("suite/drafts/eval_s1.json");
    assert_eq!(promoted["status"], "active");
    assert_eq!(
        promoted["draft"]["assertions"],
        drafted["draft"]["assertions"]
    );
}

#[test]
fn promote_activates_a_completed_draft_in_place() {
    let env = Env::new();
    drafted(&env);
    let mut fixture = env.json("suite/drafts/eval_s1.json");
    fixture["expected"] = json!([{ "changeType": "none" }]);
    env.write(
        "suite/drafts/eval_s1.json",
        &serde_json::to_string(&fixture).unwrap(),
    );
    // By suggestion id, from the crate root (the default --suite is the current folder), where
    // the suite is a folder with its own config, and a build folder holds a copy to skip.
    env.write("suite/proposal-eval.toml", "");
    env.write(
        "target/copy/eval_s1.json",
        &serde_json::to_string(&fixture).unwrap(),
    );
    let out = env.run(&["promote", "s1"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("promoted eval_s1"), "{}", out.stdout);
    let promoted = env.json("suite/drafts/eval_s1.json");
    assert_eq!(promoted["status"], "active");
    assert_eq!(promoted["draft"]["edit_source"], "human");
    assert_eq!(promoted["expected"], json!([{ "changeType": "none" }]));
    assert_eq!(promoted["draft"]["source"], fixture["draft"]["source"]);
    assert!(env.read("suite/drafts/eval_s1.json").ends_with("}\n"));
    let parsed = proposal_eval::__internal::fixture::FixtureFile::parse(
        env.read("suite/drafts/eval_s1.json").as_bytes(),
        "eval_s1.json",
    )
    .unwrap();
    assert_eq!(
        parsed.status,
        proposal_eval::__internal::fixture::Status::Active
    );

    // Promoting again changes nothing; drafting again leaves the case alone.
    let text = env.read("suite/drafts/eval_s1.json");
    let again = env.run(&["promote", "eval_s1", "--suite", "suite"]);
    assert_eq!(again.code, 0);
    assert!(again.stdout.contains("already active"), "{}", again.stdout);
    let out = env.draft("in.jsonl", &[]);
    assert!(out.stdout.contains("edited by a human"), "{}", out.stdout);
    assert_eq!(env.read("suite/drafts/eval_s1.json"), text);
}

#[test]
fn promote_names_what_it_could_not_find() {
    let env = Env::new();
    drafted(&env);
    let out = env.run(&["promote", "eval_nope", "--suite", "suite"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("no drafted case with id \"eval_nope\""),
        "{}",
        out.stderr
    );

    std::fs::copy(
        env.path("suite/drafts/eval_s1.json"),
        env.path("suite/copy.json"),
    )
    .unwrap();
    let out = env.run(&["promote", "s1", "--suite", "suite"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("matches 2 drafted cases"),
        "{}",
        out.stderr
    );
}

#[test]
fn promote_reports_an_invalid_draft_key() {
    let env = Env::new();
    drafted(&env);
    let mut fixture = env.json("suite/drafts/eval_s1.json");
    fixture["draft"]["edit_source"] = json!("robot");
    fixture["expected"] = json!([]);
    env.write("suite/drafts/eval_s1.json", &fixture.to_string());
    let out = env.run(&["promote", "eval_s1", "--suite", "suite"]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("invalid `draft` key"), "{}", out.stderr);
}

#[test]
fn promote_refuses_a_case_the_tests_would_reject() {
    let env = Env::new();
    drafted(&env);
    let mut fixture = env.json("suite/drafts/eval_s1.json");
    fixture["expected"] = json!([]);
    fixture["ignore_paths"] = json!(["a..b"]);
    env.write(
        "suite/drafts/eval_s1.json",
        &serde_json::to_string(&fixture).unwrap(),
    );
    let before = env.read("suite/drafts/eval_s1.json");
    let out = env.run(&["promote", "eval_s1", "--suite", "suite"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stderr.contains("would not be a valid case") && out.stderr.contains("a..b"),
        "{}",
        out.stderr
    );
    assert_eq!(env.read("suite/drafts/eval_s1.json"), before);
}

#[test]
fn promote_writes_todays_generator_meta_keys() {
    let env = Env::new();
    drafted(&env);
    let today = env.json("suite/drafts/eval_s1.json");
    // A draft as versions before `prompt_hash` wrote it, completed by hand.
    let mut fixture = today.clone();
    with_old_keys(&mut fixture);
    fixture["expected"] = json!([{ "changeType": "none" }]);
    env.write(
        "suite/drafts/eval_s1.json",
        &serde_json::to_string_pretty(&fixture).unwrap(),
    );
    let out = env.run(&["promote", "eval_s1", "--suite", "suite"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let meta = &env.json("suite/drafts/eval_s1.json")["draft"]["generator_meta"];
    assert_eq!(
        meta["prompt_hash"],
        today["draft"]["generator_meta"]["prompt_hash"]
    );
    assert_eq!(meta["model"], serde_json::Value::Null);
    assert_eq!(meta["temperature"], serde_json::Value::Null);
    assert!(meta.get("prompt_sha256").is_none());
}

/// After promoting, `promote` says what is left: recording the case alone, through the test
/// target that runs its suite, or nothing when the draft's recording is already fresh.
#[test]
fn promote_says_whether_the_case_still_needs_a_recording() {
    use proposal_eval::__internal::recording::{input_digest, Recording, Sample, FORMAT};
    let env = Env::new();
    env.write(
        "Cargo.toml",
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    env.write(
        "tests/evals.rs",
        "fn main() { proposal_eval::Harness::new(\"suite\").run(f); }\n",
    );
    env.lines("in.jsonl", &[suggestion("s1"), suggestion("s2")]);
    assert_eq!(env.draft("in.jsonl", &[]).code, 0);

    let out = env.run(&["promote", "eval_s1"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains(
            "record it: `RECORD=1 cargo test --test evals -- suite::drafts::eval_s1 --exact`"
        ),
        "{}",
        out.stdout
    );

    // Recorded as a draft (`--include-ignored`), from the input it still has: ready.
    let input = env.json("suite/drafts/eval_s2.json")["input"].clone();
    Recording {
        format: FORMAT,
        input_sha256: Some(input_digest(&input).0),
        case: "drafts/eval_s2".into(),
        recorded_at: "2025-01-15T10:00:00Z".parse().unwrap(),
        sources: vec![],
        input: Some(input),
        samples: vec![Sample {
            interactions: vec![],
            judge: None,
        }],
        judge: None,
    }
    .write(&env.path("suite/recordings/drafts/eval_s2.json"))
    .unwrap();
    let out = env.run(&["promote", "eval_s2"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains(
            "its recording is fresh, so it is ready: `cargo test --test evals -- suite::drafts::eval_s2 --exact` runs it"
        ),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("RECORD"), "{}", out.stdout);
}
