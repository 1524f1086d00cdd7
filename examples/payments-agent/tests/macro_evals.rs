//! The same suite through the macro front end: `cargo test --test macro_evals`.
//!
//! `#[proposal_eval]` writes one `#[test]` per fixture file when this crate compiles (module
//! `payments`, named after the folder), so the test names are those of `tests/evals.rs`, and
//! both front ends replay the same recordings in `fixtures/payments/recordings/`. `build.rs`
//! makes a newly added fixture file rebuild these tests.

use proposal_eval::{proposal_eval, Case, Llm};
use serde_json::Value;

#[proposal_eval(fixtures = "fixtures/payments", model = payments_agent::live_model)]
fn payments(case: &Case, llm: &mut Llm) -> proposal_eval::Result<Vec<Value>> {
    payments_agent::propose(&case.input, case.now(), llm)
}
