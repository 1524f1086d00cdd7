//! What a trajectory is checked against: the fixture's `expected_trajectory` and the suite's
//! `[trajectory]` section.

use crate::accuracy::FieldSpec;
use crate::path::Pattern;
use serde::Deserialize;
use serde_json::Value;
use std::fmt;

/// How the expected steps are laid over the calls.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// The calls are the steps: same count, same order.
    Exact,
    /// The steps appear in this order among the calls; other calls may come between.
    #[default]
    InOrder,
    /// Each step is matched by a distinct call, in any order; other calls are allowed.
    AnyOrder,
    /// Every call matches a distinct step: no tool outside the list; steps may stay unmatched.
    Subset,
}

impl Mode {
    /// The name used in fixtures, configs and output.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Exact => "exact",
            Mode::InOrder => "in_order",
            Mode::AnyOrder => "any_order",
            Mode::Subset => "subset",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a step's `args` are compared with a call's arguments.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Args {
    /// Every key the step gives must be in the call and equal, recursively; the call's other
    /// keys are not compared.
    #[default]
    Partial,
    /// The arguments are equal as a whole.
    Exact,
}

/// `[trajectory]`: the default mode, how arguments compare, what is ignored or matched loosely,
/// and the pass threshold.
///
/// ```
/// use proposal_eval_engine::trajectory::{Args, Mode, TrajectoryConfig};
/// let config: TrajectoryConfig = toml::from_str(r#"
///     mode = "any_order"
///     args = "exact"
///     ignore_paths = ["*.trace_id"]
///     [[fields]]
///     path = "recommend.price"
///     match = "numeric_tolerance"
///     tolerance = 1
/// "#).unwrap();
/// assert_eq!((config.mode, config.args), (Mode::AnyOrder, Args::Exact));
/// assert_eq!(config.threshold, 1.0);
/// ```
#[cfg_attr(
    feature = "schema",
    derive(schemars::JsonSchema),
    schemars(with = "RawConfig")
)]
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(try_from = "RawConfig")]
pub struct TrajectoryConfig {
    /// The mode of a case whose `expected_trajectory` names none (default `in_order`).
    pub mode: Mode,
    /// `partial` (default) or `exact`.
    pub args: Args,
    /// Paths into the arguments, prefixed by the tool name (`recommend.request_id`,
    /// `*.trace_id`), never compared.
    pub ignore_paths: Vec<Pattern>,
    /// Field-accuracy matchers on argument values (`path = "recommend.price"`).
    pub fields: Vec<FieldSpec>,
    /// The case passes when the score reaches this (default 1, within 0..=1).
    pub threshold: f64,
}

impl Default for TrajectoryConfig {
    fn default() -> Self {
        TrajectoryConfig {
            mode: Mode::InOrder,
            args: Args::Partial,
            ignore_paths: Vec::new(),
            fields: Vec::new(),
            threshold: 1.0,
        }
    }
}

impl TrajectoryConfig {
    /// The defaults: `in_order`, partial arguments, nothing ignored, no matcher, threshold 1.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the default mode.
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// Sets how arguments compare.
    pub fn args(mut self, args: Args) -> Self {
        self.args = args;
        self
    }

    /// Adds a path (tool name first) that is never compared.
    pub fn ignore_path(mut self, pattern: &str) -> Result<Self, crate::path::PathError> {
        self.ignore_paths.push(Pattern::parse(pattern)?);
        Ok(self)
    }

    /// Adds a matcher for argument values (its path starts with the tool name).
    pub fn field(mut self, field: FieldSpec) -> Self {
        self.fields.push(field);
        self
    }

    /// Sets the pass threshold.
    ///
    /// # Panics
    /// When `threshold` is not within 0..=1.
    pub fn threshold(mut self, threshold: f64) -> Self {
        assert!(
            (0.0..=1.0).contains(&threshold),
            "trajectory threshold must be within 0 and 1, got {threshold}"
        );
        self.threshold = threshold;
        self
    }
}

#[derive(Deserialize)]
#[cfg_attr(
    feature = "schema",
    derive(schemars::JsonSchema),
    schemars(transform = config_aliases)
)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    mode: Mode,
    #[serde(default)]
    args: Args,
    #[serde(default, alias = "ignorePaths")]
    ignore_paths: Vec<Pattern>,
    #[serde(default)]
    fields: Vec<FieldSpec>,
    threshold: Option<f64>,
}

impl TryFrom<RawConfig> for TrajectoryConfig {
    type Error = String;

    fn try_from(raw: RawConfig) -> Result<Self, String> {
        let threshold = raw.threshold.unwrap_or(1.0);
        if !(0.0..=1.0).contains(&threshold) {
            return Err(format!(
                "trajectory `threshold` must be within 0 and 1, got {threshold}"
            ));
        }
        // `weight` and `required` mean something to field accuracy's score, nothing here: a
        // user who writes them believes they are in force.
        if let Some(f) = raw.fields.iter().find(|f| f.weight != 1.0 || !f.required) {
            return Err(format!(
                "[[trajectory.fields]] `{}`: `weight` and `required` are not used by trajectory (a step's arguments decide what is compared); remove them",
                f.path
            ));
        }
        Ok(TrajectoryConfig {
            mode: raw.mode,
            args: raw.args,
            ignore_paths: raw.ignore_paths,
            fields: raw.fields,
            threshold,
        })
    }
}

/// One expected step: a tool, and the arguments it must be called with (`None`: any).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// The tool's name.
    pub tool: String,
    /// The arguments; a step without them matches any arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
}

impl Step {
    /// A step of `tool` with any arguments.
    pub fn tool(tool: impl Into<String>) -> Step {
        Step {
            tool: tool.into(),
            args: None,
        }
    }

    /// A step of `tool` with `args`.
    pub fn with_args(tool: impl Into<String>, args: Value) -> Step {
        Step {
            tool: tool.into(),
            args: Some(args),
        }
    }
}

/// A fixture's `expected_trajectory`: the short form (a list of steps) or the long form
/// (`{"mode", "steps", "forbidden", "max_calls"}`).
///
/// ```
/// use proposal_eval_engine::trajectory::{ExpectedTrajectory, Mode};
/// use serde_json::json;
/// let short: ExpectedTrajectory = serde_json::from_value(json!([
///     {"tool": "inventory_lookup", "args": {"sku": "SKU-123"}}, {"tool": "recommend"}
/// ])).unwrap();
/// assert_eq!((short.steps.len(), short.mode), (2, None));
///
/// let long: ExpectedTrajectory = serde_json::from_value(json!({
///     "mode": "exact", "steps": [{"tool": "recommend"}],
///     "forbidden": ["delete_order"], "max_calls": 6
/// })).unwrap();
/// assert_eq!((long.mode, long.max_calls), (Some(Mode::Exact), Some(6)));
/// ```
#[cfg_attr(
    feature = "schema",
    derive(schemars::JsonSchema),
    schemars(with = "ExpectedForms")
)]
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct ExpectedTrajectory {
    /// The mode; `None` takes `[trajectory] mode`.
    pub mode: Option<Mode>,
    /// The steps.
    pub steps: Vec<Step>,
    /// Tools that must not be called at all.
    pub forbidden: Vec<String>,
    /// At most this many calls.
    pub max_calls: Option<usize>,
}

/// The two forms of `expected_trajectory`, for its JSON Schema (the reader is by hand, below).
#[cfg(feature = "schema")]
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum ExpectedForms {
    /// The short form: the steps, in the mode of `[trajectory] mode`.
    Steps(Vec<Step>),
    /// The long form.
    Long(LongForm),
}

/// The camelCase key `#[serde(alias)]` accepts, in the JSON Schema too.
#[cfg(feature = "schema")]
fn config_aliases(schema: &mut schemars::Schema) {
    crate::schema::aliases(schema, &[("ignore_paths", "ignorePaths")]);
}

#[derive(Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
struct LongForm {
    #[serde(default)]
    mode: Option<Mode>,
    steps: Vec<Step>,
    #[serde(default)]
    forbidden: Vec<String>,
    #[serde(default)]
    max_calls: Option<usize>,
}

/// `value` read as `T`; an error names the key it is about (`expected_trajectory.max_calls: ...`),
/// found by reading the value again from its text, since a `Value` carries no places.
fn located<T: serde::de::DeserializeOwned>(value: &Value) -> Result<T, String> {
    T::deserialize(value).map_err(|e| {
        let text = serde_json::to_string_pretty(value).unwrap_or_default();
        let key = match serde_json::from_str::<T>(&text) {
            Err(again) => crate::json::path_at(&text, again.line(), again.column()),
            Ok(_) => String::new(),
        };
        let dot = if key.is_empty() || key.starts_with('[') {
            ""
        } else {
            "."
        };
        format!("expected_trajectory{dot}{key}: {e}")
    })
}

// Read through a `Value` so that an error in either form says what is wrong in it (an untagged
// enum would only say that neither form fits).
impl<'de> Deserialize<'de> for ExpectedTrajectory {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let value = Value::deserialize(d)?;
        match value {
            Value::Array(_) => located::<Vec<Step>>(&value)
                .map(|steps| ExpectedTrajectory {
                    steps,
                    ..Default::default()
                })
                .map_err(D::Error::custom),
            Value::Object(_) => located::<LongForm>(&value)
                .map(|l| ExpectedTrajectory {
                    mode: l.mode,
                    steps: l.steps,
                    forbidden: l.forbidden,
                    max_calls: l.max_calls,
                })
                .map_err(D::Error::custom),
            other => Err(D::Error::custom(format!(
                "expected_trajectory is a JSON {}: write a list of steps `[{{\"tool\": \"name\", \"args\": {{...}}}}]`, or an object `{{\"mode\": ..., \"steps\": [...], \"forbidden\": [...], \"max_calls\": N}}`",
                crate::json::type_name(&other)
            ))),
        }
    }
}
