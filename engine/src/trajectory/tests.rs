//! The alignment: each mode's score and rendering, and its properties against brute force.

use super::align::{chain_over_groups, grid, longest_chain, max_matching};
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
    assert!(v.render(&agent()).contains(
        "  step 3 escalate: no match; no call of escalate (subset: a step need not be called)\n"
    ));
    // A step not called is no miss: only the call outside the steps is.
    assert_eq!(v.misses(&agent()), ["#2 pricing: unexpected call"]);
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
        err(json!([{"tool": "a"}, {"tool": "a", "argz": {}}])),
        "expected_trajectory step 2: unknown field `argz`, expected one of `tool`, `args`, `args_match`"
    );
    assert_eq!(
        err(json!([{"tool": "inventory_lookup", "args": "category=laptop"}])),
        "expected_trajectory step 1: `args` is a string \"category=laptop\": a step's arguments are an object of argument names and values (`\"args\": {\"category\": \"laptop\"}`), or left out to match any"
    );
    assert!(err(json!({"steps": [{"tool": "a", "args": [1]}]}))
        .starts_with("expected_trajectory step 1: `args` is an array"));
    assert!(err(json!([{"tool": ""}])).starts_with(
        "expected_trajectory step 1: `tool` is \"\": name the tool the call must be of"
    ));
    assert!(
        err(json!({"steps": [], "forbidden": ["ok", {"tool": " "}]}))
            .starts_with("expected_trajectory forbidden 2: `tool` is \" \"")
    );
    assert!(
        err(json!({"steps": [], "forbidden": [{"tool": "x", "args": 1}]}))
            .starts_with("expected_trajectory forbidden 1: `args` is a number")
    );
    assert!(err(json!([{"tool": "a", "args_match": "loose"}]))
        .contains("`partial`, `exact`, `subset`, `ignore`"));
    assert_eq!(
        err(json!({"steps": [], "min_calls": 3, "max_calls": 2})),
        "expected_trajectory: `min_calls` (3) is more than `max_calls` (2): no trajectory can pass"
    );
    assert_eq!(
        err(json!({"steps": [], "calls": {"recommend": {"min": 2, "max": 1}}})),
        "expected_trajectory: calls.recommend: `min` (2) is more than `max` (1): no trajectory can pass"
    );
    assert!(
        err(json!({"steps": [], "calls": {"recommend": {"most": 1}}}))
            .contains("unknown field `most`")
    );
    // null arguments: any, as when left out.
    let any = expected(json!([{"tool": "a", "args": null}]));
    assert_eq!(any.steps[0].args, None);
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
    let toml_err =
        toml::from_str::<TrajectoryConfig>("[tools.\"search_*\"]\nargs_match = \"ignore\"\n")
            .unwrap_err();
    assert!(
        toml_err.to_string().contains("name one tool exactly"),
        "{toml_err}"
    );
    let toml_err = toml::from_str::<TrajectoryConfig>("[tools.a]\nargs = \"exact\"\n").unwrap_err();
    assert!(
        toml_err.to_string().contains("unknown field `args`"),
        "{toml_err}"
    );
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

/// Calls with their responses: `(response, tool, args)`; `None` for a noted step.
fn answered(list: &[(Option<usize>, &str, Value)]) -> Vec<ToolCall> {
    list.iter()
        .map(|(r, t, a)| ToolCall {
            response: *r,
            ..ToolCall::new(*t, a.clone())
        })
        .collect()
}

/// An agent whose first response asks for two lookups at once, the second for a recommendation;
/// then the code notes its reply.
fn parallel_agent() -> Vec<ToolCall> {
    answered(&[
        (Some(0), "inventory_lookup", json!({"sku": "SKU-7"})),
        (Some(0), "inventory_lookup", json!({"sku": "SKU-8"})),
        (Some(1), "recommend", json!({"sku": "SKU-8"})),
        (None, "send_reply", json!({"text": "SKU-8"})),
    ])
}

#[test]
fn the_calls_of_one_response_match_in_any_order() {
    let steps = json!([
        {"tool": "inventory_lookup", "args": {"sku": "SKU-8"}},
        {"tool": "inventory_lookup", "args": {"sku": "SKU-7"}},
        {"tool": "recommend"},
        {"tool": "send_reply"}
    ]);
    let calls = parallel_agent();
    for mode in ["exact", "in_order"] {
        let e = expected(json!({"mode": mode, "steps": steps}));
        let v = evaluate(&e, &calls, &config());
        assert!(v.passed, "{mode}: {}", v.render(&calls));
        assert_eq!(v.steps[0].matched, Some(1));
        assert_eq!(v.steps[1].matched, Some(0));
    }
    // The same calls from two responses: their order counts again.
    let sequential = answered(&[
        (Some(0), "inventory_lookup", json!({"sku": "SKU-7"})),
        (Some(1), "inventory_lookup", json!({"sku": "SKU-8"})),
        (Some(2), "recommend", json!({"sku": "SKU-8"})),
        (None, "send_reply", json!({"text": "SKU-8"})),
    ]);
    let e = expected(json!({"mode": "exact", "steps": steps}));
    let v = evaluate(&e, &sequential, &config());
    assert_eq!(v.score, 0.5);
    let text = v.render(&sequential);
    assert!(
        text.starts_with(
            "exact: 2 of 4 matched at their place (4 steps, 4 calls), score 0.50
  step 1 inventory_lookup: no match; closest #1 inventory_lookup:
    inventory_lookup.sku: values differ: expected \"SKU-8\", actual \"SKU-7\"
"
        ),
        "{text}"
    );
    // A group does not reach across responses: the recommendation before the lookups fails.
    let e = expected(json!([{"tool": "recommend"}, {"tool": "inventory_lookup"}]));
    assert_eq!(evaluate(&e, &calls, &config()).score, 0.5);
}

#[test]
fn the_rendered_calls_show_each_responses_group() {
    let calls = parallel_agent();
    let e = expected(json!({"mode": "exact", "steps": [{"tool": "recommend"}]}));
    let v = evaluate(&e, &calls, &config());
    let text = v.render(&calls);
    assert!(
        text.ends_with(
            "calls:
  in parallel (model call 1):
    #1 inventory_lookup {\"sku\":\"SKU-7\"}
    #2 inventory_lookup {\"sku\":\"SKU-8\"}
  #3 recommend {\"sku\":\"SKU-8\"}
  #4 send_reply {\"text\":\"SKU-8\"}
"
        ),
        "{text}"
    );
    // In exact, the step at a group's place is laid against the call of the group that fits.
    assert!(
        text.contains("  step 1 recommend: no match (call #1 in its place is inventory_lookup); #3 recommend has these arguments but is not at this step's place\n"),
        "{text}"
    );
    assert_eq!(v.unexpected, vec![1, 2, 3]);
}

#[test]
fn exact_lays_a_group_past_the_last_step_as_best_it_can() {
    // Two steps, three calls of one response: the one left over is past the steps.
    let calls = answered(&[
        (Some(4), "a", json!({})),
        (Some(4), "b", json!({})),
        (Some(4), "c", json!({})),
    ]);
    let e = expected(json!({"mode": "exact", "steps": [{"tool": "c"}, {"tool": "a"}]}));
    let v = evaluate(&e, &calls, &TrajectoryConfig::new());
    assert_eq!((v.steps[0].matched, v.steps[1].matched), (Some(2), Some(0)));
    assert_eq!(v.unexpected, vec![1]);
    assert!((v.score - 2.0 / 3.0).abs() < 1e-12);
}

#[test]
fn args_match_per_step_per_tool_and_suite() {
    let calls = calls(&[
        ("search", json!({"q": "laptop", "page": 1})),
        ("recommend", json!({"sku": "S-1"})),
    ]);
    let run = |steps: Value, config: &TrajectoryConfig| {
        let e = expected(json!({"mode": "any_order", "steps": steps}));
        let v = evaluate(&e, &calls, config);
        (v.passed, v.render(&calls))
    };
    let plain = TrajectoryConfig::new();
    // partial (default): the step's keys are in the call.
    assert!(run(json!([{"tool": "search", "args": {"q": "laptop"}}]), &plain).0);
    // exact: the call's other key is a mismatch.
    let (passed, text) = run(
        json!([{"tool": "search", "args": {"q": "laptop"}, "args_match": "exact"}]),
        &plain,
    );
    assert!(!passed);
    assert!(
        text.contains("    search.page: extra in actual: 1\n"),
        "{text}"
    );
    // subset: every argument of the call is among the step's, the step may give more.
    let wide = json!({"q": "laptop", "page": 1, "sort": "price"});
    assert!(
        run(
            json!([{"tool": "search", "args": wide, "args_match": "subset"}]),
            &plain
        )
        .0
    );
    let (passed, text) = run(
        json!([{"tool": "search", "args": {"q": "laptop"}, "args_match": "subset"}]),
        &plain,
    );
    assert!(!passed);
    assert!(
        text.contains(
            "    search.page: not among the step's arguments (args_match = \"subset\"): 1\n"
        ),
        "{text}"
    );
    // subset compares each value as a whole.
    let nested = calls_with("search", json!({"q": {"text": "laptop"}}));
    let e = expected(
        json!([{"tool": "search", "args": {"q": {"text": "laptop", "lang": "en"}}, "args_match": "subset"}]),
    );
    assert!(!evaluate(&e, &nested, &plain).passed);
    // ignore: any arguments.
    assert!(
        run(
            json!([{"tool": "search", "args": {"q": "phone"}, "args_match": "ignore"}]),
            &plain
        )
        .0
    );
    // The tool's setting over the suite's, the step's over the tool's.
    let per_tool = TrajectoryConfig::new()
        .args(Args::Exact)
        .tool_args("search", Args::Partial);
    assert!(
        run(
            json!([{"tool": "search", "args": {"q": "laptop"}}]),
            &per_tool
        )
        .0
    );
    assert!(!run(json!([{"tool": "recommend", "args": {}}]), &per_tool).0);
    assert!(
        !run(
            json!([{"tool": "search", "args": {"q": "laptop"}, "args_match": "exact"}]),
            &per_tool
        )
        .0
    );
    let ignoring = TrajectoryConfig::new().args(Args::Ignore);
    assert!(
        run(
            json!([{"tool": "recommend", "args": {"sku": "S-2"}}]),
            &ignoring
        )
        .0
    );
}

fn calls_with(tool: &str, args: Value) -> Vec<ToolCall> {
    vec![ToolCall::new(tool, args)]
}

#[test]
fn counts_per_tool_and_min_calls_make_the_score_zero() {
    let e = expected(
        json!({"mode": "any_order", "steps": [{"tool": "recommend"}],
        "min_calls": 4, "calls": {"inventory_lookup": {"min": 2}, "recommend": {"max": 0}, "pricing": {"min": 1, "max": 1}}}),
    );
    let v = evaluate(&e, &agent(), &config());
    assert_eq!(v.score, 0.0);
    assert_eq!(
        v.summary,
        "any_order: 1 of 1 steps matched, 3 calls, fewer than min_calls = 4, 1 call(s) of inventory_lookup, fewer than calls.inventory_lookup.min = 2, 1 call(s) of recommend, more than calls.recommend.max = 0, score 0"
    );
    assert_eq!(
        v.misses(&agent()),
        [
            "3 calls, fewer than min_calls = 4",
            "1 call(s) of inventory_lookup, fewer than calls.inventory_lookup.min = 2",
            "1 call(s) of recommend, more than calls.recommend.max = 0",
        ]
    );
    let within = expected(json!({"mode": "any_order", "steps": [],
        "min_calls": 3, "max_calls": 3, "calls": {"*": {"min": 3, "max": 3}, "escalate": {"max": 0}}}));
    let v = evaluate(&within, &agent(), &config());
    assert!(v.passed, "{}", v.render(&agent()));
}

#[test]
fn allowed_takes_any_number_of_calls_of_the_steps() {
    let e = expected(json!({"mode": "allowed", "steps": [
        {"tool": "inventory_lookup"}, {"tool": "recommend", "args": {"price": 950}},
        {"tool": "pricing"}, {"tool": "escalate"}]}));
    let mut calls = agent();
    calls.push(ToolCall::new("inventory_lookup", json!({"sku": "SKU-9"})));
    let v = evaluate(&e, &calls, &config());
    assert!(v.passed, "{}", v.render(&calls));
    assert_eq!(v.summary, "allowed: 4 of 4 calls matched a step, score 1");
    assert!(v.misses(&calls).is_empty(), "{:?}", v.misses(&calls));
    // A call the steps do not allow, by tool or by arguments.
    calls.push(ToolCall::new("recommend", json!({"price": 1200})));
    calls.push(ToolCall::new("delete_order", json!({})));
    let v = evaluate(&e, &calls, &config());
    assert!((v.score - 4.0 / 6.0).abs() < 1e-12);
    let text = v.render(&calls);
    assert!(
        text.contains(
            "  #5 recommend: unexpected call, matches no step (allowed: only the steps' calls)\n  #6 delete_order: unexpected call, matches no step (allowed: only the steps' calls)\n"
        ),
        "{text}"
    );
    assert_eq!(evaluate(&e, &[], &config()).score, 1.0);
}

#[test]
fn subset_names_the_call_that_took_a_step() {
    let e = expected(
        json!({"mode": "subset", "steps": [{"tool": "inventory_lookup"}, {"tool": "recommend"}]}),
    );
    let calls = calls(&[
        ("inventory_lookup", json!({})),
        ("recommend", json!({"sku": "A"})),
        ("recommend", json!({"sku": "B"})),
    ]);
    let v = evaluate(&e, &calls, &config());
    assert_eq!(
        v.taken,
        vec![Taken {
            call: 2,
            step: 1,
            by: 1
        }]
    );
    assert!(
        v.render(&calls).contains(
            "  #3 recommend: unexpected call, matches step 2 recommend, which #2 recommend took (subset: a step matches one call; mode \"allowed\" lets it match any number)\n"
        ),
        "{}",
        v.render(&calls)
    );
    assert_eq!(
        v.misses(&calls),
        ["#3 recommend: unexpected call, step 2 recommend already taken by #2 recommend"]
    );
}

#[test]
fn forbidden_steps_and_globs() {
    let calls = calls(&[
        ("search_web", json!({"q": "laptop"})),
        ("refund", json!({"order": "O-1", "override": true})),
        ("refund", json!({"order": "O-2"})),
        ("delete_order", json!({})),
    ]);
    let e = expected(json!({"mode": "any_order",
        "steps": [{"tool": "search_*", "args": {"q": "laptop"}}, {"tool": "refund"}],
        "forbidden": ["delete_order", {"tool": "refund", "args": {"override": true}}, "drop_*"]}));
    let v = evaluate(&e, &calls, &config());
    assert_eq!(v.steps[0].matched, Some(0));
    let text = v.render(&calls);
    assert!(
        text.contains(
            "  #2 refund: forbidden call (forbidden 2: refund {\"override\":true})\n  #4 delete_order: forbidden tool\n"
        ),
        "{text}"
    );
    assert_eq!(
        v.summary,
        "any_order: 2 of 2 steps matched, 2 forbidden call(s), score 0"
    );
    let glob = expected(json!({"mode": "any_order", "steps": [], "forbidden": ["delete_*"]}));
    assert!(evaluate(&glob, &calls, &config())
        .render(&calls)
        .contains("  #4 delete_order: forbidden call (forbidden 1: delete_*)\n"));
    // A glob step shows its mismatches at the call's tool's paths.
    let e = expected(
        json!({"mode": "any_order", "steps": [{"tool": "search_?eb", "args": {"q": "phone"}}]}),
    );
    assert!(evaluate(&e, &calls, &config())
        .render(&calls)
        .contains("  step 1 search_?eb: no match; closest #1 search_web:\n    search_web.q: values differ: expected \"phone\", actual \"laptop\"\n"));
}

#[test]
fn glob_tool_names() {
    use super::config::tool_matches;
    for (pattern, tool, matches) in [
        ("search_*", "search_web", true),
        ("search_*", "search_", true),
        ("search_*", "research_web", false),
        ("*_order", "delete_order", true),
        ("*", "", true),
        ("a?c", "abc", true),
        ("a?c", "ac", false),
        ("a*b*c", "aXXbYYbc", true),
        ("a*b*c", "aXXbYY", false),
        ("search", "search", true),
        ("search", "search_web", false),
        ("é*", "éa", true),
    ] {
        assert_eq!(tool_matches(pattern, tool), matches, "{pattern} {tool}");
    }
}

// Small inputs: tools from a 3-letter alphabet, arguments from two values, so that matches,
// near misses and repeats are all common.
fn small_steps() -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec((0u8..3, prop::option::of(0u8..2)), 0..6).prop_map(|v| {
        v.into_iter()
            .map(|(t, a)| Step {
                tool: ((b'a' + t) as char).to_string(),
                args: a.map(|a| json!({ "x": a })),
                args_match: None,
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

/// Calls with responses: each call starts a new response or joins the one before.
fn grouped_calls() -> impl Strategy<Value = Vec<ToolCall>> {
    prop::collection::vec((0u8..3, 0u8..2, any::<bool>()), 0..7).prop_map(|v| {
        let mut response = 0;
        v.into_iter()
            .enumerate()
            .map(|(k, (t, a, joins))| {
                if k > 0 && !joins {
                    response += 1;
                }
                ToolCall::new(((b'a' + t) as char).to_string(), json!({ "x": a, "y": 1 }))
                    .in_response(response)
            })
            .collect()
    })
}

/// The longest chain whose calls' responses never go back, by trying every choice.
fn brute_group_chain(steps: &[Step], calls: &[ToolCall], config: &TrajectoryConfig) -> usize {
    let g = grid(steps, calls, config);
    fn go(
        g: &super::align::Grid<'_>,
        calls: &[ToolCall],
        i: usize,
        n: usize,
        used: &mut Vec<bool>,
        from: usize,
    ) -> usize {
        if i == n {
            return 0;
        }
        let mut best = go(g, calls, i + 1, n, used, from);
        for j in 0..used.len() {
            let r = calls[j].response.unwrap();
            if !used[j] && r >= from && g.is_match(i, j) {
                used[j] = true;
                best = best.max(1 + go(g, calls, i + 1, n, used, r));
                used[j] = false;
            }
        }
        best
    }
    go(&g, calls, 0, steps.len(), &mut vec![false; calls.len()], 0)
}

/// `exact` over groups by trying every order of the calls inside each group.
fn brute_exact(steps: &[Step], calls: &[ToolCall], config: &TrajectoryConfig) -> usize {
    fn orders(calls: &[ToolCall], at: usize, order: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if at == calls.len() {
            out.push(order.clone());
            return;
        }
        // The group starting at `at`: every permutation of it.
        let end = (at..calls.len())
            .take_while(|&j| calls[j].response == calls[at].response)
            .last()
            .unwrap()
            + 1;
        let mut group: Vec<usize> = (at..end).collect();
        permute(&mut group, 0, &mut |p| {
            order.extend_from_slice(p);
            orders(calls, end, order, out);
            order.truncate(at);
        });
    }
    fn permute(v: &mut Vec<usize>, k: usize, f: &mut dyn FnMut(&[usize])) {
        if k == v.len() {
            return f(v);
        }
        for i in k..v.len() {
            v.swap(k, i);
            permute(v, k + 1, f);
            v.swap(k, i);
        }
    }
    let mut all = Vec::new();
    orders(calls, 0, &mut Vec::new(), &mut all);
    let g = grid(steps, calls, config);
    all.iter()
        .map(|order| {
            (0..steps.len().min(calls.len()))
                .filter(|&k| g.is_match(k, order[k]))
                .count()
        })
        .max()
        .unwrap_or(0)
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
        // evaluate, the short way first, reaches the same length, with calls in order.
        let e = ExpectedTrajectory { mode: Some(Mode::InOrder), steps: steps.clone(), ..Default::default() };
        let laid: Vec<usize> = evaluate(&e, &calls, &config).steps.iter().filter_map(|s| s.matched).collect();
        prop_assert_eq!(laid.len(), chain.len());
        prop_assert!(laid.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn in_order_over_groups_is_the_longest(steps in small_steps(), calls in grouped_calls()) {
        let config = TrajectoryConfig::new();
        let mut g = grid(&steps, &calls, &config);
        let groups = super::extract::groups(&calls);
        let chain = chain_over_groups(&mut g, &groups);
        prop_assert_eq!(chain.len(), brute_group_chain(&steps, &calls, &config));
        // Steps increasing, responses never going back, calls distinct, every pair a match.
        for w in chain.windows(2) {
            prop_assert!(w[0].0 < w[1].0);
            prop_assert!(calls[w[0].1].response <= calls[w[1].1].response);
        }
        let mut used: Vec<usize> = chain.iter().map(|p| p.1).collect();
        used.sort_unstable();
        used.dedup();
        prop_assert_eq!(used.len(), chain.len());
        prop_assert!(chain.iter().all(|&(i, j)| g.is_match(i, j)));
        // With every call a group of its own it is the longest chain of calls in order.
        let singles: Vec<std::ops::Range<usize>> = (0..calls.len()).map(|j| j..j + 1).collect();
        prop_assert_eq!(chain_over_groups(&mut g, &singles).len(), longest_chain(&g).len());
        // And evaluate reaches the same count.
        let e = ExpectedTrajectory { mode: Some(Mode::InOrder), steps: steps.clone(), ..Default::default() };
        let v = evaluate(&e, &calls, &config);
        prop_assert_eq!(v.steps.iter().filter(|s| s.matched.is_some()).count(), chain.len());
        // Its chain (the short way's or the full one's) is a chain too.
        let laid: Vec<usize> = v.steps.iter().filter_map(|s| s.matched).collect();
        for w in laid.windows(2) {
            prop_assert!(w[0] != w[1] && calls[w[0]].response <= calls[w[1]].response);
        }
        let mut distinct = laid.clone();
        distinct.sort_unstable();
        distinct.dedup();
        prop_assert_eq!(distinct.len(), laid.len());
    }

    #[test]
    fn exact_over_groups_is_the_best_order_inside_each(steps in small_steps(), calls in grouped_calls()) {
        let config = TrajectoryConfig::new();
        let e = ExpectedTrajectory { mode: Some(Mode::Exact), steps: steps.clone(), ..Default::default() };
        let v = evaluate(&e, &calls, &config);
        let matched = v.steps.iter().filter(|s| s.matched.is_some()).count();
        prop_assert_eq!(matched, brute_exact(&steps, &calls, &config));
        // Every call is at a step's place or past the steps, never both.
        let mut placed: Vec<usize> = v.steps.iter().filter_map(|s| s.matched).collect();
        placed.extend(&v.unexpected);
        placed.sort_unstable();
        placed.dedup();
        prop_assert!(placed.len() <= calls.len());
        prop_assert_eq!(v.unexpected.len(), calls.len().saturating_sub(steps.len()));
    }

    #[test]
    fn every_mode_is_invariant_under_reordering_inside_a_group(
        steps in small_steps(),
        calls in grouped_calls(),
        seed in any::<u64>(),
    ) {
        // Reverse each group whose seed bit is set.
        let mut reordered = calls.clone();
        for (k, g) in super::extract::groups(&calls).into_iter().enumerate() {
            if seed >> (k % 64) & 1 == 1 {
                reordered[g].reverse();
            }
        }
        for mode in [Mode::Exact, Mode::InOrder, Mode::AnyOrder, Mode::Subset, Mode::Allowed] {
            let e = ExpectedTrajectory { mode: Some(mode), steps: steps.clone(), ..Default::default() };
            let config = TrajectoryConfig::new();
            prop_assert_eq!(
                evaluate(&e, &calls, &config).score,
                evaluate(&e, &reordered, &config).score,
                "{}", mode
            );
        }
    }

    #[test]
    fn allowed_counts_the_calls_some_step_matches(steps in small_steps(), calls in small_calls()) {
        let config = TrajectoryConfig::new();
        let g = grid(&steps, &calls, &config);
        let allowed = (0..calls.len()).filter(|&j| (0..steps.len()).any(|i| g.is_match(i, j))).count();
        let e = |mode| ExpectedTrajectory { mode: Some(mode), steps: steps.clone(), ..Default::default() };
        let v = evaluate(&e(Mode::Allowed), &calls, &config);
        let expected_score = if calls.is_empty() { 1.0 } else { allowed as f64 / calls.len() as f64 };
        prop_assert_eq!(v.score, expected_score);
        prop_assert_eq!(v.unexpected.len(), calls.len() - allowed);
        // `subset` is the stricter: it never passes where `allowed` fails.
        let subset = evaluate(&e(Mode::Subset), &calls, &config);
        prop_assert!(subset.score <= v.score);
        // A passing verdict of either lists no miss.
        for v in [v, subset] {
            if v.passed {
                prop_assert!(v.misses(&calls).is_empty(), "{:?}", v.misses(&calls));
            }
        }
    }

    #[test]
    fn the_probe_agrees_with_the_written_mismatches(steps in small_steps(), calls in small_calls()) {
        for config in [
            TrajectoryConfig::new(),
            TrajectoryConfig::new().args(Args::Exact),
            TrajectoryConfig::new().args(Args::Subset),
            TrajectoryConfig::new().args(Args::Ignore),
            TrajectoryConfig::new()
                .args(Args::Exact)
                .field(FieldSpec::numeric_tolerance("*.x", 0.5))
                .ignore_path("b.y")
                .unwrap(),
        ] {
            for step in &steps {
                for call in &calls {
                    prop_assert_eq!(
                        super::args::matches(step, call, &config),
                        super::args::compare(step, call, &config).is_some_and(|m| m.is_empty())
                    );
                    prop_assert_eq!(
                        super::args::mismatch_count(step, call, &config),
                        super::args::compare(step, call, &config).map(|m| m.len())
                    );
                }
            }
        }
    }

    #[test]
    fn any_order_is_the_maximum_matching(steps in small_steps(), calls in small_calls()) {
        let config = TrajectoryConfig::new();
        let pairs = max_matching(&mut grid(&steps, &calls, &config));
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
        for mode in [Mode::Exact, Mode::InOrder, Mode::AnyOrder, Mode::Subset, Mode::Allowed] {
            let e = ExpectedTrajectory { mode: Some(mode), steps: steps.clone(), ..Default::default() };
            for args in [Args::Exact, Args::Partial, Args::Subset, Args::Ignore] {
                let v = evaluate(&e, &calls, &TrajectoryConfig::new().args(args));
                prop_assert!(v.passed, "{}", v.render(&calls));
                prop_assert!(v.misses(&calls).is_empty());
            }
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

// Steps and calls whose arguments differ in 0 to 3 keys, tools from a 3-letter alphabet and a
// glob: the closest call is chosen among counts that differ and tie.
fn counted_steps() -> impl Strategy<Value = Vec<Step>> {
    let args = prop::option::of(prop::collection::btree_map(
        prop_oneof![Just("x"), Just("y"), Just("z")],
        0u8..2,
        0..4,
    ));
    prop::collection::vec((0u8..4, args), 0..7).prop_map(|v| {
        v.into_iter()
            .map(|(t, a)| Step {
                tool: if t == 3 {
                    "*".into()
                } else {
                    ((b'a' + t) as char).to_string()
                },
                args: a.map(|a| json!(a)),
                args_match: None,
            })
            .collect()
    })
}

/// Calls with all three keys; each starts a new response or joins the one before (`grouped`).
fn counted_calls(grouped: bool) -> impl Strategy<Value = Vec<ToolCall>> {
    prop::collection::vec((0u8..3, [0u8..2, 0u8..2, 0u8..2], any::<bool>()), 0..8).prop_map(
        move |v| {
            let mut response = 0;
            v.into_iter()
                .enumerate()
                .map(|(k, (t, [x, y, z], joins))| {
                    let call = ToolCall::new(
                        ((b'a' + t) as char).to_string(),
                        json!({ "x": x, "y": y, "z": z }),
                    );
                    if !grouped {
                        return call;
                    }
                    if k > 0 && !joins {
                        response += 1;
                    }
                    call.in_response(response)
                })
                .collect()
        },
    )
}

/// The closest call by its definition: of the calls of the step's tool, the one with the fewest
/// mismatches written, calls no step took first, the earliest among equals.
fn brute_closest(
    step: &Step,
    calls: &[ToolCall],
    config: &TrajectoryConfig,
    taken: &[bool],
) -> Option<Closest> {
    calls
        .iter()
        .enumerate()
        .filter_map(|(j, call)| super::args::compare(step, call, config).map(|m| (j, m)))
        .min_by_key(|(j, m)| (taken[*j], m.len(), *j))
        .map(|(call, mismatches)| Closest { call, mismatches })
}

fn closest_configs() -> Vec<TrajectoryConfig> {
    vec![
        TrajectoryConfig::new(),
        TrajectoryConfig::new().args(Args::Exact),
        TrajectoryConfig::new().args(Args::Subset),
        TrajectoryConfig::new()
            .args(Args::Exact)
            .field(FieldSpec::numeric_tolerance("*.x", 0.5))
            .ignore_path("b.y")
            .unwrap(),
    ]
}

proptest! {
    #[test]
    fn each_unmatched_step_is_shown_against_the_closest_call_by_brute_force(
        steps in counted_steps(),
        calls in counted_calls(true),
    ) {
        for config in closest_configs() {
            for mode in [Mode::InOrder, Mode::AnyOrder, Mode::Subset, Mode::Allowed] {
                let e = ExpectedTrajectory { mode: Some(mode), steps: steps.clone(), ..Default::default() };
                let v = evaluate(&e, &calls, &config);
                // The calls laid on a step: in `allowed` every call it allows, else the matched.
                let mut taken = vec![false; calls.len()];
                for j in v.steps.iter().filter_map(|s| s.matched) {
                    taken[j] = true;
                }
                if mode == Mode::Allowed {
                    taken = (0..calls.len()).map(|j| !v.unexpected.contains(&j)).collect();
                }
                for (step, outcome) in steps.iter().zip(&v.steps) {
                    let want = match outcome.matched {
                        Some(_) => None,
                        None => brute_closest(step, &calls, &config, &taken),
                    };
                    prop_assert_eq!(&outcome.closest, &want, "{} {:?}", mode, step);
                    prop_assert_eq!(outcome.in_its_place, None);
                }
            }
        }
    }

    #[test]
    fn exact_shows_a_step_against_its_place_else_the_closest_call(
        steps in counted_steps(),
        calls in counted_calls(false),
    ) {
        for config in closest_configs() {
            let e = ExpectedTrajectory { mode: Some(Mode::Exact), steps: steps.clone(), ..Default::default() };
            let v = evaluate(&e, &calls, &config);
            let mut taken = vec![false; calls.len()];
            for j in v.steps.iter().filter_map(|s| s.matched) {
                taken[j] = true;
            }
            for (i, (step, outcome)) in steps.iter().zip(&v.steps).enumerate() {
                if outcome.matched.is_some() {
                    prop_assert_eq!(outcome.matched, Some(i));
                    prop_assert_eq!(&outcome.closest, &None);
                    continue;
                }
                // With no groups, step i's place is call i.
                let place = calls.get(i).map(|c| super::args::compare(step, c, &config));
                let (in_its_place, closest) = match place {
                    Some(Some(m)) => {
                        prop_assert!(!m.is_empty());
                        (None, Some(Closest { call: i, mismatches: m }))
                    }
                    Some(None) => (Some(i), brute_closest(step, &calls, &config, &taken)),
                    None => (None, brute_closest(step, &calls, &config, &taken)),
                };
                prop_assert_eq!(outcome.in_its_place, in_its_place);
                prop_assert_eq!(&outcome.closest, &closest, "{:?}", step);
            }
        }
    }
}

#[test]
fn allowed_shows_a_step_with_the_first_call_it_allows() {
    let e =
        expected(json!({"mode": "allowed", "steps": [{"tool": "pricing"}, {"tool": "recommend"}]}));
    let calls = calls(&[
        ("recommend", json!({})),
        ("pricing", json!({})),
        ("recommend", json!({})),
        ("pricing", json!({})),
    ]);
    let v = evaluate(&e, &calls, &config());
    assert!(v.passed);
    let matched: Vec<_> = v.steps.iter().map(|s| s.matched).collect();
    assert_eq!(matched, [Some(1), Some(0)]);
}

#[test]
fn names_are_the_names_fixtures_and_configs_use() {
    for mode in [
        Mode::Exact,
        Mode::InOrder,
        Mode::AnyOrder,
        Mode::Subset,
        Mode::Allowed,
    ] {
        assert_eq!(serde_json::to_value(mode).unwrap(), json!(mode.name()));
        assert_eq!(mode.to_string(), mode.name());
    }
    for args in [Args::Partial, Args::Exact, Args::Subset, Args::Ignore] {
        assert_eq!(serde_json::to_value(args).unwrap(), json!(args.name()));
    }
}

#[test]
fn the_configs_mode_applies_where_the_fixture_names_none() {
    let steps = vec![Step::tool("b"), Step::tool("a")];
    let calls = calls(&[("a", json!({})), ("b", json!({}))]);
    let e = ExpectedTrajectory {
        steps,
        ..Default::default()
    };
    let config = TrajectoryConfig::new().mode(Mode::AnyOrder);
    let v = evaluate(&e, &calls, &config);
    assert_eq!((v.mode, v.passed), (Mode::AnyOrder, true));
    let in_fixture = ExpectedTrajectory {
        mode: Some(Mode::Exact),
        ..e
    };
    assert_eq!(evaluate(&in_fixture, &calls, &config).mode, Mode::Exact);
}

#[test]
fn config_and_expectation_details() {
    // A tool's own comparison, by its exact name; a glob or `?` is refused.
    let config: TrajectoryConfig =
        toml::from_str("[tools.recommend]\nargs_match = \"exact\"\n").unwrap();
    assert_eq!(config.tools["recommend"].args_match, Some(Args::Exact));
    let glob =
        toml::from_str::<TrajectoryConfig>("[tools.\"search_?\"]\nargs_match = \"ignore\"\n");
    assert!(glob
        .unwrap_err()
        .to_string()
        .contains("name one tool exactly"));
    // `required = false` means nothing here either.
    let toml_err = toml::from_str::<TrajectoryConfig>(
        "[[fields]]\npath = \"a.b\"\nmatch = \"numeric_tolerance\"\nrequired = false\n",
    )
    .unwrap_err();
    assert!(
        toml_err.to_string().contains("not used by trajectory"),
        "{toml_err}"
    );
    let err = |v: Value| {
        serde_json::from_value::<ExpectedTrajectory>(v)
            .unwrap_err()
            .to_string()
    };
    // Only a forbidden entry may be a bare name.
    assert!(
        err(json!({"steps": ["lookup"]})).starts_with("expected_trajectory step 1: "),
        "{}",
        err(json!({"steps": ["lookup"]}))
    );
    // An error about the whole long form names no key.
    assert!(
        err(json!({"mode": "exact"})).starts_with("expected_trajectory: "),
        "{}",
        err(json!({"mode": "exact"}))
    );
    // A bare forbidden entry is written back as its name, others as steps.
    let e = expected(json!({"steps": [], "forbidden": [
        "delete_order",
        {"tool": "refund", "args": {"all": true}},
        {"tool": "drop", "args_match": "exact"}
    ]}));
    let written = serde_json::to_value(&e).unwrap();
    assert_eq!(
        written["forbidden"],
        json!(["delete_order", {"tool": "refund", "args": {"all": true}}, {"tool": "drop", "args_match": "exact"}])
    );
}

/// The JSON Schema of a step and of `[trajectory]` (built with the `schema` feature:
/// `cargo test -p proposal-eval-engine --features schema --lib trajectory`).
#[cfg(feature = "schema")]
#[test]
fn the_schema_has_the_steps_shape_and_the_camel_case_alias() {
    let config = serde_json::to_value(schemars::schema_for!(TrajectoryConfig)).unwrap();
    assert_eq!(
        config["properties"]["ignorePaths"],
        config["properties"]["ignore_paths"]
    );
    assert!(config["properties"]["ignorePaths"].is_object(), "{config}");
    let step = serde_json::to_value(schemars::schema_for!(Step)).unwrap();
    assert_eq!(step["title"], "Step", "{step}");
    assert!(step["properties"]["tool"].is_object(), "{step}");
    assert!(step["properties"]["args_match"].is_object(), "{step}");
}

/// A `*` or `?` in a call's tool name is a character like any other: `*?` still matches any
/// name of one character or more, one that ends in `*` too.
#[test]
fn a_glob_matches_a_name_holding_a_star() {
    use super::config::tool_matches;
    assert!(tool_matches("*?", "a*"));
    assert!(tool_matches("a*", "a*b"));
    assert!(tool_matches("*b", "**b"));
    assert!(!tool_matches("*?", ""));
}

/// Each bound alone makes a score of 1 zero.
#[test]
fn each_bound_alone_makes_the_score_zero() {
    for bound in [
        json!({"min_calls": 4}),
        json!({"max_calls": 2}),
        json!({"calls": {"pricing": {"max": 0}}}),
        json!({"forbidden": ["pricing"]}),
    ] {
        let mut long = json!({"mode": "any_order", "steps": [{"tool": "recommend"}]});
        long.as_object_mut()
            .unwrap()
            .extend(bound.as_object().unwrap().clone());
        let v = evaluate(&expected(long), &agent(), &config());
        assert_eq!(v.score, 0.0, "{bound}: {}", v.summary);
    }
}
