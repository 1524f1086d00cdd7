//! Two run reports side by side: what `cargo proposal-eval compare BASE NEW` prints, and the
//! comparison section `report --compare BASE` adds to `report.html`.
//!
//! A case is the same case in both reports when its package, test binary, suite folder and case
//! path are (the key the report itself keeps cases by). Each case in both is a regression (passed,
//! now fails), a fix (failed, now passes), a score change (same verdict, the mean score moved by
//! at least `min_delta`) or unchanged; cases in one report only are added or removed. Field
//! accuracy is compared per suite and field. A regression is judged case by case, never on a
//! mean: an improvement elsewhere cannot hide one.
//!
//! Per suite and overall the comparison also says whether the change is larger than chance
//! (pass rates with Wilson intervals, the exact McNemar test, the paired score difference, the
//! minimum detectable effect, a verdict at `alpha`, usage before and after): [`super::confidence`].
//!
//! Both reports are sorted by that key when built, so the cases are matched by one merge walk;
//! a baseline edited by hand out of order is sorted first. A report is read as a [`RunView`]:
//! only what a comparison uses, its strings borrowed from the file's bytes, so that two reports
//! of 10,000 cases are read and compared in a fraction of the time building two [`Report`]s
//! takes (diffs and messages are skipped, not copied).

use super::aggregate::Counted;
use super::confidence::{self, percent, Confidence, SuiteConfidence, Tally};
use super::schema::FieldAccuracy;
use crate::recording::usage::UsageTotals;
use crate::repeat::{RepeatSummary, Samples};
use chrono::{DateTime, Utc};
use proposal_eval_engine::stats::Verdict;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt::Write as _;

#[cfg(doc)]
use super::schema::Report;

/// What a comparison reads of a `report.json`.
#[derive(Debug, Deserialize)]
pub struct RunView<'a> {
    /// The report's format.
    pub format: u32,
    /// When it was built.
    pub generated_at: DateTime<Utc>,
    /// Counts over every case.
    #[serde(default)]
    pub totals: TotalsView,
    /// Per suite and test binary.
    #[serde(borrow)]
    pub suites: Vec<SuiteView<'a>>,
    /// Every case.
    #[serde(borrow)]
    pub cases: Vec<CaseView<'a>>,
}

/// What a comparison reads of a report's totals.
#[derive(Debug, Default, Deserialize)]
pub struct TotalsView {
    /// The model calls of every case, summed.
    #[serde(default)]
    pub usage: Option<UsageTotals>,
}

/// What a comparison reads of a suite.
#[derive(Debug, Deserialize)]
pub struct SuiteView<'a> {
    /// The suite's name.
    #[serde(borrow)]
    pub suite: Cow<'a, str>,
    /// The suite folder.
    #[serde(borrow)]
    pub suite_dir: Cow<'a, str>,
    /// The package of the test binary.
    #[serde(borrow)]
    pub package: Cow<'a, str>,
    /// The test binary.
    #[serde(borrow)]
    pub binary: Cow<'a, str>,
    /// Accuracy per field.
    #[serde(default)]
    pub field_accuracy: Vec<FieldAccuracy>,
    /// Repeated cases.
    #[serde(default)]
    pub repeats: Option<RepeatSummary>,
    /// The model calls of its cases, summed.
    #[serde(default)]
    pub usage: Option<UsageTotals>,
}

/// What a comparison reads of a case: what the report's numbers read of it, and why it failed.
pub type CaseView<'a> = Counted<'a>;

/// Reads what a comparison needs of a `report.json`'s bytes.
pub fn read_view(bytes: &[u8]) -> serde_json::Result<RunView<'_>> {
    serde_json::from_slice(bytes)
}

/// The smallest score change `compare` lists unless told otherwise (`--min-delta`).
pub const DEFAULT_MIN_DELTA: f64 = 0.01;

/// Counts of one report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Side {
    /// What the report was read from, as the user named it (`main`, `target/.../report.json`).
    pub name: String,
    /// When it was built.
    pub generated_at: DateTime<Utc>,
    /// Cases in it.
    pub cases: usize,
    /// Cases that passed.
    pub passed: usize,
    /// `passed / cases` (0 when there is none).
    pub pass_rate: f64,
}

/// One case as a comparison lists it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CaseChange {
    /// The test name (`payments::raise_amount`).
    pub test: String,
    /// The package of its test binary.
    pub package: String,
    /// Its test binary.
    pub binary: String,
    /// Its suite folder.
    pub suite_dir: String,
    /// Its case path.
    pub case: String,
    /// Whether it passed in the baseline; `None` when it is not there (added).
    pub base_passed: Option<bool>,
    /// Whether it passes now; `None` when it is gone (removed).
    pub new_passed: Option<bool>,
    /// Its score in the baseline.
    pub base_score: Option<f64>,
    /// Its score now.
    pub new_score: Option<f64>,
    /// `new_score - base_score`, when both are there.
    pub delta: Option<f64>,
    /// The first line of why it fails now, when it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// A repeated case's samples in the baseline (`2 of 3 samples passed, …`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_samples: Option<String>,
    /// A repeated case's samples now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_samples: Option<String>,
    /// Whether its samples disagree now (some passed, some failed).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub flaky: bool,
    /// Whether they disagreed in the baseline.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub was_flaky: bool,
    /// Whether another case of its package and binary has its test name (a suite in another
    /// folder of the same last name): the text forms then name its suite folder.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub name_shared: bool,
}

impl CaseChange {
    /// Where the case is, as the text forms say it: `package/binary`, and its suite folder when
    /// its test name does not tell it apart.
    fn place(&self) -> String {
        match self.name_shared {
            true => format!("{}/{}, {}", self.package, self.binary, self.suite_dir),
            false => format!("{}/{}", self.package, self.binary),
        }
    }
}

/// A suite's repeated cases, before and after: pass@1, pass@k, pass^k.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RepeatChange {
    /// The suite's name.
    pub suite: String,
    /// The package of the test binary.
    pub package: String,
    /// The test binary.
    pub binary: String,
    /// The suite folder.
    pub suite_dir: String,
    /// In the baseline; `None` when no case was repeated there.
    pub base: Option<RepeatSummary>,
    /// Now.
    pub new: Option<RepeatSummary>,
}

/// One field's accuracy in a suite, before and after.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FieldChange {
    /// The suite's name.
    pub suite: String,
    /// The package of the test binary.
    pub package: String,
    /// The test binary.
    pub binary: String,
    /// The suite folder.
    pub suite_dir: String,
    /// The field's path.
    pub path: String,
    /// Its accuracy in the baseline; `None` when the field was not scored there.
    pub base_accuracy: Option<f64>,
    /// Its accuracy now; `None` when it is no longer scored.
    pub new_accuracy: Option<f64>,
    /// Hits and total in the baseline.
    pub base_hits: (usize, usize),
    /// Hits and total now.
    pub new_hits: (usize, usize),
    /// `new_accuracy - base_accuracy`, when both are there.
    pub delta: Option<f64>,
}

/// What changed between two reports.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    /// The baseline.
    pub base: Side,
    /// The report compared with it.
    pub new: Side,
    /// The smallest score or accuracy change listed.
    pub min_delta: f64,
    /// Cases that passed in the baseline and fail now, worst score change first.
    pub regressions: Vec<CaseChange>,
    /// Cases that failed in the baseline and pass now.
    pub fixes: Vec<CaseChange>,
    /// Cases with the same verdict whose score moved by at least `min_delta`, largest drop
    /// first.
    pub score_changes: Vec<CaseChange>,
    /// Fields whose accuracy in a suite moved by at least `min_delta`, or that are scored in one
    /// report only; largest drop first.
    pub field_changes: Vec<FieldChange>,
    /// Cases only in the new report.
    pub added: Vec<CaseChange>,
    /// Cases only in the baseline.
    pub removed: Vec<CaseChange>,
    /// Cases in both with no change listed above.
    pub unchanged: usize,
    /// The repeated cases whose samples disagree in the new report (with `was_flaky` set when
    /// they did in the baseline too).
    pub flaky: Vec<CaseChange>,
    /// Per suite with repeated cases in either report: pass@1, pass@k and pass^k before and
    /// after.
    pub repeats: Vec<RepeatChange>,
    /// The significance level of the verdicts.
    pub alpha: f64,
    /// Every case: pass rates with their intervals, the paired tests, the verdict, usage.
    pub overall: Confidence,
    /// The same per suite and test binary (a suite in one report only included), in key order.
    pub suites: Vec<SuiteConfidence>,
}

impl Comparison {
    /// Whether any case regressed: `compare` exits 1 then.
    pub fn has_regressions(&self) -> bool {
        !self.regressions.is_empty()
    }

    /// Whether a suite, or the whole run, regressed significantly at `alpha`: `compare
    /// --fail-on significant` exits 1 then.
    pub fn has_significant_regression(&self) -> bool {
        self.overall.verdict == Verdict::Regressed
            || self
                .suites
                .iter()
                .any(|s| s.change.verdict == Verdict::Regressed)
    }
}

fn side(name: &str, report: &RunView) -> Side {
    let cases = report.cases.len();
    let passed = report.cases.iter().filter(|c| c.passed).count();
    Side {
        name: name.to_string(),
        generated_at: report.generated_at,
        cases,
        passed,
        pass_rate: if cases == 0 {
            0.0
        } else {
            passed as f64 / cases as f64
        },
    }
}

/// The cases of a report in id order (already so unless the file was edited by hand).
fn sorted<'v, 'a>(report: &'v RunView<'a>) -> Vec<&'v CaseView<'a>> {
    let mut cases: Vec<&CaseView> = report.cases.iter().collect();
    if !cases.is_sorted_by(|a, b| a.id() <= b.id()) {
        cases.sort_by(|a, b| a.id().cmp(&b.id()));
    }
    cases
}

/// Why a case fails, in one line: its first failing evaluator's first mismatch
/// (`recommend.price: values differ: expected 100, actual 155.4`), else that evaluator and its
/// score, else the failure's first line.
fn why(entry: &CaseView) -> Option<String> {
    if entry.passed {
        return None;
    }
    let failing = entry.evaluators.iter().flatten().find(|e| !e.passed);
    let first_miss = failing
        .and_then(|e| e.misses.first())
        .and_then(|m| m.lines().map(str::trim).find(|l| !l.is_empty()));
    Some(match (first_miss, failing) {
        (Some(miss), _) => miss.to_string(),
        (None, Some(e)) => format!("{} {}", e.evaluator, score_text(e.score)),
        (None, None) => entry
            .failure
            .as_deref()
            .and_then(|f| f.lines().next())
            .unwrap_or("failed")
            .to_string(),
    })
}

/// The (package, binary, test name) that more than one suite folder has, across both reports.
fn shared_names<'v>(
    reports: [&'v RunView; 2],
) -> std::collections::HashSet<(&'v str, &'v str, &'v str)> {
    let mut first = std::collections::HashMap::new();
    let mut shared = std::collections::HashSet::new();
    for case in reports.iter().flat_map(|r| &r.cases) {
        let name = (&*case.package, &*case.binary, &*case.test);
        if *first.entry(name).or_insert(&*case.suite_dir) != &*case.suite_dir {
            shared.insert(name);
        }
    }
    shared
}

fn change(base: Option<&CaseView>, new: Option<&CaseView>) -> CaseChange {
    let any = new.or(base).expect("a case is in one report at least");
    let (base_score, new_score) = (base.and_then(|b| b.score), new.and_then(|n| n.score));
    CaseChange {
        test: any.test.to_string(),
        package: any.package.to_string(),
        binary: any.binary.to_string(),
        suite_dir: any.suite_dir.to_string(),
        case: any.case.to_string(),
        base_passed: base.map(|b| b.passed),
        new_passed: new.map(|n| n.passed),
        base_score,
        new_score,
        delta: base_score.zip(new_score).map(|(b, n)| n - b),
        why: new.and_then(why),
        base_samples: base.and_then(|b| b.samples.as_ref()).map(|s| s.describe()),
        new_samples: new.and_then(|n| n.samples.as_ref()).map(|s| s.describe()),
        flaky: new
            .and_then(|n| n.samples.as_ref())
            .is_some_and(|s| s.flaky()),
        was_flaky: base
            .and_then(|b| b.samples.as_ref())
            .is_some_and(|s| s.flaky()),
        name_shared: false,
    }
}

/// Compares `new` with `base`; score and accuracy changes smaller than `min_delta` are not
/// listed, and verdicts are significant at `alpha`. `base_name` and `new_name` say what each
/// was read from.
pub fn compare(
    base: &RunView,
    base_name: &str,
    new: &RunView,
    new_name: &str,
    min_delta: f64,
    alpha: f64,
) -> Comparison {
    let mut out = Comparison {
        base: side(base_name, base),
        new: side(new_name, new),
        min_delta,
        regressions: Vec::new(),
        fixes: Vec::new(),
        score_changes: Vec::new(),
        field_changes: Vec::new(),
        added: Vec::new(),
        removed: Vec::new(),
        unchanged: 0,
        flaky: Vec::new(),
        repeats: Vec::new(),
        alpha,
        overall: Tally::default().finish(alpha, None, None),
        suites: Vec::new(),
    };
    let mut tallies = Tallies::default();
    // A change of exactly `min_delta` is listed; floating-point noise below it is not.
    let listed = |delta: f64| delta.abs() >= min_delta - 1e-12 && delta != 0.0;
    let (olds, news) = (sorted(base), sorted(new));
    let (mut i, mut j) = (0, 0);
    while i < olds.len() || j < news.len() {
        let (o, n) = (olds.get(i).copied(), news.get(j).copied());
        let (o, n) = match o.zip(n).map(|(o, n)| o.id().cmp(&n.id())) {
            Some(Ordering::Less) => (o, None),
            Some(Ordering::Greater) => (None, n),
            _ => (o, n),
        };
        (i, j) = (i + usize::from(o.is_some()), j + usize::from(n.is_some()));
        let tally = tallies.of(o.or(n).expect("a case on one side at least"));
        o.inspect(|o| tally.in_base(o.passed));
        n.inspect(|n| tally.in_new(n.passed));
        // Most cases are unchanged: nothing is built for them.
        let list = match (o, n) {
            (Some(o), Some(n)) => {
                tally.pair((o.passed, o.score), (n.passed, n.score));
                let moved = o.score.zip(n.score).is_some_and(|(b, n)| listed(n - b));
                match (o.passed, n.passed) {
                    (true, false) => Some(&mut out.regressions),
                    (false, true) => Some(&mut out.fixes),
                    _ if moved => Some(&mut out.score_changes),
                    _ => None,
                }
            }
            (Some(_), None) => Some(&mut out.removed),
            _ => Some(&mut out.added),
        };
        match list {
            Some(list) => list.push(change(o, n)),
            None => out.unchanged += 1,
        }
        if n.and_then(|n| n.samples.as_ref())
            .is_some_and(Samples::flaky)
        {
            out.flaky.push(change(o, n));
        }
    }
    let by_delta = |a: &CaseChange, b: &CaseChange| {
        a.delta
            .unwrap_or(0.0)
            .total_cmp(&b.delta.unwrap_or(0.0))
            .then_with(|| a.test.cmp(&b.test))
    };
    out.regressions.sort_by(by_delta);
    out.score_changes.sort_by(by_delta);
    let shared = shared_names([base, new]);
    if !shared.is_empty() {
        for list in [
            &mut out.regressions,
            &mut out.fixes,
            &mut out.score_changes,
            &mut out.added,
            &mut out.removed,
            &mut out.flaky,
        ] {
            for c in list.iter_mut() {
                c.name_shared = shared.contains(&(&*c.package, &*c.binary, &*c.test));
            }
        }
    }
    let pairs = pairs(base, new);
    out.field_changes = field_changes(&pairs, listed);
    out.repeats = repeat_changes(&pairs);
    (out.overall, out.suites) = tallies.finish(&pairs, base, new, alpha);
    out
}

/// A [`Tally`] per suite and test binary, keyed as the cases are. The merge walk meets the keys
/// in order, so a case's suite is almost always the last one counted into: no map lookup per
/// case.
#[derive(Default)]
struct Tallies<'v> {
    suites: Vec<((&'v str, &'v str, &'v str), &'v str, Tally)>,
}

impl<'v> Tallies<'v> {
    fn of(&mut self, case: &'v CaseView) -> &mut Tally {
        let key = (&*case.package, &*case.binary, &*case.suite_dir);
        let at = match self.suites.iter().rposition(|s| s.0 == key) {
            Some(at) => at,
            None => {
                self.suites.push((key, case.suite(), Tally::default()));
                self.suites.len() - 1
            }
        };
        &mut self.suites[at].2
    }

    fn finish(
        self,
        pairs: &Pairs,
        base: &RunView,
        new: &RunView,
        alpha: f64,
    ) -> (Confidence, Vec<SuiteConfidence>) {
        let usage = |side: usize, key| pairs.get(&key)?[side]?.usage.clone();
        let mut all = Tally::default();
        let mut suites = Vec::with_capacity(self.suites.len());
        let mut tallies = self.suites;
        tallies.sort_by(|a, b| a.0.cmp(&b.0));
        for (key, suite, tally) in tallies {
            all.absorb(&tally);
            suites.push(SuiteConfidence {
                suite: suite.to_string(),
                package: key.0.to_string(),
                binary: key.1.to_string(),
                suite_dir: key.2.to_string(),
                change: tally.finish(alpha, usage(0, key), usage(1, key)),
            });
        }
        let overall = all.finish(alpha, base.totals.usage.clone(), new.totals.usage.clone());
        (overall, suites)
    }
}

/// The suites of both reports by key (package, binary, suite folder): each in the baseline and
/// now.
type Pairs<'v, 'a> = BTreeMap<(&'v str, &'v str, &'v str), [Option<&'v SuiteView<'a>>; 2]>;

fn pairs<'v, 'a>(base: &'v RunView<'a>, new: &'v RunView<'a>) -> Pairs<'v, 'a> {
    let mut pairs = Pairs::new();
    for (side, report) in [base, new].into_iter().enumerate() {
        for s in &report.suites {
            let key = (&*s.package, &*s.binary, &*s.suite_dir);
            pairs.entry(key).or_default()[side] = Some(s);
        }
    }
    pairs
}

fn repeat_changes(pairs: &Pairs) -> Vec<RepeatChange> {
    let repeats = |s: &Option<&SuiteView>| s.and_then(|s| s.repeats.clone());
    let named = pairs.values().filter_map(|[old, now]| {
        let suite = old.filter(|s| s.repeats.is_some()).or(*now)?;
        (repeats(old).is_some() || repeats(now).is_some()).then(|| RepeatChange {
            suite: suite.suite.to_string(),
            package: suite.package.to_string(),
            binary: suite.binary.to_string(),
            suite_dir: suite.suite_dir.to_string(),
            base: repeats(old),
            new: repeats(now),
        })
    });
    named.collect()
}

/// `pass@1 66.7%, pass@3 100.0%, pass^3 33.3%`, or `no repeats`.
fn rates(summary: Option<&RepeatSummary>) -> String {
    match summary {
        Some(r) => format!(
            "pass@1 {}, pass@{k} {}, pass^{k} {}",
            percent(r.pass_at_1),
            percent(r.pass_at_k),
            percent(r.pass_hat_k),
            k = r.k
        ),
        None => "no repeats".into(),
    }
}

fn field_changes(pairs: &Pairs, listed: impl Fn(f64) -> bool) -> Vec<FieldChange> {
    let mut out = Vec::new();
    for suites in pairs.values() {
        let mut fields: BTreeMap<&str, [Option<&FieldAccuracy>; 2]> = BTreeMap::new();
        for (side, suite) in suites.iter().enumerate() {
            for f in suite.iter().flat_map(|s| &s.field_accuracy) {
                fields.entry(&f.path).or_default()[side] = Some(f);
            }
        }
        for (path, [old, now]) in fields {
            let delta = old.zip(now).map(|(o, n)| n.accuracy - o.accuracy);
            let Some(suite) =
                suites[usize::from(now.is_some())].filter(|_| delta.is_none_or(&listed))
            else {
                continue;
            };
            out.push(FieldChange {
                suite: suite.suite.to_string(),
                package: suite.package.to_string(),
                binary: suite.binary.to_string(),
                suite_dir: suite.suite_dir.to_string(),
                path: path.to_string(),
                base_accuracy: old.map(|f| f.accuracy),
                new_accuracy: now.map(|f| f.accuracy),
                base_hits: old.map_or((0, 0), |f| (f.hits, f.total)),
                new_hits: now.map_or((0, 0), |f| (f.hits, f.total)),
                delta,
            });
        }
    }
    fn key(f: &FieldChange) -> (f64, [&str; 4]) {
        let at = [&*f.package, &*f.binary, &*f.suite_dir, &*f.path];
        (f.delta.unwrap_or(0.0), at)
    }
    out.sort_by(|a, b| {
        let (a, b) = (key(a), key(b));
        a.0.total_cmp(&b.0).then_with(|| a.1.cmp(&b.1))
    });
    out
}

/// A score as the reports write one: whole numbers bare, others to two places.
fn score_text(score: f64) -> String {
    if score.fract() == 0.0 {
        format!("{score}")
    } else {
        format!("{score:.2}")
    }
}

fn maybe_score(score: Option<f64>) -> String {
    score.map_or_else(|| "–".to_string(), score_text)
}

fn signed(delta: f64) -> String {
    if delta > 0.0 {
        format!("+{delta:.2}")
    } else {
        format!("{delta:.2}")
    }
}

fn points(delta: f64) -> String {
    let pp = delta * 100.0;
    if pp > 0.0 {
        format!("+{pp:.1} pp")
    } else {
        format!("{pp:.1} pp")
    }
}

fn verdict(passed: Option<bool>) -> &'static str {
    match passed {
        Some(true) => "pass",
        Some(false) => "FAIL",
        None => "–",
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl Comparison {
    /// One line: the counts of each kind of change.
    pub fn summary_line(&self) -> String {
        self.counts().join(", ")
    }

    /// The counts of each kind of change: regressions, fixes, score and field changes, added and
    /// removed.
    fn counts(&self) -> [String; 6] {
        [
            plural(self.regressions.len(), "regression", "regressions"),
            plural(self.fixes.len(), "fix", "fixes"),
            plural(self.score_changes.len(), "score change", "score changes"),
            plural(self.field_changes.len(), "field change", "field changes"),
            format!("{} added", self.added.len()),
            format!("{} removed", self.removed.len()),
        ]
    }

    /// The terminal form.
    pub fn to_text(&self) -> String {
        let mut out = self.text_head();
        for (title, rows) in self.text_sections() {
            if rows.is_empty() {
                continue;
            }
            let _ = writeln!(out, "\n{title}:");
            for row in rows {
                out.push_str(&row);
            }
        }
        let _ = writeln!(
            out,
            "\n{}; {} unchanged",
            self.summary_line(),
            self.unchanged
        );
        let _ = writeln!(
            out,
            "overall: {} at alpha {} (McNemar {})",
            self.overall.verdict,
            self.alpha,
            confidence::p_text(self.overall.p_value)
        );
        out
    }

    /// The terminal form's first lines: the two reports, the counts, the paired statistics.
    fn text_head(&self) -> String {
        let mut out = String::new();
        let (b, n) = (&self.base, &self.new);
        let _ = writeln!(
            out,
            "compare: {} ({}) -> {} ({})",
            b.name,
            b.generated_at.format("%Y-%m-%d %H:%M UTC"),
            n.name,
            n.generated_at.format("%Y-%m-%d %H:%M UTC")
        );
        let _ = writeln!(
            out,
            "cases: {} -> {}; passed: {} -> {}; pass rate: {} -> {} ({})",
            b.cases,
            n.cases,
            b.passed,
            n.passed,
            percent(b.pass_rate),
            percent(n.pass_rate),
            points(n.pass_rate - b.pass_rate)
        );
        out.push_str(&confidence::to_text(
            self.alpha,
            &self.overall,
            &self.suites,
        ));
        out
    }

    /// The terminal form's lists, each a title with its count and its lines (an empty list is
    /// not shown).
    fn text_sections(&self) -> [(String, Vec<String>); 8] {
        let cases = |rows: &[CaseChange], line: fn(&CaseChange) -> String| -> Vec<String> {
            rows.iter().map(line).collect()
        };
        let section = |title: &str, rows: Vec<String>| (format!("{title} ({})", rows.len()), rows);
        let scores = format!("score changes of at least {}", self.min_delta);
        [
            section("regressions", cases(&self.regressions, text_case)),
            section("fixes", cases(&self.fixes, text_case)),
            section(&scores, cases(&self.score_changes, text_score)),
            section(
                "accuracy per field",
                self.field_changes.iter().map(text_field).collect(),
            ),
            section("repeats", self.repeats.iter().map(text_repeat).collect()),
            section("flaky", cases(&self.flaky, text_flaky)),
            section("added", cases(&self.added, text_listed)),
            section("removed", cases(&self.removed, text_listed)),
        ]
    }

    /// The form for a pull-request comment (GitHub-flavoured markdown).
    pub fn to_markdown(&self) -> String {
        let mut out = self.markdown_head();
        for (title, rows) in [("Regressions", &self.regressions), ("Fixes", &self.fixes)] {
            if !rows.is_empty() {
                let _ = writeln!(out, "\n#### {title} ({})\n", rows.len());
                markdown_cases(&mut out, rows);
            }
        }
        // The long lists fold away: a pull request shows the regressions first.
        for (title, body) in self.markdown_details() {
            let _ = write!(
                out,
                "\n<details><summary>{title}</summary>\n\n{body}\n</details>\n"
            );
        }
        out
    }

    /// The markdown form's heading, verdict and table of counts, and the paired statistics.
    fn markdown_head(&self) -> String {
        let mut out = String::new();
        let (b, n) = (&self.base, &self.new);
        let _ = writeln!(
            out,
            "### proposal-eval: {} → {}\n",
            md_code(&b.name),
            md_code(&n.name)
        );
        let verdict_line = if self.has_regressions() {
            format!(
                "**{}**",
                plural(self.regressions.len(), "regression", "regressions")
            )
        } else {
            "No regressions".to_string()
        };
        let _ = writeln!(
            out,
            "{verdict_line}; {}.\n",
            self.summary_line_after_regressions()
        );
        let _ = writeln!(
            out,
            "Overall: **{}** at alpha {} (McNemar {}).\n",
            self.overall.verdict,
            self.alpha,
            confidence::p_text(self.overall.p_value)
        );
        out.push_str("| | baseline | now | change |\n|---|---:|---:|---:|\n");
        let _ = writeln!(
            out,
            "| cases | {} | {} | {:+} |",
            b.cases,
            n.cases,
            n.cases as i64 - b.cases as i64
        );
        let _ = writeln!(
            out,
            "| passed | {} | {} | {:+} |",
            b.passed,
            n.passed,
            n.passed as i64 - b.passed as i64
        );
        let _ = writeln!(
            out,
            "| pass rate | {} | {} | {} |",
            percent(b.pass_rate),
            percent(n.pass_rate),
            points(n.pass_rate - b.pass_rate)
        );
        out.push_str(&confidence::to_markdown(
            self.alpha,
            &self.overall,
            &self.suites,
            md_cell,
        ));
        out
    }

    /// The markdown form's folded lists, each a summary and its body; empty ones left out.
    fn markdown_details(&self) -> Vec<(String, String)> {
        let listed = |rows: &[CaseChange]| -> String {
            let line =
                |c: &CaseChange| format!("- {} ({})\n", md_code(&c.test), md_cell(&c.place()));
            rows.iter().map(line).collect()
        };
        let table = |head: &str, rows: String| match rows.is_empty() {
            true => rows,
            false => format!("| {head} |\n{rows}"),
        };
        let score_rows = self.score_changes.iter().map(markdown_score).collect();
        let field_rows = self.field_changes.iter().map(markdown_field).collect();
        let n = (self.score_changes.len(), self.field_changes.len());
        let details = [
            (
                format!("Score changes of at least {} ({})", self.min_delta, n.0),
                table(
                    "change | case | binary | score |\n|---:|---|---|---:",
                    score_rows,
                ),
            ),
            (
                format!("Accuracy per field ({})", n.1),
                table(
                    "change | field | suite | baseline | now |\n|---:|---|---|---:|---:",
                    field_rows,
                ),
            ),
            (
                format!("Repeats ({} flaky)", self.flaky.len()),
                self.markdown_repeats(),
            ),
            (format!("Added ({})", self.added.len()), listed(&self.added)),
            (
                format!("Removed ({})", self.removed.len()),
                listed(&self.removed),
            ),
        ];
        details
            .into_iter()
            .filter(|(_, body)| !body.is_empty())
            .collect()
    }

    /// The repeated suites' rates and the flaky cases, as a markdown list.
    fn markdown_repeats(&self) -> String {
        let mut body = String::new();
        for r in &self.repeats {
            let _ = writeln!(
                body,
                "- {}: {} → {}",
                md_cell(&format!("{} ({}/{})", r.suite, r.package, r.binary)),
                rates(r.base.as_ref()),
                rates(r.new.as_ref())
            );
        }
        for c in &self.flaky {
            let _ = writeln!(
                body,
                "- flaky: {}: {}{}",
                md_code(&c.test),
                md_cell(c.new_samples.as_deref().unwrap_or("")),
                if c.was_flaky {
                    " (flaky before too)"
                } else {
                    " (newly flaky)"
                }
            );
        }
        body
    }

    fn summary_line_after_regressions(&self) -> String {
        format!(
            "{}, {} unchanged",
            self.counts()[1..].join(", "),
            self.unchanged
        )
    }
}

/// A regression's or a fix's lines in the terminal form, its reason below it.
fn text_case(c: &CaseChange) -> String {
    let mut line = format!(
        "  {} ({}): {} -> {}, score {} -> {}",
        c.test,
        c.place(),
        verdict(c.base_passed),
        verdict(c.new_passed),
        maybe_score(c.base_score),
        maybe_score(c.new_score)
    );
    if let Some(why) = &c.why {
        let _ = write!(line, "\n      {why}");
    }
    line.push('\n');
    line
}

/// A score change's line in the terminal form.
fn text_score(c: &CaseChange) -> String {
    format!(
        "  {:>6}  {} ({}): {} -> {}\n",
        signed(c.delta.unwrap_or(0.0)),
        c.test,
        c.place(),
        maybe_score(c.base_score),
        maybe_score(c.new_score)
    )
}

/// A field's accuracy: `75.0% (3/4)`, or `none` when it was not scored.
fn accuracy(a: Option<f64>, (hits, total): (usize, usize), none: &str) -> String {
    match a {
        Some(a) => format!("{} ({hits}/{total})", percent(a)),
        None => none.into(),
    }
}

/// A field's change in the terminal form.
fn text_field(f: &FieldChange) -> String {
    format!(
        "  {:>9}  {} in {} ({}/{}): {} -> {}\n",
        f.delta.map_or_else(|| "new/gone".into(), points),
        f.path,
        f.suite,
        f.package,
        f.binary,
        accuracy(f.base_accuracy, f.base_hits, "not scored"),
        accuracy(f.new_accuracy, f.new_hits, "not scored")
    )
}

/// A repeated suite's rates in the terminal form.
fn text_repeat(r: &RepeatChange) -> String {
    format!(
        "  {} ({}/{}): {} -> {}\n",
        r.suite,
        r.package,
        r.binary,
        rates(r.base.as_ref()),
        rates(r.new.as_ref())
    )
}

/// A flaky case's line in the terminal form.
fn text_flaky(c: &CaseChange) -> String {
    format!(
        "  {} ({}): {}{}\n",
        c.test,
        c.place(),
        c.new_samples.as_deref().unwrap_or(""),
        if c.was_flaky {
            "; flaky before too"
        } else {
            "; newly flaky"
        }
    )
}

/// An added or removed case's line in the terminal form.
fn text_listed(c: &CaseChange) -> String {
    format!("  {} ({})\n", c.test, c.place())
}

/// A table of regressions or fixes in the markdown form.
fn markdown_cases(out: &mut String, rows: &[CaseChange]) {
    out.push_str("| case | binary | verdict | score | why |\n|---|---|---|---:|---|\n");
    for c in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} → {} | {} → {} | {} |",
            md_code(&c.test),
            md_cell(&c.place()),
            verdict(c.base_passed),
            verdict(c.new_passed),
            maybe_score(c.base_score),
            maybe_score(c.new_score),
            md_cell(c.why.as_deref().unwrap_or(""))
        );
    }
}

/// A score change as a row of the markdown form's table.
fn markdown_score(c: &CaseChange) -> String {
    format!(
        "| {} | {} | {} | {} → {} |\n",
        signed(c.delta.unwrap_or(0.0)),
        md_code(&c.test),
        md_cell(&c.place()),
        maybe_score(c.base_score),
        maybe_score(c.new_score)
    )
}

/// A field's change as a row of the markdown form's table.
fn markdown_field(f: &FieldChange) -> String {
    format!(
        "| {} | {} | {} | {} | {} |\n",
        f.delta.map_or_else(|| "new/gone".into(), points),
        md_code(&f.path),
        md_cell(&format!("{} ({}/{})", f.suite, f.package, f.binary)),
        accuracy(f.base_accuracy, f.base_hits, "–"),
        accuracy(f.new_accuracy, f.new_hits, "–")
    )
}

/// Text in a markdown table cell: `|` escaped, line breaks and HTML out.
fn md_cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '\n' | '\r' => out.push(' '),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            c => out.push(c),
        }
    }
    out
}

/// Text as inline code: a fence longer than any run of backticks inside, `|` escaped (GitHub
/// reads `\|` in a table cell's code span as `|`).
fn md_code(text: &str) -> String {
    let text = text.replace(['\n', '\r'], " ").replace('|', "\\|");
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    if text.starts_with('`') || text.ends_with('`') {
        format!("{fence} {text} {fence}")
    } else {
        format!("{fence}{text}{fence}")
    }
}
