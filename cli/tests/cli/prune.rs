use crate::recordings::*;
use serde_json::json;

#[test]
fn lists_orphans_and_deletes_them_only_with_yes() {
    let env = crate_with_suite("");
    simple(&env, "kept");
    record(&env, "kept", &[]);
    // A fixture that does not parse still owns its recording.
    simple(&env, "broken");
    record(&env, "broken", &[]);
    env.write("suite/broken.json", "{ not json");
    orphan(&env, "gone");
    orphan(&env, "deep/er/gone");

    let out = env.run(&["prune"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("2 orphaned recording(s):"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("suite/recordings/gone.json"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("suite/recordings/deep/er/gone.json"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("prune --yes"), "{}", out.stdout);
    assert!(env.path("suite/recordings/gone.json").exists());

    let out = env.run(&["prune", "--yes"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("removed 2 orphaned recording(s)"),
        "{}",
        out.stdout
    );
    assert!(!env.path("suite/recordings/gone.json").exists());
    assert!(
        !env.path("suite/recordings/deep").exists(),
        "empty folders go too"
    );
    assert!(env.path("suite/recordings/kept.json").exists());
    assert!(env.path("suite/recordings/broken.json").exists());

    let out = env.run(&["prune", "--yes"]);
    assert_eq!(out.code, 0);
    assert!(
        out.stdout.contains("no orphaned recordings"),
        "{}",
        out.stdout
    );
    assert_eq!(
        env.run(&["status", "--check", "suite"]).code,
        1,
        "broken fixture"
    );
}

#[test]
fn takes_paths_and_refuses_bad_arguments() {
    let env = crate_with_suite("");
    orphan(&env, "gone");
    let out = env.run(&["prune", "suite", "-y"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!env.path("suite/recordings/gone.json").exists());
    assert_eq!(env.run(&["prune", "missing"]).code, 2);
    assert_eq!(env.run(&["prune", "--yes=no"]).code, 2);
    assert_eq!(env.run(&["prune", "--force"]).code, 2);
}

#[test]
fn deletes_no_fixture_or_config_whatever_recordings_says() {
    // The layout: `prune fixtures/calendar --recordings fixtures` named the fixtures
    // folder as the recordings folder, and every fixture was "orphaned".
    let env = crate_with_suite("");
    for case in ["a", "b", "sub/c"] {
        env.write(
            &format!("fixtures/calendar/{case}.json"),
            &format!("{{ \"input\": {{ \"m\": \"{case}\" }}, \"expected\": [] }}\n"),
        );
    }
    env.write("fixtures/calendar/proposal-eval.toml", "");
    env.write(
        "fixtures/calendar/notes.json",
        "{ \"not\": \"a recording\" }\n",
    );
    // Another suite below, with its own recordings (their case is relative to their folder).
    env.write(
        "fixtures/payments/x.json",
        "{ \"input\": 1, \"expected\": [] }\n",
    );
    env.write("fixtures/payments/proposal-eval.toml", "");
    recording_at(&env, "fixtures/payments/recordings/x.json", "x");
    recording_at(&env, "fixtures/payments/recordings/gone.json", "gone");
    // A real orphan in the folder named as the recordings folder.
    recording_at(&env, "fixtures/old.json", "old");
    let before = env.snapshot();

    let out = env.run(&["prune", "fixtures/calendar", "--recordings", "fixtures"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("1 orphaned recording(s):\n  fixtures/old.json\n"),
        "{}",
        out.stdout
    );
    let out = env.run(&[
        "prune",
        "fixtures/calendar",
        "--recordings",
        "fixtures",
        "--yes",
    ]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("removed 1 orphaned recording(s)"),
        "{}",
        out.stdout
    );
    let mut after_expected = before.clone();
    after_expected.remove("fixtures/old.json");
    assert_eq!(env.snapshot(), after_expected, "only the orphan went");

    // The other suite's own orphan is still found when that suite is pruned.
    let out = env.run(&["prune", "fixtures/payments", "--yes"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("removed fixtures/payments/recordings/gone.json"),
        "{}",
        out.stdout
    );
    assert!(env.path("fixtures/payments/recordings/x.json").exists());
    assert!(env.path("fixtures/calendar/a.json").exists());
}

#[test]
fn a_file_that_is_not_a_recording_is_never_pruned() {
    let env = crate_with_suite("");
    simple(&env, "kept");
    record(&env, "kept", &[]);
    raw_recording(&env, "notes", "{}\n");
    raw_recording(&env, "conflicted", "<<<<<<< HEAD\n");
    env.write("suite/recordings/readme.txt", "hand-written\n");
    orphan(&env, "gone");
    // A recording moved by hand: its `case` is not where it lies.
    recording_at(&env, "suite/recordings/moved.json", "elsewhere");
    let out = env.run(&["prune", "--yes"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("removed 1 orphaned recording(s)"),
        "{}",
        out.stdout
    );
    assert!(!env.path("suite/recordings/gone.json").exists());
    for kept in [
        "kept.json",
        "notes.json",
        "conflicted.json",
        "readme.txt",
        "moved.json",
    ] {
        assert!(
            env.path(&format!("suite/recordings/{kept}")).exists(),
            "{kept}"
        );
    }
}

/// Issue 24: a `proposal-eval.toml` added to a subfolder of a suite (to change `matching` for
/// those cases) made it a suite of its own: its cases' recordings were called orphans, and
/// `prune --yes` deleted them. It is a nested config now: the cases stay in the suite.
#[test]
fn a_nested_config_keeps_its_cases_and_prune_deletes_none_of_their_recordings() {
    let env = crate_with_suite("[strict]\nmatching = \"ordered\"\n");
    for case in ["a", "sub/b", "sub/c", "sub/deeper/d"] {
        simple(&env, case);
        record(&env, case, &[]);
    }
    env.write(
        "suite/sub/proposal-eval.toml",
        "[strict]\nmatching = \"any_order\"\n",
    );
    let before = env.snapshot();
    let status = env.run(&["status"]);
    assert_eq!(
        (status.code, status.stdout.as_str()),
        (
            0,
            "suite (suite, crate .)\n  fresh         a\n  fresh         sub/b\n  fresh         sub/c\n  fresh         sub/deeper/d\n4 case(s): 4 fresh, 0 stale, 0 no recording, 0 orphaned, 0 unreadable\n"
        ),
        "{}",
        status.stderr
    );
    // Named on the command line, the nested folder stands for the suite around it.
    assert_eq!(env.run(&["status", "suite/sub"]).stdout, status.stdout);
    let out = env.run(&["prune", "--yes"]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, "no orphaned recordings\n")
    );
    assert_eq!(env.snapshot(), before, "prune deleted nothing");
    assert_eq!(env.run(&["status", "--check"]).code, 0);

    // The nested config's `validation` is its cases': under `skip` their stale recordings do
    // not fail the check, while the suite's (strict) still holds for the others.
    env.write(
        "suite/sub/proposal-eval.toml",
        "[recording]\nvalidation = \"skip\"\n",
    );
    fixture(
        &env,
        "sub/b",
        json!({ "input": { "message": "edited" }, "expected": [] }),
    );
    let out = env.run(&["status", "--check"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(out.stdout.contains("stale         sub/b"), "{}", out.stdout);
    fixture(
        &env,
        "a",
        json!({ "input": { "message": "edited" }, "expected": [] }),
    );
    assert_eq!(env.run(&["status", "--check"]).code, 1);

    // A nested config that does not read fails its cases' check, naming the file and the
    // place; their recordings are still theirs.
    env.write("suite/sub/proposal-eval.toml", "[strict]\nmatchng = 1\n");
    let out = env.run(&["status", "--check"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stdout.contains(
            "unreadable    sub/b: bad suite config: suite/sub/proposal-eval.toml:2:1: unknown field `matchng`"
        ),
        "{}",
        out.stdout
    );
    let out = env.run(&["prune", "--yes"]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, "no orphaned recordings\n")
    );
}

mod layouts {
    use crate::common::Env;
    use crate::recordings::{crate_with_suite, recording_at};
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    /// What a config file in a layout holds: nothing, a setting, or something that does not
    /// read (alone, or once merged).
    const CONFIGS: &[&str] = &[
        "",
        "[strict]\nmatching = \"any_order\"\n",
        "[recording]\nvalidation = \"skip\"\n",
        "[strict\n",
        "[strict]\nmatchng = 1\n",
        "evaluators = [\"field_accuracy\"]\n",
    ];

    /// A suite layout: fixtures at paths up to three folders deep, config files in some
    /// folders (the suite's own included, `""`), recordings of some fixtures, and recordings of
    /// cases that have no fixture (orphans).
    #[derive(Debug)]
    struct Layout {
        fixtures: BTreeSet<String>,
        configs: Vec<(&'static str, &'static str)>,
        recorded: BTreeSet<String>,
        orphans: BTreeSet<String>,
    }

    fn case_path() -> impl Strategy<Value = String> {
        (
            prop::collection::vec(prop::sample::select(vec!["a", "b", "sub"]), 0..3),
            prop::sample::select(vec!["one", "two", "three"]),
        )
            .prop_map(|(folders, file)| {
                let mut path = folders.join("/");
                if !path.is_empty() {
                    path.push('/');
                }
                path + file
            })
    }

    fn layout() -> impl Strategy<Value = Layout> {
        (
            prop::collection::btree_set(case_path(), 1..8),
            prop::collection::vec(
                (
                    prop::sample::select(vec!["", "a", "b", "sub", "a/b", "sub/a", "a/sub/b"]),
                    prop::sample::select(CONFIGS),
                ),
                0..4,
            ),
            prop::collection::btree_set(case_path(), 0..4),
            any::<prop::sample::Index>(),
        )
            .prop_map(|(fixtures, configs, orphans, split)| {
                let recorded = fixtures
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| (i + split.index(3)) % 3 != 0)
                    .map(|(_, f)| f.clone())
                    .collect();
                let orphans = orphans.difference(&fixtures).cloned().collect();
                Layout {
                    fixtures,
                    configs,
                    recorded,
                    orphans,
                }
            })
    }

    fn write(layout: &Layout) -> Env {
        let env = crate_with_suite("");
        for case in &layout.fixtures {
            env.write(
                &format!("suite/{case}.json"),
                &format!("{{ \"input\": {{ \"m\": \"{case}\" }}, \"expected\": [] }}\n"),
            );
        }
        for (folder, text) in &layout.configs {
            let folder = if folder.is_empty() {
                "suite".to_string()
            } else {
                format!("suite/{folder}")
            };
            env.write(&format!("{folder}/proposal-eval.toml"), text);
        }
        for case in layout.recorded.iter().chain(&layout.orphans) {
            recording_at(&env, &format!("suite/recordings/{case}.json"), case);
        }
        env
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

        /// For any layout, `prune --yes` deletes exactly the recordings of cases without a
        /// fixture: never one whose case's fixture exists, whatever config files lie where.
        #[test]
        fn prune_never_deletes_a_recording_whose_fixture_exists(layout in layout()) {
            let env = write(&layout);
            let out = env.run(&["prune", "--yes"]);
            prop_assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
            for case in &layout.recorded {
                let file = format!("suite/recordings/{case}.json");
                prop_assert!(env.path(&file).is_file(), "{} was deleted:\n{}", file, out.stdout);
            }
            for case in &layout.orphans {
                let file = format!("suite/recordings/{case}.json");
                prop_assert!(!env.path(&file).exists(), "{} was kept:\n{}", file, out.stdout);
            }
            for case in &layout.fixtures {
                let fixture = format!("suite/{case}.json");
                prop_assert!(env.path(&fixture).is_file(), "{} was deleted", fixture);
            }
        }
    }
}
