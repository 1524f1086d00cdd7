//! JSON Schema support (feature `schema`): what `schemars`' derive cannot read from the types.
//!
//! The config types derive `schemars::JsonSchema` under this feature; this module holds the
//! hand-written schemas of the types that deserialize by hand (a path pattern, a date format, a
//! regex, a transform, a normalized field's source) and the two shapes serde attributes express
//! but the derive does not see: `alias` (a key's camelCase spelling) and "one value or a list".
//! This repository generates `schemas/` from them (docs/contributing.md, "JSON Schemas").

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde_json::Value;
use std::borrow::Cow;

/// Adds each `(name, alias)` pair's alias as a property of `schema`, with the schema of `name`:
/// what `#[serde(alias = "...")]` accepts. For `#[schemars(transform = ...)]` on a container.
pub fn aliases(schema: &mut Schema, pairs: &[(&str, &str)]) {
    let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) else {
        return;
    };
    for (name, alias) in pairs {
        if let Some(property) = properties.get(*name).cloned() {
            properties.insert(alias.to_string(), property);
        }
    }
}

/// One `T` or a list of them: what a `one_or_many` deserializer accepts (`when = {...}` or
/// `when = [{...}, {...}]`).
pub struct OneOrMany<T>(std::marker::PhantomData<T>);

impl<T: JsonSchema> JsonSchema for OneOrMany<T> {
    fn schema_name() -> Cow<'static, str> {
        format!("OneOrMany_{}", T::schema_name()).into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let one = generator.subschema_for::<T>();
        json_schema!({ "anyOf": [one, { "type": "array", "items": one }] })
    }
}

/// A string schema with a description: the types that parse a string by hand.
fn string(description: &str) -> Schema {
    json_schema!({ "type": "string", "description": description })
}

impl JsonSchema for crate::path::Pattern {
    fn schema_name() -> Cow<'static, str> {
        "PathPattern".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        string("A path into a JSON value: dot notation with `[n]` indices, `[*]`, `*` and `**` wildcards, `[\"a.b\"]` for a key holding `.`; an optional leading `$.` (docs/reference/paths.md).")
    }
}

impl JsonSchema for crate::dates::DateFormat {
    fn schema_name() -> Cow<'static, str> {
        "DateFormat".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        string("A date format: tokens (`DD-MMM-YYYY`, `YYYY-MM-DD`, `MM/DD/YYYY`) or strftime (`%d.%m.%Y`).")
    }
}

impl JsonSchema for crate::redact::ValuePattern {
    fn schema_name() -> Cow<'static, str> {
        "ValuePattern".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "format": "regex", "description": "A regex: what it matches in any string value is written as `<redacted>`." })
    }
}

impl JsonSchema for crate::checks::Check {
    fn schema_name() -> Cow<'static, str> {
        "Check".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let path = generator.subschema_for::<crate::path::Pattern>();
        let text = |what: &str| json_schema!({ "type": "string", "description": what });
        let length =
            |what: &str| json_schema!({ "type": "integer", "minimum": 0, "description": what });
        json_schema!({
            "description": "One check on the output: a `path` and one operator (docs/reference/checks.md).",
            "type": "object",
            "required": ["path"],
            "minProperties": 2,
            "maxProperties": 2,
            "additionalProperties": false,
            "properties": {
                "path": path,
                "contains": text("The string holds this text."),
                "icontains": text("The string holds this text, in any case."),
                "not_contains": text("The string does not hold this text."),
                "regex": { "type": "string", "format": "regex", "description": "The regex matches somewhere in the string (`^...$` for the whole)." },
                "equals": { "description": "The value equals this JSON (numbers by value)." },
                "one_of": { "type": "array", "description": "The value equals one of these." },
                "min_length": length("The string has at least this many characters."),
                "max_length": length("The string has at most this many characters."),
                "json_schema": text("A JSON Schema file (draft 2020-12), relative to the suite folder, in a folder discovery skips (`.schemas/reply.json`): the value is valid under it."),
            }
        })
    }
}
