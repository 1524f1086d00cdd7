//! `status`, `prune` and `report`: they reuse runtime modules that are still being written
//! (recording staleness, the run report), and will each get their own module here.

/// Prints the placeholder and returns the exit code.
pub fn not_yet_implemented(command: &str) -> i32 {
    eprintln!("cargo proposal-eval {command}: not yet implemented");
    2
}
