//! The case functions: the agent, unchanged, with `llm.base_url()` as its API's base URL; async
//! (`support`) and blocking (`support_blocking`).

#![allow(dead_code)]

use proposal_eval::{Case, Llm};
use support_agent::{Action, Agent};

/// One fixture: `input.message` is the customer's message, `input.orders` the order system.
/// An `async fn` case: with proposal-eval's `tokio` feature it runs on a tokio runtime, where
/// reqwest works.
pub async fn support(case: &Case, llm: &mut Llm) -> proposal_eval::Result<Vec<Action>> {
    // Replay sends no key anywhere (and records none); recording uses the real one.
    let key = std::env::var("OPENAI_API_KEY").unwrap_or_else(|_| "no-key-needed-in-replay".into());
    // The tests' stand-in for a code change: another model asked for.
    let model = std::env::var("SUPPORT_AGENT_MODEL").unwrap_or_else(|_| "gpt-4o-mini".into());
    let agent = Agent::new(llm.base_url()?, key, model);
    let orders = serde_json::from_value(case.input["orders"].clone())?;
    let message = case.input["message"].as_str().unwrap_or_default();
    Ok(agent.handle(message, &orders).await?)
}

/// The same with the blocking agent: a plain `fn` case, run on the test's thread outside any
/// async runtime (reqwest's blocking client panics inside one).
pub fn support_blocking(case: &Case, llm: &mut Llm) -> proposal_eval::Result<Vec<Action>> {
    let key = std::env::var("OPENAI_API_KEY").unwrap_or_else(|_| "no-key-needed-in-replay".into());
    let model = std::env::var("SUPPORT_AGENT_MODEL").unwrap_or_else(|_| "gpt-4o-mini".into());
    let agent = support_agent::blocking::Agent::new(llm.base_url()?, key, model);
    let orders = serde_json::from_value(case.input["orders"].clone())?;
    let message = case.input["message"].as_str().unwrap_or_default();
    Ok(agent.handle(message, &orders)?)
}

/// A terse client, as some code has: one streamed request with ureq's defaults, whose error for
/// a failed call is its status alone (`http status: 502`) and which takes whatever text the
/// stream had, `[DONE]` or not. The scenarios use it to see that the case's failure says what
/// happened anyway.
pub fn support_terse(case: &Case, llm: &mut Llm) -> proposal_eval::Result<Vec<Action>> {
    let key = std::env::var("OPENAI_API_KEY").unwrap_or_else(|_| "no-key-needed-in-replay".into());
    let message = case.input["message"].as_str().unwrap_or_default();
    let body = serde_json::json!({
        "model": "gpt-4o-mini",
        "stream": true,
        "messages": [{ "role": "user", "content": message }],
    });
    let text = ureq::post(format!("{}/chat/completions", llm.base_url()?))
        .header("Authorization", &format!("Bearer {key}"))
        .send_json(&body)?
        .body_mut()
        .read_to_string()?;
    let reply: String = text
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter_map(|data| serde_json::from_str::<serde_json::Value>(data).ok())
        .filter_map(|chunk| {
            chunk["choices"][0]["delta"]["content"]
                .as_str()
                .map(str::to_string)
        })
        .collect();
    Ok(vec![Action::Reply { text: reply }])
}
