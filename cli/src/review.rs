//! `cargo proposal-eval review`, `accept` and `reject`: the pending recordings that
//! `RECORD=review` wrote, shown with each side's verdict, and committed or thrown away.

use crate::args::{flag_value, UsageError};
use crate::out::{errln, out, outln};
use crate::status::{display, Layout};
use lexopt::{Arg, ValueExt};
use proposal_eval::__internal::recording::SourceChange;
use proposal_eval::__internal::review::{
    AcceptError, Evaluated, Pending, PendingCase, Side, SuiteReview,
};
use std::io::{BufRead, IsTerminal};
use std::path::PathBuf;

/// `review --help`.
pub const REVIEW_HELP: &str = "\
Review the pending recordings that `RECORD=review cargo test` wrote.

Usage: cargo proposal-eval review [CASE...] [--path DIR]... [--config FILE] [--recordings DIR]

For each case with a pending recording (<case>.pending.json beside its recording), or for
each CASE named: the case, its verdict and score with the committed responses and with
the pending ones (both evaluated now, with the case's expected and the suite's config),
and a diff of the responses. On a terminal it then asks what to do:
  a  accept: the pending recording replaces the committed one
  r  reject: the pending recording is deleted
  s  skip: leave it pending
  q  quit: leave it and the rest pending
Elsewhere (a pipe, CI) it only shows them; use accept and reject there.

CASE is a test name as `cargo test` prints it (suite::path::case).

Options:
  --path DIR       Where to look for suites, as `cargo proposal-eval status PATH` (may be
                   given more than once; default: the current folder)
  --config FILE, --recordings DIR
                   As for `status`: a suite config or recordings folder outside the defaults
  -h, --help       Print this help

Exit status: 0, 1 when a suite or a pending recording cannot be read or a file cannot be
written, 2 on a usage error or an unknown CASE.
";

/// `accept --help`.
pub const ACCEPT_HELP: &str = "\
Accept pending recordings: each replaces its case's committed recording.

Usage: cargo proposal-eval accept (CASE... | --all) [--path DIR]... [--config FILE]
                                  [--recordings DIR]

A pending recording (<case>.pending.json, written by `RECORD=review cargo test`) is
written in place of <case>.json atomically (a crash leaves one or the other, never half
of either), then deleted. CASE is a test name as `cargo test` prints it
(suite::path::case); `cargo proposal-eval status` lists the pending ones.

Options:
  --all            Every pending recording found
  --path DIR       Where to look for suites (default: the current folder); as for `review`
  --config FILE, --recordings DIR
                   As for `status`
  -h, --help       Print this help

Exit status: 0, 1 when a file cannot be read or written, 2 on a usage error or an
unknown CASE (then nothing is accepted).
";

/// `reject --help`.
pub const REJECT_HELP: &str = "\
Reject pending recordings: each is deleted; the committed recording stays as it is.

Usage: cargo proposal-eval reject (CASE... | --all) [--path DIR]... [--config FILE]
                                  [--recordings DIR]

CASE is a test name as `cargo test` prints it (suite::path::case); `cargo proposal-eval
status` lists the pending ones.

Options:
  --all            Every pending recording found
  --path DIR       Where to look for suites (default: the current folder); as for `review`
  --config FILE, --recordings DIR
                   As for `status`
  -h, --help       Print this help

Exit status: 0, 1 when a file cannot be deleted, 2 on a usage error or an unknown CASE
(then nothing is rejected).
";

/// Which of the three commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// `review`.
    Review,
    /// `accept`.
    Accept,
    /// `reject`.
    Reject,
}

/// Parsed options of `review`, `accept` and `reject`.
#[derive(Debug)]
pub struct Options {
    action: Action,
    cases: Vec<String>,
    all: bool,
    paths: Vec<PathBuf>,
    layout: Layout,
}

/// Parses the arguments after the command; `Ok(None)` means `--help` was printed.
pub fn parse(action: Action, mut parser: lexopt::Parser) -> Result<Option<Options>, UsageError> {
    let mut options = Options {
        action,
        cases: Vec::new(),
        all: false,
        paths: Vec::new(),
        layout: Layout::default(),
    };
    while let Some(arg) = parser.next()? {
        match arg {
            Arg::Short('h') | Arg::Long("help") => {
                out!(
                    "{}",
                    match action {
                        Action::Review => REVIEW_HELP,
                        Action::Accept => ACCEPT_HELP,
                        Action::Reject => REJECT_HELP,
                    }
                );
                return Ok(None);
            }
            Arg::Long("all") if action != Action::Review => options.all = true,
            Arg::Long("path") => options
                .paths
                .push(flag_value(&mut parser, "--path")?.into()),
            Arg::Long("config") => {
                options.layout.config = Some(flag_value(&mut parser, "--config")?.into())
            }
            Arg::Long("recordings") => {
                options.layout.recordings = Some(flag_value(&mut parser, "--recordings")?.into())
            }
            Arg::Value(case) => options.cases.push(case.string()?),
            other => return Err(other.unexpected().into()),
        }
    }
    if action != Action::Review {
        let verb = if action == Action::Accept {
            "accept"
        } else {
            "reject"
        };
        match (options.all, options.cases.is_empty()) {
            (true, false) => {
                return Err(UsageError(format!(
                    "name the cases to {verb} or give --all, not both"
                )))
            }
            (false, true) => {
                return Err(UsageError(format!(
                    "name the cases to {verb} (test names, as `cargo proposal-eval status` lists them), or give --all"
                )))
            }
            _ => {}
        }
    }
    crate::status::check_paths(&options.paths)?;
    Ok(Some(options))
}

/// Runs the command; returns the exit code.
pub fn run(options: Options) -> Result<i32, String> {
    let found = crate::suites::find(&options.paths)?;
    let layout = &options.layout;
    if (layout.config.is_some() || layout.recordings.is_some()) && found.len() > 1 {
        return Err(format!(
            "--config and --recordings describe one suite, and {} were found; name the suite's folder with --path",
            found.len()
        ));
    }
    let mut suites = Vec::new();
    for found in &found {
        let suite = SuiteReview::open(
            &found.crate_root,
            &found.dir,
            layout.config.as_deref(),
            layout.recordings.as_deref(),
        )
        .map_err(|e| format!("cannot read the suite {}: {e}", display(&found.dir)))?;
        suites.push(suite);
    }
    let selected = match select(&suites, &options.cases) {
        Ok(selected) => selected,
        Err(message) => {
            errln!("error: {message}");
            return Ok(2);
        }
    };
    if selected.is_empty() {
        outln!("no pending recordings");
        return Ok(0);
    }
    match options.action {
        Action::Accept | Action::Reject => {
            let mut failed = 0;
            for (suite, case) in &selected {
                if let Err(e) = act(options.action, suite, case) {
                    errln!("error: {}: {e}", case.test);
                    failed += 1;
                }
            }
            let done = selected.len() - failed;
            outln!(
                "{} {done} pending recording(s)",
                if options.action == Action::Accept {
                    "accepted"
                } else {
                    "rejected"
                }
            );
            Ok(if failed > 0 { 1 } else { 0 })
        }
        Action::Review => review(&selected),
    }
}

/// Accepts or rejects one pending recording, saying what it did.
fn act(action: Action, suite: &SuiteReview, case: &PendingCase) -> Result<(), String> {
    if action == Action::Accept {
        let changes = suite.pending_changes(case);
        let committed = Pending::accept(&case.pending).map_err(|e| match e {
            AcceptError::Recording(e) => {
                let file = suite.relative(e.file());
                e.with_file(file).to_string()
            }
            AcceptError::Io(file, e) => format!("{}: {e}", suite.relative(&file)),
        })?;
        outln!("accepted {}: {}", case.test, suite.relative(&committed));
        if !changes.is_empty() {
            errln!(
                "warning: {}: the accepted recording is stale, as it was made from other sources ({}); the tests refuse it until it is recorded again (RECORD=stale cargo test)",
                case.test,
                stale_text(&changes)
            );
        }
    } else {
        std::fs::remove_file(&case.pending)
            .map_err(|e| format!("cannot delete {}: {e}", suite.relative(&case.pending)))?;
        outln!(
            "rejected {}: removed {}",
            case.test,
            suite.relative(&case.pending)
        );
    }
    Ok(())
}

/// The pending cases named by `names` (every one when there is none), in the order found.
/// A name that is no test, or a test without a pending recording, is an error that lists close
/// matches.
fn select<'a>(
    suites: &'a [SuiteReview],
    names: &[String],
) -> Result<Vec<(&'a SuiteReview, &'a PendingCase)>, String> {
    let pending: Vec<(&SuiteReview, &PendingCase)> = suites
        .iter()
        .flat_map(|s| s.pending.iter().map(move |c| (s, c)))
        .collect();
    if names.is_empty() {
        return Ok(pending);
    }
    let mut problems = Vec::new();
    let mut selected = Vec::new();
    for name in names {
        match pending.iter().find(|(_, c)| &c.test == name) {
            Some(found) => {
                if !selected
                    .iter()
                    .any(|(_, c): &(&SuiteReview, &PendingCase)| c.test == found.1.test)
                {
                    selected.push(*found);
                }
            }
            None => {
                let known = suites.iter().any(|s| s.tests.iter().any(|t| t == name));
                let pending_names: Vec<&str> =
                    pending.iter().map(|(_, c)| c.test.as_str()).collect();
                let close = close_matches(name, &pending_names);
                let mut problem = if known {
                    format!("{name} has no pending recording")
                } else {
                    format!("no case is named {name}")
                };
                if !close.is_empty() {
                    problem.push_str(&format!(
                        "; pending recordings with a close name: {}",
                        close.join(", ")
                    ));
                } else if pending_names.is_empty() {
                    problem.push_str(
                        "; there is no pending recording (RECORD=review cargo test makes them)",
                    );
                } else if !known {
                    problem.push_str("; a CASE is a test name as `cargo proposal-eval status` lists the pending ones (suite::path::case)");
                }
                problems.push(problem);
            }
        }
    }
    if !problems.is_empty() {
        let verb = "nothing was changed";
        return Err(format!("{}\n({verb})", problems.join("\n")));
    }
    Ok(selected)
}

/// Up to five of `candidates` close to `name`: those whose last segments are equal or that
/// hold it, then those a few edits away, closest first.
fn close_matches<'a>(name: &str, candidates: &[&'a str]) -> Vec<&'a str> {
    let last = |n: &str| n.rsplit("::").next().unwrap_or(n).to_lowercase();
    let wanted = name.to_lowercase();
    let mut scored: Vec<(usize, &str)> = candidates
        .iter()
        .filter_map(|&c| {
            let lower = c.to_lowercase();
            let distance = edit_distance(&wanted, &lower);
            if last(c) == last(name) || lower.contains(&wanted) || wanted.contains(&lower) {
                Some((0, c))
            } else if distance <= (wanted.chars().count() / 5).max(2) {
                Some((distance, c))
            } else {
                None
            }
        })
        .collect();
    scored.sort();
    scored.into_iter().take(5).map(|(_, c)| c).collect()
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

/// Whether colours are on for what goes to stdout: a terminal, and no `NO_COLOR`.
fn color() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stdout().is_terminal()
}

/// `review`: shows each pending case; on a terminal, asks what to do with it.
fn review(selected: &[(&SuiteReview, &PendingCase)]) -> Result<i32, String> {
    let interactive = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let color = color();
    let (mut accepted, mut rejected, mut skipped, mut failed) = (0, 0, 0, 0);
    let mut stdin = std::io::stdin().lock();
    for (n, (suite, case)) in selected.iter().enumerate() {
        let evaluated = suite.evaluate(case, color);
        show(n + 1, selected.len(), suite, case, &evaluated, color);
        if !interactive {
            continue;
        }
        let action = loop {
            out!("accept (a), reject (r), skip (s), quit (q)? ");
            crate::out::flush();
            let mut line = String::new();
            match stdin.read_line(&mut line) {
                // End of input is a quit: nothing is decided for what is left.
                Ok(0) | Err(_) => break None,
                Ok(_) => {}
            }
            match line.trim() {
                "a" | "accept" => break Some(Action::Accept),
                "r" | "reject" => break Some(Action::Reject),
                "s" | "skip" | "" => break Some(Action::Review),
                "q" | "quit" => break None,
                other => outln!("{other:?}: answer a, r, s or q"),
            }
        };
        match action {
            None => {
                skipped += selected.len() - n;
                break;
            }
            Some(Action::Review) => {
                outln!("skipped {}", case.test);
                skipped += 1;
            }
            Some(action) => match act(action, suite, case) {
                Ok(()) if action == Action::Accept => accepted += 1,
                Ok(()) => rejected += 1,
                Err(e) => {
                    errln!("error: {}: {e}", case.test);
                    failed += 1;
                }
            },
        }
        outln!();
    }
    if interactive {
        outln!(
            "{accepted} accepted, {rejected} rejected, {skipped} left pending{}",
            if failed > 0 {
                format!(", {failed} failed")
            } else {
                String::new()
            }
        );
    } else {
        outln!(
            "{} pending recording(s); not a terminal, so nothing was decided: run `cargo proposal-eval accept` or `reject` with their names (or --all)",
            selected.len()
        );
    }
    Ok(if failed > 0 { 1 } else { 0 })
}

/// One pending case: both verdicts and the diff of the responses.
fn show(
    n: usize,
    of: usize,
    suite: &SuiteReview,
    case: &PendingCase,
    evaluated: &Evaluated,
    color: bool,
) {
    let bold = |text: &str| {
        if color {
            format!("\u{1b}[1m{text}\u{1b}[0m")
        } else {
            text.to_string()
        }
    };
    outln!("{} ({n}/{of})", bold(&case.test));
    outln!("  {:<10} {}", "file:", suite.relative(&case.pending));
    let line = |label: &str, side: Option<&Side>| match side {
        None => outln!("  {label:<10} no recording (accepting creates it)"),
        Some(side) => outln!(
            "  {label:<10} {} (score {}{}){}",
            if side.passed { "passed" } else { "FAILED" },
            side.score
                .map(proposal_eval::__internal::review::format_score)
                .unwrap_or_else(|| "-".into()),
            side.samples
                .as_ref()
                .map(|rule| format!("; {rule}"))
                .unwrap_or_default(),
            side.recorded_at
                .map(|t| format!(", recorded {}", t.format("%Y-%m-%d %H:%M:%S UTC")))
                .unwrap_or_default()
        ),
    };
    line("committed:", evaluated.committed.as_ref());
    match &evaluated.new {
        Ok(new) => line("pending:", Some(new)),
        Err(e) => {
            outln!("  {:<10} cannot be used: {e}", "pending:");
            return;
        }
    }
    let changes = suite.pending_changes(case);
    if !changes.is_empty() {
        outln!(
            "  stale: the pending recording was made from other sources ({}); accepted, it is refused until recorded again",
            stale_text(&changes)
        );
    }
    let change = match (&evaluated.committed, &evaluated.new) {
        (Some(old), Ok(new)) if old.passed && !new.passed => {
            Some("regression: passes now, fails with the pending responses")
        }
        (Some(old), Ok(new)) if !old.passed && new.passed => {
            Some("fix: fails now, passes with the pending responses")
        }
        _ => None,
    };
    if let Some(change) = change {
        outln!("  {change}");
    }
    for (label, side) in [
        ("committed", evaluated.committed.as_ref()),
        ("pending", evaluated.new.as_ref().ok()),
    ] {
        if let Some(failure) = side.and_then(|s| s.failure.as_deref()) {
            outln!("  why it fails with the {label} responses:");
            for l in failure.lines() {
                outln!("    {l}");
            }
        }
    }
    let verdicts = evaluated.verdicts();
    if !verdicts.is_empty() {
        outln!("  rubric verdicts, committed -> pending:");
        for l in verdicts.lines() {
            outln!("    {l}");
        }
    }
    let diff = evaluated.diff(color);
    if diff.is_empty() {
        outln!("  the responses are equal");
    } else {
        outln!("  responses:");
        for l in diff.lines() {
            outln!("    {l}");
        }
    }
}

/// The source changes of a stale pending recording, in one line.
fn stale_text(changes: &[SourceChange]) -> String {
    changes
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_names() {
        let pending = [
            "payments::changes::raise_amount",
            "payments::changes::new_iban",
            "payments::multi::address_and_amount",
        ];
        assert_eq!(
            close_matches("payments::changes::raise_amout", &pending),
            ["payments::changes::raise_amount"]
        );
        assert_eq!(
            close_matches("payments/changes/raise_amount", &pending),
            ["payments::changes::raise_amount"]
        );
        assert_eq!(
            close_matches("changes::new_iban", &pending),
            ["payments::changes::new_iban"]
        );
        assert!(close_matches("something::else::entirely", &pending).is_empty());
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "ab"), 2);
    }
}
