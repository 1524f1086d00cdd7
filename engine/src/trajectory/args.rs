//! Comparing a step's arguments with a call's: partial or exact, under the ignore paths and the
//! field matchers, every difference with its pasteable path (`recommend.price`).

use super::config::{Args, Step, TrajectoryConfig};
use super::extract::ToolCall;
use crate::json::json_eq;
use crate::path::{Location, Segment};
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
    if step.tool != call.tool {
        return None;
    }
    let mut out = Vec::new();
    if let Some(expected) = &step.args {
        if !json_eq(expected, &call.args) {
            let mut walk = Walk::new(config, &step.tool, Some(&mut out));
            walk.node(expected, &call.args);
        }
    }
    Some(out)
}

/// Whether `call` matches `step`: [`compare`] without writing any mismatch, stopping at the
/// first. What the alignment asks of every pair of the same tool.
pub(crate) fn matches(step: &Step, call: &ToolCall, config: &TrajectoryConfig) -> bool {
    if step.tool != call.tool {
        return false;
    }
    let Some(expected) = &step.args else {
        return true;
    };
    if json_eq(expected, &call.args) {
        return true;
    }
    let mut walk = Walk::new(config, &step.tool, None);
    walk.node(expected, &call.args);
    !walk.failed
}

/// A walk over the two argument documents where they differ. With `out` it writes every
/// mismatch; without, it only notes that there is one and stops.
struct Walk<'c, 'o> {
    config: &'c TrajectoryConfig,
    /// The path here, tool name first; grown and shrunk in place.
    path: Location,
    out: Option<&'o mut Vec<ArgMismatch>>,
    failed: bool,
}

impl<'c, 'o> Walk<'c, 'o> {
    fn new(
        config: &'c TrajectoryConfig,
        tool: &str,
        out: Option<&'o mut Vec<ArgMismatch>>,
    ) -> Self {
        Walk {
            config,
            path: Location(vec![Segment::Key(tool.to_string())]),
            out,
            failed: false,
        }
    }

    /// A mismatch here; `why` is written only when mismatches are kept.
    fn push(&mut self, why: impl FnOnce() -> String) {
        self.failed = true;
        if let Some(out) = &mut self.out {
            out.push(ArgMismatch {
                location: self.path.clone(),
                why: why(),
            });
        }
    }

    /// Whether the walk can stop: a probe stops at the first mismatch.
    fn done(&self) -> bool {
        self.failed && self.out.is_none()
    }

    /// Whether the current path is ignored. Asked only where the two sides differ, so an equal
    /// argument costs one equality test.
    fn ignored(&self) -> bool {
        self.config
            .ignore_paths
            .iter()
            .any(|p| p.covers(&self.path))
    }

    fn child(&mut self, segment: Segment, e: Option<&Value>, a: Option<&Value>) {
        self.path.0.push(segment);
        match (e, a) {
            (Some(e), Some(a)) => self.node(e, a),
            (Some(_), None) if !self.ignored() => self.push(|| "missing in actual".into()),
            (None, Some(a)) if !self.ignored() => {
                self.push(|| format!("extra in actual: {}", compact(a, MAX)))
            }
            _ => {}
        }
        self.path.0.pop();
    }

    fn node(&mut self, e: &Value, a: &Value) {
        if json_eq(e, a) || self.ignored() {
            return;
        }
        if let Some(spec) = self
            .config
            .fields
            .iter()
            .find(|f| f.path.matches(&self.path))
        {
            if self.out.is_none() {
                self.failed = !crate::accuracy::holds(spec, e, a);
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
            (Value::Object(em), Value::Object(am)) => {
                for (k, ev) in em {
                    if self.done() {
                        return;
                    }
                    self.child(Segment::Key(k.clone()), Some(ev), am.get(k));
                }
                if self.config.args == Args::Exact {
                    for (k, av) in am.iter().filter(|(k, _)| !em.contains_key(*k)) {
                        if self.done() {
                            return;
                        }
                        self.child(Segment::Key(k.clone()), None, Some(av));
                    }
                }
            }
            (Value::Array(ea), Value::Array(aa)) => {
                for i in 0..ea.len().max(aa.len()) {
                    if self.done() {
                        return;
                    }
                    self.child(Segment::Index(i), ea.get(i), aa.get(i));
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
