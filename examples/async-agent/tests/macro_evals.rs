//! The suite through the `#[proposal_eval]` front end: `cargo test -p async-agent --test
//! macro_evals`. The attribute takes the `async fn` as it is; with the `tokio` feature each
//! generated test drives it on a tokio runtime.

#[path = "support/accounts.rs"]
mod accounts;

use proposal_eval::openai::ChatCompletions;
use proposal_eval::{proposal_eval, Case, Llm};
use serde_json::Value;

fn live_model() -> ChatCompletions {
    ChatCompletions::new()
}

#[proposal_eval(fixtures = "fixtures/tickets", model = live_model)]
async fn tickets(case: &Case, llm: &mut Llm) -> proposal_eval::Result<Vec<Value>> {
    let accounts = accounts::start().await;
    async_agent::triage(&case.input, &accounts.uri(), llm).await
}
