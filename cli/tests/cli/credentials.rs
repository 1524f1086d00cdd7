//! `status --check` refuses a recording holding a string that looks like a credential, naming
//! the file and the path in it (docs/reference/recordings.md, "Redaction").

use crate::common::*;
use crate::recordings::*;
use serde_json::{json, Value};

/// Sets `path` (a list of keys and indices) in the recording of `case` to `value`.
fn plant(env: &Env, case: &str, at: &[Value], value: &str) {
    let file = format!("suite/recordings/{case}.json");
    let mut recording = env.json(&file);
    let mut node = &mut recording;
    for step in at {
        node = match step {
            Value::String(key) => &mut node[key.as_str()],
            Value::Number(n) => &mut node[n.as_u64().unwrap() as usize],
            _ => unreachable!(),
        };
    }
    *node = value.into();
    env.write(&file, &format!("{recording:#}\n"));
}

#[test]
fn check_fails_on_a_planted_credential_naming_file_and_path() {
    let env = crate_with_suite("");
    simple(&env, "a");
    record(&env, "a", &[]);
    fixture(
        &env,
        "drafted",
        json!({ "input": { "message": "d" }, "status": "draft" }),
    );
    record(&env, "drafted", &[]);
    let out = env.run(&["status", "--check"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);

    let header = [
        json!("interactions"),
        json!(0),
        json!("request"),
        json!("headers"),
    ];
    let mut at = header.to_vec();
    at.push(json!("authorization"));
    plant(
        &env,
        "a",
        &at,
        "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
    );
    // A draft's recording is committed too: its credential fails the check as well.
    plant(
        &env,
        "drafted",
        &[
            json!("interactions"),
            json!(0),
            json!("response"),
            json!("key"),
        ],
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\n",
    );
    let out = env.run(&["status", "--check"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let line = |case: &str| {
        out.stdout
            .lines()
            .find(|l| l.trim_start().starts_with("unreadable") && l.contains(&format!(" {case}")))
            .unwrap_or_else(|| panic!("no unreadable line for {case} in\n{}", out.stdout))
            .to_string()
    };
    assert!(
        line("a").contains(
            "a: suite/recordings/a.json: holds what looks like a credential at interactions[0].request.headers.authorization (a bearer token); "
        ),
        "{}",
        out.stdout
    );
    assert!(
        line("drafted").contains(
            "suite/recordings/drafted.json: holds what looks like a credential at interactions[0].response.key (a PEM private key)"
        ),
        "{}",
        out.stdout
    );
    assert!(
        !out.stdout.contains("eyJhbGciOiJIUzI1NiJ9"),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr.contains("status --check: 2 problem(s)"),
        "{}",
        out.stderr
    );

    let out = env.run(&["status", "--format", "json"]);
    let status: Value = serde_json::from_str(&out.stdout).unwrap();
    let case = &status["suites"][0]["cases"][0];
    assert_eq!(case["case"], "a");
    assert_eq!(
        case["credentials"],
        json!([{
            "path": "interactions[0].request.headers.authorization",
            "kind": "a bearer token",
            "fix": "redact_values = [\"(?i)bearer[[:blank:]]+[A-Za-z0-9._~+/=-]{16,}\"]",
        }])
    );
    assert_eq!(case["fails_check"], true);

    // Redacted, as a recording is written: the check passes again.
    plant(&env, "a", &at, "<redacted>");
    plant(
        &env,
        "drafted",
        &[
            json!("interactions"),
            json!(0),
            json!("response"),
            json!("key"),
        ],
        "<redacted>",
    );
    let out = env.run(&["status", "--check"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
}
