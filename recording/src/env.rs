//! Every environment variable the product reads, read in one place and turned into
//! [`Settings`] once.
//!
//! | variable | meaning |
//! |---|---|
//! | `PROPOSAL_EVAL_RECORD` (short form `RECORD`) | unset or `0`: replay; `1` or `all`: record every selected case; `stale`: record missing or stale recordings only; `review`: record every selected case into a pending recording beside the committed one, for `cargo proposal-eval review`. Both set to different modes is an error |
//! | `NO_COLOR` | any non-empty value turns colours off |
//! | `CLICOLOR_FORCE` | any value other than `0` turns colours on even when not on a terminal |
//! | `PROPOSAL_EVAL_MAX_CONCURRENCY` | live model calls at once while recording (default 8, whatever the cores), across the test processes of a target folder; the harness runs cases on at least that many threads while recording |
//! | `PROPOSAL_EVAL_UPSTREAM` | the default HTTP upstream (over `[http] upstream`) |
//! | `PROPOSAL_EVAL_UPSTREAM_<NAME>` | the named HTTP upstream `<name>` (over `[http.upstreams]`) |
//! | `PROPOSAL_EVAL_BUDGET_USD` | while recording, no live call once the estimated cost passes this many dollars |
//! | `PROPOSAL_EVAL_REPEAT` | samples per case (a whole number, at least 1); overrides `[run] repeat` |
//! | `PROPOSAL_EVAL_WAIT_NOTE_S` | seconds a live call waits for a place before a note says who holds the places (default 30) |
//! | `NEXTEST_RUN_ID` | the run every test process of one `cargo nextest run` belongs to (its report entries, its budget) |
//! | `CARGO_MANIFEST_DIR` | the crate root that fixture, source and recording paths are relative to |

use crate::recording::upstream::{UpstreamUrl, UpstreamUrlError};
use std::collections::BTreeMap;
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
    /// Record every selected case into `<case>.pending.json` beside its recording, which stays
    /// as it is until `cargo proposal-eval accept` (or `review`) replaces it.
    Review,
}

/// The settings read from the environment.
#[derive(Clone, Debug)]
pub struct Settings {
    /// `PROPOSAL_EVAL_RECORD` / `RECORD`.
    pub record: RecordMode,
    /// Whether failure output is coloured.
    pub color: bool,
    /// `PROPOSAL_EVAL_MAX_CONCURRENCY`.
    pub max_concurrency: usize,
    /// `PROPOSAL_EVAL_UPSTREAM`. Read by the HTTP proxy (feature `http`); checked without it
    /// too, so a bad value is refused the same way whatever the features.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub upstream: Option<UpstreamUrl>,
    /// `PROPOSAL_EVAL_UPSTREAM_<NAME>`, by `NAME` as written in the variable.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub upstreams: BTreeMap<String, UpstreamUrl>,
    /// `PROPOSAL_EVAL_BUDGET_USD`.
    pub budget_usd: Option<f64>,
    /// `PROPOSAL_EVAL_REPEAT`: samples per case, over the suite's `[run] repeat`.
    pub repeat: Option<usize>,
}

/// An environment variable the product cannot act on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EnvError {
    /// A value the product does not accept.
    Invalid {
        /// The variable.
        variable: &'static str,
        /// Its value.
        value: String,
        /// The values that are accepted.
        allowed: &'static str,
    },
    /// `PROPOSAL_EVAL_UPSTREAM` or a `PROPOSAL_EVAL_UPSTREAM_<NAME>` that is not an upstream URL.
    Upstream {
        /// The variable, as set.
        variable: String,
        /// What is wrong with its value.
        error: UpstreamUrlError,
    },
    /// `PROPOSAL_EVAL_RECORD` and its short form `RECORD` ask for different modes.
    RecordConflict {
        /// `PROPOSAL_EVAL_RECORD`'s value.
        long: String,
        /// `RECORD`'s value.
        short: String,
    },
}

impl fmt::Display for EnvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EnvError::Invalid {
                variable,
                value,
                allowed,
            } => write!(f, "{variable}={value:?} is not understood; allowed: {allowed}"),
            EnvError::Upstream { variable, error } => write!(f, "{variable}: {error}"),
            EnvError::RecordConflict { long, short } => write!(
                f,
                "PROPOSAL_EVAL_RECORD={long:?} and RECORD={short:?} ask for different modes; set only one (RECORD is the short form of PROPOSAL_EVAL_RECORD)"
            ),
        }
    }
}

impl std::error::Error for EnvError {}

/// Reads one of the record variables (`variable` names it in an error).
fn parse_record_as(variable: &'static str, value: Option<&str>) -> Result<RecordMode, EnvError> {
    match value.map(str::trim) {
        None | Some("") | Some("0") => Ok(RecordMode::Replay),
        Some("1") | Some("all") => Ok(RecordMode::All),
        Some("stale") => Ok(RecordMode::Stale),
        Some("review") => Ok(RecordMode::Review),
        Some(other) => Err(EnvError::Invalid {
            variable,
            value: other.to_string(),
            allowed: "unset or 0 (replay), 1 or all (record every selected case), stale (record missing or stale recordings only), review (record every selected case into a pending recording for `cargo proposal-eval review`)",
        }),
    }
}

/// The record mode from `PROPOSAL_EVAL_RECORD` and its short form `RECORD`: either may be set;
/// both set must agree (`1` and `all` do).
pub fn record_mode(long: Option<&str>, short: Option<&str>) -> Result<RecordMode, EnvError> {
    fn set(v: Option<&str>) -> Option<&str> {
        v.filter(|v| !v.trim().is_empty())
    }
    match (set(long), set(short)) {
        (Some(l), Some(s)) => {
            let (lm, sm) = (
                parse_record_as("PROPOSAL_EVAL_RECORD", Some(l))?,
                parse_record_as("RECORD", Some(s))?,
            );
            if lm == sm {
                Ok(lm)
            } else {
                Err(EnvError::RecordConflict {
                    long: l.to_string(),
                    short: s.to_string(),
                })
            }
        }
        (Some(l), None) => parse_record_as("PROPOSAL_EVAL_RECORD", Some(l)),
        (None, short) => parse_record_as("RECORD", short),
    }
}

/// Live model calls at once while recording when `PROPOSAL_EVAL_MAX_CONCURRENCY` is unset:
/// recording waits on the API, not on the cores, so the default does not follow the core count.
pub const DEFAULT_MAX_CONCURRENCY: usize = 8;

fn parse_concurrency(value: Option<&str>) -> Result<usize, EnvError> {
    match value.map(str::trim) {
        None | Some("") => Ok(DEFAULT_MAX_CONCURRENCY),
        Some(v) => match v.parse::<usize>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(EnvError::Invalid {
                variable: "PROPOSAL_EVAL_MAX_CONCURRENCY",
                value: v.to_string(),
                allowed: "a whole number of at least 1 (default 8)",
            }),
        },
    }
}

fn parse_repeat(value: Option<&str>) -> Result<Option<usize>, EnvError> {
    match value.map(str::trim) {
        None | Some("") => Ok(None),
        Some(v) => match v.parse::<usize>() {
            Ok(n) if n > 0 => Ok(Some(n)),
            _ => Err(EnvError::Invalid {
                variable: "PROPOSAL_EVAL_REPEAT",
                value: v.to_string(),
                allowed: "a whole number of at least 1 (samples per case; unset: the suite's [run] repeat, else 1)",
            }),
        },
    }
}

fn parse_budget(value: Option<&str>) -> Result<Option<f64>, EnvError> {
    match value.map(str::trim) {
        None | Some("") => Ok(None),
        Some(v) => match v.parse::<f64>() {
            Ok(n) if n.is_finite() && n >= 0.0 => Ok(Some(n)),
            _ => Err(EnvError::Invalid {
                variable: "PROPOSAL_EVAL_BUDGET_USD",
                value: v.to_string(),
                allowed: "US dollars, a number of 0 or more (e.g. 2.50)",
            }),
        },
    }
}

fn parse_upstream(variable: &str, value: &str) -> Result<UpstreamUrl, EnvError> {
    UpstreamUrl::parse(value).map_err(|error| EnvError::Upstream {
        variable: variable.to_string(),
        error,
    })
}

/// `PROPOSAL_EVAL_UPSTREAM` and every `PROPOSAL_EVAL_UPSTREAM_<NAME>` of `vars`.
fn parse_upstreams(
    vars: impl Iterator<Item = (String, String)>,
) -> Result<(Option<UpstreamUrl>, BTreeMap<String, UpstreamUrl>), EnvError> {
    let (mut default, mut named) = (None, BTreeMap::new());
    for (key, value) in vars {
        if value.trim().is_empty() {
            continue;
        }
        if key == "PROPOSAL_EVAL_UPSTREAM" {
            default = Some(parse_upstream("PROPOSAL_EVAL_UPSTREAM", &value)?);
        } else if let Some(name) = key.strip_prefix("PROPOSAL_EVAL_UPSTREAM_") {
            let url = parse_upstream(&key, &value)?;
            named.insert(name.to_string(), url);
        }
    }
    Ok((default, named))
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
        let (upstream, upstreams) = parse_upstreams(
            std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))),
        )?;
        Ok(Settings {
            upstream,
            upstreams,
            budget_usd: parse_budget(var("PROPOSAL_EVAL_BUDGET_USD").as_deref())?,
            record: record_mode(
                var("PROPOSAL_EVAL_RECORD").as_deref(),
                var("RECORD").as_deref(),
            )?,
            color,
            max_concurrency: parse_concurrency(var("PROPOSAL_EVAL_MAX_CONCURRENCY").as_deref())?,
            repeat: parse_repeat(var("PROPOSAL_EVAL_REPEAT").as_deref())?,
        })
    }
}

/// The crate root at run time: `CARGO_MANIFEST_DIR` (set by cargo and nextest when they run a
/// test), else the working directory.
pub fn crate_root() -> std::path::PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(Into::into)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| ".".into())
}

/// The crate root of the first suite this process made (the macro's is compiled in), for
/// [`package_name`] outside cargo.
static SUITE_CRATE_ROOT: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

/// Notes the crate root of a suite; the first one noted names the package outside cargo.
pub fn note_crate_root(root: &std::path::Path) {
    let _ = SUITE_CRATE_ROOT.set(root.to_path_buf());
}

/// The package of the running test, read once: `CARGO_PKG_NAME`, set by cargo and nextest; for
/// a test binary started by hand, `[package] name` in the `Cargo.toml` of its suite's crate
/// root (else of [`crate_root`]), so its results are filed under its package, not "unknown".
pub fn package_name() -> Option<&'static str> {
    static NAME: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    NAME.get_or_init(|| {
        std::env::var("CARGO_PKG_NAME")
            .ok()
            .filter(|s| !s.is_empty())
            .or_else(|| {
                let root = SUITE_CRATE_ROOT.get().cloned().unwrap_or_else(crate_root);
                manifest_package(&std::fs::read_to_string(root.join("Cargo.toml")).ok()?)
            })
    })
    .as_deref()
}

/// `[package] name` of a `Cargo.toml`'s text.
fn manifest_package(manifest: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Manifest {
        package: Option<Package>,
    }
    #[derive(serde::Deserialize)]
    struct Package {
        name: String,
    }
    crate::toml_read::from_str::<Manifest>(manifest)
        .ok()?
        .package
        .map(|p| p.name)
}

/// The running test binary's target name (`evals` for `tests/evals.rs`), without cargo's hash
/// suffix; read once.
pub fn test_binary() -> Option<&'static str> {
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

/// What identifies the run this process belongs to, read once: nextest's `NEXTEST_RUN_ID`, or
/// the parent process (the `cargo test` that runs every test binary of one invocation, one after
/// another) with its start time where the system tells it, so a reused process id is another
/// run. `None` where neither is known.
pub fn run_id() -> Option<&'static str> {
    static RUN: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    RUN.get_or_init(|| {
        if let Some(id) = std::env::var("NEXTEST_RUN_ID")
            .ok()
            .filter(|id| !id.is_empty())
        {
            return Some(format!("nextest-{id}"));
        }
        #[cfg(unix)]
        {
            let parent = std::os::unix::process::parent_id();
            // Field 22 of /proc/<pid>/stat, after the parenthesized command name: the start time.
            let started = std::fs::read_to_string(format!("/proc/{parent}/stat"))
                .ok()
                .and_then(|stat| {
                    let (_, after) = stat.rsplit_once(')')?;
                    after.split_whitespace().nth(19).map(str::to_string)
                });
            Some(match started {
                Some(started) => format!("parent-{parent}-{started}"),
                None => format!("parent-{parent}"),
            })
        }
        #[cfg(not(unix))]
        None
    })
    .as_deref()
}

/// `PROPOSAL_EVAL_WAIT_NOTE_S`: how long a live call waits for a place before the note that
/// says who holds them (default 30 s; a value that is no number of seconds is the default).
pub fn wait_note_after() -> std::time::Duration {
    static AFTER: std::sync::OnceLock<std::time::Duration> = std::sync::OnceLock::new();
    *AFTER.get_or_init(|| {
        std::env::var("PROPOSAL_EVAL_WAIT_NOTE_S")
            .ok()
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map_or(
                std::time::Duration::from_secs(30),
                std::time::Duration::from_secs_f64,
            )
    })
}

/// The settings read from the environment, once per process.
pub fn settings() -> Result<&'static Settings, EnvError> {
    static SETTINGS: std::sync::OnceLock<Result<Settings, EnvError>> = std::sync::OnceLock::new();
    SETTINGS
        .get_or_init(Settings::from_env)
        .as_ref()
        .map_err(Clone::clone)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_record(value: Option<&str>) -> Result<RecordMode, EnvError> {
        parse_record_as("RECORD", value)
    }

    #[test]
    fn record_values() {
        assert_eq!(parse_record(None).unwrap(), RecordMode::Replay);
        assert_eq!(parse_record(Some("0")).unwrap(), RecordMode::Replay);
        assert_eq!(parse_record(Some("1")).unwrap(), RecordMode::All);
        assert_eq!(parse_record(Some("all")).unwrap(), RecordMode::All);
        assert_eq!(parse_record(Some("stale")).unwrap(), RecordMode::Stale);
        assert_eq!(parse_record(Some("review")).unwrap(), RecordMode::Review);
        let err = parse_record(Some("yes")).unwrap_err().to_string();
        assert!(
            err.contains("RECORD=\"yes\"") && err.contains("stale") && err.contains("review"),
            "{err}"
        );
    }

    #[test]
    fn the_long_and_short_record_variables() {
        assert_eq!(record_mode(Some("stale"), None).unwrap(), RecordMode::Stale);
        assert_eq!(record_mode(None, Some("1")).unwrap(), RecordMode::All);
        assert_eq!(
            record_mode(Some("all"), Some("1")).unwrap(),
            RecordMode::All
        );
        assert_eq!(
            record_mode(Some(""), Some("stale")).unwrap(),
            RecordMode::Stale
        );
        let conflict = record_mode(Some("stale"), Some("1"))
            .unwrap_err()
            .to_string();
        assert!(
            conflict.contains("PROPOSAL_EVAL_RECORD=\"stale\" and RECORD=\"1\"")
                && conflict.contains("set only one"),
            "{conflict}"
        );
        let bad = record_mode(Some("yes"), None).unwrap_err().to_string();
        assert!(bad.starts_with("PROPOSAL_EVAL_RECORD=\"yes\""), "{bad}");
    }

    #[test]
    fn repeat_values() {
        assert_eq!(parse_repeat(None).unwrap(), None);
        assert_eq!(parse_repeat(Some("3")).unwrap(), Some(3));
        let err = parse_repeat(Some("0")).unwrap_err().to_string();
        assert!(err.starts_with("PROPOSAL_EVAL_REPEAT=\"0\""), "{err}");
        assert!(parse_repeat(Some("many")).is_err());
    }

    #[test]
    fn budget_and_upstream_values() {
        assert_eq!(parse_budget(None).unwrap(), None);
        assert_eq!(parse_budget(Some("2.5")).unwrap(), Some(2.5));
        let err = parse_budget(Some("-1")).unwrap_err().to_string();
        assert!(err.starts_with("PROPOSAL_EVAL_BUDGET_USD=\"-1\""), "{err}");
        let vars = [
            ("PROPOSAL_EVAL_UPSTREAM", "http://127.0.0.1:9/v1"),
            (
                "PROPOSAL_EVAL_UPSTREAM_ANTHROPIC",
                "https://api.anthropic.com/",
            ),
            ("PROPOSAL_EVAL_UPSTREAM_EMPTY", ""),
            ("OTHER", "x"),
        ];
        let owned = || vars.iter().map(|(k, v)| (k.to_string(), v.to_string()));
        let (default, named) = parse_upstreams(owned()).unwrap();
        assert_eq!(default.unwrap().as_str(), "http://127.0.0.1:9/v1");
        assert_eq!(
            named.keys().collect::<Vec<_>>(),
            ["ANTHROPIC"],
            "an empty variable sets nothing"
        );
        let err = parse_upstreams(std::iter::once((
            "PROPOSAL_EVAL_UPSTREAM_X".to_string(),
            "localhost:8080".to_string(),
        )))
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("PROPOSAL_EVAL_UPSTREAM_X: `localhost:8080` is not an upstream URL")
                && err.contains("http://"),
            "{err}"
        );
        let err = parse_upstreams(std::iter::once((
            "PROPOSAL_EVAL_UPSTREAM".to_string(),
            "http://127.0.0.1:/v1".to_string(),
        )))
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("PROPOSAL_EVAL_UPSTREAM: `http://127.0.0.1:/v1` has an empty port"),
            "{err}"
        );
    }

    #[test]
    fn the_package_is_read_from_a_manifest() {
        let manifest =
            "[package]\nname = \"support-agent\"\nversion = \"0.1.0\"\n[dependencies]\nx = \"1\"\n";
        assert_eq!(manifest_package(manifest).as_deref(), Some("support-agent"));
        assert_eq!(manifest_package("[workspace]\nmembers = []\n"), None);
        assert_eq!(manifest_package("not toml ["), None);
    }

    #[test]
    fn concurrency_values() {
        assert_eq!(parse_concurrency(None).unwrap(), 8);
        assert_eq!(parse_concurrency(Some("2")).unwrap(), 2);
        assert!(parse_concurrency(Some("0")).is_err());
        assert!(parse_concurrency(Some("many")).is_err());
    }
}
