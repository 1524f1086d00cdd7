//! `#[proposal_eval]` writes one `#[test]` per fixture when the crate compiles: this line makes a
//! new fixture file rebuild the tests (the harness front end finds fixtures at run time).
fn main() {
    println!("cargo:rerun-if-changed=fixtures");
}
