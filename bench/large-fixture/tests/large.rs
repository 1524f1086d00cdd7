//! One case whose fixture holds a large document (`generated/large/big.json`, written by
//! `measure.sh`). The code under test sends the whole document to the model, as an extraction
//! agent does, and returns the proposals of the reply. The live model (recording) answers with
//! the document's length, so the reply depends on what the model saw.

use proposal_eval::{Case, Harness, Llm, ModelError};
use serde_json::{json, Value};

fn live_model() -> impl proposal_eval::Model {
    |request: &Value| -> Result<Value, ModelError> {
        let document = request["messages"][1]["content"]
            .as_str()
            .ok_or_else(|| ModelError::new("no document in the request"))?;
        Ok(json!({"proposals": [{"op": "note", "length": document.len()}]}))
    }
}

fn propose(case: &Case, llm: &mut Llm) -> proposal_eval::Result<Value> {
    let document = case.input["document"].as_str().unwrap_or_default();
    let request = json!({
        "model": "extractor-1",
        "messages": [
            {"role": "system", "content": "Extract the proposals."},
            {"role": "user", "content": document},
        ],
    });
    let mut reply = llm.complete(&request)?;
    Ok(reply["proposals"].take())
}

fn main() -> std::process::ExitCode {
    Harness::new("generated/large").model(live_model).run(propose)
}
