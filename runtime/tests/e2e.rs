//! End to end: `examples/payments-agent` driven as a user drives it, by `cargo` subprocesses in a
//! standing-alone copy of the crate (see `support`). Each test asserts the exact behaviour the
//! reference in docs/ promises: recording, offline replay, stale fixtures, `RECORD=stale`, CRLF, changed
//! requests, missing recordings, bad `RECORD` values, interrupted recordings, nextest partitions,
//! bad fixtures, and the two front ends agreeing.

mod support;

use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use support::{lock, sha256, test_name, Example, Run, SUITE};

const ACTIVE: usize = 22;
const IGNORED: usize = 2;
const RAISE: &str = "changes/raise_amount";

fn fixture(case: &str) -> String {
    format!("{SUITE}/{case}.json")
}

/// The `input` of a fixture's text.
fn input_of(fixture_text: &str) -> Value {
    serde_json::from_str::<Value>(fixture_text).unwrap()["input"].clone()
}

fn recording(case: &str) -> String {
    format!("{SUITE}/recordings/{case}.json")
}

/// Every active test `ok`, except those in `failed`, which are `FAILED`.
fn assert_verdicts(example: &Example, run: &Run, failed: &[&str]) {
    let verdicts = run.verdicts();
    for case in example.active_cases() {
        let name = test_name(&case);
        let want = if failed.contains(&case.as_str()) {
            "FAILED"
        } else {
            "ok"
        };
        assert_eq!(
            verdicts.get(&name).map(String::as_str),
            Some(want),
            "{name}:\n{}",
            run.text()
        );
    }
    run.assert_summary(ACTIVE - failed.len(), failed.len(), IGNORED);
}

/// The failure block libtest-mimic / libtest prints for one test.
fn failure_of(run: &Run, name: &str) -> String {
    let text = &run.stdout;
    let start = [
        format!("---- {name} stdout ----\n"),
        format!("---- {name} ----\n"),
    ]
    .iter()
    .find_map(|h| text.find(h.as_str()).map(|i| i + h.len()))
    .unwrap_or_else(|| panic!("no failure block for {name}:\n{}", run.text()));
    let rest = &text[start..];
    let end = rest
        .find("\n---- ")
        .or_else(|| rest.find("\nfailures:"))
        .unwrap_or(rest.len());
    rest[..end].trim_end().to_string()
}

#[test]
fn record_writes_every_recording_whole_sorted_and_with_a_final_newline() {
    let _cargo = lock();
    let example = Example::new();
    std::fs::remove_dir_all(example.path(&format!("{SUITE}/recordings"))).unwrap();
    let marker = example.path("model-built.txt");
    let marker_env = marker.to_string_lossy().into_owned();

    let run = example.evals(
        &[
            ("RECORD", "1"),
            ("PAYMENTS_AGENT_MODEL_MARKER", &marker_env),
        ],
        &[],
    );
    assert_verdicts(&example, &run, &[]);
    assert!(
        marker.exists(),
        "RECORD=1 never built the live model:\n{}",
        run.text()
    );

    let recordings = example.recordings();
    let written: BTreeSet<String> = recordings
        .keys()
        .map(|k| k.trim_end_matches(".json").to_string())
        .collect();
    assert_eq!(
        written,
        example.active_cases(),
        "one recording per active case, nothing else"
    );
    let prompts: Vec<(String, String)> = ["prompts/output-format.md", "prompts/system.md"]
        .iter()
        .map(|p| (p.to_string(), sha256(example.read(p).as_bytes())))
        .collect();
    for (file, bytes) in &recordings {
        let text = std::str::from_utf8(bytes).unwrap();
        assert!(
            text.ends_with("}\n") && !text.ends_with("\n\n"),
            "{file}: one final newline"
        );
        support::keys_sorted(text).unwrap_or_else(|e| panic!("{file}: keys not sorted: {e}"));
        let r: Value = serde_json::from_str(text).unwrap();
        let case = file.trim_end_matches(".json");
        assert_eq!(r["format"], 2, "{file}");
        assert_eq!(r["case"], case, "{file}");
        let fixture_bytes = std::fs::read(example.path(&fixture(case))).unwrap();
        let fixture_json: Value = serde_json::from_slice(&fixture_bytes).unwrap();
        assert_eq!(
            r["input"], fixture_json["input"],
            "{file}: a copy of the input"
        );
        let sources: BTreeMap<String, String> = r["sources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["path"].as_str().unwrap().to_string(),
                    s["sha256"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let want: BTreeMap<String, String> = prompts.iter().cloned().collect();
        assert_eq!(
            sources, want,
            "{file}: the suite's prompts with their hashes (format 2: not the fixture file)"
        );
        assert_eq!(
            r["input_sha256"],
            sha256(support::canonical(&fixture_json["input"]).as_bytes()),
            "{file}: the hash of the input as canonical JSON"
        );
        let calls = r["interactions"].as_array().unwrap().len();
        let tool_cases = [
            "changes/increase_by_percent",
            "changes/double_payment",
            "multi/reduce_by_percent_and_new_iban",
        ];
        assert_eq!(
            calls,
            if tool_cases.contains(&case) { 2 } else { 1 },
            "{file}: model calls"
        );
    }
    let leftovers: Vec<String> =
        support::files_below(&example.path(&format!("{SUITE}/recordings")))
            .into_keys()
            .filter(|k| !recordings.contains_key(k))
            .collect();
    assert!(
        leftovers.is_empty(),
        "temp files left behind: {leftovers:?}"
    );
}

#[test]
fn replay_is_offline_and_never_builds_the_model() {
    let _cargo = lock();
    let example = Example::new();
    let before = example.recordings();
    let marker = example.path("model-built.txt");
    let marker_env = marker.to_string_lossy().into_owned();
    let run = example.evals(
        &[
            ("PAYMENTS_AGENT_FORBID_MODEL", "1"),
            ("PAYMENTS_AGENT_MODEL_MARKER", &marker_env),
        ],
        &[],
    );
    assert_verdicts(&example, &run, &[]);
    assert!(
        !marker.exists(),
        "replay built the live model:\n{}",
        run.text()
    );
    assert_eq!(example.recordings(), before, "replay wrote a recording");
}

#[test]
fn an_edited_fixture_is_stale_and_record_stale_rerecords_only_it() {
    let _cargo = lock();
    let example = Example::new();
    let old = example.read(&fixture(RAISE));
    let new = old.replace("120", "130");
    assert_ne!(old, new);
    example.write(&fixture(RAISE), &new);

    let run = example.evals(&[("PAYMENTS_AGENT_FORBID_MODEL", "1")], &[]);
    assert_verdicts(&example, &run, &[RAISE]);
    let message = failure_of(&run, &test_name(RAISE));
    for want in [
        format!("stale recording {}", recording(RAISE)),
        format!(
            "the case's input changed (recorded sha256 {}, current {})",
            sha256(support::canonical(&input_of(&old)).as_bytes()),
            sha256(support::canonical(&input_of(&new)).as_bytes())
        ),
        "120 EUR".to_string(),
        "130 EUR".to_string(),
        format!(
            "re-record just this case: RECORD=1 cargo test -p payments-agent --test evals -- {} --exact",
            test_name(RAISE)
        ),
    ] {
        assert!(message.contains(&want), "`{want}` missing from:\n{message}");
    }

    let before = example.recordings();
    // The variable's long name; `RECORD` is its short form.
    let run = example.evals(&[("PROPOSAL_EVAL_RECORD", "stale")], &[]);
    assert_verdicts(&example, &run, &[]);
    let after = example.recordings();
    let changed: Vec<&String> = after
        .keys()
        .filter(|k| before.get(*k) != after.get(*k))
        .collect();
    assert_eq!(
        changed,
        [&format!("{RAISE}.json")],
        "RECORD=stale re-recorded other cases"
    );
    let rerecorded: Value = serde_json::from_slice(&after[&format!("{RAISE}.json")]).unwrap();
    assert_eq!(
        rerecorded["input"]["message"],
        "Please change my payment to 130 EUR"
    );
}

#[test]
fn crlf_line_endings_do_not_make_a_case_stale() {
    let _cargo = lock();
    let example = Example::new();
    let mut converted = 0;
    for case in example.active_cases() {
        let text = example.read(&fixture(&case));
        assert!(!text.contains('\r'));
        example.write(&fixture(&case), text.replace('\n', "\r\n"));
        converted += 1;
    }
    assert_eq!(converted, ACTIVE);
    let run = example.evals(&[("PAYMENTS_AGENT_FORBID_MODEL", "1")], &[]);
    assert_verdicts(&example, &run, &[]);
}

#[test]
fn a_changed_request_fails_with_its_index() {
    let _cargo = lock();
    let example = Example::new();
    // The second call of a tool-using case: edit what the recording says was sent.
    let case = "changes/increase_by_percent";
    let mut r: Value = serde_json::from_str(&example.read(&recording(case))).unwrap();
    let tool_result = &mut r["interactions"][1]["request"]["messages"][2]["content"]["amount"];
    assert_eq!(*tool_result, 100, "the recorded tool result moved");
    *tool_result = 999.into();
    example.write(
        &recording(case),
        serde_json::to_string_pretty(&r).unwrap() + "\n",
    );
    let run = example.evals(&[("PAYMENTS_AGENT_FORBID_MODEL", "1")], &[]);
    assert_verdicts(&example, &run, &[case]);
    let message = failure_of(&run, &test_name(case));
    assert!(
        message.contains("request [1] differs from the recorded one"),
        "{message}"
    );
    assert!(
        message.contains("999") && message.contains("100"),
        "the diff shows both: {message}"
    );

    // A prompt the request includes, with source validation off: every first request differs.
    let config = example.read(&format!("{SUITE}/proposal-eval.toml"));
    let skip = config.replace("validation = \"strict\"", "validation = \"skip\"");
    assert_ne!(config, skip);
    example.write(&format!("{SUITE}/proposal-eval.toml"), skip);
    let prompt = example.read("prompts/system.md");
    example.write("prompts/system.md", format!("{prompt}Be brief.\n"));
    let run = example.evals(&[("PAYMENTS_AGENT_FORBID_MODEL", "1")], &[]);
    run.assert_summary(0, ACTIVE, IGNORED);
    let message = failure_of(&run, &test_name(RAISE));
    assert!(
        message.contains("request [0] differs from the recorded one"),
        "{message}"
    );
    assert!(message.contains("Be brief."), "{message}");
}

#[test]
fn a_missing_recording_says_the_command_that_records_it() {
    let _cargo = lock();
    let example = Example::new();
    let case = "changes/switch_currency";
    std::fs::remove_file(example.path(&recording(case))).unwrap();
    let run = example.evals(&[("PAYMENTS_AGENT_FORBID_MODEL", "1")], &[]);
    assert_verdicts(&example, &run, &[case]);
    let message = failure_of(&run, &test_name(case));
    let want = format!(
        "no recording for this case, and it calls the model; record it with:\n  RECORD=1 cargo test -p payments-agent --test evals -- {} --exact",
        test_name(case)
    );
    assert!(message.contains(&want), "`{want}` missing from:\n{message}");

    // An unknown RECORD value: every case fails with the allowed values, nothing is written.
    let before = example.recordings();
    let run = example.evals(&[("RECORD", "bogus")], &[]);
    run.assert_summary(0, ACTIVE, IGNORED);
    let message = failure_of(&run, &test_name(RAISE));
    assert!(
        message.contains("RECORD=\"bogus\" is not understood; allowed: unset or 0 (replay), 1 or all (record every selected case), stale (record missing or stale recordings only)"),
        "{message}"
    );
    assert_eq!(example.recordings(), before);

    // The long and the short name asking for different modes: refused, nothing written.
    let run = example.evals(&[("PROPOSAL_EVAL_RECORD", "stale"), ("RECORD", "1")], &[]);
    run.assert_summary(0, ACTIVE, IGNORED);
    let message = failure_of(&run, &test_name(RAISE));
    assert!(
        message.contains(
            "PROPOSAL_EVAL_RECORD=\"stale\" and RECORD=\"1\" ask for different modes; set only one"
        ),
        "{message}"
    );
    assert_eq!(example.recordings(), before);
}

#[test]
fn kill_9_during_record_leaves_every_recording_whole() {
    use std::os::unix::process::CommandExt;
    let _cargo = lock();
    let example = Example::new();
    let build = example.run(&["test", "--test", "evals", "--no-run"], &[]);
    assert!(build.success, "{}", build.text());
    let before = example.recordings();

    let mut child = example
        .cargo(&["test", "--test", "evals"])
        .envs([("RECORD", "1"), ("PAYMENTS_AGENT_SLOW_MS", "150")])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    loop {
        let now = example.recordings();
        if now.iter().any(|(k, v)| before.get(k) != Some(v)) {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the recording run ended before any write"
        );
        assert!(
            started.elapsed().as_secs() < 120,
            "no recording was rewritten in 120 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // SAFETY: signals the process group this test created (cargo and the test binary).
    let killed = unsafe { libc::killpg(child.id() as libc::pid_t, libc::SIGKILL) };
    assert_eq!(killed, 0, "killpg failed");
    child.wait().unwrap();

    let after = example.recordings();
    assert_eq!(
        after.keys().collect::<Vec<_>>(),
        before.keys().collect::<Vec<_>>()
    );
    let rewritten = after
        .iter()
        .filter(|(k, v)| before.get(*k) != Some(*v))
        .count();
    assert!(
        (1..ACTIVE).contains(&rewritten),
        "killed mid-run: {rewritten} of {ACTIVE} rewritten"
    );
    for (file, bytes) in &after {
        let r: Value =
            serde_json::from_slice(bytes).unwrap_or_else(|e| panic!("{file} is not whole: {e}"));
        assert!(!r["interactions"].as_array().unwrap().is_empty(), "{file}");
    }
    let run = example.evals(&[("PAYMENTS_AGENT_FORBID_MODEL", "1")], &[]);
    assert_verdicts(&example, &run, &[]);
}

#[test]
fn nextest_partitions_together_run_each_case_once() {
    let _cargo = lock();
    let example = Example::new();
    let version = example.run(&["nextest", "--version"], &[]);
    if !version.success {
        eprintln!(
            "SKIPPED: cargo-nextest is not installed ({})",
            version.stderr.trim()
        );
        return;
    }
    let mut seen: Vec<String> = Vec::new();
    for partition in ["count:1/2", "count:2/2"] {
        let run = example.run(
            &[
                "nextest",
                "run",
                "--test",
                "evals",
                "--partition",
                partition,
                "--no-fail-fast",
                "--color",
                "never",
            ],
            &[("PAYMENTS_AGENT_FORBID_MODEL", "1")],
        );
        assert!(run.success, "{partition}:\n{}", run.text());
        let passed: Vec<String> = run
            .stderr
            .lines()
            .chain(run.stdout.lines())
            .filter(|l| l.trim_start().starts_with("PASS ["))
            .map(|l| l.split_whitespace().last().unwrap().to_string())
            .collect();
        assert!(
            !passed.is_empty(),
            "{partition} ran nothing:\n{}",
            run.text()
        );
        seen.extend(passed);
    }
    let mut sorted = seen.clone();
    sorted.sort();
    let want: Vec<String> = example
        .active_cases()
        .iter()
        .map(|c| test_name(c))
        .collect();
    assert_eq!(
        sorted, want,
        "each active case exactly once over both partitions"
    );
}

#[test]
fn a_bad_fixture_is_one_failing_test_and_both_front_ends_agree() {
    let _cargo = lock();
    let example = Example::new();
    example.write(
        &format!("{SUITE}/changes/typo.json"),
        "{\n  \"input\": { \"message\": \"Please change my payment to 120 EUR\" },\n  \"expcted\": []\n}\n",
    );
    // A typo in `status`, and a draft with a typo elsewhere: both must fail, never be ignored.
    example.write(
        &format!("{SUITE}/changes/bad_status.json"),
        "{\n  \"input\": { \"message\": \"x\" },\n  \"expected\": [],\n  \"status\": \"actve\"\n}\n",
    );
    example.write(
        &format!("{SUITE}/drafts/typo_draft.json"),
        "{\n  \"inptu\": { \"message\": \"x\" },\n  \"status\": \"draft\"\n}\n",
    );
    // A strict failure too: a recorded answer that differs from the expected proposal.
    let mut r: Value = serde_json::from_str(&example.read(&recording(RAISE))).unwrap();
    r["interactions"][0]["response"]["proposals"][0]["mutationQuery"]["variables"]["data"]
        ["amount"] = 121.into();
    example.write(
        &recording(RAISE),
        serde_json::to_string_pretty(&r).unwrap() + "\n",
    );

    let harness = example.evals(&[("PAYMENTS_AGENT_FORBID_MODEL", "1")], &[]);
    let typo = test_name("changes/typo");
    let verdicts = harness.verdicts();
    assert_eq!(
        verdicts.get(&typo).map(String::as_str),
        Some("FAILED"),
        "{}",
        harness.text()
    );
    harness.assert_summary(ACTIVE - 1, 4, IGNORED);
    for (case, needle) in [
        ("changes/bad_status", "unknown variant `actve`"),
        ("drafts/typo_draft", "unknown field `inptu`"),
    ] {
        let message = failure_of(&harness, &test_name(case));
        assert!(message.contains(needle), "{case}: {message}");
    }
    let message = failure_of(&harness, &typo);
    assert!(
        message.contains(&format!("{SUITE}/changes/typo.json:3:3")),
        "{message}"
    );
    assert!(
        message.contains("unknown field `expcted`") && message.contains("`expected`"),
        "{message}"
    );
    let strict = failure_of(&harness, &test_name(RAISE));
    assert!(
        strict.contains("payments/changes/raise_amount: strict FAILED (score 0)")
            && strict.contains(
                "[0].mutationVariables.data.amount: values differ: expected 120, actual 121"
            ),
        "{strict}"
    );

    let macros = example.run(
        &["test", "--test", "macro_evals"],
        &[("PAYMENTS_AGENT_FORBID_MODEL", "1")],
    );
    assert_eq!(
        macros.verdicts(),
        verdicts,
        "the front ends disagree:\n{}\n{}",
        harness.text(),
        macros.text()
    );
    macros.assert_summary(ACTIVE - 1, 4, IGNORED);
    for name in [&typo, &test_name(RAISE)] {
        let from_macro = failure_of(&macros, name).replace("--test macro_evals", "--test evals");
        assert_eq!(
            from_macro,
            failure_of(&harness, name),
            "messages differ for {name}"
        );
    }
}

#[test]
fn the_harness_refuses_two_fixtures_that_make_one_test_name() {
    let _cargo = lock();
    let example = Example::new();
    // `raise-amount.json` and `raise_amount.json` are both `…::raise_amount`.
    let original = example.read(&fixture(RAISE));
    example.write(&format!("{SUITE}/changes/raise-amount.json"), original);
    let harness = example.evals(&[("PAYMENTS_AGENT_FORBID_MODEL", "1")], &[]);
    let name = test_name(RAISE);
    let text = harness.text();
    assert!(
        text.contains(&format!(
            "the fixtures `changes/raise-amount.json` and `changes/raise_amount.json` would both be the test `{name}`; rename one"
        )) || text.contains(&format!(
            "the fixtures `changes/raise_amount.json` and `changes/raise-amount.json` would both be the test `{name}`; rename one"
        )),
        "{text}"
    );
    // `--exact NAME` (how nextest runs a test) must see the clash too, not just one file.
    let exact = example.evals(
        &[("PAYMENTS_AGENT_FORBID_MODEL", "1")],
        &[name.as_str(), "--exact"],
    );
    assert!(
        exact.text().contains("would both be the test"),
        "{}",
        exact.text()
    );
}

#[test]
fn a_status_edited_between_runs_counts_on_the_next_run() {
    let _cargo = lock();
    let example = Example::new();
    let env = [("PAYMENTS_AGENT_FORBID_MODEL", "1")];
    // Whether a test is ignored is cached between runs for files unchanged for two seconds: let
    // the copied fixtures age past that, so the runs below answer from the cache.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    example.evals(&env, &[]).assert_summary(ACTIVE, 0, IGNORED);
    example.evals(&env, &[]).assert_summary(ACTIVE, 0, IGNORED);

    // A cached active case turned draft is ignored at once, and active again runs at once.
    let original = example.read(&fixture(RAISE));
    let mut draft: Value = serde_json::from_str(&original).unwrap();
    draft["status"] = "draft".into();
    example.write(
        &fixture(RAISE),
        serde_json::to_string_pretty(&draft).unwrap() + "\n",
    );
    let run = example.evals(&env, &[]);
    run.assert_summary(ACTIVE - 1, 0, IGNORED + 1);
    assert_eq!(
        run.verdicts().get(&test_name(RAISE)).map(String::as_str),
        Some("ignored")
    );
    example.write(&fixture(RAISE), &original);
    let run = example.evals(&env, &[]);
    run.assert_summary(ACTIVE, 0, IGNORED);
    assert_eq!(
        run.verdicts().get(&test_name(RAISE)).map(String::as_str),
        Some("ok")
    );

    // A cached draft promoted by hand (status removed) runs at once.
    let promoted = "drafts/refund_last_payment";
    let mut case: Value = serde_json::from_str(&example.read(&fixture(promoted))).unwrap();
    assert_eq!(case["status"], "draft");
    case.as_object_mut().unwrap().remove("status");
    example.write(
        &fixture(promoted),
        serde_json::to_string_pretty(&case).unwrap() + "\n",
    );
    let run = example.evals(&env, &[]);
    let verdict = run.verdicts().get(&test_name(promoted)).cloned();
    assert!(
        matches!(verdict.as_deref(), Some("ok" | "FAILED")),
        "{verdict:?}\n{}",
        run.text()
    );
    assert!(
        run.stdout.contains(&format!("; {} ignored", IGNORED - 1)),
        "{}",
        run.text()
    );
}

#[test]
fn an_edited_fixture_rebuilds_the_macros_tests() {
    let _cargo = lock();
    let example = Example::new();
    let env = [("PAYMENTS_AGENT_FORBID_MODEL", "1")];
    // Without the example's build.rs (which reruns on any change below fixtures/), only the
    // macro's own tracking of each file can rebuild the tests.
    std::fs::remove_file(example.path("build.rs")).unwrap();
    let macros = |example: &Example| example.run(&["test", "--test", "macro_evals"], &env);
    macros(&example).assert_summary(ACTIVE, 0, IGNORED);
    // The macro reads `status` at compile time; each fixture is a dependency of the build, so
    // an edit rebuilds the tests. Each step below changes what the macro makes (a test ignored
    // or not), so it passes only when the state before it was tracked.
    let rebuilt = |run: &Run| {
        assert!(
            run.stderr.contains("Compiling payments-agent"),
            "{}",
            run.text()
        );
    };
    // Tracked as its test's doc string (UTF-8, small).
    let original = example.read(&fixture(RAISE));
    let mut draft: Value = serde_json::from_str(&original).unwrap();
    draft["status"] = "draft".into();
    let draft = serde_json::to_string_pretty(&draft).unwrap() + "\n";
    example.write(&fixture(RAISE), &draft);
    let run = macros(&example);
    run.assert_summary(ACTIVE - 1, 0, IGNORED + 1);
    rebuilt(&run);
    // A fixture that is not UTF-8 cannot be a doc string: it is included as bytes, so it still
    // compiles, and its test fails naming the fixture.
    let mut latin = original.clone().into_bytes();
    latin.splice(1..1, *b"\"description\": \"caf\xe9\",");
    example.write(&fixture(RAISE), latin);
    let run = macros(&example);
    run.assert_summary(ACTIVE - 1, 1, IGNORED);
    rebuilt(&run);
    assert!(
        run.text()
            .contains(&format!("bad fixture: {}", fixture(RAISE))),
        "{}",
        run.text()
    );
    // From the bytes-tracked file to a draft over 1 MiB (tracked as bytes too, not as a doc
    // string), and from that back to the original.
    example.write(&fixture(RAISE), draft.clone() + &" ".repeat(1 << 20));
    let run = macros(&example);
    run.assert_summary(ACTIVE - 1, 0, IGNORED + 1);
    rebuilt(&run);
    example.write(&fixture(RAISE), &original);
    let run = macros(&example);
    run.assert_summary(ACTIVE, 0, IGNORED);
    rebuilt(&run);
}

#[test]
fn non_ascii_fixture_names_make_distinct_tests_in_both_front_ends() {
    let _cargo = lock();
    let example = Example::new();
    // Two names of the same length that differ only in non-ASCII characters: they used to
    // become the same test name (`_n_code___`-style) and clash.
    let original = example.read(&fixture(RAISE));
    example.write(&format!("{SUITE}/changes/ünïcode_日本.json"), &original);
    example.write(&format!("{SUITE}/changes/ünïcode_中国.json"), &original);
    let expected = [
        test_name("changes/u00fc_nu00ef_code_u65e5_u672c_"),
        test_name("changes/u00fc_nu00ef_code_u4e2d_u56fd_"),
    ];
    let harness = example.evals(&[("PAYMENTS_AGENT_FORBID_MODEL", "1")], &["--list"]);
    let macros = example.run(
        &["test", "--test", "macro_evals", "--", "--list"],
        &[("PAYMENTS_AGENT_FORBID_MODEL", "1")],
    );
    for run in [&harness, &macros] {
        let text = run.text();
        assert!(!text.contains("would both be the test"), "{text}");
        for name in &expected {
            assert!(
                text.contains(&format!("{name}: test")),
                "{name} missing:\n{text}"
            );
        }
    }
}

#[test]
fn a_panic_in_the_live_model_is_named_as_the_models() {
    let _cargo = lock();
    let example = Example::new();
    let before = example.recordings();
    let name = test_name(RAISE);
    // `PAYMENTS_AGENT_FORBID_MODEL` makes the example's live model panic when it is built.
    let run = example.evals(
        &[("RECORD", "1"), ("PAYMENTS_AGENT_FORBID_MODEL", "1")],
        &[name.as_str(), "--exact"],
    );
    let failure = failure_of(&run, &name);
    assert!(
        failure.contains("building the live model panicked: PAYMENTS_AGENT_FORBID_MODEL is set"),
        "{failure}"
    );
    assert!(!failure.contains("the case panicked"), "{failure}");
    assert_eq!(
        example.recordings(),
        before,
        "a failed record wrote a recording"
    );
}

#[test]
fn sources_stay_in_the_workspace_and_case_sources_take_globs() {
    let _cargo = lock();
    let example = Example::new();
    // A file beside the example's copy: outside its workspace (the copy is a workspace of its own).
    let outside = example.path("../outside.txt");
    std::fs::write(&outside, "not the crate's\n").unwrap();
    let with_sources = |sources: Value| {
        let mut case: Value = serde_json::from_str(&example.read(&fixture(RAISE))).unwrap();
        case["sources"] = sources;
        serde_json::to_string_pretty(&case).unwrap() + "\n"
    };
    let absolute = outside.to_string_lossy().into_owned();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&outside, example.path("prompts/link.md")).unwrap();
    let escapes = [
        (
            "escape_dotdot",
            json!(["../outside.txt"]),
            "../outside.txt",
            "is outside the workspace",
        ),
        (
            "escape_absolute",
            json!([absolute]),
            absolute.as_str(),
            "an absolute path ties the recording to this machine",
        ),
        (
            "glob_nothing",
            json!(["prompts/*.txt"]),
            "prompts/*.txt",
            "the pattern matches no file",
        ),
    ];
    for (case, sources, _, _) in &escapes {
        example.write(
            &fixture(&format!("changes/{case}")),
            with_sources(sources.clone()),
        );
    }
    // A case glob that matches the prompts: accepted, recorded, and replayed fresh.
    example.write(
        &fixture("changes/case_glob"),
        with_sources(json!(["prompts/*.md"])),
    );

    let run = example.evals(&[("PAYMENTS_AGENT_FORBID_MODEL", "1")], &[]);
    for (case, _, entry, why) in &escapes {
        let failure = failure_of(&run, &test_name(&format!("changes/{case}")));
        let head = format!("{SUITE}/changes/{case}.json: source `{entry}`:");
        assert!(failure.contains(&head), "`{head}` missing from:\n{failure}");
        assert!(failure.contains(why), "`{why}` missing from:\n{failure}");
    }
    // The link below prompts/ leaves the workspace too, so the glob that matches it is refused.
    #[cfg(unix)]
    {
        let failure = failure_of(&run, &test_name("changes/case_glob"));
        assert!(
            failure.contains("`prompts/link.md` is outside the workspace"),
            "{failure}"
        );
        std::fs::remove_file(example.path("prompts/link.md")).unwrap();
    }

    let name = test_name("changes/case_glob");
    let record = example.evals(&[("RECORD", "1")], &[name.as_str(), "--exact"]);
    assert!(record.success, "{}", record.text());
    let replay = example.evals(
        &[("PAYMENTS_AGENT_FORBID_MODEL", "1")],
        &[name.as_str(), "--exact"],
    );
    assert!(replay.success, "{}", replay.text());
    let recorded: Value =
        serde_json::from_str(&example.read(&recording("changes/case_glob"))).unwrap();
    let paths: Vec<&str> = recorded["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["path"].as_str().unwrap())
        .collect();
    assert!(paths.contains(&"prompts/system.md"), "{paths:?}");
    assert!(paths.contains(&"prompts/output-format.md"), "{paths:?}");
}

#[test]
fn the_orphan_note_names_a_prune_command_for_this_suite() {
    let _cargo = lock();
    let example = Example::new();
    let mut orphan: Value = serde_json::from_str(&example.read(&recording(RAISE))).unwrap();
    orphan["case"] = "changes/gone".into();
    example.write(
        &recording("changes/gone"),
        serde_json::to_string_pretty(&orphan).unwrap() + "\n",
    );
    let run = example.evals(&[("PAYMENTS_AGENT_FORBID_MODEL", "1")], &[]);
    let want = format!(
        "remove them with `cargo proposal-eval prune {SUITE} --yes`, run in the crate root"
    );
    assert!(
        run.stderr.contains(&want),
        "`{want}` missing from:\n{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains(&format!("  {SUITE}/recordings/changes/gone.json")),
        "{}",
        run.stderr
    );
    // Only that one: every other recording has its case.
    let named = run
        .stderr
        .lines()
        .filter(|l| l.starts_with(&format!("  {SUITE}/recordings/")))
        .count();
    assert_eq!(named, 1, "{}", run.stderr);
}

#[test]
fn record_stale_after_a_code_change_rerecords_exactly_the_cases_whose_requests_changed() {
    let _cargo = lock();
    let example = Example::new();
    // A change in code, not in any source: requests about an IBAN now ask for temperature 1.
    let code = example.read("src/lib.rs");
    let from = "\"temperature\": 0,";
    assert!(code.contains(from), "the example's request() moved");
    example.write(
        "src/lib.rs",
        code.replace(
            from,
            "\"temperature\": if input[\"message\"].as_str().unwrap_or(\"\").contains(\"IBAN\") { 1 } else { 0 },",
        ),
    );
    let changed = ["changes/new_iban", "multi/reduce_by_percent_and_new_iban"];

    // Plain replay: those cases fail with the request diff and the command that re-records them.
    let run = example.evals(&[("PAYMENTS_AGENT_FORBID_MODEL", "1")], &[]);
    assert_verdicts(&example, &run, &changed);
    for case in changed {
        let message = failure_of(&run, &test_name(case));
        assert!(
            message.contains("request [0] differs from the recorded one"),
            "{message}"
        );
        let command = format!(
            "re-record just this case: RECORD=1 cargo test -p payments-agent --test evals -- {} --exact",
            test_name(case)
        );
        assert!(
            message.contains(&command),
            "`{command}` missing from:\n{message}"
        );
    }

    // RECORD=stale: exactly those two recordings change, and every case passes.
    let before = example.recordings();
    let run = example.evals(&[("RECORD", "stale")], &[]);
    assert_verdicts(&example, &run, &[]);
    let after = example.recordings();
    let rerecorded: Vec<&String> = after
        .keys()
        .filter(|k| before.get(*k) != after.get(*k))
        .collect();
    let want: Vec<String> = changed.iter().map(|c| format!("{c}.json")).collect();
    assert_eq!(
        rerecorded,
        want.iter().collect::<Vec<_>>(),
        "{}",
        run.text()
    );
    for case in changed {
        assert!(
            run.stderr.contains(&format!(
                "note: {}: the code's model calls differ from the recording",
                test_name(case)
            )),
            "{}",
            run.stderr
        );
    }
    let replay = example.evals(&[("PAYMENTS_AGENT_FORBID_MODEL", "1")], &[]);
    assert_verdicts(&example, &replay, &[]);
}
