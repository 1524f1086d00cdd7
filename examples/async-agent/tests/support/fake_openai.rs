//! A fake OpenAI-compatible chat completions server on loopback (wiremock, 127.0.0.1, an
//! OS-chosen port): a few rules over the facts the agent sends instead of a model. It answers
//! only requests that carry the expected API key, and wiremock keeps every request it received,
//! so a test can count the calls and read their headers.

use serde_json::{json, Value};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// Starts the server; requests must carry `Authorization: Bearer {key}`, others get a 401.
pub async fn start(key: &str) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", format!("Bearer {key}").as_str()))
        .respond_with(Answer)
        .mount(&server)
        .await;
    // What did not match above (wiremock tries mocks by priority, 1 first; 5 is the default).
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(401).set_body_json(json!({
            "error": { "message": "Incorrect API key provided", "type": "invalid_request_error" }
        })))
        .with_priority(10)
        .mount(&server)
        .await;
    server
}

/// The base URL a client is given: `http://127.0.0.1:PORT/v1`.
pub fn base_url(server: &MockServer) -> String {
    format!("{}/v1", server.uri())
}

/// A chat completion the way the real API shapes it, with this content.
pub fn completion(model: &str, content: &str, prompt_tokens: u64) -> Value {
    json!({
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_763_884_800,
        "model": model,
        "choices": [{
            "index": 0,
            "message": { "role": "assistant", "content": content },
            "finish_reason": "stop",
        }],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": content.len() as u64 / 4,
            "total_tokens": prompt_tokens + content.len() as u64 / 4,
        },
    })
}

struct Answer;

impl Respond for Answer {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        match serde_json::from_slice::<Value>(&request.body) {
            Ok(body) => ResponseTemplate::new(200).set_body_json(answer(&body)),
            Err(e) => ResponseTemplate::new(400).set_body_json(
                json!({ "error": { "message": format!("the body is not JSON: {e}") } }),
            ),
        }
    }
}

/// The rules: a ticket that names an order charged twice gets a refund of that order; "email to
/// X" gets a change of the account's e-mail; anything else, no proposal.
pub fn answer(request: &Value) -> Value {
    let user = request["messages"]
        .as_array()
        .and_then(|messages| messages.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default();
    let facts: Value = serde_json::from_str(user).unwrap_or_default();
    let ticket = facts["ticket"].as_str().unwrap_or_default();
    let mut proposals = Vec::new();
    for order in facts["orders"].as_array().into_iter().flatten() {
        let id = order["id"].as_str().unwrap_or_default();
        if order["chargedTwice"] == true && !id.is_empty() && ticket.contains(id) {
            proposals
                .push(json!({ "changeType": "refund", "order": id, "amount": order["amount"] }));
        }
    }
    if let Some((_, rest)) = ticket.split_once("email to ") {
        let new = rest
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .trim_end_matches([',', '.', '!']);
        proposals.push(json!({
            "changeType": "change",
            "changedField": "account.email",
            "oldValue": facts["account"]["email"],
            "newValue": new,
        }));
    }
    let content = json!({ "proposals": proposals }).to_string();
    let model = request["model"].as_str().unwrap_or("unknown");
    completion(model, &content, user.len() as u64 / 4)
}
