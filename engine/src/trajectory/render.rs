//! A trajectory verdict as a person reads it: the summary, each step with its call or the
//! closest one and its argument mismatches, the calls that are not allowed, and the calls.

use super::align::TrajectoryVerdict;
use super::extract::ToolCall;
use crate::render::compact;
use std::fmt::Write as _;

/// How a call is named in the alignment: `#3 recommend` (calls count from 1, in the order the
/// model asked for them).
fn call_name(calls: &[ToolCall], j: usize) -> String {
    format!("#{} {}", j + 1, calls[j].tool)
}

impl TrajectoryVerdict {
    /// The alignment, one line each: every step (`step 2 recommend: #3 recommend`, or no match
    /// and the closest call with its argument mismatches), every call the mode does not allow,
    /// every forbidden call, the count overrun; then the calls themselves. Uncoloured.
    ///
    /// ```
    /// use proposal_eval_engine::trajectory::{evaluate, ExpectedTrajectory, Step, ToolCall, TrajectoryConfig};
    /// use serde_json::json;
    /// let expected = ExpectedTrajectory {
    ///     steps: vec![Step::tool("inventory_lookup"), Step::with_args("recommend", json!({"price": 899}))],
    ///     ..Default::default()
    /// };
    /// let calls = vec![ToolCall::new("recommend", json!({"price": 950})), ToolCall::new("inventory_lookup", json!({}))];
    /// let verdict = evaluate(&expected, &calls, &TrajectoryConfig::new());
    /// assert_eq!(verdict.render(&calls), "\
    /// in_order: 1 of 2 steps matched in order, score 0.50
    ///   step 1 inventory_lookup: #2 inventory_lookup
    ///   step 2 recommend: no match; closest #1 recommend:
    ///     recommend.price: values differ: expected 899, actual 950
    /// calls:
    ///   #1 recommend {\"price\":950}
    ///   #2 inventory_lookup {}
    /// ");
    /// ```
    pub fn render(&self, calls: &[ToolCall]) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{}", self.summary);
        for (i, step) in self.steps.iter().enumerate() {
            let _ = write!(out, "  step {} {}: ", i + 1, step.tool);
            if let Some(j) = step.matched {
                let _ = writeln!(out, "{}", call_name(calls, j));
                continue;
            }
            out.push_str("no match");
            if let Some(other) = &step.in_its_place {
                let _ = write!(out, " (call #{} in its place is {other})", i + 1);
            }
            match &step.closest {
                Some(closest) if closest.mismatches.is_empty() => {
                    let why = match self.mode {
                        super::Mode::Exact => "not at this step's place",
                        super::Mode::InOrder => "out of order",
                        _ => "taken by another step",
                    };
                    let _ = writeln!(
                        out,
                        "; {} has these arguments but is {why}",
                        call_name(calls, closest.call)
                    );
                }
                Some(closest) => {
                    let _ = writeln!(out, "; closest {}:", call_name(calls, closest.call));
                    for m in &closest.mismatches {
                        let _ = writeln!(out, "    {m}");
                    }
                }
                None => {
                    let _ = writeln!(out, "; no call of {}", step.tool);
                }
            }
        }
        for &j in &self.unexpected {
            let why = match self.mode {
                super::Mode::Exact => "past the last step (exact: the calls are the steps)",
                _ => "matches no step (subset: no tool outside the steps)",
            };
            let _ = writeln!(out, "  {}: unexpected call, {why}", call_name(calls, j));
        }
        for &j in &self.forbidden {
            let _ = writeln!(out, "  {}: forbidden tool", call_name(calls, j));
        }
        if let Some(max) = self.over_max_calls {
            let _ = writeln!(out, "  {} calls, more than max_calls = {max}", self.calls);
        }
        out.push_str(&trajectory_text(calls));
        out
    }
}

/// The calls, one a line: `#1 inventory_lookup {"sku":"SKU-123"}` under `calls:` (`calls: none`
/// when the model asked for no tool).
pub fn trajectory_text(calls: &[ToolCall]) -> String {
    if calls.is_empty() {
        return "calls: none\n".into();
    }
    let mut out = String::from("calls:\n");
    for (j, call) in calls.iter().enumerate() {
        let _ = writeln!(
            out,
            "  {} {}",
            call_name(calls, j),
            compact(&call.args, 200)
        );
    }
    out
}

impl TrajectoryVerdict {
    /// What went wrong, one line each, for reports: every unmatched step (and each argument
    /// mismatch of its closest call, at its pasteable path), every call the mode does not
    /// allow, every forbidden call, the count overrun. Empty when nothing did.
    pub fn misses(&self, calls: &[ToolCall]) -> Vec<String> {
        let mut out = Vec::new();
        for (i, step) in self.steps.iter().enumerate() {
            if step.matched.is_some() {
                continue;
            }
            match &step.closest {
                Some(c) => {
                    out.push(format!(
                        "step {} {}: no match; closest {}",
                        i + 1,
                        step.tool,
                        call_name(calls, c.call)
                    ));
                    out.extend(c.mismatches.iter().map(|m| m.to_string()));
                }
                None => out.push(format!(
                    "step {} {}: no match; no call of {}",
                    i + 1,
                    step.tool,
                    step.tool
                )),
            }
        }
        for &j in &self.unexpected {
            out.push(format!("{}: unexpected call", call_name(calls, j)));
        }
        for &j in &self.forbidden {
            out.push(format!("{}: forbidden tool", call_name(calls, j)));
        }
        if let Some(max) = self.over_max_calls {
            out.push(format!("{} calls, more than max_calls = {max}", self.calls));
        }
        out
    }
}
