//! A small data-change-proposal agent for payments, and the proposal-eval suite that checks it.
//!
//! A customer writes one message ("Please change my payment to 120 EUR"); the agent asks a
//! language model to turn it into *proposals*: JSON objects that describe the data changes an
//! operator should review (change an amount, a currency, an IBAN, an address; create a payment
//! plan; cancel a standing payment). This crate is the example a newcomer to proposal-eval runs:
//!
//! - [`propose`] is the code under test. It builds a request from the customer's message and the
//!   prompts in `prompts/` (compiled in with `include_str!`), sends it through
//!   [`proposal_eval::Llm`], answers the model's tool calls, and returns the proposals, each with
//!   the agent's own volatile metadata (a request id and a timestamp that differ on every run).
//! - `fixtures/payments/` holds one JSON file per case and `proposal-eval.toml`, which says how
//!   proposals are normalized, which paths are volatile, and which dates are "today".
//! - `tests/evals.rs` runs the suite through `proposal_eval::Harness` (fixtures found at run
//!   time); `tests/macro_evals.rs` runs the same suite through `#[proposal_eval]` (one `#[test]`
//!   per fixture, generated at compile time). Both replay the recordings committed in
//!   `fixtures/payments/recordings/`, so they need no model, no key and no network.
//!
//! # The live model is a stand-in
//!
//! [`live_model`] returns [`StandInModel`]: a deterministic, **rule-based local stand-in** that
//! reads the customer's message with a few keyword rules and answers in the shape a real model
//! would. It exists so that `RECORD=1 cargo test` works on any machine without an API key. It is
//! not a language model and it is not what you would test in a real project: **plug your own
//! client in here**, anything that implements [`proposal_eval::Model`]:
//!
//! ```no_run
//! use proposal_eval::{Model, ModelError};
//! use serde_json::Value;
//!
//! struct MyClient; // your HTTP client, with its key, model name, retries…
//!
//! impl Model for MyClient {
//!     fn complete(&self, request: &Value) -> Result<Value, ModelError> {
//!         // POST `request` to your provider and return the parsed JSON answer.
//!         # let _ = request;
//!         Err(ModelError::new("not wired up"))
//!     }
//! }
//!
//! pub fn live_model() -> impl Model {
//!     MyClient
//! }
//! ```
//!
//! `live_model` is called only while recording; replay never builds it.
//!
//! # Knobs of the stand-in, for proposal-eval's own end-to-end tests
//!
//! | variable | effect |
//! |---|---|
//! | `PAYMENTS_AGENT_FORBID_MODEL=1` | [`live_model`] panics: proves a replay never builds the model |
//! | `PAYMENTS_AGENT_MODEL_MARKER=<file>` | [`live_model`] appends a line to `<file>` each time it is called |
//! | `PAYMENTS_AGENT_SLOW_MS=<ms>` | each answer of the stand-in takes this long (to interrupt a recording) |
//! | `PAYMENTS_AGENT_MODEL_VERSION=2` | the stand-in's "next version": every response names another model, and amounts written with decimals are proposed rounded to whole units (the model upgrade that `RECORD=review` is for) |

use chrono::{DateTime, SecondsFormat, Utc};
use proposal_eval::{Llm, Model};
use serde_json::{json, Map, Value};
use std::sync::atomic::{AtomicU64, Ordering};

mod standin;

pub use standin::{StandInModel, UPGRADED_NAME};

/// What the agent tells the model about its job. A suite source (`[recording] sources` in
/// `proposal-eval.toml`): edit it and every recording is stale until re-recorded.
pub const SYSTEM_PROMPT: &str = include_str!("../prompts/system.md");

/// The answer format the model must follow; a suite source too.
pub const OUTPUT_FORMAT: &str = include_str!("../prompts/output-format.md");

/// The model name the agent asks for.
pub const MODEL_NAME: &str = "payments-standin-1";

/// Tool calls the agent answers before it gives up on a message.
const MAX_CALLS: usize = 3;

/// Turns the customer's message in `input` into data-change proposals.
///
/// `input` is `{ "message": "...", "userId": "...", "payment": { "id", "amount", "currency",
/// "iban" } }`: the message and the customer's current payment (what a production agent would
/// read from its database). `now` is the current time; the model is told today's date from it,
/// so under proposal-eval pass `case.now()`, which is frozen to the recording's time on replay.
///
/// Each proposal is the model's raw proposal plus `metadata: { requestId, receivedAt }`, which
/// are new on every run: the suite ignores them.
///
/// ```
/// use proposal_eval::{Llm, Model};
/// use serde_json::json;
///
/// let mut llm = Llm::live(payments_agent::live_model());
/// let input = json!({
///     "message": "Please change my payment to 120 EUR",
///     "userId": "42",
///     "payment": { "id": "pay-42", "amount": 100, "currency": "EUR", "iban": "DE89370400440532013000" }
/// });
/// let proposals = payments_agent::propose(&input, chrono::Utc::now(), &mut llm).unwrap();
/// assert_eq!(proposals[0]["changedField"], "payment.amount");
/// assert_eq!(proposals[0]["newValue"], 120);
/// ```
pub fn propose(
    input: &Value,
    now: DateTime<Utc>,
    llm: &mut Llm,
) -> proposal_eval::Result<Vec<Value>> {
    let message = input["message"]
        .as_str()
        .ok_or("the case input has no `message` string")?;
    let request_id = new_request_id();
    let mut messages = vec![json!({ "role": "user", "content": message })];
    for _ in 0..MAX_CALLS {
        let reply = llm.complete(&request(input, now, &request_id, &messages))?;
        if let Some(call) = reply.get("tool_call") {
            let result = run_tool(call, input)?;
            messages.push(json!({ "role": "assistant", "tool_call": call }));
            messages.push(json!({ "role": "tool", "name": call["name"], "content": result }));
            continue;
        }
        return proposals(&reply, &request_id);
    }
    Err(format!("the model still calls tools after {MAX_CALLS} calls").into())
}

/// The request the agent sends for one turn of the conversation.
///
/// `metadata.requestId` is new for every message, so the suite lists it in
/// `[recording] ignore_request_paths`: replay compares the rest of the request with the recorded
/// one.
pub fn request(input: &Value, now: DateTime<Utc>, request_id: &str, messages: &[Value]) -> Value {
    json!({
        "model": MODEL_NAME,
        "temperature": 0,
        "system": format!("{SYSTEM_PROMPT}\n{OUTPUT_FORMAT}"),
        "context": {
            "today": now.format("%Y-%m-%d").to_string(),
            "userId": input["userId"],
            "paymentId": input["payment"]["id"],
            "currency": input["payment"]["currency"],
        },
        "tools": [{
            "name": "get_payment",
            "description": "The customer's current payment: amount, currency, IBAN.",
            "parameters": { "paymentId": "string" }
        }],
        "messages": messages,
        "metadata": { "requestId": request_id },
    })
}

/// Answers one tool call from the case's data (in production: from the database).
fn run_tool(call: &Value, input: &Value) -> proposal_eval::Result<Value> {
    match call["name"].as_str() {
        Some("get_payment") => {
            let payment = &input["payment"];
            if call["arguments"]["paymentId"] == payment["id"] {
                Ok(payment.clone())
            } else {
                Ok(json!({ "error": "no such payment" }))
            }
        }
        other => Err(format!("the model called an unknown tool {other:?}").into()),
    }
}

/// The proposals of a final answer, each with the agent's metadata.
fn proposals(reply: &Value, request_id: &str) -> proposal_eval::Result<Vec<Value>> {
    let raw = reply["proposals"]
        .as_array()
        .ok_or_else(|| format!("the model's answer has no `proposals` array: {reply}"))?;
    let received_at = Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true);
    raw.iter()
        .map(|proposal| {
            let mut proposal: Map<String, Value> = proposal
                .as_object()
                .cloned()
                .ok_or_else(|| format!("a proposal is not an object: {proposal}"))?;
            if !proposal.get("changeType").is_some_and(Value::is_string) {
                return Err(format!(
                    "a proposal has no `changeType`: {}",
                    Value::Object(proposal)
                )
                .into());
            }
            proposal.insert(
                "metadata".into(),
                json!({ "requestId": request_id, "receivedAt": received_at }),
            );
            Ok(Value::Object(proposal))
        })
        .collect()
}

/// A request id that differs on every call, as a production agent's would.
fn new_request_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("req-{nanos:x}-{}", COUNTER.fetch_add(1, Ordering::Relaxed))
}

/// The live model: here the local stand-in. **Replace it with your own client** (see the
/// crate docs). proposal-eval calls this only while recording.
pub fn live_model() -> impl Model {
    if std::env::var("PAYMENTS_AGENT_FORBID_MODEL").is_ok_and(|v| !v.is_empty() && v != "0") {
        panic!("PAYMENTS_AGENT_FORBID_MODEL is set, yet the live model was built");
    }
    if let Some(marker) = std::env::var_os("PAYMENTS_AGENT_MODEL_MARKER") {
        use std::io::Write;
        if let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(marker)
        {
            let _ = writeln!(file, "live model built");
        }
    }
    let delay = std::env::var("PAYMENTS_AGENT_SLOW_MS")
        .ok()
        .and_then(|ms| ms.trim().parse().ok())
        .map(std::time::Duration::from_millis);
    let upgraded = std::env::var("PAYMENTS_AGENT_MODEL_VERSION").is_ok_and(|v| v.trim() == "2");
    StandInModel { delay, upgraded }
}
