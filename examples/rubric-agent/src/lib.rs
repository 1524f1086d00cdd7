//! A shop assistant: it asks its model for a product recommendation and returns the reply.
//!
//! Its eval case was drafted from a production failure (`cargo proposal-eval draft`): the
//! assistant had recommended a discontinued SKU. The draft has no `expected` reply, only a
//! rubric (`draft.assertions`), which a judge model grades; see `tests/judged.rs`.

use proposal_eval::Llm;
use serde_json::{json, Value};

/// The system prompt of the assistant.
pub const SYSTEM: &str = "You are a shop assistant. Recommend only products that are in stock.";

/// Asks the model for a recommendation for the customer's `prompt`; returns `{"reply": text}`.
pub fn recommend(input: &Value, llm: &mut Llm) -> proposal_eval::Result<Value> {
    let request = json!({
        "model": "shop-agent-1",
        "messages": [
            { "role": "system", "content": SYSTEM },
            { "role": "user", "content": input["prompt"] },
        ],
    });
    let response = llm.complete(&request)?;
    let reply = response
        .pointer("/choices/0/message/content")
        .and_then(Value::as_str)
        .ok_or("the model's answer has no choices[0].message.content")?;
    Ok(json!({ "reply": reply }))
}
