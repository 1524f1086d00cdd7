//! `cargo proposal-eval status`: every case's recording, fresh, stale, missing, orphaned or
//! unreadable. The states come from the runtime's `status` module, the runtime's own staleness logic.

use crate::args::{flag_value, UsageError};
use crate::files;
use crate::out::{errln, out, outln};
use lexopt::{Arg, ValueExt};
use proposal_eval::__internal::recording::SourceChange;
use proposal_eval::__internal::status::{State, SuiteStatus};
use serde_json::json;
use std::path::{Path, PathBuf};

/// A path for messages, relative to the current folder (`.` for the folder itself).
pub fn display(path: &Path) -> String {
    match files::display(path) {
        shown if shown.is_empty() => ".".into(),
        shown => shown,
    }
}

/// `status --help`.
pub const HELP: &str = "\
Show the state of every case's recording.

Usage: cargo proposal-eval status [PATH...] [--check] [--format text|json]
                                 [--config FILE] [--recordings DIR]

Each PATH is a suite folder, or a folder searched for suites. Default: the current folder.
Below it, a suite is a folder that
  - holds a proposal-eval.toml, unless it lies inside another suite (then the file is a
    nested config of that suite, whose cases stay in it; such a PATH stands for that suite), or
  - holds a recordings/ folder with a recording in it, or
  - is named by `#[proposal_eval(fixtures = \"...\")]` or `Harness::new(\"...\")` (a string
    literal, relative to the crate root) in a .rs file under a crate's tests/ folder.
target/, recordings/ and hidden folders are not searched. A PATH holding no suite is a suite.
Paths in sources and recordings are relative to the suite's crate root: the crate whose tests
name it, else the nearest folder at or above it with a Cargo.toml.

States:
  fresh         the recording was made from the case's current sources
  stale         a source changed since it was recorded (the tests refuse it); which one is shown
  no recording  none yet: fine for a case that never calls the model
  orphaned      a recording whose fixture is gone (remove with `cargo proposal-eval prune`)
  unreadable    the recording, the fixture or a source cannot be read, or it holds what looks
                like a credential; why is shown
  pending       a second line for a case with a pending recording (<case>.pending.json, made
                by RECORD=review) waiting for `cargo proposal-eval review`, accept or reject

status sees the recordings' sources (the case input, source files), not your code: a change in
the code or in a prompt built by code shows as fresh here and fails the replay with the request
that differs; `RECORD=stale cargo test` re-records exactly those cases.

Options:
  --check          Exit 1 when a case that runs has a stale or unreadable recording, a
                   recording is orphaned, or a case has a pending recording (draft cases'
                   stale or unreadable recordings are shown but never fail the check)
  --format FORMAT  text (default) or json
  --config FILE    The suite config, crate-relative, for suites whose test names one
                   (`config = ...`, `Harness::config`); default <suite>/proposal-eval.toml
  --recordings DIR The recordings folder, crate-relative (`recordings = ...`,
                   `Harness::recordings`); default <suite>/recordings
  -h, --help       Print this help

Exit status: 0, or 1 when --check fails or a suite cannot be read, 2 on a usage error.
";

/// Parsed `status` options.
#[derive(Debug)]
pub struct Options {
    /// Where to look.
    pub paths: Vec<PathBuf>,
    /// `--check`.
    pub check: bool,
    /// `--format json`.
    pub json: bool,
    /// `--config` and `--recordings`.
    pub layout: Layout,
}

/// Where a suite's config and recordings are, when not in the default places.
#[derive(Debug, Default)]
pub struct Layout {
    /// `--config FILE`, crate-relative.
    pub config: Option<PathBuf>,
    /// `--recordings DIR`, crate-relative.
    pub recordings: Option<PathBuf>,
}

/// Parses the arguments after `status`; `Ok(None)` means `--help` was printed.
pub fn parse(mut parser: lexopt::Parser) -> Result<Option<Options>, UsageError> {
    let mut options = Options {
        paths: Vec::new(),
        check: false,
        json: false,
        layout: Layout::default(),
    };
    while let Some(arg) = parser.next()? {
        match arg {
            Arg::Short('h') | Arg::Long("help") => {
                out!("{HELP}");
                return Ok(None);
            }
            Arg::Long("check") => options.check = true,
            Arg::Long("format") => match flag_value(&mut parser, "--format")?.string()?.as_str() {
                "json" => options.json = true,
                "text" => options.json = false,
                other => {
                    return Err(UsageError(format!(
                        "--format {other:?}: expected `text` or `json`"
                    )))
                }
            },
            Arg::Long("config") => {
                options.layout.config = Some(flag_value(&mut parser, "--config")?.into())
            }
            Arg::Long("recordings") => {
                options.layout.recordings = Some(flag_value(&mut parser, "--recordings")?.into())
            }
            Arg::Value(path) => options.paths.push(path.into()),
            other => return Err(other.unexpected().into()),
        }
    }
    check_paths(&options.paths)?;
    Ok(Some(options))
}

/// Refuses a PATH that does not exist (a usage error).
pub fn check_paths(paths: &[PathBuf]) -> Result<(), UsageError> {
    for path in paths {
        if !path.is_dir() {
            return Err(UsageError(format!("{}: no such folder", path.display())));
        }
    }
    Ok(())
}

/// Checks every suite found.
pub fn statuses(paths: &[PathBuf], layout: &Layout) -> Result<Vec<SuiteStatus>, String> {
    let found = crate::suites::find(paths)?;
    if (layout.config.is_some() || layout.recordings.is_some()) && found.len() > 1 {
        // Another suite's recordings would all look orphaned (and prune would delete them).
        return Err(format!(
            "--config and --recordings describe one suite, and {} were found; name the suite's folder",
            found.len()
        ));
    }
    found
        .into_iter()
        .map(|found| {
            SuiteStatus::check_with(
                &found.crate_root,
                &found.dir,
                layout.config.as_deref(),
                layout.recordings.as_deref(),
            )
            .map_err(|e| format!("cannot read the suite {}: {e}", display(&found.dir)))
        })
        .collect()
}

/// Counts per state.
#[derive(Default)]
struct Counts {
    cases: usize,
    fresh: usize,
    stale: usize,
    no_recording: usize,
    orphaned: usize,
    unreadable: usize,
    pending: usize,
    failing: usize,
}

fn count(suites: &[SuiteStatus]) -> Counts {
    let mut counts = Counts::default();
    for suite in suites {
        if suite.config_error.is_some() {
            counts.unreadable += 1;
            counts.failing += 1;
        }
        for case in &suite.cases {
            match case.state {
                State::Fresh => counts.fresh += 1,
                State::Stale(_) => counts.stale += 1,
                State::NoRecording => counts.no_recording += 1,
                State::Orphaned => counts.orphaned += 1,
                State::Unreadable(_) => counts.unreadable += 1,
            }
            if case.test.is_some() {
                counts.cases += 1;
            }
            if case.pending.is_some() {
                counts.pending += 1;
            }
            if case.fails_check(suite.validation) {
                counts.failing += 1;
            }
        }
    }
    counts
}

/// Runs `status`; returns the exit code.
pub fn run(options: Options) -> Result<i32, String> {
    let suites = statuses(&options.paths, &options.layout)?;
    let counts = count(&suites);
    if options.json {
        let value = json!({
            "suites": suites.iter().map(SuiteStatus::to_json).collect::<Vec<_>>(),
            "summary": {
                "cases": counts.cases,
                "fresh": counts.fresh,
                "stale": counts.stale,
                "no_recording": counts.no_recording,
                "orphaned": counts.orphaned,
                "unreadable": counts.unreadable,
                "pending": counts.pending,
                "failing_check": counts.failing,
            },
        });
        outln!(
            "{}",
            serde_json::to_string_pretty(&value).map_err(|e| e.to_string())?
        );
    } else {
        for suite in &suites {
            print_suite(suite);
        }
        outln!(
            "{} case(s): {} fresh, {} stale, {} no recording, {} orphaned, {} unreadable{}",
            counts.cases,
            counts.fresh,
            counts.stale,
            counts.no_recording,
            counts.orphaned,
            counts.unreadable,
            if counts.pending > 0 {
                format!("; {} pending review", counts.pending)
            } else {
                String::new()
            }
        );
    }
    if options.check && counts.failing > 0 {
        errln!("error: status --check: {} problem(s).", counts.failing);
        for hint in hints(&suites, &options, true) {
            errln!("  {hint}");
        }
        return Ok(1);
    }
    if !options.json {
        for hint in hints(&suites, &options, false) {
            outln!("{hint}");
        }
    }
    Ok(0)
}

/// What to run about the stale, orphaned and unreadable recordings found (with `check`, only
/// those that fail the check): commands that work when pasted into the shell `status` ran in.
fn hints(suites: &[SuiteStatus], options: &Options, check: bool) -> Vec<String> {
    let suites_with = |wanted: fn(&State) -> bool| -> Vec<&SuiteStatus> {
        suites
            .iter()
            .filter(|suite| {
                suite.cases.iter().any(|case| {
                    wanted(&case.state) && (!check || case.fails_check(suite.validation))
                })
            })
            .collect()
    };
    let mut hints = Vec::new();
    let mut crates: Vec<&Path> = Vec::new();
    let stale = suites_with(|s| matches!(s, State::Stale(_)));
    for suite in &stale {
        if !crates.contains(&suite.crate_root.as_path()) {
            crates.push(&suite.crate_root);
        }
    }
    for crate_root in crates {
        let suites: Vec<&SuiteStatus> = stale
            .iter()
            .copied()
            .filter(|suite| suite.crate_root == crate_root)
            .collect();
        let tests: Vec<&str> = suites
            .iter()
            .flat_map(|suite| &suite.cases)
            .filter(|case| matches!(case.state, State::Stale(_)))
            .filter_map(|case| case.test.as_deref())
            .collect();
        hints.push(format!(
            "re-record the stale recordings: `{}`",
            record_command(crate_root, &suites, &tests)
        ));
    }
    if suites
        .iter()
        .any(|suite| suite.cases.iter().any(|case| case.pending.is_some()))
    {
        hints.push(format!(
            "review the pending recordings (accept or reject each): `{}`",
            command("review", &options.paths, &options.layout, &[])
        ));
    }
    if !suites_with(|s| *s == State::Orphaned).is_empty() {
        hints.push(format!(
            "remove the orphaned recordings: `{}`",
            command("prune", &options.paths, &options.layout, &["--yes"])
        ));
    }
    let unreadable = suites_with(|s| matches!(s, State::Unreadable(_)));
    if check && (!unreadable.is_empty() || suites.iter().any(|s| s.config_error.is_some())) {
        hints.push("fix or delete the unreadable files shown above".into());
    }
    hints
}

/// `cargo proposal-eval COMMAND PATH... [--config FILE] [--recordings DIR] EXTRA...`: the
/// suites this run was given, for a hint that works when pasted; each word quoted for a shell.
pub fn command(command: &str, paths: &[PathBuf], layout: &Layout, extra: &[&str]) -> String {
    let mut words: Vec<String> = vec!["cargo".into(), "proposal-eval".into(), command.into()];
    let mut flags: Vec<String> = Vec::new();
    for (flag, value) in [
        ("--config", &layout.config),
        ("--recordings", &layout.recordings),
    ] {
        if let Some(value) = value {
            let value = value.to_string_lossy();
            // A value that looks like a flag is taken only in the `--flag=value` form.
            if value.starts_with('-') {
                flags.push(format!("{flag}={value}"));
            } else {
                flags.extend([flag.to_string(), value.into_owned()]);
            }
        }
    }
    flags.extend(extra.iter().map(|e| e.to_string()));
    let paths: Vec<String> = paths
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if paths.iter().any(|p| p.starts_with('-')) {
        // After `--` every word is a PATH: the flags go first.
        words.extend(flags);
        words.push("--".into());
        words.extend(paths);
    } else {
        words.extend(paths);
        words.extend(flags);
    }
    shell_words::join(words)
}

/// `RECORD=stale cargo test` for the stale cases of `suites` (`tests`: their test names), as
/// [`cargo_test`] writes it.
fn record_command(crate_root: &Path, suites: &[&SuiteStatus], tests: &[&str]) -> String {
    let dirs: Vec<&Path> = suites.iter().map(|suite| suite.dir.as_path()).collect();
    let one = match tests {
        [test] => Some(*test),
        _ => None,
    };
    cargo_test("RECORD=stale", crate_root, &dirs, one)
}

/// `ENV cargo test` that runs the suites `suite_dirs` of the crate at `crate_root`: with
/// `--manifest-path` unless cargo would pick that crate from the current folder by itself, and
/// `--test NAME` for each test target whose code names one of the suites (so that the cases of
/// other targets are left alone; the whole crate when a suite is named by no target), and
/// `-- TEST --exact` for one case.
pub fn cargo_test(env: &str, crate_root: &Path, suite_dirs: &[&Path], one: Option<&str>) -> String {
    let here = std::env::current_dir().ok().and_then(|cwd| {
        cwd.ancestors()
            .find(|a| a.join("Cargo.toml").is_file())
            .and_then(|a| a.canonicalize().ok())
    });
    let mut words: Vec<String> = vec!["cargo".into(), "test".into()];
    if here.as_deref() != Some(crate_root) {
        words.push("--manifest-path".into());
        words.push(display(&crate_root.join("Cargo.toml")));
    }
    let targets: Vec<Vec<String>> = suite_dirs
        .iter()
        .map(|dir| crate::suites::test_targets(crate_root, dir))
        .collect();
    if targets.iter().all(|names| !names.is_empty()) {
        let mut names: Vec<String> = targets.into_iter().flatten().collect();
        names.sort();
        names.dedup();
        for name in names {
            words.push("--test".into());
            words.push(name);
        }
    }
    if let Some(test) = one {
        words.extend(["--".into(), test.to_string(), "--exact".into()]);
    }
    // The environment assignment stays a word of its own, unquoted.
    format!("{env} {}", shell_words::join(words))
        .trim_start()
        .to_string()
}

fn print_suite(suite: &SuiteStatus) {
    outln!(
        "{} ({}, crate {})",
        suite.name,
        display(&suite.dir),
        display(&suite.crate_root)
    );
    if let Some(error) = &suite.config_error {
        outln!("  {:<13} {error}", "unreadable");
    }
    for case in &suite.cases {
        let draft = match case.status {
            Some(status) if status != proposal_eval::__internal::fixture::Status::Active => {
                format!(
                    " ({})",
                    serde_json::to_value(status)
                        .unwrap_or_default()
                        .as_str()
                        .unwrap_or("inactive")
                )
            }
            _ => String::new(),
        };
        let label = case.state.label();
        match &case.state {
            State::Fresh | State::NoRecording => outln!("  {label:<13} {}{draft}", case.case),
            State::Orphaned => outln!(
                "  {label:<13} {} (no fixture {}.json)",
                suite.relative(&case.recording),
                case.case
            ),
            State::Unreadable(why) => outln!("  {label:<13} {}{draft}: {why}", case.case),
            State::Stale(changes) => {
                let what: Vec<String> = changes.iter().map(describe).collect();
                outln!("  {label:<13} {}{draft}: {}", case.case, what.join("; "));
            }
        }
        if let Some(file) = &case.pending {
            outln!(
                "  {:<13} {}: {}",
                "pending",
                case.case,
                suite.relative(file)
            );
        }
    }
}

/// One source change, with short hashes.
fn describe(change: &SourceChange) -> String {
    let short = |h: &str| h.chars().take(12).collect::<String>();
    match change {
        SourceChange::Changed {
            path,
            recorded,
            current,
        } => format!(
            "{path} changed (recorded {}, now {})",
            short(recorded),
            short(current)
        ),
        SourceChange::Added { path } => format!("{path} is a new source"),
        SourceChange::Removed { path } => format!("{path} is no longer a source"),
        SourceChange::Input { recorded, current } => format!(
            "the input changed (recorded {}, now {})",
            short(recorded),
            short(current)
        ),
    }
}
