//! Credentials in recordings: where the rules of `proposal_eval_engine::credentials` look in a
//! recording or a pending file, the check made before either is written, and the one that
//! `cargo proposal-eval status --check` makes on the files (the same scan).
//!
//! Recordings are committed, so a key that redaction missed (a body field of another name, a
//! token inside a prompt, a key the upstream echoes back) would be published with them. Every
//! request, response and query string is redacted before a write; then the document that would
//! be written is scanned, and a file that would hold a credential is not written at all: the case
//! fails naming the JSON path, what it looks like and the config line that redacts it.
//!
//! ```
//! use proposal_eval::__internal::recording::credentials::scan_recording;
//! use serde_json::json;
//!
//! let recording = json!({ "interactions": [{
//!     "request": { "metadata": { "customer_note": "my key is sk-live-9a8b7c6d5e4f3a2b1c0d" } },
//!     "response": {},
//!     "http": { "method": "POST", "path": "/v1/chat", "query": "user_token=0123456789abcdefXYZ", "status": 200 },
//! }] });
//! let found = scan_recording(&recording);
//! assert_eq!(found[0].to_string(), "interactions[0].http.query, parameter `user_token` (a key-like value of 19 characters under a name holding `token`)");
//! assert_eq!(found[0].fix().to_string(), r#"redact = ["user_token"]"#);
//! assert_eq!(found[1].to_string(), "interactions[0].request.metadata.customer_note (an sk- API key)");
//! assert_eq!(found[1].fix().to_string(), r#"redact_values = ["sk-[A-Za-z0-9_-]{20,}"]"#);
//! ```

use crate::path::{Location, Segment};
pub use proposal_eval_engine::credentials::{scan, scan_query, scan_under, Finding};
use serde_json::Value;
use std::path::Path;
use std::sync::OnceLock;

/// Every string of a recording or pending file (as JSON) that looks like a credential, in
/// document order, each with its path from the file's root. Requests, responses and the
/// outputs of a pending file are the documents that redaction sees, so a finding there has its
/// [`Finding::fix`] relative to them; an HTTP call's `query` is read as a query string.
pub fn scan_recording(document: &Value) -> Vec<Finding> {
    let mut out = Vec::new();
    let Value::Object(map) = document else {
        return scan(document);
    };
    for (key, value) in map {
        let at = vec![Segment::Key(key.clone())];
        match (key.as_str(), value) {
            ("interactions", Value::Array(items)) => interactions(items, at, &mut out),
            ("samples", Value::Array(samples)) => {
                for (n, sample) in samples.iter().enumerate() {
                    let mut at = at.clone();
                    at.push(Segment::Index(n));
                    match sample {
                        Value::Object(sample) => {
                            for (key, value) in sample {
                                let mut at = at.clone();
                                at.push(Segment::Key(key.clone()));
                                match (key.as_str(), value) {
                                    ("interactions", Value::Array(items)) => {
                                        interactions(items, at, &mut out)
                                    }
                                    _ => placed(value, at, &mut out),
                                }
                            }
                        }
                        other => placed(other, at, &mut out),
                    }
                }
            }
            ("review", Value::Object(sides)) => {
                // `review.pending.output`: an output is redacted as a document of its own.
                for (side, outcome) in sides {
                    let mut at = at.clone();
                    at.push(Segment::Key(side.clone()));
                    match outcome {
                        Value::Object(outcome) => {
                            for (kind, value) in outcome {
                                let mut at = at.clone();
                                at.push(Segment::Key(kind.clone()));
                                placed(value, at, &mut out);
                            }
                        }
                        other => placed(other, at, &mut out),
                    }
                }
            }
            _ => placed(value, at, &mut out),
        }
    }
    out
}

/// The findings of each interaction: its request and response, its HTTP call's query string.
fn interactions(items: &[Value], at: Vec<Segment>, out: &mut Vec<Finding>) {
    for (n, interaction) in items.iter().enumerate() {
        let mut at = at.clone();
        at.push(Segment::Index(n));
        let Value::Object(fields) = interaction else {
            placed(interaction, at, out);
            continue;
        };
        for (key, value) in fields {
            let mut at = at.clone();
            at.push(Segment::Key(key.clone()));
            match (key.as_str(), value) {
                ("http", Value::Object(http)) => {
                    for (key, value) in http {
                        let mut at = at.clone();
                        at.push(Segment::Key(key.clone()));
                        match (key.as_str(), value) {
                            ("query", Value::String(query)) => {
                                out.extend(scan_query(query).into_iter().map(|f| Finding {
                                    path: Location(at.clone()),
                                    document_at: at.len(),
                                    ..f
                                }));
                            }
                            _ => placed(value, at, out),
                        }
                    }
                }
                _ => placed(value, at, out),
            }
        }
    }
}

/// The findings of `value`, a document found at `at`.
fn placed(value: &Value, at: Vec<Segment>, out: &mut Vec<Finding>) {
    let name = at.iter().rev().find_map(|s| match s {
        Segment::Key(key) => Some(key.as_str()),
        Segment::Index(_) => None,
    });
    out.extend(scan_under(value, name).into_iter().map(|f| {
        let mut path = at.clone();
        path.extend(f.path.0);
        Finding {
            path: Location(path),
            document_at: at.len(),
            ..f
        }
    }));
}

/// The credentials in a JSON file (a recording or a pending file); none for a file that is
/// missing or is not JSON, which the caller reports otherwise.
pub fn scan_file(file: &Path) -> Vec<Finding> {
    let Ok(bytes) = std::fs::read(file) else {
        return Vec::new();
    };
    // Most recordings hold neither a provider's prefix nor a string under a credential-like name
    // (`prompt_tokens` holds a number): skip building the document for them. A file with
    // escapes is always parsed, since `\u0041KIA` is `AKIA` once read.
    static PREFIXES: OnceLock<regex::bytes::Regex> = OnceLock::new();
    let prefixes = PREFIXES.get_or_init(|| {
        regex::bytes::Regex::new(
            concat!(
                r"sk-|_live_|AKIA|ASIA|gh[pousr]_|github_pat_|AIza|xox[abposr]-|(?i:bearer)|PRIVATE KEY",
                // A string or a list as the value of a credential-like name, or a query string.
                r#"|(?i:key|token|secret|password|auth)[^"]*"\s*:\s*[\["]|"query"\s*:\s*""#,
                r"|\\[^n\x22\\]",
            ),
        )
        .expect("the prefix pattern is valid")
    });
    if !prefixes.is_match(&bytes) {
        return Vec::new();
    }
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(document) => scan_recording(&document),
        Err(_) => Vec::new(),
    }
}

/// The fix for a finding, as a person reads it: the line to add to the suite config, or, for
/// the copy of the case's input a recording keeps, the fixture to change.
pub fn fix_text(finding: &Finding, config_file: &str) -> String {
    let in_url_path = finding
        .path
        .0
        .ends_with(&[Segment::Key("http".into()), Segment::Key("path".into())]);
    match finding.path.0.first() {
        Some(Segment::Key(key)) if key == "input" => {
            "it is in the case's `input`: take it out of the fixture".to_string()
        }
        _ if in_url_path => "it is in the URL's path, which replay matches and redaction leaves \
            as it is: send the key in a header or the query string"
            .to_string(),
        _ => format!("add to `[recording]` in {config_file}: {}", finding.fix()),
    }
}

/// The message `status` shows for a recording holding credentials: the file, each path and
/// what it looks like, and the fix.
pub fn message(file: &str, findings: &[Finding]) -> String {
    let places: Vec<String> = findings.iter().map(Finding::to_string).collect();
    let mut fixes: Vec<String> = findings
        .iter()
        .filter(|f| f.path.0.first() != Some(&Segment::Key("input".into())))
        .map(|f| format!("`{}`", f.fix()))
        .collect();
    fixes.dedup();
    let keep_out = if fixes.is_empty() {
        String::new()
    } else {
        format!(
            ", and keep it out of the next recording with {} in `[recording]` of the suite config",
            fixes.join(" and ")
        )
    };
    format!(
        "{file}: holds what looks like a credential at {}; remove it from the file{keep_out}",
        places.join(", ")
    )
}

/// Why a recording or pending file was not written: the file, and each credential with its
/// fix, a line each.
pub fn refusal(file: &str, findings: &[Finding], config_file: &str) -> String {
    let mut text = format!(
        "{file} was not written (a file already there is unchanged): it would hold what looks like a credential\n"
    );
    for finding in findings {
        text.push_str(&format!(
            "  {finding}\n    fix: {}\n",
            fix_text(finding, config_file)
        ));
    }
    text.push_str("redaction (the credential keys, `redact`, `redact_values`) ran before this check: docs/reference/recordings.md, \"Redaction\"");
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scan_recording_names_each_path_in_the_path_grammar() {
        let recording = json!({
            "input": { "message": "hi", "sig": "ghp_16C7e42F292c6912E7710c838347Ae178B4a" },
            "interactions": [
                {
                    "request": {
                        "headers": { "authorization": "<redacted>", "x.key": "AKIAIOSFODNN7EXAMPLE" },
                        "messages": ["fine", "token ghp_16C7e42F292c6912E7710c838347Ae178B4a"],
                    },
                    "response": { "text": "-----BEGIN EC PRIVATE KEY-----" },
                    "http": { "method": "GET", "path": "/v1", "query": "a=1&key=<redacted>&my_secret=0123456789abcdefXY" },
                },
            ],
        });
        let found: Vec<String> = scan_recording(&recording)
            .iter()
            .map(|f| f.to_string())
            .collect();
        assert_eq!(
            found,
            [
                "input.sig (a ghp_ GitHub token)",
                "interactions[0].http.query, parameter `my_secret` (a key-like value of 18 characters under a name holding `secret`)",
                r#"interactions[0].request.headers["x.key"] (an AKIA AWS access key id)"#,
                "interactions[0].request.messages[1] (a ghp_ GitHub token)",
                "interactions[0].response.text (a PEM private key)",
            ]
        );
        assert_eq!(
            message("s/recordings/a.json", &scan_recording(&recording)[..3]),
            "s/recordings/a.json: holds what looks like a credential at input.sig (a ghp_ GitHub token), interactions[0].http.query, parameter `my_secret` (a key-like value of 18 characters under a name holding `secret`), interactions[0].request.headers[\"x.key\"] (an AKIA AWS access key id); remove it from the file, and keep it out of the next recording with `redact = [\"my_secret\"]` and `redact_values = [\"(?:AKIA|ASIA)[A-Z0-9]{16}\"]` in `[recording]` of the suite config"
        );
    }

    /// A pending file's outputs and a several-sample recording's interactions are documents
    /// too: a fix is relative to them.
    #[test]
    fn samples_and_pending_outputs_are_scanned_as_documents() {
        let pending = json!({
            "samples": [{ "interactions": [{ "request": { "a": [{ "auth_key": "0123456789abcdefXY" }] }, "response": null }] }],
            "review": { "pending": { "output": { "api_token": "0123456789abcdefXY" } }, "committed": { "error": "sk-0123456789abcdefghijkl" } },
        });
        let found = scan_recording(&pending);
        let text: Vec<String> = found
            .iter()
            .map(|f| format!("{f} -> {}", fix_text(f, "s/proposal-eval.toml")))
            .collect();
        assert_eq!(
            text,
            [
                "review.committed.error (an sk- API key) -> add to `[recording]` in s/proposal-eval.toml: redact_values = [\"sk-[A-Za-z0-9_-]{20,}\"]",
                "review.pending.output.api_token (a key-like value of 18 characters under a name holding `token`) -> add to `[recording]` in s/proposal-eval.toml: redact = [\"api_token\"]",
                "samples[0].interactions[0].request.a[0].auth_key (a key-like value of 18 characters under a name holding `key`) -> add to `[recording]` in s/proposal-eval.toml: redact = [\"a[*].auth_key\"]",
            ]
        );
        assert_eq!(
            refusal("s/recordings/p.pending.json", &found[..1], "s/proposal-eval.toml"),
            "s/recordings/p.pending.json was not written (a file already there is unchanged): it would hold what looks like a credential\n  review.committed.error (an sk- API key)\n    fix: add to `[recording]` in s/proposal-eval.toml: redact_values = [\"sk-[A-Za-z0-9_-]{20,}\"]\nredaction (the credential keys, `redact`, `redact_values`) ran before this check: docs/reference/recordings.md, \"Redaction\""
        );
        assert_eq!(
            fix_text(
                &scan_recording(&json!({ "input": { "k": "AKIAIOSFODNN7EXAMPLE" } }))[0],
                "c"
            ),
            "it is in the case's `input`: take it out of the fixture"
        );
        let in_path = json!({ "interactions": [{ "http": { "path": "/bot/sk-0123456789abcdefghijkl/send" } }] });
        assert_eq!(
            fix_text(&scan_recording(&in_path)[0], "c"),
            "it is in the URL's path, which replay matches and redaction leaves as it is: send the key in a header or the query string"
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
        let named = write(
            "named.json",
            r#"{ "Session-Token": "0123456789abcdefXYZ" }"#,
        );
        assert_eq!(scan_file(&named).len(), 1);
        assert!(scan_file(&write("broken.json", "{ \"k\": \"sk-")).is_empty());
        assert!(scan_file(&dir.path().join("missing.json")).is_empty());
    }
}
