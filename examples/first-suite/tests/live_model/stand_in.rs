//! A stand-in for the model, to follow the guide without an API key: it answers a chat
//! completion request as a model would, by a rule instead of a model. The message's first number
//! is the new payment amount; like some real models, it quotes an amount written with decimals
//! ("85.50").

use proposal_eval::{Model, ModelError};
use serde_json::{json, Value};

/// The stand-in as a `Model`: a closure that takes the request and returns the reply.
pub fn model() -> impl Model {
    |request: &Value| -> Result<Value, ModelError> { Ok(answer(request)) }
}

/// The chat completion the stand-in answers to `request`.
pub fn answer(request: &Value) -> Value {
    let message = request["messages"]
        .as_array()
        .and_then(|messages| messages.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default();
    let amount = message
        .split_whitespace()
        .find(|word| word.parse::<f64>().is_ok());
    let proposals = match amount {
        Some(word) => {
            let new_value = match word.parse::<i64>() {
                Ok(whole) => json!(whole),
                Err(_) => json!(word),
            };
            json!([{ "changeType": "change", "changedField": "payment.amount", "newValue": new_value }])
        }
        None => json!([]),
    };
    json!({
        "id": "chatcmpl-stand-in",
        "object": "chat.completion",
        "model": "stand-in",
        "choices": [{
            "index": 0,
            "message": { "role": "assistant", "content": json!({ "proposals": proposals }).to_string() },
            "finish_reason": "stop",
        }],
    })
}
