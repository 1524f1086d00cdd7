//! The model-upgrade workflow end to end, as a team runs it on `examples/payments-agent` (a
//! standing-alone copy, built by cargo subprocesses; see the runtime's `tests/support`): the
//! live model is the stand-in's next version (`PAYMENTS_AGENT_MODEL_VERSION=2`), which answers
//! every case differently from the committed recordings and rounds decimal amounts, so some
//! cases regress. Record with `RECORD=review`, see the pending recordings in `status` and
//! `review`, accept some and reject the others, replay: exactly the accepted ones changed.

#[path = "../../../runtime/tests/support/mod.rs"]
pub(crate) mod support;

use serde_json::Value;
use std::collections::BTreeMap;
use support::{lock, test_name, Example};

/// The built `cargo proposal-eval` in the example's folder.
fn cli(example: &Example, args: &[&str]) -> crate::common::Output {
    crate::common::run_in(&example.root, args)
}

/// The recordings, split into committed ones and pending ones (by case path).
fn split(example: &Example) -> (BTreeMap<String, Vec<u8>>, BTreeMap<String, Vec<u8>>) {
    let (mut committed, mut pending) = (BTreeMap::new(), BTreeMap::new());
    for (file, bytes) in example.recordings() {
        match file.strip_suffix(".pending.json") {
            Some(case) => pending.insert(case.to_string(), bytes),
            None => committed.insert(file.trim_end_matches(".json").to_string(), bytes),
        };
    }
    (committed, pending)
}

/// The cases whose test failed in a run, as case paths.
fn failed(run: &support::Run) -> Vec<String> {
    run.verdicts()
        .into_iter()
        .filter(|(_, v)| v == "FAILED")
        .map(|(name, _)| name.trim_start_matches("payments::").replace("::", "/"))
        .collect()
}

#[test]
fn record_for_review_accept_some_reject_the_rest_and_replay() {
    let _cargo = lock();
    let example = Example::new();
    let (before, none) = split(&example);
    assert!(none.is_empty() && before.len() > 10, "{:?}", before.keys());
    let upgrade = [
        ("PAYMENTS_AGENT_MODEL_VERSION", "2"),
        ("PROPOSAL_EVAL_RECORD", "review"),
    ];

    // 0. A baseline: the committed answers replayed, their report kept under a name.
    let target = support::shared_target().to_string_lossy().into_owned();
    let baseline = example.evals(&[("PAYMENTS_AGENT_FORBID_MODEL", "1")], &[]);
    assert!(baseline.success, "{}", baseline.text());
    let save = cli(
        &example,
        &[
            "report",
            "--save",
            "before-upgrade",
            "--target-dir",
            &target,
        ],
    );
    assert_eq!(save.code, 0, "{}{}", save.stdout, save.stderr);

    // 1. Record under the new model for review: the committed recordings are untouched, one
    //    pending recording per recorded case, and the tests are evaluated on the new answers.
    let run = example.evals(&upgrade, &[]);
    let regressed = failed(&run);
    assert_eq!(
        regressed,
        ["changes/lower_amount_with_decimals"],
        "the upgraded model rounds 85.50 to 86:\n{}",
        run.text()
    );
    let failure = &run.stdout[run
        .stdout
        .find("---- payments::changes::lower_amount_with_decimals")
        .unwrap()..];
    assert!(
        failure.contains("pending review in fixtures/payments/recordings/changes/lower_amount_with_decimals.pending.json")
            && failure.contains("the committed recording is unchanged"),
        "{failure}"
    );
    let (committed, pending) = split(&example);
    assert_eq!(
        committed, before,
        "RECORD=review never touches a committed recording"
    );

    // The run on the new answers against the baseline: the regression, and nothing else.
    let compare = cli(
        &example,
        &[
            "compare",
            "before-upgrade",
            "--format",
            "json",
            "--target-dir",
            &target,
        ],
    );
    assert_eq!(
        compare.code, 1,
        "a regression: {}{}",
        compare.stdout, compare.stderr
    );
    let comparison: Value = serde_json::from_str(&compare.stdout).unwrap();
    let regressed_cases: Vec<&str> = comparison["regressions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["case"].as_str().unwrap())
        .collect();
    assert_eq!(
        regressed_cases,
        ["changes/lower_amount_with_decimals"],
        "{comparison}"
    );
    assert_eq!(comparison["fixes"], serde_json::json!([]), "{comparison}");
    assert_eq!(
        pending.keys().collect::<Vec<_>>(),
        before.keys().collect::<Vec<_>>(),
        "one pending recording per recorded case"
    );
    for (case, bytes) in &pending {
        let file: Value = serde_json::from_slice(bytes).unwrap();
        assert_eq!(file["case"], case.as_str());
        assert_eq!(file["format"], 2);
        for interaction in file["interactions"].as_array().unwrap() {
            assert_eq!(
                interaction["response"]["model"],
                payments_agent_name(),
                "{case}"
            );
        }
        assert!(
            file["review"]["committed"]["output"].is_array(),
            "{case}: {}",
            file["review"]
        );
        assert!(
            file["review"]["pending"]["output"].is_array(),
            "{case}: {}",
            file["review"]
        );
    }

    // 2. A replay uses the committed recordings (the model is never built) and passes.
    let replay = example.evals(&[("PAYMENTS_AGENT_FORBID_MODEL", "1")], &[]);
    assert!(replay.success, "{}", replay.text());

    // 3. status lists them and --check fails; review shows the regression.
    let status = cli(&example, &["status", "--check"]);
    assert_eq!(status.code, 1, "{}{}", status.stdout, status.stderr);
    assert!(
        status
            .stdout
            .contains(&format!("; {} pending review", pending.len())),
        "{}",
        status.stdout
    );
    let review = cli(&example, &["review"]);
    assert_eq!(review.code, 0, "{}", review.stderr);
    let decimals = test_name("changes/lower_amount_with_decimals");
    let shown = &review.stdout[review.stdout.find(&format!("{decimals} (")).unwrap()..];
    assert!(
        shown.contains("committed: passed (score 1)")
            && shown.contains("pending:   FAILED (score 0)")
            && shown.contains("regression: passes now, fails with the pending responses")
            && shown.contains("[0].newValue: values differ: expected 85.5, actual 86"),
        "{shown}"
    );

    // 4. Accept two cases that still pass, reject everything else.
    let accepted = ["changes/raise_amount", "multi/address_and_amount"];
    let names: Vec<String> = accepted.iter().map(|c| test_name(c)).collect();
    let mut args = vec!["accept"];
    args.extend(names.iter().map(String::as_str));
    let accept = cli(&example, &args);
    assert_eq!(accept.code, 0, "{}{}", accept.stdout, accept.stderr);
    let reject = cli(&example, &["reject", "--all"]);
    assert_eq!(reject.code, 0, "{}{}", reject.stdout, reject.stderr);
    assert!(
        reject.stdout.ends_with(&format!(
            "rejected {} pending recording(s)\n",
            pending.len() - 2
        )),
        "{}",
        reject.stdout
    );

    // 5. Replay: exactly the accepted recordings changed, to their pending recordings.
    let (after, left) = split(&example);
    assert!(left.is_empty(), "{:?}", left.keys());
    let changed: Vec<&String> = after
        .keys()
        .filter(|case| after[*case] != before[*case])
        .collect();
    assert_eq!(changed, accepted.iter().collect::<Vec<_>>());
    for case in accepted {
        let mut expected: Value = serde_json::from_slice(&pending[case]).unwrap();
        expected.as_object_mut().unwrap().remove("review");
        let now: Value = serde_json::from_slice(&after[case]).unwrap();
        assert_eq!(
            now, expected,
            "{case}: the pending recording, less `review`"
        );
    }
    let replay = example.evals(&[("PAYMENTS_AGENT_FORBID_MODEL", "1")], &[]);
    assert!(replay.success, "{}", replay.text());
    let status = cli(&example, &["status", "--check"]);
    assert_eq!(status.code, 0, "{}{}", status.stdout, status.stderr);
    // The accepted cases pass on their new answers: no regression against the baseline.
    let compare = cli(
        &example,
        &["compare", "before-upgrade", "--target-dir", &target],
    );
    assert_eq!(compare.code, 0, "{}{}", compare.stdout, compare.stderr);
}

fn payments_agent_name() -> &'static str {
    "payments-standin-2"
}

/// The macro front end records for review the same way (one runtime path), and an accepted
/// regression is what the next replay sees.
#[test]
fn the_macro_front_end_records_for_review_and_an_accepted_regression_fails_the_replay() {
    let _cargo = lock();
    let example = Example::new();
    let (before, _) = split(&example);
    let run = example.run(
        &[
            "test",
            "--test",
            "macro_evals",
            "--",
            "payments::changes::lower_amount_with_decimals",
            "payments::changes::raise_amount",
        ],
        &[("PAYMENTS_AGENT_MODEL_VERSION", "2"), ("RECORD", "review")],
    );
    assert_eq!(
        failed(&run),
        ["changes/lower_amount_with_decimals"],
        "{}",
        run.text()
    );
    assert!(
        run.stdout.contains("pending review in fixtures/payments/recordings/changes/lower_amount_with_decimals.pending.json"),
        "{}",
        run.text()
    );
    let (committed, pending) = split(&example);
    assert_eq!(committed, before);
    assert_eq!(
        pending.keys().collect::<Vec<_>>(),
        ["changes/lower_amount_with_decimals", "changes/raise_amount"]
    );

    let accept = cli(&example, &["accept", "--all"]);
    assert_eq!(accept.code, 0, "{}{}", accept.stdout, accept.stderr);
    let replay = example.evals(
        &[("PAYMENTS_AGENT_FORBID_MODEL", "1")],
        &["payments::changes::"],
    );
    assert_eq!(
        failed(&replay),
        ["changes/lower_amount_with_decimals"],
        "the accepted answers are replayed, the regression with them:\n{}",
        replay.text()
    );
}

/// A fixture named `<case>.pending.json` is a case of its own, and its recording is
/// `<case>.pending.json` in the recordings folder: recording `<case>` for review refuses to
/// overwrite it, naming both, and status never takes it for a pending recording.
#[test]
fn a_case_named_like_a_pending_file_is_never_overwritten() {
    let _cargo = lock();
    let example = Example::new();
    let raise = example.read("fixtures/payments/changes/raise_amount.json");
    example.write(
        "fixtures/payments/changes/raise_amount.pending.json",
        &raise,
    );
    let twin = "payments::changes::raise_amount_pending";
    let record = example.evals(&[("RECORD", "1")], &[twin, "--exact"]);
    assert!(record.success, "{}", record.text());
    let twin_recording = "fixtures/payments/recordings/changes/raise_amount.pending.json";
    let recorded = example.read(twin_recording);
    assert!(
        recorded.contains("\"case\": \"changes/raise_amount.pending\""),
        "{recorded}"
    );

    let review = example.evals(
        &[("RECORD", "review")],
        &["payments::changes::raise_amount", "--exact"],
    );
    assert!(!review.success, "{}", review.text());
    assert!(
        review.stdout.contains(&format!(
            "{twin_recording} is the recording of the case `changes/raise_amount.pending`, so it cannot hold this case's pending recording; rename one of the two fixtures to review `changes/raise_amount`"
        )),
        "{}",
        review.text()
    );
    assert_eq!(example.read(twin_recording), recorded);
    let status = cli(&example, &["status", "--check"]);
    assert_eq!(status.code, 0, "{}{}", status.stdout, status.stderr);
}
