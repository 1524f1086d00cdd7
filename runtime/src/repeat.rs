//! Repeats: a case run several times, one sample per run; the rule that decides the case from
//! its samples, and the statistics the reports show (mean score with its standard error per
//! case; pass@k and pass^k per suite).
//!
//! pass@k is the chance that at least one of k samples drawn from a case's n passes, pass^k that
//! all k do; both use the unbiased estimators over the n samples there are (pass@k =
//! 1 − C(n−c, k)/C(n, k), pass^k = C(c, k)/C(n, k), with c samples passed), averaged over the
//! suite's cases.

use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// `[run] pass`: how many of a case's samples must pass for the case to pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PassRule {
    /// Every sample (the default).
    #[default]
    All,
    /// More than half of them.
    Majority,
    /// At least this many.
    AtLeast(usize),
}

impl PassRule {
    /// Whether `passed` of `samples` is a pass.
    ///
    /// ```
    /// use proposal_eval::config::PassRule;
    /// assert!(!PassRule::All.decides(2, 3));
    /// assert!(PassRule::Majority.decides(2, 3));
    /// assert!(!PassRule::Majority.decides(2, 4));
    /// assert!(PassRule::AtLeast(2).decides(2, 3));
    /// ```
    pub fn decides(self, passed: usize, samples: usize) -> bool {
        match self {
            PassRule::All => passed == samples,
            PassRule::Majority => passed * 2 > samples,
            PassRule::AtLeast(k) => passed >= k,
        }
    }

    /// How many of `samples` must pass.
    pub fn needs(self, samples: usize) -> usize {
        match self {
            PassRule::All => samples,
            PassRule::Majority => samples / 2 + 1,
            PassRule::AtLeast(k) => k,
        }
    }
}

impl fmt::Display for PassRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PassRule::All => f.write_str("all"),
            PassRule::Majority => f.write_str("majority"),
            PassRule::AtLeast(k) => write!(f, "at_least {k}"),
        }
    }
}

impl Serialize for PassRule {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for PassRule {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<PassRule, D::Error> {
        struct Rule;
        const EXPECTED: &str = "\"all\", \"majority\" or { at_least = K }";
        impl<'de> Visitor<'de> for Rule {
            type Value = PassRule;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(EXPECTED)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<PassRule, E> {
                // `at_least K` is how reports write the rule (Display).
                let at_least = v
                    .strip_prefix("at_least ")
                    .and_then(|k| k.parse::<usize>().ok())
                    .filter(|&k| k >= 1);
                match v {
                    "all" => Ok(PassRule::All),
                    "majority" => Ok(PassRule::Majority),
                    _ if at_least.is_some() => Ok(PassRule::AtLeast(at_least.unwrap_or(1))),
                    other => Err(E::custom(format!(
                        "unknown pass rule {other:?}: use {EXPECTED}"
                    ))),
                }
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<PassRule, A::Error> {
                let mut at_least = None;
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "at_least" => at_least = Some(map.next_value::<u64>()?),
                        other => {
                            return Err(de::Error::custom(format!(
                                "unknown key `{other}` in the pass rule: use {EXPECTED}"
                            )))
                        }
                    }
                }
                match at_least {
                    Some(k) if k >= 1 => Ok(PassRule::AtLeast(k as usize)),
                    Some(_) => Err(de::Error::custom(
                        "`at_least` is 0: a case needs at least 1 passing sample",
                    )),
                    None => Err(de::Error::custom(format!(
                        "the pass rule has no `at_least`: use {EXPECTED}"
                    ))),
                }
            }
        }
        deserializer.deserialize_any(Rule)
    }
}

/// `[run]` in `proposal-eval.toml`: how often each case runs and how its samples decide it.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// Samples per case (`PROPOSAL_EVAL_REPEAT` overrides it); 1 when unset.
    #[serde(default)]
    pub repeat: Option<usize>,
    /// How many samples must pass (default `"all"`).
    #[serde(default)]
    pub pass: PassRule,
}

impl RunConfig {
    /// `repeat` when neither the config nor `PROPOSAL_EVAL_REPEAT` sets it: one sample.
    pub const DEFAULT_REPEAT: usize = 1;
}

/// A repeated case's samples, as a report entry holds them.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Samples {
    /// Each sample's verdict, in order.
    pub verdicts: Vec<bool>,
    /// Each sample's score (the mean over its evaluators); `None` where no evaluator ran.
    pub scores: Vec<Option<f64>>,
    /// Samples that passed.
    pub passed: usize,
    /// The mean of the scores there are.
    pub mean_score: Option<f64>,
    /// The standard error of that mean: the scores' standard deviation (n − 1) over √n; 0 for
    /// one score.
    pub std_error: Option<f64>,
    /// The rule that decided the case (`all`, `majority`, `at_least K`).
    pub pass: PassRule,
}

impl Samples {
    /// The samples of one case, from each one's verdict and score.
    pub fn new(runs: &[(bool, Option<f64>)], pass: PassRule) -> Samples {
        let scores: Vec<f64> = runs.iter().filter_map(|r| r.1).collect();
        Samples {
            verdicts: runs.iter().map(|r| r.0).collect(),
            scores: runs.iter().map(|r| r.1).collect(),
            passed: runs.iter().filter(|r| r.0).count(),
            mean_score: mean(&scores),
            std_error: std_error(&scores),
            pass,
        }
    }

    /// Samples run.
    pub fn count(&self) -> usize {
        self.verdicts.len()
    }

    /// Some samples passed and some failed.
    pub fn flaky(&self) -> bool {
        self.passed > 0 && self.passed < self.count()
    }

    /// `2 of 3 samples passed, mean score 0.67 ± 0.33`.
    pub fn describe(&self) -> String {
        let mut text = format!("{} of {} samples passed", self.passed, self.count());
        if let (Some(mean), Some(se)) = (self.mean_score, self.std_error) {
            text.push_str(&format!(", mean score {mean:.2} ± {se:.2}"));
        }
        text
    }
}

/// The mean; `None` for no values.
pub fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// The standard error of the mean (sample standard deviation over √n); 0 for one value.
pub fn std_error(values: &[f64]) -> Option<f64> {
    let m = mean(values)?;
    let n = values.len() as f64;
    if values.len() < 2 {
        return Some(0.0);
    }
    let variance = values.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1.0);
    Some((variance / n).sqrt())
}

/// pass@k of one case with `c` of `n` samples passed: the chance that at least one of `k`
/// samples drawn without replacement passes, 1 − C(n−c, k)/C(n, k). `k` is at most `n`.
///
/// ```
/// use proposal_eval::__internal::repeat::pass_at_k;
/// assert!((pass_at_k(3, 1, 1) - 1.0 / 3.0).abs() < 1e-12);
/// assert_eq!(pass_at_k(3, 1, 3), 1.0);
/// assert_eq!(pass_at_k(3, 0, 3), 0.0);
/// ```
pub fn pass_at_k(n: usize, c: usize, k: usize) -> f64 {
    if n - c < k {
        return 1.0;
    }
    // C(n−c, k)/C(n, k) as a product, without the factorials.
    let none = ((n - c + 1)..=n).fold(1.0, |p, i| p * (1.0 - k as f64 / i as f64));
    1.0 - none
}

/// pass^k of one case with `c` of `n` samples passed: the chance that all of `k` samples drawn
/// without replacement pass, C(c, k)/C(n, k).
///
/// ```
/// use proposal_eval::__internal::repeat::pass_hat_k;
/// assert_eq!(pass_hat_k(3, 2, 1), 2.0 / 3.0);
/// assert_eq!(pass_hat_k(3, 2, 3), 0.0);
/// assert_eq!(pass_hat_k(3, 3, 3), 1.0);
/// ```
pub fn pass_hat_k(n: usize, c: usize, k: usize) -> f64 {
    if c < k {
        return 0.0;
    }
    (0..k).fold(1.0, |p, i| p * (c - i) as f64 / (n - i) as f64)
}

/// A suite's repeated cases, summed up.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RepeatSummary {
    /// Cases with more than one sample.
    pub cases: usize,
    /// k: the fewest samples any of those cases has.
    pub k: usize,
    /// The mean over cases of the share of samples that passed.
    pub pass_at_1: f64,
    /// The mean over cases of pass@k.
    pub pass_at_k: f64,
    /// The mean over cases of pass^k.
    pub pass_hat_k: f64,
    /// The test names of the cases whose samples disagree, sorted.
    pub flaky: Vec<String>,
}

impl RepeatSummary {
    /// The summary of `cases` (test name and samples); `None` when none has more than one
    /// sample.
    pub fn of<'a>(cases: impl Iterator<Item = (&'a str, &'a Samples)>) -> Option<RepeatSummary> {
        let cases: Vec<(&str, &Samples)> = cases.filter(|(_, s)| s.count() > 1).collect();
        let k = cases.iter().map(|(_, s)| s.count()).min()?;
        let n = cases.len() as f64;
        let average =
            |f: &dyn Fn(&Samples) -> f64| cases.iter().map(|(_, s)| f(s)).sum::<f64>() / n;
        let mut flaky: Vec<String> = cases
            .iter()
            .filter(|(_, s)| s.flaky())
            .map(|(name, _)| name.to_string())
            .collect();
        flaky.sort();
        Some(RepeatSummary {
            cases: cases.len(),
            k,
            pass_at_1: average(&|s| s.passed as f64 / s.count() as f64),
            pass_at_k: average(&|s| pass_at_k(s.count(), s.passed, k)),
            pass_hat_k: average(&|s| pass_hat_k(s.count(), s.passed, k)),
            flaky,
        })
    }

    /// `pass@1 83.3%, pass@3 100.0%, pass^3 66.7%; 1 flaky`.
    pub fn describe(&self) -> String {
        format!(
            "{} case(s) of {}+ samples: pass@1 {:.1}%, pass@{k} {:.1}%, pass^{k} {:.1}%; {} flaky",
            self.cases,
            self.k,
            self.pass_at_1 * 100.0,
            self.pass_at_k * 100.0,
            self.pass_hat_k * 100.0,
            self.flaky.len(),
            k = self.k
        )
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for PassRule {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "PassRule".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "When a case with several samples passes: \"all\", \"majority\" or { at_least = K }.",
            "anyOf": [
                { "enum": ["all", "majority"] },
                { "type": "string", "pattern": "^at_least [1-9][0-9]*$" },
                {
                    "type": "object",
                    "properties": { "at_least": { "type": "integer", "minimum": 1 } },
                    "required": ["at_least"],
                    "additionalProperties": false,
                },
            ],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// C(n, k) by counting subsets, for checking the estimators against their definitions.
    fn subsets_all_pass(n: usize, c: usize, k: usize) -> (usize, usize, usize) {
        // Samples 0..c pass. Count k-subsets, those with at least one pass, those all passing.
        let (mut total, mut any, mut all) = (0, 0, 0);
        for mask in 0u32..(1 << n) {
            if mask.count_ones() as usize != k {
                continue;
            }
            total += 1;
            let passing = (0..c).filter(|i| mask & (1 << i) != 0).count();
            any += usize::from(passing > 0);
            all += usize::from(passing == k);
        }
        (total, any, all)
    }

    #[test]
    fn the_estimators_are_the_exact_subset_probabilities() {
        for n in 1..=8 {
            for c in 0..=n {
                for k in 1..=n {
                    let (total, any, all) = subsets_all_pass(n, c, k);
                    let (at, hat) = (pass_at_k(n, c, k), pass_hat_k(n, c, k));
                    assert!(
                        (at - any as f64 / total as f64).abs() < 1e-12,
                        "pass@{k} n={n} c={c}"
                    );
                    assert!(
                        (hat - all as f64 / total as f64).abs() < 1e-12,
                        "pass^{k} n={n} c={c}"
                    );
                }
            }
        }
    }

    #[test]
    fn rules_decide() {
        for (rule, passed, samples, verdict) in [
            (PassRule::All, 3, 3, true),
            (PassRule::All, 2, 3, false),
            (PassRule::Majority, 2, 3, true),
            (PassRule::Majority, 1, 2, false),
            (PassRule::Majority, 3, 5, true),
            (PassRule::AtLeast(1), 1, 3, true),
            (PassRule::AtLeast(3), 2, 3, false),
            (PassRule::AtLeast(4), 3, 3, false),
        ] {
            assert_eq!(
                rule.decides(passed, samples),
                verdict,
                "{rule} {passed}/{samples}"
            );
            let needs = rule.needs(samples);
            assert!(
                rule.decides(needs, samples) && !rule.decides(needs - 1, samples),
                "{rule} needs {needs} of {samples}"
            );
        }
    }

    #[test]
    fn mean_and_standard_error() {
        let s = Samples::new(
            &[(true, Some(1.0)), (false, Some(0.0)), (true, Some(1.0))],
            PassRule::Majority,
        );
        assert_eq!((s.passed, s.count(), s.flaky()), (2, 3, true));
        assert!((s.mean_score.unwrap() - 2.0 / 3.0).abs() < 1e-12);
        // Standard deviation (n − 1) is √(1/3); over √3 that is 1/3.
        assert!((s.std_error.unwrap() - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(
            s.describe(),
            "2 of 3 samples passed, mean score 0.67 ± 0.33"
        );
        assert_eq!(std_error(&[0.5]), Some(0.0));
        assert_eq!(mean(&[]), None);
    }

    #[test]
    fn a_rule_reads_back_as_reports_write_it() {
        for rule in [PassRule::All, PassRule::Majority, PassRule::AtLeast(2)] {
            let json = serde_json::to_string(&rule).unwrap();
            assert_eq!(
                serde_json::from_str::<PassRule>(&json).unwrap(),
                rule,
                "{json}"
            );
        }
        let samples = Samples::new(&[(true, Some(1.0))], PassRule::AtLeast(3));
        let json = serde_json::to_string(&samples).unwrap();
        assert_eq!(serde_json::from_str::<Samples>(&json).unwrap(), samples);
    }

    #[test]
    fn pass_rules_read_from_toml() {
        #[derive(Deserialize)]
        struct Run {
            run: RunConfig,
        }
        let read = |text: &str| crate::toml_read::from_str::<Run>(text).map(|r| r.run);
        assert_eq!(read("[run]\nrepeat = 3\n").unwrap().pass, PassRule::All);
        assert_eq!(
            read("[run]\npass = \"majority\"\n").unwrap().pass,
            PassRule::Majority
        );
        assert_eq!(
            read("[run]\nrepeat = 5\npass = { at_least = 2 }\n").unwrap(),
            RunConfig {
                repeat: Some(5),
                pass: PassRule::AtLeast(2)
            }
        );
        for (text, says) in [
            ("[run]\npass = \"most\"\n", "unknown pass rule \"most\""),
            ("[run]\npass = { at_least = 0 }\n", "`at_least` is 0"),
            ("[run]\npass = { most = 2 }\n", "unknown key `most`"),
            ("[run]\nrepaet = 2\n", "unknown field `repaet`"),
        ] {
            let err = read(text).unwrap_err().to_string();
            assert!(err.contains(says), "{text}: {err}");
        }
    }

    #[test]
    fn a_suite_summary() {
        let flaky = Samples::new(
            &[(true, Some(1.0)), (false, Some(0.0)), (true, Some(1.0))],
            PassRule::All,
        );
        let steady = Samples::new(&[(true, Some(1.0)); 3], PassRule::All);
        let single = Samples::new(&[(false, Some(0.0))], PassRule::All);
        let summary = RepeatSummary::of(
            [("s::b", &flaky), ("s::a", &steady), ("s::one", &single)].into_iter(),
        )
        .unwrap();
        assert_eq!((summary.cases, summary.k), (2, 3));
        assert!((summary.pass_at_1 - (2.0 / 3.0 + 1.0) / 2.0).abs() < 1e-12);
        assert_eq!(summary.pass_at_k, 1.0);
        assert_eq!(summary.pass_hat_k, 0.5);
        assert_eq!(summary.flaky, ["s::b"]);
        assert!(RepeatSummary::of([("s::one", &single)].into_iter()).is_none());
    }
}
