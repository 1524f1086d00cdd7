//! `report.html`: one fixed page (`page.html`, `page.css`, `page.js`, compiled in) with
//! `report.json`, and a comparison when there is one, embedded in it. The page's own script
//! renders everything (summary, charts, filters, rows, a case's whole story), so the file works
//! from `file://` with no network, and no HTML is made per case in Rust.
//!
//! The page's cases are rendered one at a time as they come ([`Cases`]): the fold hands them
//! to a thread of their own as it writes them, and [`write`] reads them from `report.json`
//! (`report --compare`). Each
//! case's story is read once; the cases wait in a file beside the page until it is written.
//! `report.json` refers to each case's story (`input`, `output`, `calls`) in its
//! run's journal; the page embeds the stories themselves, read from the journals, up to
//! [`FAILING_STORIES`] bytes of failing cases' and [`PASSING_STORIES`] of passing ones', each in
//! case order. A case past that keeps the reference, and the page names the journal. A story
//! whose journal refers to its input (and output) by its fixture's hash gets them read from
//! the fixture, or the note that says why not ([`input`](super::input)).
//!
//! The JSON goes in `<script type="application/json">` elements with every `<` written as
//! `\u003c`. In JSON a `<` can only stand inside a string, where `\u003c` means the same
//! character, so `JSON.parse` reads the same value, and no text in a report (`</script>`,
//! `<!--`) can end the element or change how the browser parses it.
//!
//! A large report is embedded twice over, so that its first screen does not wait for the whole
//! file: before the script, the report with only its first [`FIRST_PAGE`] cases
//! (`report-summary`); after it, the whole report (`report-data`). A report of at most
//! [`FIRST_PAGE`] cases is embedded once (`report-data` is then `null`).

use super::entry::StoryRef;
use super::error::ReportError;
use super::input;
use super::journal::story_span;
use std::io::{BufRead as _, Read as _, Seek as _, Write};
use std::path::{Path, PathBuf};

/// The page, with `{{style}}`, `{{summary}}`, `{{compare}}`, `{{script}}` and `{{report}}` in
/// this order.
const TEMPLATE: &str = include_str!("page.html");
const STYLE: &str = include_str!("page.css");
const SCRIPT: &str = include_str!("page.js");

/// The markers of [`TEMPLATE`], in the order they appear in it.
const MARKERS: [&str; 5] = [
    "{{style}}",
    "{{summary}}",
    "{{compare}}",
    "{{script}}",
    "{{report}}",
];

/// The rows of one page of the case table (`PAGE_SIZE` in `page.js`): the cases the first
/// screen shows.
pub const FIRST_PAGE: usize = 100;

/// How many stories of one kind (failing, passing) in a row the page reads and finds too long
/// for the room left before it reads no more of that kind: a page nearly full would otherwise
/// read every later case's journal and fixture only to leave its story out.
pub const MISSES: u32 = 32;

/// The most bytes of failing cases' stories the page embeds.
pub const FAILING_STORIES: u64 = 16 << 20;

/// The most bytes of passing cases' stories the page embeds. Why a bound: the browser holds the
/// embedded JSON as one string; a page of 100,000 cases with 5 KB stories (546 MB) came up empty
/// in Chromium, and one of 184 MB took 2.6 s more than a blank page to show its first screen.
/// Every byte is also written by the run that folds: at 5,000 no-model cases a 16 MiB bound made
/// the page (20 MB) most of what the fold wrote.
pub const PASSING_STORIES: u64 = 4 << 20;

/// Writes `dir/report.html` from `dir/report.json`, with `comparison` below the summary when
/// given (`report --compare BASE`: the comparison's JSON, which the page's script renders);
/// returns whether the file changed.
pub fn write(
    dir: &Path,
    comparison: Option<&serde_json::value::RawValue>,
) -> Result<bool, ReportError> {
    let json = dir.join("report.json");
    let read = |e| ReportError::io("read", &json)(e);
    let file = std::fs::File::open(&json).map_err(read)?;
    let mut reader = std::io::BufReader::with_capacity(256 * 1024, file);
    let (mut head, mut line) = (String::new(), String::new());
    let open = loop {
        line.clear();
        if reader.read_line(&mut line).map_err(read)? == 0 {
            return Err(ReportError::new(
                &json,
                "not a report.json as the fold writes it (no `\"cases\": [` line): run `cargo proposal-eval report`",
            ));
        }
        match line.find("\"cases\": [") {
            Some(at) if line[..at].trim().is_empty() => break at + "\"cases\": [".len(),
            _ => head.push_str(&line),
        }
    };
    head.push_str(&line[..open]);
    let mut cases = Cases::new(dir);
    let mut tail = line[open..].trim_start().to_string();
    let mut case = Vec::new();
    // `"cases": [` ends its line unless the cases are `[]`.
    while tail.is_empty() {
        case.clear();
        if reader.read_until(b'\n', &mut case).map_err(read)? == 0 {
            break;
        }
        match case.strip_prefix(b"    ").filter(|l| l.starts_with(b"{")) {
            Some(line) => {
                let line = line.trim_ascii_end();
                cases
                    .add(false, line.strip_suffix(b",").unwrap_or(line))
                    .map_err(ReportError::io("write", &dir.join("report.html")))?;
            }
            // `  ]` and what follows the cases.
            None => tail = String::from_utf8_lossy(case.trim_ascii_start()).into_owned(),
        }
    }
    reader.read_to_string(&mut tail).map_err(read)?;
    cases.write(comparison, &head, &tail)
}

/// The page's cases, rendered one at a time as they come (from `report.json`, or from the fold
/// as it writes them): each case's line as `report.json` holds it, with its story in place of
/// the reference when it fits ([`Stories`]), escaped ([`Escaped`]), into a file beside the page.
/// Then [`Cases::write`] puts them in the page, with the report's header and the rest of it
/// around them.
pub(super) struct Cases {
    stories: Stories,
    /// The cases rendered so far, each after its separator; `None` before the first.
    file: Option<Rendered>,
    count: usize,
    /// Where the first [`FIRST_PAGE`] cases end in the file.
    first_page: u64,
}

/// The file the cases are rendered into, removed when dropped.
struct Rendered {
    path: PathBuf,
    file: std::io::BufWriter<std::fs::File>,
    written: u64,
}

impl Drop for Rendered {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Write for Rendered {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.file.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

impl Cases {
    /// No cases yet, for the page of the report folder `dir`.
    pub(super) fn new(dir: &Path) -> Cases {
        Cases {
            stories: Stories::new(dir),
            file: None,
            count: 0,
            first_page: 0,
        }
    }

    /// Renders the next case: `line`, one case's line as `results.jsonl` holds it, marked as
    /// `report.json` marks a case of an older run (`{"older":true,`) when `older`.
    pub(super) fn add(&mut self, older: bool, line: &[u8]) -> std::io::Result<()> {
        let out = match &mut self.file {
            Some(out) => out,
            none => {
                let path = self
                    .stories
                    .dir
                    .join(format!(".report.html.{}.cases", std::process::id()));
                let file = std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .open(&path)?;
                let file = std::io::BufWriter::with_capacity(64 * 1024, file);
                none.insert(Rendered {
                    path,
                    file,
                    written: 0,
                })
            }
        };
        out.write_all(if self.count == 0 {
            b"\n    "
        } else {
            b",\n    "
        })?;
        let line = match older {
            true => {
                out.write_all(b"{\"older\":true,")?;
                &line[1..]
            }
            false => line,
        };
        self.stories.embed(line, &mut Escaped(out))?;
        self.count += 1;
        if self.count == FIRST_PAGE {
            self.first_page = out.written;
        }
        Ok(())
    }

    /// Writes `report.html` with the cases rendered: `head` is the report up to its cases
    /// (`…"cases": [`) and `tail` the rest (`]…`), as `report.json` has them; a report of more
    /// than [`FIRST_PAGE`] cases is embedded twice over (see the module's docs). Returns whether
    /// the file changed.
    pub(super) fn write(
        self,
        comparison: Option<&serde_json::value::RawValue>,
        head: &str,
        tail: &str,
    ) -> Result<bool, ReportError> {
        let html = self.stories.dir.join("report.html");
        let mut rendered = self.file;
        let large = self.count > FIRST_PAGE;
        let compare = comparison.map_or("null", |c| c.get());
        let end: &[u8] = if self.count > 0 { b"\n  " } else { b"" };
        crate::files::replace_derived_if_changed(&html, |out| {
            if let Some(rendered) = &mut rendered {
                rendered.flush()?;
            }
            let mut rest = TEMPLATE;
            for marker in MARKERS {
                let (before, after) = rest
                    .split_once(marker)
                    .expect("page.html holds each marker once, in order");
                out.write_all(before.as_bytes())?;
                match marker {
                    "{{style}}" => out.write_all(STYLE.as_bytes())?,
                    "{{compare}}" => Escaped(out).write_all(compare.as_bytes())?,
                    "{{script}}" => out.write_all(SCRIPT.as_bytes())?,
                    "{{report}}" if !large => out.write_all(b"null")?,
                    _ => {
                        // The first page before the script, the whole report after it.
                        Escaped(out).write_all(head.as_bytes())?;
                        if let Some(rendered) = &mut rendered {
                            let file = rendered.file.get_mut();
                            file.seek(std::io::SeekFrom::Start(0))?;
                            let length = match (marker, large) {
                                ("{{summary}}", true) => self.first_page,
                                _ => rendered.written,
                            };
                            std::io::copy(&mut std::io::Read::take(&mut *file, length), out)?;
                        }
                        out.write_all(end)?;
                        Escaped(out).write_all(tail.as_bytes())?;
                    }
                }
                rest = after;
            }
            out.write_all(rest.as_bytes())
        })
        .map_err(ReportError::io("write", &html))
    }
}

/// The stories the page embeds so far, and the journals they are read from.
struct Stories {
    dir: PathBuf,
    /// Bytes embedded so far: failing cases', passing ones'.
    embedded: [u64; 2],
    /// Stories read in a row that did not fit: failing cases', passing ones'.
    misses: [u32; 2],
    /// The journal read last.
    open: Option<(String, std::fs::File)>,
}

impl Stories {
    fn new(dir: &Path) -> Stories {
        Stories {
            dir: dir.to_path_buf(),
            embedded: [0, 0],
            misses: [0, 0],
            open: None,
        }
    }

    /// Writes a case's line with its story in place of the reference
    /// when it fits and can be read; else as it is.
    fn embed(&mut self, line: &[u8], out: &mut dyn Write) -> std::io::Result<()> {
        let Some((from, to)) = story_span(line) else {
            return out.write_all(line);
        };
        let failing = memchr::memmem::find(line, b",\"passed\":f")
            .is_some_and(|at| memchr::memmem::find(line, b",\"passed\":") == Some(at));
        let (kind, budget) = match failing {
            true => (0, FAILING_STORIES),
            false => (1, PASSING_STORIES),
        };
        match self.story(line, from, to, kind, budget - self.embedded[kind]) {
            Some(story) => {
                self.embedded[kind] += story.len() as u64;
                out.write_all(&line[..from])?;
                out.write_all(&story)?;
                out.write_all(&line[to..])
            }
            None => out.write_all(line),
        }
    }

    /// The story of the case `line`, whose reference is `line[from..to]`, with its input, when
    /// it can be read and is at most `room` bytes long; `None` without reading it once
    /// [`MISSES`] stories of its `kind` in a row were read and did not fit.
    fn story(
        &mut self,
        line: &[u8],
        from: usize,
        to: usize,
        kind: usize,
        room: u64,
    ) -> Option<Vec<u8>> {
        let body = line[from..to].strip_prefix(b",\"story\":")?;
        let reference = serde_json::from_slice::<StoryRef>(body).ok()?;
        if reference.length > room || self.misses[kind] >= MISSES {
            return None;
        }
        let story = self
            .read(&reference)
            .ok()
            // Its input from its fixture, when the journal refers to it.
            .and_then(|story| input::resolve(&line[..from], story, &self.dir, room));
        self.misses[kind] = match story {
            Some(_) => 0,
            None => self.misses[kind] + 1,
        };
        story
    }

    /// The story's bytes, checked to begin with a story field.
    fn read(&mut self, story: &StoryRef) -> std::io::Result<Vec<u8>> {
        if self
            .open
            .as_ref()
            .is_none_or(|(path, _)| *path != story.journal)
        {
            let file = std::fs::File::open(self.dir.join(&story.journal))?;
            self.open = Some((story.journal.clone(), file));
        }
        let (_, file) = self.open.as_mut().expect("opened above");
        file.seek(std::io::SeekFrom::Start(story.offset))?;
        let mut bytes = vec![0; usize::try_from(story.length).map_err(std::io::Error::other)?];
        file.read_exact(&mut bytes)?;
        match input::is_story(&bytes) {
            true => Ok(bytes),
            false => Err(std::io::Error::other("not a story")),
        }
    }
}

/// A writer that passes JSON on with every `<` as `\u003c` (see the module's docs).
struct Escaped<'a>(&'a mut dyn Write);

impl Write for Escaped<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut rest = buf;
        while let Some(at) = memchr::memchr(b'<', rest) {
            self.0.write_all(&rest[..at])?;
            self.0.write_all(b"\\u003c")?;
            rest = &rest[at + 1..];
        }
        self.0.write_all(rest)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// The page says how a case used its recording in the words JUnit and the CLI use, for
    /// every way there is (`not recorded`, not `not_recorded`).
    #[test]
    fn the_page_words_each_recording_use_as_junit_does() {
        use crate::case_result::RecordingUse::*;
        for use_ in [
            Replayed,
            ReplayedStale,
            Recorded,
            Pending,
            Stale,
            None,
            NotRecorded,
        ] {
            let name = serde_json::to_value(use_).unwrap();
            let words = use_.describe();
            let line = format!("    {}: {words:?},", name.as_str().unwrap());
            assert!(SCRIPT.contains(&line), "page.js lacks {line:?}");
        }
    }

    /// The text of the `<script>` element with `id`, as an HTML parser would end it: at the
    /// first `</script` (any case).
    fn script_text<'a>(html: &'a str, id: &str) -> &'a str {
        let open = format!("<script type=\"application/json\" id=\"{id}\">");
        let start = html.find(&open).expect("the data element") + open.len();
        let end = html[start..]
            .to_ascii_lowercase()
            .find("</script")
            .expect("the element's end");
        &html[start..start + end]
    }

    /// The page of a `report.json` of these cases, laid out as the fold writes it.
    fn page_of(dir: &Path, cases: &[String]) -> String {
        let mut json = String::from("{\n  \"format\": 1,\n");
        if cases.is_empty() {
            json.push_str("  \"cases\": []\n}\n");
        } else {
            json.push_str("  \"cases\": [\n    ");
            json.push_str(&cases.join(",\n    "));
            json.push_str("\n  ]\n}\n");
        }
        std::fs::write(dir.join("report.json"), json).unwrap();
        write(dir, None).unwrap();
        std::fs::read_to_string(dir.join("report.html")).unwrap()
    }

    #[test]
    fn no_text_in_the_report_can_end_its_script_element() {
        let dir = tempfile::tempdir().unwrap();
        let case = json!({
            "test": "a</script><script>alert(1)</script>",
            "failure": "<!-- <script> </SCRIPT> <b>x</b>",
        });
        let html = page_of(dir.path(), &[case.to_string()]);
        let embedded = script_text(&html, "report-summary");
        assert!(!embedded.contains('<'), "{embedded}");
        let back: Value = serde_json::from_str(embedded).unwrap();
        assert_eq!(back, json!({"format": 1, "cases": [case]}));
        // A small report is embedded once.
        assert_eq!(script_text(&html, "report-data"), "null");
        assert_eq!(script_text(&html, "compare-data"), "null");
        // The page's own markup stays: its script and the end of the document.
        assert!(html.trim_end().ends_with("</html>"));
        assert_eq!(html.matches("<script").count(), 4);
    }

    #[test]
    fn a_large_report_is_embedded_with_its_first_page_first_and_whole_after() {
        let dir = tempfile::tempdir().unwrap();
        let cases: Vec<Value> = (0..FIRST_PAGE + 5)
            .map(|i| json!({"test": format!("s::c{i}"), "failure": "a \"quoted\", [tricky] {text}\\"}))
            .collect();
        let lines: Vec<String> = cases.iter().map(Value::to_string).collect();
        let html = page_of(dir.path(), &lines);
        let summary: Value = serde_json::from_str(script_text(&html, "report-summary")).unwrap();
        assert_eq!(summary, json!({"format": 1, "cases": cases[..FIRST_PAGE]}));
        let whole: Value = serde_json::from_str(script_text(&html, "report-data")).unwrap();
        assert_eq!(whole, json!({"format": 1, "cases": cases}));
        // The first page comes before the script, the whole report after it.
        let at = |needle: &str| html.find(needle).unwrap();
        assert!(at("id=\"report-summary\"") < at("<script>\n"));
        assert!(at("<script>\n") < at("id=\"report-data\""));
        // Exactly a page of cases is embedded once; none, too.
        let html = page_of(dir.path(), &lines[..FIRST_PAGE]);
        assert_eq!(script_text(&html, "report-data"), "null");
        let html = page_of(dir.path(), &[]);
        let empty: Value = serde_json::from_str(script_text(&html, "report-summary")).unwrap();
        assert_eq!(empty, json!({"format": 1, "cases": []}));
    }

    /// Stories referred to are read from their journal while they fit, failing cases' first
    /// (each kind up to its bound); past that, or where the journal no longer holds them, the
    /// case keeps its reference.
    #[test]
    fn stories_are_embedded_from_their_journal_while_they_fit() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("runs/r")).unwrap();
        let story = |i: usize| {
            format!(
                ",\"input\":{{\"i\":{i}}},\"output\":\"{}\"",
                "x".repeat(1 << 20)
            )
        };
        let mut journal = String::new();
        let mut cases = Vec::new();
        // 20 failing cases' stories of 1 MiB (15 fit in 16 MiB), 20 passing ones' (3 fit in 4).
        for i in 0..40 {
            let passed = i >= 20;
            let text = story(i);
            let reference = format!(
                ",\"story\":{{\"journal\":\"runs/r/journal.jsonl\",\"offset\":{},\"length\":{}}}",
                journal.len(),
                text.len()
            );
            journal.push_str(&text);
            cases.push(format!(
                "{{\"test\":\"c{i}\",\"passed\":{passed},\"evaluators\":[{{\"passed\":true}}]{reference},\"run\":\"r\",\"finished_at\":\"2026-01-01T00:00:00Z\"}}"
            ));
        }
        // A reference that points at no story.
        cases.push(
            "{\"test\":\"gone\",\"passed\":false,\"story\":{\"journal\":\"runs/r/journal.jsonl\",\"offset\":1,\"length\":5},\"run\":\"r\",\"finished_at\":\"2026-01-01T00:00:00Z\"}"
                .to_string(),
        );
        std::fs::write(dir.path().join("runs/r/journal.jsonl"), journal).unwrap();
        let html = page_of(dir.path(), &cases);
        let whole: Value = serde_json::from_str(script_text(&html, "report-summary")).unwrap();
        let embedded: Vec<bool> = whole["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                assert_eq!(
                    c["input"].is_object(),
                    c["story"].is_null(),
                    "{}",
                    c["test"]
                );
                c["input"].is_object()
            })
            .collect();
        let failing = embedded[..20].iter().filter(|e| **e).count();
        let passing = embedded[20..40].iter().filter(|e| **e).count();
        assert_eq!((failing, passing), (15, 3), "{embedded:?}");
        assert!(!embedded[40], "a reference that points at no story stays");
        assert_eq!(whole["cases"][3]["input"], json!({"i": 3}));
        assert_eq!(whole["cases"][3]["run"], "r");
    }

    /// A page nearly out of room reads no more stories of a kind once 32 in a row were read and
    /// did not fit: a later story that would fit is then left out, as the reference says.
    #[test]
    fn a_page_out_of_room_stops_reading_stories_after_32_that_did_not_fit() {
        use crate::recording::sources::hash_content;
        for (too_long, last_embedded) in [(MISSES - 1, true), (MISSES, false)] {
            let dir = tempfile::tempdir().unwrap();
            std::fs::create_dir_all(dir.path().join("runs/r")).unwrap();
            let (mut journal, mut cases) = (String::new(), Vec::new());
            // The first story leaves 20 KiB of the passing room; then `too_long` stories whose
            // inputs (50 KiB, in their fixtures) do not fit; then one whose input does.
            let count = too_long as usize + 2;
            for i in 0..count {
                let input = match i {
                    0 => "1".to_string(),
                    i if i + 1 == count => "2".to_string(),
                    _ => format!("\"{}\"", "x".repeat(50 << 10)),
                };
                let fixture = dir.path().join(format!("c{i}.json"));
                let text = format!("{{\"input\": {input}, \"expected\": []}}");
                std::fs::write(&fixture, &text).unwrap();
                let output = match i {
                    0 => "y".repeat((PASSING_STORIES - (20 << 10)) as usize),
                    _ => String::new(),
                };
                let story = format!(
                    ",\"input_sha256\":\"{}\",\"output\":\"{output}\"",
                    hash_content(text.as_bytes()).0
                );
                cases.push(format!(
                    "{{\"test\":\"c{i}\",\"fixture\":{},\"suite_dir\":\"s\",\"case\":\"c{i}\",\"passed\":true,\"story\":{{\"journal\":\"runs/r/journal.jsonl\",\"offset\":{},\"length\":{}}},\"run\":\"r\",\"finished_at\":\"2026-01-01T00:00:00Z\"}}",
                    json!(fixture),
                    journal.len(),
                    story.len()
                ));
                journal.push_str(&story);
            }
            std::fs::write(dir.path().join("runs/r/journal.jsonl"), journal).unwrap();
            let html = page_of(dir.path(), &cases);
            let page: Value = serde_json::from_str(script_text(&html, "report-summary")).unwrap();
            let inputs: Vec<&Value> = page["cases"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| &c["input"])
                .collect();
            assert_eq!(inputs[0], &json!(1));
            assert!(inputs[1..count - 1].iter().all(|i| i.is_null()));
            assert_eq!(
                inputs[count - 1].is_number(),
                last_embedded,
                "after {too_long} stories too long"
            );
        }
    }

    #[test]
    fn a_report_json_in_another_layout_is_refused_with_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("report.json"), "{\"cases\":[]}").unwrap();
        let error = write(dir.path(), None).unwrap_err().to_string();
        assert!(
            error.ends_with("run `cargo proposal-eval report`"),
            "{error}"
        );
    }

    #[test]
    fn the_page_loads_nothing_from_elsewhere() {
        let dir = tempfile::tempdir().unwrap();
        let html = page_of(dir.path(), &[]);
        for remote in ["http://", "https://", "<link", " src=", "@import", "url("] {
            assert!(!html.contains(remote), "found {remote}");
        }
    }
}
