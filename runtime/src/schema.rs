//! The JSON Schemas (draft 2020-12) of the files proposal-eval reads and writes, generated from
//! the types that read and write them (feature `schema`). This repository commits them in
//! `schemas/` and checks that they are what these functions generate (docs/contributing.md,
//! "JSON Schemas"); a field added to one of the types reaches its schema through the derive.

use schemars::generate::{Contract, SchemaSettings};
use schemars::{JsonSchema, Schema};

/// A fixture file (`<suite>/**/*.json`): the keys the fixture parser accepts.
pub fn fixture() -> Schema {
    read::<crate::suite::fixture::FixtureFile>("proposal-eval fixture")
}

/// The suite config, `proposal-eval.toml`, as the JSON value of its TOML.
pub fn config() -> Schema {
    read::<crate::suite::config::SuiteConfig>("proposal-eval suite config (proposal-eval.toml)")
}

/// A recording file (`<suite>/recordings/<case>.json`), as this version writes it.
pub fn recording() -> Schema {
    written::<crate::recording::Written<'static>>("proposal-eval recording")
}

/// `target/proposal-eval/report.json`, as this version writes it.
pub fn report() -> Schema {
    written::<crate::report::Report>("proposal-eval report (report.json)")
}

/// The schema of what a parser accepts (serde's deserialize side).
fn read<T: JsonSchema>(title: &str) -> Schema {
    generate::<T>(Contract::Deserialize, title)
}

/// The schema of what a writer produces (serde's serialize side).
fn written<T: JsonSchema>(title: &str) -> Schema {
    generate::<T>(Contract::Serialize, title)
}

fn generate<T: JsonSchema>(contract: Contract, title: &str) -> Schema {
    let mut settings = SchemaSettings::draft2020_12();
    settings.contract = contract;
    let mut schema = settings.into_generator().into_root_schema_for::<T>();
    schema.insert("title".into(), title.into());
    schema
}
