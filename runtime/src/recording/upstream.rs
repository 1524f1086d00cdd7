//! Where recorded HTTP calls go: `[http]` in the suite config, overridden by
//! `PROPOSAL_EVAL_UPSTREAM` (the default upstream) and `PROPOSAL_EVAL_UPSTREAM_<NAME>` (a named
//! one, its name upper-cased with `-` as `_`).
//!
//! The keys are read whether or not the runtime's `http` feature is on, so a suite config means
//! the same in every build.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// An upstream's base URL: `http://` or `https://`, a host, and an optional path prefix
/// (`https://api.openai.com/v1`); no query, no fragment. Kept without a trailing `/`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UpstreamUrl(String);

impl UpstreamUrl {
    /// Checks `text` as an upstream base URL.
    ///
    /// ```
    /// use proposal_eval::config::UpstreamUrl;
    /// assert_eq!(UpstreamUrl::parse("https://api.openai.com/v1/").unwrap().as_str(), "https://api.openai.com/v1");
    /// assert!(UpstreamUrl::parse("api.openai.com").unwrap_err().contains("http:// or https://"));
    /// ```
    pub fn parse(text: &str) -> Result<UpstreamUrl, String> {
        let text = text.trim();
        let rest = text
            .strip_prefix("https://")
            .or_else(|| text.strip_prefix("http://"))
            .ok_or_else(|| {
                format!("`{text}` is not an upstream URL: it must start with http:// or https:// (e.g. \"https://api.openai.com/v1\")")
            })?;
        let host = rest.split('/').next().unwrap_or("");
        if host.is_empty() || host.starts_with(':') {
            return Err(format!(
                "`{text}` has no host: write e.g. \"https://api.openai.com/v1\""
            ));
        }
        if let Some(bad) = rest
            .chars()
            .find(|c| c.is_whitespace() || matches!(c, '?' | '#'))
        {
            return Err(format!(
                "`{text}` holds {bad:?}: an upstream is a base URL without query or fragment (e.g. \"https://api.openai.com/v1\")"
            ));
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

impl UpstreamName {
    /// Checks `name`.
    pub fn parse(name: &str) -> Result<UpstreamName, String> {
        if !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            Ok(UpstreamName(name.to_string()))
        } else {
            Err(format!(
                "`{name}` is not an upstream name: use letters, digits, `_` and `-` (it is also read as PROPOSAL_EVAL_UPSTREAM_<NAME>)"
            ))
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
pub(crate) fn env_suffix(name: &str) -> String {
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
    #[serde(default)]
    pub upstream: Option<UpstreamUrl>,
    /// Named upstreams, of `llm.base_url_for(name)`.
    #[serde(default)]
    pub upstreams: BTreeMap<UpstreamName, UpstreamUrl>,
}

/// Where one upstream's URL comes from, to say so in messages.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) enum Resolved {
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
    pub(crate) fn resolve(
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
        for (bad, says) in [
            ("ftp://x", "http:// or https://"),
            ("https://", "no host"),
            ("http://:80/v1", "no host"),
            ("https://api.x.com/v1?key=1", "without query"),
            ("https://api x.com", "without query"),
        ] {
            let err = UpstreamUrl::parse(bad).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
        assert!(UpstreamName::parse("anthropic-eu").is_ok());
        assert_eq!(
            UpstreamName::parse("anthropic-eu").unwrap().env_var(),
            "PROPOSAL_EVAL_UPSTREAM_ANTHROPIC_EU"
        );
        assert!(UpstreamName::parse("a.b").is_err());
    }

    #[test]
    fn the_environment_overrides_the_config() {
        let config: HttpConfig = toml::from_str(
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
        let err = toml::from_str::<HttpConfig>("upstream = \"api.openai.com\"")
            .unwrap_err()
            .to_string();
        assert!(err.contains("http:// or https://"), "{err}");
    }
}
