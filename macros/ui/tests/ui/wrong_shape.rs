use proposal_eval::{proposal_eval, Case};

#[proposal_eval(fixtures = "empty_suite")]
fn suite(_case: &Case) -> serde_json::Value {
    serde_json::Value::Null
}

fn main() {}
