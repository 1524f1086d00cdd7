//! Failure output: the lines and the diff a user reads under a failing case.

use proposal_eval_engine::compare::{
    evaluate, Mismatch, MismatchKind, StrictConfig, StrictVerdict,
};
use proposal_eval_engine::path::Location;
use proposal_eval_engine::render::{compact, line_diff, mask_ignored, unified_diff};
use proposal_eval_engine::transform::Context;
use serde_json::{json, Value};

fn ctx() -> Context {
    Context::at("2025-03-04T15:16:17Z".parse().unwrap())
}

fn strict(toml_body: &str) -> StrictConfig {
    toml::from_str(toml_body).unwrap_or_else(|e| panic!("{e}"))
}

fn run(e: &Value, a: &Value, c: &StrictConfig) -> StrictVerdict<'static> {
    evaluate(e, a, c, None, &ctx()).into_owned()
}

fn mismatch(kind: MismatchKind, expected: Option<Value>, actual: Option<Value>) -> Mismatch {
    Mismatch {
        kind,
        location: Location::parse("[2].x").unwrap(),
        actual_index: Some(0),
        expected,
        actual,
        detail: None,
    }
}

#[test]
fn each_kind_of_mismatch_reads_as_one_line() {
    use MismatchKind::*;
    let with_detail = |kind, detail: &str| Mismatch {
        detail: Some(detail.into()),
        actual_index: None,
        ..mismatch(kind, None, None)
    };
    for (m, line) in [
        (
            mismatch(MissingInActual, Some(json!(1)), None),
            "[2].x: missing in actual (paired with actual [0])",
        ),
        (
            mismatch(ExtraInActual, None, Some(json!(1))),
            "[2].x: extra in actual (paired with actual [0])",
        ),
        (
            mismatch(ValuesDiffer, Some(json!(1)), Some(json!("1"))),
            r#"[2].x: values differ: expected 1, actual "1" (paired with actual [0])"#,
        ),
        (
            mismatch(ValuesDiffer, None, None),
            "[2].x: values differ: expected nothing, actual nothing (paired with actual [0])",
        ),
        (
            mismatch(TypeDiffers, Some(json!({})), Some(json!([]))),
            "[2].x: type differs: expected an object, actual an array (paired with actual [0])",
        ),
        (
            mismatch(TypeDiffers, Some(json!("s")), Some(json!(1.5))),
            r#"[2].x: type differs: expected a string "s", actual a number 1.5 (paired with actual [0])"#,
        ),
        (
            mismatch(TypeDiffers, Some(json!(true)), Some(Value::Null)),
            "[2].x: type differs: expected a boolean true, actual null (paired with actual [0])",
        ),
        (
            mismatch(TypeDiffers, None, None),
            "[2].x: type differs: expected nothing, actual nothing (paired with actual [0])",
        ),
        (
            with_detail(TypeDiffers, "why"),
            "[2].x: type differs: expected nothing, actual nothing (why)",
        ),
        (
            mismatch(CountDiffers, Some(json!(1)), Some(json!(2))),
            "[2].x: proposal count differs: expected 1, actual 2",
        ),
        (
            mismatch(UnmatchedExpected, None, None),
            "[2].x: unmatched expected proposal",
        ),
        (
            with_detail(UnmatchedExpected, "k = 1"),
            "[2].x: unmatched expected proposal (k = 1)",
        ),
        (
            mismatch(UnmatchedActual, None, None),
            "[2].x: unmatched actual proposal",
        ),
        (
            with_detail(UnmatchedActual, "k = 2"),
            "[2].x: unmatched actual proposal (k = 2)",
        ),
        (
            mismatch(NoNormalizationRule, None, None),
            "[2].x: no normalization rule",
        ),
        (
            with_detail(NoNormalizationRule, "actual proposal: none"),
            "[2].x: actual proposal: none",
        ),
        (
            mismatch(TransformerFailed, None, None),
            "[2].x: transformer failed:  (paired with actual [0])",
        ),
        (
            with_detail(TransformerFailed, "gone"),
            "[2].x: transformer failed: gone",
        ),
        (
            mismatch(InvalidIgnorePaths, None, None),
            "[2].x: invalid ignore_paths: ",
        ),
        (
            with_detail(InvalidIgnorePaths, "bad"),
            "[2].x: invalid ignore_paths: bad",
        ),
    ] {
        assert_eq!(m.to_string(), line);
    }
}

#[test]
fn long_values_are_cut_in_the_line() {
    let long = json!("x".repeat(100));
    let m = mismatch(
        MismatchKind::ValuesDiffer,
        Some(long.clone()),
        Some(json!(1)),
    );
    let line = m.to_string();
    let shown = format!("\"{}…", "x".repeat(78));
    assert!(
        line.contains(&format!("expected {shown}, actual 1")),
        "{line}"
    );
    assert_eq!(compact(&json!("abc"), 5), "\"abc\"");
    assert_eq!(compact(&json!("abcd"), 5), "\"abc…");
    let m = mismatch(MismatchKind::TypeDiffers, Some(long), Some(json!([])));
    assert!(
        m.to_string()
            .contains(&format!("a string \"{}…, actual", "x".repeat(58))),
        "{m}"
    );
}

#[test]
fn ignored_paths_show_as_ignored_on_both_sides_of_the_diff() {
    let config = strict(r#"ignore_paths = ["meta.*", "[1].note"]"#);
    let expected = json!([
        {"id": 1, "meta": {"t": 1}},
        {"id": 2, "note": "x", "v": "b"}
    ]);
    let actual = json!([
        {"id": 1, "meta": {"t": 2}},
        {"id": 2, "note": "y", "v": "B"}
    ]);
    let v = run(&expected, &actual, &config);
    assert_eq!(
        v.render(false),
        r#"  [1].v: values differ: expected "b", actual "B"
--- expected (normalized; ignored paths shown as "<ignored>")
+++ actual (normalized)
@@ -8,6 +8,6 @@
   {
     "id": 2,
     "note": "<ignored>",
-    "v": "b"
+    "v": "B"
   }
 ]
"#
    );
    // Next to a difference, the masked `meta` shows on both sides, whatever it holds.
    let v = run(
        &json!([{"id": 1, "meta": {"t": 1}}]),
        &json!([{"id": 5, "meta": {"t": 2}}]),
        &config,
    );
    assert_eq!(
        v.render(false),
        r#"  [0].id: values differ: expected 1, actual 5
--- expected (normalized; ignored paths shown as "<ignored>")
+++ actual (normalized)
@@ -1,6 +1,6 @@
 [
   {
-    "id": 1,
+    "id": 5,
     "meta": {
       "t": "<ignored>"
     }
"#
    );
}

#[test]
fn an_actual_is_masked_by_its_partners_list_and_an_unmatched_one_by_the_default() {
    let config = strict(
        r#"
matching = "any_order"
ignore_paths = ["ts"]
"#,
    );
    // The second expected proposal has its own list, which replaces the default one.
    let expected = json!([
        {"id": 1, "ts": 1, "k": "a"},
        {"id": 2, "ts": 1, "k": "b", "ignore_paths": ["k"]}
    ]);
    let actual = json!([
        {"id": 2, "ts": 1, "k": "B"},
        {"id": 1, "ts": 2, "k": "a"},
        {"id": 9, "ts": 3, "k": "z"}
    ]);
    let v = run(&expected, &actual, &config);
    assert_eq!(v.pairs, [(0, 1), (1, 0)]);
    let out = v.render(false);
    assert_eq!(
        out,
        r#"  $: proposal count differs: expected 2, actual 3
  [2]: unmatched actual proposal
--- expected (normalized; ignored paths shown as "<ignored>")
+++ actual (normalized)
@@ -8,5 +8,10 @@
     "id": 2,
     "k": "<ignored>",
     "ts": 1
+  },
+  {
+    "id": 9,
+    "k": "z",
+    "ts": "<ignored>"
   }
 ]
"#,
    );
}

#[test]
fn ignored_nodes_are_masked_by_pattern_and_proposal_index() {
    let patterns = [
        proposal_eval_engine::path::Pattern::parse("[1].a").unwrap(),
        proposal_eval_engine::path::Pattern::parse("list[*]").unwrap(),
    ];
    let doc = json!({"a": 1, "list": [1, {"b": 2}], "c": {"d": 3}});
    assert_eq!(
        mask_ignored(&doc, &patterns, Some(1)),
        json!({"a": "<ignored>", "list": ["<ignored>", "<ignored>"], "c": {"d": 3}})
    );
    assert_eq!(
        mask_ignored(&doc, &patterns, Some(0)),
        json!({"a": 1, "list": ["<ignored>", "<ignored>"], "c": {"d": 3}})
    );
    assert_eq!(mask_ignored(&doc, &[], None), doc);
}

#[test]
fn a_shape_mismatch_shows_both_documents() {
    let v = run(&json!([1]), &json!({"a": 1}), &StrictConfig::new());
    assert_eq!(
        v.render(false),
        r#"  $: type differs: expected an array, actual an object (expected a list of proposals)
--- expected (normalized; ignored paths shown as "<ignored>")
+++ actual (normalized)
@@ -1,3 +1,3 @@
-[
-  1
-]
+{
+  "a": 1
+}
"#
    );
}

#[test]
fn one_object_shows_as_it_is_with_its_ignored_paths() {
    let config = StrictConfig::new().ignore_path("t").unwrap();
    let v = run(&json!({"t": 1, "v": 1}), &json!({"t": 2, "v": 2}), &config);
    assert_eq!(
        v.render(false),
        r#"  v: values differ: expected 1, actual 2
--- expected (normalized; ignored paths shown as "<ignored>")
+++ actual (normalized)
@@ -1,4 +1,4 @@
 {
   "t": "<ignored>",
-  "v": 1
+  "v": 2
 }
"#
    );
}

#[test]
fn colour_only_when_asked() {
    let v = run(&json!([{"a": 1}]), &json!([{"a": 2}]), &StrictConfig::new());
    assert!(!v.render(false).contains('\x1b'));
    let coloured = v.render(true);
    assert!(
        coloured.contains("\x1b[31m-    \"a\": 1\x1b[0m"),
        "{coloured:?}"
    );
    assert!(
        coloured.contains("\x1b[32m+    \"a\": 2\x1b[0m"),
        "{coloured:?}"
    );
    assert!(
        coloured.contains("\x1b[36m@@ -1,5 +1,5 @@\x1b[0m"),
        "{coloured:?}"
    );
    assert!(coloured.contains("\x1b[1m--- expected"), "{coloured:?}");
}

#[test]
fn line_diffs_compare_canonical_json() {
    let d = line_diff(
        &json!({"b": 2, "a": 1}),
        &json!({"a": 1, "b": 3}),
        "old",
        "new",
        false,
    );
    assert_eq!(
        d,
        "--- old\n+++ new\n@@ -1,4 +1,4 @@\n {\n   \"a\": 1,\n-  \"b\": 2\n+  \"b\": 3\n }\n"
    );
    assert_eq!(
        line_diff(&json!(1), &json!(1), "o", "n", false),
        "--- o\n+++ n\n"
    );
    let d = unified_diff("a\nb", "a\nc", "e", "a", false);
    assert_eq!(
        d,
        "--- e\n+++ a\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"
    );
}
