//! Field-by-field scoring (`[field_accuracy]`): each configured field of the expected document
//! is a hit or a miss, and the hits' weights make the score.
//!
//! A field is named by a [`Pattern`] and compared by one [`Matcher`]: `exact` (deep equality),
//! `numeric_tolerance`, `date` (calendar dates, parsed with an ordered list of formats, no time
//! zone involved) or `fuzzy` (string similarity, see [`crate::fuzzy`]). The engine is pure: it
//! takes two `serde_json::Value`s and a config and returns an [`AccuracyVerdict`].
//!
//! Rules worth knowing:
//!
//! - A field absent from `expected` is not counted. A field present in `expected` but missing
//!   from `actual` is a miss when `required` (the default), and not counted when
//!   `required = false`. JSON `null` is a value, not an absence.
//! - A path with wildcards (`line_items[*].amount`) names every location it matches in
//!   `expected`; each is a field of its own, with the full weight.
//! - When nothing at all is counted because no configured path exists in `expected`, the case
//!   **fails** (score 0): that is almost always a typo in a path or an empty fixture, and a typo
//!   must never pass silently. When fields exist in `expected` but every one of them is optional
//!   and absent from `actual`, nothing is wrong and the score is 1.
//! - `weighted_average` scores `sum(weight of hits) / sum(weight of counted fields)`;
//!   `all_or_nothing` scores 1 without a miss, else 0. The case passes when the score is at least
//!   `threshold` (a rounding error of 1e-9 is forgiven, so weights like 0.1 + 0.2 add up).
//! - Numbers: numeric strings (`"1500.00"`, surrounding spaces allowed) count as numbers for
//!   `numeric_tolerance`; differences below floating-point rounding count as zero, so `100.01`
//!   is within `0.01` of `100`. `relative = true` measures `|a - e| / |e|`, and falls back to
//!   the absolute difference when `e` is 0.
//! - `exact` compares numbers by value (`1500` equals `1500.0`) but keeps types apart (`120`
//!   differs from `"120"`); with `ignore_case` / `normalize_whitespace` its strings are folded.
//! - When both sides of a field are arrays, each element is compared with the field's matcher:
//!   in order (`array_match = "ordered"`, the default) or as a multiset (`"any_order"`, an
//!   optimal one-to-one assignment).
//!
//! ```
//! use proposal_eval_engine::accuracy::{evaluate, FieldAccuracyConfig, FieldSpec};
//! use serde_json::json;
//!
//! let config = FieldAccuracyConfig::new()
//!     .threshold(0.75)
//!     .field(FieldSpec::numeric_tolerance("invoice.total", 0.01))
//!     .field(FieldSpec::date("invoice.date"))
//!     .field(FieldSpec::fuzzy("invoice.supplier", 0.85).ignore_case())
//!     .field(FieldSpec::exact("invoice.currency"));
//! let expected = json!({"invoice": {"total": 1500, "date": "2025-01-15",
//!                                   "supplier": "ACME GmbH", "currency": "EUR"}});
//! let actual = json!({"invoice": {"total": "1500.00", "date": "15-JAN-2025",
//!                                 "supplier": "Acme GmbH.", "currency": "USD"}});
//! let verdict = evaluate(&expected, &actual, &config);
//! assert_eq!(verdict.score, 0.75);
//! assert!(verdict.passed);
//! assert_eq!(verdict.reasoning, "3/4 fields matched, score 0.75 ≥ 0.75");
//! assert_eq!(verdict.misses[0].path.to_string(), "invoice.currency");
//! ```

use crate::fuzzy::Algorithm;
use crate::path::{Location, Pattern, PatternSegment, Segment};
use chrono::NaiveDate;
use serde::Deserialize;
use serde_json::Value;
use std::borrow::Cow;
use std::fmt::{self, Write as _};
use std::sync::{Arc, OnceLock};

/// How the counted fields become one score (`aggregation = "..."`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Aggregation {
    /// `sum(weight of hits) / sum(weight of counted fields)` (default).
    #[default]
    WeightedAverage,
    /// 1 when every counted field is a hit, else 0.
    AllOrNothing,
}

/// The match type of a field (`match = "..."`), without its options.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchKind {
    /// Deep equality (default).
    #[default]
    Exact,
    /// Numbers within a tolerance.
    NumericTolerance,
    /// The same calendar date.
    Date,
    /// Strings at least this similar.
    Fuzzy,
}

impl MatchKind {
    /// The name used in configs.
    pub fn name(self) -> &'static str {
        match self {
            MatchKind::Exact => "exact",
            MatchKind::NumericTolerance => "numeric_tolerance",
            MatchKind::Date => "date",
            MatchKind::Fuzzy => "fuzzy",
        }
    }
}

/// How two arrays are compared element by element (`array_match = "..."`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ArrayMatch {
    /// Element `i` against element `i` (default).
    #[default]
    Ordered,
    /// As multisets: same length, and a one-to-one assignment in which every pair matches.
    AnyOrder,
}

/// A match type with its options.
#[derive(Clone, Debug, PartialEq)]
pub enum Matcher {
    /// Deep equality; numbers by value, strings folded as the field says.
    Exact,
    /// `|actual - expected| <= tolerance`, or `|a - e| / |e| <= tolerance` when `relative`.
    NumericTolerance {
        /// The largest allowed difference (default 0).
        tolerance: f64,
        /// Whether `tolerance` is a fraction of the expected value.
        relative: bool,
    },
    /// The same calendar date.
    Date {
        /// The formats tried in order; empty means [`default_date_formats`].
        formats: Vec<DateFormat>,
    },
    /// String similarity at least `threshold`.
    Fuzzy {
        /// The similarity measure.
        algorithm: Algorithm,
        /// The smallest similarity that is a hit (default 0.85).
        threshold: f64,
    },
}

impl Matcher {
    /// The match type without its options.
    pub fn kind(&self) -> MatchKind {
        match self {
            Matcher::Exact => MatchKind::Exact,
            Matcher::NumericTolerance { .. } => MatchKind::NumericTolerance,
            Matcher::Date { .. } => MatchKind::Date,
            Matcher::Fuzzy { .. } => MatchKind::Fuzzy,
        }
    }
}

/// One `[[field_accuracy.fields]]` entry: which field, how it is compared, how much it counts.
///
/// Build one in Rust with the constructors ([`FieldSpec::exact`], [`FieldSpec::numeric_tolerance`],
/// [`FieldSpec::date`], [`FieldSpec::fuzzy`]) and the chained options. The constructors and
/// options panic on a malformed path or an option that does not apply to the match type, the
/// same mistakes that are errors in `proposal-eval.toml`.
#[derive(Clone, PartialEq, Deserialize)]
#[serde(try_from = "RawFieldSpec")]
pub struct FieldSpec {
    /// The field: a concrete path, or a pattern naming every location it matches in `expected`.
    pub path: Pattern,
    /// How the field is compared.
    pub matcher: Matcher,
    /// Whether a field missing from `actual` is a miss (true, default) or not counted.
    pub required: bool,
    /// How much the field counts in `weighted_average` (default 1, must be positive).
    pub weight: f64,
    /// How arrays on both sides are compared.
    pub array_match: ArrayMatch,
    /// Compare strings ignoring case (`exact` and `fuzzy`).
    pub ignore_case: bool,
    /// Trim strings and collapse runs of whitespace before comparing (`exact` and `fuzzy`).
    pub normalize_whitespace: bool,
    resolved: Resolved,
}

/// The location of a wildcard-free `path`, built once with the spec so that scoring the field
/// builds no path: every hit and miss shares it. Derived from `path`, so it takes no part in
/// equality or `Debug`; `path` is a public field, so [`FieldSpec::location`] checks the two
/// still agree before trusting it.
#[derive(Clone, Default)]
struct Resolved(Option<Arc<Location>>);

impl Resolved {
    fn of(path: &Pattern) -> Resolved {
        Resolved(path.as_location().map(Arc::new))
    }
}

impl PartialEq for Resolved {
    fn eq(&self, _: &Resolved) -> bool {
        true
    }
}

impl fmt::Debug for FieldSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FieldSpec")
            .field("path", &self.path)
            .field("matcher", &self.matcher)
            .field("required", &self.required)
            .field("weight", &self.weight)
            .field("array_match", &self.array_match)
            .field("ignore_case", &self.ignore_case)
            .field("normalize_whitespace", &self.normalize_whitespace)
            .finish()
    }
}

/// `[field_accuracy]`: the fields to score, the aggregation and the pass threshold.
///
/// ```
/// use proposal_eval_engine::accuracy::{Aggregation, FieldAccuracyConfig};
/// let config: FieldAccuracyConfig = toml::from_str(r#"
///     aggregation = "all_or_nothing"
///     [[fields]]
///     path = "invoice.invoice_date"
///     match = "date"
///     formats = ["DD/MM/YYYY"]
/// "#).unwrap();
/// assert_eq!(config.aggregation, Aggregation::AllOrNothing);
/// assert_eq!(config.threshold, 1.0);
///
/// let err = toml::from_str::<FieldAccuracyConfig>(r#"
///     [[fields]]
///     path = "invoice.total"
///     match = "numeric"
/// "#).unwrap_err();
/// assert!(err.to_string().contains("numeric_tolerance"));
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(try_from = "RawConfig")]
pub struct FieldAccuracyConfig {
    /// How the counted fields become one score.
    pub aggregation: Aggregation,
    /// The case passes when the score is at least this (default 1.0, within 0..=1).
    pub threshold: f64,
    /// The fields, in the order they are checked and reported.
    pub fields: Vec<FieldSpec>,
}

impl Default for FieldAccuracyConfig {
    fn default() -> Self {
        FieldAccuracyConfig {
            aggregation: Aggregation::WeightedAverage,
            threshold: 1.0,
            fields: Vec::new(),
        }
    }
}

impl FieldAccuracyConfig {
    /// An empty config: weighted average, threshold 1, no fields.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the aggregation.
    pub fn aggregation(mut self, aggregation: Aggregation) -> Self {
        self.aggregation = aggregation;
        self
    }

    /// Sets the pass threshold.
    ///
    /// # Panics
    /// When `threshold` is not within 0..=1.
    pub fn threshold(mut self, threshold: f64) -> Self {
        assert!(
            (0.0..=1.0).contains(&threshold),
            "field_accuracy threshold must be within 0 and 1, got {threshold}"
        );
        self.threshold = threshold;
        self
    }

    /// Adds a field.
    pub fn field(mut self, field: FieldSpec) -> Self {
        self.fields.push(field);
        self
    }
}

fn parse_pattern_or_panic(path: &str) -> Pattern {
    Pattern::parse(path).unwrap_or_else(|e| panic!("{e}"))
}

impl FieldSpec {
    /// A field compared by `matcher`, required, weight 1.
    ///
    /// # Panics
    /// When `path` does not follow the path grammar.
    pub fn new(path: &str, matcher: Matcher) -> FieldSpec {
        FieldSpec::with_pattern(parse_pattern_or_panic(path), matcher)
    }

    /// Like [`FieldSpec::new`], with an already parsed path.
    pub fn with_pattern(path: Pattern, matcher: Matcher) -> FieldSpec {
        FieldSpec {
            resolved: Resolved::of(&path),
            path,
            matcher,
            required: true,
            weight: 1.0,
            array_match: ArrayMatch::Ordered,
            ignore_case: false,
            normalize_whitespace: false,
        }
    }

    /// `match = "exact"`.
    ///
    /// ```
    /// use proposal_eval_engine::accuracy::FieldSpec;
    /// let spec = FieldSpec::exact("invoice.line_items").any_order().weight(2.0);
    /// assert_eq!(spec.weight, 2.0);
    /// ```
    pub fn exact(path: &str) -> FieldSpec {
        FieldSpec::new(path, Matcher::Exact)
    }

    /// `match = "numeric_tolerance"` with an absolute tolerance (see [`FieldSpec::relative`]).
    ///
    /// # Panics
    /// When `tolerance` is negative or not finite.
    pub fn numeric_tolerance(path: &str, tolerance: f64) -> FieldSpec {
        assert!(
            tolerance.is_finite() && tolerance >= 0.0,
            "tolerance must be a finite number >= 0, got {tolerance}"
        );
        FieldSpec::new(
            path,
            Matcher::NumericTolerance {
                tolerance,
                relative: false,
            },
        )
    }

    /// `match = "date"` with the default formats (see [`FieldSpec::formats`]).
    pub fn date(path: &str) -> FieldSpec {
        FieldSpec::new(
            path,
            Matcher::Date {
                formats: Vec::new(),
            },
        )
    }

    /// `match = "fuzzy"`, Levenshtein similarity at least `threshold` (see [`FieldSpec::algorithm`]).
    ///
    /// # Panics
    /// When `threshold` is not within 0..=1.
    pub fn fuzzy(path: &str, threshold: f64) -> FieldSpec {
        assert!(
            (0.0..=1.0).contains(&threshold),
            "fuzzy threshold must be within 0 and 1, got {threshold}"
        );
        FieldSpec::new(
            path,
            Matcher::Fuzzy {
                algorithm: Algorithm::Levenshtein,
                threshold,
            },
        )
    }

    /// `required = false`: missing from `actual` is not counted.
    pub fn optional(mut self) -> FieldSpec {
        self.required = false;
        self
    }

    /// Sets the weight.
    ///
    /// # Panics
    /// When `weight` is not a positive finite number.
    pub fn weight(mut self, weight: f64) -> FieldSpec {
        assert!(
            weight.is_finite() && weight > 0.0,
            "weight must be a positive number, got {weight}"
        );
        self.weight = weight;
        self
    }

    /// `array_match = "any_order"`.
    pub fn any_order(mut self) -> FieldSpec {
        self.array_match = ArrayMatch::AnyOrder;
        self
    }

    /// `relative = true` on a numeric field.
    ///
    /// # Panics
    /// When the field is not `numeric_tolerance`.
    pub fn relative(mut self) -> FieldSpec {
        match &mut self.matcher {
            Matcher::NumericTolerance { relative, .. } => *relative = true,
            other => panic!(
                "`relative` applies to numeric_tolerance, not {}",
                other.kind().name()
            ),
        }
        self
    }

    /// The date formats to try, in order (token style `DD/MM/YYYY` or strftime `%d/%m/%Y`).
    ///
    /// # Panics
    /// When a format is malformed or the field is not `date`.
    ///
    /// ```
    /// use proposal_eval_engine::accuracy::{evaluate, FieldAccuracyConfig, FieldSpec};
    /// use serde_json::json;
    /// let config = FieldAccuracyConfig::new()
    ///     .field(FieldSpec::date("due").formats(&["DD/MM/YYYY"]));
    /// let verdict = evaluate(&json!({"due": "2025-02-03"}), &json!({"due": "03/02/2025"}), &config);
    /// assert!(verdict.passed, "{}", verdict.reasoning);
    /// ```
    pub fn formats(mut self, formats: &[&str]) -> FieldSpec {
        let parsed: Vec<DateFormat> = formats
            .iter()
            .map(|f| DateFormat::parse(f).unwrap_or_else(|e| panic!("{e}")))
            .collect();
        match &mut self.matcher {
            Matcher::Date { formats } => *formats = parsed,
            other => panic!("`formats` applies to date, not {}", other.kind().name()),
        }
        self
    }

    /// The fuzzy algorithm.
    ///
    /// # Panics
    /// When the field is not `fuzzy`.
    pub fn algorithm(mut self, algorithm: Algorithm) -> FieldSpec {
        match &mut self.matcher {
            Matcher::Fuzzy { algorithm: a, .. } => *a = algorithm,
            other => panic!("`algorithm` applies to fuzzy, not {}", other.kind().name()),
        }
        self
    }

    /// `ignore_case = true` (`exact` and `fuzzy` only).
    ///
    /// # Panics
    /// When the field is neither `exact` nor `fuzzy`.
    pub fn ignore_case(mut self) -> FieldSpec {
        self.assert_folds("ignore_case");
        self.ignore_case = true;
        self
    }

    /// `normalize_whitespace = true` (`exact` and `fuzzy` only).
    ///
    /// # Panics
    /// When the field is neither `exact` nor `fuzzy`.
    pub fn normalize_whitespace(mut self) -> FieldSpec {
        self.assert_folds("normalize_whitespace");
        self.normalize_whitespace = true;
        self
    }

    /// The location `path` names when it has no wildcard: the one built with the spec, unless
    /// `path` was replaced since.
    fn location(&self) -> Option<Arc<Location>> {
        match &self.resolved.0 {
            Some(location) if names(&self.path, location) => Some(Arc::clone(location)),
            _ => self.path.as_location().map(Arc::new),
        }
    }

    fn assert_folds(&self, option: &str) {
        assert!(
            matches!(self.matcher, Matcher::Exact | Matcher::Fuzzy { .. }),
            "`{option}` applies to exact and fuzzy, not {}",
            self.matcher.kind().name()
        );
    }
}

/// Whether the wildcard-free `pattern` names exactly `location`.
fn names(pattern: &Pattern, location: &Location) -> bool {
    let (p, l) = (pattern.segments(), location.segments());
    p.len() == l.len()
        && p.iter().zip(l).all(|pair| match pair {
            (PatternSegment::Key(x), Segment::Key(y)) => x == y,
            (PatternSegment::Index(x), Segment::Index(y)) => x == y,
            _ => false,
        })
}

/// The TOML shape of a field: flat, as users write it; checked and turned into a [`FieldSpec`].
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFieldSpec {
    path: Pattern,
    #[serde(default, rename = "match")]
    match_kind: MatchKind,
    tolerance: Option<f64>,
    relative: Option<bool>,
    required: Option<bool>,
    weight: Option<f64>,
    formats: Option<Vec<DateFormat>>,
    array_match: Option<ArrayMatch>,
    algorithm: Option<Algorithm>,
    threshold: Option<f64>,
    ignore_case: Option<bool>,
    normalize_whitespace: Option<bool>,
}

impl TryFrom<RawFieldSpec> for FieldSpec {
    type Error = String;

    fn try_from(raw: RawFieldSpec) -> Result<Self, String> {
        let kind = raw.match_kind;
        let field = raw.path.as_str().to_string();
        // An option that does not apply to the match type is an error, not ignored: a user who
        // wrote `tolerance` on an exact field believes a tolerance is in force.
        let not_for = |option: &str, applies_to: &str| {
            format!(
                "field `{field}`: `{option}` applies to match = {applies_to}, but this field is match = \"{}\"",
                kind.name()
            )
        };
        let allowed = |option: &str, set: bool, ok: bool, applies_to: &str| {
            if set && !ok {
                Err(not_for(option, applies_to))
            } else {
                Ok(())
            }
        };
        let numeric = kind == MatchKind::NumericTolerance;
        let fuzzy = kind == MatchKind::Fuzzy;
        let folds = matches!(kind, MatchKind::Exact | MatchKind::Fuzzy);
        allowed(
            "tolerance",
            raw.tolerance.is_some(),
            numeric,
            "\"numeric_tolerance\"",
        )?;
        allowed(
            "relative",
            raw.relative.is_some(),
            numeric,
            "\"numeric_tolerance\"",
        )?;
        allowed(
            "formats",
            raw.formats.is_some(),
            kind == MatchKind::Date,
            "\"date\"",
        )?;
        allowed("algorithm", raw.algorithm.is_some(), fuzzy, "\"fuzzy\"")?;
        allowed(
            "threshold",
            raw.threshold.is_some(),
            fuzzy,
            "\"fuzzy\" (the pass threshold is [field_accuracy] threshold)",
        )?;
        allowed(
            "ignore_case",
            raw.ignore_case.is_some(),
            folds,
            "\"exact\" or \"fuzzy\"",
        )?;
        allowed(
            "normalize_whitespace",
            raw.normalize_whitespace.is_some(),
            folds,
            "\"exact\" or \"fuzzy\"",
        )?;
        let weight = raw.weight.unwrap_or(1.0);
        if !(weight.is_finite() && weight > 0.0) {
            return Err(format!(
                "field `{field}`: `weight` must be a positive number, got {weight}"
            ));
        }
        let matcher = match kind {
            MatchKind::Exact => Matcher::Exact,
            MatchKind::NumericTolerance => {
                let tolerance = raw.tolerance.unwrap_or(0.0);
                if !(tolerance.is_finite() && tolerance >= 0.0) {
                    return Err(format!(
                        "field `{field}`: `tolerance` must be a number >= 0, got {tolerance}"
                    ));
                }
                Matcher::NumericTolerance {
                    tolerance,
                    relative: raw.relative.unwrap_or(false),
                }
            }
            MatchKind::Date => Matcher::Date {
                formats: raw.formats.unwrap_or_default(),
            },
            MatchKind::Fuzzy => {
                let threshold = raw.threshold.unwrap_or(0.85);
                if !(0.0..=1.0).contains(&threshold) {
                    return Err(format!(
                        "field `{field}`: fuzzy `threshold` must be within 0 and 1, got {threshold}"
                    ));
                }
                Matcher::Fuzzy {
                    algorithm: raw.algorithm.unwrap_or_default(),
                    threshold,
                }
            }
        };
        Ok(FieldSpec {
            resolved: Resolved::of(&raw.path),
            path: raw.path,
            matcher,
            required: raw.required.unwrap_or(true),
            weight,
            array_match: raw.array_match.unwrap_or_default(),
            ignore_case: raw.ignore_case.unwrap_or(false),
            normalize_whitespace: raw.normalize_whitespace.unwrap_or(false),
        })
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    aggregation: Aggregation,
    threshold: Option<f64>,
    #[serde(default)]
    fields: Vec<FieldSpec>,
}

impl TryFrom<RawConfig> for FieldAccuracyConfig {
    type Error = String;

    fn try_from(raw: RawConfig) -> Result<Self, String> {
        let threshold = raw.threshold.unwrap_or(1.0);
        if !(0.0..=1.0).contains(&threshold) {
            return Err(format!(
                "field_accuracy `threshold` must be within 0 and 1, got {threshold}"
            ));
        }
        Ok(FieldAccuracyConfig {
            aggregation: raw.aggregation,
            threshold,
            fields: raw.fields,
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Dates

/// One date format, parsed once when the config is read.
///
/// Token style (as in the seed): `YYYY`, `YY` (00–68 → 20xx, 69–99 → 19xx), `MM`/`M` (1–2
/// digits), `DD`/`D` (1–2 digits), `MMM`/`MMMM` (an English month name, full or abbreviated,
/// any case; `Sept` too); any other character is literal, and a space matches one or more
/// whitespace characters. A format with `%` is strftime: `%Y %y %m %d %e %-m %-d %b %h %B %F %%`.
/// A time written after the date (`T10:30:00Z`, ` 10:30`) is ignored, never converted: a date
/// is the calendar date as written.
///
/// ```
/// use proposal_eval_engine::accuracy::DateFormat;
/// use chrono::NaiveDate;
/// let f = DateFormat::parse("DD-MMM-YYYY").unwrap();
/// assert_eq!(f.parse_date("15-jan-2025"), Some(NaiveDate::from_ymd_opt(2025, 1, 15).unwrap()));
/// assert_eq!(f.parse_date("31-FEB-2025"), None);
/// assert!(DateFormat::parse("DD-MMM-YYY").is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DateFormat {
    source: String,
    items: Vec<DateItem>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DateItem {
    Year4,
    Year2,
    Month,
    Day,
    MonthName,
    Space,
    Literal(char),
}

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

enum Scan {
    /// The format matched; the date may still be impossible (31 February).
    Fields(i32, u32, u32),
    NoMatch,
}

impl DateFormat {
    /// Parses a format, in token style or strftime.
    pub fn parse(text: &str) -> Result<DateFormat, String> {
        let items = if text.contains('%') {
            parse_strftime(text)?
        } else {
            parse_tokens(text)?
        };
        let count = |wanted: &[DateItem]| items.iter().filter(|i| wanted.contains(i)).count();
        if count(&[DateItem::Year4, DateItem::Year2]) != 1
            || count(&[DateItem::Month, DateItem::MonthName]) != 1
            || count(&[DateItem::Day]) != 1
        {
            return Err(format!(
                "date format `{text}` must name the year, the month and the day exactly once each (for example `DD-MMM-YYYY`, `YYYY-MM-DD` or `%d/%m/%Y`)"
            ));
        }
        Ok(DateFormat {
            source: text.to_string(),
            items,
        })
    }

    /// The format as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The calendar date `text` holds in this format, if it holds a valid one.
    pub fn parse_date(&self, text: &str) -> Option<NaiveDate> {
        match self.scan(text.trim()) {
            Scan::Fields(y, m, d) => NaiveDate::from_ymd_opt(y, m, d),
            Scan::NoMatch => None,
        }
    }

    fn scan(&self, text: &str) -> Scan {
        let bytes = text.as_bytes();
        let mut i = 0;
        let (mut year, mut month, mut day) = (0i32, 0u32, 0u32);
        let digits = |i: &mut usize, min: usize, max: usize| -> Option<u32> {
            let start = *i;
            while *i < bytes.len() && *i - start < max && bytes[*i].is_ascii_digit() {
                *i += 1;
            }
            if *i - start < min {
                return None;
            }
            Some(
                bytes[start..*i]
                    .iter()
                    .fold(0u32, |n, b| n * 10 + u32::from(b - b'0')),
            )
        };
        for item in &self.items {
            let ok = match *item {
                DateItem::Year4 => digits(&mut i, 4, 4).map(|y| year = y as i32),
                DateItem::Year2 => digits(&mut i, 2, 2).map(|y| {
                    year = if y < 69 {
                        2000 + y as i32
                    } else {
                        1900 + y as i32
                    };
                }),
                DateItem::Month => digits(&mut i, 1, 2).map(|m| month = m),
                DateItem::Day => digits(&mut i, 1, 2).map(|d| day = d),
                DateItem::MonthName => {
                    let start = i;
                    while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
                        i += 1;
                    }
                    month_from_name(&text[start..i]).map(|m| month = m)
                }
                DateItem::Space => {
                    let start = i;
                    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                        i += 1;
                    }
                    (i > start).then_some(())
                }
                DateItem::Literal(c) => match text[i..].chars().next() {
                    Some(got) if got.eq_ignore_ascii_case(&c) => {
                        i += got.len_utf8();
                        Some(())
                    }
                    _ => None,
                },
            };
            if ok.is_none() {
                return Scan::NoMatch;
            }
        }
        // A time after the date is allowed and ignored: `T10:30:00Z` or ` 10:30`.
        let rest = &bytes[i..];
        let time_follows = match rest.first() {
            None => true,
            Some(b'T' | b't') => rest.get(1).is_some_and(u8::is_ascii_digit),
            Some(b) if b.is_ascii_whitespace() => {
                let trimmed = text[i..].trim_start();
                trimmed.as_bytes().first().is_some_and(u8::is_ascii_digit) && trimmed.contains(':')
            }
            _ => false,
        };
        if time_follows {
            Scan::Fields(year, month, day)
        } else {
            Scan::NoMatch
        }
    }
}

fn month_from_name(name: &str) -> Option<u32> {
    if name.len() < 3 {
        return None;
    }
    if name.eq_ignore_ascii_case("sept") {
        return Some(9);
    }
    MONTHS
        .iter()
        .position(|m| {
            m.eq_ignore_ascii_case(name) || (name.len() == 3 && m[..3].eq_ignore_ascii_case(name))
        })
        .map(|n| n as u32 + 1)
}

fn parse_tokens(text: &str) -> Result<Vec<DateItem>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut items = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let run = chars[i..].iter().take_while(|x| **x == c).count();
        let bad = |hint: &str| {
            Err(format!(
                "date format `{text}`: `{}` is not a token ({hint}); tokens are YYYY, YY, MM, M, MMM, MMMM, DD, D",
                chars[i..i + run].iter().collect::<String>()
            ))
        };
        match c {
            'Y' | 'y' => match run {
                4 => items.push(DateItem::Year4),
                2 => items.push(DateItem::Year2),
                _ => return bad("a year is YYYY or YY"),
            },
            'M' => match run {
                1 | 2 => items.push(DateItem::Month),
                3 | 4 => items.push(DateItem::MonthName),
                _ => return bad("a month is MM, M, MMM or MMMM"),
            },
            'm' => return bad("a lowercase `m` means minutes in some conventions; write MM"),
            'D' | 'd' => match run {
                1 | 2 => items.push(DateItem::Day),
                _ => return bad("a day is DD or D"),
            },
            c if c.is_whitespace() => items.push(DateItem::Space),
            'T' => items.extend((0..run).map(|_| DateItem::Literal('T'))),
            c if c.is_ascii_alphabetic() => {
                return bad("letters other than the tokens and `T` are not allowed")
            }
            c => items.extend((0..run).map(|_| DateItem::Literal(c))),
        }
        i += run;
    }
    Ok(items)
}

fn parse_strftime(text: &str) -> Result<Vec<DateItem>, String> {
    let mut items = Vec::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            items.push(if c.is_whitespace() {
                DateItem::Space
            } else {
                DateItem::Literal(c)
            });
            continue;
        }
        let mut d = chars.next();
        if d == Some('-') {
            d = chars.next();
        }
        match d {
            Some('Y') => items.push(DateItem::Year4),
            Some('y') => items.push(DateItem::Year2),
            Some('m') => items.push(DateItem::Month),
            Some('d' | 'e') => items.push(DateItem::Day),
            Some('b' | 'h' | 'B') => items.push(DateItem::MonthName),
            Some('F') => items.extend([
                DateItem::Year4,
                DateItem::Literal('-'),
                DateItem::Month,
                DateItem::Literal('-'),
                DateItem::Day,
            ]),
            Some('%') => items.push(DateItem::Literal('%')),
            other => {
                return Err(format!(
                    "date format `{text}`: `%{}` is not supported; dates use %Y %y %m %d %e %b %B %F (a time after the date is ignored without being written in the format)",
                    other.map(String::from).unwrap_or_default()
                ))
            }
        }
    }
    Ok(items)
}

impl<'de> Deserialize<'de> for DateFormat {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        DateFormat::parse(&text).map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for DateFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

/// The formats tried when a date field lists none. None of them can be read two ways: numeric
/// day/month orders (`03/02/2025`) are left out, because only the user knows which one their
/// data uses; list `DD/MM/YYYY` or `MM/DD/YYYY` in `formats` for those.
///
/// `YYYY-MM-DD`, `YYYY/MM/DD`, `YYYY.MM.DD`, `YYYYMMDD`, `DD-MMM-YYYY`, `DD MMM YYYY`,
/// `DD/MMM/YYYY`, `DD.MMM.YYYY`, `MMM DD, YYYY`, `MMM DD YYYY`, `DD MMM, YYYY`, `DD-MMM-YY`.
pub fn default_date_formats() -> &'static [DateFormat] {
    static DEFAULTS: OnceLock<Vec<DateFormat>> = OnceLock::new();
    DEFAULTS.get_or_init(|| {
        [
            "YYYY-MM-DD",
            "YYYY/MM/DD",
            "YYYY.MM.DD",
            "YYYYMMDD",
            "DD-MMM-YYYY",
            "DD MMM YYYY",
            "DD/MMM/YYYY",
            "DD.MMM.YYYY",
            "MMM DD, YYYY",
            "MMM DD YYYY",
            "DD MMM, YYYY",
            "DD-MMM-YY",
        ]
        .iter()
        .map(|f| DateFormat::parse(f).expect("built-in date format"))
        .collect()
    })
}

fn iso_fallback() -> &'static DateFormat {
    &default_date_formats()[0]
}

/// Why a string is not a date.
enum DateError {
    /// A format matched but the date does not exist (31 February).
    Impossible {
        format: String,
        y: i32,
        m: u32,
        d: u32,
    },
    NoFormat,
}

/// Reads a date with `formats` in order (the defaults when empty). With explicit formats, ISO
/// `YYYY-MM-DD` is tried last: it cannot be misread, and fixtures usually hold it.
fn read_date(text: &str, formats: &[DateFormat]) -> Result<NaiveDate, DateError> {
    let text = text.trim();
    let list = if formats.is_empty() {
        default_date_formats()
    } else {
        formats
    };
    let mut impossible = None;
    let explicit_then_iso = list.iter().chain((!formats.is_empty()).then(iso_fallback));
    for format in explicit_then_iso {
        if let Scan::Fields(y, m, d) = format.scan(text) {
            match NaiveDate::from_ymd_opt(y, m, d) {
                Some(date) => return Ok(date),
                None if impossible.is_none() => {
                    impossible = Some(DateError::Impossible {
                        format: format.source.clone(),
                        y,
                        m,
                        d,
                    })
                }
                None => {}
            }
        }
    }
    Err(impossible.unwrap_or(DateError::NoFormat))
}

// ---------------------------------------------------------------------------------------------
// The verdict

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

/// What a hit's [`FieldHit::detail`] says, kept as numbers until someone asks.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Detail {
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
            } => {
                let (s, t) = fmt_apart(similarity, threshold, true);
                write!(f, "similarity {s} ≥ {t}")
            }
            Detail::AllElements(n) => write!(f, "all {n} elements match"),
            Detail::AllElementsAnyOrder(n) => write!(f, "all {n} elements match (any order)"),
        }
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
enum Row {
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
    rows: Vec<Row>,
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

/// Rounding slack forgiven when a score is compared with the threshold.
const SCORE_EPSILON: f64 = 1e-9;

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
    // `+ 0.0`: a sum of no weights is -0.0, which would print as a score of `-0.00`.
    let hit_weight: f64 = hits.iter().map(|h| h.weight).sum::<f64>() + 0.0;
    let miss_weight: f64 = misses.iter().map(|m| m.weight).sum::<f64>() + 0.0;
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
    // Written without `format!`: every verdict has this line, and on a one-field config the
    // formatting machinery would cost more than the field.
    let mut reasoning = String::with_capacity(64);
    push_digits(&mut reasoning, hits.len() as u64, 1);
    reasoning.push('/');
    push_digits(&mut reasoning, counted as u64, 1);
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
        // What `fmt_apart` prints for a pass: two decimals each.
        push_fixed(&mut reasoning, score, 2);
        reasoning.push_str(" ≥ ");
        push_fixed(&mut reasoning, config.threshold, 2);
    } else {
        push_apart_failed(&mut reasoning, score, " < ", config.threshold);
    }
    (score, passed, reasoning)
}

// ---------------------------------------------------------------------------------------------
// Comparing one field

fn compare_field(spec: &FieldSpec, e: &Value, a: &Value) -> Result<Detail, String> {
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
                    compare_scalar(spec, x, y).map_err(|why| format!("[{i}]: {why}"))?;
                }
                Ok(Detail::AllElements(es.len()))
            }
            ArrayMatch::AnyOrder => any_order(es, as_, |x, y| compare_scalar(spec, x, y).is_ok()),
        },
        _ => compare_scalar(spec, e, a),
    }
}

fn compare_scalar(spec: &FieldSpec, e: &Value, a: &Value) -> Result<Detail, String> {
    match &spec.matcher {
        Matcher::Exact => compare_exact(spec, e, a),
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
/// (Kuhn's augmenting paths, so a non-transitive matcher such as a tolerance is still optimal).
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
    let ok: Vec<Vec<bool>> = es
        .iter()
        .map(|x| as_.iter().map(|y| matches(x, y)).collect())
        .collect();
    let mut owner: Vec<Option<usize>> = vec![None; n];
    fn augment(i: usize, ok: &[Vec<bool>], seen: &mut [bool], owner: &mut [Option<usize>]) -> bool {
        for j in 0..ok[i].len() {
            if ok[i][j] && !seen[j] {
                seen[j] = true;
                let free = match owner[j] {
                    None => true,
                    Some(k) => augment(k, ok, seen, owner),
                };
                if free {
                    owner[j] = Some(i);
                    return true;
                }
            }
        }
        false
    }
    let mut unmatched = Vec::new();
    for i in 0..n {
        let mut seen = vec![false; n];
        if !augment(i, &ok, &mut seen, &mut owner) {
            unmatched.push(i);
        }
    }
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

/// A number, or a string that holds one (`"1500.00"`, `" 12 "`).
fn as_number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => {
            let t = s.trim();
            // `f64::from_str` also reads "inf", "NaN" and "infinity": not amounts.
            if t.is_empty()
                || !t
                    .bytes()
                    .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b))
            {
                return None;
            }
            t.parse::<f64>().ok().filter(|x| x.is_finite())
        }
        _ => None,
    }
}

fn compare_numeric(tolerance: f64, relative: bool, e: &Value, a: &Value) -> Result<Detail, String> {
    let Some(x) = as_number(e) else {
        return Err(format!("expected {} is not a number", brief(e)));
    };
    let Some(y) = as_number(a) else {
        return Err(format!("actual {} is not a number", brief(a)));
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
            Err(format!(
                "outside relative tolerance {} (relative diff {})",
                fmt_num(tolerance),
                fmt_num(rel)
            ))
        }
    } else if diff <= tolerance + slack {
        Ok(if diff <= slack {
            Detail::Equal
        } else {
            Detail::WithinTolerance { diff, tolerance }
        })
    } else {
        Err(format!(
            "outside tolerance {} (diff {})",
            fmt_num(tolerance),
            fmt_num(diff)
        ))
    }
}

fn compare_date(formats: &[DateFormat], e: &Value, a: &Value) -> Result<Detail, String> {
    let read = |v: &Value, side: &str| -> Result<NaiveDate, String> {
        let Value::String(s) = v else {
            return Err(format!("{side} {} is not a date string", brief(v)));
        };
        read_date(s, formats).map_err(|err| match err {
            DateError::Impossible { format, y, m, d } => format!(
                "{side} {} reads as {y:04}-{m:02}-{d:02} in {format}, which is not a calendar date",
                brief(v)
            ),
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
    };
    let x = read(e, "expected")?;
    let y = read(a, "actual")?;
    if x == y {
        Ok(Detail::SameDate(x))
    } else {
        Err(format!("dates differ: expected {x}, actual {y}"))
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
) -> Result<Detail, String> {
    let (Value::String(x), Value::String(y)) = (e, a) else {
        let (side, v) = if e.is_string() {
            ("actual", a)
        } else {
            ("expected", e)
        };
        return Err(format!("{side} {} is not a string", brief(v)));
    };
    let similarity = algorithm.similarity(fold(spec, x).as_str(), fold(spec, y).as_str());
    if similarity + SCORE_EPSILON >= threshold {
        Ok(Detail::Similar {
            similarity,
            threshold,
        })
    } else {
        // Room for the longest usual message, `similarity 0.849999 < 0.85`: one allocation.
        let mut why = String::with_capacity(32);
        why.push_str("similarity ");
        push_apart_failed(&mut why, similarity, " < ", threshold);
        Err(why)
    }
}

// ---------------------------------------------------------------------------------------------
// Formatting

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Compact JSON, cut to 60 characters.
fn brief(v: &Value) -> String {
    truncate(&v.to_string(), 60)
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max - 1).collect();
    out.push('…');
    out
}

/// A number for people: 6 significant digits, no trailing zeros (`0.020000000000000018` → `0.02`).
fn fmt_num(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{}", if x == 0.0 { 0.0 } else { x });
    }
    let magnitude = x.abs().log10().floor() as i32;
    if !(-6..15).contains(&magnitude) {
        return format!("{x:e}");
    }
    let decimals = (5 - magnitude).clamp(0, 12) as usize;
    let s = fixed(x, decimals);
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Two numbers with 2 decimals, or more when 2 would make a failed comparison read as equal
/// (`0.849 < 0.85` must not print as `0.85 < 0.85`).
fn fmt_apart(x: f64, y: f64, passed: bool) -> (String, String) {
    for decimals in 2..=6 {
        let (p, q) = (fixed(x, decimals), fixed(y, decimals));
        if passed || p != q {
            return (trim_decimals(p), trim_decimals(q));
        }
    }
    (x.to_string(), y.to_string())
}

/// `x`, `sep` and `y` the way [`fmt_apart`] prints a failed comparison (`0.73 < 0.85`),
/// appended straight to `out`. Every fuzzy miss writes this into its `why`, and every failed
/// verdict into its reasoning: going through `fmt_apart` costs two strings per attempt and a
/// text comparison, more than comparing the field. Here the numbers stay integers (rounded at
/// `decimals`) until they differ, and only then are written.
fn push_apart_failed(out: &mut String, x: f64, sep: &str, y: f64) {
    for decimals in 2..=6 {
        let (Some(p), Some(q)) = (rounded(x, decimals), rounded(y, decimals)) else {
            // Outside the fast path (huge, not finite, at a rounding tie): the general code.
            let (s, t) = fmt_apart(x, y, false);
            out.push_str(&s);
            out.push_str(sep);
            out.push_str(&t);
            return;
        };
        // Same decimals, so equal integers are equal text.
        if p != q {
            push_trimmed(out, p, decimals);
            out.push_str(sep);
            push_trimmed(out, q, decimals);
            return;
        }
    }
    let _ = write!(out, "{x}{sep}{y}");
}

/// Appends a number as [`trim_decimals`] leaves its text: at least two decimals, no zeros
/// beyond them.
fn push_trimmed(out: &mut String, mut n: Rounded, mut decimals: usize) {
    while decimals > 2 && n.scaled % 10 == 0 {
        n.scaled /= 10;
        decimals -= 1;
    }
    push_scaled(out, n, decimals);
}

fn trim_decimals(mut s: String) -> String {
    // Keep two decimals (0.80), but drop zeros beyond them (0.8500 → 0.85).
    let Some(dot) = s.find('.') else { return s };
    let keep = (dot + 3).max(s.trim_end_matches('0').len()).min(s.len());
    s.truncate(keep);
    s
}

/// `format!("{x:.decimals$}")` (see [`push_fixed`]).
fn fixed(x: f64, decimals: usize) -> String {
    let mut out = String::with_capacity(24);
    push_fixed(&mut out, x, decimals);
    out
}

/// Appends `format!("{x:.decimals$}")`. Every verdict prints its score and threshold, and the
/// exact float formatter behind `format!` costs more than scoring a field; for the numbers
/// printed here (small, not at a rounding tie) scaling to an integer gives the same text (see
/// [`rounded`]). Anything else goes to `format!`.
fn push_fixed(out: &mut String, x: f64, decimals: usize) {
    match rounded(x, decimals) {
        Some(n) => push_scaled(out, n, decimals),
        None => {
            let _ = write!(out, "{x:.decimals$}");
        }
    }
}

/// A number rounded to some count of decimals, as `format!` writes it: a sign and the digits
/// as one integer (`-0.849` at 2 decimals is `-`, 85). At the same decimals, two are the same
/// text exactly when they are equal.
#[derive(Clone, Copy, PartialEq)]
struct Rounded {
    negative: bool,
    scaled: u64,
}

/// `x` rounded to `decimals` decimals, when [`push_scaled`] then writes exactly
/// `format!("{x:.decimals$}")`: for small numbers away from a rounding tie. `None` otherwise.
fn rounded(x: f64, decimals: usize) -> Option<Rounded> {
    let pow = *POW10.get(decimals)?;
    // `format!` writes a negative number as `-` and its magnitude, and so -0.0 as `-0`: a
    // score with no hit is -0.0, the sum of no weights.
    let negative = x.is_sign_negative();
    let magnitude = x.abs();
    let scaled = magnitude * pow as f64;
    // Below 2^32 the product is within 1e-6 of the exact decimal value, so away from a tie
    // (.5) rounding it rounds the exact value; `magnitude >= 0.0` turns away NaN.
    // `as` and a subtraction rather than `round`/`fract`, which are library calls on
    // the baseline x86-64 target.
    let whole = scaled as u64;
    let frac = scaled - whole as f64;
    (magnitude >= 0.0 && scaled < 4e9 && (frac - 0.5).abs() > 1e-3).then(|| Rounded {
        negative,
        scaled: whole + u64::from(frac > 0.5),
    })
}

/// Appends `n` with exactly `decimals` decimals (at most 12).
fn push_scaled(out: &mut String, n: Rounded, decimals: usize) {
    // Right to left into one buffer, copied out once: the decimals, the point, the whole
    // part (at least one digit), the sign. A miss writes two numbers, so this is hot.
    let mut buf = [0u8; 32];
    let mut start = buf.len();
    let mut rest = n.scaled;
    let mut push = |byte: u8| {
        start -= 1;
        buf[start] = byte;
    };
    for _ in 0..decimals {
        push(b'0' + (rest % 10) as u8);
        rest /= 10;
    }
    if decimals > 0 {
        push(b'.');
    }
    loop {
        push(b'0' + (rest % 10) as u8);
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if n.negative {
        push(b'-');
    }
    out.extend(buf[start..].iter().map(|&b| char::from(b)));
}

const POW10: [u64; 13] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
    1_000_000_000,
    10_000_000_000,
    100_000_000_000,
    1_000_000_000_000,
];

/// Appends `n` in decimal, zero-padded to at least `width` digits (at most 20).
fn push_digits(out: &mut String, mut n: u64, width: usize) {
    let mut buf = [b'0'; 20];
    let mut start = buf.len();
    while n > 0 || start == buf.len() {
        start -= 1;
        buf[start] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    start = start.min(buf.len() - width.min(buf.len()));
    out.extend(buf[start..].iter().map(|&b| char::from(b)));
}

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
            for (c, (cell, w)) in line.iter().zip(widths).enumerate() {
                text.push_str(cell);
                if c + 1 < line.len() {
                    let pad = w - cell.chars().count() + 2;
                    text.push_str(&" ".repeat(pad));
                }
            }
            let text = text.trim_end();
            let _ = writeln!(out, "{}", paint(code, text));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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

    fn ymd(y: i32, m: u32, d: u32) -> Option<NaiveDate> {
        NaiveDate::from_ymd_opt(y, m, d)
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
        assert_eq!(
            miss(abs(0.01), json!(1500), json!("1,500.00")),
            "actual \"1,500.00\" is not a number"
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
    fn default_date_formats_each_parse() {
        let d = ymd(2025, 1, 15);
        for (text, format) in [
            ("2025-01-15", "YYYY-MM-DD"),
            ("2025/01/15", "YYYY/MM/DD"),
            ("2025.01.15", "YYYY.MM.DD"),
            ("20250115", "YYYYMMDD"),
            ("15-JAN-2025", "DD-MMM-YYYY"),
            ("15 Jan 2025", "DD MMM YYYY"),
            ("15/jan/2025", "DD/MMM/YYYY"),
            ("15.Jan.2025", "DD.MMM.YYYY"),
            ("Jan 15, 2025", "MMM DD, YYYY"),
            ("January 15 2025", "MMM DD YYYY"),
            ("15 January, 2025", "DD MMM, YYYY"),
            ("15-JAN-25", "DD-MMM-YY"),
        ] {
            let f = DateFormat::parse(format).unwrap();
            assert_eq!(f.parse_date(text), d, "{text} in {format}");
            assert!(default_date_formats().contains(&f), "{format} is a default");
            assert_eq!(read_date(text, &[]).ok(), d, "{text} with the defaults");
        }
        assert_eq!(default_date_formats().len(), 12);
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
    fn strftime_formats() {
        let f = |s: &str| DateFormat::parse(s).unwrap();
        assert_eq!(f("%d/%m/%Y").parse_date("03/02/2025"), ymd(2025, 2, 3));
        assert_eq!(
            f("%-d %B %Y").parse_date("3 february 2025"),
            ymd(2025, 2, 3)
        );
        assert_eq!(f("%b %e, %Y").parse_date("Feb 3, 2025"), ymd(2025, 2, 3));
        assert_eq!(f("%F").parse_date("2025-02-03"), ymd(2025, 2, 3));
        assert_eq!(f("%d.%m.%y").parse_date("03.02.99"), ymd(1999, 2, 3));
        assert_eq!(f("%d.%m.%y").parse_date("03.02.68"), ymd(2068, 2, 3));
        assert!(date("2025-02-03", "03/02/2025", &["%d/%m/%Y"]));
        let err = DateFormat::parse("%Y-%m-%d %H:%M").unwrap_err();
        assert!(err.contains("`%H` is not supported"), "{err}");
    }

    #[test]
    fn malformed_formats_are_errors() {
        for (bad, needle) in [
            ("DD-MMM-YYY", "`YYY` is not a token"),
            ("DD-MMMMM-YYYY", "`MMMMM`"),
            ("yyyy-mm-dd", "minutes"),
            ("DD-MM", "exactly once"),
            ("DD-MM-YYYY-DD", "exactly once"),
            ("DD/MM/YYYY Q", "letters other than"),
        ] {
            let err = DateFormat::parse(bad).unwrap_err();
            assert!(err.contains(needle), "{bad}: {err}");
        }
        assert!(DateFormat::parse("yyyy-MM-dd").is_ok());
        assert!(DateFormat::parse("YYYY-MM-DDTHH").is_err());
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
        assert_eq!(strip_ansi(&colored), text);
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

    #[test]
    fn a_replaced_path_is_not_shadowed_by_the_cached_one() {
        let mut spec = FieldSpec::exact("a");
        spec.path = Pattern::parse("b").unwrap();
        let config = FieldAccuracyConfig::new().field(spec);
        let v = evaluate(&json!({"a": 1, "b": 2}), &json!({"a": 1, "b": 3}), &config);
        assert_eq!(v.misses[0].path.to_string(), "b");
    }

    #[test]
    fn fixed_agrees_with_format() {
        let mut samples = vec![
            0.0,
            1.0,
            0.5,
            0.75,
            0.125,
            0.005,
            0.015,
            0.849,
            0.85,
            0.8333333,
            0.9999999,
            0.995,
            1e-9,
            3.0,
            1234.5678,
            0.020000000000000018,
            4e9,
            1e300,
            -0.0,
            -0.5,
            f64::NAN,
            f64::INFINITY,
            -0.001,
            -0.005,
            -1e-9,
            -f64::NAN,
            f64::NEG_INFINITY,
        ];
        let mut state = 1u64;
        for _ in 0..20_000 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let unit = (state >> 11) as f64 / (1u64 << 53) as f64;
            samples.push(unit);
            samples.push(unit * 1e4);
            samples.push(-unit);
            samples.push(unit * -1e4);
            // Ratios of small integers, as scores and similarities are.
            samples.push(((state >> 40) % 97) as f64 / (((state >> 20) % 97) + 1) as f64);
        }
        for x in samples {
            for decimals in 0..=14 {
                assert_eq!(
                    fixed(x, decimals),
                    format!("{x:.decimals$}"),
                    "{x:?} {decimals}"
                );
            }
        }
        for n in [0, 7, 10, 99, 100, 12345, u64::MAX] {
            for width in [0, 1, 2, 5, 12, 20] {
                let mut s = String::new();
                push_digits(&mut s, n, width);
                assert_eq!(s, format!("{n:0width$}"), "{n} {width}");
            }
        }
    }

    #[test]
    fn number_formatting() {
        assert_eq!(fmt_num(0.020000000000000018), "0.02");
        assert_eq!(fmt_num(1234.5678), "1234.57");
        assert_eq!(fmt_num(0.0125), "0.0125");
        assert_eq!(fmt_num(3.0), "3");
        assert_eq!(fmt_num(1e-9), "1e-9");
        assert_eq!(
            fmt_apart(0.8333, 0.75, true),
            ("0.83".to_string(), "0.75".to_string())
        );
        assert_eq!(
            fmt_apart(0.849, 0.85, false),
            ("0.849".to_string(), "0.85".to_string())
        );
    }

    #[test]
    fn push_apart_failed_agrees_with_fmt_apart() {
        let mut samples = vec![
            (0.849, 0.85),
            (0.8499999, 0.85),
            (0.84999999999, 0.85),
            (0.85, 0.85),
            (0.7333333333333334, 0.85),
            (0.0, 0.85),
            (0.0, 0.0),
            (1.0, 0.5),
            (0.125, 0.5),
            (0.995, 1.0),
            (1234.5678, 1234.5679),
            (4e9, 4e9 + 1.0),
            (-0.5, 0.5),
            (-0.0, 1.0),
            (-0.0, 0.0),
            (-0.001, 0.0),
            (f64::NAN, 0.5),
            (-f64::NAN, 0.5),
            (f64::INFINITY, 0.5),
        ];
        let mut state = 3u64;
        for _ in 0..20_000 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Similarities (ratios of small integers) against thresholds with 0 to 4 decimals.
            let x = ((state >> 40) % 97) as f64 / (((state >> 20) % 97) + 1) as f64;
            let y = ((state >> 8) % 10_001) as f64 / 10f64.powi(((state >> 4) % 5) as i32);
            samples.push((x, y));
            // Close pairs, which need more decimals to print apart (or all of them).
            samples.push((x, x + 1e-4));
            samples.push((x, x + 1e-7));
        }
        for (x, y) in samples {
            let (s, t) = fmt_apart(x, y, false);
            let mut out = "similarity ".to_string();
            push_apart_failed(&mut out, x, " < ", y);
            assert_eq!(out, format!("similarity {s} < {t}"), "{x:?} {y:?}");
        }
    }
}
