//! `cargo proposal-eval compare BASE NEW` on two report files of 10,000 cases (the bar: at most
//! 0.5 s), the built binary run as a user runs it: the process started, both files read,
//! compared and the text written (to a pipe this bench drains); and, for scale, parsing both
//! files as whole `Report`s in this process. 10% of the cases change verdict, a third move their
//! score, every case has a field-accuracy evaluator of five fields and each failing one a
//! rendered diff.
//!
//! `cargo bench -p cargo-proposal-eval --bench compare -- --warm-up-time 1 --measurement-time 5`

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use proposal_eval::__internal::report::merge::merge;
use proposal_eval::__internal::report::{Entry, EvaluatorEntry, FieldEntry, RecordingUse, Report};

const CASES: usize = 10_000;

/// A report of `CASES` cases; `run` shifts which cases fail and how they score.
fn report(run: usize) -> Report {
    let entries = (0..CASES)
        .map(|i| {
            let passed = !(i + run).is_multiple_of(10);
            let score = if passed {
                1.0 - ((i * (run + 1)) % 3) as f64 * 0.05
            } else {
                0.4
            };
            let fields: Vec<FieldEntry> = ["number", "total", "date", "vendor.name", "lines[0].sku"]
                .iter()
                .enumerate()
                .map(|(k, f)| FieldEntry {
                    path: format!("invoice.{f}"),
                    hit: passed || k % 2 == 0,
                })
                .collect();
            Entry {
                package: "invoices".into(),
                binary: "evals".into(),
                suite: format!("suite{}", i % 20),
                suite_dir: format!("fixtures/suite{}", i % 20),
                case: format!("group{}/case{i:05}", i % 50),
                test: format!("suite{}::group{}::case{i:05}", i % 20, i % 50),
                fixture: format!("/work/fixtures/suite{}/group{}/case{i:05}.json", i % 20, i % 50)
                    .into(),
                description: Some(format!("invoice {i} from a vendor with a long name")),
                passed,
                score: Some(score),
                recording: RecordingUse::Replayed,
                evaluators: vec![EvaluatorEntry {
                    evaluator: "field_accuracy".into(),
                    score,
                    passed,
                    summary: format!("{} of 5 fields", if passed { 5 } else { 3 }),
                    misses: if passed {
                        vec![]
                    } else {
                        vec![
                            "invoice.total: 120 is outside the tolerance of 119.5".into(),
                            "invoice.vendor.name: \"ACME Inc\" differs from \"ACME, Inc.\"".into(),
                        ]
                    },
                    fields,
                    rendered: if passed {
                        String::new()
                    } else {
                        "  invoice.total: 120 is outside the tolerance of 119.5\n--- expected\n+++ actual\n@@ -1,6 +1,6 @@\n {\n-  \"total\": 119.5,\n+  \"total\": 120,\n   \"vendor\": {\n-    \"name\": \"ACME Inc\"\n+    \"name\": \"ACME, Inc.\"\n   }\n }\n".repeat(2)
                    },
                    verdicts: Vec::new(),
                    alignment: None,
                }],
                failure: (!passed).then(|| "field_accuracy FAILED (score 0.4)".to_string()),
                run: Some("run-1".into()),
                usage: None,
                trajectory: None,
                samples: None,
                input: None,
                input_sha256: None,
                input_missing: None,
                output_is_expected: false,
                output_missing: None,
                output: None,
                calls: Vec::new(),
                recording_path: None,
                finished_at: "2026-01-01T00:00:00Z".parse().unwrap(),
                older: false,
                story: None,
            }
        })
        .collect::<Vec<Entry>>();
    // The report `report --merge` makes of a journal holding them.
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal.jsonl");
    let lines: String = entries
        .iter()
        .map(|e| serde_json::to_string(e).unwrap() + "\n")
        .collect();
    std::fs::write(&journal, lines).unwrap();
    merge(&[journal], dir.path()).unwrap()
}

fn bench(c: &mut Criterion) {
    let (base, new) = (report(0), report(1));
    let base_json = serde_json::to_vec_pretty(&base).unwrap();
    let new_json = serde_json::to_vec_pretty(&new).unwrap();
    eprintln!(
        "report files: {:.1} MB and {:.1} MB",
        base_json.len() as f64 / 1e6,
        new_json.len() as f64 / 1e6
    );
    let dir = tempfile::tempdir().unwrap();
    let (base_file, new_file) = (dir.path().join("base.json"), dir.path().join("new.json"));
    std::fs::write(&base_file, &base_json).unwrap();
    std::fs::write(&new_file, &new_json).unwrap();
    let mut group = c.benchmark_group("compare_10k");
    group.sample_size(10);
    group.bench_function("command_read_both_compare_text", |b| {
        b.iter(|| {
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_cargo-proposal-eval"))
                .args(["proposal-eval", "compare"])
                .args([&base_file, &new_file])
                .output()
                .unwrap();
            // 1: cases regressed, as they do here.
            assert_eq!(out.status.code(), Some(1), "{out:?}");
            black_box(out.stdout.len())
        })
    });
    // For scale: what reading the two files as whole reports would cost.
    group.bench_function("parse_both_as_reports", |b| {
        b.iter(|| {
            let base: Report = serde_json::from_slice(black_box(&base_json)).unwrap();
            let new: Report = serde_json::from_slice(black_box(&new_json)).unwrap();
            black_box((base.cases.len(), new.cases.len()))
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
