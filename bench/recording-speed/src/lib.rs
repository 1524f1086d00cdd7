//! A local upstream for the recording benchmark: answers every request after a fixed latency,
//! or, above `refuse_above` requests in flight, at once with a 429 and `Retry-After` (as
//! `retry-after-ms`, and in whole seconds rounded up).

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

/// What the upstream saw.
#[derive(Default)]
pub struct Counts {
    /// Requests answered 200.
    pub answered: AtomicUsize,
    /// Requests answered 429.
    pub refused: AtomicUsize,
    /// The most requests in flight at once.
    pub most_in_flight: AtomicUsize,
    in_flight: AtomicUsize,
}

/// A running upstream on 127.0.0.1; it stops with the process.
pub struct Upstream {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// What it saw.
    pub counts: Arc<Counts>,
}

impl Upstream {
    /// Answers after `latency`; with `refuse_above`, a request that finds that many in flight
    /// is answered 429 with a wait of `latency`.
    pub fn start(latency: Duration, refuse_above: Option<usize>) -> Upstream {
        let server = tiny_http::Server::http("127.0.0.1:0").expect("a loopback port");
        let url = format!(
            "http://127.0.0.1:{}",
            server.server_addr().to_ip().expect("a TCP port").port()
        );
        let counts = Arc::new(Counts::default());
        let shared = counts.clone();
        std::thread::spawn(move || {
            for request in server.incoming_requests() {
                let counts = shared.clone();
                std::thread::spawn(move || answer(request, &counts, latency, refuse_above));
            }
        });
        Upstream { url, counts }
    }
}

fn header(name: &str, value: &str) -> tiny_http::Header {
    tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("a valid header")
}

fn answer(
    request: tiny_http::Request,
    counts: &Counts,
    latency: Duration,
    refuse_above: Option<usize>,
) {
    let now = counts.in_flight.fetch_add(1, SeqCst) + 1;
    let response = if refuse_above.is_some_and(|k| now > k) {
        counts.refused.fetch_add(1, SeqCst);
        tiny_http::Response::from_string(r#"{"error":{"message":"rate limited"}}"#)
            .with_status_code(429)
            .with_header(header("Content-Type", "application/json"))
            .with_header(header("retry-after-ms", &latency.as_millis().to_string()))
            .with_header(header(
                "Retry-After",
                &latency.as_secs_f64().ceil().to_string(),
            ))
    } else {
        counts.most_in_flight.fetch_max(now, SeqCst);
        std::thread::sleep(latency);
        counts.answered.fetch_add(1, SeqCst);
        let body = r#"{"model":"m","choices":[{"message":{"role":"assistant","content":"ok"}}],"usage":{"prompt_tokens":10,"completion_tokens":2}}"#;
        tiny_http::Response::from_string(body)
            .with_header(header("Content-Type", "application/json"))
    };
    counts.in_flight.fetch_sub(1, SeqCst);
    let _ = request.respond(response);
}
