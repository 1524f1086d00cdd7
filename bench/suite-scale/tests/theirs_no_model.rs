//! datatest-stable over the same no-model fixture files: parse the fixture with serde_json and
//! compare its `input.proposals` (what the code under test returns in `ours_no_model`) with its
//! `expected` with assert-json-diff in strict mode (arrays in order, as `matching = "ordered"`).
//! `BENCH_SUITE` as in `ours_no_model`.

use assert_json_diff::{assert_json_matches_no_panic, CompareMode, Config};
use datatest_stable::Utf8Path;
use serde_json::Value;

fn strict_case(_path: &Utf8Path, contents: String) -> datatest_stable::Result<()> {
    let fixture: Value = serde_json::from_str(&contents)?;
    let actual = &fixture["input"]["proposals"];
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
        root = suite_scale_bench::suite_for_tests(suite_scale_bench::Shape::NoModel),
        pattern = r"^cases/.*\.json$",
    },
}
