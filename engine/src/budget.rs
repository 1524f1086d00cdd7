//! A case's budget (the `budget` evaluator): what its agent calls may cost, in dollars, tokens,
//! calls and time, against what they cost as recorded.
//!
//! A fixture's `budget` and a suite's `[budget]` hold the same four limits; the fixture's keys
//! replace the suite's one by one ([`Budget::over`]). [`evaluate`] checks each limit set against
//! a [`Spent`]: the case's calls to the model under test (a rubric judge's calls are not the
//! agent's, and are not counted), with the latency and the usage the recording holds, so a
//! replay decides as the recording run did. Score = limits kept / limits set; the verdict passes
//! when every limit is kept. A cost limit on calls whose cost is unknown (a model with no
//! `[pricing]` entry) fails, saying so: an unknown cost is not under any limit.
//!
//! ```
//! use proposal_eval_engine::budget::{evaluate, Budget, Spent};
//! let budget: Budget = serde_json::from_str(r#"{"max_calls": 2, "max_tokens": 1000}"#).unwrap();
//! let spent = Spent { calls: 3, input_tokens: 600, output_tokens: 100, ..Spent::default() };
//! let verdict = evaluate(&budget, &spent);
//! assert_eq!(verdict.score, 0.5);
//! assert_eq!(verdict.misses, ["calls: 3, over max_calls = 2"]);
//! ```

use serde::Deserialize;

/// The limits of one case's agent calls; an absent limit is not checked.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    /// US dollars, at the suite's `[pricing]`.
    #[serde(default, deserialize_with = "amount")]
    pub max_cost_usd: Option<f64>,
    /// Input and output tokens together, as the responses report them.
    #[serde(default)]
    pub max_tokens: Option<u64>,
    /// Model calls.
    #[serde(default)]
    pub max_calls: Option<u64>,
    /// Milliseconds the calls took when recorded, summed.
    #[serde(default, deserialize_with = "amount")]
    pub max_latency_ms: Option<f64>,
}

/// A limit in dollars or milliseconds: 0 or more; `null` (as the schema allows) is no limit.
fn amount<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    let Some(value) = Option::<f64>::deserialize(d)? else {
        return Ok(None);
    };
    if value.is_finite() && value >= 0.0 {
        Ok(Some(value))
    } else {
        Err(serde::de::Error::custom(format!(
            "{value} is not a limit: write a number, 0 or more"
        )))
    }
}

impl Budget {
    /// Whether no limit is set.
    pub fn is_empty(&self) -> bool {
        self == &Budget::default()
    }

    /// This budget's limits, with `base`'s where this one sets none: a fixture's `budget` over
    /// its suite's `[budget]`.
    pub fn over(&self, base: &Budget) -> Budget {
        Budget {
            max_cost_usd: self.max_cost_usd.or(base.max_cost_usd),
            max_tokens: self.max_tokens.or(base.max_tokens),
            max_calls: self.max_calls.or(base.max_calls),
            max_latency_ms: self.max_latency_ms.or(base.max_latency_ms),
        }
    }
}

/// What a case's agent calls used.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Spent {
    /// Model calls.
    pub calls: u64,
    /// Input tokens, of the calls that report usage.
    pub input_tokens: u64,
    /// Output tokens, of the calls that report usage.
    pub output_tokens: u64,
    /// Milliseconds the calls took when recorded, summed.
    pub latency_ms: f64,
    /// US dollars of the priced calls; `None` when none is priced.
    pub cost_usd: Option<f64>,
    /// Calls that report usage of a model with no price: their cost is unknown.
    pub unpriced_calls: u64,
}

/// What [`evaluate`] decided.
#[derive(Clone, Debug, PartialEq)]
pub struct BudgetVerdict {
    /// Limits kept / limits set (1 with none set).
    pub score: f64,
    /// Whether every limit set is kept.
    pub passed: bool,
    /// One line: `2 of 3 limits kept: 3 calls, 700 tokens, $0.000150, 12.5 ms`.
    pub summary: String,
    /// One line per limit broken: `cost: $0.0123, over max_cost_usd = 0.01`.
    pub misses: Vec<String>,
}

impl BudgetVerdict {
    /// The summary, then each limit broken, indented.
    pub fn render(&self) -> String {
        let mut out = format!("{}\n", self.summary);
        for miss in &self.misses {
            out.push_str("  ");
            out.push_str(miss);
            out.push('\n');
        }
        out
    }
}

/// Checks each limit of `budget` against `spent`.
pub fn evaluate(budget: &Budget, spent: &Spent) -> BudgetVerdict {
    let mut set = 0;
    let mut misses = Vec::new();
    let tokens = spent.input_tokens + spent.output_tokens;
    if let Some(max) = budget.max_cost_usd {
        set += 1;
        let unpriced = match spent.unpriced_calls {
            0 => None,
            n => Some(format!(
                "{n} call(s) of a model with no [pricing] entry: their cost is unknown, so max_cost_usd = {max} cannot be checked; add the model to [pricing]"
            )),
        };
        match (spent.cost_usd, unpriced) {
            (Some(cost), _) if cost > max => misses.push(format!(
                "cost: {}, over max_cost_usd = {max}",
                dollars(cost)
            )),
            (_, Some(why)) => misses.push(format!("cost: {why}")),
            _ => {}
        }
    }
    if let Some(max) = budget.max_tokens {
        set += 1;
        if tokens > max {
            misses.push(format!(
                "tokens: {tokens} ({} in, {} out), over max_tokens = {max}",
                spent.input_tokens, spent.output_tokens
            ));
        }
    }
    if let Some(max) = budget.max_calls {
        set += 1;
        if spent.calls > max {
            misses.push(format!("calls: {}, over max_calls = {max}", spent.calls));
        }
    }
    if let Some(max) = budget.max_latency_ms {
        set += 1;
        if spent.latency_ms > max {
            misses.push(format!(
                "latency: {} ms (the calls' recorded times, summed), over max_latency_ms = {max}",
                round(spent.latency_ms)
            ));
        }
    }
    let kept = set - misses.len();
    let score = if set == 0 {
        1.0
    } else {
        kept as f64 / set as f64
    };
    let cost = spent.cost_usd.map(dollars).unwrap_or_else(|| "$?".into());
    BudgetVerdict {
        score,
        passed: misses.is_empty(),
        summary: format!(
            "{kept} of {set} limits kept: {} call(s), {tokens} tokens, {cost}, {} ms",
            spent.calls,
            round(spent.latency_ms)
        ),
        misses,
    }
}

/// Dollars to six decimals (a call of a small model costs a fraction of a cent).
fn dollars(amount: f64) -> String {
    format!("${amount:.6}")
}

/// Milliseconds to a tenth.
fn round(ms: f64) -> f64 {
    (ms * 10.0).round() / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(json: &str) -> Budget {
        serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn each_limit_kept_and_broken() {
        let all = budget(
            r#"{"max_cost_usd": 0.01, "max_tokens": 1000, "max_calls": 3, "max_latency_ms": 500}"#,
        );
        let within = Spent {
            calls: 3,
            input_tokens: 900,
            output_tokens: 100,
            latency_ms: 500.0,
            cost_usd: Some(0.01),
            unpriced_calls: 0,
        };
        let verdict = evaluate(&all, &within);
        assert!(verdict.passed && verdict.misses.is_empty());
        assert_eq!(verdict.score, 1.0);
        assert_eq!(
            verdict.summary,
            "4 of 4 limits kept: 3 call(s), 1000 tokens, $0.010000, 500 ms"
        );
        let over = Spent {
            calls: 4,
            input_tokens: 901,
            output_tokens: 100,
            latency_ms: 500.04,
            cost_usd: Some(0.0123),
            unpriced_calls: 0,
        };
        let verdict = evaluate(&all, &over);
        assert_eq!(verdict.score, 0.0);
        assert_eq!(
            verdict.render(),
            "0 of 4 limits kept: 4 call(s), 1001 tokens, $0.012300, 500 ms
  cost: $0.012300, over max_cost_usd = 0.01
  tokens: 1001 (901 in, 100 out), over max_tokens = 1000
  calls: 4, over max_calls = 3
  latency: 500 ms (the calls' recorded times, summed), over max_latency_ms = 500
"
        );
    }

    #[test]
    fn an_unknown_cost_is_not_under_a_limit() {
        let limit = budget(r#"{"max_cost_usd": 1}"#);
        let spent = Spent {
            calls: 2,
            cost_usd: Some(0.001),
            unpriced_calls: 1,
            ..Spent::default()
        };
        let verdict = evaluate(&limit, &spent);
        assert!(!verdict.passed);
        assert_eq!(
            verdict.misses,
            ["cost: 1 call(s) of a model with no [pricing] entry: their cost is unknown, so max_cost_usd = 1 cannot be checked; add the model to [pricing]"]
        );
        // Calls that report no usage cost nothing known: no call is unpriced.
        let silent = Spent {
            calls: 2,
            ..Spent::default()
        };
        assert!(evaluate(&limit, &silent).passed);
    }

    #[test]
    fn no_limit_scores_one_and_a_fixtures_keys_replace_the_suites() {
        let verdict = evaluate(&Budget::default(), &Spent::default());
        assert!(verdict.passed);
        assert_eq!(verdict.score, 1.0);
        let suite = budget(r#"{"max_calls": 5, "max_tokens": 100}"#);
        let case = budget(r#"{"max_calls": 1}"#);
        assert_eq!(
            case.over(&suite),
            budget(r#"{"max_calls": 1, "max_tokens": 100}"#)
        );
        assert!(Budget::default().is_empty() && !case.is_empty());
    }

    #[test]
    fn a_budget_of_the_wrong_type_is_an_error_naming_it() {
        let err = |json: &str| {
            serde_json::from_str::<Budget>(json)
                .unwrap_err()
                .to_string()
        };
        assert!(
            err(r#"{"max_calls": "5"}"#).starts_with("invalid type: string \"5\", expected u64")
        );
        assert!(err(r#"{"max_calls": -1}"#).starts_with("invalid value: integer `-1`"));
        assert!(err(r#"{"max_cost_usd": -0.5}"#)
            .starts_with("-0.5 is not a limit: write a number, 0 or more"));
        assert_eq!(
            serde_json::from_str::<Budget>(r#"{"max_cost_usd": null, "max_calls": null}"#).unwrap(),
            Budget::default()
        );
        assert!(err(r#"{"max_cost": 1}"#)
            .starts_with("unknown field `max_cost`, expected one of `max_cost_usd`"));
        let toml_err = toml::from_str::<Budget>("max_latency_ms = \"fast\"\n").unwrap_err();
        assert!(toml_err.message().contains("invalid type"), "{toml_err}");
    }
}
