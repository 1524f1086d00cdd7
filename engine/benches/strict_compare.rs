//! The strict comparison on a realistic proposal (59 leaves, 3 levels, 5 items), equal, with 2
//! and with 12 differences, against the floor (`serde_json::Value ==`) and what users would
//! otherwise pick (`assert-json-diff` in strict mode), in one run.
//!
//! `cargo bench -p proposal-eval-engine --bench strict_compare -- --warm-up-time 1 --measurement-time 3`

use assert_json_diff::{assert_json_matches_no_panic, CompareMode, Config};
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use proposal_eval_engine::compare::{evaluate, StrictConfig};
use proposal_eval_engine::path::Pattern;
use proposal_eval_engine::transform::{
    Builtin, Condition, ConditionTarget, Context, Strategy, Transformer,
};
use serde_json::Value;

fn data() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/benches/data/proposal_pair.json"
    ))
    .expect("benches/data/proposal_pair.json");
    serde_json::from_str(&text).expect("valid JSON")
}

/// The data's ignore rules as `ignore_paths`, plus two transformers that a suite of this kind
/// would have: a date filled in when the model leaves it out (conditions read from the actual,
/// so the paired flow is on), and free text compared trimmed when both sides have it.
fn full_config(data: &Value) -> StrictConfig {
    let ignore: Vec<Pattern> = serde_json::from_value(data["ignore_rules"].clone()).unwrap();
    StrictConfig {
        ignore_paths: ignore,
        ..StrictConfig::default()
    }
    .transformer(
        "createdAt",
        Transformer::new(Builtin::TodayUtcMidnight, Strategy::AddMissingOnly)
            .condition_target(ConditionTarget::Actual)
            .when(Condition::equals("status", "DRAFT").unwrap()),
    )
    .unwrap()
    .transformer(
        "notes",
        Transformer::new(Builtin::Trim, Strategy::TransformExisting),
    )
    .unwrap()
}

fn bench(c: &mut Criterion) {
    let data = data();
    let expected = &data["expected"];
    let none = StrictConfig::default();
    let full = full_config(&data);
    let ctx = Context::at("2025-01-15T12:00:00Z".parse().unwrap());
    let strict = Config::new(CompareMode::Strict);

    // The outcomes the timings stand for, checked once so the bench cannot measure a wrong thing.
    for (name, with_rules) in [
        ("actual_equal", 0),
        ("actual_2_diffs", 2),
        ("actual_12_diffs", 7),
    ] {
        let actual = &data[name];
        let v = evaluate(expected, actual, &full, None, &ctx);
        assert_eq!(
            v.mismatches.len(),
            with_rules,
            "{name}: {}",
            v.render(false)
        );
        let plain = evaluate(expected, actual, &none, None, &ctx);
        assert_eq!(plain.passed(), with_rules == 0, "{name}");
    }

    for name in ["actual_equal", "actual_2_diffs", "actual_12_diffs"] {
        let actual = &data[name];
        let mut group = c.benchmark_group(format!("strict_compare/{name}"));
        group.bench_function("value_eq (floor)", |b| {
            b.iter(|| black_box(black_box(expected) == black_box(actual)))
        });
        group.bench_function("assert_json_diff strict", |b| {
            b.iter(|| {
                black_box(assert_json_matches_no_panic(
                    black_box(actual),
                    black_box(expected),
                    strict.clone(),
                ))
            })
        });
        group.bench_function("ours, no config", |b| {
            b.iter(|| {
                black_box(evaluate(
                    black_box(expected),
                    black_box(actual),
                    &none,
                    None,
                    &ctx,
                ))
                .score
            })
        });
        group.bench_function("ours, full config", |b| {
            b.iter(|| {
                black_box(evaluate(
                    black_box(expected),
                    black_box(actual),
                    &full,
                    None,
                    &ctx,
                ))
                .score
            })
        });
        group.finish();
    }

    // Rendering is paid only by failing cases; shown for scale.
    let actual = &data["actual_2_diffs"];
    c.bench_function(
        "strict_compare/actual_2_diffs/ours, full config + render",
        |b| b.iter(|| black_box(evaluate(expected, actual, &full, None, &ctx).render(false))),
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
