//! The statistics of `compare` against what a Rust user would otherwise pick (`statrs`): the t
//! quantile of a 95 % interval (df 39 and 999) and the exact two-sided McNemar p-value as a
//! binomial tail (200 and 10,000 discordant cases). Each pair is checked to agree before it is
//! timed.
//!
//! `cargo bench -p proposal-eval-engine --bench stats -- --warm-up-time 1 --measurement-time 3`

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use proposal_eval_engine::stats::{mcnemar, t_quantile};
use statrs::distribution::{Binomial, ContinuousCDF, DiscreteCDF, StudentsT};

fn statrs_t(p: f64, df: f64) -> f64 {
    StudentsT::new(0.0, 1.0, df).unwrap().inverse_cdf(p)
}

fn statrs_mcnemar(b: u64, c: u64) -> f64 {
    let n = b + c;
    (2.0 * Binomial::new(0.5, n).unwrap().cdf(b.min(c))).min(1.0)
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("stats");
    for df in [39.0, 999.0] {
        let (ours, theirs) = (t_quantile(0.975, df), statrs_t(0.975, df));
        assert!((ours - theirs).abs() < 1e-6, "df {df}: {ours} vs {theirs}");
        group.bench_function(format!("t_quantile_df{df}/ours"), |b| {
            b.iter(|| t_quantile(black_box(0.975), black_box(df)))
        });
        group.bench_function(format!("t_quantile_df{df}/statrs"), |b| {
            b.iter(|| statrs_t(black_box(0.975), black_box(df)))
        });
    }
    for (pf, fp) in [(120u64, 80u64), (5_000, 5_300)] {
        let (ours, theirs) = (mcnemar(pf as usize, fp as usize), statrs_mcnemar(pf, fp));
        assert!(
            (ours - theirs).abs() <= 1e-8 * theirs,
            "{pf}/{fp}: {ours} vs {theirs}"
        );
        let n = pf + fp;
        group.bench_function(format!("mcnemar_n{n}/ours"), |b| {
            b.iter(|| mcnemar(black_box(pf as usize), black_box(fp as usize)))
        });
        group.bench_function(format!("mcnemar_n{n}/statrs"), |b| {
            b.iter(|| statrs_mcnemar(black_box(pf), black_box(fp)))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
