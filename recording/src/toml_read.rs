//! Typed reading of TOML files (the suite config, a crate's `Cargo.toml`): the text parsed by the
//! `toml` crate into its spanned document tree ([`DeTable`]), then given to a type's
//! `Deserialize` by the small deserializer below.
//!
//! Why not `toml::from_str`: its deserializer hands a struct to three kinds of map access (a
//! table, and the `Spanned` and datetime shapes it cannot rule out), so every config type's
//! `Deserialize` code was built three times over, about a fifth of this crate's generated code,
//! in each user's first build (`bench/cold-build`). Here each type is read through one map, one
//! list and one enum access. What a reader sees is the same: serde's messages, each with the
//! place (the byte span) of the key or value it is about, which the caller turns into a line
//! and a column.

use serde::de::{self, DeserializeOwned, Unexpected, Visitor};
use std::borrow::Cow;
use std::fmt;
use std::ops::Range;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// Why a TOML text did not read as the type: serde's (or the TOML parser's) message, and the
/// bytes of the text it is about when known.
#[derive(Debug)]
pub struct Error {
    message: String,
    span: Option<Range<usize>>,
}

impl Error {
    /// The message, without a place.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The bytes of the text the message is about.
    pub fn span(&self) -> Option<Range<usize>> {
        self.span.clone()
    }

    fn at(mut self, span: &Range<usize>) -> Self {
        if self.span.is_none() {
            self.span = Some(span.clone());
        }
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl de::Error for Error {
    fn custom<T: fmt::Display>(message: T) -> Self {
        Error {
            message: message.to_string(),
            span: None,
        }
    }
}

/// `text` read as a `T`.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, Error> {
    from_table(table(text)?)
}

/// `text` parsed as a TOML document, to read (or merge) later.
pub fn table(text: &str) -> Result<DeTable<'_>, Error> {
    DeTable::parse(text)
        .map(Spanned::into_inner)
        .map_err(|e| Error {
            message: e.message().to_string(),
            span: e.span(),
        })
}

/// A parsed document read as a `T`.
pub fn from_table<T: DeserializeOwned>(table: DeTable<'_>) -> Result<T, Error> {
    T::deserialize(Value {
        value: DeValue::Table(table),
        span: 0..0,
    })
}

/// Puts `over` over `base`, key by key: a table over a table is merged the same way, any other
/// value (a list, a list of tables, a string) replaces what was there.
pub fn merge<'i>(base: &mut DeTable<'i>, over: DeTable<'i>) {
    for (key, value) in over {
        let span = value.span();
        match (base.get_mut(key.get_ref().as_ref()), value.into_inner()) {
            (Some(below), DeValue::Table(above))
                if matches!(below.get_ref(), DeValue::Table(_)) =>
            {
                if let DeValue::Table(below) = below.get_mut() {
                    merge(below, above);
                }
            }
            (_, value) => {
                base.insert(key, Spanned::new(span, value));
            }
        }
    }
}

/// A value of the document and its place.
struct Value<'i> {
    value: DeValue<'i>,
    span: Range<usize>,
}

impl<'i> From<Spanned<DeValue<'i>>> for Value<'i> {
    fn from(spanned: Spanned<DeValue<'i>>) -> Self {
        let span = spanned.span();
        Value {
            value: spanned.into_inner(),
            span,
        }
    }
}

impl<'de> de::Deserializer<'de> for Value<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        // The generic part is kept to the visitor's calls: it is built once per type read.
        let span = self.span;
        let read = match Read::of(self.value) {
            Read::Str(s) => visitor.visit_borrowed_str(s),
            Read::String(s) => visitor.visit_string(s),
            Read::I64(n) => visitor.visit_i64(n),
            Read::U64(n) => visitor.visit_u64(n),
            Read::F64(x) => visitor.visit_f64(x),
            Read::Bool(b) => visitor.visit_bool(b),
            Read::Items(items) => visitor.visit_seq(items),
            Read::Entries(entries) => visitor.visit_map(entries),
            Read::Datetime => Err(de::Error::invalid_type(
                Unexpected::Other("datetime"),
                &visitor,
            )),
            Read::Failed(e) => Err(e),
        };
        placed(read, &span)
    }

    // A key that is written is `Some`; a missing one is the field's default.
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let span = self.span.clone();
        placed(visitor.visit_some(self), &span)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        let span = self.span.clone();
        placed(visitor.visit_newtype_struct(self), &span)
    }

    // A unit variant is written as its name; any other as a table of one key, the variant.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        let span = self.span;
        let read = match self.value {
            DeValue::String(name) => visitor.visit_enum(Key {
                name,
                span: span.clone(),
            }),
            DeValue::Table(table) if table.len() == 1 => {
                let (name, value) = table.into_iter().next().expect("one entry");
                let key_span = name.span();
                visitor.visit_enum(Variant {
                    name: Key {
                        name: name.into_inner(),
                        span: key_span,
                    },
                    value: value.into(),
                })
            }
            DeValue::Table(_) => Err(de::Error::invalid_value(
                Unexpected::Map,
                &"a table of one key, the variant",
            )),
            other => Value {
                value: other,
                span: span.clone(),
            }
            .deserialize_any(visitor),
        };
        placed(read, &span)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct seq tuple tuple_struct map struct identifier
    }
}

/// A TOML float's text as an `f64`: `inf` and `nan`, with or without a sign, included.
fn float(text: &str) -> Option<f64> {
    let (sign, rest) = match text.as_bytes().first() {
        Some(b'-') => (-1.0, &text[1..]),
        Some(b'+') => (1.0, &text[1..]),
        _ => (1.0, text),
    };
    let x = match rest {
        "inf" => f64::INFINITY,
        "nan" => f64::NAN,
        _ => rest.parse::<f64>().ok().filter(|x| x.is_finite())?,
    };
    Some(sign * x)
}

/// What a value is read as.
enum Read<'i> {
    Str(&'i str),
    String(String),
    I64(i64),
    U64(u64),
    F64(f64),
    Bool(bool),
    Items(Items<'i>),
    Entries(Entries<'i>),
    Datetime,
    Failed(Error),
}

impl<'i> Read<'i> {
    fn of(value: DeValue<'i>) -> Read<'i> {
        match value {
            DeValue::String(Cow::Borrowed(s)) => Read::Str(s),
            DeValue::String(Cow::Owned(s)) => Read::String(s),
            DeValue::Integer(n) => match i64::from_str_radix(n.as_str(), n.radix()) {
                Ok(n) => Read::I64(n),
                Err(_) => match u64::from_str_radix(n.as_str(), n.radix()) {
                    Ok(n) => Read::U64(n),
                    Err(_) => Read::Failed(de::Error::custom("integer number overflowed")),
                },
            },
            DeValue::Float(x) => match float(x.as_str()) {
                Some(x) => Read::F64(x),
                None => Read::Failed(de::Error::custom("floating-point number overflowed")),
            },
            DeValue::Boolean(b) => Read::Bool(b),
            DeValue::Datetime(_) => Read::Datetime,
            DeValue::Array(items) => Read::Items(Items {
                items: items.into_iter(),
            }),
            DeValue::Table(table) => Read::Entries(Entries {
                entries: table.into_iter(),
                value: None,
            }),
        }
    }
}

/// `read`, its error placed at `span` unless it has a place already.
fn placed<T>(read: Result<T, Error>, span: &Range<usize>) -> Result<T, Error> {
    match read {
        Err(e) => Err(e.at(span)),
        ok => ok,
    }
}

/// A table's entries, for a struct or a map.
struct Entries<'i> {
    entries: <DeTable<'i> as IntoIterator>::IntoIter,
    value: Option<Spanned<DeValue<'i>>>,
}

impl<'de> de::MapAccess<'de> for Entries<'de> {
    type Error = Error;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        self.value = Some(value);
        let span = key.span();
        let key = Key {
            name: key.into_inner(),
            span: span.clone(),
        };
        placed(seed.deserialize(key), &span).map(Some)
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let Some(value) = self.value.take() else {
            return Err(de::Error::custom("a value was asked for before its key"));
        };
        // A type's own check (`deserialize_with`, a `Deserialize` impl) fails after the value
        // or the key is read, outside the deserializer: its error is about them too.
        let span = value.span();
        placed(seed.deserialize(Value::from(value)), &span)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// An array's items.
struct Items<'i> {
    items: std::vec::IntoIter<Spanned<DeValue<'i>>>,
}

impl<'de> de::SeqAccess<'de> for Items<'de> {
    type Error = Error;

    fn next_element_seed<T: de::DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        // An item's own check failing is the list's error (its place is the list's, as the
        // `toml` crate has it).
        match self.items.next() {
            Some(item) => seed.deserialize(Value::from(item)).map(Some),
            None => Ok(None),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

/// A table's key (a struct's field, a map's key) or a unit variant's name, with its place.
struct Key<'i> {
    name: Cow<'i, str>,
    span: Range<usize>,
}

impl<'de> de::Deserializer<'de> for Key<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let read = match self.name {
            Cow::Borrowed(s) => visitor.visit_borrowed_str(s),
            Cow::Owned(s) => visitor.visit_string(s),
        };
        placed(read, &self.span)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        let span = self.span.clone();
        placed(visitor.visit_enum(self), &span)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct identifier
        ignored_any
    }
}

impl<'de> de::EnumAccess<'de> for Key<'de> {
    type Error = Error;
    type Variant = UnitOnly;

    fn variant_seed<V: de::DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, UnitOnly), Error> {
        let span = self.span.clone();
        let name = self.name.clone().into_owned();
        seed.deserialize(self).map(|v| (v, UnitOnly { name, span }))
    }
}

/// A variant written as its name alone: only a unit variant reads from it.
struct UnitOnly {
    name: String,
    span: Range<usize>,
}

impl UnitOnly {
    fn not_unit(&self) -> Error {
        <Error as de::Error>::custom(format!(
            "`{}` needs a value: write it as a table, `{{ {} = ... }}`",
            self.name, self.name
        ))
        .at(&self.span)
    }
}

impl<'de> de::VariantAccess<'de> for UnitOnly {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        Ok(())
    }

    fn newtype_variant_seed<T: de::DeserializeSeed<'de>>(
        self,
        _seed: T,
    ) -> Result<T::Value, Error> {
        Err(self.not_unit())
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, _visitor: V) -> Result<V::Value, Error> {
        Err(self.not_unit())
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Error> {
        Err(self.not_unit())
    }
}

/// A variant written as a table of one key: the variant's name and its value.
struct Variant<'i> {
    name: Key<'i>,
    value: Value<'i>,
}

impl<'de> de::EnumAccess<'de> for Variant<'de> {
    type Error = Error;
    type Variant = Value<'de>;

    fn variant_seed<V: de::DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Value<'de>), Error> {
        seed.deserialize(self.name).map(|v| (v, self.value))
    }
}

impl<'de> de::VariantAccess<'de> for Value<'de> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        de::Deserialize::deserialize(self)
    }

    fn newtype_variant_seed<T: de::DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        de::Deserializer::deserialize_seq(self, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        de::Deserializer::deserialize_struct(self, "", &[], visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use std::collections::BTreeMap;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Config {
        name: String,
        #[serde(default)]
        count: Option<usize>,
        ratio: f64,
        flags: Vec<bool>,
        mode: Mode,
        #[serde(default)]
        shape: Option<Shape>,
        #[serde(default)]
        table: BTreeMap<String, i64>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "snake_case")]
    enum Mode {
        Strict,
        Loose,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "snake_case")]
    enum Shape {
        Circle { radius: f64 },
        Named(String),
    }

    fn read(text: &str) -> Result<Config, (String, Option<String>)> {
        from_str(text).map_err(|e: Error| {
            (
                e.message().to_string(),
                e.span().map(|s| text[s].to_string()),
            )
        })
    }

    #[test]
    fn reads_every_kind_of_value() {
        let config = read(
            "name = \"a\"\ncount = 0x10\nratio = -inf\nflags = [true, false]\nmode = \"loose\"\nshape = { circle = { radius = 1_0.5 } }\n[table]\nb = 2\na = -1\n",
        )
        .unwrap();
        assert_eq!(config.name, "a");
        assert_eq!(config.count, Some(16));
        assert_eq!(config.ratio, f64::NEG_INFINITY);
        assert_eq!(config.flags, [true, false]);
        assert_eq!(config.mode, Mode::Loose);
        assert_eq!(config.shape, Some(Shape::Circle { radius: 10.5 }));
        assert_eq!(
            config.table,
            BTreeMap::from([("a".into(), -1), ("b".into(), 2)])
        );
        let named =
            read("name = 'b'\nratio = nan\nflags = []\nmode = 'strict'\nshape.named = 'x'\n")
                .unwrap();
        assert!(named.ratio.is_nan());
        assert_eq!(named.shape, Some(Shape::Named("x".into())));
        assert_eq!(named.count, None);
    }

    #[test]
    fn errors_name_the_key_or_value_they_are_about() {
        let base = "name = \"a\"\nratio = 1.0\nflags = []\nmode = \"strict\"\n";
        let (message, at) = read(&format!("{base}colour = 1\n")).unwrap_err();
        assert!(
            message.starts_with("unknown field `colour`, expected one of"),
            "{message}"
        );
        assert_eq!(at.as_deref(), Some("colour"));
        let (message, at) = read(&format!("{base}count = -1\n")).unwrap_err();
        assert_eq!(message, "invalid value: integer `-1`, expected usize");
        assert_eq!(at.as_deref(), Some("-1"));
        let (message, at) =
            read("name = \"a\"\nratio = 1.0\nflags = [1]\nmode = \"strict\"\n").unwrap_err();
        assert_eq!(message, "invalid type: integer `1`, expected a boolean");
        assert_eq!(at.as_deref(), Some("1"));
        let (message, at) =
            read("name = \"a\"\nratio = 1.0\nflags = []\nmode = \"fast\"\n").unwrap_err();
        assert!(message.starts_with("unknown variant `fast`"), "{message}");
        assert_eq!(at.as_deref(), Some("\"fast\""));
        let (message, _) = read("name = \"a\"\nratio = 1.0\nflags = []\n").unwrap_err();
        assert_eq!(message, "missing field `mode`");
        let (message, at) = read(&format!("{base}shape = \"circle\"\n")).unwrap_err();
        assert!(message.contains("`circle` needs a value"), "{message}");
        assert_eq!(at.as_deref(), Some("\"circle\""));
        let (message, at) = read(&format!("{base}when = 1979-05-27\n")).unwrap_err();
        assert!(message.starts_with("unknown field `when`"), "{message}");
        assert_eq!(at.as_deref(), Some("when"));
        let (_, at) = read("name = \"a\n").unwrap_err();
        assert!(at.is_some(), "a syntax error has its place");
    }
}
