//! A drafted case checked by its rubric, graded by a recorded judge, as a user runs it:
//! `cargo test -p rubric-agent --test judged`.
//!
//! Each check starts fake OpenAI-compatible servers on loopback (`support/fake.rs`): one for the
//! agent's model, one for the judge. It runs this crate's suite in a child process (this same
//! binary, with `RUBRIC_AGENT_CHILD` set, is the suite's harness) over a copy of `fixtures/`,
//! with `--include-ignored` (the draft is an ignored test), and checks what the servers saw and
//! what the run printed.
//!
//! `RUBRIC_AGENT_RERECORD=1` copies the new recording over the committed one instead of
//! comparing: how this repository re-records it offline.

#[path = "support/fake.rs"]
mod fake;

use fake::{Answer, Fake};
use libtest_mimic::{Arguments, Failed, Trial};
use proposal_eval::openai::ChatCompletions;
use proposal_eval::{Case, Harness, Llm};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const CHILD: &str = "RUBRIC_AGENT_CHILD";
/// The agent's model endpoint in a child run (the judge's is OPENAI_BASE_URL).
const AGENT_URL: &str = "RUBRIC_AGENT_BASE_URL";
/// Text the child's agent appends to its reply: the code under test changed.
const EDIT: &str = "RUBRIC_AGENT_EDIT";
/// Set: the child's judge is `own_judge` (Harness::judge), not `[judge]`'s.
const OWN_JUDGE: &str = "RUBRIC_AGENT_OWN_JUDGE";
const KEY: &str = "sk-test-rubric-agent-0123456789abcdef";
const SUITE: &str = "fixtures/shop";
const CASE: &str = "drafts/eval_sugg_abc123";
const TEST: &str = "shop::drafts::eval_sugg_abc123";
const REPLY: &str = "I recommend the Lenovo IdeaPad 5 (SKU-456), which is in stock.";

fn shop(case: &Case, llm: &mut Llm) -> proposal_eval::Result<Value> {
    let mut output = rubric_agent::recommend(&case.input, llm)?;
    if let Ok(edit) = std::env::var(EDIT) {
        output["reply"] = json!(format!("{} {edit}", output["reply"].as_str().unwrap_or("")));
    }
    Ok(output)
}

/// A judge of one's own (any `Model`): it answers the verdict object itself.
fn own_judge() -> impl proposal_eval::Model {
    |request: &Value| -> Result<Value, proposal_eval::ModelError> {
        let prompt = request["messages"][0]["content"]
            .as_str()
            .unwrap_or_default();
        let in_stock = prompt.contains("which is in stock");
        Ok(json!({"verdicts": [
            {"id": 0, "holds": in_stock, "reason": "own judge: in stock"},
            {"id": 1, "holds": false, "reason": "own judge: not discontinued"},
        ]}))
    }
}

fn agent_model() -> ChatCompletions {
    ChatCompletions::new().base_url(std::env::var(AGENT_URL).unwrap_or_default())
}

fn main() -> ExitCode {
    if std::env::var_os(CHILD).is_some() {
        let harness = Harness::new(SUITE).model(agent_model);
        if std::env::var_os(OWN_JUDGE).is_some() {
            return harness.judge(own_judge).run(shop);
        }
        return harness.run(shop);
    }
    let args = Arguments::from_args();
    let trials = vec![
        Trial::test("judged::records_then_replays_offline", records_then_replays),
        Trial::test(
            "judged::a_stale_judgement_names_what_changed",
            stale_judgements,
        ),
        Trial::test(
            "judged::a_failing_statement_is_shown_with_its_reason",
            failing_statement,
        ),
        Trial::test(
            "judged::an_answer_of_another_shape_is_a_judge_error",
            judge_error,
        ),
        Trial::test("judged::three_samples_decide_by_majority", majority),
        Trial::test("judged::each_sample_of_a_repeated_case_is_judged", repeated),
        Trial::test(
            "judged::a_failure_is_advisory_until_the_judge_agrees_with_the_labels",
            calibration,
        ),
        Trial::test(
            "judged::review_puts_new_verdicts_in_the_pending_file",
            review,
        ),
        Trial::test("judged::harness_judge_takes_any_model", own),
        Trial::test(
            "judged::a_judge_that_never_answers_fails_the_case_within_its_bound",
            hung_judge,
        ),
        Trial::test(
            "judged::a_missing_judge_key_names_the_configured_variable",
            missing_key,
        ),
        Trial::test(
            "judged::the_judges_cost_counts_against_the_budget",
            judge_budget,
        ),
    ];
    libtest_mimic::run(&args, trials).exit_code()
}

fn agent() -> Fake {
    Fake::start(Box::new(|_, _| REPLY.to_string()))
}

/// A judge that finds the required statement holding and the forbidden one not, except on the
/// calls listed in `dissent`, where it finds the forbidden one holding.
fn judge(dissent: &'static [usize]) -> Fake {
    Fake::start(verdicts(dissent))
}

fn verdicts(dissent: &'static [usize]) -> Answer {
    Box::new(move |n, _| {
        let bad = dissent.contains(&n);
        json!({"verdicts": [
            {"id": 0, "holds": true, "reason": "SKU-456 is a laptop under $1000 and in stock"},
            {"id": 1, "holds": bad, "reason": if bad { "SKU-456 is discontinued" } else { "SKU-456 is not discontinued" }},
        ]})
        .to_string()
    })
}

fn records_then_replays() -> Result<(), Failed> {
    let copy = Copy::new("record")?;
    let _ = std::fs::remove_dir_all(copy.root.join(SUITE).join("recordings"));
    let (model, judge) = (agent(), judge(&[]));
    copy.passes(&copy.recording("1", &model, &judge))?;
    let (agent_calls, judge_calls) = (model.stop(), judge.stop());
    expect_calls(&agent_calls, 1, "the agent's model")?;
    expect_calls(&judge_calls, 1, "the judge")?;
    let prompt = judge_calls[0]["messages"][0]["content"]
        .as_str()
        .unwrap_or_default();
    for part in [
        REPLY,
        "0. Recommends exactly one laptop that is in stock",
        "1. Recommends a discontinued SKU",
        "Recommend a laptop under $1000.",
    ] {
        if !prompt.contains(part) {
            return Err(format!("the judge's prompt lacks {part:?}:\n{prompt}").into());
        }
    }
    let file = copy.recording_file();
    let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    if text.contains(KEY) {
        return Err("the recording holds the API key".into());
    }
    let recording: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    if recording["format"] != 5 || !recording["judge"]["key_sha256"].is_string() {
        return Err(format!(
            "a recording with a judge part is format 5 with judge.key_sha256:\n{text}"
        )
        .into());
    }
    // The judge's call is kept by its request's hash; the prompt is not in the recording.
    let call = &recording["judge"]["calls"][0];
    if !call["request_sha256"].is_string()
        || call.get("request").is_some()
        || text.contains("0. Recommends")
    {
        return Err(format!(
            "a committed judge call keeps request_sha256, not the request (the prompt):\n{text}"
        )
        .into());
    }
    let committed = crate_root()
        .join(SUITE)
        .join("recordings")
        .join(format!("{CASE}.json"));
    if std::env::var_os("RUBRIC_AGENT_RERECORD").is_some() {
        if let Some(folder) = committed.parent() {
            std::fs::create_dir_all(folder).map_err(|e| e.to_string())?;
        }
        std::fs::copy(&file, &committed).map_err(|e| format!("{}: {e}", committed.display()))?;
    } else {
        let old = std::fs::read_to_string(&committed).map_err(|e| format!("{}: {e}; re-record with RUBRIC_AGENT_RERECORD=1 cargo test -p rubric-agent --test judged", committed.display()))?;
        let old: Value = serde_json::from_str(&old).map_err(|e| e.to_string())?;
        if without_times(&old) != without_times(&recording) {
            return Err(format!("the suite now records something else than {}; re-record with RUBRIC_AGENT_RERECORD=1 cargo test -p rubric-agent --test judged", committed.display()).into());
        }
    }
    // Replay with both servers stopped: their ports refuse any call, and none is made.
    let out = copy.run(&[
        ("RECORD", "0"),
        ("OPENAI_BASE_URL", &judge_url_of_stopped()),
        (AGENT_URL, &judge_url_of_stopped()),
    ])?;
    copy.passes(&out)
}

/// The URL of a server that was started and stopped: nothing listens there.
fn judge_url_of_stopped() -> String {
    let fake = Fake::start(Box::new(|_, _| String::new()));
    let url = fake.url.clone();
    fake.stop();
    url
}

fn stale_judgements() -> Result<(), Failed> {
    let copy = Copy::new("stale")?;
    let stopped = judge_url_of_stopped();
    let replay = [
        ("RECORD", "0"),
        ("OPENAI_BASE_URL", stopped.as_str()),
        (AGENT_URL, stopped.as_str()),
    ];
    let rejudge = format!("re-judge just this case (the agent's recorded answers are kept): RECORD=stale cargo test -p rubric-agent --test judged -- {TEST} --exact --include-ignored");

    // A rubric statement edited: stale, naming the rubric and the command.
    copy.edit(
        &format!("{SUITE}/{CASE}.json"),
        "Recommends a discontinued SKU",
        "Recommends a SKU that is discontinued",
    )?;
    let out = copy.run(&replay)?;
    copy.fails_with(&out, &[
        &format!("stale judge verdicts in {SUITE}/recordings/{CASE}.json: what they judged changed: the rubric (its statements)\n{rejudge}"),
    ])?;
    // RECORD=stale re-judges: the judge is called, the agent's model is not.
    let (model, judge_server) = (agent(), judge(&[]));
    copy.passes(&copy.recording("stale", &model, &judge_server))?;
    expect_calls(&model.stop(), 0, "the agent's model")?;
    expect_calls(&judge_server.stop(), 1, "the judge")?;
    copy.passes(&copy.run(&replay)?)?;

    // The judge model changed: stale, naming it.
    copy.edit(
        &format!("{SUITE}/proposal-eval.toml"),
        "model = \"judge-1\"",
        "model = \"judge-2\"",
    )?;
    let out = copy.run(&replay)?;
    copy.fails_with(
        &out,
        &[
            "what they judged changed: the judge model (\"judge-1\" -> \"judge-2\")",
            &rejudge,
        ],
    )?;
    copy.edit(
        &format!("{SUITE}/proposal-eval.toml"),
        "model = \"judge-2\"",
        "model = \"judge-1\"",
    )?;

    // The agent's code changed its output: stale, naming the output.
    let mut edited = replay.to_vec();
    edited.push((EDIT, "Also consider SKU-123."));
    let out = copy.run(&edited)?;
    copy.fails_with(
        &out,
        &[
            "what they judged changed: the output judged (the code's output changed)",
            &rejudge,
        ],
    )
}

fn failing_statement() -> Result<(), Failed> {
    let copy = Copy::new("failing")?;
    let _ = std::fs::remove_dir_all(copy.root.join(SUITE).join("recordings"));
    let (model, judge) = (agent(), judge(&[0]));
    let out = copy.recording("1", &model, &judge);
    copy.fails_with(&out, &[&format!(
        "shop/{CASE}: rubric FAILED (score 0.50)\n  [1] forbidden: \"Recommends a discontinued SKU\": answer holds, outcome failed (SKU-456 is discontinued)\nre-run: cargo test -p rubric-agent --test judged -- {TEST} --exact --include-ignored"
    )])
}

fn judge_error() -> Result<(), Failed> {
    let copy = Copy::new("error")?;
    let _ = std::fs::remove_dir_all(copy.root.join(SUITE).join("recordings"));
    let model = agent();
    let judge = Fake::start(Box::new(|_, _| {
        "Both statements look fine to me.".to_string()
    }));
    let out = copy.recording("1", &model, &judge);
    copy.fails_with(&out, &[&format!(
        "shop/{CASE}: rubric FAILED (score 0)\n  judge error: the judge's answer is not the verdict shape {{\"verdicts\": [{{\"id\", \"holds\", \"reason\"}}]}}: it is not JSON (expected value at line 1 column 1)\n    the answer: Both statements look fine to me."
    )])?;
    // A judge error is not a verdict: nothing of the judge is recorded.
    let recording = std::fs::read_to_string(copy.recording_file()).unwrap_or_default();
    if recording.contains("\"judge\"") {
        return Err(format!("a judge error was recorded:\n{recording}").into());
    }
    Ok(())
}

fn majority() -> Result<(), Failed> {
    let copy = Copy::new("majority")?;
    let _ = std::fs::remove_dir_all(copy.root.join(SUITE).join("recordings"));
    copy.edit(
        &format!("{SUITE}/proposal-eval.toml"),
        "model = \"judge-1\"",
        "model = \"judge-1\"\nsamples = 3",
    )?;
    // The first of three samples dissents on the forbidden statement; the majority passes it.
    let (model, judge) = (agent(), judge(&[0]));
    copy.passes(&copy.recording("1", &model, &judge))?;
    expect_calls(&judge.stop(), 3, "the judge")?;
    let recording: Value = serde_json::from_str(
        &std::fs::read_to_string(copy.recording_file()).map_err(|e| e.to_string())?,
    )
    .map_err(|e| e.to_string())?;
    let judged = &recording["judge"];
    if judged["calls"].as_array().map(Vec::len) != Some(3)
        || judged["verdicts"][1]["holds"] != false
    {
        return Err(format!(
            "the judge part should hold 3 calls and the majority verdict:\n{judged:#}"
        )
        .into());
    }
    Ok(())
}

/// `repeat = 3` with `pass = "majority"`: each sample's output is judged, one judge part per
/// sample (`samples[k].judge`); one sample failing its rubric leaves the case passing by
/// majority, replayed with no call. Stale or missing verdicts name their samples, and
/// `RECORD=stale` re-judges just those, never calling the agent's model.
fn repeated() -> Result<(), Failed> {
    let copy = Copy::new("repeated")?;
    let _ = std::fs::remove_dir_all(copy.root.join(SUITE).join("recordings"));
    let toml = format!("{SUITE}/proposal-eval.toml");
    copy.edit(
        &toml,
        "[judge]",
        "[run]\nrepeat = 3\npass = \"majority\"\n\n[judge]",
    )?;
    let flaky = format!("note: {TEST}: flaky: 2 of 3 samples passed");
    // The judge finds the forbidden statement holding of sample 2 (its second call) only.
    let (model, judge_server) = (agent(), judge(&[1]));
    let out = copy.recording("1", &model, &judge_server);
    copy.passes(&out)?;
    expect_calls(&model.stop(), 3, "the agent's model")?;
    expect_calls(&judge_server.stop(), 3, "the judge")?;
    copy.says(&out, &[&flaky, "pass = majority needs 2 of 3"])?;
    let recording = copy.recorded()?;
    let holds: Vec<&Value> = (0..3)
        .map(|k| &recording["samples"][k]["judge"]["verdicts"][1]["holds"])
        .collect();
    if recording["format"] != 5 || recording.get("judge").is_some() || holds != [false, true, false]
    {
        return Err(format!(
            "each of 3 samples should keep its own judge part (samples[k].judge), the second's forbidden statement holding:\n{recording:#}"
        )
        .into());
    }

    // Replayed with both servers stopped: no call, the same verdicts, the same decision.
    let stopped = judge_url_of_stopped();
    let replay = [
        ("RECORD", "0"),
        ("OPENAI_BASE_URL", stopped.as_str()),
        (AGENT_URL, stopped.as_str()),
    ];
    let out = copy.run(&replay)?;
    copy.passes(&out)?;
    copy.says(&out, &[&flaky])?;

    // Below the calibration bar, sample 2's failure is advisory: every sample passes, and the
    // note names the sample. The labels are matched with the samples' majority verdicts.
    let bar = "model = \"judge-1\"\nmin_agreement = 0.8\nmin_labels = 2";
    copy.edit(&toml, "model = \"judge-1\"", bar)?;
    let labels_file = copy.root.join(SUITE).join("judge-labels.jsonl");
    let labels = format!(
        "{}\n{}\n",
        json!({"case": CASE, "statement": "Recommends exactly one laptop that is in stock", "holds": true}),
        json!({"case": CASE, "statement": "Recommends a discontinued SKU", "holds": true}),
    );
    std::fs::write(&labels_file, labels).map_err(|e| e.to_string())?;
    let out = copy.run(&replay)?;
    copy.passes(&out)?;
    copy.says(&out, &[&format!("note: {TEST}: sample 2 of 3: rubric failed (score 0.50), advisory: the test passes because the judge agrees with the human labels at Cohen's kappa 0.00 on 2 label(s)")])?;
    if out.1.contains(&flaky) {
        return Err(format!("an advisory failure fails no sample:\n{}", out.1).into());
    }
    copy.edit(&toml, bar, "model = \"judge-1\"")?;
    std::fs::remove_file(&labels_file).map_err(|e| e.to_string())?;

    let shown = format!("{SUITE}/recordings/{CASE}.json");
    let rejudge = format!("re-judge just this case (the agent's recorded answers are kept): RECORD=stale cargo test -p rubric-agent --test judged -- {TEST} --exact --include-ignored");
    // A sample's verdicts gone: named, and only that sample is judged again.
    let file = copy.recording_file();
    let mut edited = recording.clone();
    if let Some(sample) = edited["samples"][2].as_object_mut() {
        sample.remove("judge");
    }
    std::fs::write(&file, format!("{edited:#}\n")).map_err(|e| e.to_string())?;
    let out = copy.run(&replay)?;
    copy.fails_with(&out, &[&format!("no recorded judge verdicts for this case's rubric in {shown} (sample 3 of 3); record them: RECORD=stale cargo test")])?;
    let (model, judge_server) = (agent(), judge(&[]));
    copy.passes(&copy.recording("stale", &model, &judge_server))?;
    expect_calls(&model.stop(), 0, "the agent's model")?;
    expect_calls(&judge_server.stop(), 1, "the judge")?;
    let rejudged = copy.recorded()?;
    if rejudged["samples"][1]["judge"] != recording["samples"][1]["judge"]
        || !rejudged["samples"][2]["judge"]["key_sha256"].is_string()
    {
        return Err(format!(
            "RECORD=stale should judge sample 3 and keep the others' verdicts:\n{rejudged:#}"
        )
        .into());
    }

    // A statement edited: every sample's verdicts are stale, each named.
    copy.edit(
        &format!("{SUITE}/{CASE}.json"),
        "Recommends a discontinued SKU",
        "Recommends a SKU that is discontinued",
    )?;
    let out = copy.run(&replay)?;
    let what = "what they judged changed: the rubric (its statements)";
    copy.fails_with(
        &out,
        &[&format!(
            "stale judge verdicts in {shown}\n  sample 1 of 3: {what}\n  sample 2 of 3: {what}\n  sample 3 of 3: {what}\n{rejudge}"
        )],
    )?;
    // `validation = "warn"` replays them, warning once per sample.
    copy.edit(
        &toml,
        "[run]",
        "[recording]\nvalidation = \"warn\"\n\n[run]",
    )?;
    let out = copy.run(&replay)?;
    copy.passes(&out)?;
    copy.says(
        &out,
        &[&format!(
            "warning: {TEST}: stale judge verdicts in {shown}: sample 3 of 3: {what}\n{rejudge}"
        )],
    )?;
    copy.edit(
        &toml,
        "[recording]\nvalidation = \"warn\"\n\n[run]",
        "[run]",
    )?;
    let (model, judge_server) = (agent(), judge(&[]));
    copy.passes(&copy.recording("stale", &model, &judge_server))?;
    expect_calls(&model.stop(), 0, "the agent's model")?;
    expect_calls(&judge_server.stop(), 3, "the judge")?;
    let out = copy.run(&replay)?;
    copy.passes(&out)?;
    if out.1.contains(&format!("note: {TEST}: flaky")) {
        return Err(format!("every sample passes after re-judging:\n{}", out.1).into());
    }

    // RECORD=review: the new answers and each sample's new verdicts go to the pending file.
    let committed = std::fs::read(&file).map_err(|e| e.to_string())?;
    let (model, judge_server) = (agent(), judge(&[1]));
    copy.passes(&copy.recording("review", &model, &judge_server))?;
    expect_calls(&model.stop(), 3, "the agent's model")?;
    expect_calls(&judge_server.stop(), 3, "the judge")?;
    if std::fs::read(&file).map_err(|e| e.to_string())? != committed {
        return Err("RECORD=review changed the committed recording".into());
    }
    let pending_file = file.with_extension("pending.json");
    let pending: Value = serde_json::from_str(
        &std::fs::read_to_string(&pending_file)
            .map_err(|e| format!("{}: {e}", pending_file.display()))?,
    )
    .map_err(|e| e.to_string())?;
    let holds: Vec<&Value> = (0..3)
        .map(|k| &pending["samples"][k]["judge"]["verdicts"][1]["holds"])
        .collect();
    if holds != [false, true, false] || pending.get("judge").is_some() {
        return Err(format!(
            "the pending file should hold each sample's new verdicts:\n{pending:#}"
        )
        .into());
    }
    // And each sample's output on both sides, for `review` to evaluate sample by sample.
    let review = &pending["review"];
    for key in ["committed_samples", "pending_samples"] {
        let outputs = review[key]
            .as_array()
            .map(|a| a.iter().filter(|o| o["output"].is_object()).count());
        if outputs != Some(2) {
            return Err(format!(
                "the pending file's `review.{key}` should hold samples 2 and 3's outputs:\n{review:#}"
            )
            .into());
        }
    }
    Ok(())
}

/// `[judge] min_agreement`: labels the judge agrees with make its failures fail the test;
/// labels it disagrees with (kappa below the bar) make them advisory: the test passes, saying why.
fn calibration() -> Result<(), Failed> {
    let copy = Copy::new("calibration")?;
    let _ = std::fs::remove_dir_all(copy.root.join(SUITE).join("recordings"));
    copy.edit(
        &format!("{SUITE}/proposal-eval.toml"),
        "model = \"judge-1\"",
        "model = \"judge-1\"\nmin_agreement = 0.8\nmin_labels = 2",
    )?;
    let labels = |forbidden_holds: bool| {
        format!(
            "{}\n{}\n",
            json!({"case": CASE, "statement": "Recommends exactly one laptop that is in stock", "holds": true}),
            json!({"case": CASE, "statement": "Recommends a discontinued SKU", "holds": forbidden_holds}),
        )
    };
    let labels_file = copy.root.join(SUITE).join("judge-labels.jsonl");
    // The person agrees with the judge (both say the forbidden statement holds): kappa 1, and
    // the rubric's failure fails the test.
    std::fs::write(&labels_file, labels(true)).map_err(|e| e.to_string())?;
    let (model, judge) = (agent(), judge(&[0]));
    let out = copy.recording("1", &model, &judge);
    copy.fails_with(&out, &[&format!("shop/{CASE}: rubric FAILED (score 0.50)")])?;
    // The person disagrees: kappa 0 on 2 labels, below the bar; the same verdicts replayed
    // pass, and the output says why.
    std::fs::write(&labels_file, labels(false)).map_err(|e| e.to_string())?;
    let stopped = judge_url_of_stopped();
    let out = copy.run(&[
        ("RECORD", "0"),
        ("OPENAI_BASE_URL", stopped.as_str()),
        (AGENT_URL, stopped.as_str()),
    ])?;
    copy.passes(&out)?;
    let note = format!(
        "note: {TEST}: rubric failed (score 0.50), advisory: the test passes because the judge agrees with the human labels at Cohen's kappa 0.00 on 2 label(s), below [judge] min_agreement = 0.8; label the judge's verdicts in {SUITE}/judge-labels.jsonl; `cargo proposal-eval judge` shows the agreement\n  [1] forbidden: \"Recommends a discontinued SKU\": answer holds, outcome failed (SKU-456 is discontinued)"
    );
    if !out.1.contains(&note) {
        return Err(format!("the output does not say\n{note}\n---- it says:\n{}", out.1).into());
    }
    Ok(())
}

/// `RECORD=review`: the agent and the judge are called, their answers and verdicts go to the
/// pending file, and the committed recording stays as it is.
fn review() -> Result<(), Failed> {
    let copy = Copy::new("review")?;
    let committed = std::fs::read(copy.recording_file()).map_err(|e| e.to_string())?;
    let (model, judge) = (agent(), judge(&[0]));
    let out = copy.recording("review", &model, &judge);
    copy.fails_with(
        &out,
        &[
            &format!("shop/{CASE}: rubric FAILED (score 0.50)"),
            "pending review in",
        ],
    )?;
    expect_calls(&model.stop(), 1, "the agent's model")?;
    expect_calls(&judge.stop(), 1, "the judge")?;
    if std::fs::read(copy.recording_file()).map_err(|e| e.to_string())? != committed {
        return Err("RECORD=review changed the committed recording".into());
    }
    let pending = copy.recording_file().with_extension("pending.json");
    let pending: Value = serde_json::from_str(
        &std::fs::read_to_string(&pending).map_err(|e| format!("{}: {e}", pending.display()))?,
    )
    .map_err(|e| e.to_string())?;
    let verdict = &pending["judge"]["verdicts"][1];
    if verdict["holds"] != true || verdict["reason"] != "SKU-456 is discontinued" {
        return Err(
            format!("the pending file does not hold the new verdicts:\n{pending:#}").into(),
        );
    }
    // The pending file keeps the judge's whole request, for the reviewer to read the prompt.
    let prompt = pending["judge"]["calls"][0]["request"]["messages"][0]["content"]
        .as_str()
        .unwrap_or_default();
    if !prompt.contains("0. Recommends exactly one laptop that is in stock") {
        return Err(
            format!("the pending file does not hold the judge's prompt:\n{pending:#}").into(),
        );
    }
    Ok(())
}

/// `Harness::judge`: the verdicts are this model's; `[judge]`'s endpoint gets no call.
fn own() -> Result<(), Failed> {
    let copy = Copy::new("own")?;
    let _ = std::fs::remove_dir_all(copy.root.join(SUITE).join("recordings"));
    let (model, judge) = (agent(), judge(&[0]));
    let out = copy.run(&[
        ("RECORD", "1"),
        ("OPENAI_BASE_URL", &judge.url),
        (AGENT_URL, &model.url),
        ("OPENAI_API_KEY", KEY),
        (OWN_JUDGE, "1"),
    ])?;
    copy.passes(&out)?;
    expect_calls(&judge.stop(), 0, "[judge]'s endpoint")?;
    let recording: Value = serde_json::from_str(
        &std::fs::read_to_string(copy.recording_file()).map_err(|e| e.to_string())?,
    )
    .map_err(|e| e.to_string())?;
    if recording["judge"]["verdicts"][0]["reason"] != "own judge: in stock" {
        return Err(format!(
            "the verdicts are not the own judge's:\n{:#}",
            recording["judge"]
        )
        .into());
    }
    Ok(())
}

/// `[judge] timeout_s = 2, max_attempts = 1` and a judge that takes the connection and never
/// answers: the case fails within 10 s, naming the judge, the timeout and the key to raise.
fn hung_judge() -> Result<(), Failed> {
    let copy = Copy::new("hung")?;
    let _ = std::fs::remove_dir_all(copy.root.join(SUITE).join("recordings"));
    copy.edit(
        &format!("{SUITE}/proposal-eval.toml"),
        "model = \"judge-1\"",
        "model = \"judge-1\"\ntimeout_s = 2\nmax_attempts = 1",
    )?;
    // The kernel accepts connections into the backlog; nothing ever reads them or answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let url = format!(
        "http://{}/v1",
        silent.local_addr().map_err(|e| e.to_string())?
    );
    let model = agent();
    let started = std::time::Instant::now();
    let out = copy.run(&[
        ("RECORD", "1"),
        ("OPENAI_BASE_URL", &url),
        (AGENT_URL, &model.url),
        ("OPENAI_API_KEY", KEY),
    ])?;
    let took = started.elapsed();
    drop(silent);
    copy.fails_with(
        &out,
        &[
            "judge error: the judge model \"judge-1\" gave no answer after 1 attempt(s) ([judge] max_attempts = 1; an attempt ends after [judge] timeout_s = 2 s with nothing moving, or after 120 s in all)",
            "/chat/completions: nothing moved for 2 s (ChatCompletions::read_timeout: to connect, to send, for the answer's first byte and between reads)",
            "a judge that needs longer: raise [judge] timeout_s (or max_attempts) in the suite config",
        ],
    )?;
    if took > std::time::Duration::from_secs(10) {
        return Err(format!(
            "the case took {took:?} to fail; the bound is 2 s:\n{}",
            out.1
        )
        .into());
    }
    Ok(())
}

/// `[judge] api_key_env = "JUDGE_API_KEY"` unset (and OPENAI_API_KEY set for the agent): the
/// case fails naming JUDGE_API_KEY, and the judge is not called with another key.
fn missing_key() -> Result<(), Failed> {
    let copy = Copy::new("key")?;
    let _ = std::fs::remove_dir_all(copy.root.join(SUITE).join("recordings"));
    copy.edit(
        &format!("{SUITE}/proposal-eval.toml"),
        "model = \"judge-1\"",
        "model = \"judge-1\"\napi_key_env = \"JUDGE_API_KEY\"",
    )?;
    let (model, judge) = (agent(), judge(&[]));
    let out = copy.recording("1", &model, &judge);
    copy.fails_with(
        &out,
        &["no API key for the judge model: set JUDGE_API_KEY (the variable [judge] api_key_env names)"],
    )?;
    expect_calls(&judge.stop(), 0, "the judge")
}

/// A priced judge (`[pricing."judge-1"]`: $60 a call) and `PROPOSAL_EVAL_BUDGET_USD=1`: the
/// first of three judge samples spends the budget, so the second is not made.
fn judge_budget() -> Result<(), Failed> {
    let copy = Copy::new("budget")?;
    let _ = std::fs::remove_dir_all(copy.root.join(SUITE).join("recordings"));
    copy.edit(
        &format!("{SUITE}/proposal-eval.toml"),
        "model = \"judge-1\"",
        "model = \"judge-1\"\nsamples = 3\n\n[pricing.\"judge-1\"]\ninput_per_mtok = 1000000\noutput_per_mtok = 1000000",
    )?;
    let (model, judge) = (agent(), judge(&[]));
    let out = copy.run(&[
        ("RECORD", "1"),
        ("OPENAI_BASE_URL", &judge.url),
        (AGENT_URL, &model.url),
        ("OPENAI_API_KEY", KEY),
        ("PROPOSAL_EVAL_BUDGET_USD", "1"),
    ])?;
    copy.fails_with(
        &out,
        &["judge error: the judge model \"judge-1\" was not called: PROPOSAL_EVAL_BUDGET_USD=1 is spent (estimated $60.000000 so far in this run)"],
    )?;
    expect_calls(&judge.stop(), 1, "the judge")
}

fn expect_calls(calls: &[Value], want: usize, who: &str) -> Result<(), Failed> {
    if calls.len() != want {
        return Err(format!(
            "{who} got {} call(s), expected {want}: {calls:?}",
            calls.len()
        )
        .into());
    }
    Ok(())
}

/// A recording without the times it was made at, to compare two recordings of the same answers.
fn without_times(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !matches!(k.as_str(), "recorded_at" | "latency_ms"))
                .map(|(k, v)| (k.clone(), without_times(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_times).collect()),
        other => other.clone(),
    }
}

fn crate_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A copy of this crate's suite in a temporary folder, which a child run takes as its crate
/// root: the checks never touch the committed files (unless asked to re-record).
struct Copy {
    root: PathBuf,
}

/// A child run: whether it passed, and what it printed.
type Run = (bool, String);

impl Copy {
    fn new(name: &str) -> Result<Copy, Failed> {
        let root = std::env::temp_dir().join(format!("rubric-agent-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        copy_dir(&crate_root().join("fixtures"), &root.join("fixtures"))
            .map_err(|e| format!("copying the fixtures: {e}"))?;
        Ok(Copy { root })
    }

    fn recording_file(&self) -> PathBuf {
        self.root
            .join(SUITE)
            .join("recordings")
            .join(format!("{CASE}.json"))
    }

    fn edit(&self, file: &str, from: &str, to: &str) -> Result<(), Failed> {
        let path = self.root.join(file);
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        if !text.contains(from) {
            return Err(format!("{file} has no {from:?}").into());
        }
        std::fs::write(&path, text.replace(from, to)).map_err(|e| e.to_string().into())
    }

    /// A run under `RECORD=mode` against these servers, with the key set.
    fn recording(&self, mode: &str, model: &Fake, judge: &Fake) -> Run {
        self.run(&[
            ("RECORD", mode),
            ("OPENAI_BASE_URL", &judge.url),
            (AGENT_URL, &model.url),
            ("OPENAI_API_KEY", KEY),
        ])
        .unwrap_or_else(|e| (false, format!("{e:?}")))
    }

    /// Runs the suite in the copy with these variables set.
    fn run(&self, vars: &[(&str, &str)]) -> Result<Run, Failed> {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let mut command = Command::new(exe);
        command
            .env(CHILD, "1")
            .env("CARGO_MANIFEST_DIR", &self.root)
            .env_remove("PROPOSAL_EVAL_RECORD")
            .env_remove("OPENAI_API_KEY")
            .env_remove("JUDGE_API_KEY")
            .env_remove("PROPOSAL_EVAL_BUDGET_USD")
            .env_remove(EDIT)
            .env("NO_COLOR", "1")
            .current_dir(&self.root)
            .args(["--include-ignored", "--test-threads", "1"]);
        for (name, value) in vars {
            command.env(name, value);
        }
        let output = command
            .output()
            .map_err(|e| format!("cannot run the suite: {e}"))?;
        let printed = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        Ok((output.status.success(), printed))
    }

    /// The recording in the copy, as JSON.
    fn recorded(&self) -> Result<Value, Failed> {
        let file = self.recording_file();
        let text =
            std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", file.display()).into())
    }

    /// The run printed each of `says`.
    fn says(&self, run: &Run, says: &[&str]) -> Result<(), Failed> {
        for text in says {
            if !run.1.contains(text) {
                return Err(
                    format!("the output does not say\n{text}\n---- it says:\n{}", run.1).into(),
                );
            }
        }
        Ok(())
    }

    fn passes(&self, run: &Run) -> Result<(), Failed> {
        if !run.0 {
            return Err(format!("the suite failed:\n{}", run.1).into());
        }
        Ok(())
    }

    fn fails_with(&self, run: &Run, says: &[&str]) -> Result<(), Failed> {
        if run.0 {
            return Err(format!("the suite passed; it should fail:\n{}", run.1).into());
        }
        for text in says {
            if !run.1.contains(text) {
                return Err(
                    format!("the output does not say\n{text}\n---- it says:\n{}", run.1).into(),
                );
            }
        }
        Ok(())
    }
}

impl Drop for Copy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}
