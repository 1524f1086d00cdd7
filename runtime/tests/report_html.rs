//! `report.html` as a person sees it: the page the fold writes, opened from `file://` in headless
//! Chromium (Debian's `chromium`, which `.ci/run` installs), its script's DOM read back with
//! `--dump-dom`. Skipped, with a message, where there is no Chromium.
//!
//! The cases are written as a run's journal, one entry a line as a test run writes them, and
//! folded by `report --merge` (which keeps cases whose fixtures are not on this machine): the
//! page refers to each story in the journal and embeds those that fit.

use proposal_eval::__internal::report::compare::{compare, read_view, DEFAULT_MIN_DELTA};
use proposal_eval::__internal::report::merge::merge;
use proposal_eval::__internal::report::page;
use proposal_eval::__internal::report::Entry;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One case's entry, with every v2 field. `misses` are the strict evaluator's (empty: passed).
fn case(suite: &str, name: &str, score: f64, misses: &[&str]) -> Value {
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

/// The report folder (`report.json`, `report.html`) of these cases, written as the journal of
/// one run under `dir/name` and folded.
fn folded(dir: &Path, name: &str, cases: &[Value]) -> PathBuf {
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
    let out = dir.join(name).join("out");
    merge(&[journal], &out).unwrap();
    out
}

/// The page's URL in the report folder `out`.
fn page_url(out: &Path) -> String {
    format!("file://{}", out.join("report.html").display())
}

/// The four cases of the small report: two fail.
fn four_cases() -> Vec<Value> {
    vec![
        case(
            "payments",
            "raise_amount",
            0.0,
            &["[0].newValue: values differ: expected 120, actual \"120\""],
        ),
        case("payments", "new_iban", 1.0, &[]),
        case(
            "refunds",
            "partial",
            0.4,
            &["[0].amount: values differ: expected 60, actual 80"],
        ),
        case("refunds", "full", 1.0, &[]),
    ]
}

fn chromium() -> Option<PathBuf> {
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
fn text_of(dom: &str, id: &str) -> String {
    let at = dom
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id} in the DOM:\n{dom}"));
    let rest = &dom[at..];
    let start = rest.find('>').unwrap() + 1;
    let end = rest[start..].find('<').unwrap();
    rest[start..start + end].to_string()
}

/// The markup from `from` to the next `to`.
fn between<'a>(dom: &'a str, from: &str, to: &str) -> &'a str {
    let start = dom
        .find(from)
        .unwrap_or_else(|| panic!("no {from} in the DOM:\n{dom}"));
    let end = dom[start..].find(to).map_or(dom.len(), |e| start + e);
    &dom[start..end]
}

/// The test names of the case rows, in order.
fn rows(dom: &str) -> Vec<String> {
    between(dom, "<tbody id=\"rows\">", "</tbody>")
        .split("<tr data-test=\"")
        .skip(1)
        .map(|row| row[..row.find('"').unwrap()].to_string())
        .collect()
}

#[test]
fn a_failing_case_opens_to_its_whole_story() {
    let Some(chromium) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let url = page_url(&folded(dir.path(), "run", &four_cases()));
    let dom = dump_dom(
        &chromium,
        &format!("{url}#verdict=failed&case=refunds::partial"),
    );

    // The summary: every case, whatever the filter.
    assert_eq!(text_of(&dom, "total-cases"), "4");
    assert_eq!(text_of(&dom, "total-passed"), "2");
    assert_eq!(text_of(&dom, "total-failed"), "2");
    assert_eq!(text_of(&dom, "pass-rate"), "50.0%");
    assert_eq!(
        text_of(&dom, "total-usage"),
        "8 calls, 4800 in / 1200 out tokens, 1.6 s, $0.0024"
    );
    // Filtered to failures, the opened case marked.
    assert_eq!(rows(&dom), ["payments::raise_amount", "refunds::partial"]);
    assert_eq!(text_of(&dom, "count"), "2 of 4 cases match; showing 1–2.");
    assert!(dom.contains("<tr data-test=\"refunds::partial\" data-id=\"demo/evals/fixtures/refunds//partial\" class=\"open\">"));
    // The checks and budget columns: the verdict and score, the summary on hover, `–` where
    // the evaluator did not run.
    let row = between(&dom, "<tr data-test=\"refunds::partial\"", "</tr>");
    assert!(
        row.contains("<td><span class=\"fail\" title=\"1 of 2 checks passed, score 0.50\">fail 0.50</span></td><td class=\"muted\">–</td>"),
        "{row}"
    );
    // The charts, drawn as inline SVG.
    for chart in ["chart-suites", "chart-fields", "chart-scores"] {
        assert!(dom.contains(&format!("<svg id=\"{chart}\"")), "{chart}");
    }
    assert!(between(&dom, "<svg id=\"chart-fields\"", "</svg>").contains("50.0% (2/4)"));

    let case = between(
        &dom,
        "<section id=\"case-detail\"",
        "<section id=\"summary\"",
    );
    assert!(case.contains("<h2 id=\"case-title\">refunds::partial</h2>"));
    // Input and output.
    assert!(between(case, "id=\"case-input\"", "</section>")
        .contains("\"message\": \"Please look at partial\""));
    assert!(between(case, "id=\"case-output\"", "</section>").contains("\"amount\": \"120\""));
    // The strict evaluator's mismatch and diff, as text: the HTML in it is not markup.
    let strict = between(case, "data-evaluator=\"strict\"", "</div>");
    assert!(strict.contains("[0].amount: values differ: expected 60, actual 80"));
    assert!(strict.contains("<span class=\"del\">-  \"newValue\": 120</span>"));
    assert!(strict.contains(
        "<span class=\"add\">+  \"newValue\": \"&lt;b id=injected&gt;120&lt;/b&gt;&lt;/script&gt;\"</span>"
    ));
    assert!(!dom.contains("<b id=\"injected\">"));
    // The trajectory with its alignment: a step missing, a call that was forbidden.
    let trajectory = between(case, "<section id=\"trajectory\"", "</section>");
    assert!(
        trajectory.contains("Trajectory (2 tool calls)"),
        "{trajectory}"
    );
    assert!(trajectory.contains(
        "<tr class=\"st-missing\"><td><code>refund</code> <code>{\"amount\":120}</code></td><td><span class=\"muted\">–</span></td><td class=\"status\">missing</td>"
    ), "{trajectory}");
    assert!(trajectory.contains(
        "<td>#2 <code>delete_account</code> <code>{\"id\":7}</code> <span class=\"muted\">parallel, model call 1</span></td><td class=\"status\">forbidden</td><td>delete_account is forbidden</td>"
    ), "{trajectory}");
    // The judge's verdicts with reasons.
    let rubric = between(case, "data-evaluator=\"rubric\"", "</table>");
    assert!(rubric.contains(
        "<td>The reply is polite</td><td class=\"answer\">does not hold</td><td class=\"outcome fail\">failed</td><td>It ends abruptly.</td>"
    ), "{rubric}");
    // The model calls and the recording.
    let calls = between(case, "<section id=\"model-calls\"", "</section>");
    assert!(calls.contains(
        "<td>2</td><td>judge</td><td>judge-model</td><td class=\"num\">400</td><td class=\"num\">100</td><td class=\"num\">105.8 ms</td><td class=\"num\">$0.0002</td>"
    ));
    assert_eq!(
        text_of(case, "recording-path"),
        "fixtures/refunds/recordings/partial.json"
    );
    assert!(text_of(&dom, "first-render").starts_with("First screen drawn in "));
}

/// A `must not` statement shows the judge's answer apart from its outcome: answered "does not
/// hold", it passed; answered "holds", it failed. Three judge samples show their vote, and a
/// repeated case each sample's answer.
#[test]
fn a_must_not_statement_shows_the_answer_apart_from_the_outcome() {
    let Some(chromium) = chromium() else { return };
    let judged = |name: &str, holds: bool| {
        let mut c = case("shop", name, 1.0, &[]);
        let passed = !holds;
        c["passed"] = json!(passed);
        c["usage"]["agent"] =
            json!({"calls": 1, "input_tokens": 800, "output_tokens": 200, "cost_usd": 0.0004});
        c["usage"]["judge"] =
            json!({"calls": 1, "input_tokens": 400, "output_tokens": 100, "cost_usd": 0.0002});
        c["evaluators"] = json!([{
            "evaluator": "rubric", "score": if passed { 1.0 } else { 0.0 }, "passed": passed,
            "summary": "", "verdicts": [{
                "statement": "must not: Recommends a discontinued SKU", "holds": holds, "passed": passed,
                "votes": {"holds": if holds { 2 } else { 1 }, "does_not_hold": if holds { 1 } else { 2 }},
                "samples": [{"holds": holds, "passed": passed}, null],
                "reason": "the judge's reason", "advisory": false,
            }],
        }]);
        c
    };
    let dir = tempfile::tempdir().unwrap();
    let cases = [judged("not_held", false), judged("held", true)];
    let url = page_url(&folded(dir.path(), "run", &cases));
    for (name, answer, outcome, class, votes) in [
        (
            "not_held",
            "does not hold",
            "passed",
            "pass",
            "(1 holds, 2 does not)",
        ),
        ("held", "holds", "failed", "fail", "(2 holds, 1 does not)"),
    ] {
        let dom = dump_dom(&chromium, &format!("{url}#case=shop::{name}"));
        let case = between(
            &dom,
            "<section id=\"case-detail\"",
            "<section id=\"summary\"",
        );
        let rubric = between(case, "data-evaluator=\"rubric\"", "</table>");
        let row = format!(
            "<td>must not: Recommends a discontinued SKU</td><td class=\"answer\">{answer} <span class=\"muted votes\">{votes}</span>"
        );
        assert!(rubric.contains(&row), "{name}: no {row}\n{rubric}");
        let outcome = format!("<td class=\"outcome {class}\">{outcome}</td>");
        assert!(rubric.contains(&outcome), "{name}: no {outcome}\n{rubric}");
        let sample = format!("<li>{answer}, <span class=\"{class}\">");
        assert!(rubric.contains(&sample), "{name}: no {sample}\n{rubric}");
        // The case's model calls, the judge's apart from the agent's.
        assert!(
            case.contains("$0.0006; agent 1 call $0.0004, judge 1 call $0.0002"),
            "{case}"
        );
    }
}

/// A case whose journal refers to its input by its fixture's hash, the fixture edited since:
/// its Input section says why the input is not shown, and shows neither the input it ran with
/// nor the new one; its output is there.
#[test]
fn a_case_whose_fixture_changed_since_its_run_says_so_in_its_input() {
    use proposal_eval::__internal::recording::hash_content;
    let Some(chromium) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let fixture = dir.path().join("fixtures/refunds/full.json");
    std::fs::create_dir_all(fixture.parent().unwrap()).unwrap();
    let ran = r#"{"input": {"message": "as it ran"}}"#;
    std::fs::write(&fixture, r#"{"input": {"message": "edited since"}}"#).unwrap();
    let mut cases = four_cases();
    let full = cases[3].as_object_mut().unwrap();
    full.remove("input");
    full.insert("input_sha256".into(), json!(hash_content(ran.as_bytes()).0));
    full.insert("fixture".into(), json!(fixture));
    let out = folded(dir.path(), "run", &cases);
    let dom = dump_dom(&chromium, &format!("{}#case=refunds::full", page_url(&out)));
    let case = between(
        &dom,
        "<section id=\"case-detail\"",
        "<section id=\"summary\"",
    );
    let input = between(case, "id=\"case-input\"", "</section>");
    assert_eq!(
        text_of(input, "input-missing"),
        "fixtures/refunds/full.json changed since this run; its input then is not kept"
    );
    assert!(
        !case.contains("as it ran") && !case.contains("edited since"),
        "{case}"
    );
    assert!(between(case, "id=\"case-output\"", "</section>").contains("\"action\": \"refund\""));
}

/// A case whose story the page does not hold (a large report's page holds as many stories as
/// it can open with, failing cases' first; here, the journal is gone) opens to its verdicts and
/// the note that says where its story is; its recording's path and run are still there.
#[test]
fn a_case_whose_story_the_page_left_out_says_where_it_is() {
    let Some(chromium) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = folded(dir.path(), "run", &four_cases());
    let journal = dir.path().join("run/runs/r/journal.jsonl");
    std::fs::remove_file(&journal).unwrap();
    page::write(&out, None).unwrap();
    let dom = dump_dom(&chromium, &format!("{}#case=refunds::full", page_url(&out)));
    let case = between(
        &dom,
        "<section id=\"case-detail\"",
        "<section id=\"summary\"",
    );
    let note = between(case, "<p id=\"story-left-out\"", "</p>");
    assert!(
        note.contains("This case’s input, output and model calls are not in this page"),
        "{note}"
    );
    assert_eq!(
        text_of(note, "story-journal"),
        journal.display().to_string()
    );
    assert!(!case.contains("id=\"case-input\""), "{case}");
    assert!(case.contains("data-evaluator=\"trajectory\""), "{case}");
    assert_eq!(
        text_of(case, "recording-path"),
        "fixtures/refunds/recordings/full.json"
    );
    let row = between(&dom, "<tr data-test=\"refunds::full\"", "</tr>");
    assert!(
        row.contains("<td><span class=\"pass\" title=\"2 of 2 checks passed, score 1\">pass 1.00</span></td><td><span class=\"pass\" title=\"1 of 1 limits kept: 2 call(s), 300 tokens, $0.000100, 12 ms\">pass 1.00</span></td>"),
        "{row}"
    );
}

#[test]
fn filters_sort_and_pages_come_from_the_link_and_a_comparison_shows_what_changed() {
    let Some(chromium) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    // 400 cases in two suites: every second one fails, most of those on a value.
    let cases: Vec<Value> = (0..400)
        .map(|i| {
            let suite = if i % 5 == 0 { "refunds" } else { "payments" };
            let misses: &[&str] = match (i % 2, i % 6) {
                (0, _) => &[],
                (_, 5) => &["[0].iban: missing in actual"],
                _ => &["[0].amount: values differ: expected 60, actual 80"],
            };
            let score = if misses.is_empty() {
                1.0
            } else {
                (i % 10) as f64 / 10.0
            };
            case(suite, &format!("case_{i:03}"), score, misses)
        })
        .collect();
    let new_out = folded(dir.path(), "new", &cases);
    let new = std::fs::read_to_string(new_out.join("report.json")).unwrap();
    // The baseline: the same cases, all passing but one that fails in both.
    let base_cases: Vec<Value> = cases
        .iter()
        .map(|c| {
            let name = c["case"].as_str().unwrap();
            if name == "case_001" {
                c.clone()
            } else {
                case(c["suite"].as_str().unwrap(), name, 1.0, &[])
            }
        })
        .collect();
    let base_out = folded(dir.path(), "base", &base_cases);
    let base = std::fs::read_to_string(base_out.join("report.json")).unwrap();
    let comparison = compare(
        &read_view(base.as_bytes()).unwrap(),
        "main",
        &read_view(new.as_bytes()).unwrap(),
        "current report",
        DEFAULT_MIN_DELTA,
        0.05,
    );
    page::write(&new_out, Some(&comparison)).unwrap();
    let url = page_url(&new_out);

    // Text and verdict filters, sorted by case name descending, page 2 of 100 rows each.
    let dom = dump_dom(
        &chromium,
        &format!("{url}#verdict=failed&q=values%20differ&sort=case&order=desc&page=2"),
    );
    let mut expected: Vec<String> = cases
        .iter()
        .filter(|c| {
            c["passed"] == false
                && c["evaluators"][0]["misses"][0]
                    .as_str()
                    .unwrap()
                    .contains("values differ")
        })
        .map(|c| c["test"].as_str().unwrap().to_string())
        .collect();
    expected.sort_by(|a, b| b.cmp(a));
    assert_eq!(expected.len(), 134);
    assert_eq!(rows(&dom), expected[100..]);
    assert!(dom.contains("data-sorted=\"case desc\""));
    assert_eq!(
        text_of(&dom, "count"),
        "134 of 400 cases match; showing 101–134."
    );
    assert!(between(&dom, "<nav id=\"pager\"", "</nav>").contains("page 2 of 2"));

    // The comparison: the regressions and the change per suite.
    let compared = between(&dom, "<section id=\"comparison\"", "<section id=\"charts\"");
    assert!(compared.contains("<h2>Compared with main</h2>"));
    let regressions = between(compared, "<table id=\"regressions\"", "</table>");
    assert_eq!(
        regressions.matches("<tr data-test=").count(),
        comparison.regressions.len()
    );
    assert!(regressions.contains(
        "<a href=\"#case=demo%2Fevals%2Ffixtures%2Fpayments%2F%2Fcase_003\">payments::case_003</a></td><td>pass → fail</td><td>1.00 → 0.30</td><td>[0].amount: values differ: expected 60, actual 80</td>"
    ), "{regressions}");
    assert!(
        !regressions.contains("case_001"),
        "failed in both: not a regression"
    );
    let deltas = between(compared, "<table id=\"significance\"", "</table>");
    let refunds = between(deltas, "<tr data-suite=\"fixtures/refunds\">", "</tr>");
    let suite = comparison
        .suites
        .iter()
        .find(|s| s.suite == "refunds")
        .unwrap();
    assert!(refunds.contains(&format!(
        "<td class=\"num\">{}</td>",
        suite.change.pass_to_fail
    )));
    assert!(compared.contains("<svg id=\"chart-deltas\""));

    // Suite and evaluator: the verdict is the evaluator's.
    let dom = dump_dom(
        &chromium,
        &format!("{url}#suite=refunds&evaluator=rubric&verdict=failed"),
    );
    let expected: Vec<String> = cases
        .iter()
        .filter(|c| c["suite"] == "refunds" && c["passed"] == false)
        .map(|c| c["test"].as_str().unwrap().to_string())
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(rows(&dom), expected);
}

/// The first screen of a 100,000-case report, measured by the page itself
/// (`performance.now()` when it has drawn the summary, the charts and the first rows; when the
/// frame after that began; when every case was read). A measurement, not a check of speed:
/// `cargo test -p proposal-eval --test report_html -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement: builds a 100,000-case page (~240 MB) and prints its timings"]
fn a_page_of_100k_cases_first_screen() {
    let Some(chromium) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<Value> = (0..100_000)
        .map(|i| {
            let suite = ["payments", "refunds", "support"][i % 3];
            let misses: &[&str] = if i % 7 == 3 {
                &["[0].amount: values differ: expected 60, actual 80"]
            } else {
                &[]
            };
            case(
                suite,
                &format!("case_{i:06}"),
                if misses.is_empty() { 1.0 } else { 0.5 },
                misses,
            )
        })
        .collect();
    let started = Instant::now();
    let out = folded(dir.path(), "run", &cases);
    let render_time = started.elapsed();
    drop(cases);
    let size = |f: &str| std::fs::metadata(out.join(f)).unwrap().len() / 1_000_000;
    let dom = dump_dom(&chromium, &page_url(&out));
    assert_eq!(rows(&dom).len(), 100);
    assert_eq!(text_of(&dom, "count"), "100000 cases; showing 1–100.");
    let timing = between(&dom, "<p id=\"first-render\"", ">");
    eprintln!(
        "100,000 cases: report.json {} MB, report.html {} MB, journal and fold {:?}; in Chromium (ms since navigation): {timing}",
        size("report.json"),
        size("report.html"),
        render_time
    );
}

/// Two suites whose folders share a last name (`fixtures/eu/payments`, `fixtures/us/payments`),
/// each with a case `refund`: two rows, two links that open different cases, two lines in
/// `compare`. The comparison's significance table says what `compare` says: p-values as it
/// writes them, the detectable change, the overall row, tokens, latency and cost.
#[test]
fn two_suites_of_one_name_and_the_significance_table() {
    let Some(chromium) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let suite_case = |region: &str, name: &str, passed: bool| {
        let misses: &[&str] = if passed {
            &[]
        } else {
            &["recommend.price: values differ: expected 100, actual 155.4"]
        };
        let mut c = case("payments", name, if passed { 1.0 } else { 0.0 }, misses);
        c["suite_dir"] = json!(format!("fixtures/{region}/payments"));
        c["fixture"] = json!(format!("/work/demo/fixtures/{region}/payments/{name}.json"));
        if !passed {
            c["failure"] = json!(format!("payments::{name}: strict FAILED\n  {}", misses[0]));
        }
        c
    };
    // Now: eu's refund and 11 others fail (12 flips: p = 2/2^12); us's refund passes (it
    // failed before) and 20 others fail.
    let mut new = vec![suite_case("eu", "refund", false)];
    new.extend((0..11).map(|i| suite_case("eu", &format!("c{i:02}"), false)));
    new.push(suite_case("us", "refund", true));
    new.extend((0..20).map(|i| suite_case("us", &format!("c{i:02}"), false)));
    // An advisory miss of the rubric: passed, not shown green.
    new[12]["evaluators"].as_array_mut().unwrap().push(json!({
        "evaluator": "rubric", "score": 0.5, "passed": true, "summary": "1 of 2 statements hold",
        "verdicts": [
            {"statement": "Polite", "passed": true, "reason": "Yes.", "advisory": true},
            {"statement": "Brief", "passed": false, "reason": "No.", "advisory": true},
        ],
    }));
    let base: Vec<Value> = new
        .iter()
        .map(|c| {
            let region = if c["suite_dir"] == "fixtures/eu/payments" {
                "eu"
            } else {
                "us"
            };
            let name = c["case"].as_str().unwrap();
            suite_case(region, name, region == "eu" || name != "refund")
        })
        .collect();
    let new_out = folded(dir.path(), "new", &new);
    let base_out = folded(dir.path(), "base", &base);
    let read = |out: &Path| std::fs::read_to_string(out.join("report.json")).unwrap();
    let (base_json, new_json) = (read(&base_out), read(&new_out));
    let comparison = compare(
        &read_view(base_json.as_bytes()).unwrap(),
        "main",
        &read_view(new_json.as_bytes()).unwrap(),
        "current report",
        DEFAULT_MIN_DELTA,
        0.05,
    );
    let text = comparison.to_text();
    assert!(text.contains(
        "  payments::refund (demo/evals, fixtures/eu/payments): pass -> FAIL, score 1 -> 0\n      recommend.price: values differ: expected 100, actual 155.4\n"
    ), "{text}");
    assert!(
        text.contains(
            "  payments::refund (demo/evals, fixtures/us/payments): FAIL -> pass, score 0 -> 1\n"
        ),
        "{text}"
    );
    page::write(&new_out, Some(&comparison)).unwrap();
    let url = page_url(&new_out);

    let eu = "demo/evals/fixtures/eu/payments//refund";
    let us = "demo/evals/fixtures/us/payments//refund";
    let dom = dump_dom(&chromium, &format!("{url}#q=refund"));
    let ids: Vec<&str> = between(&dom, "<tbody id=\"rows\">", "</tbody>")
        .split("data-id=\"")
        .skip(1)
        .map(|row| &row[..row.find('"').unwrap()])
        .collect();
    assert_eq!(ids, [eu, us], "two rows");
    assert!(dom.contains(&format!(
        "<a href=\"#q=refund&amp;case={}\">",
        eu.replace('/', "%2F")
    )));
    assert!(dom.contains(&format!(
        "<a href=\"#q=refund&amp;case={}\">",
        us.replace('/', "%2F")
    )));
    // The advisory miss is not a plain pass; scores are bucketed as ranges.
    assert!(
        dom.contains("<span class=\"advisory\">rubric 0.50</span>"),
        "{dom}"
    );
    assert!(dom.contains(">0.9-1.0</text>"));

    // The significance table: the overall row first, then each suite; p as compare writes it.
    let table = between(&dom, "<table id=\"significance\"", "</table>");
    let row =
        |suite: &str| between(table, &format!("<tr data-suite=\"{suite}\">"), "</tr>").to_string();
    let (overall, eu_row, us_row) = (
        row(""),
        row("fixtures/eu/payments"),
        row("fixtures/us/payments"),
    );
    assert!(
        overall.contains("<strong>overall</strong></td><td>regressed</td>"),
        "{overall}"
    );
    assert!(
        eu_row.contains(
            "<td class=\"num\">12</td><td class=\"num\">0</td><td class=\"num\">0.0005</td>"
        ),
        "{eu_row}"
    );
    assert!(
        us_row.contains(
            "<td class=\"num\">20</td><td class=\"num\">1</td><td class=\"num\">&lt; 0.0001</td>"
        ),
        "{us_row}"
    );
    assert!(!table.contains(">0.000<"));
    assert!(
        overall.contains("pp (pass rate)"),
        "the detectable change: {overall}"
    );
    // 33 cases of 1,500 tokens, 406.25 ms and $0.0006 on each side.
    assert!(overall.contains("<td>49500 → 49500 (+0.0%)</td><td>13.4 s → 13.4 s (+0.0%)</td><td>$0.0198 → $0.0198 (+0.0%)</td>"), "{overall}");

    // Each link opens its own case; the failure text is shown once.
    for (id, dir) in [(eu, "fixtures/eu/payments"), (us, "fixtures/us/payments")] {
        let dom = dump_dom(&chromium, &format!("{url}#case={}", id.replace('/', "%2F")));
        let case = between(
            &dom,
            "<section id=\"case-detail\"",
            "<section id=\"summary\"",
        );
        assert!(
            case.contains(&format!("payments <span class=\"muted\">{dir}</span>")),
            "{case}"
        );
        if dir.contains("eu") {
            assert_eq!(
                case.matches("values differ: expected 100").count(),
                1,
                "{case}"
            );
            assert!(!case.contains("id=\"failure\""), "{case}");
        }
    }
}
