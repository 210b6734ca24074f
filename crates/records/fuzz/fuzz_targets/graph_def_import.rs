//! Fuzzes the GraphDef importer (what loading a SavedModel or a `.meta`
//! file from an untrusted source runs): decode, dependency order, attribute
//! and TensorProto conversion, op lookup and shape inference. See
//! `ferroflow_records::fuzzing::import_graph_def`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ferroflow_records::fuzzing::import_graph_def(data);
});
