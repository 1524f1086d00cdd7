//! The journal of a run: `runs/<run-id>/journal.jsonl` below the report folder, one serialized
//! [`Entry`](super::Entry) and a newline per case. Every test process of the run (each test
//! binary of a `cargo test`, each process of a `cargo nextest run`) appends to the same file,
//! whole lines per `write`, under an OS lock on the file ([`std::fs::File::lock`]) that the kernel
//! releases when its process ends, so a killed writer never leaves a lock behind. A process holds
//! its lines for a moment and writes them in batches ([`append`]), and all it holds at its end
//! ([`flush`]): a process killed before its end loses the lines of the cases it finished in
//! its last [`PENDING_FOR`].
//!
//! A line cut by a kill is never glued to the next one: a writer that finds the file not ending
//! in a newline writes one first. The fold skips a line it cannot read and names it
//! ([`Unreadable`]); it reads a line's key ([`EntryKey`]) without the rest.

use chrono::{DateTime, Utc};
use serde::Deserialize;
use std::borrow::Cow;
use std::io::{Read as _, Seek as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The unreadable lines of one file listed one by one; the rest are counted.
const LISTED_PER_FILE: usize = 20;

/// The journal of the run this process belongs to, in `dir` (the report folder).
pub(super) fn path_in(dir: &Path) -> PathBuf {
    crate::layout::run_dir(dir, &crate::layout::this_run()).join(crate::layout::JOURNAL)
}

/// The most bytes of lines a process holds before writing them.
const PENDING_BYTES: usize = 64 * 1024;

/// The longest a line is held: a thread started with the first line held writes what is held
/// this long after it, unless a line that comes later than that, or the process's end, has.
const PENDING_FOR: Duration = Duration::from_millis(50);

/// A process's journal, opened by its first line (`None` when it could not be opened).
type Slot = Mutex<Option<Option<Journal>>>;

/// This process's journal.
static JOURNAL: Slot = Mutex::new(None);

/// The journal file of this process, where its last write ended (the file's length then), the
/// lines not written yet, with when the oldest of them came, and whether a thread is waiting to
/// write them.
struct Journal {
    file: std::fs::File,
    end: u64,
    pending: Vec<u8>,
    since: Option<Instant>,
    writer: bool,
}

/// Appends `line` (one entry, ending in `'\n'`) to this process's journal in `dir`. Lines are
/// written in batches, one `write` of whole lines under the file's lock: when
/// [`PENDING_BYTES`] are held, [`PENDING_FOR`] after the first line held, and at the process's
/// end ([`flush`]). The mutex keeps this process's threads apart (an OS lock on one open file
/// does not), the file lock every other process.
pub(super) fn append(dir: &Path, line: &str) -> std::io::Result<()> {
    append_to(&JOURNAL, || Journal::open(&path_in(dir)), line.as_bytes())
}

/// [`append`] to the journal in `slot`, opened by `open` when it is not yet.
fn append_to(
    slot: &'static Slot,
    open: impl FnOnce() -> std::io::Result<Journal>,
    line: &[u8],
) -> std::io::Result<()> {
    let mut journal = slot.lock().unwrap_or_else(|p| p.into_inner());
    let journal = journal.get_or_insert_with(|| open().ok());
    let Some(journal) = journal.as_mut() else {
        return Err(std::io::Error::other(
            "the run's journal could not be opened",
        ));
    };
    journal.push(line, Instant::now())?;
    if journal.pending.is_empty() || journal.writer {
        return Ok(());
    }
    journal.writer = true;
    let writer = std::thread::Builder::new()
        .name("proposal-eval journal".to_string())
        .spawn(move || {
            std::thread::sleep(PENDING_FOR);
            let mut journal = slot.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(Some(journal)) = journal.as_mut() {
                journal.writer = false;
                let _ = journal.write();
            }
        });
    if writer.is_err() {
        // No thread to wait with: the line is written now.
        journal.writer = false;
        journal.write()?;
    }
    Ok(())
}

/// Writes the lines this process holds: what its end does before a fold reads the journal.
pub(super) fn flush() -> std::io::Result<()> {
    let mut journal = JOURNAL.lock().unwrap_or_else(|p| p.into_inner());
    match journal.as_mut() {
        Some(Some(journal)) => journal.write(),
        _ => Ok(()),
    }
}

impl Journal {
    fn open(path: &Path) -> std::io::Result<Journal> {
        Ok(Journal {
            file: open(path)?,
            end: u64::MAX,
            pending: Vec::new(),
            since: None,
            writer: false,
        })
    }

    /// Holds `line`, which came at `now`, and writes what it holds when that is
    /// [`PENDING_BYTES`] or more, or the oldest line held came [`PENDING_FOR`] before `now`.
    fn push(&mut self, line: &[u8], now: Instant) -> std::io::Result<()> {
        self.pending.extend_from_slice(line);
        let since = *self.since.get_or_insert(now);
        if self.pending.len() >= PENDING_BYTES || now.duration_since(since) >= PENDING_FOR {
            self.write()?;
        }
        Ok(())
    }

    /// Writes the lines held, under the file's lock. Lines that could not be written are
    /// dropped: a report never fails a test, and a later write must not repeat them.
    fn write(&mut self) -> std::io::Result<()> {
        self.since = None;
        if self.pending.is_empty() {
            return Ok(());
        }
        let written = self.file.lock().and_then(|()| {
            let written = append_locked(&mut self.file, &mut self.end, &self.pending);
            written.and(self.file.unlock())
        });
        self.pending.clear();
        written
    }
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

/// Appends `lines` to `file`, which this process has locked: after a newline when the file does
/// not end in one (a writer killed mid-line). `end` is where this process's last line ended:
/// when the file still ends there, it ends in that line's newline and is not read.
fn append_locked(file: &mut std::fs::File, end: &mut u64, lines: &[u8]) -> std::io::Result<()> {
    let len = file.metadata()?.len();
    let mut cut = false;
    if len > 0 && len != *end {
        let mut last = [0u8];
        file.seek(std::io::SeekFrom::Start(len - 1))?;
        file.read_exact(&mut last)?;
        cut = last[0] != b'\n';
    }
    // One `write` of the whole lines (opened for appending: at the end, whatever the position).
    if cut {
        let mut whole = Vec::with_capacity(lines.len() + 1);
        whole.push(b'\n');
        whole.extend_from_slice(lines);
        file.write_all(&whole)?;
        *end = len + whole.len() as u64;
    } else {
        file.write_all(lines)?;
        *end = len + lines.len() as u64;
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
        let (column, why) = super::error::what_is_wrong(line);
        self.listed
            .push(format!("{}:{number}:{column}: {why}", file.display()));
    }

    /// Names a file that could not be read at all.
    pub(super) fn file(&mut self, error: &super::error::ReportError) {
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

/// What identifies a case across runs, and when its entry was written: read from a line without
/// building the rest of the entry, so a line that a newer entry replaces costs a scan only.
#[derive(Deserialize)]
pub(super) struct EntryKey<'a> {
    #[serde(borrow)]
    pub(super) package: Cow<'a, str>,
    #[serde(borrow)]
    pub(super) binary: Cow<'a, str>,
    #[serde(borrow)]
    pub(super) suite_dir: Cow<'a, str>,
    #[serde(borrow)]
    pub(super) case: Cow<'a, str>,
    #[serde(borrow, default)]
    pub(super) run: Option<Cow<'a, str>>,
    pub(super) finished_at: DateTime<Utc>,
}

impl<'a> EntryKey<'a> {
    /// The case's id.
    pub(super) fn id(&self) -> super::entry::CaseId<'_> {
        super::entry::CaseId::new(&self.package, &self.binary, &self.suite_dir, &self.case)
    }

    /// The key of an entry line. Lines are written by `record`, with the key's fields first
    /// and `finished_at` last, so the usual line is read by position; anything else (an escape
    /// in a field, another layout) goes through serde.
    pub(super) fn of_line(line: &'a [u8]) -> Option<EntryKey<'a>> {
        EntryKey::by_position(line).or_else(|| serde_json::from_slice(line).ok())
    }

    /// The key read by position, looking at the bytes of its fields only (the rest of the line
    /// is not even checked to be UTF-8: that is for whoever parses it).
    pub(super) fn by_position(line: &'a [u8]) -> Option<EntryKey<'a>> {
        let text = |bytes: &'a [u8]| std::str::from_utf8(bytes).ok();
        let mut rest = line;
        let mut field = |name: &str| -> Option<&'a str> {
            rest = rest.strip_prefix(name.as_bytes())?;
            let end = rest.iter().position(|&b| b == b'"')?;
            let value = &rest[..end];
            rest = &rest[end + 1..];
            // An escape would need decoding (and `\"` ends no string): serde's job.
            if value.contains(&b'\\') {
                return None;
            }
            text(value)
        };
        let package = field("{\"package\":\"")?;
        let binary = field(",\"binary\":\"")?;
        field(",\"suite\":\"")?;
        let suite_dir = field(",\"suite_dir\":\"")?;
        let case = field(",\"case\":\"")?;
        // A quote inside a string is escaped, so this text can only be the last field itself.
        const FINISHED: &[u8] = b",\"finished_at\":\"";
        const RUN: &[u8] = b",\"run\":\"";
        let body = line.strip_suffix(b"\"}")?;
        let at = rfind(body, FINISHED)?;
        let (before, finished) = (&body[..at], &body[at + FINISHED.len()..]);
        let finished_at = DateTime::parse_from_rfc3339(text(finished)?).ok()?.to_utc();
        // `run`, when there is one, comes right before.
        let run = match before.strip_suffix(b"\"") {
            Some(rest) => {
                let run = &rest[rfind(rest, RUN)? + RUN.len()..];
                if run.contains(&b'\\') || run.contains(&b'"') {
                    return None;
                }
                Some(text(run)?.into())
            }
            // A line written before `run` came last (with `usage` or `samples` after it):
            // serde finds it.
            None if rfind(before, RUN).is_some() => return None,
            None => None,
        };
        Some(EntryKey {
            package: package.into(),
            binary: binary.into(),
            suite_dir: suite_dir.into(),
            case: case.into(),
            run,
            finished_at,
        })
    }
}

/// Where `needle` last starts in `haystack`.
pub(super) fn rfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).rposition(|w| w == needle)
}

/// The fields of an entry line that tell the case's story (what it was given and returned, its
/// calls; or, in `results.jsonl` and `report.json`, where in its journal they are), then those
/// after it: an entry's last fields, written after every field the report's numbers read.
const STORY: [&[u8]; 9] = [
    b"input",
    b"input_sha256",
    b"output",
    b"output_is_expected",
    b"calls",
    b"story",
    b"recording_path",
    b"run",
    b"finished_at",
];

/// Where an entry line's story begins and where the fields after it begin (the bytes between
/// are the story, or the reference to it, with their leading comma); `None` for a line not laid
/// out as `record` writes it.
pub(super) fn story_span(line: &[u8]) -> Option<(usize, usize)> {
    let story = story_start(line)?;
    Some((story, story_end(line, story)?))
}

/// Where the fields written after the story begin: `recording_path`, `run` and `finished_at`,
/// short strings [`Entry`]'s last fields, read from the end as the fold's index reads them (a
/// string's quotes are escaped, so a field found from the end whose value holds no quote is the
/// field itself). `None` when the line does not end with `finished_at`.
fn story_end(line: &[u8], story: usize) -> Option<usize> {
    const TAIL: [&[u8]; 3] = [
        b",\"finished_at\":\"",
        b",\"run\":\"",
        b",\"recording_path\":\"",
    ];
    let body = line.strip_suffix(b"\"}")?;
    let mut start = rfind(body, TAIL[0])?;
    for key in &TAIL[1..] {
        let Some(before) = body[..start].strip_suffix(b"\"") else {
            break;
        };
        if let Some(at) = rfind(before, key) {
            if !before[at + key.len()..].contains(&b'"') {
                start = at;
            }
        }
    }
    (start >= story).then_some(start)
}

/// Where the comma before the first top-level story field of a compact JSON object is; `None`
/// when there is none (or the text is not laid out as `record` writes it).
fn story_start(line: &[u8]) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = 0;
    while i < line.len() {
        match line[i] {
            b'"' => {
                if depth == 1 && i > 0 && line[i - 1] == b',' {
                    let key = &line[i + 1..];
                    let story = STORY
                        .iter()
                        .any(|k| key.starts_with(k) && key.get(k.len()) == Some(&b'"'));
                    if story {
                        return Some(i - 1);
                    }
                }
                // To the string's closing quote, past escapes.
                i += 1;
                loop {
                    let at = i + memchr::memchr2(b'"', b'\\', &line[i..])?;
                    if line[at] == b'"' {
                        i = at;
                        break;
                    }
                    i = at + 2;
                }
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.checked_sub(1)?,
            _ => {}
        }
        i += 1;
    }
    None
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
    fn lines_are_held_until_one_comes_late_or_enough_are_held_or_the_process_ends() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("runs/run.jsonl");
        let mut journal = Journal::open(&path).unwrap();
        let read = || std::fs::read_to_string(&path).unwrap();
        let start = Instant::now();
        journal.push(b"{\"n\":1}\n", start).unwrap();
        journal
            .push(b"{\"n\":2}\n", start + PENDING_FOR / 2)
            .unwrap();
        assert_eq!(read(), "", "two lines within {PENDING_FOR:?} are held");
        journal.push(b"{\"n\":3}\n", start + PENDING_FOR).unwrap();
        assert_eq!(read(), "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n");
        // The clock starts again at the next line held.
        let later = start + 10 * PENDING_FOR;
        journal.push(b"{\"n\":4}\n", later).unwrap();
        journal
            .push(b"{\"n\":5}\n", later + PENDING_FOR / 2)
            .unwrap();
        assert_eq!(read().lines().count(), 3);
        journal.write().unwrap();
        assert_eq!(
            read().lines().count(),
            5,
            "the process's end writes what is held"
        );
        // A long line is written as it comes.
        let long = format!("{{\"text\":\"{}\"}}\n", "x".repeat(PENDING_BYTES));
        journal.push(long.as_bytes(), later).unwrap();
        assert_eq!(read().lines().count(), 6);
        journal.write().unwrap();
        assert_eq!(read().lines().count(), 6, "nothing is written twice");
    }

    #[test]
    fn a_held_line_is_written_soon_after_by_a_thread_of_its_own() {
        static SLOT: Slot = Mutex::new(None);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("runs/run.jsonl");
        let lines = b"{\"n\":1}\n{\"n\":2}\n";
        append_to(&SLOT, || Journal::open(&path), &lines[..8]).unwrap();
        append_to(&SLOT, || unreachable!("opened once"), &lines[8..]).unwrap();
        let start = Instant::now();
        while std::fs::read(&path).unwrap().is_empty() && start.elapsed() < Duration::from_secs(10)
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(std::fs::read(&path).unwrap(), lines);
        // The thread is done and wrote nothing twice: the next line starts another.
        append_to(&SLOT, || unreachable!("opened once"), b"{\"n\":3}\n").unwrap();
        while std::fs::read(&path).unwrap().len() == lines.len()
            && start.elapsed() < Duration::from_secs(10)
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n");
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
