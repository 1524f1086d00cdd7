//! The report's numbers (totals, per suite: score distribution, evaluators, accuracy per field,
//! repeats), added up one entry at a time, in case order, by the fold.
//!
//! An entry is added as a [`Counted`]: the fields the numbers need, read from its line without
//! the rest (input, output, calls, diffs), which the fold copies as text.

use super::{bucket, buckets, Entry, EvaluatorSummary, FieldAccuracy, SuiteReport, Totals};
use crate::recording::usage::UsageTotals;
use crate::repeat::{RepeatSummary, Samples};
use crate::run::RecordingUse;
use serde::Deserialize;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// What the report's numbers take from one entry.
#[derive(Deserialize)]
pub(super) struct Counted<'a> {
    #[serde(borrow)]
    pub(super) package: Cow<'a, str>,
    #[serde(borrow)]
    pub(super) binary: Cow<'a, str>,
    #[serde(borrow)]
    pub(super) suite: Cow<'a, str>,
    #[serde(borrow)]
    pub(super) suite_dir: Cow<'a, str>,
    #[serde(borrow)]
    pub(super) case: Cow<'a, str>,
    #[serde(borrow)]
    pub(super) test: Cow<'a, str>,
    #[serde(borrow)]
    pub(super) fixture: Cow<'a, str>,
    pub(super) passed: bool,
    pub(super) score: Option<f64>,
    pub(super) recording: RecordingUse,
    #[serde(borrow)]
    pub(super) evaluators: Vec<CountedEvaluator<'a>>,
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
    /// ([`story_span`]); `None` when the line is laid out otherwise, and its story is not cut.
    #[serde(skip)]
    pub(super) story: Option<(usize, usize)>,
}

/// The fields of an entry line that tell the case's story (what it was given and returned, its
/// calls, where its recording is) and the key's last two: [`Entry`]'s last fields, written after
/// every field [`Counted`] reads.
const STORY: [&[u8]; 6] = [
    b"input",
    b"output",
    b"calls",
    b"recording_path",
    b"run",
    b"finished_at",
];

impl<'a> Counted<'a> {
    /// What the numbers take from an entry line, `finished_at` left to the caller. The line is
    /// read up to its first story field ([`STORY`]), copied into `buf` and closed there: the
    /// story (most of a line: a case's output) is not even scanned. A line in another layout is
    /// read whole.
    pub(super) fn read(line: &'a [u8], buf: &'a mut Vec<u8>) -> serde_json::Result<Counted<'a>> {
        if let Some(end) = story_start(line) {
            buf.clear();
            buf.extend_from_slice(&line[..end]);
            buf.push(b'}');
            let buf: &'a Vec<u8> = buf;
            if let Ok(mut counted) = serde_json::from_slice::<Counted>(buf) {
                counted.story = story_end(line, end).map(|tail| (end, tail));
                return Ok(counted);
            }
        }
        serde_json::from_slice(line)
    }
}

/// Where an entry line's story begins and where the fields after it begin; `None` for a line
/// not laid out as `record` writes it.
pub(super) fn story_span(line: &[u8]) -> Option<(usize, usize)> {
    let story = story_start(line)?;
    Some((story, story_end(line, story)?))
}

/// Where the fields written after the story begin: `recording_path`, `run` and `finished_at`,
/// short strings [`Entry`]'s last fields, read from the end as the fold's index reads them (a
/// string's quotes are escaped, so a field found from the end whose value holds no quote is the
/// field itself). `None` when the line does not end with `finished_at`.
fn story_end(line: &[u8], story: usize) -> Option<usize> {
    const TAIL: [&[u8]; 3] = [
        b",\"finished_at\":\"",
        b",\"run\":\"",
        b",\"recording_path\":\"",
    ];
    let body = line.strip_suffix(b"\"}")?;
    let mut start = super::rfind(body, TAIL[0])?;
    for key in &TAIL[1..] {
        let Some(before) = body[..start].strip_suffix(b"\"") else {
            break;
        };
        if let Some(at) = super::rfind(before, key) {
            if !before[at + key.len()..].contains(&b'"') {
                start = at;
            }
        }
    }
    (start >= story).then_some(start)
}

/// The line as the page embeds it when its story is left out ([`Counted::story`]): the fields
/// before the story, `"story_left_out":true`, and the fields after it.
pub(super) fn without_story(line: &[u8], (story, tail): (usize, usize), out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&line[..story]);
    out.extend_from_slice(b",\"story_left_out\":true");
    out.extend_from_slice(&line[tail..]);
}

/// Which cases' stories the page embeds, given each case's `(passed, story bytes)` in order:
/// the failing cases' first, then the passing ones', each in case order, while they add up to
/// at most `budget` bytes. A story that does not fit is left out and the next one tried.
pub(super) fn page_stories(cases: &[(bool, usize)], budget: usize) -> Vec<bool> {
    let mut embedded = vec![false; cases.len()];
    let mut left = budget;
    for passing in [false, true] {
        for (i, &(passed, bytes)) in cases.iter().enumerate() {
            if passed == passing && bytes <= left {
                embedded[i] = true;
                left -= bytes;
            }
        }
    }
    embedded
}

/// Where the comma before the first top-level story field of a compact JSON object is; `None`
/// when there is none (or the text is not laid out as `record` writes it).
fn story_start(line: &[u8]) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = 0;
    while i < line.len() {
        match line[i] {
            b'"' => {
                if depth == 1 && i > 0 && line[i - 1] == b',' {
                    let key = &line[i + 1..];
                    let story = STORY
                        .iter()
                        .any(|k| key.starts_with(k) && key.get(k.len()) == Some(&b'"'));
                    if story {
                        return Some(i - 1);
                    }
                }
                // To the string's closing quote, past escapes.
                i += 1;
                loop {
                    let at = i + memchr::memchr2(b'"', b'\\', &line[i..])?;
                    if line[at] == b'"' {
                        i = at;
                        break;
                    }
                    i = at + 2;
                }
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.checked_sub(1)?,
            _ => {}
        }
        i += 1;
    }
    None
}

/// What the numbers take from one evaluator's result.
#[derive(Deserialize)]
pub(super) struct CountedEvaluator<'a> {
    #[serde(borrow)]
    evaluator: Cow<'a, str>,
    score: f64,
    passed: bool,
    #[serde(default, borrow)]
    fields: Vec<CountedField<'a>>,
}

/// A field-accuracy field's hit.
#[derive(Deserialize)]
struct CountedField<'a> {
    #[serde(borrow)]
    path: Cow<'a, str>,
    hit: bool,
}

impl<'a> Counted<'a> {
    /// What the numbers take from `entry`, borrowed.
    pub(super) fn of(entry: &'a Entry) -> Counted<'a> {
        let text = |s: &'a String| Cow::Borrowed(s.as_str());
        Counted {
            package: text(&entry.package),
            binary: text(&entry.binary),
            suite: text(&entry.suite),
            suite_dir: text(&entry.suite_dir),
            case: text(&entry.case),
            test: text(&entry.test),
            fixture: entry.fixture.to_string_lossy(),
            passed: entry.passed,
            score: entry.score,
            recording: entry.recording,
            evaluators: entry
                .evaluators
                .iter()
                .map(|e| CountedEvaluator {
                    evaluator: text(&e.evaluator),
                    score: e.score,
                    passed: e.passed,
                    fields: e
                        .fields
                        .iter()
                        .map(|f| CountedField {
                            path: text(&f.path),
                            hit: f.hit,
                        })
                        .collect(),
                })
                .collect(),
            usage: entry.usage.clone(),
            samples: entry.samples.clone(),
            finished_at: entry.finished_at,
            story: None,
            older: entry.older,
        }
    }
}

/// The report's numbers, added up case by case. They do not depend on the order the cases come
/// in: suites are kept by key, sums of scores, latencies and costs are exact until they are read ([`ExactSum`]), and
/// repeated cases are summed up in name order.
#[derive(Default)]
pub(super) struct Aggregate {
    totals: Totals,
    usage: Option<UsageSum>,
    /// By package, binary and suite folder: the order of their keys.
    suites: BTreeMap<(String, String, String), SuiteSums>,
}

/// One suite's sums so far.
struct SuiteSums {
    report: SuiteReport,
    usage: Option<UsageSum>,
    scores: [usize; 10],
    evaluators: BTreeMap<String, (usize, usize, ExactSum, [usize; 10])>,
    fields: BTreeMap<String, (usize, usize)>,
    /// The repeated cases' test names and samples (none for a suite without repeats).
    repeated: Vec<(String, Samples)>,
}

impl Aggregate {
    pub(super) fn add(&mut self, entry: &Counted) {
        self.totals.add(entry.passed, entry.recording, entry.older);
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
                        suite: entry.suite.to_string(),
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
        sums.report
            .totals
            .add(entry.passed, entry.recording, entry.older);
        add_usage(&mut sums.usage, entry);
        sums.report.last_finished_at = sums.report.last_finished_at.max(entry.finished_at);
        if let Some(score) = entry.score {
            sums.scores[bucket(score)] += 1;
        }
        if let Some(samples) = entry.samples.as_ref().filter(|s| s.count() > 1) {
            sums.repeated
                .push((entry.test.to_string(), samples.clone()));
        }
        for e in &entry.evaluators {
            let sum = match sums.evaluators.get_mut(&*e.evaluator) {
                Some(sum) => sum,
                None => sums.evaluators.entry(e.evaluator.to_string()).or_insert((
                    0,
                    0,
                    ExactSum::default(),
                    [0; 10],
                )),
            };
            sum.0 += 1;
            sum.1 += usize::from(e.passed);
            sum.2.add(e.score);
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
        totals.usage = self.usage.map(UsageSum::totals);
        let suites = self.suites.into_values().map(SuiteSums::report).collect();
        (totals, suites)
    }
}

impl SuiteSums {
    fn report(self) -> SuiteReport {
        let mut report = self.report;
        report.totals.usage = self.usage.map(UsageSum::totals);
        report.score_distribution = buckets(self.scores);
        report.evaluators = self
            .evaluators
            .into_iter()
            .map(|(name, (cases, passed, sum, counts))| EvaluatorSummary {
                evaluator: name,
                cases,
                passed,
                pass_rate: passed as f64 / cases as f64,
                mean_score: sum.value() / cases as f64,
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

/// The model calls of a group of cases, their latencies and costs summed exactly.
#[derive(Default)]
struct UsageSum {
    calls: u64,
    input_tokens: u64,
    output_tokens: u64,
    latency_ms: ExactSum,
    cost_usd: Option<ExactSum>,
    unpriced_calls: u64,
    /// The agent's and the rubric judge's shares, once an entry had a judge's.
    split: Option<(ShareSum, ShareSum)>,
}

/// One party's share of a group's model calls, its cost summed exactly.
#[derive(Clone, Default)]
struct ShareSum {
    calls: u64,
    input_tokens: u64,
    output_tokens: u64,
    cost_usd: Option<ExactSum>,
}

impl ShareSum {
    fn add(&mut self, share: &crate::recording::usage::UsageShare) {
        self.calls += share.calls;
        self.input_tokens += share.input_tokens;
        self.output_tokens += share.output_tokens;
        if let Some(cost) = share.cost_usd {
            self.cost_usd
                .get_or_insert_with(ExactSum::default)
                .add(cost);
        }
    }

    fn share(self) -> crate::recording::usage::UsageShare {
        crate::recording::usage::UsageShare {
            calls: self.calls,
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            cost_usd: self.cost_usd.map(|c| c.value()),
        }
    }
}

impl UsageSum {
    fn totals(self) -> UsageTotals {
        let (agent, judge) = match self.split {
            Some((agent, judge)) => (Some(agent.share()), Some(judge.share())),
            None => (None, None),
        };
        UsageTotals {
            calls: self.calls,
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            latency_ms: self.latency_ms.value(),
            cost_usd: self.cost_usd.map(|c| c.value()),
            unpriced_calls: self.unpriced_calls,
            agent,
            judge,
        }
    }
}

/// Adds an entry's model calls, if it made any.
fn add_usage(sum: &mut Option<UsageSum>, entry: &Counted) {
    let Some(usage) = &entry.usage else {
        return;
    };
    let sum = sum.get_or_insert_with(UsageSum::default);
    if usage.judge.is_some() && sum.split.is_none() {
        // The entries before had no judge's calls: all of theirs were the agent's.
        let agent = ShareSum {
            calls: sum.calls,
            input_tokens: sum.input_tokens,
            output_tokens: sum.output_tokens,
            cost_usd: sum.cost_usd.clone(),
        };
        sum.split = Some((agent, ShareSum::default()));
    }
    sum.calls += usage.calls;
    sum.input_tokens += usage.input_tokens;
    sum.output_tokens += usage.output_tokens;
    sum.latency_ms.add(usage.latency_ms);
    if let Some(cost) = usage.cost_usd {
        sum.cost_usd.get_or_insert_with(ExactSum::default).add(cost);
    }
    sum.unpriced_calls += usage.unpriced_calls;
    if let Some((agent, judge)) = &mut sum.split {
        agent.add(&usage.agent_share());
        judge.add(&usage.judge_share());
    }
}

/// A sum of floating-point numbers that does not depend on their order: the exact sum is kept
/// as non-overlapping partial sums (Shewchuk's algorithm, as Python's `math.fsum`) and rounded
/// once when read. A plain `+=` rounds at every step, so the same numbers added in another order
/// (cases finishing in another order) can differ in the last digit.
#[derive(Clone, Debug, Default)]
pub(super) struct ExactSum {
    partials: Vec<f64>,
    /// Infinities and NaNs, added as they come (they have no exact sum to keep).
    special: Option<f64>,
}

impl ExactSum {
    pub(super) fn add(&mut self, value: f64) {
        if !value.is_finite() {
            *self.special.get_or_insert(0.0) += value;
            return;
        }
        let mut x = value;
        let mut kept = 0;
        for j in 0..self.partials.len() {
            let mut y = self.partials[j];
            if x.abs() < y.abs() {
                std::mem::swap(&mut x, &mut y);
            }
            let high = x + y;
            let low = y - (high - x);
            if low != 0.0 {
                self.partials[kept] = low;
                kept += 1;
            }
            x = high;
        }
        self.partials.truncate(kept);
        self.partials.push(x);
    }

    /// The sum, rounded once to the nearest f64 (ties to even).
    pub(super) fn value(&self) -> f64 {
        if let Some(special) = self.special {
            return special + self.partials.iter().sum::<f64>();
        }
        let mut n = self.partials.len();
        let Some(&top) = self.partials.last() else {
            return 0.0;
        };
        n -= 1;
        let mut high = top;
        let mut low = 0.0;
        while n > 0 {
            let x = high;
            n -= 1;
            let y = self.partials[n];
            high = x + y;
            low = y - (high - x);
            if low != 0.0 {
                break;
            }
        }
        // Round half to even: when the rest lies exactly halfway, the next partial decides.
        if n > 0
            && ((low < 0.0 && self.partials[n - 1] < 0.0)
                || (low > 0.0 && self.partials[n - 1] > 0.0))
        {
            let y = low * 2.0;
            let x = high + y;
            if y == x - high {
                high = x;
            }
        }
        high
    }
}

#[cfg(test)]
mod tests {
    use super::{page_stories, story_start, without_story, Counted, ExactSum};
    use crate::report::Entry;
    use serde_json::json;

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
        let end = story_start(line.as_bytes()).expect("a line as record writes it");
        assert!(
            line[end..].starts_with(",\"input\":{\"message\""),
            "{}",
            &line[end..]
        );
        let mut buf = Vec::new();
        let read = Counted::read(line.as_bytes(), &mut buf).unwrap();
        let whole = Counted::of(&entry);
        let fields = |c: &Counted| {
            format!(
                "{} {} {} {} {} {} {} {:?} {:?} {:?} {:?} {}",
                c.package,
                c.binary,
                c.suite,
                c.suite_dir,
                c.case,
                c.test,
                c.fixture,
                c.passed,
                c.score,
                c.recording,
                c.usage,
                c.evaluators.len(),
            ) + &c
                .evaluators
                .iter()
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
        assert_eq!(story_start(spaced.as_bytes()), None);
        assert_eq!(
            fields(&Counted::read(spaced.as_bytes(), &mut buf).unwrap()),
            fields(&whole)
        );
    }

    fn sum(values: &[f64]) -> f64 {
        let mut sum = ExactSum::default();
        for &v in values {
            sum.add(v);
        }
        sum.value()
    }

    #[test]
    fn an_exact_sum_is_the_same_in_any_order_and_rounded_once() {
        assert_eq!(sum(&[]), 0.0);
        assert_eq!(sum(&[0.1, 0.2, 0.3]), 0.6);
        assert_eq!(sum(&[0.3, 0.2, 0.1]), 0.6);
        // Plain addition gives two answers for these orders; the exact sum one.
        assert_ne!(0.1 + 0.2 + 0.3, 0.3 + 0.2 + 0.1);
        assert_eq!(sum(&[1e100, 1.0, -1e100]), 1.0);
        assert_eq!(sum(&[1e16, 1.0, 1e-16]), 1.0000000000000002e16);
        let mut values: Vec<f64> = (1..=1000).map(|i| 1.0 / f64::from(i)).collect();
        let forward = sum(&values);
        values.reverse();
        assert_eq!(sum(&values), forward);
        values.sort_by(|a, b| (a * 7919.0 % 1.0).total_cmp(&(b * 7919.0 % 1.0)));
        assert_eq!(sum(&values), forward);
        assert!(sum(&[1.0, f64::INFINITY]).is_infinite());
        assert!(sum(&[f64::NAN, 1.0]).is_nan());
    }

    /// A line of `record`'s layout whose output ends in story-like and tail-like keys.
    fn story_line(recording_path: Option<&str>, run: Option<&str>) -> String {
        let mut entry = json!({
            "package": "demo", "binary": "evals", "suite": "s", "suite_dir": "fixtures/s",
            "case": "a", "test": "s::a", "fixture": "/m/fixtures/s/a.json",
            "passed": true, "score": 1.0, "recording": "replayed", "evaluators": [],
            "input": {"message": "hi"},
            "output": [{"x": {"recording_path": "fake", "run": "fake\",\"run\":\"r"}}],
            "calls": [{"kind": "complete", "model": "m"}],
            "finished_at": "2026-01-01T00:00:00Z",
        });
        if let Some(path) = recording_path {
            entry["recording_path"] = json!(path);
        }
        if let Some(run) = run {
            entry["run"] = json!(run);
        }
        let entry: Entry = serde_json::from_value(entry).unwrap();
        serde_json::to_string(&entry).unwrap()
    }

    #[test]
    fn a_line_without_its_story_keeps_every_other_field() {
        for (path, run) in [
            (Some("fixtures/s/recordings/a.json"), Some("r1")),
            (None, Some("r1")),
            (Some("fixtures/s/recordings/a.json"), None),
            (None, None),
        ] {
            let line = story_line(path, run);
            let mut buf = Vec::new();
            let counted = Counted::read(line.as_bytes(), &mut buf).unwrap();
            let span = counted.story.expect("a line as record writes it");
            let mut short = Vec::new();
            without_story(line.as_bytes(), span, &mut short);
            let cut: Entry = serde_json::from_slice(&short)
                .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&short)));
            let whole: Entry = serde_json::from_str(&line).unwrap();
            assert!(cut.story_left_out && !whole.story_left_out);
            assert_eq!((cut.input, cut.output, cut.calls.len()), (None, None, 0));
            assert_eq!(cut.recording_path.as_deref(), path);
            assert_eq!(cut.run.as_deref(), run);
            assert_eq!(cut.finished_at, whole.finished_at);
            assert_eq!(
                (cut.case, cut.passed, cut.score),
                (whole.case, whole.passed, whole.score)
            );
        }
    }

    #[test]
    fn the_page_takes_failing_cases_stories_first_then_passing_ones_while_they_fit() {
        // (passed, story bytes), in case order.
        let cases = [(true, 40), (false, 50), (true, 30), (false, 70), (true, 10)];
        assert_eq!(page_stories(&cases, 1000), [true; 5]);
        // 120: both failing (50 + 70), nothing left.
        assert_eq!(page_stories(&cases, 120), [false, true, false, true, false]);
        // 100: the first failing (50), not the second (70); then 40 and 10 of the passing.
        assert_eq!(page_stories(&cases, 100), [true, true, false, false, true]);
        assert_eq!(page_stories(&cases, 0), [false; 5]);
    }
}
