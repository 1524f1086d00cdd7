//! Run reports: `target/proposal-eval/report.json` and a self-contained `report.html` beside it.
//!
//! Every test process appends one JSON line per case ([`Entry`], in `entry`) to its run's
//! journal, `runs/<run-id>/journal.jsonl` (`journal`): one `write` per case under an OS lock on
//! the file, no temp files, no fsync (a report is derived data). A line cut off by a kill is
//! skipped by the reader, which names its file and line, and never glued to the next one. The
//! journal is the one place a case's story is written; the rest refer to it.
//!
//! The fold ([`fold()`], in `fold`) takes the journals up into `results.jsonl`, the standing
//! result of every case, and writes `report.json` (`schema`) and `report.html` (`page`) from it:
//!
//! - at the end of a [`Harness`](crate::Harness) run, and when a `#[proposal_eval]` test binary
//!   exits (an `atexit` hook registered by its first case), when the process ran its whole
//!   target (`run_end`); a process that ran a part (a filter, each nextest process) only
//!   appends;
//! - always by `cargo proposal-eval report`.
//!
//! Each module has one job and imports only its siblings: `entry` (a case's line and its id),
//! `journal` (a run's journal, read and written), `input` (a case's input, referred to by its
//! fixture), `runs` (the runs on disk: bookmark and
//! retention), `aggregate` (the report's numbers), `schema` (`report.json`'s types), `fold`,
//! `merge`, `page`, `run_end` (the end of a case and of a process) and `error`. Comparing two
//! reports and writing JUnit XML are `cargo proposal-eval`'s (`cli/src/comparison/`,
//! `cli/src/junit.rs`): a test binary never runs them.

mod aggregate;
mod entry;
mod error;
mod fold;
mod input;
mod journal;
// `cargo proposal-eval report --merge`: not in a user's build.
#[cfg(feature = "__internal")]
pub mod merge;
pub mod page;
mod run_end;
mod runs;
mod schema;

pub use crate::run::RecordingUse;
pub use entry::{CaseId, Entry, EvaluatorEntry, FieldEntry, StoryRef};
pub use error::ReportError;
pub use run_end::unreadable_summary;
pub(crate) use run_end::{finish, finish_at_exit, record};
pub use schema::{FieldAccuracy, Report, Totals, FORMAT};
use std::path::Path;

/// Folds the journals of `dir` (a `target/proposal-eval` folder) into its `results.jsonl`,
/// `report.json` and `report.html`, and returns the report with its cases: what
/// `cargo proposal-eval report` does. Waits for a fold another process is making.
pub fn fold(dir: &Path) -> Result<Report, ReportError> {
    fold::fold(dir, true)
}

/// Folds as the end of a whole run does ([`fold()`] without reading the cases into the
/// report): what `bench/suite-scale`'s `fold_time` measures.
pub fn fold_at_run_end(dir: &Path) -> Result<Report, ReportError> {
    fold::fold(dir, false)
}

#[cfg(test)]
mod tests;
