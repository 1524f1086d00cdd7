//! The state of one case's model calls, shared by [`Llm::complete`] and the threads of
//! `llm.base_url()`'s loopback server, which answer the same calls from the same recording:
//! matching a call against the recording, the live-call places, the costs.
//!
//! [`Llm::complete`]: crate::Llm::complete

use crate::path::Pattern;
use crate::recording::canonical::{request_digest, RequestDigest};
use crate::recording::model::{Model, ModelError, ModelFactory};
use crate::recording::rate_limit;
use crate::recording::upstream::HttpConfig;
use crate::recording::usage::{Pricing, UsageTotals};
use crate::recording::Interaction;
use proposal_eval_engine::credentials::masked;
use proposal_eval_engine::redact::Redactor;
use proposal_eval_engine::trajectory::{tool_calls, ToolCall};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// Why [`Llm::complete`](crate::Llm::complete) gave no response.
#[derive(Debug)]
#[non_exhaustive]
pub enum LlmError {
    /// Replay, and the case has no recording.
    NoRecording {
        /// The command that records the case.
        record_command: String,
    },
    /// Replay, and the request equals none of the recorded calls not yet served (calls are
    /// matched in any order, so that calls made at once replay whatever order they arrive in).
    RequestDiffers {
        /// 0-based index of the call, in the order the code made its calls.
        index: usize,
        /// 0-based place in the recording of the closest call not yet served: the one diffed.
        closest: usize,
        /// How many recorded calls were not yet served.
        unserved: usize,
        /// A diff of the closest recorded request (`-`) and this one (`+`).
        diff: String,
    },
    /// Replay of a large recording, whose requests are read again to compare a call that fits
    /// no recorded digest, and the file could not be read again.
    RecordingUnreadable {
        /// The file and why.
        message: String,
    },
    /// Replay, and the code made more calls than the recording has.
    TooManyCalls {
        /// Calls in the recording.
        recorded: usize,
    },
    /// Recording, and no live model was given (`model = …` / `Harness::model`).
    NoModel,
    /// Recording, and the live model failed (for an HTTP call: the upstream could not be
    /// reached, or its answer could not be read).
    Model(ModelError),
    /// Recording, and `PROPOSAL_EVAL_BUDGET_USD` is spent: no further live call is made.
    BudgetSpent {
        /// The budget, in US dollars.
        budget_usd: f64,
        /// The estimated cost of this run's live calls so far (every test process of one
        /// `cargo test` or `cargo nextest run`).
        spent_usd: f64,
    },
    /// `llm.base_url()` while recording with no upstream set, or `llm.base_url_for(name)` with
    /// a name that neither `[http.upstreams]` nor the environment knows.
    NoUpstream {
        /// The named upstream; `None` for the default one.
        name: Option<String>,
    },
    /// The loopback HTTP server of `llm.base_url()` could not start.
    Proxy {
        /// Why.
        message: String,
    },
}

impl fmt::Display for LlmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LlmError::NoRecording { record_command } => write!(
                f,
                "no recording for this case, and it calls the model; record it with:\n  {record_command}"
            ),
            LlmError::RequestDiffers {
                index,
                closest,
                unserved,
                diff,
            } => {
                let which = if closest == index {
                    "the recorded one".to_string()
                } else if *unserved == 1 {
                    format!("recorded call [{closest}], the only one not yet served")
                } else {
                    format!("each of the {unserved} recorded calls not yet served; the closest is recorded call [{closest}]")
                };
                write!(
                    f,
                    "request [{index}] differs from {which} (re-record if the change is intended):\n{diff}"
                )
            }
            LlmError::RecordingUnreadable { message } => write!(f, "{message}"),
            LlmError::TooManyCalls { recorded } => write!(
                f,
                "the code made call [{recorded}] but the recording has only {recorded} call(s); re-record if the change is intended"
            ),
            LlmError::NoModel => write!(
                f,
                "recording needs a live model: give one with `model = path::to::fn` in #[proposal_eval(...)] or `Harness::model(fn)`"
            ),
            LlmError::Model(e) => write!(f, "the live model failed: {e}"),
            LlmError::BudgetSpent {
                budget_usd,
                spent_usd,
            } => write!(
                f,
                "PROPOSAL_EVAL_BUDGET_USD={budget_usd} is spent (estimated ${spent_usd:.6} so far in this run): no further live model call is made, and this case needed one; raise the budget or record fewer cases"
            ),
            LlmError::NoUpstream { name: None } => write!(
                f,
                "recording through llm.base_url() needs an upstream: set `[http] upstream = \"https://api.openai.com/v1\"` in proposal-eval.toml, or PROPOSAL_EVAL_UPSTREAM"
            ),
            LlmError::NoUpstream { name: Some(name) } => write!(
                f,
                "no upstream named `{name}`: add `{name} = \"https://...\"` under [http.upstreams] in proposal-eval.toml, or set PROPOSAL_EVAL_UPSTREAM_{}",
                crate::recording::upstream::env_suffix(name)
            ),
            LlmError::Proxy { message } => {
                write!(f, "cannot start the loopback HTTP server of llm.base_url(): {message}")
            }
        }
    }
}

impl std::error::Error for LlmError {}

/// Runs `f`, turning a panic into its message.
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .map_err(|payload| crate::panics::message(&*payload))
}

pub enum Mode {
    Replay {
        recorded: Vec<Interaction>,
    },
    Record {
        factory: Option<ModelFactory>,
        model: Option<Arc<dyn Model>>,
    },
    Missing {
        record_command: String,
    },
}

/// One call as the code under test made it: what a recorded interaction is matched against.
pub enum Call<'a> {
    /// `llm.complete(request)`.
    Complete(&'a Value),
    /// A request to `llm.base_url()`'s server: its upstream, method, path and JSON body.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    Http {
        upstream: Option<&'a str>,
        method: &'a str,
        path: &'a str,
        body: &'a Value,
    },
}

/// What the recording says for a call, or that the call is to be made live.
pub enum Turn {
    /// Replay: the recorded interaction (its response handed out once).
    Replayed(Box<Interaction>),
    /// Recording: the call's place in the recording, and the live model when the call needs
    /// one (`llm.complete`; an HTTP call goes to its upstream).
    Live {
        index: usize,
        model: Option<Arc<dyn Model>>,
    },
}

/// What costs are weighed against while recording: the suite's `[pricing]` and
/// `PROPOSAL_EVAL_BUDGET_USD`.
#[derive(Clone, Default)]
pub struct Costs {
    pub pricing: Arc<BTreeMap<String, Pricing>>,
    pub budget_usd: Option<f64>,
}

/// The state of one case's model calls, shared by [`Llm::complete`] and the threads of
/// `llm.base_url()`'s loopback server, which answer the same calls from the same recording.
pub struct Core {
    mode: Mode,
    ignore_request_paths: Vec<Pattern>,
    /// The suite's redaction rules: replay compares requests in their redacted form; a
    /// recording's upstream errors are told redacted.
    pub redactor: Redactor,
    /// Replay of a large recording: the digests of the recorded requests, which are not held.
    digests: Option<SampleDigests>,
    calls: usize,
    /// In replay: which recorded calls have been handed out (by their place in the recording).
    served: Vec<bool>,
    /// In replay: every recorded call before this place has been handed out.
    first_unserved: usize,
    /// While recording: one place per call, filled when its answer is complete.
    slots: Vec<Option<Interaction>>,
    failure: Option<String>,
    model_failed: Option<String>,
    /// While recording: what the upstream answered with an error status, in words, at most
    /// [`UPSTREAM_ERRORS_KEPT`] of them, and how many in all.
    upstream_errors: (Vec<String>, usize),
    totals: UsageTotals,
    /// Every call handed an answer, in order: what a case's report entry lists.
    call_log: Vec<crate::recording::usage::CallEntry>,
    /// The tool calls of the responses handed to the code so far, and the ones it noted, in the
    /// order they came.
    trajectory: Vec<ToolCall>,
    pub costs: Costs,
    pub http: HttpConfig,
}

impl Core {
    /// A case's calls in `mode`, requests compared without `ignore_request_paths`.
    pub fn new(mode: Mode, ignore_request_paths: Vec<Pattern>, budget_usd: Option<f64>) -> Core {
        Core {
            mode,
            ignore_request_paths,
            redactor: Redactor::default(),
            digests: None,
            calls: 0,
            served: Vec::new(),
            first_unserved: 0,
            slots: Vec::new(),
            failure: None,
            model_failed: None,
            upstream_errors: (Vec::new(), 0),
            totals: UsageTotals::default(),
            call_log: Vec::new(),
            trajectory: Vec::new(),
            costs: Costs {
                pricing: Arc::default(),
                budget_usd,
            },
            http: HttpConfig::default(),
        }
    }

    /// Replay compares requests in their redacted form, with the rules the recording was
    /// written with.
    pub fn set_redactor(&mut self, redactor: Redactor) {
        self.redactor = redactor;
    }

    /// Replay of a recording read with its requests hashed: their digests (the interactions'
    /// requests are `null`).
    pub fn set_digests(&mut self, digests: SampleDigests) {
        self.digests = Some(digests);
    }

    /// The suite's `[http]` upstreams and `[pricing]`.
    pub fn set_suite(&mut self, http: HttpConfig, pricing: BTreeMap<String, Pricing>) {
        self.http = http;
        self.costs.pricing = Arc::new(pricing);
    }

    /// How many calls the code under test made.
    pub fn calls(&self) -> usize {
        self.calls
    }

    /// After the case returned: the first replay failure, or the calls the recording has that
    /// were not made.
    pub fn finish_failure(&self) -> Option<String> {
        if let Some(failure) = &self.failure {
            return Some(failure.clone());
        }
        if let Mode::Replay { recorded } = &self.mode {
            if self.calls < recorded.len() {
                return Some(format!(
                    "the code made {} model call(s) but the recording has {}; re-record if the change is intended",
                    self.calls,
                    recorded.len()
                ));
            }
        }
        None
    }

    /// In replay: whether the code's calls no longer match the recording.
    pub fn replay_mismatched(&self) -> bool {
        matches!(self.mode, Mode::Replay { .. }) && self.finish_failure().is_some()
    }

    /// While recording: the first live call's failure, if one failed.
    pub fn model_failed(&self) -> Option<String> {
        self.model_failed.clone()
    }

    /// The calls made so far: tokens, recorded latency, estimated cost.
    pub fn usage(&self) -> UsageTotals {
        self.totals.clone()
    }

    /// While recording: the interactions to write, unless a live call failed.
    pub fn take_recorded(&mut self) -> Option<Vec<Interaction>> {
        match self.mode {
            Mode::Record { .. } if self.model_failed.is_none() => {
                let slots = std::mem::take(&mut self.slots);
                // A place left empty is a call whose answer never came whole (a stream the
                // client dropped): what was recorded would not replay as it ran.
                if slots.iter().any(Option::is_none) {
                    self.model_failed = Some(
                        "a live call did not finish (its response was not read to the end)".into(),
                    );
                    return None;
                }
                Some(slots.into_iter().flatten().collect())
            }
            _ => None,
        }
    }

    /// Takes the next call's turn: the recorded answer (replay), or its place for a live call
    /// (recording). A failure (no recording, a request that differs, the budget spent) is kept
    /// so that it fails the case even when the code under test swallows it.
    pub fn begin(&mut self, call: &Call<'_>) -> Result<Turn, LlmError> {
        let index = self.calls;
        self.calls += 1;
        let turn = match &mut self.mode {
            Mode::Missing { record_command } => Err(LlmError::NoRecording {
                record_command: record_command.clone(),
            }),
            Mode::Replay { .. } => self.replay(index, call),
            Mode::Record { factory, model } => {
                let needs_model = matches!(call, Call::Complete(_));
                // A panic in the user's model is the model's failure, not the case's: it is
                // caught here and named so.
                if needs_model && model.is_none() {
                    if let Some(make) = factory {
                        match catch(|| crate::sys::outside_async(|| make())) {
                            Ok(m) => *model = Some(Arc::from(m)),
                            Err(m) => {
                                let e = ModelError::new(format!(
                                    "building the live model panicked: {m}"
                                ));
                                self.model_failed.get_or_insert_with(|| e.to_string());
                                return Err(LlmError::Model(e));
                            }
                        }
                    }
                }
                match (needs_model, &*model) {
                    (true, None) => Err(LlmError::NoModel),
                    _ => match self.costs.budget_usd.map(|b| (b, super::budget::spent())) {
                        Some((budget, spent)) if spent >= budget => Err(LlmError::BudgetSpent {
                            budget_usd: budget,
                            spent_usd: spent,
                        }),
                        _ => {
                            if self.slots.len() <= index {
                                self.slots.resize(index + 1, None);
                            }
                            Ok(Turn::Live {
                                index,
                                model: if needs_model { model.clone() } else { None },
                            })
                        }
                    },
                }
            }
        };
        if let Err(e) = &turn {
            if self.failure.is_none() && !matches!(e, LlmError::Model(_)) {
                self.failure = Some(e.to_string());
            }
        }
        turn
    }

    /// Replay of the call made `index`th: the first recorded call not yet served that equals
    /// it, in recorded order, so that calls made at once (`futures::join!`, threads) replay in
    /// whatever order they arrive. A call equal to none fails with the diff against the closest
    /// unserved one.
    fn replay(&mut self, index: usize, call: &Call<'_>) -> Result<Turn, LlmError> {
        let Mode::Replay { recorded } = &mut self.mode else {
            unreachable!("replay() is called in replay only")
        };
        self.served.resize(recorded.len(), false);
        // Calls made one after another are served in order: the served ones at the start are
        // skipped without a look, so a long sequential case costs no more than before.
        while self.served.get(self.first_unserved) == Some(&true) {
            self.first_unserved += 1;
        }
        let (served, first, len) = (&self.served, self.first_unserved, recorded.len());
        let unserved = || (first..len).filter(|&i| !served[i]);
        if unserved().next().is_none() {
            return Err(LlmError::TooManyCalls { recorded: len });
        }
        let by_digest = self.digests.as_ref().and_then(|d| {
            // The call's body is hashed once, whichever recorded call it is compared with.
            let body = match call {
                Call::Complete(request) => request,
                Call::Http { body, .. } => body,
            };
            let digest = request_digest(body);
            unserved().find(|&i| {
                d.digests.get(i) == Some(&digest) && compared_body(&recorded[i], call).is_some()
            })
        });
        let found = match by_digest {
            Some(i) => Some(i),
            None => {
                // No digest fits: the requests are read again from the file, and compared as a
                // recording read whole is (ignored paths removed, redacted places equal).
                if let Some(digests) = self.digests.take() {
                    reload_requests(recorded, served, &digests)?;
                }
                unserved().find(|&i| {
                    compared_pair(
                        &recorded[i],
                        call,
                        &self.ignore_request_paths,
                        &self.redactor,
                    )
                    .is_none()
                })
            }
        };
        let Some(place) = found else {
            let unserved: Vec<usize> = unserved().collect();
            let (closest, diff) = closest_diff(
                recorded,
                &unserved,
                index,
                call,
                &self.ignore_request_paths,
                &self.redactor,
            );
            return Err(LlmError::RequestDiffers {
                index,
                closest,
                unserved: unserved.len(),
                diff,
            });
        };
        self.served[place] = true;
        let interaction = &mut recorded[place];
        // Each recorded call is handed out once, so its request and answer are moved, not
        // copied: the rest is cloned after they are taken.
        let taken = Interaction {
            request: std::mem::take(&mut interaction.request),
            response: std::mem::take(&mut interaction.response),
            ..interaction.clone()
        };
        self.totals
            .add_call(taken.usage.as_ref(), taken.latency_ms, &self.costs.pricing);
        self.log_call(&taken);
        self.note_response(&taken.response);
        Ok(Turn::Replayed(Box::new(taken)))
    }

    /// A live call's answer came whole: it takes its place in the recording, and its cost
    /// counts against the budget.
    pub fn finish_live(&mut self, index: usize, mut interaction: Interaction) {
        if let (Some(usage), Some(model)) = (
            &mut interaction.usage,
            &interaction.request["model"].as_str(),
        ) {
            // The response names the model that answered; the request, the one asked for.
            usage.model.get_or_insert_with(|| model.to_string());
        }
        let cost = interaction
            .usage
            .as_ref()
            .and_then(|u| crate::recording::usage::cost(&self.costs.pricing, u));
        if let Some(cost) = cost {
            super::budget::add(cost, self.costs.budget_usd.is_some());
        }
        super::progress::call_answered(interaction.usage.as_ref(), cost);
        if let Some(usage) = &interaction.usage {
            rate_limit::note_tokens(usage.input_tokens + usage.output_tokens);
        }
        self.totals.add_call(
            interaction.usage.as_ref(),
            interaction.latency_ms,
            &self.costs.pricing,
        );
        self.log_call(&interaction);
        self.note_response(&interaction.response);
        if let Some(slot) = self.slots.get_mut(index) {
            *slot = Some(interaction);
        }
    }

    /// Notes a call that got its answer, for the case's report entry.
    fn log_call(&mut self, interaction: &Interaction) {
        let kind = if interaction.http.is_some() {
            "http"
        } else {
            "complete"
        };
        self.call_log.push(crate::recording::usage::CallEntry::new(
            kind,
            interaction.usage.as_ref(),
            interaction.latency_ms,
            &self.costs.pricing,
        ));
    }

    /// The calls that got their answer so far, in order.
    pub fn call_log(&self) -> &[crate::recording::usage::CallEntry] {
        &self.call_log
    }

    /// The tool calls of the response just logged, as one group: its index is the call's place
    /// in the call log (the report entry's `calls`).
    fn note_response(&mut self, response: &serde_json::Value) {
        let index = self.call_log.len().saturating_sub(1);
        self.trajectory.extend(
            tool_calls(response)
                .into_iter()
                .map(|c| c.in_response(index)),
        );
    }

    /// A step the code under test took on its own decision (`llm.note_tool_call`).
    pub fn note_tool_call(&mut self, call: ToolCall) {
        self.trajectory.push(call);
    }

    /// The trajectory so far.
    pub fn trajectory(&self) -> &[ToolCall] {
        &self.trajectory
    }

    /// A live call was answered with an error status (`said` in words): the case's failure
    /// tells it, should the case fail.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub fn upstream_answered(&mut self, said: String) {
        let (kept, all) = &mut self.upstream_errors;
        if kept.len() < UPSTREAM_ERRORS_KEPT {
            kept.push(said);
        }
        *all += 1;
    }

    /// What the upstream answered with an error status, one per line (and how many more).
    pub fn upstream_errors(&self) -> Option<String> {
        let (kept, all) = &self.upstream_errors;
        if kept.is_empty() {
            return None;
        }
        let mut text = kept.join("\n");
        if *all > kept.len() {
            text.push_str(&format!(
                "\n(and {} more error answer(s))",
                all - kept.len()
            ));
        }
        Some(text)
    }

    /// A live call failed: nothing of this case is recorded.
    pub fn live_failed(&mut self, message: String) {
        self.model_failed.get_or_insert(message);
    }

    /// Whether the case records (its calls go live).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub fn is_recording(&self) -> bool {
        matches!(self.mode, Mode::Record { .. })
    }
}

/// How many of a case's error answers its failure tells.
const UPSTREAM_ERRORS_KEPT: usize = 3;

/// Locks a case's state; a panic elsewhere while it was held does not lose it.
pub fn lock(core: &Mutex<Core>) -> MutexGuard<'_, Core> {
    core.lock().unwrap_or_else(|p| p.into_inner())
}

/// This process's live calls: those that hold a place (waiting for their turn or sent), and
/// those sent (what the upstream sees in flight).
struct Live {
    holding: usize,
    sent: usize,
}

static LIVE_CALLS: Mutex<Live> = Mutex::new(Live {
    holding: 0,
    sent: 0,
});
static LIVE_CALL_DONE: Condvar = Condvar::new();

/// Holds one of the `PROPOSAL_EVAL_MAX_CONCURRENCY` live-call places until dropped: one of this
/// process's, and one shared by every test process of the target folder.
pub struct LivePermit {
    shared: Option<SharedSlot>,
    /// Whether the place is still held (a refused attempt gives it back at once).
    holding: bool,
    max: usize,
    /// How long the call waited, after it had its place, for a `Retry-After` or the pacing.
    pub waited: std::time::Duration,
    /// When it was sent.
    sent_at: std::time::Instant,
}

/// When this process's latest answered calls ended (at most [`ANSWERED_KEPT`]): what tells how
/// many calls the upstream answered at once.
static ANSWERED: Mutex<std::collections::VecDeque<std::time::Instant>> =
    Mutex::new(std::collections::VecDeque::new());
const ANSWERED_KEPT: usize = 64;

/// A call sent at `sent_at` and answered now was answered at once with itself and every
/// answered call of `ended` (the end times of the latest answered calls, in order) that ended
/// after it was sent: their count, itself included. Calls that were in flight with it but
/// refused (an upstream that queues what it will refuse tells them late) are not counted.
fn answered_at_once(
    ended: &std::collections::VecDeque<std::time::Instant>,
    sent_at: std::time::Instant,
) -> usize {
    1 + ended.iter().rev().take_while(|&&end| end > sent_at).count()
}

impl LivePermit {
    /// Waits for a place among the live calls: at most `max` (`PROPOSAL_EVAL_MAX_CONCURRENCY`),
    /// fewer while the upstream limits the rate, and not before a `Retry-After` it asked for or
    /// the turn its rate-limit headers pace. The call is sent as soon as this returns.
    pub fn acquire(max: usize) -> LivePermit {
        let max = max.max(1);
        let mut live = LIVE_CALLS.lock().unwrap_or_else(|p| p.into_inner());
        // The limit can grow in another process: look again now and then.
        while live.holding >= rate_limit::current(max).limit {
            live = LIVE_CALL_DONE
                .wait_timeout(live, std::time::Duration::from_millis(50))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        live.holding += 1;
        drop(live);
        // Only test binaries share places: a program of the user's that holds an `Llm::live`
        // leaves no lock files behind in its working folder.
        let dir = crate::layout::live_calls_dir();
        let shared = dir.and_then(|dir| SharedSlot::acquire(&dir, max));
        let state = rate_limit::current(max);
        let waited = rate_limit::wait_turn(&state, max);
        LIVE_CALLS.lock().unwrap_or_else(|p| p.into_inner()).sent += 1;
        crate::recording::progress::call_started();
        LivePermit {
            shared,
            holding: true,
            max,
            waited,
            sent_at: std::time::Instant::now(),
        }
    }

    /// Tells the shared rate limit how the call (or this attempt of it) went, counted against
    /// the calls of the run the upstream had in flight with it (every process's; those sent, not
    /// those still waiting for their turn), this one included. An answered call tells what the
    /// upstream serves at once: this process's answered calls that were in flight with it
    /// ([`answered_at_once`]), and the calls other processes of the run have in flight. A refusal gives the place back at once: the resend takes a new
    /// one, so refused calls waiting to be sent again are never counted in flight. Returns the wait the refused call takes
    /// alone before it is sent again ([`rate_limit::report`]).
    pub fn report(&mut self, outcome: rate_limit::Outcome) -> std::time::Duration {
        let max = self.max;
        let elsewhere = || {
            crate::layout::live_calls_dir()
                .map_or(0, |dir| Places::look(&dir, max, false).ours_elsewhere)
        };
        if !outcome.refused {
            let here = {
                let mut ended = ANSWERED.lock().unwrap_or_else(|p| p.into_inner());
                let here = answered_at_once(&ended, self.sent_at);
                if ended.len() == ANSWERED_KEPT {
                    ended.pop_front();
                }
                ended.push_back(std::time::Instant::now());
                here
            };
            return rate_limit::report(outcome, || here + elsewhere(), max);
        }
        let mut live = LIVE_CALLS.lock().unwrap_or_else(|p| p.into_inner());
        let alone = rate_limit::report(outcome, || live.sent + elsewhere(), max);
        self.give_back(&mut live);
        alone
    }

    fn give_back(&mut self, live: &mut Live) {
        if std::mem::take(&mut self.holding) {
            self.shared = None;
            live.holding -= 1;
            live.sent -= 1;
            crate::recording::progress::call_ended();
            LIVE_CALL_DONE.notify_one();
        }
    }
}

impl Drop for LivePermit {
    fn drop(&mut self) {
        let mut live = LIVE_CALLS.lock().unwrap_or_else(|p| p.into_inner());
        self.give_back(&mut live);
    }
}

/// A place among the live calls of every process that shares a target folder: nextest runs each
/// test in a process of its own, so a bound per process would bound nothing. The places are lock
/// files (`slot-<n>.lock`) held with an OS file lock, which the kernel releases when the holder
/// exits or is killed, so a crashed process never keeps one; the holder writes its pid and run
/// in it, for the waiting note and for the rate limit, which bounds the places a run holds.
/// A waiting process takes whichever place frees first, never one particular place. Processes
/// with different limits share the first places; the largest limit is the bound. Where no slot
/// file can be opened, or the platform has no file locks, only the bound per process applies.
struct SharedSlot {
    _file: std::fs::File,
}

/// Who holds a place: the text its holder wrote in the place's file.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Holder {
    pid: u32,
    run: String,
}

impl Holder {
    fn me() -> Holder {
        Holder {
            pid: std::process::id(),
            run: crate::env::run_id().unwrap_or("").to_string(),
        }
    }

    fn parse(text: &str) -> Option<Holder> {
        let (pid, run) = text.trim().split_once(' ')?;
        Some(Holder {
            pid: pid.parse().ok()?,
            run: run.to_string(),
        })
    }
}

/// The places of a target folder as one look found them.
struct Places {
    /// A free place, taken (locked) by this look.
    free: Option<std::fs::File>,
    /// The holders of the places held (`None`: one that has not written its name yet).
    held: Vec<Option<Holder>>,
    /// Places held by this run (this process's included).
    ours: usize,
    /// Places held by this run's other processes.
    ours_elsewhere: usize,
    /// Whether any place's file could be opened; `false`: places cannot be shared here.
    opened: bool,
    /// The platform has no file locks.
    unlockable: bool,
}

impl Places {
    /// Tries the places `0..max`: keeps the first free one locked, and reads who holds the
    /// others; with `first_free`, stops at the first free one.
    fn look(dir: &std::path::Path, max: usize, first_free: bool) -> Places {
        let me = Holder::me();
        let mut places = Places {
            free: None,
            held: Vec::new(),
            ours: 0,
            ours_elsewhere: 0,
            opened: false,
            unlockable: false,
        };
        for n in 0..max {
            let Some(file) = open_place(dir, n) else {
                continue;
            };
            places.opened = true;
            match file.try_lock() {
                Ok(()) if first_free => {
                    places.free = Some(file);
                    return places;
                }
                Ok(()) if places.free.is_none() => places.free = Some(file),
                // Another free one: unlocked as it closes.
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    let holder = std::io::read_to_string(&file)
                        .ok()
                        .and_then(|t| Holder::parse(&t));
                    if let Some(h) = holder.as_ref().filter(|h| h.run == me.run) {
                        places.ours += 1;
                        if h.pid != me.pid {
                            places.ours_elsewhere += 1;
                        }
                    }
                    places.held.push(holder);
                }
                // No file locks here (an unusual file system or platform).
                Err(std::fs::TryLockError::Error(_)) => {
                    places.unlockable = true;
                    return places;
                }
            }
        }
        places
    }

    /// `2 of the 8 places are held, by 2 processes (pids 4242, 4243); 1 by this run`.
    fn describe(&self, max: usize) -> String {
        let mut pids: Vec<u32> = self.held.iter().flatten().map(|h| h.pid).collect();
        pids.sort_unstable();
        pids.dedup();
        let unnamed = self.held.iter().filter(|h| h.is_none()).count();
        let pid_list: Vec<String> = pids.iter().map(u32::to_string).collect();
        let mut text = format!(
            "{} of the {max} places are held, by {} process(es) (pids {})",
            self.held.len(),
            pids.len(),
            if pid_list.is_empty() {
                "unknown".to_string()
            } else {
                pid_list.join(", ")
            }
        );
        if unnamed > 0 {
            text.push_str(&format!(" and {unnamed} of a holder not yet named"));
        }
        text.push_str(&format!("; {} by this run", self.ours));
        text
    }
}

/// The file of place `n`, opened to be locked (write access when it can be had, so that the
/// holder can write its name; a lock needs none, so a slot file another user made still serves).
fn open_place(dir: &std::path::Path, n: usize) -> Option<std::fs::File> {
    let path = dir.join(format!("slot-{n}.lock"));
    let options = |write: bool| {
        std::fs::OpenOptions::new()
            .read(true)
            .write(write)
            .create(write)
            .truncate(false)
            .open(&path)
    };
    options(true).or_else(|_| options(false)).ok()
}

/// The waiting note is printed once per process.
static TOLD: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

impl SharedSlot {
    /// Waits for any free place of `0..max` while this run holds fewer than its rate limit
    /// allows; `None` where places cannot be shared.
    fn acquire(dir: &std::path::Path, max: usize) -> Option<SharedSlot> {
        let _ = std::fs::create_dir_all(dir);
        let mut pause = std::time::Duration::from_millis(2);
        let waiting_since = std::time::Instant::now();
        loop {
            let limit = rate_limit::current(max).limit;
            // Below the limit on the run's places only while the upstream limits the rate:
            // otherwise any free place will do, and the first found ends the look.
            let places = Places::look(dir, max, limit >= max);
            if places.unlockable || !places.opened {
                return None;
            }
            if let Some(file) = places.free.as_ref().filter(|_| places.ours < limit) {
                write_holder(file);
                return places.free.map(|file| SharedSlot { _file: file });
            }
            if waiting_since.elapsed() > crate::env::wait_note_after()
                && !TOLD.swap(true, std::sync::atomic::Ordering::Relaxed)
            {
                // A holder that is stopped (a debugger, ^Z) or hung keeps its place: say what
                // is waited for, in true figures.
                eprintln!(
                    "note: waiting for a live model call place: {}; this run may hold {limit} at once now (PROPOSAL_EVAL_MAX_CONCURRENCY = {max}, fewer while the upstream limits the rate; places in {})",
                    places.describe(max),
                    dir.display()
                );
            }
            drop(places);
            std::thread::sleep(pause);
            pause = (pause * 2).min(std::time::Duration::from_millis(50));
        }
    }
}

/// Writes this process's pid and run in the place it holds.
fn write_holder(mut file: &std::fs::File) {
    use std::io::{Seek, Write};
    let me = Holder::me();
    let _ = file
        .set_len(0)
        .and_then(|()| file.rewind())
        .and_then(|()| write!(file, "{} {}", me.pid, me.run));
}

/// One sample's recorded requests as a replay of a large recording holds them: their digests
/// (see [`crate::recording::Recording::read_for_replay`]).
pub struct SampleDigests {
    pub file: std::path::PathBuf,
    pub sample: usize,
    pub digests: Vec<RequestDigest>,
}

/// A replay of a large recording held only the digests of its requests, and no digest fits a
/// call: the requests of the calls not yet served are read again from the file.
fn reload_requests(
    recorded: &mut [Interaction],
    served: &[bool],
    digests: &SampleDigests,
) -> Result<(), LlmError> {
    let file = digests.file.display();
    let failed = |message: String| {
        Err(LlmError::RecordingUnreadable {
            message: format!("{file}: {message}"),
        })
    };
    let requests = match crate::recording::Recording::read(&digests.file) {
        Ok(Some(recording)) => recording
            .samples
            .into_iter()
            .nth(digests.sample)
            .map(|s| s.interactions),
        Ok(None) => None,
        Err(e) => {
            return failed(format!(
                "the recorded requests cannot be read again to compare them: {e}"
            ))
        }
    };
    let Some(requests) = requests.filter(|r| r.len() == recorded.len()) else {
        return failed(
            "the recording changed while the case replayed it: run the case again".into(),
        );
    };
    for ((interaction, again), served) in recorded.iter_mut().zip(requests).zip(served) {
        if !served {
            interaction.request = again.request;
        }
    }
    Ok(())
}

/// The call's request or body, to be compared with the recorded one, when the call is of the
/// recorded kind (both `llm.complete`, or HTTP to the recorded upstream, method and path);
/// `None` when it is another call altogether.
fn compared_body<'a>(recorded: &Interaction, call: &Call<'a>) -> Option<&'a Value> {
    match (call, &recorded.http) {
        (Call::Complete(request), None) => Some(request),
        (
            Call::Http {
                upstream,
                method,
                path,
                body,
            },
            Some(h),
        ) if h.upstream.as_deref() == *upstream && h.method == *method && h.path == *path => {
            Some(body)
        }
        _ => None,
    }
}

/// What is compared of a recorded interaction and a call, when they differ: the recorded side
/// and the call's side, ready for a line diff; `None` when they are the same call.
///
/// An `llm.complete` call is compared on its request; an HTTP call first on its upstream,
/// method and path, then on its JSON body. Either way the bodies are compared with `ignore`
/// paths removed from both and the call's redacted (a recorded `"<redacted>"` equals whatever
/// the call holds there); the call's side is shown redacted too, so a secret it carries is never
/// printed.
fn compared_pair(
    recorded: &Interaction,
    call: &Call<'_>,
    ignore: &[Pattern],
    redactor: &Redactor,
) -> Option<(Value, Value)> {
    let Some(body) = compared_body(recorded, call) else {
        let recorded_side = match &recorded.http {
            None => serde_json::json!({ "llm.complete": recorded.request }),
            Some(h) => serde_json::json!({
                "http": { "upstream": h.upstream, "method": h.method, "path": h.path },
                "body": recorded.request,
            }),
        };
        let call_side = match call {
            Call::Complete(request) => {
                serde_json::json!({ "llm.complete": redactor.replayed(&recorded.request, request) })
            }
            Call::Http {
                upstream,
                method,
                path,
                body,
            } => serde_json::json!({
                "http": { "upstream": upstream, "method": method, "path": path },
                "body": redactor.replayed(&recorded.request, body),
            }),
        };
        return Some((recorded_side, call_side));
    };
    if recorded.request == *body {
        return None;
    }
    let current = redactor.replayed(&recorded.request, body);
    if ignore.is_empty() {
        return (recorded.request != current).then(|| (recorded.request.clone(), current));
    }
    let strip = |v: &Value| {
        let mut v = v.clone();
        for pattern in ignore {
            for location in pattern.find(&v).into_iter().rev() {
                location.remove(&mut v);
            }
        }
        v
    };
    let (recorded, current) = (strip(&recorded.request), strip(&current));
    (recorded != current).then_some((recorded, current))
}

/// For a call equal to no unserved recorded call: the place of the closest one and the diff
/// against it. Closest: a call of the same kind (both `llm.complete`, or HTTP to the same
/// upstream, method and path) before one of another; then the fewest changed lines; then the
/// call's own place (`index`), as a sequential program's calls line up; then recorded order.
fn closest_diff(
    recorded: &[Interaction],
    unserved: &[usize],
    index: usize,
    call: &Call<'_>,
    ignore: &[Pattern],
    redactor: &Redactor,
) -> (usize, String) {
    let mut best: Option<((bool, usize, bool, usize), String)> = None;
    for &place in unserved {
        let Some((old, new)) = compared_pair(&recorded[place], call, ignore, redactor) else {
            continue;
        };
        // What still looks like a credential (where the recording's rules do not redact) is
        // masked on both sides, so a failure never prints a secret.
        let diff = proposal_eval_engine::render::line_diff(
            &masked(&old),
            &masked(&new),
            "recorded request",
            "this request",
            false,
        );
        let changed = diff
            .lines()
            .filter(|l| {
                (l.starts_with('-') && !l.starts_with("---"))
                    || (l.starts_with('+') && !l.starts_with("+++"))
            })
            .count();
        let other_kind = compared_body(&recorded[place], call).is_none();
        let rank = (other_kind, changed, place != index, place);
        if best.as_ref().is_none_or(|(b, _)| rank < *b) {
            best = Some((rank, diff));
        }
    }
    match best {
        Some(((.., place), diff)) => (place, diff),
        // Every unserved call equals this one: not reached, as the first of them is served.
        None => (unserved[0], String::new()),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn answered_at_once_counts_the_answers_that_ended_after_a_call_was_sent() {
        use std::time::{Duration, Instant};
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        // Four calls sent at 0 and answered at 200-203: the last is the fourth at once.
        let ended: std::collections::VecDeque<Instant> = [200, 201, 202].map(at).into();
        assert_eq!(super::answered_at_once(&ended, at(0)), 4);
        // A call sent at 201 was in flight with the one that ended at 202 only.
        assert_eq!(super::answered_at_once(&ended, at(201)), 2);
        // Sent after every answer: alone.
        assert_eq!(super::answered_at_once(&ended, at(300)), 1);
    }

    use super::*;

    #[test]
    fn live_calls_are_bounded() {
        use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
        static RUNNING: AtomicUsize = AtomicUsize::new(0);
        static PEAK: AtomicUsize = AtomicUsize::new(0);
        let threads: Vec<_> = (0..8)
            .map(|_| {
                std::thread::spawn(|| {
                    let _permit = LivePermit::acquire(2);
                    let now = RUNNING.fetch_add(1, SeqCst) + 1;
                    PEAK.fetch_max(now, SeqCst);
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    RUNNING.fetch_sub(1, SeqCst);
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        // Other tests in this binary may hold places too, so the peak here is at most 2.
        assert!(PEAK.load(SeqCst) <= 2, "peak {}", PEAK.load(SeqCst));
        assert!(PEAK.load(SeqCst) >= 1);
    }

    #[test]
    fn the_waiting_note_counts_places_processes_and_this_run() {
        let holder = |pid, run: &str| {
            Some(Holder {
                pid,
                run: run.into(),
            })
        };
        let places = Places {
            free: None,
            held: vec![holder(7, "a"), holder(3, "b"), holder(7, "a"), None],
            ours: 2,
            ours_elsewhere: 0,
            opened: true,
            unlockable: false,
        };
        assert_eq!(
            places.describe(4),
            "4 of the 4 places are held, by 2 process(es) (pids 3, 7) and 1 of a holder not yet named; 2 by this run"
        );
        assert_eq!(
            Holder::parse("4242 nextest-1 2"),
            holder(4242, "nextest-1 2")
        );
        assert_eq!(Holder::parse(""), None);
    }

    /// Separate opens of a lock file are separate holders for `flock`, as separate processes are:
    /// threads that each open the slots stand for nextest's processes.
    #[cfg(unix)]
    #[test]
    fn live_calls_are_bounded_across_processes() {
        use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
        let dir = tempfile::tempdir().unwrap();
        let running = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..6 {
                scope.spawn(|| {
                    let _slot = SharedSlot::acquire(dir.path(), 2).expect("a writable folder");
                    let now = running.fetch_add(1, SeqCst) + 1;
                    peak.fetch_max(now, SeqCst);
                    std::thread::sleep(std::time::Duration::from_millis(100));
                    running.fetch_sub(1, SeqCst);
                });
            }
        });
        assert_eq!(peak.load(SeqCst), 2);
        // Released on drop: every place is free again.
        let all: Vec<_> = (0..2)
            .map(|_| SharedSlot::acquire(dir.path(), 2).unwrap())
            .collect();
        assert_eq!(all.len(), 2);
    }
}
