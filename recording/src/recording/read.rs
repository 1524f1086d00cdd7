//! Reading a recording file: one parser, [`parse_file`], and one read per purpose on top of it:
//! [`Recording::read`] (migrate, accept, rewrite), [`Recording::read_for_replay`],
//! [`Recording::read_head`] (status) and [`Pending::read`] (review).
//!
//! The readers differ in one thing only, how the requests are held ([`Requests`]): whole, hashed
//! as they are parsed (a large file replayed), or skipped with the rest of the calls (the
//! status check). Every format is read into the one [`Recording`], upgraded in one step as it
//! is checked: the judge part in place, a format-4 judge part as format 5 holds it
//! ([`judgement::ReadJudgement::checked`]).

use super::canonical::RequestDigest;
use super::error::{damaged, unreadable, RecordingError, RecordingErrorKind};
use super::judgement::{self, ReadJudgement, ReplayedJudgement};
use super::pending::{self, Pending, Review};
use super::{is_sha256, Interaction, Recording, Sample, Source};
use super::{JUDGE_CALLS_FORMAT, JUDGE_FORMAT, SAMPLES_FORMAT};
use crate::files::Located;
use chrono::{DateTime, Utc};
use serde::de::{DeserializeOwned, IgnoredAny};
use serde::Deserialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// How a read holds a recording's requests: whole (`Value`), hashed as they are parsed
/// ([`RequestDigest`]), or skipped ([`Skipped`]).
pub trait Requests: DeserializeOwned {
    /// What the read keeps of a part below the head (the input, the calls, the judge part, the
    /// review): the part itself, or [`Skipped`].
    type Kept<T: DeserializeOwned>: DeserializeOwned;
    /// The part, when it was kept.
    fn kept<T: DeserializeOwned>(part: Self::Kept<T>) -> Option<T>;
}

impl Requests for Value {
    type Kept<T: DeserializeOwned> = T;
    fn kept<T: DeserializeOwned>(part: T) -> Option<T> {
        Some(part)
    }
}

impl Requests for RequestDigest {
    type Kept<T: DeserializeOwned> = T;
    fn kept<T: DeserializeOwned>(part: T) -> Option<T> {
        Some(part)
    }
}

/// Requests skipped, and with them everything below a recording's head (its input, calls,
/// judge part and review): checked to be JSON, not built. What [`Recording::read_head`] reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Skipped;

impl<'de> Deserialize<'de> for Skipped {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Skipped, D::Error> {
        IgnoredAny::deserialize(deserializer).map(|_| Skipped)
    }
}

impl Requests for Skipped {
    type Kept<T: DeserializeOwned> = Skipped;
    fn kept<T: DeserializeOwned>(_: Skipped) -> Option<T> {
        None
    }
}

/// A recording file as it is parsed, before the keys its format requires are checked. Every
/// key is optional here so that a missing one is named by [`Raw::check`], not by serde.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, bound = "Q: Requests")]
struct Raw<Q: Requests> {
    format: u64,
    case: Option<String>,
    recorded_at: Option<DateTime<Utc>>,
    sources: Option<Vec<Source>>,
    input_sha256: Option<String>,
    input: Option<Q::Kept<Value>>,
    interactions: Option<Q::Kept<Vec<Interaction<Q>>>>,
    samples: Option<Q::Kept<Vec<RawSample<Q>>>>,
    /// Only in a pending recording.
    review: Option<Q::Kept<Review>>,
    /// From format 4: the rubric judge's part on a recording of one sample.
    judge: Option<Q::Kept<ReadJudgement>>,
}

/// A sample as it is parsed: its calls, and its judge part as the file holds it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSample<Q> {
    interactions: Vec<Interaction<Q>>,
    #[serde(default)]
    judge: Option<ReadJudgement>,
}

impl<Q: Requests> Raw<Q> {
    /// The recording, its keys checked for its format, and a pending file's review.
    fn check(self, file: &Path) -> Result<(Recording<Q>, Option<Review>), RecordingError> {
        let damaged = |message: String| damaged(file, message);
        let missing = |key: &str| damaged(format!("the key `{key}` is missing"));
        let format = self.format as u32;
        let case = self.case.ok_or_else(|| missing("case"))?;
        let recorded_at = self.recorded_at.ok_or_else(|| missing("recorded_at"))?;
        let sources = self.sources.ok_or_else(|| missing("sources"))?;
        if self.judge.is_some() && format < JUDGE_FORMAT {
            return Err(damaged(format!(
                "`judge` is a key of format {JUDGE_FORMAT}, not of format {format}"
            )));
        }
        let samples = match (format, self.interactions, self.samples) {
            (1 | 2, _, Some(_)) => {
                return Err(damaged(format!(
                    "`samples` is a key of format {SAMPLES_FORMAT}, not of format {format}; a recording of one sample lists `interactions`"
                )))
            }
            (1 | 2, Some(calls), None) => Q::kept(calls).map(|interactions| {
                vec![RawSample {
                    interactions,
                    judge: None,
                }]
            }),
            (1 | 2, None, None) => return Err(missing("interactions")),
            (_, Some(_), _) => {
                return Err(damaged(format!(
                    "`interactions` is not a key of format {format}: each sample in `samples` lists its own"
                )))
            }
            (_, None, Some(samples)) => Q::kept(samples),
            (_, None, None) => return Err(missing("samples")),
        };
        for (i, source) in sources.iter().enumerate() {
            if !is_sha256(&source.sha256) {
                return Err(damaged(format!(
                    "`sources[{i}].sha256` ({}) is not 64 lowercase hex digits",
                    source.path
                )));
            }
        }
        match (format, &self.input_sha256) {
            (1, Some(_)) => {
                return Err(damaged(
                    "`input_sha256` is not a key of format 1 (it is of format 2)".into(),
                ))
            }
            (1, None) if self.input.is_none() => return Err(missing("input")),
            (1, None) => {}
            (_, None) => return Err(missing("input_sha256")),
            (_, Some(hash)) if !is_sha256(hash) => {
                return Err(damaged(
                    "`input_sha256` is not 64 lowercase hex digits".into(),
                ))
            }
            (_, Some(_)) => {}
        }
        let top = self.judge.and_then(Q::kept);
        let (samples, judge) = match samples {
            Some(samples) => upgraded(file, format, samples, top)?,
            None => (Vec::new(), None),
        };
        let recording = Recording {
            format,
            case,
            recorded_at,
            sources,
            input_sha256: self.input_sha256,
            input: self.input.and_then(Q::kept),
            samples,
            judge,
        };
        Ok((recording, self.review.and_then(Q::kept)))
    }
}

/// The samples and the top-level judge part (`top`) as this version holds them: each judge part
/// where the file keeps it (`judge` for a recording of one sample, `samples[k].judge` for one of
/// several; the other place is refused, naming the key and where it belongs) and of format 5.
fn upgraded<Q>(
    file: &Path,
    format: u32,
    samples: Vec<RawSample<Q>>,
    top: Option<ReadJudgement>,
) -> Result<(Vec<Sample<Q>>, Option<judgement::Judgement>), RecordingError> {
    let misplaced = match samples.as_slice() {
        [] => Some("`samples` is empty: a recording holds at least one sample".to_string()),
        [only] if only.judge.is_some() => Some(
            "`samples[0].judge`: a recording of one sample keeps its judge part in `judge`".into(),
        ),
        [_] => None,
        several if top.is_some() => Some(format!(
            "`judge` is the judge part of a recording of one sample; this one has {} samples, and each keeps its own in `samples[k].judge`",
            several.len()
        )),
        several => several
            .iter()
            .position(|s| s.judge.is_some())
            .filter(|_| format < JUDGE_FORMAT)
            .map(|k| {
                format!("`samples[{k}].judge` is a key of format {JUDGE_FORMAT}, not of format {format}")
            }),
    };
    if let Some(message) = misplaced {
        return Err(damaged(file, message));
    }
    let checked = |judge: Option<ReadJudgement>, place: &str| {
        judge
            .map(|j| j.checked(format, place))
            .transpose()
            .map_err(|message| damaged(file, message))
    };
    let top = checked(top, "judge")?;
    let samples = samples
        .into_iter()
        .enumerate()
        .map(|(k, s)| {
            Ok(Sample {
                interactions: s.interactions,
                judge: checked(s.judge, &format!("samples[{k}].judge"))?,
            })
        })
        .collect::<Result<_, RecordingError>>()?;
    Ok((samples, top))
}

/// The one parser: a recording file's `bytes`, its requests held as `Q`, and the review of a
/// pending file; `file` is used in error messages.
///
/// The format is read first: a file of a newer format is refused as such whatever else it holds
/// (keys this version does not know, values of other shapes). The file is parsed once when it
/// reads: only a file that fails is read again, for its format alone.
fn parse_file<Q: Requests>(
    bytes: &[u8],
    file: &Path,
) -> Result<(Recording<Q>, Option<Review>), RecordingError> {
    match parse_json::<Raw<Q>>(bytes, file) {
        Ok(raw) => {
            check_format(Some(&Value::from(raw.format)), file)?;
            raw.check(file)
        }
        Err(error) => {
            let top: FormatOnly = parse_json(bytes, file)?;
            check_format(top.format.as_ref(), file)?;
            Err(error)
        }
    }
}

/// Only the format, read before anything else in a file that does not parse.
#[derive(Deserialize)]
struct FormatOnly {
    format: Option<Value>,
}

/// A recording file larger than this is read for replay with its requests hashed, not built
/// (see [`Recording::read_for_replay`]).
pub const LEAN_READ_OVER: u64 = 8 << 20;

/// The recorded requests of a recording read by [`Recording::read_for_replay`] from a large
/// file: their digests, per sample and per interaction, and the file, read again whole only to
/// show how a request differs.
#[derive(Debug)]
pub struct RequestDigests {
    pub file: PathBuf,
    pub samples: Vec<Vec<RequestDigest>>,
}

/// A recording as [`Recording::read_for_replay`] reads it.
#[derive(Debug)]
pub struct ForReplay {
    /// The recording, its judge parts taken out (they are in `judges`).
    pub recording: Recording,
    /// The digests of its requests when it was read from a large file.
    pub digests: Option<RequestDigests>,
    /// Each sample's judge part, as a replay uses it: one entry per sample (see
    /// [`Recording::judgement`]).
    pub judges: Vec<Option<ReplayedJudgement>>,
}

impl ForReplay {
    fn of(mut recording: Recording, digests: Option<RequestDigests>) -> ForReplay {
        let judges = (0..recording.samples.len())
            .map(|k| recording.take_judgement(k).map(ReplayedJudgement::from))
            .collect();
        ForReplay {
            recording,
            digests,
            judges,
        }
    }
}

impl Recording {
    /// Parses a recording; `file` is used in error messages. A pending recording is refused.
    pub fn parse(bytes: &[u8], file: &Path) -> Result<Recording, RecordingError> {
        match parse_file(bytes, file)? {
            (recording, None) => Ok(recording),
            (_, Some(_)) => Err(damaged(
                file,
                format!("`review` is a key of a pending recording (`<case>{}`, written by RECORD=review), not of a recording; name the file so, or accept it with `cargo proposal-eval accept`", pending::SUFFIX),
            )),
        }
    }

    /// Reads a recording whole (to migrate, accept or rewrite it); `Ok(None)` when there is none.
    pub fn read(file: &Path) -> Result<Option<Recording>, RecordingError> {
        read_bytes(file)?
            .map(|bytes| Recording::parse(&bytes, file))
            .transpose()
    }

    /// Reads only what the staleness check needs (format, case, time, sources, input hash) of a
    /// recording or a pending one; `Ok(None)` when there is none. The input and the calls must
    /// be there but are skipped, not built, which makes checking a recording several times
    /// cheaper than [`Recording::read`]. A recording whose calls are malformed passes here and
    /// fails when it is replayed.
    pub fn read_head(file: &Path) -> Result<Option<super::RecordingHead>, RecordingError> {
        read_bytes(file)?
            .map(|bytes| parse_file(&bytes, file).map(|(head, _)| head))
            .transpose()
    }

    /// Reads a recording to replay it; `Ok(None)` when there is none.
    ///
    /// A file over [`LEAN_READ_OVER`] bytes is parsed as it is read from the disk (its text is
    /// never held whole), and its requests are hashed as they are parsed rather than built: each
    /// interaction's `request` is `null`, and the digests are returned, per sample and per
    /// interaction, for the replay to compare requests with (see [`RequestDigest`]). A large
    /// document the code under test sends is then in memory once, in its own request. A file
    /// that does not read so is read whole, for the error [`Recording::read`] gives.
    pub fn read_for_replay(file: &Path) -> Result<Option<ForReplay>, RecordingError> {
        Recording::read_for_replay_over(file, LEAN_READ_OVER)
    }

    /// [`Recording::read_for_replay`] with `limit` for [`LEAN_READ_OVER`].
    pub(super) fn read_for_replay_over(
        file: &Path,
        limit: u64,
    ) -> Result<Option<ForReplay>, RecordingError> {
        // The file is opened and sized once, as `std::fs::read` does: no more system calls than
        // a whole read for a recording of the usual size.
        let mut opened = match std::fs::File::open(file) {
            Ok(opened) => opened,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(unreadable(file, format!("cannot read: {e}"))),
        };
        let size = opened.metadata().map_or(0, |m| m.len());
        if size > limit {
            if let Some(read) = read_hashed(opened, file) {
                return Ok(Some(read));
            }
            return Ok(Recording::read(file)?.map(|r| ForReplay::of(r, None)));
        }
        let mut bytes = Vec::with_capacity(size as usize);
        std::io::Read::read_to_end(&mut opened, &mut bytes)
            .map_err(|e| unreadable(file, format!("cannot read: {e}")))?;
        Ok(Some(ForReplay::of(Recording::parse(&bytes, file)?, None)))
    }
}

impl Pending {
    /// Parses a pending file; `file` is used in error messages.
    pub fn parse(bytes: &[u8], file: &Path) -> Result<Pending, RecordingError> {
        match parse_file(bytes, file)? {
            (recording, Some(review)) => Ok(Pending { recording, review }),
            (_, None) => Err(damaged(
                file,
                "the key `review` is missing, so this is not a pending recording (a pending recording is written by RECORD=review)".into(),
            )),
        }
    }

    /// Reads a pending file (to review or accept it); `Ok(None)` when there is none.
    pub fn read(file: &Path) -> Result<Option<Pending>, RecordingError> {
        read_bytes(file)?
            .map(|bytes| Pending::parse(&bytes, file))
            .transpose()
    }
}

/// [`Recording::read_for_replay`] of a large file, its requests hashed; `None` when it does not
/// read so (damaged, newer, or a pending recording).
fn read_hashed(opened: std::fs::File, file: &Path) -> Option<ForReplay> {
    let reader = std::io::BufReader::with_capacity(64 * 1024, opened);
    let raw: Raw<RequestDigest> = serde_json::from_reader(reader).ok()?;
    check_format(Some(&Value::from(raw.format)), file).ok()?;
    let (hashed, None) = raw.check(file).ok()? else {
        return None;
    };
    let mut digests = Vec::with_capacity(hashed.samples.len());
    let recording = hashed.map_samples(|sample| {
        digests.push(sample.interactions.iter().map(|i| i.request).collect());
        Sample {
            interactions: sample
                .interactions
                .into_iter()
                .map(|i| i.map_request(|_| Value::Null))
                .collect(),
            judge: sample.judge,
        }
    });
    let digests = RequestDigests {
        file: file.to_path_buf(),
        samples: digests,
    };
    Some(ForReplay::of(recording, Some(digests)))
}

impl<Q> Recording<Q> {
    /// The same recording, each sample as `f` makes it.
    fn map_samples<P>(self, f: impl FnMut(Sample<Q>) -> Sample<P>) -> Recording<P> {
        let Recording {
            format,
            case,
            recorded_at,
            sources,
            input_sha256,
            input,
            samples,
            judge,
        } = self;
        Recording {
            format,
            case,
            recorded_at,
            sources,
            input_sha256,
            input,
            samples: samples.into_iter().map(f).collect(),
            judge,
        }
    }
}

/// The bytes of a recording file; `None` when there is none.
fn read_bytes(file: &Path) -> Result<Option<Vec<u8>>, RecordingError> {
    match std::fs::read(file) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(unreadable(file, format!("cannot read: {e}"))),
    }
}

/// A JSON syntax error makes the file unreadable; JSON of the wrong shape makes it damaged.
fn parse_json<T: DeserializeOwned>(bytes: &[u8], file: &Path) -> Result<T, RecordingError> {
    serde_json::from_slice(bytes).map_err(|e| {
        let at = crate::files::json_error(file, bytes, &e, "recording");
        let kind = if e.is_data() {
            RecordingErrorKind::Damaged
        } else {
            RecordingErrorKind::Unreadable
        };
        RecordingError { at, kind }
    })
}

/// A recording's `format`: present, a number from 1, and not newer than this version reads.
fn check_format(format: Option<&Value>, file: &Path) -> Result<(), RecordingError> {
    let format = match format {
        None => return Err(damaged(file, "the key `format` is missing".into())),
        Some(value) => match value.as_u64() {
            Some(n) if n >= 1 => n,
            _ => {
                return Err(damaged(
                    file,
                    format!("`format` is {value}, not a format number (1, 2, ...)"),
                ))
            }
        },
    };
    if format > u64::from(JUDGE_CALLS_FORMAT) {
        return Err(RecordingError {
            at: Located::file(
                file,
                format!(
                    "made by a newer proposal-eval (format {format}; this version reads up to {JUDGE_CALLS_FORMAT}): upgrade proposal-eval"
                ),
            ),
            kind: RecordingErrorKind::Newer { format },
        });
    }
    Ok(())
}
