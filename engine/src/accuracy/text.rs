//! How numbers and values are written in verdicts: compact JSON cut to length, numbers with
//! as many decimals as people need, and two numbers that differ never printed as equal.

use serde_json::Value;
use std::fmt::Write as _;

/// Compact JSON, cut to 60 characters.
pub(super) fn brief(v: &Value) -> String {
    truncate(&v.to_string(), 60)
}

pub(super) fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max - 1).collect();
    out.push('…');
    out
}

/// A number for people: 6 significant digits, no trailing zeros (`0.020000000000000018` → `0.02`).
pub(super) fn fmt_num(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{}", if x == 0.0 { 0.0 } else { x });
    }
    let magnitude = x.abs().log10().floor() as i32;
    if !(-6..15).contains(&magnitude) {
        return format!("{x:e}");
    }
    let decimals = (5 - magnitude).clamp(0, 12) as usize;
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Appends `x`, `sep` and `y` for a failed comparison (`0.73 < 0.85`): two decimals each, or
/// more when two would print different numbers as equal (`0.849 < 0.85`, never `0.85 < 0.85`),
/// with no zeros beyond the second decimal (`0.8500` → `0.85`).
///
/// Every fuzzy miss writes this into its `why` and every failed verdict into its reasoning, and
/// `format!`'s exact float formatting costs more than comparing the field. So the numbers stay
/// integers (rounded at `decimals`, see [`rounded`]) until they differ, and only then are
/// written; anything outside that fast path goes through `format!`.
pub(super) fn push_apart_failed(out: &mut String, x: f64, sep: &str, y: f64) {
    for decimals in 2..=6 {
        let (Some(p), Some(q)) = (rounded(x, decimals), rounded(y, decimals)) else {
            // Outside the fast path (huge, not finite, at a rounding tie): `format!`.
            return push_apart_plain(out, x, sep, y);
        };
        // Same decimals, so equal integers are equal text.
        if p != q {
            push_trimmed(out, p, decimals);
            out.push_str(sep);
            push_trimmed(out, q, decimals);
            return;
        }
    }
    let _ = write!(out, "{x}{sep}{y}");
}

/// Appends `n` with at least two decimals and no zeros beyond them.
fn push_trimmed(out: &mut String, mut n: Rounded, mut decimals: usize) {
    while decimals > 2 && n.scaled.is_multiple_of(10) {
        n.scaled /= 10;
        decimals -= 1;
    }
    push_scaled(out, n, decimals);
}

/// [`push_apart_failed`] through `format!`: the same text for any number.
fn push_apart_plain(out: &mut String, x: f64, sep: &str, y: f64) {
    let start = out.len();
    for decimals in 2..=6 {
        let _ = write!(out, "{x:.decimals$}");
        let x_end = out.len();
        let _ = write!(out, "{y:.decimals$}");
        if out[start..x_end] != out[x_end..] {
            out.truncate(x_end + trimmed_len(&out[x_end..]));
            let x_keep = start + trimmed_len(&out[start..x_end]);
            out.replace_range(x_keep..x_end, sep);
            return;
        }
        out.truncate(start);
    }
    let _ = write!(out, "{x}{sep}{y}");
}

/// The length of a number written with at least two decimals once the zeros beyond the second
/// are dropped.
fn trimmed_len(s: &str) -> usize {
    match s.find('.') {
        Some(dot) => (dot + 3).max(s.trim_end_matches('0').len()).min(s.len()),
        None => s.len(),
    }
}

/// Appends `format!("{x:.decimals$}")`. Every verdict prints its score and threshold, and the
/// exact float formatter behind `format!` costs more than scoring a field; for the numbers
/// printed here (small, not at a rounding tie) scaling to an integer gives the same text (see
/// [`rounded`]). Anything else goes to `format!`.
pub(super) fn push_fixed(out: &mut String, x: f64, decimals: usize) {
    match rounded(x, decimals) {
        Some(n) => push_scaled(out, n, decimals),
        None => {
            let _ = write!(out, "{x:.decimals$}");
        }
    }
}

/// A number rounded to some count of decimals, as `format!` writes it: a sign and the digits
/// as one integer (`-0.849` at 2 decimals is `-`, 85). At the same decimals, two are the same
/// text exactly when they are equal.
#[derive(Clone, Copy, PartialEq)]
struct Rounded {
    negative: bool,
    scaled: u64,
}

/// `x` rounded to `decimals` decimals, when [`push_scaled`] then writes exactly
/// `format!("{x:.decimals$}")`: for small numbers away from a rounding tie. `None` otherwise.
fn rounded(x: f64, decimals: usize) -> Option<Rounded> {
    let pow = *POW10.get(decimals)?;
    // `format!` writes a negative number as `-` and its magnitude, and so -0.0 as `-0`: a
    // score with no hit is -0.0, the sum of no weights.
    let negative = x.is_sign_negative();
    let magnitude = x.abs();
    let scaled = magnitude * pow as f64;
    // Below 2^32 the product is within 1e-6 of the exact decimal value, so away from a tie
    // (.5) rounding it rounds the exact value; `magnitude >= 0.0` turns away NaN.
    // `as` and a subtraction rather than `round`/`fract`, which are library calls on
    // the baseline x86-64 target.
    let whole = scaled as u64;
    let frac = scaled - whole as f64;
    (magnitude >= 0.0 && scaled < 4e9 && (frac - 0.5).abs() > 1e-3).then(|| Rounded {
        negative,
        scaled: whole + u64::from(frac > 0.5),
    })
}

/// Appends `n` with exactly `decimals` decimals (at most 12).
fn push_scaled(out: &mut String, n: Rounded, decimals: usize) {
    // Right to left into one buffer, copied out once: the decimals, the point, the whole
    // part (at least one digit), the sign. A miss writes two numbers, so this is hot.
    let mut buf = [0u8; 32];
    let mut start = buf.len();
    let mut rest = n.scaled;
    let mut push = |byte: u8| {
        start -= 1;
        buf[start] = byte;
    };
    for _ in 0..decimals {
        push(b'0' + (rest % 10) as u8);
        rest /= 10;
    }
    if decimals > 0 {
        push(b'.');
    }
    loop {
        push(b'0' + (rest % 10) as u8);
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if n.negative {
        push(b'-');
    }
    out.extend(buf[start..].iter().map(|&b| char::from(b)));
}

const POW10: [u64; 13] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
    1_000_000_000,
    10_000_000_000,
    100_000_000_000,
    1_000_000_000_000,
];

/// Appends `n` in decimal.
pub(super) fn push_digits(out: &mut String, mut n: usize) {
    let mut buf = [0u8; 20];
    let mut start = buf.len();
    loop {
        start -= 1;
        buf[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend(buf[start..].iter().map(|&b| char::from(b)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_fixed_agrees_with_format() {
        let mut samples = vec![
            0.0,
            1.0,
            0.5,
            0.75,
            0.125,
            0.005,
            0.015,
            0.849,
            0.85,
            0.8333333,
            0.9999999,
            0.995,
            1e-9,
            3.0,
            1234.5678,
            0.020000000000000018,
            4e9,
            1e300,
            -0.0,
            -0.5,
            f64::NAN,
            f64::INFINITY,
            -0.001,
            -0.005,
            -1e-9,
            -f64::NAN,
            f64::NEG_INFINITY,
        ];
        let mut state = 1u64;
        for _ in 0..20_000 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let unit = (state >> 11) as f64 / (1u64 << 53) as f64;
            samples.push(unit);
            samples.push(unit * 1e4);
            samples.push(-unit);
            samples.push(unit * -1e4);
            // Ratios of small integers, as scores and similarities are.
            samples.push(((state >> 40) % 97) as f64 / (((state >> 20) % 97) + 1) as f64);
        }
        for x in samples {
            for decimals in 0..=14 {
                let mut s = String::new();
                push_fixed(&mut s, x, decimals);
                assert_eq!(s, format!("{x:.decimals$}"), "{x:?} {decimals}");
            }
        }
    }

    /// Cut to `max` characters in all, the last one an ellipsis; counted in characters.
    #[test]
    fn truncate_counts_characters() {
        assert_eq!(truncate("abcdef", 6), "abcdef");
        assert_eq!(truncate("abcdefg", 6), "abcde…");
        assert_eq!(truncate("ééééééé", 4), "ééé…");
        assert_eq!(
            brief(&serde_json::json!("x".repeat(100))).chars().count(),
            60
        );
    }

    #[test]
    fn push_digits_agrees_with_format() {
        for n in [0, 7, 10, 99, 100, 12345, usize::MAX] {
            let mut s = String::new();
            push_digits(&mut s, n);
            assert_eq!(s, n.to_string());
        }
    }

    #[test]
    fn number_formatting() {
        assert_eq!(fmt_num(0.020000000000000018), "0.02");
        assert_eq!(fmt_num(1234.5678), "1234.57");
        assert_eq!(fmt_num(0.0125), "0.0125");
        assert_eq!(fmt_num(3.0), "3");
        assert_eq!(fmt_num(1e-9), "1e-9");
        let apart = |x, y| {
            let mut out = String::new();
            push_apart_failed(&mut out, x, " < ", y);
            out
        };
        assert_eq!(apart(0.849, 0.85), "0.849 < 0.85");
        assert_eq!(apart(0.73, 0.85), "0.73 < 0.85");
        assert_eq!(apart(0.8, 0.85), "0.80 < 0.85");
        assert_eq!(apart(0.0, 1.0), "0.00 < 1.00");
        assert_eq!(apart(0.85, 0.85), "0.85 < 0.85");
    }

    /// Two decimals, or as many more (up to 6) as it takes to print them apart, with no zeros
    /// beyond the second: the definition, written plainly.
    fn fmt_apart(x: f64, y: f64) -> (String, String) {
        let trim = |mut s: String| {
            if let Some(dot) = s.find('.') {
                let keep = (dot + 3).max(s.trim_end_matches('0').len()).min(s.len());
                s.truncate(keep);
            }
            s
        };
        for decimals in 2..=6 {
            let (p, q) = (format!("{x:.decimals$}"), format!("{y:.decimals$}"));
            if p != q {
                return (trim(p), trim(q));
            }
        }
        (x.to_string(), y.to_string())
    }

    #[test]
    fn push_apart_failed_agrees_with_fmt_apart() {
        let mut samples = vec![
            (0.849, 0.85),
            (0.8499999, 0.85),
            (0.84999999999, 0.85),
            (0.85, 0.85),
            (0.7333333333333334, 0.85),
            (0.0, 0.85),
            (0.0, 0.0),
            (1.0, 0.5),
            (0.125, 0.5),
            (0.995, 1.0),
            (1234.5678, 1234.5679),
            (4e9, 4e9 + 1.0),
            (-0.5, 0.5),
            (-0.0, 1.0),
            (-0.0, 0.0),
            (-0.001, 0.0),
            (f64::NAN, 0.5),
            (-f64::NAN, 0.5),
            (f64::INFINITY, 0.5),
        ];
        let mut state = 3u64;
        for _ in 0..20_000 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Similarities (ratios of small integers) against thresholds with 0 to 4 decimals.
            let x = ((state >> 40) % 97) as f64 / (((state >> 20) % 97) + 1) as f64;
            let y = ((state >> 8) % 10_001) as f64 / 10f64.powi(((state >> 4) % 5) as i32);
            samples.push((x, y));
            // Close pairs, which need more decimals to print apart (or all of them).
            samples.push((x, x + 1e-4));
            samples.push((x, x + 1e-7));
        }
        for (x, y) in samples {
            let (s, t) = fmt_apart(x, y);
            let mut out = "similarity ".to_string();
            push_apart_failed(&mut out, x, " < ", y);
            assert_eq!(out, format!("similarity {s} < {t}"), "{x:?} {y:?}");
        }
    }
}
