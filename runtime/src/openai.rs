//! A ready live [`Model`] for an OpenAI-compatible chat completions endpoint (feature `openai`).
//!
//! ```no_run
//! use proposal_eval::openai::ChatCompletions;
//! use proposal_eval::{proposal_eval, Case, Llm};
//! use serde_json::{json, Value};
//!
//! // Built only when a case records: reads OPENAI_API_KEY and OPENAI_BASE_URL then.
//! fn live_model() -> ChatCompletions {
//!     ChatCompletions::new().model("gpt-4o-mini")
//! }
//!
//! #[proposal_eval(fixtures = "../fixtures/quickstart", model = live_model)]
//! fn payments(case: &Case, llm: &mut Llm) -> proposal_eval::Result<Value> {
//!     let reply = llm.complete(&json!({
//!         "messages": [{ "role": "user", "content": case.input["message"] }],
//!         "response_format": { "type": "json_object" },
//!     }))?;
//!     let content = reply["choices"][0]["message"]["content"].as_str().unwrap_or("{}");
//!     Ok(serde_json::from_str::<Value>(content)?["proposals"].clone())
//! }
//! # fn main() {}
//! ```

use crate::recording::model::{Model, ModelError};
use crate::recording::rate_limit::Outcome;
use crate::recording::usage::{Completion, Usage};
use chrono::{DateTime, NaiveDateTime, Utc};
use serde_json::Value;
use std::fmt;
use std::sync::OnceLock;
use std::time::Duration;

/// The endpoint used when neither `OPENAI_BASE_URL` nor [`ChatCompletions::base_url`] says
/// another.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// The longest body excerpt an error shows.
const EXCERPT_CHARS: usize = 500;

/// A live model that POSTs each request of `llm.complete` as the JSON body of
/// `{base_url}/chat/completions` and returns the response's JSON body unchanged (`choices`,
/// `usage`, ...).
///
/// - The API key is `OPENAI_API_KEY` and the endpoint `OPENAI_BASE_URL` (default
///   `https://api.openai.com/v1`), both read by [`new`](ChatCompletions::new) and overridable
///   with [`api_key`](ChatCompletions::api_key) and [`base_url`](ChatCompletions::base_url).
///   The key is sent as `Authorization: Bearer ...`, never in the request body, so a recording
///   cannot hold it; no error message or `Debug` output shows it either.
/// - A refusal for the rate (429, 503, 529) is not tried again here: its status and headers
///   go with the error to `llm.complete`, whose limit on live calls (shared by every test
///   process of the run) waits out its `Retry-After` and sends the call again; an answered
///   call's rate-limit headers (`x-ratelimit-remaining-*`, `x-ratelimit-reset-*`) pace the
///   calls that follow. See "Recording at the speed of the API" in docs/reference/recordings.md.
/// - A 408, another 5xx, a timeout or a failed connection is tried again, up to
///   [`max_attempts`](ChatCompletions::max_attempts) attempts in all (default 4). Between
///   attempts it waits what the response's `Retry-After` (seconds or an HTTP date) or
///   `retry-after-ms` says; without one, [`backoff`](ChatCompletions::backoff) (default 1 s)
///   doubled after each attempt, plus up to a quarter of it at random. A wait longer than
///   [`max_wait`](ChatCompletions::max_wait) (default 60 s) is not waited: the call fails
///   saying so.
/// - Each attempt has a [`timeout`](ChatCompletions::timeout) (default 120 s) for the whole
///   exchange, from connecting to the last byte of the body, and, when set, a
///   [`read_timeout`](ChatCompletions::read_timeout) for connecting, for the first byte of the
///   answer and between reads (a server that takes the call and never answers fails then, not
///   at the end of the whole attempt's time).
///
/// ```
/// use proposal_eval::openai::ChatCompletions;
/// use std::time::Duration;
///
/// let model = ChatCompletions::new()
///     .base_url("http://127.0.0.1:8080/v1")
///     .api_key("sk-test")
///     .model("gpt-4o-mini")
///     .timeout(Duration::from_secs(30))
///     .max_attempts(3);
/// // The key is never shown.
/// assert!(!format!("{model:?}").contains("sk-test"));
/// ```
pub struct ChatCompletions {
    base_url: String,
    api_key: Option<String>,
    model: Option<String>,
    timeout: Duration,
    read_timeout: Option<Duration>,
    max_attempts: u32,
    backoff: Duration,
    max_wait: Duration,
    agent: OnceLock<ureq::Agent>,
}

impl ChatCompletions {
    /// A model for the endpoint in `OPENAI_BASE_URL` (default `https://api.openai.com/v1`) with
    /// the key in `OPENAI_API_KEY`. A missing key is an error of the first call, not here, so
    /// a suite can name this model and still replay without a key.
    pub fn new() -> ChatCompletions {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        ChatCompletions {
            base_url: var("OPENAI_BASE_URL")
                .unwrap_or_else(|| DEFAULT_BASE_URL.to_string())
                .trim_end_matches('/')
                .to_string(),
            api_key: var("OPENAI_API_KEY").map(|k| k.trim().to_string()),
            model: None,
            timeout: Duration::from_secs(120),
            read_timeout: None,
            max_attempts: 4,
            backoff: Duration::from_secs(1),
            max_wait: Duration::from_secs(60),
            agent: OnceLock::new(),
        }
    }

    /// Sends to this endpoint instead of `OPENAI_BASE_URL`'s: the part before
    /// `/chat/completions`, e.g. `http://127.0.0.1:11434/v1`.
    pub fn base_url(mut self, url: impl Into<String>) -> ChatCompletions {
        self.base_url = url.into().trim_end_matches('/').to_string();
        self
    }

    /// Uses this key instead of `OPENAI_API_KEY`'s (an empty one is none).
    pub fn api_key(mut self, key: impl Into<String>) -> ChatCompletions {
        let key = key.into().trim().to_string();
        self.api_key = (!key.is_empty()).then_some(key);
        self
    }

    /// The `model` field put in a request that has none (a request's own `model` wins).
    pub fn model(mut self, name: impl Into<String>) -> ChatCompletions {
        self.model = Some(name.into());
        self
    }

    /// How long one attempt may take, from connecting to the end of the response (default
    /// 120 s).
    pub fn timeout(mut self, timeout: Duration) -> ChatCompletions {
        self.timeout = timeout;
        self.agent = OnceLock::new();
        self
    }

    /// How long an attempt may wait with nothing moving: to resolve the host and connect, for
    /// each write of the request, for the first byte of the answer, and between two reads of it
    /// (default: no bound but [`timeout`](ChatCompletions::timeout)'s). An
    /// answer that keeps coming may take longer, up to `timeout`; a server that never answers
    /// fails the attempt after this long.
    ///
    /// ```
    /// use proposal_eval::openai::ChatCompletions;
    /// use std::time::Duration;
    ///
    /// // Up to 5 minutes for a long answer, but 20 s of silence ends the attempt.
    /// let model = ChatCompletions::new()
    ///     .timeout(Duration::from_secs(300))
    ///     .read_timeout(Duration::from_secs(20));
    /// # let _ = model;
    /// ```
    pub fn read_timeout(mut self, silence: Duration) -> ChatCompletions {
        self.read_timeout = Some(silence);
        self.agent = OnceLock::new();
        self
    }

    /// Attempts per call, the first one included (default 4; at least 1).
    pub fn max_attempts(mut self, attempts: u32) -> ChatCompletions {
        self.max_attempts = attempts.max(1);
        self
    }

    /// The wait before the first retry when the server gives no `Retry-After` (default 1 s);
    /// doubled for each later one.
    pub fn backoff(mut self, first: Duration) -> ChatCompletions {
        self.backoff = first;
        self
    }

    /// The longest wait between attempts (default 60 s). A server that asks for more with
    /// `Retry-After` gets no retry: the call fails, naming the wait it asked for.
    pub fn max_wait(mut self, longest: Duration) -> ChatCompletions {
        self.max_wait = longest;
        self
    }

    fn url(&self) -> String {
        format!("{}/chat/completions", self.base_url)
    }

    fn agent(&self) -> &ureq::Agent {
        self.agent.get_or_init(|| {
            ureq::Agent::config_builder()
                .timeout_global(Some(self.timeout))
                .timeout_resolve(self.read_timeout)
                .timeout_connect(self.read_timeout)
                .timeout_per_write(self.read_timeout)
                .timeout_per_read(self.read_timeout)
                // Error statuses are answers to read (body, Retry-After), not transport errors.
                .http_status_as_error(false)
                .build()
                .into()
        })
    }

    /// The request as sent: with [`model`](ChatCompletions::model) when it names none.
    fn body(&self, request: &Value) -> Value {
        let mut body = request.clone();
        if let (Some(model), Some(fields)) = (&self.model, body.as_object_mut()) {
            fields
                .entry("model")
                .or_insert_with(|| Value::String(model.clone()));
        }
        body
    }

    /// The whole call: attempts, waits between them, the final error (with what its answer
    /// said of the rate limit). A refusal for the rate is not tried again here: the shared
    /// limit of `llm.complete` does.
    fn call(&self, body: &Value) -> Result<Value, (Error, Option<Outcome>)> {
        let key = self.api_key.as_deref().ok_or((Error::NoApiKey, None))?;
        let url = self.url();
        let mut attempt = 1;
        loop {
            let failure = match self.attempt(&url, key, body) {
                Ok((response, rate)) => {
                    crate::recording::rate_limit::observe(rate);
                    return Ok(response);
                }
                Err(failure) => *failure,
            };
            let Some(asked) = failure
                .retry
                .filter(|_| !failure.rate.is_some_and(|r| r.refused))
            else {
                return Err((failure.error, failure.rate));
            };
            let failure = Failure {
                retry: Some(asked),
                ..failure
            };
            if attempt >= self.max_attempts {
                return Err((
                    Error::Exhausted {
                        attempts: attempt,
                        last: Box::new(failure.error),
                    },
                    failure.rate,
                ));
            }
            let wait = match asked {
                Some(wait) if wait > self.max_wait => {
                    return Err((
                        Error::WaitTooLong {
                            asked: wait,
                            max_wait: self.max_wait,
                            last: Box::new(failure.error),
                        },
                        failure.rate,
                    ))
                }
                Some(wait) => wait,
                None => jittered(self.backoff.saturating_mul(1 << (attempt - 1).min(16)))
                    .min(self.max_wait),
            };
            std::thread::sleep(wait);
            attempt += 1;
        }
    }

    /// One POST: the answer and what its headers say of the rate limit; on failure, whether to
    /// try again, and after what wait if the server said.
    fn attempt(
        &self,
        url: &str,
        key: &str,
        body: &Value,
    ) -> Result<(Value, Outcome), Box<Failure>> {
        let sent = self
            .agent()
            .post(url)
            .header("authorization", &format!("Bearer {key}"))
            .send_json(body);
        let mut response = match sent {
            Ok(response) => response,
            Err(e) => return Err(Box::new(self.transport(url, e))),
        };
        let status = response.status();
        let wait = retry_after(response.headers(), Utc::now());
        let rate = {
            let headers = response.headers();
            let header = |name: &str| {
                headers
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string)
            };
            crate::recording::rate_limit::outcome_of(status.as_u16(), &header)
        };
        let text = match response.body_mut().read_to_string() {
            Ok(text) => text,
            Err(e) => return Err(Box::new(self.transport(url, e))),
        };
        if status.is_success() {
            return serde_json::from_str(&text)
                .map(|value| (value, rate))
                .map_err(|e| {
                    Box::new(Failure {
                        retry: None,
                        rate: None,
                        error: Error::NotJson {
                            url: url.to_string(),
                            message: e.to_string(),
                            excerpt: excerpt(&text, key),
                        },
                    })
                });
        }
        let code = status.as_u16();
        let retry = (code == 408 || code == 429 || status.is_server_error()).then_some(wait);
        Err(Box::new(Failure {
            retry,
            rate: Some(rate),
            error: Error::Status {
                url: url.to_string(),
                status: code,
                reason: status.canonical_reason().unwrap_or("").to_string(),
                excerpt: excerpt(&text, key),
            },
        }))
    }

    fn transport(&self, url: &str, e: ureq::Error) -> Failure {
        // A connection that failed, broke or timed out may work the next time; a bad URL, a
        // refused TLS certificate or an unknown host will not.
        let retry = matches!(
            e,
            ureq::Error::Timeout(_) | ureq::Error::Io(_) | ureq::Error::ConnectionFailed
        );
        let error = match (e, self.read_timeout) {
            (
                ureq::Error::Timeout(
                    ureq::Timeout::Resolve
                    | ureq::Timeout::Connect
                    | ureq::Timeout::PerWrite
                    | ureq::Timeout::PerRead,
                ),
                Some(after),
            ) => Error::Silent {
                url: url.to_string(),
                after,
            },
            (ureq::Error::Timeout(_), _) => Error::Timeout {
                url: url.to_string(),
                after: self.timeout,
            },
            (other, _) => Error::Transport {
                url: url.to_string(),
                message: other.to_string(),
            },
        };
        Failure {
            retry: retry.then_some(None),
            rate: None,
            error,
        }
    }
}

impl Default for ChatCompletions {
    /// [`ChatCompletions::new`].
    fn default() -> ChatCompletions {
        ChatCompletions::new()
    }
}

impl fmt::Debug for ChatCompletions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChatCompletions")
            .field("url", &self.url())
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("model", &self.model)
            .field("timeout", &self.timeout)
            .field("read_timeout", &self.read_timeout)
            .field("max_attempts", &self.max_attempts)
            .field("backoff", &self.backoff)
            .field("max_wait", &self.max_wait)
            .finish()
    }
}

impl Model for ChatCompletions {
    fn complete(&self, request: &Value) -> Result<Value, ModelError> {
        self.complete_with_usage(request).map(|c| c.response)
    }

    /// The response, and the tokens its `usage` object reports (`prompt_tokens`,
    /// `completion_tokens`), of the model the response names, else of the one the request asked
    /// for: what `[pricing."MODEL"]` prices.
    fn complete_with_usage(&self, request: &Value) -> Result<Completion, ModelError> {
        let body = self.body(request);
        let response = self.call(&body).map_err(|(error, rate)| {
            let mut e = ModelError::from_error(error);
            e.rate = rate;
            e
        })?;
        Ok(Completion {
            usage: usage(&response, &body),
            response,
        })
    }
}

/// The usage a chat completion reports, `None` when it reports no token count.
fn usage(response: &Value, sent: &Value) -> Option<Usage> {
    let counts = &response["usage"];
    let (input, output) = (
        counts["prompt_tokens"].as_u64(),
        counts["completion_tokens"].as_u64(),
    );
    if input.is_none() && output.is_none() {
        return None;
    }
    let usage = Usage::new(input.unwrap_or(0), output.unwrap_or(0));
    match response["model"].as_str().or(sent["model"].as_str()) {
        Some(model) => Some(usage.with_model(model)),
        None => Some(usage),
    }
}

/// One failed attempt: `retry` is `None` for a failure another attempt cannot fix, otherwise
/// the wait the server asked for, if it did.
struct Failure {
    retry: Option<Option<Duration>>,
    /// What an HTTP answer said of the rate limit; `None` without one.
    rate: Option<Outcome>,
    error: Error,
}

/// Why a [`ChatCompletions`] call failed. The messages never hold the API key: a server that
/// echoes it has it replaced by `<redacted>` in the body excerpt.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// No API key: neither `OPENAI_API_KEY` nor [`ChatCompletions::api_key`].
    NoApiKey,
    /// The server answered with an error status that a retry does not fix (a 400, a 401...).
    Status {
        /// The URL posted to.
        url: String,
        /// The HTTP status code.
        status: u16,
        /// The status's standard reason phrase (`Too Many Requests`), or empty.
        reason: String,
        /// The start of the response body, on one line.
        excerpt: String,
    },
    /// An attempt took longer than [`ChatCompletions::timeout`].
    Timeout {
        /// The URL posted to.
        url: String,
        /// The timeout.
        after: Duration,
    },
    /// Nothing moved for [`ChatCompletions::read_timeout`]: no connection, the request not
    /// taken, no first byte of the answer, or no next one.
    Silent {
        /// The URL posted to.
        url: String,
        /// The read timeout.
        after: Duration,
    },
    /// No answer: the connection failed or broke.
    Transport {
        /// The URL posted to.
        url: String,
        /// What the HTTP client said.
        message: String,
    },
    /// A success status whose body is not JSON.
    NotJson {
        /// The URL posted to.
        url: String,
        /// What the JSON parser said.
        message: String,
        /// The start of the body, on one line.
        excerpt: String,
    },
    /// Every attempt failed with a failure worth retrying; `last` is the last one.
    Exhausted {
        /// Attempts made.
        attempts: u32,
        /// The last attempt's failure.
        last: Box<Error>,
    },
    /// The server asked (`Retry-After`) for a longer wait than [`ChatCompletions::max_wait`].
    WaitTooLong {
        /// The wait the server asked for.
        asked: Duration,
        /// The longest wait allowed.
        max_wait: Duration,
        /// The failure that came with the request to wait.
        last: Box<Error>,
    },
}

impl Error {
    /// Whether the attempts ran out of time (the read or the whole-attempt timeout), the last
    /// one's failure deciding.
    pub(crate) fn timed_out(&self) -> bool {
        match self {
            Error::Silent { .. } | Error::Timeout { .. } => true,
            Error::Exhausted { last, .. } | Error::WaitTooLong { last, .. } => last.timed_out(),
            _ => false,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoApiKey => write!(
                f,
                "no OpenAI API key: set OPENAI_API_KEY, or give one with ChatCompletions::api_key"
            ),
            Error::Status {
                url,
                status,
                reason,
                excerpt,
            } => {
                write!(f, "POST {url}: HTTP {status}")?;
                if !reason.is_empty() {
                    write!(f, " {reason}")?;
                }
                if excerpt.is_empty() {
                    write!(f, " (empty body)")
                } else {
                    write!(f, ": {excerpt}")
                }
            }
            Error::Timeout { url, after } => write!(
                f,
                "POST {url}: no complete answer within the timeout of {} (ChatCompletions::timeout)",
                seconds(*after)
            ),
            Error::Silent { url, after } => write!(
                f,
                "POST {url}: nothing moved for {} (ChatCompletions::read_timeout: to connect, to send, for the answer's first byte and between reads)",
                seconds(*after)
            ),
            Error::Transport { url, message } => write!(f, "POST {url}: {message}"),
            Error::NotJson {
                url,
                message,
                excerpt,
            } => write!(
                f,
                "POST {url}: the answer is not JSON ({message}); it starts: {excerpt}"
            ),
            Error::Exhausted { attempts, last } => write!(
                f,
                "{last} (gave up after {attempts} attempt{}; ChatCompletions::max_attempts)",
                if *attempts == 1 { "" } else { "s" }
            ),
            Error::WaitTooLong {
                asked,
                max_wait,
                last,
            } => write!(
                f,
                "{last} (the server asks to retry after {}, longer than the {} this model waits; ChatCompletions::max_wait)",
                seconds(*asked),
                seconds(*max_wait)
            ),
        }
    }
}

impl std::error::Error for Error {}

fn seconds(d: Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

/// The first [`EXCERPT_CHARS`] characters of `body` on one line, with `key` replaced.
fn excerpt(body: &str, key: &str) -> String {
    let one_line = body.split_whitespace().collect::<Vec<_>>().join(" ");
    let scrubbed = if key.is_empty() {
        one_line
    } else {
        one_line.replace(key, "<redacted>")
    };
    match scrubbed.char_indices().nth(EXCERPT_CHARS) {
        Some((cut, _)) => format!("{}...", &scrubbed[..cut]),
        None => scrubbed,
    }
}

/// `d` plus up to a quarter of it, at random: clients that failed together do not all come back
/// at the same instant.
fn jittered(d: Duration) -> Duration {
    use std::hash::{BuildHasher, Hasher};
    let random = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    d + d.mul_f64((random % 1000) as f64 / 4000.0)
}

/// The wait a response asks for: `retry-after-ms` (OpenAI's, in milliseconds), else
/// `Retry-After` in seconds or as an HTTP date (a date in the past is no wait).
fn retry_after(headers: &ureq::http::HeaderMap, now: DateTime<Utc>) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok()) {
        if ms.is_finite() && ms >= 0.0 {
            return Some(Duration::from_secs_f64(ms / 1000.0));
        }
    }
    parse_retry_after(header("retry-after")?, now)
}

/// A `Retry-After` value: delay seconds, or an HTTP date in any of the three formats HTTP/1.1
/// allows (IMF-fixdate, RFC 850, asctime).
fn parse_retry_after(value: &str, now: DateTime<Utc>) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let date = DateTime::parse_from_rfc2822(value)
        .map(|d| d.with_timezone(&Utc))
        .ok()
        .or_else(|| {
            ["%A, %d-%b-%y %H:%M:%S GMT", "%a %b %e %H:%M:%S %Y"]
                .iter()
                .find_map(|format| NaiveDateTime::parse_from_str(value, format).ok())
                .map(|naive| naive.and_utc())
        })?;
    Some((date - now).to_std().unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        "2026-11-23T07:00:00Z".parse().unwrap()
    }

    #[test]
    fn retry_after_reads_seconds_and_the_three_http_dates() {
        let parse = |v: &str| parse_retry_after(v, now());
        assert_eq!(parse("3"), Some(Duration::from_secs(3)));
        assert_eq!(parse(" 0 "), Some(Duration::ZERO));
        assert_eq!(parse("1.5"), Some(Duration::from_millis(1500)));
        assert_eq!(
            parse("Mon, 23 Nov 2026 07:00:07 GMT"),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            parse("Monday, 23-Nov-26 07:00:05 GMT"),
            Some(Duration::from_secs(5))
        );
        assert_eq!(
            parse("Mon Nov 23 07:01:00 2026"),
            Some(Duration::from_secs(60))
        );
        // A date already past means: now.
        assert_eq!(parse("Sun, 22 Nov 2026 07:00:00 GMT"), Some(Duration::ZERO));
        assert_eq!(parse("-1"), None);
        assert_eq!(parse("soon"), None);
        assert_eq!(parse(""), None);
    }

    #[test]
    fn retry_after_ms_wins_over_retry_after() {
        let mut headers = ureq::http::HeaderMap::new();
        headers.insert("retry-after", "20".parse().unwrap());
        assert_eq!(retry_after(&headers, now()), Some(Duration::from_secs(20)));
        headers.insert("retry-after-ms", "250".parse().unwrap());
        assert_eq!(
            retry_after(&headers, now()),
            Some(Duration::from_millis(250))
        );
        assert_eq!(retry_after(&ureq::http::HeaderMap::new(), now()), None);
    }

    #[test]
    fn excerpts_are_one_bounded_line_without_the_key() {
        let body = "{\n  \"error\": \"Incorrect API key provided: sk-secret-123\"\n}";
        assert_eq!(
            excerpt(body, "sk-secret-123"),
            "{ \"error\": \"Incorrect API key provided: <redacted>\" }"
        );
        let long = "é".repeat(EXCERPT_CHARS + 10);
        let cut = excerpt(&long, "k");
        assert_eq!(cut.chars().count(), EXCERPT_CHARS + 3);
        assert!(cut.ends_with("..."));
    }

    #[test]
    fn usage_comes_from_the_usage_object_with_the_model_that_answered() {
        use serde_json::json;
        let sent = json!({ "model": "gpt-4o-mini", "messages": [] });
        let answered = json!({ "model": "gpt-4o-mini-2024-07-18", "usage": { "prompt_tokens": 70, "completion_tokens": 17, "total_tokens": 87 } });
        assert_eq!(
            usage(&answered, &sent),
            Some(Usage::new(70, 17).with_model("gpt-4o-mini-2024-07-18"))
        );
        // A compatible server that names no model: the request's.
        let unnamed = json!({ "usage": { "prompt_tokens": 5, "completion_tokens": 1 } });
        assert_eq!(
            usage(&unnamed, &sent),
            Some(Usage::new(5, 1).with_model("gpt-4o-mini"))
        );
        assert_eq!(usage(&unnamed, &json!({})), Some(Usage::new(5, 1)));
        assert_eq!(usage(&json!({ "choices": [] }), &sent), None);
    }

    #[test]
    fn jitter_adds_at_most_a_quarter() {
        for _ in 0..100 {
            let d = jittered(Duration::from_millis(1000));
            assert!(d >= Duration::from_millis(1000) && d < Duration::from_millis(1250));
        }
    }

    #[test]
    fn the_model_name_fills_a_request_without_one() {
        use serde_json::json;
        let model = ChatCompletions::new().model("m");
        assert_eq!(
            model.body(&json!({ "messages": [] })),
            json!({ "model": "m", "messages": [] })
        );
        assert_eq!(
            model.body(&json!({ "model": "own" })),
            json!({ "model": "own" })
        );
        assert_eq!(ChatCompletions::new().body(&json!({})), json!({}));
    }

    #[test]
    fn debug_hides_the_key_and_a_missing_key_says_where_to_set_it() {
        let model = ChatCompletions::new()
            .api_key("sk-hidden")
            .base_url("http://127.0.0.1:9/v1/")
            .model("m");
        assert_eq!(model.url(), "http://127.0.0.1:9/v1/chat/completions");
        let shown = format!("{model:?}");
        assert!(
            !shown.contains("sk-hidden") && shown.contains("<set>"),
            "{shown}"
        );
        let no_key = ChatCompletions::new().base_url("http://127.0.0.1:9/v1");
        let no_key = ChatCompletions {
            api_key: None,
            ..no_key
        };
        let message = no_key
            .complete(&serde_json::json!({}))
            .unwrap_err()
            .to_string();
        assert!(message.contains("OPENAI_API_KEY"), "{message}");
    }
}
