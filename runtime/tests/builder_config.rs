//! A suite configured in Rust, not in a file: `Harness::with_config` with a closure transform.
//! The suite folder has no `proposal-eval.toml`, so with the default config both cases fail;
//! they pass only if the Rust-built config is the one in force.

use proposal_eval::compare::StrictConfig;
use proposal_eval::config::SuiteConfig;
use proposal_eval::transform::{Strategy, Transform, Transformer};
use proposal_eval::{Case, Harness, Llm};
use serde_json::{json, Value};

/// The code under test: no model call, so no recording is needed.
fn agent(case: &Case, _llm: &mut Llm) -> Value {
    json!([{
        "changeType": "change",
        "reference": case.input["ref"],
        "metadata": { "requestId": case.input["request"] },
    }])
}

fn main() -> std::process::ExitCode {
    let upper = Transform::custom(|value, _ctx| {
        json!(value
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_uppercase())
    });
    let strict = StrictConfig::new()
        .ignore_path("metadata")
        .expect("a valid path")
        .transformer(
            "reference",
            Transformer::new(upper, Strategy::TransformAlways),
        )
        .expect("a valid path");
    let config = SuiteConfig {
        strict,
        ..SuiteConfig::default()
    };
    Harness::new("../fixtures/builder")
        .with_config(config)
        .run(agent)
}
