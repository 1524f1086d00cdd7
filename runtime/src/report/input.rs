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

/// How a story says its output was the fixture's `expected`: right after the input's reference.
const OUTPUT_IS_EXPECTED: &[u8] = b",\"output_is_expected\":true";

/// `story` (a case's story as its journal holds it, `,"input_sha256":…,"output":…`) with its
/// input in place of the reference: `,"input":…`, or `,"input_missing":"why"` when the fixture
/// no longer holds it; and likewise its output when the story says it was the fixture's
/// `expected` (`,"output":…` or `,"output_missing":"why"`). `None` when that is longer than
/// `room` bytes. `head` is the case's line before its story, where the fixture is named. A
/// story that holds its input (an older journal's), or that is laid out otherwise, is returned
/// as it is. `dir` is the report folder being written (see [`input_of`]).
pub(super) fn resolve(head: &[u8], story: Vec<u8>, dir: &Path, room: u64) -> Option<Vec<u8>> {
    let Some((sha256, rest)) = reference(&story) else {
        return (story.len() as u64 <= room).then_some(story);
    };
    const INPUT: &[u8] = b",\"input\":";
    const OUTPUT: &[u8] = b",\"output\":";
    let (with_output, rest) = match rest.strip_prefix(OUTPUT_IS_EXPECTED) {
        Some(rest) => (true, rest),
        None => (false, rest),
    };
    let keys = INPUT.len() + if with_output { OUTPUT.len() } else { 0 };
    let room_for_parts = room.saturating_sub((keys + rest.len()) as u64);
    let mut object = head.to_vec();
    object.push(b'}');
    let (shown, parts) = match serde_json::from_slice::<Fixture>(&object) {
        Ok(f) => {
            let shown = shown_name(&f);
            let parts = input_of(
                Path::new(&*f.fixture),
                sha256,
                dir,
                room_for_parts,
                with_output,
            );
            (shown, parts)
        }
        Err(_) => (String::new(), Err(Missing::NoFixture)),
    };
    let mut out = Vec::with_capacity(story.len() + 256);
    match parts {
        Ok(None) => return None,
        Ok(Some(parts)) => {
            out.extend_from_slice(INPUT);
            out.extend_from_slice(&parts.input);
            if let Some(output) = parts.output {
                out.extend_from_slice(OUTPUT);
                out.extend_from_slice(&output);
            }
        }
        Err(why) => {
            let mut say = |key: &[u8], part| {
                out.extend_from_slice(key);
                let words = why.words(&shown, part);
                out.extend_from_slice(serde_json::to_string(&words).unwrap_or_default().as_bytes());
            };
            say(b",\"input_missing\":", Part::Input);
            if with_output {
                say(b",\"output_missing\":", Part::Output);
            }
        }
    }
    out.extend_from_slice(rest);
    (out.len() as u64 <= room).then_some(out)
}

/// What of a fixture a story shows.
#[derive(Clone, Copy)]
enum Part {
    Input,
    /// The output, when it was the fixture's `expected`.
    Output,
}

/// Why a story does not show its input (or output) from its fixture.
#[derive(Debug)]
pub(super) enum Missing {
    /// The file has other bytes now.
    Changed,
    /// No such file, here or in this checkout.
    Gone,
    /// It cannot be read: the error.
    Unreadable(String),
    /// It has the bytes it had, yet its JSON cannot be read: the error.
    Unparsable(String),
    /// The case's line names no fixture.
    NoFixture,
}

impl Missing {
    /// Why, in words, naming the fixture as `shown`.
    fn words(&self, shown: &str, part: Part) -> String {
        let (its, held) = match part {
            Part::Input => ("its input", "the input it held"),
            Part::Output => ("the output (its `expected`)", "the output (its `expected`)"),
        };
        match self {
            Missing::Changed => format!("{shown} changed since this run; {its} then is not kept"),
            Missing::Gone => format!("{shown} is gone since this run; {held} then is not kept"),
            Missing::Unreadable(e) => {
                format!("{shown} cannot be read ({e}); {held} in this run is not shown")
            }
            Missing::Unparsable(e) => {
                format!("{shown} has the bytes it had in this run, yet {its} cannot be read ({e})")
            }
            Missing::NoFixture => format!("the case's line names no fixture; {its} is not shown"),
        }
    }
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

/// What a story shows from its fixture: the input's JSON text, and the output's when asked for
/// (the fixture's `expected`), each capped as an entry caps it
/// ([`capped_value`](super::entry::capped_value)).
#[derive(Debug)]
pub(super) struct Parts {
    pub(super) input: Vec<u8>,
    pub(super) output: Option<Vec<u8>>,
}

/// The [`Parts`] of the fixture at `path` (its output too `with_output`), when the file's hash
/// is still `sha256`; `None` when their text is longer than `room` bytes (found before the file
/// is hashed: a page out of room for a story does not hash its fixture); else why not.
///
/// A fixture that is not at `path` (another machine's checkout: a CI runner's report merged
/// here) is looked for in this machine's checkout: the same path's last components below a
/// folder holding the report folder `dir` (`target/proposal-eval`), the file with that hash.
pub(super) fn input_of(
    path: &Path,
    sha256: &str,
    dir: &Path,
    room: u64,
    with_output: bool,
) -> Result<Option<Parts>, Missing> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            match checked_out_here(path, sha256, dir) {
                Ok(bytes) => bytes,
                Err(Seen::Other) => return Err(Missing::Changed),
                Err(Seen::None) => return Err(Missing::Gone),
            }
        }
        Err(e) => return Err(Missing::Unreadable(e.to_string())),
    };
    let parts = parts_text(&bytes, with_output);
    let len = |p: &Parts| p.input.len() + p.output.as_ref().map_or(0, Vec::len);
    if parts.as_ref().is_ok_and(|p| len(p) as u64 > room) {
        return Ok(None);
    }
    if hash_content(&bytes).0 != sha256 {
        return Err(Missing::Changed);
    }
    parts.map(Some)
}

/// The JSON text of the input in a fixture's `bytes` (and of its `expected`, `with_output`),
/// capped as an entry caps it.
pub(super) fn parts_text(bytes: &[u8], with_output: bool) -> Result<Parts, Missing> {
    #[derive(Deserialize)]
    struct Fixture<'a> {
        #[serde(borrow, default)]
        input: Option<&'a RawValue>,
        #[serde(borrow, default, alias = "expectedDataProposal")]
        expected: Option<&'a RawValue>,
    }
    // A UTF-8 byte order mark, which some editors write, is not part of the JSON.
    let text = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    // Without its output, the input is read up to its end only; with it, the file is read
    // once, whole.
    let leading = if with_output {
        None
    } else {
        leading_input(text)
    };
    let fixture = match leading {
        Some(raw) => Fixture {
            input: Some(raw),
            expected: None,
        },
        None => serde_json::from_slice(text).map_err(|e| Missing::Unparsable(e.to_string()))?,
    };
    let output = match with_output {
        true => Some(capped_text(fixture.expected)?),
        false => None,
    };
    Ok(Parts {
        input: capped_text(fixture.input)?,
        output,
    })
}

/// A fixture's value as an entry holds it: capped, `null` when absent.
fn capped_text(raw: Option<&RawValue>) -> Result<Vec<u8>, Missing> {
    let Some(raw) = raw else {
        return Ok(b"null".to_vec());
    };
    // The compact text an entry would hold is no longer than the text as written, but for
    // numbers (`1e15` is written `1000000000000000.0`, under five times as long): text an
    // eighth of the cap is under it either way, and is shown as written.
    if raw.get().len() <= TEXT_CAP / 8 {
        return Ok(raw.get().as_bytes().to_vec());
    }
    let value: serde_json::Value = serde_json::from_slice(raw.get().as_bytes())
        .map_err(|e| Missing::Unparsable(e.to_string()))?;
    serde_json::to_vec(&super::entry::capped_value(value))
        .map_err(|e| Missing::Unparsable(e.to_string()))
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
