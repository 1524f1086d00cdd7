//! Rubrics: statements a correct reply must satisfy (`required`) and must not (`forbidden`),
//! graded by a judge model's verdicts.
//!
//! Everything here is pure: the prompt a judge is asked ([`render_prompt`]), reading its answer
//! ([`parse_answer`]), the majority over several samples ([`majority`]), the score and verdict
//! ([`grade`]), and the agreement of recorded verdicts with human labels ([`agreement`]). Calling
//! the judge and recording its answers is the runtime's.
//!
//! ```
//! use proposal_eval_engine::rubric::{grade, parse_answer, Rubric};
//! use serde_json::json;
//!
//! let rubric = Rubric {
//!     required: vec!["Recommends only in-stock SKUs".into()],
//!     forbidden: vec!["Recommends a discontinued SKU".into()],
//! };
//! let statements = rubric.statements();
//! let answer = json!({"verdicts": [
//!     {"id": 0, "holds": true, "reason": "SKU-9 is in stock"},
//!     {"id": 1, "holds": true, "reason": "SKU-123 is discontinued"},
//! ]});
//! let verdicts = parse_answer(&answer, statements.len()).unwrap();
//! let graded = grade(&statements, &verdicts);
//! assert!(!graded.passed);
//! assert_eq!(graded.score, 0.5);
//! // The judge's answer (it holds) and the statement's outcome (a forbidden one fails) apart.
//! assert_eq!(
//!     graded.render(),
//!     "  [1] forbidden: \"Recommends a discontinued SKU\": answer holds, outcome failed (SKU-123 is discontinued)\n"
//! );
//! ```

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

/// A case's rubric: the fixture's `rubric` key, or a draft's `draft.assertions`.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Rubric {
    /// Statements a correct reply satisfies.
    #[serde(default)]
    pub required: Vec<String>,
    /// Statements that must not hold of a correct reply.
    #[serde(default)]
    pub forbidden: Vec<String>,
}

// By hand, to take an object only: serde's derive also reads a list as the fields in order, so
// `"rubric": ["Greets"]` was told "expected a list of statements" about its first statement.
impl<'de> Deserialize<'de> for Rubric {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Rubric, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Fields {
            #[serde(default, deserialize_with = "statements")]
            required: Vec<String>,
            #[serde(default, deserialize_with = "statements")]
            forbidden: Vec<String>,
        }
        struct Object;
        impl<'de> serde::de::Visitor<'de> for Object {
            type Value = Rubric;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(r#"an object {"required": [...], "forbidden": [...]}"#)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Rubric, A::Error> {
                let fields =
                    Fields::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(Rubric {
                    required: fields.required,
                    forbidden: fields.forbidden,
                })
            }
        }
        d.deserialize_map(Object)
    }
}

/// serde's `deserialize_with` for a list of statements (`Vec<String>`): a value of another shape
/// is "expected a list of statements", in the words of the person who wrote it, rather than the
/// type's (`a sequence`).
///
/// ```
/// use proposal_eval_engine::rubric::Rubric;
///
/// let err = serde_json::from_str::<Rubric>(r#"{"required": "Greets"}"#).unwrap_err();
/// assert!(err.to_string().contains("expected a list of statements"), "{err}");
/// ```
pub fn statements<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    struct Statements;
    impl<'de> serde::de::Visitor<'de> for Statements {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a list of statements")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Vec<String>, A::Error> {
            let mut out = Vec::new();
            while let Some(statement) = seq.next_element::<String>()? {
                out.push(statement);
            }
            Ok(out)
        }
    }
    d.deserialize_seq(Statements)
}

/// Whether a statement must hold or must not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Passes when it holds.
    Required,
    /// Passes when it does not hold.
    Forbidden,
}

impl Kind {
    /// `required` or `forbidden`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Required => "required",
            Kind::Forbidden => "forbidden",
        }
    }
}

/// One statement of a rubric, numbered from 0: required ones first, then forbidden ones.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Statement {
    /// Its number in the judge's prompt and answer.
    pub id: usize,
    /// Required or forbidden.
    pub kind: Kind,
    /// The statement's whole text.
    pub text: String,
}

impl Rubric {
    /// The statements, numbered from 0 in order (required first, then forbidden).
    pub fn statements(&self) -> Vec<Statement> {
        let required = self.required.iter().map(|t| (Kind::Required, t));
        let forbidden = self.forbidden.iter().map(|t| (Kind::Forbidden, t));
        required
            .chain(forbidden)
            .enumerate()
            .map(|(id, (kind, text))| Statement {
                id,
                kind,
                text: text.clone(),
            })
            .collect()
    }

    /// Whether it has no statement.
    pub fn is_empty(&self) -> bool {
        self.required.is_empty() && self.forbidden.is_empty()
    }
}

/// The prompt used when `[judge] prompt` names no template file.
pub const BUILTIN_TEMPLATE: &str = "\
You are grading the output of a program against a list of statements.

The program's input:
{{input}}

The program's output:
{{output}}

What the program did (its tool calls, in order; empty when not given):
{{trajectory}}

For each statement below, decide whether it holds of the output. Judge each statement on its
own, from the input and the output only.

Statements:
{{statements}}

Answer with one JSON object and nothing else:
{\"verdicts\": [{\"id\": <statement number>, \"holds\": true or false, \"reason\": \"<one sentence>\"}]}
with exactly one entry per statement.
";

/// The prompt for one judge call: `template` with `{{input}}`, `{{output}}`, `{{trajectory}}`
/// (pretty JSON; empty when `trajectory` is `None`) and `{{statements}}` (one line per
/// statement, `<id>. <text>`) replaced.
///
/// ```
/// use proposal_eval_engine::rubric::{render_prompt, Rubric};
/// use serde_json::json;
/// let rubric = Rubric { required: vec!["Says hello".into()], forbidden: vec!["Swears".into()] };
/// let prompt = render_prompt("{{statements}}|{{output}}|{{trajectory}}", &json!(null), &json!("hi"), None, &rubric.statements());
/// assert_eq!(prompt, "0. Says hello\n1. Swears|\"hi\"|");
/// ```
pub fn render_prompt(
    template: &str,
    input: &Value,
    output: &Value,
    trajectory: Option<&Value>,
    statements: &[Statement],
) -> String {
    let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap_or_default();
    let listed = statements
        .iter()
        .map(|s| format!("{}. {}", s.id, s.text))
        .collect::<Vec<_>>()
        .join("\n");
    // One pass over the template, so a placeholder inside the output is never replaced.
    let mut prompt = String::with_capacity(template.len() + 256);
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        prompt.push_str(&rest[..start]);
        let after = &rest[start..];
        let replaced = [
            ("{{input}}", pretty(input)),
            ("{{output}}", pretty(output)),
            ("{{trajectory}}", trajectory.map(pretty).unwrap_or_default()),
            ("{{statements}}", listed.clone()),
        ]
        .into_iter()
        .find(|(name, _)| after.starts_with(name));
        match replaced {
            Some((name, text)) => {
                prompt.push_str(&text);
                rest = &after[name.len()..];
            }
            None => {
                prompt.push_str("{{");
                rest = &after[2..];
            }
        }
    }
    prompt.push_str(rest);
    prompt
}

/// The judge's verdict on one statement.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// The statement's number.
    pub id: usize,
    /// Whether the statement holds of the output.
    pub holds: bool,
    /// The judge's reason, as it gave it.
    #[serde(default)]
    pub reason: String,
}

/// A judge answer that is not `{"verdicts": [{"id", "holds", "reason"}]}` with one verdict per
/// statement: a judge error, never a verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnswerError {
    /// What is wrong with it.
    pub problem: String,
    /// The answer, as compact JSON or text.
    pub answer: String,
}

impl fmt::Display for AnswerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the judge's answer is not the verdict shape {{\"verdicts\": [{{\"id\", \"holds\", \"reason\"}}]}}: {}\n  the answer: {}",
            self.problem, self.answer
        )
    }
}

impl std::error::Error for AnswerError {}

/// The verdicts in a judge's answer, one per statement, in the order of the statements.
///
/// `answer` is what the judge model returned: an OpenAI chat completion (whose
/// `choices[0].message.content` is read), a string of JSON, or the verdict object itself.
/// A missing, repeated or out-of-range id, a `holds` that is not a boolean, or anything else of
/// another shape is an [`AnswerError`] that shows the answer.
pub fn parse_answer(answer: &Value, statements: usize) -> Result<Vec<Verdict>, AnswerError> {
    let shown = |v: &Value| crate::render::compact(v, 2000);
    let content = answer
        .pointer("/choices/0/message/content")
        .unwrap_or(answer);
    let parsed;
    let object = match content {
        Value::String(text) => {
            parsed = serde_json::from_str::<Value>(strip_fence(text)).map_err(|e| AnswerError {
                problem: format!("it is not JSON ({e})"),
                answer: cut(text, 2000),
            })?;
            &parsed
        }
        other => other,
    };
    let error = |problem: String| AnswerError {
        problem,
        answer: shown(object),
    };
    let list = object
        .get("verdicts")
        .and_then(Value::as_array)
        .ok_or_else(|| error("it has no `verdicts` list".into()))?;
    let mut verdicts: Vec<Option<Verdict>> = vec![None; statements];
    for (i, item) in list.iter().enumerate() {
        let id = item.get("id").and_then(Value::as_u64);
        let holds = item.get("holds").and_then(Value::as_bool);
        let (Some(id), Some(holds)) = (id, holds) else {
            return Err(error(format!(
                "verdicts[{i}] needs a number `id` and a boolean `holds`"
            )));
        };
        let reason = match item.get("reason") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(other) => shown(other),
        };
        let slot = verdicts.get_mut(id as usize).ok_or_else(|| {
            error(format!(
                "verdicts[{i}] has id {id}, and the statements are numbered 0 to {}",
                statements.saturating_sub(1)
            ))
        })?;
        if slot.is_some() {
            return Err(error(format!("the id {id} is given twice")));
        }
        *slot = Some(Verdict {
            id: id as usize,
            holds,
            reason,
        });
    }
    let missing: Vec<String> = (0..statements)
        .filter(|&id| verdicts[id].is_none())
        .map(|id| id.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(error(format!(
            "no verdict for statement(s) {}",
            missing.join(", ")
        )));
    }
    Ok(verdicts.into_iter().flatten().collect())
}

/// The text inside a Markdown code fence, which some models wrap JSON in.
fn strip_fence(text: &str) -> &str {
    let trimmed = text.trim();
    trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|t| t.strip_suffix("```"))
        .map_or(trimmed, str::trim)
}

fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// Per statement, the verdict most samples gave (samples is odd, so there is no tie), with the
/// reason of the first sample that gave it. `samples` each hold one verdict per statement.
///
/// ```
/// use proposal_eval_engine::rubric::{majority, Verdict};
/// let v = |holds| vec![Verdict { id: 0, holds, reason: format!("{holds}") }];
/// let decided = majority(&[v(true), v(false), v(true)]);
/// assert!(decided[0].holds);
/// ```
pub fn majority(samples: &[Vec<Verdict>]) -> Vec<Verdict> {
    let Some(first) = samples.first() else {
        return Vec::new();
    };
    (0..first.len())
        .map(|k| {
            let holding = samples.iter().filter(|s| s[k].holds).count();
            let holds = holding * 2 > samples.len();
            samples
                .iter()
                .map(|s| &s[k])
                .find(|v| v.holds == holds)
                .cloned()
                .unwrap_or_else(|| first[k].clone())
        })
        .collect()
}

/// How a judge's samples answered one statement (`[judge] samples` > 1): the answer taken is
/// the majority.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Votes {
    /// Samples that answered "holds".
    pub holds: usize,
    /// Samples that answered "does not hold".
    pub does_not_hold: usize,
}

/// Per statement, how the samples answered: one [`Votes`] per statement, in order.
///
/// ```
/// use proposal_eval_engine::rubric::{votes, Verdict, Votes};
/// let v = |holds| vec![Verdict { id: 0, holds, reason: String::new() }];
/// assert_eq!(votes(&[v(true), v(false), v(true)]), vec![Votes { holds: 2, does_not_hold: 1 }]);
/// ```
pub fn votes(samples: &[Vec<Verdict>]) -> Vec<Votes> {
    let Some(first) = samples.first() else {
        return Vec::new();
    };
    (0..first.len())
        .map(|k| {
            let holds = samples
                .iter()
                .filter(|s| s.get(k).is_some_and(|v| v.holds))
                .count();
            Votes {
                holds,
                does_not_hold: samples.len() - holds,
            }
        })
        .collect()
}

/// One statement, graded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Graded {
    /// The statement.
    pub statement: Statement,
    /// The judge's answer: whether the statement holds of the output.
    pub holds: bool,
    /// The statement's outcome: a required statement passes when it holds, a forbidden one
    /// when it does not.
    pub passed: bool,
    /// The judge's reason.
    pub reason: String,
    /// How the judge's samples answered, when there were several (`[judge] samples` > 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub votes: Option<Votes>,
}

/// A rubric's verdict on one output.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RubricVerdict {
    /// Passed statements / statements (1 when there is none).
    pub score: f64,
    /// Whether every statement passed.
    pub passed: bool,
    /// Every statement, graded.
    pub statements: Vec<Graded>,
}

/// Grades `statements` by `verdicts` (one per statement, in order, as [`parse_answer`] and
/// [`majority`] give them).
pub fn grade(statements: &[Statement], verdicts: &[Verdict]) -> RubricVerdict {
    grade_owned(statements.to_vec(), verdicts.to_vec())
}

/// [`grade`], taking the statements and the verdicts (the texts move into the verdict instead of
/// being copied).
pub fn grade_owned(statements: Vec<Statement>, verdicts: Vec<Verdict>) -> RubricVerdict {
    let graded: Vec<Graded> = statements
        .into_iter()
        .zip(verdicts)
        .map(|(statement, verdict)| Graded {
            passed: verdict.holds == (statement.kind == Kind::Required),
            statement,
            holds: verdict.holds,
            reason: verdict.reason,
            votes: None,
        })
        .collect();
    let passed = graded.iter().filter(|g| g.passed).count();
    RubricVerdict {
        score: if graded.is_empty() {
            1.0
        } else {
            passed as f64 / graded.len() as f64
        },
        passed: passed == graded.len(),
        statements: graded,
    }
}

/// The judge's answer in words: `holds` or `does not hold`.
pub fn answer_text(holds: bool) -> &'static str {
    if holds {
        "holds"
    } else {
        "does not hold"
    }
}

/// A statement's outcome in words: `passed` or `failed`.
pub fn outcome_text(passed: bool) -> &'static str {
    if passed {
        "passed"
    } else {
        "failed"
    }
}

impl Graded {
    /// `[1] forbidden: "text": answer holds, outcome failed (reason)`: the judge's answer and
    /// the statement's outcome apart (a forbidden statement passes when it does not hold), with
    /// the samples' votes when there were several (`answer holds (2 of 3 samples)`).
    pub fn line(&self) -> String {
        let reason = if self.reason.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.reason)
        };
        let votes = match self.votes {
            Some(v) => format!(
                " ({} of {} samples)",
                if self.holds { v.holds } else { v.does_not_hold },
                v.holds + v.does_not_hold
            ),
            None => String::new(),
        };
        format!(
            "[{}] {}: {:?}: answer {}{votes}, outcome {}{reason}",
            self.statement.id,
            self.statement.kind.name(),
            self.statement.text,
            answer_text(self.holds),
            outcome_text(self.passed)
        )
    }
}

impl RubricVerdict {
    /// The same verdict with each statement's `votes` (one per statement, in order), kept only
    /// where more than one sample voted.
    pub fn with_votes(mut self, votes: &[Votes]) -> RubricVerdict {
        for (graded, v) in self.statements.iter_mut().zip(votes) {
            graded.votes = (v.holds + v.does_not_hold > 1).then_some(*v);
        }
        self
    }

    /// The failed statements, one indented line each with the judge's reason.
    pub fn render(&self) -> String {
        self.statements
            .iter()
            .filter(|g| !g.passed)
            .map(|g| format!("  {}\n", g.line()))
            .collect()
    }
}

/// How a judge's verdicts agree with human labels.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Agreement {
    /// Pairs compared (labels that have a recorded verdict).
    pub matched: usize,
    /// Share of pairs where the judge and the label agree (0 to 1; 0 with no pair).
    pub percent: f64,
    /// Cohen's kappa: agreement beyond chance. 1 when both always say the same single value
    /// (there is no chance to correct for); 0 with no pair.
    pub kappa: f64,
}

/// Percent agreement and Cohen's kappa of `(judge, human)` pairs of "holds".
///
/// kappa = (p_o - p_e) / (1 - p_e), p_o the observed agreement, p_e the agreement expected by
/// chance from each rater's share of `true`.
///
/// ```
/// use proposal_eval_engine::rubric::agreement;
/// let a = agreement(&[(true, true), (false, false), (true, false), (true, true)]);
/// assert_eq!(a.percent, 0.75);
/// assert!((a.kappa - 0.5).abs() < 1e-12);
/// ```
pub fn agreement(pairs: &[(bool, bool)]) -> Agreement {
    let n = pairs.len();
    if n == 0 {
        return Agreement {
            matched: 0,
            percent: 0.0,
            kappa: 0.0,
        };
    }
    let total = n as f64;
    let agree = pairs.iter().filter(|(j, h)| j == h).count() as f64 / total;
    let judge_true = pairs.iter().filter(|(j, _)| *j).count() as f64 / total;
    let human_true = pairs.iter().filter(|(_, h)| *h).count() as f64 / total;
    let chance = judge_true * human_true + (1.0 - judge_true) * (1.0 - human_true);
    let kappa = if (1.0 - chance).abs() < f64::EPSILON {
        if agree == 1.0 {
            1.0
        } else {
            0.0
        }
    } else {
        (agree - chance) / (1.0 - chance)
    };
    Agreement {
        matched: n,
        percent: agree,
        kappa,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rubric() -> Rubric {
        Rubric {
            required: vec!["A".into(), "B".into()],
            forbidden: vec!["C".into()],
        }
    }

    #[test]
    fn statements_are_numbered_required_first() {
        let s = rubric().statements();
        assert_eq!(s.len(), 3);
        assert_eq!(
            (s[2].id, s[2].kind, s[2].text.as_str()),
            (2, Kind::Forbidden, "C")
        );
        assert!(Rubric::default().is_empty());
    }

    #[test]
    fn a_chat_completion_a_string_and_an_object_are_read() {
        let object = json!({"verdicts": [{"id": 0, "holds": true, "reason": "r"}]});
        let chat = json!({"choices": [{"message": {"content": object.to_string()}}]});
        let fenced = json!(format!("```json\n{object}\n```"));
        for answer in [&object, &chat, &fenced] {
            let v = parse_answer(answer, 1).unwrap();
            assert_eq!(
                v,
                vec![Verdict {
                    id: 0,
                    holds: true,
                    reason: "r".into()
                }]
            );
        }
    }

    #[test]
    fn answers_of_another_shape_are_errors_showing_the_answer() {
        let cases = [
            (json!("I think it holds"), "it is not JSON"),
            (json!({"pass": true}), "it has no `verdicts` list"),
            (
                json!({"verdicts": [{"id": 0, "holds": "yes"}]}),
                "verdicts[0] needs a number `id` and a boolean `holds`",
            ),
            (
                json!({"verdicts": [{"id": 3, "holds": true}]}),
                "has id 3, and the statements are numbered 0 to 1",
            ),
            (
                json!({"verdicts": [{"id": 0, "holds": true}, {"id": 0, "holds": true}]}),
                "the id 0 is given twice",
            ),
            (
                json!({"verdicts": [{"id": 0, "holds": true}]}),
                "no verdict for statement(s) 1",
            ),
        ];
        for (answer, problem) in cases {
            let err = parse_answer(&answer, 2).unwrap_err();
            assert!(err.problem.contains(problem), "{err}");
            assert!(err.to_string().contains("the answer: "), "{err}");
        }
        let err = parse_answer(&json!({"pass": true}), 1).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the judge's answer is not the verdict shape {\"verdicts\": [{\"id\", \"holds\", \"reason\"}]}: it has no `verdicts` list\n  the answer: {\"pass\":true}"
        );
    }

    #[test]
    fn grading_passes_required_that_hold_and_forbidden_that_do_not() {
        let v = |id, holds| Verdict {
            id,
            holds,
            reason: String::new(),
        };
        let s = rubric().statements();
        let all = grade(&s, &[v(0, true), v(1, true), v(2, false)]);
        assert!(all.passed);
        assert_eq!(all.score, 1.0);
        let some = grade(&s, &[v(0, false), v(1, true), v(2, true)]);
        assert!(!some.passed);
        assert!((some.score - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(
            some.render(),
            "  [0] required: \"A\": answer does not hold, outcome failed\n  [2] forbidden: \"C\": answer holds, outcome failed\n"
        );
        assert_eq!(grade(&[], &[]).score, 1.0);
    }

    /// A forbidden statement that does not hold passes, and its line says both; with several
    /// samples, the line says how many gave the answer taken.
    #[test]
    fn a_line_shows_the_answer_apart_from_the_outcome() {
        let v = |id, holds| Verdict {
            id,
            holds,
            reason: "r".into(),
        };
        let s = rubric().statements();
        let samples = [
            vec![v(0, true), v(1, true), v(2, false)],
            vec![v(0, true), v(1, false), v(2, false)],
            vec![v(0, true), v(1, true), v(2, true)],
        ];
        let graded = grade(&s, &majority(&samples)).with_votes(&votes(&samples));
        let forbidden = &graded.statements[2];
        assert_eq!((forbidden.holds, forbidden.passed), (false, true));
        assert_eq!(
            forbidden.line(),
            "[2] forbidden: \"C\": answer does not hold (2 of 3 samples), outcome passed (r)"
        );
        assert_eq!(
            forbidden.votes,
            Some(Votes {
                holds: 1,
                does_not_hold: 2
            })
        );
        let one = grade(&s, &samples[0]).with_votes(&votes(&samples[..1]));
        assert_eq!(one.statements[2].votes, None);
        assert_eq!(
            one.statements[2].line(),
            "[2] forbidden: \"C\": answer does not hold, outcome passed (r)"
        );
    }

    #[test]
    fn majority_takes_the_most_common_verdict_and_its_reason() {
        let v = |holds: bool, reason: &str| {
            vec![Verdict {
                id: 0,
                holds,
                reason: reason.into(),
            }]
        };
        let decided = majority(&[v(false, "no"), v(true, "yes 1"), v(true, "yes 2")]);
        assert_eq!(decided, v(true, "yes 1"));
        assert!(majority(&[]).is_empty());
    }

    #[test]
    fn a_placeholder_inside_the_output_is_left_alone() {
        let p = render_prompt(
            "{{output}} {{nope}}",
            &json!(null),
            &json!("{{input}}"),
            None,
            &[],
        );
        assert_eq!(p, "\"{{input}}\" {{nope}}");
    }

    #[test]
    fn a_rubric_is_read_from_an_object_of_two_lists_only() {
        let r: Rubric = serde_json::from_value(json!({"required": ["A"]})).unwrap();
        assert_eq!((r.required, r.forbidden), (vec!["A".to_string()], vec![]));
        let r: Rubric =
            serde_json::from_value(json!({"forbidden": ["C", "D"], "required": []})).unwrap();
        assert_eq!(r.forbidden, ["C", "D"]);
        assert!(!r.is_empty());
        let r: Rubric = serde_json::from_value(json!({"required": ["A"]})).unwrap();
        assert!(!r.is_empty());
        let err = |v: Value| serde_json::from_value::<Rubric>(v).unwrap_err().to_string();
        assert_eq!(
            err(json!(["Greets"])),
            r#"invalid type: sequence, expected an object {"required": [...], "forbidden": [...]}"#
        );
        assert_eq!(
            err(json!({"required": "Greets"})),
            "invalid type: string \"Greets\", expected a list of statements"
        );
        assert!(err(json!({"optional": []})).contains("unknown field `optional`"));
    }

    #[test]
    fn every_placeholder_is_replaced_once() {
        let s = rubric().statements();
        let p = render_prompt(
            "I={{input}} O={{output}} T={{trajectory}} S={{statements}} {{",
            &json!({"q": 1}),
            &json!("out"),
            Some(&json!([{"tool": "t"}])),
            &s,
        );
        assert_eq!(
            p,
            "I={\n  \"q\": 1\n} O=\"out\" T=[\n  {\n    \"tool\": \"t\"\n  }\n] S=0. A\n1. B\n2. C {{"
        );
        let p = render_prompt("T={{trajectory}}.", &json!(null), &json!(null), None, &s);
        assert_eq!(p, "T=.");
    }

    #[test]
    fn a_reason_of_another_type_is_shown_as_json_and_a_long_answer_is_cut() {
        let answer = json!({"verdicts": [
            {"id": 0, "holds": false, "reason": null},
            {"id": 1, "holds": true, "reason": {"why": 2}},
        ]});
        let v = parse_answer(&answer, 2).unwrap();
        assert_eq!(
            (v[0].reason.as_str(), v[1].reason.as_str()),
            ("", "{\"why\":2}")
        );
        // A plain fence, without `json`.
        let fenced = json!(format!(
            "```\n{}\n```",
            json!({"verdicts": [{"id": 0, "holds": true}]})
        ));
        assert!(parse_answer(&fenced, 1).unwrap()[0].holds);
        // Text that is not JSON is shown up to 2000 characters.
        let long = "é".repeat(2001);
        let err = parse_answer(&json!(long), 1).unwrap_err();
        assert_eq!(err.answer, format!("{}…", "é".repeat(2000)));
        let short = "é".repeat(2000);
        assert_eq!(parse_answer(&json!(short), 1).unwrap_err().answer, short);
    }

    /// Two samples that agree are two votes, kept; one sample is none.
    #[test]
    fn votes_are_kept_from_two_samples_on() {
        let s = rubric().statements();
        let v = |holds| Verdict {
            id: 0,
            holds,
            reason: String::new(),
        };
        let samples = [
            vec![v(true), v(true), v(false)],
            vec![v(true), v(true), v(false)],
        ];
        let graded = grade(&s, &majority(&samples)).with_votes(&votes(&samples));
        assert_eq!(
            graded.statements[0].votes,
            Some(Votes {
                holds: 2,
                does_not_hold: 0
            })
        );
        assert_eq!(
            graded.statements[2].votes,
            Some(Votes {
                holds: 0,
                does_not_hold: 2
            })
        );
    }

    /// Neither rater at one half: kappa depends on both shares. 5 pairs, judge true 3 times,
    /// human 2, agreeing on 4: p_o = 0.8, p_e = 0.6*0.4 + 0.4*0.6 = 0.48, kappa = 0.32 / 0.52.
    #[test]
    fn kappa_weighs_each_raters_share() {
        let a = agreement(&[
            (true, true),
            (true, true),
            (true, false),
            (false, false),
            (false, false),
        ]);
        assert!((a.percent - 0.8).abs() < 1e-12);
        assert!((a.kappa - 0.32 / 0.52).abs() < 1e-12, "{}", a.kappa);
        let swapped = agreement(&[
            (true, true),
            (true, true),
            (false, true),
            (false, false),
            (false, false),
        ]);
        assert!(
            (swapped.kappa - 0.32 / 0.52).abs() < 1e-12,
            "{}",
            swapped.kappa
        );
    }

    /// With an even number of samples, half is no majority: the statement does not hold.
    #[test]
    fn a_tie_is_no_majority() {
        let v = |holds: bool| {
            vec![Verdict {
                id: 0,
                holds,
                reason: String::new(),
            }]
        };
        assert!(!majority(&[v(true), v(false)])[0].holds);
        assert!(majority(&[v(true), v(true), v(false), v(true)])[0].holds);
    }

    /// A hand-computed example: 10 pairs, judge says true 6 times, human 5 times, they agree on
    /// 7 (4 both true, 3 both false). p_o = 0.7; p_e = 0.6*0.5 + 0.4*0.5 = 0.5;
    /// kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4.
    #[test]
    fn kappa_of_a_hand_computed_example() {
        let mut pairs = vec![(true, true); 4];
        pairs.extend([(false, false); 3]);
        pairs.extend([(true, false); 2]);
        pairs.push((false, true));
        let a = agreement(&pairs);
        assert_eq!(a.matched, 10);
        assert!((a.percent - 0.7).abs() < 1e-12);
        assert!((a.kappa - 0.4).abs() < 1e-12, "{}", a.kappa);
        // Perfect agreement is 1, also when every label says the same.
        assert_eq!(agreement(&[(true, true), (false, false)]).kappa, 1.0);
        assert_eq!(agreement(&[(true, true), (true, true)]).kappa, 1.0);
        assert_eq!(agreement(&[]).matched, 0);
    }
}
