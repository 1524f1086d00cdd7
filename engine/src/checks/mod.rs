//! Checks on parts of the output (the `checks` evaluator): `{ "path": "reply", "contains":
//! "refund" }`, one operator per check.
//!
//! - [`Check`] is one check as a fixture's `checks` or a suite's `[[checks]]` writes it: a
//!   [`path`](crate::path) and one [`Op`]: `contains`, `icontains`, `not_contains`, `regex`,
//!   `equals`, `one_of`, `min_length`, `max_length` or `json_schema`. An unknown operator, two
//!   operators or none, and a regex that does not compile (at its character) are errors when the
//!   check is read, before anything runs.
//! - [`evaluate`] applies each check to every value its path matches in the output. The text
//!   operators and the lengths take strings (lengths count characters, not bytes; `icontains`
//!   compares the text lower-cased); `equals` and `one_of` take any JSON, numbers by value. A
//!   check whose path matches nothing fails, saying so: a wildcard over an empty list never
//!   passes by default.
//! - A check passes when every value it matches passes; the score is passed checks / checks,
//!   and the verdict passes when every check does. Each failing value is one line naming the
//!   path, the check and the value, cut at 120 characters:
//!   `[1].text: contains "refund": actual "Order A-1001 is shipped"`.
//!
//! `json_schema` names a file; reading and compiling it is the caller's (the engine touches no
//! file), who passes a validator to [`evaluate`].
//!
//! ```
//! use proposal_eval_engine::checks::{evaluate, no_schemas, Check};
//! use serde_json::json;
//! let checks: Vec<Check> = serde_json::from_value(json!([
//!     { "path": "reply", "icontains": "REFUND" },
//!     { "path": "reply", "max_length": 20 },
//!     { "path": "tags[*]", "one_of": ["billing", "shipping"] },
//! ]))
//! .unwrap();
//! let output = json!({ "reply": "Your refund is on its way.", "tags": ["billing", "spam"] });
//! let verdict = evaluate(&checks, &output, &no_schemas);
//! assert_eq!(verdict.score, 1.0 / 3.0);
//! assert_eq!(
//!     verdict.render(),
//!     "1 of 3 checks passed, score 0.33\n\
//!      \x20 reply: max_length 20: actual \"Your refund is on its way.\" (26 characters)\n\
//!      \x20 tags[1]: one_of [\"billing\",\"shipping\"]: actual \"spam\"\n"
//! );
//! ```

mod check;
mod run;

pub use check::{Check, CheckError, Op};
pub use run::{evaluate, no_schemas, ChecksVerdict, FailedCheck, VALUE_CAP};

#[cfg(test)]
mod tests;
