//! The same suite through the attribute macro: one #[test] per fixture, written at compile time.

mod live_model;

use proposal_eval::{proposal_eval, Case, Llm};
use serde_json::Value;

#[proposal_eval(fixtures = "fixtures/payments", model = crate::live_model::openai)]
fn payments(case: &Case, llm: &mut Llm) -> proposal_eval::Result<Vec<Value>> {
    let message = case.input["message"].as_str().ok_or("no message")?;
    let reply = llm.complete(&first_suite::request(message))?;
    Ok(first_suite::proposals(&reply)?)
}
