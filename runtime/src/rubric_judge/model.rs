//! The judge model: the one `Harness::judge` gives, else an OpenAI-compatible chat completion
//! from `[judge]` (its key from `[judge] api_key_env`), asked live, bounded by `[judge]
//! timeout_s` and `max_attempts`, its calls counted as the judge's.

use super::key::Question;
use super::{JudgeCall, Judgement, RecordedVerdict, RubricJudgeConfig};
use crate::recording::calls::LlmError;
use crate::recording::llm::Llm;
use crate::recording::model::ModelFactory;
use crate::recording::progress;
use crate::recording::upstream::HttpConfig;
use crate::recording::usage::Pricing;
use chrono::Utc;
use proposal_eval_engine::rubric;
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

/// Asks the judge `question.config.samples` times, live, through `judge`; the
/// judgement to record, or why there is none (a call that failed every attempt, or an answer
/// that is not the verdict shape: a judge error, showing the answer). Each call is tried up to
/// `[judge] max_attempts` times (the built-in judge waits up to `[judge] timeout_s` for each
/// byte of an answer),
/// and costs count against the budget (`[pricing]`, `PROPOSAL_EVAL_BUDGET_USD`).
pub(crate) fn judge_live(
    judge: &JudgeModel,
    question: &Question<'_>,
    pricing: &BTreeMap<String, Pricing>,
) -> Result<Judgement, String> {
    let statements = question.rubric.statements().len();
    let request = question.request();
    let mut samples = Vec::new();
    let mut calls = Vec::new();
    for _ in 0..question.config.samples.max(1) {
        let (answer, call) = ask(judge, question.config, &request, pricing)?;
        let verdicts =
            rubric::parse_answer(&answer, statements).map_err(|e| format!("judge error: {e}"))?;
        samples.push(verdicts);
        calls.push(call);
    }
    let key = question.key();
    let verdicts = rubric::majority(&samples)
        .into_iter()
        .zip(question.rubric.statements())
        .map(|(v, statement)| RecordedVerdict {
            id: v.id,
            statement: statement.text,
            holds: v.holds,
            reason: v.reason,
        })
        .collect();
    Ok(Judgement {
        key_sha256: key.key_sha256,
        parts: key.parts,
        recorded_at: Utc::now(),
        calls,
        verdicts,
    })
}

/// One judge call, tried up to `[judge] max_attempts` times, waiting 1 s, 2 s, 4 s... (at most
/// 30 s) between attempts; its answer and the call to record. The progress line counts it as the
/// judge's and names its attempt.
fn ask(
    judge: &JudgeModel,
    config: &RubricJudgeConfig,
    request: &Value,
    pricing: &BTreeMap<String, Pricing>,
) -> Result<(Value, JudgeCall), String> {
    let max = config.max_attempts.max(1);
    let mut attempt = 1;
    loop {
        let mut llm = Llm::record(Some(judge.factory.clone()))
            .with_suite(HttpConfig::default(), pricing.clone());
        let answered = {
            let _judging = progress::judge_call(attempt, max);
            llm.complete(request)
        };
        let error = match answered {
            Ok(answer) => {
                let call = llm
                    .take_recorded()
                    .and_then(|mut calls| calls.pop())
                    .map(JudgeCall::of)
                    .ok_or_else(|| "judge error: the judge call did not finish".to_string())?;
                return Ok((answer, call));
            }
            Err(error) => error,
        };
        // Only the model's own failure (a timeout, a refused connection, an error status) is
        // tried again; the budget spent or no model is not.
        if attempt >= max || !matches!(error, LlmError::Model(_)) {
            return Err(gave_up(judge, config, attempt, &error));
        }
        std::thread::sleep(Duration::from_secs(1 << (attempt - 1).min(5)).min(MAX_WAIT));
        attempt += 1;
    }
}

/// The longest wait between two attempts of a judge call.
const MAX_WAIT: Duration = Duration::from_secs(30);

/// Why a judge call has no answer after `attempts` attempts: the judge, the bound and the keys
/// that raise it (`timeout_s` bounds the built-in judge only).
fn gave_up(
    judge: &JudgeModel,
    config: &RubricJudgeConfig,
    attempts: u32,
    error: &LlmError,
) -> String {
    let named = match (&config.model, &config.base_url) {
        _ if !judge.builtin => "the judge model (Harness::judge's)".to_string(),
        (Some(model), Some(url)) => format!("the judge model {model:?} at {url}"),
        (Some(model), None) => format!("the judge model {model:?}"),
        (None, _) => "the judge model".to_string(),
    };
    let max = config.max_attempts;
    match error {
        LlmError::Model(e) if judge.builtin && timed_out(e) => format!(
            "judge error: {named} gave no answer after {attempts} attempt(s) ([judge] max_attempts = {max}; an attempt ends after [judge] timeout_s = {} s with nothing moving, or after {} s in all): {error}\na judge that needs longer: raise [judge] timeout_s (or max_attempts) in the suite config",
            config.timeout_s,
            whole_attempt(Duration::from_secs_f64(config.timeout_s)).as_secs_f64()
        ),
        LlmError::Model(_) if judge.builtin => format!(
            "judge error: {named} gave no answer after {attempts} attempt(s) ([judge] max_attempts = {max}): {error}"
        ),
        LlmError::Model(_) => format!(
            "judge error: {named} gave no answer after {attempts} attempt(s) ([judge] max_attempts = {max}): {error}\na judge that needs more attempts: raise [judge] max_attempts in the suite config"
        ),
        _ => format!("judge error: {named} was not called: {error}"),
    }
}

/// The judge model that records, and whether it is the built-in one (which `[judge] timeout_s`
/// bounds).
#[derive(Clone)]
pub(crate) struct JudgeModel {
    factory: ModelFactory,
    builtin: bool,
}

/// The judge model that records: `Harness::judge`'s, else (feature `openai`) an
/// OpenAI-compatible chat completions client from `[judge]`.
pub(crate) fn judge_model(
    given: Option<&ModelFactory>,
    config: &RubricJudgeConfig,
) -> Result<JudgeModel, String> {
    if let Some(factory) = given {
        return Ok(JudgeModel {
            factory: factory.clone(),
            builtin: false,
        });
    }
    if config.model.is_none() {
        return Err(
            "the rubric's verdicts cannot be recorded: [judge] model is not set in the suite config; name the judge model (model = \"gpt-4o-mini\")".into(),
        );
    }
    Ok(JudgeModel {
        factory: openai_factory(config)?,
        builtin: true,
    })
}

/// The built-in judge: an OpenAI-compatible chat completion from `[judge]`, keyed by the
/// variable `[judge] api_key_env` names (never another), each attempt ended by `[judge]
/// timeout_s` of silence (to connect, for the first byte, between reads; the attempts are
/// [`ask`]'s).
#[cfg(feature = "openai")]
fn openai_factory(config: &RubricJudgeConfig) -> Result<ModelFactory, String> {
    let variable = &config.api_key_env;
    let Some(key) = std::env::var(variable)
        .ok()
        .filter(|k| !k.trim().is_empty())
    else {
        return Err(format!(
            "the rubric's verdicts cannot be recorded: no API key for the judge model: set {variable} (the variable [judge] api_key_env names{})",
            if *variable == super::config::DEFAULT_KEY_ENV { ", by default" } else { "" }
        ));
    };
    let config = config.clone();
    Ok(std::sync::Arc::new(move || {
        let silence = Duration::from_secs_f64(config.timeout_s);
        let mut model = crate::openai::ChatCompletions::new()
            .api_key(key.clone())
            .read_timeout(silence)
            .timeout(whole_attempt(silence))
            .max_attempts(1);
        if let Some(model_name) = &config.model {
            model = model.model(model_name.clone());
        }
        if let Some(url) = &config.base_url {
            model = model.base_url(url.clone());
        }
        Box::new(model) as Box<dyn crate::Model>
    }))
}

/// Whether the built-in judge's attempts ran out of time (not a refusal, an error status or an
/// answer that is not JSON, which a longer timeout does not help).
#[cfg(feature = "openai")]
fn timed_out(error: &crate::recording::model::ModelError) -> bool {
    std::error::Error::source(error)
        .and_then(|source| source.downcast_ref::<crate::openai::Error>())
        .is_some_and(crate::openai::Error::timed_out)
}

#[cfg(not(feature = "openai"))]
fn timed_out(_error: &crate::recording::model::ModelError) -> bool {
    false
}

/// The most one attempt of the built-in judge may take while its answer keeps coming: four
/// times `[judge] timeout_s` (the bound on silence), at least two minutes.
fn whole_attempt(silence: Duration) -> Duration {
    (silence * 4).max(Duration::from_secs(120))
}

#[cfg(not(feature = "openai"))]
fn openai_factory(_config: &RubricJudgeConfig) -> Result<ModelFactory, String> {
    Err("the rubric's verdicts cannot be recorded: there is no judge model; turn on proposal-eval's `openai` feature (an OpenAI-compatible judge from [judge]), or give one with Harness::judge".into())
}
