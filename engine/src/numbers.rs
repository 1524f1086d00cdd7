//! Numbers written as strings: the one rule by which the engine reads them, for the `number`
//! transform and for `numeric_tolerance` fields alike.
//!
//! Accepted, with whitespace around it: an optional sign, digits with `.` as the decimal point,
//! and an optional exponent (`1500`, `-12.5`, `.5`, `1.5e3`). The whole part may group its
//! digits in thousands with commas (`1,500.00`, `-12,345,678`), provided every group after the
//! first has exactly three digits and the first has one to three and does not start with 0.
//!
//! Everything else is not a number: a decimal comma (`1,5`, `1.500,00`), a comma anywhere but
//! between thousands (`1,50`, `15,00`, `0,500`), spaces or underscores inside (`1 500`, `1_500`),
//! currency signs, `inf`, `NaN`, and values beyond the range of `f64`. A misplaced comma is as
//! likely a typo or another locale's decimal comma as a thousands separator; reading it either
//! way could let a wrong amount pass, so it is left for the comparison to show.
//!
//! ```
//! use proposal_eval_engine::numbers::read_number;
//!
//! assert_eq!(read_number(" 1,500.00 "), Some(1500.0));
//! assert_eq!(read_number("-12,345,678"), Some(-12345678.0));
//! assert_eq!(read_number("1.5e3"), Some(1500.0));
//! assert_eq!(read_number("1,50"), None);
//! assert_eq!(read_number("1.500,00"), None);
//! assert_eq!(read_number("1 500"), None);
//! assert_eq!(read_number("NaN"), None);
//! ```

/// The number `text` holds by the rule of this module, or `None`.
pub fn read_number(text: &str) -> Option<f64> {
    let t = text.trim();
    match shape(t.as_bytes())? {
        Shape::Plain => finite(t),
        // Rare enough that the allocation does not matter.
        Shape::Grouped => finite(&t.replace(',', "")),
    }
}

fn finite(t: &str) -> Option<f64> {
    t.parse::<f64>().ok().filter(|x| x.is_finite())
}

enum Shape {
    Plain,
    Grouped,
}

/// Whether `b` is a number of the accepted grammar, and whether it holds separators. Checked by
/// hand rather than left to `f64::from_str`, which also reads `inf`, `NaN` and `infinity`.
fn shape(b: &[u8]) -> Option<Shape> {
    let digits_from = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let whole = i;
    i = digits_from(i);
    let mut shape = Shape::Plain;
    if b.get(i) == Some(&b',') {
        let first = &b[whole..i];
        if first.is_empty() || first.len() > 3 || first[0] == b'0' {
            return None;
        }
        while b.get(i) == Some(&b',') {
            let group = i + 1;
            i = digits_from(group);
            if i - group != 3 {
                return None;
            }
        }
        shape = Shape::Grouped;
    }
    let mut mantissa_digits = i - whole;
    if b.get(i) == Some(&b'.') {
        let fraction = i + 1;
        i = digits_from(fraction);
        mantissa_digits += i - fraction;
    }
    if mantissa_digits == 0 {
        return None;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let exponent = i;
        i = digits_from(exponent);
        if i == exponent {
            return None;
        }
    }
    (i == b.len()).then_some(shape)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepted() {
        for (text, want) in [
            ("0", 0.0),
            ("-0", -0.0),
            ("1500", 1500.0),
            ("+1500", 1500.0),
            (" 1500.00\n", 1500.0),
            ("1500.", 1500.0),
            (".5", 0.5),
            ("-.5", -0.5),
            ("1.5e3", 1500.0),
            ("1.5E+3", 1500.0),
            ("15e-1", 1.5),
            ("1,500", 1500.0),
            ("1,500.25", 1500.25),
            ("999,999", 999999.0),
            ("-12,345,678.9", -12345678.9),
            ("1,500e3", 1_500_000.0),
            ("0.30000000000000004", 0.30000000000000004),
        ] {
            assert_eq!(read_number(text), Some(want), "{text:?}");
        }
    }

    #[test]
    fn refused() {
        for text in [
            "", " ", "+", "-", ".", "e5", "1e", "1e+", "1.2.3", "1-2", "--1", "+-1", "1,5", "1,50",
            "1,5000", "15,00", ",500", "1,", "1,,500", "0,500", "1234,567", "1.500,00", "1,500,00",
            "1.5,00", "1 500", "1_500", "$15", "15 EUR", "inf", "-inf", "NaN", "infinity", "1e999",
            "0x10", "١٢٣",
        ] {
            assert_eq!(read_number(text), None, "{text:?}");
        }
    }

    /// `shape` holds the whole grammar by itself: a mantissa without a digit (a sign alone, a
    /// point alone, either before an exponent) is refused there, not only later by `f64`'s
    /// parser, which `read_number` also asks.
    #[test]
    fn the_grammar_wants_a_digit_in_the_mantissa() {
        for text in ["+", "-", ".", "-.", "+.", ".e5", "-e5", "-.e5", "+,500"] {
            assert!(shape(text.as_bytes()).is_none(), "{text:?}");
        }
        for text in ["-1", "+.5", "-5.", "1,500"] {
            assert!(shape(text.as_bytes()).is_some(), "{text:?}");
        }
    }

    #[test]
    fn agrees_with_the_float_parser_on_plain_numbers() {
        for text in [
            "1",
            "-1",
            "1.25",
            "1e-7",
            "123456789012345678901234567890",
            "2.5E10",
        ] {
            assert_eq!(read_number(text), text.parse().ok(), "{text:?}");
        }
    }
}
