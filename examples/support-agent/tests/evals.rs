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
    let fake = fake_openai::for_recording();
    let code = Harness::new("fixtures/support").run_async(suite::support);
    if let Some(fake) = fake {
        fake.stop_and_report();
    }
    code
}
