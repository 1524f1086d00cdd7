//! Strict comparison of expected and actual proposals: the `strict` evaluator.
//!
//! [`evaluate`] takes the fixture's `expected` (an array of proposals, or one object), what the
//! code under test produced, a [`StrictConfig`] and a [`Context`], and returns a [`StrictVerdict`]:
//! score 1 or 0, every [`Mismatch`] with its full path, and the normalized documents. It is pure:
//! no clock, no environment, no files.
//!
//! The flow: each expected proposal's `ignore_paths` (or `ignorePaths`) key is taken
//! out and replaces the active ignore list for that proposal. Actual proposals are always
//! normalized. If any transformer reads its conditions from the actual
//! (`condition_target = "actual"`), expected proposals are compared as written (the paired flow);
//! otherwise they are normalized too. Proposals are then paired, in order or by optimal
//! assignment (`any_order`: the pairing with the fewest mismatches overall), transformers are
//! applied to each pair, and each pair is compared.
//!
//! A transformer that adds a missing field (`on_missing = "add"`, `add_missing_only`) writes
//! through its path, creating objects on the way. Where a side cannot take the write (a scalar,
//! or an array too short, where the path goes on) the write is skipped and that side stays
//! exactly as it was: no empty object is left behind, and no mismatch is added for it. What
//! stood in the way is then compared like anything else, so it is reported wherever the two
//! sides differ there. A rewrite (`on_existing = "transform"`) writes where a value already is,
//! which is never blocked.
//!
//! Numbers compare by value (`1` equals `1.0`); everything else compares exactly. A pattern in
//! an ignore list is read from the proposal (`newValue`, `items[*].sku`), unless it starts with an
//! index (`[0].newValue`, `[*].newValue`): then it is read from the list of proposals, so a path
//! copied from a failure can be pasted as it is.
//!
//! ```
//! use proposal_eval_engine::compare::{evaluate, StrictConfig};
//! use proposal_eval_engine::transform::Context;
//! use serde_json::json;
//! let config = StrictConfig::new().ignore_path("metadata.*").unwrap();
//! let expected = json!([{"changeType": "change", "newValue": 120, "metadata": {"id": "a"}}]);
//! let actual = json!([{"changeType": "change", "newValue": "120", "metadata": {"id": "b"}}]);
//! let verdict = evaluate(&expected, &actual, &config, None, &Context::at("2025-03-04T15:16:17Z".parse().unwrap()));
//! assert!(!verdict.passed());
//! assert_eq!(
//!     verdict.mismatches[0].to_string(),
//!     r#"[0].newValue: values differ: expected 120, actual "120""#
//! );
//! ```

use crate::assignment::assign;
pub use crate::json::json_eq;
use crate::normalize::{normalize, NormalizationRule};
use crate::path::{
    Location, MatchFrame, Matcher, PathError, Pattern, PatternSegment, Segment, SegmentRef,
};
use crate::transform::{ConditionTarget, Context, OnExisting, OnMissing, Transformer};
use serde::Deserialize;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// How expected and actual proposals are paired.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Matching {
    /// The n-th expected with the n-th actual.
    #[default]
    Ordered,
    /// The pairing with the fewest mismatches overall (optimal assignment).
    AnyOrder,
}

/// `[strict]`: how proposals are normalized, transformed, paired and compared.
///
/// From TOML (inside `proposal-eval.toml`), or built in Rust, where a transform may be a closure:
///
/// ```
/// use proposal_eval_engine::compare::{Matching, StrictConfig};
/// use proposal_eval_engine::transform::{Builtin, Condition, ConditionTarget, Strategy, Transformer};
/// let config = StrictConfig::new()
///     .matching(Matching::AnyOrder)
///     .ignore_path("mutationVariables.metadata.*")?
///     .transformer(
///         "mutationVariables.data.effectiveDate",
///         Transformer::new(Builtin::TodayUtcMidnight, Strategy::AddMissingOnly)
///             .condition_target(ConditionTarget::Actual)
///             .when(Condition::equals("changeType", "change")?),
///     )?;
/// assert_eq!(config.transformers.len(), 1);
/// # Ok::<(), proposal_eval_engine::path::PathError>(())
/// ```
#[derive(Clone, Debug, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", schemars(transform = strict_aliases))]
pub struct StrictConfig {
    /// `ordered` (default) or `any_order`.
    #[serde(default)]
    pub matching: Matching,
    /// Paths never compared, in every proposal (a case's or a proposal's own list replaces it).
    #[serde(default, alias = "ignorePaths")]
    pub ignore_paths: Vec<Pattern>,
    /// The path read to pick a normalization rule (default `changeType`).
    #[serde(default, deserialize_with = "crate::path::deserialize_opt_location")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<String>"))]
    pub discriminator: Option<Location>,
    /// `[[strict.normalization]]` rules; none means proposals are compared as they are.
    #[serde(default)]
    pub normalization: Vec<NormalizationRule>,
    /// `[strict.transformers."path"]`: transformers by the path they rewrite.
    #[serde(default, deserialize_with = "deserialize_transformers")]
    #[cfg_attr(feature = "schema", schemars(with = "BTreeMap<String, Transformer>"))]
    pub transformers: Vec<(Pattern, Transformer)>,
}

fn deserialize_transformers<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Vec<(Pattern, Transformer)>, D::Error> {
    BTreeMap::<String, Transformer>::deserialize(d)?
        .into_iter()
        .map(|(k, t)| {
            Pattern::parse(&k)
                .map(|p| (p, t))
                .map_err(serde::de::Error::custom)
        })
        .collect()
}

impl StrictConfig {
    /// The default: ordered, nothing ignored, no rules, no transformers.
    pub fn new() -> StrictConfig {
        StrictConfig::default()
    }

    /// Sets how proposals are paired.
    pub fn matching(mut self, matching: Matching) -> Self {
        self.matching = matching;
        self
    }

    /// Adds a path to ignore.
    pub fn ignore_path(mut self, pattern: &str) -> Result<Self, PathError> {
        self.ignore_paths.push(Pattern::parse(pattern)?);
        Ok(self)
    }

    /// Sets the discriminator path.
    pub fn discriminator(mut self, path: &str) -> Result<Self, PathError> {
        self.discriminator = Some(Location::parse(path)?);
        Ok(self)
    }

    /// Adds a normalization rule.
    pub fn normalization(mut self, rule: NormalizationRule) -> Self {
        self.normalization.push(rule);
        self
    }

    /// Adds a transformer for the fields at `path`.
    pub fn transformer(mut self, path: &str, transformer: Transformer) -> Result<Self, PathError> {
        self.transformers.push((Pattern::parse(path)?, transformer));
        Ok(self)
    }

    /// The discriminator path, `changeType` unless configured.
    pub fn discriminator_location(&self) -> Location {
        self.discriminator
            .clone()
            .unwrap_or_else(|| Location(vec![Segment::Key("changeType".into())]))
    }

    /// Whether the paired flow is on: some transformer reads its conditions from the actual.
    pub fn paired_flow(&self) -> bool {
        self.transformers
            .iter()
            .any(|(_, t)| t.condition_target == ConditionTarget::Actual)
    }
}

/// What kind of difference a [`Mismatch`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MismatchKind {
    /// A field of the expected proposal is not in the actual one.
    MissingInActual,
    /// The actual proposal has a field the expected one does not.
    ExtraInActual,
    /// Two scalars differ (`120` and `"120"` too).
    ValuesDiffer,
    /// An object or array on one side, something else on the other.
    TypeDiffers,
    /// Different numbers of proposals.
    CountDiffers,
    /// An expected proposal with no actual partner.
    UnmatchedExpected,
    /// An actual proposal with no expected partner.
    UnmatchedActual,
    /// A proposal whose discriminator matches no normalization rule.
    NoNormalizationRule,
    /// A transformer with `on_missing = "fail"` found its field missing.
    TransformerFailed,
    /// An expected proposal's own `ignore_paths` could not be read.
    InvalidIgnorePaths,
}

/// One difference, with its full path in the path grammar.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Mismatch {
    /// What kind of difference.
    pub kind: MismatchKind,
    /// Where: `[0].newValue` in a list of proposals (the expected proposal's index), `newValue`
    /// when one object was compared with another.
    pub location: Location,
    /// The actual proposal's index, when it differs from the one in `location` (`any_order`
    /// pairing, or a mismatch about an actual proposal).
    pub actual_index: Option<usize>,
    /// The expected value there, if any.
    pub expected: Option<Value>,
    /// The actual value there, if any.
    pub actual: Option<Value>,
    /// More words, for the kinds that need them.
    pub detail: Option<String>,
}

/// The strict evaluator's verdict. It borrows the inputs when nothing had to be rewritten, so a
/// passing comparison copies nothing; [`StrictVerdict::into_owned`] detaches it.
#[derive(Clone, Debug)]
pub struct StrictVerdict<'a> {
    /// 1 when there is no mismatch, else 0.
    pub score: f64,
    /// Every mismatch: count, normalization and transformer problems first, then each pair in
    /// expected order, then unmatched proposals.
    pub mismatches: Vec<Mismatch>,
    /// Expected after normalization and transformers (without `ignore_paths` keys).
    pub expected_normalized: Cow<'a, Value>,
    /// Actual after normalization and transformers.
    pub actual_normalized: Cow<'a, Value>,
    /// (expected index, actual index) of each pair that was compared.
    pub pairs: Vec<(usize, usize)>,
    pub(crate) ignores: Ignores<'a>,
}

/// The ignore lists in force, kept for rendering.
#[derive(Clone, Debug)]
pub(crate) struct Ignores<'a> {
    /// Whether proposals came as a list (paths get an `[i]` prefix).
    pub(crate) list: bool,
    /// The case's or the suite's list.
    pub(crate) default: Cow<'a, [Pattern]>,
    /// Per expected proposal, its own list (empty when none has one).
    pub(crate) own: Vec<Option<Vec<Pattern>>>,
}

impl Ignores<'_> {
    pub(crate) fn for_expected(&self, i: usize) -> &[Pattern] {
        match self.own.get(i) {
            Some(Some(own)) => own,
            _ => &self.default,
        }
    }
}

impl<'a> StrictVerdict<'a> {
    /// Whether the comparison passed (score 1).
    pub fn passed(&self) -> bool {
        self.mismatches.is_empty()
    }

    /// A verdict that owns everything.
    pub fn into_owned(self) -> StrictVerdict<'static> {
        StrictVerdict {
            score: self.score,
            mismatches: self.mismatches,
            expected_normalized: Cow::Owned(self.expected_normalized.into_owned()),
            actual_normalized: Cow::Owned(self.actual_normalized.into_owned()),
            pairs: self.pairs,
            ignores: Ignores {
                list: self.ignores.list,
                default: Cow::Owned(self.ignores.default.into_owned()),
                own: self.ignores.own,
            },
        }
    }
}

const IGNORE_KEYS: [&str; 2] = ["ignore_paths", "ignorePaths"];

/// Compares expected with actual proposals. See the [module docs](self) for the flow.
///
/// `expected` is the fixture's `expected` array; `actual` what the code under test produced. If
/// both are objects they are compared as one proposal. `case_ignore_paths`, when given, replaces
/// `config.ignore_paths`.
pub fn evaluate<'a>(
    expected: &'a Value,
    actual: &'a Value,
    config: &'a StrictConfig,
    case_ignore_paths: Option<&'a [Pattern]>,
    ctx: &Context,
) -> StrictVerdict<'a> {
    let default_ignore: &'a [Pattern] = case_ignore_paths.unwrap_or(&config.ignore_paths);
    let (exp_items, act_items, list) = match (expected, actual) {
        (Value::Array(e), Value::Array(a)) => (e.as_slice(), a.as_slice(), true),
        (Value::Object(_), Value::Object(_)) => (
            std::slice::from_ref(expected),
            std::slice::from_ref(actual),
            false,
        ),
        _ => return shape_verdict(expected, actual, default_ignore),
    };
    let prefix = |i: usize| if list { Some(i) } else { None };
    let mut mismatches = Vec::new();

    // Each expected proposal's own ignore list; the key itself is never compared.
    let mut own: Vec<Option<Vec<Pattern>>> = Vec::new();
    let mut exp: Vec<Cow<'a, Value>> = Vec::with_capacity(exp_items.len());
    for (i, e) in exp_items.iter().enumerate() {
        let Some(map) = e
            .as_object()
            .filter(|m| IGNORE_KEYS.iter().any(|k| m.contains_key(*k)))
        else {
            exp.push(Cow::Borrowed(e));
            continue;
        };
        let mut map = map.clone();
        let mut list_here = Vec::new();
        for key in IGNORE_KEYS {
            let Some(raw) = map.remove(key) else { continue };
            match serde_json::from_value::<Vec<Pattern>>(raw) {
                Ok(patterns) => list_here.extend(patterns),
                Err(err) => mismatches.push(Mismatch {
                    kind: MismatchKind::InvalidIgnorePaths,
                    location: located(prefix(i), &[SegmentRef::Key(key)]),
                    actual_index: None,
                    expected: None,
                    actual: None,
                    detail: Some(err.to_string()),
                }),
            }
        }
        own.resize(exp_items.len(), None);
        own[i] = Some(list_here);
        exp.push(Cow::Owned(Value::Object(map)));
    }
    let ignores = Ignores {
        list,
        default: Cow::Borrowed(default_ignore),
        own,
    };

    // Normalization: actual always, expected unless the paired flow is on.
    let mut act: Vec<Cow<'a, Value>> = act_items.iter().map(Cow::Borrowed).collect();
    // Proposals that no rule fits: reported once, their contents not compared (a raw proposal
    // against a normalized one would only add noise).
    let (mut no_rule_e, mut no_rule_a) = (Vec::new(), Vec::new());
    if !config.normalization.is_empty() {
        let discriminator = &config.discriminator_location();
        let run = |items: &mut Vec<Cow<'a, Value>>,
                   side: &str,
                   mismatches: &mut Vec<_>,
                   failed: &mut Vec<usize>| {
            for (i, item) in items.iter_mut().enumerate() {
                match normalize(item, &config.normalization, discriminator, ctx) {
                    Ok(v) => *item = Cow::Owned(v),
                    Err(no_rule) => {
                        failed.push(i);
                        mismatches.push(Mismatch {
                            kind: MismatchKind::NoNormalizationRule,
                            location: located(prefix(i), &[]),
                            actual_index: (side == "actual").then_some(i),
                            expected: None,
                            actual: None,
                            detail: Some(format!("{side} proposal: {no_rule}")),
                        })
                    }
                }
            }
        };
        if !config.paired_flow() {
            run(&mut exp, "expected", &mut mismatches, &mut no_rule_e);
        }
        run(&mut act, "actual", &mut mismatches, &mut no_rule_a);
    }

    let (n, m) = (exp.len(), act.len());
    if n != m {
        mismatches.insert(
            0,
            Mismatch {
                kind: MismatchKind::CountDiffers,
                location: Location::root(),
                actual_index: None,
                expected: Some(Value::from(n)),
                actual: Some(Value::from(m)),
                detail: None,
            },
        );
    }

    let pairs: Vec<(usize, usize)> = match config.matching {
        Matching::Ordered => (0..n.min(m)).map(|i| (i, i)).collect(),
        Matching::AnyOrder => {
            if n == 1 && m == 1 {
                vec![(0, 0)]
            } else {
                let cost: Vec<Vec<usize>> = (0..n)
                    .map(|i| {
                        (0..m)
                            .map(|j| {
                                let mut counter = Counter(0);
                                compare_prepared(
                                    &exp[i],
                                    &act[j],
                                    &config.transformers,
                                    ignores.for_expected(i),
                                    prefix(i),
                                    ctx,
                                    &mut counter,
                                );
                                counter.0
                            })
                            .collect()
                    })
                    .collect();
                assign(&cost)
            }
        }
    };

    for &(i, j) in &pairs {
        if no_rule_e.contains(&i) || no_rule_a.contains(&j) {
            continue;
        }
        let mut sink = Collector {
            out: &mut mismatches,
            prefix: prefix(i),
            actual_index: (list && i != j).then_some(j),
        };
        let (new_e, new_a) = {
            let (te, ta) = compare_prepared(
                &exp[i],
                &act[j],
                &config.transformers,
                ignores.for_expected(i),
                prefix(i),
                ctx,
                &mut sink,
            );
            (owned_if_changed(te), owned_if_changed(ta))
        };
        if let Some(v) = new_e {
            exp[i] = Cow::Owned(v);
        }
        if let Some(v) = new_a {
            act[j] = Cow::Owned(v);
        }
    }

    // Unmatched proposals are described by their discriminator, even without rules.
    let describe = |v: &Value| -> Option<String> {
        let d = config.discriminator_location();
        d.get(v).map(|found| format!("{d} = {found}"))
    };
    if pairs.len() < n.max(m) {
        let mut paired_e = vec![false; n];
        let mut paired_a = vec![false; m];
        for &(i, j) in &pairs {
            paired_e[i] = true;
            paired_a[j] = true;
        }
        for i in (0..n).filter(|i| !paired_e[*i]) {
            mismatches.push(Mismatch {
                kind: MismatchKind::UnmatchedExpected,
                location: located(prefix(i), &[]),
                actual_index: None,
                expected: Some(exp[i].clone().into_owned()),
                actual: None,
                detail: describe(&exp[i]),
            });
        }
        for j in (0..m).filter(|j| !paired_a[*j]) {
            mismatches.push(Mismatch {
                kind: MismatchKind::UnmatchedActual,
                location: located(prefix(j), &[]),
                actual_index: Some(j),
                expected: None,
                actual: Some(act[j].clone().into_owned()),
                detail: describe(&act[j]),
            });
        }
    }

    let whole = |items: Vec<Cow<'a, Value>>, original: &'a Value| -> Cow<'a, Value> {
        if items.iter().all(|c| matches!(c, Cow::Borrowed(_))) {
            Cow::Borrowed(original)
        } else if list {
            Cow::Owned(Value::Array(
                items.into_iter().map(Cow::into_owned).collect(),
            ))
        } else {
            items.into_iter().next().expect("one proposal")
        }
    };
    StrictVerdict {
        score: if mismatches.is_empty() { 1.0 } else { 0.0 },
        mismatches,
        expected_normalized: whole(exp, expected),
        actual_normalized: whole(act, actual),
        pairs,
        ignores,
    }
}

fn shape_verdict<'a>(
    expected: &'a Value,
    actual: &'a Value,
    default_ignore: &'a [Pattern],
) -> StrictVerdict<'a> {
    let list = expected.is_array();
    StrictVerdict {
        score: 0.0,
        mismatches: vec![Mismatch {
            kind: MismatchKind::TypeDiffers,
            location: Location::root(),
            actual_index: None,
            expected: Some(expected.clone()),
            actual: Some(actual.clone()),
            detail: Some(if list {
                "expected a list of proposals".into()
            } else {
                "expected one proposal (an object)".into()
            }),
        }],
        expected_normalized: Cow::Borrowed(expected),
        actual_normalized: Cow::Borrowed(actual),
        pairs: Vec::new(),
        ignores: Ignores {
            list,
            default: Cow::Borrowed(default_ignore),
            own: Vec::new(),
        },
    }
}

fn owned_if_changed(value: Cow<'_, Value>) -> Option<Value> {
    match value {
        Cow::Owned(v) => Some(v),
        Cow::Borrowed(_) => None,
    }
}

fn located(prefix: Option<usize>, path: &[SegmentRef<'_>]) -> Location {
    let mut segments = Vec::with_capacity(path.len() + 1);
    if let Some(i) = prefix {
        segments.push(Segment::Index(i));
    }
    segments.extend(path.iter().map(|s| s.to_segment()));
    Location(segments)
}

/// Applies the transformers to one pair, reports their failures, compares the result, and
/// returns the (possibly rewritten) pair.
fn compare_prepared<'v, S: Sink>(
    e: &'v Value,
    a: &'v Value,
    transformers: &[(Pattern, Transformer)],
    patterns: &[Pattern],
    prefix: Option<usize>,
    ctx: &Context,
    sink: &mut S,
) -> (Cow<'v, Value>, Cow<'v, Value>) {
    let (te, ta) = if transformers.is_empty() {
        (Cow::Borrowed(e), Cow::Borrowed(a))
    } else {
        apply_transformers(e, a, transformers, ctx, sink)
    };
    diff_pair(&te, &ta, patterns, prefix, sink);
    (te, ta)
}

#[derive(Clone, Copy, PartialEq)]
enum Side {
    Expected,
    Actual,
}

/// Runs every transformer on a pair. Conditions are read from the pair as it was before any
/// transformer ran; a side is copied only when something on it changes.
fn apply_transformers<'v, S: Sink>(
    e: &'v Value,
    a: &'v Value,
    transformers: &[(Pattern, Transformer)],
    ctx: &Context,
    sink: &mut S,
) -> (Cow<'v, Value>, Cow<'v, Value>) {
    let mut te = Cow::Borrowed(e);
    let mut ta = Cow::Borrowed(a);
    for (pattern, t) in transformers {
        let holds = |own: &Value| {
            let source = match t.condition_target {
                ConditionTarget::Own => own,
                ConditionTarget::Actual => a,
                ConditionTarget::Expected => e,
            };
            t.conditions_hold(source)
        };
        let do_e = t.apply_to.expected() && holds(e);
        let do_a = t.apply_to.actual() && holds(a);
        if !do_e && !do_a {
            continue;
        }
        if let Some(segments) = concrete(pattern) {
            apply_at(
                &mut te,
                &mut ta,
                segments,
                t,
                (do_e, do_a),
                ctx,
                sink,
                || pattern.as_location().expect("concrete"),
            );
        } else {
            let mut locations = pattern.find(&te);
            locations.extend(pattern.find(&ta));
            locations.sort();
            locations.dedup();
            for location in locations {
                let segments: Vec<PatternSegment> = location
                    .segments()
                    .iter()
                    .map(|s| match s {
                        Segment::Key(k) => PatternSegment::Key(k.clone()),
                        Segment::Index(i) => PatternSegment::Index(*i),
                    })
                    .collect();
                apply_at(
                    &mut te,
                    &mut ta,
                    &segments,
                    t,
                    (do_e, do_a),
                    ctx,
                    sink,
                    || location.clone(),
                );
            }
        }
    }
    (te, ta)
}

fn concrete(pattern: &Pattern) -> Option<&[PatternSegment]> {
    let segments = pattern.segments();
    segments
        .iter()
        .all(|s| matches!(s, PatternSegment::Key(_) | PatternSegment::Index(_)))
        .then_some(segments)
}

fn get_concrete<'v>(value: &'v Value, segments: &[PatternSegment]) -> Option<&'v Value> {
    let mut node = value;
    for seg in segments {
        node = match (seg, node) {
            (PatternSegment::Key(k), Value::Object(map)) => map.get(k)?,
            (PatternSegment::Index(i), Value::Array(items)) => items.get(*i)?,
            _ => return None,
        };
    }
    Some(node)
}

#[allow(clippy::too_many_arguments)]
fn apply_at<'v, S: Sink>(
    te: &mut Cow<'v, Value>,
    ta: &mut Cow<'v, Value>,
    segments: &[PatternSegment],
    t: &Transformer,
    (do_e, do_a): (bool, bool),
    ctx: &Context,
    sink: &mut S,
    location: impl Fn() -> Location,
) {
    let present_e = get_concrete(te, segments).is_some();
    let present_a = get_concrete(ta, segments).is_some();
    if t.only_when_both_present && !(present_e && present_a) {
        return;
    }
    for (side, doc, enabled) in [
        (Side::Expected, &mut *te, do_e),
        (Side::Actual, &mut *ta, do_a),
    ] {
        if !enabled {
            continue;
        }
        match get_concrete(doc, segments) {
            Some(current) => {
                if t.on_existing == OnExisting::Transform {
                    if let Some(new) = t.transform.rewrite(current, ctx) {
                        write(doc, &location(), new);
                    }
                }
            }
            None => match t.on_missing {
                OnMissing::Skip => {}
                OnMissing::Add => {
                    let new = t.transform.apply(None, ctx);
                    write(doc, &location(), new);
                }
                OnMissing::Fail => {
                    let location = location();
                    let refs: Vec<SegmentRef<'_>> = location
                        .segments()
                        .iter()
                        .map(|s| match s {
                            Segment::Key(k) => SegmentRef::Key(k),
                            Segment::Index(i) => SegmentRef::Index(*i),
                        })
                        .collect();
                    let which = if side == Side::Expected {
                        "expected"
                    } else {
                        "actual"
                    };
                    sink.report_detail(
                        MismatchKind::TransformerFailed,
                        &refs,
                        format!(
                            "missing in {which}, and the transformer ({}) has on_missing = \"fail\"",
                            t.transform
                        ),
                    );
                }
            },
        }
    }
}

/// Writes a transformer's value on one side of a pair, copying a borrowed side only when the
/// write goes through. A write the side cannot take ([`Location::set`] is blocked: a scalar, or
/// an array too short, where the path goes on) is skipped, and the side stays as it was.
fn write(side: &mut Cow<'_, Value>, location: &Location, new: Value) {
    match side {
        // A blocked `set` changes nothing, so an owned side needs no more care.
        Cow::Owned(value) => {
            let _written = location.set(value, new);
        }
        Cow::Borrowed(value) => {
            let mut copy = (*value).clone();
            if location.set(&mut copy, new) {
                *side = Cow::Owned(copy);
            }
        }
    }
}

/// Where the walk sends what it finds: a counter (for pairing costs) or a list.
pub(crate) trait Sink {
    fn report(
        &mut self,
        kind: MismatchKind,
        path: &[SegmentRef<'_>],
        expected: Option<&Value>,
        actual: Option<&Value>,
    );
    fn report_detail(&mut self, kind: MismatchKind, path: &[SegmentRef<'_>], detail: String);
}

struct Counter(usize);

impl Sink for Counter {
    fn report(
        &mut self,
        _: MismatchKind,
        _: &[SegmentRef<'_>],
        _: Option<&Value>,
        _: Option<&Value>,
    ) {
        self.0 += 1;
    }
    fn report_detail(&mut self, _: MismatchKind, _: &[SegmentRef<'_>], _: String) {
        self.0 += 1;
    }
}

struct Collector<'m> {
    out: &'m mut Vec<Mismatch>,
    prefix: Option<usize>,
    actual_index: Option<usize>,
}

impl Sink for Collector<'_> {
    fn report(
        &mut self,
        kind: MismatchKind,
        path: &[SegmentRef<'_>],
        expected: Option<&Value>,
        actual: Option<&Value>,
    ) {
        self.out.push(Mismatch {
            kind,
            location: located(self.prefix, path),
            actual_index: self.actual_index,
            expected: expected.cloned(),
            actual: actual.cloned(),
            detail: None,
        });
    }
    fn report_detail(&mut self, kind: MismatchKind, path: &[SegmentRef<'_>], detail: String) {
        self.out.push(Mismatch {
            kind,
            location: located(self.prefix, path),
            actual_index: self.actual_index,
            expected: None,
            actual: None,
            detail: Some(detail),
        });
    }
}

/// Compares one pair of proposals under an ignore list. Equal subtrees are skipped with one
/// equality test; ignore patterns are matched incrementally, only along unequal paths; a
/// [`Location`] is built only for a mismatch.
fn diff_pair<S: Sink>(
    e: &Value,
    a: &Value,
    patterns: &[Pattern],
    prefix: Option<usize>,
    sink: &mut S,
) {
    if json_eq(e, a) {
        return;
    }
    let mut walker = Walker {
        matcher: Matcher::new(patterns),
        path: Vec::new(),
        sink,
    };
    let root = walker.matcher.proposal_root(prefix);
    if !root.covered {
        walker.node(e, a, root);
    }
}

struct Walker<'p, 'v, 's, S> {
    matcher: Matcher<'p>,
    path: Vec<SegmentRef<'v>>,
    sink: &'s mut S,
}

impl<'v, S: Sink> Walker<'_, 'v, '_, S> {
    /// `e` and `a` are known to differ and the node is not ignored.
    fn node(&mut self, e: &'v Value, a: &'v Value, frame: MatchFrame) {
        match (e, a) {
            (Value::Object(em), Value::Object(am)) => {
                for (k, ev) in em {
                    match am.get(k) {
                        Some(av) if json_eq(ev, av) => {}
                        found => self.step(SegmentRef::Key(k), frame, Some(ev), found),
                    }
                }
                for (k, av) in am {
                    if !em.contains_key(k) {
                        self.step(SegmentRef::Key(k), frame, None, Some(av));
                    }
                }
            }
            (Value::Array(ea), Value::Array(aa)) => {
                for i in 0..ea.len().max(aa.len()) {
                    match (ea.get(i), aa.get(i)) {
                        (Some(ev), Some(av)) if json_eq(ev, av) => {}
                        (ev, av) => self.step(SegmentRef::Index(i), frame, ev, av),
                    }
                }
            }
            _ => {
                let container = |v: &Value| v.is_object() || v.is_array();
                let kind = if container(e) || container(a) {
                    MismatchKind::TypeDiffers
                } else {
                    MismatchKind::ValuesDiffer
                };
                self.sink.report(kind, &self.path, Some(e), Some(a));
            }
        }
    }

    fn step(
        &mut self,
        segment: SegmentRef<'v>,
        frame: MatchFrame,
        e: Option<&'v Value>,
        a: Option<&'v Value>,
    ) {
        let child = self.matcher.child(frame, segment);
        if !child.covered {
            self.path.push(segment);
            match (e, a) {
                (Some(e), Some(a)) => self.node(e, a, child),
                (Some(e), None) => {
                    self.sink
                        .report(MismatchKind::MissingInActual, &self.path, Some(e), None)
                }
                (None, Some(a)) => {
                    self.sink
                        .report(MismatchKind::ExtraInActual, &self.path, None, Some(a))
                }
                (None, None) => {}
            }
            self.path.pop();
        }
        self.matcher.truncate(child);
    }
}

/// The camelCase keys `#[serde(alias)]` accepts, in the JSON Schema too.
#[cfg(feature = "schema")]
fn strict_aliases(schema: &mut schemars::Schema) {
    crate::schema::aliases(schema, &[("ignore_paths", "ignorePaths")]);
}
