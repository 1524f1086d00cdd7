//! The suite config (`proposal-eval.toml`): `SuiteConfig::from_toml_str` never panics, an error
//! names a line inside the text, and a config that loads builds its redactor (its regexes).
#![no_main]

use libfuzzer_sys::fuzz_target;
use proposal_eval::config::SuiteConfig;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match SuiteConfig::from_toml_str(text, "proposal-eval.toml") {
        Ok(config) => {
            let _ = config.recording.redactor();
        }
        Err(e) => {
            let lines = text.split('\n').count();
            assert!(
                e.line <= lines,
                "line {} of a {lines}-line file: {e}",
                e.line
            );
            assert!(e.to_string().starts_with("proposal-eval.toml"), "{e}");
        }
    }
});
