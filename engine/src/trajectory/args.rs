//! Comparing a step's arguments with a call's: partial or exact, under the ignore paths and the
//! field matchers, every difference with its pasteable path (`recommend.price`).

use super::config::{is_glob, tool_matches, Args, Step, TrajectoryConfig};
use super::extract::ToolCall;
use crate::json::json_eq;
use crate::path::{Location, SegmentRef};
use crate::render::{compact, describe_type};
use serde_json::Value;
use std::fmt;

/// One difference between a step's arguments and a call's, at a path that starts with the tool
/// name, so it can be pasted into `[trajectory] ignore_paths` or a `[[trajectory.fields]]` path.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ArgMismatch {
    /// Where: `recommend.price`, `inventory_lookup.skus[1]`.
    pub location: Location,
    /// What differs: `values differ: expected 899, actual 950`.
    pub why: String,
}

impl fmt::Display for ArgMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.why)
    }
}

const MAX: usize = 80;

/// How `step` compares with `call`: `None` when the tools differ, else the argument
/// mismatches (none: the call matches the step).
pub(crate) fn compare(
    step: &Step,
    call: &ToolCall,
    config: &TrajectoryConfig,
) -> Option<Vec<ArgMismatch>> {
    if !tool_matches(&step.tool, &call.tool) {
        return None;
    }
    let mut out = Vec::new();
    let args = args_of(step, call, config);
    if let (Some(expected), false) = (&step.args, args == Args::Ignore) {
        let mut walk = Walk::new(config, Some(&mut out));
        walk.start(&call.tool, args);
        walk.node(expected, &call.args);
    }
    Some(out)
}

/// How many mismatches [`compare`] would write, without writing them: what choosing the
/// closest call among many needs.
#[cfg(test)]
pub(crate) fn mismatch_count(
    step: &Step,
    call: &ToolCall,
    config: &TrajectoryConfig,
) -> Option<usize> {
    mismatch_count_up_to(step, call, config, usize::MAX)
}

/// [`mismatch_count`] counting only up to `limit`: the walk stops at the `limit`-th mismatch,
/// so a count below `limit` is exact and `limit` means "at least that many". What the search
/// for the closest call needs, where a call with as many mismatches as the best so far loses.
pub(crate) fn mismatch_count_up_to(
    step: &Step,
    call: &ToolCall,
    config: &TrajectoryConfig,
    limit: usize,
) -> Option<usize> {
    if !tool_matches(&step.tool, &call.tool) {
        return None;
    }
    let args = args_of(step, call, config);
    let Some(expected) = step.args.as_ref().filter(|_| args != Args::Ignore) else {
        return Some(0);
    };
    let mut walk = Walk::new(config, None);
    walk.limit = limit;
    walk.start(&call.tool, args);
    walk.node(expected, &call.args);
    Some(walk.count)
}

/// How `step`'s arguments compare with `call`'s: the step's `args_match`, else the tool's, else
/// `[trajectory] args`.
fn args_of(step: &Step, call: &ToolCall, config: &TrajectoryConfig) -> Args {
    step.args_match
        .unwrap_or_else(|| config.args_of(&call.tool))
}

/// Whether `call` matches `step`: [`compare`] without writing any mismatch, stopping at the
/// first. What the alignment asks of every pair of the same tool.
#[cfg(test)]
pub(crate) fn matches(step: &Step, call: &ToolCall, config: &TrajectoryConfig) -> bool {
    Probe::new(config).matches(step, call)
}

/// [`matches`] for many pairs: one walk whose path buffer every pair reuses.
pub(crate) struct Probe<'c, 'v>(Walk<'c, 'v, 'static>);

impl<'c, 'v> Probe<'c, 'v> {
    pub(crate) fn new(config: &'c TrajectoryConfig) -> Self {
        Probe(Walk::new(config, None))
    }

    /// Whether `call` matches `step`.
    pub(crate) fn matches(&mut self, step: &'v Step, call: &'v ToolCall) -> bool {
        self.matches_known(step, is_glob(&step.tool), call)
    }

    /// [`Probe::matches`] for a step known to name a glob (`glob`) or a tool: what a caller
    /// asking about one step many times works out once.
    pub(crate) fn matches_known(&mut self, step: &'v Step, glob: bool, call: &'v ToolCall) -> bool {
        let same_tool = if glob {
            tool_matches(&step.tool, &call.tool)
        } else {
            step.tool == call.tool
        };
        if !same_tool {
            return false;
        }
        let Some(expected) = &step.args else {
            return true;
        };
        let args = args_of(step, call, self.0.config);
        if args == Args::Ignore {
            return true;
        }
        self.0.start(&call.tool, args);
        self.0.node(expected, &call.args);
        self.0.count == 0
    }
}

/// A walk over the two argument documents where they differ. With `out` it writes every
/// mismatch; without, it only notes that there is one and stops.
struct Walk<'c, 'v, 'o> {
    config: &'c TrajectoryConfig,
    /// The path here, tool name first, borrowed from the step and the documents; grown and
    /// shrunk in place, and made a [`Location`] only for a mismatch that is written.
    path: Vec<SegmentRef<'v>>,
    out: Option<&'o mut Vec<ArgMismatch>>,
    /// The mismatches found, written or not.
    count: usize,
    /// How many mismatches a walk without `out` looks for: 1 for a probe (it stops at the
    /// first), more when they are counted.
    limit: usize,
    /// How the arguments compare: `exact` below the top level of a `subset` comparison.
    args: Args,
    /// Whether the walk is a `subset` comparison.
    subset: bool,
}

impl<'c, 'v, 'o> Walk<'c, 'v, 'o> {
    fn new(config: &'c TrajectoryConfig, out: Option<&'o mut Vec<ArgMismatch>>) -> Self {
        Walk {
            config,
            path: Vec::with_capacity(8),
            out,
            count: 0,
            limit: 1,
            args: Args::Partial,
            subset: false,
        }
    }

    /// Ready for a walk of `tool`'s arguments, compared as `args` says.
    fn start(&mut self, tool: &'v str, args: Args) {
        self.path.clear();
        self.path.push(SegmentRef::Key(tool));
        self.count = 0;
        self.args = args;
        self.subset = args == Args::Subset;
    }

    /// A mismatch here; `why` is written only when mismatches are kept.
    fn push(&mut self, why: impl FnOnce() -> String) {
        self.count += 1;
        if let Some(out) = &mut self.out {
            out.push(ArgMismatch {
                location: Location(self.path.iter().map(|s| s.to_segment()).collect()),
                why: why(),
            });
        }
    }

    /// Whether the walk can stop: one that does not write stops at its `limit`.
    fn done(&self) -> bool {
        self.out.is_none() && self.count >= self.limit
    }

    /// Whether the current path is ignored. Asked only where the two sides differ, so an equal
    /// argument costs one equality test. Below the tool, every ancestor was asked on the way
    /// down, so only the path itself is matched.
    fn ignored(&self) -> bool {
        let patterns = &self.config.ignore_paths;
        if self.path.len() == 1 {
            patterns.iter().any(|p| p.covers_refs(&self.path))
        } else {
            patterns.iter().any(|p| p.matches_refs(&self.path))
        }
    }

    fn child(&mut self, segment: SegmentRef<'v>, e: Option<&'v Value>, a: Option<&'v Value>) {
        self.path.push(segment);
        match (e, a) {
            (Some(e), Some(a)) => self.node(e, a),
            (Some(_), None) if !self.ignored() => self.push(|| "missing in actual".into()),
            (None, Some(a)) if !self.ignored() => {
                let subset = self.path.len() == 2 && self.subset;
                self.push(|| {
                    if subset {
                        format!(
                            "not among the step's arguments (args_match = \"subset\"): {}",
                            compact(a, MAX)
                        )
                    } else {
                        format!("extra in actual: {}", compact(a, MAX))
                    }
                })
            }
            _ => {}
        }
        self.path.pop();
    }

    fn node(&mut self, e: &'v Value, a: &'v Value) {
        if json_eq(e, a) || self.ignored() {
            return;
        }
        if let Some(spec) = self
            .config
            .fields
            .iter()
            .find(|f| f.path.matches_refs(&self.path))
        {
            if self.out.is_none() {
                if !crate::accuracy::holds(spec, e, a) {
                    self.push(String::new);
                }
                return;
            }
            if let Err(why) = crate::accuracy::compare_one(spec, e, a) {
                self.push(|| {
                    format!(
                        "values differ: expected {}, actual {}, {why}",
                        compact(e, MAX),
                        compact(a, MAX)
                    )
                });
            }
            return;
        }
        match (e, a) {
            (Value::Object(em), Value::Object(am)) if self.args == Args::Subset => {
                // The call's arguments, each among the step's and equal as a whole.
                self.args = Args::Exact;
                for (k, av) in am {
                    if self.done() {
                        break;
                    }
                    self.child(SegmentRef::Key(k), em.get(k), Some(av));
                }
                self.args = Args::Subset;
            }
            (Value::Object(em), Value::Object(am)) => {
                for (k, ev) in em {
                    if self.done() {
                        return;
                    }
                    self.child(SegmentRef::Key(k), Some(ev), am.get(k));
                }
                if self.args == Args::Exact {
                    for (k, av) in am.iter().filter(|(k, _)| !em.contains_key(*k)) {
                        if self.done() {
                            return;
                        }
                        self.child(SegmentRef::Key(k), None, Some(av));
                    }
                }
            }
            (Value::Array(ea), Value::Array(aa)) => {
                for i in 0..ea.len().max(aa.len()) {
                    if self.done() {
                        return;
                    }
                    self.child(SegmentRef::Index(i), ea.get(i), aa.get(i));
                }
            }
            _ if e.is_object() || e.is_array() || a.is_object() || a.is_array() => {
                self.push(|| {
                    format!(
                        "type differs: expected {}, actual {}",
                        describe_type(e),
                        describe_type(a)
                    )
                });
            }
            _ => self.push(|| {
                format!(
                    "values differ: expected {}, actual {}",
                    compact(e, MAX),
                    compact(a, MAX)
                )
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accuracy::FieldSpec;
    use serde_json::json;

    fn lines(step: Value, call: Value, config: &TrajectoryConfig) -> Option<Vec<String>> {
        let step = Step::with_args("recommend", step);
        let call = ToolCall::new("recommend", call);
        compare(&step, &call, config).map(|m| m.iter().map(|m| m.to_string()).collect())
    }

    #[test]
    fn partial_ignores_the_calls_other_keys_exact_does_not() {
        let partial = TrajectoryConfig::new();
        let step = json!({"sku": "S-1", "opts": {"fast": true}});
        let call = json!({"sku": "S-1", "opts": {"fast": true, "n": 2}, "trace": "x"});
        assert_eq!(lines(step.clone(), call.clone(), &partial), Some(vec![]));
        let exact = TrajectoryConfig::new().args(Args::Exact);
        assert_eq!(
            lines(step, call, &exact).unwrap(),
            [
                "recommend.opts.n: extra in actual: 2",
                "recommend.trace: extra in actual: \"x\""
            ]
        );
    }

    #[test]
    fn differences_have_pasteable_paths() {
        let config = TrajectoryConfig::new();
        let got = lines(
            json!({"price": 899, "sku": "S-1", "tags": ["a", "b"], "opts": {"x": 1}, "n": 1.0}),
            json!({"price": 950, "tags": ["a"], "opts": "none", "n": 1}),
            &config,
        )
        .unwrap();
        // Numbers compare by value: 1.0 equals 1.
        assert_eq!(
            got,
            [
                "recommend.opts: type differs: expected an object, actual a string \"none\"",
                "recommend.price: values differ: expected 899, actual 950",
                "recommend.sku: missing in actual",
                "recommend.tags[1]: missing in actual",
            ]
        );
        let other_tool = compare(
            &Step::tool("recommend"),
            &ToolCall::new("lookup", json!({})),
            &config,
        );
        assert_eq!(other_tool, None);
        assert_eq!(
            compare(
                &Step::tool("lookup"),
                &ToolCall::new("lookup", json!("any")),
                &config
            ),
            Some(vec![])
        );
    }

    #[test]
    fn counting_stops_at_the_limit() {
        let config = TrajectoryConfig::new().args(Args::Exact);
        let step = Step::with_args("recommend", json!({"a": 1, "b": 2}));
        let call = ToolCall::new("recommend", json!({"a": 2, "b": 3, "c": 4}));
        let count = |limit| mismatch_count_up_to(&step, &call, &config, limit);
        assert_eq!(
            (count(1), count(2), count(3), count(9)),
            (Some(1), Some(2), Some(3), Some(3))
        );
        assert_eq!(mismatch_count(&step, &call, &config), Some(3));
        let other = ToolCall::new("lookup", json!({}));
        assert_eq!(mismatch_count_up_to(&step, &other, &config, 9), None);
    }

    /// A list or an object against anything else is a type difference, on either side.
    #[test]
    fn a_container_against_a_scalar_differs_in_type() {
        let config = TrajectoryConfig::new();
        let got = lines(
            json!({"a": 1, "b": 2, "c": [1], "d": {"x": 1}}),
            json!({"a": {"x": 1}, "b": [2], "c": 1, "d": "x"}),
            &config,
        )
        .unwrap();
        assert_eq!(
            got,
            [
                "recommend.a: type differs: expected a number 1, actual an object",
                "recommend.b: type differs: expected a number 2, actual an array",
                "recommend.c: type differs: expected an array, actual a number 1",
                "recommend.d: type differs: expected an object, actual a string \"x\"",
            ]
        );
    }

    /// An ignored key is neither missing nor extra.
    #[test]
    fn an_ignored_key_on_one_side_only_is_no_mismatch() {
        for args in [Args::Exact, Args::Subset, Args::Partial] {
            let config = TrajectoryConfig::new()
                .args(args)
                .ignore_path("*.trace_id")
                .unwrap();
            let call = json!({"sku": "S-1", "trace_id": "t"});
            assert_eq!(lines(json!({"sku": "S-1"}), call, &config), Some(vec![]));
            let step = json!({"sku": "S-1", "trace_id": "t"});
            assert_eq!(lines(step, json!({"sku": "S-1"}), &config), Some(vec![]));
        }
    }

    /// `$` is every argument of every tool: arguments of another type too.
    #[test]
    fn the_root_pattern_ignores_all_arguments() {
        let config = TrajectoryConfig::new()
            .args(Args::Exact)
            .ignore_path("$")
            .unwrap();
        assert_eq!(
            lines(json!({"sku": "S-1"}), json!("not json"), &config),
            Some(vec![])
        );
        assert_eq!(
            lines(json!({"sku": "S-1"}), json!({"n": 2}), &config),
            Some(vec![])
        );
        let step = Step::with_args("recommend", json!({"sku": "S-1"}));
        assert!(matches(
            &step,
            &ToolCall::new("recommend", json!([1])),
            &config
        ));
    }

    #[test]
    fn ignore_paths_and_field_matchers() {
        let config = TrajectoryConfig::new()
            .args(Args::Exact)
            .ignore_path("*.trace_id")
            .unwrap()
            .field(FieldSpec::numeric_tolerance("recommend.price", 1.0))
            .field(FieldSpec::date("recommend.ship_by"))
            .field(FieldSpec::fuzzy("recommend.note", 0.8).ignore_case());
        let step =
            json!({"price": 899, "ship_by": "2025-01-15", "note": "In stock", "trace_id": "a"});
        let near =
            json!({"price": 899.5, "ship_by": "15-JAN-2025", "note": "in stock.", "trace_id": "b"});
        assert_eq!(lines(step.clone(), near, &config), Some(vec![]));
        let far = json!({"price": 950, "ship_by": "2025-01-16", "note": "in stock.", "debug": 1});
        assert_eq!(
            lines(step, far, &config).unwrap(),
            [
                "recommend.price: values differ: expected 899, actual 950, outside tolerance 1 (diff 51)",
                "recommend.ship_by: values differ: expected \"2025-01-15\", actual \"2025-01-16\", dates differ: expected 2025-01-15, actual 2025-01-16",
                "recommend.debug: extra in actual: 1",
            ]
        );
    }
}
