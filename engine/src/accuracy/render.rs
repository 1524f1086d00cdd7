//! The failure text of a verdict: every miss, then a table of every configured field.

use super::scoring::{AccuracyVerdict, Row};
use super::text::truncate;
use std::fmt::Write as _;

const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";
const DIM: &str = "\x1b[2m";
const BOLD: &str = "\x1b[1m";
const RESET: &str = "\x1b[0m";

impl AccuracyVerdict {
    /// The failure text: every miss first, one per line (`  invoice.total: outside tolerance
    /// 0.01 (diff 0.02)`), then a side-by-side table of every configured field, in config
    /// order, marked `✓` hit, `✗` miss or `-` not counted. The headline (`reasoning`) is left to
    /// the caller. `color` adds ANSI colours.
    ///
    /// ```
    /// use proposal_eval_engine::accuracy::{evaluate, FieldAccuracyConfig, FieldSpec};
    /// use serde_json::json;
    /// let config = FieldAccuracyConfig::new().field(FieldSpec::exact("a")).field(FieldSpec::exact("b"));
    /// let verdict = evaluate(&json!({"a": 1, "b": 2}), &json!({"a": 1}), &config);
    /// let text = verdict.render(false);
    /// assert!(text.starts_with("  b: missing (required)\n"));
    /// assert!(text.contains("✓  a"));
    /// ```
    pub fn render(&self, color: bool) -> String {
        let paint = |code: &str, text: &str| {
            if color {
                format!("{code}{text}{RESET}")
            } else {
                text.to_string()
            }
        };
        let mut out = String::new();
        for miss in &self.misses {
            let _ = writeln!(
                out,
                "  {}: {}",
                paint(RED, &miss.path.to_string()),
                miss.why
            );
        }
        if !self.misses.is_empty() && !self.rows.is_empty() {
            out.push('\n');
        }
        if self.rows.is_empty() {
            return out;
        }
        let mut table: Vec<[String; 6]> = vec![[
            " ".to_string(),
            "field".to_string(),
            "match".to_string(),
            "expected".to_string(),
            "actual".to_string(),
            "result".to_string(),
        ]];
        for row in &self.rows {
            table.push(match *row {
                Row::Hit(i) => {
                    let h = &self.hits[i];
                    [
                        "✓".to_string(),
                        h.path.to_string(),
                        h.match_kind.name().to_string(),
                        truncate(&h.expected.to_string(), 32),
                        truncate(&h.actual.to_string(), 32),
                        h.detail(),
                    ]
                }
                Row::Miss(i) => {
                    let m = &self.misses[i];
                    [
                        "✗".to_string(),
                        m.path.to_string(),
                        m.match_kind.name().to_string(),
                        truncate(&m.expected.to_string(), 32),
                        m.actual
                            .as_ref()
                            .map(|a| truncate(&a.to_string(), 32))
                            .unwrap_or_else(|| "(missing)".to_string()),
                        m.why.clone(),
                    ]
                }
                Row::Skip(i) => {
                    let s = &self.skipped[i];
                    [
                        "-".to_string(),
                        s.path.clone(),
                        s.match_kind.name().to_string(),
                        s.expected
                            .as_ref()
                            .map(|e| truncate(&e.to_string(), 32))
                            .unwrap_or_else(|| "(absent)".to_string()),
                        if s.expected.is_some() {
                            "(missing)".to_string()
                        } else {
                            String::new()
                        },
                        format!("not counted: {}", s.why),
                    ]
                }
            });
        }
        let mut widths = [0usize; 6];
        for line in &table {
            for (w, cell) in widths.iter_mut().zip(line) {
                *w = (*w).max(cell.chars().count());
            }
        }
        for (n, line) in table.iter().enumerate() {
            let code = match (n, line[0].as_str()) {
                (0, _) => BOLD,
                (_, "✓") => GREEN,
                (_, "✗") => RED,
                _ => DIM,
            };
            let mut text = String::from("  ");
            // Every cell padded to its column, the last too: the line is trimmed at its end.
            for (cell, w) in line.iter().zip(widths) {
                text.push_str(cell);
                let pad = w - cell.chars().count() + 2;
                text.extend(std::iter::repeat_n(' ', pad));
            }
            let text = text.trim_end();
            let _ = writeln!(out, "{}", paint(code, text));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::accuracy::{evaluate, FieldAccuracyConfig, FieldSpec};
    use serde_json::{json, Value};

    #[test]
    fn misses_are_never_capped() {
        let mut config = FieldAccuracyConfig::new();
        let mut e = serde_json::Map::new();
        for i in 0..500 {
            config = config.field(FieldSpec::exact(&format!("k{i}")));
            e.insert(format!("k{i}"), json!(i));
        }
        let v = evaluate(&Value::Object(e), &json!({}), &config);
        assert_eq!(v.misses.len(), 500);
        assert_eq!(
            v.render(false)
                .lines()
                .filter(|l| l.ends_with("missing (required)"))
                .count(),
            1000
        );
    }

    #[test]
    fn render_lists_misses_then_the_fields() {
        let config = FieldAccuracyConfig::new()
            .threshold(0.5)
            .field(FieldSpec::exact("invoice.number"))
            .field(FieldSpec::numeric_tolerance("invoice.total", 0.01))
            .field(FieldSpec::date("invoice.date"))
            .field(FieldSpec::exact("invoice.po").optional());
        let expected =
            json!({"invoice": {"number": "INV-1", "total": 100, "date": "2025-01-15", "po": "P"}});
        let actual = json!({"invoice": {"number": "INV-1", "total": "100.02"}});
        let v = evaluate(&expected, &actual, &config);
        let text = v.render(false);
        assert_eq!(
            text,
            "  invoice.total: outside tolerance 0.01 (diff 0.02)\n\
             \x20 invoice.date: missing (required)\n\
             \n\
             \x20    field           match              expected      actual     result\n\
             \x20 ✓  invoice.number  exact              \"INV-1\"       \"INV-1\"    equal\n\
             \x20 ✗  invoice.total   numeric_tolerance  100           \"100.02\"   outside tolerance 0.01 (diff 0.02)\n\
             \x20 ✗  invoice.date    date               \"2025-01-15\"  (missing)  missing (required)\n\
             \x20 -  invoice.po      exact              \"P\"           (missing)  not counted: optional, absent from actual\n"
        );
        let colored = v.render(true);
        assert!(colored.contains("\x1b[31minvoice.total\x1b[0m"));
        // The header bold, a hit green, a miss red, a field not counted dim.
        let painted: Vec<&str> = colored.lines().skip(3).collect();
        assert!(
            painted[0].starts_with("\x1b[1m     field"),
            "{:?}",
            painted[0]
        );
        assert!(painted[1].starts_with("\x1b[32m  ✓"), "{:?}", painted[1]);
        assert!(painted[2].starts_with("\x1b[31m  ✗"), "{:?}", painted[2]);
        assert!(painted[4].starts_with("\x1b[2m  -"), "{:?}", painted[4]);
        assert_eq!(strip_ansi(&colored), text);
    }

    /// With no miss, the table comes first, with no blank line above it.
    #[test]
    fn all_hits_render_the_table_alone() {
        let config = FieldAccuracyConfig::new().field(FieldSpec::exact("a"));
        let v = evaluate(&json!({"a": 1}), &json!({"a": 1}), &config);
        assert_eq!(
            v.render(false),
            "     field  match  expected  actual  result\n\x20 ✓  a      exact  1         1       equal\n"
        );
    }

    fn strip_ansi(s: &str) -> String {
        let mut out = String::new();
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            if c == '\x1b' {
                for d in chars.by_ref() {
                    if d == 'm' {
                        break;
                    }
                }
            } else {
                out.push(c);
            }
        }
        out
    }
}
