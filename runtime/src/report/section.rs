//! One entry folder's part of the report, kept beside its `merged.jsonl` so that a rebuild after
//! a run that did not touch the folder copies the part instead of reading, checking and
//! rendering every line of it again: the end of a run then costs what the run changed, not what
//! the whole target folder holds (a small suite's run beside a large suite's old results).
//!
//! A folder's section is its cases' lines as `report.json` lists them, its table rows, its
//! failure sections (three part files), and a meta file with its sums and what it was made from.
//! The meta is written last and names each part by size and inode, so a section is used only
//! whole and only while it matches, never a mix of two rebuilds. It is used again when:
//!
//! - the folder holds only its `merged.jsonl`, unchanged since the section was made (no writer
//!   has added a file, and the merged file is the one it was made from);
//! - every folder that held one of its fixtures has the same modification time, so no fixture
//!   was deleted (a gone fixture's result leaves the report), and its test target still exists;
//! - its lines' "older" marks still hold: the report's latest run is the one it was made for, or
//!   neither that run nor the new one is the run of any of its lines (then all are older).
//!
//! Otherwise the folder is read and rendered as before, and its section made again.

use super::{SuiteReport, Totals};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The meta file's name in an entry folder; the parts are named after it.
const META: &str = ".section.meta";
/// The part files, in the order of [`Meta::parts`].
pub(super) const PARTS: [&str; 3] = [".section.json", ".section.rows", ".section.failures"];
/// A section made by another version is made again: rendering may differ between versions.
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " section 2");
/// A section whose lines come from more runs than this is not kept (the older-mark check walks
/// the list).
pub(super) const MAX_RUNS: usize = 64;

/// What identifies a version of a file without reading it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct FileStamp {
    size: u64,
    modified: i128,
    inode: u64,
}

impl FileStamp {
    pub(super) fn of(path: &Path) -> Option<FileStamp> {
        let meta = std::fs::metadata(path).ok()?;
        Some(FileStamp {
            size: meta.len(),
            modified: modified(&meta)?,
            inode: inode(&meta)?,
        })
    }
}

/// Nanoseconds since the epoch.
fn modified(meta: &std::fs::Metadata) -> Option<i128> {
    let since = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    Some(since.as_nanos() as i128)
}

#[cfg(unix)]
fn inode(meta: &std::fs::Metadata) -> Option<u64> {
    Some(std::os::unix::fs::MetadataExt::ino(meta))
}

/// Without an inode a replaced file cannot be told from the one before: nothing is kept.
#[cfg(not(unix))]
fn inode(_meta: &std::fs::Metadata) -> Option<u64> {
    None
}

/// A folder's section, as its meta file says.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Meta {
    version: String,
    /// The folder's `merged.jsonl` it was made from.
    merged: FileStamp,
    /// Its three part files.
    parts: [FileStamp; 3],
    /// The key of its first case: where the section goes among the others.
    pub first_key: String,
    /// Its package and binary (every line's), for the test target check.
    package: String,
    binary: String,
    /// Its most recent line's time and run.
    pub latest: Option<(DateTime<Utc>, Option<String>)>,
    /// The runs of its lines, and whether a line has none (written before runs were recorded).
    runs: Vec<String>,
    #[serde(default)]
    runless: bool,
    /// The report's latest run when it was made: its lines' "older" marks are against it.
    made_for: Option<String>,
    /// The folders of its fixtures and their modification times then.
    dirs: Vec<(PathBuf, i128)>,
    /// The crates its fixtures are in.
    roots: Vec<PathBuf>,
    /// Its rows, and the sum of their keys' [`key_hash`]es: which cases its merged file holds.
    pub rows: usize,
    keys: u64,
    pub any_failure: bool,
    pub totals: Totals,
    pub suites: Vec<SuiteReport>,
}

/// A section ready to be used: its meta and where its parts are.
pub(super) struct Section {
    pub meta: Meta,
    pub folder: PathBuf,
}

impl Section {
    /// The part file `index` of [`PARTS`].
    pub fn part(&self, index: usize) -> PathBuf {
        self.folder.join(PARTS[index])
    }

    /// The section kept in `folder`, if it still matches the folder (see the module docs; the
    /// older-mark check waits for the report's latest run, [`Meta::marks_hold`]).
    pub fn load(folder: &Path) -> Option<Section> {
        let text = std::fs::read(folder.join(META)).ok()?;
        let meta: Meta = serde_json::from_slice(&text).ok()?;
        if meta.version != VERSION || FileStamp::of(&folder.join(super::MERGED))? != meta.merged {
            return None;
        }
        for (name, stamp) in PARTS.iter().zip(&meta.parts) {
            if FileStamp::of(&folder.join(name))? != *stamp {
                return None;
            }
        }
        for (dir, time) in &meta.dirs {
            let meta = std::fs::metadata(dir).ok()?;
            if modified(&meta)? != *time {
                return None;
            }
        }
        if meta
            .roots
            .iter()
            .any(|root| !super::target_exists(root, &meta.package, &meta.binary))
        {
            return None;
        }
        Some(Section {
            meta,
            folder: folder.to_path_buf(),
        })
    }

    /// How many cases the merged file of `folder` holds and the sum of their keys' hashes, as
    /// its section says while the file is the one the section was made from.
    /// Also the time of its most recent line.
    pub fn key_set(folder: &Path) -> Option<(usize, u64, Option<DateTime<Utc>>)> {
        let text = std::fs::read(folder.join(META)).ok()?;
        let meta: Meta = serde_json::from_slice(&text).ok()?;
        let current =
            meta.version == VERSION && FileStamp::of(&folder.join(super::MERGED))? == meta.merged;
        current.then_some((meta.rows, meta.keys, meta.latest.map(|(time, _)| time)))
    }

    /// Removes a folder's section (its meta first, so no half is ever taken for whole).
    pub fn remove(folder: &Path) {
        let _ = std::fs::remove_file(folder.join(META));
        for name in PARTS {
            let _ = std::fs::remove_file(folder.join(name));
        }
    }
}

impl Meta {
    /// Whether the lines' "older" marks, made against `made_for`, hold against `latest`.
    pub fn marks_hold(&self, latest: Option<&str>) -> bool {
        let made_for = self.made_for.as_deref();
        let ran = |run: Option<&str>| match run {
            Some(r) => self.runs.iter().any(|own| own == r),
            None => self.runless,
        };
        made_for == latest || (!ran(made_for) && !ran(latest))
    }
}

/// What a folder's new section gathers while its lines are rendered.
#[derive(Default)]
pub(super) struct Gathered {
    pub first_key: String,
    pub package: String,
    pub binary: String,
    pub latest: Option<(DateTime<Utc>, Option<String>)>,
    pub runs: Vec<String>,
    /// The sum of its keys' [`key_hash`]es.
    pub keys: u64,
    /// Whether a line has no run.
    pub runless: bool,
    /// Too many runs, or a line of another package or binary: not kept.
    pub unkept: bool,
    pub dirs: Vec<(PathBuf, i128)>,
    seen_dirs: std::collections::HashSet<PathBuf>,
    pub roots: Vec<PathBuf>,
}

impl Gathered {
    /// Notes the folder and crate of a line's fixture before its existence is checked, so that a
    /// fixture deleted after the check changes its folder's time and the section is not used.
    pub fn watch(&mut self, entry: &super::Entry) {
        let Some(dir) = entry.fixture.parent() else {
            return;
        };
        // Lines come in key order: a folder's fixtures are next to each other, and fixtures
        // in one folder are in one crate.
        if self.dirs.last().is_some_and(|(d, _)| d == dir) || self.seen_dirs.contains(dir) {
            return;
        }
        match std::fs::metadata(dir).ok().as_ref().and_then(modified) {
            Some(time) => {
                self.seen_dirs.insert(dir.to_path_buf());
                self.dirs.push((dir.to_path_buf(), time));
            }
            None => self.unkept = true,
        }
        if let Some(root) = super::crate_root_of(entry) {
            if !self.roots.contains(&root) {
                self.roots.push(root);
            }
        }
    }

    /// Notes a line that stands in the report.
    pub fn add(&mut self, entry: &super::Entry, key: &str) {
        self.keys = self.keys.wrapping_add(key_hash(key));
        if self.first_key.is_empty() {
            self.first_key = key.to_string();
            self.package = entry.package.clone();
            self.binary = entry.binary.clone();
        } else if self.package != entry.package || self.binary != entry.binary {
            self.unkept = true;
        }
        if self
            .latest
            .as_ref()
            .is_none_or(|(time, _)| entry.finished_at >= *time)
        {
            self.latest = Some((entry.finished_at, entry.run.clone()));
        }
        self.runless |= entry.run.is_none();
        if let Some(run) = &entry.run {
            if !self.runs.contains(run) {
                if self.runs.len() == MAX_RUNS {
                    self.unkept = true;
                } else {
                    self.runs.push(run.clone());
                }
            }
        }
    }

    /// Writes the meta of the section whose parts are in `folder` already (under their names),
    /// made from the folder's merged file as it is now. A section that cannot be written is
    /// only not kept.
    pub fn save(
        self,
        folder: &Path,
        made_for: Option<String>,
        rows: usize,
        any_failure: bool,
        totals: Totals,
        suites: Vec<SuiteReport>,
    ) {
        let stamps = (|| {
            let merged = FileStamp::of(&folder.join(super::MERGED))?;
            let parts = [
                FileStamp::of(&folder.join(PARTS[0]))?,
                FileStamp::of(&folder.join(PARTS[1]))?,
                FileStamp::of(&folder.join(PARTS[2]))?,
            ];
            Some((merged, parts))
        })();
        // Without its meta a section is never used; its parts may still be read by the
        // report being written.
        let Some((merged, parts)) = stamps.filter(|_| !self.unkept) else {
            let _ = std::fs::remove_file(folder.join(META));
            return;
        };
        let meta = Meta {
            version: VERSION.to_string(),
            merged,
            parts,
            first_key: self.first_key,
            package: self.package,
            binary: self.binary,
            latest: self.latest,
            runs: self.runs,
            runless: self.runless,
            made_for,
            dirs: self.dirs,
            roots: self.roots,
            rows,
            keys: self.keys,
            any_failure,
            totals,
            suites,
        };
        match serde_json::to_vec(&meta) {
            Ok(bytes) => {
                if crate::files::replace_file(&folder.join(META), &bytes, false).is_err() {
                    let _ = std::fs::remove_file(folder.join(META));
                }
            }
            Err(_) => {
                let _ = std::fs::remove_file(folder.join(META));
            }
        }
    }
}

/// The prefix of a kept section's failure anchors: the same in every report, and unique among
/// the folders of one (a hash of the folder's place below the report folder).
pub(super) fn tag(folder: &Path, report_dir: &Path) -> String {
    use sha2::{Digest, Sha256};
    let name = folder.strip_prefix(report_dir).unwrap_or(folder);
    let hash = Sha256::digest(name.as_os_str().as_encoded_bytes());
    hash[..4].iter().map(|b| format!("{b:02x}")).collect()
}

/// A case key's hash. A set of keys is summed up by adding their hashes: the same set gives the
/// same sum in any order, and two different sets of as many keys the same sum by chance only
/// (about one in 2^64).
pub(super) fn key_hash(key: &str) -> u64 {
    // FNV-1a, then SplitMix64's finalizer so that every bit of the sum depends on every byte.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in key.bytes() {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash = (hash ^ (hash >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    hash = (hash ^ (hash >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    hash ^ (hash >> 31)
}
