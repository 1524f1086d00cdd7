//! A small hand-written argument parser: `--flag`, `--flag value`, `--flag=value`, positionals,
//! and `--` to end flags. (clap would cost more CI compile time than this whole CLI.)

use std::fmt;

/// A command line the user got wrong. Exit code 2, with the message and a pointer to `--help`.
#[derive(Debug, PartialEq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One argument as the user wrote it.
#[derive(Debug, PartialEq)]
pub enum Arg {
    /// `--name` or `--name=value` (the inline value), or `-h`.
    Flag(String, Option<String>),
    /// Anything else, or everything after `--`.
    Positional(String),
}

/// Walks the arguments of one subcommand.
pub struct Args {
    rest: std::vec::IntoIter<String>,
    only_positionals: bool,
}

impl Args {
    /// The arguments after the subcommand name.
    pub fn new(args: Vec<String>) -> Args {
        Args {
            rest: args.into_iter(),
            only_positionals: false,
        }
    }

    /// The next argument, split into a flag or a positional.
    pub fn next_arg(&mut self) -> Option<Arg> {
        let arg = self.rest.next()?;
        if self.only_positionals {
            return Some(Arg::Positional(arg));
        }
        if arg == "--" {
            self.only_positionals = true;
            return self.next_arg();
        }
        if arg == "-h" {
            return Some(Arg::Flag("--help".into(), None));
        }
        if arg.starts_with("--") {
            return Some(match arg.split_once('=') {
                Some((name, value)) => Arg::Flag(name.to_string(), Some(value.to_string())),
                None => Arg::Flag(arg, None),
            });
        }
        if arg.starts_with('-') && arg.len() > 1 {
            return Some(Arg::Flag(arg, None));
        }
        Some(Arg::Positional(arg))
    }

    /// The value of a flag that takes one: the inline `=value`, else the next argument.
    pub fn value(&mut self, flag: &str, inline: Option<String>) -> Result<String, UsageError> {
        if let Some(value) = inline {
            return Ok(value);
        }
        match self.rest.next() {
            Some(value) if !value.starts_with("--") => Ok(value),
            _ => Err(UsageError(format!("{flag} needs a value"))),
        }
    }
}

/// Refuses `--name=value` on a flag that takes no value.
pub fn no_value(flag: &str, inline: Option<String>) -> Result<(), UsageError> {
    match inline {
        None => Ok(()),
        Some(_) => Err(UsageError(format!("{flag} takes no value"))),
    }
}

/// Splits a command line the way a POSIX shell would for plain words: whitespace separates
/// words, single quotes keep everything literally, double quotes allow `\"` and `\\`, and a
/// backslash outside quotes escapes the next character. No variables, globs or pipes.
pub fn split_command(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err("unterminated single quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\')) => word.push(c),
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err("unterminated double quote".into()),
                        },
                        Some(c) => word.push(c),
                        None => return Err("unterminated double quote".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(c) => word.push(c),
                    None => return Err("trailing backslash".into()),
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Args {
        Args::new(list.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn flags_values_and_positionals() {
        let mut a = args(&["--from", "x", "--suite=s", "id", "-h", "--", "--force"]);
        assert_eq!(a.next_arg(), Some(Arg::Flag("--from".into(), None)));
        assert_eq!(a.value("--from", None).unwrap(), "x");
        assert_eq!(
            a.next_arg(),
            Some(Arg::Flag("--suite".into(), Some("s".into())))
        );
        assert_eq!(a.next_arg(), Some(Arg::Positional("id".into())));
        assert_eq!(a.next_arg(), Some(Arg::Flag("--help".into(), None)));
        assert_eq!(a.next_arg(), Some(Arg::Positional("--force".into())));
        assert_eq!(a.next_arg(), None);
    }

    #[test]
    fn missing_value_is_a_usage_error() {
        let mut a = args(&["--from", "--force"]);
        a.next_arg();
        assert_eq!(
            a.value("--from", None),
            Err(UsageError("--from needs a value".into()))
        );
        let mut a = args(&["--from"]);
        a.next_arg();
        assert!(a.value("--from", None).is_err());
    }

    #[test]
    fn splits_like_a_shell() {
        assert_eq!(
            split_command(r#"python3  gen.py --name 'a b' "c \"d\"" e\ f"#).unwrap(),
            vec!["python3", "gen.py", "--name", "a b", "c \"d\"", "e f"]
        );
        assert_eq!(split_command("''").unwrap(), vec![""]);
        assert!(split_command("'open").is_err());
        assert!(split_command("\"open").is_err());
        assert_eq!(split_command("   ").unwrap(), Vec::<String>::new());
    }
}
