//! The `draft` key of a fixture: a case drafted from a production failure by `cargo
//! proposal-eval draft`.
//!
//! A drafted case is an ordinary fixture file. It carries `status` `draft` or
//! `needs_human_input` (so it is an ignored test), an `input` reproduced from the production
//! trace, usually no `expected` yet, and this `draft` key: where the case came from (lineage),
//! the rubric a reviewer starts from, who last edited it, and how it was generated.
//!
//! `cargo proposal-eval draft` writes these files and `cargo proposal-eval promote` turns them
//! into active cases; the fixture parser reads the same [`Draft`] type, so there is one schema.
//!
//! ```
//! use proposal_eval::__internal::draft::{Draft, EditSource};
//! let fixture = serde_json::json!({
//!     "description": "Prevent stale product recommendations",
//!     "input": { "prompt": "Recommend a laptop under $1000." },
//!     "status": "needs_human_input",
//!     "draft": {
//!         "eval_test_id": "eval_sugg_abc123",
//!         "title": "Prevent stale product recommendations",
//!         "rationale": "The agent recommended discontinued SKUs.",
//!         "source": {
//!             "suggestion_id": "sugg_abc123",
//!             "canonical_trace_id": "dd_trace_67890",
//!             "canonical_pattern_id": "pattern_dd_trace_67890",
//!             "trace_ids": ["dd_trace_67890"],
//!             "pattern_ids": ["pattern_dd_trace_67890"]
//!         },
//!         "assertions": {
//!             "required": [],
//!             "forbidden": ["I recommend SKU-123 (discontinued)."]
//!         },
//!         "edit_source": "generated",
//!         "generated_at": "2025-12-29T12:00:00Z",
//!         "updated_at": "2025-12-29T12:00:00Z",
//!         "generator_meta": {
//!             "model": null,
//!             "temperature": null,
//!             "generator": "template",
//!             "prompt_hash": "00",
//!             "response_sha256": "00",
//!             "run_id": "draft-20251229T120000Z-000000",
//!             "content_sha256": "00"
//!         }
//!     }
//! });
//! let draft = Draft::from_fixture(&fixture).unwrap().unwrap();
//! assert_eq!(draft.edit_source, EditSource::Generated);
//! assert_eq!(draft.source.canonical_trace_id, "dd_trace_67890");
//! assert_eq!(draft.generator_meta.prompt_hash, "00");
//! ```

use chrono::{DateTime, Utc};
pub use proposal_eval_engine::json::canonical_json;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The fixture key that holds a [`Draft`].
pub const KEY: &str = "draft";

/// A drafted eval case's lineage, rubric and provenance: the value of a fixture's `draft` key.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Draft {
    /// Stable id of the eval case, `eval_<suggestion_id>`; `promote` accepts it.
    pub eval_test_id: String,
    /// One line saying what the case guards against (from the suggestion's title).
    pub title: String,
    /// Why the case exists: the production failure it reproduces.
    pub rationale: String,
    /// Which suggestion and production traces the case was drafted from.
    pub source: DraftSource,
    /// The rubric a reviewer starts from when writing `expected`.
    pub assertions: Assertions,
    /// Who wrote the current content: the generator, or a human (after which `draft` never
    /// overwrites the file without `--force`).
    pub edit_source: EditSource,
    /// When the generator produced this content.
    pub generated_at: DateTime<Utc>,
    /// When the file was last changed by a tool (`draft` or `promote`).
    pub updated_at: DateTime<Utc>,
    /// How the content was generated, with hashes that make the generation auditable.
    pub generator_meta: GeneratorMeta,
}

/// Lineage of a drafted case: the suggestion and the production traces behind it.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DraftSource {
    /// The suggestion record's `suggestion_id`.
    pub suggestion_id: String,
    /// The trace the case's `input` was taken from: the one with the highest confidence, ties
    /// broken by the smallest `trace_id`.
    pub canonical_trace_id: String,
    /// The canonical trace's `pattern_id`, when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canonical_pattern_id: Option<String>,
    /// Every source trace id, canonical first, then by the same ordering.
    pub trace_ids: Vec<String>,
    /// Every distinct pattern id, in the order of `trace_ids`.
    pub pattern_ids: Vec<String>,
}

/// The rubric of a drafted case: what a correct reply must and must not contain.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Assertions {
    /// Statements a correct reply must satisfy.
    #[serde(default, deserialize_with = "proposal_eval_engine::rubric::statements")]
    #[cfg_attr(feature = "schema", schemars(with = "Vec<String>"))]
    pub required: Vec<String>,
    /// Statements or outputs a correct reply must not contain. The template generator puts the
    /// production trace's observed (bad) output here, so reviewers see what went wrong.
    #[serde(default, deserialize_with = "proposal_eval_engine::rubric::statements")]
    #[cfg_attr(feature = "schema", schemars(with = "Vec<String>"))]
    pub forbidden: Vec<String>,
    /// A reply that would pass, when the generator could propose one; a starting point for
    /// `expected`, never compared by itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub golden_output: Option<Value>,
    /// Free-form notes for the reviewer.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub notes: String,
}

/// Who wrote a draft's current content.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum EditSource {
    /// Written by a generator and not touched since.
    Generated,
    /// Edited or promoted by a human.
    Human,
}

impl EditSource {
    /// The name used in fixture files.
    pub fn name(self) -> &'static str {
        match self {
            EditSource::Generated => "generated",
            EditSource::Human => "human",
        }
    }
}

/// How a draft was generated. Dashboards read these documents by the key names, so `model`,
/// `temperature`, `prompt_hash`, `response_sha256` and `run_id` are always written (`model` and
/// `temperature` as `null` when the generator did not report them).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(transform = generator_meta_aliases))]
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GeneratorMeta {
    /// The model the generator used, when it reported one (`null` otherwise: the template
    /// generator uses no model).
    #[serde(default)]
    pub model: Option<String>,
    /// The sampling temperature the generator used, when it reported one.
    #[serde(default)]
    pub temperature: Option<f64>,
    /// SHA-256 (lowercase hex) of the exact bytes handed to the generator: the suggestion record
    /// as canonical JSON. Equal hashes mean the generator saw the same input. Drafts written
    /// before the key had this name call it `prompt_sha256`; both are read.
    #[serde(alias = "prompt_sha256")]
    pub prompt_hash: String,
    /// SHA-256 (lowercase hex) of the generator's raw response.
    pub response_sha256: String,
    /// The `draft` run that generated this content (its summary is under
    /// `<suite>/.proposal-eval/runs/<run_id>/`).
    pub run_id: String,
    /// The generator: `template@<cli version>` or `command:<argv>`.
    pub generator: String,
    /// SHA-256 of the fixture as generated (see [`content_sha256`]). When the file's current
    /// content hashes differently, someone edited it and `draft` leaves it alone.
    pub content_sha256: String,
}

impl Draft {
    /// Reads the `draft` key of a fixture document: `Ok(None)` when the key is absent.
    pub fn from_fixture(fixture: &Value) -> Result<Option<Draft>, serde_json::Error> {
        match fixture.get(KEY) {
            None => Ok(None),
            Some(value) => Draft::deserialize(value).map(Some),
        }
    }
}

/// SHA-256 (lowercase hex) of a drafted fixture's content, as stored in
/// `draft.generator_meta.content_sha256`.
///
/// The hash covers the whole fixture as canonical JSON (sorted keys, no whitespace) except the
/// values that change without the content changing: `draft.generated_at`, `draft.updated_at`,
/// `draft.generator_meta.run_id` and the stored hash itself. Key order and formatting do not
/// matter; any other edit does.
///
/// ```
/// use proposal_eval::__internal::draft::content_sha256;
/// let a = serde_json::json!({ "input": 1, "draft": { "updated_at": "x" } });
/// let b = serde_json::json!({ "draft": { "updated_at": "y" }, "input": 1 });
/// let c = serde_json::json!({ "draft": { "updated_at": "x" }, "input": 2 });
/// assert_eq!(content_sha256(&a), content_sha256(&b));
/// assert_ne!(content_sha256(&a), content_sha256(&c));
/// ```
pub fn content_sha256(fixture: &Value) -> String {
    let mut copy = fixture.clone();
    if let Some(draft) = copy.get_mut(KEY).and_then(Value::as_object_mut) {
        draft.remove("generated_at");
        draft.remove("updated_at");
        if let Some(meta) = draft
            .get_mut("generator_meta")
            .and_then(Value::as_object_mut)
        {
            meta.remove("run_id");
            meta.remove("content_sha256");
        }
    }
    sha256_hex(canonical_json(&copy).as_bytes())
}

/// Lowercase hex SHA-256 of some bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

/// The older key names `#[serde(alias)]` accepts, in the JSON Schema too.
#[cfg(feature = "schema")]
fn generator_meta_aliases(schema: &mut schemars::Schema) {
    proposal_eval_engine::schema::aliases(schema, &[("prompt_hash", "prompt_sha256")]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample() -> Value {
        json!({
            "description": "d",
            "input": { "prompt": "p" },
            "status": "draft",
            "draft": {
                "eval_test_id": "eval_s1",
                "title": "t",
                "rationale": "r",
                "source": {
                    "suggestion_id": "s1",
                    "canonical_trace_id": "t1",
                    "trace_ids": ["t1"],
                    "pattern_ids": []
                },
                "assertions": { "required": ["a"], "forbidden": [] },
                "edit_source": "generated",
                "generated_at": "2025-01-01T00:00:00Z",
                "updated_at": "2025-01-01T00:00:00Z",
                "generator_meta": {
                    "model": null,
                    "temperature": null,
                    "generator": "template",
                    "prompt_hash": "p",
                    "response_sha256": "r",
                    "run_id": "run1",
                    "content_sha256": "c"
                }
            }
        })
    }

    #[test]
    fn round_trips() {
        let fixture = sample();
        let draft = Draft::from_fixture(&fixture).unwrap().unwrap();
        assert_eq!(serde_json::to_value(&draft).unwrap(), fixture["draft"]);
    }

    #[test]
    fn writes_every_generator_meta_key_and_reads_the_old_names() {
        let draft = Draft::from_fixture(&sample()).unwrap().unwrap();
        let meta = serde_json::to_value(&draft.generator_meta).unwrap();
        let keys: Vec<&str> = meta
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "content_sha256",
                "generator",
                "model",
                "prompt_hash",
                "response_sha256",
                "run_id",
                "temperature"
            ]
        );
        assert_eq!(meta["model"], Value::Null);
        assert_eq!(meta["temperature"], Value::Null);

        // A draft written before the rename: `prompt_sha256`, no `model` or `temperature`.
        let mut old = sample();
        let old_meta = old["draft"]["generator_meta"].as_object_mut().unwrap();
        old_meta.remove("model");
        old_meta.remove("temperature");
        let hash = old_meta.remove("prompt_hash").unwrap();
        old_meta.insert("prompt_sha256".into(), hash);
        assert_eq!(Draft::from_fixture(&old).unwrap().unwrap(), draft);

        let mut both = sample();
        both["draft"]["generator_meta"]["prompt_sha256"] = json!("p");
        let err = Draft::from_fixture(&both).unwrap_err().to_string();
        assert!(err.contains("duplicate field `prompt_hash`"), "{err}");
    }

    #[test]
    fn absent_key_is_none() {
        assert_eq!(Draft::from_fixture(&json!({ "input": 1 })).unwrap(), None);
    }

    #[test]
    fn unknown_key_names_it() {
        let mut fixture = sample();
        fixture["draft"]["assertions"]["forbiden"] = json!([]);
        let err = Draft::from_fixture(&fixture).unwrap_err().to_string();
        assert!(err.contains("unknown field `forbiden`"), "{err}");
    }

    #[test]
    fn bad_edit_source_is_an_error() {
        let mut fixture = sample();
        fixture["draft"]["edit_source"] = json!("robot");
        assert!(Draft::from_fixture(&fixture).is_err());
    }

    #[test]
    fn hash_ignores_volatile_fields_only() {
        let base = content_sha256(&sample());
        let mut volatile = sample();
        volatile["draft"]["generated_at"] = json!("2030-01-01T00:00:00Z");
        volatile["draft"]["updated_at"] = json!("2030-01-01T00:00:00Z");
        volatile["draft"]["generator_meta"]["run_id"] = json!("run2");
        volatile["draft"]["generator_meta"]["content_sha256"] = json!("other");
        assert_eq!(content_sha256(&volatile), base);

        let mut edited = sample();
        edited["draft"]["assertions"]["required"] = json!(["b"]);
        assert_ne!(content_sha256(&edited), base);
        let mut expected_added = sample();
        expected_added["expected"] = json!([]);
        assert_ne!(content_sha256(&expected_added), base);
    }

    #[test]
    fn sha256_of_empty_input() {
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
