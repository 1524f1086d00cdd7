//! Redaction: what is taken out of a model call before it is written to a recording, and how a
//! replayed request is compared with a recorded one that had something taken out.
//!
//! [`Redactor::redact`] applies three rules to a request or a response, in this order:
//!
//! 1. every object key that names a credential ([`SECRET_KEYS`], in any case), at any depth, has
//!    its value replaced by [`REDACTED`];
//! 2. every place a `redact` path matches (the path grammar of [`crate::path`]) is replaced too;
//! 3. in every string value, each substring a `redact_values` regex matches is replaced by
//!    [`REDACTED`].
//!
//! A recording keeps the redacted form, so replay cannot compare the request with what was sent.
//! [`Redactor::replayed`] gives the form a replayed request is compared in: redacted by the same
//! rules, and holding the recorded value wherever the recorded request says `"<redacted>"` (a
//! whole value, or a part of a string) and the request has something there that fits. A recording
//! made with one key therefore replays with any other.
//!
//! ```
//! use proposal_eval_engine::redact::Redactor;
//! use serde_json::json;
//!
//! let redactor = Redactor::new(
//!     vec!["user.email".parse().unwrap()],
//!     vec![r"CUST-\d{8}".parse().unwrap()],
//! );
//! let mut request = json!({
//!     "headers": { "Authorization": "Bearer sk-live-4f9a8b7c6d5e4f3a2b1c" },
//!     "user": { "email": "ada@example.com", "name": "Ada" },
//!     "note": "customer CUST-12345678 asks",
//! });
//! redactor.redact(&mut request);
//! assert_eq!(request, json!({
//!     "headers": { "Authorization": "<redacted>" },
//!     "user": { "email": "<redacted>", "name": "Ada" },
//!     "note": "customer <redacted> asks",
//! }));
//!
//! // Replay: the recorded "<redacted>" takes whatever the request holds there.
//! let other = json!({
//!     "headers": { "Authorization": "Bearer sk-live-another-key-0000000000" },
//!     "user": { "email": "bob@example.com", "name": "Ada" },
//!     "note": "customer CUST-87654321 asks",
//! });
//! assert_eq!(redactor.replayed(&request, &other), request);
//! ```

use crate::path::Pattern;
use serde_json::Value;
use std::fmt;

/// What a redacted value, or a redacted part of a string, is replaced by.
pub const REDACTED: &str = "<redacted>";

/// Object keys whose values are always redacted, compared without regard to case.
pub const SECRET_KEYS: [&str; 13] = [
    "authorization",
    "proxy-authorization",
    "api_key",
    "api-key",
    "apikey",
    "x-api-key",
    "cookie",
    "set-cookie",
    "password",
    "secret",
    "client_secret",
    "access_token",
    "refresh_token",
];

/// Whether `key` names a credential ([`SECRET_KEYS`], in any case).
///
/// ```
/// use proposal_eval_engine::redact::is_secret_key;
/// assert!(is_secret_key("X-Api-Key"));
/// assert!(!is_secret_key("api_key_id"));
/// ```
pub fn is_secret_key(key: &str) -> bool {
    SECRET_KEYS.iter().any(|k| k.eq_ignore_ascii_case(key))
}

/// Query parameter names whose values are redacted on top of [`SECRET_KEYS`] (compared without
/// regard to case, after decoding): the names APIs give a key or a signature passed in a URL
/// (`?key=` for Google's APIs, `?sig=` in an Azure SAS URL).
pub const SECRET_PARAMETERS: [&str; 4] = ["key", "token", "sig", "signature"];

/// Whether a query parameter's (decoded) name names a credential: one of [`SECRET_KEYS`] or
/// [`SECRET_PARAMETERS`], in any case.
///
/// ```
/// use proposal_eval_engine::redact::is_secret_parameter;
/// assert!(is_secret_parameter("key") && is_secret_parameter("api-key") && is_secret_parameter("API_KEY"));
/// assert!(!is_secret_parameter("api-version"));
/// ```
pub fn is_secret_parameter(name: &str) -> bool {
    is_secret_key(name)
        || SECRET_PARAMETERS
            .iter()
            .any(|k| k.eq_ignore_ascii_case(name))
}

/// A `redact_values` regex: the substrings of string values it matches are redacted.
///
/// The syntax is the `regex` crate's (no look-around, no back-references). A pattern that
/// matches the empty string is refused: it would redact between every two characters.
///
/// ```
/// use proposal_eval_engine::redact::ValuePattern;
/// let p: ValuePattern = r"tok_[a-z0-9]{12}".parse().unwrap();
/// assert_eq!(p.as_str(), r"tok_[a-z0-9]{12}");
/// let err = "tok_[".parse::<ValuePattern>().unwrap_err();
/// assert_eq!(err.to_string(), "invalid regex `tok_[`: unclosed character class");
/// ```
#[derive(Clone)]
pub struct ValuePattern {
    regex: regex::Regex,
}

/// A `redact_values` entry that is not a usable regex.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValuePatternError {
    /// The pattern as written.
    pub pattern: String,
    /// What is wrong with it.
    pub message: String,
}

impl fmt::Display for ValuePatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid regex `{}`: {}", self.pattern, self.message)
    }
}

impl std::error::Error for ValuePatternError {}

impl ValuePattern {
    /// Compiles a pattern.
    pub fn new(pattern: &str) -> Result<ValuePattern, ValuePatternError> {
        let error = |message: String| ValuePatternError {
            pattern: pattern.to_string(),
            message,
        };
        let regex = regex::Regex::new(pattern).map_err(|e| error(regex_message(&e)))?;
        if regex.is_match("") {
            return Err(error(
                "it matches the empty string, which would redact between every two characters"
                    .into(),
            ));
        }
        Ok(ValuePattern { regex })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        self.regex.as_str()
    }
}

/// The regex crate's message without its multi-line drawing of the pattern: the line that says
/// what is wrong.
pub(crate) fn regex_message(error: &regex::Error) -> String {
    let text = error.to_string();
    text.lines()
        .find_map(|line| line.trim().strip_prefix("error: "))
        .map(str::to_string)
        .unwrap_or_else(|| text.lines().map(str::trim).collect::<Vec<_>>().join(" "))
}

impl fmt::Debug for ValuePattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ValuePattern").field(&self.as_str()).finish()
    }
}

impl fmt::Display for ValuePattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq for ValuePattern {
    fn eq(&self, other: &ValuePattern) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for ValuePattern {}

impl std::str::FromStr for ValuePattern {
    type Err = ValuePatternError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ValuePattern::new(s)
    }
}

impl<'de> serde::Deserialize<'de> for ValuePattern {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        ValuePattern::new(&text).map_err(serde::de::Error::custom)
    }
}

impl serde::Serialize for ValuePattern {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// The redaction rules of a suite: the credential keys (always), and its `redact` paths and
/// `redact_values` patterns. The default has only the keys.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Redactor {
    paths: Vec<Pattern>,
    values: Vec<ValuePattern>,
}

impl Redactor {
    /// The credential keys, plus these paths and value patterns.
    pub fn new(paths: Vec<Pattern>, values: Vec<ValuePattern>) -> Redactor {
        Redactor { paths, values }
    }

    /// Redacts `document` (one request or one response) in place.
    pub fn redact(&self, document: &mut Value) {
        redact_keys(document);
        for pattern in &self.paths {
            for location in pattern.find(document) {
                // A place below one already redacted is gone: nothing to do there.
                if let Some(value) = location.get_mut(document) {
                    *value = Value::String(REDACTED.to_string());
                }
            }
        }
        if !self.values.is_empty() {
            redact_strings(document, &self.values);
        }
    }

    /// Redacts a URL query string (without its `?`): the value of each parameter whose name
    /// is a credential name ([`is_secret_parameter`]) or is matched by a `redact` path of one
    /// key (`session_token`, `*_sig`) is written `<redacted>`, then the `redact_values`
    /// patterns apply to the whole text. Everything else is kept byte for byte, so that names
    /// are compared decoded (`api%2Dkey` is `api-key`) but never rewritten.
    ///
    /// ```
    /// use proposal_eval_engine::redact::Redactor;
    ///
    /// let redactor = Redactor::new(vec!["session_token".parse().unwrap()], vec![]);
    /// assert_eq!(
    ///     redactor.redact_query("api-version=2024-06-01&api-key=0f1e2d3c&key=AIza0&session_token=t0k3n&q=a+b"),
    ///     "api-version=2024-06-01&api-key=<redacted>&key=<redacted>&session_token=<redacted>&q=a+b"
    /// );
    /// ```
    pub fn redact_query(&self, query: &str) -> String {
        let mut out = String::with_capacity(query.len());
        for (n, param) in crate::query::params(query).enumerate() {
            if n > 0 {
                out.push('&');
            }
            out.push_str(param.raw_name);
            if let Some(value) = param.raw_value {
                out.push('=');
                let name = param.name();
                if value != REDACTED && (is_secret_parameter(&name) || self.names_path(&name)) {
                    out.push_str(REDACTED);
                } else {
                    out.push_str(value);
                }
            }
        }
        match redact_text(&out, &self.values) {
            Some(redacted) => redacted,
            None => out,
        }
    }

    /// Whether a `redact` path names a top-level key called `name`.
    fn names_path(&self, name: &str) -> bool {
        if self.paths.is_empty() {
            return false;
        }
        let mut document = serde_json::Map::new();
        document.insert(name.to_string(), Value::Null);
        let document = Value::Object(document);
        // The key itself, not the root (which `**` also finds).
        self.paths
            .iter()
            .any(|p| p.find(&document).iter().any(|at| at.0.len() == 1))
    }

    /// `current` (a request made during a replay) in the form that is compared with `recorded`
    /// (the request the recording holds): redacted by these rules, so the same secret compares
    /// equal and is never printed in a diff, and holding the recorded value at each place where
    /// `recorded` is `"<redacted>"` (any value there fits) or a string with `<redacted>` in it (a
    /// string there fits when it has the same text around the redacted parts). A place that
    /// `current` does not have stays missing, so it still shows as a difference.
    pub fn replayed(&self, recorded: &Value, current: &Value) -> Value {
        let mut current = current.clone();
        self.redact(&mut current);
        take_redacted(recorded, &mut current);
        current
    }
}

fn redact_keys(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                if is_secret_key(key) {
                    *child = Value::String(REDACTED.to_string());
                } else {
                    redact_keys(child);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_keys),
        _ => {}
    }
}

fn redact_strings(value: &mut Value, patterns: &[ValuePattern]) {
    match value {
        Value::String(text) => {
            if let Some(redacted) = redact_text(text, patterns) {
                *text = redacted;
            }
        }
        Value::Object(map) => map
            .values_mut()
            .for_each(|child| redact_strings(child, patterns)),
        Value::Array(items) => items
            .iter_mut()
            .for_each(|child| redact_strings(child, patterns)),
        _ => {}
    }
}

/// `text` with every match of `patterns` replaced by [`REDACTED`]; `None` when nothing matched.
/// Each pattern sees only the text between the markers already there, so a pattern never eats
/// into a `<redacted>` and redacting twice gives what redacting once gave.
fn redact_text(text: &str, patterns: &[ValuePattern]) -> Option<String> {
    let mut current: Option<String> = None;
    for pattern in patterns {
        let source = current.as_deref().unwrap_or(text);
        if !pattern.regex.is_match(source) {
            continue;
        }
        let mut out = String::with_capacity(source.len());
        for (n, piece) in source.split(REDACTED).enumerate() {
            if n > 0 {
                out.push_str(REDACTED);
            }
            let mut last = 0;
            for found in pattern.regex.find_iter(piece) {
                if found.is_empty() {
                    continue;
                }
                out.push_str(&piece[last..found.start()]);
                out.push_str(REDACTED);
                last = found.end();
            }
            out.push_str(&piece[last..]);
        }
        if out != source {
            current = Some(out);
        }
    }
    current
}

/// Copies the redacted values of `recorded` into `current` where what `current` holds fits them.
fn take_redacted(recorded: &Value, current: &mut Value) {
    match (recorded, current) {
        (Value::String(r), current) if r == REDACTED => *current = recorded.clone(),
        (Value::String(r), Value::String(c)) if r.contains(REDACTED) && fits(r, c) => {
            c.clone_from(r);
        }
        (Value::Object(r), Value::Object(c)) => {
            for (key, r) in r {
                if let Some(c) = c.get_mut(key) {
                    take_redacted(r, c);
                }
            }
        }
        (Value::Array(r), Value::Array(c)) => {
            for (r, c) in r.iter().zip(c.iter_mut()) {
                take_redacted(r, c);
            }
        }
        _ => {}
    }
}

/// Whether `text` is `template` with each `<redacted>` standing for some text (maybe none).
fn fits(template: &str, text: &str) -> bool {
    let mut pieces = template.split(REDACTED);
    let first = pieces.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let mut pieces: Vec<&str> = pieces.collect();
    let last = pieces.pop().unwrap_or_default();
    for piece in pieces {
        // The leftmost place is always the best one for a piece between two wildcards.
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn redactor(paths: &[&str], values: &[&str]) -> Redactor {
        Redactor::new(
            paths.iter().map(|p| p.parse().unwrap()).collect(),
            values.iter().map(|v| v.parse().unwrap()).collect(),
        )
    }

    /// A pattern reads back as written, and a refused one names itself and the fault in one
    /// line.
    #[test]
    fn value_patterns_show_what_was_written() {
        assert_eq!(
            ValuePattern::new(r"sk-[a-z]+").unwrap().as_str(),
            r"sk-[a-z]+"
        );
        let pattern = ValuePattern::new(r"sk-[a-z]+").unwrap();
        assert_eq!(pattern.to_string(), r"sk-[a-z]+");
        assert_eq!(format!("{pattern:?}"), r#"ValuePattern("sk-[a-z]+")"#);
        assert_eq!(pattern, r"sk-[a-z]+".parse().unwrap());
        assert_ne!(pattern, ValuePattern::new(r"sk-[0-9]+").unwrap());
        let error = ValuePattern::new("a*").unwrap_err();
        assert_eq!(
            error.to_string(),
            "invalid regex `a*`: it matches the empty string, which would redact between every \
             two characters"
        );
    }

    #[test]
    fn credential_keys_are_redacted_at_any_depth_in_any_case() {
        let mut doc = json!({
            "Authorization": "Bearer abc",
            "body": {
                "API_KEY": "k1",
                "items": [{ "Set-Cookie": ["a=1", "b=2"] }, { "nested": { "Password": 123 } }],
                "api_key_id": "kept: not a credential key",
                "secret": { "whole": "object" },
            },
            "x-api-key": null,
            "refresh_token": "r",
            "ACCESS_TOKEN": "a",
        });
        Redactor::default().redact(&mut doc);
        assert_eq!(
            doc,
            json!({
                "Authorization": "<redacted>",
                "body": {
                    "API_KEY": "<redacted>",
                    "items": [{ "Set-Cookie": "<redacted>" }, { "nested": { "Password": "<redacted>" } }],
                    "api_key_id": "kept: not a credential key",
                    "secret": "<redacted>",
                },
                "x-api-key": "<redacted>",
                "refresh_token": "<redacted>",
                "ACCESS_TOKEN": "<redacted>",
            })
        );
        for key in SECRET_KEYS {
            assert!(is_secret_key(key) && is_secret_key(&key.to_uppercase()));
        }
        for key in ["key", "token", "passwords", "authorization_url", ""] {
            assert!(!is_secret_key(key), "{key}");
        }
    }

    #[test]
    fn paths_are_redacted_with_wildcards_and_missing_paths_ignored() {
        let mut doc = json!({
            "messages": [{ "role": "user", "content": "hi" }, { "role": "tool", "content": "x" }],
            "user": { "email": "a@b.c" },
        });
        redactor(&["messages[*].content", "user.email", "no.such.path"], &[]).redact(&mut doc);
        assert_eq!(
            doc,
            json!({
                "messages": [{ "role": "user", "content": "<redacted>" }, { "role": "tool", "content": "<redacted>" }],
                "user": { "email": "<redacted>" },
            })
        );
        // A path and one below it: the outer one wins, nothing fails.
        let mut doc = json!({ "a": { "b": { "c": 1 } } });
        redactor(&["**"], &[]).redact(&mut doc);
        assert_eq!(doc, json!("<redacted>"));
    }

    #[test]
    fn value_patterns_replace_substrings_of_every_string_value() {
        let r = redactor(&[], &[r"CUST-\d{8}", r"\b\d{4}-\d{4}\b"]);
        let mut doc = json!({
            "note": "CUST-12345678 and CUST-87654321, card 1234-5678",
            "list": ["x CUST-00000000 y", 42, true],
            "CUST-11111111": "keys are not rewritten",
        });
        r.redact(&mut doc);
        assert_eq!(
            doc,
            json!({
                "note": "<redacted> and <redacted>, card <redacted>",
                "list": ["x <redacted> y", 42, true],
                "CUST-11111111": "keys are not rewritten",
            })
        );
        // Redacting again changes nothing, even with a pattern that matches inside the marker.
        let greedy = redactor(&[], &["red", "[a-z]+"]);
        let mut once = json!("predicted value");
        greedy.redact(&mut once);
        assert_eq!(once, json!("<redacted><redacted><redacted> <redacted>"));
        let mut twice = once.clone();
        greedy.redact(&mut twice);
        assert_eq!(twice, once);
    }

    #[test]
    fn invalid_and_empty_matching_patterns_are_refused() {
        let err = ValuePattern::new("a(").unwrap_err();
        assert_eq!(err.message, "unclosed group");
        let err = ValuePattern::new("x*").unwrap_err();
        assert!(err.message.contains("empty string"), "{err}");
        assert_eq!(
            serde_json::from_value::<ValuePattern>(json!("[z-a]"))
                .unwrap_err()
                .to_string(),
            "invalid regex `[z-a]`: invalid character class range, the start must be <= the end"
        );
    }

    #[test]
    fn replay_takes_the_recorded_value_where_it_was_redacted() {
        let r = redactor(&["user.email"], &[r"CUST-\d{8}"]);
        let mut recorded = json!({
            "headers": { "authorization": "Bearer key-one" },
            "user": { "email": "a@b.c" },
            "note": "ref CUST-12345678",
            "messages": ["same"],
        });
        r.redact(&mut recorded);
        let current = json!({
            "headers": { "authorization": "Bearer key-two" },
            "user": { "email": "z@y.x" },
            "note": "ref CUST-99999999",
            "messages": ["same"],
        });
        assert_eq!(r.replayed(&recorded, &current), recorded);

        // Recorded under rules that are gone now: the markers still take what fits.
        let plain = Redactor::default();
        let recorded =
            json!({ "a": "<redacted>", "b": "Bearer <redacted>", "c": "x<redacted>y<redacted>z" });
        let current = json!({ "a": { "any": "value" }, "b": "Bearer tok", "c": "x1y22z" });
        assert_eq!(plain.replayed(&recorded, &current), recorded);
        // What does not fit stays as it is, so the diff shows it.
        for (r, c) in [
            ("Bearer <redacted>", "Basic tok"),
            ("x<redacted>y<redacted>z", "x1z"),
            ("<redacted>-end", "start-en"),
        ] {
            assert_eq!(plain.replayed(&json!(r), &json!(c)), json!(c), "{r} vs {c}");
        }
        // Inside arrays too, element by element.
        assert_eq!(
            plain.replayed(
                &json!({ "m": ["<redacted>", "k=<redacted>", "same"] }),
                &json!({ "m": ["one", "k=two", "other"] })
            ),
            json!({ "m": ["<redacted>", "k=<redacted>", "other"] })
        );
        // A redacted key the request no longer has is still missing.
        assert_eq!(
            plain.replayed(&json!({ "k": "<redacted>" }), &json!({})),
            json!({})
        );
        // The same secret on both sides is compared in its redacted form.
        assert_eq!(
            plain.replayed(
                &json!({ "password": "<redacted>" }),
                &json!({ "password": "hunter2" })
            ),
            json!({ "password": "<redacted>" })
        );
    }

    /// Both name styles (`api_key`, `api-key`, plain `key`), in any case and however they are
    /// encoded, lose their value; a `redact` path of one key names a parameter; `redact_values`
    /// applies to the whole query; the rest is kept as written.
    #[test]
    fn query_parameters_named_like_credentials_are_redacted() {
        let plain = Redactor::default();
        assert_eq!(
            plain.redact_query(
                "api_key=sk-live-1&key=AIza2&api-key=0123abcd&API%2DKEY=x&Token=t&sig=s%2Bt&q=a+b%20c&flag&=v&key"
            ),
            "api_key=<redacted>&key=<redacted>&api-key=<redacted>&API%2DKEY=<redacted>&Token=<redacted>&sig=<redacted>&q=a+b%20c&flag&=v&key"
        );
        assert_eq!(plain.redact_query(""), "");
        assert_eq!(plain.redact_query("key="), "key=<redacted>");
        assert_eq!(
            plain.redact_query("api-version=2024-06-01&keys=1"),
            "api-version=2024-06-01&keys=1"
        );

        let configured = redactor(&["session_token", "customer.id"], &[r"CUST-\d{4}"]);
        assert_eq!(
            configured.redact_query(
                "session_token=abc&session=def&customer.id=1&note=CUST-1234%20x&key=k"
            ),
            "session_token=<redacted>&session=def&customer.id=1&note=<redacted>%20x&key=<redacted>"
        );
        // `**` finds the root too; only a parameter's own name counts.
        assert_eq!(redactor(&["**"], &[]).redact_query("a=1"), "a=<redacted>");
        // Redacting twice gives what redacting once gave.
        for query in [
            "key=a&b=CUST-1234",
            "x=<redacted>&CUST-1234",
            "session_token=<redacted>",
        ] {
            let once = configured.redact_query(query);
            assert_eq!(configured.redact_query(&once), once, "{query}");
        }
    }

    #[test]
    fn fits_is_glob_matching() {
        assert!(fits("<redacted>", ""));
        assert!(fits("a<redacted>", "a"));
        assert!(fits("a<redacted>b<redacted>b", "axbyb"));
        assert!(fits("<redacted>ab<redacted>", "xxabyy"));
        assert!(!fits("a<redacted>a", "a"));
        assert!(!fits("ab<redacted>", "a"));
        // A piece between two markers is consumed whole: what follows is matched after it.
        assert!(!fits("<redacted>abc<redacted>c", "xabc"));
        assert!(fits("<redacted>abc<redacted>c", "xabcc"));
        assert!(!fits("<redacted>ab<redacted>zab", "xyzab"));
        assert!(fits("<redacted>ab<redacted>zab", "xyabzab"));
    }
}
