//! The [`Model`] trait a live client implements, and its error.

use crate::recording::usage::Completion;
use serde_json::Value;
use std::fmt;

/// A live model: the user's client, called only while recording.
///
/// Closures of the right shape are models too:
///
/// ```
/// use proposal_eval::{Model, ModelError};
/// use serde_json::{json, Value};
///
/// let echo = |request: &Value| -> Result<Value, ModelError> { Ok(json!({ "echo": request })) };
/// assert_eq!(echo.complete(&json!(1)).unwrap(), json!({ "echo": 1 }));
/// ```
pub trait Model: Send + Sync {
    /// Sends one request to the model and returns its response.
    fn complete(&self, request: &Value) -> Result<Value, ModelError>;

    /// Sends one request and returns the response with the tokens the call used, which are
    /// recorded and priced (`[pricing]`). What [`Llm`](crate::Llm) calls.
    ///
    /// The default reads the usage from the response ([`Usage::from_response`]: OpenAI's and
    /// Anthropic's shapes). A model whose response does not carry it (one that returns only the
    /// message's content) implements this method too, with the usage its API reported:
    ///
    /// ```
    /// use proposal_eval::{Completion, Model, ModelError, Usage};
    /// use serde_json::{json, Value};
    ///
    /// struct ContentOnly;
    /// impl Model for ContentOnly {
    ///     fn complete(&self, request: &Value) -> Result<Value, ModelError> {
    ///         Ok(self.complete_with_usage(request)?.response)
    ///     }
    ///     fn complete_with_usage(&self, _request: &Value) -> Result<Completion, ModelError> {
    ///         // The API answered {"choices": [...], "usage": {...}}; the code wants the content.
    ///         Ok(Completion { response: json!("hello"), usage: Some(Usage::new(12, 1).with_model("m")) })
    ///     }
    /// }
    /// assert_eq!(ContentOnly.complete_with_usage(&json!({})).unwrap().usage.unwrap().input_tokens, 12);
    /// ```
    ///
    /// [`Usage::from_response`]: crate::Usage::from_response
    fn complete_with_usage(&self, request: &Value) -> Result<Completion, ModelError> {
        self.complete(request).map(Completion::new)
    }
}

impl<F> Model for F
where
    F: Fn(&Value) -> Result<Value, ModelError> + Send + Sync,
{
    fn complete(&self, request: &Value) -> Result<Value, ModelError> {
        self(request)
    }
}

impl Model for Box<dyn Model> {
    fn complete(&self, request: &Value) -> Result<Value, ModelError> {
        (**self).complete(request)
    }

    fn complete_with_usage(&self, request: &Value) -> Result<Completion, ModelError> {
        (**self).complete_with_usage(request)
    }
}

/// A live model's failure (network, quota, bad answer…).
#[derive(Debug)]
pub struct ModelError {
    message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
    /// What the HTTP answer said about the rate limit, when the model told it.
    #[doc(hidden)]
    pub rate: Option<crate::recording::rate_limit::Outcome>,
}

impl ModelError {
    /// A failure described by a message.
    ///
    /// ```
    /// let e = proposal_eval::ModelError::new("rate limited");
    /// assert_eq!(e.to_string(), "rate limited");
    /// ```
    pub fn new(message: impl fmt::Display) -> ModelError {
        ModelError {
            message: message.to_string(),
            source: None,
            rate: None,
        }
    }

    /// A failure caused by another error, whose message it shows.
    pub fn from_error(error: impl std::error::Error + Send + Sync + 'static) -> ModelError {
        ModelError {
            message: error.to_string(),
            source: Some(Box::new(error)),
            rate: None,
        }
    }

    /// The same failure, its message followed by `note` (its source and rate kept).
    #[doc(hidden)]
    pub fn noted(mut self, note: &str) -> ModelError {
        self.message.push_str(note);
        self
    }

    /// The HTTP answer that failed the call: its status and headers. While recording, a refusal
    /// for the rate (429, 503, 529) is told to the limit on live calls that every test process
    /// of the run shares, which waits out its `Retry-After` and sends the call again (up to 6
    /// times in all); the rate-limit headers (`x-ratelimit-*`, `anthropic-ratelimit-*`) pace the
    /// calls. A model that does not tell its status is never sent again.
    ///
    /// ```
    /// use proposal_eval::ModelError;
    /// let e = ModelError::new("HTTP 429: slow down").with_http(429, &[("retry-after", "2")]);
    /// assert_eq!(e.to_string(), "HTTP 429: slow down");
    /// ```
    pub fn with_http(mut self, status: u16, headers: &[(&str, &str)]) -> ModelError {
        let header = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.to_string())
        };
        self.rate = Some(crate::recording::rate_limit::outcome_of(status, &header));
        self
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ModelError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// Builds the live model; called at most once per case, and only when the case records.
pub type ModelFactory = std::sync::Arc<dyn Fn() -> Box<dyn Model> + Send + Sync>;
