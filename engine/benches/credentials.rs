//! The credential scan a recording passes before it is written (`credentials::scan`), over a
//! megabyte of prose in one string: English (ASCII) and German (letters that are not ASCII).
//!
//! `cargo bench -p proposal-eval-engine --bench credentials -- --warm-up-time 1 --measurement-time 3`
//!
//! Target: the German text within 2x of the English. Measured 2026-12-07 (2 cores, load about 2,
//! release): English 2.08 ms, German 2.09 ms. Before the bearer pattern's word boundary was
//! ASCII's, German took 474 ms (English 2.01 ms). In a test build (a user's `cargo test`), a
//! megabyte of text with letters that are not ASCII took 4.5 s before and 26 ms after
//! (docs/reference/recordings.md, "What the check recognizes").

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use proposal_eval_engine::credentials::scan;
use serde_json::{json, Value};

/// About `size` bytes of `words` in a fixed pseudo-random order, a line break now and then.
fn prose(words: &[&str], size: usize) -> Value {
    let mut text = String::with_capacity(size + 16);
    let mut state = 1u64;
    while text.len() < size {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        text.push_str(words[(state >> 33) as usize % words.len()]);
        text.push(if state.is_multiple_of(7) { '\n' } else { ' ' });
    }
    json!({ "document": text })
}

fn bench(c: &mut Criterion) {
    let english = prose(
        &[
            "invoice",
            "payment",
            "the",
            "customer",
            "total",
            "due",
            "ref",
            "ACME-1234",
            "12.50",
            "EUR",
        ],
        1 << 20,
    );
    let german = prose(
        &[
            "Rechnung",
            "Zahlung",
            "für",
            "Kundin",
            "Gesamtbetrag",
            "fällig",
            "Grüße",
            "ACME-1234",
            "12,50",
            "€",
        ],
        1 << 20,
    );
    c.bench_function("scan_1mb_english", |b| b.iter(|| scan(black_box(&english))));
    c.bench_function("scan_1mb_german", |b| b.iter(|| scan(black_box(&german))));
}

criterion_group!(benches, bench);
criterion_main!(benches);
