//! Full-integer post-training quantization, TensorFlow Lite's way.
//!
//! The float model is run in ferroflow's [`Interpreter`] on each
//! representative sample and the range (min, max) of every float activation
//! is recorded. Then:
//!
//! * activations become int8, asymmetric, with the range widened to include
//!   zero, `scale = (max - min) / 255` and the zero point TFLite's
//!   `ChooseQuantizationParams` picks (the end of the range with the smaller
//!   rounding error, nudged into `[-128, 127]`);
//! * weights of `CONV_2D` (axis 0), `DEPTHWISE_CONV_2D` (axis 3) and
//!   `FULLY_CONNECTED` (axis 0) become int8, symmetric, one scale per output
//!   channel (`max |w| / 127`), biases int32 with scale
//!   `input_scale * weight_scale`;
//! * `SOFTMAX` and `LOGISTIC` outputs take `(1/256, -128)` and `TANH`
//!   `(1/128, 0)`; operators that move values without arithmetic (pools,
//!   reshapes, concatenation, slices, ...) give their inputs their output's
//!   parameters, as TFLite's converter propagates them;
//! * operators without an int8 kernel stay float between `DEQUANTIZE` and
//!   `QUANTIZE` operators (an error names them when only int8 builtins are
//!   allowed); float model inputs and outputs get `QUANTIZE`/`DEQUANTIZE` at
//!   the boundary unless integer inputs/outputs were asked for.

use std::collections::HashMap;

use crate::error::{Error, LiteError, Result};
use crate::interpreter::Interpreter;
use crate::model::{builtin_name, DType, Model, OpDef, TensorDef};
use crate::quant::QuantParams;
use crate::schema::BuiltinOptions;
use ferroflow_tensor::{bail, ensure};

/// Element type of the quantized model's inputs or outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum IoType {
    /// Float32, with `QUANTIZE`/`DEQUANTIZE` at the boundary.
    #[default]
    Float,
    /// int8 with the calibrated parameters.
    Int8,
    /// uint8: the int8 parameters with the zero point moved by 128.
    UInt8,
}

/// One input array of a representative sample.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Sample {
    /// The array's shape.
    pub shape: Vec<usize>,
    /// Its values, row-major.
    pub data: Vec<f32>,
}

/// What full-integer quantization needs.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct FullIntegerOptions {
    /// Representative samples: each a list of arrays, one per model input.
    pub samples: Vec<Vec<Sample>>,
    /// Type of the model's inputs.
    pub input_type: IoType,
    /// Type of the model's outputs.
    pub output_type: IoType,
    /// Only int8 builtins allowed (`TFLITE_BUILTINS_INT8`): an operator
    /// without an int8 kernel is an error instead of staying float.
    pub int8_only: bool,
}

const ADD: i32 = 0;
const AVERAGE_POOL_2D: i32 = 1;
const CONCATENATION: i32 = 2;
const CONV_2D: i32 = 3;
const DEPTHWISE_CONV_2D: i32 = 4;
const DEQUANTIZE: i32 = 6;
const FULLY_CONNECTED: i32 = 9;
const LOGISTIC: i32 = 14;
const MAX_POOL_2D: i32 = 17;
const MUL: i32 = 18;
const RESHAPE: i32 = 22;
const SOFTMAX: i32 = 25;
const TANH: i32 = 28;
const PAD: i32 = 34;
const GATHER: i32 = 36;
const TRANSPOSE: i32 = 39;
const MEAN: i32 = 40;
const SUB: i32 = 41;
const SQUEEZE: i32 = 43;
const STRIDED_SLICE: i32 = 45;
const SPLIT: i32 = 49;
const PADV2: i32 = 60;
const SLICE: i32 = 65;
const EXPAND_DIMS: i32 = 70;
const PACK: i32 = 83;
const UNPACK: i32 = 88;
const QUANTIZE: i32 = 114;

/// The version TFLite's converter gives the int8 form of `code`, for the
/// operators ferroflow runs in int8; `None` for the others.
fn int8_version(code: i32) -> Option<i32> {
    Some(match code {
        FULLY_CONNECTED => 4,
        CONV_2D | DEPTHWISE_CONV_2D => 3,
        RESHAPE | EXPAND_DIMS => 1,
        ADD | SUB | MUL | AVERAGE_POOL_2D | MAX_POOL_2D | MEAN | SOFTMAX | TANH | LOGISTIC
        | CONCATENATION | SQUEEZE | PACK | UNPACK | SPLIT | TRANSPOSE | GATHER | STRIDED_SLICE
        | SLICE | PAD | PADV2 => 2,
        _ => return None,
    })
}

/// Operators whose int8 inputs and outputs share one set of parameters.
fn same_scale(code: i32) -> bool {
    matches!(
        code,
        AVERAGE_POOL_2D
            | MAX_POOL_2D
            | CONCATENATION
            | RESHAPE
            | SQUEEZE
            | EXPAND_DIMS
            | PACK
            | UNPACK
            | SPLIT
            | TRANSPOSE
            | GATHER
            | STRIDED_SLICE
            | SLICE
            | PAD
            | PADV2
    )
}

/// Fixed output parameters of `code` in int8.
fn fixed_output(code: i32) -> Option<(f32, i64)> {
    match code {
        SOFTMAX | LOGISTIC => Some((1.0 / 256.0, -128)),
        TANH => Some((1.0 / 128.0, 0)),
        _ => None,
    }
}

/// The weight input's per-channel axis for operators with weights.
fn weight_axis(code: i32) -> Option<usize> {
    match code {
        FULLY_CONNECTED | CONV_2D => Some(0),
        DEPTHWISE_CONV_2D => Some(3),
        _ => None,
    }
}

/// Asymmetric int8 parameters for the range `[min, max]`, as TFLite's
/// `ChooseQuantizationParams`: the range is widened to include 0, the
/// zero point comes from whichever end gives the smaller error and is
/// rounded into `[-128, 127]`.
pub fn choose_params(min: f32, max: f32) -> (f32, i64) {
    let (qmin, qmax) = (-128.0f64, 127.0f64);
    let rmin = (min as f64).min(0.0);
    let rmax = (max as f64).max(0.0);
    if rmax - rmin <= 0.0 || !(rmax - rmin).is_finite() {
        return (1.0, 0);
    }
    let scale = (rmax - rmin) / (qmax - qmin);
    let zp_from_min = qmin - rmin / scale;
    let zp_from_max = qmax - rmax / scale;
    let err_min = qmin.abs() + (rmin / scale).abs();
    let err_max = qmax.abs() + (rmax / scale).abs();
    let zp = if err_min < err_max {
        zp_from_min
    } else {
        zp_from_max
    };
    let zp = if zp < qmin {
        qmin
    } else if zp > qmax {
        qmax
    } else {
        zp.round()
    };
    (scale as f32, zp as i64)
}

fn f32_data(t: &TensorDef) -> Vec<f32> {
    let bytes = t.data.as_deref().unwrap_or(&[]);
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn range_of(v: &[f32]) -> Option<(f32, f32)> {
    v.iter()
        .filter(|x| x.is_finite())
        .fold(None, |r, &x| match r {
            None => Some((x, x)),
            Some((lo, hi)) => Some((lo.min(x), hi.max(x))),
        })
}

fn merge(a: Option<(f32, f32)>, b: Option<(f32, f32)>) -> Option<(f32, f32)> {
    match (a, b) {
        (Some((a0, a1)), Some((b0, b1))) => Some((a0.min(b0), a1.max(b1))),
        (x, None) | (None, x) => x,
    }
}

/// Runs the float model on every sample and records each float
/// activation's (min, max).
pub fn calibrate(model: &Model, samples: &[Vec<Sample>]) -> Result<Vec<Option<(f32, f32)>>> {
    let sg = &model.subgraphs[0];
    if samples.is_empty() {
        bail!(
            invalid,
            "representative_dataset yielded no samples to calibrate with"
        );
    }
    let mut it = Interpreter::new(model.clone(), 1)?;
    it.allocate_tensors()?;
    let mut ranges = vec![None; sg.tensors.len()];
    for (k, sample) in samples.iter().enumerate() {
        ensure!(
            sample.len() == sg.inputs.len(),
            invalid,
            "representative sample {k} has {} arrays, but the model has {} inputs",
            sample.len(),
            sg.inputs.len()
        );
        for (&idx, s) in sg.inputs.iter().zip(sample) {
            let slot = it.tensor(idx as i64)?;
            let want = slot.shape.clone();
            let n: usize = s.shape.iter().product();
            ensure!(
                n == s.data.len(),
                invalid,
                "representative sample {k}: shape {:?} does not hold {} values",
                s.shape,
                s.data.len()
            );
            // Same number of elements: feed with the model's shape (a
            // sample without its batch dimension is accepted).
            let shape = if want.iter().product::<usize>() == n {
                want
            } else {
                it.resize_input(idx as i64, &s.shape, false)?;
                it.allocate_tensors()?;
                s.shape.clone()
            };
            it.set_tensor(
                idx as i64,
                DType::F32,
                &shape,
                bytemuck::cast_slice(&s.data),
            )
            .map_err(|e| e.with_context(format!("representative sample {k}")))?;
        }
        it.invoke()
            .map_err(|e| e.with_context(format!("calibrating on representative sample {k}")))?;
        for (i, slot) in it.tensors().iter().enumerate() {
            if slot.dtype != DType::F32 || sg.tensors[i].data.is_some() {
                continue;
            }
            ranges[i] = merge(ranges[i], range_of(slot.as_slice::<f32>()));
        }
    }
    Ok(ranges)
}

/// Symmetric per-channel int8 quantization of a constant along `axis`;
/// returns the scales.
fn quantize_weights(t: &mut TensorDef, axis: usize) -> Result<Vec<f32>> {
    let vals = f32_data(t);
    let shape: Vec<usize> = t.shape.iter().map(|&d| d.max(0) as usize).collect();
    if axis >= shape.len() || shape[axis] == 0 {
        bail!(
            invalid,
            "weights {:?} of shape {:?} have no axis {axis} to quantize along",
            t.name,
            t.shape
        );
    }
    let channels = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    let mut maxabs = vec![0.0f32; channels];
    for (i, &v) in vals.iter().enumerate() {
        let c = (i / inner) % channels;
        maxabs[c] = maxabs[c].max(v.abs());
    }
    let scales: Vec<f32> = maxabs
        .iter()
        .map(|&m| if m > 0.0 { m / 127.0 } else { 1.0 })
        .collect();
    let q: Vec<i8> = vals
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let s = scales[(i / inner) % channels];
            (v / s).round().clamp(-127.0, 127.0) as i8
        })
        .collect();
    t.dtype = DType::I8;
    t.data = Some(bytemuck::cast_slice(&q).to_vec());
    t.quant = QuantParams {
        zero_point: vec![0; channels],
        scale: scales.clone(),
        axis,
    };
    Ok(scales)
}

/// int32 bias with scale `input_scale * weight_scale[c]`.
fn quantize_bias(t: &mut TensorDef, input_scale: f32, weight_scales: &[f32]) -> Result<()> {
    let vals = f32_data(t);
    ensure!(
        vals.len() == weight_scales.len(),
        invalid,
        "bias {:?} has {} values for {} output channels",
        t.name,
        vals.len(),
        weight_scales.len()
    );
    let scales: Vec<f32> = weight_scales.iter().map(|&w| input_scale * w).collect();
    let q: Vec<i32> = vals
        .iter()
        .zip(&scales)
        .map(|(&v, &s)| {
            let r = (v as f64 / s as f64).round();
            r.clamp(i32::MIN as f64, i32::MAX as f64) as i32
        })
        .collect();
    t.dtype = DType::I32;
    t.data = Some(bytemuck::cast_slice(&q).to_vec());
    t.quant = QuantParams {
        zero_point: vec![0; scales.len()],
        scale: scales,
        axis: 0,
    };
    Ok(())
}

/// Per-tensor asymmetric quantization of a float constant with `p`.
fn quantize_const(t: &mut TensorDef, p: &QuantParams) {
    let vals = f32_data(t);
    let (s, z) = (p.scale0(), p.zero_point0());
    let q: Vec<i8> = vals
        .iter()
        .map(|&v| crate::quant::quantize_value(v, s, z).clamp(-128, 127) as i8)
        .collect();
    t.dtype = DType::I8;
    t.data = Some(bytemuck::cast_slice(&q).to_vec());
    t.quant = p.clone();
}

fn boundary_tensor(from: &TensorDef, name: String, dtype: DType, quant: QuantParams) -> TensorDef {
    TensorDef {
        name,
        dtype,
        shape: from.shape.clone(),
        shape_signature: from.shape_signature.clone(),
        quant,
        data: None,
        is_variable: false,
    }
}

fn convert_op(code: i32, input: i32, output: i32) -> OpDef {
    OpDef {
        code,
        custom_code: None,
        version: if code == DEQUANTIZE { 2 } else { 1 },
        inputs: vec![input],
        outputs: vec![output],
        options: Some(if code == DEQUANTIZE {
            BuiltinOptions::DequantizeOptions(Box::default())
        } else {
            BuiltinOptions::QuantizeOptions(Box::default())
        }),
    }
}

fn to_uint8(p: &QuantParams) -> QuantParams {
    QuantParams {
        scale: p.scale.clone(),
        zero_point: p.zero_point.iter().map(|z| z + 128).collect(),
        axis: p.axis,
    }
}

/// Quantizes the float `model` (shapes filled) in place.
pub fn full_integer(model: &mut Model, options: &FullIntegerOptions) -> Result<()> {
    let ranges = calibrate(model, &options.samples)?;
    let sg = &mut model.subgraphs[0];
    let nt = sg.tensors.len();
    let is_f32 = |t: &TensorDef| t.dtype == DType::F32;

    // Which operators run in int8.
    let mut int8_op = vec![false; sg.operators.len()];
    for (k, op) in sg.operators.iter().enumerate() {
        let tensor = |i: i32| (i >= 0).then(|| &sg.tensors[i as usize]);
        let has_f32_input = op
            .inputs
            .iter()
            .any(|&i| tensor(i).map(is_f32).unwrap_or(false));
        let outputs_f32 = op.outputs.iter().all(|&i| is_f32(&sg.tensors[i as usize]));
        let weights_ok = match weight_axis(op.code) {
            Some(_) => {
                let w = op.inputs.get(1).and_then(|&i| tensor(i));
                let b = op.inputs.get(2).and_then(|&i| tensor(i));
                w.map(|w| is_f32(w) && w.data.is_some()).unwrap_or(false)
                    && b.map(|b| is_f32(b) && b.data.is_some()).unwrap_or(true)
                    && op
                        .inputs
                        .first()
                        .and_then(|&i| tensor(i))
                        .map(|x| is_f32(x) && x.data.is_none())
                        .unwrap_or(false)
            }
            None => true,
        };
        let ok = int8_version(op.code).is_some() && has_f32_input && outputs_f32 && weights_ok;
        if !ok && options.int8_only {
            bail!(
                unimplemented,
                "full-integer quantization: operator {k} ({}) has no int8 form ferroflow can \
                 write, and target_spec.supported_ops allows only TFLITE_BUILTINS_INT8; \
                 allow TFLITE_BUILTINS as well to keep it in float",
                builtin_name(op.code)
            );
        }
        int8_op[k] = ok;
    }

    // Each float tensor's range: calibrated for activations, the values
    // for constants. Then TFLite's propagation through operators that keep
    // their input's parameters: fixed output parameters flow forward, and
    // every other range flows backward from such an operator's output to
    // its inputs (the downstream range wins, as TFLite's
    // `RemoveRedundantStatsOps` does), and finally forward again so that
    // single-input operators have equal input and output parameters.
    let mut range: Vec<Option<(f32, f32)>> = (0..nt)
        .map(|i| match &sg.tensors[i].data {
            Some(_) if is_f32(&sg.tensors[i]) => range_of(&f32_data(&sg.tensors[i])),
            _ => ranges[i],
        })
        .collect();
    let mut fixed: Vec<Option<(f32, i64)>> = vec![None; nt];
    let f32_ins = |op: &OpDef, tensors: &[TensorDef]| -> Vec<usize> {
        op.inputs
            .iter()
            .filter(|&&i| i >= 0 && is_f32(&tensors[i as usize]))
            .map(|&i| i as usize)
            .collect()
    };
    for (k, op) in sg.operators.iter().enumerate() {
        if !int8_op[k] {
            continue;
        }
        if let Some(p) = fixed_output(op.code) {
            fixed[op.outputs[0] as usize] = Some(p);
        } else if same_scale(op.code) {
            let ins = f32_ins(op, &sg.tensors);
            if let Some(p) = ins.iter().find_map(|&i| fixed[i]) {
                for &o in &op.outputs {
                    fixed[o as usize] = Some(p);
                }
            }
        }
    }
    for (k, op) in sg.operators.iter().enumerate().rev() {
        if !int8_op[k] || !same_scale(op.code) {
            continue;
        }
        let outs = op.outputs.iter().map(|&o| o as usize);
        let r = outs.clone().fold(None, |acc, o| merge(acc, range[o]));
        for o in outs {
            range[o] = r;
        }
        for i in f32_ins(op, &sg.tensors) {
            if fixed[i].is_none() {
                range[i] = r;
            }
        }
    }
    for (k, op) in sg.operators.iter().enumerate() {
        if !int8_op[k] || !same_scale(op.code) || matches!(op.code, CONCATENATION | PACK) {
            continue;
        }
        if let Some(&i) = f32_ins(op, &sg.tensors).first() {
            for &o in &op.outputs {
                range[o as usize] = range[i];
                fixed[o as usize] = fixed[i];
            }
        }
    }
    let params: Vec<Option<QuantParams>> = (0..nt)
        .map(|i| {
            if !is_f32(&sg.tensors[i]) {
                return None;
            }
            fixed[i]
                .or_else(|| range[i].map(|(lo, hi)| choose_params(lo, hi)))
                .map(|(s, z)| QuantParams::per_tensor(s, z))
        })
        .collect();
    let names: Vec<String> = sg.tensors.iter().map(|t| t.name.clone()).collect();
    let params_of = |i: usize, what: &str| -> Result<QuantParams> {
        params[i].clone().ok_or_else(|| {
            Error::invalid(format!(
                "full-integer quantization: {what} tensor {:?} was never computed on the \
                 representative samples",
                names[i]
            ))
        })
    };

    // Weights, biases and other constants of int8 operators.
    let mut weight_done: HashMap<usize, Vec<f32>> = HashMap::new();
    for (k, &is_int8) in int8_op.iter().enumerate() {
        if !is_int8 {
            continue;
        }
        let op = sg.operators[k].clone();
        if let Some(axis) = weight_axis(op.code) {
            let x = op.inputs[0] as usize;
            let in_scale = params_of(x, "input")?.scale0();
            let w = op.inputs[1] as usize;
            let scales = match weight_done.get(&w) {
                Some(s) => s.clone(),
                None => {
                    let s = quantize_weights(&mut sg.tensors[w], axis)?;
                    weight_done.insert(w, s.clone());
                    s
                }
            };
            if let Some(&b) = op.inputs.get(2).filter(|&&b| b >= 0) {
                let b = b as usize;
                quantize_bias(&mut sg.tensors[b], in_scale, &scales)?;
            }
            continue;
        }
        for &i in &op.inputs {
            if i < 0 {
                continue;
            }
            let t = &sg.tensors[i as usize];
            if is_f32(t) && t.data.is_some() {
                let p = params_of(i as usize, "constant")?;
                quantize_const(&mut sg.tensors[i as usize], &p);
            }
        }
    }

    // Activations produced by int8 operators become int8 in place.
    for (k, &is_int8) in int8_op.iter().enumerate() {
        if !is_int8 {
            continue;
        }
        for &o in &sg.operators[k].outputs.clone() {
            let p = params_of(o as usize, "output")?;
            let t = &mut sg.tensors[o as usize];
            t.dtype = DType::I8;
            t.quant = p;
        }
    }

    // Integer model inputs.
    let mut prologue = Vec::new();
    let mut input_sub: HashMap<i32, i32> = HashMap::new();
    if options.input_type != IoType::Float {
        for &i in &sg.inputs.clone() {
            let iu = i as usize;
            if !is_f32(&sg.tensors[iu]) {
                continue;
            }
            let p = params[iu]
                .clone()
                .unwrap_or_else(|| QuantParams::per_tensor(1.0, 0));
            if options.input_type == IoType::Int8 {
                let t = &mut sg.tensors[iu];
                t.dtype = DType::I8;
                t.quant = p;
            } else {
                let q = boundary_tensor(
                    &sg.tensors[iu],
                    format!("{}_int8", sg.tensors[iu].name),
                    DType::I8,
                    p.clone(),
                );
                sg.tensors.push(q);
                let qi = (sg.tensors.len() - 1) as i32;
                let t = &mut sg.tensors[iu];
                t.dtype = DType::U8;
                t.quant = to_uint8(&p);
                prologue.push(convert_op(QUANTIZE, i, qi));
                input_sub.insert(i, qi);
            }
        }
    }

    // Rewrite: QUANTIZE float tensors into int8 operators, DEQUANTIZE int8
    // tensors into float ones.
    let mut q_of: HashMap<i32, i32> = HashMap::new();
    let mut f_of: HashMap<i32, i32> = HashMap::new();
    let mut ops = prologue;
    for (k, mut op) in std::mem::take(&mut sg.operators).into_iter().enumerate() {
        for slot in op.inputs.iter_mut() {
            if let Some(&s) = input_sub.get(slot) {
                *slot = s;
            }
            if *slot < 0 {
                continue;
            }
            let i = *slot;
            let t = &sg.tensors[i as usize];
            if int8_op[k] && t.dtype == DType::F32 && t.data.is_none() {
                let qi = match q_of.get(&i) {
                    Some(&q) => q,
                    None => {
                        let p = params_of(i as usize, "input")?;
                        let q = boundary_tensor(t, format!("{}_int8", t.name), DType::I8, p);
                        sg.tensors.push(q);
                        let qi = (sg.tensors.len() - 1) as i32;
                        ops.push(convert_op(QUANTIZE, i, qi));
                        q_of.insert(i, qi);
                        qi
                    }
                };
                *slot = qi;
            } else if !int8_op[k]
                && matches!(t.dtype, DType::I8 | DType::U8)
                && t.quant.is_quantized()
            {
                let fi = match f_of.get(&i) {
                    Some(&f) => f,
                    None => {
                        let f = boundary_tensor(
                            t,
                            format!("{}_dequantize", t.name),
                            DType::F32,
                            QuantParams::default(),
                        );
                        sg.tensors.push(f);
                        let fi = (sg.tensors.len() - 1) as i32;
                        ops.push(convert_op(DEQUANTIZE, i, fi));
                        f_of.insert(i, fi);
                        fi
                    }
                };
                *slot = fi;
            }
        }
        if int8_op[k] {
            op.version = int8_version(op.code).unwrap_or(op.version);
            if let Some(BuiltinOptions::FullyConnectedOptions(o)) = op.options.as_mut() {
                o.asymmetric_quantize_inputs = false;
            }
        }
        ops.push(op);
    }

    // Model outputs.
    for oi in 0..sg.outputs.len() {
        let o = sg.outputs[oi];
        let t = sg.tensors[o as usize].clone();
        let want = options.output_type;
        match (t.dtype, want) {
            (DType::I8, IoType::Int8) | (DType::F32, IoType::Float) => {}
            (DType::I8, IoType::Float) | (DType::I8, IoType::UInt8) => {
                let (dtype, quant, code) = if want == IoType::Float {
                    (DType::F32, QuantParams::default(), DEQUANTIZE)
                } else {
                    (DType::U8, to_uint8(&t.quant), QUANTIZE)
                };
                let out = boundary_tensor(&t, t.name.clone(), dtype, quant);
                sg.tensors[o as usize].name = format!("{}_int8", t.name);
                sg.tensors.push(out);
                let ni = (sg.tensors.len() - 1) as i32;
                ops.push(convert_op(code, o, ni));
                sg.outputs[oi] = ni;
            }
            (DType::F32, _) => {
                let p = params_of(o as usize, "output")?;
                let (dtype, quant) = if want == IoType::UInt8 {
                    (DType::U8, to_uint8(&p))
                } else {
                    (DType::I8, p)
                };
                let out = boundary_tensor(&t, t.name.clone(), dtype, quant);
                sg.tensors[o as usize].name = format!("{}_float", t.name);
                sg.tensors.push(out);
                let ni = (sg.tensors.len() - 1) as i32;
                ops.push(convert_op(QUANTIZE, o, ni));
                sg.outputs[oi] = ni;
            }
            _ => {}
        }
    }
    sg.operators = ops;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_follow_choose_quantization_params() {
        // Non-negative range: zero point at the bottom.
        let (s, z) = choose_params(0.0, 2.55);
        assert!((s - 0.01).abs() < 1e-7);
        assert_eq!(z, -128);
        // A symmetric range: the zero point -0.5 rounds away from zero.
        let (s, z) = choose_params(-1.0, 1.0);
        assert!((s - 2.0 / 255.0).abs() < 1e-7);
        assert_eq!(z, -1);
        // A range away from zero is widened to include it.
        let (s, z) = choose_params(-3.0, -1.0);
        assert!((s - 3.0 / 255.0).abs() < 1e-7);
        assert_eq!(z, 127);
        assert_eq!(choose_params(0.0, 0.0), (1.0, 0));
    }

    #[test]
    fn per_channel_weights_are_symmetric() {
        let vals = [1.0f32, -0.5, 0.25, -2.0, 0.0, 0.0];
        let mut t = TensorDef {
            name: "w".into(),
            dtype: DType::F32,
            shape: vec![3, 2],
            shape_signature: None,
            quant: QuantParams::default(),
            data: Some(bytemuck::cast_slice(&vals).to_vec()),
            is_variable: false,
        };
        let scales = quantize_weights(&mut t, 0).unwrap();
        assert_eq!(scales, vec![1.0 / 127.0, 2.0 / 127.0, 1.0]);
        let q: Vec<i8> = bytemuck::cast_slice(t.data.as_deref().unwrap()).to_vec();
        assert_eq!(q, vec![127, -64, 16, -127, 0, 0]);
        assert_eq!(t.quant.zero_point, vec![0, 0, 0]);
    }

    #[test]
    fn fixture_mlp_quantizes_and_runs_in_int8() {
        use crate::converter::{convert, ConvertOptions, Quantization};
        let graph = include_bytes!("../../../tests/fixtures/tflite/mlp_frozen.pb");
        // Deterministic samples spread over [-2, 2].
        let samples: Vec<Vec<Sample>> = (0..8)
            .map(|k| {
                let data = (0..16)
                    .map(|i| (((k * 16 + i) * 37 % 101) as f32 / 25.0) - 2.0)
                    .collect();
                vec![Sample {
                    shape: vec![1, 16],
                    data,
                }]
            })
            .collect();
        let options = ConvertOptions {
            inputs: vec!["input".into()],
            input_shapes: vec![None],
            outputs: vec!["output".into()],
            quantization: Quantization::FullInteger(Box::new(FullIntegerOptions {
                samples: samples.clone(),
                input_type: IoType::Int8,
                output_type: IoType::Int8,
                int8_only: true,
            })),
        };
        let bytes = convert(graph, &options).unwrap();
        let mut it = Interpreter::from_bytes(&bytes, 1).unwrap();
        it.allocate_tensors().unwrap();
        let sg = &it.model().subgraphs[0];
        let (inp, out) = (sg.inputs[0] as i64, sg.outputs[0] as i64);
        let names: Vec<String> = sg.operators.iter().map(|o| o.name()).collect();
        assert_eq!(
            names,
            [
                "FULLY_CONNECTED",
                "FULLY_CONNECTED",
                "TANH",
                "FULLY_CONNECTED",
                "SOFTMAX"
            ]
        );
        let q = it.tensor(inp).unwrap().quant.clone();
        let x: Vec<i8> = samples[0][0]
            .data
            .iter()
            .map(|&v| {
                crate::quant::quantize_value(v, q.scale0(), q.zero_point0()).clamp(-128, 127) as i8
            })
            .collect();
        it.set_tensor(inp, DType::I8, &[1, 16], bytemuck::cast_slice(&x))
            .unwrap();
        it.invoke().unwrap();
        let y = it.tensor(out).unwrap();
        assert_eq!(y.dtype, DType::I8);
        assert_eq!(
            (y.quant.scale0(), y.quant.zero_point0()),
            (1.0 / 256.0, -128)
        );
        // Softmax probabilities sum to about one.
        let total: f32 = y
            .as_slice::<i8>()
            .iter()
            .map(|&v| (v as f32 + 128.0) / 256.0)
            .sum();
        assert!((total - 1.0).abs() < 0.05, "{total}");
    }
}
