//! What a comparison reads of a `report.json`: only what it uses, its strings borrowed from the
//! file's bytes (diffs, stories and messages are skipped, not copied), so that two reports of
//! 10,000 cases are read in a fraction of the time building two `Report`s takes.

use chrono::{DateTime, Utc};
use proposal_eval::__internal::recording::usage::UsageTotals;
use proposal_eval::__internal::repeat::{RepeatSummary, Samples};
use proposal_eval::__internal::report::{CaseId, FieldAccuracy};
use serde::Deserialize;
use std::borrow::Cow;

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

/// What a comparison reads of a case: its key, its verdict and score, why it failed, and a
/// repeated case's samples.
#[derive(Debug, Deserialize)]
pub struct CaseView<'a> {
    /// The package of its test binary.
    #[serde(borrow)]
    pub package: Cow<'a, str>,
    /// Its test binary.
    #[serde(borrow)]
    pub binary: Cow<'a, str>,
    /// Its suite's name (a report made by hand may leave it out).
    #[serde(borrow, default)]
    pub suite: Option<Cow<'a, str>>,
    /// Its suite folder.
    #[serde(borrow)]
    pub suite_dir: Cow<'a, str>,
    /// Its case path.
    #[serde(borrow)]
    pub case: Cow<'a, str>,
    /// Its test name.
    #[serde(borrow)]
    pub test: Cow<'a, str>,
    /// Whether it passed.
    pub passed: bool,
    /// Its score.
    pub score: Option<f64>,
    /// Its evaluators' results.
    #[serde(borrow, default)]
    pub evaluators: Option<Vec<EvaluatorView<'a>>>,
    /// Why it failed, as the test printed it.
    #[serde(borrow, default)]
    pub failure: Option<Cow<'a, str>>,
    /// A repeated case's samples.
    #[serde(default)]
    pub samples: Option<Samples>,
}

impl CaseView<'_> {
    /// Its key, the one the report sorts its cases by.
    pub fn id(&self) -> CaseId<'_> {
        CaseId::new(&self.package, &self.binary, &self.suite_dir, &self.case)
    }

    /// Its suite's name (empty when it has none).
    pub fn suite(&self) -> &str {
        self.suite.as_deref().unwrap_or_default()
    }
}

/// What a comparison reads of one evaluator's result: why it failed.
#[derive(Debug, Deserialize)]
pub struct EvaluatorView<'a> {
    /// Its name (`strict`, `checks`, ...).
    #[serde(borrow)]
    pub evaluator: Cow<'a, str>,
    /// Its score.
    pub score: f64,
    /// Whether it passed.
    pub passed: bool,
    /// One line per mismatch or miss.
    #[serde(default, borrow)]
    pub misses: Vec<Cow<'a, str>>,
}

/// Reads what a comparison needs of a `report.json`'s bytes.
pub fn read_view(bytes: &[u8]) -> serde_json::Result<RunView<'_>> {
    serde_json::from_slice(bytes)
}
