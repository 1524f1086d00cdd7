//! `[judge]` in the suite config: the model that grades rubrics, and when its verdicts count.

use serde::Deserialize;

/// `[judge]`: the judge model of the `rubric` evaluator, and the calibration bar that decides
/// whether its failures fail tests.
///
/// ```
/// use proposal_eval::config::SuiteConfig;
/// let config = SuiteConfig::from_toml_str(r#"
/// [judge]
/// model = "gpt-4o-mini"
/// samples = 3
/// prompt = "judges/rubric.md"
/// min_agreement = 0.8
/// "#, "proposal-eval.toml").unwrap();
/// assert_eq!(config.judge.samples, 3);
/// assert_eq!(config.judge.temperature, 0.0);
/// assert_eq!(config.judge.min_labels, 20);
/// assert_eq!(config.judge.api_key_env, "OPENAI_API_KEY");
/// assert_eq!((config.judge.timeout_s, config.judge.max_attempts), (60.0, 2));
/// ```
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RubricJudgeConfig {
    /// The judge model's name, sent as the chat completion's `model`; needed to record (it is
    /// also part of the verdicts' key, so changing it makes them stale).
    #[serde(default)]
    pub model: Option<String>,
    /// The OpenAI-compatible endpoint (default: `OPENAI_BASE_URL`, else the OpenAI API).
    #[serde(default)]
    pub base_url: Option<String>,
    /// The environment variable holding the API key (default `OPENAI_API_KEY`).
    #[serde(default = "default_key_env")]
    pub api_key_env: String,
    /// Sampling temperature (default 0).
    #[serde(default)]
    pub temperature: f64,
    /// Judge calls per case (default 1); an odd number: each statement takes the majority.
    #[serde(default = "one")]
    pub samples: u32,
    /// A prompt template file (crate-relative) with `{{input}}`, `{{output}}`,
    /// `{{trajectory}}` and `{{statements}}`; the built-in template when absent.
    #[serde(default)]
    pub prompt: Option<String>,
    /// Whether the judge sees the case's trajectory (its tool calls).
    #[serde(default)]
    pub include_trajectory: bool,
    /// Cohen's kappa the recorded verdicts must reach against `judge-labels.jsonl` before a
    /// rubric failure fails its test; without it, rubric failures always fail.
    #[serde(default)]
    pub min_agreement: Option<f64>,
    /// The labels needed, with `min_agreement`, before rubric failures fail (default 20).
    #[serde(default = "twenty")]
    pub min_labels: usize,
    /// Seconds the built-in judge waits with nothing moving: to connect, to send, for the first
    /// byte of an answer and between reads (default 60): a judge that never answers costs a case at most `timeout_s` x
    /// `max_attempts`, plus the waits between attempts. An answer that keeps coming may take
    /// up to four times as long (at least 120 s) per attempt.
    #[serde(default = "sixty")]
    pub timeout_s: f64,
    /// Attempts per judge call, the first one included (default 2); a failed or timed-out
    /// attempt is tried again after 1 s, then 2 s, 4 s...
    #[serde(default = "two")]
    pub max_attempts: u32,
}

/// The name `[judge]`'s type had before the rubric judge had one room.
#[deprecated(note = "renamed RubricJudgeConfig")]
pub type LlmJudgeConfig = RubricJudgeConfig;

/// The variable `[judge] api_key_env` names by default.
pub(crate) const DEFAULT_KEY_ENV: &str = "OPENAI_API_KEY";

fn default_key_env() -> String {
    DEFAULT_KEY_ENV.into()
}

fn sixty() -> f64 {
    60.0
}

fn two() -> u32 {
    2
}

fn one() -> u32 {
    1
}

fn twenty() -> usize {
    20
}

impl Default for RubricJudgeConfig {
    fn default() -> Self {
        RubricJudgeConfig {
            model: None,
            base_url: None,
            api_key_env: default_key_env(),
            temperature: 0.0,
            samples: 1,
            prompt: None,
            include_trajectory: false,
            min_agreement: None,
            min_labels: twenty(),
            timeout_s: sixty(),
            max_attempts: two(),
        }
    }
}

impl RubricJudgeConfig {
    /// What serde cannot check; the message names the key and the fix.
    pub(crate) fn validate(&self) -> Result<(), String> {
        if self.samples.is_multiple_of(2) {
            return Err(format!(
                "[judge] samples = {}: it must be odd (1, 3, 5...) so that each statement has a majority",
                self.samples
            ));
        }
        if !(0.0..=2.0).contains(&self.temperature) {
            return Err(format!(
                "[judge] temperature = {}: it must be within 0 and 2",
                self.temperature
            ));
        }
        if !(self.timeout_s > 0.0 && self.timeout_s <= 86_400.0) {
            return Err(format!(
                "[judge] timeout_s = {}: write a number of seconds above 0 and at most 86400 (default 60)",
                self.timeout_s
            ));
        }
        if self.max_attempts == 0 {
            return Err(
                "[judge] max_attempts = 0: it counts the first attempt, so it is at least 1 (2 by default)"
                    .into(),
            );
        }
        if let Some(kappa) = self.min_agreement {
            if !(-1.0..=1.0).contains(&kappa) {
                return Err(format!(
                    "[judge] min_agreement = {kappa}: it is a Cohen's kappa, within -1 and 1 (0.8 is a common bar)"
                ));
            }
        }
        Ok(())
    }
}
