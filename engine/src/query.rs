//! A URL query string read as its parameters, for redaction and the credential scan: each
//! `&`-separated piece, its name and value as written and as decoded (`%XX` and `+`).
//!
//! Only the names and values are read; the text is never rebuilt from decoded parts, so what a
//! redaction does not touch stays byte for byte as the client sent it.

/// One `&`-separated piece of a query string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Param<'a> {
    /// The name as written (the whole piece when it has no `=`).
    pub(crate) raw_name: &'a str,
    /// The value as written; `None` for a piece without `=`.
    pub(crate) raw_value: Option<&'a str>,
}

impl Param<'_> {
    /// The name, decoded.
    pub(crate) fn name(&self) -> String {
        decode(self.raw_name)
    }

    /// The value, decoded; empty for a piece without `=`.
    pub(crate) fn value(&self) -> String {
        self.raw_value.map(decode).unwrap_or_default()
    }
}

/// The pieces of `query` (without its `?`), empty pieces included, in order: joining them with
/// `&` gives `query` back.
pub(crate) fn params(query: &str) -> impl Iterator<Item = Param<'_>> {
    query.split('&').map(|piece| match piece.split_once('=') {
        Some((name, value)) => Param {
            raw_name: name,
            raw_value: Some(value),
        },
        None => Param {
            raw_name: piece,
            raw_value: None,
        },
    })
}

/// `text` with `+` read as a space and each `%XX` as its byte; an invalid escape is kept as
/// written, and bytes that are not UTF-8 are replaced (`U+FFFD`).
pub(crate) fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => match (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            ) {
                (Some(high), Some(low)) => {
                    out.push(high * 16 + low);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(byte: u8) -> Option<u8> {
    (byte as char).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_join_back_to_the_query() {
        for query in ["", "a=1", "a=1&&b", "key=x%3Dy&api-key=z=w&flag", "=v&n="] {
            let pieces: Vec<String> = params(query)
                .map(|p| match p.raw_value {
                    Some(v) => format!("{}={v}", p.raw_name),
                    None => p.raw_name.to_string(),
                })
                .collect();
            assert_eq!(pieces.join("&"), query);
        }
        let all: Vec<Param> = params("api%2Dkey=a%2Bb+c&flag").collect();
        assert_eq!(all[0].name(), "api-key");
        assert_eq!(all[0].value(), "a+b c");
        assert_eq!(all[1].raw_value, None);
        assert_eq!(all[1].value(), "");
    }

    #[test]
    fn bad_escapes_are_kept_as_written() {
        assert_eq!(decode("100%"), "100%");
        assert_eq!(decode("%zz%4"), "%zz%4");
        assert_eq!(decode("%41%42c"), "ABc");
        assert_eq!(decode("%FF"), "\u{FFFD}");
    }
}
