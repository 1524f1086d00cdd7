//! The macro's compile errors, pinned as a user sees them.
//!
//! trybuild compiles each file in a crate of its own under `<target>/tests/trybuild/`, which is
//! that crate's root; the suite folders the cases name are made there first.

#[test]
fn macro_errors() {
    let project = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target dir")
        .join("tests/trybuild/proposal-eval-ui");
    std::fs::create_dir_all(project.join("empty_suite")).unwrap();
    std::fs::create_dir_all(project.join("one_case_suite")).unwrap();
    std::fs::write(project.join("one_case_suite/a.json"), "{\"expected\": []}").unwrap();
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
