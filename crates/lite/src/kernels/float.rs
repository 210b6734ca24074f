//! Float32 kernels (and the float sides of type conversions).

use std::sync::Mutex;

use ferroflow_tensor::kernels::matmul::{sgemm_slices, F32Gemm, Mat};

use super::geometry::{Axis, Padding};
use super::{activation_range, const_ints, simd, Inputs, Kernel, RunContext};
use crate::error::{Error, LiteError, Result};
use crate::interpreter::Slot;
use crate::model::{DType, OpDef};
use crate::options;
use crate::schema::BuiltinOptions;
use ferroflow_tensor::{bail, ensure};

/// Builds the kernel when `op` is a float operator (or a conversion to or
/// from float).
pub fn build(
    op: &OpDef,
    tensors: &[Slot],
    opts: Option<&BuiltinOptions>,
    input: Option<DType>,
    output: Option<DType>,
) -> Result<Option<Box<dyn Kernel>>> {
    let f32_in = input == Some(DType::F32);
    let weight_type = |i: usize| {
        op.inputs
            .get(i)
            .filter(|&&x| x >= 0)
            .map(|&x| tensors[x as usize].dtype)
    };
    Ok(Some(match op.code {
        // DEQUANTIZE: f16/int8/uint8 -> f32
        6 if output == Some(DType::F32) => Box::new(Dequantize),
        // QUANTIZE: f32 -> int8/uint8
        114 if f32_in => Box::new(QuantizeF32),
        // CAST
        53 => Box::new(Cast),
        _ if !f32_in => return Ok(None),
        // FULLY_CONNECTED
        9 if weight_type(1) == Some(DType::F32) => {
            let o = options!(opts, FullyConnectedOptions);
            Box::new(FullyConnected::new(
                op,
                tensors,
                o.fused_activation_function,
                o.keep_num_dims,
            )?)
        }
        // CONV_2D
        3 if weight_type(1) == Some(DType::F32) => {
            let o = options!(opts, Conv2DOptions);
            Box::new(Conv::new(
                op,
                tensors,
                o.padding,
                [o.stride_h, o.stride_w],
                [o.dilation_h_factor, o.dilation_w_factor],
                o.fused_activation_function,
            )?)
        }
        // DEPTHWISE_CONV_2D
        4 if weight_type(1) == Some(DType::F32) => {
            let o = options!(opts, DepthwiseConv2DOptions);
            Box::new(Depthwise::new(
                op,
                tensors,
                o.padding,
                [o.stride_h, o.stride_w],
                [o.dilation_h_factor, o.dilation_w_factor],
                o.fused_activation_function,
            )?)
        }
        // AVERAGE_POOL_2D, MAX_POOL_2D
        1 | 17 => {
            let o = options!(opts, Pool2DOptions);
            Box::new(Pool {
                max: op.code == 17,
                padding: padding(o.padding)?,
                window: [o.filter_height, o.filter_width],
                stride: [o.stride_h, o.stride_w],
                act: activation_range(o.fused_activation_function)?,
                geom: None,
            })
        }
        // ADD, SUB, MUL, DIV, MAXIMUM, MINIMUM, SQUARED_DIFFERENCE, POW
        0 | 41 | 18 | 42 | 55 | 57 | 99 | 78 => {
            let act = match (op.code, opts) {
                (0, _) => options!(opts, AddOptions).fused_activation_function,
                (41, _) => options!(opts, SubOptions).fused_activation_function,
                (18, _) => options!(opts, MulOptions).fused_activation_function,
                (42, _) => options!(opts, DivOptions).fused_activation_function,
                _ => 0,
            };
            Box::new(Binary {
                code: op.code,
                act: activation_range(act)?,
                plan: BroadcastPlan::default(),
            })
        }
        // Unary maps.
        19 | 20 | 21 | 14 | 28 | 47 | 73 | 75 | 76 | 101 | 59 | 92 | 98 | 117 | 8 | 104 | 66
        | 108 | 116 | 111 => {
            let alpha = options!(opts, LeakyReluOptions).alpha;
            Box::new(Unary {
                code: op.code,
                alpha,
            })
        }
        // SOFTMAX, LOG_SOFTMAX
        25 => Box::new(Softmax {
            beta: options!(opts, SoftmaxOptions).beta,
            log: false,
        }),
        50 => Box::new(Softmax {
            beta: 1.0,
            log: true,
        }),
        // MEAN, SUM, REDUCE_MAX, REDUCE_MIN, REDUCE_PROD
        40 | 74 | 82 | 89 | 81 => Box::new(Reduce {
            code: op.code,
            axes: const_ints(tensors, op, 1, "axis")?,
            keep_dims: options!(opts, ReducerOptions).keep_dims,
            plan: (0, 0, 0),
        }),
        // L2_NORMALIZATION
        11 => Box::new(L2Norm),
        // ARG_MAX, ARG_MIN
        56 | 79 => Box::new(ArgMinMax {
            max: op.code == 56,
            axis: const_ints(tensors, op, 1, "axis")?
                .first()
                .copied()
                .unwrap_or(0),
        }),
        // BATCH_MATMUL
        126 => {
            let o = options!(opts, BatchMatMulOptions);
            Box::new(BatchMatMul {
                adj_x: o.adj_x,
                adj_y: o.adj_y,
            })
        }
        // RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR
        23 => {
            let o = options!(opts, ResizeBilinearOptions);
            Box::new(Resize {
                bilinear: true,
                align_corners: o.align_corners,
                half_pixel: o.half_pixel_centers,
                size: [0, 0],
            })
        }
        97 => {
            let o = options!(opts, ResizeNearestNeighborOptions);
            Box::new(Resize {
                bilinear: false,
                align_corners: o.align_corners,
                half_pixel: o.half_pixel_centers,
                size: [0, 0],
            })
        }
        _ => return Ok(None),
    }))
}

/// TFLite's padding code.
pub fn padding(code: i8) -> Result<Padding> {
    match code {
        0 => Ok(Padding::Same),
        1 => Ok(Padding::Valid),
        other => Err(Error::invalid(format!("unknown padding code {other}"))),
    }
}

/// A constant weight tensor's values as f32.
fn const_f32<'a>(tensors: &'a [Slot], op: &OpDef, i: usize, what: &str) -> Result<&'a Slot> {
    let idx = *op
        .inputs
        .get(i)
        .ok_or_else(|| Error::invalid(format!("the {what} input is missing")))?;
    let s = tensors
        .get(idx.max(0) as usize)
        .filter(|_| idx >= 0)
        .ok_or_else(|| Error::invalid(format!("the {what} input is missing")))?;
    ensure!(
        s.constant,
        unimplemented,
        "a non-constant {what} is not supported"
    );
    Ok(s)
}

fn optional_bias(tensors: &[Slot], op: &OpDef, n: usize) -> Result<Vec<f32>> {
    match op.inputs.get(2).filter(|&&i| i >= 0) {
        None => Ok(Vec::new()),
        Some(_) => {
            let b = const_f32(tensors, op, 2, "bias")?;
            if b.dtype != DType::F32 || b.num_elements() != n {
                bail!(
                    invalid,
                    "the bias must be FLOAT32 with {n} elements, got {:?} {}",
                    b.shape,
                    b.dtype.name()
                );
            }
            Ok(b.as_slice::<f32>().to_vec())
        }
    }
}

/// `c = a @ b` for row-major `a` (`m x k`) and `b` (`k x n`), split over
/// threads by rows of `a` (each row's bits do not depend on the split).
fn gemm_rows(ctx: &RunContext, m: usize, k: usize, n: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    if m == 1 {
        c[..n].fill(0.0);
        simd::vecmat(&mut c[..n], &a[..k], b);
        return;
    }
    let la = Mat {
        rs: k as isize,
        cs: 1,
    };
    let lb = Mat {
        rs: n as isize,
        cs: 1,
    };
    let lib = F32Gemm::for_product(m, k, n, la, lb);
    // Row blocks as tasks of ferroflow's kernel team (persistent threads);
    // a row's sums do not depend on the blocking, so results are the same
    // for every thread count.
    const ROWS_PER_TASK: usize = 64;
    if ctx.num_threads <= 1 || m < 2 * ROWS_PER_TASK || m * n * k < 1 << 18 {
        sgemm_slices(lib, m, k, n, a, la, b, lb, c, false);
        return;
    }
    ferroflow_tensor::team::for_each_chunk_mut(&mut c[..m * n], ROWS_PER_TASK * n, |i, chunk| {
        let r = chunk.len() / n;
        let a = &a[i * ROWS_PER_TASK * k..(i * ROWS_PER_TASK + r) * k];
        sgemm_slices(lib, r, k, n, a, la, b, lb, chunk, false);
    });
}

/// Fully connected layers with fewer outputs than this run one input row
/// as dot products with the weight rows (a vector-matrix product over so
/// few columns leaves the vector lanes mostly empty).
const FC_DOT_MAX_OUT: usize = 32;

struct FullyConnected {
    /// Weights transposed to `[in, out]`.
    w_t: Vec<f32>,
    /// The weights as given, `[out, in]`, when `out < FC_DOT_MAX_OUT`.
    w: Vec<f32>,
    bias: Vec<f32>,
    in_dim: usize,
    out_dim: usize,
    act: (f32, f32),
    keep_num_dims: bool,
}

impl FullyConnected {
    fn new(op: &OpDef, tensors: &[Slot], act: i8, keep_num_dims: bool) -> Result<FullyConnected> {
        let w = const_f32(tensors, op, 1, "weights")?;
        ensure!(
            w.shape.len() == 2,
            invalid,
            "the weights must be 2-D, got {:?}",
            w.shape
        );
        let (out_dim, in_dim) = (w.shape[0], w.shape[1]);
        let src = w.as_slice::<f32>();
        let mut w_t = vec![0.0; in_dim * out_dim];
        for o in 0..out_dim {
            for i in 0..in_dim {
                w_t[i * out_dim + o] = src[o * in_dim + i];
            }
        }
        let w = if out_dim < FC_DOT_MAX_OUT {
            src.to_vec()
        } else {
            Vec::new()
        };
        Ok(FullyConnected {
            w_t,
            w,
            bias: optional_bias(tensors, op, out_dim)?,
            in_dim,
            out_dim,
            act: activation_range(act)?,
            keep_num_dims,
        })
    }
}

impl Kernel for FullyConnected {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        let x = inputs.get(0)?;
        let n = x.num_elements();
        if self.in_dim == 0 || n % self.in_dim != 0 {
            bail!(
                invalid,
                "input shape {:?} does not fit weights of depth {}",
                x.shape,
                self.in_dim
            );
        }
        if self.keep_num_dims {
            let mut s = x.shape.clone();
            *s.last_mut().unwrap_or(&mut 0) = self.out_dim;
            return Ok(vec![s]);
        }
        Ok(vec![vec![n / self.in_dim, self.out_dim]])
    }
    fn run(&self, ctx: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let x = inputs.get(0)?.as_slice::<f32>();
        let batch = x.len() / self.in_dim.max(1);
        let out = outputs[0].as_mut_slice::<f32>();
        if batch == 1 && !self.w.is_empty() {
            out.fill(0.0);
            simd::rows_dot(out, &x[..self.in_dim], &self.w);
        } else {
            gemm_rows(ctx, batch, self.in_dim, self.out_dim, x, &self.w_t, out);
        }
        simd::bias_clamp(out, &self.bias, self.act.0, self.act.1);
        Ok(())
    }
}

struct ConvGeom {
    n: usize,
    h: Axis,
    w: Axis,
    ic: usize,
}

fn conv_geom(
    op_name: &str,
    x: &Slot,
    padding: Padding,
    window: [usize; 2],
    stride: [i32; 2],
    dilation: [i32; 2],
    ic: usize,
) -> Result<ConvGeom> {
    if x.shape.len() != 4 || x.shape[3] != ic {
        bail!(
            invalid,
            "{op_name}: input shape {:?} is not NHWC with {ic} channels",
            x.shape
        );
    }
    Ok(ConvGeom {
        n: x.shape[0],
        h: Axis::new(
            op_name,
            padding,
            x.shape[1],
            window[0],
            stride[0],
            dilation[0],
        )?,
        w: Axis::new(
            op_name,
            padding,
            x.shape[2],
            window[1],
            stride[1],
            dilation[1],
        )?,
        ic,
    })
}

/// Convolutions with at most this many output channels (and a window
/// larger than 1x1) run directly instead of through im2col and a GEMM.
const DIRECT_MAX_OC: usize = 64;

/// Runs `work(row, dst)` over the `row_len`-element rows of `out`, as tasks
/// of ferroflow's kernel team when the context has threads and the rows
/// hold enough work (`per_element` multiply-adds per output element). Each
/// row is computed the same way whatever the split, so results do not
/// depend on the thread count.
pub(crate) fn for_each_row<T: Send>(
    ctx: &RunContext,
    out: &mut [T],
    row_len: usize,
    per_element: usize,
    work: impl Fn(usize, &mut [T]) + Sync,
) {
    if row_len == 0 {
        return;
    }
    let rows = out.len() / row_len;
    if ctx.num_threads <= 1 || rows < 2 || out.len() * per_element.max(1) < 1 << 16 {
        for (r, dst) in out.chunks_exact_mut(row_len).enumerate() {
            work(r, dst);
        }
        return;
    }
    let per_task = rows.div_ceil(4 * ctx.num_threads).max(1);
    ferroflow_tensor::team::for_each_chunk_mut(out, per_task * row_len, |i, chunk| {
        for (j, dst) in chunk.chunks_exact_mut(row_len).enumerate() {
            work(i * per_task + j, dst);
        }
    });
}

struct Conv {
    /// Filter as `[kh * kw * ic, oc]`.
    filter: Vec<f32>,
    bias: Vec<f32>,
    kh: usize,
    kw: usize,
    ic: usize,
    oc: usize,
    padding: Padding,
    stride: [i32; 2],
    dilation: [i32; 2],
    act: (f32, f32),
    geom: Option<ConvGeom>,
    scratch: Mutex<Vec<f32>>,
    /// The filter packed for the AVX-512 GEMM (bias and activation fused),
    /// when the CPU has it.
    packed: Option<super::sgemm::Packed>,
}

impl Conv {
    fn new(
        op: &OpDef,
        tensors: &[Slot],
        pad: i8,
        stride: [i32; 2],
        dilation: [i32; 2],
        act: i8,
    ) -> Result<Conv> {
        let f = const_f32(tensors, op, 1, "filter")?;
        ensure!(
            f.shape.len() == 4,
            invalid,
            "the filter must be 4-D (OHWI), got {:?}",
            f.shape
        );
        let (oc, kh, kw, ic) = (f.shape[0], f.shape[1], f.shape[2], f.shape[3]);
        let src = f.as_slice::<f32>();
        let k = kh * kw * ic;
        let mut filter = vec![0.0; k * oc];
        for o in 0..oc {
            for j in 0..k {
                filter[j * oc + o] = src[o * k + j];
            }
        }
        let bias = optional_bias(tensors, op, oc)?;
        let act = activation_range(act)?;
        let packed = super::sgemm::available()
            .then(|| super::sgemm::Packed::new(&filter, k, oc, &bias, act));
        Ok(Conv {
            packed,
            filter,
            bias,
            kh,
            kw,
            ic,
            oc,
            padding: padding(pad)?,
            stride,
            dilation,
            act,
            geom: None,
            scratch: Mutex::new(Vec::new()),
        })
    }
}

impl Kernel for Conv {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        let g = conv_geom(
            "CONV_2D",
            inputs.get(0)?,
            self.padding,
            [self.kh, self.kw],
            self.stride,
            self.dilation,
            self.ic,
        )?;
        let shape = vec![g.n, g.h.output, g.w.output, self.oc];
        self.geom = Some(g);
        Ok(vec![shape])
    }
    fn run(&self, ctx: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let g = self
            .geom
            .as_ref()
            .ok_or_else(|| Error::internal("CONV_2D run before prepare"))?;
        let x = inputs.get(0)?.as_slice::<f32>();
        let out = outputs[0].as_mut_slice::<f32>();
        let (oh, ow, ic, oc) = (g.h.output, g.w.output, g.ic, self.oc);
        let k = self.kh * self.kw * ic;
        let pointwise = self.kh == 1
            && self.kw == 1
            && g.h.stride == 1
            && g.w.stride == 1
            && g.h.pad_before == 0
            && g.w.pad_before == 0;
        let in_img = g.h.input * g.w.input * ic;
        let out_img = oh * ow * oc;
        if let (true, Some(p)) = (pointwise, &self.packed) {
            // Bias and activation fused into the GEMM.
            super::sgemm::gemm(ctx.num_threads, g.n * oh * ow, x, p, out);
            return Ok(());
        }
        if pointwise {
            gemm_rows(ctx, g.n * oh * ow, ic, oc, x, &self.filter, out);
        } else if oc <= DIRECT_MAX_OC && self.packed.is_none() {
            // Direct convolution, one output row at a time: per tap, the
            // run of output pixels whose tap lands inside the input
            // accumulates `x * w` over the input channels, vectorized over
            // the output channels (no im2col copy, no padded taps).
            let (iw, kw) = (g.w.input, self.kw);
            let work = |r: usize, dst: &mut [f32]| {
                let (b, oy) = (r / oh, r % oh);
                dst.fill(0.0);
                let img = &x[b * in_img..(b + 1) * in_img];
                for ky in g.h.valid_taps(oy) {
                    let iy = g.h.source(oy, ky) as usize;
                    for kx in 0..kw {
                        let os = g.w.valid_outputs(kx);
                        if os.is_empty() {
                            continue;
                        }
                        let ix0 = g.w.source(os.start, kx) as usize;
                        let tap = (ky * kw + kx) * ic;
                        simd::conv_taps(
                            &mut dst[os.start * oc..],
                            &img[(iy * iw + ix0) * ic..],
                            &self.filter[tap * oc..(tap + ic) * oc],
                            ic,
                            g.w.stride * ic,
                            os.len(),
                        );
                    }
                }
            };
            for_each_row(ctx, out, ow * oc, k, work);
        } else {
            let mut scratch = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
            scratch.resize(oh * ow * k, 0.0);
            for b in 0..g.n {
                let img = &x[b * in_img..(b + 1) * in_img];
                // im2col: one row of kh*kw*ic taps per output pixel; per
                // window row, the taps inside the input are one run.
                for oy in 0..oh {
                    for ox in 0..ow {
                        let row = &mut scratch[(oy * ow + ox) * k..(oy * ow + ox + 1) * k];
                        let kx = g.w.valid_taps(ox);
                        let ix0 = g.w.source(ox, kx.start).max(0) as usize;
                        for ky in 0..self.kh {
                            let iy = g.h.source(oy, ky);
                            let dst = &mut row[ky * self.kw * ic..(ky + 1) * self.kw * ic];
                            if iy < 0 || iy as usize >= g.h.input || kx.is_empty() {
                                dst.fill(0.0);
                                continue;
                            }
                            let line = &img[iy as usize * g.w.input * ic..];
                            dst[..kx.start * ic].fill(0.0);
                            dst[kx.end * ic..].fill(0.0);
                            if g.w.dilation == 1 {
                                let n = kx.len() * ic;
                                dst[kx.start * ic..kx.end * ic]
                                    .copy_from_slice(&line[ix0 * ic..ix0 * ic + n]);
                            } else {
                                for (q, t) in kx.clone().enumerate() {
                                    let at = (ix0 + q * g.w.dilation) * ic;
                                    dst[t * ic..(t + 1) * ic].copy_from_slice(&line[at..at + ic]);
                                }
                            }
                        }
                    }
                }
                let dst = &mut out[b * out_img..(b + 1) * out_img];
                match &self.packed {
                    Some(p) => super::sgemm::gemm(ctx.num_threads, oh * ow, &scratch, p, dst),
                    None => gemm_rows(ctx, oh * ow, k, oc, &scratch, &self.filter, dst),
                }
            }
            if self.packed.is_some() {
                return Ok(());
            }
        }
        simd::bias_clamp(out, &self.bias, self.act.0, self.act.1);
        Ok(())
    }
}

struct Depthwise {
    /// Filter as `[kh * kw, oc]`.
    filter: Vec<f32>,
    /// One value per output channel (zeros without a bias).
    bias: Vec<f32>,
    /// The input widened to the output channels (channel multiplier > 1).
    wide: Mutex<Vec<f32>>,
    kh: usize,
    kw: usize,
    oc: usize,
    padding: Padding,
    stride: [i32; 2],
    dilation: [i32; 2],
    act: (f32, f32),
    geom: Option<ConvGeom>,
}

impl Depthwise {
    fn new(
        op: &OpDef,
        tensors: &[Slot],
        pad: i8,
        stride: [i32; 2],
        dilation: [i32; 2],
        act: i8,
    ) -> Result<Depthwise> {
        let f = const_f32(tensors, op, 1, "filter")?;
        if f.shape.len() != 4 || f.shape[0] != 1 {
            bail!(
                invalid,
                "the depthwise filter must be [1, h, w, channels], got {:?}",
                f.shape
            );
        }
        let (kh, kw, oc) = (f.shape[1], f.shape[2], f.shape[3]);
        let mut bias = optional_bias(tensors, op, oc)?;
        // No bias: sums start from zero (the same bits as starting empty).
        bias.resize(oc, 0.0);
        Ok(Depthwise {
            filter: f.as_slice::<f32>().to_vec(),
            bias,
            wide: Mutex::new(Vec::new()),
            kh,
            kw,
            oc,
            padding: padding(pad)?,
            stride,
            dilation,
            act: activation_range(act)?,
            geom: None,
        })
    }
}

impl Kernel for Depthwise {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        let x = inputs.get(0)?;
        let ic = x.shape.get(3).copied().unwrap_or(0);
        if ic == 0 || !self.oc.is_multiple_of(ic) {
            bail!(
                invalid,
                "DEPTHWISE_CONV_2D: {} output channels are not a multiple of {ic} input channels",
                self.oc
            );
        }
        let g = conv_geom(
            "DEPTHWISE_CONV_2D",
            x,
            self.padding,
            [self.kh, self.kw],
            self.stride,
            self.dilation,
            ic,
        )?;
        let shape = vec![g.n, g.h.output, g.w.output, self.oc];
        self.geom = Some(g);
        Ok(vec![shape])
    }
    fn run(&self, ctx: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let g = self
            .geom
            .as_ref()
            .ok_or_else(|| Error::internal("DEPTHWISE_CONV_2D run before prepare"))?;
        let x = inputs.get(0)?.as_slice::<f32>();
        let out = outputs[0].as_mut_slice::<f32>();
        let (ic, oc) = (g.ic, self.oc);
        let mult = oc / ic;
        let (ih, iw, oh, ow) = (g.h.input, g.w.input, g.h.output, g.w.output);
        // With a channel multiplier, the input is first widened to the
        // output channels (input channel `c` feeds outputs
        // `c * mult .. (c + 1) * mult`), once per invocation.
        let mut wide = self.wide.lock().unwrap_or_else(|e| e.into_inner());
        let x: &[f32] = if mult == 1 {
            x
        } else {
            wide.clear();
            wide.extend(x.iter().flat_map(|&v| std::iter::repeat_n(v, mult)));
            &wide
        };
        let in_img = ih * iw * oc;
        // One output row at a time; per output pixel and block of
        // channels, the valid taps accumulate in registers (bias first,
        // then the taps in row-major order).
        let (lo, hi) = self.act;
        let work = |r: usize, dst: &mut [f32]| {
            let (b, oy) = (r / oh, r % oh);
            let ky = g.h.valid_taps(oy);
            let row = simd::DwRow {
                img: &x[b * in_img..(b + 1) * in_img],
                w: &self.filter,
                iw,
                kw: self.kw,
                iy0: g.h.source(oy, ky.start).max(0) as usize,
                ky,
                dil_h: g.h.dilation,
                cols: &g.w,
            };
            simd::dw_row_f32(dst, &self.bias, lo, hi, &row);
        };
        let (kh, kw) = (self.kh, self.kw);
        for_each_row(ctx, out, ow * oc, kh * kw, work);
        Ok(())
    }
}

struct Pool {
    max: bool,
    padding: Padding,
    window: [i32; 2],
    stride: [i32; 2],
    act: (f32, f32),
    geom: Option<ConvGeom>,
}

impl Kernel for Pool {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        let x = inputs.get(0)?;
        let name = if self.max {
            "MAX_POOL_2D"
        } else {
            "AVERAGE_POOL_2D"
        };
        let ic = x.shape.get(3).copied().unwrap_or(0);
        let window = [
            self.window[0].max(0) as usize,
            self.window[1].max(0) as usize,
        ];
        let g = conv_geom(name, x, self.padding, window, self.stride, [1, 1], ic)?;
        let shape = vec![g.n, g.h.output, g.w.output, ic];
        self.geom = Some(g);
        Ok(vec![shape])
    }
    fn run(&self, _: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let g = self
            .geom
            .as_ref()
            .ok_or_else(|| Error::internal("pool run before prepare"))?;
        let x = inputs.get(0)?.as_slice::<f32>();
        let out = outputs[0].as_mut_slice::<f32>();
        let c = g.ic;
        let (lo, hi) = self.act;
        const BLOCK: usize = 64;
        for b in 0..g.n {
            for oy in 0..g.h.output {
                let ty = g.h.valid_taps(oy);
                for ox in 0..g.w.output {
                    let tx = g.w.valid_taps(ox);
                    let count = (ty.len() * tx.len()).max(1) as f32;
                    let dst = &mut out[((b * g.h.output + oy) * g.w.output + ox) * c..][..c];
                    // Channels in blocks of 64, taps outer: each tap is one
                    // contiguous run of channels.
                    for c0 in (0..c).step_by(BLOCK) {
                        let w = (c - c0).min(BLOCK);
                        let mut acc = [if self.max { f32::NEG_INFINITY } else { 0.0 }; BLOCK];
                        let acc = &mut acc[..w];
                        for ky in ty.clone() {
                            let iy = g.h.source(oy, ky) as usize;
                            let line = &x[(b * g.h.input + iy) * g.w.input * c..];
                            for kx in tx.clone() {
                                let ix = g.w.source(ox, kx) as usize;
                                let src = &line[ix * c + c0..][..w];
                                if self.max {
                                    for (a, &v) in acc.iter_mut().zip(src) {
                                        *a = a.max(v);
                                    }
                                } else {
                                    for (a, &v) in acc.iter_mut().zip(src) {
                                        *a += v;
                                    }
                                }
                            }
                        }
                        for (d, &a) in dst[c0..c0 + w].iter_mut().zip(acc.iter()) {
                            let a = if self.max { a } else { a / count };
                            *d = a.max(lo).min(hi);
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// How two shapes broadcast: the output shape and, per output element, the
/// strides into each operand (computed at prepare time).
#[derive(Default)]
pub struct BroadcastPlan {
    /// Output shape.
    pub shape: Vec<usize>,
    /// Strides of the left operand over the output shape (0: broadcast).
    pub a: Vec<usize>,
    /// Strides of the right operand.
    pub b: Vec<usize>,
    /// Both operands have the output's shape.
    pub same: bool,
}

impl BroadcastPlan {
    /// The plan for `a` and `b`; an error names both shapes.
    pub fn new(op: &str, a: &[usize], b: &[usize]) -> Result<BroadcastPlan> {
        let rank = a.len().max(b.len());
        let pad = |s: &[usize]| -> Vec<usize> {
            std::iter::repeat_n(1, rank - s.len())
                .chain(s.iter().copied())
                .collect()
        };
        let (pa, pb) = (pad(a), pad(b));
        let mut shape = Vec::with_capacity(rank);
        for d in 0..rank {
            let (x, y) = (pa[d], pb[d]);
            if x != y && x != 1 && y != 1 {
                bail!(invalid, "{op}: shapes {a:?} and {b:?} do not broadcast");
            }
            shape.push(if x == 1 { y } else { x });
        }
        let strides = |p: &[usize]| -> Vec<usize> {
            let mut s = vec![0; rank];
            let mut acc = 1;
            for d in (0..rank).rev() {
                s[d] = if p[d] == 1 { 0 } else { acc };
                acc *= p[d];
            }
            s
        };
        Ok(BroadcastPlan {
            same: pa == pb,
            a: strides(&pa),
            b: strides(&pb),
            shape,
        })
    }

    /// Calls `f(out_index, a_index, b_index)` for every output element.
    pub fn for_each(&self, mut f: impl FnMut(usize, usize, usize)) {
        let n: usize = self.shape.iter().product();
        if self.same {
            for i in 0..n {
                f(i, i, i);
            }
            return;
        }
        let rank = self.shape.len();
        let mut coord = vec![0usize; rank];
        let (mut ia, mut ib) = (0usize, 0usize);
        for i in 0..n {
            f(i, ia, ib);
            for d in (0..rank).rev() {
                coord[d] += 1;
                ia += self.a[d];
                ib += self.b[d];
                if coord[d] < self.shape[d] {
                    break;
                }
                ia -= self.a[d] * coord[d];
                ib -= self.b[d] * coord[d];
                coord[d] = 0;
            }
        }
    }
}

struct Binary {
    code: i32,
    act: (f32, f32),
    plan: BroadcastPlan,
}

impl Kernel for Binary {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        self.plan = BroadcastPlan::new(
            &crate::model::builtin_name(self.code),
            &inputs.get(0)?.shape,
            &inputs.get(1)?.shape,
        )?;
        Ok(vec![self.plan.shape.clone()])
    }
    fn run(&self, _: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let a = inputs.get(0)?.as_slice::<f32>();
        let b = inputs.get(1)?.as_slice::<f32>();
        let out = outputs[0].as_mut_slice::<f32>();
        let (lo, hi) = self.act;
        macro_rules! apply {
            ($f:expr) => {{
                let f = $f;
                self.plan.for_each(|i, ia, ib| out[i] = f(a[ia], b[ib]));
            }};
        }
        match self.code {
            0 => apply!(|x: f32, y: f32| (x + y).max(lo).min(hi)),
            41 => apply!(|x: f32, y: f32| (x - y).max(lo).min(hi)),
            18 => apply!(|x: f32, y: f32| (x * y).max(lo).min(hi)),
            42 => apply!(|x: f32, y: f32| (x / y).max(lo).min(hi)),
            55 => apply!(|x: f32, y: f32| x.max(y)),
            57 => apply!(|x: f32, y: f32| x.min(y)),
            99 => apply!(|x: f32, y: f32| (x - y) * (x - y)),
            _ => apply!(|x: f32, y: f32| x.powf(y)),
        }
        Ok(())
    }
}

struct Unary {
    code: i32,
    alpha: f32,
}

impl Kernel for Unary {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        Ok(vec![inputs.get(0)?.shape.clone()])
    }
    fn run(&self, _: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let x = inputs.get(0)?.as_slice::<f32>();
        let out = outputs[0].as_mut_slice::<f32>();
        let alpha = self.alpha;
        let f: fn(f32, f32) -> f32 = match self.code {
            19 => |v, _| v.max(0.0),
            20 => |v, _| v.clamp(-1.0, 1.0),
            21 => |v, _| v.clamp(0.0, 6.0),
            14 => |v, _| 1.0 / (1.0 + (-v).exp()),
            28 => |v, _| v.tanh(),
            47 => |v, _| v.exp(),
            73 => |v, _| v.ln(),
            75 => |v, _| v.sqrt(),
            76 => |v, _| 1.0 / v.sqrt(),
            101 => |v, _| v.abs(),
            59 => |v, _| -v,
            92 => |v, _| v * v,
            98 => |v, a| if v >= 0.0 { v } else { a * v },
            117 => |v, _| v * (v + 3.0).clamp(0.0, 6.0) / 6.0,
            8 => |v, _| v.floor(),
            104 => |v, _| v.ceil(),
            66 => |v, _| v.sin(),
            108 => |v, _| v.cos(),
            116 => |v, _| v.round_ties_even(),
            _ => |v, _| if v >= 0.0 { v } else { v.exp_m1() },
        };
        for (o, &v) in out.iter_mut().zip(x) {
            *o = f(v, alpha);
        }
        Ok(())
    }
}

struct Softmax {
    beta: f32,
    log: bool,
}

impl Kernel for Softmax {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        Ok(vec![inputs.get(0)?.shape.clone()])
    }
    fn run(&self, _: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let xs = inputs.get(0)?;
        let depth = xs.shape.last().copied().unwrap_or(1).max(1);
        let x = xs.as_slice::<f32>();
        let out = outputs[0].as_mut_slice::<f32>();
        for (row, o) in x.chunks_exact(depth).zip(out.chunks_exact_mut(depth)) {
            let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let mut sum = 0.0f32;
            for (v, &r) in o.iter_mut().zip(row) {
                *v = ((r - max) * self.beta).exp();
                sum += *v;
            }
            if self.log {
                let ls = sum.ln();
                for (v, &r) in o.iter_mut().zip(row) {
                    *v = (r - max) * self.beta - ls;
                }
            } else {
                let inv = 1.0 / sum;
                o.iter_mut().for_each(|v| *v *= inv);
            }
        }
        Ok(())
    }
}

/// Reduction over a set of axes, computed as (outer, reduced, inner) after
/// moving the reduced axes together when they are contiguous; other axis
/// sets go through a general index walk.
pub struct Reduce {
    code: i32,
    axes: Vec<i64>,
    keep_dims: bool,
    /// (outer, reduced, inner) when the reduced axes are contiguous.
    plan: (usize, usize, usize),
}

/// The normalized, sorted, deduplicated reduction axes and the output shape.
pub fn reduce_shape(
    op: &str,
    shape: &[usize],
    axes: &[i64],
    keep_dims: bool,
) -> Result<(Vec<usize>, Vec<usize>)> {
    let rank = shape.len() as i64;
    let mut ax: Vec<usize> = Vec::new();
    for &a in axes {
        let n = if a < 0 { a + rank } else { a };
        if n < 0 || n >= rank {
            bail!(invalid, "{op}: axis {a} is out of range for rank {rank}");
        }
        ax.push(n as usize);
    }
    ax.sort_unstable();
    ax.dedup();
    let mut out = Vec::new();
    for (d, &s) in shape.iter().enumerate() {
        if ax.contains(&d) {
            if keep_dims {
                out.push(1);
            }
        } else {
            out.push(s);
        }
    }
    Ok((ax, out))
}

impl Kernel for Reduce {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        let shape = &inputs.get(0)?.shape;
        let (ax, out) = reduce_shape(
            &crate::model::builtin_name(self.code),
            shape,
            &self.axes,
            self.keep_dims,
        )?;
        let contiguous = ax.windows(2).all(|w| w[1] == w[0] + 1);
        ensure!(
            contiguous,
            unimplemented,
            "reducing over non-adjacent axes {ax:?} is not supported"
        );
        let (first, last) = (
            ax.first().copied().unwrap_or(0),
            ax.last().copied().unwrap_or(0),
        );
        if ax.is_empty() {
            self.plan = (shape.iter().product(), 1, 1);
        } else {
            self.plan = (
                shape[..first].iter().product(),
                shape[first..=last].iter().product(),
                shape[last + 1..].iter().product(),
            );
        }
        Ok(vec![out])
    }
    fn run(&self, _: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let x = inputs.get(0)?.as_slice::<f32>();
        let out = outputs[0].as_mut_slice::<f32>();
        let (outer, red, inner) = self.plan;
        let init = match self.code {
            82 => f32::NEG_INFINITY,
            89 => f32::INFINITY,
            81 => 1.0,
            _ => 0.0,
        };
        for o in 0..outer {
            let acc = &mut out[o * inner..(o + 1) * inner];
            acc.fill(init);
            for r in 0..red {
                let src = &x[(o * red + r) * inner..][..inner];
                match self.code {
                    82 => acc.iter_mut().zip(src).for_each(|(a, &v)| *a = a.max(v)),
                    89 => acc.iter_mut().zip(src).for_each(|(a, &v)| *a = a.min(v)),
                    81 => acc.iter_mut().zip(src).for_each(|(a, &v)| *a *= v),
                    _ => acc.iter_mut().zip(src).for_each(|(a, &v)| *a += v),
                }
            }
            if self.code == 40 {
                let n = red.max(1) as f32;
                acc.iter_mut().for_each(|a| *a /= n);
            }
        }
        Ok(())
    }
}

struct L2Norm;

impl Kernel for L2Norm {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        Ok(vec![inputs.get(0)?.shape.clone()])
    }
    fn run(&self, _: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let xs = inputs.get(0)?;
        let depth = xs.shape.last().copied().unwrap_or(1).max(1);
        for (row, o) in xs
            .as_slice::<f32>()
            .chunks_exact(depth)
            .zip(outputs[0].as_mut_slice::<f32>().chunks_exact_mut(depth))
        {
            let ss: f32 = row.iter().map(|v| v * v).sum();
            let inv = 1.0 / ss.max(1e-6).sqrt();
            o.iter_mut().zip(row).for_each(|(o, &v)| *o = v * inv);
        }
        Ok(())
    }
}

struct ArgMinMax {
    max: bool,
    axis: i64,
}

impl Kernel for ArgMinMax {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        let shape = &inputs.get(0)?.shape;
        let (ax, out) = reduce_shape("ARG_MAX", shape, &[self.axis], false)?;
        self.axis = ax[0] as i64;
        Ok(vec![out])
    }
    fn run(&self, _: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let xs = inputs.get(0)?;
        let a = self.axis as usize;
        let (outer, n, inner) = (
            xs.shape[..a].iter().product::<usize>(),
            xs.shape[a],
            xs.shape[a + 1..].iter().product::<usize>(),
        );
        let x = xs.as_slice::<f32>();
        let mut best = vec![0usize; outer * inner];
        for o in 0..outer {
            for i in 0..inner {
                let mut bi = 0;
                for r in 1..n {
                    let (v, b) = (x[(o * n + r) * inner + i], x[(o * n + bi) * inner + i]);
                    if (self.max && v > b) || (!self.max && v < b) {
                        bi = r;
                    }
                }
                best[o * inner + i] = bi;
            }
        }
        match outputs[0].dtype {
            DType::I64 => outputs[0]
                .as_mut_slice::<i64>()
                .iter_mut()
                .zip(&best)
                .for_each(|(o, &b)| *o = b as i64),
            _ => outputs[0]
                .as_mut_slice::<i32>()
                .iter_mut()
                .zip(&best)
                .for_each(|(o, &b)| *o = b as i32),
        }
        Ok(())
    }
}

struct BatchMatMul {
    adj_x: bool,
    adj_y: bool,
}

impl Kernel for BatchMatMul {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        let (a, b) = (&inputs.get(0)?.shape, &inputs.get(1)?.shape);
        if a.len() < 2 || b.len() < 2 {
            bail!(
                invalid,
                "BATCH_MATMUL needs rank >= 2 operands, got {a:?} and {b:?}"
            );
        }
        let (m, ka) = if self.adj_x {
            (a[a.len() - 1], a[a.len() - 2])
        } else {
            (a[a.len() - 2], a[a.len() - 1])
        };
        let (kb, n) = if self.adj_y {
            (b[b.len() - 1], b[b.len() - 2])
        } else {
            (b[b.len() - 2], b[b.len() - 1])
        };
        ensure!(
            ka == kb,
            invalid,
            "BATCH_MATMUL: inner dimensions of {a:?} and {b:?} differ"
        );
        let plan = BroadcastPlan::new("BATCH_MATMUL", &a[..a.len() - 2], &b[..b.len() - 2])?;
        let mut s = plan.shape;
        s.extend([m, n]);
        Ok(vec![s])
    }
    fn run(&self, _: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let (xa, xb) = (inputs.get(0)?, inputs.get(1)?);
        let (a, b) = (&xa.shape, &xb.shape);
        let (ra, ca) = (a[a.len() - 2], a[a.len() - 1]);
        let (rb, cb) = (b[b.len() - 2], b[b.len() - 1]);
        let (m, k) = if self.adj_x { (ca, ra) } else { (ra, ca) };
        let n = if self.adj_y { rb } else { cb };
        let plan = BroadcastPlan::new("BATCH_MATMUL", &a[..a.len() - 2], &b[..b.len() - 2])?;
        let (sa, sb) = (xa.as_slice::<f32>(), xb.as_slice::<f32>());
        let out = outputs[0].as_mut_slice::<f32>();
        let la = if self.adj_x {
            Mat {
                rs: 1,
                cs: ca as isize,
            }
        } else {
            Mat {
                rs: ca as isize,
                cs: 1,
            }
        };
        let lb = if self.adj_y {
            Mat {
                rs: 1,
                cs: cb as isize,
            }
        } else {
            Mat {
                rs: cb as isize,
                cs: 1,
            }
        };
        let lib = F32Gemm::for_product(m, k, n, la, lb);
        plan.for_each(|i, ia, ib| {
            sgemm_slices(
                lib,
                m,
                k,
                n,
                &sa[ia * ra * ca..(ia + 1) * ra * ca],
                la,
                &sb[ib * rb * cb..(ib + 1) * rb * cb],
                lb,
                &mut out[i * m * n..(i + 1) * m * n],
                false,
            );
        });
        Ok(())
    }
}

struct Resize {
    bilinear: bool,
    align_corners: bool,
    half_pixel: bool,
    size: [usize; 2],
}

impl Kernel for Resize {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        let x = inputs.get(0)?;
        let size = inputs.get(1)?;
        ensure!(
            size.constant,
            unimplemented,
            "a non-constant resize size is not supported"
        );
        let s = super::ints_of(size, "size")?;
        if x.shape.len() != 4 || s.len() != 2 || s.iter().any(|&v| v <= 0) {
            bail!(
                invalid,
                "resize: input {:?} and size {s:?} must be NHWC and 2 positive values",
                x.shape
            );
        }
        self.size = [s[0] as usize, s[1] as usize];
        Ok(vec![vec![
            x.shape[0],
            self.size[0],
            self.size[1],
            x.shape[3],
        ]])
    }
    fn run(&self, _: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let xs = inputs.get(0)?;
        let (n, ih, iw, c) = (xs.shape[0], xs.shape[1], xs.shape[2], xs.shape[3]);
        let [oh, ow] = self.size;
        let scale = |i: usize, o: usize| -> f32 {
            if self.align_corners && o > 1 {
                (i - 1) as f32 / (o - 1) as f32
            } else {
                i as f32 / o as f32
            }
        };
        let (sy, sx) = (scale(ih, oh), scale(iw, ow));
        let x = xs.as_slice::<f32>();
        let out = outputs[0].as_mut_slice::<f32>();
        for b in 0..n {
            for oy in 0..oh {
                for ox in 0..ow {
                    let dst = &mut out[((b * oh + oy) * ow + ox) * c..][..c];
                    let px = |iy: usize, ix: usize| &x[((b * ih + iy) * iw + ix) * c..][..c];
                    if self.bilinear {
                        let fy = if self.half_pixel {
                            (oy as f32 + 0.5) * sy - 0.5
                        } else {
                            oy as f32 * sy
                        };
                        let fx = if self.half_pixel {
                            (ox as f32 + 0.5) * sx - 0.5
                        } else {
                            ox as f32 * sx
                        };
                        let (y0f, x0f) = (fy.floor(), fx.floor());
                        let y0 = (y0f.max(0.0) as usize).min(ih - 1);
                        let x0 = (x0f.max(0.0) as usize).min(iw - 1);
                        let y1 = ((fy.ceil().max(0.0)) as usize).min(ih - 1);
                        let x1 = ((fx.ceil().max(0.0)) as usize).min(iw - 1);
                        let (dy, dx) = (fy - y0f, fx - x0f);
                        let (a, bb, cc, d) = (px(y0, x0), px(y0, x1), px(y1, x0), px(y1, x1));
                        for i in 0..c {
                            let top = a[i] + (bb[i] - a[i]) * dx;
                            let bottom = cc[i] + (d[i] - cc[i]) * dx;
                            dst[i] = top + (bottom - top) * dy;
                        }
                    } else {
                        let pick = |o: usize, s: f32, limit: usize| -> usize {
                            let f = if self.half_pixel {
                                (o as f32 + 0.5) * s
                            } else {
                                o as f32 * s
                            };
                            let v = if self.align_corners {
                                f.round()
                            } else {
                                f.floor()
                            };
                            (v.max(0.0) as usize).min(limit - 1)
                        };
                        dst.copy_from_slice(px(pick(oy, sy, ih), pick(ox, sx, iw)));
                    }
                }
            }
        }
        Ok(())
    }
}

struct Dequantize;

impl Kernel for Dequantize {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        Ok(vec![inputs.get(0)?.shape.clone()])
    }
    fn run(&self, _: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let x = inputs.get(0)?;
        let out = outputs[0].as_mut_slice::<f32>();
        match x.dtype {
            DType::F16 => {
                for (o, &v) in out.iter_mut().zip(x.as_slice::<u16>()) {
                    *o = half::f16::from_bits(v).to_f32();
                }
            }
            DType::I8 | DType::U8 | DType::I16 | DType::I32 => {
                let q = &x.quant;
                let per_channel = q.scale.len() > 1;
                let inner: usize = if per_channel {
                    x.shape[q.axis + 1..].iter().product()
                } else {
                    1
                };
                let chans = q.scale.len().max(1);
                let value = |i: usize, v: i32| -> f32 {
                    let c = if per_channel { (i / inner) % chans } else { 0 };
                    let (s, z) = (
                        q.scale.get(c).copied().unwrap_or(1.0) as f64,
                        q.zero_point.get(c).copied().unwrap_or(0),
                    );
                    (s * (v as i64 - z) as f64) as f32
                };
                match x.dtype {
                    DType::I8 => out
                        .iter_mut()
                        .zip(x.as_slice::<i8>())
                        .enumerate()
                        .for_each(|(i, (o, &v))| *o = value(i, v as i32)),
                    DType::U8 => out
                        .iter_mut()
                        .zip(x.as_slice::<u8>())
                        .enumerate()
                        .for_each(|(i, (o, &v))| *o = value(i, v as i32)),
                    DType::I16 => out
                        .iter_mut()
                        .zip(x.as_slice::<i16>())
                        .enumerate()
                        .for_each(|(i, (o, &v))| *o = value(i, v as i32)),
                    _ => out
                        .iter_mut()
                        .zip(x.as_slice::<i32>())
                        .enumerate()
                        .for_each(|(i, (o, &v))| *o = value(i, v)),
                }
            }
            other => {
                bail!(
                    unimplemented,
                    "DEQUANTIZE of {} is not supported",
                    other.name()
                )
            }
        }
        Ok(())
    }
}

struct QuantizeF32;

impl Kernel for QuantizeF32 {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        Ok(vec![inputs.get(0)?.shape.clone()])
    }
    fn run(&self, _: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let x = inputs.get(0)?.as_slice::<f32>();
        let o = &mut outputs[0];
        let (scale, zp) = (o.quant.scale0(), o.quant.zero_point0());
        match o.dtype {
            DType::I8 => {
                for (d, &v) in o.data.as_mut_slice::<i8>().iter_mut().zip(x) {
                    *d = crate::quant::quantize_value(v, scale, zp).clamp(-128, 127) as i8;
                }
            }
            DType::U8 => {
                for (d, &v) in o.data.as_mut_slice::<u8>().iter_mut().zip(x) {
                    *d = crate::quant::quantize_value(v, scale, zp).clamp(0, 255) as u8;
                }
            }
            DType::I16 => {
                for (d, &v) in o.data.as_mut_slice::<i16>().iter_mut().zip(x) {
                    *d = crate::quant::quantize_value(v, scale, zp).clamp(-32768, 32767) as i16;
                }
            }
            other => {
                bail!(
                    unimplemented,
                    "QUANTIZE to {} is not supported",
                    other.name()
                )
            }
        }
        Ok(())
    }
}

struct Cast;

impl Kernel for Cast {
    fn prepare(&mut self, inputs: Inputs<'_>, _: &[i32]) -> Result<Vec<Vec<usize>>> {
        Ok(vec![inputs.get(0)?.shape.clone()])
    }
    fn run(&self, _: &RunContext, inputs: Inputs<'_>, outputs: &mut [Slot]) -> Result<()> {
        let x = inputs.get(0)?;
        let vals: Vec<f64> = match x.dtype {
            DType::F32 => x.as_slice::<f32>().iter().map(|&v| v as f64).collect(),
            DType::F64 => x.as_slice::<f64>().to_vec(),
            DType::I32 => x.as_slice::<i32>().iter().map(|&v| v as f64).collect(),
            DType::I64 => x.as_slice::<i64>().iter().map(|&v| v as f64).collect(),
            DType::I8 => x.as_slice::<i8>().iter().map(|&v| v as f64).collect(),
            DType::U8 | DType::Bool => x.as_slice::<u8>().iter().map(|&v| v as f64).collect(),
            DType::I16 => x.as_slice::<i16>().iter().map(|&v| v as f64).collect(),
            other => {
                bail!(unimplemented, "CAST from {} is not supported", other.name())
            }
        };
        let o = &mut outputs[0];
        match o.dtype {
            DType::F32 => o
                .as_mut_slice::<f32>()
                .iter_mut()
                .zip(&vals)
                .for_each(|(d, &v)| *d = v as f32),
            DType::F64 => o.as_mut_slice::<f64>().copy_from_slice(&vals),
            DType::I32 => o
                .as_mut_slice::<i32>()
                .iter_mut()
                .zip(&vals)
                .for_each(|(d, &v)| *d = v as i32),
            DType::I64 => o
                .as_mut_slice::<i64>()
                .iter_mut()
                .zip(&vals)
                .for_each(|(d, &v)| *d = v as i64),
            DType::I8 => o
                .as_mut_slice::<i8>()
                .iter_mut()
                .zip(&vals)
                .for_each(|(d, &v)| *d = v as i8),
            DType::U8 => o
                .as_mut_slice::<u8>()
                .iter_mut()
                .zip(&vals)
                .for_each(|(d, &v)| *d = v as u8),
            DType::Bool => o
                .as_mut_slice::<u8>()
                .iter_mut()
                .zip(&vals)
                .for_each(|(d, &v)| *d = u8::from(v != 0.0)),
            DType::I16 => o
                .as_mut_slice::<i16>()
                .iter_mut()
                .zip(&vals)
                .for_each(|(d, &v)| *d = v as i16),
            other => {
                bail!(unimplemented, "CAST to {} is not supported", other.name())
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::Buffer;
    use crate::quant::QuantParams;

    fn slot(shape: &[usize], values: &[f32]) -> Slot {
        Slot {
            name: "t".into(),
            dtype: DType::F32,
            shape: shape.to_vec(),
            shape_signature: None,
            quant: QuantParams::default(),
            data: Buffer::from_bytes(bytemuck::cast_slice(values)),
            constant: !values.is_empty(),
        }
    }

    /// Prepares and runs `kernel`; returns the output.
    fn run(kernel: &mut dyn Kernel, tensors: &mut [Slot], threads: usize) -> Vec<f32> {
        let ins = [0, 1, 2];
        let shape = kernel
            .prepare(
                Inputs {
                    tensors: &*tensors,
                    index: &ins,
                },
                &[3],
            )
            .unwrap()
            .swap_remove(0);
        let mut out = std::mem::take(&mut tensors[3]);
        out.shape = shape;
        out.data.resize(out.num_elements() * 4);
        let mut outs = [out];
        kernel
            .run(
                &RunContext {
                    num_threads: threads,
                },
                Inputs {
                    tensors: &*tensors,
                    index: &ins,
                },
                &mut outs,
            )
            .unwrap();
        outs[0].as_slice::<f32>().to_vec()
    }

    #[test]
    fn convolutions_match_float64_on_every_path() {
        // 1x1 (GEMM without im2col), small and large output depths (the
        // direct kernel and im2col), SAME/VALID, strides, dilation, two
        // images, ReLU6; each with the AVX-512 GEMM (where the CPU has
        // it) and without.
        for (n, ih, iw, ic, oc, kh, kw, stride, dil, pad) in [
            (
                1usize, 5usize, 7usize, 3usize, 8usize, 3usize, 3usize, 1i32, 1i32, 0i8,
            ),
            (2, 9, 6, 5, 17, 3, 3, 2, 1, 0),
            (1, 7, 7, 16, 70, 1, 1, 1, 1, 0),
            (1, 6, 5, 4, 3, 2, 3, 1, 2, 1),
            (2, 8, 9, 33, 65, 3, 3, 2, 1, 0),
            (1, 11, 3, 2, 1, 5, 1, 3, 1, 0),
        ] {
            let x: Vec<f32> = (0..n * ih * iw * ic)
                .map(|i| ((i * 37 % 101) as f32 - 50.0) / 25.0)
                .collect();
            let w: Vec<f32> = (0..oc * kh * kw * ic)
                .map(|i| ((i * 53 % 97) as f32 - 48.0) / 40.0)
                .collect();
            let b: Vec<f32> = (0..oc).map(|o| o as f32 * 0.1 - 1.0).collect();
            let mut tensors = vec![
                slot(&[n, ih, iw, ic], &x),
                slot(&[oc, kh, kw, ic], &w),
                slot(&[oc], &b),
                slot(&[], &[]),
            ];
            tensors[0].constant = false;
            let o = OpDef {
                code: 3,
                custom_code: None,
                version: 1,
                inputs: vec![0, 1, 2],
                outputs: vec![3],
                options: None,
            };
            let padding = if pad == 0 {
                Padding::Same
            } else {
                Padding::Valid
            };
            let h = Axis::new("t", padding, ih, kh, stride, dil).unwrap();
            let wa = Axis::new("t", padding, iw, kw, stride, dil).unwrap();
            let mut want = Vec::new();
            for bi in 0..n {
                for oy in 0..h.output {
                    for ox in 0..wa.output {
                        for oo in 0..oc {
                            let mut s = b[oo] as f64;
                            for ky in h.valid_taps(oy) {
                                for kx in wa.valid_taps(ox) {
                                    let (y, xx) =
                                        (h.source(oy, ky) as usize, wa.source(ox, kx) as usize);
                                    for i in 0..ic {
                                        s += x[((bi * ih + y) * iw + xx) * ic + i] as f64
                                            * w[((oo * kh + ky) * kw + kx) * ic + i] as f64;
                                    }
                                }
                            }
                            want.push(s.clamp(0.0, 6.0));
                        }
                    }
                }
            }
            let what = format!("{n}x{ih}x{iw}x{ic} -> {oc}, {kh}x{kw}/{stride} d{dil} {padding:?}");
            for packed in [true, false] {
                for threads in [1, 2] {
                    let mut k = Conv::new(&o, &tensors, pad, [stride; 2], [dil; 2], 3).unwrap();
                    if !packed {
                        k.packed = None;
                    }
                    let got = run(&mut k, &mut tensors, threads);
                    assert_eq!(got.len(), want.len(), "{what}");
                    for (i, (&g, &e)) in got.iter().zip(&want).enumerate() {
                        assert!(
                            (g as f64 - e).abs() <= 1e-5 * e.abs().max(1.0),
                            "{what} packed={packed} threads={threads} [{i}]: {g} vs {e}"
                        );
                    }
                }
            }
        }
    }
}
