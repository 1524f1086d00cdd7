//! The fake's shopping model, for `ShopAgent`: it answers OpenAI Chat Completions
//! (`/chat/completions` with the `inventory_lookup` tool), OpenAI Responses (`/responses`) and
//! Anthropic Messages (`/messages`), whole or streamed, each in its API's own shape.
//!
//! Its script, read from the conversation: for "Cancel my order O-17 ...", first a call of
//! `delete_order` (a tool it was never offered); for "compare SKU-1 and SKU-2", one turn with a
//! lookup of each SKU (two calls in one answer), then `recommend` for the cheaper one in stock,
//! then words; for anything else ("a laptop under $1000"), a lookup by category and price, then
//! `recommend` for the cheapest item in stock, then words.

use serde_json::{json, Value};

#[derive(Clone, Copy, PartialEq)]
enum Api {
    Chat,
    Responses,
    Anthropic,
}

/// What the fake model says in one turn.
enum Reply {
    Calls(Vec<(&'static str, Value)>),
    Text(String),
}

/// Whether a request is for the shopping model.
pub fn is_shop(path: &str, body: &Value) -> bool {
    path.ends_with("/responses")
        || path.ends_with("/messages")
        || body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|t| t["function"]["name"] == "inventory_lookup")
}

/// The answer's content type and body.
pub fn answer(path: &str, body: &Value) -> (&'static str, String) {
    let api = if path.ends_with("/responses") {
        Api::Responses
    } else if path.ends_with("/messages") {
        Api::Anthropic
    } else {
        Api::Chat
    };
    let conversation = match api {
        Api::Responses => &body["input"],
        _ => &body["messages"],
    };
    let items = conversation.as_array().cloned().unwrap_or_default();
    let (message, results) = read(api, &items);
    let reply = script(&message, &results);
    let model = body["model"].as_str().unwrap_or("gpt-4o-mini");
    let turn = results.len();
    if body["stream"] == json!(true) {
        ("text/event-stream", stream(api, &reply, model, turn))
    } else {
        (
            "application/json",
            whole(api, &reply, model, turn).to_string(),
        )
    }
}

/// The customer's message and the tool results so far, in order.
fn read(api: Api, items: &[Value]) -> (String, Vec<Value>) {
    let message = items
        .iter()
        .find(|m| m["role"] == "user" && m["content"].is_string())
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string();
    let parse =
        |v: &Value| serde_json::from_str(v.as_str().unwrap_or("null")).unwrap_or(Value::Null);
    let results = match api {
        Api::Chat => items
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| parse(&m["content"]))
            .collect(),
        Api::Responses => items
            .iter()
            .filter(|i| i["type"] == "function_call_output")
            .map(|i| parse(&i["output"]))
            .collect(),
        Api::Anthropic => items
            .iter()
            .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
            .filter(|b| b["type"] == "tool_result")
            .map(|b| parse(&b["content"]))
            .collect(),
    };
    (message, results)
}

fn skus(message: &str) -> Vec<String> {
    message
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|w| w.starts_with("SKU-"))
        .map(str::to_string)
        .collect()
}

/// The cheapest item in stock among the lookups' results.
fn cheapest(results: &[Value]) -> Option<Value> {
    results
        .iter()
        .flat_map(|r| r["items"].as_array().cloned().unwrap_or_default())
        .filter(|i| i["in_stock"] == json!(true))
        .min_by(|a, b| {
            a["price"]
                .as_f64()
                .partial_cmp(&b["price"].as_f64())
                .unwrap()
        })
}

/// The first turn's calls: a lookup of each SKU to compare, or one by category and price; a
/// request to cancel an order makes the model call `delete_order` first, a tool the shop never
/// offered it.
fn first_turn(message: &str) -> Vec<(&'static str, Value)> {
    let mut calls = Vec::new();
    if let Some(order) = message
        .split_whitespace()
        .find(|w| w.starts_with("O-"))
        .filter(|_| message.contains("Cancel"))
    {
        calls.push((
            "delete_order",
            json!({ "order_id": order.trim_end_matches(|c: char| !c.is_ascii_alphanumeric()) }),
        ));
    }
    if message.contains("compare") {
        calls.extend(
            skus(message)
                .into_iter()
                .map(|s| ("inventory_lookup", json!({ "sku": s }))),
        );
    } else {
        let max: f64 = message
            .split('$')
            .nth(1)
            .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|d| d.parse().ok())
            .unwrap_or(1000.0);
        calls.push((
            "inventory_lookup",
            json!({ "category": "laptop", "max_price": max }),
        ));
    }
    calls
}

fn script(message: &str, results: &[Value]) -> Reply {
    let first = first_turn(message);
    let lookups = first.len();
    if results.is_empty() {
        return Reply::Calls(first);
    }
    match (
        cheapest(&results[..lookups.min(results.len())]),
        results.len() > lookups,
    ) {
        (Some(item), false) => Reply::Calls(vec![(
            "recommend",
            json!({ "sku": item["sku"], "price": item["price"], "note": "In stock" }),
        )]),
        (Some(item), true) => Reply::Text(format!(
            "I recommend {} at ${}.",
            item["sku"].as_str().unwrap_or_default(),
            item["price"]
        )),
        (None, _) => Reply::Text("Nothing that fits is in stock, sorry.".into()),
    }
}

fn whole(api: Api, reply: &Reply, model: &str, turn: usize) -> Value {
    let id = |k: usize| format!("call_{turn}_{k}");
    match (api, reply) {
        (Api::Chat, Reply::Calls(calls)) => {
            let calls: Vec<Value> = calls
                .iter()
                .enumerate()
                .map(|(k, (name, args))| {
                    json!({ "id": id(k), "type": "function",
                    "function": { "name": name, "arguments": args.to_string() } })
                })
                .collect();
            chat(
                model,
                json!({ "role": "assistant", "content": null, "tool_calls": calls }),
                "tool_calls",
            )
        }
        (Api::Chat, Reply::Text(text)) => chat(
            model,
            json!({ "role": "assistant", "content": text }),
            "stop",
        ),
        (Api::Responses, reply) => {
            json!({ "id": "resp_fake", "object": "response", "status": "completed",
            "model": model, "output": responses_output(reply, turn),
            "usage": { "input_tokens": 40, "output_tokens": 12, "total_tokens": 52 } })
        }
        (Api::Anthropic, reply) => {
            let (content, stop) = match reply {
                Reply::Calls(calls) => (
                    calls
                        .iter()
                        .enumerate()
                        .map(|(k, (name, args))| json!({ "type": "tool_use", "id": id(k), "name": name, "input": args }))
                        .collect::<Vec<_>>(),
                    "tool_use",
                ),
                Reply::Text(text) => (vec![json!({ "type": "text", "text": text })], "end_turn"),
            };
            json!({ "id": "msg_fake", "type": "message", "role": "assistant", "model": model,
                "content": content, "stop_reason": stop,
                "usage": { "input_tokens": 40, "output_tokens": 12 } })
        }
    }
}

fn chat(model: &str, message: Value, finish: &str) -> Value {
    json!({ "id": "chatcmpl-fake", "object": "chat.completion", "model": model,
        "choices": [{ "index": 0, "message": message, "finish_reason": finish }],
        "usage": { "prompt_tokens": 40, "completion_tokens": 12, "total_tokens": 52 } })
}

fn responses_output(reply: &Reply, turn: usize) -> Vec<Value> {
    match reply {
        Reply::Calls(calls) => calls
            .iter()
            .enumerate()
            .map(|(k, (name, args))| {
                json!({ "type": "function_call", "id": format!("fc_{turn}_{k}"),
                "call_id": format!("call_{turn}_{k}"), "name": name, "arguments": args.to_string(),
                "status": "completed" })
            })
            .collect(),
        Reply::Text(text) => vec![
            json!({ "type": "message", "id": "msg_1", "role": "assistant",
            "content": [{ "type": "output_text", "text": text }] }),
        ],
    }
}

/// A text cut in two, as streams send arguments: in pieces.
fn halves(text: &str) -> [&str; 2] {
    let mut cut = text.len() / 2;
    while !text.is_char_boundary(cut) {
        cut += 1;
    }
    [&text[..cut], &text[cut..]]
}

fn stream(api: Api, reply: &Reply, model: &str, turn: usize) -> String {
    let mut out = String::new();
    let mut event = |name: Option<&str>, data: Value| {
        if let Some(name) = name {
            out.push_str(&format!("event: {name}\n"));
        }
        out.push_str(&format!("data: {data}\n\n"));
    };
    match api {
        Api::Chat => {
            let chunk = |delta: Value, finish: Value| {
                json!({ "id": "chatcmpl-fake",
                "object": "chat.completion.chunk", "model": model,
                "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }] })
            };
            match reply {
                Reply::Calls(calls) => {
                    // Every call's name first, then the arguments' pieces, interleaved by index.
                    for (k, (name, _)) in calls.iter().enumerate() {
                        event(
                            None,
                            chunk(
                                json!({ "tool_calls": [{ "index": k, "id": format!("call_{turn}_{k}"),
                            "type": "function", "function": { "name": name, "arguments": "" } }] }),
                                Value::Null,
                            ),
                        );
                    }
                    for half in 0..2 {
                        for (k, (_, args)) in calls.iter().enumerate() {
                            let text = args.to_string();
                            event(
                                None,
                                chunk(
                                    json!({ "tool_calls": [{ "index": k,
                                "function": { "arguments": halves(&text)[half] } }] }),
                                    Value::Null,
                                ),
                            );
                        }
                    }
                    event(None, chunk(json!({}), json!("tool_calls")));
                }
                Reply::Text(text) => {
                    for part in halves(text) {
                        event(None, chunk(json!({ "content": part }), Value::Null));
                    }
                    event(None, chunk(json!({}), json!("stop")));
                }
            }
            event(
                None,
                json!({ "id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": model,
                "choices": [], "usage": { "prompt_tokens": 40, "completion_tokens": 12, "total_tokens": 52 } }),
            );
            out.push_str("data: [DONE]\n\n");
        }
        Api::Responses => {
            let output = responses_output(reply, turn);
            let typed = |kind: &str, mut data: Value| {
                data["type"] = json!(kind);
                (kind.to_string(), data)
            };
            let mut events = vec![typed(
                "response.created",
                json!({ "response": { "id": "resp_fake", "status": "in_progress", "output": [] } }),
            )];
            for (k, item) in output.iter().enumerate() {
                let mut added = item.clone();
                if item["type"] == "function_call" {
                    added["arguments"] = json!("");
                    events.push(typed(
                        "response.output_item.added",
                        json!({ "output_index": k, "item": added }),
                    ));
                    let text = item["arguments"].as_str().unwrap_or_default().to_string();
                    for part in halves(&text) {
                        events.push(typed(
                            "response.function_call_arguments.delta",
                            json!({ "output_index": k, "delta": part }),
                        ));
                    }
                    events.push(typed(
                        "response.function_call_arguments.done",
                        json!({ "output_index": k, "arguments": text }),
                    ));
                } else {
                    added["content"] = json!([]);
                    events.push(typed(
                        "response.output_item.added",
                        json!({ "output_index": k, "item": added }),
                    ));
                    let text = item["content"][0]["text"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string();
                    for part in halves(&text) {
                        events.push(typed(
                            "response.output_text.delta",
                            json!({ "output_index": k, "content_index": 0, "delta": part }),
                        ));
                    }
                }
                events.push(typed(
                    "response.output_item.done",
                    json!({ "output_index": k, "item": item }),
                ));
            }
            events.push(typed(
                "response.completed",
                json!({ "response": whole(Api::Responses, reply, model, turn) }),
            ));
            for (kind, data) in events {
                event(Some(&kind), data);
            }
        }
        Api::Anthropic => {
            event(
                Some("message_start"),
                json!({ "type": "message_start", "message": { "id": "msg_fake",
                "type": "message", "role": "assistant", "model": model, "content": [],
                "usage": { "input_tokens": 40, "output_tokens": 1 } } }),
            );
            let stop = match reply {
                Reply::Calls(calls) => {
                    for (k, (name, args)) in calls.iter().enumerate() {
                        event(
                            Some("content_block_start"),
                            json!({ "type": "content_block_start", "index": k,
                            "content_block": { "type": "tool_use", "id": format!("call_{turn}_{k}"), "name": name, "input": {} } }),
                        );
                        let text = args.to_string();
                        for part in halves(&text) {
                            event(
                                Some("content_block_delta"),
                                json!({ "type": "content_block_delta", "index": k,
                                "delta": { "type": "input_json_delta", "partial_json": part } }),
                            );
                        }
                        event(
                            Some("content_block_stop"),
                            json!({ "type": "content_block_stop", "index": k }),
                        );
                    }
                    "tool_use"
                }
                Reply::Text(text) => {
                    event(
                        Some("content_block_start"),
                        json!({ "type": "content_block_start", "index": 0,
                        "content_block": { "type": "text", "text": "" } }),
                    );
                    for part in halves(text) {
                        event(
                            Some("content_block_delta"),
                            json!({ "type": "content_block_delta", "index": 0,
                            "delta": { "type": "text_delta", "text": part } }),
                        );
                    }
                    event(
                        Some("content_block_stop"),
                        json!({ "type": "content_block_stop", "index": 0 }),
                    );
                    "end_turn"
                }
            };
            event(
                Some("message_delta"),
                json!({ "type": "message_delta", "delta": { "stop_reason": stop },
                "usage": { "output_tokens": 12 } }),
            );
            event(Some("message_stop"), json!({ "type": "message_stop" }));
        }
    }
    out
}
