//! A case's input, referred to by its fixture. The code under test receives the fixture's `input`
//! unchanged, so a journal line does not copy it: it holds `"input_sha256"`, the hash of the
//! fixture file's bytes as the run read them. A reader that shows the story (the page, and so
//! `report --merge`) reads the input from the fixture again while the file still has that hash;
//! when the file is gone or changed, the story holds `"input_missing"`, why in words, and no
//! input: a story never shows an input its case did not run with.

use crate::recording::sources::hash_content;
use crate::run::TEXT_CAP;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::path::Path;

/// How a story that refers to its input begins: `,"input_sha256":"`, the hash, `"`.
const REFERENCE: &[u8] = b",\"input_sha256\":\"";

/// The fields of a case's line that say where its fixture is.
#[derive(Deserialize)]
struct Fixture<'a> {
    #[serde(borrow)]
    fixture: Cow<'a, str>,
    #[serde(borrow)]
    suite_dir: Cow<'a, str>,
    #[serde(borrow)]
    case: Cow<'a, str>,
}

/// `story` (a case's story as its journal holds it, `,"input_sha256":…,"output":…`) with its
/// input in place of the reference: `,"input":…`, or `,"input_missing":"why"` when the fixture
/// no longer holds it; `None` when that is longer than `room` bytes. `head` is the case's line
/// before its story, where the fixture is named. A story that holds its input (an older
/// journal's), or that is laid out otherwise, is returned as it is. `dir` is the report folder
/// being written (see [`input_of`]).
pub(super) fn resolve(head: &[u8], story: Vec<u8>, dir: &Path, room: u64) -> Option<Vec<u8>> {
    let Some((sha256, rest)) = reference(&story) else {
        return (story.len() as u64 <= room).then_some(story);
    };
    const INPUT: &[u8] = b",\"input\":";
    let room_for_input = room.saturating_sub((INPUT.len() + rest.len()) as u64);
    let mut object = head.to_vec();
    object.push(b'}');
    let shown = match serde_json::from_slice::<Fixture>(&object) {
        Ok(f) => input_of(
            Path::new(&*f.fixture),
            sha256,
            &shown_name(&f),
            dir,
            room_for_input,
        ),
        Err(_) => Err("the case's line names no fixture; its input is not shown".to_string()),
    };
    let mut out = Vec::with_capacity(story.len() + 256);
    match shown {
        Ok(None) => return None,
        Ok(Some(input)) => {
            out.extend_from_slice(INPUT);
            out.extend_from_slice(&input);
        }
        Err(why) => {
            out.extend_from_slice(b",\"input_missing\":");
            out.extend_from_slice(serde_json::to_string(&why).unwrap_or_default().as_bytes());
        }
    }
    out.extend_from_slice(rest);
    (out.len() as u64 <= room).then_some(out)
}

/// Whether a story's bytes begin as a story does: with one of its fields.
pub(super) fn is_story(bytes: &[u8]) -> bool {
    [
        &b",\"input\":"[..],
        REFERENCE,
        b",\"output\":",
        b",\"calls\":",
    ]
    .iter()
    .any(|key| bytes.starts_with(key))
}

/// The hash a story refers to its input by, and the story after the reference.
fn reference(story: &[u8]) -> Option<(&str, &[u8])> {
    let rest = story.strip_prefix(REFERENCE)?;
    let end = memchr::memchr(b'"', rest)?;
    let sha256 = std::str::from_utf8(&rest[..end]).ok()?;
    sha256
        .bytes()
        .all(|b| b.is_ascii_hexdigit())
        .then_some((sha256, &rest[end + 1..]))
}

/// The fixture as a person finds it: crate-relative (`fixtures/x.json`).
fn shown_name(f: &Fixture) -> String {
    match f.suite_dir.trim_start_matches("./") {
        "" | "." => format!("{}.json", f.case),
        dir => format!("{dir}/{}.json", f.case),
    }
}

/// The JSON text of the input the fixture at `path` holds, capped as an entry caps it
/// ([`capped_value`](super::entry::capped_value)), when the file's hash is still `sha256`, and
/// `None` when that text is longer than `room` bytes (found before the file is hashed: a page
/// out of room for a story does not hash its fixture); else why not, naming it `shown`.
///
/// A fixture that is not at `path` (another machine's checkout: a CI runner's report merged
/// here) is looked for in this machine's checkout: the same path's last components below a
/// folder holding the report folder `dir` (`target/proposal-eval`), the file with that hash.
pub(super) fn input_of(
    path: &Path,
    sha256: &str,
    shown: &str,
    dir: &Path,
    room: u64,
) -> Result<Option<Vec<u8>>, String> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            match checked_out_here(path, sha256, dir) {
                Ok(bytes) => bytes,
                Err(Seen::Other) => return Err(changed(shown)),
                Err(Seen::None) => {
                    return Err(format!(
                        "{shown} is gone since this run; the input it held then is not kept"
                    ))
                }
            }
        }
        Err(e) => {
            return Err(format!(
                "{shown} cannot be read ({e}); the input it held in this run is not shown"
            ))
        }
    };
    let input = input_text(&bytes, shown);
    if input.as_ref().is_ok_and(|i| i.len() as u64 > room) {
        return Ok(None);
    }
    if hash_content(&bytes).0 != sha256 {
        return Err(changed(shown));
    }
    input.map(Some)
}

/// The JSON text of the input in a fixture's `bytes`, capped as an entry caps it.
pub(super) fn input_text(bytes: &[u8], shown: &str) -> Result<Vec<u8>, String> {
    #[derive(Deserialize)]
    struct Input<'a> {
        #[serde(borrow, default)]
        input: Option<&'a RawValue>,
    }
    // A UTF-8 byte order mark, which some editors write, is not part of the JSON.
    let text = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let raw = match leading_input(text) {
        Some(raw) => raw,
        None => {
            let fixture: Input = serde_json::from_slice(text).map_err(|e| {
                format!(
                    "{shown} has the bytes it had in this run, yet its input cannot be read ({e})"
                )
            })?;
            let Some(raw) = fixture.input else {
                return Ok(b"null".to_vec());
            };
            raw
        }
    };
    // The compact text an entry would hold is no longer than the text as written, but for
    // numbers (`1e15` is written `1000000000000000.0`, under five times as long): text an
    // eighth of the cap is under it either way, and is shown as written.
    if raw.get().len() <= TEXT_CAP / 8 {
        return Ok(raw.get().as_bytes().to_vec());
    }
    let value: serde_json::Value = serde_json::from_slice(raw.get().as_bytes())
        .map_err(|e| format!("{shown}: its input cannot be read ({e})"))?;
    serde_json::to_vec(&super::entry::capped_value(value)).map_err(|e| e.to_string())
}

/// The fixture's `input`, read without what follows it in the file (the `expected` proposals,
/// most of a fixture): the run read the whole file, and a file with other bytes is refused by
/// its hash. `None` for a file laid out otherwise (no `input` key as such), read whole instead.
fn leading_input(text: &[u8]) -> Option<&RawValue> {
    let mut rest = text.trim_ascii_start().strip_prefix(b"{")?;
    loop {
        let (key, after) = next_value(rest)?;
        let (value, after) = next_value(after.trim_ascii_start().strip_prefix(b":")?)?;
        if key.get() == "\"input\"" {
            return Some(value);
        }
        rest = after.trim_ascii_start().strip_prefix(b",")?;
    }
}

/// The JSON value `text` begins with, and the text after it.
fn next_value(text: &[u8]) -> Option<(&RawValue, &[u8])> {
    let mut values = serde_json::Deserializer::from_slice(text).into_iter::<&RawValue>();
    let value = values.next()?.ok()?;
    Some((value, &text[values.byte_offset()..]))
}

fn changed(shown: &str) -> String {
    format!("{shown} changed since this run; its input then is not kept")
}

/// What [`checked_out_here`] found when no file had the hash.
enum Seen {
    /// No file of the path's name.
    None,
    /// A file of the path's name, with other bytes.
    Other,
}

/// The bytes of the file with hash `sha256` whose path ends as `path` does, below one of the
/// three folders holding the report folder `dir` (its `target`, the workspace, the folder
/// above): the shortest such ending first.
fn checked_out_here(path: &Path, sha256: &str, dir: &Path) -> Result<Vec<u8>, Seen> {
    let Ok(dir) = std::path::absolute(dir) else {
        return Err(Seen::None);
    };
    let mut seen = Seen::None;
    let names: Vec<&std::ffi::OsStr> = path
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(name) => Some(name),
            _ => None,
        })
        .collect();
    for base in dir.ancestors().skip(1).take(3) {
        for from in (0..names.len()).rev() {
            let candidate: std::path::PathBuf = names[from..]
                .iter()
                .fold(base.to_path_buf(), |p, n| p.join(n));
            if candidate == path {
                continue;
            }
            if let Ok(bytes) = std::fs::read(&candidate) {
                if hash_content(&bytes).0 == sha256 {
                    return Ok(bytes);
                }
                seen = Seen::Other;
            }
        }
    }
    Err(seen)
}
