//! Rendering, apart from deciding: how mismatches, verdicts and diffs are written for a person.

use crate::compare::{Mismatch, MismatchKind, StrictVerdict};
use crate::path::{Matcher, Pattern, SegmentRef};
use serde_json::Value;
use similar::{ChangeTag, TextDiff};
use std::fmt::{self, Write as _};

const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";
const CYAN: &str = "\x1b[36m";
const BOLD: &str = "\x1b[1m";
const RESET: &str = "\x1b[0m";

/// The header of the expected side of a strict diff.
pub const EXPECTED_HEADER: &str = "expected (normalized; ignored paths shown as \"<ignored>\")";
/// The header of the actual side of a strict diff.
pub const ACTUAL_HEADER: &str = "actual (normalized)";
/// What an ignored node shows in a diff.
pub const IGNORED: &str = "<ignored>";

/// A value on one line, cut to `max` characters.
pub fn compact(value: &Value, max: usize) -> String {
    let text = value.to_string();
    if text.chars().count() <= max {
        text
    } else {
        let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

pub(crate) fn describe_type(value: &Value) -> String {
    match value {
        Value::Object(_) => "an object".into(),
        Value::Array(_) => "an array".into(),
        Value::String(_) => format!("a string {}", compact(value, 60)),
        Value::Number(_) => format!("a number {value}"),
        Value::Bool(_) => format!("a boolean {value}"),
        Value::Null => "null".into(),
    }
}

impl fmt::Display for Mismatch {
    /// One line: the path, then what differs
    /// (`[0].newValue: values differ: expected 120, actual "120"`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const MAX: usize = 80;
        let show = |v: &Option<Value>| v.as_ref().map_or("nothing".into(), |v| compact(v, MAX));
        let paren = |d: &Option<String>| d.as_ref().map_or(String::new(), |d| format!(" ({d})"));
        write!(f, "{}: ", self.location)?;
        match self.kind {
            MismatchKind::MissingInActual => f.write_str("missing in actual")?,
            MismatchKind::ExtraInActual => f.write_str("extra in actual")?,
            MismatchKind::ValuesDiffer => write!(
                f,
                "values differ: expected {}, actual {}",
                show(&self.expected),
                show(&self.actual)
            )?,
            MismatchKind::TypeDiffers => {
                let ty = |v: &Option<Value>| v.as_ref().map_or("nothing".into(), describe_type);
                write!(
                    f,
                    "type differs: expected {}, actual {}",
                    ty(&self.expected),
                    ty(&self.actual)
                )?;
                if let Some(d) = &self.detail {
                    write!(f, " ({d})")?;
                }
            }
            MismatchKind::CountDiffers => write!(
                f,
                "proposal count differs: expected {}, actual {}",
                show(&self.expected),
                show(&self.actual)
            )?,
            MismatchKind::UnmatchedExpected => {
                write!(f, "unmatched expected proposal{}", paren(&self.detail))?
            }
            MismatchKind::UnmatchedActual => {
                write!(f, "unmatched actual proposal{}", paren(&self.detail))?
            }
            MismatchKind::NoNormalizationRule => {
                f.write_str(self.detail.as_deref().unwrap_or("no normalization rule"))?
            }
            MismatchKind::TransformerFailed => write!(
                f,
                "transformer failed: {}",
                self.detail.as_deref().unwrap_or("")
            )?,
            MismatchKind::InvalidIgnorePaths => write!(
                f,
                "invalid ignore_paths: {}",
                self.detail.as_deref().unwrap_or("")
            )?,
        }
        let pair_level = matches!(
            self.kind,
            MismatchKind::MissingInActual
                | MismatchKind::ExtraInActual
                | MismatchKind::ValuesDiffer
                | MismatchKind::TypeDiffers
                | MismatchKind::TransformerFailed
        );
        if let (true, Some(j)) = (pair_level, self.actual_index) {
            write!(f, " (paired with actual [{j}])")?;
        }
        Ok(())
    }
}

/// A copy of `value` with every node that `patterns` cover replaced by `"<ignored>"`. `index` is
/// the proposal's place in its list, for patterns that start with an index.
pub fn mask_ignored(value: &Value, patterns: &[Pattern], index: Option<usize>) -> Value {
    if patterns.is_empty() {
        return value.clone();
    }
    let mut matcher = Matcher::new(patterns);
    let root = matcher.proposal_root(index);
    mask(value, &mut matcher, root)
}

fn mask(value: &Value, matcher: &mut Matcher<'_>, frame: crate::path::MatchFrame) -> Value {
    if frame.covered {
        return Value::String(IGNORED.into());
    }
    if frame.is_dead() {
        return value.clone();
    }
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let child = matcher.child(frame, SegmentRef::Key(k));
                    let out = mask(v, matcher, child);
                    matcher.truncate(child);
                    (k.clone(), out)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let child = matcher.child(frame, SegmentRef::Index(i));
                    let out = mask(v, matcher, child);
                    matcher.truncate(child);
                    out
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A unified diff (three lines of context) of two texts, under `---`/`+++` headers; ANSI
/// colours when `color`. Empty texts or equal texts give just the headers.
pub fn unified_diff(
    expected: &str,
    actual: &str,
    expected_header: &str,
    actual_header: &str,
    color: bool,
) -> String {
    let (red, green, cyan, bold, reset) = if color {
        (RED, GREEN, CYAN, BOLD, RESET)
    } else {
        ("", "", "", "", "")
    };
    let mut out = String::new();
    let _ = writeln!(out, "{bold}--- {expected_header}{reset}");
    let _ = writeln!(out, "{bold}+++ {actual_header}{reset}");
    let diff = TextDiff::from_lines(expected, actual);
    let unified = diff.unified_diff();
    for hunk in unified.iter_hunks() {
        let _ = writeln!(out, "{cyan}{}{reset}", hunk.header());
        for change in hunk.iter_changes() {
            let (sign, start, end) = match change.tag() {
                ChangeTag::Delete => ('-', red, reset),
                ChangeTag::Insert => ('+', green, reset),
                ChangeTag::Equal => (' ', "", ""),
            };
            let line = change.as_str().unwrap_or("");
            let line = line.strip_suffix('\n').unwrap_or(line);
            let _ = writeln!(out, "{start}{sign}{line}{end}");
            if change.missing_newline() {
                let _ = writeln!(out, "\\ No newline at end of file");
            }
        }
    }
    out
}

/// A unified line diff of two values' canonical pretty JSON (sorted keys), `-` for `old`, `+` for
/// `new`, with a few lines of context; coloured when `color` is true.
///
/// ```
/// use proposal_eval_engine::render::line_diff;
/// use serde_json::json;
/// let d = line_diff(&json!({"a": 1, "b": 2}), &json!({"a": 1, "b": 3}), "old", "new", false);
/// assert!(d.contains("-  \"b\": 2\n+  \"b\": 3"));
/// ```
pub fn line_diff(
    old: &Value,
    new: &Value,
    old_label: &str,
    new_label: &str,
    color: bool,
) -> String {
    let old = crate::json::canonical_pretty(old);
    let new = crate::json::canonical_pretty(new);
    unified_diff(&old, &new, old_label, new_label, color)
}

fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string());
    text.push('\n');
    text
}

impl StrictVerdict<'_> {
    /// The failure body: one line per mismatch, indented two spaces, then a unified diff of the
    /// normalized pretty JSON with ignored paths shown as `"<ignored>"` on both sides; ANSI
    /// colours when `color`. The case header and the re-run line are the caller's. With
    /// `any_order`, the actual side lists proposals in the order of their expected partners,
    /// unmatched ones last.
    pub fn render(&self, color: bool) -> String {
        render_verdict(self, color)
    }
}

fn render_verdict(verdict: &StrictVerdict<'_>, color: bool) -> String {
    let mut out = String::new();
    for mismatch in &verdict.mismatches {
        let _ = writeln!(out, "  {mismatch}");
    }
    let ignores = &verdict.ignores;
    let (expected, actual) = if ignores.list {
        let (Value::Array(exp), Value::Array(act)) = (
            verdict.expected_normalized.as_ref(),
            verdict.actual_normalized.as_ref(),
        ) else {
            // A shape mismatch: nothing is normalized; show both as they are.
            return out
                + &unified_diff(
                    &pretty(&verdict.expected_normalized),
                    &pretty(&verdict.actual_normalized),
                    EXPECTED_HEADER,
                    ACTUAL_HEADER,
                    color,
                );
        };
        let masked_exp: Vec<Value> = exp
            .iter()
            .enumerate()
            .map(|(i, e)| mask_ignored(e, ignores.for_expected(i), Some(i)))
            .collect();
        let mut partner = vec![None; act.len()];
        for &(i, j) in &verdict.pairs {
            partner[j] = Some(i);
        }
        let mut order: Vec<(Option<usize>, usize)> =
            partner.iter().enumerate().map(|(j, i)| (*i, j)).collect();
        // Paired ones by their expected index, then unmatched ones in their own order.
        order.sort_by_key(|&(i, j)| (i.is_none(), i.unwrap_or(j), j));
        let masked_act: Vec<Value> = order
            .iter()
            .map(|&(i, j)| match i {
                Some(i) => mask_ignored(&act[j], ignores.for_expected(i), Some(i)),
                None => mask_ignored(&act[j], &ignores.default, Some(j)),
            })
            .collect();
        (Value::Array(masked_exp), Value::Array(masked_act))
    } else {
        let patterns = ignores.for_expected(0);
        (
            mask_ignored(&verdict.expected_normalized, patterns, None),
            mask_ignored(&verdict.actual_normalized, patterns, None),
        )
    };
    out + &unified_diff(
        &pretty(&expected),
        &pretty(&actual),
        EXPECTED_HEADER,
        ACTUAL_HEADER,
        color,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn masks_covered_nodes() {
        let patterns = vec![
            Pattern::parse("meta.*").unwrap(),
            Pattern::parse("[1].x").unwrap(),
        ];
        let v = json!({"meta": {"a": 1, "b": [2]}, "x": 3, "y": 4});
        assert_eq!(
            mask_ignored(&v, &patterns, Some(1)),
            json!({"meta": {"a": "<ignored>", "b": "<ignored>"}, "x": "<ignored>", "y": 4})
        );
        assert_eq!(
            mask_ignored(&v, &patterns, Some(0)),
            json!({"meta": {"a": "<ignored>", "b": "<ignored>"}, "x": 3, "y": 4})
        );
    }

    #[test]
    fn diff_colours_only_when_asked() {
        let plain = unified_diff("a\n", "b\n", "e", "a", false);
        assert!(!plain.contains('\x1b'));
        let coloured = unified_diff("a\n", "b\n", "e", "a", true);
        assert!(
            coloured.contains(&format!("{RED}-a{RESET}")),
            "{coloured:?}"
        );
        assert!(
            coloured.contains(&format!("{GREEN}+b{RESET}")),
            "{coloured:?}"
        );
    }

    #[test]
    fn long_values_are_cut() {
        let v = json!("x".repeat(200));
        let s = compact(&v, 20);
        assert_eq!(s.chars().count(), 20);
        assert!(s.ends_with('…'));
    }
}
