//! The glob language of `sources` (suite and case), matched without compiling a regex.
//!
//! Written here rather than taken from a glob crate: under nextest every test is its own
//! process, and compiling a pattern into a regex (globset) in each of them was the largest part
//! of a replayed case's CPU time (callgrind, bench/suite-scale: ~1.0M of 3.06M instructions per
//! process). The language is small enough to match directly, one path segment at a time.
//!
//! - `*` any characters within one segment, `?` one character;
//! - `**` as a whole segment: any number of folders, none included;
//! - `[abc]`, `[a-z]`, `[!a-z]` / `[^a-z]` one character of a class (a `]` right after the
//!   opening bracket belongs to the class);
//! - `{a,b}` alternatives, which may hold `/` and nest;
//! - `\` escapes the next character.

use std::fmt;

/// A parsed pattern: one or more alternatives (after `{a,b}` expansion), each a list of
/// segments.
#[derive(Debug)]
pub struct Glob {
    alternatives: Vec<Vec<Segment>>,
}

#[derive(Debug, PartialEq)]
enum Segment {
    /// `**`: any number of segments.
    AnyDepth,
    /// One segment's worth of tokens.
    Part(Vec<Token>),
}

#[derive(Debug, PartialEq)]
enum Token {
    Char(char),
    /// `?`
    One,
    /// `*`
    Many,
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
}

/// Why a pattern is not a glob.
#[derive(Debug, PartialEq, Eq)]
pub struct GlobError(&'static str);

impl fmt::Display for GlobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// More alternatives than any real `sources` entry needs; `{a,b}{c,d}...` grows exponentially.
const MAX_ALTERNATIVES: usize = 256;

impl Glob {
    pub fn parse(pattern: &str) -> Result<Glob, GlobError> {
        let chars: Vec<char> = pattern.chars().collect();
        let alternatives = expand(&chars)?
            .iter()
            .map(|alternative| segments(alternative))
            .collect::<Result<_, _>>()?;
        Ok(Glob { alternatives })
    }

    /// Whether `path` (`/`-separated, relative) matches.
    pub fn is_match(&self, path: &str) -> bool {
        let parts: Vec<&str> = path.split('/').collect();
        self.alternatives
            .iter()
            .any(|segments| match_segments(segments, &parts))
    }
}

/// Expands `{a,b}` alternatives (nested ones too) into plain patterns.
fn expand(chars: &[char]) -> Result<Vec<Vec<char>>, GlobError> {
    let Some(open) = find_unescaped(chars, 0, |c| c == '{')? else {
        if find_unescaped(chars, 0, |c| c == '}')?.is_some() {
            return Err(GlobError("a `}` without its `{`; escape it as `\\}`"));
        }
        return Ok(vec![chars.to_vec()]);
    };
    // The matching `}` and the top-level commas between.
    let mut depth = 0;
    let mut commas = Vec::new();
    let mut close = None;
    let mut at = open + 1;
    while let Some(i) = find_unescaped(chars, at, |c| matches!(c, '{' | '}' | ','))? {
        match chars[i] {
            '{' => depth += 1,
            '}' if depth == 0 => {
                close = Some(i);
                break;
            }
            '}' => depth -= 1,
            _ if depth == 0 => commas.push(i),
            _ => {}
        }
        at = i + 1;
    }
    let close = close.ok_or(GlobError("a `{` without its `}`"))?;
    let mut bounds = vec![open];
    bounds.extend(commas);
    bounds.push(close);
    let mut out = Vec::new();
    for pair in bounds.windows(2) {
        let mut alternative = chars[..open].to_vec();
        alternative.extend_from_slice(&chars[pair[0] + 1..pair[1]]);
        alternative.extend_from_slice(&chars[close + 1..]);
        out.extend(expand(&alternative)?);
        if out.len() > MAX_ALTERNATIVES {
            return Err(GlobError("more than 256 alternatives"));
        }
    }
    Ok(out)
}

/// The first index from `from` of a character `want` accepts that is neither escaped nor inside
/// a `[...]` class.
fn find_unescaped(
    chars: &[char],
    from: usize,
    want: impl Fn(char) -> bool,
) -> Result<Option<usize>, GlobError> {
    let mut i = from;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '[' => i = class_end(chars, i)? + 1,
            c if want(c) => return Ok(Some(i)),
            _ => i += 1,
        }
    }
    Ok(None)
}

/// The index of the `]` closing the class that opens at `open`.
fn class_end(chars: &[char], open: usize) -> Result<usize, GlobError> {
    let mut i = open + 1;
    if matches!(chars.get(i), Some('!' | '^')) {
        i += 1;
    }
    // A `]` first in the class is one of its characters.
    if chars.get(i) == Some(&']') {
        i += 1;
    }
    while i < chars.len() {
        match chars[i] {
            ']' => return Ok(i),
            '\\' => i += 2,
            _ => i += 1,
        }
    }
    Err(GlobError("a `[` without its `]`"))
}

fn segments(chars: &[char]) -> Result<Vec<Segment>, GlobError> {
    chars
        .split(|&c| c == '/')
        .map(|segment| {
            if segment == ['*', '*'] {
                return Ok(Segment::AnyDepth);
            }
            tokens(segment).map(Segment::Part)
        })
        .collect()
}

fn tokens(chars: &[char]) -> Result<Vec<Token>, GlobError> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' => {
                let escaped = chars
                    .get(i + 1)
                    .ok_or(GlobError("a `\\` at the end escapes nothing"))?;
                out.push(Token::Char(*escaped));
                i += 2;
            }
            '*' if chars.get(i + 1) == Some(&'*') => {
                return Err(GlobError(
                    "`**` must be a whole path segment, as in `prompts/**/*.md`",
                ));
            }
            '*' => {
                out.push(Token::Many);
                i += 1;
            }
            '?' => {
                out.push(Token::One);
                i += 1;
            }
            '[' => {
                let end = class_end(chars, i)?;
                out.push(class(&chars[i + 1..end]));
                i = end + 1;
            }
            c => {
                out.push(Token::Char(c));
                i += 1;
            }
        }
    }
    Ok(out)
}

/// The inside of `[...]`, already known to be closed.
fn class(mut inside: &[char]) -> Token {
    let negated = matches!(inside.first(), Some('!' | '^'));
    if negated {
        inside = &inside[1..];
    }
    let mut singles = Vec::new();
    let mut i = 0;
    while i < inside.len() {
        let c = if inside[i] == '\\' && i + 1 < inside.len() {
            i += 1;
            inside[i]
        } else {
            inside[i]
        };
        singles.push(c);
        i += 1;
    }
    let mut ranges = Vec::new();
    let mut j = 0;
    while j < singles.len() {
        if j + 2 < singles.len() && singles[j + 1] == '-' {
            ranges.push((singles[j], singles[j + 2]));
            j += 3;
        } else {
            ranges.push((singles[j], singles[j]));
            j += 1;
        }
    }
    Token::Class { negated, ranges }
}

/// `**` over whole segments, backtracking to the last `**` as `*` does within a segment.
fn match_segments(pattern: &[Segment], parts: &[&str]) -> bool {
    let (mut p, mut s) = (0, 0);
    let mut resume: Option<(usize, usize)> = None;
    while s < parts.len() {
        match pattern.get(p) {
            Some(Segment::AnyDepth) => {
                resume = Some((p, s));
                p += 1;
            }
            Some(Segment::Part(tokens)) if match_tokens(tokens, parts[s]) => {
                p += 1;
                s += 1;
            }
            _ => match resume {
                Some((at, from)) => {
                    resume = Some((at, from + 1));
                    p = at + 1;
                    s = from + 1;
                }
                None => return false,
            },
        }
    }
    pattern[p..]
        .iter()
        .all(|segment| *segment == Segment::AnyDepth)
}

fn match_tokens(tokens: &[Token], text: &str) -> bool {
    let text: Vec<char> = text.chars().collect();
    let (mut t, mut c) = (0, 0);
    let mut resume: Option<(usize, usize)> = None;
    while c < text.len() {
        let step = match tokens.get(t) {
            Some(Token::Many) => {
                resume = Some((t, c));
                t += 1;
                continue;
            }
            Some(Token::Char(want)) => *want == text[c],
            Some(Token::One) => true,
            Some(Token::Class { negated, ranges }) => {
                ranges.iter().any(|&(lo, hi)| (lo..=hi).contains(&text[c])) != *negated
            }
            None => false,
        };
        if step {
            t += 1;
            c += 1;
        } else if let Some((at, from)) = resume {
            resume = Some((at, from + 1));
            t = at + 1;
            c = from + 1;
        } else {
            return false;
        }
    }
    tokens[t..].iter().all(|token| *token == Token::Many)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, path: &str) -> bool {
        Glob::parse(pattern).unwrap().is_match(path)
    }

    #[test]
    fn wildcards_stay_within_a_segment() {
        assert!(matches("prompts/*.md", "prompts/a.md"));
        assert!(matches("prompts/*.md", "prompts/.md"));
        assert!(!matches("prompts/*.md", "prompts/x/a.md"));
        assert!(!matches("prompts/*.md", "prompts/a.mdx"));
        assert!(matches("p/a?.md", "p/ab.md"));
        assert!(!matches("p/a?.md", "p/a.md"));
        assert!(matches("p/*a*b*", "p/xxaxxbxx"));
        assert!(!matches("p/*a*b", "p/xxbxxa"));
        assert!(matches("p/ü?.md", "p/üß.md"));
    }

    #[test]
    fn any_depth() {
        for path in ["prompts/a.md", "prompts/x/a.md", "prompts/x/y/a.md"] {
            assert!(matches("prompts/**/*.md", path), "{path}");
        }
        assert!(!matches("prompts/**/*.md", "other/a.md"));
        assert!(matches("**/a.md", "a.md"));
        assert!(matches("**/a.md", "x/y/a.md"));
        assert!(matches("prompts/**", "prompts/x/y"));
        assert!(matches("a/**/b/**/c", "a/x/b/y/z/c"));
        assert!(matches("a/**/b/c", "a/b/x/b/c"));
        assert!(!matches("a/**/b/c", "a/b/x/c"));
    }

    #[test]
    fn classes_alternatives_and_escapes() {
        assert!(matches("p/a[a-c].md", "p/ab.md"));
        assert!(!matches("p/a[a-c].md", "p/ad.md"));
        assert!(matches("p/a[!a-c].md", "p/ad.md"));
        assert!(matches("p/a[^a-c].md", "p/ad.md"));
        assert!(matches("p/[]x]", "p/]"));
        assert!(matches("p/[a-]", "p/-"));
        assert!(matches("p/{a,ab}.md", "p/a.md"));
        assert!(matches("p/{a,ab}.md", "p/ab.md"));
        assert!(!matches("p/{a,ab}.md", "p/b.md"));
        assert!(matches("{p/a,q/**}/*.md", "q/x/y.md"));
        assert!(matches("p/{a,b{c,d}}.md", "p/bd.md"));
        assert!(matches("p/{,x}a", "p/a"));
        assert!(matches(r"p/\*.md", "p/*.md"));
        assert!(!matches(r"p/\*.md", "p/a.md"));
        assert!(matches(r"p/\{a\}", "p/{a}"));
        assert!(matches("p/[{]", "p/{"));
    }

    #[test]
    fn errors() {
        let error = |pattern: &str| Glob::parse(pattern).unwrap_err().to_string();
        assert!(error("p/[a.md").contains("`[` without"));
        assert!(error("p/{a,b.md").contains("`{` without"));
        assert!(error("p/a}.md").contains("`}` without"));
        assert!(error("p/a**.md").contains("whole path segment"));
        assert!(error("p/a\\").contains("escapes nothing"));
        assert!(error(&"{a,b}".repeat(9)).contains("alternatives"));
    }

    /// Every pattern of up to four characters over the language's own symbols either parses or
    /// is refused, and matching what parses ends: no panic, no endless loop.
    #[test]
    fn every_short_pattern_parses_or_is_refused() {
        let alphabet: Vec<char> = "*?[]{},\\!-a/".chars().collect();
        let paths = ["", "a", "a/a", "-", "a/b/a", "*", "{a}"];
        let mut pattern = Vec::new();
        fn each(alphabet: &[char], pattern: &mut Vec<char>, left: usize, paths: &[&str]) {
            let text: String = pattern.iter().collect();
            if let Ok(glob) = Glob::parse(&text) {
                for path in paths {
                    glob.is_match(path);
                }
            }
            if left == 0 {
                return;
            }
            for &c in alphabet {
                pattern.push(c);
                each(alphabet, pattern, left - 1, paths);
                pattern.pop();
            }
        }
        each(&alphabet, &mut pattern, 4, &paths);
    }
}
