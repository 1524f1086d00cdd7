//! `review`, `accept` and `reject`, and what `status` and `prune` make of pending recordings
//! (`<case>.pending.json`, as `RECORD=review cargo test` writes them).

use crate::common::*;
use crate::recordings::*;
use proposal_eval::__internal::recording::{Interaction, Recording, Sample};
use proposal_eval::__internal::review::{Outcome, Pending, Review};
use serde_json::{json, Value};

const EXPECTED: &str = r#"[{ "changeType": "change", "newValue": 120 }]"#;

/// A crate whose suite has `raise` and `lower` (both expecting one change to 120) and `plain`,
/// each recorded (the committed responses say 120), no pending recording yet.
fn suite() -> Env {
    let env = crate_with_suite("");
    for case in ["raise", "lower", "plain"] {
        fixture(
            &env,
            case,
            json!({ "input": { "message": case }, "expected": serde_json::from_str::<Value>(EXPECTED).unwrap() }),
        );
        record(&env, case, &[]);
    }
    env
}

/// The change proposal with `value`.
fn change(value: Value) -> Value {
    json!([{ "changeType": "change", "newValue": value }])
}

/// Writes the pending recording of `case`: the model now answers `answer`, from which the code
/// produced `pending`; from the committed responses it produced `committed`.
fn pending(env: &Env, case: &str, answer: &str, committed: Option<Value>, pending: Value) {
    let at = "2026-02-01T09:00:00Z".parse().unwrap();
    let committed_file = env.path(&format!("suite/recordings/{case}.json"));
    let current = Recording::read(&committed_file).unwrap().unwrap();
    let mut recording = current.clone();
    recording.recorded_at = at;
    recording.samples = vec![Sample {
        interactions: vec![Interaction::new(
            current.interactions()[0].request.clone(),
            json!({ "answer": answer }),
            at,
        )],
        judge: None,
    }];
    Pending {
        recording,
        review: Review {
            committed: committed.map(Outcome::Output),
            pending: Outcome::Output(pending),
            committed_samples: Vec::new(),
            pending_samples: Vec::new(),
        },
    }
    .write(&env.path(&format!("suite/recordings/{case}.pending.json")))
    .unwrap();
}

/// `raise` gets worse (120 becomes "121"), `lower` stays right.
pub(crate) fn two_pending() -> Env {
    let env = suite();
    pending(
        &env,
        "raise",
        "121",
        Some(change(json!(120))),
        change(json!(121)),
    );
    pending(
        &env,
        "lower",
        "120 again",
        Some(change(json!(120))),
        change(json!(120)),
    );
    env
}

#[test]
fn status_lists_pending_recordings_and_check_fails_on_them() {
    let env = suite();
    let clean = env.run(&["status", "--check"]);
    assert_eq!(clean.code, 0, "{}{}", clean.stdout, clean.stderr);
    assert!(!clean.stdout.contains("pending"), "{}", clean.stdout);

    let env = two_pending();
    let out = env.run(&["status"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let pending_lines: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("pending "))
        .collect();
    assert_eq!(
        pending_lines
            .iter()
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>(),
        [
            "pending lower: suite/recordings/lower.pending.json",
            "pending raise: suite/recordings/raise.pending.json"
        ],
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("3 case(s): 3 fresh, 0 stale, 0 no recording, 0 orphaned, 0 unreadable; 2 pending review"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "review the pending recordings (accept or reject each): `cargo proposal-eval review`"
        ),
        "{}",
        out.stdout
    );

    let check = env.run(&["status", "--check"]);
    assert_eq!(check.code, 1, "{}{}", check.stdout, check.stderr);
    assert!(
        check.stderr.contains("status --check: 2 problem(s)"),
        "{}",
        check.stderr
    );
    assert!(
        check.stderr.contains("cargo proposal-eval review"),
        "{}",
        check.stderr
    );

    let json_out = env.run(&["status", "--format", "json"]);
    let value: Value = serde_json::from_str(&json_out.stdout).unwrap();
    assert_eq!(value["summary"]["pending"], 2);
    let cases = value["suites"][0]["cases"].as_array().unwrap();
    let raise = cases.iter().find(|c| c["case"] == "raise").unwrap();
    assert_eq!(raise["pending"], "suite/recordings/raise.pending.json");
    assert_eq!(raise["state"], "fresh");
    assert_eq!(raise["fails_check"], true);
    let plain = cases.iter().find(|c| c["case"] == "plain").unwrap();
    assert!(plain.get("pending").is_none(), "{plain}");
}

#[test]
fn a_pending_recording_whose_case_is_gone_is_an_orphan_and_prune_never_takes_a_live_one() {
    let env = two_pending();
    // The case `raise` is deleted: its pending recording (and its recording) are orphans.
    std::fs::remove_file(env.path("suite/raise.json")).unwrap();
    let out = env.run(&["status"]);
    let orphans: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("orphaned"))
        .collect();
    assert_eq!(orphans.len(), 2, "{}", out.stdout);
    assert!(
        orphans
            .iter()
            .any(|l| l.contains("suite/recordings/raise.pending.json (no fixture raise.json)")),
        "{}",
        out.stdout
    );
    let pruned = env.run(&["prune", "--yes"]);
    assert_eq!(pruned.code, 0, "{}", pruned.stderr);
    assert!(!env.path("suite/recordings/raise.pending.json").exists());
    assert!(!env.path("suite/recordings/raise.json").exists());
    // The live case's pending recording, its recording and every fixture stay.
    for file in [
        "suite/recordings/lower.pending.json",
        "suite/recordings/lower.json",
        "suite/lower.json",
        "suite/plain.json",
    ] {
        assert!(
            env.path(file).exists(),
            "{file} was pruned:\n{}",
            pruned.stdout
        );
    }
}

#[test]
fn a_case_named_like_a_pending_file_keeps_its_recording() {
    // `lower.pending` is a case of its own: `recordings/lower.pending.json` is its recording,
    // never a pending recording of `lower`, and never an orphan.
    let env = suite();
    fixture(
        &env,
        "lower.pending",
        json!({ "input": { "message": "odd" }, "expected": [] }),
    );
    record(&env, "lower.pending", &[]);
    let out = env.run(&["status", "--check"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(!out.stdout.contains("orphaned  "), "{}", out.stdout);
    let accept = env.run(&["accept", "--all"]);
    assert_eq!(accept.stdout, "no pending recordings\n");
    assert!(env.path("suite/recordings/lower.pending.json").exists());
}

#[test]
fn accept_replaces_the_committed_recording_and_reject_deletes_the_pending_one() {
    let env = two_pending();
    let pending_raise = Pending::read(&env.path("suite/recordings/raise.pending.json"))
        .unwrap()
        .unwrap();
    let lower_before = env.read("suite/recordings/lower.json");
    let plain_before = env.read("suite/recordings/plain.json");

    let accept = env.run(&["accept", "suite::raise"]);
    assert_eq!(accept.code, 0, "{}{}", accept.stdout, accept.stderr);
    assert_eq!(
        accept.stdout,
        "accepted suite::raise: suite/recordings/raise.json\naccepted 1 pending recording(s)\n"
    );
    assert!(!env.path("suite/recordings/raise.pending.json").exists());
    // The committed file is now the pending recording, a plain recording (no `review` key).
    let committed = env.read("suite/recordings/raise.json");
    assert_eq!(committed, pending_raise.recording.to_pretty());
    assert!(!committed.contains("\"review\""), "{committed}");
    assert!(committed.contains("\"answer\": \"121\""), "{committed}");

    let reject = env.run(&["reject", "suite::lower"]);
    assert_eq!(reject.code, 0, "{}{}", reject.stdout, reject.stderr);
    assert_eq!(
        reject.stdout,
        "rejected suite::lower: removed suite/recordings/lower.pending.json\nrejected 1 pending recording(s)\n"
    );
    assert!(!env.path("suite/recordings/lower.pending.json").exists());
    assert_eq!(env.read("suite/recordings/lower.json"), lower_before);
    assert_eq!(env.read("suite/recordings/plain.json"), plain_before);

    let check = env.run(&["status", "--check"]);
    assert_eq!(check.code, 0, "{}{}", check.stdout, check.stderr);
}

#[test]
fn accept_and_reject_all() {
    let env = two_pending();
    let before = env.read("suite/recordings/lower.json");
    let out = env.run(&["accept", "--all"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.ends_with("accepted 2 pending recording(s)\n"),
        "{}",
        out.stdout
    );
    assert_ne!(env.read("suite/recordings/lower.json"), before);
    assert!(env
        .read("suite/recordings/lower.json")
        .contains("120 again"));

    let env = two_pending();
    let snapshot_committed = |env: &Env| {
        ["raise", "lower", "plain"].map(|c| env.read(&format!("suite/recordings/{c}.json")))
    };
    let before = snapshot_committed(&env);
    let out = env.run(&["reject", "--all"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.ends_with("rejected 2 pending recording(s)\n"),
        "{}",
        out.stdout
    );
    assert_eq!(snapshot_committed(&env), before);
    let left: Vec<_> = std::fs::read_dir(env.path("suite/recordings"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("pending"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let again = env.run(&["reject", "--all"]);
    assert_eq!(
        (again.code, again.stdout.as_str()),
        (0, "no pending recordings\n")
    );
}

#[test]
fn unknown_names_change_nothing_and_list_close_matches() {
    let env = two_pending();
    let before = env.snapshot();
    let out = env.run(&[
        "accept",
        "suite::raise",
        "suite::rasie",
        "suite::plain",
        "raise",
    ]);
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert_eq!(
        env.snapshot(),
        before,
        "nothing may change when a name is wrong"
    );
    assert!(
        out.stderr.contains(
            "no case is named suite::rasie; pending recordings with a close name: suite::raise"
        ),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("suite::plain has no pending recording"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("no case is named raise; pending recordings with a close name: suite::raise"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("(nothing was changed)"),
        "{}",
        out.stderr
    );

    let far = env.run(&["reject", "billing::totally_else"]);
    assert_eq!(far.code, 2);
    assert!(
        far.stderr
            .contains("no case is named billing::totally_else; a CASE is a test name"),
        "{}",
        far.stderr
    );
}

#[test]
fn accept_and_reject_need_names_or_all() {
    let env = two_pending();
    for verb in ["accept", "reject"] {
        let none = env.run(&[verb]);
        assert_eq!(none.code, 2, "{}", none.stderr);
        assert!(
            none.stderr.contains(&format!("name the cases to {verb}")),
            "{}",
            none.stderr
        );
        let both = env.run(&[verb, "--all", "suite::raise"]);
        assert_eq!(both.code, 2);
        assert!(both.stderr.contains("not both"), "{}", both.stderr);
        let help = env.run(&[verb, "--help"]);
        assert_eq!(help.code, 0);
        assert!(help.stdout.contains("(CASE... | --all)"), "{}", help.stdout);
    }
    assert!(env.path("suite/recordings/raise.pending.json").exists());
}

#[test]
fn review_without_a_terminal_shows_both_verdicts_and_the_diff_and_decides_nothing() {
    let env = two_pending();
    let before = env.snapshot();
    let out = env.run(&["review"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(
        env.snapshot(),
        before,
        "review without a terminal changes nothing"
    );
    let text = &out.stdout;
    let raise = &text[text
        .find("suite::raise (2/2)")
        .unwrap_or_else(|| panic!("{text}"))..];
    let lower = &text[text
        .find("suite::lower (1/2)")
        .unwrap_or_else(|| panic!("{text}"))..];
    assert!(
        lower.contains("committed: passed (score 1), recorded 2025-01-15 10:00:00 UTC"),
        "{text}"
    );
    assert!(
        lower.contains("pending:   passed (score 1), recorded 2026-02-01 09:00:00 UTC"),
        "{text}"
    );
    assert!(raise.contains("committed: passed (score 1)"), "{raise}");
    assert!(raise.contains("pending:   FAILED (score 0)"), "{raise}");
    assert!(
        raise.contains("regression: passes now, fails with the pending responses"),
        "{raise}"
    );
    assert!(
        raise.contains("why it fails with the pending responses:"),
        "{raise}"
    );
    assert!(
        raise.contains("[0].newValue: values differ: expected 120, actual 121"),
        "{raise}"
    );
    // The responses' diff.
    assert!(
        raise.contains("    -    \"proposals\": []\n    +    \"answer\": \"121\""),
        "{raise}"
    );
    assert!(
        raise.contains("  file:      suite/recordings/raise.pending.json"),
        "{raise}"
    );
    assert!(
        text.contains("2 pending recording(s); not a terminal, so nothing was decided"),
        "{text}"
    );

    // An `expected` fixed after the recording counts: both sides are evaluated now.
    fixture(
        &env,
        "raise",
        json!({ "input": { "message": "raise" }, "expected": change(json!(121)) }),
    );
    let out = env.run(&["review", "suite::raise"]);
    // The fixture is a source of these (format-1) recordings: the pending one is now stale.
    assert!(
        out.stdout.contains("  stale: the pending recording was made from other sources (suite/raise.json changed (recorded sha256 "),
        "{}",
        out.stdout
    );
    let accept = env.run(&["accept", "suite::raise"]);
    assert_eq!(accept.code, 0);
    assert!(
        accept
            .stderr
            .contains("warning: suite::raise: the accepted recording is stale"),
        "{}",
        accept.stderr
    );
    assert!(
        out.stdout.contains("committed: FAILED (score 0)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("pending:   passed (score 1)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("fix: fails now, passes with the pending responses"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("suite::lower"), "{}", out.stdout);
}

#[test]
fn a_damaged_pending_recording_is_named() {
    let env = two_pending();
    env.write(
        "suite/recordings/lower.pending.json",
        "{\"format\": 2, \"case\": ",
    );
    let out = env.run(&["review"]);
    assert!(
        out.stdout.contains(
            "pending:   cannot be used: unreadable recording: suite/recordings/lower.pending.json"
        ),
        "{}",
        out.stdout
    );
    let accept = env.run(&["accept", "suite::lower"]);
    assert_eq!(accept.code, 1, "{}", accept.stdout);
    assert!(
        accept
            .stderr
            .contains("error: suite::lower: unreadable recording"),
        "{}",
        accept.stderr
    );
    // Never half-accepted: the committed recording is as it was.
    assert!(env
        .read("suite/recordings/lower.json")
        .contains("\"proposals\": []"));
}

/// A judge part holding `verdicts` (statement, holds, reason).
fn judgement(
    verdicts: &[(&str, bool, &str)],
) -> proposal_eval::__internal::rubric_judge::Judgement {
    use proposal_eval::__internal::rubric_judge::{Judgement, KeyParts, RecordedVerdict};
    let h = "0".repeat(64);
    Judgement {
        key_sha256: h.clone(),
        parts: KeyParts {
            rubric_sha256: h.clone(),
            output_sha256: h.clone(),
            input_sha256: h.clone(),
            trajectory_sha256: None,
            prompt_sha256: h,
            model: "judge-1".into(),
            temperature: 0.0,
            samples: 1,
        },
        recorded_at: "2026-02-01T09:00:00Z".parse().unwrap(),
        calls: Vec::new(),
        verdicts: verdicts
            .iter()
            .enumerate()
            .map(|(id, (statement, holds, reason))| RecordedVerdict {
                id,
                statement: statement.to_string(),
                holds: *holds,
                reason: reason.to_string(),
            })
            .collect(),
    }
}

/// Under `RECORD=review` the new verdicts go to the pending file; `review` shows each statement's
/// verdict before and after, with the judge's reasons, and the verdict they make.
#[test]
fn review_shows_each_rubric_statements_verdict_before_and_after() {
    let env = crate_with_suite("[judge]\nmodel = \"judge-1\"\n");
    fixture(
        &env,
        "shop",
        json!({ "input": { "message": "a laptop" }, "rubric": { "required": ["In stock"], "forbidden": ["Discontinued"] } }),
    );
    record(&env, "shop", &[]);
    let file = env.path("suite/recordings/shop.json");
    let mut committed = Recording::read(&file).unwrap().unwrap();
    // As a recording with a judge part is written: format 5, depending on the input.
    committed.sources.clear();
    committed.input_sha256 = Some(
        proposal_eval::__internal::recording::input_digest(&json!({ "message": "a laptop" })).0,
    );
    committed.judge = Some(judgement(&[
        ("In stock", true, "SKU-456 is in stock"),
        ("Discontinued", false, "SKU-456 is current"),
    ]));
    committed.write(&file).unwrap();
    let mut recording = committed.clone();
    recording.judge = Some(judgement(&[
        ("In stock", true, "SKU-123 is listed"),
        ("Discontinued", true, "SKU-123 is discontinued"),
    ]));
    Pending {
        recording,
        review: Review {
            committed: Some(Outcome::Output(json!({ "reply": "SKU-456" }))),
            pending: Outcome::Output(json!({ "reply": "SKU-123" })),
            committed_samples: Vec::new(),
            pending_samples: Vec::new(),
        },
    }
    .write(&env.path("suite/recordings/shop.pending.json"))
    .unwrap();

    let out = env.run(&["review"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    for line in [
        "  committed: passed (score 1), recorded 2025-01-15 10:00:00 UTC\n",
        "  pending:   FAILED (score 0.50), recorded 2025-01-15 10:00:00 UTC\n",
        "  regression: passes now, fails with the pending responses\n",
        "  rubric verdicts, committed -> pending:\n    [0] \"In stock\": answer holds -> holds, outcome passed -> passed\n        committed: SKU-456 is in stock\n        pending:   SKU-123 is listed\n    [1] must not: \"Discontinued\": answer does not hold -> holds (changed), outcome passed -> failed\n        committed: SKU-456 is current\n        pending:   SKU-123 is discontinued\n",
        "    [1] forbidden: \"Discontinued\": answer holds, outcome failed (SKU-123 is discontinued)\n",
    ] {
        assert!(out.stdout.contains(line), "no {line:?} in:\n{}", out.stdout);
    }

    // Recorded again with two samples (`repeat = 2`): each sample's verdicts, under its own
    // heading; the committed recording judged one.
    let mut repeated = committed.clone();
    repeated.judge = None;
    repeated.samples = vec![committed.samples[0].clone(), committed.samples[0].clone()];
    for (k, reason) in ["SKU-123 is listed", "SKU-789 is listed"]
        .iter()
        .enumerate()
    {
        repeated.set_judgement(
            k,
            judgement(&[
                ("In stock", true, reason),
                ("Discontinued", k == 0, "as before"),
            ]),
        );
    }
    Pending {
        recording: repeated,
        review: Review {
            committed: Some(Outcome::Output(json!({ "reply": "SKU-456" }))),
            pending: Outcome::Output(json!({ "reply": "SKU-123" })),
            committed_samples: Vec::new(),
            pending_samples: vec![Outcome::Output(json!({ "reply": "SKU-789" }))],
        },
    }
    .write(&env.path("suite/recordings/shop.pending.json"))
    .unwrap();
    let out = env.run(&["review"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let line = "  rubric verdicts, committed -> pending:\n    sample 1 of 2:\n      [0] \"In stock\": answer holds -> holds, outcome passed -> passed\n          committed: SKU-456 is in stock\n          pending:   SKU-123 is listed\n      [1] must not: \"Discontinued\": answer does not hold -> holds (changed), outcome passed -> failed\n          committed: SKU-456 is current\n          pending:   as before\n    sample 2 of 2:\n      [0] \"In stock\": answer not judged -> holds (changed), outcome none -> passed\n          pending:   SKU-789 is listed\n      [1] must not: \"Discontinued\": answer not judged -> does not hold (changed), outcome none -> passed\n          pending:   as before\n";
    assert!(out.stdout.contains(line), "no {line:?} in:\n{}", out.stdout);
    // Each pending sample is evaluated on its own output with its own verdicts: the second
    // passes, the first does not (a forbidden statement holds), and the pass rule decides.
    for line in [
        "  pending:   FAILED (score 0.75; 1 of 2 samples passed, mean score 0.75 ± 0.25; pass = all needs 2 of 2), recorded 2025-01-15 10:00:00 UTC\n",
        "  why it fails with the pending responses:\n    1 of 2 samples passed, mean score 0.75 ± 0.25; pass = all needs 2 of 2\n    --- sample 1 of 2:\n    suite/shop: rubric FAILED (score 0.50)\n      [1] forbidden: \"Discontinued\": answer holds, outcome failed (as before)\n  rubric verdicts",
    ] {
        assert!(out.stdout.contains(line), "no {line:?} in:\n{}", out.stdout);
    }
}
