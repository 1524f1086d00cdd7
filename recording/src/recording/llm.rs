//! The model handle the code under test calls: [`Llm`].

use crate::path::Pattern;
use crate::recording::calls::{catch, lock, Call, Core, LivePermit, LlmError, Mode, Turn};
use crate::recording::model::{Model, ModelError, ModelFactory};
use crate::recording::upstream::HttpConfig;
use crate::recording::usage::{Completion, Pricing, UsageTotals};
use crate::recording::Interaction;
use chrono::Utc;
use proposal_eval_engine::redact::Redactor;
use proposal_eval_engine::trajectory::ToolCall;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};

/// What the code under test calls instead of its model: replays the case's recording, or,
/// while recording, forwards to the live model and keeps what it answers.
///
/// ```
/// use proposal_eval::{Llm, ModelError};
/// use serde_json::{json, Value};
///
/// // A handle on a live model, outside any test (the test front ends build their own).
/// let mut llm = Llm::live(|r: &Value| -> Result<Value, ModelError> { Ok(json!({ "got": r })) });
/// assert_eq!(llm.complete(&json!("hi")).unwrap(), json!({ "got": "hi" }));
/// ```
pub struct Llm {
    core: Arc<Mutex<Core>>,
    #[cfg(feature = "http")]
    proxies: crate::recording::http::Proxies,
}

impl fmt::Debug for Llm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Llm")
            .field("calls", &self.calls())
            .finish_non_exhaustive()
    }
}

impl Llm {
    /// A handle that forwards every request to `model` (no recording is kept on disk).
    pub fn live(model: impl Model + 'static) -> Llm {
        Llm::new(
            Mode::Record {
                factory: None,
                model: Some(Arc::new(model)),
            },
            Vec::new(),
        )
    }

    fn new(mode: Mode, ignore_request_paths: Vec<Pattern>) -> Llm {
        let budget_usd = crate::env::settings().ok().and_then(|s| s.budget_usd);
        Llm {
            core: Arc::new(Mutex::new(Core::new(
                mode,
                ignore_request_paths,
                budget_usd,
            ))),
            #[cfg(feature = "http")]
            proxies: Default::default(),
        }
    }

    /// A replay of `recorded`; each request is compared with the recorded one without the
    /// `ignore_request_paths`, and in its redacted form (`redactor`, the rules the recording was
    /// written with).
    #[doc(hidden)]
    pub fn replay(
        recorded: Vec<Interaction>,
        ignore_request_paths: Vec<Pattern>,
        redactor: Redactor,
    ) -> Llm {
        let llm = Llm::new(Mode::Replay { recorded }, ignore_request_paths);
        lock(&llm.core).set_redactor(redactor);
        llm
    }

    /// A replay of a sample whose recorded requests are held as digests (their interactions'
    /// requests are `null`).
    #[doc(hidden)]
    pub fn with_digests(self, digests: crate::recording::calls::SampleDigests) -> Llm {
        lock(&self.core).set_digests(digests);
        self
    }

    #[doc(hidden)]
    pub fn record(factory: Option<ModelFactory>) -> Llm {
        Llm::new(
            Mode::Record {
                factory,
                model: None,
            },
            Vec::new(),
        )
    }

    #[doc(hidden)]
    pub fn missing(record_command: String) -> Llm {
        Llm::new(Mode::Missing { record_command }, Vec::new())
    }

    /// The suite's `[http]` upstreams and `[pricing]`, for calls through `llm.base_url()` and
    /// for costs.
    #[doc(hidden)]
    pub fn with_suite(self, http: HttpConfig, pricing: BTreeMap<String, Pricing>) -> Llm {
        lock(&self.core).set_suite(http, pricing);
        self
    }

    /// Sends a request to the model (live while recording, from the recording otherwise) and
    /// returns the response.
    ///
    /// A replay failure (a request that differs from the recorded one, one call too many, no
    /// recording) fails the test even when the code under test handles the error.
    pub fn complete(&mut self, request: &Value) -> Result<Value, LlmError> {
        let turn = lock(&self.core).begin(&Call::Complete(request))?;
        let (index, model) = match turn {
            Turn::Replayed(interaction) => return Ok(interaction.response),
            Turn::Live { index, model } => (index, model),
        };
        let Some(model) = model else {
            return Err(LlmError::NoModel);
        };
        let (answer, latency_ms) = live_call(&*model, request);
        match answer {
            Ok(Completion { response, usage }) => {
                let mut interaction =
                    Interaction::new(request.clone(), response.clone(), Utc::now());
                interaction.latency_ms = Some(latency_ms);
                interaction.usage = usage;
                lock(&self.core).finish_live(index, interaction);
                Ok(response)
            }
            Err(e) => {
                lock(&self.core).live_failed(e.to_string());
                Err(LlmError::Model(e))
            }
        }
    }

    /// The base URL of a loopback HTTP server that stands for the default upstream
    /// (`[http] upstream`, or `PROPOSAL_EVAL_UPSTREAM`): give it to the code under test's own
    /// HTTP client in place of the API's base URL (`https://api.openai.com/v1` becomes
    /// `http://127.0.0.1:PORT/case/N`, and `/chat/completions` is appended by the client as
    /// before). One server per process serves every case, each under its own URL.
    ///
    /// Every request to it is one call of the case, like an [`Llm::complete`] call: while
    /// recording it is forwarded to the upstream (method, path, query, headers, body) and its
    /// answer recorded (status, content type, JSON body, or the events of a `text/event-stream`
    /// answer); in replay it is matched against the recorded call (method, path, JSON body
    /// without `ignore_request_paths`) and the recorded answer is served. A request that does
    /// not match fails the case with the request diff and gets an HTTP 400 whose
    /// `error.message` says why.
    ///
    /// Needs the `http` feature. Fails while recording when no upstream is set.
    ///
    /// ```
    /// use proposal_eval::{Llm, Model, ModelError};
    /// use serde_json::Value;
    ///
    /// let llm = Llm::live(|_: &Value| -> Result<Value, ModelError> { unreachable!() });
    /// // Recording needs an upstream; outside a suite with `[http]`, PROPOSAL_EVAL_UPSTREAM.
    /// # if std::env::var_os("PROPOSAL_EVAL_UPSTREAM").is_none() {
    /// let err = llm.base_url().unwrap_err();
    /// assert!(err.to_string().contains("[http] upstream"));
    /// # }
    /// ```
    #[cfg(feature = "http")]
    pub fn base_url(&self) -> Result<String, LlmError> {
        self.proxies.url(&self.core, None)
    }

    /// [`Llm::base_url`] for the upstream `name` of `[http.upstreams]` (or
    /// `PROPOSAL_EVAL_UPSTREAM_<NAME>`), for code that calls more than one API.
    #[cfg(feature = "http")]
    pub fn base_url_for(&self, name: &str) -> Result<String, LlmError> {
        self.proxies.url(&self.core, Some(name))
    }

    /// Adds a step to the case's trajectory: a tool the code called on its own decision, not
    /// because a model response asked for it. It takes its place after the tool calls of the
    /// responses handed out so far, which are added by themselves (OpenAI Chat Completions and
    /// Responses, Anthropic Messages; streamed or not; through [`Llm::complete`] or the HTTP
    /// proxy). The `trajectory` evaluator checks the whole list against the fixture's
    /// `expected_trajectory`.
    ///
    /// ```
    /// use proposal_eval::{Llm, ModelError};
    /// use serde_json::{json, Value};
    ///
    /// let mut llm = Llm::live(|_: &Value| -> Result<Value, ModelError> {
    ///     Ok(json!({"content": [{"type": "tool_use", "name": "inventory_lookup", "input": {"sku": "SKU-123"}}]}))
    /// });
    /// llm.complete(&json!({"messages": []})).unwrap();
    /// llm.note_tool_call("audit_log", json!({"event": "lookup"}));
    /// let tools: Vec<String> = llm.trajectory().into_iter().map(|c| c.tool).collect();
    /// assert_eq!(tools, ["inventory_lookup", "audit_log"]);
    /// ```
    pub fn note_tool_call(&self, name: &str, args: Value) {
        lock(&self.core).note_tool_call(ToolCall::new(name, args));
    }

    /// The case's trajectory so far: the tool calls of every response handed to the code, in
    /// the order they came, and the steps noted with [`Llm::note_tool_call`].
    pub fn trajectory(&self) -> Vec<ToolCall> {
        lock(&self.core).trajectory().to_vec()
    }

    /// How many calls the code under test made.
    pub fn calls(&self) -> usize {
        lock(&self.core).calls()
    }

    /// After the case returned: stops serving the case's URLs of `llm.base_url()`, waiting for the
    /// calls they are answering.
    #[doc(hidden)]
    pub fn close(&mut self) {
        #[cfg(feature = "http")]
        self.proxies.close();
    }

    /// After the case returned: the first replay failure, or the calls the recording has that
    /// were not made.
    #[doc(hidden)]
    pub fn finish_failure(&self) -> Option<String> {
        lock(&self.core).finish_failure()
    }

    /// After the case returned, in replay: whether the code's calls no longer match the
    /// recording (a request differs, or there are more or fewer calls), which `RECORD=stale`
    /// treats as a stale recording.
    #[doc(hidden)]
    pub fn replay_mismatched(&self) -> bool {
        lock(&self.core).replay_mismatched()
    }

    /// While recording: what the upstream answered with an error status, in words.
    #[doc(hidden)]
    pub fn upstream_errors(&self) -> Option<String> {
        lock(&self.core).upstream_errors()
    }

    /// While recording: the suite's redaction rules, for what its upstream errors tell.
    #[doc(hidden)]
    pub fn redacting(self, redactor: Redactor) -> Llm {
        lock(&self.core).set_redactor(redactor);
        self
    }

    /// While recording: the first live call's failure, if one failed.
    #[doc(hidden)]
    pub fn model_failure(&self) -> Option<String> {
        lock(&self.core).model_failed()
    }

    /// The calls made so far: tokens, recorded latency, estimated cost.
    #[doc(hidden)]
    pub fn usage(&self) -> UsageTotals {
        lock(&self.core).usage()
    }

    /// The calls that got their answer so far, in order: kind, model, tokens, latency, cost.
    #[doc(hidden)]
    pub fn call_log(&self) -> Vec<crate::recording::usage::CallEntry> {
        lock(&self.core).call_log().to_vec()
    }

    /// While recording: the interactions to write, unless a live call failed.
    #[doc(hidden)]
    pub fn take_recorded(&mut self) -> Option<Vec<Interaction>> {
        lock(&self.core).take_recorded()
    }
}

/// How many times a call refused for the rate is made in all before the refusal is the
/// answer (as through the proxy).
const ATTEMPTS: u32 = 6;

/// One `llm.complete` call to the live model, within the shared limit on live calls: what the
/// model tells of its HTTP answers (a refusal for the rate, the rate-limit headers) is told to
/// the limit, and a refused call is made again when the limit lets it, up to [`ATTEMPTS`] times
/// in all. The answer and the answered attempt's latency.
fn live_call(model: &dyn Model, request: &Value) -> (Result<Completion, ModelError>, f64) {
    use crate::recording::rate_limit;
    let max = crate::env::settings()
        .map(|s| s.max_concurrency)
        .unwrap_or(crate::env::DEFAULT_MAX_CONCURRENCY);
    let mut attempt = 1;
    let mut waited = std::time::Duration::ZERO;
    loop {
        let mut permit = LivePermit::acquire(max);
        waited += permit.waited;
        let started = std::time::Instant::now();
        let (answer, told) = catch(|| {
            crate::sys::outside_async(|| {
                rate_limit::observing(|| model.complete_with_usage(request))
            })
        })
        .unwrap_or_else(|m| {
            let e = ModelError::new(format!("the live model panicked: {m}"));
            (Err(e), None)
        });
        let latency_ms = crate::recording::usage::millis(started.elapsed());
        let outcome = match &answer {
            Err(e) => e.rate.or(told),
            Ok(_) => told.or(Some(rate_limit::Outcome::FINE)),
        };
        let alone = outcome.map_or(std::time::Duration::ZERO, |o| permit.report(o));
        drop(permit);
        let refused = outcome.is_some_and(|o| o.refused) && answer.is_err();
        if !refused || attempt == ATTEMPTS {
            let answer = answer.map_err(|e| resent(e, attempt - 1, waited));
            return (answer, latency_ms);
        }
        std::thread::sleep(alone);
        waited += alone;
        attempt += 1;
    }
}

/// A failed call's error, with the resends made after refusals for the rate and the waits.
fn resent(e: ModelError, resends: u32, waited: std::time::Duration) -> ModelError {
    if resends == 0 && waited < std::time::Duration::from_millis(100) {
        return e;
    }
    e.noted(&format!(
        " (sent {} time(s): {resends} resend(s) after refusals for the rate, {:.1} s waited for Retry-After and pacing)",
        resends + 1,
        waited.as_secs_f64()
    ))
}

impl Drop for Llm {
    fn drop(&mut self) {
        self.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn interaction(request: Value, response: Value) -> Interaction {
        Interaction::new(request, response, "2025-01-01T00:00:00Z".parse().unwrap())
    }

    #[test]
    fn a_panicking_live_model_is_named_as_the_models_failure() {
        let panics_when_called: ModelFactory = std::sync::Arc::new(|| {
            Box::new(|_: &Value| -> Result<Value, ModelError> { panic!("socket exploded") })
        });
        let mut llm = Llm::record(Some(panics_when_called));
        let err = llm.complete(&json!(1)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the live model failed: the live model panicked: socket exploded"
        );
        assert_eq!(
            llm.model_failure().as_deref(),
            Some("the live model panicked: socket exploded")
        );
        assert!(llm.take_recorded().unwrap_or_default().is_empty());

        let panics_when_built: ModelFactory = std::sync::Arc::new(|| panic!("no API key"));
        let mut llm = Llm::record(Some(panics_when_built));
        let err = llm.complete(&json!(1)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the live model failed: building the live model panicked: no API key"
        );
    }

    #[test]
    fn replays_in_order_and_counts_calls() {
        let mut llm = Llm::replay(
            vec![
                interaction(json!(1), json!("a")),
                interaction(json!(2), json!("b")),
            ],
            vec![],
            Redactor::default(),
        );
        assert_eq!(llm.complete(&json!(1)).unwrap(), json!("a"));
        assert_eq!(
            llm.finish_failure().unwrap(),
            "the code made 1 model call(s) but the recording has 2; re-record if the change is intended"
        );
        assert_eq!(llm.complete(&json!(2)).unwrap(), json!("b"));
        assert!(llm.finish_failure().is_none());
        assert!(matches!(
            llm.complete(&json!(3)),
            Err(LlmError::TooManyCalls { recorded: 2 })
        ));
        assert!(llm.finish_failure().unwrap().contains("call [2]"));
    }

    /// Fan-out: calls made at once arrive in any order; each is served the first recorded call
    /// not yet served that equals it, so every order of arrival replays.
    #[test]
    fn calls_replay_in_any_order_of_arrival() {
        let recorded: Vec<Interaction> = (0..4)
            .map(|i| interaction(json!({ "ask": i }), json!(format!("answer {i}"))))
            .collect();
        // Every permutation of four calls (Heap's order would do; a plain product is clearer).
        let mut orders = Vec::new();
        for a in 0..4 {
            for b in (0..4).filter(|&b| b != a) {
                for c in (0..4).filter(|&c| c != a && c != b) {
                    orders.push([a, b, c, 6 - a - b - c]);
                }
            }
        }
        assert_eq!(orders.len(), 24);
        for order in orders {
            let mut llm = Llm::replay(recorded.clone(), vec![], Redactor::default());
            for i in order {
                assert_eq!(
                    llm.complete(&json!({ "ask": i })).unwrap(),
                    json!(format!("answer {i}")),
                    "{order:?}"
                );
            }
            assert_eq!(llm.finish_failure(), None, "{order:?}");
        }
    }

    /// Equal requests (the same question asked twice at once) are served in recorded order, and
    /// each recorded call once.
    #[test]
    fn equal_requests_are_served_in_recorded_order_once_each() {
        let mut llm = Llm::replay(
            vec![
                interaction(json!({ "ask": "same" }), json!("first")),
                interaction(json!({ "ask": "other" }), json!("other")),
                interaction(json!({ "ask": "same" }), json!("second")),
            ],
            vec![],
            Redactor::default(),
        );
        assert_eq!(
            llm.complete(&json!({ "ask": "same" })).unwrap(),
            json!("first")
        );
        assert_eq!(
            llm.complete(&json!({ "ask": "same" })).unwrap(),
            json!("second")
        );
        let third = llm.complete(&json!({ "ask": "same" })).unwrap_err();
        assert_eq!(
            third.to_string(),
            "request [2] differs from recorded call [1], the only one not yet served (re-record if the change is intended):\n\
             --- recorded request\n\
             +++ this request\n\
             @@ -1,3 +1,3 @@\n \
             {\n\
             -  \"ask\": \"other\"\n\
             +  \"ask\": \"same\"\n \
             }\n"
        );
    }

    /// A request equal to no unserved call is diffed against the closest unserved one (the
    /// fewest changed lines), wherever it is in the recording, and its failure says which.
    #[test]
    fn a_request_equal_to_none_is_diffed_against_the_closest_unserved_call() {
        let request = |city: &str, days: u32| json!({ "model": "m", "tool": "weather", "city": city, "days": days, "units": "metric" });
        let mut llm = Llm::replay(
            vec![
                interaction(request("Paris", 3), json!("p")),
                interaction(request("Oslo", 3), json!("o")),
                interaction(request("Rome", 3), json!("r")),
            ],
            vec![],
            Redactor::default(),
        );
        assert_eq!(llm.complete(&request("Paris", 3)).unwrap(), json!("p"));
        let err = llm.complete(&request("Rome", 5)).unwrap_err();
        assert!(
            matches!(
                err,
                LlmError::RequestDiffers {
                    index: 1,
                    closest: 2,
                    unserved: 2,
                    ..
                }
            ),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "request [1] differs from each of the 2 recorded calls not yet served; the closest is recorded call [2] (re-record if the change is intended):\n\
             --- recorded request\n\
             +++ this request\n\
             @@ -1,6 +1,6 @@\n \
             {\n   \
             \"city\": \"Rome\",\n\
             -  \"days\": 3,\n\
             +  \"days\": 5,\n   \
             \"model\": \"m\",\n   \
             \"tool\": \"weather\",\n   \
             \"units\": \"metric\"\n"
        );
        // The failure is kept; the calls that follow still replay in any order.
        assert_eq!(llm.complete(&request("Rome", 3)).unwrap(), json!("r"));
        assert_eq!(llm.complete(&request("Oslo", 3)).unwrap(), json!("o"));
        assert!(llm
            .finish_failure()
            .unwrap()
            .starts_with("request [1] differs from each of the 2 recorded calls"));
    }

    #[test]
    fn a_changed_request_names_its_index_even_if_swallowed() {
        let mut llm = Llm::replay(
            vec![interaction(json!({"p": "a", "id": 1}), json!("x"))],
            vec![Pattern::parse("id").unwrap()],
            Redactor::default(),
        );
        let _ = llm.complete(&json!({"p": "b", "id": 2}));
        let failure = llm.finish_failure().unwrap();
        assert!(failure.contains("request [0] differs"), "{failure}");
        assert!(failure.contains("\"b\""), "{failure}");
    }

    #[test]
    fn ignored_request_paths_are_not_compared() {
        let mut llm = Llm::replay(
            vec![interaction(
                json!({"p": "a", "meta": {"id": 1}}),
                json!("x"),
            )],
            vec![Pattern::parse("meta.id").unwrap()],
            Redactor::default(),
        );
        assert_eq!(
            llm.complete(&json!({"p": "a", "meta": {"id": 2}})).unwrap(),
            json!("x")
        );
    }

    #[test]
    fn a_redacted_recording_replays_with_any_key_and_diffs_never_show_it() {
        let redactor = Redactor::new(vec![], vec!["ref-[0-9]{6}".parse().unwrap()]);
        let sent = |key: &str, reference: &str, prompt: &str| {
            json!({
                "headers": { "Authorization": format!("Bearer {key}") },
                "body": { "api_key": key, "prompt": prompt, "note": format!("order {reference}") },
            })
        };
        let mut recorded = sent("sk-live-first-0123456789abcdef", "ref-123456", "hi");
        redactor.redact(&mut recorded);
        assert!(!recorded.to_string().contains("sk-live"), "{recorded}");
        let replay = |request: &Value| {
            let mut llm = Llm::replay(
                vec![interaction(recorded.clone(), json!("answer"))],
                vec![],
                redactor.clone(),
            );
            llm.complete(request).map_err(|e| e.to_string())
        };
        let other_key = sent("sk-live-second-fedcba9876543210", "ref-654321", "hi");
        assert_eq!(replay(&other_key), Ok(json!("answer")));

        let changed = sent("sk-live-second-fedcba9876543210", "ref-654321", "bye");
        let failure = replay(&changed).unwrap_err();
        assert!(failure.contains("request [0] differs"), "{failure}");
        assert!(
            failure.contains("-    \"prompt\": \"hi\"")
                && failure.contains("+    \"prompt\": \"bye\""),
            "{failure}"
        );
        assert!(
            !failure.contains("sk-live") && !failure.contains("ref-6"),
            "{failure}"
        );
        // Only the prompt line differs: the redacted places are equal on both sides.
        let changed_lines = failure
            .lines()
            .filter(|l| l.starts_with('-') || l.starts_with('+'))
            .filter(|l| !l.starts_with("---") && !l.starts_with("+++"))
            .count();
        assert_eq!(changed_lines, 2, "{failure}");
    }

    /// A key the recording's rules do not cover (a field the code only now sends) makes the
    /// request differ, and the diff says where without printing it.
    #[test]
    fn a_credential_in_a_new_place_is_masked_in_the_diff() {
        let mut llm = Llm::replay(
            vec![interaction(
                json!({ "prompt": "hi", "user": "ada" }),
                json!("x"),
            )],
            vec![],
            Redactor::default(),
        );
        let sent = json!({ "prompt": "hi", "user": "sk-live-0f1e2d3c4b5a69788796a5b4" });
        let failure = llm.complete(&sent).unwrap_err().to_string();
        assert!(!failure.contains("sk-live"), "{failure}");
        assert!(
            failure.contains("-  \"user\": \"ada\"")
                && failure.contains("+  \"user\": \"<redacted>\""),
            "{failure}"
        );
    }

    #[test]
    fn recording_builds_the_model_only_when_called() {
        let built = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = built.clone();
        let factory: ModelFactory = std::sync::Arc::new(move || {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Box::new(|r: &Value| -> Result<Value, ModelError> { Ok(json!({"echo": r})) })
                as Box<dyn Model>
        });
        let mut idle = Llm::record(Some(factory.clone()));
        assert_eq!(idle.take_recorded().unwrap().len(), 0);
        assert_eq!(built.load(std::sync::atomic::Ordering::SeqCst), 0);
        let mut llm = Llm::record(Some(factory));
        llm.complete(&json!(1)).unwrap();
        llm.complete(&json!(2)).unwrap();
        assert_eq!(built.load(std::sync::atomic::Ordering::SeqCst), 1);
        let recorded = llm.take_recorded().unwrap();
        assert_eq!(recorded[1].response, json!({"echo": 2}));
    }

    /// A model that tells its refusals (`ModelError::with_http`) has them waited out and sent
    /// again by the shared limit; one that tells no status is not sent again.
    #[test]
    fn a_refusal_the_model_tells_is_sent_again_and_said() {
        use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
        let calls = Arc::new(AtomicUsize::new(0));
        let seen = calls.clone();
        let mut llm = Llm::live(move |_: &Value| -> Result<Value, ModelError> {
            match seen.fetch_add(1, SeqCst) {
                0 | 1 => Err(ModelError::new("HTTP 429: slow down")
                    .with_http(429, &[("retry-after-ms", "60")])),
                _ => Ok(json!("answer")),
            }
        });
        let started = std::time::Instant::now();
        assert_eq!(llm.complete(&json!(1)).unwrap(), json!("answer"));
        assert_eq!(calls.load(SeqCst), 3);
        assert!(started.elapsed() >= std::time::Duration::from_millis(110));

        let calls = Arc::new(AtomicUsize::new(0));
        let seen = calls.clone();
        let mut llm = Llm::live(move |_: &Value| -> Result<Value, ModelError> {
            seen.fetch_add(1, SeqCst);
            Err(ModelError::new("HTTP 429: slow down").with_http(429, &[("retry-after-ms", "1")]))
        });
        let error = llm.complete(&json!(1)).unwrap_err().to_string();
        assert_eq!(calls.load(SeqCst), 6);
        assert!(
            error.starts_with("the live model failed: HTTP 429: slow down (sent 6 time(s): 5 resend(s) after refusals for the rate, "),
            "{error}"
        );

        let calls = Arc::new(AtomicUsize::new(0));
        let seen = calls.clone();
        let mut llm = Llm::live(move |_: &Value| -> Result<Value, ModelError> {
            seen.fetch_add(1, SeqCst);
            Err(ModelError::new("HTTP 429: slow down"))
        });
        assert!(llm.complete(&json!(1)).is_err());
        assert_eq!(calls.load(SeqCst), 1);
    }

    #[test]
    fn a_failing_live_model_keeps_nothing() {
        let factory: ModelFactory = std::sync::Arc::new(|| {
            Box::new(|_: &Value| -> Result<Value, ModelError> { Err(ModelError::new("quota")) })
                as Box<dyn Model>
        });
        let mut llm = Llm::record(Some(factory));
        assert!(llm
            .complete(&json!(1))
            .unwrap_err()
            .to_string()
            .contains("quota"));
        assert!(llm.take_recorded().is_none());
    }
}
