//! Credentials: the strings that look like an API key, a token or a private key. A recording
//! or a pending file that would hold one is not written, and `cargo proposal-eval status
//! --check` fails on a file that holds one; both use this module.
//!
//! Two rules find them:
//!
//! - **a provider's key pattern** anywhere in a string ([`looks_like`]): a prefix a provider
//!   gives its keys (`sk-`, `AKIA`, `ghp_`, `AIza`, `xoxb-`, `Bearer `, a PEM header…) followed
//!   by a token-like run long enough that ordinary prose does not produce it; where the prefix
//!   alone is common (`sk-`, `Bearer`), the run must also hold both a letter and a digit, as
//!   generated keys do;
//! - **a key-like value under a credential-like name** ([`key_like_name`], [`key_like_value`]):
//!   a string of at least 16 characters of the kinds keys are made of (letters, digits,
//!   `-_.~+/=`), holding a letter and a digit, that is the value of a JSON key or a query
//!   parameter whose name holds `key`, `token`, `secret`, `password` or `auth`.
//!
//! Each [`Finding`] says where the string is, what it looks like, and the suite config line that
//! redacts it ([`Finding::fix`]).
//!
//! ```
//! use proposal_eval_engine::credentials::{looks_like, scan, scan_query};
//! use serde_json::json;
//!
//! assert_eq!(looks_like("key AKIAIOSFODNN7EXAMPLE here").unwrap().name(), "an AKIA AWS access key id");
//! assert!(looks_like("risk-free and task-based, see sk-learn").is_none());
//!
//! let found = scan(&json!({ "metadata": { "customer_token": "c0ffee00c0ffee00c0ffee00" } }));
//! assert_eq!(
//!     found[0].to_string(),
//!     "metadata.customer_token (a key-like value of 24 characters under a name holding `token`)"
//! );
//! assert_eq!(found[0].fix().to_string(), r#"redact = ["metadata.customer_token"]"#);
//!
//! let found = scan_query("api-version=2024-06-01&sig=<redacted>&session_token=9f8e7d6c5b4a39281706");
//! assert_eq!(found[0].parameter.as_deref(), Some("session_token"));
//! assert_eq!(found[0].fix().to_string(), r#"redact = ["session_token"]"#);
//! ```

use crate::path::{key_needs_quotes, Location, Segment};
use regex::Regex;
use serde_json::Value;
use std::fmt;
use std::sync::OnceLock;

/// A provider's key pattern: what it is called, and a `redact_values` regex that takes it out.
#[derive(Debug, PartialEq, Eq)]
pub struct Pattern {
    name: &'static str,
    redact_value: &'static str,
}

impl Pattern {
    /// What a string of this pattern is: `an sk- API key`, `a bearer token`…
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// A `redact_values` regex that replaces every string of this pattern.
    pub fn redact_value(&self) -> &'static str {
        self.redact_value
    }
}

/// What a finding looks like.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A provider's key pattern.
    Pattern(&'static Pattern),
    /// A key-like value under a credential-like name.
    KeyLike {
        /// How many characters the value has.
        chars: usize,
        /// The credential word the name holds (`token`, `key`…).
        word: &'static str,
    },
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Kind::Pattern(p) => f.write_str(p.name),
            Kind::KeyLike { chars, word } => write!(
                f,
                "a key-like value of {chars} characters under a name holding `{word}`"
            ),
        }
    }
}

/// A string that looks like a credential, and where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// Where the string is, from the root of the document scanned (for a recording file:
    /// `interactions[0].request.user`); for a query string, the place of the whole string.
    pub path: Location,
    /// How many leading segments of `path` lead to the document that redaction sees (a request,
    /// a response); the rest is the path a `redact` entry names. 0 for what [`scan`] returns.
    pub document_at: usize,
    /// The query parameter holding it, when the string scanned was a query string.
    pub parameter: Option<String>,
    /// What it looks like.
    pub kind: Kind,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path)?;
        if let Some(name) = &self.parameter {
            write!(f, ", parameter `{name}`")?;
        }
        write!(f, " ({})", self.kind)
    }
}

/// The `[recording]` line of a suite config that redacts a finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fix {
    /// `redact_values = ["REGEX"]`.
    RedactValues(&'static str),
    /// `redact = ["PATH"]`: the path of the value (indices as `[*]`), or a query parameter's
    /// name.
    Redact(String),
}

impl fmt::Display for Fix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (key, value) = match self {
            Fix::RedactValues(regex) => ("redact_values", *regex),
            Fix::Redact(path) => ("redact", path.as_str()),
        };
        write!(f, "{key} = [{}]", toml_string(value))
    }
}

/// `text` as a TOML basic string.
fn toml_string(text: &str) -> String {
    let mut out = String::from('"');
    for c in text.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

impl Finding {
    /// The config line that redacts this finding in the next recording: a provider's pattern is
    /// redacted wherever it is by its regex; a key-like value by the path of its key (or the
    /// name of its query parameter).
    pub fn fix(&self) -> Fix {
        match (&self.kind, &self.parameter) {
            (Kind::Pattern(p), _) => Fix::RedactValues(p.redact_value),
            (Kind::KeyLike { .. }, Some(name)) => {
                Fix::Redact(pattern_text(&[Segment::Key(name.clone())]))
            }
            (Kind::KeyLike { .. }, None) => {
                let inside = self.path.0.get(self.document_at..).unwrap_or_default();
                // Up to the key whose name made it a credential: a list below it goes whole.
                match inside.iter().rposition(|s| matches!(s, Segment::Key(_))) {
                    Some(at) => Fix::Redact(pattern_text(&inside[..=at])),
                    // The document itself is the value of that key: name the key alone.
                    None => Fix::Redact(pattern_text(
                        &self
                            .path
                            .0
                            .iter()
                            .rev()
                            .find(|s| matches!(s, Segment::Key(_)))
                            .cloned()
                            .into_iter()
                            .collect::<Vec<_>>(),
                    )),
                }
            }
        }
    }
}

/// A path pattern for these segments, each index written `[*]` (any item of the list).
fn pattern_text(segments: &[Segment]) -> String {
    let mut out = String::new();
    for (n, segment) in segments.iter().enumerate() {
        match segment {
            Segment::Index(_) => out.push_str("[*]"),
            Segment::Key(key) if key_needs_quotes(key, n == 0) => {
                out.push_str("[\"");
                for c in key.chars() {
                    if c == '"' || c == '\\' {
                        out.push('\\');
                    }
                    out.push(c);
                }
                out.push_str("\"]");
            }
            Segment::Key(key) => {
                if n > 0 {
                    out.push('.');
                }
                out.push_str(key);
            }
        }
    }
    out
}

/// One provider's pattern: a regex whose group 1 is the token, and whether the token must hold
/// both a letter and a digit.
struct Detector {
    pattern: &'static Pattern,
    regex: Regex,
    mixed: bool,
    /// The pattern's `redact_value`, compiled.
    redact: Regex,
}

/// Before the prefix of a key: the start of the string, or a character that is not part of a
/// token (so `task-` is not `sk-`).
const START: &str = r"(?:^|[^A-Za-z0-9_\-])";
/// After a key of fixed length: the end, or a character that is not part of a token.
const END: &str = r"(?:$|[^A-Za-z0-9_\-])";

macro_rules! patterns {
    ($($id:ident: $name:literal, $redact:literal;)*) => {
        $(static $id: Pattern = Pattern { name: $name, redact_value: $redact };)*
    };
}

patterns! {
    PEM: "a PEM private key",
        "(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)";
    ANTHROPIC: "an sk-ant- Anthropic key", "sk-ant-[A-Za-z0-9_-]{20,}";
    OPENAI_PROJECT: "an sk-proj- OpenAI key", "sk-proj-[A-Za-z0-9_-]{20,}";
    SK: "an sk- API key", "sk-[A-Za-z0-9_-]{20,}";
    STRIPE: "an sk_live_ Stripe key", "[sr]k_live_[A-Za-z0-9]{20,}";
    AWS: "an AKIA AWS access key id", "(?:AKIA|ASIA)[A-Z0-9]{16}";
    GITHUB: "a ghp_ GitHub token", "gh[pousr]_[A-Za-z0-9]{36,}";
    GITHUB_PAT: "a github_pat_ GitHub token", "github_pat_[A-Za-z0-9_]{22,}";
    GOOGLE: "an AIza Google API key", "AIza[A-Za-z0-9_-]{35}";
    SLACK: "a xox- Slack token", "xox[abposr]-[A-Za-z0-9-]{10,}";
    BEARER: "a bearer token", "(?i)bearer[[:blank:]]+[A-Za-z0-9._~+/=-]{16,}";
}

fn detectors() -> &'static [Detector] {
    static DETECTORS: OnceLock<Vec<Detector>> = OnceLock::new();
    DETECTORS.get_or_init(|| {
        let detector = |pattern: &'static Pattern, regex: String, mixed| Detector {
            pattern,
            regex: Regex::new(&regex).expect("the credential patterns are valid"),
            mixed,
            redact: Regex::new(pattern.redact_value).expect("the redact regexes are valid"),
        };
        vec![
            detector(
                &PEM,
                r"(-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----)".into(),
                false,
            ),
            detector(
                &ANTHROPIC,
                format!(r"{START}(sk-ant-[A-Za-z0-9_\-]{{20,}})"),
                true,
            ),
            detector(
                &OPENAI_PROJECT,
                format!(r"{START}(sk-proj-[A-Za-z0-9_\-]{{20,}})"),
                true,
            ),
            detector(&SK, format!(r"{START}(sk-[A-Za-z0-9_\-]{{20,}})"), true),
            detector(
                &STRIPE,
                format!(r"{START}((?:sk|rk)_live_[A-Za-z0-9]{{20,}})"),
                false,
            ),
            detector(
                &AWS,
                format!(r"{START}((?:AKIA|ASIA)[A-Z0-9]{{16}}){END}"),
                false,
            ),
            detector(
                &GITHUB,
                format!(r"{START}(gh[pousr]_[A-Za-z0-9]{{36,}})"),
                false,
            ),
            detector(
                &GITHUB_PAT,
                format!(r"{START}(github_pat_[A-Za-z0-9_]{{22,}})"),
                false,
            ),
            detector(
                &GOOGLE,
                format!(r"{START}(AIza[A-Za-z0-9_\-]{{35}}){END}"),
                false,
            ),
            detector(
                &SLACK,
                format!(r"{START}(xox[abposr]-[A-Za-z0-9\-]{{10,}})"),
                true,
            ),
            detector(
                &BEARER,
                r"(?-u:\b)(?i:bearer)[ \t]+([A-Za-z0-9\-._~+/]{16,}=*)".into(),
                true,
            ),
        ]
    })
}

/// Every provider pattern the scan knows, in the order it tries them.
pub fn patterns() -> impl Iterator<Item = &'static Pattern> {
    detectors().iter().map(|d| d.pattern)
}

/// Whether a token holds a letter and a digit, as a generated key does and a word does not.
fn mixed(token: &str) -> bool {
    token.bytes().any(|b| b.is_ascii_digit()) && token.bytes().any(|b| b.is_ascii_alphabetic())
}

/// The provider pattern `text` holds, when it holds one: the first found.
pub fn looks_like(text: &str) -> Option<&'static Pattern> {
    // One pass over the text rules out most strings before each pattern is tried.
    static ANY: OnceLock<regex::RegexSet> = OnceLock::new();
    let any = ANY.get_or_init(|| {
        regex::RegexSet::new(detectors().iter().map(|d| d.regex.as_str()))
            .expect("the credential patterns are valid")
    });
    if !any.is_match(text) {
        return None;
    }
    detectors().iter().find_map(|d| {
        d.regex
            .captures_iter(text)
            .filter_map(|c| c.get(1))
            .any(|token| !d.mixed || mixed(token.as_str()))
            .then_some(d.pattern)
    })
}

/// The words that make a name credential-like.
const CREDENTIAL_WORDS: [&str; 5] = ["key", "token", "secret", "password", "auth"];

/// The credential word a JSON key or a query parameter's name holds (in any case), if any.
///
/// ```
/// use proposal_eval_engine::credentials::key_like_name;
/// assert_eq!(key_like_name("X-Customer-Token"), Some("token"));
/// assert_eq!(key_like_name("customer_note"), None);
/// ```
pub fn key_like_name(name: &str) -> Option<&'static str> {
    let name = name.to_ascii_lowercase();
    CREDENTIAL_WORDS.into_iter().find(|w| name.contains(w))
}

/// Whether `value` is made like a key: at least 16 characters, each a letter, a digit or one of
/// `-_.~+/=`, holding a letter and a digit.
///
/// ```
/// use proposal_eval_engine::credentials::key_like_value;
/// assert!(key_like_value("9f8e7d6c5b4a39281706"));
/// assert!(!key_like_value("client_credentials_flow"));
/// assert!(!key_like_value("<redacted>"));
/// ```
pub fn key_like_value(value: &str) -> bool {
    value.len() >= 16
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.~+/=".contains(&b))
        && mixed(value)
}

/// Whether `text` under `name` is a SHA-256 digest that names itself so (`key_sha256`: 64 hex
/// digits under a name ending in `sha256`), as the recordings' own keys are: a hash of what was
/// recorded, not a secret, whatever word its name holds.
fn is_digest(name: &str, text: &str) -> bool {
    name.to_ascii_lowercase().ends_with("sha256")
        && text.len() == 64
        && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// What a string under `name` (the nearest key, `None` at the root) looks like, if it looks
/// like a credential.
fn kind_of(name: Option<&str>, text: &str) -> Option<Kind> {
    if let Some(pattern) = looks_like(text) {
        return Some(Kind::Pattern(pattern));
    }
    let name = name?;
    let word = key_like_name(name)?;
    if is_digest(name, text) {
        return None;
    }
    key_like_value(text).then(|| Kind::KeyLike {
        chars: text.chars().count(),
        word,
    })
}

/// Every string value of `document` that looks like a credential, in document order. A string
/// is under the nearest object key above it (an item of `"tokens": [...]` is under `tokens`).
pub fn scan(document: &Value) -> Vec<Finding> {
    scan_under(document, None)
}

/// [`scan`] for a document that is itself the value of the key `name` in a larger one (a string
/// or a list at its root is under that name).
pub fn scan_under(document: &Value, name: Option<&str>) -> Vec<Finding> {
    fn walk(value: &Value, name: Option<&str>, path: &mut Vec<Segment>, out: &mut Vec<Finding>) {
        match value {
            Value::String(text) => {
                if let Some(kind) = kind_of(name, text) {
                    out.push(Finding {
                        path: Location(path.clone()),
                        document_at: 0,
                        parameter: None,
                        kind,
                    });
                }
            }
            Value::Object(map) => {
                for (key, child) in map {
                    path.push(Segment::Key(key.clone()));
                    walk(child, Some(key), path, out);
                    path.pop();
                }
            }
            Value::Array(items) => {
                for (n, child) in items.iter().enumerate() {
                    path.push(Segment::Index(n));
                    walk(child, name, path, out);
                    path.pop();
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(document, name, &mut Vec::new(), &mut out);
    out
}

/// Every parameter of a URL query string (without its `?`) whose value looks like a
/// credential, in order; each finding's path is the root and its `parameter` the name. A piece
/// without `=` is read as a value with no name.
pub fn scan_query(query: &str) -> Vec<Finding> {
    crate::query::params(query)
        .filter_map(|param| {
            let (name, text) = match param.raw_value {
                Some(_) => (Some(param.name()), param.value()),
                None => (None, param.name()),
            };
            let kind = kind_of(name.as_deref(), &text)?;
            Some(Finding {
                path: Location::root(),
                document_at: 0,
                parameter: Some(name.unwrap_or_default()),
                kind,
            })
        })
        .collect()
}

/// `document` with every credential [`scan`] finds taken out: a provider's key replaced by
/// `<redacted>` where it is in its string, a key-like value replaced whole. For what is shown
/// to a person (a replay's request diff), where a credential the recording's redaction rules did
/// not cover would otherwise be printed.
///
/// ```
/// use proposal_eval_engine::credentials::masked;
/// use serde_json::json;
///
/// let request = json!({ "user": "sk-live-0f1e2d3c4b5a69788796a5b4", "note": "hi", "api_token": "0123456789abcdefXYZ" });
/// assert_eq!(masked(&request), json!({ "user": "<redacted>", "note": "hi", "api_token": "<redacted>" }));
/// ```
pub fn masked(document: &Value) -> Value {
    let mut out = document.clone();
    for finding in scan(document) {
        let Some(Value::String(text)) = finding.path.get_mut(&mut out) else {
            continue;
        };
        match finding.kind {
            Kind::Pattern(_) => {
                for detector in detectors() {
                    if detector.regex.is_match(text) {
                        *text = detector
                            .redact
                            .replace_all(text, crate::redact::REDACTED)
                            .into_owned();
                    }
                }
            }
            Kind::KeyLike { .. } => *text = crate::redact::REDACTED.to_string(),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redact::Redactor;
    use serde_json::json;

    const KINDS: [(&str, &str); 17] = [
        ("sk-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c", "an sk- API key"),
        ("key=sk-live-4f9a8b7c6d5e4f3a2b1c", "an sk- API key"),
        (
            "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
            "an sk-ant- Anthropic key",
        ),
        (
            "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34",
            "an sk-proj- OpenAI key",
        ),
        ("sk_live_51HxYzAbCdEfGhIjKlMnOpQr", "an sk_live_ Stripe key"),
        ("AKIAIOSFODNN7EXAMPLE", "an AKIA AWS access key id"),
        ("id: ASIAY34FZKBOKMUTVV7A.", "an AKIA AWS access key id"),
        (
            "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
            "a ghp_ GitHub token",
        ),
        (
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
            "a github_pat_ GitHub token",
        ),
        (
            "https://maps.example/?key=AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
            "an AIza Google API key",
        ),
        (
            "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
            "a xox- Slack token",
        ),
        ("xoxp-1234567890-abcdef", "a xox- Slack token"),
        (
            "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
            "a bearer token",
        ),
        (
            "authorization: bearer 0123456789abcdefXYZ",
            "a bearer token",
        ),
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEow...\n-----END RSA PRIVATE KEY-----\nrest",
            "a PEM private key",
        ),
        ("-----BEGIN PRIVATE KEY-----", "a PEM private key"),
        ("-----BEGIN OPENSSH PRIVATE KEY-----", "a PEM private key"),
    ];

    #[test]
    fn each_kind_is_found() {
        for (text, kind) in KINDS {
            assert_eq!(looks_like(text).map(Pattern::name), Some(kind), "{text}");
        }
    }

    /// The config line a finding suggests does what it says: with it, the same string is no
    /// longer found.
    #[test]
    fn each_suggested_regex_redacts_its_kind() {
        for (text, _) in KINDS {
            let pattern = looks_like(text).unwrap();
            let redactor = Redactor::new(vec![], vec![pattern.redact_value().parse().unwrap()]);
            let mut document = json!({ "note": text });
            redactor.redact(&mut document);
            assert_eq!(scan(&document), [], "{text} -> {document}");
            assert!(document["note"].as_str().unwrap().contains("<redacted>"));
        }
        assert_eq!(patterns().count(), 11);
    }

    #[test]
    fn masked_documents_hold_no_credential_and_keep_the_rest() {
        for (text, _) in KINDS {
            let document = json!({ "a": [text, "plain"], "session_token": "0123456789abcdefXY" });
            let shown = masked(&document);
            assert_eq!(scan(&shown), [], "{text} -> {shown}");
            assert_eq!(shown["a"][1], "plain");
            assert_eq!(shown["session_token"], "<redacted>");
        }
        assert_eq!(
            masked(&json!("say Bearer 0123456789abcdefXYZ now")),
            json!("say <redacted> now")
        );
    }

    /// Text in any language is read as ASCII text is: a key in it is found, a word in it is not
    /// a key. (The bearer pattern's word boundary is ASCII's, so that regex's DFA reads such text:
    /// with Unicode's boundary it fell back to a slower engine, 4.5 s for a megabyte of German
    /// prose in a test build; `cargo bench -p proposal-eval-engine --bench credentials`.)
    #[test]
    fn text_that_is_not_ascii_is_read_like_any_other() {
        for (text, kind) in [
            (
                "Schlüssel: Bearer 0123456789abcdefXYZ",
                Some("a bearer token"),
            ),
            ("Grüße,Bearer 0123456789abcdefXYZ", Some("a bearer token")),
            (
                "clé=sk-proj-0123456789abcdefghijXYZ",
                Some("an sk-proj- OpenAI key"),
            ),
            (
                "Überweisung über 120 € an den Träger (bearer) der Karte",
                None,
            ),
            ("日本語のテキスト sk-日本語のテキストです", None),
        ] {
            assert_eq!(looks_like(text).map(Pattern::name), kind, "{text}");
        }
    }

    #[test]
    fn prose_and_redacted_values_are_not_credentials() {
        for text in [
            "",
            "<redacted>",
            "Bearer <redacted>",
            "Please change my payment to 120 EUR",
            "a task-oriented, risk-averse, desk-bound analyst",
            "sk-learn is a library; so is sk-image",
            "sk-this-is-a-long-hyphenated-phrase-of-words",
            "the bearer of this letter",
            "Bearer authentication-without-any-digits",
            "Bearer short1",
            "AKIA is a prefix, AKIA1234 too short",
            "AKIAIOSFODNN7EXAMPLEX2 is too long to be one",
            "ghp_short",
            "AIza but not long enough",
            "xoxb-short",
            "-----BEGIN PUBLIC KEY-----",
            "-----BEGIN CERTIFICATE-----",
            "The customer's IBAN is DE89370400440532013000",
            "mask-1234567890abcdefghij",
            "a mixed ASIAN market",
        ] {
            assert_eq!(looks_like(text), None, "{text}");
        }
    }

    #[test]
    fn a_digest_named_so_is_no_credential() {
        let digest = "9".repeat(32) + &"a".repeat(32);
        assert!(scan(&json!({ "judge": { "key_sha256": digest } })).is_empty());
        // Not 64 hex digits, or not named a digest: still a key.
        assert_eq!(
            scan(&json!({ "key_sha256": "9f8e7d6c5b4a39281706" })).len(),
            1
        );
        assert_eq!(scan(&json!({ "api_key": digest })).len(), 1);
    }

    #[test]
    fn key_like_values_count_only_under_credential_names() {
        let document = json!({
            "user": "u-0123456789abcdef",
            "metadata": {
                "customer_note": "call back tomorrow, ticket 0123456789abcdef",
                "session_token": "0123456789abcdefABCD",
                "Refresh-Tokens": ["short1", "tok_0123456789abcdefXY"],
                "auth_method": "client_credentials_flow",
                "api_key_id": 12345678901234567890u64,
                "keyword": "<redacted>",
            },
        });
        let found: Vec<String> = scan(&document).iter().map(Finding::to_string).collect();
        assert_eq!(
            found,
            [
                "metadata.Refresh-Tokens[1] (a key-like value of 22 characters under a name holding `token`)",
                "metadata.session_token (a key-like value of 20 characters under a name holding `token`)",
            ]
        );
        let fixes: Vec<String> = scan(&document)
            .iter()
            .map(|f| f.fix().to_string())
            .collect();
        assert_eq!(
            fixes,
            [
                r#"redact = ["metadata.Refresh-Tokens"]"#,
                r#"redact = ["metadata.session_token"]"#
            ]
        );
        for value in ["0123456789abcdef", "A1-_.~+/=aaaaaaa"] {
            assert!(key_like_value(value), "{value}");
        }
        for value in [
            "0123456789abcde",
            "0123456789012345678",
            "abcdefghijklmnopq",
            "0123456789 abcdef",
        ] {
            assert!(!key_like_value(value), "{value}");
        }
        for (name, word) in [
            ("API_KEY", "key"),
            ("passwordHash", "password"),
            ("x-auth", "auth"),
            ("ClientSecret", "secret"),
        ] {
            assert_eq!(key_like_name(name), Some(word));
        }
    }

    #[test]
    fn a_fix_path_starts_at_the_redacted_document_and_any_index_fits() {
        let mut finding = scan(&json!({ "interactions": [{ "request": { "tools": [{ "x.auth_key": "0123456789abcdefXYZ" }] } }] }))
            .remove(0);
        assert_eq!(
            finding.to_string(),
            r#"interactions[0].request.tools[0]["x.auth_key"] (a key-like value of 19 characters under a name holding `key`)"#
        );
        finding.document_at = 3;
        assert_eq!(
            finding.fix().to_string(),
            r#"redact = ["tools[*][\"x.auth_key\"]"]"#
        );
        let redact: crate::path::Pattern = r#"tools[*]["x.auth_key"]"#.parse().unwrap();
        let mut request = json!({ "tools": [{ "x.auth_key": "0123456789abcdefXYZ" }] });
        Redactor::new(vec![redact], vec![]).redact(&mut request);
        assert_eq!(scan(&request), []);
    }

    #[test]
    fn query_parameters_are_scanned_by_name_and_by_pattern() {
        let found = scan_query(
            "api-version=2024-06-01&user=sk-live-0123456789abcdefghij&api%2Dtoken=0123456789abcdefXY&AKIAIOSFODNN7EXAMPLE&next_page_token=short&key=<redacted>",
        );
        let text: Vec<String> = found.iter().map(Finding::to_string).collect();
        assert_eq!(
            text,
            [
                "$, parameter `user` (an sk- API key)",
                "$, parameter `api-token` (a key-like value of 18 characters under a name holding `token`)",
                "$, parameter `` (an AKIA AWS access key id)",
            ]
        );
        assert_eq!(found[0].fix(), Fix::RedactValues("sk-[A-Za-z0-9_-]{20,}"));
        assert_eq!(found[1].fix().to_string(), r#"redact = ["api-token"]"#);
        assert_eq!(scan_query(""), []);
    }

    #[test]
    fn fixes_are_toml() {
        let line = Fix::RedactValues(BEARER.redact_value).to_string();
        let parsed: toml::Value = toml::from_str(&line).unwrap();
        assert_eq!(
            parsed["redact_values"][0].as_str(),
            Some(BEARER.redact_value)
        );
        let line = Fix::Redact("a[\"b\\c\"]\u{1}".into()).to_string();
        let parsed: toml::Value = toml::from_str(&line).unwrap();
        assert_eq!(parsed["redact"][0].as_str(), Some("a[\"b\\c\"]\u{1}"));
    }
}
