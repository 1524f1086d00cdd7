//! Helpers shared by the CLI's integration tests: a temporary suite and the built binary.
#![allow(dead_code)]

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs the binary the way cargo does (`cargo-proposal-eval proposal-eval ARGS`) in `cwd`.
pub fn run_in(cwd: &Path, args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-proposal-eval"))
        .arg("proposal-eval")
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("the binary runs");
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs the binary in `cwd` with its stdout a pipe whose reader is already gone, as in
/// `cargo proposal-eval report | true`: every write to stdout fails with a broken pipe.
pub fn run_into_closed_pipe(cwd: &Path, args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-proposal-eval"))
        .arg("proposal-eval")
        .args(args)
        .current_dir(cwd)
        .env_remove("CARGO_TARGET_DIR")
        .stdout(writer)
        .output()
        .expect("the binary runs");
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::new(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A temporary folder holding `suite/` and the input files.
pub struct Env {
    pub dir: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("suite")).unwrap();
        Env { dir }
    }
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }
    pub fn write(&self, rel: &str, text: &str) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap()
    }
    pub fn json(&self, rel: &str) -> Value {
        serde_json::from_str(&self.read(rel)).unwrap()
    }
    pub fn run(&self, args: &[&str]) -> Output {
        run_in(self.dir.path(), args)
    }
    /// Writes suggestions as JSON lines to `rel`.
    pub fn lines(&self, rel: &str, records: &[Value]) {
        let text: String = records.iter().map(|r| format!("{r}\n")).collect();
        self.write(rel, &text);
    }
    pub fn draft(&self, from: &str, extra: &[&str]) -> Output {
        let mut args = vec!["draft", "--from", from, "--suite", "suite"];
        args.extend_from_slice(extra);
        self.run(&args)
    }
    /// Every file under the folder with its bytes.
    pub fn snapshot(&self) -> BTreeMap<String, Vec<u8>> {
        walkdir::WalkDir::new(self.dir.path())
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file())
            .map(|e| {
                let rel = e.path().strip_prefix(self.dir.path()).unwrap();
                (rel.display().to_string(), std::fs::read(e.path()).unwrap())
            })
            .collect()
    }
    /// The run folders under `.proposal-eval/runs/`, sorted.
    pub fn runs(&self) -> Vec<PathBuf> {
        let mut runs: Vec<PathBuf> = std::fs::read_dir(self.path("suite/.proposal-eval/runs"))
            .map(|d| d.map(|e| e.unwrap().path()).collect())
            .unwrap_or_default();
        runs.sort();
        runs
    }
    /// The summary of the only run, or of the latest when `latest`.
    pub fn last_summary(&self) -> Value {
        let runs = self.runs();
        let text = std::fs::read_to_string(runs.last().unwrap().join("summary.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    }
    /// The error records of the latest run.
    pub fn last_errors(&self) -> Vec<Value> {
        let runs = self.runs();
        let dir = runs.last().unwrap().join("errors");
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|d| d.map(|e| e.unwrap().path()).collect())
            .unwrap_or_default();
        files.sort();
        files
            .iter()
            .map(|f| serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap())
            .collect()
    }
}

/// A suggestion record as docs/reference/drafts.md describes it.
pub fn suggestion(id: &str) -> Value {
    json!({
        "suggestion_id": id,
        "type": "eval",
        "status": "approved",
        "approval_metadata": { "timestamp": "2025-12-29T12:00:00Z" },
        "suggestion_content": {
            "title": "Prevent stale product recommendations",
            "description": "The agent recommended discontinued SKUs."
        },
        "source_traces": [
            {
                "trace_id": "dd_trace_67890",
                "pattern_id": "pattern_dd_trace_67890",
                "confidence": 0.92,
                "reproduction_context": {
                    "prompt": "Recommend a laptop under $1000.",
                    "required_state": "Inventory has discontinued items.",
                    "tools": ["inventory_lookup"]
                },
                "observed_output": "I recommend SKU-123 (discontinued)."
            }
        ]
    })
}

/// The keys of a JSON object, sorted (as every document of the CLI writes them).
pub fn keys(value: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = value
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    keys
}

/// The `prompt_hash` of a record: SHA-256 of the record as canonical JSON and a newline, the
/// bytes every generator is handed.
pub fn prompt_hash(record: &Value) -> String {
    let prompt = format!(
        "{}\n",
        proposal_eval::__internal::draft::canonical_json(record)
    );
    proposal_eval::__internal::draft::sha256_hex(prompt.as_bytes())
}

/// Asserts a timestamp as every file of the CLI writes it: RFC 3339, UTC, whole seconds.
pub fn assert_timestamp(value: &Value) -> chrono::DateTime<chrono::Utc> {
    let text = value
        .as_str()
        .unwrap_or_else(|| panic!("{value} is not a string"));
    assert!(
        text.len() == 20 && text.ends_with('Z'),
        "{text} is not RFC 3339 UTC to the second"
    );
    text.parse().unwrap()
}

/// Rewrites a draft as versions before `prompt_hash` wrote it: `prompt_sha256`, no `model` or
/// `temperature`, and the content hash of that text (so it is an unedited draft).
pub fn with_old_keys(fixture: &mut Value) {
    let meta = fixture["draft"]["generator_meta"].as_object_mut().unwrap();
    meta.remove("model");
    meta.remove("temperature");
    let hash = meta.remove("prompt_hash").unwrap();
    meta.insert("prompt_sha256".into(), hash);
    let content = proposal_eval::__internal::draft::content_sha256(fixture);
    fixture["draft"]["generator_meta"]["content_sha256"] = json!(content);
}
