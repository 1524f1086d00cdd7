//! The alignment: each mode's score and rendering, and its properties against brute force.

use super::align::{assignment, grid, longest_chain};
use super::*;
use crate::accuracy::FieldSpec;
use proptest::prelude::*;
use serde_json::{json, Value};

fn expected(v: Value) -> ExpectedTrajectory {
    serde_json::from_value(v).unwrap()
}

fn calls(list: &[(&str, Value)]) -> Vec<ToolCall> {
    list.iter()
        .map(|(t, a)| ToolCall::new(*t, a.clone()))
        .collect()
}

fn agent() -> Vec<ToolCall> {
    calls(&[
        (
            "inventory_lookup",
            json!({"sku": "SKU-123", "trace_id": "t1"}),
        ),
        ("pricing", json!({"sku": "SKU-123"})),
        (
            "recommend",
            json!({"sku": "SKU-123", "price": 950, "trace_id": "t2"}),
        ),
    ])
}

fn config() -> TrajectoryConfig {
    TrajectoryConfig::new().field(FieldSpec::numeric_tolerance("recommend.price", 1.0))
}

#[test]
fn in_order_passes_with_calls_between_and_fails_out_of_order() {
    let e = expected(
        json!([{"tool": "inventory_lookup", "args": {"sku": "SKU-123"}}, {"tool": "recommend"}]),
    );
    let v = evaluate(&e, &agent(), &config());
    assert!(v.passed, "{v:?}");
    assert_eq!(v.steps[1].matched, Some(2));

    let e = expected(json!([{"tool": "recommend"}, {"tool": "inventory_lookup"}]));
    let v = evaluate(&e, &agent(), &config());
    assert!(!v.passed);
    assert_eq!(
        v.render(&agent()),
        "in_order: 1 of 2 steps matched in order, score 0.50
  step 1 recommend: #3 recommend
  step 2 inventory_lookup: no match; #1 inventory_lookup has these arguments but is out of order
calls:
  #1 inventory_lookup {\"sku\":\"SKU-123\",\"trace_id\":\"t1\"}
  #2 pricing {\"sku\":\"SKU-123\"}
  #3 recommend {\"price\":950,\"sku\":\"SKU-123\",\"trace_id\":\"t2\"}
"
    );
}

#[test]
fn an_argument_outside_its_tolerance_is_shown_against_the_closest_call() {
    let e = expected(json!({"mode": "any_order", "steps": [
        {"tool": "recommend", "args": {"sku": "SKU-123", "price": 899}},
        {"tool": "inventory_lookup"}
    ]}));
    let v = evaluate(&e, &agent(), &config());
    assert_eq!(v.score, 0.5);
    let text = v.render(&agent());
    assert!(
        text.starts_with(
            "any_order: 1 of 2 steps matched, score 0.50
  step 1 recommend: no match; closest #3 recommend:
    recommend.price: values differ: expected 899, actual 950, outside tolerance 1 (diff 51)
  step 2 inventory_lookup: #1 inventory_lookup
"
        ),
        "{text}"
    );
    let e = expected(json!({"mode": "any_order", "steps": [
        {"tool": "recommend", "args": {"price": 950.6}}]}));
    assert!(evaluate(&e, &agent(), &config()).passed);
}

#[test]
fn exact_counts_places_and_names_what_is_in_a_steps_place() {
    let e = expected(json!({"mode": "exact", "steps": [
        {"tool": "inventory_lookup"}, {"tool": "recommend"}]}));
    let v = evaluate(&e, &agent(), &config());
    assert_eq!(v.score, 1.0 / 3.0);
    let text = v.render(&agent());
    assert!(
        text.starts_with(
            "exact: 1 of 3 matched at their place (2 steps, 3 calls), score 0.33
  step 1 inventory_lookup: #1 inventory_lookup
  step 2 recommend: no match (call #2 in its place is pricing); #3 recommend has these arguments but is not at this step's place
  #3 recommend: unexpected call, past the last step (exact: the calls are the steps)
"
        ),
        "{text}"
    );
    let all = expected(json!({"mode": "exact", "steps": [
        {"tool": "inventory_lookup"}, {"tool": "pricing"}, {"tool": "recommend", "args": {"price": 950}}]}));
    assert!(evaluate(&all, &agent(), &config()).passed);
    let wrong = expected(json!({"mode": "exact", "steps": [
        {"tool": "inventory_lookup", "args": {"sku": "SKU-9"}}]}));
    let text = evaluate(&wrong, &agent()[..1], &config()).render(&agent()[..1]);
    assert!(
        text.contains("  step 1 inventory_lookup: no match; closest #1 inventory_lookup:\n    inventory_lookup.sku: values differ: expected \"SKU-9\", actual \"SKU-123\"\n"),
        "{text}"
    );
}

#[test]
fn subset_forbids_tools_outside_the_steps() {
    let e = expected(json!({"mode": "subset", "steps": [
        {"tool": "inventory_lookup"}, {"tool": "recommend"}, {"tool": "escalate"}]}));
    let v = evaluate(&e, &agent(), &config());
    assert!((v.score - 2.0 / 3.0).abs() < 1e-12);
    assert_eq!(v.unexpected, vec![1]);
    assert!(v.render(&agent()).contains(
        "  #2 pricing: unexpected call, matches no step (subset: no tool outside the steps)\n"
    ));
    assert!(v
        .render(&agent())
        .contains("  step 3 escalate: no match; no call of escalate\n"));
    assert_eq!(evaluate(&e, &[], &config()).score, 1.0);
}

#[test]
fn forbidden_and_max_calls_make_the_score_zero() {
    let e = expected(
        json!({"mode": "any_order", "steps": [{"tool": "recommend"}],
        "forbidden": ["pricing"], "max_calls": 2}),
    );
    let v = evaluate(&e, &agent(), &config());
    assert_eq!(v.score, 0.0);
    assert_eq!(
        v.summary,
        "any_order: 1 of 1 steps matched, 1 forbidden call(s), 3 calls, more than max_calls = 2, score 0"
    );
    let text = v.render(&agent());
    assert!(
        text.contains("  #2 pricing: forbidden tool\n  3 calls, more than max_calls = 2\n"),
        "{text}"
    );
}

#[test]
fn threshold_and_ignore_paths() {
    let e = expected(json!({"mode": "any_order", "steps": [
        {"tool": "recommend", "args": {"sku": "SKU-123", "price": 950, "trace_id": "x"}},
        {"tool": "escalate"}]}));
    let exact = TrajectoryConfig::new().args(Args::Exact);
    assert_eq!(evaluate(&e, &agent(), &exact).score, 0.0);
    let ignoring = exact.clone().ignore_path("*.trace_id").unwrap();
    let v = evaluate(&e, &agent(), &ignoring);
    assert_eq!((v.score, v.passed), (0.5, false));
    assert!(evaluate(&e, &agent(), &ignoring.threshold(0.5)).passed);
}

#[test]
fn bad_expectations_say_what_is_wrong() {
    let err = |v: Value| {
        serde_json::from_value::<ExpectedTrajectory>(v)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        err(json!([{"tool": "a", "argz": {}}])),
        "expected_trajectory[0]: unknown field `argz`, expected `tool` or `args`"
    );
    assert!(err(json!({"mode": "sometimes", "steps": []}))
        .contains("`exact`, `in_order`, `any_order`, `subset`"));
    assert!(err(json!({"step": []})).contains("unknown field `step`"));
    // The key is named, for the reader of the fixture to say the rest in its words.
    assert_eq!(
        err(json!({"steps": [], "max_calls": -1})),
        "expected_trajectory.max_calls: invalid value: integer `-1`, expected usize"
    );
    assert!(err(json!("recommend"))
        .starts_with("expected_trajectory is a JSON string: write a list of steps"));
    let toml_err = toml::from_str::<TrajectoryConfig>("threshold = 2").unwrap_err();
    assert!(
        toml_err.to_string().contains("within 0 and 1"),
        "{toml_err}"
    );
    let toml_err = toml::from_str::<TrajectoryConfig>(
        "[[fields]]\npath = \"a.b\"\nmatch = \"numeric_tolerance\"\nweight = 2\n",
    )
    .unwrap_err();
    assert!(
        toml_err.to_string().contains("not used by trajectory"),
        "{toml_err}"
    );
}

// Small inputs: tools from a 3-letter alphabet, arguments from two values, so that matches,
// near misses and repeats are all common.
fn small_steps() -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec((0u8..3, prop::option::of(0u8..2)), 0..6).prop_map(|v| {
        v.into_iter()
            .map(|(t, a)| Step {
                tool: ((b'a' + t) as char).to_string(),
                args: a.map(|a| json!({ "x": a })),
            })
            .collect()
    })
}

fn small_calls() -> impl Strategy<Value = Vec<ToolCall>> {
    prop::collection::vec((0u8..3, 0u8..2), 0..6).prop_map(|v| {
        v.into_iter()
            .map(|(t, a)| {
                ToolCall::new(((b'a' + t) as char).to_string(), json!({ "x": a, "y": 1 }))
            })
            .collect()
    })
}

/// The longest chain by trying every subset of steps against every increasing choice of calls.
fn brute_chain(steps: &[Step], calls: &[ToolCall], config: &TrajectoryConfig) -> usize {
    let g = grid(steps, calls, config);
    fn go(g: &super::align::Grid<'_>, i: usize, j: usize, n: usize, m: usize) -> usize {
        if i == n || j == m {
            return 0;
        }
        let mut best = go(g, i + 1, j, n, m).max(go(g, i, j + 1, n, m));
        if g.is_match(i, j) {
            best = best.max(1 + go(g, i + 1, j + 1, n, m));
        }
        best
    }
    go(&g, 0, 0, steps.len(), calls.len())
}

/// The most steps matched by distinct calls, by trying every injection.
fn brute_assignment(steps: &[Step], calls: &[ToolCall], config: &TrajectoryConfig) -> usize {
    let g = grid(steps, calls, config);
    fn go(g: &super::align::Grid<'_>, i: usize, used: &mut Vec<bool>, n: usize) -> usize {
        if i == n {
            return 0;
        }
        let mut best = go(g, i + 1, used, n);
        for j in 0..used.len() {
            if !used[j] && g.is_match(i, j) {
                used[j] = true;
                best = best.max(1 + go(g, i + 1, used, n));
                used[j] = false;
            }
        }
        best
    }
    go(&g, 0, &mut vec![false; calls.len()], steps.len())
}

proptest! {
    #[test]
    fn in_order_chain_is_the_longest(steps in small_steps(), calls in small_calls()) {
        let config = TrajectoryConfig::new();
        let chain = longest_chain(&grid(&steps, &calls, &config));
        prop_assert_eq!(chain.len(), brute_chain(&steps, &calls, &config));
        // A chain: steps and calls both strictly increasing, every pair a match.
        for w in chain.windows(2) {
            prop_assert!(w[0].0 < w[1].0 && w[0].1 < w[1].1);
        }
        let g = grid(&steps, &calls, &config);
        prop_assert!(chain.iter().all(|&(i, j)| g.is_match(i, j)));
    }

    #[test]
    fn the_probe_agrees_with_the_written_mismatches(steps in small_steps(), calls in small_calls()) {
        for config in [TrajectoryConfig::new(), TrajectoryConfig::new().args(Args::Exact)] {
            for step in &steps {
                for call in &calls {
                    prop_assert_eq!(
                        super::args::matches(step, call, &config),
                        super::args::compare(step, call, &config).is_some_and(|m| m.is_empty())
                    );
                }
            }
        }
    }

    #[test]
    fn any_order_is_the_maximum_matching(steps in small_steps(), calls in small_calls()) {
        let config = TrajectoryConfig::new();
        let pairs = assignment(&grid(&steps, &calls, &config));
        prop_assert_eq!(pairs.len(), brute_assignment(&steps, &calls, &config));
        let mut used: Vec<usize> = pairs.iter().map(|p| p.1).collect();
        used.sort_unstable();
        used.dedup();
        prop_assert_eq!(used.len(), pairs.len(), "distinct calls");
    }

    #[test]
    fn any_order_and_subset_are_invariant_under_permutation_of_calls(
        steps in small_steps(),
        calls in small_calls(),
        seed in any::<u64>(),
    ) {
        let mut shuffled = calls.clone();
        // A deterministic shuffle from the seed (Fisher-Yates with an LCG).
        let mut s = seed;
        for i in (1..shuffled.len()).rev() {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            shuffled.swap(i, (s >> 33) as usize % (i + 1));
        }
        for mode in [Mode::AnyOrder, Mode::Subset] {
            let e = ExpectedTrajectory { mode: Some(mode), steps: steps.clone(), ..Default::default() };
            let config = TrajectoryConfig::new();
            prop_assert_eq!(
                evaluate(&e, &calls, &config).score,
                evaluate(&e, &shuffled, &config).score
            );
        }
    }

    #[test]
    fn calls_made_from_the_steps_pass_every_mode(steps in small_steps()) {
        let calls: Vec<ToolCall> = steps
            .iter()
            .map(|s| ToolCall::new(s.tool.clone(), s.args.clone().unwrap_or(json!({}))))
            .collect();
        for mode in [Mode::Exact, Mode::InOrder, Mode::AnyOrder, Mode::Subset] {
            let e = ExpectedTrajectory { mode: Some(mode), steps: steps.clone(), ..Default::default() };
            let v = evaluate(&e, &calls, &TrajectoryConfig::new().args(Args::Exact));
            prop_assert!(v.passed, "{}", v.render(&calls));
        }
    }

    #[test]
    fn extraction_never_panics_on_any_json(v in arb_json()) {
        let _ = tool_calls(&v);
    }
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (0i64..5).prop_map(Value::from),
        prop_oneof![
            Just("tool_use"),
            Just("function_call"),
            Just("content_block_start"),
            Just("input_json_delta"),
            Just("response.output_item.added"),
            Just("{\"a\":"),
            Just("x")
        ]
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 40, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    Just("choices"),
                    Just("message"),
                    Just("tool_calls"),
                    Just("function"),
                    Just("name"),
                    Just("arguments"),
                    Just("output"),
                    Just("content"),
                    Just("type"),
                    Just("input"),
                    Just("data"),
                    Just("index"),
                    Just("delta"),
                    Just("content_block"),
                    Just("partial_json"),
                    Just("item"),
                    Just("output_index")
                ]
                .prop_map(String::from),
                inner,
                0..5
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}
