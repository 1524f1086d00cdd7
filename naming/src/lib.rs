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
    let mut out = String::with_capacity(component.len() + 1);
    push_identifier(&mut out, component);
    out
}

/// Appends [`identifier`]`(component)` to `out`.
fn push_identifier(out: &mut String, component: &str) {
    let start = out.len();
    for c in component.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            out.push(c);
        } else if c.is_ascii() {
            out.push('_');
        } else {
            use std::fmt::Write as _;
            let _ = write!(out, "u{:04x}_", u32::from(c));
        }
    }
    if out.len() == start || out[start..].starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(start, '_');
    }
    if &out[start..] == "_" {
        out.push('_');
    }
    if KEYWORDS.contains(&&out[start..]) {
        out.push('_');
    }
}

/// The identifiers of a fixture's path relative to its suite (`/`-separated), without the
/// `.json` extension: `"sub/raise-amount.json"` gives `["sub", "raise_amount"]`.
pub fn case_segments(relative: &str) -> Vec<String> {
    let trimmed = relative.strip_suffix(".json").unwrap_or(relative);
    trimmed.split('/').map(identifier).collect()
}

/// The full test name of a case in a suite: `suite::sub::case`.
pub fn test_name(suite: &str, relative: &str) -> String {
    let trimmed = relative.strip_suffix(".json").unwrap_or(relative);
    let mut name = String::with_capacity(suite.len() + trimmed.len() + 8);
    push_identifier(&mut name, suite);
    for segment in trimmed.split('/') {
        name.push_str("::");
        push_identifier(&mut name, segment);
    }
    name
}

/// The name of a suite's config file, in the suite folder.
pub const CONFIG_FILE: &str = "proposal-eval.toml";

/// The fixture files of the suite folder `suite`: every `*.json` file below it, recursively,
/// as `/`-separated paths relative to `suite`, sorted. Skipped: entries whose name starts with
/// `.` (`.proposal-eval/`, editors' files, temp files of atomic writes) and the recordings folder
/// `recordings`. A subfolder holding its own [`CONFIG_FILE`] is walked like any other: that file
/// is a nested config, which applies to the cases below it, and its cases
/// stay in the suite. Links are followed; a link that leads back to a folder being walked is not
/// walked twice.
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
/// assert_eq!(found, ["a.json", "nested/d.json", "sub/b.json"]);
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
    walking: &mut Vec<FolderId>,
    out: &mut Vec<String>,
) -> std::io::Result<()> {
    // Links are followed, so a link to an ancestor would loop: remember the real folders on the
    // way down.
    let id = folder_id(dir)?;
    if walking.contains(&id) {
        return Ok(());
    }
    walking.push(id);
    // The recordings folder can only be met in its parent.
    let recordings_name = recordings
        .file_name()
        .filter(|_| recordings.parent() == Some(dir));
    // A folder's entries in name order, so that `out` comes out nearly sorted (its final sort
    // then only mends the places where a separator sorts after a name's other characters).
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        if name.as_encoded_bytes().starts_with(b".") || Some(name.as_os_str()) == recordings_name {
            continue;
        }
        entries.push((name, entry));
    }
    entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    for (name, entry) in entries {
        let name = name.to_string_lossy();
        let mut kind = entry.file_type()?;
        if kind.is_symlink() {
            kind = std::fs::metadata(entry.path())?.file_type();
        }
        let relative = || {
            if prefix.is_empty() {
                name.clone().into_owned()
            } else {
                format!("{prefix}/{name}")
            }
        };
        if kind.is_dir() {
            walk(&entry.path(), &relative(), recordings, walking, out)?;
        } else if kind.is_file() && name.ends_with(".json") {
            out.push(relative());
        }
    }
    walking.pop();
    Ok(())
}

/// What tells a folder from every other one, links followed: its device and inode (one `stat`),
/// or elsewhere its canonical path.
#[cfg(unix)]
type FolderId = (u64, u64);
#[cfg(not(unix))]
type FolderId = std::path::PathBuf;

#[cfg(unix)]
fn folder_id(dir: &std::path::Path) -> std::io::Result<FolderId> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(dir)?;
    Ok((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn folder_id(dir: &std::path::Path) -> std::io::Result<FolderId> {
    std::fs::canonicalize(dir)
}

/// Every key a fixture may hold (with the camelCase aliases of older validators). The macro reads it to tell a
/// well-formed non-active fixture (an ignored test) from a malformed one (a failing test, as in
/// the harness); `fixture.rs` checks it against the parser.
pub const FIXTURE_KEYS: &[&str] = &[
    "description",
    "input",
    "expected",
    "expectedDataProposal",
    "expected_trajectory",
    "ignore_paths",
    "ignorePaths",
    "sources",
    "status",
    "draft",
    "$schema",
    "rubric",
    "checks",
    "budget",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder of its own under the system's temp folder, removed when dropped.
    struct Scratch(std::path::PathBuf);

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let dir = std::env::temp_dir().join(format!("naming-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Scratch(dir)
        }

        fn write(&self, relative: &str) {
            let path = self.0.join(relative);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "{}").unwrap();
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn a_test_name_is_its_suites_and_segments_identifiers() {
        let suites = ["payments", "2024", "match", "_", "", "ünï", "a-b"];
        let paths = [
            "a.json",
            "sub/raise-amount.json",
            "1/fn.json",
            "日本/x y.json",
            "_.json",
            "x",
            "a//b.json",
        ];
        for suite in suites {
            for path in paths {
                let mut want = identifier(suite);
                for segment in case_segments(path) {
                    want.push_str("::");
                    want.push_str(&segment);
                }
                assert_eq!(test_name(suite, path), want, "{suite:?} {path:?}");
            }
        }
    }

    #[test]
    fn files_come_out_sorted_as_strings_whatever_the_folders_order() {
        let scratch = Scratch::new("sorted");
        // `a.json` sorts before `a/…` ('.' before '/'), `a-b` before both.
        for f in [
            "a/z.json",
            "a.json",
            "a-b.json",
            "b/c/d.json",
            "b.json",
            "A.json",
            "a/b.json",
        ] {
            scratch.write(f);
        }
        let found = fixture_files(&scratch.0, &scratch.0.join("recordings")).unwrap();
        let mut sorted = found.clone();
        sorted.sort();
        assert_eq!(found, sorted);
        assert_eq!(found.len(), 7);
    }

    #[cfg(unix)]
    #[test]
    fn links_are_followed_once_and_a_link_to_an_ancestor_ends_the_walk_there() {
        let scratch = Scratch::new("links");
        scratch.write("cases/a.json");
        scratch.write("shared/b.json");
        let cases = scratch.0.join("cases");
        std::os::unix::fs::symlink(&scratch.0, cases.join("up")).unwrap();
        std::os::unix::fs::symlink(scratch.0.join("shared"), cases.join("shared")).unwrap();
        std::os::unix::fs::symlink(scratch.0.join("shared/b.json"), cases.join("c.json")).unwrap();
        let found = fixture_files(&scratch.0, &scratch.0.join("recordings")).unwrap();
        assert_eq!(
            found,
            [
                "cases/a.json",
                "cases/c.json",
                "cases/shared/b.json",
                "shared/b.json"
            ]
        );
    }
}
