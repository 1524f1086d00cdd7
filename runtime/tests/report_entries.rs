//! What a case's report entry holds, through a harness run as a user's test binary: its input
//! (referred to in the journal by its fixture's hash, shown on the page from the fixture, capped
//! at 64 KiB) and output, its model calls (the judge's too), its recording's path, the rubric judge's
//! verdicts (given the case's tool calls, `[judge] include_trajectory`) and the trajectory's
//! alignment; a repeated case judged sample by sample, whose entry
//! shows its failing sample's verdicts; and a case whose code returns 30 MB against a
//! different expected, whose failure is capped at 64 KiB on the terminal and in `report.json`.
//!
//! The binary is its own child, as `repeats.rs` is: the parent writes a suite in a temporary
//! crate, copies this binary into that crate's `target/debug/deps/` (so the run's report lands in
//! the crate's own `target/proposal-eval/`) and runs it there with `ENTRIES_CHILD=1`.

use proposal_eval::{Case, Harness, Llm, ModelError};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

/// The size of the big case's answer.
const BIG: usize = 30 * 1024 * 1024;

/// The size of the big case's input's `pad`: over the 64 KiB an input is shown of.
const BIG_INPUT: usize = 70 * 1024;

fn model() -> impl Fn(&Value) -> Result<Value, ModelError> {
    |_request: &Value| {
        Ok(json!({
            "model": "m-1",
            "usage": { "prompt_tokens": 12, "completion_tokens": 3 },
            "answer": "SKU-1 is in stock",
        }))
    }
}

/// The judge (`j-1`, priced: each call $110): the first statement holds, the forbidden one does
/// not; except on the second
/// sample of the repeated case (its second judge call), where the forbidden one holds. The
/// agent case's first statement holds only when its prompt shows the case's tool calls (the
/// suite has `[judge] include_trajectory = true`; `audit` is in no input or output).
fn judge() -> impl Fn(&Value) -> Result<Value, ModelError> {
    static REPEATED_CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    |request: &Value| {
        let prompt = request.to_string();
        let repeated = prompt.contains("SKU-3");
        let dissent =
            repeated && REPEATED_CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 1;
        let sees_trajectory = !prompt.contains("SKU-1") || prompt.contains("audit");
        Ok(
            json!({ "model": "j-1", "usage": { "prompt_tokens": 100, "completion_tokens": 10 }, "verdicts": [
                { "id": 0, "holds": sees_trajectory, "reason": if sees_trajectory { "it names SKU-1" } else { "the prompt shows no tool calls" } },
                { "id": 1, "holds": dissent, "reason": if dissent { "it asks for one" } else { "no password is asked" } },
            ]}),
        )
    }
}

fn agent(case: &Case, llm: &mut Llm) -> proposal_eval::Result<Value> {
    if case.input["big"] == true {
        return Ok(json!({ "answer": "y".repeat(BIG) }));
    }
    let reply = llm.complete(&json!({ "model": "m-1", "sku": case.input["sku"] }))?;
    llm.note_tool_call("lookup", json!({ "sku": case.input["sku"] }));
    llm.note_tool_call("audit", json!({}));
    Ok(json!({ "answer": reply["answer"] }))
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn main() -> std::process::ExitCode {
    if std::env::var_os("ENTRIES_CHILD").is_some() {
        return Harness::new("suite").model(model).judge(judge).run(agent);
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let text = run_suite(root);
    check_terminal(&text);
    let report_file = root.join("target/proposal-eval/report.json");
    let size = std::fs::metadata(&report_file).unwrap().len();
    assert!(size < 512 * 1024, "report.json is {size} bytes");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(&report_file).unwrap()).unwrap();
    let reports = root.join("target/proposal-eval");
    check_journal(&reports, root);
    let page = page_cases(&reports);
    let case = |name: &str| {
        let listed = report["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["case"] == name)
            .unwrap_or_else(|| panic!("{name} in {report:#}"));
        assert!(
            listed.get("story").is_some(),
            "report.json refers to its story"
        );
        page.iter()
            .find(|c| c["case"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} on the page"))
    };
    check_big(&case("big"));
    check_agent(&case("agent"));
    check_repeated(&case("repeated/three"));
    check_totals(&report);
    println!("report_entries: ok");
    std::process::ExitCode::SUCCESS
}

/// Writes the suite in a crate at `root` and runs it there, recording; what it printed.
fn run_suite(root: &Path) -> String {
    write(
        &root.join("suite/proposal-eval.toml"),
        "evaluators = [\"strict\", \"trajectory\", \"rubric\"]\n\
         [judge]\ninclude_trajectory = true\nsamples = 3\n\
         [pricing.\"m-1\"]\ninput_per_mtok = 1000000\noutput_per_mtok = 2000000\n\
         [pricing.\"j-1\"]\ninput_per_mtok = 1000000\noutput_per_mtok = 1000000\n",
    );
    write(
        &root.join("suite/agent.json"),
        &json!({
            "input": { "sku": "SKU-1" },
            "expected": { "answer": "SKU-1 is in stock" },
            "expected_trajectory": {
                "mode": "in_order",
                "steps": [{ "tool": "lookup", "args": { "sku": "SKU-1" } }, { "tool": "recommend" }],
            },
            "rubric": { "required": ["Names the SKU"], "forbidden": ["Asks for a password"] },
        })
        .to_string(),
    );
    // Three samples, all of which must pass: the second fails its rubric.
    write(
        &root.join("suite/repeated/proposal-eval.toml"),
        "evaluators = [\"rubric\"]\n[run]\nrepeat = 3\n[judge]\nsamples = 1\n",
    );
    write(
        &root.join("suite/repeated/three.json"),
        &json!({
            "input": { "sku": "SKU-3" },
            "rubric": { "required": ["Names the SKU"], "forbidden": ["Asks for a password"] },
        })
        .to_string(),
    );
    write(
        &root.join("suite/big.json"),
        &json!({ "input": { "big": true, "pad": "p".repeat(BIG_INPUT) }, "expected": { "answer": "z" } })
            .to_string(),
    );
    write(
        &root.join("Cargo.toml"),
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    write(&root.join("tests/report_entries.rs"), "");
    let deps = root.join("target/debug/deps");
    std::fs::create_dir_all(&deps).unwrap();
    let exe = deps.join(format!(
        "report_entries-0123456789abcdef{}",
        std::env::consts::EXE_SUFFIX
    ));
    std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
    let mut command = Command::new(&exe);
    command
        .args(["--test-threads", "1"])
        .current_dir(root)
        .env("ENTRIES_CHILD", "1")
        .env("CARGO_MANIFEST_DIR", root)
        .env("CARGO_PKG_NAME", "demo")
        .env("NO_COLOR", "1")
        .env("PROPOSAL_EVAL_RECORD", "1");
    for variable in ["RECORD", "CARGO_TARGET_DIR", "NEXTEST_RUN_ID"] {
        command.env_remove(variable);
    }
    let out = command.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "three cases fail");
    text
}

fn check_terminal(text: &str) {
    // The terminal: the big case's failure is cut at 64 KiB, and says how much was left out.
    assert!(
        text.len() < 200 * 1024,
        "the terminal got {} bytes",
        text.len()
    );
    let cut = text
        .lines()
        .find(|l| l.starts_with("… ") && l.ends_with(" bytes left out"))
        .unwrap_or_else(|| panic!("no `… N bytes left out` line in:\n{}", &text[..4096]));
    let left_out: usize = cut
        .trim_start_matches("… ")
        .trim_end_matches(" bytes left out")
        .parse()
        .unwrap();
    assert!(left_out > BIG - 64 * 1024, "{cut}");
}

/// The journal holds each case's story once, its input not copied: in place of `input`, the
/// SHA-256 of the fixture file as the run read it. An output that is the fixture's `expected`
/// (the agent case's) is not copied either; one that differs (the big case's) is.
fn check_journal(reports: &Path, root: &Path) {
    use proposal_eval::__internal::recording::hash_content;
    let runs = std::fs::read_dir(reports.join("runs")).unwrap();
    let journal = runs
        .map(|r| r.unwrap().path().join("journal.jsonl"))
        .next()
        .unwrap();
    let text = std::fs::read_to_string(journal).unwrap();
    for (case, fixture) in [
        ("agent", "agent"),
        ("big", "big"),
        ("repeated/three", "repeated/three"),
    ] {
        let line = text
            .lines()
            .find(|l| l.contains(&format!("\"case\":\"{case}\"")))
            .unwrap_or_else(|| panic!("{case} in {text}"));
        let entry: Value = serde_json::from_str(line).unwrap();
        assert!(entry.get("input").is_none(), "{case}: no copy of the input");
        let bytes = std::fs::read(root.join(format!("suite/{fixture}.json"))).unwrap();
        assert_eq!(entry["input_sha256"], hash_content(&bytes).0, "{case}");
        let referred = case == "agent";
        assert_eq!(
            entry.get("output").is_none(),
            referred,
            "{case}: {line:.300}"
        );
        assert_eq!(
            entry.get("output_is_expected").is_some(),
            referred,
            "{case}"
        );
    }
}

/// The cases as the page holds them (a report of three cases is embedded whole, with every
/// story), their inputs read from their fixtures.
fn page_cases(reports: &Path) -> Vec<Value> {
    let html = std::fs::read_to_string(reports.join("report.html")).unwrap();
    let open = "<script type=\"application/json\" id=\"report-summary\">";
    let start = html.find(open).expect("the embedded report") + open.len();
    let end = start + html[start..].find("</script>").unwrap();
    let report: Value = serde_json::from_str(&html[start..end]).unwrap();
    let cases = report["cases"].as_array().unwrap().clone();
    assert!(
        cases.iter().all(|c| c.get("story").is_none()),
        "every story embedded"
    );
    cases
}

/// The big case: its failure and its output capped, saying how much was left out.
fn check_big(big: &Value) {
    let failure = big["failure"].as_str().unwrap();
    assert!(failure.len() < 64 * 1024 + 64, "{}", failure.len());
    assert!(failure.contains("\n… ") && failure.ends_with(" bytes left out"));
    let output = big["output"]
        .as_str()
        .expect("the output, capped to a string");
    assert!(
        output.starts_with("{\"answer\":\"yyyy"),
        "{}",
        &output[..40]
    );
    assert!(
        output.ends_with(&format!("\n… {} bytes left out", BIG + 13 - 64 * 1024)),
        "{}",
        &output[output.len() - 40..]
    );
    // The input, read from the fixture, capped as the output is.
    let input = big["input"]
        .as_str()
        .expect("the input, capped to a string");
    assert!(
        input.starts_with("{\"big\":true,\"pad\":\"pppp"),
        "{}",
        &input[..40]
    );
    let whole = "{\"big\":true,\"pad\":\"\"}".len() + BIG_INPUT;
    assert!(
        input.ends_with(&format!("\n… {} bytes left out", whole - 64 * 1024)),
        "{}",
        &input[input.len() - 40..]
    );
    assert!(
        big.get("calls").is_none(),
        "no model call: {}",
        big["calls"]
    );
}

/// The agent case: input, output, calls, recording path, verdicts and alignment.
fn check_agent(agent: &Value) {
    assert_eq!(agent["input"], json!({ "sku": "SKU-1" }));
    assert_eq!(agent["output"], json!({ "answer": "SKU-1 is in stock" }));
    assert_eq!(agent["recording_path"], "suite/recordings/agent.json");
    let calls = agent["calls"].as_array().unwrap();
    // The agent's call, then the judge's three (`[judge] samples = 3`).
    assert_eq!(calls.len(), 4, "{calls:?}");
    assert_eq!(calls[0]["kind"], "complete");
    assert_eq!(calls[0]["model"], "m-1");
    assert_eq!(calls[0]["input_tokens"], 12);
    assert_eq!(calls[0]["output_tokens"], 3);
    assert_eq!(calls[0]["cost_usd"], 12.0 + 6.0);
    assert!(calls[0]["latency_ms"].as_f64().unwrap() >= 0.0);
    for judge in &calls[1..] {
        assert_eq!(judge["kind"], "judge");
        assert_eq!(judge["model"], "j-1");
        assert_eq!(judge["cost_usd"], 110.0);
    }
    // The case's usage counts the judge's calls and cost, split agent / judge.
    assert_eq!(agent["usage"]["calls"], 4, "{:#}", agent["usage"]);
    assert_eq!(agent["usage"]["cost_usd"], 18.0 + 330.0);
    assert_eq!(
        agent["usage"]["agent"],
        json!({ "calls": 1, "input_tokens": 12, "output_tokens": 3, "cost_usd": 18.0 })
    );
    assert_eq!(
        agent["usage"]["judge"],
        json!({ "calls": 3, "input_tokens": 300, "output_tokens": 30, "cost_usd": 330.0 })
    );
    let evaluator = |name: &str| {
        agent["evaluators"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["evaluator"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} in {agent:#}"))
    };
    assert_eq!(
        evaluator("rubric")["verdicts"],
        json!([
            { "statement": "Names the SKU", "holds": true, "passed": true,
              "votes": { "holds": 3, "does_not_hold": 0 }, "reason": "it names SKU-1", "advisory": false },
            { "statement": "must not: Asks for a password", "holds": false, "passed": true,
              "votes": { "holds": 0, "does_not_hold": 3 }, "reason": "no password is asked", "advisory": false },
        ])
    );
    assert_eq!(
        evaluator("trajectory")["alignment"],
        json!([
            { "step": { "tool": "lookup", "args": { "sku": "SKU-1" } }, "call": 0, "status": "matched", "mismatches": [] },
            { "step": { "tool": "recommend" }, "call": null, "status": "missing", "mismatches": [] },
        ])
    );
    assert!(evaluator("strict").get("verdicts").is_none());
}

/// The repeated case: each sample judged (three judge calls), the second failing its rubric;
/// its entry shows that sample's evaluators, so its rubric verdicts are that sample's.
fn check_repeated(repeated: &Value) {
    assert_eq!(
        repeated["samples"]["verdicts"],
        json!([true, false, true]),
        "{repeated:#}"
    );
    let judged = repeated["calls"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "judge")
        .count();
    assert_eq!(judged, 3, "{repeated:#}");
    let failure = repeated["failure"].as_str().unwrap();
    assert!(
        failure.contains("--- sample 2 of 3:\nsuite/repeated/three: rubric FAILED (score 0.50)"),
        "{failure}"
    );
    assert_eq!(
        repeated["evaluators"][0]["verdicts"][1],
        json!({ "statement": "must not: Asks for a password", "holds": true, "passed": false,
                "samples": [
                    { "holds": false, "passed": true },
                    { "holds": true, "passed": false },
                    { "holds": false, "passed": true },
                ],
                "reason": "it asks for one", "advisory": false }),
        "{repeated:#}"
    );
}

/// The suite's totals count the judge's calls and cost apart from the agent's: the agent case's
/// 1 + 3, the repeated case's 3 + 3 (a call of its code and one of the judge per sample). How
/// `compare` writes these totals: cli/src/comparison/confidence.rs,
/// `the_judges_calls_and_cost_apart_from_the_agents`.
fn check_totals(report: &Value) {
    let usage = &report["totals"]["usage"];
    assert_eq!(usage["calls"], 4 + 6, "{usage:#}");
    assert_eq!(usage["agent"]["calls"], 4, "{usage:#}");
    assert_eq!(usage["judge"]["calls"], 6, "{usage:#}");
    assert_eq!(usage["judge"]["cost_usd"], 660.0, "{usage:#}");
    assert_eq!(usage["cost_usd"], 4.0 * 18.0 + 660.0, "{usage:#}");
    // The tokens `compare` writes for each share: 60 of the agent's, 660 of the judge's.
    let tokens = |share: &Value| {
        share["input_tokens"].as_u64().unwrap() + share["output_tokens"].as_u64().unwrap()
    };
    assert_eq!(tokens(&usage["agent"]), 60, "{usage:#}");
    assert_eq!(tokens(&usage["judge"]), 660, "{usage:#}");
    assert_eq!(usage["agent"]["cost_usd"], 72.0, "{usage:#}");
}
