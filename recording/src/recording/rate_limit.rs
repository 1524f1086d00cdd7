//! The live calls a rate-limited API allows at once, and how fast they may start, shared by
//! every process of the run.
//!
//! **The ceiling.** A call the upstream refused for its rate (429, 503, 529) when `L` calls of
//! the run were in flight (sent, itself included) brings the limit to at most `L - 1`, and `L`
//! is the ceiling found: the limit grows back by one per run of successes as long as itself, up
//! to `PROPOSAL_EVAL_MAX_CONCURRENCY`, but stays under the ceiling; it probes the ceiling (one
//! more at once) at most once a minute ([`PROBE_EVERY`]). A probe that is not refused raises the
//! ceiling by one; a refused one finds it again. A call refused with no other in flight finds no
//! ceiling (the upstream limits its rate over time, not the calls at once): only its wait
//! applies. Halving instead (as before) kept finding the same limit the hard way: against an
//! upstream that takes 4, the limit grew past 4 every few calls and each 429 held the run back
//! for its `Retry-After`.
//!
//! **Pacing.** Where the upstream says what is left of its window (OpenAI's
//! `x-ratelimit-remaining-requests` / `-tokens` with `x-ratelimit-reset-requests` / `-tokens`,
//! Anthropic's `anthropic-ratelimit-requests-remaining` / `-tokens-remaining` with `-reset`),
//! calls start at most one per `reset / remaining` (for tokens, per the tokens a call takes), so
//! that what remains lasts until the reset; nothing left waits out the reset. No 429 is needed
//! to find the limit.
//!
//! **Waits.** A `Retry-After` (seconds or an HTTP date) or `retry-after-ms` is waited out
//! before the next call starts, in every process, when the refusal is for the rate over time: a
//! call refused alone, or with no more calls in flight than the upstream has answered at once
//! ([`State::served`]), or with rate-limit headers. A call refused with more calls in flight than
//! the upstream was ever seen to serve is refused for the calls at once, which the lower limit
//! answers: it waits out its `Retry-After` alone before it is sent again, and the calls the limit
//! allows go on meanwhile. (Holding every call then cost a whole `Retry-After` at the start of a
//! run against an upstream that takes 4 at once: 1.27x the floor at best.)
//!
//! The state lives in the run's file (`target/proposal-eval/runs/<run>/rate-limit.state`, named by
//! [`crate::layout::rate_limit_file`]), replaced whole under an OS file lock on a lock file beside
//! it; elsewhere (a program of the user's, a file that cannot be written) in this process alone.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What a finished live call (or one attempt of it) says about the upstream's rate limit.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Outcome {
    /// Refused for its rate (429, 503, 529).
    pub refused: bool,
    /// The wait asked for (`Retry-After`), or the time until a window with nothing left resets.
    pub wait: Option<Duration>,
    /// From the rate-limit headers: the time between call starts that makes what is left last
    /// until the reset. `None`: the answer has no such headers.
    pub pace: Option<Duration>,
}

impl Outcome {
    /// Answered, and nothing said about the rate.
    pub const FINE: Outcome = Outcome {
        refused: false,
        wait: None,
        pace: None,
    };
}

/// The longest wait an upstream's `Retry-After` is taken for: a longer one (a day) is an
/// upstream's way of saying no, which the retries then pass on.
const LONGEST_WAIT: Duration = Duration::from_secs(120);

/// How often the limit may try the ceiling it found.
pub const PROBE_EVERY: Duration = Duration::from_secs(60);

/// The shared state (times in milliseconds since the Unix epoch).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct State {
    /// Live calls allowed at once.
    pub limit: usize,
    /// Successes since it last changed.
    streak: usize,
    /// Calls in flight at the last refusal (0: none yet); the limit stays under it until
    /// `probe_at_ms`.
    pub ceiling: usize,
    /// The most calls in flight when one was answered: what the upstream was seen to serve at
    /// once (0: nothing answered yet).
    pub served: usize,
    probe_at_ms: u64,
    /// No call starts before this (a `Retry-After`, a window with nothing left).
    pub resume_at_ms: u64,
    /// Between two call starts, from the rate-limit headers (0: no pacing).
    pub pace_ms: u64,
    /// When the next call may start under the pacing.
    next_start_ms: u64,
}

impl State {
    fn new(max: usize) -> State {
        State {
            limit: max.max(1),
            streak: 0,
            ceiling: 0,
            served: 0,
            probe_at_ms: 0,
            resume_at_ms: 0,
            pace_ms: 0,
            next_start_ms: 0,
        }
    }

    /// The state after a call that had `in_flight` calls of the run in flight (itself included)
    /// when it was answered with `outcome`, at `now_ms`.
    pub fn after(mut self, outcome: Outcome, in_flight: usize, max: usize, now_ms: u64) -> State {
        let max = max.max(1);
        self.limit = self.limit.min(max);
        if outcome.wait.is_some() && !self.refused_for_calls_at_once(outcome, in_flight) {
            let wait = outcome.wait.unwrap_or_default();
            let until = now_ms.saturating_add(wait.min(LONGEST_WAIT).as_millis() as u64);
            self.resume_at_ms = self.resume_at_ms.max(until);
        }
        if !outcome.refused {
            self.served = self.served.max(in_flight);
        }
        if outcome.refused && in_flight > 1 {
            self.limit = self.limit.min(in_flight - 1);
            self.ceiling = in_flight;
            self.probe_at_ms = now_ms.saturating_add(PROBE_EVERY.as_millis() as u64);
            self.streak = 0;
        } else if outcome.refused {
            // Refused alone: no number of calls at once is at fault, but the rate over time,
            // which the wait it asks for answers.
            self.streak = 0;
        } else if self.limit < max {
            // At the most allowed there is nothing to grow to: no run of successes is counted.
            self.streak += 1;
            if self.streak >= self.limit {
                self.streak = 0;
                self.grow(max, now_ms);
            }
        }
        if let Some(pace) = outcome.pace {
            // Rounded up: a pace a little short would spend the window before its reset.
            self.pace_ms = pace.min(LONGEST_WAIT).as_micros().div_ceil(1000) as u64;
        }
        self
    }

    /// Whether `outcome` refused a call for the number of calls at once (more in flight,
    /// `in_flight`, than the upstream was seen to serve, and no rate-limit headers), not for the
    /// rate over time: its wait is the refused call's alone.
    pub fn refused_for_calls_at_once(&self, outcome: Outcome, in_flight: usize) -> bool {
        outcome.refused && outcome.pace.is_none() && in_flight > 1 && in_flight > self.served
    }

    /// The wait a call refused with `outcome`, `in_flight` calls in flight, takes alone before
    /// it is sent again: its `Retry-After` when it was refused for the calls at once; zero
    /// otherwise (a wait for the rate holds every call, [`State::after`]).
    pub fn wait_alone(&self, outcome: Outcome, in_flight: usize) -> Duration {
        match outcome.wait {
            Some(wait) if self.refused_for_calls_at_once(outcome, in_flight) => {
                wait.min(LONGEST_WAIT)
            }
            _ => Duration::ZERO,
        }
    }

    /// One more at once after a full run of successes: freely under the ceiling; to the
    /// ceiling (and the ceiling one further) at most once per [`PROBE_EVERY`].
    fn grow(&mut self, max: usize, now_ms: u64) {
        if self.limit >= max {
            return;
        }
        if self.ceiling == 0 || self.limit + 1 < self.ceiling {
            self.limit += 1;
        } else if now_ms >= self.probe_at_ms {
            self.limit += 1;
            self.ceiling = self.limit + 1;
            self.probe_at_ms = now_ms.saturating_add(PROBE_EVERY.as_millis() as u64);
        }
    }

    /// A call starts at `now_ms`: when it may go (the pacing's next start, a `Retry-After`),
    /// and the state with the start after it moved on by the pace.
    fn start(mut self, now_ms: u64) -> (State, u64) {
        let at = now_ms.max(self.resume_at_ms);
        if self.pace_ms == 0 {
            return (self, at);
        }
        let at = at.max(self.next_start_ms);
        self.next_start_ms = at + self.pace_ms;
        (self, at)
    }

    fn parse(text: &str) -> Option<State> {
        let mut parts = text.split_whitespace().map(str::parse::<u64>);
        let mut next = || parts.next()?.ok();
        Some(State {
            limit: next()? as usize,
            streak: next()? as usize,
            ceiling: next()? as usize,
            probe_at_ms: next()?,
            resume_at_ms: next()?,
            pace_ms: next()?,
            next_start_ms: next()?,
            // Last, and optional: a state written before it was kept reads as nothing served.
            served: next().unwrap_or(0) as usize,
        })
    }

    fn text(&self) -> String {
        format!(
            "{} {} {} {} {} {} {} {}\n",
            self.limit,
            self.streak,
            self.ceiling,
            self.probe_at_ms,
            self.resume_at_ms,
            self.pace_ms,
            self.next_start_ms,
            self.served
        )
    }
}

/// This process's state, where the run's file cannot be used.
static PROCESS: Mutex<Option<State>> = Mutex::new(None);

/// The state now (the limit no more than `max`).
pub fn current(max: usize) -> State {
    let state = match shared() {
        Some(file) => file.read(),
        None => *PROCESS.lock().unwrap_or_else(|p| p.into_inner()),
    };
    let mut state = state.unwrap_or_else(|| State::new(max));
    state.limit = state.limit.clamp(1, max.max(1));
    state
}

/// Counts a finished live call (or a refused attempt) that had `in_flight()` calls of the run in
/// flight, itself included (every process's: asked only when the state needs it). The wait the
/// refused call takes alone before it is sent again ([`State::wait_alone`]).
pub fn report(outcome: Outcome, in_flight: impl FnOnce() -> usize, max: usize) -> Duration {
    // A plain success at the most allowed, once the upstream was seen to serve the most
    // allowed at once, changes nothing that is read: no write. (Until then, a success with more
    // in flight than served so far is written, at most `max` times in a run.)
    let in_flight = if outcome == Outcome::FINE {
        let state = current(max);
        if state.limit >= max && state.served >= max {
            return Duration::ZERO;
        }
        let in_flight = in_flight();
        if state.limit >= max && in_flight <= state.served {
            return Duration::ZERO;
        }
        in_flight
    } else {
        in_flight()
    };
    let now = now_ms();
    update(max, |state| {
        let alone = state.wait_alone(outcome, in_flight);
        (state.after(outcome, in_flight, max, now), alone)
    })
}

/// A live call may start: waits out a `Retry-After` and the pacing's turn; the time waited.
pub fn wait_turn(state: &State, max: usize) -> Duration {
    let now = now_ms();
    let at = if state.pace_ms == 0 {
        now.max(state.resume_at_ms)
    } else {
        update(max, |s| s.start(now))
    };
    let wait = Duration::from_millis(at.saturating_sub(now));
    if !wait.is_zero() {
        std::thread::sleep(wait);
    }
    wait
}

/// Replaces the state with `f` of it: the run's file under its lock, else this process's.
fn update<T>(max: usize, f: impl Fn(State) -> (State, T)) -> T {
    let fresh = |state: Option<State>| state.unwrap_or_else(|| State::new(max));
    if let Some(file) = shared() {
        if let Ok(t) = file.update(|state| f(fresh(state))) {
            return t;
        }
    }
    let mut mine = PROCESS.lock().unwrap_or_else(|p| p.into_inner());
    let (state, t) = f(fresh(*mine));
    *mine = Some(state);
    t
}

pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn shared() -> Option<&'static StateFile> {
    static FILE: OnceLock<Option<StateFile>> = OnceLock::new();
    FILE.get_or_init(|| Some(StateFile(crate::layout::rate_limit_file()?)))
        .as_ref()
}

/// One run's state: `<run>.state` and `<run>.lock`.
pub struct StateFile(crate::files::RunFile);

impl StateFile {
    /// The state; `None` before the first call's outcome.
    pub fn read(&self) -> Option<State> {
        State::parse(&self.0.read()?)
    }

    /// Replaces the state with what `f` makes of it, under the lock; returns what `f` returns
    /// beside it.
    pub fn update<T>(&self, f: impl FnOnce(Option<State>) -> (State, T)) -> std::io::Result<T> {
        self.0.update(|text| {
            let (state, made) = f(text.as_deref().and_then(State::parse));
            (state.text(), made)
        })
    }
}

/// What an upstream's answer says about its rate limit: a refusal for its rate (429, 503, 529)
/// with the wait it asks for, and the pace its rate-limit headers allow.
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub fn outcome_of(status: u16, header: &dyn Fn(&str) -> Option<String>) -> Outcome {
    let (pace, exhausted) = pace_of(header, tokens_per_call(), chrono::Utc::now());
    let wait = match (retry_after(header), exhausted) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    Outcome {
        refused: matches!(status, 429 | 503 | 529),
        wait,
        pace,
    }
}

/// Whether a window counts requests or tokens.
#[derive(Clone, Copy)]
enum Counts {
    Requests,
    Tokens,
}

/// The windows the headers of OpenAI and Anthropic tell of: what remains, and when it resets.
const WINDOWS: &[(&str, &str, Counts)] = &[
    (
        "x-ratelimit-remaining-requests",
        "x-ratelimit-reset-requests",
        Counts::Requests,
    ),
    (
        "x-ratelimit-remaining-tokens",
        "x-ratelimit-reset-tokens",
        Counts::Tokens,
    ),
    (
        "anthropic-ratelimit-requests-remaining",
        "anthropic-ratelimit-requests-reset",
        Counts::Requests,
    ),
    (
        "anthropic-ratelimit-tokens-remaining",
        "anthropic-ratelimit-tokens-reset",
        Counts::Tokens,
    ),
    (
        "anthropic-ratelimit-input-tokens-remaining",
        "anthropic-ratelimit-input-tokens-reset",
        Counts::Tokens,
    ),
    (
        "anthropic-ratelimit-output-tokens-remaining",
        "anthropic-ratelimit-output-tokens-reset",
        Counts::Tokens,
    ),
];

/// From the rate-limit headers: the time between call starts that makes what remains of each
/// window last until its reset (`None`: no such headers), and the wait until the reset of a
/// window with nothing left (`None`: none is empty). A token window is counted in calls of
/// `tokens_per_call` (the average so far; unknown before the first answer with a usage).
pub fn pace_of(
    header: &dyn Fn(&str) -> Option<String>,
    tokens_per_call: Option<u64>,
    now: chrono::DateTime<chrono::Utc>,
) -> (Option<Duration>, Option<Duration>) {
    let mut pace: Option<Duration> = None;
    let mut exhausted: Option<Duration> = None;
    for (remaining, reset, counts) in WINDOWS {
        let Some(left) = header(remaining).and_then(|v| v.trim().parse::<f64>().ok()) else {
            continue;
        };
        let reset = header(reset).and_then(|v| reset_in(&v, now));
        let calls_left = match counts {
            Counts::Requests => Some(left),
            Counts::Tokens => tokens_per_call
                .filter(|&t| t > 0)
                .map(|t| left / t as f64)
                .or((left <= 0.0).then_some(0.0)),
        };
        let (Some(calls_left), Some(reset)) = (calls_left, reset) else {
            continue;
        };
        if calls_left < 1.0 {
            exhausted = exhausted.max(Some(reset));
        } else {
            pace = pace.max(Some(reset.div_f64(calls_left)));
        }
    }
    // An empty window is waited out, not paced: after its reset it is full again.
    if pace.is_none() && exhausted.is_some() {
        pace = Some(Duration::ZERO);
    }
    (pace, exhausted)
}

/// When a window resets: OpenAI's duration (`1s`, `6m0s`, `59.5ms`, `1h2m3s`, or plain
/// seconds), or Anthropic's RFC 3339 time.
fn reset_in(value: &str, now: chrono::DateTime<chrono::Utc>) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    if let Ok(at) = chrono::DateTime::parse_from_rfc3339(value) {
        let left = at.timestamp_millis() - now.timestamp_millis();
        return Some(Duration::from_millis(left.max(0) as u64));
    }
    let mut total = 0.0;
    let mut rest = value;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter(|&n| n > 0)?;
        let number: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let (unit, len) = [("ms", 0.001), ("h", 3600.0), ("m", 60.0), ("s", 1.0)]
            .iter()
            .find(|(unit, _)| rest.starts_with(unit))
            .map(|(unit, scale)| (*scale, unit.len()))?;
        total += number * unit;
        rest = &rest[len..];
    }
    Some(Duration::from_secs_f64(total))
}

std::thread_local! {
    /// What the model called on this thread told of its last HTTP answer's rate limit.
    static OBSERVED: std::cell::Cell<Option<Outcome>> = const { std::cell::Cell::new(None) };
}

/// Runs a live model's call, and returns with its answer what the model told of the rate limit
/// on the way ([`observe`]), on this thread.
pub fn observing<T>(call: impl FnOnce() -> T) -> (T, Option<Outcome>) {
    OBSERVED.with(|o| o.set(None));
    let answer = call();
    (answer, OBSERVED.with(|o| o.take()))
}

/// A model of this crate ([`crate::openai::ChatCompletions`]) tells what its HTTP answer said
/// of the rate limit (an answered call's headers; a refusal travels in its error).
#[cfg_attr(not(feature = "openai"), allow(dead_code))]
pub fn observe(outcome: Outcome) {
    OBSERVED.with(|o| o.set(Some(outcome)));
}

/// The tokens a call took on average so far (a moving average), for the token windows.
static TOKENS_PER_CALL: AtomicU64 = AtomicU64::new(0);

/// A live call's answer took `tokens` (input and output).
pub fn note_tokens(tokens: u64) {
    let before = TOKENS_PER_CALL.load(Relaxed);
    let average = if before == 0 {
        tokens
    } else {
        (before * 3 + tokens) / 4
    };
    TOKENS_PER_CALL.store(average.max(1), Relaxed);
}

fn tokens_per_call() -> Option<u64> {
    Some(TOKENS_PER_CALL.load(Relaxed)).filter(|&t| t > 0)
}

/// `retry-after-ms` (milliseconds), else `Retry-After` (seconds, or an HTTP date).
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub fn retry_after(header: &dyn Fn(&str) -> Option<String>) -> Option<Duration> {
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

    fn refused() -> Outcome {
        Outcome {
            refused: true,
            ..Outcome::FINE
        }
    }

    #[test]
    fn a_refusal_finds_a_ceiling_that_is_probed_once_a_minute() {
        let s = State::new(8);
        // Refused with 8 in flight, then (the others coming back) with 7, 6, 5: the limit is 4.
        let s = [8, 7, 6, 5]
            .into_iter()
            .fold(s, |s, l| s.after(refused(), l, 8, 0));
        assert_eq!((s.limit, s.ceiling), (4, 5));
        // Runs of successes do not take it to the ceiling within the minute.
        let s = (0..40).fold(s, |s, _| s.after(Outcome::FINE, 4, 8, 1_000));
        assert_eq!(s.limit, 4);
        // After it, once: to 5, and the ceiling moves on to 6, not before another minute.
        let s = (0..4).fold(s, |s, _| s.after(Outcome::FINE, 4, 8, 61_000));
        assert_eq!((s.limit, s.ceiling), (5, 6));
        let s = (0..50).fold(s, |s, _| s.after(Outcome::FINE, 5, 8, 62_000));
        assert_eq!(s.limit, 5);
        // The probe refused at 5: back to 4.
        let s = s.after(refused(), 5, 8, 63_000);
        assert_eq!((s.limit, s.ceiling), (4, 5));
        // Refused alone: the rate over time is at fault, not the calls at once.
        assert_eq!(s.after(refused(), 1, 8, 63_000), State { streak: 0, ..s });
        // Never below one, never above the most allowed; no ceiling: grows freely.
        let mut free = State::new(3).after(refused(), 2, 3, 0);
        assert_eq!(free.limit, 1);
        free.ceiling = 0;
        let full = (0..100).fold(free, |s, _| s.after(Outcome::FINE, 1, 3, 0));
        assert_eq!(full.limit, 3);
    }

    #[test]
    fn the_longest_wait_asked_for_stands_and_pacing_spaces_starts() {
        let wait = |ms| Outcome {
            wait: Some(Duration::from_millis(ms)),
            ..refused()
        };
        // Four answered at once, then refused with no more in flight: the rate, which holds
        // every call.
        let s = State::new(4).after(Outcome::FINE, 4, 4, 900);
        let s = s.after(wait(2000), 4, 4, 1000);
        assert_eq!(s.resume_at_ms, 3000);
        let s = s.after(wait(10), 3, 4, 1500);
        assert_eq!(s.resume_at_ms, 3000);
        assert_eq!(State::parse(&s.text()), Some(s));
        // A pace of 50 ms: starts at 3000 (the resume), 3050, 3100.
        let paced = Outcome {
            pace: Some(Duration::from_millis(50)),
            ..Outcome::FINE
        };
        let s = s.after(paced, 1, 4, 1500);
        let (s, first) = s.start(2000);
        let (s, second) = s.start(2000);
        let (_, third) = s.start(3070);
        assert_eq!((first, second, third), (3000, 3050, 3100));
    }

    #[test]
    fn a_refusal_for_the_calls_at_once_waits_alone_one_for_the_rate_holds_every_call() {
        let wait = Outcome {
            wait: Some(Duration::from_secs(1)),
            ..refused()
        };
        // Nothing answered yet, refused with 8 in flight: the calls at once are at fault; the
        // limit comes down and no other call is held.
        let s = State::new(8).after(wait, 8, 8, 0);
        assert!(State::new(8).refused_for_calls_at_once(wait, 8));
        assert_eq!(State::new(8).wait_alone(wait, 8), Duration::from_secs(1));
        assert_eq!((s.limit, s.resume_at_ms), (7, 0));
        // Four answered at once: the upstream serves four.
        let s = s.after(Outcome::FINE, 4, 8, 200);
        assert_eq!(s.served, 4);
        // Refused with six in flight, more than it serves: alone again.
        assert!(s.refused_for_calls_at_once(wait, 6));
        assert_eq!(s.after(wait, 6, 8, 300).resume_at_ms, 0);
        // Refused with four in flight, or alone: the rate over time; every call waits.
        assert!(!s.refused_for_calls_at_once(wait, 4));
        assert_eq!(s.wait_alone(wait, 4), Duration::ZERO);
        assert_eq!(s.after(wait, 4, 8, 300).resume_at_ms, 1300);
        assert_eq!(s.after(wait, 1, 8, 300).resume_at_ms, 1300);
        // With rate-limit headers the upstream tells of a window: every call waits.
        let told = Outcome {
            pace: Some(Duration::from_millis(50)),
            ..wait
        };
        assert!(!s.refused_for_calls_at_once(told, 6));
        assert_eq!(s.wait_alone(told, 6), Duration::ZERO);
        assert_eq!(s.after(told, 6, 8, 300).resume_at_ms, 1300);
        // A state written before `served` was kept (seven numbers) reads as nothing served; one
        // with it reads whole, `served` last.
        let old = State::parse("4 0 5 60000 0 0 0\n").unwrap();
        assert_eq!((old.limit, old.ceiling, old.served), (4, 5, 0));
        assert_eq!(State::parse(&s.text()), Some(s));
        assert!(s.text().trim_end().ends_with(" 4"), "{}", s.text());
        assert_eq!(State::parse("4 0 5 60000 0 0"), None);
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
        assert_eq!(outcome_of(200, &none), Outcome::FINE);
        assert_eq!(outcome_of(500, &none), Outcome::FINE);
        for status in [429, 503, 529] {
            assert_eq!(outcome_of(status, &none), refused());
        }
        let after = headers(&[("Retry-After", "3")]);
        assert_eq!(outcome_of(429, &after).wait, Some(Duration::from_secs(3)));
        let ms = headers(&[("retry-after-ms", "250"), ("retry-after", "9")]);
        assert_eq!(retry_after(&ms), Some(Duration::from_millis(250)));
        let past = headers(&[("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")]);
        assert_eq!(retry_after(&past), Some(Duration::ZERO));
        let garbled = headers(&[("retry-after", "soon")]);
        assert_eq!(retry_after(&garbled), None);
    }

    #[test]
    fn openai_and_anthropic_windows_pace_the_calls() {
        let now: chrono::DateTime<chrono::Utc> = "2026-12-06T10:00:00Z".parse().unwrap();
        let pace = |pairs: &[(&str, &str)], tokens| {
            let pairs: Vec<(String, String)> = pairs
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect();
            let (pace, wait) = pace_of(
                &move |name: &str| {
                    pairs
                        .iter()
                        .find(|(n, _)| n == name)
                        .map(|(_, v)| v.clone())
                },
                tokens,
                now,
            );
            // In whole milliseconds: a float's last digit is no part of the rule.
            let ms = |d: Option<Duration>| d.map(|d| (d.as_secs_f64() * 1000.0).round() as u64);
            (ms(pace), ms(wait))
        };
        let ms = |n: u64| n;
        // 20 requests left for 1 s: one per 50 ms.
        let openai = [
            ("x-ratelimit-remaining-requests", "20"),
            ("x-ratelimit-reset-requests", "1s"),
        ];
        assert_eq!(pace(&openai, None), (Some(ms(50)), None));
        // Tokens: 10,000 left for 6 minutes at 1,000 a call: one per 36 s; the slower wins.
        let tokens = [
            ("x-ratelimit-remaining-requests", "100"),
            ("x-ratelimit-reset-requests", "6m0s"),
            ("x-ratelimit-remaining-tokens", "10000"),
            ("x-ratelimit-reset-tokens", "6m"),
        ];
        assert_eq!(pace(&tokens, Some(1000)), (Some(ms(36_000)), None));
        assert_eq!(pace(&tokens, None), (Some(ms(3_600)), None));
        // Nothing left: wait for the reset.
        let empty = [
            ("x-ratelimit-remaining-requests", "0"),
            ("x-ratelimit-reset-requests", "59.5ms"),
        ];
        assert_eq!(pace(&empty, None), (Some(0), Some(ms(60))));
        let anthropic = [
            ("anthropic-ratelimit-requests-remaining", "4"),
            ("anthropic-ratelimit-requests-reset", "2026-12-06T10:00:02Z"),
        ];
        assert_eq!(pace(&anthropic, None), (Some(ms(500)), None));
        assert_eq!(pace(&[], None), (None, None));
        assert_eq!(reset_in("1h2m3s", now), Some(Duration::from_secs(3723)));
        assert_eq!(reset_in("soon", now), None);
    }
}
