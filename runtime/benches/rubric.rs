//! What a rubric costs a replay: 1,000 cases run as their tests run them (fixture read and
//! parsed, recording read and checked for staleness, replay with request equality, the strict
//! evaluator), once with strict only and once with a rubric of three statements whose verdicts
//! are recorded (the judge part read, its key computed from the statements, output, input and
//! template, the verdicts graded). No judge is called: the rubric side replays. The bar: the
//! rubric side takes at most 1.2 times the strict side.
//!
//! Two shapes of recording, each a pair of suites (`Shape`):
//! - `replay_1k` (minimal): the agent's request is 4 short keys and its answer the proposals
//!   alone (a 2.0 KB recording), so the judge part (about as large) weighs as much as the
//!   agent's part; the judge's answer repeats each statement.
//! - `replay_1k_agent`: the agent asks as `examples/payments-agent` asks (its system prompt and
//!   output format, context, a tool, metadata); the judge answers a chat completion with usage in
//!   the shape the built-in prompt asks for, its latency kept.
//!
//! `cargo bench -p proposal-eval --bench rubric -- --warm-up-time 1 --measurement-time 10`
//!
//! `RUBRIC_PAIRED=40 cargo bench -p proposal-eval --bench rubric` measures the ratio instead in
//! rounds that run both sides back to back (the order alternating) and prints the median and
//! quartiles of the per-round ratio, for each shape. On this 2-core machine a side's time
//! swings by 30 % from one second to the next (criterion's three runs of one binary's strict
//! side: 32, 35 and 55 ms), which criterion, measuring one side and then the other, puts into
//! the ratio; a round's two sides share their second. Checked with both sides on the strict
//! suite: 1.002x (quartiles 0.97-1.02).
//!
//! Measured once (2 cores shared with other builds, so noisy): strict 135 ms, strict+rubric
//! 249 ms per 1,000 cases: 1.84x, over the bar.
//!
//! After the judge key stopped making the output and input canonical twice (and canonical JSON
//! stopped copying): `engine/benches/rounds.py` alternating a build from before and after, 3
//! rounds of `--measurement-time 3`, load 5-9 on 2 cores: the ratio's median went 2.90x ->
//! 2.46x (range 1.19-2.66x): still over the bar, and the machine too loaded to trust the size of
//! the gain. A profile of the rubric side after it: no single hot spot; file reads (kernel),
//! allocation, JSON string parsing (`parse_str`, `skip_to_escape`: the judge request's whole
//! prompt in each recording) and SHA-256. The next step is to read the judge part's `calls`
//! without building them on replay (only the key and the verdicts are used).
//!
//! After that step (issue 23): the replay reads the judge part apart, its calls' requests and
//! responses skipped (`IgnoredAny`), not built, only their latency and usage kept; the key is
//! hashed from its parts' texts as they are fed to the hash, and the parts' own hashes are made
//! only when the key differs (to name what changed) or a judgement is recorded; the trajectory
//! is made into JSON only with `[judge] include_trajectory`; SHA-256 in hex without a `format!`
//! per byte; canonical JSON does not sort (or list) the keys of an object that are sorted
//! already (serde_json's default map). `rounds.py 4 strict before=... after=...`, `MT=3`, load
//! 2.7-3.5 (median 3.3) on 2 cores: before 2.04x (range 1.77-2.61; rubric side 70.4 ms),
//! after 1.54x (range 1.39-1.56; rubric side 52.6 ms, strict 34.1 ms). Then the built-in
//! template escaped as JSON once per process for the key (it was 3% of the rubric side): 4
//! rounds of the three builds, load 1.0-3.2 (median 1.4): before 2.24x (2.08-2.28), without it
//! 1.53x (1.36-1.66), with it 1.46x (1.15-1.53; rubric side 55.9 ms, strict 36.6 ms). Still
//! over the bar. A
//! profile of the rubric side after it (perf, DWARF call graphs, compared with the strict
//! side's): reading the recording is about a third of the rubric side, twice the strict side's
//! (the file is larger: the judge request holds the whole prompt, pretty JSON escaped in a
//! string, scanned escape by escape even when skipped: `ignore_str`, `skip_to_escape`, 6%);
//! the key is 13% (making the output, the input and the rubric canonical: 6%; SHA-256 of them
//! and of the template: 7%). What is left is the format: the prompt written in each recording
//! (a replay cannot skip it without scanning it), and a key over the whole output.
//!
//! Then the format (recording format 5): a judge call keeps its request's SHA-256, not the
//! prompt (the recording here: 4.3 KB, about half of it the judge part, against 2.0 KB on the
//! strict side); the key is the SHA-256 of its parts, each large part hashed once from a reused
//! buffer (no text built per part, the template's hash once per process) and the parts written
//! straight in sorted order; a replay skips the parts, the times and the verdicts' statements,
//! and makes its failure texts only on failure. `rounds.py 5 strict before=... after=...`,
//! `MT=3`, before = main at 302f6a8, load 1.3-3.6 (median 2.0) on 2 cores shared with two other
//! builds: before 1.60x (range 1.47-1.96; rubric side 51.8 ms, strict 32.4 ms), after 1.31x
//! (range 0.83-1.40; rubric side 43.4 ms, strict 34.0 ms). An earlier 3-round run of the format
//! change alone, load 2.5-3.0: before 1.47x, after 1.23x (1.20-1.43). A second 4-round run of
//! the final build, load 2.4-2.7, while other helpers ran benches: before 1.48x (1.38-1.55),
//! after 1.43x (1.16-1.68): the machine's noise is as large as the gain, so the profile is the
//! firmer measure. perf (DWARF call graphs) of the rubric side, before and after, each function
//! against `LoadedCase::load` in the same run (the fixtures' read, alike in both builds): the
//! judge step fell 0.79 -> 0.55 of it (-30%), the recording's read 2.43 -> 1.93 (the strict
//! side's read is 1.52: the judge part's share of the read fell by more than half); the whole
//! rubric side came to about 1.27x the strict side (1.55x before). Still over the bar. What is
//! left: reading the judge part (as large as the agent's part here: hashes, the verdicts with
//! their statements, the judge's answer, which in this bench repeats the statements), about 11%
//! of the strict side; the judge step, 14% (the output's canonical JSON and its SHA-256: two
//! thirds of it; the key of the parts: a sixth; grading: a tenth). Both are what the verdicts
//! stand on: the answer recorded, and a key over the whole output.
//!
//! Merged with judging each sample of a repeated case (the lead, 2026-11-27): `rounds.py 4
//! strict`, `MT=3`, load 1.0, main after the merge against the format-5 branch alone: 1.05x
//! (range 0.91-1.37) and 1.80x (1.08-2.13); three single criterion runs of main: 1.60x, 1.71x,
//! 1.24x. The machine's noise is as large as what is measured; the profile's 1.27x is the
//! number to go by.
//!
//! Paired rounds (2026-11-27, lead; `RUBRIC_PAIRED`, 40-50 rounds, the machine otherwise idle):
//! main at c5f7b19, minimal shape: 1.35x, 1.37x, 1.38x, 1.40x (quartiles about 1.26-1.45); a
//! build that skips the key altogether (an experiment, not committed): 1.21x, 1.24x. perf of a
//! paired run, each side's samples counted apart: the rubric side's extra is 0.38 of the strict
//! side, of which the key 0.12 (the output's and input's canonical JSON and SHA-256: 0.07),
//! reading the judge part 0.09-0.11, the rest (grading, the fixture's rubric, verdict entries,
//! dropping) about 0.1. Then the key made cheaper: canonical JSON written by hand
//! (`proposal_eval_engine::json::write_canonical`, byte for byte serde_json's, a proptest says
//! so), the key of the parts written by hand, one buffer per thread, and the input's hash taken
//! from the recording's staleness check (the same SHA-256) instead of made again. Minimal
//! shape: 1.30x (quartiles 1.26-1.35), 1.30x (1.27-1.33); agent shape: 1.25x (1.22-1.31), 1.24x
//! (1.20-1.28). perf of the agent shape after it: the extra is 0.26 of the strict side: the key
//! 0.08, reading the judge part 0.08 (its answer skipped escape by escape), the rest 0.1. Over
//! the bar in both shapes.
//!
//! 2026-11-27, session 14 (lead): the key made from the parts' digests on the stack (no
//! `KeyParts` strings), the fixture's rubric borrowed, grading moving its texts. Paired, the
//! build before and after in one sitting, 40 rounds each: minimal 1.33x, 1.34x -> 1.29x, 1.30x;
//! agent 1.23x, 1.27x -> 1.24x, 1.27x (within the noise). Experiments on the agent shape (bench
//! variants, not kept), each paired against the strict suite: the rubric evaluator off, so the
//! judge part is read and dropped and nothing graded: 1.09x-1.11x; the same with the judge part
//! stripped of its call's response, its key's parts and its verdicts' statements: 1.10x; the
//! evaluator on with those three stripped: 1.21x, against 1.22x-1.26x whole. So what the judge
//! part holds is not what costs: any judge part costs about 0.1 of the strict side (the larger
//! file's read in the kernel, about 0.01 per KB, and serde's work per token of the part), the
//! key about 0.06 (timed alone: 2.3-3.4 us a case, of which the output's canonical JSON 0.8-1.2
//! us, no slower than `serde_json::to_writer`, and SHA-256 over about 1.2 KB 1.2 us), grading
//! and the result's verdict entries the rest. Short of dropping the judge part from the
//! recording or the output from the key, both what DESIGN section 13 asks for, this path stays
//! over 1.2x. The whole test-binary run, as `cargo test` replays a suite (harness, report):
//! `bench/suite-scale`, shape `rubric`, 1.15x-1.21x (its README).
//!
//! 2026-12-06, issue 36 (a replay now keeps each judge call's answer as raw JSON text, read only
//! when several samples voted, and the verdicts carry the answer, the outcome and the votes):
//! `RUBRIC_PAIRED=20`, load 10-14 on 2 cores: minimal 1.288x (quartiles 1.228-1.399), agent
//! 1.224x (1.120-1.323): the same as before within the noise.

use criterion::{criterion_group, Criterion};
use proposal_eval::__internal::case_run::{OpenSuite, Question};
use proposal_eval::__internal::recording::{input_digest, Interaction, Recording, Sample};
use proposal_eval::__internal::rubric_judge::{JudgeCall, Judgement, RecordedVerdict};
use proposal_eval::config::RubricJudgeConfig;
use proposal_eval::rubric::{Rubric, BUILTIN_TEMPLATE};
use proposal_eval::{Case, Llm};
use serde_json::{json, Value};
use std::path::Path;

const CASES: usize = 1000;

fn input(n: usize) -> Value {
    json!({ "message": format!("Please change the payment of user {n} to {} EUR", 100 + n % 50), "userId": n.to_string() })
}

/// The shape of the suites' recordings.
#[derive(Clone, Copy, PartialEq)]
enum Shape {
    /// The agent's request is 4 short keys, its answer the proposals alone; the judge's answer
    /// repeats each statement, with no usage.
    Minimal,
    /// The agent asks as `examples/payments-agent` asks (its system prompt and output format,
    /// context, a tool, the message, metadata) and is answered with an id and its model; the
    /// judge answers a chat completion with usage, in the shape the built-in prompt asks for
    /// (`id`, `holds`, `reason`), its call's latency kept.
    Agent,
}

impl Shape {
    fn name(self) -> &'static str {
        match self {
            Shape::Minimal => "minimal",
            Shape::Agent => "agent",
        }
    }
}

const SYSTEM_PROMPT: &str = include_str!("../../examples/payments-agent/prompts/system.md");
const OUTPUT_FORMAT: &str = include_str!("../../examples/payments-agent/prompts/output-format.md");

/// The request the code under test sends.
fn request(input: &Value, shape: Shape) -> Value {
    match shape {
        Shape::Minimal => {
            json!({ "model": "agent-1", "temperature": 0, "prompt": input["message"], "user": input["userId"] })
        }
        Shape::Agent => json!({
            "model": "agent-1",
            "temperature": 0,
            "system": format!("{SYSTEM_PROMPT}\n{OUTPUT_FORMAT}"),
            "context": { "today": "2025-01-15", "userId": input["userId"], "currency": "EUR" },
            "tools": [{
                "name": "get_payment",
                "description": "The customer's current payment: amount, currency, IBAN.",
                "parameters": { "paymentId": "string" }
            }],
            "messages": [{ "role": "user", "content": input["message"] }],
            "metadata": { "requestId": format!("req-{}", input["userId"].as_str().unwrap_or("")) },
        }),
    }
}

/// The agent's answer holding `output`.
fn response(output: &Value, n: usize, shape: Shape) -> Value {
    match shape {
        Shape::Minimal => json!({ "proposals": output }),
        Shape::Agent => {
            json!({ "id": format!("resp-{n:08x}"), "model": "agent-1", "proposals": output })
        }
    }
}

/// Two proposals of ~25 leaves.
fn proposals(n: usize) -> Value {
    let one = |k: usize| {
        json!({
            "changeType": "change",
            "changedField": format!("payment.amount.{k}"),
            "newValue": 100 + (n + k) % 50,
            "relatedUserId": n.to_string(),
            "mutationVariables": {
                "data": { "amount": 100 + (n + k) % 50, "currency": "EUR", "effectiveDate": "2025-01-15T00:00:00Z",
                          "reason": format!("customer request {n}"), "items": [1, 2, 3, k] },
                "metadata": { "requestId": format!("r-{n}-{k}"), "source": "chat" }
            },
            "status": "pending"
        })
    };
    json!([one(0), one(1)])
}

fn rubric() -> Rubric {
    Rubric {
        required: vec![
            "Changes the payment amount of the user in the message".into(),
            "Keeps the currency in EUR".into(),
        ],
        forbidden: vec!["Changes another user's payment".into()],
    }
}

/// A suite folder `name` under `root` of `CASES` cases, each with its recording; with a rubric
/// and recorded verdicts when `judged`.
fn write_suite(root: &Path, name: &str, judged: bool, shape: Shape) {
    let dir = root.join(name);
    std::fs::create_dir_all(dir.join("cases")).unwrap();
    std::fs::create_dir_all(dir.join("recordings/cases")).unwrap();
    let config = if judged {
        "evaluators = [\"strict\", \"rubric\"]\n[judge]\nmodel = \"judge-1\"\n"
    } else {
        "evaluators = [\"strict\"]\n"
    };
    std::fs::write(dir.join("proposal-eval.toml"), config).unwrap();
    let judge = RubricJudgeConfig {
        model: Some("judge-1".into()),
        ..RubricJudgeConfig::default()
    };
    let at = "2025-01-15T10:30:00Z".parse().unwrap();
    for n in 0..CASES {
        let (input, output) = (input(n), proposals(n));
        let mut fixture =
            json!({ "description": format!("case {n}"), "input": input, "expected": output });
        if judged {
            fixture["rubric"] = serde_json::to_value(rubric()).unwrap();
        }
        let case = format!("cases/c{n:05}");
        std::fs::write(dir.join(format!("{case}.json")), fixture.to_string()).unwrap();
        let judgement = judged.then(|| {
            let rubric = rubric();
            let question = Question {
                rubric: &rubric,
                input: &input,
                input_sha256: None,
                output: &output,
                trajectory: None,
                template: BUILTIN_TEMPLATE,
                config: &judge,
            };
            let key = question.key();
            let verdicts: Vec<RecordedVerdict> = rubric
                .statements()
                .into_iter()
                .map(|s| RecordedVerdict {
                    id: s.id,
                    holds: s.id < 2,
                    reason: format!("statement {} checked against the proposals", s.id),
                    statement: s.text,
                })
                .collect();
            let (response, latency_ms, usage) = match shape {
                Shape::Minimal => {
                    let answer = json!({ "verdicts": verdicts }).to_string();
                    let response = json!({ "choices": [{ "message": { "role": "assistant", "content": answer } }] });
                    (response, None, None)
                }
                Shape::Agent => {
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
                        "usage": { "prompt_tokens": 1210, "completion_tokens": 64 }
                    });
                    let usage = proposal_eval::Usage::new(1210, 64).with_model("judge-1");
                    (response, Some(850.0 + n as f64), Some(usage))
                }
            };
            let mut call = Interaction::new(question.request(), response, at);
            call.latency_ms = latency_ms;
            call.usage = usage;
            Judgement {
                key_sha256: key.key_sha256,
                parts: key.parts,
                recorded_at: at,
                calls: vec![JudgeCall::of(call)],
                verdicts,
            }
            .without_requests()
        });
        Recording {
            format: 2,
            case: case.clone(),
            recorded_at: at,
            sources: Vec::new(),
            input_sha256: Some(input_digest(&input).0),
            input: Some(input.clone()),
            samples: vec![Sample {
                interactions: vec![Interaction::new(
                    request(&input, shape),
                    response(&output, n, shape),
                    at,
                )],
                judge: None,
            }],
            judge: judgement,
        }
        .write(&dir.join("recordings").join(format!("{case}.json")))
        .unwrap();
    }
}

/// The code under test: asks the model, returns the proposals of its answer.
fn propose(case: &Case, llm: &mut Llm, shape: Shape) -> proposal_eval::Result<Value> {
    let mut reply = llm.complete(&request(&case.input, shape))?;
    Ok(reply["proposals"].take())
}

fn run_all(suite: &OpenSuite, shape: Shape) {
    let f: fn(&Case, &mut Llm) -> proposal_eval::Result<Value> = match shape {
        Shape::Minimal => |case, llm| propose(case, llm, Shape::Minimal),
        Shape::Agent => |case, llm| propose(case, llm, Shape::Agent),
    };
    for n in 0..CASES {
        if let Err(failure) = suite.run(&format!("cases/c{n:05}.json"), f) {
            panic!("case {n} failed: {failure}");
        }
    }
}

/// The two suites of `shape`, written once into a temporary folder (kept while it lives).
fn open_suites(shape: Shape) -> (tempfile::TempDir, OpenSuite, OpenSuite) {
    let root = tempfile::tempdir().unwrap();
    write_suite(root.path(), "strict", false, shape);
    write_suite(root.path(), "judged", true, shape);
    let strict = OpenSuite::open(root.path(), Path::new("strict"));
    let judged = OpenSuite::open(root.path(), Path::new("judged"));
    (root, strict, judged)
}

fn rubric_replay(c: &mut Criterion) {
    for shape in [Shape::Minimal, Shape::Agent] {
        let (_root, strict, judged) = open_suites(shape);
        let mut group = c.benchmark_group(match shape {
            Shape::Minimal => "replay_1k",
            Shape::Agent => "replay_1k_agent",
        });
        group.sample_size(10);
        group.bench_function("strict", |b| b.iter(|| run_all(&strict, shape)));
        group.bench_function("strict+rubric", |b| b.iter(|| run_all(&judged, shape)));
        group.finish();
    }
}

/// `RUBRIC_PAIRED=N`: N rounds, each running the 1,000 cases of one side and then of the other
/// (the order alternating), and the ratio taken within the round. A slow minute of the machine
/// then slows both sides of the rounds it falls on, where criterion, measuring one side and
/// then the other, puts it into one side. Prints the median ratio and its quartiles.
fn paired(rounds: usize, shape: Shape) {
    let (_root, strict, judged) = open_suites(shape);
    let time = |suite: &OpenSuite| {
        let start = std::time::Instant::now();
        run_all(suite, shape);
        start.elapsed().as_secs_f64() * 1e3
    };
    for _ in 0..3 {
        time(&strict);
        time(&judged);
    }
    let mut rows: Vec<(f64, f64)> = (0..rounds)
        .map(|r| {
            if r % 2 == 0 {
                let s = time(&strict);
                (s, time(&judged))
            } else {
                let j = time(&judged);
                (time(&strict), j)
            }
        })
        .collect();
    let quantile = |mut v: Vec<f64>, q: f64| {
        v.sort_by(f64::total_cmp);
        v[((v.len() - 1) as f64 * q).round() as usize]
    };
    let ratios: Vec<f64> = rows.iter().map(|(s, j)| j / s).collect();
    rows.sort_by(|a, b| a.0.total_cmp(&b.0));
    println!(
        "paired, {} shape, {rounds} rounds: strict {:.1} ms, strict+rubric {:.1} ms (medians); ratio median {:.3}x, quartiles {:.3}-{:.3}x",
        shape.name(),
        quantile(rows.iter().map(|r| r.0).collect(), 0.5),
        quantile(rows.iter().map(|r| r.1).collect(), 0.5),
        quantile(ratios.clone(), 0.5),
        quantile(ratios.clone(), 0.25),
        quantile(ratios, 0.75),
    );
}

criterion_group!(benches, rubric_replay);

fn main() {
    if let Some(rounds) = std::env::var("RUBRIC_PAIRED")
        .ok()
        .and_then(|n| n.parse().ok())
    {
        for shape in [Shape::Minimal, Shape::Agent] {
            paired(rounds, shape);
        }
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
