//! Driving `examples/payments-agent` as a user does: a copy of the crate in a temporary folder,
//! standing alone (its own `[workspace]`, `proposal-eval` by absolute path), and `cargo`
//! subprocesses in it.
//!
//! Every copy builds into one shared target folder (`<target>/e2e`), so the dependencies compile
//! once for all end-to-end tests; the tests take [`lock`] so that only one cargo runs at a time.

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard};

/// The runtime crate's folder.
pub fn runtime_dir() -> PathBuf {
    workspace_dir().join("runtime")
}

/// The repository's root: the parent of the crate whose tests include this module (the
/// runtime's, and the CLI's, whose workflow test drives the example with the built binary).
pub fn workspace_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("a workspace member has a parent")
        .to_path_buf()
}

/// The example crate as committed.
pub fn example_dir() -> PathBuf {
    workspace_dir().join("examples/payments-agent")
}

/// The target folder every copy builds into.
pub fn shared_target() -> PathBuf {
    let base = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|p| {
            if p.is_absolute() {
                p
            } else {
                workspace_dir().join(p)
            }
        })
        .unwrap_or_else(|| workspace_dir().join("target"));
    base.join("e2e")
}

/// One cargo at a time in the shared target folder; a failed test does not poison the rest.
pub fn lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// The example's suite folder, crate-relative.
pub const SUITE: &str = "fixtures/payments";

/// A standing-alone copy of the example crate.
pub struct Example {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
}

/// What a cargo run printed and how it ended.
pub struct Run {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// stdout and stderr, for messages and searching.
    pub fn text(&self) -> String {
        format!("--- stdout\n{}\n--- stderr\n{}", self.stdout, self.stderr)
    }

    /// libtest's `test NAME ... ok|FAILED|ignored` lines: name to verdict.
    pub fn verdicts(&self) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        for line in self.stdout.lines() {
            let Some(rest) = line.strip_prefix("test ") else {
                continue;
            };
            let Some((name, verdict)) = rest.split_once(" ... ") else {
                continue;
            };
            // libtest writes `ignored, <reason>`; libtest-mimic writes `ignored`.
            let verdict = verdict
                .split_whitespace()
                .next()
                .unwrap_or("")
                .trim_end_matches(',')
                .to_string();
            out.insert(name.trim().to_string(), verdict);
        }
        out
    }

    /// Asserts the run's summary line, e.g. `22 passed; 1 failed; 2 ignored`.
    pub fn assert_summary(&self, passed: usize, failed: usize, ignored: usize) {
        let want = format!("{passed} passed; {failed} failed; {ignored} ignored");
        assert!(
            self.stdout.contains(&want),
            "expected `{want}` in:\n{}",
            self.text()
        );
        assert_eq!(
            self.success,
            failed == 0,
            "exit status vs summary:\n{}",
            self.text()
        );
    }
}

impl Example {
    /// Copies the example (without `target/`) into a temporary folder and makes it stand alone.
    pub fn new() -> Example {
        let dir = tempfile::Builder::new()
            .prefix("payments-agent-e2e-")
            .tempdir()
            .expect("a temporary folder");
        let root = dir.path().join("payments-agent");
        copy_tree(&example_dir(), &root);
        let manifest = root.join("Cargo.toml");
        let text = std::fs::read_to_string(&manifest).unwrap();
        let from = r#"proposal-eval = { path = "../../runtime" }"#;
        assert!(
            text.contains(from),
            "the example's Cargo.toml no longer has `{from}`"
        );
        let runtime = runtime_dir().to_string_lossy().replace('\\', "/");
        let text = text.replace(from, &format!("proposal-eval = {{ path = \"{runtime}\" }}"));
        std::fs::write(&manifest, format!("{text}\n[workspace]\n")).unwrap();
        // The workspace's lock file pins the same dependency versions, offline.
        let lock = workspace_dir().join("Cargo.lock");
        if lock.is_file() {
            std::fs::copy(lock, root.join("Cargo.lock")).unwrap();
        }
        Example { _dir: dir, root }
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    pub fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.path(relative))
            .unwrap_or_else(|e| panic!("cannot read {relative}: {e}"))
    }

    pub fn write(&self, relative: &str, text: impl AsRef<[u8]>) {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// A `cargo` command in the copy, with a clean environment: nothing of the outer test run
    /// (RECORD, colours, the stand-in's knobs, cargo's per-package variables) leaks in.
    pub fn cargo(&self, args: &[&str]) -> Command {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.args(args).current_dir(&self.root);
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy().into_owned();
            let leaks = key == "RECORD"
                || key == "CLICOLOR_FORCE"
                || key.starts_with("PROPOSAL_EVAL_")
                || key.starts_with("PAYMENTS_AGENT_")
                || key.starts_with("NEXTEST")
                || key.starts_with("CARGO_PKG_")
                || key.starts_with("CARGO_MANIFEST_")
                || key.starts_with("CARGO_BIN_")
                || matches!(
                    key.as_str(),
                    "CARGO_CRATE_NAME"
                        | "CARGO_PRIMARY_PACKAGE"
                        | "CARGO_TARGET_TMPDIR"
                        | "RUST_TEST_THREADS"
                );
            if leaks {
                cmd.env_remove(&key);
            }
        }
        cmd.env("CARGO_TARGET_DIR", shared_target())
            .env("CARGO_INCREMENTAL", "0")
            .env("CARGO_TERM_COLOR", "never")
            .env("NO_COLOR", "1");
        cmd
    }

    /// Runs cargo to the end.
    pub fn run(&self, args: &[&str], envs: &[(&str, &str)]) -> Run {
        let mut cmd = self.cargo(args);
        cmd.envs(envs.iter().copied()).stdin(Stdio::null());
        let out = cmd.output().expect("cargo runs");
        Run {
            success: out.status.success(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// `cargo test --test evals [-- args]`: the harness front end.
    pub fn evals(&self, envs: &[(&str, &str)], test_args: &[&str]) -> Run {
        let mut args = vec!["test", "--test", "evals"];
        if !test_args.is_empty() {
            args.push("--");
            args.extend_from_slice(test_args);
        }
        self.run(&args, envs)
    }

    /// Every recording file, by path below the recordings folder (hidden files left out).
    pub fn recordings(&self) -> BTreeMap<String, Vec<u8>> {
        let dir = self.path(&format!("{SUITE}/recordings"));
        files_below(&dir)
            .into_iter()
            .filter(|(rel, _)| !rel.split('/').any(|s| s.starts_with('.')))
            .collect()
    }

    /// The active (non-draft) cases: their paths below the suite, without `.json`.
    pub fn active_cases(&self) -> BTreeSet<String> {
        let dir = self.path(SUITE);
        files_below(&dir)
            .into_iter()
            .filter(|(rel, _)| rel.ends_with(".json") && !rel.starts_with("recordings/"))
            .filter(|(_, bytes)| {
                let v: serde_json::Value = serde_json::from_slice(bytes).unwrap();
                !matches!(v.get("status"), Some(s) if s != "active")
            })
            .map(|(rel, _)| rel.trim_end_matches(".json").to_string())
            .collect()
    }
}

/// The test name of a case path: `changes/raise_amount` is `payments::changes::raise_amount`.
pub fn test_name(case: &str) -> String {
    format!("payments::{}", case.replace('/', "::"))
}

/// Every file below `dir`: `/`-separated relative path and content.
pub fn files_below(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(dir: &Path, prefix: &str, out: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let rel = if prefix.is_empty() {
                name
            } else {
                format!("{prefix}/{name}")
            };
            let path = entry.path();
            if path.is_dir() {
                walk(&path, &rel, out);
            } else if let Ok(bytes) = std::fs::read(&path) {
                // A file gone between listing and reading was a write's temp file, renamed.
                out.insert(rel, bytes);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, "", &mut out);
    out
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let name = entry.file_name();
        if name == "target" {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(&name));
        if src.is_dir() {
            copy_tree(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// Lowercase hex SHA-256 of `bytes`, computed here independently of the runtime.
pub fn sha256(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `value` as canonical JSON (sorted keys, no white space), written here independently of the
/// runtime.
pub fn canonical(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let items: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical(&map[k])))
                .collect();
            format!("{{{}}}", items.join(","))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(canonical).collect();
            format!("[{}]", items.join(","))
        }
        other => other.to_string(),
    }
}

/// Whether every JSON object in `text` lists its keys in sorted order, checked on the text (not
/// through `serde_json::Value`, whose map may sort on its own).
pub fn keys_sorted(text: &str) -> Result<(), String> {
    use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
    struct Check;
    impl<'de> serde::Deserialize<'de> for Check {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(Check)
        }
    }
    impl<'de> Visitor<'de> for Check {
        type Value = Check;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("JSON")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Check, A::Error> {
            let mut last: Option<String> = None;
            while let Some(key) = map.next_key::<String>()? {
                if let Some(prev) = &last {
                    if prev.as_str() >= key.as_str() {
                        return Err(serde::de::Error::custom(format!(
                            "key `{key}` after `{prev}`"
                        )));
                    }
                }
                map.next_value::<Check>()?;
                last = Some(key);
            }
            Ok(Check)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Check, A::Error> {
            while seq.next_element::<Check>()?.is_some() {}
            Ok(Check)
        }
        fn visit_bool<E>(self, _: bool) -> Result<Check, E> {
            Ok(Check)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Check, E> {
            Ok(Check)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Check, E> {
            Ok(Check)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Check, E> {
            Ok(Check)
        }
        fn visit_str<E>(self, _: &str) -> Result<Check, E> {
            Ok(Check)
        }
        fn visit_unit<E>(self) -> Result<Check, E> {
            Ok(Check)
        }
    }
    serde_json::from_str::<Check>(text)
        .map(|_| ())
        .map_err(|e| e.to_string())
}
