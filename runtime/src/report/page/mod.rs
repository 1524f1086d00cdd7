//! `report.html`: one fixed page (`page.html`, `page.css`, `page.js`, compiled in) with the
//! report's JSON, and a comparison's when there is one, embedded in it. The page's own script
//! renders everything (summary, charts, filters, rows, a case's whole story), so the file works
//! from `file://` with no network, and no HTML is made per case in Rust.
//!
//! The JSON goes in `<script type="application/json">` elements with every `<` written as
//! `\u003c`. In JSON a `<` can only stand inside a string, where `\u003c` means the same
//! character, so `JSON.parse` reads the same value, and no text in a report (`</script>`,
//! `<!--`) can end the element or change how the browser parses it.
//!
//! A large report is embedded twice over, so that its first screen does not wait for the whole
//! file: before the script, the report with only its first [`FIRST_PAGE`] cases (`report-summary`);
//! after it, the whole report (`report-data`). The script draws the summary, the charts and the
//! first page of rows as soon as the browser reaches it, and reads the rest when the document
//! has loaded. A report of at most [`FIRST_PAGE`] cases is embedded once (`report-data` is then
//! `null`).

use std::io::Write;

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

/// `report.html` for `report_json` (the text of `report.json`), and the comparison with a
/// baseline (`compare`'s JSON) when `report --compare BASE` asked for one.
///
/// Text that is not a report is embedded as it is; the page then says it cannot read its data.
pub fn render(report_json: &str, compare_json: Option<&str>) -> String {
    let mut out = Vec::with_capacity(
        TEMPLATE.len() + STYLE.len() + SCRIPT.len() + 2 * report_json.len() + 1024,
    );
    let mut text = InMemory {
        json: report_json,
        cases: find_cases(report_json.as_bytes(), FIRST_PAGE),
    };
    write(&mut out, &mut text, compare_json).expect("writing to memory does not fail");
    String::from_utf8(out).expect("the page's pieces are text")
}

/// A report's JSON as the page embeds it: cut to its first [`FIRST_PAGE`] cases, and whole.
pub(crate) trait ReportText {
    /// Whether it has more than [`FIRST_PAGE`] cases (then it is embedded twice over).
    fn is_large(&self) -> bool;
    /// Writes the report with only its first [`FIRST_PAGE`] cases (all of them when it is not
    /// large).
    fn write_first(&mut self, out: &mut dyn Write) -> std::io::Result<()>;
    /// Writes the whole report.
    fn write_whole(&mut self, out: &mut dyn Write) -> std::io::Result<()>;
}

/// Writes `report.html` to `out`: the page with `report` (and `compare_json`) embedded, a
/// buffer at a time, so a large report is never held whole.
pub(crate) fn write(
    out: &mut dyn Write,
    report: &mut dyn ReportText,
    compare_json: Option<&str>,
) -> std::io::Result<()> {
    let mut rest = TEMPLATE;
    for marker in MARKERS {
        let (before, after) = rest
            .split_once(marker)
            .expect("page.html holds each marker once, in order");
        out.write_all(before.as_bytes())?;
        match marker {
            "{{style}}" => out.write_all(STYLE.as_bytes())?,
            "{{summary}}" => report.write_first(&mut Escaped(out))?,
            "{{compare}}" => Escaped(out).write_all(compare_json.unwrap_or("null").as_bytes())?,
            "{{script}}" => out.write_all(SCRIPT.as_bytes())?,
            _ if report.is_large() => report.write_whole(&mut Escaped(out))?,
            _ => out.write_all(b"null")?,
        }
        rest = after;
    }
    out.write_all(rest.as_bytes())
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

/// A report's JSON in memory, with where its cases array is.
struct InMemory<'a> {
    json: &'a str,
    cases: Option<CasesArray>,
}

impl ReportText for InMemory<'_> {
    fn is_large(&self) -> bool {
        self.cases.is_some()
    }

    fn write_first(&mut self, out: &mut dyn Write) -> std::io::Result<()> {
        let Some(cases) = &self.cases else {
            return out.write_all(self.json.as_bytes());
        };
        out.write_all(&self.json.as_bytes()[..cases.first_end])?;
        out.write_all(b"]")?;
        out.write_all(&self.json.as_bytes()[cases.close..])
    }

    fn write_whole(&mut self, out: &mut dyn Write) -> std::io::Result<()> {
        out.write_all(self.json.as_bytes())
    }
}

/// Byte offsets of a top-level `"cases"` array in a JSON object's text.
#[derive(Debug, PartialEq)]
struct CasesArray {
    /// Where its `n`th element ends (the `,` after it).
    first_end: usize,
    /// Just after its `]`.
    close: usize,
}

/// Where the top-level `"cases"` array's first `n` elements end and where the array ends; `None`
/// when there is no such array or it has at most `n` elements. One pass that tracks strings and
/// nesting only; on text that is not JSON it may find nothing, or cut where JSON would not, and
/// the page then reports the data unreadable.
fn find_cases(json: &[u8], n: usize) -> Option<CasesArray> {
    let mut depth = 0usize;
    let mut i = 0;
    // The last string read directly in the top-level object: the key before a `:`.
    let mut key: &[u8] = &[];
    // Inside the array: how many commas so far, and where the `n`th was.
    let mut array: Option<(usize, Option<usize>)> = None;
    while i < json.len() {
        match json[i] {
            b'"' => {
                let start = i + 1;
                i = string_end(json, start)?;
                if depth == 1 {
                    key = &json[start..i];
                }
            }
            b'[' if depth == 1 && key == b"cases" && array.is_none() => {
                depth += 1;
                array = Some((0, None));
            }
            b'{' | b'[' => depth += 1,
            b']' if depth == 2 && array.is_some() => {
                let (_, first_end) = array?;
                return Some(CasesArray {
                    first_end: first_end?,
                    close: i + 1,
                });
            }
            b'}' | b']' => depth = depth.checked_sub(1)?,
            b',' if depth == 2 => {
                if let Some((commas, first_end)) = &mut array {
                    *commas += 1;
                    if *commas == n {
                        *first_end = Some(i);
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The index of the `"` that ends the string starting at `start`.
fn string_end(json: &[u8], start: usize) -> Option<usize> {
    let mut i = start;
    while i < json.len() {
        match json[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

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

    #[test]
    fn no_text_in_the_report_can_end_its_script_element() {
        let value = json!({
            "cases": [{
                "test": "a</script><script>alert(1)</script>",
                "failure": "<!-- <script> </SCRIPT> <b>x</b>",
            }]
        });
        let text = serde_json::to_string(&value).unwrap();
        let html = render(&text, None);
        let embedded = script_text(&html, "report-summary");
        assert!(!embedded.contains('<'), "{embedded}");
        let back: Value = serde_json::from_str(embedded).unwrap();
        assert_eq!(back, value);
        // A small report is embedded once.
        assert_eq!(script_text(&html, "report-data"), "null");
        assert_eq!(script_text(&html, "compare-data"), "null");
        // The page's own markup stays: its script and the end of the document.
        assert!(html.trim_end().ends_with("</html>"));
        assert_eq!(html.matches("<script").count(), 4);
    }

    #[test]
    fn a_comparison_is_embedded_beside_the_report() {
        let html = render("{\"cases\":[]}", Some("{\"base\":{\"name\":\"<main>\"}}"));
        assert_eq!(
            script_text(&html, "compare-data"),
            "{\"base\":{\"name\":\"\\u003cmain>\"}}"
        );
        let back: Value = serde_json::from_str(script_text(&html, "compare-data")).unwrap();
        assert_eq!(back["base"]["name"], "<main>");
    }

    #[test]
    fn a_large_report_is_embedded_with_its_first_page_first_and_whole_after() {
        let cases: Vec<Value> = (0..FIRST_PAGE + 5)
            .map(|i| json!({"test": format!("s::c{i}"), "failure": "a \"quoted\", [tricky] {text}\\", "evaluators": [{"fields": [1, 2]}]}))
            .collect();
        let report = json!({
            "format": 1,
            "suites": [{"suite": "cases", "field_accuracy": []}],
            "cases": cases,
            "after": {"cases": [1, 2, 3]},
        });
        let text = serde_json::to_string_pretty(&report).unwrap();
        let html = render(&text, None);
        let summary: Value = serde_json::from_str(script_text(&html, "report-summary")).unwrap();
        let mut expected = report.clone();
        expected["cases"] = Value::Array(cases[..FIRST_PAGE].to_vec());
        assert_eq!(summary, expected);
        let whole: Value = serde_json::from_str(script_text(&html, "report-data")).unwrap();
        assert_eq!(whole, report);
        // The first page comes before the script, the whole report after it.
        let at = |needle: &str| html.find(needle).unwrap();
        assert!(at("id=\"report-summary\"") < at("<script>\n"));
        assert!(at("<script>\n") < at("id=\"report-data\""));
    }

    #[test]
    fn exactly_a_page_of_cases_is_embedded_once() {
        let cases: Vec<Value> = (0..FIRST_PAGE).map(|i| json!({ "i": i })).collect();
        let text = serde_json::to_string(&json!({ "cases": cases })).unwrap();
        assert_eq!(find_cases(text.as_bytes(), FIRST_PAGE), None);
        let html = render(&text, None);
        assert_eq!(script_text(&html, "report-summary"), text);
        assert_eq!(script_text(&html, "report-data"), "null");
    }

    #[test]
    fn text_that_is_not_a_report_is_embedded_as_it_is() {
        for text in ["", "[1,2", "{\"cases\": [1, 2", "{\"cases\": \"x", "]]]"] {
            let html = render(text, None);
            assert_eq!(script_text(&html, "report-summary"), text);
        }
    }

    #[test]
    fn the_page_loads_nothing_from_elsewhere() {
        let html = render("{}", None);
        for remote in ["http://", "https://", "<link", " src=", "@import", "url("] {
            assert!(!html.contains(remote), "found {remote}");
        }
    }
}
