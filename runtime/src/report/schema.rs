//! `report.json`'s types: the totals, the suites and the report that holds them and the cases.

use super::entry::Entry;
use crate::recording::usage::UsageTotals;
pub use crate::repeat::RepeatSummary;
use crate::run::RecordingUse;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// The report format this version writes.
pub const FORMAT: u32 = 1;

/// The pass/fail counts and recording use of a group of cases.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    /// Cases with an entry.
    pub cases: usize,
    /// Cases that passed.
    pub passed: usize,
    /// Cases that failed.
    pub failed: usize,
    /// `passed / cases` (0 when there is no case).
    pub pass_rate: f64,
    /// The pass rate's 95 % Wilson interval; `None` when there is no case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_rate_interval: Option<proposal_eval_engine::stats::Interval>,
    /// Cases replayed from a fresh recording.
    pub replayed: usize,
    /// Cases replayed from a stale recording (`validation = "warn"`).
    pub replayed_stale: usize,
    /// Cases recorded in their run (into a pending recording or not).
    pub recorded: usize,
    /// Cases refused because their recording was stale.
    pub stale: usize,
    /// Cases that used no recording (none was there, or the one they recorded was not written).
    pub no_recording: usize,
    /// Cases whose result is from a run older than the report's latest run.
    #[serde(default)]
    pub older: usize,
    /// The model calls of these cases, summed; `None` when none made one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<UsageTotals>,
}

impl Totals {
    pub(super) fn add(&mut self, passed: bool, recording: RecordingUse, older: bool) {
        self.cases += 1;
        if passed {
            self.passed += 1;
        } else {
            self.failed += 1;
        }
        match recording {
            RecordingUse::Replayed => self.replayed += 1,
            RecordingUse::ReplayedStale => self.replayed_stale += 1,
            RecordingUse::Recorded | RecordingUse::Pending => self.recorded += 1,
            RecordingUse::Stale => self.stale += 1,
            RecordingUse::None | RecordingUse::NotRecorded => self.no_recording += 1,
        }
        if older {
            self.older += 1;
        }
        // `usage` is summed by the caller (`aggregate`), exactly.
        self.set_pass_rate();
    }

    /// Sets `pass_rate` and its interval from the counts.
    fn set_pass_rate(&mut self) {
        self.pass_rate = if self.cases == 0 {
            0.0
        } else {
            self.passed as f64 / self.cases as f64
        };
        self.pass_rate_interval = proposal_eval_engine::stats::wilson(self.passed, self.cases);
    }
}

/// How many scores fell in `[from, to)` (the last bucket includes 1).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    /// Lower bound.
    pub from: f64,
    /// Upper bound.
    pub to: f64,
    /// Scores in the bucket.
    pub count: usize,
}

/// The bucket of a score: tenths, the last one including 1.
pub(super) fn bucket(score: f64) -> usize {
    ((score.clamp(0.0, 1.0) * 10.0).floor() as usize).min(9)
}

pub(super) fn buckets(counts: [usize; 10]) -> Vec<Bucket> {
    counts
        .iter()
        .enumerate()
        .map(|(i, &count)| Bucket {
            from: i as f64 / 10.0,
            to: (i + 1) as f64 / 10.0,
            count,
        })
        .collect()
}

#[cfg(test)]
pub(super) fn distribution(scores: impl Iterator<Item = f64>) -> Vec<Bucket> {
    let mut counts = [0usize; 10];
    for score in scores {
        counts[bucket(score)] += 1;
    }
    buckets(counts)
}

/// One evaluator across a suite.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EvaluatorSummary {
    /// `strict`, `field_accuracy`, or `code_judge:<name>`.
    pub evaluator: String,
    /// Cases it scored.
    pub cases: usize,
    /// Cases it passed.
    pub passed: usize,
    /// `passed / cases`.
    pub pass_rate: f64,
    /// The mean score.
    pub mean_score: f64,
    /// Its scores in ten buckets.
    pub score_distribution: Vec<Bucket>,
}

/// One field across every case of a suite.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FieldAccuracy {
    /// The field's path.
    pub path: String,
    /// Cases where it matched.
    pub hits: usize,
    /// Cases where it was counted.
    pub total: usize,
    /// `hits / total`.
    pub accuracy: f64,
}

/// One suite, as run by one test binary.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SuiteReport {
    /// The suite's name.
    pub suite: String,
    /// The suite folder, crate-relative.
    pub suite_dir: String,
    /// The package of the test binary.
    pub package: String,
    /// The test binary.
    pub binary: String,
    /// Counts.
    #[serde(flatten)]
    pub totals: Totals,
    /// Case scores (the mean over evaluators) in ten buckets; cases without a score are left out.
    pub score_distribution: Vec<Bucket>,
    /// Each evaluator's pass rate and scores.
    pub evaluators: Vec<EvaluatorSummary>,
    /// Field-accuracy hits per field, across the suite's cases, sorted by path.
    pub field_accuracy: Vec<FieldAccuracy>,
    /// When its last case finished.
    pub last_finished_at: DateTime<Utc>,
    /// Its repeated cases: pass@1, pass@k, pass^k and the flaky cases; absent when no case has
    /// more than one sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<RepeatSummary>,
}

/// `report.json`.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// [`FORMAT`].
    pub format: u32,
    /// When the report was built.
    pub generated_at: DateTime<Utc>,
    /// The latest run whose results the report holds (the run of its most recent entry); a case
    /// from any other run is marked `older`.
    #[serde(default)]
    pub latest_run: Option<String>,
    /// Counts over every case.
    pub totals: Totals,
    /// Per suite and test binary.
    pub suites: Vec<SuiteReport>,
    /// Entry lines that could not be read (cut off by a kill, written by another version,
    /// edited by hand), left out: each as `FILE:LINE:COLUMN: why` (`FILE: why` for a whole file),
    /// at most 20 per file and then `FILE: N more unreadable line(s)`.
    #[serde(default)]
    pub unreadable_entries: Vec<String>,
    /// Every case's latest entry, sorted by package, binary, suite and case. Last in the file:
    /// the fold writes the cases' lines after the rest.
    pub cases: Vec<Entry>,
}
