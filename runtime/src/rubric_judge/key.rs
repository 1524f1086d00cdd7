//! The key of a rubric's verdicts: what the judge is asked ([`Question`]) and the SHA-256 of
//! everything its answer depends on, part by part, so that a stale judgement names what changed.

use super::RubricJudgeConfig;
use crate::recording::judgement::{HexDigest, KeyParts, KeyText};
use proposal_eval_engine::json::canonical_json;
use proposal_eval_engine::rubric::{self, Rubric};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// A key and its parts.
#[derive(Clone, Debug, PartialEq)]
pub struct JudgeKey {
    /// See [`Judgement::key_sha256`].
    pub key_sha256: String,
    /// See [`Judgement::parts`].
    pub parts: KeyParts,
}

#[cfg(test)]
fn sha256_hex(text: &str) -> String {
    format!("{:x}", Sha256::digest(text.as_bytes()))
}

/// SHA-256 of `value`'s canonical JSON, written into a buffer each thread reuses: no text of a
/// value is allocated for its own.
fn value_sha256(value: &Value) -> HexDigest {
    with_buffer(|buffer| proposal_eval_engine::json::write_canonical(value, buffer))
}

/// SHA-256 of what `write` appends to an empty buffer, the thread's own.
fn with_buffer(write: impl FnOnce(&mut Vec<u8>)) -> HexDigest {
    thread_local! {
        static BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    BUFFER.with(|buffer| {
        // A buffer in use (a hash made while another is made: not done here) is not shared.
        let mut own = Vec::new();
        let mut borrowed = buffer.try_borrow_mut();
        let buffer = borrowed.as_deref_mut().unwrap_or(&mut own);
        buffer.clear();
        write(buffer);
        let hash = HexDigest::of(Sha256::digest(&buffer[..]));
        // A very large value does not keep its room for the rest of the thread's life.
        if buffer.capacity() > 1 << 20 {
            *buffer = Vec::new();
        }
        hash
    })
}

/// The digests of a question's large parts (the input's only when the question does not have it).
struct Digests {
    rubric: HexDigest,
    output: HexDigest,
    input: Option<HexDigest>,
    trajectory: Option<HexDigest>,
}

impl Digests {
    /// The input's digest, when made.
    fn input_sha256(&self) -> &str {
        self.input.as_ref().map_or("", HexDigest::as_str)
    }
}

/// What the judge is asked about one output, and with which settings.
pub struct Question<'a> {
    /// The case's rubric.
    pub rubric: &'a Rubric,
    /// The case's input.
    pub input: &'a Value,
    /// The SHA-256 of `input`'s canonical JSON when the caller has it already (a replay's
    /// staleness check makes it: the recording's `input_sha256`); made from `input` otherwise.
    pub input_sha256: Option<&'a str>,
    /// The output judged.
    pub output: &'a Value,
    /// The case's trajectory; `None` unless `[judge] include_trajectory` is on.
    pub trajectory: Option<&'a Value>,
    /// The prompt template's text.
    pub template: &'a str,
    /// `[judge]`.
    pub config: &'a RubricJudgeConfig,
}

/// `items` as a JSON array of strings.
fn write_strings(items: &[String], out: &mut Vec<u8>) {
    out.push(b'[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        proposal_eval_engine::json::write_json_str(item, out);
    }
    out.push(b']');
}

impl Question<'_> {
    /// The model name in the key and the request (`""` when `[judge] model` is not set).
    fn model(&self) -> &str {
        self.config.model.as_deref().unwrap_or("")
    }

    /// The key of the verdicts on this question, as this version records it.
    ///
    /// `key_sha256` is the SHA-256 of the canonical JSON of the key's parts: the SHA-256 of the
    /// statements, the output, the input, the trajectory (when included) and the prompt
    /// template, and the model, temperature and samples as values. It changes exactly when one
    /// of them does, and the large parts are hashed once (the built-in template once per
    /// process), not fed whole into a second hash.
    pub fn key(&self) -> JudgeKey {
        let parts = self.parts();
        JudgeKey {
            key_sha256: parts.key_sha256(),
            parts,
        }
    }

    /// [`JudgeKey::key_sha256`] alone, made from the parts' digests without keeping them (what a
    /// replay checks on every case).
    pub fn key_sha256(&self) -> String {
        let (digests, prompt) = (self.digests(), self.template_sha256());
        self.key_text(&digests, &prompt).sha256()
    }

    /// The key's parts.
    pub fn parts(&self) -> KeyParts {
        let (digests, prompt) = (self.digests(), self.template_sha256());
        self.key_text(&digests, &prompt).to_parts()
    }

    /// The key's parts as texts, borrowed from `digests` and `prompt` (the template's digest).
    fn key_text<'t>(&'t self, digests: &'t Digests, prompt: &'t HexDigest) -> KeyText<'t> {
        KeyText {
            input_sha256: self.input_sha256.unwrap_or_else(|| digests.input_sha256()),
            model: self.model(),
            output_sha256: digests.output.as_str(),
            prompt_sha256: prompt.as_str(),
            rubric_sha256: digests.rubric.as_str(),
            samples: self.config.samples,
            temperature: self.config.temperature,
            trajectory_sha256: digests.trajectory.as_ref().map(HexDigest::as_str),
        }
    }

    /// The digests of the rubric, the output, the input (unless given) and the trajectory.
    fn digests(&self) -> Digests {
        Digests {
            rubric: with_buffer(|out| {
                // `{"forbidden":[...],"required":[...]}`, keys in order.
                out.extend_from_slice(b"{\"forbidden\":");
                write_strings(&self.rubric.forbidden, out);
                out.extend_from_slice(b",\"required\":");
                write_strings(&self.rubric.required, out);
                out.push(b'}');
            }),
            output: value_sha256(self.output),
            input: self
                .input_sha256
                .is_none()
                .then(|| value_sha256(self.input)),
            trajectory: self.trajectory.map(value_sha256),
        }
    }

    /// SHA-256 of the template's bytes; the built-in template's once per process.
    fn template_sha256(&self) -> std::borrow::Cow<'static, HexDigest> {
        static BUILTIN: std::sync::OnceLock<HexDigest> = std::sync::OnceLock::new();
        if self.template == rubric::BUILTIN_TEMPLATE {
            return std::borrow::Cow::Borrowed(
                BUILTIN.get_or_init(|| HexDigest::of(Sha256::digest(rubric::BUILTIN_TEMPLATE))),
            );
        }
        std::borrow::Cow::Owned(HexDigest::of(Sha256::digest(self.template)))
    }

    /// The key as format 4 recorded it: the SHA-256 of the canonical JSON of `{"statements",
    /// "output", "input", "prompt", "model", "temperature", "samples"}` (and `"trajectory"` when
    /// included), the texts themselves rather than their hashes. A format-4 judgement is fresh
    /// while this is its key.
    pub fn key_sha256_format_4(&self) -> String {
        let text = |v: &Value| canonical_json(v);
        let mut hasher = Sha256::new();
        let mut first = true;
        let rubric =
            json!({ "required": self.rubric.required, "forbidden": self.rubric.forbidden });
        for (key, value) in [
            ("input", text(self.input)),
            ("model", text(&json!(self.model()))),
            ("output", text(self.output)),
            ("prompt", text(&json!(self.template))),
            ("samples", text(&json!(self.config.samples))),
            ("statements", text(&rubric)),
            ("temperature", text(&json!(self.config.temperature))),
        ]
        .into_iter()
        .chain(self.trajectory.map(|t| ("trajectory", text(t))))
        {
            hasher.update(if first { "{\"" } else { ",\"" });
            first = false;
            hasher.update(key);
            hasher.update("\":");
            hasher.update(value);
        }
        hasher.update("}");
        crate::recording::judgement::hex(hasher.finalize())
    }

    /// The chat completion request of one judge call.
    pub fn request(&self) -> Value {
        let prompt = rubric::render_prompt(
            self.template,
            self.input,
            self.output,
            self.trajectory,
            &self.rubric.statements(),
        );
        json!({
            "model": self.model(),
            "temperature": self.config.temperature,
            "response_format": { "type": "json_object" },
            "messages": [{ "role": "user", "content": prompt }],
        })
    }
}

/// What changed between the recorded key's parts and the current ones, in words: `the rubric`,
/// `the output judged`, `the judge model ("a" -> "b")`...
pub fn changes(recorded: &KeyParts, current: &KeyParts) -> Vec<String> {
    let mut out = Vec::new();
    if recorded.rubric_sha256 != current.rubric_sha256 {
        out.push("the rubric (its statements)".to_string());
    }
    if recorded.output_sha256 != current.output_sha256 {
        out.push("the output judged (the code's output changed)".to_string());
    }
    if recorded.input_sha256 != current.input_sha256 {
        out.push("the case's input".to_string());
    }
    if recorded.trajectory_sha256 != current.trajectory_sha256 {
        out.push("the trajectory (or [judge] include_trajectory)".to_string());
    }
    if recorded.prompt_sha256 != current.prompt_sha256 {
        out.push("the prompt template".to_string());
    }
    if recorded.model != current.model {
        out.push(format!(
            "the judge model ({:?} -> {:?})",
            recorded.model, current.model
        ));
    }
    let mut parameters = Vec::new();
    if recorded.temperature != current.temperature {
        parameters.push(format!(
            "temperature {} -> {}",
            recorded.temperature, current.temperature
        ));
    }
    if recorded.samples != current.samples {
        parameters.push(format!(
            "samples {} -> {}",
            recorded.samples, current.samples
        ));
    }
    if !parameters.is_empty() {
        out.push(format!("the judge parameters ({})", parameters.join(", ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question<'a>(
        rubric: &'a Rubric,
        output: &'a Value,
        config: &'a RubricJudgeConfig,
    ) -> Question<'a> {
        Question {
            rubric,
            input: &Value::Null,
            input_sha256: None,
            output,
            trajectory: None,
            template: rubric::BUILTIN_TEMPLATE,
            config,
        }
    }

    /// The key as format 4 hashed it: the canonical JSON of one object.
    fn key_as_format_4_recorded(q: &Question<'_>) -> String {
        let mut whole = json!({
            "statements": { "required": q.rubric.required, "forbidden": q.rubric.forbidden },
            "output": q.output,
            "input": q.input,
            "prompt": q.template,
            "model": q.model(),
            "temperature": q.config.temperature,
            "samples": q.config.samples,
        });
        if let Some(trajectory) = q.trajectory {
            whole["trajectory"] = trajectory.clone();
        }
        sha256_hex(&canonical_json(&whole))
    }

    /// The parts as both formats record them: each the SHA-256 of its canonical JSON.
    fn parts_as_recorded(q: &Question<'_>) -> KeyParts {
        KeyParts {
            rubric_sha256: sha256_hex(&canonical_json(
                &json!({ "required": q.rubric.required, "forbidden": q.rubric.forbidden }),
            )),
            output_sha256: sha256_hex(&canonical_json(q.output)),
            input_sha256: sha256_hex(&canonical_json(q.input)),
            trajectory_sha256: q.trajectory.map(|t| sha256_hex(&canonical_json(t))),
            prompt_sha256: sha256_hex(q.template),
            model: q.model().to_string(),
            temperature: q.config.temperature,
            samples: q.config.samples,
        }
    }

    #[test]
    fn the_key_is_the_hash_of_its_parts_and_format_4_keys_still_match() {
        let rubric = Rubric {
            required: vec!["Keeps \"EUR\"".into(), "B".into()],
            forbidden: vec!["C\u{7}".into()],
        };
        let config = RubricJudgeConfig {
            model: Some("judge-\u{e9}".into()),
            temperature: 0.25,
            samples: 3,
            ..Default::default()
        };
        let output = json!([{"z": 1, "a": [1.5, {"y": null, "b": "x\u{1f}"}]}]);
        let trajectory = json!([{"tool": "lookup", "args": {"sku": "S-1"}}]);
        let default = RubricJudgeConfig::default();
        let mut q = question(&rubric, &output, &config);
        q.input = &output;
        q.template = "Judge {{output}}\n\t\"quoted\"";
        let mut with_trajectory = question(&rubric, &output, &config);
        with_trajectory.trajectory = Some(&trajectory);
        for q in [q, with_trajectory, question(&rubric, &output, &default)] {
            let parts = parts_as_recorded(&q);
            let whole = sha256_hex(&canonical_json(&serde_json::to_value(&parts).unwrap()));
            assert_eq!(
                q.key(),
                JudgeKey {
                    key_sha256: whole.clone(),
                    parts
                }
            );
            assert_eq!(q.key_sha256(), whole);
            assert_eq!(q.key_sha256_format_4(), key_as_format_4_recorded(&q));
        }
    }

    #[test]
    fn an_input_hash_given_is_the_one_the_key_would_make() {
        let rubric = Rubric {
            required: vec!["A".into()],
            forbidden: Vec::new(),
        };
        let config = RubricJudgeConfig::default();
        let input = json!({"message": "tab\t and \u{1} and \"quotes\"", "n": [1, 2.5]});
        let output = json!({"ok": true});
        let mut q = question(&rubric, &output, &config);
        q.input = &input;
        let made = q.key();
        // The recording's `input_sha256`, as the staleness check makes it.
        let digest = crate::recording::input_digest(&input).0;
        q.input_sha256 = Some(&digest);
        assert_eq!(q.key(), made);
        assert_eq!(q.key_sha256(), made.key_sha256);
        assert_eq!(made.parts.input_sha256, digest);
    }

    #[test]
    fn the_key_changes_with_each_part_and_names_it() {
        let rubric = Rubric {
            required: vec!["A".into()],
            forbidden: vec![],
        };
        let config = RubricJudgeConfig {
            model: Some("m".into()),
            ..Default::default()
        };
        let output = json!({"answer": 1});
        let base = question(&rubric, &output, &config).key();
        assert_eq!(base, question(&rubric, &output, &config).key());

        let edited = Rubric {
            required: vec!["A!".into()],
            forbidden: vec![],
        };
        let moved = Rubric {
            required: vec![],
            forbidden: vec!["A".into()],
        };
        let other_output = json!({"answer": 2});
        let other_model = RubricJudgeConfig {
            model: Some("n".into()),
            ..Default::default()
        };
        let hotter = RubricJudgeConfig {
            temperature: 0.5,
            ..config.clone()
        };
        for (key, says) in [
            (
                question(&edited, &output, &config).key(),
                "the rubric (its statements)",
            ),
            (
                question(&moved, &output, &config).key(),
                "the rubric (its statements)",
            ),
            (
                question(&rubric, &other_output, &config).key(),
                "the output judged (the code's output changed)",
            ),
            (
                question(&rubric, &output, &other_model).key(),
                "the judge model (\"m\" -> \"n\")",
            ),
            (
                question(&rubric, &output, &hotter).key(),
                "the judge parameters (temperature 0 -> 0.5)",
            ),
        ] {
            assert_ne!(key.key_sha256, base.key_sha256);
            assert_eq!(changes(&base.parts, &key.parts), vec![says.to_string()]);
        }
        let mut templated = question(&rubric, &output, &config);
        templated.template = "{{statements}}";
        assert_eq!(
            changes(&base.parts, &templated.key().parts),
            vec!["the prompt template".to_string()]
        );
        let trajectory = json!([{"tool": "t"}]);
        let mut with_trajectory = question(&rubric, &output, &config);
        with_trajectory.trajectory = Some(&trajectory);
        assert_ne!(with_trajectory.key().key_sha256, base.key_sha256);
    }

    #[test]
    fn the_request_asks_for_json_with_the_prompt() {
        let rubric = Rubric {
            required: vec!["Greets the user".into()],
            forbidden: vec![],
        };
        let config = RubricJudgeConfig {
            model: Some("judge-1".into()),
            ..Default::default()
        };
        let output = json!("hello");
        let request = question(&rubric, &output, &config).request();
        assert_eq!(request["model"], "judge-1");
        assert_eq!(request["response_format"]["type"], "json_object");
        let prompt = request["messages"][0]["content"].as_str().unwrap();
        assert!(prompt.contains("0. Greets the user"), "{prompt}");
        assert!(prompt.contains("\"hello\""), "{prompt}");
    }
}
