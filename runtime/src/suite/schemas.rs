//! The JSON Schema files of a suite's `json_schema` checks (relative to the suite folder), each
//! read and compiled once per process; validation needs the `json-schema` feature.

use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The compiled schemas of a suite's `json_schema` checks, by file as the checks write it
/// (relative to the one suite folder), each read once.
#[derive(Default)]
pub(crate) struct Schemas {
    compiled: Mutex<HashMap<String, Arc<Result<Compiled, String>>>>,
}

impl Schemas {
    /// The schema `file` (relative to `suite_dir`), compiled, or why it cannot be.
    pub(crate) fn get(&self, suite_dir: &Path, file: &str) -> Arc<Result<Compiled, String>> {
        let mut compiled = self.compiled.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(schema) = compiled.get(file) {
            return schema.clone();
        }
        let schema = Arc::new(compile(&suite_dir.join(file), file));
        compiled.insert(file.to_string(), schema.clone());
        schema
    }

    /// Whether `value` is valid under the schema `file`: `Err` says where and why not.
    pub(crate) fn validate(
        &self,
        suite_dir: &Path,
        file: &str,
        value: &Value,
    ) -> Result<(), String> {
        match &*self.get(suite_dir, file) {
            Ok(compiled) => validate(compiled, value),
            Err(why) => Err(why.clone()),
        }
    }
}

/// A schema file read as JSON, or why it cannot be (named as the check writes it, `file`).
fn read(path: &Path, file: &str) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "cannot read the schema file `{file}` ({}): {e}; the path is relative to the suite folder",
            path.display()
        )
    })?;
    serde_json::from_str(&text).map_err(|e| format!("the schema file `{file}` is not JSON: {e}"))
}

#[cfg(feature = "json-schema")]
type Compiled = jsonschema::Validator;

#[cfg(not(feature = "json-schema"))]
type Compiled = std::convert::Infallible;

#[cfg(feature = "json-schema")]
fn compile(path: &Path, file: &str) -> Result<Compiled, String> {
    let schema = read(path, file)?;
    jsonschema::draft202012::new(&schema).map_err(|e| {
        let at = e.instance_path().to_string();
        let at = if at.is_empty() {
            String::new()
        } else {
            format!(" at {at}")
        };
        format!("the schema file `{file}` is not a JSON Schema (draft 2020-12){at}: {e}")
    })
}

#[cfg(not(feature = "json-schema"))]
fn compile(path: &Path, file: &str) -> Result<Compiled, String> {
    read(path, file)?;
    Err(format!(
        "`json_schema` checks need proposal-eval's `json-schema` feature to validate `{file}`: proposal-eval = {{ version = \"{}\", features = [\"json-schema\"] }}",
        env!("CARGO_PKG_VERSION")
    ))
}

/// The first error of `value` under `schema` (with how many more), at its JSON Pointer.
#[cfg(feature = "json-schema")]
fn validate(schema: &Compiled, value: &Value) -> Result<(), String> {
    if schema.is_valid(value) {
        return Ok(());
    }
    let mut errors = schema.iter_errors(value);
    let Some(first) = errors.next() else {
        return Ok(());
    };
    let more = errors.count();
    let at = first.instance_path().to_string();
    let at = if at.is_empty() {
        "the value".into()
    } else {
        at
    };
    let more = match more {
        0 => String::new(),
        n => format!(" (and {n} more error(s))"),
    };
    Err(format!("{at}: {first}{more}"))
}

#[cfg(not(feature = "json-schema"))]
fn validate(schema: &Compiled, _: &Value) -> Result<(), String> {
    match *schema {}
}
