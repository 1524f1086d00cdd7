//! Where the product keeps its derived files: `target/proposal-eval/` beside the test binaries
//! (reports and the runs' journals, the discovery cache, the live-call places).

use std::path::PathBuf;

/// `target/proposal-eval`, found from the running test binary (`target/<profile>/deps/…`).
pub(crate) fn report_dir() -> PathBuf {
    report_dir_of_test_binary().unwrap_or_else(|| {
        crate::env::crate_root()
            .join("target")
            .join("proposal-eval")
    })
}

/// `target/proposal-eval` when the running program is a test binary that cargo built
/// (`target/<profile>/deps/…`); `None` for any other program.
/// Found once (a test process asks several times: its entries, its report, its discovery cache).
pub(crate) fn report_dir_of_test_binary() -> Option<PathBuf> {
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
pub(crate) fn live_calls_dir() -> Option<PathBuf> {
    report_dir_of_test_binary().map(|d| d.join("live-calls"))
}

/// `target/proposal-eval/rate-limit/<run>.state` (and its lock, `<run>.lock`): the shared rate
/// limit of the running test binary's run ([`crate::env::run_id`]); `None` outside a test binary
/// or a known run. One file per run, useful only while the run lasts: whatever keeps
/// `target/proposal-eval/` bounded may remove it with the run.
pub(crate) fn rate_limit_file() -> Option<crate::files::RunFile> {
    let dir = report_dir_of_test_binary()?.join("rate-limit");
    Some(crate::files::RunFile::new(
        &dir,
        crate::env::run_id()?,
        "state",
    ))
}

/// `target/proposal-eval/discovery/<package>/<binary>/`: one discovery cache folder per test
/// binary, so binaries never share (or fight over) one.
pub(crate) fn discovery_dir() -> PathBuf {
    report_dir()
        .join("discovery")
        .join(safe(crate::env::package_name().unwrap_or("unknown")))
        .join(safe(crate::env::test_binary().unwrap_or("unknown")))
}

/// A path component that stays inside its folder.
pub(crate) fn safe(part: &str) -> String {
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
