//! An `async fn` case that uses tokio, run the way `#[proposal_eval]`'s generated test runs it:
//! with the `tokio` feature it passes; without it, it fails with a message that names the
//! feature instead of tokio's bare "no reactor running".
//!
//! `cargo test -p proposal-eval --test async_cases` checks the build without the feature (a
//! workspace build has it, since examples/async-agent turns it on); add `--features tokio` for
//! the other side.

use proposal_eval::__macro_support::{block_on, run, MacroSuite};
use proposal_eval::{Case, Llm};
use serde_json::Value;

static SUITE: MacroSuite = MacroSuite {
    crate_root: env!("CARGO_MANIFEST_DIR"),
    fixtures: "tests/async_suite",
    config: None,
    recordings: None,
    model: None,
    judge: None,
};

async fn sleeps(_case: &Case, _llm: &mut Llm) -> Vec<Value> {
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    Vec::new()
}

#[test]
fn an_async_case_on_tokio_runs_or_names_the_feature() {
    let outcome = std::panic::catch_unwind(|| {
        run(&SUITE, "sleeps.json", |case: &Case, llm: &mut Llm| {
            block_on(sleeps(case, llm))
        })
    });
    let tokio_feature = cfg!(feature = "tokio");
    match outcome {
        Ok(()) if tokio_feature => {}
        Ok(()) => panic!("passed without a tokio runtime"),
        Err(payload) => {
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .unwrap_or_default();
            if tokio_feature {
                panic!("failed with the feature on: {message}");
            }
            assert!(message.contains("there is no reactor running"), "{message}");
            assert!(
                message.contains("this case needs a tokio runtime, and async cases run on one only with proposal-eval's `tokio` feature: proposal-eval = { version = \"0.1\", features = [\"tokio\"] } in [dev-dependencies]"),
                "{message}"
            );
        }
    }
}
