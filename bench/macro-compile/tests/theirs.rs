//! One `#[test]` per fixture of `generated/suite` through rstest's `#[files]`: the test parses
//! its fixture and compares the proposals it holds with `expected`.

use rstest::rstest;
use std::path::PathBuf;

#[rstest]
fn suite(#[files("generated/suite/*.json")] path: PathBuf) {
    let text = std::fs::read_to_string(&path).unwrap();
    let fixture: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(fixture["input"]["proposals"], fixture["expected"]);
}
