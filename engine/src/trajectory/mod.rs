//! What the agent did: the tool calls a model asked for, read out of its responses, checked
//! against a case's `expected_trajectory` (the `trajectory` evaluator).
//!
//! - [`tool_calls`] reads one response (OpenAI Chat Completions, OpenAI Responses, Anthropic
//!   Messages; whole or streamed, as a recording keeps a stream) into [`ToolCall`]s. The calls of
//!   one response ([`ToolCall::in_response`]) form a group: asked for together, in no order.
//! - [`evaluate`] lays the [`ExpectedTrajectory`]'s steps over the calls in a [`Mode`] and
//!   scores them:
//!   - `exact`: the calls are the steps (any order inside a group); score = steps matched at
//!     their place / max(steps, calls);
//!   - `in_order`: the longest chain of steps matched by calls in the same order (any order
//!     inside a group; other calls may come between) / steps;
//!   - `any_order`: steps matched by distinct calls under a maximum matching / steps;
//!   - `subset`: calls matching distinct steps / calls (1 with no call);
//!   - `allowed`: calls matching some step, any number of times / calls (1 with no call).
//!
//!   A call matching a `forbidden` entry (a tool, a glob or a step with arguments), fewer calls
//!   than `min_calls` or more than `max_calls`, a tool of `calls` outside its `min`/`max`: the
//!   score is 0. The case passes when the score reaches `threshold` (default 1).
//! - A step matches a call of its tool (a name, or a glob: `search_*`) whose arguments agree as
//!   its `args_match` says, else the tool's `[trajectory.tools.NAME] args_match`, else
//!   `[trajectory] args`: `partial` (default: every key the step gives is in the call and
//!   equal, recursively; lists element by element, the same length), `exact` (equal as a
//!   whole), `subset` (every argument of the call is among the step's, equal), `ignore`.
//!   Numbers compare by value, as in the strict comparison. `ignore_paths` and the field
//!   matchers of `fields` (numeric tolerance, dates, fuzzy text) apply to the paths
//!   `tool.argument...`; a step without `args` matches any arguments.
//! - [`TrajectoryVerdict::render`] shows the alignment: each step with the call it matched
//!   (calls count from 1: `#3 recommend`), or the closest call of its tool with every argument
//!   mismatch at a pasteable path (`recommend.price: values differ: expected 899, actual 950`);
//!   the calls of one response stand together under `in parallel (model call N):`.
//!
//! ```
//! use proposal_eval_engine::trajectory::{evaluate, tool_calls, ExpectedTrajectory, TrajectoryConfig};
//! use serde_json::json;
//! let response = json!({"content": [
//!     {"type": "tool_use", "name": "inventory_lookup", "input": {"sku": "SKU-123"}},
//!     {"type": "tool_use", "name": "delete_order", "input": {"id": 7}}
//! ]});
//! let calls = tool_calls(&response);
//! let expected: ExpectedTrajectory = serde_json::from_value(json!({
//!     "mode": "any_order", "steps": [{"tool": "inventory_lookup"}], "forbidden": ["delete_order"]
//! })).unwrap();
//! let verdict = evaluate(&expected, &calls, &TrajectoryConfig::new());
//! assert!(!verdict.passed);
//! assert!(verdict.render(&calls).contains("  #2 delete_order: forbidden tool\n"));
//! ```

mod align;
mod args;
mod config;
mod extract;
mod render;

pub use align::{
    evaluate, Closest, CountMiss, ForbiddenCall, StepOutcome, Taken, TrajectoryVerdict,
};
pub use args::ArgMismatch;
pub use config::{Args, CallCount, ExpectedTrajectory, Mode, Step, ToolConfig, TrajectoryConfig};
pub use extract::{tool_calls, ToolCall};
pub use render::trajectory_text;

#[cfg(test)]
mod tests;
