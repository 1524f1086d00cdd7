//! Normalization: reshaping a raw proposal into the fields its rule lists.
//!
//! The value at the discriminator path (`[strict] discriminator`, default `changeType`) picks the
//! rule whose `when` equals it. Each field of the rule is read from the raw proposal: a dot path,
//! `__literal__` (the rule's `when` value), `__self__` (the whole raw proposal), or an extractor
//! `{ from, default, transform }`. A field whose source is missing is left out, so the comparison
//! reports it as missing. With rules configured, a proposal that matches none is an error that the
//! comparison reports; with no rules, proposals are compared as they are.
//!
//! ```
//! use proposal_eval_engine::normalize::{normalize, FieldSource, NormalizationRule};
//! use proposal_eval_engine::path::Location;
//! use proposal_eval_engine::transform::Context;
//! use serde_json::json;
//! let rule = NormalizationRule::new("change")
//!     .field("changeType", FieldSource::Literal).unwrap()
//!     .field("mutationVariables", FieldSource::path("mutationQuery.variables").unwrap()).unwrap();
//! let raw = json!({"changeType": "change", "mutationQuery": {"variables": {"id": 7}}, "x": 1});
//! let ctx = Context::at("2025-03-04T15:16:17Z".parse().unwrap());
//! let out = normalize(&raw, &[rule], &Location::parse("changeType").unwrap(), &ctx).unwrap();
//! assert_eq!(out, json!({"changeType": "change", "mutationVariables": {"id": 7}}));
//! ```

use crate::path::{Location, PathError};
use crate::transform::{Context, Transform};
use serde::de::{self, Deserializer};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;

/// Where one normalized field comes from.
#[derive(Clone, Debug)]
pub enum FieldSource {
    /// `"__literal__"`: the rule's `when` value.
    Literal,
    /// `"__self__"`: the whole raw proposal.
    WholeProposal,
    /// A dot path into the raw proposal.
    Path(Location),
    /// `{ from, default, transform }`.
    Extract {
        /// Where to read.
        from: Location,
        /// Used when `from` is missing.
        default: Option<Value>,
        /// Applied to what was read (or to the default).
        transform: Option<Transform>,
    },
}

impl FieldSource {
    /// A dot path into the raw proposal.
    pub fn path(path: &str) -> Result<FieldSource, PathError> {
        Ok(FieldSource::Path(Location::parse(path)?))
    }

    /// An extractor reading `from`, with an optional default and transform.
    pub fn extract(
        from: &str,
        default: Option<Value>,
        transform: Option<Transform>,
    ) -> Result<FieldSource, PathError> {
        Ok(FieldSource::Extract {
            from: Location::parse(from)?,
            default,
            transform,
        })
    }

    fn read(&self, raw: &Value, when: &Value, ctx: &Context) -> Option<Value> {
        match self {
            FieldSource::Literal => Some(when.clone()),
            FieldSource::WholeProposal => Some(raw.clone()),
            FieldSource::Path(location) => location.get(raw).cloned(),
            FieldSource::Extract {
                from,
                default,
                transform,
            } => {
                let found = from.get(raw).or(default.as_ref())?;
                Some(match transform {
                    Some(t) => t.apply(Some(found), ctx),
                    None => found.clone(),
                })
            }
        }
    }
}

impl<'de> Deserialize<'de> for FieldSource {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = FieldSource;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a dot path, \"__literal__\", \"__self__\", or { from, default, transform }",
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<FieldSource, E> {
                match v {
                    "__literal__" => Ok(FieldSource::Literal),
                    "__self__" => Ok(FieldSource::WholeProposal),
                    path => FieldSource::path(path).map_err(E::custom),
                }
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<FieldSource, A::Error> {
                #[derive(Deserialize)]
                #[serde(deny_unknown_fields)]
                struct Extractor {
                    #[serde(deserialize_with = "crate::path::deserialize_location")]
                    from: Location,
                    #[serde(default)]
                    default: Option<Value>,
                    #[serde(default)]
                    transform: Option<Transform>,
                }
                let e = Extractor::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(FieldSource::Extract {
                    from: e.from,
                    default: e.default,
                    transform: e.transform,
                })
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// One `[[strict.normalization]]` rule.
#[derive(Clone, Debug, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct NormalizationRule {
    /// The discriminator value this rule is for.
    pub when: Value,
    /// The normalized fields (output path, source), in output-path order.
    #[serde(deserialize_with = "deserialize_fields")]
    #[cfg_attr(feature = "schema", schemars(with = "BTreeMap<String, FieldSource>"))]
    pub fields: Vec<(Location, FieldSource)>,
}

fn deserialize_fields<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Vec<(Location, FieldSource)>, D::Error> {
    BTreeMap::<String, FieldSource>::deserialize(d)?
        .into_iter()
        .map(|(k, v)| {
            Location::parse(&k)
                .map(|l| (l, v))
                .map_err(de::Error::custom)
        })
        .collect()
}

impl NormalizationRule {
    /// A rule for proposals whose discriminator is `when`, with no fields yet.
    pub fn new(when: impl Into<Value>) -> NormalizationRule {
        NormalizationRule {
            when: when.into(),
            fields: Vec::new(),
        }
    }

    /// Adds a field; `name` is a path in the normalized proposal (usually one key).
    pub fn field(mut self, name: &str, source: FieldSource) -> Result<Self, PathError> {
        self.fields.push((Location::parse(name)?, source));
        Ok(self)
    }

    /// Applies the rule to a raw proposal. A field whose source is missing (and has no default)
    /// is left out, and so is one whose name the output cannot take.
    ///
    /// ```
    /// use proposal_eval_engine::normalize::{FieldSource, NormalizationRule};
    /// use proposal_eval_engine::transform::Context;
    /// use serde_json::json;
    /// let rule = NormalizationRule::new("change")
    ///     .field("amount", FieldSource::path("data.amount")?)?
    ///     .field("tags[0]", FieldSource::path("data.tag")?)?;
    /// let ctx = Context::at("2025-03-04T15:16:17Z".parse().unwrap());
    /// // No `tags` array to write into: `tags[0]` is left out, and no `tags` is made.
    /// let out = rule.apply(&json!({"data": {"amount": 1, "tag": "a"}}), &ctx);
    /// assert_eq!(out, json!({"amount": 1}));
    /// # Ok::<(), proposal_eval_engine::path::PathError>(())
    /// ```
    pub fn apply(&self, raw: &Value, ctx: &Context) -> Value {
        let mut out = Value::Object(Map::new());
        for (name, source) in &self.fields {
            if let Some(v) = source.read(raw, &self.when, ctx) {
                // A name the output cannot take yet (`items[0]` with no `items` array written
                // before it) is left out, as a missing source is; `set` then writes nothing.
                let _written = name.set(&mut out, v);
            }
        }
        out
    }
}

/// A proposal whose discriminator matches no rule.
#[derive(Clone, Debug, PartialEq)]
pub struct NoRule {
    /// The discriminator path.
    pub discriminator: Location,
    /// Its value in the proposal (`None`: missing).
    pub value: Option<Value>,
    /// The `when` values of the configured rules.
    pub known: Vec<Value>,
}

impl fmt::Display for NoRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.value {
            Some(v) => write!(f, "no normalization rule for {} = {v}", self.discriminator)?,
            None => write!(
                f,
                "no normalization rule: the proposal has no `{}`",
                self.discriminator
            )?,
        }
        let known: Vec<String> = self.known.iter().map(|v| v.to_string()).collect();
        write!(f, " (rules exist for {})", known.join(", "))
    }
}

/// Normalizes one raw proposal: the rule whose `when` equals the discriminator value. With no
/// rules, the proposal is returned as it is.
pub fn normalize(
    raw: &Value,
    rules: &[NormalizationRule],
    discriminator: &Location,
    ctx: &Context,
) -> Result<Value, NoRule> {
    if rules.is_empty() {
        return Ok(raw.clone());
    }
    let value = discriminator.get(raw);
    match value.and_then(|v| rules.iter().find(|r| crate::json::json_eq(&r.when, v))) {
        Some(rule) => Ok(rule.apply(raw, ctx)),
        None => Err(NoRule {
            discriminator: discriminator.clone(),
            value: value.cloned(),
            known: rules.iter().map(|r| r.when.clone()).collect(),
        }),
    }
}

/// Read by hand, so its JSON Schema is written out (feature `schema`).
#[cfg(feature = "schema")]
impl schemars::JsonSchema for FieldSource {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "FieldSource".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let transform = generator.subschema_for::<crate::transform::Transform>();
        schemars::json_schema!({
            "description": "Where a normalized field comes from: a dot path into the raw proposal, `__literal__` (the rule's `when` value), `__self__` (the whole proposal), or an extractor.",
            "anyOf": [
                { "type": "string" },
                {
                    "type": "object",
                    "properties": {
                        "from": { "type": "string", "description": "The dot path read." },
                        "default": { "description": "The value when the path is missing." },
                        "transform": transform,
                    },
                    "required": ["from"],
                    "additionalProperties": false,
                }
            ]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ctx() -> Context {
        Context::at("2025-03-04T15:16:17Z".parse().unwrap())
    }

    fn rules() -> Vec<NormalizationRule> {
        #[derive(Deserialize)]
        struct Doc {
            normalization: Vec<NormalizationRule>,
        }
        toml::from_str::<Doc>(
            r#"
[[normalization]]
when = "change"
fields.changeType = "__literal__"
fields.changedField = "changedField"
fields.mutationVariables = "mutationQuery.variables"
fields.original = "__self__"
fields.status = { from = "state", default = "PENDING", transform = "lowercase" }

[[normalization]]
when = "creation"
fields.changeType = "__literal__"
fields."data.name" = "payload.name"
"#,
        )
        .unwrap()
        .normalization
    }

    fn disc() -> Location {
        Location::parse("changeType").unwrap()
    }

    #[test]
    fn reshapes_by_rule_and_flattens_mutation_query_variables() {
        let raw = json!({
            "changeType": "change",
            "changedField": "payment.amount",
            "mutationQuery": {"query": "mutation ...", "variables": {"data": {"amount": 120}}},
            "state": "Approved"
        });
        let out = normalize(&raw, &rules(), &disc(), &ctx()).unwrap();
        assert_eq!(
            out,
            json!({
                "changeType": "change",
                "changedField": "payment.amount",
                "mutationVariables": {"data": {"amount": 120}},
                "original": raw,
                "status": "approved"
            })
        );
    }

    #[test]
    fn missing_sources_are_left_out_and_defaults_fill_in() {
        let raw = json!({"changeType": "change"});
        let out = normalize(&raw, &rules(), &disc(), &ctx()).unwrap();
        assert_eq!(
            out,
            json!({"changeType": "change", "original": raw, "status": "pending"})
        );
        let raw = json!({"changeType": "creation", "payload": {"name": "n"}});
        assert_eq!(
            normalize(&raw, &rules(), &disc(), &ctx()).unwrap(),
            json!({"changeType": "creation", "data": {"name": "n"}})
        );
    }

    #[test]
    fn an_unknown_discriminator_is_an_error_not_a_pass() {
        let err = normalize(
            &json!({"changeType": "deletion"}),
            &rules(),
            &disc(),
            &ctx(),
        )
        .unwrap_err();
        assert_eq!(err.value, Some(json!("deletion")));
        assert_eq!(
            err.to_string(),
            "no normalization rule for changeType = \"deletion\" (rules exist for \"change\", \"creation\")"
        );
        let err = normalize(&json!({"kind": 1}), &rules(), &disc(), &ctx()).unwrap_err();
        assert!(err.to_string().contains("has no `changeType`"), "{err}");
    }

    #[test]
    fn a_name_the_output_cannot_take_is_left_out() {
        #[derive(Deserialize)]
        struct Doc {
            normalization: Vec<NormalizationRule>,
        }
        let rules = toml::from_str::<Doc>(
            r#"
[[normalization]]
when = "x"
fields.kind = "__literal__"
fields."tags[0]" = "tag"
fields."kind.sub" = "tag"
fields.list = "list"
fields."list[1]" = "tag"
"#,
        )
        .unwrap()
        .normalization;
        let raw = json!({"kind": "x", "tag": "t", "list": [0]});
        assert_eq!(
            normalize(&raw, &rules, &disc_kind(), &ctx()).unwrap(),
            json!({"kind": "x", "list": [0, "t"]})
        );
    }

    fn disc_kind() -> Location {
        Location::parse("kind").unwrap()
    }

    #[test]
    fn no_rules_pass_proposals_through() {
        let raw = json!({"anything": [1, 2]});
        assert_eq!(normalize(&raw, &[], &disc(), &ctx()).unwrap(), raw);
    }

    #[test]
    fn bad_field_sources_are_errors() {
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Doc {
            normalization: Vec<NormalizationRule>,
        }
        let err = toml::from_str::<Doc>(
            "[[normalization]]\nwhen = \"x\"\nfields.a = { from = \"b\", defualt = 1 }",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("defualt") && err.contains("line 3"), "{err}");
        let err = toml::from_str::<Doc>("[[normalization]]\nwhen = \"x\"\nfields.a = \"b..c\"")
            .unwrap_err()
            .to_string();
        assert!(err.contains("b..c"), "{err}");
        let err = toml::from_str::<Doc>(
            "[[normalization]]\nwhen = \"x\"\nfields.a = { from = \"b\", transform = \"nope\" }",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("lowercase"), "{err}");
        // A source of the wrong type says what a source can be.
        let err = toml::from_str::<Doc>("[[normalization]]\nwhen = \"x\"\nfields.a = 3")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(
                "expected a dot path, \"__literal__\", \"__self__\", or { from, default, transform }"
            ) && err.contains("line 3"),
            "{err}"
        );
    }
}
