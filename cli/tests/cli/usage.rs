use crate::common::*;

#[test]
fn help_for_every_command() {
    let env = Env::new();
    let top = env.run(&["--help"]);
    assert_eq!(top.code, 0);
    for command in ["draft", "promote", "status", "prune", "report"] {
        assert!(top.stdout.contains(command), "{}", top.stdout);
    }
    let draft = env.run(&["draft", "--help"]);
    assert_eq!(draft.code, 0, "{}", draft.stderr);
    assert!(draft.stdout.contains("--batch-size"));
    assert!(draft.stdout.contains("command:ARGV"));
    let promote = env.run(&["promote", "-h"]);
    assert_eq!(promote.code, 0);
    assert!(promote.stdout.contains("The file stays where it is"));
}

#[test]
fn works_without_the_cargo_subcommand_argument() {
    let env = Env::new();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cargo-proposal-eval"))
        .args(["draft", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("--from"));
    drop(env);
}

#[test]
fn no_command_prints_help_and_fails() {
    let out = Env::new().run(&[]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("Commands:"));
}

#[test]
fn status_prune_and_report_have_help() {
    let env = Env::new();
    for (command, needle) in [
        ("status", "--check"),
        ("prune", "--yes"),
        ("report", "--target-dir"),
    ] {
        let out = env.run(&[command, "--help"]);
        assert_eq!(out.code, 0, "{command}: {}", out.stderr);
        assert!(out.stdout.contains(needle), "{command}: {}", out.stdout);
        assert!(!out.stdout.contains("not yet implemented"));
    }
}

#[test]
fn usage_errors_exit_2_with_a_clear_message() {
    let env = Env::new();
    env.write("in.jsonl", "");
    let cases: &[(&[&str], &str)] = &[
        (&["frobnicate"], "unknown command \"frobnicate\""),
        (&["draft", "--suite", "suite"], "missing --from"),
        (&["draft", "--from", "in.jsonl"], "missing --suite"),
        (
            &["draft", "--from", "nope.jsonl", "--suite", "suite"],
            "--from nope.jsonl: no such file",
        ),
        (
            &["draft", "--from", "in.jsonl", "--suite", "missing"],
            "--suite missing: no such folder",
        ),
        (
            &[
                "draft",
                "--from",
                "in.jsonl",
                "--suite",
                "suite",
                "--batch-size",
                "0",
            ],
            "--batch-size \"0\"",
        ),
        (
            &[
                "draft",
                "--from",
                "in.jsonl",
                "--suite",
                "suite",
                "--batch-size",
                "x",
            ],
            "--batch-size \"x\"",
        ),
        (
            &[
                "draft",
                "--from",
                "in.jsonl",
                "--suite",
                "suite",
                "--generator",
                "gpt4",
            ],
            "expected `template` or `command:ARGV`",
        ),
        (
            &[
                "draft",
                "--from",
                "in.jsonl",
                "--suite",
                "suite",
                "--generator",
                "command:",
            ],
            "needs a program",
        ),
        (
            &[
                "draft",
                "--from",
                "in.jsonl",
                "--suite",
                "suite",
                "--triggered-by",
                "cron",
            ],
            "expected `manual` or `scheduled`",
        ),
        (
            &[
                "draft",
                "--from",
                "in.jsonl",
                "--suite",
                "suite",
                "--force=yes",
            ],
            "--force takes no value",
        ),
        (
            &["draft", "--from", "in.jsonl", "--suite", "suite", "--wat"],
            "unknown option --wat",
        ),
        (&["draft", "--from"], "--from needs a value"),
        (&["draft", "extra"], "unexpected argument \"extra\""),
        (&["promote"], "missing ID"),
        (&["promote", "a", "b"], "promote takes one ID"),
        (
            &["promote", "a", "--suite", "missing"],
            "--suite missing: no such folder",
        ),
    ];
    for (args, message) in cases {
        let out = env.run(args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(message), "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains("--help"), "{args:?}: {}", out.stderr);
    }
    // Nothing was written by a refused command line.
    assert!(!env.path("suite/drafts").exists());
    assert!(!env.path("suite/.proposal-eval").exists());
}
