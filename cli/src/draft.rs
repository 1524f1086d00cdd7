//! `cargo proposal-eval draft`: turns production failure suggestions into draft cases.

use crate::args::{flag_value, UsageError};
use crate::files::{display, fixture_files, pretty_json, write_atomic};
use crate::generate::{prompt_bytes, ErrorType, GenError, Generator, DEFAULT_TIMEOUT};
use crate::out::{out, outln};
use crate::runlog::{self, Counts, Entry, Outcome};
use crate::suggestion::{read_input, Record, RecordError, Suggestion};
use chrono::{DateTime, SubsecRound, Utc};
use lexopt::{Arg, ValueExt};
use proposal_eval::__internal::draft::{
    content_sha256, Draft, DraftSource, EditSource, GeneratorMeta, KEY,
};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `draft --help`.
pub const HELP: &str = "\
Draft eval cases from production failure suggestions.

Usage: cargo proposal-eval draft --from FILE_OR_DIR --suite DIR [OPTIONS]

Reads suggestion records (one per JSON line, or one per *.json file in a folder; *.jsonl files
in a folder are read as lines) and writes one draft case per eval suggestion to
<suite>/drafts/eval_<suggestion_id>.json: an ordinary fixture with status `needs_human_input`
(or `draft` when the generator proposed a golden output), the canonical trace's reproduction
context as `input`, and a `draft` key with lineage, assertions and generator metadata.
Drafts are ignored tests until `cargo proposal-eval promote` makes them active.

Only `type = \"eval\"` suggestions are drafted; `status = \"rejected\"` ones are skipped. The
canonical trace is the one with the highest confidence (ties: the smallest trace_id).

A draft that a human edited (edit_source = \"human\", or content that no longer hashes to what
was generated) is never overwritten without --force. A draft whose input and generator did
not change is left byte-identical and the generator is not called again.

Each run writes <suite>/.proposal-eval/runs/<run_id>/summary.json (run_id, started_at,
finished_at, triggered_by, batch_size, picked_up_count, generated_count, skipped_count,
error_count, suggestion_outcomes, ...) and one errors/<n>-<suggestion_id>.json per failed
suggestion (run_id, suggestion_id, error_type, error_message, ...); older runs are never modified.

Options:
  --from FILE_OR_DIR        Suggestion records (required)
  --suite DIR               The suite folder (required; must exist)
  --batch-size N            Call the generator for at most N suggestions; the rest are counted
                            as deferred and picked up by the next run
  --force                   Overwrite drafts edited by a human
  --generator GEN           `template` (default: deterministic, offline) or `command:ARGV`: run
                            ARGV (split like a shell), suggestion as one JSON line on stdin; it
                            prints {\"title\", \"rationale\", \"assertions\": {\"required\",
                            \"forbidden\", \"golden_output\", \"notes\"}, \"model\", \"temperature\"}
  --timeout-ms N            Time a command generator gets per suggestion (default 120000)
  --triggered-by WHO        `manual` (default) or `scheduled`: the run summary's triggered_by
  -h, --help                Print this help

Exit status: 0 when every record was drafted, skipped or unchanged; 1 when a record failed
(see its error record); 2 on a usage error.
";

/// Parsed `draft` options.
#[derive(Debug)]
pub struct Options {
    /// `--from`.
    pub from: PathBuf,
    /// `--suite`.
    pub suite: PathBuf,
    /// `--batch-size`.
    pub batch_size: Option<usize>,
    /// `--force`.
    pub force: bool,
    /// `--generator` (with `--timeout-ms`).
    pub generator: Generator,
    /// `--triggered-by`.
    pub triggered_by: String,
}

/// Parses the arguments after `draft`; `Ok(None)` means `--help` was printed.
pub fn parse(mut parser: lexopt::Parser) -> Result<Option<Options>, UsageError> {
    let (mut from, mut suite, mut batch_size, mut force) = (None, None, None, false);
    let (mut generator, mut timeout, mut triggered_by) = (None, DEFAULT_TIMEOUT, None);
    while let Some(arg) = parser.next()? {
        match arg {
            Arg::Short('h') | Arg::Long("help") => {
                out!("{HELP}");
                return Ok(None);
            }
            Arg::Long("from") => from = Some(PathBuf::from(flag_value(&mut parser, "--from")?)),
            Arg::Long("suite") => suite = Some(PathBuf::from(flag_value(&mut parser, "--suite")?)),
            Arg::Long("batch-size") => {
                let value = flag_value(&mut parser, "--batch-size")?.string()?;
                match value.parse::<usize>() {
                    Ok(n) if n > 0 => batch_size = Some(n),
                    _ => {
                        return Err(UsageError(format!(
                            "--batch-size {value:?}: expected a whole number of at least 1"
                        )))
                    }
                }
            }
            Arg::Long("force") => force = true,
            Arg::Long("generator") => {
                generator = Some(flag_value(&mut parser, "--generator")?.string()?)
            }
            Arg::Long("timeout-ms") => {
                let value = flag_value(&mut parser, "--timeout-ms")?.string()?;
                match value.parse::<u64>() {
                    Ok(ms) if ms > 0 => timeout = Duration::from_millis(ms),
                    _ => {
                        return Err(UsageError(format!(
                            "--timeout-ms {value:?}: expected a number of milliseconds (at least 1)"
                        )))
                    }
                }
            }
            Arg::Long("triggered-by") => {
                let value = flag_value(&mut parser, "--triggered-by")?.string()?;
                if value != "manual" && value != "scheduled" {
                    return Err(UsageError(format!(
                        "--triggered-by {value:?}: expected `manual` or `scheduled`"
                    )));
                }
                triggered_by = Some(value);
            }
            Arg::Value(p) => {
                return Err(UsageError(format!(
                    "unexpected argument {p:?} (the input is given with --from)"
                )))
            }
            other => return Err(other.unexpected().into()),
        }
    }
    let from = from.ok_or_else(|| UsageError("missing --from FILE_OR_DIR".into()))?;
    let suite = suite.ok_or_else(|| UsageError("missing --suite DIR".into()))?;
    if !from.exists() {
        return Err(UsageError(format!(
            "--from {}: no such file or folder",
            from.display()
        )));
    }
    if !suite.is_dir() {
        return Err(UsageError(format!(
            "--suite {}: no such folder (create it first: mkdir -p {})",
            suite.display(),
            suite.display()
        )));
    }
    let generator = Generator::parse(generator.as_deref().unwrap_or("template"), timeout)
        .map_err(UsageError)?;
    Ok(Some(Options {
        from,
        suite,
        batch_size,
        force,
        generator,
        triggered_by: triggered_by.unwrap_or_else(|| "manual".into()),
    }))
}

/// What is at a draft's path before the run.
enum Existing {
    Absent,
    /// Written by a generator and unedited: may be replaced.
    Generated {
        value: Value,
        draft: Box<Draft>,
    },
    /// Edited by a human, or not a draft the tool can vouch for: replaced only with --force.
    Protected(String),
}

fn existing(path: &Path, shown: &str) -> Existing {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Existing::Absent,
        Err(e) => return Existing::Protected(format!("{shown} could not be read ({e})")),
    };
    let value: Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => return Existing::Protected(format!("{shown} is not valid JSON ({e})")),
    };
    let draft = match Draft::from_fixture(&value) {
        Ok(Some(d)) => d,
        Ok(None) => return Existing::Protected(format!("{shown} has no `draft` key")),
        Err(e) => return Existing::Protected(format!("{shown} has an invalid `draft` key ({e})")),
    };
    if draft.edit_source == EditSource::Human {
        return Existing::Protected(format!(
            "{shown} was edited by a human (edit_source = \"human\")"
        ));
    }
    if content_sha256(&value) != draft.generator_meta.content_sha256 {
        return Existing::Protected(format!(
            "{shown} was edited since it was generated (its content no longer matches generator_meta.content_sha256)"
        ));
    }
    Existing::Generated {
        value,
        draft: Box::new(draft),
    }
}

/// Drafts whose suggestion already lives elsewhere in the suite (moved or copied by hand):
/// suggestion id -> path.
fn drafted_elsewhere(suite: &Path) -> HashMap<String, PathBuf> {
    let mut found = HashMap::new();
    for file in fixture_files(suite) {
        let in_drafts = file
            .strip_prefix(suite)
            .ok()
            .and_then(|rel| rel.parent())
            .is_some_and(|parent| parent == Path::new("drafts"));
        if in_drafts {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let Ok(value) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        if let Some(id) = value
            .pointer("/draft/source/suggestion_id")
            .and_then(Value::as_str)
        {
            found.entry(id.to_string()).or_insert(file);
        }
    }
    found
}

/// An unedited draft written before its keys had today's names (`prompt_sha256`, no `model` or
/// `temperature`), in today's shape: the same content with `updated_at` now and the content hash
/// of the new text. `None` when it already has today's shape. Dashboards read drafts by the key
/// names, so the tool rewrites what it wrote, without asking the generator again.
fn with_current_keys(value: &Value, draft: &Draft) -> Option<Value> {
    let current = serde_json::to_value(draft).expect("a draft always serializes");
    if value.get(KEY) == Some(&current) {
        return None;
    }
    let mut draft = draft.clone();
    draft.updated_at = Utc::now().trunc_subsecs(0);
    let mut fixture = value.clone();
    fixture[KEY] = serde_json::to_value(&draft).expect("a draft always serializes");
    fixture[KEY]["generator_meta"]["content_sha256"] = json!(content_sha256(&fixture));
    Some(fixture)
}

/// Builds the fixture document for a suggestion.
fn build_fixture(
    suggestion: &Suggestion,
    generated: &crate::generate::Generated,
    generator: &Generator,
    prompt_hash: String,
    run_id: &str,
    now: DateTime<Utc>,
) -> (Value, String) {
    let ranked = suggestion.ranked_traces();
    let canonical = ranked[0];
    let mut pattern_ids: Vec<String> = Vec::new();
    for trace in &ranked {
        if let Some(p) = &trace.pattern_id {
            if !pattern_ids.contains(p) {
                pattern_ids.push(p.clone());
            }
        }
    }
    let response = &generated.response;
    let draft = Draft {
        eval_test_id: format!("eval_{}", suggestion.suggestion_id),
        title: response.title.clone(),
        rationale: response.rationale.clone(),
        source: DraftSource {
            suggestion_id: suggestion.suggestion_id.clone(),
            canonical_trace_id: canonical.trace_id.clone(),
            canonical_pattern_id: canonical.pattern_id.clone(),
            trace_ids: ranked.iter().map(|t| t.trace_id.clone()).collect(),
            pattern_ids,
        },
        assertions: response.assertions.clone(),
        edit_source: EditSource::Generated,
        generated_at: now,
        updated_at: now,
        generator_meta: GeneratorMeta {
            model: response.model.clone(),
            temperature: response.temperature,
            prompt_hash,
            response_sha256: generated.response_sha256.clone(),
            run_id: run_id.to_string(),
            generator: generator.name(),
            content_sha256: String::new(),
        },
    };
    let status = if draft.assertions.golden_output.is_some() {
        "draft"
    } else {
        "needs_human_input"
    };
    let input = match &canonical.reproduction_context {
        Value::Null => json!({}),
        other => other.clone(),
    };
    let mut fixture = json!({
        "description": response.title,
        "input": input,
        "status": status,
        "draft": serde_json::to_value(&draft).expect("a draft always serializes"),
    });
    // The tools the failing trace used are what a correct run is expected to call too, in
    // whatever order: a trajectory the `trajectory` evaluator checks once the draft runs.
    let tools: Vec<Value> = canonical.reproduction_context["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|tool| json!({ "tool": tool }))
        .collect();
    if !tools.is_empty() {
        fixture["expected_trajectory"] = json!({ "mode": "any_order", "steps": tools });
    }
    let hash = content_sha256(&fixture);
    fixture["draft"]["generator_meta"]["content_sha256"] = json!(hash);
    (fixture, hash)
}

/// Runs `draft`; returns the process exit code.
pub fn run(options: Options) -> Result<i32, String> {
    let started_at = Utc::now().trunc_subsecs(0);
    let run_id = runlog::new_run_id(Utc::now());
    let generator_name = options.generator.name();
    let records = read_input(&options.from)
        .map_err(|e| format!("reading --from {}: {e}", options.from.display()))?;
    let elsewhere = drafted_elsewhere(&options.suite);
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    let mut entries = Vec::new();
    let mut picked_up = 0;

    outln!(
        "draft run {run_id} ({}, generator {generator_name}, {} record(s) from {})",
        options.triggered_by,
        records.len(),
        display(&options.from)
    );
    for record in &records {
        let entry = draft_one(
            record,
            &options,
            &run_id,
            &elsewhere,
            &mut seen,
            &mut picked_up,
        );
        print_entry(&entry);
        entries.push(entry);
    }
    let counts = Counts::of(&entries, picked_up);
    let finished_at = Utc::now().trunc_subsecs(0);
    let summary = runlog::write(
        &options.suite,
        &runlog::Run {
            run_id: &run_id,
            triggered_by: &options.triggered_by,
            generator: &generator_name,
            batch_size: options.batch_size,
            force: options.force,
            from: &options.from,
            started_at,
            finished_at,
            entries: &entries,
            counts: &counts,
        },
    )
    .map_err(|e| {
        format!(
            "writing the run summary under {}: {e}",
            display(&options.suite)
        )
    })?;
    outln!(
        "read {}, picked up {}, generated {}, unchanged {}, skipped {}, deferred {}, errors {}",
        counts.read,
        counts.picked_up,
        counts.generated,
        counts.unchanged,
        counts.skipped,
        counts.deferred,
        counts.errors
    );
    if counts.deferred > 0 {
        outln!(
            "{} record(s) deferred by --batch-size: run again to draft them",
            counts.deferred
        );
    }
    outln!("run summary: {}", display(&summary));
    Ok(if counts.errors > 0 { 1 } else { 0 })
}

fn print_entry(entry: &Entry) {
    let who = entry
        .suggestion_id
        .clone()
        .unwrap_or_else(|| entry.location.clone());
    let detail = match &entry.outcome {
        Outcome::Skipped(reason) => format!(": {reason}"),
        Outcome::Updated(Some(reason)) => format!(
            " -> {}: {reason}",
            entry.draft.as_deref().unwrap_or_default()
        ),
        Outcome::Error {
            error_type,
            message,
            ..
        } if who == entry.location => {
            format!(": {}: {message}", error_type.name())
        }
        Outcome::Error {
            error_type,
            message,
            ..
        } => {
            format!(" ({}): {}: {message}", entry.location, error_type.name())
        }
        _ => entry
            .draft
            .as_ref()
            .map(|d| format!(" -> {d}"))
            .unwrap_or_default(),
    };
    outln!("  {:<11} {who}{detail}", entry.outcome.label());
}

fn draft_one(
    record: &Record,
    options: &Options,
    run_id: &str,
    elsewhere: &HashMap<String, PathBuf>,
    seen: &mut BTreeMap<String, String>,
    picked_up: &mut usize,
) -> Entry {
    let location = record.location.to_string();
    let mut entry = Entry {
        suggestion_id: record.id().map(str::to_string),
        location: location.clone(),
        draft: None,
        outcome: Outcome::Deferred,
        time: Utc::now().trunc_subsecs(0),
    };
    let error = |error_type, message: String| Outcome::Error {
        error_type,
        message,
        response_sha256: None,
        excerpt: None,
    };
    let suggestion = match &record.parsed {
        Ok(s) => s,
        Err(RecordError::InvalidJson(m)) => {
            entry.outcome = error(ErrorType::InvalidJson, format!("not JSON: {m}"));
            return entry;
        }
        Err(RecordError::Schema(m)) => {
            entry.outcome = error(
                ErrorType::SchemaValidation,
                format!("not a suggestion record: {m}"),
            );
            return entry;
        }
    };
    let id = &suggestion.suggestion_id;
    if let Some(first) = seen.get(id) {
        entry.outcome = error(
            ErrorType::SchemaValidation,
            format!("duplicate suggestion_id {id:?} (first at {first})"),
        );
        return entry;
    }
    seen.insert(id.clone(), location.clone());
    if suggestion.kind != "eval" {
        entry.outcome = Outcome::Skipped(format!(
            "type is {:?}; only \"eval\" suggestions are drafted",
            suggestion.kind
        ));
        return entry;
    }
    if suggestion.status.as_deref() == Some("rejected") {
        entry.outcome = Outcome::Skipped("status is \"rejected\"".into());
        return entry;
    }
    if suggestion.source_traces.is_empty() {
        entry.outcome = error(
            ErrorType::SchemaValidation,
            format!("suggestion {id:?} has no source_traces to reproduce"),
        );
        return entry;
    }
    let relative = format!("drafts/eval_{id}.json");
    let path = options.suite.join(&relative);
    entry.draft = Some(relative.clone());
    if let Some(other) = elsewhere.get(id) {
        if !options.force {
            entry.outcome = Outcome::Skipped(format!(
                "already in the suite at {} (a moved draft or promoted case); --force drafts it again",
                display(other)
            ));
            return entry;
        }
    }
    let before = existing(&path, &relative);
    let raw = record
        .raw
        .as_ref()
        .expect("a parsed record has its raw JSON");
    let prompt = prompt_bytes(raw);
    let prompt_hash = proposal_eval::__internal::draft::sha256_hex(&prompt);
    let generator_name = options.generator.name();
    match &before {
        Existing::Protected(reason) if !options.force => {
            entry.outcome = Outcome::Skipped(format!("{reason}; --force overwrites it"));
            return entry;
        }
        Existing::Generated { value, draft }
            if !options.force
                && draft.generator_meta.prompt_hash == prompt_hash
                && draft.generator_meta.generator == generator_name =>
        {
            // Same input, same generator: the generator is not asked again.
            entry.outcome = match with_current_keys(value, draft) {
                None => Outcome::Unchanged,
                Some(fixture) => match write_atomic(&path, pretty_json(&fixture).as_bytes()) {
                    Ok(()) => Outcome::Updated(Some(
                        "rewritten with today's generator_meta keys (prompt_hash, model, \
                         temperature); the generator was not called again"
                            .into(),
                    )),
                    Err(e) => error(
                        ErrorType::Unknown,
                        format!("writing {}: {e}", display(&path)),
                    ),
                },
            };
            return entry;
        }
        _ => {}
    }
    if options.batch_size.is_some_and(|n| *picked_up >= n) {
        entry.outcome = Outcome::Deferred;
        return entry;
    }
    *picked_up += 1;
    let generated = match options.generator.generate(suggestion, &prompt) {
        Ok(g) => g,
        Err(GenError {
            error_type,
            message,
            response_sha256,
            excerpt,
        }) => {
            entry.time = Utc::now().trunc_subsecs(0);
            entry.outcome = Outcome::Error {
                error_type,
                message,
                response_sha256,
                excerpt,
            };
            return entry;
        }
    };
    let now = Utc::now().trunc_subsecs(0);
    let (fixture, hash) = build_fixture(
        suggestion,
        &generated,
        &options.generator,
        prompt_hash,
        run_id,
        now,
    );
    entry.time = now;
    if let Existing::Generated { value, .. } = &before {
        if content_sha256(value) == hash {
            entry.outcome = Outcome::Unchanged;
            return entry;
        }
    }
    if let Err(e) = write_atomic(&path, pretty_json(&fixture).as_bytes()) {
        entry.outcome = error(
            ErrorType::Unknown,
            format!("writing {}: {e}", display(&path)),
        );
        return entry;
    }
    entry.outcome = match before {
        Existing::Absent => Outcome::Generated,
        Existing::Generated { .. } => Outcome::Updated(None),
        Existing::Protected(_) => Outcome::Overwritten,
    };
    entry
}
