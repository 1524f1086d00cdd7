//! The little of JSON the macro reads: whether a fixture is well-formed JSON, its top-level keys
//! and its `status`. Written here rather than taken from serde_json because a proc macro's
//! dependencies are built a second time for the host: serde_json (with serde_core, memchr, itoa
//! and zmij) was about a tenth of a consumer's cold build (`bench/cold-build`).
//!
//! It accepts what `serde_json::from_str::<Value>` accepts (RFC 8259: one value, whitespace
//! around it, nesting up to serde_json's 128 levels) and refuses the rest; the macro ignores a
//! fixture only when this reads it, so a doubt makes a test that runs and fails, never an
//! ignored one.

/// serde_json's default recursion limit: an object or array nested this deep is an error there,
/// and here (127 levels read).
const MAX_DEPTH: usize = 128;

/// The top-level object of `text`: each key (escapes decoded) with its value when that value is
/// a string. `None` when `text` is not exactly one well-formed JSON value, or not an object.
pub(crate) fn top_level(text: &str) -> Option<Vec<(String, Option<String>)>> {
    let mut reader = Reader {
        bytes: text.as_bytes(),
        at: 0,
    };
    reader.skip_space();
    if reader.peek()? != b'{' {
        return None;
    }
    let mut entries = Vec::new();
    reader.object(0, &mut |key, value| entries.push((key, value)))?;
    reader.skip_space();
    (reader.at == reader.bytes.len()).then_some(entries)
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.at += 1;
        Some(byte)
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.next()? == byte).then_some(())
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// One value; a string's text when it is one.
    fn value(&mut self, depth: usize) -> Option<Option<String>> {
        self.skip_space();
        match self.peek()? {
            b'{' => self.object(depth, &mut |_, _| {}).map(|()| None),
            b'[' => self.array(depth).map(|()| None),
            b'"' => self.string().map(Some),
            b't' => self.literal(b"true").map(|()| None),
            b'f' => self.literal(b"false").map(|()| None),
            b'n' => self.literal(b"null").map(|()| None),
            _ => self.number().map(|()| None),
        }
    }

    /// An object (at `{`), each entry handed to `entry`.
    fn object(
        &mut self,
        depth: usize,
        entry: &mut dyn FnMut(String, Option<String>),
    ) -> Option<()> {
        if depth + 1 >= MAX_DEPTH {
            return None;
        }
        self.eat(b'{')?;
        self.skip_space();
        if self.peek()? == b'}' {
            self.at += 1;
            return Some(());
        }
        loop {
            self.skip_space();
            let key = self.string()?;
            self.skip_space();
            self.eat(b':')?;
            let value = self.value(depth + 1)?;
            entry(key, value);
            self.skip_space();
            match self.next()? {
                b',' => {}
                b'}' => return Some(()),
                _ => return None,
            }
        }
    }

    /// An array (at `[`).
    fn array(&mut self, depth: usize) -> Option<()> {
        if depth + 1 >= MAX_DEPTH {
            return None;
        }
        self.eat(b'[')?;
        self.skip_space();
        if self.peek()? == b']' {
            self.at += 1;
            return Some(());
        }
        loop {
            self.value(depth + 1)?;
            self.skip_space();
            match self.next()? {
                b',' => {}
                b']' => return Some(()),
                _ => return None,
            }
        }
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.at + word.len();
        (self.bytes.get(self.at..end)? == word).then(|| self.at = end)
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    fn number(&mut self) -> Option<()> {
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.next()? {
            b'0' => {}
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            self.digit()?;
            self.digits();
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            self.digit()?;
            self.digits();
        }
        Some(())
    }

    fn digit(&mut self) -> Option<()> {
        self.next()?.is_ascii_digit().then_some(())
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
    }

    /// A string (at `"`), its escapes decoded. A raw control character, an unknown escape or an
    /// unpaired surrogate is an error, as in serde_json.
    fn string(&mut self) -> Option<String> {
        self.eat(b'"')?;
        let mut out = Vec::new();
        loop {
            match self.next()? {
                b'"' => return String::from_utf8(out).ok(),
                b'\\' => {
                    let decoded = match self.next()? {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => self.unicode_escape()?,
                        _ => return None,
                    };
                    out.extend_from_slice(decoded.encode_utf8(&mut [0; 4]).as_bytes());
                }
                0x00..=0x1f => return None,
                byte => out.push(byte),
            }
        }
    }

    /// The character of `\uXXXX` (after the `u`), with the low half of a surrogate pair.
    fn unicode_escape(&mut self) -> Option<char> {
        let high = self.hex4()?;
        if !(0xD800..0xDC00).contains(&high) {
            return char::from_u32(high);
        }
        self.eat(b'\\')?;
        self.eat(b'u')?;
        let low = self.hex4()?;
        if !(0xDC00..0xE000).contains(&low) {
            return None;
        }
        char::from_u32(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = std::str::from_utf8(self.bytes.get(self.at..self.at + 4)?).ok()?;
        let value = u32::from_str_radix(digits, 16).ok()?;
        // from_str_radix accepts a sign; JSON does not.
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        self.at += 4;
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::top_level;

    fn keys(text: &str) -> Option<Vec<(String, Option<String>)>> {
        top_level(text)
    }

    #[test]
    fn reads_the_top_level_keys_and_string_values() {
        let read = keys(
            r#" { "status": "draft", "input": {"a": [1, -2.5e+3, true, null, "x\"y"]}, "k\u00e9y": "\ud83d\ude00" } "#,
        )
        .unwrap();
        assert_eq!(
            read,
            vec![
                ("status".to_string(), Some("draft".to_string())),
                ("input".to_string(), None),
                ("kéy".to_string(), Some("😀".to_string())),
            ]
        );
        assert_eq!(keys("{}").unwrap(), vec![]);
    }

    #[test]
    fn refuses_what_serde_json_refuses() {
        for bad in [
            "",
            "[]",
            "\"status\"",
            "{",
            "{\"a\": 1,}",
            "{\"a\": 1} x",
            "{\"a\": 01}",
            "{\"a\": 1.}",
            "{\"a\": .5}",
            "{\"a\": +1}",
            "{\"a\": 1e}",
            "{\"a\": tru}",
            "{\"a\": [1,]}",
            "{\"a\" 1}",
            "{a: 1}",
            "{\"a\": \"\\x\"}",
            "{\"a\": \"\\ud800\"}",
            "{\"a\": \"\\u+123\"}",
            "{\"a\": \"tab\there\"}",
            "{\"a\": 'single'}",
            "{\"a\": 1}}",
            "<<<<<<< HEAD\n{\"a\": 1}",
        ] {
            assert_eq!(keys(bad), None, "{bad:?}");
            let theirs = serde_json::from_str::<serde_json::Value>(bad);
            assert!(theirs.map_or(true, |v| !v.is_object()), "{bad:?}");
        }
    }

    #[test]
    fn nests_as_deep_as_serde_json_and_no_deeper() {
        let nested = |levels: usize| {
            format!(
                "{{\"a\": {}1{}}}",
                "[".repeat(levels - 1),
                "]".repeat(levels - 1)
            )
        };
        for levels in [126, 127, 128, 129] {
            let text = nested(levels);
            let theirs = serde_json::from_str::<serde_json::Value>(&text).is_ok();
            assert_eq!(keys(&text).is_some(), theirs, "{levels} levels");
        }
        assert!(keys(&nested(127)).is_some());
    }

    /// Every JSON file of the repository (fixtures, recordings, configs, bad-input cases) reads
    /// as serde_json reads it: the same verdict, the same keys and string values.
    #[test]
    fn reads_every_json_file_of_the_repository_as_serde_json_does() {
        fn walk(dir: &std::path::Path, files: &mut Vec<std::path::PathBuf>) {
            for entry in std::fs::read_dir(dir).unwrap().flatten() {
                let path = entry.path();
                let name = entry.file_name();
                if path.is_dir() && name != "target" && name != ".git" {
                    walk(&path, files);
                } else if path.extension().is_some_and(|e| e == "json") {
                    files.push(path);
                }
            }
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut files = Vec::new();
        walk(&root, &mut files);
        assert!(files.len() > 100, "{} files", files.len());
        for file in files {
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            let theirs = serde_json::from_str::<serde_json::Value>(&text)
                .ok()
                .and_then(|v| v.as_object().cloned());
            let ours = keys(&text);
            assert_eq!(ours.is_some(), theirs.is_some(), "{}", file.display());
            let (Some(ours), Some(theirs)) = (ours, theirs) else {
                continue;
            };
            let ours: std::collections::BTreeMap<_, _> = ours.into_iter().collect();
            let theirs: std::collections::BTreeMap<_, _> = theirs
                .into_iter()
                .map(|(k, v)| (k, v.as_str().map(str::to_string)))
                .collect();
            assert_eq!(ours, theirs, "{}", file.display());
        }
    }
}
