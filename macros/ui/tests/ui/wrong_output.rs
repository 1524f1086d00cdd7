use proposal_eval::{proposal_eval, Case, Llm};

#[proposal_eval(fixtures = "one_case_suite")]
fn suite(_case: &Case, _llm: &mut Llm) -> u32 {
    7
}

fn main() {}
