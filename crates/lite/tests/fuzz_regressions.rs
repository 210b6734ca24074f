//! Models the `tflite_model` fuzz target (crates/lite/fuzz) found crashing
//! the loader or the interpreter, rebuilt by hand: each must now give an
//! error (or run), never panic.

use ferroflow_lite::schema as fb;
use ferroflow_lite::{Interpreter, Model};

/// An operator: builtin code, input and output tensor indices.
type Op<'a> = (i32, &'a [i32], &'a [i32]);

/// A one-subgraph model: float tensors of the given shapes (tensor 0 the
/// model input), operators `(builtin code, inputs, outputs)` in order.
/// Tensor 1 takes buffer 1 (`data`) when there is one; the others have none.
fn model_ops(shapes: &[&[i32]], ops: &[Op<'_>], data: Option<Vec<u8>>) -> Vec<u8> {
    let with_data = data.is_some();
    let tensors = shapes
        .iter()
        .enumerate()
        .map(|(i, s)| fb::Tensor {
            shape: Some(s.to_vec()),
            type_: 0,
            buffer: u32::from(with_data && i == 1),
            name: Some(format!("t{i}")),
            ..Default::default()
        })
        .collect();
    let model = fb::Model {
        version: 3,
        operator_codes: Some(
            ops.iter()
                .map(|&(code, _, _)| fb::OperatorCode {
                    deprecated_builtin_code: code.min(127) as i8,
                    builtin_code: code,
                    version: 1,
                    ..Default::default()
                })
                .collect(),
        ),
        subgraphs: Some(vec![fb::SubGraph {
            tensors: Some(tensors),
            inputs: Some(vec![0]),
            outputs: Some(vec![0]),
            operators: Some(
                ops.iter()
                    .enumerate()
                    .map(|(k, &(_, inputs, outputs))| fb::Operator {
                        opcode_index: k as u32,
                        inputs: Some(inputs.to_vec()),
                        outputs: Some(outputs.to_vec()),
                        ..Default::default()
                    })
                    .collect(),
            ),
            name: None,
        }]),
        buffers: Some(vec![
            fb::Buffer::default(),
            fb::Buffer {
                data,
                ..Default::default()
            },
        ]),
        ..Default::default()
    };
    let mut bytes = planus::Builder::new()
        .finish(&model, Some(*b"TFL3"))
        .to_vec();
    // planus 1.3 writes the identifier first and then the root offset
    // (counted from where it stands, byte 4); FlatBuffers files have the
    // offset first, counted from byte 0, then the identifier.
    assert_eq!(bytes[..4], *b"TFL3");
    let root = u32::from_le_bytes(bytes[4..8].try_into().unwrap()) + 4;
    bytes[..4].copy_from_slice(&root.to_le_bytes());
    bytes[4..8].copy_from_slice(b"TFL3");
    bytes
}

fn model_bytes(shapes: &[&[i32]], code: i32, inputs: &[i32], outputs: &[i32]) -> Vec<u8> {
    model_ops(shapes, &[(code, inputs, outputs)], None)
}

/// Fuzzer crash 1: a CONCATENATION operator with no outputs made the kernel
/// builder index `outputs[0]` (index out of bounds).
#[test]
fn concatenation_without_outputs_is_an_error() {
    let bytes = model_bytes(&[&[1, 2], &[1, 2]], 2, &[0, 1], &[]);
    let model = Model::from_bytes(&bytes).expect("the model itself is well-formed");
    match Interpreter::new(model, 1) {
        Err(_) => {}
        Ok(mut it) => assert!(
            it.allocate_tensors().is_err(),
            "an operator without outputs must not allocate"
        ),
    }
}

/// Declared shapes whose byte size overflows `usize` give an error from
/// `allocate_tensors` instead of an arithmetic overflow.
#[test]
fn input_shape_overflowing_usize_is_an_error() {
    let huge = i32::MAX;
    let bytes = model_bytes(&[&[huge, huge, huge], &[1]], 19, &[0], &[1]);
    let model = Model::from_bytes(&bytes).expect("the model itself is well-formed");
    let mut it = Interpreter::new(model, 1).expect("RELU builds");
    let err = it
        .allocate_tensors()
        .expect_err("2^93 elements cannot be allocated");
    assert!(err.to_string().contains("too large"), "{err}");
}

/// Fuzzer crash 2: a constant tensor whose shape has more than `usize::MAX`
/// elements overflowed the loader's check of its buffer size.
#[test]
fn constant_shape_overflowing_usize_is_a_load_error() {
    let huge = i32::MAX;
    let bytes = model_ops(
        &[&[1], &[huge, huge, huge]],
        &[(0, &[0, 1], &[0])],
        Some(vec![0; 4]),
    );
    let err = Model::from_bytes(&bytes).expect_err("4 bytes cannot hold 2^93 floats");
    assert!(
        err.to_string().contains("its buffer holds 4 bytes"),
        "{err}"
    );
}

/// Fuzzer crash 3: a CONCATENATION output that a later operator wrote again
/// (with another shape) was smaller than the concatenation when it ran. The
/// interpreter now rejects operators that write a tensor twice, write a
/// constant or a model input, or read a tensor nothing wrote yet.
#[test]
fn operators_must_write_each_tensor_once_and_read_written_ones() {
    const CONCAT: i32 = 2;
    const RELU: i32 = 19;
    let cases: [(&str, &[Op<'_>]); 4] = [
        (
            "written before",
            &[(CONCAT, &[0, 0], &[1]), (RELU, &[0], &[1])],
        ),
        ("written before", &[(RELU, &[0], &[0])]),
        ("no earlier operator writes", &[(RELU, &[1], &[2])]),
        (
            "no earlier operator writes",
            &[(RELU, &[2], &[1]), (RELU, &[0], &[2])],
        ),
    ];
    for (want, ops) in cases {
        let bytes = model_ops(&[&[1, 2], &[1, 4], &[1, 2]], ops, None);
        let model = Model::from_bytes(&bytes).expect("the model itself is well-formed");
        let err = Interpreter::new(model, 1).err().expect("must be rejected");
        assert!(err.to_string().contains(want), "{ops:?}: {err}");
    }
    // The same operators in a valid order run.
    let bytes = model_ops(
        &[&[1, 2], &[1, 4], &[1, 2]],
        &[(RELU, &[0], &[2]), (CONCAT, &[0, 2], &[1])],
        None,
    );
    let mut it = Interpreter::new(Model::from_bytes(&bytes).unwrap(), 1).unwrap();
    it.allocate_tensors().unwrap();
    it.invoke().unwrap();
}

/// The checks above accept TF's converted models.
#[test]
fn tf_float_fixtures_still_run() {
    for bytes in [
        &include_bytes!("../../../tests/fixtures/tflite/mlp_float.tflite")[..],
        &include_bytes!("../../../tests/fixtures/tflite/convnet_float.tflite")[..],
    ] {
        let mut it = Interpreter::from_bytes(bytes, 1).unwrap();
        it.allocate_tensors().unwrap();
        it.invoke().unwrap();
    }
}
