//! What a trajectory is checked against: the fixture's `expected_trajectory` and the suite's
//! `[trajectory]` section.

use crate::accuracy::FieldSpec;
use crate::path::Pattern;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
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
    /// Every call matches some step, any number of times: only the steps' tools (and arguments,
    /// where a step gives them); steps need not be called.
    Allowed,
}

impl Mode {
    /// The name used in fixtures, configs and output.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Exact => "exact",
            Mode::InOrder => "in_order",
            Mode::AnyOrder => "any_order",
            Mode::Subset => "subset",
            Mode::Allowed => "allowed",
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
    /// Every argument the call gives is among the step's, equal; the step may give more.
    Subset,
    /// The arguments are not compared: any call of the tool matches.
    Ignore,
}

impl Args {
    /// The name used in fixtures, configs and output.
    pub fn name(self) -> &'static str {
        match self {
            Args::Partial => "partial",
            Args::Exact => "exact",
            Args::Subset => "subset",
            Args::Ignore => "ignore",
        }
    }
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
    /// `[trajectory.tools.NAME]`: settings of one tool, by its exact name.
    pub tools: BTreeMap<String, ToolConfig>,
}

/// `[trajectory.tools.NAME]`: how the calls of one tool are compared.
///
/// ```
/// use proposal_eval_engine::trajectory::{Args, TrajectoryConfig};
/// let config: TrajectoryConfig = toml::from_str(r#"
///     [tools.send_reply]
///     args_match = "ignore"
/// "#).unwrap();
/// assert_eq!(config.tools["send_reply"].args_match, Some(Args::Ignore));
/// ```
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolConfig {
    /// How this tool's arguments compare, over `[trajectory] args`; a step's own `args_match`
    /// wins over it.
    #[serde(default)]
    pub args_match: Option<Args>,
}

impl Default for TrajectoryConfig {
    fn default() -> Self {
        TrajectoryConfig {
            mode: Mode::InOrder,
            args: Args::Partial,
            ignore_paths: Vec::new(),
            fields: Vec::new(),
            threshold: 1.0,
            tools: BTreeMap::new(),
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

    /// Sets how the arguments of one tool (by its exact name) compare.
    pub fn tool_args(mut self, tool: impl Into<String>, args: Args) -> Self {
        self.tools.entry(tool.into()).or_default().args_match = Some(args);
        self
    }

    /// How a call of `tool` compares with a step that names no `args_match`: the tool's
    /// `[trajectory.tools.NAME] args_match`, else `args`.
    pub(crate) fn args_of(&self, tool: &str) -> Args {
        if self.tools.is_empty() {
            return self.args;
        }
        self.tools
            .get(tool)
            .and_then(|t| t.args_match)
            .unwrap_or(self.args)
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
    #[serde(default)]
    tools: BTreeMap<String, ToolConfig>,
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
        if let Some(name) = raw
            .tools
            .keys()
            .find(|name| name.is_empty() || is_glob(name))
        {
            return Err(format!(
                "[trajectory.tools.\"{name}\"]: name one tool exactly (no `*` or `?`); a step's own `args_match` sets it for the steps of a glob"
            ));
        }
        Ok(TrajectoryConfig {
            mode: raw.mode,
            args: raw.args,
            ignore_paths: raw.ignore_paths,
            fields: raw.fields,
            threshold,
            tools: raw.tools,
        })
    }
}

/// One expected step: a tool (its name, or a glob such as `search_*`), the arguments it must
/// be called with (`None`: any), and how they compare.
///
/// Read from JSON, a step is checked before any model call: a `tool` that is empty, `args` that
/// are not an object (or null), an unknown key are errors naming the key.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Step {
    /// The tool's name, or a glob (`*` any text, `?` one character); a name without either is
    /// matched exactly.
    pub tool: String,
    /// The arguments; a step without them matches any arguments.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
    /// How `args` compare with the call's; `None` takes `[trajectory.tools.NAME] args_match`,
    /// then `[trajectory] args`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args_match: Option<Args>,
}

impl Step {
    /// A step of `tool` with any arguments.
    pub fn tool(tool: impl Into<String>) -> Step {
        Step {
            tool: tool.into(),
            args: None,
            args_match: None,
        }
    }

    /// A step of `tool` with `args`.
    pub fn with_args(tool: impl Into<String>, args: Value) -> Step {
        Step {
            tool: tool.into(),
            args: Some(args),
            args_match: None,
        }
    }

    /// The step with its own way of comparing arguments.
    pub fn args_match(mut self, args: Args) -> Step {
        self.args_match = Some(args);
        self
    }

    /// Whether the step is a bare tool name: no arguments, no `args_match`.
    pub(crate) fn is_bare(&self) -> bool {
        self.args.is_none() && self.args_match.is_none()
    }
}

/// A bare step: `vec!["delete_order".into()]` for `forbidden`.
impl From<&str> for Step {
    fn from(tool: &str) -> Step {
        Step::tool(tool)
    }
}

/// One expected step: a tool (its name or a glob), the arguments the call must have, and how
/// they compare.
#[derive(Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
struct RawStep {
    /// The tool's name, or a glob (`search_*`: `*` any text, `?` one character).
    #[cfg_attr(feature = "schema", schemars(length(min = 1)))]
    tool: String,
    /// The arguments the call must have; left out (or null): any.
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<serde_json::Map<String, Value>>")
    )]
    args: Option<Value>,
    /// How `args` compare: `partial`, `exact`, `subset` or `ignore`; over `[trajectory.tools.NAME]
    /// args_match` and `[trajectory] args`.
    #[serde(default)]
    args_match: Option<Args>,
}

impl TryFrom<RawStep> for Step {
    type Error = String;

    fn try_from(raw: RawStep) -> Result<Step, String> {
        if raw.tool.trim().is_empty() {
            return Err(format!(
                "`tool` is {:?}: name the tool the call must be of (`\"tool\": \"inventory_lookup\"`), or a glob (`\"search_*\"`)",
                raw.tool
            ));
        }
        if let Some(args) = raw.args.as_ref().filter(|a| !a.is_object()) {
            return Err(format!(
                "`args` is {}: a step's arguments are an object of argument names and values (`\"args\": {{\"category\": \"laptop\"}}`), or left out to match any",
                crate::render::describe_type(args)
            ));
        }
        Ok(Step {
            tool: raw.tool,
            args: raw.args,
            args_match: raw.args_match,
        })
    }
}

impl<'de> Deserialize<'de> for Step {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let raw = RawStep::deserialize(d)?;
        Step::try_from(raw).map_err(D::Error::custom)
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for Step {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Step".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        RawStep::json_schema(generator)
    }
}

/// A `forbidden` entry: a tool name (or glob), or a step whose arguments make a call forbidden.
#[cfg(feature = "schema")]
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum ForbiddenForm {
    /// A tool name or glob: every call of it is forbidden.
    Tool(#[schemars(length(min = 1))] String),
    /// A step: a call matching it is forbidden.
    Step(Step),
}

/// How many calls of one tool (or glob) there may be: `{"min": 1, "max": 3}`.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct CallCount {
    /// At least this many calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<usize>,
    /// At most this many calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<usize>,
}

/// A fixture's `expected_trajectory`: the short form (a list of steps) or the long form
/// (`{"mode", "steps", "forbidden", "min_calls", "max_calls", "calls"}`).
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
///     "forbidden": ["delete_*", {"tool": "refund", "args": {"override": true}}],
///     "max_calls": 6, "calls": {"recommend": {"min": 1, "max": 1}}
/// })).unwrap();
/// assert_eq!((long.mode, long.max_calls), (Some(Mode::Exact), Some(6)));
/// assert_eq!(long.forbidden[1].tool, "refund");
/// assert_eq!(long.calls["recommend"].max, Some(1));
///
/// let err = serde_json::from_value::<ExpectedTrajectory>(json!([
///     {"tool": "inventory_lookup", "args": "category=laptop"}
/// ])).unwrap_err();
/// assert!(err.to_string().starts_with("expected_trajectory step 1: `args` is a string"));
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
    /// Calls that must not happen: a bare step forbids every call of its tool, one with `args`
    /// the calls that match it.
    #[serde(serialize_with = "forbidden_entries")]
    pub forbidden: Vec<Step>,
    /// At least this many calls.
    pub min_calls: Option<usize>,
    /// At most this many calls.
    pub max_calls: Option<usize>,
    /// How many calls of each tool (name or glob) there may be.
    pub calls: BTreeMap<String, CallCount>,
}

/// A bare forbidden step is written as its tool's name, as a fixture has it.
fn forbidden_entries<S: serde::Serializer>(entries: &[Step], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = s.serialize_seq(Some(entries.len()))?;
    for entry in entries {
        if entry.is_bare() {
            seq.serialize_element(&entry.tool)?;
        } else {
            seq.serialize_element(entry)?;
        }
    }
    seq.end()
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

/// The long form: the mode, the steps, the forbidden calls and the bounds on the calls' count.
#[derive(Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
struct LongForm {
    // Steps and forbidden entries are read one by one, to name the one that is wrong.
    #[serde(default)]
    mode: Option<Mode>,
    #[cfg_attr(feature = "schema", schemars(with = "Vec<Step>"))]
    steps: Vec<Value>,
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(with = "Vec<ForbiddenForm>"))]
    forbidden: Vec<Value>,
    #[serde(default)]
    min_calls: Option<usize>,
    #[serde(default)]
    max_calls: Option<usize>,
    #[serde(default)]
    calls: BTreeMap<String, CallCount>,
}

/// The steps of a list, each read with its place in the message of an error: `step 2: ...`.
fn steps(list: Vec<Value>, what: &str) -> Result<Vec<Step>, String> {
    list.into_iter()
        .enumerate()
        .map(|(k, v)| {
            let bare = match &v {
                Value::String(tool) if what == "forbidden" => Some(tool.clone()),
                _ => None,
            };
            match bare {
                Some(tool) => Step::try_from(RawStep {
                    tool,
                    args: None,
                    args_match: None,
                }),
                None => serde_json::from_value::<Step>(v).map_err(|e| e.to_string()),
            }
            .map_err(|e| format!("expected_trajectory {what} {}: {e}", k + 1))
        })
        .collect()
}

impl TryFrom<LongForm> for ExpectedTrajectory {
    type Error = String;

    fn try_from(l: LongForm) -> Result<Self, String> {
        if let (Some(min), Some(max)) = (l.min_calls, l.max_calls) {
            if min > max {
                return Err(format!(
                    "expected_trajectory: `min_calls` ({min}) is more than `max_calls` ({max}): no trajectory can pass"
                ));
            }
        }
        for (tool, count) in &l.calls {
            if tool.trim().is_empty() {
                return Err(
                    "expected_trajectory: `calls` has an empty tool name: key each count by a tool's name or a glob"
                        .into(),
                );
            }
            if let (Some(min), Some(max)) = (count.min, count.max) {
                if min > max {
                    return Err(format!(
                        "expected_trajectory: calls.{tool}: `min` ({min}) is more than `max` ({max}): no trajectory can pass"
                    ));
                }
            }
        }
        Ok(ExpectedTrajectory {
            mode: l.mode,
            steps: steps(l.steps, "step")?,
            forbidden: steps(l.forbidden, "forbidden")?,
            min_calls: l.min_calls,
            max_calls: l.max_calls,
            calls: l.calls,
        })
    }
}

/// `value` read as `T`; an error names the key it is about (`expected_trajectory.max_calls: ...`),
/// found by reading the value again from its text, since a `Value` carries no places.
fn located<T: serde::de::DeserializeOwned>(value: &Value) -> Result<T, String> {
    T::deserialize(value).map_err(|e| {
        let text = serde_json::to_string_pretty(value).unwrap_or_default();
        let key = match serde_json::from_slice::<T>(text.as_bytes()) {
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
        let read = match value {
            Value::Array(list) => steps(list, "step").map(|steps| ExpectedTrajectory {
                steps,
                ..Default::default()
            }),
            Value::Object(_) => {
                located::<LongForm>(&value).and_then(ExpectedTrajectory::try_from)
            }
            other => {
                return Err(D::Error::custom(format!(
                    "expected_trajectory is a JSON {}: write a list of steps `[{{\"tool\": \"name\", \"args\": {{...}}}}]`, or an object `{{\"mode\": ..., \"steps\": [...], \"forbidden\": [...], \"max_calls\": N}}`",
                    crate::json::type_name(&other)
                )))
            }
        };
        read.map_err(D::Error::custom)
    }
}

/// Whether a tool name in a step is a glob: it holds `*` or `?`.
pub(crate) fn is_glob(name: &str) -> bool {
    name.bytes().any(|b| b == b'*' || b == b'?')
}

/// Whether `tool` (a call's) is the one `pattern` (a step's) names: equal, or matched by the
/// glob (`*` any text, maybe none; `?` one character).
pub(crate) fn tool_matches(pattern: &str, tool: &str) -> bool {
    if !is_glob(pattern) {
        return pattern == tool;
    }
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), tool.chars().collect());
    // The classic two-pointer walk: on a mismatch, the last `*` takes one more character.
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < t.len() {
        // `*` first: a `*` in the name is matched by the pattern's `*` as any text, not as itself.
        if i < p.len() && p[i] == '*' {
            star = Some((i, j));
            i += 1;
        } else if i < p.len() && (p[i] == '?' || p[i] == t[j]) {
            i += 1;
            j += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}
