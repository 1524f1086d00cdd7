//! The `checks` and `budget` evaluators' shell: which checks and limits a case has (its
//! fixture's beside its suite's), the schema files of `json_schema` checks (read, compiled and
//! kept once per process), and their results.
//!
//! A schema file is relative to the suite folder and is checked before any model call: a
//! missing file, one that is not JSON or not a JSON Schema (draft 2020-12) fails the case as a
//! bad fixture or config, naming the file and the check. Validation needs the `json-schema`
//! feature (the `jsonschema` crate); without it a `json_schema` check is such an error, naming
//! the feature.

use super::EvaluatorResult;
use crate::budget::{Budget, Spent};
use crate::checks::Check;
use crate::recording::usage::UsageTotals;
use crate::suite::config::{Evaluator, SuiteConfig};
use crate::suite::fixture::FixtureFile;
use crate::suite::Suite;
use serde_json::Value;
use std::path::Path;

/// The case's checks when the `checks` evaluator runs on it: the suite's `[[checks]]`, then
/// the fixture's `checks`. `None` when it has neither, or the evaluator is off.
pub(crate) fn case_checks<'a>(
    config: &'a SuiteConfig,
    fixture: &'a FixtureFile,
) -> Option<impl Iterator<Item = &'a Check> + Clone> {
    if !config.evaluators.contains(&Evaluator::Checks)
        || (config.checks.is_empty() && fixture.checks.is_none())
    {
        return None;
    }
    Some(config.checks.iter().chain(fixture.checks.iter().flatten()))
}

/// The case's budget when the `budget` evaluator runs on it: the fixture's `budget` over the
/// suite's `[budget]`. `None` when neither sets one, or the evaluator is off.
pub(crate) fn case_budget(config: &SuiteConfig, fixture: &FixtureFile) -> Option<Budget> {
    if !config.evaluators.contains(&Evaluator::Budget) {
        return None;
    }
    match &fixture.budget {
        Some(budget) => Some(budget.over(&config.budget)),
        None => (!config.budget.is_empty()).then(|| config.budget.clone()),
    }
}

/// The `checks` result of `actual`.
pub(crate) fn checks_result<'a>(
    suite: &Suite,
    checks: impl IntoIterator<Item = &'a Check>,
    actual: &Value,
) -> EvaluatorResult {
    let validate = |file: &str, value: &Value| suite.schemas.validate(&suite.dir, file, value);
    let verdict = crate::checks::evaluate(checks, actual, &validate);
    EvaluatorResult {
        misses: verdict.misses(),
        rendered: if verdict.passed {
            String::new()
        } else {
            verdict.render()
        },
        ..EvaluatorResult::plain(
            "checks".into(),
            verdict.score,
            verdict.passed,
            verdict.summary(),
        )
    }
}

/// The `budget` result of what the sample's agent calls used.
pub(crate) fn budget_result(budget: &Budget, spent: &UsageTotals) -> EvaluatorResult {
    let spent = Spent {
        calls: spent.calls,
        input_tokens: spent.input_tokens,
        output_tokens: spent.output_tokens,
        latency_ms: spent.latency_ms,
        cost_usd: spent.cost_usd,
        unpriced_calls: spent.unpriced_calls,
    };
    let verdict = crate::budget::evaluate(budget, &spent);
    EvaluatorResult {
        rendered: if verdict.passed {
            String::new()
        } else {
            verdict.render()
        },
        misses: verdict.misses,
        ..EvaluatorResult::plain(
            "budget".into(),
            verdict.score,
            verdict.passed,
            verdict.summary,
        )
    }
}

/// Before any model call: every schema file the case's checks name can be read and is a JSON
/// Schema. The error says which check of which file names it.
pub(crate) fn check_schemas(
    suite: &Suite,
    config: &SuiteConfig,
    fixture: &FixtureFile,
    fixture_path: &Path,
) -> Result<(), String> {
    if !config.evaluators.contains(&Evaluator::Checks) {
        return Ok(());
    }
    // The place is named only for an error: most cases have none, and pay for no name.
    let written = config.checks.iter().enumerate().map(|(i, c)| (c, Err(i)));
    let own = fixture
        .checks
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, c)| (c, Ok(i)));
    for (check, at) in written.chain(own) {
        let Some(file) = check.schema_file() else {
            continue;
        };
        if let Err(why) = &*suite.schemas.get(&suite.dir, file) {
            let place = match at {
                Err(i) => format!(
                    "bad suite config: {}: [[checks]] number {}",
                    suite.config_file_name(),
                    i + 1
                ),
                Ok(i) => format!("bad fixture: {}: checks[{i}]", suite.relative(fixture_path)),
            };
            return Err(format!("{place} (`{}` {check}): {why}", check.path));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::schemas::Schemas;

    /// The examples of docs/reference/checks.md: each text block under `<!-- failure: checks
    /// -->` is what the evaluator prints for the last fixture's checks on the last `json output`
    /// block above it (with the `json schema FILE` blocks as the suite's schema files); under
    /// `<!-- failure: budget SPENT -->`, what it prints for the last fixture's budget and SPENT.
    #[test]
    fn the_failures_of_the_checks_page_are_what_the_evaluators_print() {
        let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/reference/checks.md");
        let text = std::fs::read_to_string(&page).unwrap();
        let suite = tempfile::tempdir().unwrap();
        let schemas = Schemas::default();
        let (mut fixture, mut output) = (None::<FixtureFile>, Value::Null);
        let lines: Vec<&str> = text.lines().collect();
        let mut shown = 0;
        let mut i = 0;
        while i < lines.len() {
            let Some(lang) = lines[i].strip_prefix("```").filter(|l| !l.is_empty()) else {
                i += 1;
                continue;
            };
            let end = (i + 1..lines.len()).find(|&n| lines[n] == "```").unwrap();
            let block = lines[i + 1..end].join("\n") + "\n";
            let above = lines[i - 1].trim();
            let check = above
                .strip_prefix("<!-- check: ")
                .or_else(|| above.strip_prefix("<!-- failure: "))
                .and_then(|c| c.strip_suffix(" -->"))
                .unwrap_or("");
            match (lang, check.split_once(' ').unwrap_or((check, ""))) {
                ("json", ("fixture", _)) => {
                    fixture = Some(FixtureFile::parse(block.as_bytes(), "f.json").unwrap())
                }
                ("json", ("json", "output")) => output = serde_json::from_str(&block).unwrap(),
                ("json", ("json", schema)) if schema.starts_with("schema ") => {
                    let file = suite.path().join(&schema["schema ".len()..]);
                    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
                    std::fs::write(file, &block).unwrap();
                }
                ("text", (evaluator, spent)) if evaluator == "checks" || evaluator == "budget" => {
                    let f = fixture.as_ref().unwrap();
                    let needs_feature =
                        f.checks.iter().flatten().any(|c| c.schema_file().is_some());
                    if needs_feature && !cfg!(feature = "json-schema") {
                        i = end + 1;
                        continue;
                    }
                    let result = if evaluator == "checks" {
                        let validate =
                            |file: &str, value: &Value| schemas.validate(suite.path(), file, value);
                        let verdict =
                            crate::checks::evaluate(f.checks.iter().flatten(), &output, &validate);
                        (verdict.score, verdict.render())
                    } else {
                        let spent: serde_json::Map<String, Value> =
                            serde_json::from_str(spent).unwrap();
                        let number = |k: &str| spent.get(k).and_then(Value::as_f64).unwrap_or(0.0);
                        let totals = UsageTotals {
                            calls: number("calls") as u64,
                            input_tokens: number("input_tokens") as u64,
                            output_tokens: number("output_tokens") as u64,
                            latency_ms: number("latency_ms"),
                            cost_usd: spent.get("cost_usd").and_then(Value::as_f64),
                            unpriced_calls: 0,
                            ..UsageTotals::default()
                        };
                        let r = budget_result(f.budget.as_ref().unwrap(), &totals);
                        (r.score, r.rendered)
                    };
                    let printed = format!(
                        "{evaluator} FAILED (score {})\n{}",
                        super::super::format_score(result.0),
                        result.1
                    );
                    assert_eq!(
                        block,
                        printed,
                        "{}:{}: the page shows\n{block}\nthe evaluator prints\n{printed}",
                        page.display(),
                        i + 1
                    );
                    shown += 1;
                }
                _ => {}
            }
            i = end + 1;
        }
        let expected = if cfg!(feature = "json-schema") { 4 } else { 3 };
        assert_eq!(shown, expected, "the page's failure examples");
    }
}
