//! The strict engine's invariants, over generated proposals and configs.

use proposal_eval::compare::{evaluate, Matching, StrictConfig, StrictVerdict};
use proposal_eval::normalize::{FieldSource, NormalizationRule};
use proposal_eval::path::Pattern;
use proposal_eval::transform::{
    Builtin, Condition, ConditionTarget, Context, Strategy as Applying, Transformer,
};
use proptest::prelude::*;
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;

fn ctx() -> Context {
    Context::at("2025-03-04T15:16:17Z".parse().unwrap())
}

const KEYS: [&str; 6] = ["a", "b", "c", "id", "changeType", "meta"];

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-3i64..4).prop_map(Value::from),
        prop_oneof![Just(0.5), Just(2.0), Just(-1.25)].prop_map(Value::from),
        prop_oneof![
            Just("x"),
            Just(" X "),
            Just("y"),
            Just("2025-01-15"),
            Just("15-JAN-2025")
        ]
        .prop_map(Value::from),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(prop::sample::select(&KEYS[..]), inner, 0..4).prop_map(
                |m| Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
            ),
        ]
    })
}

fn proposal() -> impl Strategy<Value = Value> {
    (
        prop::collection::btree_map(prop::sample::select(&KEYS[..]), value(), 0..5),
        prop::sample::select(vec!["change", "creation"]),
    )
        .prop_map(|(m, kind)| {
            let mut map: Map<String, Value> =
                m.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
            map.insert("changeType".into(), json!(kind));
            Value::Object(map)
        })
}

fn proposals() -> impl Strategy<Value = Vec<Value>> {
    prop::collection::vec(proposal(), 0..4)
}

const PATTERNS: [&str; 12] = [
    "a", "b.c", "*.a", "**.b", "meta.*", "[0].a", "[*].b", "a[1]", "c[*]", "**", "id", "meta",
];

fn pattern() -> impl Strategy<Value = Pattern> {
    prop::sample::select(&PATTERNS[..]).prop_map(|p| Pattern::parse(p).unwrap())
}

/// Transformers that treat both sides alike: nothing is added or demanded on one side only.
fn symmetric_transformer() -> impl Strategy<Value = (String, Transformer)> {
    (
        prop::sample::select(vec!["a", "b", "meta.a", "**.c", "id"]),
        prop::sample::select(Builtin::ALL.to_vec()),
        prop::sample::select(vec![Applying::TransformAlways, Applying::TransformExisting]),
        prop::sample::select(vec![
            ConditionTarget::Own,
            ConditionTarget::Actual,
            ConditionTarget::Expected,
        ]),
        prop::option::of(prop::sample::select(vec!["change", "creation"])),
    )
        .prop_map(|(path, builtin, strategy, target, when)| {
            let mut t = Transformer::new(builtin, strategy).condition_target(target);
            if let Some(kind) = when {
                t = t.when(Condition::equals("changeType", kind).unwrap());
            }
            (path.to_string(), t)
        })
}

fn config() -> impl Strategy<Value = StrictConfig> {
    (
        any::<bool>(),
        prop::collection::vec(pattern(), 0..3),
        prop::collection::vec(symmetric_transformer(), 0..3),
    )
        .prop_map(|(any_order, ignore, transformers)| {
            let mut c = StrictConfig::new().matching(if any_order {
                Matching::AnyOrder
            } else {
                Matching::Ordered
            });
            c.ignore_paths = ignore;
            for (path, t) in transformers {
                c = c.transformer(&path, t).unwrap();
            }
            c
        })
}

/// A copy of `v` with some leaves changed and some keys dropped or added, driven by `seed`.
fn roll(seed: &mut u64, n: u64) -> u64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (*seed >> 33) % n
}

fn mutate(v: &Value, seed: &mut u64) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, x) in m {
                if roll(seed, 8) != 0 {
                    out.insert(k.clone(), mutate(x, seed));
                }
            }
            if roll(seed, 8) == 0 {
                out.insert("b".into(), json!("added"));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|x| mutate(x, seed)).collect()),
        leaf => match roll(seed, 5) {
            0 => json!("changed"),
            1 => json!(7),
            _ => leaf.clone(),
        },
    }
}

fn keys(v: &StrictVerdict<'_>) -> BTreeSet<String> {
    v.mismatches
        .iter()
        .map(|m| format!("{:?} {}", m.kind, m.location))
        .collect()
}

fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for p in permutations(n - 1) {
        for at in 0..=p.len() {
            let mut q = p.clone();
            q.insert(at, n - 1);
            out.push(q);
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_value_compared_with_itself_passes(list in proposals(), config in config()) {
        let v = Value::Array(list);
        let verdict = evaluate(&v, &v, &config, None, &ctx());
        prop_assert!(verdict.passed(), "{}", verdict.render(false));
        // One object against itself too.
        let one = v.get(0).cloned().unwrap_or(json!({}));
        prop_assert!(evaluate(&one, &one, &config, None, &ctx()).passed());
    }

    #[test]
    fn a_value_compared_with_itself_passes_under_normalization(
        list in proposals(), config in config(), whole in any::<bool>()
    ) {
        let mut config = config;
        // Normalization applies to expected too only outside the paired flow.
        config.transformers.retain(|(_, t)| t.condition_target != ConditionTarget::Actual);
        for kind in ["change", "creation"] {
            let mut rule = NormalizationRule::new(kind)
                .field("changeType", FieldSource::Literal).unwrap()
                .field("x", FieldSource::path("a").unwrap()).unwrap()
                .field("y.z", FieldSource::extract("meta.b", Some(json!(0)), Some(Builtin::Trim.into())).unwrap()).unwrap();
            if whole {
                rule = rule.field("raw", FieldSource::WholeProposal).unwrap();
            }
            config = config.normalization(rule);
        }
        let v = Value::Array(list);
        let verdict = evaluate(&v, &v, &config, None, &ctx());
        prop_assert!(verdict.passed(), "{}", verdict.render(false));
    }

    #[test]
    fn ignoring_a_path_never_adds_a_mismatch(
        list in proposals(), seed in any::<u64>(), config in config(), extra in pattern()
    ) {
        let mut seed = seed;
        let expected = Value::Array(list);
        let actual = mutate(&expected, &mut seed);
        let before = evaluate(&expected, &actual, &config, None, &ctx());
        let mut more = config.clone();
        more.ignore_paths.push(extra);
        let after = evaluate(&expected, &actual, &more, None, &ctx());
        prop_assert!(after.mismatches.len() <= before.mismatches.len());
        prop_assert!(!before.passed() || after.passed());
        if config.matching == Matching::Ordered {
            let (b, a) = (keys(&before), keys(&after));
            prop_assert!(a.is_subset(&b), "new: {:?}", a.difference(&b).collect::<Vec<_>>());
        }
    }

    #[test]
    fn any_order_is_invariant_under_permutation_and_optimal(
        list in proposals(), seed in any::<u64>(), config in config(), shuffle in any::<u64>()
    ) {
        let config = config.matching(Matching::AnyOrder);
        let mut seed = seed;
        let expected = Value::Array(list.clone());
        let Value::Array(actual) = mutate(&expected, &mut seed) else { unreachable!() };
        let actual_value = Value::Array(actual.clone());
        let base = evaluate(&expected, &actual_value, &config, None, &ctx());
        let perms = permutations(actual.len());
        let perm = &perms[(shuffle % perms.len() as u64) as usize];
        let permuted = Value::Array(perm.iter().map(|&j| actual[j].clone()).collect());
        let other = evaluate(&expected, &permuted, &config, None, &ctx());
        prop_assert_eq!(base.mismatches.len(), other.mismatches.len());
        prop_assert_eq!(base.passed(), other.passed());
        // Optimal: no ordering of the actual does better in order.
        let ordered = config.clone().matching(Matching::Ordered);
        let best = perms
            .iter()
            .map(|p| {
                let a = Value::Array(p.iter().map(|&j| actual[j].clone()).collect());
                evaluate(&expected, &a, &ordered, None, &ctx()).mismatches.len()
            })
            .min()
            .unwrap();
        prop_assert_eq!(base.mismatches.len(), best);
    }
}
