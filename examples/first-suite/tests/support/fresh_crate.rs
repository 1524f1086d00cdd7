//! The guide's dependency line, tried as a newcomer tries it: a new crate whose `Cargo.toml` is
//! `cargo new`'s `[package]` plus the guide's `cargo-toml` blocks, as the guide writes them, and
//! whose files are this crate's (the ones the guide shows, checked equal by the `file` checks),
//! builds and runs one case.
//!
//! The guide names the git repository (`proposal-eval = { git = "https://github.com/..." }`);
//! the test leaves that line as it is and has git fetch a clone of this repository's `HEAD`
//! instead (`url.<clone>.insteadOf`, with cargo's `net.git-fetch-with-cli`), so it needs no
//! network and tests the committed tree, as a user would get it. cargo's `[patch]` cannot do
//! this: it still fetches the original URL.
//!
//! The build shares `<target>/e2e` with the runtime's end-to-end tests and starts from the
//! workspace's `Cargo.lock`, so registry crates come from cargo's cache at the versions the
//! workspace already built.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The files a reader of the guide has made by the step that runs a case.
const FILES: [&str; 5] = [
    "src",
    "prompts",
    "fixtures",
    "tests/evals.rs",
    "tests/live_model",
];

/// The case the test runs, and the line libtest prints when it passes.
const CASE: &str = "payments::raise_amount";

/// Builds the crate from `blocks` (the guide's `cargo-toml` blocks, in order) in a folder under
/// the target folder and runs [`CASE`]; `Ok` carries what cargo printed.
pub fn build_and_run(crate_root: &Path, blocks: &[toml::Table]) -> Result<String, String> {
    let workspace = crate_root.join("../..");
    let target = shared_target(&workspace);
    let place = target.join("guide-dependency");
    let _ = std::fs::remove_dir_all(&place);
    let clone = place.join("proposal-eval.git");
    let fresh = place.join("first-suite");

    let manifest = manifest(blocks)?;
    let url = git_url(&manifest)?;
    run(Command::new("git")
        .args(["clone", "--quiet", "--bare"])
        .arg(&workspace)
        .arg(&clone))
    .map_err(|e| {
        format!("cannot clone this repository's HEAD (the test needs a git checkout): {e}")
    })?;

    for file in FILES {
        copy(&crate_root.join(file), &fresh.join(file))
            .map_err(|e| format!("copying {file}: {e}"))?;
    }
    let text = toml::to_string(&manifest).map_err(|e| e.to_string())?;
    std::fs::write(fresh.join("Cargo.toml"), text).map_err(|e| e.to_string())?;
    std::fs::copy(workspace.join("Cargo.lock"), fresh.join("Cargo.lock"))
        .map_err(|e| format!("copying Cargo.lock: {e}"))?;

    let mut cargo = cargo(&fresh, &target);
    cargo
        .args(["test", "--test", "evals", "--", CASE, "--exact"])
        .env("CARGO_NET_GIT_FETCH_WITH_CLI", "true")
        .env("GIT_CONFIG_COUNT", "1")
        .env(
            "GIT_CONFIG_KEY_0",
            format!("url.file://{}.insteadOf", clone.display()),
        )
        .env("GIT_CONFIG_VALUE_0", &url);
    let printed = run(&mut cargo)?;
    let passed = format!("test {CASE} ... ok");
    if !printed.contains(&passed) || !printed.contains("1 passed; 0 failed") {
        return Err(format!(
            "`{passed}` is not in what cargo printed:\n{printed}"
        ));
    }
    let _ = std::fs::remove_dir_all(&place);
    Ok(printed)
}

/// `cargo new --lib first-suite`'s `[package]`, then every table of the blocks: keys of the same
/// table added up, array-of-tables entries appended.
fn manifest(blocks: &[toml::Table]) -> Result<toml::Table, String> {
    let mut manifest: toml::Table = toml::from_str(
        "[package]\nname = \"first-suite\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .map_err(|e| e.to_string())?;
    for block in blocks {
        for (key, value) in block {
            match (manifest.get_mut(key), value) {
                (Some(toml::Value::Table(mine)), toml::Value::Table(more)) => {
                    mine.extend(more.clone());
                }
                (Some(toml::Value::Array(mine)), toml::Value::Array(more)) => {
                    mine.extend(more.iter().cloned());
                }
                (Some(_), _) => return Err(format!("`{key}` has two shapes in the guide")),
                (None, _) => {
                    manifest.insert(key.clone(), value.clone());
                }
            }
        }
    }
    // Alone, even when the target folder is inside this repository's workspace.
    manifest.insert("workspace".into(), toml::Value::Table(Default::default()));
    Ok(manifest)
}

/// The `git` URL of the guide's proposal-eval line.
fn git_url(manifest: &toml::Table) -> Result<String, String> {
    manifest
        .get("dev-dependencies")
        .and_then(|deps| deps.get("proposal-eval"))
        .and_then(|dep| dep.get("git"))
        .and_then(|url| url.as_str())
        .map(str::to_string)
        .ok_or_else(|| {
            "the guide's [dev-dependencies] has no `proposal-eval = { git = \"...\" }`: until the crates are published, that is the line that works".into()
        })
}

fn shared_target(workspace: &Path) -> PathBuf {
    let base = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|p| {
            if p.is_absolute() {
                p
            } else {
                workspace.join(p)
            }
        })
        .unwrap_or_else(|| workspace.join("target"));
    base.join("e2e")
}

/// `cargo` in `dir` with nothing of the outer test run leaking in but the toolchain.
fn cargo(dir: &Path, target: &Path) -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(dir);
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        let leaks = key == "RECORD"
            || key.starts_with("PROPOSAL_EVAL_")
            || key.starts_with("FIRST_SUITE_")
            || key.starts_with("NEXTEST")
            || key.starts_with("CARGO_PKG_")
            || key.starts_with("CARGO_MANIFEST_")
            || key.starts_with("CARGO_BIN_")
            || key.starts_with("GIT_")
            || matches!(
                &*key,
                "CARGO_CRATE_NAME" | "CARGO_PRIMARY_PACKAGE" | "CARGO_TARGET_TMPDIR"
            );
        if leaks {
            cmd.env_remove(&*key);
        }
    }
    cmd.env("CARGO_TARGET_DIR", target)
        .env("CARGO_INCREMENTAL", "0")
        .env("CARGO_TERM_COLOR", "never")
        .env("NO_COLOR", "1");
    cmd
}

/// Runs a command to its end; what it printed, or why it failed.
fn run(cmd: &mut Command) -> Result<String, String> {
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        Ok(printed)
    } else {
        Err(format!("{cmd:?} failed ({}):\n{printed}", out.status))
    }
}

fn copy(from: &Path, to: &Path) -> std::io::Result<()> {
    if from.is_dir() {
        super::copy_dir(from, to)
    } else {
        std::fs::create_dir_all(to.parent().unwrap_or(to))?;
        std::fs::copy(from, to).map(drop)
    }
}
