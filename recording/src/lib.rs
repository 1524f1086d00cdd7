//! The recording side of [proposal-eval](https://docs.rs/proposal-eval): the model handle
//! ([`Llm`]), recordings and their files, the HTTP proxy of `llm.base_url()`, and the suite's
//! files and environment that they use. Not an API of its own: everything a user calls is
//! re-exported by `proposal-eval`, which documents it; the modules here are its internals.
//!
//! A crate of its own so that a user's first build compiles it beside the rest of the runtime:
//! rustc generates this crate's code while it checks the runtime's, where one crate would do the
//! two one after the other (bench/cold-build/README.md in the repository, "The recording crate").
#![deny(missing_docs)]
#![deny(unsafe_code)]

#[doc(hidden)]
pub mod env;
#[doc(hidden)]
pub mod files;
#[doc(hidden)]
pub mod layout;
#[doc(hidden)]
pub mod messages;
#[doc(hidden)]
pub mod panics;
#[doc(hidden)]
pub mod recording;
#[doc(hidden)]
pub mod sys;
#[doc(hidden)]
pub mod toml_read;

use proposal_eval_engine::{path, redact};

pub use recording::llm::Llm;
pub use recording::model::{Model, ModelError};
pub use recording::usage::{Completion, Usage};
