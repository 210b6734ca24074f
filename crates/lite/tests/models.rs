//! TensorFlow's .tflite fixtures: read, written back and read again to the
//! same model; run in the interpreter; corrupted copies give errors, never
//! panics.

use ferroflow_lite::{writer, Interpreter, Model};

const MODELS: &[(&str, &[u8])] = &[
    (
        "mlp_float",
        include_bytes!("../../../tests/fixtures/tflite/mlp_float.tflite"),
    ),
    (
        "convnet_float",
        include_bytes!("../../../tests/fixtures/tflite/convnet_float.tflite"),
    ),
    (
        "mlp_int8",
        include_bytes!("../../../tests/fixtures/tflite/mlp_int8.tflite"),
    ),
    (
        "convnet_int8",
        include_bytes!("../../../tests/fixtures/tflite/convnet_int8.tflite"),
    ),
    (
        "convnet_f16",
        include_bytes!("../../../tests/fixtures/tflite/convnet_f16.tflite"),
    ),
    (
        "convnet_dynamic",
        include_bytes!("../../../tests/fixtures/tflite/convnet_dynamic.tflite"),
    ),
];

#[test]
fn tf_models_round_trip_through_the_writer() {
    for (name, bytes) in MODELS {
        let model = Model::from_bytes(bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(model.version, 3);
        assert!(
            model.metadata_str("min_runtime_version").is_some(),
            "{name}"
        );
        let again = Model::from_bytes(&writer::write(&model)).unwrap();
        assert_eq!(again, model, "{name}");
    }
}

#[test]
fn float_models_run() {
    for (name, bytes) in &MODELS[..2] {
        let mut it = Interpreter::from_bytes(bytes, 1).unwrap();
        it.allocate_tensors().unwrap();
        it.invoke().unwrap();
        let out = it.tensor(it.outputs()[0] as i64).unwrap();
        let probs: &[f32] = out.as_slice();
        let sum: f32 = probs.iter().sum();
        assert!((sum - 1.0).abs() < 1e-5, "{name}: softmax sums to {sum}");
    }
}

#[test]
fn truncated_and_corrupted_models_give_errors() {
    let (_, bytes) = MODELS[1];
    for len in [0, 7, 8, 64, bytes.len() / 2, bytes.len() - 1] {
        assert!(
            Model::from_bytes(&bytes[..len]).is_err(),
            "truncated to {len}"
        );
    }
    // Deterministic byte flips: every outcome is Ok or Err, never a panic.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..300 {
        let mut bad = bytes.to_vec();
        for _ in 0..6 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let pos = (state % bad.len() as u64) as usize;
            bad[pos] = (state >> 32) as u8;
        }
        if let Ok(mut it) = Interpreter::from_bytes(&bad, 1) {
            if it.allocate_tensors().is_ok() {
                let _ = it.invoke();
            }
        }
    }
}

#[test]
fn bad_indices_are_named() {
    let (_, bytes) = MODELS[0];
    let mut model = Model::from_bytes(bytes).unwrap();
    model.subgraphs[0].operators[0].inputs[0] = 999;
    let err = Model::from_bytes(&writer::write(&model))
        .unwrap_err()
        .to_string();
    assert!(err.contains("999") && err.contains("out of range"), "{err}");
}
