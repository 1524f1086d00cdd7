//! Canonical JSON (object keys sorted at every level) written straight to where it goes: a
//! hasher or a recording's temp file, through the engine's [`Sorted`]. The engine's
//! `canonical_pretty` builds a sorted copy of the value and then a string of it, two more copies
//! of a large document; these give the same bytes without either.

use proposal_eval_engine::json::Sorted;
use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::fmt;
use std::io::Write;

/// Writes `value` as canonical compact JSON to `out`, through a buffer (serde_json writes a
/// token at a time). `out` is a `dyn Write`, called once per buffer: one copy of the
/// serialization code for every hasher it feeds (`bench/cold-build`).
pub fn write_compact(value: &Value, out: &mut dyn Write) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::with_capacity(8 * 1024, out);
    serde_json::to_writer(&mut out, &Sorted(value)).map_err(std::io::Error::from)?;
    out.flush()
}

/// Writes `value` as the engine's `canonical_pretty` does (pretty, keys sorted, a final newline)
/// to `out`.
pub fn write_pretty(value: &Value, out: &mut impl Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &Sorted(value)).map_err(std::io::Error::from)?;
    out.write_all(b"\n")
}

/// The SHA-256 of a request's canonical compact JSON: what a replay of a large recording keeps
/// of each recorded request, in place of the request (see [`super::Recording::read_for_replay`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestDigest([u8; 32]);

/// A writer into a SHA-256.
#[derive(Default)]
struct Hasher(Sha256);

impl Write for Hasher {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Hasher {
    fn json<T: Serialize + ?Sized>(&mut self, value: &T) {
        // Writing to a hasher cannot fail, nor can serializing a scalar.
        let _ = serde_json::to_writer(&mut *self, value);
    }

    fn digest(self) -> RequestDigest {
        RequestDigest(self.0.finalize().into())
    }
}

/// The digest of `request` as it is now.
pub fn request_digest(request: &Value) -> RequestDigest {
    let mut hasher = Hasher::default();
    let _ = write_compact(request, &mut hasher);
    hasher.digest()
}

/// Read from a recording, a request is hashed as it is parsed, never built: each value the
/// parser reads is written as compact JSON into the hash, in the order of the file. A recording
/// is written with its keys sorted, so this is the digest of the request the file holds; a file
/// whose keys are in another order (edited by hand) gives another digest, and the replay then
/// compares the request itself.
impl<'de> Deserialize<'de> for RequestDigest {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut hasher = Hasher::default();
        deserializer.deserialize_any(Canonical(&mut hasher))?;
        Ok(hasher.digest())
    }
}

/// Writes the value a deserializer reads as compact JSON into a hasher.
struct Canonical<'a>(&'a mut Hasher);

/// One element of an array or one key of an object: a comma first unless it is the first.
struct Next<'a> {
    out: &'a mut Hasher,
    comma: bool,
    key: bool,
}

impl<'de> DeserializeSeed<'de> for Next<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        if self.comma {
            self.out.0.update(b",");
        }
        if self.key {
            deserializer.deserialize_str(Canonical(self.out))
        } else {
            deserializer.deserialize_any(Canonical(self.out))
        }
    }
}

impl<'de> DeserializeSeed<'de> for Canonical<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Canonical<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<(), E> {
        self.0.json(&v);
        Ok(())
    }

    fn visit_i64<E>(self, v: i64) -> Result<(), E> {
        self.0.json(&v);
        Ok(())
    }

    fn visit_u64<E>(self, v: u64) -> Result<(), E> {
        self.0.json(&v);
        Ok(())
    }

    fn visit_f64<E>(self, v: f64) -> Result<(), E> {
        // As a Value holds it: serde_json's Number, written as a Value writes it.
        self.0.json(&Value::from(v));
        Ok(())
    }

    fn visit_str<E>(self, v: &str) -> Result<(), E> {
        self.0.json(v);
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        self.0 .0.update(b"null");
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.0 .0.update(b"[");
        let mut comma = false;
        while seq
            .next_element_seed(Next {
                out: &mut *self.0,
                comma,
                key: false,
            })?
            .is_some()
        {
            comma = true;
        }
        self.0 .0.update(b"]");
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.0 .0.update(b"{");
        let mut comma = false;
        while map
            .next_key_seed(Next {
                out: &mut *self.0,
                comma,
                key: true,
            })?
            .is_some()
        {
            self.0 .0.update(b":");
            map.next_value_seed(Canonical(&mut *self.0))?;
            comma = true;
        }
        self.0 .0.update(b"}");
        Ok(())
    }
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

    /// A request hashed while it is parsed from a recording (pretty, keys sorted, as recordings
    /// are written; or compact) has the digest of the same request built as a value; another
    /// request, or the same one with its keys in another order, has another.
    #[test]
    fn a_request_hashed_as_it_is_read_is_the_request_hashed() {
        for value in samples() {
            let digest = request_digest(&value);
            for text in [canonical_pretty(&value), canonical_json(&value)] {
                let read: RequestDigest = serde_json::from_str(&text).unwrap();
                assert_eq!(read, digest, "{text}");
                let streamed: RequestDigest =
                    serde_json::from_reader(std::io::Cursor::new(text.as_bytes())).unwrap();
                assert_eq!(streamed, digest, "{text}");
            }
            let other = json!({ "other": value });
            assert_ne!(request_digest(&other), digest);
        }
        let unsorted: RequestDigest = serde_json::from_str(r#"{"b": 1, "a": 2}"#).unwrap();
        assert_ne!(unsorted, request_digest(&json!({"a": 2, "b": 1})));
        // Not JSON: an error, never a digest.
        assert!(serde_json::from_str::<RequestDigest>(r#"{"a": [1,}"#).is_err());
    }
}
