//! code_judge end to end: real processes, written to a temporary crate root.
#![cfg(unix)]

use proposal_eval::__internal::code_judge::{
    run, CodeJudgeConfig, CodeJudgeError, CodeJudgeInput, CodeJudgeVerdict,
};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn python_judge(dir: &Path, name: &str, body: &str) -> CodeJudgeConfig {
    std::fs::write(dir.join(format!("{name}.py")), body).unwrap();
    CodeJudgeConfig::new(name, ["python3".to_string(), format!("{name}.py")])
}

fn input() -> CodeJudgeInput {
    CodeJudgeInput {
        input: json!({"message": "extract the invoice"}),
        candidate_answer: json!({"total": 10}),
        reference_answer: json!({"total": 12}),
        case: json!({"description": "a case"}),
        rubric: None,
        trajectory: Vec::new(),
    }
}

fn judge(config: &CodeJudgeConfig, dir: &Path) -> CodeJudgeVerdict {
    run(config, dir, &input())
}

/// Whether a process is gone: no `/proc` entry, or a zombie waiting for a reaper that is not
/// ours (a container's init may be slow to reap).
fn is_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

fn wait_gone(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        if is_gone(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[test]
fn success_receives_the_whole_request_and_reports_a_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let config = python_judge(
        dir.path(),
        "echo",
        r#"
import json, sys
req = json.load(sys.stdin)
assert sorted(req) == ["candidate_answer", "case", "config", "input", "reference_answer", "trajectory"], sorted(req)
assert req["trajectory"] == [], req["trajectory"]
c, r = req["candidate_answer"]["total"], req["reference_answer"]["total"]
score = c / r
print(json.dumps({"score": score, "hits": ["total present"], "misses": [f"total {c} != {r}"],
                  "reasoning": f"ratio with min {req['config']['min']}, case {req['case']['description']}"}))
"#,
    )
    .threshold(0.8)
    .config("min", json!(0.5));
    let v = judge(&config, dir.path());
    assert_eq!(v.error, None, "{}", v.reasoning);
    assert_eq!(v.name, "echo");
    assert!((v.score - 10.0 / 12.0).abs() < 1e-12);
    assert!(v.passed);
    assert_eq!(v.hits, ["total present"]);
    assert_eq!(v.misses, ["total 10 != 12"]);
    assert_eq!(v.reasoning, "ratio with min 0.5, case a case");
    assert_eq!(
        v.render(false),
        "  ✗ total 10 != 12\n  ✓ total present\n  ratio with min 0.5, case a case\n"
    );

    let v = run(&config.clone().threshold(0.9), dir.path(), &input());
    assert!(!v.passed);
}

/// A case's rubric reaches the script as `rubric`, with both lists.
#[test]
fn the_rubric_is_handed_to_the_script() {
    let dir = tempfile::tempdir().unwrap();
    let config = python_judge(
        dir.path(),
        "rubric",
        r#"
import json, sys
req = json.load(sys.stdin)
print(json.dumps({"score": 1, "reasoning": json.dumps(req["rubric"], sort_keys=True)}))
"#,
    );
    let with_rubric = CodeJudgeInput {
        rubric: Some(proposal_eval::rubric::Rubric {
            required: vec!["Greets".into()],
            forbidden: vec![],
        }),
        ..input()
    };
    let v = run(&config, dir.path(), &with_rubric);
    assert_eq!(v.error, None, "{}", v.reasoning);
    assert_eq!(v.reasoning, r#"{"forbidden": [], "required": ["Greets"]}"#);
}

#[test]
fn score_is_clamped_and_hits_may_be_absent() {
    let dir = tempfile::tempdir().unwrap();
    let config = python_judge(dir.path(), "big", "print('{\"score\": 7}')");
    let v = judge(&config, dir.path());
    assert_eq!(v.score, 1.0);
    assert!(v.passed);
    assert!(v.hits.is_empty() && v.misses.is_empty());
    assert_eq!(v.reasoning, "(score 7 clamped to 1)");
}

#[test]
fn timeout_kills_the_judge_and_its_children() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    // A shell script rather than Python: it starts in a millisecond, so even on a loaded
    // machine it has written its pids long before the timeout.
    std::fs::write(
        dir.path().join("slow.sh"),
        format!(
            "sleep 60 &\necho \"$$ $!\" > {}\nsleep 60\n",
            pids.display()
        ),
    )
    .unwrap();
    let config = CodeJudgeConfig::new("slow", ["sh", "slow.sh"]).timeout_ms(1500);
    let started = Instant::now();
    let v = judge(&config, dir.path());
    let took = started.elapsed();
    assert_eq!(v.error, Some(CodeJudgeError::Timeout { timeout_ms: 1500 }));
    assert_eq!(v.score, 0.0);
    assert!(!v.passed);
    assert!(
        v.reasoning.contains("timed out after 1500 ms"),
        "{}",
        v.reasoning
    );
    assert!(took < Duration::from_secs(10), "took {took:?}");
    let written = std::fs::read_to_string(&pids).expect("the judge started and wrote its pids");
    for pid in written.split_whitespace() {
        let pid: u32 = pid.parse().unwrap();
        assert!(wait_gone(pid), "process {pid} survived the timeout");
    }
}

#[test]
fn a_finished_judge_leaves_nothing_running_and_does_not_hang_on_inherited_pipes() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    // The background `sleep` inherits stdout: without the group kill, reading stdout to the end
    // would wait for it for a minute.
    std::fs::write(
        dir.path().join("bg.sh"),
        format!(
            "sleep 60 &\necho $! > {}\necho '{{\"score\": 1}}'\n",
            pids.display()
        ),
    )
    .unwrap();
    let config = CodeJudgeConfig::new("bg", ["sh", "bg.sh"]).timeout_ms(20_000);
    let started = Instant::now();
    let v = judge(&config, dir.path());
    assert_eq!(v.error, None, "{}", v.reasoning);
    assert!(started.elapsed() < Duration::from_secs(5));
    let pid: u32 = std::fs::read_to_string(&pids)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(wait_gone(pid), "background process {pid} survived");
}

#[test]
fn a_crash_carries_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let config = python_judge(
        dir.path(),
        "crash",
        "import json\nraise ValueError('bad box 3')\n",
    );
    let v = judge(&config, dir.path());
    assert_eq!(v.score, 0.0);
    assert!(!v.passed);
    let Some(CodeJudgeError::Exit { status, stderr }) = &v.error else {
        panic!("{:?}", v.error)
    };
    assert_eq!(status, "exit status: 1");
    assert!(stderr.contains("ValueError: bad box 3"), "{stderr}");
    assert!(
        v.reasoning
            .starts_with("exited with exit status: 1; stderr:\nTraceback"),
        "{}",
        v.reasoning
    );
}

#[test]
fn a_signal_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let config = CodeJudgeConfig::new("sig", ["sh", "-c", "kill -9 $$"]);
    let v = judge(&config, dir.path());
    assert_eq!(v.reasoning, "exited with killed by signal 9 and no stderr");
}

#[test]
fn huge_stderr_is_cut_to_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let config = python_judge(
        dir.path(),
        "noisy",
        "import sys\nsys.stderr.write('x' * 5_000_000)\nsys.stderr.write('THE END')\nsys.exit(4)\n",
    );
    let v = judge(&config, dir.path());
    let Some(CodeJudgeError::Exit { stderr, .. }) = &v.error else {
        panic!("{:?}", v.error)
    };
    assert!(stderr.ends_with("THE END"));
    assert!(stderr.chars().count() <= 2001);
}

#[test]
fn garbage_and_wrong_shapes_say_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    for (name, output, needle) in [
        ("empty", "", "printed nothing on stdout"),
        ("text", "score: 1", "stdout is not JSON"),
        ("array", "[1, 2]", "stdout is a JSON array, not an object"),
        ("noscore", "{\"hits\": []}", "`score` is missing"),
        ("strscore", "{\"score\": \"0.9\"}", "`score` is a string"),
        (
            "badhits",
            "{\"score\": 1, \"hits\": \"all\"}",
            "`hits` is a string, not a list",
        ),
        (
            "two",
            "{\"score\": 1}\n{\"score\": 0}",
            "stdout is not JSON (trailing characters",
        ),
    ] {
        let config = python_judge(
            dir.path(),
            name,
            &format!("import sys\nsys.stdout.write({output:?})\n"),
        );
        let v = judge(&config, dir.path());
        assert!(
            matches!(v.error, Some(CodeJudgeError::Output { .. })),
            "{name}: {:?}",
            v.error
        );
        assert_eq!(v.score, 0.0);
        assert!(v.reasoning.contains(needle), "{name}: {}", v.reasoning);
        assert!(
            v.reasoning.contains("a judge prints one JSON object"),
            "{}",
            v.reasoning
        );
    }
}

#[test]
fn megabytes_of_output_do_not_hang() {
    let dir = tempfile::tempdir().unwrap();
    // Valid but large: 8 MB of reasoning, written before stdin is read.
    let config = python_judge(
        dir.path(),
        "large",
        "import json, sys\nsys.stdout.write(json.dumps({'score': 0.5, 'reasoning': 'r' * 8_000_000}))\nsys.stdout.flush()\njson.load(sys.stdin)\n",
    );
    let v = judge(&config, dir.path());
    assert_eq!(
        v.error,
        None,
        "{}",
        &v.reasoning[..200.min(v.reasoning.len())]
    );
    assert_eq!(v.reasoning.len(), 8_000_000);
    // Garbage, and more than is kept.
    let config = python_judge(
        dir.path(),
        "flood",
        "import sys\nfor _ in range(20):\n    sys.stdout.write('y' * 1_000_000)\n",
    );
    let started = Instant::now();
    let v = judge(&config, dir.path());
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(v.reasoning, "stdout is larger than 16 MiB; a judge prints one JSON object {\"score\": 0..1, \"hits\": [...], \"misses\": [...], \"reasoning\": \"...\"}");
}

#[test]
fn a_judge_that_never_reads_a_huge_input_does_not_deadlock() {
    let dir = tempfile::tempdir().unwrap();
    let config = python_judge(dir.path(), "deaf", "print('{\"score\": 1}')\n");
    let big = CodeJudgeInput {
        candidate_answer: Value::String("z".repeat(10_000_000)),
        ..input()
    };
    let v = run(&config, dir.path(), &big);
    assert_eq!(v.error, None, "{}", v.reasoning);
    assert_eq!(v.score, 1.0);
}

#[test]
fn a_missing_program_is_a_spawn_error() {
    let dir = tempfile::tempdir().unwrap();
    let config = CodeJudgeConfig::new("nope", ["definitely-not-a-program-3141"]);
    let v = judge(&config, dir.path());
    let Some(CodeJudgeError::Spawn {
        command,
        dir: ran_in,
        ..
    }) = &v.error
    else {
        panic!("{:?}", v.error)
    };
    assert_eq!(command, "definitely-not-a-program-3141");
    assert_eq!(ran_in, dir.path());
    assert!(v
        .reasoning
        .starts_with("could not start `definitely-not-a-program-3141`"));
}

#[test]
fn paths_resolve_from_the_crate_root() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("judges")).unwrap();
    let script = dir.path().join("judges/ok.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\ncat > /dev/null\necho '{\"score\": 1, \"reasoning\": \"'$(pwd)'\"}'\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let root = dir.path().canonicalize().unwrap();
    for command in [
        vec!["judges/ok.sh"],
        vec!["./judges/ok.sh"],
        vec!["sh", "judges/ok.sh"],
    ] {
        let config = CodeJudgeConfig::new("ok", command.clone());
        let v = run(&config, &root, &input());
        assert_eq!(v.error, None, "{command:?}: {}", v.reasoning);
        assert_eq!(PathBuf::from(&v.reasoning), root, "runs in the crate root");
    }
}

#[test]
fn toml_config_goes_to_the_script() {
    let config: CodeJudgeConfig = toml::from_str(
        r#"
name = "bbox_iou"
command = ["python3", "judges/iou.py"]
timeout_ms = 5000
threshold = 0.7
iou_min = 0.5
boxes_path = "invoice.boxes"
"#,
    )
    .unwrap();
    assert_eq!(config.timeout_ms, 5000);
    assert_eq!(config.threshold, 0.7);
    assert_eq!(
        Value::Object(config.config),
        json!({"iou_min": 0.5, "boxes_path": "invoice.boxes"})
    );
    for (bad, needle) in [
        ("name = \"x\"\ncommand = []\n", "`command` is empty"),
        (
            "name = \"x\"\ncommand = [\"a\"]\nthreshold = 2\n",
            "within 0 and 1",
        ),
        (
            "name = \"x\"\ncommand = [\"a\"]\ntimeout = 5\n",
            "`timeout` looks like a misspelt `timeout_ms`",
        ),
        ("command = [\"a\"]\n", "missing field `name`"),
    ] {
        let err = toml::from_str::<CodeJudgeConfig>(bad).unwrap_err();
        assert!(err.to_string().contains(needle), "{bad}: {err}");
    }
}

fn example_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/invoice-extraction")
}

#[test]
fn the_example_iou_judge() {
    let config = CodeJudgeConfig::new("bbox_iou", ["python3", "judges/iou.py"])
        .config("iou_min", json!(0.5))
        .config("boxes_path", json!("invoice.boxes"));
    let case = |candidate: Value| CodeJudgeInput {
        candidate_answer: json!({ "invoice": { "boxes": candidate } }),
        reference_answer: json!({"invoice": {"boxes": [[0, 0, 10, 10], {"x": 20, "y": 20, "width": 10, "height": 10}]}}),
        ..input()
    };
    let v = run(
        &config,
        &example_root(),
        &case(json!([[0, 0, 10, 10], [20, 20, 30, 30]])),
    );
    assert_eq!(v.error, None, "{}", v.reasoning);
    assert_eq!(v.score, 1.0);
    assert_eq!(v.hits.len(), 2);

    // One box shifted (IoU 81/100 = 0.81... for a 1-pixel shift of both corners: 81/100), one missing.
    let v = run(&config, &example_root(), &case(json!([[1, 1, 10, 10]])));
    assert!((v.score - 0.81 / 2.0).abs() < 1e-9, "{}", v.score);
    assert!(!v.passed);
    assert_eq!(v.misses, ["reference box 1: no overlapping candidate box"]);

    let v = run(&config, &example_root(), &case(json!([[0, 0, "ten", 10]])));
    assert!(matches!(v.error, Some(CodeJudgeError::Exit { .. })));
    assert!(
        v.reasoning.contains("box coordinates must be numbers"),
        "{}",
        v.reasoning
    );
}

#[test]
fn the_example_supplier_name_judge() {
    let config = CodeJudgeConfig::new("supplier_name", ["python3", "judges/supplier_name.py"])
        .threshold(0.85)
        .config("aliases", json!({"ACME Corp": "Acme Industrial"}));
    let case = |candidate: &str| CodeJudgeInput {
        candidate_answer: json!({ "invoice": { "supplier_name": candidate } }),
        reference_answer: json!({"invoice": {"supplier_name": "ACME Industrial GmbH"}}),
        ..input()
    };
    let score = |candidate: &str| {
        let v = run(&config, &example_root(), &case(candidate));
        assert_eq!(v.error, None, "{}", v.reasoning);
        (v.score, v.passed)
    };
    assert_eq!(score("Acme Industrial GmbH."), (1.0, true));
    assert_eq!(score("acme  industrial"), (1.0, true));
    assert_eq!(score("ACME Corp"), (1.0, true), "alias");
    let (s, passed) = score("Acme lndustrial Gmbh");
    assert!((s - 14.0 / 15.0).abs() < 1e-9 && passed, "{s}");
    let (s, passed) = score("Globex Ltd");
    assert!(s < 0.5 && !passed, "{s}");

    let v = run(
        &config,
        &example_root(),
        &CodeJudgeInput {
            candidate_answer: json!({"invoice": {}}),
            ..case("")
        },
    );
    assert_eq!(v.score, 0.0);
    assert_eq!(
        v.misses,
        ["`invoice.supplier_name` is missing from the candidate"]
    );
}

#[test]
fn a_judge_reads_the_trajectory_on_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let config = python_judge(
        dir.path(),
        "tools",
        "import json, sys\n\
         d = json.load(sys.stdin)\n\
         tools = [c['tool'] for c in d['trajectory']]\n\
         ok = tools == ['inventory_lookup', 'recommend'] and d['trajectory'][1]['args']['price'] == 950\n\
         print(json.dumps({'score': 1 if ok else 0, 'reasoning': 'tools ' + ','.join(tools)}))\n",
    );
    let with_calls = CodeJudgeInput {
        trajectory: vec![
            proposal_eval::trajectory::ToolCall::new("inventory_lookup", json!({"sku": "S-1"})),
            proposal_eval::trajectory::ToolCall::new("recommend", json!({"price": 950})),
        ],
        ..input()
    };
    let v = run(&config, dir.path(), &with_calls);
    assert_eq!(
        (v.score, v.reasoning.as_str()),
        (1.0, "tools inventory_lookup,recommend")
    );
    let v = run(&config, dir.path(), &input());
    assert_eq!((v.score, v.reasoning.as_str()), (0.0, "tools "));
}
