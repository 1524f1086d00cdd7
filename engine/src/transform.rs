//! Transforms and transformers: how a field is rewritten before strict comparison.
//!
//! A [`Transform`] turns one value (or nothing, for a field that is missing) into another: one of
//! the [`Builtin`]s named in configs, or a Rust closure. A [`Transformer`] says where and when a
//! transform applies: its strategy (which sides, missing or present), and [`Condition`]s read from
//! the proposal itself, the paired actual, or the paired expected.
//!
//! The clock is never read here: `today_utc_midnight` and `now_utc` use [`Context::now`], which the
//! caller fills in (during replay, with the recording's time).
//!
//! ```
//! use proposal_eval_engine::transform::{Builtin, Context, Transform};
//! use serde_json::json;
//! let ctx = Context::at("2025-03-04T15:16:17Z".parse().unwrap());
//! let midnight = Transform::from(Builtin::TodayUtcMidnight);
//! assert_eq!(midnight.apply(None, &ctx), json!("2025-03-04T00:00:00Z"));
//! let shout = Transform::custom(|v, _| json!(v.and_then(|v| v.as_str()).unwrap_or("").to_uppercase()));
//! assert_eq!(shout.apply(Some(&json!("hi")), &ctx), json!("HI"));
//! ```

use crate::dates::read_date;
use crate::json::json_cmp;
use crate::numbers::read_number;
use crate::path::{Location, PathError};
use chrono::{DateTime, SecondsFormat, Utc};
use serde::de::{self, Deserializer};
use serde::Deserialize;
use serde_json::Value;
use std::fmt;
use std::sync::Arc;

/// What the engine may know about the world: injected, never read from the system.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Context {
    /// "Now": the recording's time during replay, the real time otherwise.
    pub now: DateTime<Utc>,
}

impl Context {
    /// A context whose clock says `now`.
    pub fn at(now: DateTime<Utc>) -> Context {
        Context { now }
    }
}

/// The transforms that can be named in a config file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Builtin {
    /// `"YYYY-MM-DDT00:00:00Z"` of [`Context::now`]; ignores its input.
    TodayUtcMidnight,
    /// [`Context::now`] in RFC 3339 (`2025-03-04T15:16:17Z`); ignores its input.
    NowUtc,
    /// Lower-cases a string.
    Lowercase,
    /// Upper-cases a string.
    Uppercase,
    /// Removes leading and trailing white space from a string.
    Trim,
    /// Trims a string and turns every run of white space into one space.
    CollapseWhitespace,
    /// Keeps only the ASCII digits of a string (`"+1-555-0100"` becomes `"15550100"`).
    DigitsOnly,
    /// Reads a date string and writes it as `YYYY-MM-DD`, by the rule of [`crate::dates`] with
    /// its default formats (`2025-01-15T10:30:00Z`, `15-JAN-2025`, `Jan 15, 2025`). A numeric
    /// day and month (`03/02/2025`) is left as it is: which order is meant is not written there.
    DateIso,
    /// Turns a numeric string into a number, by the rule of [`crate::numbers`] (`"1,500.00"`
    /// is 1500, `"1,50"` is left as it is); writes integral numbers as integers.
    Number,
    /// Sorts an array (numbers by value, then strings, then the rest by their JSON text).
    Sort,
}

impl Builtin {
    /// Every builtin, in the order the docs list them.
    pub const ALL: [Builtin; 10] = [
        Builtin::TodayUtcMidnight,
        Builtin::NowUtc,
        Builtin::Lowercase,
        Builtin::Uppercase,
        Builtin::Trim,
        Builtin::CollapseWhitespace,
        Builtin::DigitsOnly,
        Builtin::DateIso,
        Builtin::Number,
        Builtin::Sort,
    ];

    /// The name used in config files.
    pub fn name(self) -> &'static str {
        match self {
            Builtin::TodayUtcMidnight => "today_utc_midnight",
            Builtin::NowUtc => "now_utc",
            Builtin::Lowercase => "lowercase",
            Builtin::Uppercase => "uppercase",
            Builtin::Trim => "trim",
            Builtin::CollapseWhitespace => "collapse_whitespace",
            Builtin::DigitsOnly => "digits_only",
            Builtin::DateIso => "date_iso",
            Builtin::Number => "number",
            Builtin::Sort => "sort",
        }
    }

    /// Applies the transform. A value it does not apply to (a number given to `lowercase`, a
    /// string that is no date given to `date_iso`) comes back unchanged, so the comparison shows
    /// it; a missing input gives `null`, except for the clock transforms.
    pub fn apply(self, value: Option<&Value>, ctx: &Context) -> Value {
        let map_str = |f: &dyn Fn(&str) -> String| match value {
            Some(Value::String(s)) => Value::String(f(s)),
            Some(other) => other.clone(),
            None => Value::Null,
        };
        match self {
            Builtin::TodayUtcMidnight => {
                Value::String(ctx.now.format("%Y-%m-%dT00:00:00Z").to_string())
            }
            Builtin::NowUtc => Value::String(ctx.now.to_rfc3339_opts(SecondsFormat::AutoSi, true)),
            Builtin::Lowercase => map_str(&|s| s.to_lowercase()),
            Builtin::Uppercase => map_str(&|s| s.to_uppercase()),
            Builtin::Trim => map_str(&|s| s.trim().to_string()),
            Builtin::CollapseWhitespace => {
                map_str(&|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
            }
            Builtin::DigitsOnly => map_str(&|s| s.chars().filter(char::is_ascii_digit).collect()),
            Builtin::DateIso => match value {
                Some(Value::String(s)) => match read_date(s, &[]) {
                    Ok(d) => Value::String(d.format("%Y-%m-%d").to_string()),
                    Err(_) => Value::String(s.clone()),
                },
                Some(other) => other.clone(),
                None => Value::Null,
            },
            Builtin::Number => match value {
                Some(Value::String(s)) => match read_number(s) {
                    Some(f) => canonical_number(f),
                    None => Value::String(s.clone()),
                },
                Some(Value::Number(n)) => match n.as_f64() {
                    Some(f) if n.is_f64() => canonical_number(f),
                    _ => Value::Number(n.clone()),
                },
                Some(other) => other.clone(),
                None => Value::Null,
            },
            Builtin::Sort => match value {
                Some(Value::Array(items)) => {
                    let mut items = items.clone();
                    items.sort_by(json_cmp);
                    Value::Array(items)
                }
                Some(other) => other.clone(),
                None => Value::Null,
            },
        }
    }
}

impl fmt::Display for Builtin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

fn canonical_number(f: f64) -> Value {
    // Integral values below 2^53 are exact as integers, so `1500.00` and `1500` agree.
    if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 {
        Value::from(f as i64)
    } else {
        serde_json::Number::from_f64(f)
            .map(Value::Number)
            .unwrap_or(Value::Null)
    }
}

/// The function type of a closure transform: the present value (or `None`) and the context in,
/// the new value out.
pub type TransformFn = dyn Fn(Option<&Value>, &Context) -> Value + Send + Sync;

/// A transform: a [`Builtin`] (what config files name) or a Rust closure.
#[derive(Clone)]
pub enum Transform {
    /// A builtin, by name in configs.
    Builtin(Builtin),
    /// A closure given in Rust.
    Custom(Arc<TransformFn>),
}

impl Transform {
    /// A transform from a closure.
    pub fn custom(f: impl Fn(Option<&Value>, &Context) -> Value + Send + Sync + 'static) -> Self {
        Transform::Custom(Arc::new(f))
    }

    /// Applies the transform to a present value, or to nothing for a missing field.
    pub fn apply(&self, value: Option<&Value>, ctx: &Context) -> Value {
        match self {
            Transform::Builtin(b) => b.apply(value, ctx),
            Transform::Custom(f) => f(value, ctx),
        }
    }
}

impl Transform {
    /// The transformed value, or `None` when the transform leaves `current` as it is. The string
    /// builtins answer that without allocating, which keeps a transformer on an already-clean
    /// field free.
    pub fn rewrite(&self, current: &Value, ctx: &Context) -> Option<Value> {
        if let (Transform::Builtin(b), Value::String(s)) = (self, current) {
            let unchanged = match b {
                Builtin::Trim => s.trim().len() == s.len(),
                Builtin::Lowercase => s.chars().all(|c| c.is_lowercase() || !c.is_alphabetic()),
                Builtin::Uppercase => s.chars().all(|c| c.is_uppercase() || !c.is_alphabetic()),
                Builtin::DigitsOnly => s.bytes().all(|b| b.is_ascii_digit()),
                Builtin::CollapseWhitespace => {
                    let mut after_space = true;
                    let clean = s.chars().all(|c| {
                        let ok = !c.is_whitespace() || (c == ' ' && !after_space);
                        after_space = c.is_whitespace();
                        ok
                    });
                    clean && !after_space || s.is_empty()
                }
                _ => false,
            };
            if unchanged {
                return None;
            }
        }
        let new = self.apply(Some(current), ctx);
        (new != *current).then_some(new)
    }
}

impl From<Builtin> for Transform {
    fn from(b: Builtin) -> Self {
        Transform::Builtin(b)
    }
}

impl fmt::Debug for Transform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Transform::Builtin(b) => write!(f, "Builtin({b})"),
            Transform::Custom(_) => f.write_str("Custom(<closure>)"),
        }
    }
}

impl fmt::Display for Transform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Transform::Builtin(b) => f.write_str(b.name()),
            Transform::Custom(_) => f.write_str("<closure>"),
        }
    }
}

impl<'de> Deserialize<'de> for Transform {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Builtin::deserialize(deserializer).map(Transform::Builtin)
    }
}

/// The modern way to say where a transformer applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// The field missing in expected gets `transform()`; present, it is compared as it is.
    AddMissingOnly,
    /// The field is transformed on every side where it is present.
    TransformAlways,
    /// The field is transformed only when it is present on both sides.
    TransformExisting,
}

/// Legacy `on_missing`: what to do on a side (of `apply_to`) where the field is missing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum OnMissing {
    /// Leave it missing.
    Skip,
    /// Add `transform()` there, creating missing objects on the way. Where the side cannot take
    /// it (a scalar, or an array too short, on the way) nothing is added and the side stays as
    /// it was.
    Add,
    /// Report a `TransformerFailed` mismatch.
    Fail,
}

/// Legacy `on_existing`: what to do on a side (of `apply_to`) where the field is present.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum OnExisting {
    /// Replace it by `transform(value)`.
    Transform,
    /// Leave it as it is.
    Skip,
}

/// Legacy `apply_to`: which sides a transformer touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ApplyTo {
    /// Expected and actual.
    Both,
    /// Only the expected proposal.
    Expected,
    /// Only the actual proposal.
    Actual,
}

impl ApplyTo {
    /// Whether the expected side is touched.
    pub fn expected(self) -> bool {
        matches!(self, ApplyTo::Both | ApplyTo::Expected)
    }
    /// Whether the actual side is touched.
    pub fn actual(self) -> bool {
        matches!(self, ApplyTo::Both | ApplyTo::Actual)
    }
}

/// Where a transformer's conditions are read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ConditionTarget {
    /// `self`: the proposal being transformed.
    #[default]
    #[serde(rename = "self")]
    Own,
    /// The actual proposal of the pair. Any such transformer switches on the paired flow: expected
    /// is compared as written (not normalized) and transformed by what the actual says.
    Actual,
    /// The expected proposal of the pair.
    Expected,
}

/// One condition: the value at `path` equals one of, differs from all of, or exists.
/// Every given test must hold.
///
/// ```
/// use proposal_eval_engine::transform::Condition;
/// use serde_json::json;
/// let c = Condition::equals("changeType", ["change", "update"]).unwrap();
/// assert!(c.holds(&json!({"changeType": "update"})));
/// assert!(!c.holds(&json!({"changeType": "creation"})));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", schemars(transform = condition_aliases))]
pub struct Condition {
    /// Where to read, relative to the proposal.
    #[serde(deserialize_with = "crate::path::deserialize_location")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub path: Location,
    /// Holds when the value equals any of these.
    #[serde(default, deserialize_with = "one_or_many_values")]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<crate::schema::OneOrMany<Value>>")
    )]
    pub equals: Option<Vec<Value>>,
    /// Holds when the value (or its absence) equals none of these.
    #[serde(default, alias = "notEquals", deserialize_with = "one_or_many_values")]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<crate::schema::OneOrMany<Value>>")
    )]
    pub not_equals: Option<Vec<Value>>,
    /// Holds when the field's presence is this.
    #[serde(default)]
    pub exists: Option<bool>,
}

fn one_or_many_values<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<Value>>, D::Error> {
    Ok(Some(match Value::deserialize(d)? {
        Value::Array(items) => items,
        one => vec![one],
    }))
}

fn values(v: impl Into<Value>) -> Vec<Value> {
    match v.into() {
        Value::Array(items) => items,
        one => vec![one],
    }
}

impl Condition {
    /// Holds when the value at `path` equals `value` (an array means: any of these).
    pub fn equals(path: &str, value: impl Into<Value>) -> Result<Condition, PathError> {
        Ok(Condition {
            path: Location::parse(path)?,
            equals: Some(values(value)),
            ..Condition::default()
        })
    }

    /// Holds when the value at `path` equals none of `value` (an array means: none of these).
    pub fn not_equals(path: &str, value: impl Into<Value>) -> Result<Condition, PathError> {
        Ok(Condition {
            path: Location::parse(path)?,
            not_equals: Some(values(value)),
            ..Condition::default()
        })
    }

    /// Holds when the field at `path` is present (`true`) or absent (`false`).
    pub fn exists(path: &str, exists: bool) -> Result<Condition, PathError> {
        Ok(Condition {
            path: Location::parse(path)?,
            exists: Some(exists),
            ..Condition::default()
        })
    }

    /// Whether the condition holds on this proposal.
    pub fn holds(&self, proposal: &Value) -> bool {
        let found = self.path.get(proposal);
        if let Some(want) = self.exists {
            if found.is_some() != want {
                return false;
            }
        }
        if let Some(any) = &self.equals {
            match found {
                Some(v) if any.iter().any(|x| crate::json::json_eq(x, v)) => {}
                _ => return false,
            }
        }
        if let (Some(none), Some(v)) = (&self.not_equals, found) {
            if none.iter().any(|x| crate::json::json_eq(x, v)) {
                return false;
            }
        }
        true
    }
}

/// `when`: one condition or a list of them (all must hold).
fn one_or_many_conditions<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Condition>, D::Error> {
    struct V;
    impl<'de> de::Visitor<'de> for V {
        type Value = Vec<Condition>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a condition {path, equals | not_equals | exists} or a list of them")
        }
        fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            Condition::deserialize(de::value::MapAccessDeserializer::new(map)).map(|c| vec![c])
        }
        fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
            Vec::<Condition>::deserialize(de::value::SeqAccessDeserializer::new(seq))
        }
    }
    let conditions = d.deserialize_any(V)?;
    // A condition without a test would always hold: a transformer meant for some proposals
    // would silently apply to all.
    if let Some(c) = conditions
        .iter()
        .find(|c| c.equals.is_none() && c.not_equals.is_none() && c.exists.is_none())
    {
        return Err(de::Error::custom(format!(
            "the condition on `{}` tests nothing: give it equals, not_equals or exists",
            c.path
        )));
    }
    Ok(conditions)
}

/// A transformer: a transform, where it applies, and when.
///
/// The modern `strategy` and the legacy `on_missing` / `on_existing` / `apply_to` both resolve
/// to the four fields below. `add_missing_only` is `on_missing = add, on_existing = skip,
/// apply_to = expected`; `transform_always` is `on_missing = skip, on_existing = transform,
/// apply_to = both`; `transform_existing` is that with `only_when_both_present`.
///
/// ```
/// use proposal_eval_engine::transform::{Builtin, Condition, ConditionTarget, Strategy, Transformer};
/// let t = Transformer::new(Builtin::TodayUtcMidnight, Strategy::AddMissingOnly)
///     .condition_target(ConditionTarget::Actual)
///     .when(Condition::equals("changeType", "change").unwrap());
/// assert_eq!(t.when.len(), 1);
/// ```
#[derive(Clone, Debug, Deserialize)]
#[cfg_attr(
    feature = "schema",
    derive(schemars::JsonSchema),
    schemars(with = "RawTransformer")
)]
#[serde(try_from = "RawTransformer")]
pub struct Transformer {
    /// The transform.
    pub transform: Transform,
    /// What to do on a side where the field is missing.
    pub on_missing: OnMissing,
    /// What to do on a side where the field is present.
    pub on_existing: OnExisting,
    /// Which sides are touched.
    pub apply_to: ApplyTo,
    /// Touch nothing unless the field is present on both sides (`transform_existing`).
    pub only_when_both_present: bool,
    /// Where the conditions are read.
    pub condition_target: ConditionTarget,
    /// Conditions, all of which must hold (empty: always).
    pub when: Vec<Condition>,
}

impl Transformer {
    /// A transformer with a modern strategy, no conditions, reading conditions from itself.
    pub fn new(transform: impl Into<Transform>, strategy: Strategy) -> Transformer {
        let (on_missing, on_existing, apply_to, both) = match strategy {
            Strategy::AddMissingOnly => {
                (OnMissing::Add, OnExisting::Skip, ApplyTo::Expected, false)
            }
            Strategy::TransformAlways => {
                (OnMissing::Skip, OnExisting::Transform, ApplyTo::Both, false)
            }
            Strategy::TransformExisting => {
                (OnMissing::Skip, OnExisting::Transform, ApplyTo::Both, true)
            }
        };
        Transformer {
            transform: transform.into(),
            on_missing,
            on_existing,
            apply_to,
            only_when_both_present: both,
            condition_target: ConditionTarget::Own,
            when: Vec::new(),
        }
    }

    /// A transformer in the legacy form (`on_missing`, `on_existing`, `apply_to`) of older
    /// validators, which configs still accept.
    pub fn legacy(
        transform: impl Into<Transform>,
        on_missing: OnMissing,
        on_existing: OnExisting,
        apply_to: ApplyTo,
    ) -> Transformer {
        Transformer {
            on_missing,
            on_existing,
            apply_to,
            ..Transformer::new(transform, Strategy::TransformAlways)
        }
    }

    /// Reads the conditions from `target`.
    pub fn condition_target(mut self, target: ConditionTarget) -> Self {
        self.condition_target = target;
        self
    }

    /// Adds a condition (all conditions must hold).
    pub fn when(mut self, condition: Condition) -> Self {
        self.when.push(condition);
        self
    }

    /// Whether every condition holds on `proposal`.
    pub fn conditions_hold(&self, proposal: &Value) -> bool {
        self.when.iter().all(|c| c.holds(proposal))
    }
}

#[derive(Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", schemars(transform = transformer_aliases))]
struct RawTransformer {
    transform: Transform,
    #[serde(default)]
    strategy: Option<Strategy>,
    #[serde(default, alias = "conditionTarget")]
    condition_target: ConditionTarget,
    #[serde(default, deserialize_with = "one_or_many_conditions")]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "crate::schema::OneOrMany<Condition>")
    )]
    when: Vec<Condition>,
    #[serde(default, alias = "onMissing")]
    on_missing: Option<OnMissing>,
    #[serde(default, alias = "onExisting")]
    on_existing: Option<OnExisting>,
    #[serde(default, alias = "applyTo")]
    apply_to: Option<ApplyTo>,
}

impl TryFrom<RawTransformer> for Transformer {
    type Error = String;
    fn try_from(raw: RawTransformer) -> Result<Self, String> {
        let legacy =
            raw.on_missing.is_some() || raw.on_existing.is_some() || raw.apply_to.is_some();
        let base = match (raw.strategy, legacy) {
            (Some(_), true) => {
                return Err(
                    "give either `strategy` or the legacy `on_missing` / `on_existing` / \
                            `apply_to`, not both"
                        .into(),
                )
            }
            (Some(strategy), false) => Transformer::new(raw.transform, strategy),
            (None, _) => Transformer::legacy(
                raw.transform,
                raw.on_missing.unwrap_or(OnMissing::Skip),
                raw.on_existing.unwrap_or(OnExisting::Transform),
                raw.apply_to.unwrap_or(ApplyTo::Both),
            ),
        };
        Ok(Transformer {
            condition_target: raw.condition_target,
            when: raw.when,
            ..base
        })
    }
}

/// The camelCase keys `#[serde(alias)]` accepts, in the JSON Schema too.
#[cfg(feature = "schema")]
fn condition_aliases(schema: &mut schemars::Schema) {
    crate::schema::aliases(schema, &[("not_equals", "notEquals")]);
}

/// The camelCase keys `#[serde(alias)]` accepts, in the JSON Schema too.
#[cfg(feature = "schema")]
fn transformer_aliases(schema: &mut schemars::Schema) {
    crate::schema::aliases(
        schema,
        &[
            ("condition_target", "conditionTarget"),
            ("on_missing", "onMissing"),
            ("on_existing", "onExisting"),
            ("apply_to", "applyTo"),
        ],
    );
}

/// Read by hand, so its JSON Schema is written out (feature `schema`).
#[cfg(feature = "schema")]
impl schemars::JsonSchema for Transform {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Transform".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        <Builtin as schemars::JsonSchema>::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ctx() -> Context {
        Context::at("2025-03-04T15:16:17Z".parse().unwrap())
    }

    fn apply(b: Builtin, v: Value) -> Value {
        b.apply(Some(&v), &ctx())
    }

    #[test]
    fn clock_transforms_use_the_injected_time() {
        assert_eq!(
            Builtin::TodayUtcMidnight.apply(None, &ctx()),
            json!("2025-03-04T00:00:00Z")
        );
        assert_eq!(
            Builtin::NowUtc.apply(Some(&json!("x")), &ctx()),
            json!("2025-03-04T15:16:17Z")
        );
    }

    #[test]
    fn string_transforms() {
        assert_eq!(
            apply(Builtin::Lowercase, json!("PenDing")),
            json!("pending")
        );
        assert_eq!(apply(Builtin::Uppercase, json!("eur")), json!("EUR"));
        assert_eq!(apply(Builtin::Trim, json!("  a b \n")), json!("a b"));
        assert_eq!(
            apply(Builtin::CollapseWhitespace, json!(" a \t b\n\nc ")),
            json!("a b c")
        );
        assert_eq!(
            apply(Builtin::DigitsOnly, json!("+1-555-0100")),
            json!("15550100")
        );
        assert_eq!(
            apply(Builtin::Lowercase, json!(12)),
            json!(12),
            "non-strings pass"
        );
        assert_eq!(Builtin::Lowercase.apply(None, &ctx()), Value::Null);
    }

    #[test]
    fn date_iso_reads_dates_by_the_one_rule() {
        for input in [
            "2025-01-15",
            " 2025-01-15 ",
            "2025-01-15T10:30:00Z",
            "2025-01-15T10:30:00.250+02:00",
            "2025-01-15T23:30:00-08:00",
            "2025-01-15T10:30:00",
            "2025-01-15 10:30",
            "2025/01/15",
            "20250115",
            "15-JAN-2025",
            "15-jan-2025",
            "15 Jan 2025",
            "Jan 15, 2025",
            "15 January 2025",
            "15-JAN-25",
        ] {
            assert_eq!(
                apply(Builtin::DateIso, json!(input)),
                json!("2025-01-15"),
                "{input}"
            );
        }
        // A numeric day and month says nothing of its order: left for the comparison to show,
        // as is anything else that is no date.
        for input in [
            "03/02/2025",
            "01/15/2025",
            "15.01.2025",
            "31-FEB-2025",
            "2025-01-15 approx",
            "soon",
        ] {
            assert_eq!(apply(Builtin::DateIso, json!(input)), json!(input));
        }
    }

    #[test]
    fn number_reads_numeric_strings_and_canonicalizes() {
        assert_eq!(apply(Builtin::Number, json!("1,500.00")), json!(1500));
        assert_eq!(apply(Builtin::Number, json!(" 12.5 ")), json!(12.5));
        assert_eq!(apply(Builtin::Number, json!("-0")), json!(0));
        assert_eq!(apply(Builtin::Number, json!(120.0)), json!(120));
        assert_eq!(apply(Builtin::Number, json!("abc")), json!("abc"));
        assert_eq!(apply(Builtin::Number, json!(true)), json!(true));
        // Integral values below 2^53 are written as integers; from 2^53 on a float is no
        // longer exact, so it stays a float.
        assert_eq!(
            apply(Builtin::Number, json!("9007199254740991")),
            json!(9_007_199_254_740_991i64)
        );
        assert!(apply(Builtin::Number, json!("9007199254740992")).is_f64());
        // Integers are left exact, beyond 2^53 too (as a float they would round).
        for n in [
            json!(u64::MAX),
            json!(i64::MIN),
            json!(9_007_199_254_740_993u64),
        ] {
            assert_eq!(apply(Builtin::Number, n.clone()), n);
        }
        // By the one rule of `crate::numbers`: no decimal comma, no separator but
        // thousands-grouping commas.
        for input in ["1,50", "1.500,00", "1 500", "1_500", "inf", "NaN"] {
            assert_eq!(apply(Builtin::Number, json!(input)), json!(input));
        }
    }

    #[test]
    fn sort_orders_arrays() {
        assert_eq!(
            apply(Builtin::Sort, json!([10, "b", 9, "a", null, 2.5])),
            json!([null, 2.5, 9, 10, "a", "b"])
        );
        assert_eq!(apply(Builtin::Sort, json!("x")), json!("x"));
    }

    #[test]
    fn rewrite_agrees_with_apply() {
        let inputs = [
            "", " ", "a", " a", "a ", "a  b", "a b", "a\tb", "ABC", "abc", "aBc", "ǅ", "ß", "123",
            "12a", "+1", "É", "é",
        ];
        for b in Builtin::ALL {
            for s in inputs {
                let v = json!(s);
                let t = Transform::from(b);
                let applied = t.apply(Some(&v), &ctx());
                let expected = (applied != v).then_some(applied);
                assert_eq!(t.rewrite(&v, &ctx()), expected, "{b} on {s:?}");
            }
        }
    }

    #[test]
    fn transforms_debug_print_their_kind() {
        assert_eq!(
            format!("{:?}", Transform::from(Builtin::Trim)),
            "Builtin(trim)"
        );
        let custom = Transform::custom(|_, _| Value::Null);
        assert_eq!(format!("{custom:?}"), "Custom(<closure>)");
        assert_eq!(custom.to_string(), "<closure>");
    }

    /// A builtin prints as the name configs use, and that name reads back as the builtin.
    #[test]
    fn builtins_print_as_their_config_names() {
        for b in Builtin::ALL {
            assert_eq!(b.to_string(), b.name());
            assert_eq!(Transform::from(b).to_string(), b.name());
            let read: Builtin = serde_json::from_value(json!(b.name())).unwrap();
            assert_eq!(read, b);
        }
        assert_eq!(
            Builtin::CollapseWhitespace.to_string(),
            "collapse_whitespace"
        );
    }

    #[test]
    fn unknown_names_list_the_allowed_ones() {
        let err = toml::from_str::<RawTransformer>("transform = \"lowercas\"")
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("lowercas") && err.contains("today_utc_midnight"),
            "{err}"
        );
        let err = toml::from_str::<Transformer>("transform = \"trim\"\nstrategy = \"add_missing\"")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("add_missing_only") && err.contains("line 2"),
            "{err}"
        );
    }

    #[test]
    fn strategy_and_legacy_forms_resolve() {
        let t: Transformer = toml::from_str(
            r#"transform = "today_utc_midnight"
strategy = "add_missing_only"
conditionTarget = "actual"
when = [{ path = "changeType", equals = "change" }]"#,
        )
        .unwrap();
        assert_eq!(
            (t.on_missing, t.on_existing, t.apply_to),
            (OnMissing::Add, OnExisting::Skip, ApplyTo::Expected)
        );
        assert_eq!(t.condition_target, ConditionTarget::Actual);
        assert_eq!(t.when.len(), 1);

        let t: Transformer = toml::from_str(
            r#"transform = "trim"
onMissing = "fail"
applyTo = "actual"
when = { path = "a", notEquals = ["x", "y"] }"#,
        )
        .unwrap();
        assert_eq!(
            (t.on_missing, t.on_existing, t.apply_to),
            (OnMissing::Fail, OnExisting::Transform, ApplyTo::Actual)
        );
        assert_eq!(t.when[0].not_equals, Some(vec![json!("x"), json!("y")]));

        let err = toml::from_str::<Transformer>(
            "transform = \"trim\"\nstrategy = \"transform_always\"\non_missing = \"add\"",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("not both"), "{err}");
        // Any one legacy key with `strategy` is refused, the last one too.
        for legacy in ["on_existing = \"skip\"", "apply_to = \"both\""] {
            let err = toml::from_str::<Transformer>(&format!(
                "transform = \"trim\"\nstrategy = \"transform_always\"\n{legacy}"
            ))
            .unwrap_err()
            .to_string();
            assert!(err.contains("not both"), "{legacy}: {err}");
        }
        // `when` of the wrong type says what it can be.
        let err = toml::from_str::<Transformer>("transform = \"trim\"\nwhen = 3")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("a condition {path, equals | not_equals | exists} or a list of them"),
            "{err}"
        );
        let err = toml::from_str::<Transformer>(
            "transform = \"trim\"\nwhen = { path = \"a\", equal = 1 }",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("equal") && err.contains("not_equals"), "{err}");
    }

    #[test]
    fn conditions() {
        let p = json!({"changeType": "change", "n": 1});
        assert!(Condition::equals("changeType", "change").unwrap().holds(&p));
        assert!(Condition::equals("changeType", json!(["x", "change"]))
            .unwrap()
            .holds(&p));
        assert!(!Condition::equals("changeType", "creation")
            .unwrap()
            .holds(&p));
        assert!(!Condition::equals("missing", "x").unwrap().holds(&p));
        assert!(Condition::not_equals("changeType", json!(["a", "b"]))
            .unwrap()
            .holds(&p));
        assert!(!Condition::not_equals("changeType", json!(["a", "change"]))
            .unwrap()
            .holds(&p));
        assert!(Condition::not_equals("missing", "x").unwrap().holds(&p));
        assert!(Condition::exists("n", true).unwrap().holds(&p));
        assert!(!Condition::exists("n", false).unwrap().holds(&p));
        assert!(Condition::exists("m", false).unwrap().holds(&p));
        assert!(
            Condition::equals("n", 1.0).unwrap().holds(&p),
            "numbers by value"
        );
    }
}
