//! External judge scripts. (Being written.)

/// One `[[code_judge]]`.
#[derive(Clone, Debug, Default, serde::Deserialize)]
pub struct JudgeConfig {}
