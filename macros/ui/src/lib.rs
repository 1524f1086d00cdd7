//! Nothing: this crate holds the `#[proposal_eval]` compile-error tests (`tests/ui.rs`).
