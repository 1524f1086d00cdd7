//! The suite through the harness front end: `cargo test --test evals`.
//!
//! `Harness` finds the fixtures in `fixtures/payments` when this binary starts, so a new fixture
//! file is a new test without a rebuild. `live_model` is called only while recording
//! (`RECORD=1` or `RECORD=stale`); a replay never builds it.

use proposal_eval::{Case, Harness, Llm};
use serde_json::Value;

fn payments(case: &Case, llm: &mut Llm) -> proposal_eval::Result<Vec<Value>> {
    payments_agent::propose(&case.input, case.now(), llm)
}

fn main() -> std::process::ExitCode {
    Harness::new("fixtures/payments")
        .model(payments_agent::live_model)
        .run(payments)
}
