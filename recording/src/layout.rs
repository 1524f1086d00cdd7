//! Where the product keeps its derived files: `target/proposal-eval/` beside the test binaries
//! (reports and the runs' files, the discovery cache, the live-call places).
//!
//! Each run's files are in one folder, `runs/<run>/`: its journal ([`JOURNAL`]) and its per-run
//! state (the budget ledger, rate-limit state: [`run_state_dir`]). The report's retention keeps
//! or removes a run's folder whole (`report/runs.rs`).

use std::path::{Path, PathBuf};

/// The folder of the runs' folders, below the report folder.
pub const RUNS: &str = "runs";

/// A run's journal in its folder: one report entry per line.
pub const JOURNAL: &str = "journal.jsonl";

/// `runs/<run>/` in the report folder `dir`: the folder of run `run`'s files.
pub fn run_dir(dir: &Path, run: &str) -> PathBuf {
    dir.join(RUNS).join(safe(run))
}

/// The run this process belongs to ([`crate::env::run_id`]), or the process itself where no
/// run is known.
pub fn this_run() -> String {
    match crate::env::run_id() {
        Some(run) => run.to_string(),
        None => format!("process-{}", std::process::id()),
    }
}

/// This run's folder for per-run state (a file per concern, named by its module), removed with
/// the run's journal by the report's retention; `None` outside a test binary, so a user's own
/// program leaves no run folder behind.
pub fn run_state_dir() -> Option<PathBuf> {
    Some(run_dir(
        &report_dir_of_test_binary()?,
        crate::env::run_id()?,
    ))
}

/// `target/proposal-eval`, found from the running test binary (`target/<profile>/deps/…`).
pub fn report_dir() -> PathBuf {
    report_dir_of_test_binary().unwrap_or_else(|| {
        crate::env::crate_root()
            .join("target")
            .join("proposal-eval")
    })
}

/// `target/proposal-eval` when the running program is a test binary that cargo built
/// (`target/<profile>/deps/…`); `None` for any other program.
/// Found once (a test process asks several times: its entries, its report, its discovery cache).
pub fn report_dir_of_test_binary() -> Option<PathBuf> {
    static DIR: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let exe = std::env::current_exe().ok()?;
        let deps = exe.parent()?;
        if deps.file_name()? != "deps" {
            return None;
        }
        Some(deps.parent()?.parent()?.join("proposal-eval"))
    })
    .clone()
}

/// `target/proposal-eval/live-calls`, the lock files that bound live model calls across test
/// processes; `None` outside a test binary, so a user's own program leaves no lock files behind.
pub fn live_calls_dir() -> Option<PathBuf> {
    report_dir_of_test_binary().map(|d| d.join("live-calls"))
}

/// `target/proposal-eval/runs/<run>/rate-limit.state` (and its lock, `rate-limit.lock`): the
/// shared rate limit of the running test binary's run ([`crate::env::run_id`]), in the run's
/// folder so the report's retention removes it with the run; `None` outside a test binary or a
/// known run.
pub fn rate_limit_file() -> Option<crate::files::RunFile> {
    Some(crate::files::RunFile::new(
        &run_state_dir()?,
        "rate-limit",
        "state",
    ))
}

/// `target/proposal-eval/discovery/<package>/<binary>/`: one discovery cache folder per test
/// binary, so binaries never share (or fight over) one.
pub fn discovery_dir() -> PathBuf {
    report_dir()
        .join("discovery")
        .join(safe(crate::env::package_name().unwrap_or("unknown")))
        .join(safe(crate::env::test_binary().unwrap_or("unknown")))
}

/// A path component that stays inside its folder.
pub fn safe(part: &str) -> String {
    let cleaned: String = part
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    match cleaned.as_str() {
        "" | "." | ".." => "_".into(),
        _ if cleaned.starts_with('.') => format!("_{cleaned}"),
        _ => cleaned,
    }
}
