//! The strict engine's rules, each with the worked example of the validator it replaces where it has one.

use proposal_eval::compare::{evaluate, Matching, MismatchKind, StrictConfig, StrictVerdict};
use proposal_eval::config::SuiteConfig;
use proposal_eval::normalize::{FieldSource, NormalizationRule};
use proposal_eval::path::Pattern;
use proposal_eval::transform::{
    ApplyTo, Builtin, Condition, ConditionTarget, Context, OnExisting, OnMissing, Strategy,
    Transform, Transformer,
};
use serde_json::{json, Value};
use std::borrow::Cow;

fn ctx() -> Context {
    Context::at("2025-03-04T15:16:17Z".parse().unwrap())
}

const TODAY: &str = "2025-03-04T00:00:00Z";

fn strict(toml_body: &str) -> StrictConfig {
    SuiteConfig::from_toml_str(&format!("[strict]\n{toml_body}"), "proposal-eval.toml")
        .unwrap_or_else(|e| panic!("{e}"))
        .strict
}

fn run(e: &Value, a: &Value, c: &StrictConfig) -> StrictVerdict<'static> {
    evaluate(e, a, c, None, &ctx()).into_owned()
}

/// The mismatch lines, as the user reads them.
fn lines(v: &StrictVerdict<'_>) -> Vec<String> {
    v.mismatches.iter().map(|m| m.to_string()).collect()
}

fn effective_date_config() -> StrictConfig {
    strict(
        r#"
[strict.transformers."mutationVariables.data.effectiveDate"]
transform = "today_utc_midnight"
strategy = "add_missing_only"
condition_target = "actual"
when = [{ path = "changeType", equals = "change" }]
"#,
    )
}

#[test]
fn effective_date_is_added_to_expected_only_when_the_actual_is_a_change() {
    let config = effective_date_config();
    let expected =
        json!([{"changeType": "change", "mutationVariables": {"data": {"amount": 120}}}]);
    let actual = json!([{"changeType": "change",
        "mutationVariables": {"data": {"amount": 120, "effectiveDate": TODAY}}}]);
    let v = run(&expected, &actual, &config);
    assert!(v.passed(), "{}", v.render(false));
    assert_eq!(
        v.expected_normalized[0]["mutationVariables"]["data"]["effectiveDate"],
        json!(TODAY)
    );

    // A wrong date in the actual is a plain difference.
    let wrong = json!([{"changeType": "change",
        "mutationVariables": {"data": {"amount": 120, "effectiveDate": "2024-01-01T00:00:00Z"}}}]);
    assert_eq!(
        lines(&run(&expected, &wrong, &config)),
        [
            r#"[0].mutationVariables.data.effectiveDate: values differ: expected "2025-03-04T00:00:00Z", actual "2024-01-01T00:00:00Z""#
        ]
    );

    // The actual is a creation: nothing is added, so its effectiveDate is extra.
    let expected = json!([{"changeType": "creation", "mutationVariables": {"data": {}}}]);
    let actual = json!([{"changeType": "creation",
        "mutationVariables": {"data": {"effectiveDate": TODAY}}}]);
    assert_eq!(
        lines(&run(&expected, &actual, &config)),
        ["[0].mutationVariables.data.effectiveDate: extra in actual"]
    );

    // An expected date that is written is compared as it is.
    let expected = json!([{"changeType": "change",
        "mutationVariables": {"data": {"effectiveDate": "2020-01-01T00:00:00Z"}}}]);
    let actual = json!([{"changeType": "change",
        "mutationVariables": {"data": {"effectiveDate": TODAY}}}]);
    assert_eq!(run(&expected, &actual, &config).mismatches.len(), 1);
}

#[test]
fn start_date_is_added_for_creations_by_their_own_conditions() {
    let config = strict(
        r#"
[strict.transformers."data.startDate"]
transform = "today_utc_midnight"
strategy = "add_missing_only"
when = { path = "changeType", equals = "creation" }
"#,
    );
    assert!(!config.paired_flow());
    let expected = json!([
        {"changeType": "creation", "data": {"name": "n"}},
        {"changeType": "change", "data": {"name": "m"}}
    ]);
    let actual = json!([
        {"changeType": "creation", "data": {"name": "n", "startDate": TODAY}},
        {"changeType": "change", "data": {"name": "m", "startDate": TODAY}}
    ]);
    assert_eq!(
        lines(&run(&expected, &actual, &config)),
        ["[1].data.startDate: extra in actual"]
    );
    // A missing start date in the actual is reported against the added expected one.
    let actual = json!([
        {"changeType": "creation", "data": {"name": "n"}},
        {"changeType": "change", "data": {"name": "m"}}
    ]);
    assert_eq!(
        lines(&run(&expected, &actual, &config)),
        ["[0].data.startDate: missing in actual"]
    );
}

#[test]
fn metadata_wildcard_is_ignored_suite_wide() {
    let config = strict(r#"ignore_paths = ["mutationVariables.metadata.*", "relatedUserId"]"#);
    let expected = json!([{"changeType": "change", "relatedUserId": 1,
        "mutationVariables": {"metadata": {"requestId": "a", "ts": 1}, "data": {"x": 1}}}]);
    let actual = json!([{"changeType": "change", "relatedUserId": 2,
        "mutationVariables": {"metadata": {"requestId": "b", "extra": true}, "data": {"x": 1}}}]);
    assert!(run(&expected, &actual, &config).passed());
    // `metadata.*` ignores what is below metadata, not metadata itself.
    let actual = json!([{"changeType": "change", "relatedUserId": 2,
        "mutationVariables": {"data": {"x": 1}}}]);
    assert_eq!(
        lines(&run(&expected, &actual, &config)),
        ["[0].mutationVariables.metadata: missing in actual"]
    );
}

#[test]
fn a_proposals_own_ignore_paths_replace_the_list_and_empty_means_strict() {
    let config = strict(r#"ignore_paths = ["mutationVariables.metadata.*"]"#);
    let expected = json!([
        {"id": 1, "mutationVariables": {"metadata": {"requestId": "a"}}, "ignore_paths": []},
        {"id": 2, "mutationVariables": {"metadata": {"requestId": "a"}}},
        {"id": 3, "note": "x", "mutationVariables": {"metadata": {"requestId": "a"}},
         "ignorePaths": ["note"]}
    ]);
    let actual = json!([
        {"id": 1, "mutationVariables": {"metadata": {"requestId": "b"}}},
        {"id": 2, "mutationVariables": {"metadata": {"requestId": "b"}}},
        {"id": 3, "note": "y", "mutationVariables": {"metadata": {"requestId": "b"}}}
    ]);
    let v = run(&expected, &actual, &config);
    assert_eq!(
        lines(&v),
        [
            r#"[0].mutationVariables.metadata.requestId: values differ: expected "a", actual "b""#,
            r#"[2].mutationVariables.metadata.requestId: values differ: expected "a", actual "b""#,
        ]
    );
    // The key itself is never compared, and is gone from the normalized expected.
    assert!(v.expected_normalized[0].get("ignore_paths").is_none());
    assert!(v.expected_normalized[2].get("ignorePaths").is_none());
}

#[test]
fn the_case_list_replaces_the_suite_list() {
    let config = strict(r#"ignore_paths = ["a"]"#);
    let expected = json!([{"a": 1, "b": 1}]);
    let actual = json!([{"a": 2, "b": 2}]);
    let case: Vec<Pattern> = vec![Pattern::parse("b").unwrap()];
    let v = evaluate(&expected, &actual, &config, Some(&case), &ctx());
    assert_eq!(lines(&v), ["[0].a: values differ: expected 1, actual 2"]);
    let v = evaluate(&expected, &actual, &config, Some(&[]), &ctx());
    assert_eq!(v.mismatches.len(), 2);
}

#[test]
fn a_path_copied_from_a_failure_can_be_pasted_as_an_ignore_path() {
    let expected = json!([{"newValue": 120}, {"newValue": 5}]);
    let actual = json!([{"newValue": "120"}, {"newValue": 6}]);
    let v = run(&expected, &actual, &StrictConfig::default());
    let copied = v.mismatches[0].location.to_string();
    assert_eq!(copied, "[0].newValue");
    let config = StrictConfig::new().ignore_path(&copied).unwrap();
    assert_eq!(
        lines(&run(&expected, &actual, &config)),
        ["[1].newValue: values differ: expected 5, actual 6"]
    );
    let config = StrictConfig::new().ignore_path("[*].newValue").unwrap();
    assert!(run(&expected, &actual, &config).passed());
}

fn flattening_rules() -> &'static str {
    r#"
discriminator = "changeType"
[[strict.normalization]]
when = "change"
fields.changeType = "__literal__"
fields.changedField = "changedField"
fields.mutationVariables = "mutationQuery.variables"
fields.status = { from = "state", default = "pending", transform = "lowercase" }

[[strict.normalization]]
when = "creation"
fields.changeType = "__literal__"
fields.mutationVariables = "mutationQuery.variables"
"#
}

#[test]
fn normalization_flattens_mutation_query_variables_on_both_sides() {
    let config = strict(flattening_rules());
    let expected = json!([{"changeType": "change", "changedField": "payment.amount",
        "mutationQuery": {"variables": {"data": {"amount": 120}}}}]);
    let actual = json!([{"changeType": "change", "changedField": "payment.amount",
        "mutationQuery": {"query": "mutation { ... }", "variables": {"data": {"amount": 121}}},
        "state": "PENDING", "debug": "dropped by the rule"}]);
    let v = run(&expected, &actual, &config);
    assert_eq!(
        lines(&v),
        ["[0].mutationVariables.data.amount: values differ: expected 120, actual 121"]
    );
    assert_eq!(
        *v.actual_normalized,
        json!([{"changeType": "change", "changedField": "payment.amount",
            "mutationVariables": {"data": {"amount": 121}}, "status": "pending"}])
    );
}

#[test]
fn a_proposal_without_a_rule_is_reported_not_passed() {
    let config = strict(flattening_rules());
    let expected = json!([{"changeType": "deletion", "id": 1}]);
    let actual = json!([{"changeType": "deletion", "id": 1}]);
    let v = run(&expected, &actual, &config);
    assert!(!v.passed());
    assert_eq!(
        lines(&v),
        [
            r#"[0]: expected proposal: no normalization rule for changeType = "deletion" (rules exist for "change", "creation")"#,
            r#"[0]: actual proposal: no normalization rule for changeType = "deletion" (rules exist for "change", "creation")"#,
        ]
    );
    assert!(v
        .mismatches
        .iter()
        .all(|m| m.kind == MismatchKind::NoNormalizationRule));
}

#[test]
fn in_the_paired_flow_expected_is_compared_as_written() {
    let mut config = strict(flattening_rules());
    config.transformers = effective_date_config().transformers;
    assert!(config.paired_flow());
    // Expected is already in normalized shape; only the actual is reshaped.
    let expected = json!([{"changeType": "change", "changedField": "f", "status": "pending",
        "mutationVariables": {"data": {"amount": 1}}}]);
    let actual = json!([{"changeType": "change", "changedField": "f",
        "mutationQuery": {"variables": {"data": {"amount": 1, "effectiveDate": TODAY}}}}]);
    let v = run(&expected, &actual, &config);
    assert!(v.passed(), "{}", v.render(false));
}

#[test]
fn strategies_do_what_design_says() {
    let both = json!([{"a": " X ", "b": " Y "}]);
    let only_expected = json!([{"a": " X "}]);
    let trim = |s: Strategy| {
        StrictConfig::new()
            .transformer("a", Transformer::new(Builtin::Trim, s))
            .unwrap()
            .transformer("b", Transformer::new(Builtin::Trim, s))
            .unwrap()
    };
    // transform_always: every side where it is present.
    let c = trim(Strategy::TransformAlways);
    let actual = json!([{"a": "X", "b": "Y"}]);
    assert!(run(&both, &actual, &c).passed());
    let v = run(&only_expected, &json!([{"a": "X", "b": " Y "}]), &c);
    assert_eq!(v.expected_normalized[0]["a"], json!("X"));
    assert_eq!(v.actual_normalized[0]["b"], json!("Y"));
    assert_eq!(lines(&v), ["[0].b: extra in actual"]);
    // transform_existing: only when present on both sides.
    let c = trim(Strategy::TransformExisting);
    assert!(run(&both, &actual, &c).passed());
    let v = run(&only_expected, &json!([{"b": " Y "}]), &c);
    assert_eq!(v.expected_normalized[0]["a"], json!(" X "), "untouched");
    assert_eq!(v.actual_normalized[0]["b"], json!(" Y "), "untouched");
    // add_missing_only: a present expected is compared as it is, the actual never changes.
    let c = trim(Strategy::AddMissingOnly);
    assert_eq!(run(&both, &actual, &c).mismatches.len(), 2);
    let v = run(&json!([{}]), &json!([{}]), &c);
    assert_eq!(*v.expected_normalized, json!([{"a": null, "b": null}]));
    assert_eq!(*v.actual_normalized, json!([{}]));
}

#[test]
fn legacy_form_on_missing_fail_and_apply_to() {
    let c = strict(
        r#"
[strict.transformers.code]
transform = "uppercase"
onMissing = "fail"
onExisting = "transform"
applyTo = "actual"
"#,
    );
    let t = &c.transformers[0].1;
    assert_eq!(
        (t.on_missing, t.on_existing, t.apply_to),
        (OnMissing::Fail, OnExisting::Transform, ApplyTo::Actual)
    );
    assert!(run(&json!([{"code": "EUR"}]), &json!([{"code": "eur"}]), &c).passed());
    assert_eq!(
        lines(&run(
            &json!([{"code": "eur"}]),
            &json!([{"code": "eur"}]),
            &c
        )),
        [r#"[0].code: values differ: expected "eur", actual "EUR""#]
    );
    let v = run(&json!([{"x": 1}]), &json!([{"x": 1}]), &c);
    assert_eq!(v.mismatches[0].kind, MismatchKind::TransformerFailed);
    assert_eq!(
        lines(&v),
        [
            r#"[0].code: transformer failed: missing in actual, and the transformer (uppercase) has on_missing = "fail""#
        ]
    );
    // on_missing = add on the actual side.
    let c = StrictConfig::new()
        .transformer(
            "d",
            Transformer::legacy(
                Builtin::TodayUtcMidnight,
                OnMissing::Add,
                OnExisting::Skip,
                ApplyTo::Both,
            ),
        )
        .unwrap();
    let v = run(&json!([{}]), &json!([{}]), &c);
    assert!(v.passed());
    assert_eq!(v.actual_normalized[0]["d"], json!(TODAY));
}

#[test]
fn conditions_combine_and_read_the_chosen_target() {
    // AND of two conditions, one of them an OR list.
    let c = strict(
        r#"
[strict.transformers.name]
transform = "lowercase"
strategy = "transform_always"
when = [{ path = "kind", equals = ["a", "b"] }, { path = "skip", exists = false }]
"#,
    );
    let e = json!([{"kind": "a", "name": "X"}, {"kind": "c", "name": "X"},
                   {"kind": "b", "skip": 1, "name": "X"}]);
    let a = json!([{"kind": "a", "name": "x"}, {"kind": "c", "name": "x"},
                   {"kind": "b", "skip": 1, "name": "x"}]);
    let v = run(&e, &a, &c);
    let paths: Vec<String> = v
        .mismatches
        .iter()
        .map(|m| m.location.to_string())
        .collect();
    assert_eq!(paths, ["[1].name", "[2].name"]);

    // condition_target = expected: the actual is transformed when the expected says so.
    let c = StrictConfig::new()
        .transformer(
            "name",
            Transformer::new(Builtin::Lowercase, Strategy::TransformAlways)
                .condition_target(ConditionTarget::Expected)
                .when(Condition::not_equals("strictName", true).unwrap()),
        )
        .unwrap();
    assert!(run(&json!([{"name": "x"}]), &json!([{"name": "X"}]), &c).passed());
    assert!(!run(
        &json!([{"name": "x", "strictName": true}]),
        &json!([{"name": "X", "strictName": true}]),
        &c
    )
    .passed());
}

#[test]
fn a_closure_can_be_a_transform() {
    let c = StrictConfig::new()
        .transformer(
            "amount",
            Transformer::new(
                Transform::custom(|v, _| match v.and_then(Value::as_f64) {
                    Some(f) => json!((f * 100.0).round() / 100.0),
                    None => v.cloned().unwrap_or(Value::Null),
                }),
                Strategy::TransformAlways,
            ),
        )
        .unwrap();
    assert!(run(&json!([{"amount": 10.004}]), &json!([{"amount": 10.0}]), &c).passed());
}

#[test]
fn mismatch_kinds_with_their_full_paths() {
    let e = json!([{"a": 1, "b": {"c": [1, 2, 3]}, "d": {"x": 1}, "m": "gone", "n": null}]);
    let a = json!([{"a": "1", "b": {"c": [1, 9]}, "d": [1], "n": null, "z": true}]);
    let v = run(&e, &a, &StrictConfig::default());
    let got: Vec<(MismatchKind, String)> = v
        .mismatches
        .iter()
        .map(|m| (m.kind, m.location.to_string()))
        .collect();
    use MismatchKind::*;
    assert_eq!(
        got,
        [
            (ValuesDiffer, "[0].a".into()),
            (ValuesDiffer, "[0].b.c[1]".into()),
            (MissingInActual, "[0].b.c[2]".into()),
            (TypeDiffers, "[0].d".into()),
            (MissingInActual, "[0].m".into()),
            (ExtraInActual, "[0].z".into()),
        ]
    );
    assert_eq!(
        v.mismatches[3].to_string(),
        "[0].d: type differs: expected an object, actual an array"
    );
    assert_eq!(v.mismatches[1].expected, Some(json!(2)));
    assert_eq!(v.mismatches[1].actual, Some(json!(9)));
}

#[test]
fn numbers_compare_by_value_and_keys_with_dots_print_quoted() {
    let v = run(
        &json!([{"n": 1, "f": 2.50, "a.b": 1}]),
        &json!([{"n": 1.0, "f": 2.5, "a.b": 2}]),
        &StrictConfig::default(),
    );
    assert_eq!(
        lines(&v),
        [r#"[0]["a.b"]: values differ: expected 1, actual 2"#]
    );
}

#[test]
fn ordered_count_mismatch_lists_unmatched_proposals_with_their_discriminator() {
    let e = json!([{"changeType": "change", "newValue": 120}]);
    let a = json!([{"changeType": "change", "newValue": "120"},
                   {"changeType": "creation", "x": 1}]);
    let v = run(&e, &a, &StrictConfig::default());
    assert_eq!(
        lines(&v),
        [
            "$: proposal count differs: expected 1, actual 2",
            r#"[0].newValue: values differ: expected 120, actual "120""#,
            r#"[1]: unmatched actual proposal (changeType = "creation")"#,
        ]
    );
    let v = run(&a, &e, &StrictConfig::default());
    assert_eq!(
        lines(&v)[2],
        r#"[1]: unmatched expected proposal (changeType = "creation")"#
    );
}

#[test]
fn any_order_pairs_by_fewest_mismatches() {
    let c = StrictConfig::new().matching(Matching::AnyOrder);
    let e = json!([{"id": "a", "v": 1, "w": 1}, {"id": "b", "v": 2, "w": 2}]);
    let a = json!([{"id": "b", "v": 2, "w": 2}, {"id": "a", "v": 1, "w": 1}]);
    let v = run(&e, &a, &c);
    assert!(v.passed());
    assert_eq!(v.pairs, [(0, 1), (1, 0)]);
    // Ordered, the same lists differ everywhere.
    assert_eq!(run(&e, &a, &StrictConfig::default()).mismatches.len(), 6);
    // With one difference, the best pairing's difference is the one reported, with both indices.
    let a = json!([{"id": "b", "v": 2, "w": 2}, {"id": "a", "v": 1, "w": 5}]);
    let v = run(&e, &a, &c);
    assert_eq!(
        lines(&v),
        ["[0].w: values differ: expected 1, actual 5 (paired with actual [1])"]
    );
    // Extra actual: the worst fit is left unmatched.
    let a = json!([{"id": "z", "v": 0, "w": 0}, {"id": "b", "v": 2, "w": 2},
                   {"id": "a", "v": 1, "w": 1}]);
    let v = run(&e, &a, &c);
    assert_eq!(
        lines(&v),
        [
            "$: proposal count differs: expected 2, actual 3",
            "[0]: unmatched actual proposal"
        ]
    );
}

#[test]
fn one_object_against_another_is_one_proposal_without_an_index() {
    let v = run(
        &json!({"a": {"b": 1}, "ignore_paths": ["c"], "c": 1}),
        &json!({"a": {"b": 2}, "c": 2}),
        &StrictConfig::default(),
    );
    assert_eq!(lines(&v), ["a.b: values differ: expected 1, actual 2"]);
}

#[test]
fn a_shape_mismatch_is_one_clear_mismatch() {
    let v = run(
        &json!([{"a": 1}]),
        &json!({"a": 1}),
        &StrictConfig::default(),
    );
    assert_eq!(
        lines(&v),
        [r#"$: type differs: expected an array, actual an object (expected a list of proposals)"#]
    );
}

#[test]
fn nothing_is_copied_when_nothing_is_rewritten() {
    let c = StrictConfig::new().ignore_path("x").unwrap();
    let e = json!([{"a": 1}]);
    let v = evaluate(&e, &e, &c, None, &ctx());
    assert!(matches!(v.expected_normalized, Cow::Borrowed(_)));
    assert!(matches!(v.actual_normalized, Cow::Borrowed(_)));
    let owned = v.into_owned();
    assert!(owned.passed());
    assert_eq!(owned.score, 1.0);
}

#[test]
fn invalid_own_ignore_paths_are_reported() {
    let v = run(
        &json!([{"a": 1, "ignore_paths": ["a..b"]}]),
        &json!([{"a": 1}]),
        &StrictConfig::default(),
    );
    assert_eq!(v.mismatches.len(), 1);
    assert_eq!(v.mismatches[0].kind, MismatchKind::InvalidIgnorePaths);
    assert!(lines(&v)[0].starts_with("[0].ignore_paths: invalid ignore_paths: invalid path `a..b`"));
}

#[test]
fn the_design_config_parses_and_errors_point_at_the_line() {
    let text = r#"
evaluators = ["strict"]

[strict]
matching = "any_order"
ignorePaths = ["mutationVariables.metadata.*", "relatedUserId"]
discriminator = "changeType"

[[strict.normalization]]
when = "change"
fields.changeType = "__literal__"
fields.changedField = "changedField"
fields.mutationVariables = "mutationQuery.variables"
fields.original = "__self__"
fields.status = { from = "state", default = "pending", transform = "lowercase" }

[strict.transformers."mutationVariables.data.effectiveDate"]
transform = "today_utc_midnight"
strategy = "add_missing_only"
condition_target = "actual"
when = [{ path = "changeType", equals = "change" }]
"#;
    let c = SuiteConfig::from_toml_str(text, "s/proposal-eval.toml")
        .unwrap()
        .strict;
    assert_eq!(c.matching, Matching::AnyOrder);
    assert_eq!(c.ignore_paths.len(), 2);
    assert_eq!(c.normalization[0].fields.len(), 5);
    assert_eq!(
        c.transformers[0].0.as_str(),
        "mutationVariables.data.effectiveDate"
    );

    let bad = text.replace("\"add_missing_only\"", "\"add_missing\"");
    let err = SuiteConfig::from_toml_str(&bad, "s/proposal-eval.toml").unwrap_err();
    assert!(
        err.to_string().starts_with("s/proposal-eval.toml:"),
        "{err}"
    );
    assert!(err.message.contains("add_missing_only"), "{err}");
    assert!(err.line >= 17, "{err}");

    for (bad, needle) in [
        ("[strict]\nmatchin = \"ordered\"", "matchin"),
        ("[strict]\nmatching = \"random\"", "any_order"),
        ("[strict]\nignore_paths = [\"a..b\"]", "a..b"),
        (
            "[strict.transformers.\"a..b\"]\ntransform = \"trim\"",
            "a..b",
        ),
        (
            "[strict.transformers.a]\ntransform = \"trimm\"",
            "collapse_whitespace",
        ),
        (
            "[strict.transformers.a]\ntransform = \"trim\"\ncondition_target = \"both\"",
            "expected",
        ),
    ] {
        let err = SuiteConfig::from_toml_str(bad, "p.toml").unwrap_err();
        assert!(err.message.contains(needle), "{bad}: {err}");
        assert!(err.line > 0, "{bad}: {err}");
    }
}

#[test]
fn normalization_rules_can_be_built_in_rust() {
    let c = StrictConfig::new()
        .discriminator("kind")
        .unwrap()
        .normalization(
            NormalizationRule::new("x")
                .field("kind", FieldSource::Literal)
                .unwrap()
                .field(
                    "v",
                    FieldSource::extract("raw.v", Some(json!(0)), None).unwrap(),
                )
                .unwrap(),
        );
    let v = run(
        &json!([{"kind": "x"}]),
        &json!([{"kind": "x", "raw": {"v": 0}}]),
        &c,
    );
    assert!(v.passed(), "{}", v.render(false));
}
