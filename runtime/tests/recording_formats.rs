//! Recording formats, driven as a user drives them (a copy of `examples/payments-agent` and
//! `cargo`, see `support`): what a format-2 recording depends on, format-1 recordings still
//! read and checked as they were, a newer format, damaged recordings.

mod support;

use serde_json::{json, Value};
use support::{lock, sha256, test_name, Example, Run, SUITE};

const RAISE: &str = "changes/raise_amount";
const SWITCH: &str = "changes/switch_currency";
const FORBID: (&str, &str) = ("PAYMENTS_AGENT_FORBID_MODEL", "1");

fn fixture(case: &str) -> String {
    format!("{SUITE}/{case}.json")
}

fn recording(case: &str) -> String {
    format!("{SUITE}/recordings/{case}.json")
}

fn verdict(run: &Run, case: &str) -> String {
    run.verdicts()
        .get(&test_name(case))
        .cloned()
        .unwrap_or_else(|| panic!("no verdict for {case}:\n{}", run.text()))
}

/// `cargo test --test evals -- NAME --exact` with `envs`.
fn one(example: &Example, case: &str, envs: &[(&str, &str)]) -> Run {
    example.evals(envs, &[&test_name(case), "--exact"])
}

fn read_json(example: &Example, relative: &str) -> Value {
    serde_json::from_str(&example.read(relative)).unwrap()
}

fn write_json(example: &Example, relative: &str, value: &Value) {
    example.write(
        relative,
        serde_json::to_string_pretty(value).unwrap() + "\n",
    );
}

/// Rewrites `case`'s recording (made from the current fixture) as format 1 wrote it: the
/// fixture file as its first source, a copy of the input, no input hash.
fn make_format_1(example: &Example, case: &str) {
    let mut r = read_json(example, &recording(case));
    let fixture_bytes = std::fs::read(example.path(&fixture(case))).unwrap();
    let input = serde_json::from_slice::<Value>(&fixture_bytes).unwrap()["input"].clone();
    let object = r.as_object_mut().unwrap();
    object.insert("format".into(), json!(1));
    object.remove("input_sha256");
    object.insert("input".into(), input);
    let mut sources = vec![json!({
        "path": fixture(case),
        "sha256": sha256(&fixture_bytes),
        "bytes": fixture_bytes.len(),
    })];
    sources.extend(
        object["sources"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["path"] != fixture(case).as_str())
            .cloned(),
    );
    object.insert("sources".into(), Value::Array(sources));
    write_json(example, &recording(case), &r);
}

/// Edits every key of a fixture but its input: a new description, `expected` written in another
/// layout with the same meaning.
fn edit_all_but_the_input(example: &Example, case: &str) {
    let mut f = read_json(example, &fixture(case));
    f["description"] = json!("edited: the input is the same");
    let expected = serde_json::to_string(&f["expected"]).unwrap();
    let text = serde_json::to_string_pretty(&f).unwrap().replace(
        &serde_json::to_string_pretty(&f["expected"]).unwrap(),
        &expected,
    );
    example.write(&fixture(case), text);
}

#[test]
fn format_2_depends_on_the_input_and_format_1_on_the_whole_fixture() {
    let _cargo = lock();
    let example = Example::new();
    // RAISE recorded now (format 2); SWITCH as format 1 wrote it.
    let run = one(&example, RAISE, &[("RECORD", "1")]);
    assert_eq!(verdict(&run, RAISE), "ok", "{}", run.text());
    assert_eq!(read_json(&example, &recording(RAISE))["format"], 2);
    make_format_1(&example, SWITCH);
    let run = example.evals(&[FORBID], &[]);
    assert!(run.success, "a format-1 recording replays:\n{}", run.text());

    edit_all_but_the_input(&example, RAISE);
    edit_all_but_the_input(&example, SWITCH);
    let before = example.recordings();
    let run = example.evals(&[FORBID], &[]);
    assert_eq!(
        verdict(&run, RAISE),
        "ok",
        "format 2 stays fresh:\n{}",
        run.text()
    );
    assert_eq!(verdict(&run, SWITCH), "FAILED", "{}", run.text());
    let text = run.text();
    for want in [
        format!("stale recording {}", recording(SWITCH)),
        format!("{} changed (recorded sha256", fixture(SWITCH)),
        "the case's input is unchanged".to_string(),
    ] {
        assert!(text.contains(&want), "`{want}` missing from:\n{text}");
    }

    // Any re-record writes format 2: only the stale format-1 recording is re-recorded.
    let run = example.evals(&[("RECORD", "stale")], &[]);
    assert!(run.success, "{}", run.text());
    let after = example.recordings();
    let changed: Vec<&String> = after
        .keys()
        .filter(|k| before.get(*k) != after.get(*k))
        .collect();
    assert_eq!(changed, [&format!("{SWITCH}.json")]);
    let r = read_json(&example, &recording(SWITCH));
    assert_eq!(r["format"], 2);
    assert!(
        r["sources"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["path"] != fixture(SWITCH).as_str()),
        "{r:#}"
    );

    // An edit of the input itself makes the format-2 recording stale, with the input's diff.
    let f = example.read(&fixture(RAISE)).replace("120 EUR", "125 EUR");
    example.write(&fixture(RAISE), f);
    let run = one(&example, RAISE, &[FORBID]);
    assert_eq!(verdict(&run, RAISE), "FAILED", "{}", run.text());
    let text = run.text();
    for want in [
        "the case's input changed (recorded sha256",
        "input, recorded vs current:",
        "120 EUR",
        "125 EUR",
        "re-record just this case: RECORD=1 cargo test",
    ] {
        assert!(text.contains(want), "`{want}` missing from:\n{text}");
    }
}

#[test]
fn migrate_rewrites_a_fresh_format_1_recording_and_replay_still_passes() {
    let _cargo = lock();
    let example = Example::new();
    make_format_1(&example, SWITCH);
    let format_1 = read_json(&example, &recording(SWITCH));
    // What `cargo proposal-eval migrate` calls (its CLI tests drive the binary).
    let done = proposal_eval::__internal::status::migrate(
        &example.root,
        std::path::Path::new(SUITE),
        None,
        None,
        true,
    )
    .unwrap();
    let migrated: Vec<&str> = done
        .iter()
        .filter(|m| {
            matches!(
                m.migration,
                proposal_eval::__internal::status::Migration::Migrated { from: 1, to: 2 }
            )
        })
        .map(|m| m.case.as_str())
        .collect();
    assert_eq!(migrated, [SWITCH]);
    let r = read_json(&example, &recording(SWITCH));
    assert_eq!(r["format"], 2);
    assert_eq!(r["interactions"], format_1["interactions"]);
    edit_all_but_the_input(&example, SWITCH);
    let run = example.evals(&[FORBID], &[]);
    assert!(run.success, "{}", run.text());
}

#[test]
fn a_newer_format_says_to_upgrade() {
    let _cargo = lock();
    let example = Example::new();
    let mut r = read_json(&example, &recording(RAISE));
    r["format"] = json!(6);
    r["made_by"] = json!("a later version");
    write_json(&example, &recording(RAISE), &r);
    let want = format!(
        "{}: made by a newer proposal-eval (format 6; this version reads up to 5): upgrade proposal-eval",
        recording(RAISE)
    );
    for envs in [&[FORBID][..], &[FORBID, ("RECORD", "stale")][..]] {
        let run = one(&example, RAISE, envs);
        assert_eq!(verdict(&run, RAISE), "FAILED", "{}", run.text());
        assert!(
            run.text().contains(&want),
            "`{want}` missing from:\n{}",
            run.text()
        );
    }
}

#[test]
fn a_damaged_recording_is_named_damaged_and_record_stale_replaces_it_saying_so() {
    let _cargo = lock();
    let example = Example::new();
    let mut r = read_json(&example, &recording(RAISE));
    r["sources"][0]["sha256"] = json!("0123tampered");
    write_json(&example, &recording(RAISE), &r);
    let run = one(&example, RAISE, &[FORBID]);
    assert_eq!(verdict(&run, RAISE), "FAILED", "{}", run.text());
    let text = run.text();
    let want = format!(
        "damaged recording: {}: `sources[0].sha256` (prompts/output-format.md) is not 64 lowercase hex digits",
        recording(RAISE)
    );
    assert!(text.contains(&want), "`{want}` missing from:\n{text}");
    assert!(
        !text.contains("changed (recorded"),
        "blamed on a source:\n{text}"
    );

    let run = one(&example, RAISE, &[("RECORD", "stale")]);
    assert_eq!(verdict(&run, RAISE), "ok", "{}", run.text());
    assert!(
        run.stderr.contains(&format!(
            "note: {}: replacing {} by a new recording; it could not be used: {want}",
            test_name(RAISE),
            recording(RAISE)
        )),
        "{}",
        run.text()
    );
    assert_eq!(read_json(&example, &recording(RAISE))["format"], 2);
}
