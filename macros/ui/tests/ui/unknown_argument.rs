use proposal_eval::{proposal_eval, Case, Llm};

#[proposal_eval(fixtures = "tests/ui/suite", fixture_dir = "x")]
fn suite(_case: &Case, _llm: &mut Llm) -> serde_json::Value {
    serde_json::Value::Null
}

fn main() {}
