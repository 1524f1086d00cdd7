//! Draft generators: `template` (deterministic, offline) and `command:ARGV` (an external
//! program, typically one that asks a model).
//!
//! Both get the same bytes: the suggestion record as canonical JSON (sorted keys, one line, a
//! final newline), whose SHA-256 is the draft's `prompt_hash`. Both answer with a
//! [`GeneratorResponse`], whose raw bytes' SHA-256 is `response_sha256`. Lineage (`source`),
//! `input` and timestamps are never the generator's to decide: the CLI fills them in.

use crate::suggestion::Suggestion;
use proposal_eval::__internal::draft::{canonical_json, sha256_hex, Assertions};
use proposal_eval::__internal::process::{self, ProcessError, Program};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use std::time::Duration;

/// Default time an external generator gets per suggestion.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// Which generator `draft` uses.
#[derive(Clone, Debug, PartialEq)]
pub enum Generator {
    /// Built-in, deterministic, offline.
    Template,
    /// `command:ARGV`: run ARGV, suggestion on stdin, [`GeneratorResponse`] on stdout.
    Command {
        /// ARGV as the user wrote it (recorded in `generator_meta.generator`).
        spec: String,
        /// ARGV split into words.
        argv: Vec<String>,
        /// Killed after this long: a `timeout` error record.
        timeout: Duration,
    },
}

/// What a generator answers: a JSON object with exactly these keys.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GeneratorResponse {
    /// Non-empty title of the eval case.
    pub title: String,
    /// Non-empty reason the case exists.
    pub rationale: String,
    /// The rubric (`required`, `forbidden`, optional `golden_output`, `notes`).
    pub assertions: Assertions,
    /// The model that wrote the answer, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The temperature it used, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
}

/// The `error_type` of an error record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorType {
    /// Input line or generator response that is not JSON.
    InvalidJson,
    /// JSON of the wrong shape (input record or generator response).
    SchemaValidation,
    /// The generator could not be started or exited non-zero.
    GeneratorError,
    /// The generator did not answer in time.
    Timeout,
    /// Anything else (for example the draft could not be written).
    Unknown,
}

impl ErrorType {
    /// The name in error records (`error_type`) and run summaries.
    pub fn name(self) -> &'static str {
        match self {
            ErrorType::InvalidJson => "invalid_json",
            ErrorType::SchemaValidation => "schema_validation",
            ErrorType::GeneratorError => "generator_error",
            ErrorType::Timeout => "timeout",
            ErrorType::Unknown => "unknown",
        }
    }
}

/// A failed generation: becomes an error record.
#[derive(Clone, Debug, PartialEq)]
pub struct GenError {
    /// What kind of failure.
    pub error_type: ErrorType,
    /// For the person reading the record.
    pub message: String,
    /// SHA-256 of the raw response, when there was one.
    pub response_sha256: Option<String>,
    /// A short, redacted excerpt of the response.
    pub excerpt: Option<String>,
}

/// A successful generation.
#[derive(Clone, Debug, PartialEq)]
pub struct Generated {
    /// The validated answer.
    pub response: GeneratorResponse,
    /// SHA-256 of the raw answer.
    pub response_sha256: String,
}

/// The bytes every generator is handed: the record as canonical JSON and a newline.
pub fn prompt_bytes(raw: &Value) -> Vec<u8> {
    let mut text = canonical_json(raw);
    text.push('\n');
    text.into_bytes()
}

impl Generator {
    /// Parses `--generator`.
    pub fn parse(spec: &str, timeout: Duration) -> Result<Generator, String> {
        if spec == "template" {
            return Ok(Generator::Template);
        }
        if let Some(command) = spec.strip_prefix("command:") {
            let argv =
                shell_words::split(command).map_err(|e| format!("--generator {spec:?}: {e}"))?;
            if argv.is_empty() {
                return Err(
                    "--generator command: needs a program, e.g. command:python3 gen.py".into(),
                );
            }
            return Ok(Generator::Command {
                spec: command.trim().to_string(),
                argv,
                timeout,
            });
        }
        Err(format!(
            "--generator {spec:?}: expected `template` or `command:ARGV` (e.g. command:python3 gen.py)"
        ))
    }

    /// The name stored in `generator_meta.generator`. The template's carries the CLI version,
    /// so a new template regenerates drafts that nobody edited.
    pub fn name(&self) -> String {
        match self {
            Generator::Template => format!("template@{}", env!("CARGO_PKG_VERSION")),
            Generator::Command { spec, .. } => format!("command:{spec}"),
        }
    }

    /// Generates the draft content for one suggestion.
    pub fn generate(&self, suggestion: &Suggestion, prompt: &[u8]) -> Result<Generated, GenError> {
        match self {
            Generator::Template => {
                let response = template(suggestion);
                let raw = serde_json::to_value(&response).expect("a response always serializes");
                Ok(Generated {
                    response_sha256: sha256_hex(canonical_json(&raw).as_bytes()),
                    response,
                })
            }
            Generator::Command { argv, timeout, .. } => {
                let stdout = run_command(argv, prompt, *timeout)?;
                parse_response(&stdout)
            }
        }
    }
}

/// The built-in generator: a rubric a reviewer refines, from the suggestion alone.
pub fn template(suggestion: &Suggestion) -> GeneratorResponse {
    let content = &suggestion.suggestion_content;
    let title = non_empty(content.title.as_deref())
        .map(str::to_string)
        .unwrap_or_else(|| {
            format!(
                "Regression case for suggestion {}",
                suggestion.suggestion_id
            )
        });
    let ranked = suggestion.ranked_traces();
    let mut rationale = non_empty(content.description.as_deref())
        .map(str::to_string)
        .unwrap_or_else(|| title.clone());
    if let Some(canonical) = ranked.first() {
        rationale.push_str(&format!(" Seen in production trace {}", canonical.trace_id));
        if let Some(confidence) = canonical.confidence {
            rationale.push_str(&format!(" (confidence {confidence})"));
        }
        if ranked.len() > 1 {
            rationale.push_str(&format!(" and {} more", ranked.len() - 1));
        }
        rationale.push('.');
    }
    let mut required = Vec::new();
    if let Some(description) = non_empty(content.description.as_deref()) {
        required.push(format!(
            "Does not repeat the production failure: {description}"
        ));
    }
    let mut forbidden: Vec<String> = Vec::new();
    for trace in &ranked {
        let observed = match &trace.observed_output {
            Value::Null => continue,
            Value::String(s) if s.trim().is_empty() => continue,
            Value::String(s) => s.clone(),
            other => canonical_json(other),
        };
        if !forbidden.contains(&observed) {
            forbidden.push(observed);
        }
    }
    GeneratorResponse {
        title,
        rationale,
        assertions: Assertions {
            required,
            forbidden,
            golden_output: None,
            notes: format!(
                "Drafted offline by the template generator. `forbidden` holds the output observed \
                 in production. Write `expected` (what a correct reply produces), review the \
                 assertions, then run `cargo proposal-eval promote eval_{}`.",
                suggestion.suggestion_id
            ),
        },
        model: None,
        temperature: None,
    }
}

fn non_empty(s: Option<&str>) -> Option<&str> {
    s.map(str::trim).filter(|s| !s.is_empty())
}

/// Validates a command generator's raw stdout.
pub fn parse_response(stdout: &[u8]) -> Result<Generated, GenError> {
    let response_sha256 = sha256_hex(stdout);
    let fail = |error_type, message: String| GenError {
        error_type,
        message,
        response_sha256: Some(response_sha256.clone()),
        excerpt: Some(excerpt(&String::from_utf8_lossy(stdout))),
    };
    let value: Value = serde_json::from_slice(stdout).map_err(|e| {
        fail(
            ErrorType::InvalidJson,
            format!("the generator's output is not JSON: {e}"),
        )
    })?;
    let response = GeneratorResponse::deserialize(&value).map_err(|e| {
        fail(
            ErrorType::SchemaValidation,
            format!("the generator's output is not a draft: {e}"),
        )
    })?;
    let mut problems = Vec::new();
    if response.title.trim().is_empty() {
        problems.push("`title` is empty");
    }
    if response.rationale.trim().is_empty() {
        problems.push("`rationale` is empty");
    }
    let a = &response.assertions;
    if a.required
        .iter()
        .chain(&a.forbidden)
        .any(|s| s.trim().is_empty())
    {
        problems.push("an assertion is an empty string");
    }
    if let Some(t) = response.temperature {
        if !(0.0..=2.0).contains(&t) {
            problems.push("`temperature` is outside 0..=2");
        }
    }
    if !problems.is_empty() {
        return Err(fail(
            ErrorType::SchemaValidation,
            format!("the generator's draft is invalid: {}", problems.join(", ")),
        ));
    }
    Ok(Generated {
        response,
        response_sha256,
    })
}

/// Stdout a generator may print; a draft is a few kilobytes.
const STDOUT_LIMIT: usize = 16 << 20;
/// The tail of stderr kept for an error record.
const STDERR_LIMIT: usize = 64 << 10;

/// Runs a command with `input` on stdin and returns its stdout, or why it failed. The runtime's
/// process runner gives it a process group of its own, killed whole on exit or timeout.
fn run_command(argv: &[String], input: &[u8], timeout: Duration) -> Result<Vec<u8>, GenError> {
    let failure = |error_type, message| GenError {
        error_type,
        message,
        response_sha256: None,
        excerpt: None,
    };
    let output = process::run(Program {
        argv,
        dir: None,
        stdin: input.to_vec(),
        timeout,
        stdout_limit: STDOUT_LIMIT,
        stderr_limit: STDERR_LIMIT,
    })
    .map_err(|e| match e {
        ProcessError::Timeout => failure(
            ErrorType::Timeout,
            format!(
                "generator `{}` did not finish within {} ms and was killed",
                argv.join(" "),
                timeout.as_millis()
            ),
        ),
        ProcessError::Spawn(e) => failure(
            ErrorType::GeneratorError,
            format!("could not start generator `{}`: {e}", argv[0]),
        ),
        ProcessError::Empty | ProcessError::NoDir(_) => failure(
            ErrorType::GeneratorError,
            "the generator's command line is empty".to_string(),
        ),
    })?;
    if output.stdout_overflow {
        return Err(failure(
            ErrorType::GeneratorError,
            format!(
                "generator `{}` printed more than {} MiB",
                argv.join(" "),
                STDOUT_LIMIT >> 20
            ),
        ));
    }
    if !output.status.success() {
        let mut message = format!(
            "generator `{}` failed ({})",
            argv.join(" "),
            process::describe_status(output.status)
        );
        let err = String::from_utf8_lossy(&output.stderr);
        if !err.trim().is_empty() {
            message.push_str(&format!("; stderr: {}", excerpt(&err)));
        }
        return Err(GenError {
            error_type: ErrorType::GeneratorError,
            message,
            response_sha256: Some(sha256_hex(&output.stdout)),
            excerpt: Some(excerpt(&String::from_utf8_lossy(&output.stdout))),
        });
    }
    Ok(output.stdout)
}

/// Longest excerpt of a response kept in an error record, in characters.
pub const EXCERPT_CHARS: usize = 200;

/// A short excerpt of a response for an error record: secrets redacted, whitespace collapsed,
/// at most [`EXCERPT_CHARS`] characters.
pub fn excerpt(text: &str) -> String {
    let redacted = redact(text);
    let collapsed = redacted.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.chars().count() > EXCERPT_CHARS {
        let cut: String = collapsed.chars().take(EXCERPT_CHARS).collect();
        format!("{cut}…")
    } else {
        collapsed
    }
}

/// Replaces what looks like a credential with `[REDACTED]`: the value after `Bearer `, tokens
/// with a well-known key prefix (`sk-`, `ghp_`, `xoxb-`, `AKIA`), and long runs of key-like
/// characters that mix letters and digits. Prose, numbers and ids of ordinary length survive.
pub fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut token = String::new();
    let mut after_bearer = false;
    let flush = |token: &mut String, out: &mut String, after_bearer: &mut bool| {
        if token.is_empty() {
            return;
        }
        if *after_bearer || looks_secret(token) {
            out.push_str("[REDACTED]");
        } else {
            out.push_str(token);
        }
        *after_bearer = token.eq_ignore_ascii_case("bearer");
        token.clear();
    };
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '+' | '/' | '=' | '.') {
            token.push(c);
        } else {
            flush(&mut token, &mut out, &mut after_bearer);
            if c != ' ' {
                after_bearer = false;
            }
            out.push(c);
        }
    }
    flush(&mut token, &mut out, &mut after_bearer);
    out
}

fn looks_secret(token: &str) -> bool {
    let prefixed = ["sk-", "sk_", "ghp_", "gho_", "xoxb-", "xoxp-", "AKIA"]
        .iter()
        .any(|p| token.starts_with(p) && token.len() >= p.len() + 8);
    let letters = token.chars().filter(|c| c.is_ascii_alphabetic()).count();
    let digits = token.chars().filter(|c| c.is_ascii_digit()).count();
    prefixed || (token.len() >= 24 && letters > 0 && digits > 0 && !token.contains('/'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_generator_specs() {
        assert_eq!(
            Generator::parse("template", DEFAULT_TIMEOUT),
            Ok(Generator::Template)
        );
        let g = Generator::parse("command:python3 'my gen.py' -v", DEFAULT_TIMEOUT).unwrap();
        assert_eq!(g.name(), "command:python3 'my gen.py' -v");
        match g {
            Generator::Command { argv, .. } => assert_eq!(argv, ["python3", "my gen.py", "-v"]),
            other => panic!("{other:?}"),
        }
        assert!(Generator::parse("command:", DEFAULT_TIMEOUT).is_err());
        assert!(Generator::parse("gpt", DEFAULT_TIMEOUT)
            .unwrap_err()
            .contains("template"));
    }

    #[test]
    fn command_specs_split_like_a_shell() {
        let argv = |spec: &str| match Generator::parse(spec, DEFAULT_TIMEOUT) {
            Ok(Generator::Command { argv, .. }) => Ok(argv),
            Ok(other) => panic!("{other:?}"),
            Err(e) => Err(e),
        };
        assert_eq!(
            argv(r#"command:python3  gen.py --name 'a b' "c \"d\"" e\ f"#).unwrap(),
            ["python3", "gen.py", "--name", "a b", "c \"d\"", "e f"]
        );
        assert_eq!(argv("command:gen ''").unwrap(), ["gen", ""]);
        // What a POSIX shell does beyond plain words: `\$` in double quotes, comments.
        assert_eq!(
            argv(r#"command:gen "\$HOME" # a note"#).unwrap(),
            ["gen", "$HOME"]
        );
        for open in ["command:gen 'open", "command:gen \"open"] {
            assert!(argv(open).unwrap_err().contains("missing closing quote"));
        }
        assert!(argv("command:   ").unwrap_err().contains("needs a program"));
    }

    #[test]
    fn template_is_deterministic_and_keeps_observed_output() {
        let s: Suggestion = serde_json::from_value(json!({
            "suggestion_id": "s1", "type": "eval",
            "suggestion_content": { "title": "T", "description": "D." },
            "source_traces": [
                { "trace_id": "b", "confidence": 0.5, "observed_output": "bad b" },
                { "trace_id": "a", "confidence": 0.9, "observed_output": { "sku": 1 } },
                { "trace_id": "c", "confidence": 0.1, "observed_output": "bad b" }
            ]
        }))
        .unwrap();
        let r = template(&s);
        assert_eq!(r, template(&s));
        assert_eq!(r.title, "T");
        assert_eq!(
            r.rationale,
            "D. Seen in production trace a (confidence 0.9) and 2 more."
        );
        assert_eq!(r.assertions.forbidden, ["{\"sku\":1}", "bad b"]);
        assert_eq!(
            r.assertions.required,
            ["Does not repeat the production failure: D."]
        );
    }

    #[test]
    fn responses_are_validated() {
        let ok = br#"{"title":"t","rationale":"r","assertions":{"required":["x"]},"model":"m"}"#;
        let g = parse_response(ok).unwrap();
        assert_eq!(g.response.model.as_deref(), Some("m"));
        assert_eq!(g.response_sha256, sha256_hex(ok));

        let e = parse_response(b"Sure! Here is your draft").unwrap_err();
        assert_eq!(e.error_type, ErrorType::InvalidJson);
        assert_eq!(e.excerpt.as_deref(), Some("Sure! Here is your draft"));

        let e = parse_response(br#"{"title":"t"}"#).unwrap_err();
        assert_eq!(e.error_type, ErrorType::SchemaValidation);
        assert!(e.message.contains("rationale"), "{}", e.message);

        let e = parse_response(br#"{"title":" ","rationale":"r","assertions":{}}"#).unwrap_err();
        assert_eq!(e.error_type, ErrorType::SchemaValidation);
        assert!(e.message.contains("`title` is empty"), "{}", e.message);

        let e =
            parse_response(br#"{"title":"t","rationale":"r","assertions":{},"x":1}"#).unwrap_err();
        assert!(e.message.contains("unknown field `x`"), "{}", e.message);
    }

    #[test]
    fn redacts_secrets_but_not_prose() {
        assert_eq!(
            redact("key sk-abcdefghijklmnop and Bearer abc.def ok"),
            "key [REDACTED] and Bearer [REDACTED] ok"
        );
        assert_eq!(
            redact(r#"{"token":"a1b2c3d4e5f6a7b8c9d0e1f2a3b4"}"#),
            r#"{"token":"[REDACTED]"}"#
        );
        let prose = "I recommend SKU-123 (discontinued) for $999.";
        assert_eq!(redact(prose), prose);
    }

    #[test]
    fn excerpts_are_short_and_single_line() {
        let long = "word\n".repeat(100);
        let e = excerpt(&long);
        assert_eq!(e.chars().count(), EXCERPT_CHARS + 1);
        assert!(!e.contains('\n'));
    }
}
