//! Standard output and error that a closed pipe ends quietly.
//!
//! `println!` panics when stdout is a pipe whose reader has gone (`cargo proposal-eval report |
//! head -1`), which turns a finished command into a panic message and exit code 101. Every
//! subcommand prints through `outln!` / `out!` instead: a write that fails stops further
//! output, and the command still finishes its work (a `prune --yes` piped into `head` deletes
//! every orphan, not only those it managed to print) and exits with its own status. A failure
//! other than a broken pipe (a full disk behind `> file`) is reported once at the end and makes
//! the exit status 1. Messages to stderr ignore write errors: there is nowhere left to report
//! them.

use std::fmt;
use std::io::{ErrorKind, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Set once a write to stdout failed: nothing more is written.
static CLOSED: AtomicBool = AtomicBool::new(false);
/// The first write error that was not a broken pipe.
static FAILURE: Mutex<Option<String>> = Mutex::new(None);

/// `print!` that never panics.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::out::write(format_args!($($arg)*))
    };
}

/// `println!` that never panics.
macro_rules! outln {
    () => {
        $crate::out::write(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::out::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprintln!` that never panics.
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::out::write_err(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprint!` that never panics.
macro_rules! err {
    ($($arg:tt)*) => {
        $crate::out::write_err(format_args!($($arg)*))
    };
}

pub(crate) use {err, errln, out, outln};

/// Writes to stdout unless an earlier write failed; a failure ends the output.
pub fn write(args: fmt::Arguments<'_>) {
    if CLOSED.load(Ordering::Relaxed) {
        return;
    }
    if let Err(e) = std::io::stdout().lock().write_fmt(args) {
        fail(e);
    }
}

/// Writes to stderr, ignoring a failure.
pub fn write_err(args: fmt::Arguments<'_>) {
    let _ = std::io::stderr().lock().write_fmt(args);
}

fn fail(e: std::io::Error) {
    CLOSED.store(true, Ordering::Relaxed);
    if e.kind() != ErrorKind::BrokenPipe {
        let mut failure = FAILURE.lock().unwrap_or_else(|p| p.into_inner());
        failure.get_or_insert_with(|| e.to_string());
    }
}

/// Flushes stdout (a prompt before reading an answer); a failure ends the output.
pub fn flush() {
    if !CLOSED.load(Ordering::Relaxed) {
        if let Err(e) = std::io::stdout().lock().flush() {
            fail(e);
        }
    }
}

/// Flushes stdout and turns the command's exit code into the process's: 1 when output was lost
/// to anything but a closed pipe.
pub fn finish(code: u8) -> u8 {
    if !CLOSED.load(Ordering::Relaxed) {
        if let Err(e) = std::io::stdout().lock().flush() {
            fail(e);
        }
    }
    let failure = FAILURE.lock().unwrap_or_else(|p| p.into_inner()).take();
    match failure {
        Some(e) => {
            errln!("error: cannot write the output: {e}");
            code.max(1)
        }
        None => code,
    }
}
