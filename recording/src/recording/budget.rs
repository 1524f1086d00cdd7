//! What `PROPOSAL_EVAL_BUDGET_USD` weighs: the estimated cost of the live calls of this run.
//!
//! nextest runs each test in a process of its own, and `cargo test` each test binary in one, so
//! a count kept by each process would bound a case, or a binary, and not the run. The test
//! processes of one run ([`crate::env::run_id`]: one `cargo nextest run`, one `cargo test`)
//! share a ledger in the run's folder, `target/proposal-eval/runs/<run>/budget.usd` (removed
//! with the run by the report's retention): a file holding the dollars spent,
//! replaced whole (temp file and rename) while an OS file lock is held on a lock file beside
//! it, so additions from several processes at once all count and a reader never sees half a
//! number. Outside a test binary, in one started by hand, or where the ledger cannot be written,
//! the count of this process stands alone.

use std::path::Path;
use std::sync::{Mutex, OnceLock};

/// This process's live calls, in dollars.
static PROCESS: Mutex<f64> = Mutex::new(0.0);

/// The estimated cost of this run's live calls so far (of this process's, when that is more:
/// a ledger that could not be written).
pub fn spent() -> f64 {
    let mine = *PROCESS.lock().unwrap_or_else(|p| p.into_inner());
    match ledger().and_then(Ledger::read) {
        Some(shared) => shared.max(mine),
        None => mine,
    }
}

/// Counts a live call's cost; in the run's ledger too when `shared` (a budget is set: without
/// one nothing reads it, and no file is written).
pub fn add(cost: f64, shared: bool) {
    *PROCESS.lock().unwrap_or_else(|p| p.into_inner()) += cost;
    if shared {
        if let Some(ledger) = ledger() {
            let _ = ledger.add(cost);
        }
    }
}

fn ledger() -> Option<&'static Ledger> {
    static LEDGER: OnceLock<Option<Ledger>> = OnceLock::new();
    LEDGER
        .get_or_init(|| {
            let dir = crate::layout::run_state_dir()?;
            let run = crate::env::run_id()?;
            // A binary started by hand is a run of its own, not one with every binary its shell
            // starts (the shell is then the parent that names the run).
            if !run.starts_with("nextest-") && !started_by_cargo() {
                return None;
            }
            Some(Ledger::new(&dir, "budget"))
        })
        .as_ref()
}

/// Whether the parent process is cargo (`cargo test`, and the cargo that tools such as
/// cargo-mutants start); `false` where the system does not say (no `/proc`).
fn started_by_cargo() -> bool {
    #[cfg(unix)]
    {
        let parent = std::os::unix::process::parent_id();
        std::fs::read_to_string(format!("/proc/{parent}/comm"))
            .is_ok_and(|name| name.trim_end() == "cargo")
    }
    #[cfg(not(unix))]
    false
}

/// One run's ledger: `<name>.usd`, the dollars spent as a decimal number, and `<name>.lock`.
pub struct Ledger(crate::files::RunFile);

impl Ledger {
    pub fn new(dir: &Path, name: &str) -> Ledger {
        Ledger(crate::files::RunFile::new(dir, name, "usd"))
    }

    /// The dollars spent; `None` before the first addition.
    pub fn read(&self) -> Option<f64> {
        parse(&self.0.read()?)
    }

    /// Adds `cost` under the lock; the new total.
    pub fn add(&self, cost: f64) -> std::io::Result<f64> {
        self.0.update(|text| {
            let total = text.as_deref().and_then(parse).unwrap_or(0.0) + cost;
            // `{}` of an f64 reads back as the same f64.
            (format!("{total}\n"), total)
        })
    }
}

/// A ledger's text as dollars.
fn parse(text: &str) -> Option<f64> {
    text.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn additions_from_many_writers_at_once_all_count() {
        let dir = tempfile::tempdir().unwrap();
        let run = "budget";
        assert_eq!(Ledger::new(dir.path(), run).read(), None);
        // Each writer opens the lock file anew, as another process would: OS file locks are
        // held per open file, so the threads exclude each other as processes do.
        std::thread::scope(|scope| {
            for _ in 0..8 {
                scope.spawn(|| {
                    for _ in 0..25 {
                        Ledger::new(dir.path(), run).add(0.25).unwrap();
                    }
                });
            }
        });
        assert_eq!(Ledger::new(dir.path(), run).read(), Some(50.0));
        // The run's name stays inside the folder.
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        // Another run has its own ledger.
        assert_eq!(Ledger::new(dir.path(), "nextest-other").read(), None);
    }

    #[test]
    fn the_total_reads_back_to_the_last_bit() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::new(dir.path(), "run");
        assert_eq!(ledger.add(0.1).unwrap(), 0.1);
        assert_eq!(ledger.add(0.2).unwrap(), 0.1 + 0.2);
        assert_eq!(ledger.read(), Some(0.1 + 0.2));
    }
}
