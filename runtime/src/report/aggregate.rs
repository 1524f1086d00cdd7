//! The report's numbers (totals, per suite: score distribution, evaluators, accuracy per field,
//! repeats), added up one entry at a time, in case order, by the fold.
//!
//! An entry is added as a [`Counted`]: the fields the numbers need, read from its line without
//! the rest (input, output, calls, diffs), which the fold copies as text.

use super::journal::story_span;
use super::schema::{bucket, buckets, EvaluatorSummary, FieldAccuracy, SuiteReport, Totals};
use crate::recording::usage::UsageTotals;
use crate::repeat::{RepeatSummary, Samples};
use crate::run::RecordingUse;
use serde::Deserialize;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// What the report's numbers take from a case's line (a journal's, `results.jsonl`'s or
/// `report.json`'s), its strings borrowed from the line. `suite`, `fixture`, `recording` and
/// `evaluators`, which every entry has, may be missing from a line made by hand: the fold
/// refuses such a line ([`Counted::is_entry`]).
#[derive(Debug, Deserialize)]
pub struct Counted<'a> {
    #[serde(borrow)]
    pub(super) package: Cow<'a, str>,
    #[serde(borrow)]
    pub(super) binary: Cow<'a, str>,
    #[serde(borrow, default)]
    pub(super) suite: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub(super) suite_dir: Cow<'a, str>,
    #[serde(borrow)]
    pub(super) case: Cow<'a, str>,
    #[serde(borrow)]
    pub(super) test: Cow<'a, str>,
    #[serde(borrow, default)]
    pub(super) fixture: Option<Cow<'a, str>>,
    pub(super) passed: bool,
    pub(super) score: Option<f64>,
    #[serde(default)]
    pub(super) recording: Option<RecordingUse>,
    #[serde(borrow, default)]
    pub(super) evaluators: Option<Vec<CountedEvaluator<'a>>>,
    #[serde(default)]
    pub(super) usage: Option<UsageTotals>,
    #[serde(default)]
    pub(super) samples: Option<Samples>,
    /// Set by the reader: the fold has it from the line's key.
    #[serde(skip)]
    pub(super) finished_at: chrono::DateTime<chrono::Utc>,
    #[serde(default)]
    pub(super) older: bool,
    /// Set by the reader: where the line's story begins and where the fields after it begin
    /// ([`story_span`]); `None` when the line is laid out otherwise, and its story stays in it.
    #[serde(skip)]
    pub(super) story: Option<(usize, usize)>,
}

impl<'a> Counted<'a> {
    /// Whether it has every field an entry has that the fold reads.
    pub(super) fn is_entry(&self) -> bool {
        let entry = (
            &self.suite,
            &self.fixture,
            &self.recording,
            &self.evaluators,
        );
        entry.0.is_some() && entry.1.is_some() && entry.2.is_some() && entry.3.is_some()
    }

    /// Its suite's name (empty when it has none).
    pub(super) fn suite(&self) -> &str {
        self.suite.as_deref().unwrap_or_default()
    }

    /// Its fixture file (empty when it has none).
    pub(super) fn fixture(&self) -> &str {
        self.fixture.as_deref().unwrap_or_default()
    }

    /// What the numbers take from an entry line, `finished_at` left to the caller. The line is
    /// read up to its story ([`story_span`]), copied into `buf` and closed there: the story
    /// (most of a line: a case's output) is not even scanned. A line in another layout is read
    /// whole.
    pub(super) fn read(line: &'a [u8], buf: &'a mut Vec<u8>) -> serde_json::Result<Counted<'a>> {
        if let Some(span) = story_span(line) {
            buf.clear();
            buf.extend_from_slice(&line[..span.0]);
            buf.push(b'}');
            let buf: &'a Vec<u8> = buf;
            if let Ok(mut counted) = serde_json::from_slice::<Counted>(buf) {
                counted.story = Some(span);
                return Ok(counted);
            }
        }
        serde_json::from_slice(line)
    }
}

/// What the numbers take from one evaluator's result.
#[derive(Debug, Deserialize)]
pub struct CountedEvaluator<'a> {
    #[serde(borrow)]
    pub(super) evaluator: Cow<'a, str>,
    pub(super) score: f64,
    pub(super) passed: bool,
    #[serde(default, borrow)]
    fields: Vec<CountedField<'a>>,
}

/// A field-accuracy field's hit.
#[derive(Debug, Deserialize)]
struct CountedField<'a> {
    #[serde(borrow)]
    path: Cow<'a, str>,
    hit: bool,
}

/// The report's numbers, added up case by case, in case order, so the same cases always give
/// the same sums.
#[derive(Default)]
pub(super) struct Aggregate {
    totals: Totals,
    usage: Option<UsageTotals>,
    /// By package, binary and suite folder: the order of their keys.
    suites: BTreeMap<(String, String, String), SuiteSums>,
}

/// One suite's sums so far.
struct SuiteSums {
    report: SuiteReport,
    usage: Option<UsageTotals>,
    scores: [usize; 10],
    evaluators: BTreeMap<String, (usize, usize, f64, [usize; 10])>,
    fields: BTreeMap<String, (usize, usize)>,
    /// The repeated cases' test names and samples (none for a suite without repeats).
    repeated: Vec<(String, Samples)>,
}

impl Aggregate {
    pub(super) fn add(&mut self, entry: &Counted) {
        let recording = entry.recording.unwrap_or(RecordingUse::None);
        self.totals.add(entry.passed, recording, entry.older);
        add_usage(&mut self.usage, entry);
        let key = (&*entry.package, &*entry.binary, &*entry.suite_dir);
        let sums = match self.suites.iter_mut().next_back() {
            // Cases come in suite by suite, mostly: the last suite first.
            Some((k, sums)) if (k.0.as_str(), k.1.as_str(), k.2.as_str()) == key => sums,
            _ => self
                .suites
                .entry((
                    entry.package.to_string(),
                    entry.binary.to_string(),
                    entry.suite_dir.to_string(),
                ))
                .or_insert_with(|| SuiteSums {
                    report: SuiteReport {
                        suite: entry.suite().to_string(),
                        suite_dir: entry.suite_dir.to_string(),
                        package: entry.package.to_string(),
                        binary: entry.binary.to_string(),
                        totals: Totals::default(),
                        score_distribution: Vec::new(),
                        evaluators: Vec::new(),
                        field_accuracy: Vec::new(),
                        last_finished_at: entry.finished_at,
                        repeats: None,
                    },
                    usage: None,
                    scores: [0; 10],
                    evaluators: BTreeMap::new(),
                    fields: BTreeMap::new(),
                    repeated: Vec::new(),
                }),
        };
        sums.report.totals.add(entry.passed, recording, entry.older);
        add_usage(&mut sums.usage, entry);
        sums.report.last_finished_at = sums.report.last_finished_at.max(entry.finished_at);
        if let Some(score) = entry.score {
            sums.scores[bucket(score)] += 1;
        }
        if let Some(samples) = entry.samples.as_ref().filter(|s| s.count() > 1) {
            sums.repeated
                .push((entry.test.to_string(), samples.clone()));
        }
        for e in entry.evaluators.iter().flatten() {
            let sum = match sums.evaluators.get_mut(&*e.evaluator) {
                Some(sum) => sum,
                None => sums
                    .evaluators
                    .entry(e.evaluator.to_string())
                    .or_insert((0, 0, 0.0, [0; 10])),
            };
            sum.0 += 1;
            sum.1 += usize::from(e.passed);
            sum.2 += e.score;
            sum.3[bucket(e.score)] += 1;
            for field in &e.fields {
                let counts = match sums.fields.get_mut(&*field.path) {
                    Some(counts) => counts,
                    None => sums.fields.entry(field.path.to_string()).or_default(),
                };
                counts.1 += 1;
                counts.0 += usize::from(field.hit);
            }
        }
    }

    /// The totals and the suites, in key order.
    pub(super) fn finish(self) -> (Totals, Vec<SuiteReport>) {
        let mut totals = self.totals;
        totals.usage = self.usage;
        let suites = self.suites.into_values().map(SuiteSums::report).collect();
        (totals, suites)
    }
}

impl SuiteSums {
    fn report(self) -> SuiteReport {
        let mut report = self.report;
        report.totals.usage = self.usage;
        report.score_distribution = buckets(self.scores);
        report.evaluators = self
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
        report.field_accuracy = self
            .fields
            .into_iter()
            .map(|(path, (hits, total))| FieldAccuracy {
                path,
                hits,
                total,
                accuracy: hits as f64 / total as f64,
            })
            .collect();
        let mut repeated = self.repeated;
        repeated.sort_by(|a, b| a.0.cmp(&b.0));
        report.repeats = RepeatSummary::of(repeated.iter().map(|(t, s)| (t.as_str(), s)));
        report
    }
}

/// Adds an entry's model calls, if it made any.
fn add_usage(sum: &mut Option<UsageTotals>, entry: &Counted) {
    if let Some(usage) = &entry.usage {
        sum.get_or_insert_with(UsageTotals::default).add(usage);
    }
}

#[cfg(test)]
mod tests {
    use super::Counted;
    use crate::report::entry::Entry;
    use crate::report::journal::story_span;

    #[test]
    fn an_entry_line_is_counted_from_its_start_as_from_the_whole_entry() {
        // Story-like keys inside nested values and strings must not cut the line.
        let entry: Entry = serde_json::from_value(serde_json::json!({
            "package": "demo", "binary": "evals", "suite": "s", "suite_dir": "fixtures/s",
            "case": "a", "test": "s::a", "fixture": "/m/fixtures/s/a.json",
            "passed": false, "score": 0.5, "recording": "replayed",
            "evaluators": [{"evaluator": "field_accuracy", "score": 0.5, "passed": false,
                "summary": "1 of 2", "misses": [",\"input\":1"], "rendered": "{\"output\": [",
                "fields": [{"path": "a", "hit": true}, {"path": "b\\", "hit": false}]}],
            "failure": "x,\"calls\":[", "usage": {"calls": 1, "input_tokens": 2,
                "output_tokens": 3, "latency_ms": 4.5, "cost_usd": 0.25, "unpriced_calls": 0},
            "trajectory": [{"tool": "t", "args": {"x": 1, "input": {"output": 2}}}],
            "input": {"message": "hi"}, "output": [{"changeType": "change"}],
            "calls": [], "recording_path": "r.json", "run": "r1",
            "finished_at": "2026-01-01T00:00:00Z",
        }))
        .unwrap();
        let line = serde_json::to_string(&entry).unwrap();
        let (end, _) = story_span(line.as_bytes()).expect("a line as record writes it");
        assert!(
            line[end..].starts_with(",\"input\":{\"message\""),
            "{}",
            &line[end..]
        );
        let mut buf = Vec::new();
        let read = Counted::read(line.as_bytes(), &mut buf).unwrap();
        let whole: Counted = serde_json::from_str(&line).unwrap();
        let fields = |c: &Counted| {
            format!(
                "{} {} {} {} {} {} {} {:?} {:?} {:?} {:?} {}",
                c.package,
                c.binary,
                c.suite(),
                c.suite_dir,
                c.case,
                c.test,
                c.fixture(),
                c.passed,
                c.score,
                c.recording,
                c.usage,
                c.evaluators.iter().flatten().count(),
            ) + &c
                .evaluators
                .iter()
                .flatten()
                .map(|e| {
                    let fields: Vec<String> = e
                        .fields
                        .iter()
                        .map(|f| format!("{}={}", f.path, f.hit))
                        .collect();
                    format!(
                        " {}:{}:{}:{}",
                        e.evaluator,
                        e.score,
                        e.passed,
                        fields.join(",")
                    )
                })
                .collect::<String>()
        };
        assert_eq!(fields(&read), fields(&whole));
        assert!(fields(&read).contains("b\\=false"), "{}", fields(&read));
        // Another layout (spaces, or the story first) is read whole.
        let spaced = serde_json::to_string_pretty(&entry).unwrap();
        assert_eq!(story_span(spaced.as_bytes()), None);
        assert_eq!(
            fields(&Counted::read(spaced.as_bytes(), &mut buf).unwrap()),
            fields(&whole)
        );
    }
}
