//! `cargo proposal-eval report`: folds the journals the last test runs left into
//! `results.jsonl`, `report.json` and `report.html`, and prints a summary table.

use crate::args::{flag_value, UsageError};
use crate::files::{display, write_atomic};
use crate::out::{out, outln};
use crate::suites::target_dir;
use lexopt::Arg;
use proposal_eval::__internal::report::{self, Report};
use std::path::PathBuf;

/// `report --help`.
pub const HELP: &str = "\
Bring the run report up to date with the cases the last test runs left, and summarize it.

Usage: cargo proposal-eval report [--save NAME] [--compare BASE] [--junit FILE] [--target-dir DIR]
       cargo proposal-eval report --merge PATH... [same options]

Every `cargo test` (or `cargo nextest run`) of a proposal-eval suite appends one line per case
to its run's journal, <target>/proposal-eval/runs/<run>/journal.jsonl. This command folds the journals
into results.jsonl (the latest result of every case), report.json and report.html (one
self-contained page), prints a table per suite, and the path of the HTML page. A whole run of a
test target does this at its end; after a filtered run or `cargo nextest run`, run this.

The target folder is --target-dir, else $CARGO_TARGET_DIR, else target/ in the outermost folder
above the current one whose Cargo.toml has a [workspace] (or the nearest Cargo.toml).

Options:
  --save NAME       Keep the report as the baseline NAME (<target>/proposal-eval/baselines/
                    NAME.json; letters, digits, '.', '_', '-'), replacing one of that name,
                    for `cargo proposal-eval compare NAME`
  --compare BASE    Add a comparison with BASE (a baseline's name or a report.json) to
                    report.html: regressions, fixes, score changes, accuracy per field, cases
                    added or removed. The next test run rebuilds report.html without it
  --junit FILE      Also write the report as JUnit XML to FILE (one <testsuite> per suite and
                    test binary, one <testcase> per case, a <failure> with the failure text)
  --merge PATH...   Build the report from other machines' runs instead (CI runners that each
                    ran a --partition of the suite): each PATH a target/proposal-eval folder,
                    its runs/ folder, or a report.json. Writes the report this target's
                    report would be, had one machine run every case (JUnit too, with --junit)
  --target-dir DIR  Cargo's target folder
  -h, --help        Print this help

Exit status: 0, 1 when there is no report to build, 2 on a usage error.
";

/// Parsed `report` options.
#[derive(Debug)]
pub struct Options {
    /// `--target-dir`.
    pub target_dir: Option<PathBuf>,
    /// `--junit FILE`.
    pub junit: Option<PathBuf>,
    /// `--save NAME`.
    pub save: Option<String>,
    /// `--compare BASE`.
    pub compare: Option<String>,
    /// `--merge PATH...`: the sources to merge; empty when not merging.
    pub merge: Vec<PathBuf>,
}

/// Parses the arguments after `report`; `Ok(None)` means `--help` was printed.
pub fn parse(mut parser: lexopt::Parser) -> Result<Option<Options>, UsageError> {
    let mut options = Options {
        target_dir: None,
        junit: None,
        save: None,
        compare: None,
        merge: Vec::new(),
    };
    while let Some(arg) = parser.next()? {
        match arg {
            Arg::Short('h') | Arg::Long("help") => {
                out!("{HELP}");
                return Ok(None);
            }
            Arg::Long("target-dir") => {
                options.target_dir = Some(flag_value(&mut parser, "--target-dir")?.into())
            }
            Arg::Long("save") => {
                let name = flag_value(&mut parser, "--save")?
                    .to_string_lossy()
                    .into_owned();
                if !crate::compare::valid_name(&name) {
                    return Err(UsageError(format!(
                        "--save {name:?} is not a baseline name: use letters, digits, '.', '_' and '-' (not starting with '.'), as in --save main"
                    )));
                }
                options.save = Some(name);
            }
            Arg::Long("compare") => {
                options.compare = Some(
                    flag_value(&mut parser, "--compare")?
                        .to_string_lossy()
                        .into_owned(),
                )
            }
            Arg::Long("junit") => options.junit = Some(flag_value(&mut parser, "--junit")?.into()),
            Arg::Long("merge") => {
                options.merge.extend(parser.values()?.map(PathBuf::from));
            }
            Arg::Value(p) => {
                return Err(UsageError(format!(
                    "unexpected argument {p:?}: report takes no path (use --target-dir)"
                )))
            }
            other => return Err(other.unexpected().into()),
        }
    }
    Ok(Some(options))
}

/// Runs `report`; returns the exit code.
pub fn run(options: Options) -> Result<i32, String> {
    let dir = target_dir(options.target_dir.as_deref())?.join("proposal-eval");
    let report = if options.merge.is_empty() {
        if !dir.join("runs").is_dir() && !dir.join("results.jsonl").is_file() {
            return Err(format!(
                "no run report in {}: run the suite's tests first (`cargo test`)",
                dir.display()
            ));
        }
        proposal_eval::__internal::report::fold(&dir)
            .map_err(|e| format!("cannot make the report in {}: {e}", dir.display()))?
    } else {
        merged(&dir, &options.merge)?
    };
    out!("{}", table(&report));
    let html = dir.join("report.html");
    let html = html.canonicalize().unwrap_or(html);
    outln!("report: {}", html.display());
    if let Some(base) = &options.compare {
        let base_file = crate::compare::resolve(base, &|| Ok(dir.clone()))?;
        let base_bytes = crate::compare::load(&base_file)?;
        let new_file = dir.join("report.json");
        let new_bytes = crate::compare::load(&new_file)?;
        let comparison = crate::comparison::compare(
            &crate::compare::view(&base_file, &base_bytes)?,
            base,
            &crate::compare::view(&new_file, &new_bytes)?,
            "current report",
            crate::comparison::DEFAULT_MIN_DELTA,
            proposal_eval_engine::stats::DEFAULT_ALPHA,
        );
        let json = serde_json::value::to_raw_value(&comparison)
            .map_err(|e| format!("cannot write the comparison as JSON: {e}"))?;
        proposal_eval::__internal::report::page::write(&dir, Some(&json))
            .map_err(|e| e.to_string())?;
        outln!(
            "compared with {base} in report.html: {}; overall: {} at alpha {}",
            comparison.summary_line(),
            comparison.overall.verdict,
            comparison.alpha
        );
    }
    if let Some(name) = &options.save {
        let file = crate::compare::baselines_dir(&dir).join(format!("{name}.json"));
        let json = std::fs::read(dir.join("report.json"))
            .map_err(|e| format!("cannot read {}: {e}", display(&dir.join("report.json"))))?;
        write_atomic(&file, &json)
            .map_err(|e| format!("cannot write the baseline {}: {e}", display(&file)))?;
        outln!("baseline {name}: {}", display(&file));
    }
    if let Some(file) = &options.junit {
        let xml = crate::junit::to_junit(&report);
        write_atomic(file, xml.as_bytes())
            .map_err(|e| format!("cannot write the JUnit file {}: {e}", display(file)))?;
        outln!("junit: {}", display(file));
    }
    Ok(0)
}

/// `--merge`: the report of every source's cases, written in `dir`.
fn merged(dir: &std::path::Path, sources: &[PathBuf]) -> Result<Report, String> {
    use proposal_eval::__internal::report::merge;
    // A cut last line is named in the table's warning, with the fold's.
    let report = merge::merge(sources, dir).map_err(|e| e.to_string())?;
    outln!(
        "merged {} case(s) from {} source(s)",
        report.totals.cases,
        sources.len()
    );
    Ok(report)
}

/// The terminal summary: one row per suite and test binary (its pass rate with its 95% Wilson
/// interval), a total, the fields below 100% accuracy, and the failing cases.
pub fn table(report: &Report) -> String {
    let mut rows: Vec<[String; 10]> = vec![[
        "suite".into(),
        "binary".into(),
        "cases".into(),
        "passed".into(),
        "failed".into(),
        "pass rate".into(),
        "95% interval".into(),
        "replayed".into(),
        "recorded".into(),
        "stale".into(),
    ]];
    let row = |suite: &str, binary: &str, t: &proposal_eval::__internal::report::Totals| {
        [
            suite.to_string(),
            binary.to_string(),
            t.cases.to_string(),
            t.passed.to_string(),
            t.failed.to_string(),
            format!("{:.1}%", t.pass_rate * 100.0),
            t.pass_rate_interval.map_or(String::new(), |i| {
                format!("{:.1}-{:.1}%", i.low * 100.0, i.high * 100.0)
            }),
            (t.replayed + t.replayed_stale).to_string(),
            t.recorded.to_string(),
            (t.stale + t.replayed_stale).to_string(),
        ]
    };
    for suite in &report.suites {
        rows.push(row(
            &suite.suite,
            &format!("{}/{}", suite.package, suite.binary),
            &suite.totals,
        ));
    }
    rows.push(row("total", "", &report.totals));
    let mut widths = [0usize; 10];
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for r in &rows {
        let mut line = String::new();
        for (i, (cell, w)) in r.iter().zip(widths).enumerate() {
            if i < 2 {
                line.push_str(&format!("{cell:<w$}  "));
            } else {
                line.push_str(&format!("{cell:>w$}  "));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    for suite in &report.suites {
        let weak: Vec<_> = suite
            .field_accuracy
            .iter()
            .filter(|f| f.hits < f.total)
            .collect();
        if weak.is_empty() {
            continue;
        }
        out.push_str(&format!(
            "\nfields below 100% in {} ({}/{}):\n",
            suite.suite, suite.package, suite.binary
        ));
        for f in weak {
            out.push_str(&format!(
                "  {:>6.1}%  {} ({}/{})\n",
                f.accuracy * 100.0,
                f.path,
                f.hits,
                f.total
            ));
        }
    }
    for suite in &report.suites {
        let Some(repeats) = &suite.repeats else {
            continue;
        };
        out.push_str(&format!(
            "\nrepeats in {} ({}/{}): {}\n",
            suite.suite,
            suite.package,
            suite.binary,
            repeats.describe()
        ));
        for test in &repeats.flaky {
            let samples = report
                .cases
                .iter()
                .find(|c| &c.test == test && c.binary == suite.binary && c.package == suite.package)
                .and_then(|c| c.samples.as_ref());
            match samples {
                Some(s) => out.push_str(&format!("  flaky: {test}: {}\n", s.describe())),
                None => out.push_str(&format!("  flaky: {test}\n")),
            }
        }
    }
    out.push_str(&failing_list(report));
    let unreadable = report::unreadable_summary(&report.unreadable_entries);
    if !unreadable.is_empty() {
        out.push('\n');
        out.push_str(&unreadable);
    }
    out
}

/// The failing cases, a line each with why (`\nfailing:\n  ...`); empty when none fails.
fn failing_list(report: &Report) -> String {
    let mut out = String::new();
    let failing: Vec<_> = report.cases.iter().filter(|c| !c.passed).collect();
    // A test name two suite folders give (`fixtures/eu/payments`, `fixtures/us/payments`): the
    // line names the folder too, as `compare` does.
    let mut first = std::collections::HashMap::new();
    let mut shared = std::collections::HashSet::new();
    for c in &report.cases {
        let name = (&c.package, &c.binary, &c.test);
        if *first.entry(name).or_insert(&c.suite_dir) != &c.suite_dir {
            shared.insert(name);
        }
    }
    if !failing.is_empty() {
        out.push_str("\nfailing:\n");
        for c in failing {
            let why: Vec<String> = c
                .evaluators
                .iter()
                .filter(|e| !e.passed)
                .map(|e| format!("{} {:.2}", e.evaluator, e.score))
                .collect();
            let why = if why.is_empty() {
                c.failure
                    .as_deref()
                    .and_then(|f| f.lines().next())
                    .unwrap_or("failed")
                    .to_string()
            } else {
                why.join(", ")
            };
            // A case that ran to record and failed before its file was written says so.
            let unwritten = if c.recording == report::RecordingUse::NotRecorded {
                " (not recorded)"
            } else {
                ""
            };
            let place = match shared.contains(&(&c.package, &c.binary, &c.test)) {
                true => format!("{}/{}, {}", c.package, c.binary, c.suite_dir),
                false => format!("{}/{}", c.package, c.binary),
            };
            out.push_str(&format!("  {} ({place}): {why}{unwritten}\n", c.test));
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The runtime's golden `report.json` (every kind of case), as JSON to change.
    pub(crate) fn golden_report() -> serde_json::Value {
        let golden = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../runtime/tests/golden/report/whole.json"
        );
        // The golden report's times are masked; any time reads.
        let text = std::fs::read_to_string(golden)
            .unwrap()
            .replace("<time>", "2026-01-01T00:00:00Z");
        serde_json::from_str(&text).unwrap()
    }

    /// A case that ran to record and failed before its recording was written is listed with
    /// `(not recorded)`, and not counted as recorded.
    #[test]
    fn a_case_whose_recording_was_not_written_says_so() {
        let mut json = golden_report();
        let case = json["cases"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|c| c["passed"] == false)
            .unwrap();
        case["recording"] = "not_recorded".into();
        let test = case["test"].as_str().unwrap().to_string();
        let report: Report = serde_json::from_value(json).unwrap();
        let table = table(&report);
        let line = table
            .lines()
            .find(|l| l.contains(&test))
            .unwrap_or_else(|| panic!("{table}"));
        assert!(line.ends_with(" (not recorded)"), "{line}");
    }
}
