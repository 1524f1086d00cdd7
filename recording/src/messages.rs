//! serde's messages in a person's words, with the key they are about.
//!
//! serde describes a wrong value in Rust's words (`invalid type: string "x", expected a
//! sequence`, `invalid value: integer `-1`, expected usize`) and without the key it belongs to.
//! The readers of fixtures, configs and label files pass their parser's message through
//! [`in_words`], and find the key with [`json_path_at`] (the engine's, shared with its readers of
//! JSON values) or [`toml_key_at`]: `rubric.required: expected a list of statements, found the
//! string "x"`.

pub use proposal_eval_engine::json::path_at as json_path_at;

/// What a file calls a group of keys: JSON's objects, TOML's tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syntax {
    Json,
    Toml,
}

/// `message` in a person's words, prefixed by `key` (when not empty) where serde names no key: a
/// type or value error says what was expected and what was found, in the file's words.
pub fn in_words(message: &str, key: &str, syntax: Syntax) -> String {
    // A reader that names the key itself (`expected_trajectory.max_calls: invalid value: ...`).
    if let Some(at) = ["invalid type: ", "invalid value: ", "invalid length "]
        .iter()
        .filter_map(|phrase| message.find(phrase))
        .min()
        .filter(|&at| at > 0 && message[..at].ends_with(": "))
    {
        let named = &message[..at - 2];
        return in_words(&message[at..], named, syntax);
    }
    let said = if let Some(rest) = message.strip_prefix("invalid type: ") {
        found_expected(rest, syntax)
    } else if let Some(rest) = message.strip_prefix("invalid value: ") {
        found_expected(rest, syntax)
    } else if let Some(rest) = message.strip_prefix("invalid length ") {
        rest.split_once(", expected ").map(|(n, expected)| {
            format!(
                "expected {}, found {n} item(s)",
                thing(expected.trim(), syntax)
            )
        })
    } else {
        None
    };
    match said {
        Some(said) if !key.is_empty() => format!("{key}: {said}"),
        Some(said) => said,
        None => message.to_string(),
    }
}

/// `"<found>, expected <what>"` (serde's order, possibly with a sentence after) as
/// `"expected <what>, found <found>"`.
fn found_expected(rest: &str, syntax: Syntax) -> Option<String> {
    let (found, expected) = rest.split_once(", expected ")?;
    Some(format!(
        "expected {}, found {}",
        thing(expected.trim(), syntax),
        value(found.trim(), syntax)
    ))
}

/// serde's name of a value that was found: `string "x"`, ``integer `-1` ``, `map`, ...
fn value(found: &str, syntax: Syntax) -> String {
    let ticked = |prefix: &str| {
        found
            .strip_prefix(prefix)
            .map(|v| v.trim().trim_matches('`').to_string())
    };
    if let Some(text) = found.strip_prefix("string ") {
        return format!("the string {text}");
    }
    for prefix in ["integer ", "floating point ", "boolean "] {
        if let Some(v) = ticked(prefix) {
            return v;
        }
    }
    match found {
        "map" => group(syntax).to_string(),
        "sequence" => "a list".to_string(),
        "unit value" | "null" => "null".to_string(),
        other => other.to_string(),
    }
}

/// serde's name of an expected type, with Rust's words replaced: `usize` is a whole number of 0
/// or more, a sequence a list, a map or a struct an object (a table in TOML).
fn thing(expected: &str, syntax: Syntax) -> String {
    let unsigned = ["usize", "u64", "u32", "u16", "u8"];
    let signed = ["isize", "i64", "i32", "i16", "i8"];
    if unsigned.contains(&expected) {
        return "a whole number, 0 or more".into();
    }
    if signed.contains(&expected) {
        return "a whole number".into();
    }
    if ["f64", "f32"].contains(&expected) {
        return "a number".into();
    }
    if expected == "a sequence" || expected == "sequence" {
        return "a list".into();
    }
    if expected == "a map" || expected == "map" || expected.starts_with("struct ") {
        return group(syntax).to_string();
    }
    if expected == "a borrowed string" {
        return "a string".into();
    }
    if expected == "unit" {
        return "null".into();
    }
    // `a sequence of ...`, `a map of ...` inside a longer description.
    expected
        .replace("a sequence", "a list")
        .replace("a map", group(syntax))
}

fn group(syntax: Syntax) -> &'static str {
    match syntax {
        Syntax::Json => "an object",
        Syntax::Toml => "a table",
    }
}

/// The key (`judge.samples`, `run.repeat`) whose value the byte `offset` of TOML `text` is in:
/// the last table header above it and the key left of `=` on its line; `""` when there is none.
pub fn toml_key_at(text: &str, offset: usize) -> String {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line_start = before.rfind('\n').map_or(0, |n| n + 1);
    let line = &text[line_start..];
    let line = line.split('\n').next().unwrap_or_default();
    let Some((key, _)) = line.split_once('=') else {
        return String::new();
    };
    let key = key.trim().trim_matches('"');
    let table = before[..line_start]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
        .map(|l| l.trim_matches(|c| c == '[' || c == ']').trim().to_string())
        .unwrap_or_default();
    match table.as_str() {
        "" => key.to_string(),
        table => format!("{table}.{key}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_and_value_errors_in_a_persons_words() {
        let json = |m: &str, key: &str| in_words(m, key, Syntax::Json);
        assert_eq!(
            json(
                "invalid type: string \"x\", expected a sequence",
                "rubric.required"
            ),
            "rubric.required: expected a list, found the string \"x\""
        );
        assert_eq!(
            json(
                "invalid value: integer `-1`, expected usize",
                "expected_trajectory.max_calls"
            ),
            "expected_trajectory.max_calls: expected a whole number, 0 or more, found -1"
        );
        assert_eq!(
            in_words(
                "invalid type: map, expected a string",
                "model",
                Syntax::Toml
            ),
            "model: expected a string, found a table"
        );
        assert_eq!(
            json("invalid type: sequence, expected struct Rubric", "rubric"),
            "rubric: expected an object, found a list"
        );
        // A message that names its key already is left as it is.
        assert_eq!(
            json("unknown field `x`, expected `input`", "a"),
            "unknown field `x`, expected `input`"
        );
    }

    #[test]
    fn the_json_path_at_a_place() {
        let text = "{\n  \"input\": {\"a\": [1, 2]},\n  \"rubric\": { \"required\": \"x\" }\n}";
        // serde_json places a type error just after the value.
        assert_eq!(json_path_at(text, 3, 29), "rubric.required");
        assert_eq!(json_path_at(text, 2, 22), "input.a[1]");
        assert_eq!(json_path_at(text, 1, 1), "");
        assert_eq!(json_path_at("{\"a\\\"b\": 1}", 1, 10), "a\\\"b");
    }

    #[test]
    fn the_toml_key_at_a_place() {
        let text = "evaluators = 1\n[judge]\nsamples = \"x\"\n";
        assert_eq!(toml_key_at(text, 13), "evaluators");
        assert_eq!(
            toml_key_at(text, text.find("\"x").unwrap()),
            "judge.samples"
        );
        assert_eq!(toml_key_at(text, text.find("[judge]").unwrap()), "");
    }
}
