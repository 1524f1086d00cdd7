//! Recording N cases against a local upstream, each case as a test records it
//! (`proposal_eval::__internal::case_run`: the fixture read, the call through `llm.base_url()`
//! with a ureq client, the recording written), C cases at a time as the harness runs them while
//! recording (on C threads); wall time against the floor (DESIGN sections 16 and 20):
//!
//! - `fixed-8`, `fixed-16`: calls of L = 100 ms at C = 8 and 16, N = 10·C cases: the floor
//!   N·L/C is 1 s, where fixed costs show (targets 1.15x and 1.25x);
//! - `limited`: an upstream that takes 4 calls in flight and answers 429 with `Retry-After: 1`
//!   beyond, 60 calls of 200 ms at C = 8: the floor N·L/4 is 3 s (target 1.3x);
//! - `headers`: an upstream that takes 20 calls a second, told in OpenAI's
//!   `x-ratelimit-remaining-requests` / `x-ratelimit-reset-requests`, with a 429 and
//!   `Retry-After: 1` beyond: 60 calls of 200 ms at C = 8, the floor again 3 s (the rate of 4
//!   calls of 200 ms at once; target 1.3x).
//!
//! Each shape runs in a process of its own (this binary again, `RECORDING_BENCH_SHAPE`), as a run
//! of its own (its own shared rate-limit state); `RECORDING_BENCH_ROUNDS` rounds (default 3) of
//! every shape one after another, so that the shapes of a round meet the same load on the
//! machine. Each round's ratios are printed, then each shape's median and worst.
//!
//! `cargo bench -p recording-speed-bench` (`RECORDING_BENCH_SHAPES=limited,headers` for some).

use proposal_eval::__internal::case_run::OpenSuite;
use proposal_eval::{Case, Llm};
use recording_speed_bench::{Limit, Upstream};
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

/// One shape: the upstream's latency and limit, the cases, the threads, the floor.
struct Shape {
    name: &'static str,
    latency: Duration,
    limit: Limit,
    n: usize,
    c: usize,
    floor: Duration,
}

fn shapes() -> Vec<Shape> {
    let ms = Duration::from_millis;
    let fixed = |name, c: usize| Shape {
        name,
        latency: ms(100),
        limit: Limit::None,
        n: 10 * c,
        c,
        floor: Duration::from_secs(1),
    };
    vec![
        fixed("fixed-8", 8),
        fixed("fixed-16", 16),
        Shape {
            name: "limited",
            latency: ms(200),
            limit: Limit::InFlight {
                above: 4,
                retry_after_s: 1,
                retry_after_ms: None,
            },
            n: 60,
            c: 8,
            floor: ms(3000),
        },
        Shape {
            name: "headers",
            latency: ms(200),
            limit: Limit::PerSecond { per_second: 20 },
            n: 60,
            c: 8,
            floor: ms(3000),
        },
    ]
}

/// In the shape's own process: records its cases and prints `<seconds> <429s> <most in flight>`.
fn run_shape(shape: &Shape) {
    // Read by the runtime once, on the first case: every case here records.
    std::env::set_var("PROPOSAL_EVAL_RECORD", "1");
    std::env::set_var("PROPOSAL_EVAL_MAX_CONCURRENCY", shape.c.to_string());
    let upstream = Upstream::start(shape.latency, shape.limit);
    let took = record(&upstream.url, shape.n, shape.c);
    println!(
        "{} {} {}",
        took.as_secs_f64(),
        upstream.counts.refused.load(SeqCst),
        upstream.counts.most_in_flight.load(SeqCst)
    );
}

fn main() {
    let all = shapes();
    if let Ok(name) = std::env::var("RECORDING_BENCH_SHAPE") {
        let shape = all.iter().find(|s| s.name == name).expect("a known shape");
        return run_shape(shape);
    }
    let chosen = std::env::var("RECORDING_BENCH_SHAPES").ok();
    let shapes: Vec<&Shape> = all
        .iter()
        .filter(|s| {
            chosen
                .as_deref()
                .is_none_or(|c| c.split(',').any(|n| n == s.name))
        })
        .collect();
    let rounds = var("RECORDING_BENCH_ROUNDS", 3);
    let exe = std::env::current_exe().expect("this binary");
    let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); shapes.len()];
    for round in 1..=rounds {
        for (i, shape) in shapes.iter().enumerate() {
            let out = std::process::Command::new(&exe)
                .env("RECORDING_BENCH_SHAPE", shape.name)
                // A run of its own: the shared rate limit starts afresh.
                .env(
                    "NEXTEST_RUN_ID",
                    format!("bench-{}-{round}-{}", std::process::id(), shape.name),
                )
                .output()
                .expect("the shape's process");
            assert!(
                out.status.success(),
                "{}: {}",
                shape.name,
                String::from_utf8_lossy(&out.stderr)
            );
            let text = String::from_utf8_lossy(&out.stdout);
            let line = text.lines().last().unwrap_or("");
            let fields: Vec<f64> = line
                .split_whitespace()
                .filter_map(|f| f.parse().ok())
                .collect();
            let [took, refused, most] = fields[..] else {
                panic!("{}: {text}", shape.name)
            };
            let ratio = took / shape.floor.as_secs_f64();
            ratios[i].push(ratio);
            println!(
                "round {round}: {:<8} N = {:>3}, L = {:?}, C = {:>2}: {took:.2} s against {:.2} s: {ratio:.3}x; {refused} 429s, at most {most} answered at once",
                shape.name,
                shape.n,
                shape.latency,
                shape.c,
                shape.floor.as_secs_f64()
            );
        }
    }
    for (shape, ratios) in shapes.iter().zip(&mut ratios) {
        ratios.sort_by(f64::total_cmp);
        println!(
            "{:<8} median {:.3}x, worst {:.3}x over {} round(s)",
            shape.name,
            ratios[ratios.len() / 2],
            ratios[ratios.len() - 1],
            ratios.len()
        );
    }
}
