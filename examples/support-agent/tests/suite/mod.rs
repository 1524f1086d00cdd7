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

/// The shopping assistant (`fixtures/shop`): `input.api` is the API it speaks (`chat`,
/// `responses`, `anthropic`), `input.stream` whether it streams, `input.inventory` the shop's
/// items. The model's tool calls are its trajectory, read from the recorded answers; the
/// reply the code sends itself is a step it notes.
pub fn shop(case: &Case, llm: &mut Llm) -> proposal_eval::Result<serde_json::Value> {
    use support_agent::shop::{Api, Item, ShopAgent};
    let key = std::env::var("OPENAI_API_KEY").unwrap_or_else(|_| "no-key-needed-in-replay".into());
    let api: Api = serde_json::from_value(case.input["api"].clone())?;
    // Anthropic is an upstream of its own (`[http.upstreams] anthropic`).
    let base = match api {
        Api::Anthropic => llm.base_url_for("anthropic")?,
        _ => llm.base_url()?,
    };
    let stream = case.input["stream"].as_bool().unwrap_or(false);
    let agent = ShopAgent::new(base, key, api).streaming(stream);
    let inventory: Vec<Item> = serde_json::from_value(case.input["inventory"].clone())?;
    let message = case.input["message"].as_str().unwrap_or_default();
    let answer = agent.handle(message, &inventory)?;
    llm.note_tool_call("send_reply", serde_json::json!({ "text": answer.text }));
    Ok(serde_json::to_value(answer)?)
}
