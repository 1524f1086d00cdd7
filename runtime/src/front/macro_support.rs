//! What `#[proposal_eval]` expands to calls; not a public API.

use crate::recording::llm::Llm;
use crate::recording::model::{Model, ModelFactory};
use crate::run::case::{Case, CaseOutput};
use crate::suite::{LoadedCase, Suite};
use std::collections::HashMap;
use std::future::Future;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

/// A suite as the macro describes it.
pub struct MacroSuite {
    /// `env!("CARGO_MANIFEST_DIR")` of the crate that holds the tests.
    pub crate_root: &'static str,
    /// The `fixtures` argument.
    pub fixtures: &'static str,
    /// The `config` argument.
    pub config: Option<&'static str>,
    /// The `recordings` argument.
    pub recordings: Option<&'static str>,
    /// The `model` argument, boxed.
    pub model: Option<fn() -> Box<dyn Model>>,
    /// The `judge` argument, boxed.
    pub judge: Option<fn() -> Box<dyn Model>>,
}

/// Suites by the address of their invocation's static: built once per test binary.
type Suites = Mutex<HashMap<usize, Arc<Suite>>>;

fn suite(spec: &MacroSuite) -> Arc<Suite> {
    static SUITES: OnceLock<Suites> = OnceLock::new();
    let mut suites = SUITES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    suites
        // One static MacroSuite per invocation: two invocations over the same folder with
        // other arguments are other suites.
        .entry(spec as *const MacroSuite as usize)
        .or_insert_with(|| {
            let model = spec.model.map(|make| Arc::new(make) as ModelFactory);
            let mut suite = Suite::new(
                spec.crate_root.into(),
                Path::new(spec.fixtures),
                spec.config.map(Path::new),
                spec.recordings.map(Path::new),
                model,
            );
            suite.judge = spec.judge.map(|make| Arc::new(make) as ModelFactory);
            Arc::new(suite)
        })
        .clone()
}

/// Runs one fixture of a macro suite; panics with the failure message when it fails.
pub fn run<F, R>(spec: &MacroSuite, relative: &str, f: F)
where
    F: Fn(&Case, &mut Llm) -> R,
    R: CaseOutput,
{
    let suite = suite(spec);
    let path = crate::suite::fixture::FixturePath {
        relative: relative.to_string(),
        absolute: suite.dir.join(relative),
    };
    note_threads_once();
    if crate::env::settings().is_ok_and(|s| s.record != crate::env::RecordMode::Replay) {
        crate::recording::progress::beside_libtest_until_exit();
    }
    let mut loaded = LoadedCase::load(&suite, path);
    let mut result =
        crate::run::run_case(&suite, &mut loaded, &|case, llm| f(case, llm).into_output());
    crate::report::record(&suite, &mut loaded, &mut result);
    crate::recording::progress::case_done();
    crate::report::finish_at_exit();
    if let Some(message) = result.failure {
        // resume_unwind prints no "thread panicked at" noise; libtest shows the message.
        eprintln!("{message}");
        std::panic::resume_unwind(Box::new(message));
    }
}

/// Once per test binary, while recording: when libtest runs fewer test threads than
/// `PROPOSAL_EVAL_MAX_CONCURRENCY` live calls may run at once, says how to raise them (the
/// macro's tests run on libtest's threads, which the runtime cannot add to). nextest runs a
/// process per test, whose live calls share their places across processes: nothing to say.
fn note_threads_once() {
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        let Ok(settings) = crate::env::settings() else {
            return;
        };
        if settings.record == crate::env::RecordMode::Replay
            || std::env::var_os("NEXTEST_RUN_ID").is_some()
        {
            return;
        }
        let args: Vec<String> = std::env::args().collect();
        let threads = libtest_threads(&args, std::env::var("RUST_TEST_THREADS").ok().as_deref());
        if let Some(note) = threads_note(threads, settings.max_concurrency) {
            eprintln!("{note}");
        }
    });
}

/// The test threads libtest runs: `--test-threads N`, else `RUST_TEST_THREADS`, else the cores.
fn libtest_threads(args: &[String], env: Option<&str>) -> usize {
    let given = args.iter().enumerate().find_map(|(i, a)| match a.as_str() {
        "--test-threads" => args.get(i + 1).map(String::as_str),
        other => other.strip_prefix("--test-threads="),
    });
    given
        .or(env)
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, Into::into))
}

/// The note for recording on `threads` test threads with `max` live calls allowed at once.
fn threads_note(threads: usize, max: usize) -> Option<String> {
    (threads < max).then(|| {
        format!(
            "note: recording on {threads} test thread(s), so at most {threads} live model call(s) run at once; PROPOSAL_EVAL_MAX_CONCURRENCY allows {max}. Raise the threads to match: RUST_TEST_THREADS={max} cargo test (or `cargo test -- --test-threads {max}`)"
        )
    })
}

/// Type-checks a case function where it is written: two arguments, an output the runtime takes.
pub fn check_signature<F, R>(_f: F)
where
    F: Fn(&Case, &mut Llm) -> R,
    R: CaseOutput,
{
}

/// Boxes a live model for [`MacroSuite::model`].
pub fn boxed_model<M: Model + 'static>(model: M) -> Box<dyn Model> {
    Box::new(model)
}

/// Runs an `async fn` case's future to completion on the test's thread: on a tokio runtime
/// with the `tokio` feature, on a minimal executor without it.
pub fn block_on<F: Future>(future: F) -> F::Output {
    crate::run::executor::block_on(future)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libtest_threads_come_from_the_flag_then_the_variable() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            libtest_threads(&args(&["t", "--test-threads", "3"]), Some("5")),
            3
        );
        assert_eq!(libtest_threads(&args(&["t", "--test-threads=2"]), None), 2);
        assert_eq!(libtest_threads(&args(&["t", "name"]), Some("5")), 5);
    }

    #[test]
    fn the_note_says_how_to_raise_the_threads() {
        assert_eq!(threads_note(8, 8), None);
        assert_eq!(
            threads_note(2, 8).unwrap(),
            "note: recording on 2 test thread(s), so at most 2 live model call(s) run at once; PROPOSAL_EVAL_MAX_CONCURRENCY allows 8. Raise the threads to match: RUST_TEST_THREADS=8 cargo test (or `cargo test -- --test-threads 8`)"
        );
    }
}
