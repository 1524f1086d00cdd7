//! The failing side of the threshold: `cargo test --test below_threshold`.
//!
//! `fixtures/below-threshold/` holds invoices whose extraction is *not* good enough: scored
//! by the same rules as the main suite (its `proposal-eval.toml` is a copy of
//! `fixtures/invoices/proposal-eval.toml`, checked here), each one ends below a threshold, so its
//! test fails. A suite that always fails cannot sit in `cargo test`, and a
//! suite nobody runs proves nothing. So this target runs it in a child process and checks the
//! child's verdict: this is a test that passes when exactly those cases fail, each for the
//! reason and with the score written below. If the evaluators wrongly passed one of them (or
//! failed it for another reason), this test fails.
//!
//! The same binary is both sides. With `INVOICE_EXTRACTION_BELOW_THRESHOLD=run` set it is the
//! child: an ordinary harness run of the suite, exactly what `tests/evals.rs` does for the main
//! suite (so `RECORD=1` records these cases too). Without it, it is the parent: one libtest test
//! that starts the child with `NO_COLOR=1` and reads its output. To see the failures as a user
//! would:
//!
//! ```sh
//! INVOICE_EXTRACTION_BELOW_THRESHOLD=run cargo test -p invoice-extraction --test below_threshold
//! ```

use libtest_mimic::{Arguments, Failed, Trial};
use proposal_eval::{Case, Harness, Llm};
use serde_json::Value;
use std::process::{Command, ExitCode};

const CHILD: &str = "INVOICE_EXTRACTION_BELOW_THRESHOLD";

fn invoices(case: &Case, llm: &mut Llm) -> proposal_eval::Result<Value> {
    let extraction = invoice_extraction::extract(&case.input, llm)?;
    Ok(serde_json::to_value(extraction)?)
}

/// Every case of the suite, and what its failure must say (each line a substring of the
/// case's failure message, in the order given). A case of the suite missing here, or one that
/// passes, fails the check.
const EXPECTED: &[(&str, &[&str])] = &[
    (
        "garbled_supplier_and_currency",
        &[
            "field_accuracy FAILED (score 0.79)",
            "invoice.currency: expected \"CAD\", actual \"USD\"",
            "supplier.name: similarity 0.79 < 0.85",
            "code_judge:supplier_name FAILED (score 0.71)",
        ],
    ),
    (
        "total_before_deposit",
        &[
            "field_accuracy FAILED (score 0.79)",
            "invoice.total_amount: outside tolerance 0.01 (diff 500)",
        ],
    ),
    (
        "form_layout_boxes_on_labels",
        &[
            "code_judge:bbox_iou FAILED (score 0.21)",
            "box `invoice_number`: IoU 0.00 < 0.5",
        ],
    ),
    (
        "torn_page_total_missing",
        &[
            "field_accuracy FAILED (score 0.54)",
            "invoice.total_amount: missing (required)",
            "invoice.currency: missing (required)",
            "line_items: 1 elements expected, 0 actual",
        ],
    ),
];

/// What must not appear in a case's failure: an evaluator that should have passed it.
const NOT_EXPECTED: &[(&str, &[&str])] = &[
    ("total_before_deposit", &["code_judge:"]),
    ("form_layout_boxes_on_labels", &["field_accuracy FAILED"]),
];

fn main() -> ExitCode {
    if std::env::var(CHILD).as_deref() == Ok("run") {
        return Harness::new("fixtures/below-threshold")
            .model(invoice_extraction::live_model)
            .run(invoices);
    }
    let args = Arguments::from_args();
    let check = Trial::test("below_threshold::cases_fail_with_their_scores", check);
    libtest_mimic::run(&args, vec![check]).exit_code()
}

fn check() -> Result<(), Failed> {
    same_config()?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this test binary: {e}"))?;
    let root = env!("CARGO_MANIFEST_DIR");
    let output = Command::new(exe)
        .env(CHILD, "run")
        .env("NO_COLOR", "1")
        .env("CARGO_MANIFEST_DIR", root)
        .current_dir(root)
        .args(["--test-threads", "2"])
        .output()
        .map_err(|e| format!("cannot run the below-threshold suite: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let shown = || format!("--- child stdout\n{stdout}\n--- child stderr\n{stderr}");

    if output.status.success() {
        return Err(format!(
            "the below-threshold suite passed; every case must fail\n{}",
            shown()
        )
        .into());
    }
    let mut problems = Vec::new();
    let verdicts: Vec<(&str, &str)> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("test below_threshold::"))
        .filter_map(|l| l.split_once(" ... "))
        .map(|(name, verdict)| (name.trim(), verdict.trim()))
        .collect();
    for (name, verdict) in &verdicts {
        match EXPECTED.iter().find(|(n, _)| n == name) {
            None => problems.push(format!(
                "`{name}` is in the suite but not in EXPECTED: say why it fails"
            )),
            Some(_) if *verdict != "FAILED" => problems.push(format!(
                "`{name}` should fail below the threshold, but: {verdict}"
            )),
            Some(_) => {}
        }
    }
    for (name, needles) in EXPECTED {
        if !verdicts.iter().any(|(n, _)| n == name) {
            problems.push(format!("`{name}` did not run"));
            continue;
        }
        let failure = failure_of(&stdout, name);
        let mut from = 0;
        for needle in *needles {
            match failure[from..].find(needle) {
                Some(at) => from += at + needle.len(),
                None => problems.push(format!("`{name}`: the failure does not say `{needle}`")),
            }
        }
        for (_, absent) in NOT_EXPECTED.iter().filter(|(n, _)| n == name) {
            for needle in *absent {
                if failure.contains(needle) {
                    problems.push(format!(
                        "`{name}`: the failure says `{needle}`, it should not"
                    ));
                }
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{}\n{}", problems.join("\n"), shown()).into())
    }
}

/// The below-threshold suite keeps its own copy of the config (so `cargo proposal-eval status`
/// and `prune` see it as a suite like any other); a copy that drifted would test other rules.
fn same_config() -> Result<(), Failed> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |suite: &str| {
        let file = root.join("fixtures").join(suite).join("proposal-eval.toml");
        std::fs::read_to_string(&file)
            .map(|text| text.replace("\r\n", "\n"))
            .map_err(|e| format!("cannot read {}: {e}", file.display()))
    };
    if read("invoices")? != read("below-threshold")? {
        return Err("fixtures/below-threshold/proposal-eval.toml differs from \
                    fixtures/invoices/proposal-eval.toml; copy the main suite's file over it"
            .into());
    }
    Ok(())
}

/// The failure message libtest printed for one test: the block under `---- NAME ----`.
fn failure_of<'a>(stdout: &'a str, name: &str) -> &'a str {
    let header = format!("---- below_threshold::{name} ----");
    let Some(start) = stdout.find(&header) else {
        return "";
    };
    let body = &stdout[start + header.len()..];
    let end = body
        .find("\n---- ")
        .or_else(|| body.find("\nfailures:"))
        .unwrap_or(body.len());
    &body[..end]
}
