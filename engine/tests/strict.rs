//! The strict comparison as a user meets it: a `[strict]` config, two documents, the verdict and
//! its failure text.

use proposal_eval_engine::compare::{evaluate, StrictConfig, StrictVerdict};
use proposal_eval_engine::transform::Context;
use serde_json::{json, Value};
use std::borrow::Cow;

const TODAY: &str = "2025-03-04T00:00:00Z";

fn ctx() -> Context {
    Context::at("2025-03-04T15:16:17Z".parse().unwrap())
}

fn strict(toml_body: &str) -> StrictConfig {
    toml::from_str(toml_body).unwrap_or_else(|e| panic!("{e}"))
}

fn run(e: &Value, a: &Value, c: &StrictConfig) -> StrictVerdict<'static> {
    evaluate(e, a, c, None, &ctx()).into_owned()
}

/// The mismatch lines, as the failure output prints them.
fn lines(v: &StrictVerdict<'_>) -> Vec<String> {
    v.mismatches.iter().map(|m| m.to_string()).collect()
}

#[test]
fn a_blocked_add_leaves_nothing_behind() {
    // `meta` is missing on both sides, so `meta[0]` cannot be written: before the fix the
    // expected side got a stray `"meta": {}` and the case failed on it.
    let config = strict(
        r#"
[transformers."meta[0].date"]
transform = "today_utc_midnight"
strategy = "add_missing_only"
"#,
    );
    let expected = json!([{"x": 1}]);
    let actual = json!([{"x": 1}]);
    let v = evaluate(&expected, &actual, &config, None, &ctx());
    assert!(v.passed(), "{}", v.render(false));
    assert!(
        matches!(v.expected_normalized, Cow::Borrowed(_)),
        "a skipped write copies nothing"
    );
    assert_eq!(*v.expected_normalized, expected);
}

#[test]
fn what_blocks_an_add_is_reported_where_the_sides_differ() {
    let config = strict(
        r#"
[transformers."data.date"]
transform = "today_utc_midnight"
on_missing = "add"
on_existing = "skip"
apply_to = "both"
"#,
    );
    // Blocked on both sides, which agree: nothing to report.
    let expected = json!({"data": "n/a"});
    let v = run(&expected, &expected, &config);
    assert!(v.passed(), "{}", v.render(false));
    // Blocked on the expected side only: the string in the way is the difference shown.
    let actual = json!({"data": {}});
    let v = run(&expected, &actual, &config);
    assert_eq!(
        lines(&v),
        [r#"data: type differs: expected a string "n/a", actual an object"#]
    );
    assert_eq!(*v.expected_normalized, expected);
    assert_eq!(*v.actual_normalized, json!({"data": {"date": TODAY}}));
}
