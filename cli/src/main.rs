//! `cargo proposal-eval`: status, prune, report, draft, promote.
fn main() {
    eprintln!("cargo proposal-eval: not yet implemented");
    std::process::exit(2);
}
