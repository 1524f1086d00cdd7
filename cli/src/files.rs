//! File helpers shared by the subcommands: pretty JSON with sorted keys, atomic writes, and
//! finding the fixture files of a suite.

use proposal_eval::draft::sorted;
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A JSON document as the product writes it: pretty, keys sorted, final newline.
pub fn pretty_json(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(&sorted(value)).expect("a Value always serializes");
    text.push('\n');
    text
}

/// Writes a file by writing a temporary file in the same folder and renaming it over the
/// target, so a reader (or an interrupt) never sees a half-written file. Creates the folder.
pub fn write_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // The leading dot and the suffix keep the temporary file out of fixture discovery.
    let tmp = dir.join(format!(
        ".{name}.{}-{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(contents)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

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
