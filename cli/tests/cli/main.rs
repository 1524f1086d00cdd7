//! Integration tests: the built `cargo-proposal-eval` binary on temporary suites, as a user
//! runs it. One test binary (modules below) to keep link time down.

mod command_generator;
mod common;
mod compare;
mod credentials;
mod draft;
mod hints;
mod interactive;
mod judge;
mod merge;
mod migrate;
mod promote;
mod prune;
mod recordings;
mod report;
mod report_page;
mod review;
mod status;
mod usage;
mod workflow;
