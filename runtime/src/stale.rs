//! What a run does with a recorded part whose sources changed: the agent's recorded answers (the
//! case's code, its fixture, its input or its `[recording] sources` changed) or the rubric
//! judge's recorded verdicts (the rubric, the output judged, the prompt or the judge changed).
//! One decision for both, so that `RECORD` and `[recording] validation` mean the same for each.

use crate::env::RecordMode;
use crate::recording::Validation;

/// What becomes of a stale recorded part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StaleUse {
    /// Made again, live: the run records (`RECORD=stale`, `1`, `review`).
    Record,
    /// Refused: the case fails, naming what changed and the command that records it
    /// (`validation = "strict"`, the default).
    Refuse,
    /// Replayed, with a warning naming what changed (`validation = "warn"`).
    Warn,
    /// Replayed without a word (`validation = "skip"`: staleness is not looked for).
    Replay,
}

/// What a run in `record` mode, under `[recording] validation`, does with a stale part.
pub(crate) fn stale_use(record: RecordMode, validation: Validation) -> StaleUse {
    match (record, validation) {
        (RecordMode::Stale | RecordMode::All | RecordMode::Review, _) => StaleUse::Record,
        (RecordMode::Replay, Validation::Strict) => StaleUse::Refuse,
        (RecordMode::Replay, Validation::Warn) => StaleUse::Warn,
        (RecordMode::Replay, Validation::Skip) => StaleUse::Replay,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recording_modes_record_and_replay_follows_validation() {
        for record in [RecordMode::Stale, RecordMode::All, RecordMode::Review] {
            assert_eq!(stale_use(record, Validation::Strict), StaleUse::Record);
        }
        let replay = |v| stale_use(RecordMode::Replay, v);
        assert_eq!(replay(Validation::Strict), StaleUse::Refuse);
        assert_eq!(replay(Validation::Warn), StaleUse::Warn);
        assert_eq!(replay(Validation::Skip), StaleUse::Replay);
    }
}
