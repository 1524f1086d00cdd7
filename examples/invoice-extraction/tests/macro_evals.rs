//! The same suite through the macro front end: `cargo test --test macro_evals`.
//!
//! `#[proposal_eval]` writes one `#[test]` per fixture file when this crate compiles (module
//! `invoices`, named after the folder), so the test names are those of `tests/evals.rs`, and
//! both front ends replay the same recordings in `fixtures/invoices/recordings/`. `build.rs`
//! makes a newly added fixture file rebuild these tests.

use proposal_eval::{proposal_eval, Case, Llm};
use serde_json::Value;

#[proposal_eval(fixtures = "fixtures/invoices", model = invoice_extraction::live_model)]
fn invoices(case: &Case, llm: &mut Llm) -> proposal_eval::Result<Value> {
    let extraction = invoice_extraction::extract(&case.input, llm)?;
    Ok(serde_json::to_value(extraction)?)
}
