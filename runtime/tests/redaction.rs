//! End to end: recordings never carry a secret (docs/reference/recordings.md, "Redaction").
//!
//! A suite of its own, `fixtures/secrets`, added to a standing-alone copy of
//! `examples/payments-agent` (see `support`) with a harness target whose code sends a key in a
//! header-like key (`Authorization: Bearer …`), in a body key (`api_key`), in a `redact` path and
//! in a string that a `redact_values` regex matches, and whose live model answers with a token.
//! Recorded with one key, the recording holds none of them; replayed with another, the case
//! passes; the status check that `cargo proposal-eval status --check` runs passes on it, and
//! fails on a credential planted by hand, naming the file and the path.

mod support;

use proposal_eval::__internal::status::{State, SuiteStatus};
use serde_json::Value;
use support::{lock, Example, Run};

const SUITE: &str = "fixtures/secrets";
const RECORDING: &str = "fixtures/secrets/recordings/raise.json";

const KEY: &str = "sk-live-9a8b7c6d5e4f3a2b1c0d9e8f";
const OTHER_KEY: &str = "sk-live-0f1e2d3c4b5a69788796a5b4";
const ACCOUNT: &str = "ACCT-12345678";
const EMAIL: &str = "ada@example.com";
const TOKEN: &str = "at-5c4b3a2918f7e6d5c4b3";

/// The user's harness: the request carries the key, the account number and the e-mail address
/// it reads from the environment, so a replay can send other ones.
const HARNESS: &str = r#"
use proposal_eval::{Case, Harness, Llm, Model, ModelError};
use serde_json::{json, Value};

fn var(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"))
}

fn live_model() -> impl Model {
    |request: &Value| -> Result<Value, ModelError> {
        Ok(json!({
            "proposals": [{ "changeType": "change", "newValue": 120 }],
            "session": { "access_token": var("SECRETS_TOKEN") },
            "echo": request["body"]["note"],
        }))
    }
}

fn secrets(case: &Case, llm: &mut Llm) -> proposal_eval::Result<Vec<Value>> {
    let key = var("SECRETS_KEY");
    let request = json!({
        "headers": { "Authorization": format!("Bearer {key}"), "Content-Type": "application/json" },
        "body": {
            "api_key": key,
            "message": format!("{}{}", case.input["message"].as_str().unwrap_or(""), var("SECRETS_EXTRA")),
            "note": format!("account {} of the customer", var("SECRETS_ACCOUNT")),
            "user": { "email": var("SECRETS_EMAIL"), "name": "Ada" },
        },
    });
    let reply = llm.complete(&request)?;
    Ok(serde_json::from_value(reply["proposals"].clone())?)
}

fn main() -> std::process::ExitCode {
    Harness::new("fixtures/secrets").model(live_model).run(secrets)
}
"#;

fn setup() -> Example {
    let example = Example::new();
    let manifest = example.read("Cargo.toml");
    example.write(
        "Cargo.toml",
        format!("{manifest}\n[[test]]\nname = \"secrets\"\nharness = false\n"),
    );
    example.write("tests/secrets.rs", HARNESS);
    example.write(
        &format!("{SUITE}/proposal-eval.toml"),
        "[recording]\nredact = [\"body.user.email\"]\nredact_values = [\"ACCT-[0-9]{8}\"]\n",
    );
    example.write(
        &format!("{SUITE}/raise.json"),
        r#"{
  "input": { "message": "Please change my payment to 120 EUR" },
  "expected": [{ "changeType": "change", "newValue": 120 }]
}
"#,
    );
    example
}

fn secrets(example: &Example, envs: &[(&str, &str)]) -> Run {
    example.run(&["test", "--test", "secrets"], envs)
}

fn status(example: &Example) -> SuiteStatus {
    SuiteStatus::check(&example.root, &example.path(SUITE)).expect("the suite is readable")
}

#[test]
fn recordings_hold_no_secret_replay_with_any_key_and_status_check_finds_planted_ones() {
    let _cargo = lock();
    let example = setup();
    let first = [
        ("SECRETS_KEY", KEY),
        ("SECRETS_ACCOUNT", ACCOUNT),
        ("SECRETS_EMAIL", EMAIL),
        ("SECRETS_TOKEN", TOKEN),
        ("SECRETS_EXTRA", ""),
    ];
    let mut record = first.to_vec();
    record.push(("RECORD", "1"));
    let run = secrets(&example, &record);
    run.assert_summary(1, 0, 0);

    let text = example.read(RECORDING);
    for secret in [KEY, ACCOUNT, EMAIL, TOKEN] {
        assert!(!text.contains(secret), "{secret} was written:\n{text}");
    }
    let recording: Value = serde_json::from_str(&text).unwrap();
    let interaction = &recording["interactions"][0];
    assert_eq!(
        interaction["request"]["headers"]["Authorization"],
        "<redacted>"
    );
    assert_eq!(
        interaction["request"]["headers"]["Content-Type"],
        "application/json"
    );
    assert_eq!(interaction["request"]["body"]["api_key"], "<redacted>");
    assert_eq!(
        interaction["request"]["body"]["user"]["email"],
        "<redacted>"
    );
    assert_eq!(interaction["request"]["body"]["user"]["name"], "Ada");
    assert_eq!(
        interaction["request"]["body"]["note"],
        "account <redacted> of the customer"
    );
    assert_eq!(
        interaction["response"]["session"]["access_token"],
        "<redacted>"
    );
    assert_eq!(
        interaction["response"]["echo"],
        "account <redacted> of the customer"
    );

    // Replay with another key, account and address: the redacted places take them.
    let other = [
        ("SECRETS_KEY", OTHER_KEY),
        ("SECRETS_ACCOUNT", "ACCT-87654321"),
        ("SECRETS_EMAIL", "bob@example.org"),
        ("SECRETS_TOKEN", "unused"),
        ("SECRETS_EXTRA", ""),
    ];
    let run = secrets(&example, &other);
    run.assert_summary(1, 0, 0);

    // A request that really changed fails with a diff of the change, and no secret in it.
    let mut changed = other.to_vec();
    changed.retain(|(k, _)| *k != "SECRETS_EXTRA");
    changed.push(("SECRETS_EXTRA", ", please"));
    let run = secrets(&example, &changed);
    run.assert_summary(0, 1, 0);
    assert!(
        run.stdout
            .contains("request [0] differs from the recorded one"),
        "{}",
        run.text()
    );
    assert!(run.stdout.contains("120 EUR, please"), "{}", run.text());
    for secret in [OTHER_KEY, "ACCT-87654321", "bob@example.org"] {
        assert!(
            !run.text().contains(secret),
            "{secret} was printed:\n{}",
            run.text()
        );
    }

    // The check `status --check` makes: the redacted recording passes.
    let clean = status(&example);
    assert_eq!(clean.cases[0].state, State::Fresh);
    assert!(clean.cases[0].credentials.is_empty());
    assert!(!clean.fails_check());

    // A credential planted by hand fails it, naming the file and the path.
    let mut planted = recording.clone();
    planted["interactions"][0]["request"]["headers"]["Authorization"] =
        format!("Bearer {KEY}").into();
    example.write(
        RECORDING,
        serde_json::to_string_pretty(&planted).unwrap() + "\n",
    );
    let found = status(&example);
    assert!(found.fails_check());
    let case = &found.cases[0];
    assert_eq!(case.credentials.len(), 1);
    let State::Unreadable(why) = &case.state else {
        panic!("{:?}", case.state)
    };
    assert!(
        why.starts_with(
            "fixtures/secrets/recordings/raise.json: holds what looks like a credential at interactions[0].request.headers.Authorization (an sk- API key)"
        ),
        "{why}"
    );
    assert!(!why.contains(KEY), "the message prints the key: {why}");
    let json = found.to_json();
    assert_eq!(
        json["cases"][0]["credentials"][0]["path"],
        "interactions[0].request.headers.Authorization"
    );
    assert_eq!(json["cases"][0]["fails_check"], true);
}
