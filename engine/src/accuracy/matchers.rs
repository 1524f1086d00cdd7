//! Comparing one field: the four matchers, arrays in order or in any order, and why a field
//! missed.

use super::config::{ArrayMatch, FieldSpec, Matcher, SCORE_EPSILON};
use super::text::{brief, fmt_num, push_apart_failed};
use crate::assignment::assign;
use crate::dates::{read_date, DateError, DateFormat};
use crate::fuzzy::Algorithm;
use crate::json::type_name;
use crate::numbers::read_number;
use chrono::NaiveDate;
use serde_json::Value;
use std::borrow::Cow;
use std::fmt::{self, Write as _};

/// What a hit's [`FieldHit::detail`](super::FieldHit::detail) says, kept as numbers until someone asks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Detail {
    Equal,
    WithinTolerance { diff: f64, tolerance: f64 },
    WithinRelative { rel: f64, tolerance: f64 },
    SameDate(NaiveDate),
    Similar { similarity: f64, threshold: f64 },
    AllElements(usize),
    AllElementsAnyOrder(usize),
}

impl fmt::Display for Detail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Detail::Equal => f.write_str("equal"),
            Detail::WithinTolerance { diff, tolerance } => write!(
                f,
                "diff {} within tolerance {}",
                fmt_num(diff),
                fmt_num(tolerance)
            ),
            Detail::WithinRelative { rel, tolerance } => write!(
                f,
                "relative diff {} within {}",
                fmt_num(rel),
                fmt_num(tolerance)
            ),
            Detail::SameDate(date) => write!(f, "same date {date}"),
            Detail::Similar {
                similarity,
                threshold,
            } => write!(f, "similarity {similarity:.2} ≥ {threshold:.2}"),
            Detail::AllElements(n) => write!(f, "all {n} elements match"),
            Detail::AllElementsAnyOrder(n) => write!(f, "all {n} elements match (any order)"),
        }
    }
}

/// Why a scalar missed, kept as numbers where writing it costs most: `any_order` compares every
/// pair of elements and throws the misses away, so only a miss that is recorded gets written.
enum Why {
    Written(String),
    OutsideTolerance { tolerance: f64, diff: f64 },
    OutsideRelative { tolerance: f64, rel: f64 },
    DatesDiffer(NaiveDate, NaiveDate),
    Dissimilar { similarity: f64, threshold: f64 },
}

impl Why {
    fn written(self) -> String {
        match self {
            Why::Written(why) => why,
            Why::OutsideTolerance { tolerance, diff } => format!(
                "outside tolerance {} (diff {})",
                fmt_num(tolerance),
                fmt_num(diff)
            ),
            Why::OutsideRelative { tolerance, rel } => format!(
                "outside relative tolerance {} (relative diff {})",
                fmt_num(tolerance),
                fmt_num(rel)
            ),
            Why::DatesDiffer(x, y) => format!("dates differ: expected {x}, actual {y}"),
            Why::Dissimilar {
                similarity,
                threshold,
            } => {
                // Room for the longest usual message, `similarity 0.849999 < 0.85`: one
                // allocation.
                let mut why = String::with_capacity(32);
                why.push_str("similarity ");
                push_apart_failed(&mut why, similarity, " < ", threshold);
                why
            }
        }
    }
}

pub(crate) fn compare_field(spec: &FieldSpec, e: &Value, a: &Value) -> Result<Detail, String> {
    if let Matcher::Exact = spec.matcher {
        return compare_exact(spec, e, a);
    }
    match (e, a) {
        (Value::Array(es), Value::Array(as_)) => match spec.array_match {
            ArrayMatch::Ordered => {
                if es.len() != as_.len() {
                    return Err(format!(
                        "{} elements expected, {} actual",
                        es.len(),
                        as_.len()
                    ));
                }
                for (i, (x, y)) in es.iter().zip(as_).enumerate() {
                    compare_scalar(spec, x, y)
                        .map_err(|why| format!("[{i}]: {}", why.written()))?;
                }
                Ok(Detail::AllElements(es.len()))
            }
            ArrayMatch::AnyOrder => any_order(es, as_, |x, y| compare_scalar(spec, x, y).is_ok()),
        },
        _ => compare_scalar(spec, e, a).map_err(Why::written),
    }
}

/// Whether a field matches, without writing why it does not (for callers that only ask).
pub(crate) fn field_holds(spec: &FieldSpec, e: &Value, a: &Value) -> bool {
    match (e, a, &spec.matcher) {
        (_, _, Matcher::Exact) | (Value::Array(_), Value::Array(_), _) => {
            compare_field(spec, e, a).is_ok()
        }
        _ => compare_scalar(spec, e, a).is_ok(),
    }
}

fn compare_scalar(spec: &FieldSpec, e: &Value, a: &Value) -> Result<Detail, Why> {
    match &spec.matcher {
        Matcher::Exact => compare_exact(spec, e, a).map_err(Why::Written),
        Matcher::NumericTolerance {
            tolerance,
            relative,
        } => compare_numeric(*tolerance, *relative, e, a),
        Matcher::Date { formats } => compare_date(formats, e, a),
        Matcher::Fuzzy {
            algorithm,
            threshold,
        } => compare_fuzzy(spec, *algorithm, *threshold, e, a),
    }
}

fn compare_exact(spec: &FieldSpec, e: &Value, a: &Value) -> Result<Detail, String> {
    if let (ArrayMatch::AnyOrder, Value::Array(es), Value::Array(as_)) = (spec.array_match, e, a) {
        return any_order(es, as_, |x, y| {
            first_difference(spec, x, y, &mut String::new()).is_none()
        });
    }
    let mut at = String::new();
    match first_difference(spec, e, a, &mut at) {
        None => Ok(Detail::Equal),
        Some(what) if at.is_empty() => Err(what),
        Some(what) => Err(format!("at {at}: {what}")),
    }
}

/// The first place where `e` and `a` differ, as a relative path written into `at` and a
/// description; `None` when they are equal.
fn first_difference(spec: &FieldSpec, e: &Value, a: &Value, at: &mut String) -> Option<String> {
    match (e, a) {
        (Value::Number(x), Value::Number(y)) => {
            let equal = match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
                (Some(p), Some(q), _, _) => p == q,
                (_, _, Some(p), Some(q)) => p == q,
                _ => x.as_f64() == y.as_f64(),
            };
            (!equal).then(|| format!("expected {x}, actual {y}"))
        }
        (Value::String(x), Value::String(y)) => (!strings_equal(spec, x, y))
            .then(|| format!("expected {}, actual {}", brief(e), brief(a))),
        (Value::Array(xs), Value::Array(ys)) => {
            for (i, (x, y)) in xs.iter().zip(ys).enumerate() {
                let len = at.len();
                let _ = write!(at, "[{i}]");
                if let Some(what) = first_difference(spec, x, y, at) {
                    return Some(what);
                }
                at.truncate(len);
            }
            (xs.len() != ys.len())
                .then(|| format!("{} elements expected, {} actual", xs.len(), ys.len()))
        }
        (Value::Object(xs), Value::Object(ys)) => {
            for (k, x) in xs {
                let len = at.len();
                push_key(at, k);
                let Some(y) = ys.get(k) else {
                    return Some("missing in actual".to_string());
                };
                if let Some(what) = first_difference(spec, x, y, at) {
                    return Some(what);
                }
                at.truncate(len);
            }
            if let Some(k) = ys.keys().find(|k| !xs.contains_key(*k)) {
                push_key(at, k);
                return Some("extra in actual".to_string());
            }
            None
        }
        _ if e == a => None,
        _ if std::mem::discriminant(e) != std::mem::discriminant(a) => Some(format!(
            "type differs: expected {} {}, actual {} {}",
            type_name(e),
            brief(e),
            type_name(a),
            brief(a)
        )),
        _ => Some(format!("expected {}, actual {}", brief(e), brief(a))),
    }
}

/// Appends one key to a relative path in the path grammar.
fn push_key(at: &mut String, key: &str) {
    let start = at.len();
    let _ = crate::path::write_segments(at, &[crate::path::Segment::Key(key.to_string())]);
    if start > 0 && !at[start..].starts_with('[') {
        at.insert(start, '.');
    }
}

fn strings_equal(spec: &FieldSpec, x: &str, y: &str) -> bool {
    let eq = |p: &str, q: &str| {
        if !spec.ignore_case {
            p == q
        } else if p.is_ascii() && q.is_ascii() {
            p.eq_ignore_ascii_case(q)
        } else {
            p.chars()
                .flat_map(char::to_lowercase)
                .eq(q.chars().flat_map(char::to_lowercase))
        }
    };
    if spec.normalize_whitespace {
        let mut xs = x.split_whitespace();
        let mut ys = y.split_whitespace();
        loop {
            match (xs.next(), ys.next()) {
                (None, None) => return true,
                (Some(p), Some(q)) if eq(p, q) => {}
                _ => return false,
            }
        }
    } else {
        eq(x, y)
    }
}

/// Arrays as multisets: equal length, and a perfect one-to-one assignment of matching pairs
/// (an optimal assignment, so a non-transitive matcher such as a tolerance is still paired right).
fn any_order(
    es: &[Value],
    as_: &[Value],
    matches: impl Fn(&Value, &Value) -> bool,
) -> Result<Detail, String> {
    if es.len() != as_.len() {
        return Err(format!(
            "{} elements expected, {} actual (any order)",
            es.len(),
            as_.len()
        ));
    }
    let n = es.len();
    let cost: Vec<Vec<usize>> = es
        .iter()
        .map(|x| as_.iter().map(|y| usize::from(!matches(x, y))).collect())
        .collect();
    let unmatched: Vec<usize> = assign(&cost)
        .into_iter()
        .filter(|&(i, j)| cost[i][j] != 0)
        .map(|(i, _)| i)
        .collect();
    if unmatched.is_empty() {
        return Ok(Detail::AllElementsAnyOrder(n));
    }
    let listed: Vec<String> = unmatched
        .iter()
        .map(|i| format!("[{i}] {}", brief(&es[*i])))
        .collect();
    Err(format!(
        "{} of {n} expected elements have no match in actual (any order): {}",
        unmatched.len(),
        listed.join(", ")
    ))
}

/// A number, or a string that holds one by the rule of [`crate::numbers`].
fn as_number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => read_number(s),
        _ => None,
    }
}

fn compare_numeric(tolerance: f64, relative: bool, e: &Value, a: &Value) -> Result<Detail, Why> {
    let Some(x) = as_number(e) else {
        return Err(Why::Written(format!(
            "expected {} is not a number",
            brief(e)
        )));
    };
    let Some(y) = as_number(a) else {
        return Err(Why::Written(format!("actual {} is not a number", brief(a))));
    };
    let diff = (y - x).abs();
    // Differences within a few units of floating-point rounding of the operands are zero:
    // 100.01 - 100 is 0.010000000000005116 in binary, and must be within a tolerance of 0.01.
    let slack = 4.0 * f64::EPSILON * x.abs().max(y.abs()).max(tolerance);
    if relative && x != 0.0 {
        let allowed = tolerance * x.abs();
        let rel = diff / x.abs();
        if diff <= allowed + slack {
            Ok(if diff <= slack {
                Detail::Equal
            } else {
                Detail::WithinRelative { rel, tolerance }
            })
        } else {
            Err(Why::OutsideRelative { tolerance, rel })
        }
    } else if diff <= tolerance + slack {
        Ok(if diff <= slack {
            Detail::Equal
        } else {
            Detail::WithinTolerance { diff, tolerance }
        })
    } else {
        Err(Why::OutsideTolerance { tolerance, diff })
    }
}

fn compare_date(formats: &[DateFormat], e: &Value, a: &Value) -> Result<Detail, Why> {
    let read = |v: &Value, side: &str| -> Result<NaiveDate, Why> {
        let Value::String(s) = v else {
            return Err(Why::Written(format!(
                "{side} {} is not a date string",
                brief(v)
            )));
        };
        read_date(s, formats).map_err(|err| {
            Why::Written(match err {
                err @ DateError::NotACalendarDate { .. } => format!("{side} {} {err}", brief(v)),
                DateError::NoFormat => {
                    let list = if formats.is_empty() {
                        "the default formats".to_string()
                    } else {
                        let names: Vec<&str> = formats.iter().map(DateFormat::as_str).collect();
                        format!("{} (then YYYY-MM-DD)", names.join(", "))
                    };
                    format!("{side} {} is not a date in {list}", brief(v))
                }
            })
        })
    };
    let x = read(e, "expected")?;
    let y = read(a, "actual")?;
    if x == y {
        Ok(Detail::SameDate(x))
    } else {
        Err(Why::DatesDiffer(x, y))
    }
}

/// The longest string folded on the stack; field values are mostly shorter.
const INLINE: usize = 64;

/// A string folded for comparison: unchanged, folded into a stack buffer (ASCII up to
/// [`INLINE`] bytes, so a typical field folds without allocating), or folded into a `String`.
enum Folded<'a> {
    Same(&'a str),
    Inline([u8; INLINE], usize),
    Owned(String),
}

impl Folded<'_> {
    fn as_str(&self) -> &str {
        match self {
            Folded::Same(s) => s,
            Folded::Inline(buf, len) => {
                std::str::from_utf8(&buf[..*len]).expect("folded from ASCII")
            }
            Folded::Owned(s) => s,
        }
    }
}

/// `s` with the field's `normalize_whitespace` (words joined by one space) and `ignore_case`
/// (lowercase) applied.
fn fold<'a>(spec: &FieldSpec, s: &'a str) -> Folded<'a> {
    let lower = spec.ignore_case;
    if !spec.normalize_whitespace && !lower {
        return Folded::Same(s);
    }
    let ascii = s.is_ascii();
    // Only ASCII is cheap to check for case; other text goes through `to_lowercase`.
    if !spec.normalize_whitespace && ascii && !s.bytes().any(|b| b.is_ascii_uppercase()) {
        return Folded::Same(s);
    }
    if ascii && s.len() <= INLINE {
        let mut buf = [0u8; INLINE];
        let mut len = 0;
        let mut push = |bytes: &[u8]| {
            buf[len..len + bytes.len()].copy_from_slice(bytes);
            len += bytes.len();
        };
        if spec.normalize_whitespace {
            for (n, word) in s.split_whitespace().enumerate() {
                if n > 0 {
                    push(b" ");
                }
                push(word.as_bytes());
            }
        } else {
            push(s.as_bytes());
        }
        if lower {
            buf[..len].make_ascii_lowercase();
        }
        return Folded::Inline(buf, len);
    }
    let mut out = Cow::Borrowed(s);
    if spec.normalize_whitespace {
        let words: Vec<&str> = out.split_whitespace().collect();
        out = Cow::Owned(words.join(" "));
    }
    if lower {
        out = Cow::Owned(out.to_lowercase());
    }
    match out {
        Cow::Borrowed(s) => Folded::Same(s),
        Cow::Owned(s) => Folded::Owned(s),
    }
}

fn compare_fuzzy(
    spec: &FieldSpec,
    algorithm: Algorithm,
    threshold: f64,
    e: &Value,
    a: &Value,
) -> Result<Detail, Why> {
    let (Value::String(x), Value::String(y)) = (e, a) else {
        let (side, v) = if e.is_string() {
            ("actual", a)
        } else {
            ("expected", e)
        };
        return Err(Why::Written(format!("{side} {} is not a string", brief(v))));
    };
    let similarity = algorithm.similarity(fold(spec, x).as_str(), fold(spec, y).as_str());
    if similarity + SCORE_EPSILON >= threshold {
        Ok(Detail::Similar {
            similarity,
            threshold,
        })
    } else {
        Err(Why::Dissimilar {
            similarity,
            threshold,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accuracy::{evaluate, AccuracyVerdict, FieldAccuracyConfig};
    use serde_json::json;

    fn one(spec: FieldSpec, e: Value, a: Value) -> AccuracyVerdict {
        let config = FieldAccuracyConfig::new().field(spec);
        evaluate(&json!({ "f": e }), &json!({ "f": a }), &config)
    }

    fn hit(spec: FieldSpec, e: Value, a: Value) {
        let v = one(spec, e.clone(), a.clone());
        assert!(v.passed, "{e} vs {a}: {:?}", v.misses);
    }

    fn miss(spec: FieldSpec, e: Value, a: Value) -> String {
        let v = one(spec, e.clone(), a.clone());
        assert!(!v.passed, "{e} vs {a} should miss: {:?}", v.hits);
        v.misses[0].why.clone()
    }

    fn date(e: &str, a: &str, formats: &[&str]) -> bool {
        let spec = if formats.is_empty() {
            FieldSpec::date("f")
        } else {
            FieldSpec::date("f").formats(formats)
        };
        one(spec, json!(e), json!(a)).passed
    }

    /// Integers compare exactly, also where `f64` cannot tell them apart (beyond 2^53), and a
    /// difference of the same type names the two values, not a type.
    #[test]
    fn exact_integers_beyond_f64_and_same_type_differences() {
        hit(FieldSpec::exact("f"), json!(u64::MAX), json!(u64::MAX));
        hit(FieldSpec::exact("f"), json!(i64::MIN), json!(i64::MIN));
        assert_eq!(
            miss(FieldSpec::exact("f"), json!(u64::MAX), json!(u64::MAX - 1)),
            format!("expected {}, actual {}", u64::MAX, u64::MAX - 1)
        );
        assert_eq!(
            miss(FieldSpec::exact("f"), json!(i64::MIN), json!(i64::MIN + 1)),
            format!("expected {}, actual {}", i64::MIN, i64::MIN + 1)
        );
        assert_eq!(
            miss(FieldSpec::exact("f"), json!(true), json!(false)),
            "expected true, actual false"
        );
    }

    #[test]
    fn exact_is_deep_equality_with_numbers_by_value() {
        hit(FieldSpec::exact("f"), json!("INV-1"), json!("INV-1"));
        hit(FieldSpec::exact("f"), json!(1500), json!(1500.0));
        hit(
            FieldSpec::exact("f"),
            json!({"a": [1, {"b": null}]}),
            json!({"a": [1, {"b": null}]}),
        );
        assert_eq!(
            miss(FieldSpec::exact("f"), json!(120), json!("120")),
            "type differs: expected number 120, actual string \"120\""
        );
        assert_eq!(
            miss(
                FieldSpec::exact("f"),
                json!({"a": [1, {"b": 2}]}),
                json!({"a": [1, {"b": 3}]})
            ),
            "at a[1].b: expected 2, actual 3"
        );
        assert_eq!(
            miss(
                FieldSpec::exact("f"),
                json!({"a": 1}),
                json!({"a": 1, "z": 2})
            ),
            "at z: extra in actual"
        );
        assert_eq!(
            miss(FieldSpec::exact("f"), json!([1, 2]), json!([2, 1])),
            "at [0]: expected 1, actual 2"
        );
        assert_eq!(
            miss(FieldSpec::exact("f"), json!([1, 2]), json!([1])),
            "2 elements expected, 1 actual"
        );
        // u64 beyond i64 and exact big integers are not rounded through f64.
        miss(
            FieldSpec::exact("f"),
            json!(9007199254740993u64),
            json!(9007199254740992u64),
        );
    }

    #[test]
    fn exact_folding_options() {
        miss(
            FieldSpec::exact("f"),
            json!("Acme  GmbH"),
            json!("acme gmbh"),
        );
        hit(
            FieldSpec::exact("f").ignore_case().normalize_whitespace(),
            json!("Acme  GmbH"),
            json!(" acme gmbh\n"),
        );
        hit(
            FieldSpec::exact("f").ignore_case(),
            json!("MÜLLER"),
            json!("müller"),
        );
        miss(
            FieldSpec::exact("f").ignore_case(),
            json!("a b"),
            json!("a  b"),
        );
        hit(
            FieldSpec::exact("f").ignore_case(),
            json!({"k": ["X"]}),
            json!({"k": ["x"]}),
        );
        // Unicode lower case, also when only one side is ASCII: the Kelvin sign is `k`.
        hit(
            FieldSpec::exact("f").ignore_case(),
            json!("\u{212A}elvin"),
            json!("kelvin"),
        );
        // Runs of whitespace are one, but the words still have to be equal.
        miss(
            FieldSpec::exact("f").normalize_whitespace(),
            json!("acme  gmbh"),
            json!("acme corp"),
        );
        miss(
            FieldSpec::exact("f").normalize_whitespace(),
            json!("acme gmbh"),
            json!("acme gmbh ltd"),
        );
    }

    #[test]
    fn exact_any_order_is_a_multiset() {
        let spec = || FieldSpec::exact("f").any_order();
        hit(
            spec(),
            json!([{"sku": 1}, {"sku": 2}, 3]),
            json!([3, {"sku": 2}, {"sku": 1}]),
        );
        hit(spec(), json!([1, 1, 2]), json!([1, 2, 1]));
        let why = miss(spec(), json!([1, 1, 2]), json!([1, 2, 2]));
        assert_eq!(
            why,
            "1 of 3 expected elements have no match in actual (any order): [1] 1"
        );
        assert_eq!(
            miss(spec(), json!([1, 2]), json!([1, 2, 3])),
            "2 elements expected, 3 actual (any order)"
        );
    }

    #[test]
    fn any_order_finds_the_optimal_assignment() {
        // Greedy would pair 10.0 with 10.4 and leave 10.9 unmatched; the assignment exists.
        let spec = FieldSpec::numeric_tolerance("f", 0.5).any_order();
        hit(spec, json!([10.0, 10.5]), json!([10.4, 10.9]));
    }

    #[test]
    fn any_order_is_invariant_under_permutation() {
        let expected = [1.0, 1.2, 2.0, 2.1, 5.0, 9.0];
        let actual = [1.1, 1.3, 2.05, 7.0, 5.2, 9.0];
        let spec = || FieldSpec::numeric_tolerance("f", 0.25).any_order();
        let why = miss(spec(), json!(expected), json!(actual));
        let unmatched = |why: &str| why.split(' ').next().unwrap().to_string();
        let mut order: Vec<usize> = (0..actual.len()).collect();
        for step in 0..40 {
            order.rotate_left(step % 5 + 1);
            order.swap(step % 6, (step * 7 + 3) % 6);
            let permuted: Vec<f64> = order.iter().map(|&i| actual[i]).collect();
            let other = miss(spec(), json!(expected), json!(permuted));
            assert_eq!(unmatched(&other), unmatched(&why), "{permuted:?}: {other}");
        }
    }

    #[test]
    fn numeric_tolerance_edges() {
        let abs = |t| FieldSpec::numeric_tolerance("f", t);
        hit(abs(0.01), json!(100), json!(100.01)); // exactly at the tolerance (0.010000000000005 in binary)
        hit(abs(0.01), json!(100), json!(99.99));
        assert_eq!(
            miss(abs(0.01), json!(100), json!(100.02)),
            "outside tolerance 0.01 (diff 0.02)"
        );
        hit(abs(0.0), json!(0.3), json!(0.1 + 0.2)); // float representation
        hit(abs(0.0), json!("0.3"), json!(0.30000000000000004));
        miss(abs(0.0), json!(0.3), json!(0.3000001));
        hit(abs(0.5), json!(-10), json!(-10.5));
        assert_eq!(
            miss(abs(0.5), json!(-10), json!(-10.51)),
            "outside tolerance 0.5 (diff 0.51)"
        );
        hit(abs(0.01), json!(0), json!(-0.01));
        hit(abs(0.01), json!("1500.00"), json!(" 1500 "));
        hit(abs(0.0), json!(1500), json!("1.5e3"));
        hit(abs(0.01), json!(1500), json!("1,500.00"));
        assert_eq!(
            miss(abs(0.01), json!(1.5), json!("1,50")),
            "actual \"1,50\" is not a number"
        );
        assert_eq!(
            miss(abs(1.0), json!(1), json!("NaN")),
            "actual \"NaN\" is not a number"
        );
        assert_eq!(
            miss(abs(1.0), json!(1), json!("inf")),
            "actual \"inf\" is not a number"
        );
        assert_eq!(
            miss(abs(1.0), json!(1), json!(null)),
            "actual null is not a number"
        );
        assert_eq!(
            miss(abs(1.0), json!("n/a"), json!(1)),
            "expected \"n/a\" is not a number"
        );
    }

    #[test]
    fn relative_tolerance() {
        let rel = |t| FieldSpec::numeric_tolerance("f", t).relative();
        hit(rel(0.01), json!(200), json!(202)); // exactly 1 %
        hit(rel(0.01), json!(-200), json!(-198));
        assert_eq!(
            miss(rel(0.01), json!(200), json!(202.5)),
            "outside relative tolerance 0.01 (relative diff 0.0125)"
        );
        // Expected 0: the tolerance is absolute.
        hit(rel(0.01), json!(0), json!(0.01));
        assert_eq!(
            miss(rel(0.01), json!(0), json!(0.02)),
            "outside tolerance 0.01 (diff 0.02)"
        );
        hit(rel(0.1), json!(1e-9), json!(1.05e-9));
    }

    /// A hit says whether the numbers are equal (within float rounding) or only within the
    /// tolerance, and by how much.
    #[test]
    fn numeric_hit_details() {
        let detail = |spec: FieldSpec, e: Value, a: Value| one(spec, e, a).hits[0].detail();
        let abs = FieldSpec::numeric_tolerance("f", 0.01);
        let rel = FieldSpec::numeric_tolerance("f", 0.01).relative();
        assert_eq!(detail(abs.clone(), json!(0.3), json!(0.1 + 0.2)), "equal");
        assert_eq!(
            detail(abs, json!(100), json!(100.005)),
            "diff 0.005 within tolerance 0.01"
        );
        assert_eq!(detail(rel.clone(), json!(200), json!(200)), "equal");
        assert_eq!(
            detail(rel, json!(200), json!(201)),
            "relative diff 0.005 within 0.01"
        );
    }

    #[test]
    fn numeric_arrays_compare_elementwise() {
        hit(
            FieldSpec::numeric_tolerance("f", 0.01),
            json!([1, 2]),
            json!(["1.00", 2.001]),
        );
        assert_eq!(
            miss(
                FieldSpec::numeric_tolerance("f", 0.01),
                json!([1, 2]),
                json!([1, 2.5])
            ),
            "[1]: outside tolerance 0.01 (diff 0.5)"
        );
    }

    #[test]
    fn the_replaced_system_s_failures() {
        // ISO vs DD-MMM-YYYY are the same calendar day, whatever the machine's zone.
        assert!(date("2025-01-15", "15-JAN-2025", &[]));
        assert!(date(
            "2025-01-15",
            "15-JAN-2025",
            &["DD-MMM-YYYY", "YYYY-MM-DD"]
        ));
        assert!(date("2025-01-15T00:00:00Z", "15-JAN-2025", &[]));
        assert!(date("2025-01-15", "2025-01-15T23:30:00-08:00", &[]));
        // `formats` really decides: day first.
        assert!(date("2025-02-03", "03/02/2025", &["DD/MM/YYYY"]));
        assert!(!date("2025-03-02", "03/02/2025", &["DD/MM/YYYY"]));
        assert!(date("2025-03-02", "03/02/2025", &["MM/DD/YYYY"]));
        // Order decides between two formats that both read the text.
        assert!(date(
            "2025-02-03",
            "03/02/2025",
            &["DD/MM/YYYY", "MM/DD/YYYY"]
        ));
        assert!(date(
            "2025-03-02",
            "03/02/2025",
            &["MM/DD/YYYY", "DD/MM/YYYY"]
        ));
        // ... unless the first reading is impossible.
        assert!(date(
            "2025-12-31",
            "12/31/2025",
            &["DD/MM/YYYY", "MM/DD/YYYY"]
        ));
        // Ambiguous numeric dates are no default.
        assert!(!date("2025-02-03", "03/02/2025", &[]));
    }

    #[test]
    fn date_case_folding_and_names() {
        for month in ["JAN", "jan", "Jan", "jAn", "January", "JANUARY"] {
            assert!(
                date("2025-01-15", &format!("15-{month}-2025"), &["DD-MMM-YYYY"]),
                "{month}"
            );
        }
        assert!(date("2025-09-01", "01-Sept-2025", &["DD-MMM-YYYY"]));
        assert!(!date("2025-01-15", "15-Jn-2025", &["DD-MMM-YYYY"]));
        assert!(!date("2025-01-15", "15-Janu-2025", &["DD-MMM-YYYY"]));
    }

    #[test]
    fn invalid_dates() {
        let why = miss(
            FieldSpec::date("f"),
            json!("2025-02-28"),
            json!("31-FEB-2025"),
        );
        assert_eq!(
            why,
            "actual \"31-FEB-2025\" reads as 2025-02-31 in DD-MMM-YYYY, which is not a calendar date"
        );
        assert!(date("2024-02-29", "29-FEB-2024", &[]));
        assert!(!date("2023-02-28", "29-FEB-2023", &[]));
        assert!(!date("2025-04-30", "2025-04-31", &[]));
        assert!(!date("2025-01-15", "2025-13-01", &[]));
        assert!(!date("2025-01-15", "2025-01-00", &[]));
        let why = miss(
            FieldSpec::date("f"),
            json!("2025-01-15"),
            json!("next tuesday"),
        );
        assert_eq!(
            why,
            "actual \"next tuesday\" is not a date in the default formats"
        );
        let why = miss(
            FieldSpec::date("f").formats(&["DD/MM/YYYY"]),
            json!("2025-01-15"),
            json!("Jan 15"),
        );
        assert_eq!(
            why,
            "actual \"Jan 15\" is not a date in DD/MM/YYYY (then YYYY-MM-DD)"
        );
        let why = miss(FieldSpec::date("f"), json!("2025-01-15"), json!(20250115));
        assert_eq!(why, "actual 20250115 is not a date string");
        let why = miss(
            FieldSpec::date("f"),
            json!("2025-01-15"),
            json!("2025-01-16"),
        );
        assert_eq!(why, "dates differ: expected 2025-01-15, actual 2025-01-16");
        // Trailing text that is not a time is not silently dropped.
        assert!(!date("2025-01-15", "2025-01-15 approx", &[]));
        assert!(!date("2025-01-15", "2025-01-155", &[]));
    }

    #[test]
    fn fuzzy_thresholds_and_folding() {
        let lev = |t| FieldSpec::fuzzy("f", t);
        // 1 edit in 10 characters: similarity exactly 0.9.
        hit(lev(0.9), json!("ACME GmbH."), json!("ACME GmbH"));
        assert_eq!(
            miss(lev(0.95), json!("ACME GmbH."), json!("ACME GmbH")),
            "similarity 0.90 < 0.95"
        );
        assert_eq!(
            miss(lev(0.85), json!("abcdefgh"), json!("abcxyzgh")),
            "similarity 0.62 < 0.85"
        );
        // Rounding never prints a failure as equal numbers.
        let why = miss(
            lev(0.85),
            json!("a".repeat(1000)),
            json!("a".repeat(849) + &"b".repeat(151)),
        );
        assert_eq!(why, "similarity 0.849 < 0.85");
        miss(lev(0.85), json!("Acme GmbH"), json!("ACME GMBH"));
        hit(
            lev(0.85).ignore_case(),
            json!("Acme GmbH"),
            json!("ACME GMBH"),
        );
        hit(
            lev(1.0).ignore_case().normalize_whitespace(),
            json!("Acme   GmbH"),
            json!(" acme gmbh "),
        );
        let jw = FieldSpec::fuzzy("f", 0.95).algorithm(Algorithm::JaroWinkler);
        hit(jw, json!("MARTHA"), json!("MARHTA"));
        assert_eq!(
            miss(lev(0.5), json!("x"), json!(5)),
            "actual 5 is not a string"
        );
        hit(
            lev(0.8),
            json!(["Acme", "Globex Corp"]),
            json!(["Acme", "Globex Crop"]),
        );
    }

    #[test]
    fn folding_matches_the_plain_definition() {
        let plain = |s: &str, ws: bool, lower: bool| {
            let mut out = s.to_string();
            if ws {
                out = out.split_whitespace().collect::<Vec<_>>().join(" ");
            }
            if lower {
                out = out.to_lowercase();
            }
            out
        };
        let long = "Ab  ".repeat(30);
        for s in [
            "",
            "  ",
            "acme gmbh",
            "Acme  GmbH",
            " acme\tGMBH\n",
            "A\u{b}B\u{c}c",
            "MÜLLER  gmbh",
            "müller\u{a0}gmbh",
            &long,
        ] {
            for (ws, lower) in [(false, false), (true, false), (false, true), (true, true)] {
                let mut spec = FieldSpec::exact("f");
                spec.normalize_whitespace = ws;
                spec.ignore_case = lower;
                assert_eq!(fold(&spec, s).as_str(), plain(s, ws, lower), "{s:?}");
            }
        }
    }
}
