//! The live calls a rate-limited API allows at once, shared by every process of the run.
//!
//! Additive increase, multiplicative decrease: a call the upstream refused for its rate (429,
//! 503, 529) or that says nothing is left (a `*ratelimit*remaining*` header of `0`) halves the
//! number of live calls allowed at once, never below one; each run of successes as long as the
//! limit (one full window of calls) raises it by one, up to `PROPOSAL_EVAL_MAX_CONCURRENCY`. A
//! `Retry-After` (seconds or an HTTP date) or `retry-after-ms` is waited out before the next
//! call starts, in every process.
//!
//! Calls that were already in flight when the limit was halved are answered by the same
//! overloaded upstream: their refusals do not halve it again (each halving starts an epoch; a
//! call refused in an older epoch only adds its wait).
//!
//! The state lives in `target/proposal-eval/rate-limit/<run>.state` (a test binary of one run,
//! [`crate::env::run_id`]), replaced whole (temp file and rename) under an OS file lock on a lock
//! file beside it; elsewhere (a program of the user's, a file that cannot be written) in this
//! process alone.

use std::path::Path;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What a finished live call says about the upstream's rate limit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Outcome {
    /// Answered, with capacity left.
    Fine,
    /// Refused for its rate, or answered with nothing left: wait this long (if said) before the
    /// next call. Only the HTTP proxy sees statuses and headers: an `llm.complete` model's
    /// answer is `Fine` or an error.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    Limited(Option<Duration>),
}

/// The longest wait an upstream's `Retry-After` is taken for: a longer one (a day) is an
/// upstream's way of saying no, which the retries then pass on.
const LONGEST_WAIT: Duration = Duration::from_secs(120);

/// The shared state: live calls allowed at once, successes since it last changed, halvings so
/// far, and when the next call may start (milliseconds since the Unix epoch).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct State {
    pub(crate) limit: usize,
    streak: usize,
    pub(crate) epoch: u64,
    pub(crate) resume_at_ms: u64,
}

impl State {
    fn new(max: usize) -> State {
        State {
            limit: max.max(1),
            streak: 0,
            epoch: 0,
            resume_at_ms: 0,
        }
    }

    /// The state after a call that started in `epoch` ended with `outcome`, at `now_ms`.
    pub(crate) fn after(mut self, outcome: Outcome, epoch: u64, max: usize, now_ms: u64) -> State {
        let max = max.max(1);
        self.limit = self.limit.min(max);
        match outcome {
            Outcome::Fine => {
                self.streak += 1;
                if self.streak >= self.limit {
                    self.limit = (self.limit + 1).min(max);
                    self.streak = 0;
                }
            }
            Outcome::Limited(wait) => {
                if epoch >= self.epoch {
                    // Rounded up: a limit one above what the upstream takes (5 where it takes
                    // 4) comes back to 3, not 2.
                    self.limit = self.limit.div_ceil(2);
                    self.epoch += 1;
                }
                self.streak = 0;
                if let Some(wait) = wait {
                    let until_ms = wait.min(LONGEST_WAIT).as_millis() as u64;
                    let until = now_ms.saturating_add(until_ms);
                    self.resume_at_ms = self.resume_at_ms.max(until);
                }
            }
        }
        self
    }

    fn parse(text: &str) -> Option<State> {
        let mut parts = text.split_whitespace().map(str::parse::<u64>);
        let mut next = || parts.next()?.ok();
        Some(State {
            limit: next()? as usize,
            streak: next()? as usize,
            epoch: next()?,
            resume_at_ms: next()?,
        })
    }

    fn text(&self) -> String {
        format!(
            "{} {} {} {}\n",
            self.limit, self.streak, self.epoch, self.resume_at_ms
        )
    }
}

/// This process's state, where the run's file cannot be used.
static PROCESS: Mutex<Option<State>> = Mutex::new(None);

/// The state now (the limit no more than `max`).
pub(crate) fn current(max: usize) -> State {
    let state = match shared() {
        Some(file) => file.read(),
        None => *PROCESS.lock().unwrap_or_else(|p| p.into_inner()),
    };
    let mut state = state.unwrap_or_else(|| State::new(max));
    state.limit = state.limit.clamp(1, max.max(1));
    state
}

/// Counts a finished live call that started in `epoch`.
pub(crate) fn report(outcome: Outcome, epoch: u64, max: usize) {
    let now = now_ms();
    let update = |state: Option<State>| {
        state
            .unwrap_or_else(|| State::new(max))
            .after(outcome, epoch, max, now)
    };
    if let Some(file) = shared() {
        if file.update(update).is_ok() {
            return;
        }
    }
    let mut mine = PROCESS.lock().unwrap_or_else(|p| p.into_inner());
    *mine = Some(update(*mine));
}

/// How long to wait before the next call may start.
pub(crate) fn wait_left(state: &State) -> Duration {
    Duration::from_millis(state.resume_at_ms.saturating_sub(now_ms()))
}

pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn shared() -> Option<&'static StateFile> {
    static FILE: OnceLock<Option<StateFile>> = OnceLock::new();
    FILE.get_or_init(|| {
        let dir = crate::layout::report_dir_of_test_binary()?.join("rate-limit");
        let run = crate::env::run_id()?;
        Some(StateFile::new(&dir, run))
    })
    .as_ref()
}

/// One run's state: `<run>.state` and `<run>.lock`.
pub(crate) struct StateFile(crate::files::RunFile);

impl StateFile {
    pub(crate) fn new(dir: &Path, run: &str) -> StateFile {
        StateFile(crate::files::RunFile::new(dir, run, "state"))
    }

    /// The state; `None` before the first call's outcome.
    pub(crate) fn read(&self) -> Option<State> {
        State::parse(&self.0.read()?)
    }

    /// Replaces the state with `f` of it, under the lock.
    pub(crate) fn update(&self, f: impl FnOnce(Option<State>) -> State) -> std::io::Result<State> {
        self.0.update(|text| {
            let state = f(text.as_deref().and_then(State::parse));
            (state.text(), state)
        })
    }
}

/// What an upstream's answer says about its rate limit: a refusal for its rate (429, 503, 529)
/// with the wait it asks for, a success that says nothing is left, or fine.
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) fn outcome_of(status: u16, header: &dyn Fn(&str) -> Option<String>) -> Outcome {
    let wait = retry_after(header);
    if matches!(status, 429 | 503 | 529) {
        return Outcome::Limited(wait);
    }
    if exhausted(header) {
        return Outcome::Limited(wait);
    }
    Outcome::Fine
}

/// The headers that say how much is left: OpenAI's `x-ratelimit-remaining-requests` and
/// `-tokens`, Anthropic's `anthropic-ratelimit-requests-remaining`, `-tokens-remaining`,
/// `-input-tokens-remaining` and `-output-tokens-remaining`.
#[cfg_attr(not(feature = "http"), allow(dead_code))]
const REMAINING: &[&str] = &[
    "x-ratelimit-remaining-requests",
    "x-ratelimit-remaining-tokens",
    "anthropic-ratelimit-requests-remaining",
    "anthropic-ratelimit-tokens-remaining",
    "anthropic-ratelimit-input-tokens-remaining",
    "anthropic-ratelimit-output-tokens-remaining",
];

#[cfg_attr(not(feature = "http"), allow(dead_code))]
fn exhausted(header: &dyn Fn(&str) -> Option<String>) -> bool {
    REMAINING
        .iter()
        .filter_map(|name| header(name))
        .any(|v| v.trim().parse::<f64>().is_ok_and(|n| n <= 0.0))
}

/// `retry-after-ms` (milliseconds), else `Retry-After` (seconds, or an HTTP date).
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) fn retry_after(header: &dyn Fn(&str) -> Option<String>) -> Option<Duration> {
    let seconds = |v: &str| {
        v.trim()
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite() && *s >= 0.0)
    };
    if let Some(ms) = header("retry-after-ms").as_deref().and_then(seconds) {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = header("retry-after")?;
    if let Some(s) = seconds(&value) {
        return Some(Duration::from_secs_f64(s));
    }
    let at = chrono::DateTime::parse_from_rfc2822(value.trim()).ok()?;
    let left = at.timestamp_millis() - chrono::Utc::now().timestamp_millis();
    Some(Duration::from_millis(left.max(0) as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_halves_once_per_epoch_and_successes_grow_it_back() {
        let s = State::new(8);
        let s = s.after(Outcome::Limited(None), 0, 8, 0);
        assert_eq!((s.limit, s.epoch), (4, 1));
        // Another call of the same window refused: no second halving.
        let s = s.after(Outcome::Limited(None), 0, 8, 0);
        assert_eq!(s.limit, 4);
        let s = s.after(Outcome::Limited(None), 1, 8, 0);
        assert_eq!(s.limit, 2);
        // A run of two successes (the limit) adds one; then three more add one.
        let s = s
            .after(Outcome::Fine, 2, 8, 0)
            .after(Outcome::Fine, 2, 8, 0);
        assert_eq!(s.limit, 3);
        let s = (0..3).fold(s, |s, _| s.after(Outcome::Fine, 2, 8, 0));
        assert_eq!(s.limit, 4);
        let s = s.after(Outcome::Fine, 2, 8, 0);
        let s = (0..4).fold(s, |s, _| s.after(Outcome::Fine, 2, 8, 0));
        assert_eq!(s.limit, 5);
        assert_eq!(s.after(Outcome::Limited(None), 2, 8, 0).limit, 3);
        // Never below one, never above the most allowed.
        let one = (0..5).fold(s, |s, i| s.after(Outcome::Limited(None), 2 + i, 8, 0));
        assert_eq!(one.limit, 1);
        let full = (0..100).fold(one, |s, _| s.after(Outcome::Fine, 9, 8, 0));
        assert_eq!(full.limit, 8);
    }

    #[test]
    fn the_longest_wait_asked_for_stands() {
        let s = State::new(4).after(Outcome::Limited(Some(Duration::from_secs(2))), 0, 4, 1000);
        assert_eq!(s.resume_at_ms, 3000);
        let s = s.after(
            Outcome::Limited(Some(Duration::from_millis(10))),
            0,
            4,
            1500,
        );
        assert_eq!(s.resume_at_ms, 3000);
        assert_eq!(State::parse(&s.text()), Some(s));
    }

    #[test]
    fn rate_limit_answers_are_read_from_status_and_headers() {
        let headers = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case(name))
                    .map(|(_, v)| v.to_string())
            }
        };
        let none = headers(&[]);
        assert_eq!(outcome_of(200, &none), Outcome::Fine);
        assert_eq!(outcome_of(500, &none), Outcome::Fine);
        for status in [429, 503, 529] {
            assert_eq!(outcome_of(status, &none), Outcome::Limited(None));
        }
        let after = headers(&[("Retry-After", "3")]);
        assert_eq!(
            outcome_of(429, &after),
            Outcome::Limited(Some(Duration::from_secs(3)))
        );
        let ms = headers(&[("retry-after-ms", "250"), ("retry-after", "9")]);
        assert_eq!(retry_after(&ms), Some(Duration::from_millis(250)));
        let past = headers(&[("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")]);
        assert_eq!(retry_after(&past), Some(Duration::ZERO));
        let left = headers(&[("x-ratelimit-remaining-requests", "0")]);
        assert_eq!(outcome_of(200, &left), Outcome::Limited(None));
        let some = headers(&[("anthropic-ratelimit-requests-remaining", "12")]);
        assert_eq!(outcome_of(200, &some), Outcome::Fine);
        let garbled = headers(&[("retry-after", "soon")]);
        assert_eq!(retry_after(&garbled), None);
    }
}
