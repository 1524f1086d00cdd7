//! The `[field_accuracy]` table: which fields are scored, how each is compared and how much it
//! counts, read from TOML or built in Rust.

use crate::dates::DateFormat;
use crate::fuzzy::Algorithm;
use crate::path::{Location, Pattern, PatternSegment, Segment};
use serde::Deserialize;
use std::fmt;
use std::sync::Arc;

/// Rounding slack forgiven when a score or a similarity is compared with its threshold, so that
/// weights like 0.1 + 0.2 add up.
pub(super) const SCORE_EPSILON: f64 = 1e-9;

/// How the counted fields become one score (`aggregation = "..."`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
        /// The formats tried in order; empty means
        /// [`default_date_formats`](crate::dates::default_date_formats).
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
#[cfg_attr(
    feature = "schema",
    derive(schemars::JsonSchema),
    schemars(with = "RawFieldSpec")
)]
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
#[cfg_attr(
    feature = "schema",
    derive(schemars::JsonSchema),
    schemars(with = "RawConfig")
)]
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
    pub(super) fn location(&self) -> Option<Arc<Location>> {
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
