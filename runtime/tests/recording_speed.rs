//! Recording against a rate-limited upstream, through a harness run as a user's test binary
//! (DESIGN section 16): the shared limit on live calls halves on a 429 in one process and the
//! next process of the same run starts from it and grows it back; the 429's `Retry-After` is
//! waited out before the call is sent again; on a terminal the status line says how the
//! recording goes.
//!
//! The binary is its own child (as `repeats` is): the parent writes a suite in a temporary crate,
//! copies this binary into its `target/debug/deps/`, and runs it there with `SPEED_CHILD=1`; the
//! children of one parent are one run (`cargo test` is the parent of the binaries of one run),
//! so they share the limit. The upstream is the parent's, on 127.0.0.1: it answers the first
//! request 429 with `Retry-After: 1`, and every other request after a fixed delay.

use proposal_eval::{Case, Harness, Llm};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const CASES: usize = 8;

fn agent(_case: &Case, llm: &mut Llm) -> proposal_eval::Result<Value> {
    let base = llm.base_url()?;
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut response = agent
        .post(&format!("{base}/chat/completions"))
        .header("Content-Type", "application/json")
        .send(json!({"model": "m", "messages": []}).to_string())?;
    let body: Value = serde_json::from_str(&response.body_mut().read_to_string()?)?;
    Ok(json!({ "answer": body["answer"] }))
}

fn child() -> std::process::ExitCode {
    Harness::new("suite").run(agent)
}

/// What the upstream saw.
#[derive(Default)]
struct Seen {
    requests: AtomicUsize,
    in_flight: AtomicUsize,
    most_in_flight: AtomicUsize,
    /// Milliseconds after the upstream started: when the 429 went out, when the next came in.
    refused_at: Mutex<Option<Duration>>,
    next_at: Mutex<Option<Duration>>,
    delay_ms: AtomicU64,
}

/// A bounded upstream: serves at most `limit` requests, each on its own thread.
fn upstream(limit: usize) -> (String, Arc<Seen>) {
    let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
    let url = format!(
        "http://127.0.0.1:{}",
        server.server_addr().to_ip().unwrap().port()
    );
    let seen = Arc::new(Seen::default());
    seen.delay_ms.store(100, SeqCst);
    let started = Instant::now();
    let shared = seen.clone();
    std::thread::spawn(move || {
        for request in server.incoming_requests().take(limit) {
            let seen = shared.clone();
            std::thread::spawn(move || {
                let n = seen.requests.fetch_add(1, SeqCst);
                if n == 1 {
                    *seen.next_at.lock().unwrap() = Some(started.elapsed());
                }
                let now = seen.in_flight.fetch_add(1, SeqCst) + 1;
                seen.most_in_flight.fetch_max(now, SeqCst);
                let json =
                    tiny_http::Header::from_bytes(&b"Content-Type"[..], &b"application/json"[..])
                        .unwrap();
                let response = if n == 0 {
                    *seen.refused_at.lock().unwrap() = Some(started.elapsed());
                    let after =
                        tiny_http::Header::from_bytes(&b"Retry-After"[..], &b"1"[..]).unwrap();
                    tiny_http::Response::from_string(r#"{"error":{"message":"slow down"}}"#)
                        .with_status_code(429)
                        .with_header(json)
                        .with_header(after)
                } else {
                    std::thread::sleep(Duration::from_millis(seen.delay_ms.load(SeqCst)));
                    tiny_http::Response::from_string(json!({"answer": "ok", "usage": {"prompt_tokens": 10, "completion_tokens": 5}}).to_string())
                        .with_header(json)
                };
                seen.in_flight.fetch_sub(1, SeqCst);
                let _ = request.respond(response);
            });
        }
    });
    (url, seen)
}

struct Crate {
    _dir: tempfile::TempDir,
    root: PathBuf,
    exe: PathBuf,
}

impl Crate {
    fn new() -> Crate {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        for n in 0..CASES {
            write(
                &root.join(format!("suite/c{n}.json")),
                &json!({ "input": { "n": n }, "expected": { "answer": "ok" } }).to_string(),
            );
        }
        write(
            &root.join("Cargo.toml"),
            "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        );
        write(&root.join("tests/speed.rs"), "");
        let deps = root.join("target/debug/deps");
        std::fs::create_dir_all(&deps).unwrap();
        let exe = deps.join(format!(
            "speed-0123456789abcdef{}",
            std::env::consts::EXE_SUFFIX
        ));
        std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
        Crate {
            _dir: dir,
            root,
            exe,
        }
    }

    fn command(&self, upstream: &str, args: &[&str]) -> Command {
        let mut command = Command::new(&self.exe);
        command
            .args(args)
            .current_dir(&self.root)
            .env("SPEED_CHILD", "1")
            .env("CARGO_MANIFEST_DIR", &self.root)
            .env("CARGO_PKG_NAME", "demo")
            .env("NO_COLOR", "1")
            .env("PROPOSAL_EVAL_RECORD", "1")
            .env("PROPOSAL_EVAL_UPSTREAM", upstream);
        for variable in [
            "RECORD",
            "CARGO_TARGET_DIR",
            "NEXTEST_RUN_ID",
            "RUST_TEST_THREADS",
            "PROPOSAL_EVAL_MAX_CONCURRENCY",
        ] {
            command.env_remove(variable);
        }
        command
    }

    fn run(&self, upstream: &str, args: &[&str]) -> String {
        let out = self.command(upstream, args).output().unwrap();
        let text = format!(
            "--- stdout\n{}\n--- stderr\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{text}");
        text
    }

    /// The run's shared limit: `<limit> <streak> <epoch> <resume_at_ms>`.
    fn limit_state(&self) -> Vec<u64> {
        let dir = self.root.join("target/proposal-eval/rate-limit");
        let state = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(Result::ok)
            .find(|e| e.file_name().to_string_lossy().ends_with(".state"))
            .unwrap_or_else(|| panic!("no state file in {}", dir.display()));
        std::fs::read_to_string(state.path())
            .unwrap()
            .split_whitespace()
            .map(|n| n.parse().unwrap())
            .collect()
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn parent() {
    let krate = Crate::new();
    // Two processes and one terminal run: 2 + 8 + 8 requests.
    let (url, seen) = upstream(2 + 2 * CASES);

    // The first process records one case: refused once, it waits the second asked for, then
    // is answered. The limit of the run is halved (default 8: to 4).
    let text = krate.run(&url, &["suite::c0", "--exact"]);
    assert!(text.contains("test suite::c0 ... ok"), "{text}");
    assert_eq!(seen.requests.load(SeqCst), 2, "{text}");
    let refused = seen.refused_at.lock().unwrap().unwrap();
    let next = seen.next_at.lock().unwrap().unwrap();
    assert!(
        next >= refused + Duration::from_millis(950),
        "Retry-After: 1 was not waited out: refused at {refused:?}, sent again at {next:?}"
    );
    let recording: Value = serde_json::from_str(
        &std::fs::read_to_string(krate.root.join("suite/recordings/c0.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        recording["interactions"][0]["http"]["status"], 200,
        "{recording:#}"
    );
    assert_eq!(krate.limit_state()[..3], [4, 1, 1]);

    // The second process of the run records all 8 cases on 8 threads: it starts at the halved
    // limit, 4 at once (with the first process's one success counted), grows by one after the
    // run of 4 successes is complete (to 5), and by one again after 5 more (to 6).
    seen.most_in_flight.store(0, SeqCst);
    let text = krate.run(&url, &[]);
    assert!(text.contains("test result: ok. 8 passed"), "{text}");
    let most = seen.most_in_flight.load(SeqCst);
    assert!((2..=6).contains(&most), "{most} calls at once:\n{text}");
    assert_eq!(krate.limit_state()[..2], [6, 0]);

    terminal(&krate, &url, &seen);
}

/// On a pseudo-terminal, the status line: cases done of total, calls in flight, tokens, cost.
#[cfg(unix)]
fn terminal(krate: &Crate, url: &str, seen: &Seen) {
    seen.delay_ms.store(400, SeqCst);
    let mut command = krate.command(url, &[]);
    command.env_remove("NO_COLOR");
    let mut p = rexpect::session::spawn_command(command, Some(30_000)).unwrap();
    p.exp_string("recording: ").unwrap();
    p.exp_string("/8 cases, ").unwrap();
    p.exp_string(" call(s) in flight, ").unwrap();
    p.exp_string(" tokens, cost unknown (no [pricing] for the model)")
        .unwrap();
    p.exp_string(". 8 passed; 0 failed").unwrap();
    p.exp_eof().unwrap();
}

#[cfg(not(unix))]
fn terminal(_: &Crate, _: &str, _: &Seen) {}

fn main() -> std::process::ExitCode {
    if std::env::var_os("SPEED_CHILD").is_some() {
        return child();
    }
    // `cargo test` passes libtest's arguments; a filter that is not ours skips the test.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    if args
        .iter()
        .any(|a| !"rate_limit_shared_by_the_run".contains(a.as_str()))
    {
        return std::process::ExitCode::SUCCESS;
    }
    parent();
    println!("test rate_limit_shared_by_the_run ... ok");
    std::process::ExitCode::SUCCESS
}
