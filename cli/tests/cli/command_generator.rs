//! `--generator command:ARGV`, with small shell scripts standing in for a model-backed program.
#![cfg(unix)]

use crate::common::*;
use proposal_eval::__internal::draft::sha256_hex;
use serde_json::{json, Value};

const GOOD: &str = r#"cat > received.json
printf '%s' '{"title":"T","rationale":"R","assertions":{"required":["says it is discontinued"],"golden_output":{"sku":"SKU-9"}},"model":"m-1","temperature":0.2}'
"#;

fn with_script(env: &Env, body: &str) -> String {
    env.write("gen.sh", body);
    "--generator=command:sh gen.sh".to_string()
}

#[test]
fn a_command_generator_gets_the_suggestion_and_its_answer_is_hashed() {
    let env = Env::new();
    env.lines("in.jsonl", &[suggestion("s1")]);
    let generator = with_script(&env, GOOD);
    let out = env.draft("in.jsonl", &[&generator]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let received: Value = serde_json::from_str(&env.read("received.json")).unwrap();
    assert_eq!(received, suggestion("s1"));
    let fixture = env.json("suite/drafts/eval_s1.json");
    assert_eq!(
        fixture["status"], "draft",
        "a golden output makes it a draft"
    );
    // generator_meta as dashboards read it: the model and temperature the answer reported.
    let meta = &fixture["draft"]["generator_meta"];
    let answer = r#"{"title":"T","rationale":"R","assertions":{"required":["says it is discontinued"],"golden_output":{"sku":"SKU-9"}},"model":"m-1","temperature":0.2}"#;
    let prompt = env.read("received.json");
    assert_eq!(
        prompt_hash(&suggestion("s1")),
        sha256_hex(prompt.as_bytes())
    );
    assert_eq!(
        *meta,
        json!({
            "model": "m-1",
            "temperature": 0.2,
            "prompt_hash": sha256_hex(prompt.as_bytes()),
            "response_sha256": sha256_hex(answer.as_bytes()),
            "run_id": env.last_summary()["run_id"],
            "generator": "command:sh gen.sh",
            "content_sha256": proposal_eval::__internal::draft::content_sha256(&fixture),
        })
    );
    assert_eq!(
        fixture["draft"]["assertions"]["golden_output"],
        json!({ "sku": "SKU-9" })
    );
    // Lineage and input are not the generator's to decide.
    assert_eq!(
        fixture["draft"]["source"]["canonical_trace_id"],
        "dd_trace_67890"
    );
    assert_eq!(
        fixture["input"]["prompt"],
        "Recommend a laptop under $1000."
    );

    // A re-run does not call the generator again (the script would fail now).
    env.write("gen.sh", "exit 9\n");
    let before = env.read("suite/drafts/eval_s1.json");
    let out = env.draft("in.jsonl", &[&generator]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(out.stdout.contains("unchanged   s1"), "{}", out.stdout);
    assert_eq!(env.read("suite/drafts/eval_s1.json"), before);
}

fn failing(body: &str, extra: &[&str]) -> (Env, Output, Value) {
    let env = Env::new();
    env.lines("in.jsonl", &[suggestion("s1"), suggestion("s2")]);
    let generator = with_script(&env, body);
    let mut args = vec![generator.as_str()];
    args.extend_from_slice(extra);
    let out = env.draft("in.jsonl", &args);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("errors 2"), "{}", out.stdout);
    assert!(!env.path("suite/drafts/eval_s1.json").exists());
    let errors = env.last_errors();
    assert_eq!(errors.len(), 2);
    assert_eq!(errors[0]["suggestion_id"], "s1");
    assert_eq!(errors[1]["suggestion_id"], "s2");
    let first = errors[0].clone();
    (env, out, first)
}

#[test]
fn invalid_json_is_an_error_record_with_a_redacted_excerpt() {
    let (env, out, error) = failing(
        "cat >/dev/null; echo 'Sure! Here is the draft, key sk-abcdefghijklmnopqrstuvwx'\n",
        &[],
    );
    assert!(out.stdout.contains("invalid_json"), "{}", out.stdout);
    assert_timestamp(&error["time"]);
    let raw = "Sure! Here is the draft, key sk-abcdefghijklmnopqrstuvwx\n";
    assert_eq!(
        error,
        json!({
            "run_id": env.last_summary()["run_id"],
            "suggestion_id": "s1",
            "error_type": "invalid_json",
            "error_message": "the generator's output is not JSON: expected value at line 1 column 1",
            "location": "in.jsonl:1",
            "time": error["time"],
            "response_sha256": sha256_hex(raw.as_bytes()),
            "excerpt": "Sure! Here is the draft, key [REDACTED]",
        })
    );
}

#[test]
fn a_draft_failing_the_schema_is_an_error_record() {
    let (_env, _out, error) = failing(
        "cat >/dev/null; echo '{\"title\": \"T\", \"assertions\": []}'\n",
        &[],
    );
    assert_eq!(error["error_type"], "schema_validation");
    assert!(
        error["error_message"]
            .as_str()
            .unwrap()
            .contains("not a draft"),
        "{error}"
    );
    assert!(error["response_sha256"].is_string());
}

#[test]
fn a_non_zero_exit_is_a_generator_error() {
    let (_env, _out, error) = failing(
        "cat >/dev/null; echo partial; echo 'rate limited' >&2; exit 3\n",
        &[],
    );
    assert_eq!(error["error_type"], "generator_error");
    let message = error["error_message"].as_str().unwrap();
    assert!(message.contains("exit status: 3"), "{message}");
    assert!(message.contains("rate limited"), "{message}");
    assert_eq!(error["excerpt"], "partial");
}

#[test]
fn a_slow_generator_times_out() {
    let started = std::time::Instant::now();
    let (_env, _out, error) = failing("exec sleep 20\n", &["--timeout-ms", "300"]);
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(error["error_type"], "timeout");
    assert!(
        error["error_message"].as_str().unwrap().contains("300 ms"),
        "{error}"
    );
    assert_eq!(error["response_sha256"], Value::Null);
}

#[test]
fn a_missing_program_is_a_generator_error() {
    let env = Env::new();
    env.lines("in.jsonl", &[suggestion("s1")]);
    let out = env.draft("in.jsonl", &["--generator", "command:./no-such-generator"]);
    assert_eq!(out.code, 1);
    assert!(out.stdout.contains("generator_error"), "{}", out.stdout);
    assert!(
        out.stdout
            .contains("could not start generator `./no-such-generator`"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_grandchild_holding_stdout_does_not_hang_the_run() {
    // The generator answers and exits, leaving a background child that keeps its stdout open
    // for a minute: the run must finish with the answer, and the child must not outlive it.
    let env = Env::new();
    env.lines("in.jsonl", &[suggestion("s1")]);
    let generator = with_script(&env, &format!("sleep 60 &\n{GOOD}"));
    let started = std::time::Instant::now();
    let out = env.draft("in.jsonl", &[&generator]);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "the run waited for the grandchild"
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(env.path("suite/drafts/eval_s1.json").exists());
}
