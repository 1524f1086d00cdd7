//! Writes a generated suite: `generate <suite folder> <count>`, run from `bench/suite-scale`.
//!
//! Layout (crate-relative, as the runtime sees it):
//! - `<suite>/proposal-eval.toml`
//! - `<suite>/cases/gNN/case_NNNNN.json`: the fixtures (100 per folder)
//! - `<suite>/recordings/cases/gNN/case_NNNNN.json`: one fresh recording per case
//! - `generated/prompts/proposals.md`: the suite-wide source every recording depends on
//!
//! Recordings are written through the runtime's own format (`Recording::to_pretty`) with the
//! runtime's hashes, so they are exactly what `RECORD=1` would leave (minus the fsync per file,
//! which only makes generation slow).

use proposal_eval::__internal::draft::{canonical_json, sha256_hex};
use proposal_eval::__internal::recording::{
    hash_content, Interaction, Recording, Sample, Source, FORMAT,
};
use serde_json::json;
use std::path::Path;
use suite_scale_bench::*;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (suite, count) = match &args[..] {
        [_, suite, count] => (suite.clone(), count.parse::<usize>().expect("count")),
        _ => {
            eprintln!("usage: generate <suite folder, crate-relative> <count>");
            std::process::exit(2);
        }
    };
    let suite = suite.trim_end_matches('/').to_string();
    let _ = std::fs::remove_dir_all(&suite);
    std::fs::create_dir_all(&suite).unwrap();
    std::fs::create_dir_all("generated/prompts").unwrap();
    std::fs::write("generated/prompts/proposals.md", PROMPT).unwrap();
    let (prompt_sha, prompt_bytes) = hash_content(PROMPT.as_bytes());
    let prompt = Source {
        path: "generated/prompts/proposals.md".into(),
        sha256: prompt_sha,
        bytes: prompt_bytes,
    };
    std::fs::write(Path::new(&suite).join("proposal-eval.toml"), CONFIG).unwrap();
    let recorded_at = "2025-01-15T10:30:00Z".parse().unwrap();
    let mut total = 0u64;
    for n in 0..count {
        let case = format!("cases/g{:02}/case_{n:05}", n / 100);
        let input = input(n);
        let fixture = json!({
            "description": format!("Generated case {n}: update a proposal's quantities"),
            "input": input,
            "expected": proposals(n),
        });
        let text = proposal_eval::__internal::recording::canonical_pretty(&fixture);
        let file = Path::new(&suite).join(format!("{case}.json"));
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, &text).unwrap();
        // Format 2: the recording depends on the input (its canonical JSON's hash) and the
        // prompt, not on the fixture file.
        let input_sha256 = sha256_hex(canonical_json(&input).as_bytes());
        let recording = Recording {
            format: FORMAT,
            case: case.clone(),
            recorded_at,
            sources: vec![prompt.clone()],
            input_sha256: Some(input_sha256),
            input: Some(input.clone()),
            samples: vec![Sample {
                interactions: vec![Interaction {
                    request: request(&input),
                    response: response(n),
                    recorded_at,
                }],
            }],
        };
        let rec_text = recording.to_pretty();
        let rec_file = Path::new(&suite)
            .join("recordings")
            .join(format!("{case}.json"));
        std::fs::create_dir_all(rec_file.parent().unwrap()).unwrap();
        std::fs::write(&rec_file, &rec_text).unwrap();
        total += (text.len() + rec_text.len()) as u64;
    }
    eprintln!(
        "wrote {count} fixtures and {count} recordings to {suite} ({:.1} MB)",
        total as f64 / 1e6
    );
}
