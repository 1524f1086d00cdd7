//! The date-format language (`formats = [...]` of a date field): `DateFormat::parse` never
//! panics, nor does reading a date with a parsed format or with the defaults; a format that
//! reads a date reads it the same way through `read_date`; and a date written by chrono in a
//! format reads back as that date.
//!
//! Input: the first line is the format, the rest is the date text.
#![no_main]

use chrono::{Datelike, NaiveDate};
use libfuzzer_sys::fuzz_target;
use proposal_eval_engine::dates::{read_date, DateFormat};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (format, date) = text.split_once('\n').unwrap_or((text, ""));

    let _ = read_date(date, &[]).map_err(|e| e.to_string());
    match DateFormat::parse(format) {
        Ok(parsed) => {
            assert_eq!(parsed.as_str(), format);
            if let Some(day) = parsed.parse_date(date) {
                assert_eq!(read_date(date, std::slice::from_ref(&parsed)), Ok(day));
            }
            let _ = read_date(date, std::slice::from_ref(&parsed)).map_err(|e| e.to_string());
        }
        Err(e) => {
            assert!(e.to_string().contains("date format"), "{e}");
        }
    }

    // Writing side: any day in years 1000-9999, printed by chrono, reads back as that day.
    let seed = data
        .iter()
        .fold(0u32, |n, b| n.wrapping_mul(31).wrapping_add(u32::from(*b)));
    let first = NaiveDate::from_ymd_opt(1000, 1, 1).unwrap();
    let last = NaiveDate::from_ymd_opt(9999, 12, 31).unwrap();
    let span = (last - first).num_days() as u32 + 1;
    let day = first + chrono::Days::new(u64::from(seed % span));
    for (ours, chrono_format) in [
        ("YYYY-MM-DD", "%Y-%m-%d"),
        ("DD-MMM-YYYY", "%d-%b-%Y"),
        ("MMMM D, YYYY", "%B %-d, %Y"),
        ("D MMMM YYYY", "%-d %B %Y"),
        ("MM/DD/YYYY", "%m/%d/%Y"),
        ("%d.%m.%Y", "%d.%m.%Y"),
        ("%e %b %Y", "%-d %b %Y"),
        ("%F", "%F"),
    ] {
        let written = day.format(chrono_format).to_string();
        let format = DateFormat::parse(ours).unwrap();
        assert_eq!(
            format.parse_date(&written),
            Some(day),
            "`{written}` in {ours}"
        );
    }
    if (1969..=2068).contains(&day.year()) {
        let written = day.format("%d/%m/%y").to_string();
        let format = DateFormat::parse("DD/MM/YY").unwrap();
        assert_eq!(
            format.parse_date(&written),
            Some(day),
            "`{written}` in DD/MM/YY"
        );
    }
});
