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
    sorted(value).to_string()
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
    fn canonical_output_sorts_keys_and_ends_with_newline() {
        let text = canonical_pretty(&json!({"b": 1, "a": {"d": 2, "c": 3}}));
        assert_eq!(
            text,
            "{\n  \"a\": {\n    \"c\": 3,\n    \"d\": 2\n  },\n  \"b\": 1\n}\n"
        );
    }
}
