//! Which files of a suite are cases, and what their tests are called, for
//! [proposal-eval](https://docs.rs/proposal-eval): a crate of its own because the runtime (the
//! harness, at run time), the `#[proposal_eval]` macro (at compile time) and `cargo
//! proposal-eval` all need them, and they must find and name every fixture alike.
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

/// One path component made into a valid Rust identifier: ASCII punctuation and spaces become
/// `_`; a non-ASCII character becomes `u` and its code point in hex, then `_` (`ü` is
/// `u00fc_`), so two names that differ in a non-ASCII character never make one test name; a
/// leading digit gets a `_` before it, a keyword gets a `_` after it.
///
/// ```
/// use proposal_eval_naming::identifier;
/// assert_eq!(identifier("raise-amount"), "raise_amount");
/// assert_eq!(identifier("ünïcode_日本"), "u00fc_nu00ef_code_u65e5_u672c_");
/// assert_ne!(identifier("日本"), identifier("中国"));
/// assert_eq!(identifier("2024"), "_2024");
/// assert_eq!(identifier("match"), "match_");
/// ```
pub fn identifier(component: &str) -> String {
    let mut out = String::with_capacity(component.len());
    for c in component.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            out.push(c);
        } else if c.is_ascii() {
            out.push('_');
        } else {
            out.push_str(&format!("u{:04x}_", u32::from(c)));
        }
    }
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

/// The name of a suite's config file, in the suite folder.
pub const CONFIG_FILE: &str = "proposal-eval.toml";

/// The fixture files of the suite folder `suite`: every `*.json` file below it, recursively,
/// as `/`-separated paths relative to `suite`, sorted. Skipped: entries whose name starts with
/// `.` (`.proposal-eval/`, editors' files, temp files of atomic writes), the recordings folder
/// `recordings`, and any folder holding its own [`CONFIG_FILE`] (a suite of its own). Links are
/// followed; a link that leads back to a folder being walked is not walked twice.
///
/// ```
/// # let root = std::env::temp_dir().join(format!("naming-doc-{}", std::process::id()));
/// # for f in ["a.json", "sub/b.json", "recordings/a.json", ".hidden/c.json", "nested/proposal-eval.toml", "nested/d.json", "notes.md"] {
/// #     let p = root.join(f);
/// #     std::fs::create_dir_all(p.parent().unwrap()).unwrap();
/// #     std::fs::write(p, "{}").unwrap();
/// # }
/// use proposal_eval_naming::fixture_files;
/// let found = fixture_files(&root, &root.join("recordings")).unwrap();
/// assert_eq!(found, ["a.json", "sub/b.json"]);
/// # std::fs::remove_dir_all(&root).unwrap();
/// ```
pub fn fixture_files(
    suite: &std::path::Path,
    recordings: &std::path::Path,
) -> std::io::Result<Vec<String>> {
    let mut out = Vec::new();
    let mut walking = Vec::new();
    walk(suite, "", recordings, &mut walking, &mut out)?;
    out.sort();
    Ok(out)
}

fn walk(
    dir: &std::path::Path,
    prefix: &str,
    recordings: &std::path::Path,
    walking: &mut Vec<std::path::PathBuf>,
    out: &mut Vec<String>,
) -> std::io::Result<()> {
    // Links are followed, so a link to an ancestor would loop: remember the real folders on the
    // way down.
    let real = std::fs::canonicalize(dir)?;
    if walking.contains(&real) {
        return Ok(());
    }
    walking.push(real);
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let path = entry.path();
        if name.starts_with('.') || path == recordings {
            continue;
        }
        let relative = if prefix.is_empty() {
            name.clone().into_owned()
        } else {
            format!("{prefix}/{name}")
        };
        let mut kind = entry.file_type()?;
        if kind.is_symlink() {
            kind = std::fs::metadata(&path)?.file_type();
        }
        if kind.is_dir() {
            if !path.join(CONFIG_FILE).is_file() {
                walk(&path, &relative, recordings, walking, out)?;
            }
        } else if kind.is_file() && name.ends_with(".json") {
            out.push(relative);
        }
    }
    walking.pop();
    Ok(())
}

/// Every key a fixture may hold (with the camelCase aliases of older validators). The macro reads it to tell a
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
