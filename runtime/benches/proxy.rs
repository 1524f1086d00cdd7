//! What `llm.base_url()` adds to a replayed request: the same blocking client (ureq, one
//! kept-alive connection) posting the same chat completion to the loopback server of a replaying
//! `Llm`, and to a plain loopback server (tiny_http, like the proxy) that answers every request
//! with the same response bytes and reads nothing of the request but its body.
//!
//! `cargo bench -p proposal-eval --features http --bench proxy`. The difference of the two
//! medians is the proxy's overhead per request (target: 100 µs or less).

use criterion::{criterion_group, criterion_main, Criterion};
use proposal_eval::__internal::llm;
use proposal_eval::__internal::recording::{HttpExchange, Interaction};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

fn request() -> Value {
    json!({
        "model": "gpt-4o-mini",
        "temperature": 0,
        "messages": [
            { "role": "system", "content": "You are the support agent of an online shop. Look orders up with the lookup_order tool before you answer; answer in one short sentence." },
            { "role": "user", "content": "Hi, where is my order A-1001? It has been a week and the tracking page says nothing." },
        ],
        "tools": [{ "type": "function", "function": { "name": "lookup_order", "description": "The status of an order, by its id.",
            "parameters": { "type": "object", "properties": { "order_id": { "type": "string" } }, "required": ["order_id"] } } }],
    })
}

fn response() -> Value {
    json!({
        "id": "chatcmpl-123", "object": "chat.completion", "model": "gpt-4o-mini",
        "choices": [{ "index": 0, "finish_reason": "tool_calls", "message": { "role": "assistant", "content": null,
            "tool_calls": [{ "id": "call_1", "type": "function", "function": { "name": "lookup_order", "arguments": "{\"order_id\":\"A-1001\"}" } }] } }],
        "usage": { "prompt_tokens": 130, "completion_tokens": 12, "total_tokens": 142 },
    })
}

fn interaction() -> Interaction {
    let mut i = Interaction::new(
        request(),
        response(),
        "2025-01-15T10:00:00Z".parse().unwrap(),
    );
    i.http = Some(HttpExchange {
        upstream: None,
        method: "POST".into(),
        path: "/chat/completions".into(),
        query: None,
        status: 200,
        content_type: Some("application/json".into()),
    });
    i
}

fn client() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

/// `n` requests through `base`, each read to the end; every answer must be a 200.
fn post(agent: &ureq::Agent, base: &str, body: &str, n: u64) -> Duration {
    let url = format!("{base}/chat/completions");
    let started = Instant::now();
    for _ in 0..n {
        let mut response = agent
            .post(&url)
            .header("Content-Type", "application/json")
            .header("Authorization", "Bearer sk-bench")
            .send(body)
            .unwrap();
        assert_eq!(response.status().as_u16(), 200);
        let _ = response.body_mut().read_to_vec().unwrap();
    }
    started.elapsed()
}

fn bench(c: &mut Criterion) {
    let body = request().to_string();
    let answer = serde_json::to_vec(&response()).unwrap();
    let mut group = c.benchmark_group("replayed_request");

    // The plain server: the same bytes for every request.
    let server = std::sync::Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
    let plain = format!(
        "http://127.0.0.1:{}",
        server.server_addr().to_ip().unwrap().port()
    );
    let serving = {
        let (server, answer) = (server.clone(), answer.clone());
        std::thread::spawn(move || {
            while let Ok(mut request) = server.recv() {
                let mut sink = Vec::new();
                let _ = request.as_reader().read_to_end(&mut sink);
                let header =
                    tiny_http::Header::from_bytes(&b"Content-Type"[..], &b"application/json"[..])
                        .unwrap();
                let _ = request
                    .respond(tiny_http::Response::from_data(answer.clone()).with_header(header));
            }
        })
    };
    let agent = client();
    group.bench_function("plain_loopback_server", |b| {
        b.iter_custom(|n| post(&agent, &plain, &body, n))
    });

    // The proxy: a replaying `Llm` with one recorded call per request to come.
    let agent = client();
    let recorded = interaction();
    group.bench_function("through_llm_base_url", |b| {
        b.iter_custom(|n| {
            let llm = llm::replay(vec![recorded.clone(); n as usize]);
            let base = llm.base_url().unwrap();
            let took = post(&agent, &base, &body, n);
            drop(llm);
            took
        })
    });
    group.finish();
    server.unblock();
    let _ = serving.join();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(Duration::from_secs(4));
    targets = bench
}
criterion_main!(benches);
