//! One plain test that uses proposal-eval, no macro: what `ours` costs besides the macro's
//! tests (libtest, linking proposal-eval and its dependencies).

fn proposals(case: &proposal_eval::Case) -> serde_json::Value {
    case.input["proposals"].clone()
}

#[test]
fn plain() {
    let value: serde_json::Value = serde_json::from_str("{\"a\": 1}").unwrap();
    assert_eq!(value["a"], 1);
    let _ = proposals as fn(&proposal_eval::Case) -> serde_json::Value;
}
