//! The report a whole test run leaves, driven as a user drives it: `cargo test` in a standing-alone
//! copy of `examples/payments-agent` (see `support`). A whole run makes its part of the report as
//! its cases run; what it leaves must be the report its entry files make.

mod support;

use serde_json::Value;
use std::path::Path;
use support::{lock, shared_target, Example, SUITE};

/// `report.json` without the time it was written.
fn report_json(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("report.json")).unwrap();
    let mut json: Value = serde_json::from_str(&text).unwrap();
    json["generated_at"] = Value::Null;
    json
}

/// `report.html` without the time it was written, and the failure anchors it links to, in order.
fn report_html(dir: &Path) -> (String, Vec<String>) {
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let links: Vec<String> = html
        .split("href=\"#failure-")
        .skip(1)
        .map(|l| l[..l.find('"').unwrap()].to_string())
        .collect();
    let sections: Vec<String> = html
        .split("id=\"failure-")
        .skip(1)
        .map(|l| l[..l.find('"').unwrap()].to_string())
        .collect();
    assert_eq!(links, sections, "each failing row links to its own section");
    let mut text = html;
    for (n, anchor) in links.iter().enumerate() {
        text = text.replace(&format!("failure-{anchor}\""), &format!("failure-#{n}\""));
    }
    let generated = text.find("<p class=\"muted\">generated ").unwrap();
    let end = generated + text[generated..].find('\n').unwrap();
    text.replace_range(generated..end, "");
    (text, links)
}

/// Files below `dir` whose name ends with one of `endings`.
fn files_ending(dir: &Path, endings: &[&str]) -> Vec<String> {
    walk(dir)
        .into_iter()
        .filter(|name| endings.iter().any(|e| name.ends_with(e)))
        .collect()
}

fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path.to_string_lossy().into_owned());
        }
    }
    out
}

#[test]
fn a_whole_runs_report_is_the_one_its_entry_files_make() {
    let _guard = lock();
    let example = Example::new();
    // Two failing cases: a strict mismatch each.
    for case in ["changes/raise_amount", "changes/new_iban"] {
        let path = format!("{SUITE}/{case}.json");
        let text = example.read(&path);
        let edited = text.replacen("\"changeType\": \"change\"", "\"changeType\": \"other\"", 1);
        assert_ne!(edited, text, "{case} is edited");
        example.write(&path, edited);
    }
    let dir = shared_target().join("proposal-eval");
    let _ = std::fs::remove_dir_all(&dir);

    for round in 0..2 {
        let run = example.evals(&[], &[]);
        assert!(!run.success, "{}", run.text());
        run.assert_summary(20, 2, 2);
        let json = report_json(&dir);
        let (html, anchors) = report_html(&dir);
        assert_eq!(json["totals"]["cases"], 22, "{json}");
        assert_eq!(json["totals"]["failed"], 2);
        assert_eq!(anchors.len(), 2, "round {round}");
        // Made as the cases ran: its anchors name their tests, not their rows.
        assert!(
            anchors.iter().all(|a| a.contains("payments::changes::")),
            "{anchors:?} {}",
            run.text()
        );
        // The part's side files are gone; the folder keeps its merged file and its section.
        assert!(
            files_ending(&dir, &[".rows", ".failures"])
                .iter()
                .all(|f| f.contains(".section.")),
            "{:?}",
            walk(&dir)
        );
        assert_eq!(files_ending(&dir, &["merged.jsonl"]).len(), 1);

        // What the entry files make, read line by line (`cargo proposal-eval report`).
        let rebuilt = proposal_eval::__internal::report::rebuild(&dir).unwrap();
        assert_eq!(rebuilt.cases.len(), 22);
        assert_eq!(report_json(&dir), json, "round {round}");
        assert_eq!(report_html(&dir).0, html, "round {round}");
    }
}
