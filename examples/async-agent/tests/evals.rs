//! The suite through the harness front end: `cargo test -p async-agent --test evals`.
//!
//! The case is an `async fn`, run by `Harness::run_async` on a tokio runtime (proposal-eval's
//! `tokio` feature, on in this crate's dev-dependencies): the agent's reqwest calls,
//! `tokio::spawn` and `tokio::time::timeout` work as in production. The live model,
//! `ChatCompletions`, is built only when a case records (`RECORD=1`, with `OPENAI_API_KEY`).

#[path = "support/accounts.rs"]
mod accounts;

use proposal_eval::openai::ChatCompletions;
use proposal_eval::{Case, Harness, Llm};
use serde_json::Value;

async fn tickets(case: &Case, llm: &mut Llm) -> proposal_eval::Result<Vec<Value>> {
    let accounts = accounts::start().await;
    async_agent::triage(&case.input, &accounts.uri(), llm).await
}

fn main() -> std::process::ExitCode {
    Harness::new("fixtures/tickets")
        .model(ChatCompletions::new)
        .run_async(tickets)
}
