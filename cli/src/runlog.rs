//! The record `draft` leaves of each run under `<suite>/.proposal-eval/runs/<run_id>/`:
//! `summary.json` and `errors/<n>-<suggestion>.json`, one per failed suggestion.
//!
//! Dashboards read both by their key names (docs/reference/drafts.md lists them), so the names
//! are part of the interface: the summary's counts are flat `<what>_count` keys beside `run_id`,
//! and an error record says `error_type` and `error_message`.
//!
//! Every run gets a new folder and never touches an older one: the log only grows, so
//! re-running the same input changes no existing file (the drafts themselves are left
//! byte-identical when their content is unchanged).

use crate::files::{pretty_json, write_atomic};
use crate::generate::ErrorType;
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The folder, relative to the suite, that holds run logs.
pub const RUNS_DIR: &str = ".proposal-eval/runs";

/// A run id: sorts by start time (to the millisecond), unique enough across machines (a hash of
/// time, process and thread).
pub fn new_run_id(now: DateTime<Utc>) -> String {
    let seed = format!(
        "{}-{}-{:?}",
        now.timestamp_nanos_opt().unwrap_or_default(),
        std::process::id(),
        std::thread::current().id()
    );
    let hash = proposal_eval::__internal::draft::sha256_hex(seed.as_bytes());
    format!("draft-{}-{}", now.format("%Y%m%dT%H%M%S%3fZ"), &hash[..8])
}

/// An RFC 3339 UTC timestamp with second precision, as every file of the product writes it.
pub fn timestamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// The outcome of one record.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// A new draft was written.
    Generated,
    /// An existing, unedited draft was rewritten: its input or generator changed, or (with a
    /// reason, the generator not called) it was written before its keys had today's names.
    Updated(Option<String>),
    /// An edited draft was overwritten because of `--force`.
    Overwritten,
    /// The draft is already what would be written; the file was not touched.
    Unchanged,
    /// Not drafted, and why.
    Skipped(String),
    /// Beyond `--batch-size`; picked up by a later run.
    Deferred,
    /// Failed; an error record was written.
    Error {
        /// The error record's `error_type`.
        error_type: ErrorType,
        /// What went wrong: its `error_message`.
        message: String,
        /// SHA-256 of the generator's raw response, when there was one.
        response_sha256: Option<String>,
        /// Redacted excerpt of the response.
        excerpt: Option<String>,
    },
}

impl Outcome {
    /// The word in summaries.
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Generated => "generated",
            Outcome::Updated(_) => "updated",
            Outcome::Overwritten => "overwritten",
            Outcome::Unchanged => "unchanged",
            Outcome::Skipped(_) => "skipped",
            Outcome::Deferred => "deferred",
            Outcome::Error { .. } => "error",
        }
    }
}

/// One line of the run summary.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The suggestion id, when the record had one.
    pub suggestion_id: Option<String>,
    /// `file` or `file:line` of the record.
    pub location: String,
    /// The draft file, relative to the suite, when there is one.
    pub draft: Option<String>,
    /// What happened.
    pub outcome: Outcome,
    /// When the outcome was decided.
    pub time: DateTime<Utc>,
}

/// Counts for the summary line.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Counts {
    /// Records read from the input.
    pub read: usize,
    /// Records handed to the generator (at most `--batch-size`).
    pub picked_up: usize,
    /// Drafts written (new, updated or overwritten).
    pub generated: usize,
    /// Drafts already up to date.
    pub unchanged: usize,
    /// Records not drafted (not `eval`, `rejected`, protected drafts).
    pub skipped: usize,
    /// Records left for a later run by `--batch-size`.
    pub deferred: usize,
    /// Failed records.
    pub errors: usize,
}

impl Counts {
    /// Tallies the entries of a run.
    pub fn of(entries: &[Entry], picked_up: usize) -> Counts {
        let mut c = Counts {
            read: entries.len(),
            picked_up,
            ..Counts::default()
        };
        for e in entries {
            match e.outcome {
                Outcome::Generated | Outcome::Updated(_) | Outcome::Overwritten => c.generated += 1,
                Outcome::Unchanged => c.unchanged += 1,
                Outcome::Skipped(_) => c.skipped += 1,
                Outcome::Deferred => c.deferred += 1,
                Outcome::Error { .. } => c.errors += 1,
            }
        }
        c
    }
}

/// Everything a run summary holds.
pub struct Run<'a> {
    /// The run id.
    pub run_id: &'a str,
    /// `manual` or `scheduled`.
    pub triggered_by: &'a str,
    /// The generator's name.
    pub generator: &'a str,
    /// `--batch-size`, if given.
    pub batch_size: Option<usize>,
    /// `--force` was given.
    pub force: bool,
    /// `--from`.
    pub from: &'a Path,
    /// Start and end.
    pub started_at: DateTime<Utc>,
    /// End.
    pub finished_at: DateTime<Utc>,
    /// One entry per record.
    pub entries: &'a [Entry],
    /// The tallies.
    pub counts: &'a Counts,
}

/// Writes the summary and the error records; returns the summary's path.
pub fn write(suite: &Path, run: &Run<'_>) -> std::io::Result<PathBuf> {
    let dir = suite.join(RUNS_DIR).join(run.run_id);
    let mut outcomes = Vec::new();
    let mut error_index = 0;
    for entry in run.entries {
        let mut item = json!({
            "location": entry.location,
            "outcome": entry.outcome.label(),
        });
        if let Some(id) = &entry.suggestion_id {
            item["suggestion_id"] = json!(id);
        }
        if let Some(draft) = &entry.draft {
            item["draft"] = json!(draft);
        }
        match &entry.outcome {
            Outcome::Skipped(reason) | Outcome::Updated(Some(reason)) => {
                item["reason"] = json!(reason)
            }
            Outcome::Error {
                error_type,
                message,
                response_sha256,
                excerpt,
            } => {
                error_index += 1;
                let name = format!(
                    "{error_index:04}-{}.json",
                    file_stem(entry.suggestion_id.as_deref().unwrap_or("record"))
                );
                let record = json!({
                    "run_id": run.run_id,
                    "suggestion_id": entry.suggestion_id,
                    "error_type": error_type.name(),
                    "error_message": message,
                    "location": entry.location,
                    "time": timestamp(entry.time),
                    "response_sha256": response_sha256,
                    "excerpt": excerpt,
                });
                let path = dir.join("errors").join(&name);
                write_atomic(&path, pretty_json(&record).as_bytes())?;
                item["error_type"] = json!(error_type.name());
                item["error_record"] = json!(format!("errors/{name}"));
            }
            _ => {}
        }
        outcomes.push(item);
    }
    let c = run.counts;
    let summary: Value = json!({
        "run_id": run.run_id,
        "started_at": timestamp(run.started_at),
        "finished_at": timestamp(run.finished_at),
        "triggered_by": run.triggered_by,
        "batch_size": run.batch_size,
        "picked_up_count": c.picked_up,
        "generated_count": c.generated,
        "skipped_count": c.skipped,
        "error_count": c.errors,
        "suggestion_outcomes": outcomes,
        // Beyond the keys dashboards read: the rest of the tally and how the run was invoked.
        "read_count": c.read,
        "unchanged_count": c.unchanged,
        "deferred_count": c.deferred,
        "command": "draft",
        "generator": run.generator,
        "force": run.force,
        "from": run.from.display().to_string(),
    });
    let path = dir.join("summary.json");
    write_atomic(&path, pretty_json(&summary).as_bytes())?;
    Ok(path)
}

/// A suggestion id made safe as part of a file name: a failed record's id may be anything,
/// including `../x`.
fn file_stem(id: &str) -> String {
    let stem: String = id
        .chars()
        .take(64)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if stem.is_empty() {
        "record".into()
    } else {
        stem
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_record_names_cannot_escape_the_folder() {
        assert_eq!(file_stem("../x"), "___x");
        assert_eq!(file_stem(""), "record");
        assert_eq!(file_stem("sugg_abc-1"), "sugg_abc-1");
        assert_eq!(file_stem(&"a".repeat(100)).len(), 64);
    }

    #[test]
    fn run_ids_sort_by_time() {
        let a = new_run_id("2025-01-01T00:00:00Z".parse().unwrap());
        let b = new_run_id("2025-01-02T00:00:00Z".parse().unwrap());
        assert!(a.starts_with("draft-20250101T000000000Z-"), "{a}");
        assert!(a < b);
    }
}
