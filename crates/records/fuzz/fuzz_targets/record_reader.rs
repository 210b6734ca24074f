//! Fuzzes the TFRecord reader (all compressions and read options) and the
//! Event / Example / SequenceExample parsers on every record it yields.
//! The first input byte selects compression and options; see
//! `ferroflow_records::fuzzing::read_records`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ferroflow_records::fuzzing::read_records(data);
});
