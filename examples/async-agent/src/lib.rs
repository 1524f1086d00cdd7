//! An async support-ticket agent, and the proposal-eval suite that checks it.
//!
//! [`triage`] is written the way an async service is: it looks the customer up in an accounts
//! service with [`reqwest`] (two requests at once, on [`tokio::spawn`], each bounded by
//! [`tokio::time::timeout`]), then asks the model which data changes to propose. Such code needs
//! a tokio runtime, so the crate turns on proposal-eval's `tokio` feature in its
//! dev-dependencies; its `async fn` cases then run on one:
//!
//! - `tests/evals.rs` runs `fixtures/tickets` through `Harness::run_async`, and
//!   `tests/macro_evals.rs` through `#[proposal_eval]` on an `async fn`. Both replay the
//!   recordings in `fixtures/tickets/recordings/`, so they need no key and no network; the
//!   accounts service is a loopback stand-in the tests start (`tests/support/accounts.rs`).
//! - The live model is `proposal_eval::openai::ChatCompletions` (feature `openai`), which reads
//!   `OPENAI_API_KEY` and `OPENAI_BASE_URL`: `RECORD=1 cargo test -p async-agent --test evals`
//!   records against the real endpoint.
//! - `tests/record_replay.rs` records the suite through `ChatCompletions` against a fake
//!   OpenAI-compatible server on loopback (`tests/support/fake_openai.rs`), then replays it; that
//!   is also how this repository re-records the committed recordings offline:
//!   `ASYNC_AGENT_RERECORD=1 cargo test -p async-agent --test record_replay`.
//! - `tests/chat_completions.rs` checks the live model's retries, waits and timeouts against the
//!   same kind of server.

use proposal_eval::Llm;
use serde_json::{json, Value};
use std::time::Duration;

/// The instructions sent with every ticket; a source of every recording (see the suite config).
pub const PROMPT: &str = include_str!("../prompts/triage.md");

/// The model the agent asks.
pub const MODEL: &str = "gpt-4o-mini";

/// How long the agent waits for the accounts service.
const LOOKUP_TIMEOUT: Duration = Duration::from_secs(5);

/// What [`triage`] fails with.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// The data changes to propose for `ticket` (`{"customerId": ..., "message": ...}`), given the
/// accounts service at `accounts_url`.
pub async fn triage(
    ticket: &Value,
    accounts_url: &str,
    llm: &mut Llm,
) -> Result<Vec<Value>, Error> {
    let customer = ticket["customerId"]
        .as_str()
        .ok_or("the ticket has no customerId")?;
    let http = reqwest::Client::new();
    let account = tokio::spawn(lookup(
        http.clone(),
        format!("{accounts_url}/accounts/{customer}"),
    ));
    let orders = tokio::spawn(lookup(
        http,
        format!("{accounts_url}/accounts/{customer}/orders"),
    ));
    let (account, orders) = (account.await??, orders.await??);

    let facts = json!({ "ticket": ticket["message"], "account": account, "orders": orders });
    let request = json!({
        "model": MODEL,
        "messages": [
            { "role": "system", "content": PROMPT },
            { "role": "user", "content": facts.to_string() },
        ],
        "response_format": { "type": "json_object" },
    });
    let reply = llm.complete(&request)?;
    let content = reply["choices"][0]["message"]["content"]
        .as_str()
        .ok_or_else(|| format!("the model's reply has no message content: {reply}"))?;
    let answer: Value = serde_json::from_str(content)
        .map_err(|e| format!("the model's answer is not JSON ({e}): {content}"))?;
    match &answer["proposals"] {
        Value::Array(proposals) => Ok(proposals.clone()),
        _ => Err(format!("the model's answer has no proposals list: {content}").into()),
    }
}

/// GETs `url` as JSON, giving up after [`LOOKUP_TIMEOUT`].
async fn lookup(http: reqwest::Client, url: String) -> Result<Value, Error> {
    let response = tokio::time::timeout(LOOKUP_TIMEOUT, http.get(&url).send())
        .await
        .map_err(|_| format!("GET {url}: no answer within {LOOKUP_TIMEOUT:?}"))??;
    Ok(response.error_for_status()?.json().await?)
}
