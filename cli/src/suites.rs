//! Which folders `status` and `prune` treat as suites, when not named one by one.
//!
//! A suite needs no config file: the test front ends are told where it is by the test code
//! (`#[proposal_eval(fixtures = "...")]`, `Harness::new("...")`). So below a searched folder a
//! suite is a folder that
//!
//! 1. holds a `proposal-eval.toml`, unless it lies inside another suite: then that file is a
//!    nested config, which applies to the cases below it, and they belong to the suite around it
//!    (named on the command line, such a folder stands for that suite); or
//! 2. holds a `recordings/` folder with at least one recording in it (a suite that has been
//!    recorded, even if its test code or all its fixtures are gone, so its orphans are seen); or
//! 3. is named by a string literal in `#[proposal_eval(fixtures = "...")]` or `Harness::new("...")`
//!    in a `.rs` file under a crate's `tests/` folder, taken relative to that crate's root, as the
//!    macro and the harness take it (a path built at run time is not seen).
//!
//! `target/`, `recordings/` and hidden folders are not searched. The crate root of a suite is
//! the crate whose tests name it; otherwise the nearest folder at or above it with a
//! `Cargo.toml`.

use crate::files::display;
use proposal_eval::__internal::recording::Recording;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A suite folder and its crate root, both absolute.
#[derive(Debug)]
pub struct Found {
    /// The suite folder.
    pub dir: PathBuf,
    /// The crate its sources and recordings are relative to.
    pub crate_root: PathBuf,
}

/// What the error for a folder without suites says a suite is.
const WHAT_A_SUITE_IS: &str = "a suite is a folder with a proposal-eval.toml, a folder with \
     recordings in its recordings/ folder, or a folder named by `#[proposal_eval(fixtures = \
     \"...\")]` or `Harness::new(\"...\")` in a crate's tests/";

/// The suites in or below `paths` (default: the current folder). A folder named on the command
/// line that holds no suite is a suite itself.
pub fn find(paths: &[PathBuf]) -> Result<Vec<Found>, String> {
    let given = !paths.is_empty();
    let paths = if given {
        paths.to_vec()
    } else {
        vec![PathBuf::from(".")]
    };
    // Suite folder -> the crate whose tests name it, if one does.
    let mut suites: BTreeMap<PathBuf, Option<PathBuf>> = BTreeMap::new();
    for path in &paths {
        let root = path
            .canonicalize()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let mut below = search(&root);
        if below.is_empty() && given {
            below.insert(root.clone(), None);
        }
        if below.is_empty() {
            return Err(format!(
                "no suite found below {} ({WHAT_A_SUITE_IS}; or name suite folders: `cargo proposal-eval status fixtures/payments`)",
                shown(&root)
            ));
        }
        for (dir, named_by) in below {
            let entry = suites.entry(dir).or_default();
            if entry.is_none() {
                *entry = named_by;
            }
        }
    }
    suites
        .into_iter()
        .map(|(dir, named_by)| {
            let crate_root = match named_by {
                Some(crate_root) => crate_root,
                None => dir
                    .ancestors()
                    .find(|a| a.join("Cargo.toml").is_file())
                    .ok_or_else(|| {
                        format!(
                            "{}: no Cargo.toml in it or above it; sources and recordings are relative to the crate root",
                            shown(&dir)
                        )
                    })?
                    .to_path_buf(),
            };
            Ok(Found { dir, crate_root })
        })
        .collect()
}

/// `.` for the current folder itself.
fn shown(path: &Path) -> String {
    match display(path) {
        shown if shown.is_empty() => ".".into(),
        shown => shown,
    }
}

/// The suites at or below `root` (absolute, canonical), each with the crate whose tests name it.
fn search(root: &Path) -> BTreeMap<PathBuf, Option<PathBuf>> {
    let mut found: BTreeMap<PathBuf, Option<PathBuf>> = BTreeMap::new();
    // The crate around `root` may name folders below it.
    let mut crates: Vec<PathBuf> = root
        .ancestors()
        .skip(1)
        .find(|a| a.join("Cargo.toml").is_file())
        .map(Path::to_path_buf)
        .into_iter()
        .collect();
    let walk = walkdir::WalkDir::new(root).into_iter().filter_entry(|e| {
        let name = e.file_name().to_string_lossy();
        e.depth() == 0
            || !(name.starts_with('.')
                || (e.file_type().is_dir() && (name == "target" || name == "recordings")))
    });
    // Folders found only for their config file: perhaps nested configs of a suite around them.
    let mut config_only = Vec::new();
    for entry in walk.filter_map(Result::ok) {
        if !entry.file_type().is_dir() {
            continue;
        }
        let dir = entry.path();
        if dir.join("Cargo.toml").is_file() {
            crates.push(dir.to_path_buf());
        }
        if has_recordings(dir) {
            found.insert(dir.to_path_buf(), None);
        } else if dir.join(proposal_eval_naming::CONFIG_FILE).is_file() {
            found.insert(dir.to_path_buf(), None);
            config_only.push(dir.to_path_buf());
        }
    }
    for crate_root in crates {
        for named in named_by_tests(&crate_root) {
            if let Ok(dir) = crate_root.join(&named).canonicalize() {
                if dir.is_dir() && dir.starts_with(root) {
                    // The crate naming it wins over the nearest Cargo.toml above it.
                    config_only.retain(|d| *d != dir);
                    found.insert(dir, Some(crate_root.clone()));
                }
            }
        }
    }
    for dir in config_only {
        let around = dir
            .ancestors()
            .skip(1)
            .find(|a| found.contains_key(*a))
            .or_else(|| enclosing_suite(&dir))
            .map(Path::to_path_buf);
        if let Some(around) = around {
            found.remove(&dir);
            found.entry(around).or_default();
        }
    }
    found
}

/// The suite a folder lies in, when one of its ancestors below its crate root (the nearest
/// `Cargo.toml`) holds a config file or recordings: its config is then a nested one.
fn enclosing_suite(dir: &Path) -> Option<&Path> {
    dir.ancestors()
        .skip(1)
        .take_while(|a| !a.join("Cargo.toml").is_file())
        .filter(|a| a.join(proposal_eval_naming::CONFIG_FILE).is_file() || has_recordings(a))
        .last()
}

/// Whether `dir/recordings/` holds a file that parses as a recording.
fn has_recordings(dir: &Path) -> bool {
    let recordings = dir.join("recordings");
    recordings.is_dir()
        && walkdir::WalkDir::new(recordings)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file() && e.path().extension() == Some("json".as_ref()))
            .any(|e| matches!(Recording::read_head(e.path()), Ok(Some(_))))
}

/// The suite folders that the `.rs` files under `crate_root/tests/` name, as written.
fn named_by_tests(crate_root: &Path) -> Vec<String> {
    let tests = crate_root.join("tests");
    if !tests.is_dir() {
        return Vec::new();
    }
    walkdir::WalkDir::new(tests)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && e.path().extension() == Some("rs".as_ref()))
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .flat_map(|source| named_in(&source))
        .collect()
}

/// The test targets of the crate at `crate_root` whose code names the suite `suite_dir`
/// (absolute, canonical): what `cargo test --test NAME` takes to run its cases, sorted. A target
/// is cargo's: `tests/NAME.rs`, `tests/NAME/main.rs`, or a `[[test]]` of the manifest; its code
/// is that file and the modules it declares (`mod NAME;` as `tests/NAME.rs` or
/// `tests/NAME/mod.rs` next to it, or every file of its own folder). Empty when no target names
/// the suite by a string literal (a suite found by its config file alone).
pub fn test_targets(crate_root: &Path, suite_dir: &Path) -> Vec<String> {
    let names_suite = |file: &Path| {
        std::fs::read_to_string(file).is_ok_and(|source| {
            named_in(&source).iter().any(|named| {
                crate_root
                    .join(named)
                    .canonicalize()
                    .is_ok_and(|dir| dir == suite_dir)
            })
        })
    };
    let mut found: Vec<String> = targets(crate_root)
        .into_iter()
        .filter(|(_, root)| target_files(root).iter().any(|f| names_suite(f)))
        .map(|(name, _)| name)
        .collect();
    found.sort();
    found.dedup();
    found
}

/// Every test target of a crate: its name and root file.
fn targets(crate_root: &Path) -> Vec<(String, PathBuf)> {
    let tests = crate_root.join("tests");
    let manifest = std::fs::read_to_string(crate_root.join("Cargo.toml"))
        .ok()
        .and_then(|text| text.parse::<toml::Table>().ok())
        .unwrap_or_default();
    let mut found: Vec<(String, PathBuf)> = Vec::new();
    for declared in manifest
        .get("test")
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(name) = declared.get("name").and_then(toml::Value::as_str) else {
            continue;
        };
        let root = match declared.get("path").and_then(toml::Value::as_str) {
            Some(path) => crate_root.join(path),
            None if tests.join(format!("{name}.rs")).is_file() => tests.join(format!("{name}.rs")),
            None => tests.join(name).join("main.rs"),
        };
        found.push((name.to_string(), root));
    }
    let autotests = manifest
        .get("package")
        .and_then(|p| p.get("autotests"))
        .and_then(toml::Value::as_bool)
        .unwrap_or(true);
    if autotests {
        for entry in std::fs::read_dir(&tests).into_iter().flatten().flatten() {
            let path = entry.path();
            let root = if path.is_dir() {
                path.join("main.rs")
            } else {
                path.clone()
            };
            let name = match path.file_stem().and_then(|s| s.to_str()) {
                Some(stem) if path.is_dir() || path.extension() == Some("rs".as_ref()) => stem,
                _ => continue,
            };
            if root.is_file() && !found.iter().any(|(n, r)| n == name || *r == root) {
                found.push((name.to_string(), root));
            }
        }
    }
    found
}

/// The files of a test target: its root file, and the modules it declares next to it (for a
/// `main.rs`, every `.rs` file of its folder).
fn target_files(root: &Path) -> Vec<PathBuf> {
    let Some(dir) = root.parent() else {
        return vec![root.to_path_buf()];
    };
    if root.file_name() == Some("main.rs".as_ref()) {
        return walkdir::WalkDir::new(dir)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file() && e.path().extension() == Some("rs".as_ref()))
            .map(walkdir::DirEntry::into_path)
            .collect();
    }
    let mut files = vec![root.to_path_buf()];
    let source = std::fs::read_to_string(root).unwrap_or_default();
    for line in source.lines() {
        let line = line.trim_start().trim_start_matches("pub ");
        let Some(module) = line
            .strip_prefix("mod ")
            .and_then(|rest| rest.trim_end().strip_suffix(';'))
        else {
            continue;
        };
        let module = module.trim();
        files.push(dir.join(format!("{module}.rs")));
        let folder = dir.join(module);
        files.extend(
            walkdir::WalkDir::new(folder)
                .into_iter()
                .filter_map(Result::ok)
                .filter(|e| e.file_type().is_file() && e.path().extension() == Some("rs".as_ref()))
                .map(walkdir::DirEntry::into_path),
        );
    }
    files
}

/// The string literals of `Harness::new("...")` and of `fixtures = "..."` inside
/// `proposal_eval(...)` in Rust source text.
fn named_in(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, marker) in source.match_indices("Harness::new(") {
        out.extend(literal(&source[at + marker.len()..]));
    }
    for (at, marker) in source.match_indices("proposal_eval(") {
        let args = &source[at + marker.len()..];
        let args = &args[..args.find(')').unwrap_or(args.len())];
        for (key, word) in args.match_indices("fixtures") {
            let before = args[..key].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            if let Some(value) = args[key + word.len()..].trim_start().strip_prefix('=') {
                out.extend(literal(value));
            }
        }
    }
    out
}

/// The string literal at the start of `text` (after white space), when it is a plain one
/// (`"..."` without escapes, or `r"..."`).
fn literal(text: &str) -> Option<String> {
    let text = text.trim_start();
    let (body, raw) = match text.strip_prefix("r\"") {
        Some(body) => (body, true),
        None => (text.strip_prefix('"')?, false),
    };
    let value = &body[..body.find('"')?];
    (raw || !value.contains('\\')).then(|| value.to_string())
}

/// Cargo's target folder, as `report --help` describes it: `--target-dir`, then
/// `CARGO_TARGET_DIR`, then `target/` of the workspace (or crate) around the current folder.
pub fn target_dir(given: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(dir) = given {
        return Ok(dir.to_path_buf());
    }
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR").filter(|d| !d.is_empty()) {
        return Ok(dir.into());
    }
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot read the current folder: {e}"))?;
    let manifests: Vec<&Path> = cwd
        .ancestors()
        .filter(|a| a.join("Cargo.toml").is_file())
        .collect();
    let workspace = manifests.iter().rev().find(|dir| {
        std::fs::read_to_string(dir.join("Cargo.toml"))
            .map(|text| text.lines().any(|l| l.trim() == "[workspace]"))
            .unwrap_or(false)
    });
    match workspace.or(manifests.first()) {
        Some(root) => Ok(root.join("target")),
        None => Err(
            "no Cargo.toml in the current folder or above it; run this in your crate, or pass --target-dir"
                .into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_named_by_the_macro_and_the_harness() {
        let source = r#"
            #[proposal_eval(fixtures = "fixtures/payments", model = crate::live_model)]
            fn payments() {}
            #[proposal_eval::proposal_eval(model = m, fixtures="fixtures/other")]
            fn other() {}
            fn main() {
                proposal_eval::Harness::new("fixtures/invoices").run(f);
                Harness::new(
                    r"fixtures/raw",
                )
                .run(f);
                Harness::new(suite).run(f);
                Harness::new("esc\"aped");
            }
            #[proposal_eval(my_fixtures = "no")]
            fn not_this() {}
        "#;
        assert_eq!(
            named_in(source),
            [
                "fixtures/invoices",
                "fixtures/raw",
                "fixtures/payments",
                "fixtures/other"
            ]
        );
    }
}
