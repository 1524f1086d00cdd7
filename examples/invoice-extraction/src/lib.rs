//! An invoice field extractor, and the proposal-eval suite that scores it field by field.
//!
//! An accounts-payable team scans supplier invoices; an OCR engine turns each page into lines of
//! text with their boxes; this crate asks a language model to read those lines and return the
//! invoice's fields (number, dates, amounts, currency, supplier, customer, line items) and where
//! on the page it found them. This crate is the example of proposal-eval's *scoring*
//! evaluators:
//!
//! - [`extract`] is the code under test. It builds a request from the case input (the OCR lines
//!   and the page's size) and the prompts in `prompts/` (compiled in with `include_str!`), sends
//!   it through [`proposal_eval::Llm`], and parses the model's reply into an [`Extraction`].
//! - `fixtures/invoices/` holds one JSON file per invoice; `expected` is the object a careful
//!   human would have extracted. `proposal-eval.toml` scores each field with `field_accuracy`
//!   (exact, numeric tolerance, date and fuzzy matching, with weights and a threshold of 0.8) and
//!   runs two judge scripts (`code_judge`): `judges/iou.py` (are the boxes on the right lines?)
//!   and `judges/supplier_name.py` (is it the same supplier, legal form and punctuation aside?).
//! - `tests/evals.rs` (harness) and `tests/macro_evals.rs` (macro) run that suite, replaying the
//!   recordings in `fixtures/invoices/recordings/`. `tests/below_threshold.rs` runs
//!   `fixtures/below-threshold/`, invoices whose extraction scores *below* the threshold, in a
//!   child process and checks that exactly those cases fail, with the reasons they should.
//!
//! # The live model is a stand-in
//!
//! [`live_model`] returns [`StandInModel`]: a deterministic, **rule-based local stand-in** that
//! reads the OCR lines with a few label rules ("Invoice No", "Total", "Bill to", ...) and
//! answers the way a real model does on noisy scans: it copies OCR typos (`ACME lndustrial`),
//! keeps dates as printed (`15-JAN-2025`), quotes amounts (`"1500.00"`), adds up line items when
//! the total is unreadable (`99.999` for a printed `100.00`), guesses `$` is USD, and gives boxes
//! a few units off. It exists so that `RECORD=1 cargo test` works on any machine without an API
//! key. It is not a language model: **plug your own client in here**, anything that implements
//! [`proposal_eval::Model`]. `live_model` is called only while recording; replay never builds it.
//!
//! ```
//! use proposal_eval::Llm;
//! use serde_json::json;
//!
//! let input = json!({
//!     "document": "inv-0042.pdf",
//!     "page": { "number": 1, "count": 1, "width": 1000, "height": 1400 },
//!     "ocr": [
//!         { "text": "ACME Industrial GmbH", "box": [60, 40, 420, 80] },
//!         { "text": "Invoice No: INV-2025-0042", "box": [600, 120, 940, 150] },
//!         { "text": "Invoice Date: 15-JAN-2025", "box": [600, 160, 940, 190] },
//!         { "text": "Total: EUR 1,487.50", "box": [600, 900, 940, 930] }
//!     ]
//! });
//! let mut llm = Llm::live(invoice_extraction::live_model());
//! let extraction = invoice_extraction::extract(&input, &mut llm).unwrap();
//! assert_eq!(extraction.invoice.number.as_deref(), Some("INV-2025-0042"));
//! assert_eq!(extraction.invoice.invoice_date.as_deref(), Some("15-JAN-2025"));
//! assert_eq!(extraction.invoice.currency.as_deref(), Some("EUR"));
//! assert_eq!(json!(extraction.invoice.total_amount), json!("1487.50"));
//! ```

use proposal_eval::{Llm, Model};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeMap;

mod standin;

pub use standin::StandInModel;

/// What the extractor tells the model about its job. A suite source (`[recording] sources` in
/// `proposal-eval.toml`): edit it and every recording is stale until re-recorded.
pub const SYSTEM_PROMPT: &str = include_str!("../prompts/system.md");

/// The answer format the model must follow; a suite source too.
pub const OUTPUT_FORMAT: &str = include_str!("../prompts/output-format.md");

/// The model name the extractor asks for.
pub const MODEL_NAME: &str = "invoice-standin-1";

/// The fields of one invoice, as the model read them.
///
/// Values are kept as the model wrote them: dates as printed (`15-JAN-2025`, `03/02/2025`),
/// amounts as numbers or numeric strings. Turning them into a booking is the next step's job;
/// what this crate is judged on is whether it read the page right, and the suite's matchers
/// (`date`, `numeric_tolerance`) read those forms as they are. Absent fields are left out of
/// the JSON, never written as `null`: "not on the page" is not a value.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Extraction {
    /// Invoice header and totals.
    pub invoice: InvoiceFields,
    /// Who sent the invoice.
    pub supplier: Party,
    /// Who is billed, when the page names them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customer: Option<Party>,
    /// The table rows, in the order the model gave them.
    #[serde(default)]
    pub line_items: Vec<LineItem>,
    /// Where each field was read: `[x0, y0, x1, y1]` in page units, keyed like the field
    /// (`supplier_name`, `invoice_number`, `invoice_date`, `total_amount`).
    #[serde(default)]
    pub boxes: BTreeMap<String, [f64; 4]>,
}

/// `invoice.*`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InvoiceFields {
    /// The invoice number, as printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<String>,
    /// The issue date, as printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invoice_date: Option<String>,
    /// The payment due date, when printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due_date: Option<String>,
    /// ISO 4217 code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub currency: Option<String>,
    /// Total before tax.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub net_amount: Option<Amount>,
    /// Tax (VAT, sales tax).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tax_amount: Option<Amount>,
    /// Amount payable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_amount: Option<Amount>,
}

/// An amount as the model wrote it: a JSON number, or a numeric string such as `"1500.00"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Amount {
    /// `1487.5`
    Number(f64),
    /// `"1487.50"`
    Text(String),
}

impl Amount {
    /// The amount's value, if the text is a number.
    pub fn value(&self) -> Option<f64> {
        match self {
            Amount::Number(x) => Some(*x),
            Amount::Text(s) => s.trim().parse().ok(),
        }
    }
}

/// A supplier or a customer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Party {
    /// The name as printed, OCR errors included.
    #[serde(default)]
    pub name: String,
}

/// One row of the invoice's table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LineItem {
    /// What was sold.
    pub description: String,
    /// How many.
    #[serde(deserialize_with = "lenient_number")]
    pub quantity: f64,
    /// Price of one.
    #[serde(deserialize_with = "lenient_number")]
    pub unit_price: f64,
    /// `quantity * unit_price`, as printed.
    #[serde(deserialize_with = "lenient_number")]
    pub amount: f64,
}

/// Models quote numbers now and then (`"250.00"`); a row is still a row.
fn lenient_number<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    match Amount::deserialize(deserializer)? {
        Amount::Number(x) => Ok(x),
        Amount::Text(s) => s
            .trim()
            .replace(',', "")
            .parse()
            .map_err(|_| serde::de::Error::custom(format!("`{s}` is not a number"))),
    }
}

/// Reads one invoice page: asks the model for its fields and parses the answer.
///
/// `input` is `{ "document": "...", "page": { "number", "count", "width", "height" },
/// "ocr": [ { "text": "...", "box": [x0, y0, x1, y1] }, ... ] }`: what the OCR step produced.
pub fn extract(input: &Value, llm: &mut Llm) -> proposal_eval::Result<Extraction> {
    let reply = llm.complete(&request(input)?)?;
    parse_reply(&reply)
}

/// The request the extractor sends for one page.
///
/// The OCR lines are rendered one per line as `[x0, y0, x1, y1] text`, the form the prompt
/// describes; the page's size goes in `context` so the model can tell a header from a footer.
pub fn request(input: &Value) -> proposal_eval::Result<Value> {
    let lines = input["ocr"]
        .as_array()
        .ok_or("the case input has no `ocr` array of lines")?;
    let mut page_text = String::new();
    for (i, line) in lines.iter().enumerate() {
        let text = line["text"]
            .as_str()
            .ok_or_else(|| format!("ocr line {i} has no `text` string"))?;
        let b = line["box"]
            .as_array()
            .filter(|b| b.len() == 4 && b.iter().all(Value::is_number))
            .ok_or_else(|| format!("ocr line {i} has no `box` of four numbers"))?;
        page_text.push_str(&format!(
            "[{}, {}, {}, {}] {text}\n",
            b[0], b[1], b[2], b[3]
        ));
    }
    Ok(json!({
        "model": MODEL_NAME,
        "temperature": 0,
        "response_format": "json_object",
        "system": format!("{SYSTEM_PROMPT}\n{OUTPUT_FORMAT}"),
        "context": {
            "document": input["document"],
            "page": input["page"],
        },
        "messages": [{ "role": "user", "content": page_text }],
    }))
}

/// The extraction in a model reply: `{ "content": "<the JSON object, perhaps in a ```json fence>" }`.
///
/// ```
/// use serde_json::json;
/// let reply = json!({ "content": "```json\n{\"invoice\": {\"number\": \"7\"}, \"supplier\": {\"name\": \"X\"}}\n```" });
/// let extraction = invoice_extraction::parse_reply(&reply).unwrap();
/// assert_eq!(extraction.invoice.number.as_deref(), Some("7"));
///
/// let err = invoice_extraction::parse_reply(&json!({ "content": "Sorry, I can't read this." })).unwrap_err();
/// assert!(err.to_string().contains("not the JSON object"));
/// ```
pub fn parse_reply(reply: &Value) -> proposal_eval::Result<Extraction> {
    let content = reply["content"]
        .as_str()
        .ok_or_else(|| format!("the model's reply has no `content` string: {reply}"))?;
    let body = strip_fence(content);
    serde_json::from_str(body).map_err(|e| {
        format!("the model's answer is not the JSON object the prompt asks for ({e}):\n{content}")
            .into()
    })
}

/// The text inside a Markdown code fence, or the whole text when there is none.
fn strip_fence(content: &str) -> &str {
    let trimmed = content.trim();
    let Some(rest) = trimmed.strip_prefix("```") else {
        return trimmed;
    };
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    rest.strip_suffix("```").unwrap_or(rest).trim()
}

/// The live model: here the local stand-in. **Replace it with your own client** (see the
/// crate docs). proposal-eval calls this only while recording.
pub fn live_model() -> impl Model {
    StandInModel
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_are_optional() {
        assert_eq!(strip_fence("```json\n{}\n```"), "{}");
        assert_eq!(strip_fence("```\n{}\n```"), "{}");
        assert_eq!(strip_fence("  {} "), "{}");
    }

    #[test]
    fn quoted_numbers_in_rows() {
        let row: LineItem = serde_json::from_value(json!({
            "description": "Widget", "quantity": "2", "unit_price": "1,250.00", "amount": 2500
        }))
        .unwrap();
        assert_eq!(
            (row.quantity, row.unit_price, row.amount),
            (2.0, 1250.0, 2500.0)
        );
        let err = serde_json::from_value::<LineItem>(json!({
            "description": "Widget", "quantity": "two", "unit_price": 1, "amount": 2
        }))
        .unwrap_err();
        assert!(err.to_string().contains("`two` is not a number"), "{err}");
    }

    #[test]
    fn absent_fields_stay_absent() {
        let e = Extraction::default();
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            json!({ "invoice": {}, "supplier": { "name": "" }, "line_items": [], "boxes": {} })
        );
    }
}
