use proposal_eval::{proposal_eval, Case, Llm};

#[proposal_eval(model = live)]
fn suite(_case: &Case, _llm: &mut Llm) -> serde_json::Value {
    serde_json::Value::Null
}

fn main() {}
