//! What a recording tells while it runs: cases done of total, live calls in flight, tokens,
//! estimated cost and time left, from the first live call of the process on.
//!
//! On a terminal it is one status line on stderr, redrawn in place ([`StatusLine`]); elsewhere
//! (CI, a pipe) a summary line every 15 seconds. Each test process tells its own: under nextest, one
//! process per test, the lines are those of one case each.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Mutex, Once, OnceLock};
use std::time::{Duration, Instant};

/// How often the summary line is printed where stderr is no terminal.
pub const EVERY: Duration = Duration::from_secs(15);

static TOTAL: AtomicUsize = AtomicUsize::new(0);
static DONE: AtomicUsize = AtomicUsize::new(0);
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
static TOKENS: AtomicU64 = AtomicU64::new(0);
/// Estimated cost, in billionths of a dollar; `PRICED` says whether any call had a price.
static COST_NANO_USD: AtomicU64 = AtomicU64::new(0);
static PRICED: AtomicUsize = AtomicUsize::new(0);
static STARTED: OnceLock<Instant> = OnceLock::new();
/// Of the calls in flight, the rubric judge's; and the attempt of the latest one to start, as
/// `attempt << 32 | max_attempts`.
static JUDGE_IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
static JUDGE_ATTEMPT: AtomicU64 = AtomicU64::new(0);

/// A rubric judge call in flight, on its `attempt` of `max`: counted apart until dropped.
pub struct JudgeCall(());

/// A judge call starts its `attempt` (from 1) of `max`.
pub fn judge_call(attempt: u32, max: u32) -> JudgeCall {
    JUDGE_IN_FLIGHT.fetch_add(1, Relaxed);
    JUDGE_ATTEMPT.store(u64::from(attempt) << 32 | u64::from(max), Relaxed);
    JudgeCall(())
}

impl Drop for JudgeCall {
    fn drop(&mut self) {
        JUDGE_IN_FLIGHT.fetch_sub(1, Relaxed);
    }
}

/// The harness: how many cases this run selected (the macro front end cannot know).
pub fn cases_planned(total: usize) {
    TOTAL.store(total, Relaxed);
}

/// A case has ended (replayed, recorded or failed).
pub fn case_done() {
    DONE.fetch_add(1, Relaxed);
}

/// A live call starts: on the first, the status line or the periodic summary starts too.
pub fn call_started() {
    IN_FLIGHT.fetch_add(1, Relaxed);
    static REPORTER: Once = Once::new();
    REPORTER.call_once(|| {
        STARTED.get_or_init(Instant::now);
        let _ = std::thread::Builder::new()
            .name("proposal-eval-progress".into())
            .spawn(report);
    });
}

/// A live call has ended (answered or not).
pub fn call_ended() {
    IN_FLIGHT.fetch_sub(1, Relaxed);
}

/// A live call's answer: its tokens and estimated cost, when known.
pub fn call_answered(usage: Option<&crate::recording::usage::Usage>, cost: Option<f64>) {
    if let Some(usage) = usage {
        TOKENS.fetch_add(usage.input_tokens + usage.output_tokens, Relaxed);
    }
    if let Some(cost) = cost {
        COST_NANO_USD.fetch_add((cost * 1e9).round() as u64, Relaxed);
        PRICED.fetch_add(1, Relaxed);
    }
}

/// The counts at one moment.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    pub done: usize,
    /// `None` where the number of cases is not known (the macro front end).
    pub total: Option<usize>,
    pub in_flight: usize,
    /// Of `in_flight`, the rubric judge's, with the latest one's attempt and max attempts.
    pub judge: Option<(usize, u32, u32)>,
    pub tokens: u64,
    /// `None` while no call had a price (`[pricing]`).
    pub cost_usd: Option<f64>,
    pub elapsed: Duration,
}

impl Snapshot {
    fn now() -> Snapshot {
        Snapshot {
            done: DONE.load(Relaxed),
            total: Some(TOTAL.load(Relaxed)).filter(|&t| t > 0),
            in_flight: IN_FLIGHT.load(Relaxed),
            judge: match JUDGE_IN_FLIGHT.load(Relaxed) {
                0 => None,
                n => {
                    let attempt = JUDGE_ATTEMPT.load(Relaxed);
                    Some((n, (attempt >> 32) as u32, attempt as u32))
                }
            },
            tokens: TOKENS.load(Relaxed),
            cost_usd: (PRICED.load(Relaxed) > 0).then(|| COST_NANO_USD.load(Relaxed) as f64 / 1e9),
            elapsed: STARTED.get().map_or(Duration::ZERO, Instant::elapsed),
        }
    }

    /// `recording: 12/40 cases, 8 calls in flight, 15234 tokens, ~$0.0123, about 1m 20s left`.
    pub fn line(&self) -> String {
        let cases = match self.total {
            Some(total) => format!("{}/{total} cases", self.done),
            None => format!("{} cases done", self.done),
        };
        let cost = match self.cost_usd {
            Some(usd) => format!("~${usd:.4}"),
            None => "cost unknown (no [pricing] for the model)".to_string(),
        };
        // The judge's calls apart from the agent's, and the attempt the latest one is on.
        let judge = match self.judge {
            Some((n, attempt, max)) => {
                format!(" ({n} of them the judge's, attempt {attempt} of {max})")
            }
            None => String::new(),
        };
        let mut line = format!(
            "recording: {cases}, {} call(s) in flight{judge}, {} tokens, {cost}",
            self.in_flight, self.tokens
        );
        if let Some(left) = self.time_left() {
            line.push_str(&format!(", about {} left", duration_text(left)));
        }
        line
    }

    /// The time the cases not yet done take at the pace of those done.
    fn time_left(&self) -> Option<Duration> {
        let total = self.total?;
        if self.done == 0 || self.done >= total {
            return None;
        }
        let each = self.elapsed.as_secs_f64() / self.done as f64;
        Some(Duration::from_secs_f64(each * (total - self.done) as f64))
    }
}

/// `45s`, `3m 05s`, `1h 02m`.
fn duration_text(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// The status line on a terminal (standard error), from its first drawing on.
static LINE: StatusLine = StatusLine {
    out: write_stderr,
    state: Mutex::new(LineState {
        drawn: String::new(),
        ended: false,
    }),
};

/// One line of text on the terminal, redrawn in place: cleared while something else is written
/// to the terminal and drawn again below it, and cleared for good at the end of the run. A text
/// wider than the terminal wraps, and is cleared row by row. (Written here rather than taken
/// from indicatif: with its console and portable-atomic it was about 4 % of a consumer's cold
/// build, `bench/cold-build`, for one line of text.)
struct StatusLine {
    /// Writes to the terminal (standard error; the tests' own in the tests).
    out: fn(&str),
    state: Mutex<LineState>,
}

struct LineState {
    /// What is on the screen now; empty when nothing is.
    drawn: String,
    /// The run has ended: the line is not drawn again.
    ended: bool,
}

impl StatusLine {
    fn state(&self) -> std::sync::MutexGuard<'_, LineState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Replaces the line's text with `text`.
    fn draw(&self, text: String) {
        let mut state = self.state();
        if state.ended || state.drawn == text {
            return;
        }
        let mut out = clearing(&state.drawn, columns());
        out.push_str(&text);
        (self.out)(&out);
        state.drawn = text;
    }

    /// Runs `write` (which writes to the terminal) with the line cleared, then draws it again.
    fn suspend(&self, write: impl FnOnce()) {
        let state = self.state();
        (self.out)(&clearing(&state.drawn, columns()));
        write();
        (self.out)(&state.drawn);
    }

    /// Clears the line for good.
    fn finish(&self) {
        let mut state = self.state();
        (self.out)(&clearing(&state.drawn, columns()));
        state.drawn.clear();
        state.ended = true;
    }
}

/// What clears `drawn` from a terminal `columns` wide, the cursor left at the start of its first
/// row: each row it wrapped onto is cleared, from the last up.
fn clearing(drawn: &str, columns: usize) -> String {
    if drawn.is_empty() {
        return String::new();
    }
    let rows = drawn.chars().count().div_ceil(columns.max(1)).max(1);
    let mut out = String::from("\r\x1b[2K");
    for _ in 1..rows {
        out.push_str("\x1b[1A\x1b[2K");
    }
    out
}

/// The terminal's width, or 79 columns where it does not say (what indicatif assumed).
fn columns() -> usize {
    crate::sys::stderr_columns().unwrap_or(79)
}

fn write_stderr(text: &str) {
    if text.is_empty() {
        return;
    }
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_all(text.as_bytes());
    let _ = stderr.flush();
}

/// The harness's run has ended: the status line is gone for good.
static ENDED: AtomicBool = AtomicBool::new(false);

/// The reporter thread: the status line on a terminal, the periodic summary elsewhere, for the
/// rest of the process (the status line until the harness's run ends).
fn report() {
    use std::io::IsTerminal;
    if std::io::stderr().is_terminal() {
        while !ENDED.load(Relaxed) {
            LINE.draw(Snapshot::now().line());
            std::thread::sleep(Duration::from_millis(200));
        }
        return;
    }
    periodic(EVERY, &mut std::io::stderr(), Snapshot::now, None);
}

/// Standard output passed to the terminal a whole line at a time, the status line cleared
/// while a line is written (and drawn again below it): on a terminal, the status line never
/// shares a line with libtest's output.
struct Passing {
    pipe: crate::sys::StdoutPipe,
    finished: std::sync::mpsc::Receiver<()>,
}

impl Passing {
    /// Starts passing standard output on, when both it and stderr are terminals.
    fn start() -> Option<Passing> {
        use std::io::IsTerminal;
        if !std::io::stderr().is_terminal() || !std::io::stdout().is_terminal() {
            return None;
        }
        let (reader, terminal, pipe) = crate::sys::StdoutPipe::start()?;
        let (done, finished) = std::sync::mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("proposal-eval-output".into())
            .spawn(move || {
                forward_lines(reader, terminal);
                let _ = done.send(());
            });
        if spawned.is_err() {
            pipe.restore();
            return None;
        }
        Some(Passing { pipe, finished })
    }

    /// Puts standard output back, once what was written has been passed on (a child process
    /// a case left running may hold the pipe open: its end is not waited for), and clears the
    /// status line for good.
    fn end(self) {
        self.pipe.restore();
        let _ = self.finished.recv_timeout(Duration::from_secs(2));
        ENDED.store(true, Relaxed);
        LINE.finish();
    }
}

/// Runs the harness's libtest-mimic run beside the status line ([`Passing`]); elsewhere (a
/// pipe, CI, a platform without the redirection) `run` as it is.
pub fn beside_libtest<T>(run: impl FnOnce() -> T) -> T {
    let passing = Passing::start();
    let result = run();
    if let Some(passing) = passing {
        passing.end();
    }
    result
}

/// The macro front end, whose libtest run is not ours to wrap: standard output is passed on
/// beside the status line ([`Passing`]) from the first case that records until the process
/// exits.
pub fn beside_libtest_until_exit() {
    static PASSING: std::sync::Mutex<Option<Passing>> = std::sync::Mutex::new(None);
    static STARTED: Once = Once::new();
    extern "C" fn at_exit() {
        // Nothing may unwind out of an exit hook.
        let _ = std::panic::catch_unwind(|| {
            let passing = PASSING.lock().unwrap_or_else(|p| p.into_inner()).take();
            if let Some(passing) = passing {
                passing.end();
            }
        });
    }
    STARTED.call_once(|| {
        if let Some(passing) = Passing::start() {
            *PASSING.lock().unwrap_or_else(|p| p.into_inner()) = Some(passing);
            crate::sys::at_exit(at_exit);
        }
    });
}

/// Copies `reader` to `terminal` a whole line at a time, the status line cleared meanwhile.
fn forward_lines(reader: std::fs::File, mut terminal: std::fs::File) {
    use std::io::BufRead;
    let mut reader = std::io::BufReader::new(reader);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                LINE.suspend(|| {
                    let _ = terminal.write_all(&line);
                    let _ = terminal.flush();
                });
            }
        }
    }
}

/// Writes `snapshot()`'s line to `out` every `every`; `rounds` bounds the lines (tests).
fn periodic(
    every: Duration,
    out: &mut dyn Write,
    snapshot: impl Fn() -> Snapshot,
    rounds: Option<usize>,
) {
    let mut written = 0;
    while rounds.is_none_or(|r| written < r) {
        std::thread::sleep(every);
        if writeln!(out, "{}", snapshot().line()).is_err() {
            return;
        }
        written += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot() -> Snapshot {
        Snapshot {
            done: 10,
            total: Some(40),
            in_flight: 8,
            judge: None,
            tokens: 15234,
            cost_usd: Some(0.01234),
            elapsed: Duration::from_secs(20),
        }
    }

    #[test]
    fn the_line_says_cases_calls_tokens_cost_and_time_left() {
        assert_eq!(
            snapshot().line(),
            "recording: 10/40 cases, 8 call(s) in flight, 15234 tokens, ~$0.0123, about 1m 00s left"
        );
        let unknown = Snapshot {
            total: None,
            cost_usd: None,
            ..snapshot()
        };
        assert_eq!(
            unknown.line(),
            "recording: 10 cases done, 8 call(s) in flight, 15234 tokens, cost unknown (no [pricing] for the model)"
        );
        let judging = Snapshot {
            judge: Some((1, 2, 2)),
            ..snapshot()
        };
        assert_eq!(
            judging.line(),
            "recording: 10/40 cases, 8 call(s) in flight (1 of them the judge's, attempt 2 of 2), 15234 tokens, ~$0.0123, about 1m 00s left"
        );
        assert_eq!(duration_text(Duration::from_secs(3725)), "1h 02m");
        assert_eq!(duration_text(Duration::from_secs(45)), "45s");
    }

    #[test]
    fn the_status_line_is_cleared_row_by_row_where_it_wrapped() {
        assert_eq!(clearing("", 80), "");
        assert_eq!(clearing("recording: 1/2 cases", 80), "\r\x1b[2K");
        // 93 characters on 80 columns: two rows, the second cleared, then the first.
        let wide = "x".repeat(93);
        assert_eq!(clearing(&wide, 80), "\r\x1b[2K\x1b[1A\x1b[2K");
        assert_eq!(clearing(&"x".repeat(80), 80), "\r\x1b[2K");
        assert_eq!(clearing(&"x".repeat(161), 80).matches("\x1b[2K").count(), 3);
    }

    #[test]
    fn the_status_line_is_not_drawn_again_once_finished() {
        static TERMINAL: Mutex<String> = Mutex::new(String::new());
        let line = StatusLine {
            out: |text| TERMINAL.lock().unwrap().push_str(text),
            state: Mutex::new(LineState {
                drawn: String::new(),
                ended: false,
            }),
        };
        line.draw("recording: 1/2 cases".to_string());
        line.suspend(|| TERMINAL.lock().unwrap().push_str("test a ... ok\n"));
        line.draw("recording: 2/2 cases".to_string());
        line.finish();
        line.draw("recording: 2/2 cases, again".to_string());
        line.suspend(|| TERMINAL.lock().unwrap().push_str("test b ... ok\n"));
        assert_eq!(
            *TERMINAL.lock().unwrap(),
            "recording: 1/2 cases\r\x1b[2Ktest a ... ok\nrecording: 1/2 cases\
             \r\x1b[2Krecording: 2/2 cases\r\x1b[2Ktest b ... ok\n"
        );
    }

    #[test]
    fn the_summary_is_written_every_interval() {
        let mut out = Vec::new();
        let started = Instant::now();
        periodic(Duration::from_millis(5), &mut out, snapshot, Some(3));
        assert!(started.elapsed() >= Duration::from_millis(15));
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(lines.iter().all(|l| *l == snapshot().line()), "{text}");
    }
}
