//! The journal of a run: `runs/<run-id>.jsonl` below the report folder, one serialized
//! [`Entry`](super::Entry) and a newline per case. Every test process of the run (each test
//! binary of a `cargo test`, each process of a `cargo nextest run`) appends to the same file, one
//! line per `write`, under an OS lock on the file ([`std::fs::File::lock`]) that the kernel
//! releases when its process ends, so a killed writer never leaves a lock behind.
//!
//! A line cut by a kill is never glued to the next one: a writer that finds the file not ending
//! in a newline writes one first. The reader ([`read`]) skips a line it cannot read and names it.

use std::io::{Read as _, Seek as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The folder of the journals, below the report folder.
pub(super) const RUNS: &str = "runs";

/// The journals kept: the last runs', for `report --merge` and for looking back.
pub(super) const KEPT_RUNS: usize = 10;

/// The unreadable lines of one file listed one by one; the rest are counted.
const LISTED_PER_FILE: usize = 20;

/// The journal of the run this process belongs to, in `dir` (the report folder): named by
/// [`crate::env::run_id`], or by the process where no run is known.
pub(super) fn path_in(dir: &Path) -> PathBuf {
    let run = match crate::env::run_id() {
        Some(run) => crate::layout::safe(run),
        None => format!("process-{}", std::process::id()),
    };
    dir.join(RUNS).join(format!("{run}.jsonl"))
}

/// This process's journal, opened by its first line (`None` when it could not be opened), and
/// where its last line ended (its length then).
static JOURNAL: Mutex<Option<Option<(std::fs::File, u64)>>> = Mutex::new(None);

/// Appends `line` (one entry, ending in `'\n'`) to this process's journal in `dir`. The mutex
/// keeps this process's threads apart (an OS lock on one open file does not), the file lock
/// every other process.
pub(super) fn append(dir: &Path, line: &str) -> std::io::Result<()> {
    let mut journal = JOURNAL.lock().unwrap_or_else(|p| p.into_inner());
    let file = journal.get_or_insert_with(|| open(&path_in(dir)).ok().map(|f| (f, u64::MAX)));
    let Some((file, end)) = file.as_mut() else {
        return Err(std::io::Error::other(
            "the run's journal could not be opened",
        ));
    };
    file.lock()?;
    let written = append_locked(file, end, line.as_bytes());
    let unlocked = file.unlock();
    written.and(unlocked)
}

fn open(path: &Path) -> std::io::Result<std::fs::File> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)
}

/// Appends `line` to `file`, which this process has locked: after a newline when the file does
/// not end in one (a writer killed mid-line). `end` is where this process's last line ended:
/// when the file still ends there, it ends in that line's newline and is not read.
fn append_locked(file: &mut std::fs::File, end: &mut u64, line: &[u8]) -> std::io::Result<()> {
    let len = file.metadata()?.len();
    let mut cut = false;
    if len > 0 && len != *end {
        let mut last = [0u8];
        file.seek(std::io::SeekFrom::Start(len - 1))?;
        file.read_exact(&mut last)?;
        cut = last[0] != b'\n';
    }
    // One `write` of the whole line (opened for appending: at the end, whatever the position).
    if cut {
        let mut whole = Vec::with_capacity(line.len() + 1);
        whole.push(b'\n');
        whole.extend_from_slice(line);
        file.write_all(&whole)?;
        *end = len + whole.len() as u64;
    } else {
        file.write_all(line)?;
        *end = len + line.len() as u64;
    }
    Ok(())
}

/// The unreadable lines of the files a fold read, as `report.json` lists them: each as
/// `FILE:LINE:COLUMN: why` (`FILE: why` for a file that could not be read), at most
/// [`LISTED_PER_FILE`] per file, then `FILE: N more unreadable line(s)`.
#[derive(Default)]
pub(super) struct Unreadable {
    listed: Vec<String>,
    /// Per file, in the order first named: its unreadable lines.
    counts: Vec<(PathBuf, usize)>,
}

impl Unreadable {
    /// Names the unreadable line `number` (from 1) of `file`.
    pub(super) fn line(&mut self, file: &Path, number: usize, line: &str) {
        let at = match self.counts.iter().position(|(f, _)| f == file) {
            Some(at) => at,
            None => {
                self.counts.push((file.to_path_buf(), 0));
                self.counts.len() - 1
            }
        };
        self.counts[at].1 += 1;
        if self.counts[at].1 > LISTED_PER_FILE {
            return;
        }
        let (column, why) = what_is_wrong(line);
        self.listed
            .push(format!("{}:{number}:{column}: {why}", file.display()));
    }

    /// Names a file that could not be read at all.
    pub(super) fn file(&mut self, error: &super::ReportError) {
        self.listed.push(error.to_string());
    }

    /// The list, with the count of each file's lines past those listed at its end.
    pub(super) fn finish(mut self) -> Vec<String> {
        for (file, bad) in &self.counts {
            if *bad > LISTED_PER_FILE {
                self.listed.push(format!(
                    "{}: {} more unreadable line(s)",
                    file.display(),
                    bad - LISTED_PER_FILE
                ));
            }
        }
        self.listed
    }
}

/// Where and why `line` is not an entry: its column, from 1, and serde's reason.
pub(super) fn what_is_wrong(line: &str) -> (usize, String) {
    match serde_json::from_str::<super::Entry>(line) {
        Err(e) => (e.column(), why(&e)),
        // An entry whose case could not be told apart: written in another layout.
        Ok(_) => (1, "no case identity".to_string()),
    }
}

/// A JSON error without serde's own "at line 1 column N" (the caller names the place).
pub(super) fn why(error: &serde_json::Error) -> String {
    let text = error.to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_after_a_cut_one_starts_on_a_line_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.jsonl");
        std::fs::write(&path, "{\"package\":\"a\"\n{\"package\":\"cut by a ki").unwrap();
        let mut file = open(&path).unwrap();
        let mut end = u64::MAX;
        append_locked(&mut file, &mut end, b"{\"whole\":1}\n").unwrap();
        // Another writer was killed mid-line after this one's line.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"cut\"")
            .unwrap();
        append_locked(&mut file, &mut end, b"{\"whole\":2}\n").unwrap();
        append_locked(&mut file, &mut end, b"{\"whole\":3}\n").unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "{\"package\":\"a\"\n{\"package\":\"cut by a ki\n{\"whole\":1}\n{\"cut\"\n{\"whole\":2}\n{\"whole\":3}\n"
        );
    }

    #[test]
    fn an_empty_journal_gets_no_leading_newline() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("runs/run.jsonl");
        let mut file = open(&path).unwrap();
        let mut end = u64::MAX;
        append_locked(&mut file, &mut end, b"{}\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{}\n");
    }

    #[test]
    fn unreadable_lines_are_listed_twenty_per_file_then_counted() {
        let mut unreadable = Unreadable::default();
        let file = Path::new("runs/r.jsonl");
        for n in 1..=22 {
            unreadable.line(file, n, "{\"package\":");
        }
        let listed = unreadable.finish();
        assert_eq!(listed.len(), 21);
        assert_eq!(listed[0], "runs/r.jsonl:1:11: EOF while parsing a value");
        assert_eq!(listed[20], "runs/r.jsonl: 2 more unreadable line(s)");
    }
}
