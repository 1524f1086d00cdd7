//! File helpers shared by the subcommands: pretty JSON with sorted keys, atomic writes, and
//! finding the fixture files of a suite (the runtime's and the naming crate's, re-exported).

use std::path::{Path, PathBuf};

pub use proposal_eval::__internal::json::canonical_pretty as pretty_json;
pub use proposal_eval::__internal::write_atomic;

/// Every fixture file of a suite folder, sorted, by the rule that the test front ends use
/// (`proposal_eval_naming::fixture_files`): hidden entries, the suite's `recordings/` folder and
/// nested suites are skipped. A folder that cannot be read gives no files.
pub fn fixture_files(root: &Path) -> Vec<PathBuf> {
    proposal_eval_naming::fixture_files(root, &root.join("recordings"))
        .unwrap_or_default()
        .into_iter()
        .map(|relative| root.join(relative))
        .collect()
}

/// A path for messages: relative to the current folder when it is below it.
pub fn display(path: &Path) -> String {
    let shown = std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| path.to_path_buf());
    shown.display().to_string()
}
