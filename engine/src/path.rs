//! Paths into JSON documents: the one grammar used by `ignore_paths`, transformer keys,
//! field-accuracy fields, and every path the product prints.
//!
//! Grammar: dot-separated keys with `[n]` indices (`invoice.line_items[0].amount`); `[*]` any
//! index, `*` one segment (key or index), `**` zero or more segments; `["a.b"]` quotes a key that
//! holds `.`, `[`, `]`, `*` or `"`; an optional leading `$.` is accepted and `$` alone is the
//! root. A concrete [`Location`] prints in this same grammar, so a path copied from a failure can
//! be pasted into `ignore_paths` as it is.
//!
//! ```
//! use proposal_eval_engine::path::{Location, Pattern};
//! let pattern = Pattern::parse("items[*].sku").unwrap();
//! let location = Location::parse("items[3].sku").unwrap();
//! assert!(pattern.matches(&location));
//! assert_eq!(location.to_string(), "items[3].sku");
//! ```

use serde_json::{Map, Value};
use std::fmt;

/// One step of a concrete location: an object key or an array index.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Segment {
    /// An object key.
    Key(String),
    /// An array index.
    Index(usize),
}

/// One step of a pattern.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PatternSegment {
    /// Exactly this key.
    Key(String),
    /// Exactly this index.
    Index(usize),
    /// `[*]`: any array index.
    AnyIndex,
    /// `*`: any one segment, key or index.
    AnyOne,
    /// `**`: zero or more segments.
    AnyDepth,
}

/// A concrete place in a JSON document (no wildcards).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Location(pub Vec<Segment>);

/// A path pattern, possibly with wildcards, as written in configs and fixtures.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Pattern {
    segments: Vec<PatternSegment>,
    source: String,
}

/// A path that does not follow the grammar, with the byte offset where it goes wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathError {
    /// The path as written.
    pub path: String,
    /// Byte offset in `path` where the problem is.
    pub offset: usize,
    /// What is wrong there.
    pub message: String,
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid path `{}` at character {}: {} (paths look like `a.b[0].c`, `items[*].sku`, `**.timestamp`, `[\"key.with.dots\"]`)",
            self.path,
            self.offset + 1,
            self.message
        )
    }
}

impl std::error::Error for PathError {}

/// The characters of a path still to read, with their byte offsets. The parser takes every step
/// with `next` (or `next_if`) on this one iterator, so it cannot go back or stand still: it ends
/// after at most one step per character, whatever a change to its conditions does.
type Chars<'t> = std::iter::Peekable<std::str::CharIndices<'t>>;

/// The byte offset of the next character, or the end of `text` when none is left.
fn offset(text: &str, chars: &mut Chars<'_>) -> usize {
    chars.peek().map_or(text.len(), |&(at, _)| at)
}

fn parse_segments(text: &str) -> Result<Vec<PatternSegment>, PathError> {
    let err = |offset: usize, message: &str| PathError {
        path: text.to_string(),
        offset,
        message: message.to_string(),
    };
    if text == "$" {
        return Ok(Vec::new());
    }
    // `$.` and `$` before `[` are optional; `$key` is a key.
    let prefix = if text.starts_with("$.") {
        "$."
    } else if text.starts_with("$[") {
        "$"
    } else {
        ""
    };
    let mut chars: Chars<'_> = text.char_indices().peekable();
    for _ in prefix.chars() {
        chars.next();
    }
    if chars.peek().is_none() {
        return Err(err(
            prefix.len(),
            "the path is empty; use `$` for the whole document",
        ));
    }
    let mut segments = Vec::new();
    while let Some((start, c)) = chars.next() {
        let (segment, after) = match c {
            '[' => (
                bracket(text, &mut chars, start).map_err(|(at, m)| err(at, m))?,
                "expected `.` or `[` after `]`",
            ),
            '.' => {
                return Err(err(
                    start,
                    "empty key (two dots in a row, or a leading dot)",
                ))
            }
            ']' => return Err(err(start, "`]` without a matching `[`")),
            _ => {
                while chars
                    .next_if(|&(_, c)| !matches!(c, '.' | '[' | ']'))
                    .is_some()
                {}
                let key = &text[start..offset(text, &mut chars)];
                (
                    bare_key(key).map_err(|m| err(start, m))?,
                    // A bare key stops only at `.`, `[`, `]` or the end.
                    "`]` without a matching `[`",
                )
            }
        };
        segments.push(segment);
        // After a segment: the end, a `[`, or a `.` and then a key.
        match chars.peek() {
            None | Some((_, '[')) => {}
            Some(&(dot, '.')) => {
                chars.next();
                match chars.peek() {
                    None => return Err(err(dot, "the path ends with `.`")),
                    Some(&(at, '[')) => {
                        return Err(err(at, "a `.` must be followed by a key, not `[`"))
                    }
                    Some(_) => {}
                }
            }
            Some(&(at, _)) => return Err(err(at, after)),
        }
    }
    Ok(segments)
}

/// A key written without brackets: `*`, `**`, or a plain key.
fn bare_key(key: &str) -> Result<PatternSegment, &'static str> {
    if key.contains('"') {
        return Err("a key with `\"` must be quoted: [\"...\"]");
    }
    match key {
        "*" => Ok(PatternSegment::AnyOne),
        "**" => Ok(PatternSegment::AnyDepth),
        k if k.contains('*') => Err(
            "`*` stands alone as a segment (partial-key wildcards are not supported); quote a key that holds `*`",
        ),
        k => Ok(PatternSegment::Key(k.to_string())),
    }
}

/// What follows a `[` at `start`, through its `]`: an index, `*`, or a quoted key. An error is
/// its offset and message.
fn bracket(
    text: &str,
    chars: &mut Chars<'_>,
    start: usize,
) -> Result<PatternSegment, (usize, &'static str)> {
    if chars.next_if(|&(_, c)| c == '"').is_some() {
        let mut key = String::new();
        loop {
            match chars.next() {
                None => return Err((start, "unterminated quoted key")),
                Some((_, '"')) => break,
                Some((_, '\\')) => {
                    let escaped = offset(text, chars);
                    match chars.next() {
                        Some((_, c @ ('"' | '\\'))) => key.push(c),
                        _ => {
                            return Err((
                                escaped,
                                "only `\\\"` and `\\\\` may be escaped in a quoted key",
                            ))
                        }
                    }
                }
                Some((_, c)) => key.push(c),
            }
        }
        if chars.next_if(|&(_, c)| c == ']').is_none() {
            return Err((offset(text, chars), "expected `]` after the quoted key"));
        }
        return Ok(PatternSegment::Key(key));
    }
    let inner_start = offset(text, chars);
    let Some((close, _)) = chars.find(|&(_, c)| c == ']') else {
        return Err((start, "unterminated `[`"));
    };
    let inner = &text[inner_start..close];
    if inner == "*" {
        Ok(PatternSegment::AnyIndex)
    } else if !inner.is_empty() && inner.bytes().all(|b| b.is_ascii_digit()) {
        inner
            .parse()
            .map(PatternSegment::Index)
            .map_err(|_| (inner_start, "index is too large"))
    } else {
        Err((
            inner_start,
            "inside `[ ]` write an index (`[0]`), `[*]`, or a quoted key (`[\"a.b\"]`)",
        ))
    }
}

impl Pattern {
    /// Parses a pattern. `$` alone (or an empty segment list) is the whole document.
    pub fn parse(text: &str) -> Result<Pattern, PathError> {
        Ok(Pattern {
            segments: parse_segments(text)?,
            source: text.to_string(),
        })
    }

    /// The segments of the pattern.
    pub fn segments(&self) -> &[PatternSegment] {
        &self.segments
    }

    /// The pattern as it was written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The concrete location this pattern names, if it has no wildcard.
    pub fn as_location(&self) -> Option<Location> {
        self.segments
            .iter()
            .map(|s| match s {
                PatternSegment::Key(k) => Some(Segment::Key(k.clone())),
                PatternSegment::Index(i) => Some(Segment::Index(*i)),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .map(Location)
    }

    /// Whether the pattern matches exactly this location (not a prefix of it).
    pub fn matches(&self, location: &Location) -> bool {
        matches_from(&self.segments, &location.0)
    }

    /// Whether the pattern matches this location or any ancestor of it: that is, whether
    /// ignoring this pattern ignores the location.
    pub fn covers(&self, location: &Location) -> bool {
        (0..=location.0.len()).any(|n| matches_from(&self.segments, &location.0[..n]))
    }

    /// [`matches`](Self::matches) on a borrowed path.
    pub(crate) fn matches_refs(&self, path: &[SegmentRef<'_>]) -> bool {
        matches_from(&self.segments, path)
    }

    /// [`covers`](Self::covers) on a borrowed path.
    pub(crate) fn covers_refs(&self, path: &[SegmentRef<'_>]) -> bool {
        (0..=path.len()).any(|n| matches_from(&self.segments, &path[..n]))
    }

    /// Every existing location in `value` that this pattern matches, in document order.
    pub fn find(&self, value: &Value) -> Vec<Location> {
        let mut out = Vec::new();
        let mut current = Vec::new();
        find_into(&self.segments, value, &mut current, &mut out);
        out.dedup();
        out
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl std::str::FromStr for Pattern {
    type Err = PathError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Pattern::parse(s)
    }
}

impl<'de> serde::Deserialize<'de> for Pattern {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Pattern::parse(&text).map_err(serde::de::Error::custom)
    }
}

impl serde::Serialize for Pattern {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.source)
    }
}

/// A path segment, owned or borrowed, as [`matches_from`] reads it.
trait AsSegment {
    fn view(&self) -> SegmentRef<'_>;
}

impl AsSegment for Segment {
    fn view(&self) -> SegmentRef<'_> {
        match self {
            Segment::Key(k) => SegmentRef::Key(k),
            Segment::Index(i) => SegmentRef::Index(*i),
        }
    }
}

impl AsSegment for SegmentRef<'_> {
    fn view(&self) -> SegmentRef<'_> {
        *self
    }
}

fn segment_matches(pattern: &PatternSegment, segment: &impl AsSegment) -> bool {
    match (pattern, segment.view()) {
        (PatternSegment::Key(p), SegmentRef::Key(k)) => p == k,
        (PatternSegment::Index(p), SegmentRef::Index(i)) => *p == i,
        (PatternSegment::AnyIndex, SegmentRef::Index(_)) => true,
        (PatternSegment::AnyOne, _) => true,
        _ => false,
    }
}

fn matches_from(pattern: &[PatternSegment], path: &[impl AsSegment]) -> bool {
    match pattern.split_first() {
        None => path.is_empty(),
        Some((PatternSegment::AnyDepth, rest)) => {
            (0..=path.len()).any(|skip| matches_from(rest, &path[skip..]))
        }
        Some((first, rest)) => match path.split_first() {
            Some((seg, path_rest)) => segment_matches(first, seg) && matches_from(rest, path_rest),
            None => false,
        },
    }
}

fn find_into(
    pattern: &[PatternSegment],
    value: &Value,
    current: &mut Vec<Segment>,
    out: &mut Vec<Location>,
) {
    let Some((first, rest)) = pattern.split_first() else {
        out.push(Location(current.clone()));
        return;
    };
    if let PatternSegment::AnyDepth = first {
        find_into(rest, value, current, out);
    }
    let mut visit = |seg: Segment, child: &Value, current: &mut Vec<Segment>| {
        if segment_matches(first, &seg) || matches!(first, PatternSegment::AnyDepth) {
            current.push(seg);
            if matches!(first, PatternSegment::AnyDepth) {
                find_into(pattern, child, current, out);
            } else {
                find_into(rest, child, current, out);
            }
            current.pop();
        }
    };
    match value {
        Value::Object(map) => match first {
            PatternSegment::Key(k) => {
                if let Some(child) = map.get(k) {
                    visit(Segment::Key(k.clone()), child, current);
                }
            }
            _ => {
                for (k, child) in map {
                    visit(Segment::Key(k.clone()), child, current);
                }
            }
        },
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                visit(Segment::Index(i), child, current);
            }
        }
        _ => {}
    }
}

pub(crate) fn key_needs_quotes(key: &str, first: bool) -> bool {
    key.is_empty()
        || key.contains(['.', '[', ']', '*', '"', '\\'])
        || (first && key.starts_with('$'))
}

impl Location {
    /// The root of the document.
    pub fn root() -> Location {
        Location(Vec::new())
    }

    /// Parses a concrete location; wildcards are an error.
    pub fn parse(text: &str) -> Result<Location, PathError> {
        let pattern = Pattern::parse(text)?;
        pattern.as_location().ok_or_else(|| PathError {
            path: text.to_string(),
            offset: 0,
            message: "a concrete path may not hold wildcards here".to_string(),
        })
    }

    /// This location extended by one key.
    pub fn key(&self, key: &str) -> Location {
        let mut segments = self.0.clone();
        segments.push(Segment::Key(key.to_string()));
        Location(segments)
    }

    /// This location extended by one index.
    pub fn index(&self, index: usize) -> Location {
        let mut segments = self.0.clone();
        segments.push(Segment::Index(index));
        Location(segments)
    }

    /// The segments of the location.
    pub fn segments(&self) -> &[Segment] {
        &self.0
    }

    /// The value at this location, if there is one.
    pub fn get<'a>(&self, value: &'a Value) -> Option<&'a Value> {
        get(value, &self.0)
    }

    /// The value at this location, mutably.
    pub fn get_mut<'a>(&self, value: &'a mut Value) -> Option<&'a mut Value> {
        let mut node = value;
        for seg in &self.0 {
            node = match (seg, node) {
                (Segment::Key(k), Value::Object(map)) => map.get_mut(k)?,
                (Segment::Index(i), Value::Array(items)) => items.get_mut(*i)?,
                _ => return None,
            };
        }
        Some(node)
    }

    /// Puts `new` at this location, creating missing objects on the way (a `null` on the way
    /// counts as missing). An index replaces an element, or appends when it is the last step
    /// and one past the end.
    ///
    /// Returns `false`, and leaves the document exactly as it was, when the way is blocked: a
    /// scalar or an array where a key follows, anything but an array where an index follows, or
    /// an index past the end. Callers decide what a blocked write means; the strict comparison's
    /// transformers skip it (see [`crate::compare`]).
    ///
    /// ```
    /// use proposal_eval_engine::path::Location;
    /// use serde_json::json;
    /// let mut doc = json!({"items": [1]});
    /// assert!(Location::parse("items[1]").unwrap().set(&mut doc, json!(2)));
    /// assert!(Location::parse("meta.id").unwrap().set(&mut doc, json!("a")));
    /// // No `tags` array to index: nothing is written, not even `tags`.
    /// assert!(!Location::parse("tags[0]").unwrap().set(&mut doc, json!("x")));
    /// assert_eq!(doc, json!({"items": [1, 2], "meta": {"id": "a"}}));
    /// ```
    #[must_use = "a blocked write returns false and writes nothing"]
    pub fn set(&self, value: &mut Value, new: Value) -> bool {
        // Check the whole way before writing anything, so a blocked write leaves no trace.
        if !self.writable(value) {
            return false;
        }
        let mut node = value;
        for seg in &self.0 {
            node = match (seg, node) {
                (Segment::Key(k), node) => object(node).entry(k.clone()).or_insert(Value::Null),
                (Segment::Index(i), Value::Array(items)) => {
                    if *i == items.len() {
                        items.push(Value::Null);
                    }
                    &mut items[*i]
                }
                (Segment::Index(_), _) => unreachable!("`writable` found an array here"),
            };
        }
        *node = new;
        true
    }

    /// Whether [`Location::set`] can write here: the way as `set` walks it, with `None` for a
    /// node it will create.
    fn writable(&self, value: &Value) -> bool {
        let Some((last, parents)) = self.0.split_last() else {
            return true;
        };
        let mut node = Some(value);
        for seg in parents {
            node = match (seg, node) {
                (Segment::Key(k), Some(Value::Object(map))) => map.get(k),
                (Segment::Key(_), None | Some(Value::Null)) => None,
                (Segment::Index(i), Some(Value::Array(items))) if *i < items.len() => {
                    Some(&items[*i])
                }
                _ => return false,
            };
        }
        match (last, node) {
            (Segment::Key(_), None | Some(Value::Null | Value::Object(_))) => true,
            (Segment::Index(i), Some(Value::Array(items))) => *i <= items.len(),
            _ => false,
        }
    }

    /// Removes and returns the value at this location.
    pub fn remove(&self, value: &mut Value) -> Option<Value> {
        let (last, parents) = self.0.split_last()?;
        let parent = Location(parents.to_vec()).get_mut(value)?;
        match (last, parent) {
            (Segment::Key(k), Value::Object(map)) => map.remove(k),
            (Segment::Index(i), Value::Array(items)) if *i < items.len() => Some(items.remove(*i)),
            _ => None,
        }
    }
}

/// `node` as an object, replacing it by an empty one unless it is one (`set` calls this only
/// where `writable` found nothing or `null`).
fn object(node: &mut Value) -> &mut Map<String, Value> {
    if !node.is_object() {
        *node = Value::Object(Map::new());
    }
    match node {
        Value::Object(map) => map,
        _ => unreachable!("made an object above"),
    }
}

/// The value at `path` inside `value`.
pub fn get<'a>(value: &'a Value, path: &[Segment]) -> Option<&'a Value> {
    let mut node = value;
    for seg in path {
        node = match (seg, node) {
            (Segment::Key(k), Value::Object(map)) => map.get(k)?,
            (Segment::Index(i), Value::Array(items)) => items.get(*i)?,
            _ => return None,
        };
    }
    Some(node)
}

/// Writes a location in the path grammar. Shared by [`Location`]'s `Display` and by callers that
/// print a location built from a parent prefix plus one segment, without allocating a new one.
pub(crate) fn write_segments(f: &mut impl fmt::Write, segments: &[Segment]) -> fmt::Result {
    if segments.is_empty() {
        return f.write_str("$");
    }
    for (n, seg) in segments.iter().enumerate() {
        match seg {
            Segment::Index(i) => write!(f, "[{i}]")?,
            Segment::Key(k) if key_needs_quotes(k, n == 0) => {
                f.write_str("[\"")?;
                for c in k.chars() {
                    if c == '"' || c == '\\' {
                        f.write_char('\\')?;
                    }
                    f.write_char(c)?;
                }
                f.write_str("\"]")?;
            }
            Segment::Key(k) => {
                if n > 0 {
                    f.write_char('.')?;
                }
                f.write_str(k)?;
            }
        }
    }
    Ok(())
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_segments(f, &self.0)
    }
}

impl serde::Serialize for Location {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Deserializes a concrete [`Location`] from a path string (for `#[serde(deserialize_with)]`).
pub(crate) fn deserialize_location<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Location, D::Error> {
    let text = <String as serde::Deserialize>::deserialize(deserializer)?;
    Location::parse(&text).map_err(serde::de::Error::custom)
}

/// Like [`deserialize_location`], for an optional field.
pub(crate) fn deserialize_opt_location<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Location>, D::Error> {
    deserialize_location(deserializer).map(Some)
}

/// One step of a location, borrowed from the document being walked: what a tree walk has at
/// hand without allocating a [`Segment`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SegmentRef<'a> {
    /// An object key.
    Key(&'a str),
    /// An array index.
    Index(usize),
}

impl SegmentRef<'_> {
    /// The owned segment.
    pub fn to_segment(self) -> Segment {
        match self {
            SegmentRef::Key(k) => Segment::Key(k.to_string()),
            SegmentRef::Index(i) => Segment::Index(i),
        }
    }
}

impl PatternSegment {
    /// Whether this pattern step accepts the location step (`**` accepts any one step).
    pub fn accepts(&self, segment: SegmentRef<'_>) -> bool {
        match (self, segment) {
            (PatternSegment::Key(p), SegmentRef::Key(k)) => p == k,
            (PatternSegment::Index(p), SegmentRef::Index(i)) => *p == i,
            (PatternSegment::AnyIndex, SegmentRef::Index(_)) => true,
            (PatternSegment::AnyOne | PatternSegment::AnyDepth, _) => true,
            _ => false,
        }
    }
}

/// Where a [`Matcher`] stands at one node of a walk: a range of its state stack, and whether
/// some pattern covers the node (matches it or one of its ancestors).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatchFrame {
    start: u32,
    end: u32,
    /// Whether a pattern matches this node or an ancestor: the node is ignored.
    pub covered: bool,
}

impl MatchFrame {
    /// Whether no pattern can match this node or anything below it.
    pub fn is_dead(&self) -> bool {
        !self.covered && self.start == self.end
    }
}

/// Matches a set of patterns incrementally along a depth-first walk, one step at a time, without
/// allocating per node (an NFA over the patterns' segments, its states kept on one stack).
///
/// ```
/// use proposal_eval_engine::path::{Matcher, Pattern, SegmentRef};
/// let patterns = [Pattern::parse("a.*.c").unwrap(), Pattern::parse("**.ts").unwrap()];
/// let mut m = Matcher::new(&patterns);
/// let root = m.root(0);
/// let a = m.child(root, SegmentRef::Key("a"));
/// let b = m.child(a, SegmentRef::Index(3));
/// let c = m.child(b, SegmentRef::Key("c"));
/// assert!(c.covered);
/// m.truncate(c); // done with `c`: back to `b`
/// let d = m.child(b, SegmentRef::Key("d"));
/// assert!(!d.covered);
/// m.truncate(d);
/// assert!(m.child(b, SegmentRef::Key("ts")).covered);
/// ```
#[derive(Debug)]
pub struct Matcher<'p> {
    patterns: &'p [Pattern],
    /// (pattern index, position in its segments)
    stack: Vec<(u32, u32)>,
}

impl<'p> Matcher<'p> {
    /// A matcher for these patterns.
    pub fn new(patterns: &'p [Pattern]) -> Matcher<'p> {
        Matcher {
            patterns,
            stack: Vec::new(),
        }
    }

    /// The patterns being matched.
    pub fn patterns(&self) -> &'p [Pattern] {
        self.patterns
    }

    /// Clears the stack and starts at the root of a document, skipping `skip` leading segments
    /// of every pattern (they were matched by the caller).
    pub fn root(&mut self, skip: usize) -> MatchFrame {
        self.stack.clear();
        let mut covered = false;
        for p in 0..self.patterns.len() {
            covered |= self.push_closure(p as u32, skip as u32, 0);
        }
        MatchFrame {
            start: 0,
            end: self.stack.len() as u32,
            covered,
        }
    }

    /// Like [`Matcher::root`], for the root of one proposal inside a list at `index`: patterns
    /// that start with an index (`[0].x`, `[*].x`) are read from the list, the others from the
    /// proposal. Without an index every pattern is read from the proposal.
    pub fn proposal_root(&mut self, index: Option<usize>) -> MatchFrame {
        self.stack.clear();
        let mut covered = false;
        for (p, pattern) in self.patterns.iter().enumerate() {
            match (index, pattern.segments().first()) {
                (Some(i), Some(first @ (PatternSegment::Index(_) | PatternSegment::AnyIndex))) => {
                    if first.accepts(SegmentRef::Index(i)) {
                        covered |= self.push_closure(p as u32, 1, 0);
                    }
                }
                _ => covered |= self.push_closure(p as u32, 0, 0),
            }
        }
        MatchFrame {
            start: 0,
            end: self.stack.len() as u32,
            covered,
        }
    }

    /// Steps from `parent` into its child at `segment`, pushing the child's states on top of the
    /// stack: `parent` must be the topmost live frame. Call [`Matcher::truncate`] with the child's
    /// frame when done with it, before stepping into a sibling.
    pub fn child(&mut self, parent: MatchFrame, segment: SegmentRef<'_>) -> MatchFrame {
        let start = self.stack.len() as u32;
        if parent.covered || parent.start == parent.end {
            return MatchFrame {
                start,
                end: start,
                covered: parent.covered,
            };
        }
        let mut covered = false;
        for n in parent.start..parent.end {
            let (p, pos) = self.stack[n as usize];
            let segs = self.patterns[p as usize].segments();
            let seg = &segs[pos as usize];
            if seg.accepts(segment) {
                if matches!(seg, PatternSegment::AnyDepth) {
                    // `**` consumes the step and stays; its closure re-adds what follows it.
                    // That closure never completes the pattern: it would take every segment
                    // after this `**` to be `**` too, and then the closure that put this state
                    // in the parent completed already, so the parent is covered and we returned
                    // above.
                    let complete = self.push_closure(p, pos, start);
                    debug_assert!(!complete, "a `**` state in a frame that is not covered");
                } else {
                    covered |= self.push_closure(p, pos + 1, start);
                }
            }
        }
        MatchFrame {
            start,
            end: self.stack.len() as u32,
            covered,
        }
    }

    /// Drops `frame` and everything pushed after it.
    pub fn truncate(&mut self, frame: MatchFrame) {
        self.stack.truncate(frame.start as usize);
    }

    /// Pushes a state and, through `**`, the states it reaches without consuming a step.
    /// Returns whether some pushed state is complete (the pattern matched).
    fn push_closure(&mut self, p: u32, pos: u32, frame_start: u32) -> bool {
        let segs = self.patterns[p as usize].segments();
        // Bounded by the pattern: each state is one of its segments, taken in order.
        for (at, seg) in segs.iter().enumerate().skip(pos as usize) {
            let state = (p, at as u32);
            if !self.stack[frame_start as usize..].contains(&state) {
                self.stack.push(state);
            }
            if !matches!(seg, PatternSegment::AnyDepth) {
                return false;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn loc(s: &str) -> Location {
        Location::parse(s).unwrap()
    }

    #[test]
    fn parses_the_grammar() {
        use PatternSegment::*;
        let p = Pattern::parse("$.invoice.line_items[0].amount").unwrap();
        assert_eq!(
            p.segments(),
            &[
                Key("invoice".into()),
                Key("line_items".into()),
                Index(0),
                Key("amount".into())
            ]
        );
        let p = Pattern::parse("**.timestamp").unwrap();
        assert_eq!(p.segments(), &[AnyDepth, Key("timestamp".into())]);
        let p = Pattern::parse("items[*].sku").unwrap();
        assert_eq!(
            p.segments(),
            &[Key("items".into()), AnyIndex, Key("sku".into())]
        );
        let p = Pattern::parse("[\"a.b\"].c[\"q\\\"x\"]").unwrap();
        assert_eq!(
            p.segments(),
            &[Key("a.b".into()), Key("c".into()), Key("q\"x".into())]
        );
        let p = Pattern::parse("[0].newValue").unwrap();
        assert_eq!(p.segments(), &[Index(0), Key("newValue".into())]);
        assert_eq!(Pattern::parse("$").unwrap().segments(), &[]);
        assert_eq!(Pattern::parse("$[2]").unwrap().segments(), &[Index(2)]);
        assert_eq!(
            Pattern::parse("a[0][1]").unwrap().segments(),
            &[Key("a".into()), Index(0), Index(1)]
        );
    }

    #[test]
    fn rejects_malformed_paths_with_a_position() {
        for (bad, offset) in [
            ("a..b", 2),
            (".a", 0),
            ("a.", 1),
            ("a[x]", 2),
            ("a[0", 1),
            ("a]", 1),
            ("a.b*", 2),
            ("", 0),
            ("a.[0]", 2),
            ("[\"a", 0),
            ("a[0]b", 4),
        ] {
            let e = Pattern::parse(bad).unwrap_err();
            assert_eq!(e.offset, offset, "{bad}: {e}");
            assert!(e.to_string().contains(bad), "{e}");
        }
    }

    #[test]
    fn display_round_trips() {
        for s in [
            "a.b[0].c",
            "[0].newValue",
            "[\"a.b\"].c",
            "x[\"*\"]",
            "$",
            "[\"$ref\"]",
            "a[\"\"]",
            "a[\"q\\\"\"]",
        ] {
            let l = loc(s);
            assert_eq!(l.to_string(), s);
            assert_eq!(loc(&l.to_string()), l);
        }
    }

    #[test]
    fn wildcards_match() {
        let p = |s| Pattern::parse(s).unwrap();
        assert!(
            p("mutationVariables.metadata.*").matches(&loc("mutationVariables.metadata.requestId"))
        );
        assert!(!p("mutationVariables.metadata.*").matches(&loc("mutationVariables.metadata")));
        assert!(p("**.timestamp").matches(&loc("timestamp")));
        assert!(p("**.timestamp").matches(&loc("a.b[3].timestamp")));
        assert!(!p("**.timestamp").matches(&loc("a.timestamp.x")));
        assert!(p("**.timestamp").covers(&loc("a.timestamp.x")));
        assert!(p("items[*].sku").matches(&loc("items[4].sku")));
        assert!(!p("items[*].sku").matches(&loc("items.x.sku")));
        assert!(p("items.*.sku").matches(&loc("items.x.sku")));
        assert!(p("items.*.sku").matches(&loc("items[1].sku")));
        assert!(p("a.**").matches(&loc("a")));
        assert!(p("a.**.z").matches(&loc("a.b.c.z")));
        assert!(p("$").matches(&Location::root()));
    }

    #[test]
    fn find_expands_wildcards_against_a_document() {
        let doc = json!({"items": [{"sku": 1}, {"x": 2}, {"sku": 3}], "meta": {"sku": 4}});
        let found: Vec<String> = Pattern::parse("items[*].sku")
            .unwrap()
            .find(&doc)
            .iter()
            .map(|l| l.to_string())
            .collect();
        assert_eq!(found, ["items[0].sku", "items[2].sku"]);
        let found: Vec<String> = Pattern::parse("**.sku")
            .unwrap()
            .find(&doc)
            .iter()
            .map(|l| l.to_string())
            .collect();
        assert_eq!(found, ["items[0].sku", "items[2].sku", "meta.sku"]);
    }

    #[test]
    fn every_error_names_its_place_and_its_fix() {
        for (bad, offset, message) in [
            ("", 0, "the path is empty; use `$` for the whole document"),
            ("$.", 2, "the path is empty; use `$` for the whole document"),
            ("a..b", 2, "empty key (two dots in a row, or a leading dot)"),
            (".a", 0, "empty key (two dots in a row, or a leading dot)"),
            ("a.", 1, "the path ends with `.`"),
            ("a[0].", 4, "the path ends with `.`"),
            ("a.[0]", 2, "a `.` must be followed by a key, not `[`"),
            ("a[0].[1]", 5, "a `.` must be followed by a key, not `[`"),
            ("a]", 1, "`]` without a matching `[`"),
            ("]", 0, "`]` without a matching `[`"),
            ("a[0]b", 4, "expected `.` or `[` after `]`"),
            ("a[0]]", 4, "expected `.` or `[` after `]`"),
            ("a[0", 1, "unterminated `[`"),
            ("x.y[", 3, "unterminated `[`"),
            ("a[\"b", 1, "unterminated quoted key"),
            ("a[\"b\"", 5, "expected `]` after the quoted key"),
            ("a[\"b\"c]", 5, "expected `]` after the quoted key"),
            ("[\"a\\x\"]", 4, "only `\\\"` and `\\\\` may be escaped in a quoted key"),
            ("[\"a\\", 4, "only `\\\"` and `\\\\` may be escaped in a quoted key"),
            ("a[x]", 2, "inside `[ ]` write an index (`[0]`), `[*]`, or a quoted key (`[\"a.b\"]`)"),
            ("a[]", 2, "inside `[ ]` write an index (`[0]`), `[*]`, or a quoted key (`[\"a.b\"]`)"),
            ("a[-1]", 2, "inside `[ ]` write an index (`[0]`), `[*]`, or a quoted key (`[\"a.b\"]`)"),
            ("a[99999999999999999999999]", 2, "index is too large"),
            ("a.b\"c", 2, "a key with `\"` must be quoted: [\"...\"]"),
            ("a.b*", 2, "`*` stands alone as a segment (partial-key wildcards are not supported); quote a key that holds `*`"),
            ("ü.***", 3, "`*` stands alone as a segment (partial-key wildcards are not supported); quote a key that holds `*`"),
        ] {
            let e = Pattern::parse(bad).unwrap_err();
            assert_eq!((e.offset, e.message.as_str()), (offset, message), "{bad:?}");
            assert_eq!(e.path, bad);
        }
        // The printed position counts from 1, and the grammar is shown as a reminder.
        assert_eq!(
            Pattern::parse("a..b").unwrap_err().to_string(),
            "invalid path `a..b` at character 3: empty key (two dots in a row, or a leading dot) \
             (paths look like `a.b[0].c`, `items[*].sku`, `**.timestamp`, `[\"key.with.dots\"]`)"
        );
        let e = Location::parse("items[*].sku").unwrap_err();
        assert_eq!(
            (e.offset, e.message.as_str(), e.path.as_str()),
            (
                0,
                "a concrete path may not hold wildcards here",
                "items[*].sku"
            )
        );
        assert!("a..b".parse::<Pattern>().is_err());
    }

    #[test]
    fn a_pattern_prints_and_serializes_as_it_was_written() {
        for written in ["$.a[*].b", "**.ts", "a[\"x.y\"]", "$", "[0].newValue"] {
            let p: Pattern = written.parse().unwrap();
            assert_eq!(p, Pattern::parse(written).unwrap());
            assert_eq!(p.to_string(), written);
            assert_eq!(p.as_str(), written);
            assert_eq!(serde_json::to_value(&p).unwrap(), json!(written));
            let back: Pattern = serde_json::from_value(json!(written)).unwrap();
            assert_eq!(back, p);
        }
        let e = serde_json::from_value::<Pattern>(json!("a..b")).unwrap_err();
        assert!(
            e.to_string().contains("invalid path `a..b` at character 3"),
            "{e}"
        );
        assert_eq!(
            serde_json::to_value(loc("$.a[2][\"b.c\"]")).unwrap(),
            json!("a[2][\"b.c\"]")
        );
    }

    #[test]
    fn concrete_indices_in_patterns() {
        let p = Pattern::parse("items[1].sku").unwrap();
        assert!(p.matches(&loc("items[1].sku")));
        assert!(!p.matches(&loc("items[0].sku")));
        assert!(!p.matches(&loc("items[2].sku")));
        assert!(!p.matches(&loc("items.x.sku")), "an index is not a key");
        assert!(p.covers(&loc("items[1].sku.x")));
        assert!(!p.covers(&loc("items[0].sku.x")));
        assert_eq!(p.as_location(), Some(loc("items[1].sku")));
        assert_eq!(Pattern::parse("items[*].sku").unwrap().as_location(), None);
        let doc = json!({"items": [{"sku": 1}, {"sku": 2}], "x": {"1": 3}});
        assert_eq!(p.find(&doc), [loc("items[1].sku")]);
        assert_eq!(Pattern::parse("x[1]").unwrap().find(&doc), []);
        assert!(PatternSegment::Index(1).accepts(SegmentRef::Index(1)));
        assert!(!PatternSegment::Index(1).accepts(SegmentRef::Index(0)));
        assert!(!PatternSegment::Index(1).accepts(SegmentRef::Key("1")));
    }

    #[test]
    fn locations_extend_by_key_and_index() {
        let base = loc("a");
        assert_eq!(base.key("b"), loc("a.b"));
        assert_eq!(base.index(2), loc("a[2]"));
        assert_eq!(base.index(2).key("c.d").to_string(), "a[2][\"c.d\"]");
        assert_eq!(Location::root().index(0).to_string(), "[0]");
        assert_eq!(base, loc("a"), "extending does not change the original");
        assert_eq!(base.segments(), &[Segment::Key("a".into())]);
        assert_eq!(Segment::Index(3).clone(), SegmentRef::Index(3).to_segment());
        assert_eq!(Segment::Key("k".into()), SegmentRef::Key("k").to_segment());
    }

    #[test]
    fn set_replaces_or_appends_by_index() {
        let mut doc = json!({"a": [1, 2]});
        assert!(loc("a[0]").set(&mut doc, json!(9)));
        assert_eq!(doc, json!({"a": [9, 2]}));
        assert!(
            loc("a[2]").set(&mut doc, json!(3)),
            "one past the end appends"
        );
        assert_eq!(doc, json!({"a": [9, 2, 3]}));
        for blocked in [
            "a[4]", "a[3].x", "a[5].x", "a.x", "a[0].x", "a[0][0]", "b[0]", "b.c[0]",
        ] {
            let before = doc.clone();
            assert!(!loc(blocked).set(&mut doc, json!(1)), "{blocked}");
            assert_eq!(doc, before, "{blocked} left a trace");
        }
        assert!(loc("a[1]").set(&mut doc, json!({})));
        assert!(loc("a[1].x.y").set(&mut doc, json!(true)));
        assert_eq!(doc, json!({"a": [9, {"x": {"y": true}}, 3]}));
        let mut list = json!([[0]]);
        assert!(loc("[0][1]").set(&mut list, json!(1)));
        assert_eq!(list, json!([[0, 1]]));
    }

    #[test]
    fn set_through_missing_and_null() {
        // The bug this guards: the key was created before the index failed.
        let mut doc = json!({});
        assert!(!loc("x[0]").set(&mut doc, json!(1)));
        assert_eq!(doc, json!({}));
        let mut doc = json!({"a": null, "n": 1});
        assert!(!loc("a.b[0]").set(&mut doc, json!(1)));
        assert!(!loc("a[0]").set(&mut doc, json!(1)), "null is not an array");
        assert!(!loc("n.x").set(&mut doc, json!(1)));
        assert_eq!(doc, json!({"a": null, "n": 1}));
        assert!(loc("a.b.c").set(&mut doc, json!(1)));
        assert_eq!(doc, json!({"a": {"b": {"c": 1}}, "n": 1}));
        let mut null = Value::Null;
        assert!(loc("k").set(&mut null, json!(2)));
        assert_eq!(null, json!({"k": 2}));
        let mut scalar = json!(5);
        assert!(Location::root().set(&mut scalar, json!([1])));
        assert_eq!(scalar, json!([1]));
        assert!(
            !loc("k").set(&mut scalar, json!(2)),
            "an array takes no key"
        );
        assert_eq!(scalar, json!([1]));
    }

    #[test]
    fn remove_and_get_mut_by_index() {
        let mut doc = json!({"a": [1, {"b": 2}, 3]});
        *loc("a[1].b").get_mut(&mut doc).unwrap() = json!(20);
        *loc("a[0]").get_mut(&mut doc).unwrap() = json!(10);
        assert_eq!(doc, json!({"a": [10, {"b": 20}, 3]}));
        assert_eq!(loc("a[3]").get_mut(&mut doc), None);
        assert_eq!(loc("a.b").get_mut(&mut doc), None);
        assert_eq!(loc("a[0][0]").get_mut(&mut doc), None);
        assert_eq!(loc("a[0]").remove(&mut doc), Some(json!(10)));
        assert_eq!(doc, json!({"a": [{"b": 20}, 3]}), "later elements move up");
        assert_eq!(loc("a[2]").remove(&mut doc), None);
        assert_eq!(loc("a.x").remove(&mut doc), None, "no key in an array");
        assert_eq!(loc("a[0].b[0]").remove(&mut doc), None);
        assert_eq!(loc("a[1]").remove(&mut doc), Some(json!(3)));
        assert_eq!(Location::root().remove(&mut doc), None);
        assert_eq!(doc, json!({"a": [{"b": 20}]}));
    }

    #[test]
    fn get_set_remove() {
        let mut doc = json!({"a": {"b": [1, 2]}});
        assert_eq!(loc("a.b[1]").get(&doc), Some(&json!(2)));
        assert_eq!(loc("a.b[2]").get(&doc), None);
        assert!(loc("a.c.d").set(&mut doc, json!(5)));
        assert_eq!(doc["a"]["c"]["d"], json!(5));
        assert!(loc("a.b[0]").set(&mut doc, json!(9)));
        assert_eq!(doc["a"]["b"], json!([9, 2]));
        assert!(!loc("a.b[5].x").set(&mut doc, json!(1)));
        assert!(!loc("a.c.d.e").set(&mut doc, json!(1)), "scalar in the way");
        assert_eq!(loc("a.c.d").remove(&mut doc), Some(json!(5)));
        assert_eq!(loc("a.c.d").remove(&mut doc), None);
    }

    #[test]
    fn a_frame_below_an_ignored_node_stays_ignored_and_a_dead_one_is_dead() {
        let patterns = [Pattern::parse("a").unwrap(), Pattern::parse("a.b").unwrap()];
        let mut m = Matcher::new(&patterns);
        assert_eq!(m.patterns().len(), 2);
        let root = m.root(0);
        assert!(!root.covered && !root.is_dead());
        let a = m.child(root, SegmentRef::Key("a"));
        // Covered by `a`, with `a.b` still live below it.
        assert!(a.covered && !a.is_dead());
        let c = m.child(a, SegmentRef::Key("c"));
        assert!(c.covered, "below an ignored node everything is ignored");
        m.truncate(c);
        m.truncate(a);
        let x = m.child(root, SegmentRef::Key("x"));
        assert!(!x.covered && x.is_dead(), "no pattern can match below `x`");
        assert!(m.child(x, SegmentRef::Key("b")).is_dead());
        // Skipping leading segments: `a.b` from `b`.
        let root = m.root(1);
        assert!(
            root.covered,
            "`a` with one segment skipped matches the root"
        );
    }

    /// `truncate` drops the child's states, so a walk keeps at most one frame per level on the
    /// stack however many siblings it visits.
    #[test]
    fn truncate_keeps_the_stack_to_the_current_branch() {
        let patterns = [Pattern::parse("**.ts").unwrap()];
        let mut m = Matcher::new(&patterns);
        let root = m.root(0);
        let height = m.stack.len();
        for i in 0..100 {
            let child = m.child(root, SegmentRef::Index(i));
            assert!(m.stack.len() > height);
            m.truncate(child);
            assert_eq!(m.stack.len(), height, "after sibling {i}");
        }
    }

    #[test]
    fn incremental_matcher_agrees_with_covers() {
        let patterns: Vec<Pattern> = [
            "a.*.c",
            "**.ts",
            "x[*]",
            "[1].y",
            "a.**.z",
            "**",
            "$",
            "q.**.**.r",
        ]
        .iter()
        .map(|s| Pattern::parse(s).unwrap())
        .collect();
        let locations = [
            "a.b.c", "a[2].c", "a.b.d", "ts", "m.n.ts", "m.ts.k", "x[3]", "x.k", "y", "a.z",
            "a.b.z.w", "q.r", "q.a.b.r", "q.a",
        ];
        for n in 0..patterns.len() {
            let set = &patterns[n..=n];
            let mut m = Matcher::new(set);
            for l in locations {
                let l = loc(l);
                let mut frame = m.root(0);
                for seg in l.segments() {
                    let r = match seg {
                        Segment::Key(k) => SegmentRef::Key(k),
                        Segment::Index(i) => SegmentRef::Index(*i),
                    };
                    frame = m.child(frame, r);
                }
                assert_eq!(
                    frame.covered,
                    set[0].covers(&l),
                    "{} on {l}",
                    set[0].as_str()
                );
            }
        }
        // Index-first patterns are read from the list when a proposal index is given.
        let set = [
            Pattern::parse("[1].y").unwrap(),
            Pattern::parse("y2").unwrap(),
        ];
        let mut m = Matcher::new(&set);
        let root = m.proposal_root(Some(1));
        assert!(m.child(root, SegmentRef::Key("y")).covered);
        assert!(m.child(root, SegmentRef::Key("y2")).covered);
        let root = m.proposal_root(Some(0));
        assert!(!m.child(root, SegmentRef::Key("y")).covered);
        assert!(m.child(root, SegmentRef::Key("y2")).covered);
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        fn document() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![Just(Value::Null), (0..3i64).prop_map(Value::from)];
            leaf.prop_recursive(3, 16, 3, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                    prop::collection::btree_map(prop::sample::select(vec!["a", "b"]), inner, 0..3)
                        .prop_map(|m| {
                            Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
                        }),
                ]
            })
        }

        fn location() -> impl Strategy<Value = Location> {
            let segment = prop_oneof![
                prop::sample::select(vec!["a", "b"]).prop_map(|k| Segment::Key(k.into())),
                (0..4usize).prop_map(Segment::Index),
            ];
            prop::collection::vec(segment, 0..4).prop_map(Location)
        }

        proptest! {
            /// The contract of `set`: it writes and `get` finds the value, or it returns false
            /// and the document is as it was.
            #[test]
            fn a_write_lands_or_changes_nothing(
                mut doc in document(),
                location in location(),
                new in (10..13i64).prop_map(Value::from),
            ) {
                let before = doc.clone();
                if location.set(&mut doc, new.clone()) {
                    prop_assert_eq!(location.get(&doc), Some(&new));
                } else {
                    prop_assert_eq!(&doc, &before);
                }
            }

            /// What `get` finds, `set` can write again without changing anything else.
            #[test]
            fn writing_what_is_there_changes_nothing(doc in document(), location in location()) {
                if let Some(found) = location.get(&doc).cloned() {
                    let mut copy = doc.clone();
                    prop_assert!(location.set(&mut copy, found));
                    prop_assert_eq!(copy, doc);
                }
            }

            /// A location prints in the grammar and parses back to itself.
            #[test]
            fn printed_locations_parse_back(location in location()) {
                prop_assert_eq!(Location::parse(&location.to_string()).unwrap(), location);
            }
        }
    }
}
