//! Helpers for the status, prune and report tests: a crate with a suite, and recordings written
//! with the runtime's own API (as `RECORD=1 cargo test` would write them).
#![allow(dead_code)]

use crate::common::Env;
use proposal_eval::__internal::recording::{hash_content, Interaction, Recording, Sample, Source};
use serde_json::{json, Value};

/// An Env whose folder is a crate (`Cargo.toml`) with a suite `suite/` (config `toml`).
pub fn crate_with_suite(toml: &str) -> Env {
    let env = Env::new();
    env.write(
        "Cargo.toml",
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    env.write("suite/proposal-eval.toml", toml);
    env
}

/// Writes a fixture `suite/<case>.json`.
pub fn fixture(env: &Env, case: &str, body: Value) {
    env.write(&format!("suite/{case}.json"), &format!("{body:#}\n"));
}

/// A plain active fixture.
pub fn simple(env: &Env, case: &str) {
    fixture(
        env,
        case,
        json!({ "input": { "message": case }, "expected": [] }),
    );
}

/// Records `case` from the current content of its fixture and `extra` crate-relative sources.
pub fn record(env: &Env, case: &str, extra: &[&str]) {
    let fixture_path = format!("suite/{case}.json");
    let mut paths = vec![fixture_path.clone()];
    paths.extend(extra.iter().map(|s| s.to_string()));
    let sources = paths
        .iter()
        .map(|p| {
            let (sha256, bytes) = hash_content(&std::fs::read(env.path(p)).unwrap());
            Source {
                path: p.clone(),
                sha256,
                bytes,
            }
        })
        .collect();
    let input: Value =
        serde_json::from_str::<Value>(&env.read(&fixture_path)).unwrap()["input"].clone();
    let at = "2025-01-15T10:00:00Z".parse().unwrap();
    Recording {
        format: 1,
        input_sha256: None,
        case: case.to_string(),
        recorded_at: at,
        sources,
        input: Some(input.clone()),
        samples: vec![Sample {
            interactions: vec![Interaction::new(
                json!({ "prompt": input }),
                json!({ "proposals": [] }),
                at,
            )],
            judge: None,
        }],
        judge: None,
    }
    .write(&env.path(&format!("suite/recordings/{case}.json")))
    .unwrap();
}

/// Writes a raw recording file.
pub fn raw_recording(env: &Env, case: &str, text: &str) {
    env.write(&format!("suite/recordings/{case}.json"), text);
}

/// Writes a well-formed recording of `case` (recorded from no sources) to `file`, crate-relative:
/// what a recording whose fixture was deleted looks like.
pub fn recording_at(env: &Env, file: &str, case: &str) {
    let at = "2025-01-15T10:00:00Z".parse().unwrap();
    Recording {
        format: 1,
        input_sha256: None,
        case: case.to_string(),
        recorded_at: at,
        sources: Vec::new(),
        input: Some(json!({ "message": case })),
        samples: vec![Sample {
            interactions: vec![Interaction::new(
                json!({ "prompt": case }),
                json!({ "proposals": [] }),
                at,
            )],
            judge: None,
        }],
        judge: None,
    }
    .write(&env.path(file))
    .unwrap();
}

/// An orphaned recording of `case` in `suite/recordings/`.
pub fn orphan(env: &Env, case: &str) {
    recording_at(env, &format!("suite/recordings/{case}.json"), case);
}
