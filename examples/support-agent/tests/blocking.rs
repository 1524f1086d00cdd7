//! The same suite with the blocking agent (`support_agent::blocking`), as plain `fn` cases:
//! `cargo test -p support-agent --test blocking` replays the committed recordings, offline and
//! with no key. The blocking agent asks the same requests as the async one, so one set of
//! recordings serves both suites; `RECORD=1` records as `tests/evals.rs` says.

mod fake_openai;
mod suite;

use proposal_eval::Harness;
use std::process::ExitCode;

fn main() -> ExitCode {
    let fake = fake_openai::for_recording();
    let code = Harness::new("fixtures/support").run(suite::support_blocking);
    if let Some(fake) = fake {
        fake.stop_and_report();
    }
    code
}
