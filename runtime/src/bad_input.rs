//! The readers of fixtures, configs and label files, given the files of `tests/bad-input/`
//! (`proposal_eval_recording::messages` puts serde's messages in a person's words; the readers
//! are this crate's).

/// Every file of `runtime/tests/bad-input/` (fixtures `*.json`, configs `*.toml`, label files
/// `*.jsonl`) is refused by its reader with a message in a person's words: no `usize`,
/// `sequence` or `map`, one place (`file:line:column`, no serde "at line L column C"), and
/// the message `expected.txt` holds (`BLESS=1` rewrites it).
#[test]
fn bad_input_is_told_in_a_persons_words() {
    use std::path::Path;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad-input");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name() != Some("expected.txt".as_ref()))
        .collect();
    files.sort();
    let mut actual = String::new();
    let mut problems = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(path).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        let refused = match path.extension().and_then(|e| e.to_str()) {
            Some("json") => crate::suite::fixture::FixtureFile::parse(&bytes, &name)
                .map(|_| ())
                .map_err(|e| e.to_string()),
            Some("toml") => crate::config::SuiteConfig::from_toml_str(&text, &name)
                .map(|_| ())
                .map_err(|e| e.to_string()),
            Some("jsonl") => crate::rubric_judge::calibration::read_labels(path)
                .map(|_| ())
                .map_err(|e| e.to_string().replace(&format!("{}/", dir.display()), "")),
            _ => panic!("{name}: a fixture (.json), a config (.toml) or labels (.jsonl)"),
        };
        let Err(message) = refused else {
            problems.push(format!("{name}: accepted, but it is here as bad input"));
            continue;
        };
        let words: Vec<&str> = message
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .collect();
        for rust in ["usize", "sequence", "map", "isize", "u64", "i64", "f64"] {
            if words.contains(&rust) {
                problems.push(format!("{name}: says `{rust}`: {message}"));
            }
        }
        let places = message
            .match_indices(':')
            .filter(|(at, _)| {
                // `:LINE:COLUMN:`
                let mut parts = message[at + 1..].splitn(3, ':');
                let number = |p: Option<&str>| {
                    p.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
                };
                number(parts.next()) && number(parts.next()) && parts.next().is_some()
            })
            .count();
        if places != 1 || message.contains(" at line ") || message.contains("column ") {
            problems.push(format!("{name}: not one place: {message}"));
        }
        actual.push_str(&message);
        actual.push('\n');
    }
    let expected_file = dir.join("expected.txt");
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&expected_file, &actual).unwrap();
    }
    let expected = std::fs::read_to_string(&expected_file).unwrap_or_default();
    if expected != actual {
        problems.push(format!(
            "the messages are not runtime/tests/bad-input/expected.txt (BLESS=1 rewrites it):\n{actual}"
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
