//! The eval suite: one test per fixture file in fixtures/payments.

mod live_model;

use proposal_eval::{Case, Harness, Llm};
use serde_json::Value;

fn payments(case: &Case, llm: &mut Llm) -> proposal_eval::Result<Vec<Value>> {
    let message = case.input["message"].as_str().ok_or("no message")?;
    let reply = llm.complete(&first_suite::request(message))?;
    Ok(first_suite::proposals(&reply)?)
}

fn main() -> std::process::ExitCode {
    Harness::new("fixtures/payments")
        .model(live_model::openai)
        .run(payments)
}
