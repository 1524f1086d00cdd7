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

/// A case whose request carries keys everywhere a user's code may put one: the `Authorization`
/// header, the query string (`api_key`, Google's `key`, Azure's `api-key`, a `session_token`),
/// a body field of another name (`user`) and a note (`metadata.customer_note`) that the upstream
/// echoes back, as OpenAI's Responses API does with `metadata`. The keys come from the
/// environment, so that a replay can send other ones.
pub fn with_keys(case: &Case, llm: &mut Llm) -> proposal_eval::Result<serde_json::Value> {
    let var = |name: &str| std::env::var(name).unwrap_or_else(|_| format!("no-{name}"));
    let model = std::env::var("SUPPORT_AGENT_MODEL").unwrap_or_else(|_| "gpt-4o-mini".into());
    let url = format!(
        "{}/chat/completions?api-version=2024-06-01&api_key={}&key={}&api-key={}&session_token={}",
        llm.base_url()?,
        var("OPENAI_API_KEY"),
        var("SUPPORT_AGENT_GOOGLE_KEY"),
        var("SUPPORT_AGENT_AZURE_KEY"),
        var("SUPPORT_AGENT_SESSION"),
    );
    let body = serde_json::json!({
        "model": model,
        "messages": [{ "role": "user", "content": case.input["message"] }],
        "user": var("SUPPORT_AGENT_USER_KEY"),
        "metadata": { "customer_note": format!("the customer pasted {}", var("SUPPORT_AGENT_NOTE_KEY")) },
    });
    let response: serde_json::Value = reqwest::blocking::Client::new()
        .post(url)
        .bearer_auth(var("OPENAI_API_KEY"))
        .json(&body)
        .send()?
        .error_for_status()?
        .json()?;
    Ok(serde_json::json!({ "reply": response["choices"][0]["message"]["content"] }))
}
