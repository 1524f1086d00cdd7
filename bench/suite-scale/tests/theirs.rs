//! datatest-stable over the same model-shape fixture files: read the fixture and its recording,
//! parse both with serde_json, and compare `expected` with the recorded proposals (the same
//! actual the code under test returns in `ours`) with assert-json-diff in strict mode.
//!
//! This is what a user without proposal-eval would write; it does not check recording sources,
//! does not compare requests, and applies no ignore paths. `BENCH_SUITE` as in `ours`.

use assert_json_diff::{assert_json_matches_no_panic, CompareMode, Config};
use datatest_stable::Utf8Path;
use serde_json::Value;

fn strict_case(path: &Utf8Path, contents: String) -> datatest_stable::Result<()> {
    let fixture: Value = serde_json::from_str(&contents)?;
    // <suite>/cases/... -> <suite>/recordings/cases/...
    let text = path.as_str();
    let at = text.rfind("/cases/").ok_or("not under cases/")?;
    let recording_path = format!("{}/recordings{}", &text[..at], &text[at..]);
    let recording: Value = serde_json::from_slice(&std::fs::read(recording_path)?)?;
    let actual = &recording["interactions"][0]["response"]["proposals"];
    assert_json_matches_no_panic(
        actual,
        &fixture["expected"],
        Config::new(CompareMode::Strict),
    )?;
    Ok(())
}

datatest_stable::harness! {
    {
        test = strict_case,
        root = suite_scale_bench::suite_for_tests(suite_scale_bench::Shape::Model),
        pattern = r"^cases/.*\.json$",
    },
}
