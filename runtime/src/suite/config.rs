//! The suite configuration: `proposal-eval.toml` in the suite folder, or the same thing built in
//! Rust.
//!
//! Each section's types live with the concept they configure ([`crate::compare`] for `[strict]`,
//! [`crate::accuracy`] for `[field_accuracy]`, [`crate::judge`] for `[[code_judge]]`,
//! [`crate::recording`] for `[recording]`); this module holds the whole and turns a TOML file
//! into it, with errors that carry the file, line and column.
//!
//! ```
//! use proposal_eval::config::{Evaluator, SuiteConfig};
//! let config = SuiteConfig::from_toml_str(
//!     r#"
//! evaluators = ["strict"]
//! [strict]
//! ignore_paths = ["mutationVariables.metadata.*"]
//! "#,
//!     "proposal-eval.toml",
//! )
//! .unwrap();
//! assert_eq!(config.evaluators, vec![Evaluator::Strict]);
//!
//! let err = SuiteConfig::from_toml_str("evaluatorz = []", "suite/proposal-eval.toml").unwrap_err();
//! assert_eq!((err.line, err.column), (1, 1));
//! assert!(err.to_string().contains("unknown field `evaluatorz`"));
//! ```

use serde::Deserialize;
use std::path::Path;

/// Which evaluators a suite runs. A case passes when every selected evaluator passes.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Evaluator {
    /// Strict proposal comparison (`[strict]`).
    Strict,
    /// Field-by-field scoring (`[field_accuracy]`).
    FieldAccuracy,
    /// External judge scripts (`[[code_judge]]`).
    CodeJudge,
    /// The tool calls the model asked for, against `expected_trajectory` (`[trajectory]`).
    Trajectory,
    /// Rubric statements graded by a recorded judge model (`[judge]`), on the cases that carry
    /// a rubric (`rubric`, or a draft's `draft.assertions`).
    Rubric,
    /// Text, value and schema checks on parts of the output: the fixture's `checks` and the
    /// suite's `[[checks]]`.
    Checks,
    /// Limits on what the case's agent calls cost: the fixture's `budget` over the suite's
    /// `[budget]`.
    Budget,
}

impl Evaluator {
    /// The name used in configs and reports.
    pub fn name(self) -> &'static str {
        match self {
            Evaluator::Strict => "strict",
            Evaluator::FieldAccuracy => "field_accuracy",
            Evaluator::CodeJudge => "code_judge",
            Evaluator::Trajectory => "trajectory",
            Evaluator::Rubric => "rubric",
            Evaluator::Checks => "checks",
            Evaluator::Budget => "budget",
        }
    }

    /// The fixture key whose presence makes this evaluator run on a case; `None` for one that
    /// runs on every case (`code_judge`). `checks` and `budget` also run on every case of a
    /// suite whose config has `[[checks]]` or `[budget]`.
    pub fn expectation(self) -> Option<&'static str> {
        match self {
            Evaluator::Strict | Evaluator::FieldAccuracy => Some("expected"),
            Evaluator::Trajectory => Some("expected_trajectory"),
            Evaluator::Rubric => Some("rubric"),
            Evaluator::Checks => Some("checks"),
            Evaluator::Budget => Some("budget"),
            Evaluator::CodeJudge => None,
        }
    }
}

/// Strict, trajectory, rubric, checks and budget: each runs on the cases that carry its
/// expectation.
fn default_evaluators() -> Vec<Evaluator> {
    vec![
        Evaluator::Strict,
        Evaluator::Trajectory,
        Evaluator::Rubric,
        Evaluator::Checks,
        Evaluator::Budget,
    ]
}

/// A whole suite configuration.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteConfig {
    /// The evaluators enabled in the suite (default: `["strict", "trajectory", "rubric",
    /// "checks", "budget"]`); each
    /// runs on the cases that carry its expectation ([`Evaluator::expectation`]; a rubric is the
    /// fixture's `rubric` or a draft's `draft.assertions`), `code_judge` on every case.
    #[serde(default = "default_evaluators")]
    pub evaluators: Vec<Evaluator>,
    /// `[recording]`: staleness validation, suite-wide sources, request paths to ignore.
    #[serde(default)]
    pub recording: crate::recording::RecordingConfig,
    /// `[strict]`: matching, ignore paths, normalization, transformers.
    #[serde(default)]
    pub strict: crate::compare::StrictConfig,
    /// `[field_accuracy]`: fields, match types, weights, aggregation.
    #[serde(default)]
    pub field_accuracy: crate::accuracy::FieldAccuracyConfig,
    /// `[[code_judge]]`: external judge scripts.
    #[serde(default)]
    pub code_judge: Vec<crate::code_judge::CodeJudgeConfig>,
    /// `[trajectory]`: the default mode, argument comparison, ignore paths, matchers, threshold.
    #[serde(default)]
    pub trajectory: crate::trajectory::TrajectoryConfig,
    /// `[http]`: the upstreams `llm.base_url()` forwards to while recording.
    #[serde(default)]
    pub http: crate::recording::upstream::HttpConfig,
    /// `[pricing."MODEL"]`: dollars per million tokens, for the estimated cost in reports and
    /// `PROPOSAL_EVAL_BUDGET_USD`.
    #[serde(default)]
    pub pricing: std::collections::BTreeMap<String, crate::recording::usage::Pricing>,
    /// `[run]`: samples per case and the rule that decides a case from them.
    #[serde(default)]
    pub run: crate::repeat::RunConfig,
    /// `[judge]`: the judge model of the `rubric` evaluator and its calibration bar.
    #[serde(default)]
    pub judge: crate::rubric_judge::RubricJudgeConfig,
    /// `[[checks]]`: checks on parts of the output, applied to every case of the suite beside
    /// the fixture's own `checks` (the `checks` evaluator).
    #[serde(default)]
    pub checks: Vec<crate::checks::Check>,
    /// `[budget]`: limits on every case's agent calls; a fixture's `budget` replaces them key
    /// by key (the `budget` evaluator).
    #[serde(default)]
    pub budget: crate::budget::Budget,
}

impl Default for SuiteConfig {
    fn default() -> Self {
        SuiteConfig {
            evaluators: default_evaluators(),
            recording: Default::default(),
            strict: Default::default(),
            field_accuracy: Default::default(),
            code_judge: Vec::new(),
            trajectory: Default::default(),
            http: Default::default(),
            pricing: Default::default(),
            run: Default::default(),
            judge: Default::default(),
            checks: Vec::new(),
            budget: Default::default(),
        }
    }
}

crate::files::located_error! {
    /// A config file that could not be read or understood, with the place in it.
    ConfigError
}

impl SuiteConfig {
    /// Parses a config from TOML text; `file` is only used in error messages.
    pub fn from_toml_str(text: &str, file: impl AsRef<Path>) -> Result<SuiteConfig, ConfigError> {
        let file = file.as_ref();
        let config = SuiteConfig::parse_alone(text, file)?;
        config.validated(text, file)
    }

    /// Parses TOML text as a config without the checks across sections: what a nested config
    /// file must pass on its own (an unknown key or a wrong type is its error, at its place).
    fn parse_alone(text: &str, file: &Path) -> Result<SuiteConfig, ConfigError> {
        crate::toml_read::from_str(text).map_err(|e| {
            let (line, column) = e
                .span()
                .map(|span| crate::files::line_column(text, span.start))
                .unwrap_or((0, 0));
            let key = e
                .span()
                .map(|span| crate::messages::toml_key_at(text, span.start))
                .unwrap_or_default();
            ConfigError {
                file: file.to_path_buf(),
                line,
                column,
                message: crate::messages::in_words(
                    e.message().trim(),
                    &key,
                    crate::messages::Syntax::Toml,
                ),
            }
        })
    }

    /// The config once the checks across sections pass; an error points at the `[judge]` or the
    /// `evaluators` line of `text` when it has one.
    fn validated(self, text: &str, file: &Path) -> Result<SuiteConfig, ConfigError> {
        if let Err(message) = self.judge.validate() {
            let line = text
                .lines()
                .position(|l| l.trim() == "[judge]")
                .map_or(0, |n| n + 1);
            return Err(ConfigError {
                file: file.to_path_buf(),
                line,
                column: usize::from(line > 0),
                message,
            });
        }
        self.validate().map_err(|message| {
            // The checks are about the `evaluators` list: point at it when it is written.
            let line = text
                .lines()
                .position(|l| l.trim_start().starts_with("evaluators"))
                .map_or(0, |n| n + 1);
            ConfigError {
                file: file.to_path_buf(),
                line,
                column: usize::from(line > 0),
                message,
            }
        })?;
        Ok(self)
    }

    /// The config of the cases below a nested `proposal-eval.toml`: `nested` (its text, read
    /// from `file`) over `under` (the texts of the configs it applies over, outermost first),
    /// key by key: tables are merged, any other value (a list included) replaces the one under
    /// it. Returns the config and the texts it was merged from, for a file nested deeper still.
    ///
    /// The nested file is checked alone first, so that an unknown key or a wrong type is
    /// reported at its line; the checks across sections apply to the merged whole.
    pub(crate) fn merged_over(
        under: &[String],
        nested: &str,
        file: impl AsRef<Path>,
    ) -> Result<(SuiteConfig, Vec<String>), ConfigError> {
        let file = file.as_ref();
        SuiteConfig::parse_alone(nested, file)?;
        let failed = |message: String| ConfigError {
            file: file.to_path_buf(),
            line: 0,
            column: 0,
            message,
        };
        let words = |e: crate::toml_read::Error| {
            crate::messages::in_words(e.message().trim(), "", crate::messages::Syntax::Toml)
        };
        // Each text parsed again (they are short) and merged in order: one reader for every
        // config, no second TOML deserializer in each user's build (`bench/cold-build`).
        let mut texts = under.to_vec();
        texts.push(nested.to_string());
        let mut merged = toml::de::DeTable::new();
        for text in &texts {
            let table = crate::toml_read::table(text).map_err(|e| failed(words(e)))?;
            crate::toml_read::merge(&mut merged, table);
        }
        let config: SuiteConfig = crate::toml_read::from_table(merged).map_err(|e| {
            failed(format!(
                "{}, once merged over the suite's config (a nested config's keys replace the suite's one by one; tables are merged)",
                words(e)
            ))
        })?;
        Ok((config.validated(nested, file)?, texts))
    }

    /// Reads `proposal-eval.toml` from a suite folder; a folder without one gets the default.
    pub fn load_from_suite(suite: &Path) -> Result<SuiteConfig, ConfigError> {
        let file = suite.join(crate::naming::CONFIG_FILE);
        if !file.exists() {
            return Ok(SuiteConfig::default());
        }
        SuiteConfig::load(&file)
    }

    /// Reads a config file.
    pub fn load(file: &Path) -> Result<SuiteConfig, ConfigError> {
        let text = std::fs::read_to_string(file).map_err(|e| ConfigError {
            file: file.to_path_buf(),
            line: 0,
            column: 0,
            message: format!("cannot read the config file: {e}"),
        })?;
        SuiteConfig::from_toml_str(&text, file)
    }

    /// The text of a config file, for nested files to merge over, once it parses as TOML: empty
    /// when there is no file.
    pub(crate) fn text_of(file: &Path) -> Result<String, ConfigError> {
        if !file.exists() {
            return Ok(String::new());
        }
        let text = std::fs::read_to_string(file).map_err(|e| ConfigError {
            file: file.to_path_buf(),
            line: 0,
            column: 0,
            message: format!("cannot read the config file: {e}"),
        })?;
        match crate::toml_read::table(&text) {
            Ok(_) => Ok(text),
            Err(e) => Err(ConfigError {
                file: file.to_path_buf(),
                line: 0,
                column: 0,
                message: crate::messages::in_words(
                    e.message().trim(),
                    "",
                    crate::messages::Syntax::Toml,
                ),
            }),
        }
    }

    /// Checks what serde cannot: relations between sections.
    fn validate(&self) -> Result<(), String> {
        if self.run.repeat == Some(0) {
            return Err("[run] repeat is 0: a case runs at least once (1 is the default)".into());
        }
        if self.evaluators.is_empty() {
            return Err(
                "`evaluators` is empty: list at least one of strict, field_accuracy, code_judge, trajectory, rubric, checks, budget"
                    .into(),
            );
        }
        if self.evaluators.contains(&Evaluator::FieldAccuracy)
            && self.field_accuracy.fields.is_empty()
        {
            return Err(
                "`evaluators` names field_accuracy but [field_accuracy] lists no fields: add [[field_accuracy.fields]] entries".into(),
            );
        }
        if self.evaluators.contains(&Evaluator::CodeJudge) && self.code_judge.is_empty() {
            return Err(
                "`evaluators` names code_judge but there is no [[code_judge]] section".into(),
            );
        }
        // A section no enabled evaluator reads would check nothing, silently.
        for (evaluator, section, written) in [
            (Evaluator::Checks, "[[checks]]", !self.checks.is_empty()),
            (Evaluator::Budget, "[budget]", !self.budget.is_empty()),
        ] {
            if written && !self.evaluators.contains(&evaluator) {
                return Err(format!(
                    "the config has {section} but `evaluators` does not name {0}: add \"{0}\" to `evaluators`, or remove {section}",
                    evaluator.name()
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_of_an_offset() {
        assert_eq!(crate::files::line_column("ab\ncd", 0), (1, 1));
        assert_eq!(crate::files::line_column("ab\ncd", 4), (2, 2));
    }

    #[test]
    fn unknown_key_names_file_line_and_allowed_keys() {
        let err = SuiteConfig::from_toml_str("\n[recordin]\n", "s/proposal-eval.toml").unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.message.contains("recordin"), "{err}");
        assert!(err.message.contains("recording"), "{err}");
        assert!(
            err.to_string().starts_with("s/proposal-eval.toml:2:"),
            "{err}"
        );
    }

    #[test]
    fn selected_evaluators_need_their_sections() {
        let err =
            SuiteConfig::from_toml_str("evaluators = [\"field_accuracy\"]", "x.toml").unwrap_err();
        assert!(err.message.contains("lists no fields"), "{err}");
        assert_eq!((err.line, err.column), (1, 1), "{err}");
        let err =
            SuiteConfig::from_toml_str("evaluators = [\"code_judge\"]", "x.toml").unwrap_err();
        assert!(err.message.contains("no [[code_judge]]"), "{err}");
    }

    #[test]
    fn a_condition_must_test_something() {
        let toml = "[strict.transformers.\"a.b\"]\ntransform = \"trim\"\nstrategy = \"transform_always\"\nwhen = { path = \"changeType\" }\n";
        let err = SuiteConfig::from_toml_str(toml, "x.toml").unwrap_err();
        assert!(err.message.contains("tests nothing"), "{err}");
        assert_eq!(err.line, 4, "{err}");
    }

    #[test]
    fn redaction_keys_parse_and_a_bad_regex_names_its_place() {
        let toml = "[recording]\nredact = [\"user.email\", \"messages[*].content\"]\nredact_values = [\"CUST-[0-9]{8}\"]\n";
        let config = SuiteConfig::from_toml_str(toml, "x.toml").unwrap();
        assert_eq!(config.recording.redact.len(), 2);
        assert_eq!(config.recording.redact_values[0].as_str(), "CUST-[0-9]{8}");

        let toml = "[recording]\nredact_values = [\n  \"ok-[0-9]+\",\n  \"tok_[a-z\",\n]\n";
        let err = SuiteConfig::from_toml_str(toml, "s/proposal-eval.toml").unwrap_err();
        // The place is the list's, as for an invalid path in any list of paths.
        assert_eq!(
            err.to_string(),
            "s/proposal-eval.toml:2:17: invalid regex `tok_[a-z`: unclosed character class"
        );
        let err =
            SuiteConfig::from_toml_str("[recording]\nredact = [\"a..b\"]\n", "x.toml").unwrap_err();
        assert_eq!((err.line, err.column), (2, 10), "{err}");
    }

    #[test]
    fn http_and_pricing_errors_name_their_place() {
        let toml = "[http]\nupstream = \"https://api.openai.com/v1\"\n[http.upstreams]\nanthropic = \"https://api.anthropic.com\"\n[pricing.\"gpt-4o-mini\"]\ninput_per_mtok = 0.15\noutput_per_mtok = 0.6\n";
        let config = SuiteConfig::from_toml_str(toml, "x.toml").unwrap();
        assert_eq!(config.pricing["gpt-4o-mini"].output_per_mtok, 0.6);
        assert_eq!(config.http.upstreams.len(), 1);
        let err = SuiteConfig::from_toml_str(
            "[http]\nupstream = \"api.openai.com/v1\"\n",
            "s/proposal-eval.toml",
        )
        .unwrap_err();
        assert_eq!((err.line, err.column), (2, 12), "{err}");
        assert!(
            err.message.starts_with("[http] upstream: `api.openai.com/v1` is not an upstream URL: it must start with http:// or https://"),
            "{err}"
        );
        let err = SuiteConfig::from_toml_str(
            "[http.upstreams]\nlocal = \"http://127.0.0.1:/v1\"\n",
            "s/proposal-eval.toml",
        )
        .unwrap_err();
        assert!(
            err.to_string().starts_with("s/proposal-eval.toml:")
                && err.message.starts_with(
                    "[http.upstreams] local: `http://127.0.0.1:/v1` has an empty port"
                ),
            "{err}"
        );
        let err =
            SuiteConfig::from_toml_str("[http.upstreams]\n\"a.b\" = \"https://x\"\n", "x.toml")
                .unwrap_err();
        assert_eq!(err.line, 2, "{err}");
        assert!(err.message.contains("not an upstream name"), "{err}");
        let config = SuiteConfig::from_toml_str("[http]\ntimeout_s = 2.5\n", "x.toml").unwrap();
        assert_eq!(config.http.timeout().as_millis(), 2500);
        for bad in ["0", "-1", "100000", "\"10\""] {
            let err = SuiteConfig::from_toml_str(&format!("[http]\ntimeout_s = {bad}\n"), "x.toml")
                .unwrap_err();
            assert_eq!(err.line, 2, "{err}");
            assert!(
                err.message.contains("timeout_s") || err.message.contains("invalid type"),
                "{err}"
            );
        }
        let err =
            SuiteConfig::from_toml_str("[http]\nupstreem = \"https://x\"\n", "x.toml").unwrap_err();
        assert!(err.message.contains("unknown field `upstreem`"), "{err}");
        let err = SuiteConfig::from_toml_str(
            "[pricing.m]\ninput_per_mtok = 1\noutput_per_mtok = \"1\"\n",
            "x.toml",
        )
        .unwrap_err();
        assert_eq!(err.line, 3, "{err}");
    }

    #[test]
    fn a_nested_config_merges_key_by_key_and_its_lists_replace() {
        use proposal_eval_engine::compare::Matching;
        let suite = "evaluators = [\"strict\"]\n[strict]\nmatching = \"ordered\"\nignore_paths = [\"a\", \"b\"]\ndiscriminator = \"changeType\"\n[recording]\nvalidation = \"warn\"\n";
        let under = [suite.to_string()];
        let nested = "[strict]\nmatching = \"any_order\"\nignore_paths = [\"c\"]\n";
        let (config, merged) =
            SuiteConfig::merged_over(&under, nested, "s/sub/proposal-eval.toml").unwrap();
        assert_eq!(config.strict.matching, Matching::AnyOrder);
        // The list replaces the suite's; the table's other keys and the other tables stay.
        assert_eq!(config.strict.ignore_paths.len(), 1);
        assert!(config.strict.discriminator.is_some());
        assert_eq!(
            config.recording.validation,
            crate::recording::Validation::Warn
        );
        // Deeper still: over the merged table.
        let (deeper, _) =
            SuiteConfig::merged_over(&merged, "[recording]\nvalidation = \"skip\"\n", "x.toml")
                .unwrap();
        assert_eq!(deeper.strict.matching, Matching::AnyOrder);
        assert_eq!(
            deeper.recording.validation,
            crate::recording::Validation::Skip
        );
    }

    #[test]
    fn a_nested_configs_errors_name_it_and_their_place() {
        let under = ["[strict]\nmatching = \"ordered\"\n".to_string()];
        let err = SuiteConfig::merged_over(
            &under,
            "\n[strict]\nmatchng = 1\n",
            "s/sub/proposal-eval.toml",
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("s/sub/proposal-eval.toml:3:1: unknown field `matchng`"),
            "{err}"
        );
        // Valid alone, but the whole asks for what neither file gives.
        let err = SuiteConfig::merged_over(
            &under,
            "evaluators = [\"field_accuracy\"]\n",
            "s/sub/proposal-eval.toml",
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "s/sub/proposal-eval.toml:1:1: `evaluators` names field_accuracy but [field_accuracy] lists no fields: add [[field_accuracy.fields]] entries"
        );
    }

    #[test]
    fn default_is_strict_trajectory_rubric_checks_and_budget() {
        let config = SuiteConfig::from_toml_str("", "x.toml").unwrap();
        assert_eq!(
            config.evaluators,
            vec![
                Evaluator::Strict,
                Evaluator::Trajectory,
                Evaluator::Rubric,
                Evaluator::Checks,
                Evaluator::Budget
            ]
        );
    }

    #[test]
    fn checks_and_budget_sections_are_read_and_their_errors_located() {
        let toml = "[[checks]]\npath = \"reply\"\ncontains = \"refund\"\n[[checks]]\npath = \"[*].text\"\nmax_length = 200\n[budget]\nmax_cost_usd = 0.01\nmax_calls = 5\n";
        let config = SuiteConfig::from_toml_str(toml, "x.toml").unwrap();
        assert_eq!(config.checks.len(), 2);
        assert_eq!(config.checks[1].to_string(), "max_length 200");
        assert_eq!(config.budget.max_calls, Some(5));
        let err = |toml: &str| {
            SuiteConfig::from_toml_str(toml, "s/proposal-eval.toml")
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err("[[checks]]\npath = \"reply\"\nregex = \"a(b\"\n"),
            "s/proposal-eval.toml:1:1: invalid regex `a(b` at character 2: unclosed group"
        );
        assert!(
            err("\n[[checks]]\npath = \"reply\"\nstarts_with = \"a\"\n")
                .starts_with("s/proposal-eval.toml:4:1: unknown field `starts_with`, expected one of `path`, `contains`"),
        );
        assert_eq!(
            err("[budget]\nmax_calls = \"5\"\n"),
            "s/proposal-eval.toml:2:13: budget.max_calls: expected a whole number, 0 or more, found the string \"5\""
        );
        assert_eq!(
            err("evaluators = [\"strict\"]\n[budget]\nmax_calls = 5\n"),
            "s/proposal-eval.toml:1:1: the config has [budget] but `evaluators` does not name budget: add \"budget\" to `evaluators`, or remove [budget]"
        );
    }

    #[test]
    fn trajectory_section_errors_name_their_place() {
        let toml = "[trajectory]\nmode = \"any_order\"\nargs = \"exact\"\nignore_paths = [\"*.trace_id\"]\n[[trajectory.fields]]\npath = \"recommend.price\"\nmatch = \"numeric_tolerance\"\ntolerance = 1\n";
        let config = SuiteConfig::from_toml_str(toml, "x.toml").unwrap();
        assert_eq!(config.trajectory.mode, crate::trajectory::Mode::AnyOrder);
        assert_eq!(config.trajectory.fields.len(), 1);
        let err =
            SuiteConfig::from_toml_str("[trajectory]\nmode = \"loose\"\n", "s/proposal-eval.toml")
                .unwrap_err();
        assert_eq!(
            err.to_string(),
            "s/proposal-eval.toml:2:8: unknown variant `loose`, expected one of `exact`, `in_order`, `any_order`, `subset`, `allowed`"
        );
        let err =
            SuiteConfig::from_toml_str("[trajectory]\nthreshhold = 1\n", "x.toml").unwrap_err();
        assert!(err.message.contains("unknown field `threshhold`"), "{err}");
        let config = SuiteConfig::from_toml_str(
            "[trajectory.tools.send_reply]\nargs_match = \"ignore\"\n",
            "x.toml",
        )
        .unwrap();
        assert_eq!(
            config.trajectory.tools["send_reply"].args_match,
            Some(crate::trajectory::Args::Ignore)
        );
        let err = SuiteConfig::from_toml_str(
            "[trajectory.tools.send_reply]\nargs_match = \"loose\"\n",
            "s/proposal-eval.toml",
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "s/proposal-eval.toml:2:14: unknown variant `loose`, expected one of `partial`, `exact`, `subset`, `ignore`"
        );
    }

    #[test]
    fn judge_settings_are_checked_and_located() {
        let err = SuiteConfig::from_toml_str("\n[judge]\nsamples = 2\n", "s/proposal-eval.toml")
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "s/proposal-eval.toml:2:1: [judge] samples = 2: it must be odd (1, 3, 5...) so that each statement has a majority"
        );
        let err = SuiteConfig::from_toml_str("[judge]\nmodle = \"m\"\n", "x.toml").unwrap_err();
        assert!(err.message.contains("unknown field `modle`"), "{err}");
        let err =
            SuiteConfig::from_toml_str("[judge]\nmin_agreement = 80\n", "x.toml").unwrap_err();
        assert!(err.message.contains("Cohen's kappa"), "{err}");
    }
}
