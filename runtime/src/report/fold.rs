//! The fold: the journals of the runs ([`journal`](super::journal)) and the standing results
//! folded into `results.jsonl` (the latest result of every case that still exists), and from it
//! `report.json` and `report.html`. `report --merge` ([`merge`](super::merge)) folds other
//! machines' files the same way.
//!
//! A fold runs under an OS lock on `.fold.lock` (released by the kernel when its process ends).
//! It reads `results.jsonl` and every journal written to since the previous fold began (a
//! journal's modification time against that of `results.jsonl`, which the fold sets to the time
//! it began), keeps the latest line of each case, and writes the three files, each only when its
//! content changed: a fold run twice gives the same files. Each journal it has read whole gets,
//! under the journal's lock, a modification time before the next fold's window, so it is read
//! again only when a line is added to it (a run's last line is written just before its fold
//! begins). It then deletes the journals past the last
//! [`KEPT_RUNS`](super::journal::KEPT_RUNS) runs' that it has taken up.
//!
//! Memory does not grow with the size of the entries: the first pass keeps, per case, where its
//! latest line is (file, offset, length); the second reads those lines one at a time, adds up
//! what the report's numbers need ([`Counted`]) and copies each line as it is into
//! `results.jsonl`; `report.json` and `report.html` are then written from the files before them,
//! a buffer at a time.

use super::aggregate::{self, Aggregate, Counted};
use super::journal::{Unreadable, KEPT_RUNS, RUNS};
use super::{case_key, page, Entry, EntryKey, Report, ReportError, Targets, FORMAT};
use chrono::{DateTime, Utc};
use std::collections::BTreeMap;
use std::io::{BufRead as _, Read as _, Seek as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The standing result of every case, one entry line each, in case order.
pub(super) const RESULTS: &str = "results.jsonl";

/// The file whose OS lock keeps folds apart.
const LOCK: &str = ".fold.lock";

/// A journal modified up to this long before the previous fold began is read again: file times
/// are coarse on some file systems, and reading a journal twice changes nothing.
const SLACK: Duration = Duration::from_secs(2);

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
/// read last stands; files are read in a fixed order (`results.jsonl`, then the journals by
/// name; a merge's sources as given), so the result is the same every time.
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
    /// The time a file read whole is marked with (the fold's own journals only): see
    /// [`fold`].
    taken_up: Option<SystemTime>,
}

/// A file lines were read from, open for reading them again.
struct Source {
    path: PathBuf,
    file: std::io::BufReader<std::fs::File>,
    /// The reader's offset in the file; `u64::MAX` when unknown.
    at: u64,
    /// The source (machine) it belongs to.
    source: usize,
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
            taken_up: None,
        }
    }

    /// Takes up the lines of `path`, a file of `source` (numbered from 0, one per machine): one
    /// entry per line. The file is read under a shared OS lock, so no line is read half-written.
    pub(super) fn add(&mut self, path: &Path, source: usize) -> Result<(), ReportError> {
        let file = std::fs::File::open(path).map_err(ReportError::io("read", path))?;
        file.lock_shared().map_err(ReportError::io("lock", path))?;
        let added = self.add_locked(path, &file, source);
        if let (Ok(()), Some(time)) = (&added, self.taken_up) {
            // Under the lock, so no line is written between the read and the mark.
            if let Ok(marked) = std::fs::File::options().append(true).open(path) {
                let _ = marked.set_modified(time);
            }
        }
        let _ = file.unlock();
        added?;
        // Its lines are read again by place, after the lock is let go: only lines after them
        // are written meanwhile.
        self.files.push(Source {
            path: path.to_path_buf(),
            file: std::io::BufReader::with_capacity(64 * 1024, file),
            // Unknown (the first pass left the file at its end): the first read seeks.
            at: u64::MAX,
            source,
        });
        Ok(())
    }

    fn add_locked(
        &mut self,
        path: &Path,
        file: &std::fs::File,
        source: usize,
    ) -> Result<(), ReportError> {
        if self.sources.len() <= source {
            self.sources.resize(source + 1, None);
        }
        let index = u32::try_from(self.files.len()).expect("fewer than 2^32 files");
        let mut reader = std::io::BufReader::with_capacity(256 * 1024, file);
        let mut buf = Vec::new();
        let mut key = String::new();
        let (mut offset, mut number) = (0u64, 0u32);
        loop {
            buf.clear();
            let read = reader
                .read_until(b'\n', &mut buf)
                .map_err(ReportError::io("read", path))?;
            if read == 0 {
                return Ok(());
            }
            number += 1;
            let ended = buf.last() == Some(&b'\n');
            let body = if ended {
                &buf[..buf.len() - 1]
            } else {
                &buf[..]
            };
            let place = Place {
                file: index,
                offset,
                len: u32::try_from(body.len()).unwrap_or(u32::MAX),
                number,
            };
            offset += read as u64;
            if body.trim_ascii().is_empty() {
                continue;
            }
            // Only the key's fields are read here (and checked to be UTF-8); the rest is read
            // once the line stands.
            let Some(k) = EntryKey::of_line(body) else {
                self.bad(path, number, &String::from_utf8_lossy(body), !ended)?;
                continue;
            };
            let run = k.run.as_deref().map(|r| self.run_index(r));
            let latest = &mut self.sources[source];
            if latest.is_none_or(|(at, _)| k.finished_at > at) {
                *latest = Some((k.finished_at, run));
            }
            case_key(&mut key, &k.package, &k.binary, &k.suite_dir, &k.case);
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

    /// The run of the latest line of all: a case of any other run is older.
    fn latest_run(&self) -> Option<String> {
        let (_, run) = self.sources.iter().flatten().max_by_key(|(at, _)| *at)?;
        Some(self.runs[(*run)? as usize].clone())
    }

    /// Reads the line at `place` into `buf`.
    fn line<'b>(&mut self, place: Place, buf: &'b mut Vec<u8>) -> std::io::Result<&'b str> {
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
        std::str::from_utf8(buf).map_err(std::io::Error::other)
    }
}

/// What a fold keeps of a case whose fixture or test target is not on this machine.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Gone {
    /// Dropped: the case no longer exists (this machine's runs).
    Dropped,
    /// Kept: the files are another machine's (`report --merge`).
    Kept,
}

/// Which runs are current.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Current {
    /// The run of the latest line of all (one machine).
    LatestRun,
    /// Each source's own latest run (the partitions of one CI run, each with its run id).
    EachSourcesLatest,
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
    let began = SystemTime::now();
    let results_path = dir.join(RESULTS);
    // (Whether there are standing results, and since when.)
    let (standing, since) = match std::fs::metadata(&results_path) {
        Ok(meta) => (
            true,
            meta.modified()
                .ok()
                .map(|t| t.checked_sub(SLACK).unwrap_or(t)),
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (false, None),
        Err(e) => return Err(ReportError::io("read", &results_path)(e)),
    };
    let journals = journals(dir);
    // In name order, so that unreadable lines are listed in the same order every time.
    let mut unread: Vec<&PathBuf> = journals
        .iter()
        .filter(|(_, time)| since.is_none_or(|since| *time >= since))
        .map(|(path, _)| path)
        .collect();
    unread.sort();
    let mut files: Vec<(&Path, usize)> = Vec::with_capacity(unread.len() + 1);
    if standing {
        files.push((&results_path, 0));
    }
    files.extend(unread.iter().map(|path| (path.as_path(), 0)));
    let mut gathered = Gathered::new(Lines::Listed);
    // Each file read whole is marked as older than the window of the next fold, so that fold
    // does not read it again unless a line is added to it: a run's last line is written just
    // before its fold begins, within any slack for coarse file times.
    gathered.taken_up = began.checked_sub(SLACK + Duration::from_secs(1));
    // One file after another: read at once, a thread each, the map of a second file's lines
    // stood beside the first's (measured: peak memory 47 -> 79 MB at 100,000 cases).
    for &(path, source) in &files {
        match gathered.add(path, source) {
            Ok(()) => {}
            // Gone since it was listed (another fold's journal).
            Err(e) if e.kind() == Some(std::io::ErrorKind::NotFound) => {}
            Err(e) if *path == results_path => return Err(e),
            // Unreadable: named, not fatal.
            Err(e) => gathered.unreadable_file(&e),
        }
    }
    let report = write(gathered, &Out::Fold(&results_path), keep_cases)?;
    // The next fold reads the journals written to since this one began.
    if let Ok(file) = std::fs::File::options().append(true).open(&results_path) {
        let _ = file.set_modified(began);
    }
    for (path, time) in journals.iter().skip(KEPT_RUNS) {
        if *time < began {
            let _ = std::fs::remove_file(path);
        }
    }
    drop(lock);
    Ok(report)
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The journals in `dir/runs`, the most recently written first.
fn journals(dir: &Path) -> Vec<(PathBuf, SystemTime)> {
    let Ok(read) = std::fs::read_dir(dir.join(RUNS)) else {
        return Vec::new();
    };
    let mut journals: Vec<(PathBuf, SystemTime)> = read
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .filter_map(|p| Some((modified(&p)?, p)))
        .map(|(t, p)| (p, t))
        .collect();
    journals.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    journals
}

/// What a fold writes, and where.
pub(super) enum Out<'a> {
    /// This machine's fold: `results.jsonl` at this path, and the report beside it; cases whose
    /// fixture or target is gone are dropped; the latest run is current.
    Fold(&'a Path),
    /// A merge: `report.json` and `report.html` in this folder (no `results.jsonl`: the cases
    /// are other machines'); every case is kept; each source's latest run is current.
    Merge(&'a Path),
}

impl Out<'_> {
    fn dir(&self) -> &Path {
        match self {
            Out::Fold(results) => results.parent().unwrap_or(Path::new(".")),
            Out::Merge(dir) => dir,
        }
    }
}

/// Writes the report of the gathered lines, each file only when its content changed, and
/// returns it (with its cases when `keep_cases`).
pub(super) fn write(
    mut gathered: Gathered,
    out: &Out,
    keep_cases: bool,
) -> Result<Report, ReportError> {
    let (gone, current) = match out {
        Out::Fold(_) => (Gone::Dropped, Current::LatestRun),
        Out::Merge(_) => (Gone::Kept, Current::EachSourcesLatest),
    };
    let dir = out.dir();
    std::fs::create_dir_all(dir).map_err(ReportError::io("create", dir))?;
    let latest_run = gathered.latest_run();
    // The kept lines, in case order, into `results.jsonl` (a merge's go to a file of its own,
    // removed at the end).
    let lines_path = match out {
        Out::Fold(results) => results.to_path_buf(),
        Out::Merge(dir) => dir.join(format!(".merged-{}.jsonl", std::process::id())),
    };
    let mut kept = Kept::default();
    let mut refused = None;
    let results_changed = put(&lines_path, |w| {
        match lines(&mut gathered, w, gone, current, keep_cases) {
            Ok(lines) => kept = lines,
            Err(Stop::Line(e)) => {
                refused = Some(e);
                return Err(std::io::Error::other("a line was refused"));
            }
            Err(Stop::Io(e)) => return Err(e),
        }
        Ok(())
    });
    let result = (|| {
        if let Some(e) = refused {
            return Err(e);
        }
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
        let mut header = header(&report)?;
        if !results_changed {
            // Nothing changed but the time: the report keeps the time it had.
            if let Some(time) = unchanged_time(&report_path, &header) {
                report.generated_at = time;
                header = self::header(&report)?;
            }
        }
        // Both from `results.jsonl`, at once; the page with the stories that fit it.
        let text = ResultsText {
            header: &header,
            lines: &lines_path,
            older: &kept.older,
            cut: &[],
        };
        let cut = page_cuts(&kept.stories, PAGE_STORIES);
        let html_path = dir.join("report.html");
        let (json, html) = std::thread::scope(|scope| {
            let html = scope.spawn(|| {
                let mut page_text = ResultsText { cut: &cut, ..text };
                put(&html_path, |w| page::write(w, &mut page_text, None))
            });
            let json = put(&report_path, |w| text.write(w, usize::MAX));
            (json, html.join())
        });
        json?;
        html.unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
        report.cases = std::mem::take(&mut kept.cases);
        Ok(report)
    })();
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
    /// Per kept line, in order: whether the case passed, and where its story is
    /// ([`Counted::story`]).
    stories: Vec<(bool, Option<(usize, usize)>)>,
    /// The entries, when asked for.
    cases: Vec<Entry>,
}

/// Why the second pass stopped.
enum Stop {
    /// A line that cannot be read (strict).
    Line(ReportError),
    Io(std::io::Error),
}

impl From<std::io::Error> for Stop {
    fn from(e: std::io::Error) -> Stop {
        Stop::Io(e)
    }
}

/// The second pass: each case's latest line, in case order, read again and added up, and
/// written to `w` unless it is dropped.
fn lines(
    gathered: &mut Gathered,
    w: &mut dyn std::io::Write,
    gone: Gone,
    current: Current,
    keep_cases: bool,
) -> Result<Kept, Stop> {
    let mut kept = Kept::default();
    let mut targets = Targets::default();
    let latest_run = gathered
        .sources
        .iter()
        .flatten()
        .max_by_key(|(at, _)| *at)
        .and_then(|(_, run)| *run);
    let (mut buf, mut part) = (Vec::new(), Vec::new());
    for latest in std::mem::take(&mut gathered.latest).into_values() {
        let text = gathered.line(latest.place, &mut buf)?;
        let parsed = Counted::read(text.as_bytes(), &mut part).and_then(|counted| {
            let entry = match keep_cases {
                true => Some(serde_json::from_str::<Entry>(text)?),
                false => None,
            };
            Ok((counted, entry))
        });
        let (mut counted, entry) = match parsed {
            Ok(parsed) => parsed,
            Err(_) => {
                let path = gathered.files[latest.place.file as usize].path.clone();
                let text = String::from_utf8_lossy(&buf).into_owned();
                gathered
                    .bad(&path, latest.place.number, &text, false)
                    .map_err(Stop::Line)?;
                continue;
            }
        };
        let current_run = match current {
            Current::LatestRun => latest_run,
            Current::EachSourcesLatest => {
                let source = gathered.files[latest.place.file as usize].source;
                gathered.sources[source].and_then(|(_, run)| run)
            }
        };
        // A result whose fixture or test target is gone: the case no longer exists.
        if gone == Gone::Dropped
            && (!Path::new(&*counted.fixture).exists() || targets.gone(&counted))
        {
            continue;
        }
        counted.older = latest.run != current_run;
        counted.finished_at = latest.finished_at;
        kept.aggregate.add(&counted);
        kept.older.push(counted.older);
        kept.stories.push((counted.passed, counted.story));
        if let Some(mut entry) = entry {
            entry.older = counted.older;
            kept.cases.push(entry);
        }
        w.write_all(&buf)?;
        w.write_all(b"\n")?;
    }
    Ok(kept)
}

/// The report's header: `report.json` as serde writes it with no cases.
fn header(report: &Report) -> Result<String, ReportError> {
    serde_json::to_string_pretty(report).map_err(ReportError::json)
}

/// Where a header's empty cases stand.
const EMPTY_CASES: &str = "\"cases\": []";

/// The time of the `report.json` at `path` when it has the same header as `header` but for its
/// `generated_at`.
fn unchanged_time(path: &Path, header: &str) -> Option<DateTime<Utc>> {
    let before_cases = &header[..header.rfind(EMPTY_CASES)?];
    let mut old = vec![0u8; before_cases.len() + 64];
    let mut file = std::fs::File::open(path).ok()?;
    let mut filled = 0;
    while filled < old.len() {
        match file.read(&mut old[filled..]).ok()? {
            0 => break,
            n => filled += n,
        }
    }
    let old = String::from_utf8_lossy(&old[..filled]);
    let (new_before, new_after) = without_generated_at(before_cases);
    let (old_before, old_after) = without_generated_at(&old);
    if old_before != new_before || !old_after.starts_with(new_after) {
        return None;
    }
    let time = old[old_before.len()..].split('"').next()?;
    Some(DateTime::parse_from_rfc3339(time).ok()?.to_utc())
}

/// How many bytes of stories (input, output, calls) `report.html` embeds at most: failing
/// cases' first, then passing ones', in case order ([`aggregate::page_stories`]). Every case has
/// its row, verdicts and diffs; a case left out says where its story is. A browser holds the
/// embedded JSON as one string: at 100,000 cases of 5 KB stories the whole (546 MB) was past
/// what Chromium opens, and the page came up empty.
pub(super) const PAGE_STORIES: usize = 128 << 20;

/// Per line: the story span to cut from the page's copy, `None` to embed the line whole.
pub(super) fn page_cuts(
    stories: &[(bool, Option<(usize, usize)>)],
    budget: usize,
) -> Vec<Option<(usize, usize)>> {
    let sizes: Vec<(bool, usize)> = stories
        .iter()
        .map(|&(passed, span)| (passed, span.map_or(0, |(from, to)| to - from)))
        .collect();
    aggregate::page_stories(&sizes, budget)
        .into_iter()
        .zip(stories)
        .map(|(embedded, &(_, span))| span.filter(|_| !embedded))
        .collect()
}

/// The report's JSON as `report.json` holds it: the header as serde writes it, and in place of
/// its empty cases the lines of `results.jsonl` (`lines`), those of another run than the latest
/// marked older (`older`, one flag per line), those with a span in `cut` (the page's) without
/// their story.
#[derive(Clone, Copy)]
struct ResultsText<'a> {
    header: &'a str,
    lines: &'a Path,
    older: &'a [bool],
    cut: &'a [Option<(usize, usize)>],
}

impl ResultsText<'_> {
    /// Writes the report with its first `cases` cases.
    fn write(&self, w: &mut dyn std::io::Write, cases: usize) -> std::io::Result<()> {
        let at = self
            .header
            .rfind(EMPTY_CASES)
            .ok_or_else(|| std::io::Error::other("the report header has no cases key"))?;
        w.write_all(&self.header.as_bytes()[..at])?;
        let older = &self.older[..cases.min(self.older.len())];
        if older.is_empty() {
            w.write_all(EMPTY_CASES.as_bytes())?;
        } else {
            w.write_all(b"\"cases\": [\n    ")?;
            let file = std::fs::File::open(self.lines)?;
            let mut reader = std::io::BufReader::with_capacity(256 * 1024, file);
            let (mut line, mut short) = (Vec::new(), Vec::new());
            for (i, older) in older.iter().enumerate() {
                line.clear();
                reader.read_until(b'\n', &mut line)?;
                let mut whole = line.strip_suffix(b"\n");
                if let (Some(text), Some(Some(span))) = (whole, self.cut.get(i)) {
                    aggregate::without_story(text, *span, &mut short);
                    whole = Some(&short);
                }
                let Some(body) = whole.and_then(|l| l.strip_prefix(b"{")) else {
                    return Err(std::io::Error::other(format!(
                        "{}: line {} is not the one just written",
                        self.lines.display(),
                        i + 1
                    )));
                };
                if i > 0 {
                    w.write_all(b",\n    ")?;
                }
                // The line as written; marked: `{"older":true,` and the rest of the object.
                w.write_all(if *older { b"{\"older\":true," } else { b"{" })?;
                w.write_all(body)?;
            }
            w.write_all(b"\n  ]")?;
        }
        w.write_all(&self.header.as_bytes()[at + EMPTY_CASES.len()..])?;
        w.write_all(b"\n")
    }
}

impl page::ReportText for ResultsText<'_> {
    fn is_large(&self) -> bool {
        self.older.len() > page::FIRST_PAGE
    }

    fn write_first(&mut self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        self.write(out, page::FIRST_PAGE)
    }

    fn write_whole(&mut self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        self.write(out, usize::MAX)
    }
}

/// Writes `path` with what `write` writes, unless the file already holds exactly that; returns
/// whether it was written.
fn put(
    path: &Path,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<bool, ReportError> {
    crate::files::replace_derived_if_changed(path, |w| write(w))
        .map_err(ReportError::io("write", path))
}

/// `text` around the value of its `generated_at`, which a fold that changed nothing leaves.
fn without_generated_at(text: &str) -> (&str, &str) {
    const KEY: &str = "\"generated_at\": \"";
    let Some(at) = text.find(KEY) else {
        return (text, "");
    };
    let value = at + KEY.len();
    let end = text[value..].find('"').map_or(text.len(), |e| value + e);
    (&text[..value], &text[end..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_at_is_left_out_of_the_comparison() {
        let a = "{\n  \"format\": 1,\n  \"generated_at\": \"2026-01-01T00:00:00Z\",\n  \"x\": 1\n}";
        let b = a.replace("2026-01-01", "2027-02-02");
        assert_eq!(without_generated_at(a), without_generated_at(&b));
        assert_ne!(
            without_generated_at(a),
            without_generated_at(&b.replace("1\n}", "2\n}"))
        );
    }

    /// The page's copy of the report: with a budget for one story, the failing case keeps its
    /// story and the passing ones are embedded without theirs, marked; `report.json`'s copy
    /// (no cut) keeps every story.
    #[test]
    fn the_page_embeds_the_stories_that_fit_failing_cases_first() {
        let dir = tempfile::tempdir().unwrap();
        let lines_path = dir.path().join("results.jsonl");
        let line = |case: &str, passed: bool| {
            let entry: Entry = serde_json::from_value(serde_json::json!({
                "package": "demo", "binary": "evals", "suite": "s", "suite_dir": "fixtures/s",
                "case": case, "test": format!("s::{case}"), "fixture": "/m/fixtures/s/a.json",
                "passed": passed, "score": 1.0, "recording": "replayed", "evaluators": [],
                "input": {"message": format!("input of {case}")},
                "output": {"reply": "x".repeat(100)},
                "recording_path": format!("fixtures/s/recordings/{case}.json"), "run": "r1",
                "finished_at": "2026-01-01T00:00:00Z",
            }))
            .unwrap();
            serde_json::to_string(&entry).unwrap()
        };
        let lines = [line("a", true), line("b", false), line("c", true)];
        std::fs::write(&lines_path, lines.join("\n") + "\n").unwrap();
        let mut buf = Vec::new();
        let stories: Vec<_> = lines
            .iter()
            .map(|l| {
                let counted = Counted::read(l.as_bytes(), &mut buf).unwrap();
                (counted.passed, counted.story)
            })
            .collect();
        let one_story = stories[1].1.map(|(from, to)| to - from).unwrap();
        let report = Report {
            format: FORMAT,
            generated_at: Utc::now(),
            latest_run: None,
            totals: Default::default(),
            suites: Vec::new(),
            unreadable_entries: Vec::new(),
            cases: Vec::new(),
        };
        let header = header(&report).unwrap();
        let older = [false; 3];
        let cut = page_cuts(&stories, one_story);
        let text = ResultsText {
            header: &header,
            lines: &lines_path,
            older: &older,
            cut: &[],
        };
        let read = |text: ResultsText| {
            let mut out = Vec::new();
            text.write(&mut out, usize::MAX).unwrap();
            serde_json::from_slice::<Report>(&out).unwrap().cases
        };
        let page = read(ResultsText { cut: &cut, ..text });
        let left_out: Vec<bool> = page.iter().map(|c| c.story_left_out).collect();
        assert_eq!(left_out, [true, false, true]);
        assert_eq!(
            page[1].input,
            Some(serde_json::json!({"message": "input of b"}))
        );
        assert_eq!(
            (page[0].input.is_none(), page[0].output.is_none()),
            (true, true)
        );
        assert_eq!(
            page[2].recording_path.as_deref(),
            Some("fixtures/s/recordings/c.json")
        );
        let whole = read(text);
        assert!(whole
            .iter()
            .all(|c| !c.story_left_out && c.output.is_some()));
    }
}
