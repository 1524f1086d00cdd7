//! One plain rstest test, no `#[files]`: what `theirs` costs besides the generated tests
//! (libtest, linking rstest's runtime part and serde_json).

use rstest::rstest;

#[rstest]
fn plain() {
    let value: serde_json::Value = serde_json::from_str("{\"a\": 1}").unwrap();
    assert_eq!(value["a"], 1);
}
