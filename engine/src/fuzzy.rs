//! String similarity for `match = "fuzzy"`: Levenshtein (normalized) and Jaro-Winkler.
//!
//! Both agree with the usual definitions (and with the `strsim` crate, which the tests use as a
//! reference) but are written for speed on the short strings fields hold: strings of up to 64
//! characters take a bit-parallel path (Myers/Hyyrö for Levenshtein, one bit mask per pattern
//! character for Jaro, which needs ASCII), so a 30-character comparison costs a few dozen machine
//! words of work instead of a 30×30 table. Longer strings, and Jaro on non-ASCII ones, fall back
//! to the classic algorithms over `char`s; lengths and similarities are always counted in
//! `char`s, never bytes.
//!
//! ```
//! use proposal_eval_engine::fuzzy::{jaro_winkler, levenshtein, normalized_levenshtein, Algorithm};
//! assert_eq!(levenshtein("kitten", "sitting"), 3);
//! assert!((normalized_levenshtein("ACME GmbH", "ACME GmbH.") - 0.9).abs() < 1e-12);
//! assert!(jaro_winkler("MARTHA", "MARHTA") > 0.96);
//! assert_eq!(Algorithm::Levenshtein.similarity("same", "same"), 1.0);
//! ```

use serde::Deserialize;

/// Which similarity `match = "fuzzy"` computes (`algorithm = "..."`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Algorithm {
    /// `1 - distance / max(len)`: share of characters that need no edit (default).
    #[default]
    Levenshtein,
    /// Jaro similarity with Winkler's bonus for a common prefix of up to 4 characters.
    JaroWinkler,
}

impl Algorithm {
    /// The similarity of `a` and `b`, between 0 (nothing in common) and 1 (equal).
    ///
    /// ```
    /// use proposal_eval_engine::fuzzy::Algorithm;
    /// assert_eq!(Algorithm::JaroWinkler.similarity("", ""), 1.0);
    /// assert_eq!(Algorithm::Levenshtein.similarity("abc", ""), 0.0);
    /// ```
    pub fn similarity(self, a: &str, b: &str) -> f64 {
        match self {
            Algorithm::Levenshtein => normalized_levenshtein(a, b),
            Algorithm::JaroWinkler => jaro_winkler(a, b),
        }
    }

    /// The name used in configs.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Levenshtein => "levenshtein",
            Algorithm::JaroWinkler => "jaro_winkler",
        }
    }
}

/// The Levenshtein distance: the fewest single-character insertions, deletions and
/// substitutions that turn `a` into `b`.
///
/// ```
/// assert_eq!(proposal_eval_engine::fuzzy::levenshtein("Müller", "Muller"), 1);
/// ```
pub fn levenshtein(a: &str, b: &str) -> usize {
    if a.is_ascii() && b.is_ascii() {
        levenshtein_ascii(a.as_bytes(), b.as_bytes())
    } else {
        let a: Vec<char> = a.chars().collect();
        let b: Vec<char> = b.chars().collect();
        levenshtein_chars(&a, &b)
    }
}

/// `1 - levenshtein(a, b) / max(len(a), len(b))`, in characters; two empty strings are equal (1).
///
/// ```
/// assert_eq!(proposal_eval_engine::fuzzy::normalized_levenshtein("abcd", "abcf"), 0.75);
/// ```
pub fn normalized_levenshtein(a: &str, b: &str) -> f64 {
    let (distance, longest) = if a.is_ascii() && b.is_ascii() {
        let distance = levenshtein_ascii(a.as_bytes(), b.as_bytes());
        (distance, a.len().max(b.len()))
    } else {
        let a: Vec<char> = a.chars().collect();
        let b: Vec<char> = b.chars().collect();
        (levenshtein_chars(&a, &b), a.len().max(b.len()))
    };
    if longest == 0 {
        return 1.0;
    }
    1.0 - distance as f64 / longest as f64
}

/// Levenshtein over ASCII bytes: common prefix and suffix compared a word at a time, then one
/// 128-entry table of pattern masks.
fn levenshtein_ascii(a: &[u8], b: &[u8]) -> usize {
    // Common prefix and suffix never cost an edit; stripping them shrinks the work for the
    // typical near-miss (one typo in a name) to a few characters. For such a hit the stripping
    // is most of the work, hence a word at a time.
    let prefix = common_prefix(a, b);
    let (a, b) = (&a[prefix..], &b[prefix..]);
    let suffix = common_suffix(a, b);
    let (a, b) = (&a[..a.len() - suffix], &b[..b.len() - suffix]);
    let (pattern, text) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if pattern.is_empty() {
        return text.len();
    }
    if pattern.len() > 64 {
        return levenshtein_table(pattern, text);
    }
    let mut peq = [0u64; 128];
    for (i, &c) in pattern.iter().enumerate() {
        peq[usize::from(c & 127)] |= 1 << i;
    }
    myers64(
        pattern.len(),
        text.iter().map(|&c| peq[usize::from(c & 127)]),
    )
}

/// Levenshtein over `char`s. Text that is not all ASCII is still mostly ASCII (`Müller GmbH`):
/// those characters get the same 128-entry table as [`levenshtein_ascii`], and only the others
/// are looked up in a list.
fn levenshtein_chars(a: &[char], b: &[char]) -> usize {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let (a, b) = (&a[prefix..], &b[prefix..]);
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (a, b) = (&a[..a.len() - suffix], &b[..b.len() - suffix]);
    let (pattern, text) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if pattern.is_empty() {
        return text.len();
    }
    if pattern.len() > 64 {
        return levenshtein_table(pattern, text);
    }
    let mut ascii = [0u64; 128];
    let mut other: Vec<(char, u64)> = Vec::new();
    for (i, &c) in pattern.iter().enumerate() {
        if c.is_ascii() {
            ascii[c as usize] |= 1 << i;
        } else {
            match other.iter_mut().find(|(k, _)| *k == c) {
                Some((_, mask)) => *mask |= 1 << i,
                None => other.push((c, 1 << i)),
            }
        }
    }
    myers64(
        pattern.len(),
        text.iter().map(|&c| {
            if c.is_ascii() {
                ascii[c as usize]
            } else {
                other
                    .iter()
                    .find(|(k, _)| *k == c)
                    .map_or(0, |(_, mask)| *mask)
            }
        }),
    )
}

/// The length of the longest common prefix of two byte strings, 8 bytes per step.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let mut n = 0;
    for (x, y) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        let diff = word(x) ^ word(y);
        if diff != 0 {
            // Little-endian: the first differing byte holds the lowest set bit.
            return n + (diff.trailing_zeros() / 8) as usize;
        }
        n += 8;
    }
    n + a[n..]
        .iter()
        .zip(&b[n..])
        .take_while(|(x, y)| x == y)
        .count()
}

/// The length of the longest common suffix of two byte strings, 8 bytes per step.
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    let mut n = 0;
    for (x, y) in a.rchunks_exact(8).zip(b.rchunks_exact(8)) {
        let diff = word(x) ^ word(y);
        if diff != 0 {
            // Little-endian: the last differing byte holds the highest set bit.
            return n + (diff.leading_zeros() / 8) as usize;
        }
        n += 8;
    }
    let (a, b) = (&a[..a.len() - n], &b[..b.len() - n]);
    n + a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

fn word(bytes: &[u8]) -> u64 {
    u64::from_le_bytes(bytes.try_into().expect("chunks of 8 bytes"))
}

/// Myers' bit-vector edit distance in Hyyrö's formulation, for a pattern of `m <= 64` elements;
/// `text_masks` yields, per text element, the bit mask of pattern positions holding it.
///
/// The loop is one long dependency chain through `vp` (a 30-character field is 30 trips
/// around it), so it is written for latency rather than in the textbook form. With
/// `s = (eq & vp) + vp`, the textbook steps
///
/// ```text
/// xv = eq | vn;   xh = (s ^ vp) | eq;   ph = vn | !(xh | vp);   mh = vp & xh;
/// ph = ph << 1 | 1;   mh <<= 1;   vp = mh | !(xv | ph);   vn = ph & xv;
/// ```
///
/// are rewritten with `xh | vp = s | vp | eq`, `vp & (s ^ vp) = vp & !s` and
/// `!(ph << 1 | 1) = !ph << 1`, carrying `!vn` instead of `vn`; no step then needs `xh`, and
/// the path from one `vp` to the next shrinks from about ten dependent operations to seven
/// (a 30-character miss: 113 → 93 ns in `benches/field_accuracy.rs`).
fn myers64(m: usize, text_masks: impl Iterator<Item = u64>) -> usize {
    let mut vp: u64 = !0;
    let mut not_vn: u64 = !0;
    let mut score = m;
    let top = m - 1;
    for eq in text_masks {
        let s = (eq & vp).wrapping_add(vp);
        let not_ph = not_vn & (s | vp | eq);
        let mh = vp & (eq | !s);
        let not_xv = !eq & not_vn;
        // The last row moves by +1 (`ph`), -1 (`mh`) or 0; without a branch, since which one
        // is as good as random on real text.
        score += ((!not_ph >> top) & 1) as usize;
        score -= ((mh >> top) & 1) as usize;
        // The top row of the table grows by one per text element: `ph` shifts a 1 in, so its
        // complement shifts a 0 in.
        let not_ph = not_ph << 1;
        vp = (mh << 1) | (not_ph & not_xv);
        not_vn = not_ph | not_xv;
    }
    score
}

/// The classic one-row dynamic programme, for patterns longer than a machine word.
fn levenshtein_table<T: Eq>(a: &[T], b: &[T]) -> usize {
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, x) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, y) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(x != y);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

/// Jaro similarity: matching characters within half the longer length, penalised by
/// transpositions. Two empty strings are equal (1); one empty string matches nothing (0).
///
/// ```
/// let s = proposal_eval_engine::fuzzy::jaro("DWAYNE", "DUANE");
/// assert!((s - 0.8222).abs() < 1e-4);
/// ```
pub fn jaro(a: &str, b: &str) -> f64 {
    if a.is_ascii() && b.is_ascii() && a.len() <= 64 && b.len() <= 64 {
        jaro_ascii64(a.as_bytes(), b.as_bytes())
    } else {
        let a: Vec<char> = a.chars().collect();
        let b: Vec<char> = b.chars().collect();
        jaro_generic(&a, &b)
    }
}

/// Jaro-Winkler similarity: [`jaro`] plus `0.1 × prefix × (1 - jaro)` for a common prefix of up
/// to 4 characters, applied when the Jaro similarity is above 0.7.
///
/// ```
/// let s = proposal_eval_engine::fuzzy::jaro_winkler("DWAYNE", "DUANE");
/// assert!((s - 0.84).abs() < 1e-4);
/// ```
pub fn jaro_winkler(a: &str, b: &str) -> f64 {
    let sim = jaro(a, b);
    if sim <= 0.7 {
        return sim;
    }
    let prefix = a
        .chars()
        .zip(b.chars())
        .take(4)
        .take_while(|(x, y)| x == y)
        .count();
    sim + 0.1 * prefix as f64 * (1.0 - sim)
}

fn jaro_score(matches: usize, transpositions: usize, la: usize, lb: usize) -> f64 {
    if matches == 0 {
        return 0.0;
    }
    let m = matches as f64;
    (m / la as f64 + m / lb as f64 + (matches - transpositions) as f64 / m) / 3.0
}

/// Jaro over ASCII strings of at most 64 bytes: the characters of `b` become bit masks, and
/// finding the first unmatched equal character inside the window is one AND and one
/// trailing-zeros count.
fn jaro_ascii64(a: &[u8], b: &[u8]) -> f64 {
    let (la, lb) = (a.len(), b.len());
    if la == 0 && lb == 0 {
        return 1.0;
    }
    if la == 0 || lb == 0 {
        return 0.0;
    }
    let range = (la.max(lb) / 2).saturating_sub(1);
    let mut pm = [0u64; 128];
    for (j, &c) in b.iter().enumerate() {
        pm[(c & 127) as usize] |= 1 << j;
    }
    let (mut a_flags, mut b_flags) = (0u64, 0u64);
    let mut matches = 0;
    for (i, &c) in a.iter().enumerate() {
        let lo = i.saturating_sub(range);
        let hi = (i + range + 1).min(lb);
        if lo >= hi {
            break;
        }
        // At most 63 bits wide: both strings have at most 64 characters, so `range` is at most
        // 31 and the window at most 2 * 31 + 1.
        let width = hi - lo;
        let window = ((1u64 << width) - 1) << lo;
        let candidates = pm[(c & 127) as usize] & !b_flags & window;
        if candidates != 0 {
            b_flags |= candidates & candidates.wrapping_neg();
            a_flags |= 1 << i;
            matches += 1;
        }
    }
    let mut transpositions = 0;
    let (mut af, mut bf) = (a_flags, b_flags);
    while af != 0 {
        let i = af.trailing_zeros() as usize;
        let j = bf.trailing_zeros() as usize;
        af &= af - 1;
        bf &= bf - 1;
        transpositions += usize::from(a[i] != b[j]);
    }
    jaro_score(matches, transpositions / 2, la, lb)
}

fn jaro_generic<T: Eq>(a: &[T], b: &[T]) -> f64 {
    let (la, lb) = (a.len(), b.len());
    if la == 0 && lb == 0 {
        return 1.0;
    }
    if la == 0 || lb == 0 {
        return 0.0;
    }
    let range = (la.max(lb) / 2).saturating_sub(1);
    let mut a_flags = vec![false; la];
    let mut b_flags = vec![false; lb];
    let mut matches = 0;
    for (i, x) in a.iter().enumerate() {
        let lo = i.saturating_sub(range);
        let hi = (i + range + 1).min(lb);
        for j in lo..hi {
            if !b_flags[j] && b[j] == *x {
                a_flags[i] = true;
                b_flags[j] = true;
                matches += 1;
                break;
            }
        }
    }
    let mut transpositions = 0;
    let mut b_matched = b.iter().zip(&b_flags).filter(|(_, f)| **f).map(|(c, _)| c);
    for (x, _) in a.iter().zip(&a_flags).filter(|(_, f)| **f) {
        if let Some(y) = b_matched.next() {
            transpositions += usize::from(x != y);
        }
    }
    jaro_score(matches, transpositions / 2, la, lb)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levenshtein_known_values() {
        for (a, b, d) in [
            ("", "", 0),
            ("", "abc", 3),
            ("abc", "", 3),
            ("kitten", "sitting", 3),
            ("flaw", "lawn", 2),
            ("ACME Corporation", "ACME Corp.", 7),
            ("Müller GmbH", "Mueller GmbH", 2),
            ("日本語", "日本", 1),
            ("abc", "abc", 0),
        ] {
            assert_eq!(levenshtein(a, b), d, "{a:?} {b:?}");
            assert_eq!(levenshtein(b, a), d, "{b:?} {a:?}");
        }
    }

    /// Lengths are counted in characters whenever either side is not ASCII, not only when both
    /// are: `ü` is two bytes but one character.
    #[test]
    fn normalized_levenshtein_counts_characters_when_one_side_is_not_ascii() {
        for (a, b) in [("Müller", "Muller"), ("Muller", "Müller")] {
            let got = normalized_levenshtein(a, b);
            assert!(
                (got - (1.0 - 1.0 / 6.0)).abs() < 1e-12,
                "{a:?} {b:?}: {got}"
            );
        }
        assert_eq!(normalized_levenshtein("日本", "日本"), 1.0);
        assert_eq!(normalized_levenshtein("日本", "ab"), 0.0);
    }

    /// `name` is the word a config uses for the algorithm: it deserializes to the same variant.
    #[test]
    fn algorithm_names_are_the_config_words() {
        for (algorithm, word) in [
            (Algorithm::Levenshtein, "levenshtein"),
            (Algorithm::JaroWinkler, "jaro_winkler"),
        ] {
            assert_eq!(algorithm.name(), word);
            let read: Algorithm = serde_json::from_value(serde_json::json!(word)).unwrap();
            assert_eq!(read, algorithm);
        }
    }

    /// The widest Jaro window of the bit-parallel path: two strings of 64 characters.
    #[test]
    fn jaro_at_64_characters_agrees_with_the_plain_algorithm() {
        let a = "ab".repeat(32);
        let b = "ba".repeat(31) + "bb";
        for (a, b) in [(&a, &b), (&b, &a), (&a, &a)] {
            let ac: Vec<char> = a.chars().collect();
            let bc: Vec<char> = b.chars().collect();
            assert_eq!(jaro(a, b), jaro_generic(&ac, &bc), "{a} {b}");
        }
    }

    #[test]
    fn long_strings_take_the_table_path_and_agree() {
        let a = "a".repeat(70) + "xyz" + &"b".repeat(70);
        let b = "a".repeat(69) + "xz" + &"b".repeat(72);
        let ac: Vec<char> = a.chars().collect();
        let bc: Vec<char> = b.chars().collect();
        assert_eq!(levenshtein(&a, &b), levenshtein_table(&ac, &bc));
        assert_eq!(levenshtein(&a, &b), 4);
        let a = "ab".repeat(40);
        let b = "ba".repeat(41);
        let ac: Vec<char> = a.chars().collect();
        let bc: Vec<char> = b.chars().collect();
        assert_eq!(levenshtein(&a, &b), levenshtein_table(&ac, &bc));
        assert_eq!(levenshtein(&a, &b), 2);
    }

    #[test]
    fn common_prefix_and_suffix_agree_with_the_plain_count() {
        let base = b"ACME Industrial Supplies GmbH. and some more text";
        for len in 0..base.len() {
            let a = &base[..len];
            for edit in 0..=len {
                let mut b = a.to_vec();
                if edit < len {
                    b[edit] = b'#';
                }
                for b in [&b[..], &b[..edit], &b[edit..]] {
                    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
                    let suffix = a
                        .iter()
                        .rev()
                        .zip(b.iter().rev())
                        .take_while(|(x, y)| x == y)
                        .count();
                    assert_eq!(common_prefix(a, b), prefix, "{a:?} {b:?}");
                    assert_eq!(common_suffix(a, b), suffix, "{a:?} {b:?}");
                }
            }
        }
    }

    #[test]
    fn jaro_known_values() {
        let close = |x: f64, y: f64| (x - y).abs() < 1e-4;
        assert!(close(jaro("MARTHA", "MARHTA"), 0.9444));
        assert!(close(jaro_winkler("MARTHA", "MARHTA"), 0.9611));
        assert!(close(jaro_winkler("DIXON", "DICKSONX"), 0.8133));
        assert_eq!(jaro("", ""), 1.0);
        assert_eq!(jaro("a", ""), 0.0);
        assert_eq!(jaro("abc", "xyz"), 0.0);
    }

    /// A tiny deterministic generator, so the cross-check needs no extra dependency.
    fn lcg(state: &mut u64) -> u64 {
        *state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *state >> 33
    }

    fn random_string(state: &mut u64, alphabet: &[char], max: usize) -> String {
        let len = (lcg(state) as usize) % (max + 1);
        (0..len)
            .map(|_| alphabet[(lcg(state) as usize) % alphabet.len()])
            .collect()
    }

    #[test]
    fn bit_parallel_paths_agree_with_the_plain_algorithms() {
        let ascii: Vec<char> = "abcde ".chars().collect();
        let wide: Vec<char> = "aäbß日 ".chars().collect();
        let mut state = 7;
        for round in 0..4000 {
            let alphabet = if round % 2 == 0 { &ascii } else { &wide };
            let max = if round % 7 == 0 { 90 } else { 40 };
            let a = random_string(&mut state, alphabet, max);
            let b = if round % 3 == 0 {
                // A near miss: `a` with one stretch replaced, so long common prefixes and
                // suffixes are exercised too.
                let chars: Vec<char> = a.chars().collect();
                let cut = (lcg(&mut state) as usize) % (chars.len() + 1);
                let end = (cut + (lcg(&mut state) as usize) % 3).min(chars.len());
                let mut b: String = chars[..cut].iter().collect();
                b.push_str(&random_string(&mut state, alphabet, 2));
                b.extend(&chars[end..]);
                b
            } else {
                random_string(&mut state, alphabet, max)
            };
            let ac: Vec<char> = a.chars().collect();
            let bc: Vec<char> = b.chars().collect();
            assert_eq!(
                levenshtein(&a, &b),
                levenshtein_table(&ac, &bc),
                "{a:?} {b:?}"
            );
            assert_eq!(jaro(&a, &b), jaro_generic(&ac, &bc), "{a:?} {b:?}");
        }
    }
}
