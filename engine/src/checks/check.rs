//! One check as written: a path and one operator, read (and its regex compiled) once.

use crate::path::Pattern;
use serde::Deserialize;
use serde_json::Value;
use std::fmt;
use std::sync::Arc;

/// What a check asks of each value its path matches.
#[derive(Clone, Debug)]
pub enum Op {
    /// The string holds this text.
    Contains(String),
    /// The string holds this text, in any case (both lower-cased).
    IContains(String),
    /// The string does not hold this text.
    NotContains(String),
    /// The regex matches somewhere in the string (anchor it with `^...$` for the whole).
    /// Shared: every check of one pattern uses one compiled regex and its match caches.
    Regex(std::sync::Arc<regex::Regex>),
    /// The value equals this JSON (numbers by value).
    Equals(Value),
    /// The value equals one of these.
    OneOf(Vec<Value>),
    /// The string has at least this many characters.
    MinLength(usize),
    /// The string has at most this many characters.
    MaxLength(usize),
    /// The value is valid under the JSON Schema in this file (relative to the suite folder).
    JsonSchema(String),
}

/// One check: `{ "path": "reply", "contains": "refund" }`.
#[derive(Clone, Debug, Deserialize)]
#[serde(try_from = "RawCheck")]
pub struct Check {
    /// Where in the output: a path, wildcards allowed (`items[*].note`).
    pub path: Pattern,
    /// What each value there must be.
    pub op: Op,
}

impl Check {
    /// A check of `op` at `path`.
    pub fn new(path: Pattern, op: Op) -> Check {
        Check { path, op }
    }

    /// The operator's key as written: `contains`, `regex`, `json_schema`...
    pub fn operator(&self) -> &'static str {
        match self.op {
            Op::Contains(_) => "contains",
            Op::IContains(_) => "icontains",
            Op::NotContains(_) => "not_contains",
            Op::Regex(_) => "regex",
            Op::Equals(_) => "equals",
            Op::OneOf(_) => "one_of",
            Op::MinLength(_) => "min_length",
            Op::MaxLength(_) => "max_length",
            Op::JsonSchema(_) => "json_schema",
        }
    }

    /// The schema file of a `json_schema` check.
    pub fn schema_file(&self) -> Option<&str> {
        match &self.op {
            Op::JsonSchema(file) => Some(file),
            _ => None,
        }
    }
}

/// The operator and its operand as a config writes them: `contains "refund"`, `max_length 80`.
impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = |t: &str| Value::from(t).to_string();
        let operand = match &self.op {
            Op::Contains(t) | Op::IContains(t) | Op::NotContains(t) | Op::JsonSchema(t) => text(t),
            Op::Regex(r) => text(r.as_str()),
            Op::Equals(v) => crate::render::compact(v, super::VALUE_CAP),
            Op::OneOf(vs) => crate::render::compact(&Value::Array(vs.clone()), super::VALUE_CAP),
            Op::MinLength(n) | Op::MaxLength(n) => n.to_string(),
        };
        write!(f, "{} {operand}", self.operator())
    }
}

/// A check that cannot be read: no operator, two of them, or a regex that does not compile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckError(String);

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CheckError {}

const OPERATORS: &str = "`contains`, `icontains`, `not_contains`, `regex`, `equals`, `one_of`, `min_length`, `max_length`, `json_schema`";

/// A check as written, before its operators are counted.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCheck {
    path: Pattern,
    #[serde(default)]
    contains: Option<String>,
    #[serde(default)]
    icontains: Option<String>,
    #[serde(default)]
    not_contains: Option<String>,
    #[serde(default)]
    regex: Option<String>,
    // `"equals": null` is a check that the value is null, not no operator.
    #[serde(default, deserialize_with = "present")]
    equals: Option<Value>,
    #[serde(default)]
    one_of: Option<Vec<Value>>,
    #[serde(default)]
    min_length: Option<usize>,
    #[serde(default)]
    max_length: Option<usize>,
    #[serde(default)]
    json_schema: Option<String>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

impl TryFrom<RawCheck> for Check {
    type Error = CheckError;

    fn try_from(raw: RawCheck) -> Result<Check, CheckError> {
        let mut ops: Vec<Result<Op, CheckError>> = Vec::new();
        let mut push = |op: Option<Result<Op, CheckError>>| ops.extend(op);
        push(raw.contains.map(|t| Ok(Op::Contains(t))));
        push(raw.icontains.map(|t| Ok(Op::IContains(t))));
        push(raw.not_contains.map(|t| Ok(Op::NotContains(t))));
        push(raw.regex.map(|r| compile(&r).map(Op::Regex)));
        push(raw.equals.map(|v| Ok(Op::Equals(v))));
        push(raw.one_of.map(|vs| Ok(Op::OneOf(vs))));
        push(raw.min_length.map(|n| Ok(Op::MinLength(n))));
        push(raw.max_length.map(|n| Ok(Op::MaxLength(n))));
        push(
            raw.json_schema
                .map(|file| schema_file(file).map(Op::JsonSchema)),
        );
        let path = raw.path.as_str();
        match ops.len() {
            0 => Err(CheckError(format!(
                "the check of `{path}` has no operator: add one of {OPERATORS}"
            ))),
            1 => Ok(Check {
                op: ops.pop().expect("one operator")?,
                path: raw.path,
            }),
            _ => {
                let mut names: Vec<&str> = Vec::new();
                for op in ops.iter().flatten() {
                    names.push(Check::new(raw.path.clone(), op.clone()).operator());
                }
                Err(CheckError(format!(
                    "the check of `{path}` has {} operators ({}): a check has one; write one check per operator",
                    ops.len(),
                    names.join(", ")
                )))
            }
        }
    }
}

/// How many compiled regexes [`compile`] keeps: a suite's patterns, written again in fixture
/// after fixture.
const KEPT_REGEXES: usize = 256;

/// A regex, or an error naming the character where it goes wrong. Each pattern is compiled
/// once per process: a fixture's checks are read with the fixture, case after case, and
/// compiling a pattern takes longer than replaying a case. The regex is shared, not cloned: a
/// clone would start its lazy DFA's cache empty, and build its states again at each case.
fn compile(pattern: &str) -> Result<Arc<regex::Regex>, CheckError> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static KEPT: OnceLock<Mutex<HashMap<String, Arc<regex::Regex>>>> = OnceLock::new();
    let kept = KEPT.get_or_init(Default::default);
    if let Some(regex) = kept.lock().unwrap_or_else(|e| e.into_inner()).get(pattern) {
        return Ok(regex.clone());
    }
    let regex = Arc::new(compile_new(pattern)?);
    let mut kept = kept.lock().unwrap_or_else(|e| e.into_inner());
    if kept.len() >= KEPT_REGEXES {
        kept.clear();
    }
    kept.insert(pattern.to_string(), regex.clone());
    Ok(regex)
}

/// [`compile`] without the cache.
fn compile_new(pattern: &str) -> Result<regex::Regex, CheckError> {
    regex::Regex::new(pattern).map_err(|e| {
        let (at, why) = match regex_syntax::Parser::new().parse(pattern) {
            Err(regex_syntax::Error::Parse(e)) => {
                (Some(e.span().start.column), e.kind().to_string())
            }
            Err(regex_syntax::Error::Translate(e)) => {
                (Some(e.span().start.column), e.kind().to_string())
            }
            // Parsed, then refused by the regex crate (too large, say): its own words.
            _ => (None, crate::redact::regex_message(&e)),
        };
        let at = at.map(|n| format!(" at character {n}")).unwrap_or_default();
        CheckError(format!("invalid regex `{pattern}`{at}: {why}"))
    })
}

/// A schema file's name as written, which must say where the file is.
fn schema_file(file: String) -> Result<String, CheckError> {
    if file.trim().is_empty() {
        return Err(CheckError(
            "`json_schema` is empty: name a schema file relative to the suite folder, such as `.schemas/reply.json`"
                .into(),
        ));
    }
    Ok(file)
}
