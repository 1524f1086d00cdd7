//! `report.html`: one fixed page (`page.html`, `page.css`, `page.js`, compiled in) with the
//! report's JSON, and a comparison's when there is one, embedded in it. The page's own script
//! renders everything (summary, charts, filters, rows, a case's whole story), so the file works
//! from `file://` with no network, and no HTML is made per case in Rust.
//!
//! The JSON goes in `<script type="application/json">` elements with every `<` written as
//! `\u003c`. In JSON a `<` can only stand inside a string, where `\u003c` means the same
//! character, so `JSON.parse` reads the same value, and no text in a report (`</script>`,
//! `<!--`) can end the element or change how the browser parses it.

/// The page, with `{{style}}`, `{{report}}`, `{{compare}}` and `{{script}}` in this order.
const TEMPLATE: &str = include_str!("page.html");
const STYLE: &str = include_str!("page.css");
const SCRIPT: &str = include_str!("page.js");

/// The markers of [`TEMPLATE`], in the order they appear in it.
const MARKERS: [&str; 4] = ["{{style}}", "{{report}}", "{{compare}}", "{{script}}"];

/// `report.html` for `report_json` (the text of `report.json`), and the comparison with a
/// baseline (`compare`'s JSON) when `report --compare BASE` asked for one.
pub fn render(report_json: &str, compare_json: Option<&str>) -> String {
    let mut out = String::with_capacity(
        TEMPLATE.len()
            + STYLE.len()
            + SCRIPT.len()
            + report_json.len()
            + compare_json.map_or(0, str::len)
            + 1024,
    );
    let mut rest = TEMPLATE;
    for marker in MARKERS {
        let (before, after) = rest
            .split_once(marker)
            .expect("page.html holds each marker once, in order");
        out.push_str(before);
        match marker {
            "{{style}}" => out.push_str(STYLE),
            "{{report}}" => embed(&mut out, report_json),
            "{{compare}}" => embed(&mut out, compare_json.unwrap_or("null")),
            _ => out.push_str(SCRIPT),
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Appends `json` with every `<` as `\u003c` (see the module's docs).
fn embed(out: &mut String, json: &str) {
    let mut pieces = json.split('<');
    if let Some(first) = pieces.next() {
        out.push_str(first);
    }
    for piece in pieces {
        out.push_str("\\u003c");
        out.push_str(piece);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let value = serde_json::json!({
            "cases": [{
                "test": "a</script><script>alert(1)</script>",
                "failure": "<!-- <script> </SCRIPT> <b>x</b>",
            }]
        });
        let json = serde_json::to_string(&value).unwrap();
        let html = render(&json, None);
        let embedded = script_text(&html, "report-data");
        assert!(!embedded.contains('<'), "{embedded}");
        let back: serde_json::Value = serde_json::from_str(embedded).unwrap();
        assert_eq!(back, value);
        assert_eq!(script_text(&html, "compare-data"), "null");
        // The page's own markup stays: the script after the data is still there.
        assert!(html.trim_end().ends_with("</html>"));
        assert_eq!(html.matches("<script").count(), 3);
    }

    #[test]
    fn a_comparison_is_embedded_beside_the_report() {
        let html = render("{\"cases\":[]}", Some("{\"base\":{\"name\":\"<main>\"}}"));
        assert_eq!(
            script_text(&html, "compare-data"),
            "{\"base\":{\"name\":\"\\u003cmain>\"}}"
        );
        let back: serde_json::Value =
            serde_json::from_str(script_text(&html, "compare-data")).unwrap();
        assert_eq!(back["base"]["name"], "<main>");
    }

    #[test]
    fn the_page_loads_nothing_from_elsewhere() {
        let html = render("{}", None);
        for remote in ["http://", "https://", "<link", " src=", "@import", "url("] {
            assert!(!html.contains(remote), "found {remote}");
        }
    }
}
