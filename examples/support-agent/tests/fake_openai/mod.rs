//! A fake OpenAI-compatible chat completions server on 127.0.0.1, the "live" upstream that the
//! tests record against: no network, no key, the same answers every time.
//!
//! It answers like the real API: a request with tools gets a `lookup_order` tool call when the
//! message names an order (`A-1234`), a streamed request gets its reply as chunks, then a usage
//! chunk, then `[DONE]`; a request's `metadata` is echoed back, as OpenAI's Responses API does.
//! It refuses (401) a request without the expected key, so a passing recording shows the key
//! reached it; it counts the calls it answered and the most it was answering at once.

#![allow(dead_code)]

mod shop;

use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

/// The key the tests give the agent while recording.
pub const KEY: &str = "sk-proj-FAKEfake0123456789abcdefABCDEF";

#[derive(Default)]
struct Counters {
    calls: AtomicUsize,
    refused: AtomicUsize,
    running: AtomicUsize,
    peak: AtomicUsize,
}

pub struct FakeOpenAi {
    pub url: String,
    server: Arc<tiny_http::Server>,
    counters: Arc<Counters>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// For a suite binary run with `RECORD` set and no `PROPOSAL_EVAL_UPSTREAM`: starts the fake and
/// points the environment at it (the upstream and the key), before the harness reads it.
pub fn for_recording() -> Option<FakeOpenAi> {
    let record = ["PROPOSAL_EVAL_RECORD", "RECORD"]
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .any(|v| !v.trim().is_empty() && v.trim() != "0");
    (record && std::env::var_os("PROPOSAL_EVAL_UPSTREAM").is_none()).then(|| {
        let fake = FakeOpenAi::start(Duration::ZERO);
        // Nothing else runs yet in this process.
        std::env::set_var("PROPOSAL_EVAL_UPSTREAM", &fake.url);
        // The shopping assistant's Anthropic upstream (`fixtures/shop`) is the same fake.
        std::env::set_var("PROPOSAL_EVAL_UPSTREAM_ANTHROPIC", &fake.url);
        std::env::set_var("OPENAI_API_KEY", KEY);
        fake
    })
}

/// How the fake misbehaves, for the failure scenarios.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Fault {
    /// It answers as the real API does.
    None,
    /// It takes a request and sends nothing for this long (then answers, to a client long gone).
    Hang(Duration),
    /// A streamed answer stops before its `data: [DONE]`.
    CutStream,
}

/// What the fake saw, once stopped.
#[derive(Debug, PartialEq)]
pub struct Seen {
    pub calls: usize,
    pub refused: usize,
    pub peak: usize,
}

impl FakeOpenAi {
    /// Starts the server; each answer takes at least `delay` (to see calls overlap).
    pub fn start(delay: Duration) -> FakeOpenAi {
        FakeOpenAi::start_with(delay, Fault::None)
    }

    /// Starts the server with a fault.
    pub fn start_with(delay: Duration, fault: Fault) -> FakeOpenAi {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("a loopback port"));
        let port = server.server_addr().to_ip().expect("a TCP port").port();
        let counters = Arc::new(Counters::default());
        let thread = {
            let (server, counters) = (server.clone(), counters.clone());
            std::thread::spawn(move || {
                let mut workers = Vec::new();
                while let Ok(request) = server.recv() {
                    let counters = counters.clone();
                    workers.push(std::thread::spawn(move || {
                        answer(request, &counters, delay, fault)
                    }));
                }
                for w in workers {
                    let _ = w.join();
                }
            })
        };
        FakeOpenAi {
            url: format!("http://127.0.0.1:{port}/v1"),
            server,
            counters,
            thread: Some(thread),
        }
    }

    /// Stops the fake and says what it saw on standard error.
    pub fn stop_and_report(self) {
        let seen = self.stop();
        eprintln!(
            "fake OpenAI upstream: {} call(s) answered, {} refused for a wrong key",
            seen.calls, seen.refused
        );
    }

    pub fn stop(mut self) -> Seen {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        Seen {
            calls: self.counters.calls.load(SeqCst),
            refused: self.counters.refused.load(SeqCst),
            peak: self.counters.peak.load(SeqCst),
        }
    }
}

fn content_type(value: &str) -> tiny_http::Header {
    tiny_http::Header::from_bytes(&b"Content-Type"[..], value.as_bytes()).expect("a header")
}

fn answer(mut request: tiny_http::Request, counters: &Counters, delay: Duration, fault: Fault) {
    // OpenAI's clients send the key as a bearer token, Anthropic's as `x-api-key`.
    let authorized = request.headers().iter().any(|h| {
        (h.field.equiv("Authorization") && h.value.as_str() == format!("Bearer {KEY}"))
            || (h.field.equiv("x-api-key") && h.value.as_str() == KEY)
    });
    let path = request.url().to_string();
    let mut text = String::new();
    let _ = request.as_reader().read_to_string(&mut text);
    if !authorized {
        counters.refused.fetch_add(1, SeqCst);
        let body = json!({ "error": { "message": "Incorrect API key provided", "type": "invalid_request_error" } });
        let _ = request.respond(
            tiny_http::Response::from_string(body.to_string())
                .with_status_code(401)
                .with_header(content_type("application/json")),
        );
        return;
    }
    let now = counters.running.fetch_add(1, SeqCst) + 1;
    counters.peak.fetch_max(now, SeqCst);
    counters.calls.fetch_add(1, SeqCst);
    std::thread::sleep(match fault {
        Fault::Hang(hang) => hang,
        _ => delay,
    });
    let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    if shop::is_shop(&path, &body) {
        let (kind, answer) = shop::answer(&path, &body);
        counters.running.fetch_sub(1, SeqCst);
        let _ = request
            .respond(tiny_http::Response::from_string(answer).with_header(content_type(kind)));
        return;
    }
    let model = body["model"].as_str().unwrap_or("gpt-4o-mini").to_string();
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let prompt_tokens = (text.len() / 4) as u64;
    let response = if body["stream"] == json!(true) {
        let reply = reply_to(&messages);
        let mut out = String::new();
        for (i, word) in reply.split_inclusive(' ').enumerate() {
            let mut delta = json!({ "content": word });
            if i == 0 {
                delta["role"] = json!("assistant");
            }
            let chunk = json!({ "id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": model,
                "choices": [{ "index": 0, "delta": delta, "finish_reason": null }], "usage": null });
            out.push_str(&format!("data: {chunk}\n\n"));
        }
        let usage = json!({ "id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": model, "choices": [],
            "usage": { "prompt_tokens": prompt_tokens, "completion_tokens": reply.split(' ').count(), "total_tokens": 0 } });
        out.push_str(&format!("data: {usage}\n\n"));
        if fault != Fault::CutStream {
            out.push_str("data: [DONE]\n\n");
        }
        tiny_http::Response::from_string(out)
            .with_header(content_type("text/event-stream; charset=utf-8"))
    } else {
        let user = messages
            .iter()
            .rev()
            .find(|m| m["role"] == "user")
            .and_then(|m| m["content"].as_str())
            .unwrap_or("");
        let message = match order_id(user) {
            Some(id) if body["tools"].is_array() => {
                json!({ "role": "assistant", "content": null, "tool_calls": [{
                "id": "call_1", "type": "function",
                "function": { "name": "lookup_order", "arguments": json!({ "order_id": id }).to_string() } }] })
            }
            _ => {
                json!({ "role": "assistant", "content": "Could you tell me your order number (A-1234)?" })
            }
        };
        let mut reply = json!({ "id": "chatcmpl-fake", "object": "chat.completion", "model": model,
            "choices": [{ "index": 0, "message": message, "finish_reason": "stop" }],
            "usage": { "prompt_tokens": prompt_tokens, "completion_tokens": 12, "total_tokens": prompt_tokens + 12 } });
        // Echoed as OpenAI's Responses API echoes it: a key put there comes back.
        if body.get("metadata").is_some() {
            reply["metadata"] = body["metadata"].clone();
        }
        let body = reply;
        tiny_http::Response::from_string(body.to_string())
            .with_header(content_type("application/json"))
    };
    counters.running.fetch_sub(1, SeqCst);
    let _ = request.respond(response);
}

/// `A-` and digits, the first in `text`.
fn order_id(text: &str) -> Option<String> {
    let start = text.find("A-")?;
    let digits: String = text[start + 2..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    (!digits.is_empty()).then(|| format!("A-{digits}"))
}

/// The reply after a tool result: what the order system said, in a sentence.
fn reply_to(messages: &[Value]) -> String {
    let id = messages
        .iter()
        .filter_map(|m| m["tool_calls"][0]["function"]["arguments"].as_str())
        .filter_map(|a| serde_json::from_str::<Value>(a).ok())
        .find_map(|a| a["order_id"].as_str().map(str::to_string))
        .unwrap_or_default();
    let result: Value = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .and_then(|c| serde_json::from_str(c).ok())
        .unwrap_or(Value::Null);
    match (result["status"].as_str(), result["shipped_on"].as_str()) {
        (Some(status), Some(day)) => {
            format!("Order {id} is {status}: it left our warehouse on {day}.")
        }
        (Some(status), None) => format!("Order {id} is {status}."),
        _ => format!("I could not find order {id}; please check the number."),
    }
}
