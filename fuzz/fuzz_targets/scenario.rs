//! The scenario parser and validator against arbitrary input: any bytes must
//! give a scenario or a `ScenarioError` (and its message must format), never a
//! panic. `cargo fuzz run scenario fuzz/corpus/scenario` (see fuzz/README.md).
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use retry_storm::scenario;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match scenario::parse(text, Path::new("fuzz.toml")) {
        Ok(s) => {
            // A valid scenario's notes must be computable too.
            let _ = scenario::retry_after_notes(&s);
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
