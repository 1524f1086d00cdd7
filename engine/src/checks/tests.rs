use super::*;
use serde_json::{json, Value};

fn checks(list: Value) -> Vec<Check> {
    serde_json::from_value(list).unwrap_or_else(|e| panic!("{e}"))
}

/// The failure lines of `list` applied to `output` (empty when every check passes).
fn lines(list: Value, output: &Value) -> Vec<String> {
    evaluate(&checks(list), output, &no_schemas).misses()
}

fn error(check: Value) -> String {
    serde_json::from_value::<Check>(check)
        .unwrap_err()
        .to_string()
}

#[test]
fn contains_is_exact_and_counts_unicode_as_text() {
    let out = json!({"reply": "Ihr Paket ist unterwegs: Straße 5, 日本 📦"});
    assert!(lines(json!([{"path": "reply", "contains": "Straße"}]), &out).is_empty());
    assert!(lines(json!([{"path": "reply", "contains": "日本 📦"}]), &out).is_empty());
    assert!(lines(json!([{"path": "reply", "contains": ""}]), &out).is_empty());
    assert_eq!(
        lines(json!([{"path": "reply", "contains": "paket"}]), &out),
        ["reply: contains \"paket\": actual \"Ihr Paket ist unterwegs: Straße 5, 日本 📦\""]
    );
    // The empty string holds only the empty string.
    assert!(lines(json!([{"path": "r", "contains": ""}]), &json!({"r": ""})).is_empty());
    assert_eq!(
        lines(json!([{"path": "r", "contains": "a"}]), &json!({"r": ""})),
        ["r: contains \"a\": actual \"\""]
    );
}

#[test]
fn icontains_lower_cases_both_sides() {
    let out = json!({"reply": "ÉTÉ Refund ΣΟΦΙΑ"});
    for needle in ["refund", "REFUND", "été", "σοφια", ""] {
        assert!(
            lines(json!([{"path": "reply", "icontains": needle}]), &out).is_empty(),
            "{needle}"
        );
    }
    assert_eq!(
        lines(json!([{"path": "reply", "icontains": "winter"}]), &out),
        ["reply: icontains \"winter\": actual \"ÉTÉ Refund ΣΟΦΙΑ\""]
    );
}

#[test]
fn not_contains_fails_on_the_text_and_on_a_missing_value() {
    let out = json!({"reply": "We cannot refund this, sorry."});
    assert!(lines(
        json!([{"path": "reply", "not_contains": "guarantee"}]),
        &out
    )
    .is_empty());
    assert_eq!(
        lines(json!([{"path": "reply", "not_contains": "sorry"}]), &out),
        ["reply: not_contains \"sorry\": actual \"We cannot refund this, sorry.\""]
    );
    // Every string holds "": nothing passes `not_contains ""`.
    assert_eq!(
        lines(
            json!([{"path": "r", "not_contains": ""}]),
            &json!({"r": ""})
        )
        .len(),
        1
    );
    // No value: a failure, not a pass by absence.
    assert_eq!(
        lines(json!([{"path": "note", "not_contains": "x"}]), &out),
        ["note: not_contains \"x\": the path matches nothing in the output"]
    );
}

#[test]
fn regex_searches_and_anchors_when_asked() {
    let out = json!({"id": "Order A-1001 shipped", "emoji": "✅ done"});
    assert!(lines(json!([{"path": "id", "regex": "[A-Z]-\\d{4}"}]), &out).is_empty());
    assert!(lines(json!([{"path": "emoji", "regex": "^\\p{So} \\w+$"}]), &out).is_empty());
    assert!(lines(json!([{"path": "id", "regex": ""}]), &out).is_empty());
    assert_eq!(
        lines(json!([{"path": "id", "regex": "^A-\\d+$"}]), &out),
        ["id: regex \"^A-\\\\d+$\": actual \"Order A-1001 shipped\""]
    );
    assert!(lines(json!([{"path": "e", "regex": "^$"}]), &json!({"e": ""})).is_empty());
}

#[test]
fn a_regex_that_does_not_compile_names_its_character() {
    assert_eq!(
        error(json!({"path": "reply", "regex": "tok_[a-z"})),
        "invalid regex `tok_[a-z` at character 5: unclosed character class"
    );
    // Characters, not bytes: `é` is one.
    assert_eq!(
        error(json!({"path": "reply", "regex": "é(a"})),
        "invalid regex `é(a` at character 2: unclosed group"
    );
    assert_eq!(
        error(json!({"path": "reply", "regex": "\\p{Nope}"})),
        "invalid regex `\\p{Nope}` at character 1: Unicode property not found"
    );
}

#[test]
fn equals_and_one_of_take_any_json_numbers_by_value() {
    let out = json!({"n": 1.0, "s": "", "o": {"a": [1, null]}, "z": null});
    assert!(lines(
        json!([
            {"path": "n", "equals": 1},
            {"path": "s", "equals": ""},
            {"path": "o", "equals": {"a": [1.0, null]}},
            {"path": "z", "equals": null},
            {"path": "n", "one_of": ["1", 1]},
            {"path": "s", "one_of": ["", "x"]},
        ]),
        &out
    )
    .is_empty());
    assert_eq!(
        lines(
            json!([{"path": "n", "equals": "1"}, {"path": "s", "one_of": []}]),
            &out
        ),
        ["n: equals \"1\": actual 1.0", "s: one_of []: actual \"\""]
    );
}

#[test]
fn lengths_count_characters_not_bytes() {
    // 5 characters, 15 bytes.
    let out = json!({"r": "日本語です", "e": ""});
    assert!(lines(
        json!([
            {"path": "r", "min_length": 5},
            {"path": "r", "max_length": 5},
            {"path": "e", "max_length": 0},
            {"path": "e", "min_length": 0},
        ]),
        &out
    )
    .is_empty());
    assert_eq!(
        lines(
            json!([{"path": "r", "min_length": 6}, {"path": "r", "max_length": 4}, {"path": "e", "min_length": 1}]),
            &out
        ),
        [
            "r: min_length 6: actual \"日本語です\" (5 characters)",
            "r: max_length 4: actual \"日本語です\" (5 characters)",
            "e: min_length 1: actual \"\" (0 characters)",
        ]
    );
}

#[test]
fn text_checks_on_another_kind_of_value_fail_naming_it() {
    let out = json!({"n": 42, "l": ["a"], "z": null});
    assert_eq!(
        lines(
            json!([
                {"path": "n", "contains": "4"},
                {"path": "l", "max_length": 3},
                {"path": "z", "regex": "."},
            ]),
            &out
        ),
        [
            "n: contains \"4\": actual 42, which is a number, not a string",
            "l: max_length 3: actual [\"a\"], which is an array, not a string",
            "z: regex \".\": actual null, which is null, not a string",
        ]
    );
}

#[test]
fn a_wildcard_applies_to_each_match_and_one_check_counts_once() {
    let out = json!([
        {"type": "tool_call", "name": "lookup_order"},
        {"type": "reply", "text": "Refund sent."},
        {"type": "reply", "text": "No idea."},
    ]);
    let verdict = evaluate(
        &checks(json!([
            {"path": "[*].type", "one_of": ["tool_call", "reply"]},
            {"path": "[*].text", "icontains": "refund"},
        ])),
        &out,
        &no_schemas,
    );
    assert_eq!((verdict.checks, verdict.passed_checks), (2, 1));
    assert_eq!(verdict.score, 0.5);
    assert!(!verdict.passed);
    assert_eq!(
        verdict.misses(),
        ["[2].text: icontains \"refund\": actual \"No idea.\""]
    );
    assert_eq!(verdict.failures[0].check, 1);
    assert_eq!(verdict.failures[0].path, "[2].text");
}

#[test]
fn a_wildcard_matching_nothing_fails_saying_so() {
    for output in [json!({"items": []}), json!({}), json!([]), json!("text")] {
        let verdict = evaluate(
            &checks(json!([{"path": "items[*].note", "max_length": 10}])),
            &output,
            &no_schemas,
        );
        assert!(!verdict.passed, "{output}");
        assert_eq!(verdict.score, 0.0);
        assert_eq!(
            verdict.misses(),
            ["items[*].note: max_length 10: the path matches nothing in the output"]
        );
    }
    // `**` matches the root too; `$` is the whole output.
    assert!(lines(json!([{"path": "$", "equals": "text"}]), &json!("text")).is_empty());
}

#[test]
fn a_long_value_is_cut_at_the_cap() {
    let long = "é".repeat(500);
    let line = &lines(
        json!([{"path": "r", "max_length": 3}]),
        &json!({ "r": long }),
    )[0];
    let shown = line
        .strip_prefix("r: max_length 3: actual ")
        .and_then(|l| l.strip_suffix(" (500 characters)"))
        .unwrap();
    assert_eq!(shown.chars().count(), VALUE_CAP);
    assert!(
        shown.starts_with("\"éé") && shown.ends_with("é…"),
        "{shown}"
    );
}

#[test]
fn json_schema_asks_the_validator_given() {
    let list = checks(json!([
        {"path": "reply", "json_schema": ".schemas/reply.json"},
        {"path": "reply", "json_schema": ".schemas/other.json"},
    ]));
    let validator = |file: &str, value: &Value| -> Result<(), String> {
        match (file, value.is_object()) {
            (".schemas/reply.json", true) => Ok(()),
            _ => Err(format!("at /: {value} is not valid under {file}")),
        }
    };
    let verdict = evaluate(&list, &json!({"reply": {"a": 1}}), &validator);
    assert_eq!(
        verdict.misses(),
        ["reply: json_schema \".schemas/other.json\": at /: {\"a\":1} is not valid under .schemas/other.json"]
    );
    assert_eq!(list[0].schema_file(), Some(".schemas/reply.json"));
    assert_eq!(
        evaluate(&list[..1], &json!({"reply": 1}), &no_schemas).misses(),
        ["reply: json_schema \".schemas/reply.json\": no validator was given for the schema `.schemas/reply.json`"]
    );
}

#[test]
fn malformed_checks_name_the_fix() {
    assert_eq!(
        error(json!({"path": "reply"})),
        "the check of `reply` has no operator: add one of `contains`, `icontains`, `not_contains`, `regex`, `equals`, `one_of`, `min_length`, `max_length`, `json_schema`"
    );
    assert_eq!(
        error(json!({"path": "reply", "contains": "a", "max_length": 3})),
        "the check of `reply` has 2 operators (contains, max_length): a check has one; write one check per operator"
    );
    let unknown = error(json!({"path": "reply", "containz": "a"}));
    assert!(
        unknown.starts_with("unknown field `containz`, expected one of `path`, `contains`"),
        "{unknown}"
    );
    assert!(error(json!({"contains": "a"})).contains("missing field `path`"));
    assert!(error(json!({"path": "a..b", "contains": "a"})).contains("invalid path `a..b`"));
    assert!(error(json!({"path": "r", "max_length": -1})).contains("invalid value"));
    assert!(error(json!({"path": "r", "contains": 3})).contains("invalid type"));
    assert!(error(json!({"path": "r", "json_schema": " "})).contains("`json_schema` is empty"));
}

#[test]
fn checks_read_from_toml_as_a_suite_writes_them() {
    #[derive(serde::Deserialize)]
    struct Suite {
        checks: Vec<Check>,
    }
    let suite: Suite = toml::from_str(
        "[[checks]]\npath = \"reply\"\nregex = '^\\w'\n[[checks]]\npath = \"n\"\none_of = [1, \"x\"]\n",
    )
    .unwrap();
    assert_eq!(suite.checks[0].to_string(), "regex \"^\\\\w\"");
    assert_eq!(suite.checks[1].to_string(), "one_of [1,\"x\"]");
    let err = toml::from_str::<Suite>("[[checks]]\npath = \"r\"\nregex = \"(\"\n")
        .err()
        .unwrap();
    assert!(
        err.message()
            .contains("invalid regex `(` at character 1: unclosed group"),
        "{err}"
    );
}

#[test]
fn no_check_scores_one() {
    let verdict = evaluate(&[], &json!(null), &no_schemas);
    assert_eq!((verdict.score, verdict.passed), (1.0, true));
    assert_eq!(verdict.render(), "0 of 0 checks passed, score 1\n");
}
