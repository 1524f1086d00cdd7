//! Fixture files: one JSON file, one case.
//!
//! A suite is a folder; every `*.json` file below it is a case, except those under the
//! recordings folder and under `.proposal-eval/`. Parsing is strict: an unknown key is an error
//! that names the key, the file, the line and column, and the known keys, so a typo never turns a
//! check off silently.

use crate::files::json_error;
use crate::path::Pattern;
use serde::Deserialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Whether a case runs.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The case runs (the default).
    #[default]
    Active,
    /// A drafted case, not yet reviewed: an ignored test.
    Draft,
    /// A case waiting for a person to complete it: an ignored test.
    NeedsHumanInput,
}

/// The content of a fixture file, as written.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(transform = fixture_aliases))]
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixtureFile {
    /// What the case is about; shown in reports.
    #[serde(default)]
    pub description: Option<String>,
    /// Handed to the code under test as `case.input`.
    #[serde(default)]
    pub input: Value,
    /// The expected output: an array of proposals (strict) or an object (field accuracy).
    #[serde(default, alias = "expectedDataProposal")]
    pub expected: Option<Value>,
    /// The tool calls the case must make (the `trajectory` evaluator): a list of steps, or
    /// `{"mode", "steps", "forbidden", "max_calls"}`.
    #[serde(default)]
    pub expected_trajectory: Option<crate::trajectory::ExpectedTrajectory>,
    /// Replaces the suite's ignore paths for this case; `[]` ignores nothing.
    #[serde(default, alias = "ignorePaths")]
    pub ignore_paths: Option<Vec<Pattern>>,
    /// Extra files (crate-relative) whose content belongs to this case's recording.
    #[serde(default)]
    pub sources: Vec<String>,
    /// `active` (default), `draft` or `needs_human_input`.
    #[serde(default)]
    pub status: Status,
    /// Lineage and rubric of a case drafted from a production failure.
    #[serde(default)]
    pub draft: Option<super::draft::Draft>,
    /// The JSON Schema an editor checks the file against (`schemas/fixture.json` of this
    /// repository, by URL or relative path); not read otherwise.
    #[serde(default, rename = "$schema")]
    pub schema: Option<String>,
    /// Statements the output must satisfy (`required`) and must not (`forbidden`), graded by
    /// the judge model of `[judge]`.
    #[serde(default)]
    pub rubric: Option<crate::rubric::Rubric>,
    /// Checks on parts of the output (the `checks` evaluator), beside the suite's
    /// `[[checks]]`: `[{ "path": "reply", "contains": "refund" }]`.
    #[serde(default)]
    pub checks: Option<Vec<crate::checks::Check>>,
    /// Limits on what the case's agent calls cost (the `budget` evaluator); its keys replace
    /// the suite's `[budget]` one by one.
    #[serde(default)]
    pub budget: Option<crate::budget::Budget>,
}

impl FixtureFile {
    /// The case's rubric: `rubric`, else a draft's `draft.assertions`; `None` when neither
    /// has a statement.
    pub fn rubric(&self) -> Option<std::borrow::Cow<'_, crate::rubric::Rubric>> {
        use std::borrow::Cow;
        let rubric = match (&self.rubric, &self.draft) {
            (Some(rubric), _) => Cow::Borrowed(rubric),
            (None, Some(draft)) => Cow::Owned(crate::rubric::Rubric {
                required: draft.assertions.required.clone(),
                forbidden: draft.assertions.forbidden.clone(),
            }),
            (None, None) => return None,
        };
        (!rubric.is_empty()).then_some(rubric)
    }

    /// The case's rubric when the suite's `rubric` evaluator grades it: what the rubric judge
    /// is given of the case.
    pub(crate) fn graded_rubric(
        &self,
        config: &crate::suite::config::SuiteConfig,
    ) -> Option<std::borrow::Cow<'_, crate::rubric::Rubric>> {
        if !config
            .evaluators
            .contains(&crate::suite::config::Evaluator::Rubric)
        {
            return None;
        }
        self.rubric()
    }
}

crate::files::located_error! {
    /// A fixture that could not be read or understood, with the place in it: printed as
    /// `file:line:column: message`, as compilers do.
    FixtureError
}

impl FixtureFile {
    /// Parses a fixture; `file` is used in error messages.
    ///
    /// ```
    /// use proposal_eval::__internal::fixture::FixtureFile;
    /// let ok = FixtureFile::parse(br#"{"input": {"m": 1}, "expected": []}"#, "a.json").unwrap();
    /// assert_eq!(ok.input["m"], 1);
    ///
    /// let err = FixtureFile::parse(b"{\n  \"expcted\": []\n}", "suite/a.json").unwrap_err();
    /// assert_eq!((err.line, err.column), (2, 3));
    /// assert!(err.to_string().contains("unknown field `expcted`"));
    /// assert!(err.to_string().contains("`expected`"));
    ///
    /// let err = FixtureFile::parse(b"[{\"input\": 1}]", "suite/a.json").unwrap_err();
    /// assert!(err.to_string().starts_with("suite/a.json:1:1: a fixture is a JSON object"));
    /// ```
    pub fn parse(bytes: &[u8], file: impl AsRef<Path>) -> Result<FixtureFile, FixtureError> {
        let file = file.as_ref();
        // A UTF-8 byte order mark, which some editors write, is not part of the JSON.
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        not_an_object(bytes, file)?;
        // The whole file checked to be UTF-8 at once, then read as text, is faster than
        // `from_slice`, which checks each string on its own (4 % of a no-model run); and one
        // reader means one copy of the fixture's `Deserialize` code in the crate.
        let text = std::str::from_utf8(bytes).map_err(|e| not_utf8(bytes, e, file))?;
        serde_json::from_str(text).map_err(|e| json_error(file, bytes, &e, "fixture").into())
    }
}

/// The first byte that is not UTF-8, named where it is.
fn not_utf8(bytes: &[u8], error: std::str::Utf8Error, file: &Path) -> FixtureError {
    let at = error.valid_up_to();
    // Everything before it is UTF-8.
    let before = std::str::from_utf8(&bytes[..at]).unwrap_or_default();
    let (line, column) = crate::files::line_column(before, at);
    FixtureError {
        file: file.to_path_buf(),
        line,
        column,
        message: format!(
            "byte 0x{:02X} is not UTF-8 text: a fixture is UTF-8 JSON; save the file as UTF-8 \
             (an editor's \"encoding\" setting), or write the character as \\uXXXX",
            bytes[at]
        ),
    }
}

/// A document that starts as another JSON value than an object: said in those words (serde
/// would read an array as the fixture's fields in order, and complain about the first).
fn not_an_object(bytes: &[u8], file: &Path) -> Result<(), FixtureError> {
    let Some(at) = bytes.iter().position(|b| !b.is_ascii_whitespace()) else {
        return Ok(()); // empty: serde's "cut off" message says it
    };
    let holds = match bytes[at] {
        b'[' => "an array",
        b'"' => "a string",
        b't' | b'f' => "a boolean",
        b'n' => "null",
        b'-' | b'0'..=b'9' => "a number",
        _ => return Ok(()),
    };
    let (line, column) = crate::files::line_column(&String::from_utf8_lossy(bytes), at);
    Err(FixtureError {
        file: file.to_path_buf(),
        line,
        column,
        message: format!(
            "a fixture is a JSON object, and this file holds {holds}: write {{ \"input\": ..., \"expected\": ... }} (one case per file)"
        ),
    })
}

/// Why `expected` cannot be compared by the strict or field_accuracy evaluator, which compare
/// proposals: a list of them or one object. `None` when it can, or when no such evaluator is
/// on (a code_judge takes any JSON).
pub(crate) fn uncomparable_expected(expected: Option<&Value>, structured: bool) -> Option<String> {
    let kind = match expected? {
        Value::String(_) => "a string",
        Value::Number(_) => "a number",
        Value::Bool(_) => "a boolean",
        Value::Null | Value::Array(_) | Value::Object(_) => return None,
    };
    structured.then(|| {
        format!(
            "`expected` is {kind}, which the suite's evaluators (strict, field_accuracy) cannot compare: write the proposals the code should produce as a list (`[{{...}}]`) or one object (`{{...}}`); only a code_judge alone takes any JSON"
        )
    })
}

/// A fixture file found in a suite, before it is parsed.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct FixturePath {
    /// Path relative to the suite folder, `/`-separated: `sub/raise_amount.json`.
    pub relative: String,
    /// Path on disk.
    pub absolute: PathBuf,
}

impl FixturePath {
    /// The relative path without `.json`: the case's identity (`sub/raise_amount`), also the
    /// recording's path below the recordings folder.
    pub fn case_path(&self) -> &str {
        self.relative
            .strip_suffix(".json")
            .unwrap_or(&self.relative)
    }
}

/// Every fixture of a suite, sorted by path, by the rule of [`proposal_eval_naming::fixture_files`].
pub fn discover(suite: &Path, recordings: &Path) -> std::io::Result<Vec<FixturePath>> {
    Ok(crate::naming::fixture_files(suite, recordings)?
        .into_iter()
        .map(|relative| FixturePath {
            absolute: suite.join(&relative),
            relative,
        })
        .collect())
}

/// The camelCase keys `#[serde(alias)]` accepts, in the JSON Schema too.
#[cfg(feature = "schema")]
fn fixture_aliases(schema: &mut schemars::Schema) {
    proposal_eval_engine::schema::aliases(
        schema,
        &[
            ("expected", "expectedDataProposal"),
            ("ignore_paths", "ignorePaths"),
        ],
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The recording fuzz target's finding, for fixtures: an `expected` number must be the f64
    /// the code under test computes, to the bit, or strict comparison fails on 670/7.
    #[test]
    fn numbers_are_read_to_the_bit() {
        let fixture = FixtureFile::parse(
            br#"{"expected": [95.71428571428571, 8.88888888888889e+77]}"#,
            "a.json",
        )
        .unwrap();
        let expected = fixture.expected.unwrap();
        assert_eq!(
            expected[0].as_f64().map(f64::to_bits),
            Some((670.0f64 / 7.0).to_bits())
        );
        assert_eq!(
            expected[1].as_f64().map(f64::to_bits),
            Some(8.88888888888889e77f64.to_bits())
        );
    }

    /// A malformed trajectory step is the fixture's error, named by its place and key: the
    /// case fails there, before its code (and any model) runs.
    #[test]
    fn a_malformed_trajectory_step_is_a_fixture_error() {
        let text = b"{\n  \"input\": {},\n  \"expected_trajectory\": [\n    {\"tool\": \"lookup\"},\n    {\"tool\": \"lookup\", \"args\": \"category=laptop\"}\n  ]\n}\n";
        let err = FixtureFile::parse(text, "s/a.json").unwrap_err();
        assert!(
            err.to_string().starts_with("s/a.json:")
                && err.message.starts_with(
                    "expected_trajectory step 2: `args` is a string \"category=laptop\""
                ),
            "{err}"
        );
        let err = FixtureFile::parse(br#"{"expected_trajectory": [{"tool": ""}]}"#, "s/a.json")
            .unwrap_err();
        assert!(
            err.message
                .starts_with("expected_trajectory step 1: `tool` is \"\""),
            "{err}"
        );
    }

    #[test]
    fn the_macros_key_list_is_the_parsers() {
        let err = FixtureFile::parse(b"{\"zzz\": 1}", "a.json").unwrap_err();
        let mut listed: Vec<&str> = err.message.split('`').skip(3).step_by(2).collect();
        let mut known = crate::naming::FIXTURE_KEYS.to_vec();
        listed.sort();
        known.sort();
        assert_eq!(listed, known, "{err}");
    }

    #[test]
    fn a_byte_order_mark_is_accepted_and_another_top_level_value_is_named() {
        let f =
            FixtureFile::parse(b"\xEF\xBB\xBF{\"input\": 1, \"expected\": []}", "a.json").unwrap();
        assert_eq!(f.input, 1);
        for (text, holds, column) in [
            (&b"[{\"input\": 1}]"[..], "an array", 1),
            (b"\n  \"yes\"", "a string", 3),
            (b"\xEF\xBB\xBF 12", "a number", 2),
            (b"true", "a boolean", 1),
            (b"null", "null", 1),
        ] {
            let err = FixtureFile::parse(text, "s/a.json").unwrap_err();
            assert_eq!(err.column, column, "{err}");
            assert_eq!(
                err.message,
                format!("a fixture is a JSON object, and this file holds {holds}: write {{ \"input\": ..., \"expected\": ... }} (one case per file)")
            );
        }
    }

    #[test]
    fn expected_must_be_what_the_evaluators_compare() {
        let yes = Value::from("yes");
        let err = uncomparable_expected(Some(&yes), true).unwrap();
        assert!(err.starts_with("`expected` is a string, which the suite's evaluators (strict, field_accuracy) cannot compare"), "{err}");
        assert!(uncomparable_expected(Some(&Value::from(3)), true)
            .unwrap()
            .contains("a number"));
        assert!(
            uncomparable_expected(Some(&yes), false).is_none(),
            "a code_judge takes any JSON"
        );
        for fine in [serde_json::json!([]), serde_json::json!({"a": 1})] {
            assert!(uncomparable_expected(Some(&fine), true).is_none());
        }
        assert!(uncomparable_expected(None, true).is_none());
    }

    #[test]
    fn a_schema_key_is_accepted_and_not_a_check() {
        let f = FixtureFile::parse(
            br#"{"$schema": "../../schemas/fixture.json", "input": 1, "expected": []}"#,
            "a.json",
        )
        .unwrap();
        assert_eq!(f.schema.as_deref(), Some("../../schemas/fixture.json"));
        let err = FixtureFile::parse(br#"{"$schemas": "x"}"#, "a.json").unwrap_err();
        assert!(err.message.contains("unknown field `$schemas`"), "{err}");
    }

    #[test]
    fn camel_case_aliases_are_accepted() {
        let f = FixtureFile::parse(
            br#"{"input": 1, "expectedDataProposal": [{"a": 1}], "ignorePaths": ["x.*"]}"#,
            "a.json",
        )
        .unwrap();
        assert_eq!(f.expected.unwrap()[0]["a"], 1);
        assert_eq!(f.ignore_paths.unwrap()[0].as_str(), "x.*");
    }

    #[test]
    fn bad_ignore_path_is_located() {
        let err = FixtureFile::parse(b"{\"ignore_paths\": [\"a..b\"]}", "a.json").unwrap_err();
        assert_eq!(err.line, 1);
        assert!(err.message.contains("invalid path `a..b`"), "{err}");
    }

    #[test]
    fn unknown_status_lists_the_allowed_ones() {
        let err = FixtureFile::parse(b"{\"status\": \"paused\"}", "a.json").unwrap_err();
        assert!(err.message.contains("needs_human_input"), "{err}");
    }

    #[test]
    fn conflict_markers_are_named() {
        let err = FixtureFile::parse(b"{\n<<<<<<< HEAD\n}", "a.json").unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.message.contains("merge-conflict"), "{err}");
    }

    /// Bytes that are not UTF-8 are named where they are, and UTF-8 text is read as it was.
    #[test]
    fn a_fixture_that_is_not_utf8_says_where() {
        let err = FixtureFile::parse(b"{\n  \"input\": \"caf\xE9\"\n}", "a.json").unwrap_err();
        assert_eq!((err.line, err.column), (2, 16), "{err}");
        assert_eq!(
            err.to_string(),
            "a.json:2:16: byte 0xE9 is not UTF-8 text: a fixture is UTF-8 JSON; save the file as \
             UTF-8 (an editor's \"encoding\" setting), or write the character as \\uXXXX"
        );
        let ok = FixtureFile::parse("{\"input\": \"café \\u00e9\"}".as_bytes(), "a.json").unwrap();
        assert_eq!(ok.input, "café é");
    }

    #[test]
    fn truncated_file_says_so() {
        let err = FixtureFile::parse(b"{\"input\": {", "a.json").unwrap_err();
        assert!(err.message.contains("cut off"), "{err}");
    }

    #[test]
    fn discovery_skips_recordings_and_hidden_and_walks_nested_config_folders() {
        let dir = std::env::temp_dir().join(format!("pe-discover-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for f in [
            "a.json",
            "sub/b.json",
            "recordings/a.json",
            ".proposal-eval/x.json",
            "c.txt",
            "inner/proposal-eval.toml",
            "inner/x.json",
        ] {
            let p = dir.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "{}").unwrap();
        }
        let found = discover(&dir, &dir.join("recordings")).unwrap();
        let names: Vec<_> = found.iter().map(|f| f.relative.as_str()).collect();
        // A folder with its own config is a nested config of this suite: its cases stay here.
        assert_eq!(names, ["a.json", "inner/x.json", "sub/b.json"]);
        assert_eq!(found[2].case_path(), "sub/b");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
