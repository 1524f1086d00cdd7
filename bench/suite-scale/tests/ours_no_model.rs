//! proposal-eval's harness over the generated no-model suite: discovery, fixture parsing, the
//! strict evaluator (ordered matching) and the per-case report. The code under test calls no
//! model: it returns the proposals the fixture's input holds.
//!
//! `BENCH_SUITE` picks the suite folder (crate-relative); without it a small suite is generated
//! (see `suite_scale_bench::suite_for_tests`).

use proposal_eval::{Case, Harness, Llm};
use serde_json::Value;
use suite_scale_bench::Shape;

fn propose(case: &Case, _llm: &mut Llm) -> Value {
    case.input["proposals"].clone()
}

fn main() -> std::process::ExitCode {
    let suite = suite_scale_bench::suite_for_tests(Shape::NoModel);
    Harness::new(suite).run(propose)
}
