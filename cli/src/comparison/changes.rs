//! The comparison itself: the cases of two reports matched by one merge walk, each classified
//! (regression, fix, score change, added, removed, unchanged), accuracy per field and repeats
//! per suite paired, and every case counted into its suite's [`Tally`].

use super::confidence::{Confidence, SuiteConfidence, Tally};
use super::view::{CaseView, RunView, SuiteView};
use chrono::{DateTime, Utc};
use proposal_eval::__internal::repeat::{RepeatSummary, Samples};
use proposal_eval::__internal::report::FieldAccuracy;
use proposal_eval_engine::stats::Verdict;
use serde::Serialize;
use std::cmp::Ordering;
use std::collections::BTreeMap;

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
    pub(super) fn place(&self) -> String {
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
pub(super) fn score_text(score: f64) -> String {
    if score.fract() == 0.0 {
        format!("{score}")
    } else {
        format!("{score:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::super::read_view;
    use super::*;

    /// `compare` says why a case fails with its failing check's line (the first mismatch of the first
    /// failing evaluator).
    #[test]
    fn compare_says_a_failing_checks_line() {
        let report = |evaluators: serde_json::Value, passed: bool| {
            serde_json::json!({
                "format": 1, "generated_at": "2026-01-01T00:00:00Z",
                "suites": [{"suite": "support", "suite_dir": "fixtures/support", "package": "p", "binary": "evals"}],
                "cases": [{"package": "p", "binary": "evals", "suite": "support", "suite_dir": "fixtures/support",
                           "case": "where", "test": "support::where", "passed": passed, "score": 1.0,
                           "evaluators": evaluators}],
            })
            .to_string()
        };
        let base = report(
            serde_json::json!([{"evaluator": "checks", "score": 1.0, "passed": true}, {"evaluator": "budget", "score": 1.0, "passed": true}]),
            true,
        );
        let new = report(
            serde_json::json!([{"evaluator": "checks", "score": 0.6, "passed": false,
                                "misses": ["reply: contains \"refund\": actual \"We will look into it\""]},
                               {"evaluator": "budget", "score": 0.67, "passed": false}]),
            false,
        );
        let (base, new) = (
            read_view(base.as_bytes()).unwrap(),
            read_view(new.as_bytes()).unwrap(),
        );
        let comparison = compare(&base, "base", &new, "new", 0.01, 0.05);
        assert_eq!(comparison.regressions.len(), 1);
        assert_eq!(
            comparison.regressions[0].why.as_deref(),
            Some("reply: contains \"refund\": actual \"We will look into it\"")
        );
    }
}
