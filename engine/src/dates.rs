//! Calendar dates written as text: the one rule by which the engine reads them, for the
//! `date_iso` transform and for `match = "date"` fields alike.
//!
//! A date is read with an ordered list of [`DateFormat`]s, and the first format that reads the
//! text as a real calendar date wins. A date field's list is its `formats`, then `YYYY-MM-DD`;
//! without `formats`, and always for `date_iso`, it is [`default_date_formats`]: the year first,
//! or the month spelled out (`2025-01-15`, `20250115`, `15-JAN-2025`, `Jan 15, 2025`).
//!
//! A numeric day and month (`03/02/2025`) are in no default: that is 3 February in most of the
//! world and 2 March in the United States, and a date read the wrong way would pass or fail
//! silently. Such text is not a date until the user names the order (`formats =
//! ["DD/MM/YYYY"]`). Even `01/15/2025`, which only one order can read, is refused: otherwise the
//! same field would be read as month-first on the 15th and refused on the 12th.
//!
//! Also accepted: whitespace around the date; a time after it (`T10:30:00Z`, ` 10:30`), ignored
//! and never converted, so the date is the calendar day as written whatever the offset; English
//! month names, full or in three letters (and `Sept`), in any case. Refused: a day that does not
//! exist (`31-FEB-2025`) and any other text after the date.
//!
//! ```
//! use chrono::NaiveDate;
//! use proposal_eval_engine::dates::{read_date, DateError, DateFormat};
//!
//! let jan_15 = NaiveDate::from_ymd_opt(2025, 1, 15).unwrap();
//! assert_eq!(read_date("15-JAN-2025", &[]), Ok(jan_15));
//! assert_eq!(read_date(" 2025-01-15T23:30:00-08:00", &[]), Ok(jan_15));
//! assert_eq!(read_date("01/15/2025", &[]), Err(DateError::NoFormat));
//!
//! let us = [DateFormat::parse("MM/DD/YYYY").unwrap()];
//! assert_eq!(read_date("01/15/2025", &us), Ok(jan_15));
//! assert_eq!(read_date("2025-01-15", &us), Ok(jan_15), "YYYY-MM-DD after the listed formats");
//! let err = read_date("02/31/2025", &us).unwrap_err();
//! assert_eq!(err.to_string(), "reads as 2025-02-31 in MM/DD/YYYY, which is not a calendar date");
//! ```

use chrono::NaiveDate;
use serde::Deserialize;
use std::fmt;
use std::sync::OnceLock;

/// One date format, parsed once when the config is read.
///
/// Token style: `YYYY`, `YY` (00–68 → 20xx, 69–99 → 19xx), `MM`/`M` (1–2
/// digits), `DD`/`D` (1–2 digits), `MMM`/`MMMM` (an English month name, full or abbreviated,
/// any case; `Sept` too); any other character is literal, and a space matches one or more
/// whitespace characters. A format with `%` is strftime: `%Y %y %m %d %e %-m %-d %b %h %B %F %%`.
/// A time written after the date (`T10:30:00Z`, ` 10:30`) is ignored, never converted: a date
/// is the calendar date as written.
///
/// ```
/// use proposal_eval_engine::dates::DateFormat;
/// use chrono::NaiveDate;
/// let f = DateFormat::parse("DD-MMM-YYYY").unwrap();
/// assert_eq!(f.parse_date("15-jan-2025"), Some(NaiveDate::from_ymd_opt(2025, 1, 15).unwrap()));
/// assert_eq!(f.parse_date("31-FEB-2025"), None);
/// assert!(DateFormat::parse("DD-MMM-YYY").is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DateFormat {
    source: String,
    items: Vec<DateItem>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DateItem {
    Year4,
    Year2,
    Month,
    Day,
    MonthName,
    Space,
    Literal(char),
}

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

enum Scan {
    /// The format matched; the date may still be impossible (31 February).
    Fields(i32, u32, u32),
    NoMatch,
}

/// A date format that cannot be read: the message names the format, what is wrong, and the
/// tokens that are understood.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DateFormatError(String);

impl std::fmt::Display for DateFormatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DateFormatError {}

impl DateFormat {
    /// Parses a format, in token style or strftime.
    pub fn parse(text: &str) -> Result<DateFormat, DateFormatError> {
        let items = if text.contains('%') {
            parse_strftime(text)
        } else {
            parse_tokens(text)
        }
        .map_err(DateFormatError)?;
        let count = |wanted: &[DateItem]| items.iter().filter(|i| wanted.contains(i)).count();
        if count(&[DateItem::Year4, DateItem::Year2]) != 1
            || count(&[DateItem::Month, DateItem::MonthName]) != 1
            || count(&[DateItem::Day]) != 1
        {
            return Err(DateFormatError(format!(
                "date format `{text}` must name the year, the month and the day exactly once each (for example `DD-MMM-YYYY`, `YYYY-MM-DD` or `%d/%m/%Y`)"
            )));
        }
        Ok(DateFormat {
            source: text.to_string(),
            items,
        })
    }

    /// The format as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The calendar date `text` holds in this format, if it holds a valid one.
    pub fn parse_date(&self, text: &str) -> Option<NaiveDate> {
        match self.scan(text.trim()) {
            Scan::Fields(y, m, d) => NaiveDate::from_ymd_opt(y, m, d),
            Scan::NoMatch => None,
        }
    }

    fn scan(&self, text: &str) -> Scan {
        let bytes = text.as_bytes();
        let mut i = 0;
        let (mut year, mut month, mut day) = (0i32, 0u32, 0u32);
        let digits = |i: &mut usize, min: usize, max: usize| -> Option<u32> {
            let start = *i;
            while *i < bytes.len() && *i - start < max && bytes[*i].is_ascii_digit() {
                *i += 1;
            }
            if *i - start < min {
                return None;
            }
            Some(
                bytes[start..*i]
                    .iter()
                    .fold(0u32, |n, b| n * 10 + u32::from(b - b'0')),
            )
        };
        for item in &self.items {
            let ok = match *item {
                DateItem::Year4 => digits(&mut i, 4, 4).map(|y| year = y as i32),
                DateItem::Year2 => digits(&mut i, 2, 2).map(|y| {
                    year = if y < 69 {
                        2000 + y as i32
                    } else {
                        1900 + y as i32
                    };
                }),
                DateItem::Month => digits(&mut i, 1, 2).map(|m| month = m),
                DateItem::Day => digits(&mut i, 1, 2).map(|d| day = d),
                DateItem::MonthName => {
                    let start = i;
                    while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
                        i += 1;
                    }
                    month_from_name(&text[start..i]).map(|m| month = m)
                }
                DateItem::Space => {
                    let start = i;
                    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                        i += 1;
                    }
                    (i > start).then_some(())
                }
                DateItem::Literal(c) => match text[i..].chars().next() {
                    Some(got) if got.eq_ignore_ascii_case(&c) => {
                        i += got.len_utf8();
                        Some(())
                    }
                    _ => None,
                },
            };
            if ok.is_none() {
                return Scan::NoMatch;
            }
        }
        // A time after the date is allowed and ignored: `T10:30:00Z` or ` 10:30`.
        let rest = &bytes[i..];
        let time_follows = match rest.first() {
            None => true,
            Some(b'T' | b't') => rest.get(1).is_some_and(u8::is_ascii_digit),
            Some(b) if b.is_ascii_whitespace() => {
                let trimmed = text[i..].trim_start();
                trimmed.as_bytes().first().is_some_and(u8::is_ascii_digit) && trimmed.contains(':')
            }
            _ => false,
        };
        if time_follows {
            Scan::Fields(year, month, day)
        } else {
            Scan::NoMatch
        }
    }
}

fn month_from_name(name: &str) -> Option<u32> {
    if name.len() < 3 {
        return None;
    }
    if name.eq_ignore_ascii_case("sept") {
        return Some(9);
    }
    MONTHS
        .iter()
        .position(|m| {
            m.eq_ignore_ascii_case(name) || (name.len() == 3 && m[..3].eq_ignore_ascii_case(name))
        })
        .map(|n| n as u32 + 1)
}

fn parse_tokens(text: &str) -> Result<Vec<DateItem>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut items = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let run = chars[i..].iter().take_while(|x| **x == c).count();
        let bad = |hint: &str| {
            Err(format!(
                "date format `{text}`: `{}` is not a token ({hint}); tokens are YYYY, YY, MM, M, MMM, MMMM, DD, D",
                chars[i..i + run].iter().collect::<String>()
            ))
        };
        match c {
            'Y' | 'y' => match run {
                4 => items.push(DateItem::Year4),
                2 => items.push(DateItem::Year2),
                _ => return bad("a year is YYYY or YY"),
            },
            'M' => match run {
                1 | 2 => items.push(DateItem::Month),
                3 | 4 => items.push(DateItem::MonthName),
                _ => return bad("a month is MM, M, MMM or MMMM"),
            },
            'm' => return bad("a lowercase `m` means minutes in some conventions; write MM"),
            'D' | 'd' => match run {
                1 | 2 => items.push(DateItem::Day),
                _ => return bad("a day is DD or D"),
            },
            c if c.is_whitespace() => items.push(DateItem::Space),
            'T' => items.extend((0..run).map(|_| DateItem::Literal('T'))),
            c if c.is_ascii_alphabetic() => {
                return bad("letters other than the tokens and `T` are not allowed")
            }
            c => items.extend((0..run).map(|_| DateItem::Literal(c))),
        }
        i += run;
    }
    Ok(items)
}

fn parse_strftime(text: &str) -> Result<Vec<DateItem>, String> {
    let mut items = Vec::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            items.push(if c.is_whitespace() {
                DateItem::Space
            } else {
                DateItem::Literal(c)
            });
            continue;
        }
        let mut d = chars.next();
        if d == Some('-') {
            d = chars.next();
        }
        match d {
            Some('Y') => items.push(DateItem::Year4),
            Some('y') => items.push(DateItem::Year2),
            Some('m') => items.push(DateItem::Month),
            Some('d' | 'e') => items.push(DateItem::Day),
            Some('b' | 'h' | 'B') => items.push(DateItem::MonthName),
            Some('F') => items.extend([
                DateItem::Year4,
                DateItem::Literal('-'),
                DateItem::Month,
                DateItem::Literal('-'),
                DateItem::Day,
            ]),
            Some('%') => items.push(DateItem::Literal('%')),
            other => {
                return Err(format!(
                    "date format `{text}`: `%{}` is not supported; dates use %Y %y %m %d %e %b %B %F (a time after the date is ignored without being written in the format)",
                    other.map(String::from).unwrap_or_default()
                ))
            }
        }
    }
    Ok(items)
}

impl<'de> Deserialize<'de> for DateFormat {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        DateFormat::parse(&text).map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for DateFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

/// The formats tried when a date field lists none. None of them can be read two ways: numeric
/// day/month orders (`03/02/2025`) are left out, because only the user knows which one their
/// data uses; list `DD/MM/YYYY` or `MM/DD/YYYY` in `formats` for those.
///
/// `YYYY-MM-DD`, `YYYY/MM/DD`, `YYYY.MM.DD`, `YYYYMMDD`, `DD-MMM-YYYY`, `DD MMM YYYY`,
/// `DD/MMM/YYYY`, `DD.MMM.YYYY`, `MMM DD, YYYY`, `MMM DD YYYY`, `DD MMM, YYYY`, `DD-MMM-YY`.
pub fn default_date_formats() -> &'static [DateFormat] {
    static DEFAULTS: OnceLock<Vec<DateFormat>> = OnceLock::new();
    DEFAULTS.get_or_init(|| {
        [
            "YYYY-MM-DD",
            "YYYY/MM/DD",
            "YYYY.MM.DD",
            "YYYYMMDD",
            "DD-MMM-YYYY",
            "DD MMM YYYY",
            "DD/MMM/YYYY",
            "DD.MMM.YYYY",
            "MMM DD, YYYY",
            "MMM DD YYYY",
            "DD MMM, YYYY",
            "DD-MMM-YY",
        ]
        .iter()
        .map(|f| DateFormat::parse(f).expect("built-in date format"))
        .collect()
    })
}

fn iso_fallback() -> &'static DateFormat {
    &default_date_formats()[0]
}

/// Why a text is not a date, from [`read_date`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DateError {
    /// A format read the text, but as a day that does not exist (`31-FEB-2025`).
    NotACalendarDate {
        /// The first format that read the text, as written.
        format: String,
        /// The year as read.
        year: i32,
        /// The month as read.
        month: u32,
        /// The day as read.
        day: u32,
    },
    /// No format reads the text.
    NoFormat,
}

impl fmt::Display for DateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DateError::NotACalendarDate {
                format,
                year,
                month,
                day,
            } => write!(
                f,
                "reads as {year:04}-{month:02}-{day:02} in {format}, which is not a calendar date"
            ),
            DateError::NoFormat => f.write_str("is not a date in any of the formats tried"),
        }
    }
}

impl std::error::Error for DateError {}

/// The calendar date `text` holds, read by the rule of this module: `formats` in order, then
/// `YYYY-MM-DD`; [`default_date_formats`] when `formats` is empty.
pub fn read_date(text: &str, formats: &[DateFormat]) -> Result<NaiveDate, DateError> {
    let text = text.trim();
    let list = if formats.is_empty() {
        default_date_formats()
    } else {
        formats
    };
    let mut impossible = None;
    let explicit_then_iso = list.iter().chain((!formats.is_empty()).then(iso_fallback));
    for format in explicit_then_iso {
        if let Scan::Fields(y, m, d) = format.scan(text) {
            match NaiveDate::from_ymd_opt(y, m, d) {
                Some(date) => return Ok(date),
                None if impossible.is_none() => {
                    impossible = Some(DateError::NotACalendarDate {
                        format: format.source.clone(),
                        year: y,
                        month: m,
                        day: d,
                    })
                }
                None => {}
            }
        }
    }
    Err(impossible.unwrap_or(DateError::NoFormat))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ymd(y: i32, m: u32, d: u32) -> Option<NaiveDate> {
        NaiveDate::from_ymd_opt(y, m, d)
    }

    /// A format prints as written in the config, so messages quote the user's own words.
    #[test]
    fn formats_print_as_written() {
        for text in ["YYYY-MM-DD", "DD-MMM-YYYY", "MM/DD/YYYY"] {
            assert_eq!(DateFormat::parse(text).unwrap().to_string(), text);
        }
    }

    #[test]
    fn default_date_formats_each_parse() {
        let d = ymd(2025, 1, 15);
        for (text, format) in [
            ("2025-01-15", "YYYY-MM-DD"),
            ("2025/01/15", "YYYY/MM/DD"),
            ("2025.01.15", "YYYY.MM.DD"),
            ("20250115", "YYYYMMDD"),
            ("15-JAN-2025", "DD-MMM-YYYY"),
            ("15 Jan 2025", "DD MMM YYYY"),
            ("15/jan/2025", "DD/MMM/YYYY"),
            ("15.Jan.2025", "DD.MMM.YYYY"),
            ("Jan 15, 2025", "MMM DD, YYYY"),
            ("January 15 2025", "MMM DD YYYY"),
            ("15 January, 2025", "DD MMM, YYYY"),
            ("15-JAN-25", "DD-MMM-YY"),
        ] {
            let f = DateFormat::parse(format).unwrap();
            assert_eq!(f.parse_date(text), d, "{text} in {format}");
            assert!(default_date_formats().contains(&f), "{format} is a default");
            assert_eq!(read_date(text, &[]).ok(), d, "{text} with the defaults");
        }
        assert_eq!(default_date_formats().len(), 12);
    }

    #[test]
    fn strftime_formats() {
        let f = |s: &str| DateFormat::parse(s).unwrap();
        assert_eq!(f("%d/%m/%Y").parse_date("03/02/2025"), ymd(2025, 2, 3));
        assert_eq!(
            f("%-d %B %Y").parse_date("3 february 2025"),
            ymd(2025, 2, 3)
        );
        assert_eq!(f("%b %e, %Y").parse_date("Feb 3, 2025"), ymd(2025, 2, 3));
        assert_eq!(f("%F").parse_date("2025-02-03"), ymd(2025, 2, 3));
        assert_eq!(f("%d.%m.%y").parse_date("03.02.99"), ymd(1999, 2, 3));
        assert_eq!(f("%d.%m.%y").parse_date("03.02.68"), ymd(2068, 2, 3));
        assert_eq!(f("%d.%m.%y").parse_date("03.02.69"), ymd(1969, 2, 3));
        assert_eq!(read_date("15-JAN-69", &[]).ok(), ymd(1969, 1, 15));
        assert_eq!(read_date("15-JAN-00", &[]).ok(), ymd(2000, 1, 15));
        assert_eq!(
            read_date("03/02/2025", &[f("%d/%m/%Y")]).ok(),
            ymd(2025, 2, 3)
        );
        let err = DateFormat::parse("%Y-%m-%d %H:%M").unwrap_err().to_string();
        assert!(err.contains("`%H` is not supported"), "{err}");
    }

    /// What the scanner refuses: too few digits, a missing field, another separator, a missing
    /// space, a date cut short, and text after the date that is not a time.
    #[test]
    fn near_dates_are_not_dates() {
        for text in [
            "202-01-15",
            "2025--15",
            "2025-01-",
            "15-JAN-5",
            "2025x01x15",
            "2025-01/15",
            "15Jan2025",
            "Jan15, 2025",
            "15",
            "15 Jan",
            "Jan",
            "Jan 15",
            "2025-01-1510:30",
            "2025-01-15 1030",
            "2025-01-15 at 10:30",
            "2025-01-15T",
            "2025-01-15Tx",
        ] {
            assert_eq!(read_date(text, &[]), Err(DateError::NoFormat), "{text:?}");
        }
        let us = [DateFormat::parse("MM/DD/YYYY").unwrap()];
        assert_eq!(read_date("/15/2025", &us), Err(DateError::NoFormat));
    }

    /// A space in a format matches any run of whitespace (several spaces, a tab), and a time
    /// after the date is ignored whether it follows a `T` or whitespace.
    #[test]
    fn spaces_match_any_whitespace_run() {
        let d = ymd(2025, 1, 15);
        for text in [
            "15  Jan 2025",
            "15\tJan\t2025",
            "Jan 15,   2025",
            "15 \n Jan 2025",
            "2025-01-15\t10:30",
            "2025-01-15   10:30:00",
            "2025-01-15t10:30",
        ] {
            assert_eq!(read_date(text, &[]).ok(), d, "{text:?}");
        }
        let f = DateFormat::parse("DD  MMM YYYY").unwrap();
        assert_eq!(
            f.parse_date("15 Jan 2025"),
            d,
            "two spaces in a format are one run"
        );
        assert_eq!(f.parse_date("15 \t Jan 2025"), d);
    }

    /// When several formats read the text as an impossible day, the error names the first.
    #[test]
    fn the_first_impossible_reading_is_reported() {
        let formats = [
            DateFormat::parse("DD/MM/YYYY").unwrap(),
            DateFormat::parse("MM/DD/YYYY").unwrap(),
        ];
        assert_eq!(
            read_date("30/02/2025", &formats),
            Err(DateError::NotACalendarDate {
                format: "DD/MM/YYYY".into(),
                year: 2025,
                month: 2,
                day: 30,
            })
        );
        assert_eq!(
            read_date("2025-02-30", &formats).unwrap_err().to_string(),
            "reads as 2025-02-30 in YYYY-MM-DD, which is not a calendar date"
        );
        assert_eq!(read_date("2025-02-28", &formats).ok(), ymd(2025, 2, 28));
    }

    #[test]
    fn malformed_formats_are_errors() {
        for (bad, needle) in [
            ("DD-MMM-YYY", "`YYY` is not a token"),
            ("DD-MMMMM-YYYY", "`MMMMM`"),
            ("yyyy-mm-dd", "minutes"),
            ("DD-MM", "exactly once"),
            ("DD-MM-YYYY-DD", "exactly once"),
            ("DD/MM/YYYY Q", "letters other than"),
        ] {
            let err = DateFormat::parse(bad).unwrap_err().to_string();
            assert!(err.contains(needle), "{bad}: {err}");
        }
        assert!(DateFormat::parse("yyyy-MM-dd").is_ok());
        assert!(DateFormat::parse("YYYY-MM-DDTHH").is_err());
    }
}
