//! Quantized neural-network kernels (`tf.nn.quantized_*`):
//! `QuantizedConv2D`, `QuantizedAvgPool`, `QuantizedMaxPool` and
//! `QuantizedReluX`.
//!
//! Each takes quantized integers (stored as the integer type of the same
//! width, see [`crate::kernels::quantize`]) with the float range they stand
//! for, and returns integers with the range of the result. The arithmetic is
//! TensorFlow's reference CPU kernels':
//!
//! * the convolution takes `quint8` input and filter and gives `qint32`: each
//!   output is `sum((x - x_zero) * (w - w_zero))` in wrapping `int32`, where
//!   a zero point is the level that 0.0 maps to in its range (unclamped). Its
//!   window origins follow TF's im2col kernel, which centres the slack of a
//!   window that does not tile the input exactly by halving with truncation
//!   (so a stride of 4 or more can shift windows by one against `Conv2D`).
//!   Padding stands for 0.0: it adds nothing, except where the input's zero
//!   point lies above 255 — TF then fills padding with the zero point's low
//!   byte, which does add. The result's range is one level of the input
//!   times one level of the filter, times `int32`'s lowest and highest;
//! * the pools keep the input range; the average is the truncating `int32`
//!   quotient of the in-window sum by the number of in-bounds elements, the
//!   maximum ignores padding, and max pooling may also run over depth
//!   windows (then the spatial window must be 1x1 and spatial strides are
//!   ignored, as in TF);
//! * `ReluX` clamps the integers between the levels of 0.0 and `max_value`
//!   (rounded half away from zero, saturated to the type) and keeps the range.
//!
//! TensorFlow registers the convolution for `quint8` x `quint8` -> `qint32`
//! only, and the pools for `qint8` and `quint8`; for `QuantizedReluX` TF 2.21
//! registers no CPU kernel at all, and ferroflow takes the types of TF's
//! `QuantizedRelu`/`QuantizedRelu6` kernels (`quint8` and `qint32`, output
//! type equal to the input's), whose arithmetic ReluX shares.

use crate::error::{Error, Result};
use crate::kernels::conv::{max_pool, windowed_output, Padding, Pool2dParams};
use crate::kernels::parallel::for_rows;
use crate::tensor::{Element, Tensor};
use crate::DType;

/// The integer types the quantized NN kernels read.
trait Level: Element + Copy + Ord {
    const LOWEST: i64;
    const HIGHEST: i64;
    const BITS: u32;
    fn to_i32(self) -> i32;
    /// A C cast from `int32` (the value is always in range here).
    fn from_i32(v: i32) -> Self;
}

macro_rules! level {
    ($t:ty, $bits:expr) => {
        impl Level for $t {
            const LOWEST: i64 = <$t>::MIN as i64;
            const HIGHEST: i64 = <$t>::MAX as i64;
            const BITS: u32 = $bits;
            #[inline(always)]
            fn to_i32(self) -> i32 {
                self as i32
            }
            #[inline(always)]
            fn from_i32(v: i32) -> Self {
                v as $t
            }
        }
    };
}

level!(u8, 8);
level!(i8, 8);
level!(i32, 32);

/// `static_cast<int64_t>(double)` as x86 computes it: truncation, and
/// `i64::MIN` for NaN and out-of-range values.
fn cvtt64(v: f64) -> i64 {
    if (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&v) {
        v as i64
    } else {
        i64::MIN
    }
}

/// The level `value` maps to in `[min, max]` over `Q`'s grid, not clamped
/// (TensorFlow's `FloatToQuantizedUnclamped`): `Q`'s lowest level for an
/// empty range; the scale and rounding in `double`.
fn level_unclamped<Q: Level>(value: f32, min: f32, max: f32) -> i64 {
    if min == max {
        return Q::LOWEST;
    }
    let steps = (1i64 << Q::BITS) as f64;
    let range = f64::from(max - min) * (steps / (steps - 1.0));
    let scale = steps / range;
    let q = (f64::from(value) * scale).round() - (f64::from(min) * scale).round();
    cvtt64(q).wrapping_add(Q::LOWEST)
}

/// [`level_unclamped`] saturated to `Q` (TensorFlow's `FloatToQuantized`).
fn level_of<Q: Level>(value: f32, min: f32, max: f32) -> Q {
    let q = level_unclamped::<Q>(value, min, max).clamp(Q::LOWEST, Q::HIGHEST);
    Q::from_i32(q as i32)
}

/// The float width of one level of `[min, max]` over `bits` bits.
fn one_level(min: f32, max: f32, bits: u32) -> f32 {
    (max - min) / (((1i64 << bits) - 1) as f32)
}

/// The range of a `qint32` product of a `quint8` and a `quint8` range
/// (TensorFlow's `QuantizationRangeForMultiplication`).
pub fn product_range(in_min: f32, in_max: f32, f_min: f32, f_max: f32) -> (f32, f32) {
    let level = one_level(in_min, in_max, 8) * one_level(f_min, f_max, 8);
    (
        level * (i32::MIN as f32),
        level * (i64::from(i32::MAX) as f32),
    )
}

/// The float in a rank-0 range tensor `what` of `op`.
fn scalar(op: &str, t: &Tensor, what: &str) -> Result<f32> {
    if t.rank() != 0 {
        return Err(Error::invalid_argument(format!(
            "{op}: {what} must be a scalar (rank 0), got shape {}",
            t.shape()
        )));
    }
    let v = t.as_slice::<f32>().map_err(|_| {
        Error::invalid_argument(format!("{op}: {what} must be float32, got {}", t.dtype()))
    })?;
    Ok(v[0])
}

/// The integers of quantized tensor `what`, which must hold dtype `t`.
fn levels<'a, Q: Level>(op: &str, x: &'a Tensor, what: &str, t: DType) -> Result<&'a [Q]> {
    x.as_slice::<Q>().map_err(|_| {
        Error::invalid_argument(format!(
            "{op}: {what} must be {t} (stored as {}), got {}",
            Q::DTYPE,
            x.dtype()
        ))
    })
}

/// `QuantizedConv2D`'s attributes: one stride for rows and columns, SAME or
/// VALID padding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QuantizedConvParams {
    pub stride: usize,
    pub padding: Padding,
}

impl QuantizedConvParams {
    /// Checks `strides`, `dilations` and `padding` as TensorFlow's kernel
    /// does at construction (errors are `InvalidArgument`).
    pub fn parse(strides: &[i64], dilations: &[i64], padding: &str) -> Result<QuantizedConvParams> {
        const OP: &str = "QuantizedConv2D";
        if strides.len() != 4 {
            return Err(Error::invalid_argument(format!(
                "{OP}: strides must have 4 values (NHWC), got {strides:?}"
            )));
        }
        if strides[1] != strides[2] {
            return Err(Error::invalid_argument(format!(
                "{OP} supports only equal row and column strides, got strides {strides:?}"
            )));
        }
        if strides[0] != 1 || strides[3] != 1 {
            return Err(Error::invalid_argument(format!(
                "{OP} does not support strides in the batch and depth dimensions, got strides {strides:?}"
            )));
        }
        if strides[1] <= 0 {
            return Err(Error::invalid_argument(format!(
                "{OP}: strides must be positive, got {strides:?}"
            )));
        }
        if dilations.len() != 4 {
            return Err(Error::invalid_argument(format!(
                "{OP}: dilations must have 4 values (NHWC), got {dilations:?}"
            )));
        }
        if dilations[1] != 1 || dilations[2] != 1 {
            return Err(Error::invalid_argument(format!(
                "{OP} supports only a dilation rate of 1 in the row and column dimensions, got dilations {dilations:?}"
            )));
        }
        if dilations[0] != 1 || dilations[3] != 1 {
            return Err(Error::invalid_argument(format!(
                "{OP} does not support dilations in the batch and depth dimensions, got dilations {dilations:?}"
            )));
        }
        let padding = match padding {
            "SAME" => Padding::Same,
            "VALID" => Padding::Valid,
            other => {
                return Err(Error::invalid_argument(format!(
                "Attr 'padding' of '{OP}' Op passed string '{other}' not in: \"SAME\", \"VALID\"."
            )))
            }
        };
        Ok(QuantizedConvParams {
            stride: strides[1] as usize,
            padding,
        })
    }
}

/// The first input row (column) a window of TF's quantized conv kernels
/// starts before output 0: the slack of the windows over the input, halved
/// with truncation toward zero (VALID rounds up first).
fn window_origin(out: usize, window: usize, input: usize, stride: usize, padding: Padding) -> i64 {
    let slack = (out as i64 - 1) * stride as i64 + window as i64 - input as i64;
    let slack = if padding == Padding::Valid {
        slack + 1
    } else {
        slack
    };
    slack / 2
}

/// `QuantizedConv2D`: NHWC `input` (`tin`) convolved with HWIO `filter`
/// (`tfilter`) into `out` (see the module docs); `ranges` are min_input,
/// max_input, min_filter, max_filter. Returns the output and its range.
pub fn quantized_conv2d(
    input: &Tensor,
    filter: &Tensor,
    ranges: [&Tensor; 4],
    p: &QuantizedConvParams,
    (tin, tfilter, out): (DType, DType, DType),
) -> Result<(Tensor, f32, f32)> {
    const OP: &str = "QuantizedConv2D";
    if (tin, tfilter, out) != (DType::QUInt8, DType::QUInt8, DType::QInt32) {
        return Err(Error::invalid_argument(format!(
            "{OP} has no CPU kernel for Tinput={tin}, Tfilter={tfilter}, out_type={out} \
             (TensorFlow's computes quint8 input and filter into qint32)"
        )));
    }
    if input.dims().contains(&0) {
        return Err(Error::invalid_argument(format!(
            "{OP}: input has an empty dimension (shape {}); TensorFlow's kernel does not accept one",
            input.shape()
        )));
    }
    for (t, what) in [(input, "input"), (filter, "filter")] {
        if t.rank() != 4 {
            return Err(Error::invalid_argument(format!(
                "{OP}: {what} must be rank 4 but is rank {} (shape {})",
                t.rank(),
                t.shape()
            )));
        }
    }
    let names = ["min_input", "max_input", "min_filter", "max_filter"];
    let mut r = [0f32; 4];
    for i in 0..4 {
        r[i] = scalar(OP, ranges[i], names[i])?;
    }
    let [n, h, w, c] = <[usize; 4]>::try_from(input.dims()).expect("rank 4");
    let [kh, kw, kc, co] = <[usize; 4]>::try_from(filter.dims()).expect("rank 4");
    if kc != c {
        return Err(Error::invalid_argument(format!(
            "{OP}: input and filter must have the same depth: {c} vs {kc} (input {}, filter {})",
            input.shape(),
            filter.shape()
        )));
    }
    if kh == 0 || kw == 0 || co == 0 {
        return Err(Error::invalid_argument(format!(
            "{OP}: filter has an empty dimension (shape {})",
            filter.shape()
        )));
    }
    let s = p.stride;
    let size = |input: usize, k: usize, dim: usize| {
        windowed_output(input, k, s, 1, p.padding, dim)
            .ok()
            .filter(|&(o, _)| o > 0)
            .map(|(o, _)| o)
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "{OP}: the {k}-wide filter does not fit the input's {input} {} with VALID padding",
                    if dim == 0 { "rows" } else { "columns" }
                ))
            })
    };
    let (oh, ow) = (size(h, kh, 0)?, size(w, kw, 1)?);
    let dims = [n, oh, ow, co];
    Tensor::check_allocation(OP, DType::Int32, &dims)?;
    let x = levels::<u8>(OP, input, "input", tin)?;
    let f = levels::<u8>(OP, filter, "filter", tfilter)?;
    let x_zero = level_unclamped::<u8>(0.0, r[0], r[1]) as i32;
    let f_zero = level_unclamped::<u8>(0.0, r[2], r[3]) as i32;
    // What a padded element adds per filter tap: TF's reference kernel (used
    // when the input's zero point is negative) adds nothing; its im2col
    // kernel pads with the zero point's low byte.
    let pad = (x_zero >= 0).then(|| (x_zero & 0xff).wrapping_sub(x_zero));
    let wf: Vec<i32> = f
        .iter()
        .map(|&v| i32::from(v).wrapping_sub(f_zero))
        .collect();
    let top = window_origin(oh, kh, h, s, p.padding);
    let left = window_origin(ow, kw, w, s, p.padding);
    let mut y = vec![0i32; n * oh * ow * co];
    // One row per output pixel; blocks of pixels run in parallel.
    for_rows(&mut y, co, |first, rows| {
        let mut xv = vec![0i32; c];
        for (k, acc) in rows.chunks_exact_mut(co).enumerate() {
            let pixel = first + k;
            let (b, oy, ox) = (pixel / (oh * ow), pixel / ow % oh, pixel % ow);
            for ky in 0..kh {
                let iy = (oy * s) as i64 - top + ky as i64;
                for kx in 0..kw {
                    let ix = (ox * s) as i64 - left + kx as i64;
                    let inside = (0..h as i64).contains(&iy) && (0..w as i64).contains(&ix);
                    if inside {
                        let i = ((b * h + iy as usize) * w + ix as usize) * c;
                        for (d, &v) in xv.iter_mut().zip(&x[i..i + c]) {
                            *d = i32::from(v).wrapping_sub(x_zero);
                        }
                    } else if let Some(v) = pad {
                        xv.fill(v);
                    } else {
                        continue;
                    }
                    let taps = &wf[(ky * kw + kx) * c * co..][..c * co];
                    for (&xi, row) in xv.iter().zip(taps.chunks_exact(co)) {
                        for (a, &wv) in acc.iter_mut().zip(row) {
                            *a = a.wrapping_add(xi.wrapping_mul(wv));
                        }
                    }
                }
            }
        }
    });
    let (lo, hi) = product_range(r[0], r[1], r[2], r[3]);
    Ok((Tensor::from_vec(dims, y)?, lo, hi))
}

/// Which quantized pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuantizedPool {
    Avg,
    Max,
}

impl QuantizedPool {
    fn op(self) -> &'static str {
        match self {
            QuantizedPool::Avg => "QuantizedAvgPool",
            QuantizedPool::Max => "QuantizedMaxPool",
        }
    }
}

/// Checks a max pool over depth windows (`ksize[3] > 1`) on NHWC `dims`;
/// returns the depth window.
fn depth_window(p: &Pool2dParams, dims: &[usize]) -> Result<usize> {
    const OP: &str = "QuantizedMaxPool";
    let (k, s) = (p.ksize, p.strides);
    if dims.len() != 4 {
        return Err(Error::invalid_argument(format!(
            "{OP}: input must be 4-dimensional, got shape {dims:?}"
        )));
    }
    if k[0] != 1 || s[0] != 1 {
        return Err(Error::unimplemented(
            "Pooling is not yet supported on the batch dimension.",
        ));
    }
    if k[1] != 1 || k[2] != 1 {
        return Err(Error::unimplemented(format!(
            "{OP} pools either over depth or over rows and columns, not both (ksize {k:?})"
        )));
    }
    if !dims[3].is_multiple_of(k[3]) {
        return Err(Error::unimplemented(format!(
            "{OP}: the depth window {} must divide the input depth {}",
            k[3], dims[3]
        )));
    }
    if s[3] != k[3] {
        return Err(Error::unimplemented(format!(
            "{OP}: a depth pool's depth stride must equal its depth window, got ksize {k:?} strides {s:?}"
        )));
    }
    Ok(k[3])
}

/// The output shape of a quantized pool of NHWC `dims` (errors as the kernel's).
pub fn quantized_pool_shape(
    pool: QuantizedPool,
    p: &Pool2dParams,
    dims: &[usize],
) -> Result<[usize; 4]> {
    if pool == QuantizedPool::Max && p.ksize[3] != 1 {
        let k = depth_window(p, dims)?;
        return Ok([dims[0], dims[1], dims[2], dims[3] / k]);
    }
    if pool == QuantizedPool::Avg && (p.ksize[3] != 1 || p.strides[3] != 1) {
        return Err(Error::unimplemented(format!(
            "QuantizedAvgPool pools over rows and columns only, got ksize {:?} strides {:?}",
            p.ksize, p.strides
        )));
    }
    let g = p.geom(pool.op(), dims)?;
    Ok([g.n, g.oh, g.ow, g.c])
}

/// `QuantizedAvgPool` / `QuantizedMaxPool` of an NHWC `input` of dtype `t`
/// (`qint8` or `quint8`) over `[min_input, max_input]`, which is also the
/// output's range.
pub fn quantized_pool(
    pool: QuantizedPool,
    input: &Tensor,
    min_input: &Tensor,
    max_input: &Tensor,
    p: &Pool2dParams,
    t: DType,
) -> Result<(Tensor, f32, f32)> {
    let op = pool.op();
    let lo = scalar(op, min_input, "min_input")?;
    let hi = scalar(op, max_input, "max_input")?;
    let y = match t {
        DType::QUInt8 => pool_typed::<u8>(pool, input, p, t)?,
        DType::QInt8 => pool_typed::<i8>(pool, input, p, t)?,
        _ => {
            return Err(Error::invalid_argument(format!(
                "{op} has no CPU kernel for T={t} (TensorFlow's takes qint8 and quint8)"
            )))
        }
    };
    Ok((y, lo, hi))
}

fn pool_typed<Q: Level>(
    pool: QuantizedPool,
    input: &Tensor,
    p: &Pool2dParams,
    t: DType,
) -> Result<Tensor> {
    let op = pool.op();
    let dims = input.dims();
    let out = quantized_pool_shape(pool, p, dims)?;
    let x = levels::<Q>(op, input, "input", t)?;
    if pool == QuantizedPool::Max && p.ksize[3] != 1 {
        let k = p.ksize[3];
        let y = x
            .chunks_exact(k)
            .map(|g| *g.iter().max().expect("depth window is not empty"))
            .collect();
        return Tensor::from_vec(out, y);
    }
    if pool == QuantizedPool::Max {
        // MaxPool's kernel computes on the storage integers; padding never wins.
        return max_pool(input, p);
    }
    let g = p.geom(op, dims)?;
    let mut y = Vec::with_capacity(out.iter().product());
    let mut sum = vec![0i32; g.c];
    for b in 0..g.n {
        for oy in 0..g.oh {
            let y0 = (oy * g.sh) as i64 - g.pt as i64;
            let ys = y0.max(0) as usize..((y0 + g.kh as i64).max(0) as usize).min(g.h);
            for ox in 0..g.ow {
                let x0 = (ox * g.sw) as i64 - g.pl as i64;
                let xs = x0.max(0) as usize..((x0 + g.kw as i64).max(0) as usize).min(g.w);
                sum.fill(0);
                for iy in ys.clone() {
                    for ix in xs.clone() {
                        let i = ((b * g.h + iy) * g.w + ix) * g.c;
                        for (s, &v) in sum.iter_mut().zip(&x[i..i + g.c]) {
                            *s += v.to_i32();
                        }
                    }
                }
                // Every window holds at least one input element.
                let count = (ys.len() * xs.len()).max(1) as i32;
                y.extend(sum.iter().map(|&s| {
                    let v = (s / count).clamp(Q::LOWEST as i32, Q::HIGHEST as i32);
                    Q::from_i32(v)
                }));
            }
        }
    }
    Tensor::from_vec(out, y)
}

/// `QuantizedReluX` of `features` (dtype `t`, `quint8` or `qint32`, output
/// type `out`, which must be the same) over `[min_features, max_features]`:
/// the integers clamped to the levels of 0.0 and `max_value`. Returns the
/// output and its range (the input's).
pub fn quantized_relu_x(
    features: &Tensor,
    max_value: &Tensor,
    min_features: &Tensor,
    max_features: &Tensor,
    t: DType,
    out: DType,
) -> Result<(Tensor, f32, f32)> {
    const OP: &str = "QuantizedReluX";
    let cap = scalar(OP, max_value, "max_value")?;
    let lo = scalar(OP, min_features, "min_features")?;
    let hi = scalar(OP, max_features, "max_features")?;
    if t != out {
        return Err(Error::invalid_argument(format!(
            "{OP} has no CPU kernel for Tinput={t}, out_type={out} (the output type must be the input's)"
        )));
    }
    fn go<Q: Level>(x: &Tensor, t: DType, cap: f32, lo: f32, hi: f32) -> Result<Tensor> {
        let v = levels::<Q>(OP, x, "features", t)?;
        let floor = level_of::<Q>(0.0, lo, hi);
        let ceil = level_of::<Q>(cap, lo, hi);
        // max(x, floor) then min(.., ceil): the cap wins when the two cross.
        let y = v.iter().map(|&q| q.max(floor).min(ceil)).collect();
        Tensor::from_vec(x.shape().clone(), y)
    }
    let y = match t {
        DType::QUInt8 => go::<u8>(features, t, cap, lo, hi)?,
        DType::QInt32 => go::<i32>(features, t, cap, lo, hi)?,
        _ => {
            return Err(Error::invalid_argument(format!(
                "{OP} has no CPU kernel for Tinput={t} (ferroflow's takes quint8 and qint32, as \
                 TensorFlow's QuantizedRelu and QuantizedRelu6 kernels do)"
            )))
        }
    };
    Ok((y, lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q8(dims: &[usize], v: Vec<u8>) -> Tensor {
        Tensor::from_vec(dims.to_vec(), v).unwrap()
    }

    fn f(v: f32) -> Tensor {
        Tensor::scalar(v)
    }

    const TYPES: (DType, DType, DType) = (DType::QUInt8, DType::QUInt8, DType::QInt32);

    #[test]
    fn levels_of_zero() {
        // [0, 6]: zero is level 0; [-1, 1]: halfway, rounded up; empty: lowest.
        assert_eq!(level_unclamped::<u8>(0.0, 0.0, 6.0), 0);
        assert_eq!(level_unclamped::<u8>(0.0, -1.0, 1.0), 128);
        assert_eq!(level_unclamped::<u8>(0.0, 2.0, 2.0), 0);
        assert_eq!(level_unclamped::<i8>(0.0, 2.0, 2.0), -128);
        // Zero below the range gives a negative, unclamped level.
        assert_eq!(level_unclamped::<u8>(0.0, 1.0, 3.0), -128);
        assert_eq!(level_of::<u8>(0.0, 1.0, 3.0), 0);
        assert_eq!(level_of::<u8>(6.0, 0.0, 6.0), 255);
        assert_eq!(level_of::<i32>(0.0, -1.0, 1.0), 0);
    }

    #[test]
    fn conv_matches_a_direct_sum() {
        // [0, 255/100]: zero point 0; filter [-1, 1]: zero point 128.
        let x = q8(&[1, 3, 3, 1], (1..=9).collect());
        let w = q8(&[2, 2, 1, 1], vec![129, 130, 127, 128]);
        let p = QuantizedConvParams::parse(&[1, 1, 1, 1], &[1, 1, 1, 1], "VALID").unwrap();
        let (y, lo, hi) =
            quantized_conv2d(&x, &w, [&f(0.0), &f(2.55), &f(-1.0), &f(1.0)], &p, TYPES).unwrap();
        // Taps (1, 2, -1, 0) over each 2x2 window.
        let want: Vec<i32> = [(1, 2, 4, 5), (2, 3, 5, 6), (4, 5, 7, 8), (5, 6, 8, 9)]
            .iter()
            .map(|&(a, b, c, _)| a + 2 * b - c)
            .collect();
        assert_eq!(y.dims(), &[1, 2, 2, 1]);
        assert_eq!(y.as_slice::<i32>().unwrap(), &want[..]);
        let level = (2.55f32 / 255.0) * (2.0f32 / 255.0);
        assert_eq!((lo, hi), (level * -2147483648.0, level * 2147483648.0));
    }

    #[test]
    fn conv_padding_adds_nothing_unless_zero_point_is_above_the_grid() {
        let x = q8(&[1, 1, 1, 1], vec![10]);
        let w = q8(&[3, 3, 1, 1], vec![1; 9]);
        let p = QuantizedConvParams::parse(&[1, 1, 1, 1], &[1, 1, 1, 1], "SAME").unwrap();
        let run = |lo: f32, hi: f32| {
            let r = [&f(lo), &f(hi), &f(0.0), &f(1.0)];
            let (y, _, _) = quantized_conv2d(&x, &w, r, &p, TYPES).unwrap();
            y.as_slice::<i32>().unwrap()[0]
        };
        // Zero point 0: only the centre tap counts.
        assert_eq!(run(0.0, 1.0), 10);
        // Zero point -128 (0.0 below the range): padding adds nothing.
        assert_eq!(run(1.0, 3.0), 10 + 128);
        // Zero point 425 (above): padding holds 425 & 0xff = 169 -> 169 - 425 per tap.
        let z = level_unclamped::<u8>(0.0, -5.0, -2.0) as i32;
        assert_eq!(z, 425);
        assert_eq!(run(-5.0, -2.0), (10 - z) + 8 * ((z & 0xff) - z));
    }

    #[test]
    fn large_conv_split_across_threads_matches_a_direct_sum() {
        // 2 x 48 x 48 x 16 outputs (past the parallel threshold), SAME, stride 1.
        let (n, h, w, c, k, co) = (2, 48, 48, 3, 3, 16);
        let xs: Vec<u8> = (0..n * h * w * c).map(|i| (i * 37 % 251) as u8).collect();
        let ws: Vec<u8> = (0..k * k * c * co).map(|i| (i * 11 % 256) as u8).collect();
        let (x, filt) = (
            q8(&[n, h, w, c], xs.clone()),
            q8(&[k, k, c, co], ws.clone()),
        );
        assert!(n * h * w * co > crate::kernels::parallel::PARALLEL_THRESHOLD);
        let p = QuantizedConvParams::parse(&[1; 4], &[1; 4], "SAME").unwrap();
        let r = [&f(-1.0), &f(2.0), &f(-0.5), &f(0.5)];
        let (y, _, _) = quantized_conv2d(&x, &filt, r, &p, TYPES).unwrap();
        let (xz, wz) = (85i32, 128i32);
        assert_eq!(level_unclamped::<u8>(0.0, -1.0, 2.0), i64::from(xz));
        assert_eq!(level_unclamped::<u8>(0.0, -0.5, 0.5), i64::from(wz));
        let mut want = vec![0i32; n * h * w * co];
        for b in 0..n {
            for oy in 0..h {
                for ox in 0..w {
                    for (ky, kx) in (0..k).flat_map(|a| (0..k).map(move |b| (a, b))) {
                        let (iy, ix) = (oy + ky, ox + kx);
                        if iy < 1 || ix < 1 || iy > h || ix > w {
                            continue;
                        }
                        for ci in 0..c {
                            let xv = i32::from(xs[((b * h + iy - 1) * w + ix - 1) * c + ci]) - xz;
                            for o in 0..co {
                                let wv = i32::from(ws[((ky * k + kx) * c + ci) * co + o]) - wz;
                                want[((b * h + oy) * w + ox) * co + o] += xv * wv;
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(y.as_slice::<i32>().unwrap(), &want[..]);
    }

    #[test]
    fn conv_rejects_bad_arguments() {
        let p = |s: &[i64], d: &[i64], pad: &str| QuantizedConvParams::parse(s, d, pad);
        assert!(p(&[1, 2, 1, 1], &[1; 4], "SAME").is_err());
        assert!(p(&[2, 1, 1, 1], &[1; 4], "SAME").is_err());
        assert!(p(&[1, 1, 1, 1], &[1, 2, 2, 1], "SAME").is_err());
        assert!(p(&[1, 1, 1, 1], &[1; 4], "EXPLICIT").is_err());
        let ok = p(&[1; 4], &[1; 4], "VALID").unwrap();
        let x = q8(&[1, 2, 2, 1], vec![0; 4]);
        let r = [&f(0.0), &f(1.0), &f(0.0), &f(1.0)];
        let big = q8(&[3, 3, 1, 1], vec![0; 9]);
        let e = quantized_conv2d(&x, &big, r, &ok, TYPES).unwrap_err();
        assert!(e.message().contains("QuantizedConv2D"), "{}", e.message());
        let deep = q8(&[1, 1, 2, 1], vec![0; 2]);
        assert!(quantized_conv2d(&x, &deep, r, &ok, TYPES).is_err());
        let types = (DType::QInt8, DType::QInt8, DType::QInt32);
        assert!(quantized_conv2d(&x, &x, r, &ok, types).is_err());
        let vec_min = Tensor::from_vec(vec![2], vec![0f32, 1.0]).unwrap();
        let e = quantized_conv2d(&x, &x, [&vec_min, r[1], r[2], r[3]], &ok, TYPES).unwrap_err();
        assert!(e.message().contains("min_input"), "{}", e.message());
    }

    #[test]
    fn pools_truncate_toward_zero_and_ignore_padding() {
        let x = Tensor::from_vec(vec![1, 2, 2, 1], vec![-3i8, -4, 5, 1]).unwrap();
        let p = Pool2dParams::parse(
            "QuantizedAvgPool",
            &[1, 2, 2, 1],
            &[1, 2, 2, 1],
            "SAME",
            &[],
        )
        .unwrap();
        let (y, lo, hi) =
            quantized_pool(QuantizedPool::Avg, &x, &f(-1.0), &f(2.0), &p, DType::QInt8).unwrap();
        assert_eq!(y.as_slice::<i8>().unwrap(), &[0]); // -1 / 4 -> 0
        assert_eq!((lo, hi), (-1.0, 2.0));
        let (y, _, _) =
            quantized_pool(QuantizedPool::Max, &x, &f(-1.0), &f(2.0), &p, DType::QInt8).unwrap();
        assert_eq!(y.as_slice::<i8>().unwrap(), &[5]);
        let depth = Pool2dParams::parse(
            "QuantizedMaxPool",
            &[1, 1, 1, 2],
            &[1, 1, 1, 2],
            "VALID",
            &[],
        )
        .unwrap();
        let x = q8(&[1, 1, 2, 4], vec![1, 9, 4, 3, 0, 0, 7, 8]);
        let (y, _, _) = quantized_pool(
            QuantizedPool::Max,
            &x,
            &f(0.0),
            &f(1.0),
            &depth,
            DType::QUInt8,
        )
        .unwrap();
        assert_eq!(y.dims(), &[1, 1, 2, 2]);
        assert_eq!(y.as_slice::<u8>().unwrap(), &[9, 4, 0, 8]);
        assert!(quantized_pool(
            QuantizedPool::Avg,
            &x,
            &f(0.0),
            &f(1.0),
            &depth,
            DType::QUInt8
        )
        .is_err());
        assert!(
            quantized_pool(QuantizedPool::Max, &x, &f(0.0), &f(1.0), &p, DType::QInt32).is_err()
        );
    }

    #[test]
    fn relu_x_clamps_between_zero_and_cap_levels() {
        let x = q8(&[6], vec![0, 40, 43, 100, 200, 255]);
        // [-1, 5]: 42.5 levels per unit; 0.0 at level 43 (42.5 rounded away
        // from zero), 3.0 at 128 (127.5 rounded) + 43.
        let (y, lo, hi) =
            quantized_relu_x(&x, &f(3.0), &f(-1.0), &f(5.0), DType::QUInt8, DType::QUInt8).unwrap();
        assert_eq!(y.as_slice::<u8>().unwrap(), &[43, 43, 43, 100, 171, 171]);
        assert_eq!((lo, hi), (-1.0, 5.0));
        assert!(
            quantized_relu_x(&x, &f(3.0), &f(-1.0), &f(5.0), DType::QUInt8, DType::QInt32).is_err()
        );
    }
}
