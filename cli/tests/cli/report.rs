use crate::common::*;
use proposal_eval::__internal::report::merge::merge;
use proposal_eval::__internal::report::RecordingUse;
use proposal_eval::__internal::report::{Entry, EvaluatorEntry, FieldEntry, Report};
use serde_json::Value;

/// An entry as a test run leaves it; its fixture and its test target's file are created so the
/// entry counts.
pub fn entry(env: &Env, binary: &str, case: &str, passed: bool) -> Entry {
    let fixture = env.path(&format!("suite/{case}.json"));
    std::fs::create_dir_all(fixture.parent().unwrap()).unwrap();
    std::fs::write(&fixture, "{}").unwrap();
    env.write(&format!("tests/{binary}.rs"), "");
    let score = if passed { 1.0 } else { 0.5 };
    Entry {
        package: "demo".into(),
        binary: binary.into(),
        suite: "suite".into(),
        suite_dir: "suite".into(),
        case: case.into(),
        test: format!("suite::{case}"),
        fixture,
        description: None,
        passed,
        score: Some(score),
        recording: if passed {
            RecordingUse::Replayed
        } else {
            RecordingUse::Recorded
        },
        evaluators: vec![EvaluatorEntry {
            evaluator: "field_accuracy".into(),
            score,
            passed,
            summary: "1 of 2 fields".into(),
            misses: if passed {
                vec![]
            } else {
                vec!["invoice.total: outside tolerance".into()]
            },
            fields: vec![
                FieldEntry {
                    path: "invoice.number".into(),
                    hit: true,
                },
                FieldEntry {
                    path: "invoice.total".into(),
                    hit: passed,
                },
            ],
            rendered: if passed {
                String::new()
            } else {
                "  invoice.total: outside tolerance\n-1\n+2\n".into()
            },
            verdicts: Vec::new(),
            alignment: None,
        }],
        failure: (!passed).then(|| "suite/b: field_accuracy FAILED".to_string()),
        run: Some("run-1".into()),
        usage: None,
        trajectory: None,
        samples: None,
        input: None,
        input_sha256: None,
        input_missing: None,
        output_is_expected: false,
        output_missing: None,
        output: None,
        calls: Vec::new(),
        recording_path: None,
        finished_at: "2025-01-15T10:00:00Z".parse().unwrap(),
        older: false,
        story: None,
    }
}

/// The report of these entries, as `report --merge` makes it from a journal holding them.
pub fn report_of(entries: &[Entry]) -> Report {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("runs/r/journal.jsonl");
    std::fs::create_dir_all(journal.parent().unwrap()).unwrap();
    let lines: String = entries
        .iter()
        .map(|e| serde_json::to_string(e).unwrap() + "\n")
        .collect();
    std::fs::write(&journal, lines).unwrap();
    merge(&[journal], dir.path()).unwrap()
}

/// Runs the binary in `cwd` without the CARGO_TARGET_DIR this test may have been given.
pub fn report_in(cwd: &std::path::Path, args: &[&str]) -> Output {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cargo-proposal-eval"))
        .arg("proposal-eval")
        .args(args)
        .current_dir(cwd)
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .unwrap();
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Appends `entry` to a run's journal in `target`, as a test run does: of two lines of a case
/// written at the same time, the one read last stands.
pub fn write_entry(env: &Env, target: &str, entry: &Entry) {
    let journal = format!("{target}/proposal-eval/runs/test-run/journal.jsonl");
    let mut text = std::fs::read_to_string(env.path(&journal)).unwrap_or_default();
    text.push_str(&serde_json::to_string(entry).unwrap());
    text.push('\n');
    env.write(&journal, &text);
}

#[test]
fn folds_the_journals_into_the_report_and_prints_a_table() {
    let env = Env::new();
    env.write("Cargo.toml", "[package]\nname = \"demo\"\n");
    // Two binaries with the same test names: both kept.
    for binary in ["evals", "macro_evals"] {
        write_entry(&env, "target", &entry(&env, binary, "a", true));
        write_entry(&env, "target", &entry(&env, binary, "b", false));
    }
    // An entry whose fixture is gone is dropped; an unreadable one is skipped and counted.
    let mut gone = entry(&env, "evals", "gone", true);
    gone.fixture = env.path("suite/deleted.json");
    write_entry(&env, "target", &gone);
    // So is one of a test target that is gone from the crate.
    write_entry(&env, "target", &entry(&env, "removed", "a", true));
    std::fs::remove_file(env.path("tests/removed.rs")).unwrap();
    env.write(
        "target/proposal-eval/runs/old/journal.jsonl",
        "{\"name\": \"x\"}\n",
    );
    // Another run's journal: line 2 has a readable key but a field of the wrong type, line 3 was
    // cut off by a kill. Both are left out and named.
    // Line 1 is case a's entry again.
    let good = serde_json::to_string(&entry(&env, "evals", "a", true)).unwrap();
    let broken = serde_json::to_string(&entry(&env, "evals", "c", true))
        .unwrap()
        .replace("\"passed\":true", "\"passed\":\"yes\"");
    assert!(broken.contains("\"yes\""));
    let cut = &good[..40];
    let writer = "target/proposal-eval/runs/parent-1-1/journal.jsonl";
    env.write(writer, &format!("{good}\n{broken}\n{cut}"));
    let writer = env.path(writer).canonicalize().unwrap();
    // serde_json points at the last character of the bad value (1-based).
    let column = broken.find("\"yes\"").unwrap() + 5;

    let out = report_in(env.dir.path(), &["report"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let rows: Vec<&str> = out.stdout.lines().collect();
    assert!(rows[0].starts_with("suite"), "{}", out.stdout);
    // 1 of 2 and 2 of 4 passed: Wilson 95% intervals [9.45%, 90.55%] and [15.00%, 85.00%]
    // (mpmath 1.3.0, as in engine/src/stats.rs's tests).
    assert_eq!(
        rows[..2],
        [
            "suite  binary            cases  passed  failed  pass rate  95% interval  replayed  recorded  stale",
            "suite  demo/evals            2       1       1      50.0%     9.5-90.5%         1         1      0",
        ],
        "{}",
        out.stdout
    );
    assert!(rows[2].contains("demo/macro_evals"), "{}", out.stdout);
    assert_eq!(
        rows[3],
        "total                        4       2       2      50.0%    15.0-85.0%         2         2      0"
    );
    assert!(
        out.stdout.contains("50.0%  invoice.total (1/2)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("suite::b (demo/evals): field_accuracy 0.50"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("entry lines that could not be read were left out"),
        "{}",
        out.stdout
    );
    let old = env.path("target/proposal-eval/runs/old/journal.jsonl");
    for listed in [
        format!("  {}:1:13: missing field `package`\n", old.display()),
        format!(
            "  {}:2:{column}: invalid type: string \"yes\", expected a boolean\n",
            writer.display()
        ),
        format!("  {}:3:40: EOF while parsing a string\n", writer.display()),
    ] {
        assert!(out.stdout.contains(&listed), "{listed}\n{}", out.stdout);
    }
    let html = env
        .path("target/proposal-eval/report.html")
        .canonicalize()
        .unwrap();
    assert!(
        out.stdout
            .trim_end()
            .ends_with(&format!("report: {}", html.display())),
        "{}",
        out.stdout
    );

    let report: Value =
        serde_json::from_str(&env.read("target/proposal-eval/report.json")).unwrap();
    assert_eq!(report["totals"]["cases"], 4, "{report:#}");
    assert_eq!(report["unreadable_entries"].as_array().unwrap().len(), 3);
    // The report as written is what schemas/report.json describes.
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../schemas/report.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let errors: Vec<String> = jsonschema::validator_for(&schema)
        .unwrap()
        .iter_errors(&report)
        .map(|e| format!("at `{}`: {e}", e.instance_path()))
        .collect();
    assert_eq!(errors, Vec::<String>::new(), "schemas/report.json");
    let page = env.read("target/proposal-eval/report.html");
    assert!(page.contains("EOF while parsing a string"), "{page}");
    assert_eq!(report["totals"]["passed"], 2);
    assert_eq!(report["totals"]["replayed"], 2);
    assert_eq!(report["totals"]["recorded"], 2);
    assert_eq!(report["suites"].as_array().unwrap().len(), 2);
    let suite = &report["suites"][0];
    assert_eq!(suite["binary"], "evals");
    assert_eq!(suite["pass_rate"], 0.5);
    let interval = &report["totals"]["pass_rate_interval"];
    assert!((interval["low"].as_f64().unwrap() - 0.150_038_99).abs() < 1e-8);
    assert!((interval["high"].as_f64().unwrap() - 0.849_961_01).abs() < 1e-8);
    assert_eq!(suite["field_accuracy"][1]["path"], "invoice.total");
    assert_eq!(suite["field_accuracy"][1]["accuracy"], 0.5);
    assert_eq!(suite["score_distribution"][5]["count"], 1);
    assert_eq!(suite["score_distribution"][9]["count"], 1);
    assert_eq!(suite["evaluators"][0]["evaluator"], "field_accuracy");
    assert_eq!(
        report["cases"][1]["evaluators"][0]["misses"][0],
        "invoice.total: outside tolerance"
    );
    // The page embeds report.json, drawn by its own script.
    let page = env.read("target/proposal-eval/report.html");
    assert!(page
        .contains("<script type=\"application/json\" id=\"report-summary\">{\n  \"format\": 1,"));
    assert!(page.contains("\"misses\":[\"invoice.total: outside tolerance\"]"));
}

#[test]
fn finds_the_target_folder() {
    let env = Env::new();
    // A workspace with a member: the workspace's target/ is the one.
    env.write("Cargo.toml", "[workspace]\nmembers = [\"member\"]\n");
    env.write("member/Cargo.toml", "[package]\nname = \"member\"\n");
    write_entry(&env, "target", &entry(&env, "evals", "a", true));
    let out = report_in(&env.path("member"), &["report"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(env.path("target/proposal-eval/report.json").exists());

    // CARGO_TARGET_DIR wins, and --target-dir over both.
    write_entry(&env, "elsewhere", &entry(&env, "evals", "a", false));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cargo-proposal-eval"))
        .args(["proposal-eval", "report"])
        .current_dir(env.path("member"))
        .env("CARGO_TARGET_DIR", env.path("elsewhere"))
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("0.0%"));
    let out = report_in(env.dir.path(), &["report", "--target-dir", "elsewhere"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(env.path("elsewhere/proposal-eval/report.html").exists());
}

#[test]
fn error_paths() {
    let env = Env::new();
    env.write("Cargo.toml", "[package]\nname = \"demo\"\n");
    let out = report_in(env.dir.path(), &["report"]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("no run report in"), "{}", out.stderr);
    assert!(out.stderr.contains("cargo test"), "{}", out.stderr);
    assert_eq!(report_in(env.dir.path(), &["report", "somewhere"]).code, 2);
    assert_eq!(
        report_in(env.dir.path(), &["report", "--target-dir"]).code,
        2
    );
    assert_eq!(report_in(env.dir.path(), &["report", "--open"]).code, 2);
}

#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    // `cargo proposal-eval report | true`: the reader is gone before anything is written.
    let env = Env::new();
    env.write("Cargo.toml", "[package]\nname = \"demo\"\n");
    write_entry(&env, "target", &entry(&env, "evals", "a", true));
    write_entry(&env, "target", &entry(&env, "evals", "b", false));
    let out = run_into_closed_pipe(env.dir.path(), &["report"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stderr, "", "no panic, no message");
    assert!(
        env.path("target/proposal-eval/report.html").is_file(),
        "the report is still built"
    );
    // Help and version print too.
    for args in [&["--help"][..], &["--version"], &["report", "--help"]] {
        let out = run_into_closed_pipe(env.dir.path(), args);
        assert_eq!((out.code, out.stderr.as_str()), (0, ""), "{args:?}");
    }
}

/// An XML element: its depth, name, attributes and the text directly inside it.
type Element = (usize, String, Vec<(String, String)>, String);

/// The elements of an XML document, in order, as (depth, name, attributes, text inside),
/// read by a real XML reader: a document it refuses (unescaped markup, an unclosed element, a
/// character XML cannot hold) fails the test.
fn xml_elements(xml: &str) -> Vec<Element> {
    use quick_xml::events::{BytesStart, Event};
    fn element(depth: usize, e: &BytesStart) -> Element {
        let name = String::from_utf8(e.name().as_ref().to_vec()).unwrap();
        let attrs = e
            .attributes()
            .map(|a| {
                let a = a.expect("a well-formed attribute");
                (
                    String::from_utf8(a.key.as_ref().to_vec()).unwrap(),
                    a.unescape_value().expect("escaped properly").into_owned(),
                )
            })
            .collect();
        (depth, name, attrs, String::new())
    }
    let mut reader = quick_xml::Reader::from_str(xml);
    reader.config_mut().check_end_names = true;
    let mut out: Vec<Element> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    loop {
        match reader.read_event().expect("well-formed XML") {
            Event::Start(e) => {
                out.push(element(open.len(), &e));
                open.push(out.len() - 1);
            }
            Event::Empty(e) => out.push(element(open.len(), &e)),
            Event::Text(t) => {
                if let Some(&i) = open.last() {
                    out[i].3.push_str(&t.xml10_content().unwrap());
                }
            }
            Event::GeneralRef(r) => {
                let c = match r.resolve_char_ref().expect("a valid character reference") {
                    Some(c) => c,
                    None => match &*String::from_utf8(r.to_vec()).unwrap() {
                        "amp" => '&',
                        "lt" => '<',
                        "gt" => '>',
                        "quot" => '"',
                        "apos" => '\'',
                        other => panic!("unknown entity &{other};"),
                    },
                };
                if let Some(&i) = open.last() {
                    out[i].3.push(c);
                }
            }
            Event::End(_) => {
                open.pop();
            }
            Event::Eof => break,
            _ => {}
        }
    }
    assert!(open.is_empty(), "every element is closed");
    for (_, _, attrs, text) in &out {
        for value in attrs.iter().map(|(_, v)| v).chain([text]) {
            assert!(
                !value
                    .chars()
                    .any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r')),
                "a character XML 1.0 cannot hold: {value:?}"
            );
        }
    }
    out
}

fn attr<'a>(attrs: &'a [(String, String)], name: &str) -> &'a str {
    attrs
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no attribute {name} in {attrs:?}"))
}

#[test]
fn junit_xml_of_the_last_run() {
    let env = Env::new();
    env.write("Cargo.toml", "[package]\nname = \"demo\"\n");
    write_entry(&env, "target", &entry(&env, "evals", "a", true));
    let mut failing = entry(&env, "evals", "b", false);
    // Everything XML needs escaped, and characters it cannot hold at all.
    failing.failure = Some(
        "suite/b: field_accuracy FAILED <total> & \"more\" 'quoted'\n-1\n+2 \u{1b}[31m\u{7}".into(),
    );
    write_entry(&env, "target", &failing);
    write_entry(&env, "target", &entry(&env, "other", "c", true));

    let out = report_in(env.dir.path(), &["report", "--junit", "out/junit.xml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("junit: out/junit.xml"),
        "{}",
        out.stdout
    );
    let xml = env.read("out/junit.xml");
    assert!(
        xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"),
        "{xml}"
    );
    let elements = xml_elements(&xml);

    let (depth, name, attrs, _) = &elements[0];
    assert_eq!((*depth, name.as_str()), (0, "testsuites"));
    assert_eq!(
        (
            attr(attrs, "tests"),
            attr(attrs, "failures"),
            attr(attrs, "errors")
        ),
        ("3", "1", "0")
    );
    let suites: Vec<_> = elements.iter().filter(|e| e.1 == "testsuite").collect();
    assert_eq!(suites.len(), 2, "one per suite and binary");
    assert!(suites.iter().all(|s| s.0 == 1));
    assert_eq!(attr(&suites[0].2, "name"), "suite (demo/evals)");
    assert_eq!(
        (attr(&suites[0].2, "tests"), attr(&suites[0].2, "failures")),
        ("2", "1")
    );
    assert_eq!(attr(&suites[1].2, "name"), "suite (demo/other)");
    let cases: Vec<_> = elements.iter().filter(|e| e.1 == "testcase").collect();
    assert_eq!(cases.len(), 3);
    assert!(
        cases.iter().all(|c| c.0 == 2),
        "testcases sit in their testsuite"
    );
    assert_eq!(
        cases.iter().map(|c| attr(&c.2, "name")).collect::<Vec<_>>(),
        ["suite::a", "suite::b", "suite::c"]
    );
    assert_eq!(attr(&cases[1].2, "classname"), "demo.evals.suite");
    let failures: Vec<_> = elements.iter().filter(|e| e.1 == "failure").collect();
    assert_eq!(failures.len(), 1, "only the failing case");
    let (depth, _, attrs, body) = failures[0];
    assert_eq!(*depth, 3, "inside its testcase");
    assert_eq!(
        attr(attrs, "message"),
        "suite/b: field_accuracy FAILED <total> & \"more\" 'quoted'"
    );
    assert_eq!(attr(attrs, "type"), "field_accuracy");
    assert!(
        body.contains("<total> & \"more\"") && body.contains("\n-1\n+2 "),
        "{body}"
    );
    assert!(
        body.ends_with("\\u{1b}[31m\\u{7}"),
        "control characters spelled out: {body}"
    );
    let scores: Vec<&str> = elements
        .iter()
        .filter(|e| e.1 == "property" && attr(&e.2, "name") == "score")
        .map(|e| attr(&e.2, "value"))
        .collect();
    assert_eq!(scores, ["1", "0.5", "1"]);

    // A file that cannot be written is an error naming it.
    env.write("blocked", "");
    let out = report_in(env.dir.path(), &["report", "--junit", "blocked/junit.xml"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("cannot write the JUnit file blocked/junit.xml"),
        "{}",
        out.stderr
    );
    assert_eq!(report_in(env.dir.path(), &["report", "--junit"]).code, 2);
}
