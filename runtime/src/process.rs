//! The one way the shell runs a user's program (a `code_judge` script, a draft generator): its
//! input written on stdin, its output read to a bound, a timeout, and on unix its own process
//! group, killed whole when the program ends or runs out of time, so a grandchild that still
//! holds a pipe can neither hang the caller nor outlive it.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// A program to run: its command line, where, what it reads and how long it may take.
#[derive(Clone, Debug)]
pub struct Program<'a> {
    /// The program and its arguments.
    pub argv: &'a [String],
    /// The working folder; a relative program path with a folder in it (`judges/iou.py`) is
    /// found from here too. `None`: the caller's.
    pub dir: Option<&'a Path>,
    /// Written to its stdin, which is then closed. A program that exits without reading it is
    /// not an error.
    pub stdin: Vec<u8>,
    /// Killed (with its process group) after this long.
    pub timeout: Duration,
    /// Stdout beyond this many bytes is dropped (and [`Output::stdout_overflow`] set).
    pub stdout_limit: usize,
    /// Only the last this many bytes of stderr are kept.
    pub stderr_limit: usize,
}

/// What a program that ended in time left behind.
#[derive(Debug)]
pub struct Output {
    /// How it ended.
    pub status: ExitStatus,
    /// Its stdout, at most `stdout_limit` bytes.
    pub stdout: Vec<u8>,
    /// Whether stdout was longer than the limit.
    pub stdout_overflow: bool,
    /// The tail of its stderr.
    pub stderr: Vec<u8>,
}

/// Why a program gave no [`Output`].
#[derive(Debug)]
pub enum ProcessError {
    /// The command line is empty.
    Empty,
    /// The working folder does not exist (the OS would report it as a missing program).
    NoDir(PathBuf),
    /// The program could not be started.
    Spawn(std::io::Error),
    /// It ran out of time and was killed.
    Timeout,
}

/// Runs `program` to its end or its timeout.
pub fn run(program: Program<'_>) -> Result<Output, ProcessError> {
    let Some(first) = program.argv.first() else {
        return Err(ProcessError::Empty);
    };
    let mut command = match program.dir {
        Some(dir) => {
            if !dir.is_dir() {
                return Err(ProcessError::NoDir(dir.to_path_buf()));
            }
            let mut command = Command::new(program_path(first, dir));
            command.current_dir(dir);
            command
        }
        None => Command::new(first),
    };
    command
        .args(&program.argv[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    let mut child = command.spawn().map_err(ProcessError::Spawn)?;
    let started = Instant::now();

    // Every pipe has its own thread: a program that prints megabytes before reading its stdin,
    // or never reads it, must not deadlock against us.
    let mut stdin = child.stdin.take();
    let input = program.stdin;
    let writer = thread::spawn(move || {
        if let Some(pipe) = stdin.as_mut() {
            let _ = pipe.write_all(&input);
        }
        drop(stdin);
    });
    let stdout = child.stdout.take();
    let (out_limit, err_limit) = (program.stdout_limit, program.stderr_limit);
    let out_reader = thread::spawn(move || {
        stdout
            .map(|p| drain(p, out_limit, false))
            .unwrap_or_default()
    });
    let stderr = child.stderr.take();
    let err_reader = thread::spawn(move || {
        stderr
            .map(|p| drain(p, err_limit, true))
            .unwrap_or_default()
    });

    let status = wait_with_timeout(&mut child, started, program.timeout);
    let _ = writer.join();
    let (stdout, stdout_overflow) = out_reader.join().unwrap_or_default();
    let (stderr, _) = err_reader.join().unwrap_or_default();
    let status = status.ok_or(ProcessError::Timeout)?;
    Ok(Output {
        status,
        stdout,
        stdout_overflow,
        stderr,
    })
}

/// How a program ended, for a message: `exit status: 3`, or `killed by signal 9`.
pub fn describe_status(status: ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("killed by signal {signal}");
        }
    }
    status.to_string()
}

fn program_path(program: &str, dir: &Path) -> PathBuf {
    let path = Path::new(program);
    if path.is_relative() && path.components().count() > 1 {
        dir.join(path)
    } else {
        path.to_path_buf()
    }
}

/// Reads a pipe to the end, keeping at most `limit` bytes (the first ones, or the last ones
/// when `keep_tail`), so a flood of output neither blocks the child nor exhausts memory.
fn drain(mut pipe: impl Read, limit: usize, keep_tail: bool) -> (Vec<u8>, bool) {
    let mut kept = Vec::new();
    let mut overflow = false;
    let mut buf = vec![0u8; 64 << 10];
    loop {
        match pipe.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                kept.extend_from_slice(&buf[..n]);
                if kept.len() > limit {
                    overflow = true;
                    if keep_tail {
                        let cut = kept.len() - limit;
                        kept.drain(..cut);
                    } else {
                        kept.truncate(limit);
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    (kept, overflow)
}

/// Waits for the child until `limit` has passed since `started`; `None` on a timeout, after
/// the child's whole process group has been killed and the child reaped.
fn wait_with_timeout(child: &mut Child, started: Instant, limit: Duration) -> Option<ExitStatus> {
    let mut pause = Duration::from_millis(1);
    loop {
        if crate::sys::exited(child) {
            // The leader is a zombie until reaped, so its pid (the group id) cannot have been
            // reused yet: kill whatever it left behind in its group, then reap.
            crate::sys::kill_group(child);
            return child.wait().ok();
        }
        let elapsed = started.elapsed();
        if elapsed >= limit {
            crate::sys::kill_group(child);
            let _ = child.wait();
            return None;
        }
        thread::sleep(pause.min(limit - elapsed));
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn sh(script: &str, timeout_ms: u64) -> Result<Output, ProcessError> {
        let argv = ["sh".to_string(), "-c".to_string(), script.to_string()];
        run(Program {
            argv: &argv,
            dir: None,
            stdin: b"hello".to_vec(),
            timeout: Duration::from_millis(timeout_ms),
            stdout_limit: 16,
            stderr_limit: 4,
        })
    }

    #[test]
    fn reads_stdin_and_bounds_the_output() {
        let out = sh(
            "cat; echo; echo 0123456789abcdefXYZ; echo 12345678 >&2",
            10_000,
        )
        .unwrap();
        assert!(out.status.success());
        assert_eq!(out.stdout, b"hello\n0123456789");
        assert!(out.stdout_overflow);
        assert_eq!(out.stderr, b"678\n");
    }

    #[test]
    fn a_grandchild_holding_stdout_does_not_hang_the_caller() {
        // The shell exits at once; its background child keeps stdout open for a minute.
        let started = Instant::now();
        let out = sh("sleep 60 & echo done", 10_000).unwrap();
        assert_eq!(out.stdout, b"done\n");
        assert!(started.elapsed() < Duration::from_secs(20));
    }

    #[test]
    fn a_timeout_kills_the_whole_group() {
        let started = Instant::now();
        let err = sh("sleep 60 & sleep 60", 200).unwrap_err();
        assert!(matches!(err, ProcessError::Timeout), "{err:?}");
        assert!(started.elapsed() < Duration::from_secs(20));
    }

    #[test]
    fn errors_name_what_failed() {
        assert!(matches!(
            run(Program {
                argv: &[],
                dir: None,
                stdin: Vec::new(),
                timeout: Duration::from_secs(1),
                stdout_limit: 1,
                stderr_limit: 1,
            }),
            Err(ProcessError::Empty)
        ));
        let argv = ["./no/such/program".to_string()];
        let missing = run(Program {
            argv: &argv,
            dir: Some(Path::new("/no/such/folder")),
            stdin: Vec::new(),
            timeout: Duration::from_secs(1),
            stdout_limit: 1,
            stderr_limit: 1,
        });
        assert!(matches!(missing, Err(ProcessError::NoDir(_))));
    }
}
