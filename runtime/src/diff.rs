//! Line diffs of JSON values, for the messages of the shell (stale inputs, changed requests).

use serde_json::Value;

/// A unified line diff of two values' pretty JSON, `-` for `old`, `+` for `new`, with a few lines
/// of context; coloured when `color` is true.
pub fn line_diff(
    old: &Value,
    new: &Value,
    old_label: &str,
    new_label: &str,
    color: bool,
) -> String {
    let old = crate::recording::canonical_pretty(old);
    let new = crate::recording::canonical_pretty(new);
    crate::output::unified_diff(&old, &new, old_label, new_label, color)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shows_only_what_changed_with_context() {
        let d = line_diff(
            &json!({"a": 1, "b": 2}),
            &json!({"a": 1, "b": 3}),
            "old",
            "new",
            false,
        );
        assert_eq!(
            d,
            "--- old\n+++ new\n@@ -1,4 +1,4 @@\n {\n   \"a\": 1,\n-  \"b\": 2\n+  \"b\": 3\n }\n"
        );
    }
}
