//! Writes a [`Model`] as a `.tflite` flatbuffer (schema version 3): buffer 0
//! is the empty sentinel, every constant tensor gets its own buffer, and
//! operator codes are listed once each in first-use order, with the
//! deprecated one-byte code filled for codes that fit it, as TensorFlow's
//! converter writes them.

use crate::model::Model;
use crate::schema_generated::tflite as fb;

/// The code TFLite reserves in the one-byte field for codes past 126.
const PLACEHOLDER_FOR_GREATER_OP_CODES: i32 = 127;

/// Serializes `model`.
pub fn write(model: &Model) -> Vec<u8> {
    let mut buffers = vec![fb::Buffer::default()];
    let mut codes: Vec<(i32, Option<String>, i32)> = Vec::new();
    let mut subgraphs = Vec::with_capacity(model.subgraphs.len());
    for sg in &model.subgraphs {
        let tensors = sg
            .tensors
            .iter()
            .map(|t| {
                let buffer = match &t.data {
                    Some(d) => {
                        buffers.push(fb::Buffer {
                            data: Some(d.clone()),
                            offset: 0,
                            size: 0,
                        });
                        (buffers.len() - 1) as u32
                    }
                    None => 0,
                };
                let quantization = t.quant.is_quantized().then(|| {
                    Box::new(fb::QuantizationParameters {
                        scale: Some(t.quant.scale.clone()),
                        zero_point: Some(t.quant.zero_point.clone()),
                        quantized_dimension: t.quant.axis as i32,
                        ..Default::default()
                    })
                });
                fb::Tensor {
                    shape: Some(t.shape.clone()),
                    type_: t.dtype.code(),
                    buffer,
                    name: Some(t.name.clone()),
                    quantization,
                    is_variable: t.is_variable,
                    sparsity: None,
                    shape_signature: t.shape_signature.clone(),
                    has_rank: true,
                }
            })
            .collect();
        let operators = sg
            .operators
            .iter()
            .map(|op| {
                let key = (op.code, op.custom_code.clone(), op.version);
                let index = match codes.iter().position(|c| *c == key) {
                    Some(i) => i,
                    None => {
                        codes.push(key);
                        codes.len() - 1
                    }
                };
                fb::Operator {
                    opcode_index: index as u32,
                    inputs: Some(op.inputs.clone()),
                    outputs: Some(op.outputs.clone()),
                    builtin_options: op.options.clone(),
                    ..Default::default()
                }
            })
            .collect();
        subgraphs.push(fb::SubGraph {
            tensors: Some(tensors),
            inputs: Some(sg.inputs.clone()),
            outputs: Some(sg.outputs.clone()),
            operators: Some(operators),
            name: Some(sg.name.clone()),
        });
    }
    let metadata = model
        .metadata
        .iter()
        .map(|(name, bytes)| {
            buffers.push(fb::Buffer {
                data: Some(bytes.clone()),
                offset: 0,
                size: 0,
            });
            fb::Metadata {
                name: Some(name.clone()),
                buffer: (buffers.len() - 1) as u32,
            }
        })
        .collect();
    let signature_defs = model
        .signatures
        .iter()
        .map(|s| {
            let maps = |v: &[(String, u32)]| {
                v.iter()
                    .map(|(n, i)| fb::TensorMap {
                        name: Some(n.clone()),
                        tensor_index: *i,
                    })
                    .collect()
            };
            fb::SignatureDef {
                inputs: Some(maps(&s.inputs)),
                outputs: Some(maps(&s.outputs)),
                signature_key: Some(s.key.clone()),
                unused_deprecated_tag: None,
                subgraph_index: s.subgraph,
            }
        })
        .collect();
    let operator_codes = codes
        .into_iter()
        .map(|(code, custom, version)| fb::OperatorCode {
            deprecated_builtin_code: code.min(PLACEHOLDER_FOR_GREATER_OP_CODES) as i8,
            custom_code: custom,
            version,
            builtin_code: code,
        })
        .collect();
    let root = fb::Model {
        version: 3,
        operator_codes: Some(operator_codes),
        subgraphs: Some(subgraphs),
        description: Some(model.description.clone()),
        buffers: Some(buffers),
        metadata_buffer: None,
        metadata: Some(metadata),
        signature_defs: Some(signature_defs),
    };
    let mut builder = planus::Builder::new();
    let mut bytes = builder.finish(&root, Some(FILE_IDENTIFIER)).to_vec();
    // planus 1.3 writes the identifier first and then the root offset,
    // counted from the offset's own position (byte 4). FlatBuffers (and
    // TFLite) want the offset at byte 0, counted from the buffer start, and
    // the identifier at byte 4.
    if bytes.len() >= 8 && bytes[..4] == FILE_IDENTIFIER {
        let root = u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]) + 4;
        bytes[..4].copy_from_slice(&root.to_le_bytes());
        bytes[4..8].copy_from_slice(&FILE_IDENTIFIER);
    }
    bytes
}

/// TFLite's FlatBuffers file identifier.
const FILE_IDENTIFIER: [u8; 4] = *b"TFL3";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{DType, OpDef, Subgraph, TensorDef};
    use crate::quant::QuantParams;

    #[test]
    fn written_model_reads_back_equal() {
        let t = |name: &str, data: Option<Vec<u8>>| TensorDef {
            name: name.into(),
            dtype: DType::F32,
            shape: vec![1, 2],
            shape_signature: None,
            quant: QuantParams::default(),
            data,
            is_variable: false,
        };
        let model = Model {
            version: 3,
            description: "test".into(),
            subgraphs: vec![Subgraph {
                name: "main".into(),
                tensors: vec![t("x", None), t("y", Some(vec![0; 8])), t("z", None)],
                inputs: vec![0],
                outputs: vec![2],
                operators: vec![OpDef {
                    code: 0,
                    custom_code: None,
                    version: 1,
                    inputs: vec![0, 1],
                    outputs: vec![2],
                    options: Some(fb::BuiltinOptions::AddOptions(Box::default())),
                }],
            }],
            metadata: vec![("min_runtime_version".into(), b"1.14.0".to_vec())],
            signatures: vec![],
        };
        let bytes = write(&model);
        assert_eq!(&bytes[4..8], b"TFL3");
        let back = Model::from_bytes(&bytes).unwrap();
        assert_eq!(back, model);
    }
}
