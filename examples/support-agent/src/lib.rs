//! A customer-support agent. It reads a customer's message, asks the model which tool to use
//! (one non-streaming chat completion with a `lookup_order` tool), runs the tool, and streams
//! the model's reply to the customer (one streaming chat completion).
//!
//! It talks to any OpenAI-compatible chat completions API through reqwest, async ([`Agent`]) or
//! blocking ([`blocking::Agent`], for programs without an async runtime), and knows nothing of
//! how it is tested: the tests give it another base URL, that is all.

use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt;

pub mod blocking;
pub mod shop;

/// What the agent did for one message: the tool calls it made, then its reply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Action {
    /// A tool the model asked for, with its arguments.
    ToolCall { name: String, arguments: Value },
    /// The reply sent to the customer.
    Reply { text: String },
}

/// An order, as the order system knows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Order {
    pub status: String,
    pub shipped_on: Option<String>,
}

/// The agent's failure.
#[derive(Debug)]
pub enum AgentError {
    Http(reqwest::Error),
    Api {
        status: u16,
        message: String,
    },
    /// Reading a streamed answer failed.
    Stream(std::io::Error),
    Unexpected(String),
}

impl fmt::Display for AgentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AgentError::Http(e) => write!(f, "HTTP: {e}"),
            AgentError::Api { status, message } => write!(f, "API error {status}: {message}"),
            AgentError::Stream(e) => write!(f, "reading the stream: {e}"),
            AgentError::Unexpected(what) => write!(f, "unexpected answer: {what}"),
        }
    }
}

impl std::error::Error for AgentError {}

impl From<reqwest::Error> for AgentError {
    fn from(e: reqwest::Error) -> Self {
        AgentError::Http(e)
    }
}

const SYSTEM: &str = "You are the support agent of an online shop. Look orders up with the \
lookup_order tool before you answer; answer in one short sentence.";

pub struct Agent {
    http: reqwest::Client,
    base_url: String,
    api_key: String,
    model: String,
}

impl Agent {
    /// An agent on the API at `base_url` (`https://api.openai.com/v1`).
    pub fn new(
        base_url: impl Into<String>,
        api_key: impl Into<String>,
        model: impl Into<String>,
    ) -> Agent {
        Agent {
            http: reqwest::Client::new(),
            base_url: base_url.into(),
            api_key: api_key.into(),
            model: model.into(),
        }
    }

    /// The production agent: `OPENAI_API_KEY`, and `OPENAI_BASE_URL` when set.
    pub fn from_env() -> Result<Agent, AgentError> {
        let key = std::env::var("OPENAI_API_KEY")
            .map_err(|_| AgentError::Unexpected("OPENAI_API_KEY is not set".into()))?;
        let base =
            std::env::var("OPENAI_BASE_URL").unwrap_or_else(|_| "https://api.openai.com/v1".into());
        Ok(Agent::new(base, key, "gpt-4o-mini"))
    }

    /// Handles one customer message against the order system `orders`.
    pub async fn handle(
        &self,
        message: &str,
        orders: &BTreeMap<String, Order>,
    ) -> Result<Vec<Action>, AgentError> {
        let mut messages = opening(message);
        let first = self.chat(tool_request(&self.model, &messages)).await?;
        let choice = &first["choices"][0]["message"];
        let mut actions = run_tools(choice, orders, &mut messages)?;
        let text = match direct_reply(choice, &actions) {
            Some(text) => text,
            None => self.stream_reply(&messages).await?,
        };
        actions.push(Action::Reply { text });
        Ok(actions)
    }

    async fn chat(&self, body: Value) -> Result<Value, AgentError> {
        let response = self
            .http
            .post(format!("{}/chat/completions", self.base_url))
            .bearer_auth(&self.api_key)
            .json(&body)
            .send()
            .await?;
        let status = response.status();
        let body: Value = response.json().await?;
        if !status.is_success() {
            return Err(api_error(status.as_u16(), &body));
        }
        Ok(body)
    }

    /// The reply, streamed: the customer sees it as it comes (here it is gathered).
    async fn stream_reply(&self, messages: &[Value]) -> Result<String, AgentError> {
        let response = self
            .http
            .post(format!("{}/chat/completions", self.base_url))
            .bearer_auth(&self.api_key)
            .json(&stream_request(&self.model, messages))
            .send()
            .await?;
        let status = response.status();
        if !status.is_success() {
            let body: Value = response.json().await.unwrap_or(Value::Null);
            return Err(api_error(status.as_u16(), &body));
        }
        let mut reply = StreamedReply::default();
        let mut pending = String::new();
        let mut bytes = response.bytes_stream();
        while let Some(chunk) = bytes.next().await {
            pending.push_str(&String::from_utf8_lossy(&chunk?));
            while let Some(end) = pending.find('\n') {
                let line = pending[..end].to_string();
                pending.drain(..=end);
                if reply.line(&line)? {
                    return Ok(reply.text);
                }
            }
        }
        Err(AgentError::Unexpected(
            "the stream ended without [DONE]".into(),
        ))
    }
}

/// The conversation's first two messages.
fn opening(message: &str) -> Vec<Value> {
    vec![
        json!({ "role": "system", "content": SYSTEM }),
        json!({ "role": "user", "content": message }),
    ]
}

/// The first request: the conversation and the `lookup_order` tool.
fn tool_request(model: &str, messages: &[Value]) -> Value {
    let tools = json!([{
        "type": "function",
        "function": {
            "name": "lookup_order",
            "description": "The status of an order, by its id (A-1234).",
            "parameters": {
                "type": "object",
                "properties": { "order_id": { "type": "string" } },
                "required": ["order_id"],
            },
        },
    }]);
    json!({ "model": model, "messages": messages, "tools": tools, "temperature": 0 })
}

/// The streamed request for the reply, once the tools have answered.
fn stream_request(model: &str, messages: &[Value]) -> Value {
    json!({
        "model": model,
        "messages": messages,
        "stream": true,
        "stream_options": { "include_usage": true },
        "temperature": 0,
    })
}

/// Runs the tools the model's message `choice` asks for, adding it and their results to the
/// conversation.
fn run_tools(
    choice: &Value,
    orders: &BTreeMap<String, Order>,
    messages: &mut Vec<Value>,
) -> Result<Vec<Action>, AgentError> {
    let mut actions = Vec::new();
    messages.push(choice.clone());
    for call in choice["tool_calls"].as_array().into_iter().flatten() {
        let name = call["function"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let arguments: Value =
            serde_json::from_str(call["function"]["arguments"].as_str().unwrap_or("{}"))
                .map_err(|e| AgentError::Unexpected(format!("tool arguments: {e}")))?;
        let result = match name.as_str() {
            "lookup_order" => {
                let id = arguments["order_id"].as_str().unwrap_or_default();
                match orders.get(id) {
                    Some(order) => json!(order),
                    None => json!({ "error": format!("no order {id}") }),
                }
            }
            other => json!({ "error": format!("no tool {other}") }),
        };
        messages.push(
            json!({ "role": "tool", "tool_call_id": call["id"], "content": result.to_string() }),
        );
        actions.push(Action::ToolCall { name, arguments });
    }
    Ok(actions)
}

/// The model's answer when it called no tool: then there is nothing more to ask.
fn direct_reply(choice: &Value, actions: &[Action]) -> Option<String> {
    match choice["content"].as_str() {
        Some(text) if actions.is_empty() => Some(text.to_string()),
        _ => None,
    }
}

fn api_error(status: u16, body: &Value) -> AgentError {
    let message = body["error"]["message"]
        .as_str()
        .unwrap_or("(no message)")
        .to_string();
    AgentError::Api { status, message }
}

/// The reply's text, gathered from the lines of a streamed chat completion (server-sent
/// events: `data: {chunk}`, and `data: [DONE]` at the end).
#[derive(Default)]
struct StreamedReply {
    text: String,
}

impl StreamedReply {
    /// Reads one line of the stream; `true` once it says it is done.
    fn line(&mut self, line: &str) -> Result<bool, AgentError> {
        let Some(data) = line.trim_end_matches('\r').strip_prefix("data: ") else {
            return Ok(false);
        };
        if data == "[DONE]" {
            return Ok(true);
        }
        let chunk: Value = serde_json::from_str(data)
            .map_err(|e| AgentError::Unexpected(format!("stream chunk: {e}")))?;
        if let Some(delta) = chunk["choices"][0]["delta"]["content"].as_str() {
            self.text.push_str(delta);
        }
        Ok(false)
    }
}
