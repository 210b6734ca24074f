//! The resize ops of TF1's `tf.image`: `ResizeBilinear`,
//! `ResizeNearestNeighbor`, `ResizeBicubic`, `ResizeArea` and the gradients
//! `ResizeBilinearGrad`, `ResizeNearestNeighborGrad`, `ResizeBicubicGrad`.
//!
//! Sampling follows TensorFlow's kernels, so the pixels are TensorFlow's:
//! the scale is `in / out` (or `(in - 1) / (out - 1)` with
//! `align_corners`), computed in `f32`; an output index `x` samples the
//! input at `x * scale` (legacy) or `(x + 0.5) * scale - 0.5`
//! (`half_pixel_centers`); interpolation runs in `f32` in TensorFlow's order
//! of operations. Output rows are filled in parallel on the kernel team
//! (whole rows per task, so results do not depend on the thread count).

use ferroflow_autodiff::{register_gradient, Builder, Grad};
use ferroflow_graph::{
    AttrValue, AttrsExt, InferContext, Node, OpDef, Output, OutputInfo, PartialShape,
};
use ferroflow_runtime::{factory, KernelFactory, OpContext};
use ferroflow_tensor::kernels::parallel::for_rows;
use ferroflow_tensor::{bail, ensure, DType, Data, Error, Result, Tensor};
use half::{bf16, f16};

use crate::pixels::{image_dims, with_pixels, FloatPixel, Pixel, REAL_TYPES};

/// Registers the resize ops, kernels and gradients (idempotent).
pub(crate) fn register() {
    ferroflow_runtime::register_ops(op_defs(), kernels());
    register_gradient("ResizeBilinear", grad_bilinear);
    register_gradient("ResizeNearestNeighbor", grad_nearest);
    register_gradient("ResizeBicubic", grad_bicubic);
}

/// The graph-level definitions of the resize ops.
pub fn op_defs() -> Vec<OpDef> {
    vec![
        OpDef::new("ResizeBilinear", &["images", "size"], |c| {
            infer_resize(c, Some(DType::Float32))
        }),
        OpDef::new("ResizeNearestNeighbor", &["images", "size"], |c| {
            infer_resize(c, None)
        }),
        OpDef::new("ResizeBicubic", &["images", "size"], |c| {
            infer_resize(c, Some(DType::Float32))
        }),
        OpDef::new("ResizeArea", &["images", "size"], |c| {
            infer_resize(c, Some(DType::Float32))
        }),
        OpDef::new(
            "ResizeBilinearGrad",
            &["grads", "original_image"],
            infer_grad_like_original,
        ),
        OpDef::new(
            "ResizeBicubicGrad",
            &["grads", "original_image"],
            infer_grad_like_original,
        ),
        OpDef::new("ResizeNearestNeighborGrad", &["grads", "size"], |c| {
            infer_resize(c, None)
        }),
    ]
}

fn infer_resize(ctx: &InferContext, out: Option<DType>) -> Result<Vec<OutputInfo>> {
    let dtype = ctx.expect_dtype(0, REAL_TYPES)?;
    ctx.expect_dtype(1, &[DType::Int32])?;
    ctx.expect_rank(0, 4)?;
    ctx.expect_rank(1, 1)?;
    if let Some(Some(n)) = ctx.shape(1).dims().map(|d| d[0]) {
        if n != 2 {
            return Err(ctx.shape_error(format!("Dimension must be 2 but is {n}")));
        }
    }
    let size = ctx.shape_value(1);
    let (h, w) = match size.dims() {
        Some(d) if d.len() == 2 => (d[0], d[1]),
        _ => (None, None),
    };
    let (b, c) = match ctx.shape(0).dims() {
        Some(d) => (d[0], d[3]),
        None => (None, None),
    };
    Ok(vec![OutputInfo::new(
        out.unwrap_or(dtype),
        PartialShape::from_dims(vec![b, h, w, c]),
    )])
}

fn infer_grad_like_original(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::Float32])?;
    let dtype = ctx.expect_dtype(
        1,
        &[
            DType::Float32,
            DType::Float64,
            DType::Float16,
            DType::BFloat16,
        ],
    )?;
    ctx.expect_rank(0, 4)?;
    ctx.expect_rank(1, 4)?;
    Ok(vec![OutputInfo::new(dtype, ctx.shape(1).clone())])
}

/// How output coordinates map to input coordinates.
#[derive(Clone, Copy, Debug)]
pub struct Sampling {
    /// Align the corner pixels' centres of input and output.
    pub align_corners: bool,
    /// Pixel centres at `+0.5` (TF2's convention, `tf.image.resize`).
    pub half_pixel_centers: bool,
}

impl Sampling {
    fn from_attrs(attrs: &ferroflow_graph::Attrs) -> Result<Sampling> {
        let s = Sampling {
            align_corners: attrs.bool_or("align_corners", false)?,
            half_pixel_centers: attrs.bool_or("half_pixel_centers", false)?,
        };
        if s.align_corners && s.half_pixel_centers {
            bail!(
                invalid_argument,
                "If half_pixel_centers is True, align_corners must be False."
            );
        }
        Ok(s)
    }

    /// TensorFlow's `CalculateResizeScale`.
    fn scale(self, in_size: usize, out_size: usize) -> f32 {
        if self.align_corners && out_size > 1 {
            (in_size - 1) as f32 / (out_size - 1) as f32
        } else {
            in_size as f32 / out_size as f32
        }
    }

    /// The input coordinate output index `x` samples (bilinear, bicubic).
    #[inline]
    fn source(self, x: usize, scale: f32) -> f32 {
        if self.half_pixel_centers {
            (x as f32 + 0.5) * scale - 0.5
        } else {
            x as f32 * scale
        }
    }

    /// The input index output index `x` copies (nearest neighbour).
    #[inline]
    fn nearest(self, x: usize, scale: f32, in_size: usize) -> usize {
        let i = if self.half_pixel_centers {
            ((x as f32 + 0.5) * scale).floor() as i64
        } else if self.align_corners {
            (x as f32 * scale).round() as i64
        } else {
            (x as f32 * scale).floor() as i64
        };
        i.clamp(0, in_size as i64 - 1) as usize
    }
}

/// The requested output size: a vector of two positive int32s.
fn output_size(size: &Tensor) -> Result<(usize, usize)> {
    ensure!(
        size.rank() == 1,
        invalid_argument,
        "shape_t must be 1-dimensional{}",
        size.shape()
    );
    let v = size.to_i64_vec()?;
    ensure!(
        v.len() == 2,
        invalid_argument,
        "shape_t must have two elements{}",
        size.shape()
    );
    if v[0] <= 0 || v[1] <= 0 {
        bail!(invalid_argument, "output dimensions must be positive");
    }
    Ok((v[0] as usize, v[1] as usize))
}

fn check_input(dims: [usize; 4]) -> Result<()> {
    if dims[1] == 0 || dims[2] == 0 {
        bail!(invalid_argument, "input image must be of non-zero size");
    }
    Ok(())
}

/// One output coordinate's two neighbours and the weight of the upper one.
#[derive(Clone, Copy)]
struct Lerp {
    lower: usize,
    upper: usize,
    frac: f32,
}

fn lerps(s: Sampling, out_size: usize, in_size: usize, scale: f32) -> Vec<Lerp> {
    (0..out_size)
        .map(|i| {
            let src = s.source(i, scale);
            let floor = src.floor();
            Lerp {
                lower: (floor as i64).max(0) as usize,
                upper: (src.ceil() as i64).min(in_size as i64 - 1) as usize,
                frac: src - floor,
            }
        })
        .collect()
}

/// `ResizeBilinear`: `[b, h, w, c]` of any real type to `f32`.
pub fn resize_bilinear(images: &Tensor, size: (usize, usize), s: Sampling) -> Result<Tensor> {
    let dims = image_dims(images, "input")?;
    check_input(dims)?;
    with_pixels!(images, "ResizeBilinear", v => bilinear(v, dims, size, s))
}

fn bilinear<T: Pixel>(
    x: &[T],
    dims: [usize; 4],
    size: (usize, usize),
    s: Sampling,
) -> Result<Tensor> {
    let [b, ih, iw, c] = dims;
    let (oh, ow) = size;
    let ys = lerps(s, oh, ih, s.scale(ih, oh));
    let xs = lerps(s, ow, iw, s.scale(iw, ow));
    let row = ow * c;
    let mut out = vec![0f32; b * oh * row];
    for_rows(&mut out, row, |first, rows| {
        for (k, orow) in rows.chunks_mut(row).enumerate() {
            let (n, y) = ((first + k) / oh, (first + k) % oh);
            let yl = ys[y];
            let top = &x[(n * ih + yl.lower) * iw * c..][..iw * c];
            let bottom = &x[(n * ih + yl.upper) * iw * c..][..iw * c];
            // Fixed channel counts let the compiler unroll the pixel.
            match c {
                1 => bilinear_row::<T, 1>(top, bottom, &xs, yl.frac, orow),
                3 => bilinear_row::<T, 3>(top, bottom, &xs, yl.frac, orow),
                4 => bilinear_row::<T, 4>(top, bottom, &xs, yl.frac, orow),
                _ => bilinear_row_any(top, bottom, &xs, yl.frac, c, orow),
            }
        }
    });
    Tensor::from_vec(vec![b, oh, ow, c], out)
}

/// One output row of a bilinear resize with `C` channels: interpolates
/// across each of the two source rows, then between them (TensorFlow's order).
#[inline]
fn bilinear_row<T: Pixel, const C: usize>(
    top: &[T],
    bottom: &[T],
    xs: &[Lerp],
    fy: f32,
    out: &mut [f32],
) {
    for (o, xl) in out.chunks_exact_mut(C).zip(xs) {
        let (l, r) = (xl.lower * C, xl.upper * C);
        let (tl, tr) = (&top[l..l + C], &top[r..r + C]);
        let (bl, br) = (&bottom[l..l + C], &bottom[r..r + C]);
        for ch in 0..C {
            let (tl, tr) = (tl[ch].to_f32(), tr[ch].to_f32());
            let (bl, br) = (bl[ch].to_f32(), br[ch].to_f32());
            let t = tl + (tr - tl) * xl.frac;
            let b = bl + (br - bl) * xl.frac;
            o[ch] = t + (b - t) * fy;
        }
    }
}

/// [`bilinear_row`] for any channel count.
fn bilinear_row_any<T: Pixel>(
    top: &[T],
    bottom: &[T],
    xs: &[Lerp],
    fy: f32,
    c: usize,
    out: &mut [f32],
) {
    for (o, xl) in out.chunks_exact_mut(c).zip(xs) {
        let (l, r) = (xl.lower * c, xl.upper * c);
        for ch in 0..c {
            let (tl, tr) = (top[l + ch].to_f32(), top[r + ch].to_f32());
            let (bl, br) = (bottom[l + ch].to_f32(), bottom[r + ch].to_f32());
            let t = tl + (tr - tl) * xl.frac;
            let b = bl + (br - bl) * xl.frac;
            o[ch] = t + (b - t) * fy;
        }
    }
}

/// `ResizeNearestNeighbor`: keeps the dtype.
pub fn resize_nearest(images: &Tensor, size: (usize, usize), s: Sampling) -> Result<Tensor> {
    let dims = image_dims(images, "input")?;
    check_input(dims)?;
    let [b, ih, iw, c] = dims;
    let (oh, ow) = size;
    let (sy, sx) = (s.scale(ih, oh), s.scale(iw, ow));
    let ys: Vec<usize> = (0..oh).map(|y| s.nearest(y, sy, ih)).collect();
    let xs: Vec<usize> = (0..ow).map(|x| s.nearest(x, sx, iw)).collect();
    fn gather<T: Copy + Send + Sync + Default>(
        x: &[T],
        dims: [usize; 4],
        ys: &[usize],
        xs: &[usize],
    ) -> Vec<T> {
        let [b, ih, iw, c] = dims;
        let (oh, ow) = (ys.len(), xs.len());
        let row = ow * c;
        let mut out = vec![T::default(); b * oh * row];
        for_rows(&mut out, row, |first, rows| {
            for (k, orow) in rows.chunks_mut(row).enumerate() {
                let (n, y) = ((first + k) / oh, (first + k) % oh);
                let src = &x[(n * ih + ys[y]) * iw * c..][..iw * c];
                for (o, &xi) in orow.chunks_mut(c).zip(xs) {
                    o.copy_from_slice(&src[xi * c..xi * c + c]);
                }
            }
        });
        out
    }
    let data = match images.data() {
        Data::U8(v) => Data::U8(gather(v, dims, &ys, &xs).into()),
        Data::I8(v) => Data::I8(gather(v, dims, &ys, &xs).into()),
        Data::I16(v) => Data::I16(gather(v, dims, &ys, &xs).into()),
        Data::U16(v) => Data::U16(gather(v, dims, &ys, &xs).into()),
        Data::I32(v) => Data::I32(gather(v, dims, &ys, &xs).into()),
        Data::I64(v) => Data::I64(gather(v, dims, &ys, &xs).into()),
        Data::F16(v) => Data::F16(gather(v, dims, &ys, &xs).into()),
        Data::BF16(v) => Data::BF16(gather(v, dims, &ys, &xs).into()),
        Data::F32(v) => Data::F32(gather(v, dims, &ys, &xs).into()),
        Data::F64(v) => Data::F64(gather(v, dims, &ys, &xs).into()),
        _ => return Err(crate::pixels::unsupported(images, "ResizeNearestNeighbor")),
    };
    Tensor::new(vec![b, oh, ow, c].into(), data)
}

/// Entries of the cubic-kernel table (TensorFlow samples the kernel at
/// 1/1024 steps and rounds the fraction to the nearest step).
const CUBIC_TABLE_SIZE: usize = 1024;

/// The sampled cubic convolution kernel: entry `2i` is the weight at
/// distance `i / 1024`, entry `2i + 1` at `1 + i / 1024`. `a` is -0.75
/// (TF1's legacy kernel) or -0.5 (Keys' kernel, with half-pixel centres).
fn cubic_table(a: f64) -> Vec<f32> {
    let mut t = vec![0f32; (CUBIC_TABLE_SIZE + 1) * 2];
    for i in 0..=CUBIC_TABLE_SIZE {
        let x = (i as f64 / CUBIC_TABLE_SIZE as f64) as f32 as f64;
        t[i * 2] = (((a + 2.0) * x - (a + 3.0)) * x * x + 1.0) as f32;
        let x = x + 1.0;
        t[i * 2 + 1] = (((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a) as f32;
    }
    t
}

/// The four taps of one output coordinate and their weights.
#[derive(Clone, Copy)]
struct Taps {
    index: [usize; 4],
    weight: [f32; 4],
}

fn cubic_taps(s: Sampling, table: &[f32], out: usize, scale: f32, limit: usize) -> Taps {
    let src = s.source(out, scale);
    let base = src.floor() as i64;
    let delta = src - base as f32;
    let offset = (delta * CUBIC_TABLE_SIZE as f32).round_ties_even() as usize;
    let bound = |v: i64| v.clamp(0, limit as i64 - 1) as usize;
    let index = [
        bound(base - 1),
        bound(base),
        bound(base + 1),
        bound(base + 2),
    ];
    let raw = [
        table[offset * 2 + 1],
        table[offset * 2],
        table[(CUBIC_TABLE_SIZE - offset) * 2],
        table[(CUBIC_TABLE_SIZE - offset) * 2 + 1],
    ];
    if !s.half_pixel_centers {
        return Taps { index, weight: raw };
    }
    // Keys' kernel (half-pixel centres): taps outside the image weigh zero
    // and the rest are renormalised, as ScaleAndTranslate does.
    let mut weight = [0f32; 4];
    for k in 0..4 {
        if index[k] as i64 == base - 1 + k as i64 {
            weight[k] = raw[k];
        }
    }
    let sum = weight[0] + weight[1] + weight[2] + weight[3];
    if sum.abs() >= 1000.0 * f32::MIN_POSITIVE {
        let inv = 1.0 / sum;
        for w in &mut weight {
            *w *= inv;
        }
    }
    Taps { index, weight }
}

fn cubic_coefficient(s: Sampling) -> f64 {
    if s.half_pixel_centers {
        -0.5
    } else {
        -0.75
    }
}

/// `ResizeBicubic`: any real type to `f32`.
pub fn resize_bicubic(images: &Tensor, size: (usize, usize), s: Sampling) -> Result<Tensor> {
    let dims = image_dims(images, "input")?;
    check_input(dims)?;
    with_pixels!(images, "ResizeBicubic", v => bicubic(v, dims, size, s))
}

fn bicubic<T: Pixel>(
    x: &[T],
    dims: [usize; 4],
    size: (usize, usize),
    s: Sampling,
) -> Result<Tensor> {
    let [b, ih, iw, c] = dims;
    let (oh, ow) = size;
    let table = cubic_table(cubic_coefficient(s));
    let (sy, sx) = (s.scale(ih, oh), s.scale(iw, ow));
    let ys: Vec<Taps> = (0..oh).map(|y| cubic_taps(s, &table, y, sy, ih)).collect();
    let xs: Vec<Taps> = (0..ow).map(|x| cubic_taps(s, &table, x, sx, iw)).collect();
    let row = ow * c;
    let mut out = vec![0f32; b * oh * row];
    for_rows(&mut out, row, |first, rows| {
        for (k, orow) in rows.chunks_mut(row).enumerate() {
            let (n, y) = ((first + k) / oh, (first + k) % oh);
            let yt = ys[y];
            let src: [&[T]; 4] = yt.index.map(|r| &x[(n * ih + r) * iw * c..][..iw * c]);
            for (xo, xt) in xs.iter().enumerate() {
                for ch in 0..c {
                    // Down the columns first, then across, as TensorFlow.
                    let col = xt.index.map(|i| {
                        let at = i * c + ch;
                        src[0][at].to_f32() * yt.weight[0]
                            + src[1][at].to_f32() * yt.weight[1]
                            + src[2][at].to_f32() * yt.weight[2]
                            + src[3][at].to_f32() * yt.weight[3]
                    });
                    orow[xo * c + ch] = col[0] * xt.weight[0]
                        + col[1] * xt.weight[1]
                        + col[2] * xt.weight[2]
                        + col[3] * xt.weight[3];
                }
            }
        }
    });
    Tensor::from_vec(vec![b, oh, ow, c], out)
}

/// One output column of an area resize: the input columns it covers and
/// the covered fraction of the first and last.
#[derive(Clone, Copy)]
struct Span {
    start: i64,
    end: i64,
    start_scale: f32,
    end_scale: f32,
}

fn coverage(v: i64, lo: f32, hi: f32, scale: f32) -> f32 {
    let vf = v as f32;
    if vf < lo {
        if (v + 1) as f32 > hi {
            scale
        } else {
            (v + 1) as f32 - lo
        }
    } else if (v + 1) as f32 > hi {
        hi - vf
    } else {
        1.0
    }
}

/// `ResizeArea`: each output pixel averages the input area it covers.
pub fn resize_area(images: &Tensor, size: (usize, usize), align_corners: bool) -> Result<Tensor> {
    let dims = image_dims(images, "input")?;
    check_input(dims)?;
    let s = Sampling {
        align_corners,
        half_pixel_centers: false,
    };
    with_pixels!(images, "ResizeArea", v => area(v, dims, size, s))
}

fn area<T: Pixel>(x: &[T], dims: [usize; 4], size: (usize, usize), s: Sampling) -> Result<Tensor> {
    let [b, ih, iw, c] = dims;
    let (oh, ow) = size;
    let (sy, sx) = (s.scale(ih, oh), s.scale(iw, ow));
    let spans: Vec<Span> = (0..ow)
        .map(|xo| {
            let lo = xo as f32 * sx;
            let hi = (xo + 1) as f32 * sx;
            let start = lo.floor() as i64;
            let end = hi.ceil() as i64;
            Span {
                start,
                end,
                start_scale: coverage(start, lo, hi, sx),
                end_scale: coverage(end - 1, lo, hi, sx),
            }
        })
        .collect();
    let norm = 1.0 / (sy * sx);
    let bound = |v: i64, limit: usize| v.clamp(0, limit as i64 - 1) as usize;
    let row = ow * c;
    let mut out = vec![0f32; b * oh * row];
    for_rows(&mut out, row, |first, rows| {
        let mut taps: Vec<(&[T], f32)> = Vec::new();
        for (k, orow) in rows.chunks_mut(row).enumerate() {
            let (n, y) = ((first + k) / oh, (first + k) % oh);
            let lo = y as f32 * sy;
            let hi = (y + 1) as f32 * sy;
            taps.clear();
            for i in lo.floor() as i64..hi.ceil() as i64 {
                let r = bound(i, ih);
                taps.push((
                    &x[(n * ih + r) * iw * c..][..iw * c],
                    coverage(i, lo, hi, sy),
                ));
            }
            for (xo, sp) in spans.iter().enumerate() {
                for ch in 0..c {
                    let mut sum = 0f32;
                    for &(src, wy) in &taps {
                        let at = |i: i64| src[bound(i, iw) * c + ch].to_f32();
                        let mut sum_y = at(sp.start) * sp.start_scale;
                        if sp.start + 1 != sp.end {
                            for i in sp.start + 1..sp.end - 1 {
                                sum_y += at(i);
                            }
                            sum_y += at(sp.end - 1) * sp.end_scale;
                        }
                        sum += sum_y * wy;
                    }
                    orow[xo * c + ch] = sum * norm;
                }
            }
        }
    });
    Tensor::from_vec(vec![b, oh, ow, c], out)
}

/// Runs `f` with the float type of `dtype` (the gradient kernels' outputs).
macro_rules! with_float_type {
    ($dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            DType::Float32 => {
                type $T = f32;
                $body
            }
            DType::Float64 => {
                type $T = f64;
                $body
            }
            DType::Float16 => {
                type $T = f16;
                $body
            }
            DType::BFloat16 => {
                type $T = bf16;
                $body
            }
            other => Err(Error::invalid_argument(format!(
                "unsupported gradient dtype {other}"
            ))),
        }
    };
}

/// Sums per-image gradient contributions: `scatter(n, image_out)` adds image
/// `n`'s contributions into its (zeroed) slice of the output. Images are
/// independent, so they run in parallel with identical results.
fn per_image<T: FloatPixel>(
    dims: [usize; 4],
    scatter: impl Fn(usize, &mut [T]) + Sync,
) -> Result<Tensor> {
    let [b, h, w, c] = dims;
    let plane = h * w * c;
    let mut out = vec![T::default(); b * plane];
    for_rows(&mut out, plane.max(1), |first, images| {
        for (k, img) in images.chunks_mut(plane.max(1)).enumerate() {
            scatter(first + k, img);
        }
    });
    Tensor::new(dims.to_vec().into(), T::wrap(out))
}

fn grad_input(grads: &Tensor, original: [usize; 4]) -> Result<([usize; 4], &[f32])> {
    let g = image_dims(grads, "input_grad")?;
    if g[0] != original[0] || g[3] != original[3] {
        bail!(
            invalid_argument,
            "input_grad and original_image must agree on batch and channels: {:?} vs {:?}",
            g,
            original
        );
    }
    if original[1] == 0 || original[2] == 0 {
        bail!(invalid_argument, "original image must be of non-zero size");
    }
    Ok((g, grads.as_slice::<f32>()?))
}

/// `ResizeBilinearGrad`: the gradient with respect to the original image.
pub fn resize_bilinear_grad(grads: &Tensor, original: &Tensor, s: Sampling) -> Result<Tensor> {
    let odims = image_dims(original, "original_image")?;
    let (g, dy) = grad_input(grads, odims)?;
    let [_, gh, gw, c] = g;
    let [_, oh, ow, _] = odims;
    let ys = lerps(s, gh, oh, s.scale(oh, gh));
    let xs = lerps(s, gw, ow, s.scale(ow, gw));
    with_float_type!(original.dtype(), T => per_image::<T>(odims, |n, img| {
        for (y, yl) in ys.iter().enumerate() {
            let src = &dy[(n * gh + y) * gw * c..][..gw * c];
            let (inv_y, fy) = (1.0 - yl.frac, yl.frac);
            for (x, xl) in xs.iter().enumerate() {
                let (inv_x, fx) = (1.0 - xl.frac, xl.frac);
                for ch in 0..c {
                    let v = src[x * c + ch];
                    let at = |r: usize, col: usize| (r * ow + col) * c + ch;
                    img[at(yl.lower, xl.lower)] += T::from_f32(v * inv_y * inv_x);
                    img[at(yl.lower, xl.upper)] += T::from_f32(v * inv_y * fx);
                    img[at(yl.upper, xl.lower)] += T::from_f32(v * fy * inv_x);
                    img[at(yl.upper, xl.upper)] += T::from_f32(v * fy * fx);
                }
            }
        }
    }))
}

/// `ResizeBicubicGrad`: the gradient with respect to the original image.
pub fn resize_bicubic_grad(grads: &Tensor, original: &Tensor, s: Sampling) -> Result<Tensor> {
    let odims = image_dims(original, "original_image")?;
    let (g, dy) = grad_input(grads, odims)?;
    let [_, gh, gw, c] = g;
    let [_, oh, ow, _] = odims;
    let table = cubic_table(cubic_coefficient(s));
    let ys: Vec<Taps> = (0..gh)
        .map(|y| cubic_taps(s, &table, y, s.scale(oh, gh), oh))
        .collect();
    let xs: Vec<Taps> = (0..gw)
        .map(|x| cubic_taps(s, &table, x, s.scale(ow, gw), ow))
        .collect();
    with_float_type!(original.dtype(), T => per_image::<T>(odims, |n, img| {
        for (y, yt) in ys.iter().enumerate() {
            let src = &dy[(n * gh + y) * gw * c..][..gw * c];
            for (x, xt) in xs.iter().enumerate() {
                for ch in 0..c {
                    let v = src[x * c + ch];
                    for i in 0..4 {
                        for j in 0..4 {
                            let at = (yt.index[i] * ow + xt.index[j]) * c + ch;
                            img[at] += T::from_f32(v * yt.weight[i] * xt.weight[j]);
                        }
                    }
                }
            }
        }
    }))
}

/// `ResizeNearestNeighborGrad`: sums each gradient pixel into the input
/// pixel that produced it; `size` is the original image's height and width.
pub fn resize_nearest_grad(grads: &Tensor, size: (usize, usize), s: Sampling) -> Result<Tensor> {
    let [b, gh, gw, c] = image_dims(grads, "input")?;
    let (oh, ow) = size;
    let (sy, sx) = (s.scale(oh, gh), s.scale(ow, gw));
    let ys: Vec<usize> = (0..gh).map(|y| s.nearest(y, sy, oh)).collect();
    let xs: Vec<usize> = (0..gw).map(|x| s.nearest(x, sx, ow)).collect();
    let odims = [b, oh, ow, c];
    fn scatter<T: FloatPixel>(
        dy: &[T],
        g: [usize; 4],
        odims: [usize; 4],
        ys: &[usize],
        xs: &[usize],
    ) -> Result<Tensor> {
        let [_, gh, gw, c] = g;
        let ow = odims[2];
        per_image::<T>(odims, |n, img| {
            for (y, &oy) in ys.iter().enumerate() {
                let src = &dy[(n * gh + y) * gw * c..][..gw * c];
                for (x, &ox) in xs.iter().enumerate() {
                    for ch in 0..c {
                        img[(oy * ow + ox) * c + ch] += src[x * c + ch];
                    }
                }
            }
        })
    }
    let g = [b, gh, gw, c];
    match grads.data() {
        Data::F32(v) => scatter(v, g, odims, &ys, &xs),
        Data::F64(v) => scatter(v, g, odims, &ys, &xs),
        Data::F16(v) => scatter(v, g, odims, &ys, &xs),
        Data::BF16(v) => scatter(v, g, odims, &ys, &xs),
        _ => Err(crate::pixels::unsupported(
            grads,
            "ResizeNearestNeighborGrad",
        )),
    }
}

/// A kernel `f(images, size)` for the ops taking an image batch and a size.
fn sized_kernel(f: fn(&Tensor, (usize, usize), Sampling) -> Result<Tensor>) -> KernelFactory {
    factory(move |init| {
        let s = Sampling::from_attrs(&init.node.attrs)?;
        Ok(Box::new(move |ctx: &mut OpContext<'_>| {
            let size = output_size(ctx.input(1)?)?;
            let out = f(ctx.input(0)?, size, s)?;
            ctx.output(out);
            Ok(())
        }))
    })
}

/// A kernel `f(grads, original_image)` for the gradient ops.
fn grad_kernel(f: fn(&Tensor, &Tensor, Sampling) -> Result<Tensor>) -> KernelFactory {
    factory(move |init| {
        let s = Sampling::from_attrs(&init.node.attrs)?;
        Ok(Box::new(move |ctx: &mut OpContext<'_>| {
            let out = f(ctx.input(0)?, ctx.input(1)?, s)?;
            ctx.output(out);
            Ok(())
        }))
    })
}

fn kernels() -> Vec<(&'static str, KernelFactory)> {
    vec![
        ("ResizeBilinear", sized_kernel(resize_bilinear)),
        ("ResizeNearestNeighbor", sized_kernel(resize_nearest)),
        ("ResizeBicubic", sized_kernel(resize_bicubic)),
        // ResizeArea has no half_pixel_centers attribute (read as false).
        (
            "ResizeArea",
            sized_kernel(|x, size, s| resize_area(x, size, s.align_corners)),
        ),
        ("ResizeBilinearGrad", grad_kernel(resize_bilinear_grad)),
        ("ResizeBicubicGrad", grad_kernel(resize_bicubic_grad)),
        (
            "ResizeNearestNeighborGrad",
            sized_kernel(resize_nearest_grad),
        ),
    ]
}

type GradResult = Result<Vec<Option<Grad>>>;

fn sampling_attrs(n: &Node) -> Vec<(&'static str, AttrValue)> {
    ["align_corners", "half_pixel_centers"]
        .iter()
        .filter_map(|&k| n.attrs.get(k).map(|v| (k, v.clone())))
        .collect()
}

fn upstream(g: &[Option<Output>]) -> Result<Output> {
    g[0].ok_or_else(|| Error::internal("resize gradient called without an output gradient"))
}

/// d(ResizeBilinear)/d(images) = ResizeBilinearGrad(dy, images); `size` has none.
fn grad_bilinear(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> GradResult {
    let dy = upstream(g)?;
    let dx = b.op("ResizeBilinearGrad", &[dy, n.inputs[0]], sampling_attrs(n))?;
    Ok(vec![Some(Grad::Dense(dx)), None])
}

/// d(ResizeBicubic)/d(images) = ResizeBicubicGrad(dy, images).
fn grad_bicubic(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> GradResult {
    let dy = upstream(g)?;
    let dx = b.op("ResizeBicubicGrad", &[dy, n.inputs[0]], sampling_attrs(n))?;
    Ok(vec![Some(Grad::Dense(dx)), None])
}

/// d(ResizeNearestNeighbor)/d(images) = ResizeNearestNeighborGrad(dy,
/// the images' height and width).
fn grad_nearest(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> GradResult {
    let dy = upstream(g)?;
    let shape = b.shape(n.inputs[0])?;
    let begin = b.const_i32(vec![1])?;
    let len = b.const_i32(vec![2])?;
    let hw = b.op("Slice", &[shape, begin, len], vec![])?;
    let dx = b.op("ResizeNearestNeighborGrad", &[dy, hw], sampling_attrs(n))?;
    Ok(vec![Some(Grad::Dense(dx)), None])
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEGACY: Sampling = Sampling {
        align_corners: false,
        half_pixel_centers: false,
    };
    const HALF: Sampling = Sampling {
        align_corners: false,
        half_pixel_centers: true,
    };
    const CORNERS: Sampling = Sampling {
        align_corners: true,
        half_pixel_centers: false,
    };

    fn image(dims: [usize; 4], seed: u32) -> Tensor {
        let n = dims.iter().product();
        let mut s = seed.wrapping_mul(2654435761).max(1);
        let v: Vec<f32> = (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 17;
                s ^= s << 5;
                (s % 1000) as f32 / 100.0
            })
            .collect();
        Tensor::from_vec(dims.to_vec(), v).unwrap()
    }

    fn dot(a: &Tensor, b: &Tensor) -> f64 {
        let (a, b) = (a.as_slice::<f32>().unwrap(), b.as_slice::<f32>().unwrap());
        a.iter().zip(b).map(|(&x, &y)| x as f64 * y as f64).sum()
    }

    #[test]
    fn bilinear_legacy_upscale_by_two() {
        let x = Tensor::from_vec(vec![1, 2, 2, 1], vec![0f32, 10., 20., 30.]).unwrap();
        let out = resize_bilinear(&x, (4, 4), LEGACY).unwrap();
        // Source coordinates 0, 0.5, 1, 1.5 (clamped to 1).
        assert_eq!(
            out.as_slice::<f32>().unwrap(),
            &[0., 5., 10., 10., 10., 15., 20., 20., 20., 25., 30., 30., 20., 25., 30., 30.]
        );
        let out = resize_bilinear(&x, (3, 3), CORNERS).unwrap();
        assert_eq!(
            out.as_slice::<f32>().unwrap(),
            &[0., 5., 10., 10., 15., 20., 20., 25., 30.]
        );
    }

    #[test]
    fn same_size_is_identity_for_every_method() {
        let x = image([2, 5, 3, 2], 1);
        for s in [LEGACY, HALF, CORNERS] {
            assert_eq!(
                resize_bilinear(&x, (5, 3), s)
                    .unwrap()
                    .as_slice::<f32>()
                    .unwrap(),
                x.as_slice::<f32>().unwrap()
            );
            assert_eq!(
                resize_nearest(&x, (5, 3), s)
                    .unwrap()
                    .as_slice::<f32>()
                    .unwrap(),
                x.as_slice::<f32>().unwrap()
            );
        }
        let area = resize_area(&x, (5, 3), false).unwrap();
        for (a, b) in area
            .as_slice::<f32>()
            .unwrap()
            .iter()
            .zip(x.as_slice::<f32>().unwrap())
        {
            assert!((a - b).abs() < 1e-5);
        }
    }

    #[test]
    fn area_halving_averages_blocks() {
        let x = Tensor::from_vec(vec![1, 2, 4, 1], vec![1u8, 3, 5, 7, 9, 11, 13, 15]).unwrap();
        let out = resize_area(&x, (1, 2), false).unwrap();
        assert_eq!(out.as_slice::<f32>().unwrap(), &[6., 10.]);
    }

    #[test]
    fn nearest_keeps_dtype_and_picks_pixels() {
        let x = Tensor::from_vec(vec![1, 1, 4, 1], vec![1u16, 2, 3, 4]).unwrap();
        let out = resize_nearest(&x, (1, 2), LEGACY).unwrap();
        assert_eq!(out.as_slice::<u16>().unwrap(), &[1, 3]);
        let out = resize_nearest(&x, (1, 2), HALF).unwrap();
        assert_eq!(out.as_slice::<u16>().unwrap(), &[2, 4]);
    }

    /// Each gradient kernel is the adjoint of its forward kernel:
    /// <resize(x), dy> == <x, grad(dy)>.
    #[test]
    fn gradients_are_adjoints() {
        let x = image([2, 5, 7, 3], 7);
        for s in [LEGACY, HALF, CORNERS] {
            for size in [(9, 4), (3, 11), (5, 7)] {
                let dy = image([2, size.0, size.1, 3], 11);
                let y = resize_bilinear(&x, size, s).unwrap();
                let dx = resize_bilinear_grad(&dy, &x, s).unwrap();
                assert!(
                    (dot(&y, &dy) - dot(&x, &dx)).abs() < 1e-2,
                    "bilinear {s:?} {size:?}"
                );
                let y = resize_bicubic(&x, size, s).unwrap();
                let dx = resize_bicubic_grad(&dy, &x, s).unwrap();
                assert!(
                    (dot(&y, &dy) - dot(&x, &dx)).abs() < 1e-2,
                    "bicubic {s:?} {size:?}"
                );
                let y = resize_nearest(&x, size, s).unwrap();
                let dx = resize_nearest_grad(&dy, (5, 7), s).unwrap();
                assert!(
                    (dot(&y, &dy) - dot(&x, &dx)).abs() < 1e-2,
                    "nearest {s:?} {size:?}"
                );
            }
        }
    }

    #[test]
    fn bad_sizes_are_refused() {
        let x = image([1, 2, 2, 1], 3);
        let size = Tensor::from_vec(vec![2], vec![0i32, 3]).unwrap();
        assert!(output_size(&size)
            .unwrap_err()
            .to_string()
            .contains("positive"));
        let size = Tensor::from_vec(vec![3], vec![1i32, 2, 3]).unwrap();
        assert!(output_size(&size)
            .unwrap_err()
            .to_string()
            .contains("two elements"));
        let flat = Tensor::from_vec(vec![4], vec![0f32; 4]).unwrap();
        assert!(resize_bilinear(&flat, (2, 2), LEGACY).is_err());
        let empty = Tensor::from_vec(vec![1, 0, 2, 1], Vec::<f32>::new()).unwrap();
        assert!(resize_bilinear(&empty, (2, 2), LEGACY).is_err());
        assert!(resize_bilinear(&x, (2, 2), LEGACY).is_ok());
    }
}
