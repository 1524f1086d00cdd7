//! File helpers shared by the subcommands: pretty JSON with sorted keys, atomic writes, and
//! finding the fixture files of a suite.

use std::path::{Path, PathBuf};

pub use proposal_eval::__internal::json::canonical_pretty as pretty_json;
pub use proposal_eval::__internal::write_atomic;

/// Every `*.json` file under a suite folder that can be a fixture, sorted: skips hidden
/// folders (`.proposal-eval/`), `recordings/` and `target/`.
pub fn fixture_files(root: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(root)
        .into_iter()
        .filter_entry(|entry| {
            if entry.depth() == 0 {
                return true;
            }
            let name = entry.file_name().to_string_lossy();
            !(name.starts_with('.')
                || (entry.file_type().is_dir() && (name == "recordings" || name == "target")))
        })
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "json"))
        .map(|e| e.into_path())
        .collect();
    files.sort();
    files
}

/// A path for messages: relative to the current folder when it is below it.
pub fn display(path: &Path) -> String {
    let shown = std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| path.to_path_buf());
    shown.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pretty_json_sorts_keys_and_ends_with_newline() {
        let text = pretty_json(&serde_json::json!({ "b": 1, "a": { "d": 2, "c": 3 } }));
        assert_eq!(
            text,
            "{\n  \"a\": {\n    \"c\": 3,\n    \"d\": 2\n  },\n  \"b\": 1\n}\n"
        );
    }
}
