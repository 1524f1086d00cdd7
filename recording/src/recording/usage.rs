//! What model calls cost: the tokens a response reports, the time a call took, and the price of
//! both from `[pricing."MODEL"]` in the suite config.
//!
//! Usage is read from the response itself, in the two shapes the common APIs use: OpenAI's
//! `usage.prompt_tokens`/`completion_tokens` and Anthropic's `usage.input_tokens`/
//! `output_tokens` (also `message.usage`, as Anthropic's stream starts). A streamed response is
//! a list of events: the last count each event reports wins, so OpenAI's final usage chunk and
//! Anthropic's `message_start` + `message_delta` both add up to the call's usage.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// The tokens one model call used, as its response reports them.
///
/// ```
/// use proposal_eval::Usage;
/// use serde_json::json;
///
/// let openai = json!({ "model": "gpt-4o-mini", "usage": { "prompt_tokens": 12, "completion_tokens": 30 } });
/// assert_eq!(Usage::from_response(&openai), Some(Usage::new(12, 30).with_model("gpt-4o-mini")));
/// assert_eq!(Usage::from_response(&json!({ "text": "no usage here" })), None);
/// ```
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Usage {
    /// The model that answered, when the response (or the request) names it: what
    /// `[pricing."MODEL"]` is looked up by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Prompt (input) tokens.
    pub input_tokens: u64,
    /// Completion (output) tokens.
    pub output_tokens: u64,
}

impl Usage {
    /// Usage of `input_tokens` in and `output_tokens` out, of no named model.
    pub fn new(input_tokens: u64, output_tokens: u64) -> Usage {
        Usage {
            model: None,
            input_tokens,
            output_tokens,
        }
    }

    /// The same usage, of `model`.
    pub fn with_model(mut self, model: impl Into<String>) -> Usage {
        self.model = Some(model.into());
        self
    }

    /// The usage a response reports: an OpenAI- or Anthropic-shaped JSON body, or a recorded
    /// stream (a list of events whose `data` is such a body or chunk). `None` when it reports
    /// no token count.
    pub fn from_response(response: &Value) -> Option<Usage> {
        let mut model = None;
        let (mut input, mut output) = (None, None);
        let mut read = |body: &Value| {
            for holder in [body, &body["message"], &body["response"]] {
                if let Some(m) = holder.get("model").and_then(Value::as_str) {
                    model = Some(m.to_string());
                }
                let usage = &holder["usage"];
                let count = |keys: &[&str]| keys.iter().find_map(|k| usage[*k].as_u64());
                if let Some(n) = count(&["prompt_tokens", "input_tokens"]) {
                    input = Some(n);
                }
                if let Some(n) = count(&["completion_tokens", "output_tokens"]) {
                    output = Some(n);
                }
            }
        };
        match response {
            Value::Array(events) => events.iter().for_each(|e| read(&e["data"])),
            body => read(body),
        }
        if input.is_none() && output.is_none() {
            return None;
        }
        Some(Usage {
            model,
            input_tokens: input.unwrap_or(0),
            output_tokens: output.unwrap_or(0),
        })
    }
}

/// A live model's answer with the tokens it used: what [`Model::complete_with_usage`] returns.
///
/// [`Model::complete_with_usage`]: crate::Model::complete_with_usage
#[derive(Clone, Debug, PartialEq)]
pub struct Completion {
    /// The response handed to the code under test and recorded.
    pub response: Value,
    /// The tokens the call used, when known.
    pub usage: Option<Usage>,
}

impl Completion {
    /// A response whose usage is read from it ([`Usage::from_response`]).
    pub fn new(response: Value) -> Completion {
        Completion {
            usage: Usage::from_response(&response),
            response,
        }
    }
}

/// `[pricing."MODEL"]` in the suite config: US dollars per million tokens.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pricing {
    /// Dollars per million input (prompt) tokens.
    #[serde(deserialize_with = "price")]
    pub input_per_mtok: f64,
    /// Dollars per million output (completion) tokens.
    #[serde(deserialize_with = "price")]
    pub output_per_mtok: f64,
}

fn price<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    let value = f64::deserialize(d)?;
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(serde::de::Error::custom(format!(
            "{value} is not a price: write dollars per million tokens, 0 or more"
        )))
    }
}

/// The price of `usage` under `pricing`: the entry named exactly as the model, else the longest
/// entry the model's name starts with (`gpt-4o-mini` prices `gpt-4o-mini-2024-07-18`). `None`
/// when the model is unnamed or has no entry.
pub fn cost(pricing: &BTreeMap<String, Pricing>, usage: &Usage) -> Option<f64> {
    let model = usage.model.as_deref()?;
    let price = pricing.get(model).or_else(|| {
        pricing
            .iter()
            .filter(|(name, _)| model.starts_with(name.as_str()))
            .max_by_key(|(name, _)| name.len())
            .map(|(_, p)| p)
    })?;
    Some(
        (usage.input_tokens as f64 * price.input_per_mtok
            + usage.output_tokens as f64 * price.output_per_mtok)
            / 1_000_000.0,
    )
}

/// The model calls of one case (or of a suite, summed): how many, their tokens, the time they
/// took when recorded, and their estimated cost.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UsageTotals {
    /// Model calls made (recorded ones replayed included).
    pub calls: u64,
    /// Input tokens, of the calls that report usage.
    pub input_tokens: u64,
    /// Output tokens, of the calls that report usage.
    pub output_tokens: u64,
    /// Milliseconds the calls took when they were recorded, summed.
    pub latency_ms: f64,
    /// Estimated US dollars, of the calls whose model has a `[pricing]` entry; `None` when none
    /// has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Calls that report usage of a model with no `[pricing]` entry (their cost is unknown).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unpriced_calls: u64,
    /// The agent's share (the code under test's calls), when the rubric judge made calls too;
    /// absent when every call is the agent's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<UsageShare>,
    /// The rubric judge's share (its calls whose verdicts the cases used, replayed or live);
    /// absent when it made none. The totals above count both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<UsageShare>,
}

/// One party's share of the model calls (the agent's or the rubric judge's): how many, their
/// tokens and their estimated cost.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UsageShare {
    /// Calls.
    pub calls: u64,
    /// Input tokens, of the calls that report usage.
    pub input_tokens: u64,
    /// Output tokens, of the calls that report usage.
    pub output_tokens: u64,
    /// Estimated US dollars, of the calls whose model has a `[pricing]` entry; `None` when none
    /// has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

impl UsageShare {
    /// Adds another share.
    pub fn add(&mut self, other: &UsageShare) {
        self.calls += other.calls;
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        if let Some(c) = other.cost_usd {
            *self.cost_usd.get_or_insert(0.0) += c;
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl UsageTotals {
    /// Adds one call of the agent's (the code under test's).
    pub fn add_call(
        &mut self,
        usage: Option<&Usage>,
        latency_ms: Option<f64>,
        pricing: &BTreeMap<String, Pricing>,
    ) {
        let mut one = UsageTotals::default();
        one.count(usage, latency_ms, pricing);
        self.add(&one);
    }

    /// Adds one call of the rubric judge's.
    pub fn add_judge_call(
        &mut self,
        usage: Option<&Usage>,
        latency_ms: Option<f64>,
        pricing: &BTreeMap<String, Pricing>,
    ) {
        let mut one = UsageTotals::default();
        one.count(usage, latency_ms, pricing);
        one.judge = Some(one.whole());
        one.agent = Some(UsageShare::default());
        self.add(&one);
    }

    /// Counts one call in the totals (no share).
    fn count(
        &mut self,
        usage: Option<&Usage>,
        latency_ms: Option<f64>,
        pricing: &BTreeMap<String, Pricing>,
    ) {
        self.calls += 1;
        self.latency_ms += latency_ms.unwrap_or(0.0);
        if let Some(usage) = usage {
            self.input_tokens += usage.input_tokens;
            self.output_tokens += usage.output_tokens;
            match cost(pricing, usage) {
                Some(c) => *self.cost_usd.get_or_insert(0.0) += c,
                None => self.unpriced_calls += 1,
            }
        }
    }

    /// The totals as one share.
    fn whole(&self) -> UsageShare {
        UsageShare {
            calls: self.calls,
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            cost_usd: self.cost_usd,
        }
    }

    /// The agent's share: [`UsageTotals::agent`], or every call when there is no split.
    pub fn agent_share(&self) -> UsageShare {
        match (&self.agent, &self.judge) {
            (Some(agent), _) => agent.clone(),
            (None, None) => self.whole(),
            // Only a hand-made value has a judge's share and no agent's.
            (None, Some(judge)) => UsageShare {
                calls: self.calls.saturating_sub(judge.calls),
                input_tokens: self.input_tokens.saturating_sub(judge.input_tokens),
                output_tokens: self.output_tokens.saturating_sub(judge.output_tokens),
                cost_usd: self
                    .cost_usd
                    .map(|c| (c - judge.cost_usd.unwrap_or(0.0)).max(0.0)),
            },
        }
    }

    /// The rubric judge's share: [`UsageTotals::judge`], or none.
    pub fn judge_share(&self) -> UsageShare {
        self.judge.clone().unwrap_or_default()
    }

    /// Adds another total (a case's to its suite's); the agent / judge split is kept when
    /// either has a judge's share.
    pub fn add(&mut self, other: &UsageTotals) {
        let split = (self.judge.is_some() || other.judge.is_some()).then(|| {
            let (mut agent, mut judge) = (self.agent_share(), self.judge_share());
            agent.add(&other.agent_share());
            judge.add(&other.judge_share());
            (agent, judge)
        });
        self.calls += other.calls;
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.latency_ms += other.latency_ms;
        self.unpriced_calls += other.unpriced_calls;
        if let Some(c) = other.cost_usd {
            *self.cost_usd.get_or_insert(0.0) += c;
        }
        if let Some((agent, judge)) = split {
            self.agent = Some(agent);
            self.judge = Some(judge);
        }
    }
}

/// One model call of a case, as its report entry lists it: what kind of call, the model, its
/// tokens, the time it took when recorded and its estimated cost.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallEntry {
    /// `complete` (`llm.complete`), `http` (a request through `llm.base_url()`) or `judge` (the
    /// rubric's judge).
    pub kind: String,
    /// The model that answered, when the response or the request names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Input tokens, when the response reports them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Output tokens, when the response reports them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// Milliseconds the call took when it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<f64>,
    /// Estimated US dollars, when the model has a `[pricing]` entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

impl CallEntry {
    /// The entry of one call of `kind` that used `usage` and took `latency_ms`, priced by
    /// `pricing`.
    pub fn new(
        kind: &str,
        usage: Option<&Usage>,
        latency_ms: Option<f64>,
        pricing: &BTreeMap<String, Pricing>,
    ) -> CallEntry {
        CallEntry {
            kind: kind.to_string(),
            model: usage.and_then(|u| u.model.clone()),
            input_tokens: usage.map(|u| u.input_tokens),
            output_tokens: usage.map(|u| u.output_tokens),
            latency_ms,
            cost_usd: usage.and_then(|u| cost(pricing, u)),
        }
    }
}

/// Milliseconds, kept to the microsecond (a recording stays readable and exact).
pub fn millis(elapsed: std::time::Duration) -> f64 {
    elapsed.as_micros() as f64 / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn usage_of_both_apis_and_of_streams() {
        let anthropic =
            json!({ "model": "claude-x", "usage": { "input_tokens": 7, "output_tokens": 9 } });
        assert_eq!(
            Usage::from_response(&anthropic),
            Some(Usage::new(7, 9).with_model("claude-x"))
        );
        // Anthropic's stream: input in message_start, output in message_delta.
        let stream = json!([
            { "event": "message_start", "data": { "type": "message_start", "message": { "model": "claude-x", "usage": { "input_tokens": 25, "output_tokens": 1 } } } },
            { "event": "content_block_delta", "data": { "delta": { "text": "hi" } } },
            { "event": "message_delta", "data": { "usage": { "output_tokens": 15 } } },
        ]);
        assert_eq!(
            Usage::from_response(&stream),
            Some(Usage::new(25, 15).with_model("claude-x"))
        );
        // OpenAI's stream: usage in the last chunk (stream_options.include_usage), then [DONE].
        let stream = json!([
            { "data": { "model": "gpt-4o-mini", "choices": [{ "delta": { "content": "a" } }], "usage": null } },
            { "data": { "model": "gpt-4o-mini", "choices": [], "usage": { "prompt_tokens": 3, "completion_tokens": 4 } } },
            { "text": "[DONE]" },
        ]);
        assert_eq!(
            Usage::from_response(&stream),
            Some(Usage::new(3, 4).with_model("gpt-4o-mini"))
        );
        assert_eq!(Usage::from_response(&json!([{ "text": "x" }])), None);
    }

    #[test]
    fn cost_by_exact_name_then_longest_prefix() {
        let pricing: BTreeMap<String, Pricing> = [
            ("gpt-4o".to_string(), (2.5, 10.0)),
            ("gpt-4o-mini".to_string(), (0.15, 0.6)),
        ]
        .into_iter()
        .map(|(k, (i, o))| {
            (
                k,
                Pricing {
                    input_per_mtok: i,
                    output_per_mtok: o,
                },
            )
        })
        .collect();
        let usage = |model: &str| Usage::new(1_000_000, 2_000_000).with_model(model);
        assert_eq!(cost(&pricing, &usage("gpt-4o")), Some(22.5));
        let mini = cost(&pricing, &usage("gpt-4o-mini-2024-07-18")).unwrap();
        assert!((mini - 1.35).abs() < 1e-9, "{mini}");
        assert_eq!(cost(&pricing, &usage("claude")), None);
        assert_eq!(cost(&pricing, &Usage::new(1, 1)), None);

        let mut totals = UsageTotals::default();
        totals.add_call(Some(&usage("gpt-4o")), Some(1.5), &pricing);
        totals.add_call(Some(&usage("other")), None, &pricing);
        totals.add_call(None, Some(2.0), &pricing);
        assert_eq!(
            (totals.calls, totals.input_tokens, totals.unpriced_calls),
            (3, 2_000_000, 1)
        );
        assert_eq!((totals.latency_ms, totals.cost_usd), (3.5, Some(22.5)));
    }

    #[test]
    fn a_price_is_a_finite_non_negative_number() {
        let parse = |t: &str| crate::toml_read::from_str::<Pricing>(t).map_err(|e| e.to_string());
        assert!(parse("input_per_mtok = 0.15\noutput_per_mtok = 0.6").is_ok());
        let err = parse("input_per_mtok = -1\noutput_per_mtok = 0.6").unwrap_err();
        assert!(err.contains("-1 is not a price"), "{err}");
        let err = parse("input_per_mtok = 1").unwrap_err();
        assert!(err.contains("output_per_mtok"), "{err}");
    }
}
