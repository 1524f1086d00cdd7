//! Every environment variable the product reads, read in one place and turned into
//! [`Settings`] once.
//!
//! | variable | meaning |
//! |---|---|
//! | `RECORD` | unset or `0`: replay; `1` or `all`: record every selected case; `stale`: record missing or stale recordings only |
//! | `NO_COLOR` | any non-empty value turns colours off |
//! | `CLICOLOR_FORCE` | any value other than `0` turns colours on even when not on a terminal |
//! | `PROPOSAL_EVAL_MAX_CONCURRENCY` | live model calls at once while recording (default 4), across the test processes of a target folder |
//! | `CARGO_MANIFEST_DIR` | the crate root that fixture, source and recording paths are relative to |

use std::fmt;
use std::io::IsTerminal;

/// What to do with recordings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordMode {
    /// Replay recordings; a missing one fails the case.
    Replay,
    /// Record every selected case.
    All,
    /// Record cases whose recording is missing, stale or unreadable; replay the rest.
    Stale,
}

/// The settings read from the environment.
#[derive(Clone, Debug)]
pub struct Settings {
    /// `RECORD`.
    pub record: RecordMode,
    /// Whether failure output is coloured.
    pub color: bool,
    /// `PROPOSAL_EVAL_MAX_CONCURRENCY`.
    pub max_concurrency: usize,
}

/// An environment variable with a value the product does not accept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvError {
    /// The variable.
    pub variable: &'static str,
    /// Its value.
    pub value: String,
    /// The values that are accepted.
    pub allowed: &'static str,
}

impl fmt::Display for EnvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}={:?} is not understood; allowed: {}",
            self.variable, self.value, self.allowed
        )
    }
}

impl std::error::Error for EnvError {}

/// Reads `RECORD`.
pub fn parse_record(value: Option<&str>) -> Result<RecordMode, EnvError> {
    match value.map(str::trim) {
        None | Some("") | Some("0") => Ok(RecordMode::Replay),
        Some("1") | Some("all") => Ok(RecordMode::All),
        Some("stale") => Ok(RecordMode::Stale),
        Some(other) => Err(EnvError {
            variable: "RECORD",
            value: other.to_string(),
            allowed: "unset or 0 (replay), 1 or all (record every selected case), stale (record missing or stale recordings only)",
        }),
    }
}

fn parse_concurrency(value: Option<&str>) -> Result<usize, EnvError> {
    match value.map(str::trim) {
        None | Some("") => Ok(4),
        Some(v) => match v.parse::<usize>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(EnvError {
                variable: "PROPOSAL_EVAL_MAX_CONCURRENCY",
                value: v.to_string(),
                allowed: "a whole number of at least 1 (default 4)",
            }),
        },
    }
}

impl Settings {
    /// Reads the settings from this process's environment.
    pub fn from_env() -> Result<Settings, EnvError> {
        let var = |name: &str| std::env::var(name).ok();
        let color = match (var("NO_COLOR"), var("CLICOLOR_FORCE")) {
            (Some(v), _) if !v.is_empty() => false,
            (_, Some(v)) if v != "0" => true,
            _ => std::io::stderr().is_terminal(),
        };
        Ok(Settings {
            record: parse_record(var("RECORD").as_deref())?,
            color,
            max_concurrency: parse_concurrency(var("PROPOSAL_EVAL_MAX_CONCURRENCY").as_deref())?,
        })
    }
}

/// The crate root at run time: `CARGO_MANIFEST_DIR` (set by cargo and nextest when they run a
/// test), else the working directory.
pub(crate) fn crate_root() -> std::path::PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(Into::into)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| ".".into())
}

/// The package of the running test (`CARGO_PKG_NAME`, set by cargo and nextest), read once.
pub(crate) fn package_name() -> Option<&'static str> {
    static NAME: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    NAME.get_or_init(|| {
        std::env::var("CARGO_PKG_NAME")
            .ok()
            .filter(|s| !s.is_empty())
    })
    .as_deref()
}

/// The running test binary's target name (`evals` for `tests/evals.rs`), without cargo's hash
/// suffix; read once.
pub(crate) fn test_binary() -> Option<&'static str> {
    static NAME: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    NAME.get_or_init(|| {
        let exe = std::env::current_exe().ok()?;
        let stem = exe.file_stem()?.to_string_lossy().into_owned();
        Some(match stem.rsplit_once('-') {
            Some((name, hash))
                if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) =>
            {
                name.to_string()
            }
            _ => stem,
        })
    })
    .as_deref()
}

/// The settings read from the environment, once per process.
pub(crate) fn settings() -> Result<&'static Settings, EnvError> {
    static SETTINGS: std::sync::OnceLock<Result<Settings, EnvError>> = std::sync::OnceLock::new();
    SETTINGS
        .get_or_init(Settings::from_env)
        .as_ref()
        .map_err(Clone::clone)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_values() {
        assert_eq!(parse_record(None).unwrap(), RecordMode::Replay);
        assert_eq!(parse_record(Some("0")).unwrap(), RecordMode::Replay);
        assert_eq!(parse_record(Some("1")).unwrap(), RecordMode::All);
        assert_eq!(parse_record(Some("all")).unwrap(), RecordMode::All);
        assert_eq!(parse_record(Some("stale")).unwrap(), RecordMode::Stale);
        let err = parse_record(Some("yes")).unwrap_err().to_string();
        assert!(
            err.contains("RECORD=\"yes\"") && err.contains("stale"),
            "{err}"
        );
    }

    #[test]
    fn concurrency_values() {
        assert_eq!(parse_concurrency(None).unwrap(), 4);
        assert_eq!(parse_concurrency(Some("2")).unwrap(), 2);
        assert!(parse_concurrency(Some("0")).is_err());
        assert!(parse_concurrency(Some("many")).is_err());
    }
}
