//! Run reports: every case leaves its result under `target/proposal-eval/cases/`, one file per
//! case written atomically, so parallel test threads and nextest's one process per test never
//! lose or corrupt an entry.

use crate::run::CaseResult;
use std::path::PathBuf;

/// `target/proposal-eval`, found from the running test binary (`target/<profile>/deps/…`).
pub fn report_dir() -> PathBuf {
    let from_exe = std::env::current_exe().ok().and_then(|exe| {
        let deps = exe.parent()?;
        if deps.file_name()? != "deps" {
            return None;
        }
        Some(deps.parent()?.parent()?.join("proposal-eval"))
    });
    from_exe.unwrap_or_else(|| {
        crate::env::crate_root()
            .join("target")
            .join("proposal-eval")
    })
}

/// Writes one case's result. Failing to write a report never fails a test.
pub(crate) fn record(result: &CaseResult) {
    let file = report_dir()
        .join("cases")
        .join(format!("{}.json", result.name.replace("::", "__")));
    if let Ok(value) = serde_json::to_value(result) {
        let _ = crate::recording::write_atomic(
            &file,
            crate::recording::canonical_pretty(&value).as_bytes(),
        );
    }
}
