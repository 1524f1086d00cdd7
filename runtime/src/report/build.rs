//! Building `report.json` and `report.html` from the entry files in two streaming passes, so
//! memory holds one case's entry at a time plus an index of the cases (key and place in a file),
//! never the whole suite's entries or pages.
//!
//! 1. Index: every entry line's key (package, binary, suite folder, case) and time are read
//!    without building the entry; the latest line of each case is kept as its place (file,
//!    offset, length). Small files are read whole and kept for the second pass; large ones
//!    (a whole run's entry file, a merged file) are read again at the kept offsets.
//! 2. Cases, in key order: each latest line is parsed once to aggregate it, to copy it into
//!    the JSON's `cases`, to render its row (and its failure section) and to write it into its
//!    folder's new merged file. The pieces go to temp files beside the report; the header
//!    (totals, suites), known only at the end, is written first when the pieces are joined.

use super::aggregate::{add_totals, Aggregate};
use super::prepared::{self, Prepared, Ready};
use super::section;
use super::*;
use std::collections::HashMap;
use std::io::{BufRead, BufWriter, Read, Write};

/// Files up to this size are read whole in the first pass and kept for the second.
const KEPT_FILE: u64 = 256 * 1024;

/// The unreadable lines of one file listed one by one in the report; the rest are counted.
const LISTED_PER_FILE: usize = 20;

/// The finishing process's own entry file.
pub(super) struct Own {
    /// Its entry file.
    pub path: PathBuf,
    /// How many lines this process wrote to it.
    pub count: usize,
    /// Whether every line reached the file.
    pub whole: bool,
    /// Its part of the report, made as its cases ran (a whole run).
    pub prepared: Option<Prepared>,
}

/// Where a case's latest line is.
enum Text {
    /// In a file: its index, offset and length.
    At { file: u32, offset: u64, len: u32 },
    /// Rewritten as a line (a single-entry `.json` file).
    Owned(Box<str>),
}

/// A case's latest line.
struct Latest {
    text: Text,
    /// The entry file it came from.
    file: u32,
    finished_at: DateTime<Utc>,
    run: Option<Box<str>>,
}

/// One entry file found below `entries/`.
struct EntryFile {
    path: PathBuf,
    folder: usize,
    /// This process's own file.
    own: bool,
    /// To be removed once its latest lines are in its folder's merged file.
    compact: bool,
    /// The whole text of a small file, kept from the first pass.
    kept: Option<String>,
    handle: Option<std::fs::File>,
    /// Its lines that could not be read.
    bad: usize,
}

/// The index of the first pass.
struct Index {
    files: Vec<EntryFile>,
    folders: Vec<PathBuf>,
    latest: BTreeMap<String, Latest>,
    unreadable: Vec<String>,
    /// Lines of the own file, as read (more than its cases if a case ran twice).
    own_lines: usize,
    /// The own lines' keys, as [`section::key_set`] sums them.
    own_keys: u64,
    /// The time of the own file's earliest line.
    own_earliest: Option<DateTime<Utc>>,
    /// Folders taken from their kept sections, not read.
    sections: Vec<section::Section>,
    /// The own file, not read: the process's prepared part stands for its lines.
    own_unread: Option<u32>,
    /// The prepared part's latest line: its time and run.
    prepared_latest: Option<(DateTime<Utc>, Option<String>)>,
}

impl Index {
    /// Indexes the entry files below `dir/entries`; with `sections`, a folder that holds only
    /// its merged file and has a kept section that still matches is taken as that section
    /// instead (in `sections`, not read).
    /// With `prepared` (the own part's cases, key sum and earliest time) and no other writer's
    /// file in the own folder, the own file is not read ([`Index::own_unread`]) unless its
    /// folder's merged file holds cases the own file does not replace.
    fn build(
        dir: &Path,
        own: Option<&Own>,
        prepared: Option<(usize, u64, Option<DateTime<Utc>>)>,
        sections: bool,
    ) -> Index {
        let entries_dir = dir.join("entries");
        let mut index = Index {
            files: Vec::new(),
            folders: Vec::new(),
            latest: BTreeMap::new(),
            unreadable: Vec::new(),
            own_lines: 0,
            own_keys: 0,
            own_earliest: None,
            sections: Vec::new(),
            own_unread: None,
            prepared_latest: None,
        };
        let own_path = own.map(|o| o.path.as_path());
        if !entries_dir.is_dir() {
            return index;
        }
        let mut paths: Vec<PathBuf> = walkdir::WalkDir::new(&entries_dir)
            .sort_by_file_name()
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file())
            .map(|e| e.into_path())
            .filter(|p| {
                let name = p
                    .file_name()
                    .map(|n| n.to_string_lossy())
                    .unwrap_or_default();
                !name.starts_with('.') && (name.ends_with(".jsonl") || name.ends_with(".json"))
            })
            .collect();
        // The own file last (before its folder's merged file, below): its lines are the newest.
        if let Some(own) = own_path {
            paths.retain(|p| p != own);
            if own.is_file() {
                paths.push(own.to_path_buf());
            }
        }
        // How many entry files each folder holds: one that holds only its merged file is
        // unchanged since the last rebuild.
        let mut per_folder: HashMap<&Path, usize> = HashMap::new();
        for path in &paths {
            *per_folder
                .entry(path.parent().unwrap_or(&entries_dir))
                .or_default() += 1;
        }
        let alone: Vec<bool> = paths
            .iter()
            .map(|p| {
                sections
                    && p.file_name().is_some_and(|n| n == MERGED)
                    && per_folder.get(p.parent().unwrap_or(&entries_dir)) == Some(&1)
            })
            .collect();
        drop(per_folder);
        // The own folder's merged file waits for the own file: when the own file is whole and
        // holds the same cases, every line of the merged file is replaced, and it is not read.
        let own_merged = own_path.and_then(Path::parent).map(|f| f.join(MERGED));
        let own_folder = own_path.and_then(Path::parent);
        let prepared = prepared.filter(|_| {
            !paths.iter().any(|p| {
                p.parent() == own_folder
                    && Some(p.as_path()) != own_path
                    && Some(p) != own_merged.as_ref()
            })
        });
        let mut waiting = None;
        for (path, alone) in paths.into_iter().zip(alone) {
            if alone {
                if let Some(section) = path.parent().and_then(section::Section::load) {
                    index.sections.push(section);
                    continue;
                }
            }
            if Some(&path) == own_merged.as_ref() {
                waiting = Some(path);
                continue;
            }
            match prepared {
                Some((cases, keys, earliest)) if Some(path.as_path()) == own_path => {
                    index.own_unread = Some(index.push_file(path, &entries_dir, own_path));
                    (index.own_lines, index.own_keys, index.own_earliest) = (cases, keys, earliest);
                }
                _ => index.add_file(path, &entries_dir, own_path),
            }
        }
        if let Some(merged) = waiting {
            let replaced = own.is_some_and(|own| {
                // Its lines must all be older than the own file's: a whole run of the same
                // target that ended meanwhile may have merged newer ones.
                let set = merged.parent().and_then(section::Section::key_set);
                own.whole
                    && own.count == index.own_lines
                    && set.is_some_and(|(rows, keys, latest)| {
                        (rows, keys) == (index.own_lines, index.own_keys)
                            && latest < index.own_earliest
                    })
            });
            if !replaced {
                index.read_own();
                index.add_file(merged, &entries_dir, own_path);
            }
        }
        index
    }

    /// Indexes one entry file.
    fn add_file(&mut self, path: PathBuf, entries_dir: &Path, own_path: Option<&Path>) {
        let file = self.push_file(path, entries_dir, own_path);
        self.read_file(file);
    }

    /// Reads the own file after all, if it was left unread for the prepared part.
    fn read_own(&mut self) {
        if let Some(file) = self.own_unread.take() {
            (self.own_lines, self.own_keys, self.own_earliest) = (0, 0, None);
            self.prepared_latest = None;
            self.read_file(file);
        }
    }

    /// Notes one entry file, not read yet; its index.
    fn push_file(&mut self, path: PathBuf, entries_dir: &Path, own_path: Option<&Path>) -> u32 {
        let folder_path = path.parent().unwrap_or(entries_dir).to_path_buf();
        let folder = match self.folders.iter().position(|f| *f == folder_path) {
            Some(i) => i,
            None => {
                self.folders.push(folder_path);
                self.folders.len() - 1
            }
        };
        let own = Some(path.as_path()) == own_path;
        let single = path.extension().and_then(|e| e.to_str()) == Some("json");
        let merged = path.file_name().is_some_and(|n| n == MERGED);
        // Asked before reading: a writer found finished has written its last line.
        let finished_writer = !single && !merged && (own || !writer_alive(&path));
        let file = self.files.len() as u32;
        self.files.push(EntryFile {
            path,
            folder,
            own,
            compact: finished_writer,
            kept: None,
            handle: None,
            bad: 0,
        });
        file
    }

    /// Reads the keys of a noted file.
    fn read_file(&mut self, file: u32) {
        let path = &self.files[file as usize].path;
        let single = path.extension().and_then(|e| e.to_str()) == Some("json");
        self.read(file, single);
        let entry = &mut self.files[file as usize];
        let bad = entry.bad;
        // A single-entry `.json` file (written by hand, or by an older version) is folded
        // into the merged file like a finished writer's; one that does not parse is kept.
        if single && bad == 0 {
            entry.compact = true;
        }
    }

    /// Reads the keys of one file into `latest`, noting the lines that cannot be read.
    fn read(&mut self, file: u32, single: bool) {
        let entry = &mut self.files[file as usize];
        let handle = match std::fs::File::open(&entry.path) {
            Ok(handle) => handle,
            Err(e) => return self.bad(file, None, &e.to_string()),
        };
        let size = handle.metadata().map(|m| m.len()).unwrap_or(u64::MAX);
        if single || size <= KEPT_FILE {
            let mut text = String::new();
            if let Err(e) = std::io::BufReader::new(handle).read_to_string(&mut text) {
                return self.bad(file, None, &e.to_string());
            }
            if single {
                match serde_json::from_str::<Entry>(&text)
                    .and_then(|entry| serde_json::to_string(&entry))
                {
                    Ok(line) => self.add_line(file, &line, 0, 1, Some(&line)),
                    Err(e) => {
                        let place = (e.line(), e.column());
                        self.bad(file, Some(place), &why(&e));
                    }
                }
                return;
            }
            let mut offset = 0;
            for (number, line) in text.split_inclusive('\n').enumerate() {
                let at = offset;
                offset += line.len();
                let line = line.trim_end_matches(['\n', '\r']);
                if line.trim().is_empty() {
                    continue;
                }
                if self.files[file as usize].own {
                    self.own_lines += 1;
                }
                self.add_line(file, line, at as u64, number + 1, None);
            }
            self.files[file as usize].kept = Some(text);
            return;
        }
        let mut reader = std::io::BufReader::with_capacity(256 * 1024, handle);
        let mut buffer = String::new();
        let mut offset = 0u64;
        let mut number = 0;
        loop {
            buffer.clear();
            number += 1;
            let read = match reader.read_line(&mut buffer) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) => {
                    self.bad(file, Some((number, 1)), &e.to_string());
                    break;
                }
            };
            let at = offset;
            offset += read as u64;
            let line = buffer.trim_end_matches(['\n', '\r']);
            if line.trim().is_empty() {
                continue;
            }
            if self.files[file as usize].own {
                self.own_lines += 1;
            }
            self.add_line(file, line, at, number, None);
        }
        self.files[file as usize].handle = Some(reader.into_inner());
    }

    /// Indexes one line, line `number` found at `offset` of `file` (or `owned`, a rewritten
    /// line); a line without a readable key is noted as unreadable.
    fn add_line(&mut self, file: u32, line: &str, offset: u64, number: usize, owned: Option<&str>) {
        let Some(key) = EntryKey::of_line(line) else {
            // Rare: the full parse says what is wrong and where.
            let (column, why) = match serde_json::from_str::<Entry>(line) {
                Err(e) => (e.column(), self::why(&e)),
                Ok(_) => (1, "no entry key".to_string()),
            };
            return self.bad(file, Some((number, column)), &why);
        };
        let mut lookup = String::new();
        case_key(
            &mut lookup,
            &key.package,
            &key.binary,
            &key.suite_dir,
            &key.case,
        );
        if self.files[file as usize].own {
            self.own_keys = self.own_keys.wrapping_add(section::key_hash(&lookup));
            if self.own_earliest.is_none_or(|t| key.finished_at < t) {
                self.own_earliest = Some(key.finished_at);
            }
        }
        let text = match owned {
            Some(owned) => Text::Owned(owned.into()),
            None => Text::At {
                file,
                offset,
                len: line.len() as u32,
            },
        };
        let latest = Latest {
            text,
            file,
            finished_at: key.finished_at,
            run: key.run.map(|r| r.into()),
        };
        match self.latest.get_mut(lookup.as_str()) {
            // A tie in time goes to the own file's line (read before its folder's merged file),
            // else to the line read last.
            Some(old)
                if old.finished_at > key.finished_at
                    || (old.finished_at == key.finished_at
                        && self.files[old.file as usize].own) => {}
            Some(old) => *old = latest,
            None => {
                self.latest.insert(lookup, latest);
            }
        }
    }

    /// Notes that `file` (at `place`, line and column, when known) cannot be read.
    fn bad(&mut self, file: u32, place: Option<(usize, usize)>, why: &str) {
        unreadable_line(
            &mut self.unreadable,
            &mut self.files[file as usize],
            place,
            why,
        );
    }

    /// The run of the most recent line, kept sections' lines included.
    fn latest_run(&self) -> Option<String> {
        let lines = self
            .latest
            .values()
            .map(|l| (l.finished_at, l.run.as_deref()));
        let sections = self.sections.iter().filter_map(|s| {
            let (time, run) = s.meta.latest.as_ref()?;
            Some((*time, run.as_deref()))
        });
        let prepared = self
            .prepared_latest
            .as_ref()
            .map(|(time, run)| (*time, run.as_deref()));
        lines
            .chain(sections)
            .chain(prepared)
            .max_by_key(|(time, _)| *time)
            .and_then(|(_, run)| run.map(str::to_string))
    }

    /// The text of a latest line; `window` holds it when it is read from a file again.
    fn text<'a>(
        files: &'a mut [EntryFile],
        latest: &'a Latest,
        window: &'a mut Window,
    ) -> Option<&'a str> {
        match &latest.text {
            Text::Owned(line) => Some(line),
            Text::At { file, offset, len } => {
                let entry_file = &mut files[*file as usize];
                let (start, end) = (*offset as usize, *offset as usize + *len as usize);
                if let Some(kept) = &entry_file.kept {
                    return kept.get(start..end);
                }
                let handle = entry_file.handle.as_mut()?;
                window.line(handle, *file, *offset, *len as usize)
            }
        }
    }
}

/// The part of a large file read last. Lines are asked for in key order, which is about the
/// order a run wrote them in (two test threads finishing cases in turn), so most lines are found
/// in the part read for an earlier one: a few large reads instead of one per line. A read near
/// the last one (following on, or a little back or ahead) reads twice as much, up to
/// [`WINDOW`], from an eighth of that before the line, so the lines a few places back are found
/// in it too; one elsewhere starts small again, so lines asked in another order cost a small
/// read each.
#[derive(Default)]
struct Window {
    file: u32,
    at: u64,
    bytes: Vec<u8>,
    /// How many bytes of `bytes` hold the file's.
    filled: usize,
}

/// The most a [`Window`] reads at once, and the least.
const WINDOW: usize = 1 << 20;
const SMALL_WINDOW: usize = 16 * 1024;

impl Window {
    /// The `len` bytes at `offset` of `file` (`handle`), as text; `None` when the file no
    /// longer holds them.
    fn line(
        &mut self,
        handle: &mut std::fs::File,
        file: u32,
        offset: u64,
        len: usize,
    ) -> Option<&str> {
        std::str::from_utf8(self.piece(handle, file, offset, len)?).ok()
    }

    /// The `len` bytes at `offset` of `file` (`handle`); `None` when the file no longer holds
    /// them.
    fn piece(
        &mut self,
        handle: &mut std::fs::File,
        file: u32,
        offset: u64,
        len: usize,
    ) -> Option<&[u8]> {
        let end = offset.checked_add(len as u64)?;
        let window_end = self.at + self.filled as u64;
        let inside = self.file == file && offset >= self.at && end <= window_end;
        if !inside {
            let slack = WINDOW as u64 / 8;
            let near = self.file == file
                && self.filled > 0
                && offset.saturating_add(slack) >= self.at
                && offset <= window_end.saturating_add(slack);
            let size = if near {
                (self.filled * 2).clamp(SMALL_WINDOW, WINDOW)
            } else {
                SMALL_WINDOW
            };
            let behind = if near { (size / 8) as u64 } else { 0 };
            let start = offset.saturating_sub(behind);
            let size = size.max(len + (offset - start) as usize);
            if self.bytes.len() < size {
                self.bytes.resize(size, 0);
            }
            let read = read_some_at(handle, start, &mut self.bytes[..size]);
            (self.file, self.at, self.filled) = (file, start, read.unwrap_or(0));
            if end > self.at + self.filled as u64 {
                return None;
            }
        }
        let from = (offset - self.at) as usize;
        Some(&self.bytes[from..from + len])
    }
}

/// Reads at `offset` until `buffer` is full or the file ends; how many bytes were read.
fn read_some_at(
    file: &mut std::fs::File,
    offset: u64,
    buffer: &mut [u8],
) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        #[cfg(unix)]
        let read = std::os::unix::fs::FileExt::read_at(
            file,
            &mut buffer[filled..],
            offset + filled as u64,
        );
        #[cfg(not(unix))]
        let read = {
            use std::io::Seek;
            file.seek(std::io::SeekFrom::Start(offset + filled as u64))
                .and_then(|_| file.read(&mut buffer[filled..]))
        };
        match read {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Lists one unreadable line of `file` (`place` is its line and column), or counts it once
/// [`LISTED_PER_FILE`] are listed.
fn unreadable_line(
    unreadable: &mut Vec<String>,
    file: &mut EntryFile,
    place: Option<(usize, usize)>,
    why: &str,
) {
    file.bad += 1;
    if file.bad > LISTED_PER_FILE {
        return;
    }
    let path = file.path.display();
    unreadable.push(match place {
        Some((line, column)) => format!("{path}:{line}:{column}: {why}"),
        None => format!("{path}: {why}"),
    });
}

/// A JSON error without serde's own "at line 1 column N" (the caller names the place).
fn why(error: &serde_json::Error) -> String {
    let text = error.to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// The line number (from 1) of the line that starts at `offset` of `file`.
fn line_number(file: &mut EntryFile, offset: u64) -> Option<usize> {
    let newlines = |bytes: &[u8]| bytes.iter().filter(|&&b| b == b'\n').count();
    if let Some(kept) = &file.kept {
        return Some(newlines(kept.as_bytes().get(..offset as usize)?) + 1);
    }
    let handle = file.handle.as_mut()?;
    let mut buffer = vec![0; 64 * 1024];
    let (mut at, mut count) = (0u64, 0);
    while at < offset {
        let part = &mut buffer[..(offset - at).min(64 * 1024) as usize];
        read_at(handle, at, part).ok()?;
        count += newlines(part);
        at += part.len() as u64;
    }
    Some(count + 1)
}

/// Reads `buffer.len()` bytes at `offset`.
fn read_at(file: &mut std::fs::File, offset: u64, buffer: &mut [u8]) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buffer, offset)
    }
    #[cfg(not(unix))]
    {
        use std::io::Seek;
        file.seek(std::io::SeekFrom::Start(offset))?;
        file.read_exact(buffer)
    }
}

/// A temp file beside the report for one streamed piece.
struct Piece {
    path: PathBuf,
    out: BufWriter<std::fs::File>,
}

impl Piece {
    fn create(dir: &Path, name: &str) -> std::io::Result<Piece> {
        let path = dir.join(format!(".{name}.{}.tmp", std::process::id()));
        let out = BufWriter::with_capacity(256 * 1024, std::fs::File::create(&path)?);
        Ok(Piece { path, out })
    }
}

/// One part of the report in key order: a folder's kept section, or lines rendered now.
struct Chunk {
    /// Its cases' JSON lines, table rows and failure sections.
    parts: [PathBuf; 3],
    /// Temp files, removed once the report is written (else a folder's kept section).
    temp: bool,
    rows: usize,
    any_failure: bool,
    totals: Totals,
    suites: Vec<SuiteReport>,
}

/// The chunk being rendered.
struct Open {
    folder: usize,
    /// Kept as the folder's section once written.
    keep: bool,
    /// Its cases' JSON lines.
    json: Piece,
    /// Its rows and failure sections, until they go to the [`Renderer`].
    html: Option<[Piece; 2]>,
    /// Prefix of its failure anchors: unique in the report, and the same in every report for a
    /// kept section.
    tag: String,
    rows: usize,
    any_failure: bool,
    aggregate: Aggregate,
    gathered: section::Gathered,
}

impl Open {
    fn start(
        folder: usize,
        folder_path: &Path,
        keep: bool,
        report_dir: &Path,
        n: usize,
    ) -> std::io::Result<Open> {
        let (at, tag) = if keep {
            (folder_path, section::tag(folder_path, report_dir))
        } else {
            (report_dir, format!("t{n}"))
        };
        let names = if keep {
            section::PARTS.map(|p| p.trim_start_matches('.').to_string())
        } else {
            [
                "report.json.cases",
                "report.html.rows",
                "report.html.failures",
            ]
            .map(|p| format!("{p}-{n}"))
        };
        let [a, b, c] = &names;
        Ok(Open {
            folder,
            keep,
            json: Piece::create(at, a)?,
            html: Some([Piece::create(at, b)?, Piece::create(at, c)?]),
            tag,
            rows: 0,
            any_failure: false,
            aggregate: Aggregate::default(),
            gathered: section::Gathered::default(),
        })
    }

    /// Finishes the chunk's files; a kept section's parts take their names (its meta is written
    /// once the folder's merged file is in place).
    fn close(
        self,
        folders: &[PathBuf],
        html: [Piece; 2],
    ) -> std::io::Result<(Chunk, Option<(usize, section::Gathered)>)> {
        let mut parts = Vec::with_capacity(3);
        let [rows, failures] = html;
        for (i, piece) in [self.json, rows, failures].into_iter().enumerate() {
            let file = piece.out.into_inner().map_err(|e| e.into_error())?;
            drop(file);
            if self.keep {
                let target = folders[self.folder].join(section::PARTS[i]);
                crate::files::rename_derived(&piece.path, &target)?;
                parts.push(target);
            } else {
                parts.push(piece.path);
            }
        }
        let (totals, suites) = self.aggregate.finish();
        let chunk = Chunk {
            parts: [parts[0].clone(), parts[1].clone(), parts[2].clone()],
            temp: !self.keep,
            rows: self.rows,
            any_failure: self.any_failure,
            totals,
            suites,
        };
        Ok((chunk, self.keep.then_some((self.folder, self.gathered))))
    }
}

/// How many lines a rebuild must have for its rows to be rendered on a thread of their own.
const RENDER_THREAD: usize = 2048;

/// Renders the table rows and failure sections of a rebuild. For a large report it works on a
/// thread of its own, beside the loop that reads, parses and sums up the next lines (the run's
/// test threads are done, so a core is free): the two halves of a rebuild side by side.
enum Renderer<'scope> {
    Inline {
        current: Option<(String, [Piece; 2])>,
        html: String,
        result: std::io::Result<()>,
    },
    Thread {
        batch: Vec<(usize, Entry)>,
        to: std::sync::mpsc::SyncSender<Render>,
        back: std::sync::mpsc::Receiver<std::io::Result<[Piece; 2]>>,
        _thread: std::thread::ScopedJoinHandle<'scope, ()>,
    },
}

/// What the render thread is asked to do.
enum Render {
    /// The next chunk: its anchor tag, and its rows and failure pieces.
    Start(String, [Piece; 2]),
    Rows(Vec<(usize, Entry)>),
    /// Hand the pieces back.
    Finish,
}

/// Rows sent to the render thread at once.
const RENDER_BATCH: usize = 64;

impl<'scope> Renderer<'scope> {
    fn new<'env>(
        scope: &'scope std::thread::Scope<'scope, 'env>,
        lines: usize,
    ) -> Renderer<'scope> {
        if lines < RENDER_THREAD {
            return Renderer::Inline {
                current: None,
                html: String::new(),
                result: Ok(()),
            };
        }
        let (to, requests) = std::sync::mpsc::sync_channel::<Render>(8);
        let (done, back) = std::sync::mpsc::sync_channel(1);
        let thread = scope.spawn(move || {
            let mut html = String::new();
            let mut current: Option<(String, [Piece; 2], std::io::Result<()>)> = None;
            for request in requests {
                match request {
                    Render::Start(tag, pieces) => current = Some((tag, pieces, Ok(()))),
                    Render::Rows(rows) => {
                        let Some((tag, pieces, result)) = current.as_mut() else {
                            continue;
                        };
                        for (row, entry) in rows {
                            if result.is_ok() {
                                *result = render(&mut html, tag, row, &entry, pieces);
                            }
                        }
                    }
                    Render::Finish => {
                        if let Some((_, pieces, result)) = current.take() {
                            let _ = done.send(result.map(|()| pieces));
                        }
                    }
                }
            }
        });
        Renderer::Thread {
            batch: Vec::with_capacity(RENDER_BATCH),
            to,
            back,
            _thread: thread,
        }
    }

    /// Starts a chunk.
    fn start(&mut self, tag: String, pieces: [Piece; 2]) {
        match self {
            Renderer::Inline { current, .. } => *current = Some((tag, pieces)),
            Renderer::Thread { to, .. } => {
                let _ = to.send(Render::Start(tag, pieces));
            }
        }
    }

    /// Renders the chunk's row `row`.
    fn row(&mut self, row: usize, entry: Entry) {
        match self {
            Renderer::Inline {
                current: Some((tag, pieces)),
                html,
                result,
            } => {
                if result.is_ok() {
                    *result = render(html, tag, row, &entry, pieces);
                }
            }
            Renderer::Inline { .. } => {}
            Renderer::Thread { batch, to, .. } => {
                batch.push((row, entry));
                if batch.len() == RENDER_BATCH {
                    let rows = std::mem::replace(batch, Vec::with_capacity(RENDER_BATCH));
                    let _ = to.send(Render::Rows(rows));
                }
            }
        }
    }

    /// Ends the chunk: its pieces, every row written.
    fn finish(&mut self) -> std::io::Result<[Piece; 2]> {
        let gone = || std::io::Error::other("the report's render thread stopped");
        match self {
            Renderer::Inline {
                current, result, ..
            } => {
                let outcome = std::mem::replace(result, Ok(()));
                let (_, pieces) = current.take().ok_or_else(gone)?;
                outcome.map(|()| pieces)
            }
            Renderer::Thread {
                batch, to, back, ..
            } => {
                if !batch.is_empty() {
                    let rows = std::mem::take(batch);
                    to.send(Render::Rows(rows)).map_err(|_| gone())?;
                }
                to.send(Render::Finish).map_err(|_| gone())?;
                back.recv().map_err(|_| gone())?
            }
        }
    }
}

/// Writes one row (and its failure section when it failed) into a chunk's pieces.
fn render(
    html: &mut String,
    tag: &str,
    row: usize,
    entry: &Entry,
    pieces: &mut [Piece; 2],
) -> std::io::Result<()> {
    html.clear();
    html_row(html, format_args!("{tag}-{row}"), entry);
    pieces[0].out.write_all(html.as_bytes())?;
    if !entry.passed {
        html.clear();
        html_failure(html, format_args!("{tag}-{row}"), entry);
        pieces[1].out.write_all(html.as_bytes())?;
    }
    Ok(())
}

/// A chunk made before the loop over the read lines, placed among them by its first key: a
/// folder's kept section, or the run's prepared part (whose section is saved with the others).
struct Made {
    first_key: String,
    chunk: Chunk,
    save: Option<(usize, section::Gathered)>,
}

impl Made {
    fn kept(section: section::Section) -> Made {
        Made {
            first_key: section.meta.first_key.clone(),
            chunk: Chunk::kept(section),
            save: None,
        }
    }

    fn place(self, chunks: &mut Vec<Chunk>, to_save: &mut Vec<(usize, section::Gathered, usize)>) {
        if let Some((folder, gathered)) = self.save {
            to_save.push((folder, gathered, chunks.len()));
        }
        chunks.push(self.chunk);
    }
}

/// The run's prepared part as its folder's section: each case's line (from the entry file
/// `entry_file`), row and failure section copied in key order.
fn write_prepared(
    ready: Ready,
    dir: &Path,
    folders: &[PathBuf],
    folder: usize,
    entry_file: &Path,
) -> std::io::Result<Made> {
    let mut open = Open::start(folder, &folders[folder], true, dir, 0)?;
    let Some(mut html) = open.html.take() else {
        return Err(std::io::Error::other("a section's pieces are missing"));
    };
    let temps = [
        open.json.path.clone(),
        html[0].path.clone(),
        html[1].path.clone(),
    ];
    let copied = copy_prepared(&ready, entry_file, &mut open.json, &mut html);
    let closed = copied.and_then(|()| {
        open.rows = ready.cases.len();
        open.any_failure = ready.any_failure;
        open.close(folders, html)
    });
    let (mut chunk, save) = match closed {
        Ok(closed) => closed,
        Err(e) => {
            for temp in temps {
                let _ = std::fs::remove_file(temp);
            }
            return Err(e);
        }
    };
    let first_key = ready.gathered.first_key.clone();
    chunk.totals = ready.totals;
    chunk.suites = ready.suites;
    let save = save.map(|(folder, _)| (folder, ready.gathered));
    Ok(Made {
        first_key,
        chunk,
        save,
    })
}

/// Copies each case's line (from the entry file `entry_file`), row and failure section into the
/// chunk's pieces, in key order: the lines on this thread, the rows and failure sections on
/// another (the run's test threads are done, so a core is free).
fn copy_prepared(
    ready: &Ready,
    entry_file: &Path,
    json: &mut Piece,
    [rows, failures]: &mut [Piece; 2],
) -> std::io::Result<()> {
    let changed = || std::io::Error::other("an entry file changed while the report was built");
    let [rows_path, failures_path] = ready.side_files();
    let mut entries = std::fs::File::open(entry_file)?;
    let mut side = [
        std::fs::File::open(rows_path)?,
        std::fs::File::open(failures_path)?,
    ];
    std::thread::scope(|scope| {
        let html = scope.spawn(|| -> std::io::Result<()> {
            let [rows_file, failures_file] = &mut side;
            let (mut rows_window, mut failures_window) = (Window::default(), Window::default());
            for case in &ready.cases {
                let (at, len) = case.row;
                let row = rows_window
                    .piece(rows_file, 0, at, len as usize)
                    .ok_or_else(changed)?;
                rows.out.write_all(row)?;
                if let Some((at, len)) = case.failure {
                    let failure = failures_window
                        .piece(failures_file, 0, at, len as usize)
                        .ok_or_else(changed)?;
                    failures.out.write_all(failure)?;
                }
            }
            Ok(())
        });
        let mut window = Window::default();
        let lines = (|| -> std::io::Result<()> {
            for (i, case) in ready.cases.iter().enumerate() {
                let (at, len) = case.json;
                let line = window
                    .piece(&mut entries, 0, at, len as usize)
                    .ok_or_else(changed)?;
                if i > 0 {
                    json.out.write_all(b",\n    ")?;
                }
                json.out.write_all(line)?;
            }
            Ok(())
        })();
        let html = html
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the report's copy thread stopped")));
        lines.and(html)
    })
}

impl Chunk {
    fn kept(section: section::Section) -> Chunk {
        Chunk {
            parts: [section.part(0), section.part(1), section.part(2)],
            temp: false,
            rows: section.meta.rows,
            any_failure: section.meta.any_failure,
            totals: section.meta.totals,
            suites: section.meta.suites,
        }
    }

    fn copy(&self, part: usize, out: &mut impl Write) -> std::io::Result<()> {
        let mut file = std::fs::File::open(&self.parts[part])?;
        std::io::copy(&mut file, out)?;
        Ok(())
    }
}

/// Builds the report from the entry files below `dir/entries` (the own file's lines are this
/// process's), compacts finished writers' files into their folder's `merged.jsonl`, writes
/// `report.json` and `report.html`, and returns the report (with its cases when `keep_cases`).
/// Without `keep_cases`, a folder the run did not change is taken from its kept section
/// ([`section`]) instead of being read again.
pub(super) fn build(dir: &Path, mut own: Option<Own>, keep_cases: bool) -> std::io::Result<Report> {
    let prepared = own
        .as_mut()
        .and_then(|o| o.prepared.take())
        .filter(|p| p.whole() && !keep_cases);
    let summary = prepared.as_ref().map(Prepared::summary);
    let mut index = Index::build(dir, own.as_ref(), summary, !keep_cases);
    // The prepared part stands for the own file's lines when they are all the latest run's.
    // A part that does not stand for the own file is dropped here, and its side files with it,
    // not at the end of the rebuild (a kill in between would leave them behind).
    let mut ready = prepared
        .filter(|_| index.own_unread.is_some())
        .and_then(Prepared::finish);
    if ready.is_some() {
        index.prepared_latest = ready
            .as_ref()
            .and_then(|r| Some((r.latest?, r.run.clone())));
        if ready
            .as_ref()
            .is_none_or(|r| r.run.is_none() || r.run != index.latest_run())
        {
            ready = None;
            index.read_own();
        }
    }
    let latest_run = index.latest_run();
    // A kept section whose "older" marks no longer hold is read and rendered again.
    for section in std::mem::take(&mut index.sections) {
        if section.meta.marks_hold(latest_run.as_deref()) {
            index.sections.push(section);
        } else {
            let merged = section.folder.join(MERGED);
            index.add_file(merged, &dir.join("entries"), None);
        }
    }
    // Lines of the same package and binary outside the own folder (put there by hand): the
    // part cannot stand for its cases beside them.
    if let Some(r) = &ready {
        let prefix = format!("{}\0{}\0", r.gathered.package, r.gathered.binary);
        let elsewhere = index
            .latest
            .range::<str, _>((
                std::ops::Bound::Included(prefix.as_str()),
                std::ops::Bound::Unbounded,
            ))
            .next()
            .is_some_and(|(key, _)| key.starts_with(&prefix))
            || index
                .sections
                .iter()
                .any(|s| s.meta.first_key.starts_with(&prefix));
        if elsewhere {
            ready = None;
            index.read_own();
        }
    }
    let own_file = index.files.iter().position(|f| f.own);
    let mut made: Vec<Made> = std::mem::take(&mut index.sections)
        .into_iter()
        .map(Made::kept)
        .collect();
    let prepared_folder = match (ready, own_file, &own) {
        (Some(ready), Some(file), Some(own)) => {
            let folder = index.files[file].folder;
            match write_prepared(ready, dir, &index.folders, folder, &own.path) {
                Ok(part) => {
                    made.push(part);
                    Some(folder)
                }
                // Its pieces could not be copied: its lines are read as any others.
                Err(_) => {
                    index.read_own();
                    None
                }
            }
        }
        _ => None,
    };
    made.sort_by(|a, b| a.first_key.cmp(&b.first_key));
    let mut kept = made.into_iter().peekable();
    // In the order the files were read (by name; the own file, then its folder's merged file,
    // last), each file's lines in order.
    let mut unreadable = std::mem::take(&mut index.unreadable);

    // The own file becomes its folder's merged file as is when it holds exactly its folder's
    // latest lines (a full run of the target).
    let renamed_folder = prepared_folder.or_else(|| {
        let own_file = own_file?;
        let own = own.as_ref()?;
        let folder = index.files[own_file].folder;
        let from_folder = index
            .latest
            .values()
            .filter(|l| index.files[l.file as usize].folder == folder);
        let mut count = 0;
        for l in from_folder {
            if !index.files[l.file as usize].own {
                return None;
            }
            count += 1;
        }
        (own.whole && count == own.count && index.own_lines == own.count).then_some(folder)
    });

    let generated_at = Utc::now();
    let mut chunks: Vec<Chunk> = Vec::new();
    let mut to_save: Vec<(usize, section::Gathered, usize)> = Vec::new();
    let mut open: Option<Open> = None;
    // Folders whose lines were interrupted by another folder's (lines of one package and binary
    // in two folders): not kept as sections.
    let mut closed_folders = std::collections::HashSet::new();
    let mut reopened = std::collections::HashSet::new();
    let mut merged: BTreeMap<usize, Piece> = BTreeMap::new();
    let mut targets = Targets::default();
    let mut kept_cases = Vec::new();
    let mut window = Window::default();
    let latest = std::mem::take(&mut index.latest);
    let close = |open: &mut Option<Open>,
                 renderer: &mut Renderer,
                 chunks: &mut Vec<Chunk>,
                 to_save: &mut Vec<(usize, section::Gathered, usize)>,
                 folders: &[PathBuf]|
     -> std::io::Result<()> {
        if let Some(done) = open.take() {
            let html = renderer.finish()?;
            let (chunk, gathered) = done.close(folders, html)?;
            if let Some((folder, gathered)) = gathered {
                to_save.push((folder, gathered, chunks.len()));
            }
            chunks.push(chunk);
        }
        Ok(())
    };
    std::thread::scope(|scope| -> std::io::Result<()> {
        let mut renderer = Renderer::new(scope, latest.len());
        for (key, line_of) in latest {
            while kept.peek().is_some_and(|m| m.first_key < key) {
                // A folder whose lines a made chunk interrupts is not kept as a section: its
                // lines after the chunk would make another one under the same name.
                if let Some(o) = &open {
                    closed_folders.insert(o.folder);
                }
                close(
                    &mut open,
                    &mut renderer,
                    &mut chunks,
                    &mut to_save,
                    &index.folders,
                )?;
                if let Some(made) = kept.next() {
                    made.place(&mut chunks, &mut to_save);
                }
            }
            let file_index = line_of.file as usize;
            let (folder, own_line) = (index.files[file_index].folder, index.files[file_index].own);
            let Some(line) = Index::text(&mut index.files, &line_of, &mut window) else {
                unreadable_line(
                    &mut unreadable,
                    &mut index.files[file_index],
                    None,
                    "changed while the report was built",
                );
                continue;
            };
            let mut entry = match serde_json::from_str::<Entry>(line) {
                Ok(entry) => entry,
                Err(e) => {
                    // Its key was readable but the rest is not (a line of another version,
                    // edited by hand): counted as unreadable, like a line without a key, and
                    // left out.
                    let why = why(&e);
                    let offset = match line_of.text {
                        Text::At { offset, .. } => Some(offset),
                        Text::Owned(_) => None,
                    };
                    let file = &mut index.files[file_index];
                    let number = offset.and_then(|offset| line_number(file, offset));
                    unreadable_line(&mut unreadable, file, number.map(|n| (n, e.column())), &why);
                    continue;
                }
            };
            if open.as_ref().is_none_or(|o| o.folder != folder) {
                if let Some(o) = &open {
                    closed_folders.insert(o.folder);
                }
                if closed_folders.contains(&folder) {
                    reopened.insert(folder);
                }
                close(
                    &mut open,
                    &mut renderer,
                    &mut chunks,
                    &mut to_save,
                    &index.folders,
                )?;
                let keep = !closed_folders.contains(&folder);
                let folder_path = &index.folders[folder];
                let mut started = Open::start(folder, folder_path, keep, dir, chunks.len())?;
                if let Some(html) = started.html.take() {
                    renderer.start(started.tag.clone(), html);
                }
                open = Some(started);
            }
            let Some(chunk) = open.as_mut() else {
                continue;
            };
            chunk.gathered.watch(&entry);
            // A result whose fixture or test target is gone is dropped: the case no longer
            // exists. This process's own cases ran just now.
            if !own_line && (!entry.fixture.exists() || targets.gone(&entry)) {
                continue;
            }
            entry.older = entry.run.as_deref() != latest_run.as_deref();
            chunk.gathered.add(&entry, &key);
            chunk.aggregate.add(&entry);
            let cases = &mut chunk.json.out;
            if chunk.rows > 0 {
                cases.write_all(b",\n    ")?;
            }
            if entry.older {
                // The line as written, marked: `{"older":true,` and the rest of the object.
                cases.write_all(b"{\"older\":true,")?;
                cases.write_all(&line.as_bytes()[1..])?;
            } else {
                cases.write_all(line.as_bytes())?;
            }
            if renamed_folder != Some(folder) {
                let piece = match merged.entry(folder) {
                    std::collections::btree_map::Entry::Occupied(piece) => piece.into_mut(),
                    std::collections::btree_map::Entry::Vacant(slot) => {
                        slot.insert(Piece::create(&index.folders[folder], MERGED)?)
                    }
                };
                piece.out.write_all(line.as_bytes())?;
                piece.out.write_all(b"\n")?;
            }
            chunk.any_failure |= !entry.passed;
            let row = chunk.rows;
            chunk.rows += 1;
            if keep_cases {
                kept_cases.push(entry.clone());
            }
            renderer.row(row, entry);
        }
        close(
            &mut open,
            &mut renderer,
            &mut chunks,
            &mut to_save,
            &index.folders,
        )
    })?;
    for made in kept {
        made.place(&mut chunks, &mut to_save);
    }

    // Each folder's merged file now holds the latest lines read from that folder; the files
    // folded into it go.
    for (folder, folder_path) in index.folders.iter().enumerate() {
        let target = folder_path.join(MERGED);
        if renamed_folder == Some(folder) {
            // Every line of the old merged file is replaced by one of the own file's.
            if let Some(own) = &own {
                crate::files::rename_derived(&own.path, &target)?;
            }
        } else if let Some(piece) = merged.remove(&folder) {
            let file = piece.out.into_inner().map_err(|e| e.into_error())?;
            drop(file);
            std::fs::rename(&piece.path, &target)?;
        } else {
            // No line of this folder still stands.
            let _ = std::fs::remove_file(&target);
            section::Section::remove(folder_path);
        }
        for file in &index.files {
            if file.folder == folder
                && file.compact
                && !(file.own && renamed_folder == Some(folder))
            {
                let _ = std::fs::remove_file(&file.path);
                prepared::remove_side_files(&file.path);
            }
        }
    }
    // The new sections, made from the merged files now in place.
    for (folder, gathered, chunk) in to_save {
        let chunk = &chunks[chunk];
        let unreadable_here = index.files.iter().any(|f| f.folder == folder && f.bad > 0);
        let mut gathered = gathered;
        gathered.unkept |= unreadable_here || reopened.contains(&folder);
        gathered.save(
            &index.folders[folder],
            latest_run.clone(),
            chunk.rows,
            chunk.any_failure,
            chunk.totals.clone(),
            chunk.suites.clone(),
        );
    }

    for file in &index.files {
        if file.bad > LISTED_PER_FILE {
            unreadable.push(format!(
                "{}: {} more unreadable line(s)",
                file.path.display(),
                file.bad - LISTED_PER_FILE
            ));
        }
    }

    let mut totals = Totals::default();
    let mut suites = Vec::new();
    for chunk in &chunks {
        add_totals(&mut totals, &chunk.totals);
        suites.extend(chunk.suites.iter().cloned());
    }
    let rows: usize = chunks.iter().map(|c| c.rows).sum();
    let any_failure = chunks.iter().any(|c| c.any_failure);
    let mut report = Report {
        format: FORMAT,
        generated_at,
        latest_run,
        totals,
        suites,
        cases: Vec::new(),
        unreadable_entries: unreadable,
    };

    let written = write_report(dir, &report, &chunks, rows, any_failure);
    for chunk in chunks.iter().filter(|c| c.temp) {
        for part in &chunk.parts {
            let _ = std::fs::remove_file(part);
        }
    }
    written?;
    report.cases = kept_cases;
    Ok(report)
}

/// Writes `report.json` and `report.html` from the header and the chunks' parts.
fn write_report(
    dir: &Path,
    report: &Report,
    chunks: &[Chunk],
    rows: usize,
    any_failure: bool,
) -> std::io::Result<()> {
    // report.json: the header as serde writes it, then the cases' lines.
    let mut header = serde_json::to_string_pretty(report).map_err(std::io::Error::other)?;
    // `"cases": []` is written last among the keys: the lines go in its place.
    let Some(at) = header.rfind("\"cases\": []") else {
        return Err(std::io::Error::other("the report header has no cases key"));
    };
    let tail = header.split_off(at);
    let tail = &tail["\"cases\": []".len()..];
    // report.html: head and summary, rows, failures, script; on a thread of its own beside
    // report.json (the two files share nothing).
    let mut head = String::new();
    html_head(&mut head, report, "");
    let mut end = String::new();
    html_tail(&mut end, any_failure);
    let mut script = String::new();
    html_script(&mut script);
    let page = || {
        crate::files::replace_derived_with(&dir.join("report.html"), |out| {
            out.write_all(head.as_bytes())?;
            for chunk in chunks.iter().filter(|c| c.rows > 0) {
                chunk.copy(1, out)?;
            }
            out.write_all(end.as_bytes())?;
            for chunk in chunks.iter().filter(|c| c.rows > 0) {
                chunk.copy(2, out)?;
            }
            out.write_all(script.as_bytes())
        })
    };
    let json = || {
        crate::files::replace_derived_with(&dir.join("report.json"), |out| {
            out.write_all(header.as_bytes())?;
            if rows == 0 {
                out.write_all(b"\"cases\": []")?;
            } else {
                out.write_all(b"\"cases\": [\n    ")?;
                let mut first = true;
                for chunk in chunks.iter().filter(|c| c.rows > 0) {
                    if !first {
                        out.write_all(b",\n    ")?;
                    }
                    first = false;
                    chunk.copy(0, out)?;
                }
                out.write_all(b"\n  ]")?;
            }
            out.write_all(tail.as_bytes())?;
            out.write_all(b"\n")
        })
    };
    std::thread::scope(|scope| {
        let page = scope.spawn(page);
        let json = json();
        let page = page
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the report's page thread stopped")));
        json.and(page)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::recording::usage::UsageTotals;
    use crate::report::rebuild;
    use crate::report::tests::{line_of_run, own};

    /// A report folder with one fixture, `f.json`, and the entry folder of package `demo`'s
    /// binary `evals`.
    fn report_folder() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let fixture = dir.path().join("f.json");
        std::fs::write(&fixture, "{}").unwrap();
        let folder = dir.path().join("entries/demo/evals");
        std::fs::create_dir_all(&folder).unwrap();
        (dir, fixture, folder)
    }

    /// A passing entry line of case `case` of the binary `evals`, in the run named by its time.
    fn line(fixture: &Path, case: &str, at: &str) -> String {
        line_of_run(fixture, "evals", case, at, true, at)
    }

    #[test]
    fn a_merged_file_whose_cases_the_own_file_all_holds_again_is_not_read() {
        let (dir, fixture, folder) = report_folder();
        let run = |cases: &[&str], at: &str| -> Vec<String> {
            cases.iter().map(|c| line(&fixture, c, at)).collect()
        };
        let read = |own: &Own| -> Vec<PathBuf> {
            let index = Index::build(dir.path(), Some(own), None, true);
            index.files.iter().map(|f| f.path.clone()).collect()
        };
        let merged = folder.join(MERGED);
        build(
            dir.path(),
            Some(own(&folder, &run(&["a", "b"], "2026-01-01T00:00:00Z"))),
            false,
        )
        .unwrap();
        assert!(merged.exists());

        // The same cases again: the merged file is not read.
        let again = own(&folder, &run(&["b", "a"], "2026-01-02T00:00:00Z"));
        assert_eq!(read(&again), std::slice::from_ref(&again.path));
        // Fewer cases, or as many but another one: it is.
        let fewer = own(&folder, &run(&["a"], "2026-01-02T00:00:00Z"));
        assert_eq!(read(&fewer), [fewer.path.clone(), merged.clone()]);
        let other = own(&folder, &run(&["a", "c"], "2026-01-02T00:00:00Z"));
        assert_eq!(read(&other), [other.path.clone(), merged.clone()]);
        // A case that ran twice does not count twice.
        let twice = own(&folder, &run(&["a", "a"], "2026-01-02T00:00:00Z"));
        assert_eq!(read(&twice), [twice.path.clone(), merged.clone()]);

        // The report after a run of the same cases is whole.
        let again = own(&folder, &run(&["b", "a"], "2026-01-02T00:00:00Z"));
        let report = build(dir.path(), Some(again), true).unwrap();
        assert_eq!(report.cases.len(), 2);
        assert_eq!(std::fs::read_to_string(&merged).unwrap().lines().count(), 2);
    }

    /// `lines` as a whole run leaves them: the own file, and its part made case by case (each
    /// line's entry rendered and added in the order given) as `record` makes it.
    fn prepared_own(dir: &Path, folder: &Path, lines: &[String]) -> Own {
        let mut own = own(folder, lines);
        let mut part = Prepared::create(&own.path).unwrap();
        let tag = section::tag(folder, dir);
        let (mut row, mut failure) = (String::new(), String::new());
        for line in lines {
            let entry: Entry = serde_json::from_str(line.trim_end()).unwrap();
            Prepared::render(&tag, &entry, &mut row, &mut failure);
            part.add(&entry, line.len(), true, &row, &failure);
        }
        own.prepared = Some(part);
        own
    }

    /// `report.json` without its time, and `report.html` with its failure anchors numbered in
    /// the order they appear (a prepared part names them after the test, a read one by row)
    /// and without its time.
    fn written(dir: &Path) -> (serde_json::Value, String) {
        let text = std::fs::read_to_string(dir.join("report.json")).unwrap();
        let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
        json["generated_at"] = serde_json::Value::Null;
        let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
        let mut anchors: Vec<String> = Vec::new();
        let mut out = String::new();
        let mut rest = html.as_str();
        while let Some(at) = rest.find("failure-") {
            out.push_str(&rest[..at]);
            let after = &rest[at + "failure-".len()..];
            let end = after.find('"').unwrap();
            let name = &after[..end];
            let n = match anchors.iter().position(|a| a == name) {
                Some(n) => n,
                None => {
                    anchors.push(name.to_string());
                    anchors.len() - 1
                }
            };
            out.push_str(&format!("failure-#{n}"));
            rest = &after[end..];
        }
        out.push_str(rest);
        let generated = out.find("<p class=\"muted\">generated ").unwrap();
        let line_end = generated + out[generated..].find('\n').unwrap();
        out.replace_range(generated..line_end, "");
        (json, out)
    }

    /// Side files left in an entry folder.
    fn side_files(folder: &Path) -> Vec<String> {
        std::fs::read_dir(folder)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".rows") || n.ends_with(".failures"))
            .filter(|n| !n.starts_with(".section"))
            .collect()
    }

    #[test]
    fn a_whole_runs_prepared_part_makes_the_report_its_lines_make() {
        let (dir, fixture, folder) = report_folder();
        // Out of key order, as two test threads finish them, two suites, every third failing.
        let lines: Vec<String> = (0..40)
            .map(|i| {
                let case = format!("c{:02}", (i * 7) % 40);
                let line = line_of_run(
                    &fixture,
                    "evals",
                    &case,
                    "2026-01-01T00:00:00Z",
                    i % 3 != 0,
                    "r1",
                );
                if i % 2 == 0 {
                    line.replace(
                        "\"suite_dir\":\"fixtures/s\"",
                        "\"suite_dir\":\"fixtures/t\"",
                    )
                } else {
                    line
                }
            })
            .collect();
        let (read, _, read_folder) = report_folder();
        build(read.path(), Some(own(&read_folder, &lines)), false).unwrap();

        build(
            dir.path(),
            Some(prepared_own(dir.path(), &folder, &lines)),
            false,
        )
        .unwrap();
        let (json, html) = written(dir.path());
        assert_eq!((json.clone(), html.clone()), written(read.path()));
        assert_eq!(json["cases"].as_array().unwrap().len(), 40);
        assert_eq!(json["suites"].as_array().unwrap().len(), 2);
        // Anchors are named after the test, so the part was the prepared one.
        let text = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
        assert!(text.contains("href=\"#failure-"), "{text}");
        assert!(text.contains("-s::c"), "anchors name their test");
        assert!(side_files(&folder).is_empty(), "{:?}", side_files(&folder));
        assert!(folder.join(MERGED).is_file());

        // The next whole run takes the folder's kept section for the report it rebuilds from
        // the part: the same again.
        let again: Vec<String> = lines
            .iter()
            .map(|l| {
                l.replace("2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z")
                    .replace("\"r1\"", "\"r2\"")
            })
            .collect();
        build(
            dir.path(),
            Some(prepared_own(dir.path(), &folder, &again)),
            false,
        )
        .unwrap();
        let report = rebuild(dir.path()).unwrap();
        assert_eq!(report.cases.len(), 40);
        assert!(report.cases.iter().all(|c| c.run.as_deref() == Some("r2")));
        assert!(side_files(&folder).is_empty());
    }

    #[test]
    fn a_prepared_parts_numbers_do_not_depend_on_the_order_cases_finished() {
        let dir = tempfile::tempdir().unwrap();
        let fixture = dir.path().join("f.json");
        std::fs::write(&fixture, "{}").unwrap();
        // Scores, latencies and costs whose plain sums differ from one order to another, and
        // repeated cases.
        let lines: Vec<String> = (0..60)
            .map(|i| {
                let case = format!("c{i:02}");
                let line = line_of_run(
                    &fixture,
                    "evals",
                    &case,
                    "2026-01-01T00:00:00Z",
                    i % 4 != 0,
                    "r1",
                );
                let mut entry: Entry = serde_json::from_str(line.trim_end()).unwrap();
                if i % 2 == 0 {
                    entry.suite_dir = "fixtures/t".into();
                }
                let score = 0.1 * f64::from(i % 7) + 1.0 / f64::from(i + 3);
                entry.evaluators.push(EvaluatorEntry {
                    evaluator: "field_accuracy".into(),
                    score,
                    passed: entry.passed,
                    summary: String::new(),
                    misses: Vec::new(),
                    fields: vec![super::super::FieldEntry {
                        path: format!("f{}", i % 3),
                        hit: i % 5 != 0,
                    }],
                    rendered: String::new(),
                    verdicts: Vec::new(),
                    alignment: None,
                });
                entry.score = Some(score);
                entry.usage = Some(UsageTotals {
                    calls: 1,
                    input_tokens: 3,
                    output_tokens: 2,
                    latency_ms: 0.1 * f64::from(i),
                    cost_usd: Some(0.0001 * f64::from(i)),
                    unpriced_calls: 0,
                });
                if i % 5 == 0 {
                    entry.samples = Some(crate::repeat::Samples::new(
                        &[(true, Some(score)), (i % 10 == 0, Some(0.3))],
                        crate::repeat::PassRule::All,
                    ));
                }
                serde_json::to_string(&entry).unwrap() + "\n"
            })
            .collect();
        let (read, _, read_folder) = report_folder();
        build(read.path(), Some(own(&read_folder, &lines)), false).unwrap();
        let (want, _) = written(read.path());
        assert!(want["suites"][0]["repeats"].is_object(), "{want}");
        for order in [1usize, 7, 13] {
            let folder = dir.path().join("entries/demo/evals");
            let _ = std::fs::remove_dir_all(dir.path().join("entries"));
            std::fs::create_dir_all(&folder).unwrap();
            let shuffled: Vec<String> = (0..lines.len())
                .map(|i| lines[(i * order + order / 2) % lines.len()].clone())
                .collect();
            build(
                dir.path(),
                Some(prepared_own(dir.path(), &folder, &shuffled)),
                false,
            )
            .unwrap();
            let (json, _) = written(dir.path());
            assert_eq!(json, want, "order {order}");
        }
    }

    #[test]
    fn a_prepared_part_gives_way_to_lines_it_does_not_stand_for() {
        let (dir, fixture, folder) = report_folder();
        let at = "2026-01-01T00:00:00Z";
        let line =
            |case: &str, passed: bool| line_of_run(&fixture, "evals", case, at, passed, "r1");

        // A case that ran twice in the process: its latest line counts, once.
        let later = line_of_run(&fixture, "evals", "a", "2026-01-01T00:00:01Z", true, "r1");
        let twice = [line("a", false), line("b", true), later];
        let report = build(
            dir.path(),
            Some(prepared_own(dir.path(), &folder, &twice)),
            true,
        )
        .unwrap();
        assert_eq!((report.totals.cases, report.totals.failed), (2, 0));
        assert!(side_files(&folder).is_empty());

        // Another writer's file in the folder: its case stands beside the run's.
        let other = folder.join("999999999-1.jsonl");
        std::fs::write(&other, line("z", true)).unwrap();
        let own = prepared_own(dir.path(), &folder, &[line("a", true)]);
        build(dir.path(), Some(own), false).unwrap();
        let (json, _) = written(dir.path());
        let cases: Vec<&str> = json["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["case"].as_str().unwrap())
            .collect();
        assert_eq!(cases, ["a", "b", "z"]);
        assert!(side_files(&folder).is_empty());

        // A newer run of another binary: the run's lines are older, so its rows are rendered
        // from its lines with their marks.
        let newer = dir.path().join("entries/demo/other");
        std::fs::create_dir_all(&newer).unwrap();
        std::fs::write(
            newer.join("999999999-2.jsonl"),
            line_of_run(&fixture, "other", "x", "2026-01-03T00:00:00Z", true, "r9"),
        )
        .unwrap();
        // (The run's lines are newer than the folder's merged file, so that alone would not
        // send them to be read.)
        let next =
            |case: &str| line_of_run(&fixture, "evals", case, "2026-01-02T00:00:00Z", true, "r1");
        let own = prepared_own(dir.path(), &folder, &[next("a"), next("b"), next("z")]);
        build(dir.path(), Some(own), false).unwrap();
        let (json, html) = written(dir.path());
        assert_eq!(json["latest_run"], "r9");
        assert_eq!(json["totals"]["older"], 3, "{json}");
        assert_eq!(html.matches(" class=\"older\"><td").count(), 3);
        assert!(side_files(&folder).is_empty());
    }

    #[test]
    fn a_prepared_part_gives_way_to_its_binarys_lines_in_another_folder() {
        let (dir, fixture, folder) = report_folder();
        // An older line of the same binary's case `a`, in a folder of its own (put there by
        // hand): the run's newer `a` replaces it, and `a` is one case.
        let other = dir.path().join("entries/by-hand");
        std::fs::create_dir_all(&other).unwrap();
        let old = line_of_run(&fixture, "evals", "a", "2026-01-01T00:00:00Z", false, "r0");
        std::fs::write(other.join("999999999-1.jsonl"), old).unwrap();
        let at = "2026-01-02T00:00:00Z";
        let lines = [
            line_of_run(&fixture, "evals", "a", at, true, "r1"),
            line_of_run(&fixture, "evals", "b", at, true, "r1"),
        ];
        build(
            dir.path(),
            Some(prepared_own(dir.path(), &folder, &lines)),
            false,
        )
        .unwrap();
        let (json, _) = written(dir.path());
        assert_eq!(json["totals"]["cases"], 2, "{json}");
        assert_eq!(json["totals"]["failed"], 0);
        assert!(side_files(&folder).is_empty());
    }

    #[test]
    fn a_prepared_part_that_cannot_be_copied_leaves_its_lines_to_be_read() {
        let (dir, fixture, folder) = report_folder();
        let at = "2026-01-02T00:00:00Z";
        let lines = [
            line_of_run(&fixture, "evals", "a", at, false, "r1"),
            line_of_run(&fixture, "evals", "b", at, true, "r1"),
        ];
        let own = prepared_own(dir.path(), &folder, &lines);
        // Its rows file is gone (a hand in the folder).
        let rows = side_files(&folder)
            .into_iter()
            .find(|n| n.ends_with(".rows"))
            .unwrap();
        std::fs::remove_file(folder.join(rows)).unwrap();
        build(dir.path(), Some(own), false).unwrap();
        let (json, html) = written(dir.path());
        assert_eq!(json["totals"]["cases"], 2, "{json}");
        assert_eq!(html.matches("<tr data-test=").count(), 2);
        let left: Vec<String> = std::fs::read_dir(&folder)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp") || n.ends_with(".rows") || n.ends_with(".failures"))
            .filter(|n| !n.starts_with(".section."))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn a_killed_writers_side_files_go_with_its_entry_file() {
        let (dir, fixture, folder) = report_folder();
        let entry = folder.join("999999999-1.jsonl");
        std::fs::write(&entry, line(&fixture, "a", "2026-01-01T00:00:00Z")).unwrap();
        std::fs::write(folder.join(".999999999-1.rows"), "<tr>").unwrap();
        std::fs::write(folder.join(".999999999-1.failures"), "").unwrap();
        let report = rebuild(dir.path()).unwrap();
        assert_eq!(report.cases.len(), 1);
        assert!(!entry.exists());
        assert!(side_files(&folder).is_empty(), "{:?}", side_files(&folder));
    }

    #[test]
    fn a_large_report_is_rendered_on_a_thread_of_its_own_in_key_order() {
        let (dir, fixture, folder) = report_folder();
        let cases = RENDER_THREAD + 700;
        // Written out of order; every seventh case fails.
        let lines: Vec<String> = (0..cases)
            .rev()
            .map(|i| {
                let line = line(&fixture, &format!("c{i:05}"), "2026-01-01T00:00:00Z");
                if i % 7 == 0 {
                    line.replace("\"passed\":true", "\"passed\":false")
                } else {
                    line
                }
            })
            .collect();
        let report = build(dir.path(), Some(own(&folder, &lines)), true).unwrap();
        assert_eq!(report.totals.cases, cases);
        assert_eq!(report.totals.failed, cases.div_ceil(7));
        let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
        let rows: Vec<&str> = html
            .split("<tr data-test=\"s::")
            .skip(1)
            .map(|row| &row[..6])
            .collect();
        let expected: Vec<String> = (0..cases).map(|i| format!("c{i:05}")).collect();
        assert_eq!(rows, expected);
        // Each failing row links to its own failure section, in the same order.
        let links: Vec<&str> = html
            .split("href=\"#failure-")
            .skip(1)
            .map(|l| &l[..l.find('"').unwrap()])
            .collect();
        let sections: Vec<&str> = html
            .split("id=\"failure-")
            .skip(1)
            .map(|l| &l[..l.find('"').unwrap()])
            .collect();
        assert_eq!(links.len(), cases.div_ceil(7));
        assert_eq!(links, sections);
        assert_eq!(report.cases.len(), cases, "the cases are kept as well");
    }

    #[test]
    fn pieces_two_threads_wrote_in_turn_are_read_a_window_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rows");
        // About 4 windows of pieces of different lengths.
        let mut text = Vec::new();
        let mut places = Vec::new();
        for i in 0..30_000usize {
            let piece = format!("<tr>{i}{}</tr>", "x".repeat(i % 211));
            places.push((text.len() as u64, piece.len()));
            text.extend_from_slice(piece.as_bytes());
        }
        assert!(text.len() > 3 * WINDOW);
        std::fs::write(&path, &text).unwrap();
        let mut file = std::fs::File::open(&path).unwrap();
        let mut window = Window::default();
        let piece = |i: usize| {
            let (at, len) = places[i];
            &text[at as usize..at as usize + len]
        };
        // Pairs swapped, as two threads finish them: within one window.
        let mut reads = 0;
        let mut last_at = u64::MAX;
        for pair in (0..places.len()).collect::<Vec<_>>().chunks(2) {
            for &i in pair.iter().rev() {
                let (at, len) = places[i];
                assert_eq!(
                    window.piece(&mut file, 0, at, len),
                    Some(piece(i)),
                    "piece {i}"
                );
                if window.at != last_at {
                    reads += 1;
                    last_at = window.at;
                }
            }
        }
        // Small reads while the window grows, then about one a window.
        assert!(reads <= text.len() / (WINDOW * 3 / 4) + 8, "{reads} reads");
        // Far back, far ahead, and past the end.
        for i in [29_999, 0, 15_000, 1, 29_998] {
            let (at, len) = places[i];
            assert_eq!(window.piece(&mut file, 0, at, len), Some(piece(i)));
        }
        assert_eq!(window.piece(&mut file, 0, text.len() as u64 - 2, 5), None);
    }

    #[test]
    fn a_window_gives_each_line_whatever_order_they_are_asked_in() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.jsonl");
        // About 3 windows of lines of different lengths.
        let mut text = String::new();
        let mut places = Vec::new();
        for i in 0..40_000 {
            let line = format!("{{\"case\":\"c{i}\",\"pad\":\"{}\"}}", "x".repeat(i % 131));
            places.push((text.len() as u64, line.len()));
            text.push_str(&line);
            text.push('\n');
        }
        assert!(text.len() > 2 * WINDOW);
        std::fs::write(&path, &text).unwrap();
        let mut handle = std::fs::File::open(&path).unwrap();
        let mut window = Window::default();
        // In order, the window grows to its largest.
        for &(offset, len) in &places {
            let line = window.line(&mut handle, 0, offset, len).unwrap();
            assert_eq!(line, &text[offset as usize..offset as usize + len]);
        }
        assert_eq!(window.bytes.len(), WINDOW);
        let order = (0..places.len())
            .step_by(7)
            .chain((0..places.len()).rev().step_by(13))
            .chain([places.len() - 1, 0, places.len() / 2]);
        for i in order {
            let (offset, len) = places[i];
            let line = window.line(&mut handle, 0, offset, len).unwrap();
            assert_eq!(
                line,
                &text[offset as usize..offset as usize + len],
                "line {i}"
            );
        }
        // Another file's lines are not taken from this one's window.
        let other = dir.path().join("other.jsonl");
        std::fs::write(&other, "0123456789\n").unwrap();
        let mut other_handle = std::fs::File::open(&other).unwrap();
        assert_eq!(window.line(&mut other_handle, 1, 2, 3), Some("234"));
        // Bytes the file no longer holds (cut short while the report was built).
        assert_eq!(window.line(&mut other_handle, 1, 5, 20), None);
        assert_eq!(window.line(&mut handle, 0, text.len() as u64 - 2, 5), None);
    }
}
