//! `cargo proposal-eval migrate`: rewrites fresh recordings of an older format in the current
//! one, without calling the model.

use crate::args::{flag_value, UsageError};
use crate::out::{out, outln};
use crate::status::{display, Layout};
use lexopt::Arg;
use proposal_eval::__internal::recording::FORMAT;
use proposal_eval::__internal::status::{self, Migration};
use std::path::PathBuf;

/// `migrate --help`.
pub const HELP: &str = "\
Rewrite fresh recordings of an older format in the current one, without calling the model.

Usage: cargo proposal-eval migrate [PATH...] [--check] [--config FILE] [--recordings DIR]

PATH is found as for `cargo proposal-eval status` (default: the current folder).

A format-1 recording depended on the whole fixture file; the current format (2) depends on
the case's input, its sources and the suite's sources, so editing `expected` or
`description` no longer makes it stale. A fresh format-1 recording is rewritten with the
same interactions and times. A stale one is left as it is and listed: re-record it
(`RECORD=stale cargo test`), which writes the current format. A fresh recording with a judge
part in format 4 is rewritten as format 5: each judge call keeps its request's SHA-256
instead of the request, and the judge key is the hash of its recorded parts (its verdicts
stay fresh exactly when they were). Running migrate again changes nothing.

Options:
  --check     Write nothing: list what would be migrated, and exit 1 if anything would be
  --config FILE, --recordings DIR
              As for `status`: a suite config or recordings folder outside the defaults
  -h, --help  Print this help

Exit status: 0, 1 when a suite cannot be read or a file cannot be written (or, with --check,
when a recording would be migrated), 2 on a usage error.
";

/// Parsed `migrate` options.
#[derive(Debug)]
pub struct Options {
    /// Where to look.
    pub paths: Vec<PathBuf>,
    /// `--check`: a dry run.
    pub check: bool,
    /// `--config` and `--recordings`.
    pub layout: Layout,
}

/// Parses the arguments after `migrate`; `Ok(None)` means `--help` was printed.
pub fn parse(mut parser: lexopt::Parser) -> Result<Option<Options>, UsageError> {
    let mut options = Options {
        paths: Vec::new(),
        check: false,
        layout: Layout::default(),
    };
    while let Some(arg) = parser.next()? {
        match arg {
            Arg::Short('h') | Arg::Long("help") => {
                out!("{HELP}");
                return Ok(None);
            }
            Arg::Long("check") => options.check = true,
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
    crate::status::check_paths(&options.paths)?;
    Ok(Some(options))
}

/// Runs `migrate`; returns the exit code.
pub fn run(options: Options) -> Result<i32, String> {
    let found = crate::suites::find(&options.paths)?;
    if (options.layout.config.is_some() || options.layout.recordings.is_some()) && found.len() > 1 {
        return Err(format!(
            "--config and --recordings describe one suite, and {} were found; name the suite's folder",
            found.len()
        ));
    }
    let (mut migrated, mut current, mut stale, mut unreadable) = (0, 0, 0, 0);
    let verb = if options.check {
        "would migrate"
    } else {
        "migrated"
    };
    for suite in &found {
        let done = status::migrate(
            &suite.crate_root,
            &suite.dir,
            options.layout.config.as_deref(),
            options.layout.recordings.as_deref(),
            !options.check,
        )
        .map_err(|e| format!("{}: {e}", display(&suite.dir)))?;
        for recording in done {
            let file = display(&recording.recording);
            match recording.migration {
                Migration::Migrated { from, to } => {
                    migrated += 1;
                    outln!("{verb:<13} {file} (format {from} to {to})");
                }
                Migration::Current => current += 1,
                Migration::Stale(changes) => {
                    stale += 1;
                    let what: Vec<String> = changes.iter().map(ToString::to_string).collect();
                    outln!("{:<13} {file}: {}; left as it is", "stale", what.join("; "));
                }
                Migration::Unreadable(why) => {
                    unreadable += 1;
                    outln!("{:<13} {file}: {why}", "unreadable");
                }
            }
        }
    }
    outln!(
        "{migrated} {verb}, {current} already current, {stale} stale (left as they are), {unreadable} unreadable"
    );
    if stale > 0 {
        outln!("re-record the stale ones (that writes format {FORMAT}): `RECORD=stale cargo test`");
    }
    Ok(if options.check && migrated > 0 { 1 } else { 0 })
}
