//! libtest's name filters: `cargo test -- a b` runs the tests whose names contain `a` or `b`
//! (with `--exact`, the tests named `a` or `b`). libtest-mimic's command line takes one filter;
//! with several, they are taken out of the command line here and the harness applies them.

use libtest_mimic::Arguments;
use std::ffi::OsString;

/// The options of libtest-mimic's command line that take a value, which is not a filter.
const WITH_VALUE: &[&str] = &[
    "--test-threads",
    "--logfile",
    "--skip",
    "--color",
    "--format",
    "-Z",
];

/// The command line, and its name filters when there are several (else none: `Arguments`
/// holds the one filter).
pub(crate) struct CommandLine {
    pub args: Arguments,
    pub filters: Vec<String>,
}

impl CommandLine {
    /// Reads this process's command line; a bad one exits with clap's message, as libtest does.
    pub fn from_env() -> CommandLine {
        CommandLine::parse(std::env::args_os().collect())
    }

    /// Reads `raw`, whose first element is the program.
    pub fn parse(raw: Vec<OsString>) -> CommandLine {
        let mut rest = Vec::with_capacity(raw.len());
        let mut filters = Vec::new();
        let mut iter = raw.iter().cloned();
        rest.extend(iter.next());
        while let Some(arg) = iter.next() {
            let text = arg.to_string_lossy();
            if !text.starts_with('-') {
                filters.push(text.into_owned());
                continue;
            }
            let takes_value = WITH_VALUE.contains(&&*text);
            rest.push(arg);
            if takes_value {
                rest.extend(iter.next());
            }
        }
        if filters.len() < 2 {
            return CommandLine {
                args: Arguments::from_iter(raw),
                filters: Vec::new(),
            };
        }
        CommandLine {
            args: Arguments::from_iter(rest),
            filters,
        }
    }

    /// Whether the test `name` is selected by the filters (always, with none or one: libtest-mimic
    /// applies one).
    pub fn selects(&self, name: &str) -> bool {
        self.filters.is_empty()
            || self.filters.iter().any(|filter| {
                if self.args.exact {
                    filter == name
                } else {
                    name.contains(filter.as_str())
                }
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> CommandLine {
        CommandLine::parse(
            std::iter::once("evals")
                .chain(args.iter().copied())
                .map(OsString::from)
                .collect(),
        )
    }

    #[test]
    fn several_filters_select_as_libtest_does() {
        let line = parse(&["raise", "--test-threads", "2", "lower", "--skip", "x"]);
        assert_eq!(line.filters, ["raise", "lower"]);
        assert_eq!(
            (line.args.test_threads, line.args.filter.as_deref()),
            (Some(2), None)
        );
        assert_eq!(line.args.skip, ["x"]);
        assert!(line.selects("payments::raise_amount") && line.selects("payments::lower_it"));
        assert!(!line.selects("payments::cancel"));

        let exact = parse(&["--exact", "s::a", "s::b"]);
        assert!(exact.selects("s::a") && exact.selects("s::b") && !exact.selects("s::ab"));

        // One filter, or none, is libtest-mimic's own.
        let one = parse(&["raise", "--exact"]);
        assert_eq!(
            (one.args.filter.as_deref(), one.filters.len()),
            (Some("raise"), 0)
        );
        assert!(one.selects("anything"));
        assert!(parse(&[]).selects("anything"));
    }
}
