//! Recording and replaying through `proposal_eval::openai::ChatCompletions`, as a user does it:
//! `cargo test -p async-agent --test record_replay`.
//!
//! The check starts a fake OpenAI-compatible server on loopback (`support/fake_openai.rs`), then
//! runs this crate's suite in a child process (this same binary, with `ASYNC_AGENT_CHILD` set,
//! is `tests/evals.rs`'s harness) over a copy of `fixtures/` and `prompts/`:
//!
//! 1. `RECORD=1` with `OPENAI_BASE_URL` pointing at the fake server and `OPENAI_API_KEY` set:
//!    every case calls the server once, each call carries the key, no recording holds it, each
//!    interaction records the tokens the response's `usage` reports, and the recordings are the
//!    committed ones (same requests and responses);
//! 2. replay, with no key: the suite passes and the server gets no call.
//!
//! `ASYNC_AGENT_RERECORD=1` copies the new recordings over the committed ones instead of
//! comparing: how this repository re-records them offline.

#[path = "support/accounts.rs"]
mod accounts;
#[path = "support/fake_openai.rs"]
mod fake_openai;

use libtest_mimic::{Arguments, Failed, Trial};
use proposal_eval::openai::ChatCompletions;
use proposal_eval::{Case, Harness, Llm};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const CHILD: &str = "ASYNC_AGENT_CHILD";
const KEY: &str = "sk-test-async-agent-0123456789abcdef";
const SUITE: &str = "fixtures/tickets";

async fn tickets(case: &Case, llm: &mut Llm) -> proposal_eval::Result<Vec<Value>> {
    let accounts = accounts::start().await;
    async_agent::triage(&case.input, &accounts.uri(), llm).await
}

fn main() -> ExitCode {
    if std::env::var_os(CHILD).is_some() {
        return Harness::new(SUITE)
            .model(ChatCompletions::new)
            .run_async(tickets);
    }
    let args = Arguments::from_args();
    let trials = vec![Trial::test(
        "record_replay::records_through_chat_completions_then_replays_offline",
        record_then_replay,
    )];
    libtest_mimic::run(&args, trials).exit_code()
}

fn record_then_replay() -> Result<(), Failed> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start tokio: {e}"))?;
    let server = runtime.block_on(fake_openai::start(KEY));
    let base_url = fake_openai::base_url(&server);
    let copy = Copy::new()?;
    let recordings = copy.root.join(SUITE).join("recordings");
    // Recorded afresh: none of the committed ones may stand in for a new one.
    let _ = std::fs::remove_dir_all(&recordings);
    let fixtures = cases(&copy.root.join(SUITE))?;

    let recorded = copy.run(&[
        ("RECORD", Some("1")),
        ("OPENAI_BASE_URL", Some(&base_url)),
        ("OPENAI_API_KEY", Some(KEY)),
    ])?;
    let calls = runtime
        .block_on(server.received_requests())
        .unwrap_or_default();
    if calls.len() != fixtures.len() {
        return Err(format!(
            "{} calls reached the server while recording, expected one per case ({}):\n{recorded}",
            calls.len(),
            fixtures.len()
        )
        .into());
    }
    for call in &calls {
        let authorization = call
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok());
        if authorization != Some(&format!("Bearer {KEY}")) {
            return Err(
                format!("a call reached the server without the key: {authorization:?}").into(),
            );
        }
    }
    for case in &fixtures {
        let file = recordings.join(format!("{case}.json"));
        let text = std::fs::read_to_string(&file)
            .map_err(|e| format!("no recording {}: {e}\n{recorded}", file.display()))?;
        if text.contains(KEY) || text.contains("Bearer") {
            return Err(format!("{} holds the API key", file.display()).into());
        }
        check_usage(&file, &text)?;
        let committed = crate_root()
            .join(SUITE)
            .join("recordings")
            .join(format!("{case}.json"));
        if std::env::var_os("ASYNC_AGENT_RERECORD").is_some() {
            std::fs::copy(&file, &committed)
                .map_err(|e| format!("{}: {e}", committed.display()))?;
            continue;
        }
        let committed_text = std::fs::read_to_string(&committed).map_err(|e| {
            format!(
                "{}: {e}; re-record with ASYNC_AGENT_RERECORD=1 cargo test -p async-agent --test record_replay",
                committed.display()
            )
        })?;
        if exchanges(&text)? != exchanges(&committed_text)? {
            return Err(format!(
                "{case}: the code now records other requests or responses than {}; re-record with ASYNC_AGENT_RERECORD=1 cargo test -p async-agent --test record_replay",
                committed.display()
            )
            .into());
        }
    }

    // Replay: no key, the server still up to count what reaches it.
    let replayed = copy.run(&[
        ("RECORD", Some("0")),
        ("OPENAI_BASE_URL", Some(&base_url)),
        ("OPENAI_API_KEY", None),
    ])?;
    let after = runtime
        .block_on(server.received_requests())
        .unwrap_or_default()
        .len();
    if after != calls.len() {
        return Err(format!(
            "the replay made {} call(s) to the server:\n{replayed}",
            after - calls.len()
        )
        .into());
    }
    Ok(())
}

/// The case names of a suite folder (file stems of its fixtures).
fn cases(dir: &Path) -> Result<Vec<String>, Failed> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let name = entry.map_err(|e| e.to_string())?.file_name();
        if let Some(stem) = name.to_string_lossy().strip_suffix(".json") {
            names.push(stem.to_string());
        }
    }
    names.sort();
    Ok(names)
}

/// Each interaction of a recording made through `ChatCompletions` carries the tokens its
/// response's `usage` object reports, of the model that answered.
fn check_usage(file: &Path, recording: &str) -> Result<(), Failed> {
    let recording: Value =
        serde_json::from_str(recording).map_err(|e| format!("a recording is not JSON: {e}"))?;
    let interactions = recording["interactions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if interactions.is_empty() {
        return Err(format!("{}: no interaction", file.display()).into());
    }
    for interaction in interactions {
        let reported = &interaction["response"]["usage"];
        let expected = serde_json::json!({
            "model": interaction["response"]["model"],
            "input_tokens": reported["prompt_tokens"],
            "output_tokens": reported["completion_tokens"],
        });
        if interaction["usage"] != expected || !reported["prompt_tokens"].is_u64() {
            return Err(format!(
                "{}: usage {} where the response reports {reported}",
                file.display(),
                interaction["usage"]
            )
            .into());
        }
    }
    Ok(())
}

/// A recording's requests and responses, without the times they were made.
fn exchanges(recording: &str) -> Result<Vec<(Value, Value)>, Failed> {
    let recording: Value =
        serde_json::from_str(recording).map_err(|e| format!("a recording is not JSON: {e}"))?;
    Ok(recording["interactions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|i| (i["request"].clone(), i["response"].clone()))
        .collect())
}

fn crate_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A copy of this crate's suite and prompts in a temporary folder, which a child run takes as
/// its crate root: the check never touches the committed files (unless asked to re-record).
struct Copy {
    root: PathBuf,
}

impl Copy {
    fn new() -> Result<Copy, Failed> {
        let root = std::env::temp_dir().join(format!("async-agent-record-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for dir in ["fixtures", "prompts"] {
            copy_dir(&crate_root().join(dir), &root.join(dir))
                .map_err(|e| format!("copying {dir}: {e}"))?;
        }
        Ok(Copy { root })
    }

    /// Runs the suite in the copy with these variables set (`None`: removed); fails unless it
    /// passes. Returns what it printed.
    fn run(&self, vars: &[(&str, Option<&str>)]) -> Result<String, Failed> {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let mut command = Command::new(exe);
        command
            .env(CHILD, "1")
            .env("CARGO_MANIFEST_DIR", &self.root)
            .env_remove("PROPOSAL_EVAL_RECORD")
            .env("NO_COLOR", "1")
            .current_dir(&self.root)
            .args(["--test-threads", "2"]);
        for (name, value) in vars {
            match value {
                Some(value) => command.env(name, value),
                None => command.env_remove(name),
            };
        }
        let output = command
            .output()
            .map_err(|e| format!("cannot run the suite: {e}"))?;
        let printed = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        if !output.status.success() {
            let names: Vec<&str> = vars.iter().map(|(name, _)| *name).collect();
            return Err(format!("the suite failed (with {names:?} set):\n{printed}").into());
        }
        Ok(printed)
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
