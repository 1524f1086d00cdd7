//! The page `report --compare BASE` writes, as a person sees it: opened from `file://` in
//! headless Chromium, its script's DOM read back (the runtime's tests/support/page.rs, shared with
//! its tests/report_html.rs). Skipped, with a message, where there is no Chromium; what
//! `compare` prints of the same two reports is checked either way.
//!
//! The cases are written as a run's journal, as a test run writes them; the baseline is folded
//! by `report --merge` and saved as the baseline `main`; the new report is made by the built
//! binary, `report --merge JOURNAL --compare main`.

#[path = "../../../runtime/tests/support/page.rs"]
mod page_support;

use crate::common::run_in;
use page_support::{between, case, chromium, dump_dom, folded, journal, page_url, rows, text_of};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// What `report --compare main` and `compare main` make of two reports.
struct Compared {
    /// The report folder whose `report.html` has the comparison.
    out: PathBuf,
    /// `compare main NEW --format json`.
    json: Value,
    /// `compare main NEW` (text).
    text: String,
}

/// The baseline `main` made of `base`'s cases, the new report of `new`'s (`report --merge
/// --compare main` in a target folder under `dir`), and `compare` of the two.
fn compared(dir: &Path, new: &[Value], base: &[Value]) -> Compared {
    let base_out = folded(dir, "base", base);
    let target = dir.join("target");
    let out = target.join("proposal-eval");
    std::fs::create_dir_all(out.join("baselines")).unwrap();
    std::fs::copy(
        base_out.join("report.json"),
        out.join("baselines/main.json"),
    )
    .unwrap();
    let journal = journal(dir, "new", new);
    let target = target.to_str().unwrap();
    let report = run_in(
        dir,
        &[
            "report",
            "--target-dir",
            target,
            "--merge",
            journal.to_str().unwrap(),
            "--compare",
            "main",
        ],
    );
    assert_eq!(report.code, 0, "{}{}", report.stdout, report.stderr);
    assert!(
        report
            .stdout
            .contains("compared with main in report.html: "),
        "{}",
        report.stdout
    );
    let new_report = out.join("report.json");
    let compare = |format: &str| {
        let args = [
            "compare",
            "main",
            new_report.to_str().unwrap(),
            "--format",
            format,
        ];
        let run = run_in(dir, &[&args[..], &["--target-dir", target]].concat());
        // 1: a case regressed.
        assert!(
            run.code == 0 || run.code == 1,
            "{}{}",
            run.stdout,
            run.stderr
        );
        run.stdout
    };
    Compared {
        json: serde_json::from_str(&compare("json")).unwrap(),
        text: compare("text"),
        out,
    }
}

#[test]
fn filters_sort_and_pages_come_from_the_link_and_a_comparison_shows_what_changed() {
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
    let compared = compared(dir.path(), &cases, &base_cases);
    let comparison = &compared.json;
    let Some(chromium) = chromium() else { return };
    let url = page_url(&compared.out);

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
        comparison["regressions"].as_array().unwrap().len()
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
    let suite = comparison["suites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["suite"] == "refunds")
        .unwrap();
    assert!(refunds.contains(&format!("<td class=\"num\">{}</td>", suite["pass_to_fail"])));
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

/// Two suites whose folders share a last name (`fixtures/eu/payments`, `fixtures/us/payments`),
/// each with a case `refund`: two rows, two links that open different cases, two lines in
/// `compare`. The comparison's significance table says what `compare` says: p-values as it
/// writes them, the detectable change, the overall row, tokens, latency and cost.
#[test]
fn two_suites_of_one_name_and_the_significance_table() {
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
    let compared = compared(dir.path(), &new, &base);
    let text = &compared.text;
    assert!(text.contains(
        "  payments::refund (demo/evals, fixtures/eu/payments): pass -> FAIL, score 1 -> 0\n      recommend.price: values differ: expected 100, actual 155.4\n"
    ), "{text}");
    assert!(
        text.contains(
            "  payments::refund (demo/evals, fixtures/us/payments): FAIL -> pass, score 0 -> 1\n"
        ),
        "{text}"
    );
    let Some(chromium) = chromium() else { return };
    let url = page_url(&compared.out);

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
