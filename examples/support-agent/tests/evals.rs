//! The suite: `cargo test -p support-agent --test evals` replays the committed recordings,
//! offline and with no key.
//!
//! `RECORD=1 cargo test -p support-agent --test evals` records: against the upstream of
//! `fixtures/support/proposal-eval.toml` (the real API) when `PROPOSAL_EVAL_UPSTREAM` and
//! `OPENAI_API_KEY` are set, else against the fake OpenAI-compatible server of
//! `tests/fake_openai`, started here, which is how this repository's recordings were made.

mod fake_openai;
mod suite;

use proposal_eval::Harness;
use std::process::ExitCode;

fn main() -> ExitCode {
    let record = ["PROPOSAL_EVAL_RECORD", "RECORD"]
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .any(|v| !v.trim().is_empty() && v.trim() != "0");
    let fake = (record && std::env::var_os("PROPOSAL_EVAL_UPSTREAM").is_none()).then(|| {
        let fake = fake_openai::FakeOpenAi::start(std::time::Duration::ZERO);
        // Before the harness reads the environment; nothing else runs yet.
        std::env::set_var("PROPOSAL_EVAL_UPSTREAM", &fake.url);
        std::env::set_var("OPENAI_API_KEY", fake_openai::KEY);
        fake
    });
    let code = Harness::new("fixtures/support").run_async(suite::support);
    if let Some(fake) = fake {
        let seen = fake.stop();
        eprintln!(
            "fake OpenAI upstream: {} call(s) answered, {} refused for a wrong key",
            seen.calls, seen.refused
        );
    }
    code
}
