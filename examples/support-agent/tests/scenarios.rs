//! The HTTP record and replay as a user meets it: this crate's suite run in a child process
//! (this very binary, with `SUPPORT_AGENT_SUITE` naming a copy of `fixtures/support`), with the
//! environment a user sets, against the fake OpenAI-compatible upstream of `fake_openai`. The
//! child runs the async agent (`suite::support`, on tokio), or with
//! `SUPPORT_AGENT_CLIENT=blocking` the blocking one (`suite::support_blocking`, plain `fn` cases).

mod fake_openai;
mod suite;

use fake_openai::{FakeOpenAi, Fault, KEY};
use libtest_mimic::{Arguments, Failed, Trial};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

fn main() -> ExitCode {
    if let Some(dir) = std::env::var_os("SUPPORT_AGENT_SUITE") {
        let harness = proposal_eval::Harness::new(PathBuf::from(dir));
        return match std::env::var("SUPPORT_AGENT_CLIENT").as_deref() {
            Ok("blocking") => harness.run(suite::support_blocking),
            Ok("terse") => harness.run(suite::support_terse),
            Ok("fan_out") => harness.run_async(suite::support_fan_out),
            Ok("keys") => harness.run(suite::with_keys),
            // The shopping assistant (`fixtures/shop`, `fixtures/shop_failing`); recorded with
            // `RECORD=1 SUPPORT_AGENT_CLIENT=shop SUPPORT_AGENT_SUITE=$PWD/fixtures/shop cargo
            // test -p support-agent --test scenarios`, against the fake upstream started here.
            Ok("shop") => {
                let fake = fake_openai::for_recording();
                let code = harness.run(suite::shop);
                if let Some(fake) = fake {
                    fake.stop_and_report();
                }
                code
            }
            _ => harness.run_async(suite::support),
        };
    }
    let mut args = Arguments::from_args();
    // One scenario at a time: they count the upstream's calls and share the live-call places.
    args.test_threads.get_or_insert(1);
    let trials = vec![
        Trial::test(
            "records_through_the_proxy_then_replays_with_the_upstream_stopped",
            record_then_replay,
        ),
        Trial::test(
            "blocking_client_records_through_the_proxy_then_replays_with_the_upstream_stopped",
            blocking_record_then_replay,
        ),
        Trial::test(
            "a_changed_request_fails_with_the_diff_and_the_rerecord_command",
            changed_request,
        ),
        Trial::test(
            "keys_in_headers_queries_bodies_and_echoes_never_reach_a_recording",
            keys_everywhere,
        ),
        Trial::test("concurrent_cases_stay_within_max_concurrency", concurrency),
        Trial::test(
            "a_fan_out_case_replays_100_times_whatever_order_its_calls_arrive_in",
            fan_out,
        ),
        Trial::test(
            "shop_records_tool_calls_in_three_api_shapes_then_replays_with_the_upstream_stopped",
            shop_record_then_replay,
        ),
        Trial::test("shop_trajectory_failures_show_the_alignment", shop_failures),
        Trial::test(
            "an_expectation_nothing_reads_and_a_case_nothing_checks_fail_naming_the_keys",
            unchecked_cases,
        ),
        Trial::test(
            "checks_and_a_case_budget_decide_the_replay_as_they_decided_the_recording",
            checks_and_case_budget,
        ),
        Trial::test("the_budget_stops_live_calls", budget),
        Trial::test(
            "the_budget_is_shared_by_the_processes_of_one_nextest_run",
            budget_across_processes,
        ),
        Trial::test(
            "an_unreachable_upstream_is_named_though_the_client_says_only_502",
            unreachable_upstream,
        ),
        Trial::test(
            "an_upstream_url_with_an_empty_port_is_refused_naming_its_variable_or_key",
            empty_port,
        ),
        Trial::test(
            "a_hanging_upstream_fails_the_case_after_timeout_s",
            hanging_upstream,
        ),
        Trial::test(
            "a_stream_without_its_end_marker_fails_the_case_and_is_not_recorded",
            cut_stream,
        ),
        Trial::test(
            "bad_fixtures_fail_before_any_model_call_and_a_bom_is_accepted",
            bad_fixtures,
        ),
        Trial::test("a_suite_folder_without_fixtures_fails_the_run", empty_suite),
        Trial::test(
            "a_zeroed_input_hash_is_named_as_edited_not_changed_and_unchanged",
            zeroed_input_hash,
        ),
        Trial::test("several_name_filters_select_as_in_libtest", several_filters),
        Trial::test(
            "a_test_binary_started_outside_cargo_reports_under_its_package",
            outside_cargo,
        ),
    ];
    libtest_mimic::run(&args, trials).exit_code()
}

/// A copy of `fixtures/support` without its recordings, in this target's temp folder.
struct Suite {
    dir: PathBuf,
}

struct Run {
    success: bool,
    text: String,
    verdicts: BTreeMap<String, String>,
}

impl Suite {
    /// The copy with the committed recordings.
    fn with_recordings(name: &str) -> Suite {
        let suite = Suite::new(name);
        let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/support/recordings");
        std::fs::create_dir_all(suite.dir.join("recordings")).unwrap();
        for entry in std::fs::read_dir(from).unwrap().flatten() {
            std::fs::copy(
                entry.path(),
                suite.dir.join("recordings").join(entry.file_name()),
            )
            .unwrap();
        }
        suite
    }

    /// A suite of `copies` fan-out cases: each the four fixtures of `fixtures/support` as one
    /// inbox (their messages, their orders together, their expected actions one after another).
    fn fan_out(name: &str, copies: usize) -> Suite {
        let suite = Suite::new(name);
        let (mut messages, mut orders, mut expected) = (vec![], serde_json::Map::new(), vec![]);
        for (file, _) in suite.fixtures() {
            let path = suite.dir.join(&file);
            let fixture: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            std::fs::remove_file(path).unwrap();
            messages.push(fixture["input"]["message"].clone());
            orders.extend(fixture["input"]["orders"].as_object().unwrap().clone());
            expected.extend(fixture["expected"].as_array().unwrap().clone());
        }
        assert_eq!(messages.len(), CASES);
        let inbox = serde_json::json!({
            "description": "Four customers at once: four tool calls at once, then three streamed replies",
            "input": { "messages": messages, "orders": orders },
            "expected": expected,
        });
        for n in 0..copies {
            let text = serde_json::to_string_pretty(&inbox).unwrap();
            std::fs::write(suite.dir.join(format!("inbox_{n:03}.json")), text).unwrap();
        }
        suite
    }

    /// The fixtures of the copy: file name and text.
    fn fixtures(&self) -> BTreeMap<String, String> {
        std::fs::read_dir(&self.dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".json"))
            .map(|name| {
                let text = std::fs::read_to_string(self.dir.join(&name)).unwrap();
                (name, text)
            })
            .collect()
    }

    /// An empty suite folder.
    fn bare(name: &str) -> Suite {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("support-{}", std::process::id()))
            .join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Suite { dir }
    }

    fn new(name: &str) -> Suite {
        Suite::copy_of("fixtures/support", name)
    }

    /// A copy of the fixtures and config of `fixtures` (crate-relative), without recordings.
    fn copy_of(fixtures: &str, name: &str) -> Suite {
        let Suite { dir } = Suite::bare(name);
        let from = Path::new(env!("CARGO_MANIFEST_DIR")).join(fixtures);
        for entry in std::fs::read_dir(from).unwrap().flatten() {
            if entry.path().is_file() {
                std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
            }
        }
        Suite { dir }
    }

    /// Runs the suite, with a user's environment: nothing of this process's record settings.
    fn run(&self, envs: &[(&str, &str)], threads: usize) -> Run {
        self.run_with(envs, &["--test-threads", &threads.to_string()])
    }

    /// Runs the suite with these arguments.
    fn run_with(&self, envs: &[(&str, &str)], args: &[&str]) -> Run {
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        for (key, _) in std::env::vars() {
            if key == "RECORD"
                || key.starts_with("PROPOSAL_EVAL_")
                || key == "OPENAI_API_KEY"
                || key.starts_with("SUPPORT_AGENT_")
                || key.starts_with("NEXTEST_")
            {
                cmd.env_remove(key);
            }
        }
        let out = cmd
            .env("SUPPORT_AGENT_SUITE", &self.dir)
            .env("NO_COLOR", "1")
            .envs(envs.iter().copied())
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let verdicts = stdout
            .lines()
            .filter_map(|l| l.strip_prefix("test ")?.split_once(" ... "))
            .map(|(name, verdict)| (name.trim().to_string(), verdict.trim().to_string()))
            .collect();
        Run {
            success: out.status.success(),
            text: format!(
                "--- stdout\n{stdout}\n--- stderr\n{}",
                String::from_utf8_lossy(&out.stderr)
            ),
            verdicts,
        }
    }

    /// Adds `line` to the copy's `[http]` table.
    fn set_http(&self, line: &str) {
        let file = self.dir.join("proposal-eval.toml");
        let text = std::fs::read_to_string(&file).unwrap();
        std::fs::write(
            &file,
            text.replace("[http]\n", &format!("[http]\n{line}\n")),
        )
        .unwrap();
    }

    fn recordings(&self) -> BTreeMap<String, String> {
        std::fs::read_dir(self.dir.join("recordings"))
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| {
                        (
                            e.file_name().to_string_lossy().into_owned(),
                            std::fs::read_to_string(e.path()).unwrap(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    fn record(&self, upstream: &FakeOpenAi, envs: &[(&str, &str)], threads: usize) -> Run {
        let mut all = vec![
            ("RECORD", "1"),
            ("PROPOSAL_EVAL_UPSTREAM", upstream.url.as_str()),
            ("OPENAI_API_KEY", KEY),
        ];
        all.extend_from_slice(envs);
        self.run(&all, threads)
    }
}

fn check(ok: bool, what: &str, run: &Run) -> Result<(), Failed> {
    if ok {
        Ok(())
    } else {
        Err(format!("{what}\n{}", run.text).into())
    }
}

const CASES: usize = 4;
/// Two calls (a tool call, then the streamed reply) for three cases; one for `no_order_number`.
const CALLS: usize = 7;

/// Records every case of `suite` against a fresh fake upstream, with `env` set: every case
/// passes, the upstream saw all `CALLS` with the key, and each case has a recording that holds
/// no credential. Returns the run and the recordings (file name to text).
fn record_every_case(
    suite: &Suite,
    env: &[(&str, &str)],
    what: &str,
) -> Result<(Run, BTreeMap<String, String>), Failed> {
    let upstream = FakeOpenAi::start(Duration::ZERO);
    let recorded = suite.record(&upstream, env, 2);
    let seen = upstream.stop();
    check(
        recorded.success && recorded.verdicts.len() == CASES,
        &format!("{what} passes every case"),
        &recorded,
    )?;
    if seen.calls != CALLS || seen.refused != 0 {
        return Err(format!(
            "the upstream saw {seen:?}, expected {CALLS} calls with the key\n{}",
            recorded.text
        )
        .into());
    }
    let files = suite.recordings();
    if files.len() != CASES {
        return Err(format!("{} recordings: {:?}", files.len(), files.keys()).into());
    }
    for (name, text) in &files {
        for secret in [KEY, "Bearer", "sk-proj"] {
            if text.contains(secret) {
                return Err(format!("{name} holds `{secret}`:\n{text}").into());
            }
        }
    }
    Ok((recorded, files))
}

fn record_then_replay() -> Result<(), Failed> {
    let suite = Suite::new("record_replay");
    let (recorded, files) = record_every_case(&suite, &[], "recording")?;
    let shipped: serde_json::Value =
        serde_json::from_str(&files["where_is_my_order.json"]).unwrap();
    let calls = shipped["interactions"].as_array().unwrap();
    let (ask, stream) = (&calls[0], &calls[1]);
    if ask["http"]["path"] != "/chat/completions"
        || ask["response"]["choices"][0]["message"]["tool_calls"][0]["function"]["name"]
            != "lookup_order"
        || !stream["http"]["content_type"]
            .as_str()
            .unwrap_or("")
            .starts_with("text/event-stream")
        || stream["response"].as_array().map_or(0, Vec::len) < 3
        || stream["usage"]["output_tokens"].as_u64().is_none()
        || ask["usage"]["input_tokens"].as_u64().is_none()
    {
        return Err(
            format!("the recording's calls are not what the agent made:\n{shipped:#}").into(),
        );
    }

    // Replay: the upstream is stopped, no key, no upstream configured in the environment.
    let replayed = suite.run(&[], 2);
    check(
        replayed.success,
        "replay passes with the upstream stopped",
        &replayed,
    )?;
    check(
        replayed.verdicts == recorded.verdicts,
        "replay gives the recording run's verdicts",
        &replayed,
    )?;
    check(
        suite.recordings() == files,
        "replay leaves the recordings as they were",
        &replayed,
    )
}

/// The `checks` and `budget` evaluators as a user meets them: the support suite with the
/// suite's `[[checks]]` and `[budget]`, a fixture's own checks (text, regex, a JSON Schema) and a
/// budget of one call on a case that makes two. Recorded from the fake upstream, then replayed
/// with it stopped: the same verdicts and the same failure, from the recorded usage. A schema
/// file that is gone fails its case before any model call.
fn checks_and_case_budget() -> Result<(), Failed> {
    let suite = Suite::new("checks");
    let config = suite.dir.join("proposal-eval.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(
        "\n[[checks]]\npath = \"[*].type\"\none_of = [\"tool_call\", \"reply\"]\n\n[[checks]]\npath = \"[*].text\"\nmax_length = 120\n\n[[checks]]\npath = \"[*].text\"\nnot_contains = \"As an AI\"\n\n[budget]\nmax_calls = 2\nmax_cost_usd = 0.01\nmax_tokens = 5000\n",
    );
    std::fs::write(&config, text).unwrap();
    let schema = suite.dir.join(".schemas/tool_call.json");
    std::fs::create_dir_all(schema.parent().unwrap()).unwrap();
    std::fs::write(
        &schema,
        r#"{"type": "object", "required": ["type", "name", "arguments"],
            "properties": {"type": {"const": "tool_call"}, "name": {"enum": ["lookup_order"]},
              "arguments": {"type": "object", "required": ["order_id"],
                "properties": {"order_id": {"type": "string", "pattern": "^[A-Z]-\\d{4}$"}}}}}"#,
    )
    .unwrap();
    let add = |file: &str, keys: serde_json::Value| {
        let path = suite.dir.join(file);
        let mut fixture: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        fixture
            .as_object_mut()
            .unwrap()
            .extend(keys.as_object().unwrap().clone());
        std::fs::write(path, serde_json::to_string_pretty(&fixture).unwrap()).unwrap();
    };
    add(
        "where_is_my_order.json",
        serde_json::json!({
            "checks": [
                {"path": "[1].text", "icontains": "SHIPPED"},
                {"path": "[1].text", "regex": "\\d{4}-\\d{2}-\\d{2}"},
                {"path": "[0]", "json_schema": ".schemas/tool_call.json"},
            ],
            "budget": {"max_calls": 1},
        }),
    );
    add(
        "unknown_order.json",
        serde_json::json!({"checks": [{"path": "[1].text", "contains": "A-2002"}]}),
    );

    let upstream = FakeOpenAi::start(Duration::ZERO);
    let recorded = suite.record(&upstream, &[], 2);
    let seen = upstream.stop();
    let over = "checks::where_is_my_order";
    let verdicts_ok = |run: &Run| {
        run.verdicts.len() == CASES
            && run
                .verdicts
                .iter()
                .all(|(name, v)| v == if name == over { "FAILED" } else { "ok" })
    };
    check(
        verdicts_ok(&recorded) && seen.calls == CALLS,
        &format!("recording fails {over} alone, on its budget ({seen:?})"),
        &recorded,
    )?;
    let replayed = suite.run(&[], 2);
    check(
        replayed.verdicts == recorded.verdicts,
        "replay gives the recording run's verdicts",
        &replayed,
    )?;
    // The failure, from `budget FAILED` to its re-run line: the same numbers both times.
    let failure = |run: &Run| -> Option<String> {
        let (_, rest) = run
            .text
            .split_once("checks/where_is_my_order: budget FAILED")?;
        Some(rest.split_once("re-run: ")?.0.to_string())
    };
    let shown = failure(&replayed);
    check(
        shown.is_some() && shown == failure(&recorded),
        "the budget's failure is the recording run's",
        &replayed,
    )?;
    let shown = shown.unwrap_or_default();
    check(
        shown.starts_with(" (score 0.67)\n2 of 3 limits kept: 2 call(s), ")
            && shown.ends_with("\n  calls: 2, over max_calls = 1\n")
            && !replayed.text.contains("checks FAILED"),
        "the case keeps the suite's cost and token limits and breaks its own call limit; every check passes",
        &replayed,
    )?;
    // A schema file that is gone: its case fails before any model call, naming the check.
    std::fs::remove_dir_all(schema.parent().unwrap()).unwrap();
    let no_schema = suite.run(&[], 2);
    check(
        no_schema.verdicts.get(over).map(String::as_str) == Some("FAILED")
            && no_schema.text.contains(
                "checks[2] (`[0]` json_schema \".schemas/tool_call.json\"): cannot read the schema file `.schemas/tool_call.json`",
            )
            && !no_schema.text.contains("budget FAILED"),
        "a missing schema file fails its case before it runs",
        &no_schema,
    )
}

fn changed_request() -> Result<(), Failed> {
    let suite = Suite::new("changed");
    let upstream = FakeOpenAi::start(Duration::ZERO);
    let recorded = suite.record(&upstream, &[], 2);
    upstream.stop();
    check(recorded.success, "recording passes", &recorded)?;
    // The code now asks another model: every request differs from its recording.
    let replay = suite.run(&[("SUPPORT_AGENT_MODEL", "gpt-4o")], 1);
    check(
        !replay.success,
        "a changed request fails the replay",
        &replay,
    )?;
    check(
        replay.verdicts.values().all(|v| v == "FAILED") && replay.verdicts.len() == CASES,
        "every case fails",
        &replay,
    )?;
    for needle in [
        "request [0] differs from the recorded one",
        "-  \"model\": \"gpt-4o-mini\",",
        "+  \"model\": \"gpt-4o\",",
        "re-record just this case: RECORD=1 cargo test -p support-agent --test scenarios -- changed::where_is_my_order --exact",
    ] {
        check(replay.text.contains(needle), &format!("the failure says `{needle}`"), &replay)?;
    }
    Ok(())
}

/// The keys of `suite::with_keys`: the first set records, the second replays.
const KEYS: [[(&str, &str); 5]; 2] = [
    [
        (
            "SUPPORT_AGENT_GOOGLE_KEY",
            "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
        ),
        (
            "SUPPORT_AGENT_AZURE_KEY",
            "0f1e2d3c4b5a69788796a5b4c3d2e1f0",
        ),
        ("SUPPORT_AGENT_SESSION", "5e55106d00d5e55106d00d5e55106d00"),
        ("SUPPORT_AGENT_USER_KEY", "sk-live-9a8b7c6d5e4f3a2b1c0d9e8f"),
        (
            "SUPPORT_AGENT_NOTE_KEY",
            "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        ),
    ],
    [
        (
            "SUPPORT_AGENT_GOOGLE_KEY",
            "AIzaSyZ9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J",
        ),
        (
            "SUPPORT_AGENT_AZURE_KEY",
            "a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5",
        ),
        ("SUPPORT_AGENT_SESSION", "0dd5e55106d00dd5e55106d00dd5e551"),
        ("SUPPORT_AGENT_USER_KEY", "sk-live-0f1e2d3c4b5a69788796a5b4"),
        (
            "SUPPORT_AGENT_NOTE_KEY",
            "sk-ant-api03-ZyXwVuTsRqPoNmLkJiHgFeDcBa9876543210",
        ),
    ],
];

/// A request with a key in its header, its query (`api_key`, `key`, `api-key`,
/// `session_token`), its body (`user`, `metadata.customer_note`) and the upstream's answer (the
/// echoed note). Recorded with no redaction configured, nothing is written and the case names
/// each place, what it looks like and the config line to add; with those lines, the recording
/// holds none of the keys, replays with other keys, and a replay whose request changed shows a
/// diff without them.
fn keys_everywhere() -> Result<(), Failed> {
    let suite = Suite::bare("keys");
    std::fs::write(
        suite.dir.join("keys_everywhere.json"),
        r#"{ "input": { "message": "Hello, where is my parcel?" },
  "expected": { "reply": "Could you tell me your order number (A-1234)?" } }
"#,
    )
    .unwrap();
    let client = ("SUPPORT_AGENT_CLIENT", "keys");
    let mut first = KEYS[0].to_vec();
    first.push(client);
    let upstream = FakeOpenAi::start(Duration::ZERO);
    let refused = suite.record(&upstream, &first, 1);
    check(
        !refused.success,
        "recording with the keys unredacted fails",
        &refused,
    )?;
    check(
        suite.recordings().is_empty(),
        "nothing is written, not even a temp file",
        &refused,
    )?;
    let start = refused.text.find("--- keys::keys_everywhere").unwrap_or(0);
    let failure = &refused.text[start..];
    let at = failure
        .find("keys/recordings/keys_everywhere.json")
        .unwrap_or(0);
    let prefix = &failure[..at];
    let prefix = &prefix[prefix.rfind('\n').map_or(0, |n| n + 1)..];
    let failure = failure.replace(&format!("{prefix}keys/"), "<suite>/");
    let expected = r#"<suite>/recordings/keys_everywhere.json was not written (a file already there is unchanged): it would hold what looks like a credential
  interactions[0].http.query, parameter `session_token` (a key-like value of 32 characters under a name holding `token`)
    fix: add to `[recording]` in <suite>/proposal-eval.toml: redact = ["session_token"]
  interactions[0].request.metadata.customer_note (an sk-ant- Anthropic key)
    fix: add to `[recording]` in <suite>/proposal-eval.toml: redact_values = ["sk-ant-[A-Za-z0-9_-]{20,}"]
  interactions[0].request.user (an sk- API key)
    fix: add to `[recording]` in <suite>/proposal-eval.toml: redact_values = ["sk-[A-Za-z0-9_-]{20,}"]
  interactions[0].response.metadata.customer_note (an sk-ant- Anthropic key)
    fix: add to `[recording]` in <suite>/proposal-eval.toml: redact_values = ["sk-ant-[A-Za-z0-9_-]{20,}"]
redaction (the credential keys, `redact`, `redact_values`) ran before this check: docs/reference/recordings.md, "Redaction""#;
    check(
        failure.contains(expected),
        &format!(
            "the failure names each place, its kind and its fix:
{expected}"
        ),
        &refused,
    )?;
    for (_, secret) in KEYS[0] {
        check(
            !refused.text.contains(secret),
            &format!("the failure does not print {secret}"),
            &refused,
        )?;
    }

    // The lines the failure gave (one regex covers both `sk-` kinds): recorded, then replayed.
    std::fs::write(
        suite.dir.join("proposal-eval.toml"),
        "[recording]\nredact = [\"session_token\"]\nredact_values = [\"sk-[A-Za-z0-9_-]{20,}\"]\n",
    )
    .unwrap();
    let recorded = suite.record(&upstream, &first, 1);
    let seen = upstream.stop();
    check(
        recorded.success,
        "with the config lines it records",
        &recorded,
    )?;
    check(
        seen.calls == 2 && seen.refused == 0,
        &format!("the key reached the upstream both times: {seen:?}"),
        &recorded,
    )?;
    let files = suite.recordings();
    let text = &files["keys_everywhere.json"];
    for secret in KEYS[0].iter().map(|(_, s)| *s).chain([KEY, "Bearer"]) {
        if text.contains(secret) {
            return Err(format!("the recording holds {secret}:\n{text}").into());
        }
    }
    let call = &serde_json::from_str::<serde_json::Value>(text).unwrap()["interactions"][0];
    let written = [
        (&call["http"]["query"], "api-version=2024-06-01&api_key=<redacted>&key=<redacted>&api-key=<redacted>&session_token=<redacted>"),
        (&call["request"]["user"], "<redacted>"),
        (&call["request"]["metadata"]["customer_note"], "the customer pasted <redacted>"),
        (&call["response"]["metadata"]["customer_note"], "the customer pasted <redacted>"),
    ];
    for (value, expected) in written {
        if value != expected {
            return Err(format!("recorded {value}, expected {expected:?}:\n{text}").into());
        }
    }

    // Replay with the other keys: every redacted place takes them.
    let mut second = KEYS[1].to_vec();
    second.extend([
        client,
        ("OPENAI_API_KEY", "sk-proj-OTHERother9876543210fedcbaFEDCBA"),
    ]);
    let replayed = suite.run(&second, 1);
    check(replayed.success, "replay with other keys passes", &replayed)?;
    // A changed request: the diff shows what changed, and none of the keys.
    second.push(("SUPPORT_AGENT_MODEL", "gpt-4o"));
    let changed = suite.run(&second, 1);
    check(
        !changed.success
            && changed
                .text
                .contains("request [0] differs from the recorded one")
            && changed.text.contains("+  \"model\": \"gpt-4o\","),
        "a changed request fails with its diff",
        &changed,
    )?;
    for secret in second.iter().map(|(_, s)| *s).filter(|s| s.len() > 16) {
        check(
            !changed.text.contains(secret),
            &format!("the diff does not print {secret}"),
            &changed,
        )?;
    }
    check(
        suite.recordings() == files,
        "replays leave the recording as it was",
        &changed,
    )
}

fn concurrency() -> Result<(), Failed> {
    let suite = Suite::new("bounded");
    let upstream = FakeOpenAi::start(Duration::from_millis(200));
    let run = suite.record(&upstream, &[("PROPOSAL_EVAL_MAX_CONCURRENCY", "2")], CASES);
    let seen = upstream.stop();
    check(run.success, "recording passes", &run)?;
    if seen.peak != 2 || seen.calls != CALLS {
        return Err(format!(
            "with 4 cases at once and a bound of 2 the upstream saw {seen:?}\n{}",
            run.text
        )
        .into());
    }
    // Without the bound, the same run overlaps more: the bound is what held it at 2.
    let suite = Suite::new("unbounded");
    let upstream = FakeOpenAi::start(Duration::from_millis(200));
    let run = suite.record(&upstream, &[("PROPOSAL_EVAL_MAX_CONCURRENCY", "8")], CASES);
    let seen = upstream.stop();
    check(
        run.success && seen.peak > 2,
        &format!("unbounded, the upstream saw {seen:?}"),
        &run,
    )
}

/// A case that handles four messages at once (four tool calls at once, then three streamed
/// replies at once) is recorded through the proxy, then replayed 100 times (100 copies of the
/// case, four at a time), each copy starting its messages in another order than the recording:
/// every replay passes, offline.
fn fan_out() -> Result<(), Failed> {
    const COPIES: usize = 100;
    let client = ("SUPPORT_AGENT_CLIENT", "fan_out");
    let suite = Suite::fan_out("fan_out", COPIES);
    let upstream = FakeOpenAi::start(Duration::ZERO);
    let recorded = suite.record(&upstream, &[client], 4);
    let seen = upstream.stop();
    check(
        recorded.success && recorded.verdicts.len() == COPIES,
        "recording passes every copy",
        &recorded,
    )?;
    if seen.calls != COPIES * CALLS || seen.refused != 0 {
        return Err(format!("the upstream saw {seen:?}\n{}", recorded.text).into());
    }
    let files = suite.recordings();
    let inbox = serde_json::from_str::<serde_json::Value>(&files["inbox_000.json"]).unwrap();
    let calls = inbox["interactions"].as_array().unwrap();
    let streamed = calls
        .iter()
        .filter(|c| {
            c["http"]["content_type"]
                .as_str()
                .unwrap_or("")
                .starts_with("text/event-stream")
        })
        .count();
    if (calls.len(), streamed) != (CALLS, 3) {
        return Err(format!("the recording holds other calls than the agent's:\n{inbox:#}").into());
    }

    // Replay with the upstream stopped, the messages of each copy started in another order.
    let replayed = suite.run(&[client, ("SUPPORT_AGENT_FAN_OUT_STAGGER", "1")], 4);
    let passed = replayed.verdicts.values().filter(|v| *v == "ok").count();
    check(
        replayed.success && passed == COPIES,
        &format!("{passed} of {COPIES} replays pass"),
        &replayed,
    )?;
    check(
        suite.recordings() == files,
        "replay leaves the recordings as they were",
        &replayed,
    )
}

fn budget() -> Result<(), Failed> {
    let suite = Suite::new("budget");
    let upstream = FakeOpenAi::start(Duration::ZERO);
    // One case at a time, in name order: `no_order_number` makes one call of a few hundred
    // tokens, which at $0.15 per million costs more than the budget; every later call is refused.
    let run = suite.record(&upstream, &[("PROPOSAL_EVAL_BUDGET_USD", "0.000001")], 1);
    let seen = upstream.stop();
    check(!run.success, "the run fails", &run)?;
    if seen.calls != 1 {
        return Err(format!(
            "one live call, then none: the upstream saw {seen:?}\n{}",
            run.text
        )
        .into());
    }
    let failed: Vec<&String> = run
        .verdicts
        .iter()
        .filter(|(_, v)| *v == "FAILED")
        .map(|(k, _)| k)
        .collect();
    check(
        failed.len() == CASES - 1 && run.verdicts["budget::no_order_number"] == "ok",
        "the first case passes, every case that needed a live call after it fails",
        &run,
    )?;
    check(
        run.text
            .matches("PROPOSAL_EVAL_BUDGET_USD=0.000001 is spent")
            .count()
            == CASES - 1,
        "each failing case says the budget is spent",
        &run,
    )?;
    let files = suite.recordings();
    check(
        files.keys().collect::<Vec<_>>() == ["no_order_number.json"],
        "only the case that finished is recorded",
        &run,
    )
}

/// A recording without what differs from one run to the next (when, how long).
fn timeless(text: &str) -> serde_json::Value {
    let mut recording: serde_json::Value = serde_json::from_str(text).unwrap();
    recording.as_object_mut().unwrap().remove("recorded_at");
    for call in recording["interactions"].as_array_mut().unwrap() {
        let call = call.as_object_mut().unwrap();
        call.remove("recorded_at");
        call.remove("latency_ms");
    }
    recording
}

fn blocking_record_then_replay() -> Result<(), Failed> {
    let blocking = [("SUPPORT_AGENT_CLIENT", "blocking")];
    let suite = Suite::new("blocking");
    let (recorded, files) =
        record_every_case(&suite, &blocking, "recording with the blocking client")?;
    // The blocking agent made the async agent's calls, the streamed one included: what it
    // recorded is the committed recordings (made by the async agent), but for times.
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/support/recordings");
    for (name, text) in &files {
        let theirs = std::fs::read_to_string(committed.join(name)).unwrap();
        if timeless(text) != timeless(&theirs) {
            return Err(format!(
                "{name}: the blocking agent recorded other calls than the async one:\n{text}"
            )
            .into());
        }
    }
    let stream = &timeless(&files["where_is_my_order.json"])["interactions"][1];
    if !stream["http"]["content_type"]
        .as_str()
        .unwrap_or("")
        .starts_with("text/event-stream")
        || stream["response"].as_array().map_or(0, Vec::len) < 3
    {
        return Err(format!("the reply was not recorded as a stream: {stream:#}").into());
    }

    // Replay: the recording's upstream is stopped. Another fake, named as the upstream with the
    // key in the environment, counts any call that would still go out.
    let watch = FakeOpenAi::start(Duration::ZERO);
    let replayed = suite.run(
        &[
            blocking[0],
            ("PROPOSAL_EVAL_UPSTREAM", watch.url.as_str()),
            ("OPENAI_API_KEY", KEY),
        ],
        2,
    );
    let seen = watch.stop();
    check(
        replayed.success && replayed.verdicts == recorded.verdicts,
        "replay with the blocking client passes as the recording run did",
        &replayed,
    )?;
    if seen.calls != 0 || seen.refused != 0 {
        return Err(format!("replay called the upstream: {seen:?}\n{}", replayed.text).into());
    }
    check(
        suite.recordings() == files,
        "replay leaves the recordings as they were",
        &replayed,
    )?;

    // The committed recordings (the async agent's) replay offline with the blocking agent.
    let committed = Suite::with_recordings("blocking_committed");
    let replayed = committed.run(&blocking, 2);
    check(
        replayed.success
            && replayed.verdicts.len() == CASES
            && replayed.verdicts.values().all(|v| v == "ok"),
        "the blocking agent passes on the committed recordings",
        &replayed,
    )
}

/// Names of the suite's cases, in the order nextest would run them one by one.
const CASE_NAMES: [&str; CASES] = [
    "no_order_number",
    "not_shipped_yet",
    "unknown_order",
    "where_is_my_order",
];

/// Records each case in a process of its own, as `cargo nextest run` does, one after another;
/// `run_id` gives each process's `NEXTEST_RUN_ID`. The verdict of each case, and the calls the
/// upstream answered.
fn record_case_by_case(
    name: &str,
    run_id: impl Fn(usize) -> String,
) -> Result<(Suite, Vec<Run>, usize), Failed> {
    let suite = Suite::new(name);
    let upstream = FakeOpenAi::start(Duration::ZERO);
    let mut runs = Vec::new();
    for (i, case) in CASE_NAMES.iter().enumerate() {
        let id = run_id(i);
        let test = format!("{name}::{case}");
        runs.push(suite.run_with(
            &[
                ("RECORD", "1"),
                ("PROPOSAL_EVAL_UPSTREAM", upstream.url.as_str()),
                ("OPENAI_API_KEY", KEY),
                ("PROPOSAL_EVAL_BUDGET_USD", "0.000001"),
                ("NEXTEST_RUN_ID", id.as_str()),
            ],
            &["--exact", &test],
        ));
    }
    let seen = upstream.stop();
    for (case, run) in CASE_NAMES.iter().zip(&runs) {
        check(
            run.verdicts.len() == 1,
            &format!("the process of {case} ran that one case"),
            run,
        )?;
    }
    Ok((suite, runs, seen.calls))
}

fn budget_across_processes() -> Result<(), Failed> {
    let run = format!("support-agent-scenario-{}", std::process::id());
    // One run: the first case's call passes the budget, and the processes after it see it.
    let (suite, runs, calls) = record_case_by_case("budget_one_run", |_| run.clone())?;
    check(runs[0].success, "the first case records", &runs[0])?;
    for (case, run) in CASE_NAMES.iter().zip(&runs).skip(1) {
        check(
            !run.success
                && run
                    .text
                    .contains("PROPOSAL_EVAL_BUDGET_USD=0.000001 is spent")
                && run.text.contains("so far in this run"),
            &format!("{case}, in a later process of the same run, fails for the budget"),
            run,
        )?;
    }
    if calls != 1 {
        return Err(format!(
            "one live call in the whole run, then none: the upstream answered {calls}\n{}",
            runs[1].text
        )
        .into());
    }
    check(
        suite.recordings().keys().collect::<Vec<_>>() == ["no_order_number.json"],
        "only the first case is recorded",
        &runs[0],
    )?;
    // Each process a run of its own, as when the budget was counted per process: each starts
    // with the whole budget, so each case makes its first call (the second of a case that makes
    // two is refused).
    let (_, runs, calls) = record_case_by_case("budget_many_runs", |i| format!("{run}-alone-{i}"))?;
    if calls != CASES {
        return Err(format!(
            "{CASES} processes, each its own run, made {calls} calls; expected one each\n{}",
            runs[1].text
        )
        .into());
    }
    Ok(())
}

/// Records the case `no_order_number` of the suite `name` with the terse ureq client
/// (`suite::support_terse`) and the upstream `url`, plus `envs`.
fn record_terse(suite: &Suite, name: &str, url: &str, envs: &[(&str, &str)]) -> Run {
    let mut all = vec![
        ("RECORD", "1"),
        ("PROPOSAL_EVAL_UPSTREAM", url),
        ("OPENAI_API_KEY", KEY),
        ("SUPPORT_AGENT_CLIENT", "terse"),
    ];
    all.extend_from_slice(envs);
    suite.run_with(&all, &["--exact", &format!("{name}::no_order_number")])
}

/// The case failed with each of `needles` in its output, and nothing was recorded.
fn failed_saying(run: &Run, needles: &[&str], suite: &Suite) -> Result<(), Failed> {
    check(
        !run.success && run.verdicts.values().collect::<Vec<_>>() == ["FAILED"],
        "the one case fails",
        run,
    )?;
    for needle in needles {
        check(
            run.text.contains(needle),
            &format!("the failure says `{needle}`"),
            run,
        )?;
    }
    check(suite.recordings().is_empty(), "nothing is recorded", run)
}

fn unreachable_upstream() -> Result<(), Failed> {
    // A loopback port nobody listens on: the system gave it, and it is free again.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let suite = Suite::new("unreachable");
    let run = record_terse(&suite, "unreachable", &url, &[]);
    failed_saying(
        &run,
        &[
            // The client's own error: the status and nothing else.
            "http status: 502",
            &format!(
                "a live model call failed while recording: POST {url}/chat/completions: the upstream refused the connection (is it running, on this port?)"
            ),
            "(nothing was recorded)",
        ],
        &suite,
    )
}

fn empty_port() -> Result<(), Failed> {
    let suite = Suite::new("empty_port");
    let run = record_terse(&suite, "empty_port", "http://127.0.0.1:/v1", &[]);
    check(!run.success, "the run fails", &run)?;
    check(
        run.text.contains("PROPOSAL_EVAL_UPSTREAM: `http://127.0.0.1:/v1` has an empty port: write the port number after `:`, or leave out the `:`"),
        "the environment variable is named",
        &run,
    )?;
    // The same URL in the suite config names the key, in the file, at its line.
    suite.set_http("upstream = \"http://127.0.0.1:/v1\"");
    let text = std::fs::read_to_string(suite.dir.join("proposal-eval.toml")).unwrap();
    std::fs::write(
        suite.dir.join("proposal-eval.toml"),
        text.replace("upstream = \"https://api.openai.com/v1\"\n", ""),
    )
    .unwrap();
    let run = suite.run_with(
        &[("RECORD", "1"), ("SUPPORT_AGENT_CLIENT", "terse")],
        &["--exact", "empty_port::no_order_number"],
    );
    check(!run.success, "the run fails", &run)?;
    check(
        run.text.contains("proposal-eval.toml:3:")
            && run
                .text
                .contains("[http] upstream: `http://127.0.0.1:/v1` has an empty port"),
        "the config key is named, with the file and line",
        &run,
    )?;
    check(suite.recordings().is_empty(), "nothing is recorded", &run)
}

fn hanging_upstream() -> Result<(), Failed> {
    // It takes the request and sends nothing for 4 s; the suite waits 1 s.
    let upstream = FakeOpenAi::start_with(Duration::ZERO, Fault::Hang(Duration::from_secs(4)));
    let suite = Suite::new("hanging");
    suite.set_http("timeout_s = 1");
    let run = record_terse(&suite, "hanging", &upstream.url, &[]);
    let url = upstream.url.clone();
    upstream.stop();
    failed_saying(
        &run,
        &[
            "http status: 502",
            &format!(
                "a live model call failed while recording: POST {url}/chat/completions: the upstream did not answer within 1 s ([http] timeout_s = 1 in proposal-eval.toml bounds each wait; raise it for a slower upstream)"
            ),
        ],
        &suite,
    )
}

fn cut_stream() -> Result<(), Failed> {
    let upstream = FakeOpenAi::start_with(Duration::ZERO, Fault::CutStream);
    let suite = Suite::new("cut");
    // The terse client takes the stream as it is: the case's own code sees no error.
    let run = record_terse(&suite, "cut", &upstream.url, &[]);
    let seen = upstream.stop();
    check(
        seen.calls == 1,
        &format!("one call went out: {seen:?}"),
        &run,
    )?;
    failed_saying(
        &run,
        &[
            "a live model call failed while recording: POST /chat/completions: the stream ended without its end marker (`data: [DONE]`): the upstream cut it short, so it is not recorded",
            "nothing was recorded; there is no recording yet",
        ],
        &suite,
    )
}

fn bad_fixtures() -> Result<(), Failed> {
    let suite = Suite::new("bad_input");
    let one_call = std::fs::read_to_string(suite.dir.join("no_order_number.json")).unwrap();
    // An editor's byte order mark: the case is the same one-call case.
    std::fs::write(suite.dir.join("bom.json"), format!("\u{feff}{one_call}")).unwrap();
    std::fs::write(
        suite.dir.join("array.json"),
        format!("[{}]", one_call.trim_end()),
    )
    .unwrap();
    std::fs::write(
        suite.dir.join("expected_yes.json"),
        "{\n  \"input\": { \"message\": \"Where is A-1001?\", \"orders\": {} },\n  \"expected\": \"yes\"\n}\n",
    )
    .unwrap();
    // Trajectory steps that cannot be meant: arguments written as a string, an empty tool.
    std::fs::write(
        suite.dir.join("args_string.json"),
        "{\n  \"input\": { \"message\": \"Where is A-1001?\", \"orders\": {} },\n  \"expected_trajectory\": [{ \"tool\": \"lookup_order\", \"args\": \"order=A-1001\" }]\n}\n",
    )
    .unwrap();
    std::fs::write(
        suite.dir.join("empty_tool.json"),
        "{\n  \"input\": { \"message\": \"Where is A-1001?\", \"orders\": {} },\n  \"expected_trajectory\": { \"steps\": [{ \"tool\": \"lookup_order\" }, { \"tool\": \"\" }] }\n}\n",
    )
    .unwrap();
    // Saved as Latin-1 by an editor: `ù` is the one byte 0xF9.
    std::fs::write(
        suite.dir.join("latin1.json"),
        b"{\n  \"input\": { \"message\": \"O\xF9 est A-1001 ?\", \"orders\": {} },\n  \"expected\": []\n}\n",
    )
    .unwrap();
    let upstream = FakeOpenAi::start(Duration::ZERO);
    let run = suite.record(&upstream, &[], 1);
    let seen = upstream.stop();
    let failed: Vec<&str> = run
        .verdicts
        .iter()
        .filter(|(_, v)| *v == "FAILED")
        .map(|(k, _)| k.as_str())
        .collect();
    check(
        failed
            == [
                "bad_input::args_string",
                "bad_input::array",
                "bad_input::empty_tool",
                "bad_input::expected_yes",
                "bad_input::latin1",
            ]
            && run.verdicts["bad_input::bom"] == "ok",
        "the BOM fixture passes, the five bad ones fail",
        &run,
    )?;
    // The files are named by their path from the crate root (where the suite's copy is depends
    // on how the binary was started).
    for needle in [
        "/bad_input/array.json:1:1: a fixture is a JSON object, and this file holds an array: write { \"input\": ..., \"expected\": ... } (one case per file)",
        "/bad_input/expected_yes.json: `expected` is a string, which the suite's evaluators (strict, field_accuracy) cannot compare: write the proposals the code should produce as a list (`[{...}]`) or one object (`{...}`); only a code_judge alone takes any JSON",
        "/bad_input/args_string.json:4:1: expected_trajectory step 1: `args` is a string \"order=A-1001\": a step's arguments are an object of argument names and values (`\"args\": {\"category\": \"laptop\"}`), or left out to match any",
        "/bad_input/empty_tool.json:4:1: expected_trajectory step 2: `tool` is \"\": name the tool the call must be of (`\"tool\": \"inventory_lookup\"`), or a glob (`\"search_*\"`)",
        "/bad_input/latin1.json:2:27: byte 0xF9 is not UTF-8 text: a fixture is UTF-8 JSON; save the file as UTF-8 (an editor's \"encoding\" setting), or write the character as \\uXXXX",
    ] {
        check(run.text.contains(needle), &format!("the failure says `{needle}`"), &run)?;
    }
    // The suite's calls and the BOM case's one; none for the four bad fixtures.
    if seen.calls != CALLS + 1 {
        return Err(format!(
            "the upstream saw {seen:?}, expected {} calls\n{}",
            CALLS + 1,
            run.text
        )
        .into());
    }
    let files = suite.recordings();
    check(
        files.contains_key("bom.json")
            && !files.contains_key("array.json")
            && !files.contains_key("expected_yes.json")
            && !files.contains_key("args_string.json")
            && !files.contains_key("empty_tool.json"),
        "only the good fixtures are recorded",
        &run,
    )
}

fn empty_suite() -> Result<(), Failed> {
    let suite = Suite::new("empty");
    for entry in std::fs::read_dir(&suite.dir).unwrap().flatten() {
        if entry.path().extension().is_some_and(|e| e == "json") {
            std::fs::remove_file(entry.path()).unwrap();
        }
    }
    // The config is still there: a folder with it alone is no suite.
    let run = suite.run(&[], 1);
    check(!run.success, "the run fails", &run)?;
    check(
        run.text.contains(
            "/empty holds no fixture (*.json); add one file per case (a proposal-eval.toml alone is not a case), or check that the path is relative to the crate root",
        ) && run.text.contains("error: the suite folder "),
        "it says why",
        &run,
    )
}

fn zeroed_input_hash() -> Result<(), Failed> {
    let suite = Suite::with_recordings("zeroed");
    let file = suite.dir.join("recordings/no_order_number.json");
    let text = std::fs::read_to_string(&file).unwrap();
    let recorded: serde_json::Value = serde_json::from_str(&text).unwrap();
    let hash = recorded["input_sha256"].as_str().unwrap().to_string();
    let zeros = "0".repeat(64);
    std::fs::write(&file, text.replace(&hash, &zeros)).unwrap();
    let run = suite.run_with(&[], &["--exact", "zeroed::no_order_number"]);
    check(!run.success, "the edited recording is stale", &run)?;
    check(
        run.text.contains(&format!(
            "stale recording target/tmp/support-{}/zeroed/recordings/no_order_number.json: it was made from other sources\n  the recording's input_sha256 ({zeros}) is not the hash of its input, which is the case's input now (sha256 {hash}): the hash was edited; re-recording writes it right\nre-record just this case: ",
            std::process::id()
        )) || run.text.contains(&format!(
            "/zeroed/recordings/no_order_number.json: it was made from other sources\n  the recording's input_sha256 ({zeros}) is not the hash of its input, which is the case's input now (sha256 {hash}): the hash was edited; re-recording writes it right\nre-record just this case: "
        )),
        "the message says the hash was edited",
        &run,
    )?;
    check(
        !run.text.contains("unchanged") && !run.text.contains("input changed"),
        "it says neither `changed` nor `unchanged` of the input",
        &run,
    )
}

fn several_filters() -> Result<(), Failed> {
    let suite = Suite::with_recordings("filters");
    // `cargo test -- shipped unknown`: the tests whose names hold either.
    let run = suite.run_with(&[], &["shipped", "unknown"]);
    check(
        run.success
            && run.verdicts.keys().collect::<Vec<_>>()
                == ["filters::not_shipped_yet", "filters::unknown_order"],
        "two substring filters run the two tests that match one",
        &run,
    )?;
    let run = suite.run_with(
        &[],
        &[
            "--exact",
            "filters::no_order_number",
            "--test-threads",
            "1",
            "filters::where_is_my_order",
        ],
    );
    check(
        run.success
            && run.verdicts.keys().collect::<Vec<_>>()
                == ["filters::no_order_number", "filters::where_is_my_order"],
        "two exact names run those two tests",
        &run,
    )
}

fn outside_cargo() -> Result<(), Failed> {
    let suite = Suite::with_recordings("outside_cargo");
    let exe = std::env::current_exe().unwrap();
    // `target/debug/deps/scenarios-<hash>`: the runs' journals are in `target/proposal-eval`.
    let journals = exe.ancestors().nth(3).unwrap().join("proposal-eval/runs");
    // Started by hand from the crate root, with none of cargo's variables.
    let out = Command::new(&exe)
        .env_remove("CARGO_PKG_NAME")
        .env_remove("CARGO_MANIFEST_DIR")
        .env_remove("RECORD")
        .env("SUPPORT_AGENT_SUITE", &suite.dir)
        .env("NO_COLOR", "1")
        .args(["--exact", "outside_cargo::no_order_number"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !out.status.success() {
        return Err(format!("the binary started by hand fails:\n{text}").into());
    }
    // This run's suite copy, as its report entries name it.
    let copy = format!("support-{}/outside_cargo", std::process::id());
    let filed_under = |package: &str| {
        // A line of its run's journal.
        let package = format!("{{\"package\":\"{package}\",\"binary\":\"scenarios\",");
        std::fs::read_dir(&journals)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| std::fs::read_to_string(e.path().join("journal.jsonl")).ok())
            .any(|text| {
                text.lines().any(|line| {
                    line.starts_with(&package)
                        && line.contains(&copy)
                        && line.contains("\"case\":\"no_order_number\"")
                })
            })
    };
    if !filed_under("support-agent") || filed_under("unknown") {
        return Err(format!(
            "the case is not reported under its package support-agent (in {})\n{text}",
            journals.display()
        )
        .into());
    }
    Ok(())
}

/// The committed suite `fixtures/<name>`, in place (a replay writes nothing there).
fn committed(name: &str) -> Suite {
    Suite {
        dir: Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(name),
    }
}

/// What a recording says, without what differs from one recording run to the next.
fn steady(text: &str) -> serde_json::Value {
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(map) => {
                map.remove("recorded_at");
                map.remove("latency_ms");
                map.values_mut().for_each(strip);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut v: serde_json::Value = serde_json::from_str(text).unwrap();
    strip(&mut v);
    v
}

/// The shopping assistant's suite: tool calls through OpenAI Chat Completions, OpenAI Responses
/// and Anthropic Messages, whole and streamed, recorded through the proxy from the fake
/// upstream, then replayed with it stopped; each case in one trajectory mode passes both times,
/// the fresh recordings are the committed ones, and the committed ones replay too.
fn shop_record_then_replay() -> Result<(), Failed> {
    let suite = Suite::copy_of("fixtures/shop", "shop");
    let upstream = FakeOpenAi::start(Duration::ZERO);
    let env = [
        ("SUPPORT_AGENT_CLIENT", "shop"),
        ("PROPOSAL_EVAL_UPSTREAM_ANTHROPIC", upstream.url.as_str()),
    ];
    let recorded = suite.record(&upstream, &env, 2);
    let seen = upstream.stop();
    check(
        recorded.success && recorded.verdicts.len() == SHOP_CASES,
        "recording passes every case",
        &recorded,
    )?;
    // Three model turns a case: the tool calls, the recommendation, the words.
    if seen.calls != 3 * SHOP_CASES || seen.refused != 0 {
        return Err(format!("the upstream saw {seen:?}\n{}", recorded.text).into());
    }
    let files = suite.recordings();
    let committed_files = committed("shop").recordings();
    for (name, text) in &files {
        let Some(kept) = committed_files.get(name) else {
            return Err(format!("no committed recording {name}").into());
        };
        let (new, old) = (steady(text), steady(kept));
        // One sample: its calls are `interactions`; repeated ones are `samples`.
        if new["interactions"].as_array().is_none_or(Vec::is_empty)
            || (&new["interactions"], &new["samples"]) != (&old["interactions"], &old["samples"])
        {
            return Err(format!(
                "{name}: the committed recording is not what recording makes now; re-record it (tests/scenarios.rs says how)\n{text}"
            )
            .into());
        }
    }
    let replayed = suite.run(&[("SUPPORT_AGENT_CLIENT", "shop")], 2);
    check(
        replayed.success && replayed.verdicts == recorded.verdicts,
        "replay passes with the upstream stopped",
        &replayed,
    )?;
    let committed_run = committed("shop").run(&[("SUPPORT_AGENT_CLIENT", "shop")], 2);
    check(
        committed_run.success && committed_run.verdicts.len() == SHOP_CASES,
        "the committed recordings replay",
        &committed_run,
    )?;
    // A passing `subset` or `allowed` case lists no misses, though some of its steps were not
    // called; each call keeps the index of the response that asked for it.
    let report = report_json();
    let entry = |test: &str| {
        report["cases"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["test"] == test)
            .cloned()
            .unwrap_or_default()
    };
    for test in [
        "shop::responses_stream_subset",
        "shop::anthropic_stream_allowed",
    ] {
        let e = entry(test);
        // An evaluator with no misses leaves the key out.
        let misses = e["evaluators"][0].get("misses").and_then(|m| m.as_array());
        if misses.is_some_and(|m| !m.is_empty()) || e["passed"] != true {
            return Err(format!("{test}: report.json's entry lists misses: {e:#}").into());
        }
    }
    let responses: Vec<serde_json::Value> = entry("shop::chat_stream_parallel_in_order")
        ["trajectory"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| c["response"].clone())
        .collect();
    if responses != [0.into(), 0.into(), 1.into(), serde_json::Value::Null] {
        return Err(format!("the responses of the parallel case's calls: {responses:?}").into());
    }
    Ok(())
}

/// The cases of `fixtures/shop`.
const SHOP_CASES: usize = 11;

/// This target's report.json, as the last run left it.
fn report_json() -> serde_json::Value {
    let report = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("proposal-eval/report.json");
    serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap()
}

/// Each mode failing for its reason, as the person who runs the tests reads it.
fn shop_failures() -> Result<(), Failed> {
    let run = committed("shop_failing").run(&[("SUPPORT_AGENT_CLIENT", "shop")], 1);
    let calls = "calls:
  #1 inventory_lookup {\"category\":\"laptop\",\"max_price\":1000.0}
  #2 recommend {\"note\":\"In stock\",\"price\":950.0,\"sku\":\"SKU-2\"}
  #3 send_reply {\"text\":\"I recommend SKU-2 at $950.0.\"}
";
    // "Compare SKU-7 and SKU-8": both lookups in one answer, then the recommendation.
    let parallel = "calls:
  in parallel (model call 1):
    #1 inventory_lookup {\"sku\":\"SKU-7\"}
    #2 inventory_lookup {\"sku\":\"SKU-8\"}
  #3 recommend {\"note\":\"In stock\",\"price\":860.0,\"sku\":\"SKU-8\"}
  #4 send_reply {\"text\":\"I recommend SKU-8 at $860.0.\"}
";
    let expected = [
        (
            "missing_step",
            format!(
                "trajectory FAILED (score 0.67)
in_order: 2 of 3 steps matched in order, score 0.67
  step 1 inventory_lookup: #1 inventory_lookup
  step 2 check_warranty: no match; no call of check_warranty
  step 3 recommend: #2 recommend
{calls}"
            ),
        ),
        (
            "out_of_order",
            format!(
                "trajectory FAILED (score 0.50)
in_order: 1 of 2 steps matched in order, score 0.50
  step 1 recommend: #2 recommend
  step 2 inventory_lookup: no match; #1 inventory_lookup has these arguments but is out of order
{calls}"
            ),
        ),
        (
            "price_outside_tolerance",
            format!(
                "trajectory FAILED (score 0)
any_order: 0 of 1 steps matched, score 0
  step 1 recommend: no match; closest #2 recommend:
    recommend.price: values differ: expected 899, actual 950.0, outside tolerance 1 (diff 51)
{calls}"
            ),
        ),
        (
            "forbidden_tool",
            "trajectory FAILED (score 0)
subset: 3 of 4 calls matched a step, 1 forbidden call(s), score 0
  step 1 inventory_lookup: #2 inventory_lookup
  step 2 recommend: #3 recommend
  step 3 send_reply: #4 send_reply
  #1 delete_order: unexpected call, matches no step (subset: no tool outside the steps)
  #1 delete_order: forbidden tool
calls:
  in parallel (model call 1):
    #1 delete_order {\"order_id\":\"O-17\"}
    #2 inventory_lookup {\"category\":\"laptop\",\"max_price\":1000.0}
  #3 recommend {\"note\":\"In stock\",\"price\":950.0,\"sku\":\"SKU-2\"}
  #4 send_reply {\"text\":\"I recommend SKU-2 at $950.0.\"}
"
            .to_string(),
        ),
        (
            "too_many_calls",
            format!(
                "trajectory FAILED (score 0)
exact: 2 of 3 matched at their place (2 steps, 3 calls), 3 calls, more than max_calls = 2, score 0
  step 1 inventory_lookup: #1 inventory_lookup
  step 2 recommend: #2 recommend
  #3 send_reply: unexpected call, past the last step (exact: the calls are the steps)
  3 calls, more than max_calls = 2
{calls}"
            ),
        ),
        (
            "parallel_across_answers",
            format!(
                "trajectory FAILED (score 0.25)
exact: 1 of 4 matched at their place (3 steps, 4 calls), score 0.25
  step 1 inventory_lookup: #1 inventory_lookup
  step 2 recommend: no match (call #2 in its place is inventory_lookup); #3 recommend has these arguments but is not at this step's place
  step 3 inventory_lookup: no match (call #3 in its place is recommend); #2 inventory_lookup has these arguments but is not at this step's place
  #4 send_reply: unexpected call, past the last step (exact: the calls are the steps)
{parallel}"
            ),
        ),
        (
            "step_taken",
            format!(
                "trajectory FAILED (score 0.75)
subset: 3 of 4 calls matched a step, score 0.75
  step 1 inventory_lookup: #1 inventory_lookup
  step 2 recommend: #3 recommend
  step 3 send_reply: #4 send_reply
  #2 inventory_lookup: unexpected call, matches step 1 inventory_lookup, which #1 inventory_lookup took (subset: a step matches one call; mode \"allowed\" lets it match any number)
{parallel}"
            ),
        ),
        (
            "forbidden_arguments",
            format!(
                "trajectory FAILED (score 0)
any_order: 1 of 1 steps matched, 1 forbidden call(s), score 0
  step 1 recommend: #3 recommend
  #3 recommend: forbidden call (forbidden 1: recommend {{\"sku\":\"SKU-8\"}})
{parallel}"
            ),
        ),
        (
            "counts",
            format!(
                "trajectory FAILED (score 0)
in_order: 1 of 1 steps matched in order, 4 calls, fewer than min_calls = 5, 0 call(s) of check_*, fewer than calls.check_*.min = 1, 2 call(s) of inventory_lookup, more than calls.inventory_lookup.max = 1, score 0
  step 1 recommend: #3 recommend
  4 calls, fewer than min_calls = 5
  0 call(s) of check_*, fewer than calls.check_*.min = 1
  2 call(s) of inventory_lookup, more than calls.inventory_lookup.max = 1
{parallel}"
            ),
        ),
        (
            "args_subset",
            format!(
                "trajectory FAILED (score 0)
any_order: 0 of 1 steps matched, score 0
  step 1 recommend: no match; closest #3 recommend:
    recommend.note: not among the step's arguments (args_match = \"subset\"): \"In stock\"
    recommend.price: not among the step's arguments (args_match = \"subset\"): 860.0
{parallel}"
            ),
        ),
        (
            "allowed_only_lookups",
            format!(
                "trajectory FAILED (score 0.50)
allowed: 2 of 4 calls matched a step, score 0.50
  step 1 inventory_*: #1 inventory_lookup
  #3 recommend: unexpected call, matches no step (allowed: only the steps' calls)
  #4 send_reply: unexpected call, matches no step (allowed: only the steps' calls)
{parallel}"
            ),
        ),
    ];
    // The report keeps each case's trajectory, and the alignment of a failing one.
    let report = report_json();
    let entry = report["cases"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["test"] == "shop_failing::price_outside_tolerance");
    let ok = entry.is_some_and(|e| {
        e["trajectory"][1] == serde_json::json!({"tool": "recommend", "args": {"note": "In stock", "price": 950.0, "sku": "SKU-2"}, "response": 1})
            && e["evaluators"][0]["evaluator"] == "trajectory"
            && e["evaluators"][0]["misses"][1]
                == "recommend.price: values differ: expected 899, actual 950.0, outside tolerance 1 (diff 51)"
            && e["evaluators"][0]["rendered"]
                .as_str()
                .is_some_and(|r| r.contains("  step 1 recommend: no match; closest #2 recommend:\n"))
    });
    if !ok {
        return Err(format!("report.json's entry: {entry:#?}").into());
    }
    for (case, text) in expected {
        let head = format!("---- shop_failing::{case} ----\nshop_failing/{case}: ");
        let shown = run
            .text
            .split_once(&head)
            .and_then(|(_, rest)| rest.split_once("re-run: "))
            .map(|(body, _)| body);
        if shown != Some(text.as_str()) {
            return Err(format!("{case}: expected\n{text}\n--- got\n{}", run.text).into());
        }
        check(
            run.verdicts
                .get(&format!("shop_failing::{case}"))
                .map(String::as_str)
                == Some("FAILED"),
            &format!("{case} fails"),
            &run,
        )?;
    }
    Ok(())
}

/// The selection of evaluators by expectation, as a user meets its two mistakes: a case whose
/// `expected_trajectory` no enabled evaluator reads, and a case with no expectation at all. Both
/// fail before any model call (the copy has no recording and no upstream).
fn unchecked_cases() -> Result<(), Failed> {
    let suite = Suite::copy_of("fixtures/shop", "unchecked");
    let config = std::fs::read_to_string(suite.dir.join("proposal-eval.toml")).unwrap();
    std::fs::write(
        suite.dir.join("proposal-eval.toml"),
        format!("evaluators = [\"strict\"]\n{config}"),
    )
    .unwrap();
    std::fs::write(
        suite.dir.join("nothing.json"),
        r#"{"input": {"message": "hi", "api": "chat"}}"#,
    )
    .unwrap();
    let run = suite.run(&[("SUPPORT_AGENT_CLIENT", "shop")], 1);
    for (case, message) in [
        (
            "responses_any_order",
            "unchecked/responses_any_order.json: the case has `expected_trajectory` but no enabled evaluator reads it (evaluators = [\"strict\"]); add \"trajectory\" to `evaluators` in the suite's proposal-eval.toml, or remove `expected_trajectory`",
        ),
        (
            "nothing",
            "unchecked/nothing.json: nothing checks this case: it has none of `expected` (strict); add the one that says what a correct run produces",
        ),
    ] {
        check(
            run.verdicts.get(&format!("unchecked::{case}")).map(String::as_str) == Some("FAILED")
                && run.text.contains(message),
            &format!("{case} fails with: {message}"),
            &run,
        )?;
    }
    Ok(())
}
