//! proposal-eval's harness over the generated rubric suite: the model shape's run (see
//! `tests/ours.rs`) with a rubric of three statements on every case, graded from the verdicts
//! recorded in each case's recording (the judge part read, its key made from the statements, the
//! output, the input and the prompt, the verdicts graded and put in the report). No judge is
//! given (nor a model): a recording or verdict that is not fresh fails its case.
//!
//! `BENCH_SUITE` picks the suite folder (crate-relative); without it a small suite is generated
//! (see `suite_scale_bench::suite_for_tests`).

use proposal_eval::{Case, Harness, Llm};
use serde_json::Value;
use suite_scale_bench::Shape;

/// The code under test: builds its request from the case, asks the model, returns the proposals.
fn propose(case: &Case, llm: &mut Llm) -> proposal_eval::Result<Value> {
    let mut reply = llm.complete(&suite_scale_bench::request(&case.input))?;
    Ok(reply["proposals"].take())
}

fn main() -> std::process::ExitCode {
    let suite = suite_scale_bench::suite_for_tests(Shape::Rubric);
    Harness::new(suite).run(propose)
}
