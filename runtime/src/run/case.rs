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
    /// The output as JSON, or the failure message.
    fn into_output(self) -> Result<Value, String>;
}

impl<T: Serialize> CaseOutput for Vec<T> {
    fn into_output(self) -> Result<Value, String> {
        serde_json::to_value(self)
            .map_err(|e| format!("the output cannot be serialized to JSON: {e}"))
    }
}

impl CaseOutput for Value {
    fn into_output(self) -> Result<Value, String> {
        Ok(self)
    }
}

impl<T: CaseOutput, E: Display> CaseOutput for Result<T, E> {
    fn into_output(self) -> Result<Value, String> {
        match self {
            Ok(t) => t.into_output(),
            Err(e) => Err(format!("the case returned an error: {e}")),
        }
    }
}
