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
    let mut out = Vec::new();
    write_canonical(value, &mut out);
    String::from_utf8(out).expect("JSON text of a `Value` is UTF-8")
}

/// Appends [`canonical_json`]'s text of `value` to `out`: the bytes that are hashed, written
/// by hand rather than through serde's serializer (the judge's key hashes each output this way,
/// once per case, so it is on the replay's path). Byte for byte what `serde_json::to_writer`
/// of [`Sorted`] writes; numbers and strings that need escaping go through serde_json itself.
///
/// ```
/// use proposal_eval_engine::json::{write_canonical, Sorted};
/// let value = serde_json::json!({"b": [1.5, null, "tab\t"], "a": {"d": true, "c": -3}});
/// let mut out = Vec::new();
/// write_canonical(&value, &mut out);
/// assert_eq!(out, serde_json::to_vec(&Sorted(&value)).unwrap());
/// assert_eq!(out, br#"{"a":{"c":-3,"d":true},"b":[1.5,null,"tab\t"]}"#);
/// ```
pub fn write_canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        // serde_json's own number text (integers as they are, floats shortest round-trip).
        Value::Number(n) => {
            let _ = serde_json::to_writer(&mut *out, n);
        }
        Value::String(s) => write_json_str(s, out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(item, out);
            }
            out.push(b']');
        }
        Value::Object(map) => {
            out.push(b'{');
            let entry = |i: usize, k: &str, v: &Value, out: &mut Vec<u8>| {
                if i > 0 {
                    out.push(b',');
                }
                write_json_str(k, out);
                out.push(b':');
                write_canonical(v, out);
            };
            // serde_json's default map keeps its keys sorted; with `preserve_order` they are
            // in insertion order and sorted here.
            if maps_are_sorted() || map.keys().zip(map.keys().skip(1)).all(|(a, b)| a <= b) {
                for (i, (k, v)) in map.iter().enumerate() {
                    entry(i, k, v, out);
                }
            } else {
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
                for (i, (k, v)) in entries.into_iter().enumerate() {
                    entry(i, k, v, out);
                }
            }
            out.push(b'}');
        }
    }
}

/// Whether serde_json's `Map` keeps its keys sorted (its default, a `BTreeMap`) in this build,
/// where a dependency may have turned on its `preserve_order` feature: found out once.
fn maps_are_sorted() -> bool {
    static SORTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SORTED.get_or_init(|| {
        let mut map = Map::new();
        for key in ["b", "c", "a"] {
            map.insert(key.to_string(), Value::Null);
        }
        map.keys().map(String::as_str).eq(["a", "b", "c"])
    })
}

/// Appends `text` as a JSON string, quoted and escaped as serde_json escapes it.
///
/// ```
/// use proposal_eval_engine::json::write_json_str;
/// let mut out = Vec::new();
/// write_json_str("say \"hi\"\n", &mut out);
/// assert_eq!(out, serde_json::to_vec("say \"hi\"\n").unwrap());
/// ```
pub fn write_json_str(text: &str, out: &mut Vec<u8>) {
    // Most strings (keys, hashes, words) need no escape: test every byte without stopping
    // early, which the compiler turns into a few wide compares, and copy the text whole.
    let plain = !text.bytes().fold(false, |escape, b| {
        escape | (b < 0x20) | (b == b'"') | (b == b'\\')
    });
    if plain {
        out.reserve(text.len() + 2);
        out.push(b'"');
        out.extend_from_slice(text.as_bytes());
        out.push(b'"');
    } else {
        let _ = serde_json::to_writer(&mut *out, text);
    }
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

/// The path (`rubric.required`, `steps[1].args`) of the JSON value that the 1-based `line` and
/// `column` of `text` fall in or end at, as serde_json places its errors (on a value's last
/// character): what names the key of an error that serde gives without one. `""` at the top
/// level.
///
/// ```
/// use proposal_eval_engine::json::path_at;
///
/// let text = "{\"rubric\": {\"required\": \"x\"}}";
/// let err = serde_json::from_str::<std::collections::BTreeMap<String, std::collections::BTreeMap<String, Vec<String>>>>(text).unwrap_err();
/// assert_eq!(path_at(text, err.line(), err.column()), "rubric.required");
/// ```
pub fn path_at(text: &str, line: usize, column: usize) -> String {
    enum Frame {
        /// `key` once read; `value` once its `:` is passed (an error on the key itself is the
        /// object's, not the key's value).
        Object {
            key: Option<String>,
            want_key: bool,
            value: bool,
        },
        Array {
            index: usize,
        },
    }
    let end = offset(text, line, column);
    let bytes = &text.as_bytes()[..end];
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                if let Some(Frame::Object { key, want_key, .. }) = stack.last_mut() {
                    if *want_key {
                        let end = i.min(bytes.len());
                        *key = Some(String::from_utf8_lossy(&bytes[start..end]).into_owned());
                        *want_key = false;
                    }
                }
            }
            b'{' => stack.push(Frame::Object {
                key: None,
                want_key: true,
                value: false,
            }),
            b':' => {
                if let Some(Frame::Object { value, .. }) = stack.last_mut() {
                    *value = true;
                }
            }
            b'[' => stack.push(Frame::Array { index: 0 }),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Frame::Object {
                    key,
                    want_key,
                    value,
                }) => {
                    *key = None;
                    *want_key = true;
                    *value = false;
                }
                Some(Frame::Array { index }) => *index += 1,
                None => {}
            },
            _ => {}
        }
        i += 1;
    }
    let mut path = String::new();
    for frame in &stack {
        match frame {
            Frame::Object {
                key: Some(key),
                value: true,
                ..
            } => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
            }
            Frame::Object { .. } => {}
            Frame::Array { index } => path.push_str(&format!("[{index}]")),
        }
    }
    path
}

/// The byte offset of 1-based `line` and `column` (in characters) of `text`, at most its length.
fn offset(text: &str, line: usize, column: usize) -> usize {
    let mut at = 0;
    for (n, l) in text.split_inclusive('\n').enumerate() {
        if n + 1 == line {
            let within = l
                .char_indices()
                .nth(column)
                .map_or(l.len(), |(byte, _)| byte);
            return at + within;
        }
        at += l.len();
    }
    text.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn any_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        // Strings of any characters, control characters, quotes and backslashes among them.
        let text = prop_oneof![".*", "[a-z\"\\\\\u{0}-\u{1f}\u{7f}é😀]{0,12}",];
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            text.clone().prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 48, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec((text.clone(), inner), 0..6)
                    .prop_map(|entries| Value::Object(entries.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #[test]
        fn the_hand_written_canonical_json_is_serdes_byte_for_byte(value in any_value()) {
            let mut out = Vec::new();
            write_canonical(&value, &mut out);
            proptest::prop_assert_eq!(&out, &serde_json::to_vec(&Sorted(&value)).unwrap());
            proptest::prop_assert_eq!(String::from_utf8(out).unwrap(), sorted(&value).to_string());
        }
    }

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
