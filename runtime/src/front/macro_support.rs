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
    let mut loaded = LoadedCase::load(&suite, path);
    let result = crate::run::run_case(&suite, &mut loaded, &|case, llm| f(case, llm).into_output());
    crate::report::record(&suite, &loaded, &result);
    crate::report::finish_at_exit();
    if let Some(message) = result.failure {
        // resume_unwind prints no "thread panicked at" noise; libtest shows the message.
        eprintln!("{message}");
        std::panic::resume_unwind(Box::new(message));
    }
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
