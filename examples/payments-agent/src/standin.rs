//! The local stand-in for a language model: a handful of keyword rules over the customer's
//! message, answering in the shape `prompts/output-format.md` asks for.
//!
//! It is deterministic in what it proposes and, like a real model's API, stamps volatile values
//! (a response id, `createdAt`, a model-side request id) that differ on every call. It is here so
//! that recording works without a key; a real project puts its model client in its place.

use chrono::{SecondsFormat, Utc};
use proposal_eval::{Model, ModelError};
use serde_json::{json, Value};
use std::time::Duration;

/// The rule-based stand-in model. Build it with [`crate::live_model`].
#[derive(Clone, Debug, Default)]
pub struct StandInModel {
    pub(crate) delay: Option<Duration>,
    /// The stand-in's next version (`PAYMENTS_AGENT_MODEL_VERSION=2`): it names itself
    /// [`UPGRADED_NAME`] and rounds the amounts customers write with decimals to whole units,
    /// so a re-record under it changes every response and some verdicts.
    pub(crate) upgraded: bool,
}

/// What the upgraded stand-in calls itself in its responses.
pub const UPGRADED_NAME: &str = "payments-standin-2";

impl Model for StandInModel {
    fn complete(&self, request: &Value) -> Result<Value, ModelError> {
        let mut response = self.answer(request)?;
        if self.upgraded {
            response["model"] = json!(UPGRADED_NAME);
            for proposal in response["proposals"].as_array_mut().into_iter().flatten() {
                if proposal["changedField"] == "payment.amount" {
                    if let Some(text) = proposal["newValue"].as_str() {
                        let whole = text.parse::<f64>().map(f64::round).unwrap_or_default();
                        proposal["newValue"] = number(whole);
                    }
                }
            }
        }
        Ok(response)
    }
}

impl StandInModel {
    fn answer(&self, request: &Value) -> Result<Value, ModelError> {
        if let Some(delay) = self.delay {
            std::thread::sleep(delay);
        }
        let context = Context::read(request)?;
        let messages = request["messages"].as_array().cloned().unwrap_or_default();
        let message = messages
            .iter()
            .find(|m| m["role"] == "user")
            .and_then(|m| m["content"].as_str())
            .ok_or_else(|| ModelError::new("the request has no user message"))?;
        let payment = messages
            .iter()
            .find(|m| m["role"] == "tool" && m["name"] == "get_payment")
            .map(|m| m["content"].clone());

        let mut proposals = Vec::new();
        let mut asked_nothing = false;
        for clause in clauses(message) {
            match intent(&clause) {
                Intent::Nothing => asked_nothing = true,
                Intent::Relative if payment.is_none() => {
                    return Ok(json!({
                        "id": volatile_id("resp"),
                        "model": crate::MODEL_NAME,
                        "tool_call": {
                            "name": "get_payment",
                            "arguments": { "paymentId": context.payment_id },
                        },
                    }));
                }
                intent => proposals.extend(propose(intent, &clause, &context, payment.as_ref())),
            }
        }
        if proposals.is_empty() && !asked_nothing {
            proposals.push(json!({
                "changeType": "clarification",
                "question": "Which detail should change:\n  the amount, the currency,  the IBAN or your address?",
                "missingFields": ["changedField"],
            }));
        }
        Ok(json!({ "id": volatile_id("resp"), "model": crate::MODEL_NAME, "proposals": proposals }))
    }
}

struct Context {
    today: String,
    user_id: Value,
    payment_id: Value,
    currency: String,
}

impl Context {
    fn read(request: &Value) -> Result<Context, ModelError> {
        let c = &request["context"];
        Ok(Context {
            today: c["today"]
                .as_str()
                .ok_or_else(|| ModelError::new("the request's context has no `today`"))?
                .to_string(),
            user_id: c["userId"].clone(),
            payment_id: c["paymentId"].clone(),
            currency: c["currency"].as_str().unwrap_or("EUR").to_string(),
        })
    }

    fn midnight(&self, date: Option<String>) -> String {
        format!("{}T00:00:00Z", date.unwrap_or_else(|| self.today.clone()))
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Intent {
    Cancel,
    Iban,
    Address,
    Plan,
    Relative,
    Currency,
    Amount,
    Nothing,
    Unclear,
}

/// The message cut into the requests it holds: "A and B; C" is three.
fn clauses(message: &str) -> Vec<String> {
    message
        .split(';')
        .flat_map(|part| part.split(" and "))
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty())
        .collect()
}

fn intent(clause: &str) -> Intent {
    let lower = clause.to_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| lower.contains(w));
    if has(&["cancel", "stop my"]) {
        Intent::Cancel
    } else if has(&["iban"]) || iban(clause).is_some() {
        Intent::Iban
    } else if has(&["address", "moved to"]) {
        Intent::Address
    } else if has(&["payment plan", "installment"]) {
        Intent::Plan
    } else if lower.contains('%') || has(&["double", "halve"]) {
        Intent::Relative
    } else if numbers(clause).is_empty() && (has(&["currency"]) || currency_code(clause).is_some())
    {
        Intent::Currency
    } else if !numbers(clause).is_empty() && has(&["pay", "amount", "eur", "usd", "gbp", "chf"]) {
        Intent::Amount
    } else if has(&["thank", "hello", "that's all"]) {
        Intent::Nothing
    } else {
        Intent::Unclear
    }
}

fn propose(intent: Intent, clause: &str, ctx: &Context, payment: Option<&Value>) -> Option<Value> {
    let lower = clause.to_lowercase();
    let date = iso_date(clause);
    Some(match intent {
        Intent::Cancel => json!({
            "changeType": "cancellation",
            "paymentId": ctx.payment_id,
            "reason": "customer request",
            "state": "PENDING",
            "mutationQuery": {
                "operation": "cancelPayment",
                "variables": { "paymentId": ctx.payment_id, "metadata": metadata() },
            },
        }),
        Intent::Iban => {
            let iban = iban(clause)?;
            change(
                ctx,
                "payment.iban",
                json!(iban.to_uppercase()),
                None,
                json!({ "iban": iban, "effectiveDate": ctx.midnight(date) }),
                "PENDING",
            )
        }
        Intent::Address => {
            let typed = after_to(clause)?;
            let collapsed = typed.split_whitespace().collect::<Vec<_>>().join(" ");
            let mut proposal = change(
                ctx,
                "user.address",
                json!(collapsed),
                None,
                json!({ "address": typed }),
                "PENDING",
            );
            proposal["mutationQuery"]["operation"] = json!("updateUser");
            let variables = &mut proposal["mutationQuery"]["variables"];
            variables.as_object_mut()?.remove("paymentId");
            variables["userId"] = ctx.user_id.clone();
            proposal
        }
        Intent::Plan => {
            let found = numbers(clause);
            let count = found
                .iter()
                .find(|n| n.next_word.starts_with("install") || n.next_word.starts_with("month"))?
                .value;
            let total = found
                .iter()
                .find(|n| n.value != count || found.len() == 1)?
                .value;
            json!({
                "changeType": "creation",
                "entity": "paymentPlan",
                "relatedUserId": ctx.user_id,
                "mutationQuery": {
                    "operation": "createPaymentPlan",
                    "variables": {
                        "userId": ctx.user_id,
                        "data": {
                            "totalAmount": number(total),
                            "currency": currency_code(clause).unwrap_or_else(|| ctx.currency.clone()),
                            "installments": number(count),
                            "installmentAmount": number(round2(total / count)),
                            "startDate": ctx.midnight(date),
                        },
                        "metadata": metadata(),
                    },
                },
            })
        }
        Intent::Relative => {
            let payment = payment?;
            let current = payment["amount"].as_f64()?;
            let new = if lower.contains("double") {
                current * 2.0
            } else if lower.contains("halve") {
                current / 2.0
            } else {
                let percent = clause.split_whitespace().find_map(|t| {
                    t.trim_end_matches(['.', ',', '!'])
                        .strip_suffix('%')?
                        .parse::<f64>()
                        .ok()
                })?;
                let sign = if ["reduce", "lower", "decrease", "cut"]
                    .iter()
                    .any(|w| lower.contains(w))
                {
                    -1.0
                } else {
                    1.0
                };
                current * (1.0 + sign * percent / 100.0)
            };
            let new = round2(new);
            let currency = payment["currency"]
                .as_str()
                .unwrap_or(&ctx.currency)
                .to_string();
            change(
                ctx,
                "payment.amount",
                number(new),
                Some(payment["amount"].clone()),
                json!({ "amount": number(new), "currency": currency, "effectiveDate": ctx.midnight(date) }),
                state(new),
            )
        }
        Intent::Currency => {
            let code = currency_code(clause)?;
            change(
                ctx,
                "payment.currency",
                json!(code),
                None,
                json!({ "currency": code, "effectiveDate": ctx.midnight(date) }),
                "PENDING",
            )
        }
        Intent::Amount => {
            let amount = numbers(clause).into_iter().next()?;
            // Like many models, this one quotes amounts the customer wrote with decimals.
            let new_value = if amount.text.contains('.') {
                json!(format!("{:.2}", amount.value))
            } else {
                number(amount.value)
            };
            let currency = currency_code(clause).unwrap_or_else(|| ctx.currency.clone());
            change(
                ctx,
                "payment.amount",
                new_value,
                None,
                json!({ "amount": number(amount.value), "currency": currency, "effectiveDate": ctx.midnight(date) }),
                state(amount.value),
            )
        }
        Intent::Nothing | Intent::Unclear => return None,
    })
}

fn change(
    ctx: &Context,
    field: &str,
    new_value: Value,
    old_value: Option<Value>,
    data: Value,
    state: &str,
) -> Value {
    let mut proposal = json!({
        "changeType": "change",
        "changedField": field,
        "newValue": new_value,
        "state": state,
        "relatedUserId": ctx.user_id,
        "mutationQuery": {
            "operation": "updatePayment",
            "variables": { "paymentId": ctx.payment_id, "data": data, "metadata": metadata() },
        },
    });
    if let Some(old) = old_value {
        proposal["oldValue"] = old;
    }
    proposal
}

fn state(amount: f64) -> &'static str {
    if amount > 10_000.0 {
        "REVIEW_REQUIRED"
    } else {
        "PENDING"
    }
}

/// What a model API stamps on its output: new on every call.
fn metadata() -> Value {
    json!({
        "source": "payments-agent",
        "requestId": volatile_id("mrq"),
        "createdAt": Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true),
    })
}

fn volatile_id(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("{prefix}-{nanos:x}")
}

struct Number {
    text: String,
    value: f64,
    /// The word after the number, lowercase: "installments" in "6 installments".
    next_word: String,
}

/// The numbers of a clause, leaving out dates, IBANs and percentages.
fn numbers(clause: &str) -> Vec<Number> {
    let tokens: Vec<&str> = clause.split_whitespace().collect();
    let mut found = Vec::new();
    for (i, token) in tokens.iter().enumerate() {
        let text = token
            .trim_end_matches(['.', ',', '!', '?'])
            .trim_start_matches(['€', '$', '£']);
        if text.contains('-') || text.ends_with('%') || text.len() > 12 {
            continue;
        }
        if let Ok(value) = text.replace(',', "").parse::<f64>() {
            let next = tokens
                .get(i + 1)
                .map(|t| t.to_lowercase())
                .unwrap_or_default();
            found.push(Number {
                text: text.to_string(),
                value,
                next_word: next,
            });
        }
    }
    found
}

fn currency_code(clause: &str) -> Option<String> {
    clause.split_whitespace().find_map(|token| {
        let t = token.trim_end_matches(['.', ',', '!', '?']).to_uppercase();
        ["EUR", "USD", "GBP", "CHF"]
            .contains(&t.as_str())
            .then_some(t)
    })
}

/// An IBAN as the customer typed it: two letters, two digits, then at least 11 letters or digits.
fn iban(clause: &str) -> Option<String> {
    clause.split_whitespace().find_map(|token| {
        let t = token.trim_end_matches(['.', ',', '!', '?']);
        let b = t.as_bytes();
        let ok = t.len() >= 15
            && b[..2].iter().all(u8::is_ascii_alphabetic)
            && b[2..4].iter().all(u8::is_ascii_digit)
            && b.iter().all(u8::is_ascii_alphanumeric);
        ok.then(|| t.to_string())
    })
}

/// A `YYYY-MM-DD` date in the clause.
fn iso_date(clause: &str) -> Option<String> {
    clause.split_whitespace().find_map(|token| {
        let t = token.trim_end_matches(['.', ',', '!', '?']);
        chrono::NaiveDate::parse_from_str(t, "%Y-%m-%d")
            .ok()
            .map(|_| t.to_string())
    })
}

/// What follows the first " to " of the clause, without a final full stop: an address.
fn after_to(clause: &str) -> Option<String> {
    let (_, rest) = clause.split_once(" to ")?;
    Some(rest.trim().trim_end_matches(['.', '!']).to_string())
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Whole numbers as JSON integers, the rest as floats.
fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        json!(x as i64)
    } else {
        json!(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intents() {
        assert_eq!(
            intent("Please change my payment to 120 EUR"),
            Intent::Amount
        );
        assert_eq!(intent("Increase my payment by 10%"), Intent::Relative);
        assert_eq!(
            intent("Set up a payment plan for 1200 EUR in 6 installments"),
            Intent::Plan
        );
        assert_eq!(intent("switch my currency to GBP"), Intent::Currency);
        assert_eq!(
            intent("My new IBAN is de89370400440532013000"),
            Intent::Iban
        );
        assert_eq!(intent("I moved to 5 Elm Street"), Intent::Address);
        assert_eq!(intent("Please cancel my standing payment"), Intent::Cancel);
        assert_eq!(intent("Thanks, that's all!"), Intent::Nothing);
        assert_eq!(intent("Can you fix my account?"), Intent::Unclear);
    }
}
