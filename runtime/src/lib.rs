//! proposal-eval (crate docs are written with the front ends).
#![deny(missing_docs)]

#[doc(hidden)]
#[path = "macro_support.rs"]
pub mod __macro_support;
pub mod accuracy;
mod case;
pub mod compare;
pub mod config;
mod diff;
pub mod draft;
pub mod env;
pub mod fixture;
pub mod fuzzy;
mod harness;
pub mod judge;
mod llm;
mod naming;
pub mod normalize;
pub mod output;
pub mod path;
pub mod recording;
pub mod report;
pub mod run;
pub mod transform;

pub use case::{Case, CaseOutput};
pub use harness::Harness;
pub use llm::{Llm, LlmError, Model, ModelError};
pub use proposal_eval_macros::proposal_eval;

/// The error type of a case function: anything that is an error converts into it with `?`.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// `Result<T, proposal_eval::Error>`: the return type that lets a case use `?` on model calls,
/// JSON conversions and its own errors.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The settings read from the environment, once per process.
pub(crate) fn settings() -> std::result::Result<&'static env::Settings, env::EnvError> {
    static SETTINGS: std::sync::OnceLock<std::result::Result<env::Settings, env::EnvError>> =
        std::sync::OnceLock::new();
    SETTINGS
        .get_or_init(env::Settings::from_env)
        .as_ref()
        .map_err(Clone::clone)
}
