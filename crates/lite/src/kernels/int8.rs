//! Full-integer kernels: int8 activations (and uint8 for the element-wise
//! operators), int8 per-channel weights and int32 biases, computed with
//! TFLite's integer arithmetic so outputs match TFLite's bit for bit.
//!
//! * Convolutions and fully connected layers accumulate `w * (x - x_zp)` in
//!   int32 and requantize each output channel with its own multiplier
//!   `input_scale * weight_scale / output_scale` (computed in double, then
//!   [`Multiplier`]: Q31 mantissa; convolutions round twice as TFLite's
//!   reference kernels do, FULLY_CONNECTED once, as TF 2.21's does). The input zero point is
//!   folded into the bias at build time (`sum w * x_zp` per channel), so the
//!   inner loop is a plain int8 dot product; padded taps hold the zero point
//!   and so contribute nothing, as TFLite's skipped taps do.
//! * ADD/SUB rescale both inputs to a common scale with 20 bits of headroom
//!   (TFLite's `left_shift`), MUL multiplies the offset values, pools take the
//!   max or TFLite's rounded integer average over the taps inside the input.
//! * TANH and LOGISTIC are 256-entry tables built from the float function,
//!   and SOFTMAX uses a table of `exp`, as TFLite's default kernels do.
//! * MEAN follows TFLite's reference reduction (integer multiplier with the
//!   `1/n` folded in), CONCATENATION requantizes inputs whose parameters
//!   differ, QUANTIZE between integer types requantizes.

use std::sync::Mutex;

use super::float::{padding, reduce_shape, BroadcastPlan};
use super::geometry::{Axis, Padding};
use super::requant::Requant;
use super::{activation_range, const_ints, Inputs, Kernel, RunContext};
use crate::error::{Error, LiteError, Result};
use crate::interpreter::Slot;
use crate::model::{builtin_name, DType, OpDef};
use crate::options;
use crate::quant::{Multiplier, QuantParams};
use crate::schema::BuiltinOptions;
use ferroflow_tensor::{bail, ensure};

/// An 8-bit quantized element type.
trait Q8: bytemuck::Pod + Ord + Send + Sync {
    /// Smallest value, widened.
    const MIN: i32;
    /// Largest value, widened.
    const MAX: i32;
    /// The value as i32.
    fn widen(self) -> i32;
    /// An in-range i32 as the element (callers clamp first).
    fn narrow(v: i32) -> Self;
}

impl Q8 for i8 {
    const MIN: i32 = -128;
    const MAX: i32 = 127;
    #[inline(always)]
    fn widen(self) -> i32 {
        self as i32
    }
    #[inline(always)]
    fn narrow(v: i32) -> i8 {
        v as i8
    }
}

impl Q8 for u8 {
    const MIN: i32 = 0;
    const MAX: i32 = 255;
    #[inline(always)]
    fn widen(self) -> i32 {
        self as i32
    }
    #[inline(always)]
    fn narrow(v: i32) -> u8 {
        v as u8
    }
}

fn type_range(dtype: DType) -> (i32, i32) {
    match dtype {
        DType::U8 => (0, 255),
        DType::I16 => (-32768, 32767),
        _ => (-128, 127),
    }
}

/// TFLite's `CalculateActivationRangeQuantized`: the fused activation's
/// bounds in the output's quantized units, within `[qmin, qmax]`.
pub fn quantized_activation_range(
    code: i8,
    q: &QuantParams,
    qmin: i32,
    qmax: i32,
) -> Result<(i32, i32)> {
    activation_range(code)?;
    let (scale, zp) = (q.scale0(), q.zero_point0());
    let quantize = |f: f32| zp.saturating_add((f / scale).round() as i32);
    Ok(match code {
        1 => (qmin.max(quantize(0.0)), qmax),
        2 => (qmin.max(quantize(-1.0)), qmax.min(quantize(1.0))),
        3 => (qmin.max(quantize(0.0)), qmax.min(quantize(6.0))),
        _ => (qmin, qmax),
    })
}

fn is_q8(d: Option<DType>) -> bool {
    matches!(d, Some(DType::I8) | Some(DType::U8))
}

fn tensor<'a>(tensors: &'a [Slot], idx: Option<&i32>, what: &str) -> Result<&'a Slot> {
    idx.filter(|&&i| i >= 0)
        .and_then(|&i| tensors.get(i as usize))
        .ok_or_else(|| Error::invalid(format!("the {what} tensor is missing")))
}

fn per_tensor(s: &Slot, op: &str, what: &str) -> Result<(f32, i32)> {
    let q = &s.quant;
    if !q.is_quantized() || q.scale0() <= 0.0 || !q.scale0().is_finite() {
        bail!(
            invalid,
            "{op}: the {what} tensor {:?} has no valid quantization scale",
            s.name
        );
    }
    Ok((q.scale0(), q.zero_point0()))
}

/// Builds the kernel when `op` is a quantized (int8/uint8) operator.
pub fn build(
    op: &OpDef,
    tensors: &[Slot],
    opts: Option<&BuiltinOptions>,
    input: Option<DType>,
    output: Option<DType>,
) -> Result<Option<Box<dyn Kernel>>> {
    if !is_q8(input) {
        return Ok(None);
    }
    let dt = input.unwrap_or(DType::I8);
    let name = builtin_name(op.code);
    let x = tensor(tensors, op.inputs.first(), "input")?;
    let y = tensor(tensors, op.outputs.first(), "output")?;
    // Element-wise operators keep their type.
    let same_type = output == input;
    Ok(Some(match op.code {
        // FULLY_CONNECTED
        9 if dt == DType::I8 && output == Some(DType::I8) => {
            let o = options!(opts, FullyConnectedOptions);
            Box::new(FullyConnected::new(
                op,
                tensors,
                o.fused_activation_function,
                o.keep_num_dims,
            )?)
        }
        // CONV_2D
        3 if dt == DType::I8 && output == Some(DType::I8) => {
            let o = options!(opts, Conv2DOptions);
            Box::new(Conv::new(
                op,
                tensors,
                padding(o.padding)?,
                [o.stride_h, o.stride_w],
                [o.dilation_h_factor, o.dilation_w_factor],
                o.fused_activation_function,
            )?)
        }
        // DEPTHWISE_CONV_2D
        4 if dt == DType::I8 && output == Some(DType::I8) => {
            let o = options!(opts, DepthwiseConv2DOptions);
            Box::new(Depthwise::new(
                op,
                tensors,
                padding(o.padding)?,
                [o.stride_h, o.stride_w],
                [o.dilation_h_factor, o.dilation_w_factor],
                o.fused_activation_function,
            )?)
        }
        // AVERAGE_POOL_2D, MAX_POOL_2D
        1 | 17 if same_type => {
            let o = options!(opts, Pool2DOptions);
            let (lo, hi) = type_range(dt);
            Box::new(Pool {
                max: op.code == 17,
                padding: padding(o.padding)?,
                window: [o.filter_height, o.filter_width],
                stride: [o.stride_h, o.stride_w],
                act: quantized_activation_range(o.fused_activation_function, &y.quant, lo, hi)?,
                geom: None,
            })
        }
        // ADD, SUB, MUL
        0 | 41 | 18 if same_type => {
            let act = match op.code {
                0 => options!(opts, AddOptions).fused_activation_function,
                41 => options!(opts, SubOptions).fused_activation_function,
                _ => options!(opts, MulOptions).fused_activation_function,
            };
            let x2 = tensor(tensors, op.inputs.get(1), "second input")?;
            if x2.dtype != dt {
                return Ok(None);
            }
            Box::new(Binary::new(&name, op.code, x, x2, y, act)?)
        }
        // MEAN
        40 if same_type => Box::new(Mean {
            axes: const_ints(tensors, op, 1, "axis")?,
            keep_dims: options!(opts, ReducerOptions).keep_dims,
            input_q: per_tensor(x, &name, "input")?,
            output_q: per_tensor(y, &name, "output")?,
            plan: MeanPlan::default(),
            sums: Mutex::new(Vec::new()),
        }),
        // SOFTMAX
        25 if same_type => Box::new(Softmax::new(x, y, options!(opts, SoftmaxOptions).beta)?),
        // TANH, LOGISTIC
        28 | 14 if same_type => Box::new(Lut::new(&name, op.code == 28, x, y)?),
        // CONCATENATION (the element-moving kernel takes equal parameters)
        2 if same_type => {
            let o = options!(opts, ConcatenationOptions);
            let (lo, hi) = type_range(dt);
            let mut parts = Vec::new();
            for i in 0..op.inputs.len() {
                let t = tensor(tensors, op.inputs.get(i), "input")?;
                ensure!(
                    t.dtype == dt,
                    invalid,
                    "CONCATENATION: input {i} is {}, expected {}",
                    t.dtype.name(),
                    dt.name()
                );
                parts.push(per_tensor(t, &name, "input")?);
            }
            Box::new(Concat {
                axis: o.axis as i64,
                parts,
                out_q: per_tensor(y, &name, "output")?,
                act: quantized_activation_range(o.fused_activation_function, &y.quant, lo, hi)?,
                outer: 0,
                widths: Vec::new(),
            })
        }
        // QUANTIZE between integer types: requantization.
        114 if is_q8(output) => {
            let (si, zi) = per_tensor(x, &name, "input")?;
            let (so, zo) = per_tensor(y, &name, "output")?;
            Box::new(Requantize {
                mult: Multiplier::new(si as f64 / so as f64),
                in_zp: zi,
                out_zp: zo,
            })
        }
        _ => return Ok(None),
    }))
}

// ---------------------------------------------------------------------------
// int8 dot products, compiled for AVX2 when the CPU has it.

#[inline(always)]
fn dot_plain(a: &[i8], b: &[i8]) -> i32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut s = 0i32;
    for i in 0..n {
        s = s.wrapping_add((a[i] as i16 * b[i] as i16) as i32);
    }
    s
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn dot_avx2(a: &[i8], b: &[i8]) -> i32 {
    dot_plain(a, b)
}

/// `sum a[i] * b[i]` in int32 over the shorter length.
#[inline]
pub fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { dot_avx2(a, b) };
        }
    }
    dot_plain(a, b)
}

#[inline(always)]
fn rows_dot_plain(x: &[i8], w: &[i8], k: usize, acc: &mut [i32]) {
    for (o, a) in acc.iter_mut().enumerate() {
        *a = a.wrapping_add(dot_plain(x, &w[o * k..(o + 1) * k]));
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn rows_dot_avx2(x: &[i8], w: &[i8], k: usize, acc: &mut [i32]) {
    rows_dot_plain(x, w, k, acc)
}

/// `acc[o] += dot(x, w[o])` for the rows of a row-major `[acc.len(), k]`
/// matrix `w`.
#[inline]
pub fn rows_dot(x: &[i8], w: &[i8], k: usize, acc: &mut [i32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { rows_dot_avx2(x, w, k, acc) };
        }
    }
    rows_dot_plain(x, w, k, acc)
}

/// `src` (`rows x k` int8) widened to int16.
fn widen_rows(src: &[i8]) -> Vec<i16> {
    src.iter().map(|&v| v as i16).collect()
}

/// `acc[r * n + o] = bias[o] + x[r] . w[o]` (wrapping int32) for the `m`
/// rows of `x` and the `n` rows of `w`, both int16 rows of `k` values: the
/// portable path of CPUs without AVX2.
fn gemm_i16(m: usize, n: usize, k: usize, x: &[i16], w: &[i16], bias: &[i32], acc: &mut [i32]) {
    let (x, w, bias, acc) = (&x[..m * k], &w[..n * k], &bias[..n], &mut acc[..m * n]);
    for (r, xr) in x.chunks_exact(k.max(1)).enumerate() {
        for (o, wr) in w.chunks_exact(k.max(1)).enumerate() {
            let mut s = bias[o];
            for (&a, &b) in xr.iter().zip(wr) {
                s = s.wrapping_add(a as i32 * b as i32);
            }
            acc[r * n + o] = s;
        }
    }
}

/// Per-thread scratch of the int8 convolutions.
#[derive(Default)]
struct Scratch {
    /// Unsigned im2col rows (VNNI).
    x8: Vec<u8>,
    /// Widened im2col rows (int16 GEMM).
    x16: Vec<i16>,
    /// int32 accumulators.
    acc: Vec<i32>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

// ---------------------------------------------------------------------------
// Weighted operators.

/// Weights, bias and requantization shared by FULLY_CONNECTED and CONV_2D.
#[derive(Clone)]
struct Weighted {
    /// `[out, k]` int8 weights.
    w: Vec<i8>,
    /// The int32 bias with the input zero point folded in:
    /// `bias[o] - x_zp * sum_k w[o][k]`.
    bias: Vec<i32>,
    mult: Vec<Multiplier>,
    out_zp: i32,
    act: (i32, i32),
    k: usize,
    out: usize,
    /// Requantize with one rounding (FULLY_CONNECTED) instead of two.
    single_rounding: bool,
}

/// `x * m` with a single rounding, half toward positive infinity: TFLite's
/// int8 FULLY_CONNECTED (its gemm backend's requantization) rounds this
/// way, where convolutions use [`Multiplier::apply`]'s two roundings.
#[inline(always)]
pub fn apply_single_rounding(m: Multiplier, x: i32) -> i32 {
    let prod = x as i64 * m.q31 as i64;
    let total = 31 - m.shift;
    let r = if total <= 0 {
        prod.saturating_mul(1i64 << (-total).min(32))
    } else {
        (prod + (1i64 << (total - 1))) >> total
    };
    r.clamp(i32::MIN as i64, i32::MAX as i64) as i32
}

impl Weighted {
    /// `w_shape[0]` output channels; `k` values each.
    fn new(op: &OpDef, tensors: &[Slot], act: i8, fold_zp: bool) -> Result<(Weighted, i32)> {
        let name = op.name();
        let x = tensor(tensors, op.inputs.first(), "input")?;
        let w = tensor(tensors, op.inputs.get(1), "weights")?;
        let y = tensor(tensors, op.outputs.first(), "output")?;
        if !w.constant || w.dtype != DType::I8 || w.shape.is_empty() {
            bail!(
                unimplemented,
                "{name}: the weights must be a constant INT8 tensor, got {} {:?}",
                w.dtype.name(),
                w.shape
            );
        }
        let (sx, zx) = per_tensor(x, &name, "input")?;
        let (sy, zy) = per_tensor(y, &name, "output")?;
        let out = w.shape[0];
        let k = w.num_elements() / out.max(1);
        let wq = &w.quant;
        if wq.zero_point.iter().any(|&z| z != 0) {
            bail!(
                unimplemented,
                "{name}: INT8 weights with a nonzero zero point are not supported"
            );
        }
        if wq.scale.len() != 1 && wq.scale.len() != out {
            bail!(
                invalid,
                "{name}: {} weight scales for {out} output channels",
                wq.scale.len()
            );
        }
        let wdata = w.as_slice::<i8>().to_vec();
        let raw_bias: Vec<i32> = match op.inputs.get(2).filter(|&&i| i >= 0) {
            None => vec![0; out],
            Some(_) => {
                let b = tensor(tensors, op.inputs.get(2), "bias")?;
                if !b.constant || b.dtype != DType::I32 || b.num_elements() != out {
                    bail!(
                        unimplemented,
                        "{name}: the bias must be a constant INT32 tensor of {out} values, got {} {:?}",
                        b.dtype.name(),
                        b.shape
                    );
                }
                b.as_slice::<i32>().to_vec()
            }
        };
        let bias = raw_bias
            .iter()
            .enumerate()
            .map(|(o, &b)| {
                if fold_zp {
                    let s: i32 = wdata[o * k..(o + 1) * k].iter().map(|&v| v as i32).sum();
                    b.wrapping_sub(zx.wrapping_mul(s))
                } else {
                    b
                }
            })
            .collect();
        let mult = (0..out)
            .map(|o| {
                let ws = wq.scale[if wq.scale.len() == 1 { 0 } else { o }];
                Multiplier::new(sx as f64 * ws as f64 / sy as f64)
            })
            .collect();
        Ok((
            Weighted {
                w: wdata,
                bias,
                mult,
                out_zp: zy,
                act: quantized_activation_range(act, &y.quant, -128, 127)?,
                k,
                out,
                single_rounding: false,
            },
            zx,
        ))
    }

    /// Requantizes `acc` (one pixel's or row's accumulators) into `dst`.
    #[inline(always)]
    fn store(&self, acc: &[i32], dst: &mut [i8]) {
        for ((d, &a), &m) in dst.iter_mut().zip(acc).zip(&self.mult) {
            let scaled = if self.single_rounding {
                apply_single_rounding(m, a)
            } else {
                m.apply(a)
            };
            *d = scaled
                .wrapping_add(self.out_zp)
                .clamp(self.act.0, self.act.1) as i8;
        }
    }
}

struct FullyConnected {
    p: Weighted,
    keep_num_dims: bool,
    acc: Mutex<Vec<i32>>,
}

impl FullyConnected {
    fn new(op: &OpDef, tensors: &[Slot], act: i8, keep_num_dims: bool) -> Result<FullyConnected> {
        let (mut p, _) = Weighted::new(op, tensors, act, true)?;
        p.single_rounding = true;
        let acc = Mutex::new(vec![0; p.out]);
        Ok(FullyConnected {
            p,
            keep_num_dims,
            acc,
        })
    }
}

impl Kernel for FullyConnected {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        let x = inputs.get(0)?;
        let n = x.num_elements();
        let k = self.p.k;
        if k == 0 || !n.is_multiple_of(k) {
            bail!(
                invalid,
                "FULLY_CONNECTED: input shape {:?} does not fit weights of depth {k}",
                x.shape
            );
        }
        if self.keep_num_dims {
            let mut s = x.shape.clone();
            if let Some(l) = s.last_mut() {
                *l = self.p.out;
            }
            return Ok(vec![s]);
        }
        Ok(vec![vec![n / k, self.p.out]])
    }
    fn run(&self, _: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let x = inputs.get(0)?.as_slice::<i8>();
        let out = outputs[0].as_mut_slice::<i8>();
        let (k, n) = (self.p.k, self.p.out);
        let mut acc = self.acc.lock().unwrap_or_else(|e| e.into_inner());
        for (row, dst) in x.chunks_exact(k).zip(out.chunks_exact_mut(n)) {
            acc.copy_from_slice(&self.p.bias);
            rows_dot(row, &self.p.w, k, &mut acc);
            self.p.store(&acc, dst);
        }
        Ok(())
    }
}

struct Geom {
    n: usize,
    h: Axis,
    w: Axis,
}

fn geom(
    op: &str,
    x: &Slot,
    padding: Padding,
    window: [usize; 2],
    stride: [i32; 2],
    dilation: [i32; 2],
    channels: Option<usize>,
) -> Result<Geom> {
    if x.shape.len() != 4 || channels.is_some_and(|c| x.shape[3] != c) {
        bail!(
            invalid,
            "{op}: input shape {:?} is not NHWC{}",
            x.shape,
            channels
                .map(|c| format!(" with {c} channels"))
                .unwrap_or_default()
        );
    }
    Ok(Geom {
        n: x.shape[0],
        h: Axis::new(op, padding, x.shape[1], window[0], stride[0], dilation[0])?,
        w: Axis::new(op, padding, x.shape[2], window[1], stride[1], dilation[1])?,
    })
}

/// The GEMM an int8 convolution runs on, with its weights packed for it.
enum ConvGemm {
    /// AVX512-VNNI (`qgemm`).
    Vnni(super::qgemm::Packed),
    /// AVX2 int16 outer products (`qgemm_avx2`).
    Avx2(super::qgemm_avx2::Packed),
    /// Portable: the weights widened to int16, `[out, k]`.
    Plain(Vec<i16>),
}

impl ConvGemm {
    /// The fastest GEMM this CPU runs.
    fn for_cpu(p: &Weighted) -> ConvGemm {
        if super::qgemm::available() {
            ConvGemm::Vnni(super::qgemm::Packed::new(&p.w, &p.bias, p.out, p.k))
        } else if super::qgemm_avx2::available() {
            ConvGemm::Avx2(super::qgemm_avx2::Packed::new(&p.w, &p.bias, p.out, p.k))
        } else {
            ConvGemm::Plain(widen_rows(&p.w))
        }
    }
}

struct Conv {
    p: Weighted,
    kh: usize,
    kw: usize,
    ic: usize,
    in_zp: i8,
    padding: Padding,
    stride: [i32; 2],
    dilation: [i32; 2],
    geom: Option<Geom>,
    gemm: ConvGemm,
    rq: Requant,
}

impl Conv {
    fn new(
        op: &OpDef,
        tensors: &[Slot],
        padding: Padding,
        stride: [i32; 2],
        dilation: [i32; 2],
        act: i8,
    ) -> Result<Conv> {
        let w = tensor(tensors, op.inputs.get(1), "filter")?;
        ensure!(
            w.shape.len() == 4,
            invalid,
            "CONV_2D: the filter must be 4-D (OHWI), got {:?}",
            w.shape
        );
        let (kh, kw, ic) = (w.shape[1], w.shape[2], w.shape[3]);
        let (p, zx) = Weighted::new(op, tensors, act, true)?;
        if !(-128..=127).contains(&zx) {
            bail!(
                invalid,
                "CONV_2D: input zero point {zx} is out of the INT8 range"
            );
        }
        let rq = Requant::new(&p.mult, p.out_zp, p.act);
        Ok(Conv {
            rq,
            gemm: ConvGemm::for_cpu(&p),
            p,
            kh,
            kw,
            ic,
            in_zp: zx as i8,
            padding,
            stride,
            dilation,
            geom: None,
        })
    }
}

impl Conv {
    /// The same convolution on each GEMM this CPU runs, for tests.
    #[cfg(test)]
    fn on_every_gemm(self) -> Vec<Conv> {
        let mut gemms = vec![ConvGemm::Plain(widen_rows(&self.p.w))];
        if super::qgemm_avx2::available() {
            let pk = super::qgemm_avx2::Packed::new(&self.p.w, &self.p.bias, self.p.out, self.p.k);
            gemms.push(ConvGemm::Avx2(pk));
        }
        if super::qgemm::available() {
            let pk = super::qgemm::Packed::new(&self.p.w, &self.p.bias, self.p.out, self.p.k);
            gemms.push(ConvGemm::Vnni(pk));
        }
        gemms
            .into_iter()
            .map(|gemm| Conv {
                p: self.p.clone(),
                rq: self.rq.clone(),
                gemm,
                geom: None,
                kh: self.kh,
                kw: self.kw,
                ic: self.ic,
                in_zp: self.in_zp,
                padding: self.padding,
                stride: self.stride,
                dilation: self.dilation,
            })
            .collect()
    }
}

impl Kernel for Conv {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        let g = geom(
            "CONV_2D",
            inputs.get(0)?,
            self.padding,
            [self.kh, self.kw],
            self.stride,
            self.dilation,
            Some(self.ic),
        )?;
        let shape = vec![g.n, g.h.output, g.w.output, self.p.out];
        self.geom = Some(g);
        Ok(vec![shape])
    }
    fn run(&self, ctx: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let g = self
            .geom
            .as_ref()
            .ok_or_else(|| Error::internal("CONV_2D run before prepare"))?;
        let x = inputs.get(0)?.as_slice::<i8>();
        let out = outputs[0].as_mut_slice::<i8>();
        let (oh, ow, ic, oc, k) = (g.h.output, g.w.output, self.ic, self.p.out, self.p.k);
        let (ih, iw) = (g.h.input, g.w.input);
        let (kh, kw, zp) = (self.kh, self.kw, self.in_zp);
        let pointwise = kh == 1
            && kw == 1
            && g.h.stride == 1
            && g.w.stride == 1
            && g.h.pad_before == 0
            && g.w.pad_before == 0;
        // Output pixels `p0..` in order, as (image, oy, ox): one division
        // per block, then counters (divisions cost tens of cycles each).
        let pixels = |p0: usize| {
            let (mut b, mut oy, mut ox) = (p0 / (oh * ow), (p0 / ow) % oh, p0 % ow);
            std::iter::from_fn(move || {
                let at = (b, oy, ox);
                ox += 1;
                if ox == ow {
                    ox = 0;
                    oy += 1;
                    if oy == oh {
                        oy = 0;
                        b += 1;
                    }
                }
                let (b, oy, ox) = at;
                Some((&x[b * ih * iw * ic..(b + 1) * ih * iw * ic], oy, ox))
            })
        };
        // Blocks of output pixels: their im2col rows (padded taps hold the
        // zero point) times the weights, then requantized.
        let work = |blk: usize, dst: &mut [i8]| {
            let rows = dst.len() / oc;
            let p0 = blk * PIXELS_PER_BLOCK;
            SCRATCH.with(|cell| {
                let mut guard = cell.borrow_mut();
                let Scratch { x8, x16, acc } = &mut *guard;
                match &self.gemm {
                    ConvGemm::Vnni(pk) => {
                        let (kp, np) = (pk.kp, pk.np);
                        acc.resize(rows * np, 0);
                        if pointwise && kp == ic {
                            // A 1x1 convolution's input rows are the GEMM's
                            // rows: read in place, 128 added by the kernel.
                            let a: &[u8] = bytemuck::cast_slice(&x[p0 * ic..(p0 + rows) * ic]);
                            super::qgemm::gemm(rows, a, pk, acc, true);
                        } else {
                            // Unsigned im2col rows (x + 128); the bytes past
                            // `k` meet zero weights.
                            x8.resize(rows * kp, 0);
                            for (row, (img, oy, ox)) in x8.chunks_exact_mut(kp).zip(pixels(p0)) {
                                let to_u8 = |v: i8| (v as u8) ^ 0x80;
                                im2col_row(
                                    &mut row[..k],
                                    img,
                                    g,
                                    [oy, ox],
                                    [kh, kw, ic],
                                    to_u8(zp),
                                    to_u8,
                                );
                            }
                            super::qgemm::gemm(rows, x8, pk, acc, false);
                        }
                        self.rq.store_rows(acc, np, dst);
                    }
                    ConvGemm::Avx2(pk) => {
                        // Widened rows; the values past `k` meet zero
                        // weights, so they are left as they are.
                        let (kp, np) = (pk.kp, pk.np);
                        x16.resize(rows * kp, 0);
                        acc.resize(rows * np, 0);
                        if pointwise {
                            let src = &x[p0 * ic..(p0 + rows) * ic];
                            for (row, px) in x16.chunks_exact_mut(kp).zip(src.chunks_exact(ic)) {
                                for (d, &v) in row.iter_mut().zip(px) {
                                    *d = v as i16;
                                }
                            }
                        } else {
                            for (row, (img, oy, ox)) in x16.chunks_exact_mut(kp).zip(pixels(p0)) {
                                im2col_row(
                                    &mut row[..k],
                                    img,
                                    g,
                                    [oy, ox],
                                    [kh, kw, ic],
                                    zp as i16,
                                    |v| v as i16,
                                );
                            }
                        }
                        if self.rq.vector_exact() {
                            super::qgemm_avx2::gemm_requant(rows, x16, pk, &self.rq, dst);
                        } else {
                            super::qgemm_avx2::gemm(rows, x16, pk, acc);
                            self.rq.store_rows(acc, np, dst);
                        }
                    }
                    ConvGemm::Plain(w16) => {
                        x16.resize(rows * k, 0);
                        acc.resize(rows * oc, 0);
                        for (row, (img, oy, ox)) in x16.chunks_exact_mut(k.max(1)).zip(pixels(p0)) {
                            im2col_row(row, img, g, [oy, ox], [kh, kw, ic], zp as i16, |v| {
                                v as i16
                            });
                        }
                        gemm_i16(rows, oc, k, x16, w16, &self.p.bias, acc);
                        self.rq.store_rows(acc, oc, dst);
                    }
                }
            });
        };
        let out = &mut out[..g.n * oh * ow * oc];
        let block = PIXELS_PER_BLOCK * oc;
        if ctx.num_threads > 1 && out.len() > block && out.len() * k >= 1 << 16 {
            ferroflow_tensor::team::for_each_chunk_mut(out, block, work);
        } else {
            for (i, dst) in out.chunks_mut(block).enumerate() {
                work(i, dst);
            }
        }
        Ok(())
    }
}

/// Output pixels per block of the int8 convolution (one task each).
const PIXELS_PER_BLOCK: usize = 64;

/// One im2col row: the `kh * kw * ic` taps (`dims`) of output pixel
/// `at = [oy, ox]` of the NHWC image `img`, mapped through `f`; taps
/// outside the input hold `pad`.
#[inline(always)]
fn im2col_row<T: Copy>(
    row: &mut [T],
    img: &[i8],
    g: &Geom,
    at: [usize; 2],
    dims: [usize; 3],
    pad: T,
    f: impl Fn(i8) -> T,
) {
    let ([oy, ox], [kh, kw, ic]) = (at, dims);
    let (ih, iw) = (g.h.input, g.w.input);
    let kx = g.w.valid_taps(ox);
    let ix0 = g.w.source(ox, kx.start).max(0) as usize;
    for ky in 0..kh {
        let iy = g.h.source(oy, ky);
        let dst = &mut row[ky * kw * ic..(ky + 1) * kw * ic];
        if iy < 0 || iy as usize >= ih || kx.is_empty() {
            dst.fill(pad);
            continue;
        }
        let line = &img[iy as usize * iw * ic..(iy as usize + 1) * iw * ic];
        dst[..kx.start * ic].fill(pad);
        dst[kx.end * ic..].fill(pad);
        if g.w.dilation == 1 {
            // The window row's taps inside the input are one run.
            let src = &line[ix0 * ic..(ix0 + kx.len()) * ic];
            for (d, &v) in dst[kx.start * ic..kx.end * ic].iter_mut().zip(src) {
                *d = f(v);
            }
        } else {
            for (q, t) in kx.clone().enumerate() {
                let at = (ix0 + q * g.w.dilation) * ic;
                for (d, &v) in dst[t * ic..(t + 1) * ic].iter_mut().zip(&line[at..at + ic]) {
                    *d = f(v);
                }
            }
        }
    }
}

struct Depthwise {
    /// `[kh * kw, oc]` weights widened.
    w: Vec<i32>,
    /// The input widened to the output channels (channel multiplier > 1).
    wide: Mutex<Vec<i8>>,
    bias: Vec<i32>,
    in_offset: i32,
    kh: usize,
    kw: usize,
    oc: usize,
    depth_mult: usize,
    padding: Padding,
    stride: [i32; 2],
    dilation: [i32; 2],
    geom: Option<Geom>,
    rq: Requant,
}

impl Depthwise {
    fn new(
        op: &OpDef,
        tensors: &[Slot],
        padding: Padding,
        stride: [i32; 2],
        dilation: [i32; 2],
        act: i8,
    ) -> Result<Depthwise> {
        let name = "DEPTHWISE_CONV_2D";
        let x = tensor(tensors, op.inputs.first(), "input")?;
        let w = tensor(tensors, op.inputs.get(1), "filter")?;
        let y = tensor(tensors, op.outputs.first(), "output")?;
        if !w.constant || w.dtype != DType::I8 || w.shape.len() != 4 || w.shape[0] != 1 {
            bail!(
                unimplemented,
                "{name}: the filter must be a constant INT8 [1, H, W, C] tensor, got {} {:?}",
                w.dtype.name(),
                w.shape
            );
        }
        let (kh, kw, oc) = (w.shape[1], w.shape[2], w.shape[3]);
        let (sx, zx) = per_tensor(x, name, "input")?;
        let (sy, zy) = per_tensor(y, name, "output")?;
        let wq = &w.quant;
        if wq.zero_point.iter().any(|&z| z != 0) {
            bail!(
                unimplemented,
                "{name}: INT8 weights with a nonzero zero point are not supported"
            );
        }
        if wq.scale.len() != 1 && wq.scale.len() != oc {
            bail!(
                invalid,
                "{name}: {} filter scales for {oc} output channels",
                wq.scale.len()
            );
        }
        let bias = match op.inputs.get(2).filter(|&&i| i >= 0) {
            None => vec![0; oc],
            Some(_) => {
                let b = tensor(tensors, op.inputs.get(2), "bias")?;
                if !b.constant || b.dtype != DType::I32 || b.num_elements() != oc {
                    bail!(
                        unimplemented,
                        "{name}: the bias must be a constant INT32 tensor of {oc} values"
                    );
                }
                b.as_slice::<i32>().to_vec()
            }
        };
        let mult = (0..oc)
            .map(|o| {
                let ws = wq.scale[if wq.scale.len() == 1 { 0 } else { o }];
                Multiplier::new(sx as f64 * ws as f64 / sy as f64)
            })
            .collect::<Vec<_>>();
        let act = quantized_activation_range(act, &y.quant, -128, 127)?;
        Ok(Depthwise {
            w: w.as_slice::<i8>().iter().map(|&v| v as i32).collect(),
            wide: Mutex::new(Vec::new()),
            bias,
            rq: Requant::new(&mult, zy, act),
            in_offset: -zx,
            kh,
            kw,
            oc,
            depth_mult: 0,
            padding,
            stride,
            dilation,
            geom: None,
        })
    }
}

impl Kernel for Depthwise {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        let x = inputs.get(0)?;
        let g = geom(
            "DEPTHWISE_CONV_2D",
            x,
            self.padding,
            [self.kh, self.kw],
            self.stride,
            self.dilation,
            None,
        )?;
        let ic = x.shape[3];
        if ic == 0 || !self.oc.is_multiple_of(ic) {
            bail!(
                invalid,
                "DEPTHWISE_CONV_2D: {} output channels are not a multiple of {ic} input channels",
                self.oc
            );
        }
        self.depth_mult = self.oc / ic;
        let shape = vec![g.n, g.h.output, g.w.output, self.oc];
        self.geom = Some(g);
        Ok(vec![shape])
    }
    fn run(&self, ctx: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let g = self
            .geom
            .as_ref()
            .ok_or_else(|| Error::internal("DEPTHWISE_CONV_2D run before prepare"))?;
        let x = inputs.get(0)?.as_slice::<i8>();
        let out = outputs[0].as_mut_slice::<i8>();
        let (oc, m) = (self.oc, self.depth_mult.max(1));
        let (ih, iw, oh, ow) = (g.h.input, g.w.input, g.h.output, g.w.output);
        // With a channel multiplier, the input is first widened to the
        // output channels, once per invocation.
        let mut wide = self.wide.lock().unwrap_or_else(|e| e.into_inner());
        let x: &[i8] = if m == 1 {
            x
        } else {
            wide.clear();
            wide.extend(x.iter().flat_map(|&v| std::iter::repeat_n(v, m)));
            &wide
        };
        let in_img = ih * iw * oc;
        // One output row at a time; per output pixel and block of
        // channels, the taps inside the input accumulate in registers
        // (skipped taps contribute nothing, as in TFLite), then the row is
        // requantized.
        let work = |r: usize, dst: &mut [i8]| {
            let (b, oy) = (r / oh, r % oh);
            let ky = g.h.valid_taps(oy);
            let row = super::simd::DwRow {
                img: &x[b * in_img..(b + 1) * in_img],
                w: &[],
                iw,
                kw: self.kw,
                iy0: g.h.source(oy, ky.start).max(0) as usize,
                ky,
                dil_h: g.h.dilation,
                cols: &g.w,
            };
            SCRATCH.with(|cell| {
                let mut guard = cell.borrow_mut();
                let acc = &mut guard.acc;
                acc.resize(ow * oc, 0);
                super::simd::dw_row_i8(acc, &self.bias, self.in_offset, &self.w, &row);
                self.rq.store_rows(acc, oc, dst);
            });
        };
        super::float::for_each_row(
            ctx,
            &mut out[..g.n * oh * ow * oc],
            ow * oc,
            self.kh * self.kw,
            work,
        );
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Pools.

struct Pool {
    max: bool,
    padding: Padding,
    window: [i32; 2],
    stride: [i32; 2],
    act: (i32, i32),
    geom: Option<Geom>,
}

/// Channels per block of the pooling loops.
const POOL_BLOCK: usize = 64;

impl Pool {
    fn run_typed<T: Q8>(&self, g: &Geom, c: usize, x: &[T], out: &mut [T]) -> Result<()> {
        let (ih, iw, oh, ow) = (g.h.input, g.w.input, g.h.output, g.w.output);
        for b in 0..g.n {
            for oy in 0..oh {
                let ty = g.h.valid_taps(oy);
                for ox in 0..ow {
                    let tx = g.w.valid_taps(ox);
                    let count = (ty.len() * tx.len()) as i32;
                    ensure!(
                        count != 0,
                        invalid,
                        "{}: a pooling window covers no input",
                        if self.max {
                            "MAX_POOL_2D"
                        } else {
                            "AVERAGE_POOL_2D"
                        }
                    );
                    let dst = &mut out[((b * oh + oy) * ow + ox) * c..][..c];
                    // Channels in blocks of 64, taps outer: each tap is one
                    // contiguous run of channels.
                    for c0 in (0..c).step_by(POOL_BLOCK) {
                        let w = (c - c0).min(POOL_BLOCK);
                        let mut acc = [if self.max { T::MIN } else { 0 }; POOL_BLOCK];
                        let acc = &mut acc[..w];
                        for ky in ty.clone() {
                            let iy = g.h.source(oy, ky) as usize;
                            let line = &x[(b * ih + iy) * iw * c..];
                            for kx in tx.clone() {
                                let ix = g.w.source(ox, kx) as usize;
                                let src = &line[ix * c + c0..][..w];
                                if self.max {
                                    for (a, &v) in acc.iter_mut().zip(src) {
                                        *a = (*a).max(v.widen());
                                    }
                                } else {
                                    for (a, &v) in acc.iter_mut().zip(src) {
                                        *a += v.widen();
                                    }
                                }
                            }
                        }
                        // The rounded average as TFLite's integer division,
                        // computed in double: below 2^31 and for counts
                        // below 2^22, the truncated correctly rounded
                        // quotient is the integer quotient, and it
                        // vectorizes where `idiv` does not.
                        let inv = count as f64;
                        for (d, &a) in dst[c0..c0 + w].iter_mut().zip(acc.iter()) {
                            let a = if self.max {
                                a
                            } else {
                                let n = if a > 0 { a + count / 2 } else { a - count / 2 };
                                (n as f64 / inv) as i32
                            };
                            *d = T::narrow(a.clamp(self.act.0, self.act.1));
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

impl Kernel for Pool {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        let op = if self.max {
            "MAX_POOL_2D"
        } else {
            "AVERAGE_POOL_2D"
        };
        let x = inputs.get(0)?;
        if self.window.iter().any(|&w| w < 1) {
            bail!(invalid, "{op}: window {:?} must be positive", self.window);
        }
        let g = geom(
            op,
            x,
            self.padding,
            [self.window[0] as usize, self.window[1] as usize],
            self.stride,
            [1, 1],
            None,
        )?;
        let shape = vec![g.n, g.h.output, g.w.output, x.shape[3]];
        self.geom = Some(g);
        Ok(vec![shape])
    }
    fn run(&self, _: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let g = self
            .geom
            .as_ref()
            .ok_or_else(|| Error::internal("pool run before prepare"))?;
        let x = inputs.get(0)?;
        let c = x.shape[3];
        match x.dtype {
            DType::U8 => self.run_typed(g, c, x.as_slice::<u8>(), outputs[0].as_mut_slice()),
            _ => self.run_typed(g, c, x.as_slice::<i8>(), outputs[0].as_mut_slice()),
        }
    }
}

// ---------------------------------------------------------------------------
// ADD, SUB, MUL.

struct Binary {
    code: i32,
    name: String,
    off1: i32,
    off2: i32,
    out_zp: i32,
    m1: Multiplier,
    m2: Multiplier,
    mo: Multiplier,
    act: (i32, i32),
    plan: BroadcastPlan,
}

/// TFLite's headroom for int8/uint8 ADD and SUB.
const LEFT_SHIFT: i32 = 20;

impl Binary {
    fn new(name: &str, code: i32, a: &Slot, b: &Slot, y: &Slot, act: i8) -> Result<Binary> {
        let (s1, z1) = per_tensor(a, name, "first input")?;
        let (s2, z2) = per_tensor(b, name, "second input")?;
        let (so, zo) = per_tensor(y, name, "output")?;
        let (lo, hi) = type_range(y.dtype);
        let (m1, m2, mo) = if code == 18 {
            let m = s1 as f64 * s2 as f64 / so as f64;
            (
                Multiplier::default(),
                Multiplier::default(),
                Multiplier::new(m),
            )
        } else {
            let twice_max = 2.0 * s1.max(s2) as f64;
            (
                Multiplier::new(s1 as f64 / twice_max),
                Multiplier::new(s2 as f64 / twice_max),
                Multiplier::new(twice_max / ((1i64 << LEFT_SHIFT) as f64 * so as f64)),
            )
        };
        Ok(Binary {
            code,
            name: name.to_string(),
            off1: -z1,
            off2: -z2,
            out_zp: zo,
            m1,
            m2,
            mo,
            act: quantized_activation_range(act, &y.quant, lo, hi)?,
            plan: BroadcastPlan::default(),
        })
    }

    #[inline(always)]
    fn apply(&self, x: i32, y: i32) -> i32 {
        let (a, b) = (x + self.off1, y + self.off2);
        let raw = if self.code == 18 {
            self.mo.apply(a * b)
        } else {
            let sa = self.m1.apply(a * (1 << LEFT_SHIFT));
            let sb = self.m2.apply(b * (1 << LEFT_SHIFT));
            let sum = if self.code == 41 { sa - sb } else { sa + sb };
            self.mo.apply(sum)
        };
        raw.wrapping_add(self.out_zp).clamp(self.act.0, self.act.1)
    }

    fn run_typed<T: Q8>(&self, a: &[T], b: &[T], out: &mut [T]) {
        if self.plan.same {
            for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
                *o = T::narrow(self.apply(x.widen(), y.widen()));
            }
        } else {
            self.plan.for_each(|i, ia, ib| {
                out[i] = T::narrow(self.apply(a[ia].widen(), b[ib].widen()));
            });
        }
    }
}

impl Kernel for Binary {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        self.plan = BroadcastPlan::new(&self.name, &inputs.get(0)?.shape, &inputs.get(1)?.shape)?;
        Ok(vec![self.plan.shape.clone()])
    }
    fn run(&self, _: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let (a, b) = (inputs.get(0)?, inputs.get(1)?);
        match a.dtype {
            DType::U8 => {
                self.run_typed(a.as_slice::<u8>(), b.as_slice(), outputs[0].as_mut_slice())
            }
            _ => self.run_typed(a.as_slice::<i8>(), b.as_slice(), outputs[0].as_mut_slice()),
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// MEAN.

/// Highest input rank MEAN handles.
const MAX_RANK: usize = 8;

#[derive(Default)]
struct MeanPlan {
    /// Input shape.
    shape: Vec<usize>,
    /// Per input dimension: the output stride (0 for reduced dimensions).
    out_stride: Vec<usize>,
    /// Elements averaged into each output.
    count: i64,
    outputs: usize,
    /// Reduction over H and W of a 4-D input with kept dimensions.
    spatial: bool,
}

struct Mean {
    axes: Vec<i64>,
    keep_dims: bool,
    input_q: (f32, i32),
    output_q: (f32, i32),
    plan: MeanPlan,
    sums: Mutex<Vec<i32>>,
}

impl Mean {
    fn run_typed<T: Q8>(&self, x: &[T], out: &mut [T]) {
        let p = &self.plan;
        let mut sums = self.sums.lock().unwrap_or_else(|e| e.into_inner());
        sums.fill(0);
        let rank = p.shape.len();
        if rank == 0 {
            if let (Some(o), Some(&v)) = (out.first_mut(), x.first()) {
                *o = v;
            }
            return;
        }
        // Walk the input in order, tracking the output index.
        let mut coord = [0usize; MAX_RANK];
        let mut oi = 0usize;
        let zp_in = self.input_q.1;
        for &v in x {
            sums[oi] = sums[oi].wrapping_add(v.widen());
            for d in (0..rank).rev() {
                coord[d] += 1;
                oi += p.out_stride[d];
                if coord[d] < p.shape[d] {
                    break;
                }
                oi -= p.out_stride[d] * coord[d];
                coord[d] = 0;
            }
        }
        let n = p.count;
        if n == 0 {
            return;
        }
        let (si, zi) = self.input_q;
        let (so, zo) = self.output_q;
        let m = Multiplier::new(si as f64 / so as f64);
        if p.spatial {
            // TFLite's integer mean over H and W (kept dimensions).
            let n = n as i32;
            for (o, &s) in out.iter_mut().zip(sums.iter()) {
                let acc = m.apply(s.wrapping_sub(zi.wrapping_mul(n)));
                let acc = if acc > 0 {
                    (acc + n / 2) / n
                } else {
                    (acc - n / 2) / n
                };
                *o = T::narrow(acc.wrapping_add(zo).clamp(T::MIN, T::MAX));
            }
        } else if si == so && zi == zo {
            // Same parameters: the integer mean, truncated.
            for (o, &s) in out.iter_mut().zip(sums.iter()) {
                *o = T::narrow((s as i64 / n).clamp(T::MIN as i64, T::MAX as i64) as i32);
            }
        } else {
            // Fold 1/n into the multiplier, as TFLite's reference does.
            let mut shift = 63 - (n as u64).leading_zeros() as i32;
            shift = shift.min(32).min(31 + m.shift);
            let q31 = (((m.q31 as i64) << shift) / n) as i32;
            let folded = Multiplier {
                q31,
                shift: m.shift - shift,
            };
            for (o, &s) in out.iter_mut().zip(sums.iter()) {
                let shifted = (s as i64 - zp_in as i64 * n) as i32;
                let v = folded.apply(shifted).wrapping_add(zo);
                *o = T::narrow(v.clamp(T::MIN, T::MAX));
            }
        }
    }
}

impl Kernel for Mean {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        let shape = inputs.get(0)?.shape.clone();
        if shape.len() > MAX_RANK {
            bail!(
                unimplemented,
                "MEAN: input rank {} is above {MAX_RANK}",
                shape.len()
            );
        }
        let (ax, out) = reduce_shape("MEAN", &shape, &self.axes, self.keep_dims)?;
        let rank = shape.len();
        let mut out_stride = vec![0usize; rank];
        let mut acc = 1usize;
        for d in (0..rank).rev() {
            if !ax.contains(&d) {
                out_stride[d] = acc;
                acc *= shape[d];
            }
        }
        let mut raw_axes: Vec<i64> = self
            .axes
            .iter()
            .map(|&a| if a < 0 { a + rank as i64 } else { a })
            .collect();
        raw_axes.sort_unstable();
        self.plan = MeanPlan {
            count: ax.iter().map(|&d| shape[d] as i64).product(),
            outputs: out.iter().product(),
            spatial: self.keep_dims && rank == 4 && raw_axes == [1, 2],
            shape,
            out_stride,
        };
        self.sums = Mutex::new(vec![0; self.plan.outputs]);
        Ok(vec![out])
    }
    fn run(&self, _: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let x = inputs.get(0)?;
        match x.dtype {
            DType::U8 => self.run_typed(x.as_slice::<u8>(), outputs[0].as_mut_slice()),
            _ => self.run_typed(x.as_slice::<i8>(), outputs[0].as_mut_slice()),
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// SOFTMAX, TANH, LOGISTIC.

struct Softmax {
    /// `exp(-input_scale * beta * d)` at index `255 - d`.
    table: Vec<f32>,
    out_scale: f32,
    out_zp: i32,
}

impl Softmax {
    fn new(x: &Slot, y: &Slot, beta: f32) -> Result<Softmax> {
        let (si, _) = per_tensor(x, "SOFTMAX", "input")?;
        let (so, zo) = per_tensor(y, "SOFTMAX", "output")?;
        let scale = -si * beta;
        let mut table = vec![0.0f32; 256];
        for d in 0..256i32 {
            table[(255 - d) as usize] = (scale * d as f32).exp();
        }
        Ok(Softmax {
            table,
            out_scale: so,
            out_zp: zo,
        })
    }

    fn run_typed<T: Q8>(&self, depth: usize, x: &[T], out: &mut [T], round_half_up: bool) {
        for (row, dst) in x.chunks_exact(depth).zip(out.chunks_exact_mut(depth)) {
            let max = row.iter().map(|v| v.widen()).max().unwrap_or(0);
            let base = 255 - max;
            let mut sum = 0.0f32;
            for v in row {
                sum += self.table[(base + v.widen()) as usize];
            }
            let inv = 1.0f32 / (sum * self.out_scale);
            for (d, v) in dst.iter_mut().zip(row) {
                let p = self.table[(base + v.widen()) as usize] * inv;
                let q = if round_half_up {
                    (p + 0.5) as i32
                } else {
                    (p.round() as i32).wrapping_add(self.out_zp)
                };
                *d = T::narrow(q.clamp(T::MIN, T::MAX));
            }
        }
    }
}

impl Kernel for Softmax {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        let x = inputs.get(0)?;
        if x.shape.is_empty() {
            bail!(invalid, "SOFTMAX: the input must have rank >= 1");
        }
        Ok(vec![x.shape.clone()])
    }
    fn run(&self, _: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let x = inputs.get(0)?;
        let depth = x.shape.last().copied().unwrap_or(1).max(1);
        match x.dtype {
            DType::U8 => self.run_typed(depth, x.as_slice::<u8>(), outputs[0].as_mut_slice(), true),
            _ => self.run_typed(depth, x.as_slice::<i8>(), outputs[0].as_mut_slice(), false),
        }
        Ok(())
    }
}

/// An element-wise function as a 256-entry table (TANH, LOGISTIC).
struct Lut {
    table: [u8; 256],
}

impl Lut {
    fn new(name: &str, tanh: bool, x: &Slot, y: &Slot) -> Result<Lut> {
        let (si, zi) = per_tensor(x, name, "input")?;
        let (so, zo) = per_tensor(y, name, "output")?;
        let (lo, hi) = type_range(x.dtype);
        let mut table = [0u8; 256];
        for v in lo..=hi {
            let real = si * (v - zi) as f32;
            let f = if tanh {
                real.tanh()
            } else {
                1.0f32 / (1.0f32 + (-real).exp())
            };
            let q = ((f / so).round() + zo as f32) as i32;
            let q = q.clamp(lo, hi);
            let idx = if x.dtype == DType::U8 {
                v as usize
            } else {
                v as i8 as u8 as usize
            };
            table[idx] = q as u8;
        }
        Ok(Lut { table })
    }
}

impl Kernel for Lut {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        Ok(vec![inputs.get(0)?.shape.clone()])
    }
    fn run(&self, _: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let x = inputs.get(0)?.data.bytes();
        for (o, &v) in outputs[0].data.bytes_mut().iter_mut().zip(x) {
            *o = self.table[v as usize];
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// CONCATENATION with requantization, QUANTIZE between integer types.

struct Concat {
    axis: i64,
    parts: Vec<(f32, i32)>,
    out_q: (f32, i32),
    act: (i32, i32),
    outer: usize,
    widths: Vec<usize>,
}

impl Concat {
    fn run_typed<T: Q8>(&self, inputs: Inputs<'_>, out: &mut [T]) -> Result<()> {
        let total: usize = self.widths.iter().sum();
        let (so, zo) = self.out_q;
        let inv = 1.0f32 / so;
        let mut col = 0;
        for (i, (&w, &(si, zi))) in self.widths.iter().zip(&self.parts).enumerate() {
            let x = inputs.get(i)?.as_slice::<T>();
            let same = si == so && zi == zo;
            let scale = si * inv;
            let bias = -zi as f32 * scale;
            for r in 0..self.outer {
                let src = &x[r * w..(r + 1) * w];
                let dst = &mut out[r * total + col..r * total + col + w];
                for (d, &v) in dst.iter_mut().zip(src) {
                    let q = if same {
                        v.widen()
                    } else {
                        ((v.widen() as f32 * scale + bias).round() as i32).wrapping_add(zo)
                    };
                    *d = T::narrow(q.clamp(self.act.0.max(T::MIN), self.act.1.min(T::MAX)));
                }
            }
            col += w;
        }
        Ok(())
    }
}

impl Kernel for Concat {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        let first = inputs.get(0)?.shape.clone();
        let rank = first.len() as i64;
        let axis = if self.axis < 0 {
            self.axis + rank
        } else {
            self.axis
        };
        if axis < 0 || axis >= rank {
            bail!(
                invalid,
                "CONCATENATION: axis {} is out of range for rank {rank}",
                self.axis
            );
        }
        let axis = axis as usize;
        let mut out = first.clone();
        out[axis] = 0;
        let inner: usize = first[axis + 1..].iter().product();
        self.outer = first[..axis].iter().product();
        self.widths.clear();
        for i in 0..inputs.len() {
            let s = &inputs.get(i)?.shape;
            let fits = s.len() == first.len()
                && s.iter()
                    .zip(&first)
                    .enumerate()
                    .all(|(d, (a, b))| d == axis || a == b);
            ensure!(
                fits,
                invalid,
                "CONCATENATION: input {i} has shape {s:?}, incompatible with {first:?} along axis {axis}"
            );
            out[axis] += s[axis];
            self.widths.push(s[axis] * inner);
        }
        Ok(vec![out])
    }
    fn run(&self, _: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        match outputs[0].dtype {
            DType::U8 => self.run_typed::<u8>(inputs, outputs[0].as_mut_slice()),
            _ => self.run_typed::<i8>(inputs, outputs[0].as_mut_slice()),
        }
    }
}

struct Requantize {
    mult: Multiplier,
    in_zp: i32,
    out_zp: i32,
}

impl Requantize {
    fn map<I: Q8, O: Q8>(&self, x: &[I], out: &mut [O]) {
        for (o, &v) in out.iter_mut().zip(x) {
            let q = self
                .mult
                .apply(v.widen() - self.in_zp)
                .wrapping_add(self.out_zp);
            *o = O::narrow(q.clamp(O::MIN, O::MAX));
        }
    }
}

impl Kernel for Requantize {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        Ok(vec![inputs.get(0)?.shape.clone()])
    }
    fn run(&self, _: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let x = inputs.get(0)?;
        let out = &mut outputs[0];
        match (x.dtype, out.dtype) {
            (DType::I8, DType::I8) => self.map(x.as_slice::<i8>(), out.as_mut_slice::<i8>()),
            (DType::I8, _) => self.map(x.as_slice::<i8>(), out.as_mut_slice::<u8>()),
            (_, DType::I8) => self.map(x.as_slice::<u8>(), out.as_mut_slice::<i8>()),
            _ => self.map(x.as_slice::<u8>(), out.as_mut_slice::<u8>()),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::Buffer;

    fn slot(dtype: DType, shape: &[usize], scale: &[f32], zp: &[i64], bytes: &[u8]) -> Slot {
        Slot {
            name: "t".into(),
            dtype,
            shape: shape.to_vec(),
            shape_signature: None,
            quant: QuantParams {
                scale: scale.to_vec(),
                zero_point: zp.to_vec(),
                axis: 0,
            },
            data: Buffer::from_bytes(bytes),
            constant: !bytes.is_empty(),
        }
    }

    fn i8s(v: &[i8]) -> Vec<u8> {
        v.iter().map(|&x| x as u8).collect()
    }

    /// Prepares and runs `kernel` on `tensors` (outputs at `outs`).
    fn run(
        kernel: &mut dyn Kernel,
        tensors: &mut [Slot],
        ins: &[i32],
        outs: &[i32],
    ) -> Vec<Vec<usize>> {
        let shapes = kernel
            .prepare(
                Inputs {
                    tensors: &*tensors,
                    index: ins,
                },
                outs,
            )
            .unwrap();
        let mut taken = Vec::new();
        for (&o, s) in outs.iter().zip(&shapes) {
            let t = &mut tensors[o as usize];
            t.shape = s.clone();
            t.data.resize(t.num_elements() * t.dtype.size());
            taken.push(std::mem::take(t));
        }
        kernel
            .run(
                &RunContext { num_threads: 1 },
                Inputs {
                    tensors: &*tensors,
                    index: ins,
                },
                &mut taken,
            )
            .unwrap();
        for (&o, s) in outs.iter().zip(taken) {
            tensors[o as usize] = s;
        }
        shapes
    }

    fn op(code: i32, inputs: &[i32], outputs: &[i32]) -> OpDef {
        OpDef {
            code,
            custom_code: None,
            version: 1,
            inputs: inputs.to_vec(),
            outputs: outputs.to_vec(),
            options: None,
        }
    }

    #[test]
    fn activation_range_follows_output_quantization() {
        let q = QuantParams::per_tensor(0.05, -10);
        assert_eq!(
            quantized_activation_range(0, &q, -128, 127).unwrap(),
            (-128, 127)
        );
        assert_eq!(
            quantized_activation_range(1, &q, -128, 127).unwrap(),
            (-10, 127)
        );
        // 6 / 0.05 = 120 -> 110
        assert_eq!(
            quantized_activation_range(3, &q, -128, 127).unwrap(),
            (-10, 110)
        );
        assert_eq!(
            quantized_activation_range(2, &q, -128, 127).unwrap(),
            (-30, 10)
        );
        assert!(quantized_activation_range(4, &q, -128, 127).is_err());
    }

    #[test]
    fn single_rounding_differs_from_double_at_near_ties() {
        // TFLite's mlp fixture: acc -1820, multiplier 0.0024716 -> -4.498.
        let m = Multiplier::new(-4.498368241199404 / -1820.0);
        assert_eq!(m.apply(-1820), -5);
        assert_eq!(apply_single_rounding(m, -1820), -4);
        let half = Multiplier::new(0.5);
        assert_eq!(apply_single_rounding(half, 3), 2);
        assert_eq!(apply_single_rounding(half, -3), -1);
        assert_eq!(apply_single_rounding(Multiplier::new(3.0), 5), 15);
    }

    #[test]
    fn dot_products_match_the_plain_sum() {
        let a: Vec<i8> = (0..77).map(|i| (i * 37 % 256) as u8 as i8).collect();
        let b: Vec<i8> = (0..77).map(|i| (i * 91 % 256) as u8 as i8).collect();
        let want: i32 = a.iter().zip(&b).map(|(&x, &y)| x as i32 * y as i32).sum();
        assert_eq!(dot_i8(&a, &b), want);
        let mut acc = vec![5, -5];
        let w: Vec<i8> = a.iter().chain(&b).copied().collect();
        rows_dot(&a, &w, 77, &mut acc);
        assert_eq!(acc[0], 5 + dot_i8(&a, &a));
        assert_eq!(acc[1], -5 + want);
    }

    #[test]
    fn portable_gemm_matches_the_dot_products() {
        for (m, n, k) in [(1usize, 1usize, 3usize), (5, 3, 27), (9, 7, 40), (7, 5, 1)] {
            let xs: Vec<i8> = (0..m * k).map(|i| (i * 37 % 256) as u8 as i8).collect();
            let ws: Vec<i8> = (0..n * k).map(|i| (i * 91 % 253) as u8 as i8).collect();
            let bias: Vec<i32> = (0..n as i32).map(|o| o * 1000 - 77).collect();
            let mut acc = vec![0; m * n];
            gemm_i16(m, n, k, &widen_rows(&xs), &widen_rows(&ws), &bias, &mut acc);
            for r in 0..m {
                for o in 0..n {
                    let want = bias[o] + dot_i8(&xs[r * k..(r + 1) * k], &ws[o * k..(o + 1) * k]);
                    assert_eq!(acc[r * n + o], want, "m={m} n={n} k={k} r={r} o={o}");
                }
            }
        }
    }

    /// TFLite's reference int8 convolution: per output channel, the bias
    /// plus `w * (x - x_zp)` over the taps inside the input, requantized
    /// with that channel's multiplier (two roundings).
    #[allow(clippy::too_many_arguments)]
    fn conv_reference(
        x: &[i8],
        [ih, iw, ic]: [usize; 3],
        w: &[i8],
        [oc, kh, kw]: [usize; 3],
        bias: &[i32],
        (h, wa): (&Axis, &Axis),
        zx: i32,
        mult: &[Multiplier],
        zy: i32,
    ) -> Vec<i8> {
        let mut out = Vec::new();
        for oy in 0..h.output {
            for ox in 0..wa.output {
                for o in 0..oc {
                    let mut acc = bias[o];
                    for ky in h.valid_taps(oy) {
                        for kx in wa.valid_taps(ox) {
                            let (y, xx) = (h.source(oy, ky) as usize, wa.source(ox, kx) as usize);
                            assert!(y < ih && xx < iw);
                            for i in 0..ic {
                                let xv = x[(y * iw + xx) * ic + i] as i32 - zx;
                                acc += w[((o * kh + ky) * kw + kx) * ic + i] as i32 * xv;
                            }
                        }
                    }
                    out.push((mult[o].apply(acc) + zy).clamp(-128, 127) as i8);
                }
            }
        }
        out
    }

    #[test]
    fn convolutions_match_the_reference_on_every_gemm() {
        // Odd sizes, SAME/VALID padding, strides, dilation, 1x1 and
        // larger windows, per-channel weight scales, output channel
        // counts around the 16-lane and 64-channel panels.
        for (ih, iw, ic, oc, kh, kw, stride, dil, padding) in [
            (
                5usize,
                7usize,
                3usize,
                8usize,
                3usize,
                3usize,
                1i32,
                1i32,
                Padding::Same,
            ),
            (9, 6, 5, 17, 3, 3, 2, 1, Padding::Same),
            (7, 7, 16, 70, 1, 1, 1, 1, Padding::Same),
            (6, 5, 4, 3, 2, 3, 1, 2, Padding::Valid),
            (4, 9, 33, 65, 1, 1, 2, 1, Padding::Valid),
            (11, 3, 2, 1, 5, 1, 3, 1, Padding::Same),
        ] {
            let (sx, zx, sy, zy) = (0.05f32, -7i64, 0.4f32, 5i64);
            let x: Vec<i8> = (0..ih * iw * ic)
                .map(|i| (i * 37 % 256) as u8 as i8)
                .collect();
            let w: Vec<i8> = (0..oc * kh * kw * ic)
                .map(|i| (i * 91 % 255) as i32 - 127)
                .map(|v| v as i8)
                .collect();
            let wscale: Vec<f32> = (0..oc).map(|o| 0.002 + 0.0007 * o as f32).collect();
            let bias: Vec<i32> = (0..oc as i32).map(|o| o * 301 - 900).collect();
            let bias_bytes: Vec<u8> = bias.iter().flat_map(|v| v.to_le_bytes()).collect();
            let mut tensors = vec![
                slot(DType::I8, &[1, ih, iw, ic], &[sx], &[zx], &[]),
                slot(
                    DType::I8,
                    &[oc, kh, kw, ic],
                    &wscale,
                    &vec![0; oc],
                    &i8s(&w),
                ),
                slot(DType::I32, &[oc], &[], &[], &bias_bytes),
                slot(DType::I8, &[1, 1, 1, oc], &[sy], &[zy], &[]),
            ];
            tensors[0].data = Buffer::from_bytes(&i8s(&x));
            let o = op(3, &[0, 1, 2], &[3]);
            let h = Axis::new("t", padding, ih, kh, stride, dil).unwrap();
            let wa = Axis::new("t", padding, iw, kw, stride, dil).unwrap();
            let mult: Vec<Multiplier> = wscale
                .iter()
                .map(|&ws| Multiplier::new(sx as f64 * ws as f64 / sy as f64))
                .collect();
            let want = conv_reference(
                &x,
                [ih, iw, ic],
                &w,
                [oc, kh, kw],
                &bias,
                (&h, &wa),
                zx as i32,
                &mult,
                zy as i32,
            );
            let conv = Conv::new(&o, &tensors, padding, [stride; 2], [dil; 2], 0).unwrap();
            let what = format!("{ih}x{iw}x{ic} -> {oc}, {kh}x{kw}/{stride} d{dil} {padding:?}");
            for mut k in conv.on_every_gemm() {
                let name = match k.gemm {
                    ConvGemm::Vnni(_) => "VNNI",
                    ConvGemm::Avx2(_) => "AVX2",
                    ConvGemm::Plain(_) => "portable",
                };
                run(&mut k, &mut tensors, &[0, 1, 2], &[3]);
                let got: Vec<i8> = tensors[3].as_slice::<i8>().to_vec();
                assert_eq!(got, want, "{name} gemm, {what}");
            }
        }
    }

    #[test]
    fn fully_connected_requantizes_each_channel() {
        // x: scale 0.5 zp 3; weights per channel 0.25 and 0.125; out 1.0 zp -2.
        let x = [5i8, -1, 3];
        let w = [1i8, 2, 3, -4, 0, 4];
        let bias = [10i32, -6];
        let mut tensors = vec![
            slot(DType::I8, &[1, 3], &[0.5], &[3], &[]),
            slot(DType::I8, &[2, 3], &[0.25, 0.125], &[0, 0], &i8s(&w)),
            slot(DType::I32, &[2], &[0.125, 0.0625], &[0, 0], &{
                let b: &[u8] = bytemuck::cast_slice(&bias);
                b.to_vec()
            }),
            slot(DType::I8, &[1, 2], &[1.0], &[-2], &[]),
        ];
        tensors[0].data = Buffer::from_bytes(&i8s(&x));
        let o = op(9, &[0, 1, 2], &[3]);
        let mut k = FullyConnected::new(&o, &tensors, 0, false).unwrap();
        run(&mut k, &mut tensors, &[0, 1, 2], &[3]);
        // Channel 0: acc = 1*2 + 2*(-4) + 3*0 + 10 = 4; 4 * 0.125 = 0.5 -> 1 (away from 0); -1.
        // Channel 1: acc = -4*2 + 0 + 4*0 - 6 = -14; -14 * 0.0625 = -0.875 -> -1; -3.
        assert_eq!(tensors[3].as_slice::<i8>(), &[-1, -3]);
    }

    #[test]
    fn average_pool_rounds_half_away_from_zero_over_valid_taps() {
        // 1x2x2x1 input, 2x2 window SAME stride 2: one output over 4 taps.
        let mut tensors = vec![
            slot(
                DType::I8,
                &[1, 2, 2, 1],
                &[1.0],
                &[0],
                &i8s(&[-3, -2, -1, 0]),
            ),
            slot(DType::I8, &[1, 1, 1, 1], &[1.0], &[0], &[]),
        ];
        let mut k = Pool {
            max: false,
            padding: Padding::Same,
            window: [2, 2],
            stride: [2, 2],
            act: (-128, 127),
            geom: None,
        };
        run(&mut k, &mut tensors, &[0], &[1]);
        // -6 / 4 = -1.5 -> -2.
        assert_eq!(tensors[1].as_slice::<i8>(), &[-2]);
        let mut k = Pool {
            max: true,
            padding: Padding::Same,
            window: [3, 3],
            stride: [1, 1],
            act: (-128, -1),
            geom: None,
        };
        let out = run(&mut k, &mut tensors, &[0], &[1]);
        assert_eq!(out, vec![vec![1, 2, 2, 1]]);
        assert_eq!(tensors[1].as_slice::<i8>(), &[-1, -1, -1, -1]);
    }

    #[test]
    fn add_and_mul_are_close_to_the_real_result() {
        let a = slot(DType::I8, &[4], &[0.02], &[-5], &[]);
        let b = slot(DType::I8, &[4], &[0.05], &[7], &[]);
        let y = slot(DType::I8, &[4], &[0.07], &[1], &[]);
        let xa = [-128i8, -5, 40, 127];
        let xb = [127i8, 7, -60, -128];
        for code in [0, 41, 18] {
            let mut tensors = vec![a.clone(), b.clone(), y.clone()];
            tensors[0].data = Buffer::from_bytes(&i8s(&xa));
            tensors[1].data = Buffer::from_bytes(&i8s(&xb));
            let mut k = Binary::new("OP", code, &a, &b, &y, 0).unwrap();
            run(&mut k, &mut tensors, &[0, 1], &[2]);
            for i in 0..4 {
                let ra = 0.02 * (xa[i] as f64 + 5.0);
                let rb = 0.05 * (xb[i] as f64 - 7.0);
                let r = match code {
                    0 => ra + rb,
                    41 => ra - rb,
                    _ => ra * rb,
                };
                let want = ((r / 0.07).round() + 1.0).clamp(-128.0, 127.0);
                let got = tensors[2].as_slice::<i8>()[i] as f64;
                assert!(
                    (got - want).abs() <= 1.0,
                    "code {code} {i}: {got} vs {want}"
                );
            }
        }
    }

    #[test]
    fn softmax_of_equal_logits_is_uniform() {
        let x = slot(DType::I8, &[1, 4], &[0.1], &[0], &i8s(&[9, 9, 9, 9]));
        let y = slot(DType::I8, &[1, 4], &[1.0 / 256.0], &[-128], &[]);
        let mut k = Softmax::new(&x, &y, 1.0).unwrap();
        let mut tensors = vec![x, y];
        run(&mut k, &mut tensors, &[0], &[1]);
        // 0.25 * 256 - 128 = -64.
        assert_eq!(tensors[1].as_slice::<i8>(), &[-64; 4]);
    }

    #[test]
    fn tanh_table_is_odd_and_saturates() {
        let x = slot(DType::I8, &[3], &[0.05], &[0], &i8s(&[-128, 0, 127]));
        let y = slot(DType::I8, &[3], &[1.0 / 128.0], &[0], &[]);
        let mut k = Lut::new("TANH", true, &x, &y).unwrap();
        let mut tensors = vec![x, y];
        run(&mut k, &mut tensors, &[0], &[1]);
        // tanh(-6.4) * 128 = -127.99 -> -128; tanh(6.35) * 128 -> 128 -> 127.
        assert_eq!(tensors[1].as_slice::<i8>(), &[-128, 0, 127]);
    }

    #[test]
    fn mean_requantizes_with_the_folded_multiplier() {
        let x = slot(
            DType::I8,
            &[1, 2, 2, 2],
            &[0.1],
            &[-128],
            &i8s(&[-128, 0, 10, 20, 30, 40, 50, 127]),
        );
        let y = slot(DType::I8, &[1, 2], &[0.2], &[-128], &[]);
        let mut k = Mean {
            axes: vec![1, 2],
            keep_dims: false,
            input_q: (0.1, -128),
            output_q: (0.2, -128),
            plan: MeanPlan::default(),
            sums: Mutex::new(Vec::new()),
        };
        let mut tensors = vec![x, y];
        let shapes = run(&mut k, &mut tensors, &[0], &[1]);
        assert_eq!(shapes, vec![vec![1, 2]]);
        // Channel 0: -128, 10, 30, 50: (sum + 4 * 128) / 4 * 0.1 / 0.2 =
        // 59.25 -> 59 - 128 = -69; channel 1: 0, 20, 40, 127: 699 / 8 =
        // 87.375, which TFLite's double rounding (699 * 2^30 / 2^31 -> 350,
        // then 350 / 4 -> 88) takes to 88 - 128 = -40.
        assert_eq!(tensors[1].as_slice::<i8>(), &[-69, -40]);
    }

    #[test]
    fn requantize_and_concat_rescale() {
        let x = slot(DType::I8, &[2], &[0.5], &[0], &i8s(&[10, -7]));
        let y = slot(DType::I8, &[2], &[0.25], &[3], &[]);
        let mut k = Requantize {
            mult: Multiplier::new(2.0),
            in_zp: 0,
            out_zp: 3,
        };
        let mut tensors = vec![x.clone(), y];
        run(&mut k, &mut tensors, &[0], &[1]);
        assert_eq!(tensors[1].as_slice::<i8>(), &[23, -11]);

        let a = slot(DType::I8, &[1, 2], &[0.5], &[0], &i8s(&[10, -7]));
        let b = slot(DType::I8, &[1, 1], &[0.25], &[3], &i8s(&[5]));
        let out = slot(DType::I8, &[1, 3], &[0.25], &[3], &[]);
        let mut k = Concat {
            axis: -1,
            parts: vec![(0.5, 0), (0.25, 3)],
            out_q: (0.25, 3),
            act: (-128, 127),
            outer: 0,
            widths: Vec::new(),
        };
        let mut tensors = vec![a, b, out];
        let shapes = run(&mut k, &mut tensors, &[0, 1], &[2]);
        assert_eq!(shapes, vec![vec![1, 3]]);
        assert_eq!(tensors[2].as_slice::<i8>(), &[23, -11, 5]);
    }
}
