//! A suite's recordings taken as a whole, for the commands that look after them:
//! [`status`] (which recording is fresh, stale, missing or unreadable, and format migration) and
//! [`review`] (a pending recording's verdicts beside the committed one's).
//!
//! One recording file's format, reading, writing and replay are [`recording`](crate::recording);
//! this module builds on it and on the run (`Suite`, `LoadedCase`, the evaluators), so that
//! `cargo proposal-eval status` and `review` judge a recording exactly as a test run does.

pub mod review;
pub mod status;
