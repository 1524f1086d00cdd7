//! Per-field cost of field accuracy, and the built-in fuzzy measures against `strsim` in the
//! same run.
//!
//! `cargo bench -p proposal-eval-engine --bench field_accuracy -- --warm-up-time 1 --measurement-time 3`
//!
//! Targets (issue 4): ≤ 1 µs per field for exact / numeric / date, ≤ 0.3 µs for fuzzy on
//! 30-character strings.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use proposal_eval_engine::accuracy::{evaluate, FieldAccuracyConfig, FieldSpec};
use proposal_eval_engine::fuzzy;
use serde_json::json;

const A30: &str = "ACME Industrial Supplies GmbH.";
/// Similarity to `A30` 0.73, or 0.83 ignoring case: a miss at the default threshold 0.85.
const B30: &str = "Acme Industrail Suplies GmbH  ";
/// One transposition from `A30`: similarity 0.93, a hit at 0.85.
const C30: &str = "ACME Industrail Supplies GmbH.";

fn per_field(c: &mut Criterion) {
    let mut group = c.benchmark_group("per_field");
    let cases = [
        (
            "exact",
            FieldSpec::exact("invoice.number"),
            json!({"invoice": {"number": "INV-2025-000123"}}),
            json!({"invoice": {"number": "INV-2025-000123"}}),
        ),
        (
            "numeric_tolerance",
            FieldSpec::numeric_tolerance("invoice.total", 0.01),
            json!({"invoice": {"total": 1500.0}}),
            json!({"invoice": {"total": "1500.004"}}),
        ),
        (
            "date_default_formats",
            FieldSpec::date("invoice.date"),
            json!({"invoice": {"date": "2025-01-15"}}),
            json!({"invoice": {"date": "15-JAN-2025"}}),
        ),
        (
            "date_explicit_formats",
            FieldSpec::date("invoice.date").formats(&["DD/MM/YYYY", "DD-MMM-YYYY"]),
            json!({"invoice": {"date": "2025-01-15"}}),
            json!({"invoice": {"date": "15-JAN-2025"}}),
        ),
        (
            "fuzzy_levenshtein_30",
            FieldSpec::fuzzy("invoice.supplier", 0.85),
            json!({"invoice": {"supplier": A30}}),
            json!({"invoice": {"supplier": B30}}),
        ),
        (
            "fuzzy_levenshtein_30_ignore_case",
            FieldSpec::fuzzy("invoice.supplier", 0.85).ignore_case(),
            json!({"invoice": {"supplier": A30}}),
            json!({"invoice": {"supplier": B30}}),
        ),
        (
            "fuzzy_levenshtein_30_hit",
            FieldSpec::fuzzy("invoice.supplier", 0.85),
            json!({"invoice": {"supplier": A30}}),
            json!({"invoice": {"supplier": C30}}),
        ),
    ];
    for (name, spec, expected, actual) in cases {
        let config = FieldAccuracyConfig::new().field(spec);
        group.bench_function(name, |b| {
            b.iter(|| evaluate(black_box(&expected), black_box(&actual), &config))
        });
    }
    group.finish();

    // A whole 20-field invoice, reported per field.
    let mut config = FieldAccuracyConfig::new().threshold(0.5);
    let mut expected = serde_json::Map::new();
    let mut actual = serde_json::Map::new();
    for i in 0..5 {
        config = config
            .field(FieldSpec::exact(&format!("n{i}")))
            .field(FieldSpec::numeric_tolerance(&format!("t{i}"), 0.01))
            .field(FieldSpec::date(&format!("d{i}")))
            .field(FieldSpec::fuzzy(&format!("s{i}"), 0.85));
        expected.insert(format!("n{i}"), json!(format!("INV-{i}")));
        actual.insert(format!("n{i}"), json!(format!("INV-{i}")));
        expected.insert(format!("t{i}"), json!(100.0 + i as f64));
        actual.insert(format!("t{i}"), json!(format!("{}.001", 100 + i)));
        expected.insert(format!("d{i}"), json!("2025-01-15"));
        actual.insert(format!("d{i}"), json!("15-JAN-2025"));
        expected.insert(format!("s{i}"), json!(A30));
        actual.insert(format!("s{i}"), json!(B30));
    }
    let (expected, actual) = (
        serde_json::Value::Object(expected),
        serde_json::Value::Object(actual),
    );
    let mut group = c.benchmark_group("invoice_20_fields");
    group.throughput(Throughput::Elements(20));
    group.bench_function("evaluate", |b| {
        b.iter(|| evaluate(black_box(&expected), black_box(&actual), &config))
    });
    group.finish();
}

/// The honest per-field cost: 20 fields of one match type in one document, so the fixed cost of
/// a verdict (its vectors and the one-line reasoning) is shared the way it is in a real config.
/// Throughput is per field: criterion's "elem/s" inverted is the time per field.
fn amortized(c: &mut Criterion) {
    const N: usize = 20;
    let mut group = c.benchmark_group("per_field_amortized_20");
    group.throughput(Throughput::Elements(N as u64));
    type Make = fn(&str) -> FieldSpec;
    // (name, field, expected value, actual value, whether it is a hit)
    let cases: [(&str, Make, serde_json::Value, serde_json::Value, bool); 8] = [
        (
            "exact",
            |p| FieldSpec::exact(p),
            json!("INV-2025-000123"),
            json!("INV-2025-000123"),
            true,
        ),
        (
            "numeric_tolerance",
            |p| FieldSpec::numeric_tolerance(p, 0.01),
            json!(1500.0),
            json!("1500.004"),
            true,
        ),
        (
            "date_default_formats",
            |p| FieldSpec::date(p),
            json!("2025-01-15"),
            json!("15-JAN-2025"),
            true,
        ),
        (
            "date_explicit_formats",
            |p| FieldSpec::date(p).formats(&["DD/MM/YYYY", "DD-MMM-YYYY"]),
            json!("2025-01-15"),
            json!("15-JAN-2025"),
            true,
        ),
        (
            "fuzzy_levenshtein_30_miss",
            |p| FieldSpec::fuzzy(p, 0.85),
            json!(A30),
            json!(B30),
            false,
        ),
        (
            "fuzzy_levenshtein_30_hit",
            |p| FieldSpec::fuzzy(p, 0.85),
            json!(A30),
            json!(C30),
            true,
        ),
        (
            "fuzzy_levenshtein_30_ignore_case_hit",
            |p| FieldSpec::fuzzy(p, 0.85).ignore_case(),
            json!(A30),
            json!(C30.to_lowercase()),
            true,
        ),
        (
            "fuzzy_jaro_winkler_30_hit",
            |p| FieldSpec::fuzzy(p, 0.85).algorithm(fuzzy::Algorithm::JaroWinkler),
            json!(A30),
            json!(C30),
            true,
        ),
    ];
    for (name, make, e, a, hit) in cases {
        let mut config = FieldAccuracyConfig::new();
        let mut expected = serde_json::Map::new();
        let mut actual = serde_json::Map::new();
        for i in 0..N {
            config = config.field(make(&format!("invoice.f{i}")));
            expected.insert(format!("f{i}"), e.clone());
            actual.insert(format!("f{i}"), a.clone());
        }
        let expected = json!({ "invoice": expected });
        let actual = json!({ "invoice": actual });
        assert_eq!(
            evaluate(&expected, &actual, &config).hits.len(),
            if hit { N } else { 0 },
            "{name}"
        );
        group.bench_function(name, |b| {
            b.iter(|| evaluate(black_box(&expected), black_box(&actual), &config))
        });
    }
    group.finish();
}

/// `array_match = "any_order"` on 20-element arrays: every pair is compared, then a one-to-one
/// assignment is found. Reversed distinct elements (one match per row, far from its index), and
/// elements all equal to each other (every pair matches).
fn any_order_20(c: &mut Criterion) {
    let mut group = c.benchmark_group("any_order_20");
    let items: Vec<serde_json::Value> = (0..20)
        .map(|i| json!({"sku": format!("SKU-{i:03}"), "qty": i % 3, "price": 9.5 + i as f64}))
        .collect();
    let reversed: Vec<serde_json::Value> = items.iter().rev().cloned().collect();
    let amounts: Vec<f64> = (0..20).map(|i| 100.0 + 10.0 * i as f64).collect();
    let amounts_rev: Vec<String> = amounts.iter().rev().map(|a| format!("{a:.3}")).collect();
    let cases = [
        (
            "exact_objects_reversed",
            FieldSpec::exact("items").any_order(),
            json!({ "items": items }),
            json!({ "items": reversed }),
        ),
        (
            "numeric_reversed",
            FieldSpec::numeric_tolerance("items", 0.01).any_order(),
            json!({ "items": amounts }),
            json!({ "items": amounts_rev }),
        ),
        (
            "numeric_all_equal",
            FieldSpec::numeric_tolerance("items", 0.01).any_order(),
            json!({ "items": vec![100.0; 20] }),
            json!({ "items": vec!["100.004"; 20] }),
        ),
    ];
    for (name, spec, expected, actual) in cases {
        let config = FieldAccuracyConfig::new().field(spec);
        assert!(evaluate(&expected, &actual, &config).passed, "{name}");
        group.bench_function(name, |b| {
            b.iter(|| evaluate(black_box(&expected), black_box(&actual), &config))
        });
    }
    group.finish();
}

fn fuzzy_30(c: &mut Criterion) {
    assert_eq!(A30.len(), 30);
    assert_eq!(B30.len(), 30);
    let mut group = c.benchmark_group("fuzzy_30_chars");
    group.bench_function("levenshtein/proposal_eval", |b| {
        b.iter(|| fuzzy::normalized_levenshtein(black_box(A30), black_box(B30)))
    });
    group.bench_function("levenshtein/strsim", |b| {
        b.iter(|| strsim::normalized_levenshtein(black_box(A30), black_box(B30)))
    });
    group.bench_function("jaro_winkler/proposal_eval", |b| {
        b.iter(|| fuzzy::jaro_winkler(black_box(A30), black_box(B30)))
    });
    group.bench_function("jaro_winkler/strsim", |b| {
        b.iter(|| strsim::jaro_winkler(black_box(A30), black_box(B30)))
    });
    let (x, y) = (
        "Müller Industriebedarf GmbH & Co",
        "Mueller Industriebedarf GmbH Co",
    );
    group.bench_function("levenshtein_non_ascii/proposal_eval", |b| {
        b.iter(|| fuzzy::normalized_levenshtein(black_box(x), black_box(y)))
    });
    group.bench_function("levenshtein_non_ascii/strsim", |b| {
        b.iter(|| strsim::normalized_levenshtein(black_box(x), black_box(y)))
    });
    group.finish();
}

criterion_group!(benches, per_field, amortized, any_order_20, fuzzy_30);
criterion_main!(benches);
