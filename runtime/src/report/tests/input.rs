//! A case's input referred to by its fixture (`input`), through the fold, the page and
//! `report --merge`.

use super::{fold, journal};
use crate::report::entry::{capped_value, Entry};
use crate::run::TEXT_CAP;
use std::path::Path;

/// The cases as the page at `dir/report.html` embeds them (its first page, `report-summary`).
fn page_cases(dir: &Path) -> Vec<serde_json::Value> {
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let open = "<script type=\"application/json\" id=\"report-summary\">";
    let start = html.find(open).unwrap() + open.len();
    let end = start + html[start..].find("</script>").unwrap();
    let report: serde_json::Value = serde_json::from_str(&html[start..end]).unwrap();
    report["cases"].as_array().unwrap().clone()
}

/// A journal refers to a case's input by the hash of its fixture: the page and `report --merge`
/// show the input read from the fixture while it has that hash (CRLF read as LF, as the run
/// hashed it); once the fixture is edited, they say why the input is not shown and never show
/// the new one. A deleted fixture's case is dropped by the fold (the case is gone); `report
/// --merge`, which keeps it, says the fixture is gone.
#[test]
fn an_input_is_shown_from_its_fixture_only_while_it_is_the_one_the_case_ran_with() {
    use crate::recording::sources::hash_content;
    use serde_json::json;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("Cargo.toml"), "[package]\nname = \"demo\"\n").unwrap();
    std::fs::create_dir_all(root.join("tests")).unwrap();
    std::fs::write(root.join("tests/evals.rs"), "").unwrap();
    let fixture = root.join("fixtures/s/a.json");
    std::fs::create_dir_all(fixture.parent().unwrap()).unwrap();
    let ran = "{\r\n  \"input\": {\"message\": \"as it ran\"},\r\n  \"expected\": []\r\n}\r\n";
    std::fs::write(&fixture, ran).unwrap();
    let entry: Entry = serde_json::from_value(json!({
        "package": "demo", "binary": "evals", "suite": "s", "suite_dir": "fixtures/s",
        "case": "a", "test": "s::a", "fixture": fixture,
        "passed": true, "score": 1.0, "recording": "none", "evaluators": [],
        "input_sha256": hash_content(ran.replace("\r\n", "\n").as_bytes()).0,
        "output": {"reply": "done"},
        "run": "parent-1-1", "finished_at": "2026-01-01T00:00:00Z",
    }))
    .unwrap();
    let line = serde_json::to_string(&entry).unwrap();
    assert!(
        !line.contains("as it ran") && !line.contains("\"input\":"),
        "{line}"
    );
    let reports = root.join("target/proposal-eval");
    std::fs::write(journal(&reports.join("runs"), "parent-1-1"), line + "\n").unwrap();
    let merged = root.join("merged");
    let shown = |dir: &Path| {
        let cases = page_cases(dir);
        assert_eq!(cases.len(), 1, "{cases:?}");
        (cases[0]["input"].clone(), cases[0]["input_missing"].clone())
    };
    let input = json!({"message": "as it ran"});

    fold(&reports).unwrap();
    assert_eq!(shown(&reports), (input.clone(), json!(null)));
    crate::report::merge::merge(std::slice::from_ref(&reports), &merged).unwrap();
    assert_eq!(shown(&merged), (input, json!(null)));

    std::fs::write(&fixture, ran.replace("as it ran", "edited since")).unwrap();
    let changed = json!("fixtures/s/a.json changed since this run; its input then is not kept");
    fold(&reports).unwrap();
    assert_eq!(shown(&reports), (json!(null), changed.clone()));
    crate::report::merge::merge(std::slice::from_ref(&reports), &merged).unwrap();
    assert_eq!(shown(&merged), (json!(null), changed));
    for dir in [&reports, &merged] {
        let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
        assert!(!html.contains("edited since"));
    }

    std::fs::remove_file(&fixture).unwrap();
    assert!(fold(&reports).unwrap().cases.is_empty(), "the case is gone");
    let merged = crate::report::merge::merge(std::slice::from_ref(&reports), &merged).unwrap();
    assert_eq!(merged.cases.len(), 1);
    assert_eq!(
        shown(root.join("merged").as_path()),
        (
            json!(null),
            json!("fixtures/s/a.json is gone since this run; the input it held then is not kept")
        )
    );
}

/// An output that was the fixture's `expected` is not copied into the journal either: the page
/// and a merged report show it from the fixture (either key, capped as an entry caps it) while
/// the fixture has the hash the run read, and say why not once it changed.
#[test]
fn an_output_that_was_expected_is_shown_from_its_fixture_only_while_it_is_the_one_the_case_ran_with(
) {
    use crate::recording::sources::hash_content;
    use serde_json::{json, Value};
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("Cargo.toml"), "[package]\nname = \"demo\"\n").unwrap();
    std::fs::create_dir_all(root.join("tests")).unwrap();
    std::fs::write(root.join("tests/evals.rs"), "").unwrap();
    std::fs::create_dir_all(root.join("fixtures/s")).unwrap();
    let long = json!([{"notes": "x".repeat(TEXT_CAP + 10)}]);
    let fixtures = [
        ("a", json!({"input": {"m": 1}, "expected": [{"id": 1}]})),
        (
            "b",
            json!({"expectedDataProposal": [{"id": 2}], "input": {"m": 2}}),
        ),
        ("c", json!({"input": {"m": 3}, "expected": long.clone()})),
    ];
    let mut journal_text = String::new();
    for (case, fixture) in &fixtures {
        let text = serde_json::to_string_pretty(fixture).unwrap();
        let path = root.join(format!("fixtures/s/{case}.json"));
        std::fs::write(&path, &text).unwrap();
        let entry: Entry = serde_json::from_value(json!({
            "package": "demo", "binary": "evals", "suite": "s", "suite_dir": "fixtures/s",
            "case": case, "test": format!("s::{case}"), "fixture": path,
            "passed": true, "score": 1.0, "recording": "none", "evaluators": [],
            "input_sha256": hash_content(text.as_bytes()).0, "output_is_expected": true,
            "run": "parent-1-1", "finished_at": "2026-01-01T00:00:00Z",
        }))
        .unwrap();
        journal_text += &(serde_json::to_string(&entry).unwrap() + "\n");
    }
    assert!(!journal_text.contains("\"id\""), "{journal_text}");
    let reports = root.join("target/proposal-eval");
    std::fs::write(journal(&reports.join("runs"), "parent-1-1"), journal_text).unwrap();
    let shown = |dir: &Path| -> Vec<(Value, Value, Value)> {
        page_cases(dir)
            .iter()
            .map(|c| {
                (
                    c["input"].clone(),
                    c["output"].clone(),
                    c["output_missing"].clone(),
                )
            })
            .collect()
    };
    let capped = capped_value(long);
    assert!(capped.is_string(), "over the cap: {capped}");
    let expected = vec![
        (json!({"m": 1}), json!([{"id": 1}]), json!(null)),
        (json!({"m": 2}), json!([{"id": 2}]), json!(null)),
        (json!({"m": 3}), capped, json!(null)),
    ];
    fold(&reports).unwrap();
    assert_eq!(shown(&reports), expected);
    let merged = root.join("merged");
    crate::report::merge::merge(std::slice::from_ref(&reports), &merged).unwrap();
    assert_eq!(shown(&merged), expected);

    std::fs::write(
        root.join("fixtures/s/a.json"),
        "{\"input\": {\"m\": 1}, \"expected\": [{\"id\": 9}]}",
    )
    .unwrap();
    fold(&reports).unwrap();
    let cases = page_cases(&reports);
    assert_eq!(cases[0]["output"], json!(null));
    assert_eq!(
        cases[0]["output_missing"],
        json!("fixtures/s/a.json changed since this run; the output (its `expected`) then is not kept")
    );
    assert_eq!(
        cases[0]["input_missing"],
        json!("fixtures/s/a.json changed since this run; its input then is not kept")
    );
    assert_eq!(shown(&reports)[1..], expected[1..]);
}

/// A report merged on another machine finds a runner's fixture in this machine's checkout (the
/// runner's absolute path is not here): the same path's last components below the folders
/// holding the report folder, the file with the hash the run read; a file of that name with
/// other bytes is not taken for it.
#[test]
fn a_merged_report_finds_a_runners_fixture_in_this_checkout() {
    use crate::recording::sources::hash_content;
    use serde_json::json;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let ran = r#"{"input": {"message": "as the runner ran it"}, "expected": []}"#;
    let line = |case: &str, hash: &str| {
        let entry: Entry = serde_json::from_value(json!({
            "package": "demo", "binary": "evals", "suite": "s", "suite_dir": "fixtures/s",
            "case": case, "test": format!("s::{case}"),
            "fixture": format!("/runner-that-is-not-here/repo/fixtures/s/{case}.json"),
            "passed": true, "score": 1.0, "recording": "none", "evaluators": [],
            "input_sha256": hash, "output": {"reply": "done"},
            "run": "parent-1-1", "finished_at": "2026-01-01T00:00:00Z",
        }))
        .unwrap();
        serde_json::to_string(&entry).unwrap() + "\n"
    };
    let hash = hash_content(ran.as_bytes()).0;
    let checkout = root.join("repo/fixtures/s");
    std::fs::create_dir_all(&checkout).unwrap();
    std::fs::write(checkout.join("a.json"), ran).unwrap();
    std::fs::write(
        checkout.join("b.json"),
        ran.replace("as the runner", "otherwise"),
    )
    .unwrap();
    let runner = root.join("artifact/target/proposal-eval");
    let lines = line("a", &hash) + &line("b", &hash);
    std::fs::write(journal(&runner.join("runs"), "parent-1-1"), lines).unwrap();
    let merged = root.join("repo/target/proposal-eval");
    crate::report::merge::merge(&[runner], &merged).unwrap();
    let cases = page_cases(&merged);
    assert_eq!(
        cases[0]["input"],
        json!({"message": "as the runner ran it"})
    );
    assert_eq!(
        cases[1]["input_missing"],
        json!("fixtures/s/b.json changed since this run; its input then is not kept")
    );
}

/// An input read from its fixture is what the entry would have held: the value itself while
/// its JSON text is at most 64 KiB (numbers written longer than in the file included), else
/// the capped text.
#[test]
fn an_input_read_from_its_fixture_is_capped_as_an_entry_caps_it() {
    use crate::recording::sources::hash_content;
    use serde_json::{json, Value};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.json");
    let inputs = [
        json!({"m": "x".repeat(100)}),
        json!({"m": "x".repeat(20 * 1024)}),
        json!({"m": "x".repeat(TEXT_CAP - 10)}),
        json!({"m": "x".repeat(TEXT_CAP + 10)}),
        json!(null),
    ];
    let mut texts: Vec<(String, Value)> = inputs
        .iter()
        .map(|i| (json!({"input": i, "expected": []}).to_string(), i.clone()))
        .collect();
    // `1e15` is 4 bytes in the file and `1000000000000000.0` as an entry writes it.
    let numbers = vec!["1e15"; 7000].join(",");
    let value: Value = serde_json::from_str(&format!("[{numbers}]")).unwrap();
    texts.push((format!("{{\"input\": [{numbers}]}}"), value));
    texts.push(("{\"expected\": []}".to_string(), Value::Null));
    for (text, input) in texts {
        std::fs::write(&path, &text).unwrap();
        let sha256 = hash_content(text.as_bytes()).0;
        let shown = crate::report::input::input_of(&path, &sha256, dir.path(), u64::MAX, false)
            .unwrap()
            .unwrap();
        let shown: Value = serde_json::from_slice(&shown.input).unwrap();
        assert_eq!(
            shown,
            capped_value(input),
            "{}",
            &text[..40.min(text.len())]
        );
    }
}

/// The input is read up to its end only, in every layout a fixture may have; a layout the short
/// read does not know is read whole, with the same result.
#[test]
fn an_input_is_read_alike_wherever_it_stands_in_its_fixture() {
    use crate::report::input::parts_text;
    let cases = [
        (r#"{"input": {"m": 1}, "expected": [1, 2]}"#, r#"{"m": 1}"#),
        (
            "\u{feff}{\n  \"description\": \"a \\\"quoted\\\" one\",\n  \"status\": \"ignored\",\n  \"input\" :\n [1, {\"input\": 2}],\n  \"expected\": []\n}",
            r#"[1, {"input": 2}]"#,
        ),
        (r#"{"expected": [], "input": 5}"#, "5"),
        (r#"{"input":"text"}"#, r#""text""#),
        (r#"{"\u0069nput": {"escaped": "key"}, "expected": []}"#, r#"{"escaped": "key"}"#),
        (r#"{"expected": []}"#, "null"),
        (r#"{"meta": {"input": 1}, "expected": []}"#, "null"),
    ];
    for (fixture, input) in cases {
        let shown = parts_text(fixture.as_bytes(), false).unwrap();
        assert_eq!(String::from_utf8(shown.input).unwrap(), input, "{fixture}");
    }
}
