//! `cargo proposal-eval judge`: recorded rubric verdicts against human labels.

use crate::common::*;
use serde_json::json;

const H0: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// A recording of the case `case` whose judge part holds these verdicts (statement, holds).
fn recording(case: &str, verdicts: &[(&str, bool)]) -> String {
    let verdicts: Vec<_> = verdicts
        .iter()
        .enumerate()
        .map(|(id, (statement, holds))| {
            json!({"id": id, "statement": statement, "holds": holds, "reason": format!("reason {id}")})
        })
        .collect();
    json!({
        "format": 4,
        "case": case,
        "recorded_at": "2026-01-01T00:00:00Z",
        "sources": [],
        "input_sha256": H0,
        "samples": [{"interactions": []}],
        "judge": {
            "key_sha256": H0,
            "parts": {"rubric_sha256": H0, "output_sha256": H0, "input_sha256": H0,
                      "prompt_sha256": H0, "model": "judge-1", "temperature": 0.0, "samples": 1},
            "recorded_at": "2026-01-01T00:00:00Z",
            "calls": [],
            "verdicts": verdicts,
        }
    })
    .to_string()
}

fn labelled(env: &Env, labels: &[(&str, &str, bool)]) {
    let lines: String = labels
        .iter()
        .map(|(case, statement, holds)| {
            format!(
                "{}\n",
                json!({"case": case, "statement": statement, "holds": holds})
            )
        })
        .collect();
    env.write("suite/judge-labels.jsonl", &lines);
}

#[test]
fn judge_prints_agreement_kappa_and_disagreements() {
    let env = Env::new();
    env.write(
        "suite/proposal-eval.toml",
        "[judge]\nmodel = \"judge-1\"\nmin_agreement = 0.8\nmin_labels = 3\n",
    );
    env.write("Cargo.toml", "[package]\nname = \"x\"\n");
    env.write(
        "suite/a.json",
        "{\"rubric\": {\"required\": [\"A\"], \"forbidden\": [\"B\"]}}",
    );
    env.write("suite/b.json", "{\"rubric\": {\"required\": [\"C\"]}}");
    env.write(
        "suite/recordings/a.json",
        &recording("a", &[("A", true), ("B", false)]),
    );
    env.write("suite/recordings/b.json", &recording("b", &[("C", true)]));
    // Two agree, one disagrees, one names a statement its case does not have.
    labelled(
        &env,
        &[
            ("a", "A", true),
            ("a", "B", true),
            ("b", "C", true),
            ("b", "D", true),
        ],
    );
    let out = env.run(&["judge", "suite"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // p_o = 2/3; judge says true 2/3, people 3/3; p_e = 2/3; kappa = 0.
    assert_eq!(
        out.stdout,
        "suite (suite)\n  \
         4 label(s), 3 with a recorded verdict; agreement 66.7 %; Cohen's kappa 0.00\n  \
         disagreements:\n    \
         a: \"B\": labelled holds, the judge says it does not hold (reason 1)\n  \
         labels that match nothing (not counted):\n    \
         suite/judge-labels.jsonl:4: \"D\" is no statement of b; the closest statement of that case: \"C\"\n  \
         rubric failures are advisory (tests pass): the judge agrees with the human labels at Cohen's kappa 0.00 on 3 label(s), below [judge] min_agreement = 0.8; label the judge's verdicts in suite/judge-labels.jsonl; `cargo proposal-eval judge` shows the agreement\n"
    );

    // Labels that all agree: kappa 1, and failures fail tests.
    labelled(
        &env,
        &[("a", "A", true), ("a", "B", false), ("b", "C", true)],
    );
    let out = env.run(&["judge", "suite"]);
    assert!(
        out.stdout.contains("3 label(s), 3 with a recorded verdict; agreement 100.0 %; Cohen's kappa 1.00\n  rubric failures fail tests: kappa reaches [judge] min_agreement = 0.8 on at least min_labels = 3 label(s)\n"),
        "{}",
        out.stdout
    );
}

/// A recording of `case` with one sample per list of `samples`, each keeping its own judge part
/// (`samples[k].judge`, as a repeated case is recorded).
fn repeated_recording(case: &str, samples: &[&[(&str, bool)]]) -> String {
    let samples: Vec<_> = samples
        .iter()
        .enumerate()
        .map(|(k, verdicts)| {
            let mut one: serde_json::Value =
                serde_json::from_str(&recording(case, verdicts)).unwrap();
            for v in one["judge"]["verdicts"].as_array_mut().unwrap() {
                v["reason"] = json!(format!("sample {} says {}", k + 1, v["holds"]));
            }
            json!({"interactions": [], "judge": one["judge"]})
        })
        .collect();
    // The recording of one sample, its judge part moved into the samples.
    let mut top: serde_json::Value = serde_json::from_str(&recording(case, &[])).unwrap();
    top.as_object_mut().unwrap().remove("judge");
    top["samples"] = json!(samples);
    top.to_string()
}

/// A case recorded with `repeat`: each label is matched with the majority of the samples'
/// verdicts (the disagreement names the sample whose reason it shows); a tie is no verdict.
#[test]
fn judge_matches_a_repeated_case_by_the_majority_of_its_samples() {
    let env = Env::new();
    env.write("Cargo.toml", "[package]\nname = \"x\"\n");
    env.write(
        "suite/proposal-eval.toml",
        "[run]\nrepeat = 3\n[judge]\nmodel = \"judge-1\"\n",
    );
    env.write(
        "suite/a.json",
        "{\"rubric\": {\"required\": [\"A\", \"B\"]}}",
    );
    env.write("suite/b.json", "{\"rubric\": {\"required\": [\"C\"]}}");
    env.write(
        "suite/recordings/a.json",
        &repeated_recording(
            "a",
            &[
                &[("A", true), ("B", false)],
                &[("A", true), ("B", false)],
                &[("A", false), ("B", true)],
            ],
        ),
    );
    // Two samples, split: no verdict on C.
    env.write(
        "suite/recordings/b.json",
        &repeated_recording("b", &[&[("C", true)], &[("C", false)]]),
    );
    labelled(
        &env,
        &[("a", "A", true), ("a", "B", true), ("b", "C", true)],
    );
    let out = env.run(&["judge", "suite"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "suite (suite)\n  \
         3 label(s), 2 with a recorded verdict; agreement 50.0 %; Cohen's kappa 0.00\n  \
         disagreements:\n    \
         a: \"B\": labelled holds, the judge says it does not hold (sample 1 of 3: sample 1 says false)\n  \
         labels without a recorded verdict (record the case's verdicts to count them):\n    \
         suite/judge-labels.jsonl:3: b: \"C\"\n  \
         rubric failures fail tests (no [judge] min_agreement)\n"
    );
}

/// A label with a mistyped case and one with a mistyped statement: both named by their lines,
/// each with the closest case or statement; neither counts.
#[test]
fn judge_names_labels_that_match_nothing_by_their_lines() {
    let env = Env::new();
    env.write("Cargo.toml", "[package]\nname = \"x\"\n");
    env.write("suite/proposal-eval.toml", "[judge]\nmodel = \"judge-1\"\n");
    env.write(
        "suite/drafts/eval_a.json",
        "{\"rubric\": {\"required\": [\"Recommends one laptop\"], \"forbidden\": [\"Recommends a discontinued SKU\"]}}",
    );
    env.write(
        "suite/recordings/drafts/eval_a.json",
        &recording(
            "drafts/eval_a",
            &[
                ("Recommends one laptop", true),
                ("Recommends a discontinued SKU", false),
            ],
        ),
    );
    labelled(
        &env,
        &[
            ("drafts/eval_a", "Recommends one laptop", true),
            ("drafts/eval_b", "Recommends one laptop", true),
            ("drafts/eval_a", "Recommends a discontinued SKUs", false),
        ],
    );
    let out = env.run(&["judge", "suite"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains(
            "  labels that match nothing (not counted):\n    \
             suite/judge-labels.jsonl:2: \"drafts/eval_b\" is no case with a rubric; the closest case: \"drafts/eval_a\"\n    \
             suite/judge-labels.jsonl:3: \"Recommends a discontinued SKUs\" is no statement of drafts/eval_a; the closest statement of that case: \"Recommends a discontinued SKU\"\n"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("3 label(s), 1 with a recorded verdict"),
        "{}",
        out.stdout
    );
}

#[test]
fn judge_names_a_bad_label_line_and_a_suite_without_labels() {
    let env = Env::new();
    env.write("Cargo.toml", "[package]\nname = \"x\"\n");
    env.write("suite/proposal-eval.toml", "");
    // A suite without a rubric is not told to write labels.
    env.write("suite/plain.json", "{\"input\": 1, \"expected\": 1}");
    let out = env.run(&["judge", "suite"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "suite (suite)\n  no rubric: no case of this suite is graded by the judge\n"
    );
    env.write("suite/a.json", "{\"rubric\": {\"required\": [\"A\"]}}");
    let out = env.run(&["judge", "suite"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("no labels: write suite/judge-labels.jsonl to calibrate the judge\n  rubric failures fail tests (no [judge] min_agreement)"),
        "{}",
        out.stdout
    );
    // Rubrics that the suite's evaluators do not grade: no advice to label them either.
    env.write("suite/proposal-eval.toml", "evaluators = [\"strict\"]\n");
    let out = env.run(&["judge", "suite"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "suite (suite)\n  the rubric evaluator is off (evaluators in proposal-eval.toml): no case of this suite is graded by the judge\n"
    );
    env.write("suite/proposal-eval.toml", "");
    env.write(
        "suite/judge-labels.jsonl",
        "{\"case\": \"a\", \"statement\": \"A\"}\n",
    );
    let out = env.run(&["judge", "suite"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stdout.contains("judge-labels.jsonl:1:"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("missing field `holds`"),
        "{}",
        out.stdout
    );
}
