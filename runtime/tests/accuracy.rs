//! Field accuracy as a user configures it: TOML in, verdicts out; and the built-in fuzzy
//! measures checked against `strsim`.

use proposal_eval::accuracy::{evaluate, Aggregation, FieldAccuracyConfig, Matcher};
use proposal_eval::fuzzy;
use serde::Deserialize;
use serde_json::json;

/// The `[field_accuracy]` table inside a suite file, so errors carry real line numbers.
#[derive(Deserialize)]
struct Suite {
    field_accuracy: FieldAccuracyConfig,
}

fn load(text: &str) -> Result<FieldAccuracyConfig, toml::de::Error> {
    toml::from_str::<Suite>(text).map(|s| s.field_accuracy)
}

const INVOICE: &str = r#"
[field_accuracy]
aggregation = "weighted_average"
threshold = 0.75

[[field_accuracy.fields]]
path = "invoice.total_amount"
match = "numeric_tolerance"
tolerance = 0.01
weight = 2.0

[[field_accuracy.fields]]
path = "invoice.invoice_date"
match = "date"
formats = ["DD-MMM-YYYY", "YYYY-MM-DD", "MM/DD/YYYY"]

[[field_accuracy.fields]]
path = "invoice.supplier"
match = "fuzzy"
algorithm = "jaro_winkler"
threshold = 0.9
ignore_case = true

[[field_accuracy.fields]]
path = "invoice.line_items"
match = "exact"
array_match = "any_order"

[[field_accuracy.fields]]
path = "invoice.po_number"
required = false
"#;

#[test]
fn the_design_s_config_loads_and_scores() {
    let config = load(INVOICE).unwrap();
    assert_eq!(config.aggregation, Aggregation::WeightedAverage);
    assert_eq!(config.fields.len(), 5);
    assert!(matches!(
        config.fields[0].matcher,
        Matcher::NumericTolerance { tolerance, relative: false } if tolerance == 0.01
    ));
    assert!(!config.fields[4].required);

    let expected = json!({"invoice": {
        "total_amount": 1500.0, "invoice_date": "2025-01-15", "supplier": "Acme Industrial GmbH",
        "line_items": [{"sku": "A", "qty": 2}, {"sku": "B", "qty": 1}], "po_number": "PO-9"}});
    let actual = json!({"invoice": {
        "total_amount": "1500.004", "invoice_date": "15-JAN-2025", "supplier": "ACME Industrial GmbH.",
        "line_items": [{"sku": "B", "qty": 1}, {"sku": "A", "qty": 3}]}});
    let verdict = evaluate(&expected, &actual, &config);
    assert_eq!(verdict.hits.len(), 3);
    assert_eq!(verdict.misses.len(), 1);
    assert_eq!(verdict.misses[0].path.to_string(), "invoice.line_items");
    // (2 + 1 + 1) / (2 + 1 + 1 + 1)
    assert_eq!(verdict.score, 0.8);
    assert!(verdict.passed);
    assert_eq!(
        verdict.reasoning,
        "3/4 fields matched (weight 4/5), score 0.80 ≥ 0.75"
    );
}

#[test]
fn typos_are_errors_with_a_line() {
    for (text, needle, line) in [
        (
            "[field_accuracy]\n[[field_accuracy.fields]]\npath = \"a\"\ntolerence = 0.1\n",
            "unknown field `tolerence`",
            4,
        ),
        (
            "[field_accuracy]\n[[field_accuracy.fields]]\npath = \"a\"\nmatch = \"fuzy\"\n",
            "unknown variant `fuzy`, expected one of `exact`, `numeric_tolerance`, `date`, `fuzzy`",
            4,
        ),
        (
            "[field_accuracy]\naggregation = \"average\"\n",
            "expected `weighted_average` or `all_or_nothing`",
            2,
        ),
        (
            "[field_accuracy]\n[[field_accuracy.fields]]\npath = \"a\"\nmatch = \"date\"\nformats = [\"DD/MM/YYY\"]\n",
            "`YYY` is not a token",
            5,
        ),
        (
            "[field_accuracy]\n[[field_accuracy.fields]]\npath = \"a..b\"\n",
            "invalid path `a..b`",
            3,
        ),
        (
            "[field_accuracy]\n[[field_accuracy.fields]]\npath = \"a\"\nmatch = \"exact\"\ntolerance = 0.01\n",
            "`tolerance` applies to match = \"numeric_tolerance\", but this field is match = \"exact\"",
            2,
        ),
        (
            "[field_accuracy]\nthreshold = 75\n",
            "`threshold` must be within 0 and 1, got 75",
            1,
        ),
        (
            "[field_accuracy]\n[[field_accuracy.fields]]\npath = \"a\"\nweight = -1\n",
            "`weight` must be a positive number",
            2,
        ),
    ] {
        let err = load(text).unwrap_err();
        let message = err.to_string();
        assert!(message.contains(needle), "{text}\n=> {message}");
        let span = err.span().expect("a span");
        let at = text[..span.start].matches('\n').count() + 1;
        assert!(
            at >= line.min(2) && at <= line,
            "{text}: error at line {at}, want near {line}\n{message}"
        );
    }
}

#[test]
fn day_first_formats_are_honoured_from_toml() {
    let config = load(
        "[field_accuracy]\n[[field_accuracy.fields]]\npath = \"d\"\nmatch = \"date\"\nformats = [\"DD/MM/YYYY\"]\n",
    )
    .unwrap();
    let v = evaluate(
        &json!({"d": "2025-02-03"}),
        &json!({"d": "03/02/2025"}),
        &config,
    );
    assert!(v.passed, "{}", v.reasoning);
    let v = evaluate(
        &json!({"d": "2025-03-02"}),
        &json!({"d": "03/02/2025"}),
        &config,
    );
    assert!(!v.passed);
    assert_eq!(
        v.misses[0].why,
        "dates differ: expected 2025-03-02, actual 2025-02-03"
    );
}

#[test]
fn dates_do_not_depend_on_the_time_zone() {
    let config =
        load("[field_accuracy]\n[[field_accuracy.fields]]\npath = \"d\"\nmatch = \"date\"\n")
            .unwrap();
    // The engine reads no environment; setting TZ proves the point for the zones that broke
    // the system this replaces (west of UTC) and the far east.
    for zone in [
        "America/Los_Angeles",
        "EST5EDT",
        "Pacific/Kiritimati",
        "UTC",
    ] {
        std::env::set_var("TZ", zone);
        for (e, a) in [
            ("2025-01-15", "15-JAN-2025"),
            ("2025-01-15", "2025-01-15T00:00:00Z"),
            ("2025-01-15", "2025-01-15T23:59:59-08:00"),
            ("2024-12-31", "31-Dec-2024"),
        ] {
            let v = evaluate(&json!({ "d": e }), &json!({ "d": a }), &config);
            assert!(v.passed, "TZ={zone}: {e} vs {a}: {}", v.reasoning);
        }
    }
}

#[test]
fn builder_and_toml_agree() {
    use proposal_eval::accuracy::FieldSpec;
    use proposal_eval::fuzzy::Algorithm;
    let built = FieldAccuracyConfig::new()
        .threshold(0.75)
        .field(FieldSpec::numeric_tolerance("invoice.total_amount", 0.01).weight(2.0))
        .field(FieldSpec::date("invoice.invoice_date").formats(&[
            "DD-MMM-YYYY",
            "YYYY-MM-DD",
            "MM/DD/YYYY",
        ]))
        .field(
            FieldSpec::fuzzy("invoice.supplier", 0.9)
                .algorithm(Algorithm::JaroWinkler)
                .ignore_case(),
        )
        .field(FieldSpec::exact("invoice.line_items").any_order())
        .field(FieldSpec::exact("invoice.po_number").optional());
    assert_eq!(built, load(INVOICE).unwrap());
}

/// Deterministic pseudo-random strings for the cross-check.
fn strings(seed: u64, n: usize) -> Vec<String> {
    let alphabets = [
        "abcdefghij ".chars().collect::<Vec<_>>(),
        "ACME GmbHIndustrial.,-0123456789".chars().collect(),
        "aàäbßc日本 ".chars().collect(),
    ];
    let mut state = seed;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as usize
    };
    (0..n)
        .map(|i| {
            let alphabet = &alphabets[i % alphabets.len()];
            let len = next() % if i % 11 == 0 { 100 } else { 35 };
            (0..len)
                .map(|_| alphabet[next() % alphabet.len()])
                .collect()
        })
        .collect()
}

#[test]
fn fuzzy_agrees_with_strsim() {
    let items = strings(42, 600);
    for pair in items.chunks(2) {
        let (a, b) = (&pair[0], &pair[1]);
        assert_eq!(
            fuzzy::levenshtein(a, b),
            strsim::levenshtein(a, b),
            "{a:?} {b:?}"
        );
        let close = |x: f64, y: f64| (x - y).abs() < 1e-12;
        assert!(
            close(
                fuzzy::normalized_levenshtein(a, b),
                strsim::normalized_levenshtein(a, b)
            ),
            "{a:?} {b:?}"
        );
        assert!(close(fuzzy::jaro(a, b), strsim::jaro(a, b)), "{a:?} {b:?}");
        assert!(
            close(fuzzy::jaro_winkler(a, b), strsim::jaro_winkler(a, b)),
            "{a:?} {b:?}"
        );
    }
    // Near-misses exercise the matching paths more than random pairs do.
    for a in strings(7, 200) {
        let mut b: Vec<char> = a.chars().collect();
        if b.len() > 3 {
            b.swap(1, 2);
            b.remove(b.len() / 2);
        }
        let b: String = b.into_iter().collect();
        assert_eq!(fuzzy::levenshtein(&a, &b), strsim::levenshtein(&a, &b));
        assert!((fuzzy::jaro_winkler(&a, &b) - strsim::jaro_winkler(&a, &b)).abs() < 1e-12);
    }
}

#[test]
fn comparing_a_document_with_itself_always_passes() {
    let config = load(INVOICE).unwrap();
    for doc in [
        json!({"invoice": {"total_amount": "12.5", "invoice_date": "01/31/2025", "supplier": "x",
                           "line_items": [3, 2, 1], "po_number": null}}),
        json!({"invoice": {"total_amount": -0.0, "invoice_date": "31-DEC-1999", "supplier": "",
                           "line_items": [], "po_number": {"a": [1]}}}),
    ] {
        let v = evaluate(&doc, &doc, &config);
        assert!(v.passed, "{}", v.render(false));
        assert_eq!(v.score, 1.0);
    }
}
