//! External judge scripts (`[[code_judge]]`): a command that reads one JSON object on stdin and
//! prints a verdict on stdout.
//!
//! The command gets `{"input", "candidate_answer", "reference_answer", "config", "case",
//! "trajectory"}` (and `rubric`, `{"required": [...], "forbidden": [...]}`, when the case has
//! one) and prints `{"score", "hits", "misses", "reasoning"}`. `score` is required (a number, clamped to
//! 0..=1); `hits` and `misses` are optional lists (strings, or any JSON shown compactly);
//! `reasoning` is an optional string; other keys are ignored. The case passes this judge when
//! `score >= threshold`.
//!
//! Running a judge never panics and never hangs: a command that cannot start, runs past
//! `timeout_ms`, exits non-zero (its stderr, cut to the last 2000 characters, goes into the
//! reason), or prints something that is not that object scores 0 with a reason that says which.
//! The command runs in the crate root, in a process group of its own; at a timeout the whole
//! group is killed, and when the judge exits anything it left running in its group is killed
//! too, so no judge leaves processes behind (one that starts a new session escapes, as always).
//! Stdout and stderr are read while the judge runs, so megabytes of output cannot block it; only
//! the first 16 MiB of stdout and the last 64 KiB of stderr are kept.
//!
//! ```no_run
//! use proposal_eval::__internal::code_judge::{run, CodeJudgeConfig, CodeJudgeInput};
//! use serde_json::json;
//! let config = CodeJudgeConfig::new("bbox_iou", ["python3", "judges/iou.py"])
//!     .threshold(0.5)
//!     .config("iou_min", json!(0.5));
//! let verdict = run(&config, std::path::Path::new("."), &CodeJudgeInput {
//!     input: json!({"page": 1}),
//!     candidate_answer: json!({"boxes": [[0, 0, 10, 10]]}),
//!     reference_answer: json!({"boxes": [[0, 0, 10, 10]]}),
//!     case: json!({"description": "one box"}),
//!     ..Default::default()
//! });
//! println!("{}: {}", verdict.name, verdict.reasoning);
//! ```

use crate::process::{self, ProcessError, Program};
use proposal_eval_engine::json::type_name;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Keys a `[[code_judge]]` table understands; any other key goes to the script as `config`.
const KNOWN_KEYS: [&str; 4] = ["name", "command", "timeout_ms", "threshold"];

/// One `[[code_judge]]`: a named command, its time limit, its pass threshold and its settings.
///
/// ```
/// use proposal_eval::__internal::code_judge::CodeJudgeConfig;
/// let config: CodeJudgeConfig = toml::from_str(r#"
///     name = "bbox_iou"
///     command = ["python3", "judges/iou.py"]
///     iou_min = 0.5
/// "#).unwrap();
/// assert_eq!(config.timeout_ms, 10_000);
/// assert_eq!(config.threshold, 0.5);
/// assert_eq!(config.config["iou_min"], 0.5);
///
/// // A near-miss of a judge setting is a mistake, not a script setting.
/// let err = toml::from_str::<CodeJudgeConfig>(r#"
///     name = "x"
///     command = ["true"]
///     timout_ms = 5
/// "#).unwrap_err();
/// assert!(err.to_string().contains("timeout_ms"));
/// ```
#[cfg_attr(
    feature = "schema",
    derive(schemars::JsonSchema),
    schemars(with = "RawCodeJudgeConfig")
)]
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(try_from = "RawCodeJudgeConfig")]
pub struct CodeJudgeConfig {
    /// The judge's name, used in reports.
    pub name: String,
    /// The command and its arguments. It runs in the crate root, so relative script paths are
    /// crate-relative; a relative `argv[0]` with a `/` is resolved from the crate root, a bare
    /// name (`python3`) is looked up on `PATH`.
    pub command: Vec<String>,
    /// How long the command may run, in milliseconds (default 10000).
    pub timeout_ms: u64,
    /// The case passes this judge when `score >= threshold` (default 0.5).
    pub threshold: f64,
    /// Every other key of the table, handed to the command as `config`.
    pub config: Map<String, Value>,
}

#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Deserialize)]
struct RawCodeJudgeConfig {
    name: String,
    command: Vec<String>,
    timeout_ms: Option<u64>,
    threshold: Option<f64>,
    #[serde(flatten)]
    config: Map<String, Value>,
}

impl TryFrom<RawCodeJudgeConfig> for CodeJudgeConfig {
    type Error = String;

    fn try_from(raw: RawCodeJudgeConfig) -> Result<Self, String> {
        let name = &raw.name;
        if name.trim().is_empty() {
            return Err("code_judge `name` is empty".to_string());
        }
        if raw.command.first().map(|s| s.trim().is_empty()) != Some(false) {
            return Err(format!(
                "code_judge `{name}`: `command` is empty; write the argv, e.g. [\"python3\", \"judges/{name}.py\"]"
            ));
        }
        let threshold = raw.threshold.unwrap_or(0.5);
        if !(0.0..=1.0).contains(&threshold) {
            return Err(format!(
                "code_judge `{name}`: `threshold` must be within 0 and 1, got {threshold}"
            ));
        }
        if raw.timeout_ms == Some(0) {
            return Err(format!(
                "code_judge `{name}`: `timeout_ms` must be positive"
            ));
        }
        // Unknown keys are the script's, by design; but one that is a near-miss of a judge
        // setting (`timout_ms`, `timeout`) is a typo that would silently keep the default.
        for key in raw.config.keys() {
            if let Some(known) = KNOWN_KEYS.iter().find(|k| looks_like(key, k)) {
                return Err(format!(
                    "code_judge `{name}`: `{key}` looks like a misspelt `{known}`; keys other than name, command, timeout_ms and threshold go to the script as `config`, so rename it if it is meant for the script"
                ));
            }
        }
        Ok(CodeJudgeConfig {
            name: raw.name,
            command: raw.command,
            timeout_ms: raw.timeout_ms.unwrap_or(10_000),
            threshold,
            config: raw.config,
        })
    }
}

/// Whether `key` is a near miss of the judge setting `known`. Only the long settings are
/// guarded: short script keys (`case`, `time`, `names`, `thresh`) are too close to `name` or
/// `threshold` by distance alone, and every unknown key is the script's `config`.
fn looks_like(key: &str, known: &str) -> bool {
    let (k, n) = (key.to_ascii_lowercase(), known.to_ascii_lowercase());
    if k == n || n.len() < 7 || k.len() < 6 {
        return false;
    }
    crate::fuzzy::levenshtein(&k, &n) <= 2 || n.strip_suffix("_ms") == Some(k.as_str())
}

impl CodeJudgeConfig {
    /// A judge with the default timeout (10 s), threshold (0.5) and no `config`.
    pub fn new<S: Into<String>>(
        name: &str,
        command: impl IntoIterator<Item = S>,
    ) -> CodeJudgeConfig {
        CodeJudgeConfig {
            name: name.to_string(),
            command: command.into_iter().map(Into::into).collect(),
            timeout_ms: 10_000,
            threshold: 0.5,
            config: Map::new(),
        }
    }

    /// Sets the time limit in milliseconds.
    pub fn timeout_ms(mut self, timeout_ms: u64) -> CodeJudgeConfig {
        self.timeout_ms = timeout_ms;
        self
    }

    /// Sets the pass threshold.
    ///
    /// # Panics
    /// When `threshold` is not within 0..=1.
    pub fn threshold(mut self, threshold: f64) -> CodeJudgeConfig {
        assert!(
            (0.0..=1.0).contains(&threshold),
            "code_judge threshold must be within 0 and 1, got {threshold}"
        );
        self.threshold = threshold;
        self
    }

    /// Adds a setting handed to the command in `config`.
    pub fn config(mut self, key: &str, value: Value) -> CodeJudgeConfig {
        self.config.insert(key.to_string(), value);
        self
    }
}

/// What a judge is asked about: one case's input, the code's answer and the expected one.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CodeJudgeInput {
    /// The case's `input`.
    pub input: Value,
    /// What the code under test produced.
    pub candidate_answer: Value,
    /// The case's `expected` (`null` when it has none).
    pub reference_answer: Value,
    /// The tool calls the model asked for (and the code noted), in order: `[{"tool", "args"}]`.
    pub trajectory: Vec<crate::trajectory::ToolCall>,
    /// The whole case, for judges that need more (description, sources, ...).
    pub case: Value,
    /// The case's rubric (`rubric`, or a draft's assertions), when it has one.
    pub rubric: Option<crate::rubric::Rubric>,
}

/// Why a judge scored 0 without giving a score of its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CodeJudgeError {
    /// The command could not be started.
    Spawn {
        /// The command as run.
        command: String,
        /// The directory it ran in.
        dir: PathBuf,
        /// The operating system's error.
        error: String,
    },
    /// The command ran past its time limit and was killed with its process group.
    Timeout {
        /// The limit, in milliseconds.
        timeout_ms: u64,
    },
    /// The command exited unsuccessfully.
    Exit {
        /// `exit status 2`, `killed by signal 9`.
        status: String,
        /// The end of its stderr.
        stderr: String,
    },
    /// The command's stdout is not the verdict object.
    Output {
        /// What is wrong with it.
        problem: String,
    },
}

impl fmt::Display for CodeJudgeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CodeJudgeError::Spawn {
                command,
                dir,
                error,
            } => write!(
                f,
                "could not start `{command}` in {}: {error} (is the program installed and on PATH, and the script path crate-relative?)",
                dir.display()
            ),
            CodeJudgeError::Timeout { timeout_ms } => write!(
                f,
                "timed out after {timeout_ms} ms and was killed (raise `timeout_ms` if the judge needs longer)"
            ),
            CodeJudgeError::Exit { status, stderr } if stderr.trim().is_empty() => {
                write!(f, "exited with {status} and no stderr")
            }
            CodeJudgeError::Exit { status, stderr } => {
                write!(f, "exited with {status}; stderr:\n{}", stderr.trim_end())
            }
            CodeJudgeError::Output { problem } => write!(
                f,
                "{problem}; a judge prints one JSON object {{\"score\": 0..1, \"hits\": [...], \"misses\": [...], \"reasoning\": \"...\"}}"
            ),
        }
    }
}

impl std::error::Error for CodeJudgeError {}

/// The result of [`run`].
#[derive(Clone, Debug, PartialEq)]
pub struct CodeJudgeVerdict {
    /// The judge's name.
    pub name: String,
    /// The score, within 0..=1 (0 when the judge failed).
    pub score: f64,
    /// Whether `score >= threshold` (never when the judge failed).
    pub passed: bool,
    /// What the judge found right.
    pub hits: Vec<String>,
    /// What the judge found wrong.
    pub misses: Vec<String>,
    /// The judge's explanation, or why the judge failed.
    pub reasoning: String,
    /// Set when the judge failed to give a verdict.
    pub error: Option<CodeJudgeError>,
}

impl CodeJudgeVerdict {
    fn failed(name: &str, error: CodeJudgeError) -> CodeJudgeVerdict {
        CodeJudgeVerdict {
            name: name.to_string(),
            score: 0.0,
            passed: false,
            hits: Vec::new(),
            misses: Vec::new(),
            reasoning: error.to_string(),
            error: Some(error),
        }
    }

    /// The judge's findings: misses first (`  ✗ ...`), then hits (`  ✓ ...`), then the
    /// reasoning, indented. The headline (name, score, threshold) is left to the caller.
    ///
    /// ```
    /// use proposal_eval::__internal::code_judge::CodeJudgeVerdict;
    /// let verdict = CodeJudgeVerdict {
    ///     name: "iou".into(), score: 0.4, passed: false,
    ///     hits: vec!["box 1: IoU 0.91".into()], misses: vec!["box 2: IoU 0.12".into()],
    ///     reasoning: "1/2 boxes".into(), error: None,
    /// };
    /// assert_eq!(verdict.render(false), "  ✗ box 2: IoU 0.12\n  ✓ box 1: IoU 0.91\n  1/2 boxes\n");
    /// ```
    pub fn render(&self, color: bool) -> String {
        let paint = |code: &str, text: &str| {
            if color {
                format!("{code}{text}\x1b[0m")
            } else {
                text.to_string()
            }
        };
        let mut out = String::new();
        for miss in &self.misses {
            out.push_str(&format!("  {}\n", paint("\x1b[31m", &format!("✗ {miss}"))));
        }
        for hit in &self.hits {
            out.push_str(&format!("  {}\n", paint("\x1b[32m", &format!("✓ {hit}"))));
        }
        for line in self.reasoning.lines() {
            out.push_str("  ");
            out.push_str(line);
            out.push('\n');
        }
        out
    }
}

#[derive(Serialize)]
struct Stdin<'a> {
    input: &'a Value,
    candidate_answer: &'a Value,
    reference_answer: &'a Value,
    config: &'a Map<String, Value>,
    case: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    rubric: Option<&'a crate::rubric::Rubric>,
    trajectory: &'a [crate::trajectory::ToolCall],
}

const STDOUT_LIMIT: usize = 16 << 20;
const STDERR_LIMIT: usize = 64 << 10;
const STDERR_SHOWN: usize = 2000;

/// Runs a judge on one case and reads its verdict. Never panics: every failure is a verdict
/// with score 0 and the reason (see the module docs).
///
/// ```
/// # #[cfg(unix)] {
/// use proposal_eval::__internal::code_judge::{run, CodeJudgeConfig, CodeJudgeInput};
/// let config = CodeJudgeConfig::new("constant", ["sh", "-c",
///     r#"cat > /dev/null; echo '{"score": 0.8, "hits": ["ok"], "misses": [], "reasoning": "fine"}'"#]);
/// let verdict = run(&config, std::path::Path::new("."), &CodeJudgeInput::default());
/// assert_eq!(verdict.score, 0.8);
/// assert!(verdict.passed);
///
/// let broken = CodeJudgeConfig::new("broken", ["sh", "-c", "echo oops >&2; exit 3"]);
/// let verdict = run(&broken, std::path::Path::new("."), &CodeJudgeInput::default());
/// assert_eq!(verdict.score, 0.0);
/// assert!(verdict.reasoning.contains("exit status: 3") && verdict.reasoning.contains("oops"));
/// # }
/// ```
pub fn run(
    config: &CodeJudgeConfig,
    crate_root: &Path,
    input: &CodeJudgeInput,
) -> CodeJudgeVerdict {
    let stdin_json = serde_json::to_vec(&Stdin {
        input: &input.input,
        candidate_answer: &input.candidate_answer,
        reference_answer: &input.reference_answer,
        config: &config.config,
        case: &input.case,
        rubric: input.rubric.as_ref(),
        trajectory: &input.trajectory,
    })
    .unwrap_or_else(|_| b"{}".to_vec());
    match execute(config, crate_root, stdin_json) {
        Ok(stdout) => match parse_output(&stdout) {
            Ok((score, hits, misses, reasoning)) => CodeJudgeVerdict {
                name: config.name.clone(),
                score,
                passed: score + 1e-9 >= config.threshold,
                hits,
                misses,
                reasoning,
                error: None,
            },
            Err(problem) => {
                CodeJudgeVerdict::failed(&config.name, CodeJudgeError::Output { problem })
            }
        },
        Err(error) => CodeJudgeVerdict::failed(&config.name, error),
    }
}

fn execute(
    config: &CodeJudgeConfig,
    crate_root: &Path,
    stdin_json: Vec<u8>,
) -> Result<Vec<u8>, CodeJudgeError> {
    let spawn_error = |error: String| CodeJudgeError::Spawn {
        command: config.command.join(" "),
        dir: crate_root.to_path_buf(),
        error,
    };
    let output = process::run(Program {
        argv: &config.command,
        dir: Some(crate_root),
        stdin: stdin_json,
        timeout: Duration::from_millis(config.timeout_ms),
        stdout_limit: STDOUT_LIMIT,
        stderr_limit: STDERR_LIMIT,
    })
    .map_err(|e| match e {
        ProcessError::Empty => spawn_error("the command is empty".to_string()),
        ProcessError::NoDir(_) => spawn_error("the crate root is not a directory".to_string()),
        ProcessError::Spawn(e) => spawn_error(e.to_string()),
        ProcessError::Timeout => CodeJudgeError::Timeout {
            timeout_ms: config.timeout_ms,
        },
    })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let chars = stderr.chars().count();
        let tail: String = if chars > STDERR_SHOWN {
            let tail: String = stderr.chars().skip(chars - STDERR_SHOWN).collect();
            format!("…{tail}")
        } else {
            stderr.into_owned()
        };
        return Err(CodeJudgeError::Exit {
            status: process::describe_status(output.status),
            stderr: tail,
        });
    }
    if output.stdout_overflow {
        return Err(CodeJudgeError::Output {
            problem: format!("stdout is larger than {} MiB", STDOUT_LIMIT >> 20),
        });
    }
    Ok(output.stdout)
}

type Parsed = (f64, Vec<String>, Vec<String>, String);

fn parse_output(stdout: &[u8]) -> Result<Parsed, String> {
    let text = String::from_utf8_lossy(stdout);
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err("the judge printed nothing on stdout".to_string());
    }
    let value: Value = serde_json::from_str(trimmed).map_err(|e| {
        format!(
            "stdout is not JSON ({e}); it starts with {}",
            excerpt(trimmed)
        )
    })?;
    let Value::Object(map) = value else {
        return Err(format!(
            "stdout is a JSON {}, not an object: {}",
            type_name(&value),
            excerpt(trimmed)
        ));
    };
    let score = match map.get("score") {
        None => return Err("`score` is missing from the judge's output".to_string()),
        Some(Value::Number(n)) => n.as_f64().unwrap_or(0.0),
        Some(other) => {
            return Err(format!(
                "`score` is a {} ({}), not a number",
                type_name(other),
                excerpt(&other.to_string())
            ))
        }
    };
    let list = |key: &str| -> Result<Vec<String>, String> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => Ok(items
                .iter()
                .map(|item| match item {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect()),
            Some(other) => Err(format!("`{key}` is a {}, not a list", type_name(other))),
        }
    };
    let hits = list("hits")?;
    let misses = list("misses")?;
    let mut reasoning = match map.get("reasoning") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(format!(
                "`reasoning` is a {}, not a string",
                type_name(other)
            ))
        }
    };
    let clamped = score.clamp(0.0, 1.0);
    if clamped != score {
        if !reasoning.is_empty() {
            reasoning.push(' ');
        }
        reasoning.push_str(&format!("(score {score} clamped to {clamped})"));
    }
    Ok((clamped, hits, misses, reasoning))
}

fn excerpt(text: &str) -> String {
    let cut: String = text.chars().take(200).collect();
    if cut.len() < text.len() {
        format!("`{cut}…`")
    } else {
        format!("`{cut}`")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_shapes() {
        let ok = parse_output(br#"{"score": 1.5, "hits": ["a", 2], "reasoning": "r"}"#).unwrap();
        assert_eq!(ok.0, 1.0);
        assert_eq!(ok.1, vec!["a".to_string(), "2".to_string()]);
        assert!(ok.3.contains("clamped"));
        assert_eq!(parse_output(br#"{"score": -2}"#).unwrap().0, 0.0);
        for (out, needle) in [
            (&b""[..], "printed nothing"),
            (b"not json", "not JSON"),
            (b"[1]", "JSON array, not an object"),
            (br#"{"hits": []}"#, "`score` is missing"),
            (br#"{"score": "high"}"#, "`score` is a string"),
            (
                br#"{"score": 1, "misses": "x"}"#,
                "`misses` is a string, not a list",
            ),
            (
                br#"{"score": 1, "reasoning": 3}"#,
                "`reasoning` is a number",
            ),
        ] {
            let err = parse_output(out).unwrap_err();
            assert!(err.contains(needle), "{err}");
        }
    }

    #[test]
    fn near_misses_of_settings_are_flagged() {
        assert!(looks_like("timout_ms", "timeout_ms"));
        assert!(looks_like("timeout", "timeout_ms"));
        assert!(looks_like("treshold", "threshold"));
        assert!(!looks_like("iou_min", "name"));
        assert!(!looks_like("min_similarity", "threshold"));
        assert!(!looks_like("names_file", "name"));
        for script_key in [
            "case", "time", "names", "thresh", "iou_min", "aliases", "path",
        ] {
            for known in KNOWN_KEYS {
                assert!(!looks_like(script_key, known), "{script_key} vs {known}");
            }
        }
    }
}
