//! `cargo proposal-eval compare BASE [NEW]`: what changed between a baseline report and another
//! (by default the current one): regressions, fixes, score changes, accuracy per field, cases
//! added or removed, and per suite whether the change is significant. Exits 1 on a regression
//! (or, with `--fail-on significant`, on a significant one), for CI.

use crate::args::{flag_value, UsageError};
use crate::comparison::{compare, read_view, Comparison, RunView, DEFAULT_MIN_DELTA};
use crate::files::display;
use crate::out::out;
use crate::suites::target_dir;
use lexopt::Arg;
use proposal_eval::__internal::report::FORMAT;
use proposal_eval_engine::stats::DEFAULT_ALPHA;
use std::path::{Path, PathBuf};

/// `compare --help`.
pub const HELP: &str = "\
Compare a run report with a baseline: regressions, fixes, score changes, accuracy per field,
cases added or removed.

Usage: cargo proposal-eval compare BASE [NEW] [OPTIONS]

BASE and NEW are each a baseline's name (saved with `cargo proposal-eval report --save NAME`,
kept as <target>/proposal-eval/baselines/NAME.json) or the path of a report.json (anything with
a `/` or ending in `.json`). NEW defaults to the current report, rebuilt first from the entries
the last test runs left (as `cargo proposal-eval report` does).

A case is a regression when it passed in BASE and fails in NEW, a fix the other way round, and
a score change when its verdict is the same and its score moved by at least --min-delta. Cases
are matched by package, test binary, suite folder and case path.

Per suite and overall it also says whether the change is larger than chance: each side's pass
rate with its 95% Wilson interval, the exact McNemar test of the cases whose verdict changed,
the mean paired score change with its 95% t interval, the smallest change the suite can detect,
and a verdict (regressed, improved, no significant change) at --alpha; and the model calls'
tokens, latency and cost before and after. Formulas: docs/reference/statistics.md.

Options:
  --format FORMAT   text (default), json, or markdown (for a pull-request comment)
  --min-delta X     the smallest score or accuracy change listed (default 0.01)
  --alpha A         the significance level of the verdicts, above 0 and below 1 (default 0.05)
  --fail-on WHAT    regression (default): exit 1 on any case that went from pass to fail;
                    significant: exit 1 only when a suite, or the whole run, regressed
                    significantly at --alpha
  --target-dir DIR  Cargo's target folder (where baselines and the current report are)
  -h, --help        Print this help

Exit status: 0 when no case regressed (with --fail-on significant: no significant regression);
1 when one did; 2 on a usage error or a report that cannot be read.
";

/// How the comparison is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// For a terminal.
    Text,
    /// The `Comparison` as JSON.
    Json,
    /// For a pull-request comment.
    Markdown,
}

/// What makes `compare` exit 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailOn {
    /// Any case that went from pass to fail.
    Regression,
    /// A suite, or the whole run, that regressed significantly.
    Significant,
}

/// Parsed `compare` options.
#[derive(Debug)]
pub struct Options {
    /// BASE.
    pub base: String,
    /// NEW; `None`: the current report.
    pub new: Option<String>,
    /// `--format`.
    pub format: Format,
    /// `--min-delta`.
    pub min_delta: f64,
    /// `--alpha`.
    pub alpha: f64,
    /// `--fail-on`.
    pub fail_on: FailOn,
    /// `--target-dir`.
    pub target_dir: Option<PathBuf>,
}

/// Parses the arguments after `compare`; `Ok(None)` means `--help` was printed.
pub fn parse(mut parser: lexopt::Parser) -> Result<Option<Options>, UsageError> {
    let mut names: Vec<String> = Vec::new();
    let mut format = Format::Text;
    let mut min_delta = DEFAULT_MIN_DELTA;
    let mut alpha = DEFAULT_ALPHA;
    let mut fail_on = FailOn::Regression;
    let mut target_dir = None;
    while let Some(arg) = parser.next()? {
        match arg {
            Arg::Short('h') | Arg::Long("help") => {
                out!("{HELP}");
                return Ok(None);
            }
            Arg::Long("format") => {
                let value = flag_value(&mut parser, "--format")?;
                format = match value.to_string_lossy().as_ref() {
                    "text" => Format::Text,
                    "json" => Format::Json,
                    "markdown" | "md" => Format::Markdown,
                    other => {
                        return Err(UsageError(format!(
                            "--format {other:?} is not a format: use text, json or markdown"
                        )))
                    }
                };
            }
            Arg::Long("min-delta") => {
                let value = flag_value(&mut parser, "--min-delta")?;
                let text = value.to_string_lossy();
                min_delta = match text.parse::<f64>() {
                    Ok(x) if (0.0..=1.0).contains(&x) => x,
                    _ => {
                        return Err(UsageError(format!(
                            "--min-delta {text:?} is not a number from 0 to 1 (scores are 0 to 1; default 0.01)"
                        )))
                    }
                };
            }
            Arg::Long("alpha") => {
                let value = flag_value(&mut parser, "--alpha")?;
                let text = value.to_string_lossy();
                alpha = match text.parse::<f64>() {
                    Ok(x) if x > 0.0 && x < 1.0 => x,
                    _ => {
                        return Err(UsageError(format!(
                            "--alpha {text:?} is not a significance level: give a number above 0 and below 1 (default 0.05)"
                        )))
                    }
                };
            }
            Arg::Long("fail-on") => {
                let value = flag_value(&mut parser, "--fail-on")?;
                fail_on = match value.to_string_lossy().as_ref() {
                    "regression" => FailOn::Regression,
                    "significant" => FailOn::Significant,
                    other => {
                        return Err(UsageError(format!(
                            "--fail-on {other:?} is not a choice: use regression (any case from pass to fail, the default) or significant (a significant suite regression)"
                        )))
                    }
                };
            }
            Arg::Long("target-dir") => {
                target_dir = Some(flag_value(&mut parser, "--target-dir")?.into())
            }
            Arg::Value(value) => names.push(value.to_string_lossy().into_owned()),
            other => return Err(other.unexpected().into()),
        }
    }
    let mut names = names.into_iter();
    let Some(base) = names.next() else {
        return Err(UsageError(
            "compare needs the baseline to compare with: a name saved with `report --save NAME`, or a report.json".into(),
        ));
    };
    let new = names.next();
    if let Some(extra) = names.next() {
        return Err(UsageError(format!(
            "unexpected argument {extra:?}: compare takes BASE and at most one NEW"
        )));
    }
    Ok(Some(Options {
        base,
        new,
        format,
        min_delta,
        alpha,
        fail_on,
        target_dir,
    }))
}

/// The folder baselines are kept in.
pub fn baselines_dir(report_dir: &Path) -> PathBuf {
    report_dir.join("baselines")
}

/// Whether `name` can be a baseline's name: a file name of letters, digits, `.`, `_` and `-`,
/// not starting with a dot.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// The file a BASE or NEW argument names: a path when it looks like one, else a saved baseline.
/// `report_dir` is asked only for a name (a path needs no target folder).
pub fn resolve(
    arg: &str,
    report_dir: &dyn Fn() -> Result<PathBuf, String>,
) -> Result<PathBuf, String> {
    if arg.contains('/') || arg.contains(std::path::MAIN_SEPARATOR) || arg.ends_with(".json") {
        let path = PathBuf::from(arg);
        if !path.is_file() {
            return Err(format!(
                "no report at {arg}: give the path of a report.json, or a baseline's name"
            ));
        }
        return Ok(path);
    }
    let dir = baselines_dir(&report_dir()?);
    let file = dir.join(format!("{arg}.json"));
    if file.is_file() {
        return Ok(file);
    }
    let mut saved: Vec<String> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|e| {
                    e.file_name()
                        .to_str()
                        .and_then(|n| n.strip_suffix(".json"))
                        .map(str::to_string)
                })
                .collect()
        })
        .unwrap_or_default();
    saved.sort();
    let saved = if saved.is_empty() {
        "none saved yet".to_string()
    } else {
        format!("saved: {}", saved.join(", "))
    };
    Err(format!(
        "no baseline named `{arg}` in {} ({saved}); save the current report as one with `cargo proposal-eval report --save {arg}`",
        display(&dir)
    ))
}

/// Reads a report file's bytes.
pub fn load(file: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(file).map_err(|e| format!("cannot read {}: {e}", display(file)))
}

/// What a comparison reads of the report `bytes` (from `file`), refusing one of a newer format
/// or one that is not a report. The format is looked at on its own only when the report does not
/// read (one more pass over the file would cost a third of the command's time).
pub fn view<'a>(file: &Path, bytes: &'a [u8]) -> Result<RunView<'a>, String> {
    let newer = |n: u64| {
        format!(
            "{}: made by a newer proposal-eval (report format {n}; this version reads up to {FORMAT}): upgrade proposal-eval",
            display(file)
        )
    };
    let error = match read_view(bytes) {
        Ok(view) if u64::from(view.format) > u64::from(FORMAT) => {
            return Err(newer(u64::from(view.format)))
        }
        Ok(view) => return Ok(view),
        Err(e) => e,
    };
    #[derive(serde::Deserialize)]
    struct FormatOnly {
        format: Option<serde_json::Value>,
    }
    let format: FormatOnly = serde_json::from_slice(bytes).map_err(|e| not_a_report(file, &e))?;
    match format.format.as_ref().and_then(serde_json::Value::as_u64) {
        Some(n) if n > u64::from(FORMAT) => Err(newer(n)),
        Some(_) => Err(not_a_report(file, &error)),
        None => Err(format!(
            "{}: not a run report (no `format` number); give a report.json or a baseline saved with `report --save`",
            display(file)
        )),
    }
}

fn not_a_report(file: &Path, e: &serde_json::Error) -> String {
    format!(
        "{}:{}:{}: not a run report: {e}",
        display(file),
        e.line(),
        e.column().max(1)
    )
}

/// Runs `compare`; returns the exit code.
pub fn run(options: Options) -> Result<i32, String> {
    match comparison(&options) {
        Ok(comparison) => {
            match options.format {
                Format::Text => out!("{}", comparison.to_text()),
                Format::Markdown => out!("{}", comparison.to_markdown()),
                Format::Json => {
                    let json = serde_json::to_string_pretty(&comparison)
                        .map_err(|e| format!("cannot write the comparison as JSON: {e}"))?;
                    out!("{json}\n");
                }
            }
            Ok(i32::from(match options.fail_on {
                FailOn::Regression => comparison.has_regressions(),
                FailOn::Significant => comparison.has_significant_regression(),
            }))
        }
        Err(message) => {
            crate::out::errln!("error: {message}");
            Ok(2)
        }
    }
}

fn comparison(options: &Options) -> Result<Comparison, String> {
    let report_dir =
        || target_dir(options.target_dir.as_deref()).map(|dir| dir.join("proposal-eval"));
    let base_file = resolve(&options.base, &report_dir)?;
    let base_bytes = load(&base_file)?;
    let (new_file, new_name) = match &options.new {
        Some(arg) => (resolve(arg, &report_dir)?, arg.clone()),
        None => (current(&report_dir()?)?, "current report".to_string()),
    };
    let new_bytes = load(&new_file)?;
    Ok(compare(
        &view(&base_file, &base_bytes)?,
        &options.base,
        &view(&new_file, &new_bytes)?,
        &new_name,
        options.min_delta,
        options.alpha,
    ))
}

/// The current report's file, folded from the runs' journals first (as `report` does), so that
/// it holds every case the last runs left.
pub fn current(report_dir: &Path) -> Result<PathBuf, String> {
    let file = report_dir.join("report.json");
    if !report_dir.join("runs").is_dir() && !report_dir.join("results.jsonl").is_file() {
        if file.is_file() {
            return Ok(file);
        }
        return Err(format!(
            "no run report in {}: run the suite's tests first (`cargo test`)",
            display(report_dir)
        ));
    }
    proposal_eval::__internal::report::fold(report_dir)
        .map_err(|e| format!("cannot make the report in {}: {e}", display(report_dir)))?;
    Ok(file)
}
