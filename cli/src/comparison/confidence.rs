//! Which differences of a comparison are real: per suite and overall, each side's pass rate with
//! its Wilson interval, the exact McNemar test of the cases whose verdict changed, the paired
//! mean score difference with its t interval, the smallest change the suite could detect, a
//! verdict, and the model calls' tokens, latency and cost before and after.
//!
//! The statistics are the engine's ([`proposal_eval_engine::stats`]); this module counts the
//! cases of two reports into them and writes the result for the terminal, a pull request and
//! the HTML page. The formulas and decisions: `docs/reference/statistics.md`.

use proposal_eval::__internal::recording::usage::UsageTotals;
use proposal_eval_engine::stats::{self, Interval, MeanDifference, Verdict};
use serde::Serialize;
use std::fmt::Write as _;

/// One side's pass rate.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Rate {
    /// Cases.
    pub cases: usize,
    /// Cases that passed.
    pub passed: usize,
    /// `passed / cases` (0 when there is none).
    pub pass_rate: f64,
    /// Its 95 % Wilson interval; `None` when there is no case.
    pub interval: Option<Interval>,
}

impl Rate {
    fn of(cases: usize, passed: usize) -> Rate {
        Rate {
            cases,
            passed,
            pass_rate: if cases == 0 {
                0.0
            } else {
                passed as f64 / cases as f64
            },
            interval: stats::wilson(passed, cases),
        }
    }

    /// `75.0% [68.6%, 80.5%]`, or `–` without cases.
    pub fn describe(&self) -> String {
        match self.interval {
            Some(i) => format!(
                "{} [{}, {}]",
                percent(self.pass_rate),
                percent(i.low),
                percent(i.high)
            ),
            None => "–".into(),
        }
    }
}

/// How a group of cases (a suite, or all of them) changed, and whether the change is real.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Confidence {
    /// The baseline's pass rate.
    pub base: Rate,
    /// The new report's pass rate.
    pub new: Rate,
    /// Cases in both reports.
    pub paired: usize,
    /// Paired cases that passed in the baseline and fail now.
    pub pass_to_fail: usize,
    /// Paired cases that failed in the baseline and pass now.
    pub fail_to_pass: usize,
    /// The exact two-sided McNemar p-value of those two counts.
    pub p_value: f64,
    /// `regressed`, `improved` or `no_significant_change` at the comparison's `alpha`.
    pub verdict: Verdict,
    /// The smallest pass-rate change these cases detect at `alpha` with 80 % power; `None` when
    /// they are too few for any change to be significant.
    pub min_detectable_pass_rate: Option<f64>,
    /// The mean paired score difference (a repeated case's mean over its samples is its score)
    /// with its 95 % t interval; `None` with fewer than two cases scored on both sides.
    pub score: Option<MeanDifference>,
    /// The smallest mean score change these cases detect at `alpha` with 80 % power; `None`
    /// without a score interval or when no score moved (no spread to size it by).
    pub min_detectable_score: Option<f64>,
    /// The baseline's model calls; `None` when it made none.
    pub base_usage: Option<UsageTotals>,
    /// The new report's model calls.
    pub new_usage: Option<UsageTotals>,
}

/// One suite's [`Confidence`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SuiteConfidence {
    /// The suite's name.
    pub suite: String,
    /// The package of the test binary.
    pub package: String,
    /// The test binary.
    pub binary: String,
    /// The suite folder.
    pub suite_dir: String,
    /// Its change.
    #[serde(flatten)]
    pub change: Confidence,
}

/// The counts a [`Confidence`] is made from.
#[derive(Clone, Debug, Default)]
pub(super) struct Tally {
    base: (usize, usize),
    new: (usize, usize),
    paired: usize,
    pass_to_fail: usize,
    fail_to_pass: usize,
    score_differences: Vec<f64>,
}

impl Tally {
    /// Counts a case of the baseline.
    pub(super) fn in_base(&mut self, passed: bool) {
        self.base.0 += 1;
        self.base.1 += usize::from(passed);
    }

    /// Counts a case of the new report.
    pub(super) fn in_new(&mut self, passed: bool) {
        self.new.0 += 1;
        self.new.1 += usize::from(passed);
    }

    /// Counts a case in both (after [`Tally::in_base`] and [`Tally::in_new`]): each side's
    /// verdict and score.
    pub(super) fn pair(&mut self, base: (bool, Option<f64>), new: (bool, Option<f64>)) {
        self.paired += 1;
        match (base.0, new.0) {
            (true, false) => self.pass_to_fail += 1,
            (false, true) => self.fail_to_pass += 1,
            _ => {}
        }
        if let (Some(b), Some(n)) = (base.1, new.1) {
            self.score_differences.push(n - b);
        }
    }

    /// Adds another group's counts (a suite's into the whole run's).
    pub(super) fn absorb(&mut self, other: &Tally) {
        self.base.0 += other.base.0;
        self.base.1 += other.base.1;
        self.new.0 += other.new.0;
        self.new.1 += other.new.1;
        self.paired += other.paired;
        self.pass_to_fail += other.pass_to_fail;
        self.fail_to_pass += other.fail_to_pass;
        self.score_differences
            .extend_from_slice(&other.score_differences);
    }

    /// The statistics at `alpha`.
    pub(super) fn finish(
        &self,
        alpha: f64,
        base_usage: Option<UsageTotals>,
        new_usage: Option<UsageTotals>,
    ) -> Confidence {
        let (n, b, c) = (self.paired, self.pass_to_fail, self.fail_to_pass);
        // The spread of the per-case verdict changes (−1, 0, +1).
        let spread = if n < 2 {
            0.0
        } else {
            let mean = (c as f64 - b as f64) / n as f64;
            (((b + c) as f64 - n as f64 * mean * mean) / (n as f64 - 1.0))
                .max(0.0)
                .sqrt()
        };
        let score = stats::paired_mean_difference(&self.score_differences);
        Confidence {
            base: Rate::of(self.base.0, self.base.1),
            new: Rate::of(self.new.0, self.new.1),
            paired: n,
            pass_to_fail: b,
            fail_to_pass: c,
            p_value: stats::mcnemar(b, c),
            verdict: stats::verdict(b, c, alpha),
            min_detectable_pass_rate: stats::min_detectable_pass_rate(n, spread, alpha),
            score,
            // Scores that did not move at all give no spread to size an effect by.
            min_detectable_score: score
                .filter(|s| s.std_dev > 0.0)
                .and_then(|s| stats::min_detectable_mean(s.n, s.std_dev, alpha)),
            base_usage,
            new_usage,
        }
    }
}

/// `p = 0.0625`, `p = 0.002`, `p = 1`, `p < 0.0001`: four places at most, trailing zeros off.
pub fn p_text(p: f64) -> String {
    if p < 0.0001 {
        return "p < 0.0001".into();
    }
    let text = format!("{p:.4}");
    format!("p = {}", text.trim_end_matches('0').trim_end_matches('.'))
}

/// `850.0 ms`, `12.5 s`.
fn duration(ms: f64) -> String {
    if ms < 1000.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{:.1} s", ms / 1000.0)
    }
}

/// `$0.0120`; a cost under $0.0001 to two significant digits (`$0.000012`), never `$0.0000`.
fn money(usd: f64) -> String {
    if usd > 0.0 && usd < 0.0001 {
        let digits = (-usd.log10()).ceil() as usize + 1;
        format!("${usd:.digits$}")
    } else {
        format!("${usd:.4}")
    }
}

pub(super) fn percent(rate: f64) -> String {
    format!("{:.1}%", rate * 100.0)
}

fn points(delta: f64) -> String {
    format!("{:.1} pp", delta * 100.0)
}

impl Confidence {
    /// `3 paired: 2 pass -> fail, 0 fail -> pass (McNemar p = 0.500)`.
    pub fn flips(&self, arrow: &str) -> String {
        format!(
            "{} paired: {} pass {arrow} fail, {} fail {arrow} pass (McNemar {})",
            self.paired,
            self.pass_to_fail,
            self.fail_to_pass,
            p_text(self.p_value)
        )
    }

    /// `-0.12 [-0.20, -0.04] over 40 cases (p = 0.004)`, or `–`.
    pub fn score_text(&self) -> String {
        match &self.score {
            Some(s) => format!(
                "{:+.3} [{:+.3}, {:+.3}] over {} cases ({})",
                s.mean,
                s.interval.low,
                s.interval.high,
                s.n,
                p_text(s.p_value)
            ),
            None => "–".into(),
        }
    }

    /// `3.0 pp (pass rate), 0.050 (score)`; for too few cases, that no pass-rate change can be
    /// significant.
    pub fn detectable_text(&self) -> String {
        let pass = match self.min_detectable_pass_rate {
            Some(m) => format!("{} (pass rate)", points(m)),
            None => format!(
                "no pass-rate change can be significant with {} paired cases",
                self.paired
            ),
        };
        match self.min_detectable_score {
            Some(m) => format!("{pass}, {m:.3} (score)"),
            None => pass,
        }
    }

    /// `calls 40 -> 40 (+0.0%), tokens 4800 -> 5200 (+8.3%), latency 10.0 s -> 16.0 s
    /// (+60.0%), cost $0.0120 -> $0.0160 (+33.3%)`: tokens, latency and cost only when a side
    /// has them; then, when a side's rubric judge made calls, each party's share (`; agent:
    /// calls 20 -> 20, ...; judge: calls 20 -> 20, tokens ..., cost ...`); `None` when neither
    /// side called a model.
    pub fn usage_text(&self, arrow: &str) -> Option<String> {
        if self.base_usage.is_none() && self.new_usage.is_none() {
            return None;
        }
        let (b, n) = (
            self.base_usage.clone().unwrap_or_default(),
            self.new_usage.clone().unwrap_or_default(),
        );
        let change = |before: f64, after: f64| {
            if before == 0.0 {
                String::new()
            } else {
                format!(" ({:+.1}%)", (after - before) / before * 100.0)
            }
        };
        let mut text = format!(
            "calls {} {arrow} {}{}",
            b.calls,
            n.calls,
            change(b.calls as f64, n.calls as f64)
        );
        let tokens = |u: &UsageTotals| (u.input_tokens + u.output_tokens) as f64;
        if tokens(&b) + tokens(&n) > 0.0 {
            let _ = write!(
                text,
                ", tokens {} {arrow} {}{}",
                tokens(&b),
                tokens(&n),
                change(tokens(&b), tokens(&n))
            );
        }
        if b.latency_ms + n.latency_ms > 0.0 {
            let _ = write!(
                text,
                ", latency {} {arrow} {}{}",
                duration(b.latency_ms),
                duration(n.latency_ms),
                change(b.latency_ms, n.latency_ms)
            );
        }
        if b.cost_usd.is_some() || n.cost_usd.is_some() {
            let (bc, nc) = (b.cost_usd.unwrap_or(0.0), n.cost_usd.unwrap_or(0.0));
            let _ = write!(
                text,
                ", cost {} {arrow} {}{}",
                money(bc),
                money(nc),
                change(bc, nc)
            );
        }
        if b.unpriced_calls + n.unpriced_calls > 0 {
            let _ = write!(
                text,
                " ({} {arrow} {} calls unpriced)",
                b.unpriced_calls, n.unpriced_calls
            );
        }
        // The rubric judge's share apart from the agent's, when either side has one.
        if b.judge.is_some() || n.judge.is_some() {
            for (who, (bs, ns)) in [
                ("agent", (b.agent_share(), n.agent_share())),
                ("judge", (b.judge_share(), n.judge_share())),
            ] {
                let _ = write!(text, "; {who}: calls {} {arrow} {}", bs.calls, ns.calls);
                let (bt, nt) = (
                    bs.input_tokens + bs.output_tokens,
                    ns.input_tokens + ns.output_tokens,
                );
                if bt + nt > 0 {
                    let _ = write!(text, ", tokens {bt} {arrow} {nt}");
                }
                if bs.cost_usd.is_some() || ns.cost_usd.is_some() {
                    let (bc, nc) = (bs.cost_usd.unwrap_or(0.0), ns.cost_usd.unwrap_or(0.0));
                    let _ = write!(text, ", cost ${bc:.4} {arrow} ${nc:.4}");
                }
            }
        }
        Some(text)
    }
}

/// The comparison's verdicts as a terminal prints them: the whole run, then each suite.
pub fn to_text(alpha: f64, overall: &Confidence, suites: &[SuiteConfidence]) -> String {
    let mut out = format!("\nsignificance at alpha {alpha} (95% intervals):\n");
    let mut block = |title: &str, c: &Confidence| {
        let _ = writeln!(out, "  {title}: {}", c.verdict);
        let _ = writeln!(
            out,
            "    pass rate {} -> {}",
            c.base.describe(),
            c.new.describe()
        );
        let _ = writeln!(out, "    {}", c.flips("->"));
        if c.score.is_some() {
            let _ = writeln!(out, "    score change {}", c.score_text());
        }
        let _ = writeln!(
            out,
            "    smallest detectable change: {}",
            c.detectable_text()
        );
        if let Some(usage) = c.usage_text("->") {
            let _ = writeln!(out, "    {usage}");
        }
    };
    block("overall", overall);
    for s in suites {
        block(
            &format!("{} ({}/{})", s.suite, s.package, s.binary),
            &s.change,
        );
    }
    out
}

/// The verdicts as a pull-request comment shows them: a table, then usage per suite.
pub fn to_markdown(
    alpha: f64,
    overall: &Confidence,
    suites: &[SuiteConfidence],
    cell: impl Fn(&str) -> String,
) -> String {
    let mut out = format!(
        "\n#### Significance (alpha {alpha}; 95% intervals)\n\n\
         | | verdict | pass rate before | pass rate now | pass → fail | fail → pass | McNemar p | score change | detectable |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---|\n"
    );
    let rows: Vec<(String, &Confidence)> = std::iter::once(("**overall**".to_string(), overall))
        .chain(suites.iter().map(|s| {
            (
                cell(&format!("{} ({}/{})", s.suite, s.package, s.binary)),
                &s.change,
            )
        }))
        .collect();
    for (title, c) in &rows {
        let verdict = match c.verdict {
            Verdict::NoSignificantChange => c.verdict.to_string(),
            v => format!("**{v}**"),
        };
        let _ = writeln!(
            out,
            "| {title} | {verdict} | {} | {} | {} | {} | {} | {} | {} |",
            c.base.describe(),
            c.new.describe(),
            c.pass_to_fail,
            c.fail_to_pass,
            p_text(c.p_value).trim_start_matches("p = "),
            c.score_text(),
            c.detectable_text()
        );
    }
    let usage: Vec<String> = rows
        .iter()
        .filter_map(|(title, c)| c.usage_text("→").map(|u| format!("- {title}: {u}\n")))
        .collect();
    if !usage.is_empty() {
        out.push_str("\nModel calls, before → now:\n\n");
        out.extend(usage);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{compare, read_view};
    use super::*;

    /// A report of suite `s` (in `dir`) whose cases pass as `verdicts` says, each scored 1 or
    /// 0, with `usage` as the suite's model calls.
    fn report(dir: &str, verdicts: &[bool], usage: serde_json::Value) -> String {
        let cases: Vec<_> = verdicts
            .iter()
            .enumerate()
            .map(|(i, &passed)| {
                serde_json::json!({
                    "package": "p", "binary": "b", "suite": dir, "suite_dir": dir,
                    "case": format!("c{i:02}"), "test": format!("{dir}::c{i:02}"),
                    "passed": passed, "score": if passed { 1.0 } else { 0.0 }
                })
            })
            .collect();
        serde_json::json!({
            "format": 1, "generated_at": "2026-01-01T00:00:00Z",
            "totals": { "usage": usage },
            "suites": [{ "suite": dir, "suite_dir": dir, "package": "p", "binary": "b",
                         "usage": usage }],
            "cases": cases
        })
        .to_string()
    }

    #[test]
    fn a_significant_regression_in_text_markdown_and_html() {
        // 8 of 20 go from pass to fail: McNemar p = 2/2^8 = 0.0078125.
        let before = report(
            "s",
            &[true; 20],
            serde_json::json!({"calls": 20, "input_tokens": 100, "output_tokens": 100, "latency_ms": 500.0}),
        );
        let mut after_verdicts = [true; 20];
        after_verdicts[..8].fill(false);
        let after = report(
            "s",
            &after_verdicts,
            serde_json::json!({"calls": 20, "input_tokens": 150, "output_tokens": 150, "latency_ms": 2500.0, "cost_usd": 0.5, "unpriced_calls": 2}),
        );
        let (b, a) = (
            read_view(before.as_bytes()).unwrap(),
            read_view(after.as_bytes()).unwrap(),
        );
        let c = compare(&b, "before", &a, "after", 0.01, 0.05);
        assert!(c.has_significant_regression());
        assert_eq!(c.overall.p_value, 0.007_812_5);
        assert_eq!((c.overall.pass_to_fail, c.overall.fail_to_pass), (8, 0));
        assert_eq!(c.suites[0].change, c.overall);
        let text = c.to_text();
        assert!(
            text.contains(
                "  overall: regressed
    pass rate 100.0% [83.9%, 100.0%] -> 60.0% [38.7%, 78.1%]
    20 paired: 8 pass -> fail, 0 fail -> pass (McNemar p = 0.0078)
"
            ),
            "{text}"
        );
        assert!(
            text.contains("    calls 20 -> 20 (+0.0%), tokens 200 -> 300 (+50.0%), latency 500.0 ms -> 2.5 s (+400.0%), cost $0.0000 -> $0.5000 (0 -> 2 calls unpriced)\n"),
            "{text}"
        );
        let md = c.to_markdown();
        assert!(md.contains("| **overall** | **regressed** | 100.0% [83.9%, 100.0%] | 60.0% [38.7%, 78.1%] | 8 | 0 | 0.0078 |"), "{md}");
        // At 0.005 the same flips are not significant.
        let strict = compare(&b, "before", &a, "after", 0.01, 0.005);
        assert!(!strict.has_significant_regression());
        assert!(strict.has_regressions());
    }

    #[test]
    fn an_improvement_and_a_suite_in_one_report_only() {
        let before = report("s", &[false; 10], serde_json::Value::Null);
        let mut after = serde_json::from_str::<serde_json::Value>(&report(
            "s",
            &[true; 10],
            serde_json::Value::Null,
        ))
        .unwrap();
        // A suite only the new report has: counted on its side, paired nowhere.
        let extra: serde_json::Value =
            serde_json::from_str(&report("t", &[true; 3], serde_json::Value::Null)).unwrap();
        after["cases"]
            .as_array_mut()
            .unwrap()
            .extend(extra["cases"].as_array().unwrap().iter().cloned());
        let after = after.to_string();
        let (b, a) = (
            read_view(before.as_bytes()).unwrap(),
            read_view(after.as_bytes()).unwrap(),
        );
        let c = compare(&b, "before", &a, "after", 0.01, 0.05);
        assert_eq!(c.overall.verdict, Verdict::Improved);
        assert_eq!(c.overall.paired, 10);
        assert_eq!(c.overall.new.cases, 13);
        let t = &c.suites[1];
        assert_eq!(
            (t.suite.as_str(), t.change.paired, t.change.base.cases),
            ("t", 0, 0)
        );
        assert_eq!(t.change.base.describe(), "–");
        assert_eq!(t.change.verdict, Verdict::NoSignificantChange);
        assert_eq!(t.change.score, None);
        assert!(t.change.usage_text("->").is_none());
        assert!(
            c.to_text().contains(
                "  t (p/b): no significant change
    pass rate – -> 100.0% [43.9%, 100.0%]
    0 paired: 0 pass -> fail, 0 fail -> pass (McNemar p = 1)
    smallest detectable change: no pass-rate change can be significant with 0 paired cases
"
            ),
            "{}",
            c.to_text()
        );
    }

    /// The judge's calls and cost are counted apart from the agent's, with the totals a run of
    /// runtime/tests/report_entries.rs gives (`check_totals`: the agent case's 1 + 3 calls, the
    /// repeated case's 3 + 3).
    #[test]
    fn the_judges_calls_and_cost_apart_from_the_agents() {
        let usage = serde_json::json!({
            "calls": 10, "input_tokens": 640, "output_tokens": 80, "latency_ms": 0.0,
            "cost_usd": 732.0,
            "agent": {"calls": 4, "input_tokens": 40, "output_tokens": 20, "cost_usd": 72.0},
            "judge": {"calls": 6, "input_tokens": 600, "output_tokens": 60, "cost_usd": 660.0},
        });
        let json = report("s", &[true; 2], usage);
        let view = read_view(json.as_bytes()).unwrap();
        let text = compare(&view, "before", &view, "after", 0.01, 0.05).to_text();
        assert!(
            text.contains("; agent: calls 4 -> 4, tokens 60 -> 60, cost $72.0000 -> $72.0000; judge: calls 6 -> 6, tokens 660 -> 660, cost $660.0000 -> $660.0000"),
            "{text}"
        );
    }

    #[test]
    fn p_values_and_durations_as_printed() {
        assert_eq!(p_text(0.0625), "p = 0.0625");
        assert_eq!(p_text(0.001_953_125), "p = 0.002");
        assert_eq!(p_text(1.0), "p = 1");
        assert_eq!(p_text(0.000_01), "p < 0.0001");
        assert_eq!(duration(850.0), "850.0 ms");
        assert_eq!(duration(12_500.0), "12.5 s");
        assert_eq!(money(0.000_012_3), "$0.000012");
        assert_eq!(money(0.000_099), "$0.000099");
        assert_eq!(money(0.0), "$0.0000");
        assert_eq!(money(0.012), "$0.0120");
    }
}
