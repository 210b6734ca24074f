//! Dynamic-range ("hybrid") kernels: float activations, int8 weights with
//! scales, float outputs, as TFLite runs models quantized with
//! `Optimize.DEFAULT` and no representative dataset.
//!
//! FULLY_CONNECTED follows TFLite's algorithm: each input row is quantized
//! to int8 on the fly (symmetric: `scale = max|x| / 127`; asymmetric, with
//! the op's `asymmetric_quantize_inputs`: TFLite's nudged zero point over
//! `[min(x, 0), max(x, 0)]`), dotted with the int8 weights in int32, the
//! zero point's share removed through the weight row sums, and the sum
//! scaled by `input_scale * weight_scale[channel]` onto the float bias.

use std::sync::Mutex;

use super::int8::rows_dot;
use super::{activation_range, Inputs, Kernel, RunContext};
use crate::error::{LiteError, Result};
use crate::interpreter::Slot;
use crate::model::{DType, OpDef};
use crate::options;
use crate::schema::BuiltinOptions;
use ferroflow_tensor::bail;

/// Builds the kernel when `op` is a hybrid operator (float input, int8
/// weights).
pub fn build(
    op: &OpDef,
    tensors: &[Slot],
    opts: Option<&BuiltinOptions>,
    input: Option<DType>,
    output: Option<DType>,
) -> Result<Option<Box<dyn Kernel>>> {
    if input != Some(DType::F32) || output != Some(DType::F32) {
        return Ok(None);
    }
    let weights = op
        .inputs
        .get(1)
        .filter(|&&i| i >= 0)
        .and_then(|&i| tensors.get(i as usize));
    let Some(w) = weights else {
        return Ok(None);
    };
    if w.dtype != DType::I8 {
        return Ok(None);
    }
    Ok(Some(match op.code {
        // FULLY_CONNECTED
        9 => {
            let o = options!(opts, FullyConnectedOptions);
            Box::new(FullyConnected::new(
                op,
                tensors,
                w,
                o.fused_activation_function,
                o.keep_num_dims,
                o.asymmetric_quantize_inputs,
            )?)
        }
        _ => return Ok(None),
    }))
}

/// TFLite's symmetric quantization of one row: returns the scale.
pub fn quantize_symmetric(x: &[f32], q: &mut [i8]) -> f32 {
    let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
    for &v in x {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if x.is_empty() {
        (lo, hi) = (0.0, 0.0);
    }
    let range = lo.abs().max(hi.abs());
    if range == 0.0 {
        q.fill(0);
        return 1.0;
    }
    let inv = 127.0f32 / range;
    for (d, &v) in q.iter_mut().zip(x) {
        *d = ((v * inv).round() as i32).clamp(-127, 127) as i8;
    }
    range / 127.0
}

/// TFLite's asymmetric quantization of one row: returns the scale and the
/// (nudged) zero point.
pub fn quantize_asymmetric(x: &[f32], q: &mut [i8]) -> (f32, i32) {
    let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
    for &v in x {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    let rmin = lo.min(0.0) as f64;
    let rmax = hi.max(0.0) as f64;
    if rmin == rmax || x.is_empty() {
        q.fill(0);
        return (1.0, 0);
    }
    let (qmin, qmax) = (-128.0f64, 127.0f64);
    let scale = (rmax - rmin) / (qmax - qmin);
    let zp_from_min = qmin - rmin / scale;
    let zp_from_max = qmax - rmax / scale;
    let err_min = qmin.abs() + (rmin / scale).abs();
    let err_max = qmax.abs() + (rmax / scale).abs();
    let zp_real = if err_min < err_max {
        zp_from_min
    } else {
        zp_from_max
    };
    let zp = if zp_real <= qmin {
        -128
    } else if zp_real >= qmax {
        127
    } else {
        zp_real.round() as i32
    };
    let scale = scale as f32;
    let inv = 1.0f32 / scale;
    for (d, &v) in q.iter_mut().zip(x) {
        *d = ((zp as f32 + v * inv).round() as i32).clamp(-128, 127) as i8;
    }
    (scale, zp)
}

struct FullyConnected {
    /// `[out, in]` int8 weights.
    w: Vec<i8>,
    /// Sum of each weight row (for the asymmetric input's zero point).
    row_sums: Vec<i32>,
    /// Weight scale per output channel.
    scales: Vec<f32>,
    bias: Vec<f32>,
    in_dim: usize,
    out_dim: usize,
    act: (f32, f32),
    keep_num_dims: bool,
    asymmetric: bool,
    /// The quantized input row and the accumulators.
    scratch: Mutex<(Vec<i8>, Vec<i32>)>,
}

impl FullyConnected {
    fn new(
        op: &OpDef,
        tensors: &[Slot],
        w: &Slot,
        act: i8,
        keep_num_dims: bool,
        asymmetric: bool,
    ) -> Result<FullyConnected> {
        if !w.constant || w.shape.len() != 2 {
            bail!(
                unimplemented,
                "FULLY_CONNECTED: hybrid weights must be a constant 2-D INT8 tensor, got {:?}",
                w.shape
            );
        }
        let (out_dim, in_dim) = (w.shape[0], w.shape[1]);
        let q = &w.quant;
        if q.zero_point.iter().any(|&z| z != 0) {
            bail!(
                unimplemented,
                "FULLY_CONNECTED: hybrid weights must be symmetric (zero point 0)"
            );
        }
        let scales: Vec<f32> = match q.scale.len() {
            1 => vec![q.scale[0]; out_dim],
            n if n == out_dim => q.scale.clone(),
            n => {
                bail!(
                    invalid,
                    "FULLY_CONNECTED: {n} weight scales for {out_dim} output channels"
                )
            }
        };
        let data = w.as_slice::<i8>().to_vec();
        let row_sums = data
            .chunks_exact(in_dim.max(1))
            .map(|r| r.iter().map(|&v| v as i32).sum())
            .collect();
        let bias = match op.inputs.get(2).filter(|&&i| i >= 0) {
            None => Vec::new(),
            Some(&i) => {
                let b = &tensors[i as usize];
                if !b.constant || b.dtype != DType::F32 || b.num_elements() != out_dim {
                    bail!(
                        unimplemented,
                        "FULLY_CONNECTED: the bias must be a constant FLOAT32 tensor of {out_dim} values"
                    );
                }
                b.as_slice::<f32>().to_vec()
            }
        };
        Ok(FullyConnected {
            w: data,
            row_sums,
            scales,
            bias,
            in_dim,
            out_dim,
            act: activation_range(act)?,
            keep_num_dims,
            asymmetric,
            scratch: Mutex::new((vec![0; in_dim], vec![0; out_dim])),
        })
    }
}

impl Kernel for FullyConnected {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        let x = inputs.get(0)?;
        let n = x.num_elements();
        if self.in_dim == 0 || !n.is_multiple_of(self.in_dim) {
            bail!(
                invalid,
                "FULLY_CONNECTED: input shape {:?} does not fit weights of depth {}",
                x.shape,
                self.in_dim
            );
        }
        if self.keep_num_dims {
            let mut s = x.shape.clone();
            if let Some(l) = s.last_mut() {
                *l = self.out_dim;
            }
            return Ok(vec![s]);
        }
        Ok(vec![vec![n / self.in_dim, self.out_dim]])
    }
    fn run(&self, _: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let x = inputs.get(0)?.as_slice::<f32>();
        let out = outputs[0].as_mut_slice::<f32>();
        let mut guard = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
        let (q, acc) = &mut *guard;
        let (k, n) = (self.in_dim, self.out_dim);
        for (row, dst) in x.chunks_exact(k).zip(out.chunks_exact_mut(n)) {
            let (scale, zp) = if self.asymmetric {
                quantize_asymmetric(row, q)
            } else {
                (quantize_symmetric(row, q), 0)
            };
            acc.fill(0);
            rows_dot(q, &self.w, k, acc);
            for o in 0..n {
                let dot = acc[o].wrapping_sub(self.row_sums[o].wrapping_mul(zp));
                let s = scale * self.scales[o];
                let b = self.bias.get(o).copied().unwrap_or(0.0);
                dst[o] = (b + dot as f32 * s).max(self.act.0).min(self.act.1);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symmetric_quantization_uses_the_largest_magnitude() {
        let x = [0.5f32, -1.27, 0.01, 1.0];
        let mut q = [0i8; 4];
        let s = quantize_symmetric(&x, &mut q);
        assert!((s - 0.01).abs() < 1e-7);
        assert_eq!(q, [50, -127, 1, 100]);
        let s = quantize_symmetric(&[0.0; 3], &mut q[..3]);
        assert_eq!((s, &q[..3]), (1.0, &[0i8, 0, 0][..]));
    }

    #[test]
    fn asymmetric_quantization_nudges_the_zero_point() {
        // Range [0, 2.55]: scale 0.01, zero point -128.
        let x = [0.0f32, 2.55, 1.0];
        let mut q = [0i8; 3];
        let (s, zp) = quantize_asymmetric(&x, &mut q);
        assert!((s - 0.01).abs() < 1e-7);
        assert_eq!(zp, -128);
        assert_eq!(q, [-128, 127, -28]);
        // A symmetric range: the zero point -0.5 rounds away from zero.
        let (s, zp) = quantize_asymmetric(&[-1.0, 1.0, 0.25], &mut q);
        assert!((s - 2.0 / 255.0).abs() < 1e-7);
        assert_eq!(zp, -1);
        assert_eq!((q[0], q[2]), (-128, 31));
    }

    #[test]
    fn hybrid_fully_connected_is_close_to_float() {
        use crate::buffer::Buffer;
        use crate::quant::QuantParams;
        let w: Vec<i8> = (0..12).map(|i| (i * 23 % 255 - 127) as i8).collect();
        let wslot = Slot {
            name: "w".into(),
            dtype: DType::I8,
            shape: vec![3, 4],
            shape_signature: None,
            quant: QuantParams {
                scale: vec![0.01, 0.02, 0.03],
                zero_point: vec![0, 0, 0],
                axis: 0,
            },
            data: Buffer::from_bytes(&w.iter().map(|&v| v as u8).collect::<Vec<_>>()),
            constant: true,
        };
        let x = [0.3f32, -0.7, 1.1, 0.05];
        let xslot = Slot {
            name: "x".into(),
            dtype: DType::F32,
            shape: vec![1, 4],
            data: Buffer::from_bytes(bytemuck::cast_slice(&x)),
            ..Slot::default()
        };
        let op = OpDef {
            code: 9,
            custom_code: None,
            version: 12,
            inputs: vec![0, 1, -1],
            outputs: vec![2],
            options: None,
        };
        let yslot = Slot {
            dtype: DType::F32,
            shape: vec![1, 3],
            data: Buffer::zeroed(12),
            ..Slot::default()
        };
        for asym in [false, true] {
            let tensors = vec![xslot.clone(), wslot.clone(), yslot.clone()];
            let mut k = FullyConnected::new(&op, &tensors, &wslot, 0, false, asym).unwrap();
            let ins = Inputs {
                tensors: &tensors,
                index: &op.inputs,
            };
            assert_eq!(k.prepare(ins, &op.outputs).unwrap(), vec![vec![1, 3]]);
            let mut outs = vec![yslot.clone()];
            k.run(&RunContext { num_threads: 1 }, ins, &mut outs)
                .unwrap();
            let got = outs[0].as_slice::<f32>();
            for o in 0..3 {
                let want: f32 = (0..4)
                    .map(|i| x[i] * w[o * 4 + i] as f32 * wslot.quant.scale[o])
                    .sum();
                assert!(
                    (got[o] - want).abs() < 0.02 * (1.0 + want.abs()),
                    "{asym} {o}: {} vs {want}",
                    got[o]
                );
            }
        }
    }
}
