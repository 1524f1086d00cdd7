//! `report.html` opened in headless Chromium (Debian's `chromium`, which `.ci/run` installs), its
//! script's DOM read back with `--dump-dom`, and the cases of the reports the tests build. Shared
//! by the runtime's tests/report_html.rs (the page the fold writes) and the CLI's
//! tests/cli/report_page.rs (the page `report --compare` writes), which include this file by
//! path.

#![allow(dead_code)]

use proposal_eval::__internal::report::merge::merge;
use proposal_eval::__internal::report::Entry;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One case's entry, with every v2 field. `misses` are the strict evaluator's (empty: passed).
pub fn case(suite: &str, name: &str, score: f64, misses: &[&str]) -> Value {
    let passed = misses.is_empty();
    let diff = "--- expected (normalized)\n+++ actual (normalized)\n@@ -1,3 +1,3 @@\n {\n\
                -  \"newValue\": 120\n+  \"newValue\": \"<b id=injected>120</b></script>\"\n }\n";
    let rendered = if passed {
        String::new()
    } else {
        format!("  {}\n{diff}", misses.join("\n  "))
    };
    let mut evaluators = vec![json!({
        "evaluator": "strict", "score": score, "passed": passed,
        "summary": format!("{} mismatch(es)", misses.len()),
        "misses": misses, "rendered": rendered,
        "fields": [{"path": "invoice.total", "hit": passed}, {"path": "invoice.iban", "hit": true}],
    })];
    if suite == "refunds" {
        evaluators.push(json!({
            "evaluator": "trajectory", "score": score, "passed": passed,
            "summary": if passed { "3 of 3 steps" } else { "1 of 3 steps" },
            "alignment": [
                {"step": {"tool": "lookup_invoice"}, "call": 0, "status": "matched", "mismatches": []},
                {"step": {"tool": "refund", "args": {"amount": 120}}, "call": if passed { json!(1) } else { json!(null) },
                 "status": if passed { "matched" } else { "missing" }, "mismatches": []},
                {"step": null, "call": if passed { json!(null) } else { json!(1) },
                 "status": if passed { "matched" } else { "forbidden" },
                 "mismatches": if passed { json!([]) } else { json!(["delete_account is forbidden"]) }},
            ],
        }));
        evaluators.push(json!({
            "evaluator": "rubric", "score": if passed { 1.0 } else { 0.5 }, "passed": passed,
            "summary": "1 of 2 statements hold",
            "verdicts": [
                {"statement": "The reply names the invoice", "passed": true, "reason": "It says INV-7.", "advisory": false},
                {"statement": "The reply is polite", "passed": passed,
                 "reason": if passed { "It thanks the customer." } else { "It ends abruptly." }, "advisory": false},
            ],
        }));
        evaluators.push(json!({
            "evaluator": "checks", "score": if passed { 1.0 } else { 0.5 }, "passed": passed,
            "summary": if passed { "2 of 2 checks passed, score 1" } else { "1 of 2 checks passed, score 0.50" },
            "misses": if passed { json!([]) } else { json!(["reply: contains \"INV-7\": actual \"Done.\""]) },
        }));
    }
    if name == "full" {
        evaluators.push(json!({
            "evaluator": "budget", "score": 1.0, "passed": true,
            "summary": "1 of 1 limits kept: 2 call(s), 300 tokens, $0.000100, 12 ms",
        }));
    }
    json!({
        "package": "demo", "binary": "evals", "suite": suite, "suite_dir": format!("fixtures/{suite}"),
        "case": name, "test": format!("{suite}::{name}"),
        "fixture": format!("/work/demo/fixtures/{suite}/{name}.json"),
        "description": format!("the {name} case"),
        "passed": passed, "score": score, "recording": "replayed",
        "evaluators": evaluators,
        "failure": null,
        "usage": {"calls": 2, "input_tokens": 1200, "output_tokens": 300, "latency_ms": 406.25, "cost_usd": 0.0006},
        "trajectory": if suite == "refunds" {
            json!([{"tool": "lookup_invoice", "args": {"id": "INV-7"}, "response": 0}, {"tool": "delete_account", "args": {"id": 7}, "response": 0}])
        } else { json!(null) },
        "input": {"message": format!("Please look at {name}"), "customer": {"id": 7}},
        "output": {"action": "refund", "amount": if passed { json!(120) } else { json!("120") }},
        "calls": [
            {"kind": "complete", "model": "gpt-4o-mini", "input_tokens": 800, "output_tokens": 200, "latency_ms": 300.5, "cost_usd": 0.0004},
            {"kind": "judge", "model": "judge-model", "input_tokens": 400, "output_tokens": 100, "latency_ms": 105.75, "cost_usd": 0.0002},
        ],
        "recording_path": format!("fixtures/{suite}/recordings/{name}.json"),
        "run": "run-1",
        "finished_at": "2025-01-15T10:00:00Z",
    })
}

/// The journal of one run under `dir/name` holding these cases, one entry a line as a test run
/// writes them.
pub fn journal(dir: &Path, name: &str, cases: &[Value]) -> PathBuf {
    let journal = dir.join(name).join("runs/r/journal.jsonl");
    std::fs::create_dir_all(journal.parent().unwrap()).unwrap();
    let lines: String = cases
        .iter()
        .map(|c| {
            let entry: Entry = serde_json::from_value(c.clone()).expect("an entry");
            serde_json::to_string(&entry).unwrap() + "\n"
        })
        .collect();
    std::fs::write(&journal, lines).unwrap();
    journal
}

/// The report folder (`report.json`, `report.html`) of these cases, written as the journal of
/// one run under `dir/name` and folded.
pub fn folded(dir: &Path, name: &str, cases: &[Value]) -> PathBuf {
    let journal = journal(dir, name, cases);
    let out = dir.join(name).join("out");
    merge(&[journal], &out).unwrap();
    out
}

/// The page's URL in the report folder `out`.
pub fn page_url(out: &Path) -> String {
    format!("file://{}", out.join("report.html").display())
}

pub fn chromium() -> Option<PathBuf> {
    let found = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file());
    if found.is_none() {
        eprintln!(
            "skipped: no Chromium at /usr/bin/chromium (install it with `apt-get install chromium`; .ci/run does)"
        );
    }
    found
}

/// The DOM after load, as Chromium serializes it, up to the embedded data (the page's markup
/// only: the data and the script follow it).
pub fn dump_dom(chromium: &Path, url: &str) -> String {
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    // Read while it runs: a DOM larger than the pipe's buffer would stop it otherwise.
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut bytes).map(|_| bytes)
    });
    let deadline = Instant::now() + Duration::from_secs(90);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("chromium did not finish within 90 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let bytes = reader.join().unwrap().unwrap();
    let dom = String::from_utf8_lossy(&bytes).into_owned();
    assert!(
        dom.contains("data-rendered=\"true\""),
        "the page's script did not finish:\n{dom}"
    );
    let end = dom
        .find("<script type=\"application/json\"")
        .expect("the embedded data");
    dom[..end].to_string()
}

/// The text between `<tag id="ID"…>` and the next `<`.
pub fn text_of(dom: &str, id: &str) -> String {
    let at = dom
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id} in the DOM:\n{dom}"));
    let rest = &dom[at..];
    let start = rest.find('>').unwrap() + 1;
    let end = rest[start..].find('<').unwrap();
    rest[start..start + end].to_string()
}

/// The markup from `from` to the next `to`.
pub fn between<'a>(dom: &'a str, from: &str, to: &str) -> &'a str {
    let start = dom
        .find(from)
        .unwrap_or_else(|| panic!("no {from} in the DOM:\n{dom}"));
    let end = dom[start..].find(to).map_or(dom.len(), |e| start + e);
    &dom[start..end]
}

/// The test names of the case rows, in order.
pub fn rows(dom: &str) -> Vec<String> {
    between(dom, "<tbody id=\"rows\">", "</tbody>")
        .split("<tr data-test=\"")
        .skip(1)
        .map(|row| row[..row.find('"').unwrap()].to_string())
        .collect()
}
