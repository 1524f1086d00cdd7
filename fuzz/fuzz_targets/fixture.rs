//! Fixture files (`*.json` in a suite): `FixtureFile::parse` never panics, on any bytes, and an
//! error names a place in the file.
#![no_main]

use libfuzzer_sys::fuzz_target;
use proposal_eval::__internal::fixture::FixtureFile;

fuzz_target!(|data: &[u8]| {
    match FixtureFile::parse(data, "f.json") {
        Ok(fixture) => {
            for pattern in fixture.ignore_paths.iter().flatten() {
                let _ = pattern.to_string();
            }
        }
        Err(e) => {
            let message = e.to_string();
            assert!(message.starts_with("f.json"), "{message}");
            assert!(!e.message.is_empty());
            let lines = data.iter().filter(|b| **b == b'\n').count() + 1;
            assert!(
                e.line <= lines,
                "line {} of a {lines}-line file: {message}",
                e.line
            );
        }
    }
});
