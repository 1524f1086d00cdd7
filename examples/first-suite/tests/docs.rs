//! `docs/` against the code: `cargo test -p first-suite --test docs`.
//!
//! The guide (`docs/guide.md`) builds this crate step by step, and the reference shows configs,
//! fixtures and outputs. Each fenced block of a `.md` file under `docs/` that is Rust, TOML or JSON
//! says on the line above it how it is checked, in an HTML comment (`<!-- check: ... -->`):
//!
//! | check | meaning |
//! |---|---|
//! | `file PATH` | the block is the whole file `PATH` of this crate |
//! | `part PATH` | the block is a contiguous part of that file |
//! | `cargo-toml` | every key of the block is in this crate's `Cargo.toml` with the same value (`proposal-eval = { git = REPOSITORY }` stands for the path dependency); the guide's blocks also make the new crate of `docs::guide_dependency_line_builds` |
//! | `cargo-toml published` | the line for after publication: `proposal-eval = "V"` with `V` a prefix of the workspace's version |
//! | `config` / `config-error FILE` | a `proposal-eval.toml` that parses / that fails with the message in the next block |
//! | `fixture` / `fixture-error FILE` | a fixture that parses / that fails with the message in the next block |
//! | `recording` | a recording file that parses |
//! | `pending` | a pending recording (`RECORD=review`) that parses |
//! | `json` / `jsonl` / `toml` | parses as JSON / JSON lines / TOML |
//! | `run code=C [record=R] [remove=PATH] [append=PATH]` | a text block that this crate's suite prints, run in a copy of this crate's `fixtures/` and `prompts/` with `RECORD=R` (default replay), with the code of the guide's first `src/lib.rs` (`C` = `before_fix`) or of `src/lib.rs` (`fixed`), after removing `PATH` or appending the block above to `PATH` |
//! | `doctest` | a Rust block that `runtime/src/lib.rs` compiles and runs as a doctest |
//! | `none REASON` | not checked, and why |
//!
//! A block of one of those languages without a `check:` line fails the check.
//!
//! The same binary also runs the suite (the child processes of `run` checks): with
//! `FIRST_SUITE_CHILD=before_fix` or `fixed` set, it is an ordinary harness over
//! `fixtures/payments` whose live model is the guide's, run without `OPENAI_API_KEY` as a reader
//! without a key runs it: it records with the stand-in of `tests/live_model/stand_in.rs`. That
//! is also how this repository re-records this crate's recordings offline:
//!
//! ```sh
//! FIRST_SUITE_CHILD=fixed RECORD=1 cargo test -p first-suite --test docs
//! ```

#[path = "../guide/lib_before_fix.rs"]
mod before_fix;
#[path = "support/fresh_crate.rs"]
mod fresh_crate;
#[allow(dead_code)]
mod live_model;
#[path = "support/stand_in.rs"]
mod stand_in;

use libtest_mimic::{Arguments, Failed, Trial};
use proposal_eval::{Case, Harness, Llm};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// What the checks parse with: the runtime's own parsers.
mod parse {
    pub use proposal_eval::__internal::fixture::FixtureFile;
    pub use proposal_eval::__internal::recording::Recording;
    pub use proposal_eval::__internal::review::Pending;
    pub use proposal_eval::config::SuiteConfig;
}

const CHILD: &str = "FIRST_SUITE_CHILD";

fn main() -> ExitCode {
    match std::env::var(CHILD).as_deref() {
        Ok("before_fix") => return child(before_fix::request, before_fix::proposals),
        Ok("fixed") => return child(first_suite::request, first_suite::proposals),
        Ok(other) => {
            eprintln!("{CHILD}={other:?}: expected before_fix or fixed");
            return ExitCode::FAILURE;
        }
        Err(_) => {}
    }
    let args = Arguments::from_args();
    let trials = vec![
        Trial::test("docs::blocks_are_checked", check_docs),
        Trial::test("docs::live_model_talks_to_a_server", live_model_round_trip),
        Trial::test(
            "docs::recordings_are_what_the_code_records",
            recordings_reproduce,
        ),
        Trial::test("docs::guide_dependency_line_builds", guide_dependency_line),
        Trial::test("docs::defaults_are_the_codes", defaults_are_the_codes),
        Trial::test("docs::every_method_is_in_the_api_reference", api_reference),
        Trial::test("docs::the_cli_installs_from_the_repository", cli_install),
    ];
    libtest_mimic::run(&args, trials).exit_code()
}

/// The suite of tests/evals.rs, with `request` and `proposals` as the code under test and the
/// guide's live model, which records with its stand-in as a reader without a key does (the
/// parent removes `OPENAI_API_KEY`).
fn child(
    request: fn(&str) -> Value,
    proposals: fn(&Value) -> Result<Vec<Value>, String>,
) -> ExitCode {
    let case = move |case: &Case, llm: &mut Llm| -> proposal_eval::Result<Vec<Value>> {
        let message = case.input["message"].as_str().ok_or("no message")?;
        let reply = llm.complete(&request(message))?;
        Ok(proposals(&reply)?)
    };
    Harness::new("fixtures/payments")
        .model(live_model::openai)
        .run(case)
}

fn crate_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn docs_dir() -> PathBuf {
    crate_root().join("../../docs")
}

/// The live model of the guide, against the stand-in server: the request goes over HTTP and the
/// reply comes back as the code under test reads it.
fn live_model_round_trip() -> Result<(), Failed> {
    use proposal_eval::Model;
    let base_url = stand_in::start().map_err(|e| format!("stand-in server: {e}"))?;
    let model = live_model::ChatCompletions::new(&base_url, "test-key");
    let reply = model
        .complete(&first_suite::request("Please change my payment to 120 EUR"))
        .map_err(|e| format!("the live model failed: {e}"))?;
    let proposals = first_suite::proposals(&reply)?;
    let expected = serde_json::json!([{ "changeType": "change", "changedField": "payment.amount", "newValue": 120 }]);
    if Value::Array(proposals.clone()) != expected {
        return Err(format!("unexpected proposals {proposals:?}").into());
    }
    let wrong = live_model::ChatCompletions::new(&format!("{base_url}/nowhere"), "k");
    match wrong.complete(&first_suite::request("x")) {
        Err(e) if e.to_string().contains("404") => Ok(()),
        other => Err(format!("a 404 must be a ModelError naming it, got {other:?}").into()),
    }
}

/// Re-records the suite in a copy with the stand-in server: every interaction equals the
/// committed one, so the committed recordings are what this crate's code records.
fn recordings_reproduce() -> Result<(), Failed> {
    let copy = Copy::new()?;
    let output = copy.run("fixed", Some("1"))?;
    let committed = crate_root().join("fixtures/payments/recordings");
    let mut compared = 0;
    for entry in std::fs::read_dir(&committed).map_err(|e| e.to_string())? {
        let path = entry.map_err(|e| e.to_string())?.path();
        let name = path.file_name().unwrap_or_default();
        let read = |p: &Path| -> Result<Value, Failed> {
            let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
            let mut value: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
            value["recorded_at"] = Value::Null;
            for interaction in value["interactions"].as_array_mut().into_iter().flatten() {
                interaction["recorded_at"] = Value::Null;
                // How long the call took: a time, like `recorded_at`.
                if let Some(fields) = interaction.as_object_mut() {
                    fields.remove("latency_ms");
                }
            }
            Ok(value)
        };
        let again = copy.root.join("fixtures/payments/recordings").join(name);
        if read(&path)? != read(&again)? {
            return Err(format!(
                "{} differs from what the code records now (re-record: FIRST_SUITE_CHILD=fixed RECORD=1 cargo test -p first-suite --test docs)\n{output}",
                path.display()
            )
            .into());
        }
        compared += 1;
    }
    if compared == 0 {
        return Err("no committed recording".into());
    }
    Ok(())
}

/// A new crate made of the guide's `Cargo.toml` lines builds against a clone of this
/// repository's `HEAD` and runs one case (see `support/fresh_crate.rs`).
fn guide_dependency_line() -> Result<(), Failed> {
    let guide = docs_dir().join("guide.md");
    let mut tables = Vec::new();
    for block in blocks(&guide)? {
        if block.check.as_deref() == Some("cargo-toml") {
            tables
                .push(toml::from_str(&block.text).map_err(|e| format!("{}: {e}", block.place()))?);
        }
    }
    fresh_crate::build_and_run(&crate_root(), &tables)?;
    Ok(())
}

/// Every default that a page states for a key of `proposal-eval.toml` is the code's, so a page
/// cannot keep a default the code no longer has:
///
/// - a table row `| `key` | type | default | ... |` under a heading `` `[section]` `` (or
///   config.md's "Top level") whose default is a TOML value: the file `[section] key = default`
///   parses to the same config as an empty file;
/// - a sentence that names the default `evaluators` with a list (`["strict", ...]`): the list is
///   the code's default, `SuiteConfig::default().evaluators`.
fn defaults_are_the_codes() -> Result<(), Failed> {
    let parse =
        |text: &str| parse::SuiteConfig::from_toml_str(text, "proposal-eval.toml").map(effective);
    let empty = parse("").map_err(|e| e.to_string())?;
    let evaluators: Vec<&str> = parse::SuiteConfig::default()
        .evaluators
        .iter()
        .map(|e| e.name())
        .collect();
    let mut files = Vec::new();
    markdown_files(&docs_dir(), &mut files).map_err(|e| format!("docs/: {e}"))?;
    files.push(crate_root().join("../../README.md"));
    let (mut problems, mut rows) = (Vec::new(), 0);
    for file in &files {
        let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let place = |n: usize| format!("{}:{}", file.display(), n + 1);
        let mut section: Option<String> = None;
        let mut column: Option<usize> = None;
        for (n, line) in text.lines().enumerate() {
            if line.starts_with('#') {
                section = config_section(line.trim_start_matches('#').trim());
                column = None;
                continue;
            }
            let cells: Vec<&str> = line
                .trim()
                .trim_matches('|')
                .split(" | ")
                .map(str::trim)
                .collect();
            if line.starts_with("| key |") {
                column = cells.iter().position(|c| *c == "default");
                continue;
            }
            let (Some(section), Some(column)) = (&section, column) else {
                continue;
            };
            let key = cells[0].trim_matches('`');
            let Some(default) = cells.get(column) else {
                continue;
            };
            let value = default
                .strip_prefix('`')
                .and_then(|d| d.strip_suffix('`'))
                .unwrap_or(default);
            let line = format!("{key} = {value}");
            if !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                || toml::from_str::<toml::Table>(&line).is_err()
            {
                continue; // "none", "required", a sentence: not a value to compare
            }
            let doc = match section.as_str() {
                "" => line,
                section => format!("[{section}]\n{line}"),
            };
            rows += 1;
            match parse(&doc) {
                Ok(config) if config == empty => {}
                Ok(_) => problems.push(format!(
                    "{}: the page says `{key}` defaults to {value}, which is not the code's default (fix the page)",
                    place(n)
                )),
                Err(e) => problems.push(format!(
                    "{}: the page says `{key}` defaults to {value}, which the code refuses: {e}",
                    place(n)
                )),
            }
        }
        for (n, paragraph) in paragraphs(&text) {
            for sentence in paragraph.split(". ") {
                if !(sentence.contains("default") && sentence.contains("evaluators")) {
                    continue;
                }
                for list in bracketed(sentence) {
                    let Ok(names) = serde_json::from_str::<Vec<String>>(list) else {
                        continue;
                    };
                    if names != evaluators {
                        problems.push(format!(
                            "{}: the page says the default `evaluators` are {list}; the code's are {evaluators:?}",
                            place(n)
                        ));
                    }
                }
            }
        }
    }
    if rows < 20 {
        problems.push(format!(
            "only {rows} default(s) found in docs/: has the tables' shape changed?"
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

/// A config as the code uses it, written out: the keys whose unset state is `None` hold the
/// value the code then takes (a key added with such a default needs its line here).
fn effective(mut config: parse::SuiteConfig) -> String {
    use proposal_eval::config::{HttpConfig, RunConfig};
    config.strict.discriminator = Some(config.strict.discriminator_location());
    config
        .http
        .timeout_s
        .get_or_insert(HttpConfig::DEFAULT_TIMEOUT_S);
    config.run.repeat.get_or_insert(RunConfig::DEFAULT_REPEAT);
    format!("{config:?}")
}

/// The config section a heading stands for: `` `[judge]` `` is `judge`, "Top level" the file's
/// root (`""`); `None` for any other heading (an array of tables, a fixture's keys, prose).
fn config_section(heading: &str) -> Option<String> {
    if heading == "Top level" {
        return Some(String::new());
    }
    let name = heading.strip_prefix("`[")?.strip_suffix("]`")?;
    name.chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        .then(|| name.to_string())
}

/// The paragraphs of a Markdown text outside code blocks, each as one line, with the 0-based
/// line it starts on.
fn paragraphs(text: &str) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    let (mut fenced, mut open) = (false, false);
    for (n, line) in text.lines().enumerate() {
        if line.starts_with("```") {
            fenced = !fenced;
            open = false;
            continue;
        }
        // A table is not prose (its rows are checked above).
        if fenced || line.trim().is_empty() || line.starts_with('|') {
            open = false;
            continue;
        }
        match out.last_mut() {
            Some((_, paragraph)) if open => {
                paragraph.push(' ');
                paragraph.push_str(line.trim());
            }
            _ => out.push((n, line.trim().to_string())),
        }
        open = true;
    }
    out
}

/// Every `[...]` of `text` (not nested), brackets included.
fn bracketed(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find('[') {
        let Some(len) = rest[start..].find(']') else {
            break;
        };
        out.push(&rest[start..=start + len]);
        rest = &rest[start + len + 1..];
    }
    out
}

/// Every public method of `Harness`, `Llm` and `Case` is in docs/reference/rust-api.md, as
/// `.name(` or `Type::name(`.
fn api_reference() -> Result<(), Failed> {
    let page = std::fs::read_to_string(docs_dir().join("reference/rust-api.md"))
        .map_err(|e| e.to_string())?;
    let mut missing = Vec::new();
    for (ty, file) in [
        ("Harness", "runtime/src/front/harness.rs"),
        ("Llm", "recording/src/recording/llm.rs"),
        ("Case", "runtime/src/run/case.rs"),
    ] {
        let source = std::fs::read_to_string(crate_root().join("../..").join(file))
            .map_err(|e| format!("{file}: {e}"))?;
        let methods = public_methods(&source, ty);
        if methods.is_empty() {
            missing.push(format!("{file}: no `impl {ty}` with public methods found"));
        }
        for method in methods {
            if !page.contains(&format!(".{method}(")) && !page.contains(&format!("{ty}::{method}("))
            {
                missing.push(format!(
                    "`{ty}::{method}` ({file}) is not in docs/reference/rust-api.md: add it to the table of `{ty}`"
                ));
            }
        }
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(missing.join("\n").into())
    }
}

/// The names of the `pub fn`s of `impl Ty { ... }` blocks in `source` (indented one level),
/// but those under `#[doc(hidden)]`: the runtime's own calls into the recording crate, public
/// only because they cross a crate boundary.
fn public_methods(source: &str, ty: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    let mut hidden = false;
    for line in source.lines() {
        if line.starts_with("impl ") {
            inside = line == format!("impl {ty} {{");
        } else if line.starts_with('}') {
            inside = false;
        } else if inside {
            if let Some(rest) = line.strip_prefix("    pub fn ") {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !hidden {
                    out.push(name);
                }
            }
            if line == "    #[doc(hidden)]" {
                hidden = true;
            } else if !line.trim_start().starts_with("#[") && !line.trim_start().starts_with("///")
            {
                hidden = false;
            }
        }
    }
    out
}

/// The crates are not on crates.io yet: no command in docs/ or a README installs the CLI from
/// there (`cargo install cargo-proposal-eval` without `--git` or `--path`).
fn cli_install() -> Result<(), Failed> {
    let mut files = Vec::new();
    markdown_files(&docs_dir(), &mut files).map_err(|e| format!("docs/: {e}"))?;
    for readme in ["README.md", "cli/README.md"] {
        files.push(crate_root().join("../..").join(readme));
    }
    let mut problems = Vec::new();
    for file in &files {
        for block in blocks(file)? {
            for line in block.text.lines() {
                if line.contains("cargo install")
                    && line.contains("cargo-proposal-eval")
                    && !line.contains("--git")
                    && !line.contains("--path")
                {
                    problems.push(format!(
                        "{}: `{}` installs from crates.io, where the CLI is not published: `cargo install --git {} cargo-proposal-eval --locked`",
                        block.place(),
                        line.trim(),
                        workspace_package("repository")
                    ));
                }
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

/// A copy of this crate's suite and prompts in a temporary folder, which a child run takes as
/// its crate root: the checks never touch the committed files.
struct Copy {
    root: PathBuf,
}

impl Copy {
    fn new() -> Result<Copy, Failed> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let root = std::env::temp_dir().join(format!(
            "first-suite-docs-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&root);
        for dir in ["fixtures", "prompts"] {
            copy_dir(&crate_root().join(dir), &root.join(dir))
                .map_err(|e| format!("copying {dir}: {e}"))?;
        }
        Ok(Copy { root })
    }

    /// Runs the suite in the copy; returns what it printed, stdout then stderr.
    fn run(&self, code: &str, record: Option<&str>) -> Result<String, Failed> {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let output = Command::new(exe)
            .env(CHILD, code)
            .env("CARGO_MANIFEST_DIR", &self.root)
            .env("RECORD", record.unwrap_or("0"))
            .env("NO_COLOR", "1")
            .env_remove("CLICOLOR_FORCE")
            // The guide followed without a key: its live model records with the stand-in.
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .current_dir(&self.root)
            .args(["--test-threads", "1"])
            .output()
            .map_err(|e| format!("cannot run the suite: {e}"))?;
        Ok(format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

impl Drop for Copy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

/// One fenced block of a Markdown file.
struct Block {
    file: PathBuf,
    /// 1-based line of the opening fence.
    line: usize,
    lang: String,
    /// The `check:` comment right above the fence, if any.
    check: Option<String>,
    text: String,
}

impl Block {
    /// The language without rustdoc's attributes: `rust` for `rust,no_run`.
    fn language(&self) -> &str {
        self.lang.split(',').next().unwrap_or_default()
    }

    fn place(&self) -> String {
        format!("{}:{}", self.file.display(), self.line)
    }
}

fn blocks(file: &Path) -> Result<Vec<Block>, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(lang) = lines[i].strip_prefix("```") else {
            i += 1;
            continue;
        };
        let check = i
            .checked_sub(1)
            .and_then(|above| lines[above].trim().strip_prefix("<!-- check:"))
            .and_then(|c| c.strip_suffix("-->"))
            .map(|c| c.trim().to_string());
        let start = i;
        let end = (i + 1..lines.len())
            .find(|&n| lines[n] == "```")
            .ok_or_else(|| format!("{}:{}: unclosed code block", file.display(), i + 1))?;
        out.push(Block {
            file: file.to_path_buf(),
            line: start + 1,
            lang: lang.trim().to_string(),
            check,
            text: lines[start + 1..end].join("\n"),
        });
        i = end + 1;
    }
    Ok(out)
}

fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            markdown_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
    Ok(())
}

fn check_docs() -> Result<(), Failed> {
    let mut files = Vec::new();
    markdown_files(&docs_dir(), &mut files).map_err(|e| format!("docs/: {e}"))?;
    files.sort();
    let mut problems = Vec::new();
    let mut checked = 0;
    for file in &files {
        let blocks = blocks(file)?;
        for (n, block) in blocks.iter().enumerate() {
            let prev = n.checked_sub(1).map(|p| &blocks[p]);
            let next = blocks.get(n + 1);
            match check_block(block, prev, next) {
                Ok(true) => checked += 1,
                Ok(false) => {}
                Err(problem) => problems.push(format!("{}: {problem}", block.place())),
            }
        }
    }
    if checked == 0 {
        problems.push("no block of docs/ was checked".into());
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n\n").into())
    }
}

/// Checks one block; `Ok(false)` for a block that needs no check (shell commands, outputs
/// without a `check:` line).
fn check_block(block: &Block, prev: Option<&Block>, next: Option<&Block>) -> Result<bool, String> {
    let Some(check) = &block.check else {
        return match block.lang.as_str() {
            "rust" | "toml" | "json" | "jsonl" => Err(format!(
                "a `{}` block without a `<!-- check: ... -->` line above it",
                block.lang
            )),
            _ => Ok(false),
        };
    };
    let (kind, rest) = check.split_once(' ').unwrap_or((check, ""));
    let rest = rest.trim();
    let next_text = || -> Result<&str, String> {
        next.map(|b| b.text.as_str())
            .ok_or_else(|| "the message block that should follow is missing".to_string())
    };
    match kind {
        "file" | "part" => {
            let path = crate_root().join(rest);
            let content =
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let whole = format!("{}\n", block.text);
            let ok = if kind == "file" {
                content == whole
            } else {
                content.contains(&whole)
            };
            if !ok {
                return Err(format!(
                    "the block is not {} examples/first-suite/{rest}: copy the file into the guide (or fix the file)",
                    if kind == "file" { "the whole of" } else { "a part of" }
                ));
            }
        }
        "cargo-toml" if rest == "published" => check_published(&block.text)?,
        "cargo-toml" => check_cargo_toml(&block.text)?,
        "config" => {
            parse::SuiteConfig::from_toml_str(&block.text, "proposal-eval.toml")
                .map_err(|e| e.to_string())?;
        }
        "config-error" => match parse::SuiteConfig::from_toml_str(&block.text, rest) {
            Ok(_) => return Err("the config parses, but the docs say it is an error".into()),
            Err(e) => same(&e.to_string(), next_text()?)?,
        },
        "fixture" => {
            parse::FixtureFile::parse(block.text.as_bytes(), "fixture.json")
                .map_err(|e| e.to_string())?;
        }
        "fixture-error" => match parse::FixtureFile::parse(block.text.as_bytes(), rest) {
            Ok(_) => return Err("the fixture parses, but the docs say it is an error".into()),
            Err(e) => same(&e.to_string(), next_text()?)?,
        },
        "recording" => {
            parse::Recording::parse(block.text.as_bytes(), Path::new("recording.json"))
                .map_err(|e| e.to_string())?;
        }
        "pending" => {
            parse::Pending::parse(block.text.as_bytes(), Path::new("case.pending.json"))
                .map_err(|e| e.to_string())?;
        }
        "json" => {
            serde_json::from_str::<Value>(&block.text).map_err(|e| e.to_string())?;
        }
        "jsonl" => {
            for line in block.text.lines().filter(|l| !l.trim().is_empty()) {
                serde_json::from_str::<Value>(line).map_err(|e| format!("{e}: {line}"))?;
            }
        }
        "toml" => {
            toml::from_str::<toml::Table>(&block.text).map_err(|e| e.to_string())?;
        }
        "run" => check_run(block, rest, prev)?,
        "doctest" => {
            if block.language() != "rust" {
                return Err("`doctest` is for rust blocks".into());
            }
            let lib = std::fs::read_to_string(crate_root().join("../../runtime/src/lib.rs"))
                .map_err(|e| e.to_string())?;
            let name = block.file.strip_prefix(docs_dir()).unwrap_or(&block.file);
            let include = format!("../../docs/{}", name.display());
            if !lib.contains(&include) {
                return Err(format!(
                    "runtime/src/lib.rs does not include {include} as a doctest, so this block is never run"
                ));
            }
        }
        "none" if !rest.is_empty() => return Ok(false),
        other => return Err(format!("unknown check `{other}` (see tests/docs.rs)")),
    }
    Ok(true)
}

fn same(actual: &str, documented: &str) -> Result<(), String> {
    if actual == documented {
        Ok(())
    } else {
        Err(format!(
            "the message is not what the docs show\n--- docs\n{documented}\n--- actual\n{actual}"
        ))
    }
}

/// Every key of the guide's `Cargo.toml` lines is in this crate's manifest with the same value.
fn check_cargo_toml(text: &str) -> Result<(), String> {
    let guide: toml::Table = toml::from_str(text).map_err(|e| e.to_string())?;
    let manifest =
        std::fs::read_to_string(crate_root().join("Cargo.toml")).map_err(|e| e.to_string())?;
    let ours: toml::Table = toml::from_str(&manifest).map_err(|e| e.to_string())?;
    for (section, value) in &guide {
        let Some(mine) = ours.get(section) else {
            return Err(format!("this crate's Cargo.toml has no `{section}`"));
        };
        match (value, mine) {
            (toml::Value::Table(keys), toml::Value::Table(mine)) => {
                for (key, value) in keys {
                    let found = mine.get(key);
                    let same = match (key.as_str(), found) {
                        ("proposal-eval", Some(toml::Value::Table(dep))) => {
                            dep.get("path").and_then(|p| p.as_str()) == Some("../../runtime")
                                && is_the_git_line(value)
                        }
                        (_, found) => found == Some(value),
                    };
                    if !same {
                        return Err(format!(
                            "[{section}] {key} = {value} is not in this crate's Cargo.toml"
                        ));
                    }
                }
            }
            (toml::Value::Array(entries), toml::Value::Array(mine)) => {
                for entry in entries {
                    if !mine.contains(entry) {
                        return Err(format!(
                            "[[{section}]] {entry} is not in this crate's Cargo.toml"
                        ));
                    }
                }
            }
            _ => {
                return Err(format!(
                    "`{section}` has another shape in this crate's Cargo.toml"
                ))
            }
        }
    }
    Ok(())
}

/// `{ git = "<the workspace's repository>" }`, and nothing else.
fn is_the_git_line(value: &toml::Value) -> bool {
    value.as_table().is_some_and(|dep| {
        dep.len() == 1
            && dep.get("git").and_then(|g| g.as_str()) == Some(&workspace_package("repository"))
    })
}

/// `[dev-dependencies] proposal-eval = "V"`, `V` a prefix of the runtime's version.
fn check_published(text: &str) -> Result<(), String> {
    let block: toml::Table = toml::from_str(text).map_err(|e| e.to_string())?;
    let version = block
        .get("dev-dependencies")
        .and_then(|deps| deps.get("proposal-eval"))
        .and_then(|v| v.as_str())
        .ok_or("expected `[dev-dependencies] proposal-eval = \"VERSION\"`")?;
    let ours = workspace_package("version");
    if !ours.starts_with(version) {
        return Err(format!(
            "proposal-eval = \"{version}\" does not match the crates' version {ours}"
        ));
    }
    Ok(())
}

/// A key of the root manifest's `[workspace.package]` (the runtime's version, repository).
fn workspace_package(key: &str) -> String {
    std::fs::read_to_string(crate_root().join("../../Cargo.toml"))
        .ok()
        .and_then(|t| toml::from_str::<toml::Table>(&t).ok())
        .and_then(|t| {
            t.get("workspace")?
                .get("package")?
                .get(key)?
                .as_str()
                .map(str::to_string)
        })
        .unwrap_or_default()
}

/// A `run` check: runs the suite in a copy as the check says, and looks for the block in what
/// it printed. The child is this binary, so the command it prints names `--test docs`; the guide
/// shows `--test evals`, the target that runs the same suite.
fn check_run(block: &Block, spec: &str, prev: Option<&Block>) -> Result<(), String> {
    let copy = Copy::new().map_err(|e| format!("{e:?}"))?;
    let mut code = None;
    let mut record = None;
    for word in spec.split_whitespace() {
        let (key, value) = word
            .split_once('=')
            .ok_or_else(|| format!("`{word}`: expected key=value"))?;
        match key {
            "code" => code = Some(value),
            "record" => record = Some(value),
            "remove" => std::fs::remove_file(copy.root.join(value))
                .map_err(|e| format!("remove {value}: {e}"))?,
            "append" => {
                let text = prev
                    .map(|b| format!("{}\n", b.text))
                    .ok_or("append: no block above this one")?;
                let path = copy.root.join(value);
                let mut content = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
                content.push_str(&text);
                std::fs::write(&path, content).map_err(|e| e.to_string())?;
            }
            _ => return Err(format!("`{key}`: unknown run option")),
        }
    }
    let code = code.ok_or("run: needs code=before_fix or code=fixed")?;
    let output = copy.run(code, record).map_err(|e| format!("{e:?}"))?;
    let normalize = |text: &str| -> String {
        text.lines()
            .map(|line| {
                let line = line.replace("--test docs", "--test evals");
                match line.find("; finished in ") {
                    Some(at) => line[..at].to_string(),
                    None => line,
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    if !normalize(&output).contains(&normalize(&block.text)) {
        return Err(format!(
            "the suite does not print what the docs show\n--- docs\n{}\n--- printed\n{output}",
            block.text
        ));
    }
    Ok(())
}
