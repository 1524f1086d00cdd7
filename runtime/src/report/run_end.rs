//! The end of a case and of a test process: each case's entry appended to the run's journal
//! ([`record`]); at the process's end, its repeated cases summed up and, when it ran its whole
//! target, the journals folded into the report ([`finish`]).

use super::entry::Entry;
use super::journal;
use crate::layout::report_dir;
use crate::repeat::{RepeatSummary, Samples};
use crate::run::CaseResult;
use crate::suite::{LoadedCase, Suite};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;

/// The repeated cases this process ran, for the summary it prints at its end (none without
/// repeats), and whether it wrote an entry.
static RAN: Mutex<(bool, Vec<Entry>)> = Mutex::new((false, Vec::new()));

/// Appends one case's entry to the run's journal. Failing to write a report never fails a test.
pub(crate) fn record(suite: &Suite, loaded: &mut LoadedCase, result: &mut CaseResult) {
    let entry = Entry::new(suite, loaded, result);
    let Ok(mut line) = serde_json::to_string(&entry) else {
        return;
    };
    line.push('\n');
    let written = journal::append(&report_dir(), &line);
    let mut ran = RAN.lock().unwrap_or_else(|p| p.into_inner());
    ran.0 |= written.is_ok();
    if entry.samples.is_some() {
        ran.1.push(entry);
    }
}

/// What a finishing test process ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scope {
    /// Every test of its target (no filter): its results replace the target's.
    Whole,
    /// Some tests (a filter, `--exact`, `--skip`, `--ignored`, one nextest process).
    Part,
}

impl Scope {
    /// The scope of a libtest command line (`args` without the program name): a positional
    /// filter, `--skip` or `--ignored` selects a part; `--include-ignored` runs more, not less.
    pub(crate) fn of_args<I: IntoIterator<Item = String>>(args: I) -> Scope {
        // libtest's options that take a value as the next argument.
        const VALUED: [&str; 6] = [
            "--test-threads",
            "--format",
            "--color",
            "--logfile",
            "--shuffle-seed",
            "-Z",
        ];
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            if arg == "--skip" || arg == "--ignored" || arg.starts_with("--skip=") {
                return Scope::Part;
            }
            if VALUED.contains(&arg.as_str()) {
                args.next();
            } else if !arg.starts_with('-') {
                return Scope::Part;
            }
        }
        Scope::Whole
    }
}

/// What a test process does at its end: writes the journal lines it holds, prints its repeated
/// cases' summary and, when it ran its whole target ([`Scope::of_args`] on its command line, the
/// one rule for both front ends) and wrote an entry, folds the journals into the report. A process that ran a part only
/// appended: the next fold (a whole run, `cargo proposal-eval report`) takes its lines up.
pub(crate) fn finish() {
    if let Err(e) = journal::flush() {
        eprintln!("warning: the report's journal could not be written: {e}");
    }
    let (wrote, repeated) = {
        let mut ran = RAN.lock().unwrap_or_else(|p| p.into_inner());
        (ran.0, std::mem::take(&mut ran.1))
    };
    eprint!("{}", repeats_summary(repeated.iter()));
    if !wrote || Scope::of_args(std::env::args().skip(1)) == Scope::Part {
        return;
    }
    match super::fold::fold(&report_dir(), false) {
        Ok(report) => eprint!("{}", unreadable_summary(&report.unreadable_entries)),
        Err(e) => eprintln!("warning: the report was not written: {e}"),
    }
}

/// The entry lines a fold left out, as a run prints them at its end; empty when there is none.
pub fn unreadable_summary(unreadable: &[String]) -> String {
    if unreadable.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "warning: report entry lines that could not be read were left out of the report \
         (their cases show an earlier result or none; run them again to write their entries):\n",
    );
    for line in unreadable {
        let _ = writeln!(out, "  {line}");
    }
    out
}

/// Per suite of this run, its repeated cases summed up (pass@k, pass^k) and its flaky cases:
/// what a run prints at its end; empty when no case was repeated.
fn repeats_summary<'a>(entries: impl Iterator<Item = &'a Entry>) -> String {
    let mut suites: BTreeMap<&str, Vec<&Entry>> = BTreeMap::new();
    for entry in entries.filter(|e| e.samples.is_some()) {
        suites.entry(&entry.suite).or_default().push(entry);
    }
    let mut out = String::new();
    for (suite, entries) in suites {
        let Some(summary) = RepeatSummary::of(
            entries
                .iter()
                .filter_map(|e| Some((e.test.as_str(), e.samples.as_ref()?))),
        ) else {
            continue;
        };
        let _ = writeln!(out, "repeats in {suite}: {}", summary.describe());
        for entry in entries
            .iter()
            .filter(|e| e.samples.as_ref().is_some_and(Samples::flaky))
        {
            if let Some(samples) = &entry.samples {
                let verdict = if entry.passed { "passed" } else { "FAILED" };
                let _ = writeln!(
                    out,
                    "  flaky: {} ({verdict}, pass = {}): {}",
                    entry.test,
                    samples.pass,
                    samples.describe()
                );
            }
        }
    }
    out
}

/// Registers [`finish`] to run when the process exits: what a `#[proposal_eval]` test binary,
/// whose `main` belongs to libtest, does after its last case.
pub(crate) fn finish_at_exit() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        extern "C" fn at_exit() {
            let _ = std::panic::catch_unwind(finish);
        }
        crate::sys::at_exit(at_exit);
    });
}
