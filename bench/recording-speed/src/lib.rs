//! A local upstream for the recording benchmark, in one of three shapes: every request answered
//! after a fixed latency; a limit on requests in flight, above which a request is answered at
//! once with a 429 and a `Retry-After`; or a limit on requests per one-second window, told in
//! OpenAI's rate-limit headers (`x-ratelimit-remaining-requests`, `x-ratelimit-reset-requests`)
//! on every answer, with a 429 and `Retry-After: 1` beyond it.

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How the upstream limits its callers.
#[derive(Clone, Copy, Debug)]
pub enum Limit {
    /// None: every request is answered after the latency.
    None,
    /// A request that finds more than `above` in flight is answered 429 with `Retry-After`
    /// (whole seconds) and, when `retry_after_ms` is set, `retry-after-ms`.
    InFlight {
        /// Requests answered at once.
        above: usize,
        /// `Retry-After`, in seconds.
        retry_after_s: u64,
        /// Also `retry-after-ms`, in milliseconds.
        retry_after_ms: Option<u64>,
    },
    /// At most `per_second` requests per one-second window (from the upstream's start), counted
    /// as they come in; every answer tells what remains of the window when it goes out and when
    /// the window resets, OpenAI's way; a request beyond is answered 429 with `Retry-After: 1`.
    PerSecond {
        /// Requests per window.
        per_second: usize,
    },
}

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
    /// The current window (by its number since the start) and the requests counted in it.
    window: Mutex<(u64, usize)>,
}

/// A running upstream on 127.0.0.1; it stops with the process.
pub struct Upstream {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// What it saw.
    pub counts: Arc<Counts>,
}

impl Upstream {
    /// Answers after `latency`, within `limit`.
    pub fn start(latency: Duration, limit: Limit) -> Upstream {
        let server = tiny_http::Server::http("127.0.0.1:0").expect("a loopback port");
        let url = format!(
            "http://127.0.0.1:{}",
            server.server_addr().to_ip().expect("a TCP port").port()
        );
        let counts = Arc::new(Counts::default());
        let shared = counts.clone();
        let started = Instant::now();
        std::thread::spawn(move || {
            for request in server.incoming_requests() {
                let counts = shared.clone();
                std::thread::spawn(move || answer(request, &counts, latency, limit, started));
            }
        });
        Upstream { url, counts }
    }
}

fn header(name: &str, value: &str) -> tiny_http::Header {
    tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("a valid header")
}

fn refusal(counts: &Counts) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    counts.refused.fetch_add(1, SeqCst);
    tiny_http::Response::from_string(r#"{"error":{"message":"rate limited"}}"#)
        .with_status_code(429)
        .with_header(header("Content-Type", "application/json"))
}

fn answer(
    request: tiny_http::Request,
    counts: &Counts,
    latency: Duration,
    limit: Limit,
    started: Instant,
) {
    let now = counts.in_flight.fetch_add(1, SeqCst) + 1;
    let mut headers = Vec::new();
    let refused = match limit {
        Limit::None => None,
        Limit::InFlight {
            above,
            retry_after_s,
            retry_after_ms,
        } => (now > above).then(|| {
            let mut response =
                refusal(counts).with_header(header("Retry-After", &retry_after_s.to_string()));
            if let Some(ms) = retry_after_ms {
                response = response.with_header(header("retry-after-ms", &ms.to_string()));
            }
            response
        }),
        Limit::PerSecond { per_second } => {
            let elapsed = started.elapsed();
            let number = elapsed.as_secs();
            let mut window = counts.window.lock().expect("the window");
            if window.0 != number {
                *window = (number, 0);
            }
            window.1 += 1;
            let used = window.1;
            drop(window);
            (used > per_second).then(|| refusal(counts).with_header(header("Retry-After", "1")))
        }
    };
    let response = match refused {
        Some(refused) => refused,
        None => {
            counts.most_in_flight.fetch_max(now, SeqCst);
            std::thread::sleep(latency);
            if let Limit::PerSecond { per_second } = limit {
                // What is left when the answer goes out, and when the window resets.
                let elapsed = started.elapsed();
                let number = elapsed.as_secs();
                let used = {
                    let window = counts.window.lock().expect("the window");
                    if window.0 == number {
                        window.1
                    } else {
                        0
                    }
                };
                let reset = Duration::from_secs(number + 1).saturating_sub(elapsed);
                headers.push(header(
                    "x-ratelimit-limit-requests",
                    &per_second.to_string(),
                ));
                headers.push(header(
                    "x-ratelimit-remaining-requests",
                    &per_second.saturating_sub(used).to_string(),
                ));
                headers.push(header(
                    "x-ratelimit-reset-requests",
                    &format!("{}ms", reset.as_millis()),
                ));
            }
            counts.answered.fetch_add(1, SeqCst);
            let body = r#"{"model":"m","choices":[{"message":{"role":"assistant","content":"ok"}}],"usage":{"prompt_tokens":10,"completion_tokens":2}}"#;
            let mut response = tiny_http::Response::from_string(body)
                .with_header(header("Content-Type", "application/json"));
            for h in headers {
                response = response.with_header(h);
            }
            response
        }
    };
    counts.in_flight.fetch_sub(1, SeqCst);
    let _ = request.respond(response);
}
