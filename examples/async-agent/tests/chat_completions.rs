//! `proposal_eval::openai::ChatCompletions` against a fake OpenAI-compatible server on loopback:
//! retries, waits, timeouts and what its errors say; a refusal for the rate left to the shared
//! limit of `llm.complete`. Each test starts its own server (wiremock,
//! 127.0.0.1, an OS-chosen port) and counts the calls that reached it.

#[path = "support/fake_openai.rs"]
mod fake_openai;

use proposal_eval::openai::ChatCompletions;
use proposal_eval::Model;
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY: &str = "sk-test-chat-completions-42";

/// A server and the tokio runtime its setup runs on (the server itself runs on its own thread).
struct Server {
    runtime: tokio::runtime::Runtime,
    server: MockServer,
}

impl Server {
    fn start() -> Server {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let server = runtime.block_on(MockServer::start());
        Server { runtime, server }
    }

    /// Answers the next `times` chat completion calls with `response`, before any other mock.
    fn then(&self, response: ResponseTemplate, times: u64) {
        self.runtime.block_on(
            Mock::given(method("POST"))
                .and(path("/v1/chat/completions"))
                .respond_with(response)
                .up_to_n_times(times)
                .mount(&self.server),
        );
    }

    fn calls(&self) -> Vec<wiremock::Request> {
        self.runtime
            .block_on(self.server.received_requests())
            .unwrap_or_default()
    }

    fn model(&self) -> ChatCompletions {
        ChatCompletions::new()
            .base_url(fake_openai::base_url(&self.server))
            .api_key(KEY)
            .backoff(Duration::from_millis(10))
    }
}

fn ok() -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(fake_openai::completion("gpt-4o-mini", "{}", 3))
}

fn request() -> Value {
    json!({ "messages": [{ "role": "user", "content": "hi" }] })
}

/// A refusal for the rate is not retried by the model itself: its status and headers go to
/// `llm.complete`, whose limit on live calls (shared by the run's test processes) waits out the
/// `Retry-After` and sends the call again.
#[test]
fn a_429_with_retry_after_is_waited_out_by_the_shared_limit_then_sent_again() {
    let server = Server::start();
    // Two refusals, then an answer.
    server.then(
        ResponseTemplate::new(429)
            .insert_header("retry-after", "1")
            .set_body_json(json!({ "error": { "message": "Rate limit reached" } })),
        2,
    );
    server.then(ok(), 1);
    // Alone, the model fails at once: the waiting is the limit's.
    let error = server.model().complete(&request()).unwrap_err().to_string();
    assert!(error.contains("HTTP 429 Too Many Requests"), "{error}");
    assert_eq!(server.calls().len(), 1);

    let mut llm = proposal_eval::Llm::live(server.model());
    let started = Instant::now();
    let response = llm.complete(&request()).unwrap();
    assert_eq!(response["choices"][0]["message"]["content"], "{}");
    assert_eq!(server.calls().len(), 3);
    // The backoff alone is 10 ms: the second second is Retry-After's.
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn retry_after_as_an_http_date_is_honoured() {
    let server = Server::start();
    let in_two_seconds = chrono::Utc::now() + chrono::Duration::seconds(2);
    let date = in_two_seconds
        .format("%a, %d %b %Y %H:%M:%S GMT")
        .to_string();
    server.then(
        ResponseTemplate::new(502).insert_header("retry-after", date.as_str()),
        1,
    );
    server.then(ok(), 1);
    let started = Instant::now();
    server.model().complete(&request()).unwrap();
    assert_eq!(server.calls().len(), 2);
    // The date has whole seconds: the wait is between one and two of them.
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn server_errors_use_up_the_attempts_and_say_so() {
    let server = Server::start();
    server.then(
        ResponseTemplate::new(500).set_body_string("upstream overloaded\n  try later"),
        10,
    );
    let error = server
        .model()
        .max_attempts(3)
        .complete(&request())
        .unwrap_err()
        .to_string();
    assert_eq!(server.calls().len(), 3);
    let url = format!("{}/chat/completions", fake_openai::base_url(&server.server));
    assert_eq!(
        error,
        format!("POST {url}: HTTP 500 Internal Server Error: upstream overloaded try later (gave up after 3 attempts; ChatCompletions::max_attempts)")
    );
}

#[test]
fn a_client_error_is_not_retried_and_the_key_is_never_shown() {
    let server = Server::start();
    server.then(
        ResponseTemplate::new(401).set_body_json(
            json!({ "error": { "message": format!("Incorrect API key provided: {KEY}") } }),
        ),
        10,
    );
    let error = server.model().complete(&request()).unwrap_err().to_string();
    assert_eq!(server.calls().len(), 1);
    assert!(error.contains("HTTP 401 Unauthorized"), "{error}");
    assert!(
        error.contains("Incorrect API key provided: <redacted>"),
        "{error}"
    );
    assert!(!error.contains(KEY), "{error}");
}

#[test]
fn a_retry_after_longer_than_max_wait_fails_at_once() {
    let server = Server::start();
    server.then(
        ResponseTemplate::new(502).insert_header("retry-after", "3600"),
        10,
    );
    let started = Instant::now();
    let error = server
        .model()
        .max_wait(Duration::from_secs(5))
        .complete(&request())
        .unwrap_err()
        .to_string();
    assert_eq!(server.calls().len(), 1);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        error.ends_with("(the server asks to retry after 3600 s, longer than the 5 s this model waits; ChatCompletions::max_wait)"),
        "{error}"
    );
}

#[test]
fn the_timeout_ends_a_slow_answer() {
    let server = Server::start();
    server.then(ok().set_delay(Duration::from_secs(3)), 10);
    let started = Instant::now();
    let error = server
        .model()
        .timeout(Duration::from_millis(200))
        .max_attempts(2)
        .complete(&request())
        .unwrap_err()
        .to_string();
    // Two attempts of 0.2 s and a 10 ms backoff, far below one 3 s answer.
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(server.calls().len(), 2);
    assert!(
        error.contains("no complete answer within the timeout of 0.2 s (ChatCompletions::timeout) (gave up after 2 attempts"),
        "{error}"
    );
}

/// A server on loopback written by hand (wiremock answers all at once): for each of at most
/// `connections` connections, it reads the request, then sends the answer's head and body in
/// `pieces`, `gap` apart; with no pieces it says nothing at all and holds the connection until
/// the client gives up.
fn trickling_server(connections: usize, pieces: usize, gap: Duration) -> String {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().take(connections) {
            let Ok(stream) = stream else { return };
            let mut reader = BufReader::new(stream);
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let mut stream = reader.into_inner();
            if pieces == 0 {
                // Silent: the client's read timeout closes the connection, and this read ends.
                let _ = stream.read(&mut [0; 1]);
                continue;
            }
            let answer = fake_openai::completion("gpt-4o-mini", "{}", 3).to_string();
            let mut whole = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
                answer.len()
            )
            .into_bytes();
            let size = whole.len().div_ceil(pieces);
            for piece in whole.chunks_mut(size) {
                if stream
                    .write_all(piece)
                    .and_then(|()| stream.flush())
                    .is_err()
                {
                    break;
                }
                std::thread::sleep(gap);
            }
        }
    });
    url
}

/// `read_timeout` bounds the silence, not the answer: an answer that comes in five pieces
/// 0.3 s apart (1.5 s in all) is read whole with a read timeout of 0.8 s.
#[test]
fn the_read_timeout_lets_an_answer_that_keeps_coming_finish() {
    let url = trickling_server(1, 5, Duration::from_millis(300));
    let started = Instant::now();
    let answer = ChatCompletions::new()
        .base_url(url)
        .api_key(KEY)
        .read_timeout(Duration::from_millis(800))
        .max_attempts(1)
        .complete(&request())
        .unwrap();
    assert_eq!(answer["choices"][0]["message"]["content"], "{}", "{answer}");
    assert!(
        started.elapsed() > Duration::from_millis(1200),
        "{:?}",
        started.elapsed()
    );
}

/// A server that takes the call and never answers fails each attempt after the read timeout,
/// long before the whole attempt's timeout, and the error says which bound it was.
#[test]
fn the_read_timeout_ends_silence() {
    let url = trickling_server(2, 0, Duration::ZERO);
    let started = Instant::now();
    let error = ChatCompletions::new()
        .base_url(url.clone())
        .api_key(KEY)
        .backoff(Duration::from_millis(10))
        .timeout(Duration::from_secs(30))
        .read_timeout(Duration::from_millis(300))
        .max_attempts(2)
        .complete(&request())
        .unwrap_err()
        .to_string();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(
        error.contains(&format!("POST {url}/chat/completions: nothing moved for 0.3 s (ChatCompletions::read_timeout: to connect, to send, for the answer's first byte and between reads) (gave up after 2 attempts")),
        "{error}"
    );
}

#[test]
fn the_key_and_the_model_name_reach_the_server() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // The fake that answers only requests carrying the right key.
    let fake = runtime.block_on(fake_openai::start(KEY));
    let model = ChatCompletions::new()
        .base_url(fake_openai::base_url(&fake))
        .api_key(KEY)
        .model("gpt-4o-mini");
    let response = model.complete(&request()).unwrap();
    assert_eq!(response["model"], "gpt-4o-mini");
    let calls = runtime.block_on(fake.received_requests()).unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(
        calls[0].headers.get("authorization").unwrap(),
        format!("Bearer {KEY}").as_str()
    );
    let sent: Value = serde_json::from_slice(&calls[0].body).unwrap();
    assert_eq!(
        sent,
        json!({ "model": "gpt-4o-mini", "messages": [{ "role": "user", "content": "hi" }] })
    );

    let wrong = ChatCompletions::new()
        .base_url(fake_openai::base_url(&fake))
        .api_key("sk-wrong");
    let error = wrong.complete(&request()).unwrap_err().to_string();
    assert!(error.contains("HTTP 401"), "{error}");
}
