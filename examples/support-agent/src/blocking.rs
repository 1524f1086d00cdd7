//! The same agent with reqwest's blocking client, for programs that run no async runtime (a
//! CLI, a worker thread). It asks the same requests in the same order as [`crate::Agent`].

use crate::{
    api_error, direct_reply, opening, run_tools, stream_request, tool_request, Action, AgentError,
    Order, StreamedReply,
};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};

pub struct Agent {
    http: reqwest::blocking::Client,
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
            http: reqwest::blocking::Client::new(),
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
    pub fn handle(
        &self,
        message: &str,
        orders: &BTreeMap<String, Order>,
    ) -> Result<Vec<Action>, AgentError> {
        let mut messages = opening(message);
        let first = self.chat(&tool_request(&self.model, &messages))?;
        let choice = &first["choices"][0]["message"];
        let mut actions = run_tools(choice, orders, &mut messages)?;
        let text = match direct_reply(choice, &actions) {
            Some(text) => text,
            None => self.stream_reply(&messages)?,
        };
        actions.push(Action::Reply { text });
        Ok(actions)
    }

    fn chat(&self, body: &Value) -> Result<Value, AgentError> {
        let response = self
            .http
            .post(format!("{}/chat/completions", self.base_url))
            .bearer_auth(&self.api_key)
            .json(body)
            .send()?;
        let status = response.status();
        let body: Value = response.json()?;
        if !status.is_success() {
            return Err(api_error(status.as_u16(), &body));
        }
        Ok(body)
    }

    /// The reply, streamed: read line by line as the server sends it.
    fn stream_reply(&self, messages: &[Value]) -> Result<String, AgentError> {
        let response = self
            .http
            .post(format!("{}/chat/completions", self.base_url))
            .bearer_auth(&self.api_key)
            .json(&stream_request(&self.model, messages))
            .send()?;
        let status = response.status();
        if !status.is_success() {
            let body: Value = response.json().unwrap_or(Value::Null);
            return Err(api_error(status.as_u16(), &body));
        }
        let mut reply = StreamedReply::default();
        for line in BufReader::new(response).lines() {
            if reply.line(&line.map_err(AgentError::Stream)?)? {
                return Ok(reply.text);
            }
        }
        Err(AgentError::Unexpected(
            "the stream ended without [DONE]".into(),
        ))
    }
}
