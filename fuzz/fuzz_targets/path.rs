//! The path grammar (`ignore_paths`, field paths, every printed path): `Pattern::parse` and
//! `Location::parse` never panic, an error points inside the text, and what is printed parses
//! back to what was printed, naming the same place in a document.
#![no_main]

use libfuzzer_sys::fuzz_target;
use proposal_eval_engine::path::{Location, Pattern, Segment};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };

    match Pattern::parse(text) {
        Ok(pattern) => {
            let again = Pattern::parse(&pattern.to_string());
            assert_eq!(
                again.as_ref(),
                Ok(&pattern),
                "a pattern's Display parses back"
            );
            // A pattern without wildcards is a location: it prints in the canonical form
            // (quoting what needs quotes), and that form names the same place.
            match (pattern.as_location(), Location::parse(text)) {
                (Some(location), Ok(parsed)) => {
                    assert_eq!(location, parsed);
                    assert!(pattern.matches(&location) && pattern.covers(&location));
                    round_trip(&location);
                }
                (None, Err(e)) => {
                    let _ = e.to_string();
                }
                (ours, theirs) => {
                    panic!("Pattern::as_location {ours:?} but Location::parse {theirs:?}")
                }
            }
        }
        Err(e) => {
            assert!(
                e.offset <= text.len(),
                "error offset {} past the end: {e}",
                e.offset
            );
            let _ = e.to_string();
            assert!(Location::parse(text).is_err());
        }
    }

    // The printer on keys the parser would refuse unquoted: one line, one segment; `[n]` is an
    // index, anything else a key, however odd.
    let segments = text
        .split('\n')
        .map(|line| {
            line.strip_prefix('[')
                .and_then(|l| l.strip_suffix(']'))
                .and_then(|n| n.parse().ok())
                .map_or_else(|| Segment::Key(line.to_string()), Segment::Index)
        })
        .collect();
    round_trip(&Location(segments));
});

/// A location prints in a form that parses back to it; where it can be written into an empty
/// document, it is found there, and only it.
fn round_trip(location: &Location) {
    let printed = location.to_string();
    let pattern = match Pattern::parse(&printed) {
        Ok(pattern) => pattern,
        Err(e) => panic!("{location:?} prints as `{printed}`, which does not parse: {e}"),
    };
    assert_eq!(
        pattern.as_location().as_ref(),
        Some(location),
        "`{printed}` names another place"
    );
    let mut document = Value::Null;
    if location.set(&mut document, Value::Bool(true)) {
        assert_eq!(location.get(&document), Some(&Value::Bool(true)));
        assert_eq!(pattern.find(&document), [location.clone()]);
    }
}
