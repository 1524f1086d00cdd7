//! What `llm.base_url()` adds to a replayed request: the same blocking client (ureq, one
//! kept-alive connection) posting the same request to the loopback server of a replaying `Llm`,
//! and to a plain loopback server (tiny_http, the server a user would pick) that answers every request with
//! the bytes the proxy serves for it and reads nothing of the request but its body.
//!
//! The calls are those of a real recording, read with the runtime's reader: the committed
//! `where_is_my_order` of examples/support-agent, a chat completion with a tool call (JSON) and
//! the streamed reply (server-sent events). The replaying `Llm` is the one a case gets: each
//! request is matched against the recorded one (redaction and ignore paths as by default) and
//! its answer served.
//!
//! `cargo bench -p proposal-eval --features http --bench proxy`. The difference of a pair's
//! medians is the proxy's overhead per request (target: 100 µs or less).
//!
//! Timing is noisy on a shared machine; instructions are not. With `PROXY_BENCH_SIDE` set the
//! binary makes `PROXY_BENCH_REQUESTS` requests of one kind on one side and exits, to run under
//! `valgrind --tool=callgrind` (every thread counted, the servers' included):
//! `PROXY_BENCH_SIDE=proxy|plain PROXY_BENCH_CALL=0|1 PROXY_BENCH_REQUESTS=N`. The instructions
//! of N requests less those of 0 requests, divided by N, are one request's.

use criterion::Criterion;
use proposal_eval::__internal::llm;
use proposal_eval::__internal::recording::{Interaction, Recording};
use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The recorded calls: [0] JSON with a tool call, [1] a stream.
fn recorded() -> Vec<Interaction> {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/support-agent/fixtures/support/recordings/where_is_my_order.json");
    let recording = Recording::read(&file)
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("{} is missing", file.display()));
    recording.interactions().to_vec()
}

fn client() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

/// What answered one request: content type and body.
struct Answer {
    content_type: String,
    body: Vec<u8>,
}

/// `n` requests through `base`, each read to the end; every answer must be a 200.
fn post(agent: &ureq::Agent, base: &str, body: &str, n: u64) -> (Duration, Option<Answer>) {
    let url = format!("{base}/chat/completions");
    let started = Instant::now();
    let mut last = None;
    for _ in 0..n {
        let mut response = agent
            .post(&url)
            .header("Content-Type", "application/json")
            .header("Authorization", "Bearer sk-bench")
            .send(body)
            .unwrap();
        assert_eq!(response.status().as_u16(), 200);
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let body = response.body_mut().read_to_vec().unwrap();
        last = Some(Answer { content_type, body });
    }
    (started.elapsed(), last)
}

/// A plain loopback server answering every request with `answer`.
struct Plain {
    url: String,
    server: Arc<tiny_http::Server>,
    thread: Option<JoinHandle<()>>,
}

impl Plain {
    fn start(answer: Answer) -> Plain {
        // Its connections send each write at once, as the proxy's do: tiny_http writes an
        // answer over its 1 KiB buffer in two pieces, and with Nagle's algorithm the second
        // waits 40 ms for the client's delayed acknowledgement of the first.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        assert!(
            proposal_eval::__internal::no_delay(&listener),
            "TCP_NODELAY: {}",
            std::io::Error::last_os_error()
        );
        let server = Arc::new(tiny_http::Server::from_listener(listener, None).unwrap());
        let url = format!(
            "http://127.0.0.1:{}",
            server.server_addr().to_ip().unwrap().port()
        );
        let thread = {
            let server = server.clone();
            std::thread::spawn(move || {
                let header =
                    tiny_http::Header::from_bytes(&b"Content-Type"[..], answer.content_type)
                        .unwrap();
                while let Ok(mut request) = server.recv() {
                    let mut sink = Vec::new();
                    let _ = request.as_reader().read_to_end(&mut sink);
                    let _ = request.respond(
                        tiny_http::Response::from_data(answer.body.clone())
                            .with_header(header.clone()),
                    );
                }
            })
        };
        Plain {
            url,
            server,
            thread: Some(thread),
        }
    }
}

impl Drop for Plain {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One recorded call: the request as the client sends it, and the plain server that answers it
/// with the bytes the proxy serves for it.
struct Call {
    interaction: Interaction,
    body: String,
    plain: Plain,
}

impl Call {
    fn new(interaction: Interaction) -> Call {
        let body = serde_json::to_string(&interaction.request).unwrap();
        let (_, answer) = through_proxy(&client(), &interaction, &body, 1);
        Call {
            interaction,
            body,
            plain: Plain::start(answer.unwrap()),
        }
    }
}

/// `n` requests through the loopback server of an `Llm` replaying `n` copies of the call.
fn through_proxy(
    agent: &ureq::Agent,
    interaction: &Interaction,
    body: &str,
    n: u64,
) -> (Duration, Option<Answer>) {
    let llm = llm::replay(vec![interaction.clone(); n as usize]);
    let base = llm.base_url().unwrap();
    let out = post(agent, &base, body, n);
    assert_eq!(llm.calls(), n as usize, "every request was a replayed call");
    out
}

fn bench(c: &mut Criterion) {
    let calls: Vec<Call> = recorded().into_iter().map(Call::new).collect();
    for (name, call) in ["chat_completion", "streamed_reply"].iter().zip(&calls) {
        let mut group = c.benchmark_group(*name);
        let agent = client();
        group.bench_function("plain_loopback_server", |b| {
            b.iter_custom(|n| post(&agent, &call.plain.url, &call.body, n).0)
        });
        let agent = client();
        group.bench_function("through_llm_base_url", |b| {
            b.iter_custom(|n| through_proxy(&agent, &call.interaction, &call.body, n).0)
        });
        group.finish();
    }
}

/// One side, `PROXY_BENCH_REQUESTS` times, for an instruction count.
fn count(side: &str) {
    let n: u64 = std::env::var("PROXY_BENCH_REQUESTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let which: usize = std::env::var("PROXY_BENCH_CALL")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let call = Call::new(recorded().swap_remove(which));
    let agent = client();
    let took = match side {
        // The proxy side builds a replaying `Llm` of `n` calls and starts its server before the
        // requests: the same is built here, so that only the requests differ.
        "plain" => {
            let llm = llm::replay(vec![call.interaction.clone(); n as usize]);
            let _ = llm.base_url().unwrap();
            post(&agent, &call.plain.url, &call.body, n).0
        }
        "proxy" => through_proxy(&agent, &call.interaction, &call.body, n).0,
        other => panic!("PROXY_BENCH_SIDE={other}: plain or proxy"),
    };
    eprintln!("{side}, call {which}: {n} requests in {took:?}");
}

fn main() {
    if let Ok(side) = std::env::var("PROXY_BENCH_SIDE") {
        return count(&side);
    }
    let mut c = Criterion::default()
        .sample_size(30)
        .measurement_time(Duration::from_secs(4))
        .configure_from_args();
    bench(&mut c);
    c.final_summary();
}
