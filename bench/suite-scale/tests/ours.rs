//! proposal-eval's harness over the generated model-shape suite: discovery, fixture parsing, the
//! staleness check of every recording (input + prompt hashed), replay with request equality, the
//! strict evaluator with ignore paths, and the per-case report.
//!
//! `BENCH_SUITE` picks the suite folder (crate-relative); without it a small suite is generated
//! (see `suite_scale_bench::suite_for_tests`).

use proposal_eval::{Case, Harness, Llm, ModelError};
use serde_json::Value;
use suite_scale_bench::Shape;

/// The live model: answers from the same generator the recordings came from. Replay never
/// builds it.
fn live_model() -> impl proposal_eval::Model {
    |request: &Value| -> Result<Value, ModelError> {
        let n = request["prompt"]
            .as_str()
            .and_then(|m| m.get(31..36))
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| ModelError::new("no case number in the prompt"))?;
        Ok(suite_scale_bench::response(n))
    }
}

/// The code under test: builds its request from the case, asks the model, returns the proposals.
fn propose(case: &Case, llm: &mut Llm) -> proposal_eval::Result<Value> {
    let mut reply = llm.complete(&suite_scale_bench::request(&case.input))?;
    Ok(reply["proposals"].take())
}

fn main() -> std::process::ExitCode {
    let suite = suite_scale_bench::suite_for_tests(Shape::Model);
    Harness::new(suite).model(live_model).run(propose)
}
