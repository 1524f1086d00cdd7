//! Snapshots of rendered strict failures: what a user reads under the case header.

use proposal_eval::compare::{evaluate, StrictConfig};
use proposal_eval::config::SuiteConfig;
use proposal_eval::transform::Context;
use serde_json::{json, Value};

fn ctx() -> Context {
    Context::at("2025-03-04T15:16:17Z".parse().unwrap())
}

fn strict(toml_body: &str) -> StrictConfig {
    SuiteConfig::from_toml_str(&format!("[strict]\n{toml_body}"), "proposal-eval.toml")
        .unwrap()
        .strict
}

fn render(expected: Value, actual: Value, config: &StrictConfig) -> String {
    evaluate(&expected, &actual, config, None, &ctx()).render(false)
}

#[test]
fn design_example() {
    let config = strict(
        r#"ignore_paths = ["mutationVariables.metadata.*"]
[strict.transformers."mutationVariables.data.effectiveDate"]
transform = "today_utc_midnight"
strategy = "add_missing_only"
condition_target = "actual"
when = { path = "changeType", equals = "change" }
"#,
    );
    insta::assert_snapshot!(render(
        json!([{
            "changeType": "change",
            "changedField": "payment.amount",
            "newValue": 120,
            "mutationVariables": {
                "data": {"amount": 120, "reason": "customer request"},
                "metadata": {"requestId": "r-1"}
            }
        }]),
        json!([
            {
                "changeType": "change",
                "changedField": "payment.amount",
                "newValue": "120",
                "mutationVariables": {
                    "data": {"amount": 120, "effectiveDate": "2025-03-04T00:00:00Z"},
                    "metadata": {"requestId": "r-2"}
                }
            },
            {"changeType": "creation", "mutationVariables": {"data": {"name": "Dana"}}}
        ]),
        &config
    ));
}

#[test]
fn any_order_shows_actual_in_the_order_of_its_partners() {
    let config = strict(r#"matching = "any_order""#);
    insta::assert_snapshot!(render(
        json!([
            {"id": "a", "amount": 1, "currency": "EUR"},
            {"id": "b", "amount": 2, "currency": "EUR"}
        ]),
        json!([
            {"id": "b", "amount": 2, "currency": "EUR"},
            {"id": "a", "amount": 10, "currency": "EUR"}
        ]),
        &config
    ));
}

#[test]
fn no_normalization_rule_and_a_type_difference() {
    let config = strict(
        r#"[[strict.normalization]]
when = "change"
fields.changeType = "__literal__"
fields.mutationVariables = "mutationQuery.variables"
"#,
    );
    insta::assert_snapshot!(render(
        json!([
            {"changeType": "change", "mutationQuery": {"variables": {"data": {"tags": ["a"]}}}},
            {"changeType": "change", "mutationQuery": {"variables": {"data": {}}}}
        ]),
        json!([
            {"changeType": "change", "mutationQuery": {"variables": {"data": {"tags": "a"}}}},
            {"changeType": "deletion", "mutationQuery": {"variables": {"data": {}}}}
        ]),
        &config
    ));
}

#[test]
fn colour_is_only_added_when_asked() {
    let e = json!([{"a": 1}]);
    let a = json!([{"a": 2}]);
    let config = StrictConfig::default();
    let v = evaluate(&e, &a, &config, None, &ctx());
    assert!(!v.render(false).contains('\x1b'));
    let coloured = v.render(true);
    assert!(coloured.contains("\x1b[31m-    \"a\": 1"), "{coloured:?}");
    assert!(coloured.contains("\x1b[32m+    \"a\": 2"), "{coloured:?}");
}
