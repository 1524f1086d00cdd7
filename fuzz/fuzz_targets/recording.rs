//! Recordings (`recordings/**/*.json`): `Recording::parse` and `Recording::read_head` never
//! panic, on any bytes; a recording that reads has a head that reads too, and what
//! `to_pretty` writes reads back as the same recording (a format-4 one with a judge part as
//! format 5).
#![no_main]

use libfuzzer_sys::fuzz_target;
use proposal_eval::__internal::recording::Recording;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fuzz_target!(|data: &[u8]| {
    let parsed = Recording::parse(data, Path::new("r.json"));
    if let Err(e) = &parsed {
        assert!(e.to_string().contains("r.json"), "{e}");
    }

    // `read_head` reads a file: one scratch file per fuzzing process.
    let file = scratch_file();
    std::fs::write(file, data).expect("write the scratch file");
    let head = Recording::read_head(file);
    if let Ok(recording) = &parsed {
        match head {
            Ok(Some(head)) => assert_eq!(head.case, recording.case),
            other => panic!("the recording parses but its head reads as {other:?}"),
        }
        let written = recording.to_pretty();
        // The one thing a round trip changes: a format-4 recording with a judge part is written
        // as format 5 (its judge calls by their requests' hashes, which the read already made).
        let judged =
            recording.judge.is_some() || recording.samples.iter().any(|s| s.judge.is_some());
        let mut expected = recording.clone();
        if judged && expected.format == 4 {
            expected.format = 5;
        }
        match Recording::parse(written.as_bytes(), Path::new("r.json")) {
            Ok(back) => assert_eq!(back, expected, "what was written reads back otherwise"),
            Err(e) => panic!("what to_pretty wrote does not read back: {e}\n{written}"),
        }
    }
});

fn scratch_file() -> &'static PathBuf {
    static FILE: OnceLock<PathBuf> = OnceLock::new();
    FILE.get_or_init(|| {
        // Memory-backed when there is such a folder: a write per input.
        let shm = Path::new("/dev/shm");
        let dir = if shm.is_dir() {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        dir.join(format!(
            "proposal-eval-fuzz-recording-{}.json",
            std::process::id()
        ))
    })
}
