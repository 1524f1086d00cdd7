//! The crate docs' quickstart, run as a user runs it: the macro over `tests/fixtures/quickstart`,
//! replaying the committed recordings.

use proposal_eval::{proposal_eval, Case, Llm, Model, ModelError};
use serde_json::{json, Value};

/// A deterministic stand-in for a live model, so this repository can re-record offline.
pub fn live_model() -> impl Model {
    |request: &Value| -> Result<Value, ModelError> {
        let message = request["message"].as_str().unwrap_or_default();
        let proposals = if let Some(amount) = message
            .split_whitespace()
            .find_map(|w| w.parse::<f64>().ok())
        {
            json!([{ "changeType": "change", "changedField": "payment.amount", "newValue": amount,
                     "metadata": { "requestId": "r-1" } }])
        } else if message.contains("USD") {
            json!([{ "changeType": "change", "changedField": "payment.currency", "newValue": "USD" }])
        } else {
            json!([])
        };
        Ok(json!({ "proposals": proposals }))
    }
}

#[proposal_eval(fixtures = "tests/fixtures/quickstart", model = live_model)]
fn quickstart(case: &Case, llm: &mut Llm) -> proposal_eval::Result<Vec<Value>> {
    let message = case.input["message"].as_str().unwrap_or_default();
    if message.starts_with("Hello") {
        return Ok(Vec::new());
    }
    let reply = llm.complete(&json!({ "message": message, "user": case.input["userId"] }))?;
    Ok(serde_json::from_value(reply["proposals"].clone())?)
}
