//! The local stand-in for a language model: label rules over the OCR lines of one page,
//! answering in the shape `prompts/output-format.md` asks for.
//!
//! It imitates what a real model does with a noisy scan, mistakes included, and nothing more
//! clever than that: it copies OCR typos, keeps dates and amounts as printed (amounts quoted as
//! strings), takes the first line that looks like a label (so a "Delivery date" above the
//! "Invoice date" wins, and a "Total" above a "Balance due" is the total), reads `$` as USD,
//! adds up the line items when the total is unreadable and computes the tax from its rate when
//! only the rate is printed (no rounding, as a model would not), and gives each field the box of
//! the line where it found the field's label, a few units off. It is deterministic in what it
//! extracts; like a real API it stamps a response id that differs on every call.
//!
//! It is here so that recording works without a key; a real project puts its model client in
//! its place.

use proposal_eval::{Model, ModelError};
use serde_json::{json, Map, Value};

/// The rule-based stand-in model. Build it with [`crate::live_model`].
#[derive(Clone, Copy, Debug, Default)]
pub struct StandInModel;

impl Model for StandInModel {
    fn complete(&self, request: &Value) -> Result<Value, ModelError> {
        let page = request["messages"]
            .as_array()
            .and_then(|m| m.iter().find(|m| m["role"] == "user"))
            .and_then(|m| m["content"].as_str())
            .ok_or_else(|| ModelError::new("the request has no user message"))?;
        let lines = page
            .lines()
            .map(Line::read)
            .collect::<Result<Vec<_>, _>>()?;
        let answer = read_invoice(&lines);
        let text = serde_json::to_string_pretty(&answer)
            .map_err(|e| ModelError::new(format!("cannot write the answer: {e}")))?;
        Ok(json!({
            "id": volatile_id(),
            "model": crate::MODEL_NAME,
            "content": format!("```json\n{text}\n```"),
        }))
    }
}

/// One OCR line as the request renders it: `[x0, y0, x1, y1] text`.
struct Line {
    text: String,
    bbox: [f64; 4],
}

impl Line {
    fn read(rendered: &str) -> Result<Line, ModelError> {
        let bad = || ModelError::new(format!("cannot read the OCR line `{rendered}`"));
        let rest = rendered.strip_prefix('[').ok_or_else(bad)?;
        let (coords, text) = rest.split_once(']').ok_or_else(bad)?;
        let numbers: Vec<f64> = coords
            .split(',')
            .map(|n| n.trim().parse::<f64>())
            .collect::<Result<_, _>>()
            .map_err(|_| bad())?;
        let bbox: [f64; 4] = numbers.try_into().map_err(|_| bad())?;
        Ok(Line {
            text: text.trim().to_string(),
            bbox,
        })
    }

    /// The label (before the first `:`, lowercase) and the value (after it, trimmed).
    fn label_value(&self) -> (String, &str) {
        match self.text.split_once(':') {
            Some((label, value)) => (label.trim().to_lowercase(), value.trim()),
            None => (self.text.trim().to_lowercase(), ""),
        }
    }

    /// The model's box for this line: close, not exact.
    fn model_box(&self) -> Value {
        let [x0, y0, x1, y1] = self.bbox;
        json!([x0 + 4.0, y0 + 3.0, x1 + 6.0, y1 + 2.0])
    }
}

fn read_invoice(lines: &[Line]) -> Value {
    let mut invoice = Map::new();
    let mut boxes = Map::new();
    let mut supplier = String::new();
    let mut customer = None;
    let mut total: Option<(String, &Line)> = None;
    let mut balance: Option<(String, &Line)> = None;
    let mut net = None;
    let mut tax_line = None;
    let mut rows = Vec::new();

    if let Some(first) = lines.first() {
        supplier = first.text.clone();
        boxes.insert("supplier_name".into(), first.model_box());
    }
    for (i, line) in lines.iter().enumerate() {
        if let Some(row) = table_row(&line.text) {
            rows.push(row);
            continue;
        }
        let (label, value) = line.label_value();
        // A form-style page puts the value on the line below its label. The value is read from
        // there; the box stays the label's, the kind of slip the IoU judge is there to catch.
        let value = if value.is_empty() {
            lines.get(i + 1).map(|l| l.text.trim()).unwrap_or("")
        } else {
            value
        };
        let words: Vec<&str> = label.split_whitespace().collect();
        if i == 0 || value.is_empty() {
            continue;
        }
        if words.contains(&"invoice")
            && words
                .iter()
                .any(|w| ["no", "no.", "#", "number", "nr", "nr."].contains(w))
        {
            put(
                &mut invoice,
                &mut boxes,
                "number",
                "invoice_number",
                value,
                line,
            );
        } else if label.contains("date") {
            if label.contains("due") {
                put(&mut invoice, &mut boxes, "due_date", "", value, line);
            } else {
                put(
                    &mut invoice,
                    &mut boxes,
                    "invoice_date",
                    "invoice_date",
                    value,
                    line,
                );
            }
        } else if ["bill to", "billed to", "customer"]
            .iter()
            .any(|p| label.starts_with(p))
        {
            customer.get_or_insert_with(|| value.to_string());
        } else if label.starts_with("subtotal") || label.starts_with("net") {
            net = net.or_else(|| amount_in(value));
        } else if ["vat", "tax", "sales tax", "gst", "hst", "mwst"]
            .iter()
            .any(|p| label.starts_with(p))
        {
            tax_line.get_or_insert((label.clone(), value.to_string()));
        } else if label.starts_with("total") || label.starts_with("grand total") {
            if total.is_none() {
                total = Some((amount_in(value).unwrap_or_default(), line));
            }
        } else if label.starts_with("balance due") || label.starts_with("amount due") {
            balance.get_or_insert((amount_in(value).unwrap_or_default(), line));
        }
    }

    let net_value = net.as_deref().and_then(|n| n.parse::<f64>().ok());
    if let Some(n) = net_value {
        invoice.insert("net_amount".into(), json!(n));
    }
    if let Some((label, value)) = tax_line {
        if let Some(tax) = amount_in(&value).and_then(|t| t.parse::<f64>().ok()) {
            invoice.insert("tax_amount".into(), json!(tax));
        } else if let (Some(rate), Some(n)) = (percent_in(&format!("{label} {value}")), net_value) {
            invoice.insert("tax_amount".into(), json!(n * rate / 100.0));
        }
    }
    let total = total.or(balance);
    match &total {
        Some((printed, line)) if !printed.is_empty() => {
            invoice.insert("total_amount".into(), json!(printed));
            boxes.insert("total_amount".into(), line.model_box());
        }
        // Unreadable or missing: add up the rows, as the prompt says.
        _ if !rows.is_empty() => {
            let sum: f64 = rows.iter().map(|r| r.amount).sum();
            invoice.insert("total_amount".into(), json!(sum));
        }
        _ => {}
    }
    if let Some(code) = currency(lines, total.as_ref().map(|(_, l)| *l)) {
        invoice.insert("currency".into(), json!(code));
    }

    let mut answer = json!({
        "invoice": invoice,
        "supplier": { "name": supplier },
        "line_items": rows.iter().map(Row::to_json).collect::<Vec<_>>(),
        "boxes": boxes,
    });
    if let Some(name) = customer {
        answer["customer"] = json!({ "name": name });
    }
    answer
}

fn put(
    invoice: &mut Map<String, Value>,
    boxes: &mut Map<String, Value>,
    field: &str,
    box_key: &str,
    value: &str,
    line: &Line,
) {
    if invoice.contains_key(field) {
        return;
    }
    invoice.insert(field.into(), json!(value));
    if !box_key.is_empty() {
        boxes.insert(box_key.into(), line.model_box());
    }
}

struct Row {
    description: String,
    cells: [String; 3],
    amount: f64,
}

impl Row {
    /// Numbers as JSON numbers, except a cell printed with a thousands separator, which the
    /// stand-in quotes as printed (models do that); the extractor reads both.
    fn to_json(&self) -> Value {
        let cell = |c: &String| {
            if c.contains(',') {
                json!(c)
            } else {
                c.parse::<f64>()
                    .map(|x| json!(x))
                    .unwrap_or_else(|_| json!(c))
            }
        };
        json!({
            "description": self.description,
            "quantity": cell(&self.cells[0]),
            "unit_price": cell(&self.cells[1]),
            "amount": cell(&self.cells[2]),
        })
    }
}

/// `Widget A | 2 | 250.00 | 500.00`: a description and three numbers.
fn table_row(text: &str) -> Option<Row> {
    let cells: Vec<&str> = text.split('|').map(str::trim).collect();
    let [description, quantity, unit_price, amount] = cells.as_slice() else {
        return None;
    };
    let number = |s: &str| s.replace(',', "").parse::<f64>().ok();
    number(quantity)?;
    number(unit_price)?;
    let value = number(amount)?;
    Some(Row {
        description: description.to_string(),
        cells: [
            quantity.to_string(),
            unit_price.to_string(),
            amount.to_string(),
        ],
        amount: value,
    })
}

/// The last amount in `text`, thousands separators and currency marks removed: `"1487.50"`.
fn amount_in(text: &str) -> Option<String> {
    text.split_whitespace().rev().find_map(|token| {
        let t = token
            .trim_matches(|c: char| !c.is_ascii_digit() && c != '.' && c != ',')
            .trim_end_matches(['.', ',']);
        if token.contains('%') || t.is_empty() || !t.starts_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
        let clean = t.replace(',', "");
        // Letters inside the number (`100.0O`) make it unreadable, not a smaller number.
        let inner_letters = token
            .trim_matches(|c: char| !c.is_ascii_digit())
            .chars()
            .any(|c| c.is_ascii_alphabetic());
        (!inner_letters && clean.parse::<f64>().is_ok()).then_some(clean)
    })
}

/// `19` in "VAT 19%".
fn percent_in(text: &str) -> Option<f64> {
    text.split_whitespace().find_map(|token| {
        let t = token.trim_end_matches([':', ')', ',']);
        t.strip_suffix('%')?
            .trim_start_matches('(')
            .parse::<f64>()
            .ok()
    })
}

/// The currency of the total line, else of any line: an ISO code, or a symbol read the way a
/// model reads it (`$` is USD, whatever the supplier's country).
fn currency(lines: &[Line], total: Option<&Line>) -> Option<String> {
    let of = |text: &str| -> Option<String> {
        let upper = text.to_uppercase();
        for code in ["EUR", "USD", "GBP", "CHF", "CAD", "SEK", "JPY"] {
            if upper
                .split(|c: char| !c.is_ascii_alphabetic())
                .any(|w| w == code)
            {
                return Some(code.to_string());
            }
        }
        [('€', "EUR"), ('£', "GBP"), ('$', "USD"), ('¥', "JPY")]
            .iter()
            .find(|(symbol, _)| text.contains(*symbol))
            .map(|(_, code)| code.to_string())
    };
    total
        .and_then(|l| of(&l.text))
        .or_else(|| lines.iter().skip(1).find_map(|l| of(&l.text)))
}

fn volatile_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("resp-{nanos:x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts() {
        assert_eq!(amount_in("EUR 1,487.50").as_deref(), Some("1487.50"));
        assert_eq!(amount_in("$12,480.00 USD").as_deref(), Some("12480.00"));
        assert_eq!(amount_in("1500.00 €").as_deref(), Some("1500.00"));
        assert_eq!(amount_in("1O0.00"), None);
        assert_eq!(amount_in("19%"), None);
        assert_eq!(percent_in("vat 19%"), Some(19.0));
        assert_eq!(percent_in("Tax (7.5%)"), Some(7.5));
    }

    #[test]
    fn rows() {
        let row = table_row("Widget A | 2 | 1,250.00 | 2,500.00").unwrap();
        assert_eq!(row.amount, 2500.0);
        assert_eq!(
            row.to_json(),
            json!({"description": "Widget A", "quantity": 2.0, "unit_price": "1,250.00", "amount": "2,500.00"})
        );
        assert!(table_row("Description | Qty | Unit price | Amount").is_none());
    }
}
