//! A payments assistant: turns a customer's message into proposed data changes.

use serde_json::{json, Value};

/// What the model is told to do.
pub const SYSTEM_PROMPT: &str = include_str!("../prompts/system.md");

/// The request for the model: an OpenAI-style chat completion.
pub fn request(message: &str) -> Value {
    json!({
        "model": "gpt-4o-mini",
        "temperature": 0,
        "response_format": { "type": "json_object" },
        "messages": [
            { "role": "system", "content": SYSTEM_PROMPT },
            { "role": "user", "content": message },
        ],
    })
}

/// The proposals in the model's reply.
pub fn proposals(reply: &Value) -> Result<Vec<Value>, String> {
    let content = reply["choices"][0]["message"]["content"]
        .as_str()
        .ok_or("the reply has no message content")?;
    let answer: Value =
        serde_json::from_str(content).map_err(|e| format!("the model did not answer JSON: {e}"))?;
    let proposals = answer["proposals"]
        .as_array()
        .ok_or("the answer has no `proposals` list")?;
    Ok(proposals.clone())
}
