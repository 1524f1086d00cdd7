//! The state of a suite's recordings, as `cargo proposal-eval status` prints it.
//!
//! Built from the same pieces a test run uses (the run's `Suite`, `LoadedCase`,
//! `current_sources`, and [`RecordingHead::changes`](crate::recording::RecordingHead::changes)), in the same order, so `status` and
//! `cargo test` never disagree about which recording is fresh, stale or unreadable.
//!
//! ```no_run
//! use proposal_eval::__internal::status::SuiteStatus;
//! use std::path::Path;
//!
//! let status = SuiteStatus::check(Path::new("."), Path::new("fixtures/payments")).unwrap();
//! for case in &status.cases {
//!     println!("{} {}", case.state.label(), case.case);
//! }
//! assert!(!status.fails_check());
//! ```

use crate::recording::credentials::{self, Finding};
use crate::recording::sources::SourceChange;
use crate::recording::{self, pending, Recording, Validation};
use crate::suite::fixture::Status;
use crate::suite::{LoadedCase, Suite};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The state of one case's recording.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum State {
    /// The recording was made from the case's current sources: replay uses it.
    Fresh,
    /// The recording was made from other sources: which ones changed.
    Stale(Vec<SourceChange>),
    /// No recording. Fine for a case that never calls the model; one that does fails and says how
    /// to record it.
    NoRecording,
    /// A recording whose fixture is gone.
    Orphaned,
    /// The recording (or the fixture, or one of its sources) cannot be read: why.
    Unreadable(String),
}

impl State {
    /// `fresh`, `stale`, `no recording`, `orphaned` or `unreadable`.
    pub fn label(&self) -> &'static str {
        match self {
            State::Fresh => "fresh",
            State::Stale(_) => "stale",
            State::NoRecording => "no recording",
            State::Orphaned => "orphaned",
            State::Unreadable(_) => "unreadable",
        }
    }

    /// The label as a JSON key: `no_recording` rather than `no recording`.
    pub fn key(&self) -> &'static str {
        match self {
            State::NoRecording => "no_recording",
            other => other.label(),
        }
    }
}

/// One case (or one orphaned recording) of a suite.
#[derive(Clone, Debug)]
pub struct CaseStatus {
    /// The case path: fixture path relative to the suite, without `.json`.
    pub case: String,
    /// The test name (`suite::sub::case`); `None` for an orphan.
    pub test: Option<String>,
    /// The fixture file; `None` for an orphan.
    pub fixture: Option<PathBuf>,
    /// Where the recording is (or would be).
    pub recording: PathBuf,
    /// The case's `status`; `None` when the fixture cannot be read, or for an orphan.
    pub status: Option<Status>,
    /// The recording's state. A recording holding credentials is `Unreadable`, with a message
    /// naming them (an orphan stays `Orphaned`).
    pub state: State,
    /// Strings in the recording that look like credentials (their paths are in the recording
    /// file). Any makes `status --check` fail, draft or not.
    pub credentials: Vec<Finding>,
    /// The case's pending recording (`<case>.pending.json`, written by `RECORD=review`), when
    /// there is one: it waits for `cargo proposal-eval review`, `accept` or `reject`, and makes
    /// `status --check` fail.
    pub pending: Option<PathBuf>,
    /// The `[recording] validation` of a nested config that applies to the case (a
    /// `proposal-eval.toml` in a folder between the suite and the fixture), which
    /// [`CaseStatus::fails_check`] uses over the suite's; `None` when the suite's applies.
    pub validation: Option<Validation>,
}

impl CaseStatus {
    /// Whether this case makes `status --check` fail: a recording holding credentials, a
    /// pending recording not yet accepted or rejected, an orphan, or a stale or unreadable recording of a case that runs. Draft cases are shown but
    /// never fail the check unless their recording holds credentials, and a stale recording does
    /// not either when the suite says `validation = "skip"`, as the tests replay it without
    /// looking.
    pub fn fails_check(&self, validation: Validation) -> bool {
        let validation = self.validation.unwrap_or(validation);
        if !self.credentials.is_empty() || self.pending.is_some() {
            return true;
        }
        let runs = !matches!(self.status, Some(Status::Draft | Status::NeedsHumanInput));
        match &self.state {
            State::Orphaned => true,
            State::Stale(_) => runs && validation != Validation::Skip,
            State::Unreadable(_) => runs,
            State::Fresh | State::NoRecording => false,
        }
    }
}

/// Every case of a suite with its recording's state.
#[derive(Clone, Debug)]
pub struct SuiteStatus {
    /// The suite's name (its folder's last component, as in test names).
    pub name: String,
    /// The crate root that sources are relative to.
    pub crate_root: PathBuf,
    /// The suite folder.
    pub dir: PathBuf,
    /// The recordings folder.
    pub recordings: PathBuf,
    /// `[recording] validation` (strict when the config cannot be read).
    pub validation: Validation,
    /// The suite config cannot be read: every test of the suite fails with this.
    pub config_error: Option<String>,
    /// The cases, sorted by path, then the orphans.
    pub cases: Vec<CaseStatus>,
}

impl SuiteStatus {
    /// Checks the suite folder `dir` of the crate at `crate_root`, with the default config
    /// (`<dir>/proposal-eval.toml`) and recordings folder (`<dir>/recordings`).
    pub fn check(crate_root: &Path, dir: &Path) -> std::io::Result<SuiteStatus> {
        SuiteStatus::check_with(crate_root, dir, None, None)
    }

    /// As [`SuiteStatus::check`], for a suite whose front end names its config file or its
    /// recordings folder (`config = …` / `recordings = …`, `Harness::config` /
    /// `Harness::recordings`; crate-relative).
    pub fn check_with(
        crate_root: &Path,
        dir: &Path,
        config: Option<&Path>,
        recordings: Option<&Path>,
    ) -> std::io::Result<SuiteStatus> {
        let suite = Suite::new(crate_root.to_path_buf(), dir, config, recordings, None);
        let fixtures = suite.discover()?;
        let (validation, config_error) = match suite.config() {
            Ok(config) => (config.recording.validation, None),
            Err(e) => (Validation::Strict, Some(e.to_string())),
        };
        let known: std::collections::HashSet<&str> =
            fixtures.iter().map(|f| f.case_path()).collect();
        let mut cases = Vec::new();
        for path in &fixtures {
            let loaded = LoadedCase::load(&suite, path.clone());
            let mut state = state(&suite, &loaded);
            // A nested config: its validation, or its error (the suite's own is `config_error`).
            let layer = suite.layer(&path.relative);
            let nested = !std::sync::Arc::ptr_eq(&layer, &suite.layer(""));
            let case_validation = match &layer.config {
                Ok(config) if nested => Some(config.recording.validation),
                Err(e) if nested => {
                    state = State::Unreadable(format!("bad suite config: {e}"));
                    None
                }
                _ => None,
            };
            let recording = suite.recording_file(path);
            let mut credentials = credentials::scan_file(&recording);
            // `a.pending.json` is the recording of a case named `a.pending` when there is one.
            let pending = Some(pending::pending_file(&recording)).filter(|p| {
                !known.contains(format!("{}.pending", path.case_path()).as_str()) && p.is_file()
            });
            if let Some(file) = &pending {
                credentials.extend(credentials::scan_file(file));
            }
            if !credentials.is_empty() {
                let found = credentials::message(&suite.relative(&recording), &credentials);
                state = State::Unreadable(match state {
                    State::Unreadable(why) => format!("{why}; {found}"),
                    _ => found,
                });
            }
            cases.push(CaseStatus {
                case: path.case_path().to_string(),
                test: Some(suite.test_name(path)),
                fixture: Some(path.absolute.clone()),
                recording,
                status: loaded.file.as_ref().ok().map(|f| f.status),
                state,
                credentials,
                pending,
                validation: case_validation,
            });
        }
        let known: Vec<&str> = known.into_iter().collect();
        // `orphans` takes only files that parse as recordings; a recordings folder named over
        // the suite's own files (`--recordings fixtures`) must still never offer a fixture or
        // the config file to `prune`, so those are ruled out by name as well.
        let config_file = match config {
            Some(file) => suite.crate_root.join(file),
            None => suite.dir.join(crate::naming::CONFIG_FILE),
        };
        let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let mut candidates = recording::orphans(&suite.recordings, &known);
        if !candidates.is_empty() {
            let own: std::collections::HashSet<PathBuf> = fixtures
                .iter()
                .map(|f| real(&f.absolute))
                .chain([real(&config_file)])
                .collect();
            candidates.retain(|c| !own.contains(&real(c)));
        }
        for orphan in candidates {
            let case = orphan
                .strip_prefix(&suite.recordings)
                .unwrap_or(&orphan)
                .with_extension("")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            // A pending recording's case, not its file's name.
            let case = match Recording::read_head(&orphan) {
                Ok(Some(head)) if pending::case_of_pending(&case) == Some(head.case.as_str()) => {
                    head.case
                }
                _ => case,
            };
            cases.push(CaseStatus {
                case,
                test: None,
                fixture: None,
                credentials: credentials::scan_file(&orphan),
                recording: orphan,
                status: None,
                state: State::Orphaned,
                pending: None,
                validation: None,
            });
        }
        Ok(SuiteStatus {
            name: suite.name.clone(),
            crate_root: suite.crate_root.clone(),
            dir: suite.dir.clone(),
            recordings: suite.recordings.clone(),
            validation,
            config_error,
            cases,
        })
    }

    /// Whether `status --check` fails for this suite.
    pub fn fails_check(&self) -> bool {
        self.config_error.is_some() || self.cases.iter().any(|c| c.fails_check(self.validation))
    }

    /// A crate-relative, `/`-separated form of `path`.
    pub fn relative(&self, path: &Path) -> String {
        crate::files::relative_slash(&self.crate_root, path)
    }

    /// The machine-readable form that `status --format json` prints.
    pub fn to_json(&self) -> serde_json::Value {
        #[derive(Serialize)]
        struct Change<'a> {
            path: &'a str,
            kind: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            recorded: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            current: Option<&'a str>,
        }
        let cases: Vec<serde_json::Value> = self
            .cases
            .iter()
            .map(|c| {
                let changes: Vec<Change<'_>> = match &c.state {
                    State::Stale(changes) => changes
                        .iter()
                        .map(|change| match change {
                            SourceChange::Changed {
                                path,
                                recorded,
                                current,
                            } => Change {
                                path,
                                kind: "changed",
                                recorded: Some(recorded),
                                current: Some(current),
                            },
                            SourceChange::Added { path } => Change {
                                path,
                                kind: "added",
                                recorded: None,
                                current: None,
                            },
                            SourceChange::Removed { path } => Change {
                                path,
                                kind: "removed",
                                recorded: None,
                                current: None,
                            },
                            SourceChange::Input { recorded, current } => Change {
                                path: "input",
                                kind: "input",
                                recorded: Some(recorded),
                                current: Some(current),
                            },
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                let mut value = serde_json::json!({
                    "case": c.case,
                    "test": c.test,
                    "fixture": c.fixture.as_deref().map(|f| self.relative(f)),
                    "recording": self.relative(&c.recording),
                    "status": c.status,
                    "state": c.state.key(),
                    "fails_check": c.fails_check(self.validation),
                });
                if let State::Unreadable(reason) = &c.state {
                    value["reason"] = reason.clone().into();
                }
                if !changes.is_empty() {
                    value["changes"] = serde_json::to_value(changes).unwrap_or_default();
                }
                if let Some(file) = &c.pending {
                    value["pending"] = self.relative(file).into();
                }
                if !c.credentials.is_empty() {
                    value["credentials"] = c
                        .credentials
                        .iter()
                        .map(|f| {
                            let mut found = serde_json::json!({
                                "path": f.path,
                                "kind": f.kind.to_string(),
                                "fix": f.fix().to_string(),
                            });
                            if let Some(name) = &f.parameter {
                                found["parameter"] = name.as_str().into();
                            }
                            found
                        })
                        .collect();
                }
                value
            })
            .collect();
        serde_json::json!({
            "suite": self.name,
            "dir": self.relative(&self.dir),
            "crate_root": self.crate_root.display().to_string(),
            "recordings": self.relative(&self.recordings),
            "validation": self.validation,
            "config_error": self.config_error,
            "cases": cases,
        })
    }
}

/// What `cargo proposal-eval migrate` did, or would do, with one recording.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Migration {
    /// A fresh recording of an older format (1; 4, with a judge part), rewritten (or, in a dry
    /// run, to be rewritten) in the current one.
    Migrated {
        /// The format it had.
        from: u32,
        /// The format it has now: 2, or 5 for a recording with a judge part.
        to: u32,
    },
    /// Already in the current format: nothing to do.
    Current,
    /// Stale: its answers were given to other sources, so it is left as it is; only a re-record
    /// makes it current.
    Stale(Vec<SourceChange>),
    /// The recording, the fixture or a source cannot be read: why.
    Unreadable(String),
}

/// One recording that `migrate` looked at.
#[derive(Clone, Debug)]
pub struct MigratedRecording {
    /// The case path.
    pub case: String,
    /// The recording file.
    pub recording: PathBuf,
    /// What was done.
    pub migration: Migration,
}

/// Rewrites every fresh recording of an older format of the suite `dir` in the current format,
/// without calling the model (the interactions are kept as they are); with `write` false, only
/// says what it would do. A stale recording is left as it is. Cases without a recording are not
/// listed. Running it twice changes nothing the second time.
pub fn migrate(
    crate_root: &Path,
    dir: &Path,
    config: Option<&Path>,
    recordings: Option<&Path>,
    write: bool,
) -> std::io::Result<Vec<MigratedRecording>> {
    let suite = Suite::new(crate_root.to_path_buf(), dir, config, recordings, None);
    let mut out = Vec::new();
    for path in suite.discover()? {
        let file = suite.recording_file(&path);
        let loaded = LoadedCase::load(&suite, path.clone());
        let migration = match Recording::read(&file) {
            Ok(None) => continue,
            Err(e) => {
                let shown = suite.relative(e.file());
                Migration::Unreadable(e.with_file(shown).to_string())
            }
            Ok(Some(r)) if !r.is_older_format() => Migration::Current,
            Ok(Some(r)) => {
                let current = match &loaded.file {
                    Err(e) => Err(format!("bad fixture: {e}")),
                    Ok(fixture) => crate::suite::current_sources(&suite, &loaded, fixture)
                        .map_err(|e| e.to_string()),
                };
                match current {
                    Err(why) => Migration::Unreadable(why),
                    Ok(current) => {
                        let changes = r.changes(&current);
                        if !changes.is_empty() {
                            Migration::Stale(changes)
                        } else {
                            let from = r.format;
                            let r = r.migrated(&current);
                            let to = r.format;
                            if write {
                                r.write(&file).map_err(|e| {
                                    std::io::Error::new(
                                        e.kind(),
                                        format!("cannot write {}: {e}", suite.relative(&file)),
                                    )
                                })?;
                            }
                            Migration::Migrated { from, to }
                        }
                    }
                }
            }
        };
        out.push(MigratedRecording {
            case: path.case_path().to_string(),
            recording: file,
            migration,
        });
    }
    Ok(out)
}

/// The state of one loaded case's recording, decided exactly as a replay decides it.
fn state(suite: &Suite, loaded: &LoadedCase) -> State {
    let fixture = match &loaded.file {
        Ok(fixture) => fixture,
        Err(e) => return State::Unreadable(format!("bad fixture: {e}")),
    };
    let sources = match crate::suite::current_sources(suite, loaded, fixture) {
        Ok(sources) => sources,
        Err(e) => return State::Unreadable(e.to_string()),
    };
    match Recording::read_head(&suite.recording_file(&loaded.path)) {
        Err(e) => {
            let file = suite.relative(e.file());
            State::Unreadable(e.with_file(file).to_string())
        }
        Ok(None) => State::NoRecording,
        Ok(Some(recorded)) => {
            let changes = recorded.changes(&sources);
            if changes.is_empty() {
                State::Fresh
            } else {
                State::Stale(changes)
            }
        }
    }
}
