//! Where recorded HTTP calls go: `[http]` in the suite config, overridden by
//! `PROPOSAL_EVAL_UPSTREAM` (the default upstream) and `PROPOSAL_EVAL_UPSTREAM_<NAME>` (a named
//! one, its name upper-cased with `-` as `_`).
//!
//! The keys are read whether or not the runtime's `http` feature is on, so a suite config means
//! the same in every build.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// An upstream's base URL: `http://` or `https://`, a host, an optional port, and an optional
/// path prefix (`https://api.openai.com/v1`); no query, no fragment. Kept without a trailing `/`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UpstreamUrl(String);

/// Why a text is not an [`UpstreamUrl`]; its message quotes the text and gives an example.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum UpstreamUrlError {
    /// It does not start with `http://` or `https://`.
    Scheme {
        /// The text, trimmed.
        text: String,
    },
    /// Nothing between `://` and the port or path (`http://:8080/v1`).
    NoHost {
        /// The text, trimmed.
        text: String,
    },
    /// A `:` after the host with no port number after it (`http://127.0.0.1:/v1`), or one that
    /// is not a number from 1 to 65535.
    Port {
        /// The text, trimmed.
        text: String,
        /// What follows the `:`.
        port: String,
    },
    /// A query, a fragment or white space.
    Character {
        /// The text, trimmed.
        text: String,
        /// The first such character.
        found: char,
    },
}

impl fmt::Display for UpstreamUrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const EXAMPLE: &str =
            "(e.g. \"https://api.openai.com/v1\" or \"http://127.0.0.1:8080/v1\")";
        match self {
            UpstreamUrlError::Scheme { text } => write!(
                f,
                "`{text}` is not an upstream URL: it must start with http:// or https:// {EXAMPLE}"
            ),
            UpstreamUrlError::NoHost { text } => {
                write!(f, "`{text}` has no host: write one after :// {EXAMPLE}")
            }
            UpstreamUrlError::Port { text, port } if port.is_empty() => write!(
                f,
                "`{text}` has an empty port: write the port number after `:`, or leave out the `:` {EXAMPLE}"
            ),
            UpstreamUrlError::Port { text, port } => write!(
                f,
                "`{text}` has the port `{port}`: a port is a number from 1 to 65535 {EXAMPLE}"
            ),
            UpstreamUrlError::Character { text, found } => write!(
                f,
                "`{text}` holds {found:?}: an upstream is a base URL without query or fragment {EXAMPLE}"
            ),
        }
    }
}

impl std::error::Error for UpstreamUrlError {}

impl UpstreamUrl {
    /// Checks `text` as an upstream base URL.
    ///
    /// ```
    /// use proposal_eval::config::UpstreamUrl;
    /// assert_eq!(UpstreamUrl::parse("https://api.openai.com/v1/").unwrap().as_str(), "https://api.openai.com/v1");
    /// let err = UpstreamUrl::parse("http://127.0.0.1:/v1").unwrap_err();
    /// assert!(err.to_string().starts_with("`http://127.0.0.1:/v1` has an empty port"));
    /// ```
    pub fn parse(text: &str) -> Result<UpstreamUrl, UpstreamUrlError> {
        let text = text.trim();
        let owned = || text.to_string();
        let rest = text
            .strip_prefix("https://")
            .or_else(|| text.strip_prefix("http://"))
            .ok_or_else(|| UpstreamUrlError::Scheme { text: owned() })?;
        if let Some(found) = rest
            .chars()
            .find(|c| c.is_whitespace() || matches!(c, '?' | '#'))
        {
            return Err(UpstreamUrlError::Character {
                text: owned(),
                found,
            });
        }
        let authority = rest.split('/').next().unwrap_or("");
        // `[::1]:8080`: the port is what follows the bracketed address.
        let (host, port) = match authority.strip_prefix('[') {
            Some(inner) => match inner.split_once(']') {
                Some((address, after)) => (address, after.strip_prefix(':')),
                None => ("", None),
            },
            None => match authority.split_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (authority, None),
            },
        };
        if host.is_empty() {
            return Err(UpstreamUrlError::NoHost { text: owned() });
        }
        if let Some(port) = port {
            if !port.bytes().all(|b| b.is_ascii_digit()) || !matches!(port.parse::<u16>(), Ok(1..))
            {
                return Err(UpstreamUrlError::Port {
                    text: owned(),
                    port: port.to_string(),
                });
            }
        }
        Ok(UpstreamUrl(text.trim_end_matches('/').to_string()))
    }

    /// The URL, without a trailing `/`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for UpstreamUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for UpstreamUrl {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        UpstreamUrl::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// An upstream's name in `[http.upstreams]`: letters, digits, `_` and `-`, so that
/// `PROPOSAL_EVAL_UPSTREAM_<NAME>` can name it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct UpstreamName(String);

/// A name that [`UpstreamName::parse`] refuses: empty, or holding another character than
/// letters, digits, `_` and `-`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpstreamNameError {
    /// The name as written.
    pub name: String,
}

impl fmt::Display for UpstreamNameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not an upstream name: use letters, digits, `_` and `-` (it is also read as PROPOSAL_EVAL_UPSTREAM_<NAME>)",
            self.name
        )
    }
}

impl std::error::Error for UpstreamNameError {}

impl UpstreamName {
    /// Checks `name`.
    ///
    /// ```
    /// use proposal_eval::config::UpstreamName;
    /// assert_eq!(UpstreamName::parse("anthropic-eu").unwrap().env_var(), "PROPOSAL_EVAL_UPSTREAM_ANTHROPIC_EU");
    /// assert!(UpstreamName::parse("a.b").unwrap_err().to_string().contains("letters, digits"));
    /// ```
    pub fn parse(name: &str) -> Result<UpstreamName, UpstreamNameError> {
        if !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            Ok(UpstreamName(name.to_string()))
        } else {
            Err(UpstreamNameError {
                name: name.to_string(),
            })
        }
    }

    /// The name as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The environment variable that overrides this upstream.
    pub fn env_var(&self) -> String {
        format!("PROPOSAL_EVAL_UPSTREAM_{}", env_suffix(&self.0))
    }
}

/// `anthropic-eu` is `ANTHROPIC_EU` in an environment variable's name.
pub fn env_suffix(name: &str) -> String {
    name.to_ascii_uppercase().replace('-', "_")
}

impl<'de> Deserialize<'de> for UpstreamName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        UpstreamName::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// `[http]` in `proposal-eval.toml`: the upstreams that `llm.base_url()` (and
/// `llm.base_url_for(name)`) forward to while recording.
///
/// ```
/// use proposal_eval::config::SuiteConfig;
/// let config = SuiteConfig::from_toml_str(
///     r#"
/// [http]
/// upstream = "https://api.openai.com/v1"
/// [http.upstreams]
/// anthropic = "https://api.anthropic.com"
/// "#,
///     "proposal-eval.toml",
/// )
/// .unwrap();
/// assert_eq!(config.http.upstream.unwrap().as_str(), "https://api.openai.com/v1");
/// assert_eq!(config.http.upstreams.len(), 1);
/// ```
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpConfig {
    /// The default upstream, of `llm.base_url()`.
    #[serde(default, deserialize_with = "default_upstream")]
    pub upstream: Option<UpstreamUrl>,
    /// Named upstreams, of `llm.base_url_for(name)`.
    #[serde(default, deserialize_with = "named_upstreams")]
    pub upstreams: BTreeMap<UpstreamName, UpstreamUrl>,
    /// `timeout_s`: how long, in seconds, a recorded call waits for the upstream to connect, to
    /// send its answer's first byte, and between two reads of it (a stream may last longer, as
    /// long as it keeps sending). Unset: [`HttpConfig::DEFAULT_TIMEOUT_S`].
    #[serde(default, deserialize_with = "timeout_seconds")]
    pub timeout_s: Option<f64>,
}

impl HttpConfig {
    /// `timeout_s` when unset: 120 seconds.
    pub const DEFAULT_TIMEOUT_S: f64 = 120.0;

    /// The wait `timeout_s` allows.
    ///
    /// ```
    /// use proposal_eval::config::HttpConfig;
    /// assert_eq!(HttpConfig::default().timeout().as_secs(), 120);
    /// ```
    pub fn timeout(&self) -> std::time::Duration {
        // `timeout_seconds` let only a number in (0, 86400] through.
        std::time::Duration::from_secs_f64(self.timeout_s.unwrap_or(Self::DEFAULT_TIMEOUT_S))
    }
}

/// `[http] timeout_s`: a number of seconds above 0, a day at most.
fn timeout_seconds<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    let seconds = f64::deserialize(d)?;
    if seconds > 0.0 && seconds <= 86_400.0 {
        Ok(Some(seconds))
    } else {
        Err(serde::de::Error::custom(format!(
            "[http] timeout_s = {seconds}: write a number of seconds above 0 and at most 86400 (default {})",
            HttpConfig::DEFAULT_TIMEOUT_S
        )))
    }
}

/// `[http] upstream`, whose error names the key.
fn default_upstream<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<UpstreamUrl>, D::Error> {
    let text = String::deserialize(d)?;
    UpstreamUrl::parse(&text)
        .map(Some)
        .map_err(|e| serde::de::Error::custom(format!("[http] upstream: {e}")))
}

/// `[http.upstreams]`, whose errors name the upstream.
fn named_upstreams<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<BTreeMap<UpstreamName, UpstreamUrl>, D::Error> {
    BTreeMap::<UpstreamName, String>::deserialize(d)?
        .into_iter()
        .map(|(name, text)| match UpstreamUrl::parse(&text) {
            Ok(url) => Ok((name, url)),
            Err(e) => Err(serde::de::Error::custom(format!(
                "[http.upstreams] {}: {e}",
                name.as_str()
            ))),
        })
        .collect()
}

/// Where one upstream's URL comes from, to say so in messages.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub enum Resolved {
    /// The URL, and where it was set.
    Url(UpstreamUrl, &'static str),
    /// Not set anywhere.
    Unset,
    /// A named upstream that neither the config nor the environment knows.
    Unknown,
}

impl HttpConfig {
    /// The upstream `name` (`None`: the default one) under the environment's overrides:
    /// `env_default` is `PROPOSAL_EVAL_UPSTREAM`, `env_named` the `PROPOSAL_EVAL_UPSTREAM_<NAME>`
    /// variables by upper-cased name.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    #[doc(hidden)]
    pub fn resolve(
        &self,
        name: Option<&str>,
        env_default: Option<&UpstreamUrl>,
        env_named: &BTreeMap<String, UpstreamUrl>,
    ) -> Resolved {
        match name {
            None => match (env_default, &self.upstream) {
                (Some(url), _) => Resolved::Url(url.clone(), "PROPOSAL_EVAL_UPSTREAM"),
                (None, Some(url)) => Resolved::Url(url.clone(), "[http] upstream"),
                (None, None) => Resolved::Unset,
            },
            Some(name) => {
                if let Some(url) = env_named.get(&env_suffix(name)) {
                    return Resolved::Url(url.clone(), "PROPOSAL_EVAL_UPSTREAM_<NAME>");
                }
                match self.upstreams.iter().find(|(n, _)| n.as_str() == name) {
                    Some((_, url)) => Resolved::Url(url.clone(), "[http.upstreams]"),
                    None => Resolved::Unknown,
                }
            }
        }
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for UpstreamUrl {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "UpstreamUrl".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "pattern": "^https?://",
            "description": "A base URL, http:// or https://.",
        })
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for UpstreamName {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "UpstreamName".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "string", "pattern": "^[A-Za-z0-9_-]+$" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> UpstreamUrl {
        UpstreamUrl::parse(s).unwrap()
    }

    #[test]
    fn urls_are_checked() {
        assert_eq!(
            url("http://127.0.0.1:8080").as_str(),
            "http://127.0.0.1:8080"
        );
        assert_eq!(
            url("http://[::1]:8080/v1/").as_str(),
            "http://[::1]:8080/v1"
        );
        assert_eq!(
            url("https://api.x.com:443").as_str(),
            "https://api.x.com:443"
        );
        for (bad, says) in [
            ("ftp://x", "http:// or https://"),
            ("https://", "no host"),
            ("http://:80/v1", "no host"),
            ("http://[]:80/v1", "no host"),
            ("http://127.0.0.1:/v1", "has an empty port"),
            ("http://localhost:", "has an empty port"),
            ("http://[::1]:/v1", "has an empty port"),
            ("http://127.0.0.1:0/v1", "has the port `0`"),
            ("http://127.0.0.1:99999", "has the port `99999`"),
            ("http://127.0.0.1:+80", "has the port `+80`"),
            ("https://api.x.com/v1?key=1", "without query"),
            ("https://api x.com", "without query"),
        ] {
            let err = UpstreamUrl::parse(bad).unwrap_err().to_string();
            assert!(err.starts_with(&format!("`{bad}` ")), "{bad}: {err}");
            assert!(err.contains(says), "{bad}: {err}");
        }
        assert_eq!(
            UpstreamUrl::parse("http://127.0.0.1:/v1").unwrap_err().to_string(),
            "`http://127.0.0.1:/v1` has an empty port: write the port number after `:`, or leave out the `:` (e.g. \"https://api.openai.com/v1\" or \"http://127.0.0.1:8080/v1\")"
        );
        assert!(UpstreamName::parse("anthropic-eu").is_ok());
        assert_eq!(
            UpstreamName::parse("anthropic-eu").unwrap().env_var(),
            "PROPOSAL_EVAL_UPSTREAM_ANTHROPIC_EU"
        );
        assert!(UpstreamName::parse("a.b").is_err());
    }

    #[test]
    fn the_environment_overrides_the_config() {
        let config: HttpConfig = crate::toml_read::from_str(
            "upstream = \"https://a.example/v1\"\n[upstreams]\nclaude = \"https://c.example\"\n",
        )
        .unwrap();
        let none = BTreeMap::new();
        assert_eq!(
            config.resolve(None, None, &none),
            Resolved::Url(url("https://a.example/v1"), "[http] upstream")
        );
        let env = url("http://127.0.0.1:1");
        assert_eq!(
            config.resolve(None, Some(&env), &none),
            Resolved::Url(env.clone(), "PROPOSAL_EVAL_UPSTREAM")
        );
        assert_eq!(
            config.resolve(Some("claude"), None, &none),
            Resolved::Url(url("https://c.example"), "[http.upstreams]")
        );
        let named: BTreeMap<_, _> = [("CLAUDE".to_string(), env.clone())].into();
        assert_eq!(
            config.resolve(Some("claude"), None, &named),
            Resolved::Url(env, "PROPOSAL_EVAL_UPSTREAM_<NAME>")
        );
        assert_eq!(
            config.resolve(Some("other"), None, &none),
            Resolved::Unknown
        );
        assert_eq!(
            HttpConfig::default().resolve(None, None, &none),
            Resolved::Unset
        );
        let err = crate::toml_read::from_str::<HttpConfig>("upstream = \"api.openai.com\"")
            .unwrap_err()
            .to_string();
        assert!(err.contains("http:// or https://"), "{err}");
    }
}
