//! What the subcommands share on top of lexopt: the usage error, our wording for lexopt's
//! errors, and the rule that a flag's value is never the next flag. (lexopt rather than clap:
//! it compiles in well under a second, and the help texts are ours anyway.)

use std::ffi::OsString;
use std::fmt;

/// A command line the user got wrong. Exit code 2, with the message and a pointer to `--help`.
#[derive(Debug, PartialEq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<lexopt::Error> for UsageError {
    fn from(error: lexopt::Error) -> UsageError {
        UsageError(match error {
            lexopt::Error::UnexpectedOption(flag) => format!("unknown option {flag}"),
            lexopt::Error::MissingValue { option: Some(flag) } => format!("{flag} needs a value"),
            lexopt::Error::UnexpectedValue { option, .. } => format!("{option} takes no value"),
            lexopt::Error::NonUnicodeValue(value) => format!("{value:?} is not valid UTF-8"),
            other => other.to_string(),
        })
    }
}

/// The value of `flag`: `--flag=value`, or the next argument unless that starts with `--`.
/// lexopt would take `--suite` in `--from --suite s` as the value of `--from`; refusing it
/// reports the forgotten value instead of a confusing complaint about `s`.
pub fn flag_value(parser: &mut lexopt::Parser, flag: &str) -> Result<OsString, UsageError> {
    if let Some(inline) = parser.optional_value() {
        return Ok(inline);
    }
    match parser.value() {
        Ok(value) if !value.as_encoded_bytes().starts_with(b"--") => Ok(value),
        _ => Err(UsageError(format!("{flag} needs a value"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lexopt::Arg::{Long, Short, Value};

    fn parser(list: &[&str]) -> lexopt::Parser {
        lexopt::Parser::from_args(list.iter().copied())
    }

    #[test]
    fn flags_values_and_positionals() {
        let mut p = parser(&["--from", "x", "--suite=s", "id", "-h", "--", "--force"]);
        assert_eq!(p.next().unwrap(), Some(Long("from")));
        assert_eq!(flag_value(&mut p, "--from").unwrap(), "x");
        assert_eq!(p.next().unwrap(), Some(Long("suite")));
        assert_eq!(flag_value(&mut p, "--suite").unwrap(), "s");
        assert_eq!(p.next().unwrap(), Some(Value("id".into())));
        assert_eq!(p.next().unwrap(), Some(Short('h')));
        assert_eq!(p.next().unwrap(), Some(Value("--force".into())));
        assert_eq!(p.next().unwrap(), None);
    }

    #[test]
    fn an_inline_value_may_look_like_a_flag() {
        let mut p = parser(&["--from=--odd", "--suite="]);
        p.next().unwrap();
        assert_eq!(flag_value(&mut p, "--from").unwrap(), "--odd");
        p.next().unwrap();
        assert_eq!(flag_value(&mut p, "--suite").unwrap(), "");
    }

    #[test]
    fn missing_value_names_the_flag() {
        let mut p = parser(&["--from", "--force"]);
        p.next().unwrap();
        assert_eq!(
            flag_value(&mut p, "--from"),
            Err(UsageError("--from needs a value".into()))
        );
        let mut p = parser(&["--from"]);
        p.next().unwrap();
        assert_eq!(
            flag_value(&mut p, "--from"),
            Err(UsageError("--from needs a value".into()))
        );
    }

    #[test]
    fn lexopt_errors_in_our_words() {
        let mut p = parser(&["--force=yes"]);
        assert_eq!(p.next().unwrap(), Some(Long("force")));
        let valued = p.next().unwrap_err();
        assert_eq!(UsageError::from(valued).0, "--force takes no value");

        let mut p = parser(&["--wat"]);
        let unknown = p.next().unwrap().unwrap().unexpected();
        assert_eq!(UsageError::from(unknown).0, "unknown option --wat");

        let mut p = parser(&["-x"]);
        let unknown = p.next().unwrap().unwrap().unexpected();
        assert_eq!(UsageError::from(unknown).0, "unknown option -x");
    }
}
