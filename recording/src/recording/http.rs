//! `llm.base_url()`: one loopback HTTP server per process, serving every case under a base URL
//! of its own (`http://127.0.0.1:PORT/case/<n>`), so that the code under test keeps its own HTTP
//! client (an OpenAI- or Anthropic-compatible SDK, reqwest, ureq) and only its base URL changes.
//!
//! Each request is one call of the case its URL names, taken in the order the server receives
//! it, exactly as an `llm.complete` call is (`Core::begin`): replay matches it against the
//! recorded call (upstream, method, path below the case's prefix, then the JSON body as
//! `llm.complete` requests are compared) and serves the recorded answer; recording forwards it
//! to the upstream (method, path, query, headers, body) and keeps status, content type and body,
//! or the events of a `text/event-stream` answer, which are passed on to the client as they
//! come. A failure is kept by the case (it fails with `llm.complete`'s message) and answered
//! with an HTTP error the client can report. A URL of a case that has ended, or of none, is
//! answered 404.
//!
//! The server and its socket are made once, on the first `llm.base_url()` of the process, and
//! live as long as it; each connection a client opens has a thread of its own
//! ([`super::loopback`]): a replayed case costs a registration and its requests, with a target
//! of at most 100 µs over `llm.complete` that the proxy bench (`runtime/benches/proxy.rs`)
//! measures.
//!
//! HTTP itself is [`super::loopback`]'s (server) and ureq's (client, rustls for https); this
//! module only moves bytes between them and reads server-sent events, which are lines of text.

use super::calls::{lock, Call, Core, LivePermit, LlmError, Turn};
use super::loopback::{Body, Request, Response};
use super::upstream::{Resolved, UpstreamUrl};
use super::usage::{millis, Usage};
use super::{HttpExchange, Interaction};
use chrono::Utc;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The cases the process's server serves, by the number in their URL.
static CASES: Mutex<BTreeMap<u64, Arc<Context>>> = Mutex::new(BTreeMap::new());
/// The next case number; numbers are never reused, so an old URL never reaches a new case.
static NEXT_CASE: AtomicU64 = AtomicU64::new(1);
/// The server's port, or why it could not start (said again to every case that asks).
static SERVER: OnceLock<Result<u16, String>> = OnceLock::new();
/// The path below which a case's calls are served: `/case/<n>`.
const PREFIX: &str = "/case/";

/// The port of the process's loopback server, started on first use.
fn server_port() -> Result<u16, LlmError> {
    SERVER
        .get_or_init(start_server)
        .clone()
        .map_err(|message| LlmError::Proxy { message })
}

fn start_server() -> Result<u16, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    super::loopback::serve(listener, Arc::new(route)).map_err(|e| e.to_string())?;
    Ok(port)
}

/// Hands a request to the case its path names, its path cut to what the client appended to
/// the base URL.
fn route(request: Request) {
    let case = request
        .url
        .strip_prefix(PREFIX)
        .and_then(|rest| {
            let end = rest.find(['/', '?']).unwrap_or(rest.len());
            let n: u64 = rest[..end].parse().ok()?;
            Some((n, PREFIX.len() + end))
        })
        .and_then(|(n, cut)| {
            let cases = CASES.lock().unwrap_or_else(|p| p.into_inner());
            cases.get(&n).map(|c| (c.clone(), cut))
        });
    let Some((context, cut)) = case else {
        let message = format!(
            "{} is no running case's URL: llm.base_url() gives each case a URL that serves its calls while the case runs",
            request.url
        );
        let _ = request.respond(error_response(404, &message));
        return;
    };
    let _busy = context.busy();
    if let Some(worker) = handle(&context, request, cut) {
        context
            .workers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(worker);
    }
}

/// The base URLs of one case, one per upstream used, registered on first use.
#[derive(Default)]
pub struct Proxies {
    running: Mutex<Vec<Registered>>,
}

/// A case's base URL for one upstream, served while it is registered.
struct Registered {
    number: u64,
    url: String,
    context: Arc<Context>,
}

impl Proxies {
    /// The base URL for upstream `name` (`None`: the default one).
    pub fn url(&self, core: &Arc<Mutex<Core>>, name: Option<&str>) -> Result<String, LlmError> {
        let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(known) = running.iter().find(|r| r.context.name.as_deref() == name) {
            return Ok(known.url.clone());
        }
        let (upstream, timeout) = {
            let core = lock(core);
            let settings = crate::env::settings().ok();
            let empty = Default::default();
            let resolved = core.http.resolve(
                name,
                settings.and_then(|s| s.upstream.as_ref()),
                settings.map_or(&empty, |s| &s.upstreams),
            );
            let upstream = match resolved {
                Resolved::Url(url, _) => Some(url),
                Resolved::Unknown => {
                    return Err(LlmError::NoUpstream {
                        name: name.map(str::to_string),
                    })
                }
                // Replay needs no upstream: the recording answers.
                Resolved::Unset if !core.is_recording() => None,
                Resolved::Unset => return Err(LlmError::NoUpstream { name: None }),
            };
            (upstream, core.http.timeout())
        };
        let port = server_port()?;
        let context = Arc::new(Context {
            name: name.map(str::to_string),
            // Replay forwards nothing: no client is built for it.
            agent: upstream.as_ref().map(|u| agent_for(u, timeout)),
            upstream,
            core: core.clone(),
            timeout,
            active: Mutex::new(0),
            idle: Condvar::new(),
            workers: Mutex::new(Vec::new()),
        });
        let number = NEXT_CASE.fetch_add(1, Ordering::Relaxed);
        CASES
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(number, context.clone());
        let url = format!("http://127.0.0.1:{port}{PREFIX}{number}");
        running.push(Registered {
            number,
            url: url.clone(),
            context,
        });
        Ok(url)
    }

    /// Stops serving the case, after the calls its URLs are answering.
    pub fn close(&self) {
        let stopped: Vec<Registered> =
            std::mem::take(&mut *self.running.lock().unwrap_or_else(|p| p.into_inner()));
        if stopped.is_empty() {
            return;
        }
        {
            let mut cases = CASES.lock().unwrap_or_else(|p| p.into_inner());
            for r in &stopped {
                cases.remove(&r.number);
            }
        }
        for r in stopped {
            r.context.wait_idle();
            let workers =
                std::mem::take(&mut *r.context.workers.lock().unwrap_or_else(|p| p.into_inner()));
            for worker in workers {
                let _ = worker.join();
            }
        }
    }
}

/// One case's calls to one upstream: what the server's threads share.
struct Context {
    name: Option<String>,
    upstream: Option<UpstreamUrl>,
    core: Arc<Mutex<Core>>,
    /// The forwarding client, while recording.
    agent: Option<ureq::Agent>,
    /// `[http] timeout_s`, to name it when the upstream is too slow.
    timeout: Duration,
    /// Requests of the case being taken by a server thread.
    active: Mutex<usize>,
    idle: Condvar,
    /// The threads forwarding its live calls.
    workers: Mutex<Vec<JoinHandle<()>>>,
}

impl Context {
    fn busy(&self) -> Busy<'_> {
        *self.active.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        Busy(self)
    }

    fn wait_idle(&self) {
        let mut active = self.active.lock().unwrap_or_else(|p| p.into_inner());
        while *active > 0 {
            active = self.idle.wait(active).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// A request of a case being taken: its case does not end until it is answered or handed to
/// a forwarding thread.
struct Busy<'a>(&'a Context);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        *self.0.active.lock().unwrap_or_else(|p| p.into_inner()) -= 1;
        self.0.idle.notify_all();
    }
}

/// The forwarding clients of this process, by (loopback upstream, timeout): the cases share
/// one, and with it its idle connections. A case of its own client opened its own connections
/// and kept up to three idle until it ended; with cases waiting on each other's upstream (a
/// server with a pool of threads, each held by an open connection), those idle ones could take
/// every thread and stall a new connection until `timeout_s`. Shared, a connection (and its
/// TLS handshake) also serves the next case.
static AGENTS: Mutex<Vec<(bool, Duration, ureq::Agent)>> = Mutex::new(Vec::new());

/// The forwarding client: no redirects followed and no status turned into an error (the
/// client under test gets what the upstream said), no compression asked for (the body is read
/// as JSON), and the environment's proxy settings except for a loopback upstream. `timeout`
/// (`[http] timeout_s`) bounds connecting and each wait on the upstream, each read of its
/// answer included, not the whole answer: a stream lasts as long as it keeps sending.
fn agent_for(upstream: &UpstreamUrl, timeout: Duration) -> ureq::Agent {
    let host = upstream.as_str().split("://").nth(1).unwrap_or("");
    let loopback = ["127.", "localhost", "[::1]"]
        .iter()
        .any(|h| host.starts_with(h));
    let mut agents = AGENTS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((.., agent)) = agents
        .iter()
        .find(|(l, t, _)| (*l, *t) == (loopback, timeout))
    {
        return agent.clone();
    }
    let mut config = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_connect(Some(timeout))
        .timeout_per_write(Some(timeout))
        .timeout_per_read(Some(timeout));
    if loopback {
        config = config.proxy(None);
    }
    let agent: ureq::Agent = config.build().into();
    agents.push((loopback, timeout, agent.clone()));
    agent
}

/// Headers that belong to one connection, not to the request: the forwarding client sets its
/// own.
const HOP_BY_HOP: &[&str] = &[
    "host",
    "connection",
    "content-length",
    "transfer-encoding",
    "accept-encoding",
    "keep-alive",
    "te",
    "trailer",
    "upgrade",
    "proxy-connection",
    "proxy-authorization",
];

/// A request body as a recording keeps it: JSON when it is JSON, else its text, `null` when
/// empty.
fn body_value(bytes: &[u8]) -> Value {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Value::Null;
    }
    serde_json::from_slice(bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(bytes).into_owned()))
}

/// Takes the request's turn; answers it from the recording or with an error here, or returns
/// the thread that forwards it to the upstream.
fn handle(context: &Arc<Context>, mut request: Request, cut: usize) -> Option<JoinHandle<()>> {
    let method = request.method.clone();
    // What the client appended to the case's base URL; `/` for the base URL itself.
    let below = &request.url[cut..];
    let (path, query) = match below.split_once('?') {
        Some((path, query)) => (path.to_string(), Some(query.to_string())),
        None => (below.to_string(), None),
    };
    let path = if path.is_empty() {
        "/".to_string()
    } else {
        path
    };
    let body = std::mem::take(&mut request.body);
    let json_body = body_value(&body);
    let turn = lock(&context.core).begin(&Call::Http {
        upstream: context.name.as_deref(),
        method: &method,
        path: &path,
        body: &json_body,
    });
    match turn {
        Err(e) => {
            let status = match e {
                LlmError::BudgetSpent { .. } => 402,
                _ => 400,
            };
            let _ = request.respond(error_response(status, &e.to_string()));
            None
        }
        Ok(Turn::Replayed(interaction)) => {
            let _ = request.respond(recorded_response(&interaction));
            None
        }
        Ok(Turn::Live { index, .. }) => {
            let headers: Vec<(String, String)> = request
                .headers
                .iter()
                .filter(|(name, _)| !HOP_BY_HOP.contains(&name.to_ascii_lowercase().as_str()))
                .cloned()
                .collect();
            let call = LiveCall {
                context: context.clone(),
                index,
                exchange: HttpExchange {
                    upstream: context.name.clone(),
                    method,
                    path,
                    query,
                    status: 0,
                    content_type: None,
                },
                headers,
                body,
                json_body,
            };
            std::thread::Builder::new()
                .name("proposal-eval-http-call".into())
                .spawn(move || call.forward(request))
                .ok()
        }
    }
}

/// The answer to a call that cannot be served: the message `llm.complete` gives, in the error
/// shape OpenAI- and Anthropic-compatible clients read (`error.message`).
fn error_response(status: u16, message: &str) -> Response {
    let body = json!({
        "error": { "type": "proposal_eval", "message": format!("proposal-eval: {message}") }
    });
    Response {
        status,
        headers: vec![header("Content-Type", "application/json")],
        body: Body::Bytes(body.to_string().into_bytes()),
    }
}

/// A response header (the server leaves out one whose name or value would end its line).
fn header(name: &str, value: &str) -> (String, String) {
    (name.to_string(), value.to_string())
}

/// A recorded answer as it was served: the same status and content type, the body as JSON (or
/// the recorded text), a stream as the same events.
fn recorded_response(interaction: &Interaction) -> Response {
    let Some(exchange) = &interaction.http else {
        return error_response(500, "the recorded call is not an HTTP call");
    };
    let json_type = exchange
        .content_type
        .as_deref()
        .is_none_or(|t| t.to_ascii_lowercase().contains("json"));
    let bytes = if exchange.is_stream() {
        sse::write(&interaction.response)
    } else {
        match &interaction.response {
            Value::Null => Vec::new(),
            Value::String(text) if !json_type => text.clone().into_bytes(),
            value => serde_json::to_vec(value).unwrap_or_default(),
        }
    };
    Response {
        status: exchange.status,
        headers: exchange
            .content_type
            .as_deref()
            .map(|t| header("Content-Type", t))
            .into_iter()
            .collect(),
        body: Body::Bytes(bytes),
    }
}

/// How many times a call refused for the upstream's rate is sent in all before the refusal
/// is passed on to the client (and recorded).
const ATTEMPTS: u32 = 6;

/// A call's resends after refusals for the rate, and the time waited before its attempts
/// (`Retry-After`, the pacing).
#[derive(Clone, Copy, Debug, Default)]
struct Resends {
    count: u32,
    waited: Duration,
}

impl Resends {
    /// ` (sent 6 times: 5 resends after refusals for the rate, 5.0 s waited for Retry-After and
    /// pacing)`, or nothing for a call sent once without a wait.
    fn describe(&self) -> String {
        if self.count == 0 && self.waited < Duration::from_millis(100) {
            return String::new();
        }
        format!(
            " (sent {} time(s): {} resend(s) after refusals for the rate, {:.1} s waited for Retry-After and pacing)",
            self.count + 1,
            self.count,
            self.waited.as_secs_f64()
        )
    }
}

/// A call on its way to the upstream, in its own thread (a stream is passed on as it comes).
struct LiveCall {
    context: Arc<Context>,
    index: usize,
    exchange: HttpExchange,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    json_body: Value,
}

impl LiveCall {
    fn forward(mut self, request: Request) {
        let (Some(upstream), Some(agent)) = (&self.context.upstream, &self.context.agent) else {
            // `Proxies::url` refused to start without one while recording.
            let _ = request.respond(error_response(500, "no upstream"));
            return;
        };
        let mut target = format!("{upstream}{}", self.exchange.path);
        if let Some(query) = &self.exchange.query {
            target.push('?');
            target.push_str(query);
        }
        let (response, permit, started, resends) = self.send_within_limit(agent, &target);
        let response = match response {
            Ok(response) => response,
            Err(e) => {
                let message = format!(
                    "{}{}",
                    self.failure(&target, &e.into_io()),
                    resends.describe()
                );
                lock(&self.context.core).live_failed(message.clone());
                let _ = request.respond(error_response(
                    502,
                    &format!("the upstream failed: {message}"),
                ));
                return;
            }
        };
        self.exchange.status = response.status().as_u16();
        self.exchange.content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let mut reply_headers: Vec<(String, String)> = self
            .exchange
            .content_type
            .as_deref()
            .map(|t| header("Content-Type", t))
            .into_iter()
            .collect();
        let status = self.exchange.status;
        let reader = response.into_body().into_reader();
        if self.exchange.is_stream() {
            reply_headers.push(header("Cache-Control", "no-cache"));
            let tee = StreamTee {
                inner: reader,
                events: sse::Parser::default(),
                finish: Some(Finish {
                    call: self,
                    started,
                    _permit: permit,
                }),
            };
            let _ = request.respond(Response {
                status,
                headers: reply_headers,
                body: Body::Stream(Box::new(tee)),
            });
            return;
        }
        let mut bytes = Vec::new();
        let read = { reader }.read_to_end(&mut bytes);
        let latency_ms = millis(started.elapsed());
        drop(permit);
        if let Err(e) = read {
            let message = format!("{} (while reading its answer)", self.failure(&target, &e));
            lock(&self.context.core).live_failed(message.clone());
            let _ = request.respond(error_response(
                502,
                &format!("the upstream failed: {message}"),
            ));
            return;
        }
        if status >= 400 {
            // An error answer is the client's to handle, and recorded as it came; should the
            // case fail, its failure says what the upstream said (a client may report only
            // the status).
            let said = upstream_said(
                &self.exchange.method,
                &target,
                status,
                &bytes,
                &lock(&self.context.core).redactor,
            );
            lock(&self.context.core).upstream_answered(format!("{said}{}", resends.describe()));
        }
        let response = body_value(&bytes);
        let interaction = Interaction {
            usage: Usage::from_response(&response),
            request: self.json_body,
            response,
            recorded_at: Utc::now(),
            http: Some(self.exchange),
            latency_ms: Some(latency_ms),
        };
        // Recorded before the client has the answer: when the case returns, it is in place.
        lock(&self.context.core).finish_live(self.index, interaction);
        let _ = request.respond(Response {
            status,
            headers: reply_headers,
            body: Body::Bytes(bytes),
        });
    }
}

impl LiveCall {
    /// Sends the call when the shared rate limit lets it start (a place among the live calls,
    /// the upstream's `Retry-After` waited out, the pacing's turn); a refusal for the rate (429,
    /// 503, 529) is told to the limit and sent again, up to [`ATTEMPTS`] times in all, the last
    /// refusal passed on. The answer, the place it holds, when the answered attempt started, and
    /// the resends made and waits before them.
    fn send_within_limit(
        &self,
        agent: &ureq::Agent,
        target: &str,
    ) -> (
        Result<ureq::http::Response<ureq::Body>, ureq::Error>,
        LivePermit,
        Instant,
        Resends,
    ) {
        let limit = crate::env::settings()
            .map(|s| s.max_concurrency)
            .unwrap_or(crate::env::DEFAULT_MAX_CONCURRENCY);
        let mut resends = Resends::default();
        loop {
            let mut permit = LivePermit::acquire(limit);
            resends.waited += permit.waited;
            let started = Instant::now();
            let response = send(
                agent,
                &self.exchange.method,
                target,
                &self.headers,
                self.body.clone(),
            );
            let Ok(answer) = &response else {
                return (response, permit, started, resends);
            };
            let headers = answer.headers();
            let header = |name: &str| {
                headers
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string)
            };
            let outcome = super::rate_limit::outcome_of(answer.status().as_u16(), &header);
            let alone = permit.report(outcome);
            if !outcome.refused || resends.count + 1 == ATTEMPTS {
                return (response, permit, started, resends);
            }
            std::thread::sleep(alone);
            resends.waited += alone;
            resends.count += 1;
        }
    }

    /// What a failed call tells the case: the call, then what happened in words (refused, timed
    /// out and the setting that bounds it, the host unknown), then the client's own message.
    fn failure(&self, target: &str, error: &std::io::Error) -> String {
        let url = redacted_url(target, &lock(&self.context.core).redactor);
        failure_text(&self.exchange.method, &url, error, self.context.timeout)
    }
}

/// The longest body excerpt an upstream's error answer is told with.
const EXCERPT_CHARS: usize = 500;

/// `POST http://…/v1/chat/completions answered 500 Internal Server Error: {"error": …}`: the
/// URL's query and the body redacted by the suite's rules (and anything that looks like a key
/// masked), the body on one line, at most [`EXCERPT_CHARS`] characters of it.
fn upstream_said(
    method: &str,
    target: &str,
    status: u16,
    body: &[u8],
    redactor: &proposal_eval_engine::redact::Redactor,
) -> String {
    use proposal_eval_engine::credentials::masked;
    let url = redacted_url(target, redactor);
    let mut value = body_value(body);
    redactor.redact(&mut value);
    let text = match masked(&value) {
        Value::Null => String::new(),
        Value::String(text) => text,
        json => json.to_string(),
    };
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let excerpt = match one_line.char_indices().nth(EXCERPT_CHARS) {
        Some((cut, _)) => format!("{}...", &one_line[..cut]),
        None => one_line,
    };
    let reason = ureq::http::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .map(|r| format!(" {r}"))
        .unwrap_or_default();
    let body = if excerpt.is_empty() {
        " (empty body)".to_string()
    } else {
        format!(": {excerpt}")
    };
    format!("{method} {url} answered {status}{reason}{body}")
}

/// A URL as a failure tells it: its query redacted by the suite's rules, and anything in it
/// that looks like a key masked.
fn redacted_url(target: &str, redactor: &proposal_eval_engine::redact::Redactor) -> String {
    let url = match target.split_once('?') {
        Some((path, query)) => format!("{path}?{}", redactor.redact_query(query)),
        None => target.to_string(),
    };
    match proposal_eval_engine::credentials::masked(&Value::String(url)) {
        Value::String(url) => url,
        _ => target.to_string(),
    }
}

fn failure_text(method: &str, target: &str, error: &std::io::Error, timeout: Duration) -> String {
    format!("{method} {target}: {}", what_failed(error, timeout))
}

/// A failed exchange with the upstream, in words, then the client's own message.
fn what_failed(error: &std::io::Error, timeout: Duration) -> String {
    use std::io::ErrorKind;
    let ureq_error = error
        .get_ref()
        .and_then(|e| e.downcast_ref::<ureq::Error>());
    let what = match (ureq_error, error.kind()) {
        (Some(ureq::Error::Timeout(_)), _) | (_, ErrorKind::TimedOut) => format!(
            "the upstream did not answer within {0} s ([http] timeout_s = {0} in proposal-eval.toml bounds each wait; raise it for a slower upstream)",
            timeout.as_secs_f64()
        ),
        (Some(ureq::Error::HostNotFound), _) => "the upstream's host name was not found".into(),
        (Some(ureq::Error::ConnectionFailed), _) | (_, ErrorKind::ConnectionRefused) => {
            "the upstream refused the connection (is it running, on this port?)".into()
        }
        (_, ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted | ErrorKind::UnexpectedEof) => {
            "the upstream closed the connection".into()
        }
        _ => "the call to the upstream failed".to_string(),
    };
    format!("{what} ({error})")
}

fn send(
    agent: &ureq::Agent,
    method: &str,
    url: &str,
    headers: &[(String, String)],
    body: Vec<u8>,
) -> Result<ureq::http::Response<ureq::Body>, ureq::Error> {
    let mut builder = ureq::http::Request::builder().method(method).uri(url);
    for (name, value) in headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    if body.is_empty() {
        agent.run(builder.body(())?)
    } else {
        agent.run(builder.body(body)?)
    }
}

/// What completes a streamed call once its last event has passed.
struct Finish {
    call: LiveCall,
    started: Instant,
    _permit: LivePermit,
}

/// Passes a stream from the upstream to the client, reading its events on the way; at its end
/// the call is recorded. A stream that breaks, or that the client stops reading, records
/// nothing (the case's recording is not written).
struct StreamTee<R> {
    inner: R,
    events: sse::Parser,
    finish: Option<Finish>,
}

impl<R: Read> Read for StreamTee<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self.inner.read(buf) {
            Ok(0) => {
                self.complete(None);
                Ok(0)
            }
            Ok(n) => {
                self.events.feed(&buf[..n]);
                Ok(n)
            }
            Err(e) => {
                let timeout = self
                    .finish
                    .as_ref()
                    .map_or(Duration::ZERO, |f| f.call.context.timeout);
                self.complete(Some(format!(
                    "the stream broke before its end: {}",
                    what_failed(&e, timeout)
                )));
                Err(e)
            }
        }
    }
}

impl<R> StreamTee<R> {
    fn complete(&mut self, failure: Option<String>) {
        let Some(Finish { call, started, .. }) = self.finish.take() else {
            return;
        };
        let core = &call.context.core;
        if let Some(failure) = failure {
            let message = format!("{} {}: {failure}", call.exchange.method, call.exchange.path);
            lock(core).live_failed(message);
            return;
        }
        let events = std::mem::take(&mut self.events).finish();
        if let Some(marker) = sse::missing_end(&events) {
            let message = format!(
                "{} {}: the stream ended without its end marker ({marker}): the upstream cut it short, so it is not recorded",
                call.exchange.method, call.exchange.path
            );
            lock(core).live_failed(message);
            return;
        }
        let response = Value::Array(events);
        let interaction = Interaction {
            usage: Usage::from_response(&response),
            request: call.json_body,
            response,
            recorded_at: Utc::now(),
            http: Some(call.exchange),
            latency_ms: Some(millis(started.elapsed())),
        };
        lock(core).finish_live(call.index, interaction);
    }
}

impl<R> Drop for StreamTee<R> {
    fn drop(&mut self) {
        self.complete(Some(
            "the client stopped reading the stream before its end".into(),
        ));
    }
}

/// Server-sent events (`text/event-stream`): read from the bytes of a stream as they come, and
/// written back. An event is recorded as `{"event"?, "id"?, "retry"?, "data": JSON}` when its
/// data is JSON, else with `"text"` (OpenAI's final `[DONE]`).
pub mod sse {
    use serde_json::{Map, Value};

    /// Reads events from a stream fed in pieces of any size.
    #[derive(Default)]
    pub struct Parser {
        line: Vec<u8>,
        event: Option<String>,
        id: Option<String>,
        retry: Option<u64>,
        data: Vec<String>,
        events: Vec<Value>,
    }

    impl Parser {
        pub fn feed(&mut self, bytes: &[u8]) {
            for &b in bytes {
                if b == b'\n' {
                    let mut line = std::mem::take(&mut self.line);
                    if line.last() == Some(&b'\r') {
                        line.pop();
                    }
                    self.line_done(&String::from_utf8_lossy(&line));
                } else {
                    self.line.push(b);
                }
            }
        }

        /// The events, the last one included even without its closing blank line.
        pub fn finish(mut self) -> Vec<Value> {
            if !self.line.is_empty() {
                let line = std::mem::take(&mut self.line);
                self.line_done(&String::from_utf8_lossy(&line));
            }
            self.dispatch();
            self.events
        }

        fn line_done(&mut self, line: &str) {
            if line.is_empty() {
                return self.dispatch();
            }
            if line.starts_with(':') {
                return; // a comment (a keep-alive)
            }
            let (field, value) = match line.split_once(':') {
                Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
                None => (line, ""),
            };
            match field {
                "event" => self.event = Some(value.to_string()),
                "data" => self.data.push(value.to_string()),
                "id" => self.id = Some(value.to_string()),
                "retry" => self.retry = value.parse().ok(),
                _ => {}
            }
        }

        fn dispatch(&mut self) {
            let data = std::mem::take(&mut self.data);
            let (event, id, retry) = (self.event.take(), self.id.take(), self.retry.take());
            if data.is_empty() && event.is_none() {
                return;
            }
            let mut out = Map::new();
            if let Some(event) = event {
                out.insert("event".into(), Value::String(event));
            }
            if let Some(id) = id {
                out.insert("id".into(), Value::String(id));
            }
            if let Some(retry) = retry {
                out.insert("retry".into(), Value::from(retry));
            }
            let data = data.join("\n");
            match serde_json::from_str::<Value>(&data) {
                Ok(json) if !data.trim().is_empty() => out.insert("data".into(), json),
                _ => out.insert("text".into(), Value::String(data)),
            };
            self.events.push(Value::Object(out));
        }
    }

    /// The end marker that a stream of a known API lacks: OpenAI chat completions end with
    /// `data: [DONE]`, OpenAI Responses with `response.completed` (or `response.failed`,
    /// `response.incomplete`), Anthropic messages with `message_stop` (or `error`). A stream of
    /// another API has no marker to miss.
    pub fn missing_end(events: &[Value]) -> Option<&'static str> {
        let data_type = |e: &Value| e["data"]["type"].as_str().map(str::to_string);
        let has = |names: &[&str]| {
            events.iter().any(|e| {
                let kind = data_type(e).or_else(|| e["event"].as_str().map(str::to_string));
                kind.is_some_and(|k| names.contains(&k.as_str()))
            })
        };
        let chat = events
            .iter()
            .any(|e| e["data"]["object"] == "chat.completion.chunk");
        let responses = events
            .iter()
            .any(|e| data_type(e).is_some_and(|t| t.starts_with("response.")));
        let anthropic = events
            .iter()
            .any(|e| data_type(e).as_deref() == Some("message_start"));
        if chat && !events.iter().any(|e| e["text"] == "[DONE]") {
            Some("`data: [DONE]`")
        } else if responses
            && !has(&[
                "response.completed",
                "response.failed",
                "response.incomplete",
            ])
        {
            Some("`response.completed`")
        } else if anthropic && !has(&["message_stop", "error"]) {
            Some("`message_stop`")
        } else {
            None
        }
    }

    /// The events as a stream's bytes.
    pub fn write(events: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        for event in events.as_array().into_iter().flatten() {
            for key in ["event", "id"] {
                if let Some(value) = event[key].as_str() {
                    line(&mut out, key, value.as_bytes());
                }
            }
            if let Some(retry) = event["retry"].as_u64() {
                line(&mut out, "retry", retry.to_string().as_bytes());
            }
            match (event.get("data"), event["text"].as_str()) {
                // Compact JSON is one line: a newline in a string is written `\n`.
                (Some(json), _) => {
                    out.extend_from_slice(b"data: ");
                    // Writing a `Value` into a Vec cannot fail.
                    let _ = serde_json::to_writer(&mut out, json);
                    out.push(b'\n');
                }
                (None, Some(text)) => {
                    for part in text.split('\n') {
                        line(&mut out, "data", part.as_bytes());
                    }
                }
                (None, None) => {}
            }
            out.push(b'\n');
        }
        out
    }

    fn line(out: &mut Vec<u8>, field: &str, value: &[u8]) {
        out.extend_from_slice(field.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value);
        out.push(b'\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recording::llm::Llm;
    use crate::recording::upstream::HttpConfig;
    use proposal_eval_engine::redact::Redactor;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

    const KEY: &str = "sk-proj-test0123456789abcdefghij";

    /// An OpenAI-compatible stand-in on loopback: answers chat completions (streamed when the
    /// request asks), refuses a request without the key, counts the calls it answered and the
    /// connections (client addresses) they came on.
    struct Upstream {
        url: String,
        calls: Arc<AtomicUsize>,
        peers: Arc<Mutex<Vec<std::net::SocketAddr>>>,
        server: Arc<tiny_http::Server>,
        thread: Option<JoinHandle<()>>,
    }

    impl Upstream {
        fn start() -> Upstream {
            let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
            let url = format!(
                "http://127.0.0.1:{}/v1",
                server.server_addr().to_ip().unwrap().port()
            );
            let calls = Arc::new(AtomicUsize::new(0));
            let peers = Arc::new(Mutex::new(Vec::new()));
            let thread = {
                let (server, calls, peers) = (server.clone(), calls.clone(), peers.clone());
                std::thread::spawn(move || {
                    while let Ok(mut request) = server.recv() {
                        let peer = request.remote_addr().copied();
                        let mut seen: std::sync::MutexGuard<Vec<_>> = peers.lock().unwrap();
                        if let Some(peer) = peer.filter(|p| !seen.contains(p)) {
                            seen.push(peer);
                        }
                        drop(seen);
                        let authorized = request.headers().iter().any(|h| {
                            h.field.equiv("Authorization")
                                && h.value.as_str() == format!("Bearer {KEY}")
                        });
                        let mut body = String::new();
                        let _ = request.as_reader().read_to_string(&mut body);
                        let body: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
                        let ct = |t: &str| {
                            tiny_http::Header::from_bytes(&b"Content-Type"[..], t.as_bytes())
                                .unwrap()
                        };
                        if !authorized {
                            let _ = request.respond(
                                tiny_http::Response::from_string(
                                    r#"{"error":{"message":"no key"}}"#,
                                )
                                .with_status_code(401)
                                .with_header(ct("application/json")),
                            );
                            continue;
                        }
                        let n = calls.fetch_add(1, SeqCst) + 1;
                        let said = body["messages"][0]["content"]
                            .as_str()
                            .unwrap_or("")
                            .to_string();
                        let reply = if body["stream"] == json!(true) {
                            let chunk = |c: &str| json!({"model": "gpt-test", "choices": [{"delta": {"content": c}}]});
                            let text = format!(
                                ": keep-alive\n\ndata: {}\n\ndata: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
                                chunk("you said "), chunk(&said),
                                json!({"model": "gpt-test", "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2}})
                            );
                            tiny_http::Response::from_string(text)
                                .with_header(ct("text/event-stream"))
                        } else {
                            let answer = json!({
                                "model": "gpt-test", "id": format!("call-{n}"),
                                "choices": [{"message": {"role": "assistant", "content": format!("you said {said}")}}],
                                "usage": {"prompt_tokens": 7, "completion_tokens": 3},
                            });
                            tiny_http::Response::from_string(answer.to_string())
                                .with_header(ct("application/json"))
                        };
                        let _ = request.respond(reply);
                    }
                })
            };
            Upstream {
                url,
                calls,
                peers,
                server,
                thread: Some(thread),
            }
        }

        fn stop(mut self) -> usize {
            self.server.unblock();
            let _ = self.thread.take().unwrap().join();
            self.calls.load(SeqCst)
        }
    }

    fn config(upstream: &str) -> HttpConfig {
        crate::toml_read::from_str(&format!("upstream = \"{upstream}\"")).unwrap()
    }

    /// A chat completion through `base`, as a blocking client sends it: status and body.
    fn chat(base: &str, content: &str, stream: bool) -> (u16, String) {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        let body = json!({"model": "gpt-test", "stream": stream, "messages": [{"role": "user", "content": content}]});
        let mut response = agent
            .post(&format!("{base}/chat/completions"))
            .header("Authorization", &format!("Bearer {KEY}"))
            .header("Content-Type", "application/json")
            .send(body.to_string())
            .unwrap();
        (
            response.status().as_u16(),
            response.body_mut().read_to_string().unwrap(),
        )
    }

    fn record(upstream: &Upstream, case: impl Fn(&str)) -> Vec<Interaction> {
        let mut llm = Llm::record(None).with_suite(config(&upstream.url), Default::default());
        case(&llm.base_url().unwrap());
        llm.close();
        assert_eq!(llm.finish_failure(), None);
        assert_eq!(llm.model_failure(), None);
        llm.take_recorded().unwrap()
    }

    #[test]
    fn records_through_the_upstream_and_replays_without_it() {
        let upstream = Upstream::start();
        let seen = Mutex::new(Vec::new());
        let case = |base: &str| {
            let first = chat(base, "hello", false);
            let second = chat(base, "bye", true);
            seen.lock().unwrap().push((first, second));
        };
        let recorded = record(&upstream, case);
        assert_eq!(upstream.stop(), 2, "both calls reached the upstream");
        let [ask, streamed] = &recorded[..] else {
            panic!("{recorded:?}")
        };
        let http = ask.http.as_ref().unwrap();
        assert_eq!(
            (http.method.as_str(), http.path.as_str(), http.status),
            ("POST", "/chat/completions", 200)
        );
        assert_eq!(
            ask.response["choices"][0]["message"]["content"],
            "you said hello"
        );
        assert_eq!(ask.usage, Some(Usage::new(7, 3).with_model("gpt-test")));
        assert!(ask.latency_ms.is_some());
        assert!(streamed.http.as_ref().unwrap().is_stream());
        assert_eq!(
            streamed.response[1]["data"]["choices"][0]["delta"]["content"],
            "bye"
        );
        assert_eq!(streamed.response[3], json!({"text": "[DONE]"}));
        assert_eq!(
            streamed.usage,
            Some(Usage::new(5, 2).with_model("gpt-test"))
        );
        // The key went upstream in a header; no header is recorded.
        let text = serde_json::to_string(&recorded).unwrap();
        assert!(!text.contains(KEY) && !text.contains("Bearer"), "{text}");

        // Replay: the upstream is gone, the client gets the same answers.
        let mut llm = Llm::replay(recorded, vec![], Redactor::default());
        case(&llm.base_url().unwrap());
        llm.close();
        assert_eq!(llm.finish_failure(), None);
        let seen = seen.into_inner().unwrap();
        let (live, replayed) = (&seen[0], &seen[1]);
        assert_eq!(live.0, replayed.0);
        let json = |s: &str| serde_json::from_str::<Value>(s).unwrap();
        assert_eq!(json(&live.0 .1), json(&replayed.0 .1));
        // The same events (the keep-alive comment is not an event).
        let events = |s: &str| {
            let mut p = sse::Parser::default();
            p.feed(s.as_bytes());
            p.finish()
        };
        assert_eq!(events(&live.1 .1), events(&replayed.1 .1));
        assert_eq!(events(&replayed.1 .1).len(), 4);
        assert_eq!(llm.usage().input_tokens, 12);
    }

    #[test]
    fn a_changed_request_fails_the_case_and_the_client_gets_an_error() {
        let upstream = Upstream::start();
        let recorded = record(&upstream, |base| {
            chat(base, "hello", false);
        });
        upstream.stop();
        let mut llm = Llm::replay(recorded.clone(), vec![], Redactor::default());
        let (status, body) = chat(&llm.base_url().unwrap(), "HELLO", false);
        llm.close();
        assert_eq!(status, 400);
        let message = serde_json::from_str::<Value>(&body).unwrap()["error"]["message"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            message.starts_with("proposal-eval: request [0] differs"),
            "{message}"
        );
        let failure = llm.finish_failure().unwrap();
        assert!(
            failure.contains("-      \"content\": \"hello\"")
                && failure.contains("+      \"content\": \"HELLO\""),
            "{failure}"
        );
        assert!(llm.replay_mismatched());

        // One call too many; another path.
        let mut llm = Llm::replay(recorded, vec![], Redactor::default());
        let base = llm.base_url().unwrap();
        assert_eq!(chat(&base, "hello", false).0, 200);
        assert_eq!(chat(&base, "hello", false).0, 400);
        llm.close();
        assert!(llm.finish_failure().unwrap().contains("call [1]"));
    }

    /// One server serves every case, each under its own URL: two cases replaying at once each
    /// get their own answers, and a URL of a case that has ended is refused.
    #[test]
    fn cases_recorded_one_after_another_forward_on_one_connection() {
        let upstream = Upstream::start();
        for said in ["first", "second", "third"] {
            let recorded = record(&upstream, |base| {
                chat(base, said, false);
            });
            assert_eq!(recorded.len(), 1);
        }
        let peers = upstream.peers.lock().unwrap().clone();
        assert_eq!(upstream.stop(), 3);
        assert_eq!(peers.len(), 1, "connections to the upstream: {peers:?}");
    }

    #[test]
    fn each_case_is_served_its_own_calls_under_its_own_url() {
        let upstream = Upstream::start();
        let recorded = |said: &str| {
            record(&upstream, |base| {
                chat(base, said, false);
            })
        };
        let (first, second) = (recorded("first"), recorded("second"));
        upstream.stop();
        let mut a = Llm::replay(first, vec![], Redactor::default());
        let mut b = Llm::replay(second, vec![], Redactor::default());
        let (url_a, url_b) = (a.base_url().unwrap(), b.base_url().unwrap());
        assert_ne!(url_a, url_b);
        assert_eq!(
            url_a.split('/').nth(2),
            url_b.split('/').nth(2),
            "one server"
        );
        // Each case's request fails the other's: its calls are its own.
        let (status, body) = chat(&url_b, "second", false);
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("you said second"), "{body}");
        assert_eq!(chat(&url_a, "second", false).0, 400);
        a.close();
        b.close();
        assert!(a.finish_failure().unwrap().contains("request [0] differs"));
        assert_eq!(b.finish_failure(), None);
        let (status, body) = chat(&url_b, "second", false);
        assert_eq!(status, 404);
        assert!(body.contains("is no running case's URL"), "{body}");
    }

    #[test]
    fn an_upstream_is_needed_to_record_and_a_name_must_be_known() {
        let llm = Llm::record(None);
        if crate::env::settings().is_ok_and(|s| s.upstream.is_none()) {
            assert!(matches!(
                llm.base_url(),
                Err(LlmError::NoUpstream { name: None })
            ));
        }
        let err = llm.base_url_for("claude").unwrap_err().to_string();
        assert!(
            err.contains("PROPOSAL_EVAL_UPSTREAM_CLAUDE") && err.contains("[http.upstreams]"),
            "{err}"
        );
        // Replay needs none.
        let replay = Llm::replay(vec![], vec![], Redactor::default());
        assert!(replay.base_url().unwrap().starts_with("http://127.0.0.1:"));
    }

    #[test]
    fn a_failed_call_says_what_happened_in_words() {
        use std::io::{Error, ErrorKind};
        let wait = Duration::from_secs(2);
        let refused = Error::from(ErrorKind::ConnectionRefused);
        assert_eq!(
            failure_text("POST", "http://127.0.0.1:9/v1/chat", &refused, wait),
            format!("POST http://127.0.0.1:9/v1/chat: the upstream refused the connection (is it running, on this port?) ({refused})")
        );
        for (error, says) in [
            (
                ureq::Error::Timeout(ureq::Timeout::PerRead).into_io(),
                "the upstream did not answer within 2 s ([http] timeout_s = 2 in proposal-eval.toml bounds each wait; raise it for a slower upstream)",
            ),
            (ureq::Error::HostNotFound.into_io(), "the upstream's host name was not found"),
            (ureq::Error::ConnectionFailed.into_io(), "the upstream refused the connection"),
            (Error::from(ErrorKind::UnexpectedEof), "the upstream closed the connection"),
            (Error::from(ErrorKind::ConnectionReset), "the upstream closed the connection"),
            (Error::other("tls"), "the call to the upstream failed"),
        ] {
            let text = what_failed(&error, wait);
            assert!(text.starts_with(says), "{text}");
            assert!(text.ends_with(&format!("({error})")), "{text}");
        }
    }

    #[test]
    fn a_stream_of_a_known_api_needs_its_end_marker() {
        let chunk = json!({"data": {"object": "chat.completion.chunk", "choices": []}});
        let done = json!({"text": "[DONE]"});
        assert_eq!(
            sse::missing_end(std::slice::from_ref(&chunk)),
            Some("`data: [DONE]`")
        );
        assert_eq!(sse::missing_end(&[chunk, done]), None);
        let event = |t: &str| json!({"event": t, "data": {"type": t}});
        let created = event("response.created");
        assert_eq!(
            sse::missing_end(&[created.clone(), event("response.output_text.delta")]),
            Some("`response.completed`")
        );
        for end in [
            "response.completed",
            "response.failed",
            "response.incomplete",
        ] {
            assert_eq!(
                sse::missing_end(&[created.clone(), event(end)]),
                None,
                "{end}"
            );
        }
        let start = event("message_start");
        assert_eq!(
            sse::missing_end(&[start.clone(), event("content_block_delta")]),
            Some("`message_stop`")
        );
        assert_eq!(
            sse::missing_end(&[start.clone(), event("message_stop")]),
            None
        );
        assert_eq!(sse::missing_end(&[start, event("error")]), None);
        // Another API's stream: no marker is known, none is missing.
        assert_eq!(sse::missing_end(&[json!({"data": {"tick": 1}})]), None);
        assert_eq!(sse::missing_end(&[]), None);
    }

    #[test]
    fn events_read_in_any_pieces_and_write_back_the_same() {
        let stream = "event: message_start\ndata: {\"type\": \"message_start\"}\r\n\r\n: ping\n\nid: 7\nretry: 50\ndata: line one\ndata: line two\n\ndata: [DONE]";
        for piece in [1, 2, 5, 1000] {
            let mut parser = sse::Parser::default();
            for chunk in stream.as_bytes().chunks(piece) {
                parser.feed(chunk);
            }
            let events = parser.finish();
            assert_eq!(
                Value::Array(events.clone()),
                json!([
                    {"event": "message_start", "data": {"type": "message_start"}},
                    {"id": "7", "retry": 50, "text": "line one\nline two"},
                    {"text": "[DONE]"},
                ]),
                "pieces of {piece}"
            );
            let written = sse::write(&Value::Array(events.clone()));
            let mut again = sse::Parser::default();
            again.feed(&written);
            assert_eq!(again.finish(), events);
        }
        // JSON data is one compact line, a newline in it escaped.
        let written = sse::write(&json!([{"data": {"a": "x\ny"}}, {"text": "[DONE]"}]));
        assert_eq!(
            String::from_utf8(written).unwrap(),
            "data: {\"a\":\"x\\ny\"}\n\ndata: [DONE]\n\n"
        );
    }
}
