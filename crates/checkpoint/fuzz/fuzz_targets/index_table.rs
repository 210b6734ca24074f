//! Fuzzes the `.index` table parser (footer, block handles, block CRCs,
//! prefix-compressed entries) on arbitrary bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ferroflow_checkpoint::fuzzing::parse_index(data);
});
