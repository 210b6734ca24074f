//! The color kernels of `tf.image`: `RGBToHSV`, `HSVToRGB`,
//! `AdjustContrastv2`, `AdjustHue` and `AdjustSaturation`, with
//! TensorFlow's formulas (each kernel's formula is the one TensorFlow's CPU
//! kernel uses, which differ between the ops: `AdjustHue` works on a hue
//! sextant and the channel range, `AdjustSaturation` on HSV).
//!
//! The other color functions of `tf.image` (grayscale, YIQ, YUV,
//! brightness, gamma) are compositions built in Python, as in TensorFlow.

use ferroflow_graph::{InferContext, OpDef, OutputInfo, PartialShape};
use ferroflow_runtime::{factory, KernelFactory, OpContext};
use ferroflow_tensor::kernels::parallel::for_rows;
use ferroflow_tensor::{bail, ensure, DType, Data, Result, Tensor};
use half::{bf16, f16};

/// Registers the color ops and kernels (idempotent). None of them has a
/// registered gradient in TensorFlow.
pub(crate) fn register() {
    ferroflow_runtime::register_ops(op_defs(), kernels());
}

const FLOAT_TYPES: &[DType] = &[
    DType::Float32,
    DType::Float64,
    DType::Float16,
    DType::BFloat16,
];
const ADJUST_TYPES: &[DType] = &[DType::Float32, DType::Float16];

/// The graph-level definitions of the color ops.
pub fn op_defs() -> Vec<OpDef> {
    vec![
        OpDef::new("RGBToHSV", &["images"], |c| infer_rgb(c, FLOAT_TYPES, 1)),
        OpDef::new("HSVToRGB", &["images"], |c| infer_rgb(c, FLOAT_TYPES, 1)),
        OpDef::new("AdjustHue", &["images", "delta"], infer_adjust),
        OpDef::new("AdjustSaturation", &["images", "scale"], infer_adjust),
        OpDef::new(
            "AdjustContrastv2",
            &["images", "contrast_factor"],
            infer_contrast,
        ),
    ]
}

/// Same shape and dtype; the last dimension must be 3, and is 3 when unknown.
fn infer_rgb(ctx: &InferContext, types: &[DType], min_rank: usize) -> Result<Vec<OutputInfo>> {
    let dtype = ctx.expect_dtype(0, types)?;
    let mut shape = ctx.shape(0).clone();
    if let Some(d) = shape.dims() {
        if d.len() < min_rank {
            return Err(ctx.shape_error(format!(
                "Shape must be at least rank {min_rank} but is rank {}",
                d.len()
            )));
        }
        if let Some(Some(c)) = d.last() {
            if *c != 3 {
                return Err(ctx.shape_error(format!("Dimension must be 3 but is {c}")));
            }
        }
        let mut dims = d.to_vec();
        if let Some(last) = dims.last_mut() {
            *last = Some(3);
        }
        shape = PartialShape::from_dims(dims);
    }
    Ok(vec![OutputInfo::new(dtype, shape)])
}

/// `AdjustHue`/`AdjustSaturation`: the input's shape, of rank 3 or more (as TF's
/// shape function, the channel count is the kernel's check).
fn infer_adjust(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    infer_contrast(ctx)
}

fn infer_scalar_arg(ctx: &InferContext) -> Result<()> {
    ctx.expect_dtype(1, &[DType::Float32])?;
    ctx.expect_rank(1, 0)
}

fn infer_contrast(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    let dtype = ctx.expect_dtype(0, ADJUST_TYPES)?;
    infer_scalar_arg(ctx)?;
    if let Some(r) = ctx.shape(0).rank() {
        if r < 3 {
            return Err(ctx.shape_error(format!("Shape must be at least rank 3 but is rank {r}")));
        }
    }
    Ok(vec![OutputInfo::new(dtype, ctx.shape(0).clone())])
}

/// The float arithmetic the color formulas need, for `f32` and `f64`.
trait Real:
    Copy
    + PartialOrd
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Neg<Output = Self>
{
    fn c(v: f64) -> Self;
    fn max(self, o: Self) -> Self;
    fn min(self, o: Self) -> Self;
    fn abs(self) -> Self;
}

macro_rules! real {
    ($t:ty) => {
        impl Real for $t {
            #[inline(always)]
            fn c(v: f64) -> $t {
                v as $t
            }
            #[inline(always)]
            fn max(self, o: $t) -> $t {
                <$t>::max(self, o)
            }
            #[inline(always)]
            fn min(self, o: $t) -> $t {
                <$t>::min(self, o)
            }
            #[inline(always)]
            fn abs(self) -> $t {
                <$t>::abs(self)
            }
        }
    };
}
real!(f32);
real!(f64);

/// `RGBToHSV` of one pixel (TensorFlow's `rgb_to_hsv` functor).
#[inline]
fn rgb_to_hsv<T: Real>(r: T, g: T, b: T) -> [T; 3] {
    let zero = T::c(0.0);
    let v = r.max(g).max(b);
    let range = v - r.min(g).min(b);
    let s = if v > zero { range / v } else { zero };
    let norm = (T::c(1.0) / range) * (T::c(1.0) / T::c(6.0));
    let mut h = if r == v {
        norm * (g - b)
    } else if g == v {
        norm * (b - r) + T::c(2.0) / T::c(6.0)
    } else {
        norm * (r - g) + T::c(4.0) / T::c(6.0)
    };
    // A NaN range (NaN input) also gives hue 0, as in TensorFlow.
    if range.partial_cmp(&zero) != Some(std::cmp::Ordering::Greater) {
        h = zero;
    }
    if h < zero {
        h = h + T::c(1.0);
    }
    [h, s, v]
}

/// `HSVToRGB` of one pixel (TensorFlow's `hsv_to_rgb` functor).
#[inline]
fn hsv_to_rgb<T: Real>(h: T, s: T, v: T) -> [T; 3] {
    let (zero, one, two) = (T::c(0.0), T::c(1.0), T::c(2.0));
    let clamp = |x: T| x.max(zero).min(one);
    let dh = h * T::c(6.0);
    let dr = clamp((dh - T::c(3.0)).abs() - one);
    let dg = clamp(-(dh - two).abs() + two);
    let db = clamp(-(dh - T::c(4.0)).abs() + two);
    let one_s = -s + one;
    [
        (one_s + s * dr) * v,
        (one_s + s * dg) * v,
        (one_s + s * db) * v,
    ]
}

/// Applies `f` to every RGB triple of a float tensor whose last dimension is
/// 3, computing in `f64` for `float64` and in `f32` otherwise.
fn map_pixels(
    t: &Tensor,
    f32_fn: impl Fn([f32; 3]) -> [f32; 3] + Sync,
    f64_fn: impl Fn([f64; 3]) -> [f64; 3] + Sync,
) -> Result<Tensor> {
    let channels = t.dims().last().copied().unwrap_or(0);
    if t.rank() == 0 || channels != 3 {
        bail!(
            failed_precondition,
            "input must have 3 channels but input only has {channels} channels."
        );
    }
    fn run<T: Copy + Send + Sync + Default, C: Copy>(
        x: &[T],
        load: impl Fn(T) -> C + Sync,
        store: impl Fn(C) -> T + Sync,
        f: &(impl Fn([C; 3]) -> [C; 3] + Sync),
    ) -> Vec<T> {
        let mut out = vec![T::default(); x.len()];
        for_rows(&mut out, 3, |first, px| {
            let src = &x[first * 3..first * 3 + px.len()];
            for (o, i) in px.chunks_exact_mut(3).zip(src.chunks_exact(3)) {
                let r = f([load(i[0]), load(i[1]), load(i[2])]);
                o[0] = store(r[0]);
                o[1] = store(r[1]);
                o[2] = store(r[2]);
            }
        });
        out
    }
    let data = match t.data() {
        Data::F32(x) => Data::F32(run(x, |v| v, |v| v, &f32_fn).into()),
        Data::F64(x) => Data::F64(run(x, |v| v, |v| v, &f64_fn).into()),
        Data::F16(x) => Data::F16(run(x, f16::to_f32, f16::from_f32, &f32_fn).into()),
        Data::BF16(x) => Data::BF16(run(x, bf16::to_f32, bf16::from_f32, &f32_fn).into()),
        _ => {
            bail!(
                invalid_argument,
                "unsupported dtype {} for a color conversion",
                t.dtype()
            )
        }
    };
    Tensor::new(t.shape().clone(), data)
}

/// `RGBToHSV` of a `[..., 3]` float tensor.
pub fn rgb_to_hsv_image(t: &Tensor) -> Result<Tensor> {
    map_pixels(
        t,
        |[r, g, b]| rgb_to_hsv(r, g, b),
        |[r, g, b]| rgb_to_hsv(r, g, b),
    )
}

/// `HSVToRGB` of a `[..., 3]` float tensor.
pub fn hsv_to_rgb_image(t: &Tensor) -> Result<Tensor> {
    map_pixels(
        t,
        |[h, s, v]| hsv_to_rgb(h, s, v),
        |[h, s, v]| hsv_to_rgb(h, s, v),
    )
}

/// The hue sextant (a value in `[0, 6)`) and the channel range of a pixel,
/// as `AdjustHue` computes them.
#[inline]
fn hue_and_range(r: f32, g: f32, b: f32) -> (f32, f32, f32) {
    // (max, mid, min, sextant) by the channels' order.
    let (hi, mid, lo, sextant) = if r < g {
        if b < r {
            (g, r, b, 1)
        } else if b > g {
            (b, g, r, 3)
        } else {
            (g, b, r, 2)
        }
    } else if b < g {
        (r, g, b, 0)
    } else if b > r {
        (b, r, g, 4)
    } else {
        (r, b, g, 5)
    };
    if hi == lo {
        return (0.0, lo, hi);
    }
    let ratio = (mid - lo) / (hi - lo);
    let rising = sextant & 1 == 0;
    (
        sextant as f32 + if rising { ratio } else { 1.0 - ratio },
        lo,
        hi,
    )
}

/// The inverse of [`hue_and_range`].
#[inline]
fn rgb_from_hue_and_range(h: f32, lo: f32, hi: f32) -> [f32; 3] {
    let sextant = h as i32;
    let mut ratio = h - sextant as f32;
    if sextant & 1 != 0 {
        ratio = 1.0 - ratio;
    }
    let mid = lo + ratio * (hi - lo);
    match sextant {
        0 => [hi, mid, lo],
        1 => [mid, hi, lo],
        2 => [lo, hi, mid],
        3 => [lo, mid, hi],
        4 => [mid, lo, hi],
        _ => [hi, lo, mid],
    }
}

/// `AdjustHue`: rotates each pixel's hue by `delta` (a fraction of a turn).
pub fn adjust_hue(t: &Tensor, delta: f32) -> Result<Tensor> {
    let shift = |[r, g, b]: [f32; 3]| {
        let (mut h, lo, hi) = hue_and_range(r, g, b);
        h += delta * 6.0;
        // delta is a fraction of a turn in [-1, 1] for tf.image.adjust_hue;
        // rem_euclid also keeps a larger fed value in range.
        if !(0.0..6.0).contains(&h) {
            h = h.rem_euclid(6.0);
            if h >= 6.0 {
                h = 0.0;
            }
        }
        rgb_from_hue_and_range(h, lo, hi)
    };
    // AdjustHue takes no float64; a float64 tensor is computed in f32.
    map_pixels(t, shift, |p| shift(p.map(|v| v as f32)).map(f64::from))
}

/// `rgb_to_hsv` as `AdjustSaturation` computes it (in `f32`, its constants
/// added in double precision).
#[inline]
fn saturation_hsv(r: f32, g: f32, b: f32) -> [f32; 3] {
    let v = r.max(g.max(b));
    let range = v - r.min(g.min(b));
    let s = if v > 0.0 { range / v } else { 0.0 };
    let norm = 1.0 / (6.0 * range);
    let mut h = if r == v {
        norm * (g - b)
    } else if g == v {
        ((norm * (b - r)) as f64 + 2.0 / 6.0) as f32
    } else {
        ((norm * (r - g)) as f64 + 4.0 / 6.0) as f32
    };
    if range <= 0.0 {
        h = 0.0;
    }
    if h < 0.0 {
        h += 1.0;
    }
    [h, s, v]
}

/// `hsv_to_rgb` as `AdjustSaturation` computes it (chroma and sextant).
#[inline]
fn saturation_rgb(h: f32, s: f32, v: f32) -> [f32; 3] {
    let c = s * v;
    let m = v - c;
    let dh = h * 6.0;
    let sextant = dh as i32;
    let mut fmodu = dh;
    if fmodu <= 0.0 || fmodu >= 2.0 {
        fmodu = fmodu.rem_euclid(2.0);
        if fmodu <= 0.0 {
            fmodu += 2.0;
        }
    }
    let x = c * (1.0 - (fmodu - 1.0).abs());
    let (r, g, b) = match sextant {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        5 => (c, 0.0, x),
        _ => (0.0, 0.0, 0.0),
    };
    [r + m, g + m, b + m]
}

/// `AdjustSaturation`: scales each pixel's HSV saturation, clamped to [0, 1].
pub fn adjust_saturation(t: &Tensor, scale: f32) -> Result<Tensor> {
    let f = |[r, g, b]: [f32; 3]| {
        let [h, s, v] = saturation_hsv(r, g, b);
        saturation_rgb(h, (s * scale).clamp(0.0, 1.0), v)
    };
    map_pixels(t, f, |p| f(p.map(|v| v as f32)).map(f64::from))
}

/// Per-channel means of each image plane of `x` (`[batch, plane, channels]`
/// flattened), summed as TensorFlow's CPU kernel sums them: the plane is
/// folded in half repeatedly (the upper half added onto the lower), so the
/// rounding matches TensorFlow's.
fn plane_means(x: &[f32], batch: usize, plane: usize, channels: usize) -> Vec<f32> {
    let mut means = vec![0f32; batch * channels];
    let mut scratch = vec![0f32; plane.div_ceil(2) * channels];
    for n in 0..batch {
        let src = &x[n * plane * channels..(n + 1) * plane * channels];
        let mut remaining = plane;
        let mut first = true;
        loop {
            let right = remaining / 2;
            let left = remaining - right;
            if first {
                let (lo, hi) = (&src[..right * channels], &src[left * channels..]);
                for ((s, &a), &b) in scratch.iter_mut().zip(hi).zip(lo) {
                    *s = a + b;
                }
                if left > right {
                    scratch[right * channels..left * channels]
                        .copy_from_slice(&src[right * channels..left * channels]);
                }
                first = false;
            } else {
                let (lo, hi) = scratch.split_at_mut(left * channels);
                for (s, &b) in lo.iter_mut().zip(&hi[..right * channels]) {
                    *s += b;
                }
            }
            remaining = left;
            if remaining <= 1 {
                break;
            }
        }
        let scaling = 1.0f32 / plane as f32;
        for c in 0..channels {
            means[n * channels + c] = scratch[c] * scaling;
        }
    }
    means
}

/// `AdjustContrastv2`: `mean + factor * (x - mean)` per image and channel,
/// the mean taken over the image's height and width.
pub fn adjust_contrast(t: &Tensor, factor: f32) -> Result<Tensor> {
    let dims = t.dims();
    if dims.len() < 3 {
        bail!(
            invalid_argument,
            "input must be at least 3-D, got shape{}",
            t.shape()
        );
    }
    let channels = dims[dims.len() - 1];
    let plane = dims[dims.len() - 3] * dims[dims.len() - 2];
    let batch: usize = dims[..dims.len() - 3].iter().product();
    let x: Vec<f32>;
    let xs: &[f32] = match t.data() {
        Data::F32(v) => v,
        Data::F16(v) => {
            x = v.iter().map(|h| h.to_f32()).collect();
            &x
        }
        _ => {
            bail!(
                invalid_argument,
                "AdjustContrastv2: unsupported dtype {}",
                t.dtype()
            )
        }
    };
    if plane == 0 || channels == 0 {
        return Ok(t.clone());
    }
    let means = plane_means(xs, batch, plane, channels);
    let image = plane * channels;
    let mut out = vec![0f32; xs.len()];
    for_rows(&mut out, image, |first, imgs| {
        for (k, img) in imgs.chunks_mut(image).enumerate() {
            let n = first + k;
            let src = &xs[n * image..(n + 1) * image];
            let m = &means[n * channels..(n + 1) * channels];
            for (o, px) in img
                .chunks_exact_mut(channels)
                .zip(src.chunks_exact(channels))
            {
                for ((o, &v), &mean) in o.iter_mut().zip(px).zip(m) {
                    *o = mean + factor * (v - mean);
                }
            }
        }
    });
    let data = match t.dtype() {
        DType::Float16 => Data::F16(
            out.into_iter()
                .map(f16::from_f32)
                .collect::<Vec<_>>()
                .into(),
        ),
        _ => Data::F32(out.into()),
    };
    Tensor::new(t.shape().clone(), data)
}

fn scalar_arg(t: &Tensor, what: &str) -> Result<f32> {
    ensure!(
        t.rank() == 0,
        invalid_argument,
        "{what} must be scalar: {}",
        t.shape()
    );
    Ok(t.scalar_f64()? as f32)
}

fn kernels() -> Vec<(&'static str, KernelFactory)> {
    vec![
        (
            "RGBToHSV",
            factory(|_| {
                Ok(Box::new(|ctx: &mut OpContext<'_>| {
                    let out = rgb_to_hsv_image(ctx.input(0)?)?;
                    ctx.output(out);
                    Ok(())
                }))
            }),
        ),
        (
            "HSVToRGB",
            factory(|_| {
                Ok(Box::new(|ctx: &mut OpContext<'_>| {
                    let out = hsv_to_rgb_image(ctx.input(0)?)?;
                    ctx.output(out);
                    Ok(())
                }))
            }),
        ),
        (
            "AdjustHue",
            factory(|_| {
                Ok(Box::new(|ctx: &mut OpContext<'_>| {
                    let delta = scalar_arg(ctx.input(1)?, "delta")?;
                    let out = adjust_hue(adjust_input(ctx.input(0)?)?, delta)?;
                    ctx.output(out);
                    Ok(())
                }))
            }),
        ),
        (
            "AdjustSaturation",
            factory(|_| {
                Ok(Box::new(|ctx: &mut OpContext<'_>| {
                    let scale = scalar_arg(ctx.input(1)?, "scale")?;
                    let out = adjust_saturation(adjust_input(ctx.input(0)?)?, scale)?;
                    ctx.output(out);
                    Ok(())
                }))
            }),
        ),
        (
            "AdjustContrastv2",
            factory(|_| {
                Ok(Box::new(|ctx: &mut OpContext<'_>| {
                    let factor = scalar_arg(ctx.input(1)?, "contrast_factor")?;
                    let out = adjust_contrast(ctx.input(0)?, factor)?;
                    ctx.output(out);
                    Ok(())
                }))
            }),
        ),
    ]
}

/// The images of `AdjustHue`/`AdjustSaturation`, whose 3-channel check is
/// TF's InvalidArgument (the color-space conversions' is FailedPrecondition).
fn adjust_input(t: &Tensor) -> Result<&Tensor> {
    let channels = t.dims().last().copied().unwrap_or(0);
    ensure!(
        t.rank() > 0 && channels == 3,
        invalid_argument,
        "input must have 3 channels but instead has {channels} channels."
    );
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hsv_round_trip() {
        for &(r, g, b) in &[
            (0.2f32, 0.5, 0.9),
            (1.0, 0.0, 0.0),
            (0.3, 0.3, 0.3),
            (0.0, 0.0, 0.0),
        ] {
            let [h, s, v] = rgb_to_hsv(r, g, b);
            let back = hsv_to_rgb(h, s, v);
            for (x, y) in back.iter().zip([r, g, b]) {
                assert!((x - y).abs() < 1e-6, "{r},{g},{b} -> {back:?}");
            }
        }
    }

    #[test]
    fn hue_rotation_by_a_full_turn_is_identity() {
        let t = Tensor::from_vec(vec![2, 3], vec![0.1f32, 0.7, 0.4, 0.9, 0.2, 0.2]).unwrap();
        let out = adjust_hue(&t, 1.0).unwrap();
        for (a, b) in out
            .as_slice::<f32>()
            .unwrap()
            .iter()
            .zip(t.as_slice::<f32>().unwrap())
        {
            assert!((a - b).abs() < 1e-6);
        }
        // A third of a turn maps red to green.
        let red = Tensor::from_vec(vec![1, 3], vec![1.0f32, 0.0, 0.0]).unwrap();
        let green = adjust_hue(&red, 1.0 / 3.0).unwrap();
        assert_eq!(green.as_slice::<f32>().unwrap(), &[0.0, 1.0, 0.0]);
    }

    #[test]
    fn saturation_zero_gives_gray() {
        let t = Tensor::from_vec(vec![1, 3], vec![0.2f32, 0.6, 0.4]).unwrap();
        let out = adjust_saturation(&t, 0.0).unwrap();
        assert_eq!(out.as_slice::<f32>().unwrap(), &[0.6, 0.6, 0.6]);
    }

    #[test]
    fn contrast_mean_folding_matches_a_plain_mean() {
        let x: Vec<f32> = (0..7 * 5 * 3).map(|i| (i % 11) as f32 * 0.1).collect();
        let t = Tensor::from_vec(vec![7, 5, 3], x.clone()).unwrap();
        let out = adjust_contrast(&t, 2.0).unwrap();
        for c in 0..3 {
            let mean: f64 = x.iter().skip(c).step_by(3).map(|&v| v as f64).sum::<f64>() / 35.0;
            let got = out.as_slice::<f32>().unwrap()[c] as f64;
            let want = mean + 2.0 * (x[c] as f64 - mean);
            assert!((got - want).abs() < 1e-5, "channel {c}: {got} vs {want}");
        }
    }

    #[test]
    fn wrong_channel_count_is_refused() {
        let t = Tensor::from_vec(vec![2, 2], vec![0f32; 4]).unwrap();
        let e = rgb_to_hsv_image(&t).unwrap_err();
        assert!(e.to_string().contains("3 channels"), "{e}");
    }
}
