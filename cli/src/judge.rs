//! `cargo proposal-eval judge`: how a suite's recorded rubric verdicts agree with human labels.

use crate::args::UsageError;
use crate::files::display;
use crate::out::{out, outln};
use lexopt::Arg;
use proposal_eval::__internal::judge_calibration::{self as calibration, Calibration};
use proposal_eval::config::{Evaluator, SuiteConfig};
use std::path::PathBuf;

/// `judge --help`.
pub const HELP: &str = "\
Show how a suite's recorded rubric verdicts agree with human labels.

Usage: cargo proposal-eval judge [PATH...]

Suites are found below each PATH (default: the current folder) as for `status`. For each suite
with a judge-labels.jsonl, one label per line:
  {\"case\": \"drafts/eval_sugg_abc123\", \"statement\": \"<its whole text>\", \"holds\": true}
it prints the labels, how many have a recorded verdict on that statement in the case's
recording, the percent agreement, Cohen's kappa, each disagreement with the judge's reason, and
whether rubric failures fail tests ([judge] min_agreement and min_labels) or are advisory. It
names (file:line) each label whose case or statement matches nothing, with the closest statement
of its case (or the closest case), and apart the labels that have no recorded verdict yet. A
suite without any rubric is said to have none.

Options:
  -h, --help     Print this help

Exit status: 0, 1 when a labels file cannot be read, 2 on a usage error.
";

/// Parsed `judge` options.
#[derive(Debug)]
pub struct Options {
    /// Where to look for suites.
    pub paths: Vec<PathBuf>,
}

/// Parses the arguments after `judge`; `Ok(None)` means `--help` was printed.
pub fn parse(mut parser: lexopt::Parser) -> Result<Option<Options>, UsageError> {
    let mut paths = Vec::new();
    while let Some(arg) = parser.next()? {
        match arg {
            Arg::Short('h') | Arg::Long("help") => {
                out!("{HELP}");
                return Ok(None);
            }
            Arg::Value(path) => paths.push(path.into()),
            other => return Err(other.unexpected().into()),
        }
    }
    crate::status::check_paths(&paths)?;
    Ok(Some(Options { paths }))
}

/// Runs `judge`; the exit code.
pub fn run(options: Options) -> Result<i32, String> {
    let mut code = 0;
    for found in crate::suites::find(&options.paths)? {
        let name = found
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        outln!("{name} ({})", display(&found.dir));
        let config = SuiteConfig::load_from_suite(&found.dir).map_err(|e| e.to_string())?;
        let recordings = found.dir.join("recordings");
        let calibrated = calibration::calibrate(&found.dir, &recordings);
        let statements = calibration::rubric_statements(&found.dir, &recordings);
        let labels_file = format!("{}/{}", display(&found.dir), calibration::LABELS_FILE);
        if !statements.is_empty() && !config.evaluators.contains(&Evaluator::Rubric) {
            outln!("  the rubric evaluator is off (evaluators in proposal-eval.toml): no case of this suite is graded by the judge");
            continue;
        }
        match &calibrated {
            Err(e) => {
                outln!("  error: {e}");
                code = 1;
                continue;
            }
            Ok(None) if statements.is_empty() => {
                // Nothing for a judge to grade: no advice to label it.
                outln!("  no rubric: no case of this suite is graded by the judge");
                continue;
            }
            Ok(None) => {
                outln!("  no labels: write {labels_file} to calibrate the judge");
            }
            Ok(Some(c)) => {
                print(c);
                print_unused(c, &statements, &labels_file);
            }
        }
        let bar = match calibration::advisory(&config.judge, &calibrated) {
            Some(why) => format!("rubric failures are advisory (tests pass): {why}"),
            None => match config.judge.min_agreement {
                Some(min) => format!(
                    "rubric failures fail tests: kappa reaches [judge] min_agreement = {min} on at least min_labels = {} label(s)",
                    config.judge.min_labels
                ),
                None => "rubric failures fail tests (no [judge] min_agreement)".to_string(),
            },
        };
        outln!(
            "  {}",
            bar.replace("<suite>/", &format!("{}/", display(&found.dir)))
        );
    }
    Ok(code)
}

/// The labels that do not count: those whose case or statement matches nothing (with the
/// closest), then those with no recorded verdict yet; each by its `file:line`.
fn print_unused(
    c: &Calibration,
    statements: &std::collections::BTreeMap<String, Vec<String>>,
    labels_file: &str,
) {
    let unmatched = calibration::unmatched(&c.without_verdict, statements);
    if !unmatched.is_empty() {
        outln!("  labels that match nothing (not counted):");
        for u in &unmatched {
            let closest = |what: &str| match &u.closest {
                Some(text) => format!("; the closest {what}: {text:?}"),
                None => String::new(),
            };
            if u.case_exists {
                outln!(
                    "    {labels_file}:{}: {:?} is no statement of {}{}",
                    u.label.line,
                    u.label.statement,
                    u.label.case,
                    closest("statement of that case")
                );
            } else {
                outln!(
                    "    {labels_file}:{}: {:?} is no case with a rubric{}",
                    u.label.line,
                    u.label.case,
                    closest("case")
                );
            }
        }
    }
    let unrecorded: Vec<_> = c
        .without_verdict
        .iter()
        .filter(|l| !unmatched.iter().any(|u| u.label.line == l.line))
        .collect();
    if !unrecorded.is_empty() {
        outln!("  labels without a recorded verdict (record the case's verdicts to count them):");
        for label in unrecorded {
            outln!(
                "    {labels_file}:{}: {}: {:?}",
                label.line,
                label.case,
                label.statement
            );
        }
    }
}

fn print(c: &Calibration) {
    let a = &c.agreement;
    outln!(
        "  {} label(s), {} with a recorded verdict; agreement {:.1} %; Cohen's kappa {:.2}",
        c.labels,
        a.matched,
        a.percent * 100.0,
        a.kappa
    );
    if c.disagreements.is_empty() {
        return;
    }
    outln!("  disagreements:");
    let says = |holds: bool| if holds { "holds" } else { "does not hold" };
    for d in &c.disagreements {
        outln!(
            "    {}: {:?}: labelled {}, the judge says it {} ({})",
            d.label.case,
            d.label.statement,
            says(d.label.holds),
            says(!d.label.holds),
            d.reason
        );
    }
}
