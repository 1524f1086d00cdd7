//! Strict comparison of expected and actual proposals. (Being written.)

/// `[strict]`.
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StrictConfig {}
