//! One `#[test]` per fixture of `generated/suite` through `#[proposal_eval]`: the case returns
//! the proposals its fixture holds.

use proposal_eval::{proposal_eval, Case, Llm};

#[proposal_eval(fixtures = "generated/suite")]
fn suite(case: &Case, _llm: &mut Llm) -> serde_json::Value {
    case.input["proposals"].clone()
}
