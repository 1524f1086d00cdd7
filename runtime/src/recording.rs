//! Recordings of model interactions. (Being written.)

/// `[recording]`.
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordingConfig {}
