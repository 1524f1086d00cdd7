//! Recording N cases against a local upstream whose calls take L each, at
//! `PROPOSAL_EVAL_MAX_CONCURRENCY` = C: wall time against the floor N·L/C (DESIGN section 16:
//! within 1.15×); and against an upstream that answers 429 with `Retry-After` (L) to a request
//! that finds more than K in flight, where the floor is N·L/K (target: within 1.3×), with the
//! count of 429s seen.
//!
//! Each case is recorded as a test records it (`proposal_eval::__internal::case_run`: the fixture
//! read, the call through `llm.base_url()` with a ureq client, the recording written), C cases
//! at a time as the harness runs them while recording (on C threads).
//!
//! `cargo bench -p recording-speed-bench` (N, L, C, K: `RECORDING_BENCH_N`, `_LATENCY_MS`, `_C`,
//! `_K`; defaults 200, 100, 8, 4).

use proposal_eval::__internal::case_run::OpenSuite;
use proposal_eval::{Case, Llm};
use recording_speed_bench::Upstream;
use serde_json::{json, Value};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn var(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn agent(case: &Case, llm: &mut Llm) -> proposal_eval::Result<Value> {
    let base = llm.base_url()?;
    let client: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut response = client
        .post(&format!("{base}/chat/completions"))
        .header("Content-Type", "application/json")
        .send(
            json!({"model": "m", "messages": [{"role": "user", "content": case.input["n"]}]})
                .to_string(),
        )?;
    let body: Value = serde_json::from_str(&response.body_mut().read_to_string()?)?;
    Ok(json!({ "answer": body["choices"][0]["message"]["content"] }))
}

/// Records the `n` cases of a new suite against `upstream`, `threads` at a time; the wall time.
fn record(upstream: &str, n: usize, threads: usize) -> Duration {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let suite_dir = dir.path().join("suite");
    std::fs::create_dir_all(&suite_dir).expect("the suite folder");
    std::fs::write(
        suite_dir.join("proposal-eval.toml"),
        format!("[http]\nupstream = \"{upstream}\"\n"),
    )
    .expect("the config");
    for i in 0..n {
        let fixture = json!({ "input": { "n": i }, "expected": { "answer": "ok" } });
        std::fs::write(suite_dir.join(format!("c{i:05}.json")), fixture.to_string())
            .expect("a fixture");
    }
    let suite = Arc::new(OpenSuite::open(dir.path(), Path::new("suite")));
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let workers: Vec<_> = (0..threads)
        .map(|_| {
            let (suite, next) = (suite.clone(), next.clone());
            std::thread::spawn(move || loop {
                let i = next.fetch_add(1, SeqCst);
                if i >= n {
                    return;
                }
                if let Err(failure) = suite.run(&format!("c{i:05}.json"), agent) {
                    panic!("case c{i:05} failed: {failure}");
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().expect("a worker");
    }
    let took = started.elapsed();
    assert!(
        suite_dir.join("recordings/c00000.json").is_file(),
        "the cases were recorded"
    );
    took
}

fn main() {
    let n = var("RECORDING_BENCH_N", 200) as usize;
    let latency = Duration::from_millis(var("RECORDING_BENCH_LATENCY_MS", 100));
    let c = var("RECORDING_BENCH_C", 8) as usize;
    let k = var("RECORDING_BENCH_K", 4) as usize;
    // Read by the runtime once, on the first case: every case here records.
    std::env::set_var("PROPOSAL_EVAL_RECORD", "1");
    std::env::set_var("PROPOSAL_EVAL_MAX_CONCURRENCY", c.to_string());

    let plain = Upstream::start(latency, None);
    let took = record(&plain.url, n, c);
    let floor = latency.mul_f64(n as f64 / c as f64);
    println!(
        "fixed latency: {n} cases, L = {latency:?}, C = {c}: {took:.2?} against the floor {floor:.2?} ({:.3}x; target 1.15x); at most {} in flight",
        took.as_secs_f64() / floor.as_secs_f64(),
        plain.counts.most_in_flight.load(SeqCst)
    );

    let limited = Upstream::start(latency, Some(k));
    let took = record(&limited.url, n, c);
    let floor = latency.mul_f64(n as f64 / k as f64);
    println!(
        "429 above {k} in flight: {n} cases, L = {latency:?}, C = {c}: {took:.2?} against the floor {floor:.2?} ({:.3}x; target 1.3x); {} 429s seen, at most {} answered at once",
        took.as_secs_f64() / floor.as_secs_f64(),
        limited.counts.refused.load(SeqCst),
        limited.counts.most_in_flight.load(SeqCst)
    );
}
