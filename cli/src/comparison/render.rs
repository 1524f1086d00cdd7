//! A comparison written out: for a terminal ([`Comparison::to_text`]) and for a pull-request
//! comment ([`Comparison::to_markdown`]). The HTML page renders its JSON itself.

use super::changes::{score_text, CaseChange, Comparison, FieldChange, RepeatChange};
use super::confidence::{self, percent};
use proposal_eval::__internal::repeat::RepeatSummary;
use std::fmt::Write as _;

/// `pass@1 66.7%, pass@3 100.0%, pass^3 33.3%`, or `no repeats`.
fn rates(summary: Option<&RepeatSummary>) -> String {
    match summary {
        Some(r) => format!(
            "pass@1 {}, pass@{k} {}, pass^{k} {}",
            percent(r.pass_at_1),
            percent(r.pass_at_k),
            percent(r.pass_hat_k),
            k = r.k
        ),
        None => "no repeats".into(),
    }
}

fn maybe_score(score: Option<f64>) -> String {
    score.map_or_else(|| "–".to_string(), score_text)
}

fn signed(delta: f64) -> String {
    if delta > 0.0 {
        format!("+{delta:.2}")
    } else {
        format!("{delta:.2}")
    }
}

fn points(delta: f64) -> String {
    let pp = delta * 100.0;
    if pp > 0.0 {
        format!("+{pp:.1} pp")
    } else {
        format!("{pp:.1} pp")
    }
}

fn verdict(passed: Option<bool>) -> &'static str {
    match passed {
        Some(true) => "pass",
        Some(false) => "FAIL",
        None => "–",
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl Comparison {
    /// One line: the counts of each kind of change.
    pub fn summary_line(&self) -> String {
        self.counts().join(", ")
    }

    /// The counts of each kind of change: regressions, fixes, score and field changes, added and
    /// removed.
    fn counts(&self) -> [String; 6] {
        [
            plural(self.regressions.len(), "regression", "regressions"),
            plural(self.fixes.len(), "fix", "fixes"),
            plural(self.score_changes.len(), "score change", "score changes"),
            plural(self.field_changes.len(), "field change", "field changes"),
            format!("{} added", self.added.len()),
            format!("{} removed", self.removed.len()),
        ]
    }

    /// The terminal form.
    pub fn to_text(&self) -> String {
        let mut out = self.text_head();
        for (title, rows) in self.text_sections() {
            if rows.is_empty() {
                continue;
            }
            let _ = writeln!(out, "\n{title}:");
            for row in rows {
                out.push_str(&row);
            }
        }
        let _ = writeln!(
            out,
            "\n{}; {} unchanged",
            self.summary_line(),
            self.unchanged
        );
        let _ = writeln!(
            out,
            "overall: {} at alpha {} (McNemar {})",
            self.overall.verdict,
            self.alpha,
            confidence::p_text(self.overall.p_value)
        );
        out
    }

    /// The terminal form's first lines: the two reports, the counts, the paired statistics.
    fn text_head(&self) -> String {
        let mut out = String::new();
        let (b, n) = (&self.base, &self.new);
        let _ = writeln!(
            out,
            "compare: {} ({}) -> {} ({})",
            b.name,
            b.generated_at.format("%Y-%m-%d %H:%M UTC"),
            n.name,
            n.generated_at.format("%Y-%m-%d %H:%M UTC")
        );
        let _ = writeln!(
            out,
            "cases: {} -> {}; passed: {} -> {}; pass rate: {} -> {} ({})",
            b.cases,
            n.cases,
            b.passed,
            n.passed,
            percent(b.pass_rate),
            percent(n.pass_rate),
            points(n.pass_rate - b.pass_rate)
        );
        out.push_str(&confidence::to_text(
            self.alpha,
            &self.overall,
            &self.suites,
        ));
        out
    }

    /// The terminal form's lists, each a title with its count and its lines (an empty list is
    /// not shown).
    fn text_sections(&self) -> [(String, Vec<String>); 8] {
        let cases = |rows: &[CaseChange], line: fn(&CaseChange) -> String| -> Vec<String> {
            rows.iter().map(line).collect()
        };
        let section = |title: &str, rows: Vec<String>| (format!("{title} ({})", rows.len()), rows);
        let scores = format!("score changes of at least {}", self.min_delta);
        [
            section("regressions", cases(&self.regressions, text_case)),
            section("fixes", cases(&self.fixes, text_case)),
            section(&scores, cases(&self.score_changes, text_score)),
            section(
                "accuracy per field",
                self.field_changes.iter().map(text_field).collect(),
            ),
            section("repeats", self.repeats.iter().map(text_repeat).collect()),
            section("flaky", cases(&self.flaky, text_flaky)),
            section("added", cases(&self.added, text_listed)),
            section("removed", cases(&self.removed, text_listed)),
        ]
    }

    /// The form for a pull-request comment (GitHub-flavoured markdown).
    pub fn to_markdown(&self) -> String {
        let mut out = self.markdown_head();
        for (title, rows) in [("Regressions", &self.regressions), ("Fixes", &self.fixes)] {
            if !rows.is_empty() {
                let _ = writeln!(out, "\n#### {title} ({})\n", rows.len());
                markdown_cases(&mut out, rows);
            }
        }
        // The long lists fold away: a pull request shows the regressions first.
        for (title, body) in self.markdown_details() {
            let _ = write!(
                out,
                "\n<details><summary>{title}</summary>\n\n{body}\n</details>\n"
            );
        }
        out
    }

    /// The markdown form's heading, verdict and table of counts, and the paired statistics.
    fn markdown_head(&self) -> String {
        let mut out = String::new();
        let (b, n) = (&self.base, &self.new);
        let _ = writeln!(
            out,
            "### proposal-eval: {} → {}\n",
            md_code(&b.name),
            md_code(&n.name)
        );
        let verdict_line = if self.has_regressions() {
            format!(
                "**{}**",
                plural(self.regressions.len(), "regression", "regressions")
            )
        } else {
            "No regressions".to_string()
        };
        let _ = writeln!(
            out,
            "{verdict_line}; {}.\n",
            self.summary_line_after_regressions()
        );
        let _ = writeln!(
            out,
            "Overall: **{}** at alpha {} (McNemar {}).\n",
            self.overall.verdict,
            self.alpha,
            confidence::p_text(self.overall.p_value)
        );
        out.push_str("| | baseline | now | change |\n|---|---:|---:|---:|\n");
        let _ = writeln!(
            out,
            "| cases | {} | {} | {:+} |",
            b.cases,
            n.cases,
            n.cases as i64 - b.cases as i64
        );
        let _ = writeln!(
            out,
            "| passed | {} | {} | {:+} |",
            b.passed,
            n.passed,
            n.passed as i64 - b.passed as i64
        );
        let _ = writeln!(
            out,
            "| pass rate | {} | {} | {} |",
            percent(b.pass_rate),
            percent(n.pass_rate),
            points(n.pass_rate - b.pass_rate)
        );
        out.push_str(&confidence::to_markdown(
            self.alpha,
            &self.overall,
            &self.suites,
            md_cell,
        ));
        out
    }

    /// The markdown form's folded lists, each a summary and its body; empty ones left out.
    fn markdown_details(&self) -> Vec<(String, String)> {
        let listed = |rows: &[CaseChange]| -> String {
            let line =
                |c: &CaseChange| format!("- {} ({})\n", md_code(&c.test), md_cell(&c.place()));
            rows.iter().map(line).collect()
        };
        let table = |head: &str, rows: String| match rows.is_empty() {
            true => rows,
            false => format!("| {head} |\n{rows}"),
        };
        let score_rows = self.score_changes.iter().map(markdown_score).collect();
        let field_rows = self.field_changes.iter().map(markdown_field).collect();
        let n = (self.score_changes.len(), self.field_changes.len());
        let details = [
            (
                format!("Score changes of at least {} ({})", self.min_delta, n.0),
                table(
                    "change | case | binary | score |\n|---:|---|---|---:",
                    score_rows,
                ),
            ),
            (
                format!("Accuracy per field ({})", n.1),
                table(
                    "change | field | suite | baseline | now |\n|---:|---|---|---:|---:",
                    field_rows,
                ),
            ),
            (
                format!("Repeats ({} flaky)", self.flaky.len()),
                self.markdown_repeats(),
            ),
            (format!("Added ({})", self.added.len()), listed(&self.added)),
            (
                format!("Removed ({})", self.removed.len()),
                listed(&self.removed),
            ),
        ];
        details
            .into_iter()
            .filter(|(_, body)| !body.is_empty())
            .collect()
    }

    /// The repeated suites' rates and the flaky cases, as a markdown list.
    fn markdown_repeats(&self) -> String {
        let mut body = String::new();
        for r in &self.repeats {
            let _ = writeln!(
                body,
                "- {}: {} → {}",
                md_cell(&format!("{} ({}/{})", r.suite, r.package, r.binary)),
                rates(r.base.as_ref()),
                rates(r.new.as_ref())
            );
        }
        for c in &self.flaky {
            let _ = writeln!(
                body,
                "- flaky: {}: {}{}",
                md_code(&c.test),
                md_cell(c.new_samples.as_deref().unwrap_or("")),
                if c.was_flaky {
                    " (flaky before too)"
                } else {
                    " (newly flaky)"
                }
            );
        }
        body
    }

    fn summary_line_after_regressions(&self) -> String {
        format!(
            "{}, {} unchanged",
            self.counts()[1..].join(", "),
            self.unchanged
        )
    }
}

/// A regression's or a fix's lines in the terminal form, its reason below it.
fn text_case(c: &CaseChange) -> String {
    let mut line = format!(
        "  {} ({}): {} -> {}, score {} -> {}",
        c.test,
        c.place(),
        verdict(c.base_passed),
        verdict(c.new_passed),
        maybe_score(c.base_score),
        maybe_score(c.new_score)
    );
    if let Some(why) = &c.why {
        let _ = write!(line, "\n      {why}");
    }
    line.push('\n');
    line
}

/// A score change's line in the terminal form.
fn text_score(c: &CaseChange) -> String {
    format!(
        "  {:>6}  {} ({}): {} -> {}\n",
        signed(c.delta.unwrap_or(0.0)),
        c.test,
        c.place(),
        maybe_score(c.base_score),
        maybe_score(c.new_score)
    )
}

/// A field's accuracy: `75.0% (3/4)`, or `none` when it was not scored.
fn accuracy(a: Option<f64>, (hits, total): (usize, usize), none: &str) -> String {
    match a {
        Some(a) => format!("{} ({hits}/{total})", percent(a)),
        None => none.into(),
    }
}

/// A field's change in the terminal form.
fn text_field(f: &FieldChange) -> String {
    format!(
        "  {:>9}  {} in {} ({}/{}): {} -> {}\n",
        f.delta.map_or_else(|| "new/gone".into(), points),
        f.path,
        f.suite,
        f.package,
        f.binary,
        accuracy(f.base_accuracy, f.base_hits, "not scored"),
        accuracy(f.new_accuracy, f.new_hits, "not scored")
    )
}

/// A repeated suite's rates in the terminal form.
fn text_repeat(r: &RepeatChange) -> String {
    format!(
        "  {} ({}/{}): {} -> {}\n",
        r.suite,
        r.package,
        r.binary,
        rates(r.base.as_ref()),
        rates(r.new.as_ref())
    )
}

/// A flaky case's line in the terminal form.
fn text_flaky(c: &CaseChange) -> String {
    format!(
        "  {} ({}): {}{}\n",
        c.test,
        c.place(),
        c.new_samples.as_deref().unwrap_or(""),
        if c.was_flaky {
            "; flaky before too"
        } else {
            "; newly flaky"
        }
    )
}

/// An added or removed case's line in the terminal form.
fn text_listed(c: &CaseChange) -> String {
    format!("  {} ({})\n", c.test, c.place())
}

/// A table of regressions or fixes in the markdown form.
fn markdown_cases(out: &mut String, rows: &[CaseChange]) {
    out.push_str("| case | binary | verdict | score | why |\n|---|---|---|---:|---|\n");
    for c in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} → {} | {} → {} | {} |",
            md_code(&c.test),
            md_cell(&c.place()),
            verdict(c.base_passed),
            verdict(c.new_passed),
            maybe_score(c.base_score),
            maybe_score(c.new_score),
            md_cell(c.why.as_deref().unwrap_or(""))
        );
    }
}

/// A score change as a row of the markdown form's table.
fn markdown_score(c: &CaseChange) -> String {
    format!(
        "| {} | {} | {} | {} → {} |\n",
        signed(c.delta.unwrap_or(0.0)),
        md_code(&c.test),
        md_cell(&c.place()),
        maybe_score(c.base_score),
        maybe_score(c.new_score)
    )
}

/// A field's change as a row of the markdown form's table.
fn markdown_field(f: &FieldChange) -> String {
    format!(
        "| {} | {} | {} | {} | {} |\n",
        f.delta.map_or_else(|| "new/gone".into(), points),
        md_code(&f.path),
        md_cell(&format!("{} ({}/{})", f.suite, f.package, f.binary)),
        accuracy(f.base_accuracy, f.base_hits, "–"),
        accuracy(f.new_accuracy, f.new_hits, "–")
    )
}

/// Text in a markdown table cell: `|` escaped, line breaks and HTML out.
fn md_cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '\n' | '\r' => out.push(' '),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            c => out.push(c),
        }
    }
    out
}

/// Text as inline code: a fence longer than any run of backticks inside, `|` escaped (GitHub
/// reads `\|` in a table cell's code span as `|`).
fn md_code(text: &str) -> String {
    let text = text.replace(['\n', '\r'], " ").replace('|', "\\|");
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    if text.starts_with('`') || text.ends_with('`') {
        format!("{fence} {text} {fence}")
    } else {
        format!("{fence}{text}{fence}")
    }
}
