//! Scoring: every configured field found in `expected`, compared with its counterpart in
//! `actual`, and the hits' weights made into one score and a verdict.

use super::config::{Aggregation, FieldAccuracyConfig, MatchKind, SCORE_EPSILON};
use super::matchers::{compare_field, Detail};
use super::text::{fmt_num, push_apart_failed, push_digits, push_fixed};
use crate::path::Location;
use serde_json::Value;
use std::fmt::Write as _;
use std::sync::Arc;

/// A field that matched.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldHit {
    /// Where the field is, in the path grammar (shared with the config for a wildcard-free path).
    pub path: Arc<Location>,
    /// How it was compared.
    pub match_kind: MatchKind,
    /// The expected value.
    pub expected: Value,
    /// The actual value.
    pub actual: Value,
    /// The field's weight.
    pub weight: f64,
    detail: Detail,
}

impl FieldHit {
    /// How close it was: `"equal"`, `"diff 0.004 within tolerance 0.01"`, `"similarity 0.91 ≥ 0.85"`.
    ///
    /// Written on request rather than while scoring: hits are the passing path, and most are
    /// never printed.
    ///
    /// ```
    /// use proposal_eval_engine::accuracy::{evaluate, FieldAccuracyConfig, FieldSpec};
    /// use serde_json::json;
    /// let config = FieldAccuracyConfig::new().field(FieldSpec::numeric_tolerance("total", 0.01));
    /// let verdict = evaluate(&json!({"total": 10}), &json!({"total": 10.004}), &config);
    /// assert_eq!(verdict.hits[0].detail(), "diff 0.004 within tolerance 0.01");
    /// ```
    pub fn detail(&self) -> String {
        self.detail.to_string()
    }
}

/// A field that did not match, with why.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldMiss {
    /// Where the field is, in the path grammar (shared with the config for a wildcard-free path).
    pub path: Arc<Location>,
    /// How it was compared.
    pub match_kind: MatchKind,
    /// The expected value.
    pub expected: Value,
    /// The actual value, `None` when it is missing.
    pub actual: Option<Value>,
    /// The field's weight.
    pub weight: f64,
    /// Why it missed: `"outside tolerance 0.01 (diff 0.02)"`, `"missing (required)"`,
    /// `"similarity 0.62 < 0.85"`.
    pub why: String,
}

/// A configured field that was not counted, with why.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldSkip {
    /// The field: its location, or the pattern when nothing in `expected` matched it.
    pub path: String,
    /// How it would have been compared.
    pub match_kind: MatchKind,
    /// The expected value, when there is one.
    pub expected: Option<Value>,
    /// `"absent from expected"` or `"optional, absent from actual"`.
    pub why: String,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Row {
    Hit(usize),
    Miss(usize),
    Skip(usize),
}

/// The result of [`evaluate`].
#[derive(Clone, Debug, PartialEq)]
pub struct AccuracyVerdict {
    /// The score, within 0..=1.
    pub score: f64,
    /// Whether `score >= threshold`.
    pub passed: bool,
    /// The fields that matched, in config order.
    pub hits: Vec<FieldHit>,
    /// Every field that did not match, in config order (never capped).
    pub misses: Vec<FieldMiss>,
    /// The configured fields that were not counted.
    pub skipped: Vec<FieldSkip>,
    /// One line: `"5/6 fields matched, score 0.83 ≥ 0.75"`.
    pub reasoning: String,
    /// Every configured field's outcome in config order, for the table in `render`.
    pub(super) rows: Vec<Row>,
}

/// Scores `actual` against `expected` field by field.
///
/// ```
/// use proposal_eval_engine::accuracy::{evaluate, FieldAccuracyConfig, FieldSpec};
/// use serde_json::json;
/// let config = FieldAccuracyConfig::new()
///     .field(FieldSpec::numeric_tolerance("total", 0.01))
///     .field(FieldSpec::exact("po").optional());
/// let verdict = evaluate(&json!({"total": 10.0, "po": "A1"}), &json!({"total": 10.02}), &config);
/// assert!(!verdict.passed);
/// assert_eq!(verdict.misses[0].why, "outside tolerance 0.01 (diff 0.02)");
/// assert_eq!(verdict.skipped[0].why, "optional, absent from actual");
/// ```
pub fn evaluate(expected: &Value, actual: &Value, config: &FieldAccuracyConfig) -> AccuracyVerdict {
    // Sized for the common case, every field present and matching; misses are the failure path.
    let mut hits = Vec::with_capacity(config.fields.len());
    let mut misses = Vec::new();
    let mut skipped = Vec::new();
    let mut rows = Vec::with_capacity(config.fields.len());
    let mut present_in_expected = 0usize;
    for spec in &config.fields {
        let kind = spec.matcher.kind();
        // A wildcard-free path is looked up once per document and its location shared; only a
        // wildcard builds locations, one per match.
        let mut score = |location: Arc<Location>, e: &Value| {
            present_in_expected += 1;
            match location.get(actual) {
                None if spec.required => {
                    rows.push(Row::Miss(misses.len()));
                    misses.push(FieldMiss {
                        path: location,
                        match_kind: kind,
                        expected: e.clone(),
                        actual: None,
                        weight: spec.weight,
                        why: "missing (required)".to_string(),
                    });
                }
                None => {
                    rows.push(Row::Skip(skipped.len()));
                    skipped.push(FieldSkip {
                        path: location.to_string(),
                        match_kind: kind,
                        expected: Some(e.clone()),
                        why: "optional, absent from actual".to_string(),
                    });
                }
                Some(a) => match compare_field(spec, e, a) {
                    Ok(detail) => {
                        rows.push(Row::Hit(hits.len()));
                        hits.push(FieldHit {
                            path: location,
                            match_kind: kind,
                            expected: e.clone(),
                            actual: a.clone(),
                            weight: spec.weight,
                            detail,
                        });
                    }
                    Err(why) => {
                        rows.push(Row::Miss(misses.len()));
                        misses.push(FieldMiss {
                            path: location,
                            match_kind: kind,
                            expected: e.clone(),
                            actual: Some(a.clone()),
                            weight: spec.weight,
                            why,
                        });
                    }
                },
            }
        };
        let found = match spec.location() {
            Some(location) => match location.get(expected) {
                Some(e) => {
                    score(location, e);
                    true
                }
                None => false,
            },
            None => {
                let locations = spec.path.find(expected);
                let found = !locations.is_empty();
                for location in locations {
                    if let Some(e) = location.get(expected) {
                        score(Arc::new(location), e);
                    }
                }
                found
            }
        };
        if !found {
            rows.push(Row::Skip(skipped.len()));
            skipped.push(FieldSkip {
                path: spec.path.as_str().to_string(),
                match_kind: kind,
                expected: None,
                why: "absent from expected".to_string(),
            });
        }
    }
    let (score, passed, reasoning) = aggregate(config, &hits, &misses, present_in_expected);
    AccuracyVerdict {
        score,
        passed,
        hits,
        misses,
        skipped,
        reasoning,
        rows,
    }
}

fn aggregate(
    config: &FieldAccuracyConfig,
    hits: &[FieldHit],
    misses: &[FieldMiss],
    present_in_expected: usize,
) -> (f64, bool, String) {
    let counted = hits.len() + misses.len();
    if counted == 0 {
        if config.fields.is_empty() {
            return (
                0.0,
                false,
                "no field checked: [field_accuracy] lists no fields".to_string(),
            );
        }
        if present_in_expected == 0 {
            let paths: Vec<&str> = config.fields.iter().map(|f| f.path.as_str()).collect();
            return (
                0.0,
                false,
                format!(
                    "no field checked: none of the configured paths ({}) is present in expected; check the paths against the case's `expected`",
                    paths.join(", ")
                ),
            );
        }
        return (
            1.0,
            config.threshold <= 1.0,
            "no field counted: every field present in expected is optional and absent from actual, score 1".to_string(),
        );
    }
    // `+ 0.0`: a sum of no weights is -0.0, which would print as a score of `-0.00`. The miss
    // weight needs none: it is only ever added to the hit weight, and x + -0.0 is x.
    let hit_weight: f64 = hits.iter().map(|h| h.weight).sum::<f64>() + 0.0;
    let miss_weight: f64 = misses.iter().map(|m| m.weight).sum();
    let score = match config.aggregation {
        Aggregation::WeightedAverage => (hit_weight / (hit_weight + miss_weight)).clamp(0.0, 1.0),
        Aggregation::AllOrNothing => {
            if misses.is_empty() {
                1.0
            } else {
                0.0
            }
        }
    };
    let passed = score + SCORE_EPSILON >= config.threshold;
    let mut reasoning = String::with_capacity(64);
    // Counts without `write!` (and the score below without `format!`): every verdict has this
    // line, and on a one-field config the formatting machinery would cost more than the field.
    push_digits(&mut reasoning, hits.len());
    reasoning.push('/');
    push_digits(&mut reasoning, counted);
    reasoning.push_str(" fields matched");
    let uniform = hits
        .iter()
        .map(|h| h.weight)
        .chain(misses.iter().map(|m| m.weight))
        .all(|w| w == 1.0);
    if config.aggregation == Aggregation::WeightedAverage && !uniform {
        let _ = write!(
            reasoning,
            " (weight {}/{})",
            fmt_num(hit_weight),
            fmt_num(hit_weight + miss_weight)
        );
    }
    if config.aggregation == Aggregation::AllOrNothing {
        reasoning.push_str(", all or nothing");
    }
    reasoning.push_str(", score ");
    if passed {
        push_fixed(&mut reasoning, score, 2);
        reasoning.push_str(" ≥ ");
        push_fixed(&mut reasoning, config.threshold, 2);
    } else {
        push_apart_failed(&mut reasoning, score, " < ", config.threshold);
    }
    (score, passed, reasoning)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accuracy::{Aggregation, FieldSpec};
    use crate::path::Pattern;
    use serde_json::json;

    /// No hit scores 0, not -0 (a sum of no weights is -0.0 in floating point).
    #[test]
    fn no_hit_scores_a_positive_zero() {
        let config = FieldAccuracyConfig::new().field(FieldSpec::exact("a"));
        let v = evaluate(&json!({"a": 1}), &json!({"a": 2}), &config);
        assert_eq!(v.score, 0.0);
        assert!(v.score.is_sign_positive());
        assert_eq!(v.reasoning, "0/1 fields matched, score 0.00 < 1.00");
    }

    /// A wildcard field counts each place it finds in expected, and is "absent from expected"
    /// only when it finds none.
    #[test]
    fn a_wildcard_field_is_absent_only_when_it_finds_nothing() {
        let config = FieldAccuracyConfig::new().field(FieldSpec::exact("items[*].sku"));
        let expected = json!({"items": [{"sku": "A"}, {"sku": "B"}]});
        let v = evaluate(
            &expected,
            &json!({"items": [{"sku": "A"}, {"sku": "C"}]}),
            &config,
        );
        assert_eq!((v.hits.len(), v.misses.len()), (1, 1));
        assert!(v.skipped.is_empty(), "{:?}", v.skipped);
        let v = evaluate(&json!({"items": []}), &json!({"items": []}), &config);
        assert_eq!(v.skipped.len(), 1);
        assert_eq!(v.skipped[0].why, "absent from expected");
        assert_eq!(v.skipped[0].path, "items[*].sku");
    }

    #[test]
    fn aggregation_arithmetic() {
        let expected = json!({"a": 1, "b": 2, "c": 3, "d": 4});
        let actual = json!({"a": 1, "b": 2, "c": 0, "d": 0});
        let config = FieldAccuracyConfig::new()
            .threshold(0.5)
            .field(FieldSpec::exact("a").weight(3.0))
            .field(FieldSpec::exact("b"))
            .field(FieldSpec::exact("c").weight(2.0))
            .field(FieldSpec::exact("d").weight(2.0));
        let v = evaluate(&expected, &actual, &config);
        // (3 + 1) / (3 + 1 + 2 + 2) = 0.5
        assert_eq!(v.score, 0.5);
        assert!(v.passed);
        assert_eq!(
            v.reasoning,
            "2/4 fields matched (weight 4/8), score 0.50 ≥ 0.50"
        );
        assert_eq!((v.hits.len(), v.misses.len()), (2, 2));

        let config = config.threshold(0.51);
        let v = evaluate(&expected, &actual, &config);
        assert!(!v.passed);
        assert_eq!(
            v.reasoning,
            "2/4 fields matched (weight 4/8), score 0.50 < 0.51"
        );

        let config = FieldAccuracyConfig::new()
            .aggregation(Aggregation::AllOrNothing)
            .field(FieldSpec::exact("a"))
            .field(FieldSpec::exact("c"));
        let v = evaluate(&expected, &actual, &config);
        assert_eq!(v.score, 0.0);
        assert_eq!(
            v.reasoning,
            "1/2 fields matched, all or nothing, score 0.00 < 1.00"
        );
        let v = evaluate(&expected, &expected, &config);
        assert_eq!(v.score, 1.0);
        assert!(v.passed);

        // 5 of 6 at threshold 0.75, the reasoning of the issue.
        let mut config = FieldAccuracyConfig::new().threshold(0.75);
        for k in ["a", "b", "c", "d", "e", "f"] {
            config = config.field(FieldSpec::exact(k));
        }
        let e = json!({"a": 1, "b": 1, "c": 1, "d": 1, "e": 1, "f": 1});
        let a = json!({"a": 1, "b": 1, "c": 1, "d": 1, "e": 1, "f": 2});
        let v = evaluate(&e, &a, &config);
        assert_eq!(v.reasoning, "5/6 fields matched, score 0.83 ≥ 0.75");
        assert!((v.score - 5.0 / 6.0).abs() < 1e-15);
    }

    #[test]
    fn weights_that_do_not_add_up_in_binary_still_pass() {
        let config = FieldAccuracyConfig::new()
            .field(FieldSpec::exact("a").weight(0.1))
            .field(FieldSpec::exact("b").weight(0.2))
            .field(FieldSpec::exact("c").weight(0.7));
        let doc = json!({"a": 1, "b": 2, "c": 3});
        let v = evaluate(&doc, &doc, &config);
        assert!(v.passed, "{}", v.reasoning);
    }

    #[test]
    fn absence_rules() {
        let config = FieldAccuracyConfig::new()
            .field(FieldSpec::exact("required"))
            .field(FieldSpec::exact("optional").optional())
            .field(FieldSpec::exact("not_in_expected"))
            .field(FieldSpec::exact("nulls"));
        let expected = json!({"required": 1, "optional": 2, "nulls": null});
        let actual = json!({"not_in_expected": 9, "nulls": null});
        let v = evaluate(&expected, &actual, &config);
        assert_eq!(v.misses.len(), 1);
        assert_eq!(v.misses[0].why, "missing (required)");
        assert_eq!(v.misses[0].actual, None);
        assert_eq!(v.hits.len(), 1, "null equals null");
        assert_eq!(v.skipped.len(), 2);
        assert_eq!(v.skipped[0].why, "optional, absent from actual");
        assert_eq!(v.skipped[1].why, "absent from expected");
        assert_eq!(v.score, 0.5);
        assert_eq!(v.reasoning, "1/2 fields matched, score 0.50 < 1.00");
    }

    #[test]
    fn no_hit_is_a_score_of_plain_zero() {
        let config = FieldAccuracyConfig::new()
            .field(FieldSpec::exact("a").weight(2.0))
            .field(FieldSpec::exact("b"));
        let v = evaluate(&json!({"a": 1, "b": 2}), &json!({"a": 0, "b": 0}), &config);
        assert!(v.score == 0.0 && v.score.is_sign_positive(), "{}", v.score);
        assert_eq!(
            v.reasoning,
            "0/2 fields matched (weight 0/3), score 0.00 < 1.00"
        );
    }

    #[test]
    fn nothing_counted() {
        let config = FieldAccuracyConfig::new().field(FieldSpec::exact("invoce.total"));
        let v = evaluate(&json!({"invoice": {"total": 1}}), &json!({}), &config);
        assert!(!v.passed);
        assert_eq!(v.score, 0.0);
        assert!(
            v.reasoning
                .contains("none of the configured paths (invoce.total)"),
            "{}",
            v.reasoning
        );

        let v = evaluate(&json!({}), &json!({}), &FieldAccuracyConfig::new());
        assert!(!v.passed);
        assert!(v.reasoning.contains("lists no fields"));

        let config = FieldAccuracyConfig::new().field(FieldSpec::exact("po").optional());
        let v = evaluate(&json!({"po": "A"}), &json!({}), &config);
        assert!(v.passed);
        assert_eq!(v.score, 1.0);
    }

    #[test]
    fn wildcards_expand_over_expected() {
        let config =
            FieldAccuracyConfig::new().field(FieldSpec::numeric_tolerance("items[*].amount", 0.01));
        let expected =
            json!({"items": [{"amount": 1}, {"amount": 2}, {"sku": "x"}, {"amount": 3}]});
        let actual = json!({"items": [{"amount": 1}, {"amount": 2.5}, {}, {}]});
        let v = evaluate(&expected, &actual, &config);
        let missed: Vec<String> = v
            .misses
            .iter()
            .map(|m| format!("{}: {}", m.path, m.why))
            .collect();
        assert_eq!(
            missed,
            [
                "items[1].amount: outside tolerance 0.01 (diff 0.5)",
                "items[3].amount: missing (required)"
            ]
        );
        assert_eq!(v.hits[0].path.to_string(), "items[0].amount");
        assert!((v.score - 1.0 / 3.0).abs() < 1e-15);
    }

    #[test]
    fn a_replaced_path_is_not_shadowed_by_the_cached_one() {
        let mut spec = FieldSpec::exact("a");
        spec.path = Pattern::parse("b").unwrap();
        let config = FieldAccuracyConfig::new().field(spec);
        let v = evaluate(&json!({"a": 1, "b": 2}), &json!({"a": 1, "b": 3}), &config);
        assert_eq!(v.misses[0].path.to_string(), "b");
        // Replaced by a shorter path that the old one starts with, and by another index: the
        // cached location would be scored instead (another path, or no difference at all).
        for (old, new, expected, actual) in [
            ("a.x", "a", json!({"a": {"x": 1}}), json!({"a": {"x": 2}})),
            ("a[0]", "a[1]", json!({"a": [1, 2]}), json!({"a": [1, 3]})),
        ] {
            let mut spec = FieldSpec::exact(old);
            spec.path = Pattern::parse(new).unwrap();
            let config = FieldAccuracyConfig::new().field(spec);
            let v = evaluate(&expected, &actual, &config);
            assert_eq!(v.misses.len(), 1, "{new}");
            assert_eq!(v.misses[0].path.to_string(), new);
        }
    }
}
