//! What a replayed case pays for calling its model through `llm.base_url()` rather than
//! `llm.complete`: the same 1,000 cases, each a replaying `Llm` of one recorded chat completion
//! (the committed `where_is_my_order` of examples/support-agent, call [0]), run one after the
//! other as one test thread runs them.
//!
//! - `llm_complete`: the case calls `llm.complete(&request)`.
//! - `through_base_url`: the case asks `llm.base_url()` for its base URL, builds its own
//!   blocking client (ureq, as code under test builds one from a base URL), posts the request
//!   and reads the answer; then the case ends (`Llm` dropped).
//!
//! `cargo bench -p proposal-eval --features http --bench replay_cases`. Each sample is the 1,000
//! cases; the difference of the two medians divided by 1,000 is the proxy's cost per case
//! (target: 100 µs or less, DESIGN section 16). With `REPLAY_CASES_ONCE=1` the binary runs the
//! 1,000 cases once on each side and prints both times and the difference per case.

use criterion::Criterion;
use proposal_eval::__internal::llm;
use proposal_eval::__internal::recording::{Interaction, Recording};
use std::path::Path;
use std::time::{Duration, Instant};

const CASES: usize = 1000;

/// The recorded chat completion (JSON with a tool call).
fn recorded() -> Interaction {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/support-agent/fixtures/support/recordings/where_is_my_order.json");
    let recording = Recording::read(&file)
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("{} is missing", file.display()));
    recording.interactions()[0].clone()
}

/// The same call as `llm.complete` records it (no HTTP exchange).
fn complete_cases(interaction: &Interaction) -> Duration {
    let mut interaction = interaction.clone();
    interaction.http = None;
    let interaction = &interaction;
    let started = Instant::now();
    for _ in 0..CASES {
        let mut llm = llm::replay(vec![interaction.clone()]);
        let response = llm.complete(&interaction.request).unwrap();
        assert!(response.is_object());
        drop(llm);
    }
    started.elapsed()
}

fn proxied_cases(interaction: &Interaction, body: &str) -> Duration {
    let started = Instant::now();
    for _ in 0..CASES {
        let llm = llm::replay(vec![interaction.clone()]);
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        let url = format!("{}/chat/completions", llm.base_url().unwrap());
        let mut response = agent
            .post(&url)
            .header("Content-Type", "application/json")
            .header("Authorization", "Bearer sk-bench")
            .send(body)
            .unwrap();
        assert_eq!(response.status().as_u16(), 200);
        let answer = response.body_mut().read_to_vec().unwrap();
        assert!(!answer.is_empty());
        assert_eq!(llm.calls(), 1);
        drop(llm);
    }
    started.elapsed()
}

fn main() {
    let interaction = recorded();
    let body = serde_json::to_string(&interaction.request).unwrap();
    if std::env::var_os("REPLAY_CASES_ONCE").is_some() {
        // One run of each side, printed: what a single suite of 1,000 cases takes.
        let complete = complete_cases(&interaction);
        let proxied = proxied_cases(&interaction, &body);
        let per_case = (proxied.as_secs_f64() - complete.as_secs_f64()) / CASES as f64;
        eprintln!(
            "{CASES} cases: llm.complete {complete:?}, through llm.base_url() {proxied:?}: {:.1} µs more per case",
            per_case * 1e6
        );
        return;
    }
    let mut c = Criterion::default()
        .sample_size(10)
        .measurement_time(Duration::from_secs(8))
        .configure_from_args();
    let mut group = c.benchmark_group("1000_replayed_cases");
    group.bench_function("llm_complete", |b| {
        b.iter_custom(|n| (0..n).map(|_| complete_cases(&interaction)).sum())
    });
    group.bench_function("through_base_url", |b| {
        b.iter_custom(|n| (0..n).map(|_| proxied_cases(&interaction, &body)).sum())
    });
    group.finish();
    c.final_summary();
}
