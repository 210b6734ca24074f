//! Fuzzes the frame decoder a task runs on every request from the network
//! (`ferroflow_dist::wire::decode_frame`: header length, protobuf envelope,
//! tensor metadata and bytes). A frame that decodes must survive a write and
//! a second decode unchanged. See `ferroflow_dist::fuzzing::frame`.
//!
//! `cargo +nightly fuzz run frame` in `crates/dist/fuzz`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ferroflow_dist::fuzzing::frame(data);
});
