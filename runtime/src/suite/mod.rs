//! A suite's files: its folder, its config, its fixtures (and the drafts among them), and the
//! discovery cache that lets a run skip reading unchanged fixtures.

pub mod config;
pub(crate) mod discovery;
pub mod draft;
pub mod fixture;
pub(crate) mod layer;
pub(crate) mod schemas;

use crate::env::Settings;
use crate::recording::model::ModelFactory;
use crate::recording::sources::{self, CaseSources, Source, SourceError};

use config::SuiteConfig;
use fixture::{FixtureError, FixtureFile, FixturePath, Status};
use layer::{Layer, Layers};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// A suite as both front ends see it: where things are and how it is configured.
pub(crate) struct Suite {
    /// The suite's name in test names: its folder's last component, as an identifier.
    pub name: String,
    pub crate_root: PathBuf,
    /// Absolute suite folder.
    pub dir: PathBuf,
    /// Absolute recordings folder.
    pub recordings: PathBuf,
    /// The suite's config, and those of its subfolders that hold one of their own.
    layers: Layers,
    pub model: Option<ModelFactory>,
    /// The judge model of `Harness::judge` / `judge = path`; `[judge]`'s when `None`.
    pub judge: Option<ModelFactory>,
    pub settings: Result<Settings, crate::env::EnvError>,
    /// The workspace root, real (links resolved): sources must lie below it.
    workspace: OnceLock<PathBuf>,
    /// The crate's folder below the workspace root, `/`-separated (empty when it is the root).
    crate_in_workspace: OnceLock<String>,
    /// Whether the recordings folder existed when a case first looked.
    recordings_found: OnceLock<bool>,
    /// Why rubric failures are advisory (`None`: they fail), computed once from the labels by
    /// the rubric judge (`crate::rubric_judge::calibration::suite_advisory`).
    pub(crate) judge_advisory: OnceLock<Option<String>>,
    /// The schema files of `json_schema` checks, compiled once.
    pub(crate) schemas: schemas::Schemas,
}

impl Suite {
    pub fn new(
        crate_root: PathBuf,
        fixtures: &Path,
        config: Option<&Path>,
        recordings: Option<&Path>,
        model: Option<ModelFactory>,
    ) -> Suite {
        crate::env::note_crate_root(&crate_root);
        let dir = crate_root.join(fixtures);
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "suite".into());
        let config_file = match config {
            Some(file) => crate_root.join(file),
            None => dir.join(crate::naming::CONFIG_FILE),
        };
        let layers = Layers::new(Layer::suite(config_file));
        let recordings = recordings
            .map(|r| crate_root.join(r))
            .unwrap_or_else(|| dir.join("recordings"));
        Suite {
            name: crate::naming::identifier(&name),
            crate_root,
            dir,
            recordings,
            layers,
            model,
            judge: None,
            settings: crate::env::settings().cloned(),
            workspace: OnceLock::new(),
            crate_in_workspace: OnceLock::new(),
            recordings_found: OnceLock::new(),
            judge_advisory: OnceLock::new(),
            schemas: Default::default(),
        }
    }

    /// The suite's own config (its folder's `proposal-eval.toml`, the one the front end names,
    /// or the one built in Rust).
    pub fn config(&self) -> &Result<SuiteConfig, config::ConfigError> {
        &self.layers.suite().config
    }

    /// The config of the case at `relative` (relative to the suite folder): the suite's, with
    /// the nested configs of the folders on the way merged over it.
    pub fn layer(&self, relative: &str) -> Arc<Layer> {
        self.layers.of(&self.dir, relative, |file| {
            PathBuf::from(crate::files::relative_slash(&self.crate_root, file))
        })
    }

    /// Makes `config`, built in Rust, the suite's config.
    pub fn set_built_config(&mut self, config: SuiteConfig) {
        let file = self.layers.suite().file.clone();
        self.layers = Layers::new(Layer::built(config, file));
    }

    /// A crate-relative, `/`-separated form of `path` for messages and recordings.
    pub fn relative(&self, path: &Path) -> String {
        crate::files::relative_slash(&self.crate_root, path)
    }

    /// A workspace-relative, `/`-separated form of `path`, a file below the crate (what a report
    /// entry names a recording by, the same on every machine).
    pub(crate) fn workspace_relative(&self, path: &Path) -> String {
        let crate_dir = self.crate_in_workspace.get_or_init(|| {
            let real_root =
                std::fs::canonicalize(&self.crate_root).unwrap_or_else(|_| self.crate_root.clone());
            match real_root.strip_prefix(self.workspace()) {
                Ok(below) => crate::files::relative_slash(Path::new(""), below),
                Err(_) => String::new(),
            }
        });
        let below = self.relative(path);
        if crate_dir.is_empty() {
            below
        } else {
            format!("{crate_dir}/{below}")
        }
    }

    pub fn test_name(&self, fixture: &FixturePath) -> String {
        crate::naming::test_name(&self.name, &fixture.relative)
    }

    pub fn recording_file(&self, fixture: &FixturePath) -> PathBuf {
        self.recordings
            .join(format!("{}.json", fixture.case_path()))
    }

    /// Whether a case may find its recording: false when the recordings folder did not exist
    /// when the first case looked (a suite whose code calls no model), which spares every case
    /// an `open` that fails. A recording written later in this process is its own case's, which
    /// has looked already.
    pub fn may_hold_recordings(&self) -> bool {
        *self
            .recordings_found
            .get_or_init(|| self.recordings.is_dir())
    }

    pub fn discover(&self) -> std::io::Result<Vec<FixturePath>> {
        crate::suite::fixture::discover(&self.dir, &self.recordings)
    }

    /// [`Suite::discover`] as the paths relative to the suite folder: a large suite's list
    /// without an absolute path per fixture (10 MB at 100,000 fixtures).
    pub(crate) fn discover_relative(&self) -> std::io::Result<Vec<String>> {
        crate::naming::fixture_files(&self.dir, &self.recordings)
    }

    /// The fixture at `relative` (`/`-separated) in the suite folder.
    pub(crate) fn fixture(&self, relative: String) -> FixturePath {
        FixturePath {
            absolute: self.dir.join(&relative),
            relative,
        }
    }

    /// The suite's config file, relative to the crate root, as messages name it (whether it
    /// exists or not).
    pub fn config_file_name(&self) -> String {
        self.relative(&self.layers.suite().file)
    }

    /// The suite-wide sources (`[recording] sources` globs) of a layer, hashed once per process.
    fn suite_sources<'a>(&self, layer: &'a Layer) -> Result<&'a [Source], SourceError> {
        let result = layer.sources.get_or_init(|| {
            let globs = match &layer.config {
                Ok(config) => config.recording.sources.clone(),
                Err(_) => Vec::new(),
            };
            let written_in = self.relative(&layer.file);
            let mut found = Vec::new();
            for pattern in &globs {
                for file in self.source_files(pattern, &written_in)? {
                    found.push(sources::hash_source(&self.crate_root, &file)?);
                }
            }
            Ok(found)
        });
        result.as_deref().map_err(Clone::clone)
    }

    /// The files a `sources` entry names (a path or a glob), crate-relative, each checked to lie
    /// inside the workspace: a recording that depended on a file elsewhere (`..` escapes,
    /// absolute paths, links that leave the workspace) would be fresh on one machine and stale
    /// on the next. `written_in` is the file where the entry is written, for the error.
    fn source_files(&self, entry: &str, written_in: &str) -> Result<Vec<String>, SourceError> {
        let error = |message: String| SourceError {
            written_in: written_in.to_string(),
            path: entry.to_string(),
            message,
        };
        if Path::new(entry).is_absolute() {
            return Err(error(
                "an absolute path ties the recording to this machine; write it relative to the crate root"
                    .to_string(),
            ));
        }
        let files = sources::glob(&self.crate_root, entry).map_err(|e| error(e.message))?;
        let workspace = self.workspace();
        for file in &files {
            let real = std::fs::canonicalize(self.crate_root.join(file))
                .map_err(|e| error(format!("cannot read `{file}`: {e}")))?;
            if !real.starts_with(workspace) {
                return Err(error(format!(
                    "`{file}` is outside the workspace {} (it resolves to {}); a recording may depend only on files inside it",
                    workspace.display(),
                    real.display()
                )));
            }
        }
        Ok(files)
    }

    /// The nearest folder at or above the crate root whose `Cargo.toml` has a `[workspace]`
    /// table, else the crate root; links resolved.
    fn workspace(&self) -> &Path {
        self.workspace.get_or_init(|| {
            let root =
                std::fs::canonicalize(&self.crate_root).unwrap_or_else(|_| self.crate_root.clone());
            root.ancestors()
                .find(|dir| {
                    std::fs::read_to_string(dir.join("Cargo.toml")).is_ok_and(|manifest| {
                        manifest
                            .lines()
                            .any(|l| l.trim_start().starts_with("[workspace"))
                    })
                })
                .map(Path::to_path_buf)
                .unwrap_or(root)
        })
    }
}

/// A fixture read and parsed. The hash of its bytes is taken only when a recording needs it
/// (most cases of a suite that calls no model never do).
pub(crate) struct LoadedCase {
    pub path: FixturePath,
    pub file: Result<FixtureFile, FixtureError>,
    /// The fixture, crate-relative.
    relative: String,
    /// Its bytes, until they are hashed; `None` when it could not be read, or when it is large
    /// and was hashed as soon as it was parsed.
    bytes: Option<Vec<u8>>,
    read_failed: bool,
    source: OnceLock<Source>,
}

/// A fixture larger than this is hashed as soon as it is parsed, and its bytes dropped rather
/// than kept for a hash that may be asked for later: a large document would be held twice
/// while the case runs (its bytes and its parsed value). A model case asks for the hash anyway.
const KEEP_BYTES_UP_TO: usize = 1 << 20;

impl LoadedCase {
    pub fn load(suite: &Suite, path: FixturePath) -> LoadedCase {
        let bytes = std::fs::read(&path.absolute);
        LoadedCase::from_bytes(suite, path, bytes)
    }

    fn from_bytes(suite: &Suite, path: FixturePath, bytes: std::io::Result<Vec<u8>>) -> LoadedCase {
        let relative = suite.relative(&path.absolute);
        let (file, bytes) = match bytes {
            Ok(bytes) => (FixtureFile::parse(&bytes, &relative), Some(bytes)),
            Err(e) => (
                Err(FixtureError {
                    file: relative.clone().into(),
                    line: 0,
                    column: 0,
                    message: format!("cannot read the fixture: {e}"),
                }),
                None,
            ),
        };
        let mut loaded = LoadedCase {
            path,
            file,
            relative,
            read_failed: bytes.is_none(),
            bytes,
            source: OnceLock::new(),
        };
        if loaded
            .bytes
            .as_ref()
            .is_some_and(|b| b.len() > KEEP_BYTES_UP_TO)
        {
            loaded.source();
            loaded.bytes = None;
        }
        loaded
    }

    /// The fixture file as a source: its path, and the hash and length of its bytes (empty when
    /// it could not be read), hashed on first use (or when it was read, for a large one).
    pub fn source(&self) -> &Source {
        self.source.get_or_init(|| match &self.bytes {
            Some(bytes) => {
                let (sha256, length) = sources::hash_content(bytes);
                Source {
                    path: self.relative.clone(),
                    sha256,
                    bytes: length,
                }
            }
            None => Source {
                path: self.relative.clone(),
                sha256: String::new(),
                bytes: 0,
            },
        })
    }

    /// Whether reading the file failed.
    pub fn read_failed(&self) -> bool {
        self.read_failed
    }

    /// Ignored: a case whose status is not `active`. A fixture that does not parse is not
    /// ignored, so its error is seen.
    pub fn ignored(&self) -> bool {
        matches!(&self.file, Ok(f) if f.status != Status::Active)
    }
}

/// A fixture read at discovery and parsed when its test runs, so that parsing and hashing happen
/// on the test threads rather than one after another before the first test starts.
pub(crate) enum PendingCase {
    /// Parsed already (the one fixture an `--exact` run names).
    Loaded(Box<LoadedCase>),
    /// Could not be read: its test fails saying why.
    Read(Relative, std::io::Result<Vec<u8>>),
    /// Not read yet: unchanged since a run that found whether its test is ignored (the flag);
    /// its size, as discovery found it.
    Unread(Relative, bool, u64),
    /// Read at discovery only to find whether its test is ignored (the flag; its size). Its
    /// test reads it again, so discovery holds no fixture's bytes (a first run of 100,000
    /// fixtures held them all: 500 MB).
    Checked(Relative, bool, u64),
}

/// A fixture's path relative to its suite folder: all a test waiting for its turn holds (the
/// absolute path is made again when it runs, 100 bytes less a case).
pub(crate) struct Relative(String);

impl From<FixturePath> for Relative {
    fn from(path: FixturePath) -> Relative {
        Relative(path.relative)
    }
}

impl From<String> for Relative {
    fn from(relative: String) -> Relative {
        Relative(relative)
    }
}

impl Relative {
    fn path(self, suite: &Suite) -> FixturePath {
        suite.fixture(self.0)
    }
}

impl PendingCase {
    /// Reads a fixture the discovery cache has no answer for, to find whether its test is
    /// ignored; only a fixture that may set `status` is parsed.
    pub fn read(suite: &Suite, path: FixturePath) -> PendingCase {
        match std::fs::read(&path.absolute) {
            Ok(bytes) => {
                let size = bytes.len() as u64;
                let ignored = may_set_status(&bytes)
                    && LoadedCase::from_bytes(suite, path.clone(), Ok(bytes)).ignored();
                PendingCase::Checked(path.into(), ignored, size)
            }
            Err(e) => PendingCase::Read(path.into(), Err(e)),
        }
    }

    /// The fixture's path relative to the suite folder.
    pub fn relative(&self) -> &str {
        match self {
            PendingCase::Loaded(loaded) => &loaded.path.relative,
            PendingCase::Read(path, _)
            | PendingCase::Unread(path, ..)
            | PendingCase::Checked(path, ..) => &path.0,
        }
    }

    /// As [`LoadedCase::ignored`].
    pub fn ignored(&self) -> bool {
        match self {
            PendingCase::Loaded(loaded) => loaded.ignored(),
            PendingCase::Read(..) => false,
            PendingCase::Unread(_, ignored, _) | PendingCase::Checked(_, ignored, _) => *ignored,
        }
    }

    /// Whether reading the file failed.
    pub fn read_failed(&self) -> bool {
        match self {
            PendingCase::Loaded(loaded) => loaded.read_failed(),
            PendingCase::Read(_, bytes) => bytes.is_err(),
            PendingCase::Unread(..) | PendingCase::Checked(..) => false,
        }
    }

    pub fn load(self, suite: &Suite) -> LoadedCase {
        match self {
            PendingCase::Loaded(loaded) => *loaded,
            PendingCase::Read(path, bytes) => {
                LoadedCase::from_bytes(suite, path.path(suite), bytes)
            }
            PendingCase::Unread(path, _, size) | PendingCase::Checked(path, _, size) => {
                let path = path.path(suite);
                let bytes = crate::files::read_sized(&path.absolute, size);
                LoadedCase::from_bytes(suite, path, bytes)
            }
        }
    }
}

/// How many threads `items` pieces of discovery's work are worth: one per `per_thread` of them,
/// and at most one per core and 4.
pub(crate) fn threads_for(items: usize, per_thread: usize) -> usize {
    let wanted = items.div_ceil(per_thread);
    if wanted <= 1 {
        // No need to ask the system (a few reads of /proc and /sys under a cgroup).
        return 1;
    }
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(4)
        .min(wanted)
}

/// Runs `work` over `items` split into `threads` consecutive parts, side by side (on this
/// thread alone for one); `work` gets a part and the index of its first item.
pub(crate) fn side_by_side<T: Send>(
    items: &mut [T],
    threads: usize,
    work: impl Fn(usize, &mut [T]) + Sync,
) {
    if threads <= 1 || items.len() < 2 {
        return work(0, items);
    }
    let chunk = items.len().div_ceil(threads);
    let work = &work;
    std::thread::scope(|scope| {
        for (i, part) in items.chunks_mut(chunk).enumerate() {
            scope.spawn(move || work(i * chunk, part));
        }
    });
}

/// Whether a fixture sets a non-active `status` at its top level, read without building the
/// document (other keys are skipped): only such a fixture is parsed whole at discovery, to
/// confirm its test is ignored. Anything that does not read as such (no status, `active`, or
/// not JSON at all) runs, and is parsed on its test's thread.
///
/// A fixture whose bytes hold no `status` and no `\u` escape (the only way to write a letter of
/// a key otherwise) has no such key, and is not read as JSON at all: a search of its bytes is
/// about 15 times faster than skimming its keys (2 ms against 34 ms for 5,000 fixtures of 8 KB).
fn may_set_status(bytes: &[u8]) -> bool {
    if memchr::memmem::find(bytes, b"status").is_none()
        && memchr::memmem::find(bytes, b"\\u").is_none()
    {
        return false;
    }
    #[derive(serde::Deserialize)]
    struct Top {
        #[serde(default)]
        status: Option<String>,
    }
    match serde_json::from_slice::<Top>(bytes) {
        Ok(top) => top.status.is_some_and(|s| s != "active"),
        Err(_) => false,
    }
}

/// The case's current sources: the fixture file, the hash of its `input`, the files its
/// `sources` name (paths or globs), and the suite's `[recording] sources`.
pub(crate) fn current_sources(
    suite: &Suite,
    loaded: &LoadedCase,
    fixture: &FixtureFile,
) -> Result<CaseSources, SourceError> {
    let files = source_files(suite, loaded, fixture)?;
    Ok(with_digests(loaded, &fixture.input, files))
}

/// The files a case's recording depends on: those its `sources` name (paths or globs, checked
/// to lie inside the workspace) and the suite's `[recording] sources`, each hashed.
pub(crate) fn source_files(
    suite: &Suite,
    loaded: &LoadedCase,
    fixture: &FixtureFile,
) -> Result<Vec<Source>, SourceError> {
    let mut sources: Vec<Source> = Vec::new();
    for entry in &fixture.sources {
        let entry = entry.trim_start_matches("./");
        for file in suite.source_files(entry, &loaded.relative)? {
            if !sources.iter().any(|s| s.path == file) {
                sources.push(sources::hash_source(&suite.crate_root, &file)?);
            }
        }
    }
    let layer = suite.layer(&loaded.path.relative);
    for source in suite.suite_sources(&layer)? {
        if !sources.iter().any(|s| s.path == source.path) {
            sources.push(source.clone());
        }
    }
    Ok(sources)
}

/// [`source_files`] completed with the fixture's and its `input`'s hashes.
pub(crate) fn with_digests(
    loaded: &LoadedCase,
    input: &Value,
    sources: Vec<Source>,
) -> CaseSources {
    let (input_sha256, input_bytes) = crate::recording::input_digest(input);
    CaseSources {
        fixture: loaded.source().clone(),
        input_sha256,
        input_bytes,
        sources,
    }
}

#[cfg(test)]
mod tests {
    use super::may_set_status;

    #[test]
    fn status_is_read_without_parsing_the_rest() {
        assert!(may_set_status(
            br#"{"input": {"status": "x"}, "status": "draft"}"#
        ));
        assert!(may_set_status(br#"{"status": "dr\u0061ft"}"#));
        // A key written with an escape is the same key.
        assert!(may_set_status(br#"{"st\u0061tus": "draft"}"#));
        assert!(!may_set_status(br#"{"input": {"note": "caf\u00e9"}}"#));
        assert!(!may_set_status(br#"{"input": {}, "expected": []}"#));
        assert!(!may_set_status(br#"{"expected": [{"status": "DRAFT"}]}"#));
        assert!(!may_set_status(br#"{"status": "active"}"#));
        assert!(!may_set_status(b"{not json"));
        // An unknown status is read as non-active: the whole parse then reports it, unignored.
        assert!(may_set_status(br#"{"status": "actve"}"#));
    }
}
