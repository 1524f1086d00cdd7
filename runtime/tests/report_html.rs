//! `report.html` as a person sees it: the page the fold writes, opened from `file://` in headless
//! Chromium (Debian's `chromium`, which `.ci/run` installs), its script's DOM read back with
//! `--dump-dom`. Skipped, with a message, where there is no Chromium.
//!
//! The cases are written as a run's journal, one entry a line as a test run writes them, and
//! folded by `report --merge` (which keeps cases whose fixtures are not on this machine): the
//! page refers to each story in the journal and embeds those that fit.
//!
//! The page with a comparison (`report --compare BASE`) is the CLI's to write and to test:
//! cli/tests/cli/report_page.rs, with the same helpers (`support/page.rs`).

#[path = "support/page.rs"]
mod page_support;

use page_support::{between, case, chromium, dump_dom, folded, page_url, rows, text_of};
use proposal_eval::__internal::report::page;
use serde_json::{json, Value};
use std::time::Instant;

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
/// nor the new one; its output is there. A case whose output was its fixture's `expected`
/// (referred to by the same hash) shows it from the fixture while the file is unchanged.
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
    // payments::new_iban: its output was its fixture's `expected`.
    let unchanged = dir.path().join("fixtures/payments/new_iban.json");
    std::fs::create_dir_all(unchanged.parent().unwrap()).unwrap();
    let text = r#"{"input": {"iban": "DE01"}, "expected": [{"action": "update_iban"}]}"#;
    std::fs::write(&unchanged, text).unwrap();
    let iban = cases[1].as_object_mut().unwrap();
    iban.remove("input");
    iban.remove("output");
    iban.insert(
        "input_sha256".into(),
        json!(hash_content(text.as_bytes()).0),
    );
    iban.insert("output_is_expected".into(), json!(true));
    iban.insert("fixture".into(), json!(unchanged));
    let out = folded(dir.path(), "run", &cases);
    let dom = dump_dom(
        &chromium,
        &format!("{}#case=payments::new_iban", page_url(&out)),
    );
    let output = between(&dom, "id=\"case-output\"", "</section>");
    assert!(output.contains("\"action\": \"update_iban\""), "{output}");
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
