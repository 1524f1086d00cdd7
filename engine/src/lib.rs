//! The pure engine of proposal-eval: what a model produced, compared with what a fixture expects.
//!
//! Every function here takes `serde_json::Value`s and a config and returns a value: no file, no
//! clock (the caller passes "now" in a [`transform::Context`]), no environment, no process. The
//! crate's dependencies make that a fact: serde, serde_json, `similar` for diffs, `regex` for
//! redaction patterns and chrono without its clock.
//!
//! - [`path`]: the one path grammar (`invoice.line_items[*].amount`) of ignore lists,
//!   transformers, field-accuracy fields and every path printed.
//! - [`normalize`], [`transform`], [`compare`]: the strict evaluator.
//! - [`accuracy`] and [`fuzzy`]: field-by-field scoring.
//! - [`render`]: failure text and diffs, apart from deciding.
//! - [`dates`] and [`numbers`]: how a date or a number written as a string is read, one rule
//!   each for the transformers and field accuracy.
//! - [`credentials`]: what looks like a credential in a document or a query string, which is
//!   never written to a recording.
//! - [`redact`]: what is taken out of a model call before it is recorded, and how a replay
//!   compares a request with a redacted one.
//! - [`rubric`]: rubric statements, the judge's prompt and answer, grading and agreement with
//!   human labels.
//! - [`stats`]: Wilson intervals, the exact McNemar test and t intervals of `compare`.
//! - [`trajectory`]: the tool calls in model responses, checked against an expected
//!   trajectory.
//! - [`checks`]: text, value and schema checks on parts of the output; [`budget`]: a case's
//!   limits on what its model calls cost.
//! - [`json`]: JSON equality, ordering and canonical forms, shared by all of them.
//!
//! Users reach these modules through the `proposal-eval` crate, which re-exports them at
//! `proposal_eval::compare`, `proposal_eval::accuracy` and so on.
//!
//! ```
//! use proposal_eval_engine::compare::{evaluate, StrictConfig};
//! use proposal_eval_engine::transform::Context;
//! use serde_json::json;
//!
//! let expected = json!([{"changeType": "change", "newValue": 120}]);
//! let actual = json!([{"changeType": "change", "newValue": "120"}]);
//! let ctx = Context::at("2025-03-04T15:16:17Z".parse().unwrap());
//! let config = StrictConfig::default();
//! let verdict = evaluate(&expected, &actual, &config, None, &ctx);
//! assert!(!verdict.passed());
//! assert_eq!(
//!     verdict.mismatches[0].to_string(),
//!     r#"[0].newValue: values differ: expected 120, actual "120""#
//! );
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod accuracy;
mod assignment;
pub mod budget;
pub mod checks;
pub mod compare;
pub mod credentials;
pub mod dates;
pub mod fuzzy;
pub mod json;
pub mod normalize;
pub mod numbers;
pub mod path;
mod query;
pub mod redact;
pub mod render;
pub mod rubric;
#[cfg(feature = "schema")]
pub mod schema;
pub mod stats;
pub mod trajectory;
pub mod transform;
