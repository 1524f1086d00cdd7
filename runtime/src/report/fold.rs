//! The fold: the lines the runs' journals gained since the last fold, and the standing results,
//! folded into `results.jsonl` (the latest result of every case that still exists), and from
//! it `report.json` and `report.html`. `report --merge` ([`merge`](super::merge)) folds other
//! machines' files the same way.
//!
//! A fold runs under an OS lock on `.fold.lock` (released by the kernel when its process ends).
//! It reads `results.jsonl`, and each journal from where the last fold stopped (the bookmark,
//! [`runs`](super::runs)); keeps the latest line of each case; and writes the three files, each
//! only when its content changed: a fold run twice gives the same files. Then the runs past
//! retention are removed, and the bookmark written.
//!
//! Each story is written once, in its journal: a case's line in `results.jsonl` is its journal
//! line with the story (`input`, `output`, `calls`) replaced by where it is
//! (`"story": {"journal", "offset", "length"}`), and `report.json` holds those lines. The page
//! embeds the stories it has room for, read from the journals (each input from its fixture:
//! a journal refers to it by the fixture's hash).
//!
//! Memory does not grow with the size of the entries: the first pass keeps, per case, where its
//! latest line is (file, offset, length); the second reads those lines one at a time, adds up
//! what the report's numbers need ([`Counted`]) and writes each to `results.jsonl`;
//! `report.json` and `report.html` are then written from it, a buffer at a time.

use super::aggregate::{Aggregate, Counted};
use super::entry::Entry;
use super::error::ReportError;
use super::journal::{EntryKey, Unreadable};
use super::page;
use super::runs::Runs;
use super::schema::{Report, FORMAT};
use crate::layout::{JOURNAL, RUNS};
use chrono::{DateTime, Utc};
use std::collections::BTreeMap;
use std::io::{BufRead as _, Read as _, Seek as _, Write as _};
use std::path::{Path, PathBuf};

/// The standing result of every case, one line each, in case order.
pub(super) const RESULTS: &str = "results.jsonl";

/// How many batches of lines (64 KiB each) wait for the page's thread at most: 4 kept a
/// 5,000-case run's peak memory 0.8 MB under 16 with the same time.
const BATCHES: usize = 4;

/// The file whose OS lock keeps folds apart.
const LOCK: &str = ".fold.lock";

#[cfg(test)]
thread_local! {
    /// The bytes of journals the folds of this thread have read: what a test of the bookmark
    /// counts.
    pub(super) static JOURNAL_BYTES_READ: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Where a line is: its file (an index into [`Gathered::files`]), its byte offset and length
/// (without its newline), and its number in the file, from 1.
#[derive(Clone, Copy)]
struct Place {
    file: u32,
    offset: u64,
    len: u32,
    number: u32,
}

/// A case's latest line so far. Of two lines of a case written at the same time (to the
/// nanosecond: the same line, read from `results.jsonl` and again from its journal), the one
/// read last stands; files are read in a fixed order (`results.jsonl`, then the journals in the
/// bookmark's order; a merge's sources as given), so the result is the same every time.
struct Latest {
    finished_at: DateTime<Utc>,
    /// Its run, an index into [`Gathered::runs`].
    run: Option<u32>,
    place: Place,
}

/// What a fold does with a line it cannot read.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Lines {
    /// Lists it in the report's `unreadable_entries` and goes on (this machine's journals).
    Listed,
    /// Stops with an error naming it, unless it is a file's last line cut off without its
    /// newline (another machine's files, for `report --merge`).
    Strict,
}

/// The lines read so far: the latest per case, the files they are in, and what could not be
/// read.
pub(super) struct Gathered {
    latest: BTreeMap<String, Latest>,
    files: Vec<Source>,
    /// The runs named by the lines, each once.
    runs: Vec<String>,
    /// Per source (a machine): the run of its latest line, and when that line was written.
    sources: Vec<Option<(DateTime<Utc>, Option<u32>)>>,
    unreadable: Unreadable,
    lines: Lines,
}

/// A file lines were read from, open for reading them again.
struct Source {
    path: PathBuf,
    file: std::io::BufReader<std::fs::File>,
    /// The reader's offset in the file; `u64::MAX` when unknown.
    at: u64,
    /// The source (machine) it belongs to.
    source: usize,
    /// For a journal: the name its stories are referred to by, and the reference's start,
    /// `,"story":{"journal":"…","offset":`; `None` for a file whose lines are copied as they are.
    refer: Option<(String, Vec<u8>)>,
}

impl Gathered {
    pub(super) fn new(lines: Lines) -> Gathered {
        Gathered {
            latest: BTreeMap::new(),
            files: Vec::new(),
            runs: Vec::new(),
            sources: Vec::new(),
            unreadable: Unreadable::default(),
            lines,
        }
    }

    /// Takes up the lines of `path`, a file of `source` (numbered from 0, one per machine), from
    /// `from` (bytes and lines already read), and returns where it stopped (the file's end). The
    /// file is read under a shared OS lock, so no line is read half-written. `journal`: the name
    /// its stories are referred to by in the lines written (`None`: its lines are copied as
    /// they are).
    pub(super) fn add(
        &mut self,
        path: &Path,
        source: usize,
        from: (u64, u64),
        journal: Option<&str>,
    ) -> Result<(u64, u64), ReportError> {
        let file = std::fs::File::open(path).map_err(ReportError::io("read", path))?;
        file.lock_shared().map_err(ReportError::io("lock", path))?;
        // A journal shorter than its bookmark was not appended to but written anew: read whole.
        let from = match file.metadata() {
            Ok(meta) if meta.len() < from.0 => (0, 0),
            _ => from,
        };
        let added = self.add_locked(path, &file, source, from);
        let _ = file.unlock();
        let to = added?;
        let refer = journal.map(|name| {
            let text = serde_json::to_string(name).unwrap_or_default();
            let start = format!(",\"story\":{{\"journal\":{text},\"offset\":");
            (name.to_string(), start.into_bytes())
        });
        // Its lines are read again by place, after the lock is let go: only lines after them
        // are written meanwhile.
        self.files.push(Source {
            path: path.to_path_buf(),
            file: std::io::BufReader::with_capacity(64 * 1024, file),
            at: u64::MAX,
            source,
            refer,
        });
        Ok(to)
    }

    fn add_locked(
        &mut self,
        path: &Path,
        file: &std::fs::File,
        source: usize,
        (mut offset, lines): (u64, u64),
    ) -> Result<(u64, u64), ReportError> {
        if self.sources.len() <= source {
            self.sources.resize(source + 1, None);
        }
        let index = u32::try_from(self.files.len()).expect("fewer than 2^32 files");
        let mut reader = std::io::BufReader::with_capacity(256 * 1024, file);
        reader
            .seek(std::io::SeekFrom::Start(offset))
            .map_err(ReportError::io("read", path))?;
        let (mut buf, mut key) = (Vec::new(), String::new());
        let mut number = lines;
        loop {
            buf.clear();
            let read = reader
                .read_until(b'\n', &mut buf)
                .map_err(ReportError::io("read", path))?;
            #[cfg(test)]
            JOURNAL_BYTES_READ.with(|n| n.set(n.get() + read as u64));
            if read == 0 {
                return Ok((offset, number));
            }
            let ended = buf.last() == Some(&b'\n');
            let body = buf.strip_suffix(b"\n").unwrap_or(&buf);
            let place = Place {
                file: index,
                offset,
                len: u32::try_from(body.len()).unwrap_or(u32::MAX),
                number: u32::try_from(number + 1).unwrap_or(u32::MAX),
            };
            offset += read as u64;
            number += u64::from(ended);
            if body.trim_ascii().is_empty() {
                continue;
            }
            // Only the key's fields are read here (and checked to be UTF-8); the rest is read
            // once the line stands.
            let Some(k) = EntryKey::of_line(body) else {
                let line = String::from_utf8_lossy(body).into_owned();
                self.bad(path, place.number, &line, !ended)?;
                continue;
            };
            let run = k.run.as_deref().map(|r| self.run_index(r));
            let latest = &mut self.sources[source];
            if latest.is_none_or(|(at, _)| k.finished_at > at) {
                *latest = Some((k.finished_at, run));
            }
            k.id().key_into(&mut key);
            let new = Latest {
                finished_at: k.finished_at,
                run,
                place,
            };
            match self.latest.get_mut(&key) {
                Some(old) if new.finished_at < old.finished_at => {}
                Some(old) => *old = new,
                None => {
                    self.latest.insert(key.clone(), new);
                }
            }
        }
    }

    /// A line that cannot be read: listed, or (strict) an error unless it is the file's last
    /// line, cut off.
    fn bad(&mut self, path: &Path, number: u32, line: &str, cut: bool) -> Result<(), ReportError> {
        if self.lines == Lines::Strict && !cut {
            return Err(ReportError::at(
                path,
                number as usize,
                line,
                "each line of a run journal is one entry as a test run writes it (remove the line, or run that machine's tests again)",
            ));
        }
        self.unreadable.line(path, number as usize, line);
        Ok(())
    }

    /// A file that could not be read at all: named in the report, not fatal.
    pub(super) fn unreadable_file(&mut self, error: &ReportError) {
        self.unreadable.file(error);
    }

    fn run_index(&mut self, run: &str) -> u32 {
        let at = match self.runs.iter().position(|r| r == run) {
            Some(at) => at,
            None => {
                self.runs.push(run.to_string());
                self.runs.len() - 1
            }
        };
        u32::try_from(at).expect("fewer than 2^32 runs")
    }

    /// The run of the latest line of all (an index into `runs`): a case of any other run is
    /// older.
    fn latest_run(&self) -> Option<u32> {
        let (_, run) = self.sources.iter().flatten().max_by_key(|(at, _)| *at)?;
        *run
    }

    /// Reads the line at `place` into `buf` (not checked to be UTF-8 here: its story is copied
    /// or referred to, not read, and the rest is parsed).
    fn line<'b>(&mut self, place: Place, buf: &'b mut Vec<u8>) -> std::io::Result<&'b [u8]> {
        let source = &mut self.files[place.file as usize];
        if source.at != place.offset {
            // Lines of a journal come nearly in case order (test threads interleave): a step
            // back or ahead within the buffer keeps it.
            match i64::try_from(place.offset)
                .ok()
                .zip(i64::try_from(source.at).ok())
            {
                Some((to, at)) => source.file.seek_relative(to - at)?,
                None => {
                    source.file.seek(std::io::SeekFrom::Start(place.offset))?;
                }
            }
        }
        buf.resize(place.len as usize, 0);
        source.file.read_exact(buf)?;
        source.at = place.offset + u64::from(place.len);
        Ok(buf)
    }
}

/// Folds the journals in `dir` (the report folder) into its `results.jsonl`, `report.json`
/// and `report.html`, and returns the report, with its cases when `keep_cases`.
pub(super) fn fold(dir: &Path, keep_cases: bool) -> Result<Report, ReportError> {
    std::fs::create_dir_all(dir).map_err(ReportError::io("create", dir))?;
    let lock_path = dir.join(LOCK);
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(ReportError::io("open", &lock_path))?;
    lock.lock().map_err(ReportError::io("lock", &lock_path))?;
    let results = dir.join(RESULTS);
    let mut gathered = Gathered::new(Lines::Listed);
    match gathered.add(&results, 0, (0, 0), None) {
        Err(e) if e.kind() != Some(std::io::ErrorKind::NotFound) => return Err(e),
        _ => {}
    }
    let mut runs = Runs::find(dir);
    let names: Vec<String> = runs
        .runs
        .iter()
        .map(|r| format!("{RUNS}/{}/{JOURNAL}", r.run))
        .collect();
    for (run, name) in runs.runs.iter_mut().zip(&names) {
        let path = Runs::journal(dir, &run.run);
        match gathered.add(&path, 0, (run.bytes, run.lines), Some(name)) {
            Ok((bytes, lines)) => (run.bytes, run.lines) = (bytes, lines),
            // Gone since it was listed (another fold's retention).
            Err(e) if e.kind() == Some(std::io::ErrorKind::NotFound) => {}
            Err(e) => gathered.unreadable_file(&e),
        }
    }
    let (report, referred) = write(gathered, &Out::Fold(&results), keep_cases)?;
    let referred: Vec<bool> = names.iter().map(|n| referred.contains(n)).collect();
    runs.retain_and_save(dir, &referred)
        .map_err(ReportError::io("write", &dir.join(RUNS)))?;
    drop(lock);
    Ok(report)
}

/// What a fold keeps of a case whose fixture or test target is not on this machine, and which
/// runs are current.
pub(super) enum Out<'a> {
    /// This machine's fold: `results.jsonl` at this path, and the report beside it; cases whose
    /// fixture or target is gone are dropped; the run of the latest line of all is current.
    Fold(&'a Path),
    /// A merge: `report.json` and `report.html` in this folder (no `results.jsonl`: the cases
    /// are other machines'); every case is kept; each source's latest run is current (the
    /// partitions of one CI run, each with its run id).
    Merge(&'a Path),
}

/// Writes the report of the gathered lines, each file only when its content changed, and
/// returns it (with its cases when `keep_cases`) and the journals its lines refer to.
pub(super) fn write(
    mut gathered: Gathered,
    out: &Out,
    keep_cases: bool,
) -> Result<(Report, Vec<String>), ReportError> {
    let (dir, lines_path) = match out {
        Out::Fold(results) => (
            results.parent().unwrap_or(Path::new(".")),
            results.to_path_buf(),
        ),
        // A merge's lines go to a file of their own, removed at the end.
        Out::Merge(dir) => (
            *dir,
            dir.join(format!(".merged-{}.jsonl", std::process::id())),
        ),
    };
    std::fs::create_dir_all(dir).map_err(ReportError::io("create", dir))?;
    let latest_run = gathered
        .latest_run()
        .map(|run| gathered.runs[run as usize].clone());
    let mut kept = Kept::default();
    // The page's cases are rendered on a thread of their own as the lines are written (reading
    // their stories is most of the page's work), while this one writes `results.jsonl` and
    // `report.json`.
    let result = std::thread::scope(|scope| {
        // Lines go in batches of about 64 KiB (a hand-over per line costs more than the
        // line), one a line, each after a byte that says whether it is of an older run (`o`)
        // or not (`c`). [`BATCHES`] at most wait.
        let (send, receive) = std::sync::mpsc::sync_channel::<Vec<u8>>(BATCHES);
        let renderer = scope.spawn(move || {
            let mut cases = page::Cases::new(dir);
            for batch in receive {
                for line in batch.split(|&b| b == b'\n').filter(|l| l.len() > 1) {
                    cases.add(line[0] == b'o', &line[1..])?;
                }
            }
            Ok::<_, std::io::Error>(cases)
        });
        let results_changed = put(&lines_path, |w| {
            let mut batch = Vec::new();
            // A page that stopped has its error to tell at the end.
            let mut to_page = |older: bool, line: &[u8]| {
                batch.push(if older { b'o' } else { b'c' });
                batch.extend_from_slice(line);
                batch.push(b'\n');
                if batch.len() >= 64 * 1024 {
                    let _ = send.send(std::mem::take(&mut batch));
                }
            };
            kept = lines(&mut gathered, w, out, keep_cases, &mut to_page)?;
            let _ = send.send(batch);
            Ok(())
        });
        drop(send);
        let results_changed = results_changed?;
        let (totals, suites) = std::mem::take(&mut kept.aggregate).finish();
        let mut report = Report {
            format: FORMAT,
            generated_at: Utc::now(),
            latest_run,
            totals,
            suites,
            unreadable_entries: std::mem::take(&mut gathered.unreadable).finish(),
            cases: Vec::new(),
        };
        let report_path = dir.join("report.json");
        if !results_changed {
            // Nothing changed but the time: the report keeps the time it had.
            if let Some(time) = unchanged_time(&report_path, &report) {
                report.generated_at = time;
            }
        }
        let header = header(&report)?;
        let (head, tail) = around_cases(&header)
            .ok_or_else(|| ReportError::new(&report_path, "the report header has no cases key"))?;
        put(&report_path, |w| {
            write_json(w, (&head, &tail), &lines_path, &kept.older)
        })?;
        let html = dir.join("report.html");
        let cases = renderer
            .join()
            .map_err(|_| ReportError::new(&html, "the page's cases could not be rendered"))?
            .map_err(ReportError::io("write", &html))?;
        cases.write(None, &head, &tail)?;
        report.cases = std::mem::take(&mut kept.cases);
        Ok((report, std::mem::take(&mut kept.journals)))
    });
    if let Out::Merge(_) = out {
        let _ = std::fs::remove_file(&lines_path);
    }
    result
}

/// What the second pass kept.
#[derive(Default)]
struct Kept {
    aggregate: Aggregate,
    /// Per kept line, in order: whether it is of an older run.
    older: Vec<bool>,
    /// The entries, when asked for.
    cases: Vec<Entry>,
    /// The journals the kept lines refer to, each once.
    journals: Vec<String>,
}

impl Kept {
    fn refers_to(&mut self, journal: &str) {
        if !self.journals.iter().any(|j| j == journal) {
            self.journals.push(journal.to_string());
        }
    }
}

/// The second pass: each case's latest line, in case order, read again, added up, and written
/// to `w` (its story replaced by where it is) unless it is dropped; and handed to `page`, with
/// whether it is of an older run. A line that cannot be read
/// (strict) stops it with a [`ReportError`] inside the I/O error.
fn lines(
    gathered: &mut Gathered,
    w: &mut dyn std::io::Write,
    out: &Out,
    keep_cases: bool,
    page: &mut dyn FnMut(bool, &[u8]),
) -> std::io::Result<Kept> {
    let mut kept = Kept::default();
    let mut targets = Targets::default();
    let mut fixtures = Fixtures::default();
    let latest_run = gathered.latest_run();
    let (mut buf, mut part, mut line) = (Vec::new(), Vec::new(), Vec::new());
    for latest in std::mem::take(&mut gathered.latest).into_values() {
        let text = gathered.line(latest.place, &mut buf)?;
        let mut counted = match Counted::read(text, &mut part) {
            Ok(counted) if counted.is_entry() => counted,
            _ => {
                let path = gathered.files[latest.place.file as usize].path.clone();
                let text = String::from_utf8_lossy(text).into_owned();
                gathered
                    .bad(&path, latest.place.number, &text, false)
                    .map_err(std::io::Error::other)?;
                continue;
            }
        };
        let source = &gathered.files[latest.place.file as usize];
        let current_run = match out {
            Out::Fold(_) => latest_run,
            Out::Merge(_) => gathered.sources[source.source].and_then(|(_, run)| run),
        };
        // A result whose fixture or test target is gone: the case no longer exists.
        if matches!(out, Out::Fold(_))
            && (!fixtures.exists(Path::new(counted.fixture())) || targets.gone(&counted))
        {
            continue;
        }
        counted.older = latest.run != current_run;
        counted.finished_at = latest.finished_at;
        kept.aggregate.add(&counted);
        kept.older.push(counted.older);
        line.clear();
        match (&source.refer, counted.story) {
            (Some((journal, refer)), Some((from, to))) if to > from => {
                let at = latest.place.offset + from as u64;
                line.extend_from_slice(&text[..from]);
                line.extend_from_slice(refer);
                let _ = write!(line, "{at},\"length\":{}}}", to - from);
                line.extend_from_slice(&text[to..]);
                kept.refers_to(journal);
            }
            (_, story) => {
                line.extend_from_slice(text);
                if let Some(journal) =
                    story.and_then(|(from, to)| referred_journal(&text[from..to]))
                {
                    kept.refers_to(journal);
                }
            }
        }
        if keep_cases {
            if let Ok(mut entry) = serde_json::from_slice::<Entry>(&line) {
                entry.older = counted.older;
                kept.cases.push(entry);
            }
        }
        w.write_all(&line)?;
        w.write_all(b"\n")?;
        page(counted.older, &line);
    }
    Ok(kept)
}

/// The journal a line's story reference names, read by position (`None` for anything else).
fn referred_journal(story: &[u8]) -> Option<&str> {
    let rest = story.strip_prefix(b",\"story\":{\"journal\":\"")?;
    let end = memchr::memchr2(b'"', b'\\', rest)?;
    (rest[end] == b'"')
        .then(|| std::str::from_utf8(&rest[..end]).ok())
        .flatten()
}

/// The report's header: `report.json` as serde writes it with no cases.
fn header(report: &Report) -> Result<String, ReportError> {
    serde_json::to_string_pretty(report).map_err(ReportError::json)
}

/// Where a header's empty cases stand.
const EMPTY_CASES: &str = "\"cases\": []";

/// The time of the `report.json` at `path` when, with that time, `report`'s header is what the
/// file begins with.
fn unchanged_time(path: &Path, report: &Report) -> Option<DateTime<Utc>> {
    let length = header(report).ok()?.len() as u64 + 64;
    let mut old = Vec::new();
    let file = std::fs::File::open(path).ok()?;
    file.take(length).read_to_end(&mut old).ok()?;
    let old = String::from_utf8_lossy(&old);
    let time = old
        .split("\"generated_at\": \"")
        .nth(1)?
        .split('"')
        .next()?;
    let mut same = report.clone();
    same.generated_at = DateTime::parse_from_rfc3339(time).ok()?.to_utc();
    let header = header(&same).ok()?;
    old.starts_with(&header[..header.rfind(EMPTY_CASES)?])
        .then_some(same.generated_at)
}

/// What `report.json` holds around its cases, from its header (the report as serde writes it
/// with no cases): up to and with `"cases": [`, and from the `]` that closes them. The file (and
/// the page, [`page::Cases::write`]) is the first, each case after `\n    ` (`,\n    ` after the
/// first), `\n  ` when there is one, and the second.
fn around_cases(header: &str) -> Option<(String, String)> {
    let (before, after) = header.rsplit_once(EMPTY_CASES)?;
    Some((format!("{before}\"cases\": ["), format!("]{after}\n")))
}

/// Writes `report.json` ([`around_cases`]): in place of the header's empty cases the lines of
/// `results.jsonl` (`lines`), one a line, those of another run than the latest marked older
/// (`older`, one flag per line).
fn write_json(
    w: &mut dyn std::io::Write,
    (head, tail): (&str, &str),
    lines: &Path,
    older: &[bool],
) -> std::io::Result<()> {
    w.write_all(head.as_bytes())?;
    if !older.is_empty() {
        let mut reader = std::io::BufReader::with_capacity(256 * 1024, std::fs::File::open(lines)?);
        let mut line = Vec::new();
        for (i, older) in older.iter().enumerate() {
            line.clear();
            reader.read_until(b'\n', &mut line)?;
            let Some(body) = line.strip_suffix(b"\n").and_then(|l| l.strip_prefix(b"{")) else {
                return Err(std::io::Error::other(format!(
                    "{}: line {} is not the one just written",
                    lines.display(),
                    i + 1
                )));
            };
            w.write_all(if i == 0 { b"\n    " } else { b",\n    " })?;
            // The line as written; marked: `{"older":true,` and the rest of the object.
            w.write_all(if *older { b"{\"older\":true," } else { b"{" })?;
            w.write_all(body)?;
        }
        w.write_all(b"\n  ")?;
    }
    w.write_all(tail.as_bytes())
}

/// Writes `path` with what `write` writes, unless the file already holds exactly that; returns
/// whether it was written. A [`ReportError`] `write` stopped with is returned as it is.
fn put(
    path: &Path,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<bool, ReportError> {
    crate::files::replace_derived_if_changed(path, |w| write(w)).map_err(|e| {
        match e.get_ref().is_some_and(|inner| inner.is::<ReportError>()) {
            true => *e
                .into_inner()
                .and_then(|i| i.downcast().ok())
                .expect("checked"),
            false => ReportError::io("write", path)(e),
        }
    })
}

/// Whether fixtures exist, each folder listed once rather than a path looked up per case (a
/// `statx` each, 2 % of a 5,000-case run). Cases come folder by folder, a folder's subfolders
/// among its files: the last few folders' listings are kept.
#[derive(Default)]
struct Fixtures {
    /// The folders listed last, the latest last: each with the names in it that exist as
    /// [`Path::exists`] says (a link that leads nowhere does not); `None` when it could not be
    /// listed.
    folders: Vec<(
        PathBuf,
        Option<std::collections::HashSet<std::ffi::OsString>>,
    )>,
}

impl Fixtures {
    /// The folders whose listings are kept.
    const KEPT: usize = 8;

    /// Whether `path` exists, as [`Path::exists`] says.
    fn exists(&mut self, path: &Path) -> bool {
        let (Some(folder), Some(name)) = (path.parent(), path.file_name()) else {
            return path.exists();
        };
        let at = match self.folders.iter().rposition(|(f, _)| f == folder) {
            Some(at) => at,
            None => {
                if self.folders.len() == Self::KEPT {
                    self.folders.remove(0);
                }
                self.folders.push((folder.to_path_buf(), list(folder)));
                self.folders.len() - 1
            }
        };
        match &self.folders[at].1 {
            Some(names) => names.contains(name),
            None => path.exists(),
        }
    }
}

/// The names in `folder` that exist as [`Path::exists`] says; `None` when it cannot be listed.
fn list(folder: &Path) -> Option<std::collections::HashSet<std::ffi::OsString>> {
    let mut names = std::collections::HashSet::new();
    for entry in std::fs::read_dir(folder).ok()? {
        let entry = entry.ok()?;
        // The listing says what each entry is; only a link is looked up.
        if !entry.file_type().ok()?.is_symlink() || entry.path().exists() {
            names.insert(entry.file_name());
        }
    }
    Some(names)
}

/// Whether each test target seen in the entries still exists, asked once per target.
#[derive(Default)]
struct Targets {
    /// By crate root and binary.
    gone: std::collections::HashMap<(PathBuf, String), bool>,
    /// The last suite asked about (package, binary, suite folder, fixture folder) and its
    /// answer: cases come suite by suite, so most are answered without a path made.
    last: Option<(String, String, String, PathBuf, bool)>,
}

impl Targets {
    /// Whether `entry`'s test target is gone from its crate. A target whose crate cannot be
    /// read off the entry is taken to exist.
    fn gone(&mut self, entry: &Counted) -> bool {
        let folder = Path::new(entry.fixture()).parent().unwrap_or(Path::new(""));
        if let Some((package, binary, suite_dir, last_folder, gone)) = &self.last {
            if (
                package.as_str(),
                binary.as_str(),
                suite_dir.as_str(),
                last_folder.as_path(),
            ) == (&entry.package, &entry.binary, &entry.suite_dir, folder)
            {
                return *gone;
            }
        }
        let gone = match crate_root_of(entry.fixture(), &entry.suite_dir, &entry.case) {
            None => false,
            Some(root) => {
                let key = (root, entry.binary.to_string());
                match self.gone.get(&key) {
                    Some(gone) => *gone,
                    None => {
                        let gone = !target_exists(&key.0, &entry.package, &entry.binary);
                        self.gone.insert(key, gone);
                        gone
                    }
                }
            }
        };
        self.last = Some((
            entry.package.to_string(),
            entry.binary.to_string(),
            entry.suite_dir.to_string(),
            folder.to_path_buf(),
            gone,
        ));
        gone
    }
}

/// The crate root an entry's fixture path was made from (`<root>/<suite_dir>/<case>.json`).
fn crate_root_of(fixture: &str, suite_dir: &str, case: &str) -> Option<PathBuf> {
    let suite_dir = suite_dir.trim_start_matches("./");
    let tail = match suite_dir {
        "" | "." => PathBuf::from(format!("{case}.json")),
        dir => Path::new(dir).join(format!("{case}.json")),
    };
    let plain = tail
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)));
    let fixture = Path::new(fixture);
    if !plain || !fixture.ends_with(&tail) {
        return None;
    }
    let mut root = fixture.to_path_buf();
    for _ in tail.components() {
        root.pop();
    }
    Some(root)
}

/// Whether the crate at `root` still has a test target named `binary`: the lib or main binary
/// of `package`, `tests/<binary>.rs`, `tests/<binary>/main.rs`, another conventional target
/// file, or a target its manifest names.
pub(super) fn target_exists(root: &Path, package: &str, binary: &str) -> bool {
    let Ok(manifest) = std::fs::read_to_string(root.join("Cargo.toml")) else {
        return false;
    };
    if binary == "unknown" || binary == package.replace('-', "_") || binary == package {
        return true;
    }
    let files = [
        format!("tests/{binary}.rs"),
        format!("tests/{binary}/main.rs"),
        format!("src/bin/{binary}.rs"),
        format!("src/bin/{binary}/main.rs"),
        format!("examples/{binary}.rs"),
        format!("benches/{binary}.rs"),
    ];
    files.iter().any(|f| root.join(f).is_file())
        || manifest.lines().any(|line| {
            let line: String = line.chars().filter(|c| !c.is_whitespace()).collect();
            line == format!("name=\"{binary}\"") || line == format!("name='{binary}'")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Folders listed once say what `Path::exists` says, of files, folders, links that lead
    /// somewhere or nowhere, names not there, and folders that are not there, across more
    /// folders than are kept.
    #[test]
    fn fixtures_exist_as_path_exists_says() {
        let dir = tempfile::tempdir().unwrap();
        let mut paths = Vec::new();
        for i in 0..12 {
            let folder = dir.path().join(format!("f{i}"));
            std::fs::create_dir_all(folder.join("sub.json")).unwrap();
            std::fs::write(folder.join("a.json"), "{}").unwrap();
            #[cfg(unix)]
            {
                std::os::unix::fs::symlink(folder.join("a.json"), folder.join("link.json"))
                    .unwrap();
                std::os::unix::fs::symlink(folder.join("gone"), folder.join("dangling.json"))
                    .unwrap();
            }
            for name in ["a.json", "sub.json", "link.json", "dangling.json", "b.json"] {
                paths.push(folder.join(name));
            }
        }
        paths.push(dir.path().join("missing/a.json"));
        paths.push(PathBuf::from("/"));
        let mut fixtures = Fixtures::default();
        // Twice over, in order and then folders revisited out of order.
        let again: Vec<PathBuf> = paths.iter().rev().cloned().collect();
        for path in paths.iter().chain(&again) {
            assert_eq!(fixtures.exists(path), path.exists(), "{}", path.display());
        }
        assert!(fixtures.folders.len() <= Fixtures::KEPT);
    }
}
