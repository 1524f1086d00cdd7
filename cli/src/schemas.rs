//! `schemas/`: the JSON Schemas (draft 2020-12) of the files a user writes and reads, generated
//! from the Rust types that read and write them, and checked against this repository's files.
//!
//! - `committed_schemas_are_generated` fails when a committed schema differs from what the
//!   types generate (a field added, renamed or documented anew). Regenerate with
//!   `UPDATE_SCHEMAS=1 cargo test -p cargo-proposal-eval --bin cargo-proposal-eval schemas`.
//! - `the_repository_validates` checks every fixture, suite config and recording of every suite
//!   of the repository against its schema: what the parser accepts, the schema accepts.
//! - `the_drafts_page_validates` checks the suggestion records of docs/reference/drafts.md
//!   (and `cli/tests/cli/report.rs` a report.json the `report` command writes).
//! - `an_unknown_key_fails` checks that the schemas refuse what the parsers refuse most often.
//!
//! The schemas live here, not in the runtime, because the draft input's type is this crate's.

use proposal_eval::__internal::schema;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Each committed schema: its file in `schemas/` and how it is generated.
fn schemas() -> Vec<(&'static str, schemars::Schema)> {
    vec![
        ("fixture.json", schema::fixture()),
        ("config.json", schema::config()),
        ("recording.json", schema::recording()),
        ("report.json", schema::report()),
        ("draft-input.json", draft_input()),
    ]
}

/// A suggestion record, the input of `cargo proposal-eval draft` (docs/reference/drafts.md).
/// Unknown keys are kept, not refused, so the schema allows them.
fn draft_input() -> schemars::Schema {
    let mut schema = schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<crate::suggestion::Suggestion>();
    schema.insert(
        "title".into(),
        "proposal-eval draft input (a suggestion record)".into(),
    );
    schema
}

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The file's text: sorted keys (whatever serde_json's features), two-space indents, a final
/// newline.
fn text(schema: &schemars::Schema) -> String {
    let value = proposal_eval::__internal::json::sorted(schema.as_value());
    format!(
        "{}\n",
        serde_json::to_string_pretty(&value).expect("a schema serializes")
    )
}

const REGENERATE: &str =
    "UPDATE_SCHEMAS=1 cargo test -p cargo-proposal-eval --bin cargo-proposal-eval schemas";

#[test]
fn committed_schemas_are_generated() {
    let dir = repository().join("schemas");
    let update = std::env::var_os("UPDATE_SCHEMAS").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    for (name, schema) in schemas() {
        let path = dir.join(name);
        let generated = text(&schema);
        if update {
            std::fs::create_dir_all(&dir).unwrap();
            // Atomic: the other tests of this module read the files meanwhile.
            proposal_eval::__internal::write_atomic(&path, generated.as_bytes()).unwrap();
            continue;
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        if committed != generated {
            stale.push(format!(
                "schemas/{name}\n{}",
                first_difference(&committed, &generated)
            ));
        }
    }
    assert!(
        stale.is_empty(),
        "these schemas differ from what the Rust types generate; regenerate them with\n  {REGENERATE}\nand commit them:\n{}",
        stale.join("\n")
    );
}

/// The lines that differ, as a unified diff (committed -> generated), at most 40 lines.
fn first_difference(committed: &str, generated: &str) -> String {
    let diff = similar::TextDiff::from_lines(committed, generated)
        .unified_diff()
        .context_radius(2)
        .header("committed", "generated")
        .to_string();
    let mut lines: Vec<&str> = diff.lines().take(40).collect();
    if diff.lines().count() > 40 {
        lines.push("...");
    }
    lines.join("\n")
}

/// A schema ready to validate with, from the committed file (what an editor reads).
fn validator(name: &str) -> jsonschema::Validator {
    let path = repository().join("schemas").join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (generate it: {REGENERATE})", path.display()));
    let value: Value = serde_json::from_str(&text).unwrap();
    jsonschema::validator_for(&value).unwrap_or_else(|e| panic!("schemas/{name}: {e}"))
}

/// Why `value` does not validate, one line per error; empty when it does.
fn errors(validator: &jsonschema::Validator, value: &Value) -> Vec<String> {
    validator
        .iter_errors(value)
        .map(|e| format!("at `{}`: {e}", e.instance_path()))
        .collect()
}

/// The files of every suite of the repository (the suites `cargo proposal-eval status` finds).
struct Files {
    fixtures: Vec<PathBuf>,
    configs: Vec<PathBuf>,
    recordings: Vec<PathBuf>,
}

fn files() -> Files {
    let mut files = Files {
        fixtures: Vec::new(),
        configs: Vec::new(),
        recordings: Vec::new(),
    };
    for suite in crate::suites::find(&[repository()]).unwrap() {
        let recordings = suite.dir.join("recordings");
        for fixture in proposal_eval::__internal::fixture::discover(&suite.dir, &recordings)
            .unwrap_or_default()
        {
            files.fixtures.push(fixture.absolute);
        }
        let config = suite.dir.join("proposal-eval.toml");
        if config.is_file() {
            files.configs.push(config);
        }
        json_files_below(&recordings, &mut files.recordings);
    }
    files
}

/// `*.json` below `dir`, hidden entries and pending recordings (`*.pending.json`) left out.
fn json_files_below(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        if path.is_dir() {
            json_files_below(&path, out);
        } else if name.ends_with(".json") && !name.ends_with(".pending.json") {
            out.push(path);
        }
    }
}

/// Checks each file the parser accepts against the schema; returns how many were checked and
/// how many the parser refused (those are the repository's examples of errors).
fn check(
    paths: &[PathBuf],
    validator: &jsonschema::Validator,
    read: impl Fn(&Path, &[u8]) -> Option<Value>,
    problems: &mut Vec<String>,
) -> (usize, usize) {
    let (mut checked, mut refused) = (0, 0);
    for path in paths {
        let bytes = std::fs::read(path).unwrap();
        let Some(value) = read(path, &bytes) else {
            refused += 1;
            continue;
        };
        checked += 1;
        for error in errors(validator, &value) {
            problems.push(format!("{}: {error}", path.display()));
        }
    }
    (checked, refused)
}

#[test]
fn the_repository_validates() {
    use proposal_eval::__internal::fixture::FixtureFile;
    use proposal_eval::__internal::recording::Recording;
    use proposal_eval::config::SuiteConfig;
    let files = files();
    let mut problems = Vec::new();
    let fixtures = check(
        &files.fixtures,
        &validator("fixture.json"),
        |path, bytes| {
            FixtureFile::parse(bytes, path).ok()?;
            serde_json::from_slice(bytes).ok()
        },
        &mut problems,
    );
    let configs = check(
        &files.configs,
        &validator("config.json"),
        |path, bytes| {
            let text = std::str::from_utf8(bytes).ok()?;
            SuiteConfig::from_toml_str(text, path).ok()?;
            toml::from_str(text).ok()
        },
        &mut problems,
    );
    let recordings = check(
        &files.recordings,
        &validator("recording.json"),
        |path, bytes| {
            Recording::parse(bytes, path).ok()?;
            serde_json::from_slice(bytes).ok()
        },
        &mut problems,
    );
    assert!(
        problems.is_empty(),
        "files the parsers accept but the schemas refuse:\n{}",
        problems.join("\n")
    );
    eprintln!(
        "validated (checked, refused by the parser): fixtures {fixtures:?}, configs {configs:?}, recordings {recordings:?}"
    );
    // The repository has many of each; a search that finds none has broken.
    assert!(fixtures.0 > 100, "fixtures checked: {fixtures:?}");
    assert!(configs.0 > 10, "configs checked: {configs:?}");
    assert!(recordings.0 > 50, "recordings checked: {recordings:?}");
}

/// The suggestion records that docs/reference/drafts.md shows (its last line is not JSON on
/// purpose) are draft input.
#[test]
fn the_drafts_page_validates() {
    let page = std::fs::read_to_string(repository().join("docs/reference/drafts.md")).unwrap();
    let validator = validator("draft-input.json");
    let mut records = 0;
    for line in page.lines().filter(|l| l.starts_with("{\"suggestion_id\"")) {
        let record: Value = serde_json::from_str(line).unwrap();
        assert_eq!(errors(&validator, &record), Vec::<String>::new(), "{line}");
        records += 1;
    }
    assert!(records >= 4, "records found: {records}");
    let no_id = serde_json::json!({ "type": "eval" });
    assert_eq!(
        errors(&validator, &no_id),
        ["at ``: \"suggestion_id\" is a required property"]
    );
}

#[test]
fn an_unknown_key_fails() {
    let fixture = validator("fixture.json");
    let good = serde_json::json!({
        "$schema": "../../schemas/fixture.json",
        "description": "Raise the payment amount",
        "input": { "message": "Please change my payment to 120 EUR" },
        "expectedDataProposal": [{ "changeType": "change", "newValue": 120 }],
        "ignorePaths": ["metadata.*"],
        "status": "active",
    });
    assert_eq!(errors(&fixture, &good), Vec::<String>::new());
    let mut typo = good.clone();
    typo["expcted"] = serde_json::json!([]);
    assert_eq!(
        errors(&fixture, &typo),
        ["at ``: Additional properties are not allowed ('expcted' was unexpected)"]
    );
    let mut status = good;
    status["status"] = "paused".into();
    assert_eq!(errors(&fixture, &status).len(), 1, "{status}");

    let config = validator("config.json");
    let typo: Value = toml::from_str(
        "[strict]\nignore_path = [\"a\"]\n[[field_accuracy.fields]]\npath = \"x\"\n",
    )
    .unwrap();
    assert_eq!(
        errors(&config, &typo),
        ["at `/strict`: Additional properties are not allowed ('ignore_path' was unexpected)"]
    );
}
