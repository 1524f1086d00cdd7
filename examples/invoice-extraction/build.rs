//! Why this file exists: `#[proposal_eval]` writes one `#[test]` per fixture when the crate
//! compiles, and it includes each fixture in the build, so an *edited* fixture rebuilds the tests on
//! its own. A *new* fixture file is not included anywhere yet; this line tells cargo to rebuild
//! (and so re-run the macro) when anything below `fixtures/` changes. The harness front ends
//! (`tests/evals.rs`, `tests/below_threshold.rs`) find fixtures at run time and do not need it.
fn main() {
    println!("cargo:rerun-if-changed=fixtures");
}
