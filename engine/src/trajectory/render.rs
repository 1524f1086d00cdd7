//! A trajectory verdict as a person reads it: the summary, each step with its call or the
//! closest one and its argument mismatches, the calls that are not allowed, the counts out of
//! bounds, and the calls, those of one response together.

use super::align::{ForbiddenCall, TrajectoryVerdict};
use super::config::Mode;
use super::extract::{groups, ToolCall};
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
    /// every forbidden call, the counts out of bounds; then the calls themselves. Uncoloured.
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
            if let Some(p) = step.in_its_place {
                let _ = write!(out, " (call #{} in its place is {})", p + 1, calls[p].tool);
            }
            match &step.closest {
                Some(closest) if closest.mismatches.is_empty() => {
                    let why = match self.mode {
                        Mode::Exact => "not at this step's place",
                        Mode::InOrder => "out of order",
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
                    let _ = writeln!(out, "; {}", self.no_call(&step.tool));
                }
            }
        }
        for &j in &self.unexpected {
            let _ = writeln!(
                out,
                "  {}: unexpected call, {}",
                call_name(calls, j),
                self.why_unexpected(calls, j)
            );
        }
        for f in &self.forbidden {
            let _ = writeln!(out, "  {}", forbidden_line(calls, f));
        }
        for line in self.count_lines() {
            let _ = writeln!(out, "  {line}");
        }
        out.push_str(&trajectory_text(calls));
        out
    }

    /// What an unmatched step with no call of its tool says: in `subset` and `allowed` a step
    /// need not be called.
    fn no_call(&self, tool: &str) -> String {
        match self.mode {
            Mode::Subset | Mode::Allowed => {
                format!(
                    "no call of {tool} ({}: a step need not be called)",
                    self.mode
                )
            }
            _ => format!("no call of {tool}"),
        }
    }

    /// Why call `j` is not allowed by the mode.
    fn why_unexpected(&self, calls: &[ToolCall], j: usize) -> String {
        match self.mode {
            Mode::Exact => "past the last step (exact: the calls are the steps)".into(),
            Mode::Allowed => "matches no step (allowed: only the steps' calls)".into(),
            _ => match self.taken.iter().find(|t| t.call == j) {
                Some(t) => format!(
                    "matches step {} {}, which {} took (subset: a step matches one call; mode \"allowed\" lets it match any number)",
                    t.step + 1,
                    self.steps[t.step].tool,
                    call_name(calls, t.by)
                ),
                None => "matches no step (subset: no tool outside the steps)".into(),
            },
        }
    }

    /// The call counts out of bounds, one line each.
    fn count_lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(min) = self.under_min_calls {
            out.push(format!(
                "{} calls, fewer than min_calls = {min}",
                self.calls
            ));
        }
        if let Some(max) = self.over_max_calls {
            out.push(format!("{} calls, more than max_calls = {max}", self.calls));
        }
        out.extend(self.counts.iter().map(|c| c.describe()));
        out
    }
}

/// `#1 delete_order: forbidden tool`, or for an entry with arguments or a glob, the entry.
fn forbidden_line(calls: &[ToolCall], f: &ForbiddenCall) -> String {
    if f.rule == calls[f.call].tool {
        format!("{}: forbidden tool", call_name(calls, f.call))
    } else {
        format!(
            "{}: forbidden call (forbidden {}: {})",
            call_name(calls, f.call),
            f.entry + 1,
            f.rule
        )
    }
}

/// The calls, one a line: `#1 inventory_lookup {"sku":"SKU-123"}` under `calls:` (`calls: none`
/// when the model asked for no tool). The calls one response asked for together stand under
/// `in parallel (model call N):`, a step further in: their order means nothing.
pub fn trajectory_text(calls: &[ToolCall]) -> String {
    if calls.is_empty() {
        return "calls: none\n".into();
    }
    let mut out = String::from("calls:\n");
    for group in groups(calls) {
        let indent = if group.len() > 1 {
            let response = calls[group.start].response.unwrap_or_default();
            let _ = writeln!(out, "  in parallel (model call {}):", response + 1);
            "    "
        } else {
            "  "
        };
        for j in group {
            let _ = writeln!(
                out,
                "{indent}{} {}",
                call_name(calls, j),
                compact(&calls[j].args, 200)
            );
        }
    }
    out
}

impl TrajectoryVerdict {
    /// What went wrong, one line each, for reports: every unmatched step that the mode needs
    /// (and each argument mismatch of its closest call, at its pasteable path), every call the
    /// mode does not allow, every forbidden call, the counts out of bounds. Empty when nothing
    /// did: a `subset` or `allowed` case whose steps were not all called lists nothing for them.
    pub fn misses(&self, calls: &[ToolCall]) -> Vec<String> {
        let mut out = Vec::new();
        let steps_needed = !matches!(self.mode, Mode::Subset | Mode::Allowed);
        for (i, step) in self.steps.iter().enumerate() {
            if step.matched.is_some() || !steps_needed {
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
                    "step {} {}: no match; {}",
                    i + 1,
                    step.tool,
                    self.no_call(&step.tool)
                )),
            }
        }
        for &j in &self.unexpected {
            out.push(match self.taken.iter().find(|t| t.call == j) {
                Some(t) => format!(
                    "{}: unexpected call, step {} {} already taken by {}",
                    call_name(calls, j),
                    t.step + 1,
                    self.steps[t.step].tool,
                    call_name(calls, t.by)
                ),
                None => format!("{}: unexpected call", call_name(calls, j)),
            });
        }
        out.extend(self.forbidden.iter().map(|f| forbidden_line(calls, f)));
        out.extend(self.count_lines());
        out
    }
}
