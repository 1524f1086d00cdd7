//! The HTML run report as a person sees it: rendered by headless Chromium (Debian's `chromium`,
//! which `.ci/run` installs). Skipped, with a message, where there is no Chromium.

use proposal_eval::__internal::recording::usage::UsageTotals;
use proposal_eval::__internal::report::RecordingUse;
use proposal_eval::__internal::report::{rebuild, Entry, EvaluatorEntry, FieldEntry};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn entry(dir: &Path, case: &str, score: f64, rendered: &str) -> Entry {
    let fixture = dir.join("suite").join(format!("{case}.json"));
    std::fs::create_dir_all(fixture.parent().unwrap()).unwrap();
    std::fs::write(&fixture, "{}").unwrap();
    let passed = score >= 1.0;
    Entry {
        package: "demo".into(),
        binary: "evals".into(),
        suite: "payments".into(),
        suite_dir: "fixtures/payments".into(),
        case: case.into(),
        test: format!("payments::{case}"),
        fixture,
        description: Some(format!("the {case} case")),
        passed,
        score: Some(score),
        recording: RecordingUse::Replayed,
        evaluators: vec![EvaluatorEntry {
            evaluator: "strict".into(),
            score,
            passed,
            summary: if passed {
                "0 mismatch(es)"
            } else {
                "1 mismatch(es)"
            }
            .into(),
            misses: if passed {
                vec![]
            } else {
                vec!["[0].newValue: values differ: expected 120, actual \"120\"".into()]
            },
            fields: vec![FieldEntry {
                path: "invoice.total".into(),
                hit: passed,
            }],
            rendered: rendered.into(),
            verdicts: Vec::new(),
            alignment: None,
        }],
        failure: None,
        run: Some("run-1".into()),
        usage: Some(UsageTotals {
            calls: 2,
            input_tokens: 1200,
            output_tokens: 300,
            latency_ms: 406.25,
            cost_usd: Some(0.0006),
            unpriced_calls: 0,
        }),
        trajectory: None,
        samples: None,
        input: None,
        output: None,
        calls: Vec::new(),
        recording_path: None,
        finished_at: "2025-01-15T10:00:00Z".parse().unwrap(),
        older: false,
    }
}

#[test]
fn tokens_latency_and_cost_per_case_and_suite() {
    let dir = tempfile::tempdir().unwrap();
    let html = std::fs::read_to_string(build(dir.path())).unwrap();
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("target/proposal-eval/report.json")).unwrap(),
    )
    .unwrap();
    let case = "2 calls, 1200 in / 300 out tokens, 406.2 ms, $0.0006";
    assert_eq!(html.matches(case).count(), 3, "one per case row:\n{html}");
    let suite = "6 calls, 3600 in / 900 out tokens, 1218.8 ms, $0.0018";
    // The summary card and the suite's line.
    assert_eq!(html.matches(suite).count(), 2, "{html}");
    assert_eq!(json["totals"]["usage"]["input_tokens"], 3600);
    assert_eq!(json["suites"][0]["usage"]["calls"], 6);
    assert_eq!(json["cases"][0]["usage"]["output_tokens"], 300);
}

/// Writes three entries (one failing, with HTML-looking text in its diff) and builds the report.
fn build(dir: &Path) -> PathBuf {
    let out = dir.join("target").join("proposal-eval");
    let diff = "  [0].newValue: values differ: expected 120, actual \"120\"\n\
                --- expected (normalized)\n+++ actual (normalized)\n@@ -1,3 +1,3 @@\n\
                -  \"newValue\": 120\n+  \"newValue\": \"<b id=injected>120</b>\"\n";
    for e in [
        entry(dir, "raise_amount", 0.0, diff),
        entry(dir, "new_iban", 1.0, ""),
        entry(dir, "aaa_first", 1.0, ""),
    ] {
        let file = out.join("entries").join(format!("{}.json", e.case));
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, serde_json::to_string(&e).unwrap()).unwrap();
    }
    rebuild(&out).unwrap();
    out.join("report.html")
}

#[test]
fn the_page_is_self_contained_and_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let html = std::fs::read_to_string(build(dir.path())).unwrap();
    for remote in ["http://", "https://", "<link", "src="] {
        assert!(
            !html.contains(remote),
            "the page loads nothing: found {remote}"
        );
    }
    assert!(html.contains("&lt;b id=injected&gt;120&lt;/b&gt;"));
    assert!(!html.contains("<b id=injected>"));
}

fn chromium() -> Option<PathBuf> {
    let candidates = ["/usr/bin/chromium", "/usr/bin/chromium-browser"];
    candidates.iter().map(PathBuf::from).find(|p| p.is_file())
}

/// The DOM after load, as Chromium serializes it.
fn dump_dom(chromium: &Path, url: &str) -> String {
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
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("chromium did not finish within 90 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The text between `<tag id="ID"…>` and the next `<`.
fn text_of(dom: &str, id: &str) -> String {
    let at = dom
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id} in the DOM"));
    let rest = &dom[at..];
    let start = rest.find('>').unwrap() + 1;
    let end = rest[start..].find('<').unwrap();
    rest[start..start + end].to_string()
}

#[test]
fn a_browser_shows_the_summary_the_failure_and_sorts_the_table() {
    let Some(chromium) = chromium() else {
        eprintln!(
            "skipped: no Chromium at /usr/bin/chromium (install it with `apt-get install chromium`; .ci/run does)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let page = build(dir.path());
    let url = format!("file://{}", page.display());
    let dom = dump_dom(&chromium, &url);
    assert!(dom.contains("proposal-eval report"), "not rendered:\n{dom}");

    // The summary numbers.
    assert_eq!(text_of(&dom, "total-cases"), "3");
    assert_eq!(text_of(&dom, "total-passed"), "2");
    assert_eq!(text_of(&dom, "total-failed"), "1");
    assert_eq!(text_of(&dom, "pass-rate"), "66.7%");

    // The failing case's mismatch and diff, as text (the HTML in it is not markup).
    let failure = &dom[dom.find("class=\"failure\"").expect("a failure section")..];
    assert!(failure.contains("payments::raise_amount"));
    assert!(failure.contains("[0].newValue: values differ: expected 120, actual \"120\""));
    assert!(failure.contains(
        "<span class=\"add\">+  \"newValue\": \"&lt;b id=injected&gt;120&lt;/b&gt;\"</span>"
    ));
    assert!(failure.contains("<span class=\"del\">-  \"newValue\": 120</span>"));
    assert!(!dom.contains("<b id=\"injected\">"));

    // The per-field accuracy bar.
    assert!(dom.contains("invoice.total"));
    assert!(dom.contains("width:66.7%"));

    // Sorting, driven by the page's script from the query string: score ascending puts the
    // failing case first; by case name descending, raise_amount first, aaa_first last.
    let order = |dom: &str| -> Vec<String> {
        dom.split("<tr data-test=\"")
            .skip(1)
            .map(|row| row[..row.find('"').unwrap()].to_string())
            .collect()
    };
    assert_eq!(
        order(&dom),
        [
            "payments::aaa_first",
            "payments::new_iban",
            "payments::raise_amount"
        ]
    );
    let sorted = dump_dom(&chromium, &format!("{url}?sort=score&order=asc"));
    assert!(
        sorted.contains("data-sorted=\"score asc\""),
        "the script did not run"
    );
    assert_eq!(order(&sorted)[0], "payments::raise_amount");
    let sorted = dump_dom(&chromium, &format!("{url}?sort=case&order=desc"));
    assert_eq!(
        order(&sorted),
        [
            "payments::raise_amount",
            "payments::new_iban",
            "payments::aaa_first"
        ]
    );
}
