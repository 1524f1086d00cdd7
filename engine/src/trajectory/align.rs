//! Laying the expected steps over the calls: the five modes, the counts, the score, and for
//! every step the call it matched or the closest call of its tool.

use super::args::{compare, mismatch_count_up_to, ArgMismatch, Probe};
use super::config::{is_glob, tool_matches, ExpectedTrajectory, Mode, Step, TrajectoryConfig};
use super::extract::{groups, ToolCall};
use crate::assignment::assign_by;
use std::ops::Range;

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
    /// Calls that the mode does not allow (`exact`: a call past the steps; `subset` and
    /// `allowed`: a call matching no step, or in `subset` only a step another call took), by
    /// index.
    pub unexpected: Vec<usize>,
    /// In `subset`, the unexpected calls that match a step another call took first.
    pub taken: Vec<Taken>,
    /// Calls that match a `forbidden` entry.
    pub forbidden: Vec<ForbiddenCall>,
    /// `min_calls`, when there were fewer calls.
    pub under_min_calls: Option<usize>,
    /// `max_calls`, when there were more calls.
    pub over_max_calls: Option<usize>,
    /// The tools of `calls` called fewer times than their `min` or more than their `max`.
    pub counts: Vec<CountMiss>,
    /// One line: why this score.
    pub summary: String,
}

/// One expected step in the alignment.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct StepOutcome {
    /// The step's tool (a name or a glob).
    pub tool: String,
    /// The index of the call it matched (in `allowed`, the first of those that match it).
    pub matched: Option<usize>,
    /// For a step that matched nothing: the closest call of its tool (the call at the step's
    /// place first, in `exact`; else the one with the fewest argument mismatches, a call no
    /// other step took first), with its mismatches.
    pub closest: Option<Closest>,
    /// In `exact`, for an unmatched step: the call at its place, when it is of another tool.
    pub in_its_place: Option<usize>,
}

/// The call an unmatched step is shown against.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Closest {
    /// The call's index.
    pub call: usize,
    /// Why it does not match the step.
    pub mismatches: Vec<ArgMismatch>,
}

/// In `subset`: a call that matches a step, which an earlier matched call already took.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Taken {
    /// The unexpected call's index.
    pub call: usize,
    /// The step it matches (its index).
    pub step: usize,
    /// The call that took the step.
    pub by: usize,
}

/// A call that matches a `forbidden` entry.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ForbiddenCall {
    /// The call's index.
    pub call: usize,
    /// The entry's index in `forbidden`.
    pub entry: usize,
    /// The entry as written: the tool name (or glob), and its arguments when it has some.
    pub rule: String,
}

/// A tool of `calls` called too few or too many times.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct CountMiss {
    /// The key of `calls`: a tool's name or a glob.
    pub tool: String,
    /// How many calls it had.
    pub calls: usize,
    /// Its `min`, when there were fewer calls.
    pub min: Option<usize>,
    /// Its `max`, when there were more calls.
    pub max: Option<usize>,
}

impl CountMiss {
    /// `2 calls of recommend, more than calls.recommend.max = 1`.
    pub fn describe(&self) -> String {
        let (than, bound) = match (self.min, self.max) {
            (Some(min), _) => (format!("fewer than calls.{}.min", self.tool), min),
            (_, Some(max)) => (format!("more than calls.{}.max", self.tool), max),
            (None, None) => (String::from("within"), 0),
        };
        format!("{} call(s) of {}, {than} = {bound}", self.calls, self.tool)
    }
}

/// Which calls match which steps, each pair asked once and only when an alignment needs it: a
/// trajectory that goes as expected is laid by asking about the pairs on its way alone.
pub(crate) struct Grid<'a> {
    steps: &'a [Step],
    calls: &'a [ToolCall],
    config: &'a TrajectoryConfig,
    probe: Probe<'a, 'a>,
    /// Whether each step's tool is a glob.
    globs: Vec<bool>,
    /// Per pair, row-major: 0 not asked yet, 1 no match, 2 a match.
    memo: Vec<u8>,
}

impl<'a> Grid<'a> {
    fn new(steps: &'a [Step], calls: &'a [ToolCall], config: &'a TrajectoryConfig) -> Grid<'a> {
        Grid {
            steps,
            calls,
            config,
            probe: Probe::new(config),
            globs: steps.iter().map(|s| is_glob(&s.tool)).collect(),
            memo: vec![0; steps.len() * calls.len()],
        }
    }

    /// Whether step `i` matches call `j`, asked now if it was not yet.
    fn ask(&mut self, i: usize, j: usize) -> bool {
        let k = i * self.calls.len() + j;
        if self.memo[k] == 0 {
            let ok = self
                .probe
                .matches_known(&self.steps[i], self.globs[i], &self.calls[j]);
            self.memo[k] = 1 + u8::from(ok);
        }
        self.memo[k] == 2
    }

    /// Asks about every pair: what the full alignments read with [`Grid::ok`].
    fn fill(&mut self) {
        for i in 0..self.steps.len() {
            for j in 0..self.calls.len() {
                self.ask(i, j);
            }
        }
    }

    /// Whether step `i` matches call `j`, in a filled grid.
    fn ok(&self, i: usize, j: usize) -> bool {
        self.memo[i * self.calls.len() + j] == 2
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
    let mut grid = Grid::new(steps, calls, config);
    let Laid {
        pairs,
        places,
        unexpected,
        taken,
    } = lay(mode, &mut grid);
    let matched = pairs.len();
    let exact = format!("matched at their place ({n} steps, {m} calls)");
    let (num, den, counted) = match mode {
        Mode::Exact => (matched, n.max(m), exact.as_str()),
        Mode::InOrder => (matched, n, "steps matched in order"),
        Mode::AnyOrder => (matched, n, "steps matched"),
        Mode::Subset | Mode::Allowed => (matched, m, "calls matched a step"),
    };
    let mut score = if den == 0 {
        1.0
    } else {
        num as f64 / den as f64
    };
    let forbidden = forbidden_calls(expected, calls, config);
    let under_min_calls = expected.min_calls.filter(|&min| m < min);
    let over_max_calls = expected.max_calls.filter(|&max| m > max);
    let counts = count_misses(expected, calls);
    let mut summary = format!("{mode}: {num} of {den} {counted}");
    if !forbidden.is_empty() {
        summary.push_str(&format!(", {} forbidden call(s)", forbidden.len()));
    }
    if let Some(min) = under_min_calls {
        summary.push_str(&format!(", {m} calls, fewer than min_calls = {min}"));
    }
    if let Some(max) = over_max_calls {
        summary.push_str(&format!(", {m} calls, more than max_calls = {max}"));
    }
    for miss in &counts {
        summary.push_str(&format!(", {}", miss.describe()));
    }
    if !forbidden.is_empty()
        || under_min_calls.is_some()
        || over_max_calls.is_some()
        || !counts.is_empty()
    {
        score = 0.0;
    }
    summary.push_str(&format!(", score {}", fmt_score(score)));
    let passed = score + EPSILON >= config.threshold;
    let outcomes = outcomes(mode, &mut grid, &pairs, &places);
    TrajectoryVerdict {
        mode,
        score,
        passed,
        threshold: config.threshold,
        steps: outcomes,
        calls: m,
        unexpected,
        taken,
        forbidden,
        under_min_calls,
        over_max_calls,
        counts,
        summary,
    }
}

/// Each call that matches a `forbidden` entry, with the first entry it matches.
fn forbidden_calls(
    expected: &ExpectedTrajectory,
    calls: &[ToolCall],
    config: &TrajectoryConfig,
) -> Vec<ForbiddenCall> {
    if expected.forbidden.is_empty() {
        return Vec::new();
    }
    let mut probe = Probe::new(config);
    calls
        .iter()
        .enumerate()
        .filter_map(|(j, call)| {
            let (entry, step) = expected
                .forbidden
                .iter()
                .enumerate()
                .find(|(_, step)| probe.matches(step, call))?;
            let rule = match &step.args {
                Some(args) => format!("{} {}", step.tool, crate::render::compact(args, 80)),
                None => step.tool.clone(),
            };
            Some(ForbiddenCall {
                call: j,
                entry,
                rule,
            })
        })
        .collect()
}

/// The tools of `calls` whose count is out of its bounds.
fn count_misses(expected: &ExpectedTrajectory, calls: &[ToolCall]) -> Vec<CountMiss> {
    expected
        .calls
        .iter()
        .filter_map(|(tool, bounds)| {
            let k = calls.iter().filter(|c| tool_matches(tool, &c.tool)).count();
            let min = bounds.min.filter(|&min| k < min);
            let max = bounds.max.filter(|&max| k > max);
            (min.is_some() || max.is_some()).then(|| CountMiss {
                tool: tool.clone(),
                calls: k,
                min,
                max,
            })
        })
        .collect()
}

/// How the steps were laid over the calls.
#[derive(Default)]
struct Laid {
    /// The (step, call) pairs that match, by step.
    pairs: Vec<(usize, usize)>,
    /// In `exact`, each step's place: the call it was laid against, `None` past the last call.
    places: Vec<Option<usize>>,
    /// The calls the mode does not allow.
    unexpected: Vec<usize>,
    /// In `subset`, the unexpected calls whose step another call took.
    taken: Vec<Taken>,
}

/// Lays the steps over the calls in `mode`.
fn lay(mode: Mode, grid: &mut Grid<'_>) -> Laid {
    let groups = groups(grid.calls);
    let pairs = match mode {
        Mode::Exact => return exact(grid, &groups),
        Mode::InOrder => match greedy_chain(grid, &groups) {
            Some(pairs) => pairs,
            None => {
                grid.fill();
                if groups.len() == grid.calls.len() {
                    longest_chain(grid)
                } else {
                    chain_over_groups(grid, &groups)
                }
            }
        },
        Mode::AnyOrder => max_matching(grid),
        Mode::Subset => return subset(grid),
        Mode::Allowed => return allowed(grid),
    };
    Laid {
        pairs,
        ..Laid::default()
    }
}

/// `subset`: the maximum matching; every call outside it is unexpected, and when it matches a
/// step, that step was taken by another call (a free one would have been matched to it).
fn subset(grid: &mut Grid<'_>) -> Laid {
    let pairs = max_matching(grid);
    let mut laid = Laid::default();
    for j in (0..grid.calls.len()).filter(|j| !pairs.iter().any(|&(_, c)| c == *j)) {
        laid.unexpected.push(j);
        let taken = (0..grid.steps.len())
            .find(|&i| grid.ask(i, j))
            .and_then(|i| {
                let by = pairs.iter().find(|&&(s, _)| s == i)?.1;
                Some(Taken {
                    call: j,
                    step: i,
                    by,
                })
            });
        laid.taken.extend(taken);
    }
    laid.pairs = pairs;
    laid
}

/// `allowed`: each call with the first step it matches (the step at its own place tried
/// first, where a trajectory as expected has it); a call matching none is unexpected.
fn allowed(grid: &mut Grid<'_>) -> Laid {
    let n = grid.steps.len();
    let mut laid = Laid::default();
    for j in 0..grid.calls.len() {
        let mut order = (j < n).then_some(j).into_iter().chain(0..n);
        match order.find(|&i| grid.ask(i, j)) {
            Some(i) => laid.pairs.push((i, j)),
            None => laid.unexpected.push(j),
        }
    }
    laid
}

/// `exact`: step k against call k, except that the steps at the places of a group's calls take
/// them in the order that matches the most (their order means nothing).
fn exact(grid: &mut Grid<'_>, groups: &[Range<usize>]) -> Laid {
    let n = grid.steps.len();
    let mut laid = Laid {
        places: vec![None; n],
        ..Laid::default()
    };
    for group in groups {
        let at = group.start.min(n)..group.end.min(n);
        if at.is_empty() {
            laid.unexpected.extend(group.clone());
            continue;
        }
        if group.len() == 1 {
            let k = group.start;
            laid.places[k] = Some(k);
            if grid.ask(k, k) {
                laid.pairs.push((k, k));
            }
            continue;
        }
        let (rows, cols) = (at.len(), group.len());
        let ok: Vec<bool> = (0..rows * cols)
            .map(|x| grid.ask(at.start + x / cols, group.start + x % cols))
            .collect();
        let mut used = vec![false; cols];
        for (r, c) in assign_by(rows, cols, |r, c| usize::from(!ok[r * cols + c])) {
            laid.places[at.start + r] = Some(group.start + c);
            used[c] = true;
            if ok[r * cols + c] {
                laid.pairs.push((at.start + r, group.start + c));
            }
        }
        laid.unexpected
            .extend((0..cols).filter(|&c| !used[c]).map(|c| group.start + c));
    }
    laid
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

/// `in_order` when a response asked for several tools at once: the longest chain of steps
/// matched by distinct calls whose groups come in the steps' order, in any order inside a group.
///
/// `best[i][g]` is the longest chain of steps `i..` over groups `g..`: group `g` skipped, or
/// the steps `i..e` laid on it, as many as a matching of them with its calls pairs, then steps
/// `e..` over groups `g + 1..`. Only the first `e` at which the matching grows counts (the rest
/// only shortens what follows), so each `(i, g)` adds the steps that match a call of `g` one
/// at a time until the group is full.
pub(crate) fn chain_over_groups(
    grid: &mut Grid<'_>,
    groups: &[Range<usize>],
) -> Vec<(usize, usize)> {
    let n = grid.steps.len();
    let w = groups.len() + 1;
    // The steps that match some call of each group, in order.
    let candidates: Vec<Vec<usize>> = groups
        .iter()
        .map(|g| {
            (0..n)
                .filter(|&i| g.clone().any(|j| grid.ok(i, j)))
                .collect()
        })
        .collect();
    let mut best = vec![0u32; (n + 1) * w];
    let mut end = vec![0usize; (n + 1) * w];
    let mut matching = GroupMatching::default();
    for (g, group) in groups.iter().enumerate().rev() {
        // What laying steps on this group gives depends only on the first candidate at or
        // after `i`: computed once per candidate, not once per step.
        let mut taking: Option<(usize, Option<(u32, usize)>)> = None;
        for i in (0..=n).rev() {
            let from = candidates[g].partition_point(|&k| k < i);
            let take = match taking {
                Some((f, take)) if f == from => take,
                _ => {
                    let take = best_take(grid, &mut matching, group, &candidates[g][from..], |e| {
                        best[e * w + g + 1]
                    });
                    taking = Some((from, take));
                    take
                }
            };
            let skip = best[i * w + g + 1];
            // Ties go to taking: each step takes the earliest call it can.
            let (b, e) = match take {
                Some((with, e)) if with >= skip => (with, e),
                _ => (skip, i),
            };
            best[i * w + g] = b;
            end[i * w + g] = e;
        }
    }
    let mut pairs = Vec::new();
    let mut i = 0;
    for (g, group) in groups.iter().enumerate() {
        let e = end[i * w + g];
        if e > i {
            matching.reset(group.clone());
            for &k in candidates[g].iter().filter(|&&k| (i..e).contains(&k)) {
                matching.add(grid, k);
            }
            pairs.extend(matching.pairs());
            i = e;
        }
    }
    pairs.sort_unstable();
    pairs
}

/// The best of laying the steps `candidates` (those from some `i` on that match a call of
/// `group`) on `group`: each time the matching grows, at step `k`, its size plus what the steps
/// after `k` give over the later groups (`after(k + 1)`). Returns the best total and where its
/// steps end (the last of the equal best: the most steps on this group), or `None` when no step
/// can be laid.
fn best_take(
    grid: &mut Grid<'_>,
    matching: &mut GroupMatching,
    group: &Range<usize>,
    candidates: &[usize],
    after: impl Fn(usize) -> u32,
) -> Option<(u32, usize)> {
    matching.reset(group.clone());
    let mut best: Option<(u32, usize)> = None;
    for &k in candidates {
        if !matching.add(grid, k) {
            continue;
        }
        let with = matching.size as u32 + after(k + 1);
        if best.is_none_or(|(b, _)| with >= b) {
            best = Some((with, k + 1));
        }
        if matching.size == group.len() {
            break;
        }
    }
    best
}

/// A maximum matching of steps with the calls of one group, grown a step at a time by an
/// augmenting path (Kuhn's algorithm).
#[derive(Default)]
struct GroupMatching {
    calls: Range<usize>,
    /// The step holding each call of the group.
    owner: Vec<Option<usize>>,
    seen: Vec<bool>,
    size: usize,
}

impl GroupMatching {
    fn reset(&mut self, calls: Range<usize>) {
        self.owner.clear();
        self.owner.resize(calls.len(), None);
        self.calls = calls;
        self.size = 0;
    }

    /// Adds `step`; whether the matching grew.
    fn add(&mut self, grid: &mut Grid<'_>, step: usize) -> bool {
        self.seen.clear();
        self.seen.resize(self.calls.len(), false);
        let grew = self.augment(grid, step);
        self.size += usize::from(grew);
        grew
    }

    fn augment(&mut self, grid: &mut Grid<'_>, step: usize) -> bool {
        for c in 0..self.calls.len() {
            if self.seen[c] || !grid.ask(step, self.calls.start + c) {
                continue;
            }
            self.seen[c] = true;
            let free = match self.owner[c] {
                None => true,
                Some(other) => self.augment(grid, other),
            };
            if free {
                self.owner[c] = Some(step);
                return true;
            }
        }
        false
    }

    /// The (step, call) pairs.
    fn pairs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.owner
            .iter()
            .enumerate()
            .filter_map(|(c, s)| s.map(|s| (s, self.calls.start + c)))
    }
}

/// `in_order` the short way: the steps are laid in order, each on the group where the previous
/// one is if the group's matching can take it too (rearranging the group's calls among its
/// steps), else on the earliest later group where it matches a call. Laid so, the steps chain
/// completely whenever some chain of all of them exists. So when every step that matches any
/// call is laid, or all but one (no chain holds them all, and this one holds all the others),
/// no chain is longer; a step that matches no call is in no chain. `None` when two steps are
/// left over: the full alignment decides. Asks about the pairs on the way only.
fn greedy_chain(grid: &mut Grid<'_>, groups: &[Range<usize>]) -> Option<Vec<(usize, usize)>> {
    let m = grid.calls.len();
    let mut pairs = Vec::with_capacity(grid.steps.len());
    let mut matching = GroupMatching::default();
    let mut g = 0;
    matching.reset(groups.first().cloned().unwrap_or(0..0));
    let mut left_over = false;
    for i in 0..grid.steps.len() {
        if matching.add(grid, i) {
            continue;
        }
        let later = (g + 1..groups.len()).find(|&h| groups[h].clone().any(|j| grid.ask(i, j)));
        match later {
            Some(h) => {
                pairs.extend(matching.pairs());
                g = h;
                matching.reset(groups[h].clone());
                matching.add(grid, i);
            }
            None if (0..m).any(|j| grid.ask(i, j)) => {
                if left_over {
                    return None;
                }
                left_over = true;
            }
            None => {}
        }
    }
    pairs.extend(matching.pairs());
    pairs.sort_unstable();
    Some(pairs)
}

/// `any_order` and `subset`: the most steps matched by distinct calls, a maximum matching grown
/// a step at a time by augmenting paths (Kuhn's algorithm). Each step tries the call at its own
/// place first, so a trajectory as expected is matched asking about one pair a step.
pub(crate) fn max_matching(grid: &mut Grid<'_>) -> Vec<(usize, usize)> {
    let (n, m) = (grid.steps.len(), grid.calls.len());
    let mut owner: Vec<Option<usize>> = vec![None; m];
    let mut seen = vec![false; m];
    fn augment(
        grid: &mut Grid<'_>,
        step: usize,
        owner: &mut [Option<usize>],
        seen: &mut [bool],
    ) -> bool {
        let m = owner.len();
        let own = (step < m).then_some(step);
        for j in own.into_iter().chain((0..m).filter(|&j| Some(j) != own)) {
            if seen[j] || !grid.ask(step, j) {
                continue;
            }
            seen[j] = true;
            let free = match owner[j] {
                None => true,
                Some(other) => augment(grid, other, owner, seen),
            };
            if free {
                owner[j] = Some(step);
                return true;
            }
        }
        false
    }
    for i in 0..n {
        seen.fill(false);
        augment(grid, i, &mut owner, &mut seen);
    }
    let mut pairs: Vec<(usize, usize)> = owner
        .iter()
        .enumerate()
        .filter_map(|(j, s)| s.map(|s| (s, j)))
        .collect();
    pairs.sort_unstable();
    pairs
}

/// Each step's outcome; an unmatched one gets the closest call of its tool.
fn outcomes(
    mode: Mode,
    grid: &mut Grid<'_>,
    pairs: &[(usize, usize)],
    places: &[Option<usize>],
) -> Vec<StepOutcome> {
    let (steps, calls, config) = (grid.steps, grid.calls, grid.config);
    let mut taken = vec![false; calls.len()];
    let mut matched = vec![None; steps.len()];
    // A step's call is its first pair's (in `allowed`, a step may have many: the first call).
    for &(i, j) in pairs {
        taken[j] = true;
        matched[i] = matched[i].or(Some(j));
    }
    steps
        .iter()
        .enumerate()
        .map(|(i, step)| {
            let mut outcome = StepOutcome {
                tool: step.tool.clone(),
                matched: matched[i],
                closest: None,
                in_its_place: None,
            };
            if matched[i].is_some() {
                return outcome;
            }
            if let (Mode::Exact, Some(&Some(place))) = (mode, places.get(i)) {
                match compare(step, &calls[place], config) {
                    None => outcome.in_its_place = Some(place),
                    // Never empty: a step its place's call matches is matched there.
                    Some(mismatches) => {
                        outcome.closest = Some(Closest {
                            call: place,
                            mismatches,
                        });
                        return outcome;
                    }
                }
            }
            outcome.closest = closest(grid, i, &taken);
            outcome
        })
        .collect()
}

/// The call of step `i`'s tool with the fewest argument mismatches, preferring calls no step
/// took; the earliest among equals.
///
/// The calls no step took are searched first, the others only when none of them is of the
/// tool. The first that matches the step (asked of the grid, where a full alignment has the
/// answers) has no mismatch and is the closest; without one, the calls are counted, each only
/// up to the best count so far (with as many, a later call loses). Mismatches are written for
/// the chosen call alone.
fn closest(grid: &mut Grid<'_>, i: usize, taken: &[bool]) -> Option<Closest> {
    let (step, calls, config) = (&grid.steps[i], grid.calls, grid.config);
    for took in [false, true] {
        if let Some(call) = (0..calls.len()).find(|&j| taken[j] == took && grid.ask(i, j)) {
            return Some(Closest {
                call,
                mismatches: Vec::new(),
            });
        }
        // None matches: each has a mismatch at least. The fewest so far, and the call.
        let mut best: Option<(usize, usize)> = None;
        for j in (0..calls.len()).filter(|&j| taken[j] == took) {
            let limit = best.map_or(usize::MAX, |(k, _)| k);
            if limit == 1 {
                break;
            }
            // `None`: of another tool.
            if let Some(k) = mismatch_count_up_to(step, &calls[j], config, limit) {
                if k < limit {
                    best = Some((k, j));
                }
            }
        }
        if let Some((_, call)) = best {
            let mismatches = compare(step, &calls[call], config)?;
            return Some(Closest { call, mismatches });
        }
    }
    None
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
    let mut grid = Grid::new(steps, calls, config);
    grid.fill();
    grid
}

#[cfg(test)]
impl Grid<'_> {
    pub(crate) fn is_match(&self, i: usize, j: usize) -> bool {
        self.ok(i, j)
    }
}
