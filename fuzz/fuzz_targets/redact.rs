//! Redaction of what an HTTP call carries: a query string (`Redactor::redact_query`) and
//! headers as name/value pairs (`Redactor::redact` on an object of them). Neither panics, and
//! for any input: redacting twice gives what redacting once gave; a query keeps its pieces in
//! order, each piece named like a credential ends in `=<redacted>` and the others are as written
//! (but for what `redact_values` takes out); every header named like a credential is
//! `<redacted>`; the credential scan finds nothing under a credential name after redaction; and
//! `credentials::masked` leaves nothing the scan finds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use proposal_eval_engine::credentials::{masked, scan, scan_query, Kind};
use proposal_eval_engine::path::Segment;
use proposal_eval_engine::redact::{is_secret_key, is_secret_parameter, Redactor, REDACTED};
use serde_json::{Map, Value};
use std::sync::OnceLock;

/// The rules of a suite that configures both kinds: one path (a query parameter too) and one
/// value pattern that cannot match a `&`, `=` or `<`, as generated keys cannot.
fn configured() -> &'static Redactor {
    static REDACTOR: OnceLock<Redactor> = OnceLock::new();
    REDACTOR.get_or_init(|| {
        Redactor::new(
            vec!["session_token".parse().unwrap()],
            vec!["sk-[A-Za-z0-9_-]{20,}".parse().unwrap()],
        )
    })
}

fn decoded(text: &str) -> String {
    // The fuzz target's own reading of a name, to check the engine's: `+` is a space and each
    // `%XX` its byte.
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let hex = |at: usize| {
            bytes
                .get(at)
                .and_then(|b| (*b as char).to_digit(16))
                .map(|d| d as u8)
        };
        match (bytes[i], hex(i + 1), hex(i + 2)) {
            (b'%', Some(h), Some(l)) => {
                out.push(h * 16 + l);
                i += 3;
                continue;
            }
            (b'+', ..) => out.push(b' '),
            (b, ..) => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn check_query(query: &str) {
    for redactor in [&Redactor::default(), configured()] {
        let once = redactor.redact_query(query);
        assert_eq!(
            redactor.redact_query(&once),
            once,
            "not idempotent: {query:?}"
        );
        let before: Vec<&str> = query.split('&').collect();
        let after: Vec<&str> = once.split('&').collect();
        assert_eq!(before.len(), after.len(), "{query:?} -> {once:?}");
        for (was, is) in before.iter().zip(&after) {
            let Some((name, _)) = was.split_once('=') else {
                continue;
            };
            let secret = is_secret_parameter(&decoded(name))
                || (std::ptr::eq(redactor, configured()) && decoded(name) == "session_token");
            if secret {
                assert_eq!(*is, format!("{name}={REDACTED}"), "{query:?} -> {once:?}");
            } else if redactor == &Redactor::default() {
                assert_eq!(is, was, "{query:?} -> {once:?}");
            }
        }
        for finding in scan_query(&once) {
            let name = finding.parameter.as_deref().unwrap_or_default();
            assert!(
                !is_secret_parameter(name),
                "{finding} left in {once:?} (from {query:?})"
            );
        }
    }
}

fn check_headers(text: &str) {
    let mut headers = Map::new();
    for line in text.lines() {
        let (name, value) = line.split_once(':').unwrap_or((line, ""));
        headers.insert(
            name.trim().to_string(),
            Value::String(value.trim().to_string()),
        );
    }
    let original = Value::Object(headers);
    let mut once = original.clone();
    configured().redact(&mut once);
    let mut twice = once.clone();
    configured().redact(&mut twice);
    assert_eq!(once, twice, "not idempotent: {original}");
    for (name, value) in once.as_object().into_iter().flatten() {
        if is_secret_key(name) {
            assert_eq!(value, REDACTED, "{name} in {once}");
        }
    }
    for finding in scan(&once) {
        if let (Kind::KeyLike { .. }, Some(Segment::Key(name))) =
            (&finding.kind, finding.path.0.first())
        {
            assert!(!is_secret_key(name), "{finding} in {once}");
        }
    }
    let shown = masked(&original);
    assert_eq!(scan(&shown), [], "masked {original} is {shown}");
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    check_query(text);
    check_headers(text);
});
