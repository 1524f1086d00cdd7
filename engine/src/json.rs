//! JSON helpers every other module shares: equality and a total order as the evaluators see
//! them, and the canonical forms (sorted keys) that are hashed, written and diffed.

use serde_json::{Map, Number, Value};
use std::cmp::Ordering;

/// JSON equality as the strict evaluator sees it: exact, except that numbers compare by value
/// (`1` equals `1.0`).
///
/// ```
/// use proposal_eval_engine::json::json_eq;
/// use serde_json::json;
/// assert!(json_eq(&json!({"a": [1, 2.0]}), &json!({"a": [1.0, 2]})));
/// assert!(!json_eq(&json!(1), &json!("1")));
/// ```
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => number_eq(x, y),
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_eq(x, y))
        }
        (Value::Object(x), Value::Object(y)) => x.len() == y.len() && object_eq(x, y),
        _ => false,
    }
}

fn object_eq(x: &Map<String, Value>, y: &Map<String, Value>) -> bool {
    // Maps of the same keys usually iterate in the same order (sorted, or built alike), so walk
    // them side by side and fall back to lookups only when the orders part.
    let mut ys = y.iter();
    for (k, v) in x {
        match ys.next() {
            Some((yk, yv)) if yk == k => {
                if !json_eq(v, yv) {
                    return false;
                }
            }
            _ => {
                return x
                    .iter()
                    .all(|(k, v)| y.get(k).is_some_and(|yv| json_eq(v, yv)))
            }
        }
    }
    true
}

fn number_eq(x: &Number, y: &Number) -> bool {
    if x == y {
        return true;
    }
    if let (Some(a), Some(b)) = (x.as_i64(), y.as_i64()) {
        return a == b;
    }
    if let (Some(a), Some(b)) = (x.as_u64(), y.as_u64()) {
        return a == b;
    }
    match (x.as_f64(), y.as_f64()) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// A total order on JSON values, used by `sort`: null, booleans, numbers (by value), strings,
/// arrays, objects.
pub fn json_cmp(a: &Value, b: &Value) -> Ordering {
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Null => 0,
            Value::Bool(_) => 1,
            Value::Number(_) => 2,
            Value::String(_) => 3,
            Value::Array(_) => 4,
            Value::Object(_) => 5,
        }
    }
    match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
            x.total_cmp(&y)
        }
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => x
            .iter()
            .zip(y)
            .map(|(x, y)| json_cmp(x, y))
            .find(|o| o.is_ne())
            .unwrap_or_else(|| x.len().cmp(&y.len())),
        (Value::Object(_), Value::Object(_)) => a.to_string().cmp(&b.to_string()),
        _ => rank(a).cmp(&rank(b)),
    }
}

/// Pretty JSON with every object's keys sorted and a final newline, whatever serde_json's map
/// order is.
pub fn canonical_pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(&sorted(value)).unwrap_or_default();
    text.push('\n');
    text
}

/// A copy of `value` whose objects have their keys in sorted order at every level, whatever map
/// type `serde_json` was built with.
pub fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for k in keys {
                out.insert(k.clone(), sorted(&map[k]));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// A value as compact JSON with object keys sorted at every level, whatever map type
/// `serde_json` was built with: the form that is hashed.
pub fn canonical_json(value: &Value) -> String {
    // Written straight from the value, keys sorted as they are met: the text of
    // `sorted(value).to_string()`, without the sorted copy.
    serde_json::to_string(&Sorted(value)).expect("a JSON value always serializes")
}

/// A value that serializes with the keys of every object in sorted order, whatever map type
/// `serde_json` was built with: `serde_json::to_writer` of it writes [`canonical_json`]'s text
/// straight to a writer (a hasher, a file), `to_writer_pretty` the pretty form.
///
/// ```
/// use proposal_eval_engine::json::{canonical_json, Sorted};
/// let value = serde_json::json!({"b": 1, "a": [{"d": 2, "c": 3}]});
/// let mut out = Vec::new();
/// serde_json::to_writer(&mut out, &Sorted(&value)).unwrap();
/// assert_eq!(out, canonical_json(&value).into_bytes());
/// assert_eq!(out, br#"{"a":[{"c":3,"d":2}],"b":1}"#);
/// ```
pub struct Sorted<'a>(pub &'a Value);

impl serde::Serialize for Sorted<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self.0 {
            Value::Object(map) => {
                let mut out = serializer.serialize_map(Some(map.len()))?;
                // serde_json's default map keeps its keys sorted: then there is nothing to sort
                // (and no list of entries to allocate for each object).
                if map.keys().zip(map.keys().skip(1)).all(|(a, b)| a <= b) {
                    for (k, v) in map {
                        out.serialize_entry(k, &Sorted(v))?;
                    }
                } else {
                    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
                    for (k, v) in entries {
                        out.serialize_entry(k, &Sorted(v))?;
                    }
                }
                out.end()
            }
            Value::Array(items) => {
                let mut out = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    out.serialize_element(&Sorted(item))?;
                }
                out.end()
            }
            other => other.serialize(serializer),
        }
    }
}

/// The JSON type of a value as messages name it: `null`, `boolean`, `number`, `string`,
/// `array`, `object`.
///
/// ```
/// use proposal_eval_engine::json::type_name;
/// assert_eq!(type_name(&serde_json::json!([1])), "array");
/// ```
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_json_is_the_sorted_copy_written_compactly() {
        let value = json!({"z": [{"b": 1, "a": "x\u{1}\"y"}, 2.5, null], "a": {"d": true, "c": -0.0},
                           "m": [], "é": {}, "A": 12345678901234567890u64});
        assert_eq!(canonical_json(&value), sorted(&value).to_string());
        assert_eq!(
            canonical_json(&json!({"b": 1, "a": [{"d": 2, "c": 3}]})),
            r#"{"a":[{"c":3,"d":2}],"b":1}"#
        );
    }

    #[test]
    fn canonical_output_sorts_keys_and_ends_with_newline() {
        let text = canonical_pretty(&json!({"b": 1, "a": {"d": 2, "c": 3}}));
        assert_eq!(
            text,
            "{\n  \"a\": {\n    \"c\": 3,\n    \"d\": 2\n  },\n  \"b\": 1\n}\n"
        );
    }

    #[test]
    fn equality_is_exact_except_for_numbers() {
        let equal = [
            (json!(null), json!(null)),
            (json!(true), json!(true)),
            (json!(1), json!(1.0)),
            (json!(-1), json!(-1.0)),
            (json!(u64::MAX), json!(u64::MAX)),
            (json!(0.5), json!(0.5)),
            (json!("a"), json!("a")),
            (json!([1, [2]]), json!([1.0, [2.0]])),
            (
                json!({"a": 1, "b": {"c": 2}}),
                json!({"b": {"c": 2.0}, "a": 1}),
            ),
            (json!({}), json!({})),
        ];
        for (a, b) in equal {
            assert!(json_eq(&a, &b), "{a} = {b}");
            assert!(json_eq(&b, &a), "{b} = {a}");
        }
        let differ = [
            (json!(null), json!(false)),
            (json!(true), json!(false)),
            (json!(1), json!(2)),
            (json!(-1), json!(1)),
            // Equal as floats, not as integers.
            (json!(u64::MAX), json!(u64::MAX - 1)),
            (json!(i64::MIN), json!(i64::MIN + 1)),
            (json!(0.5), json!(0.25)),
            (json!(1), json!("1")),
            (json!("a"), json!("b")),
            (json!([1]), json!([1, 2])),
            (json!([1, 2]), json!([1, 3])),
            (json!({"a": 1}), json!({"a": 1, "b": 2})),
            (json!({"a": 1}), json!({"a": 2})),
            // Same size and values, other keys.
            (json!({"a": 1, "c": 2}), json!({"b": 1, "c": 2})),
            (json!({"a": 1}), json!({"b": 1})),
            (json!({"a": 1, "b": 2}), json!({"a": 2, "b": 1})),
            (json!([]), json!({})),
        ];
        for (a, b) in differ {
            assert!(!json_eq(&a, &b), "{a} != {b}");
            assert!(!json_eq(&b, &a), "{b} != {a}");
        }
    }

    #[test]
    fn the_order_ranks_types_then_values() {
        let mut values = vec![
            json!({"b": 1}),
            json!([1, 2]),
            json!("b"),
            json!(2.5),
            json!(true),
            json!(null),
            json!({"a": 1}),
            json!([1]),
            json!([0, 5]),
            json!("a"),
            json!(-1),
            json!(false),
        ];
        values.sort_by(json_cmp);
        assert_eq!(
            values,
            [
                json!(null),
                json!(false),
                json!(true),
                json!(-1),
                json!(2.5),
                json!("a"),
                json!("b"),
                json!([0, 5]),
                json!([1]),
                json!([1, 2]),
                json!({"a": 1}),
                json!({"b": 1}),
            ]
        );
        assert_eq!(json_cmp(&json!([1, 2]), &json!([1, 2])), Ordering::Equal);
        assert_eq!(json_cmp(&json!(1), &json!(1.0)), Ordering::Equal);
    }

    #[test]
    fn canonical_json_and_type_names() {
        let v = json!({"b": [{"y": 1, "x": 2}], "a": null});
        assert_eq!(canonical_json(&v), r#"{"a":null,"b":[{"x":2,"y":1}]}"#);
        assert_eq!(sorted(&v), v);
        let names: Vec<&str> = [
            json!(null),
            json!(true),
            json!(1),
            json!("s"),
            json!([]),
            json!({}),
        ]
        .iter()
        .map(type_name)
        .collect();
        assert_eq!(
            names,
            ["null", "boolean", "number", "string", "array", "object"]
        );
    }
}
