//! The runs on disk: each in its folder `runs/<run>/` (its journal and its per-run state,
//! [`crate::layout`]), the fold's bookmark of each, and which are kept.
//!
//! The bookmark is `runs.json` beside `results.jsonl`: the runs in the order folds first took
//! them up, each with how much of its journal has been read (bytes and lines), so a fold reads
//! each journal from where the last one stopped. It is written by the fold, under its lock,
//! after `results.jsonl`: a fold cut short reads the same lines again, which changes nothing.
//!
//! Retention ([`retain`]) is one pure function over that list: the newest runs are kept while
//! they number at most [`KEPT_RUNS`] and their folders add up to at most [`KEPT_BYTES`]; a run
//! whose journal `results.jsonl` refers to (a case's story is there) is always kept.

use crate::layout::{JOURNAL, RUNS};
use serde::{Deserialize, Serialize};
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The bookmark file, in the report folder.
const INDEX: &str = "runs.json";

/// The most runs kept.
pub(super) const KEPT_RUNS: usize = 10;

/// The most bytes the kept runs' folders hold together (the runs `results.jsonl` refers to
/// aside): with `results.jsonl`, `report.json` and the page, 10 runs of a 100,000-case suite
/// leave at most 1 GB in `target/proposal-eval` (docs/reference/reports.md).
pub(super) const KEPT_BYTES: u64 = 640 << 20;

#[cfg(test)]
thread_local! {
    /// [`KEPT_BYTES`] for the folds of this thread: a test's budget.
    pub(super) static TEST_KEPT_BYTES: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
}

/// [`KEPT_BYTES`], or a test's budget.
fn kept_bytes() -> u64 {
    #[cfg(test)]
    if let Some(bytes) = TEST_KEPT_BYTES.with(std::cell::Cell::get) {
        return bytes;
    }
    KEPT_BYTES
}

/// How far a fold has read one run's journal.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(super) struct Bookmark {
    /// The run's folder name.
    pub(super) run: String,
    /// Bytes of its journal read.
    pub(super) bytes: u64,
    /// Lines read (newlines passed): the next line's number is one more.
    pub(super) lines: u64,
}

/// The runs found in a report folder, oldest first, each with its bookmark.
pub(super) struct Runs {
    pub(super) runs: Vec<Bookmark>,
}

impl Runs {
    /// The runs of `dir` (a report folder) with a journal: those the bookmark file names first,
    /// in its order, then new ones by name. A missing or unreadable bookmark file means every
    /// journal is read whole, which changes nothing but the time.
    pub(super) fn find(dir: &Path) -> Runs {
        let mut runs: Vec<Bookmark> = std::fs::read(dir.join(INDEX))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default();
        let mut found: Vec<String> = std::fs::read_dir(dir.join(RUNS))
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.path().join(JOURNAL).is_file())
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        found.sort();
        runs.retain(|r| found.contains(&r.run));
        for run in found {
            if !runs.iter().any(|r| r.run == run) {
                runs.push(Bookmark {
                    run,
                    ..Bookmark::default()
                });
            }
        }
        Runs { runs }
    }

    /// The journal of run `run` in `dir`.
    pub(super) fn journal(dir: &Path, run: &str) -> PathBuf {
        dir.join(RUNS).join(run).join(JOURNAL)
    }

    /// Removes the runs [`retain`] does not keep (`referenced`: whether `results.jsonl` refers to
    /// each run's journal) and writes the bookmarks of the others.
    pub(super) fn retain_and_save(
        mut self,
        dir: &Path,
        referenced: &[bool],
    ) -> std::io::Result<()> {
        let sizes: Vec<(u64, bool)> = self
            .runs
            .iter()
            .zip(referenced)
            .map(|(r, &referenced)| (folder_bytes(&dir.join(RUNS).join(&r.run)), referenced))
            .collect();
        let kept = retain(&sizes, KEPT_RUNS, kept_bytes());
        let mut kept = kept.iter();
        self.runs.retain(|run| {
            let keep = *kept.next().unwrap_or(&true);
            if !keep {
                let _ = std::fs::remove_dir_all(dir.join(RUNS).join(&run.run));
            }
            keep
        });
        let text = serde_json::to_vec_pretty(&self.runs).map_err(std::io::Error::other)?;
        crate::files::replace_derived_if_changed(&dir.join(INDEX), |w| w.write_all(&text))
            .map(|_| ())
    }
}

/// Which runs are kept, given each run's folder size and whether `results.jsonl` refers to it,
/// oldest first: from the newest back, a run referred to always, any other while the kept
/// runs number fewer than `max_runs` and it fits in what `max_bytes` leaves.
pub(super) fn retain(runs: &[(u64, bool)], max_runs: usize, max_bytes: u64) -> Vec<bool> {
    let mut kept = vec![false; runs.len()];
    let (mut count, mut bytes) = (0usize, 0u64);
    for (i, &(size, referenced)) in runs.iter().enumerate().rev() {
        if referenced || (count < max_runs && bytes + size <= max_bytes) {
            kept[i] = true;
            count += 1;
            bytes += size;
        }
    }
    kept
}

/// The bytes of the files in `folder` (one level: a run's folder holds files only).
fn folder_bytes(folder: &Path) -> u64 {
    std::fs::read_dir(folder)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::retain;

    #[test]
    fn the_newest_runs_are_kept_by_count_and_size_and_referred_ones_always() {
        // (bytes, referred to), oldest first.
        let runs = [
            (50, false),
            (10, true),
            (30, false),
            (30, false),
            (20, true),
        ];
        assert_eq!(retain(&runs, 10, 1000), [true; 5]);
        assert_eq!(retain(&runs, 2, 1000), [false, true, false, true, true]);
        assert_eq!(retain(&runs, 3, 1000), [false, true, true, true, true]);
        // 20 + 30 = 50 fit in 60; the next 30 does not; the old referred one stays.
        assert_eq!(retain(&runs, 10, 60), [false, true, false, true, true]);
        assert_eq!(retain(&runs, 0, 0), [false, true, false, false, true]);
    }
}
