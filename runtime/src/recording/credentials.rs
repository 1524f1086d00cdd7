//! Credentials in recordings: the strings that look like an API key, a token or a private key,
//! which `cargo proposal-eval status --check` refuses in a recording.
//!
//! Recordings are committed, so a key that redaction missed (a header under another name, a
//! token inside a prompt) would be published with them. Redaction runs before every write; this
//! is the check after it, on the files themselves, including ones written or edited by hand.
//!
//! Each kind is a prefix a provider gives its keys, followed by a token-like run of characters
//! long enough that ordinary prose does not produce it; where the prefix alone is common (`sk-`,
//! `Bearer`), the run must also hold both a letter and a digit, as generated keys do.
//!
//! ```
//! use proposal_eval::__internal::recording::credentials::{looks_like, scan};
//! use serde_json::json;
//!
//! assert_eq!(looks_like("key AKIAIOSFODNN7EXAMPLE here"), Some("an AKIA AWS access key id"));
//! assert_eq!(looks_like("risk-free and task-based, see sk-learn"), None);
//! let found = scan(&json!({ "headers": { "x-token": "Bearer 4f9a8b7c6d5e4f3a2b1c" } }));
//! assert_eq!(found[0].to_string(), "headers.x-token (a bearer token)");
//! ```

use crate::path::Location;
use regex::Regex;
use serde_json::Value;
use std::fmt;
use std::path::Path;
use std::sync::OnceLock;

/// A string that looks like a credential, and where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// Where the string is, in the document scanned (for a recording file: from its root, as
    /// `interactions[0].request.headers.authorization`).
    pub path: Location,
    /// What it looks like: `a bearer token`, `an AKIA AWS access key id`…
    pub kind: &'static str,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.path, self.kind)
    }
}

/// One kind of credential: a regex whose group 1 is the token, and whether the token must hold
/// both a letter and a digit.
struct Detector {
    kind: &'static str,
    regex: Regex,
    mixed: bool,
}

/// Before the prefix of a key: the start of the string, or a character that is not part of a
/// token (so `task-` is not `sk-`).
const START: &str = r"(?:^|[^A-Za-z0-9_\-])";
/// After a key of fixed length: the end, or a character that is not part of a token.
const END: &str = r"(?:$|[^A-Za-z0-9_\-])";

fn detectors() -> &'static [Detector] {
    static DETECTORS: OnceLock<Vec<Detector>> = OnceLock::new();
    DETECTORS.get_or_init(|| {
        let detector = |kind, pattern: String, mixed| Detector {
            kind,
            regex: Regex::new(&pattern).expect("the credential patterns are valid"),
            mixed,
        };
        vec![
            detector(
                "a PEM private key",
                r"(-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----)".into(),
                false,
            ),
            detector(
                "an sk-ant- Anthropic key",
                format!(r"{START}(sk-ant-[A-Za-z0-9_\-]{{20,}})"),
                true,
            ),
            detector(
                "an sk-proj- OpenAI key",
                format!(r"{START}(sk-proj-[A-Za-z0-9_\-]{{20,}})"),
                true,
            ),
            detector(
                "an sk- API key",
                format!(r"{START}(sk-[A-Za-z0-9_\-]{{20,}})"),
                true,
            ),
            detector(
                "an sk_live_ Stripe key",
                format!(r"{START}((?:sk|rk)_live_[A-Za-z0-9]{{20,}})"),
                false,
            ),
            detector(
                "an AKIA AWS access key id",
                format!(r"{START}((?:AKIA|ASIA)[A-Z0-9]{{16}}){END}"),
                false,
            ),
            detector(
                "a ghp_ GitHub token",
                format!(r"{START}(gh[pousr]_[A-Za-z0-9]{{36,}})"),
                false,
            ),
            detector(
                "a github_pat_ GitHub token",
                format!(r"{START}(github_pat_[A-Za-z0-9_]{{22,}})"),
                false,
            ),
            detector(
                "an AIza Google API key",
                format!(r"{START}(AIza[A-Za-z0-9_\-]{{35}}){END}"),
                false,
            ),
            detector(
                "a xox- Slack token",
                format!(r"{START}(xox[abposr]-[A-Za-z0-9\-]{{10,}})"),
                true,
            ),
            detector(
                "a bearer token",
                r"\b(?i:bearer)[ \t]+([A-Za-z0-9\-._~+/]{16,}=*)".into(),
                true,
            ),
        ]
    })
}

/// Whether a token holds a letter and a digit, as a generated key does and a word does not.
fn mixed(token: &str) -> bool {
    token.bytes().any(|b| b.is_ascii_digit()) && token.bytes().any(|b| b.is_ascii_alphabetic())
}

/// What `text` looks like, when it holds a credential: the first kind found.
pub fn looks_like(text: &str) -> Option<&'static str> {
    detectors().iter().find_map(|d| {
        d.regex
            .captures_iter(text)
            .filter_map(|c| c.get(1))
            .any(|token| !d.mixed || mixed(token.as_str()))
            .then_some(d.kind)
    })
}

/// Every string value of `document` that looks like a credential, in document order.
pub fn scan(document: &Value) -> Vec<Finding> {
    fn walk(value: &Value, path: &mut Vec<crate::path::Segment>, out: &mut Vec<Finding>) {
        use crate::path::Segment;
        match value {
            Value::String(text) => {
                if let Some(kind) = looks_like(text) {
                    out.push(Finding {
                        path: Location(path.clone()),
                        kind,
                    });
                }
            }
            Value::Object(map) => {
                for (key, child) in map {
                    path.push(Segment::Key(key.clone()));
                    walk(child, path, out);
                    path.pop();
                }
            }
            Value::Array(items) => {
                for (n, child) in items.iter().enumerate() {
                    path.push(Segment::Index(n));
                    walk(child, path, out);
                    path.pop();
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(document, &mut Vec::new(), &mut out);
    out
}

/// The credentials in a JSON file (a recording); none for a file that is missing or is not
/// JSON, which the caller reports otherwise.
pub fn scan_file(file: &Path) -> Vec<Finding> {
    let Ok(bytes) = std::fs::read(file) else {
        return Vec::new();
    };
    // Most recordings hold none of the prefixes: skip building the document for them. A file
    // with escapes is always parsed, since `\u0041KIA` is `AKIA` once read.
    static PREFIXES: OnceLock<regex::bytes::Regex> = OnceLock::new();
    let prefixes = PREFIXES.get_or_init(|| {
        regex::bytes::Regex::new(
            r"sk-|_live_|AKIA|ASIA|gh[pousr]_|github_pat_|AIza|xox[abposr]-|(?i:bearer)|PRIVATE KEY|\\[^n\x22\\]",
        )
        .expect("the prefix pattern is valid")
    });
    if !prefixes.is_match(&bytes) {
        return Vec::new();
    }
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(document) => scan(&document),
        Err(_) => Vec::new(),
    }
}

/// The message `status` shows for a recording holding credentials: the file, each path and
/// what it looks like, and the fix.
pub fn message(file: &str, findings: &[Finding]) -> String {
    let places: Vec<String> = findings.iter().map(Finding::to_string).collect();
    format!(
        "{file}: holds what looks like a credential at {}; remove it from the file, and keep it out of the next recording with `[recording] redact` (paths) or `redact_values` (regexes) in the suite config",
        places.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_kind_is_found() {
        let cases = [
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
                "-----BEGIN RSA PRIVATE KEY-----\nMIIEow...",
                "a PEM private key",
            ),
            ("-----BEGIN PRIVATE KEY-----", "a PEM private key"),
            ("-----BEGIN OPENSSH PRIVATE KEY-----", "a PEM private key"),
        ];
        for (text, kind) in cases {
            assert_eq!(looks_like(text), Some(kind), "{text}");
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
    fn scan_names_each_path_in_the_path_grammar() {
        let recording = json!({
            "input": { "message": "hi" },
            "interactions": [
                {
                    "request": {
                        "headers": { "authorization": "<redacted>", "x.key": "AKIAIOSFODNN7EXAMPLE" },
                        "messages": ["fine", "token ghp_16C7e42F292c6912E7710c838347Ae178B4a"],
                    },
                    "response": { "text": "-----BEGIN EC PRIVATE KEY-----" },
                },
            ],
        });
        let found: Vec<String> = scan(&recording).iter().map(|f| f.to_string()).collect();
        assert_eq!(
            found,
            [
                r#"interactions[0].request.headers["x.key"] (an AKIA AWS access key id)"#,
                "interactions[0].request.messages[1] (a ghp_ GitHub token)",
                "interactions[0].response.text (a PEM private key)",
            ]
        );
        assert_eq!(
            message("s/recordings/a.json", &scan(&recording)[..1]),
            "s/recordings/a.json: holds what looks like a credential at interactions[0].request.headers[\"x.key\"] (an AKIA AWS access key id); remove it from the file, and keep it out of the next recording with `[recording] redact` (paths) or `redact_values` (regexes) in the suite config"
        );
    }

    #[test]
    fn scan_file_finds_escaped_credentials_and_skips_clean_files() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        let clean = write("clean.json", r#"{ "a": "nothing here", "b": [1, 2] }"#);
        assert!(scan_file(&clean).is_empty());
        let escaped = write("escaped.json", r#"{ "k": "\u0041KIAIOSFODNN7EXAMPLE" }"#);
        assert_eq!(
            scan_file(&escaped)[0].to_string(),
            "k (an AKIA AWS access key id)"
        );
        let plain = write("plain.json", r#"{ "k": ["Bearer 0123456789abcdefXYZ"] }"#);
        assert_eq!(scan_file(&plain)[0].to_string(), "k[0] (a bearer token)");
        assert!(scan_file(&write("broken.json", "{ \"k\": \"sk-")).is_empty());
        assert!(scan_file(&dir.path().join("missing.json")).is_empty());
    }
}
