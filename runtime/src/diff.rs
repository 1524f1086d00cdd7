//! Line diffs of JSON values, for the messages of the shell (stale inputs, changed requests).

use serde_json::Value;
use similar::{ChangeTag, TextDiff};

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
    text_diff(&old, &new, old_label, new_label, color)
}

/// A unified line diff of two texts.
pub fn text_diff(old: &str, new: &str, old_label: &str, new_label: &str, color: bool) -> String {
    let (red, green, cyan, reset) = if color {
        ("\x1b[31m", "\x1b[32m", "\x1b[36m", "\x1b[0m")
    } else {
        ("", "", "", "")
    };
    let mut out = format!("{red}--- {old_label}{reset}\n{green}+++ {new_label}{reset}\n");
    let diff = TextDiff::from_lines(old, new);
    for group in diff.grouped_ops(3) {
        let (first, last) = (&group[0], &group[group.len() - 1]);
        let (old_range, new_range) = (
            first.old_range().start..last.old_range().end,
            first.new_range().start..last.new_range().end,
        );
        out.push_str(&format!(
            "{cyan}@@ -{},{} +{},{} @@{reset}\n",
            old_range.start + 1,
            old_range.len(),
            new_range.start + 1,
            new_range.len()
        ));
        for op in &group {
            for change in diff.iter_changes(op) {
                let (sign, on) = match change.tag() {
                    ChangeTag::Delete => ('-', red),
                    ChangeTag::Insert => ('+', green),
                    ChangeTag::Equal => (' ', ""),
                };
                let off = if on.is_empty() { "" } else { reset };
                out.push_str(&format!("{on}{sign}{}{off}", change.value()));
                if change.missing_newline() {
                    out.push('\n');
                }
            }
        }
    }
    out
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
