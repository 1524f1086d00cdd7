//! `cargo proposal-eval report --merge PATH...`: the report of several machines' runs.

use crate::common::Env;
use crate::report::{entry, report_in, report_of};
use crate::workflow::support;
use proposal_eval::__internal::report::Entry;
use serde_json::Value;

fn journal(entries: &[Entry]) -> String {
    entries
        .iter()
        .map(|e| serde_json::to_string(e).unwrap() + "\n")
        .collect()
}

fn of_run(mut entry: Entry, run: &str, at: &str) -> Entry {
    entry.run = Some(run.into());
    entry.finished_at = at.parse().unwrap();
    entry
}

#[test]
fn merges_machines_journals_and_reports_into_one_report_and_junit() {
    let env = Env::new();
    env.write("Cargo.toml", "[package]\nname = \"demo\"\n");
    // Machine 1 kept its target/proposal-eval (a run journal); machine 2 sent its report.json.
    env.write(
        "m1/target/proposal-eval/runs/r1.jsonl",
        &journal(&[
            of_run(
                entry(&env, "evals", "a", true),
                "r1",
                "2026-01-01T00:00:00Z",
            ),
            of_run(
                entry(&env, "evals", "b", false),
                "r1",
                "2026-01-01T00:00:01Z",
            ),
        ]),
    );
    let two = report_of(&[of_run(
        entry(&env, "evals", "c", true),
        "r2",
        "2026-01-01T00:00:02Z",
    )]);
    env.write("m2/report.json", &serde_json::to_string(&two).unwrap());

    let out = report_in(
        env.dir.path(),
        &[
            "report",
            "--merge",
            "m1/target/proposal-eval",
            "m2/report.json",
            "--junit",
            "merged.xml",
        ],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .starts_with("merged 3 case(s) from 2 source(s)\nsuite  binary"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.lines().any(|l| l
            == "total                  3       2       1      66.7%    20.8-93.9%         2         1      0"),
        "{}",
        out.stdout
    );
    let report: Value =
        serde_json::from_str(&env.read("target/proposal-eval/report.json")).unwrap();
    assert_eq!(report["totals"]["cases"], 3);
    assert_eq!(report["totals"]["failed"], 1);
    assert_eq!(
        report["totals"]["older"], 0,
        "each machine's run is current"
    );
    assert!(env.path("target/proposal-eval/report.html").is_file());
    let junit = env.read("merged.xml");
    assert!(
        junit.contains("<testsuites name=\"proposal-eval\" tests=\"3\" failures=\"1\""),
        "{junit}"
    );
    assert_eq!(junit.matches("<testcase ").count(), 3);

    // A line that is no entry stops the merge, naming its file and line.
    env.write("m3/runs/r3.jsonl", "{\"package\": \"demo\"}\n");
    let out = report_in(env.dir.path(), &["report", "--merge", "m1", "m3/runs"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert_eq!(
        out.stderr,
        format!(
            "error: {}:1:19: not a report entry: missing field `binary`; each line of a run journal is one entry as a test run writes it (remove the line, or run that machine's tests again)\n",
            std::path::Path::new("m3/runs/r3.jsonl").display()
        )
    );
    let out = report_in(env.dir.path(), &["report", "--merge"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.starts_with("error: "), "{}", out.stderr);
}

/// `report.json` without what differs between two runs of the same cases: when each case ran,
/// in which run, when the report was written, and the code's output (the example stamps it with
/// the time and a request id of its run).
fn without_times(mut report: Value) -> Value {
    report["generated_at"] = Value::Null;
    report["latest_run"] = Value::Null;
    for suite in report["suites"].as_array_mut().unwrap() {
        suite["last_finished_at"] = Value::Null;
    }
    for case in report["cases"].as_array_mut().unwrap() {
        let case = case.as_object_mut().unwrap();
        case.remove("finished_at");
        case.remove("run");
        case.remove("output");
        // Where the story is: each machine's journal.
        case.remove("story");
    }
    report
}

/// The entry lines below a machine's `target/proposal-eval` (its journals).
fn entry_lines(machine: &std::path::Path) -> usize {
    fn walk(dir: &std::path::Path, lines: &mut usize) {
        for item in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = item.path();
            if path.is_dir() {
                walk(&path, lines);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                *lines += std::fs::read_to_string(&path).unwrap().lines().count();
            }
        }
    }
    let mut lines = 0;
    walk(&machine.join("target/proposal-eval"), &mut lines);
    lines
}

/// The CI shape of docs/reference/ci.md on `examples/payments-agent`: one nextest archive, three
/// "machines" that each extract it into a folder of their own and run one `--partition
/// hash:K/3`, and `report --merge` of their three folders: the report one machine makes of a
/// whole run of the same archive, every case, verdict, score and field accuracy alike. Skipped,
/// saying so, where cargo-nextest is not installed.
#[test]
fn three_partitions_on_three_machines_merge_into_the_whole_runs_report() {
    let _cargo = support::lock();
    let example = support::Example::new();
    if !example.run(&["nextest", "--version"], &[]).success {
        println!("skipped: cargo-nextest is not installed (cargo install cargo-nextest --locked)");
        return;
    }
    // Two failing cases: a strict mismatch each.
    for case in ["changes/raise_amount", "changes/new_iban"] {
        let path = format!("{}/{case}.json", support::SUITE);
        let text = example.read(&path);
        let edited = text.replacen("\"changeType\": \"change\"", "\"changeType\": \"other\"", 1);
        assert_ne!(edited, text, "{case} is edited");
        example.write(&path, edited);
    }
    let work = tempfile::tempdir().unwrap();
    let archive = work.path().join("evals.tar.zst");
    let archive = archive.to_str().unwrap();
    let built = example.run(
        &[
            "nextest",
            "archive",
            "--test",
            "evals",
            "--archive-file",
            archive,
        ],
        &[],
    );
    assert!(built.success, "{}", built.text());
    // As docs/reference/ci.md runs it: in the checkout, extracting into a folder of its own.
    let machine = |name: &str, partition: Option<&str>| {
        let relative = format!("machines/{name}");
        let dir = example.root.join(&relative);
        std::fs::create_dir_all(&dir).unwrap();
        let mut args = vec![
            "nextest",
            "run",
            "--archive-file",
            archive,
            "--workspace-remap",
            ".",
            "--extract-to",
            &relative,
            "--no-fail-fast",
            "--color",
            "never",
        ];
        if let Some(partition) = partition {
            args.extend(["--partition", partition]);
        }
        let run = example.run(&args, &[("PAYMENTS_AGENT_FORBID_MODEL", "1")]);
        assert!(
            run.stderr.contains(" FAIL ") || run.stderr.contains(" PASS "),
            "{name} ran no test:\n{}",
            run.text()
        );
        dir
    };
    let whole = machine("whole", None);
    let parts: Vec<_> = (1..=3)
        .map(|k| machine(&format!("m{k}"), Some(&format!("hash:{k}/3"))))
        .collect();

    // Each machine ran part of the cases, and together all of them.
    let ran: Vec<usize> = parts.iter().map(|p| entry_lines(p)).collect();
    assert!(ran.iter().all(|&n| n > 0 && n < 22), "{ran:?}");
    assert_eq!(ran.iter().sum::<usize>(), 22, "{ran:?}");

    let one = crate::common::run_in(
        &example.root,
        &[
            "report",
            "--target-dir",
            whole.join("target").to_str().unwrap(),
        ],
    );
    assert_eq!(one.code, 0, "{}{}", one.stdout, one.stderr);
    let merged_target = work.path().join("merged/target");
    let junit = work.path().join("merged.xml");
    let mut args = vec!["report", "--merge"];
    args.extend(parts.iter().map(|p| p.to_str().unwrap()));
    args.extend([
        "--target-dir",
        merged_target.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
    ]);
    let merged = crate::common::run_in(&example.root, &args);
    assert_eq!(merged.code, 0, "{}{}", merged.stdout, merged.stderr);
    assert!(
        merged
            .stdout
            .starts_with("merged 22 case(s) from 3 source(s)\n"),
        "{}",
        merged.stdout
    );

    let read = |target: &std::path::Path| -> Value {
        let text = std::fs::read_to_string(target.join("proposal-eval/report.json")).unwrap();
        without_times(serde_json::from_str(&text).unwrap())
    };
    let (one, merged) = (read(&whole.join("target")), read(&merged_target));
    assert_eq!(merged["totals"]["cases"], 22, "{merged:#}");
    assert_eq!(merged["totals"]["failed"], 2);
    assert_eq!(merged["totals"]["older"], 0);
    assert_eq!(merged["totals"], one["totals"]);
    assert_eq!(
        merged["suites"], one["suites"],
        "per suite: field accuracy, evaluators"
    );
    let (cases, whole_cases) = (
        merged["cases"].as_array().unwrap(),
        one["cases"].as_array().unwrap(),
    );
    assert_eq!(cases.len(), whole_cases.len());
    for (case, whole_case) in cases.iter().zip(whole_cases) {
        assert_eq!(
            case, whole_case,
            "per case: verdict, score, evaluators, failure"
        );
    }
    assert_eq!(merged, one);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("<testsuites name=\"proposal-eval\" tests=\"22\" failures=\"2\""),
        "{xml}"
    );
}
