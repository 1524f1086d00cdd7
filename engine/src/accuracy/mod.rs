//! Field-by-field scoring (`[field_accuracy]`): each configured field of the expected document
//! is a hit or a miss, and the hits' weights make the score.
//!
//! A field is named by a [`Pattern`](crate::path::Pattern) and compared by one [`Matcher`]:
//! `exact` (deep equality), `numeric_tolerance`, `date` (calendar dates, read as
//! [`crate::dates`] says, no time zone involved) or `fuzzy` (string similarity, see
//! [`crate::fuzzy`]). The engine is pure: it takes two `serde_json::Value`s and a config and
//! returns an [`AccuracyVerdict`].
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
//! - Numbers: numeric strings (`"1500.00"`, `"1,500.00"`, read as [`crate::numbers`] says)
//!   count as numbers for `numeric_tolerance`; differences below floating-point rounding count
//!   as zero, so `100.01` is within `0.01` of `100`. `relative = true` measures
//!   `|a - e| / |e|`, and falls back to the absolute difference when `e` is 0.
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

// One file per concept. They reach each other by their own paths (`super::config::FieldSpec`),
// never through these re-exports, so the order config → matchers → scoring → render stays
// one-way.
mod config;
mod matchers;
mod render;
mod scoring;
mod text;

pub use crate::dates::{default_date_formats, DateFormat};
pub use config::{Aggregation, ArrayMatch, FieldAccuracyConfig, FieldSpec, MatchKind, Matcher};
pub use scoring::{evaluate, AccuracyVerdict, FieldHit, FieldMiss, FieldSkip};

/// One value compared by a field's matcher, outside any score: `Err` says why it missed. For the
/// trajectory evaluator's `[[trajectory.fields]]`, which apply these matchers to arguments.
pub(crate) fn compare_one(
    spec: &FieldSpec,
    expected: &serde_json::Value,
    actual: &serde_json::Value,
) -> Result<(), String> {
    matchers::compare_field(spec, expected, actual).map(|_| ())
}

/// Whether one value matches by a field's matcher, without writing why not.
pub(crate) fn holds(
    spec: &FieldSpec,
    expected: &serde_json::Value,
    actual: &serde_json::Value,
) -> bool {
    matchers::field_holds(spec, expected, actual)
}
