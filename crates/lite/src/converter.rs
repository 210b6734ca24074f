//! A frozen TensorFlow `GraphDef` to a TFLite [`Model`]: TensorFlow ops map
//! onto TFLite builtins, with TFLite's converter rewrites (bias adds and
//! inference batch norms folded into the preceding convolution or fully
//! connected layer, Relu/Relu6 fused into it, identities removed, weights
//! laid out as TFLite wants them), then shapes are computed by preparing
//! the model in ferroflow's interpreter, and post-training quantization
//! (float16 weights, dynamic-range int8 weights, or full integer calibrated
//! on representative samples: [`crate::quantize`]) is applied on request.

use std::collections::{HashMap, HashSet};

use ferroflow_records::graph_def::{attr_value, AttrValue, GraphDef, NodeDef};
use ferroflow_records::graph_import::tensor_from_proto;
use ferroflow_tensor::{bail, ensure, DType as TfType, Tensor};
use prost::Message;

use crate::error::{Error, LiteError, Result};
use crate::interpreter::Interpreter;
use crate::model::{DType, Model, OpDef, Signature, Subgraph, TensorDef};
use crate::quant::QuantParams;
use crate::schema::{self as fb, BuiltinOptions};

/// Post-training quantization a conversion applies.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum Quantization {
    /// Float32 throughout.
    #[default]
    None,
    /// Constant float tensors stored as float16, dequantized at load.
    Float16,
    /// Large weights of fully connected layers stored as int8 (TFLite's
    /// hybrid kernels quantize the activations on the fly).
    DynamicRange,
    /// Full-integer quantization calibrated on representative samples
    /// (int8 activations and weights, see [`crate::quantize`]).
    FullInteger(Box<crate::quantize::FullIntegerOptions>),
}

/// What to convert.
#[derive(Clone, Debug, Default)]
pub struct ConvertOptions {
    /// Input tensor names (`name` or `name:0`).
    pub inputs: Vec<String>,
    /// Input shapes (`None`: from the placeholder; unknown dimensions
    /// become 1 with -1 in the shape signature).
    pub input_shapes: Vec<Option<Vec<i64>>>,
    /// Output tensor names.
    pub outputs: Vec<String>,
    /// Post-training quantization.
    pub quantization: Quantization,
}

/// Dynamic-range quantization leaves weights smaller than this in float,
/// as TensorFlow's converter does.
const DYNAMIC_RANGE_MIN_ELEMENTS: usize = 1024;

/// Converts a serialized frozen `GraphDef`.
pub fn convert(graph_def: &[u8], options: &ConvertOptions) -> Result<Vec<u8>> {
    let graph = GraphDef::decode(graph_def)
        .map_err(|e| Error::invalid(format!("the GraphDef does not parse: {e}")))?;
    let model = convert_graph(&graph, options)?;
    Ok(crate::writer::write(&model))
}

/// Splits `node:3` into (`node`, 3); `^node` control inputs give `None`.
fn parse_input(s: &str) -> Option<(&str, usize)> {
    if s.starts_with('^') {
        return None;
    }
    match s.rsplit_once(':') {
        Some((n, i)) => i.parse().ok().map(|i| (n, i)),
        None => Some((s, 0)),
    }
}

fn attr<'a>(node: &'a NodeDef, key: &str) -> Option<&'a attr_value::Value> {
    node.attr
        .get(key)
        .and_then(|a: &AttrValue| a.value.as_ref())
}

fn attr_i(node: &NodeDef, key: &str) -> Option<i64> {
    match attr(node, key) {
        Some(attr_value::Value::I(i)) => Some(*i),
        _ => None,
    }
}

fn attr_f(node: &NodeDef, key: &str) -> Option<f32> {
    match attr(node, key) {
        Some(attr_value::Value::F(f)) => Some(*f),
        _ => None,
    }
}

fn attr_b(node: &NodeDef, key: &str) -> Option<bool> {
    match attr(node, key) {
        Some(attr_value::Value::B(b)) => Some(*b),
        _ => None,
    }
}

fn attr_s(node: &NodeDef, key: &str) -> Option<String> {
    match attr(node, key) {
        Some(attr_value::Value::S(s)) => Some(String::from_utf8_lossy(s).into_owned()),
        _ => None,
    }
}

fn attr_ints(node: &NodeDef, key: &str) -> Vec<i64> {
    match attr(node, key) {
        Some(attr_value::Value::List(l)) => l.i.clone(),
        _ => Vec::new(),
    }
}

/// A value flowing between converted ops.
#[derive(Clone)]
enum Value {
    /// A TFLite tensor index.
    Tensor(i32),
    /// A constant not yet written (folded into the consumer when it can be).
    Const(Tensor),
}

struct Converter<'g> {
    nodes: HashMap<&'g str, &'g NodeDef>,
    consumers: HashMap<String, usize>,
    values: HashMap<String, Value>,
    tensors: Vec<TensorDef>,
    ops: Vec<OpDef>,
    /// Tensor index -> the op that produced it.
    producer: HashMap<i32, usize>,
    inputs: Vec<i32>,
    protected: HashSet<String>,
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    bytemuck::cast_slice(v).to_vec()
}

fn tf_const_to_tensor_def(name: &str, t: &Tensor) -> Result<TensorDef> {
    let shape: Vec<i32> = t.dims().iter().map(|&d| d as i32).collect();
    let (dtype, data) = match t.dtype() {
        TfType::Float32 => (DType::F32, f32_bytes(t.as_slice::<f32>()?)),
        TfType::Int32 => (
            DType::I32,
            bytemuck::cast_slice(t.as_slice::<i32>()?).to_vec(),
        ),
        TfType::Int64 => (
            DType::I64,
            bytemuck::cast_slice(t.as_slice::<i64>()?).to_vec(),
        ),
        TfType::Float64 => (
            DType::F32,
            f32_bytes(
                &t.as_slice::<f64>()?
                    .iter()
                    .map(|&v| v as f32)
                    .collect::<Vec<_>>(),
            ),
        ),
        TfType::Bool => (
            DType::Bool,
            t.as_slice::<bool>()?.iter().map(|&b| u8::from(b)).collect(),
        ),
        TfType::Int8 => (
            DType::I8,
            bytemuck::cast_slice(t.as_slice::<i8>()?).to_vec(),
        ),
        TfType::UInt8 => (DType::U8, t.as_slice::<u8>()?.to_vec()),
        other => {
            bail!(
                unimplemented,
                "constant {name:?} of type {other} is not supported by the converter"
            )
        }
    };
    Ok(TensorDef {
        name: name.into(),
        dtype,
        shape,
        shape_signature: None,
        quant: QuantParams::default(),
        data: Some(data),
        is_variable: false,
    })
}

fn tf_type_to_lite(t: i32, node: &str) -> Result<DType> {
    // tensorflow.DataType codes.
    Ok(match t {
        1 => DType::F32,
        2 => DType::F64,
        3 => DType::I32,
        4 => DType::U8,
        5 => DType::I16,
        6 => DType::I8,
        9 => DType::I64,
        10 => DType::Bool,
        19 => DType::F16,
        other => {
            bail!(
                unimplemented,
                "node {node:?}: TensorFlow type {other} has no TFLite equivalent here"
            )
        }
    })
}

impl<'g> Converter<'g> {
    fn new(graph: &'g GraphDef) -> Converter<'g> {
        let nodes = graph.node.iter().map(|n| (n.name.as_str(), n)).collect();
        let mut consumers: HashMap<String, usize> = HashMap::new();
        for n in &graph.node {
            for i in &n.input {
                if let Some((src, idx)) = parse_input(i) {
                    *consumers.entry(format!("{src}:{idx}")).or_default() += 1;
                }
            }
        }
        Converter {
            nodes,
            consumers,
            values: HashMap::new(),
            tensors: Vec::new(),
            ops: Vec::new(),
            producer: HashMap::new(),
            inputs: Vec::new(),
            protected: HashSet::new(),
        }
    }

    fn add_tensor(&mut self, def: TensorDef) -> i32 {
        self.tensors.push(def);
        (self.tensors.len() - 1) as i32
    }

    fn activation_tensor(&mut self, name: &str, dtype: DType) -> i32 {
        self.add_tensor(TensorDef {
            name: name.into(),
            dtype,
            shape: Vec::new(),
            shape_signature: None,
            quant: QuantParams::default(),
            data: None,
            is_variable: false,
        })
    }

    /// The TFLite tensor for a value (writing constants on first use).
    fn tensor_of(&mut self, key: &str) -> Result<i32> {
        match self.values.get(key).cloned() {
            Some(Value::Tensor(i)) => Ok(i),
            Some(Value::Const(t)) => {
                let name = key.strip_suffix(":0").unwrap_or(key).to_string();
                let i = self.add_tensor(tf_const_to_tensor_def(&name, &t)?);
                self.values.insert(key.into(), Value::Tensor(i));
                Ok(i)
            }
            None => Err(Error::internal(format!(
                "value {key:?} used before it was converted"
            ))),
        }
    }

    fn const_of(&self, key: &str) -> Option<&Tensor> {
        match self.values.get(key) {
            Some(Value::Const(t)) => Some(t),
            _ => None,
        }
    }

    #[allow(clippy::too_many_arguments)] // one op's whole description
    fn emit(
        &mut self,
        code: i32,
        version: i32,
        inputs: Vec<i32>,
        node: &NodeDef,
        outputs: usize,
        dtype: DType,
        options: Option<BuiltinOptions>,
    ) -> Vec<i32> {
        let outs: Vec<i32> = (0..outputs)
            .map(|i| {
                let name = if i == 0 {
                    node.name.clone()
                } else {
                    format!("{}:{i}", node.name)
                };
                self.activation_tensor(&name, dtype)
            })
            .collect();
        self.ops.push(OpDef {
            code,
            custom_code: None,
            version,
            inputs,
            outputs: outs.clone(),
            options,
        });
        for (i, &o) in outs.iter().enumerate() {
            self.producer.insert(o, self.ops.len() - 1);
            self.values
                .insert(format!("{}:{i}", node.name), Value::Tensor(o));
        }
        outs
    }

    /// The single-consumer op producing `key`, for folding into it.
    fn foldable_producer(&self, key: &str) -> Option<usize> {
        if self.consumers.get(key).copied().unwrap_or(0) != 1 || self.protected.contains(key) {
            return None;
        }
        match self.values.get(key) {
            Some(Value::Tensor(t)) => self.producer.get(t).copied(),
            _ => None,
        }
    }

    fn alias(&mut self, node: &NodeDef, key: String) {
        if let Some(v) = self.values.get(&key).cloned() {
            self.values.insert(format!("{}:0", node.name), v);
        }
    }

    fn data_inputs(node: &NodeDef) -> Vec<String> {
        node.input
            .iter()
            .filter_map(|i| parse_input(i).map(|(n, k)| format!("{n}:{k}")))
            .collect()
    }

    fn visit(
        &mut self,
        name: &str,
        options: &ConvertOptions,
        stack: &mut Vec<String>,
    ) -> Result<()> {
        if self.values.contains_key(&format!("{name}:0")) {
            return Ok(());
        }
        let node = *self
            .nodes
            .get(name)
            .ok_or_else(|| Error::invalid(format!("node {name:?} is not in the graph")))?;
        if stack.iter().any(|s| s == name) {
            bail!(
                invalid,
                "the graph has a cycle through {name:?} (control flow is not supported by the converter)"
            );
        }
        stack.push(name.to_string());
        let is_input = options
            .inputs
            .iter()
            .any(|i| parse_input(i).map(|(n, _)| n == name).unwrap_or(false));
        if !is_input {
            for i in Self::data_inputs(node) {
                let (n, _) = parse_input(&i).unwrap_or((&i, 0));
                let n = n.to_string();
                self.visit(&n, options, stack)?;
            }
        }
        stack.pop();
        self.convert_node(node, is_input, options)
            .map_err(|e| e.with_context(format!("node {:?} ({})", node.name, node.op)))
    }

    fn convert_node(
        &mut self,
        node: &'g NodeDef,
        is_input: bool,
        options: &ConvertOptions,
    ) -> Result<()> {
        let ins = Self::data_inputs(node);
        if is_input {
            let pos = options
                .inputs
                .iter()
                .position(|i| parse_input(i).map(|(n, _)| n == node.name).unwrap_or(false))
                .unwrap_or(0);
            let dtype = match attr(node, "dtype") {
                Some(attr_value::Value::Type(t)) => tf_type_to_lite(*t, &node.name)?,
                _ => DType::F32,
            };
            let declared: Option<Vec<i64>> = match attr(node, "shape") {
                Some(attr_value::Value::Shape(s)) if !s.unknown_rank => {
                    Some(s.dim.iter().map(|d| d.size).collect())
                }
                _ => None,
            };
            let shape = options
                .input_shapes
                .get(pos)
                .cloned()
                .flatten()
                .or(declared)
                .ok_or_else(|| {
                    Error::invalid(format!(
                        "the shape of input {:?} is unknown: pass input_shapes",
                        node.name
                    ))
                })?;
            let sig: Vec<i32> = shape
                .iter()
                .map(|&d| if d < 0 { -1 } else { d as i32 })
                .collect();
            let concrete: Vec<i32> = shape
                .iter()
                .map(|&d| if d < 0 { 1 } else { d as i32 })
                .collect();
            let t = self.add_tensor(TensorDef {
                name: node.name.clone(),
                dtype,
                shape: concrete,
                shape_signature: sig.contains(&-1).then_some(sig),
                quant: QuantParams::default(),
                data: None,
                is_variable: false,
            });
            self.inputs.push(t);
            self.values
                .insert(format!("{}:0", node.name), Value::Tensor(t));
            return Ok(());
        }
        let op = node.op.as_str();
        let ensure_nhwc = || -> Result<()> {
            match attr_s(node, "data_format").as_deref() {
                None | Some("NHWC") => Ok(()),
                Some(other) => Err(Error::unimplemented(format!(
                    "data_format {other} is not supported (NHWC only)"
                ))),
            }
        };
        let padding = || -> Result<i8> {
            match attr_s(node, "padding").as_deref() {
                Some("SAME") => Ok(0),
                Some("VALID") => Ok(1),
                other => Err(Error::unimplemented(format!(
                    "padding {other:?} is not supported"
                ))),
            }
        };
        let hw = |key: &str| -> [i32; 2] {
            let v = attr_ints(node, key);
            if v.len() == 4 {
                [v[1] as i32, v[2] as i32]
            } else {
                [1, 1]
            }
        };
        match op {
            "Const" => {
                let t = match attr(node, "value") {
                    Some(attr_value::Value::Tensor(p)) => tensor_from_proto(p)?,
                    _ => bail!(invalid, "a Const node without a value"),
                };
                self.values
                    .insert(format!("{}:0", node.name), Value::Const(t));
            }
            "Identity"
            | "StopGradient"
            | "Snapshot"
            | "PreventGradient"
            | "CheckNumerics"
            | "PlaceholderWithDefault" => {
                let src = ins
                    .first()
                    .cloned()
                    .ok_or_else(|| Error::invalid("no input"))?;
                self.alias(node, src);
            }
            "Placeholder" => {
                bail!(
                    invalid,
                    "placeholder {:?} is not among the input arrays",
                    node.name
                );
            }
            "VariableV2" | "Variable" | "VarHandleOp" => {
                bail!(
                    invalid,
                    "variable {:?} is still in the graph: freeze it first (convert_variables_to_constants)",
                    node.name
                );
            }
            "MatMul" => {
                if attr_b(node, "transpose_a").unwrap_or(false) {
                    bail!(unimplemented, "MatMul with transpose_a is not supported");
                }
                let x = self.tensor_of(&ins[0])?;
                match self.const_of(&ins[1]).cloned() {
                    Some(w) => {
                        let d = w.dims();
                        ensure!(
                            d.len() == 2,
                            invalid,
                            "MatMul weights of shape {d:?} are not 2-D"
                        );
                        let src = w.as_slice::<f32>()?;
                        let (rows, cols) = (d[0], d[1]);
                        // TFLite wants [out, in].
                        let (data, shape) = if attr_b(node, "transpose_b").unwrap_or(false) {
                            (src.to_vec(), vec![rows as i32, cols as i32])
                        } else {
                            let mut t = vec![0.0f32; rows * cols];
                            for r in 0..rows {
                                for c in 0..cols {
                                    t[c * rows + r] = src[r * cols + c];
                                }
                            }
                            (t, vec![cols as i32, rows as i32])
                        };
                        let wt = self.add_tensor(TensorDef {
                            name: format!("{}/weights", node.name),
                            dtype: DType::F32,
                            shape,
                            shape_signature: None,
                            quant: QuantParams::default(),
                            data: Some(f32_bytes(&data)),
                            is_variable: false,
                        });
                        let opts = BuiltinOptions::FullyConnectedOptions(Box::default());
                        self.emit(9, 1, vec![x, wt, -1], node, 1, DType::F32, Some(opts));
                    }
                    None => {
                        let y = self.tensor_of(&ins[1])?;
                        let opts =
                            BuiltinOptions::BatchMatMulOptions(Box::new(fb::BatchMatMulOptions {
                                adj_x: false,
                                adj_y: attr_b(node, "transpose_b").unwrap_or(false),
                                asymmetric_quantize_inputs: false,
                            }));
                        self.emit(126, 1, vec![x, y], node, 1, DType::F32, Some(opts));
                    }
                }
            }
            "BatchMatMul" | "BatchMatMulV2" | "BatchMatMulV3" => {
                let (x, y) = (self.tensor_of(&ins[0])?, self.tensor_of(&ins[1])?);
                let opts = BuiltinOptions::BatchMatMulOptions(Box::new(fb::BatchMatMulOptions {
                    adj_x: attr_b(node, "adj_x").unwrap_or(false),
                    adj_y: attr_b(node, "adj_y").unwrap_or(false),
                    asymmetric_quantize_inputs: false,
                }));
                self.emit(126, 1, vec![x, y], node, 1, DType::F32, Some(opts));
            }
            "Conv2D" | "DepthwiseConv2dNative" => {
                ensure_nhwc()?;
                let x = self.tensor_of(&ins[0])?;
                let f = self.const_of(&ins[1]).cloned().ok_or_else(|| {
                    Error::unimplemented("a non-constant filter is not supported")
                })?;
                let d = f.dims().to_vec();
                ensure!(d.len() == 4, invalid, "filter of shape {d:?} is not 4-D");
                let src = f.as_slice::<f32>()?;
                let (kh, kw, ic, oc) = (d[0], d[1], d[2], d[3]);
                let [sh, sw] = hw("strides");
                let [dh, dw] = hw("dilations");
                if op == "Conv2D" {
                    // HWIO -> OHWI.
                    let mut t = vec![0.0f32; src.len()];
                    for y in 0..kh {
                        for x in 0..kw {
                            for i in 0..ic {
                                for o in 0..oc {
                                    t[((o * kh + y) * kw + x) * ic + i] =
                                        src[((y * kw + x) * ic + i) * oc + o];
                                }
                            }
                        }
                    }
                    let ft = self.add_tensor(TensorDef {
                        name: format!("{}/filter", node.name),
                        dtype: DType::F32,
                        shape: vec![oc as i32, kh as i32, kw as i32, ic as i32],
                        shape_signature: None,
                        quant: QuantParams::default(),
                        data: Some(f32_bytes(&t)),
                        is_variable: false,
                    });
                    let opts = BuiltinOptions::Conv2DOptions(Box::new(fb::Conv2DOptions {
                        padding: padding()?,
                        stride_w: sw,
                        stride_h: sh,
                        fused_activation_function: 0,
                        dilation_w_factor: dw,
                        dilation_h_factor: dh,
                        quantized_bias_type: 0,
                    }));
                    self.emit(3, 1, vec![x, ft, -1], node, 1, DType::F32, Some(opts));
                } else {
                    // [kh, kw, ic, mult] is already [1, kh, kw, ic * mult] in memory.
                    let ft = self.add_tensor(TensorDef {
                        name: format!("{}/filter", node.name),
                        dtype: DType::F32,
                        shape: vec![1, kh as i32, kw as i32, (ic * oc) as i32],
                        shape_signature: None,
                        quant: QuantParams::default(),
                        data: Some(f32_bytes(src)),
                        is_variable: false,
                    });
                    let opts = BuiltinOptions::DepthwiseConv2DOptions(Box::new(
                        fb::DepthwiseConv2DOptions {
                            padding: padding()?,
                            stride_w: sw,
                            stride_h: sh,
                            depth_multiplier: oc as i32,
                            fused_activation_function: 0,
                            dilation_w_factor: dw,
                            dilation_h_factor: dh,
                        },
                    ));
                    self.emit(4, 1, vec![x, ft, -1], node, 1, DType::F32, Some(opts));
                }
            }
            "BiasAdd" | "Add" | "AddV2"
                if self.const_of(&ins[1]).is_some() && self.try_fold_bias(node, &ins)? => {}
            "FusedBatchNorm" | "FusedBatchNormV3" => {
                ensure_nhwc()?;
                if attr_b(node, "is_training").unwrap_or(true) {
                    bail!(
                        unimplemented,
                        "FusedBatchNorm with is_training=True cannot be converted: export the inference graph"
                    );
                }
                self.fold_batch_norm(node, &ins)?;
            }
            "Relu" | "Relu6" | "Relu1" if self.try_fuse_activation(node, &ins[0])? => {}
            "Relu" => self.unary(node, &ins, 19)?,
            "Relu6" => self.unary(node, &ins, 21)?,
            "Sigmoid" => self.unary(node, &ins, 14)?,
            "Tanh" => self.unary(node, &ins, 28)?,
            "Exp" => self.unary(node, &ins, 47)?,
            "Log" => self.unary(node, &ins, 73)?,
            "Sqrt" => self.unary(node, &ins, 75)?,
            "Rsqrt" => self.unary(node, &ins, 76)?,
            "Abs" => self.unary(node, &ins, 101)?,
            "Neg" => self.unary(node, &ins, 59)?,
            "Square" => self.unary(node, &ins, 92)?,
            "Floor" => self.unary(node, &ins, 8)?,
            "Elu" => self.unary(node, &ins, 111)?,
            "LeakyRelu" => {
                let x = self.tensor_of(&ins[0])?;
                let opts = BuiltinOptions::LeakyReluOptions(Box::new(fb::LeakyReluOptions {
                    alpha: attr_f(node, "alpha").unwrap_or(0.2),
                }));
                self.emit(98, 1, vec![x], node, 1, DType::F32, Some(opts));
            }
            "Softmax" => {
                let x = self.tensor_of(&ins[0])?;
                self.emit(
                    25,
                    1,
                    vec![x],
                    node,
                    1,
                    DType::F32,
                    Some(BuiltinOptions::SoftmaxOptions(Box::new(
                        fb::SoftmaxOptions { beta: 1.0 },
                    ))),
                );
            }
            "LogSoftmax" => {
                let x = self.tensor_of(&ins[0])?;
                self.emit(
                    50,
                    1,
                    vec![x],
                    node,
                    1,
                    DType::F32,
                    Some(BuiltinOptions::LogSoftmaxOptions(Box::default())),
                );
            }
            "Add" | "AddV2" | "BiasAdd" => self.binary(
                node,
                &ins,
                0,
                Some(BuiltinOptions::AddOptions(Box::new(fb::AddOptions {
                    fused_activation_function: 0,
                    pot_scale_int16: true,
                }))),
            )?,
            "Sub" => self.binary(
                node,
                &ins,
                41,
                Some(BuiltinOptions::SubOptions(Box::new(fb::SubOptions {
                    fused_activation_function: 0,
                    pot_scale_int16: true,
                }))),
            )?,
            "Mul" => self.binary(
                node,
                &ins,
                18,
                Some(BuiltinOptions::MulOptions(Box::default())),
            )?,
            "RealDiv" | "Div" => self.binary(
                node,
                &ins,
                42,
                Some(BuiltinOptions::DivOptions(Box::default())),
            )?,
            "Maximum" => self.binary(
                node,
                &ins,
                55,
                Some(BuiltinOptions::MaximumMinimumOptions(Box::default())),
            )?,
            "Minimum" => self.binary(
                node,
                &ins,
                57,
                Some(BuiltinOptions::MaximumMinimumOptions(Box::default())),
            )?,
            "SquaredDifference" => self.binary(
                node,
                &ins,
                99,
                Some(BuiltinOptions::SquaredDifferenceOptions(Box::default())),
            )?,
            "Pow" => self.binary(
                node,
                &ins,
                78,
                Some(BuiltinOptions::PowOptions(Box::default())),
            )?,
            "MaxPool" | "AvgPool" => {
                ensure_nhwc()?;
                let x = self.tensor_of(&ins[0])?;
                let [kh, kw] = hw("ksize");
                let [sh, sw] = hw("strides");
                let opts = BuiltinOptions::Pool2DOptions(Box::new(fb::Pool2DOptions {
                    padding: padding()?,
                    stride_w: sw,
                    stride_h: sh,
                    filter_width: kw,
                    filter_height: kh,
                    fused_activation_function: 0,
                }));
                self.emit(
                    if op == "MaxPool" { 17 } else { 1 },
                    1,
                    vec![x],
                    node,
                    1,
                    DType::F32,
                    Some(opts),
                );
            }
            "Reshape" => {
                let x = self.tensor_of(&ins[0])?;
                let shape = self.tensor_of(&ins[1])?;
                let dtype = self.tensors[x as usize].dtype;
                self.emit(22, 1, vec![x, shape], node, 1, dtype, None);
            }
            "Squeeze" => {
                let x = self.tensor_of(&ins[0])?;
                let dims: Vec<i32> = attr_ints(node, "squeeze_dims")
                    .into_iter()
                    .map(|v| v as i32)
                    .collect();
                let dtype = self.tensors[x as usize].dtype;
                self.emit(
                    43,
                    1,
                    vec![x],
                    node,
                    1,
                    dtype,
                    Some(BuiltinOptions::SqueezeOptions(Box::new(
                        fb::SqueezeOptions {
                            squeeze_dims: Some(dims),
                        },
                    ))),
                );
            }
            "ExpandDims" => {
                let (x, a) = (self.tensor_of(&ins[0])?, self.tensor_of(&ins[1])?);
                let dtype = self.tensors[x as usize].dtype;
                self.emit(
                    70,
                    1,
                    vec![x, a],
                    node,
                    1,
                    dtype,
                    Some(BuiltinOptions::ExpandDimsOptions(Box::default())),
                );
            }
            "ConcatV2" => {
                let n = ins.len() - 1;
                let axis = self
                    .const_of(&ins[n])
                    .ok_or_else(|| Error::unimplemented("a non-constant concat axis"))?;
                let axis = ferroflow_tensor::kernels::elementwise::cast(axis, TfType::Int64)?
                    .as_slice::<i64>()?[0] as i32;
                let xs = ins[..n]
                    .iter()
                    .map(|k| self.tensor_of(k))
                    .collect::<Result<Vec<_>>>()?;
                let dtype = self.tensors[xs[0] as usize].dtype;
                self.emit(
                    2,
                    1,
                    xs,
                    node,
                    1,
                    dtype,
                    Some(BuiltinOptions::ConcatenationOptions(Box::new(
                        fb::ConcatenationOptions {
                            axis,
                            fused_activation_function: 0,
                        },
                    ))),
                );
            }
            "Pad" | "PadV2" => {
                let xs = ins
                    .iter()
                    .map(|k| self.tensor_of(k))
                    .collect::<Result<Vec<_>>>()?;
                let dtype = self.tensors[xs[0] as usize].dtype;
                let (code, o) = if op == "Pad" {
                    (34, BuiltinOptions::PadOptions(Box::default()))
                } else {
                    (60, BuiltinOptions::PadV2Options(Box::default()))
                };
                self.emit(code, 1, xs, node, 1, dtype, Some(o));
            }
            "Mean" | "Sum" | "Max" | "Min" | "Prod" => {
                let (x, a) = (self.tensor_of(&ins[0])?, self.tensor_of(&ins[1])?);
                let code = match op {
                    "Mean" => 40,
                    "Sum" => 74,
                    "Max" => 82,
                    "Min" => 89,
                    _ => 81,
                };
                let o = BuiltinOptions::ReducerOptions(Box::new(fb::ReducerOptions {
                    keep_dims: attr_b(node, "keep_dims").unwrap_or(false),
                }));
                self.emit(code, 1, vec![x, a], node, 1, DType::F32, Some(o));
            }
            "ArgMax" | "ArgMin" => {
                let (x, a) = (self.tensor_of(&ins[0])?, self.tensor_of(&ins[1])?);
                let out = match attr(node, "output_type") {
                    Some(attr_value::Value::Type(t)) => tf_type_to_lite(*t, &node.name)?,
                    _ => DType::I64,
                };
                let o = if op == "ArgMax" {
                    BuiltinOptions::ArgMaxOptions(Box::new(fb::ArgMaxOptions {
                        output_type: out.code(),
                    }))
                } else {
                    BuiltinOptions::ArgMinOptions(Box::new(fb::ArgMinOptions {
                        output_type: out.code(),
                    }))
                };
                self.emit(
                    if op == "ArgMax" { 56 } else { 79 },
                    1,
                    vec![x, a],
                    node,
                    1,
                    out,
                    Some(o),
                );
            }
            "Transpose" => {
                let (x, p) = (self.tensor_of(&ins[0])?, self.tensor_of(&ins[1])?);
                let dtype = self.tensors[x as usize].dtype;
                self.emit(
                    39,
                    1,
                    vec![x, p],
                    node,
                    1,
                    dtype,
                    Some(BuiltinOptions::TransposeOptions(Box::default())),
                );
            }
            "GatherV2" | "Gather" => {
                let x = self.tensor_of(&ins[0])?;
                let i = self.tensor_of(&ins[1])?;
                let axis = match ins.get(2).and_then(|k| self.const_of(k)) {
                    Some(a) => ferroflow_tensor::kernels::elementwise::cast(a, TfType::Int64)?
                        .as_slice::<i64>()?[0] as i32,
                    None => 0,
                };
                let dtype = self.tensors[x as usize].dtype;
                self.emit(
                    36,
                    1,
                    vec![x, i],
                    node,
                    1,
                    dtype,
                    Some(BuiltinOptions::GatherOptions(Box::new(fb::GatherOptions {
                        axis,
                        batch_dims: 0,
                    }))),
                );
            }
            "StridedSlice" => {
                let xs = ins
                    .iter()
                    .map(|k| self.tensor_of(k))
                    .collect::<Result<Vec<_>>>()?;
                let dtype = self.tensors[xs[0] as usize].dtype;
                let m = |k: &str| attr_i(node, k).unwrap_or(0) as i32;
                let o = BuiltinOptions::StridedSliceOptions(Box::new(fb::StridedSliceOptions {
                    begin_mask: m("begin_mask"),
                    end_mask: m("end_mask"),
                    ellipsis_mask: m("ellipsis_mask"),
                    new_axis_mask: m("new_axis_mask"),
                    shrink_axis_mask: m("shrink_axis_mask"),
                    offset: false,
                }));
                self.emit(45, 1, xs, node, 1, dtype, Some(o));
            }
            "Slice" => {
                let xs = ins
                    .iter()
                    .map(|k| self.tensor_of(k))
                    .collect::<Result<Vec<_>>>()?;
                let dtype = self.tensors[xs[0] as usize].dtype;
                self.emit(
                    65,
                    1,
                    xs,
                    node,
                    1,
                    dtype,
                    Some(BuiltinOptions::SliceOptions(Box::default())),
                );
            }
            "Pack" => {
                let xs = ins
                    .iter()
                    .map(|k| self.tensor_of(k))
                    .collect::<Result<Vec<_>>>()?;
                let dtype = self.tensors[xs[0] as usize].dtype;
                let o = BuiltinOptions::PackOptions(Box::new(fb::PackOptions {
                    values_count: xs.len() as i32,
                    axis: attr_i(node, "axis").unwrap_or(0) as i32,
                }));
                self.emit(83, 1, xs, node, 1, dtype, Some(o));
            }
            "Unpack" => {
                let x = self.tensor_of(&ins[0])?;
                let num = attr_i(node, "num").unwrap_or(0) as usize;
                let dtype = self.tensors[x as usize].dtype;
                let o = BuiltinOptions::UnpackOptions(Box::new(fb::UnpackOptions {
                    num: num as i32,
                    axis: attr_i(node, "axis").unwrap_or(0) as i32,
                }));
                self.emit(88, 1, vec![x], node, num, dtype, Some(o));
            }
            "Split" => {
                let (a, x) = (self.tensor_of(&ins[0])?, self.tensor_of(&ins[1])?);
                let num = attr_i(node, "num_split").unwrap_or(1) as usize;
                let dtype = self.tensors[x as usize].dtype;
                self.emit(
                    49,
                    1,
                    vec![a, x],
                    node,
                    num,
                    dtype,
                    Some(BuiltinOptions::SplitOptions(Box::new(fb::SplitOptions {
                        num_splits: num as i32,
                    }))),
                );
            }
            "Shape" => {
                let x = self.tensor_of(&ins[0])?;
                let out = match attr(node, "out_type") {
                    Some(attr_value::Value::Type(t)) => tf_type_to_lite(*t, &node.name)?,
                    _ => DType::I32,
                };
                self.emit(
                    77,
                    1,
                    vec![x],
                    node,
                    1,
                    out,
                    Some(BuiltinOptions::ShapeOptions(Box::new(fb::ShapeOptions {
                        out_type: out.code(),
                    }))),
                );
            }
            "Cast" => {
                let x = self.tensor_of(&ins[0])?;
                let to = match attr(node, "DstT") {
                    Some(attr_value::Value::Type(t)) => tf_type_to_lite(*t, &node.name)?,
                    _ => DType::F32,
                };
                let from = self.tensors[x as usize].dtype;
                self.emit(
                    53,
                    1,
                    vec![x],
                    node,
                    1,
                    to,
                    Some(BuiltinOptions::CastOptions(Box::new(fb::CastOptions {
                        in_data_type: from.code(),
                        out_data_type: to.code(),
                    }))),
                );
            }
            "ResizeBilinear" | "ResizeNearestNeighbor" => {
                let (x, s) = (self.tensor_of(&ins[0])?, self.tensor_of(&ins[1])?);
                let (ac, hp) = (
                    attr_b(node, "align_corners").unwrap_or(false),
                    attr_b(node, "half_pixel_centers").unwrap_or(false),
                );
                if op == "ResizeBilinear" {
                    let o = BuiltinOptions::ResizeBilinearOptions(Box::new(
                        fb::ResizeBilinearOptions {
                            unused_new_height: 0,
                            unused_new_width: 0,
                            align_corners: ac,
                            half_pixel_centers: hp,
                        },
                    ));
                    self.emit(23, 1, vec![x, s], node, 1, DType::F32, Some(o));
                } else {
                    let o = BuiltinOptions::ResizeNearestNeighborOptions(Box::new(
                        fb::ResizeNearestNeighborOptions {
                            align_corners: ac,
                            half_pixel_centers: hp,
                        },
                    ));
                    self.emit(97, 1, vec![x, s], node, 1, DType::F32, Some(o));
                }
            }
            "NoOp" | "Assert" => {}
            other => {
                bail!(
                    unimplemented,
                    "TensorFlow op {other} is not supported by ferroflow's TFLite converter"
                )
            }
        }
        Ok(())
    }

    fn unary(&mut self, node: &NodeDef, ins: &[String], code: i32) -> Result<()> {
        let x = self.tensor_of(&ins[0])?;
        self.emit(code, 1, vec![x], node, 1, DType::F32, None);
        Ok(())
    }

    fn binary(
        &mut self,
        node: &NodeDef,
        ins: &[String],
        code: i32,
        options: Option<BuiltinOptions>,
    ) -> Result<()> {
        let (a, b) = (self.tensor_of(&ins[0])?, self.tensor_of(&ins[1])?);
        let dtype = self.tensors[a as usize].dtype;
        self.emit(code, 1, vec![a, b], node, 1, dtype, options);
        Ok(())
    }

    /// Folds `x + bias` into the FC/conv producing `x` when it has no bias
    /// yet; true when folded.
    fn try_fold_bias(&mut self, node: &NodeDef, ins: &[String]) -> Result<bool> {
        let Some(p) = self.foldable_producer(&ins[0]) else {
            return Ok(false);
        };
        let op = &self.ops[p];
        if !matches!(op.code, 3 | 4 | 9)
            || op.inputs.get(2).copied().unwrap_or(-1) >= 0
            || fused_activation(op) != 0
        {
            return Ok(false);
        }
        let out_ch =
            self.tensors[op.inputs[1] as usize].shape[if op.code == 4 { 3 } else { 0 }] as usize;
        let b = self
            .const_of(&ins[1])
            .cloned()
            .expect("checked by the caller");
        if b.num_elements() != out_ch || b.dtype() != TfType::Float32 {
            return Ok(false);
        }
        let bt = self.add_tensor(TensorDef {
            name: format!("{}/bias", node.name),
            dtype: DType::F32,
            shape: vec![out_ch as i32],
            shape_signature: None,
            quant: QuantParams::default(),
            data: Some(f32_bytes(b.as_slice::<f32>()?)),
            is_variable: false,
        });
        self.ops[p].inputs[2] = bt;
        let out = self.ops[p].outputs[0];
        self.values
            .insert(format!("{}:0", node.name), Value::Tensor(out));
        self.tensors[out as usize].name = node.name.clone();
        Ok(true)
    }

    /// Folds an inference batch norm into the conv producing its input.
    fn fold_batch_norm(&mut self, node: &NodeDef, ins: &[String]) -> Result<()> {
        let eps = attr_f(node, "epsilon").unwrap_or(1e-3);
        let consts: Vec<Vec<f32>> = ins[1..5]
            .iter()
            .map(|k| {
                self.const_of(k)
                    .map(|t| t.as_slice::<f32>().map(|s| s.to_vec()))
                    .transpose()
            })
            .collect::<Result<Vec<_>>>()?
            .into_iter()
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| {
                Error::unimplemented(
                    "a batch norm with non-constant parameters cannot be converted",
                )
            })?;
        let (gamma, beta, mean, var) = (&consts[0], &consts[1], &consts[2], &consts[3]);
        let scale: Vec<f32> = gamma
            .iter()
            .zip(var)
            .map(|(g, v)| g / (v + eps).sqrt())
            .collect();
        let shift: Vec<f32> = beta
            .iter()
            .zip(mean)
            .zip(&scale)
            .map(|((b, m), s)| b - m * s)
            .collect();
        let producer = self
            .foldable_producer(&ins[0])
            .filter(|&p| matches!(self.ops[p].code, 3 | 4) && fused_activation(&self.ops[p]) == 0);
        let Some(p) = producer else {
            // Not after a conv: x * scale + shift as MUL and ADD.
            let x = self.tensor_of(&ins[0])?;
            let n = scale.len() as i32;
            let mk = |s: &mut Self, name: String, v: &[f32]| {
                s.add_tensor(TensorDef {
                    name,
                    dtype: DType::F32,
                    shape: vec![n],
                    shape_signature: None,
                    quant: QuantParams::default(),
                    data: Some(f32_bytes(v)),
                    is_variable: false,
                })
            };
            let st = mk(self, format!("{}/scale", node.name), &scale);
            let sh = mk(self, format!("{}/shift", node.name), &shift);
            let mid = self.activation_tensor(&format!("{}/mul", node.name), DType::F32);
            self.ops.push(OpDef {
                code: 18,
                custom_code: None,
                version: 1,
                inputs: vec![x, st],
                outputs: vec![mid],
                options: Some(BuiltinOptions::MulOptions(Box::default())),
            });
            self.producer.insert(mid, self.ops.len() - 1);
            self.emit(
                0,
                1,
                vec![mid, sh],
                node,
                1,
                DType::F32,
                Some(BuiltinOptions::AddOptions(Box::new(fb::AddOptions {
                    fused_activation_function: 0,
                    pot_scale_int16: true,
                }))),
            );
            return Ok(());
        };
        let (code, filter_idx, bias_idx) = (
            self.ops[p].code,
            self.ops[p].inputs[1],
            self.ops[p].inputs[2],
        );
        let f = &mut self.tensors[filter_idx as usize];
        let oc = scale.len();
        let mut w: Vec<f32> = bytemuck::cast_slice(f.data.as_deref().unwrap_or(&[])).to_vec();
        let per_channel = w.len() / oc.max(1);
        for (i, v) in w.iter_mut().enumerate() {
            // OHWI: channel outermost; depthwise [1,h,w,c]: channel innermost.
            let c = if code == 3 { i / per_channel } else { i % oc };
            *v *= scale[c];
        }
        f.data = Some(f32_bytes(&w));
        let old_bias: Vec<f32> = if bias_idx >= 0 {
            bytemuck::cast_slice(
                self.tensors[bias_idx as usize]
                    .data
                    .as_deref()
                    .unwrap_or(&[]),
            )
            .to_vec()
        } else {
            vec![0.0; oc]
        };
        let bias: Vec<f32> = old_bias
            .iter()
            .zip(&scale)
            .zip(&shift)
            .map(|((b, s), t)| b * s + t)
            .collect();
        let bt = self.add_tensor(TensorDef {
            name: format!("{}/bias", node.name),
            dtype: DType::F32,
            shape: vec![oc as i32],
            shape_signature: None,
            quant: QuantParams::default(),
            data: Some(f32_bytes(&bias)),
            is_variable: false,
        });
        self.ops[p].inputs[2] = bt;
        let out = self.ops[p].outputs[0];
        self.values
            .insert(format!("{}:0", node.name), Value::Tensor(out));
        self.tensors[out as usize].name = node.name.clone();
        Ok(())
    }

    /// Fuses Relu/Relu6 into the op producing its input; true when fused.
    fn try_fuse_activation(&mut self, node: &NodeDef, input: &str) -> Result<bool> {
        let Some(p) = self.foldable_producer(input) else {
            return Ok(false);
        };
        let code = match node.op.as_str() {
            "Relu" => 1,
            "Relu6" => 3,
            _ => 2,
        };
        if fused_activation(&self.ops[p]) != 0 {
            return Ok(false);
        }
        let set = match activation_slot(&mut self.ops[p]) {
            Some(slot) => {
                *slot = code;
                true
            }
            None => false,
        };
        if set {
            let out = self.ops[p].outputs[0];
            self.values
                .insert(format!("{}:0", node.name), Value::Tensor(out));
            self.tensors[out as usize].name = node.name.clone();
        }
        Ok(set)
    }
}

/// The fused-activation field of an op's options, for ops that have one.
fn activation_slot(op: &mut OpDef) -> Option<&mut i8> {
    Some(match op.options.as_mut()? {
        BuiltinOptions::FullyConnectedOptions(o) => &mut o.fused_activation_function,
        BuiltinOptions::Conv2DOptions(o) => &mut o.fused_activation_function,
        BuiltinOptions::DepthwiseConv2DOptions(o) => &mut o.fused_activation_function,
        BuiltinOptions::AddOptions(o) => &mut o.fused_activation_function,
        BuiltinOptions::SubOptions(o) => &mut o.fused_activation_function,
        BuiltinOptions::MulOptions(o) => &mut o.fused_activation_function,
        BuiltinOptions::Pool2DOptions(o) => &mut o.fused_activation_function,
        _ => return None,
    })
}

/// The op's fused activation code (0: none or no such field).
fn fused_activation(op: &OpDef) -> i8 {
    activation_slot(&mut op.clone()).map(|a| *a).unwrap_or(0)
}

/// Converts a decoded graph to a model.
pub fn convert_graph(graph: &GraphDef, options: &ConvertOptions) -> Result<Model> {
    if options.outputs.is_empty() {
        bail!(invalid, "no output arrays given");
    }
    let mut c = Converter::new(graph);
    for o in &options.outputs {
        let (n, i) =
            parse_input(o).ok_or_else(|| Error::invalid(format!("bad output name {o:?}")))?;
        c.protected.insert(format!("{n}:{i}"));
    }
    for i in &options.inputs {
        let (n, _) =
            parse_input(i).ok_or_else(|| Error::invalid(format!("bad input name {i:?}")))?;
        ensure!(
            c.nodes.contains_key(n),
            invalid,
            "input array {n:?} is not in the graph"
        );
    }
    let mut stack = Vec::new();
    for i in &options.inputs {
        let (n, _) = parse_input(i).unwrap_or((i, 0));
        c.visit(n, options, &mut stack)?;
    }
    let mut outputs = Vec::new();
    for o in &options.outputs {
        let (n, i) = parse_input(o).unwrap_or((o, 0));
        c.visit(n, options, &mut stack)?;
        let key = format!("{n}:{i}");
        let mut t = c.tensor_of(&key)?;
        // An output that is also an input or a constant needs an op of its
        // own in TFLite only when it aliases an input; keep it as is.
        if c.tensors[t as usize].data.is_some() {
            bail!(unimplemented, "output {o:?} is a constant");
        }
        if outputs.contains(&t) {
            t = c.tensors.len() as i32;
            bail!(
                unimplemented,
                "output {o:?} repeats another output (tensor {t})"
            );
        }
        c.tensors[t as usize].name = n.to_string();
        outputs.push(t);
    }
    // Order inputs as given.
    let inputs = c.inputs.clone();
    // Drop tensors no op or subgraph boundary uses (constants folded away).
    let mut model = Model {
        version: 3,
        description: "ferroflow converted".into(),
        subgraphs: vec![Subgraph {
            name: "main".into(),
            tensors: c.tensors,
            inputs,
            outputs,
            operators: c.ops,
        }],
        metadata: Vec::new(),
        signatures: Vec::new(),
    };
    prune_unused_tensors(&mut model.subgraphs[0]);
    match options.quantization {
        Quantization::None => {}
        Quantization::Float16 => to_float16(&mut model.subgraphs[0]),
        Quantization::DynamicRange => dynamic_range(&mut model.subgraphs[0]),
        Quantization::FullInteger(_) => {}
    }
    fill_shapes(&mut model)?;
    if let Quantization::FullInteger(o) = &options.quantization {
        crate::quantize::full_integer(&mut model, o)?;
        fill_shapes(&mut model)?;
    }
    let sg = &model.subgraphs[0];
    model.signatures.push(Signature {
        key: "serving_default".into(),
        inputs: sg
            .inputs
            .iter()
            .map(|&i| (sg.tensors[i as usize].name.clone(), i as u32))
            .collect(),
        outputs: sg
            .outputs
            .iter()
            .map(|&i| (sg.tensors[i as usize].name.clone(), i as u32))
            .collect(),
        subgraph: 0,
    });
    let runtime = match options.quantization {
        Quantization::None => "1.14.0",
        Quantization::Float16 => "1.15.0",
        Quantization::DynamicRange => "2.17.0",
        Quantization::FullInteger(_) => "1.14.0",
    };
    model
        .metadata
        .push(("min_runtime_version".into(), runtime.as_bytes().to_vec()));
    Ok(model)
}

/// Renumbers tensors, dropping those nothing refers to.
fn prune_unused_tensors(sg: &mut Subgraph) {
    let mut used = vec![false; sg.tensors.len()];
    for &i in sg.inputs.iter().chain(&sg.outputs) {
        used[i as usize] = true;
    }
    for op in &sg.operators {
        for &i in op.inputs.iter().chain(&op.outputs) {
            if i >= 0 {
                used[i as usize] = true;
            }
        }
    }
    let mut map = vec![-1i32; sg.tensors.len()];
    let mut kept = Vec::new();
    for (i, t) in std::mem::take(&mut sg.tensors).into_iter().enumerate() {
        if used[i] {
            map[i] = kept.len() as i32;
            kept.push(t);
        }
    }
    sg.tensors = kept;
    let remap = |v: &mut Vec<i32>| {
        v.iter_mut().for_each(|i| {
            if *i >= 0 {
                *i = map[*i as usize]
            }
        })
    };
    remap(&mut sg.inputs);
    remap(&mut sg.outputs);
    for op in &mut sg.operators {
        remap(&mut op.inputs);
        remap(&mut op.outputs);
    }
}

/// Computes every tensor's static shape by preparing the model.
fn fill_shapes(model: &mut Model) -> Result<()> {
    let mut it = Interpreter::new(model.clone(), 1)?;
    it.allocate_tensors()?;
    for (t, slot) in model.subgraphs[0].tensors.iter_mut().zip(it.tensors()) {
        if t.data.is_none() {
            t.shape = slot.shape.iter().map(|&d| d as i32).collect();
        }
    }
    Ok(())
}

/// Float16 weights: each float constant becomes a float16 constant and a
/// DEQUANTIZE op at the start of the model, as TFLite's converter writes.
fn to_float16(sg: &mut Subgraph) {
    let mut deq = Vec::new();
    let n = sg.tensors.len();
    for i in 0..n {
        let t = &sg.tensors[i];
        if t.dtype != DType::F32 || t.data.is_none() {
            continue;
        }
        let vals: &[f32] = bytemuck::cast_slice(t.data.as_deref().unwrap_or(&[]));
        let halves: Vec<u16> = vals
            .iter()
            .map(|&v| half::f16::from_f32(v).to_bits())
            .collect();
        let mut h = t.clone();
        h.name = format!("{}_fp16", t.name);
        h.dtype = DType::F16;
        h.data = Some(bytemuck::cast_slice(&halves).to_vec());
        sg.tensors.push(h);
        let hi = (sg.tensors.len() - 1) as i32;
        sg.tensors[i].data = None;
        deq.push(OpDef {
            code: 6,
            custom_code: None,
            version: 2,
            inputs: vec![hi],
            outputs: vec![i as i32],
            options: Some(BuiltinOptions::DequantizeOptions(Box::default())),
        });
    }
    deq.append(&mut sg.operators);
    sg.operators = deq;
}

/// Dynamic-range quantization of fully connected weights: symmetric int8,
/// one scale per output row, with TFLite's hybrid kernel quantizing the
/// inputs asymmetrically per batch row.
fn dynamic_range(sg: &mut Subgraph) {
    for oi in 0..sg.operators.len() {
        let op = &sg.operators[oi];
        if op.code != 9 {
            continue;
        }
        let wi = op.inputs[1] as usize;
        let w = &sg.tensors[wi];
        if w.dtype != DType::F32
            || w.data.is_none()
            || w.num_elements() < DYNAMIC_RANGE_MIN_ELEMENTS
        {
            continue;
        }
        let rows = w.shape[0] as usize;
        let vals: Vec<f32> = bytemuck::cast_slice(w.data.as_deref().unwrap_or(&[])).to_vec();
        let cols = vals.len() / rows.max(1);
        let mut q = vec![0i8; vals.len()];
        let mut scales = Vec::with_capacity(rows);
        for r in 0..rows {
            let row = &vals[r * cols..(r + 1) * cols];
            let m = row.iter().fold(0.0f32, |a, v| a.max(v.abs()));
            let s = if m == 0.0 { 1.0 } else { m / 127.0 };
            scales.push(s);
            for (d, &v) in q[r * cols..(r + 1) * cols].iter_mut().zip(row) {
                *d = (v / s).round().clamp(-127.0, 127.0) as i8;
            }
        }
        let t = &mut sg.tensors[wi];
        t.dtype = DType::I8;
        t.data = Some(bytemuck::cast_slice(&q).to_vec());
        t.quant = QuantParams {
            zero_point: vec![0; rows],
            scale: scales,
            axis: 0,
        };
        let op = &mut sg.operators[oi];
        op.version = 12;
        if let Some(BuiltinOptions::FullyConnectedOptions(o)) = op.options.as_mut() {
            o.asymmetric_quantize_inputs = true;
        }
    }
}
