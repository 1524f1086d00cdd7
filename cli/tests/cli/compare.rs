//! `report --save`, `report --compare` and `compare`, through the built binary.

use crate::common::*;
use crate::report::{entry, report_in, write_entry};
use proposal_eval::__internal::report::Entry;
use serde_json::Value;

fn with_score(mut e: Entry, score: f64) -> Entry {
    e.score = Some(score);
    e.evaluators[0].score = score;
    e
}

/// A crate whose last run left cases a (pass), b (fail), c (pass, 0.9), gone (pass).
fn baseline_run() -> Env {
    let env = Env::new();
    env.write("Cargo.toml", "[package]\nname = \"demo\"\n");
    write_entry(&env, "target", &entry(&env, "evals", "a", true));
    write_entry(&env, "target", &entry(&env, "evals", "b", false));
    write_entry(
        &env,
        "target",
        &with_score(entry(&env, "evals", "c", true), 0.9),
    );
    write_entry(&env, "target", &entry(&env, "evals", "gone", true));
    env
}

/// The next run: a fails (regression), b passes (fix), c passes at 0.5 (a score change), gone
/// is deleted, new is added.
fn next_run(env: &Env) {
    let mut a = entry(env, "evals", "a", false);
    a.finished_at = "2025-01-16T10:00:00Z".parse().unwrap();
    a.failure = Some("suite/a: field_accuracy FAILED (score 0.5)\nmore".into());
    write_entry(env, "target", &a);
    let mut b = entry(env, "evals", "b", true);
    b.finished_at = a.finished_at;
    write_entry(env, "target", &b);
    let mut c = with_score(entry(env, "evals", "c", true), 0.5);
    c.finished_at = a.finished_at;
    write_entry(env, "target", &c);
    std::fs::remove_file(env.path("suite/gone.json")).unwrap();
    let mut new = entry(env, "evals", "new", true);
    new.finished_at = a.finished_at;
    write_entry(env, "target", &new);
}

#[test]
fn save_a_baseline_then_compare_the_next_run_with_it() {
    let env = baseline_run();
    let out = report_in(env.dir.path(), &["report", "--save", "main"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("baseline main: target/proposal-eval/baselines/main.json"),
        "{}",
        out.stdout
    );
    let saved: Value = env.json("target/proposal-eval/baselines/main.json");
    assert_eq!(saved, env.json("target/proposal-eval/report.json"));

    // Nothing changed yet: exit 0.
    let out = report_in(env.dir.path(), &["compare", "main"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("0 regressions, 0 fixes, 0 score changes, 0 field changes, 0 added, 0 removed; 4 unchanged"),
        "{}",
        out.stdout
    );

    next_run(&env);
    let out = report_in(env.dir.path(), &["compare", "main"]);
    assert_eq!(out.code, 1, "a regression: {}\n{}", out.stdout, out.stderr);
    let text = &out.stdout;
    assert!(text.starts_with("compare: main ("), "{text}");
    assert!(text.contains("-> current report ("), "{text}");
    assert!(
        text.contains("cases: 4 -> 4; passed: 3 -> 3; pass rate: 75.0% -> 75.0% (0.0 pp)"),
        "{text}"
    );
    assert!(
        text.contains("regressions (1):\n  suite::a (demo/evals): pass -> FAIL, score 1 -> 0.50\n      field_accuracy 0.50\n"),
        "{text}"
    );
    assert!(
        text.contains("fixes (1):\n  suite::b (demo/evals): FAIL -> pass, score 0.50 -> 1\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "score changes of at least 0.01 (1):\n   -0.40  suite::c (demo/evals): 0.90 -> 0.50\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("added (1):\n  suite::new (demo/evals)\n"),
        "{text}"
    );
    assert!(
        text.contains("removed (1):\n  suite::gone (demo/evals)\n"),
        "{text}"
    );
    // invoice.total: hit in a, c, gone (3 of 4: b missed it) before; in b, c, new now (3 of 4).
    assert!(
        text.contains(
            "1 regression, 1 fix, 1 score change, 0 field changes, 1 added, 1 removed; 0 unchanged"
        ),
        "{text}"
    );

    // A larger --min-delta leaves the score change out; regressions are listed whatever it is.
    let out = report_in(env.dir.path(), &["compare", "main", "--min-delta", "0.5"]);
    assert_eq!(out.code, 1);
    assert!(out.stdout.contains("0 score changes"), "{}", out.stdout);
    assert!(out.stdout.contains("regressions (1)"), "{}", out.stdout);

    let out = report_in(env.dir.path(), &["compare", "main", "--format", "json"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let json: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(json["base"]["name"], "main");
    assert_eq!(json["new"]["name"], "current report");
    assert_eq!(json["min_delta"], 0.01);
    assert_eq!(json["regressions"][0]["test"], "suite::a");
    assert_eq!(json["regressions"][0]["base_passed"], true);
    assert_eq!(json["regressions"][0]["new_passed"], false);
    assert_eq!(json["regressions"][0]["delta"], -0.5);
    assert_eq!(json["fixes"][0]["case"], "b");
    assert_eq!(json["score_changes"][0]["case"], "c");
    assert_eq!(json["added"][0]["case"], "new");
    assert_eq!(json["removed"][0]["case"], "gone");
    assert_eq!(json["removed"][0]["new_passed"], Value::Null);

    let out = report_in(env.dir.path(), &["compare", "main", "--format", "markdown"]);
    assert_eq!(out.code, 1);
    let md = &out.stdout;
    assert!(
        md.starts_with("### proposal-eval: `main` → `current report`\n"),
        "{md}"
    );
    assert!(md.contains("**1 regression**"), "{md}");
    assert!(
        md.contains("| pass rate | 75.0% | 75.0% | 0.0 pp |"),
        "{md}"
    );
    assert!(
        md.contains("#### Regressions (1)\n\n| case | binary | verdict | score | why |\n|---|---|---|---:|---|\n| `suite::a` | demo/evals | pass → FAIL | 1 → 0.50 | field_accuracy 0.50 |"),
        "{md}"
    );
    assert!(
        md.contains("<details><summary>Score changes of at least 0.01 (1)</summary>"),
        "{md}"
    );
    assert!(
        md.contains("| -0.40 | `suite::c` | demo/evals | 0.90 → 0.50 |"),
        "{md}"
    );

    // Two paths need no crate around them.
    let elsewhere = tempfile::tempdir().unwrap();
    let saved = env.path("target/proposal-eval/baselines/main.json");
    let out = crate::common::run_in(
        elsewhere.path(),
        &["compare", saved.to_str().unwrap(), saved.to_str().unwrap()],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("; 4 unchanged"), "{}", out.stdout);

    // Both sides as paths: the baseline against itself, nothing changed.
    let out = report_in(
        env.dir.path(),
        &[
            "compare",
            "target/proposal-eval/baselines/main.json",
            "target/proposal-eval/baselines/main.json",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("; 4 unchanged"), "{}", out.stdout);

    // The HTML report shows the comparison when asked; the report's own exit status is kept.
    let out = report_in(env.dir.path(), &["report", "--compare", "main"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("compared with main in report.html: 1 regression, 1 fix"),
        "{}",
        out.stdout
    );
    let html = env.read("target/proposal-eval/report.html");
    let section = &html[html
        .find("<section id=\"comparison\">")
        .expect("the comparison section")..];
    assert!(section.contains("<h2>Compared with main</h2>"), "{section}");
    assert!(
        section.contains("<table id=\"regressions\">")
            && section.contains("data-test=\"suite::a\""),
        "{section}"
    );
    assert!(section.contains("<table id=\"fixes\">"), "{section}");
    // A plain rebuild leaves it out again.
    assert_eq!(report_in(env.dir.path(), &["report"]).code, 0);
    assert!(!env
        .read("target/proposal-eval/report.html")
        .contains("id=\"comparison\""));
}

#[test]
fn field_accuracy_changes_per_suite() {
    let env = Env::new();
    env.write("Cargo.toml", "[package]\nname = \"demo\"\n");
    write_entry(&env, "target", &entry(&env, "evals", "a", true));
    write_entry(&env, "target", &entry(&env, "evals", "b", true));
    assert_eq!(
        report_in(env.dir.path(), &["report", "--save", "before"]).code,
        0
    );
    // b fails on invoice.total: its accuracy goes from 2/2 to 1/2.
    let mut b = entry(&env, "evals", "b", false);
    b.finished_at = "2025-01-16T10:00:00Z".parse().unwrap();
    write_entry(&env, "target", &b);
    let out = report_in(env.dir.path(), &["compare", "before"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stdout.contains("accuracy per field (1):\n   -50.0 pp  invoice.total in suite (demo/evals): 100.0% (2/2) -> 50.0% (1/2)\n"),
        "{}",
        out.stdout
    );
    let json: Value = serde_json::from_str(
        &report_in(env.dir.path(), &["compare", "before", "--format", "json"]).stdout,
    )
    .unwrap();
    let f = &json["field_changes"][0];
    assert_eq!(
        (&f["path"], &f["base_accuracy"], &f["new_accuracy"]),
        (
            &Value::from("invoice.total"),
            &Value::from(1.0),
            &Value::from(0.5)
        )
    );
    assert_eq!(f["new_hits"], serde_json::json!([1, 2]));
}

#[test]
fn bad_baselines_and_arguments() {
    let env = baseline_run();
    assert_eq!(
        report_in(env.dir.path(), &["report", "--save", "main"]).code,
        0
    );

    let out = report_in(env.dir.path(), &["compare", "mian"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("no baseline named `mian` in target/proposal-eval/baselines (saved: main); save the current report as one with `cargo proposal-eval report --save mian`"),
        "{}",
        out.stderr
    );
    let out = report_in(env.dir.path(), &["compare", "elsewhere/report.json"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("no report at elsewhere/report.json"),
        "{}",
        out.stderr
    );

    env.write("broken.json", "{\n  \"format\": 1,\n  \"cases\": [\n");
    let out = report_in(env.dir.path(), &["compare", "broken.json"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("broken.json:4:1: not a run report"),
        "{}",
        out.stderr
    );
    env.write("newer.json", "{ \"format\": 7, \"whatever\": true }");
    let out = report_in(env.dir.path(), &["compare", "newer.json"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("newer.json: made by a newer proposal-eval (report format 7; this version reads up to 1)"),
        "{}",
        out.stderr
    );
    env.write("fixture.json", "{ \"input\": {}, \"expected\": [] }");
    let out = report_in(env.dir.path(), &["compare", "fixture.json"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("fixture.json: not a run report (no `format` number)"),
        "{}",
        out.stderr
    );

    for (args, says) in [
        (&["compare"][..], "compare needs the baseline"),
        (
            &["compare", "main", "--format", "xml"],
            "--format \"xml\" is not a format",
        ),
        (
            &["compare", "main", "--min-delta", "big"],
            "--min-delta \"big\" is not a number from 0 to 1",
        ),
        (
            &["compare", "main", "--min-delta", "2"],
            "--min-delta \"2\" is not a number from 0 to 1",
        ),
        (&["compare", "a", "b", "c"], "unexpected argument \"c\""),
        (
            &["report", "--save", "../up"],
            "--save \"../up\" is not a baseline name",
        ),
        (&["report", "--save", ".hidden"], "is not a baseline name"),
    ] {
        let out = report_in(env.dir.path(), args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{args:?}: {}", out.stderr);
    }
    let out = report_in(env.dir.path(), &["compare", "--help"]);
    assert_eq!(out.code, 0);
    assert!(out
        .stdout
        .contains("Exit status: 0 when no case regressed; 1 when one did"));
}

#[test]
fn repeated_cases_flaky_ones_and_pass_at_k() {
    use proposal_eval::__internal::repeat::{PassRule, Samples};
    let env = Env::new();
    env.write("Cargo.toml", "[package]\nname = \"demo\"\n");
    let repeated = |case: &str, runs: &[bool], at: &str| {
        let runs: Vec<(bool, Option<f64>)> = runs
            .iter()
            .map(|&p| (p, Some(if p { 1.0 } else { 0.0 })))
            .collect();
        let samples = Samples::new(&runs, PassRule::Majority);
        let mut e = entry(&env, "evals", case, samples.passed * 2 > runs.len());
        e.score = samples.mean_score;
        e.samples = Some(samples);
        e.finished_at = at.parse().unwrap();
        e
    };
    let day1 = "2025-01-15T10:00:00Z";
    write_entry(&env, "target", &repeated("a", &[true, true, true], day1));
    write_entry(&env, "target", &repeated("b", &[true, false, true], day1));
    let out = report_in(
        env.dir.path(),
        &["report", "--save", "steady", "--junit", "j.xml"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("repeats in suite (demo/evals): 2 case(s) of 3+ samples: pass@1 83.3%, pass@3 100.0%, pass^3 50.0%; 1 flaky\n  flaky: suite::b: 2 of 3 samples passed, mean score 0.67 ± 0.33\n"),
        "{}",
        out.stdout
    );
    assert!(env.read("j.xml").contains(
        "<property name=\"samples\" value=\"2 of 3 samples passed, mean score 0.67 ± 0.33\"/>"
    ));
    assert!(env
        .read("target/proposal-eval/report.html")
        .contains("0.67 ± 0.33 <span class=\"muted\">(2/3 samples)</span>"));

    // Next run: a turns flaky (still passing by majority), b stays flaky.
    let day2 = "2025-01-16T10:00:00Z";
    write_entry(&env, "target", &repeated("a", &[true, false, true], day2));
    write_entry(&env, "target", &repeated("b", &[false, true, true], day2));
    let out = report_in(env.dir.path(), &["compare", "steady"]);
    assert_eq!(
        out.code, 0,
        "no verdict changed: {}\n{}",
        out.stdout, out.stderr
    );
    let text = &out.stdout;
    assert!(
        text.contains("repeats (1):\n  suite (demo/evals): pass@1 83.3%, pass@3 100.0%, pass^3 50.0% -> pass@1 66.7%, pass@3 100.0%, pass^3 0.0%\n"),
        "{text}"
    );
    assert!(
        text.contains("flaky (2):\n  suite::a (demo/evals): 2 of 3 samples passed, mean score 0.67 ± 0.33; newly flaky\n  suite::b (demo/evals): 2 of 3 samples passed, mean score 0.67 ± 0.33; flaky before too\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "score changes of at least 0.01 (1):\n   -0.33  suite::a (demo/evals): 1 -> 0.67\n"
        ),
        "{text}"
    );
    let json: Value = serde_json::from_str(
        &report_in(env.dir.path(), &["compare", "steady", "--format", "json"]).stdout,
    )
    .unwrap();
    assert_eq!(json["flaky"][0]["case"], "a");
    assert_eq!(
        json["flaky"][0]["was_flaky"],
        Value::Null,
        "false is left out"
    );
    assert_eq!(json["flaky"][1]["was_flaky"], true);
    assert_eq!(json["repeats"][0]["base"]["pass_hat_k"], 0.5);
    assert_eq!(
        json["repeats"][0]["new"]["flaky"],
        serde_json::json!(["suite::a", "suite::b"])
    );
    let md = report_in(
        env.dir.path(),
        &["compare", "steady", "--format", "markdown"],
    )
    .stdout;
    assert!(
        md.contains(
            "- flaky: `suite::a`: 2 of 3 samples passed, mean score 0.67 ± 0.33 (newly flaky)"
        ),
        "{md}"
    );
}
