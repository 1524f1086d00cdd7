//! Fixture-driven evals for code that asks a language model for structured output.
//!
//! A folder of JSON fixture files becomes one test per fixture. The code under test calls the
//! model through an [`Llm`] handle that replays recorded responses, so tests are deterministic
//! and offline; each recording carries the SHA-256 of the files it was made from and is refused
//! when they changed. `RECORD=1 cargo test` re-records. What the code produced ("proposals":
//! data changes, extracted fields, tool calls) is checked strictly ([`compare`]) or scored field
//! by field ([`accuracy`]) or by an external script ([`judge`]).
//!
//! Four names are the whole everyday surface: [`Case`] (one fixture, as the code under test sees
//! it), [`Llm`] (the model handle), [`Model`] (your live client, used only to record), and either
//! the [`proposal_eval`] attribute or the [`Harness`].
//!
//! # Quickstart
//!
//! A fixture, `fixtures/payments/raise_amount.json`:
//!
//! ```json
//! {
//!   "description": "Raise payment amount for user 42",
//!   "input": { "message": "Please change my payment to 120 EUR", "userId": "42" },
//!   "expected": [{ "changeType": "change", "changedField": "payment.amount", "newValue": 120 }]
//! }
//! ```
//!
//! A test file, `tests/evals.rs` (the suite below is this repository's own `fixtures/quickstart`):
//!
//! ```
//! use proposal_eval::{proposal_eval, Case, Llm, Model, ModelError};
//! use serde_json::{json, Value};
//!
//! /// Your real client goes here; it is built only when something is recorded.
//! pub fn live_model() -> impl Model {
//!     |request: &Value| -> Result<Value, ModelError> { Err(ModelError::new("no key in docs")) }
//! }
//!
//! #[proposal_eval(fixtures = "../fixtures/quickstart", model = live_model)]
//! fn payments(case: &Case, llm: &mut Llm) -> proposal_eval::Result<Vec<Value>> {
//!     let reply = llm.complete(&json!({ "message": case.input["message"] }))?;
//!     Ok(serde_json::from_value(reply["proposals"].clone())?)
//! }
//! # fn main() {}
//! ```
//!
//! `cargo test` now runs one test per fixture (`quickstart::raise_amount`, ...).
//! `RECORD=1 cargo test` calls the live model and writes `<suite>/recordings/<case>.json`;
//! commit those files and CI replays them with no key and no network.
//!
//! The same suite as a run-time harness (`[[test]] name = "evals" harness = false`), which picks
//! up new fixture files without a rebuild: see [`Harness`].
//!
//! # What a failure looks like
//!
//! ```text
//! payments/raise_amount: strict FAILED (score 0)
//!   [0].newValue: values differ: expected 120, actual "120"
//! --- expected (normalized; ignored paths shown as "<ignored>")
//! +++ actual (normalized)
//! @@ -3,5 +3,5 @@
//! ...
//! re-run: cargo test -p payments-agent --test evals -- payments::raise_amount --exact
//! ```
//!
//! # Environment
//!
//! | variable | effect |
//! |---|---|
//! | `RECORD` | unset/`0` replay; `1`/`all` record every selected case; `stale` record missing or stale recordings only |
//! | `NO_COLOR` | no colours in failure output |
//! | `PROPOSAL_EVAL_MAX_CONCURRENCY` | live model calls at once while recording (default 4), across every test process of the target folder (nextest runs one per test) |
//!
//! # Design
//!
//! A pure engine and an I/O shell. [`path`], [`normalize`], [`transform`], [`compare`],
//! [`accuracy`] take `serde_json::Value`s and a config and return a verdict; they never touch the
//! file system, the clock or the environment. [`fixture`], [`recording`], [`judge`] (processes),
//! [`env`](mod@env) (every environment variable, read once) and the two front ends are the shell. The
//! macro generates one `#[test]` per fixture that calls one runtime function, so both front ends
//! share every behaviour: names, verdicts and messages.
#![deny(missing_docs)]

#[doc(hidden)]
#[path = "macro_support.rs"]
pub mod __macro_support;
mod case;
pub mod config;
mod discovery;
pub mod draft;
pub mod env;
pub mod fixture;
mod harness;
pub mod judge;
mod llm;
use proposal_eval_naming as naming;
pub mod recording;
pub mod report;
mod run;
pub mod status;

pub use case::{Case, CaseOutput};
pub use harness::Harness;
pub use llm::{Llm, LlmError, Model, ModelError};
pub use proposal_eval_engine::{accuracy, compare, fuzzy, normalize, path, transform};
pub use proposal_eval_macros::proposal_eval;

/// The error type of a case function: anything that is an error converts into it with `?`.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// `Result<T, proposal_eval::Error>`: the return type that lets a case use `?` on model calls,
/// JSON conversions and its own errors.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The settings read from the environment, once per process.
pub(crate) fn settings() -> std::result::Result<&'static env::Settings, env::EnvError> {
    static SETTINGS: std::sync::OnceLock<std::result::Result<env::Settings, env::EnvError>> =
        std::sync::OnceLock::new();
    SETTINGS
        .get_or_init(env::Settings::from_env)
        .as_ref()
        .map_err(Clone::clone)
}
