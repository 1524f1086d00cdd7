//! [`Harness`]: the run-time front end. Fixtures are discovered when the test binary starts, so
//! a new fixture file is a new test without a rebuild.
//!
//! Discovery lists the files and reads none of them, except to learn whether a test is ignored
//! (a non-`active` `status`): that answer is kept between runs under
//! `target/proposal-eval/discovery/` for files unchanged since (size, modification and change
//! times, inode), so a run starts its tests without reading 5,000 fixtures first; the fixtures
//! are read and parsed on the test threads.

use crate::config::SuiteConfig;
use crate::recording::llm::Llm;
use crate::recording::model::{Model, ModelFactory};
use crate::run::case::{Case, CaseOutput};
use crate::suite::discovery::{Stamp, StatusCache};
use crate::suite::fixture::FixturePath;
use crate::suite::{LoadedCase, PendingCase, Suite};
use libtest_mimic::{Failed, Trial};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// A test before it is made: a case waiting for its turn, or the second fixture of a test name
/// (a failing test that says so).
enum Waiting {
    Case(PendingCase),
    Twin(String),
    /// Not in the discovery cache (or changed since): to be read for its status.
    Unread(String, Stamp),
    /// Read for its status; its answer goes into the discovery cache.
    Read(PendingCase, Stamp),
}

/// How many threads run the cases: while recording (any `RECORD` but replay), at least
/// `PROPOSAL_EVAL_MAX_CONCURRENCY`, since a live call waits on the API and not on a core, unless
/// `--test-threads` or `RUST_TEST_THREADS` says how many (`told`); `None` leaves libtest's
/// choice (the core count).
fn recording_threads(told: bool, settings: &crate::env::Settings, cores: usize) -> Option<usize> {
    let recording = settings.record != crate::env::RecordMode::Replay;
    (recording && !told).then(|| cores.max(settings.max_concurrency))
}

fn available_cores() -> usize {
    std::thread::available_parallelism().map_or(1, Into::into)
}

/// Reads the fixtures the discovery cache had no answer for (every fixture on a first run), on
/// as many threads as there are cores (at most 4) when there are many: a read and a look for
/// `status` take about 15 microseconds a fixture, 1.5 s for 100,000 on one thread.
fn read_unread(suite: &Suite, waiting: &mut [(String, Waiting)]) {
    let unread = waiting
        .iter()
        .filter(|(_, w)| matches!(w, Waiting::Unread(..)))
        .count();
    let threads = crate::suite::threads_for(unread, 256);
    crate::suite::side_by_side(waiting, threads, |_, part| {
        for (_, waits) in part {
            if let Waiting::Unread(relative, stamp) = waits {
                let (relative, stamp) = (std::mem::take(relative), *stamp);
                let pending = PendingCase::read(suite, suite.fixture(relative));
                *waits = Waiting::Read(pending, stamp);
            }
        }
    });
}

/// The code under test as every test of a run shares it.
type SharedCaseFn = dyn Fn(&Case, &mut Llm) -> Result<serde_json::Value, crate::run::case::OutputError>
    + Send
    + Sync;

/// A suite run as a `harness = false` test target: one test per fixture file, through
/// libtest-mimic, so `cargo test` filters and flags and `cargo nextest run` work as usual.
///
/// ```no_run
/// // tests/evals.rs, with `[[test]] name = "evals" harness = false` in Cargo.toml
/// use proposal_eval::{Case, Harness, Llm, ModelError};
/// use serde_json::{json, Value};
///
/// fn live_model() -> impl proposal_eval::Model {
///     |request: &Value| -> Result<Value, ModelError> { Ok(json!({ "proposals": [] })) }
/// }
///
/// fn payments(case: &Case, llm: &mut Llm) -> proposal_eval::Result<Value> {
///     let reply = llm.complete(&json!({ "prompt": case.input["message"] }))?;
///     Ok(reply["proposals"].clone())
/// }
///
/// fn main() -> std::process::ExitCode {
///     Harness::new("fixtures/payments").model(live_model).run(payments)
/// }
/// ```
pub struct Harness {
    fixtures: PathBuf,
    config: Option<PathBuf>,
    built_config: Option<SuiteConfig>,
    recordings: Option<PathBuf>,
    model: Option<ModelFactory>,
    judge: Option<ModelFactory>,
}

impl Harness {
    /// A harness for the suite folder `fixtures` (relative to the crate root).
    pub fn new(fixtures: impl Into<PathBuf>) -> Harness {
        Harness {
            fixtures: fixtures.into(),
            config: None,
            built_config: None,
            recordings: None,
            model: None,
            judge: None,
        }
    }

    /// Reads the suite config from this file instead of `<suite>/proposal-eval.toml`.
    pub fn config(mut self, file: impl Into<PathBuf>) -> Harness {
        self.config = Some(file.into());
        self
    }

    /// Uses this configuration, built in Rust, instead of a file: what lets a transform be a
    /// closure.
    ///
    /// ```no_run
    /// use proposal_eval::compare::StrictConfig;
    /// use proposal_eval::config::SuiteConfig;
    /// use proposal_eval::transform::{Strategy, Transform, Transformer};
    /// use proposal_eval::{Case, Harness, Llm};
    /// use serde_json::{json, Value};
    ///
    /// fn agent(case: &Case, _llm: &mut Llm) -> Value {
    ///     json!([{ "changeType": "change", "reference": case.input["ref"] }])
    /// }
    ///
    /// fn main() -> std::process::ExitCode {
    ///     let upper = Transform::custom(|v, _| json!(v.and_then(Value::as_str).unwrap_or("").to_uppercase()));
    ///     let strict = StrictConfig::new()
    ///         .ignore_path("metadata.*").unwrap()
    ///         .transformer("reference", Transformer::new(upper, Strategy::TransformAlways)).unwrap();
    ///     let config = SuiteConfig { strict, ..SuiteConfig::default() };
    ///     Harness::new("fixtures/payments").with_config(config).run(agent)
    /// }
    /// ```
    pub fn with_config(mut self, config: SuiteConfig) -> Harness {
        self.built_config = Some(config);
        self
    }

    /// Keeps recordings in this folder (crate-relative) instead of `<suite>/recordings`.
    pub fn recordings(mut self, folder: impl Into<PathBuf>) -> Harness {
        self.recordings = Some(folder.into());
        self
    }

    /// The live model, built by `make` only when a case records (`RECORD=1` or `stale`).
    pub fn model<M, F>(mut self, make: F) -> Harness
    where
        M: Model + 'static,
        F: Fn() -> M + Send + Sync + 'static,
    {
        self.model = Some(Arc::new(move || Box::new(make()) as Box<dyn Model>));
        self
    }

    /// The judge model of the `rubric` evaluator, built by `make` only when verdicts are
    /// recorded, instead of the OpenAI-compatible judge that `[judge]` describes (an Anthropic
    /// client, say). It gets the judge's chat completion request (`model`, `temperature`,
    /// `messages`, `response_format`) and answers a chat completion, the verdict JSON as a
    /// string, or the verdict object `{"verdicts": [{"id", "holds", "reason"}]}`.
    ///
    /// ```no_run
    /// use proposal_eval::{Case, Harness, Llm, Model, ModelError};
    /// use serde_json::{json, Value};
    ///
    /// fn judge() -> impl Model {
    ///     |request: &Value| -> Result<Value, ModelError> {
    ///         // Call your own client with request["messages"] here.
    ///         Ok(json!({"verdicts": [{"id": 0, "holds": true, "reason": "greets"}]}))
    ///     }
    /// }
    ///
    /// fn agent(case: &Case, _llm: &mut Llm) -> Value {
    ///     json!({ "reply": format!("Hello {}", case.input["name"]) })
    /// }
    ///
    /// fn main() -> std::process::ExitCode {
    ///     Harness::new("fixtures/greetings").judge(judge).run(agent)
    /// }
    /// ```
    pub fn judge<M, F>(mut self, make: F) -> Harness
    where
        M: Model + 'static,
        F: Fn() -> M + Send + Sync + 'static,
    {
        self.judge = Some(Arc::new(move || Box::new(make()) as Box<dyn Model>));
        self
    }

    /// [`run`](Harness::run) for an `async fn` case (or an async closure). Each case's future
    /// runs to completion on its test's thread: with the `tokio` feature on a current-thread
    /// tokio runtime made for that case (so `tokio::time`, `tokio::spawn`, reqwest and other
    /// tokio-based clients work in it), without it on a minimal executor that has no timers and
    /// no I/O.
    ///
    /// ```no_run
    /// // tests/evals.rs, with `[[test]] name = "evals" harness = false` in Cargo.toml
    /// use proposal_eval::{Case, Harness, Llm};
    /// use serde_json::{json, Value};
    ///
    /// async fn payments(case: &Case, llm: &mut Llm) -> proposal_eval::Result<Value> {
    ///     let reply = llm.complete(&json!({ "prompt": case.input["message"] }))?;
    ///     Ok(reply["proposals"].clone())
    /// }
    ///
    /// fn main() -> std::process::ExitCode {
    ///     Harness::new("fixtures/payments").run_async(payments)
    /// }
    /// ```
    pub fn run_async<F, R>(self, f: F) -> ExitCode
    where
        F: AsyncFn(&Case, &mut Llm) -> R + Send + Sync + 'static,
        R: CaseOutput + 'static,
    {
        self.run(move |case: &Case, llm: &mut Llm| crate::run::executor::block_on(f(case, llm)))
    }

    /// Runs the suite with `f` as the code under test, reading the command line like libtest
    /// does, and returns the exit code for `main`.
    pub fn run<F, R>(self, f: F) -> ExitCode
    where
        F: Fn(&Case, &mut Llm) -> R + Send + Sync + 'static,
        R: CaseOutput + 'static,
    {
        self.run_case_fn(Arc::new(move |case: &Case, llm: &mut Llm| {
            f(case, llm).into_output()
        }))
    }

    /// The suite this harness runs: its folder, config, recordings, model and judge.
    fn open_suite(self) -> Suite {
        let mut suite = Suite::new(
            crate::env::crate_root(),
            &self.fixtures,
            self.config.as_deref(),
            self.recordings.as_deref(),
            self.model,
        );
        if let Some(config) = self.built_config {
            suite.set_built_config(config);
        }
        suite.judge = self.judge;
        suite
    }

    /// [`Harness::run`] past its one generic step, so the rest is compiled once, in this crate.
    fn run_case_fn(self, f: Arc<SharedCaseFn>) -> ExitCode {
        let command_line = super::filters::CommandLine::from_env();
        let args = &command_line.args;
        let suite = Arc::new(self.open_suite());
        // nextest runs one process per test with `--exact NAME`: when the name maps straight
        // to its fixture file, that file is all there is to find.
        let direct = match (&args.filter, args.exact) {
            (Some(name), true) if !args.list => direct_fixture(&suite, name),
            _ => None,
        };
        let discovered = direct.is_none();
        // Paths relative to the suite folder: a fixture's absolute path is made when it is
        // stat'ed and when its test runs, never held for the whole list.
        let fixtures = match direct.map(Ok).unwrap_or_else(|| suite.discover_relative()) {
            Ok(found) => found,
            Err(e) => {
                eprintln!(
                    "error: cannot read the suite folder {}: {e}",
                    suite.dir.display()
                );
                return ExitCode::from(101);
            }
        };
        if fixtures.is_empty() {
            // A run that tests nothing must not pass: the folder moved, or its files were not
            // committed (a config file alone is no case). The macro refuses it at compile time.
            eprintln!(
                "error: the suite folder {} holds no fixture (*.json); add one file per case (a proposal-eval.toml alone is not a case), or check that the path is relative to the crate root",
                suite.relative(&suite.dir)
            );
            return ExitCode::from(101);
        }
        let full_run = args.filter.is_none()
            && command_line.filters.is_empty()
            && args.skip.is_empty()
            && !args.list
            && !args.ignored;
        // The cases, for the orphan check at the end of a whole run over a recorded suite: one
        // string, each case ended by a NUL (no path holds one), not a string per case (at
        // 100,000 fixtures 2.5 MB instead of 6).
        let cases: Option<String> =
            (full_run && discovered && suite.recordings.is_dir()).then(|| {
                let mut cases = String::new();
                for f in &fixtures {
                    cases.push_str(f.strip_suffix(".json").unwrap_or(f));
                    cases.push('\0');
                }
                cases
            });
        // The fixtures' stamps for the discovery cache (unless one fixture is wanted, nextest's
        // `--exact`) are taken on threads of their own while this one reads the cache and makes
        // the test names: the system calls and the names take about as long.
        let stamping = discovered && !(args.exact && args.filter.is_some());
        let (mut cache, names, stamps) = std::thread::scope(|scope| {
            let stamps =
                stamping.then(|| scope.spawn(|| StatusCache::stamps(&suite.dir, &fixtures)));
            // Whether a test is ignored comes from the discovery cache for unchanged files.
            let cache = discovered.then(|| StatusCache::open(&suite));
            let names: Vec<String> = fixtures
                .iter()
                .map(|f| crate::naming::test_name(&suite.name, f))
                .collect();
            // A thread that could not stamp leaves every file to be stat'ed on its own.
            let stamps = stamps.and_then(|thread| thread.join().ok());
            (cache, names, stamps)
        });
        // nextest runs one process per test with `--exact NAME`: parse only that fixture.
        let wanted = |name: &str| {
            command_line.selects(name)
                && match (&args.filter, args.exact) {
                    (Some(filter), true) => filter == name,
                    _ => true,
                }
        };
        // Two fixtures that make one test name: the second is a failing test saying so.
        let firsts = twins(&names, &fixtures);
        // First each test as it will wait for its turn, from the discovery cache's answers;
        // then the cache, the stamps and the list's buffers go, before the test list is made (at
        // 100,000 fixtures they are 20 MB that would otherwise stand beside it at its peak).
        let mut waiting: Vec<(String, Waiting)> = Vec::with_capacity(names.len());
        // Fixtures this run does not look at (an `--exact` filter): the discovery cache keeps
        // their answers.
        let mut unseen = Vec::new();
        let mut taken = std::collections::HashSet::new();
        let mut stamps = stamps.map(Vec::into_iter);
        for (relative, name) in fixtures.into_iter().zip(names) {
            let stamp = stamps.as_mut().map(|s| s.next().flatten());
            if !wanted(&name) {
                if cache.is_some() {
                    unseen.push(relative);
                }
                continue;
            }
            let first = match firsts.get(&name) {
                Some(first) if !taken.insert(name.clone()) => Some(first.clone()),
                _ => None,
            };
            if let Some(first) = first {
                let message = format!(
                    "the fixtures `{first}` and `{relative}` would both be the test `{name}`; rename one"
                );
                waiting.push((name, Waiting::Twin(message)));
                continue;
            }
            let waits = waits(&suite, cache.as_mut(), relative, stamp);
            waiting.push((name, waits));
        }
        drop(stamps);
        read_unread(&suite, &mut waiting);
        if let Some(cache) = cache {
            save_cache(cache, &waiting, &unseen);
        }
        drop(unseen);
        let trials = trials(&suite, &f, waiting);
        let mut args = args.clone();
        args.test_threads = test_threads(args.test_threads);
        // The cases libtest-mimic will run: a filter's substring and `--skip` are applied there.
        let selected = trials.iter().filter(|t| !args.is_filtered_out(t)).count();
        crate::recording::progress::cases_planned(selected);
        let recording =
            crate::env::settings().is_ok_and(|s| s.record != crate::env::RecordMode::Replay);
        let conclusion = if recording {
            crate::recording::progress::beside_libtest(|| libtest_mimic::run(&args, trials))
        } else {
            libtest_mimic::run(&args, trials)
        };
        // The orphan check and the report's fold read different files: side by side, the run
        // ends when the longer of the two does.
        let orphans = std::thread::scope(|scope| {
            let orphans = cases.as_ref().map(|cases| {
                scope.spawn(|| {
                    let cases: Vec<&str> = cases.split_terminator('\0').collect();
                    crate::recording::orphans(&suite.recordings, &cases)
                })
            });
            crate::report::finish();
            orphans.map(|o| o.join().unwrap_or_default())
        });
        if let Some(orphans) = orphans {
            note_orphans(&suite, &orphans);
        }
        conclusion.exit_code()
    }
}

/// Two fixtures that make one test name (`a-b.json`, `a_b.json`): the macro refuses them at
/// compile time; here the second is a failing test saying so. The first fixture of each name
/// that repeats, found by the names' hashes first, so only names that repeat are kept as
/// strings.
fn twins(names: &[String], fixtures: &[String]) -> std::collections::HashMap<String, String> {
    let mut firsts: std::collections::HashMap<String, String> = Default::default();
    let mut by_hash: std::collections::HashMap<u64, usize> =
        std::collections::HashMap::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        if let Some(&first) = by_hash.get(&name_hash(name)) {
            if names[first] == *name && !firsts.contains_key(name) {
                firsts.insert(name.clone(), fixtures[first].clone());
            }
        } else {
            by_hash.insert(name_hash(name), i);
        }
    }
    firsts
}

/// How a wanted test waits for its turn. Parsing and hashing wait for the test's own thread;
/// only a fixture that is not in the discovery cache (`cache`, with the fixture's `stamp`) is
/// read before the tests start (and parsed if it may set `status`), to know whether its test is
/// ignored: side by side, by [`read_unread`].
fn waits(
    suite: &Suite,
    cache: Option<&mut StatusCache>,
    relative: String,
    stamp: Option<Option<Stamp>>,
) -> Waiting {
    match (cache, stamp) {
        (Some(cache), Some(Some(stamp))) => match cache.hit(&relative, stamp) {
            Some(ignored) => {
                Waiting::Case(PendingCase::Unread(relative.into(), ignored, stamp.size()))
            }
            None => Waiting::Unread(relative, stamp),
        },
        // A file that could not be stat'ed is read, and not cached.
        (Some(_), Some(None)) => Waiting::Case(PendingCase::read(suite, suite.fixture(relative))),
        (Some(cache), None) => Waiting::Case(cache.pending(suite, suite.fixture(relative))),
        // No discovery (`--exact` named a fixture): that one fixture runs, so it is parsed once,
        // whole, rather than first for its status.
        (None, _) => Waiting::Case(PendingCase::Loaded(Box::new(LoadedCase::load(
            suite,
            suite.fixture(relative),
        )))),
    }
}

/// The discovery cache saved with what was read for this run, keeping the answers of the
/// fixtures it did not look at (`unseen`).
fn save_cache(mut cache: StatusCache, waiting: &[(String, Waiting)], unseen: &[String]) {
    for (_, waits) in waiting {
        if let Waiting::Read(pending, stamp) = waits {
            cache.note(pending.relative(), *stamp, pending);
        }
    }
    cache.save(unseen);
}

/// One libtest-mimic trial per waiting test: a test runs its case (the fixture read and parsed
/// on its own thread when it was not already) and records its report entry.
fn trials(
    suite: &Arc<Suite>,
    f: &Arc<SharedCaseFn>,
    waiting: Vec<(String, Waiting)>,
) -> Vec<Trial> {
    let mut trials = Vec::with_capacity(waiting.len());
    for (name, waiting) in waiting {
        let pending = match waiting {
            Waiting::Twin(message) => {
                trials.push(Trial::test(name, move || Err(Failed::from(message))));
                continue;
            }
            Waiting::Case(pending) | Waiting::Read(pending, _) => pending,
            // `read_unread` read them all; were one left, it is read here.
            Waiting::Unread(relative, _) => PendingCase::read(suite, suite.fixture(relative)),
        };
        let ignored = pending.ignored();
        let (suite, f) = (suite.clone(), f.clone());
        trials.push(
            Trial::test(name, move || {
                let mut loaded = pending.load(&suite);
                let mut result = crate::run::run_case(&suite, &mut loaded, &*f);
                crate::report::record(&suite, &mut loaded, &mut result);
                crate::recording::progress::case_done();
                match result.failure {
                    None => Ok(()),
                    Some(message) => Err(Failed::from(message)),
                }
            })
            .with_ignored_flag(ignored),
        );
    }
    trials
}

/// The test threads: `--test-threads`, else `RUST_TEST_THREADS` (libtest reads it;
/// libtest-mimic does not, so the harness does, for it), limited while recording.
fn test_threads(asked: Option<usize>) -> Option<usize> {
    let asked = asked.or_else(|| {
        std::env::var("RUST_TEST_THREADS")
            .ok()
            .and_then(|n| n.trim().parse().ok())
            .filter(|&n: &usize| n > 0)
    });
    crate::env::settings()
        .ok()
        .and_then(|s| recording_threads(asked.is_some(), s, available_cores()))
        .or(asked)
}

/// Says which recording files have no fixture any more, and the command that removes them.
fn note_orphans(suite: &Suite, orphans: &[PathBuf]) {
    if orphans.is_empty() {
        return;
    }
    let mut prune = format!("cargo proposal-eval prune {}", suite.relative(&suite.dir));
    if suite.recordings != suite.dir.join("recordings") {
        prune.push_str(&format!(
            " --recordings {}",
            suite.relative(&suite.recordings)
        ));
    }
    eprintln!(
        "note: {} recording file(s) have no fixture any more or are left over from an interrupted write (remove them with `{prune} --yes`, run in the crate root):",
        orphans.len()
    );
    for orphan in orphans {
        eprintln!("  {}", suite.relative(orphan));
    }
}

fn name_hash(name: &str) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    BuildHasherDefault::<DefaultHasher>::default().hash_one(name)
}

/// The fixture of the test `name` when its path can be read off the name (`suite::sub::case` is
/// `sub/case.json`, with no character that naming replaces) and maps back to it; `None` sends
/// the caller to full discovery.
fn direct_fixture(suite: &Suite, name: &str) -> Option<Vec<String>> {
    let rest = name.strip_prefix(&suite.name)?.strip_prefix("::")?;
    let relative = format!("{}.json", rest.replace("::", "/"));
    let absolute = suite.dir.join(&relative);
    let fixture = FixturePath { relative, absolute };
    if !fixture.absolute.is_file()
        || fixture.absolute.starts_with(&suite.recordings)
        || fixture.relative.split('/').any(|c| c.starts_with('.'))
        || suite.test_name(&fixture) != name
    {
        return None;
    }
    // What discovery would flag: another file of the same folder that makes the same test name.
    let parent = fixture.absolute.parent()?;
    let file_name = fixture.absolute.file_name()?.to_string_lossy().into_owned();
    let target = crate::naming::identifier(file_name.strip_suffix(".json")?);
    let twins = std::fs::read_dir(parent).ok()?.flatten().any(|e| {
        let other = e.file_name();
        let other = other.to_string_lossy();
        other != file_name
            && other
                .strip_suffix(".json")
                .is_some_and(|stem| same_identifier(stem, &target))
    });
    (!twins).then(|| vec![fixture.relative])
}

/// Whether `stem` makes the identifier `target`. The identifier of an ASCII stem is the stem
/// with each character other than a letter, digit or `_` made `_`, with perhaps a `_` before
/// and after: a stem whose characters do not line up with `target` at either offset is told
/// apart without building its identifier (most of a folder's names, at the first character
/// that differs).
fn same_identifier(stem: &str, target: &str) -> bool {
    let maps_into = |offset: usize| {
        target.len() >= stem.len() + offset
            && stem.bytes().zip(target.bytes().skip(offset)).all(|(c, t)| {
                if c.is_ascii_alphanumeric() {
                    c == t
                } else {
                    t == b'_'
                }
            })
    };
    if stem.is_ascii() && !maps_into(0) && !maps_into(1) {
        return false;
    }
    crate::naming::identifier(stem) == target
}

#[cfg(test)]
mod tests {
    use super::{read_unread, recording_threads, same_identifier, Waiting};
    use crate::env::{RecordMode, Settings};

    /// Recording runs cases on at least PROPOSAL_EVAL_MAX_CONCURRENCY threads whatever the
    /// cores, unless the threads were given; replay leaves libtest's choice.
    #[test]
    fn recording_runs_as_many_threads_as_live_calls_allowed() {
        let settings = |record, max_concurrency| Settings {
            upstream: None,
            upstreams: Default::default(),
            budget_usd: None,
            record,
            color: false,
            max_concurrency,
            repeat: None,
        };
        assert_eq!(
            recording_threads(false, &settings(RecordMode::All, 8), 2),
            Some(8)
        );
        assert_eq!(
            recording_threads(false, &settings(RecordMode::Stale, 8), 16),
            Some(16)
        );
        assert_eq!(
            recording_threads(true, &settings(RecordMode::All, 8), 2),
            None
        );
        assert_eq!(
            recording_threads(false, &settings(RecordMode::Replay, 8), 2),
            None
        );
    }

    use crate::naming::identifier;
    use crate::suite::discovery::StatusCache;
    use crate::suite::Suite;
    use std::path::Path;

    /// Fixtures the discovery cache has no answer for are read side by side (600 here: on
    /// several threads where there are several cores), each into its own place: its path, and
    /// whether a top-level `draft` status ignores it (a nested `status` does not).
    #[test]
    fn unread_fixtures_are_read_side_by_side_each_into_its_place() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("s");
        std::fs::create_dir_all(&dir).unwrap();
        let relative: Vec<String> = (0..600).map(|i| format!("c{i:03}.json")).collect();
        for (i, file) in relative.iter().enumerate() {
            let status = if i % 7 == 0 {
                r#", "status": "draft""#
            } else {
                ""
            };
            let text = format!(r#"{{"input": {{"status": "x{i}"}}, "expected": []{status}}}"#);
            std::fs::write(dir.join(file), text).unwrap();
        }
        let suite = Suite::new(root.path().into(), Path::new("s"), None, None, None);
        let stamps = StatusCache::stamps(&dir, &relative);
        let mut waiting: Vec<(String, Waiting)> = relative
            .iter()
            .zip(stamps)
            .map(|(file, stamp)| (file.clone(), Waiting::Unread(file.clone(), stamp.unwrap())))
            .collect();
        read_unread(&suite, &mut waiting);
        for (i, (file, waits)) in waiting.iter().enumerate() {
            let Waiting::Read(pending, _) = waits else {
                panic!("{file} was not read");
            };
            assert_eq!(pending.relative(), file);
            assert_eq!(pending.ignored(), i % 7 == 0, "{file}");
            assert!(!pending.read_failed(), "{file}");
        }
    }

    /// The shortcut answers as building both identifiers does, on names whose identifiers get a
    /// `_` before (a digit first), after (a keyword, `_`), or are spelled from non-ASCII.
    #[test]
    fn same_identifier_agrees_with_identifier() {
        let names = [
            "a-b",
            "a_b",
            "ab",
            "a.b",
            "a b",
            "A-b",
            "1a",
            "_1a",
            "1-a",
            "fn",
            "fn_",
            "_",
            "__",
            "",
            "-",
            "ü",
            "u00fc_",
            "_ü",
            "case_02500",
            "case_02501",
            "case-02500",
            "self",
        ];
        for stem in names {
            for other in names {
                assert_eq!(
                    same_identifier(stem, &identifier(other)),
                    identifier(stem) == identifier(other),
                    "{stem:?} and {other:?}"
                );
            }
        }
    }
}
