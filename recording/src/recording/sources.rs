//! A recording's sources: the files whose content it was made from, how they are hashed and
//! found (globs), and how a recorded set differs from the current one.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;
use std::path::{Path, PathBuf};

/// One source file of a recording.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    /// Crate-relative, `/`-separated.
    pub path: String,
    /// Lowercase hex SHA-256 of the content, with CRLF read as LF.
    pub sha256: String,
    /// Length of the content in bytes, with CRLF read as LF.
    pub bytes: u64,
}

/// SHA-256 (lowercase hex) and length of `content`, with CRLF read as LF, so a checkout with
/// Windows line endings does not make every recording stale.
pub fn hash_content(content: &[u8]) -> (String, u64) {
    let mut hasher = ContentHasher::default();
    hasher.update(content);
    hasher.finish()
}

/// [`hash_content`] of content given in pieces (a writer that serializes into it), so that
/// what is hashed is never built whole in memory: a CR that ends one piece is held until the
/// next one shows whether an LF follows it.
#[derive(Default)]
pub struct ContentHasher {
    sha: Sha256,
    length: u64,
    /// The last piece ended with a CR, not hashed yet.
    held_cr: bool,
}

impl ContentHasher {
    pub fn update(&mut self, piece: &[u8]) {
        let Some((&last, body)) = piece.split_last() else {
            return;
        };
        if std::mem::take(&mut self.held_cr) && piece[0] != b'\n' {
            self.hash(b"\r");
        }
        let body = if last == b'\r' {
            self.held_cr = true;
            body
        } else {
            piece
        };
        // Most content has no CR at all: `contains` on bytes is a memchr, far cheaper than a
        // pair test per byte.
        let mut start = 0;
        if body.contains(&b'\r') {
            for (i, pair) in body.windows(2).enumerate() {
                if pair == b"\r\n" {
                    self.hash(&body[start..i]);
                    start = i + 1;
                }
            }
        }
        self.hash(&body[start..]);
    }

    fn hash(&mut self, bytes: &[u8]) {
        self.sha.update(bytes);
        self.length += bytes.len() as u64;
    }

    /// The lowercase hex SHA-256 and the length of what was given.
    pub fn finish(mut self) -> (String, u64) {
        if self.held_cr {
            self.hash(b"\r");
        }
        (format!("{:x}", self.sha.finalize()), self.length)
    }
}

impl std::io::Write for ContentHasher {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A `sources` entry that cannot be used: unreadable, matching nothing, or outside the
/// workspace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceError {
    /// The file where the entry is written (the fixture, or the suite config), crate-relative;
    /// empty when not known.
    pub written_in: String,
    /// The entry: a crate-relative path or glob.
    pub path: String,
    /// Why, and what to do.
    pub message: String,
}

impl fmt::Display for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.written_in.is_empty() {
            write!(f, "{}: ", self.written_in)?;
        }
        write!(f, "source `{}`: {}", self.path, self.message)
    }
}

/// Hashes one crate-relative file.
pub fn hash_source(crate_root: &Path, relative: &str) -> Result<Source, SourceError> {
    let bytes = std::fs::read(crate_root.join(relative)).map_err(|e| SourceError {
        written_in: String::new(),
        path: relative.to_string(),
        message: format!(
            "cannot read it ({e}); paths in `sources` are relative to the crate root {}",
            crate_root.display()
        ),
    })?;
    let (sha256, bytes) = hash_content(&bytes);
    Ok(Source {
        path: relative.to_string(),
        sha256,
        bytes,
    })
}

/// Every crate-relative file matching `pattern`, sorted: `*` and `?` within one path segment,
/// `**` for any number of folders, `[abc]` / `[a-z]` character classes and `{a,b}`
/// alternatives. A pattern without wildcards names one file, which must exist; a pattern that
/// matches nothing is an error, so a typo never turns staleness checking off.
pub fn glob(crate_root: &Path, pattern: &str) -> Result<Vec<String>, SourceError> {
    let pattern = pattern.trim_start_matches("./");
    let error = |message: String| SourceError {
        written_in: String::new(),
        path: pattern.to_string(),
        message,
    };
    let segments: Vec<&str> = pattern.split('/').collect();
    let literal = segments
        .iter()
        .take_while(|s| !s.contains(['*', '?', '[', '{']))
        .count();
    if literal == segments.len() {
        return if crate_root.join(pattern).is_file() {
            Ok(vec![pattern.to_string()])
        } else {
            Err(error(format!(
                "no such file below the crate root {}",
                crate_root.display()
            )))
        };
    }
    let matcher =
        super::glob::Glob::parse(pattern).map_err(|e| error(format!("not a valid glob: {e}")))?;
    // Only the folders below the pattern's literal start are walked, never the whole crate.
    let base: PathBuf = segments[..literal].iter().collect();
    let mut found = Vec::new();
    for entry in walkdir::WalkDir::new(crate_root.join(&base))
        .follow_links(true)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
    {
        let relative = crate::files::relative_slash(crate_root, entry.path());
        if matcher.is_match(&relative) {
            found.push(relative);
        }
    }
    if found.is_empty() {
        return Err(error(format!(
            "the pattern matches no file below the crate root {}; fix it or remove it from `sources`",
            crate_root.display()
        )));
    }
    found.sort();
    Ok(found)
}

/// How a recorded source differs from the current one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SourceChange {
    /// The content changed.
    Changed {
        /// Crate-relative path.
        path: String,
        /// Hash in the recording.
        recorded: String,
        /// Hash now.
        current: String,
    },
    /// A source the case now has that the recording was not made from.
    Added {
        /// Crate-relative path.
        path: String,
    },
    /// A source the recording was made from that the case no longer has.
    Removed {
        /// Crate-relative path.
        path: String,
    },
    /// The case's `input` (format 2, which depends on the input rather than the fixture file).
    Input {
        /// `input_sha256` in the recording.
        recorded: String,
        /// The hash of the input now.
        current: String,
    },
}

impl fmt::Display for SourceChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SourceChange::Changed {
                path,
                recorded,
                current,
            } => {
                write!(
                    f,
                    "{path} changed (recorded sha256 {recorded}, current {current})"
                )
            }
            SourceChange::Added { path } => {
                write!(f, "{path} is a new source, not in the recording")
            }
            SourceChange::Removed { path } => {
                write!(f, "{path} was a source of the recording and no longer is")
            }
            SourceChange::Input { recorded, current } => write!(
                f,
                "the case's input changed (recorded sha256 {recorded}, current {current})"
            ),
        }
    }
}

/// What a case's recording depends on now: the fixture file (what format 1 depended on), the
/// input (what format 2 depends on instead) and the other sources (the case's `sources` and the
/// suite's `[recording] sources`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseSources {
    /// The fixture file.
    pub fixture: Source,
    /// Lowercase hex SHA-256 of the case's `input` as canonical JSON.
    pub input_sha256: String,
    /// The length of that canonical JSON.
    pub input_bytes: u64,
    /// The case's `sources` then the suite's, without the fixture file.
    pub sources: Vec<Source>,
}

/// How a recording of `format` made from `recorded` sources (and, in format 2, the input
/// hashed `input_sha256`) differs from the case's `current` sources; empty when it is fresh.
///
/// Format 1 depended on the whole fixture file, so any edit of the fixture makes it stale, as it
/// always did. Format 2 depends on the input only: editing `expected`, `description` or any
/// other key of the fixture leaves it fresh.
pub fn staleness(
    format: u32,
    recorded: &[Source],
    input_sha256: Option<&str>,
    current: &CaseSources,
) -> Vec<SourceChange> {
    if format == 1 {
        let mut all = Vec::with_capacity(current.sources.len() + 1);
        all.push(current.fixture.clone());
        all.extend(
            current
                .sources
                .iter()
                .filter(|s| s.path != current.fixture.path)
                .cloned(),
        );
        return compare_sources(recorded, &all);
    }
    let mut changes = Vec::new();
    match input_sha256 {
        Some(hash) if hash == current.input_sha256 => {}
        recorded => changes.push(SourceChange::Input {
            recorded: recorded.unwrap_or_default().to_string(),
            current: current.input_sha256.clone(),
        }),
    }
    changes.extend(compare_sources(recorded, &current.sources));
    changes
}

/// The differences between the sources a recording was made from and the current ones; empty
/// when the recording is fresh.
pub fn compare_sources(recorded: &[Source], current: &[Source]) -> Vec<SourceChange> {
    let mut changes = Vec::new();
    for now in current {
        match recorded.iter().find(|r| r.path == now.path) {
            Some(r) if r.sha256 != now.sha256 => changes.push(SourceChange::Changed {
                path: now.path.clone(),
                recorded: r.sha256.clone(),
                current: now.sha256.clone(),
            }),
            Some(_) => {}
            None => changes.push(SourceChange::Added {
                path: now.path.clone(),
            }),
        }
    }
    for r in recorded {
        if !current.iter().any(|c| c.path == r.path) {
            changes.push(SourceChange::Removed {
                path: r.path.clone(),
            });
        }
    }
    changes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crlf_hashes_like_lf() {
        assert_eq!(hash_content(b"a\r\nb\r\n"), hash_content(b"a\nb\n"));
        assert_eq!(hash_content(b"a\nb\n").1, 4);
        assert_ne!(hash_content(b"a\rb"), hash_content(b"ab"));
        // The well-known digest of the empty string.
        assert_eq!(
            hash_content(b"").0,
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    /// The streaming hasher gives what hashing the whole content at once gave (the hash that
    /// recordings store), however the content is cut, a CR at a cut included.
    #[test]
    fn content_hashed_in_pieces_hashes_as_a_whole() {
        fn whole(content: &[u8]) -> (String, u64) {
            // The former hash_content, which every stored hash was made by.
            let mut hasher = Sha256::new();
            let (mut length, mut start) = (0u64, 0);
            for (i, pair) in content.windows(2).enumerate() {
                if pair == b"\r\n" {
                    hasher.update(&content[start..i]);
                    length += (i - start) as u64;
                    start = i + 1;
                }
            }
            hasher.update(&content[start..]);
            length += (content.len() - start) as u64;
            (format!("{:x}", hasher.finalize()), length)
        }
        let texts: [&[u8]; 7] = [
            b"",
            b"a\r\nb\r\n",
            b"\r\r\n\n\r",
            b"line\rnot a break\r\n",
            b"\r",
            b"\r\n",
            "M\u{fc}ller \"x\"\r\n\r\r\n".as_bytes(),
        ];
        for text in texts {
            assert_eq!(hash_content(text), whole(text), "{text:?}");
            // Every way of cutting it in three pieces.
            for a in 0..=text.len() {
                for b in a..=text.len() {
                    let mut hasher = ContentHasher::default();
                    for piece in [&text[..a], &text[a..b], &text[b..]] {
                        std::io::Write::write_all(&mut hasher, piece).unwrap();
                    }
                    assert_eq!(hasher.finish(), whole(text), "{text:?} cut at {a}, {b}");
                }
            }
        }
    }

    #[test]
    fn globs() {
        let root = tempfile::tempdir().unwrap();
        for f in [
            "prompts/a.md",
            "prompts/x/y/b.md",
            "prompts/x/c.txt",
            "p/ab.md",
            "p/a.md",
        ] {
            let path = root.path().join(f);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        let found = |pattern: &str| glob(root.path(), pattern).unwrap_or_default();
        assert_eq!(found("prompts/*.md"), ["prompts/a.md"]);
        assert_eq!(
            found("prompts/**/*.md"),
            ["prompts/a.md", "prompts/x/y/b.md"]
        );
        assert_eq!(found("p/a?.md"), ["p/ab.md"]);
        assert_eq!(found("p/{a,ab}.md"), ["p/a.md", "p/ab.md"]);
        assert_eq!(found("p/a[a-c].md"), ["p/ab.md"]);
        assert_eq!(found("./p/a.md"), ["p/a.md"]);
        let none = glob(root.path(), "prompts/*.txt").unwrap_err();
        assert!(none.message.contains("matches no file"), "{none}");
        let missing = glob(root.path(), "prompts/gone.md").unwrap_err();
        assert!(missing.message.contains("no such file"), "{missing}");
        let bad = glob(root.path(), "prompts/[a.md").unwrap_err();
        assert!(bad.message.contains("not a valid glob"), "{bad}");
    }

    #[test]
    fn source_changes() {
        let s = |p: &str, h: &str| Source {
            path: p.into(),
            sha256: h.into(),
            bytes: 1,
        };
        let changes = compare_sources(&[s("a", "1"), s("b", "2")], &[s("a", "9"), s("c", "3")]);
        assert_eq!(changes.len(), 3);
        assert!(matches!(&changes[0], SourceChange::Changed { path, .. } if path == "a"));
        assert!(matches!(&changes[1], SourceChange::Added { path } if path == "c"));
        assert!(matches!(&changes[2], SourceChange::Removed { path } if path == "b"));
        assert!(compare_sources(&[s("a", "1")], &[s("a", "1")]).is_empty());
    }
}
