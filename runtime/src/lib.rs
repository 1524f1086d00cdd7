//! proposal-eval (crate docs are written with the front ends).
#![deny(missing_docs)]

pub mod accuracy;
pub mod compare;
pub mod config;
pub mod judge;
pub mod path;
pub mod recording;
