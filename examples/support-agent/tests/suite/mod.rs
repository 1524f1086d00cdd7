//! The case functions: the agent, unchanged, with `llm.base_url()` as its API's base URL; async
//! (`support`) and blocking (`support_blocking`).

#![allow(dead_code)]

use proposal_eval::{Case, Llm};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use support_agent::{Action, Agent, Order};

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

/// Fan-out: an inbox of several customers' messages (`input.messages`, one order system
/// `input.orders`) handled at once, as a busy support desk would: the model is asked about every
/// message at once, and their streamed replies overlap. The actions come out in message order.
///
/// With `SUPPORT_AGENT_FAN_OUT_STAGGER` set, each case starts its messages a few milliseconds
/// apart in an order of its own (the cases of a run take the orders in turn), so that a replay
/// meets the calls in another order than the recording did.
pub async fn support_fan_out(case: &Case, llm: &mut Llm) -> proposal_eval::Result<Vec<Action>> {
    let key = std::env::var("OPENAI_API_KEY").unwrap_or_else(|_| "no-key-needed-in-replay".into());
    let agent = Agent::new(llm.base_url()?, key, "gpt-4o-mini");
    let orders: BTreeMap<String, Order> = serde_json::from_value(case.input["orders"].clone())?;
    let messages: Vec<String> = serde_json::from_value(case.input["messages"].clone())?;
    let waits = stagger(messages.len());
    let handled = messages.iter().zip(waits).map(|(message, wait)| {
        let (agent, orders) = (&agent, &orders);
        async move {
            tokio::time::sleep(wait).await;
            agent.handle(message, orders).await
        }
    });
    let replies = futures_util::future::try_join_all(handled).await?;
    Ok(replies.into_iter().flatten().collect())
}

/// How long each of `n` messages waits before it starts: nothing, or with
/// `SUPPORT_AGENT_FAN_OUT_STAGGER` 5 ms per place in the next of the `n!` orders.
fn stagger(n: usize) -> Vec<Duration> {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    if std::env::var_os("SUPPORT_AGENT_FAN_OUT_STAGGER").is_none() {
        return vec![Duration::ZERO; n];
    }
    // The k-th permutation of 0..n (factorial number system).
    let mut k = NEXT.fetch_add(1, Ordering::Relaxed);
    let mut left: Vec<usize> = (0..n).collect();
    let mut waits = vec![Duration::ZERO; n];
    for place in 0..n {
        let message = left.remove(k % left.len());
        k /= left.len() + 1;
        waits[message] = Duration::from_millis(5 * place as u64);
    }
    waits
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
