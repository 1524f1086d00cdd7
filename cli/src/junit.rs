//! JUnit XML of a run report, for CI systems that show test results from it (GitLab, Jenkins,
//! Azure, GitHub actions that read JUnit).
//!
//! One `<testsuite>` per suite and test binary, one `<testcase>` per case. A failing case has a
//! `<failure>` whose `message` is the first line of why and whose body is the whole failure, as
//! the test printed it (uncoloured), at most 64 KiB as in the report. The case's score, recording
//! use and, for a repeated case, its samples are `<properties>`. Entries carry no duration, so
//! there is no `time` attribute (JUnit readers treat it as optional).
//!
//! XML 1.0 cannot hold most control characters, even escaped: they are written as `\u{..}`, so a
//! failure message with a stray control character still gives a file every reader accepts.

use proposal_eval::__internal::report::{cap_text, Entry, Report, TEXT_CAP};
use std::fmt::Write as _;

/// Escapes text for XML content and attribute values; characters XML 1.0 cannot hold are
/// written as `\u{..}`.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if allowed(c) => out.push(c),
            c => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
        }
    }
    out
}

/// The characters XML 1.0 allows (its `Char` production), minus the "discouraged" C1 controls
/// and noncharacters that some readers refuse.
fn allowed(c: char) -> bool {
    matches!(c as u32,
        0x20..=0x7E | 0xA0..=0xD7FF | 0xE000..=0xFFFD | 0x10000..=0x10FFFF)
        && !matches!(c as u32, 0xFDD0..=0xFDEF)
        && (c as u32 & 0xFFFE) != 0xFFFE
}

/// The JUnit XML of `report`.
pub fn to_junit(report: &Report) -> String {
    let mut out = String::with_capacity(256 + report.cases.len() * 256);
    out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"proposal-eval\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\" timestamp=\"{}\">",
        report.totals.cases,
        report.totals.failed,
        report.generated_at.format("%Y-%m-%dT%H:%M:%SZ")
    );
    // Cases are sorted by package, binary, suite folder and case, as the suites are grouped.
    let mut start = 0;
    for suite in &report.suites {
        let cases = report.cases[start..]
            .iter()
            .take_while(|c| {
                (&c.package, &c.binary, &c.suite_dir)
                    == (&suite.package, &suite.binary, &suite.suite_dir)
            })
            .count();
        let entries = &report.cases[start..start + cases];
        start += cases;
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\" timestamp=\"{}\">",
            escape(&format!(
                "{} ({}/{})",
                suite.suite, suite.package, suite.binary
            )),
            suite.totals.cases,
            suite.totals.failed,
            suite.last_finished_at.format("%Y-%m-%dT%H:%M:%SZ")
        );
        for entry in entries {
            testcase(&mut out, entry);
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

fn testcase(out: &mut String, entry: &Entry) {
    let _ = writeln!(
        out,
        "    <testcase name=\"{}\" classname=\"{}\" timestamp=\"{}\">",
        escape(&entry.test),
        escape(&format!(
            "{}.{}.{}",
            entry.package, entry.binary, entry.suite
        )),
        entry.finished_at.format("%Y-%m-%dT%H:%M:%SZ")
    );
    out.push_str("      <properties>\n");
    let mut property = |name: &str, value: &str| {
        let _ = writeln!(
            out,
            "        <property name=\"{}\" value=\"{}\"/>",
            escape(name),
            escape(value)
        );
    };
    if let Some(score) = entry.score {
        property("score", &score.to_string());
    }
    property("recording", entry.recording.describe());
    if let Some(samples) = &entry.samples {
        property("samples", &samples.describe());
    }
    out.push_str("      </properties>\n");
    if !entry.passed {
        let body = failure_text(entry);
        let message = body.lines().next().unwrap_or("failed");
        let kind = entry
            .evaluators
            .iter()
            .find(|e| !e.passed)
            .map_or("error", |e| e.evaluator.as_str());
        let _ = writeln!(
            out,
            "      <failure message=\"{}\" type=\"{}\">{}</failure>",
            escape(message),
            escape(kind),
            escape(&body)
        );
    }
    out.push_str("    </testcase>\n");
}

/// Why a case failed: its failure message, else its failing evaluators' summaries.
fn failure_text(entry: &Entry) -> String {
    if let Some(failure) = entry.failure.as_deref().filter(|f| !f.trim().is_empty()) {
        // Entries are capped as they are written; a report.json merged from elsewhere may hold
        // a longer one.
        return cap_text(failure, TEXT_CAP).into_owned();
    }
    let lines: Vec<String> = entry
        .evaluators
        .iter()
        .filter(|e| !e.passed)
        .map(|e| format!("{} FAILED (score {}): {}", e.evaluator, e.score, e.summary))
        .collect();
    if lines.is_empty() {
        "failed".into()
    } else {
        lines.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_failure_is_capped() {
        let mut entry: Entry = serde_json::from_value(serde_json::json!({
            "package": "demo", "binary": "evals", "suite": "s", "suite_dir": "s", "case": "a",
            "test": "s::a", "fixture": "/s/a.json", "passed": false, "score": 0.0,
            "recording": "none", "evaluators": [], "finished_at": "2026-01-01T00:00:00Z",
        }))
        .unwrap();
        entry.failure = Some("x".repeat(100_000));
        let text = failure_text(&entry);
        assert_eq!(text.len(), 64 * 1024 + "\n… 34464 bytes left out".len());
        assert!(text.ends_with("x\n… 34464 bytes left out"));
    }

    /// A case that ran to record and failed before its recording was written says so (the
    /// runtime's tests/recording_speed.rs checks that such a run's report.json says
    /// `not_recorded`).
    #[test]
    fn a_case_not_recorded_says_so() {
        let mut json = crate::report::tests::golden_report();
        let cases = json["cases"].as_array_mut().unwrap();
        assert!(cases.iter().all(|c| c["recording"] != "not_recorded"));
        let case = cases.iter_mut().find(|c| c["passed"] == false).unwrap();
        case["recording"] = "not_recorded".into();
        let report: Report = serde_json::from_value(json).unwrap();
        let xml = to_junit(&report);
        assert_eq!(
            xml.matches(r#"<property name="recording" value="not recorded"/>"#)
                .count(),
            1,
            "{xml}"
        );
    }

    #[test]
    fn escapes_markup_and_characters_xml_cannot_hold() {
        assert_eq!(
            escape("<a b=\"c\" d='e'>&</a>"),
            "&lt;a b=&quot;c&quot; d=&apos;e&apos;&gt;&amp;&lt;/a&gt;"
        );
        assert_eq!(escape("tab\tnl\ncr\r"), "tab\tnl\ncr\r");
        assert_eq!(
            escape("bell\u{7} esc\u{1b} nul\u{0}"),
            "bell\\u{7} esc\\u{1b} nul\\u{0}"
        );
        assert_eq!(escape("\u{fffe}\u{85}é✓"), "\\u{fffe}\\u{85}é✓");
    }
}
