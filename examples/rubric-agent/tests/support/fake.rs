//! A fake OpenAI-compatible chat completions endpoint on 127.0.0.1: it answers each call with
//! what `answer` says, counts the calls, and stops when dropped or stopped. It serves at most
//! `MAX_CALLS` requests and never runs longer than `LIFETIME`, so a test cannot hang on it.

use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const MAX_CALLS: usize = 50;
const LIFETIME: Duration = Duration::from_secs(300);

/// What the fake answers to the call numbered `n` (from 0) with this request body: the
/// assistant message's content.
pub type Answer = Box<dyn Fn(usize, &Value) -> String + Send>;

pub struct Fake {
    pub url: String,
    calls: Arc<Mutex<Vec<Value>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Fake {
    pub fn start(answer: Answer) -> Fake {
        let server = tiny_http::Server::http("127.0.0.1:0").expect("a loopback port");
        let port = server.server_addr().to_ip().expect("an IP address").port();
        let calls = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (seen, stopped) = (calls.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let started = Instant::now();
            while !stopped.load(Ordering::SeqCst) && started.elapsed() < LIFETIME {
                let Ok(Some(mut request)) = server.recv_timeout(Duration::from_millis(50)) else {
                    continue;
                };
                let mut body = String::new();
                let _ = request.as_reader().read_to_string(&mut body);
                let body: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
                let n = {
                    let mut seen = seen.lock().unwrap();
                    seen.push(body.clone());
                    seen.len() - 1
                };
                if n >= MAX_CALLS {
                    let _ = request.respond(
                        tiny_http::Response::from_string("too many calls").with_status_code(500),
                    );
                    break;
                }
                let content = answer(n, &body);
                let response = json!({
                    "id": format!("chatcmpl-{n}"),
                    "object": "chat.completion",
                    "model": body["model"],
                    "choices": [{
                        "index": 0,
                        "message": { "role": "assistant", "content": content },
                        "finish_reason": "stop"
                    }],
                    "usage": { "prompt_tokens": 50, "completion_tokens": 10 }
                });
                let header = tiny_http::Header::from_bytes("content-type", "application/json")
                    .expect("a header");
                let _ = request.respond(
                    tiny_http::Response::from_string(response.to_string()).with_header(header),
                );
            }
        });
        Fake {
            url: format!("http://127.0.0.1:{port}/v1"),
            calls,
            stop,
            thread: Some(thread),
        }
    }

    /// The request bodies received so far.
    pub fn calls(&self) -> Vec<Value> {
        self.calls.lock().unwrap().clone()
    }

    /// Stops the server (its port then refuses connections); the calls it received.
    pub fn stop(mut self) -> Vec<Value> {
        self.halt();
        self.calls()
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        self.halt();
    }
}
