//! `cargo proposal-eval report --merge PATH...`: the report of several machines' runs.

use crate::common::Env;
use crate::report::{entry, report_in};
use proposal_eval::__internal::report::{Entry, Report};
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
    let two = Report::from_entries(vec![of_run(
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
