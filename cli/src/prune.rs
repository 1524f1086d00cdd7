//! `cargo proposal-eval prune`: lists recordings whose fixture is gone, and deletes them with
//! `--yes`.

use crate::args::{flag_value, UsageError};
use crate::out::{errln, out, outln};
use crate::status::display;
use lexopt::Arg;
use proposal_eval::__internal::status::State;
use std::path::{Path, PathBuf};

/// `prune --help`.
pub const HELP: &str = "\
List orphaned recordings (recordings whose fixture is gone); delete them with --yes.

Usage: cargo proposal-eval prune [PATH...] [--yes] [--config FILE] [--recordings DIR]

PATH is found as for `cargo proposal-eval status` (default: the current folder): a suite
folder, or a folder searched for suites, which need no proposal-eval.toml (see
`cargo proposal-eval status --help`).

Only recordings are ever deleted: files below the recordings folder that parse as
recordings and whose `case` is their own path there, as every recording is written.
A fixture, a config file, another suite's recording or any other file never is,
whatever --recordings names.

Options:
  --yes       Delete the orphaned recordings (and folders they leave empty)
  --config FILE, --recordings DIR
              As for `status`: a suite config or recordings folder outside the defaults
  -h, --help  Print this help

Exit status: 0, 1 when a suite cannot be read or a file cannot be deleted, 2 on a usage error.
";

/// Parsed `prune` options.
#[derive(Debug)]
pub struct Options {
    /// Where to look.
    pub paths: Vec<PathBuf>,
    /// `--yes`.
    pub yes: bool,
    /// `--config` and `--recordings`.
    pub layout: crate::status::Layout,
}

/// Parses the arguments after `prune`; `Ok(None)` means `--help` was printed.
pub fn parse(mut parser: lexopt::Parser) -> Result<Option<Options>, UsageError> {
    let mut options = Options {
        paths: Vec::new(),
        yes: false,
        layout: crate::status::Layout::default(),
    };
    while let Some(arg) = parser.next()? {
        match arg {
            Arg::Short('h') | Arg::Long("help") => {
                out!("{HELP}");
                return Ok(None);
            }
            Arg::Short('y') | Arg::Long("yes") => options.yes = true,
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

/// Runs `prune`; returns the exit code.
pub fn run(options: Options) -> Result<i32, String> {
    let suites = crate::status::statuses(&options.paths, &options.layout)?;
    let mut orphans: Vec<(PathBuf, &Path)> = Vec::new();
    for suite in &suites {
        for case in &suite.cases {
            if case.state == State::Orphaned {
                orphans.push((case.recording.clone(), &suite.recordings));
            }
        }
    }
    if orphans.is_empty() {
        outln!("no orphaned recordings");
        return Ok(0);
    }
    if !options.yes {
        outln!("{} orphaned recording(s):", orphans.len());
        for (file, _) in &orphans {
            outln!("  {}", display(file));
        }
        outln!(
            "run `{}` to delete them",
            crate::status::command("prune", &options.paths, &options.layout, &["--yes"])
        );
        return Ok(0);
    }
    let mut failed = 0;
    for (file, root) in &orphans {
        match std::fs::remove_file(file) {
            Ok(()) => {
                outln!("removed {}", display(file));
                remove_empty_parents(file, root);
            }
            Err(e) => {
                errln!("error: cannot remove {}: {e}", display(file));
                failed += 1;
            }
        }
    }
    outln!("removed {} orphaned recording(s)", orphans.len() - failed);
    Ok(if failed > 0 { 1 } else { 0 })
}

/// Removes the folders between `file` and `root` (exclusive) that are now empty.
fn remove_empty_parents(file: &Path, root: &Path) {
    let mut dir = file.parent();
    while let Some(d) = dir {
        if d == root || !d.starts_with(root) {
            break;
        }
        // remove_dir fails on a folder that is not empty, which is what stops the walk.
        if std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
}
