//! Fuzzes the Example parser (`ParseExampleV2`'s kernel): the input is split
//! on the byte 0xFE into serialized Examples, parsed as one batch and one
//! at a time with a spec holding every feature kind. Errors are fine;
//! panics, hangs and differences between the two paths are not. The same
//! bytes also go through the TensorProto and base64 decoders.
//!
//! `cargo fuzz run parse_example` (nightly), or on stable:
//! `RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4
//! -Cllvm-args=-sanitizer-coverage-inline-8bit-counters
//! -Cllvm-args=-sanitizer-coverage-pc-table -Cllvm-args=-sanitizer-coverage-trace-compares
//! -Cdebug-assertions -Coverflow-checks" cargo build --release --bins --target
//! x86_64-unknown-linux-gnu`, then run the binary on a corpus directory.
#![no_main]

use ferroflow_data::decode::{base64_decode, parse_tensor};
use ferroflow_data::parse::{parse_batch, DenseSpec, SparseSpec, Spec};
use ferroflow_tensor::{DType, Tensor};
use libfuzzer_sys::fuzz_target;

fn spec() -> Spec {
    let dense = |k: &str, d, s: Vec<i64>, def: Option<Tensor>| {
        DenseSpec::new(k.as_bytes().to_vec(), d, s, def).unwrap()
    };
    Spec::new(
        vec![
            SparseSpec {
                key: b"v".to_vec(),
                dtype: DType::Int64,
            },
            SparseSpec {
                key: b"s".to_vec(),
                dtype: DType::String,
            },
        ],
        vec![
            dense(
                "a",
                DType::Float32,
                vec![2],
                Some(Tensor::from_vec(vec![2], vec![0f32, 1.0]).unwrap()),
            ),
            dense("b", DType::Int64, vec![], Some(Tensor::scalar(3i64))),
            dense(
                "c",
                DType::String,
                vec![1],
                Some(Tensor::from_vec(vec![1], vec![b"x".to_vec()]).unwrap()),
            ),
            dense("q", DType::Float32, vec![-1, 2], None),
        ],
    )
    .unwrap()
}

fuzz_target!(|data: &[u8]| {
    let examples: Vec<Vec<u8>> = data.split(|&b| b == 0xfe).map(<[u8]>::to_vec).collect();
    let spec = spec();
    let batch = parse_batch(&spec, &examples, &[], false);
    let each: Vec<_> = examples
        .iter()
        .map(|e| parse_batch(&spec, std::slice::from_ref(e), &[], true))
        .collect();
    // The batch parses exactly when every example does.
    assert_eq!(batch.is_ok(), each.iter().all(Result::is_ok));
    let _ = parse_tensor(data);
    let _ = base64_decode(data);
});
