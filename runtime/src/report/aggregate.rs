//! The report's numbers (totals, per suite: score distribution, evaluators, accuracy per field,
//! repeats), added up one entry at a time: by a rebuild in key order, and by a run's own part as
//! its cases finish.

use super::{bucket, buckets, Entry, EvaluatorSummary, FieldAccuracy, SuiteReport, Totals};
use crate::repeat::{RepeatSummary, Samples};
use std::collections::BTreeMap;

/// The report's numbers, added up case by case in key order (a suite's cases are contiguous).
#[derive(Default)]
pub(super) struct Aggregate {
    totals: Totals,
    suites: Vec<SuiteReport>,
    current: Option<SuiteSums>,
}

/// One suite's sums so far.
struct SuiteSums {
    report: SuiteReport,
    scores: [usize; 10],
    evaluators: BTreeMap<String, (usize, usize, f64, [usize; 10])>,
    fields: BTreeMap<String, (usize, usize)>,
    /// The repeated cases' test names and samples (none for a suite without repeats).
    repeated: Vec<(String, Samples)>,
}

impl Aggregate {
    pub(super) fn add(&mut self, entry: &Entry) {
        self.totals.add(entry);
        let same = self.current.as_ref().is_some_and(|s| {
            (&s.report.package, &s.report.binary, &s.report.suite_dir)
                == (&entry.package, &entry.binary, &entry.suite_dir)
        });
        if !same {
            self.close();
            self.current = Some(SuiteSums {
                report: SuiteReport {
                    suite: entry.suite.clone(),
                    suite_dir: entry.suite_dir.clone(),
                    package: entry.package.clone(),
                    binary: entry.binary.clone(),
                    totals: Totals::default(),
                    score_distribution: Vec::new(),
                    evaluators: Vec::new(),
                    field_accuracy: Vec::new(),
                    last_finished_at: entry.finished_at,
                    repeats: None,
                },
                scores: [0; 10],
                evaluators: BTreeMap::new(),
                fields: BTreeMap::new(),
                repeated: Vec::new(),
            });
        }
        let Some(sums) = self.current.as_mut() else {
            return;
        };
        sums.report.totals.add(entry);
        sums.report.last_finished_at = sums.report.last_finished_at.max(entry.finished_at);
        if let Some(score) = entry.score {
            sums.scores[bucket(score)] += 1;
        }
        if let Some(samples) = entry.samples.as_ref().filter(|s| s.count() > 1) {
            sums.repeated.push((entry.test.clone(), samples.clone()));
        }
        for e in &entry.evaluators {
            let sum = match sums.evaluators.get_mut(e.evaluator.as_str()) {
                Some(sum) => sum,
                None => sums
                    .evaluators
                    .entry(e.evaluator.clone())
                    .or_insert((0, 0, 0.0, [0; 10])),
            };
            sum.0 += 1;
            sum.1 += usize::from(e.passed);
            sum.2 += e.score;
            sum.3[bucket(e.score)] += 1;
            for field in &e.fields {
                let counts = match sums.fields.get_mut(field.path.as_str()) {
                    Some(counts) => counts,
                    None => sums.fields.entry(field.path.clone()).or_default(),
                };
                counts.1 += 1;
                counts.0 += usize::from(field.hit);
            }
        }
    }

    fn close(&mut self) {
        let Some(sums) = self.current.take() else {
            return;
        };
        let mut report = sums.report;
        report.score_distribution = buckets(sums.scores);
        report.evaluators = sums
            .evaluators
            .into_iter()
            .map(|(name, (cases, passed, sum, counts))| EvaluatorSummary {
                evaluator: name,
                cases,
                passed,
                pass_rate: passed as f64 / cases as f64,
                mean_score: sum / cases as f64,
                score_distribution: buckets(counts),
            })
            .collect();
        report.field_accuracy = sums
            .fields
            .into_iter()
            .map(|(path, (hits, total))| FieldAccuracy {
                path,
                hits,
                total,
                accuracy: hits as f64 / total as f64,
            })
            .collect();
        report.repeats = RepeatSummary::of(sums.repeated.iter().map(|(t, s)| (t.as_str(), s)));
        self.suites.push(report);
    }

    pub(super) fn finish(mut self) -> (Totals, Vec<SuiteReport>) {
        self.close();
        (self.totals, self.suites)
    }
}

/// Adds `other`'s counts to `totals`.
pub(super) fn add_totals(totals: &mut Totals, other: &Totals) {
    totals.cases += other.cases;
    totals.passed += other.passed;
    totals.failed += other.failed;
    totals.replayed += other.replayed;
    totals.replayed_stale += other.replayed_stale;
    totals.recorded += other.recorded;
    totals.stale += other.stale;
    totals.no_recording += other.no_recording;
    totals.older += other.older;
    if let Some(usage) = &other.usage {
        totals.usage.get_or_insert_with(Default::default).add(usage);
    }
    totals.pass_rate = if totals.cases == 0 {
        0.0
    } else {
        totals.passed as f64 / totals.cases as f64
    };
}
