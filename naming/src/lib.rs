//! Test names from fixture paths, for [proposal-eval](https://docs.rs/proposal-eval): a crate of
//! its own because both the runtime (the harness, at run time) and the `#[proposal_eval]` macro
//! (at compile time) need them, and they must name every fixture alike.
//!
//! ```
//! use proposal_eval_naming::test_name;
//! assert_eq!(test_name("payments", "changes/raise-amount.json"), "payments::changes::raise_amount");
//! ```

#![deny(missing_docs)]

/// Rust keywords that cannot be a test function's name as they are.
const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
    "pub", "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true", "type",
    "unsafe", "use", "where", "while", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "try", "typeof", "unsized", "virtual", "yield", "test",
];

/// One path component made into a valid Rust identifier: characters outside `[A-Za-z0-9_]`
/// become `_`, a leading digit gets a `_` before it, a keyword gets a `_` after it.
pub fn identifier(component: &str) -> String {
    let mut out: String = component
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    if out == "_" {
        out.push('_');
    }
    if KEYWORDS.contains(&out.as_str()) {
        out.push('_');
    }
    out
}

/// The identifiers of a fixture's path relative to its suite (`/`-separated), without the
/// `.json` extension: `"sub/raise-amount.json"` gives `["sub", "raise_amount"]`.
pub fn case_segments(relative: &str) -> Vec<String> {
    let trimmed = relative.strip_suffix(".json").unwrap_or(relative);
    trimmed.split('/').map(identifier).collect()
}

/// The full test name of a case in a suite: `suite::sub::case`.
pub fn test_name(suite: &str, relative: &str) -> String {
    let mut name = identifier(suite);
    for segment in case_segments(relative) {
        name.push_str("::");
        name.push_str(&segment);
    }
    name
}

/// Every key a fixture may hold (with the seeds' camelCase aliases). The macro reads it to tell a
/// well-formed non-active fixture (an ignored test) from a malformed one (a failing test, as in
/// the harness); `fixture.rs` checks it against the parser.
pub const FIXTURE_KEYS: &[&str] = &[
    "description",
    "input",
    "expected",
    "expectedDataProposal",
    "ignore_paths",
    "ignorePaths",
    "sources",
    "status",
    "draft",
];
