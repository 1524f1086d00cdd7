use crate::common::*;
use proposal_eval::__internal::draft::{canonical_json, content_sha256, sha256_hex};
use serde_json::{json, Value};

#[test]
fn drafts_a_suggestion_as_an_ignored_case() {
    let env = Env::new();
    env.lines("in.jsonl", &[suggestion("sugg_abc123")]);
    let out = env.draft("in.jsonl", &[]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("generated   sugg_abc123 -> drafts/eval_sugg_abc123.json"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "read 1, picked up 1, generated 1, unchanged 0, skipped 0, deferred 0, errors 0"
        ),
        "{}",
        out.stdout
    );

    let text = env.read("suite/drafts/eval_sugg_abc123.json");
    assert!(text.ends_with("}\n"));
    let fixture: Value = serde_json::from_str(&text).unwrap();
    // Pretty, keys sorted.
    assert_eq!(
        text,
        format!("{}\n", serde_json::to_string_pretty(&fixture).unwrap())
    );
    let keys: Vec<&String> = fixture.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "description",
            "draft",
            "expected_trajectory",
            "input",
            "status"
        ]
    );
    // The trace's tools are the trajectory a correct run calls too, in any order.
    assert_eq!(
        fixture["expected_trajectory"],
        json!({ "mode": "any_order", "steps": [{ "tool": "inventory_lookup" }] })
    );
    assert_eq!(fixture["status"], "needs_human_input");
    assert_eq!(
        fixture["description"],
        "Prevent stale product recommendations"
    );
    assert_eq!(
        fixture["input"],
        json!({
            "prompt": "Recommend a laptop under $1000.",
            "required_state": "Inventory has discontinued items.",
            "tools": ["inventory_lookup"]
        })
    );
    let draft = proposal_eval::__internal::draft::Draft::from_fixture(&fixture)
        .unwrap()
        .unwrap();
    assert_eq!(draft.eval_test_id, "eval_sugg_abc123");
    assert_eq!(draft.source.suggestion_id, "sugg_abc123");
    assert_eq!(draft.source.canonical_trace_id, "dd_trace_67890");
    assert_eq!(
        draft.source.canonical_pattern_id.as_deref(),
        Some("pattern_dd_trace_67890")
    );
    assert_eq!(
        draft.assertions.forbidden,
        ["I recommend SKU-123 (discontinued)."]
    );
    assert_eq!(
        draft.edit_source,
        proposal_eval::__internal::draft::EditSource::Generated
    );
    assert_eq!(draft.generated_at, draft.updated_at);
    let meta = &draft.generator_meta;
    assert!(meta.generator.starts_with("template@"));
    assert_eq!(meta.prompt_hash.len(), 64);
    assert_eq!(meta.response_sha256.len(), 64);
    assert_eq!(
        meta.content_sha256,
        proposal_eval::__internal::draft::content_sha256(&fixture)
    );

    // The runtime's fixture parser reads the draft as an ignored case (one schema, no second parser).
    let parsed = proposal_eval::__internal::fixture::FixtureFile::parse(
        text.as_bytes(),
        "eval_sugg_abc123.json",
    )
    .unwrap();
    assert_eq!(
        parsed.status,
        proposal_eval::__internal::fixture::Status::NeedsHumanInput
    );
    assert_eq!(parsed.draft.as_ref(), Some(&draft));
    assert!(parsed.expected.is_none());
    assert_eq!(
        parsed.expected_trajectory.map(|t| t.steps),
        Some(vec![proposal_eval::trajectory::Step::tool(
            "inventory_lookup"
        )])
    );

    let summary = env.last_summary();
    assert_eq!(summary["run_id"], meta.run_id.as_str());
    assert_eq!(summary["triggered_by"], "manual");
    assert_eq!(summary["batch_size"], Value::Null);
    assert_eq!(summary["picked_up_count"], 1);
    assert_eq!(summary["generated_count"], 1);
    assert_eq!(summary["suggestion_outcomes"][0]["outcome"], "generated");
    assert_eq!(summary["suggestion_outcomes"][0]["location"], "in.jsonl:1");
    assert!(summary["started_at"].as_str().unwrap().ends_with('Z'));
    assert!(summary["finished_at"].is_string());
    assert!(env.last_errors().is_empty());
}

#[test]
fn skips_and_counts_rejected_and_non_eval_suggestions() {
    let env = Env::new();
    let mut rejected = suggestion("s_rejected");
    rejected["status"] = json!("rejected");
    let mut prompt = suggestion("s_prompt");
    prompt["type"] = json!("prompt");
    let mut pending = suggestion("s_pending");
    pending["status"] = json!("pending");
    env.lines("in.jsonl", &[rejected, prompt, pending]);
    let out = env.draft("in.jsonl", &["--triggered-by", "scheduled"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(
        out.stdout
            .contains("skipped     s_rejected: status is \"rejected\""),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "skipped     s_prompt: type is \"prompt\"; only \"eval\" suggestions are drafted"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("generated 1, unchanged 0, skipped 2"),
        "{}",
        out.stdout
    );
    assert!(env.path("suite/drafts/eval_s_pending.json").exists());
    assert!(!env.path("suite/drafts/eval_s_rejected.json").exists());
    assert!(!env.path("suite/drafts/eval_s_prompt.json").exists());
    let summary = env.last_summary();
    assert_eq!(summary["triggered_by"], "scheduled");
    assert_eq!(summary["skipped_count"], 2);
    assert_eq!(summary["read_count"], 3);
    assert_eq!(summary["picked_up_count"], 1);
    assert_eq!(
        summary["suggestion_outcomes"][0]["reason"],
        "status is \"rejected\""
    );
}

#[test]
fn canonical_trace_is_most_confident_with_ties_to_the_smallest_trace_id() {
    let env = Env::new();
    let mut s = suggestion("s1");
    s["source_traces"] = json!([
        { "trace_id": "t_low", "pattern_id": "p_low", "confidence": 0.4,
          "reproduction_context": { "prompt": "low" }, "observed_output": "bad low" },
        { "trace_id": "t_b", "pattern_id": "p_b", "confidence": 0.9,
          "reproduction_context": { "prompt": "b" }, "observed_output": "bad b" },
        { "trace_id": "t_a", "pattern_id": "p_a", "confidence": 0.9,
          "reproduction_context": { "prompt": "a" }, "observed_output": "bad a" }
    ]);
    env.lines("in.jsonl", &[s]);
    assert_eq!(env.draft("in.jsonl", &[]).code, 0);
    let fixture = env.json("suite/drafts/eval_s1.json");
    assert_eq!(fixture["input"], json!({ "prompt": "a" }));
    let source = &fixture["draft"]["source"];
    assert_eq!(source["canonical_trace_id"], "t_a");
    assert_eq!(source["canonical_pattern_id"], "p_a");
    assert_eq!(source["trace_ids"], json!(["t_a", "t_b", "t_low"]));
    assert_eq!(source["pattern_ids"], json!(["p_a", "p_b", "p_low"]));
    assert_eq!(
        fixture["draft"]["assertions"]["forbidden"],
        json!(["bad a", "bad b", "bad low"])
    );
}

#[test]
fn rerunning_the_same_input_changes_no_file() {
    let env = Env::new();
    let mut rejected = suggestion("s3");
    rejected["status"] = json!("rejected");
    env.lines("in.jsonl", &[suggestion("s1"), suggestion("s2"), rejected]);
    assert_eq!(env.draft("in.jsonl", &[]).code, 0);
    let before = env.snapshot();
    // Timestamps have second precision: a later second must not leak into any file.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let out = env.draft("in.jsonl", &[]);
    assert_eq!(out.code, 0);
    assert!(
        out.stdout.contains("generated 0, unchanged 2, skipped 1"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("picked up 0"), "{}", out.stdout);
    let after = env.snapshot();
    for (path, bytes) in &before {
        assert_eq!(after.get(path), Some(bytes), "{path} changed");
    }
    // The only new files are the second run's log.
    let added: Vec<&String> = after.keys().filter(|p| !before.contains_key(*p)).collect();
    assert_eq!(added.len(), 1, "{added:?}");
    assert!(added[0].ends_with("summary.json"));
    assert_eq!(env.runs().len(), 2);
    // Even --force regenerates to identical content and leaves the draft alone.
    let out = env.draft("in.jsonl", &["--force"]);
    assert!(
        out.stdout.contains("generated 0, unchanged 2"),
        "{}",
        out.stdout
    );
    assert_eq!(
        env.snapshot().get("suite/drafts/eval_s1.json"),
        before.get("suite/drafts/eval_s1.json")
    );
}

#[test]
fn a_changed_suggestion_updates_an_unedited_draft() {
    let env = Env::new();
    env.lines("in.jsonl", &[suggestion("s1")]);
    env.draft("in.jsonl", &[]);
    let mut changed = suggestion("s1");
    changed["suggestion_content"]["title"] = json!("A better title");
    env.lines("in.jsonl", &[changed]);
    let out = env.draft("in.jsonl", &[]);
    assert_eq!(out.code, 0);
    assert!(out.stdout.contains("updated     s1"), "{}", out.stdout);
    let fixture = env.json("suite/drafts/eval_s1.json");
    assert_eq!(fixture["draft"]["title"], "A better title");
    assert_eq!(
        fixture["draft"]["generator_meta"]["run_id"],
        env.last_summary()["run_id"]
    );
}

#[test]
fn a_human_edited_draft_is_never_overwritten_without_force() {
    let env = Env::new();
    env.lines("in.jsonl", &[suggestion("s1"), suggestion("s2")]);
    env.draft("in.jsonl", &[]);
    // s1: a human says so; s2: someone edited the content but left edit_source alone.
    let mut s1 = env.json("suite/drafts/eval_s1.json");
    s1["draft"]["edit_source"] = json!("human");
    env.write(
        "suite/drafts/eval_s1.json",
        &serde_json::to_string_pretty(&s1).unwrap(),
    );
    let mut s2 = env.json("suite/drafts/eval_s2.json");
    s2["expected"] = json!([{ "changeType": "none" }]);
    env.write(
        "suite/drafts/eval_s2.json",
        &serde_json::to_string_pretty(&s2).unwrap(),
    );
    let edited1 = env.read("suite/drafts/eval_s1.json");
    let edited2 = env.read("suite/drafts/eval_s2.json");

    // Even with a changed suggestion, the edits stay.
    let mut c1 = suggestion("s1");
    c1["suggestion_content"]["title"] = json!("new");
    let mut c2 = suggestion("s2");
    c2["suggestion_content"]["title"] = json!("new");
    env.lines("in.jsonl", &[c1, c2]);
    let out = env.draft("in.jsonl", &[]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(out.stdout.contains("skipped     s1: drafts/eval_s1.json was edited by a human (edit_source = \"human\"); --force overwrites it"), "{}", out.stdout);
    assert!(
        out.stdout
            .contains("skipped     s2: drafts/eval_s2.json was edited since it was generated"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("generated 0, unchanged 0, skipped 2"),
        "{}",
        out.stdout
    );
    assert_eq!(env.read("suite/drafts/eval_s1.json"), edited1);
    assert_eq!(env.read("suite/drafts/eval_s2.json"), edited2);

    let out = env.draft("in.jsonl", &["--force"]);
    assert_eq!(out.code, 0);
    assert!(out.stdout.contains("overwritten s1"), "{}", out.stdout);
    assert!(out.stdout.contains("overwritten s2"), "{}", out.stdout);
    let s1 = env.json("suite/drafts/eval_s1.json");
    assert_eq!(s1["draft"]["edit_source"], "generated");
    assert_eq!(s1["draft"]["title"], "new");
    assert!(env
        .json("suite/drafts/eval_s2.json")
        .get("expected")
        .is_none());
    assert_eq!(env.last_summary()["force"], true);
}

#[test]
fn a_file_that_is_not_a_draft_is_protected_too() {
    let env = Env::new();
    env.write("suite/drafts/eval_s1.json", "{ \"hand\": \"written\" ");
    env.lines("in.jsonl", &[suggestion("s1")]);
    let out = env.draft("in.jsonl", &[]);
    assert!(
        out.stdout
            .contains("skipped     s1: drafts/eval_s1.json is not valid JSON"),
        "{}",
        out.stdout
    );
    assert_eq!(
        env.read("suite/drafts/eval_s1.json"),
        "{ \"hand\": \"written\" "
    );
}

#[test]
fn bad_input_lines_are_error_records_with_file_and_line() {
    let env = Env::new();
    let good = suggestion("s_good").to_string();
    env.write(
        "in.jsonl",
        &format!("{good}\n\n{{\"suggestion_id\": oops}}\n{{\"type\":\"eval\"}}\n{{\"suggestion_id\":\"../x\",\"type\":\"eval\"}}\n{good}\n{{\"suggestion_id\":\"s_empty\",\"type\":\"eval\"}}\n"),
    );
    let out = env.draft("in.jsonl", &[]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stdout
            .contains("error       in.jsonl:3: invalid_json: not JSON: column 19: expected value"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("error       in.jsonl:4: schema_validation: not a suggestion record: missing field `suggestion_id`"), "{}", out.stdout);
    assert!(
        out.stdout.contains("suggestion_id \"../x\" must be"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("error       s_good (in.jsonl:6): schema_validation: duplicate suggestion_id \"s_good\" (first at in.jsonl:1)"), "{}", out.stdout);
    assert!(
        out.stdout
            .contains("suggestion \"s_empty\" has no source_traces"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "read 6, picked up 1, generated 1, unchanged 0, skipped 0, deferred 0, errors 5"
        ),
        "{}",
        out.stdout
    );
    assert!(env.path("suite/drafts/eval_s_good.json").exists());
    assert!(!env.path("x.json").exists());
    let errors = env.last_errors();
    assert_eq!(errors.len(), 5);
    assert_eq!(errors[0]["error_type"], "invalid_json");
    assert_eq!(errors[0]["location"], "in.jsonl:3");
    assert_eq!(errors[0]["suggestion_id"], Value::Null);
    assert!(errors[0]["time"].as_str().unwrap().ends_with('Z'));
    assert_eq!(errors[1]["error_type"], "schema_validation");
    assert_eq!(errors[2]["suggestion_id"], "../x");
    assert!(
        runs_dir_holds(&env, "0003-___x.json"),
        "the record stays inside errors/"
    );
    let summary = env.last_summary();
    assert_eq!(summary["error_count"], 5);
    assert_eq!(
        summary["suggestion_outcomes"][1]["error_type"],
        "invalid_json"
    );
    assert_eq!(
        summary["suggestion_outcomes"][1]["error_record"],
        "errors/0001-record.json"
    );
}

#[test]
fn reads_a_folder_of_json_files_and_reports_bad_files() {
    let env = Env::new();
    env.write(
        "in/b.json",
        &serde_json::to_string_pretty(&suggestion("s_b")).unwrap(),
    );
    env.write(
        "in/a.json",
        &serde_json::to_string_pretty(&suggestion("s_a")).unwrap(),
    );
    env.write("in/c.json", "{\n  \"suggestion_id\": \"s_c\",\n  oops\n}\n");
    env.write("in/more.jsonl", &format!("{}\n", suggestion("s_d")));
    env.write("in/notes.txt", "ignored");
    let out = env.draft("in", &[]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    let order: Vec<String> = env.last_summary()["suggestion_outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["location"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        order,
        ["in/a.json", "in/b.json", "in/c.json", "in/more.jsonl:1"]
    );
    assert!(
        out.stdout
            .contains("in/c.json: invalid_json: not JSON: line 3 column 3: key must be a string"),
        "{}",
        out.stdout
    );
    for id in ["s_a", "s_b", "s_d"] {
        assert!(
            env.path(&format!("suite/drafts/eval_{id}.json")).exists(),
            "{id}"
        );
    }
}

#[test]
fn batch_size_defers_the_rest_to_the_next_run() {
    let env = Env::new();
    env.lines(
        "in.jsonl",
        &[suggestion("s1"), suggestion("s2"), suggestion("s3")],
    );
    let out = env.draft("in.jsonl", &["--batch-size", "2"]);
    assert_eq!(out.code, 0);
    assert!(
        out.stdout
            .contains("picked up 2, generated 2, unchanged 0, skipped 0, deferred 1"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("deferred by --batch-size"),
        "{}",
        out.stdout
    );
    assert!(!env.path("suite/drafts/eval_s3.json").exists());
    assert_eq!(env.last_summary()["batch_size"], 2);
    // Already drafted suggestions do not use up the batch.
    let out = env.draft("in.jsonl", &["--batch-size=2"]);
    assert!(
        out.stdout
            .contains("picked up 1, generated 1, unchanged 2, skipped 0, deferred 0"),
        "{}",
        out.stdout
    );
    assert!(env.path("suite/drafts/eval_s3.json").exists());
}

#[test]
fn a_draft_moved_elsewhere_in_the_suite_is_not_drafted_again() {
    let env = Env::new();
    env.lines("in.jsonl", &[suggestion("s1")]);
    env.draft("in.jsonl", &[]);
    std::fs::create_dir_all(env.path("suite/cases")).unwrap();
    std::fs::rename(
        env.path("suite/drafts/eval_s1.json"),
        env.path("suite/cases/s1.json"),
    )
    .unwrap();
    let out = env.draft("in.jsonl", &[]);
    assert!(
        out.stdout
            .contains("skipped     s1: already in the suite at"),
        "{}",
        out.stdout
    );
    assert!(!env.path("suite/drafts/eval_s1.json").exists());
}

#[test]
fn a_draft_carries_the_generator_meta_keys_dashboards_read() {
    let env = Env::new();
    let record = suggestion("sugg_abc123");
    env.lines("in.jsonl", std::slice::from_ref(&record));
    assert_eq!(env.draft("in.jsonl", &[]).code, 0);
    let fixture = env.json("suite/drafts/eval_sugg_abc123.json");
    let draft = &fixture["draft"];
    let meta = &draft["generator_meta"];
    assert_eq!(
        keys(meta),
        [
            "content_sha256",
            "generator",
            "model",
            "prompt_hash",
            "response_sha256",
            "run_id",
            "temperature"
        ]
    );
    // The template generator uses no model: the keys are there, and null.
    assert_eq!(meta["model"], Value::Null);
    assert_eq!(meta["temperature"], Value::Null);
    assert_eq!(meta["prompt_hash"], prompt_hash(&record));
    let answer = json!({
        "title": draft["title"],
        "rationale": draft["rationale"],
        "assertions": draft["assertions"],
    });
    assert_eq!(
        meta["response_sha256"],
        sha256_hex(canonical_json(&answer).as_bytes())
    );
    assert_eq!(meta["run_id"], env.last_summary()["run_id"]);
    assert_eq!(
        meta["generator"],
        format!("template@{}", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(meta["content_sha256"], content_sha256(&fixture));
}

#[test]
fn the_run_summary_carries_the_keys_dashboards_read() {
    let env = Env::new();
    env.lines("in.jsonl", &[suggestion("s_unchanged")]);
    assert_eq!(env.draft("in.jsonl", &[]).code, 0);
    let mut rejected = suggestion("s_rejected");
    rejected["status"] = json!("rejected");
    let lines: Vec<String> = [
        suggestion("s_unchanged"),
        suggestion("s_new"),
        rejected,
        suggestion("s_deferred"),
    ]
    .iter()
    .map(Value::to_string)
    .collect();
    env.write(
        "in.jsonl",
        &format!(
            "{}\n{}\n{}\n{{not json\n{}\n",
            lines[0], lines[1], lines[2], lines[3]
        ),
    );
    let out = env.draft(
        "in.jsonl",
        &["--batch-size", "1", "--triggered-by", "scheduled"],
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    let summary = env.last_summary();
    let run_id = summary["run_id"].as_str().unwrap().to_string();
    assert!(
        run_id.starts_with("draft-") && env.runs().last().unwrap().ends_with(&run_id),
        "{run_id}"
    );
    let started = assert_timestamp(&summary["started_at"]);
    let finished = assert_timestamp(&summary["finished_at"]);
    assert!(started <= finished);
    assert_eq!(
        summary,
        json!({
            "run_id": run_id,
            "started_at": summary["started_at"],
            "finished_at": summary["finished_at"],
            "triggered_by": "scheduled",
            "batch_size": 1,
            "picked_up_count": 1,
            "generated_count": 1,
            "skipped_count": 1,
            "error_count": 1,
            "suggestion_outcomes": [
                { "location": "in.jsonl:1", "suggestion_id": "s_unchanged", "outcome": "unchanged",
                  "draft": "drafts/eval_s_unchanged.json" },
                { "location": "in.jsonl:2", "suggestion_id": "s_new", "outcome": "generated",
                  "draft": "drafts/eval_s_new.json" },
                { "location": "in.jsonl:3", "suggestion_id": "s_rejected", "outcome": "skipped",
                  "reason": "status is \"rejected\"" },
                { "location": "in.jsonl:4", "outcome": "error", "error_type": "invalid_json",
                  "error_record": "errors/0001-record.json" },
                { "location": "in.jsonl:5", "suggestion_id": "s_deferred", "outcome": "deferred",
                  "draft": "drafts/eval_s_deferred.json" },
            ],
            "read_count": 5,
            "unchanged_count": 1,
            "deferred_count": 1,
            "command": "draft",
            "generator": format!("template@{}", env!("CARGO_PKG_VERSION")),
            "force": false,
            "from": "in.jsonl",
        })
    );
    // Without --batch-size and --triggered-by.
    env.lines("in.jsonl", &[suggestion("s_new")]);
    assert_eq!(env.draft("in.jsonl", &[]).code, 0);
    let summary = env.last_summary();
    assert_eq!(summary["batch_size"], Value::Null);
    assert_eq!(summary["triggered_by"], "manual");
    assert_eq!(summary["picked_up_count"], 0);
    assert_eq!(summary["unchanged_count"], 1);
}

#[test]
fn an_error_record_carries_the_keys_dashboards_read() {
    let env = Env::new();
    env.write(
        "in.jsonl",
        "{not json\n{\"suggestion_id\": \"s_bare\", \"type\": \"eval\"}\n",
    );
    assert_eq!(env.draft("in.jsonl", &[]).code, 1);
    let run_id = env.last_summary()["run_id"].clone();
    let errors = env.last_errors();
    assert_eq!(errors.len(), 2);
    for error in &errors {
        assert_timestamp(&error["time"]);
    }
    assert_eq!(
        errors[0],
        json!({
            "run_id": run_id,
            "suggestion_id": null,
            "error_type": "invalid_json",
            "error_message": "not JSON: column 2: key must be a string",
            "location": "in.jsonl:1",
            "time": errors[0]["time"],
            "response_sha256": null,
            "excerpt": null,
        })
    );
    assert_eq!(
        errors[1],
        json!({
            "run_id": run_id,
            "suggestion_id": "s_bare",
            "error_type": "schema_validation",
            "error_message": "suggestion \"s_bare\" has no source_traces to reproduce",
            "location": "in.jsonl:2",
            "time": errors[1]["time"],
            "response_sha256": null,
            "excerpt": null,
        })
    );
}

#[test]
fn a_draft_with_the_old_key_names_is_read_and_rewritten_with_todays() {
    let env = Env::new();
    env.lines("in.jsonl", &[suggestion("s1"), suggestion("s2")]);
    assert_eq!(env.draft("in.jsonl", &[]).code, 0);
    let first_run = env.last_summary()["run_id"].clone();
    let today = env.json("suite/drafts/eval_s1.json");
    // s1 as an earlier version wrote it; s2 the same, then edited by hand.
    let mut old = today.clone();
    with_old_keys(&mut old);
    env.write(
        "suite/drafts/eval_s1.json",
        &serde_json::to_string_pretty(&old).unwrap(),
    );
    let mut edited = env.json("suite/drafts/eval_s2.json");
    with_old_keys(&mut edited);
    edited["expected"] = json!([{ "changeType": "none" }]);
    env.write(
        "suite/drafts/eval_s2.json",
        &serde_json::to_string_pretty(&edited).unwrap(),
    );
    let edited_text = env.read("suite/drafts/eval_s2.json");

    let out = env.draft("in.jsonl", &[]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(
        out.stdout.contains(
            "updated     s1 -> drafts/eval_s1.json: rewritten with today's generator_meta keys"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("skipped     s2: drafts/eval_s2.json was edited since it was generated"),
        "{}",
        out.stdout
    );
    assert_eq!(env.read("suite/drafts/eval_s2.json"), edited_text);
    let summary = env.last_summary();
    assert_eq!(summary["picked_up_count"], 0, "the generator was not asked");
    assert_eq!(summary["generated_count"], 1);
    assert_eq!(summary["suggestion_outcomes"][0]["outcome"], "updated");
    assert!(summary["suggestion_outcomes"][0]["reason"]
        .as_str()
        .unwrap()
        .contains("prompt_hash"));

    // Today's keys, the same content: only updated_at and the content hash differ.
    let rewritten = env.json("suite/drafts/eval_s1.json");
    let meta = &rewritten["draft"]["generator_meta"];
    assert_eq!(
        meta["prompt_hash"],
        today["draft"]["generator_meta"]["prompt_hash"]
    );
    assert_eq!(meta["model"], Value::Null);
    assert_eq!(meta["temperature"], Value::Null);
    assert!(meta.get("prompt_sha256").is_none());
    assert_eq!(meta["run_id"], first_run);
    assert_eq!(meta["content_sha256"], content_sha256(&rewritten));
    let mut expected = today.clone();
    expected["draft"]["updated_at"] = rewritten["draft"]["updated_at"].clone();
    expected["draft"]["generator_meta"]["content_sha256"] = meta["content_sha256"].clone();
    assert_eq!(rewritten, expected);

    // Once rewritten, it is up to date.
    let text = env.read("suite/drafts/eval_s1.json");
    let out = env.draft("in.jsonl", &[]);
    assert!(out.stdout.contains("unchanged   s1"), "{}", out.stdout);
    assert_eq!(env.read("suite/drafts/eval_s1.json"), text);
}

fn runs_dir_holds(env: &Env, name: &str) -> bool {
    env.runs()
        .last()
        .unwrap()
        .join("errors")
        .join(name)
        .is_file()
}
