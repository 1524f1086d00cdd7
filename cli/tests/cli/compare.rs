//! `report --save`, `report --compare` and `compare`, through the built binary.

use crate::common::*;
use crate::report::{entry, report_in, report_of, write_entry};
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
        text.contains("regressions (1):\n  suite::a (demo/evals): pass -> FAIL, score 1 -> 0.50\n      invoice.total: outside tolerance\n"),
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
        md.contains("#### Regressions (1)\n\n| case | binary | verdict | score | why |\n|---|---|---|---:|---|\n| `suite::a` | demo/evals | pass → FAIL | 1 → 0.50 | invoice.total: outside tolerance |"),
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
            .contains("compared with main in report.html: 1 regression, 1 fix, 1 score change, 0 field changes, 1 added, 1 removed; overall: no significant change at alpha 0.05\n"),
        "{}",
        out.stdout
    );
    // The page carries the comparison as JSON beside the report, for its script to draw.
    let html = env.read("target/proposal-eval/report.html");
    let data = "<script type=\"application/json\" id=\"compare-data\">";
    let compared = &html[html.find(data).expect("the comparison's data") + data.len()..];
    let compared = &compared[..compared.find("</script>").unwrap()];
    let compared: serde_json::Value = serde_json::from_str(compared).unwrap();
    assert_eq!(
        compared["overall"]["verdict"], "no_significant_change",
        "{compared:#}"
    );
    assert!(compared.to_string().contains("suite::a"), "{compared:#}");
    // A plain fold leaves it out again.
    assert_eq!(report_in(env.dir.path(), &["report"]).code, 0);
    assert!(env
        .read("target/proposal-eval/report.html")
        .contains(&format!("{data}null</script>")));
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
            &["compare", "main", "--alpha", "0"],
            "--alpha \"0\" is not a significance level: give a number above 0 and below 1 (default 0.05)",
        ),
        (
            &["compare", "main", "--alpha", "5%"],
            "--alpha \"5%\" is not a significance level",
        ),
        (
            &["compare", "main", "--fail-on", "any"],
            "--fail-on \"any\" is not a choice: use regression (any case from pass to fail, the default) or significant (a significant suite regression)",
        ),
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
        .contains("Exit status: 0 when no case regressed (with --fail-on significant: no significant regression);\n1 when one did"));
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
    let report: serde_json::Value =
        serde_json::from_str(&env.read("target/proposal-eval/report.json")).unwrap();
    assert_eq!(report["cases"][1]["samples"]["passed"], 2, "{report:#}");

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

/// A case of `suite` (in `fixtures/<suite>`) that made one model call of 100 input tokens.
fn case(env: &Env, suite: &str, name: &str, passed: bool, call: (u64, f64, f64)) -> Entry {
    let mut e = entry(env, "evals", name, passed);
    e.suite = suite.into();
    e.suite_dir = format!("fixtures/{suite}");
    e.test = format!("{suite}::{name}");
    let (output_tokens, latency_ms, cost_usd) = call;
    e.usage = serde_json::from_value(serde_json::json!({
        "calls": 1, "input_tokens": 100, "output_tokens": output_tokens,
        "latency_ms": latency_ms, "cost_usd": cost_usd
    }))
    .unwrap();
    e
}

/// `cases` cases of `suite`, the first `failing` of them failing.
fn suite_run(
    env: &Env,
    suite: &str,
    cases: usize,
    failing: usize,
    call: (u64, f64, f64),
) -> Vec<Entry> {
    (0..cases)
        .map(|i| case(env, suite, &format!("c{i:02}"), i >= failing, call))
        .collect()
}

/// Saves the report of `entries` as `file`, as `report --save` would keep it.
fn save(env: &Env, file: &str, entries: Vec<Entry>) {
    let mut report = report_of(&entries);
    report.generated_at = "2025-01-15T10:00:00Z".parse().unwrap();
    env.write(file, &serde_json::to_string_pretty(&report).unwrap());
}

#[test]
fn significance_verdicts_p_values_and_exit_codes() {
    let env = Env::new();
    let before = (20, 250.0, 0.0003);
    let after = (30, 400.0, 0.0004);
    // Pair A, significant: 10 of checkout's 40 cases go from pass to fail, none the other way;
    // refunds' 10 cases pass on both sides.
    let mut a = suite_run(&env, "checkout", 40, 0, before);
    a.extend(suite_run(&env, "refunds", 10, 0, before));
    save(&env, "a-before.json", a);
    let mut a = suite_run(&env, "checkout", 40, 10, after);
    a.extend(suite_run(&env, "refunds", 10, 0, after));
    save(&env, "a-after.json", a);
    // Pair B, not significant at 0.05: 5 of 40 go from pass to fail (p = 2/2^5 = 0.0625).
    save(
        &env,
        "b-before.json",
        suite_run(&env, "checkout", 40, 0, before),
    );
    save(
        &env,
        "b-after.json",
        suite_run(&env, "checkout", 40, 5, after),
    );

    let compare = |pair: &str, options: &[&str]| {
        let (before, after) = (format!("{pair}-before.json"), format!("{pair}-after.json"));
        let mut args = vec!["compare", &before, &after];
        args.extend_from_slice(options);
        report_in(env.dir.path(), &args)
    };

    // Reference values: Wilson bounds, McNemar tails and t intervals computed with mpmath 1.3.0
    // (as in engine/src/stats.rs's tests): Wilson(40/40) = [91.24%, 100%], Wilson(30/40) =
    // [59.81%, 85.81%], Wilson(50/50) = [92.87%, 100%], Wilson(40/50) = [66.96%, 88.76%],
    // Wilson(10/10) = [72.25%, 100%]; McNemar(10, 0) = 2/2^10 = 0.00195; checkout's scores
    // (ten -0.5, thirty 0) have mean -0.125, 95% t interval [-0.1951, -0.0549], p = 0.00087.
    let out = compare("a", &[]);
    assert_eq!(
        out.code, 1,
        "10 cases went from pass to fail: {}",
        out.stderr
    );
    let text = &out.stdout;
    assert!(
        text.contains(
            "significance at alpha 0.05 (95% intervals):
  overall: regressed
    pass rate 100.0% [92.9%, 100.0%] -> 80.0% [67.0%, 88.8%]
    50 paired: 10 pass -> fail, 0 fail -> pass (McNemar p = 0.002)
    score change -0.100 [-0.157, -0.043] over 50 cases (p = 0.001)
    smallest detectable change: 16.3 pp (pass rate), 0.082 (score)
    calls 50 -> 50 (+0.0%), tokens 6000 -> 6500 (+8.3%), latency 12.5 s -> 20.0 s (+60.0%), cost $0.0150 -> $0.0200 (+33.3%)
  checkout (demo/evals): regressed
    pass rate 100.0% [91.2%, 100.0%] -> 75.0% [59.8%, 85.8%]
    40 paired: 10 pass -> fail, 0 fail -> pass (McNemar p = 0.002)
    score change -0.125 [-0.195, -0.055] over 40 cases (p = 0.0009)
    smallest detectable change: 19.9 pp (pass rate), 0.100 (score)
    calls 40 -> 40 (+0.0%), tokens 4800 -> 5200 (+8.3%), latency 10.0 s -> 16.0 s (+60.0%), cost $0.0120 -> $0.0160 (+33.3%)
  refunds (demo/evals): no significant change
    pass rate 100.0% [72.2%, 100.0%] -> 100.0% [72.2%, 100.0%]
    10 paired: 0 pass -> fail, 0 fail -> pass (McNemar p = 1)
    score change +0.000 [+0.000, +0.000] over 10 cases (p = 1)
    smallest detectable change: 60.0 pp (pass rate)
    calls 10 -> 10 (+0.0%), tokens 1200 -> 1300 (+8.3%), latency 2.5 s -> 4.0 s (+60.0%), cost $0.0030 -> $0.0040 (+33.3%)
"
        ),
        "{text}"
    );
    assert!(
        text.ends_with("; 40 unchanged\noverall: regressed at alpha 0.05 (McNemar p = 0.002)\n"),
        "{text}"
    );
    assert_eq!(compare("a", &["--fail-on", "significant"]).code, 1);
    assert_eq!(compare("a", &["--fail-on", "regression"]).code, 1);
    // At 0.001 the ten flips are not enough (0.00195 > 0.001).
    let out = compare("a", &["--fail-on", "significant", "--alpha", "0.001"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(
        out.stdout
            .contains("overall: no significant change at alpha 0.001 (McNemar p = 0.002)"),
        "{}",
        out.stdout
    );
    let json: Value = serde_json::from_str(&compare("a", &["--format", "json"]).stdout).unwrap();
    assert_eq!(json["alpha"], 0.05);
    assert_eq!(json["overall"]["verdict"], "regressed");
    assert_eq!(json["overall"]["p_value"], 0.001953125);
    assert_eq!(json["overall"]["pass_to_fail"], 10);
    assert_eq!(json["overall"]["new_usage"]["output_tokens"], 1500);
    let suites = json["suites"].as_array().unwrap();
    assert_eq!(
        suites
            .iter()
            .map(|s| (s["suite"].as_str().unwrap(), s["verdict"].as_str().unwrap()))
            .collect::<Vec<_>>(),
        [
            ("checkout", "regressed"),
            ("refunds", "no_significant_change")
        ]
    );
    let checkout = &suites[0];
    assert_eq!(checkout["new"]["passed"], 30);
    assert!((checkout["new"]["interval"]["low"].as_f64().unwrap() - 0.598_06).abs() < 1e-5);
    assert!((checkout["score"]["interval"]["low"].as_f64().unwrap() + 0.195_124).abs() < 1e-6);
    assert_eq!(suites[1]["min_detectable_pass_rate"], 0.6);
    assert_eq!(suites[1]["min_detectable_score"], Value::Null);

    // Pair B: five flips of forty; McNemar(5, 0) = 2/2^5 = 0.0625.
    let out = compare("b", &[]);
    assert_eq!(
        out.code, 1,
        "by default any pass-to-fail case fails: {}",
        out.stderr
    );
    assert!(
        out.stdout.contains(
            "  checkout (demo/evals): no significant change
    pass rate 100.0% [91.2%, 100.0%] -> 87.5% [73.9%, 94.5%]
    40 paired: 5 pass -> fail, 0 fail -> pass (McNemar p = 0.0625)
"
        ),
        "{}",
        out.stdout
    );
    let out = compare("b", &["--fail-on", "significant"]);
    assert_eq!(out.code, 0, "not significant at 0.05: {}", out.stdout);
    let out = compare("b", &["--fail-on", "significant", "--alpha", "0.1"]);
    assert_eq!(out.code, 1, "significant at 0.1: {}", out.stdout);
    assert!(
        out.stdout
            .contains("overall: regressed at alpha 0.1 (McNemar p = 0.0625)"),
        "{}",
        out.stdout
    );
    let json: Value = serde_json::from_str(&compare("b", &["--format", "json"]).stdout).unwrap();
    assert_eq!(json["overall"]["verdict"], "no_significant_change");
    assert_eq!(json["overall"]["p_value"], 0.0625);
    let md = compare("b", &["--format", "markdown"]).stdout;
    assert!(
        md.contains("Overall: **no significant change** at alpha 0.05 (McNemar p = 0.0625).\n"),
        "{md}"
    );
    assert!(
        md.contains("#### Significance (alpha 0.05; 95% intervals)\n\n| | verdict | pass rate before | pass rate now | pass → fail | fail → pass | McNemar p | score change | detectable |\n"),
        "{md}"
    );
    assert!(
        md.contains("| checkout (demo/evals) | no significant change | 100.0% [91.2%, 100.0%] | 87.5% [73.9%, 94.5%] | 5 | 0 | 0.0625 | -0.062 [-0.116, -0.009] over 40 cases (p = 0.0234) | 15.2 pp (pass rate), 0.076 (score) |\n"),
        "{md}"
    );
    assert!(
        md.contains("- checkout (demo/evals): calls 40 → 40 (+0.0%), tokens 4800 → 5200 (+8.3%), latency 10.0 s → 16.0 s (+60.0%), cost $0.0120 → $0.0160 (+33.3%)\n"),
        "{md}"
    );
    let md = compare("b", &["--format", "markdown", "--alpha", "0.1"]).stdout;
    assert!(md.contains("| **overall** | **regressed** |"), "{md}");
}
