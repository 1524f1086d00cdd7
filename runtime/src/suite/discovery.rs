//! What the harness must know about every fixture before the first test starts: whether its test
//! is ignored (a non-`active` `status`). Finding out means reading the file, and reading 5,000
//! fixtures one after another before any test runs costs more than the tests' own parsing on the
//! test threads; so the answer is kept between runs in a cache under `target/proposal-eval/`,
//! keyed by each file's size, modification and change times and inode, as git's index does.
//!
//! A file whose stamp differs from the cached one is read again. A file changed within the last
//! two seconds is read but not cached (a rewrite within the file system's timestamp granularity
//! would otherwise keep its stamp), so the cache never answers for a file that might have changed
//! since. A cache that cannot be read is rebuilt; one that cannot be written costs only speed.

use crate::suite::fixture::FixturePath;
use crate::suite::{PendingCase, Suite};
use std::path::PathBuf;

/// The first line of a cache file; a file with another one is ignored and rebuilt. It names the
/// version, since whether a fixture parses (and so whether it is ignored) may change with it.
const HEADER: &str = concat!(
    "proposal-eval ",
    env!("CARGO_PKG_VERSION"),
    " discovery cache 1"
);
/// Files changed more recently than this are not cached (see the module docs).
const SETTLE_NANOS: i128 = 2_000_000_000;

/// What identifies a version of a file without reading it.
///
/// Times are nanoseconds since the epoch in an `i64` (until the year 2262; a file stamped later
/// has no stamp and is read): 40 bytes an `Option<Stamp>` instead of 64 with `i128`, which at
/// 100,000 fixtures is 2.4 MB less at the start of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stamp {
    size: u64,
    mtime: i64,
    ctime: i64,
    inode: u64,
}

impl Stamp {
    /// The file's size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    #[cfg(unix)]
    fn of(path: &std::path::Path) -> Option<Stamp> {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(path).ok()?;
        let nanos = |secs: i64, nsec: i64| secs.checked_mul(1_000_000_000)?.checked_add(nsec);
        Some(Stamp {
            size: meta.size(),
            mtime: nanos(meta.mtime(), meta.mtime_nsec())?,
            ctime: nanos(meta.ctime(), meta.ctime_nsec())?,
            inode: meta.ino(),
        })
    }

    /// Without a change time and an inode a stamp is not trustworthy: nothing is cached.
    #[cfg(not(unix))]
    fn of(_path: &std::path::Path) -> Option<Stamp> {
        None
    }

    /// The stamp of `path`, stat'ed by name in its folder, which `open` holds open for the next
    /// file of the same folder.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn in_folder(path: &std::path::Path, open: &mut OpenFolder) -> Option<Stamp> {
        let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
            return Stamp::of(path);
        };
        if open.as_ref().is_none_or(|(d, _)| d != dir) {
            *open = Some((dir.to_path_buf(), crate::sys::Folder::open(dir)));
        }
        let Some((_, Some(folder))) = open.as_ref() else {
            return Stamp::of(path);
        };
        if name.len() > 255 {
            return Stamp::of(path);
        }
        let stat = folder.stat(name)?;
        Some(Stamp {
            size: stat.size,
            mtime: i64::try_from(stat.mtime).ok()?,
            ctime: i64::try_from(stat.ctime).ok()?,
            inode: stat.inode,
        })
    }

    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    fn in_folder(path: &std::path::Path, _open: &mut OpenFolder) -> Option<Stamp> {
        Stamp::of(path)
    }

    /// Whether the file last changed before `settled_before` (nanoseconds since the epoch), so
    /// the stamp can be trusted on a later run.
    fn settled(&self, settled_before: i128) -> bool {
        i128::from(self.mtime.max(self.ctime)) < settled_before
    }
}

/// The folder [`Stamp::in_folder`] holds open, and its path.
#[cfg(any(target_os = "linux", target_os = "android"))]
type OpenFolder = Option<(std::path::PathBuf, Option<crate::sys::Folder>)>;
#[cfg(not(any(target_os = "linux", target_os = "android")))]
type OpenFolder = Option<(std::path::PathBuf, ())>;

/// The cached answers for one suite, and the answers of this run.
pub(crate) struct StatusCache {
    file: PathBuf,
    /// The cached answers, each with whether this run found its file unchanged.
    old: Cached,
    /// This run's answers for files it read (changed or new), as the cache's lines, in the
    /// order discovery asked (sorted by path). Unchanged files are marked in `old` instead, so a
    /// run over an unchanged suite holds each path once; no cached line has the path of a new
    /// one (a file is read only when its line's stamp differs).
    new: String,
    /// Files this run read, whether their answers could be cached or not (too fresh, a failed
    /// read).
    read: usize,
    /// Files changed at or after this time (nanoseconds since the epoch) are not cached.
    settled_before: i128,
    /// How many files this run found unchanged: when every cached file is, there is nothing
    /// to write.
    hits: usize,
}

impl StatusCache {
    /// The cache of `suite` for the running test binary (empty when there is none yet).
    pub fn open(suite: &Suite) -> StatusCache {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as i128)
            .unwrap_or(0);
        StatusCache::at(cache_file(suite), now - SETTLE_NANOS)
    }

    fn at(file: PathBuf, settled_before: i128) -> StatusCache {
        let old = std::fs::read_to_string(&file)
            .map(Cached::read)
            .unwrap_or_default();
        StatusCache {
            file,
            new: String::new(),
            read: 0,
            old,
            settled_before,
            hits: 0,
        }
    }

    /// The stamps of the fixtures `relative` to `dir`, in order. A `stat` is a system call of a
    /// few microseconds, which for a large suite adds up before the first test can start: from
    /// 512 files on they are taken on as many threads as there are cores (at most 4). Each path
    /// is made as its file is stat'ed: no list of 100,000 absolute paths is held.
    pub fn stamps(dir: &std::path::Path, relative: &[String]) -> Vec<Option<Stamp>> {
        // Each thread fills its own part of one vector: a thread allocates only the path it
        // stats, freed before the next (what a thread holds stays in a malloc arena of its own
        // after it ends).
        let mut stamps = vec![None; relative.len()];
        let threads = crate::suite::threads_for(relative.len(), 512);
        crate::suite::side_by_side(&mut stamps, threads, |start, out| {
            let mut open = None;
            for (relative, stamp) in relative[start..].iter().zip(out) {
                *stamp = Stamp::in_folder(&dir.join(relative), &mut open);
            }
        });
        stamps
    }

    /// The fixture, ready for its test: from the cache when its file is unchanged (read later,
    /// on the test's thread), else read now to find its status.
    pub fn pending(&mut self, suite: &Suite, path: FixturePath) -> PendingCase {
        let Some(stamp) = Stamp::of(&path.absolute) else {
            return PendingCase::read(suite, path);
        };
        if let Some(ignored) = self.hit(&path.relative, stamp) {
            return PendingCase::Unread(path.into(), ignored, stamp.size);
        }
        let relative = path.relative.clone();
        let pending = PendingCase::read(suite, path);
        self.note(&relative, stamp, &pending);
        pending
    }

    /// The cached answer for the file at `relative` (whether its test is ignored), when the
    /// file is unchanged since it was cached.
    pub fn hit(&mut self, relative: &str, stamp: Stamp) -> Option<bool> {
        let i = self.old.find(relative)?;
        let (cached, ignored) = self.old.answer(i)?;
        if cached != stamp {
            return None;
        }
        if !self.old.seen[i] {
            self.hits += 1;
        }
        self.old.seen[i] = true;
        Some(ignored)
    }

    /// Notes the answer found by reading the file at `relative` (stamped `stamp`), for the
    /// cache to keep. Notes come in path order, as the cache's lines are.
    pub fn note(&mut self, relative: &str, stamp: Stamp, pending: &PendingCase) {
        // A read that failed (a passing I/O error) says nothing about the file: not cached.
        let cacheable = stamp.settled(self.settled_before)
            && !pending.read_failed()
            && !relative.contains(['\n', '\r']);
        self.read += 1;
        if cacheable {
            write_line(&mut self.new, relative, stamp, pending.ignored());
        }
    }

    /// Writes the cache when this run's answers differ from the cached ones. `unseen` are the
    /// suite's fixtures this run did not look at: their cached answers are kept. A cached file
    /// neither seen nor unseen is gone from the suite, and so from the cache.
    pub fn save(self, unseen: &[String]) {
        let mut old = self.old;
        let mut unseen_cached = 0;
        for relative in unseen {
            if let Some(i) = old.find(relative) {
                unseen_cached += usize::from(!old.seen[i]);
                old.seen[i] = true;
            }
        }
        if self.read == 0 && self.hits + unseen_cached == old.len() {
            return;
        }
        let kept: Vec<usize> = (0..old.len())
            .filter(|&i| old.seen[i] && old.answer(i).is_some())
            .collect();
        if kept.len() == old.len() && self.new.is_empty() {
            return;
        }
        // The kept lines and the new ones, each sorted by path: merged in order.
        let mut text = String::with_capacity(HEADER.len() + 1 + old.text.len() + self.new.len());
        text.push_str(HEADER);
        text.push('\n');
        let mut kept = kept.into_iter().peekable();
        for line in self.new.split_inclusive('\n') {
            let relative = line
                .split_once('\t')
                .map_or("", |(_, r)| r.trim_end_matches('\n'));
            while let Some(&i) = kept.peek().filter(|&&i| old.relative(i) < relative) {
                text.push_str(old.line(i));
                text.push('\n');
                kept.next();
            }
            text.push_str(line);
        }
        for i in kept {
            text.push_str(old.line(i));
            text.push('\n');
        }
        let _ = crate::files::replace_file(&self.file, text.as_bytes(), false);
    }
}

/// Appends the cache line of `relative`: `size mtime ctime inode runs|ignored<TAB>relative`.
fn write_line(text: &mut String, relative: &str, stamp: Stamp, ignored: bool) {
    use std::fmt::Write as _;
    let answer = if ignored { "ignored" } else { "runs" };
    let _ = writeln!(
        text,
        "{} {} {} {} {answer}\t{relative}",
        stamp.size, stamp.mtime, stamp.ctime, stamp.inode
    );
}

/// `target/proposal-eval/discovery/<package>/<binary>/<hash of the suite's folders>.txt`: one
/// cache per test binary and suite, so binaries never share (or fight over) one.
fn cache_file(suite: &Suite) -> PathBuf {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    hasher.update(suite.dir.as_os_str().as_encoded_bytes());
    hasher.update([0]);
    hasher.update(suite.recordings.as_os_str().as_encoded_bytes());
    let hash = format!("{:x}", hasher.finalize());
    let hash = &hash[..16];
    crate::layout::discovery_dir().join(format!("{}-{hash}.txt", suite.name))
}

/// A cache file as read: its text, and where each line's path and answer are in it. Nothing is
/// copied or parsed until a fixture asks (the usual run asks for every line, in the order the
/// file lists them: sorted by path, as discovery finds them).
#[derive(Default)]
struct Cached {
    text: String,
    /// Each line's start, the tab before its path, and its end; sorted by path.
    lines: Vec<(u32, u32, u32)>,
    /// Per line: whether this run found its file unchanged (or did not look at it).
    seen: Vec<bool>,
    /// The line the last [`find`](Cached::find) found: the next one is usually the line after.
    cursor: usize,
}

impl Cached {
    /// The lines of a cache file: `size mtime ctime inode runs|ignored<TAB>relative path`. A file
    /// with another first line is not a cache (nothing is cached); a line without a tab is
    /// skipped, and one whose answer does not read is skipped when asked for (its fixture is
    /// then read again).
    fn read(text: String) -> Cached {
        let header_end = match text.split_once('\n') {
            Some((HEADER, _)) => HEADER.len() + 1,
            _ => return Cached::default(),
        };
        // A cache over 4 GiB is not one this code wrote.
        if u32::try_from(text.len()).is_err() {
            return Cached::default();
        }
        let mut lines = Vec::with_capacity(text.len() / 64);
        let mut start = header_end;
        while start < text.len() {
            let end = text[start..].find('\n').map_or(text.len(), |n| start + n);
            if let Some(tab) = text[start..end].find('\t') {
                lines.push((start as u32, (start + tab) as u32, end as u32));
            }
            start = end + 1;
        }
        let path = |&(_, tab, end): &(u32, u32, u32)| &text[tab as usize + 1..end as usize];
        if !lines.windows(2).all(|w| path(&w[0]) < path(&w[1])) {
            lines.sort_by(|a, b| path(a).cmp(path(b)));
            lines.dedup_by(|a, b| path(a) == path(b));
        }
        let seen = vec![false; lines.len()];
        Cached {
            text,
            lines,
            seen,
            cursor: 0,
        }
    }

    fn len(&self) -> usize {
        self.lines.len()
    }

    /// Line `i`, without its newline.
    fn line(&self, i: usize) -> &str {
        let (start, _, end) = self.lines[i];
        &self.text[start as usize..end as usize]
    }

    /// The path of line `i`.
    fn relative(&self, i: usize) -> &str {
        let (_, tab, end) = self.lines[i];
        &self.text[tab as usize + 1..end as usize]
    }

    /// The line of `relative`: at the cursor or right after it when asked in the file's order,
    /// else by binary search.
    fn find(&mut self, relative: &str) -> Option<usize> {
        for i in [self.cursor, self.cursor + 1] {
            if i < self.len() && self.relative(i) == relative {
                self.cursor = i;
                return Some(i);
            }
        }
        let i = self
            .lines
            .binary_search_by(|line| {
                let (_, tab, end) = *line;
                self.text[tab as usize + 1..end as usize].cmp(relative)
            })
            .ok()?;
        self.cursor = i;
        Some(i)
    }

    /// The stamp and answer of line `i`, when they read.
    fn answer(&self, i: usize) -> Option<(Stamp, bool)> {
        let (start, tab, _) = self.lines[i];
        let mut parts = self.text[start as usize..tab as usize].split(' ');
        let mut next = || parts.next();
        let stamp = Stamp {
            size: next()?.parse().ok()?,
            mtime: next()?.parse().ok()?,
            ctime: next()?.parse().ok()?,
            inode: next()?.parse().ok()?,
        };
        let ignored = match next()? {
            "ignored" => true,
            "runs" => false,
            _ => return None,
        };
        next().is_none().then_some((stamp, ignored))
    }
}

/// The cache file's lines that read, by path (tests).
#[cfg(test)]
fn parse(text: &str) -> std::collections::HashMap<String, (Stamp, bool)> {
    let cached = Cached::read(text.to_string());
    (0..cached.len())
        .filter_map(|i| Some((cached.relative(i).to_string(), cached.answer(i)?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// What discovery hands the harness for each fixture: `Some(ignored)` from the cache, `None`
    /// when the file was read.
    fn run_once(
        suite: &Suite,
        cache: &Path,
        settled_before: i128,
    ) -> Vec<(String, Option<bool>, bool)> {
        let mut status = StatusCache::at(cache.to_path_buf(), settled_before);
        let found = suite.discover().unwrap();
        let out = found
            .into_iter()
            .map(|path| {
                let relative = path.relative.clone();
                let pending = status.pending(suite, path);
                let cached = matches!(pending, PendingCase::Unread(..)).then(|| pending.ignored());
                (relative, cached, pending.ignored())
            })
            .collect();
        status.save(&[]);
        out
    }

    /// Past the year 2262 a time does not fit an `i64` of nanoseconds: the file has no stamp
    /// (it is read, and not cached), by either way of taking one.
    #[cfg(unix)]
    #[test]
    fn a_file_changed_after_2262_has_no_stamp() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("future.json");
        std::fs::write(&file, "{}").unwrap();
        let year_2300 = std::time::UNIX_EPOCH + std::time::Duration::from_secs(10_413_792_000);
        let times = std::fs::FileTimes::new().set_modified(year_2300);
        let handle = std::fs::File::options().write(true).open(&file).unwrap();
        if handle.set_times(times).is_err() {
            return; // a file system that cannot hold the time
        }
        drop(handle);
        assert_eq!(Stamp::of(&file), None);
        assert_eq!(
            StatusCache::stamps(dir.path(), &["future.json".to_string()]),
            vec![None]
        );
        // A file of today has one.
        std::fs::write(dir.path().join("now.json"), "{}").unwrap();
        assert!(Stamp::of(&dir.path().join("now.json")).is_some());
    }

    #[cfg(unix)]
    #[test]
    fn stamps_taken_side_by_side_are_each_files_own_in_order() {
        let dir = tempfile::tempdir().unwrap();
        // Enough files for several threads; a missing one in the middle has no stamp.
        let mut paths = Vec::new();
        for i in 0..1_500 {
            let file = dir.path().join(format!("f{i}.json"));
            if i != 700 {
                std::fs::write(&file, "x".repeat(i % 97)).unwrap();
            }
            paths.push(file);
        }
        let relative: Vec<String> = (0..paths.len()).map(|i| format!("f{i}.json")).collect();
        let stamps = StatusCache::stamps(dir.path(), &relative);
        assert_eq!(stamps.len(), paths.len());
        for (i, (path, stamp)) in paths.iter().zip(&stamps).enumerate() {
            assert_eq!(*stamp, Stamp::of(path), "{}", path.display());
            assert_eq!(stamp.map(|s| s.size), (i != 700).then_some((i % 97) as u64));
        }
        assert!(StatusCache::stamps(dir.path(), &[]).is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn unchanged_files_are_answered_from_the_cache_and_changed_ones_are_read() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("s");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.json"), r#"{"input": 1}"#).unwrap();
        std::fs::write(dir.join("b.json"), r#"{"input": 1, "status": "draft"}"#).unwrap();
        let suite = Suite::new(root.path().into(), Path::new("s"), None, None, None);
        let cache = root.path().join("cache/s.txt");
        let everything_settled = i128::MAX;

        let first = run_once(&suite, &cache, everything_settled);
        assert_eq!(
            first,
            [
                ("a.json".into(), None, false),
                ("b.json".into(), None, true)
            ]
        );
        let second = run_once(&suite, &cache, everything_settled);
        assert_eq!(
            second,
            [
                ("a.json".into(), Some(false), false),
                ("b.json".into(), Some(true), true)
            ]
        );

        // An edit changes the stamp: the file is read again and its new status counts.
        std::fs::write(dir.join("b.json"), r#"{"input": 2, "status": "active"}"#).unwrap();
        std::fs::write(dir.join("c.json"), r#"{"status": "needs_human_input"}"#).unwrap();
        let third = run_once(&suite, &cache, everything_settled);
        assert_eq!(
            third,
            [
                ("a.json".into(), Some(false), false),
                ("b.json".into(), None, false),
                ("c.json".into(), None, true)
            ]
        );

        // The kept line (a) and the new ones (b read again, c new) are written in path order.
        let text = std::fs::read_to_string(&cache).unwrap();
        let paths: Vec<&str> = text
            .lines()
            .skip(1)
            .map(|l| l.split_once('\t').unwrap().1)
            .collect();
        assert_eq!(paths, ["a.json", "b.json", "c.json"]);

        // Files changed too recently to trust their stamps are never cached.
        std::fs::remove_file(&cache).unwrap();
        let nothing_settled = 0;
        run_once(&suite, &cache, nothing_settled);
        assert!(parse(&std::fs::read_to_string(&cache).unwrap_or_default()).is_empty());
        let again = run_once(&suite, &cache, nothing_settled);
        assert!(
            again.iter().all(|(_, cached, _)| cached.is_none()),
            "{again:?}"
        );

        // A cache that is not one is ignored and rewritten.
        std::fs::write(&cache, "garbage").unwrap();
        let rebuilt = run_once(&suite, &cache, everything_settled);
        assert!(rebuilt.iter().all(|(_, cached, _)| cached.is_none()));
        assert_eq!(parse(&std::fs::read_to_string(&cache).unwrap()).len(), 3);
    }

    #[cfg(unix)]
    #[test]
    fn answers_of_files_a_run_did_not_look_at_are_kept_and_gone_files_dropped() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("s");
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["a", "b", "c"] {
            std::fs::write(dir.join(format!("{name}.json")), r#"{"status": "draft"}"#).unwrap();
        }
        let suite = Suite::new(root.path().into(), Path::new("s"), None, None, None);
        let cache = root.path().join("cache/s.txt");
        run_once(&suite, &cache, i128::MAX);
        assert_eq!(parse(&std::fs::read_to_string(&cache).unwrap()).len(), 3);

        // A run that looks at `a` only (an exact filter), with `c` deleted: `b` stays cached.
        std::fs::remove_file(dir.join("c.json")).unwrap();
        let mut status = StatusCache::at(cache.clone(), i128::MAX);
        let a = FixturePath {
            relative: "a.json".into(),
            absolute: dir.join("a.json"),
        };
        assert!(matches!(
            status.pending(&suite, a),
            PendingCase::Unread(_, true, _)
        ));
        status.save(&["b.json".to_string()]);
        let kept = parse(&std::fs::read_to_string(&cache).unwrap());
        let mut names: Vec<&str> = kept.keys().map(String::as_str).collect();
        names.sort();
        assert_eq!(names, ["a.json", "b.json"]);
    }

    #[test]
    fn lines_are_found_in_the_files_order_or_any_other() {
        // Written out of order by hand, one path twice: sorted, the first kept.
        let text = format!(
            "{HEADER}\n1 2 3 4 runs\tb.json\n1 2 3 5 ignored\ta.json\n1 2 3 6 runs\tc/d.json\n\
             9 9 9 9 runs\ta.json\nno tab here\n"
        );
        let mut cached = Cached::read(text);
        assert_eq!(cached.len(), 3);
        let order = [
            "a.json", "b.json", "c/d.json", "a.json", "c/d.json", "b.json",
        ];
        for relative in order {
            let i = cached.find(relative).unwrap();
            assert_eq!(cached.relative(i), relative);
        }
        let a = cached.find("a.json").unwrap();
        assert_eq!(
            cached
                .answer(a)
                .map(|(stamp, ignored)| (stamp.inode, ignored)),
            Some((5, true))
        );
        assert_eq!(cached.find("c.json"), None);
        assert_eq!(cached.find(""), None);
        assert_eq!(Cached::read(String::new()).len(), 0);
        assert_eq!(Cached::read(HEADER.to_string()).len(), 0);
    }

    #[test]
    fn lines_round_trip_and_bad_lines_are_skipped() {
        let text = format!(
            "{HEADER}\n10 1700000000000000001 1700000000000000002 42 ignored\tdrafts/a b.json\n\
             garbage\n1 2 3 runs\tshort.json\n5 6 7 8 maybe\tx.json\n3 4 5 6 runs\tok.json\n"
        );
        let map = parse(&text);
        assert_eq!(map.len(), 2, "{map:?}");
        assert_eq!(
            map["drafts/a b.json"],
            (
                Stamp {
                    size: 10,
                    mtime: 1_700_000_000_000_000_001,
                    ctime: 1_700_000_000_000_000_002,
                    inode: 42
                },
                true
            )
        );
        assert!(!map["ok.json"].1);
        assert!(parse("another header\n3 4 5 6 runs\tok.json\n").is_empty());
    }
}
