//! What the generated suites are made of, shared by the generator, the two test targets and the
//! staleness-check timer.
//!
//! Every case's proposals are built from the realistic proposal in
//! `engine/benches/data/proposal_pair.json` (59 leaves, 3 levels, 5 items), varied by the
//! case number so no two files are equal.

use serde_json::{json, Value};

/// The suite's config: the strict evaluator, one suite-wide prompt source, a few ignore paths.
pub const CONFIG: &str = r#"evaluators = ["strict"]

[recording]
validation = "strict"
sources = ["generated/prompts/*.md"]
ignore_request_paths = ["metadata.request_id"]

[strict]
matching = "ordered"
ignore_paths = ["mutationVariables.metadata.*", "**.timestamp", "customer.contact.phone", "items[*].taxRate"]
"#;

/// The prompt every case's recording depends on (a suite `sources` glob).
pub const PROMPT: &str = "You turn a customer's message into proposal objects.\n\nReturn JSON: {\"proposals\": [...]}.\n";

fn template() -> Value {
    let text = include_str!("../../../engine/benches/data/proposal_pair.json");
    let data: Value = serde_json::from_str(text).expect("proposal_pair.json is JSON");
    data["expected"].clone()
}

/// The input of case `n`.
pub fn input(n: usize) -> Value {
    json!({
        "message": format!("Please update proposal PR-2025-{n:05}: quantity of item {} to {}", n % 5, n % 17 + 1),
        "customerId": format!("C-{:04}", 1000 + n % 997),
        "n": n,
    })
}

/// The request the code under test sends for `input` (what the recording holds).
pub fn request(input: &Value) -> Value {
    json!({
        "model": "x-large",
        "temperature": 0,
        "prompt": input["message"],
        "customerId": input["customerId"],
    })
}

/// The proposals of case `n`: one to three, each a varied copy of the template.
pub fn proposals(n: usize) -> Value {
    let base = template();
    let count = 1 + n % 3;
    let mut out = Vec::with_capacity(count);
    for k in 0..count {
        let mut p = base.clone();
        p["proposalId"] = json!(format!("PR-2025-{n:05}-{k}"));
        p["version"] = json!(1 + (n + k) % 9);
        p["customer"]["id"] = json!(format!("C-{:04}", 1000 + n % 997));
        p["customer"]["name"] = json!(format!("Customer {n} Ltd."));
        p["mutationVariables"]["input"]["dealId"] = json!(format!("D-{}", n * 3 + k));
        p["mutationVariables"]["input"]["probability"] = json!(((n * 7 + k) % 100) as f64 / 100.0);
        let items = p["items"].as_array_mut().expect("items");
        items.truncate(1 + (n + k) % 5);
        for (i, item) in items.iter_mut().enumerate() {
            let quantity = 1 + (n + i) % 17;
            item["quantity"] = json!(quantity);
            item["amount"] = json!(
                (quantity as f64 * item["unitPrice"].as_f64().unwrap() * 100.0).round() / 100.0
            );
        }
        p["notes"] = json!(format!(
            "Generated case {n}, proposal {k}: delivery within {} business days.",
            5 + n % 20
        ));
        out.push(p);
    }
    Value::Array(out)
}

/// The model's response for case `n`: the proposals, with the envelope a client would see.
pub fn response(n: usize) -> Value {
    json!({ "id": format!("resp-{n}"), "proposals": proposals(n), "usage": { "input_tokens": 812, "output_tokens": 1290 } })
}
