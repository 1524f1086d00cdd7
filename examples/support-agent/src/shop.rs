//! A shopping assistant that works with tools: it looks the inventory up, then recommends an
//! item, through whichever API its deployment uses: OpenAI Chat Completions, OpenAI Responses
//! or Anthropic Messages, each streamed or not (reqwest's blocking client).
//!
//! The model decides which tools to call; the agent runs them and sends the results back until
//! the model answers in words. The agent returns only that answer and what it recommended: what
//! it did on the way is the model's tool calls, which the tests check as its trajectory.

use crate::AgentError;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// Which API the agent speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Api {
    /// `POST {base}/chat/completions`.
    Chat,
    /// `POST {base}/responses`.
    Responses,
    /// `POST {base}/messages`.
    Anthropic,
}

/// An item of the shop's inventory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Item {
    pub sku: String,
    pub category: String,
    pub price: f64,
    pub in_stock: bool,
}

/// What the agent answers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    /// The item it recommended, if any.
    pub recommended: Option<String>,
    /// Its words to the customer.
    pub text: String,
}

/// A tool call the model asked for: its id (to send the result back), name and arguments.
#[derive(Clone, Debug)]
struct ToolUse {
    id: String,
    name: String,
    arguments: Value,
}

pub struct ShopAgent {
    http: reqwest::blocking::Client,
    base_url: String,
    api_key: String,
    model: String,
    api: Api,
    stream: bool,
}

/// The most model turns one message may take.
const MAX_TURNS: usize = 8;

impl ShopAgent {
    /// An agent on the API at `base_url` (`https://api.openai.com/v1`,
    /// `https://api.anthropic.com/v1`).
    pub fn new(base_url: impl Into<String>, api_key: impl Into<String>, api: Api) -> ShopAgent {
        ShopAgent {
            http: reqwest::blocking::Client::new(),
            base_url: base_url.into(),
            api_key: api_key.into(),
            model: match api {
                Api::Anthropic => "claude-haiku-4-5".into(),
                _ => "gpt-4o-mini".into(),
            },
            api,
            stream: false,
        }
    }

    /// Streams every answer (server-sent events) instead of waiting for it whole.
    pub fn streaming(mut self, stream: bool) -> ShopAgent {
        self.stream = stream;
        self
    }

    /// Answers one customer message, using the tools on `inventory`.
    pub fn handle(&self, message: &str, inventory: &[Item]) -> Result<Answer, AgentError> {
        let mut conversation = vec![json!({ "role": "user", "content": message })];
        let mut recommended = None;
        for _ in 0..MAX_TURNS {
            let (uses, text) = self.turn(&conversation)?;
            if uses.is_empty() {
                return Ok(Answer {
                    recommended,
                    text: text.unwrap_or_default(),
                });
            }
            let mut results = Vec::new();
            for call in &uses {
                let result = run_tool(call, inventory, &mut recommended);
                results.push((call.id.clone(), result.to_string()));
            }
            self.remember(&mut conversation, &uses, &results);
        }
        Err(AgentError::Unexpected(format!(
            "no answer after {MAX_TURNS} turns"
        )))
    }

    /// One request: the tools the model asks for, or its words.
    fn turn(&self, conversation: &[Value]) -> Result<(Vec<ToolUse>, Option<String>), AgentError> {
        let tools = tools(self.api);
        let (path, body) = match self.api {
            Api::Chat => (
                "chat/completions",
                json!({ "model": self.model, "messages": conversation, "tools": tools }),
            ),
            Api::Responses => (
                "responses",
                json!({ "model": self.model, "input": conversation, "tools": tools }),
            ),
            Api::Anthropic => (
                "messages",
                json!({ "model": self.model, "max_tokens": 512, "messages": conversation, "tools": tools }),
            ),
        };
        let mut body = body;
        if self.stream {
            body["stream"] = json!(true);
        }
        let mut request = self
            .http
            .post(format!("{}/{path}", self.base_url))
            .json(&body);
        request = match self.api {
            Api::Anthropic => request
                .header("x-api-key", &self.api_key)
                .header("anthropic-version", "2023-06-01"),
            _ => request.bearer_auth(&self.api_key),
        };
        let response = request.send()?;
        let status = response.status();
        let text = response.text()?;
        if !status.is_success() {
            let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
            return Err(crate::api_error(status.as_u16(), &body));
        }
        if self.stream {
            Ok(streamed(self.api, &events(&text)))
        } else {
            let body: Value = serde_json::from_str(&text)
                .map_err(|e| AgentError::Unexpected(format!("answer: {e}")))?;
            Ok(whole(self.api, &body))
        }
    }

    /// Adds the model's tool calls and their results to the conversation, as the API wants them.
    fn remember(
        &self,
        conversation: &mut Vec<Value>,
        uses: &[ToolUse],
        results: &[(String, String)],
    ) {
        match self.api {
            Api::Chat => {
                let calls: Vec<Value> = uses
                    .iter()
                    .map(|u| {
                        json!({ "id": u.id, "type": "function",
                        "function": { "name": u.name, "arguments": u.arguments.to_string() } })
                    })
                    .collect();
                conversation
                    .push(json!({ "role": "assistant", "content": null, "tool_calls": calls }));
                for (id, result) in results {
                    conversation
                        .push(json!({ "role": "tool", "tool_call_id": id, "content": result }));
                }
            }
            Api::Responses => {
                for u in uses {
                    conversation.push(json!({ "type": "function_call", "call_id": u.id,
                        "name": u.name, "arguments": u.arguments.to_string() }));
                }
                for (id, result) in results {
                    conversation.push(
                        json!({ "type": "function_call_output", "call_id": id, "output": result }),
                    );
                }
            }
            Api::Anthropic => {
                let blocks: Vec<Value> = uses
                    .iter()
                    .map(|u| json!({ "type": "tool_use", "id": u.id, "name": u.name, "input": u.arguments }))
                    .collect();
                conversation.push(json!({ "role": "assistant", "content": blocks }));
                let results: Vec<Value> = results
                    .iter()
                    .map(
                        |(id, r)| json!({ "type": "tool_result", "tool_use_id": id, "content": r }),
                    )
                    .collect();
                conversation.push(json!({ "role": "user", "content": results }));
            }
        }
    }
}

/// The two tools, described as the API wants them.
fn tools(api: Api) -> Value {
    let lookup = json!({ "type": "object", "properties": {
        "category": { "type": "string" }, "sku": { "type": "string" }, "max_price": { "type": "number" } } });
    let recommend = json!({ "type": "object", "properties": {
        "sku": { "type": "string" }, "price": { "type": "number" }, "note": { "type": "string" } },
        "required": ["sku"] });
    let list = [
        (
            "inventory_lookup",
            "Items of the inventory, by category and price, or by SKU.",
            lookup,
        ),
        (
            "recommend",
            "Recommends one item to the customer.",
            recommend,
        ),
    ];
    Value::Array(
        list.into_iter()
            .map(|(name, description, schema)| match api {
                Api::Chat => json!({ "type": "function", "function": {
                    "name": name, "description": description, "parameters": schema } }),
                Api::Responses => json!({ "type": "function", "name": name,
                    "description": description, "parameters": schema }),
                Api::Anthropic => {
                    json!({ "name": name, "description": description, "input_schema": schema })
                }
            })
            .collect(),
    )
}

/// Runs one tool on the inventory.
fn run_tool(call: &ToolUse, inventory: &[Item], recommended: &mut Option<String>) -> Value {
    let args = &call.arguments;
    match call.name.as_str() {
        "inventory_lookup" => {
            let found: Vec<&Item> = inventory
                .iter()
                .filter(|i| args["sku"].as_str().is_none_or(|s| s == i.sku))
                .filter(|i| args["category"].as_str().is_none_or(|c| c == i.category))
                .filter(|i| args["max_price"].as_f64().is_none_or(|m| i.price <= m))
                .collect();
            json!({ "items": found })
        }
        "recommend" => {
            *recommended = args["sku"].as_str().map(str::to_string);
            json!({ "ok": true })
        }
        other => json!({ "error": format!("no tool {other}") }),
    }
}

fn arguments(raw: &Value) -> Value {
    match raw {
        Value::String(text) => serde_json::from_str(text).unwrap_or(json!({})),
        Value::Null => json!({}),
        other => other.clone(),
    }
}

/// A whole answer: its tool calls and its text.
fn whole(api: Api, body: &Value) -> (Vec<ToolUse>, Option<String>) {
    let use_of = |id: &Value, name: &Value, args: &Value| ToolUse {
        id: id.as_str().unwrap_or_default().to_string(),
        name: name.as_str().unwrap_or_default().to_string(),
        arguments: arguments(args),
    };
    match api {
        Api::Chat => {
            let message = &body["choices"][0]["message"];
            let uses = message["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| {
                    use_of(
                        &c["id"],
                        &c["function"]["name"],
                        &c["function"]["arguments"],
                    )
                })
                .collect();
            (uses, message["content"].as_str().map(str::to_string))
        }
        Api::Responses => {
            let output = body["output"].as_array().cloned().unwrap_or_default();
            let uses = output
                .iter()
                .filter(|i| i["type"] == "function_call")
                .map(|i| use_of(&i["call_id"], &i["name"], &i["arguments"]))
                .collect();
            let text = output
                .iter()
                .filter(|i| i["type"] == "message")
                .flat_map(|i| i["content"].as_array().cloned().unwrap_or_default())
                .filter_map(|c| c["text"].as_str().map(str::to_string))
                .collect::<String>();
            (uses, Some(text))
        }
        Api::Anthropic => {
            let content = body["content"].as_array().cloned().unwrap_or_default();
            let uses = content
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .map(|b| use_of(&b["id"], &b["name"], &b["input"]))
                .collect();
            let text = content
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<String>();
            (uses, Some(text))
        }
    }
}

/// The `data` of each server-sent event (`[DONE]` and other text left out).
fn events(stream: &str) -> Vec<Value> {
    stream
        .lines()
        .filter_map(|l| l.trim_end_matches('\r').strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str(d).ok())
        .collect()
}

/// A streamed answer put back together: each API sends a call's name first and its arguments
/// in pieces, keyed by the call's index.
fn streamed(api: Api, events: &[Value]) -> (Vec<ToolUse>, Option<String>) {
    // (id, name, argument text) by index.
    let mut calls: std::collections::BTreeMap<u64, (String, String, String)> = Default::default();
    let mut text = String::new();
    for e in events {
        match api {
            Api::Chat => {
                let delta = &e["choices"][0]["delta"];
                text.push_str(delta["content"].as_str().unwrap_or_default());
                for piece in delta["tool_calls"].as_array().into_iter().flatten() {
                    let at = calls
                        .entry(piece["index"].as_u64().unwrap_or(0))
                        .or_default();
                    if let Some(id) = piece["id"].as_str() {
                        at.0 = id.to_string();
                    }
                    at.1.push_str(piece["function"]["name"].as_str().unwrap_or_default());
                    at.2.push_str(piece["function"]["arguments"].as_str().unwrap_or_default());
                }
            }
            Api::Responses => match e["type"].as_str().unwrap_or_default() {
                "response.output_item.added" if e["item"]["type"] == "function_call" => {
                    let at = calls
                        .entry(e["output_index"].as_u64().unwrap_or(0))
                        .or_default();
                    at.0 = e["item"]["call_id"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string();
                    at.1 = e["item"]["name"].as_str().unwrap_or_default().to_string();
                }
                "response.function_call_arguments.delta" => {
                    let at = calls
                        .entry(e["output_index"].as_u64().unwrap_or(0))
                        .or_default();
                    at.2.push_str(e["delta"].as_str().unwrap_or_default());
                }
                "response.output_text.delta" => {
                    text.push_str(e["delta"].as_str().unwrap_or_default())
                }
                _ => {}
            },
            Api::Anthropic => match e["type"].as_str().unwrap_or_default() {
                "content_block_start" if e["content_block"]["type"] == "tool_use" => {
                    let at = calls.entry(e["index"].as_u64().unwrap_or(0)).or_default();
                    at.0 = e["content_block"]["id"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string();
                    at.1 = e["content_block"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string();
                }
                "content_block_delta" => {
                    let delta = &e["delta"];
                    if delta["type"] == "input_json_delta" {
                        let at = calls.entry(e["index"].as_u64().unwrap_or(0)).or_default();
                        at.2.push_str(delta["partial_json"].as_str().unwrap_or_default());
                    }
                    text.push_str(delta["text"].as_str().unwrap_or_default());
                }
                _ => {}
            },
        }
    }
    let uses = calls
        .into_values()
        .map(|(id, name, args)| ToolUse {
            id,
            name,
            arguments: arguments(&Value::String(args)),
        })
        .collect();
    (uses, Some(text))
}
