//! Canonical JSON (object keys sorted at every level) written straight to where it goes: a
//! hasher or a recording's temp file. The engine's `canonical_json` and `canonical_pretty`
//! build a sorted copy of the value and then a string of it, two more copies of a large
//! document; these give the same bytes without either.

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::Value;
use std::io::Write;

/// `value` serialized with every object's keys in sorted order, whatever map type serde_json
/// was built with: `serde_json::to_writer` of it writes the engine's `canonical_json(value)`,
/// `to_writer_pretty` its `canonical_pretty(value)` (without the final newline).
pub(crate) struct Sorted<'a>(pub &'a Value);

impl Serialize for Sorted<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Object(map) => {
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
                let mut out = serializer.serialize_map(Some(entries.len()))?;
                for (key, value) in entries {
                    out.serialize_entry(key, &Sorted(value))?;
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

/// Writes `value` as canonical compact JSON to `out`, through a buffer (serde_json writes a
/// token at a time).
pub(crate) fn write_compact(value: &Value, out: impl Write) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::with_capacity(8 * 1024, out);
    serde_json::to_writer(&mut out, &Sorted(value)).map_err(std::io::Error::from)?;
    out.flush()
}

/// Writes `value` as the engine's `canonical_pretty` does (pretty, keys sorted, a final newline)
/// to `out`.
pub(crate) fn write_pretty(value: &Value, out: &mut impl Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &Sorted(value)).map_err(std::io::Error::from)?;
    out.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proposal_eval_engine::json::{canonical_json, canonical_pretty};
    use serde_json::json;

    fn samples() -> Vec<Value> {
        vec![
            json!(null),
            json!({}),
            json!([]),
            json!({"b": [1, {"z": null, "a": -0.0}], "a": "M\u{fc}ller \"x\"\n\r\t\u{1}", "": {}}),
            json!([
                1.5,
                -7,
                18446744073709551615u64,
                670.0 / 7.0,
                1e300,
                true,
                false,
                [[]]
            ]),
            json!({"nested": {"deeper": {"keys": ["in", {"any": 1, "order": 2}]}}}),
        ]
    }

    #[test]
    fn written_as_the_engine_writes_it() {
        for value in samples() {
            let mut compact = Vec::new();
            write_compact(&value, &mut compact).unwrap();
            assert_eq!(String::from_utf8(compact).unwrap(), canonical_json(&value));
            let mut pretty = Vec::new();
            write_pretty(&value, &mut pretty).unwrap();
            assert_eq!(String::from_utf8(pretty).unwrap(), canonical_pretty(&value));
        }
    }
}
