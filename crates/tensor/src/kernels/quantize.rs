//! Quantization kernels (`tf.quantization`): `QuantizeV2`, `Dequantize`,
//! `QuantizeAndDequantizeV2/V3/V4` with V4's gradient, and
//! `QuantizedConcat`.
//!
//! Quantized tensors (`qint8`, `quint8`, `qint16`, `quint16`, `qint32`) are
//! stored as the integer type of the same width ([`DType::storage`]); the
//! graph carries the quantized dtype. The arithmetic follows TensorFlow's
//! reference CPU kernels step by step, in `f32` where they use `float` and in
//! `f64` where they use `double`, so results are bit-identical to them:
//!
//! * float-to-integer conversions truncate, and give `i32::MIN` for values
//!   out of `i32`'s range (x86's `cvttss2si`, which the C++ casts compile
//!   to), then wrap to the narrower type as a C cast does. NaN (a zero-width
//!   range with `ensure_minimum_range=0`) gives the lowest level of `qint8`
//!   and `qint16` and 0 of the other types, as TF's vectorized conversion
//!   does (its scalar loop over the last few elements gives 0 there);
//! * `min`/`max` and clamps take the first operand when a comparison with
//!   NaN is false (`std::min`/`std::max` and Eigen's `cwiseMin`/`cwiseMax`);
//! * denormal results are flushed to zero by the runtime (FTZ/DAZ), as in
//!   TF's CPU threads, which matters for degenerate `SCALED` ranges.
//!
//! TensorFlow's oneDNN build replaces two cases by oneDNN kernels with other
//! numerics (`quint8` in `MIN_FIRST` mode rounds half to even; `qint8`
//! `SCALED` with `HALF_TO_EVEN` picks a symmetric range); ferroflow gives the
//! reference kernels' values, which TF gives with `TF_ENABLE_ONEDNN_OPTS=0`.

use crate::error::{Error, Result};
use crate::tensor::{Element, Tensor};
use crate::DType;
use half::bf16;

/// An integer type that stores a quantized dtype.
pub trait Quantized: Element + Copy {
    /// `std::numeric_limits<T>::lowest()`.
    const LOWEST: i64;
    /// `std::numeric_limits<T>::max()`.
    const HIGHEST: i64;
    /// Width in bits.
    const BITS: u32;
    /// A C conversion from `int32` (wraps).
    fn from_i32(v: i32) -> Self;
    /// The conversion of a rounded float as TensorFlow's quantize kernels
    /// make it: truncation; NaN gives the lowest level of `qint8`/`qint16`
    /// (TF's vectorized conversion saturates the `int32` it makes of NaN)
    /// and 0 of the others; `2^31` wraps to `i32::MIN` in `qint32`.
    fn from_rounded(v: f32) -> Self;
    fn to_i64(self) -> i64;
}

macro_rules! quantized {
    ($t:ty, $bits:expr, $nan:expr) => {
        impl Quantized for $t {
            const LOWEST: i64 = <$t>::MIN as i64;
            const HIGHEST: i64 = <$t>::MAX as i64;
            const BITS: u32 = $bits;
            #[inline(always)]
            fn from_i32(v: i32) -> Self {
                v as $t
            }
            #[inline(always)]
            fn from_rounded(v: f32) -> Self {
                if v.is_nan() {
                    $nan
                } else {
                    cvtt(v) as $t
                }
            }
            #[inline(always)]
            fn to_i64(self) -> i64 {
                self as i64
            }
        }
    };
}

quantized!(i8, 8, i8::MIN);
quantized!(u8, 8, 0);
quantized!(i16, 16, i16::MIN);
quantized!(u16, 16, 0);
quantized!(i32, 32, 0);

/// Runs `$body` with `$q` the storage type of the quantized dtype `$t`;
/// `$other` for any other dtype.
macro_rules! with_quantized {
    ($t:expr, $q:ident => $body:expr, $other:expr) => {
        match $t {
            DType::QInt8 => {
                type $q = i8;
                $body
            }
            DType::QUInt8 => {
                type $q = u8;
                $body
            }
            DType::QInt16 => {
                type $q = i16;
                $body
            }
            DType::QUInt16 => {
                type $q = u16;
                $body
            }
            DType::QInt32 => {
                type $q = i32;
                $body
            }
            _ => $other,
        }
    };
}

/// The float bounds TensorFlow clamps to before converting to `int32`
/// (`-2^31`, and the largest float below `2^31`).
const I32_LOWEST_F32: f32 = -2_147_483_648.0;
const I32_HIGHEST_F32: f32 = 2_147_483_520.0;

/// `std::min(a, b)`: `b` only when `b < a`.
#[inline(always)]
fn std_min<F: PartialOrd>(a: F, b: F) -> F {
    if b < a {
        b
    } else {
        a
    }
}

/// `std::max(a, b)`: `b` only when `a < b`.
#[inline(always)]
fn std_max<F: PartialOrd>(a: F, b: F) -> F {
    if a < b {
        b
    } else {
        a
    }
}

/// `x.cwiseMin(hi).cwiseMax(lo)`.
#[inline(always)]
fn clamp<F: PartialOrd>(x: F, lo: F, hi: F) -> F {
    std_max(std_min(x, hi), lo)
}

/// `static_cast<int32>(float)` as x86 computes it: truncation, `i32::MIN`
/// for NaN and out-of-range values.
#[inline(always)]
fn cvtt(v: f32) -> i32 {
    if (-2147483648.0..2147483648.0).contains(&v) {
        v as i32
    } else {
        i32::MIN
    }
}

/// The `[outer, depth, inner]` view of a tensor around `axis` (`-1`: one
/// slice of everything).
fn slices(dims: &[usize], axis: i64) -> (usize, usize, usize) {
    if axis < 0 {
        return (1, 1, dims.iter().product());
    }
    let a = axis as usize;
    (
        dims[..a].iter().product(),
        dims[a],
        dims[a + 1..].iter().product(),
    )
}

/// Calls `f(index, slice)` for every element of a `[outer, depth, inner]` view.
fn for_each_slice(view: (usize, usize, usize), mut f: impl FnMut(usize, usize)) {
    let (outer, depth, inner) = view;
    let mut i = 0;
    for _ in 0..outer {
        for s in 0..depth {
            for _ in 0..inner {
                f(i, s);
                i += 1;
            }
        }
    }
}

fn float_values<'a>(op: &str, t: &'a Tensor, what: &str) -> Result<&'a [f32]> {
    t.as_slice::<f32>().map_err(|_| {
        Error::invalid_argument(format!("{op}: {what} must be float32, got {}", t.dtype()))
    })
}

/// The quantized input's integers, checked against the dtype `t` it must hold.
fn quantized_values<'a, Q: Quantized>(op: &str, x: &'a Tensor, t: DType) -> Result<&'a [Q]> {
    x.as_slice::<Q>().map_err(|_| {
        Error::invalid_argument(format!(
            "{op}: input must be {t} (stored as {}), got {}",
            Q::DTYPE,
            x.dtype()
        ))
    })
}

/// `QuantizeV2`'s `mode` (also `Dequantize`'s).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuantizeMode {
    MinCombined,
    MinFirst,
    Scaled,
}

impl QuantizeMode {
    pub fn parse(op: &str, s: &str) -> Result<QuantizeMode> {
        Ok(match s {
            "MIN_COMBINED" => QuantizeMode::MinCombined,
            "MIN_FIRST" => QuantizeMode::MinFirst,
            "SCALED" => QuantizeMode::Scaled,
            _ => {
                return Err(Error::invalid_argument(format!(
                    "{op}: Mode string must be 'MIN_COMBINED', 'MIN_FIRST', or 'SCALED', is '{s}'"
                )))
            }
        })
    }

    fn name(self) -> &'static str {
        match self {
            QuantizeMode::MinCombined => "MIN_COMBINED",
            QuantizeMode::MinFirst => "MIN_FIRST",
            QuantizeMode::Scaled => "SCALED",
        }
    }
}

/// `QuantizeV2`'s attrs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QuantizeV2Attrs {
    pub mode: QuantizeMode,
    /// `round_mode == "HALF_TO_EVEN"` (only with `SCALED`); else half away
    /// from zero.
    pub half_to_even: bool,
    pub narrow_range: bool,
    pub axis: i64,
    pub ensure_minimum_range: f32,
}

impl QuantizeV2Attrs {
    /// Checks `round_mode` as the kernel's constructor does.
    pub fn new(
        mode: QuantizeMode,
        round_mode: &str,
        narrow_range: bool,
        axis: i64,
        ensure_minimum_range: f32,
    ) -> Result<QuantizeV2Attrs> {
        let half_to_even = match round_mode {
            "HALF_AWAY_FROM_ZERO" => false,
            "HALF_TO_EVEN" => true,
            _ => {
                return Err(Error::invalid_argument(format!(
                    "QuantizeV2: Round mode string must be 'HALF_AWAY_FROM_ZERO' or 'HALF_TO_EVEN', is '{round_mode}'"
                )))
            }
        };
        if half_to_even && mode != QuantizeMode::Scaled {
            return Err(Error::invalid_argument(format!(
                "Round mode 'HALF_TO_EVEN' only supported for mode 'SCALED', but mode is '{}'.",
                mode.name()
            )));
        }
        Ok(QuantizeV2Attrs {
            mode,
            half_to_even,
            narrow_range,
            axis,
            ensure_minimum_range,
        })
    }
}

/// One slice's float-to-integer map of `QuantizeV2` and its output range.
#[derive(Clone, Copy, Debug)]
struct Quantizer {
    mode: QuantizeMode,
    half_to_even: bool,
    signed: bool,
    min_range: f32,
    max_range: f32,
    scale: f32,
    /// `MIN_COMBINED`: half the signed range; `MIN_FIRST`: the scaled minimum
    /// less the lowest level.
    offset: f32,
    lower: f32,
    upper: f32,
}

impl Quantizer {
    fn new<Q: Quantized>(input_min: f32, input_max: f32, a: &QuantizeV2Attrs) -> Result<Quantizer> {
        if input_max < input_min {
            return Err(Error::invalid_argument(
                "input_max_range must be larger than input_min_range.",
            ));
        }
        let (lo, hi) = (Q::LOWEST, Q::HIGHEST);
        let signed = lo < 0;
        // Ranges too close together are nudged apart.
        let mut min_range = std_min(0.0f32, input_min);
        let epsilon =
            std_max(1.0f32, std_max(input_min.abs(), input_max.abs())) * a.ensure_minimum_range;
        let mut max_range = std_max(0.0f32, std_max(input_max, min_range + epsilon));
        let mut q = Quantizer {
            mode: a.mode,
            half_to_even: a.half_to_even,
            signed,
            min_range,
            max_range,
            scale: 0.0,
            offset: 0.0,
            lower: 0.0,
            upper: 0.0,
        };
        match a.mode {
            QuantizeMode::MinCombined => {
                q.scale = ((hi as f64 - lo as f64) / f64::from(max_range - min_range)) as f32;
                q.offset = if signed {
                    ((hi as f64 - lo as f64 + 1.0) / 2.0) as f32
                } else {
                    0.0
                };
            }
            QuantizeMode::Scaled => {
                let min_out = (lo + i64::from(a.narrow_range)) as f32;
                let max_out = hi as f32;
                let from_min = if min_out * min_range > 0.0 {
                    min_out / min_range
                } else {
                    f32::MAX
                };
                let from_max = if max_out * max_range > 0.0 {
                    max_out / max_range
                } else {
                    f32::MAX
                };
                let scale = std_min(from_min, from_max);
                min_range = min_out / scale;
                max_range = max_out / scale;
                q.scale = scale;
                q.min_range = min_range;
                q.max_range = max_range;
            }
            QuantizeMode::MinFirst => {
                let steps = (1i64 << Q::BITS) as f64;
                q.scale = if max_range == min_range {
                    0.0
                } else {
                    ((steps - 1.0) / f64::from(max_range - min_range)) as f32
                };
                let min_scaled = (min_range * q.scale).round();
                q.offset = min_scaled - lo as f32;
                q.lower = std_max(lo as f32, I32_LOWEST_F32);
                q.upper = std_min(hi as f32, I32_HIGHEST_F32);
            }
        }
        Ok(q)
    }

    /// The float that converts to `x`'s level (the conversion truncates).
    #[inline(always)]
    fn apply(&self, x: f32) -> f32 {
        match self.mode {
            QuantizeMode::MinCombined => {
                let v = (clamp(x, self.min_range, self.max_range) - self.min_range) * self.scale;
                if self.signed {
                    (v - self.offset).round()
                } else {
                    v + 0.5
                }
            }
            QuantizeMode::Scaled => {
                let v = clamp(x, self.min_range, self.max_range) * self.scale;
                if self.half_to_even {
                    v.round_ties_even()
                } else {
                    v.round()
                }
            }
            QuantizeMode::MinFirst => {
                let v = (x * self.scale).round() - self.offset;
                std_min(std_max(v, self.lower), self.upper)
            }
        }
    }
}

/// Checks `axis` against `x`'s rank and returns the number of slices.
fn slice_count(op: &str, dims: &[usize], axis: i64) -> Result<usize> {
    if axis < -1 {
        return Err(Error::invalid_argument(format!(
            "{op}: axis should be at least -1, got {axis}"
        )));
    }
    if axis >= dims.len() as i64 {
        return Err(Error::invalid_argument(format!(
            "{op}: Shape must be at least rank {} but is rank {}",
            axis + 1,
            dims.len()
        )));
    }
    Ok(if axis < 0 { 1 } else { dims[axis as usize] })
}

/// `QuantizeV2`: `x` (float32) quantized into dtype `t`, with the ranges
/// actually used (`output_min`, `output_max`).
pub fn quantize_v2(
    x: &Tensor,
    min: &Tensor,
    max: &Tensor,
    t: DType,
    a: &QuantizeV2Attrs,
) -> Result<(Tensor, Tensor, Tensor)> {
    with_quantized!(
        t,
        Q => quantize_typed::<Q>(x, min, max, a),
        Err(Error::invalid_argument(format!(
            "QuantizeV2: T must be a quantized type (qint8, quint8, qint16, quint16, qint32), got {t}"
        )))
    )
}

fn quantize_typed<Q: Quantized>(
    x: &Tensor,
    min: &Tensor,
    max: &Tensor,
    a: &QuantizeV2Attrs,
) -> Result<(Tensor, Tensor, Tensor)> {
    const OP: &str = "QuantizeV2";
    let xs = float_values(OP, x, "input")?;
    let (mins, maxs) = (
        float_values(OP, min, "min_range")?,
        float_values(OP, max, "max_range")?,
    );
    let n = slice_count(OP, x.dims(), a.axis)?;
    if a.axis < 0 {
        for (v, what) in [(mins, "min_range"), (maxs, "max_range")] {
            if v.len() != 1 {
                return Err(Error::invalid_argument(format!(
                    "If axis is not specified, {what} must contain a single float element, but it contains {} elements",
                    v.len()
                )));
            }
        }
    } else if n == 1 {
        if mins.is_empty() || maxs.is_empty() {
            return Err(Error::invalid_argument(format!(
                "{OP}: min_range and max_range must have 1 element for axis {} of size 1",
                a.axis
            )));
        }
    } else {
        if a.mode == QuantizeMode::MinFirst {
            return Err(Error::unimplemented(
                "MIN_FIRST mode is not implemented for Quantize with axis != -1.",
            ));
        }
        for (v, what) in [(mins, "min_range"), (maxs, "max_range")] {
            if v.len() != n {
                return Err(Error::invalid_argument(format!(
                    "{OP}: {what} must have {n} elements (dimension {} of the input), got {}",
                    a.axis,
                    v.len()
                )));
            }
        }
    }
    let count = if n == 1 { 1 } else { n };
    let qs = (0..count)
        .map(|i| Quantizer::new::<Q>(mins[i], maxs[i], a))
        .collect::<Result<Vec<_>>>()?;
    let mut out: Vec<Q> = vec![Q::from_i32(0); xs.len()];
    let view = if n == 1 {
        slices(x.dims(), -1)
    } else {
        slices(x.dims(), a.axis)
    };
    for_each_slice(view, |i, s| out[i] = Q::from_rounded(qs[s].apply(xs[i])));
    let y = Tensor::from_vec(x.shape().clone(), out)?;
    let (lo, hi): (Vec<f32>, Vec<f32>) = qs.iter().map(|q| (q.min_range, q.max_range)).unzip();
    if n == 1 {
        Ok((y, Tensor::scalar(lo[0]), Tensor::scalar(hi[0])))
    } else {
        Ok((
            y,
            Tensor::from_vec(min.shape().clone(), lo)?,
            Tensor::from_vec(max.shape().clone(), hi)?,
        ))
    }
}

/// `Dequantize`'s attrs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DequantizeAttrs {
    pub mode: QuantizeMode,
    pub narrow_range: bool,
    pub axis: i64,
    /// float32 or bfloat16.
    pub dtype: DType,
}

impl DequantizeAttrs {
    /// Checks `dtype` and `mode` as the kernel's constructor does.
    pub fn new(
        mode: QuantizeMode,
        narrow_range: bool,
        axis: i64,
        dtype: DType,
    ) -> Result<DequantizeAttrs> {
        match dtype {
            DType::Float32 => {}
            DType::BFloat16 if mode != QuantizeMode::MinCombined => {
                return Err(Error::invalid_argument(format!(
                    "When output type is bfloat16, Mode string must be 'MIN_COMBINED', is '{}'",
                    mode.name()
                )))
            }
            DType::BFloat16 => {}
            _ => {
                return Err(Error::invalid_argument(format!(
                    "Output type must be bfloat16 or float, is '{dtype}'"
                )))
            }
        }
        Ok(DequantizeAttrs {
            mode,
            narrow_range,
            axis,
            dtype,
        })
    }
}

/// One slice's integer-to-float map of `Dequantize`.
#[derive(Clone, Copy, Debug)]
struct Dequantizer {
    mode: QuantizeMode,
    scale: f32,
    /// `MIN_COMBINED`: half the signed range; `MIN_FIRST`: the rounded
    /// minimum less the lowest level's value.
    offset: f32,
    min_range: f32,
    /// `SCALED` over the whole tensor converts through `int` (TF's
    /// `cast<int>().cast<float>()`): levels that round to 2^31 come back as
    /// -2^31.
    through_int: bool,
}

impl Dequantizer {
    fn new<Q: Quantized>(
        min_range: f32,
        max_range: f32,
        a: &DequantizeAttrs,
        whole: bool,
    ) -> Dequantizer {
        let (lo, hi) = (Q::LOWEST as f32, Q::HIGHEST as f32);
        let mut d = Dequantizer {
            mode: a.mode,
            scale: 0.0,
            offset: 0.0,
            min_range,
            through_int: false,
        };
        match a.mode {
            QuantizeMode::MinCombined => {
                d.offset = if Q::LOWEST < 0 {
                    (hi - lo + 1.0) / 2.0
                } else {
                    0.0
                };
                d.scale = (max_range - min_range) / (hi - lo);
            }
            QuantizeMode::Scaled => {
                let min_out = (Q::LOWEST + i64::from(a.narrow_range)) as f32;
                d.scale = if Q::LOWEST == 0 {
                    max_range / hi
                } else {
                    std_max(min_range / min_out, max_range / hi)
                };
                d.through_int = whole;
            }
            QuantizeMode::MinFirst => {
                let steps = (1i64 << Q::BITS) as f64;
                let scale = (f64::from(max_range - min_range) / (steps - 1.0)) as f32;
                let min_rounded = if max_range == min_range {
                    min_range
                } else {
                    (min_range / scale).round() * scale
                };
                d.scale = scale;
                d.offset = min_rounded - lo * scale;
            }
        }
        d
    }

    #[inline(always)]
    fn apply(&self, q: i64) -> f32 {
        let v = q as f32;
        match self.mode {
            QuantizeMode::MinCombined => ((v + self.offset) * self.scale) + self.min_range,
            QuantizeMode::Scaled if self.through_int => cvtt(v) as f32 * self.scale,
            QuantizeMode::Scaled => v * self.scale,
            QuantizeMode::MinFirst => self.offset + v * self.scale,
        }
    }
}

/// `Dequantize`: `x` of quantized dtype `t` to float32 or bfloat16.
pub fn dequantize(
    x: &Tensor,
    min: &Tensor,
    max: &Tensor,
    t: DType,
    a: &DequantizeAttrs,
) -> Result<Tensor> {
    with_quantized!(
        t,
        Q => dequantize_typed::<Q>(x, min, max, t, a),
        Err(Error::invalid_argument(format!(
            "Dequantize: T must be a quantized type (qint8, quint8, qint16, quint16, qint32), got {t}"
        )))
    )
}

fn dequantize_typed<Q: Quantized>(
    x: &Tensor,
    min: &Tensor,
    max: &Tensor,
    t: DType,
    a: &DequantizeAttrs,
) -> Result<Tensor> {
    const OP: &str = "Dequantize";
    let xs = quantized_values::<Q>(OP, x, t)?;
    let (mins, maxs) = (
        float_values(OP, min, "min_range")?,
        float_values(OP, max, "max_range")?,
    );
    if a.axis >= x.rank() as i64 {
        return Err(Error::invalid_argument(format!(
            "Axis must be less than input dimension({}), got {}",
            x.rank(),
            a.axis
        )));
    }
    let n = slice_count(OP, x.dims(), a.axis)?;
    for (v, what) in [(mins, "input_min_tensor"), (maxs, "input_max_tensor")] {
        if v.len() != n {
            return Err(Error::invalid_argument(format!(
                "{what} must have as many elements as input on the dequantization axis ({}), got {}, expected {n}",
                a.axis,
                v.len()
            )));
        }
    }
    if n > 1 && a.mode == QuantizeMode::MinFirst {
        return Err(Error::unimplemented(
            "MIN_FIRST mode is not implemented for Dequantize with axis != -1.",
        ));
    }
    let ds: Vec<Dequantizer> = (0..n)
        .map(|i| Dequantizer::new::<Q>(mins[i], maxs[i], a, n == 1))
        .collect();
    let mut out = vec![0f32; xs.len()];
    let view = if n == 1 {
        slices(x.dims(), -1)
    } else {
        slices(x.dims(), a.axis)
    };
    for_each_slice(view, |i, s| out[i] = ds[s].apply(xs[i].to_i64()));
    if a.dtype == DType::BFloat16 {
        let b: Vec<bf16> = out.into_iter().map(bf16::from_f32).collect();
        return Tensor::from_vec(x.shape().clone(), b);
    }
    Tensor::from_vec(x.shape().clone(), out)
}

/// The floating types `QuantizeAndDequantize*` runs on (float32, float64).
pub trait QdqFloat: Element + Copy + PartialOrd + std::fmt::Display {
    const MAX: Self;
    const LOWEST: Self;
    const ZERO: Self;
    const ONE: Self;
    const HALF: Self;
    fn from_i64(v: i64) -> Self;
    fn mul(self, o: Self) -> Self;
    fn div(self, o: Self) -> Self;
    fn add(self, o: Self) -> Self;
    fn floor(self) -> Self;
    fn round_even(self) -> Self;
}

macro_rules! qdq_float {
    ($t:ty) => {
        impl QdqFloat for $t {
            const MAX: Self = <$t>::MAX;
            const LOWEST: Self = <$t>::MIN;
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const HALF: Self = 0.5;
            #[inline(always)]
            fn from_i64(v: i64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                self * o
            }
            #[inline(always)]
            fn div(self, o: Self) -> Self {
                self / o
            }
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                self + o
            }
            #[inline(always)]
            fn floor(self) -> Self {
                <$t>::floor(self)
            }
            #[inline(always)]
            fn round_even(self) -> Self {
                <$t>::round_ties_even(self)
            }
        }
    };
}

qdq_float!(f32);
qdq_float!(f64);

/// `QuantizeAndDequantizeV2/V3/V4`'s attrs (`num_bits` is V3's input).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QdqAttrs {
    pub signed_input: bool,
    pub num_bits: i64,
    pub range_given: bool,
    /// `round_mode == "HALF_TO_EVEN"`; else `HALF_UP` (`floor(x + 0.5)`).
    pub half_to_even: bool,
    pub narrow_range: bool,
    pub axis: i64,
}

impl QdqAttrs {
    /// Checks `num_bits` as the kernels do (`1..62` signed, `1..63` unsigned).
    pub fn check_bits(&self, op: &str) -> Result<()> {
        let limit = if self.signed_input { 62 } else { 63 };
        if self.num_bits <= 0 || self.num_bits >= limit {
            let sep = if op == "QuantizeAndDequantizeV3" {
                "`signed_input_`"
            } else {
                "signed_input_"
            };
            return Err(Error::invalid_argument(format!(
                "num_bits is out of range: {} with {sep} {}",
                self.num_bits,
                i32::from(self.signed_input)
            )));
        }
        Ok(())
    }
}

/// TensorFlow's `ComputeQuantizationRange`: the scale that maps
/// `[min, max]` into the integer grid keeping 0 fixed, its inverse, and the
/// range with the side that did not set the scale moved.
fn qdq_range<F: QdqFloat>(a: &QdqAttrs, min: F, max: F) -> (F, F, F, F) {
    let bits = a.num_bits as u32;
    let (min_q, max_q) = if a.signed_input {
        let m = 1i64 << (bits - 1);
        (-m + i64::from(a.narrow_range), m - 1)
    } else {
        (0, (1i64 << bits) - 1)
    };
    let (fmin_q, fmax_q) = (F::from_i64(min_q), F::from_i64(max_q));
    let from_min = if fmin_q.mul(min) > F::ZERO {
        fmin_q.div(min)
    } else {
        F::MAX
    };
    let from_max = if fmax_q.mul(max) > F::ZERO {
        fmax_q.div(max)
    } else {
        F::MAX
    };
    if from_min < from_max {
        let inv = min.div(fmin_q);
        (min, fmax_q.mul(inv), from_min, inv)
    } else {
        let inv = max.div(fmax_q);
        (fmin_q.mul(inv), max, from_max, inv)
    }
}

fn qdq_values<'a, F: QdqFloat>(op: &str, t: &'a Tensor, what: &str) -> Result<&'a [F]> {
    t.as_slice::<F>().map_err(|_| {
        Error::invalid_argument(format!(
            "{op}: {what} must be {}, got {}",
            F::DTYPE,
            t.dtype()
        ))
    })
}

/// `QuantizeAndDequantizeV2/V3/V4` (float32 or float64): `x` rounded onto
/// the `num_bits` grid of its range (given, or `x`'s own per slice) and
/// mapped back.
pub fn quantize_and_dequantize(
    op: &str,
    x: &Tensor,
    min: &Tensor,
    max: &Tensor,
    a: &QdqAttrs,
) -> Result<Tensor> {
    match x.dtype() {
        DType::Float32 => qdq_typed::<f32>(op, x, min, max, a),
        DType::Float64 => qdq_typed::<f64>(op, x, min, max, a),
        d => Err(Error::invalid_argument(format!(
            "{op}: input must be float32 or float64 on the CPU, got {d}"
        ))),
    }
}

fn qdq_typed<F: QdqFloat>(
    op: &str,
    x: &Tensor,
    min: &Tensor,
    max: &Tensor,
    a: &QdqAttrs,
) -> Result<Tensor> {
    a.check_bits(op)?;
    let xs = qdq_values::<F>(op, x, "input")?;
    let depth = slice_count(op, x.dims(), a.axis)?;
    let view = slices(x.dims(), a.axis);
    let (mut lo, mut hi) = (vec![F::MAX; depth], vec![F::MAX; depth]);
    if a.range_given {
        let (mins, maxs) = (
            qdq_values::<F>(op, min, "input_min")?,
            qdq_values::<F>(op, max, "input_max")?,
        );
        // TF 2.21's V2 and V4 kernels require scalar ranges even with an
        // axis (so per-slice given ranges fail there, as here); V3's do not.
        if op != "QuantizeAndDequantizeV3" {
            for (t, what) in [(min, "input_min"), (max, "input_max")] {
                if t.rank() != 0 {
                    return Err(Error::invalid_argument(format!("{what} must be a scalar.")));
                }
            }
        }
        if a.axis < 0 {
            if mins.len() != 1 || maxs.len() != 1 {
                return Err(Error::invalid_argument(format!(
                    "{op}: input_min and input_max must be scalars without an axis, have {} and {} elements",
                    mins.len(),
                    maxs.len()
                )));
            }
            if mins[0] > maxs[0] {
                return Err(Error::invalid_argument(format!(
                    "Invalid range: input_min {} > input_max {}",
                    mins[0], maxs[0]
                )));
            }
        } else {
            for (v, what) in [(mins, "input_min_tensor"), (maxs, "input_max_tensor")] {
                if v.len() != depth {
                    return Err(Error::invalid_argument(format!(
                        "{what} has incorrect size, was {} expected {depth} to match dim {} of the input {}",
                        v.len(),
                        a.axis,
                        x.shape()
                    )));
                }
            }
        }
        lo.copy_from_slice(mins);
        hi.copy_from_slice(maxs);
    } else {
        // Eigen's minimum/maximum reductions (initial values: the largest and
        // lowest finite numbers).
        hi.fill(F::LOWEST);
        for_each_slice(view, |i, s| {
            lo[s] = std_min(lo[s], xs[i]);
            hi[s] = std_max(hi[s], xs[i]);
        });
    }
    let ranges: Vec<(F, F, F, F)> = (0..depth).map(|s| qdq_range(a, lo[s], hi[s])).collect();
    let round = |v: F| {
        if a.half_to_even {
            v.round_even()
        } else {
            v.add(F::HALF).floor()
        }
    };
    let mut out = vec![F::ZERO; xs.len()];
    for_each_slice(view, |i, s| {
        let (rmin, rmax, scale, inv) = ranges[s];
        let v = if a.range_given {
            clamp(xs[i], rmin, rmax)
        } else {
            xs[i]
        };
        out[i] = round(v.mul(scale)).mul(inv);
    });
    Tensor::from_vec(x.shape().clone(), out)
}

/// `QuantizeAndDequantizeV4Grad`: `gradients` where `input` lies in
/// `[input_min, input_max]` (per slice of `axis`), else zero; zero
/// gradients for the range.
pub fn quantize_and_dequantize_v4_grad(
    g: &Tensor,
    x: &Tensor,
    min: &Tensor,
    max: &Tensor,
    axis: i64,
) -> Result<(Tensor, Tensor, Tensor)> {
    match x.dtype() {
        DType::Float32 => v4_grad_typed::<f32>(g, x, min, max, axis),
        DType::Float64 => v4_grad_typed::<f64>(g, x, min, max, axis),
        d => Err(Error::invalid_argument(format!(
            "QuantizeAndDequantizeV4Grad: input must be float32 or float64 on the CPU, got {d}"
        ))),
    }
}

fn v4_grad_typed<F: QdqFloat>(
    g: &Tensor,
    x: &Tensor,
    min: &Tensor,
    max: &Tensor,
    axis: i64,
) -> Result<(Tensor, Tensor, Tensor)> {
    const OP: &str = "QuantizeAndDequantizeV4Grad";
    let gs = qdq_values::<F>(OP, g, "gradients")?;
    let xs = qdq_values::<F>(OP, x, "input")?;
    if g.dims() != x.dims() {
        return Err(Error::invalid_argument(
            "gradient and input must be the same size",
        ));
    }
    let depth = slice_count(OP, x.dims(), axis)?;
    let (mins, maxs) = (
        qdq_values::<F>(OP, min, "input_min")?,
        qdq_values::<F>(OP, max, "input_max")?,
    );
    for (v, what) in [(mins, "min"), (maxs, "max")] {
        if v.len() != depth {
            return Err(Error::invalid_argument(format!(
                "{what} has incorrect size, expected {depth} was {}",
                v.len()
            )));
        }
    }
    let mut out = vec![F::ZERO; xs.len()];
    for_each_slice(slices(x.dims(), axis), |i, s| {
        let inside = xs[i] >= mins[s] && xs[i] <= maxs[s];
        out[i] = gs[i].mul(if inside { F::ONE } else { F::ZERO });
    });
    Ok((
        Tensor::from_vec(x.shape().clone(), out)?,
        Tensor::from_vec(min.shape().clone(), vec![F::ZERO; mins.len()])?,
        Tensor::from_vec(max.shape().clone(), vec![F::ZERO; maxs.len()])?,
    ))
}

/// `QuantizedConcat` (quint8 or qint32): `values` joined along `axis`, each
/// requantized from its range into one range that covers them all (and 0;
/// symmetric for the signed type). Returns the output and its range.
pub fn quantized_concat(
    axis: i64,
    values: &[&Tensor],
    mins: &[&Tensor],
    maxes: &[&Tensor],
    t: DType,
) -> Result<(Tensor, f32, f32)> {
    match t {
        DType::QUInt8 => concat_typed::<u8>(axis, values, mins, maxes, t),
        DType::QInt32 => concat_typed::<i32>(axis, values, mins, maxes, t),
        _ => Err(Error::invalid_argument(format!(
            "QuantizedConcat: T must be quint8 or qint32 on the CPU, got {t}"
        ))),
    }
}

/// TensorFlow's `DEQUANTIZE_WITH_EIGEN` then `QUANTIZE_WITH_EIGEN`: one
/// level of `[in_min, in_max]` moved into `[out_min, out_max]`.
struct Requantizer {
    in_scale: f32,
    in_offset: f32,
    out_scale: f32,
    out_offset: f32,
    lower: f32,
    upper: f32,
}

impl Requantizer {
    fn new<Q: Quantized>(in_min: f32, in_max: f32, out_min: f32, out_max: f32) -> Requantizer {
        let steps = (1i64 << Q::BITS) as f64;
        let lowest = Q::LOWEST as f32;
        let in_scale = (f64::from(in_max - in_min) / (steps - 1.0)) as f32;
        let in_min_rounded = if in_max == in_min {
            in_min
        } else {
            (in_min / in_scale).round() * in_scale
        };
        let out_scale = if out_max == out_min {
            0.0
        } else {
            ((steps - 1.0) / f64::from(out_max - out_min)) as f32
        };
        let out_min_scaled = (out_min * out_scale).round();
        Requantizer {
            in_scale,
            in_offset: in_min_rounded - lowest * in_scale,
            out_scale,
            out_offset: out_min_scaled - lowest,
            lower: std_max(lowest, I32_LOWEST_F32),
            upper: std_min(Q::HIGHEST as f32, I32_HIGHEST_F32),
        }
    }

    #[inline(always)]
    fn apply(&self, q: i64) -> i32 {
        let f = self.in_offset + q as f32 * self.in_scale;
        let v = (f * self.out_scale).round() - self.out_offset;
        cvtt(std_min(std_max(v, self.lower), self.upper))
    }
}

fn concat_typed<Q: Quantized>(
    axis: i64,
    values: &[&Tensor],
    mins: &[&Tensor],
    maxes: &[&Tensor],
    t: DType,
) -> Result<(Tensor, f32, f32)> {
    const OP: &str = "QuantizedConcat";
    let n = values.len();
    if n == 0 {
        return Err(Error::invalid_argument(format!(
            "{OP}: needs at least one value"
        )));
    }
    for (list, what) in [(mins, "mins"), (maxes, "maxes")] {
        if list.len() != n {
            return Err(Error::invalid_argument(format!(
                "QuantizedConcatOp : Expected {what} input list length {} to equal values length {n}",
                list.len()
            )));
        }
    }
    let first = values[0].dims();
    let rank = first.len();
    if axis < 0 || axis >= rank as i64 {
        return Err(Error::invalid_argument(format!(
            "ConcatOp : Expected concatenating dimensions in the range [0, {rank}), but got {axis}"
        )));
    }
    let axis = axis as usize;
    let mut ranges = Vec::with_capacity(n);
    let (mut overall_min, mut overall_max) = (f32::MAX, f32::MIN);
    for i in 0..n {
        let lo = scalar_range(OP, mins[i], "input_mins")?;
        let hi = scalar_range(OP, maxes[i], "input_maxes")?;
        ranges.push((lo, hi));
        overall_min = std_min(overall_min, lo);
        overall_max = std_max(overall_max, hi);
    }
    overall_min = std_min(0.0, overall_min);
    let (out_min, out_max) = if Q::LOWEST < 0 {
        let largest = std_max(overall_min.abs(), overall_max.abs());
        (-largest, largest)
    } else {
        (overall_min, overall_max)
    };
    let mut concat_len = 0;
    let mut parts = Vec::with_capacity(n);
    for (i, v) in values.iter().enumerate() {
        if v.rank() != rank {
            return Err(Error::invalid_argument(format!(
                "ConcatOp : Ranks of all input tensors should match: shape[0] = {} vs. shape[{i}] = {}",
                values[0].shape(),
                v.shape()
            )));
        }
        for (j, (&a, &b)) in first.iter().zip(v.dims()).enumerate() {
            if j != axis && a != b {
                return Err(Error::invalid_argument(format!(
                    "ConcatOp : Dimensions of inputs should match: shape[0] = {} vs. shape[{i}] = {}",
                    values[0].shape(),
                    v.shape()
                )));
            }
        }
        concat_len += v.dims()[axis];
        let xs = quantized_values::<Q>(OP, v, t)?;
        let (lo, hi) = ranges[i];
        let part: Vec<Q> = if lo == out_min && hi == out_max {
            xs.to_vec()
        } else {
            let r = Requantizer::new::<Q>(lo, hi, out_min, out_max);
            xs.iter()
                .map(|&q| Q::from_i32(r.apply(q.to_i64())))
                .collect()
        };
        parts.push((part, v.dims()[axis..].iter().product::<usize>()));
    }
    let outer: usize = first[..axis].iter().product();
    let mut dims = first.to_vec();
    dims[axis] = concat_len;
    Tensor::check_allocation(OP, Q::DTYPE, &dims)?;
    let mut out = Vec::with_capacity(dims.iter().product());
    for o in 0..outer {
        for (part, row) in &parts {
            out.extend_from_slice(&part[o * row..(o + 1) * row]);
        }
    }
    Ok((Tensor::from_vec(dims, out)?, out_min, out_max))
}

fn scalar_range(op: &str, t: &Tensor, what: &str) -> Result<f32> {
    let v = float_values(op, t, what)?;
    if t.rank() != 0 || v.len() != 1 {
        return Err(Error::invalid_argument(format!(
            "{op}: every element of {what} must be a scalar, got shape {}",
            t.shape()
        )));
    }
    Ok(v[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_to_int_conversion_is_x86s() {
        assert_eq!(cvtt(2.9), 2);
        assert_eq!(cvtt(-2.9), -2);
        assert_eq!(cvtt(2147483648.0), i32::MIN);
        assert_eq!(cvtt(f32::NAN), i32::MIN);
        assert_eq!(cvtt(-2147483648.0), i32::MIN);
        assert_eq!(u8::from_i32(cvtt(255.7)), 255);
    }

    #[test]
    fn min_combined_quint8_truncates_after_adding_a_half() {
        let a = QuantizeV2Attrs::new(
            QuantizeMode::MinCombined,
            "HALF_AWAY_FROM_ZERO",
            false,
            -1,
            0.01,
        )
        .unwrap();
        let x = Tensor::from_vec(vec![5], vec![0.0f32, 0.5, 3.0, 254.5, 300.0]).unwrap();
        let (y, lo, hi) = quantize_v2(
            &x,
            &Tensor::scalar(0.0f32),
            &Tensor::scalar(255.0f32),
            DType::QUInt8,
            &a,
        )
        .unwrap();
        assert_eq!(y.as_slice::<u8>().unwrap(), &[0, 1, 3, 255, 255]);
        assert_eq!(
            (lo.scalar_f64().unwrap(), hi.scalar_f64().unwrap()),
            (0.0, 255.0)
        );
    }

    #[test]
    fn dequantize_min_combined_qint8() {
        let a = DequantizeAttrs::new(QuantizeMode::MinCombined, false, -1, DType::Float32).unwrap();
        let q = Tensor::from_vec(vec![3], vec![-128i8, 0, 127]).unwrap();
        let y = dequantize(
            &q,
            &Tensor::scalar(-1.0f32),
            &Tensor::scalar(1.0f32),
            DType::QInt8,
            &a,
        )
        .unwrap();
        let v = y.as_slice::<f32>().unwrap();
        assert_eq!(v[0], -1.0);
        assert_eq!(v[2], 1.0);
    }

    #[test]
    fn round_modes_of_quantize_and_dequantize() {
        let x = Tensor::from_vec(vec![4], vec![0.5f32, 1.5, -0.5, 2.5]).unwrap();
        let mut a = QdqAttrs {
            signed_input: true,
            num_bits: 8,
            range_given: true,
            half_to_even: true,
            narrow_range: false,
            axis: -1,
        };
        let (lo, hi) = (Tensor::scalar(-128.0f32), Tensor::scalar(127.0f32));
        let y = quantize_and_dequantize("QuantizeAndDequantizeV2", &x, &lo, &hi, &a).unwrap();
        assert_eq!(y.as_slice::<f32>().unwrap(), &[0.0, 2.0, -0.0, 2.0]);
        a.half_to_even = false;
        let y = quantize_and_dequantize("QuantizeAndDequantizeV2", &x, &lo, &hi, &a).unwrap();
        assert_eq!(y.as_slice::<f32>().unwrap(), &[1.0, 2.0, 0.0, 3.0]);
    }
}
