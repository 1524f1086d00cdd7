//! Suggestion records: the input of `draft` (docs/reference/drafts.md), read from JSON lines or a folder of
//! JSON files. Records come from production tooling, so unknown keys are kept, not refused.

use serde::Deserialize;
use serde_json::Value;
use std::cmp::Ordering;
use std::fmt;
use std::path::{Path, PathBuf};

/// One suggestion, as failure-analysis tooling writes it.
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[derive(Clone, Debug, Deserialize)]
pub struct Suggestion {
    /// Names the draft: `drafts/eval_<suggestion_id>.json`.
    pub suggestion_id: String,
    /// Only `eval` is drafted.
    #[serde(rename = "type")]
    pub kind: String,
    /// Governance status (`pending`, `approved`, `rejected`): read, never modified.
    #[serde(default)]
    pub status: Option<String>,
    /// Title and description of the failure.
    #[serde(default)]
    pub suggestion_content: SuggestionContent,
    /// The production traces that showed the failure.
    #[serde(default)]
    pub source_traces: Vec<SourceTrace>,
}

/// `suggestion_content`.
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[derive(Clone, Debug, Default, Deserialize)]
pub struct SuggestionContent {
    /// Short title.
    #[serde(default)]
    pub title: Option<String>,
    /// What went wrong.
    #[serde(default)]
    pub description: Option<String>,
}

/// One production trace behind a suggestion.
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[derive(Clone, Debug, Deserialize)]
pub struct SourceTrace {
    /// The trace id in the tracing system.
    pub trace_id: String,
    /// The failure pattern the trace was clustered into.
    #[serde(default)]
    pub pattern_id: Option<String>,
    /// How sure the analysis is that this trace shows the failure.
    #[serde(default)]
    pub confidence: Option<f64>,
    /// What is needed to reproduce it: becomes the case's `input`.
    #[serde(default)]
    pub reproduction_context: Value,
    /// What the model produced in production (the bad output).
    #[serde(default)]
    pub observed_output: Value,
}

impl Suggestion {
    /// Checks what serde cannot: the id is usable in a file name and traces have ids.
    pub fn validate(&self) -> Result<(), String> {
        let id = &self.suggestion_id;
        let id_ok = !id.is_empty()
            && !id.starts_with('.')
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if !id_ok {
            return Err(format!(
                "suggestion_id {id:?} must be non-empty and contain only ASCII letters, digits, \
                 '_', '-' and '.' (it names the draft file)"
            ));
        }
        if let Some(i) = self
            .source_traces
            .iter()
            .position(|t| t.trace_id.is_empty())
        {
            return Err(format!("source_traces[{i}].trace_id is empty"));
        }
        Ok(())
    }

    /// The source traces in canonical order: highest confidence first (a missing confidence
    /// ranks last), ties broken by the smallest `trace_id`. The first one is the canonical trace.
    pub fn ranked_traces(&self) -> Vec<&SourceTrace> {
        let mut traces: Vec<&SourceTrace> = self.source_traces.iter().collect();
        traces.sort_by(|a, b| {
            let by_confidence = match (a.confidence, b.confidence) {
                (Some(x), Some(y)) => y.partial_cmp(&x).unwrap_or(Ordering::Equal),
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (None, None) => Ordering::Equal,
            };
            by_confidence.then_with(|| a.trace_id.cmp(&b.trace_id))
        });
        traces
    }
}

/// Where a record came from: a file, and for JSON lines the line.
#[derive(Clone, Debug, PartialEq)]
pub struct Location {
    /// The input file.
    pub file: PathBuf,
    /// 1-based line for JSON lines input; `None` for one-record-per-file input.
    pub line: Option<usize>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", crate::files::display(&self.file))?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        Ok(())
    }
}

/// Why a record could not be read.
#[derive(Clone, Debug, PartialEq)]
pub enum RecordError {
    /// Not JSON at all; the message carries line and column.
    InvalidJson(String),
    /// JSON, but not a suggestion record.
    Schema(String),
}

/// One record of the input, read or not.
#[derive(Debug)]
pub struct Record {
    /// Where it came from.
    pub location: Location,
    /// The raw JSON (handed to the generator as is), when it parsed.
    pub raw: Option<Value>,
    /// The suggestion, or why the record is not one.
    pub parsed: Result<Suggestion, RecordError>,
}

impl Record {
    /// The suggestion id, also for a record that failed validation but had one.
    pub fn id(&self) -> Option<&str> {
        match &self.parsed {
            Ok(s) => Some(&s.suggestion_id),
            Err(_) => self
                .raw
                .as_ref()
                .and_then(|v| v.get("suggestion_id"))
                .and_then(Value::as_str),
        }
    }
}

fn record_from_value(location: Location, raw: Value) -> Record {
    let parsed = Suggestion::deserialize(&raw)
        .map_err(|e| RecordError::Schema(e.to_string()))
        .and_then(|s| s.validate().map(|()| s).map_err(RecordError::Schema));
    Record {
        location,
        raw: Some(raw),
        parsed,
    }
}

/// Reads a JSON lines file: one record per non-blank line.
pub fn read_lines(file: &Path, text: &str) -> Vec<Record> {
    let mut records = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let location = Location {
            file: file.to_path_buf(),
            line: Some(index + 1),
        };
        match serde_json::from_str::<Value>(line) {
            Ok(raw) => records.push(record_from_value(location, raw)),
            Err(e) => records.push(Record {
                location,
                raw: None,
                parsed: Err(RecordError::InvalidJson(format!(
                    "column {}: {}",
                    e.column(),
                    strip_position(&e)
                ))),
            }),
        }
    }
    records
}

/// Reads a file that holds one record (pretty-printed or not).
pub fn read_single(file: &Path, text: &str) -> Record {
    let location = Location {
        file: file.to_path_buf(),
        line: None,
    };
    match serde_json::from_str::<Value>(text) {
        Ok(raw) => record_from_value(location, raw),
        Err(e) => Record {
            location,
            raw: None,
            parsed: Err(RecordError::InvalidJson(format!(
                "line {} column {}: {}",
                e.line(),
                e.column(),
                strip_position(&e)
            ))),
        },
    }
}

fn strip_position(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// Reads `--from`: a file (`*.json`: one record; anything else: JSON lines) or a folder (every
/// `*.json` file is one record, every `*.jsonl` file holds lines; sorted by path, recursive,
/// hidden entries skipped).
pub fn read_input(from: &Path) -> std::io::Result<Vec<Record>> {
    if from.is_dir() {
        let mut files: Vec<PathBuf> = walkdir::WalkDir::new(from)
            .into_iter()
            .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'))
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file())
            .map(|e| e.into_path())
            .filter(|p| p.extension().is_some_and(|x| x == "json" || x == "jsonl"))
            .collect();
        files.sort();
        let mut records = Vec::new();
        for file in files {
            records.extend(read_file(&file)?);
        }
        Ok(records)
    } else {
        read_file(from)
    }
}

fn read_file(file: &Path) -> std::io::Result<Vec<Record>> {
    let text = std::fs::read_to_string(file)?;
    Ok(if file.extension().is_some_and(|x| x == "json") {
        vec![read_single(file, &text)]
    } else {
        read_lines(file, &text)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn suggestion(traces: Value) -> Suggestion {
        serde_json::from_value(json!({
            "suggestion_id": "s1", "type": "eval", "source_traces": traces
        }))
        .unwrap()
    }

    #[test]
    fn canonical_trace_is_most_confident_then_smallest_id() {
        let s = suggestion(json!([
            { "trace_id": "c", "confidence": 0.5 },
            { "trace_id": "b", "confidence": 0.9 },
            { "trace_id": "a", "confidence": 0.9 },
            { "trace_id": "0" }
        ]));
        let ids: Vec<_> = s
            .ranked_traces()
            .iter()
            .map(|t| t.trace_id.as_str())
            .collect();
        assert_eq!(ids, ["a", "b", "c", "0"]);
    }

    #[test]
    fn ids_that_cannot_name_a_file_are_refused() {
        for bad in ["", "../x", "a/b", ".hidden", "a b"] {
            let mut s = suggestion(json!([]));
            s.suggestion_id = bad.into();
            assert!(s.validate().is_err(), "{bad:?}");
        }
        assert!(suggestion(json!([])).validate().is_ok());
    }

    #[test]
    fn lines_report_line_and_column() {
        let text = "{\"suggestion_id\":\"s1\",\"type\":\"eval\"}\n\n{nope\n{\"type\":\"eval\"}\n";
        let records = read_lines(Path::new("in.jsonl"), text);
        assert_eq!(records.len(), 3);
        assert!(records[0].parsed.is_ok());
        assert_eq!(records[1].location.line, Some(3));
        assert_eq!(
            records[1].parsed.as_ref().unwrap_err(),
            &RecordError::InvalidJson("column 2: key must be a string".into())
        );
        assert_eq!(records[2].location.line, Some(4));
        match &records[2].parsed {
            Err(RecordError::Schema(m)) => assert!(m.contains("suggestion_id"), "{m}"),
            other => panic!("{other:?}"),
        }
    }
}
