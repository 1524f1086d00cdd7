//! Field-by-field scoring. (Being written.)

/// `[field_accuracy]`.
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldAccuracyConfig {}
