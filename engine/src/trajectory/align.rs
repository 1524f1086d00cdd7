//! Laying the expected steps over the calls: the four modes, the score, and for every step the
//! call it matched or the closest call of its tool.

use super::args::{compare, ArgMismatch, Probe};
use super::config::{ExpectedTrajectory, Mode, Step, TrajectoryConfig};
use super::extract::ToolCall;
use crate::assignment::assign_by;

/// A rounding error this small is forgiven when the score is held against the threshold.
const EPSILON: f64 = 1e-9;

/// The trajectory evaluator's verdict: the score, and the alignment that explains it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct TrajectoryVerdict {
    /// The mode the steps were laid over the calls in.
    pub mode: Mode,
    /// 0 to 1, as the mode counts (see the [module docs](super)).
    pub score: f64,
    /// Whether the score reached the threshold.
    pub passed: bool,
    /// The threshold it was held against.
    pub threshold: f64,
    /// Every step, in the fixture's order, with its call or the closest one.
    pub steps: Vec<StepOutcome>,
    /// How many calls there were.
    pub calls: usize,
    /// Calls that the mode does not allow (`exact`: a call past the steps; `subset`: a call
    /// matching no step), by index.
    pub unexpected: Vec<usize>,
    /// Calls of a `forbidden` tool, by index.
    pub forbidden: Vec<usize>,
    /// `max_calls`, when there were more calls.
    pub over_max_calls: Option<usize>,
    /// One line: why this score.
    pub summary: String,
}

/// One expected step in the alignment.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct StepOutcome {
    /// The step's tool.
    pub tool: String,
    /// The index of the call it matched.
    pub matched: Option<usize>,
    /// For a step that matched nothing: the closest call of the same tool (the call at the
    /// step's place first, in `exact`; else the one with the fewest argument mismatches, a call
    /// no other step took first), with its mismatches.
    pub closest: Option<Closest>,
    /// In `exact`, for an unmatched step: the tool of the call at its place, when it is another.
    pub in_its_place: Option<String>,
}

/// The call an unmatched step is shown against.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Closest {
    /// The call's index.
    pub call: usize,
    /// Why it does not match the step.
    pub mismatches: Vec<ArgMismatch>,
}

/// Which calls match which steps: `None` where the tools differ, else the mismatches.
pub(crate) struct Grid<'a> {
    steps: &'a [Step],
    calls: &'a [ToolCall],
    /// Whether step i matches call j, computed for every pair of the same tool.
    ok: Vec<bool>,
}

impl<'a> Grid<'a> {
    fn new(steps: &'a [Step], calls: &'a [ToolCall], config: &'a TrajectoryConfig) -> Grid<'a> {
        let mut probe = Probe::new(config);
        let mut ok = vec![false; steps.len() * calls.len()];
        for (i, step) in steps.iter().enumerate() {
            for (j, call) in calls.iter().enumerate() {
                ok[i * calls.len() + j] = probe.matches(step, call);
            }
        }
        Grid { steps, calls, ok }
    }

    fn ok(&self, i: usize, j: usize) -> bool {
        self.ok[i * self.calls.len() + j]
    }
}

/// Checks the calls against a case's expected trajectory under `config` (a mode in `expected`
/// wins over `config.mode`).
///
/// ```
/// use proposal_eval_engine::trajectory::{evaluate, ExpectedTrajectory, Step, ToolCall, TrajectoryConfig};
/// use serde_json::json;
/// let expected = ExpectedTrajectory {
///     steps: vec![Step::with_args("inventory_lookup", json!({"sku": "SKU-123"})), Step::tool("recommend")],
///     ..Default::default()
/// };
/// let calls = vec![
///     ToolCall::new("inventory_lookup", json!({"sku": "SKU-123", "warehouse": "EU"})),
///     ToolCall::new("recommend", json!({"sku": "SKU-123"})),
/// ];
/// let verdict = evaluate(&expected, &calls, &TrajectoryConfig::new());
/// assert!(verdict.passed);
/// assert_eq!(verdict.summary, "in_order: 2 of 2 steps matched in order, score 1");
/// ```
pub fn evaluate(
    expected: &ExpectedTrajectory,
    calls: &[ToolCall],
    config: &TrajectoryConfig,
) -> TrajectoryVerdict {
    let mode = expected.mode.unwrap_or(config.mode);
    let steps = &expected.steps;
    let (n, m) = (steps.len(), calls.len());
    let (pairs, unexpected) = match mode {
        Mode::Exact => exact_pairs(steps, calls, config),
        Mode::InOrder => (longest_chain(&Grid::new(steps, calls, config)), Vec::new()),
        Mode::AnyOrder | Mode::Subset => {
            let pairs = assignment(&Grid::new(steps, calls, config));
            let unexpected = if mode == Mode::Subset {
                (0..m)
                    .filter(|j| !pairs.iter().any(|&(_, c)| c == *j))
                    .collect()
            } else {
                Vec::new()
            };
            (pairs, unexpected)
        }
    };
    let matched = pairs.len();
    let exact = format!("matched at their place ({n} steps, {m} calls)");
    let (num, den, counted) = match mode {
        Mode::Exact => (matched, n.max(m), exact.as_str()),
        Mode::InOrder => (matched, n, "steps matched in order"),
        Mode::AnyOrder => (matched, n, "steps matched"),
        Mode::Subset => (matched, m, "calls matched a step"),
    };
    let mut score = if den == 0 {
        1.0
    } else {
        num as f64 / den as f64
    };
    let forbidden: Vec<usize> = (0..m)
        .filter(|&j| expected.forbidden.contains(&calls[j].tool))
        .collect();
    let over_max_calls = expected.max_calls.filter(|&max| m > max);
    let mut summary = format!("{mode}: {num} of {den} {counted}");
    if !forbidden.is_empty() {
        score = 0.0;
        summary.push_str(&format!(", {} forbidden call(s)", forbidden.len()));
    }
    if let Some(max) = over_max_calls {
        score = 0.0;
        summary.push_str(&format!(", {m} calls, more than max_calls = {max}"));
    }
    summary.push_str(&format!(", score {}", fmt_score(score)));
    let passed = score + EPSILON >= config.threshold;
    let outcomes = outcomes(mode, steps, calls, config, &pairs);
    TrajectoryVerdict {
        mode,
        score,
        passed,
        threshold: config.threshold,
        steps: outcomes,
        calls: m,
        unexpected,
        forbidden,
        over_max_calls,
        summary,
    }
}

/// `exact`: step k against call k; the calls past the steps are unexpected.
fn exact_pairs(
    steps: &[Step],
    calls: &[ToolCall],
    config: &TrajectoryConfig,
) -> (Vec<(usize, usize)>, Vec<usize>) {
    let mut probe = Probe::new(config);
    let pairs = (0..steps.len().min(calls.len()))
        .filter(|&k| probe.matches(&steps[k], &calls[k]))
        .map(|k| (k, k))
        .collect();
    (pairs, (steps.len()..calls.len()).collect())
}

/// `in_order`: the longest chain of steps matched by calls in the same order (a longest common
/// subsequence under "matches"); among the longest, each step takes the earliest call it can.
pub(crate) fn longest_chain(grid: &Grid<'_>) -> Vec<(usize, usize)> {
    let (n, m) = (grid.steps.len(), grid.calls.len());
    // best[i][j]: the longest chain of steps i.. over calls j.., row-major in one vector.
    let w = m + 1;
    let mut best = vec![0u32; (n + 1) * w];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            let skip = best[(i + 1) * w + j].max(best[i * w + j + 1]);
            let take = if grid.ok(i, j) {
                best[(i + 1) * w + j + 1] + 1
            } else {
                0
            };
            best[i * w + j] = skip.max(take);
        }
    }
    let mut pairs = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if grid.ok(i, j) && best[i * w + j] == best[(i + 1) * w + j + 1] + 1 {
            pairs.push((i, j));
            i += 1;
            j += 1;
        } else if best[i * w + j + 1] == best[i * w + j] {
            j += 1;
        } else {
            i += 1;
        }
    }
    pairs
}

/// `any_order` and `subset`: the most steps matched by distinct calls (optimal assignment,
/// cost 0 for a match, 1 otherwise); only the matching pairs are kept.
pub(crate) fn assignment(grid: &Grid<'_>) -> Vec<(usize, usize)> {
    let (n, m) = (grid.steps.len(), grid.calls.len());
    assign_by(n, m, |i, j| usize::from(!grid.ok(i, j)))
        .into_iter()
        .filter(|&(i, j)| grid.ok(i, j))
        .collect()
}

/// Each step's outcome; an unmatched one gets the closest call of its tool.
fn outcomes(
    mode: Mode,
    steps: &[Step],
    calls: &[ToolCall],
    config: &TrajectoryConfig,
    pairs: &[(usize, usize)],
) -> Vec<StepOutcome> {
    let taken: Vec<bool> = (0..calls.len())
        .map(|j| pairs.iter().any(|&(_, c)| c == j))
        .collect();
    steps
        .iter()
        .enumerate()
        .map(|(i, step)| {
            let matched = pairs.iter().find(|&&(s, _)| s == i).map(|&(_, c)| c);
            let mut outcome = StepOutcome {
                tool: step.tool.clone(),
                matched,
                closest: None,
                in_its_place: None,
            };
            if matched.is_some() {
                return outcome;
            }
            if mode == Mode::Exact {
                if let Some(call) = calls.get(i) {
                    if call.tool != step.tool {
                        outcome.in_its_place = Some(call.tool.clone());
                    } else if let Some(mismatches) = compare(step, call, config) {
                        outcome.closest = Some(Closest {
                            call: i,
                            mismatches,
                        });
                        return outcome;
                    }
                }
            }
            outcome.closest = closest(step, calls, config, &taken);
            outcome
        })
        .collect()
}

/// The call of `step`'s tool with the fewest argument mismatches, preferring calls no step took;
/// the earliest among equals.
fn closest(
    step: &Step,
    calls: &[ToolCall],
    config: &TrajectoryConfig,
    taken: &[bool],
) -> Option<Closest> {
    calls
        .iter()
        .enumerate()
        .filter_map(|(j, call)| compare(step, call, config).map(|m| (j, m)))
        .min_by_key(|(j, m)| (taken[*j], m.len(), *j))
        .map(|(call, mismatches)| Closest { call, mismatches })
}

/// A score as the output prints it: whole numbers bare, others with two decimals.
pub(crate) fn fmt_score(score: f64) -> String {
    if score.fract() == 0.0 {
        format!("{score}")
    } else {
        format!("{score:.2}")
    }
}

#[cfg(test)]
pub(crate) fn grid<'a>(
    steps: &'a [Step],
    calls: &'a [ToolCall],
    config: &'a TrajectoryConfig,
) -> Grid<'a> {
    Grid::new(steps, calls, config)
}

#[cfg(test)]
impl Grid<'_> {
    pub(crate) fn is_match(&self, i: usize, j: usize) -> bool {
        self.ok(i, j)
    }
}
