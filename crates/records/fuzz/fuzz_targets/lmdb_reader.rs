//! Fuzzes the LMDB file reader behind `tf.compat.v1.LMDBReader`: meta
//! pages, B+tree branch and leaf pages, overflow runs. See
//! `ferroflow_records::fuzzing::read_lmdb`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ferroflow_records::fuzzing::read_lmdb(data);
});
