use crate::recordings::*;

#[test]
fn lists_orphans_and_deletes_them_only_with_yes() {
    let env = crate_with_suite("");
    simple(&env, "kept");
    record(&env, "kept", &[]);
    // A fixture that does not parse still owns its recording.
    simple(&env, "broken");
    record(&env, "broken", &[]);
    env.write("suite/broken.json", "{ not json");
    raw_recording(&env, "gone", "{}\n");
    raw_recording(&env, "deep/er/gone", "{}\n");

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
    raw_recording(&env, "gone", "{}\n");
    let out = env.run(&["prune", "suite", "-y"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!env.path("suite/recordings/gone.json").exists());
    assert_eq!(env.run(&["prune", "missing"]).code, 2);
    assert_eq!(env.run(&["prune", "--yes=no"]).code, 2);
    assert_eq!(env.run(&["prune", "--force"]).code, 2);
}
