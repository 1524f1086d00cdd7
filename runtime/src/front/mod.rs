//! The two front ends: the run-time [`Harness`](harness::Harness) and the support code that the
//! `#[proposal_eval]` macro's generated tests call. Both hand each case to [`crate::run`].

mod filters;
pub mod harness;
pub mod macro_support;
