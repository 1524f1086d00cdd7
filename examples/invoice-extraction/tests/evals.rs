//! The suite through the harness front end: `cargo test --test evals`.
//!
//! `Harness` finds the fixtures in `fixtures/invoices` when this binary starts, so a new fixture
//! file is a new test without a rebuild. Each case is scored by the evaluators the suite's
//! `proposal-eval.toml` selects (`field_accuracy` and the two `code_judge` scripts) and passes
//! only when all of them pass. `live_model` is called only while recording (`RECORD=1` or
//! `RECORD=stale`); a replay never builds it.

use proposal_eval::{Case, Harness, Llm};
use serde_json::Value;

fn invoices(case: &Case, llm: &mut Llm) -> proposal_eval::Result<Value> {
    let extraction = invoice_extraction::extract(&case.input, llm)?;
    Ok(serde_json::to_value(extraction)?)
}

fn main() -> std::process::ExitCode {
    Harness::new("fixtures/invoices")
        .model(invoice_extraction::live_model)
        .run(invoices)
}
