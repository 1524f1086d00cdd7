//! `cargo proposal-eval`: recording status, pruning, run reports, and eval cases drafted from
//! production failures.
//!
//! Cargo runs a subcommand `cargo proposal-eval ARGS` as `cargo-proposal-eval proposal-eval ARGS`;
//! the binary also works when run directly (`cargo-proposal-eval ARGS`).

mod args;
mod compare;
mod comparison;
mod draft;
mod files;
mod generate;
mod judge;
mod junit;
mod migrate;
mod out;
mod promote;
mod prune;
mod report;
mod review;
mod runlog;
#[cfg(test)]
mod schemas;
mod status;
mod suggestion;
mod suites;

use args::UsageError;
use out::{err, errln, out, outln};
use std::ffi::OsString;
use std::process::ExitCode;

const HELP: &str = "\
Eval workflow for proposal-eval suites.

Usage: cargo proposal-eval <COMMAND> [OPTIONS]

Commands:
  draft     Draft eval cases from production failure suggestions
  promote   Turn a completed draft into an active case
  status    Show every case's recording: fresh, stale, no recording, orphaned, unreadable
  prune     List orphaned recordings; delete them with --yes
  report    Rebuild the run report (report.json, report.html) and summarize it
  compare   Compare a run report with a baseline; exit 1 on a regression
  migrate   Rewrite fresh recordings of an older format in the current one
  judge     Show how recorded rubric verdicts agree with human labels (judge-labels.jsonl)
  review    Show the pending recordings (RECORD=review) with both verdicts; accept or reject each
  accept    Replace committed recordings by their pending ones
  reject    Delete pending recordings

Options:
  -h, --help     Print help (also `cargo proposal-eval <COMMAND> --help`)
  -V, --version  Print version
";

fn main() -> ExitCode {
    let mut argv: Vec<OsString> = std::env::args_os().skip(1).collect();
    if argv.first().is_some_and(|arg| arg == "proposal-eval") {
        argv.remove(0);
    }
    ExitCode::from(out::finish(run(argv)))
}

fn run(argv: Vec<OsString>) -> u8 {
    let mut argv = argv.into_iter();
    let Some(command) = argv.next() else {
        err!("{HELP}");
        return 2;
    };
    let command = command.to_string_lossy();
    let parser = lexopt::Parser::from_args(argv);
    let result: Result<Option<Result<i32, String>>, UsageError> = match command.as_ref() {
        "-h" | "--help" | "help" => {
            out!("{HELP}");
            return 0;
        }
        "-V" | "--version" => {
            outln!("cargo-proposal-eval {}", env!("CARGO_PKG_VERSION"));
            return 0;
        }
        "draft" => draft::parse(parser).map(|o| o.map(draft::run)),
        "promote" => promote::parse(parser).map(|o| o.map(promote::run)),
        "status" => status::parse(parser).map(|o| o.map(status::run)),
        "prune" => prune::parse(parser).map(|o| o.map(prune::run)),
        "report" => report::parse(parser).map(|o| o.map(report::run)),
        "compare" => compare::parse(parser).map(|o| o.map(compare::run)),
        "migrate" => migrate::parse(parser).map(|o| o.map(migrate::run)),
        "judge" => judge::parse(parser).map(|o| o.map(judge::run)),
        "review" => review::parse(review::Action::Review, parser).map(|o| o.map(review::run)),
        "accept" => review::parse(review::Action::Accept, parser).map(|o| o.map(review::run)),
        "reject" => review::parse(review::Action::Reject, parser).map(|o| o.map(review::run)),
        other => Err(UsageError(format!("unknown command {other:?}"))),
    };
    match result {
        Ok(None) => 0,
        Ok(Some(Ok(code))) => code as u8,
        Ok(Some(Err(message))) => {
            errln!("error: {message}");
            1
        }
        Err(UsageError(message)) => {
            let help = if matches!(
                command.as_ref(),
                "draft"
                    | "promote"
                    | "status"
                    | "prune"
                    | "report"
                    | "compare"
                    | "migrate"
                    | "judge"
                    | "review"
                    | "accept"
                    | "reject"
            ) {
                format!("cargo proposal-eval {command} --help")
            } else {
                "cargo proposal-eval --help".to_string()
            };
            errln!("error: {message}\n\nFor more information, run `{help}`.");
            2
        }
    }
}
