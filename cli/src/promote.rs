//! `cargo proposal-eval promote`: turns a completed draft into an active case.

use crate::args::{flag_value, UsageError};
use crate::files::{display, pretty_json, write_atomic};
use crate::out::{out, outln};
use crate::status::cargo_test;
use chrono::{SubsecRound, Utc};
use lexopt::{Arg, ValueExt};
use proposal_eval::__internal::draft::{Draft, EditSource};
use proposal_eval::__internal::status::{State, SuiteStatus};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// `promote --help`.
pub const HELP: &str = "\
Promote a drafted eval case to an active case.

Usage: cargo proposal-eval promote ID [--suite DIR]

ID is the draft's eval_test_id (eval_<suggestion_id>) or its suggestion id. The draft is looked
for in every *.json file under DIR, every suite below it included (default: the current folder,
such as the crate root; recordings/, target/ and hidden folders are skipped).

The draft must be complete: it needs an `expected` key (the proposals a correct reply
produces) or a rubric (`rubric`, or non-empty `draft.assertions`: statements graded by the
suite's [judge] model). Promoting sets `status` to
`active`, `draft.edit_source` to `human` and `draft.updated_at` to now; everything else, including
the `draft` lineage, stays.

The file stays where it is (e.g. drafts/eval_<id>.json), so the test's name and its recording
path do not change, and `draft` will never overwrite it (edit_source is `human`). Move it by hand
if you prefer another place; `draft` still recognizes it by its suggestion id.

Options:
  --suite DIR               Where to look (default: .)
  -h, --help                Print this help

Exit status: 0 when promoted (or already active), 1 when the draft is missing, ambiguous,
invalid or incomplete, 2 on a usage error.
";

/// Parsed `promote` options.
#[derive(Debug)]
pub struct Options {
    /// eval_test_id or suggestion id.
    pub id: String,
    /// `--suite`.
    pub suite: PathBuf,
}

/// Parses the arguments after `promote`; `Ok(None)` means `--help` was printed.
pub fn parse(mut parser: lexopt::Parser) -> Result<Option<Options>, UsageError> {
    let (mut id, mut suite) = (None, None);
    while let Some(arg) = parser.next()? {
        match arg {
            Arg::Short('h') | Arg::Long("help") => {
                out!("{HELP}");
                return Ok(None);
            }
            Arg::Long("suite") => suite = Some(PathBuf::from(flag_value(&mut parser, "--suite")?)),
            Arg::Value(p) if id.is_none() => id = Some(p.string()?),
            Arg::Value(p) => {
                return Err(UsageError(format!(
                    "unexpected argument {p:?}: promote takes one ID"
                )))
            }
            other => return Err(other.unexpected().into()),
        }
    }
    let id =
        id.ok_or_else(|| UsageError("missing ID (an eval_test_id or a suggestion id)".into()))?;
    let suite = suite.unwrap_or_else(|| PathBuf::from("."));
    if !suite.is_dir() {
        return Err(UsageError(format!(
            "--suite {}: no such folder",
            suite.display()
        )));
    }
    Ok(Some(Options { id, suite }))
}

/// Runs `promote`; returns the exit code, or the message of a refusal (exit 1).
pub fn run(options: Options) -> Result<i32, String> {
    let id = &options.id;
    let mut matches = Vec::new();
    let files = candidates(&options.suite);
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        let Ok(value) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        let hit = value.pointer("/draft/eval_test_id").and_then(Value::as_str) == Some(id)
            || value
                .pointer("/draft/source/suggestion_id")
                .and_then(Value::as_str)
                == Some(id);
        if hit {
            matches.push((file.clone(), value));
        }
    }
    let (path, mut fixture) = match matches.len() {
        0 => {
            return Err(format!(
                "no drafted case with id {id:?} under {} (looked at draft.eval_test_id and \
                 draft.source.suggestion_id in {} fixture file(s)); `cargo proposal-eval draft` \
                 writes drafts to <suite>/drafts/",
                display(&options.suite),
                files.len()
            ))
        }
        1 => matches.pop().expect("one match"),
        _ => {
            let list: Vec<String> = matches.iter().map(|(p, _)| display(p)).collect();
            return Err(format!(
                "id {id:?} matches {} drafted cases: {}; give --suite to pick one",
                list.len(),
                list.join(", ")
            ));
        }
    };
    let shown = display(&path);
    let mut draft = match Draft::from_fixture(&fixture) {
        Ok(Some(d)) => d,
        Ok(None) => unreachable!("matched on the draft key"),
        Err(e) => return Err(format!("{shown}: invalid `draft` key: {e}")),
    };
    let expected = fixture
        .get("expected")
        .or_else(|| fixture.get("expectedDataProposal"));
    // A rubric (its own, or the draft's assertions) is a check of its own, graded by the judge.
    let rubric = fixture.get("rubric").is_some_and(|r| !r.is_null())
        || !draft.assertions.required.is_empty()
        || !draft.assertions.forbidden.is_empty();
    if expected.is_none_or_null() && !rubric {
        return Err(format!(
            "{shown} is not complete: it has no `expected` and no rubric. Add the proposals a \
             correct reply produces (`expected`), or statements it must and must not satisfy \
             (`rubric`, or `draft.assertions`, graded by the [judge] model), then run \
             `cargo proposal-eval promote {id}` again"
        ));
    }
    let status = fixture
        .get("status")
        .and_then(Value::as_str)
        .unwrap_or("active");
    if status == "active" && draft.edit_source == EditSource::Human {
        outln!(
            "{} is already active: {shown} (nothing changed)",
            draft.eval_test_id
        );
        return Ok(0);
    }
    draft.edit_source = EditSource::Human;
    draft.updated_at = Utc::now().trunc_subsecs(0);
    fixture["status"] = json!("active");
    fixture["draft"] = serde_json::to_value(&draft).expect("a draft always serializes");
    let text = pretty_json(&fixture);
    // The promoted case must be one the tests accept: checked by the runtime's own parser.
    proposal_eval::__internal::fixture::FixtureFile::parse(text.as_bytes(), &shown).map_err(
        |e| {
            format!(
                "{shown} would not be a valid case once promoted ({e}); fix it and promote again"
            )
        },
    )?;
    write_atomic(&path, text.as_bytes()).map_err(|e| format!("writing {shown}: {e}"))?;
    outln!(
        "promoted {}: {shown} is now an active case (edit_source = \"human\"); {}",
        draft.eval_test_id,
        next_step(&path, &options.suite)
    );
    Ok(0)
}

/// What is left once the case in `path` is active: nothing when its recording is fresh (it was
/// recorded as a draft with `--include-ignored`), else recording this case alone.
fn next_step(path: &Path, searched: &Path) -> String {
    let generic = "record it: `RECORD=1 cargo test`".to_string();
    let Ok(fixture) = path.canonicalize() else {
        return generic;
    };
    let found = crate::suites::find(&[searched.to_path_buf()]).unwrap_or_default();
    let Some(suite) = found
        .iter()
        .filter(|suite| fixture.starts_with(&suite.dir))
        .max_by_key(|suite| suite.dir.components().count())
    else {
        return generic;
    };
    let Ok(status) = SuiteStatus::check_with(&suite.crate_root, &suite.dir, None, None) else {
        return generic;
    };
    let case = status.cases.iter().find(|case| {
        case.fixture
            .as_ref()
            .and_then(|f| f.canonicalize().ok())
            .is_some_and(|f| f == fixture)
    });
    let Some((case, test)) = case.and_then(|case| Some((case, case.test.as_deref()?))) else {
        return generic;
    };
    let dirs = [suite.dir.as_path()];
    match case.state {
        State::Fresh => format!(
            "its recording is fresh, so it is ready: `{}` runs it",
            cargo_test("", &suite.crate_root, &dirs, Some(test))
        ),
        _ => format!(
            "record it: `{}`",
            cargo_test("RECORD=1", &suite.crate_root, &dirs, Some(test))
        ),
    }
}

/// Every `*.json` file below `root` that may be a fixture: in any suite, so that `promote` finds
/// a draft from the crate root, whose suites each hold a `proposal-eval.toml` (the front ends'
/// rule would skip them as nested suites). Recordings, `target/` and hidden entries are not.
fn candidates(root: &std::path::Path) -> Vec<PathBuf> {
    let skipped = |entry: &walkdir::DirEntry| {
        let name = entry.file_name().to_string_lossy();
        entry.depth() > 0
            && (name.starts_with('.')
                || (entry.file_type().is_dir() && matches!(&*name, "target" | "recordings")))
    };
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(root)
        .into_iter()
        .filter_entry(|e| !skipped(e))
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "json"))
        .map(walkdir::DirEntry::into_path)
        .collect();
    files.sort();
    files
}

trait NoneOrNull {
    fn is_none_or_null(&self) -> bool;
}

impl NoneOrNull for Option<&Value> {
    fn is_none_or_null(&self) -> bool {
        matches!(self, None | Some(Value::Null))
    }
}
