//! Times the staleness check of every recording of a generated suite, with the runtime's own
//! `proposal_eval::__internal::status::SuiteStatus::check` (what `cargo proposal-eval status` runs):
//! discover the fixtures, hash each fixture and the suite's sources, read and parse each
//! recording, compare the hashes, and look for orphans.
//!
//! `status_check [suite folder, crate-relative] [rounds] [mode]`, run from `bench/suite-scale`.
//!
//! `mode`: `status` (default) times `SuiteStatus::check`. `head` and `head2` time the same check
//! built from the runtime's public API with `Recording::read_head` (sources only, interactions
//! skipped) on one or two threads: what `status` would cost if it read recordings that way.

use proposal_eval::__internal::draft::{canonical_json, sha256_hex};
use proposal_eval::__internal::fixture::{discover, FixtureFile, FixturePath};
use proposal_eval::__internal::recording::{self, compare_sources, Recording};
use proposal_eval::__internal::status::{State, SuiteStatus};
use std::path::Path;
use std::time::Instant;

/// The check through the public API: per case, hash and parse the fixture, read the recording's
/// head, compare sources. Returns (cases, fresh).
fn check_heads(suite: &str, threads: usize) -> (usize, usize) {
    let dir = Path::new(suite);
    let recordings = dir.join("recordings");
    let fixtures = discover(dir, &recordings).expect("suite folder");
    let config = proposal_eval::config::SuiteConfig::load_from_suite(dir).expect("config");
    let mut suite_sources = Vec::new();
    for pattern in &config.recording.sources {
        for file in recording::glob(Path::new("."), pattern).expect("glob") {
            suite_sources.push(recording::hash_source(Path::new("."), &file).expect("source"));
        }
    }
    let one = |f: &FixturePath| -> bool {
        let bytes = std::fs::read(&f.absolute).expect("fixture");
        let relative = format!("{suite}/{}", f.relative);
        let fixture = FixtureFile::parse(&bytes, &relative).expect("fixture parses");
        // Format 2: the input's hash, the case's sources and the suite's.
        let input_sha256 = sha256_hex(canonical_json(&fixture.input).as_bytes());
        let mut current = Vec::new();
        for path in &fixture.sources {
            current.push(recording::hash_source(Path::new("."), path).expect("source"));
        }
        current.extend(suite_sources.iter().cloned());
        match Recording::read_head(&recordings.join(format!("{}.json", f.case_path()))) {
            Ok(Some(head)) => {
                head.input_sha256.as_deref() == Some(input_sha256.as_str())
                    && compare_sources(&head.sources, &current).is_empty()
            }
            _ => false,
        }
    };
    let chunk = fixtures.len().div_ceil(threads.max(1)).max(1);
    let fresh: usize = std::thread::scope(|scope| {
        let workers: Vec<_> = fixtures
            .chunks(chunk)
            .map(|part| scope.spawn(|| part.iter().filter(|f| one(f)).count()))
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).sum()
    });
    let known: Vec<&str> = fixtures.iter().map(|f| f.case_path()).collect();
    assert!(recording::orphans(&recordings, &known).is_empty());
    (fixtures.len(), fresh)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let suite = args.get(1).map_or("generated/status10k", String::as_str);
    let rounds: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(1);
    let mode = args.get(3).map_or("status", String::as_str);
    let mut times = Vec::new();
    for _ in 0..rounds {
        if mode != "status" {
            let start = Instant::now();
            let (cases, fresh) = check_heads(suite, if mode == "head2" { 2 } else { 1 });
            let elapsed = start.elapsed();
            assert_eq!(cases, fresh, "every generated recording is fresh");
            times.push(elapsed.as_secs_f64());
            eprintln!(
                "{cases} recordings checked ({mode}), {fresh} fresh: {:.3} s",
                elapsed.as_secs_f64()
            );
            continue;
        }
        let start = Instant::now();
        let status = SuiteStatus::check(Path::new("."), Path::new(suite)).expect("suite folder");
        let elapsed = start.elapsed();
        let fresh = status
            .cases
            .iter()
            .filter(|c| c.state == State::Fresh)
            .count();
        assert_eq!(
            fresh,
            status.cases.len(),
            "every generated recording is fresh"
        );
        assert!(!status.fails_check());
        times.push(elapsed.as_secs_f64());
        eprintln!(
            "{} recordings checked, {fresh} fresh: {:.3} s",
            status.cases.len(),
            elapsed.as_secs_f64()
        );
    }
    times.sort_by(f64::total_cmp);
    println!(
        "{mode}: median {:.3} s  min {:.3}  max {:.3}  ({} rounds)",
        times[times.len() / 2],
        times[0],
        times[times.len() - 1],
        times.len()
    );
}
