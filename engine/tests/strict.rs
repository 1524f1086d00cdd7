//! The strict comparison as a user meets it: a `[strict]` config, two documents, the verdict and
//! its failure text.

use proposal_eval_engine::compare::{
    evaluate, Matching, MismatchKind, StrictConfig, StrictVerdict,
};
use proposal_eval_engine::normalize::{FieldSource, NormalizationRule};
use proposal_eval_engine::path::Pattern;
use proposal_eval_engine::transform::{
    ApplyTo, Builtin, Condition, ConditionTarget, Context, OnExisting, OnMissing, Strategy,
    Transformer,
};
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
fn a_transformer_path_with_an_index_touches_that_element_only() {
    let config = strict(
        r#"
[transformers."items[1].name"]
transform = "lowercase"
strategy = "transform_always"
"#,
    );
    let expected = json!({"items": [{"name": "A"}, {"name": "b"}]});
    let actual = json!({"items": [{"name": "a"}, {"name": "B"}]});
    let v = run(&expected, &actual, &config);
    assert_eq!(
        lines(&v),
        [r#"items[0].name: values differ: expected "A", actual "a""#]
    );
    assert_eq!(
        v.actual_normalized["items"],
        json!([{"name": "a"}, {"name": "b"}])
    );
    assert_eq!(v.expected_normalized["items"][0], json!({"name": "A"}));
}

#[test]
fn an_added_field_at_an_index_lands_there() {
    let config = strict(
        r#"
[transformers."items[1].date"]
transform = "today_utc_midnight"
on_missing = "add"
on_existing = "skip"
apply_to = "expected"
"#,
    );
    let expected = json!({"items": [{"n": 1}, {"n": 2}]});
    let actual = json!({"items": [{"n": 1}, {"n": 2, "date": TODAY}]});
    let v = run(&expected, &actual, &config);
    assert!(v.passed(), "{}", v.render(false));
    assert_eq!(v.expected_normalized["items"][1]["date"], json!(TODAY));
    assert_eq!(v.expected_normalized["items"][0], json!({"n": 1}));
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

#[test]
fn the_discriminator_is_read_from_the_config() {
    let config = strict(
        r#"
discriminator = "kind.name"

[[normalization]]
when = "change"
fields.kind = "kind"
fields.amount = "amount"
"#,
    );
    let expected = json!([{"kind": {"name": "change"}, "amount": 1, "noise": 1}]);
    let actual = json!([{"kind": {"name": "change"}, "amount": 1}]);
    assert!(run(&expected, &actual, &config).passed());
    let actual = json!([{"changeType": "change", "amount": 1}]);
    let v = run(&expected, &actual, &config);
    assert_eq!(
        lines(&v),
        ["[0]: actual proposal: no normalization rule: the proposal has no `kind.name` (rules exist for \"change\")"]
    );
    assert_eq!(v.mismatches[0].kind, MismatchKind::NoNormalizationRule);
    // Unmatched proposals are described by the discriminator too.
    let v = run(&expected, &json!([]), &config);
    assert_eq!(
        lines(&v)[1],
        r#"[0]: unmatched expected proposal (kind.name = "change")"#
    );
    let v = run(&expected, &json!([]), &StrictConfig::new());
    assert_eq!(lines(&v)[1], "[0]: unmatched expected proposal");
    let v = run(
        &json!([{"changeType": 1}]),
        &json!([]),
        &StrictConfig::new(),
    );
    assert_eq!(
        lines(&v)[1],
        "[0]: unmatched expected proposal (changeType = 1)",
        "changeType by default"
    );
}

#[test]
fn a_discriminator_must_be_a_concrete_path() {
    let err = toml::from_str::<StrictConfig>(r#"discriminator = "kind[*]""#)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(
            "invalid path `kind[*]` at character 1: a concrete path may not hold wildcards here"
        ),
        "{err}"
    );
    let err = toml::from_str::<StrictConfig>(r#"discriminator = "kind..x""#)
        .unwrap_err()
        .to_string();
    assert!(err.contains("at character 6: empty key"), "{err}");
    let config = strict(r#"discriminator = "$.a[0].b""#);
    assert_eq!(config.discriminator_location().to_string(), "a[0].b");
    assert_eq!(
        StrictConfig::new().discriminator_location().to_string(),
        "changeType"
    );
}

#[test]
fn equally_good_pairings_keep_proposals_at_their_own_index() {
    let config = strict(r#"matching = "any_order""#);
    // Every pairing costs two mismatches: the one that moves nothing wins.
    let expected = json!([{"v": 1}, {"v": 2}, {"v": 3}]);
    let actual = json!([{"v": 4}, {"v": 5}, {"v": 6}]);
    let v = run(&expected, &actual, &config);
    assert_eq!(v.pairs, [(0, 0), (1, 1), (2, 2)]);
    assert!(!v.render(false).contains("paired with"));
    // Pairing [0] with [1] would cost one mismatch too: it stays with [0].
    let v = run(
        &json!([{"v": 1}, {"v": 1}]),
        &json!([{"v": 2}, {"v": 1}]),
        &config,
    );
    assert_eq!(v.pairs, [(0, 0), (1, 1)]);
    assert_eq!(lines(&v), ["[0].v: values differ: expected 1, actual 2"]);
    // A better pairing still wins over staying in place.
    let actual = json!([{"v": 2}, {"v": 3}, {"v": 1}]);
    let v = run(&expected, &actual, &config);
    assert_eq!(v.pairs, [(0, 2), (1, 0), (2, 1)]);
    assert!(v.passed());
}

#[test]
fn a_transformer_failure_counts_against_a_pairing() {
    // The transformer fails on an actual without `date` when its partner is of kind `d`. The
    // mismatches alone tie the two pairings (one extra `date` either way); the failure breaks
    // the tie towards pairing the `d` proposal with the actual that has a date.
    let config = strict(
        r#"
matching = "any_order"
ignore_paths = ["k"]

[transformers.date]
transform = "trim"
on_missing = "fail"
on_existing = "skip"
apply_to = "actual"
condition_target = "expected"
when = { path = "k", equals = "d" }
"#,
    );
    let expected = json!([{"k": "d"}, {"k": "p"}]);
    let actual = json!([{"k": "x"}, {"k": "x", "date": 1}]);
    let v = run(&expected, &actual, &config);
    assert_eq!(v.pairs, [(0, 1), (1, 0)]);
    assert_eq!(
        lines(&v),
        ["[0].date: extra in actual (paired with actual [1])"]
    );
    // Paired in order, the failure is reported as the case's problem.
    let config = StrictConfig {
        matching: Default::default(),
        ..config
    };
    let v = run(&expected, &actual, &config);
    assert_eq!(
        lines(&v),
        [
            "[0].date: transformer failed: missing in actual, and the transformer (trim) has on_missing = \"fail\"",
            "[1].date: extra in actual",
        ]
    );
}

#[test]
fn every_kind_of_difference_has_its_full_path() {
    let expected =
        json!([{"a": 1, "b": {"c": [1, 2, 3]}, "d": {"x": 1}, "e": [1], "m": 0, "n": null}]);
    let actual = json!([{"a": "1", "b": {"c": [1, 9]}, "d": [1], "e": 2, "n": null, "z": true}]);
    let v = run(&expected, &actual, &StrictConfig::new());
    use MismatchKind::*;
    let got: Vec<(MismatchKind, String, Option<Value>, Option<Value>)> = v
        .mismatches
        .iter()
        .map(|m| {
            assert_eq!(m.actual_index, None);
            (
                m.kind,
                m.location.to_string(),
                m.expected.clone(),
                m.actual.clone(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                ValuesDiffer,
                "[0].a".into(),
                Some(json!(1)),
                Some(json!("1"))
            ),
            (
                ValuesDiffer,
                "[0].b.c[1]".into(),
                Some(json!(2)),
                Some(json!(9))
            ),
            (MissingInActual, "[0].b.c[2]".into(), Some(json!(3)), None),
            (
                TypeDiffers,
                "[0].d".into(),
                Some(json!({"x": 1})),
                Some(json!([1]))
            ),
            (
                TypeDiffers,
                "[0].e".into(),
                Some(json!([1])),
                Some(json!(2))
            ),
            (MissingInActual, "[0].m".into(), Some(json!(0)), None),
            (ExtraInActual, "[0].z".into(), None, Some(json!(true))),
        ]
    );
    assert_eq!(v.score, 0.0);
    assert!(!v.passed());
    let v = run(
        &json!([{"c": [1]}]),
        &json!([{"c": [1, {"k": 2}]}]),
        &StrictConfig::new(),
    );
    assert_eq!(lines(&v), ["[0].c[1]: extra in actual"]);
}

#[test]
fn equal_documents_pass_with_score_one() {
    let doc = json!([{"n": 1, "f": 2.5, "s": "x", "l": [1, [2]], "o": {"p": null}}]);
    let v = run(
        &doc,
        &json!([{"n": 1.0, "f": 2.50, "s": "x", "l": [1, [2]], "o": {"p": null}}]),
        &StrictConfig::new(),
    );
    assert!(v.passed(), "{}", v.render(false));
    assert_eq!(v.score, 1.0);
    assert!(v.mismatches.is_empty());
    assert_eq!(v.pairs, [(0, 0)]);
}

#[test]
fn one_object_against_another_has_paths_without_an_index() {
    let v = run(
        &json!({"a": {"b": 1}, "ignore_paths": ["c"], "c": 1}),
        &json!({"a": {"b": 2}, "c": 2}),
        &StrictConfig::new(),
    );
    assert_eq!(lines(&v), ["a.b: values differ: expected 1, actual 2"]);
    assert_eq!(*v.expected_normalized, json!({"a": {"b": 1}, "c": 1}));
    assert_eq!(*v.actual_normalized, json!({"a": {"b": 2}, "c": 2}));
    // A pattern that starts with an index does not apply to a single proposal.
    let config = StrictConfig::new().ignore_path("[0].a").unwrap();
    let v = run(&json!({"a": 1}), &json!({"a": 2}), &config);
    assert_eq!(lines(&v), ["a: values differ: expected 1, actual 2"]);
}

#[test]
fn a_list_against_an_object_is_one_shape_mismatch() {
    let v = run(&json!([{"a": 1}]), &json!({"a": 1}), &StrictConfig::new());
    assert_eq!(
        lines(&v),
        ["$: type differs: expected an array, actual an object (expected a list of proposals)"]
    );
    assert_eq!(v.score, 0.0);
    assert_eq!(v.mismatches[0].expected, Some(json!([{"a": 1}])));
    assert_eq!(v.mismatches[0].actual, Some(json!({"a": 1})));
    let v = run(&json!({"a": 1}), &json!("text"), &StrictConfig::new());
    assert_eq!(
        lines(&v),
        [
            r#"$: type differs: expected an object, actual a string "text" (expected one proposal (an object))"#
        ]
    );
    assert!(v.pairs.is_empty());
}

#[test]
fn counts_that_differ_leave_proposals_unmatched() {
    let expected = json!([{"changeType": "change", "v": 1}]);
    let actual = json!([{"changeType": "change", "v": 2}, {"changeType": "creation"}, {"x": 1}]);
    let v = run(&expected, &actual, &StrictConfig::new());
    assert_eq!(
        lines(&v),
        [
            "$: proposal count differs: expected 1, actual 3",
            "[0].v: values differ: expected 1, actual 2",
            r#"[1]: unmatched actual proposal (changeType = "creation")"#,
            "[2]: unmatched actual proposal",
        ]
    );
    assert_eq!(v.mismatches[0].kind, MismatchKind::CountDiffers);
    assert_eq!(v.mismatches[2].kind, MismatchKind::UnmatchedActual);
    assert_eq!(v.mismatches[2].actual_index, Some(1));
    assert_eq!(
        v.mismatches[2].actual,
        Some(json!({"changeType": "creation"}))
    );
    let v = run(&actual, &expected, &StrictConfig::new());
    assert_eq!(v.mismatches[3].kind, MismatchKind::UnmatchedExpected);
    assert_eq!(v.mismatches[3].expected, Some(json!({"x": 1})));
    assert_eq!(v.mismatches[3].actual_index, None);
    assert_eq!(v.pairs, [(0, 0)]);
}

#[test]
fn suite_case_and_proposal_ignore_lists_replace_each_other() {
    let config = StrictConfig::new().ignore_path("meta.*").unwrap();
    let expected = json!([
        {"id": 1, "meta": {"t": 1}},
        {"id": 2, "meta": {"t": 1}, "ignore_paths": []},
        {"id": 3, "meta": {"t": 1}, "note": "a", "ignorePaths": ["note"]}
    ]);
    let actual = json!([
        {"id": 1, "meta": {"t": 2}},
        {"id": 2, "meta": {"t": 2}},
        {"id": 3, "meta": {"t": 2}, "note": "b"}
    ]);
    let v = run(&expected, &actual, &config);
    assert_eq!(
        lines(&v),
        [
            "[1].meta.t: values differ: expected 1, actual 2",
            "[2].meta.t: values differ: expected 1, actual 2",
        ]
    );
    assert_eq!(v.expected_normalized[1], json!({"id": 2, "meta": {"t": 1}}));
    assert_eq!(
        v.expected_normalized[2],
        json!({"id": 3, "meta": {"t": 1}, "note": "a"})
    );
    // A case's list replaces the suite's; an empty one compares everything.
    let case = [Pattern::parse("[*].meta").unwrap()];
    let e = json!([{"meta": 1, "x": 1}]);
    let a = json!([{"meta": 2, "x": 2}]);
    let v = evaluate(&e, &a, &config, Some(&case), &ctx());
    assert_eq!(lines(&v), ["[0].x: values differ: expected 1, actual 2"]);
    let v = evaluate(&e, &a, &config, Some(&[]), &ctx());
    assert_eq!(v.mismatches.len(), 2);
    // `$` ignores everything, `[0]` the first proposal.
    for everything in ["$", "[0]", "**"] {
        let config = StrictConfig::new().ignore_path(everything).unwrap();
        assert!(run(&e, &a, &config).passed(), "{everything}");
    }
}

#[test]
fn an_unreadable_own_ignore_list_is_reported() {
    let v = run(
        &json!([{"a": 1, "ignore_paths": ["a..b"], "ignorePaths": 3}]),
        &json!([{"a": 2}]),
        &StrictConfig::new(),
    );
    let kinds: Vec<MismatchKind> = v.mismatches.iter().map(|m| m.kind).collect();
    assert_eq!(
        kinds,
        [
            MismatchKind::InvalidIgnorePaths,
            MismatchKind::InvalidIgnorePaths,
            MismatchKind::ValuesDiffer
        ]
    );
    let lines = lines(&v);
    assert!(
        lines[0].starts_with(
            "[0].ignore_paths: invalid ignore_paths: invalid path `a..b` at character 3"
        ),
        "{lines:?}"
    );
    assert!(
        lines[1].starts_with("[0].ignorePaths: invalid ignore_paths: invalid type"),
        "{lines:?}"
    );
}

fn rules() -> &'static str {
    r#"
[[normalization]]
when = "change"
fields.changeType = "__literal__"
fields.vars = "query.variables"
fields.status = { from = "state", default = "pending", transform = "lowercase" }
"#
}

#[test]
fn normalization_reshapes_both_sides() {
    let config = strict(rules());
    let expected = json!([{"changeType": "change", "query": {"variables": {"n": 1}}}]);
    let actual = json!([{"changeType": "change", "query": {"variables": {"n": 2}, "text": "q"},
        "state": "DONE", "debug": 1}]);
    let v = run(&expected, &actual, &config);
    assert_eq!(
        lines(&v),
        [
            "[0].status: values differ: expected \"pending\", actual \"done\"",
            "[0].vars.n: values differ: expected 1, actual 2",
        ]
    );
    assert_eq!(
        *v.actual_normalized,
        json!([{"changeType": "change", "vars": {"n": 2}, "status": "done"}])
    );
    assert_eq!(
        *v.expected_normalized,
        json!([{"changeType": "change", "vars": {"n": 1}, "status": "pending"}])
    );
}

#[test]
fn a_proposal_no_rule_fits_is_reported_and_not_compared() {
    let config = strict(rules());
    let v = run(
        &json!([{"changeType": "deletion", "a": 1}, {"changeType": "change"}]),
        &json!([{"changeType": "deletion", "a": 2}, {"changeType": "other"}]),
        &config,
    );
    assert_eq!(
        lines(&v),
        [
            r#"[0]: expected proposal: no normalization rule for changeType = "deletion" (rules exist for "change")"#,
            r#"[0]: actual proposal: no normalization rule for changeType = "deletion" (rules exist for "change")"#,
            r#"[1]: actual proposal: no normalization rule for changeType = "other" (rules exist for "change")"#,
        ]
    );
    let indices: Vec<Option<usize>> = v.mismatches.iter().map(|m| m.actual_index).collect();
    assert_eq!(indices, [None, Some(0), Some(1)]);
}

#[test]
fn in_the_paired_flow_expected_is_compared_as_written() {
    let mut config = strict(rules());
    config.transformers = strict(
        r#"
[transformers.date]
transform = "today_utc_midnight"
strategy = "add_missing_only"
condition_target = "actual"
when = { path = "changeType", equals = "change" }
"#,
    )
    .transformers;
    assert!(config.paired_flow());
    let expected = json!([{"changeType": "change", "vars": {"n": 1}, "status": "pending"}]);
    let actual = json!([{"changeType": "change", "query": {"variables": {"n": 1}}}]);
    let v = run(&expected, &actual, &config);
    assert_eq!(lines(&v), ["[0].date: missing in actual"]);
    assert_eq!(v.expected_normalized[0]["date"], json!(TODAY));
    assert!(!strict(rules()).paired_flow());
}

#[test]
fn strategies_choose_sides_and_presence() {
    let trim = |s: Strategy| {
        StrictConfig::new()
            .transformer("a", Transformer::new(Builtin::Trim, s))
            .unwrap()
    };
    let spaced = json!([{"a": " x "}]);
    let bare = json!([{"a": "x"}]);
    let none = json!([{}]);
    // transform_always: wherever the field is.
    let c = trim(Strategy::TransformAlways);
    assert!(run(&spaced, &bare, &c).passed());
    assert!(run(&bare, &spaced, &c).passed());
    let v = run(&none, &spaced, &c);
    assert_eq!(v.actual_normalized[0]["a"], json!("x"));
    assert_eq!(*v.expected_normalized, none);
    // transform_existing: only when both sides have it.
    let c = trim(Strategy::TransformExisting);
    assert!(run(&spaced, &bare, &c).passed());
    let v = run(&none, &spaced, &c);
    assert_eq!(v.actual_normalized[0]["a"], json!(" x "));
    let v = run(&spaced, &none, &c);
    assert_eq!(v.expected_normalized[0]["a"], json!(" x "));
    // add_missing_only: adds to a missing expected, never touches a present one or the actual.
    let c = trim(Strategy::AddMissingOnly);
    assert_eq!(run(&spaced, &bare, &c).mismatches.len(), 1);
    let v = run(&none, &none, &c);
    assert_eq!(*v.expected_normalized, json!([{"a": null}]));
    assert_eq!(*v.actual_normalized, none);
}

#[test]
fn legacy_transformers_choose_their_side() {
    let config = strict(
        r#"
[transformers.code]
transform = "uppercase"
onMissing = "fail"
onExisting = "transform"
applyTo = "actual"
"#,
    );
    let t = &config.transformers[0].1;
    assert_eq!(
        (t.on_missing, t.on_existing, t.apply_to),
        (OnMissing::Fail, OnExisting::Transform, ApplyTo::Actual)
    );
    assert!(run(
        &json!([{"code": "EUR"}]),
        &json!([{"code": "eur"}]),
        &config
    )
    .passed());
    assert_eq!(
        lines(&run(
            &json!([{"code": "eur"}]),
            &json!([{"code": "eur"}]),
            &config
        )),
        [r#"[0].code: values differ: expected "eur", actual "EUR""#]
    );
    let v = run(&json!([{"code": "EUR"}]), &json!([{}]), &config);
    assert_eq!(
        lines(&v),
        [
            r#"[0].code: transformer failed: missing in actual, and the transformer (uppercase) has on_missing = "fail""#,
            "[0].code: missing in actual",
        ]
    );
    assert_eq!(v.mismatches[0].kind, MismatchKind::TransformerFailed);
    let config = StrictConfig::new()
        .transformer(
            "code",
            Transformer::legacy(
                Builtin::Uppercase,
                OnMissing::Fail,
                OnExisting::Skip,
                ApplyTo::Expected,
            ),
        )
        .unwrap();
    let v = run(&json!([{}]), &json!([{"code": "x"}]), &config);
    assert_eq!(
        lines(&v)[0],
        r#"[0].code: transformer failed: missing in expected, and the transformer (uppercase) has on_missing = "fail""#
    );
    assert_eq!(
        lines(&run(
            &json!([{"code": "x"}]),
            &json!([{"code": "x"}]),
            &config
        )),
        Vec::<String>::new(),
        "on_existing = skip leaves the value"
    );
}

#[test]
fn conditions_are_read_from_the_chosen_proposal() {
    let lower = |target: ConditionTarget| {
        StrictConfig::new()
            .transformer(
                "name",
                Transformer::new(Builtin::Lowercase, Strategy::TransformAlways)
                    .condition_target(target)
                    .when(Condition::equals("kind", "soft").unwrap()),
            )
            .unwrap()
    };
    let soft = json!([{"kind": "soft", "name": "X"}]);
    let hard = json!([{"kind": "hard", "name": "X"}]);
    // Own: each side by its own kind.
    let v = run(&soft, &hard, &lower(ConditionTarget::Own));
    assert_eq!(v.expected_normalized[0]["name"], json!("x"));
    assert_eq!(v.actual_normalized[0]["name"], json!("X"));
    // Actual or expected: both sides by that one.
    let v = run(&soft, &hard, &lower(ConditionTarget::Actual));
    assert_eq!(v.expected_normalized[0]["name"], json!("X"));
    assert_eq!(v.actual_normalized[0]["name"], json!("X"));
    let v = run(&soft, &hard, &lower(ConditionTarget::Expected));
    assert_eq!(v.expected_normalized[0]["name"], json!("x"));
    assert_eq!(v.actual_normalized[0]["name"], json!("x"));
    let v = run(&hard, &soft, &lower(ConditionTarget::Expected));
    assert_eq!(v.actual_normalized[0]["name"], json!("X"));
}

#[test]
fn a_wildcard_transformer_path_reaches_elements_of_either_side() {
    let config = strict(
        r#"
[transformers."items[*].name"]
transform = "trim"
strategy = "transform_always"
"#,
    );
    let v = run(
        &json!({"items": [{"name": " a "}]}),
        &json!({"items": [{"name": "a"}, {"name": " b "}]}),
        &config,
    );
    assert_eq!(lines(&v), [r#"items[1]: extra in actual"#]);
    assert_eq!(v.actual_normalized["items"][1], json!({"name": "b"}));
    assert_eq!(v.expected_normalized["items"][0], json!({"name": "a"}));
    // Added where only the other side has it.
    let config = strict(
        r#"
[transformers."items[*].date"]
transform = "today_utc_midnight"
on_missing = "add"
on_existing = "skip"
apply_to = "both"
"#,
    );
    let v = run(
        &json!({"items": [{"date": "d"}, {}]}),
        &json!({"items": [{}, {"date": "d"}]}),
        &config,
    );
    assert_eq!(
        lines(&v),
        [
            r#"items[0].date: values differ: expected "d", actual "2025-03-04T00:00:00Z""#,
            r#"items[1].date: values differ: expected "2025-03-04T00:00:00Z", actual "d""#,
        ]
    );
}

#[test]
fn a_rewritten_side_is_copied_and_an_untouched_one_is_not() {
    let config = StrictConfig::new()
        .transformer(
            "a",
            Transformer::new(Builtin::Trim, Strategy::TransformAlways),
        )
        .unwrap();
    let e = json!([{"a": " x "}]);
    let a = json!([{"a": "x"}]);
    let v = evaluate(&e, &a, &config, None, &ctx());
    assert!(matches!(v.expected_normalized, Cow::Owned(_)));
    assert!(matches!(v.actual_normalized, Cow::Borrowed(_)));
    let owned = v.clone().into_owned();
    assert_eq!(owned.expected_normalized, v.expected_normalized);
    assert_eq!(owned.actual_normalized, v.actual_normalized);
    assert_eq!((owned.score, owned.pairs), (1.0, vec![(0, 0)]));
    let v = evaluate(&a, &json!([{"a": 1}]), &config, None, &ctx()).into_owned();
    assert_eq!(v.mismatches.len(), 1);
    assert_eq!(
        lines(&v),
        ["[0].a: values differ: expected \"x\", actual 1"]
    );
}

#[test]
fn any_order_pairs_by_fewest_mismatches() {
    let config = StrictConfig::new().matching(Matching::AnyOrder);
    assert_eq!(config.matching, Matching::AnyOrder);
    let e = json!([{"id": "a", "w": 1}, {"id": "b", "w": 2}]);
    let a = json!([{"id": "b", "w": 2}, {"id": "a", "w": 5}]);
    let v = run(&e, &a, &config);
    assert_eq!(v.pairs, [(0, 1), (1, 0)]);
    assert_eq!(
        lines(&v),
        ["[0].w: values differ: expected 1, actual 5 (paired with actual [1])"]
    );
    assert_eq!(v.mismatches[0].actual_index, Some(1));
    // One expected, several actual: the one that fits is picked.
    let v = run(
        &json!([{"id": "b"}]),
        &json!([{"id": "a"}, {"id": "b"}]),
        &config,
    );
    assert_eq!(v.pairs, [(0, 1)]);
    assert_eq!(
        lines(&v),
        [
            "$: proposal count differs: expected 1, actual 2",
            "[0]: unmatched actual proposal"
        ]
    );
    let v = run(
        &json!([{"id": "a"}, {"id": "b"}]),
        &json!([{"id": "b"}]),
        &config,
    );
    assert_eq!(v.pairs, [(1, 0)]);
    assert_eq!(
        lines(&v),
        [
            "$: proposal count differs: expected 2, actual 1",
            "[0]: unmatched expected proposal"
        ]
    );
    // One of each is simply paired.
    let v = run(&json!([{"id": "a"}]), &json!([{"id": "b"}]), &config);
    assert_eq!(v.pairs, [(0, 0)]);
    assert_eq!(
        lines(&v),
        [r#"[0].id: values differ: expected "a", actual "b""#]
    );
    let v = run(&json!([]), &json!([]), &config);
    assert!(v.passed() && v.pairs.is_empty());
}

#[test]
fn the_builder_rejects_bad_paths() {
    assert!(StrictConfig::new().ignore_path("a..b").is_err());
    assert!(StrictConfig::new().discriminator("a[*]").is_err());
    assert!(StrictConfig::new()
        .transformer(
            "a..b",
            Transformer::new(Builtin::Trim, Strategy::TransformAlways)
        )
        .is_err());
    let config = StrictConfig::new()
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
    assert_eq!(config.discriminator_location().to_string(), "kind");
    let v = run(
        &json!([{"kind": "x"}]),
        &json!([{"kind": "x", "raw": {"v": 0}}]),
        &config,
    );
    assert!(v.passed(), "{}", v.render(false));
    assert_eq!(*v.actual_normalized, json!([{"kind": "x", "v": 0}]));
    let v = run(&json!([{"kind": "y"}]), &json!([{"kind": "x"}]), &config);
    assert_eq!(
        lines(&v),
        [r#"[0]: expected proposal: no normalization rule for kind = "y" (rules exist for "x")"#]
    );
}

#[test]
fn transformers_and_patterns_read_from_toml() {
    let config = strict(
        r#"
matching = "any_order"
ignorePaths = ["meta.*"]

[transformers."b"]
transform = "trim"
strategy = "transform_always"

[transformers."a[0]"]
transform = "lowercase"
strategy = "transform_always"
"#,
    );
    assert_eq!(config.matching, Matching::AnyOrder);
    assert_eq!(config.ignore_paths[0].as_str(), "meta.*");
    let paths: Vec<&str> = config
        .transformers
        .iter()
        .map(|(p, _)| p.as_str())
        .collect();
    assert_eq!(paths, ["a[0]", "b"]);
    let err = toml::from_str::<StrictConfig>("[transformers.\"a..b\"]\ntransform = \"trim\"")
        .unwrap_err()
        .to_string();
    assert!(err.contains("invalid path `a..b`"), "{err}");
}
