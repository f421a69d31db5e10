//! `sim import`'s readers against arbitrary input: any text must give an
//! import or an `ImportError` (whose message formats), and an import must
//! write its tables, alone and into a scenario, never panic.
//! `cargo fuzz run import fuzz/corpus/import` (see fuzz/README.md).
#![no_main]

use libfuzzer_sys::fuzz_target;
use retry_storm::import;

/// The scenario an import is written into.
const SCENARIO: &str = include_str!("../../tests/fixtures/small.toml");

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match import::import_text("fuzz.yaml", text) {
        Ok(imported) => {
            let imports = [imported];
            let _ = import::fragment(&imports);
            let _ = import::into_scenario(SCENARIO, "small.toml", &imports);
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
