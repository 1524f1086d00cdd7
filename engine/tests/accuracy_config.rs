//! `[field_accuracy]` as a user writes it in TOML: what each field entry means, its defaults, and
//! the message for every option that does not fit.

use proposal_eval_engine::accuracy::{Aggregation, FieldAccuracyConfig, FieldSpec};
use proposal_eval_engine::fuzzy::Algorithm;

fn read(toml_text: &str) -> Result<FieldAccuracyConfig, String> {
    toml::from_str(toml_text).map_err(|e| e.to_string())
}

fn refused(toml_text: &str) -> String {
    match read(toml_text) {
        Ok(config) => panic!("accepted: {toml_text}\n{config:?}"),
        Err(message) => message,
    }
}

/// A field of the given match type with one option; the error message it gets.
fn field_with(match_kind: &str, option: &str) -> String {
    refused(&format!(
        "[[fields]]\npath = \"f\"\nmatch = \"{match_kind}\"\n{option}\n"
    ))
}

#[test]
fn fields_read_from_toml_are_the_fields_built_in_rust() {
    let config = read(
        r#"
        aggregation = "all_or_nothing"
        threshold = 0.9
        [[fields]]
        path = "name"
        ignore_case = true
        normalize_whitespace = true
        [[fields]]
        path = "total"
        match = "numeric_tolerance"
        tolerance = 0.01
        relative = true
        [[fields]]
        path = "due"
        match = "date"
        formats = ["DD.MM.YYYY"]
        [[fields]]
        path = "vendor"
        match = "fuzzy"
        algorithm = "jaro_winkler"
        threshold = 0.9
        weight = 2.5
        required = false
        [[fields]]
        path = "items[*].sku"
        array_match = "any_order"
        "#,
    )
    .unwrap();
    let built = FieldAccuracyConfig::new()
        .aggregation(Aggregation::AllOrNothing)
        .threshold(0.9)
        .field(
            FieldSpec::exact("name")
                .ignore_case()
                .normalize_whitespace(),
        )
        .field(FieldSpec::numeric_tolerance("total", 0.01).relative())
        .field(FieldSpec::date("due").formats(&["DD.MM.YYYY"]))
        .field(
            FieldSpec::fuzzy("vendor", 0.9)
                .algorithm(Algorithm::JaroWinkler)
                .weight(2.5)
                .optional(),
        )
        .field(FieldSpec::exact("items[*].sku").any_order());
    assert_eq!(config, built);
    // And a spec differs from another one.
    assert_ne!(config.fields[0], config.fields[1]);
}

#[test]
fn defaults() {
    let config = read("[[fields]]\npath = \"a\"\n").unwrap();
    assert_eq!(config.threshold, 1.0);
    assert_eq!(config.aggregation, Aggregation::WeightedAverage);
    let field = &config.fields[0];
    assert_eq!(field, &FieldSpec::exact("a"));
    assert!(field.required);
    assert_eq!(field.weight, 1.0);
    assert!(!field.ignore_case && !field.normalize_whitespace);
    let fuzzy = read("[[fields]]\npath = \"a\"\nmatch = \"fuzzy\"\n").unwrap();
    assert_eq!(fuzzy.fields[0], FieldSpec::fuzzy("a", 0.85));
    let numeric = read("[[fields]]\npath = \"a\"\nmatch = \"numeric_tolerance\"\n").unwrap();
    assert_eq!(numeric.fields[0], FieldSpec::numeric_tolerance("a", 0.0));
}

#[test]
fn an_option_of_another_match_type_is_an_error_naming_field_option_and_type() {
    for (kind, option, applies_to) in [
        (
            "exact",
            "tolerance = 1",
            "`tolerance` applies to match = \"numeric_tolerance\"",
        ),
        (
            "fuzzy",
            "relative = true",
            "`relative` applies to match = \"numeric_tolerance\"",
        ),
        (
            "exact",
            "formats = [\"YYYY-MM-DD\"]",
            "`formats` applies to match = \"date\"",
        ),
        (
            "date",
            "algorithm = \"levenshtein\"",
            "`algorithm` applies to match = \"fuzzy\"",
        ),
        (
            "exact",
            "threshold = 0.5",
            "`threshold` applies to match = \"fuzzy\"",
        ),
        (
            "date",
            "ignore_case = true",
            "`ignore_case` applies to match = \"exact\" or \"fuzzy\"",
        ),
        (
            "numeric_tolerance",
            "normalize_whitespace = true",
            "`normalize_whitespace` applies to match = \"exact\" or \"fuzzy\"",
        ),
    ] {
        let message = field_with(kind, option);
        assert!(message.contains("field `f`: "), "{message}");
        assert!(message.contains(applies_to), "{option}: {message}");
        assert!(
            message.contains(&format!("this field is match = \"{kind}\"")),
            "{message}"
        );
    }
    // Each option is accepted where it applies.
    for (kind, option) in [
        ("numeric_tolerance", "tolerance = 1"),
        ("numeric_tolerance", "relative = true"),
        ("date", "formats = [\"YYYY-MM-DD\"]"),
        ("fuzzy", "algorithm = \"levenshtein\""),
        ("fuzzy", "threshold = 0.5"),
        ("exact", "ignore_case = true"),
        ("fuzzy", "normalize_whitespace = true"),
    ] {
        let text = format!("[[fields]]\npath = \"f\"\nmatch = \"{kind}\"\n{option}\n");
        assert!(read(&text).is_ok(), "{text}: {:?}", read(&text));
    }
}

#[test]
fn numbers_out_of_range_are_errors_with_the_value() {
    for (weight, shown) in [("0.0", "0"), ("-1.0", "-1"), ("nan", "NaN"), ("inf", "inf")] {
        let message = field_with("exact", &format!("weight = {weight}"));
        assert!(
            message.contains(&format!(
                "field `f`: `weight` must be a positive number, got {shown}"
            )),
            "{message}"
        );
    }
    for weight in ["1e-9", "1.0", "3.0"] {
        let text = format!("[[fields]]\npath = \"f\"\nweight = {weight}\n");
        assert!(read(&text).is_ok(), "{text}");
    }
    for (tolerance, shown) in [("-0.5", "-0.5"), ("inf", "inf"), ("nan", "NaN")] {
        let message = field_with("numeric_tolerance", &format!("tolerance = {tolerance}"));
        assert!(
            message.contains(&format!("`tolerance` must be a number >= 0, got {shown}")),
            "{message}"
        );
    }
    for tolerance in ["0.0", "0.5"] {
        let text = format!(
            "[[fields]]\npath = \"f\"\nmatch = \"numeric_tolerance\"\ntolerance = {tolerance}\n"
        );
        assert!(read(&text).is_ok(), "{text}");
    }
    for threshold in ["-0.1", "1.5"] {
        let message = field_with("fuzzy", &format!("threshold = {threshold}"));
        assert!(
            message.contains("fuzzy `threshold` must be within 0 and 1"),
            "{message}"
        );
        let message = refused(&format!("threshold = {threshold}\n"));
        assert!(
            message.contains("field_accuracy `threshold` must be within 0 and 1"),
            "{message}"
        );
    }
    for threshold in ["0.0", "1.0"] {
        assert!(read(&format!("threshold = {threshold}\n")).is_ok());
    }
}

#[test]
fn a_spec_debug_prints_its_options() {
    let spec = FieldSpec::fuzzy("vendor", 0.9).ignore_case().optional();
    let text = format!("{spec:?}");
    for part in [
        "FieldSpec",
        "vendor",
        "Fuzzy",
        "threshold: 0.9",
        "required: false",
        "ignore_case: true",
        "normalize_whitespace: false",
    ] {
        assert!(text.contains(part), "{part}: {text}");
    }
}

/// The builder refuses what the TOML refuses: folding options on a field that is not text.
#[test]
#[should_panic(expected = "`ignore_case` applies to exact and fuzzy, not numeric_tolerance")]
fn folding_a_number_field_panics() {
    let _ = FieldSpec::numeric_tolerance("total", 0.01).ignore_case();
}

#[test]
#[should_panic(expected = "`normalize_whitespace` applies to exact and fuzzy, not date")]
fn normalizing_a_date_field_panics() {
    let _ = FieldSpec::date("due").normalize_whitespace();
}
