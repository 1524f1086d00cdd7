//! The shell's file helpers, shared by every concern: errors located in a user's file, atomic
//! writes, and the `/`-separated relative paths that everything prints and stores.

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A place in a user's file and what is wrong there: the body of each concern's error type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    pub file: PathBuf,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl Located {
    /// An error about the whole file (no line).
    pub fn file(file: impl Into<PathBuf>, message: impl Into<String>) -> Located {
        Located {
            file: file.into(),
            line: 0,
            column: 0,
            message: message.into(),
        }
    }
}

impl fmt::Display for Located {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_located(f, &self.file, self.line, self.column, &self.message)
    }
}

/// `file:line:column: message`, as compilers print it; `file: message` without a line.
pub fn write_located(
    f: &mut fmt::Formatter<'_>,
    file: &Path,
    line: usize,
    column: usize,
    message: &str,
) -> fmt::Result {
    if line > 0 {
        write!(f, "{}:{line}:{column}: {message}", file.display())
    } else {
        write!(f, "{}: {message}", file.display())
    }
}

/// Defines a public error type of one concern (fixture, config, recording) with the place in
/// the file where it applies (exported for the runtime's error types).
#[doc(hidden)]
#[macro_export]
macro_rules! located_error {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub struct $name {
            /// The file (crate-relative when found by discovery).
            pub file: std::path::PathBuf,
            /// 1-based line (0 when unknown or when the file could not be read at all).
            pub line: usize,
            /// 1-based column (0 when unknown).
            pub column: usize,
            /// What is wrong and how to fix it.
            pub message: String,
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                $crate::files::write_located(f, &self.file, self.line, self.column, &self.message)
            }
        }

        impl std::error::Error for $name {}

        impl From<$crate::files::Located> for $name {
            fn from(l: $crate::files::Located) -> Self {
                $name { file: l.file, line: l.line, column: l.column, message: l.message }
            }
        }
    };
}
pub use crate::located_error;

/// Turns a serde_json error into one that names the file, line and column and says what to do.
pub fn json_error(file: &Path, bytes: &[u8], error: &serde_json::Error, what: &str) -> Located {
    let text = String::from_utf8_lossy(bytes);
    let mut message = error.to_string();
    // serde_json appends " at line L column C"; we print those in front, as compilers do.
    if let Some(at) = message.rfind(" at line ") {
        message.truncate(at);
    }
    if let Some(line) = conflict_marker_line(&text) {
        // A recording can be made again; a fixture is the test itself, and deleting it deletes
        // the test.
        let fix = if what == "recording" {
            "resolve the conflict, or delete the file and re-record it"
        } else {
            "resolve the conflict: keep the side you want and remove the <<<<<<<, ======= and >>>>>>> lines"
        };
        return Located {
            file: file.to_path_buf(),
            line,
            column: 1,
            message: format!("this {what} holds merge-conflict markers (<<<<<<<): {fix}"),
        };
    }
    if error.is_eof() {
        message.push_str(&format!(" (the {what} is cut off or empty)"));
    }
    if error.classify() == serde_json::error::Category::Data {
        let key = crate::messages::json_path_at(&text, error.line(), error.column());
        message = crate::messages::in_words(&message, &key, crate::messages::Syntax::Json);
    }
    let column = if message.starts_with("unknown field") {
        key_start_column(&text, error.line(), error.column())
    } else {
        error.column()
    };
    Located {
        file: file.to_path_buf(),
        line: error.line(),
        column,
        message,
    }
}

/// serde_json places an unknown key's error on its closing quote; editors and people look for
/// the key's start, so point at the opening quote.
fn key_start_column(text: &str, line: usize, column: usize) -> usize {
    let Some(line_text) = text.lines().nth(line.saturating_sub(1)) else {
        return column;
    };
    let chars: Vec<char> = line_text.chars().collect();
    let end = column.min(chars.len());
    // The closing quote is at `end - 1` (0-based); find the opening one before it.
    match chars[..end.saturating_sub(1)]
        .iter()
        .rposition(|&c| c == '"')
    {
        Some(open) => open + 1,
        None => column,
    }
}

/// The 1-based line of the first merge-conflict marker, if any.
pub fn conflict_marker_line(text: &str) -> Option<usize> {
    text.lines()
        .position(|l| l.starts_with("<<<<<<< ") || l == "<<<<<<<")
        .map(|n| n + 1)
}

/// `path` relative to `root`, `/`-separated whatever the platform: the form of every path the
/// product prints or stores. A path outside `root` is given whole.
pub fn relative_slash(root: &Path, path: &Path) -> String {
    let relative = path.strip_prefix(root).unwrap_or(path);
    // Most paths are in that form already (relative, no empty or `.` part): taken as they are
    // rather than rebuilt a part at a time (a few per case, 2 % of a no-model run's time).
    #[cfg(unix)]
    if let Some(text) = relative.to_str() {
        if text.split('/').all(|part| !part.is_empty() && part != ".") {
            return text.to_string();
        }
    }
    relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// 1-based line and column of a byte offset in `text`.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map(|n| n + 1).unwrap_or(0);
    (line, before[line_start..].chars().count() + 1)
}

/// Reads a whole file whose size was just taken (by a `stat` of the caller's), without the
/// `statx` that `std::fs::read` makes to size its buffer: one read fills a buffer of that size
/// and a second finds the end. A file that changed size since is still read whole.
pub fn read_sized(file: &Path, size: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut handle = std::fs::File::open(file)?;
    // One byte more than the size, so that finding the end needs no growing.
    let mut bytes = vec![0; usize::try_from(size).unwrap_or(0).saturating_add(1)];
    let mut filled = 0;
    loop {
        if filled == bytes.len() {
            bytes.resize(bytes.len() * 2, 0);
        }
        match handle.read(&mut bytes[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    bytes.truncate(filled);
    Ok(bytes)
}

/// A small value the processes of one run share (the live-call limit, the dollars spent):
/// `<run>.<ext>` beside `<run>.lock`, whose OS lock (released by the kernel when its holder dies)
/// keeps read-modify-write updates apart.
pub struct RunFile {
    /// The value's file.
    pub value: PathBuf,
    /// The file whose lock is taken.
    pub lock: PathBuf,
}

impl RunFile {
    /// The file `name.ext` in `dir` (a run's folder), and its lock `name.lock`; `name` is a
    /// plain file name (`budget`, `rate-limit`).
    pub fn new(dir: &Path, name: &str, ext: &str) -> RunFile {
        RunFile {
            value: dir.join(format!("{name}.{ext}")),
            lock: dir.join(format!("{name}.lock")),
        }
    }

    /// The value's text; `None` before the first update.
    pub fn read(&self) -> Option<String> {
        std::fs::read_to_string(&self.value).ok()
    }

    /// Replaces the value with the text `f` makes of the current one, under the lock; returns
    /// what `f` returns beside the text.
    pub fn update<T>(&self, f: impl FnOnce(Option<String>) -> (String, T)) -> std::io::Result<T> {
        if let Some(dir) = self.lock.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let lock = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&self.lock)?;
        // Released when `lock` is closed, and by the kernel if this process dies holding it.
        lock.lock()?;
        let (text, made) = f(self.read());
        replace_file(&self.value, text.as_bytes(), false)?;
        Ok(made)
    }
}

/// Writes `bytes` to `file` through a temp file in the same folder and a rename.
pub fn write_atomic(file: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace_file(file, bytes, true)
}

/// Replaces `file` through a temp file and a rename; `durable` also syncs the data to disk
/// before the rename (recordings are; derived files such as reports need not be).
pub fn replace_file(file: &Path, bytes: &[u8], durable: bool) -> std::io::Result<()> {
    replace_file_with(file, durable, |f| f.write_all(bytes))
}

/// Replaces `file` as [`replace_file`] does, with what `write` writes (through a buffer) to the
/// temp file: for contents built piece by piece, never held whole in memory.
pub fn replace_file_with(
    file: &Path,
    durable: bool,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    replace_with(file, durable, |from, to| std::fs::rename(from, to), write)
}

/// Replaces `file`, a derived file (a report), as [`replace_file_with`] does, but puts the new
/// file in place with [`rename_derived`].
pub fn replace_derived_with(
    file: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    replace_with(file, false, rename_derived, write).map(drop)
}

/// Replaces `file`, a derived file, as [`replace_derived_with`] does, unless it already holds
/// exactly what `write` wrote: then the new file is removed and the old one left as it was (its
/// time too). Returns whether `file` was replaced. The two are compared a buffer at a time.
pub fn replace_derived_if_changed(
    file: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> std::io::Result<bool> {
    replace_with(
        file,
        false,
        |from, to| {
            if same_contents(from, to)? {
                std::fs::remove_file(from)?;
                return Ok(false);
            }
            rename_derived(from, to).map(|()| true)
        },
        write,
    )
}

/// Whether the files at `a` and `b` hold the same bytes (`false` when `b` is missing).
fn same_contents(a: &Path, b: &Path) -> std::io::Result<bool> {
    let (Ok(meta_a), Ok(meta_b)) = (std::fs::metadata(a), std::fs::metadata(b)) else {
        return Ok(false);
    };
    if meta_a.len() != meta_b.len() {
        return Ok(false);
    }
    let (mut a, mut b) = (std::fs::File::open(a)?, std::fs::File::open(b)?);
    let (mut buf_a, mut buf_b) = (vec![0u8; 256 * 1024], vec![0u8; 256 * 1024]);
    loop {
        let n = read_full(&mut a, &mut buf_a)?;
        let m = read_full(&mut b, &mut buf_b)?;
        if n != m || buf_a[..n] != buf_b[..m] {
            return Ok(false);
        }
        if n == 0 {
            return Ok(true);
        }
    }
}

/// Fills `buf` from `file` as far as it goes; returns how much was read.
fn read_full(file: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match std::io::Read::read(file, &mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Puts `from` in place of `to` when nothing is lost with the old `to` (a report, the standing
/// results the journals are folded into): the old one is removed first. On ext4 (`auto_da_alloc`, its default), a rename over an existing file starts
/// writing the new one to disk on the renaming thread (measured: 3 ms for 3 MB, against 0.15 ms
/// for a rename onto a free name), and a report's end renames several such files. A reader may
/// find no file between the two calls, never a half-written one. What is given up is ext4's
/// guard for a rename over a file after a power loss (the new file's data was not synced): these
/// are a run's derived files, which the next run writes again.
pub fn rename_derived(from: &Path, to: &Path) -> std::io::Result<()> {
    // Nothing to put in its place: the old file stays.
    std::fs::symlink_metadata(from)?;
    match std::fs::remove_file(to) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    std::fs::rename(from, to)
}

/// Writes `file`'s new content to a temp file and hands both to `put`, which puts the new one in
/// place (or not) and returns what the caller is told.
fn replace_with<T>(
    file: &Path,
    durable: bool,
    put: impl FnOnce(&Path, &Path) -> std::io::Result<T>,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> std::io::Result<T> {
    let dir = file.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "recording".into());
    // The pid and a counter make the name unique among writers; the leading dot and the suffix
    // keep it out of fixture discovery and orphan checks.
    static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".{name}.{}-{n}.tmp", std::process::id()));
    let result = (|| {
        let mut f = std::io::BufWriter::with_capacity(64 * 1024, std::fs::File::create(&tmp)?);
        write(&mut f)?;
        let f = f.into_inner().map_err(|e| e.into_error())?;
        if durable {
            f.sync_all()?;
        }
        put(&tmp, file)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A path already in the stored form is taken as it is; any other is rebuilt part by part:
    /// the same text either way.
    #[test]
    fn relative_paths_are_the_same_whichever_way_they_are_made() {
        let parts = |root: &Path, path: &Path| {
            let relative = path.strip_prefix(root).unwrap_or(path);
            let parts: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            parts.join("/")
        };
        let root = Path::new("/work/demo");
        for path in [
            "/work/demo/fixtures/a.json",
            "/work/demo/fixtures//a.json",
            "/work/demo/fixtures/./a.json",
            "/work/demo/fixtures/",
            "/work/demo/./fixtures/a.json",
            "/work/demo/../x/a.json",
            "/work/demo",
            "/elsewhere/a.json",
            "relative/a.json",
            "./relative/a.json",
            "",
        ] {
            let path = Path::new(path);
            assert_eq!(relative_slash(root, path), parts(root, path), "{path:?}");
        }
    }

    #[test]
    fn a_derived_file_takes_the_old_ones_place_or_a_free_name() {
        let dir = tempfile::tempdir().unwrap();
        let (new, target) = (dir.path().join(".new.tmp"), dir.path().join("report.json"));
        std::fs::write(&new, "new").unwrap();
        rename_derived(&new, &target).unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        std::fs::write(&new, "newer").unwrap();
        rename_derived(&new, &target).unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "newer");
        assert!(!new.exists());
        // Nothing to put in place: the old file stays.
        assert!(rename_derived(&new, &target).is_err());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "newer");
        replace_derived_with(&target, |out| out.write_all(b"written")).unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "written");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "no temp file is left");
    }

    #[test]
    fn a_file_is_read_whole_whatever_size_was_taken() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f.json");
        let text: Vec<u8> = (0..20_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&file, &text).unwrap();
        // The size as taken, a size from before the file grew, one from before it shrank.
        for size in [20_000, 0, 7, 19_999, 1 << 20] {
            assert_eq!(read_sized(&file, size).unwrap(), text, "size {size}");
        }
        std::fs::write(&file, b"").unwrap();
        assert!(read_sized(&file, 10).unwrap().is_empty());
        let missing = read_sized(&dir.path().join("gone.json"), 10).unwrap_err();
        assert_eq!(missing.kind(), std::io::ErrorKind::NotFound);
    }
}
