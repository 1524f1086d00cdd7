//! Whole test-binary runs over the generated 5,000-fixture suites, in one `cargo bench` run:
//! `tests/ours.rs` (`proposal_eval::Harness`) against `tests/theirs.rs` (datatest-stable +
//! assert-json-diff) on the model-shape suite, and `tests/ours_no_model.rs` against
//! `tests/theirs_no_model.rs` on the no-model suite, side by side in each criterion group. What
//! `measure.sh` times, with criterion's statistics.
//!
//! `cd bench/suite-scale && cargo bench` (all groups, ~75 s on 2 cores once built), or
//! `cargo bench -- one_case` for a group by name.
//!
//! Each iteration spawns the built test binary (the one `cargo test --release` builds and runs,
//! found through `cargo test --release --no-run --message-format=json`) with the environment
//! cargo test gives it (`CARGO_MANIFEST_DIR`, `CARGO_PKG_NAME`, the crate as working directory),
//! waits for it, and fails the bench if it exits non-zero. Output goes to `/dev/null`, so the
//! terminal is not in the numbers; cargo's own start-up is not either. Criterion's warm-up runs
//! come first, so both sides read the suite from a warm page cache.
//!
//! Groups, each with `proposal-eval` and `datatest-stable+assert-json-diff`:
//! - `suite5k`: `<binary> -q`, the default thread count (the machine's cores).
//! - `no_model5k`: the same over the no-model suite.
//! - `suite5k_test_threads_1`: `<binary> -q --test-threads 1`.
//! - `one_case_exact`: `<binary> -q --exact NAME`, one case (`cargo test -- --exact NAME`).
//! - `one_case_exact_nextest`: `<binary> --exact NAME --nocapture` with the variables nextest
//!   sets (`NEXTEST`, `NEXTEST_RUN_ID`, `NEXTEST_EXECUTION_MODE`): nextest's per-process view,
//!   one process per test.
//!
//! At the end, one line per group with the ratio of the medians (ours / theirs), read from
//! criterion's `new/estimates.json` of this run.
//!
//! Criterion runs one function's samples, then the other's (measure.sh alternates round by
//! round): on a loaded machine, compare the two within a run, not across runs.
//!
//! If `generated/suite5k` or `generated/no-model5k` is missing or incomplete, the crate's
//! `generate` binary writes it first (50 and 40 MB, ~10 s each).

use criterion::{criterion_group, Criterion, SamplingMode};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime};

/// The crate root: where cargo test runs the test binaries, and their `CARGO_MANIFEST_DIR`.
const CRATE_DIR: &str = env!("CARGO_MANIFEST_DIR");
/// The suites the test targets read (crate-relative), passed as `BENCH_SUITE`.
const SUITE: &str = "generated/suite5k";
const NO_MODEL_SUITE: &str = "generated/no-model5k";
const CASES: usize = 5000;
/// The case of the one-case groups: in the middle of the suite.
const ONE_CASE: usize = 2500;

const OURS: &str = "proposal-eval";
const THEIRS: &str = "datatest-stable+assert-json-diff";

/// The groups, in the order they run.
const GROUPS: [&str; 5] = [
    "suite5k",
    "no_model5k",
    "suite5k_test_threads_1",
    "one_case_exact",
    "one_case_exact_nextest",
];

struct Binaries {
    ours: PathBuf,
    theirs: PathBuf,
    ours_no_model: PathBuf,
    theirs_no_model: PathBuf,
}

/// Builds (if needed) and finds the test binaries, and generates the suite if it is missing.
/// Done once, before the first group (not for `--list`).
fn binaries() -> &'static Binaries {
    static BINARIES: OnceLock<Binaries> = OnceLock::new();
    BINARIES.get_or_init(|| {
        let built = build();
        let find = |name: &str| {
            built
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, path)| path.clone())
                .unwrap_or_else(|| panic!("cargo built no `{name}` executable"))
        };
        let binaries = Binaries {
            ours: find("test:ours"),
            theirs: find("test:theirs"),
            ours_no_model: find("test:ours_no_model"),
            theirs_no_model: find("test:theirs_no_model"),
        };
        for (suite, shape) in [(SUITE, "model"), (NO_MODEL_SUITE, "no-model")] {
            if !suite_complete(suite) {
                generate(&find("bin:generate"), suite, shape);
            }
        }
        // Results of other suites run by the same test binaries (a larger suite measured with
        // `measure.sh`, say) would stand in their report and be read and rendered again at the
        // end of every run: each bench starts from an empty report, as `measure.sh` does.
        if let Some(report) = binaries
            .ours
            .parent()
            .and_then(Path::parent)
            .and_then(Path::parent)
            .map(|target| target.join("proposal-eval"))
        {
            let _ = std::fs::remove_dir_all(report);
        }
        // The names the one-case groups use must each select exactly one test.
        check_one(&binaries.ours, &ours_case_name());
        check_one(&binaries.theirs, &theirs_case_name());
        binaries
    })
}

/// `cargo test --release --no-run --message-format=json --test ours --test theirs ...`: builds
/// the four test binaries as `cargo test --release` does (and the crate's binaries, which cargo
/// builds for integration tests) and returns `(kind:name, executable)` of each artifact.
/// `CARGO_TARGET_DIR` and the rest of the environment pass through, so this is the target dir
/// the bench itself was built in.
fn build() -> Vec<(String, PathBuf)> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    eprintln!("end_to_end: cargo test --release --no-run (the four test targets)");
    let output = Command::new(cargo)
        .current_dir(CRATE_DIR)
        .args([
            "test",
            "--release",
            "--no-run",
            "--message-format=json",
            "--test",
            "ours",
            "--test",
            "theirs",
            "--test",
            "ours_no_model",
            "--test",
            "theirs_no_model",
        ])
        .stderr(Stdio::inherit())
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "`cargo test --release --no-run` failed ({})",
        output.status
    );
    let mut built = Vec::new();
    for line in output.stdout.split(|&b| b == b'\n') {
        let Ok(message) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        if message["reason"] != "compiler-artifact" {
            continue;
        }
        let (Some(executable), Some(name), Some(kind)) = (
            message["executable"].as_str(),
            message["target"]["name"].as_str(),
            message["target"]["kind"][0].as_str(),
        ) else {
            continue;
        };
        built.push((format!("{kind}:{name}"), PathBuf::from(executable)));
    }
    built
}

/// The suite is there in full: config, prompt, and the last case's fixture and recording (the
/// generator writes cases in order).
fn suite_complete(suite: &str) -> bool {
    let root = Path::new(CRATE_DIR);
    let last = format!("cases/g{:02}/case_{:05}.json", (CASES - 1) / 100, CASES - 1);
    let mut files = vec![
        root.join(suite).join("proposal-eval.toml"),
        root.join(suite).join(&last),
    ];
    if suite == SUITE {
        files.push(root.join("generated/prompts/proposals.md"));
        files.push(root.join(suite).join("recordings").join(&last));
    }
    files.iter().all(|p| p.is_file())
}

fn generate(generate: &Path, suite: &str, shape: &str) {
    eprintln!("end_to_end: {suite} is missing or incomplete; generating {CASES} cases");
    let status = Command::new(generate)
        .current_dir(CRATE_DIR)
        .args([suite, &CASES.to_string(), shape])
        .status()
        .expect("generate runs");
    assert!(
        status.success(),
        "generate {suite} {CASES} {shape} failed ({status})"
    );
    assert!(
        suite_complete(suite),
        "generate did not write the whole suite"
    );
}

/// `proposal-eval` names a case `<suite folder>::<path under it, :: for />`.
fn ours_case_name() -> String {
    let folder = SUITE.rsplit('/').next().unwrap();
    format!(
        "{folder}::cases::g{:02}::case_{ONE_CASE:05}",
        ONE_CASE / 100
    )
}

/// datatest-stable names a case `<test fn>::<path under the root>`.
fn theirs_case_name() -> String {
    format!(
        "strict_case::cases/g{:02}/case_{ONE_CASE:05}.json",
        ONE_CASE / 100
    )
}

fn check_one(binary: &Path, name: &str) {
    let output = command(binary, &["--list", "--exact", name], &[])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .output()
        .expect("test binary runs");
    let listed = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|l| l.ends_with(": test"))
        .count();
    assert!(
        output.status.success() && listed == 1,
        "{} --list --exact {name}: {listed} tests listed ({})",
        binary.display(),
        output.status
    );
}

/// The test binary as cargo test runs it: from the crate root, with the variables the harness
/// reads.
fn command(binary: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut command = Command::new(binary);
    command
        .current_dir(CRATE_DIR)
        .env("CARGO_MANIFEST_DIR", CRATE_DIR)
        .env("CARGO_PKG_NAME", env!("CARGO_PKG_NAME"))
        .env("BENCH_SUITE", SUITE)
        .args(args)
        .envs(env.iter().copied());
    command
}

/// One run, spawn to exit, output to `/dev/null`. A failing run is run again with its output
/// captured, and the bench panics with it.
fn run_once(binary: &Path, args: &[&str], env: &[(&str, &str)]) -> Duration {
    let start = Instant::now();
    let status = command(binary, args, env)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("test binary runs");
    let elapsed = start.elapsed();
    if !status.success() {
        let output = command(binary, args, env)
            .output()
            .expect("test binary runs");
        let tail = |bytes: &[u8]| {
            let text = String::from_utf8_lossy(bytes).into_owned();
            let lines: Vec<&str> = text.lines().collect();
            lines[lines.len().saturating_sub(40)..].join("\n")
        };
        panic!(
            "{} {} exited with {status} (again: {})\n--- stdout (last 40 lines)\n{}\n--- stderr (last 40 lines)\n{}",
            binary.display(),
            args.join(" "),
            output.status,
            tail(&output.stdout),
            tail(&output.stderr)
        );
    }
    elapsed
}

/// One group: the same command line for both binaries of a shape.
fn group(
    c: &mut Criterion,
    name: &str,
    measurement: Duration,
    args: impl Fn(&str) -> Vec<String>,
    env: &[(&str, &str)],
) {
    let no_model = name.starts_with("no_model");
    let mut env = env.to_vec();
    if no_model {
        env.push(("BENCH_SUITE", NO_MODEL_SUITE));
    }
    let env = env.as_slice();
    let mut group = c.benchmark_group(name);
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(measurement);
    for (function, pick, case) in [
        (OURS, true, ours_case_name()),
        (THEIRS, false, theirs_case_name()),
    ] {
        let args = args(&case);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        group.bench_function(function, |b| {
            let binaries = binaries();
            let binary = match (pick, no_model) {
                (true, false) => &binaries.ours,
                (false, false) => &binaries.theirs,
                (true, true) => &binaries.ours_no_model,
                (false, true) => &binaries.theirs_no_model,
            };
            b.iter_custom(|iters| (0..iters).map(|_| run_once(binary, &args, env)).sum());
        });
    }
    group.finish();
}

fn whole_suite(c: &mut Criterion) {
    let whole = Duration::from_secs(8);
    group(c, GROUPS[0], whole, |_| vec!["-q".into()], &[]);
    group(c, GROUPS[1], whole, |_| vec!["-q".into()], &[]);
    group(
        c,
        GROUPS[2],
        whole,
        |_| vec!["-q".into(), "--test-threads".into(), "1".into()],
        &[],
    );
}

fn one_case(c: &mut Criterion) {
    let short = Duration::from_secs(3);
    group(
        c,
        GROUPS[3],
        short,
        |case| vec!["-q".into(), "--exact".into(), case.into()],
        &[],
    );
    // What nextest runs per test: `<binary> --exact NAME --nocapture`, with its variables. The
    // run id is one per bench process, as nextest has one per `cargo nextest run`.
    let run_id = format!("00000000-0000-4000-8000-{:012}", std::process::id());
    group(
        c,
        GROUPS[4],
        short,
        |case| vec!["--exact".into(), case.into(), "--nocapture".into()],
        &[
            ("NEXTEST", "1"),
            ("NEXTEST_RUN_ID", &run_id),
            ("NEXTEST_EXECUTION_MODE", "process-per-test"),
        ],
    );
}

criterion_group!(benches, whole_suite, one_case);

/// Where criterion writes its results, found as criterion 0.5 finds it.
fn criterion_home() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return home.into();
    }
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(target).join("criterion");
    }
    let metadata = std::env::var_os("CARGO").and_then(|cargo| {
        Command::new(cargo)
            .args(["metadata", "--format-version", "1", "--no-deps"])
            .output()
            .ok()
    });
    metadata
        .and_then(|m| serde_json::from_slice::<Value>(&m.stdout).ok())
        .and_then(|m| m["target_directory"].as_str().map(PathBuf::from))
        .map_or_else(|| "target/criterion".into(), |t| t.join("criterion"))
}

/// The median time per run (seconds) criterion estimated for `group/function` in this run, if
/// it measured it (not in `--test` or `--list` mode, not filtered out).
fn median(home: &Path, group: &str, function: &str, since: SystemTime) -> Option<f64> {
    let file = home.join(group).join(function).join("new/estimates.json");
    let fresh = std::fs::metadata(&file).ok()?.modified().ok()? >= since;
    if !fresh {
        return None;
    }
    let estimates: Value = serde_json::from_slice(&std::fs::read(&file).ok()?).ok()?;
    estimates["median"]["point_estimate"]
        .as_f64()
        .map(|ns| ns / 1e9)
}

/// The 1-minute load average, to read the numbers by (other processes share the cores).
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

fn main() {
    let since = SystemTime::now() - Duration::from_secs(1);
    // Set up before criterion starts timing, so the first warm-up is not spent building.
    if !std::env::args().any(|a| a == "--list") {
        binaries();
    }
    let load_before = load_average();
    benches();
    Criterion::default().configure_from_args().final_summary();
    let home = criterion_home();
    let mut header = false;
    for group in GROUPS {
        let (Some(ours), Some(theirs)) = (
            median(&home, group, OURS, since),
            median(&home, group, THEIRS, since),
        ) else {
            continue;
        };
        if !header {
            println!(
                "\nRatio of medians, {OURS} / {THEIRS} (same run; load average {load_before} \
                 before, {} after):",
                load_average()
            );
            header = true;
        }
        let unit = |s: f64| {
            if s >= 0.1 {
                format!("{s:.3} s")
            } else {
                format!("{:.2} ms", s * 1e3)
            }
        };
        println!(
            "  {group:<24} {:.2}x  ({} / {})",
            ours / theirs,
            unit(ours),
            unit(theirs)
        );
    }
}
