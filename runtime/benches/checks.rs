//! What checks cost a replay: 1,000 cases run as their tests run them (fixture read and parsed,
//! recording read and checked for staleness, replay with request equality, the evaluators),
//! once with the strict comparison alone and once with the strict comparison and, in each
//! fixture, five checks (`one_of` over a wildcard, `icontains`, `regex`, `not_contains`,
//! `max_length`) and a `json_schema` check against a schema file in `.schemas/`. The output is
//! the same on both sides: a support agent's tool call and its reply. The bar: the checks side
//! takes at most 1.2 times the strict side.
//!
//! `cargo bench -p proposal-eval --features json-schema --bench checks`; `CHECKS_ROUNDS=N`
//! (default 20) rounds, each running both sides back to back, the order alternating, the ratio
//! taken within the round (this machine's speed swings from one second to the next; a round's
//! two sides share their second). Prints the medians and the ratio's median and quartiles.
//!
//! Measured on 2 cores shared with five other builds (load 8-11), medians of the per-round
//! ratio:
//! - first version: 2.07x (10 rounds): each fixture's regex compiled again, and its clone's
//!   lazy DFA built again, at every case; the names of a schema error's place made for every
//!   case.
//! - regexes compiled once per process and shared (`Arc`), not cloned; a schema check's place
//!   named only for an error; schemas looked up by the file as written; `is_valid` before
//!   collecting errors: 1.25x, 1.21x, 1.22x, 1.23x (10, 40, 40, 100 rounds).
//! - a path without wildcards walked without building its location: 1.198x, 1.174x, 1.189x
//!   (100 rounds each; quartiles 1.07-1.35x; strict side 33-42 ms, checks side 40-52 ms per
//!   1,000 cases). At the bar, with the machine's noise as wide as the margin.

use proposal_eval::__internal::case_run::OpenSuite;
use proposal_eval::__internal::recording::{input_digest, Interaction, Recording, Sample};
use proposal_eval::{Case, Llm};
use serde_json::{json, Value};
use std::path::Path;

const CASES: usize = 1000;

fn input(n: usize) -> Value {
    json!({ "message": format!("Hi, where is my order A-{:04}? It has been a week.", n % 10000), "orders": { format!("A-{:04}", n % 10000): { "status": "shipped", "shipped_on": "2025-01-10" } } })
}

/// What the agent returns: a tool call, then its reply.
fn output(n: usize) -> Value {
    let order = format!("A-{:04}", n % 10000);
    json!([
        { "type": "tool_call", "name": "lookup_order", "arguments": { "order_id": order } },
        { "type": "reply", "text": format!("Order {order} is shipped: it left our warehouse on 2025-01-10.") },
    ])
}

const SCHEMA: &str = r#"{
  "type": "object",
  "required": ["type", "name", "arguments"],
  "properties": {
    "type": { "const": "tool_call" },
    "name": { "enum": ["lookup_order", "cancel_order"] },
    "arguments": {
      "type": "object",
      "required": ["order_id"],
      "properties": { "order_id": { "type": "string", "pattern": "^[A-Z]-\\d{4}$" } }
    }
  }
}"#;

/// A suite folder `name` under `root` of `CASES` cases, each with its recording; with five
/// checks and a schema in each fixture when `checked`.
fn write_suite(root: &Path, name: &str, checked: bool) {
    let dir = root.join(name);
    std::fs::create_dir_all(dir.join("cases")).unwrap();
    std::fs::create_dir_all(dir.join("recordings/cases")).unwrap();
    let config = if checked {
        std::fs::create_dir_all(dir.join(".schemas")).unwrap();
        std::fs::write(dir.join(".schemas/tool_call.json"), SCHEMA).unwrap();
        "evaluators = [\"strict\", \"checks\"]\n"
    } else {
        "evaluators = [\"strict\"]\n"
    };
    std::fs::write(dir.join("proposal-eval.toml"), config).unwrap();
    let at = "2025-01-15T10:30:00Z".parse().unwrap();
    for n in 0..CASES {
        let (input, output) = (input(n), output(n));
        let mut fixture =
            json!({ "description": format!("case {n}"), "input": input, "expected": output });
        if checked {
            fixture["checks"] = json!([
                { "path": "[*].type", "one_of": ["tool_call", "reply"] },
                { "path": "[1].text", "icontains": "SHIPPED" },
                { "path": "[1].text", "regex": "\\d{4}-\\d{2}-\\d{2}" },
                { "path": "[1].text", "not_contains": "sorry" },
                { "path": "[1].text", "max_length": 120 },
                { "path": "[0]", "json_schema": ".schemas/tool_call.json" },
            ]);
        }
        let case = format!("cases/c{n:05}");
        std::fs::write(dir.join(format!("{case}.json")), fixture.to_string()).unwrap();
        Recording {
            format: 2,
            case: case.clone(),
            recorded_at: at,
            sources: Vec::new(),
            input_sha256: Some(input_digest(&input).0),
            input: Some(input.clone()),
            samples: vec![Sample {
                interactions: vec![Interaction::new(
                    request(&input),
                    json!({ "actions": output }),
                    at,
                )],
                judge: None,
            }],
            judge: None,
        }
        .write(&dir.join("recordings").join(format!("{case}.json")))
        .unwrap();
    }
}

fn request(input: &Value) -> Value {
    json!({ "model": "gpt-4o-mini", "temperature": 0, "messages": [{ "role": "user", "content": input["message"] }] })
}

/// The code under test: asks the model, returns the actions of its answer.
fn agent(case: &Case, llm: &mut Llm) -> proposal_eval::Result<Value> {
    let mut reply = llm.complete(&request(&case.input))?;
    Ok(reply["actions"].take())
}

fn run_all(suite: &OpenSuite) {
    for n in 0..CASES {
        if let Err(failure) = suite.run(&format!("cases/c{n:05}.json"), agent) {
            panic!("case {n} failed: {failure}");
        }
    }
}

fn main() {
    let rounds: usize = std::env::var("CHECKS_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(20);
    let root = tempfile::tempdir().unwrap();
    write_suite(root.path(), "strict", false);
    write_suite(root.path(), "checked", true);
    let strict = OpenSuite::open(root.path(), Path::new("strict"));
    let checked = OpenSuite::open(root.path(), Path::new("checked"));
    let time = |suite: &OpenSuite| {
        let start = std::time::Instant::now();
        run_all(suite);
        start.elapsed().as_secs_f64() * 1e3
    };
    for _ in 0..2 {
        time(&strict);
        time(&checked);
    }
    let rows: Vec<(f64, f64)> = (0..rounds)
        .map(|r| {
            if r % 2 == 0 {
                let s = time(&strict);
                (s, time(&checked))
            } else {
                let c = time(&checked);
                (time(&strict), c)
            }
        })
        .collect();
    let quantile = |mut v: Vec<f64>, q: f64| {
        v.sort_by(f64::total_cmp);
        v[((v.len() - 1) as f64 * q).round() as usize]
    };
    let ratios: Vec<f64> = rows.iter().map(|(s, c)| c / s).collect();
    println!(
        "{rounds} rounds of {CASES} cases: strict {:.1} ms, strict + 5 checks + a schema {:.1} ms (medians); ratio median {:.3}x, quartiles {:.3}-{:.3}x",
        quantile(rows.iter().map(|r| r.0).collect(), 0.5),
        quantile(rows.iter().map(|r| r.1).collect(), 0.5),
        quantile(ratios.clone(), 0.5),
        quantile(ratios.clone(), 0.25),
        quantile(ratios, 0.75),
    );
}
