//! Recording against a rate-limited and faulty upstream, through a harness run as a user's test
//! binary (DESIGN sections 16 and 20): the 429's `Retry-After` is waited out before the call is
//! sent again, and the next process of the run starts from the shared state; a process takes
//! whichever live-call place is free while another run's process holds one with a call that
//! hangs, and its waiting note names the holders truly; on a terminal the status line counts the
//! cases the filters select and never shares a line with libtest's; an upstream's error answer
//! is told in the case's failure (method, URL, status, body; the resends and waits), and such a
//! case is `not recorded` in report.json and JUnit.
//!
//! The binary is its own child (as `repeats` is): the parent writes suites in a temporary crate,
//! copies this binary into its `target/debug/deps/`, and runs it there with `SPEED_CHILD=1`; the
//! children of one parent are one run (`cargo test` is the parent of the binaries of one run),
//! so they share the limit. The upstream is the parent's, on 127.0.0.1; what it answers depends
//! on the case (its input's `mode`).

use proposal_eval::{Case, Harness, Llm};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const CASES: usize = 8;

/// One call to the upstream, with the case's `mode` as the message. A `strict` case's client
/// turns an error status into an error that says only the status (ureq's `http status: 500`),
/// as many clients do.
fn agent(case: &Case, llm: &mut Llm) -> proposal_eval::Result<Value> {
    let base = llm.base_url()?;
    let strict = case.input["strict"] == true;
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(strict)
        .build()
        .into();
    let mode = case.input["mode"].as_str().unwrap_or("ok");
    let mut response = agent
        .post(&format!("{base}/chat/completions"))
        .header("Content-Type", "application/json")
        .send(json!({"model": "m", "messages": [{"role": "user", "content": mode}]}).to_string())?;
    let body: Value = serde_json::from_str(&response.body_mut().read_to_string()?)?;
    Ok(json!({ "answer": body["answer"] }))
}

fn child() -> std::process::ExitCode {
    let suite = std::env::var("SPEED_SUITE").unwrap_or_else(|_| "suite".into());
    Harness::new(&suite).run(agent)
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
    /// Calls of mode `hang` that have come in.
    hanging: AtomicUsize,
}

/// The key an error answer echoes: the case's failure must not show it.
const ECHOED_KEY: &str = "sk-proj-0f1e2d3c4b5a69788796a5b4c3d2e1f0";

/// The upstream. By the message: `ok` (the first of these ever is answered 429 with
/// `Retry-After: 1`, the others after `delay_ms`), `fail500` (500 with a body), `always429`
/// (429 with `retry-after-ms: 100`), `hang` (no answer for 20 s).
fn upstream() -> (String, Arc<Seen>) {
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
        // Bounded: no phase of the test makes more.
        for mut request in server.incoming_requests().take(200) {
            let seen = shared.clone();
            std::thread::spawn(move || {
                let mut body = String::new();
                let _ = request.as_reader().read_to_string(&mut body);
                let body: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
                let mode = body["messages"][0]["content"].as_str().unwrap_or("ok");
                let header = |name: &str, value: &str| {
                    tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()).unwrap()
                };
                let json = header("Content-Type", "application/json");
                let response = match mode {
                    "fail500" => tiny_http::Response::from_string(format!(
                        "{{\"error\": {{\"message\": \"the model exploded\", \"key\": \"{ECHOED_KEY}\"}}}}"
                    ))
                    .with_status_code(500)
                    .with_header(json),
                    "always429" => tiny_http::Response::from_string(
                        r#"{"error":{"message":"slow down"}}"#,
                    )
                    .with_status_code(429)
                    .with_header(json)
                    .with_header(header("retry-after-ms", "100")),
                    "hang" => {
                        seen.hanging.fetch_add(1, SeqCst);
                        std::thread::sleep(Duration::from_secs(20));
                        tiny_http::Response::from_string("{}").with_header(json)
                    }
                    _ => {
                        let n = seen.requests.fetch_add(1, SeqCst);
                        if n == 1 {
                            *seen.next_at.lock().unwrap() = Some(started.elapsed());
                        }
                        let now = seen.in_flight.fetch_add(1, SeqCst) + 1;
                        seen.most_in_flight.fetch_max(now, SeqCst);
                        let response = if n == 0 {
                            *seen.refused_at.lock().unwrap() = Some(started.elapsed());
                            tiny_http::Response::from_string(r#"{"error":{"message":"slow down"}}"#)
                                .with_status_code(429)
                                .with_header(json)
                                .with_header(header("Retry-After", "1"))
                        } else {
                            std::thread::sleep(Duration::from_millis(seen.delay_ms.load(SeqCst)));
                            tiny_http::Response::from_string(json!({"answer": "ok", "usage": {"prompt_tokens": 10, "completion_tokens": 5}}).to_string())
                                .with_header(json)
                        };
                        seen.in_flight.fetch_sub(1, SeqCst);
                        response
                    }
                };
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
        let fixture = |suite: &str, name: &str, input: Value| {
            write(
                &root.join(format!("{suite}/{name}.json")),
                &json!({ "input": input, "expected": { "answer": "ok" } }).to_string(),
            );
        };
        for n in 0..CASES {
            fixture("suite", &format!("c{n}"), json!({ "n": n }));
            fixture("fair", &format!("f{n}"), json!({ "n": n }));
        }
        fixture("hang", "h0", json!({ "mode": "hang" }));
        fixture(
            "faults",
            "fail500",
            json!({ "mode": "fail500", "strict": true }),
        );
        fixture(
            "faults",
            "always429",
            json!({ "mode": "always429", "strict": true }),
        );
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
        let (ok, text) = self.output(self.command(upstream, args));
        assert!(ok, "{text}");
        text
    }

    fn output(&self, mut command: Command) -> (bool, String) {
        let out = command.output().unwrap();
        let text = format!(
            "--- stdout\n{}\n--- stderr\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), text)
    }

    /// The run's shared limit: `<limit> <streak> <ceiling> <probe_at> <resume_at> <pace>
    /// <next_start> <served>`, from `runs/<run>/rate-limit.state` (the one run of this suite's folder).
    fn limit_state(&self) -> Vec<u64> {
        let runs = self.root.join("target/proposal-eval/runs");
        let state = std::fs::read_dir(&runs)
            .unwrap_or_else(|e| panic!("{}: {e}", runs.display()))
            .filter_map(Result::ok)
            .map(|run| run.path().join("rate-limit.state"))
            .find(|state| state.is_file())
            .unwrap_or_else(|| panic!("no rate-limit.state in a run of {}", runs.display()));
        std::fs::read_to_string(&state)
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
    let (url, seen) = upstream();

    // The first process records one case: refused once, it waits the second asked for, then
    // is answered. Refused alone, the call finds no ceiling: the limit of the run stays 8.
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
    assert_eq!(krate.limit_state()[..3], [8, 0, 0]);

    // The second process of the run records all 8 cases on 8 threads, 8 at once.
    seen.most_in_flight.store(0, SeqCst);
    let text = krate.run(&url, &[]);
    assert!(text.contains("test result: ok. 8 passed"), "{text}");
    let most = seen.most_in_flight.load(SeqCst);
    assert!((2..=8).contains(&most), "{most} calls at once:\n{text}");

    terminal(&krate, &url, &seen);
    fair_places(&krate, &url, &seen);
    faults(&krate, &url);
}

/// A process of another run holds a place with a call that hangs; with two places, this run's
/// process records its cases through the other place, and its waiting note names both holders.
fn fair_places(krate: &Crate, url: &str, seen: &Seen) {
    seen.delay_ms.store(150, SeqCst);
    let mut hung = krate.command(url, &[]);
    hung.env("SPEED_SUITE", "hang")
        .env("NEXTEST_RUN_ID", "another-run")
        .env("PROPOSAL_EVAL_MAX_CONCURRENCY", "2")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut hung = hung.spawn().unwrap();
    let since = Instant::now();
    while seen.hanging.load(SeqCst) == 0 {
        assert!(
            since.elapsed() < Duration::from_secs(20),
            "the call never came"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut command = krate.command(url, &[]);
    command
        .env("SPEED_SUITE", "fair")
        .env("PROPOSAL_EVAL_MAX_CONCURRENCY", "2")
        .env("PROPOSAL_EVAL_WAIT_NOTE_S", "0.05");
    let started = Instant::now();
    let child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let took = started.elapsed();
    let _ = hung.kill();
    let _ = hung.wait();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("test result: ok. 8 passed"), "{text}");
    // One place, 8 calls of 150 ms: about 1.2 s, far from the hung call's 20 s.
    assert!(took < Duration::from_secs(10), "{took:?}\n{text}");
    let note = text
        .lines()
        .find(|l| l.starts_with("note: waiting for a live model call place"))
        .unwrap_or_else(|| panic!("no waiting note:\n{text}"));
    let (mut a, mut b) = (hung.id(), pid);
    if a > b {
        std::mem::swap(&mut a, &mut b);
    }
    assert!(
        note.contains(&format!(
            "2 of the 2 places are held, by 2 process(es) (pids {a}, {b}); 1 by this run"
        )),
        "{note}"
    );
}

/// An upstream that answers 500 with a body, or 429 every time, to a client that reports only
/// the status: the case's failure says what the upstream answered, and the case is not recorded.
fn faults(krate: &Crate, url: &str) {
    let mut command = krate.command(url, &[]);
    command.env("SPEED_SUITE", "faults");
    let (ok, text) = krate.output(command);
    assert!(!ok, "{text}");
    assert!(text.contains("http status: 500"), "{text}");
    assert!(
        text.contains(&format!(
            "POST {url}/chat/completions answered 500 Internal Server Error: {{\"error\":{{\"key\":\"<redacted>\",\"message\":\"the model exploded\"}}}}"
        )),
        "{text}"
    );
    assert!(!text.contains(ECHOED_KEY), "{text}");
    assert!(
        text.contains(&format!(
            "POST {url}/chat/completions answered 429 Too Many Requests: {{\"error\":{{\"message\":\"slow down\"}}}} (sent 6 time(s): 5 resend(s) after refusals for the rate, "
        )),
        "{text}"
    );
    let waited: f64 = text
        .split("5 resend(s) after refusals for the rate, ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no wait said:\n{text}"));
    assert!((0.4..5.0).contains(&waited), "{waited} s\n{text}");
    assert!(!krate.root.join("faults/recordings").exists(), "{text}");

    // Neither case is `recorded`: report.json says `not_recorded`, in words `not recorded` (what
    // the page and JUnit write: cli/src/junit.rs, `a_case_not_recorded_says_so`).
    let report =
        proposal_eval::__internal::report::fold(&krate.root.join("target/proposal-eval")).unwrap();
    let json =
        std::fs::read_to_string(krate.root.join("target/proposal-eval/report.json")).unwrap();
    let json: Value = serde_json::from_str(&json).unwrap();
    let faults: Vec<&Value> = json["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["suite"] == "faults")
        .collect();
    assert_eq!(faults.len(), 2, "{json:#}");
    assert!(
        faults.iter().all(|c| c["recording"] == "not_recorded"),
        "{json:#}"
    );
    let words: Vec<&str> = report
        .cases
        .iter()
        .filter(|c| c.suite == "faults")
        .map(|c| c.recording.describe())
        .collect();
    assert_eq!(words, ["not recorded"; 2], "{json:#}");
}

/// On a pseudo-terminal, a filtered recording's status line: the cases the filters select
/// (7 of 8: `--skip` leaves one out), calls in flight, tokens, cost; and libtest's lines each on
/// a line of their own.
#[cfg(unix)]
fn terminal(krate: &Crate, url: &str, seen: &Seen) {
    seen.delay_ms.store(400, SeqCst);
    let mut command = krate.command(url, &["suite::c", "--skip", "suite::c7"]);
    command.env_remove("NO_COLOR");
    let mut p = rexpect::session::spawn_command(command, Some(30_000)).unwrap();
    let before = p.exp_string("recording: ").unwrap();
    let status = p
        .exp_string(" tokens, cost unknown (no [pricing] for the model)")
        .unwrap();
    assert!(status.contains("/7 cases, "), "{status}");
    assert!(status.contains(" call(s) in flight, "), "{status}");
    let rest = p.exp_string(". 7 passed; 0 failed").unwrap() + ". 7 passed; 0 failed";
    let rest = rest + &p.exp_eof().unwrap();
    // Every libtest line starts a line: after a line break or a carriage return and what
    // clears the line, never after the status line's text.
    let text = format!(
        "{before}recording: {status} tokens, cost unknown (no [pricing] for the model){rest}"
    );
    let csi = without_escapes(&text);
    for line in csi.split(['\n', '\r']) {
        if let Some(at) = line.find("test suite::") {
            assert_eq!(at, 0, "a libtest line shares a line: {line:?}\n{text:?}");
        }
    }
}

/// `text` without ANSI control sequences (`ESC [ ... letter`).
fn without_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            chars.next();
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
            continue;
        }
        out.push(c);
    }
    out
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
