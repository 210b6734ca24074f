//! Gradients of the FFT ops, as TensorFlow's `signal/fft_ops.py` defines
//! them: a complex transform's gradient is the opposite transform scaled by
//! the transform size; `RFFT`'s is `IRFFT` scaled, plus the terms that the
//! half spectrum's Hermitian symmetry drops; `IRFFT`'s is `RFFT` with the
//! duplicated frequencies weighted twice. TensorFlow defines none for
//! `RFFT3D`, `IRFFT3D` and the N-D ops, and neither does ferroflow
//! (`tf.gradients` through them raises `LookupError`, as there).
//!
//! TensorFlow builds the 2-D `RFFT` correction terms as products with a
//! matrix of twiddle factors `exp(-2 pi i a b / H)`; the same products are
//! computed here as 1-D FFTs of the columns, which is the same sum.

use super::d;
use crate::registry::GradEntry;
use crate::Builder;
use crate::Grad;
use ferroflow_graph::{AttrValue, Node, Output};
use ferroflow_tensor::{DType, Result, Tensor};

type R = Result<Vec<Option<Grad>>>;

fn g0(grads: &[Option<Output>]) -> Output {
    grads[0].expect("the algorithm only calls gradient functions with some output gradient")
}

fn complex_of(real: DType) -> DType {
    if real == DType::Float64 {
        DType::Complex128
    } else {
        DType::Complex64
    }
}

/// The number of elements in the innermost `rank` dimensions of `x`, an
/// int32 scalar (a constant when those dimensions are known).
fn inner_size(b: &mut Builder<'_>, x: Output, rank: usize) -> Result<Output> {
    let known = b.graph.output(x).shape.dims().and_then(|d| {
        (d.len() >= rank)
            .then(|| {
                d[d.len() - rank..]
                    .iter()
                    .copied()
                    .product::<Option<usize>>()
            })
            .flatten()
    });
    if let Some(n) = known {
        return b.scalar_i32(n as i32);
    }
    let shape = b.shape(x)?;
    let begin = b.const_i32(vec![-(rank as i32)])?;
    let end = b.const_i32(vec![0])?;
    let stride = b.const_i32(vec![1])?;
    let dims = b.op(
        "StridedSlice",
        &[shape, begin, end, stride],
        vec![("end_mask", AttrValue::Int(1))],
    )?;
    let axis = b.scalar_i32(0)?;
    b.op("Prod", &[dims, axis], vec![])
}

/// A complex transform of `x` (`Tcomplex` its dtype).
fn transform(b: &mut Builder<'_>, op: &str, x: Output) -> Result<Output> {
    let t = b.dtype(x);
    b.op(op, &[x], vec![("Tcomplex", AttrValue::Type(t))])
}

/// `FFT*`: `inverse(grad) * size`.
fn fft_grad(b: &mut Builder<'_>, g: &[Option<Output>], inverse: &str, rank: usize) -> R {
    let g = g0(g);
    let size = inner_size(b, g, rank)?;
    let size = b.cast(size, b.dtype(g))?;
    let y = transform(b, inverse, g)?;
    Ok(vec![d(b.mul(y, size)?)])
}

/// `IFFT*`: `forward(grad) / size`.
fn ifft_grad(b: &mut Builder<'_>, g: &[Option<Output>], forward: &str, rank: usize) -> R {
    let g = g0(g);
    let t = b.dtype(g);
    let size = inner_size(b, g, rank)?;
    let size = b.cast(size, t.real_dtype())?;
    let rsize = b.unary("Reciprocal", size)?;
    let rsize = b.cast(rsize, t)?;
    let y = transform(b, forward, g)?;
    Ok(vec![d(b.mul(y, rsize)?)])
}

fn fft(b: &mut Builder<'_>, _n: &Node, g: &[Option<Output>]) -> R {
    fft_grad(b, g, "IFFT", 1)
}

fn ifft(b: &mut Builder<'_>, _n: &Node, g: &[Option<Output>]) -> R {
    ifft_grad(b, g, "FFT", 1)
}

fn fft2d(b: &mut Builder<'_>, _n: &Node, g: &[Option<Output>]) -> R {
    fft_grad(b, g, "IFFT2D", 2)
}

fn ifft2d(b: &mut Builder<'_>, _n: &Node, g: &[Option<Output>]) -> R {
    ifft_grad(b, g, "FFT2D", 2)
}

fn fft3d(b: &mut Builder<'_>, _n: &Node, g: &[Option<Output>]) -> R {
    fft_grad(b, g, "IFFT3D", 3)
}

fn ifft3d(b: &mut Builder<'_>, _n: &Node, g: &[Option<Output>]) -> R {
    ifft_grad(b, g, "FFT3D", 3)
}

/// `x[..., begin:end]` (`end` None: to the end).
fn last_axis_slice(b: &mut Builder<'_>, x: Output, begin: i32, end: Option<i32>) -> Result<Output> {
    let bg = b.const_i32(vec![0, begin])?;
    let en = b.const_i32(vec![0, end.unwrap_or(0)])?;
    let st = b.const_i32(vec![1, 1])?;
    let end_mask = if end.is_none() { 2 } else { 0 };
    b.op(
        "StridedSlice",
        &[x, bg, en, st],
        vec![
            ("ellipsis_mask", AttrValue::Int(1)),
            ("end_mask", AttrValue::Int(end_mask)),
        ],
    )
}

/// The element `v[-1]` of an int32 vector, and `v[-1] % 2`.
fn last_parity(b: &mut Builder<'_>, v: Output) -> Result<Output> {
    let last = b.element(v, -1)?;
    let two = b.scalar_i32(2)?;
    b.binary("FloorMod", last, two)
}

/// `[1, -1, 1, -1, ...]` of length `len` (an int32 scalar), as `dtype`.
fn alternating(b: &mut Builder<'_>, len: Output, dtype: DType) -> Result<Output> {
    let zero = b.scalar_i32(0)?;
    let one = b.scalar_i32(1)?;
    let two = b.scalar_i32(2)?;
    let n = b.op("Range", &[zero, len, one], vec![])?;
    let parity = b.binary("FloorMod", n, two)?;
    let twice = b.mul(parity, two)?;
    let signs = b.sub(one, twice)?;
    b.cast(signs, dtype)
}

/// The DFT along the second-to-last axis of `conj(y)`, whose last
/// dimension is 1 (TensorFlow's `matmul(mask_matrix, conj(y))`).
fn column_dft(b: &mut Builder<'_>, y: Output) -> Result<Output> {
    let c = b.unary("Conj", y)?;
    let col = b.op(
        "Squeeze",
        &[c],
        vec![("squeeze_dims", AttrValue::IntList(vec![-1]))],
    )?;
    let f = transform(b, "FFT", col)?;
    let axis = b.scalar_i32(-1)?;
    b.op("ExpandDims", &[f, axis], vec![])
}

/// `RFFT` / `RFFT2D`: `0.5 * (irfft(grad) * size + real(extra))`, where
/// `extra` restores the DC and (even lengths) Nyquist columns that the
/// doubling in the inverse transform counts once too few.
fn rfft_grad(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>], rank: usize) -> R {
    let g = g0(g);
    let (x, fft_length) = (n.inputs[0], n.inputs[1]);
    let cdt = b.dtype(g);
    let rdt = cdt.real_dtype();
    let odd = last_parity(b, fft_length)?;
    let one = b.scalar_i32(1)?;
    let even = b.sub(one, odd)?;
    let is_even = b.cast(even, cdt)?;
    let input_shape = b.shape(x)?;
    let width = b.element(input_shape, -1)?;
    let signs = alternating(b, width, cdt)?;
    let y0 = last_axis_slice(b, g, 0, Some(1))?;
    let ym = last_axis_slice(b, g, -1, None)?;
    let extra = if rank == 1 {
        let t = b.mul(ym, signs)?;
        let t = b.mul(is_even, t)?;
        b.add(y0, t)?
    } else {
        let y0_term = column_dft(b, y0)?;
        let ym_term = column_dft(b, ym)?;
        let ym_term = b.mul(ym_term, signs)?;
        let t = b.mul(is_even, ym_term)?;
        b.add(y0_term, t)?
    };
    let size = inner_size(b, x, rank)?;
    let size = b.cast(size, rdt)?;
    let irfft = if rank == 1 { "IRFFT" } else { "IRFFT2D" };
    let inv = b.op(
        irfft,
        &[g, fft_length],
        vec![
            ("Treal", AttrValue::Type(rdt)),
            ("Tcomplex", AttrValue::Type(cdt)),
        ],
    )?;
    let scaled = b.mul(inv, size)?;
    let re = b.op("Real", &[extra], vec![("Tout", AttrValue::Type(rdt))])?;
    let sum = b.add(scaled, re)?;
    let half = b.scalar(rdt, 0.5)?;
    Ok(vec![d(b.mul(half, sum)?), None])
}

/// `IRFFT` / `IRFFT2D`: `rfft(grad) * (mask / size)`, with `mask`
/// `[1, 2, ..., 2, 1]` (even lengths) or `[1, 2, ..., 2]` (odd) over the
/// input's innermost dimension.
fn irfft_grad(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>], rank: usize) -> R {
    let g = g0(g);
    let (x, fft_length) = (n.inputs[0], n.inputs[1]);
    let rdt = b.dtype(g);
    let cdt = complex_of(rdt);
    let odd = last_parity(b, fft_length)?;
    let input_shape = b.shape(x)?;
    let width = b.element(input_shape, -1)?;
    let two = b.scalar_i32(2)?;
    let one = b.scalar_i32(1)?;
    let twos_len = b.sub(width, two)?;
    let twos_len = b.add(twos_len, odd)?;
    let twos_len = b.pack(&[twos_len], 0)?;
    let ones_len = b.sub(one, odd)?;
    let ones_len = b.pack(&[ones_len], 0)?;
    let two_r = b.scalar(rdt, 2.0)?;
    let one_r = b.scalar(rdt, 1.0)?;
    let twos = b.fill(twos_len, two_r)?;
    let ones = b.fill(ones_len, one_r)?;
    let first = b.constant(if rdt == DType::Float64 {
        Tensor::vector(vec![1.0f64])
    } else {
        Tensor::vector(vec![1.0f32])
    })?;
    let axis = b.scalar_i32(0)?;
    let mask = b.concat(&[first, twos, ones], axis)?;
    let size = inner_size(b, g, rank)?;
    let size = b.cast(size, rdt)?;
    let rsize = b.unary("Reciprocal", size)?;
    let rfft = if rank == 1 { "RFFT" } else { "RFFT2D" };
    let spectrum = b.op(
        rfft,
        &[g, fft_length],
        vec![
            ("Treal", AttrValue::Type(rdt)),
            ("Tcomplex", AttrValue::Type(cdt)),
        ],
    )?;
    let weights = b.mul(rsize, mask)?;
    let weights = b.cast(weights, cdt)?;
    Ok(vec![d(b.mul(spectrum, weights)?), None])
}

fn rfft(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    rfft_grad(b, n, g, 1)
}

fn rfft2d(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    rfft_grad(b, n, g, 2)
}

fn irfft(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    irfft_grad(b, n, g, 1)
}

fn irfft2d(b: &mut Builder<'_>, n: &Node, g: &[Option<Output>]) -> R {
    irfft_grad(b, n, g, 2)
}

pub(super) fn register(reg: &mut dyn FnMut(&'static str, GradEntry)) {
    use GradEntry::Func;
    reg("FFT", Func(fft));
    reg("IFFT", Func(ifft));
    reg("FFT2D", Func(fft2d));
    reg("IFFT2D", Func(ifft2d));
    reg("FFT3D", Func(fft3d));
    reg("IFFT3D", Func(ifft3d));
    reg("RFFT", Func(rfft));
    reg("IRFFT", Func(irfft));
    reg("RFFT2D", Func(rfft2d));
    reg("IRFFT2D", Func(irfft2d));
}
