//! Fixture-driven evals for code that asks a language model for structured output.
//!
//! A folder of JSON fixture files becomes one test per fixture. The code under test calls the
//! model through an [`Llm`] handle that replays recorded responses, so tests are deterministic
//! and offline; each recording carries the SHA-256 of the files it was made from and is refused
//! when they changed. `RECORD=1 cargo test` re-records. What the code produced ("proposals":
//! data changes, extracted fields, tool calls) is checked strictly ([`compare`]) or scored field
//! by field ([`accuracy`]) or by an external script (`[[code_judge]]` in the suite config).
//!
//! Four names are the whole everyday surface: [`Case`] (one fixture, as the code under test sees
//! it), [`Llm`] (the model handle), [`Model`] (your live client, used only to record), and either
//! the [`proposal_eval`] attribute or the [`Harness`].
//!
//! # Quickstart
//!
//! A fixture, `fixtures/payments/raise_amount.json`:
//!
//! ```json
//! {
//!   "description": "Raise payment amount for user 42",
//!   "input": { "message": "Please change my payment to 120 EUR", "userId": "42" },
//!   "expected": [{ "changeType": "change", "changedField": "payment.amount", "newValue": 120 }]
//! }
//! ```
//!
//! A test file, `tests/evals.rs` (the suite below is this repository's own `fixtures/quickstart`):
//!
//! ```
//! use proposal_eval::{proposal_eval, Case, Llm, Model, ModelError};
//! use serde_json::{json, Value};
//!
//! /// Your real client goes here; it is built only when something is recorded.
//! pub fn live_model() -> impl Model {
//!     |request: &Value| -> Result<Value, ModelError> { Err(ModelError::new("no key in docs")) }
//! }
//!
//! #[proposal_eval(fixtures = "../fixtures/quickstart", model = live_model)]
//! fn payments(case: &Case, llm: &mut Llm) -> proposal_eval::Result<Vec<Value>> {
//!     let reply = llm.complete(&json!({ "message": case.input["message"] }))?;
//!     Ok(serde_json::from_value(reply["proposals"].clone())?)
//! }
//! # fn main() {}
//! ```
//!
//! `cargo test` now runs one test per fixture (`quickstart::raise_amount`, ...).
//! `RECORD=1 cargo test` calls the live model and writes `<suite>/recordings/<case>.json`;
//! commit those files and CI replays them with no key and no network.
//!
//! The same suite as a run-time harness (`[[test]] name = "evals" harness = false`), which picks
//! up new fixture files without a rebuild: see [`Harness`].
//!
//! # What a failure looks like
//!
//! ```text
//! payments/raise_amount: strict FAILED (score 0)
//!   [0].newValue: values differ: expected 120, actual "120"
//! --- expected (normalized; ignored paths shown as "<ignored>")
//! +++ actual (normalized)
//! @@ -3,5 +3,5 @@
//! ...
//! re-run: cargo test -p payments-agent --test evals -- payments::raise_amount --exact
//! ```
//!
//! # Cargo features
//!
//! | feature | what it adds |
//! |---|---|
//! | `tokio` | `async fn` cases run on a current-thread tokio runtime, so tokio-based clients (reqwest, async-openai) work in them; without it they run on a minimal executor with no timers and no I/O |
//! | `openai` | `openai::ChatCompletions`: a ready live [`Model`] for an OpenAI-compatible chat completions endpoint, with retries, `Retry-After` and a timeout |
//!
//! # Environment
//!
//! | variable | effect |
//! |---|---|
//! | `PROPOSAL_EVAL_RECORD` (short form `RECORD`) | unset/`0` replay; `1`/`all` record every selected case; `stale` record missing or stale recordings only; `review` record into `<case>.pending.json` for `cargo proposal-eval review`, leaving the committed recording as it is |
//! | `NO_COLOR` | no colours in failure output |
//! | `PROPOSAL_EVAL_MAX_CONCURRENCY` | live model calls at once while recording (default 8, whatever the cores), across every test process of the target folder (nextest runs one per test) |
//! | `PROPOSAL_EVAL_UPSTREAM`, `PROPOSAL_EVAL_UPSTREAM_<NAME>` | the HTTP upstreams of `llm.base_url()` / `llm.base_url_for(name)` (feature `http`), over `[http]` in the suite config |
//! | `PROPOSAL_EVAL_BUDGET_USD` | while recording, no live call once the estimated cost (`[pricing]`) has passed it |
//!
//! # Design
//!
//! A pure engine and an I/O shell. [`path`], [`normalize`], [`transform`], [`compare`],
//! [`accuracy`], [`fuzzy`], [`redact`], [`rubric`] and [`trajectory`] come from the
//! `proposal-eval-engine` crate (the types of a suite's configuration and the verdicts are
//! theirs): they take `serde_json::Value`s and a config and return a verdict, and that crate's
//! dependencies cannot reach the file system, the clock, the environment or processes. This
//! crate is the shell: suite files, running a case, reports and judge processes; recordings and
//! the model handle are its lower half, the `proposal-eval-recording` crate, re-exported here
//! (a crate of its own only so that a first build compiles the two halves side by side).
//! The macro generates one `#[test]` per fixture that calls one runtime function, so both front
//! ends share every behaviour: names, verdicts and messages.
//!
//! The user's guide and the reference (fixture format, config keys, environment variables,
//! recording format, failure output, the `cargo proposal-eval` commands) are in the repository's
//! `docs/` folder.
#![deny(missing_docs)]
#![deny(unsafe_code)]
// Without `__internal` (a user's build) the code only the CLI reaches is not exported, so it is
// not compiled into the test binary; the warnings for it are for builds that have the feature.
#![cfg_attr(not(feature = "__internal"), allow(dead_code, unused_imports))]

#[cfg(test)]
mod bad_input;
mod case_result;
mod code_judge;
mod front;
#[cfg(feature = "openai")]
pub mod openai;
mod process;
// `cargo proposal-eval status` and `review`: not in a user's build.
#[cfg(feature = "__internal")]
mod recordings;
mod repeat;
mod report;
mod rubric_judge;
mod run;
#[cfg(feature = "schema")]
mod schema;
mod stale;
mod suite;

use proposal_eval_naming as naming;
use proposal_eval_recording::{env, files, layout, messages, panics, recording, sys, toml_read};

pub use front::harness::Harness;
pub use proposal_eval_engine::{
    accuracy, budget, checks, compare, fuzzy, normalize, path, redact, rubric, trajectory,
    transform,
};
pub use proposal_eval_macros::proposal_eval;
pub use recording::calls::LlmError;
pub use recording::llm::Llm;
pub use recording::model::{Model, ModelError};
pub use recording::usage::{Completion, Usage};
pub use run::case::{Case, CaseOutput, OutputError};

/// The error type of a case function: anything that is an error converts into it with `?`.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// `Result<T, proposal_eval::Error>`: the return type that lets a case use `?` on model calls,
/// JSON conversions and its own errors.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A suite's configuration as Rust values: what `proposal-eval.toml` holds, for a suite built in
/// code and handed to [`Harness::with_config`] (where transforms may be closures).
///
/// ```
/// use proposal_eval::compare::StrictConfig;
/// use proposal_eval::config::{Evaluator, SuiteConfig};
///
/// let config = SuiteConfig {
///     evaluators: vec![Evaluator::Strict],
///     strict: StrictConfig::new().ignore_path("metadata").unwrap(),
///     ..SuiteConfig::default()
/// };
/// assert!(config.field_accuracy.fields.is_empty());
/// ```
pub mod config {
    pub use crate::code_judge::CodeJudgeConfig;
    /// The name `[[code_judge]]`'s type had before it was named for the code judge.
    #[deprecated(note = "renamed CodeJudgeConfig")]
    pub type JudgeConfig = crate::code_judge::CodeJudgeConfig;
    pub use crate::recording::upstream::{
        HttpConfig, UpstreamName, UpstreamNameError, UpstreamUrl, UpstreamUrlError,
    };
    pub use crate::recording::usage::Pricing;
    pub use crate::recording::{RecordingConfig, Validation};
    pub use crate::repeat::{PassRule, RunConfig};
    #[allow(deprecated)]
    pub use crate::rubric_judge::LlmJudgeConfig;
    pub use crate::rubric_judge::RubricJudgeConfig;
    pub use crate::suite::config::{ConfigError, Evaluator, SuiteConfig};
}

#[doc(hidden)]
pub use front::macro_support as __macro_support;

/// Not part of the API (no documentation, no semver promise): the door through which
/// `cargo proposal-eval` and this repository's own tests reach the shell's internals. Only with
/// the feature `__internal`, which a user's crate does not name.
#[doc(hidden)]
#[cfg(feature = "__internal")]
pub mod __internal {
    #![allow(missing_docs)]
    // Each group names who uses it; an item no one in this repository uses is not listed.

    // cli (`files`, `schemas`): writing generated files.
    pub use crate::files::write_atomic;
    // runtime/benches/proxy.rs: the benchmark's own loopback client.
    #[cfg(feature = "http")]
    pub use crate::sys::no_delay;
    // cli (`files`, `schemas`): the canonical JSON the recordings and schemas are written in.
    pub mod json {
        pub use proposal_eval_engine::json::{canonical_pretty, sorted};
    }
    // runtime/tests/code_judge.rs and `code_judge`'s doctests: a code judge run on its own.
    pub mod code_judge {
        pub use crate::code_judge::{
            run, CodeJudgeConfig, CodeJudgeError, CodeJudgeInput, CodeJudgeVerdict,
        };
    }
    // cli `judge`.
    pub mod judge_calibration {
        pub use crate::rubric_judge::calibration::{
            advisory, calibrate, rubric_statements, unmatched, Calibration, Unmatched, LABELS_FILE,
        };
    }
    // cli tests (`review`), runtime/benches/rubric.rs and bench/suite-scale: a recorded judge
    // part built by hand.
    pub mod rubric_judge {
        pub use crate::rubric_judge::{JudgeCall, Judgement, KeyParts, RecordedVerdict};
    }
    // cli `generate`: the generator command run as a child process.
    pub mod process {
        pub use crate::process::{describe_status, run, ProcessError, Program};
    }
    // cli (`status`, `review`, `migrate`, `suites`, schema tests), cli tests, runtime benches,
    // bench/suite-scale, fuzz and examples/first-suite: recordings read, written and built by hand.
    pub mod recording {
        pub use crate::recording::sources::{compare_sources, glob, hash_content, hash_source};
        pub use crate::recording::{
            canonical_pretty, input_digest, orphans, Interaction, Recording, Sample, Source,
            SourceChange, FORMAT,
        };
        // `credentials`' doctest.
        pub mod credentials {
            pub use crate::recording::credentials::scan_recording;
        }
        // cli `comparison`: a report's usage, before and after.
        pub mod usage {
            pub use crate::recording::usage::UsageTotals;
        }
    }
    // cli (`report`, `compare`, `comparison`, `junit`), cli tests and benches, runtime tests.
    pub mod report {
        pub use crate::report::{
            fold, fold_at_run_end, unreadable_summary, CaseId, Entry, EvaluatorEntry, FieldEntry,
            RecordingUse, Report, StoryRef, Totals, FORMAT,
        };
        // cli `comparison`: a suite's accuracy per field, before and after.
        pub use crate::report::FieldAccuracy;
        // cli `junit`: a failure's text capped as a report's entry is.
        pub use crate::run::{cap_text, TEXT_CAP};
        // cli (`report --compare`) and runtime/tests/report_html.rs (the page is report.json's).
        pub mod page {
            pub use crate::report::page::write;
        }
        // cli (`report --merge`).
        pub mod merge {
            pub use crate::report::merge::merge;
        }
    }
    // cli (`comparison`: a suite's repeats and a case's samples, before and after), cli tests
    // (`compare`) and `repeat`'s doctests.
    pub mod repeat {
        pub use crate::repeat::{pass_at_k, pass_hat_k, PassRule, RepeatSummary, Samples};
    }
    // cli (`status`, `migrate`, `prune`), runtime tests and bench/suite-scale.
    pub mod status {
        pub use crate::recordings::status::{migrate, Migration, State, SuiteStatus};
    }
    // cli `review` and its tests, examples/first-suite.
    pub mod review {
        pub use crate::recording::pending::{AcceptError, Outcome, Pending, Review};
        pub use crate::recordings::review::{Evaluated, PendingCase, Side, SuiteReview};
        pub use crate::run::format_score;
    }
    // cli (`draft`, `generate`, `promote`, `runlog`), cli tests and bench/suite-scale.
    pub mod draft {
        pub use crate::suite::draft::{
            canonical_json, content_sha256, sha256_hex, Assertions, Draft, DraftSource, EditSource,
            GeneratorMeta, KEY,
        };
    }
    // cli (`schemas`, `promote`, `status`), cli tests, bench/suite-scale and fuzz.
    pub mod fixture {
        pub use crate::suite::fixture::{discover, FixtureFile, FixturePath, Status};
    }
    /// The JSON Schemas of the file formats, from which `schemas/` is generated.
    #[cfg(feature = "schema")]
    pub mod schema {
        pub use crate::schema::{config, fixture, recording, report};
    }
    /// What `runtime/benches/rubric.rs` measures: one case of a suite run as a test runs it
    /// (fixture read and parsed, recording read and checked, replay, judge key, evaluators),
    /// without the report and libtest around it.
    pub mod case_run {
        use std::path::Path;
        use std::sync::Arc;

        pub use crate::rubric_judge::{JudgeKey, Question};

        /// A suite opened as the harness opens it.
        pub struct OpenSuite(Arc<crate::suite::Suite>);

        impl OpenSuite {
            /// The suite folder `fixtures` (relative to `crate_root`), its config read.
            pub fn open(crate_root: &Path, fixtures: &Path) -> OpenSuite {
                let suite =
                    crate::suite::Suite::new(crate_root.to_path_buf(), fixtures, None, None, None);
                OpenSuite(Arc::new(suite))
            }

            /// Runs the case `relative` (`cases/c00001.json`) with `f`; its failure message.
            pub fn run<F, R>(&self, relative: &str, f: F) -> Result<(), String>
            where
                F: Fn(&crate::Case, &mut crate::Llm) -> R,
                R: crate::CaseOutput,
            {
                let path = crate::suite::fixture::FixturePath {
                    relative: relative.to_string(),
                    absolute: self.0.dir.join(relative),
                };
                let mut loaded = crate::suite::LoadedCase::load(&self.0, path);
                let result = crate::run::run_case(&self.0, &mut loaded, &|case, llm| {
                    f(case, llm).into_output()
                });
                result.failure.map_or(Ok(()), Err)
            }
        }
    }
    /// What `runtime/benches/proxy.rs` measures: the loopback server of a replaying `Llm`.
    pub mod llm {
        /// An `Llm` replaying `interactions` in order (no ignore paths, default redaction).
        pub fn replay(interactions: Vec<crate::recording::Interaction>) -> crate::Llm {
            crate::recording::llm::Llm::replay(interactions, Vec::new(), Default::default())
        }
    }
}

/// The Rust examples of `docs/reference/rust-api.md`, run as doctests so the reference cannot
/// drift from the API (the guide's examples are checked by `examples/first-suite`).
#[cfg(doctest)]
#[doc = include_str!("../../docs/reference/rust-api.md")]
mod rust_api_doctests {}

/// The Rust examples of `docs/reference/trajectories.md`.
#[cfg(doctest)]
#[doc = include_str!("../../docs/reference/trajectories.md")]
mod trajectories_doctests {}

/// The examples of `docs/reference/openai.md`, which need the `openai` feature.
#[cfg(all(doctest, feature = "openai"))]
#[doc = include_str!("../../docs/reference/openai.md")]
mod openai_doctests {}

/// The Rust examples of `docs/reference/http.md`, which need the `http` feature.
#[cfg(all(doctest, feature = "http"))]
#[doc = include_str!("../../docs/reference/http.md")]
mod http_doctests {}
