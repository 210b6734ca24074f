//! Fuzzes what a task does with a client's RegisterGraph request: decode the
//! `GraphDef`, check it against the ps op allowlist (or not), import it,
//! resolve feed/fetch/target names and compile the run signature. The first
//! input byte picks those options; see
//! `ferroflow_dist::fuzzing::register_graph`.
//!
//! `cargo +nightly fuzz run register_graph` in `crates/dist/fuzz`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ferroflow_dist::fuzzing::register_graph(data);
});
