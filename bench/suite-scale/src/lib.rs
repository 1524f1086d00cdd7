//! What the generated suites are made of, shared by the generator, the test targets and the
//! staleness-check timer; and [`generate`], which writes a suite.
//!
//! Two shapes:
//! - [`Shape::Model`]: the code under test asks a model (replayed from a recording per case) and
//!   returns the proposals of its reply; the fixture's `expected` holds the same proposals.
//! - [`Shape::NoModel`]: no model and no recording; each fixture holds the actual proposals in its
//!   `input` (three of ~30 fields) and the case returns them; ordered matching against
//!   `expected`.
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

/// The config of a no-model suite: the strict evaluator, ordered matching, no recording sources.
pub const NO_MODEL_CONFIG: &str = r#"evaluators = ["strict"]

[strict]
matching = "ordered"
"#;

/// Case `n`'s proposals in the no-model shape: always three, each the template with one item
/// (about 30 leaves), varied by the case number.
pub fn no_model_proposals(n: usize) -> Value {
    // proposals(m) has 1 + m % 3 entries: three for m = 3n + 2.
    let mut proposals = proposals(3 * n + 2);
    for p in proposals.as_array_mut().expect("array").iter_mut() {
        p["items"].as_array_mut().expect("items").truncate(1);
        let object = p.as_object_mut().expect("object");
        object.remove("terms");
        object.remove("totals");
        p["customer"]["name"] = json!(format!("Customer {n} Ltd."));
    }
    proposals
}

/// The input of no-model case `n`: a message and the proposals the code under test returns.
pub fn no_model_input(n: usize) -> Value {
    json!({
        "message": format!("Please update proposal PR-2025-{n:05}"),
        "proposals": no_model_proposals(n),
    })
}

/// Which suite to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Recordings replayed; see the crate docs.
    Model,
    /// Actual proposals in the fixture's input; see the crate docs.
    NoModel,
    /// The model shape with a rubric of three statements on every case and its verdicts
    /// recorded: the same cases, so a run of each measures what the rubric adds.
    Rubric,
}

/// The config of a rubric suite: the model shape's, with the `rubric` evaluator and its judge.
pub fn rubric_config() -> String {
    CONFIG.replacen(
        r#"evaluators = ["strict"]"#,
        "evaluators = [\"strict\", \"rubric\"]\n\n[judge]\nmodel = \"judge-1\"",
        1,
    )
}

/// The rubric every case of the rubric shape carries.
pub fn rubric() -> proposal_eval::rubric::Rubric {
    proposal_eval::rubric::Rubric {
        required: vec![
            "Updates the quantity of the item the message names".into(),
            "Keeps the proposal's customer".into(),
        ],
        forbidden: vec!["Changes a proposal the message does not name".into()],
    }
}

/// Case `n`'s judge part, as recording it with the judge of [`rubric_config`] leaves it: its key
/// made from what it judged, one call answered as an OpenAI-compatible judge answers the built-in
/// prompt (a chat completion with usage), and its verdicts.
fn judgement(
    n: usize,
    input: &Value,
    recorded_at: chrono::DateTime<chrono::Utc>,
) -> proposal_eval::__internal::rubric_judge::Judgement {
    use proposal_eval::__internal::case_run::Question;
    use proposal_eval::__internal::recording::Interaction;
    use proposal_eval::__internal::rubric_judge::{JudgeCall, Judgement, RecordedVerdict};
    let rubric = rubric();
    let config = proposal_eval::config::RubricJudgeConfig {
        model: Some("judge-1".into()),
        ..Default::default()
    };
    let output = proposals(n);
    let question = Question {
        rubric: &rubric,
        input,
        input_sha256: None,
        output: &output,
        trajectory: None,
        template: proposal_eval::rubric::BUILTIN_TEMPLATE,
        config: &config,
    };
    let key = question.key();
    let verdicts: Vec<RecordedVerdict> = rubric
        .statements()
        .into_iter()
        .map(|s| RecordedVerdict {
            id: s.id,
            holds: s.id < 2,
            reason: format!("the proposals of case {n} show it (statement {})", s.id),
            statement: s.text,
        })
        .collect();
    let answer: Vec<Value> = verdicts
        .iter()
        .map(|v| json!({ "id": v.id, "holds": v.holds, "reason": v.reason }))
        .collect();
    let response = json!({
        "id": format!("chatcmpl-{n:08x}"),
        "object": "chat.completion",
        "model": "judge-1",
        "choices": [{
            "index": 0,
            "finish_reason": "stop",
            "message": { "role": "assistant", "content": json!({ "verdicts": answer }).to_string() }
        }],
        "usage": { "prompt_tokens": 2410, "completion_tokens": 96 }
    });
    let mut call = Interaction::new(question.request(), response, recorded_at);
    call.latency_ms = Some(900.0 + (n % 400) as f64);
    call.usage = Some(proposal_eval::Usage::new(2410, 96).with_model("judge-1"));
    Judgement {
        key_sha256: key.key_sha256,
        parts: key.parts,
        recorded_at,
        calls: vec![JudgeCall::of(call)],
        verdicts,
    }
    .without_requests()
}

/// The fixture file of case `n`, crate-relative under the suite folder.
pub fn case_path(n: usize) -> String {
    format!("cases/g{:02}/case_{n:05}", n / 100)
}

/// Writes a generated suite of `count` cases into `suite` (a folder, relative to the crate root,
/// which must be the working directory), replacing what is there. Returns the bytes written.
///
/// Layout:
/// - `<suite>/proposal-eval.toml`
/// - `<suite>/cases/gNN/case_NNNNN.json`: the fixtures (100 per folder)
/// - model shape: `<suite>/recordings/cases/gNN/case_NNNNN.json`, one fresh recording per case,
///   and `generated/prompts/proposals.md`, the suite-wide source every recording depends on.
///
/// Recordings are written through the runtime's own format (`Recording::to_pretty`) with the
/// runtime's hashes, so they are exactly what `RECORD=1` would leave (minus the fsync per file,
/// which only makes generation slow). The suite is written beside its place and renamed into
/// it, so a reader never sees half a suite.
pub fn generate(suite: &str, count: usize, shape: Shape) -> std::io::Result<u64> {
    use proposal_eval::__internal::draft::{canonical_json, sha256_hex};
    use proposal_eval::__internal::recording::{
        canonical_pretty, hash_content, Interaction, Recording, Sample, Source, FORMAT,
    };
    use std::path::Path;

    let suite = suite.trim_end_matches('/');
    let building = format!("{suite}.building-{}", std::process::id());
    let _ = std::fs::remove_dir_all(&building);
    std::fs::create_dir_all(&building)?;
    let root = Path::new(&building);
    let prompt = if shape != Shape::NoModel {
        std::fs::create_dir_all("generated/prompts")?;
        std::fs::write("generated/prompts/proposals.md", PROMPT)?;
        let (sha256, bytes) = hash_content(PROMPT.as_bytes());
        let config = match shape {
            Shape::Rubric => rubric_config(),
            _ => CONFIG.to_string(),
        };
        std::fs::write(root.join("proposal-eval.toml"), config)?;
        Some(Source {
            path: "generated/prompts/proposals.md".into(),
            sha256,
            bytes,
        })
    } else {
        std::fs::write(root.join("proposal-eval.toml"), NO_MODEL_CONFIG)?;
        None
    };
    let recorded_at = "2025-01-15T10:30:00Z".parse().expect("a date");
    let mut total = 0u64;
    for n in 0..count {
        let case = case_path(n);
        let (input, expected) = match shape {
            Shape::Model | Shape::Rubric => (input(n), proposals(n)),
            Shape::NoModel => (no_model_input(n), no_model_proposals(n)),
        };
        let mut fixture = json!({
            "description": format!("Generated case {n}: update a proposal"),
            "input": input,
            "expected": expected,
        });
        if shape == Shape::Rubric {
            fixture["rubric"] = serde_json::to_value(rubric()).expect("a rubric is JSON");
        }
        let text = canonical_pretty(&fixture);
        let file = root.join(format!("{case}.json"));
        if n % 100 == 0 {
            std::fs::create_dir_all(file.parent().expect("a folder"))?;
        }
        std::fs::write(&file, &text)?;
        total += text.len() as u64;
        let Some(prompt) = &prompt else {
            continue;
        };
        // Format 2: the recording depends on the input (its canonical JSON's hash) and the
        // prompt, not on the fixture file.
        let recording = Recording {
            format: FORMAT,
            case: case.clone(),
            recorded_at,
            sources: vec![prompt.clone()],
            input_sha256: Some(sha256_hex(canonical_json(&input).as_bytes())),
            input: Some(input.clone()),
            samples: vec![Sample {
                interactions: vec![Interaction::new(request(&input), response(n), recorded_at)],
                judge: None,
            }],
            judge: (shape == Shape::Rubric).then(|| judgement(n, &input, recorded_at)),
        };
        let rec_text = recording.to_pretty();
        let rec_file = root.join("recordings").join(format!("{case}.json"));
        if n % 100 == 0 {
            std::fs::create_dir_all(rec_file.parent().expect("a folder"))?;
        }
        std::fs::write(&rec_file, &rec_text)?;
        total += rec_text.len() as u64;
    }
    let _ = std::fs::remove_dir_all(suite);
    match std::fs::rename(&building, suite) {
        Ok(()) => Ok(total),
        // Another process wrote the same suite first (test binaries started side by side).
        Err(_) if Path::new(suite).join("proposal-eval.toml").is_file() => {
            let _ = std::fs::remove_dir_all(&building);
            Ok(total)
        }
        Err(e) => Err(e),
    }
}

/// The suite a test target runs: `BENCH_SUITE` (crate-relative) when set; otherwise a small
/// suite of `shape`, generated when missing, so `cargo test` (and CI) runs the benchmark's code
/// end to end in seconds.
pub fn suite_for_tests(shape: Shape) -> String {
    if let Ok(suite) = std::env::var("BENCH_SUITE") {
        return suite;
    }
    let suite = match shape {
        Shape::Model => "generated/ci-model",
        Shape::NoModel => "generated/ci-no-model",
        Shape::Rubric => "generated/ci-rubric",
    };
    let last = std::path::Path::new(suite).join(format!("{}.json", case_path(CI_CASES - 1)));
    if !last.is_file() {
        generate(suite, CI_CASES, shape).expect("the small suite can be written");
    }
    suite.to_string()
}

/// Cases in the small suites `cargo test` runs.
pub const CI_CASES: usize = 120;
