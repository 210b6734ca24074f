//! Fuzzes DecodeProtoV2's decoder (`ferroflow_data::proto::ProtoDecoder`)
//! on untrusted bytes: the input is split on the byte 0xFE into serialized
//! messages of the test schema (tests/fixtures/proto_ops/test_messages.desc:
//! every scalar type, packed and unpacked repeated fields, groups, nested
//! messages, extensions) and decoded as binary, as sanitized binary and as
//! text. Errors are fine; panics and hangs are not, and a successful decode
//! must have consistent shapes (each field's last dimension at least 1 and
//! at least every message's count).
//!
//! `cargo fuzz run decode_proto` (nightly); see parse_example.rs for the
//! stable-toolchain build.
#![no_main]

use std::sync::OnceLock;

use ferroflow_data::proto::ProtoDecoder;
use ferroflow_tensor::DType;
use libfuzzer_sys::fuzz_target;

const DESC: &[u8] = include_bytes!("../../../../tests/fixtures/proto_ops/test_messages.desc");

const FIELDS: &[(&str, DType)] = &[
    ("f_double", DType::Float64),
    ("f_float", DType::Float32),
    ("f_int64", DType::Int64),
    ("f_int32", DType::Int64),
    ("f_bool", DType::Bool),
    ("f_string", DType::String),
    ("f_message", DType::String),
    ("f_enum", DType::Int32),
    ("f_sfixed32", DType::Int32),
    ("f_sint64", DType::Int64),
    ("fgroup", DType::String),
    ("r_float", DType::Float64),
    ("r_int32", DType::Int32),
    ("r_message", DType::String),
    ("r_sint32", DType::Int64),
    ("rgroup", DType::String),
    ("p_double", DType::Float64),
    ("p_int32", DType::Int64),
    ("p_bool", DType::Bool),
    ("p_sfixed64", DType::Int64),
    ("p_enum", DType::Int32),
    ("ferroflow.test.ext_str", DType::String),
];

fn decoders() -> &'static [ProtoDecoder; 3] {
    static D: OnceLock<[ProtoDecoder; 3]> = OnceLock::new();
    D.get_or_init(|| {
        let mut source = b"bytes://".to_vec();
        source.extend_from_slice(DESC);
        let names: Vec<String> = FIELDS.iter().map(|(n, _)| n.to_string()).collect();
        let types: Vec<DType> = FIELDS.iter().map(|&(_, t)| t).collect();
        let make = |format: &str, sanitize: bool| {
            ProtoDecoder::new(
                &source,
                "ferroflow.test.AllTypes",
                &names,
                &types,
                format,
                sanitize,
            )
            .expect("test schema")
        };
        [
            make("binary", false),
            make("binary", true),
            make("text", false),
        ]
    })
}

fuzz_target!(|data: &[u8]| {
    let bufs: Vec<&[u8]> = data.split(|&b| b == 0xFE).collect();
    for decoder in decoders() {
        if let Ok((sizes, values)) = decoder.decode(&bufs, &[bufs.len()]) {
            let sizes = sizes.as_slice::<i32>().unwrap();
            assert_eq!(sizes.len(), bufs.len() * FIELDS.len());
            for (i, v) in values.iter().enumerate() {
                let dims = v.shape().dims();
                assert_eq!(dims[0], bufs.len());
                assert!(dims[1] >= 1);
                for m in 0..bufs.len() {
                    assert!(sizes[m * FIELDS.len() + i] >= 0);
                    assert!(sizes[m * FIELDS.len() + i] as usize <= dims[1]);
                }
            }
        }
    }
});
