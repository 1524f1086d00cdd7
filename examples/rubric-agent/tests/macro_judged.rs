//! The `#[proposal_eval]` front end with a judge of one's own (`judge = path`): the case is
//! checked by its rubric alone. `cargo test -p rubric-agent --test macro_judged` replays the
//! committed verdicts; `RECORD=1` asks `local_judge` again (it needs no key and no network).

use proposal_eval::{proposal_eval, Case, Llm, Model, ModelError};
use serde_json::{json, Value};

/// The judge: any `Model`. This one looks for the reply in the prompt; a real one would call a
/// model.
pub fn local_judge() -> impl Model {
    |request: &Value| -> Result<Value, ModelError> {
        let prompt = request["messages"][0]["content"]
            .as_str()
            .unwrap_or_default();
        Ok(json!({"verdicts": [
            {"id": 0, "holds": prompt.contains("Hello Ada"), "reason": "the reply says Hello Ada"},
            {"id": 1, "holds": prompt.contains("your password"), "reason": "no password is asked for"},
        ]}))
    }
}

#[proposal_eval(fixtures = "fixtures/greetings", judge = crate::local_judge)]
fn greetings(case: &Case, _llm: &mut Llm) -> Value {
    json!({ "reply": format!("Hello {}, how can I help?", case.input["name"].as_str().unwrap_or("")) })
}
