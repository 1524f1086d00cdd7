//! [`Case`]: what the code under test receives for one fixture, and [`CaseOutput`]: what it may
//! return.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use std::fmt::Display;

/// One fixture, as the code under test sees it.
///
/// ```
/// use proposal_eval::{Case, Llm};
/// fn payments(case: &Case, llm: &mut Llm) -> proposal_eval::Result<serde_json::Value> {
///     let reply = llm.complete(&serde_json::json!({ "prompt": case.input["message"] }))?;
///     Ok(reply["proposals"].clone())
/// }
/// ```
#[derive(Clone, Debug)]
pub struct Case {
    /// The test name: `suite::sub::case`.
    pub name: String,
    /// The fixture path relative to the suite, without `.json`: `sub/case`.
    pub path: String,
    /// The fixture's `description`.
    pub description: Option<String>,
    /// The fixture's `input`.
    pub input: Value,
    pub(crate) now: DateTime<Utc>,
}

impl Case {
    /// The case's clock: during replay, the time the recording was made, so date-dependent
    /// expectations still hold months later; otherwise the real time.
    pub fn now(&self) -> DateTime<Utc> {
        self.now
    }
}

/// What the code under test may return: `Vec<T: Serialize>`, `serde_json::Value`, or a
/// `Result` of either whose error is `Display`. An `Err` fails the case with its message.
#[diagnostic::on_unimplemented(
    message = "a proposal_eval case cannot return `{Self}`",
    label = "the case function returns this",
    note = "return `Vec<T: Serialize>`, `serde_json::Value`, or a `Result` of either whose error is `Display` (e.g. `proposal_eval::Result<Vec<Value>>`)"
)]
pub trait CaseOutput {
    /// The output as JSON, or why the case failed.
    fn into_output(self) -> Result<Value, OutputError>;
}

/// Why a case produced no output to evaluate: it returned an `Err`, or its output is not JSON.
/// The case fails with this message.
///
/// ```
/// use proposal_eval::{CaseOutput, OutputError};
/// let failed: Result<Vec<u8>, &str> = Err("model refused");
/// let err: OutputError = failed.into_output().unwrap_err();
/// assert_eq!(err.to_string(), "the case returned an error: model refused");
/// assert_eq!(OutputError::new("no proposals").to_string(), "no proposals");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputError(String);

impl OutputError {
    /// An error with this message, for a [`CaseOutput`] of your own.
    pub fn new(message: impl Into<String>) -> OutputError {
        OutputError(message.into())
    }
}

impl Display for OutputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for OutputError {}

impl<T: Serialize> CaseOutput for Vec<T> {
    fn into_output(self) -> Result<Value, OutputError> {
        serde_json::to_value(self)
            .map_err(|e| OutputError(format!("the output cannot be serialized to JSON: {e}")))
    }
}

impl CaseOutput for Value {
    fn into_output(self) -> Result<Value, OutputError> {
        Ok(self)
    }
}

impl<T: CaseOutput, E: Display> CaseOutput for Result<T, E> {
    fn into_output(self) -> Result<Value, OutputError> {
        match self {
            Ok(t) => t.into_output(),
            Err(e) => Err(OutputError(format!("the case returned an error: {e}"))),
        }
    }
}
