//! `review` on a terminal: the built binary on a pseudo-terminal (rexpect), answering its
//! questions as a person would. Every wait is bounded (`TIMEOUT_MS`), so a prompt that never
//! comes fails the test instead of hanging it.
#![cfg(unix)]

use crate::common::Env;
use crate::review::two_pending;
use rexpect::process::WaitStatus;
use rexpect::session::{spawn_command, PtySession};

const TIMEOUT_MS: u64 = 30_000;
const PROMPT: &str = "accept (a), reject (r), skip (s), quit (q)? ";

fn review(env: &Env) -> PtySession {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_cargo-proposal-eval"));
    command
        .args(["proposal-eval", "review"])
        .current_dir(env.dir.path())
        .env("NO_COLOR", "1");
    spawn_command(command, Some(TIMEOUT_MS)).expect("the binary starts on a pseudo-terminal")
}

fn exit_code(session: &PtySession) -> i32 {
    match session.process().wait().expect("the binary ends") {
        WaitStatus::Exited(_, code) => code,
        other => panic!("the binary did not exit: {other:?}"),
    }
}

#[test]
fn asks_for_each_pending_recording_and_does_what_it_is_told() {
    let env = two_pending();
    let lower_pending = env.read("suite/recordings/lower.pending.json");
    let raise_before = env.read("suite/recordings/raise.json");
    let mut p = review(&env);
    p.exp_string("suite::lower (1/2)").unwrap();
    p.exp_string("pending:   passed (score 1)").unwrap();
    p.exp_string(PROMPT).unwrap();
    p.send_line("x").unwrap();
    p.exp_string("\"x\": answer a, r, s or q").unwrap();
    p.exp_string(PROMPT).unwrap();
    p.send_line("a").unwrap();
    p.exp_string("accepted suite::lower: suite/recordings/lower.json")
        .unwrap();
    p.exp_string("suite::raise (2/2)").unwrap();
    p.exp_string("regression: passes now, fails with the pending responses")
        .unwrap();
    p.exp_string(PROMPT).unwrap();
    p.send_line("r").unwrap();
    p.exp_string("rejected suite::raise: removed suite/recordings/raise.pending.json")
        .unwrap();
    p.exp_string("1 accepted, 1 rejected, 0 left pending")
        .unwrap();
    p.exp_eof().unwrap();
    assert_eq!(exit_code(&p), 0);

    let mut accepted: serde_json::Value = serde_json::from_str(&lower_pending).unwrap();
    accepted.as_object_mut().unwrap().remove("review");
    let now: serde_json::Value =
        serde_json::from_str(&env.read("suite/recordings/lower.json")).unwrap();
    assert_eq!(now, accepted);
    assert_eq!(env.read("suite/recordings/raise.json"), raise_before);
    assert!(!env.path("suite/recordings/lower.pending.json").exists());
    assert!(!env.path("suite/recordings/raise.pending.json").exists());
}

#[test]
fn skip_and_quit_leave_everything_pending() {
    let env = two_pending();
    let before = env.snapshot();
    let mut p = review(&env);
    p.exp_string(PROMPT).unwrap();
    p.send_line("s").unwrap();
    p.exp_string("skipped suite::lower").unwrap();
    p.exp_string("suite::raise (2/2)").unwrap();
    p.exp_string(PROMPT).unwrap();
    p.send_line("q").unwrap();
    p.exp_string("0 accepted, 0 rejected, 2 left pending")
        .unwrap();
    p.exp_eof().unwrap();
    assert_eq!(exit_code(&p), 0);
    assert_eq!(env.snapshot(), before);

    // The end of input is a quit too.
    let mut p = review(&env);
    p.exp_string(PROMPT).unwrap();
    p.send_control('d').unwrap();
    p.exp_string("0 accepted, 0 rejected, 2 left pending")
        .unwrap();
    p.exp_eof().unwrap();
    assert_eq!(exit_code(&p), 0);
    assert_eq!(env.snapshot(), before);
}
