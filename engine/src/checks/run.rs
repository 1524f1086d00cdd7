//! Applying checks to an output, and the verdict's text.

use super::check::{Check, Op};
use crate::json::json_eq;
use crate::path::PatternSegment;
use crate::render::compact;
use serde_json::Value;

/// How many characters of a value a failure line shows.
pub const VALUE_CAP: usize = 120;

/// A schema validator that knows no schema: every `json_schema` check fails, saying so. For
/// check lists without one.
pub fn no_schemas(file: &str, _: &Value) -> Result<(), String> {
    Err(format!("no validator was given for the schema `{file}`"))
}

/// One value that failed its check.
#[derive(Clone, Debug, PartialEq)]
pub struct FailedCheck {
    /// The check's index in the list given to [`evaluate`].
    pub check: usize,
    /// The failing value's place (the check's path as written when it matched nothing).
    pub path: String,
    /// `path: check: why`, the line a failure shows.
    pub line: String,
}

/// What [`evaluate`] decided.
#[derive(Clone, Debug, PartialEq)]
pub struct ChecksVerdict {
    /// Checks given.
    pub checks: usize,
    /// Checks whose every value passed.
    pub passed_checks: usize,
    /// passed checks / checks (1 with no check).
    pub score: f64,
    /// Whether every check passed.
    pub passed: bool,
    /// Each failing value, in check order then document order.
    pub failures: Vec<FailedCheck>,
}

impl ChecksVerdict {
    /// One line: `4 of 5 checks passed, score 0.80`.
    pub fn summary(&self) -> String {
        let score = if self.score.fract() == 0.0 {
            format!("{}", self.score)
        } else {
            format!("{:.2}", self.score)
        };
        format!(
            "{} of {} checks passed, score {score}",
            self.passed_checks, self.checks
        )
    }

    /// The failure lines, one per failing value.
    pub fn misses(&self) -> Vec<String> {
        self.failures.iter().map(|f| f.line.clone()).collect()
    }

    /// The summary, then each failure line indented.
    pub fn render(&self) -> String {
        let mut out = format!("{}\n", self.summary());
        for failure in &self.failures {
            out.push_str("  ");
            out.push_str(&failure.line);
            out.push('\n');
        }
        out
    }
}

/// Applies `checks` to `output`; `schema` validates a value against a `json_schema` check's
/// file (`Err` holds why it is not valid).
pub fn evaluate<'c>(
    checks: impl IntoIterator<Item = &'c Check>,
    output: &Value,
    schema: &dyn Fn(&str, &Value) -> Result<(), String>,
) -> ChecksVerdict {
    let mut count = 0;
    let mut passed_checks = 0;
    let mut failures = Vec::new();
    for (index, check) in checks.into_iter().enumerate() {
        count += 1;
        let before = failures.len();
        // A path without wildcards (most of them) is walked without building its location,
        // which is made only for a failure line.
        if let Some(value) = concrete(check.path.segments(), output) {
            let failed = match value {
                None => Some("the path matches nothing in the output".to_string()),
                Some(value) => apply(&check.op, value, schema).err(),
            };
            if let Some(why) = failed {
                let path = match (value, check.path.as_location()) {
                    (Some(_), Some(location)) => location.to_string(),
                    _ => check.path.as_str().to_string(),
                };
                failures.push(FailedCheck {
                    check: index,
                    line: format!("{path}: {check}: {why}"),
                    path,
                });
            }
            passed_checks += usize::from(failures.len() == before);
            continue;
        }
        let found = check.path.find(output);
        if found.is_empty() {
            failures.push(FailedCheck {
                check: index,
                path: check.path.as_str().to_string(),
                line: format!(
                    "{}: {check}: the path matches nothing in the output",
                    check.path
                ),
            });
        }
        for location in found {
            let Some(value) = location.get(output) else {
                continue;
            };
            if let Err(why) = apply(&check.op, value, schema) {
                failures.push(FailedCheck {
                    check: index,
                    path: location.to_string(),
                    line: format!("{location}: {check}: {why}"),
                });
            }
        }
        if failures.len() == before {
            passed_checks += 1;
        }
    }
    let score = if count == 0 {
        1.0
    } else {
        passed_checks as f64 / count as f64
    };
    ChecksVerdict {
        checks: count,
        passed_checks,
        score,
        passed: passed_checks == count,
        failures,
    }
}

/// The value a pattern without wildcards names in `output` (`Some(None)` when there is none);
/// `None` when the pattern has a wildcard.
fn concrete<'v>(segments: &[PatternSegment], output: &'v Value) -> Option<Option<&'v Value>> {
    let mut value = Some(output);
    for segment in segments {
        value = match (segment, value) {
            (PatternSegment::Key(key), Some(Value::Object(map))) => map.get(key),
            (PatternSegment::Index(i), Some(Value::Array(items))) => items.get(*i),
            (PatternSegment::Key(_) | PatternSegment::Index(_), _) => None,
            _ => return None,
        };
    }
    Some(value)
}

/// `Ok` when `value` passes `op`; else why not, with the value shown.
fn apply(
    op: &Op,
    value: &Value,
    schema: &dyn Fn(&str, &Value) -> Result<(), String>,
) -> Result<(), String> {
    let actual = || format!("actual {}", compact(value, VALUE_CAP));
    let text = || match value {
        Value::String(text) => Ok(text.as_str()),
        other => Err(format!(
            "{}, which is {}, not a string",
            actual(),
            kind(other)
        )),
    };
    let holds = |ok: bool| if ok { Ok(()) } else { Err(actual()) };
    match op {
        Op::Contains(needle) => holds(text()?.contains(needle.as_str())),
        Op::IContains(needle) => holds(text()?.to_lowercase().contains(&needle.to_lowercase())),
        Op::NotContains(needle) => holds(!text()?.contains(needle.as_str())),
        Op::Regex(regex) => holds(regex.is_match(text()?)),
        Op::Equals(expected) => holds(json_eq(expected, value)),
        Op::OneOf(allowed) => holds(allowed.iter().any(|a| json_eq(a, value))),
        Op::MinLength(min) => {
            let length = text()?.chars().count();
            match length >= *min {
                true => Ok(()),
                false => Err(format!("{} ({length} characters)", actual())),
            }
        }
        Op::MaxLength(max) => {
            let length = text()?.chars().count();
            match length <= *max {
                true => Ok(()),
                false => Err(format!("{} ({length} characters)", actual())),
            }
        }
        Op::JsonSchema(file) => schema(file, value),
    }
}

/// `a number`, `an object`: what a value is, for a text check that got another kind.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
